# dpusim plan (issue 15 item 4) on a layout space small enough to check by
# hand (tests/data/plan-small.yaml: Llama-2 7B on 2 GPUs): which layouts fit
# (the loader's own memory check agrees on every one), the best simulated
# layout is the fastest of all that fit and a scenario written with it runs
# to the same iteration time, cost per token is the GPU price over the
# throughput, --db stores the finalists, and bad input is exit 2 with
# nothing written. Then the workload shapes plan varies (issue 16 item 6):
# interleaving wins a short pipeline, context parallelism is what fits a
# long sequence, and --keep holds them at the scenario's.
. tests/e2e/lib.sh
F=tests/data/plan-small.yaml

run_cmd "$DPUSIM" plan "$F" --finalists 1000 --top 1000
expect_rc 0 "plan over every layout that fits"
# tp 2 (x sequence parallelism off/on) x micro 1-8, pp 2 x micro 1-4 x
# virtual stages 1-16 (32 layers: 16 a stage; microbatches a multiple of
# 2) and micro 8 at v 1, dp 2 x micro 1-4 x ZeRO 0-3: 16 + 16 + 12, each
# with recomputation off and on; no cp (unfused attention: only where
# nothing fits without it). bf16 keeps its gradients in fp32 (Megatron-LM's
# 18 bytes a parameter: 2 + 4 + 12), so ZeRO 1 at dp 2 does not fit: 2 + 4
# + 6 = 12 B x 6.74e9 = 81 GB before activations.
expect_out "72 layouts, 30 fit, 30 simulated" "2 GPUs: 72 layouts, 30 fit"
# Off a terminal each finalist simulated says its own wall time, the time
# elapsed and, until the last, about how long the rest take (sized by each
# finalist's work, tools/sweep_eta.h); the last says nothing is left.
D='[0-9.]+ (us|ms|s|min|h)'
expect_err "^dpusim: plan: finalist 1/30 simulated in $D; $D elapsed, about [0-9.e+-]+ (s|min|h) left\$" "a finalist's line: its time, the elapsed and left"
expect_err "^dpusim: plan: finalist 30/30 simulated in $D; $D elapsed\$" "the last finalist's says nothing is left"
echo "$OUT" > "$E2E_TMP/all.txt"
# --jobs: the finalists simulated in forked workers, read back in order:
# the same answer, to the byte.
run_cmd "$DPUSIM" plan "$F" --finalists 1000 --top 1000 --jobs 2
expect_rc 0 "plan --jobs 2"
if [ "$OUT" = "$(cat "$E2E_TMP/all.txt")" ]; then ok "--jobs 2 prints what one process prints"
else not_ok "--jobs 2 answers differently"; diff <(echo "$OUT") "$E2E_TMP/all.txt" | head -5; fi
expect_err "^dpusim: plan: finalist 30/30 simulated in $D; $D elapsed" "--jobs 2: each finalist's line, as without"
# Rows: rank nodes tp pp dp micro zero recompute v sp cp estimate est.rank iteration tokens/s MFU GiB USD/Mtoken
ROWS=$(awk '$1 ~ /^[0-9]+$/ && NF == 18' "$E2E_TMP/all.txt")
if ! awk '$3 == 1 && $4 == 1 && $7 == 0' <<<"$ROWS" | grep -q .; then
	ok "no dp-2 layout without ZeRO fits (18 B x 6.74e9 parameters = 121 GB > 80 GB)"
else not_ok "a dp-2 layout without ZeRO was kept"; fi
if awk 'NR == 1 { best = $14 + 0 } $14 + 0 < best { bad = 1 } END { exit bad }' <<<"$ROWS"; then
	ok "rank 1 is the fastest simulated layout"
else not_ok "rank 1 is not the fastest"; fi
read -r _ NODES TP PP DP MB Z REC V SP CP _ _ ITER TOKS _ _ USD <<<"$(head -1 <<<"$ROWS")"
if python3 -c "import sys; t=float(sys.argv[1]); u=float(sys.argv[2]); e=2*2.5/3600/t*1e6; sys.exit(abs(u-e) > 1e-4*e + 5e-5)" "$TOKS" "$USD"; then
	ok "USD per million tokens is 2 GPUs x 2.5 USD/h over the throughput ($USD)"
else not_ok "USD per million tokens $USD does not follow from $TOKS tokens/s"; fi

# Both orders, plainly: each row's place in the estimate's order (all 30
# simulated: a permutation of 1..30), and under the table Spearman's rank
# correlation of the estimates against the simulated iterations, which a
# recomputation from the rows (mean ranks for ties) gives to its 2 digits.
# The estimate's order agrees (0.94 here, 1.00 on the 14 layouts of
# --keep vp,sp,cp; -0.18 before it charged data parallelism inside a node
# at NVLink's rate, the gradients' overlap with the last backward and
# recomputation's tensor-parallel all-reduces): at least 0.5, a bound with
# margin. Its first is the simulated first: it times compute as the
# simulation does (with GEMM FLOPs at eff_max alone it tied microbatches
# 1, 2 and 4, and its first was simulated 6th).
if awk '{ print $13 }' <<<"$ROWS" | sort -n | tr '\n' ' ' | grep -qx "$(seq -s ' ' 1 30) "; then
	ok "est.rank gives each simulated layout's place in the estimate's order"
