/* What the two replays (backend-hw/replay.c: collective scenarios;
 * replay_train.c: training scenarios) share: options, the report's head,
 * writing it. */
#ifndef DPUSIM_HW_REPLAY_H
#define DPUSIM_HW_REPLAY_H

#include "backend-hw/crypt.h"
#include "backend-hw/xport.h"
#include "models/scenario.h"
#include "models/train.h"
#include "report/report.h"

/* The fewest timed calls per size a collective replay takes by default:
 * enough for a median and p10/p90 that one descheduled call cannot move. */
#define HW_REPLAY_MIN_REPS 20

typedef struct replay_opts {
	const char *file, *out, *transport, *mem;
	const char *data;      /* --data DIR, or NULL */
	const char *dir;       /* --dir: the storage replay's files ($TMPDIR or /tmp) */
	const char *compute;   /* --compute cpu|cuda */
	double scale;          /* --scale: fraction of FLOPs and gradient bytes run (0, 1] */
	size_t gemm_n;         /* --gemm-n: GEMM matrix size (0: 256 on cpu, 4096 on cuda) */
	int timeout_ms;
	int start_timeout_ms;  /* --start-timeout; 0: hw_comm_init's default */
	long point;            /* --point I: that sweep point alone; -1: every point */
	int reps;              /* --reps: timed calls per size of a collective scenario;
				  0: the scenario's iterations, at least HW_REPLAY_MIN_REPS */
	/* Set by the command for each sweep point replayed: what messages call
	 * the scenario (the file, or "FILE, sweep point I (LABEL)"), and the
	 * report's scenario.point and info sweep_index / sweep_points (label
	 * NULL when the scenario has no sweep). */
	const char *where;
	const char *point_label;
	size_t point_index, points;
} replay_opts;

/* The scenario network the transport and memory stand for. */
scn_network hw_replay_network(const replay_opts *o);
/* A usage/input error printed once (rank 0, or before MPI starts): returns 2. */
int hw_replay_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A new hw report with the scenario block and the run's common info. */
int hw_replay_report_new(const scn_scenario *s, const replay_opts *o, rep_report **out);
/* The variant's four offload keys. */
int hw_replay_set_offload(rep_variant *rv, const scn_variant *v);
/* Validates r and writes it to o->out (or stdout). 0 or a code (logged). */
int hw_replay_write(const rep_report *r, const replay_opts *o);

/* Whether the training replay can run s on `ranks` ranks with o: 0, or 2
 * with the reason printed (rank 0). Same answer on every rank. */
int hw_replay_train_check(const scn_scenario *s, const replay_opts *o, int ranks);

/* The training replay: s's one training job on these ranks (MPI started,
 * scenario loaded). Exit status: 0; 1 when a GEMM or all-reduce result was
 * wrong; 2 bad input or failure. Every rank returns the same status. */
int hw_replay_train(const scn_scenario *s, const replay_opts *o);

/* Whether the p2p replay (replay_p2p.c) can run s on `ranks` ranks with
 * o: 0, or 2 with the reason printed (rank 0). Same answer on every rank. */
int hw_replay_p2p_check(const scn_scenario *s, const replay_opts *o, int ranks);

/* The p2p replay: perftest's test of s's p2p workload on real verbs
 * between ranks 0 and 1, every variant with its own buffers (rdma: host
 * memory, rdma-gdr: GPU memory where CUDA and a GPU are here, else listed
 * as not replayed), every size's data checked. Exit status 0, 1 (data
 * wrong) or 2, the same on every rank. */
int hw_replay_p2p(const scn_scenario *s, const replay_opts *o);

/* crypto: host: the AES-256-GCM key of a replay, the same on every rank,
 * from the scenario's seed and what it seals (`use`: one key per transport,
 * as nonces are unique per sender and link of one transport only; the
 * replay measures the cipher's cost; the key protects nothing secret).
 * 0 or SIM_EIO. */
int hw_replay_key(uint64_t seed, const char *use, unsigned char key[HW_CRYPT_KEY]);
/* What the cipher cost, summed over the ranks (a collective call). */
typedef struct hw_crypt_cost {
	double cpu_s, bytes, msgs;
} hw_crypt_cost;
void hw_replay_crypto_cost(const hw_crypt *c, hw_crypt_cost *out);
/* Info VARIANT.crypto_*: the measured cost per byte beside the one the
 * scenario's host-costs profile implies. 0 or SIM_ENOMEM. */
int hw_replay_crypto_info(rep_report *r, const scn_scenario *s, const scn_variant *v,
			  const hw_crypt_cost *p);

/* The storage part of a training replay, on every rank at once (a
 * collective call): first the data loader's reads, `samples` samples of
 * sample_bytes from a file of this rank's own in dir (created, written and
 * synced, then dropped from the page cache), in order, once buffered and
 * once with O_DIRECT (the aligned blocks covering each sample), each byte
 * range checked, and with gds through cuFile too; then the checkpoint
 * write, ckpt_bytes to another new file and fsync. Files are unlinked as
 * soon as they are made. Nothing to read or write: 0 samples, 0 bytes. */
typedef struct hw_store_job {
	const char *dir;
	uint64_t samples;
	double sample_bytes;
	double ckpt_bytes;
	bool gds;
} hw_store_job;

typedef struct hw_store_res {
	uint64_t read_bytes;          /* samples x sample_bytes */
	double buffered_s, direct_s;  /* this rank's reads, each way */
	bool direct;                  /* O_DIRECT taken; else direct_why says why */
	char direct_why[160];
	int gds_err;                  /* 0: gds_Bps measured; SIM_EUNSUPPORTED: gds_why */
	double gds_Bps;
	char gds_why[256];
	double ckpt_s;                /* write + fsync */
} hw_store_res;

/* 0, or SIM_EIO, SIM_EVERIFY, SIM_ENOMEM (logged). */
int hw_replay_store(const hw_store_job *j, hw_store_res *r);

/* hw_replay_store's figures over every rank (a collective call): bytes and
 * samples summed, times the slowest rank's, O_DIRECT taken on every loader,
 * cuFile's and the reasons rank 0's. */
typedef struct hw_store_sum {
	uint64_t read_bytes, samples;
	unsigned loaders;
	double buffered_s, direct_s;
	bool direct;
	char direct_why[160];
	double ckpt_bytes, ckpt_s;
	int gds_err;
	double gds_Bps;
	char gds_why[256];
} hw_store_sum;
void hw_replay_store_sum(const hw_store_job *j, const hw_store_res *r, hw_store_sum *out);
/* Info replay.storage_read, replay.storage_model and replay.checkpoint_write:
 * the measured figures beside the simulator's for c (full_bytes: the
 * job's whole checkpoint, train_ckpt_bytes). 0 or SIM_ENOMEM. */
int hw_replay_store_info(rep_report *r, const scn_scenario *s, const train_config *c,
			 const hw_store_job *j, const hw_store_sum *m, double full_bytes,
			 double scale);
/* Variant v's storage path when it is not the host's: gds through cuFile
 * (VARIANT.storage_gds_read_Bps) or VARIANT.storage_not_replayed with the
 * reason. 0 or SIM_ENOMEM. */
int hw_replay_store_variant(rep_report *r, const scn_variant *v, const hw_store_sum *m);

/* The replay's transport (o->transport: tcp or verbs) for messages of up
 * to max_msg bytes, rings of every stride-th rank (1: one ring) or, with
 * block > 1, of block consecutive ranks, or NULL (the error is logged).
 * A collective call. */
hw_xport *hw_replay_transport(const replay_opts *o, size_t max_msg, int stride, int block);

#endif
