/* Calibration fits (GSL): latency/bandwidth (alpha-beta) lines, host CPU
 * cost per message and per byte, the ring all-reduce's effective alpha and
 * beta, and the GPU's saturating throughput curve. Pure numerics: no files,
 * no printing; `dpusim calibrate` (cmd_calibrate.c) turns them into
 * profiles. */
#ifndef DPUSIM_TOOLS_CALIB_H
#define DPUSIM_TOOLS_CALIB_H

#include <stddef.h>
#include <stdint.h>

/* The most points one fit takes (a size sweep is a few dozen at most). */
#define CAL_MAX_POINTS 256

/* A fit of y = p0 * u(x) + p1 * x by weighted least squares, u(x) = 1 for a
 * straight line. Weights are 1 / y^2 (relative errors; see calib.c), and
 * the standard errors are scaled by the reduced chi-square, so they estimate
 * the uncertainty from the scatter actually seen. */
typedef struct cal_lin {
	double p0, p1;     /* intercept (or per-unit coefficient) and slope */
	double se0, se1;   /* standard errors; NAN when dof == 0 */
	double cov01;      /* covariance of p0 and p1; NAN when dof == 0 */
	size_t n;          /* points */
	size_t dof;        /* degrees of freedom, n - 2 */
	double rms_rel;    /* root mean square of the relative residuals */
	double max_rel;    /* largest |relative residual| */
} cal_lin;

/* Latency and inverse bandwidth: time = alpha + beta * bytes (Hockney). */
typedef struct cal_ab {
	cal_lin fit;           /* p0 = alpha, p1 = beta */
	double alpha_s, se_alpha_s;
	double beta_s_per_B, se_beta_s_per_B;
	double bw_Bps, se_bw_Bps;  /* 1 / beta, its error by the delta method */
	double half_bytes;     /* alpha / beta: below it latency dominates, above it bandwidth */
} cal_ab;

/* The ring all-reduce's effective per-step latency and per-link inverse
 * bandwidth, from time(S) = 2(n-1) alpha + 2(n-1)/n S beta. */
typedef struct cal_ring {
	cal_lin fit;           /* time = p0 + p1 * bytes */
	uint32_t ranks;
	double alpha_s, se_alpha_s;          /* per ring step */
	double beta_s_per_B, se_beta_s_per_B; /* per byte on one link */
	double bw_Bps, se_bw_Bps;            /* 1 / beta */
} cal_ring;

/* A saturating curve y = ymax * f / (f + f_half). */
typedef struct cal_sat {
	double ymax, se_ymax;
	double f_half, se_f_half;  /* f at which y is ymax / 2 */
	size_t n, dof;
	double rms_rel, max_rel;
	size_t iters;              /* solver iterations */
} cal_sat;

/* y = p0 + p1 * x over n points. rel (may be NULL) gets n relative
 * residuals (fit - y) / y. 0, or SIM_EINVAL: n < 2, n > CAL_MAX_POINTS, a y
 * that is not finite and > 0, an x not finite, or all x equal (the slope is
 * undetermined). */
int cal_fit_line(const double *x, const double *y, size_t n, cal_lin *out, double *rel);

/* alpha and beta from (bytes, time_s) points, as cal_fit_line. The fit is
 * returned even when alpha or beta comes out negative (a noisy or
 * non-linear sweep); callers judge it. */
int cal_fit_alpha_beta(const double *bytes, const double *time_s, size_t n, cal_ab *out,
		       double *rel);

/* Host CPU cost of one message: cycles = c_pkt * ceil(bytes / mtu) +
 * c_byte * bytes when mtu_bytes > 0 (out->p0 = c_pkt, p1 = c_byte), or
 * c_msg + c_byte * bytes when mtu_bytes == 0 (p0 = c_msg). cycles[i] is the
 * cost of one message of bytes[i]. Errors as cal_fit_line, and SIM_EINVAL
 * for a negative or non-finite mtu. */
int cal_fit_cost(const double *bytes, const double *cycles, size_t n, double mtu_bytes,
		 cal_lin *out, double *rel);

/* The ring's alpha and beta from nccl-tests style bus bandwidths over
 * sizes (busbw = bytes / time * 2(n-1)/n) with `ranks` >= 2 ranks. rel gets
 * the residuals in time. Errors as cal_fit_line, SIM_EINVAL for ranks < 2. */
int cal_fit_ring(const double *bytes, const double *busbw_Bps, size_t n, uint32_t ranks,
		 cal_ring *out, double *rel);

/* ymax and f_half by nonlinear least squares (gsl_multifit_nlinear,
 * Levenberg-Marquardt, relative weights). Both are fitted in log form, so
 * they stay positive. 0; SIM_EINVAL for n < 2, n > CAL_MAX_POINTS, a value
 * not finite and > 0, or fewer than 2 distinct f; SIM_ERANGE when the
 * solver does not converge. */
int cal_fit_saturating(const double *f, const double *y, size_t n, cal_sat *out, double *rel);

#endif
