# tools/lab-net (issue 20): a 2-namespace lab shaped to 1 Gb/s each way,
# dpusim-hw bench over tcp across it with one rank per namespace, and the lab
# removed with nothing left; plain refusals without root, with a bad option,
# and (where the kernel has no netem) for a delay. Needs root and network
# namespaces; says it skips otherwise.
. tests/e2e/lib.sh
hw_setup
LAB=t$(($$ % 100000))   # a name of this run's own: parallel runs do not meet
gone() { [ -z "$(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${LAB}[0-9]+$")" ] &&
	! ip link show "$LAB-br" >/dev/null 2>&1; }

run_cmd setpriv --reuid 65534 --regid 65534 --clear-groups tools/lab-net up 2 --name "$LAB"
expect_rc 2 "lab-net without root is refused"
expect_err 'needs root \(CAP_NET_ADMIN\) to create network namespaces' "saying what it needs"
run_cmd tools/lab-net up 2 --rate 1gbs --name "$LAB"
expect_rc 2 "a bad --rate is refused"
expect_err "--rate '1gbs': expected a tc rate such as 1gbit" "naming it"
run_cmd tools/lab-net up 2 --segment 1000 --name "$LAB"
expect_rc 2 "a --segment below one frame is refused"
expect_err "--segment '1000': expected bytes from 1514 to 65536" "naming the range"

if [ "$(id -u)" -ne 0 ] || ! ip netns add "$LAB-p" 2>/dev/null; then
	echo "skip - no root or no network namespaces here: the lab itself is not exercised"
	finish; exit
fi
ip netns del "$LAB-p"
trap 'tools/lab-net down --name "$LAB" >/dev/null 2>&1; rm -rf "$E2E_TMP"' EXIT

run_cmd tools/lab-net up 2 --rate 1gbit --name "$LAB"
expect_rc 0 "a 2-namespace lab at 1 Gb/s comes up"
run_cmd tools/lab-net up 2 --rate 1gbit --name "$LAB"
expect_rc 2 "a second 'up' of the same lab is refused"
expect_err "lab '$LAB' is up already" "saying so"
run_cmd tools/lab-net status --name "$LAB"
expect_out "^${LAB}1: 10\.77\.0\.2/24 segments: 16384 B tx: qdisc htb" "status shows each namespace's address, segment size and shaping"
# A token bucket passes a whole segment at once: its burst is one segment
# (16 KiB, not veth's 64 KiB), so the lab serialises in steps of 131 us at 1 Gb/s.
if tc -n "${LAB}0" class show dev eth0 | grep -Eq 'rate 1Gbit ceil 1Gbit burst 1[56][0-9]{3}b cburst 1[56][0-9]{3}b' &&
   tc class show dev "${LAB}1-h" | grep -Eq 'burst 1[56][0-9]{3}b'; then
	ok "both directions shaped with a burst of one 16 KiB segment"
else not_ok "shaping: $(tc -n "${LAB}0" class show dev eth0) / $(tc class show dev "${LAB}1-h")"; fi

# What a link passes unserialised after it idles (the token bucket's credit,
# which a wire does not have): max(burst, segment), read back from tc.
run_cmd tools/lab-net credit --name "$LAB"
expect_rc 0 "lab-net credit reads the lab's shaping"
expect_out '^16384$' "one 16 KiB segment (the burst, 16250 B as tc rounds it, is below it)"
tc -n "${LAB}0" class change dev eth0 parent 1: classid 1:10 htb rate 1gbit ceil 1gbit \
	burst 64k cburst 64k quantum 65536
run_cmd tools/lab-net credit --name "$LAB"
expect_out '^6[45][0-9]{3}$' "a burst above the segment is the credit (64 KiB, as tc rounds it)"
tc -n "${LAB}0" class change dev eth0 parent 1: classid 1:10 htb rate 1gbit ceil 1gbit \
	burst 16384b cburst 16384b quantum 65536
run_cmd tools/lab-net credit --name "${LAB}x"
expect_rc 2 "the credit of a lab that is not there is refused"
expect_err "no lab '${LAB}x' here" "saying so"

# One rank per namespace: each enters its namespace after MPI_Init.
run_cmd "${MPIRUN[@]}" -np 2 \
	sh -c 'DPUSIM_HW_NETNS='"$LAB"'$OMPI_COMM_WORLD_RANK exec "$0" "$@"' "$HW" bench --quick \
	--sizes 64K,1M --dir "$E2E_TMP" -o "$E2E_TMP/lab.json"
expect_rc 0 "dpusim-hw bench over tcp across the lab"
expect_out 'allreduce_ring_busbw +tcp +1048576 B .*verified' "the all-reduce across it is verified"
# Loopback between two processes moves several GB/s; the lab's links 1 Gb/s.
if msg=$(python3 - "$E2E_TMP/lab.json" 2>&1 <<'PY'
import json, sys
b = [x for x in json.load(open(sys.argv[1]))["benchmarks"] if x["name"] == "tcp_bw"]
assert b, "no tcp_bw"
best = max(x["value"] for x in b)
assert 0.2 * 125e6 < best < 1.1 * 125e6, best
print("tcp_bw %.1f MB/s: the traffic crossed the 1 Gb/s links (125 MB/s)" % (best / 1e6))
PY
); then ok "$msg"; else not_ok "tcp_bw is not that of the shaped lab: $msg"; fi
run_cmd "${MPIRUN[@]}" -np 2 \
	sh -c 'DPUSIM_HW_NETNS=nosuch$OMPI_COMM_WORLD_RANK exec "$0" "$@"' "$HW" bench --quick \
	--sizes 4K --dir "$E2E_TMP"
expect_rc 2 "a rank told to use a namespace that does not exist ends the run"
expect_err "DPUSIM_HW_NETNS: cannot open '/run/netns/nosuch[01]': No such file" "naming it"

run_cmd tools/lab-net down --name "$LAB"
expect_rc 0 "the lab comes down"
if gone; then ok "no namespace, veth or bridge of the lab is left"; else not_ok "lab leftovers"; fi

run_cmd tools/lab-net up 2 --name "$LAB"
expect_rc 0 "an unshaped lab comes up"
run_cmd tools/lab-net credit --name "$LAB"
expect_rc 2 "an unshaped lab has no credit to give"
expect_err "is not shaped \(made without --rate\)" "saying why"
tools/lab-net down --name "$LAB" >/dev/null

# Whether this kernel has netem, tried in a namespace of its own.
ip netns add "$LAB-q" && tc -n "$LAB-q" qdisc add dev lo root netem delay 1us 2>/dev/null
has_netem=$?
ip netns del "$LAB-q"
if [ "$has_netem" -ne 0 ]; then
	run_cmd tools/lab-net up 2 --rate 1gbit --delay 100us --name "$LAB"
	expect_rc 2 "a delay without netem in the kernel is refused"
	expect_err 'this kernel has no netem qdisc' "saying why"
	if gone; then ok "and nothing of the half-made lab is left"; else not_ok "half-made lab left"; fi
else
	echo "skip - this kernel has netem: the refusal of --delay is not exercised (the delay itself is not checked by this test)"
fi

finish
