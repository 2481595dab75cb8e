# dpusim bench scale's training lines: the documented form, one per size.
# (Figures are for make bench; this only checks the command works.)
. tests/e2e/lib.sh

run_cmd "$DPUSIM" bench scale --ranks 8 --reps 1 --train-gpus 128,256
expect_rc 0 "bench scale's default cases at small training sizes"
LINE='gpus=[0-9]+ network=[a-z-]+ routing=[a-z]+ microbatches=[0-9]+ wall_s=[0-9.]+ peak_rss_kb=[0-9]+ events=[0-9]+ solves=[0-9]+ iteration_s=[0-9.]+ ring_steps=(exact|lumped)$'
n=$(grep -Ec "^train gpt3-175b $LINE" <<<"$OUT")
if [ "$n" -eq 14 ]; then ok "fourteen training lines in the documented form"; else not_ok "expected 14 train lines: $OUT"; fi
# The default cases are what planners run (make bench times them to 16,384
# GPUs), the fabric's own default routing (D-mod-K: InfiniBand) first;
# GPT-3 175B's tp 8 x pp 16 fills 128 GPUs with dp 1.
want='host-tcp dmodk exact
rdma-gdr dmodk exact
host-tcp ecmp exact
rdma-gdr ecmp exact
rdma-gdr adaptive exact
host-tcp ecmp lumped
rdma-gdr ecmp lumped'
got=$(awk '/^train / { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	if (v["microbatches"] == 64 && v["gpus"] == 128) print v["network"], v["routing"], v["ring_steps"] }' <<<"$OUT")
if [ "$got" = "$want" ]; then ok "the seven default cases at 64 microbatches, from 128 GPUs"
else not_ok "default cases: $got"; fi
n=$(grep -Ec '^scale (host-tcp|rdma-gdr)/(dmodk|ecmp|adaptive)/64 (exact|lumped): 128->256 ' <<<"$OUT")
if [ "$n" -eq 7 ]; then ok "a curve line per default case"; else not_ok "expected 7 scale lines: $OUT"; fi
expect_out '^coll ring ranks=8 ' "the collective line comes first"

run_cmd "$DPUSIM" bench scale --ranks 8 --reps 1 --train-gpus 128,256 \
	--train-cases host-tcp/ecmp/64,rdma-gdr/adaptive/64,host-tcp/dmodk/64
expect_rc 0 "bench scale with three realistic cases"
n=$(grep -Ec "^train gpt3-175b gpus=(128|256) network=(host-tcp routing=(ecmp|dmodk)|rdma-gdr routing=adaptive) microbatches=64 " <<<"$OUT")
if [ "$n" -eq 6 ]; then ok "a line per size and case, each naming its case"; else not_ok "expected 6 case lines: $OUT"; fi
# Both curves, labelled: the exact ring steps and the lumped approximation.
run_cmd "$DPUSIM" bench scale --ranks 8 --reps 1 --train-gpus 256 \
	--train-cases rdma-gdr/ecmp/64,rdma-gdr/ecmp/64/lumped
expect_rc 0 "bench scale with a lumped case"
expect_out "^train gpt3-175b gpus=256 network=rdma-gdr routing=ecmp microbatches=64 .* ring_steps=exact$" "the exact case says so"
expect_out "^train gpt3-175b gpus=256 network=rdma-gdr routing=ecmp microbatches=64 .* ring_steps=lumped$" "the lumped case says so"
for bad in foo/ecmp/2 host-tcp/ecmp host-tcp/ibm/4 rdma/ecmp/0 rdma/ecmp/4/lump rdma/ecmp/4/lumped/x \
	rdma/ecmp/g rdma/ecmp/g0 rdma/ecmp/gx rdma/ecmp/+4 rdma/ecmp/g-4 'rdma/ecmp/ 4' rdma/ecmp/4x; do
	run_cmd "$DPUSIM" bench scale --train-cases "$bad"
	expect_rc 2 "--train-cases $bad is a usage error"
done

