# Reading large reports (issue 17, item 18): compare parsed each report into
# a whole libfyaml document, about 25 times the file (a 28 MB report took
# 2 GB); the reader now streams. A 7 MB report must be compared within
# 100 MB of resident memory (it took about 200 MB), and the keys of a
# report may come in any order (as `jq -S` or Python's sort_keys write).
. tests/e2e/lib.sh
T=$E2E_TMP

python3 - "$T/big.json" "$T/sorted.json" <<'PY'
import json, sys
d = json.load(open("tests/data/report-sim.json"))
v0 = d["variants"][0]
d["variants"] = []
for k in range(8):
    v = json.loads(json.dumps(v0))
    v["name"] = "v%d" % k
    v["collectives"] = [{"op": "allreduce", "algo": "ring", "ranks": 64, "bytes": 1048576 + i,
                         "time_s": 0.001 + i * 1e-9, "algbw_GBps": 12.5, "busbw_GBps": 23.4}
                        for i in range(4000)]
    d["variants"].append(v)
d["speedup"] = {v["name"]: 1.0 for v in d["variants"]}
json.dump(d, open(sys.argv[1], "w"), indent=2)
small = json.load(open("tests/data/report-sim.json"))
json.dump(small, open(sys.argv[2], "w"), indent=1, sort_keys=True)
PY
size_kb=$(( $(wc -c <"$T/big.json") / 1024 ))

if ldd "$DPUSIM" 2>/dev/null | grep -q 'libasan'; then
	ok "# skip the memory bound: the sanitizer build keeps freed memory in quarantine"
elif [ -x /usr/bin/time ]; then
	/usr/bin/time -f '%M' -o "$T/rss" "$DPUSIM" compare "$T/big.json" "$T/big.json" \
		--tolerance 0% >"$T/out" 2>"$T/err"
	RC=$? OUT=$(cat "$T/out") ERR=$(cat "$T/err")
	expect_rc 0 "compare of two ${size_kb} KB reports"
	expect_out 'summary: .* 0 beyond tolerance' "compares them"
	rss=$(tail -1 "$T/rss")
	if [ "$rss" -lt 102400 ]; then ok "within 100 MB of memory (${rss} KB for ${size_kb} KB)"
	else not_ok "compare took ${rss} KB for a ${size_kb} KB report"; fi
else
	ok "# skip the memory bound: no /usr/bin/time"
fi

run_cmd "$DPUSIM" compare tests/data/report-sim.json "$T/sorted.json" --tolerance 0%
expect_rc 0 "a report with sorted keys (name after metrics, speedup before variants)"
expect_out 'summary: 41 shared, max \|rel_err\| 0\.00%' "reads back the same figures (37 metrics, 2 collective sizes x time, busbw)"
run_cmd "$DPUSIM" import "$T/sorted.json" --db "$T/r.db"
expect_rc 0 "and imports"
finish
