# dpusim validate: a published row within tolerance, the exit status when a
# case is outside it, and malformed case files.
. tests/e2e/lib.sh

run_cmd "$DPUSIM" validate --only megatron-145.6b
expect_rc 0 "Megatron-LM 145.6B row (Narayanan et al., SC21, Table 1, interleaved) within 15%"
expect_out '^megatron-145.6b +tflops_per_gpu +[0-9.]+ +148 +[-+][0-9.]+% +15% +ok$' "its row"
expect_out 'mean absolute error' "the Megatron summary line"

run_cmd "$DPUSIM" validate --cases tests/data/validate/cases-mixed.yaml
expect_rc 1 "a case outside its tolerance is a finding (exit 1)"
expect_out '^close .* ok$' "the close case passes"
expect_out '^far .* OUTSIDE$' "the far case is flagged"
expect_out '^near rows: mean absolute error [0-9.]+% over 1 cases$' "a summary line per group"
expect_out '^off rows: mean absolute error [0-9.]+% over 1 cases$' "the other group's"
expect_out '^all rows: mean absolute error [0-9.]+% over 2 cases$' "and all rows together"

# A figure published per NIC (per: 8): the prediction is the benchmark's bus
# bandwidth over the node's 8 NICs, as dpusim run reports it.
run_cmd "$DPUSIM" run tests/validation/nccl-ndr-ring.yaml --json
WANT=$(python3 -c 'import json,sys; print("%.4g" % (json.load(sys.stdin)["variants"][0]["collectives"][0]["busbw_GBps"] / 8))' <<<"$OUT")
run_cmd "$DPUSIM" validate --only nccl-ndr-ring
expect_out "^nccl-ndr-ring +busbw_GBps@8GiB +${WANT//./\\.} +47 " "per NIC: run's bus bandwidth / 8 = $WANT GB/s"
expect_out '^nccl rows: mean absolute error' "the collective rows' summary line"

# perftest's units: MB/s of 2^20 bytes (MBps@) and 10^9 bits/s (Gbps@),
# from the p2p row's bandwidth as dpusim run reports it.
run_cmd "$DPUSIM" run tests/validation/perftest-cx6-write-bw.yaml --json
WANT=$(python3 -c 'import json,sys; print("%.4g" % (json.load(sys.stdin)["variants"][0]["collectives"][0]["algbw_GBps"] * 1e9 / 2**20))' <<<"$OUT")
run_cmd "$DPUSIM" validate --only perftest-cx6-bw-8m
RE=$(sed 's/[.+]/\\&/g' <<<"$WANT")
expect_out "^perftest-cx6-bw-8m +MBps@8MiB +$RE +2\.332e\+04 " "MB/s of 2^20 bytes: $WANT"
run_cmd "$DPUSIM" run tests/validation/perftest-cx7-gdr-write-bw.yaml --json
WANT=$(python3 -c 'import json,sys; print("%.4g" % (json.load(sys.stdin)["variants"][0]["collectives"][0]["algbw_GBps"] * 8))' <<<"$OUT")
run_cmd "$DPUSIM" validate --only perftest-cx7-gdr-bw
expect_out "^perftest-cx7-gdr-bw +Gbps@8MiB +${WANT//./\\.} +392 " "Gb/s of 10^9 bits: $WANT"
expect_out '^perftest rows: mean absolute error' "the perftest rows' summary line"

run_cmd "$DPUSIM" validate --cases tests/data/validate/cases-bad.yaml
expect_rc 2 "malformed cases are bad input"
expect_err "cases-bad.yaml:[0-9]+:[0-9]+: validation case needs 'variant'" "missing key named with its place"
expect_err "'published' must be a number, not 'lots'" "bad number named"
expect_err "cases-bad.yaml:7:10: 'per' must be a finite number of at least 1, not '0'" "bad per named at its value"
expect_err "cases-bad.yaml:14:5: unknown key 'pre' in a validation case" "a misspelt key is refused, not ignored"
expect_err "cases-bad.yaml:20:16: 'published' must be a (finite )?number( above 0)?, not 'nan'" "published nan refused"
expect_err "cases-bad.yaml:21:16: 'tolerance' must be a fraction above 0% and at most 100%, such as 15%, not '1e308%'" "a tolerance that passes anything refused"
expect_err "cases-bad.yaml:22:10: 'per' must be a finite number of at least 1, not 'inf'" "per inf refused"
expect_err "cases-bad.yaml:28:16: 'published' must be a finite number above 0, not '0'" "published 0 refused"
expect_err "cases-bad.yaml:29:16: 'tolerance' must be a fraction above 0% and at most 100%, such as 15%, not '-5%'" "a negative tolerance refused"
expect_err "cases-bad.yaml:34:13: unknown metric 'tflops_per_gp' \(did you mean 'tflops_per_gpu'\?\)" "a misspelt metric named at its value, before any run"
expect_err "cases-bad.yaml:41:13: metric 'latency@2B': a row's figure is busbw_GBps@SIZE" "an unknown row figure refused"
expect_err "cases-bad.yaml:48:13: metric 'time_us@two': expected a size in bytes" "a row's bad size refused"
if [ -z "$OUT" ]; then ok "malformed cases print no table"; else not_ok "malformed cases printed: ${OUT:0:200}"; fi

run_cmd "$DPUSIM" validate --cases tests/data/validate/cases-norun.yaml
expect_rc 2 "a case that cannot run is bad input"
expect_err "cases-norun.yaml:4:5: validation case 'no-such-variant' could not run: no variant 'nope' in the report" "and named with its place on stderr"
expect_out "^no-such-variant .* failed: no variant 'nope'" "its table row says why"

# A case's scenario given as an absolute path is that file (it was joined
# to the cases file's folder: .//abs/path).
sed "s|scenario: perftest-cx6-write-lat.yaml|scenario: $PWD/tests/validation/perftest-cx6-write-lat.yaml|" \
	tests/validation/cases.yaml >"$E2E_TMP/abs-cases.yaml"
run_cmd "$DPUSIM" validate --cases "$E2E_TMP/abs-cases.yaml" --only perftest-cx6-lat-2b
if [ "$RC" -le 1 ]; then ok "a case's absolute scenario path runs (exit $RC)"
else not_ok "a case's absolute scenario path: exit $RC"; fi
expect_out '^perftest-cx6-lat-2b +time_us@2B +[0-9.]+ +1\.87 ' "the absolute-path case's row has a prediction"

run_cmd "$DPUSIM" validate --cases "$E2E_TMP/none.yaml"
expect_rc 2 "missing cases file"
run_cmd "$DPUSIM" validate --bogus
expect_rc 2 "unknown option"

# A case whose scenario's path is past the limit says so (the name was cut
# and the cut one looked up).
python3 -c "
print('cases:\n  - name: x\n    scenario: ' + 'q' * 9000 + '.yaml\n    variant: v\n'
      '    metric: tflops_per_gpu\n    published: 1\n    tolerance: 15%\n    group: g\n    source: s')" \
	>"$E2E_TMP/long-case.yaml"
run_cmd "$DPUSIM" validate --cases "$E2E_TMP/long-case.yaml"
expect_out "^x +tflops_per_gpu .* failed: scenario 'q+ \[\.\.\. [0-9]+ bytes left out \.\.\.\] q+\.yaml': past the path limit$" \
	"a case's scenario past the path limit, said"
finish
