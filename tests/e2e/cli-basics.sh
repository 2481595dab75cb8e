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

# Where data is found (installed, out of tree): tests/e2e/datadir.sh.

finish
