#!/bin/bash
# What held the transfers (issue 16 item 3): the critical path names the
# class of limit the flow solver froze them on, with its figure computed
# here from the resolved scenario (`run --dump`), binding_s splits the
# exposed communication by the same account, and conn_core_util shows a
# connection's saturated core where host_cpu_util averages it away.
# A small training job (2 nodes x 8 A100, data parallel only): host TCP
# with AES-GCM on the host (one core per connection: it binds), RDMA from
# host memory, RDMA with GPUDirect (the NIC ports bind).
. "$(dirname "$0")/lib.sh"
S="$E2E_TMP/binding.yaml"
cat >"$S" <<'YEOF'
name: binding
seed: 7
replications: 1
cluster:
  nodes: 2
  gpus_per_node: 8
  gpu: A100-SXM4-80GB
  cpu: EPYC-7742
  host_costs: host-costs-linux
  nic: ConnectX-6-HDR
  nics_per_node: 8
  fabric:
    topology: single-switch
    switch: QM8700-HDR
workload:
  model: custom
  transformer: { layers: 8, hidden: 1024, heads: 16, seq: 1024, vocab: 32000 }
  precision: bf16
  parallelism: { tp: 1, pp: 1 }
  batch: { global: 32, micro: 2 }
  iterations: 2
variants:
  - { name: host-crypto, network: host-tcp, crypto: host }
  - { name: rdma, network: rdma }
  - { name: gdr, network: rdma-gdr }
YEOF

run_cmd "$DPUSIM" run "$S" --json
expect_rc 0 "run --json"
printf '%s\n' "$OUT" >"$E2E_TMP/rep.json"
run_cmd "$DPUSIM" run "$S" --dump
expect_rc 0 "run --dump"
printf '%s\n' "$OUT" >"$E2E_TMP/dump.yaml"
out=$(python3 - "$E2E_TMP/rep.json" "$E2E_TMP/dump.yaml" <<'PY' 2>&1
import json, re, sys, yaml
rep = json.load(open(sys.argv[1])); s = yaml.safe_load(open(sys.argv[2]))
def si(v):
    return float(v) if isinstance(v, (int, float)) else float(re.match(r"[-+0-9.eE]+", v).group(0))
v = {x["name"]: x for x in rep["variants"]}
crit = {k: rep["info"][k + ".critical_path"] for k in v}
hc = s["cluster"]["host_costs"]
conn = 1 / (1 / si(hc["tcp_rx_bw_per_core"]) +
            si(hc["aes_gcm_cycles_per_byte"]) / si(s["cluster"]["cpu"]["freq"]))
link = si(s["cluster"]["fabric"]["link_rate"])
def check(cond, what):
    print(("ok - " if cond else "not ok - ") + what)
m = v["host-crypto"]["metrics"]
check(f"data-parallel collectives exposed" in crit["host-crypto"] and
      f"held by one core per connection ({conn/1e9:.2f} GB/s)" in crit["host-crypto"],
      f"host crypto: held by one core per connection at {conn/1e9:.2f} GB/s ({crit['host-crypto']})")
check("host memory" not in crit["host-crypto"], "host crypto: host memory is not named")
check(m["conn_core_util"] >= 0.999 and m["host_cpu_util"] < 0.5,
      f"host crypto: a connection's cores {m['conn_core_util']:.3f} busy, the host's "
      f"{m['host_cpu_util']:.3f} on average")
check(f"held by NIC ports ({link*8/1e9:.0f} Gb/s) for 100%" in crit["gdr"],
      f"rdma-gdr: held by the {link*8/1e9:.0f} Gb/s NIC ports ({crit['gdr']})")
check("one core per connection" not in crit["rdma"] + crit["gdr"],
      "RDMA has no connection core to name")
check(all("conn_core_util" not in v[k]["metrics"] for k in ("rdma", "gdr")),
      "RDMA variants have no conn_core_util")
for k, x in v.items():
    b = x["binding_s"]; bd = x["breakdown_s"]
    comm = sum(sum(c.values()) for kind, c in b.items() if kind != "storage")
    check(abs(comm - bd["exposed_comm"]) <= 1e-6 * bd["exposed_comm"],
          f"{k}: binding_s splits exposed_comm ({comm:.6g} of {bd['exposed_comm']:.6g} s)")
dp = v["host-crypto"]["binding_s"]["data_parallel"]
check(max(dp, key=dp.get) == "conn_core", f"host crypto: binding_s names conn_core first ({dp})")
dp = v["gdr"]["binding_s"]["data_parallel"]
check(list(dp) == ["nic"], f"rdma-gdr: binding_s names the NIC ports alone ({dp})")
PY
)
tally_checks "$out"
finish
