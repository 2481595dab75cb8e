# dpusim sweep: database contents after a sweep match the reports; a second
# run skips what is stored; a sweep killed with SIGKILL leaves a consistent
# database that a rerun completes; --jobs, --shard + merge and mpirun store
# the same rows as a serial sweep.
# A sweep, worker or rank is killed or stopped where the test hook
# DPUSIM_TEST_SWEEP_STOP=N stops it (tools/sweep.h): as it starts point N,
# so what it has stored and what it holds are known, whatever the load.
# (Before, the test polled a slow sweep's database and killed whatever
# held a point then: 10,000-iteration points to outlast the polling, most
# of this test's time, and a race all the same.)
. tests/e2e/lib.sh
SCN=tests/data/sweep-small.yaml    # 8 points, 2 variants, 3 sizes each
# Open MPI keeps allocations until exit by design: under the sanitizer build
# the leak check ignores its libraries (as for dpusim-hw; dpusim's own code is
# not suppressed), with full stacks so the suppressions can match.
MPIRUN=(timeout -k 10 120 env "${MPI_ENV[@]}"
	LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/e2e/hw-lsan.supp:print_suppressions=0}"
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
	mpirun --allow-run-as-root --oversubscribe -np 3)

sql() { sqlite3 -batch "$1" "$2"; }
# hook_pid FILE: the pid of the process that the test hook stopped, from
# its line in FILE (a stderr being written), once it is there.
hook_pid() {
	local p
	for _ in $(seq 1 2400); do  # at most 120 s: a bound against a hang, not a timing
		p=$(sed -n 's/^dpusim: test hook: process \([0-9]*\) stops at point .*/\1/p' "$1" 2>/dev/null)
		[ -n "$p" ] && { echo "$p"; return 0; }
		sleep 0.05
	done
	return 1
}
# Everything a point stores that a worker could get wrong, in a fixed order:
# every metric (full precision) and every collective of every variant.
rows() {
	sql "$1" "SELECT r.point, r.seed, r.scenario_sha256, v.idx, v.name, v.speedup, m.name,
	            printf('%!.17g|%!.17g|%!.17g', m.value, m.p50, m.p99)
	          FROM runs r JOIN variants v ON v.run_id = r.id JOIN metrics m ON m.variant_id = v.id
	          ORDER BY 1, 4, 7;
	          SELECT r.point, v.name, c.idx, c.op, c.algo, c.ranks, c.bytes,
	            printf('%!.17g|%!.17g|%!.17g', c.time_s, c.algbw_GBps, c.busbw_GBps)
	          FROM runs r JOIN variants v ON v.run_id = r.id JOIN collectives c ON c.variant_id = v.id
	          ORDER BY 1, 2, 3;"
}
same_rows() {  # same_rows A.db DESCRIPTION
	if [ "$(rows "$1")" = "$(rows "$E2E_TMP/serial.db")" ]; then ok "$2"
	else not_ok "$2"; diff <(rows "$E2E_TMP/serial.db") <(rows "$1") | head -5; fi
}
# run of a sweep file simulates the file as written, and says so: a newcomer
# who ran the capacity sweep with run got one point and no word of the rest.
run_cmd "$DPUSIM" run "$SCN" --json
expect_rc 0 "run of a sweep file"
expect_err "^dpusim: note: '$SCN' has a sweep of 8 points; run simulates the file as written, 'dpusim sweep $SCN --db FILE' runs the points\$" \
	"says it runs the file as written, how many points the sweep has and how to run them"

