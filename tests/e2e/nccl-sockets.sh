# NCCL socket transport settings as variant keys (issue 15 item 2): more
# helper threads per connection raise the host-tcp per-connection cap (one
# core each), more sockets per thread change nothing in this model (and the
# report says so), --dump keeps them, and NCCL's limits are refused.
. tests/e2e/lib.sh
F=tests/data/nccl-sockets.yaml

run_cmd "$DPUSIM" run "$F" --json
expect_rc 0 "variants with NCCL socket settings run"
echo "$OUT" > "$E2E_TMP/r.json"
tally_checks "$(python3 - "$E2E_TMP/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
v = {x["name"]: x["metrics"]["iteration_s"]["mean"] for x in r["variants"]}
def check(cond, msg):
    print(("ok - " if cond else "not ok - ") + msg)
d, t, s = v["tcp-default"], v["tcp-4-threads"], v["tcp-8-sockets"]
check(t < d, "4 helper threads per connection step faster than NCCL's 1 x 1: %.6f < %.6f s" % (t, d))
check(s == d, "8 sockets on one thread change nothing in this model: %.6f == %.6f s" % (s, d))
notes = " ".join(str(x) for k, x in r["info"].items() if k.startswith("tcp-4-threads.note"))
check("4 threads x 1 socket" in notes and "4 host cores" in notes,
      "the report says what the threads buy: " + notes[:80])
notes = " ".join(str(x) for k, x in r["info"].items() if k.startswith("tcp-8-sockets.note"))
check("sockets per thread are not modelled" in notes, "the report says the sockets per thread are not modelled")
PY
)"

run_cmd "$DPUSIM" run "$F" --dump
expect_rc 0 "--dump of NCCL socket settings"
expect_out "nccl_socket_nthreads: 4" "the dump keeps the threads"
expect_out "nccl_nsocks_perthread: 8" "the dump keeps the sockets per thread"
echo "$OUT" > "$E2E_TMP/dump.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/dump.yaml" --json
expect_rc 0 "the dump runs"
if python3 -c '
import json, sys
a = json.load(open(sys.argv[1])); b = json.loads(sys.stdin.read())
sys.exit(0 if [x["metrics"] for x in a["variants"]] == [x["metrics"] for x in b["variants"]] else 1)' \
	"$E2E_TMP/r.json" <<<"$OUT"; then ok "the dump runs to the same figures"
else not_ok "the dump's figures differ"; fi

bad() { # bad VARIANT-LINE REGEX DESCRIPTION
	sed '/^variants:/,$d' "$F" > "$E2E_TMP/bad.yaml"
	printf 'variants:\n  - %s\n' "$1" >> "$E2E_TMP/bad.yaml"
	run_cmd "$DPUSIM" check "$E2E_TMP/bad.yaml"
	expect_rc 2 "$3 is refused"
	expect_err "bad.yaml:[0-9]+:[0-9]+: .*$2" "$3: located message"
}
bad '{ name: x, network: host-tcp, nccl_socket_nthreads: 17 }' "16" "17 threads (NCCL's maximum is 16)"
bad '{ name: x, network: host-tcp, nccl_socket_nthreads: 0 }' "nccl_socket_nthreads" "0 threads"
bad '{ name: x, network: host-tcp, nccl_socket_nthreads: 8, nccl_nsocks_perthread: 16 }' \
	"128 sockets per connection, above NCCL's limit of 64" "8 x 16 sockets"
bad '{ name: x, network: rdma-gdr, nccl_socket_nthreads: 4 }' "only network: host-tcp" \
	"socket settings on an RDMA variant"
bad '{ name: x, network: host-tcp, nccl_socket_nthreads: 2.5 }' "nccl_socket_nthreads" "a fractional thread count"
finish
