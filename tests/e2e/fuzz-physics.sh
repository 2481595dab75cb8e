# tools/fuzz-physics, the random search for slower-when-more-capable answers
# (issue 16): it runs on the build and says what it compared, and it names a
# violation when there is one. For the second, a stand-in dpusim whose
# iteration grows with the NICs a node (as the one-channel-per-NIC
# data-parallel groups inside a node once made it, on every transport), and
# one where only host-tcp and rdma slow with a faster link (the host-memory
# class, which it marks). The tool is Python over dpusim's CLI: the
# sanitizer build adds nothing, so it runs on the plain build only.
. tests/e2e/lib.sh
case $BIN in
*asan*) echo "# fuzz-physics: plain build only (see the header)"; finish; exit ;;
esac

run_cmd tools/fuzz-physics --bin "$BIN" --cases 2 --seed 1 --out "$E2E_TMP/real"
expect_rc 0 "two random shapes on the build"
expect_out '^fuzz-physics: seed 1, 2 shapes \([0-9] ran, the rest refused, e\.g\. memory\), [0-9]+ comparisons, [0-9]+ slower' \
	"the summary says what it compared"
n=$(grep -c '^slower' <<<"$OUT")
if [ "$n" -eq 0 ]; then ok "nothing slower on these two shapes"
else not_ok "slower steps on seed 1: $OUT"; fi

# A stand-in: dpusim run FILE --json ... prints a report whose iteration
# grows with nics_per_node (mode nics) or, on host-tcp and rdma only, with
# the link rate (mode link).
mkdir -p "$E2E_TMP/fake"
cat >"$E2E_TMP/fake/dpusim" <<'EOF'
#!/usr/bin/env python3
import json, os, sys
import yaml
scn = yaml.safe_load(open(sys.argv[2]))
cl = scn["cluster"]
gbps = float(cl["fabric"]["link_rate"].rstrip("Gbps"))
mode = os.environ["FAKE_MODE"]
out = []
for v in scn["variants"]:
    t = {"host-tcp": 3.0, "rdma": 2.0, "rdma-gdr": 1.0}[v["network"]]
    if mode == "nics":
        t *= 1 + 0.01 * cl["nics_per_node"]
    elif v["network"] != "rdma-gdr":
        t *= 1 + gbps / 1e4
    t *= scn["workload"]["batch"]["global"]
    out.append({"name": v["name"], "metrics": {"iteration_s": {"mean": t}}})
print(json.dumps({"variants": out}))
EOF
chmod +x "$E2E_TMP/fake/dpusim"
FAKE_MODE=nics run_cmd tools/fuzz-physics --bin "$E2E_TMP/fake" --cases 4 --seed 2 --out "$E2E_TMP/nics"
expect_rc 0 "the search ends 0 whatever it finds"
expect_out '^slower: NICs [0-9]+ -> [0-9]+: host-tcp .*rdma-gdr [0-9.]+ -> [0-9.]+ s \(\+[0-9.]+%\): ' \
	"more NICs slower on every transport is named, unmarked"
if grep '^slower: NICs' <<<"$OUT" | head -1 | awk '{ print $(NF - 1), $NF }' | while read -r a b; do
	[ -f "$a" ] && [ -f "$b" ] && grep -q nics_per_node "$a"; done; then
	ok "the two scenario files of a slower step are kept"
else not_ok "scenario files of a slower step: $OUT"; fi
expect_out ' [1-9][0-9]* slower \(scenarios in ' "the summary counts them"
FAKE_MODE=link run_cmd tools/fuzz-physics --bin "$E2E_TMP/fake" --cases 4 --seed 2 --out "$E2E_TMP/link"
expect_out '^slower \(host memory\?\): link [0-9]+Gbps -> [0-9]+Gbps: host-tcp .*, rdma ' \
	"a step that spares rdma-gdr is marked as the host-memory class"
if grep -q '^slower: link' <<<"$OUT"; then not_ok "the link step is not marked: $OUT"
else ok "and only marked"; fi
run_cmd tools/fuzz-physics --bin "$E2E_TMP/none" --cases 1
expect_rc 1 "no dpusim in --bin"
expect_err 'no .*/dpusim \(build it, or give --bin DIR\)' "says where it looked"
finish
