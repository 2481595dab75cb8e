# dpusim coll: the simulated nccl-tests rows, --json, and bad options (exit 2).
# Rows are nccl-tests' (all_reduce_perf): size count type redop root, then
# time algbw busbw #wrong out of place and in place, then the algorithm.
. tests/e2e/lib.sh

COMMON=(--ranks 8 --link 400Gbps --hop-latency 60ns --switch-latency 130ns --msg-latency 1.5us)

# --proto ideal: links at their payload rate, the closed form (the default
# is NCCL's protocols; see the defaults below). The default --switch
# (QM8700-HDR) is InfiniBand: RDMA packets of 4096 payload bytes carry 26
# header bytes (LRH 8, BTH 12, ICRC 4, VCRC 2), so a 400 Gb/s link carries
# 50e9 x 4096 / 4122 B/s of payload (models/wire.h).
run_cmd "$DPUSIM" coll --op allreduce --algo ring --proto ideal --bytes 1048576,64MiB "${COMMON[@]}"
expect_rc 0 "ring all-reduce over two sizes"
n=$(grep -Ec '^ +[0-9]+ +[0-9]+ +float +sum +-1( +[0-9.]+ +[0-9.]+ +[0-9.]+ +N/A){2} +ring$' <<<"$OUT")
if [ "$n" -eq 2 ]; then ok "one row per size"; else not_ok "expected 2 rows, got: $OUT"; fi
# Closed form for 64 MiB: 2*7*(S/8)/(50e9*4096/4122) + 14*(2*60ns + 130ns + 1.5us) = 2387.4 us (+-0.1%).
t=$(awk '$1 == 67108864 { print $6 }' <<<"$OUT")
if awk -v t="$t" 'BEGIN { w = 2*7*(67108864/8)/(50e9*4096/4122)*1e6 + 14*(0.25+1.5); exit !(t > w*0.999 && t < w*1.001) }'; then
	ok "64 MiB row matches the closed form ($t us)"
else not_ok "64 MiB row: time_us '$t' is not the closed form"; fi
b=$(awk '$1 == 67108864 { printf "%.6f", $7 * 2 * 7 / 8 }' <<<"$OUT")
expect_out "^ +67108864 +16777216 +float +sum +-1 +[0-9.]+ +[0-9.]+ +${b%????}" "busbw = algbw * 2(n-1)/n"
# nccl-tests' footer, the mean of the busbw column.
avg=$(awk '$1 ~ /^[0-9]+$/ { s += $8; n++ } END { printf "%.3f", s / n }' <<<"$OUT")
got=$(sed -n 's/^# Avg bus bandwidth *: \([0-9.]*\).*/\1/p' <<<"$OUT")
if awk -v a="$avg" -v g="$got" 'BEGIN { exit !(g > 0 && (g - a) ^ 2 < 1e-6) }'; then ok "Avg bus bandwidth footer is the rows' mean ($got)"
else not_ok "footer '$got', rows' mean $avg"; fi

# nccl-tests' size range: -b MIN -e MAX -f FACTOR (K/M/G binary), -n iterations.
run_cmd "$DPUSIM" coll -b 8 -e 128M -f 2 "${COMMON[@]}"
expect_rc 0 "-b 8 -e 128M -f 2"
n=$(grep -Ec '^ +[0-9]+ ' <<<"$OUT")
if [ "$n" -eq 25 ]; then ok "8 B to 128 MiB by 2: 25 rows"; else not_ok "$n rows"; fi
expect_out '^ +134217728 +33554432 +float +sum ' "128M is 128 MiB, 33554432 floats"
run_cmd "$DPUSIM" coll --op allgather -b 1M -e 1M "${COMMON[@]}"
expect_out '^ +1048576 +32768 +float +none +-1 ' "all-gather counts a rank's share, no redop"
run_cmd "$DPUSIM" coll -b 1M -e 1M -n 5 -w 2 "${COMMON[@]}"
expect_rc 0 "-n and -w"
expect_out '5 iterations averaged' "the header says what -n did"
# Nothing draws from the iterations' seeds on one switch without --jitter:
# one run, simulated once (issue 14), and said; its rows are -n 1's.
expect_out '^# the 5 iterations are one run: nothing draws from their seeds' \
	"-n 5 on one switch without jitter: simulated once, and said"