# A stored point is whole: 2 variants, each with 3 collectives and iteration_s.
consistent() {  # consistent DB DESCRIPTION
	local ic half
	ic=$(sql "$1" "PRAGMA integrity_check")
	half=$(sql "$1" "SELECT count(*) FROM runs r WHERE
	        (SELECT count(*) FROM variants v WHERE v.run_id = r.id) != 2 OR
	        (SELECT count(*) FROM variants v JOIN collectives c ON c.variant_id = v.id
	         WHERE v.run_id = r.id) != 6 OR
	        (SELECT count(*) FROM variants v JOIN metrics m ON m.variant_id = v.id
	         WHERE v.run_id = r.id AND m.name = 'iteration_s') != 2")
	[ "$ic" = ok ] && [ "$half" = 0 ] && ok "$2" || not_ok "$2: integrity '$ic', $half partial points"
}

# ---- serial sweep: row counts, values match the reports ----
run_cmd "$DPUSIM" sweep "$SCN" --db "$E2E_TMP/serial.db" -o "$E2E_TMP/rep"
expect_rc 0 "serial sweep"
expect_out "^sweep 'sweep-small': 8 points; 8 run, 0 skipped \(already stored\), 0 failed" "summary counts 8 points run"
expect_err '^sweep: point 8/8 stored as run 8 \(cluster.nodes=16,workload.collective.algo=tree\)' "plain progress lines off a terminal"
[ "$(sql "$E2E_TMP/serial.db" "SELECT count(*) FROM runs; SELECT count(*) FROM variants;
      SELECT count(*) FROM collectives; SELECT count(DISTINCT point) FROM runs")" = "$(printf '8\n16\n48\n8')" ] &&
	ok "8 runs, 16 variants, 48 collectives, 8 distinct points" || not_ok "row counts: $(sql "$E2E_TMP/serial.db" "SELECT count(*) FROM runs")"
consistent "$E2E_TMP/serial.db" "every stored point is whole"
sha=$(sha256sum "$SCN" | cut -d' ' -f1)
[ "$(sql "$E2E_TMP/serial.db" "SELECT DISTINCT scenario_sha256 || ' ' || seed FROM runs")" = "$sha 7" ] &&
	ok "runs carry the file's SHA-256 and the seed" || not_ok "sha/seed: $(sql "$E2E_TMP/serial.db" "SELECT DISTINCT scenario_sha256, seed FROM runs")"
# Each report file (-o) is the stored report, byte for byte, and its numbers
# are the rows of the metrics and collectives tables.
mismatch=0
for k in 0 1 2 3 4 5 6 7; do
	f=$E2E_TMP/rep/sweep-small.p$k.json
	stored=$(sql "$E2E_TMP/serial.db" "SELECT report FROM runs r WHERE
	          json_extract(report, '\$.info.sweep_index') = '$k'")
	[ "$stored" = "$(cat "$f")" ] || { mismatch=1; echo "   point $k: stored report differs from $f"; }
	point=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["scenario"]["point"])' "$f")
	want=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
for v in r["variants"]:
    print("%s|%r" % (v["name"], v["metrics"]["iteration_s"]["mean"]))
    for c in v["collectives"]:
        print("%s|%d|%r|%r" % (v["name"], c["bytes"], c["time_s"], c["busbw_GBps"]))' "$f")
	got=$(sql "$E2E_TMP/serial.db" "SELECT v.name || '|' || printf('%!.17g', m.value) FROM runs r
	        JOIN variants v ON v.run_id = r.id JOIN metrics m ON m.variant_id = v.id
	        WHERE r.point = '$point' AND m.name = 'iteration_s' ORDER BY v.idx" |
	      python3 -c 'import sys
for l in sys.stdin: n, x = l.strip().split("|"); print("%s|%r" % (n, float(x)))')
	want_m=$(grep -v '|.*|' <<<"$want")
	[ "$got" = "$want_m" ] || { mismatch=1; echo "   point $k ($point): metrics '$got' vs report '$want_m'"; }
	got=$(sql "$E2E_TMP/serial.db" "SELECT v.name || '|' || c.bytes || '|' || printf('%!.17g', c.time_s) || '|' ||
	        printf('%!.17g', c.busbw_GBps) FROM runs r JOIN variants v ON v.run_id = r.id
	        JOIN collectives c ON c.variant_id = v.id WHERE r.point = '$point' ORDER BY v.idx, c.idx" |
	      python3 -c 'import sys
for l in sys.stdin: n, b, t, w = l.strip().split("|"); print("%s|%s|%r|%r" % (n, b, float(t), float(w)))')
	[ "$got" = "$(grep '|.*|.*|' <<<"$want")" ] || { mismatch=1; echo "   point $k ($point): collectives differ"; }
done
[ $mismatch = 0 ] && ok "stored reports, metrics and collectives match the 8 report files" || not_ok "database and reports differ"

# ---- resume: nothing left to run ----
run_cmd "$DPUSIM" sweep "$SCN" --db "$E2E_TMP/serial.db"
expect_rc 0 "second sweep"
expect_out "8 points; 0 run, 8 skipped \(already stored\), 0 failed" "second sweep skips the 8 stored points"
[ "$(sql "$E2E_TMP/serial.db" "SELECT count(*) FROM runs")" = 8 ] && ok "still 8 runs" || not_ok "resume added runs"

# ---- killed mid-way: consistent, and a rerun completes it ----
# Points run in order: stopped as it starts point 3, the sweep has stored 3.
db=$E2E_TMP/killed.db
DPUSIM_TEST_SWEEP_STOP=3 "$DPUSIM" sweep "$SCN" --db "$db" >/dev/null 2>"$E2E_TMP/k.err" &
pid=$!
if victim=$(hook_pid "$E2E_TMP/k.err") && [ "$victim" = $pid ]; then
	kill -9 $pid
	wait $pid 2>/dev/null
	# The stored points are in the file itself, not only in its -wal,
	# which a copy or a move of the file alone leaves behind (it held
	# none of them before each store was checkpointed).
	mkdir -p "$E2E_TMP/alone" && cp "$db" "$E2E_TMP/alone/killed.db"
	alone=$(sql "$E2E_TMP/alone/killed.db" "SELECT count(*) FROM runs")
	[ "$alone" = 3 ] && ok "the killed sweep's file alone holds its 3 stored points" ||
		not_ok "the file alone holds '$alone' of the 3 stored points"
	before=$(sql "$db" "SELECT count(*) FROM runs")
	[ "$before" = 3 ] && ok "killed holding point 3, after 3 of 8 points stored" ||
		not_ok "killed at point 3 with $before points stored"
	consistent "$db" "the killed sweep's database is consistent, no half point"
	run_cmd "$DPUSIM" sweep "$SCN" --db "$db"
	expect_rc 0 "rerun of the killed sweep"
	expect_out "8 points; 5 run, 3 skipped" "rerun runs only what is missing"
	[ "$(sql "$db" "SELECT count(*) FROM runs")" = 8 ] && ok "rerun completes all 8 points" || not_ok "after rerun: $(sql "$db" "SELECT count(*) FROM runs") runs"
	consistent "$db" "completed database is consistent"
else
	not_ok "the sweep did not stop at point 3 (hook: '${victim:-}', sweep $pid): $(cat "$E2E_TMP/k.err")"
	kill -9 $pid 2>/dev/null
fi

# ---- --jobs 2: same rows ----
run_cmd "$DPUSIM" sweep "$SCN" --db "$E2E_TMP/jobs.db" --jobs 2
expect_rc 0 "sweep --jobs 2"
same_rows "$E2E_TMP/jobs.db" "--jobs 2 stores the same rows as the serial sweep"

# ---- two sweeps of one scenario into one database at once: each point once ----
db=$E2E_TMP/both.db
"$DPUSIM" sweep "$SCN" --db "$db" --jobs 2 >"$E2E_TMP/b1.out" 2>/dev/null & p1=$!
"$DPUSIM" sweep "$SCN" --db "$db" --jobs 2 >"$E2E_TMP/b2.out" 2>/dev/null & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
runs=$(sed -n 's/.*; \([0-9]*\) run, .*/\1/p' "$E2E_TMP/b1.out" "$E2E_TMP/b2.out" | awk '{ s += $1 } END { print s }')
[ $r1 = 0 ] && [ $r2 = 0 ] && [ "$runs" = 8 ] && ok "two sweeps at once: both succeed, 8 points run between them" ||
	not_ok "two sweeps: rc $r1 $r2, runs '$runs': $(cat "$E2E_TMP/b1.out" "$E2E_TMP/b2.out")"
same_rows "$db" "two sweeps at once store each point once, the rows of the serial sweep"

# ---- a --jobs worker killed: its point fails, the rest are stored ----
# The worker that gets point 5 stops there; killed, it takes point 5 with it.
db=$E2E_TMP/worker.db
DPUSIM_TEST_SWEEP_STOP=5 timeout 120 "$DPUSIM" sweep "$SCN" --db "$db" --jobs 2 >"$E2E_TMP/w.out" 2>"$E2E_TMP/w.err" &
pid=$!
victim=$(hook_pid "$E2E_TMP/w.err")
[ -n "$victim" ] && [ "$victim" != $pid ] && kill -9 "$victim"
wait $pid
RC=$? OUT=$(cat "$E2E_TMP/w.out") ERR=$(cat "$E2E_TMP/w.err")
expect_rc 2 "a sweep whose worker was killed"
expect_err "sweep worker $victim was killed by signal 9" "the lost worker is named, with the signal"
expect_out "8 points; 7 run, 0 skipped \(already stored\), 1 failed" "the other 7 points are stored"
[ "$(sql "$db" "SELECT count(*) FROM runs WHERE json_extract(report, '\$.info.sweep_index') = '5'")" = 0 ] &&
	ok "the lost point is point 5, the one the worker held" || not_ok "point 5 was stored"
consistent "$db" "the database stays consistent"
run_cmd "$DPUSIM" sweep "$SCN" --db "$db"
expect_out "8 points; 1 run, 7 skipped" "a rerun runs the lost point only"

# ---- the sweep killed alone: its workers end with it ----
# (timeout(1), a batch system's or a user's kill PID.) The worker holding
# point 1 is stopped there; once the sweep is killed, it gets a SIGTERM too
# and ends rather than compute its point on (before, it did, up to the
# pipe it writes into: a long point's minutes). The database holds what was
# stored, consistent.
db=$E2E_TMP/alone.db
DPUSIM_TEST_SWEEP_STOP=1 "$DPUSIM" sweep "$SCN" --db "$db" --jobs 2 >/dev/null 2>"$E2E_TMP/a.err" &
pid=$!
victim=$(hook_pid "$E2E_TMP/a.err")
killed_alone sweep $pid "$victim"
consistent "$db" "the killed sweep's database is consistent"

# ---- a --jobs worker stopped (SIGSTOP): its point times out, the sweep ends ----
# The worker that gets point 2 stops there, holding it; the sweep once
# waited for such a worker for ever. 4 s is about ten times a point here
# under the sanitizers (the other worker's points must not time out too:
# if one does on a loaded machine, the checks below still hold).
db=$E2E_TMP/stopped.db
run_cmd env DPUSIM_TEST_SWEEP_STOP=2 timeout 120 "$DPUSIM" sweep "$SCN" --db "$db" --jobs 2 --point-timeout 4s
victim=$(sed -n 's/^dpusim: test hook: process \([0-9]*\) stops at point 2$/\1/p' <<<"$ERR")
[ -n "$victim" ] && kill -KILL "$victim" 2>/dev/null  # only if the sweep did not
expect_rc 2 "a sweep with a stopped worker ends (exit 2, not a hang)"
expect_err "sweep worker ${victim:-?} did not answer within 4 s \(--point-timeout\) and was killed" "the stopped worker is named and killed"
n_run=$(sed -n 's/.*; \([0-9]*\) run, .*/\1/p' <<<"$OUT") n_failed=$(sed -n 's/.* \([0-9]*\) failed;.*/\1/p' <<<"$OUT")
[ "${n_failed:-0}" -ge 1 ] && [ $((n_run + n_failed)) = 8 ] && ok "its point failed ($n_run run, $n_failed failed)" ||
	not_ok "summary: $OUT"
consistent "$db" "the database stays consistent"
run_cmd "$DPUSIM" sweep "$SCN" --db "$db"
expect_out "8 points; $n_failed run, $n_run skipped" "a rerun retries the timed-out point(s) only"

# ---- shards + merge: same rows ----
run_cmd "$DPUSIM" sweep "$SCN" --db "$E2E_TMP/s0.db" --shard 0/2
expect_out "shard 0/2: 4 of them\); 4 run" "shard 0/2 takes 4 points"
run_cmd "$DPUSIM" sweep "$SCN" --db "$E2E_TMP/s1.db" --shard 1/2 --jobs 2
expect_out "shard 1/2: 4 of them\); 4 run" "shard 1/2 takes the other 4"
[ "$(sql "$E2E_TMP/s0.db" "SELECT group_concat(json_extract(report, '\$.info.sweep_index')) FROM runs")" = "0,2,4,6" ] &&
	ok "shard 0/2 holds points 0,2,4,6" || not_ok "shard 0/2 points"
run_cmd "$DPUSIM" merge "$E2E_TMP/merged.db" "$E2E_TMP/s0.db" "$E2E_TMP/s1.db" "$E2E_TMP/s0.db"
expect_rc 0 "merge the shards (one twice)"
same_rows "$E2E_TMP/merged.db" "merged shards hold the same rows as the serial sweep"
run_cmd "$DPUSIM" sweep "$SCN" --db "$E2E_TMP/merged.db"
expect_out "0 run, 8 skipped" "a sweep over the merged database finds every point"

# ---- mpirun -np 3: same rows ----
if command -v mpirun >/dev/null; then
	# the test hook at a point the shard does not hold: nothing stops, and
	# each rank names itself as it goes to MPI_Finalize
	run_cmd env DPUSIM_TEST_SWEEP_STOP=99 "${MPIRUN[@]}" -x DPUSIM_TEST_SWEEP_STOP "$DPUSIM" sweep \
		"$SCN" --db "$E2E_TMP/mpi.db"
	expect_rc 0 "mpirun -np 3 sweep"
	[ "$(grep -c '^dpusim: test hook: MPI rank [012] finalizes$' <<<"$ERR")" = 3 ] &&
		ok "every rank finalizes (the hook says so)" || not_ok "finalize lines: $ERR"
	[ "$(grep -c '^sweep .* 8 run' <<<"$OUT")" = 1 ] && ok "one summary (rank 0's)" || not_ok "summaries: $OUT"
	same_rows "$E2E_TMP/mpi.db" "mpirun -np 3 stores the same rows as the serial sweep"
	run_cmd "${MPIRUN[@]}" "$DPUSIM" sweep "$SCN" --db "$E2E_TMP/mpi.db" --jobs 2
	expect_rc 2 "--jobs under mpirun is refused"
	run_cmd "${MPIRUN[@]}" "$DPUSIM" sweep "$E2E_TMP/none.yaml" --db "$E2E_TMP/mpi.db"
	expect_rc 2 "under mpirun a missing scenario stops every rank (no hang)"
	# A rank stopped (SIGSTOP) holding a point: its point times out, the
	# other rank computes on, and rank 0 ends the job (MPI_Abort) rather than
	# wait in MPI_Finalize for ever. Shard 0/4 is points 0 and 4; rank 0
	# hands them out and computes none, and the rank that gets point 4
	# stops there. The rank with nothing left to do must not be in
	# MPI_Finalize when rank 0 aborts: Open MPI 4.1.4's mpirun then hung
	# (zombie ranks, SIGTERM ignored) or crashed in about 1 run in 4
	# (tools/sweep_mpi.c, release).
	db=$E2E_TMP/mpi-stop.db
	run_cmd env DPUSIM_TEST_SWEEP_STOP=4 "${MPIRUN[@]}" -x DPUSIM_TEST_SWEEP_STOP "$DPUSIM" sweep "$SCN" \
		--shard 0/4 --db "$db" --point-timeout 10s
	victim=$(sed -n 's/^dpusim: test hook: process \([0-9]*\) stops at point 4$/\1/p' <<<"$ERR")
	[ -n "$victim" ] && kill -KILL "$victim" 2>/dev/null
	expect_rc 2 "mpirun with a stopped rank ends (exit 2, not a hang)"
	expect_err "MPI rank [12] did not answer within 10 s \\(--point-timeout\\)" "the stopped rank is named"
	expect_err "ending the job with MPI_Abort" "rank 0 says it ends the job"
	grep -q "test hook: MPI rank .* finalizes" <<<"$ERR" &&
		not_ok "a rank went to MPI_Finalize before rank 0's MPI_Abort: $ERR" ||
		ok "no rank is in MPI_Finalize when rank 0 aborts"
	run_cmd "$DPUSIM" sweep "$SCN" --shard 0/4 --db "$db"
	expect_out "2 of them\\); [12] run, [01] skipped" "a rerun retries what the stopped rank held"
else
	not_ok "mpirun not found (tools/install-deps installs openmpi-bin)"
fi

# ---- progress bar on a terminal ----
if command -v script >/dev/null; then
	script -qec "$DPUSIM sweep $SCN --db $E2E_TMP/tty.db" /dev/null >"$E2E_TMP/tty.out" 2>&1
	grep -Eq $'\r\\[#*\\.*\\] 8/8 points  [0-9.]+ (us|ms|s) elapsed' "$E2E_TMP/tty.out" &&
		ok "a terminal gets a redrawn bar with points done and the time elapsed" || not_ok "bar: $(head -c 300 "$E2E_TMP/tty.out" | cat -v)"
fi

# ---- another seed is another result (last: it adds rows to serial.db) ----
run_cmd "$DPUSIM" sweep "$SCN" --db "$E2E_TMP/serial.db" --seed 8 --shard 1/4
expect_out "8 points \(shard 1/4: 2 of them\); 2 run, 0 skipped" "another seed is another result: not skipped"

# ---- list and mapping values: one label each, so resume and merge keep all ----
VALS=tests/data/sweep-values.yaml   # 4 points: 2 lists x 2 mappings
run_cmd "$DPUSIM" sweep "$VALS" --db "$E2E_TMP/v0.db" --shard 0/2
run_cmd "$DPUSIM" sweep "$VALS" --db "$E2E_TMP/v1.db" --shard 1/2
run_cmd "$DPUSIM" merge "$E2E_TMP/v.db" "$E2E_TMP/v0.db" "$E2E_TMP/v1.db"
expect_out 'v1.db: 2 runs added, 0 already in' "merge keeps the points of list and mapping values"
[ "$(sql "$E2E_TMP/v.db" "SELECT count(DISTINCT point) FROM runs")" = 4 ] &&
	ok "4 distinct point labels" || not_ok "labels: $(sql "$E2E_TMP/v.db" "SELECT point FROM runs")"
sql "$E2E_TMP/v.db" "SELECT point FROM runs" | grep -qx 'cluster.nodes=2,workload.collective.algo=ring,workload.collective.sizes=\[64KiB, 1MiB\],cluster.nic={profile: ConnectX-6-HDR, rdma_latency: 1.5us}' &&
	ok "a label is the values' canonical text (keys sorted)" || not_ok "labels: $(sql "$E2E_TMP/v.db" "SELECT point FROM runs")"
run_cmd "$DPUSIM" sweep "$VALS" --db "$E2E_TMP/v0.db"
expect_out '4 points; 2 run, 2 skipped' "resume runs the 2 points the shard did not, not 0"
# plot splits a label at the commas between keys, not inside a value
run_cmd "$DPUSIM" plot "$E2E_TMP/v.db" --kind capacity --metric iteration_s -o "$E2E_TMP/v.svg"
expect_rc 0 "plot --kind capacity of list and mapping values"
lines=$(grep -o '[a-z-]*, sizes=[^<]*' "$E2E_TMP/v.svg" | sort -u | wc -l)
[ "$lines" = 8 ] && ok "the plot has a line per variant and value pair (8)" || not_ok "plot lines: $lines"

# ---- bad input ----
run_cmd "$DPUSIM" sweep "$SCN" --shard 2/2 --db "$E2E_TMP/x.db"
expect_rc 2 "--shard 2/2 is refused"
expect_err "--shard wants I/N with 0 <= I < N, not '2/2'" "--shard error says what it wants"
run_cmd "$DPUSIM" sweep "$SCN" --jobs 0 --db "$E2E_TMP/x.db"
expect_rc 2 "--jobs 0 is refused"
run_cmd "$DPUSIM" sweep "$SCN" --point-timeout 5parsecs --db "$E2E_TMP/x.db"
expect_rc 2 "--point-timeout 5parsecs is refused"
expect_err "--point-timeout wants a duration such as 90s, 30min or 2h" "--point-timeout error says what it wants"
run_cmd "$DPUSIM" sweep "$E2E_TMP/none.yaml" --db "$E2E_TMP/x.db"
expect_rc 2 "a missing scenario file"
run_cmd "$DPUSIM" sweep --db "$E2E_TMP/x.db"
expect_rc 2 "no scenario file"

finish
