# dpusim import / dpusim runs: store reports, list and filter them, bad input.
. tests/e2e/lib.sh
DB=$E2E_TMP/r.db

run_cmd "$DPUSIM" runs --db "$DB"
expect_rc 2 "listing a missing database"
expect_err 'r.db: no results database' "missing database is named"
[ ! -e "$DB" ] && ok "listing does not create a database" || not_ok "listing created $DB"

run_cmd "$DPUSIM" import tests/data/report-sim.json tests/data/report-hw.json --db "$DB"
expect_rc 0 "import two reports"
expect_out '^stored tests/data/report-hw.json as run 2$' "import reports run ids"

run_cmd "$DPUSIM" runs --db "$DB"
expect_rc 0 "runs"
expect_out '^2 +[0-9T:-]+Z +hw +fixture-8xh100 +- +42  baseline=1 dpu=1.209 dpu-nocrypto=1.219$' "newest run first, with variants and speedups"
expect_out '^1 +[0-9T:-]+Z +sim +fixture-8xh100 ' "older run listed"

run_cmd "$DPUSIM" runs --db "$DB" --variant dpu-nocrypto
expect_rc 0 "runs --variant"
[ "$(grep -c '^[0-9]' <<<"$OUT")" -eq 1 ] && ok "--variant keeps one run" || not_ok "--variant: $OUT"

run_cmd "$DPUSIM" runs --db "$DB" --limit 1
[ "$(grep -c '^[0-9]' <<<"$OUT")" -eq 1 ] && ok "--limit 1 keeps one run" || not_ok "--limit: $OUT"

run_cmd "$DPUSIM" runs --db "$DB" --scenario nosuch
expect_rc 0 "runs --scenario with no match"
expect_out 'no stored runs match' "no match is said"

printf '{"schema": "dpusim-report/1"}\n' > "$E2E_TMP/bad.json"
run_cmd "$DPUSIM" import tests/data/report-bench.json "$E2E_TMP/bad.json" --db "$DB"
expect_rc 2 "import stops at a bad report"
expect_err "bad.json:1:1: 'report' lacks required key 'source'" "bad report error has file:line:col"
run_cmd "$DPUSIM" runs --db "$DB"
[ "$(grep -c '^[0-9]' <<<"$OUT")" -eq 3 ] && ok "reports before the bad one stay stored, the bad one is not" || not_ok "after bad import: $OUT"

# One run per key: importing a stored report again stores nothing and says so.
run_cmd "$DPUSIM" import tests/data/report-sim.json --db "$DB"
expect_rc 0 "importing a stored report again"
expect_out '^tests/data/report-sim.json: already stored as run 1 \(same scenario, file hash, point, seed and source\), not stored again$' "says it is already stored"
[ "$(sqlite3 "$DB" "SELECT count(*) FROM runs")" = 3 ] && ok "still 3 runs" || not_ok "runs: $(sqlite3 "$DB" "SELECT count(*) FROM runs")"

# The default database, results/dpusim.db, gets its folder created.
ABS=$(cd "$(dirname "$DPUSIM")" && pwd)/dpusim
mkdir "$E2E_TMP/cwd"
(cd "$E2E_TMP/cwd" && "$ABS" import "$OLDPWD/tests/data/report-sim.json" >/dev/null && "$ABS" runs) >"$E2E_TMP/out" 2>&1
grep -q '^1 .* fixture-8xh100 ' "$E2E_TMP/out" && [ -f "$E2E_TMP/cwd/results/dpusim.db" ] \
	&& ok "default database results/dpusim.db is created and listed" || not_ok "default database: $(cat "$E2E_TMP/out")"

# Concurrent writers creating one new database (import, sweep and run --db
# share db_open): all succeed. The schema version was read outside the write
# lock and the losers failed on "table runs already exists".
bad=0
for round in 1 2 3; do
	rm -f "$E2E_TMP/c.db"
	pids=()
	for f in report-sim.json report-hw.json report-bench.json report-sim.json; do
		"$DPUSIM" import "tests/data/$f" --db "$E2E_TMP/c.db" >/dev/null 2>>"$E2E_TMP/c.err" & pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
done
[ $bad = 0 ] && ok "4 concurrent imports into a new database all succeed (3 rounds)" ||
	not_ok "$bad of 12 concurrent imports failed: $(head -2 "$E2E_TMP/c.err")"

# merge: shards join without duplicates, twice is harmless
"$DPUSIM" import tests/data/report-sim.json --db "$E2E_TMP/s1.db" >/dev/null
"$DPUSIM" import tests/data/report-hw.json tests/data/report-sim.json --db "$E2E_TMP/s2.db" >/dev/null
run_cmd "$DPUSIM" merge "$E2E_TMP/m.db" "$E2E_TMP/s1.db" "$E2E_TMP/s2.db"
expect_rc 0 "merge two shards"
expect_out 's2.db: 1 runs added, 1 already in' "the run in both shards is stored once"
run_cmd "$DPUSIM" merge "$E2E_TMP/m.db" "$E2E_TMP/s2.db"
expect_out 's2.db: 0 runs added, 2 already in' "merging again adds nothing"
run_cmd "$DPUSIM" runs --db "$E2E_TMP/m.db"
[ "$(grep -c '^[0-9]' <<<"$OUT")" -eq 2 ] && ok "merged database holds two runs" || not_ok "merged: $OUT"
# --digest: same results, same digest, whatever the storing order
"$DPUSIM" import tests/data/report-sim.json tests/data/report-hw.json --db "$E2E_TMP/o1.db" >/dev/null
run_cmd "$DPUSIM" runs --db "$E2E_TMP/o1.db" --digest
D1=$OUT
run_cmd "$DPUSIM" runs --db "$E2E_TMP/m.db" --digest
expect_out '^runs=2 sha256=[0-9a-f]{64}$' "runs --digest prints the run count and a SHA-256"
[ "$OUT" = "$D1" ] && ok "merged shards and a direct import have the same digest" || not_ok "digests: $OUT vs $D1"

