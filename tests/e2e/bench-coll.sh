# dpusim bench flows / scale print lines in the documented form.
# (Figures are not judged here: speed is for make bench, never a test.)
. tests/e2e/lib.sh

# The collective lines only: the training lines (GPT-3 at 1,024 to 16,384 GPUs by
# default, minutes under the sanitizers) are tests/e2e/bench-train.sh's, at small sizes.
run_cmd "$DPUSIM" bench scale --reps 1 --ranks 8,16 --bytes 1048576 --train-gpus none
expect_rc 0 "bench scale runs"
n=$(grep -Ec '^coll ring ranks=[0-9]+ bytes=1048576 sim_time_s=[0-9.]+ wall_s=[0-9.]+ peak_rss_kb=[0-9]+$' <<<"$OUT")
if [ "$n" -eq 2 ]; then ok "two lines in the documented form"; else not_ok "expected 2 lines, got: $OUT"; fi
expect_out '^coll ring ranks=8 ' "sizes in the order given"

run_cmd "$DPUSIM" bench flows --reps 1 --quick
expect_rc 0 "bench flows runs"
expect_out '^flows independent n=1000 wall_s=[0-9.]+ flows_per_s=[0-9]+ peak_rss_kb=[0-9]+$' "flows line"

run_cmd "$DPUSIM" bench scale --ranks 1
expect_rc 2 "one rank is refused"
run_cmd "$DPUSIM" bench flows --reps 0
expect_rc 2 "zero reps is refused"
finish
