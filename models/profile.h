/* Hardware profiles: one YAML file per device in models/profiles/ (format in
 * docs/profiles.md), loaded through one schema table (profile_schema.c) into
 * typed structs of SI values, every value with its source. */
#ifndef DPUSIM_MODELS_PROFILE_H
#define DPUSIM_MODELS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "models/diag.h"
#include "models/units.h"
#include "models/ytree.h"

typedef enum profile_kind {
	PROFILE_GPU,
	PROFILE_CPU,
	PROFILE_NIC,
	PROFILE_DPU,
	PROFILE_SWITCH,
	PROFILE_STORAGE,
	PROFILE_HOST_COSTS,
	PROFILE_NKINDS
} profile_kind;

/* Every value is a double in SI units (counts hold whole numbers, booleans
 * 0 or 1, words the index of the word in their field's list). A value the
 * profile does not give is NAN: test with profile_has(). Field meanings:
 * docs/profiles.md. */

/* link_layer (nic, dpu, switch): what the ports speak. vpi: a card that
 * runs either (NVIDIA's Virtual Protocol Interconnect), set per port by
 * the fabric it is cabled to. */
typedef enum profile_link_layer {
	PROFILE_LL_INFINIBAND,
	PROFILE_LL_ETHERNET,
	PROFILE_LL_VPI,
} profile_link_layer;
extern const char *const profile_link_layer_words[]; /* NULL-terminated */
typedef struct profile_gpu {
	double peak_fp64_flops, peak_fp32_flops, peak_tf32_flops; /* FLOP/s, dense */
	double peak_fp16_flops, peak_bf16_flops, peak_fp8_flops;  /* FLOP/s, dense */
	double hbm_bytes, hbm_bw_Bps, nvlink_bw_Bps;              /* per direction */
	double hbm_bw_achieved_Bps; /* measured by a streaming kernel */
	double attn_gemm_eff_d64, attn_gemm_eff_d128; /* fraction of peak unfused attention's
			      * score/value GEMMs compute at, beyond their bytes at the
			      * streaming rate, measured at head dims 64 and 128 */
	double nvlink_bw_achieved_Bps; /* what a copy over NVLink achieves, per direction */
	double nccl_channels; /* NCCL's channels (rings) on the node's NVLink, from its log */
	double nvls;          /* bool: the NVSwitch domain reduces and multicasts (NVLink SHARP) */
	double compute_capability; /* CUDA compute capability, major.minor (9.0: Hopper) */
	double pcie_gen, pcie_lanes;
	double kernel_launch_s;
	double eff_max;       /* fraction of peak on large GEMMs */
	double eff_max_fp8;   /* fraction of the FP8 peak on large FP8 GEMMs */
	double eff_sustained; /* eff_max with the board at its power limit, the clock
			       * settled (a training step's state); NAN: not given */
	double eff_sustained_fp8; /* the same for eff_max_fp8 */
	double eff_half_flop; /* GEMM size at which efficiency is eff_max / 2 */
	double flash_fwd_flops, flash_bwd_flops; /* fused causal attention, head dim 128,
						  * measured (FlashAttention's FLOP count) */
	double tdp_w, idle_w;
} profile_gpu;

typedef struct profile_cpu {
	double sockets, cores_per_socket, freq_hz;
	double mem_bw_Bps; /* per socket */
	double tdp_w, idle_w; /* per socket */
	double pcie_read_lat_s; /* a device's DMA read of host memory, round trip of a small read */
	double mem_lat_s;       /* a core's load that misses every cache level: memory latency */
} profile_cpu;

typedef struct profile_nic {
	double ports, port_rate_Bps;
	double rdma_latency_s, msg_rate_per_s;
	double pcie_gen, pcie_lanes;
	double gpudirect; /* bool */
	double power_w;
	double inline_crypto;        /* bool: an inline IPsec/TLS engine (crypto-enabled SKUs) */
	double inline_crypto_bw_Bps; /* that engine's AES-GCM throughput */
	double link_layer;           /* profile_link_layer */
} profile_nic;

typedef struct profile_dpu {
	profile_nic nic; /* a DPU is a NIC plus what follows */
	double arm_cores, arm_freq_hz;
	double arm_rel_speed; /* work per cycle relative to a host x86 core */
	double crypto_rate_Bps, asap2_pps, snap_iops, snap_bw_Bps, dma_bw_Bps;
} profile_dpu;

typedef struct profile_switch {
	double radix, port_rate_Bps, latency_s;
	double sharp; /* bool */
	double power_w;
	double link_layer; /* profile_link_layer */
} profile_switch;

