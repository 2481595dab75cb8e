/* Offload options as data. Each value of a variant's network, storage,
 * crypto and vswitch (offload_list.h) is one row here: the profile fields
 * it needs (the scenario loader checks them, once, in check_variant), and
 * the functions that say what it does to a node: host-core work per byte
 * moved, an engine's cap on the node's traffic (DPU or NIC), and the path
 * of the data loader's storage reads. Setup, the training world, the
 * report and the dump read this table; adding an option is a line in
 * offload_list.h, a row and a function in offload.c. */
#ifndef DPUSIM_MODELS_OFFLOAD_H
#define DPUSIM_MODELS_OFFLOAD_H

#include <stdbool.h>

#include "models/diag.h"
#include "models/scenario.h"
#include "models/wire.h"

typedef enum offload_kind {
	OFFLOAD_NETWORK,
	OFFLOAD_STORAGE,
	OFFLOAD_CRYPTO,
	OFFLOAD_VSWITCH,
	OFFLOAD_NKINDS
} offload_kind;

/* Which of the cluster's profiles a field is read from. */
typedef enum offload_hw { OFFLOAD_HOST_COSTS, OFFLOAD_NIC, OFFLOAD_DPU } offload_hw;

/* A profile field an option needs; where alt is set, either will do (a
 * cycles form or a clock-free form of one cost). */
typedef struct offload_field {
	offload_hw hw;
	const char *field, *alt;
} offload_field;

#define OFFLOAD_MAX_FIELDS 6

/* The host's work per byte moved over the network under a variant, in
 * core-seconds per byte, on the receiving side (total_core_s_per_byte) and
 * on the sending side (total_tx_core_s_per_byte), and what they are made
 * of, for explanations. Crypto and the virtual switch cost the same both
 * ways (AES-GCM encrypts and decrypts at one rate; the switch handles every
 * packet); TCP has its send and receive costs. */
typedef struct offload_costs {
	double tcp_core_s_per_byte;      /* kernel TCP receive (copy path) */
	double tcp_tx_core_s_per_byte;   /* kernel TCP send */
	double crypto_core_s_per_byte;   /* AES-GCM on host cores */
	double vswitch_core_s_per_byte;  /* software virtual switch */
	double total_core_s_per_byte;    /* receive side */
	double total_tx_core_s_per_byte; /* send side */
	double engine_cap_Bps;           /* DPU or NIC engine bound on the node's traffic; 0: none */
	const char *engine_what;         /* which engine, for explanations */
	bool engine_on_dpu;              /* that engine is the DPU's (else the NIC's) */
} offload_costs;

/* How the data loader's reads from the storage servers reach the GPU. */
typedef struct offload_storage {
	double core_s_per_byte; /* host cores per byte read (client stack, host crypto) */
	double engine_Bps;      /* the node's DPU storage engines (SNAP: snap_bw x DPUs); 0: none */
	double engine_iops;     /* their IO rate (snap_iops x DPUs); 0: not a bound */
	bool direct;            /* GPUDirect Storage: no host bounce buffer */
	bool kernel_stack;      /* the reads cross the host's kernel network stack */
} offload_storage;

/* What an option function sees. notes (may be NULL) collects what could
 * not be modelled for lack of a published figure. */
typedef struct offload_env {
	const scn_scenario *s;
	const scn_variant *v;
	double freq_Hz;   /* the host CPU's clock */
	double mtu;       /* the host-costs profile's MTU (the virtual switch's
	                     packets); NAN where absent */
	double tcp_pkt_bytes; /* a TCP packet's payload (offload_tcp_packet_bytes) */
	diag *notes;
} offload_env;

typedef struct offload_row {
	offload_kind kind;
	int value;
	bool dpu;                 /* runs on the DPU: needs cluster.dpu */
	bool host_work;           /* runs work on the host's cores: needs cluster.host_costs */
	const char *host_costs_for; /* else what it takes from cluster.host_costs (NULL: nothing) */
	offload_field needs[OFFLOAD_MAX_FIELDS]; /* up to the first without a field */
	/* Its share of the node's network costs and engines (NULL: none). */
	void (*net)(const offload_env *e, offload_costs *out);
	/* Its share of the storage read path (NULL: none). Storage rows run
	 * before crypto rows. */
	void (*storage)(const offload_env *e, offload_storage *out);
} offload_row;

/* "network", "storage", "crypto", "vswitch": one kind, or all in order. */
const char *offload_kind_name(offload_kind k);
const char *const *offload_kind_names(void);
/* The words of kind k, NULL-terminated, in enum order; the word of one
 * value ("?" out of range). */
const char *const *offload_words(offload_kind k);
const char *offload_word(offload_kind k, int value);
/* The variant's value of kind k, and its row. */
int offload_value(const scn_variant *v, offload_kind k);
const offload_row *offload_row_of(const scn_variant *v, offload_kind k);

/* The profile of the cluster a field is read from. */
const scn_hw *offload_hw_of(const scn_scenario *s, offload_hw hw);

/* Payload bytes of one TCP packet, for host TCP's per-packet CPU cost
 * (tcp_cycles_per_packet): the fabric's MSS (models/wire.c: the Ethernet
 * IP MTU less 52, the IB MTU less 56 over IPoIB) where the scenario sets
 * cluster.fabric.mtu; else the host-costs profile's mtu, the packet size
 * its per-packet cost was measured at (docs/profile-sources.md); NAN
 * where neither. */
double offload_tcp_packet_bytes(const scn_scenario *s);

/* The same for transport t's packets (RDMA: the IB MTU, or RoCE's MTU
 * under the Ethernet interface's), which a virtual switch forwards one by
 * one: its per-packet rate times these bytes is its byte rate. */
double offload_packet_bytes(const scn_scenario *s, wire_transport t);

/* Network costs the variant puts on the host and its engines. 0, or
 * SIM_EINVAL with a message in d when a field its options need is absent
 * (a scenario the loader did not check). */
int offload_net_costs(const scn_scenario *s, const scn_variant *v, double freq_Hz,
		      offload_costs *out, diag *d, diag *notes);

/* The storage read path of the variant. 0 or SIM_EINVAL as above. */
int offload_storage_path(const scn_scenario *s, const scn_variant *v, double freq_Hz,
			 offload_storage *out, diag *d, diag *notes);

#endif