ROWS5=$(grep -E '^ +[0-9]+ ' <<<"$OUT")
run_cmd "$DPUSIM" coll -b 1M -e 1M "${COMMON[@]}"
if [ -n "$ROWS5" ] && [ "$ROWS5" = "$(grep -E '^ +[0-9]+ ' <<<"$OUT")" ]; then
	ok "its rows are one run's"
else not_ok "-n 5 without draws differs from -n 1"; fi
run_cmd "$DPUSIM" coll -b 1M -e 1M -n 5 --jitter 1us "${COMMON[@]}"
if ! grep -q "iterations are one run" <<<"$OUT"; then ok "with --jitter every iteration runs"
else not_ok "a jittered -n 5 was simulated once"; fi
run_cmd "$DPUSIM" coll -b 1M -e 1K "${COMMON[@]}"
expect_rc 2 "-b above -e"
run_cmd "$DPUSIM" coll -b 1M -e 4M --bytes 1MiB --ranks 8 --link 400Gbps
expect_rc 2 "--bytes and -b/-e together"
expect_err "not both" "is refused"
# A size past the largest collective a scenario takes (COLL_MAX_BYTES) is
# refused: 2^64-1 bytes over a protocol's bandwidth factor overflowed the
# stage's byte count (undefined; tools/fuzz-cli seed 120405 under UBSan)
# and printed 429 TB/s on 400 Gb/s links.
for big in "--bytes 18446744073709551615" "--bytes 1MiB,11TB" "-b 1M -e 16384G"; do
	run_cmd "$DPUSIM" coll $big --ranks 3 --link 400Gbps
	expect_rc 2 "coll $big is refused"
	expect_err "above the largest collective, 1e\+13 bytes" "coll $big: says the bound"
done
run_cmd "$DPUSIM" coll --bytes 10TB --ranks 3 --link 400Gbps
expect_rc 0 "coll --bytes 10TB, the bound itself, runs"

run_cmd "$DPUSIM" coll --bytes 1MiB --json "${COMMON[@]}"
expect_rc 0 "--json"
expect_out '"op": "allreduce"' "json names the op"
expect_out '"bytes": 1048576, "algo": "[a-z]+", "time_us": [0-9.]+, "algbw_GBps": [0-9.]+, "busbw_GBps": [0-9.]+' "json row"
if command -v python3 >/dev/null; then
	if python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["rows"]) == 1' <<<"$OUT"; then
		ok "json parses"; else not_ok "json does not parse: $OUT"; fi
fi

# NCCL's protocols: LL for 8 bytes. One rank per node, so every ring step
# pays NCCL's exposed network latency (NCCL 2.28.3 tuning.cc: the Tree's
# 5.0 us with ppn 1): the ring is 6.6 us + 14 x 5.0 us = 76.6 us (5.0 is
# above the path's 1.75 us), and the tree, 6.8 + 2 x log2(8) x 5.0 = 36.8
# us of NCCL's latency plus 6 levels of the 1.75 us path = 47.3 us, wins.
run_cmd "$DPUSIM" coll --bytes 8 --proto nccl --algo ring "${COMMON[@]}"
expect_rc 0 "--proto nccl"
expect_out '^ +8 +2 +float +sum +-1 +76\.6[0-9]* .* ring/ll$' "8 bytes run ring/ll at NCCL's latency"
run_cmd "$DPUSIM" coll --bytes 8 --proto nccl "${COMMON[@]}"
expect_out '^ +8 +2 +float +sum +-1 +47\.3[0-9]* .* tree/ll$' "8 bytes choose tree/ll at one rank per node"
run_cmd "$DPUSIM" coll --bytes 8 --proto nccl --json "${COMMON[@]}"
expect_out '"proto": "ll"' "json names the protocol"
run_cmd "$DPUSIM" coll --bytes 8 --proto LL "${COMMON[@]}"
expect_rc 2 "unknown protocol"
expect_err "unknown protocol 'LL'" "unknown protocol is named"
run_cmd "$DPUSIM" coll --algo nvls --nvls --bytes 8 --proto ll --gpus-per-node 8 --nvlink 300GBps "${COMMON[@]}"
expect_rc 2 "nvls runs Simple only"
expect_err "algorithm 'nvls' with protocol 'll' does not apply" "the refused pair is named"

