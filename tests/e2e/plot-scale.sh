# plot at scale and under interruption (issue 17, item 18): a timeline of
# 100,000 tracks is drawn in CPU seconds (it was quadratic: 300,000 tracks
# took over 400 s), and a plot killed while gnuplot draws leaves no
# temporary, neither beside the picture nor in $TMPDIR.
. tests/e2e/lib.sh
T=$E2E_TMP

python3 - "$T/tracks.json" <<'PY'
import json, sys
ev = [{"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "node 0"}}]
ev += [{"ph": "X", "cat": "compute", "name": "k", "pid": 0, "tid": i, "ts": i % 1000, "dur": 5}
       for i in range(100000)]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
# CPU time, not wall time: the limit holds on a loaded machine too. Before
# the fix this took over a minute of CPU.
(ulimit -t 30; exec "$DPUSIM" plot "$T/tracks.json" --kind timeline -o "$T/tl.png") \
	>"$T/out" 2>"$T/err"
RC=$? OUT=$(cat "$T/out") ERR=$(cat "$T/err")
expect_rc 0 "timeline of 100,000 tracks within 30 CPU seconds"
expect_out 'wrote .*tl\.png' "and it is written"

# A stand-in gnuplot that says it started, then draws for a long time.
mkdir -p "$T/fakebin" "$T/tmp" "$T/pics"
cat >"$T/fakebin/gnuplot" <<'SH'
#!/bin/sh
echo $$ >"$STARTED.tmp" && mv "$STARTED.tmp" "$STARTED"
exec sleep 60
SH
chmod +x "$T/fakebin/gnuplot"
for sig in TERM INT HUP; do
	rm -f "$T/started"
	# env: a background job starts with SIGINT ignored, and an ignored
	# signal is left ignored by the plot (as under nohup)
	STARTED=$T/started TMPDIR=$T/tmp PATH="$T/fakebin:$PATH" env --default-signal=INT \
		"$DPUSIM" plot tests/data/report-sim.json --kind breakdown -o "$T/pics/k.png" \
		>/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 1200); do  # at most 120 s: a bound against a hang, not a timing
		[ -e "$T/started" ] && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	kill -$sig $pid
	wait $pid 2>/dev/null
	st=$?
	[ "$st" -gt 128 ] && ok "SIG$sig ends the plot by the signal (status $st)" \
		|| not_ok "SIG$sig: status $st"
	if [ -z "$(ls -A "$T/pics")" ] && [ -z "$(ls -A "$T/tmp")" ]; then
		ok "SIG$sig while gnuplot draws leaves no temporary"
	else not_ok "SIG$sig left: $(ls -A "$T/pics" "$T/tmp")"; fi
	gp=$(cat "$T/started" 2>/dev/null)
	if [ -n "$gp" ] && ! kill -0 "$gp" 2>/dev/null; then ok "SIG$sig: gnuplot does not outlive the plot"
	else not_ok "SIG$sig: gnuplot ($gp) outlived the plot"; kill "$gp" 2>/dev/null; fi
done
finish
