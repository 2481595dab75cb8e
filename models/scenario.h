/* Scenario files: load (extends:, profile references and overrides), validate
 * completely, and resolve into typed structs in SI units that the models
 * read. Every key is documented in docs/scenarios.md. */
#ifndef DPUSIM_MODELS_SCENARIO_H
#define DPUSIM_MODELS_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "models/coll_ops.h"
#include "models/diag.h"
#include "models/offload_list.h"
#include "models/profile.h"
#include "models/workload.h"

#define SCN_NAME_MAX 64
#define SCN_MAX_JOBS 64
#define SCN_MAX_VARIANTS 16
#define SCN_MAX_SIZES 64
#define SCN_MAX_AXES 8
#define SCN_MAX_SLOW_GPUS 64
#define SCN_MAX_SWEEP_POINTS 100000

typedef enum scn_topology { SCN_TOPO_SINGLE_SWITCH, SCN_TOPO_FAT_TREE, SCN_TOPO_RAIL_OPTIMISED } scn_topology;
typedef enum scn_routing { SCN_ROUTE_ECMP, SCN_ROUTE_ADAPTIVE, SCN_ROUTE_DMODK } scn_routing;
/* Where the fabric's link layer was read. */
typedef enum scn_ll_from { SCN_LL_UNKNOWN, SCN_LL_SWITCH, SCN_LL_NIC } scn_ll_from;
typedef enum scn_stornet { SCN_STORNET_SHARED, SCN_STORNET_DEDICATED } scn_stornet;
typedef enum scn_precision { SCN_FP32, SCN_TF32, SCN_FP16, SCN_BF16, SCN_FP8 } scn_precision;
typedef enum scn_wl_kind { SCN_WL_TRAINING, SCN_WL_COLLECTIVE, SCN_WL_P2P } scn_wl_kind;
/* perftest's point-to-point tests (ib_write_bw, ib_write_lat, ib_send_bw,
 * ib_send_lat, ib_read_bw, ib_read_lat), in scenario words write_bw...
 * (models/p2p.h). */
typedef enum scn_p2p_test { SCN_P2P_WRITE_BW, SCN_P2P_WRITE_LAT, SCN_P2P_SEND_BW,
			    SCN_P2P_SEND_LAT, SCN_P2P_READ_BW, SCN_P2P_READ_LAT } scn_p2p_test;
typedef enum scn_coll_op { COLL_OPS(COLL_OP_SCN_ENUM_) } scn_coll_op; /* coll_ops.h */
typedef enum scn_coll_algo { COLL_SCN_ALGOS(COLL_SCN_ALGO_ENUM_) } scn_coll_algo; /* coll_ops.h */
typedef enum scn_placement { SCN_PLACE_PACKED, SCN_PLACE_SPREAD } scn_placement;
/* The offload options (models/offload_list.h, one list per kind). */
typedef enum scn_network { OFFLOAD_NETWORKS(OFFLOAD_ENUM_) } scn_network;
typedef enum scn_storage_path { OFFLOAD_STORAGES(OFFLOAD_ENUM_) } scn_storage_path;
typedef enum scn_crypto { OFFLOAD_CRYPTOS(OFFLOAD_ENUM_) } scn_crypto;
typedef enum scn_vswitch { OFFLOAD_VSWITCHES(OFFLOAD_ENUM_) } scn_vswitch;
typedef enum scn_slowdown { SCN_SLOW_NONE, SCN_SLOW_LOGNORMAL, SCN_SLOW_NORMAL } scn_slowdown;

/* The words of each enumeration, as written in scenario files ("fat-tree"). */
const char *scn_topology_name(scn_topology v);
const char *scn_network_name(scn_network v);
const char *scn_storage_path_name(scn_storage_path v);
const char *scn_crypto_name(scn_crypto v);
const char *scn_vswitch_name(scn_vswitch v);
const char *scn_precision_name(scn_precision v);
const char *scn_coll_op_name(scn_coll_op v);
const char *scn_coll_algo_name(scn_coll_algo v);
const char *scn_routing_name(scn_routing v);
const char *scn_p2p_test_name(scn_p2p_test v);
/* True for the latency tests (ping-pong, half the round trip). */
bool scn_p2p_is_lat(scn_p2p_test v);

/* Where a part of the scenario was written, for messages about it that
 * come after loading (models/setup.c, the dry setup pass of dpusim check
 * and run): file NULL when unknown. file points into the scenario's own
 * storage and lives as long as the scenario. */
