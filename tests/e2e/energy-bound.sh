#!/bin/bash
# Energy of the shipped scenario and the GPU upper bound (issue 5: "power
# per component (GPU by utilisation ...) and PUE"; models/power.h,
# pwr_part_bound_above). No GPU profile has a published idle power, so a
# run draws each GPU at its TDP throughout and says the energy is an upper
# bound. Every expected figure is computed here from the resolved scenario
# (`run --dump`) and the report's own metrics, never from an earlier run.
. "$(dirname "$0")/lib.sh"
SC=scenarios/gpt3-175b-1024xh100.yaml
SMALL=tests/e2e/data/failures-cost.yaml

# One replication (the scenario asks for 3) of 2 iterations (it asks for
# 10): every figure below is checked against the report's own times, so
# more only multiplied the cost (18 s of CPU in the plain build and 68 s
# under the sanitizers for 10, the very run run-scenarios.sh makes).
cat >"$E2E_TMP/short.yaml" <<EOF
extends: $PWD/$SC
workload:
  iterations: 2
EOF
run_cmd "$DPUSIM" run "$E2E_TMP/short.yaml" --json --replications 1
expect_rc 0 "run $SC (2 iterations)"
cp "$E2E_TMP/out" "$E2E_TMP/rep.json"
run_cmd "$DPUSIM" run "$E2E_TMP/short.yaml" --dump
expect_rc 0 "dump $SC (2 iterations)"
cp "$E2E_TMP/out" "$E2E_TMP/dump.yaml"
# The small what-if scenario with its GPU idle power (100 W) and the same
# without it (the profile's, i.e. none): only the energy may differ.
run_cmd "$DPUSIM" run "$SMALL" --json
expect_rc 0 "run $SMALL (GPU idle power given)"
cp "$E2E_TMP/out" "$E2E_TMP/given.json"
run_cmd "$DPUSIM" run "$SMALL" --dump
expect_rc 0 "dump $SMALL"
cp "$E2E_TMP/out" "$E2E_TMP/given.yaml"
cat >"$E2E_TMP/noidle.yaml" <<EOF
name: noidle
extends: $PWD/$SMALL
cluster:
  gpu: H100-SXM5
EOF
run_cmd "$DPUSIM" run "$E2E_TMP/noidle.yaml" --json
expect_rc 0 "run the same without a GPU idle power"
cp "$E2E_TMP/out" "$E2E_TMP/bound.json"

out=$(python3 - "$E2E_TMP" <<'PYEOF' 2>&1
import json, re, sys, yaml
d = sys.argv[1]
def si(v):
    return float(v) if isinstance(v, (int, float)) else float(re.match(r"[-+0-9.eE]+", v).group(0))
def check(cond, what):
    print(("ok - " if cond else "not ok - ") + what)
def near(a, b, rel=1e-6):
    return abs(a - b) <= rel * abs(b)

# 1. The shipped scenario: GPUs at TDP and NICs at their typical power,
# times the PUE, over the time to train; CPUs, DPUs, switches (no power
# figure) and storage (shared) left out and named.
rep = json.load(open(f"{d}/rep.json"))
s = yaml.safe_load(open(f"{d}/dump.yaml"))
c, k = s["cluster"], s["cost"]
gpus = c["nodes"] * c["gpus_per_node"]
nics = c["nodes"] * c["nics_per_node"]
check("idle_w" not in c["gpu"], "the H100-SXM5 profile gives no idle power (so the bound applies)")
tdp, nic_w, pue = si(c["gpu"]["tdp_w"]), si(c["nic"]["power_w"]), si(k["pue"])
usd_per_kwh = si(k["energy_price"]) * 3.6e6
it_w = gpus * tdp + nics * nic_w
m = {}
for v in rep["variants"]:
    n, mm = v["name"], v["metrics"]
    m[n] = mm
    ttt = mm["time_to_train_s"]
    kwh = pue * it_w * ttt / 3.6e6
    check(near(mm["energy_kwh"], kwh),
          f"{n}: energy {mm['energy_kwh']:.0f} kWh = PUE {pue} x ({gpus} GPUs x {tdp:.0f} W + {nics} NICs x {nic_w} W) x {ttt/86400:.3f} days")
    line = rep["info"][f"{n}.energy"]
    check("UPPER BOUND: GPUs at their TDP throughout" in line, f"{n}: the report says the energy is an upper bound")
    # Only the bluefield3 variant has a DPU (its own hardware): only it names one.
    dpus = "DPUs (no power_w), " if n == "bluefield3" else ""
    check(line.endswith(f"left out: CPUs (no tdp_w and idle_w), {dpus}switches (no power_w), storage servers (shared by the jobs)"),
          f"{n}: the parts without a power figure are named as left out")
    usd = float(re.search(r"= ([0-9.e+]+) USD", rep["info"][f"{n}.energy_cost"]).group(1))
    check(near(usd, kwh * usd_per_kwh, 1e-5), f"{n}: energy cost {usd:.0f} USD = kWh x {usd_per_kwh:.2f} USD/kWh")
    # Size: per GPU-hour, the bound is PUE x (TDP + the GPU's share of NICs).
    per_gpu_h = mm["energy_kwh"] / (gpus * ttt / 3600)
    check(near(per_gpu_h, pue * (tdp + nic_w * nics / gpus) / 1000),
          f"{n}: {per_gpu_h:.4f} kWh per GPU-hour = PUE x (700 W + 24.9 W) / 1000")
# Direction: the faster variant uses less energy, in proportion to its time.
b, r = m["baseline"], m["connectx7-rdma-gdr"]
check(r["time_to_train_s"] < b["time_to_train_s"] and r["energy_kwh"] < b["energy_kwh"],
      f"RDMA trains faster and so uses less energy ({r['energy_kwh']:.0f} < {b['energy_kwh']:.0f} kWh)")
check(near(r["energy_kwh"] / b["energy_kwh"], r["time_to_train_s"] / b["time_to_train_s"]),
      "at a constant draw, the energies are in the ratio of the times to train")

# 2. The bound against a given idle power: same run, same times; the bound
# exceeds it by PUE x GPUs x (TDP - idle) x (1 - gpu_util) x time.
g = json.load(open(f"{d}/given.json")); u = json.load(open(f"{d}/bound.json"))
gs = yaml.safe_load(open(f"{d}/given.yaml"))
gc = gs["cluster"]
ggpus = gc["nodes"] * gc["gpus_per_node"]
gtdp, gidle, gpue = si(gc["gpu"]["tdp_w"]), si(gc["gpu"]["idle_w"]), si(gs["cost"]["pue"])
for gv, uv in zip(g["variants"], u["variants"]):
    n, gm, um = gv["name"], gv["metrics"], uv["metrics"]
    check(um["time_to_train_s"] == gm["time_to_train_s"], f"{n}: the GPU idle power does not change the time to train")
    gap = gpue * ggpus * (gtdp - gidle) * (1 - gm["gpu_util"]) * gm["time_to_train_s"] / 3.6e6
    check(um["energy_kwh"] > gm["energy_kwh"] and near(um["energy_kwh"] - gm["energy_kwh"], gap, 1e-5),
          f"{n}: bound {um['energy_kwh']:.1f} kWh exceeds {gm['energy_kwh']:.1f} kWh (idle {gidle:.0f} W at gpu_util {gm['gpu_util']:.3f}) by {gap:.1f} kWh")
    check("UPPER BOUND" not in g["info"][f"{n}.energy"] and "UPPER BOUND" in u["info"][f"{n}.energy"],
          f"{n}: only the run without an idle power is called an upper bound")
PYEOF
)
tally_checks "$out"
finish
