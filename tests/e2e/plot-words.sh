# Capacity plots read in words with units: the metric named as a reader
# would ('time per iteration (s)', not 'iteration_s'), the sweep axis in the
# unit the sweep was written in ('link rate (Gbps)'), time to train in days,
# fractions in percent.
. tests/e2e/lib.sh
T=$E2E_TMP

cat >"$T/lr.yaml" <<YAML
extends: $PWD/scenarios/allreduce-4ranks.yaml
name: lr
workload:
  collective: { sizes: [1MiB], iterations: 1 }
sweep:
  cluster.fabric.link_rate: [100Gbps, 200Gbps]
YAML
run_cmd "$DPUSIM" sweep "$T/lr.yaml" --db "$T/lr.db"
expect_rc 0 "a link-rate sweep"
run_cmd "$DPUSIM" plot "$T/lr.db" --kind capacity --metric iteration_s -o "$T/lr.svg"
expect_rc 0 "capacity plot of iteration time"
for want in 'link rate (Gbps)' 'time per iteration (s)' 'Time per iteration in s against link rate (Gbps): lr'; do
	if grep -qF "$want" "$T/lr.svg"; then ok "the plot says '$want'"
	else not_ok "the plot lacks '$want'"; fi
done
if grep -q 'iteration_s\|cluster.fabric.link_rate' "$T/lr.svg"; then not_ok "raw key names left in the plot"
else ok "no raw key names"; fi
run_cmd "$DPUSIM" plot "$T/lr.db" --kind scaling -o "$T/sc.svg"
expect_rc 0 "scaling plot"
if grep -qF 'speedup over the first variant (x)' "$T/sc.svg"; then ok "speedup axis in words"
else not_ok "speedup axis"; fi

cat >"$T/ttt.yaml" <<YAML
extends: $PWD/tests/e2e/data/failures-cost.yaml
name: ttt
sweep:
  cluster.nodes: [2, 4]
YAML
run_cmd "$DPUSIM" sweep "$T/ttt.yaml" --db "$T/ttt.db"
expect_rc 0 "a training sweep with time to train"
run_cmd "$DPUSIM" plot "$T/ttt.db" --kind capacity --metric time_to_train_s -o "$T/ttt.svg"
expect_rc 0 "time to train plot"
if grep -qF 'time to train (days)' "$T/ttt.svg" && grep -qF '>nodes<' "$T/ttt.svg"; then
	ok "time to train in days against nodes"
else not_ok "time to train labels"; fi
# The plotted values are days (the report's seconds / 86400): the y axis
# ticks stay in the range of the stored time to train in days.
d=$(sqlite3 "$T/ttt.db" "SELECT max(json_extract(report, '\$.variants[0].metrics.time_to_train_s')) FROM runs")
if python3 - "$T/ttt.svg" "$d" <<'PY'
import re, sys
svg = open(sys.argv[1]).read(); days = float(sys.argv[2]) / 86400
ticks = [float(t) for t in re.findall(r">\s*(-?[0-9.]+)\s*</text>", svg)]
assert ticks and max(ticks) < 10 * days + 10, (max(ticks), days)
assert max(ticks) >= days / 2, (max(ticks), days)
PY
then ok "the y axis is in days"; else not_ok "the y axis is not in days"; fi

# A breakdown from a database names the sweep point it draws; components
# zero in every variant stay out of the legend.
run_cmd "$DPUSIM" plot "$T/ttt.db" --kind breakdown -o "$T/bd.svg"
expect_rc 0 "breakdown of the newest stored run"
if grep -qE 'ttt \(sim, cluster\.nodes=[0-9]+\)' "$T/bd.svg"; then ok "the title names the run's point"
else not_ok "breakdown title lacks the point"; fi
if grep -q '>compute<' "$T/bd.svg" && ! grep -q '>pipeline_bubble<\|>other<' "$T/bd.svg"; then
	ok "zero-only components are not in the legend"
else not_ok "breakdown legend: $(grep -o '>[a-z_]*<' "$T/bd.svg" | sort -u | tr '\n' ' ')"; fi

# compare: zero and the tolerance band are always in view, even when every
# error is zero (a report against itself).
"$DPUSIM" run tests/data/train-small.yaml --json >"$T/a.json"
run_cmd "$DPUSIM" plot "$T/a.json" "$T/a.json" --kind compare --tolerance 10% -o "$T/cmp.svg"
expect_rc 0 "compare plot of a report against itself"
if python3 - "$T/cmp.svg" <<'PY'
import re, sys
ticks = [float(t) for t in re.findall(r">\s*(-?[0-9.]+)\s*</text>", open(sys.argv[1]).read())]
assert min(ticks) <= -10 and max(ticks) >= 10, ticks
PY
then ok "the +-10% band is inside the y range"; else not_ok "the tolerance band is out of view"; fi

# Timeline labels stay readable by default: 64 tracks grow the picture
# (18 pixels a row) instead of squeezing 64 labels into 600 pixels; --size
# still decides when given.
python3 - "$T/t64.json" <<'PY'
import json, sys
ev = [{"ph": "X", "cat": "compute", "name": "k", "pid": 0, "tid": i, "ts": 0, "dur": 5} for i in range(64)]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
png_h() { python3 -c 'import struct,sys; print(struct.unpack(">I", open(sys.argv[1],"rb").read()[20:24])[0])' "$1"; }
run_cmd "$DPUSIM" plot "$T/t64.json" --kind timeline -o "$T/t64.png"
expect_rc 0 "timeline of 64 tracks"
h=$(png_h "$T/t64.png")
if [ "$h" -ge $((18 * 64)) ]; then ok "the picture grew to $h pixels for 64 rows"; else not_ok "64 rows in $h pixels"; fi
run_cmd "$DPUSIM" plot "$T/t64.json" --kind timeline --size 1000x600 -o "$T/t64s.png"
h=$(png_h "$T/t64s.png")
if [ "$h" -eq 600 ]; then ok "--size is kept as given"; else not_ok "--size 1000x600 gave $h"; fi

finish
