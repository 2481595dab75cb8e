/* dpusim calibrate's fit of each kind of profile (calib_run.h): network
 * alpha-beta per transport, host TCP and AES-GCM costs, the ring
 * all-reduce, storage, the CPU clock, GPU GEMM throughput. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/units.h"
#include "sim/err.h"
#include "tools/calib_run.h"

/* ---- network: alpha-beta per transport ---- */

/* Fits time = alpha + beta * bytes to a latency series (ping-pong half
 * round trips). Returns true with *ab set when the fit ran. */
static bool fit_latency(cal_run *r, series *s, const char *what, cal_ab *ab, char *src,
			size_t srclen)
{
	double rel[CAL_MAX_POINTS];
	char a[96], be[96], span[64], curve[96], bw[32], half[32];
	int rc = cal_fit_alpha_beta(s->bytes, s->typ, s->n, ab, rel);
	s->used = true;
	printf("%s (%s, %u rank%s, %s), %s:\n", s->b0->name, s->b0->transport, s->b0->ranks,
	       s->b0->ranks == 1 ? "" : "s", what, cal_fmt_span(s, span, sizeof span));
	if (rc) {
		printf("    no fit: %s\n", s->n < 2 ? "fewer than 2 sizes" : "degenerate points");
		snprintf(src, srclen, "%s: %s cannot be fitted (%s)", r->files[s->file].origin,
			 s->b0->name, s->n < 2 ? "fewer than 2 sizes" : "degenerate points");
		return false;
	}
	cal_fmt_pm(ab->alpha_s, ab->se_alpha_s, s->n, cal_fmt_time, a, sizeof a);
	cal_fmt_pm(ab->beta_s_per_B * 1e9, ab->se_beta_s_per_B * 1e9, s->n, cal_fmt_num, be, sizeof be);
	printf("    alpha = %s, beta = %s ns/B (1/beta = %s)\n", a, be,
	       isnan(ab->bw_Bps) ? "n/a: beta <= 0" : cal_fmt_rate(ab->bw_Bps, bw, sizeof bw));
	if (!isnan(ab->half_bytes))
		printf("    latency regime below %s (alpha = beta * S), bandwidth regime above\n",
		       cal_fmt_bytes(round(ab->half_bytes), half, sizeof half));
	cal_print_residuals(s, rel, &ab->fit);
	snprintf(src, srclen, "dpusim calibrate of %s: alpha + beta*S fitted by weighted least "
		 "squares (relative) to %s (%s) over %s: alpha = %s, beta = %s ns/B; residual "
		 "rms %.1f%%, max %.1f%%", r->files[s->file].origin, s->b0->name, what, span, a, be,
		 ab->fit.rms_rel * 100,
		 ab->fit.max_rel * 100);
	snprintf(curve, sizeof curve, "%.17g + %.17g*x", ab->alpha_s, ab->beta_s_per_B);
	cal_run_plot(r, s, "", s->b0->name, "one-way time (s)", s->typ, curve);
	return true;
}

