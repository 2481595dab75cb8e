# collectives.ring_steps: exact by default (the report says nothing), lumped
# on request (an approximation: the report's info says so, and the figures
# stay near the exact model's), anything else refused at its place.
. tests/e2e/lib.sh

cat >"$E2E_TMP/lumped.yaml" <<EOF2
extends: $PWD/scenarios/demo.yaml
replications: 1
collectives: { ring_steps: lumped }
EOF2
sed 's/ring_steps: lumped/ring_steps: exact/' "$E2E_TMP/lumped.yaml" >"$E2E_TMP/exact.yaml"
iters() { python3 -c 'import json,sys; r=json.load(sys.stdin); print(" ".join(str(v["metrics"]["iteration_s"]["mean"]) for v in r["variants"]))'; }
run_cmd "$DPUSIM" run "$E2E_TMP/exact.yaml" --json
expect_rc 0 "ring_steps: exact runs"
if grep -q '"ring_steps"' <<<"$OUT"; then not_ok "the exact model has no ring_steps info"; else ok "the exact model adds no info"; fi
exact=$(iters <<<"$OUT")
run_cmd "$DPUSIM" run "$E2E_TMP/lumped.yaml" --json
expect_rc 0 "ring_steps: lumped runs"
expect_out '"ring_steps": "lumped \(collectives.ring_steps: lumped\)' "the report says the steps ran lumped"
lumped=$(iters <<<"$OUT")
if python3 -c 'import sys; a=[float(x) for x in sys.argv[1].split()]; b=[float(x) for x in sys.argv[2].split()]
sys.exit(not (len(a) == len(b) == 2 and all(abs(x - y) <= 0.01 * x for x, y in zip(a, b))))' "$exact" "$lumped"; then
	ok "lumped iteration times within 1% of exact ($lumped vs $exact)"
else not_ok "lumped $lumped vs exact $exact"; fi
run_cmd "$DPUSIM" run "$E2E_TMP/lumped.yaml" --dump
expect_out '^  ring_steps: lumped$' "--dump keeps the setting"

sed 's/ring_steps: lumped/ring_steps: lump/' "$E2E_TMP/lumped.yaml" >"$E2E_TMP/bad.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/bad.yaml"
expect_rc 2 "an unknown ring_steps value"
expect_err "bad.yaml:3:[0-9]+: unknown ring_steps .lump. \(expected exact or lumped" "the error points at the value"
finish
