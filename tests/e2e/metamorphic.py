#!/usr/bin/env python3
"""Physical consistency of dpusim's predictions (issue 16): properties any
credible prediction has, checked on generated scenarios of several shapes.

  metamorphic.py DPUSIM TMPDIR

For each shape (dense data parallel, tensor + pipeline parallel on a fat
tree, the same on DeepSpeed's pipeline engine, a deep pipeline,
storage-bound, a loader on few host cores, encrypted, multi-tenant, a
collective on a fat tree) a change that only adds capability must never
make an iteration slower (within REL, 0.01%): a more capable transport
(rdma-gdr <= rdma <= host-tcp), a faster link, GPU, HBM or NVLink, lower
adapter and switch latency, more NICs, host cores, loader workers, DPU
engine capacity or storage bandwidth; encryption none <= inline <= host;
adding a tenant never speeds up the others; more work (twice the batch)
never shortens an iteration. Every report's breakdown adds up to its iteration,
and a scenario run twice with one seed gives the same report. Prints TAP-
like "ok - " / "not ok - " lines.
"""
import copy
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from scenario_runs import CX7, QM9700, REL_SHARED, Runs, changed, iteration  # noqa: E402

REL = 1e-4
# Max-min fair sharing is not monotone per flow: a faster link lets flows
# that were held by it take a larger share of a resource they cross with
# others (host memory, a node's stack cores), and the collective's critical
# path can lose a little. Measured: dense-dp's host-tcp iteration +0.017%
# from 100 to 200 Gb/s with the node's host memory binding (153.6 GB/s), and
# monotone (0.549 -> 0.490 -> 0.490 s at 100/200/400 Gb/s) when it does not
# (mem_bw 9 TB/s). "Never slower" for a hardware change holds within
# REL_SHARED (5e-4, tools/scenario_runs.py, which tools/fuzz-physics shares).
# Violations the model still has, open in issue 16: printed on stderr as
# known, not counted, and reported as fixed (a failure, so the entry is
# removed) when they no longer occur. (check, faster, slower) as ordered()
# names them.
# no_slower's entries are (check, variant).
KNOWN = {
    # deep-pp, 200 -> 400 Gb/s: host-tcp +0.69%, rdma +0.24% (rdma-gdr, whose
    # bytes never cross host memory, -1.2%). Both cross the node's host
    # memory (153.6 GB/s of network traffic, 4 and 2 times per byte), which
    # the last stages' data-parallel rings, off the critical path, share
    # max-min with the first stages' gradient sends, on it, during the
    # 1F1B cooldown. At 400 Gb/s the rings run faster and take more of it,
    # and the sends, hence the cooldown, slow (host-tcp: the rings' busbw
    # 9.94 -> 10.10 GB/s, a pipeline send 4.07 -> 4.29 ms, the bubble
    # 5.90 -> 6.00 s from 200 to 400 Gb/s). With host memory out of the way (mem_bw
    # 9 TB/s) all three are monotone (host-tcp 12.184 -> 11.928 s). NCCL
    # gives a pipeline send no priority over a ring on a bus either, so
    # the paradox is the sharing's, kept visible here rather than tuned
    # away (measured December 2026, session note of issue 16).
    ("deep-pp: link 200 -> 400 Gb/s", "host-tcp"),
    ("deep-pp: link 200 -> 400 Gb/s", "rdma"),
    # storage-cores, 4 -> 8 loader workers (as many as the node's loaders):
    # the steady step +5.6% on the paths whose decodes have the cores to
    # themselves (a station of `workers` servers). Every loader then decodes
    # the moment its reads end, and the reads in flight share the storage
    # port max-min, so they end together: all loaders decode at once and
    # the port idles for one decode a step (a microbatch's 128 samples x
    # 0.01 ms = 1.28 ms: 22.756 -> 24.036 ms); fewer workers stagger the
    # decodes and keep the port busy. Served first in, first out (an SSD's
    # queue) the reads would not end together; the model shares them
    # (measured December 2026, session note of issue 16).
    ("storage-cores: loader workers 4 -> 8", "nvmeof"),
    ("storage-cores: loader workers 4 -> 8", "gds"),
}
# (The transports' ordering has none since issue 16's tuner fix: 70b-fat-
# tree's rdma ran 5.5% slower than host-tcp on ECMP (the default before
# D-mod-K became InfiniBand's): the two-replica all-reduce ran a tree under
# host-tcp and a ring under rdma, each on routes of its own.
# 70b-fat-tree-ecmp keeps that fabric.)
DPUSIM, TMP = sys.argv[1], sys.argv[2]
RUNS = Runs(DPUSIM, TMP)