/* Streaming bandwidth: time per message = bytes / rate = gap + bytes / B. */
static bool fit_stream(cal_run *r, series *s, cal_ab *ab, char *src, size_t srclen)
{
	double t[CAL_MAX_POINTS], rel[CAL_MAX_POINTS];
	char g[96], bw[96], span[64], curve[96];
	for (size_t i = 0; i < s->n; i++)
		t[i] = s->typ[i] > 0 ? s->bytes[i] / s->typ[i] : 0;
	s->used = true;
	printf("%s (%s, streamed, time per message = bytes / rate), %s:\n", s->b0->name,
	       s->b0->transport, cal_fmt_span(s, span, sizeof span));
	if (cal_fit_alpha_beta(s->bytes, t, s->n, ab, rel)) {
		printf("    no fit: %s\n", s->n < 2 ? "fewer than 2 sizes" : "degenerate points");
		snprintf(src, srclen, "%s: %s cannot be fitted", r->files[s->file].origin, s->b0->name);
		return false;
	}
	cal_fmt_pm(ab->alpha_s, ab->se_alpha_s, s->n, cal_fmt_time, g, sizeof g);
	cal_fmt_pm(ab->bw_Bps, ab->se_bw_Bps, s->n, cal_fmt_rate, bw, sizeof bw);
	printf("    per-message gap = %s, asymptotic bandwidth 1/beta = %s\n", g,
	       isnan(ab->bw_Bps) ? "n/a: beta <= 0" : bw);
	cal_print_residuals(s, rel, &ab->fit);
	snprintf(src, srclen, "dpusim calibrate of %s: gap + S/B fitted by weighted least squares "
		 "(relative) to %s over %s (time per message = S / rate): B = %s, gap = %s; "
		 "residual rms %.1f%%, max %.1f%%; an achieved rate, not the line rate",
		 r->files[s->file].origin, s->b0->name, span, bw, g, ab->fit.rms_rel * 100,
		 ab->fit.max_rel * 100);
	snprintf(curve, sizeof curve, "%.17g + %.17g*x", ab->alpha_s, ab->beta_s_per_B);
	cal_run_plot(r, s, "", s->b0->name, "time per message (s)", t, curve);
	return true;
}

static const char *lat_what(const series *s)
{
	return !isnan(s->b0->p50) ? "half round trip, p50 at each size"
				  : "half round trip, mean at each size";
}

/* host-costs.tcp_latency is the host stack's latency on top of the path
 * (docs/profiles.md). With a verbs bench of the same path, that is the
 * difference of the two alphas; with tcp alone (loopback: no wire), the
 * whole tcp alpha, and the source says which. */
static void tcp_latency(cal_run *r, const cal_ab *tcp, const char *tcp_src, const cal_ab *rdma)
{
	char src[3000], d[96];
	if (!rdma) {
		snprintf(src, sizeof src, "%s; the whole one-way time of the tcp path (no verbs bench "
			 "of the same path was given to subtract the wire and NIC)", tcp_src);
		cal_give_or_miss(r, PROFILE_HOST_COSTS, "tcp_latency", tcp->alpha_s, src);
		return;
	}
	double v = tcp->alpha_s - rdma->alpha_s;
	double se = sqrt(tcp->se_alpha_s * tcp->se_alpha_s + rdma->se_alpha_s * rdma->se_alpha_s);
	cal_fmt_pm(v, se, tcp->fit.n + rdma->fit.n, cal_fmt_time, d, sizeof d);
	snprintf(src, sizeof src, "tcp alpha minus rdma_write alpha of the same path = %s; tcp: %s",
		 d, tcp_src);
	cal_give_or_miss(r, PROFILE_HOST_COSTS, "tcp_latency", v, src);
}

void cal_kind_network(cal_run *r)
{
	char src[1400], tsrc[1400];
	cal_ab ab, tcp, rdma;
	bool have_tcp = false, have_rdma = false;
	series *s, *ts = cal_find_series(r, "tcp_lat", "tcp", "s");
	if ((s = cal_find_series(r, "rdma_write_lat", "verbs", "s"))) {
		if ((have_rdma = fit_latency(r, s, lat_what(s), &rdma, src, sizeof src)))
			cal_give_or_miss(r, PROFILE_NIC, "rdma_latency", rdma.alpha_s, src);
		else
			cal_miss(r, PROFILE_NIC, "rdma_latency", src);
	}
	if ((s = cal_find_series(r, "rdma_write_bw", "verbs", "B/s"))) {
		if (fit_stream(r, s, &ab, src, sizeof src))
			cal_give_or_miss(r, PROFILE_NIC, "port_rate", ab.bw_Bps, src);
		else
			cal_miss(r, PROFILE_NIC, "port_rate", src);
	}
	/* SEND/RECV (perftest's ib_send_*): fitted and noted; the profile's
	 * rdma_latency and port_rate are the RDMA WRITE figures above. */
	if ((s = cal_find_series(r, "rdma_send_lat", "verbs", "s")) &&
	    fit_latency(r, s, lat_what(s), &ab, src, sizeof src))
		cal_doc_comment(cal_doc_of(r, PROFILE_NIC), "send/recv latency: %s", src);
	if ((s = cal_find_series(r, "rdma_send_bw", "verbs", "B/s")) &&
	    fit_stream(r, s, &ab, src, sizeof src))
		cal_doc_comment(cal_doc_of(r, PROFILE_NIC), "send/recv stream: %s", src);
	if (ts && (have_tcp = fit_latency(r, ts, lat_what(ts), &tcp, tsrc, sizeof tsrc)))
		tcp_latency(r, &tcp, tsrc, have_rdma && rdma.alpha_s > 0 ? &rdma : NULL);
	else if (ts)
		cal_miss(r, PROFILE_HOST_COSTS, "tcp_latency", tsrc);
	if ((s = cal_find_series(r, "tcp_bw", "tcp", "B/s")) && fit_stream(r, s, &ab, src, sizeof src))
		cal_doc_comment(cal_doc_of(r, PROFILE_HOST_COSTS), "tcp stream: %s", src);
}

