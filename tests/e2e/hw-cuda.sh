# make check-cuda: dpusim-hw's CUDA paths (probe, GEMM and copy benchmarks,
# tcp all-reduce alongside) on a machine with a GPU. Where there is no GPU,
# or the binary has no CUDA, it says plainly that it skipped them.
. tests/e2e/lib.sh
hw_setup 300

run_cmd "$HW" --version
expect_rc 0 "dpusim-hw --version"
if ! grep -q ' cuda' <<<"$OUT" || grep -q 'no cuda' <<<"$OUT"; then
	echo "check-cuda: SKIPPED: this dpusim-hw was built without CUDA (no /usr/local/cuda/bin/nvcc)"
	finish; exit
fi
run_cmd "$HW" probe --json
expect_rc 0 "probe --json"
ngpu=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["gpus"]["devices"]))' "$E2E_TMP/out")
if [ "${ngpu:-0}" -eq 0 ]; then
	note=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gpus"]["note"])' "$E2E_TMP/out")
	echo "check-cuda: SKIPPED: no GPU here ($note)"
	finish; exit
fi

run_cmd "$HW" probe
expect_out '^  GPU 0: .*compute [0-9]+\.[0-9]+, .* GiB, [0-9]+ SMs, PCI [0-9a-fA-F:.]+' "probe describes GPU 0"
expect_out 'cuda compute +yes' "cuda compute usable"
echo "$OUT" | sed -n '/^GPUs:/,/^$/p'

run_cmd "${MPIRUN[@]}" -np 2 "$HW" bench --quick \
	--sizes 64K -o "$E2E_TMP/gpu.json" --dir "$E2E_TMP"
expect_rc 0 "bench --quick with CUDA across 2 ranks"
echo "$OUT" | grep -E 'gemm_|h2d_bw|d2h_bw'
if python3 - "$E2E_TMP/gpu.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["benchmarks"]
g = [x for x in b if x["transport"] == "cuda"]
names = {x["name"] for x in g}
for n in ["gemm_bf16", "gemm_tf32", "gemm_fp32", "h2d_bw", "d2h_bw"]:
    assert n in names, n
assert all(x["value"] > 0 and x.get("device") for x in g)
# Orders of magnitude any CUDA GPU of the last decade meets: GEMM above
# 1 TFLOP/s at n=4096 in bf16, copies above 1 GB/s.
assert max(x["value"] for x in g if x["name"] == "gemm_bf16") > 1e12
assert min(x["value"] for x in g if x["name"] in ("h2d_bw", "d2h_bw")) > 1e9
PY
then ok "GEMM and copy figures in the report"; else not_ok "CUDA benchmarks in the report"; fi
# A training replay whose GEMMs run on the GPU (cuBLAS, every product
# checked), 4 ranks sharing the GPUs, gradients over tcp.
mkdir -p "$E2E_TMP/data"
head -c 1000000 /dev/urandom >"$E2E_TMP/data/shard0.bin"
run_cmd "${MPIRUN[@]}" -np 4 "$HW" replay \
	tests/e2e/data/hw-train4.yaml --data "$E2E_TMP/data" --scale 1e-3 --compute cuda \
	-o "$E2E_TMP/train-gpu.json"
expect_rc 0 "training replay with cuBLAS GEMMs on the GPU"
expect_out 'cuda cublasSgemm .*n=4096' "the GEMMs ran on the GPU"
if python3 - "$E2E_TMP/train-gpu.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); i = d["info"]
assert i["replay.compute"].startswith("cuda cublasSgemm"), i["replay.compute"]
# FP32 SGEMM above 1 TFLOP/s: any data-centre GPU of the last decade, even
# shared by 4 ranks.
assert float(i["replay.compute_flops_per_s"].split()[0]) > 1e12
assert d["variants"][0]["breakdown_s"]["compute"] > 0
PY
then ok "GPU compute figures in the training replay report"; else not_ok "GPU training replay report"; fi

if [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	run_cmd "${MPIRUN[@]}" -np 2 "$HW" replay \
		tests/vm/rxe-allreduce2.yaml --transport verbs --mem cuda
	expect_rc 0 "replay with GPU memory (GPUDirect RDMA via dmabuf)"
else
	echo "check-cuda: replay with GPU memory SKIPPED: it needs an RDMA device (none here)"
fi
finish
