# dpusim-hw replay of a training scenario, for real over tcp across 4 ranks:
# every iteration reads its batch from a data directory, runs the scenario's
# GEMM FLOPs per GPU (scaled down) on the CPU with every product checked, and
# all-reduces the scaled gradients with every sum checked; the report has the
# keys `dpusim run` writes for a training variant and `dpusim compare` holds
# the two side by side. Corruption and a dead peer end the run plainly; bad
# input is refused with exit 2.
. tests/e2e/lib.sh
hw_setup
SCN=tests/e2e/data/hw-train4.yaml
SCALE=1e-5

mkdir -p "$E2E_TMP/data"
for i in 0 1 2; do head -c 100000 /dev/urandom >"$E2E_TMP/data/shard$i.bin"; done

run_cmd "${MPIRUN[@]}" -np 4 "$HW" replay "$SCN" --data "$E2E_TMP/data" --scale $SCALE \
	--timeout 20 -o "$E2E_TMP/hw.json"
expect_rc 0 "training replay of a 4-replica data-parallel scenario over tcp"
expect_out 'iteration 4: .*GEMMs and gradient sums verified' "warm-up + 3 iterations, all verified"
expect_out 'compute: [0-9.e+]+ FLOP/s measured per rank' "the measured FLOP/s is said"
if python3 - "$E2E_TMP/hw.json" "$SCALE" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1])); scale = float(sys.argv[2])
assert d["schema"] == "dpusim-report/1" and d["source"] == "hw"
assert d["scenario"]["name"] == "hw-train4" and d["scenario"]["seed"] == 11
# tcp stands for host-tcp only
assert [v["name"] for v in d["variants"]] == ["baseline"], d["variants"]
v = d["variants"][0]; m = v["metrics"]; it = m["iteration_s"]["mean"]
for k in ["iteration_s", "samples_per_s", "tokens_per_s", "tflops_per_gpu", "gpu_util"]:
    assert k in m, k
assert abs(m["samples_per_s"] - 8 / it) < 1e-9 * m["samples_per_s"]
assert abs(m["tokens_per_s"] - 8 * 2048 / it) < 1e-9 * m["tokens_per_s"]
# Megatron-LM (SC21) equation 3 without recompute, for one of the 4 GPUs:
# 72 B s l h^2 (1 + s/6h) + 6 B s h V over 4, B = 8.
B, s, l, h, V = 8, 2048, 24, 2304, 51200
per_gpu = (72 * B * s * l * h * h * (1 + s / (6 * h)) + 6 * B * s * h * V) / 4
run = m["tflops_per_gpu"] * 1e12 * it
assert abs(run / (per_gpu * scale) - 1) < 1e-3, (run, per_gpu * scale)
b = v["breakdown_s"]
assert set(b) == {"compute", "exposed_comm", "data_stall", "other"}, b
assert abs(sum(b.values()) - it) < 1e-6 * it
assert b["compute"] > 0 and b["exposed_comm"] > 0
c = v["collectives"]
assert len(c) == 1 and c[0]["op"] == "allreduce" and c[0]["ranks"] == 4
# 1.7e9 parameters x 4 bytes (bf16 reduces its gradients in fp32, as
# Megatron-LM forces) x scale, in whole floats
assert 0.9 < c[0]["bytes"] / (1.7e9 * 4 * scale) < 1.1 and c[0]["bytes"] % 4 == 0, c[0]
info = d["info"]
assert info["replay.scale"] == "1e-05"
assert re.match(r"(O_DIRECT pread|plain pread .*refuses O_DIRECT)", info["replay.data"]), info["replay.data"]
assert info["replay.data_per_rank_iteration"].startswith("8192 bytes: 2 samples x 4096 B")
assert float(info["replay.compute_flops_per_s"].split()[0]) > 0
assert "extrapolate" in " ".join(info) and "not_replayed" in " ".join(info)
PY
then ok "the report has the simulator's training keys and consistent figures"; else not_ok "training replay report"; fi

run_cmd "$BIN/dpusim" run "$SCN" --json
expect_rc 0 "dpusim run simulates the same scenario"
printf '%s\n' "$OUT" >"$E2E_TMP/sim.json"
# The replay ran at --scale 1e-5: its iteration time and throughput are not the
# full-size simulation's, so compare refuses rather than print -100%.
run_cmd "$BIN/dpusim" compare "$E2E_TMP/sim.json" "$E2E_TMP/hw.json"
expect_rc 2 "dpusim compare refuses a full-size simulation against a scaled replay"
expect_err 'sim.json is at scale 1, .*hw.json at scale 1e-05' "naming both scales"
run_cmd "$BIN/dpusim" compare "$E2E_TMP/sim.json" "$E2E_TMP/hw.json" --collectives-only
if [ "$RC" -eq 0 ] || [ "$RC" -eq 1 ]; then ok "dpusim compare --collectives-only runs (exit $RC)"
else not_ok "dpusim compare --collectives-only: exit $RC: ${ERR:0:300}"; fi
expect_out '^note: --collectives-only' "and says what it compares"
run_cmd "$BIN/dpusim" compare "$E2E_TMP/hw.json" "$E2E_TMP/hw.json" --tolerance 0%
expect_rc 0 "a replay against itself compares in full"
expect_out 'baseline +breakdown_s\.compute' "the comparison holds the breakdown side by side"
expect_out 'baseline +iteration_s ' "and the iteration time"

