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

# An installed binary finds the profiles installed beside it
# (PREFIX/bin/dpusim and PREFIX/share/dpusim/profiles), from any directory.
mkdir -p "$E2E_TMP/prefix/bin" "$E2E_TMP/prefix/share/dpusim" "$E2E_TMP/elsewhere"
cp "$DPUSIM" "$E2E_TMP/prefix/bin/dpusim"
cp -r models/profiles "$E2E_TMP/prefix/share/dpusim/"
cp scenarios/demo.yaml "$E2E_TMP/elsewhere/"
run_cmd env -u DPUSIM_PROFILE_DIR sh -c "cd '$E2E_TMP/elsewhere' && '$E2E_TMP/prefix/bin/dpusim' check demo.yaml"
expect_rc 0 "installed dpusim finds its profiles outside the source tree"
rm -r "$E2E_TMP/prefix/share/dpusim/profiles"
if [ -d /usr/local/share/dpusim/profiles ]; then
	echo "# skip: /usr/local/share/dpusim/profiles exists here (the compiled-in fallback)"
else
	run_cmd env -u DPUSIM_PROFILE_DIR sh -c "cd '$E2E_TMP/elsewhere' && '$E2E_TMP/prefix/bin/dpusim' check demo.yaml"
	expect_rc 2 "without them it says so"
	expect_err "unknown gpu profile 'H100-SXM5' \\(no .*/H100-SXM5.yaml\\)" "naming where it looked"
fi

finish