typedef struct profile_storage {
	double bw_Bps, iops, io_latency_s, power_w; /* one server (or one drive) */
	double write_bw_Bps;          /* sustained write bandwidth */
	double pcie_gen, pcie_lanes;  /* a drive's own PCIe link (node-local NVMe) */
} profile_storage;

typedef struct profile_host_costs {
	double tcp_rx_cycles_per_byte, tcp_tx_cycles_per_byte, tcp_cycles_per_packet;
	double mtu_bytes;
	double aes_gcm_cycles_per_byte, vswitch_cycles_per_packet, nfs_cycles_per_byte;
	double tcp_latency_s;
	/* Clock-free forms, given where a measurement's CPU clock is unpublished:
	 * cycles per byte = core clock / tcp_rx_bw_per_core, and so on. */
	double tcp_rx_bw_per_core_Bps, vswitch_pps_per_core;
} profile_host_costs;

/* All kinds share offset 0, so schema offsets index any of them. */
typedef union profile_values {
	profile_gpu gpu;
	profile_cpu cpu;
	profile_nic nic;
	profile_dpu dpu;
	profile_switch sw;
	profile_storage storage;
	profile_host_costs host;
} profile_values;

/* ---- schema (profile_schema.c) ---- */

typedef struct profile_field {
	profile_kind kind;
	const char *name; /* as written in files and scenarios */
	unit_dim dim;     /* ignored when is_bool or words */
	bool is_bool;
	const char *const *words; /* a word field: one of these (NULL-terminated),
				   * held as its index; NULL otherwise */
	size_t offset;    /* of the double in profile_values */
	double lo, hi;    /* accepted range, inclusive (lo exclusive when lo_open) */
	bool lo_open;
	const char *doc;
} profile_field;

extern const profile_field profile_fields[];
extern const size_t profile_nfields;

/* The field called name of that kind, or NULL. */
const profile_field *profile_field_find(profile_kind kind, const char *name);
/* Index of f in profile_fields. */
size_t profile_field_index(const profile_field *f);
double profile_field_get(const profile_values *v, const profile_field *f);
void profile_field_set(profile_values *v, const profile_field *f, double x);
/* The word a word field's value v stands for ("?" when out of range). */
const char *profile_field_word(const profile_field *f, double v);
/* Closest field name of that kind to name (edit distance), or NULL. */
const char *profile_field_suggest(profile_kind kind, const char *name);

/* Parses a scalar node as field f's value (units, range) into *out; errors
 * go to d at the node's position, naming what (e.g. "'hbm_bw'"). 0 or
 * SIM_EPARSE/SIM_EUNIT/SIM_ERANGE. */
int profile_field_parse(const profile_field *f, const yt_node *n, double *out, diag *d);

/* "gpu", "host-costs"...; profile_kind_parse: 0 or SIM_ENOENT. */
const char *profile_kind_name(profile_kind k);
int profile_kind_parse(const char *s, profile_kind *out);

/* True when v holds a value (not NAN). */
bool profile_has(double v);

/* ---- one profile ---- */

typedef struct profile profile;

/* Loads and validates one profile file: kind, name, summary, fields (each
 * with a value of the right unit and range, and a non-empty source), missing
 * (each "field: reason", naming a field of the kind not given). Every error
 * goes to d. *out: caller frees with profile_free. 0, or an error code. */
int profile_load(const char *path, profile **out, diag *d);
void profile_free(profile *p);

profile_kind profile_get_kind(const profile *p);
const char *profile_name(const profile *p);
const char *profile_summary(const profile *p);
const char *profile_file(const profile *p);
const profile_values *profile_get_values(const profile *p);
/* Source of field f, or NULL when the profile does not give it. */
const char *profile_source(const profile *p, const profile_field *f);
/* Why f is missing (from the file's missing: list), or NULL. */
const char *profile_missing(const profile *p, const profile_field *f);

/* ---- a directory of profiles, plus explicit files ---- */

typedef struct profile_set profile_set;

/* Profiles named NAME are read from dir/NAME.yaml on first use. NULL when
 * out of memory. */
profile_set *profile_set_new(const char *dir);
void profile_set_free(profile_set *s);
/* Loads path now; its profile replaces any of the same name in the
 * directory (--profile FILE). 0 or an error (messages in d). */
int profile_set_add_file(profile_set *s, const char *path, diag *d);
/* The profile called name, loading it if needed. SIM_ENOENT when there is
 * none (nothing added to d), other errors with messages in d. *out is owned
 * by s. */
int profile_set_find(profile_set *s, const char *name, const profile **out, diag *d);
/* Every profile name available (directory and added files), sorted; the
 * array and strings are owned by s and valid until the next call. */
int profile_set_names(profile_set *s, const char *const **names, size_t *n);
const char *profile_set_dir(const profile_set *s);

#endif
