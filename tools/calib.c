/* Calibration fits with GSL: weighted straight lines (gsl_fit_wlinear), the
 * two-regressor cost model (gsl_multifit_wlinear) and the saturating GPU
 * curve (gsl_multifit_nlinear).
 *
 * Weights. Every fit here weighs point i by 1 / y_i^2, i.e. it minimises the
 * sum of squared RELATIVE residuals (y_i from the points on the first pass,
 * from the fitted curve afterwards: see reweigh()). Timing noise on a real machine
 * (scheduler preemption, interrupts, clock granularity, cache state) grows
 * with the time measured, so sigma_i is closer to proportional to y_i than
 * constant; and a size sweep spans four to seven decades. Unweighted least
 * squares would let the largest messages decide both parameters: an 8-byte
 * latency of 2 us would be a rounding error next to a 32 MiB transfer of
 * 3 ms, and alpha would come out as whatever the big points' noise leaves
 * (often negative). With relative weights a 5% miss at 8 bytes counts as
 * much as a 5% miss at 32 MiB, which is the error the simulator's users see.
 *
 * Uncertainty. The weights fix only the relative size of the errors, not
 * their scale, so the covariance GSL returns (which assumes w = 1/sigma^2
 * exactly) is multiplied by the reduced chi-square chisq / (n - p): the
 * common relative noise is estimated from the scatter of the points. With
 * no degrees of freedom left, no uncertainty is claimed (NAN). */
#include "tools/calib.h"

#include <math.h>
#include <stdbool.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multifit_nlinear.h>

#include "sim/err.h"

static int check_points(const double *x, const double *y, size_t n)
{
	bool distinct = false;
	if (!x || !y || n < 2 || n > CAL_MAX_POINTS)
		return SIM_EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(y[i]) || !(y[i] > 0))
			return SIM_EINVAL;
		distinct |= x[i] != x[0];
	}
	return distinct ? SIM_OK : SIM_EINVAL;
}

/* Relative residuals of a fitted model m[i] against y[i]: rms, max, copy. */
static void residuals(const double *m, const double *y, size_t n, double *rms, double *max,
		      double *rel)
{
	double ss = 0, mx = 0;
	for (size_t i = 0; i < n; i++) {
		double r = (m[i] - y[i]) / y[i];
		ss += r * r;
		mx = fabs(r) > mx ? fabs(r) : mx;
		if (rel)
			rel[i] = r;
	}
	*rms = sqrt(ss / (double)n);
	*max = mx;
}

/* Standard errors from a covariance scaled by the reduced chi-square. */
static void set_errors(cal_lin *o, double c00, double c01, double c11, double chisq)
{
	double s = o->dof ? chisq / (double)o->dof : NAN;
	o->se0 = o->dof ? sqrt(c00 * s) : NAN;
	o->se1 = o->dof ? sqrt(c11 * s) : NAN;
	o->cov01 = o->dof ? c01 * s : NAN;
}

/* Relative weights from the model, not from the points: 1 / y_i^2 taken
 * from the noisy y_i itself favours the points that happened to come out
 * low, which biases the fit downwards (by about a fifth of a standard error
 * at 5% noise). So the first pass weighs by the points and two more passes
 * reweigh by the fitted values (iteratively reweighted least squares); a
 * model value that is not positive keeps the point's own weight. */
static void reweigh(double *w, const double *m, const double *y, size_t n)
{
	for (size_t i = 0; i < n; i++)
		w[i] = m[i] > 0 ? 1 / (m[i] * m[i]) : 1 / (y[i] * y[i]);
}

#define CAL_PASSES 3

