# dpusim calibrate: fits bench reports into profiles the profile loader
# accepts, recovers known parameters from a synthetic bench, draws plots,
# and refuses bad input with exit 2 and nothing written.
. tests/e2e/lib.sh
TCP=tests/data/hw-bench-tcp.json     # real dpusim-hw bench output (tcp, 4 ranks, loopback)
SYN=tests/data/hw-bench-synth.json   # dpusim-hw's shape, values from known parameters
CAL=$E2E_TMP/cal
mkdir -p "$CAL" "$E2E_TMP/plots"

# ---- a real bench report ----
run_cmd "$DPUSIM" calibrate "$TCP" -o "$CAL/lab.yaml" --mtu 65536
expect_rc 0 "calibrate a real tcp bench report"
expect_out '^tcp_lat \(tcp, 2 ranks, half round trip, p50 at each size\), 5 sizes 8 B\.\.32 KiB:' "latency series fitted over its 5 sizes"
expect_out 'alpha = [0-9.]+ us \+- [0-9.]+ (ns|us), beta = ' "alpha and beta with standard errors"
expect_out 'residual \(fit - measured\) / measured: 8 B [+-][0-9.]+%, 64 B' "residual at each size"
expect_out 'allreduce_ring_busbw \(tcp, 4 ranks\)' "ring all-reduce fitted"
expect_out 'wrote .*/lab-host-costs.yaml \(profile .lab-host-costs., 6 fields measured\)' "host-costs profile written"
expect_out 'wrote .*/lab-storage.yaml' "storage profile written"
expect_out 'wrote .*/lab-cpu.yaml' "cpu profile written"
for k in host-costs storage cpu; do
	if [ -f "$CAL/lab-$k.yaml" ] && ! ls "$CAL"/*.tmp.* >/dev/null 2>&1; then ok "lab-$k.yaml in place, no temporary left"
	else not_ok "lab-$k.yaml missing or a temporary left behind"; fi
done

# The profile loader takes every file (all fields given or explained).
run_cmd "$DPUSIM" profiles --profile-dir "$CAL"
expect_rc 0 "every calibrated profile loads"
expect_out '^lab-host-costs +host-costs ' "host-costs listed by the loader"
run_cmd "$DPUSIM" profiles lab-host-costs --profile-dir "$CAL"
expect_rc 0 "show the calibrated host-costs profile"
expect_out 'source: dpusim calibrate of tests/data/hw-bench-tcp.json \(tcp, 4 ranks, host .vm.' "source names the bench file, transport, ranks and host"
expect_out 'alpha = [0-9.]+ us \+- ' "tcp_latency source carries alpha and its uncertainty"
expect_out 'tcp_cycles_per_packet +[0-9.e+]+cycles/packet' "per-packet cost given with --mtu"
expect_out 'missing: not measured by dpusim-hw bench' "unmeasured fields explained"

# Without --mtu the per-packet cost is explained, not invented.
run_cmd "$DPUSIM" calibrate "$TCP" -o "$CAL/nomtu.yaml"
expect_rc 0 "calibrate without --mtu"
run_cmd "$DPUSIM" profiles nomtu-host-costs --profile-dir "$CAL"
expect_out 'a per-packet cost needs the path.s MTU: rerun with --mtu' "per-packet cost listed as missing with the reason"

# --effective-ring: host-tcp costs that reproduce the measured ring, labelled so.
run_cmd "$DPUSIM" calibrate "$TCP" -o "$CAL/eff.yaml" --effective-ring
expect_rc 0 "calibrate --effective-ring"
run_cmd "$DPUSIM" profiles eff-host-costs --profile-dir "$CAL"
expect_out 'source: EFFECTIVE \(dpusim calibrate --effective-ring\) from the ring all-reduce' "effective values say what they are"
expect_out '^tcp_tx_cycles_per_byte +0cycles/byte' "send-side cost given as 0, inside the ring's B"
expect_out 'source: EFFECTIVE \(dpusim calibrate --effective-ring\): 0, the ring all-reduce.s B' "saying why"
expect_out 'missing: --effective-ring: the ring all-reduce.s B' "per-packet cost not counted twice"
if python3 - "$CAL/eff-host-costs.yaml" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
# The fixture's ring: alpha 53.32 us per step, B 0.207 GB/s; cpu_hz 2.59614 GHz.
lat = float(re.search(r"tcp_latency: \{ value: ([0-9.]+)us", t).group(1))
cpb = float(re.search(r"tcp_rx_cycles_per_byte: \{ value: ([0-9.]+)cycles", t).group(1))
assert abs(lat - 53.32) < 0.01, lat
assert abs(cpb - 2.59614e9 / 0.207e9) / cpb < 0.005, cpb
PY
then ok "effective tcp_latency = ring alpha, cycles/byte = cpu_hz / B"; else not_ok "effective values"; fi
# The point of an effective profile: the simulated ring is the measured one.
# Its send side left out, the model took the receive side's cost for it and
# the node's stack cores carried every byte twice: +60% at 64 KiB, +100% at
# 16 MiB against the fit.
mkdir -p "$CAL/run"
run_cmd "$DPUSIM" calibrate "$TCP" -o "$CAL/run/eff.yaml" --effective-ring --mtu 65536
expect_rc 0 "calibrate --effective-ring --mtu"
cat >"$CAL/run/ring.yaml" <<'YAML'
name: eff-ring
seed: 1
cluster:
  nodes: 4
  gpus_per_node: 1
  gpu: H100-SXM5
  cpu: { profile: eff-cpu, sockets: 1, cores_per_socket: 2 }
  host_costs: eff-host-costs
  nic: ConnectX-6-HDR
  nics_per_node: 1
  fabric: { topology: single-switch, link_rate: 100Gbps, switch: QM8700-HDR }
collectives: { protocol: ideal }
workload:
  kind: collective
  collective: { op: allreduce, algo: ring, sizes: [64KiB, 16MiB], ranks: 4, iterations: 1 }
variants:
  - name: baseline
    network: host-tcp
YAML
run_cmd "$DPUSIM" run "$CAL/run/ring.yaml" --profile "$CAL/run/eff-host-costs.yaml" \
	--profile "$CAL/run/eff-cpu.yaml" --json
expect_rc 0 "dpusim run with the effective profile"
if msg=$(python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
a, B, n = 53.32e-6, 0.207e9, 4   # the fixture ring fit (above)
for c in d["variants"][0]["collectives"]:
    S = c["bytes"]; fit = 2 * (n - 1) * a + 2 * (n - 1) / n * S / B
    e = (c["time_s"] - fit) / fit
    print("%d B %+.2f%%" % (S, e * 100), end="; ")
    assert abs(e) < 0.01, e
' <<<"$OUT" 2>&1); then ok "the simulated ring is the fitted one within 1%: $msg"
else not_ok "the simulated ring against the fit: $msg"; fi

# ---- known parameters come back (synthetic bench in dpusim-hw's shape) ----
run_cmd "$DPUSIM" calibrate "$SYN" -o "$CAL/syn.yaml" --peak-flops 989TFLOP/s --plot "$E2E_TMP/plots"
expect_rc 0 "calibrate the synthetic verbs + GPU bench"
expect_out 'alpha = 1.9 us \+- [0-9.e-]+ ns, beta = 0.04167' "rdma alpha 1.9 us, beta 1/24 GB/s recovered"
expect_out 'alpha = 6 us \+- [0-9.e-]+ ns per step, B = 22 GB/s' "ring per-step alpha and link bandwidth recovered"
expect_out 'ymax = 700 TFLOP/s \+- [0-9.e-]+, F_half = 50 GFLOP' "GEMM curve recovered by the nonlinear fit"
run_cmd grep -E '^  eff_max: \{ value: 70.78%' "$CAL/syn-gpu.yaml"
expect_rc 0 "eff_max = 700 / 989"
run_cmd grep -E '^  rdma_latency: \{ value: 1.9us' "$CAL/syn-nic.yaml"
expect_rc 0 "nic rdma_latency written (RDMA WRITE)"
run_cmd grep -E '^# send/recv latency: .*alpha = 2.09 us' "$CAL/syn-nic.yaml"
expect_rc 0 "send/recv fitted and noted in the nic profile"
run_cmd "$DPUSIM" profiles --profile-dir "$CAL"
expect_rc 0 "nic and gpu profiles load too"
if command -v gnuplot >/dev/null; then
	n=$(ls "$E2E_TMP/plots"/syn-*.png 2>/dev/null | wc -l)
	if [ "$n" -eq 6 ]; then ok "--plot drew the 6 fits"; else not_ok "--plot drew $n pictures, expected 6"; fi
fi

# Two reports at once: the verbs alpha of the path is taken off the tcp alpha.
run_cmd "$DPUSIM" calibrate "$TCP" "$SYN" -o "$CAL/both.yaml"
expect_rc 0 "calibrate a tcp and a verbs report together"
run_cmd grep -E '^  tcp_latency: \{ value: 8.42[0-9]*us, source: "tcp alpha minus rdma_write alpha' "$CAL/both-host-costs.yaml"
expect_rc 0 "tcp_latency = tcp alpha (10.32 us) - rdma alpha (1.9 us)"

# ---- bad input: exit 2, a clear message, nothing written ----
BAD=$E2E_TMP/bad
mkdir -p "$BAD"
run_cmd "$DPUSIM" calibrate "$E2E_TMP/none.json" -o "$BAD/x.yaml"
expect_rc 2 "missing bench file"
expect_err 'none.json' "the message names the file"
printf '{ "schema": "dpusim-report/1", "source": "hw",\n  "version": 3 }\n' > "$E2E_TMP/broken.json"
run_cmd "$DPUSIM" calibrate "$E2E_TMP/broken.json" -o "$BAD/x.yaml"
expect_rc 2 "malformed report"
expect_err 'broken.json:[0-9]+:[0-9]+: ' "file:line:column in the message"
run_cmd "$DPUSIM" calibrate tests/data/report-sim.json -o "$BAD/x.yaml"
expect_rc 2 "a report without benchmarks"
expect_err 'no benchmarks in the report' "says there is nothing to fit"
run_cmd "$DPUSIM" calibrate tests/data/report-bench.json -o "$BAD/x.yaml"
expect_rc 2 "single-size series only: nothing can be fitted"
expect_err 'nothing in tests/data/report-bench.json could be fitted' "says nothing could be fitted"
run_cmd "$DPUSIM" calibrate "$TCP"
expect_rc 2 "no -o"
run_cmd "$DPUSIM" calibrate "$TCP" -o "$BAD/x.json"
expect_rc 2 "-o not ending in .yaml"
run_cmd "$DPUSIM" calibrate "$TCP" -o "$BAD/x.yaml" --plot "$E2E_TMP/no-such-dir"
expect_rc 2 "--plot into a missing folder"
run_cmd "$DPUSIM" calibrate "$TCP" -o "$BAD/x.yaml" --peak-flops 989Gbps
expect_rc 2 "--peak-flops of the wrong dimension"
run_cmd "$DPUSIM" calibrate "$TCP" -o "$BAD/x.yaml" --mtu 10
expect_rc 2 "--mtu out of range"
run_cmd "$DPUSIM" calibrate "$SYN" -o "$BAD/x.yaml" --effective-ring
expect_rc 2 "--effective-ring without a tcp ring series"
expect_err 'no tcp ring all-reduce series \(allreduce_ring_busbw\) in tests/data/hw-bench-synth.json' "says why, naming the report"
run_cmd "$DPUSIM" calibrate "$TCP" -o "$BAD/x.yaml" --frobnicate 1
expect_rc 2 "unknown option"
if [ -z "$(ls -A "$BAD")" ]; then ok "nothing written on bad input"; else not_ok "files left: $(ls "$BAD")"; fi

finish
