# dpusim-hw replay of a pipeline-parallel training scenario (pp 2, dp 2) over
# tcp across 4 ranks: every stage runs its passes in Megatron's 1F1B order and
# sends the simulator's activation (forward) and activation-gradient
# (backward) messages to its neighbouring stage, every message checked; each
# stage's replicas all-reduce their gradients. The report's per-stage counts
# and order must be the schedule's (computed here independently), its
# sendrecv row the simulator's size, which `dpusim compare` then holds against
# `dpusim run`'s; the waits for the neighbouring stage are the breakdown's
# pipeline_bubble, apart from the transfers (the simulator's split). Fewer ranks run fewer whole pipelines and say so; a count
# that is not whole pipelines is refused; a corrupted activation gradient fails the run.
. tests/e2e/lib.sh
hw_setup
SCN=tests/e2e/data/hw-train-pp.yaml
SCALE=1e-5

mkdir -p "$E2E_TMP/data"
for i in 0 1; do head -c 50000 /dev/urandom >"$E2E_TMP/data/shard$i.bin"; done

# check_report FILE RANKS: the pipeline's figures in a replay report.
check_report() {
	python3 - "$1" "$2" "$SCALE" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1])); ranks = int(sys.argv[2]); scale = float(sys.argv[3])
P, M, iters, dp = 2, 4, 3, 2            # hw-train-pp.yaml: pp 2, 8 / (dp 2 x micro 1)
R = ranks // P
info = d["info"]
def one_f_one_b(p):
    # Narayanan et al. (SC21) 2.2.1: P - p - 1 warm-up forwards, then
    # forward/backward pairs, then the remaining backwards.
    warm = min(P - p - 1, M); ops = [f"F{m}" for m in range(warm)]
    f, b = warm, 0
    while f < M:
        ops += [f"F{f}", f"B{b}"]; f += 1; b += 1
    return ops + [f"B{m}" for m in range(b, M)]
for p in range(P):
    s = info[f"replay.pipeline_stage{p}"]
    n = [int(x) for x in re.match(r"activations sent (\d+), received (\d+); gradients sent (\d+), received (\d+)", s).groups()]
    per = M * iters * R
    want = [per if p < P - 1 else 0, per if p > 0 else 0, per if p > 0 else 0, per if p < P - 1 else 0]
    assert n == want, (p, n, want)
    order = s.split("passes of one iteration: ")[1].split()
    assert order == one_f_one_b(p), (p, order)
    # the waits for the neighbouring stage apart from the transfers
    t, w = (float(x) for x in re.search(r"([0-9.e+-]+) s per iteration in sends and receives \(slowest replica\), of which ([0-9.e+-]+) s waiting for the neighbouring stage to send \(pipeline bubble\)", s).groups())
    assert 0 <= w <= t, (p, w, t)
assert "split as the simulator splits a stage's wait" in info["replay.pipeline_bubble"], info["replay.pipeline_bubble"]
assert f"{P} stages x {R} replicas on {ranks} ranks" in info["replay.pipeline"], info["replay.pipeline"]
# Megatron's order (models/train.h train_rank): a stage's replicas together
assert f"rank r is stage r / {R}, replica r % {R}" in info["replay.pipeline"], info["replay.pipeline"]
if R < dp:
    assert f"dp {dp} replicas replayed as {R}" in info["replay.pipeline"], info["replay.pipeline"]
assert info["replay.pipeline_message_bytes"].startswith("2097152 per message")
assert [v["name"] for v in d["variants"]] == ["baseline", "tls-host"], d["variants"]
assert "rdma.not_replayed" in info
for v in d["variants"]:
    it = v["metrics"]["iteration_s"]["mean"]
    assert abs(sum(v["breakdown_s"].values()) - it) < 1e-6 * it
    assert v["breakdown_s"]["pipeline_bubble"] >= 0 and v["breakdown_s"]["exposed_comm"] > 0, v["breakdown_s"]
    rows = {c["op"]: c for c in v["collectives"]}
    sr = rows["sendrecv"]   # the simulator's row: seq 1024 x micro 1 x hidden 1024 x 2 B
    assert sr["algo"] == "p2p" and sr["ranks"] == 2 and sr["bytes"] == 2097152 and sr["time_s"] > 0, sr
    if R > 1:
        # stage 0: 4 layers + the embedding, 4 B each (bf16's gradients
        # reduced in fp32, as Megatron-LM forces), x scale
        ar = rows["allreduce"]
        h, V = 1024, 32000
        params = 4 * (12 * h * h + 13 * h) + V * h
        assert ar["ranks"] == R and 0.9 < ar["bytes"] / (params * 4 * scale) < 1.1, ar
    else:
        assert "allreduce" not in rows, rows
