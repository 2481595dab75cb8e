# dpusim run on a training scenario: the table, --json, -o, --db, --trace,
# determinism per seed, and errors.
. tests/e2e/lib.sh
S=tests/data/train-small.yaml

run_cmd "$DPUSIM" run "$S"
expect_rc 0 "run prints the table"
expect_out '^iteration \(mean\) +[0-9.]+ (s|ms)' "the table has the iteration row"
expect_out '^speedup over first +1\.000x +[0-9.]+x$' "the table has speedups"
expect_out 'critical_path' "the critical path is explained"
expect_out "^gdr\.tp_channels: 24 NCCL channels, the GPU profile's nccl_channels; the 4194304 B all-reduce runs on 24\$" \
	"the tensor-parallel all-reduce runs on the A100 profile's 24 NCCL channels"

run_cmd "$DPUSIM" run "$S" --json -o "$E2E_TMP/rep" --db "$E2E_TMP/r.db" --trace "$E2E_TMP/t.json"
expect_rc 0 "run --json -o --db --trace"
echo "$OUT" > "$E2E_TMP/stdout.json"
if python3 - "$E2E_TMP/stdout.json" "$E2E_TMP/rep/report.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a == b, "stdout and report.json differ"
assert a["schema"] == "dpusim-report/1" and a["source"] == "sim"
for v in a["variants"]:
    it = v["metrics"]["iteration_s"]
    parts = sum(v["breakdown_s"].values())
    assert abs(parts - it["mean"]) <= 1e-9 * it["mean"], (parts, it["mean"])
    assert it["p50"] <= it["p99"] and it["ci95"] >= 0
    for k in ("samples_per_s", "tokens_per_s", "tflops_per_gpu", "mfu", "gpu_util"):
        assert v["metrics"][k] > 0, k
    assert "energy_kwh" not in v["metrics"], "no cost section: energy must be absent"
    assert v["collectives"], "collectives listed"
base, gdr = a["variants"]
assert base["offload"]["network"] == "host-tcp" and gdr["offload"]["network"] == "rdma-gdr"
assert a["speedup"]["baseline"] == 1.0 and a["speedup"]["gdr"] > 1.0, a["speedup"]
PY
then ok "the report is complete, its breakdowns add up, RDMA is faster"; else not_ok "report contents"; fi
n=$(sqlite3 "$E2E_TMP/r.db" 'select count(*) from runs' 2>&1)
if [ "$n" = 1 ]; then ok "one run stored"; else not_ok "runs in the database: $n"; fi
for v in baseline gdr; do
	if python3 -c "
import json,sys
d = json.load(open('$E2E_TMP/t.$v.json'))['traceEvents']
names = {e['name'] for e in d if e['ph'] == 'X'}
assert {'forward', 'backward', 'optimizer step'} <= names, names
assert len({(e['pid'], e['tid']) for e in d if e['ph'] == 'X'}) >= 4
"; then ok "trace of $v has the GPU tracks and spans"; else not_ok "trace of $v"; fi
done

run_cmd "$DPUSIM" run "$S" --json
first=$OUT
run_cmd "$DPUSIM" run "$S" --json
if [ "$OUT" = "$first" ]; then ok "same seed, byte-identical report"; else not_ok "reports differ for one seed"; fi
run_cmd "$DPUSIM" run "$S" --json --seed 8
if [ "$OUT" != "$first" ]; then ok "another seed, another report"; else not_ok "seed ignored"; fi

