/* How long a sweep has left, for its progress lines (issue 14: "an ETA that
 * accounts for points of different sizes"); a plan's finalists and `run
 * --jobs`' variants (of equal work) are such points too.
 *
 * Each point to run gets an estimate of its work from its resolved
 * scenario (sweep_point_work: for training, GPUs x (microbatches x
 * virtual stages + data-parallel ranks) x iterations, summed over variants and
 * replications: the passes, and the data-parallel ring's steps, each
 * crossing its dp ranks, docs/collectives.md). A point's wall time does not
 * grow linearly in that work at scale (bench scale prints the curve: about
 * x5.5 per x4 GPUs at 4,096 to 16,384), so the points answered so far are
 * fitted as time = a x work^alpha, alpha by least squares on the
 * logarithms (gsl_fit_linear) once sizes ETA_SPREAD apart or more have
 * been answered (closer ones fit their noise: a plan's finalists, of about
 * one size, drew alpha to its bound after three), clamped to
 * [ETA_ALPHA_MIN, ETA_ALPHA_MAX], 1 before; a by the ratio of the sums,
 * raised to what a point still running has already taken for its work.
 * The points not answered are predicted from it (a point running less the
 * time it has run, not below 0), and the sum spread over the points
 * computed at once (--jobs, MPI ranks), at most the points left. An
 * estimate, said as "about" in the lines that print it. */
#ifndef DPUSIM_TOOLS_SWEEP_ETA_H
#define DPUSIM_TOOLS_SWEEP_ETA_H

#include <stdbool.h>
#include <stddef.h>

#include "models/scenario.h"

#define ETA_ALPHA_MIN 0.5
#define ETA_ALPHA_MAX 2.0
#define ETA_SPREAD 2.0     /* largest over smallest work answered, to fit alpha */

typedef struct sweep_eta {
	size_t n;          /* points to run, in the sweep's todo order */
	double *work;      /* each one's estimated work (sweep_point_work); 0: none */
	double *start_s;   /* when it was handed out (cli_wall_s); NAN: not yet */
	double *took_s;    /* wall seconds it took when stored; NAN: not stored */
	bool *over;        /* answered: stored, or failed */
	unsigned par;      /* points computed at once (1: serial) */
} sweep_eta;

/* The work of simulating scenario p (a resolved sweep point): per variant
 * (on its own hardware where it has some) and replication, per job,
 * training GPUs x (microbatches x virtual stages + dp) x iterations; a
 * collective ranks x sizes x iterations; a p2p benchmark queue pairs x
 * sizes x iterations. At least 1. */
double sweep_point_work(const scn_scenario *p);

/* The exponent alpha of took = a x work^alpha fitted to the n points given
 * (work > 0 and took > 0 only; others are passed over): 1 when the largest
 * work is less than ETA_SPREAD times the smallest, else the least-squares
 * slope of log(took) on log(work), clamped to [ETA_ALPHA_MIN, ETA_ALPHA_MAX]. */
double sweep_eta_exponent(const double *work, const double *took, size_t n);

/* n points, par computed at once. 0 or SIM_ENOMEM. */
int sweep_eta_init(sweep_eta *e, size_t n, unsigned par);
void sweep_eta_free(sweep_eta *e);

/* Point k (todo order) handed out at now; answered at now, stored or
 * failed (a failed point's time is not fitted). */
void sweep_eta_start(sweep_eta *e, size_t k, double now);
void sweep_eta_end(sweep_eta *e, size_t k, double now, bool stored);

/* Seconds the points not answered still need at now; < 0 while no point
 * has been stored (nothing to scale by), 0 when none is left. */
double sweep_eta_left_s(const sweep_eta *e, double now);

/* "45.2 s elapsed, about 1.1 min left" into buf: elapsed_s, then the time
 * left at now where e (NULL: none) has something to go on and points are
 * left, in no more digits than an estimate has. */
void sweep_eta_text(const sweep_eta *e, double elapsed_s, double now, char *buf, size_t n);

#endif