def ok(msg):
    print("ok - " + msg)


def not_ok(msg):
    print("not ok - " + msg)


def run(scn):
    """The report of scenario dict scn (memoised on its text)."""
    return RUNS.run(scn)


def variant_names(scn):
    return [v["name"] for v in scn["variants"]]


def cluster(nodes, gpus, topo="single-switch", **kw):
    c = {"nodes": nodes, "gpus_per_node": gpus, "gpu": "H100-SXM5", "cpu": "Xeon-8480C",
         "host_costs": "host-costs-linux", "nic": dict(CX7), "nics_per_node": gpus,
         "fabric": {"topology": topo, "switch": dict(QM9700), "link_rate": "100Gbps"}}
    if topo == "fat-tree":
        c["fabric"]["tiers"] = 2
    c.update(kw)
    return c


def transports(extra=None):
    vs = [{"name": n, "network": n} for n in ("host-tcp", "rdma", "rdma-gdr")]
    for v in vs:
        v.update(extra or {})
    return vs


def shapes():
    dense = {"name": "dense-dp", "seed": 3, "cluster": cluster(4, 8),
             "workload": {"model": "llama2-7b", "parallelism": {"tp": 8, "pp": 1},
                          "batch": {"global": 16, "micro": 2}, "recompute": True,
                          "iterations": 2},
             "variants": transports()}
    tppp = {"name": "tp-pp-fat-tree", "seed": 4,
            "cluster": cluster(8, 8, "fat-tree"),
            "workload": {"model": "llama2-7b", "parallelism": {"tp": 8, "pp": 2},
                         "batch": {"global": 16, "micro": 1}, "recompute": True,
                         "iterations": 2},
            "variants": transports()}
    storage = {"name": "storage-bound", "seed": 7,
               "cluster": cluster(2, 8, storage={"server": "DDN-AI400X2", "servers": 1,
                                                 "network": "dedicated",
                                                 "dataset": "150GB"}),
               "workload": {"model": "resnet50", "precision": "fp16",
                            "batch": {"global": 2048, "micro": 128},
                            "data": {"sample_bytes": "1MB", "decode": "0.01ms/sample",
                                     "workers": 2, "prefetch": 2},
                            "iterations": 2},
               "variants": [{"name": "nfs", "network": "rdma-gdr", "storage": "host"},
                            {"name": "nvmeof", "network": "rdma-gdr", "storage": "host-rdma"},
                            {"name": "gds", "network": "rdma-gdr", "storage": "gds"}]}
    enc = {"name": "encrypted", "seed": 1,
           "cluster": cluster(4, 1, dpu={"profile": "BlueField-3", "crypto_rate": "193Gbps"}),
           "workload": {"kind": "collective",
                        "collective": {"op": "allreduce", "algo": "ring",
                                       "sizes": ["1MiB", "64MiB"], "iterations": 2}},
           "variants": [{"name": "none", "network": "host-tcp"},
                        {"name": "inline", "network": "host-tcp", "crypto": "dpu-inline"},
                        {"name": "host", "network": "host-tcp", "crypto": "host"}]}
    coll = {"name": "collective-fat-tree", "seed": 2,
            "cluster": cluster(16, 1, "fat-tree"),
            "workload": {"kind": "collective",
                         "collective": {"op": "allreduce", "algo": "auto",
                                        "sizes": ["64KiB", "1MiB", "16MiB", "256MiB"],
                                        "iterations": 2}},
            "variants": transports()}
    # The case: Llama-2 70B, tp 8 x pp 4 on 8 nodes of a two-tier fat
    # tree at 100 Gb/s, where rdma was predicted 5.5% slower than host-tcp
    # on ECMP: the two-replica gradient all-reduce's ring had one channel
    # (one TCP connection) against its trees' two, the tuner ranked with
    # TCP's per-connection cap and the trees routed apart from the ring, so
    # host-tcp ran a tree and rdma a ring whose ECMP draw collided worse
    # (models/coll.c: view_new, choose; coll_int.h: coll_tree_channel).
    # On InfiniBand's D-mod-K (the default here) and on ECMP (a RoCE fabric).
    big = {"name": "70b-fat-tree", "seed": 5, "cluster": cluster(8, 8, "fat-tree"),
           "workload": {"model": "llama2-70b", "parallelism": {"tp": 8, "pp": 4},
                        "batch": {"global": 16, "micro": 1}, "recompute": True,
                        "iterations": 1},
           "variants": transports()}
    big_ecmp = copy.deepcopy(big)
    big_ecmp["name"] = "70b-fat-tree-ecmp"
    big_ecmp["cluster"]["fabric"]["routing"] = "ecmp"
    # DeepSpeed's pipeline engine: its blocking sends and boundary gathers
    # put the transfers on the stages' own timelines, so a faster link or
    # transport must show there too, never as a slower iteration.
    ds = copy.deepcopy(tppp)
    ds["name"] = "tp-pp-deepspeed"
    ds["workload"]["pipeline_engine"] = "deepspeed"
    # A deep pipeline's cooldown: a 405B-shaped model (Llama 3 405B's widths,
    # Dubey et al. 2024; 128 layers for its 126, so that 16 stages divide
    # them), tp 8 x pp 16 x dp 2, 16 microbatches, where the
    # last stages' data-parallel rings run beside the first stages'
    # gradient sends, both through host memory under host-tcp.
    deep = {"name": "deep-pp", "seed": 6, "cluster": cluster(32, 8, "fat-tree"),
            "workload": {"model": "custom",
                         "transformer": {"layers": 128, "hidden": 16384, "heads": 128,
                                         "kv_heads": 8, "ffn": 53248, "ffn_mats": 3,
                                         "seq": 8192, "vocab": 128256, "block": "llama"},
                         "precision": "bf16",
                         "parallelism": {"tp": 8, "pp": 16, "dp": 2, "zero_stage": 1},
                         "batch": {"global": 32, "micro": 1}, "recompute": True,
                         "iterations": 1},
            "variants": transports()}
    # A loader whose host cores bind: one 12-core socket, 8 of them the
    # framework's, so NFS's client (the TCP receive copy per byte), host-tcp
    # and the workers' decodes share 4 cores. Each worker used to hold a
    # core for the whole run, so more workers left the stacks fewer: NFS ran
    # twice as slow with 4 workers as with 2. Eight iterations: the steady
    # step (p50) is compared, the first steps' transient depends on the
    # order the workers start in.
    cores = copy.deepcopy(storage)
    cores["name"] = "storage-cores"
    cores["cluster"]["cpu"] = {"profile": "Xeon-8480C", "sockets": 1, "cores_per_socket": 12}
    cores["workload"]["iterations"] = 8
    cores["variants"] = storage["variants"] + [{"name": "nfs-host-tcp", "network": "host-tcp",
                                                "storage": "host"}]
    # Data-parallel pairs inside a node: tp 2 x pp 4 on two nodes of eight
    # GPUs puts each replica pair on one node's NVLink, where NCCL runs the
    # node's NVLink channels whatever its NICs. Their channels were one per
    # NIC: at one NIC the pair's 813 MiB all-reduce ran NCCL's tree on one
    # channel, at two a ring on two, 30% slower in the run, so two NICs
    # were 0.27% slower than one (found by a random search over shapes,
    # December 2026; models/coll.c group_channels).
    dp_node = {"name": "dp-in-node", "seed": 8,
               "cluster": cluster(2, 8, "fat-tree", nics_per_node=1),
               "workload": {"model": "gpt3-13b", "parallelism": {"tp": 2, "pp": 4},
                            "batch": {"global": 4, "micro": 1}, "recompute": True,
                            "iterations": 2},
               "variants": transports()}
    return [dense, tppp, storage, enc, coll, big, big_ecmp, ds, deep, cores, dp_node]