/* ---- host CPU: the TCP path and AES-GCM ---- */

/* Fits cycles per message of a tcp_cpu_tx|rx series; *c_pkt and *c_byte. */
static bool fit_tcp_cpu(cal_run *r, series *s, cal_lin *f, char *src, size_t srclen)
{
	double y[CAL_MAX_POINTS], rel[CAL_MAX_POINTS];
	char p0[96], p1[96], span[64], curve[160];
	const char *unit0 = r->mtu_bytes > 0 ? "cycles/packet" : "cycles/message";
	for (size_t i = 0; i < s->n; i++)
		y[i] = s->typ[i] * s->bytes[i];
	s->used = true;
	printf("%s (cycles per message = c0 * %s + c1 * bytes), %s:\n", s->b0->name,
	       r->mtu_bytes > 0 ? "ceil(bytes / mtu)" : "1", cal_fmt_span(s, span, sizeof span));
	if (cal_fit_cost(s->bytes, y, s->n, r->mtu_bytes, f, rel)) {
		printf("    no fit: %s\n", s->n < 2 ? "fewer than 2 sizes" : "degenerate points");
		snprintf(src, srclen, "%s: %s cannot be fitted", r->files[s->file].origin, s->b0->name);
		return false;
	}
	cal_fmt_pm(f->p0, f->se0, s->n, cal_fmt_num, p0, sizeof p0);
	cal_fmt_pm(f->p1, f->se1, s->n, cal_fmt_num, p1, sizeof p1);
	printf("    c0 = %s %s, c1 = %s cycles/byte\n", p0, unit0, p1);
	cal_print_residuals(s, rel, f);
	snprintf(src, srclen, "dpusim calibrate of %s: CPU time x cpu_hz per message "
		 "of %s over %s, fitted as c0 %s + c1 x bytes by weighted least squares "
		 "(relative): c1 = %s cycles/byte, c0 = %s %s%s%.0f B; residual rms %.1f%%, "
		 "max %.1f%%", r->files[s->file].origin, s->b0->name, span,
		 r->mtu_bytes > 0 ? "x packets" : "per message", p1, p0, unit0,
		 r->mtu_bytes > 0 ? ", mtu " : "", r->mtu_bytes > 0 ? r->mtu_bytes : 0.0,
		 f->rms_rel * 100, f->max_rel * 100);
	if (r->mtu_bytes > 0)
		snprintf(curve, sizeof curve, "%.17g*ceil(x/%.17g) + %.17g*x", f->p0, r->mtu_bytes,
			 f->p1);
	else
		snprintf(curve, sizeof curve, "%.17g + %.17g*x", f->p0, f->p1);
	cal_run_plot(r, s, "", s->b0->name, "CPU cycles per message", y, curve);
	return true;
}

