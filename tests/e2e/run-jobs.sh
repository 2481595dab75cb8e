# dpusim run --jobs N: variants in worker processes give the report, the
# table and the errors a run in one process gives (issue 14).
. tests/e2e/lib.sh
S=tests/data/train-small.yaml

run_cmd "$DPUSIM" run "$S" --json
expect_rc 0 "run --json in one process"
ONE="$OUT"
run_cmd "$DPUSIM" run "$S" --json --jobs 2
expect_rc 0 "run --json --jobs 2"
if [ "$OUT" = "$ONE" ]; then ok "--jobs 2 prints the same report, byte for byte"
else not_ok "--jobs 2 report differs: $(diff <(echo "$ONE") <(echo "$OUT") | head -5)"; fi

run_cmd "$DPUSIM" run "$S"
ONE="$OUT"
run_cmd "$DPUSIM" run "$S" --jobs 3
expect_rc 0 "run --jobs 3 (more workers than variants)"
if [ "$OUT" = "$ONE" ]; then ok "--jobs 3 prints the same table"
else not_ok "--jobs 3 table differs: $(diff <(echo "$ONE") <(echo "$OUT") | head -5)"; fi

sed 's|^  gpu: H100-SXM5|  gpu: { profile: H100-SXM5, nvlink_bw: 1B/s, nvlink_bw_achieved: 1B/s }|' \
	scenarios/demo.yaml >"$E2E_TMP/slow-nvl.yaml"
run_cmd timeout 60 "$DPUSIM" run "$E2E_TMP/slow-nvl.yaml" --jobs 2 -o "$E2E_TMP/rep"
expect_rc 2 "a variant that fails in a worker fails the run"
expect_err "^$E2E_TMP/slow-nvl.yaml:35:5: variant 'baseline': training simulation: the tensor-parallel all-reduce inside a node: simulated time passes" \
	"the worker's message reaches stderr, placed in the scenario"
if [ -z "$OUT" ] && [ ! -e "$E2E_TMP/rep/report.json" ]; then ok "and no report is printed or written"
else not_ok "output left: ${OUT:0:200} $(ls "$E2E_TMP/rep" 2>/dev/null)"; fi

# A run stopped alone (timeout(1), a batch system's or a user's kill PID):
# its workers end with it. Task 1's worker stops itself (the test hook
# DPUSIM_TEST_FORKS_STOP, tools/forks.h); once the run alone is killed, it
# gets a SIGTERM too and ends rather than compute on when continued.
# Before, nothing signalled it: a killed `run --jobs 2` of
# gpt3-175b-1024xh100 left both workers computing.
DPUSIM_TEST_FORKS_STOP=1 "$DPUSIM" run "$S" --jobs 2 -o "$E2E_TMP/alone" \
	>/dev/null 2>"$E2E_TMP/alone.err" &
pid=$!
victim=
for _ in $(seq 2400); do  # at most 120 s: a bound against a hang, not a timing
	victim=$(sed -n 's/^dpusim: test hook: process \([0-9]*\) stops at task 1$/\1/p' "$E2E_TMP/alone.err")
	[ -n "$victim" ] && break
	sleep 0.05
done
killed_alone run $pid "$victim"
[ ! -e "$E2E_TMP/alone/report.json" ] && ok "and no report is written" || not_ok "a report was written"

for bad in 0 x 1025; do
	run_cmd "$DPUSIM" run "$S" --jobs "$bad"
	expect_rc 2 "--jobs $bad is a usage error"
	expect_err "run: --jobs wants a count from 1 to 1024, not '$bad'" "--jobs $bad: the message says what is wanted"
done
finish