def no_slower(desc, before, after, variants, stat="mean"):
    """after (more capable) is never slower than before, per variant (its
    mean iteration, or stat: p50, the steady step, where the first steps'
    transient is not the property)."""
    a, b = run(before), run(after)
    for rep, what in ((a, "base"), (b, "changed")):
        if "error" in rep:
            return not_ok("%s: %s run failed: %s" % (desc, what, rep["error"]))
    for v in variants:
        x, y = iteration(a, v, stat), iteration(b, v, stat)
        if x is None or y is None:
            not_ok("%s: variant %s missing" % (desc, v))
        elif (desc, v) in KNOWN and y <= x * (1 + REL_SHARED):
            not_ok("%s: %s %.6g s -> %.6g s holds now: remove it from KNOWN" % (desc, v, x, y))
        elif (desc, v) in KNOWN:
            sys.stderr.write("# known (KNOWN, issue 16): %s: %s slower %.6g s -> %.6g s "
                             "(+%.3f%%)\n" % (desc, v, x, y, 100 * (y / x - 1)))
        elif y <= x * (1 + REL):
            ok("%s: %s %.6g s -> %.6g s" % (desc, v, x, y))
        elif y <= x * (1 + REL_SHARED):
            ok("%s: %s %.6g s -> %.6g s (+%.3f%%: max-min sharing of a common resource)"
               % (desc, v, x, y, 100 * (y / x - 1)))
        else:
            not_ok("%s: %s SLOWER %.6g s -> %.6g s (+%.3f%%)" % (desc, v, x, y,
                                                                 100 * (y / x - 1)))


