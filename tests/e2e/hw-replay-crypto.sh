# dpusim-hw replay of a crypto: host variant (issue 20): every message of the
# ring all-reduce sealed with AES-256-GCM (OpenSSL EVP) by its sender and
# opened and tag-checked by its receiver over tcp, the data verified, the
# cipher's measured CPU cost per byte in the report beside the host-costs
# profile's; variants it cannot run are listed with the reason; a tampered
# ciphertext is an error (exit 1), not a report.
. tests/e2e/lib.sh
hw_setup
SCN=tests/e2e/data/hw-crypto2.yaml

run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$SCN" --reps 2 -o "$E2E_TMP/hw.json"
expect_rc 0 "replay of a 2-rank scenario with a crypto: host variant over tcp"
expect_out 'allreduce ring +2 ranks +1048576 B .*verified x3  AES-256-GCM' "the encrypted pass verified"
expect_out 'allreduce ring +2 ranks +1048576 B .*verified x3$' "and the plain one"
if python3 - "$E2E_TMP/hw.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
info = d["info"]
assert [v["name"] for v in d["variants"]] == ["baseline", "tls-host"], d["variants"]
plain, tls = d["variants"]
assert tls["offload"]["crypto"] == "host" and plain["offload"]["crypto"] == "none"
assert [c["bytes"] for c in tls["collectives"]] == [4096, 1048576]
assert all(c["time_s"] > 0 for c in tls["collectives"])
assert "every tag checked" in info["tls-host.crypto_replayed"], info
# 2 ranks x 2 sizes x 3 calls (a warm-up and --reps 2) x 2 ring steps: each
# message sealed once and opened once, so the bytes are twice what the ring moves
assert info["tls-host.crypto_replayed"].startswith("AES-256-GCM through OpenSSL EVP")
assert "24 messages" in info["tls-host.crypto_replayed"], info["tls-host.crypto_replayed"]
assert int(info["tls-host.crypto_bytes"]) == 2 * 2 * 3 * 2 * (2048 + 524288)
cpb = float(info["tls-host.crypto_cycles_per_byte"])
assert 0.1 < cpb < 100, cpb
assert float(info["tls-host.crypto_clock_Hz"]) > 1e8
assert abs(float(info["tls-host.crypto_cpu_s_per_byte"]) * float(info["tls-host.crypto_clock_Hz"]) - cpb) < 1e-3 * cpb
# the model side: host-costs-linux's aes_gcm_cycles_per_byte at the Xeon-8480C's clock
m = float(info["tls-host.crypto_model_cycles_per_byte"])
assert m > 0 and abs(float(info["tls-host.crypto_model_cpu_s_per_byte"]) * 2.0e9 - m) < 1e-6 * m, info
assert "nic-inline" in info["tls-nic.not_replayed"], info
assert info["rdma.not_replayed"].startswith("network rdma: this run"), info
# a vswitch variant used to get the plain figures as if it had none
assert info["ovs-host.not_replayed"] == "a virtual switch is not replayed", info
assert "baseline.not_replayed" not in info and "tls-host.not_replayed" not in info
PY
then ok "the report has the measured and modelled crypto cost, sane, and the variants not replayed"; else not_ok "crypto replay report"; fi

run_cmd env DPUSIM_HW_FAULT=tamper:1 "${MPIRUN[@]}" -np 2 -x DPUSIM_HW_FAULT "$HW" replay "$SCN" \
	-o "$E2E_TMP/tampered.json"
expect_rc 1 "a ciphertext byte flipped in transit fails the run"
expect_err 'rank 0: error: a 2048-byte message from rank 1 \(left link\) failed its AES-GCM tag check' \
	"the receiver names the sender"
if [ ! -e "$E2E_TMP/tampered.json" ]; then ok "and no report is written"; else not_ok "a report was written"; fi

run_cmd env DPUSIM_HW_FAULT=tamper "${MPIRUN[@]}" -np 2 -x DPUSIM_HW_FAULT "$HW" replay "$SCN"
expect_rc 2 "a malformed fault hook is refused"
expect_err "DPUSIM_HW_FAULT='tamper': the collective replay takes tamper:RANK" "plainly"

# The training replay: a second pass of the iterations with the gradients
# sealed, for the crypto: host variant; rdma listed as not replayed.
cat >"$E2E_TMP/train.yaml" <<'YAML'
name: two-replicas-crypto
seed: 5
cluster: { nodes: 2, gpus_per_node: 8, gpu: H100-SXM5, cpu: Xeon-8480C, host_costs: host-costs-linux,
           nic: { profile: ConnectX-7-NDR, rdma_latency: 0.6us }, nics_per_node: 8,
           fabric: { topology: single-switch, switch: { profile: QM9700-NDR, latency: 130ns } } }
workload: { model: llama2-7b, precision: bf16, parallelism: { tp: 8, pp: 1, dp: auto },
            batch: { global: 8, micro: 1 }, iterations: 1 }
variants:
  - { name: baseline, network: host-tcp }
  - { name: tls-host, network: host-tcp, crypto: host }
  - { name: rdma, network: rdma }
YAML
run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay "$E2E_TMP/train.yaml" --scale 0.00001 -o "$E2E_TMP/train.json"
expect_rc 0 "training replay with a crypto: host variant"
expect_out '^crypto host: the gradients sealed with AES-256-GCM' "runs the sealed pass"
if python3 - "$E2E_TMP/train.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
info = d["info"]
assert [v["name"] for v in d["variants"]] == ["baseline", "tls-host"], d["variants"]
for v in d["variants"]:
    assert v["metrics"]["iteration_s"]["mean"] > 0 and v["collectives"][0]["time_s"] > 0
assert "every tag checked" in info["tls-host.crypto_replayed"]
# the sealed pass alone: 2 iterations (warm-up included) x 2 ranks x 2 ring
# steps of half the gradients, each message sealed once and opened once
g = d["variants"][1]["collectives"][0]["bytes"]
assert int(info["tls-host.crypto_bytes"]) == 2 * 2 * 2 * 2 * (g // 2), (info, g)
cpb = float(info["tls-host.crypto_cycles_per_byte"])
assert 0.1 < cpb < 100, cpb
assert "rdma.not_replayed" in info and "baseline.not_replayed" not in info
PY
then ok "the training report has the crypto cost of the sealed gradients"; else not_ok "training crypto report"; fi

finish