# both transports' messages were sealed: gradients and activations
assert int(info["tls-host.crypto_bytes"]) > 2 * 2097152 * M * iters * R
PY
}

run_cmd "${MPIRUN[@]}" -np 4 "$HW" replay "$SCN" --data "$E2E_TMP/data" --scale $SCALE \
	--timeout 20 -o "$E2E_TMP/hw.json"
expect_rc 0 "training replay of pp 2 x dp 2 over tcp, one rank per stage per replica"
expect_out 'iteration 4: .*pipeline sends .*GEMMs, pipeline messages and gradient sums verified' \
	"every pipeline message checked"
if out=$(check_report "$E2E_TMP/hw.json" 4 2>&1); then ok "sends per stage and their order are the 1F1B schedule's; rows sized as the simulator's"
else not_ok "pipeline report: $out"; fi

run_cmd "$BIN/dpusim" run "$SCN" --json
printf '%s\n' "$OUT" >"$E2E_TMP/sim.json"
run_cmd "$BIN/dpusim" compare "$E2E_TMP/sim.json" "$E2E_TMP/hw.json" --collectives-only
if [ "$RC" -eq 0 ] || [ "$RC" -eq 1 ]; then ok "dpusim compare holds the replay against the simulation (exit $RC)"
else not_ok "dpusim compare: exit $RC: ${ERR:0:300}"; fi
expect_out '^baseline +sendrecv\.p2p\.2r\.2097152B\.time_s +[0-9.e+-]+ +[0-9.e+-]+ +[+-]' \
	"the pipeline messages' time, simulated and replayed, side by side"

run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$SCN" --data "$E2E_TMP/data" --scale $SCALE \
	--timeout 20 -o "$E2E_TMP/hw2.json"
expect_rc 0 "one whole pipeline on 2 ranks"
if out=$(check_report "$E2E_TMP/hw2.json" 2 2>&1); then ok "the report says how it mapped (one replica, no all-reduce)"
else not_ok "one-pipeline report: $out"; fi

# An interleaved scenario replays plain 1F1B (wl_1f1b_op) and says so.
printf 'extends: %s\nworkload:\n  parallelism: { tp: 1, pp: 2, dp: auto, virtual_stages: 2 }\n' \
	"$PWD/$SCN" >"$E2E_TMP/inter.yaml"
run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$E2E_TMP/inter.yaml" --data "$E2E_TMP/data" \
	--scale $SCALE --timeout 20 -o "$E2E_TMP/hw-inter.json"
expect_rc 0 "an interleaved scenario replays"
if python3 -c '
import json, sys
i = json.load(open(sys.argv[1]))["info"]["replay.pipeline"]
assert "interleaved schedule (virtual_stages 2) replayed as plain 1F1B" in i, i' "$E2E_TMP/hw-inter.json"
then ok "its report says it replayed plain 1F1B, not the interleaved order"
else not_ok "interleaved replay report"; fi

# one rank (no mpirun): not a whole pipeline
run_cmd "$HW" replay "$SCN" --data "$E2E_TMP/data" --scale $SCALE
expect_rc 2 "a rank count that is not whole pipelines is refused"
expect_err 'pp 2 pipeline stages x dp 2 replicas: run one rank per stage per replica \(mpirun -np 4\)' \
	"saying which counts run"

# rank 2 is stage 1 of replica 0 in Megatron's order (stage r / 2)
run_cmd env DPUSIM_HW_FAULT=corrupt:2 "${MPIRUN[@]}" -x DPUSIM_HW_FAULT -np 4 "$HW" replay "$SCN" \
	--data "$E2E_TMP/data" --scale $SCALE --timeout 20
expect_rc 1 "a corrupted activation gradient fails the run"
expect_err 'rank 0: error: the activation gradient of microbatch 0 from stage 1 \(rank 2\) is wrong' \
	"its receiver names it"

finish
