# dpusim-hw replay of a collective scenario, for real over tcp across 4 ranks:
# a source "hw" report with the simulator's keys, every result verified; bad
# input refused plainly; and, once dpusim run/compare exist, the comparison.
. tests/e2e/lib.sh
hw_setup
SCN=tests/e2e/data/hw-allreduce4.yaml

run_cmd "${MPIRUN[@]}" -np 4 "$HW" replay "$SCN" -o "$E2E_TMP/hw.json"
expect_rc 0 "replay of a 4-rank all-reduce scenario over tcp"
expect_out 'allreduce ring +4 ranks +1048576 B .*\(median of 20; p10 [0-9.]+, p90 [0-9.]+ us\) +verified x21' \
	"every size verified: a warm-up and 20 timed calls (the scenario's 3 iterations, at least 20)"
if python3 - "$E2E_TMP/hw.json" "$SCN" <<'PY'
import hashlib, json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "dpusim-report/1" and d["source"] == "hw"
assert d["scenario"]["name"] == "hw-allreduce4" and d["scenario"]["seed"] == 7
assert d["scenario"]["sha256"] == hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
assert [v["name"] for v in d["variants"]] == ["baseline"], d["variants"]  # tcp stands for host-tcp only
v = d["variants"][0]
assert v["offload"]["network"] == "host-tcp"
c = v["collectives"]
assert [x["bytes"] for x in c] == [4096, 65536, 1048576]
for x in c:
    assert x["op"] == "allreduce" and x["algo"] == "ring" and x["ranks"] == 4
    assert x["time_s"] > 0
    # time_s is the median call; the spread is ordered around it
    assert x["calls"] == 20, x
    assert 0 < x["time_min_s"] <= x["time_p10_s"] <= x["time_s"] <= x["time_p90_s"], x
    assert abs(x["algbw_GBps"] - x["bytes"] / x["time_s"] / 1e9) < 1e-9 * x["algbw_GBps"]
    assert abs(x["busbw_GBps"] - x["algbw_GBps"] * 1.5) < 1e-9 * x["busbw_GBps"]
assert abs(v["metrics"]["iteration_s"]["mean"] - sum(x["time_s"] for x in c)) < 1e-12
assert d["info"]["replay.collective_time"].startswith("each size's time_s is the median of 20 calls after one untimed warm-up"), d["info"]
PY
then ok "the replay report has the simulator's keys and consistent figures, medians with their spread"
else not_ok "replay report"; fi

run_cmd "${MPIRUN[@]}" -np 4 "$HW" replay "$SCN" --reps 4 -o "$E2E_TMP/hw4.json"
expect_rc 0 "--reps 4"
expect_out 'allreduce ring +4 ranks +4096 B .*\(median of 4; .* +verified x5$' "takes 4 timed calls a size"
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d["variants"][0]["collectives"]; \
	assert [x["calls"] for x in c] == [4, 4, 4], c; \
	assert "median of 4 calls" in d["info"]["replay.collective_time"]' "$E2E_TMP/hw4.json"; then
	ok "the report says 4 calls"
else not_ok "--reps 4 report"; fi
run_cmd "$HW" replay "$SCN" --reps 0
expect_rc 2 "--reps 0 is refused"
expect_err "bad --reps '0' \(timed calls per size, 1..100000\)" "saying the range"
# Numbers are whole strings (sscanf took '64k' as 64, '5xyz' as 5) and a
# timeout under 1 ms is refused (1e-9 came to 0 ms: every wait failed at
# once, or --start-timeout's default) -- tools/fuzz-cli's findings.
for ov in "--reps 5x" "--point 0x" "--gemm-n 64k" "--scale 0.5abc" "--timeout 5xyz" \
	  "--timeout 1e-9" "--start-timeout 0.0001" "--reps 1e3" "--point -0" "--scale 0x0.8"; do
	run_cmd "$HW" replay "$SCN" $ov
	expect_rc 2 "replay $ov is refused"
	expect_err "bad ${ov% *} '${ov#* }'" "naming it"
done
for ov in "--timeout 2min" "--start-timeout 1e-9" "--timeout nan"; do
	run_cmd "$HW" bench --quick $ov
	expect_rc 2 "bench $ov is refused"
	expect_err "bad ${ov% *} '${ov#* }'" "naming it"