# NCCL's channels per size: 64 KiB of Simple runs on 2 of 8 channels (one
# fewer while S < nc x 512 threads x 64 B, NCCL's enqueue.cc), so at 2/8 of
# the link's payload rate: 8.4 us + 14 x (8 KiB / (12.5 GB/s x 4096/4122) + 14 us)
# = 213.63 us.
run_cmd "$DPUSIM" coll --bytes 64KiB --algo ring --proto simple --channels 8 "${COMMON[@]}"
expect_rc 0 "--channels"
expect_out '^ +65536 +16384 +float +sum +-1 +213\.63[0-9]* .* ring/simple$' "64 KiB runs on 2 of 8 channels"
run_cmd "$DPUSIM" coll --bytes 64KiB --channels 0 "${COMMON[@]}"
expect_rc 2 "zero channels"

for op in reducescatter allgather broadcast alltoall sendrecv; do
	run_cmd "$DPUSIM" coll --op "$op" --bytes 4MiB "${COMMON[@]}"
	expect_rc 0 "$op runs"
done

run_cmd "$DPUSIM" coll --bytes 1MiB --ranks 8 --link 400Gbps --link 4x
expect_rc 2 "bad rate"
expect_err "unknown unit|not a number" "bad rate is explained"
run_cmd "$DPUSIM" coll --bytes 1MiB --ranks 8
expect_rc 2 "--link is required"
run_cmd "$DPUSIM" coll --bytes 1MiB --ranks 1 --link 400Gbps
expect_rc 2 "one rank is not a collective"
run_cmd "$DPUSIM" coll --op nosuch --bytes 1MiB "${COMMON[@]}"
expect_rc 2 "unknown op"
expect_err "unknown op 'nosuch'" "unknown op is named"
run_cmd "$DPUSIM" coll --op allgather --algo tree --bytes 1MiB "${COMMON[@]}"
expect_rc 2 "tree all-gather does not apply"
run_cmd "$DPUSIM" coll --algo nvls --bytes 1MiB "${COMMON[@]}"
expect_rc 2 "nvls without an NVSwitch"
# SHARP needs an RDMA transport (NCCL reaches it through the RDMA-SHARP
# plugin); from host memory it is staged through the memory bus both ways.
run_cmd "$DPUSIM" coll --sharp --algo sharp --transport host-tcp --bytes 64MiB "${COMMON[@]}"
expect_rc 2 "no SHARP over host TCP"
expect_err "algorithm 'sharp' .* over transport 'host-tcp'" "the transport is named"
run_cmd "$DPUSIM" coll --sharp --algo sharp --proto ideal --transport rdma --pcie 64GBps --host-mem 60GBps --bytes 64MiB "${COMMON[@]}"
expect_rc 0 "SHARP from host memory"
# 64 MiB / 15 GB/s + 2 x (2 x 60 ns + 130 ns) + 1.5 us = 4475.924 us
expect_out '^ +67108864 +16777216 +float +sum +-1 +4475\.92[0-9] .* sharp$' "the memory bus crossed four times (staged: GPU and NIC, out and back) binds SHARP at 15 GB/s"
run_cmd "$DPUSIM" coll --topology fat-tree --radix 4 --ranks 64 --bytes 1MiB --link 400Gbps
expect_rc 2 "two tiers too small for 64 ports of radix 4"
expect_err "64 NIC ports do not fit this topology: radix 4 at 1:1 connects at most 8 " "the fabric's limit is named"
# --oversub takes a scenario's range, 1 to 64; at the radix and past it a
# leaf keeps radix - 1 hosts (radix x 1e308 overflowed: a leaf of no hosts,
# and the rail's ports divided by zero, SIGFPE -- tools/fuzz-cli).
run_cmd "$DPUSIM" coll --topology rail --radix 4 --oversub 1e308 --ranks 8 --bytes 1MiB --link 400Gbps
expect_rc 2 "--oversub past a scenario's 64 is refused"
expect_err "coll: --oversub is a ratio from 1 to 64, not '1e308'" "saying the range"
for t in rail fat-tree fat-tree3; do
	run_cmd "$DPUSIM" coll --topology $t --radix 4 --oversub 64 --ranks 8 --bytes 1MiB --link 400Gbps
	expect_rc 0 "--oversub 64 on $t of radix 4: 3 hosts a leaf"
