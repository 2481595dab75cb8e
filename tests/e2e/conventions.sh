# One convention for outputs and databases (dpusim --help says it): -o is a
# FILE when a command writes one and a DIR when it writes several (calibrate
# -o DIR --name NAME); --db DB names the database runs are stored in, and a
# database a command reads is its argument (runs DB). The older spellings
# (runs --db, merge OUT IN..., calibrate -o DIR/NAME.yaml) keep working;
# calibrate.sh and runs.sh use them throughout.
. tests/e2e/lib.sh

run_cmd "$DPUSIM" --help
expect_out '^conventions: -o names what a command writes' "dpusim --help states the convention"

DB=$E2E_TMP/a.db
run_cmd "$DPUSIM" run tests/data/train-small.yaml --db "$DB"
expect_rc 0 "a run stored with --db"
run_cmd "$DPUSIM" runs "$DB"
expect_rc 0 "runs DB: the database as its argument"
positional=$OUT
run_cmd "$DPUSIM" runs --db "$DB"
expect_rc 0 "runs --db DB: the older spelling"
if [ -n "$OUT" ] && [ "$OUT" = "$positional" ]; then ok "both spellings list the same runs"
else not_ok "runs DB and runs --db DB differ"; fi
run_cmd "$DPUSIM" runs "$DB" --db "$E2E_TMP/other.db"
expect_rc 2 "two different databases"
expect_err "one database at a time" "are refused by name"

run_cmd "$DPUSIM" merge --db "$E2E_TMP/m1.db" "$DB"
expect_rc 0 "merge --db OUT IN"
run_cmd "$DPUSIM" merge "$E2E_TMP/m2.db" "$DB"
expect_rc 0 "merge OUT IN, the older spelling"
d1=$("$DPUSIM" runs "$E2E_TMP/m1.db" --digest)
d2=$("$DPUSIM" runs "$E2E_TMP/m2.db" --digest)
if [ -n "$d1" ] && [ "$d1" = "$d2" ] && [ "$d1" = "$("$DPUSIM" runs "$DB" --digest)" ]; then
	ok "both merges hold the source's runs ($d1)"
else not_ok "merge spellings differ: '$d1' vs '$d2'"; fi

TCP=tests/data/hw-bench-tcp.json
mkdir -p "$E2E_TMP/cal"
run_cmd "$DPUSIM" calibrate "$TCP" -o "$E2E_TMP/cal" --name lab
expect_rc 0 "calibrate -o DIR --name NAME"
if [ -f "$E2E_TMP/cal/lab-host-costs.yaml" ]; then ok "writes DIR/NAME-KIND.yaml"
else not_ok "no $E2E_TMP/cal/lab-host-costs.yaml: $(ls "$E2E_TMP/cal")"; fi
run_cmd "$DPUSIM" calibrate "$TCP" -o "$E2E_TMP/cal/"
expect_rc 0 "calibrate -o DIR/ without --name"
if [ -f "$E2E_TMP/cal/hw-bench-tcp-host-costs.yaml" ]; then ok "the name defaults to the bench file's"
else not_ok "default name: $(ls "$E2E_TMP/cal")"; fi
run_cmd "$DPUSIM" calibrate "$TCP" -o "$E2E_TMP/cal/old.yaml"
expect_rc 0 "calibrate -o DIR/NAME.yaml, the older spelling"
if [ -f "$E2E_TMP/cal/old-host-costs.yaml" ]; then ok "still writes NAME-KIND.yaml"
else not_ok "old spelling: $(ls "$E2E_TMP/cal")"; fi
before=$(ls "$E2E_TMP/cal" | wc -l)
run_cmd "$DPUSIM" calibrate "$TCP" -o "$E2E_TMP/cal/x.yaml" --name y
expect_rc 2 "-o NAME.yaml with --name"
expect_err "names the profiles already" "says which to drop"
run_cmd "$DPUSIM" calibrate "$TCP" -o "$E2E_TMP/none" --name y
expect_rc 2 "-o naming no folder"
expect_err "^dpusim: error: -o '$E2E_TMP/none': not a folder" "is refused before fitting"
# --name is the profiles' name, checked as one: '../x' wrote DIR/../x-KIND.yaml,
# outside the folder (tools/fuzz-cli). A bench file whose name is no profile
# name asks for --name.
mkdir -p "$E2E_TMP/cal2"
for n in ../x a/b "" "$(printf 'n%.0s' {1..41})"; do
	run_cmd "$DPUSIM" calibrate "$TCP" -o "$E2E_TMP/cal2" --name "$n"
	expect_rc 2 "--name '${n:0:12}' is refused"
	expect_err "^dpusim: error: --name '$n': the name must be 1 to 40 letters" "naming --name"
done
cp "$TCP" "$E2E_TMP/bench+1.json"
run_cmd "$DPUSIM" calibrate "$E2E_TMP/bench+1.json" -o "$E2E_TMP/cal2"
expect_rc 2 "a bench file named 'bench+1' gives no profile name"
expect_err "bench\\+1.json': the bench file's name is no profile name .*give --name NAME" "asks for --name"
if [ -z "$(ls -A "$E2E_TMP/cal2")" ] && ! ls "$E2E_TMP"/x-* >/dev/null 2>&1; then
	ok "nothing written, in the folder or beside it"
else not_ok "a refused --name wrote: $(ls "$E2E_TMP/cal2" "$E2E_TMP"/x-* 2>&1)"; fi
if [ "$(ls "$E2E_TMP/cal" | wc -l)" -eq "$before" ]; then ok "refusals write nothing"
else not_ok "a refused calibrate wrote files"; fi

finish