done
# bench -o into a folder that is not there: said before the benchmarks run
# (it failed the write after a whole run)
run_cmd "$HW" bench --quick --sizes 4K -o "$E2E_TMP/no-such/b.json"
expect_rc 2 "bench -o into a missing folder"
expect_err "-o '$E2E_TMP/no-such/b.json': cannot write in folder '$E2E_TMP/no-such': No such file" "names the folder"
if grep -q memcpy_bw <<<"$OUT"; then not_ok "the benchmarks ran first"; else ok "before any benchmark ran"; fi

run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$SCN"
expect_rc 2 "rank count must match the scenario"
expect_err 'the scenario has 4 ranks; run it with mpirun -np 4' "and says how"

cat >"$E2E_TMP/train.yaml" <<'YAML'
name: one-replica
cluster: { nodes: 1, gpus_per_node: 8, gpu: H100-SXM5, cpu: Xeon-8480C, host_costs: host-costs-linux,
           nic: { profile: ConnectX-7-NDR, rdma_latency: 0.6us }, nics_per_node: 8,
           fabric: { topology: single-switch, switch: { profile: QM9700-NDR, latency: 130ns } } }
workload: { model: llama2-7b, precision: bf16, parallelism: { tp: 8, pp: 1, dp: auto },
            batch: { global: 8, micro: 1 }, iterations: 1 }
variants: [ { name: baseline, network: host-tcp } ]
YAML
run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$E2E_TMP/train.yaml"
expect_rc 2 "a training workload goes to the training replay, which wants one rank per replica"
expect_err 'dp 1 data-parallel replicas, one rank each; run it with mpirun -np 1' "plainly"
run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$E2E_TMP/train.yaml" --reps 3
expect_rc 2 "--reps on a training scenario is refused"
expect_err 'train\.yaml: --reps applies to collective scenarios' "saying what it applies to"

printf 'name: broken\ncluster: { nodes: 1 }\nbogus_key: 3\n' >"$E2E_TMP/bad.yaml"
run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$E2E_TMP/bad.yaml"
expect_rc 2 "a malformed scenario is refused"
expect_err 'bad\.yaml:[0-9]+:[0-9]+: ' "with file:line:column"
expect_err "^dpusim-hw: (rank 0: )?error: '.*bad\\.yaml' is not a valid scenario \\([0-9]+ errors\\)$" "and the closing line dpusim prints"
run_cmd "$HW" replay '3 '
expect_rc 2 "a scenario that does not exist is refused"
expect_err "^dpusim-hw: (rank 0: )?error: '3 ' is not a valid scenario \\(1 error\\)$" "the name quoted, its spaces seen (tools/fuzz-cli seed 1205)"

run_cmd "$HW" replay
expect_rc 2 "replay without a FILE"

# A sweep: every point is replayed, each into its own report named and
# labelled as `dpusim sweep -o DIR` names them (issue 20; issue 18 item 3:
# only the first point used to run, silently).
sed -e 's/nodes: 4/nodes: 2/' -e 's/ranks: 4/ranks: 2/' -e 's/^name: .*/name: hw-sweep2/' \
	-e 's/sizes: \[.*\]/sizes: [4KiB]/' "$SCN" >"$E2E_TMP/sw.yaml"
printf 'sweep:\n  workload.collective.sizes: [[4KiB], [8KiB, 16KiB]]\n' >>"$E2E_TMP/sw.yaml"
run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$E2E_TMP/sw.yaml" -o "$E2E_TMP/swhw"
expect_rc 0 "replay of a 2-point sweep"
expect_out '^sweep point 1 of 2: workload.collective.sizes=\[8KiB, 16KiB\]' "says which point runs"
run_cmd "$BIN/dpusim" sweep "$E2E_TMP/sw.yaml" --db "$E2E_TMP/sw.db" -o "$E2E_TMP/swsim"
expect_rc 0 "the simulator's sweep of the same file"
if python3 - "$E2E_TMP/swhw" "$E2E_TMP/swsim" <<'PY'
import json, os, sys
hw, sim = sys.argv[1], sys.argv[2]
assert sorted(os.listdir(hw)) == sorted(os.listdir(sim)) == ["hw-sweep2.p0.json", "hw-sweep2.p1.json"]
want = {0: [4096], 1: [8192, 16384]}
for i in (0, 1):
    h = json.load(open(f"{hw}/hw-sweep2.p{i}.json"))
    s = json.load(open(f"{sim}/hw-sweep2.p{i}.json"))
    assert h["source"] == "hw" and s["source"] == "sim"
    assert h["scenario"]["point"] == s["scenario"]["point"], (h["scenario"], s["scenario"])
    assert h["scenario"]["sha256"] == s["scenario"]["sha256"]
    assert h["info"]["sweep_index"] == str(i) and h["info"]["sweep_points"] == "2"
    assert [c["bytes"] for c in h["variants"][0]["collectives"]] == want[i], h["variants"]
