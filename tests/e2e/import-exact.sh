# dpusim import stores every value exactly or refuses the report (issue 17,
# item 17): counts above 2^63-1 came back as negative numbers, strings were
# cut at \u0000. The refusal names the value's JSON path; nothing is stored.
. tests/e2e/lib.sh
T=$E2E_TMP

# edit IN OUT PYTHON: OUT is report IN after the Python statement on d.
edit() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
}
runs_in() { sqlite3 "$1" 'SELECT count(*) FROM runs' 2>/dev/null || echo none; }

edit tests/data/report-sim.json "$T/big.json" 'd["variants"][1]["collectives"][0]["bytes"] = 2**64 - 1'
run_cmd "$DPUSIM" import "$T/big.json" --db "$T/a.db"
expect_rc 2 "import of a collective of 2^64-1 bytes"
expect_err '/variants/1/collectives/0/bytes = 18446744073709551615 is above the largest integer the database stores' \
	"names the value's JSON path and the limit"
[ "$(runs_in "$T/a.db")" != 1 ] && ok "nothing stored" || not_ok "the run was stored"

edit tests/data/report-sim.json "$T/max.json" 'd["variants"][1]["collectives"][0]["bytes"] = 2**63 - 1'
run_cmd "$DPUSIM" import "$T/max.json" --db "$T/b.db"
expect_rc 0 "import of a collective of 2^63-1 bytes, the largest stored exactly"
if [ "$(sqlite3 "$T/b.db" 'SELECT bytes FROM collectives ORDER BY bytes DESC LIMIT 1')" = 9223372036854775807 ]
then ok "stored exactly"; else not_ok "2^63-1 not stored exactly"; fi

edit tests/data/report-bench.json "$T/iters.json" 'd["benchmarks"][0]["iters"] = 2**64 - 1'
run_cmd "$DPUSIM" import "$T/iters.json" --db "$T/c.db"
expect_rc 2 "import of a benchmark of 2^64-1 iterations"
expect_err '/benchmarks/0/iters = 18446744073709551615' "names the benchmark's path"

for where in 'd["variants"][0]["name"] = "base\x00line"; d["speedup"] = {}' \
	     'd["scenario"]["name"] = "demo\x00tail"' \
	     'd.setdefault("info", {})["note"] = "cut\x00here"'; do
	edit tests/data/report-sim.json "$T/nul.json" "$where"
	grep -q '\\u0000' "$T/nul.json" || not_ok "fixture lacks \\u0000: $where"
	run_cmd "$DPUSIM" import "$T/nul.json" --db "$T/d.db"
	expect_rc 2 "import of a string with \\u0000 ($where)"
	expect_err 'nul\.json:[0-9]+:[0-9]+: .* at /[a-z/0-9]+ holds a NUL character \(\\u0000\), which cannot be stored' \
		"placed in the file, with the JSON path"
done
[ "$(runs_in "$T/d.db")" != 1 ] && ok "no run with a cut string was stored" || not_ok "a cut string was stored"
finish
