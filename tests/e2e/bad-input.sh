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
# A profile of comments only has no root node: still placed at 1:1.
printf '# nothing but a comment\n' >"$E2E_TMP/comment-only.yaml"
run_cmd "$DPUSIM" check scenarios/demo.yaml --profile "$E2E_TMP/comment-only.yaml"
expect_rc 2 "--profile with a file of comments only"
expect_err "^$E2E_TMP/comment-only.yaml:1:1: a profile must be a mapping with kind, name, summary and fields\$" \
	"an empty profile's error is positioned"
# A profile name past 63 characters was refused without a place (found by
# tools/fuzz-scenarios).
sed "s/^name: .*/name: $(printf 'x%.0s' $(seq 70))/" models/profiles/Micron-9200-PRO.yaml >"$E2E_TMP/long-name.yaml"
run_cmd "$DPUSIM" check scenarios/effects/gds-local-nvme.yaml --profile "$E2E_TMP/long-name.yaml"
expect_rc 2 "--profile with a name of 70 characters"
expect_err "^$E2E_TMP/long-name.yaml:[0-9]+:7: profile name too long \(70 characters, at most 63\)\$" \
	"a profile name too long is placed and its limit said"

# dpusim coll: sizes that a cast would turn into garbage (2^64 and more is
# undefined, 0.5 B silently 0), counts that would exhaust memory or spin
# (1e9 ranks, 1e9 channels, a radix beyond any switch profile), and values
# the fabric would refuse only after the header: refused by name, exit 2,
# nothing on stdout.
coll_bad() { # DESCRIPTION STDERR-REGEX ARGS...
	local d=$1 re=$2
	shift 2
	run_cmd timeout 60 "$DPUSIM" coll "$@"
	expect_rc 2 "coll $d"
	expect_err "$re" "coll $d is named"
	if [ -z "$OUT" ]; then ok "coll $d prints nothing on stdout"
	else not_ok "coll $d printed on stdout: ${OUT:0:200}"; fi
}
CB=(--ranks 4 --link 400Gbps)
coll_bad "--bytes 1e30B" "'1e30B' is out of range in '--bytes' \\(at most 2\\^64-1 bytes\\)" "${CB[@]}" --bytes 1e30B
coll_bad "--bytes 0.5B" "'0.5B' is not a whole number of bytes in '--bytes'" "${CB[@]}" --bytes 0.5B
coll_bad "--chunk 0B" "--chunk wants at least 1 byte, not '0B'" "${CB[@]}" --bytes 1MiB --chunk 0B --algo tree
coll_bad "--ranks 1e9" "--ranks wants a whole number from 2 to 1048576, not '1000000000'" --ranks 1000000000 --bytes 1MiB --link 400Gbps
coll_bad "--channels 1e9" "--channels wants a whole number from 1 to 64, not '1000000000'" "${CB[@]}" --bytes 1MiB --channels 1000000000
coll_bad "--radix 5000" "--radix wants a whole number from 2 to 4096, not '5000'" "${CB[@]}" --bytes 1MiB --radix 5000 --topology fat-tree
coll_bad "--link 0Gbps" "--link wants a rate above zero, not '0Gbps'" --ranks 4 --bytes 1MiB --link 0Gbps
coll_bad "--root 99" "--root 99 is not one of the 4 ranks \\(0 to 3\\)" "${CB[@]}" --bytes 1MiB --op broadcast --root 99
coll_bad "--nics-per-node 16" "--nics-per-node 16 is more than --gpus-per-node 8" --ranks 8 --gpus-per-node 8 --nics-per-node 16 --bytes 1MiB --link 400Gbps
# Ports past the topology are refused before its links are built: 65,536
# were built for a radix-4 tree that holds 8, one realloc a link (over a
# minute of CPU under ASan; tools/fuzz-cli). CPU seconds bound it, not time.
run_cmd bash -c 'ulimit -t 20; exec "$@"' sh "$DPUSIM" coll --ranks 65536 --gpus-per-node 8 \
	--topology fat-tree --radix 4 --bytes 8 --link 200Gbps
