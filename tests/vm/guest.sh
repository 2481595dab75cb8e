# Runs inside the check-rdma VM: dpusim-hw's verbs path for real on rxe0.
# Prints "ok - ..." / "not ok - ..." per check and closes with
# "N passed, M failed", which the host greps.
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
no() { fail=$((fail + 1)); echo "not ok - $*"; }
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo \
       OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_plm_rsh_agent=false OMPI_MCA_osc='^ucx,rdma'
# A sanitizer build of dpusim-hw (make check-rdma-asan) reads these; others ignore them.
export LSAN_OPTIONS=suppressions=/work/hw-lsan.supp:print_suppressions=0 \
       ASAN_OPTIONS=fast_unwind_on_malloc=0
# The profiles are in /work/models (mkroot.sh): dpusim-hw finds its data
# beside its binary or through DPUSIM_DATADIR, never the current folder.
export DPUSIM_DATADIR=/work
# Every symbol bound at load, as tests/e2e/lib.sh's MPI_ENV says why.
MPI="timeout 120 env LD_BIND_NOW=1 mpirun --allow-run-as-root --oversubscribe -np 2 -x DPUSIM_DATADIR"

dpusim-hw probe >/tmp/probe.txt 2>&1; rc=$?
cat /tmp/probe.txt
[ $rc -eq 0 ] && ok "probe runs" || no "probe exit $rc"
grep -q '^  rxe0 ' /tmp/probe.txt && ok "probe lists rxe0" || no "probe does not list rxe0"
grep -q 'PCI: none' /tmp/probe.txt && ok "rxe has no PCI function, said plainly" || no "rxe PCI line"
grep -q 'port 1: active, Ethernet' /tmp/probe.txt && ok "port active, RoCE" || no "port state"
grep -q 'RoCE v2' /tmp/probe.txt && ok "a RoCE v2 GID is shown" || no "no RoCE v2 GID"
grep -q 'verbs transport    yes' /tmp/probe.txt && ok "verbs usable" || no "verbs not usable"
dpusim-hw probe --json >/tmp/probe.json 2>&1 && grep -q '"name":"rxe0"' /tmp/probe.json \
	&& ok "probe --json names rxe0" || no "probe --json"

$MPI dpusim-hw bench --transport verbs --quick --sizes 4K,64K --timeout 20 -o /tmp/b.json \
	>/tmp/bench.txt 2>&1; rc=$?
cat /tmp/bench.txt
[ $rc -eq 0 ] && ok "verbs bench across 2 ranks" || no "verbs bench exit $rc"
grep -q 'rdma_write_lat ' /tmp/bench.txt && ok "RDMA WRITE latency measured" || no "no rdma_write_lat"
grep -q 'rdma_write_bw .* 65536 B' /tmp/bench.txt && ok "RDMA WRITE bandwidth at 64 KiB" || no "no rdma_write_bw"
grep -q 'rdma_send_lat ' /tmp/bench.txt && ok "SEND latency measured" || no "no rdma_send_lat"
grep -q 'rdma_send_bw .* 65536 B' /tmp/bench.txt && ok "SEND bandwidth at 64 KiB" || no "no rdma_send_bw"
grep -q 'allreduce_ring_busbw .*verbs .* 65536 B .*verified x6' /tmp/bench.txt \
	&& ok "all-reduce over verbs verified" || no "all-reduce over verbs"
[ -s /tmp/b.json ] && grep -q '"source": "hw"' /tmp/b.json && ok "bench report written" || no "bench report"

$MPI dpusim-hw replay tests/rxe-allreduce2.yaml --transport verbs --timeout 20 -o /tmp/r.json \
	>/tmp/replay.txt 2>&1; rc=$?
cat /tmp/replay.txt
[ $rc -eq 0 ] && ok "replay over verbs" || no "replay exit $rc"
grep -q '"name": "rdma"' /tmp/r.json 2>/dev/null && ok "replay report holds the rdma variant" || no "replay report"