else not_ok "est.rank is not a permutation of 1..30: $(awk '{ printf "%s ", $13 }' <<<"$ROWS")"; fi
RHO=$(sed -n "s/.*Spearman's rank correlation \(-\{0,1\}[0-9.]*\) against the simulation.*/\1/p" "$E2E_TMP/all.txt")
echo "$ROWS" > "$E2E_TMP/rows.txt"
if python3 - "$RHO" "$E2E_TMP/rows.txt" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[2]) if l.strip()]
est = [float(r[11].rstrip("s")) for r in rows]
sim = [float(r[13].rstrip("s")) for r in rows]
def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    out, i = [0.0] * len(v), 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out
a, b = ranks(est), ranks(sim)
m = (len(a) + 1) / 2
rho = sum((x - m) * (y - m) for x, y in zip(a, b)) / (
    sum((x - m) ** 2 for x in a) * sum((y - m) ** 2 for y in b)) ** 0.5
print("   recomputed %.4f, printed %s" % (rho, sys.argv[1]))
sys.exit(not (sys.argv[1] and abs(rho - float(sys.argv[1])) <= 0.005 and rho >= 0.5))
PY
then ok "the plan prints the estimate's rank correlation with the simulation ($RHO), and it agrees"
else not_ok "rank correlation line missing, wrong or below 0.5 ('$RHO')"; fi
if [ "$(awk '$13 == 1 { print $1 }' <<<"$ROWS")" = 1 ]; then
	ok "the estimate's first is the simulated first"
else not_ok "the estimate's first is simulated $(awk '$13 == 1 { print $1 }' <<<"$ROWS")"; fi
grep -q "the simulated iteration decides the order above" "$E2E_TMP/all.txt" &&
	ok "the plan says the simulated order decides" || not_ok "the plan does not say which order decides"
