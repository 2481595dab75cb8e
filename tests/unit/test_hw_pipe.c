/* backend-hw/pipe: a pipeline stage's waits split into the pipeline bubble
 * and the transfer as the simulator splits them, on a scripted transport
 * and clock (no MPI, no network). */
#include <check.h>
#include <stdlib.h>

#include "backend-hw/gemm.h"
#include "backend-hw/pipe.h"
#include "backend-hw/xport.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

/* The clock pipe.c reads (bench.c's in dpusim-hw): advanced by the fake
 * transport alone, so every figure below is exact. */
static double fake_now;
double hw_now_s(void);
double hw_now_s(void)
{
	return fake_now;
}

/* pipe.c's ping-pong waits at a barrier (comm.c, MPI): nothing to wait for. */
void hw_comm_barrier(void);
void hw_comm_barrier(void)
{
}

/* A stage 1 of 2 whose left neighbour's activations arrive after
 * wait_s[i] (the i-th receive); a send alone takes 0.1 ms. */
static const double *wait_s;
static unsigned received, sent;

static int fake_xfer(hw_xport *x, int slink, const void *sbuf, size_t sbytes, int rlink,
		     void *rbuf, size_t rbytes)
{
	(void)x, (void)sbuf, (void)sbytes;
	sent += slink != HW_NOLINK;
	if (rlink == HW_NOLINK) {
		fake_now += 1e-4;
		return 0;
	}
	fake_now += wait_s[received];
	hw_pipe_fill(rbuf, rbytes, 0, received++, true);
	return 0;
}

static void fake_free(hw_xport *x)
{
	(void)x;
}

static const hw_xport_ops fake_ops = { .name = "fake", .xfer = fake_xfer, .free = fake_free };

/* 1F1B on the last of 2 stages, 2 microbatches: F0 B0 F1 B1. It receives
 * before F0 (alone) and before F1 (with B0's gradient going left), and
 * sends B1's gradient at the end. With one message alone taking 1 ms, a
 * 5 ms wait is 4 ms of bubble (the neighbour was still computing) and 1 ms
 * of transfer; a 0.4 ms wait is all transfer. */
START_TEST(waits_split_into_bubble_and_transfer)
{
	static const double waits[] = { 5e-3, 0.4e-3 };
	hw_xport x = { .ops = &fake_ops, .rank = 1, .size = 2, .peer = { 0, 0 },
		       .max_msg = 4096 };
	hw_pipe p = { .stages = 2, .microbatches = 2, .stage = 1, .msg_bytes = 4096,
		      .alone_s = 1e-3 };
	hw_pipe_count c = { 0 };
	hw_gemm *g = NULL;
	char order[64];
	wait_s = waits, received = sent = 0, fake_now = 100;
	ck_assert_int_eq(hw_gemm_open("cpu", 16, &g), 0);
	ck_assert_int_eq(hw_pipe_init(&p), 0);
	ck_assert_int_eq(hw_pipe_iteration(&p, &x, g, &c, order, sizeof order), 0);
	ck_assert_str_eq(order, "F0 B0 F1 B1");
	ck_assert(received == 2 && sent == 2);
	ck_assert(c.fwd_recv == 2 && c.bwd_sent == 2 && c.bad == 0);
	ck_assert_double_eq_tol(c.p2p_s, 5e-3 + 0.4e-3 + 1e-4, 1e-12);
	ck_assert_double_eq_tol(c.bubble_s, 4e-3, 1e-12);
	/* with no alone time known, every wait is bubble but sends */
	p.alone_s = 0, received = 0, c = (hw_pipe_count){ 0 };
	ck_assert_int_eq(hw_pipe_iteration(&p, &x, g, &c, NULL, 0), 0);
	ck_assert_double_eq_tol(c.bubble_s, 5e-3 + 0.4e-3, 1e-12);
	hw_pipe_release(&p);
	hw_gemm_close(g);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hw_pipe");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, waits_split_into_bubble_and_transfer);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