static void per_packet(cal_run *r, const cal_lin *tx, const cal_lin *rx, bool both)
{
	char why[1400], pm[96];
	if (!both) {
		cal_miss(r, PROFILE_HOST_COSTS, "tcp_cycles_per_packet",
		     "needs both tcp_cpu_tx and tcp_cpu_rx fitted");
		return;
	}
	double c = (tx->p0 + rx->p0) / 2, se = sqrt(tx->se0 * tx->se0 + rx->se0 * rx->se0) / 2;
	cal_fmt_pm(c, se, tx->n + rx->n, cal_fmt_num, pm, sizeof pm);
	if (r->mtu_bytes <= 0) {
		snprintf(why, sizeof why, "dpusim calibrate measured %s cycles per message (mean of "
			 "send and receive sides); a per-packet cost needs the path's MTU: rerun with "
			 "--mtu BYTES", pm);
		cal_miss(r, PROFILE_HOST_COSTS, "tcp_cycles_per_packet", why);
		cal_miss(r, PROFILE_HOST_COSTS, "mtu", "not in the bench report; give --mtu BYTES");
		return;
	}
	snprintf(why, sizeof why, "dpusim calibrate of %s: mean of the send and receive sides' "
		 "per-packet coefficients (fits of tcp_cpu_tx and tcp_cpu_rx, mtu %.0f B): %s "
		 "cycles/packet", r->files[0].origin, r->mtu_bytes, pm);
	cal_give_or_miss(r, PROFILE_HOST_COSTS, "tcp_cycles_per_packet", c, why);
	snprintf(why, sizeof why, "--mtu %.0f given to dpusim calibrate: the MTU of the path the "
		 "bench in %s ran over", r->mtu_bytes, r->files[0].path);
	cal_give_or_miss(r, PROFILE_HOST_COSTS, "mtu", r->mtu_bytes, why);
}

void cal_kind_tcp_cpu(cal_run *r)
{
	char src[1400];
	cal_lin tx, rx;
	bool have_tx = false, have_rx = false;
	series *s;
	if ((s = cal_find_series(r, "tcp_cpu_tx", "tcp", "cycles/B"))) {
		if ((have_tx = fit_tcp_cpu(r, s, &tx, src, sizeof src)))
			cal_give_or_miss(r, PROFILE_HOST_COSTS, "tcp_tx_cycles_per_byte", tx.p1, src);
		else
			cal_miss(r, PROFILE_HOST_COSTS, "tcp_tx_cycles_per_byte", src);
	}
	if ((s = cal_find_series(r, "tcp_cpu_rx", "tcp", "cycles/B"))) {
		if ((have_rx = fit_tcp_cpu(r, s, &rx, src, sizeof src)))
			cal_give_or_miss(r, PROFILE_HOST_COSTS, "tcp_rx_cycles_per_byte", rx.p1, src);
		else
			cal_miss(r, PROFILE_HOST_COSTS, "tcp_rx_cycles_per_byte", src);
		cal_miss(r, PROFILE_HOST_COSTS, "tcp_rx_bw_per_core", "the CPU clock is known, so the "
		     "cost is given as tcp_rx_cycles_per_byte");
	}
	if (have_tx || have_rx)
		per_packet(r, &tx, &rx, have_tx && have_rx);
}