# The curve (issue 14): after a case's sizes, one "scale" line whose ratios
# are those of its train lines, recomputed here from them.
# check_curve LABEL: the scale line of LABEL against the train lines above
# it, each ratio within 1% (the lines' wall_s is rounded to the microsecond
# and the curve prints 3 digits; a wrong ratio is off by far more).
check_curve() {
	awk -v label="$1" '
	function near(a, b) { return (a - b) <= 0.01 * b + 0.5e-3 && (b - a) <= 0.01 * b + 0.5e-3 }
	function nearns(a, b) { return (a - b) <= 0.01 * b + 1 && (b - a) <= 0.01 * b + 1 }
	/^train / { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		n++; g[n] = v["gpus"]; w[n] = v["wall_s"]; e[n] = v["events"]; s[n] = v["solves"]
		work[n] = v["gpus"] * v["microbatches"]; next }
	/^scale / { line = $0; sub(/^scale /, "", line)
		if (substr(line, 1, length(label) + 1) != label ":") { n = 0; next }
		found = 1; bad = ""
		k = split(substr(line, length(label) + 2), step, ";")
		if (k != n - 1) bad = bad " " k " steps for " n " sizes"
		for (i = 2; i <= n && !bad; i++) {
			split(step[i - 1], t, " "); split(t[11], ns, "->")
			if (t[1] != g[i-1] "->" g[i] || t[2] != "wall" || t[4] != "work" || t[6] != "events" ||
			    t[8] != "solves" || t[10] != "ns/event") bad = bad " step " i-1 " reads \"" step[i-1] "\""
			else if (!near(substr(t[3], 2), w[i]/w[i-1]) || !near(substr(t[5], 2), work[i]/work[i-1]) ||
			    !near(substr(t[7], 2), e[i]/e[i-1]) || !(s[i-1] > 0 && near(substr(t[9], 2), s[i]/s[i-1])) ||
			    !nearns(ns[1], 1e9*w[i-1]/e[i-1]) || !nearns(ns[2], 1e9*w[i]/e[i]))
				bad = bad sprintf(" step %s: recomputed wall x%.3g work x%.3g events x%.3g solves x%.3g ns/event %.0f->%.0f",
					t[1], w[i]/w[i-1], work[i]/work[i-1], e[i]/e[i-1], s[i-1] ? s[i]/s[i-1] : 0,
					1e9*w[i-1]/e[i-1], 1e9*w[i]/e[i])
		}
		print bad ? "differs:" bad " | " line : "same"; n = 0 }
	END { if (!found) print "no scale line for " label }' <<<"$OUT"
}

run_cmd "$DPUSIM" bench scale --ranks 8 --reps 1 --train-gpus 128,256,512 \
	--train-cases host-tcp/ecmp/4,rdma-gdr/adaptive/4/lumped,rdma-gdr/ecmp/g64
expect_rc 0 "bench scale with three sizes and three cases"
for c in "host-tcp/ecmp/4 exact" "rdma-gdr/adaptive/4 lumped" "rdma-gdr/ecmp/g64 exact"; do
	got=$(check_curve "$c")
	if [ "$got" = same ]; then ok "$c: the curve's ratios are its lines'"
	else not_ok "$c: $got"; fi
done
expect_out '^scale host-tcp/ecmp/4 exact: 128->256 wall x[0-9.e+]+ work x2 events x[0-9.e+]+ solves x[0-9.e+]+ ns/event [0-9]+->[0-9]+; 256->512 wall x[0-9.e+]+ work x2 ' \
	"a step per pair of sizes, work doubling with the GPUs at 4 microbatches each"
expect_out '^scale rdma-gdr/ecmp/g64 exact: 128->256 wall x[0-9.e+]+ work x1 .*; 256->512 wall x[0-9.e+]+ work x1 ' \
	"a fixed global batch (gN) keeps the work flat"
expect_out '^train gpt3-175b gpus=512 network=rdma-gdr routing=ecmp microbatches=16 ' \
	"g64 on 512 GPUs (dp 4) is 16 microbatches per pipeline"

# A size that fails leaves the curve to the sizes that ran.
run_cmd "$DPUSIM" bench scale --ranks 8 --reps 1 --train-gpus 128,100,256 --train-cases rdma/adaptive/2
expect_rc 2 "a failed size fails the bench"
expect_out '^scale rdma/adaptive/2 exact: 128->256 wall ' "and the curve steps over it"
run_cmd "$DPUSIM" bench scale --ranks 8 --reps 1 --train-gpus 128 --train-cases rdma/adaptive/2
if grep -q '^scale ' <<<"$OUT"; then not_ok "one size has no curve: $OUT"; else ok "one size: no scale line"; fi

run_cmd "$DPUSIM" bench scale --ranks 8 --reps 1 --train-gpus none
expect_rc 0 "--train-gpus none"
if grep -q '^train ' <<<"$OUT"; then not_ok "no training line expected"; else ok "no training line"; fi

run_cmd "$DPUSIM" bench scale --train-gpus 100
expect_rc 2 "a GPU count that is not a multiple of 8 nodes fails plainly"
finish