expect_rc 2 "coll of 65,536 ports on a radix-4 tree, within 20 CPU seconds"
expect_err "65536 NIC ports do not fit this topology: radix 4 at 1:1 connects at most 8" "says the fabric's limit"
run_cmd "$DPUSIM" coll "${CB[@]}" --bytes 1.5KiB,512 --chunk 512 --algo tree
expect_rc 0 "coll takes whole byte counts written as quantities or plain bytes"
expect_out '^ +1536 +384 +float .* tree(/[a-z0-9]+)?$' "1.5KiB is 1536 bytes"

run_cmd "$DPUSIM" validate --only no-such-case
expect_rc 2 "validate --only naming no case"
expect_err "no case or group named 'no-such-case'" "validate --only names what matched nothing"

run_cmd "$DPUSIM" bench engine --events 10 --reps 1 --pending 10000000000
expect_rc 2 "bench engine --pending 1e10 (would exhaust memory)"
expect_err "--pending wants sizes from 1 to 50000000" "bench engine --pending says its range"
run_cmd "$DPUSIM" bench
expect_err "which benchmark\\? \\(engine, flows, scale\\)" "bench names all three benchmarks"

# Report readers: a directory, and /dev/zero (once read until memory ran
# out, then printed an uninitialised error buffer).
run_cmd "$DPUSIM" compare "$E2E_TMP" "$E2E_TMP"
expect_rc 2 "compare of a directory"
expect_err "^dpusim: error: $E2E_TMP: is a directory, expected a dpusim-report/1 JSON file\$" "a directory report is named as such"
run_cmd timeout 60 "$DPUSIM" compare /dev/zero /dev/zero
expect_rc 2 "compare of /dev/zero"
expect_err "^dpusim: error: /dev/zero: file too large \\(more than 67108864 bytes\\)\$" "an endless report is refused by size"

# import and merge that fail before storing anything leave no new database.
printf '{' >"$E2E_TMP/trunc.json"
run_cmd "$DPUSIM" import "$E2E_TMP/trunc.json" --db "$E2E_TMP/new-import.db"
expect_rc 2 "import of a malformed report"
if [ ! -e "$E2E_TMP/new-import.db" ]; then ok "a failed import creates no database"
else not_ok "a failed import left $E2E_TMP/new-import.db"; fi
# SQLite takes a 1-byte file for a new database and wrote its schema over
# it: a source given to merge was overwritten.
run_cmd "$DPUSIM" merge "$E2E_TMP/new-merge.db" "$E2E_TMP/trunc.json"
expect_rc 2 "merge of a file that is no database"
expect_err "^dpusim: error: $E2E_TMP/trunc.json: not a results database \\(no SQLite header\\)\$" "merge names the source that is no database"
if [ "$(cat "$E2E_TMP/trunc.json")" = "{" ]; then ok "merge leaves a source that is no database untouched"
else not_ok "merge overwrote $E2E_TMP/trunc.json"; fi
if [ ! -e "$E2E_TMP/new-merge.db" ]; then ok "a failed merge creates no database"
else not_ok "a failed merge left $E2E_TMP/new-merge.db"; fi
run_cmd "$DPUSIM" runs --db "$E2E_TMP/trunc.json"
expect_rc 2 "runs --db on a file that is no database"
if [ "$(cat "$E2E_TMP/trunc.json")" = "{" ]; then ok "runs leaves a file that is no database untouched"
else not_ok "runs overwrote $E2E_TMP/trunc.json"; fi
# SQLite's header and garbage after it: every reader says what it is (runs
# named the failed statement and its source line; run --db said it well).
printf 'SQLite format 3\0garbage' >"$E2E_TMP/fake.db"
for cmd in "runs --db" "runs" "merge $E2E_TMP/fake-merge.db" "run scenarios/allreduce-4ranks.yaml --db"; do
	run_cmd "$DPUSIM" $cmd "$E2E_TMP/fake.db"
	expect_rc 2 "$cmd on a SQLite header with garbage"
	expect_err "^dpusim: error: $E2E_TMP/fake.db: not a results database \\(SQLite: file is not a database\\)\$" \
		"$cmd says the file is not a results database"
