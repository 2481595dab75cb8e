# The p2p workload through the command line: perftest's ib_write_bw and
# ib_write_lat as dpusim run predicts them (report rows, the human table in
# perftest's units, the dump), and what it refuses (host-tcp, --trace,
# plan), each with its place and exit status 2.
. tests/e2e/lib.sh

json_rows() { # prints "algo bytes time_s algbw_GBps" per row of variant $1 of $OUT
	python3 -c 'import json,sys
r = json.load(sys.stdin)
v = [v for v in r["variants"] if v["name"] == sys.argv[1]][0]
for c in v["collectives"]:
    assert c["op"] == "sendrecv" and c["ranks"] == 2, c
    print(c["algo"], c["bytes"], repr(c["time_s"]), repr(c["algbw_GBps"]))' "$1" <<<"$OUT"
}

# Bandwidth: one QP, 8 MiB, ConnectX-6 HDR at 200 Gb/s = 25 GB/s: the
# stream reaches the wire's payload rate, 25e9 x 4096 / 4122 (LRH, BTH,
# ICRC, VCRC per 4096-byte packet), and never passes it.
run_cmd "$DPUSIM" run tests/validation/perftest-cx6-write-bw.yaml --json
expect_rc 0 "ib_write_bw scenario runs"
ROWS=$(json_rows host)
if python3 -c 'import sys
a, b, t, bw = sys.argv[1].split()
wire = 25e9 * 4096 / 4122 / 1e9
assert a == "ib_write_bw" and int(b) == 8388608, (a, b)
assert 0.999 * wire <= float(bw) <= wire, (bw, wire)
assert abs(float(t) - int(b) / (float(bw) * 1e9)) < 1e-15, t' "$ROWS"; then
	ok "ib_write_bw 8 MiB at the wire's payload rate, time = bytes / bandwidth ($ROWS)"
else not_ok "ib_write_bw row: $ROWS"; fi

# Latency: grows with size; the 1 MiB one-way time is its wire bytes at the
# link rate plus the CPU's doorbell write (half the scenario's pcie_read_lat
# of 546 ns), the adapter (0.6 us) and switch (130 ns) latencies, the
# receiving adapter's write into memory (half of 546 ns), the waiting CPU's
# poll (the EPYC 7742's mem_lat, 122 ns) and the sending adapter's read of
# the payload (546 ns); 2 B is inlined (perftest's 220 B for writes): no
# read.
run_cmd "$DPUSIM" run tests/validation/perftest-cx6-write-lat.yaml --json
expect_rc 0 "ib_write_lat scenario runs"
ROWS=$(json_rows host)
if python3 -c 'import sys
rows = [l.split() for l in sys.argv[1].splitlines()]
t = [float(r[2]) for r in rows]
assert all(r[0] == "ib_write_lat" for r in rows)
assert t == sorted(t) and len(set(t)) == len(t), t
b = 1048576
fixed = 273e-9 + 0.6e-6 + 130e-9 + 273e-9 + 122e-9
want = fixed + 546e-9 + (b + 256 * 26 + 16) / 25e9
assert abs(t[-1] - want) < 1e-11, (t[-1], want)
# 2 B: the same without the read, and the slower of its wire bytes and the
# adapter time per message (ConnectX-6 msg_rate 215 M/s), either way
want = fixed + max((2 + 26 + 16) / 25e9, 1 / 215e6)
assert abs(t[0] - want) < 1e-11, (t[0], want)' "$ROWS"; then
	ok "ib_write_lat grows with size; 2 B (inlined) and 1 MiB are the closed form"
else not_ok "ib_write_lat rows: $ROWS"; fi
run_cmd "$DPUSIM" run tests/validation/perftest-cx6-write-lat.yaml
expect_out 'host\.note[0-9]+: p2p: each message reaches the waiting CPU.s memory 0\.273 us after its last byte.*inline size \(220 B here\) first waits 0\.546 us' "notes give the PCIe crossings"
expect_out 'host\.note[0-9]+: p2p: each message reaches its adapter 0\.273 us after the CPU posts it' "notes give the doorbell"
expect_out 'host\.note[0-9]+: p2p: the waiting CPU sees a message 0\.122 us after it is in memory' "notes give the poll"