typedef struct scn_where {
	const char *file;
	int line, col;
} scn_where;

/* A referenced profile after the scenario's overrides. */
typedef struct scn_hw {
	char name[SCN_NAME_MAX]; /* profile name; "" when the component is absent */
	const profile *prof;     /* the profile as loaded (sources), owned by the scenario */
	profile_values v;        /* values in SI, overrides applied; NAN = not given */
	scn_where at;            /* the component's key in the scenario */
} scn_hw;

typedef struct scn_fabric {
	scn_topology topology;
	int tiers;                /* 1 for a single switch; 2 or 3 for a fat tree */
	double oversubscription;  /* leaf down:up bandwidth ratio, >= 1 */
	double link_rate_Bps;     /* node-to-leaf link rate */
	double hop_latency_s;     /* cable + SerDes per hop, besides the switch's own */
	scn_routing routing;      /* as given, else by link layer: InfiniBand dmodk, else ecmp */
	bool routing_given;       /* the scenario wrote routing: */
	int link_layer;           /* profile_link_layer of the fabric (a loaded scenario's is
				     infiniband or ethernet), -1 unknown */
	double mtu_bytes;         /* the link MTU as given (IB MTU, or Ethernet's IP MTU);
				     NAN: the link layer's default per transport
				     (models/wire.h, wire_default_mtu) */
	scn_ll_from ll_from;      /* the profile that decided it */
	int rails;                /* rail-optimised: rails (= NICs per node) */
	scn_hw sw;                /* switch profile */
} scn_fabric;

typedef struct scn_storage {
	bool present;
	scn_hw server;            /* storage profile */
	int servers;
	scn_stornet network;
	double link_rate_Bps;     /* each server's link */
	double dataset_bytes;     /* 0: not given */
} scn_storage;

/* Node-local NVMe drives, the same in every node (models/stor.h): when
 * present the data loader reads from them, not from the storage servers. */
typedef struct scn_local_nvme {
	bool present;
	scn_hw drive;             /* storage profile of one drive */
	int drives;               /* per node, striped */
	int pcie_switch;          /* on the PCIe switch of NIC pcie_switch (and its GPUs) */
} scn_local_nvme;

typedef struct scn_cluster {
	int nodes, gpus_per_node;
	scn_hw gpu, cpu, host_costs, nic;
	int nics_per_node;
	bool has_dpu;
	scn_hw dpu;
	int dpus_per_node;
	bool dpus_replace_nics;   /* the DPUs are the rail adapters: no separate NIC is bought,
				   * powered or failing (the NIC profile still gives the network
				   * side's figures) */
	scn_fabric fabric;
	scn_storage storage;
	scn_local_nvme local_nvme;
} scn_cluster;

typedef struct scn_data {
	bool present;
	double sample_bytes;
	double decode_s_per_sample; /* on one host core */
	int workers;                /* loader processes per node */
	int prefetch;               /* microbatches each replica's loader reads ahead */
	double page_cache_hit;      /* fraction of sample reads served by the node's page cache */
} scn_data;

typedef struct scn_training {
	char model[SCN_NAME_MAX];   /* preset name, or "custom" */
	wl_model shape;             /* preset with transformer: overrides, checked */
	scn_precision precision;
	scn_precision grad_reduce;  /* grad_reduce_dtype: the data-parallel gradients'
				     * element type, accumulated and reduced (fp32, bf16
				     * or fp16; default by precision, scn_grad_reduce_of) */
	int tp, pp, dp;
	bool dp_auto;               /* dp was 'auto': GPUs / (tp * pp) */
	bool sp;                    /* sequence_parallel: Megatron's sequence parallelism */
	bool flash;                 /* attention: flash (FlashAttention), not unfused */
	int cp;                     /* context parallelism: the sequence split over cp
				     * ranks (ring attention); tp x cp x pp x dp GPUs */
	bool cp_p2p;                /* cp_comm_type p2p: Transformer Engine's ring of K and
				     * V exchanges beside the attention steps; false:
				     * all_gather, K and V gathered before attention */
	int vp;                     /* virtual_stages: model chunks per pipeline rank
				     * (Megatron's interleaved 1F1B); 1: plain 1F1B */
	int zero_stage;             /* 0..3 */
	wl_engine engine;           /* pipeline_engine (scn_engine_words) */
	int micro_batch;            /* samples per microbatch per pipeline */
	int global_batch;           /* samples per iteration */
	int microbatches;           /* derived: global / (dp * micro) */
	double bucket_bytes;        /* gradient bucket for overlap */
	bool recompute;             /* full activation recomputation in backward */
	bool tp_overlap;            /* tp_comm_overlap: Transformer Engine's userbuffers */
	bool wgrad_fused;           /* grad_accum_fusion: weight gradients accumulated
				     * in the GEMMs (by default where the engine does,
				     * wl_engine_wgrad_fusion) */
	bool tp_bwd_overlap;        /* tp_backward_overlap: the column-parallel layers'
				     * backward collectives beside their GEMMs (by
				     * default where the engine has it,
				     * wl_engine_tp_bwd_overlap) */
	int ub_proj_sms, ub_fc2_sms; /* tp_overlap_sms: { proj, fc2 } */
	bool ub_fp8_rs;             /* tp_overlap_fp8_buf: the pipelined reduce-scatters
				     * move FP8 (TE's fp8_buf) */
	double memory_reserve_bytes; /* per GPU for the framework and CUDA context (0: none) */
	wl_memory memory;           /* derived: memory per GPU of the stage needing most */
	scn_data data;
	int iterations;             /* simulated iterations */
	double target_tokens;       /* 0: not given; time to train when set */
} scn_training;