done

# A database name with no room for SQLite's NAME-journal, NAME-wal and
# NAME-shm beside it (the switch to WAL failed after SQLite had made an
# empty file, left behind: tools/fuzz-cli seed 1204).
mkdir -p "$E2E_TMP/longdb"
LONG=$(printf 'a%.0s' $(seq 250))
run_cmd "$DPUSIM" run scenarios/allreduce-4ranks.yaml --db "$E2E_TMP/longdb/$LONG"
expect_rc 2 "a database name too long for its companions"
expect_err "a results database's name can be at most [0-9]+ bytes .*not 250" "says how long it may be"
if [ -z "$(ls -A "$E2E_TMP/longdb")" ]; then ok "nothing left behind"
else not_ok "left behind: $(ls "$E2E_TMP/longdb" | cut -c1-40)"; fi

# Output places that cannot be written are found before the work is done.
printf 'x' >"$E2E_TMP/plain-file"
"$DPUSIM" run scenarios/demo.yaml --json >"$E2E_TMP/demo.json" 2>/dev/null
run_cmd "$DPUSIM" plot "$E2E_TMP/demo.json" --kind breakdown -o "$E2E_TMP/no-dir/b.png"
expect_rc 2 "plot -o into a missing folder"
expect_err "^dpusim: error: cannot create '$E2E_TMP/no-dir/b.png': No such file or directory\$" "plot names the output it cannot create"
run_cmd "$DPUSIM" sweep scenarios/demo.yaml --db "$E2E_TMP/sweep-o.db" -o "$E2E_TMP/plain-file"
expect_rc 2 "sweep -o naming a file"
expect_err "plain-file: not a folder, expected one for the reports \\(-o\\)" "sweep -o says it wants a folder"
if [ ! -e "$E2E_TMP/sweep-o.db" ]; then ok "sweep with a bad -o creates no database"
else not_ok "sweep with a bad -o left $E2E_TMP/sweep-o.db"; fi

# dpusim run: a bad option value says what was wanted ('bad option' did not).
run_cmd "$DPUSIM" run scenarios/demo.yaml --seed -1
expect_rc 2 "run --seed -1"
expect_err "^dpusim: error: run: --seed wants a whole number >= 0, not '-1'\$" "run --seed says what it wants"
run_cmd "$DPUSIM" run scenarios/demo.yaml --replications 0
expect_rc 2 "run --replications 0"
expect_err "--replications wants a count from 1 to 10000 \\(as in a scenario\\), not '0'" "run --replications says its range"
run_cmd "$DPUSIM" run scenarios/demo.yaml -o
expect_rc 2 "run -o without a folder"
expect_err "^dpusim: error: run: -o needs a value" "run -o says it needs a value"

# dpusim bench: values refused with their range; bench scale --bytes 2^64-1
# ran past the engine's end of time and aborted.
run_cmd "$DPUSIM" bench scale --ranks 4 --reps 1 --bytes 18446744073709551615 --train-gpus none
expect_rc 2 "bench scale --bytes 2^64-1"
expect_err "--bytes wants whole bytes from 1 to 1125899906842624, not '18446744073709551615'" "bench scale --bytes says its range"
run_cmd "$DPUSIM" bench flows --reps 0
expect_rc 2 "bench flows --reps 0"
expect_err "bench flows: --reps wants a count from 1 to 101, not '0'" "bench flows --reps says its range"
run_cmd "$DPUSIM" bench engine --events 0
expect_err "bench engine: --events wants a count from 1 to 10\\^10, not '0'" "bench engine --events says its range"
# 2^63 events ran for ever (tools/fuzz-cli, seed 120413): a hang, not a benchmark
run_cmd timeout 20 "$DPUSIM" bench engine --events 9223372036854775807 --reps 1 --pending 10
expect_rc 2 "bench engine --events 2^63-1 refused at once"
expect_err "bench engine: --events wants a count from 1 to 10\\^10, not '9223372036854775807'" "naming its range"