done
run_cmd "$DPUSIM" coll --frob --bytes 1MiB "${COMMON[@]}"
expect_rc 2 "unknown option"
# A scenario's 'algo: in-network' runs SHARP where the switch profile says
# the switches reduce (QM9700: SHARPv3, its datasheet): every byte up once
# and down once, so algbw is the 50 GB/s port, where a 4-rank ring's is
# 50 x 4/6 = 33 GB/s. Auto never picks it (NCCL needs NCCL_COLLNET_ENABLE).
cat >"$E2E_TMP/innet.yaml" <<'EOF'
name: innet
cluster:
  nodes: 4
  gpus_per_node: 1
  gpu: H100-SXM5
  cpu: Xeon-8480C
  host_costs: host-costs-linux
  nic: { profile: ConnectX-7-NDR, rdma_latency: 0.6us }
  fabric:
    topology: single-switch
    switch: { profile: QM9700-NDR, latency: 130ns }
workload:
  kind: collective
  collective: { op: allreduce, algo: in-network, sizes: [64MiB], iterations: 1 }
variants:
  - { name: gdr, network: rdma-gdr }
# the bandwidth bounds below are the closed form's (NCCL's adds CollNet's 31 us)
collectives: { protocol: ideal }
EOF
algbw_of() { python3 -c 'import json,sys; c=json.load(sys.stdin)["variants"][0]["collectives"][0]; print(c["algo"], c["algbw_GBps"])'; }
run_cmd "$DPUSIM" run "$E2E_TMP/innet.yaml" --json
expect_rc 0 "scenario in-network runs"
read -r algo bw <<<"$(algbw_of <<<"$OUT")"
if [ "$algo" = sharp ] && awk -v b="$bw" 'BEGIN { exit !(b > 49 && b <= 50) }'; then
	ok "in-network runs SHARP at the port rate ($bw GB/s)"
else not_ok "in-network ran '$algo' at $bw GB/s"; fi
# From host memory (rdma) the bytes are staged: GPU and NIC share their PCIe
# switch's uplink, which carries each node's upload (the GPU's copy up) and
# the result (the NIC's write up), so each direction holds 2 x the rate:
# Gen5 x16 = 32 GT/s x 16 x 128/130 / 8 = 63.015 GB/s, halved = 31.51 GB/s.
sed 's/network: rdma-gdr }/network: rdma }/' "$E2E_TMP/innet.yaml" >"$E2E_TMP/staged.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/staged.yaml" --json
read -r algo bw <<<"$(algbw_of <<<"$OUT")"
if [ "$algo" = sharp ] && awk -v b="$bw" 'BEGIN { exit !(b > 31.3 && b <= 31.51) }'; then
	ok "in-network from host memory is bound by the PCIe uplink crossed twice ($bw GB/s)"
else not_ok "in-network over rdma ran '$algo' at $bw GB/s"; fi
sed 's/algo: in-network/algo: auto/' "$E2E_TMP/innet.yaml" >"$E2E_TMP/auto.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/auto.yaml" --json
read -r algo bw <<<"$(algbw_of <<<"$OUT")"
if [ "$algo" != sharp ]; then ok "auto does not pick SHARP ($algo)"; else not_ok "auto picked SHARP"; fi
sed 's/latency: 130ns }/latency: 130ns, sharp: false }/' "$E2E_TMP/innet.yaml" >"$E2E_TMP/nosharp.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/nosharp.yaml"
expect_rc 2 "in-network on switches that do not reduce"
expect_err "in-network' on 4 nodes .* the switch profile says 'sharp: false'" "the reason is given"
sed 's/network: rdma-gdr }/network: host-tcp }/' "$E2E_TMP/innet.yaml" >"$E2E_TMP/tcp.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/tcp.yaml"
expect_rc 2 "in-network over host TCP"
expect_err "SHARP needs an RDMA network" "the reason is given"

# On one node in-network is NVLS: the H100 profile says its NVSwitch
# reduces (nvls: true, third-generation NVSwitch); the A100's gives no nvls.
sed -e 's/nodes: 4/nodes: 1/' -e 's/gpus_per_node: 1/gpus_per_node: 8/' "$E2E_TMP/innet.yaml" >"$E2E_TMP/nvls.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/nvls.yaml" --json
expect_rc 0 "in-network on one H100 node"
read -r algo bw <<<"$(algbw_of <<<"$OUT")"
if [ "$algo" = nvls ]; then ok "one node runs NVLS"; else not_ok "one node ran '$algo'"; fi
sed 's/gpu: H100-SXM5/gpu: A100-SXM4-80GB/' "$E2E_TMP/nvls.yaml" >"$E2E_TMP/nvls-a100.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/nvls-a100.yaml"
expect_rc 2 "no NVLS without the GPU profile's nvls"
expect_err "on 1 node \(GPU 'A100-SXM4-80GB'\) cannot run: .*gives no 'nvls'" "the reason is given"

