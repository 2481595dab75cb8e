# Workload shapes production runs use, through the CLI: Megatron's
# interleaved 1F1B (workload.parallelism.virtual_stages) on the small
# training scenario (a small vocabulary, so that the two stages are equal):
# it runs, its bubble is about half plain 1F1B's with two chunks per stage
# (Narayanan et al.'s (p - 1) / (m v)), it is dumped and reloaded, and
# `check` names it. The pipeline sends' count: test_train. Then sequence
# parallelism and context parallelism.
. tests/e2e/lib.sh
S=$PWD/tests/data/train-small.yaml

# shape NAME YAML-LINES: a scenario extending train-small with those lines.
shape() { printf 'extends: %s\n%s\n' "$S" "$2" >"$E2E_TMP/$1.yaml"; }
# run_json NAME: dpusim run of shape NAME, checked to exit 0, its --json
# report kept in $E2E_TMP/NAME.json.
run_json() {
	run_cmd "$DPUSIM" run "$E2E_TMP/$1.yaml" --json
	expect_rc 0 "run $1"
	printf '%s\n' "$OUT" >"$E2E_TMP/$1.json"
}

shape plain 'workload:
  transformer: { layers: 8, hidden: 1024, heads: 16, seq: 1024, vocab: 64 }
  parallelism: { tp: 2, pp: 2 }'
shape inter 'workload:
  transformer: { layers: 8, hidden: 1024, heads: 16, seq: 1024, vocab: 64 }
  parallelism: { tp: 2, pp: 2, virtual_stages: 2 }'
run_json plain
run_json inter
py_check "interleaved: about half the bubble, the parts add up" \
	"$E2E_TMP/plain.json" "$E2E_TMP/inter.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for pv, iv in zip(a["variants"], b["variants"]):
    pb, ib = pv["breakdown_s"]["pipeline_bubble"], iv["breakdown_s"]["pipeline_bubble"]
    assert 0.4 * pb < ib < 0.6 * pb, (pv["name"], pb, ib)
    it = iv["metrics"]["iteration_s"]["mean"]
    assert abs(sum(iv["breakdown_s"].values()) - it) <= 1e-9 * it
    assert iv["metrics"]["iteration_s"]["mean"] < pv["metrics"]["iteration_s"]["mean"]
PY

run_cmd "$DPUSIM" check "$E2E_TMP/inter.yaml"
expect_rc 0 "check an interleaved scenario"
expect_out 'interleaved 1F1B over 2 virtual stages per pipeline rank' "check names the schedule"
run_cmd "$DPUSIM" run "$E2E_TMP/inter.yaml" --dump
expect_out '^    virtual_stages: 2$' "the dump keeps virtual_stages"
printf '%s\n' "$OUT" >"$E2E_TMP/d1.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/d1.yaml" --dump
if [ "$OUT" = "$(cat "$E2E_TMP/d1.yaml")" ]; then ok "the dump reloads and dumps identically"
else not_ok "the dump of the dump differs"; fi

# Sequence parallelism: the tensor-parallel all-reduce rows become a
# reduce-scatter and an all-gather of the same bytes over the same ranks
# (the 2-rank all-reduce of the tied embedding's gradient between the end
# stages, V h / tp fp32 gradients, stays, and is no tensor-parallel row).
shape seqpar 'workload:
  parallelism: { tp: 2, pp: 2, sequence_parallel: true }'
run_json seqpar
py_check "sequence parallel: reduce-scatter and all-gather rows, the parts add up" \
	"$E2E_TMP/seqpar.json" <<'PY'
import json, sys
for v in json.load(open(sys.argv[1]))["variants"]:
    tied = 32000 * 1024 // 2 * 4   # V h / tp fp32 gradients
    rest = [c for c in v["collectives"] if c["ranks"] == 2 and c["op"] != "sendrecv"]
    tp = [c for c in rest if not (c["op"] == "allreduce" and c["bytes"] == tied)]
    assert len(tp) == len(rest) - 1, rest
    ops = sorted(c["op"] for c in tp)
    assert ops == ["allgather", "reduce_scatter"], ops
    assert tp[0]["bytes"] == tp[1]["bytes"] == 1024 * 2 * 1024 * 2, tp
    it = v["metrics"]["iteration_s"]["mean"]
    assert abs(sum(v["breakdown_s"].values()) - it) <= 1e-9 * it
PY
run_cmd "$DPUSIM" run "$E2E_TMP/seqpar.yaml" --dump
expect_out '^    sequence_parallel: true$' "the dump keeps sequence_parallel"

# Context parallelism across the two nodes (tp 8 x cp 2): K and V
# all-gathered and their gradients reduce-scattered per layer over 2 ranks
# (1/tp of the heads each: 2 s b (2 h) / 8 bytes), the gradients all-reduced
# across the context ranks, all 16 GPUs counted in the rates.
shape ctx 'workload:
  parallelism: { tp: 8, pp: 1, cp: 2 }'
run_cmd "$DPUSIM" check "$E2E_TMP/ctx.yaml"
expect_out 'context parallel over 2 ranks' "check names context parallelism"
run_json ctx
py_check "context parallel: per-layer K/V all-gather and reduce-scatter rows, gradients across cp" \
	"$E2E_TMP/ctx.json" <<'PY'
import json, sys
kv = 2 * 1024 * 2 * (2 * 1024) // 8     # seq x micro x K and V width x 2 B / tp
for v in json.load(open(sys.argv[1]))["variants"]:
    rows = {(c["op"], c["ranks"]): c for c in v["collectives"]}
    assert rows[("allgather", 2)]["bytes"] == kv and rows[("reduce_scatter", 2)]["bytes"] == kv, rows
    assert rows[("allgather", 2)]["time_s"] > 0
    assert ("allreduce", 2) in rows, rows   # gradients across the context ranks
    it = v["metrics"]["iteration_s"]["mean"]
    assert abs(sum(v["breakdown_s"].values()) - it) <= 1e-9 * it
PY
run_cmd "$DPUSIM" run "$E2E_TMP/ctx.yaml" --dump
expect_out '^    cp: 2$' "the dump keeps cp"
hw_setup
run_cmd "$HW" replay "$E2E_TMP/ctx.yaml"
expect_rc 2 "dpusim-hw replay refuses context parallelism"
expect_err 'context parallelism is not replayed' "saying so"

# FlashAttention: at a long sequence the unfused attention keeps its
# scores (5as^2b a layer) and the job does not fit; with attention: flash
# it does, and runs.
shape long 'workload:
  attention: unfused
  transformer: { layers: 8, hidden: 1024, heads: 16, seq: 32768, vocab: 32000 }
  parallelism: { tp: 8, pp: 2 }
  batch: { global: 8, micro: 1 }'
run_cmd "$DPUSIM" check "$E2E_TMP/long.yaml"
expect_rc 2 "unfused attention at sequence 32768 does not fit"
expect_err 'does not fit in GPU memory' "saying so"
printf 'extends: %s\nworkload:\n  attention: flash\n' "$E2E_TMP/long.yaml" >"$E2E_TMP/flash.yaml"
run_cmd "$DPUSIM" check "$E2E_TMP/flash.yaml"
expect_rc 0 "with attention: flash it fits"
expect_out 'FlashAttention' "check names it"
run_cmd "$DPUSIM" run "$E2E_TMP/flash.yaml" --dump
expect_out '^  attention: flash$' "the dump keeps attention"

finish
