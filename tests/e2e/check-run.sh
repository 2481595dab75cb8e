# Every value `dpusim check` accepts must `run` (issue 17, items 2 and 7):
# small scenarios derived from a training and a collective scenario, each
# with one field at an extreme (tiny, huge, 1e-300, 1e300) or one op/algo
# pair. For each, either check refuses it (exit 2, every message placed at
# file:line:column) or run succeeds (exit 0); never an abort, a crash, a
# hang, or a run that refuses what check accepted.
. tests/e2e/lib.sh

TRAIN=$E2E_TMP/train.yaml
COLL=$E2E_TMP/coll.yaml
# One replication, a token target (time to train, goodput, cost), storage
# for the data loader's cases.
sed -e 's/^replications: 2/replications: 1/' -e 's/^  iterations: 2/  iterations: 2\n  target_tokens: 1e9/' \
	tests/data/train-small.yaml >"$TRAIN"
cat >"$COLL" <<'EOF'
name: coll-small
cluster:
  nodes: 2
  gpus_per_node: 2
  gpu: A100-SXM4-80GB
  cpu: EPYC-7742
  host_costs: host-costs-linux
  nic: ConnectX-6-HDR
  nics_per_node: 2
  fabric: { topology: single-switch, switch: QM8700-HDR }
workload:
  kind: collective
  collective: { op: allreduce, algo: ring, sizes: [1KiB, 1MiB], iterations: 2 }
variants:
  - { name: tcp, network: host-tcp }
  - { name: gdr, network: rdma-gdr }
EOF

