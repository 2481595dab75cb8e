# Every shipped scenario (scenarios/ and scenarios/effects/) simulates with
# dpusim run, yields a report that validates (what `check` accepts, `run` must
# be able to run), and matches its golden report in tests/golden/ (numbers
# within a relative 1e-9, text exactly: tools/golden says how; a change that
# moves a figure regenerates the golden file with `tools/golden update FILE`
# in the same commit and says why). One replication each, to keep this quick;
# capacity.yaml is a sweep: `run` simulates its base point.
. tests/e2e/lib.sh

# Each report is checked by one Python for all of them, after the runs
# (two Pythons per scenario, 64, were about 12 s of CPU in each build).
mkdir -p "$E2E_TMP/rep"
pairs=()
for f in scenarios/*.yaml scenarios/effects/*.yaml; do
	r=$E2E_TMP/rep/${f//\//_}.json
	"$DPUSIM" run "$f" --json --replications 1 >"$r" 2>"$E2E_TMP/err"
	RC=$?
	if [ "$RC" -ne 0 ]; then
		not_ok "$f: exit $RC: $(head -c 300 "$E2E_TMP/err")"
		continue
	fi
	pairs+=("$f" "$r")
done
out=$(python3 - "${pairs[@]}" <<'PY' 2>&1
import importlib.machinery, importlib.util, json, sys
loader = importlib.machinery.SourceFileLoader("golden", "tools/golden")
golden = importlib.util.module_from_spec(importlib.util.spec_from_loader("golden", loader))
loader.exec_module(golden)

def holds_together(r):
    assert r["schema"] == "dpusim-report/1" and r["variants"], "empty report"
    for v in r["variants"]:
        it = v["metrics"]["iteration_s"]["mean"]
        assert it > 0, "iteration time"
        bd = v.get("breakdown_s")
        if bd:
            assert abs(sum(bd.values()) - it) <= 1e-9 * it, "breakdown adds up"

args = sys.argv[1:]
for scn, path in zip(args[::2], args[1::2]):
    try:
        with open(path) as f:
            r = json.load(f)
        holds_together(r)
    except (ValueError, KeyError, TypeError, AssertionError) as e:
        print("not ok - %s: report: %s: %s" % (scn, type(e).__name__, e))
        continue
    print("ok - %s runs and its report holds together" % scn)
    golden.compare(scn, r)  # its own ok / not ok line, then what differs
PY
)
rc=$?
relay_checks "$out"
[ $rc -eq 0 ] || not_ok "the reports' check script ended with status $rc"

# dpusim validate's whole table (12 s here) is pinned in the plain build; the
# sanitizer build runs the same code on the same inputs, ~4x slower, and
# tests/e2e/validate.sh covers it there with one case.
case $BIN in
*asan*) echo "# validate golden table: compared in the plain build only" ;;
*) if g=$(python3 tools/golden validate --bin "$BIN"); then ok "${g#ok - }"
   else not_ok "$(head -1 <<<"${g#not ok - }")"; echo "$g"; fi ;;
esac

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
