# dpusim validate: a published row within tolerance, the exit status when a
# case is outside it, and malformed case files.
. tests/e2e/lib.sh

run_cmd "$DPUSIM" validate --only megatron-18.4b
expect_rc 0 "Megatron-LM 18.4B row (Narayanan et al., SC21, Table 1) within 15%"
expect_out '^megatron-18.4b +tflops_per_gpu +[0-9.]+ +135 +[-+][0-9.]+% +15% +ok$' "its row"
expect_out 'mean absolute error' "the Megatron summary line"

run_cmd "$DPUSIM" validate --cases tests/data/validate/cases-mixed.yaml
expect_rc 1 "a case outside its tolerance is a finding (exit 1)"
expect_out '^close .* ok$' "the close case passes"
expect_out '^far .* OUTSIDE$' "the far case is flagged"

run_cmd "$DPUSIM" validate --cases tests/data/validate/cases-bad.yaml
expect_rc 2 "malformed cases are bad input"
expect_err "cases-bad.yaml:[0-9]+:[0-9]+: validation case needs 'variant'" "missing key named with its place"
expect_err "'published' must be a number, not 'lots'" "bad number named"

run_cmd "$DPUSIM" validate --cases "$E2E_TMP/none.yaml"
expect_rc 2 "missing cases file"
run_cmd "$DPUSIM" validate --bogus
expect_rc 2 "unknown option"
finish
