# Steady state (models/train_steady.c): a job whose iterations are identical
# by construction stops simulating once one repeats the one before, and
# says so; noise keeps every iteration simulated (issue 14). The same for a
# collective benchmark's runs of one size (tools/run.c run_size).
. tests/e2e/lib.sh
S=tests/data/train-small.yaml

sed -e '/^noise:/d' -e 's/iterations: [0-9]*/iterations: 6/' "$S" >"$E2E_TMP/quiet.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/quiet.yaml" --json --replications 1
expect_rc 0 "a noise-free job runs"
expect_out '"gdr\.steady_state": "measured iterations [0-9]+ to 6 repeat iteration [0-9]+ exactly' \
	"its report says which iterations were added as copies"
if python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
for v in r["variants"]:
    it = v["metrics"]["iteration_s"]
    assert it["p50"] == it["p99"] and abs(it["mean"] - it["p50"]) <= 1e-12 * it["p50"], (v["name"], it)
' <<<"$OUT"; then ok "every iteration of it took the same time"
else not_ok "iterations differ in a steady-state report"; fi
run_cmd "$DPUSIM" run "$S" --json --replications 1
expect_rc 0 "the same job with GPU noise"
if grep -q steady_state <<<"$OUT"; then not_ok "a noisy job was cut short"
else ok "a noisy job simulates every iteration"; fi

# A collective benchmark: 12 runs a size, nothing drawn per run (the
# shipped sweep's tree point, which simulated all 20 runs of every size).
C=scenarios/allreduce-sweep.yaml
sed -e '/^sweep:/,$d' -e 's/algo: ring/algo: tree/' -e 's/iterations: 20/iterations: 12/' \
	-e 's/to: 1GiB/to: 64MiB/' "$C" >"$E2E_TMP/tree.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/tree.yaml" --json
expect_rc 0 "a collective benchmark without jitter runs"
expect_out '"rdma-gdr\.steady_state": "[0-9]+ of the 108 collective runs \(12 per size\) simulated' \
	"its report says how many of its runs were simulated"
FULL=$OUT
sed -e 's/iterations: 12/iterations: 1/' "$E2E_TMP/tree.yaml" >"$E2E_TMP/tree1.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/tree1.yaml" --json
if python3 -c '
import json, sys
a, b = (json.loads(open(f).read()) for f in sys.argv[1:3])
n = 0
for va, vb in zip(a["variants"], b["variants"]):
    for x, y in zip(va["collectives"], vb["collectives"]):
        assert abs(x["time_s"] - y["time_s"]) <= 1e-12 * y["time_s"], (va["name"], x, y)
        n += 1
assert n == 18, n
' <(printf '%s' "$FULL") <(printf '%s' "$OUT"); then
	ok "each size's mean over its 12 runs is its one run's time"
else not_ok "a steady-state collective's rows differ from one run's"; fi
# Host-tcp with OS jitter draws per message: every run simulated there.
run_cmd "$DPUSIM" run scenarios/effects/os-jitter-host-tcp.yaml --json
expect_rc 0 "the OS-jitter collective runs"
if grep -q '"host-tcp\.steady_state"' <<<"$OUT"; then not_ok "a jittered collective was cut short"
else ok "a jittered collective simulates every run"; fi
expect_out '"rdma\.steady_state": "2 of the 20 collective runs' \
	"its RDMA variant, which no kernel stack jitters, stops after two"
finish