# plot --kind timeline: a trace with no span sorted a NULL array (undefined
# behaviour under UBSan); a span beyond any time gnuplot can draw gave its
# 'x range is invalid'.
printf '{"traceEvents": []}' >"$E2E_TMP/no-spans.json"
run_cmd "$DPUSIM" plot "$E2E_TMP/no-spans.json" --kind timeline -o "$E2E_TMP/t.png"
expect_rc 2 "timeline of a trace without spans"
expect_err "no-spans.json:1:1: the trace has no spans" "a trace without spans is named and placed"
printf '{"traceEvents": [\n {"ph": "X", "ts": 0, "dur": 1e300, "pid": 1, "tid": 1}]}' >"$E2E_TMP/far-span.json"
run_cmd "$DPUSIM" plot "$E2E_TMP/far-span.json" --kind timeline -o "$E2E_TMP/t.png"
expect_rc 2 "timeline of a span ending past the end of time"
expect_err "far-span.json:2:20: span with ts 0 us and dur 1e\\+300 us, expected both >= 0" "the span is placed and the range said"
if [ ! -e "$E2E_TMP/t.png" ]; then ok "no picture left by the failed timelines"
else not_ok "a failed timeline left $E2E_TMP/t.png"; fi

# plot --scenario on a database picks that scenario's newest run; it was
# ignored, so a misspelt name drew another scenario's breakdown.
"$DPUSIM" import "$E2E_TMP/demo.json" --db "$E2E_TMP/one.db" >/dev/null
run_cmd "$DPUSIM" plot "$E2E_TMP/one.db" --kind breakdown --scenario no-such -o "$E2E_TMP/b.png"
expect_rc 2 "plot --scenario naming no stored scenario"
expect_err "one.db: no run of scenario 'no-such'" "plot --scenario names what it did not find"

# coll latencies at most 1 s: --msg-latency 9e6s overflowed the time
# estimate (undefined), --jitter 1e6s aborted past the end of time.
coll_bad "--msg-latency 9e6s" "'9e6s' is out of range in '--msg-latency' \\(at most 1s\\)" "${CB[@]}" --bytes 1MiB --msg-latency 9e6s
coll_bad "--jitter 1e6s" "'1e6s' is out of range in '--jitter' \\(at most 1s\\)" "${CB[@]}" --bytes 1MiB --jitter 1e6s

# A trace whose spans carry no 'cat' (any Chrome trace not from dpusim):
# the empty category blocks ran together and gnuplot found no 'other'
# block ("x range is invalid"); a pid of 1e300 was cast to long.
printf '{"traceEvents": [{"ph": "X", "ts": 0, "dur": 1000, "pid": 1, "tid": 1},\n {"ph": "X", "ts": 0, "dur": 5, "pid": 1e300, "tid": 1}]}' >"$E2E_TMP/no-cat.json"
run_cmd "$DPUSIM" plot "$E2E_TMP/no-cat.json" --kind timeline -o "$E2E_TMP/no-cat.png"
expect_rc 0 "timeline of spans without a category"
if [ -s "$E2E_TMP/no-cat.png" ]; then ok "the timeline picture is written"; else not_ok "no timeline picture"; fi