# Several jobs in one scenario share the cluster: one report variant per
# job and variant, each breakdown adding up, and tenant-a under RDMA
# slower beside tenant-b (their gradient rings cross the same
# oversubscribed uplinks) than alone on the same nodes; under host TCP
# never faster (its ring is held by one core per connection, below the
# uplinks' share).
M=tests/data/multi-small.yaml
run_cmd "$DPUSIM" run "$M" --json --trace "$E2E_TMP/m.json"
expect_rc 0 "run of a multi-job scenario"
echo "$OUT" > "$E2E_TMP/multi.json"
run_cmd "$DPUSIM" run tests/data/multi-small-alone.yaml --json
expect_rc 0 "run of its first job alone"
echo "$OUT" > "$E2E_TMP/alone.json"
if python3 - "$E2E_TMP/multi.json" "$E2E_TMP/alone.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1])); alone = json.load(open(sys.argv[2]))
names = [v["name"] for v in a["variants"]]
assert names == ["tenant-a/baseline", "tenant-a/gdr", "tenant-b/baseline", "tenant-b/gdr"], names
for v in a["variants"]:
    it = v["metrics"]["iteration_s"]
    parts = sum(v["breakdown_s"].values())
    assert abs(parts - it["mean"]) <= 1e-9 * it["mean"], (v["name"], parts, it["mean"])
    assert v["collectives"] and v["metrics"]["samples_per_s"] > 0, v["name"]
    assert a["info"][v["name"] + ".critical_path"], v["name"]
assert [v["name"] for v in alone["variants"]] == names[:2]
for k in range(2):
    together = a["variants"][k]["metrics"]["iteration_s"]["mean"]
    by_itself = alone["variants"][k]["metrics"]["iteration_s"]["mean"]
    assert together > 1.05 * by_itself if k else together >= by_itself, (names[k], together, by_itself)
PY
then ok "one section per job and variant, breakdowns add up, sharing slows tenant-a under RDMA"; else not_ok "multi-job report"; fi
for v in tenant-a-baseline tenant-b-gdr; do
	if python3 -c "
import json
d = json.load(open('$E2E_TMP/m.$v.json'))['traceEvents']
assert {'forward', 'backward'} <= {e['name'] for e in d if e['ph'] == 'X'}
"; then ok "trace of $v"; else not_ok "trace of $v"; fi
done
run_cmd "$DPUSIM" run "$M" --json
first=$OUT
run_cmd "$DPUSIM" run "$M" --json
if [ "$OUT" = "$first" ]; then ok "multi-job: same seed, byte-identical report"; else not_ok "multi-job reports differ for one seed"; fi

run_cmd "$DPUSIM" run "$S" --replications 0
expect_rc 2 "bad --replications"
# Names at their longest (63 characters): a multi-job variant is
# job/variant, 127, and every info key about it is whole. Keys built in
# 96-byte buffers cut "JOB/VARIANT.note1" to the same 95 characters as
# note2..note6, critical_path and memory_per_gpu, which then overwrote
# one another (one key where eight belong).
J=$(printf 'j%.0s' $(seq 63)); V=$(printf 'v%.0s' $(seq 63))
sed -e "s/name: tenant-a/name: $J/" -e "s/name: baseline/name: $V/" "$M" >"$E2E_TMP/long.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/long.yaml" --json
expect_rc 0 "a multi-job run with 63-character names"
if python3 -c '
import json, sys
j, v = sys.argv[1], sys.argv[2]
info = json.loads(sys.stdin.read())["info"]
pre = j + "/" + v + "."
keys = [k for k in info if k.startswith(pre)]
whats = {k[len(pre):] for k in keys}
need = {"hardware", "routing", "critical_path", "memory_per_gpu", "note1", "note2"}
assert need <= whats, sorted(whats)
assert not [k for k in info if k.startswith(j + "/" + v[:20]) and not k.startswith(pre)], "cut keys"
' "$J" "$V" <<<"$OUT"; then ok "every info key of the long-named variant is whole"
else not_ok "info keys of a long-named multi-job variant were cut"; fi

run_cmd "$DPUSIM" run "$S" --frobnicate
expect_rc 2 "unknown option"
run_cmd "$DPUSIM" run "$E2E_TMP/none.yaml"
expect_rc 2 "missing file"
finish
