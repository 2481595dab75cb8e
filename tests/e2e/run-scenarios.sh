# Every shipped scenario (scenarios/ and scenarios/effects/) simulates with
# dpusim run and yields a report that validates: what `check` accepts, `run`
# must be able to run. One replication each, to keep this quick; capacity.yaml
# is a sweep whose base point alone takes ~20 s here (its points run through
# `dpusim sweep`), so it is left to `check`.
. tests/e2e/lib.sh

for f in scenarios/*.yaml scenarios/effects/*.yaml; do
	[ "$f" = scenarios/capacity.yaml ] && continue
	run_cmd "$DPUSIM" run "$f" --json --replications 1
	if [ "$RC" -ne 0 ]; then
		not_ok "$f: exit $RC: ${ERR:0:300}"
		continue
	fi
	echo "$OUT" > "$E2E_TMP/r.json"
	if python3 - "$E2E_TMP/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == "dpusim-report/1" and r["variants"], "empty report"
for v in r["variants"]:
    it = v["metrics"]["iteration_s"]["mean"]
    assert it > 0, "iteration time"
    bd = v.get("breakdown_s")
    if bd:
        assert abs(sum(bd.values()) - it) <= 1e-9 * it, "breakdown adds up"
PY
	then ok "$f runs and its report holds together"; else not_ok "$f: report"; fi
done
finish