# A transfer ending past the engine's clock (int64 picoseconds, 106.75
# days), from a rate or size the command or scenario gave, aborted the
# process (status 134; a sweep point 'killed by signal 6'). Now the reason,
# exit 2, the sizes that fit, and no report, trace or database.
HZ="simulated time passes the engine's horizon of 106\\.75 days \\(int64 picoseconds\\): a transfer of [0-9]+ bytes at 0\\.12[0-9]* B/s would end at [0-9.e+]+ s \\([0-9.e+]+ days\\); a rate or size out of range\\?\$"
run_cmd timeout 60 "$DPUSIM" coll --ranks 4 --bytes 1KiB,1GB --link 1bps --json
expect_rc 2 "coll at 1 b/s"
expect_err "^dpusim: error: coll: 1000000000 bytes: $HZ" "coll names the transfer past the horizon"
expect_out '"bytes": 1024, "algo": "ring"' "coll prints the size that fits"
expect_out '^}$' "coll closes its JSON"
sed 's/rdma_latency: 0.6us }/rdma_latency: 0.6us, port_rate: 1bps }/' scenarios/demo.yaml >"$E2E_TMP/slow-nic.yaml"
# A NIC of 1 b/s is in the profile's range, but the job's gradients would
# take past the clock's end: check refuses it at the variant, naming what
# to change, and run refuses it the same way before simulating anything.
SLOW="variant 'baseline': training simulation: an iteration takes [^;]* end past the simulator's horizon of 106\\.75 days; check the rates it crosses \\(cluster\\.fabric\\.link_rate, the NIC's port_rate"
run_cmd "$DPUSIM" check "$E2E_TMP/slow-nic.yaml"
expect_rc 2 "check refuses a NIC of 1 b/s (in range, but past the horizon)"
expect_err "^$E2E_TMP/slow-nic.yaml:35:5: $SLOW" "check places the NIC of 1 b/s at the variant and names the rates"
run_cmd timeout 60 "$DPUSIM" run "$E2E_TMP/slow-nic.yaml" -o "$E2E_TMP/slow-rep" \
	--trace "$E2E_TMP/slow-trace.json" --db "$E2E_TMP/slow.db"
expect_rc 2 "run with a NIC of 1 b/s"
expect_err "^$E2E_TMP/slow-nic.yaml:35:5: $SLOW" "run refuses it as check does"
if [ -z "$OUT" ]; then ok "run prints nothing on stdout"; else not_ok "run printed: ${OUT:0:200}"; fi
if [ ! -e "$E2E_TMP/slow-rep/report.json" ] && [ ! -e "$E2E_TMP/slow.db" ] &&
   ! ls "$E2E_TMP"/slow-trace* >/dev/null 2>&1; then ok "run writes no report, trace or database"
else not_ok "run left output: $(ls "$E2E_TMP")"; fi
sed 's|^  gpu: H100-SXM5|  gpu: { profile: H100-SXM5, nvlink_bw: 1B/s, nvlink_bw_achieved: 1B/s }|' scenarios/demo.yaml >"$E2E_TMP/slow-nvl.yaml"
run_cmd timeout 60 "$DPUSIM" run "$E2E_TMP/slow-nvl.yaml"
expect_rc 2 "run with NVLink at 1 B/s"
# the all-reduce's rate is NVLink's 1 B/s over the profile's NCCL channels
HZ_NVL="simulated time passes the engine's horizon of 106\\.75 days \\(int64 picoseconds\\): a transfer of [0-9]+ bytes at 0\\.0[0-9]* B/s would end at [0-9.e+]+ s \\([0-9.e+]+ days\\); a rate or size out of range\\?"
expect_err "^$E2E_TMP/slow-nvl.yaml:35:5: variant 'baseline': training simulation: the tensor-parallel all-reduce inside a node: $HZ_NVL; check cluster.gpu's 'nvlink_bw'" "run names the NVLink transfer past the horizon and the field"
# A bounce buffer's host memory of 200 B/s: the reads' path is narrower
# than the drives they come from. check took only the drives' and servers'
# rates for the loader's reads, passed it, and run died at the engine's
# horizon with no place in the file (tools/fuzz-scenarios, seed 121501).
sed 's|^  cpu: EPYC-7742$|  cpu: { profile: EPYC-7742, mem_bw: 200B/s }|' scenarios/effects/gds-local-nvme.yaml \
	>"$E2E_TMP/slow-mem.yaml"
