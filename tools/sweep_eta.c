/* A sweep's time left (sweep_eta.h). */
#include "tools/sweep_eta.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_fit.h>

#include "sim/err.h"
#include "tools/human.h"
#include "tools/progress.h"

static double job_work(const scn_workload *wl)
{
	switch (wl->kind) {
	case SCN_WL_TRAINING: {
		const scn_training *t = &wl->train;
		return (double)wl->gpus * fmax(t->iterations, 1) *
		       (fmax(t->microbatches, 1) * fmax(t->vp, 1) + fmax(t->dp, 1));
	}
	case SCN_WL_COLLECTIVE: {
		const scn_collective *c = &wl->coll;
		int ranks = c->ranks > 0 ? c->ranks : wl->gpus;
		return (double)fmax(ranks, 1) * fmax((double)c->nsizes, 1) * fmax(c->iterations, 1);
	}
	case SCN_WL_P2P:
		return fmax(wl->p2p.qps, 1) * fmax((double)wl->p2p.nsizes, 1) *
		       fmax(wl->p2p.iterations, 1);
	}
	return 1;
}

double sweep_point_work(const scn_scenario *p)
{
	double w = 0;
	for (size_t i = 0; i < p->nvariants; i++) {
		const scn_scenario *vs;
		const scn_variant *v;
		scn_variant_view(p, i, &vs, &v);
		for (size_t j = 0; j < vs->njobs; j++)
			w += job_work(&vs->jobs[j].wl);
	}
	w *= fmax(p->replications, 1);
	return fmax(w, 1);
}

double sweep_eta_exponent(const double *work, const double *took, size_t n)
{
	double *x = malloc((n ? n : 1) * sizeof *x), *y = malloc((n ? n : 1) * sizeof *y);
	double c0, c1, cov00, cov01, cov11, sumsq, alpha = 1, lo = INFINITY, hi = -INFINITY;
	size_t m = 0;
	if (!x || !y) {
		free(x);
		free(y);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (!(work[i] > 0) || !(took[i] > 0) || !isfinite(work[i]) || !isfinite(took[i]))
			continue;
		x[m] = log(work[i]);
		y[m] = log(took[i]);
		lo = fmin(lo, x[m]);
		hi = fmax(hi, x[m]);
		m++;
	}
	/* sizes closer than ETA_SPREAD fit their noise, not a growth */
	if (m >= 2 && hi - lo >= log(ETA_SPREAD) &&
	    gsl_fit_linear(x, 1, y, 1, m, &c0, &c1, &cov00, &cov01, &cov11, &sumsq) == 0 &&
	    isfinite(c1))
		alpha = fmin(fmax(c1, ETA_ALPHA_MIN), ETA_ALPHA_MAX);
	free(x);
	free(y);
	return alpha;
}

int sweep_eta_init(sweep_eta *e, size_t n, unsigned par)
{
	size_t k = n ? n : 1;
	*e = (sweep_eta){ .n = n, .par = par ? par : 1, .work = calloc(k, sizeof *e->work),
			  .start_s = malloc(k * sizeof *e->start_s),
			  .took_s = malloc(k * sizeof *e->took_s), .over = calloc(k, sizeof *e->over) };
	if (!e->work || !e->start_s || !e->took_s || !e->over) {
		sweep_eta_free(e);
		return SIM_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		e->start_s[i] = e->took_s[i] = NAN;
	return 0;
}

void sweep_eta_free(sweep_eta *e)
{
	free(e->work);
	free(e->start_s);
	free(e->took_s);
	free(e->over);
	*e = (sweep_eta){ 0 };
}

void sweep_eta_start(sweep_eta *e, size_t k, double now)
{
	if (k < e->n)
		e->start_s[k] = now;
}

void sweep_eta_end(sweep_eta *e, size_t k, double now, bool stored)
{
	if (k >= e->n)
		return;
	e->over[k] = true;
	if (stored && isfinite(e->start_s[k]))
		e->took_s[k] = fmax(now - e->start_s[k], 0);
}

double sweep_eta_left_s(const sweep_eta *e, double now)
{
	double alpha = sweep_eta_exponent(e->work, e->took_s, e->n), wsum = 0, tsum = 0, a, left = 0;
	size_t open = 0;
	for (size_t k = 0; k < e->n; k++) {
		if (isfinite(e->took_s[k]) && e->work[k] > 0) {
			wsum += pow(e->work[k], alpha);
			tsum += e->took_s[k];
		}
		open += !e->over[k];
	}
	if (open == 0)
		return 0;
	if (!(wsum > 0))
		return -1;
	a = tsum / wsum;
	/* a point running longer than predicted says the scale is larger */
	for (size_t k = 0; k < e->n; k++)
		if (!e->over[k] && isfinite(e->start_s[k]))
			a = fmax(a, (now - e->start_s[k]) / pow(fmax(e->work[k], 1), alpha));
	for (size_t k = 0; k < e->n; k++) {
		double t;
		if (e->over[k])
			continue;
		t = a * pow(fmax(e->work[k], 1), alpha);
		if (isfinite(e->start_s[k]))
			t = fmax(t - (now - e->start_s[k]), 0);
		left += t;
	}
	return left / (double)(open < e->par ? open : e->par);
}

void sweep_eta_text(const sweep_eta *e, double elapsed_s, double now, char *buf, size_t n)
{
	char el[32];
	double left = e && e->n ? sweep_eta_left_s(e, now) : -1;
	int k = snprintf(buf, n, "%s elapsed", hum_duration(el, sizeof el, elapsed_s));
	if (k >= 0 && (size_t)k < n)
		progress_left_text(buf + k, n - (size_t)k, left);
}
