/* models/stor: node-local NVMe reads into GPU memory against hand-computed
 * bounds, and the published GPUDirect Storage figures of a DGX-2. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/profile.h"
#include "models/setup.h"
#include "models/stor.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

#define MiB (1024.0 * 1024)
#define GiB (1024.0 * MiB)

/* A DGX-2 as the NVIDIA GPUDirect Storage Benchmarking and Configuration
 * Guide (4.1) describes it: two sockets, two PCIe trees per socket, four
 * V100 GPUs and two Micron 9200 PRO drives per tree (its lspci listing and
 * GPU-to-NVMe affinity table). Figures:
 * - drives: models/profiles/Micron-9200-PRO.yaml (read, PCIe Gen3 x4);
 * - GPU link: V100 SXM3, PCIe Gen3 x16 (NVIDIA Tesla V100 datasheet, "PCIe
 *   Gen3 ... 32 GB/s" both ways), per direction from setup_pcie_Bps;
 * - tree uplink: ASSUMPTION Gen3 x16 (the guide does not give its width);
 *   on no binding path below: 15.75 GB/s against 7.0 GB/s of drives;
 * - between sockets and through the root complex: NCCL's topology model,
 *   NVIDIA/nccl src/graph/topo.h (the 2.2x releases): SKL_QPI_BW 10.0 GB/s
 *   for Skylake, and INTEL_P2P_OVERHEAD(bw) = bw * 6 / 5 ("Intel CPU
 *   convert GPU P2P traffic into 64B PCI TLPs, so GPU to GPU traffic
 *   consumes more PCI bandwidth"). No published figure was found for the
 *   Skylake-SP root complex's own peer-to-peer forwarding rate. */
static stor_local dgx2(void)
{
	diag *d = diag_new();
	profile *p = NULL;
	int rc = profile_load("models/profiles/Micron-9200-PRO.yaml", &p, d);
	if (rc)
		diag_print(d, stderr);
	ck_assert_int_eq(rc, SIM_OK);
	const profile_storage *m = &profile_get_values(p)->storage;
	stor_local c = {
		.drives = 2, .drive_read_Bps = m->bw_Bps,
		.drive_link_Bps = setup_pcie_Bps(m->pcie_gen, m->pcie_lanes),
		.switches = 4, .gpus_per_switch = 4, .switches_per_socket = 2,
		.drive_switch = 0, .gpu_link_Bps = setup_pcie_Bps(3, 16),
		.uplink_Bps = setup_pcie_Bps(3, 16), .socket_Bps = 10e9, .p2p_overhead = 6.0 / 5,
	};
	profile_free(p);
	diag_free(d);
	return c;
}

static double gdsio(const stor_local *c, uint32_t gpu, stor_xfer x)
{
	double Bps;
	ck_assert_int_eq(stor_gdsio(c, gpu, x, 8, MiB, 400, &Bps), SIM_OK);
	return Bps;
}

/* Same switch: two drives at min(3.5 GB/s, Gen3 x4 3.94 GB/s) = 7.0 GB/s,
 * the GPU link (15.75 GB/s) wide enough. */
START_TEST(same_switch_is_the_drives)
{
	stor_local c = dgx2();
	ck_assert_double_eq_tol(c.drive_link_Bps, 4 * 8e9 * 128 / 130 / 8, 1);
	ck_assert_double_eq_tol(gdsio(&c, 2, STOR_XFER_GDS), 2 * 3.5e9, 1e3);
}
END_TEST

/* Off the switch: staged in GPU 0 then copied through the root complexes
 * and the socket link, min(15.75, 10) / 1.2 = 8.33 GB/s; each thread
 * reads then copies, so the drives idle while all eight copy: below both
 * 7.0 GB/s and 8.33 GB/s, above 8 MiB / (8 MiB / 7.0 + 8 MiB / 8.33)
 * (the two stages never overlapping at all) = 3.80 GB/s. */
START_TEST(off_switch_is_staged_and_copied)
{
	stor_local c = dgx2();
	double x = gdsio(&c, 12, STOR_XFER_GDS), p2p = 10e9 / 1.2;
	ck_assert(x < 7.0e9);
	ck_assert(x > 1 / (1 / 7.0e9 + 1 / p2p));
	/* Same socket, other tree: the uplink, not the socket link, bounds
	 * the copy (15.75 / 1.2 = 13.1 GB/s), so it is no slower. */
	ck_assert(gdsio(&c, 4, STOR_XFER_GDS) >= x);
}
END_TEST

/* The bounce buffer passes host memory twice: at 10 GB/s of host memory
 * reads cannot beat 10 / 2 = 5 GB/s; the drives (7.0 GB/s) can. */