typedef struct scn_collective {
	scn_coll_op op;
	scn_coll_algo algo;
	double sizes_bytes[SCN_MAX_SIZES];
	size_t nsizes;
	int ranks;
	bool ranks_auto;            /* ranks not given: all the GPUs the workload gets */
	int iterations;             /* per size */
} scn_collective;

/* A point-to-point benchmark with perftest's semantics (docs/scenarios.md,
 * "Point-to-point benchmark"): GPU 0 of node 0 to GPU 0 of node 1, from
 * host memory (network rdma) or GPU memory (rdma-gdr, perftest --use_cuda). */
typedef struct scn_p2p {
	scn_p2p_test test;
	double sizes_bytes[SCN_MAX_SIZES];
	size_t nsizes;
	int qps;                    /* queue pairs, each with tx_depth writes in flight (bw) */
	int tx_depth;               /* messages in flight per QP: 128 for bw (perftest's
	                               DEF_TX_BW), 1 for latency tests */
	int out_reads;              /* read_bw: reads outstanding per QP (perftest takes the
	                               device's max_qp_rd_atom; no published figure, so the
	                               scenario gives it); 0 for the other tests */
	int iterations;             /* per size: 5000 for write_bw, else 1000 (perftest) */
} scn_p2p;

typedef struct scn_workload {
	scn_wl_kind kind;
	scn_training train;         /* kind training */
	scn_collective coll;        /* kind collective */
	scn_p2p p2p;                /* kind p2p */
	int gpus;                   /* GPUs this workload gets */
} scn_workload;

typedef struct scn_job {
	char name[SCN_NAME_MAX];
	scn_workload wl;
	int nodes;                  /* nodes given to the job */
	scn_placement placement;
	scn_where at;               /* its workload: mapping */
} scn_job;

typedef struct scn_variant {
	char name[SCN_NAME_MAX];
	scn_network network;
	scn_storage_path storage;
	scn_crypto crypto;
	scn_vswitch vswitch;
	/* NCCL's socket transport (network: host-tcp): helper threads per
	 * connection (NCCL_SOCKET_NTHREADS) and sockets per thread
	 * (NCCL_NSOCKS_PERTHREAD); 0 where not given (NCCL's default, 1 x 1). */
	int nccl_socket_nthreads, nccl_nsocks_perthread;
	scn_where at;               /* the variant's mapping */
	bool own_hw;                /* the variant names hardware or prices of its own
	                               (cluster:, cost:): see scn_variant_view */
} scn_variant;

/* One throttled GPU (noise.slow_gpus): its index in the cluster (node x
 * gpus_per_node + GPU within the node) and the fraction (0, 1] of its
 * nominal speed it computes at. */
typedef struct scn_slow_gpu {
	uint32_t gpu;
	double speed;
} scn_slow_gpu;

typedef struct scn_noise {
	scn_slowdown gpu_dist;
	double gpu_cv;              /* coefficient of variation of GPU time */
	double slow_node_fraction;
	double slow_node_factor;    /* >= 1: slowdown of a slow node */
	double os_jitter;           /* fraction of host-core time lost */
	double os_jitter_delay_s;   /* mean extra delay of each host-stack message (0: none) */
	scn_slow_gpu slow_gpus[SCN_MAX_SLOW_GPUS]; /* distinct GPUs, in the order given */
	size_t nslow_gpus;
} scn_noise;

