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

# A collective job's notes reach the report as a training job's do: the
# host memory its transports cross, sockets x mem_bw of the resolved CPU.
f=scenarios/effects/os-jitter-host-tcp.yaml
"$DPUSIM" run "$f" --json >"$E2E_TMP/c.json" && "$DPUSIM" run "$f" --dump >"$E2E_TMP/c.yaml"
if python3 - "$E2E_TMP/c.json" "$E2E_TMP/c.yaml" <<'PY'
import json, re, sys, yaml
info = json.load(open(sys.argv[1]))["info"]
cpu = yaml.safe_load(open(sys.argv[2]))["cluster"]["cpu"]
mem = float(cpu["sockets"]) * float(re.match(r"[0-9.e+]+", str(cpu["mem_bw"])).group(0))
want = "host memory: %.1f GB/s per node" % (mem / 1e9)
for v, times in (("host-tcp", "four times per end"), ("rdma", "twice per end")):
    notes = [x for k, x in info.items() if k.startswith(v + ".note")]
    assert any(want in x and times in x for x in notes), (v, want, notes)
PY
then ok "$f: the collective job's notes give host memory per node and its crossings"
else not_ok "$f: host-memory notes of the collective job"; fi
finish
