# dpusim bench scale's training lines: the documented form, one per size.
# (Figures are for make bench; this only checks the command works.)
. tests/e2e/lib.sh

run_cmd "$DPUSIM" bench scale --ranks 8 --reps 1 --train-gpus 128,256
expect_rc 0 "bench scale with small training sizes"
LINE='gpus=[0-9]+ network=[a-z-]+ routing=[a-z]+ microbatches=[0-9]+ wall_s=[0-9.]+ peak_rss_kb=[0-9]+ events=[0-9]+ iteration_s=[0-9.]+ ring_steps=exact$'
n=$(grep -Ec "^train gpt3-175b $LINE" <<<"$OUT")
if [ "$n" -eq 2 ]; then ok "two training lines in the documented form"; else not_ok "expected 2 train lines: $OUT"; fi
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
for bad in foo/ecmp/2 host-tcp/ecmp host-tcp/ibm/4 rdma/ecmp/0 rdma/ecmp/4/lump rdma/ecmp/4/lumped/x; do
	run_cmd "$DPUSIM" bench scale --train-cases "$bad"
	expect_rc 2 "--train-cases $bad is a usage error"
done

run_cmd "$DPUSIM" bench scale --ranks 8 --reps 1 --train-gpus none
expect_rc 0 "--train-gpus none"
if grep -q '^train ' <<<"$OUT"; then not_ok "no training line expected"; else ok "no training line"; fi

run_cmd "$DPUSIM" bench scale --train-gpus 100
expect_rc 2 "a GPU count that is not a multiple of 8 nodes fails plainly"
finish
