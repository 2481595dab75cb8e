#!/bin/bash
# Failures per component, energy per component and cost (issue 5: "MTBF per
# component", "power per component and PUE", "tokens per dollar"), checked
# against figures computed here from the resolved scenario (`run --dump`) and
# the report's own utilisations, never against numbers from an earlier run.
. "$(dirname "$0")/lib.sh"
SC=tests/e2e/data/failures-cost.yaml
BASE=scenarios/effects/goodput-mtbf-634h.yaml

run_cmd "$DPUSIM" run "$SC" --json
expect_rc 0 "run $SC"
cp "$E2E_TMP/out" "$E2E_TMP/rep.json"
run_cmd "$DPUSIM" run "$SC" --dump
expect_rc 0 "dump $SC"
cp "$E2E_TMP/out" "$E2E_TMP/dump.yaml"
run_cmd "$DPUSIM" run "$BASE" --json
expect_rc 0 "run $BASE (node MTBF only)"
cp "$E2E_TMP/out" "$E2E_TMP/base.json"

out=$(python3 - "$E2E_TMP" <<'PYEOF' 2>&1
import json, math, re, sys, yaml
d = sys.argv[1]
rep = json.load(open(f"{d}/rep.json")); base = json.load(open(f"{d}/base.json"))
s = yaml.safe_load(open(f"{d}/dump.yaml"))
def si(v):
    return float(v) if isinstance(v, (int, float)) else float(re.match(r"[-+0-9.eE]+", v).group(0))
def check(cond, what):
    print(("ok - " if cond else "not ok - ") + what)
def near(a, b, rel=1e-6):
    return abs(a - b) <= rel * abs(b)
c, fl, k = s["cluster"], s["failures"], s["cost"]
nodes, gpn, nics = c["nodes"], c["gpus_per_node"], c["nics_per_node"]
gpus = nodes * gpn
# Job failure rate: nodes, GPUs, adapters and switches each as parts
# (models/reliab.h). A single-switch fabric has one switch (the nodes'
# NVSwitches are not fabric switches).
assert c["fabric"]["topology"] == "single-switch"
switches = 1
rate = (nodes / si(fl["node_mtbf"]) + gpus / si(fl["gpu_mtbf"]) + nodes * nics / si(fl["nic_mtbf"])
        + switches / si(fl["switch_mtbf"]))
M = 1 / rate
tau, R = si(fl["checkpoint_interval"]), si(fl["restart"])
delta = si(fl["checkpoint_size"]) / (si(c["storage"]["server"]["write_bw"]) * si(c["storage"]["servers"]))
want = tau / (M * math.exp(R / M) * (math.exp((tau + delta) / M) - 1))
check("job MTBF %.4g h (%d nodes, %d GPUs, %d adapters, %d switches " % (M / 3600, nodes, gpus, nodes * nics, switches)
      in rep["info"]["checkpoint_interval"],
      f"the report gives the job MTBF {M/3600:.4g} h (nodes, GPUs, NICs and the switch)")
g0 = base["variants"][0]["metrics"]["goodput"]
price, e_price, pue = si(k["gpu_price"]), si(k["energy_price"]), si(k["pue"])
gpu, cpu, nic = c["gpu"], c["cpu"], c["nic"]
for v in rep["variants"]:
    n, m = v["name"], v["metrics"]
    check(near(m["goodput"], want), f"{n}: goodput {m['goodput']:.5f} = Daly at the job MTBF {want:.5f}")
    check(m["goodput"] < g0, f"{n}: GPU and NIC failures lower goodput from {g0:.5f} (node MTBF alone)")
    ttt = m["time_to_train_s"]
    check(near(m["cost_usd"], ttt * gpus * price), f"{n}: cost {m['cost_usd']:.2f} USD = time to train x {gpus} GPUs x GPU price (no DPU: no DPU term)")
    check(near(m["tokens_per_usd"], si(s["workload"]["target_tokens"]) / m["cost_usd"]),
          f"{n}: {m['tokens_per_usd']:.4g} tokens per USD = target tokens / cost")
    w_gpu = gpus * (si(gpu["idle_w"]) + (si(gpu["tdp_w"]) - si(gpu["idle_w"])) * m["gpu_util"])
    w_cpu = nodes * si(cpu["sockets"]) * (si(cpu["idle_w"]) + (si(cpu["tdp_w"]) - si(cpu["idle_w"])) * m["host_cpu_util"])
    w_nic = nodes * nics * si(nic["power_w"])
    w_sw = switches * si(c["fabric"]["switch"]["power_w"])
    kwh = pue * (w_gpu + w_cpu + w_nic + w_sw) * ttt / 3.6e6
    check(near(m["energy_kwh"], kwh), f"{n}: energy {m['energy_kwh']:.2f} kWh = PUE x (GPUs {w_gpu:.0f} W + CPUs {w_cpu:.0f} W + NICs {w_nic:.0f} W + switch {w_sw:.0f} W) x time")
    left = rep["info"][f"{n}.energy"].split("left out: ")[1]
    check(left == "storage servers (shared by the jobs)", f"{n}: energy leaves out only: {left}")
    cost_line = rep["info"][f"{n}.energy_cost"]
    usd = float(re.search(r"= ([0-9.e+]+) USD", cost_line).group(1))
    check(near(usd, kwh * e_price * 3.6e6, 1e-5) and "not added to cost_usd" in cost_line,
          f"{n}: energy cost {usd:.2f} USD = kWh x energy price, reported beside the all-in cost")
tcp = {v["name"]: v["metrics"] for v in rep["variants"]}
check(tcp["host-tcp"]["host_cpu_util"] > tcp["rdma-gdr"]["host_cpu_util"],
      "host-tcp keeps the CPUs busier than rdma-gdr (their power follows host_cpu_util)")
# The scenario it extends has no cost section.
b = base["variants"][0]["metrics"]
check("cost_usd" not in b and "energy_kwh" not in b, "no cost section: no cost, no energy")
PYEOF
)
tally_checks "$out"

# A cost section on a CPU without idle power: energy covers the rest and
# names what it left out.
cat >"$E2E_TMP/nocpu.yaml" <<EOF
name: nocpu
extends: $PWD/$SC
cluster:
  cpu: Xeon-8480C
EOF
run_cmd "$DPUSIM" run "$E2E_TMP/nocpu.yaml"
expect_rc 0 "run with a CPU profile that gives no power"
expect_out 'energy: facility draw .* left out: CPUs \(no tdp_w and idle_w\)' "the report names the CPUs as left out of the energy"
finish