int cal_fit_line(const double *x, const double *y, size_t n, cal_lin *out, double *rel)
{
	double w[CAL_MAX_POINTS], m[CAL_MAX_POINTS], c0 = 0, c1 = 0, c00 = 0, c01 = 0, c11 = 0;
	double chisq = 0;
	int rc = check_points(x, y, n), g = 0;
	gsl_error_handler_t *old;
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++)
		w[i] = 1 / (y[i] * y[i]);
	old = gsl_set_error_handler_off();
	for (int pass = 0; pass < CAL_PASSES && !g; pass++) {
		g = gsl_fit_wlinear(x, 1, w, 1, y, 1, n, &c0, &c1, &c00, &c01, &c11, &chisq);
		for (size_t i = 0; i < n; i++)
			m[i] = c0 + c1 * x[i];
		if (pass + 1 < CAL_PASSES)
			reweigh(w, m, y, n);
	}
	gsl_set_error_handler(old);
	if (g || !isfinite(c0) || !isfinite(c1))
		return SIM_EINVAL;
	*out = (cal_lin){ .p0 = c0, .p1 = c1, .n = n, .dof = n - 2 };
	set_errors(out, c00, c01, c11, chisq);
	residuals(m, y, n, &out->rms_rel, &out->max_rel, rel);
	return SIM_OK;
}

int cal_fit_alpha_beta(const double *bytes, const double *time_s, size_t n, cal_ab *out,
		       double *rel)
{
	cal_lin f;
	int rc = cal_fit_line(bytes, time_s, n, &f, rel);
	if (rc)
		return rc;
	*out = (cal_ab){ .fit = f, .alpha_s = f.p0, .se_alpha_s = f.se0, .beta_s_per_B = f.p1,
			 .se_beta_s_per_B = f.se1 };
	/* 1/beta and alpha/beta only mean something for a positive slope. */
	out->bw_Bps = f.p1 > 0 ? 1 / f.p1 : NAN;
	out->se_bw_Bps = f.p1 > 0 ? f.se1 / (f.p1 * f.p1) : NAN;
	out->half_bytes = f.p1 > 0 && f.p0 > 0 ? f.p0 / f.p1 : NAN;
	return SIM_OK;
}

/* y = p0 * ceil(x / mtu) + p1 * x with gsl_multifit_wlinear. */
static int fit_packets(const double *x, const double *y, size_t n, double mtu, cal_lin *out,
		       double *rel)
{
	gsl_matrix *X = gsl_matrix_alloc(n, 2), *cov = gsl_matrix_alloc(2, 2);
	gsl_vector *w = gsl_vector_alloc(n), *yv = gsl_vector_alloc(n), *c = gsl_vector_alloc(2);
	gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(n, 2);
	double chisq = 0, m[CAL_MAX_POINTS];
	int rc = SIM_ENOMEM;
	if (X && cov && w && yv && c && ws) {
		for (size_t i = 0; i < n; i++) {
			gsl_matrix_set(X, i, 0, ceil(x[i] / mtu));
			gsl_matrix_set(X, i, 1, x[i]);
			gsl_vector_set(w, i, 1 / (y[i] * y[i]));
			gsl_vector_set(yv, i, y[i]);
		}
		rc = SIM_OK;
	}
	for (int pass = 0; pass < CAL_PASSES && !rc; pass++) {
		if (gsl_multifit_wlinear(X, w, yv, c, cov, &chisq, ws))
			rc = SIM_EINVAL;
		for (size_t i = 0; i < n && !rc; i++) {
			double mi = gsl_vector_get(c, 0) * ceil(x[i] / mtu) + gsl_vector_get(c, 1) * x[i];
			gsl_vector_set(w, i, 1 / ((mi > 0 ? mi : y[i]) * (mi > 0 ? mi : y[i])));
		}
	}
	if (!rc) {
		*out = (cal_lin){ .p0 = gsl_vector_get(c, 0), .p1 = gsl_vector_get(c, 1), .n = n,
				  .dof = n - 2 };
		set_errors(out, gsl_matrix_get(cov, 0, 0), gsl_matrix_get(cov, 0, 1),
			   gsl_matrix_get(cov, 1, 1), chisq);
		for (size_t i = 0; i < n; i++)
			m[i] = out->p0 * ceil(x[i] / mtu) + out->p1 * x[i];
		residuals(m, y, n, &out->rms_rel, &out->max_rel, rel);
		if (!isfinite(out->p0) || !isfinite(out->p1))
			rc = SIM_EINVAL;
	}
	gsl_multifit_linear_free(ws);
	gsl_vector_free(c), gsl_vector_free(yv), gsl_vector_free(w);
	gsl_matrix_free(cov), gsl_matrix_free(X);
	return rc;
}