/* AES-GCM: cycles per call = cpu_hz * bytes / rate = c_call + c_byte * bytes. */
void cal_kind_crypto(cal_run *r)
{
	series *s = cal_find_series(r, "aes_gcm_encrypt_bw", "crypto", "B/s");
	const bench_file *f;
	double y[CAL_MAX_POINTS], rel[CAL_MAX_POINTS];
	char src[1400], pm[96], call[96], span[64], curve[96];
	cal_lin fit;
	if (!s)
		return;
	s->used = true;
	f = &r->files[s->file];
	if (isnan(f->hz)) {
		cal_miss(r, PROFILE_HOST_COSTS, "aes_gcm_cycles_per_byte",
		     "the bench report gives no cpu_hz to turn AES-GCM throughput into cycles");
		return;
	}
	for (size_t i = 0; i < s->n; i++)
		y[i] = f->hz * s->bytes[i] / s->typ[i];
	printf("%s (one core, cycles per call = cpu_hz x bytes / rate), %s:\n", s->b0->name,
	       cal_fmt_span(s, span, sizeof span));
	if (cal_fit_line(s->bytes, y, s->n, &fit, rel)) {
		printf("    no fit: fewer than 2 sizes\n");
		cal_miss(r, PROFILE_HOST_COSTS, "aes_gcm_cycles_per_byte", "fewer than 2 AES-GCM sizes "
		     "in the bench report: per-call and per-byte costs cannot be separated");
		return;
	}
	cal_fmt_pm(fit.p1, fit.se1, s->n, cal_fmt_num, pm, sizeof pm);
	cal_fmt_pm(fit.p0, fit.se0, s->n, cal_fmt_num, call, sizeof call);
	printf("    %s cycles/byte, %s cycles per call\n", pm, call);
	cal_print_residuals(s, rel, &fit);
	snprintf(src, sizeof src, "dpusim calibrate of %s: AES-256-GCM encryption (OpenSSL EVP, one "
		 "core) over %s at cpu_hz %.4g GHz (%s), cycles per call fitted as c_call + c_byte x "
		 "bytes: c_byte = %s cycles/byte, c_call = %s cycles", f->origin, span, f->hz / 1e9,
		 f->hz_src ? f->hz_src : "source not stated", pm, call);
	cal_give_or_miss(r, PROFILE_HOST_COSTS, "aes_gcm_cycles_per_byte", fit.p1, src);
	snprintf(curve, sizeof curve, "%.17g + %.17g*x", fit.p0, fit.p1);
	cal_run_plot(r, s, "", s->b0->name, "cycles per call", y, curve);
}

/* ---- the ring all-reduce ---- */

/* --effective-ring: the host-tcp costs that make the simulator's ring
 * reproduce the measured ring, contention and all: tcp_latency = the ring's
 * per-step alpha, tcp_rx_cycles_per_byte = cpu_hz / B (one connection moves
 * a core's worth of its receive cost: B). The send-side cost is inside B:
 * it is given as 0, not left out, since the model takes a missing send
 * cost to be the receive side's (offload.c), which made a node's stack
 * cores carry every byte twice and the simulated ring take 2 S/B (a lab
 * loop's 16 MiB: 300.9 ms against the fit's 150.5). The per-packet cost is
 * inside B too; missing adds nothing, so it is listed as missing. Sources
 * say these are effective figures, not the stack's costs. */
static void effective_ring(cal_run *r, const series *s, const cal_ring *rg, const char *a,
			   const char *bw)
{
	const bench_file *f = &r->files[s->file];
	char src[1600], why[400];
	r->effective_done = true;
	snprintf(why, sizeof why, "--effective-ring: the ring all-reduce's B (%s per link) "
		 "already holds the whole per-byte cost", bw);
	snprintf(src, sizeof src, "EFFECTIVE (dpusim calibrate --effective-ring) from the ring "
		 "all-reduce of %s over %u ranks: per-step alpha = %s, fitted to T(S) = 2(n-1) alpha "
		 "+ 2(n-1)/n S/B; includes the ranks' synchronisation and any sharing of cores, so "
		 "it predicts collectives on this setup, not the host stack's own latency",
		 f->origin, rg->ranks, a);
	cal_give_or_miss(r, PROFILE_HOST_COSTS, "tcp_latency", rg->alpha_s, src);
	if (isnan(f->hz)) {
		cal_miss(r, PROFILE_HOST_COSTS, "tcp_rx_cycles_per_byte", "--effective-ring needs the "
		     "bench report's cpu_hz to turn B into cycles");
		return;
	}
	snprintf(src, sizeof src, "EFFECTIVE (dpusim calibrate --effective-ring) from the ring "
		 "all-reduce of %s over %u ranks: cpu_hz %.4g GHz / B (%s per link); every per-byte "
		 "cost of a ring step on this setup, not the receive copy path alone", f->origin,
		 rg->ranks, f->hz / 1e9, bw);
	cal_give_or_miss(r, PROFILE_HOST_COSTS, "tcp_rx_cycles_per_byte", f->hz * rg->beta_s_per_B, src);
	snprintf(src, sizeof src, "EFFECTIVE (dpusim calibrate --effective-ring): 0, the ring "
		 "all-reduce's B (%s per link) in tcp_rx_cycles_per_byte holds the send side's cost "
		 "too (left out, the model would take the receive side's cost again for it)", bw);
	cal_give_or_miss(r, PROFILE_HOST_COSTS, "tcp_tx_cycles_per_byte", 0, src);
	cal_miss(r, PROFILE_HOST_COSTS, "tcp_cycles_per_packet", why);
}

