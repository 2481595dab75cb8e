# Long runs say how far they are on stderr, terminal or not (issue 14): a
# line per iteration once DPUSIM_PROGRESS_S (10 s by default) has passed,
# stdout untouched; a short run says nothing.
. tests/e2e/lib.sh
S=tests/data/train-small.yaml

run_cmd "$DPUSIM" run "$S" --json --replications 2
expect_rc 0 "a short run"
if grep -q 'iteration .* done' <<<"$ERR"; then not_ok "a short run printed progress: $ERR"
else ok "a short run prints no progress"; fi
ONE="$OUT"
DPUSIM_PROGRESS_S=0 run_cmd "$DPUSIM" run "$S" --json --replications 2
expect_rc 0 "the same run, progress every iteration"
L='about [0-9.e+-]+ (s|min|h) left'
expect_err "^dpusim: gdr \\(variant 2/2\\): replication 2/2, iteration 2/3 done, simulated [0-9.e+-]+ s, wall [0-9]+ s, $L\$" \
	"a line names the variant and which of the run's, the replication, iteration, simulated time, the run's wall time and time left"
expect_err "^dpusim: baseline \\(variant 1/2\\): replication 1/2, iteration 1/3 done, simulated [0-9.e+-]+ s, wall [0-9]+ s, $L\$" \
	"the first variant's first iteration gives the run's time left"
if [ "$OUT" = "$ONE" ]; then ok "stdout is the same report"; else not_ok "progress changed stdout"; fi

# Between iterations, and where there are none (p2p, collective), the
# event loop's heartbeat says the run is alive: a p2p size of 160,000
# messages is one long step with no iteration to report.
P2P="$E2E_TMP/p2p-long.yaml"
sed -e 's/^    qps: 1$/    qps: 8\n    iterations: 20000/' -e 's/sizes: \[.*\]/sizes: [64KiB]/' \
	scenarios/perftest-ndr.yaml >"$P2P"
run_cmd "$DPUSIM" run "$P2P" --json
expect_rc 0 "a p2p run of 160,000 messages"
QUIET="$OUT"
if grep -q 'still simulating' <<<"$ERR"; then not_ok "a run under 10 s printed a heartbeat: $ERR"
else ok "a run under 10 s prints no heartbeat"; fi
DPUSIM_PROGRESS_S=0 run_cmd "$DPUSIM" run "$P2P" --json
expect_rc 0 "the same p2p run, a line whenever one is due"
expect_err '^dpusim: host-memory \(variant 1/2\): still simulating, simulated [0-9.e+-]+ s, wall [0-9]+ s$' \
	"the heartbeat names the variant, the simulated clock and the wall time; no time left before anything is known"
expect_err "^dpusim: gpu-memory \\(variant 2/2\\): still simulating, simulated [0-9.e+-]+ s, wall [0-9]+ s, $L\$" \
	"the next variant's heartbeat says the run's time left, from the first variant's wall time"

# run --jobs: a worker's heartbeat names its variant, the coordinator says
# each variant's end and the run's time left.
DPUSIM_PROGRESS_S=0 run_cmd "$DPUSIM" run "$P2P" --json --jobs 2
expect_rc 0 "the p2p run in two workers"
if [ "$OUT" = "$QUIET" ]; then ok "--jobs: the same report"; else not_ok "--jobs changed stdout"; fi
expect_err '^dpusim: gpu-memory \(variant 2/2\): still simulating, simulated [0-9.e+-]+ s, wall [0-9]+ s$' \
	"a worker's heartbeat names its variant of the run"
D='[0-9.]+ (us|ms|s|min|h)'
expect_err "^dpusim: run: variant [12]/2 \\((host|gpu)-memory\\) done in $D; 1/2 done, $D elapsed(, $L)?\$" \
	"the coordinator says the first variant's end"
expect_err "^dpusim: run: variant [12]/2 \\((host|gpu)-memory\\) done in $D; 2/2 done, $D elapsed\$" \
	"and the last, nothing left"
if [ "$OUT" = "$QUIET" ]; then ok "the heartbeat leaves stdout alone"; else not_ok "the heartbeat changed stdout"; fi

# dpusim coll: a size at scale takes seconds (65,536 ranks: 0.3 to 7 s each),
# so its heartbeat names the size of how many; its sizes cost too unlike
# each other for their mean to say the time left, so none is said (three
# sizes alike here: the second's lines would say one if coll took the mean).
DPUSIM_PROGRESS_S=0 run_cmd "$DPUSIM" coll --ranks 64 --bytes 64MiB,64MiB,64MiB --link 400Gbps
expect_rc 0 "coll of three sizes, a line whenever one is due"
expect_err '^dpusim: allreduce 67108864 B \(size 2/3\): still simulating, simulated [0-9.e+-]+ s, wall [0-9]+ s$' \
	"coll's heartbeat names the collective, the size and which of how many"
if grep -q 'left' <<<"$ERR"; then not_ok "coll said a time left: $(grep left <<<"$ERR" | head -1)"
else ok "coll says no time left"; fi

