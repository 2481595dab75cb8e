# Every report the tools write validates against dpusim-report/1: reading a
# report back (here through `dpusim compare X X`) runs the full validator.
. tests/e2e/lib.sh

validate() { # FILE DESCRIPTION
	run_cmd "$DPUSIM" compare "$1" "$1" --tolerance 0%
	if [ "$RC" -eq 0 ]; then ok "$2 validates"; else not_ok "$2: $ERR"; fi
}

for f in tests/data/report-*.json; do
	validate "$f" "fixture $f"
done

# dpusim-hw bench (one rank: local benchmarks only; no MPI, GPU or RDMA needed).
# Under the sanitizer build, the suppressions of tests/e2e/hw-tcp.sh cover what
# Open MPI and the CUDA runtime keep until exit.
run_cmd env LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/e2e/hw-lsan.supp:print_suppressions=0}" \
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0" \
	"$BIN/dpusim-hw" bench --quick --dir "$E2E_TMP" -o "$E2E_TMP/hw-bench.json"
expect_rc 0 "dpusim-hw bench --quick"
validate "$E2E_TMP/hw-bench.json" "dpusim-hw bench report"

# dpusim run: once the command exists, its report must validate too.
run_cmd "$DPUSIM" run scenarios/demo.yaml --json
if grep -q 'not built yet' <<<"$ERR"; then
	echo "# skip: dpusim run is not built yet"
else
	expect_rc 0 "dpusim run scenarios/demo.yaml --json"
	printf '%s\n' "$OUT" > "$E2E_TMP/run.json"
	validate "$E2E_TMP/run.json" "dpusim run report"
fi

# A report edited by hand so that it breaks a rule is refused.
sed 's/"compute": 0.31, "exposed_comm": 0.12/"compute": 0.31, "exposed_comm": 0.13/' \
	tests/data/report-sim.json > "$E2E_TMP/bad-breakdown.json"
run_cmd "$DPUSIM" compare "$E2E_TMP/bad-breakdown.json" tests/data/report-sim.json
expect_rc 2 "a breakdown that does not add up is refused"
expect_err 'variants\[0\].breakdown_s: components sum to 0.51 s, iteration_s.mean is 0.5 s' "the rule broken is named"

# binding_s splits exposed_comm and data_stall: more than they hold is
# refused, and so is a class of limit the schema does not name.
sed 's/"conn_core": 0.1, "nic": 0.02/"conn_core": 0.2, "nic": 0.02/' \
	tests/data/report-sim.json > "$E2E_TMP/bad-binding.json"
run_cmd "$DPUSIM" compare "$E2E_TMP/bad-binding.json" tests/data/report-sim.json
expect_rc 2 "a binding_s beyond exposed_comm is refused"
expect_err 'variants\[0\].binding_s: communication held 0.22 s, breakdown_s.exposed_comm is 0.12 s' \
	"the binding rule broken is named"
sed 's/"conn_core": 0.1,/"conn_cores": 0.1,/' tests/data/report-sim.json > "$E2E_TMP/bad-class.json"
run_cmd "$DPUSIM" compare "$E2E_TMP/bad-class.json" tests/data/report-sim.json
expect_rc 2 "an unknown class of limit in binding_s is refused"
expect_err "unknown key 'conn_cores'" "the unknown class is named"

finish
