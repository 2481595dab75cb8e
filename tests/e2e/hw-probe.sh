# dpusim-hw probe and the front end: runs, says plainly what is absent, --json parses.
. tests/e2e/lib.sh
HW=$BIN/dpusim-hw

run_cmd "$HW" --version
expect_rc 0 "dpusim-hw --version"
expect_out 'compiled-in paths: mpi tcp verbs' "version lists the compiled-in paths"

run_cmd "$HW" --help
expect_rc 0 "dpusim-hw --help"
expect_out '^  probe ' "help lists probe"
expect_out '^  bench ' "help lists bench"

run_cmd "$HW" frobnicate
expect_rc 2 "unknown command"
expect_err "unknown command 'frobnicate'" "unknown command is named"

run_cmd "$HW" probe
expect_rc 0 "probe runs (no device is a normal answer)"
expect_out '^RDMA devices:' "probe has an RDMA section"
expect_out '^GPUs:' "probe has a GPU section"
expect_out '^CPU: .*logical CPUs online' "probe describes the CPU"
expect_out 'tcp transport +yes' "tcp is always usable"
if [ ! -e /sys/class/infiniband ] || [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	expect_out 'no RDMA device' "no RDMA device here, said plainly"
	expect_out 'verbs transport +no' "verbs is not usable without a device"
fi
if ! command -v nvidia-smi >/dev/null 2>&1; then
	expect_out 'no (usable )?GPU|built without CUDA' "no GPU here, said plainly"
fi

run_cmd "$HW" probe --json
expect_rc 0 "probe --json runs"
if python3 - "$E2E_TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "dpusim-hw-probe/1", d["schema"]
assert isinstance(d["rdma"]["devices"], list)
assert d["rdma"]["devices"] or "no RDMA device" in d["rdma"]["note"]
assert isinstance(d["gpus"]["devices"], list)
assert d["gpus"]["devices"] or d["gpus"]["note"]
assert d["cpu"]["logical_cpus"] >= 1
assert d["usable"]["tcp"] is True and d["usable"]["cpu"] is True
for dev in d["rdma"]["devices"]:
    for p in dev["ports"]:
        assert p["rate_gbps"] >= 0
PY
then ok "probe --json parses and has every section"; else not_ok "probe --json is not the documented JSON"; fi

run_cmd "$HW" probe --frob
expect_rc 2 "probe rejects an unknown option"
expect_err "unknown option '--frob'" "the option is named"

run_cmd "$HW" replay --help
expect_rc 0 "replay --help"

finish
