# A collective benchmark in jobs: beside a training job runs in the same
# simulation as a background tenant (docs/scenarios.md, jobs): its own
# report section with its collectives measured under the shared load, and
# the training job slowed where their rings share the oversubscribed
# uplinks of tests/e2e/data/shared-bench.yaml.
. tests/e2e/lib.sh
D=tests/e2e/data
for f in shared-bench shared-bench-train shared-bench-coll; do
	run_cmd "$DPUSIM" run "$D/$f.yaml" --json
	expect_rc 0 "run of $f"
	echo "$OUT" > "$E2E_TMP/$f.json"
done
# Hand estimate (every link HDR, 25 GB/s). Alone, the benchmark's 4-rank
# ring over 2 nodes is bound by a node's link: busbw about 25 GB/s. The
# training job's gradients (NCCL's ring over its 4 ranks, which sends 1.5
# times a bucket out of each node; until December 2026 the hierarchical
# rings, which NCCL does not have, sent it once) and the benchmark
# (sending all the time) share the uplinks leaf 0 -> leaf 1 and back, each
# flow a fair share: about half each while both send. Training: its
# all-reduce stretches towards 2x; little of it hides behind the backward
# pass (alone: 28 ms of compute, 29 ms of exposed all-reduce in a 58 ms
# iteration), so the iteration grows by up to the exposed time: more than
# 5%, less than 1 + 2 x exposed / iteration alone (2.0x; measured 1.5x).
# Benchmark: slowed about 2x
# while the gradients flow, 18..26 ms of each 45..50 ms iteration (40-50%),
# so its time grows 1.4x to 1.5x and busbw falls to 0.65-0.75 of alone;
# bounds 0.5 (slowed all the time) to 0.85. That holds for the benchmark's
# whole pass (both sizes, about 7 ms, time-weighted); one size alone is
# measured over windows of 1-6 ms whose overlap with the gradients depends
# on the phase of the two jobs (a 0.6 ms longer optimizer step, d6b8dee,
# moved 16 MiB's ratio from 0.80 to 0.85 and the pass's from 0.783 to
# 0.789), so each size is only required to be slower than alone.
if python3 - "$E2E_TMP"/shared-bench.json "$E2E_TMP"/shared-bench-train.json \
	"$E2E_TMP"/shared-bench-coll.json <<'PY'
import json, sys
shared, train, coll = (json.load(open(p)) for p in sys.argv[1:4])
names = [v["name"] for v in shared["variants"]]
assert names == ["train/gdr", "bench/gdr"], names
t_sh, b_sh = shared["variants"]
assert t_sh["breakdown_s"] and t_sh["metrics"]["samples_per_s"] > 0
assert "breakdown_s" not in b_sh or not b_sh["breakdown_s"], "a benchmark has no breakdown"
sizes = [c["bytes"] for c in b_sh["collectives"]]
assert sizes == [16 << 20, 64 << 20], sizes
it_sh = t_sh["metrics"]["iteration_s"]["mean"]
it_alone = train["variants"][0]["metrics"]["iteration_s"]["mean"]
r = it_sh / it_alone
exposed = train["variants"][0]["breakdown_s"]["exposed_comm"]
assert 1.05 < r < 1 + 2 * exposed / it_alone, ("training slowdown", it_sh, it_alone, r)
alone = {c["bytes"]: c["busbw_GBps"] for c in coll["variants"][0]["collectives"]}
for c in b_sh["collectives"]:
    q = c["busbw_GBps"] / alone[c["bytes"]]
    assert c["ranks"] == 4 and c["algo"] == "ring", c
    assert 0.5 < q < 0.97, ("benchmark busbw shared/alone", c["bytes"], c["busbw_GBps"], alone[c["bytes"]], q)
t_alone = {c["bytes"]: c["time_s"] for c in coll["variants"][0]["collectives"]}
q_pass = sum(t_alone[c["bytes"]] for c in b_sh["collectives"]) / sum(c["time_s"] for c in b_sh["collectives"])
assert 0.5 < q_pass < 0.85, ("benchmark pass alone/shared", q_pass)
pass_s = sum(c["time_s"] for c in b_sh["collectives"])
assert abs(b_sh["metrics"]["iteration_s"]["mean"] - pass_s) <= 1e-9 * pass_s
PY
then ok "training slower beside the benchmark, benchmark busbw lower beside training"
else not_ok "shared training and benchmark"; fi
run_cmd "$DPUSIM" compare "$E2E_TMP/shared-bench.json" "$E2E_TMP/shared-bench.json" --tolerance 0%
expect_rc 0 "the shared report validates against dpusim-report/1"
run_cmd "$DPUSIM" run "$D/shared-bench.yaml"
expect_rc 0 "the shared scenario's table"
# Each job's collectives on rows of their own (one row per variant, the
# job named in it): the benchmark's sizes are not shown under the training
# job's gradient all-reduce, nor the reverse.
expect_out '^allreduce +16 MiB +bench/gdr +ring +[0-9.]+ GB/s +[0-9.]+ ms$' "the benchmark's 16 MiB row, under the benchmark job"
expect_out '^allreduce +64 MiB +bench/gdr +ring +[0-9.]+ GB/s +[0-9.]+ ms$' "the benchmark's 64 MiB row"
expect_out '^allreduce +[0-9.]+ MiB +train/gdr +ring +[0-9.]+ GB/s +[0-9.]+ ms$' "the training job's all-reduce row, under the training job"
if grep -Eq '^allreduce +(16|64) MiB +train/' <<<"$OUT" ||
	grep -E '^allreduce .*bench/' <<<"$OUT" | grep -Evq '^allreduce +(16|64) MiB '
then not_ok "a job's collective shown under the other job"; else ok "no job's collective under the other"; fi
run_cmd "$DPUSIM" run "$D/shared-bench.yaml" --json
if [ "$OUT" = "$(cat "$E2E_TMP/shared-bench.json")" ]; then ok "same seed, byte-identical report"
else not_ok "shared run not deterministic"; fi
finish