# Beside training jobs a benchmark shares their collective context: no SHARP.
sed -e "s#extends: ../../data/#extends: $PWD/tests/data/#" -e 's/algo: ring/algo: in-network/' \
	tests/e2e/data/shared-bench.yaml >"$E2E_TMP/shared.yaml"
run_cmd "$DPUSIM" run "$E2E_TMP/shared.yaml"
expect_rc 2 "in-network beside training jobs"
expect_err "collective job '[a-z]+': algo 'in-network' is not simulated beside training jobs" "the reason is given"

# Defaults as NCCL runs: its protocols, and the latencies the NIC and switch
# profiles publish (ConnectX-6 HDR 0.6 us, QM8700 130 ns), said in the
# header; --ideal is the closed form: the links' payload rate, no latency.
run_cmd "$DPUSIM" coll --ranks 8 --bytes 1MiB --link 400Gbps
expect_rc 0 "coll with defaults"
expect_out '^# protocol nccl; message latency 0.6 us \(profile ConnectX-6-HDR\), switch latency 130 ns \(profile QM8700-HDR\), hop latency 0 ns$' "the header says the defaults and where they come from"
expect_out '^ +1048576 .* [a-z]+/(ll|ll128|simple)$' "the row names NCCL's protocol"
run_cmd "$DPUSIM" coll --ranks 8 --bytes 1MiB --link 400Gbps --ideal
expect_out '^# protocol ideal; message latency 0 us, switch latency 0 ns, hop latency 0 ns$' "--ideal: no latency"
# 1 MiB ring on 8 ranks at 50 GB/s of data, nothing else: 2 x 7/8 x 1 MiB /
# (50e9 x 4096/4122) = 36.93 us.
expect_out '^# wire: InfiniBand RC: LRH 8 \+ BTH 12 \+ ICRC 4 \+ VCRC 2 bytes per packet, 4096 payload bytes per packet: links carry payload at 99\.37% of --link$' "the header says what the packets' headers take"
expect_out '^ +1048576 +262144 +float +sum +-1 +36\.93[0-9] .* ring$' "--ideal is the closed form"
# Without headers (--link-layer none) the link rate is all payload: 36.70 us.
run_cmd "$DPUSIM" coll --ranks 8 --bytes 1MiB --link 400Gbps --ideal --link-layer none
expect_out '^# link layer none: links carry payload at --link$' "--link-layer none: no headers"
expect_out '^ +1048576 +262144 +float +sum +-1 +36\.70[0-9] .* ring$' "--link-layer none: 2 x 7/8 x 1 MiB / 50e9"
# TCP over Ethernet at 9000 bytes: 8948 of every 9038 on the wire: 37.07 us (37.069).
run_cmd "$DPUSIM" coll --ranks 8 --bytes 1MiB --link 400Gbps --ideal --link-layer ethernet --mtu 9000 --transport host-tcp
expect_out '^ +1048576 +262144 +float +sum +-1 +37\.069 .* ring$' "host-tcp on Ethernet, MTU 9000: 2 x 7/8 x 1 MiB / (50e9 x 8948/9038)"
run_cmd "$DPUSIM" coll --ranks 8 --bytes 1MiB --link 400Gbps --mtu 1500
expect_rc 2 "an MTU InfiniBand has not"
expect_err "coll: --mtu 1500 is not an InfiniBand MTU \(256, 512, 1024, 2048 or 4096 bytes of payload\)" "the MTUs InfiniBand has are named"
run_cmd "$DPUSIM" coll --ranks 8 --bytes 1MiB --link 400Gbps --link-layer fddi
expect_rc 2 "an unknown link layer"
expect_err "--link-layer is 'infiniband', 'ethernet' or 'none', not 'fddi'" "the link layers are named"
run_cmd "$DPUSIM" coll --ranks 8 --bytes 1MiB --link 400Gbps --switch QM9700-NDR
expect_rc 2 "a switch profile without a latency"
expect_err "switch profile 'QM9700-NDR' gives no latency .*set it with --switch-latency T" "names the option that sets it"
run_cmd "$DPUSIM" coll --ranks 8 --bytes 1MiB --link 400Gbps --switch QM9700-NDR --switch-latency 130ns
expect_rc 0 "or the latency given"
run_cmd "$DPUSIM" coll --ranks 8 --bytes 1MiB --link 400Gbps --nic QM8700-HDR
expect_rc 2 "a profile of the wrong kind"