# The estimate charges the tensor-parallel collectives the simulation's
# own times (train_tp_coll_s: each op simulated once on an idle node, with
# NCCL's channels, protocols and latencies), so on the tp 2 layouts
# (sequence parallelism off and on, microbatches 1-8) its ratio to the
# simulation is one figure, whatever the collectives' share: -1.92% to
# -1.98%, the part every layout shares. At NVLink's rate without latency
# they ran -3.13% to -4.90%, sequence parallelism's pairs the furthest off.
SPREAD=$(awk '$3 == 2 { r = $12 / $14; if (!n++ || r < lo) lo = r; if (n == 1 || r > hi) hi = r }
	END { if (n) printf "%.5f %d", hi - lo, n }' "$E2E_TMP/rows.txt")
if [ -n "$SPREAD" ] && awk -v s="${SPREAD% *}" 'BEGIN { exit !(s < 0.002) }'; then
	ok "the tp 2 layouts' estimates run at one ratio to the simulation (spread $SPREAD rows)"
else not_ok "the tp 2 layouts' estimate/simulation ratios spread by '$SPREAD' rows"; fi

# best_yaml IN OUT: scenario IN with the layout of the row read into TP PP
# DP MB Z REC V SP CP.
best_yaml() {
	local recb spb
	recb=$([ "$REC" = on ] && echo true || echo false)
	spb=$([ "$SP" = on ] && echo true || echo false)
	sed -e "s/parallelism: { [a-z]*: [0-9]* }/parallelism: { tp: $TP, pp: $PP, dp: $DP, zero_stage: $Z, virtual_stages: $V, sequence_parallel: $spb, cp: $CP }/" \
	    -e "s/batch: { global: \([0-9]*\), micro: 1 }/batch: { global: \1, micro: $MB }/" \
	    -e "s/recompute: true/recompute: $recb/" "$1" > "$2"
}
# same_iter YAML ITER WHAT: the scenario runs to the plan's iteration time.
same_iter() {
	run_cmd "$DPUSIM" run "$1" --json
	expect_rc 0 "$3 runs as a scenario"
	if python3 -c "import json,sys; r=json.loads(sys.stdin.read()); t=r['variants'][0]['metrics']['iteration_s']['mean']; sys.exit(abs(t-float(sys.argv[1])) > 1e-4*t)" "${2%s}" <<<"$OUT"; then
		ok "the scenario with $3 steps in the plan's $2"
	else not_ok "$3's scenario differs from the plan's $2"; fi
}

# The best layout, written as a scenario by hand, runs to the same time.
best_yaml "$F" "$E2E_TMP/best.yaml"
same_iter "$E2E_TMP/best.yaml" "$ITER" "the best layout"

# Every layout the plan drops for memory, the loader refuses for memory
# too; the virtual stages it tries are those the loader's interleaving
# check accepts (layers of pp x v, microbatches a multiple of pp).
REFUSED=0 AGREE=0
for tp in 1 2; do for pp in 1 2; do
	dp=$((2 / (tp * pp))); [ "$dp" -ge 1 ] || continue; [ $((tp * pp * dp)) -eq 2 ] || continue
	for mb in 1 2 4 8; do [ $((8 % (dp * mb))) -eq 0 ] || continue
	m=$((8 / (dp * mb))) zs=0 vs=1 sps=false
	[ "$dp" -gt 1 ] && zs="0 1 2 3"
	[ "$pp" -gt 1 ] && [ $((m % pp)) -eq 0 ] && vs="1 2 4 8 16"
	[ "$tp" -gt 1 ] && sps="false true"
	for v in $vs; do for spb in $sps; do for z in $zs; do for rec in true false; do
		r=$([ "$rec" = true ] && echo on || echo off)
		s=$([ "$spb" = true ] && echo on || echo off)
		kept=$(awk -v tp=$tp -v pp=$pp -v mb=$mb -v z=$z -v r=$r -v v=$v -v s=$s '$3 == tp && $4 == pp && $6 == mb && $7 == z && $8 == r && $9 == v && $10 == s' <<<"$ROWS")
		sed -e "s/parallelism: { tp: 2 }/parallelism: { tp: $tp, pp: $pp, dp: $dp, zero_stage: $z, virtual_stages: $v, sequence_parallel: $spb }/" \
		    -e "s/batch: { global: 8, micro: 1 }/batch: { global: 8, micro: $mb }/" \
		    -e "s/recompute: true/recompute: $rec/" "$F" > "$E2E_TMP/l.yaml"
		"$DPUSIM" check "$E2E_TMP/l.yaml" >/dev/null 2>"$E2E_TMP/l.err"; rc=$?
		if [ -n "$kept" ] && [ $rc -eq 0 ]; then AGREE=$((AGREE + 1))
		elif [ -z "$kept" ] && [ $rc -eq 2 ] && grep -q "per GPU" "$E2E_TMP/l.err"; then
			AGREE=$((AGREE + 1)); REFUSED=$((REFUSED + 1))
		else echo "   tp $tp pp $pp mb $mb v $v sp $spb zero $z recompute $rec: plan kept '${kept:0:20}', check exit $rc"; fi
	done; done; done; done
done; done; done
if [ "$AGREE" -eq 72 ] && [ "$REFUSED" -eq 42 ]; then
	ok "dpusim check agrees on all 72 layouts (42 refused for memory)"
else not_ok "dpusim check agrees on $AGREE of 72 layouts ($REFUSED refused)"; fi
# pp 2 at micro 8 is one microbatch: the interleaved schedule's check refuses v 2.
sed -e "s/parallelism: { tp: 2 }/parallelism: { pp: 2, virtual_stages: 2 }/" \
    -e "s/micro: 1 }/micro: 8 }/" "$F" > "$E2E_TMP/l.yaml"
run_cmd "$DPUSIM" check "$E2E_TMP/l.yaml"
expect_rc 2 "v 2 on pp 2 with 1 microbatch is refused (plan does not try it)"
expect_err "l.yaml:[0-9]+:[0-9]+: virtual_stages 2: 1 microbatches per pipeline" "by the interleaving check"

# --keep vp,sp,cp: the scenario's (v 1, no sequence parallelism, cp 1), the
# 40 layouts of the search before it varied them.
run_cmd "$DPUSIM" plan "$F" --finalists 1000 --top 1000 --keep vp,sp,cp
expect_rc 0 "plan --keep vp,sp,cp"
expect_out "40 layouts, 14 fit, 14 simulated" "--keep vp,sp,cp: 40 layouts, 14 fit"
if awk '$1 ~ /^[0-9]+$/ && NF == 18 && ($9 != 1 || $10 != "off" || $11 != 1) { bad = 1 } END { exit bad }' <<<"$OUT"; then
	ok "every row keeps v 1, sp off, cp 1"
else not_ok "a row varies what --keep kept"; fi

# --db stores each finalist.
run_cmd "$DPUSIM" plan "$F" --finalists 3 --db "$E2E_TMP/plan.db"
expect_rc 0 "plan --db"
N=$(sqlite3 "$E2E_TMP/plan.db" "select count(*) from runs" 2>&1)
if [ "$N" = 3 ]; then ok "--db stored the 3 finalists"; else not_ok "--db stored '$N' runs, not 3"; fi
N=$(sqlite3 "$E2E_TMP/plan.db" "select report from runs" | grep -Ec '"plan.layout": *"nodes 1, tp [12], pp [12], dp [12], micro [0-9]+, zero [0-3], recompute o[nf]+, virtual_stages [0-9]+, sequence_parallel o[nf]+, cp 1"')
if [ "$N" = 3 ]; then ok "each stored run's plan.layout names v, sp and cp"; else not_ok "plan.layout of $N of 3 runs names v, sp and cp"; fi
run_cmd "$DPUSIM" plan "$F" --finalists 3 --jobs 3 --db "$E2E_TMP/plan-jobs.db"
expect_rc 0 "plan --jobs 3 --db"
Q="select scenario_text, report, seed, point from runs order by id"
if [ "$(sqlite3 "$E2E_TMP/plan.db" "$Q")" = "$(sqlite3 "$E2E_TMP/plan-jobs.db" "$Q")" ]; then
	ok "--jobs 3 stores the same runs, reports and scenario texts, in the same order"
else not_ok "--jobs 3 stored other runs than one process"; fi

# Layouts that differ only in ZeRO 1 and 2 run one simulation
# (train_zero_alike: the run reads the stage as >= 1 and >= 3): the first
# 20 finalists of scenarios/nic-vs-dpu.yaml on 2 nodes hold such twins.
# The table is what simulating each gives (--db simulates every finalist,
# for its own report), and stderr and the header say which were shared.
run_cmd "$DPUSIM" plan scenarios/nic-vs-dpu.yaml --nodes 2 --finalists 20 --top 20
expect_rc 0 "plan with twins"
expect_out "20 simulated \([1-9][0-9]* of them on a twin's run: ZeRO 1 and 2 run alike\)" "the header counts the shared runs"
expect_err "^dpusim: plan: finalist [0-9]+/20 takes the simulation of finalist [0-9]+: ZeRO 1 and 2 run alike" \
	"stderr names each finalist that took its twin's run"
SHARED=$(tail -n +2 <<<"$OUT")
run_cmd "$DPUSIM" plan scenarios/nic-vs-dpu.yaml --nodes 2 --finalists 20 --top 20 --db "$E2E_TMP/each.db"
expect_rc 0 "the same plan with --db, every finalist simulated"
if [ "$SHARED" = "$(tail -n +2 <<<"$OUT")" ] && ! grep -q "twin" <<<"$OUT$ERR"; then
	ok "the shared runs give the table simulating each gives"
else not_ok "sharing a twin's run changed the table"; diff <(echo "$SHARED") <(tail -n +2 <<<"$OUT") | head -6; fi

# Bad input: exit 2, a located or named message, nothing written.
# Llama-2 70B (18 B x 69e9 = 1.24 TB of model states) fits as tp 2 pp 16
# on 16 nodes of 2 GPUs, and in no layout on 1 node.
sed -e 's/model: llama2-7b/model: llama2-70b/' -e 's/nodes: 1/nodes: 16/' \
    -e 's/parallelism: { tp: 2 }/parallelism: { tp: 2, pp: 16 }/' "$F" > "$E2E_TMP/big.yaml"
run_cmd "$DPUSIM" plan "$E2E_TMP/big.yaml" --nodes 1 --db "$E2E_TMP/no.db"
expect_rc 2 "Llama-2 70B on 1 node of 2 GPUs: no layout fits"
expect_err "big.yaml:[0-9]+:[0-9]+: no layout of the job fits: [0-9]+ tried on 1 to 1 nodes" "the message points at the workload"
if [ ! -e "$E2E_TMP/no.db" ]; then ok "nothing written when nothing fits"; else not_ok "a database was written"; fi
for bad in "--nodes 0" "--nodes 8-4" "--nodes x" "--top 0" "--finalists" "--global-batch 1.5" "--bogus" \
	   "--keep" "--keep vp,bogus" "--keep ," "--jobs 0" "--jobs 1025" "--jobs"; do
	run_cmd "$DPUSIM" plan "$F" $bad --db "$E2E_TMP/no.db"
	expect_rc 2 "plan $bad is refused"
	expect_err "dpusim: error: plan: " "plan $bad: says what is wrong"
done
run_cmd "$DPUSIM" plan "$F" --keep vp,bogus
expect_err "plan: --keep vp,bogus: unknown name 'bogus' \(expected vp, sp or cp" "--keep names the unknown word and what it expects"
run_cmd "$DPUSIM" plan scenarios/allreduce-4ranks.yaml
expect_rc 2 "a collective benchmark has nothing to plan"
if [ ! -e "$E2E_TMP/no.db" ]; then ok "no bad input wrote a database"; else not_ok "a database was written"; fi
# The issue's own example: a scenario whose layout does not fit (Llama-2 70B,
# tp 1 pp 1, no ZeRO: check refuses it) is still a question plan answers.
run_cmd "$DPUSIM" plan tests/bad/memory-does-not-fit.yaml --top 1 --finalists 2
expect_rc 0 "plan starts from a scenario whose own layout does not fit"
read -r _ N8 _ _ _ _ _ _ _ _ _ _ _ _ _ _ GIB _ <<<"$(awk '$1 == 1 && NF == 18' <<<"$OUT" | head -1)"
if [ "$N8" = 8 ] && python3 -c "import sys; sys.exit(not float(sys.argv[1]) <= 80e9 / 2**30)" "$GIB"; then
	ok "it finds a layout that fits on the 8 nodes ($GIB GiB per GPU of 80 GB)"
else not_ok "no fitting layout ranked first: nodes '$N8', '$GIB' GiB"; fi
run_cmd "$DPUSIM" check tests/bad/memory-does-not-fit.yaml
expect_rc 2 "check still refuses that scenario"

# The estimate sees each variant's transport (the connection and node caps
# the simulation puts on what leaves a node) and the finalists are each
# variant's best estimates in turn: on 2 nodes of scenarios/nic-vs-dpu.yaml
# the fastest layout under every variant (pp 2, dp 8, v 4: 1.146 s tuned
# TCP, 1.140 s RDMA) is among its estimate's first two (under RDMA the
# first is its ZeRO 0, v 8 twin: estimated 1.128 s, simulated 1.166 s), so
# the first 8 find what 120 find. The variant-blind estimate ranked it
# 36th, and its first 8 answered pp 1, dp 16 (1.248 s and 1.206 s).
run_cmd "$DPUSIM" plan scenarios/nic-vs-dpu.yaml --nodes 2 --top 200 --finalists 120
BEST=$(awk '$1 == 1 && NF == 18 { print $2, $3, $4, $5, $6, $9, $14 }' <<<"$OUT")
# The node's host memory caps what its rings move (each byte crosses it 4
# times under host TCP: 614.4 GB/s of two Xeon 8480C sockets carry 153.6
# GB/s of a node's traffic), as the simulation's host-memory resource does:
# the pure data-parallel layout (pp 1, dp 16, micro 2), whose gradient
# reduce-scatter and parameter all-gather are held there, is estimated
# within 2% of its simulation under tuned TCP (1.240 s against 1.248 s;
# 1.167 s, -6.5%, when the estimate saw the host stack's cores and not the
# memory).
DPROW=$(awk '/^variant cx7-tcp-tuned/ { v = 1 } /^variant cx7-rdma/ { v = 0 }
	v && NF == 18 && $3 == 1 && $4 == 1 && $5 == 16 && $6 == 2 && $7 == 2 { print $12, $14 }' <<<"$OUT")
if [ -n "$DPROW" ] && python3 -c "import sys; e, s = (float(x.rstrip('s')) for x in sys.argv[1:]); sys.exit(abs(e / s - 1) > 0.02)" $DPROW; then
	ok "a ring held by host memory is estimated within 2% of its simulation ($DPROW)"
else not_ok "the host-memory-bound layout's estimate and simulation: '$DPROW'"; fi
run_cmd "$DPUSIM" plan scenarios/nic-vs-dpu.yaml --nodes 2 --top 1 --finalists 8
expect_out "4953 fit, 8 simulated" "--finalists 8 simulates exactly 8"
GOT=$(awk '$1 == 1 && NF == 18 { print $2, $3, $4, $5, $6, $9, $14 }' <<<"$OUT")
if [ -n "$BEST" ] && [ "$GOT" = "$BEST" ]; then ok "8 finalists find each variant's best of 120"
else not_ok "8 finalists' bests '$GOT' are not 120's '$BEST'"; fi
if awk '$1 == 1 && NF == 18 && $13 > 2 { bad = 1 } END { exit bad }' <<<"$OUT"; then
	ok "each variant's best is among its own estimate's first two"
else not_ok "a variant's best is not among its estimate's first two"; fi
# Interleaved layouts' gradients come in v pieces, each as its chunk's
# last backward ends (train.c, grads_ready), so the pieces of the chunks
# that finish first reduce behind the later chunks' backward passes: the
# estimate no longer charges GPT-3 175B's v 8 layouts the whole
# reduce-scatter behind one pass, and under RDMA its 8 finalists hold
# what 64 find (tp 2, pp 4, dp 128, v 8, sp: 5.316 s); before, that
# layout was the estimate's 9th and 8 finalists answered pp 8, v 4 (5.428 s).
# Since a data-parallel group inside one node runs on the node's NVLink
# channels, not one per NIC (December 2026, models/coll.c group_channels),
# tp 1, pp 4, v 8 with cp 2 (each group's pairs on one node: 5.279 s) is
# first, the estimate's first too, and 8 finalists still hold what 64 find.
run_cmd "$DPUSIM" plan scenarios/gpt3-175b-1024xh100.yaml --top 1 --finalists 8 --jobs 2
GPT=$(awk '/^variant connectx7-rdma-gdr/ { v = 1 } v && $1 == 1 && NF == 18 { print $3, $4, $5, $9, $11; exit }' <<<"$OUT")
if [ "$GPT" = "1 4 128 8 2" ]; then ok "GPT-3 175B under RDMA: 8 finalists find tp 1, pp 4, v 8, cp 2"
else not_ok "GPT-3 175B under RDMA: 8 finalists answer tp pp dp v cp '$GPT'"; fi
# Without --finalists, the layouts in the finalists' order up to the last
# one estimated under a variant's best simulated iteration (times how far
# above the simulation the estimate ran) are simulated too, up to 64 in
# all: on 8 nodes RDMA's best (tp 2, pp 4, v 4, ZeRO 0: 0.403 s) is its
# estimate's 13th, past the first 8, and the plan finds it.
run_cmd "$DPUSIM" plan scenarios/nic-vs-dpu.yaml --nodes 8 --top 1
expect_rc 0 "plan without --finalists"
expect_err "^dpusim: plan: [0-9]+ more layouts are estimated under a variant's best simulated iteration: simulating them too" "it says it simulates the layouts estimated under the best simulated ones"
ALL8=$OUT
NSIM=$(sed -n 's/.*11810 fit, \([0-9]*\) simulated.*/\1/p' <<<"$ALL8")
if [ -n "$NSIM" ] && [ "$NSIM" -gt 8 ] && [ "$NSIM" -le 64 ]; then
	ok "more finalists than the first 8, at most 64 ($NSIM)"
else not_ok "finalists simulated without --finalists: '$NSIM'"; fi
if awk '$1 == 1 && NF == 18 && $13 > 8 { found = 1 } END { exit !found }' <<<"$ALL8"; then
	ok "a variant's best lies past the estimate's first 8"
else not_ok "the 8-node case no longer needs the second round"; fi
run_cmd "$DPUSIM" plan scenarios/nic-vs-dpu.yaml --nodes 8 --top 1 --finalists 8
BEST8=$(awk '$1 == 1 && NF == 18 { printf "%s ", $14 }' <<<"$OUT")
GOT8=$(awk '$1 == 1 && NF == 18 { printf "%s ", $14 }' <<<"$ALL8")
if python3 -c "
import sys
got, first = ([float(x.rstrip('s')) for x in a.split()] for a in sys.argv[1:])
sys.exit(not (len(got) == len(first) == 3 and all(g <= f for g, f in zip(got, first))
              and any(g < f for g, f in zip(got, first))))" "$GOT8" "$BEST8"; then
	ok "the second round finds a faster layout than the first 8 (${GOT8}against $BEST8)"
else not_ok "the second round found nothing faster: ${GOT8}against $BEST8"; fi
# Under tuned TCP every pipeline send runs on two connections of 4 host
# cores (9.2 GB/s each) and the node's 8 GPUs send at once; the sends that
# wait in line are the warm-up's and the cool-down's (pipe_waits). Charged
# so, the estimate orders the finalists with Spearman 0.40 and puts the
# best (pp 8, v 2, cp 2: 0.418 s) 14th; at the link's share of one GPU and
# every send waited for, -0.08 and 40th: tp 1 layouts sending 32 MiB
# activations came first (tp 1, pp 4, v 8: estimated 0.385 s, simulated
# 0.844 s). What still keeps it from the top: tp 2, pp 4, dp 8 layouts
# (a data-parallel group 4 GPUs on each of 2 nodes), whose gradient ring
# shares the host stack with the cool-down's sends in the simulation
# (20-50% above their estimate), which the estimate does not see
# (docs/plan.md; until December 2026 their ZeRO 0 all-reduce ran the
# hierarchical rings, which NCCL does not have, 25-40% faster).
# Spearman 0.54, the best 14th, since.
RHO8=$(sed -n "s/.*Spearman's rank correlation \(-\{0,1\}[0-9.]*\) against the simulation.*/\1/p" <<<"$ALL8" | head -1)
TCP8=$(awk '$1 == 1 && NF == 18 { print $13; exit }' <<<"$ALL8")
if python3 -c "import sys; sys.exit(not (float(sys.argv[1]) >= 0.3 and int(sys.argv[2]) <= 16))" "$RHO8" "$TCP8"; then
	ok "tuned TCP on 8 nodes: the estimate's order agrees (Spearman $RHO8, best at est.rank $TCP8)"
else not_ok "tuned TCP on 8 nodes: Spearman '$RHO8', best the estimate's '$TCP8'th"; fi

# Context-parallel rings at the simulation's own times (train_cp_coll_s:
# the stage's tp rings at once on its nodes, NCCL's latencies included)
# rather than their bytes at the links' rate: on 4 nodes the cp 2 layouts
# were estimated 6-11% under their simulation and came first, and each
# variant's best (then TCP: tp 2, pp 4, v 2, 0.695 s; RDMA: tp 1, pp 4, v
# 4, 0.661 s) was the estimate's 33rd and 19th, then 6th and 8th.
run_cmd "$DPUSIM" plan scenarios/nic-vs-dpu.yaml --nodes 4 --top 1
if awk '$1 == 1 && NF == 18 { n++; if ($13 > 10) bad = 1 } END { exit bad || n != 3 }' <<<"$OUT"; then
	ok "on 4 nodes each variant's best is among its estimate's first 10"
else not_ok "on 4 nodes a variant's best is past its estimate's 10th: $(awk '$1 == 1 && NF == 18 { printf "%s ", $13 }' <<<"$OUT")"; fi
# RDMA's best here is tp 1, pp 4, dp 4, v 4, cp 2 (0.6551 s; the same
# with 200 finalists), its data-parallel groups inside one node on NCCL's
# NVLink channels. Until those groups ran one channel per NIC (December
# 2026) it was tp 1, pp 4, dp 8, v 4 (0.6605 s), which the second round
# found past the first 8 (the margin either way: 8 nodes above still
# checks that round).
if awk '/^variant cx7-rdma-inline/ { v = 1 } v && $1 == 1 && NF == 18 { print $3, $4, $5, $9, $11; exit }' <<<"$OUT" | grep -qx "1 4 4 4 2"; then
	ok "on 4 nodes the plan finds RDMA's best (tp 1, pp 4, dp 4, v 4, cp 2)"
else not_ok "on 4 nodes RDMA's answer is $(awk '/^variant cx7-rdma-inline/ { v = 1 } v && $1 == 1 && NF == 18 { print $3, $4, $5, $9, $11, $14; exit }' <<<"$OUT")"; fi

# Interleaving wins a short pipeline (tests/data/plan-interleave.yaml: 4
# GPUs on 4 nodes, 4 microbatches): the simulated best and the estimate's
# first run more than one virtual stage, faster than the best plain 1F1B
# layout (--keep vp: the scenario's v 1), and the best runs as a scenario.
F=tests/data/plan-interleave.yaml
run_cmd "$DPUSIM" plan "$F" --top 1000
expect_rc 0 "plan a short pipeline"
ROWS=$(awk '$1 ~ /^[0-9]+$/ && NF == 18' <<<"$OUT")
read -r _ NODES TP PP DP MB Z REC V SP CP _ _ ITER TOKS _ _ USD <<<"$(head -1 <<<"$ROWS")"
if [ "$PP" -ge 2 ] && [ "$V" -gt 1 ]; then ok "the best layout interleaves (pp $PP, v $V, $ITER)"
else not_ok "the best layout is pp $PP v $V"; fi
if awk '$13 == 1 && $9 > 1 { found = 1 } END { exit !found }' <<<"$ROWS"; then
	ok "the estimate's first interleaves too"
else not_ok "the estimate's first does not interleave"; fi
best_yaml "$F" "$E2E_TMP/inter.yaml"
same_iter "$E2E_TMP/inter.yaml" "$ITER" "the interleaved layout"
run_cmd "$DPUSIM" plan "$F" --keep vp --top 1
expect_rc 0 "plan --keep vp"
read -r _ _ _ PP1 _ _ _ _ V1 _ _ _ _ ITER1 _ <<<"$(awk '$1 == 1 && NF == 18' <<<"$OUT")"
if [ "$V1" = 1 ] && python3 -c "import sys; sys.exit(not float(sys.argv[1]) < 0.97 * float(sys.argv[2]))" "${ITER%s}" "${ITER1%s}"; then
	ok "plain 1F1B's best (pp $PP1, $ITER1) is over 3% slower than interleaved ($ITER)"
else not_ok "plain 1F1B's best: v '$V1', $ITER1 against $ITER"; fi

# The same job on DeepSpeed's pipeline engine (pipeline_engine: deepspeed,
# which runs plain 1F1B on the whole sequence with ZeRO 0 or 1 on a
# pipeline): plan tries only what the loader accepts for it, so every
# layout listed has v 1, sp off, cp 1 and no ZeRO 2 or 3 with pp above 1,
# and the best runs as a scenario (before, every finalist was refused).
sed 's/^  recompute: true/  recompute: true\n  pipeline_engine: deepspeed/' "$F" > "$E2E_TMP/ds.yaml"
run_cmd "$DPUSIM" plan "$E2E_TMP/ds.yaml" --top 1000
expect_rc 0 "plan on DeepSpeed's pipeline engine"
ROWS=$(awk '$1 ~ /^[0-9]+$/ && NF == 18' <<<"$OUT")
if [ -n "$ROWS" ] && awk '$9 != 1 || $10 != "off" || $11 != 1 || ($4 > 1 && $7 >= 2) { bad = 1 } END { exit bad }' <<<"$ROWS"; then
	ok "every layout listed is one DeepSpeed's engine runs ($(wc -l <<<"$ROWS") of them)"
else not_ok "a layout DeepSpeed's engine refuses was listed: $ROWS"; fi
read -r _ NODES TP PP DP MB Z REC V SP CP _ _ ITER TOKS _ _ USD <<<"$(head -1 <<<"$ROWS")"
best_yaml "$E2E_TMP/ds.yaml" "$E2E_TMP/ds-best.yaml"
same_iter "$E2E_TMP/ds-best.yaml" "$ITER" "DeepSpeed's best layout"

# Context parallelism is what fits a long sequence
# (tests/data/plan-long.yaml: 65,536 tokens, unfused attention, 2 GPUs a
# node): every layout that fits has cp > 1; kept at the scenario's cp 1
# nothing fits; the best runs as a scenario.
F=tests/data/plan-long.yaml
run_cmd "$DPUSIM" plan "$F" --top 1000 --finalists 4
expect_rc 0 "plan a long sequence"
ROWS=$(awk '$1 ~ /^[0-9]+$/ && NF == 18' <<<"$OUT")
if [ -n "$ROWS" ] && awk '$11 < 2 { bad = 1 } END { exit bad }' <<<"$ROWS"; then
	ok "every layout that fits splits the sequence (cp $(awk 'NR == 1 { print $11 }' <<<"$ROWS") first)"
else not_ok "a layout without context parallelism was kept: $(head -1 <<<"$ROWS")"; fi
read -r _ NODES TP PP DP MB Z REC V SP CP _ _ ITER TOKS _ GIB USD <<<"$(head -1 <<<"$ROWS")"
best_yaml "$F" "$E2E_TMP/long.yaml"
run_cmd "$DPUSIM" check "$E2E_TMP/long.yaml"
expect_rc 0 "the loader's memory check accepts the best long-sequence layout ($GIB GiB)"
same_iter "$E2E_TMP/long.yaml" "$ITER" "the context-parallel layout"
run_cmd "$DPUSIM" plan "$F" --keep cp
expect_rc 2 "with cp kept at 1 nothing fits"
expect_err "plan-long.yaml:[0-9]+:[0-9]+: no layout of the job fits: .*--keep held some of vp, sp and cp" "located at the workload, naming --keep"
# tp_comm_overlap (userbuffers): plan keeps only the sequence-parallel tp
# layouts (the overlap needs them: 64 of the 72 layouts), its estimate
# charges what the GEMMs leave exposed as the simulation does, so the
# orders still agree, and tp 2 at micro 8 estimates and simulates faster
# than without the overlap.
sed 's/  recompute: true/  recompute: true\n  tp_comm_overlap: true/; s/parallelism: { tp: 2 }/parallelism: { tp: 2, sequence_parallel: true }/' \
	tests/data/plan-small.yaml > "$E2E_TMP/ub.yaml"
run_cmd "$DPUSIM" plan "$E2E_TMP/ub.yaml" --finalists 1000 --top 1000
expect_rc 0 "plan with tp_comm_overlap"
expect_out "64 layouts, 26 fit, 26 simulated" "tp 2 without sequence parallelism left out"
UB=$(awk '$1 ~ /^[0-9]+$/ && NF == 18' <<<"$OUT")
if ! awk '$3 == 2 && $10 == "off"' <<<"$UB" | grep -q .; then
	ok "no tp 2 layout without sequence parallelism under tp_comm_overlap"
else not_ok "a tp 2 layout without sequence parallelism was listed"; fi
RHO=$(sed -n "s/.*Spearman's rank correlation \(-\{0,1\}[0-9.]*\) against the simulation.*/\1/p" <<<"$OUT")
if python3 -c "import sys; sys.exit(not float(sys.argv[1]) >= 0.5)" "${RHO:-nan}"; then
	ok "the estimate's order still agrees with the simulation's ($RHO)"
else not_ok "Spearman's rank correlation $RHO under tp_comm_overlap"; fi
pick() { awk '$3 == 2 && $6 == 8 && $8 == "on" && $10 == "on" { print $12, $14; exit }' "$1"; }
echo "$UB" > "$E2E_TMP/ub-rows.txt"
read -r EST_UB SIM_UB <<<"$(pick "$E2E_TMP/ub-rows.txt")"
read -r EST_NO SIM_NO <<<"$(pick "$E2E_TMP/all.txt")"
if python3 -c "import sys; a=[float(x.rstrip('s')) for x in sys.argv[1:]]; sys.exit(not (a[0] < a[2] and a[1] < a[3]))" \
	"$EST_UB" "$SIM_UB" "$EST_NO" "$SIM_NO"; then
	ok "tp 2, micro 8, sp: estimate $EST_NO -> $EST_UB, simulated $SIM_NO -> $SIM_UB with the overlap"
else not_ok "tp 2, micro 8, sp: estimate $EST_NO -> $EST_UB, simulated $SIM_NO -> $SIM_UB"; fi
# Each overlap's estimate feeds the simulation's own layer function
# (tp_overlap_layer, tp_te_layer, tp_async_layer) with the closed form's
# collectives: under sequence parallelism an all-gather and a
# reduce-scatter each half an all-reduce's time. So the estimate's error
# against the simulation does not depend on which overlap runs: tp 2,
# micro 8, sp, with none (tp_backward_overlap: false), userbuffers and
# Transformer Engine's FP8 layers, the three est/sim ratios lie within 2.5%
# of each other. (Each gather and reduce-scatter once took an all-reduce's
# time in the two TE branches: FP8 read 1.004 where the others read
# 0.962-0.976.)
sp2=(-e 's/parallelism: { tp: 2 }/parallelism: { tp: 2, sequence_parallel: true }/')
sed "${sp2[@]}" -e 's/  recompute: true/  recompute: true\n  tp_backward_overlap: false/' \
	tests/data/plan-small.yaml > "$E2E_TMP/ov-none.yaml"
sed "${sp2[@]}" -e 's/  recompute: true/  recompute: true\n  tp_comm_overlap: true/' \
	tests/data/plan-small.yaml > "$E2E_TMP/ov-ub.yaml"
sed "${sp2[@]}" -e 's/precision: bf16/precision: fp8/' tests/data/plan-small.yaml > "$E2E_TMP/ov-fp8.yaml"
RATIOS=()
for m in none ub fp8; do
	run_cmd "$DPUSIM" plan "$E2E_TMP/ov-$m.yaml" --finalists 1000 --top 1000
	expect_rc 0 "plan, overlap $m"
	RATIOS+=("$(awk '$1 ~ /^[0-9]+$/ && NF == 18 && $3 == 2 && $6 == 8 && $8 == "on" && $10 == "on" \
		{ print ($12 + 0) / ($14 + 0); exit }' <<<"$OUT")")
done
if python3 -c "import sys; r=[float(x) for x in sys.argv[1:]]; sys.exit(not (len(r) == 3 and max(r) / min(r) < 1.025))" \
	"${RATIOS[@]}"; then
	ok "the estimate's error is the same under every overlap (est/sim ${RATIOS[*]})"
else not_ok "the estimate's error depends on the overlap (est/sim none, ub, fp8: ${RATIOS[*]})"; fi
# The estimate's network time is at the payload rate the simulated links
# carry (setup_payload_frac, as setup_fabric): tests/data/plan-wire.yaml's
# 2-stage pipeline over 1 Gb/s InfiniBand sends 2 x 8 microbatches x 32 MiB
# (4096 tokens x 4096 x 2 bytes) = 4.295 s at the raw rate. Doubling the
# link halves that part alone, so the difference of the two estimates is
# half the network time: 4.295 / 2 / (4096/4122) = 2.1611 s at IB MTU 4096,
# and at MTU 1024 (1024/1050) 1.0189 times that, the ratio of the payload
# fractions (both were 2.1475 s, ratio 1, at the raw link rate).
wire_est() { # MTU RATE: the estimate of pp 2, micro 1 with recomputation
	sed -e "s/^    mtu: .*/    mtu: $1/" -e "s/^    link_rate: .*/    link_rate: $2/" \
		tests/data/plan-wire.yaml > "$E2E_TMP/wire.yaml"
	run_cmd "$DPUSIM" plan "$E2E_TMP/wire.yaml" --keep vp,sp,cp --finalists 4 --top 4
	awk '$1 ~ /^[0-9]+$/ && NF == 18 && $4 == 2 && $6 == 1 && $8 == "on" { print $12 + 0; exit }' <<<"$OUT"
}
W4=$(wire_est 4096B 1Gbps) W4F=$(wire_est 4096B 2Gbps) W1=$(wire_est 1024B 1Gbps) W1F=$(wire_est 1024B 2Gbps)
if python3 - "$W4" "$W4F" "$W1" "$W1F" <<'PY'
import sys
e4, e4f, e1, e1f = map(float, sys.argv[1:])
d4, d1 = e4 - e4f, e1 - e1f
f4, f1 = 4096 / 4122, 1024 / 1050
print("   half the network time: %.4f s at MTU 4096, %.4f at 1024 (ratio %.5f, fractions' %.5f)"
      % (d4, d1, d1 / d4, f4 / f1))
sys.exit(not (abs(d4 - 2 * 4096 * 4096 * 8 / 125e6 / f4) < 3e-4 and abs(d1 / d4 - f4 / f1) < 2e-4))
PY
then ok "the estimate's network time is at the link's payload rate (MTU 4096 and 1024)"
else not_ok "the estimate's network time does not scale by the payload fraction: $W4 $W4F $W1 $W1F"; fi
# A finalist's run lines (heartbeat, iterations) name its layout and end
# with the plan's progress.
DPUSIM_PROGRESS_S=0 run_cmd "$DPUSIM" plan "$F" --finalists 1
expect_err "^dpusim: plan finalist 1/1 \(nodes [0-9]+, tp [0-9]+, pp [0-9]+, dp [0-9]+, micro [0-9]+, .*\): [a-z-]+: .*; plan: 0/1 finalists done, [0-9.]+ (us|ms|s|min|h) elapsed\$" \
	"a finalist's run lines name its layout and end with the plan's progress"
finish