run_cmd env DPUSIM_HW_FAULT=corrupt:2 "${MPIRUN[@]}" -x DPUSIM_HW_FAULT -np 4 "$HW" replay "$SCN" \
	--data "$E2E_TMP/data" --scale $SCALE --timeout 20
expect_rc 1 "a wrong gradient sum fails the run"
expect_err 'rank [0-9]: error: gradient all-reduce of [0-9]+ bytes gave a wrong sum' "and says where"

run_cmd env DPUSIM_HW_FAULT=exit:1 "${MPIRUN[@]}" -x DPUSIM_HW_FAULT -np 4 "$HW" replay "$SCN" \
	--data "$E2E_TMP/data" --scale $SCALE --timeout 10
# mpirun returns the first failing rank's status: the dead one's 3, or 2.
if [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ]; then ok "a dead peer ends every rank (exit $RC, no hang)"
else not_ok "dead peer: exit $RC"; fi
expect_err 'rank 1: fault hook: exiting' "the peer died on purpose"
expect_err 'rank [0-9]: error: .*(rank 1|closed|timed out)' "its neighbour names what happened"

run_cmd "${MPIRUN[@]}" -np 4 "$HW" replay "$SCN" --data "$E2E_TMP/no-such-dir" --scale $SCALE
expect_rc 2 "a missing --data directory is refused"
expect_err "error: --data '.*no-such-dir': cannot open the directory" "plainly"

run_cmd "${MPIRUN[@]}" -np 4 "$HW" replay "$SCN" --scale $SCALE
expect_rc 2 "a workload that reads data needs --data"
expect_err 'give --data DIR' "and says so"

run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$SCN" --data "$E2E_TMP/data" --scale $SCALE
expect_rc 2 "one rank per data-parallel replica"
expect_err 'dp 4 data-parallel replicas, one rank each; run it with mpirun -np 4' "and says how"

sed -n '/^workload:/q;p' "$SCN" >"$E2E_TMP/nowl.yaml"
printf 'variants: [ { name: baseline, network: host-tcp } ]\n' >>"$E2E_TMP/nowl.yaml"
run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$E2E_TMP/nowl.yaml" --data "$E2E_TMP/data"
expect_rc 2 "a scenario without a workload is refused"
expect_err "nowl\.yaml:[0-9]+:[0-9]+: missing 'workload'" "with file:line:column"

if "$HW" probe | grep -Eq 'cuda compute +no'; then
	run_cmd "${MPIRUN[@]}" -np 4 "$HW" replay "$SCN" --data "$E2E_TMP/data" --compute cuda
	expect_rc 2 "--compute cuda without a usable GPU is refused"
	expect_err 'built without CUDA|CUDA driver|no GPU|cuda' "saying why"
fi

run_cmd "$HW" replay "$SCN" --scale 2
expect_rc 2 "--scale above 1 is refused"
expect_err "bad --scale '2'" "plainly"

# ZeRO: the simulator runs a reduce-scatter and a parameter all-gather
# (stage 3: a second gather for the backward); the replay all-reduces the
# gradients and says what it did instead.
printf 'extends: %s\nworkload:\n  parallelism: { zero_stage: 3 }\n' "$PWD/$SCN" > "$E2E_TMP/zero3.yaml"
run_cmd "${MPIRUN[@]}" -np 4 "$HW" replay "$E2E_TMP/zero3.yaml" --data "$E2E_TMP/data" --scale $SCALE \
	--timeout 20 -o "$E2E_TMP/zero3.json"
expect_rc 0 "training replay of a ZeRO-3 scenario"
if python3 -c "import json,sys; n=json.load(open(sys.argv[1]))['info']['replay.not_replayed']; sys.exit(not ('ZeRO 3' in n and 'backward' in n and 'not at all' in n))" "$E2E_TMP/zero3.json"; then
	ok "the replay says which of ZeRO 3's collectives it ran as an all-reduce and which not at all"
else not_ok "the ZeRO-3 replay does not say what it left out"; fi

finish
