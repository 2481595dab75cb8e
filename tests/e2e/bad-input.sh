# Malformed scenarios: every file in tests/bad/ must fail `dpusim check` with
# exit status 2 and exactly the stderr lines in its .expect file; plus the
# inputs that cannot live in the repository (a directory, a missing path, a
# 50 MB file generated here) and a stdout that stays empty.
. tests/e2e/lib.sh

n=0
for f in tests/bad/*.yaml; do
	exp=${f%.yaml}.expect
	n=$((n + 1))
	if [ ! -f "$exp" ]; then not_ok "$f has no $exp"; continue; fi
	run_cmd "$DPUSIM" check "$f"
	if [ "$RC" -ne 2 ]; then not_ok "$f: exit $RC, expected 2"; continue; fi
	if [ -n "$OUT" ]; then not_ok "$f: printed on stdout: ${OUT:0:200}"; continue; fi
	if [ "$ERR" = "$(cat "$exp")" ]; then ok "$f"
	else not_ok "$f: stderr differs from $exp"; diff <(echo "$ERR") "$exp" | head -10; fi
done
if [ "$n" -ge 40 ]; then ok "corpus holds $n malformed scenarios (at least 40)"
else not_ok "corpus holds only $n malformed scenarios"; fi

mkdir -p "$E2E_TMP/adir.yaml"
run_cmd "$DPUSIM" check "$E2E_TMP/adir.yaml"
expect_rc 2 "a directory"
expect_err "^$E2E_TMP/adir.yaml: is a directory, expected a YAML file\$" "a directory is named as such"

run_cmd "$DPUSIM" check "$E2E_TMP/no-such-file.yaml"
expect_rc 2 "a non-existent path"
expect_err "^$E2E_TMP/no-such-file.yaml: cannot open: No such file or directory\$" "a missing file is named"

# 50 MB: a valid start, then comment lines; refused by size before parsing.
{ cat scenarios/demo.yaml; yes '# padding padding padding padding padding padding padding' | head -c 52428800; } >"$E2E_TMP/big.yaml"
run_cmd "$DPUSIM" check "$E2E_TMP/big.yaml"
expect_rc 2 "a 50 MB file"
size=$(stat -c %s "$E2E_TMP/big.yaml")
expect_err "^$E2E_TMP/big.yaml: file too large \\($size bytes, at most 4194304\\)\$" "a 50 MB file is refused by size"
rm -f "$E2E_TMP/big.yaml"

run_cmd "$DPUSIM" check
expect_rc 2 "check without a file"
expect_err "no scenario file given" "check without a file says so"

run_cmd "$DPUSIM" check tests/bad/empty.yaml scenarios/demo.yaml
expect_rc 2 "check with two files"

run_cmd "$DPUSIM" run tests/bad/many-errors.yaml --dump
expect_rc 2 "run --dump on a bad scenario"
if [ -z "$OUT" ]; then ok "run --dump prints nothing on stdout for a bad scenario"
else not_ok "run --dump printed on stdout for a bad scenario"; fi

run_cmd "$DPUSIM" check scenarios/demo.yaml --profile tests/bad/base/valid.yaml
expect_rc 2 "--profile with a file that is not a profile"
expect_err "tests/bad/base/valid.yaml:2:1: missing 'kind'" "--profile errors are positioned"

finish
