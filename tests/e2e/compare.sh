# dpusim compare: exit codes 0/1/2, one-sided metrics and variants listed, JSON output,
# per-size collective rows with their regime, replay scales.
. tests/e2e/lib.sh
SIM=tests/data/report-sim.json
HW=tests/data/report-hw.json

run_cmd "$DPUSIM" compare "$SIM" "$HW"
expect_rc 0 "compare without tolerance"
expect_out '^dpu +samples_per_s +2560 +2381.4 +-6.98%' "shared metric with both values and relative error"
expect_out '^baseline +energy_kwh +0.0125 +- +only in A' "metric only in A is listed"
expect_out '^dpu-nocrypto +samples_per_s +- +2400 +only in B' "variant only in B is listed"
expect_out 'summary: 23 shared, max \|rel_err\| 8.62% \(baseline iteration_s.p99\), 18 only in A, 2 only in B' "summary line"

run_cmd "$DPUSIM" compare "$SIM" "$HW" --tolerance 10%
expect_rc 0 "all shared metrics within 10%"

run_cmd "$DPUSIM" compare --tolerance 5% "$SIM" "$HW"
expect_rc 1 "some shared metric beyond 5%"
expect_out 'dpu +iteration_s +0.4 +0.43 +\+7.50%  beyond tolerance' "the offending metric is marked"
expect_out "11 beyond tolerance 5%" "count of metrics beyond tolerance"

run_cmd "$DPUSIM" compare "$SIM" "$SIM" --tolerance 0%
expect_rc 0 "a report against itself is exact"

run_cmd "$DPUSIM" compare "$SIM" "$HW" --json
expect_rc 0 "compare --json"
if python3 - "$E2E_TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {(r["variant"], r["metric"]): r for r in d["rows"]}
assert d["tolerance"] is None
assert rows[("baseline", "cost_usd")]["b"] is None
assert rows[("dpu-nocrypto", "samples_per_s")]["a"] is None
assert abs(rows[("dpu", "iteration_s")]["rel_err"] - 0.075) < 1e-12
t = rows[("baseline", "allreduce.ring.8r.268435456B.time_s")]
assert t["b_calls"] == 20 and t["b_p10"] == 0.013 and t["b_p90"] == 0.0135 and "a_calls" not in t, t
PY
then ok "--json parses and holds one-sided rows as null, and the replayed row's spread"; else not_ok "--json content"; fi

# A replayed row (report-hw.json: 20 calls) is its median with the spread beside it.
run_cmd "$DPUSIM" compare "$SIM" "$HW"
expect_out "^note: B's collective time_s is the median of its calls \(dpusim-hw replay\)" \
	"says the measured time is a median"
expect_out '^baseline +allreduce\.ring\.8r\.268435456B\.time_s +0\.0125 +0\.0131 +\+4\.80%  \[B: 20 calls, p10\.\.p90 0\.013\.\.0\.0135, A outside\]$' \
	"and shows its p10..p90 and that A's time lies outside it"
run_cmd "$DPUSIM" compare "$HW" "$SIM"
expect_out '268435456B\.time_s +0\.0131 +0\.0125 .*\[A: 20 calls, p10\.\.p90 0\.013\.\.0\.0135, B outside\]$' \
	"either side"

printf '{"schema": "dpusim-report/1",\n  "source": "sim"\n  "version": "x"}\n' > "$E2E_TMP/bad.json"
run_cmd "$DPUSIM" compare "$SIM" "$E2E_TMP/bad.json"
expect_rc 2 "malformed report"
expect_err 'bad.json:3:[0-9]+: invalid JSON' "malformed report error names file:line:col"

run_cmd "$DPUSIM" compare "$SIM" "$E2E_TMP/missing.json"
expect_rc 2 "missing report"
expect_err 'missing.json: cannot open' "missing file is named"

run_cmd "$DPUSIM" compare "$SIM" "$HW" --tolerance 10
expect_rc 2 "tolerance without % is refused"
run_cmd "$DPUSIM" compare "$SIM"
expect_rc 2 "one report is a usage error"
run_cmd "$DPUSIM" compare "$SIM" "$HW" --frob
expect_rc 2 "unknown option"
run_cmd "$DPUSIM" compare --help
expect_rc 0 "compare --help"
expect_out 'only in A' "help explains one-sided entries"