START_TEST(bounce_buffer_passes_memory_twice)
{
	stor_local c = dgx2();
	c.host_mem_Bps = 10e9;
	double x = gdsio(&c, 2, STOR_XFER_BOUNCE);
	ck_assert(x <= 5e9 * 1.0001);
	ck_assert(x > 0.9 * 5e9);
	ck_assert(gdsio(&c, 2, STOR_XFER_GDS) > x);
	c.host_mem_Bps = 0; /* unbounded memory: the drives again */
	ck_assert(gdsio(&c, 2, STOR_XFER_BOUNCE) > 0.95 * 7.0e9);
}
END_TEST

/* Validation against NVIDIA GPUDirect Storage Benchmarking and
 * Configuration Guide, 5.1 (DGX-2): gdsio -D /nvme23/gds_dir -w 8 -s 500M
 * -i 1M -x 0 -I 0 on a RAID0 of nvme2 + nvme3 (first tree): with GPU 2 on
 * the drives' switch, "Throughput: 6.524658 GiB/sec"; with GPU 12 (other
 * socket), "Throughput: 3.893747 GiB/sec". Tolerance 15 %. The first is
 * reproduced; the second is a KNOWN MISS: the model's only cited bounds on
 * the copy through the root complexes (NCCL's 10 GB/s socket link and its
 * 6/5 TLP overhead) leave it well above the measurement, and no published
 * Skylake-SP root-complex peer-to-peer rate was found. Nothing is tuned to
 * close it; when a cited figure enters the model this assertion flips and
 * docs/scenarios.md must say so. (Threads started together would stay in
 * lock step in the fluid model, all reading then all copying, and give
 * 3.54 GiB/s, -9 %: an artefact, not a cited bound; stor_gdsio starts them
 * out of phase.) */
START_TEST(published_dgx2_gds)
{
	stor_local c = dgx2();
	double same = gdsio(&c, 2, STOR_XFER_GDS) / GiB, off = gdsio(&c, 12, STOR_XFER_GDS) / GiB;
	double e_same = same / 6.524658 - 1, e_off = off / 3.893747 - 1;
	printf("GDS DGX-2 same switch: %.3f GiB/s vs 6.52 published (%+.1f%%)\n", same,
	       100 * e_same);
	printf("GDS DGX-2 off switch:  %.3f GiB/s vs 3.89 published (%+.1f%%, known miss)\n", off,
	       100 * e_off);
	ck_assert(fabs(e_same) <= 0.15);
	ck_assert(e_off > 0.15);
	ck_assert(off < same); /* the direction holds */
}
END_TEST

START_TEST(bad_input_is_refused)
{
	stor_local c = dgx2();
	double x;
	ck_assert_int_eq(stor_gdsio(&c, 16, STOR_XFER_GDS, 8, MiB, 1, &x), SIM_EINVAL);
	ck_assert_int_eq(stor_gdsio(&c, 0, STOR_XFER_GDS, 0, MiB, 1, &x), SIM_EINVAL);
	c.p2p_overhead = 0.5;
	ck_assert_int_eq(stor_gdsio(&c, 0, STOR_XFER_GDS, 8, MiB, 1, &x), SIM_EINVAL);
	c = dgx2();
	c.drive_switch = 4;
	ck_assert_int_eq(stor_gdsio(&c, 0, STOR_XFER_GDS, 8, MiB, 1, &x), SIM_EINVAL);
	/* Sizes and times the engine cannot count are refused, not cast
	 * (undefined: llround of 1e20, of 1e10 s in picoseconds); threads
	 * started past the clock too. */
	c = dgx2();
	ck_assert_int_eq(stor_gdsio(&c, 0, STOR_XFER_GDS, 8, 1e20, 1, &x), SIM_ERANGE);
	c.io_lat_s = 1e10;
	ck_assert_int_eq(stor_gdsio(&c, 0, STOR_XFER_GDS, 8, MiB, 1, &x), SIM_EOVERFLOW);
	c = dgx2();
	c.drive_read_Bps = c.drive_link_Bps = 1e-6;
	ck_assert_int_eq(stor_gdsio(&c, 0, STOR_XFER_GDS, 8, MiB, 1, &x), SIM_EOVERFLOW);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("stor");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, same_switch_is_the_drives);
	tcase_add_test(tc, off_switch_is_staged_and_copied);
	tcase_add_test(tc, bounce_buffer_passes_memory_twice);
	tcase_add_test(tc, published_dgx2_gds);
	tcase_add_test(tc, bad_input_is_refused);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
