# Variants with hardware and prices of their own (issue 15): each variant's
# cost counts only the hardware it has, the report names each variant's bill
# of materials, --dump keeps the variant's hardware (its dump runs to the
# same report), and a sweep resolves each variant's hardware at every point.
. tests/e2e/lib.sh
F=tests/data/variant-hardware.yaml

run_cmd "$DPUSIM" run "$F" --json --replications 1
expect_rc 0 "a scenario whose variants carry their own hardware runs"
echo "$OUT" > "$E2E_TMP/r.json"
nic_w=$("$DPUSIM" profiles ConnectX-7-NDR | sed -n 's/^power_w *\([0-9.]*\)W$/\1/p')
tally_checks "$(python3 - "$E2E_TMP/r.json" "$nic_w" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
nic_w = float(sys.argv[2])
v = {x["name"]: x for x in r["variants"]}
cx, bf, rails = v["connectx7-host-crypto"], v["bluefield3-inline"], v["bluefield3-rails"]
gpus, nodes = 16, 2
def cost_per_hour(x):
    m = x["metrics"]
    return m["cost_usd"] / (m["time_to_train_s"] / 3600)
def check(cond, msg):
    print(("ok - " if cond else "not ok - ") + msg)
c, b = cost_per_hour(cx), cost_per_hour(bf)
check(abs(c - gpus * 2.5) < 1e-6 * c, "the ConnectX-7 variant pays for its GPUs only: %.4f USD/h" % c)
check(abs(b - (gpus * 2.5 + nodes * 0.15)) < 1e-6 * b,
      "the BlueField-3 variant pays for its GPUs and its own DPUs: %.4f USD/h" % b)
hw = r["info"]
check("BlueField-3" not in hw["connectx7-host-crypto.hardware"] and "400 Gb/s" in hw["connectx7-host-crypto.hardware"],
      "the ConnectX-7 variant's bill of materials has no DPU and the scenario's links")
check("1 x BlueField-3" in hw["bluefield3-inline.hardware"] and "200 Gb/s" in hw["bluefield3-inline.hardware"]
      and "DPU 0.15 USD/h" in hw["bluefield3-inline.hardware"],
      "the BlueField-3 variant's bill of materials has its DPU, its links and its price")
# A BlueField-3 on each rail in place of the ConnectX-7s (dpus_replace_nics):
# 8 DPUs and no NIC per node, in its bill of materials, its price (the DPU
# price is over the NIC it replaces, inside the all-in GPU price) and its
# draw: no NIC power, the DPUs' left out (none published) and named so.
check(abs(cost_per_hour(rails) - (gpus * 2.5 + nodes * 8 * 0.15)) < 1e-6 * cost_per_hour(rails),
      "the rail-DPU variant pays for its GPUs and 8 DPUs per node: %.4f USD/h" % cost_per_hour(rails))
rh = hw["bluefield3-rails.hardware"]
check("8 x BlueField-3 (the rail adapters, no NIC" in rh and "8 x ConnectX-7" not in rh,
      "the rail-DPU variant's bill of materials lists its 8 DPUs and no NIC: " + rh)
def draw_w(x):
    m = x["metrics"]
    return m["energy_kwh"] * 3.6e6 / m["time_to_train_s"]
want = draw_w(cx) - gpus * nic_w
check(nic_w > 0 and abs(draw_w(rails) - want) < 1e-6 * want,
      "the rail-DPU variant draws no NIC power: %.1f W = %.1f W - 16 x %.1f W" % (draw_w(rails), draw_w(cx), nic_w))
check(abs(draw_w(bf) - draw_w(cx)) < 1e-6 * draw_w(cx) and "DPUs (no power_w)" in hw["bluefield3-rails.energy"],
      "the DPUs beside or in place of NICs are left out of the energy, and named")
PY
)"

run_cmd "$DPUSIM" run "$F" --dump
expect_rc 0 "--dump of variants with their own hardware"
echo "$OUT" > "$E2E_TMP/dump.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/dump.yaml" --json --replications 1
expect_rc 0 "the dump runs"
echo "$OUT" > "$E2E_TMP/d.json"
python3 - "$E2E_TMP/r.json" "$E2E_TMP/d.json" <<'PY' && ok "the dump gives the same figures" || not_ok "the dump's figures differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert [v["metrics"] for v in a["variants"]] == [v["metrics"] for v in b["variants"]]
PY

# A sweep over the scenario's nodes: every point resolves each variant's own
# hardware (the BlueField-3 variant keeps its DPU and 200 Gb/s at 2 and 4).
cat > "$E2E_TMP/sw.yaml" <<YAML
extends: $PWD/$F
sweep: { cluster.nodes: [2, 4] }
YAML
run_cmd "$DPUSIM" sweep "$E2E_TMP/sw.yaml" --db "$E2E_TMP/sw.db" -o "$E2E_TMP/sw"
expect_rc 0 "a sweep of variants with their own hardware"
n=$(cat "$E2E_TMP"/sw/*.json 2>/dev/null | grep -c '1 x BlueField-3; [24] nodes; fabric single-switch, 200 Gb/s')
[ "$n" -eq 2 ] && ok "each point's BlueField-3 variant has its DPU and links" || not_ok "sweep points with the variant's hardware: $n of 2"
# The variants themselves as a sweep dimension: one point per hardware
# choice, each point's variant on its own hardware.
cat > "$E2E_TMP/swv.yaml" <<YAML
extends: $PWD/$F
sweep:
  variants:
    - [{ name: cx7, network: host-tcp, crypto: host }]
    - [{ name: bf3, network: rdma, crypto: dpu-inline, cluster: { dpu: { profile: BlueField-3, crypto_rate: 193Gbps } }, cost: { dpu_price: 0.15USD/h } }]
YAML
run_cmd "$DPUSIM" sweep "$E2E_TMP/swv.yaml" --db "$E2E_TMP/swv.db" -o "$E2E_TMP/swv"
expect_rc 0 "a sweep over the variants"
n=$(cat "$E2E_TMP"/swv/*.json 2>/dev/null | grep -c '"bf3.hardware": "per node: .*1 x BlueField-3')
m=$(cat "$E2E_TMP"/swv/*.json 2>/dev/null | grep -c '"cx7.hardware": "per node: .*ConnectX-7-NDR; 2 nodes')
[ "$n" -eq 1 ] && [ "$m" -eq 1 ] && ok "each point runs its own variant on its own hardware" || not_ok "variant sweep points: bf3 $n, cx7 $m"
finish