/* Calls fit(r, s) for every series s named `name` (its first n characters
 * when n > 0) in `unit`, each marked used. */
static void each_series(cal_run *r, const char *name, size_t n, const char *unit,
			void (*fit)(cal_run *, series *))
{
	for (size_t i = 0; i < r->ns; i++) {
		series *s = &r->s[i];
		if ((n ? strncmp(s->b0->name, name, n) : strcmp(s->b0->name, name)) ||
		    strcmp(s->b0->unit, unit))
			continue;
		s->used = true;
		fit(r, s);
	}
}

static void fit_ring_series(cal_run *r, series *s)
{
	double rel[CAL_MAX_POINTS], t[CAL_MAX_POINTS];
	char a[96], bw[96], span[64], curve[96], title[96];
	cal_ring rg;
	printf("%s (%s, %u ranks), %s:\n", s->b0->name, s->b0->transport, s->b0->ranks,
	       cal_fmt_span(s, span, sizeof span));
	if (cal_fit_ring(s->bytes, s->typ, s->n, s->b0->ranks, &rg, rel)) {
		printf("    no fit: %s\n", s->n < 2 ? "fewer than 2 sizes" : "degenerate points");
		return;
	}
	cal_fmt_pm(rg.alpha_s, rg.se_alpha_s, s->n, cal_fmt_time, a, sizeof a);
	cal_fmt_pm(rg.bw_Bps, rg.se_bw_Bps, s->n, cal_fmt_rate, bw, sizeof bw);
	printf("    T(S) = 2(n-1) alpha + 2(n-1)/n S/B: alpha = %s per step, B = %s per link\n",
	       a, bw);
	cal_print_residuals(s, rel, &rg.fit);
	cal_doc_comment(cal_doc_of(r, strcmp(s->b0->transport, "tcp") ? PROFILE_NIC : PROFILE_HOST_COSTS),
			"ring all-reduce over %s, %u ranks, %s: effective alpha = %s per step, "
			"B = %s per link (residual rms %.1f%%, max %.1f%%)",
			s->b0->transport, s->b0->ranks, span, a, bw, rg.fit.rms_rel * 100,
			rg.fit.max_rel * 100);
	for (size_t k = 0; k < s->n; k++)
		t[k] = s->bytes[k] / s->typ[k] * 2.0 * (s->b0->ranks - 1) / s->b0->ranks;
	snprintf(curve, sizeof curve, "%.17g + %.17g*x", rg.fit.p0, rg.fit.p1);
	snprintf(title, sizeof title, "ring all-reduce over %s, %u ranks", s->b0->transport,
		 s->b0->ranks);
	cal_run_plot(r, s, s->b0->transport, title, "time (s)", t, curve);
	if (r->effective_ring && !strcmp(s->b0->transport, "tcp"))
		effective_ring(r, s, &rg, a, bw);
}

void cal_kind_ring(cal_run *r)
{
	each_series(r, "allreduce_ring_busbw", 0, "B/s", fit_ring_series);
}

/* ---- storage: alpha-beta over read sizes ---- */

/* Points (bytes, seconds per read): 4 KiB random reads (p50 latency) and
 * sequential reads (bytes / rate). */
