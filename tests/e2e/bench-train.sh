# dpusim bench scale's training lines: the documented form, one per size.
# (Figures are for make bench; this only checks the command works.)
. tests/e2e/lib.sh

run_cmd "$DPUSIM" bench scale --ranks 8 --reps 1 --train-gpus 128,256
expect_rc 0 "bench scale with small training sizes"
n=$(grep -Ec '^train gpt3-175b gpus=[0-9]+ wall_s=[0-9.]+ peak_rss_kb=[0-9]+ events=[0-9]+ iteration_s=[0-9.]+$' <<<"$OUT")
if [ "$n" -eq 2 ]; then ok "two training lines in the documented form"; else not_ok "expected 2 train lines: $OUT"; fi
expect_out '^coll ring ranks=8 ' "the collective line comes first"

run_cmd "$DPUSIM" bench scale --ranks 8 --reps 1 --train-gpus none
expect_rc 0 "--train-gpus none"
if grep -q '^train ' <<<"$OUT"; then not_ok "no training line expected"; else ok "no training line"; fi

run_cmd "$DPUSIM" bench scale --train-gpus 100
expect_rc 2 "a GPU count that is not a multiple of 8 nodes fails plainly"
finish
