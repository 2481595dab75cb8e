# Long runs say how far they are on stderr, terminal or not (issue 14): a
# line per iteration once DPUSIM_PROGRESS_S (10 s by default) has passed,
# stdout untouched; a short run says nothing.
. tests/e2e/lib.sh
S=tests/data/train-small.yaml

run_cmd "$DPUSIM" run "$S" --json --replications 2
expect_rc 0 "a short run"
if grep -q 'iteration .* done' <<<"$ERR"; then not_ok "a short run printed progress: $ERR"
else ok "a short run prints no progress"; fi
ONE="$OUT"
DPUSIM_PROGRESS_S=0 run_cmd "$DPUSIM" run "$S" --json --replications 2
expect_rc 0 "the same run, progress every iteration"
expect_err '^dpusim: gdr: replication 2/2, iteration 2/3 done, simulated [0-9.e+-]+ s, wall [0-9]+ s, about [0-9]+ s left$' \
	"a line names the variant, replication, iteration, simulated time and time left"
if [ "$OUT" = "$ONE" ]; then ok "stdout is the same report"; else not_ok "progress changed stdout"; fi
finish