# A training replay with pipeline parallelism (pp 2, one rank per stage):
# activations and their gradients in 1F1B order over one RC QP per link,
# both directions on the same link, every message checked by its receiver.
t0=$(date +%s)
$MPI dpusim-hw replay tests/rxe-train-pp2.yaml --transport verbs --scale 1e-3 --timeout 20 \
	-o /tmp/t.json >/tmp/train.txt 2>&1; rc=$?
cat /tmp/train.txt
echo "pipeline replay: $(($(date +%s) - t0)) s"
[ $rc -eq 0 ] && ok "pipeline training replay over verbs" || no "pipeline replay exit $rc"
# 4 microbatches x 2 measured iterations, each way
grep -q '"replay.pipeline_stage0": "activations sent 8, received 0; gradients sent 0, received 8' \
	/tmp/t.json 2>/dev/null && grep -q '"replay.pipeline_stage1": "activations sent 0, received 8; gradients sent 8, received 0' /tmp/t.json \
	&& ok "every activation and gradient crossed rxe0, in the schedule's numbers" || no "pipeline counts"

# perftest's tests replayed (a p2p workload): ib_write_bw with 128 writes in
# flight, then ib_write_lat, 3 sizes each, every test's destination checked;
# the rows compared with the simulator's per size (dpusim compare).
sed 's/test: write_bw/test: write_lat/' tests/rxe-p2p.yaml >/tmp/rxe-p2p-lat.yaml
for t in bw lat; do
	f=tests/rxe-p2p.yaml; [ $t = lat ] && f=/tmp/rxe-p2p-lat.yaml
	$MPI dpusim-hw replay $f --transport verbs --timeout 20 -o /tmp/p2p-$t.json \
		>/tmp/p2p-$t.txt 2>&1; rc=$?
	cat /tmp/p2p-$t.txt
	[ $rc -eq 0 ] && ok "p2p ib_write_$t replay over verbs" || no "p2p ib_write_$t replay exit $rc"
	n=$(grep -c "ib_write_$t .* verified" /tmp/p2p-$t.txt)
	[ "$n" = 3 ] && ok "ib_write_$t: 3 sizes run, each verified" || no "ib_write_$t: $n sizes verified"
	grep -q '"host-memory.p2p_replayed": "perftest ib_write_'$t' on verbs, rxe0 (RoCE)' /tmp/p2p-$t.json \
		&& ok "ib_write_$t: the report says what ran" || no "ib_write_$t: no p2p_replayed info"
	grep -q '"gpu-memory.not_replayed": "network rdma-gdr needs GPU memory' /tmp/p2p-$t.json \
		&& ok "ib_write_$t: the GPU-memory variant listed as not replayed" || no "ib_write_$t: gpu-memory"
	dpusim run $f --json >/tmp/p2p-$t.sim.json 2>/tmp/p2p-$t.sim.err; rc=$?
	[ $rc -eq 0 ] || { cat /tmp/p2p-$t.sim.err; no "dpusim run $f exit $rc"; }
	dpusim compare /tmp/p2p-$t.sim.json /tmp/p2p-$t.json >/tmp/p2p-$t.cmp 2>&1; rc=$?
	cat /tmp/p2p-$t.cmp
	[ $rc -eq 0 ] && ok "ib_write_$t: dpusim compare runs" || no "ib_write_$t: compare exit $rc"
	# every size shared, with a positive measured bandwidth
	n=$(awk -v t="ib_write_$t" '$1 == "host-memory" && $2 ~ "^sendrecv\\." t "\\.2r\\.(64|4096|65536)B\\.busbw_GBps$" \
		&& $4 > 0 && $5 ~ /%$/ { n++ } END { print n + 0 }' /tmp/p2p-$t.cmp)
	[ "$n" = 3 ] && ok "ib_write_$t: 3 sizes compared per size, bandwidth > 0" \
		|| no "ib_write_$t: $n sizes compared with bandwidth > 0"