static size_t storage_points(cal_run *r, series *st, rep_benchmark *b0)
{
	series *lat = cal_find_series(r, "storage_read_lat", "storage", "s");
	series *bw = cal_find_series(r, "storage_read_bw", "storage", "B/s");
	*st = (series){ .b0 = b0, .file = lat ? lat->file : bw ? bw->file : 0 };
	*b0 = (rep_benchmark){ .name = "storage_read", .transport = "storage", .unit = "s",
			       .p50 = NAN, .ranks = 1 };
	for (size_t i = 0; lat && i < lat->n && st->n < CAL_MAX_POINTS; i++, st->n++)
		st->bytes[st->n] = lat->bytes[i], st->typ[st->n] = lat->typ[i];
	for (size_t i = 0; bw && i < bw->n && st->n < CAL_MAX_POINTS; i++, st->n++)
		st->bytes[st->n] = bw->bytes[i], st->typ[st->n] = bw->bytes[i] / bw->typ[i];
	if (lat)
		lat->used = true;
	if (bw)
		bw->used = true;
	return st->n;
}

void cal_kind_storage(cal_run *r)
{
	series st, *iops = cal_find_series(r, "storage_read_iops_qd16", "storage", "op/s");
	rep_benchmark b0;
	char src[1400];
	cal_ab ab;
	if (storage_points(r, &st, &b0)) {
		if (fit_latency(r, &st, "p50 of 4 KiB random reads, time per sequential read", &ab,
				src, sizeof src)) {
			cal_give_or_miss(r, PROFILE_STORAGE, "io_latency", ab.alpha_s, src);
			cal_give_or_miss(r, PROFILE_STORAGE, "bw", ab.bw_Bps, src);
		} else {
			cal_miss(r, PROFILE_STORAGE, "io_latency", src);
			cal_miss(r, PROFILE_STORAGE, "bw", src);
		}
	}
	if (iops) {
		iops->used = true;
		snprintf(src, sizeof src, "dpusim-hw bench in %s: random %.0f B O_DIRECT reads through "
			 "io_uring at queue depth 16, %llu reads: %.4g IOPS (one measurement, no error "
			 "estimate)", r->files[iops->file].origin, iops->bytes[0],
			 (unsigned long long)iops->b0->iters, iops->typ[iops->n - 1]);
		cal_give_or_miss(r, PROFILE_STORAGE, "iops", iops->typ[iops->n - 1], src);
	}
	if (r->doc[PROFILE_STORAGE])
		cal_doc_comment(r->doc[PROFILE_STORAGE], "one local device read by dpusim-hw bench "
				"(--dir), not a storage server: use it for a node-local data set");
}

/* ---- CPU clock ---- */

void cal_kind_cpu(cal_run *r)
{
	const bench_file *f = &r->files[0];
	series *mc = cal_find_series(r, "memcpy_bw", "cpu", "B/s");
	char src[1000];
	if (isnan(f->hz))
		return;
	snprintf(src, sizeof src, "cpu_hz reported by dpusim-hw bench in %s, read from %s (one reading "
		 "at the bench's start, no error estimate); every cycles figure of the companion "
		 "host-costs profile was converted with it",
		 f->origin, f->hz_src ? f->hz_src : "a source it does not state");
	cal_give_or_miss(r, PROFILE_CPU, "freq", f->hz, src);
	if (mc) {
		mc->used = true;
		snprintf(src, sizeof src, "dpusim-hw bench measures one core's memcpy (%.4g GB/s over "
			 "%.0f MiB), not the socket's memory bandwidth", mc->typ[mc->n - 1] / 1e9,
			 mc->bytes[mc->n - 1] / 1048576);
		cal_miss(r, PROFILE_CPU, "mem_bw", src);
	}
}

/* ---- GPU: saturating GEMM throughput ---- */

