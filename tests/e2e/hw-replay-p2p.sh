# dpusim-hw replay of a p2p workload (perftest's tests on real verbs,
# backend-hw/replay_p2p.c) where this machine allows: what it refuses, before
# anything runs, each in plain words and with exit status 2, no report
# left. The verbs run itself (rows, data checked, compare) is make
# check-rdma's (tests/vm/guest.sh): this machine has no RDMA device.
. tests/e2e/lib.sh
hw_setup
SCN=tests/vm/rxe-p2p.yaml
OUTF=$E2E_TMP/hw.json

# refused: exit 2, the message, no report
refused() { # refused REGEX DESCRIPTION
	expect_rc 2 "$2"
	expect_err "$1" "$2: said"
	if [ -e "$OUTF" ]; then not_ok "$2: a report was left"; rm -f "$OUTF"; else ok "$2: no report"; fi
}

if ibv_devices 2>/dev/null | grep -q '^ *[a-z]'; then
	ok "# SKIP no-device message: this machine has an RDMA device"
else
	run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$SCN" --transport verbs -o "$OUTF"
	refused "no RDMA device here \(libibverbs lists none\): a p2p benchmark runs RDMA verbs, as perftest does, and cannot be replayed on this machine" \
		"no RDMA device"
fi

run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$SCN" -o "$OUTF"
refused "a p2p benchmark runs RDMA verbs, as perftest does: replay it with --transport verbs" \
	"the default tcp transport"
run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$SCN" --transport tcp -o "$OUTF"
refused "replay it with --transport verbs" "--transport tcp"

run_cmd "${MPIRUN[@]}" -np 3 "$HW" replay "$SCN" --transport verbs -o "$OUTF"
refused "runs between two ranks \(perftest's client and server\): run it with mpirun -np 2 \(this run has 3\)" \
	"three ranks"

run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$SCN" --transport verbs --scale 0.5 -o "$OUTF"
refused "apply to other workloads; a p2p benchmark runs the scenario's sizes and iterations" \
	"--scale"
run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$SCN" --transport verbs --reps 3 -o "$OUTF"
refused "apply to other workloads" "--reps"

# A host-tcp variant: refused as the simulator refuses it, in its words.
run_cmd "$DPUSIM" run tests/bad/p2p-host-tcp.yaml
sim_err=$ERR
run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay tests/bad/p2p-host-tcp.yaml --transport verbs -o "$OUTF"
refused "variant 'baseline': a p2p benchmark runs RDMA verbs, as perftest does: network must be rdma \(host memory\) or rdma-gdr" \
	"a host-tcp variant"
if [ -n "$sim_err" ] && grep -qF -- "$sim_err" <<<"$ERR"; then ok "in the simulator's words"
else not_ok "not the simulator's words: '$sim_err' vs '$ERR'"; fi

DPUSIM_HW_FAULT=hang:1 run_cmd "${MPIRUN[@]}" -np 2 -x DPUSIM_HW_FAULT "$HW" replay "$SCN" \
	--transport verbs -o "$OUTF"
refused "DPUSIM_HW_FAULT='hang:1': the p2p replay takes corrupt:RANK" "another fault hook"

finish