GPU='gpu: { profile: A100-SXM4-80GB'
HC='host_costs: { profile: host-costs-linux'
STOR='storage: { server: DDN-AI400X2 }'
DATA='data: { sample_bytes: 1MB, decode: 1ms/sample, workers: 4 }'
FAIL='node_mtbf: 1000h, checkpoint_interval: 1h, restart: 10min'
# BASE|LABEL|overlay (YAML laid over the base with extends:; ' && ' between
# top-level keys)
cases=$(cat <<EOF
t|peak 989FLOP/s|cluster: { $GPU, peak_bf16_flops: 989FLOP/s } }
t|peak 1e-300FLOP/s|cluster: { $GPU, peak_bf16_flops: 1e-300FLOP/s } }
t|hbm_bw 3.35kB/s|cluster: { $GPU, hbm_bw: 3.35kB/s } }
t|hbm_bw_achieved 1e-300B/s|cluster: { $GPU, hbm_bw_achieved: 1e-300B/s } }
t|eff_max 1e-9|cluster: { $GPU, eff_max: 1e-9 } }
t|eff_max 1e-300|cluster: { $GPU, eff_max: 1e-300 } }
t|eff_half_flops 1e-300FLOP|cluster: { $GPU, eff_half_flops: 1e-300FLOP } }
t|nvlink_bw 1e-300B/s|cluster: { $GPU, nvlink_bw_achieved: 1e-300B/s } }
t|pcie 1 lane gen 1|cluster: { $GPU, pcie_gen: 1, pcie_lanes: 1 } }
t|huge transformer|workload: { transformer: { layers: 1000, hidden: 1048576, heads: 16, seq: 4194304, vocab: 16777216 } }
t|huge batch|workload: { batch: { global: 100000000, micro: 1000000 }, parallelism: { tp: 2, pp: 2 } }
t|bucket 1e-300B|workload: { bucket: 1e-300B }
t|bucket 1B|workload: { bucket: 1B }
t|link_rate 1e-300bps|cluster: { fabric: { link_rate: 1e-300bps } }
t|link_rate 1bps|cluster: { fabric: { link_rate: 1bps } }
t|hop_latency 1ms|cluster: { fabric: { hop_latency: 1ms } }
t|switch without latency|cluster: { fabric: { switch: QM9700-NDR }, nic: ConnectX-7-NDR }
t|switch latency 1e-300s|cluster: { fabric: { switch: { profile: QM8700-HDR, latency: 1e-300s } } }
t|nic rdma_latency 1e-300s|cluster: { nic: { profile: ConnectX-6-HDR, rdma_latency: 1e-300s } }
t|nic port_rate 1e-300bps|cluster: { nic: { profile: ConnectX-6-HDR, port_rate: 1e-300bps } }
t|cpu freq 1e-300Hz|cluster: { cpu: { profile: EPYC-7742, freq: 1e-300Hz } }
t|cpu mem_bw 1e-300B/s|cluster: { cpu: { profile: EPYC-7742, mem_bw: 1e-300B/s } }
t|tcp 1e-300cycles/byte|cluster: { $HC, tcp_rx_cycles_per_byte: 1e-300cycles/byte, tcp_tx_cycles_per_byte: 1e-300cycles/byte } }
t|tcp 1000cycles/byte|cluster: { $HC, tcp_rx_cycles_per_byte: 1000cycles/byte } }
t|vswitch 1e-300cycles/packet|cluster: { $HC, vswitch_cycles_per_packet: 1e-300cycles/packet } } && variants: [ { name: b, network: host-tcp, vswitch: host } ]
t|vswitch 1e7cycles/packet|cluster: { $HC, vswitch_cycles_per_packet: 1e7cycles/packet } } && variants: [ { name: b, network: host-tcp, vswitch: host } ]
t|tcp_latency 10ms|cluster: { $HC, tcp_latency: 10ms } }
t|os_jitter_delay 1s|noise: { os_jitter_delay: 1s }
t|slow nodes x100|noise: { slow_nodes: 0.5, slow_factor: 100 }
t|decode 3600s/sample|cluster: { $STOR } && workload: { $DATA, data: { sample_bytes: 1MB, decode: 3600s/sample, workers: 1 } }
t|sample 1e-300B|cluster: { $STOR } && workload: { data: { sample_bytes: 1e-300B, decode: 1ms/sample, workers: 4 } }
t|sample 1TB|cluster: { $STOR } && workload: { data: { sample_bytes: 1TB, decode: 1ms/sample, workers: 4 } }
t|storage bw 1e-300B/s|cluster: { storage: { server: { profile: DDN-AI400X2, bw: 1e-300B/s } } } && workload: { $DATA }
t|storage link 1e-300bps|cluster: { storage: { server: DDN-AI400X2, link_rate: 1e-300bps } } && workload: { $DATA }
t|node_mtbf 1e-300s|failures: { node_mtbf: 1e-300s, checkpoint_interval: 1h, restart: 10min }
t|node_mtbf 1e300s|failures: { node_mtbf: 1e300s, checkpoint_interval: 1h, restart: 10min }
t|checkpoint_interval 1e-300s|failures: { node_mtbf: 1000h, checkpoint_interval: 1e-300s, restart: 10min }
t|checkpoint_interval 1e300s|failures: { node_mtbf: 1000h, checkpoint_interval: 1e300s, restart: 10min }
t|restart 1e300s|failures: { node_mtbf: 1000h, checkpoint_interval: 1h, restart: 1e300s }
t|checkpoint 1e18B|failures: { $FAIL, checkpoint_size: 1e18B }
t|target_tokens 1e18|workload: { target_tokens: 1e18 } && failures: { $FAIL }
t|mtbf 1s, 1e18 tokens|workload: { target_tokens: 1e18 } && failures: { node_mtbf: 1s, checkpoint_interval: 1h, restart: 1h }
t|mtbf 1e-300s, restart 1e300s|failures: { node_mtbf: 1e-300s, checkpoint_interval: 1e300s, restart: 1e300s }
t|part mtbf 1e-300s|failures: { node_mtbf: 1h, gpu_mtbf: 1e-300s, nic_mtbf: 1e-300s, switch_mtbf: 1e-300s, checkpoint_interval: 1h, restart: 1e300s }
t|checkpoint over a 1kbps storage link|cluster: { storage: { server: DDN-AI400X2, link_rate: 1kbps } } && failures: { node_mtbf: 10h, checkpoint_interval: 10min, restart: 10min }
t|async checkpoint over a 1kbps storage link|cluster: { storage: { server: DDN-AI400X2, link_rate: 1kbps } } && failures: { node_mtbf: 10h, checkpoint_interval: 10min, restart: 10min, checkpoint_mode: async }
t|async checkpoint 1e18B|failures: { node_mtbf: 1h, checkpoint_interval: 1h, restart: 1h, checkpoint_mode: async, checkpoint_size: 1e18B }
t|gpu_price 1e300USD/h, 1e18 tokens|workload: { target_tokens: 1e18 } && cost: { gpu_price: 1e300USD/h }
t|tp beyond a node|workload: { parallelism: { tp: 16, pp: 1 } }
t|gpu_price 1e300USD/h|cost: { gpu_price: 1e300USD/h }
t|gpu_price 1e-300USD/h|cost: { gpu_price: 1e-300USD/h }
t|energy_price 1e300USD/kWh|cost: { gpu_price: 2USD/h, energy_price: 1e300USD/kWh }
c|sizes 10TB|workload: { collective: { sizes: [10TB] } }
c|link_rate 1e-300bps|cluster: { fabric: { link_rate: 1e-300bps } }
c|tcp 1e-300cycles/byte|cluster: { $HC, tcp_rx_cycles_per_byte: 1e-300cycles/byte } }
c|vswitch 1e-300cycles/packet|cluster: { $HC, vswitch_cycles_per_packet: 1e-300cycles/packet } } && variants: [ { name: b, network: host-tcp, vswitch: host } ]
c|os_jitter_delay 1s|noise: { os_jitter_delay: 1s }
c|switch without latency|cluster: { fabric: { switch: QM9700-NDR }, nic: ConnectX-7-NDR }
c|sweep whose file as written cannot run|cluster: { nodes: 1, gpus_per_node: 1 } && sweep: { cluster.nodes: [2, 4] }
c|sweep whose file as written runs|sweep: { cluster.nodes: [2, 4] }
EOF
)
for op in allreduce reduce-scatter allgather alltoall broadcast sendrecv; do
	for algo in auto ring tree hierarchical in-network; do
		cases+=$'\n'"c|$op/$algo|workload: { collective: { op: $op, algo: $algo } }"
	done