PY
then ok "one report per point, sizes per point, labels and file names as dpusim sweep's"
else not_ok "sweep reports"; fi

run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$E2E_TMP/sw.yaml"
expect_rc 2 "a whole sweep without -o DIR is refused"
expect_err 'a sweep of 2 points writes one report per point: give -o DIR' "saying what to give"
# A folder whose points' reports would be named past the path limit (their
# names were cut at 4,096 bytes and another file written): refused first.
DEEP=$(python3 -c '
import sys
cur = sys.argv[1] + "/deep"
while len(cur) < 4090 - 201:
    cur += "/" + "d" * 200
print(cur + "/" + "e" * (4090 - len(cur) - 1))' "$E2E_TMP")
run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$E2E_TMP/sw.yaml" -o "$DEEP"
expect_rc 2 "a sweep into a 4,090-byte folder is refused"
expect_err "a point's report would be named past the path limit \(4095 bytes\)" "saying why"
if grep -q "sweep point" <<<"$OUT"; then not_ok "a point ran before the refusal"
else ok "no point ran"; fi
run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$E2E_TMP/sw.yaml" --point 1
expect_rc 0 "--point 1 replays that point alone"
if python3 -c 'import json,sys; d=json.loads(sys.stdin.read().split("\n",1)[1]); \
	assert d["scenario"]["point"] == "workload.collective.sizes=[8KiB, 16KiB]"; \
	assert d["info"]["sweep_index"] == "1"' <<<"$(grep -v '^  allreduce' <<<"$OUT" | sed 1d)"; then
	ok "its report on stdout is point 1's"
else not_ok "--point 1 report: ${OUT:0:300}"; fi
run_cmd "$HW" replay "$E2E_TMP/sw.yaml" --point 2
expect_rc 2 "--point past the sweep is refused"
expect_err -- "--point 2: .*sw\.yaml has 2 sweep points \(0 to 1\)" "naming the range"

# A point that cannot run here refuses the whole sweep before anything runs.
sed -e 's/^sweep:.*//' -e 's/^  workload.collective.sizes: .*//' "$E2E_TMP/sw.yaml" >"$E2E_TMP/bad-sw.yaml"
printf 'sweep:\n  workload.collective.algo: [ring, tree]\n' >>"$E2E_TMP/bad-sw.yaml"
run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$E2E_TMP/bad-sw.yaml" -o "$E2E_TMP/badout"
expect_rc 2 "a sweep with a point the hardware cannot run is refused"
expect_err "bad-sw\.yaml, sweep point 1 \(workload\.collective\.algo=tree\): algorithm 'tree' is not implemented on hardware" \
	"naming the point and why"
if [ ! -e "$E2E_TMP/badout" ]; then ok "nothing ran, nothing written"; else not_ok "reports written: $(ls "$E2E_TMP/badout")"; fi

# Simulation against reality, end to end, once the dpusim side exists.
if "$BIN/dpusim" run --help >/dev/null 2>&1 && "$BIN/dpusim" compare --help >/dev/null 2>&1 &&
   ! "$BIN/dpusim" --help | grep -Eq '^  (run|compare) .*not built yet'; then
	run_cmd "$BIN/dpusim" run "$SCN" --json
	expect_rc 0 "dpusim run simulates the same scenario"
	printf '%s\n' "$OUT" >"$E2E_TMP/sim.json"
	run_cmd "$BIN/dpusim" compare "$E2E_TMP/sim.json" "$E2E_TMP/hw.json"
	if [ "$RC" -eq 0 ] || [ "$RC" -eq 1 ]; then ok "dpusim compare sim vs hw runs (exit $RC)"
	else not_ok "dpusim compare: exit $RC: ${ERR:0:300}"; fi
	expect_out 'allreduce|baseline' "the comparison names the collective or variant"
else
	echo "skip - dpusim run/compare not built yet in this tree: comparison not exercised"
fi

finish