def ordered(desc, scn, order):
    """order[0] <= order[1] <= ... in iteration time (each more capable first)."""
    rep = run(scn)
    if "error" in rep:
        return not_ok("%s: run failed: %s" % (desc, rep["error"]))
    times = [iteration(rep, v) for v in order]
    for (va, ta), (vb, tb) in zip(zip(order, times), zip(order[1:], times[1:])):
        known = (desc, va, vb) in KNOWN
        if ta <= tb * (1 + REL) and known:
            not_ok("%s: %s <= %s holds now: remove it from KNOWN" % (desc, va, vb))
        elif ta <= tb * (1 + REL):
            ok("%s: %s %.6g s <= %s %.6g s" % (desc, va, ta, vb, tb))
        elif known:
            sys.stderr.write("# known violation (issue 16): %s: %s %.6g s is slower than %s "
                             "%.6g s (+%.2f%%)\n" % (desc, va, ta, vb, tb, 100 * (ta / tb - 1)))
        else:
            not_ok("%s: %s %.6g s is SLOWER than %s %.6g s (+%.2f%%)" %
                   (desc, va, ta, vb, tb, 100 * (ta / tb - 1)))


def check_breakdown_and_determinism(scn):
    rep = run(scn)
    if "error" in rep:
        return not_ok("%s: run failed: %s" % (scn["name"], rep["error"]))
    for v in rep["variants"]:
        it = v["metrics"]["iteration_s"]["mean"]
        bd = v.get("breakdown_s") or {}
        if bd and abs(sum(bd.values()) - it) > 1e-9 * it:
            not_ok("%s: %s breakdown %.9g != iteration %.9g" % (scn["name"], v["name"],
                                                                 sum(bd.values()), it))
        else:
            ok("%s: %s breakdown adds up" % (scn["name"], v["name"]))
    again = copy.deepcopy(scn)
    again["description"] = "same scenario, second run"
    rep2 = run(again)
    rep2 = {k: x for k, x in rep2.items() if k != "scenario"}
    rep1 = {k: x for k, x in rep.items() if k != "scenario"}
    if rep1 == rep2:
        ok("%s: the same seed gives the same report" % scn["name"])
    else:
        not_ok("%s: two runs with one seed differ" % scn["name"])


def gpu_faster(scn):
    s = copy.deepcopy(scn)
    s["cluster"]["gpu"] = {"profile": "H100-SXM5", "peak_bf16_flops": "1978.9TFLOP/s",
                           "peak_fp16_flops": "1978.9TFLOP/s", "hbm_bw": "6.7TB/s"}
    return s