done

located='^[^:]+:[0-9]+:[0-9]+: '
n=0
while IFS='|' read -r base label overlay; do
	n=$((n + 1))
	f=$E2E_TMP/case$n.yaml
	[ "$base" = t ] && from=$TRAIN || from=$COLL
	printf 'extends: %s\n%s\n' "$from" "${overlay//' && '/$'\n'}" >"$f"
	run_cmd timeout 60 "$DPUSIM" check "$f"
	if grep -q "invalid YAML" <<<"$ERR"; then not_ok "$label: the case itself is not YAML: ${ERR:0:200}"; continue; fi
	if [ "$RC" -eq 2 ]; then
		# Every message but the closing summary is placed in the file.
		bad=$(grep -v "^dpusim: error: '$f' is not a valid scenario" <<<"$ERR" | grep -Ev "$located")
		if [ -z "$bad" ] && [ -n "$ERR" ]; then ok "$label: check refuses it, located"
		else not_ok "$label: check refuses it without a place: ${bad:0:300}"; fi
		continue
	fi
	if [ "$RC" -ne 0 ]; then not_ok "$label: check exits $RC: ${ERR:0:300}"; continue; fi
	run_cmd timeout 60 "$DPUSIM" run "$f"
	if [ "$RC" -eq 0 ]; then ok "$label: check accepts it and run succeeds"
	else not_ok "$label: check accepts it, run exits $RC: ${ERR:0:300}"; fi
done <<<"$cases"
finish