# A sweep's point and a plan's finalist run the same loops: without a
# terminal (which has the sweep's bar) their heartbeat says so too, naming
# the point; a serial sweep's lines end with the sweep's own progress, and
# each point stored says how long it took, the time elapsed and, from the
# second size on, about how long the rest will take (tools/sweep_eta.h).
printf 'extends: %s\nsweep:\n  workload.p2p.iterations: [20000, 20001]\n' "$P2P" >"$E2E_TMP/p2p-sweep.yaml"
DPUSIM_PROGRESS_S=0 run_cmd "$DPUSIM" sweep "$E2E_TMP/p2p-sweep.yaml" --db "$E2E_TMP/s.db"
expect_rc 0 "a sweep of two long p2p points"
expect_err "^dpusim: sweep point \(workload.p2p.iterations=20000\): host-memory \\(variant 1/2\\): still simulating, simulated [0-9.e+-]+ s, wall [0-9]+ s; sweep: 0/2 points done, $D elapsed\$" \
	"the point's heartbeat names it and ends with the sweep's progress, nothing left said before a point is stored"
expect_err "^sweep: point 1/2 stored as run 1 \(workload.p2p.iterations=20000\) in $D; $D elapsed, about [0-9.e+-]+ (s|min|h) left\$" \
	"a stored point says its own wall time, the time elapsed and about how long the rest takes"
expect_err "^dpusim: sweep point \(workload.p2p.iterations=20001\): host-memory \\(variant 1/2\\): still simulating, .*; sweep: 1/2 points done, $D elapsed, about [0-9.e+-]+ (s|min|h) left\$" \
	"the next point's heartbeat says the sweep's time left"
expect_err "^sweep: point 2/2 stored as run 2 \(workload.p2p.iterations=20001\) in $D; $D elapsed\$" \
	"the last point says nothing is left"

# --jobs: each worker's heartbeat names its point (no sweep's progress: the
# coordinator has it), and the coordinator says how the points run.
DPUSIM_PROGRESS_S=0 run_cmd "$DPUSIM" sweep "$E2E_TMP/p2p-sweep.yaml" --db "$E2E_TMP/s2.db" --jobs 2
expect_rc 0 "the sweep in two workers"
expect_err '^dpusim: sweep point \(workload.p2p.iterations=2000[01]\): host-memory \(variant 1/2\): still simulating, simulated [0-9.e+-]+ s, wall [0-9]+ s$' \
	"a worker's heartbeat names its point"
expect_err "^sweep: 0/2 points done, $D elapsed; 2 running, the longest for $D \\(workload.p2p.iterations=2000[01]\\)\$" \
	"the coordinator's line: points done, running, the longest running"
if grep -Eq 'dpusim: .*dpusim: ' <<<"$ERR"; then not_ok "two workers' lines ran into one: $(grep -E 'dpusim: .*dpusim: ' <<<"$ERR" | head -1)"
else ok "each worker's line is whole"; fi

# On a terminal a point's progress redraws the sweep's bar, its clock and
# time left moving, rather than printing lines over it; --jobs workers keep
# quiet there, the coordinator redraws.
if command -v script >/dev/null; then
	DPUSIM_PROGRESS_S=0 script -qec "$DPUSIM sweep $E2E_TMP/p2p-sweep.yaml --db $E2E_TMP/tty.db" /dev/null >"$E2E_TMP/tty.out" 2>&1
	bars=$(tr '\r' '\n' <"$E2E_TMP/tty.out")
	n=$(grep -c '^\[\.*\] 0/2 points' <<<"$bars")
	if [ "$n" -ge 2 ]; then ok "the bar is redrawn while the first point runs ($n times)"
	else not_ok "the bar was drawn $n times before the first point ended: $(head -c 300 "$E2E_TMP/tty.out" | cat -v)"; fi
	if grep -Eq '^\[#+\.*\] 1/2 points  [0-9.]+ (us|ms|s) elapsed, about [0-9.e+-]+ (s|min|h) left' <<<"$bars"; then
		ok "the bar says the time left once a point is stored"
	else not_ok "no time left on the bar: $(head -c 300 "$E2E_TMP/tty.out" | cat -v)"; fi
	if grep -q 'still simulating\|iteration .* done' "$E2E_TMP/tty.out"; then not_ok "progress lines printed over the bar"
	else ok "no progress lines over the bar"; fi
	DPUSIM_PROGRESS_S=0 script -qec "$DPUSIM sweep $E2E_TMP/p2p-sweep.yaml --db $E2E_TMP/tty2.db --jobs 2" /dev/null >"$E2E_TMP/tty2.out" 2>&1
	# the coordinator redraws once a second; a worker redrawing on its
	# heartbeats (every few ms here) would draw dozens
	n=$(tr '\r' '\n' <"$E2E_TMP/tty2.out" | grep -c '^\[\.*\] 0/2 points')
	if grep -q 'still simulating' "$E2E_TMP/tty2.out"; then not_ok "a --jobs worker printed over the bar"
	elif [ "$n" -gt 8 ]; then not_ok "--jobs on a terminal: the bar drawn $n times before a point ended (workers drawing it?)"
	elif grep -q '2/2 points' "$E2E_TMP/tty2.out"; then ok "--jobs on a terminal: the coordinator's bar alone ($n before a point ended)"
	else not_ok "--jobs on a terminal: no bar: $(head -c 300 "$E2E_TMP/tty2.out" | cat -v)"; fi
fi
finish
