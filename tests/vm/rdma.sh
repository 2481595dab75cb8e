# make check-rdma: dpusim-hw's verbs path for real on Soft-RoCE inside a qemu
# VM booted from Debian's kernel (tests/vm/check-rdma.sh does the work; this
# wrapper lets tools/run-tests count it). BIN names a CUDA-less build.
set -u
BIN=${BIN:-build/vm/bin}
mkdir -p build/vm
exec tests/vm/check-rdma.sh "$BIN/dpusim-hw" build/vm/console.log