LOADER="training simulation: an iteration takes about [^;]*the data loader [0-9.e+]+ s\\), so 4 iterations with the warm-up end past the simulator's horizon of 106\\.75 days; check workload\\.data's .* and what the reads cross \\(the CPU's 'mem_bw' for a bounce buffer"
run_cmd "$DPUSIM" check "$E2E_TMP/slow-mem.yaml"
expect_rc 2 "check refuses reads through a bounce buffer's memory of 200 B/s"
expect_err "^$E2E_TMP/slow-mem.yaml:54:5: variant 'bounce-buffer': $LOADER" "check places the reads' narrow memory at the variant that crosses it"
if grep -q "gpudirect-storage" <<<"$ERR"; then not_ok "GDS, which skips host memory, refused: ${ERR:0:300}"
else ok "GDS, whose reads skip host memory, is not refused"; fi
run_cmd timeout 60 "$DPUSIM" run "$E2E_TMP/slow-mem.yaml" --db "$E2E_TMP/slow-mem.db"
expect_rc 2 "run with a bounce buffer's memory of 200 B/s"
expect_err "^$E2E_TMP/slow-mem.yaml:54:5: variant 'bounce-buffer': $LOADER" "run refuses it as check does"
if [ ! -e "$E2E_TMP/slow-mem.db" ]; then ok "run writes no database"; else not_ok "run left a database"; fi
# Links of 25 B/s: the data-parallel all-reduces take 22.4 days an
# iteration as the run chooses and runs them, 5 iterations with the warm-up
# past the horizon. check took the least figure over every algorithm in
# NCCL's tuner's structure (1/7.5 of it), passed it, and run died at the
# engine's horizon with no place in the file; at 50 B/s both run it (11.18
# days an iteration).
sed 's|^    topology: single-switch$|    topology: single-switch\n    link_rate: 25B/s|' \
	scenarios/effects/gds-vs-bounce.yaml >"$E2E_TMP/slow-links.yaml"
run_cmd "$DPUSIM" check "$E2E_TMP/slow-links.yaml"
expect_rc 2 "check refuses links of 25 B/s (the all-reduces as the run takes them)"
expect_err "^$E2E_TMP/slow-links.yaml:[0-9]+:5: variant 'bounce-buffer': training simulation: an iteration takes about [0-9.e+]+ s \\(the slowest pipeline stage's passes [0-9.]+ s, its pipeline sends and gradient all-reduces [0-9.e+]+ s" "check places the links of 25 B/s at the variant"
sed -i 's|link_rate: 25B/s|link_rate: 50B/s|' "$E2E_TMP/slow-links.yaml"
run_cmd timeout 60 "$DPUSIM" run "$E2E_TMP/slow-links.yaml" --replications 1
expect_rc 0 "links of 50 B/s run (check's estimate is not a margin)"
expect_out "^iteration \\(mean\\) +11\\.18 days +11\\.18 days" "an iteration at 50 B/s takes what check estimates"
cat >"$E2E_TMP/slow-sweep.yaml" <<'YAML'
name: horizon
cluster:
  nodes: 2
  gpus_per_node: 1
  gpu: H100-SXM5
  cpu: Xeon-8480C
  host_costs: host-costs-linux
  nic: { profile: ConnectX-6-HDR, port_rate: 200Gbps }
  nics_per_node: 1
  fabric: { topology: single-switch, switch: QM8700-HDR }
workload:
  kind: collective
  collective: { op: allreduce, algo: ring, sizes: [1GiB], iterations: 1 }
variants:
  - { name: rdma-gdr, network: rdma-gdr }
sweep:
  cluster.nic.port_rate: [200Gbps, 1bps]
YAML
run_cmd "$DPUSIM" check "$E2E_TMP/slow-sweep.yaml"
expect_rc 2 "check refuses a sweep with a point past the horizon"
expect_err "^$E2E_TMP/slow-sweep.yaml:15:5: variant 'rdma-gdr': collective 'allreduce' of 1073741824 bytes: its predicted time alone ends past the simulator's horizon of 106\\.75 days; .* \\(at sweep point 2: cluster\\.nic\\.port_rate=1bps\\)\$" "check names the sweep point past the horizon"
run_cmd timeout 120 "$DPUSIM" sweep "$E2E_TMP/slow-sweep.yaml" --jobs 2 --db "$E2E_TMP/sweep.db"
expect_rc 2 "sweep with a point at 1 b/s"
expect_out "2 points; 1 run, 0 skipped \\(already stored\\), 1 failed" "sweep runs the other point"
expect_err "^$E2E_TMP/slow-sweep.yaml:15:5: variant 'rdma-gdr': collective 'allreduce' of 1073741824 bytes: its predicted time alone ends past the simulator's horizon of 106\\.75 days; check the rates it crosses" "sweep names the collective past the horizon"
if grep -q "signal" <<<"$ERR"; then not_ok "a sweep point was killed: ${ERR:0:300}"; else ok "no sweep point killed by a signal"; fi