# One collective model (issue 16): `dpusim run` of a collective scenario runs
# NCCL's cost model, as coll and training do, and the scenario key
# collectives.protocol: ideal selects the closed form. The hardware of the
# --ideal check above: 8 nodes x 1 GPU on one 400 Gb/s switch, latencies of
# 1 ps (a scenario needs them above 0).
SCN="$E2E_TMP/ring8.yaml"
cat >"$SCN" <<'YAML'
name: ring8
cluster:
  nodes: 8
  gpus_per_node: 1
  gpu: H100-SXM5
  cpu: Xeon-8480C
  nic: { profile: ConnectX-7-NDR, rdma_latency: 1ps }
  fabric: { topology: single-switch, switch: { profile: QM9700-NDR, latency: 1ps } }
workload:
  kind: collective
  collective: { op: allreduce, algo: ring, sizes: [1MiB], iterations: 1 }
variants: [{ name: gdr, network: rdma-gdr }]
YAML
row_us() { python3 -c 'import json,sys; r=json.load(sys.stdin); print("%.6f" % (r["variants"][0]["collectives"][0]["time_s"]*1e6)); print(r["info"]["collectives"])'; }
run_cmd "$DPUSIM" run "$SCN" --json
expect_rc 0 "run: a collective scenario"
OUT=$(row_us <<<"$OUT")
expect_out "NCCL's cost model" "run: the report says NCCL's cost model ran (the default)"
NCCL_US=$(head -1 <<<"$OUT")
run_cmd "$DPUSIM" coll --ranks 8 --bytes 1MiB --link 400Gbps --algo ring --msg-latency 1ps \
	--switch-latency 1ps --transport rdma-gdr --gpu H100-SXM5 --nic ConnectX-7-NDR --json
expect_out "\"time_us\": ${NCCL_US//./\\.}," "coll on the same hardware (--gpu, --nic: the scenario's profiles) gives run's time (latencies of 1 ps), $NCCL_US us"
run_cmd "$DPUSIM" coll --ranks 8 --bytes 1MiB --link 400Gbps --gpu H100-SXM5 --nic ConnectX-7-NDR \
	--msg-latency 1ps
expect_out "^# GPU H100-SXM5: NCCL's per-architecture caps at compute capability 9\.0; its channels across nodes from its search" "the header says what --gpu applies"
run_cmd "$DPUSIM" coll --ranks 8 --bytes 1MiB --link 400Gbps
expect_out "^# no --gpu: NCCL's per-architecture caps and its channel search across nodes not applied" "the header says when no GPU is given"
run_cmd "$DPUSIM" coll --ranks 8 --bytes 1MiB --link 400Gbps --gpu ConnectX-7-NDR
expect_rc 2 "--gpu of a NIC profile"
expect_err "coll: 'ConnectX-7-NDR' is a nic profile, not a gpu profile" "--gpu of a NIC profile: says which kind it is"
run_cmd "$DPUSIM" coll --ranks 8 --bytes 1MiB --link 400Gbps --gpu B300
expect_rc 2 "--gpu of no profile"
expect_err "coll: no gpu profile 'B300'" "--gpu of no profile: says so"
printf 'collectives: { protocol: ideal }\n' >>"$SCN"
run_cmd "$DPUSIM" run "$SCN" --json
expect_rc 0 "run: collectives.protocol: ideal"
OUT=$(row_us <<<"$OUT")
expect_out '^36\.93[0-9]+$' "run: collectives.protocol: ideal is the closed form, 2 x 7/8 x 1 MiB / (50e9 x 4096/4122) = 36.93 us"
expect_out "ideal closed form" "run: the report says the closed form ran"
run_cmd "$DPUSIM" check "$SCN"
expect_rc 0 "check accepts collectives.protocol"
sed 's/protocol: ideal/protocol: simple/' "$SCN" >"$E2E_TMP/badproto.yaml"
run_cmd "$DPUSIM" check "$E2E_TMP/badproto.yaml"
expect_rc 2 "collectives.protocol takes nccl or ideal"
expect_err "badproto\.yaml:13:[0-9]+: .*simple" "the error points at the value"

run_cmd "$DPUSIM" coll --help
expect_rc 0 "coll --help"
expect_out 'busbw' "help documents the columns"
finish