# Per-size collective rows (fixtures: t = 20 us + bytes / 50 GB/s; B's latency-bound
# sizes 50% slower, its bandwidth-bound sizes 2% slower).
SS=tests/data/report-sim-sizes.json
HS=tests/data/report-hw-sizes.json
run_cmd "$DPUSIM" compare "$SIM" "$HW"
expect_out '^baseline +allreduce.ring.8r.268435456B.time_s +0.0125 +0.0131 +\+4.80%' "collective time per size"
expect_out '^baseline +allreduce.ring.8r.268435456B.busbw_GBps +37.581 +35.8597 +-4.58%' "collective busbw per size"
expect_out '^dpu +allreduce.ring.8r.268435456B.time_s +0.0031 +- +only in A' "collective only in A"
run_cmd "$DPUSIM" compare "$SS" "$HS"
expect_rc 0 "per-size compare without tolerance"
expect_out '^rdma +allreduce.ring.8r.8192B.time_s +2.01638e-05 +3.02458e-05 +\+50.00%  latency-bound$' "small size is latency-bound"
expect_out '^rdma +allreduce.ring.8r.67108864B.busbw_GBps +86.2151 +84.5248 +-1.96%  bandwidth-bound$' "large size is bandwidth-bound"
expect_out '^rdma +allgather.ring.8r.4096B.time_s +- +3e-05 +only in B' "size only in B is listed"
expect_out '^rdma +samples_per_s +2048 +2007.84 +-1.96%' "training metric beside the collectives"
expect_out '^regime latency-bound: 2 sizes, mean time_s rel_err \+50.00%, mean \|rel_err\| 50.00%; points to per-step latency: nic.rdma_latency' "latency regime summary names latency parameters"
expect_out '^regime bandwidth-bound: 2 sizes, mean time_s rel_err \+2.00%, mean \|rel_err\| 2.00%; points to link rate: fabric.link_rate' "bandwidth regime summary names rate parameters"
expect_out "regimes from A's algbw" "the simulated report classes the sizes"
run_cmd "$DPUSIM" compare "$HS" "$SS"
expect_out "regimes from B's algbw" "B classes the sizes when only B is simulated"
expect_out '^regime latency-bound: 2 sizes, mean time_s rel_err -33.33%' "reversed comparison"
run_cmd "$DPUSIM" compare "$SS" "$HS" --tolerance 10%
expect_rc 1 "latency-bound sizes beyond 10%"
expect_out '^rdma +allreduce.ring.8r.262144B.time_s .*\+50.00%  beyond tolerance  latency-bound$' "collective row beyond tolerance is marked"
expect_out "4 beyond tolerance 10%" "only the latency-bound rows are beyond 10%"
run_cmd "$DPUSIM" compare "$SS" "$HS" --json
expect_rc 0 "per-size compare --json"
if python3 - "$E2E_TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {(r["variant"], r["metric"]): r for r in d["rows"]}
r = rows[("rdma", "allreduce.ring.8r.8192B.time_s")]
assert (r["op"], r["algo"], r["ranks"], r["bytes"], r["regime"]) == ("allreduce", "ring", 8, 8192, "latency-bound")
assert abs(r["rel_err"] - 0.5) < 1e-5
assert rows[("rdma", "allgather.ring.8r.4096B.time_s")]["regime"] is None
g = {x["regime"]: x for x in d["regimes"]}
assert g["latency-bound"]["sizes"] == 2 and abs(g["latency-bound"]["mean_rel_err"] - 0.5) < 1e-5
assert g["bandwidth-bound"]["sizes"] == 2 and abs(g["bandwidth-bound"]["mean_abs_rel_err"] - 0.02) < 1e-5
assert "rdma_latency" in g["latency-bound"]["points_to"]
assert d["scale_a"] == 1 and d["scale_b"] == 1 and d["collectives_only"] is False
PY
then ok "--json holds per-size rows and regimes"; else not_ok "--json per-size content"; fi

# Replay scales: a replay at --scale S records info replay.scale.
sed 's/"host": "fixture",/"host": "fixture", "replay.scale": "1e-06",/' "$HS" > "$E2E_TMP/scaled.json"
grep -q '"replay.scale": "1e-06"' "$E2E_TMP/scaled.json" || not_ok "scaled fixture written"
run_cmd "$DPUSIM" compare "$SS" "$E2E_TMP/scaled.json"
expect_rc 2 "different scales are refused"
expect_err 'report-sim-sizes.json is at scale 1, .*scaled.json at scale 1e-06' "refusal names both scales"
expect_err 'collectives-only' "refusal says what can be compared"
run_cmd "$DPUSIM" compare "$SS" "$E2E_TMP/scaled.json" --collectives-only --json
expect_rc 0 "--collectives-only across scales"
if python3 - "$E2E_TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["scale_a"] == 1 and d["scale_b"] == 1e-06 and d["collectives_only"] is True
assert d["rows"] and all("op" in r for r in d["rows"])
PY
then ok "--collectives-only compares only collective rows"; else not_ok "--collectives-only content"; fi
run_cmd "$DPUSIM" compare "$E2E_TMP/scaled.json" "$E2E_TMP/scaled.json" --tolerance 0%
expect_rc 0 "same scale compares everything"
expect_out '^rdma +iteration_s ' "same scale keeps training metrics"
sed 's/"host": "fixture",/"host": "fixture", "replay.scale": "2",/' "$HS" > "$E2E_TMP/badscale.json"
run_cmd "$DPUSIM" compare "$SS" "$E2E_TMP/badscale.json"
expect_rc 2 "bad replay.scale"
expect_err "badscale.json: info replay.scale '2' is not a fraction" "bad scale names the file"

finish
