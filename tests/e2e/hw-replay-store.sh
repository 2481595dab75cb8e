# dpusim-hw replay's storage part, for real on this machine: each loader rank
# writes a file of its own in --dir, drops it from the page cache, and reads
# the scenario's samples from it buffered and with O_DIRECT; every rank
# writes and fsyncs its share of the checkpoint (the simulator's size, x
# --scale). The report holds the measured rates beside the simulated ones;
# gds is read through cuFile where it is compiled in, else the variant says
# why not; nothing is left in --dir; a missing --dir is said plainly. A
# filesystem refusing O_DIRECT (ramfs; tmpfs takes it since Linux 6.6) is
# said in the report, for the storage replay and the data loader, not
# skipped silently (needs root to mount a ramfs; says it skips otherwise).
. tests/e2e/lib.sh
hw_setup
SCN=tests/e2e/data/hw-train-store.yaml
SCALE=1e-5

mkdir -p "$E2E_TMP/data" "$E2E_TMP/st"
head -c 50000 /dev/urandom >"$E2E_TMP/data/shard0.bin"

run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$SCN" --data "$E2E_TMP/data" --scale $SCALE \
	--timeout 20 --dir "$E2E_TMP/st" -o "$E2E_TMP/hw.json"
expect_rc 0 "training replay with the storage part on 2 ranks"
py_check "measured reads and checkpoint write beside the simulated figures, sizes the simulator's" \
	"$E2E_TMP/hw.json" "$E2E_TMP/st" "$SCALE" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1])); info = d["info"]; scale = float(sys.argv[3])
r = info["replay.storage_read"]
# 2 microbatches of 1 sample per replica, a warm-up and 2 iterations
m = re.match(r"6 samples of 2048 B per loader rank \(stage 0\), 2 ranks at once, from a file of each in '(.*)' .*buffered pread ([0-9.e+-]+) B/s together .*; O_DIRECT (.*)", r)
assert m and m.group(1) == sys.argv[2], r
assert float(m.group(2)) > 0, r
assert re.match(r"([0-9.e+-]+) B/s together", m.group(3)) or re.match(r"not run: the filesystem of .* refuses O_DIRECT", m.group(3)), r
# DDN AI400X2: 90 GB/s read for the 2 replicas
assert info["replay.storage_model"].startswith("simulated: the storage servers (cluster.storage) at 9e+10 B/s for all 2 replicas"), info["replay.storage_model"]
c = info["replay.checkpoint_write"]
m = re.match(r"([0-9.e+]+) bytes per rank \(train_ckpt_bytes ([0-9.e+]+): .* by 2 ranks at once: ([0-9.e+-]+) B/s together .*simulated: the whole checkpoint at the storage servers' write rate, 6.5e\+10 B/s, in ([0-9.e+-]+) s", c)
assert m, c
# 16 B per parameter: 8 layers x (12 h^2 + 13 h) + token and position embeddings
h, L, V, s = 1024, 8, 32000, 1024
params = L * (12 * h * h + 13 * h) + V * h + s * h
full = float(m.group(2))
assert abs(full / (16 * params) - 1) < 0.01, (full, 16 * params)
assert abs(float(m.group(1)) - full / 2 * scale) <= 1, c
assert float(m.group(3)) > 0 and abs(float(m.group(4)) / (full / 6.5e10) - 1) < 1e-4, c
g = info.get("gds.storage_gds_read_Bps") or info["gds.storage_not_replayed"]
assert "gds.storage_gds_read_Bps" in info or g.startswith("gds: cuFile"), g
assert [v["name"] for v in d["variants"]] == ["baseline"], d["variants"]
PY
if [ -z "$(ls -A "$E2E_TMP/st")" ]; then ok "nothing left in --dir"; else not_ok "left in --dir: $(ls -A "$E2E_TMP/st")"; fi

# A filesystem that refuses O_DIRECT: ramfs has no direct I/O at all.
RAM=$E2E_TMP/ramfs
mkdir -p "$RAM"
if [ "$(id -u)" -eq 0 ] && mount -t ramfs ramfs "$RAM" 2>/dev/null; then
	trap 'umount "$RAM" 2>/dev/null; rm -rf "$E2E_TMP"' EXIT
	mkdir "$RAM/data" "$RAM/st" && cp "$E2E_TMP/data/shard0.bin" "$RAM/data/"
	run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$SCN" --data "$RAM/data" --scale $SCALE \
		--timeout 20 --dir "$RAM/st" -o "$E2E_TMP/ram.json"
	expect_rc 0 "the replay runs on a filesystem that refuses O_DIRECT (ramfs)"
	py_check "the report says O_DIRECT was refused, for the storage reads and the data loader, and why" \
		"$E2E_TMP/ram.json" "$RAM/st" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))["info"]
r = info["replay.storage_read"]
want = "O_DIRECT not run: the filesystem of '%s' refuses O_DIRECT (Invalid argument)" % sys.argv[2]
assert r.endswith(want), r
assert "buffered pread" in r, r
d = info["replay.data"]
assert d.startswith("plain pread through the page cache (the filesystem refuses O_DIRECT: Invalid argument)"), d
PY
	if [ -z "$(ls -A "$RAM/st")" ]; then ok "nothing left on the ramfs"; else not_ok "left: $(ls -A "$RAM/st")"; fi
	# dpusim-hw bench (one rank) there: its report says why it has no
	# storage benchmark, and why no transport one, instead of lacking them
	run_cmd "$HW" bench --quick --dir "$RAM/st" -o "$E2E_TMP/ram-bench.json"
	expect_rc 0 "bench on the ramfs"
	expect_out "^  storage: skipped: the filesystem of '.*/st' refuses O_DIRECT \(Invalid argument\)" \
		"its table says the storage benchmark was skipped and why"
	if python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); i = d["info"]
assert i["skipped.storage"] == "the filesystem of '"'"'%s'"'"' refuses O_DIRECT (Invalid argument): no storage_read benchmark; pick another --dir" % sys.argv[2], i
assert i["skipped.transports"].startswith("1 rank"), i
assert not [b for b in d["benchmarks"] if b["transport"] == "storage"]' "$E2E_TMP/ram-bench.json" "$RAM/st"
	then ok "and so does its report (info skipped.storage, skipped.transports)"
	else not_ok "bench report lacks the skips: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["info"])' "$E2E_TMP/ram-bench.json")"; fi
	umount "$RAM"
else
	echo "skip - cannot mount a ramfs here (needs root): the O_DIRECT refusal is not exercised"
fi

run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$SCN" --data "$E2E_TMP/data" --scale $SCALE \
	--timeout 20 --dir "$E2E_TMP/no-such-dir" -o "$E2E_TMP/bad.json"
expect_rc 2 "a --dir that does not exist fails the run"
expect_err "storage replay: cannot create a file in '.*no-such-dir'" "naming it"
if [ ! -e "$E2E_TMP/bad.json" ]; then ok "and writes no report"; else not_ok "a report was written"; fi

finish