int cal_fit_cost(const double *bytes, const double *cycles, size_t n, double mtu_bytes,
		 cal_lin *out, double *rel)
{
	gsl_error_handler_t *old;
	int rc;
	if (!isfinite(mtu_bytes) || mtu_bytes < 0)
		return SIM_EINVAL;
	if (mtu_bytes == 0)
		return cal_fit_line(bytes, cycles, n, out, rel);
	if ((rc = check_points(bytes, cycles, n)))
		return rc;
	old = gsl_set_error_handler_off();
	rc = fit_packets(bytes, cycles, n, mtu_bytes, out, rel);
	gsl_set_error_handler(old);
	return rc;
}

int cal_fit_ring(const double *bytes, const double *busbw_Bps, size_t n, uint32_t ranks,
		 cal_ring *out, double *rel)
{
	double t[CAL_MAX_POINTS], steps, share;
	cal_lin f;
	int rc;
	if (ranks < 2 || !busbw_Bps || n > CAL_MAX_POINTS)
		return SIM_EINVAL;
	steps = 2.0 * (ranks - 1);          /* reduce-scatter then all-gather */
	share = steps / ranks;              /* bytes each link carries, per byte of S */
	for (size_t i = 0; i < n; i++)
		t[i] = busbw_Bps[i] > 0 ? bytes[i] * share / busbw_Bps[i] : NAN;
	if ((rc = cal_fit_line(bytes, t, n, &f, rel)))
		return rc;
	*out = (cal_ring){ .fit = f, .ranks = ranks, .alpha_s = f.p0 / steps,
			   .se_alpha_s = f.se0 / steps, .beta_s_per_B = f.p1 / share,
			   .se_beta_s_per_B = f.se1 / share };
	out->bw_Bps = out->beta_s_per_B > 0 ? 1 / out->beta_s_per_B : NAN;
	out->se_bw_Bps = out->beta_s_per_B > 0
				 ? out->se_beta_s_per_B / (out->beta_s_per_B * out->beta_s_per_B)
				 : NAN;
	return SIM_OK;
}

/* ---- the saturating curve ---- */

/* Normalised data: x = f / f_scale, y = y / y_scale; parameters q0 = ln A,
 * q1 = ln h with model A x / (x + h), so both stay positive and of order 1. */
typedef struct sat_data {
	const double *x, *y;
	size_t n;
} sat_data;

static int sat_f(const gsl_vector *q, void *p, gsl_vector *f)
{
	const sat_data *d = p;
	double a = exp(gsl_vector_get(q, 0)), h = exp(gsl_vector_get(q, 1));
	for (size_t i = 0; i < d->n; i++)
		gsl_vector_set(f, i, a * d->x[i] / (d->x[i] + h) - d->y[i]);
	return GSL_SUCCESS;
}

static int sat_df(const gsl_vector *q, void *p, gsl_matrix *J)
{
	const sat_data *d = p;
	double a = exp(gsl_vector_get(q, 0)), h = exp(gsl_vector_get(q, 1));
	for (size_t i = 0; i < d->n; i++) {
		double m = a * d->x[i] / (d->x[i] + h);
		gsl_matrix_set(J, i, 0, m);
		gsl_matrix_set(J, i, 1, -m * h / (d->x[i] + h));
	}
	return GSL_SUCCESS;
}

/* Start: A a little above the largest point, h from each point's own
 * solution of y = A x / (x + h), geometric mean. */
static void sat_start(const sat_data *d, double *q0, double *q1)
{
	double ymax = 0, lsum = 0;
	size_t k = 0;
	for (size_t i = 0; i < d->n; i++)
		ymax = d->y[i] > ymax ? d->y[i] : ymax;
	*q0 = log(1.2 * ymax);
	for (size_t i = 0; i < d->n; i++) {
		double h = d->x[i] * (1.2 * ymax / d->y[i] - 1);
		if (h > 0)
			lsum += log(h), k++;
	}
	*q1 = k ? lsum / (double)k : 0;
}