# The work limits (tests/bad/work-*, p2p-tx-depth, p2p-messages)
# refuse only past their bound: the bound itself is a scenario check takes.
B="$PWD/tests/bad/base/valid.yaml"
printf 'extends: %s\nworkload:\n  batch: { global: 262144, micro: 1 }\n' "$B" >"$E2E_TMP/mb-edge.yaml"
run_cmd "$DPUSIM" check "$E2E_TMP/mb-edge.yaml"
expect_rc 0 "65536 microbatches per iteration (the bound) are checked, not refused"
sed -e 's/tx_depth: 15001/tx_depth: 15000/' -e "s|extends: base/valid.yaml|extends: $B|" \
	tests/bad/p2p-tx-depth.yaml >"$E2E_TMP/txd-edge.yaml"
run_cmd "$DPUSIM" check "$E2E_TMP/txd-edge.yaml"
expect_rc 0 "tx_depth 15000 (perftest's MAX_TX) is checked, not refused"
sed -e 's/iterations: 100000/iterations: 97656/' -e "s|extends: base/valid.yaml|extends: $B|" \
	tests/bad/p2p-messages.yaml >"$E2E_TMP/msg-edge.yaml"
run_cmd "$DPUSIM" check "$E2E_TMP/msg-edge.yaml"
expect_rc 0 "1024 QPs x 97656 iterations (under 10^8 messages) are checked, not refused"
sed -e 's/iterations: 1000000/iterations: 100000/' -e "s|extends: base/valid.yaml|extends: $B|" \
	tests/bad/work-coll-iterations.yaml >"$E2E_TMP/coll-edge.yaml"
run_cmd "$DPUSIM" check "$E2E_TMP/coll-edge.yaml"
expect_rc 0 "100,000 collective iterations (the bound) are checked, not refused"
# (a 2-rank collective: check's dry pass of a training job on 2^20 GPUs
# takes seconds, minutes under ASan)
cat >"$E2E_TMP/gpus-edge.yaml" <<YAML
extends: $B
cluster: { nodes: 16384, gpus_per_node: 64, nics_per_node: 1, fabric: { topology: fat-tree, tiers: 3 } }
workload:
  kind: collective
  model: null
  parallelism: null
  batch: null
  collective: { op: allreduce, sizes: [1KiB], ranks: 2, iterations: 1 }
YAML
run_cmd "$DPUSIM" check "$E2E_TMP/gpus-edge.yaml"
expect_rc 0 "2^20 GPUs (16384 nodes x 64) are checked, not refused"

# Numbers in options are decimal and finite: strtod took hexadecimal
# ('--tolerance 0x10%' was 16%), leading blanks and '+' (tools/fuzz-cli).
for v in 0x10% " 5%" inf%; do
	run_cmd "$DPUSIM" compare tests/data/report-sim.json tests/data/report-hw.json --tolerance "$v"
	expect_rc 2 "compare --tolerance '$v' is refused"
	expect_err "--tolerance wants a percentage such as 10%" "saying what it wants"
done
run_cmd "$DPUSIM" plot tests/data/report-sim.json tests/data/report-hw.json --kind compare \
	--tolerance 0x10% -o "$E2E_TMP/tol.svg"
expect_rc 2 "plot --tolerance 0x10% is refused"
run_cmd "$DPUSIM" sweep tests/data/sweep-small.yaml --db "$E2E_TMP/tol.db" --point-timeout 0x10
expect_rc 2 "sweep --point-timeout 0x10 is refused"
for v in " 5" 0x5 1e1; do
	run_cmd "$DPUSIM" runs --limit "$v" "$E2E_TMP/none.db"
	expect_rc 2 "runs --limit '$v' is refused"
	expect_err "--limit wants a positive count, not '$v'" "naming it"