/* GEMM benchmarks give bytes = n*n*element size; the work is 2 n^3. */
static void gemm_flops(const series *s, double *F)
{
	double elt = strstr(s->b0->name, "bf16") || strstr(s->b0->name, "fp16") ? 2 : 4;
	for (size_t i = 0; i < s->n; i++) {
		double n = round(sqrt(s->bytes[i] / elt));
		F[i] = 2 * n * n * n;
	}
}

static void gpu_profile(cal_run *r, const series *s, const cal_sat *sat, const char *fit)
{
	char src[1600], pk[32];
	if (strcmp(s->b0->name, "gemm_bf16"))
		return;
	if (isnan(r->peak_flops)) {
		printf("    (no gpu profile: eff_max = ymax / peak needs --peak-flops RATE)\n");
		return;
	}
	snprintf(pk, sizeof pk, "%.4g TFLOP/s", r->peak_flops / 1e12);
	snprintf(src, sizeof src, "--peak-flops %s given to dpusim calibrate (the device's "
		 "published dense BF16 peak)", pk);
	cal_give_or_miss(r, PROFILE_GPU, "peak_bf16_flops", r->peak_flops, src);
	snprintf(src, sizeof src, "%s; eff_max = ymax / %s = %.4g +- %.2g", fit, pk,
		 sat->ymax / r->peak_flops, sat->se_ymax / r->peak_flops);
	cal_give_or_miss(r, PROFILE_GPU, "eff_max", sat->ymax / r->peak_flops, src);
	cal_give_or_miss(r, PROFILE_GPU, "eff_half_flops", sat->f_half, fit);
}

static void fit_gemm_series(cal_run *r, series *s)
{
	double F[CAL_MAX_POINTS], rel[CAL_MAX_POINTS];
	char span[64], ym[96], fh[96], fit[1200], curve[128];
	cal_sat sat;
	gemm_flops(s, F);
	snprintf(span, sizeof span, "%zu sizes n = %.0f..%.0f", s->n, cbrt(F[0] / 2),
		 cbrt(F[s->n - 1] / 2));
	printf("%s (%s, square GEMMs, F = 2 n^3), %s:\n", s->b0->name,
	       s->b0->device ? s->b0->device : "GPU", span);
	if (cal_fit_saturating(F, s->typ, s->n, &sat, rel)) {
		printf("    no fit: %s\n", s->n < 2 ? "fewer than 2 sizes" : "the solver did not "
		       "converge (the points do not saturate)");
		return;
	}
	snprintf(ym, sizeof ym, "%.4g TFLOP/s +- %.2g", sat.ymax / 1e12, sat.se_ymax / 1e12);
	snprintf(fh, sizeof fh, "%.4g GFLOP +- %.2g", sat.f_half / 1e9, sat.se_f_half / 1e9);
	printf("    y = ymax F / (F + F_half): ymax = %s, F_half = %s (%zu iterations)\n", ym,
	       fh, sat.iters);
	cal_print_residuals(s, rel, &(cal_lin){ .n = sat.n, .dof = sat.dof,
					    .rms_rel = sat.rms_rel, .max_rel = sat.max_rel });
	snprintf(fit, sizeof fit, "dpusim calibrate of %s: %s on %s over %s, ymax F / (F + "
		 "F_half) fitted by nonlinear least squares (GSL multifit_nlinear, relative "
		 "weights): ymax = %s, F_half = %s; residual rms %.1f%%, max %.1f%%",
		 r->files[s->file].origin, s->b0->name, s->b0->device ? s->b0->device : "GPU",
		 span, ym, fh, sat.rms_rel * 100, sat.max_rel * 100);
	gpu_profile(r, s, &sat, fit);
	snprintf(curve, sizeof curve, "%.17g*x/(x+%.17g)", sat.ymax, sat.f_half);
	if (r->plot_dir) {
		series fs = *s;
		memcpy(fs.bytes, F, s->n * sizeof *F);
		cal_run_plot(r, &fs, "", s->b0->name, "FLOP/s", s->typ, curve);
	}
}

void cal_kind_gpu(cal_run *r)
{
	each_series(r, "gemm", 4, "FLOP/s", fit_gemm_series);
}

