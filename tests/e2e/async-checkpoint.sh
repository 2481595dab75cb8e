#!/bin/bash
# Asynchronous checkpoints (issue 5: checkpoints "synchronous or
# asynchronous"; models/reliab.h): scenarios/effects/async-checkpoint.yaml
# against checkpoint-sync.yaml, the same job checkpointing synchronously.
# Goodput and time to train are computed here from the resolved scenario
# (`run --dump`) and the report's own tokens/s, never from an earlier run;
# then a bad checkpoint_mode, and an interval shorter than the persist.
. "$(dirname "$0")/lib.sh"
EFF=scenarios/effects
CHECK="$E2E_TMP/check.py"

cat >"$CHECK" <<'PYEOF'
import json, math, re, subprocess, sys, yaml
DPUSIM, SYNC, ASYNC = sys.argv[1:4]
def run(path):
    out = subprocess.run([DPUSIM, "run", path, "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)
def dump(path):
    out = subprocess.run([DPUSIM, "run", path, "--dump"], check=True, capture_output=True, text=True).stdout
    return yaml.safe_load(out)
def si(v):
    return float(v) if isinstance(v, (int, float)) else float(re.match(r"[-+0-9.eE]+", v).group(0))
def check(cond, what):
    print(("ok - " if cond else "not ok - ") + what)
def near(a, b, rel):
    return abs(a - b) <= rel * abs(b)

def inputs(s):
    c, fl = s["cluster"], s["failures"]
    for k in ("gpu_mtbf", "nic_mtbf", "switch_mtbf"):
        assert k not in fl, k  # only nodes fail in this job
    st = c["storage"]
    nodes, gpn = c["nodes"], c["gpus_per_node"]
    M = si(fl["node_mtbf"]) / nodes
    size = si(fl["checkpoint_size"])
    # The storage link carries the protocol's payload share (models/wire.h):
    # NFS (storage: host) in TCP over IPoIB datagrams of OpenSM's 2048 bytes,
    # 1992 payload bytes in 2082 on the wire; RDMA 4096 in 4122.
    assert c["fabric"]["switch"]["link_layer"] == "infiniband" and "mtu" not in c["fabric"]
    frac = 1992 / 2082 if s["variants"][0].get("storage", "host") == "host" else 4096 / 4122
    write = min(si(st["server"]["write_bw"]), si(st["link_rate"]) * frac) * si(st["servers"])
    # PCI-SIG: Gen5 32 GT/s per lane, 128b/130b; the GPU's own link.
    gpu, cpu = c["gpu"], c["cpu"]
    lane = {4: 16e9 * 128 / 130 / 8, 5: 32e9 * 128 / 130 / 8}[int(si(gpu["pcie_gen"]))]
    pcie = lane * si(gpu["pcie_lanes"])
    mem = si(cpu["sockets"]) * si(cpu["mem_bw"]) / gpn
    share = size / (nodes * gpn)
    return dict(M=M, W=size / write, snap=share / min(pcie, mem), pcie=pcie, mem=mem, share=share,
                tau=si(fl["checkpoint_interval"]), R=si(fl["restart"]), mode=fl["checkpoint_mode"],
                target=si(s["workload"]["target_tokens"]))

def daly_goodput(tau, d, R, M):
    return tau / (M * math.exp(R / M) * math.expm1((tau + d) / M))

def async_wall(useful, tau, d, W, R, M):
    # models/reliab.h: P = max(tau, W) + d between commits, A = tau + d + W
    # from a restart to the first commit.
    P, A = max(tau, W) + d, tau + d + W
    first = M * math.exp(R / M) * math.expm1(A / M)
    steady = -M * math.expm1(-P / M) * math.exp((R + A) / M)
    return first + (useful / tau - 1) * steady

def goodput_and_ttt(rep):
    v = rep["variants"][0]["metrics"]
    return v["goodput"], v["time_to_train_s"], v["tokens_per_s"]

s, a = inputs(dump(SYNC)), inputs(dump(ASYNC))
check(s["mode"] == "sync" and a["mode"] == "async", "modes sync and async in the dumps")
check(all(s[k] == a[k] for k in ("M", "W", "tau", "R", "target")), "the same job, MTBF, storage, interval and restart")
check(a["pcie"] < a["mem"], f"snapshot bound by PCIe {a['pcie']/1e9:.2f} GB/s, not host memory {a['mem']/1e9:.1f} GB/s per GPU")
rs, ra = run(SYNC), run(ASYNC)
gs, ts, toks = goodput_and_ttt(rs)
ga, ta, toka = goodput_and_ttt(ra)
check(toks == toka, f"same tokens/s {toks:.1f}")
useful = s["target"] / toks
want_s = daly_goodput(s["tau"], s["W"], s["R"], s["M"])
check(near(gs, want_s, 1e-9), f"sync: goodput {gs:.6f} = Daly with delta = the write {s['W']:.3f} s: {want_s:.6f}")
check(near(ts, useful / want_s, 1e-9), f"sync: time to train {ts:.0f} s = useful / goodput")
wall = async_wall(useful, a["tau"], a["snap"], a["W"], a["R"], a["M"])
check(near(ta, wall, 1e-9), f"async: time to train {ta:.0f} s = the renewal form by hand {wall:.0f} s "
      f"(snapshot {a['snap']:.4f} s, persist {a['W']:.3f} s)")
check(near(ga, useful / wall, 1e-9), f"async: goodput {ga:.6f} = useful / time to train")
# Direction and size: first order, async saves (delta_sync - delta_async) /
# tau of stopped time and loses W / M more per failure.
gain = ga - gs
first = (s["W"] - a["snap"]) / s["tau"] - a["W"] / a["M"]
check(gain > 0 and ta < ts, f"async goodput {ga:.4f} above sync {gs:.4f}, time to train {ta/86400:.3f} d below {ts/86400:.3f} d")
check(near(gain, first, 0.05), f"gain {gain:.5f} within 5 % of the first-order (delta - delta_s) / tau - W / M = {first:.5f}")
info = ra["info"]["checkpoint_interval"]
check(f"snapshot {a['snap']:.3g} s" in info and f"persist {a['W']:.4g} s in the background" in info
      and "PCIe Gen5 x16" in info, f"report: {info[:150]}...")
best = re.search(r"Young suggests (\d+) s, the async model's optimum (\d+) s", info)
young = math.sqrt(2 * a["snap"] * a["M"])
check(best and abs(int(best.group(1)) - young) <= 0.5, f"Young's async interval sqrt(2 delta_s M) = {young:.1f} s reported")
check("waits" not in info, "interval above the persist: no wait reported")
PYEOF

out=$(python3 "$CHECK" "$DPUSIM" "$EFF/checkpoint-sync.yaml" "$EFF/async-checkpoint.yaml" 2>&1)
tally_checks "$out"

# A bad mode: exit 2 at the value's place.
cat >"$E2E_TMP/bad.yaml" <<EOF
name: bad-mode
extends: $PWD/$EFF/async-checkpoint.yaml
failures:
  checkpoint_mode: background
EOF
run_cmd "$DPUSIM" run "$E2E_TMP/bad.yaml"
expect_rc 2 "checkpoint_mode: background refused"
expect_err "bad.yaml:4:20: unknown checkpoint_mode 'background' \(expected sync or async" "the error names file:line:col and the choices"

# An interval shorter than the persist: the training waits W - tau per
# checkpoint, and the report says so. The persist: 108 GB over the 100 Gb/s
# storage link in NFS's TCP over IPoIB packets (1992 payload bytes in 2082).
cat >"$E2E_TMP/wait.yaml" <<EOF
name: wait
extends: $PWD/$EFF/async-checkpoint.yaml
failures:
  checkpoint_interval: 5s
EOF
run_cmd "$DPUSIM" run "$E2E_TMP/wait.yaml"
expect_rc 0 "async with a 5 s interval"
expect_out "persist 9.03 s in the background, longer than the interval: the training waits 4.03 s per checkpoint" \
	"the report says the training waits 9.03 - 5 = 4.03 s for each persist (108 GB at 12.5 GB/s x 1992/2082)"

# The dump of a dump is the same (the mode round-trips).
run_cmd "$DPUSIM" run "$EFF/async-checkpoint.yaml" --dump
cp "$E2E_TMP/out" "$E2E_TMP/d1.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/d1.yaml" --dump
if cmp -s "$E2E_TMP/out" "$E2E_TMP/d1.yaml" && grep -q "checkpoint_mode: async" "$E2E_TMP/d1.yaml"; then
	ok "the dump keeps checkpoint_mode: async and reloads to itself"
else
	not_ok "dump of the dump differs or lost checkpoint_mode"
fi
finish