# A database this user cannot write (another user's file in another user's
# folder, as on a read-only mount) is read by runs, plot and merge (as a
# source): they once failed on "attempt to write a readonly database".
# Root ignores file modes, so as root the commands run as nobody (setpriv).
as_other() {
	if [ "$(id -u)" = 0 ]; then setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; else "$@"; fi
}
RO=$E2E_TMP/ro OUTD=$E2E_TMP/ro-out
mkdir -p "$RO" "$OUTD/bin"
cp "$DPUSIM" "$OUTD/bin/dpusim"  # a checkout under /root is not nobody's to run
"$DPUSIM" sweep tests/data/sweep-small.yaml --shard 0/4 --db "$RO/ro.db" >/dev/null 2>&1
chmod 711 "$E2E_TMP"; chmod 777 "$OUTD"; chmod 444 "$RO/ro.db"; chmod 555 "$RO"
RODPUSIM=$OUTD/bin/dpusim
run_cmd as_other "$RODPUSIM" runs --db "$RO/ro.db"
expect_rc 0 "runs reads a database it cannot write"
expect_out '^2 .* sweep-small +cluster.nodes=8,workload.collective.algo=ring ' "and lists its runs"
run_cmd as_other "$RODPUSIM" runs --db "$RO/ro.db" --digest
expect_out '^runs=2 sha256=' "runs --digest reads it"
run_cmd as_other "$RODPUSIM" plot "$RO/ro.db" --kind capacity --metric iteration_s -o "$OUTD/cap.svg"
expect_rc 0 "plot --kind capacity reads it"
run_cmd as_other "$RODPUSIM" merge "$OUTD/m.db" "$RO/ro.db"
expect_rc 0 "merge takes it as a source"
expect_out 'ro.db: 2 runs added' "and copies its runs"
run_cmd as_other "$RODPUSIM" import tests/data/report-hw.json --db "$RO/ro.db"
expect_rc 2 "import into it is refused"
expect_err 'ro.db: cannot write to the database' "with a message that says why"
[ ! -e "$RO/ro.db-wal" ] && [ ! -e "$RO/ro.db-shm" ] && [ "$(ls "$RO")" = ro.db ] &&
	ok "reading left nothing next to it" || not_ok "files: $(ls "$RO")"
chmod 755 "$RO"; chmod 644 "$RO/ro.db"
# Where the reader may write, reading leaves no -wal/-shm behind either (a
# read-only connection cannot remove them when it closes).
run_cmd "$DPUSIM" runs --db "$RO/ro.db"
run_cmd "$DPUSIM" plot "$RO/ro.db" --kind capacity --metric iteration_s -o "$OUTD/cap2.svg"
[ "$(ls "$RO")" = ro.db ] && ok "runs and plot on a writable database leave nothing next to it" ||
	not_ok "files: $(ls "$RO")"

run_cmd "$DPUSIM" merge "$E2E_TMP/m.db" "$E2E_TMP/nosuch.db"
expect_rc 2 "merging a missing database"
run_cmd "$DPUSIM" merge "$E2E_TMP/m.db"
expect_rc 2 "merge without sources"

run_cmd "$DPUSIM" runs --db tests/data/report-sim.json
expect_rc 2 "a report is not a database"
expect_err 'report-sim.json: not a results database' "says so"

run_cmd "$DPUSIM" runs --db "$DB" --limit 0
expect_rc 2 "--limit 0 is refused"
run_cmd "$DPUSIM" runs --db
expect_rc 2 "--db without a value"
run_cmd "$DPUSIM" import --db "$DB"
expect_rc 2 "import without files"

# A NULL where the schema says NOT NULL (a record damaged on disk reads as
# its bytes say, whatever the schema): said, status 2, for runs and plot
# (plot handed it to strdup, runs printed "(null)").
cp "$DB" "$E2E_TMP/null.db"
sqlite3 "$E2E_TMP/null.db" "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql =
  replace(sql, ' scenario TEXT NOT NULL', ' scenario TEXT') WHERE name = 'runs';"
sqlite3 "$E2E_TMP/null.db" "UPDATE runs SET scenario = NULL WHERE id = 3" # the newest
run_cmd "$DPUSIM" runs --db "$E2E_TMP/null.db"
expect_rc 2 "runs: a run without a scenario"
expect_err 'null.db: run 3 has no scenario \(a damaged database' "runs names the run and the column"
run_cmd "$DPUSIM" plot "$E2E_TMP/null.db" --kind breakdown -o "$E2E_TMP/null.svg"
expect_rc 2 "plot: a run without a scenario"
expect_err 'null.db: run 3 has no scenario' "plot names the run and the column"
[ ! -e "$E2E_TMP/null.svg" ] && ok "plot writes nothing" || not_ok "plot wrote null.svg"

finish