typedef enum scn_ckpt_mode {
	SCN_CKPT_SYNC,  /* training stops while the checkpoint is written */
	SCN_CKPT_ASYNC, /* snapshot to host memory, persisted in the background */
} scn_ckpt_mode;

typedef struct scn_failures {
	bool enabled;
	double node_mtbf_s;         /* the rest of a server: CPU, memory, board, PSU, OS */
	double gpu_mtbf_s;          /* one GPU; NAN: GPUs counted in node_mtbf */
	double nic_mtbf_s;          /* one NIC or DPU; NAN: counted in node_mtbf */
	double switch_mtbf_s;       /* one fabric switch; NAN: switches not counted */
	double checkpoint_interval_s;
	double checkpoint_bytes;    /* 0: derived from the model by the models */
	double restart_s;
	scn_ckpt_mode checkpoint_mode;
} scn_failures;

typedef struct scn_cost {
	bool present;
	double gpu_usd_per_s;       /* per GPU, all-in */
	double dpu_usd_per_s;       /* extra per DPU */
	double energy_usd_per_j;
	double pue;
} scn_cost;

typedef struct scn_security {
	bool encryption_required;   /* every variant must encrypt (crypto != none) */
	bool tenant_isolation;      /* every variant must run a virtual switch */
} scn_security;

/* The collective model every collective of the scenario runs under
 * (collectives.protocol): NCCL's cost model (models/coll.h
 * COLL_PROTO_NCCL), the default, or the ideal closed form. One switch for
 * collective benchmarks and training alike. */
typedef enum scn_coll_proto { SCN_PROTO_NCCL, SCN_PROTO_IDEAL } scn_coll_proto;

typedef struct scn_sweep_axis {
	char key[128];              /* dotted path, e.g. cluster.fabric.link_rate */
	size_t nvalues;
} scn_sweep_axis;

typedef struct scn_sweep {
	bool zip;                   /* false: cartesian product */
	scn_sweep_axis axes[SCN_MAX_AXES];
	size_t naxes;
	size_t points;              /* 1 when there is no sweep */
} scn_sweep;

typedef struct scn_src scn_src;

/* A resolved scenario. Values are SI; profiles are merged with overrides. */
typedef struct scn_scenario {
	char name[SCN_NAME_MAX];
	char *description;          /* may be NULL */
	char *file;                 /* the file it was loaded from */
	unsigned long long seed;
	int replications;
	scn_cluster cluster;
	scn_job jobs[SCN_MAX_JOBS]; /* a single workload: one job with all nodes */
	size_t njobs;
	bool multi_job;             /* written as jobs: rather than workload: */
	scn_variant variants[SCN_MAX_VARIANTS];
	size_t nvariants;
	scn_noise noise;
	scn_failures failures;
	scn_cost cost;
	scn_security security;
	scn_coll_proto coll_proto;  /* collectives.protocol */
	bool lump_ring_steps;       /* collectives.ring_steps: lumped (coll_config's) */
	scn_sweep sweep;
	scn_src *src;               /* what sweeps need: the merged tree, profiles */
	/* Variant i's own scenario when it has hardware of its own: the
	 * scenario with the variant's cluster: and cost: merged over it and
	 * that variant alone; NULL when it runs on the scenario's. Owned. */
	struct scn_scenario *variant_hw[SCN_MAX_VARIANTS];
} scn_scenario;

typedef struct scn_opts {
	const char *profile_dir;          /* NULL: datadir_profiles() */
	const char *const *profile_files; /* --profile FILE overrides */
	size_t nprofile_files;
	bool fit_unchecked;               /* a layout that does not fit in GPU memory is
	                                     not refused (dpusim plan searches the
	                                     layouts itself); the memory is still computed */
} scn_opts;

/* Loads, validates and resolves the scenario in path (following extends:).
 * Every problem found goes to d as "file:line:col: message"; on any error
 * nothing is returned. *out: free with scn_free. 0, SIM_EPARSE (invalid
 * scenario), SIM_EIO (unreadable) or SIM_ENOMEM. */
int scn_load(const char *path, const scn_opts *opts, scn_scenario **out, diag *d);

/* The same from a buffer; name stands for the file in messages and relative
 * extends: paths are resolved against the current directory. */
int scn_load_buffer(const char *name, const char *buf, size_t len, const scn_opts *opts,
		    scn_scenario **out, diag *d);

/* Variant i (< s->nvariants) as it runs: *vs the scenario whose cluster,
 * jobs and cost are its hardware and prices (s itself unless the variant
 * has its own), *v the variant in it. Both owned by s. */
