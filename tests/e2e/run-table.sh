# dpusim run's text table is for people: durations with a unit that fits,
# money and large counts with thousands separators, rates with their unit,
# no exponents; one algorithm column in the collective table; replications
# without noise said to be identical, once. The cells are checked against the
# same run's --json (full precision, unchanged by the table's formatting).
. tests/e2e/lib.sh

no_exponent() {
	if grep -Eq '[0-9]e[+-]?[0-9]' <<<"$OUT"; then not_ok "$1: an exponent: $(grep -E '[0-9]e[+-]?[0-9]' <<<"$OUT" | head -2)"
	else ok "$1: no exponent in the table"; fi
}

run_cmd "$DPUSIM" run tests/e2e/data/failures-cost.yaml
expect_rc 0 "run failures-cost"
TABLE=$OUT
no_exponent "failures-cost"
run_cmd "$DPUSIM" run tests/e2e/data/failures-cost.yaml --json
printf '%s\n' "$OUT" >"$E2E_TMP/fc.json"
printf '%s\n' "$TABLE" >"$E2E_TMP/fc.txt"
if python3 - "$E2E_TMP/fc.json" "$E2E_TMP/fc.txt" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
def cells(label):
    line = [l for l in text.splitlines() if l.startswith(label + " ") or l == label][0]
    return re.findall(r"\S+(?: \S+)?", line[26:])
def grouped(x):
    return "{:,}".format(round(x))
def dur(x):  # tools/human.c hum_duration: the first unit the value reaches
    for lo, per, unit in ((2 * 86400, 86400, "days"), (2 * 3600, 3600, "h"), (120, 60, "min"),
                          (1, 1, "s"), (1e-3, 1e-3, "ms"), (1e-6, 1e-6, "us"), (0, 1e-9, "ns")):
        if abs(x) >= lo:
            return "%.4g %s" % (x / per, unit)
for i, v in enumerate(r["variants"]):
    m = v["metrics"]
    c = cells("tokens/s")[i]
    assert c == grouped(m["tokens_per_s"]), (c, m["tokens_per_s"])
    c = cells("cost")[i]
    assert c == "$" + grouped(m["cost_usd"]), (c, m["cost_usd"])
    c = cells("energy")[i]
    assert c == grouped(m["energy_kwh"]) + " kWh", (c, m["energy_kwh"])
    c = cells("time to train")[i]
    days = m["time_to_train_s"] / 86400
    assert c == "%.4g days" % days, (c, days)
    c = cells("iteration (mean)")[i]
    assert c == dur(m["iteration_s"]["mean"]), (c, m["iteration_s"])
    c = cells("  compute")[i]
    assert c == dur(v["breakdown_s"]["compute"]), c
PY
then ok "tokens/s, cost, energy, time to train, iteration and breakdown cells match --json in their units"
else not_ok "table cells against --json"; echo "$TABLE" | head -30; fi

# The collective table: one line per variant, the algorithm it ran in its
# own column, sizes in binary units, rates and times with their units.
run_cmd "$DPUSIM" run scenarios/demo.yaml --replications 2
expect_rc 0 "run demo"
no_exponent "demo"
expect_out '^collective +size +variant +algo +busbw +time$' "collective table header with one algo column"
# (demo trains bf16: its gradients reduced in fp32, 4 B a parameter, 401.6 MiB a stage)
expect_out '^allreduce +401.6 MiB +baseline +ring +[0-9.]+ GB/s +[0-9.]+ ms$' "baseline's choice in the algo column"
expect_out '^allreduce +401.6 MiB +rdma-gdr +ring +[0-9.]+ GB/s +[0-9.]+ ms$' "rdma-gdr's own choice, in the same column"
expect_out '^  \(no noise configured: the 2 replications are identical\)$' "replications without noise: said once"
n=$(grep -c 'no noise configured' <<<"$OUT")
if [ "$n" -eq 1 ]; then ok "said once"; else not_ok "said $n times"; fi

run_cmd "$DPUSIM" run scenarios/demo.yaml --replications 1
if grep -q 'no noise configured' <<<"$OUT"; then not_ok "one replication: nothing to say"
else ok "one replication: no note"; fi
run_cmd "$DPUSIM" run scenarios/effects/os-jitter-training.yaml --replications 2
expect_rc 0 "run with noise"
if grep -q 'no noise configured' <<<"$OUT"; then not_ok "noise configured, yet the note"
else ok "with noise: no note"; fi

# A collective benchmark has no breakdown: no heading over nothing (it was
# printed, padded with blanks, for every scenario).
run_cmd "$DPUSIM" run scenarios/allreduce-4ranks.yaml
if grep -q 'breakdown of an iteration' <<<"$OUT"; then not_ok "a breakdown heading with no rows"
else ok "collective benchmark: no breakdown heading"; fi
run_cmd "$DPUSIM" run scenarios/demo.yaml --replications 1
expect_out '^breakdown of an iteration$' "training: the heading, with nothing after it"
expect_out '^  compute +[0-9.]+ m?s +[0-9.]+ m?s$' "and its rows"

finish