done
if ls "$E2E_TMP/tol.svg" "$E2E_TMP/tol.db" 2>/dev/null | grep -q .; then
	not_ok "a refused option left an output"; else ok "refused options write nothing"; fi

# A name too long to be a file still gets its reason said: messages went
# through 1,024-byte buffers and a long path pushed out what was wrong
# (they ended mid-path), and --trace's per-variant names, cut short, were
# taken for two outputs of one name. Now a message keeps its start and
# its end, the middle of a long name left out (sim_fit), and the first
# error line says why: the path limit, a name too long, or its own check.
LONG=$E2E_TMP/$(printf 'x%.0s' $(seq 9000))
for c in "check $LONG.yaml" "check scenarios/demo.yaml --profile-dir $LONG" \
	 "run scenarios/demo.yaml -o $LONG" "run scenarios/allreduce-4ranks.yaml --db $LONG.db" \
	 "run scenarios/demo.yaml --trace $LONG.json" "sweep tests/data/sweep-small.yaml --db $LONG.db" \
	 "compare $LONG.json $LONG.json" "calibrate $LONG.json -o $E2E_TMP/c.yaml" "runs $LONG.db" \
	 "plan $LONG.yaml"; do
	run_cmd "$DPUSIM" $c
	first=$(head -n 1 <<<"$ERR")
	expect_rc 2 "${c%% *} with a 9,000-byte name"
	if grep -Eq 'File name too long|path limit|can be at most [0-9]+ bytes' <<<"$first"; then
		ok "${c%% *} ${c#* }: the first line says why"
	else not_ok "${c%% *}: first line ${#first} bytes, ending '${first: -120}'"; fi
done
run_cmd "$DPUSIM" check scenarios/demo.yaml --profile-dir "$LONG"
expect_err "^no hardware profiles: '$E2E_TMP/x+ \\[\\.\\.\\. [0-9]+ bytes left out \\.\\.\\.\\] x+' is not a folder: File name too long \\(give" \
	"a long name keeps its start and end, the middle counted"
# A folder whose own path fits but whose outputs' would not (4,090 bytes):
# the report's name was cut at 4,096 and another file ('.../repo') asked
# for; now each output's whole name is checked before the work.
DEEP=$(python3 -c '
import os, sys
cur = sys.argv[1] + "/deep"
while len(cur) < 4090 - 201:
    cur += "/" + "d" * 200
cur += "/" + "e" * (4090 - len(cur) - 1)
os.makedirs(cur)
print(cur)' "$E2E_TMP")
for c in "run tests/data/train-small.yaml -o $DEEP" "sweep tests/data/sweep-small.yaml --db $E2E_TMP/deep.db -o $DEEP" \
	 "calibrate tests/data/report-bench.json -o $DEEP"; do
	run_cmd "$DPUSIM" $c
	expect_rc 2 "${c%% *} -o a 4,090-byte folder"
	expect_err "(would be named )?past the path limit \(4095 bytes\)" "${c%% *}: its output's name is past the limit"
	if ls -A "$DEEP" | grep -q . || [ -e "$E2E_TMP/deep.db" ]; then not_ok "${c%% *} wrote before refusing"
	else ok "${c%% *}: nothing written"; fi
done

# A scenario from a pipe (a shell's <(...)) is refused with the reason and
# what to do, not as "not a regular file".
run_cmd "$DPUSIM" check <(cat scenarios/demo.yaml)
expect_rc 2 "check <(cat scenario)"
expect_err "^/dev/fd/[0-9]+: a pipe, not a file: .*write it to a file first\)$" "says why and what to do"
if ls "$E2E_TMP"/c.yaml "$E2E_TMP"/xxxx* 2>/dev/null | grep -q .; then
	not_ok "a refused long name left an output"; else ok "long names write nothing"; fi
finish