void scn_variant_view(const scn_scenario *s, size_t i, const scn_scenario **vs,
		      const scn_variant **v);

/* Every file the scenario was read from: itself and each file it extends
 * (names as given and as resolved, so some twice). *n of them, owned by s. */
const char *const *scn_files(const scn_scenario *s, size_t *n);

/* Frees a scenario; NULL is a no-op. */
void scn_free(scn_scenario *s);

/* Point i (0 <= i < s->sweep.points) of the sweep, resolved like the base.
 * *out: free with scn_free. Messages in d. */
int scn_sweep_point(const scn_scenario *s, size_t i, scn_scenario **out, diag *d);

/* "cluster.nodes=16 cluster.fabric.link_rate=400Gbps" for point i, into buf:
 * each value's canonical text (models/canon.h), so that distinct points get
 * distinct labels even where values are mappings or lists. */
char *scn_sweep_label(const scn_scenario *s, size_t i, char *buf, size_t n);

/* Point i's messages (pd) into d, each once over the sweep (seen holds
 * those already given), marked with the point that shows them. */
void scn_sweep_point_msgs(const scn_scenario *s, size_t i, const diag *pd, diag *d, diag *seen);
/* The canonical text of axis a's value at point i (buf: n >= CANON_MAX + 1). */
char *scn_sweep_value(const scn_scenario *s, size_t a, size_t i, char *buf, size_t n);

/* One way to lay a training job out: what the loader's memory check tries
 * when suggesting a layout that fits, and what dpusim plan varies. */
typedef struct scn_layout {
	int tp, pp, dp;
	int micro_batch;        /* samples per microbatch per pipeline */
	long global_batch;      /* samples per iteration */
	int zero_stage;         /* 0..3 */
	bool recompute;
	int vp;                 /* virtual stages per pipeline rank (0 or 1: plain 1F1B) */
	bool sp;                /* sequence parallelism (only with tp > 1) */
	int cp;                 /* context-parallel ranks (0 or 1: none) */
} scn_layout;

/* Job t laid out as l on cluster cl, for wl_gpu_memory: t's reserve, and
 * NCCL's buffers once per channel of a communicator (the GPU profile's
 * nccl_channels, else one per NIC), as the loader's memory check counts
 * them, so a layout plan keeps is one the check accepts. */
wl_mem_plan scn_mem_plan(const scn_cluster *cl, const scn_training *t, const scn_layout *l);

/* grad_reduce_dtype's default for a job trained at precision p, as
 * Megatron-LM sets it: bf16 (and fp8, whose Megatron-core recipes run
 * bf16 parameters) forces gradient accumulation and all-reduce in fp32
 * (megatron/training/arguments.py: "bfloat16 requires gradient
 * accumulation and all-reduce to be done in fp32", setting
 * accumulate_allreduce_grads_in_fp32; NeMo's MegatronMixedPrecision
 * grad_reduce_in_fp32: True); fp16 reduces in fp16 unless
 * --accumulate-allreduce-grads-in-fp32 is given (its default False); fp32
 * and tf32 reduce fp32. */
scn_precision scn_grad_reduce_of(scn_precision p);

/* Bytes of one gradient element as t reduces it (grad_reduce), and of one
 * parameter as ZeRO's all-gather moves it: the 16-bit model weights under
 * mixed precision (fp16, bf16, fp8: Megatron's distributed optimizer
 * gathers the bf16/fp16 copies, fp8 weights only with fp8_param_gather,
 * off by default), 4 at fp32 and tf32. */
double scn_grad_bytes(const scn_training *t);
double scn_param_bytes(const scn_training *t);

/* Which routing the cluster's fabric runs and why, one line into buf (n
 * bytes): "dmodk: ... the default for an InfiniBand fabric (switch
 * 'QM9700-NDR' link_layer infiniband)", or "... as the scenario sets
 * (cluster.fabric.routing)". For the report's info VARIANT.routing. */
void scn_routing_why(const scn_cluster *c, char *buf, size_t n);

/* One paragraph: cluster, job(s), variants, sweep size. */
void scn_summary(const scn_scenario *s, FILE *f);

/* The resolved scenario as YAML, in SI units, profiles merged (each value
 * written back with its SI unit so the dump is itself a valid scenario). */
void scn_dump(const scn_scenario *s, FILE *f);

/* The training workload's GPU count per job, etc., is in scn_workload.gpus. */

#endif