done
grep -q 'B: 300 calls' /tmp/p2p-lat.cmp \
	&& ok "ib_write_lat: each row the median of 300 round trips, spread shown" || no "ib_write_lat spread"
# The other four tests, one size each: SEND with 512 receives posted, READ
# with 16 outstanding, and their ping-pongs; each verified and compared.
for t in send_bw read_bw send_lat read_lat; do
	{ sed '/^workload:/,$d' tests/rxe-p2p.yaml
	  printf 'workload:\n  kind: p2p\n  p2p:\n    test: %s\n    sizes: [4KiB]\n    iterations: 200\n' $t
	  [ $t = read_bw ] && printf '    outstanding_reads: 16\n'
	  printf 'variants:\n  - name: host-memory\n    network: rdma\n'; } >/tmp/p2p-$t.yaml
	$MPI dpusim-hw replay /tmp/p2p-$t.yaml --transport verbs --timeout 20 -o /tmp/p2p-$t.json \
		>/tmp/p2p-$t.txt 2>&1; rc=$?
	cat /tmp/p2p-$t.txt
	dpusim run /tmp/p2p-$t.yaml --json >/tmp/p2p-$t.sim.json 2>/tmp/p2p-$t.sim.err &&
		dpusim compare /tmp/p2p-$t.sim.json /tmp/p2p-$t.json >/tmp/p2p-$t.cmp 2>&1; crc=$?
	cat /tmp/p2p-$t.cmp
	[ $rc -eq 0 ] && [ $crc -eq 0 ] && grep -q "ib_$t .*4096 B .* verified" /tmp/p2p-$t.txt &&
		grep -Eq "^host-memory +sendrecv\.ib_$t\.2r\.4096B\.time_s .*%" /tmp/p2p-$t.cmp \
		&& ok "ib_$t replayed, verified and compared" || no "ib_$t: replay exit $rc, compare $crc"
done
DPUSIM_HW_FAULT=corrupt:0 $MPI -x DPUSIM_HW_FAULT dpusim-hw replay tests/rxe-p2p.yaml --transport verbs \
	--timeout 20 -o /tmp/p2p-bad.json >/tmp/p2p-bad.txt 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q 'rank 0 sent 0x' /tmp/p2p-bad.txt && [ ! -e /tmp/p2p-bad.json ] \
	&& ok "a wrong byte written by rank 0 is caught on rank 1, no report" \
	|| { cat /tmp/p2p-bad.txt; no "p2p corruption: exit $rc"; }

DPUSIM_HW_FAULT=corrupt:1 $MPI -x DPUSIM_HW_FAULT dpusim-hw bench --transport verbs --quick \
	--sizes 4K --timeout 20 >/tmp/corrupt.txt 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q 'gave a wrong sum' /tmp/corrupt.txt && ok "wrong sum over verbs detected" \
	|| { cat /tmp/corrupt.txt; no "corruption over verbs: exit $rc"; }

DPUSIM_HW_FAULT=hang:1 $MPI -x DPUSIM_HW_FAULT dpusim-hw bench --transport verbs --quick \
	--sizes 4K --timeout 3 >/tmp/hang.txt 2>&1; rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -Eq 'rank [0-9]+: error: timed out after 3.0 s' /tmp/hang.txt \
	&& ok "hung peer over verbs times out" || { cat /tmp/hang.txt; no "hung peer over verbs: exit $rc"; }

DPUSIM_HW_FAULT=exit:1 $MPI -x DPUSIM_HW_FAULT dpusim-hw bench --transport verbs --quick \
	--sizes 4K --timeout 3 >/tmp/dead.txt 2>&1; rc=$?
# RC has no end-of-stream: the survivor would learn only by its timeout, and
# mpirun ends the job first when a rank exits early. Either way: no hang.
[ $rc -ne 0 ] && [ $rc -ne 124 ] && ok "dead peer over verbs ends the run (exit $rc), no hang" \
	|| { cat /tmp/dead.txt; no "dead peer over verbs: exit $rc"; }

echo "$pass passed, $fail failed"
