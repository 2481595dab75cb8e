# Steady state (models/train_steady.c): a job whose iterations are identical
# by construction stops simulating once one repeats the one before, and
# says so; noise keeps every iteration simulated (issue 14).
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
finish