# Without a pcie_read_lat (the EPYC 7742's profile publishes none) the
# crossings (doorbell, payload read, write into memory) are left out, and
# the notes say so.
cat >"$E2E_TMP/noread.yaml" <<EOF
extends: $PWD/tests/validation/perftest-cx6-write-lat.yaml
cluster: { cpu: EPYC-7742 }
EOF
run_cmd "$DPUSIM" run "$E2E_TMP/noread.yaml" --json
expect_rc 0 "ib_write_lat without pcie_read_lat runs"
NOREAD=$(json_rows host)
if python3 -c 'import sys
a = [float(l.split()[2]) for l in sys.argv[1].splitlines()]
b = [float(l.split()[2]) for l in sys.argv[2].splitlines()]
assert abs(a[0] - b[0] - 546e-9) < 1e-11 and abs(a[-1] - b[-1] - 1092e-9) < 1e-11, (a, b)' "$ROWS" "$NOREAD"; then
	ok "the crossings add 546 ns to an inlined message, 1092 ns to a read one"
else not_ok "with and without pcie_read_lat: $ROWS / $NOREAD"; fi
run_cmd "$DPUSIM" run "$E2E_TMP/noread.yaml"
expect_out "host\.note[0-9]+: p2p: the adapters' PCIe crossings .* not modelled: the CPU profile gives no pcie_read_lat" "notes say the crossings are left out"
expect_out "host\.note[0-9]+: p2p: the CPU's doorbell write to the adapter not modelled: the CPU profile gives no pcie_read_lat" "notes say the doorbell is left out"

# Without a mem_lat (the Xeon 8480C's profile publishes none) the poll is
# left out: every size 122 ns faster than with the EPYC 7742's.
cat >"$E2E_TMP/nopoll.yaml" <<EOF
extends: $PWD/tests/validation/perftest-cx6-write-lat.yaml
cluster: { cpu: { profile: Xeon-8480C, pcie_read_lat: 546ns } }
EOF
run_cmd "$DPUSIM" run "$E2E_TMP/nopoll.yaml" --json
expect_rc 0 "ib_write_lat without mem_lat runs"
NOPOLL=$(json_rows host)
if python3 -c 'import sys
a = [float(l.split()[2]) for l in sys.argv[1].splitlines()]
b = [float(l.split()[2]) for l in sys.argv[2].splitlines()]
assert len(a) == len(b) and all(abs(x - y - 122e-9) < 1e-11 for x, y in zip(a, b)), (a, b)' "$ROWS" "$NOPOLL"; then
	ok "the poll adds 122 ns to every size"
else not_ok "with and without mem_lat: $ROWS / $NOPOLL"; fi
run_cmd "$DPUSIM" run "$E2E_TMP/nopoll.yaml"
expect_out "host\.note[0-9]+: p2p: the CPU's poll that sees a message not modelled: the CPU profile gives no mem_lat" "notes say the poll is left out"

# The table in perftest's units: MB/s of 2^20 bytes and Gb/s.
run_cmd "$DPUSIM" run tests/validation/perftest-cx6-write-bw.yaml
expect_out '^perftest +size +variant +BW \(MB/s\) +Gb/s +time$' "the table's perftest section"
expect_out '^ib_write_bw +8 MiB +host +23,69[0-9] +198\.[0-9] ' "8 MiB in MB/s (2^20) and Gb/s"
if grep -q '^collective ' <<<"$OUT"; then not_ok "p2p rows also printed as collectives"
else ok "p2p rows are not printed as collectives"; fi
expect_out 'host\.note[0-9]+: p2p: wire bytes per packet from the InfiniBand' "notes say what the wire carries"
if grep -q '^collectives: ' <<<"$OUT"; then not_ok "info names a collective model though none ran"
else ok "no collective model in the info: none ran"; fi

# From GPU memory (rdma-gdr) the stream crosses the GPU's PCIe link; the
# shipped example holds both and the ConnectX-7's 400 Gb/s binds both.
run_cmd "$DPUSIM" run scenarios/perftest-ndr.yaml --json
expect_rc 0 "the shipped perftest-ndr example runs"
H=$(json_rows host-memory | tail -1) G=$(json_rows gpu-memory | tail -1)
if python3 -c 'import sys
h, g = (float(x.split()[3]) for x in sys.argv[1:])
wire = 50e9 * 4096 / 4122 / 1e9
assert 0.999 * wire <= h <= wire and 0.999 * wire <= g <= wire, (h, g)' "$H" "$G"; then
	ok "host and GPU memory both reach the NDR wire at 8 MiB"
else not_ok "perftest-ndr 8 MiB rows: $H / $G"; fi

# One message in flight: perftest lowers its completion moderation (100)
# to the depth, so each message waits for the one before (a stall before).
cat >"$E2E_TMP/depth1.yaml" <<EOF
extends: $PWD/tests/validation/perftest-cx6-write-bw.yaml
workload: { p2p: { test: write_bw, sizes: [2B], tx_depth: 1, iterations: 50 } }
EOF
run_cmd "$DPUSIM" run "$E2E_TMP/depth1.yaml" --json
expect_rc 0 "tx_depth 1 runs"
ROWS=$(json_rows host)
if python3 -c 'import sys
t = float(sys.argv[1].split()[2])
assert 2 * 0.73e-6 < t < 2 * 0.73e-6 * 1.01, t' "$ROWS"; then
	ok "tx_depth 1: a message per round trip ($ROWS)"
