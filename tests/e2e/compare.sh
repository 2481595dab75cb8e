# dpusim compare: exit codes 0/1/2, one-sided metrics and variants listed, JSON output.
. tests/e2e/lib.sh
SIM=tests/data/report-sim.json
HW=tests/data/report-hw.json

run_cmd "$DPUSIM" compare "$SIM" "$HW"
expect_rc 0 "compare without tolerance"
expect_out '^dpu +samples_per_s +2560 +2381.4 +-6.98%' "shared metric with both values and relative error"
expect_out '^baseline +energy_kwh +0.0125 +- +only in A' "metric only in A is listed"
expect_out '^dpu-nocrypto +samples_per_s +- +2400 +only in B' "variant only in B is listed"
expect_out 'summary: 21 shared, max \|rel_err\| 8.62% \(baseline iteration_s.p99\), 16 only in A, 2 only in B' "summary line"

run_cmd "$DPUSIM" compare "$SIM" "$HW" --tolerance 10%
expect_rc 0 "all shared metrics within 10%"

run_cmd "$DPUSIM" compare --tolerance 5% "$SIM" "$HW"
expect_rc 1 "some shared metric beyond 5%"
expect_out 'dpu +iteration_s +0.4 +0.43 +\+7.50%  beyond tolerance' "the offending metric is marked"
expect_out "11 beyond tolerance 5%" "count of metrics beyond tolerance"

run_cmd "$DPUSIM" compare "$SIM" "$SIM" --tolerance 0%
expect_rc 0 "a report against itself is exact"

run_cmd "$DPUSIM" compare "$SIM" "$HW" --json
expect_rc 0 "compare --json"
if python3 - "$E2E_TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {(r["variant"], r["metric"]): r for r in d["rows"]}
assert d["tolerance"] is None
assert rows[("baseline", "cost_usd")]["b"] is None
assert rows[("dpu-nocrypto", "samples_per_s")]["a"] is None
assert abs(rows[("dpu", "iteration_s")]["rel_err"] - 0.075) < 1e-12
PY
then ok "--json parses and holds one-sided rows as null"; else not_ok "--json content"; fi

printf '{"schema": "dpusim-report/1",\n  "source": "sim"\n  "version": "x"}\n' > "$E2E_TMP/bad.json"
run_cmd "$DPUSIM" compare "$SIM" "$E2E_TMP/bad.json"
expect_rc 2 "malformed report"
expect_err 'bad.json:3:[0-9]+: invalid JSON' "malformed report error names file:line:col"

run_cmd "$DPUSIM" compare "$SIM" "$E2E_TMP/missing.json"
expect_rc 2 "missing report"
expect_err 'missing.json: cannot open' "missing file is named"

run_cmd "$DPUSIM" compare "$SIM" "$HW" --tolerance 10
expect_rc 2 "tolerance without % is refused"
run_cmd "$DPUSIM" compare "$SIM"
expect_rc 2 "one report is a usage error"
run_cmd "$DPUSIM" compare "$SIM" "$HW" --frob
expect_rc 2 "unknown option"
run_cmd "$DPUSIM" compare --help
expect_rc 0 "compare --help"
expect_out 'only in A' "help explains one-sided entries"

finish