static int sat_solve(const sat_data *d, const double *wt, double q[2], double cov[2][2],
		     double *chisq, size_t *iters)
{
	gsl_multifit_nlinear_parameters prm = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_fdf fdf = { .f = sat_f, .df = sat_df, .fvv = NULL, .n = d->n, .p = 2,
					 .params = (void *)d };
	gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(
		gsl_multifit_nlinear_trust, &prm, d->n, 2);
	gsl_matrix *C = gsl_matrix_alloc(2, 2);
	gsl_vector_const_view wv = gsl_vector_const_view_array(wt, d->n);
	gsl_vector_view qv = gsl_vector_view_array(q, 2);
	int info = 0, rc = SIM_ENOMEM;
	if (w && C) {
		rc = SIM_ERANGE;
		if (!gsl_multifit_nlinear_winit(&qv.vector, &wv.vector, &fdf, w) &&
		    !gsl_multifit_nlinear_driver(500, 1e-10, 1e-10, 1e-10, NULL, NULL, &info, w) &&
		    !gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, C) &&
		    !gsl_blas_ddot(gsl_multifit_nlinear_residual(w), gsl_multifit_nlinear_residual(w),
				   chisq))
			rc = SIM_OK;
	}
	if (!rc) {
		const gsl_vector *x = gsl_multifit_nlinear_position(w);
		q[0] = gsl_vector_get(x, 0), q[1] = gsl_vector_get(x, 1);
		for (size_t i = 0; i < 4; i++)
			cov[i / 2][i % 2] = gsl_matrix_get(C, i / 2, i % 2);
		*iters = gsl_multifit_nlinear_niter(w);
		if (!isfinite(q[0]) || !isfinite(q[1]))
			rc = SIM_ERANGE;
	}
	gsl_matrix_free(C);
	if (w)
		gsl_multifit_nlinear_free(w);
	return rc;
}

int cal_fit_saturating(const double *f, const double *y, size_t n, cal_sat *out, double *rel)
{
	double x[CAL_MAX_POINTS], yn[CAL_MAX_POINTS], wt[CAL_MAX_POINTS], m[CAL_MAX_POINTS];
	double fs = 0, ys = 0, q[2], cov[2][2], chisq = 0, s;
	size_t iters = 0;
	sat_data d = { .x = x, .y = yn, .n = n };
	gsl_error_handler_t *old;
	int rc = check_points(f, y, n);
	for (size_t i = 0; !rc && i < n; i++)
		rc = f[i] > 0 ? SIM_OK : SIM_EINVAL;
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++)
		fs = f[i] > fs ? f[i] : fs, ys = y[i] > ys ? y[i] : ys;
	for (size_t i = 0; i < n; i++)
		x[i] = f[i] / fs, yn[i] = y[i] / ys, wt[i] = 1 / (yn[i] * yn[i]);
	sat_start(&d, &q[0], &q[1]);
	old = gsl_set_error_handler_off();
	rc = sat_solve(&d, wt, q, cov, &chisq, &iters);
	if (!rc) { /* second pass weighed by the fitted curve, as reweigh() */
		for (size_t i = 0; i < n; i++)
			m[i] = exp(q[0]) * x[i] / (x[i] + exp(q[1]));
		reweigh(wt, m, yn, n);
		rc = sat_solve(&d, wt, q, cov, &chisq, &iters);
	}
	gsl_set_error_handler(old);
	if (rc)
		return rc;
	*out = (cal_sat){ .ymax = exp(q[0]) * ys, .f_half = exp(q[1]) * fs, .n = n, .dof = n - 2,
			  .iters = iters };
	s = out->dof ? chisq / (double)out->dof : NAN;
	out->se_ymax = out->dof ? out->ymax * sqrt(cov[0][0] * s) : NAN;
	out->se_f_half = out->dof ? out->f_half * sqrt(cov[1][1] * s) : NAN;
	for (size_t i = 0; i < n; i++)
		m[i] = out->ymax * f[i] / (f[i] + out->f_half);
	residuals(m, y, n, &out->rms_rel, &out->max_rel, rel);
	return SIM_OK;
}