def main():
    dense, tppp, storage, enc, coll, big, big_ecmp, ds, deep, cores, dp_node = shapes()
    for scn in (dense, tppp, coll, big, big_ecmp, ds, deep):
        ordered(scn["name"] + ": transports", scn, ["rdma-gdr", "rdma", "host-tcp"])
    ordered("encrypted: crypto", enc, ["none", "inline", "host"])
    ordered("storage-bound: storage path", storage, ["gds", "nvmeof", "nfs"])
    for scn in (dense, tppp, coll, enc, ds, deep):
        no_slower(scn["name"] + ": link 100 -> 200 Gb/s", scn,
                  changed(scn, ["cluster", "fabric", "link_rate"], "200Gbps"),
                  variant_names(scn))
    # The collective's auto choice from link rate to link rate (each NCCL
    # candidate charged the longer of NCCL's figure and the run's own,
    # models/coll.c choose; before, 16 nodes of one GPU ran a tree at a
    # faster link that the run makes slower than the ring it left).
    no_slower(coll["name"] + ": link 200 -> 400 Gb/s",
              changed(coll, ["cluster", "fabric", "link_rate"], "200Gbps"),
              changed(coll, ["cluster", "fabric", "link_rate"], "400Gbps"), variant_names(coll))
    no_slower(deep["name"] + ": link 200 -> 400 Gb/s",
              changed(deep, ["cluster", "fabric", "link_rate"], "200Gbps"),
              changed(deep, ["cluster", "fabric", "link_rate"], "400Gbps"), variant_names(deep))
    for scn in (dense, tppp, storage, ds):
        no_slower(scn["name"] + ": GPU twice as fast", scn, gpu_faster(scn),
                  variant_names(scn))
    for scn in (dense, tppp):
        fewer = changed(scn, ["cluster", "nics_per_node"], 4)
        no_slower(scn["name"] + ": NICs per node 4 -> 8", fewer, scn, variant_names(scn))
    for a, b in ((1, 2), (2, 4)):
        no_slower("dp-in-node: NICs per node %d -> %d" % (a, b),
                  changed(dp_node, ["cluster", "nics_per_node"], a),
                  changed(dp_node, ["cluster", "nics_per_node"], b), variant_names(dp_node))
    no_slower("encrypted: DPU crypto engine 193 -> 386 Gb/s", enc,
              changed(enc, ["cluster", "dpu", "crypto_rate"], "386Gbps"), ["inline"])
    no_slower("storage-bound: storage servers 1 -> 2", storage,
              changed(storage, ["cluster", "storage", "servers"], 2), variant_names(storage))
    # Each part of the hardware alone, faster: HBM, NVLink, the adapter's and
    # the switch's latency, twice the host cores (issue 16's "more capable
    # hardware never slower", past the link, GPU and NIC count above).
    for scn in (dense, tppp, coll, deep):
        gpu = dict(scn["cluster"]["gpu"]) if isinstance(scn["cluster"]["gpu"], dict) else \
            {"profile": scn["cluster"]["gpu"]}
        no_slower(scn["name"] + ": HBM 3.35 -> 6.7 TB/s", scn,
                  changed(scn, ["cluster", "gpu"], dict(gpu, hbm_bw="6.7TB/s")), variant_names(scn))
        no_slower(scn["name"] + ": NVLink 450 -> 900 GB/s", scn,
                  changed(scn, ["cluster", "gpu"], dict(gpu, nvlink_bw="900GB/s")),
                  variant_names(scn))
        no_slower(scn["name"] + ": adapter latency 0.6 -> 0.3 us", scn,
                  changed(scn, ["cluster", "nic"], dict(CX7, rdma_latency="0.3us")),
                  variant_names(scn))
        no_slower(scn["name"] + ": switch latency 130 -> 65 ns", scn,
                  changed(scn, ["cluster", "fabric", "switch"], dict(QM9700, latency="65ns")),
                  variant_names(scn))
        no_slower(scn["name"] + ": host cores 112 -> 224", scn,
                  changed(scn, ["cluster", "cpu"],
                          {"profile": "Xeon-8480C", "cores_per_socket": 112}),
                  variant_names(scn))
    # More work is never faster: twice the global batch (more microbatches
    # a pipeline) never shortens an iteration.
    for scn in (dense, tppp, deep, cores):
        b = scn["workload"]["batch"]
        no_slower(scn["name"] + ": global batch x2 never shortens an iteration",
                  changed(scn, ["workload", "batch", "global"], 2 * b["global"]), scn,
                  variant_names(scn), "p50")
    for a, b in ((1, 2), (2, 4), (4, 8)):
        no_slower("storage-cores: loader workers %d -> %d" % (a, b),
                  changed(cores, ["workload", "data", "workers"], a),
                  changed(cores, ["workload", "data", "workers"], b), variant_names(cores),
                  "p50")
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(os.path.dirname(here), "data")
    alone = run_file(os.path.join(data, "multi-small-alone.yaml"))
    shared = run_file(os.path.join(data, "multi-small.yaml"))
    for v in ("baseline", "gdr"):
        a = iteration(alone, "tenant-a/" + v) or iteration(alone, v)
        b = iteration(shared, "tenant-a/" + v)
        if a is None or b is None:
            not_ok("tenants: tenant-a/%s missing" % v)
        elif b >= a * (1 - REL):
            ok("tenants: adding tenant-b does not speed up tenant-a (%s %.6g -> %.6g s)"
               % (v, a, b))
        else:
            not_ok("tenants: tenant-a/%s FASTER with a second tenant %.6g -> %.6g s" % (v, a, b))
    for scn in (dense, tppp, storage, enc, coll, ds):
        check_breakdown_and_determinism(scn)


def run_file(path):
    p = subprocess.run([DPUSIM, "run", path, "--json", "--replications", "1"],
                       capture_output=True, text=True)
    return json.loads(p.stdout) if p.returncode == 0 else {}


if __name__ == "__main__":
    main()
