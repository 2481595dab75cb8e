# The command table: help, unknown commands, exit statuses.
. tests/e2e/lib.sh

run_cmd "$DPUSIM" --help
expect_rc 0 "dpusim --help"
expect_out '^  bench ' "help lists bench"
expect_out '^  run ' "help lists run"

run_cmd "$DPUSIM"
expect_rc 2 "dpusim with no command is a usage error"

run_cmd "$DPUSIM" frobnicate
expect_rc 2 "unknown command"
expect_err "unknown command 'frobnicate'" "unknown command is named"

run_cmd "$DPUSIM" bench --help
expect_rc 0 "bench --help"
expect_out 'engine hold pending=N' "bench help documents its output"

run_cmd "$DPUSIM" bench nosuch
expect_rc 2 "unknown benchmark"

run_cmd "$DPUSIM" bench engine --events 0
expect_rc 2 "bench engine rejects --events 0"

# Every list option refuses an empty item (strtok_r would skip it, so
# "--nodes 1,,2" ran two node counts as if the typo were not there), and
# still takes the list without it.
while IFS='|' read -r good bad; do
	read -ra g <<<"$good"; read -ra b <<<"$bad"
	run_cmd "$DPUSIM" "${g[@]}"
	expect_rc 0 "${g[*]}"
	run_cmd "$DPUSIM" "${b[@]}"
	expect_rc 2 "${b[*]}: an empty item is refused"
	expect_err "empty" "${b[*]}: the message names the empty item"
done <<'LISTS'
coll --ranks 4 --link 100Gbps --bytes 1MiB,2MiB|coll --ranks 4 --link 100Gbps --bytes 1MiB,,2MiB
coll --ranks 4 --link 100Gbps --bytes 1MiB|coll --ranks 4 --link 100Gbps --bytes 1MiB,
plan scenarios/demo.yaml --nodes 1,2 --top 1|plan scenarios/demo.yaml --nodes 1,,2 --top 1
plan scenarios/demo.yaml --nodes 2 --top 1|plan scenarios/demo.yaml --nodes ,2 --top 1
bench engine --events 1000 --reps 1 --pending 10,20|bench engine --events 1000 --reps 1 --pending 10,,20
bench scale --ranks 2,4 --reps 1 --train-gpus none|bench scale --ranks 2,4, --reps 1 --train-gpus none
bench scale --ranks 2 --reps 1 --train-gpus none|bench scale --ranks 2 --reps 1 --train-gpus 128,
bench scale --ranks 2 --reps 1 --train-gpus none --train-cases rdma/ecmp/2|bench scale --ranks 2 --reps 1 --train-gpus none --train-cases rdma/ecmp/2,,rdma/ecmp/4
LISTS

# Where data is found (installed, out of tree): tests/e2e/datadir.sh.

finish