else not_ok "tx_depth 1 row: $ROWS"; fi

# Reads: the responses come back; with 16 outstanding an 8 MiB read stream
# reaches the wire as the write does; ib_read_lat is a whole round trip
# (two one-way latencies and the response), not half of one.
cat >"$E2E_TMP/read.yaml" <<EOF
extends: $PWD/tests/validation/perftest-cx6-write-bw.yaml
workload: { p2p: { test: read_bw, sizes: [8MiB], outstanding_reads: 16, iterations: 200 } }
EOF
run_cmd "$DPUSIM" run "$E2E_TMP/read.yaml" --json
expect_rc 0 "ib_read_bw runs"
ROWS=$(json_rows host)
if python3 -c 'import sys
a, b, t, bw = sys.argv[1].split()
wire = 25e9 * 4096 / 4122 / 1e9
assert a == "ib_read_bw" and 0.999 * wire <= float(bw) <= wire, (a, bw)' "$ROWS"; then
	ok "ib_read_bw 8 MiB at the wire ($ROWS)"
else not_ok "ib_read_bw row: $ROWS"; fi
cat >"$E2E_TMP/readlat.yaml" <<EOF
extends: $PWD/tests/validation/perftest-cx6-write-bw.yaml
workload: { p2p: { test: read_lat, sizes: [2B], iterations: 10, qps: null } }
EOF
run_cmd "$DPUSIM" run "$E2E_TMP/readlat.yaml" --json
ROWS=$(json_rows host)
if python3 -c 'import sys
a, b, t, bw = sys.argv[1].split()
# the slower of its wire bytes at 25 GB/s and the adapter time per
# message (ConnectX-6 msg_rate 215 M/s): 4.65 ns; and the requester poll
# of its completion (mem_lat of the EPYC 7742, 122 ns; no pcie_read_lat in
# this scenario, so no doorbell, payload read or write into memory)
want = 2 * (0.6e-6 + 130e-9) + 122e-9 + max((2 + 26 + 4) / 25e9, 1 / 215e6)
assert a == "ib_read_lat" and abs(float(t) - want) < 1e-11, (a, t, want)' "$ROWS"; then
	ok "ib_read_lat 2 B is the round trip ($ROWS)"
else not_ok "ib_read_lat row: $ROWS"; fi

# The dump is a scenario that runs to the same report.
run_cmd "$DPUSIM" run scenarios/perftest-ndr.yaml --dump
printf '%s\n' "$OUT" >"$E2E_TMP/dump.yaml"
A=$("$DPUSIM" run scenarios/perftest-ndr.yaml --json | grep -v '"file"\|"sha256"\|"version"')
B=$("$DPUSIM" run "$E2E_TMP/dump.yaml" --json | grep -v '"file"\|"sha256"\|"version"')
if [ "$A" = "$B" ]; then ok "the dump runs to the same rows"; else not_ok "the dump's report differs"; fi

# What it refuses: host TCP (perftest runs verbs), a trace, a layout plan.
cat >"$E2E_TMP/tcp.yaml" <<EOF
extends: $PWD/tests/validation/perftest-cx6-write-bw.yaml
cluster: { host_costs: host-costs-linux }
variants:
  - name: tcp
    network: host-tcp
EOF
run_cmd "$DPUSIM" check "$E2E_TMP/tcp.yaml"
expect_rc 2 "host-tcp variant refused"
expect_err "tcp.yaml:[0-9]+:[0-9]+: variant 'tcp': a p2p benchmark runs RDMA verbs" "placed at the variant"
run_cmd "$DPUSIM" run tests/validation/perftest-cx6-write-lat.yaml --trace "$E2E_TMP/t.json"
expect_rc 2 "--trace refused"
expect_err "is a p2p benchmark, and a trace is" "--trace says why"
cat >"$E2E_TMP/slow.yaml" <<EOF
extends: $PWD/scenarios/perftest-ndr.yaml
cluster: { fabric: { link_rate: 1bps } }
EOF
run_cmd "$DPUSIM" run "$E2E_TMP/slow.yaml"
expect_rc 2 "a test past the clock refused before it runs"
expect_err "perftest-ndr.yaml:[0-9]+:[0-9]+: variant 'host-memory': p2p ib_write_bw of 1024 bytes, 5000 times: up to about .* past the simulator's horizon" "named with its size, at the variant"
run_cmd "$DPUSIM" plan tests/validation/perftest-cx6-write-lat.yaml
expect_rc 2 "plan refuses a p2p benchmark"
finish
