/* models/offload: one row per offload option, what each needs and costs. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/offload.h"
#include "models/setup.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"
#include "tests/unit/fixture.h"

/* Host: 2 x 56 cores at 2.0 GHz (Xeon-8480C); host costs: AES-GCM 0.64
 * cycles/byte, TCP receive 8.553 GB/s per core (host-costs-linux). */
#define CLUSTER(NIC)                                                 \
	"cluster:\n"                                                 \
	"  nodes: 2\n"                                               \
	"  gpus_per_node: 8\n"                                       \
	"  gpu: H100-SXM5\n"                                         \
	"  cpu: Xeon-8480C\n"                                        \
	"  host_costs: host-costs-linux\n"                           \
	"  nic: " NIC "\n"                                           \
	"  nics_per_node: 4\n"                                       \
	"  storage: { server: DDN-AI400X2, servers: 1 }\n"          \
	"  fabric: { topology: single-switch, switch: { profile: QM9700-NDR, latency: 130ns } }\n" \
	"workload: { model: llama2-7b, parallelism: { tp: 8 }, batch: { global: 16, micro: 2 } }\n"

#define CX7_CRYPTO "{ profile: ConnectX-7-NDR, rdma_latency: 0.6us, inline_crypto: true, " \
		   "inline_crypto_bw: 100Gbps }"

/* Every word of every kind is one row, of that kind and value, and names
 * itself back. */
START_TEST(a_row_per_word)
{
	for (int k = 0; k < OFFLOAD_NKINDS; k++) {
		const char *const *w = offload_words((offload_kind)k);
		ck_assert_str_eq(offload_kind_names()[k], offload_kind_name((offload_kind)k));
		for (int i = 0; w[i]; i++) {
			scn_variant v = { .network = 0 };
			const offload_row *r;
			if (k == OFFLOAD_NETWORK) v.network = (scn_network)i;
			if (k == OFFLOAD_STORAGE) v.storage = (scn_storage_path)i;
			if (k == OFFLOAD_CRYPTO) v.crypto = (scn_crypto)i;
			if (k == OFFLOAD_VSWITCH) v.vswitch = (scn_vswitch)i;
			r = offload_row_of(&v, (offload_kind)k);
			ck_assert_int_eq(r->kind, k);
			ck_assert_int_eq(r->value, i);
			ck_assert_int_eq(offload_value(&v, (offload_kind)k), i);
			ck_assert_str_eq(offload_word((offload_kind)k, i), w[i]);
		}
	}
	ck_assert_str_eq(offload_word(OFFLOAD_CRYPTO, 99), "?");
}
END_TEST

/* The NIC's inline engine bounds the node's traffic at its rate times the
 * node's NICs (4 x 100 Gb/s = 50 GB/s) and costs no host core. */
START_TEST(nic_inline_caps_the_node_at_its_nics)
{
	diag *d = diag_new();
	scn_scenario *s = fx_load_into(CLUSTER(CX7_CRYPTO) "variants: [{ name: n, network: rdma, "
			       "crypto: nic-inline }]\n", d);
	offload_costs c;
	ck_assert_int_eq(offload_net_costs(s, &s->variants[0], 2.0e9, &c, d, NULL), SIM_OK);
	ck_assert_double_eq_tol(c.engine_cap_Bps, 4 * 100e9 / 8, 1);
	ck_assert(!c.engine_on_dpu); /* the NIC's engine: no DPU utilisation */
	ck_assert_str_eq(c.engine_what, "NIC inline crypto engine");
	ck_assert_double_eq(c.total_core_s_per_byte, 0);
	ck_assert_double_eq(c.total_tx_core_s_per_byte, 0);
	scn_free(s);
	diag_free(d);
}
END_TEST

/* SNAP runs on every DPU of the node, each on its own rail: 4 BlueField-3s
 * at 50 GB/s and 2 MIOPS each serve 200 GB/s and 8 MIOPS a node (one DPU's
 * figures until December 2026, and its IOPS bounded nothing). */
START_TEST(snap_engines_are_every_dpus)
{
	diag *d = diag_new();
	scn_scenario *s = fx_load_into(CLUSTER("{ profile: ConnectX-7-NDR, rdma_latency: 0.6us }")
				       "variants: [{ name: s, network: rdma, storage: dpu-snap, cluster: "
				       "{ dpus_per_node: 4, dpu: { profile: BlueField-3, snap_bw: 50GB/s, "
				       "snap_iops: 2MIOPS } } }]\n", d);
	const scn_scenario *vs;
	const scn_variant *v;
	offload_storage st;
	scn_variant_view(s, 0, &vs, &v);
	ck_assert_int_eq(offload_storage_path(vs, v, 2.0e9, &st, d, NULL), SIM_OK);
	ck_assert_double_eq_tol(st.engine_Bps, 4 * 50e9, 1);
	ck_assert_double_eq_tol(st.engine_iops, 4 * 2e6, 1e-6);
	scn_free(s);
	diag_free(d);
}
END_TEST

/* Host AES-GCM costs 0.64 cycles a byte at 2.0 GHz on both sides, on the
 * network and on NFS reads through the kernel stack; the NIC's engine
 * costs the reads nothing. */
START_TEST(host_crypto_costs_cores_nic_inline_none)
{
	diag *d = diag_new();
	scn_scenario *s = fx_load_into(CLUSTER(CX7_CRYPTO) "variants:\n"
			       "  - { name: h, network: host-tcp, crypto: host }\n"
			       "  - { name: n, network: host-tcp, crypto: nic-inline }\n", d);
	offload_costs c[2];
	offload_storage st[2];
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(offload_net_costs(s, &s->variants[i], 2.0e9, &c[i], d, NULL), SIM_OK);
		ck_assert_int_eq(offload_storage_path(s, &s->variants[i], 2.0e9, &st[i], d, NULL),
				 SIM_OK);
		ck_assert(st[i].kernel_stack && !st[i].direct);
	}
	ck_assert_double_eq_tol(c[0].crypto_core_s_per_byte, 0.64 / 2.0e9, 1e-18);
	ck_assert_double_eq_tol(c[0].total_core_s_per_byte - c[1].total_core_s_per_byte,
				0.64 / 2.0e9, 1e-18);
	ck_assert_double_eq(c[1].crypto_core_s_per_byte, 0);
	ck_assert_double_eq_tol(st[0].core_s_per_byte - st[1].core_s_per_byte, 0.64 / 2.0e9, 1e-18);
	scn_free(s);
	diag_free(d);
}
END_TEST

/* A send cost of 0 is that, not a missing one: a missing send cost is
 * taken to be the receive side's (an upper bound, said in the notes), so
 * the node's stack cores carry each byte in and out at the receive cost,
 * half the bytes a second that a send cost of 0 gives (what an effective
 * profile, whose receive figure holds both sides, must give). */
START_TEST(a_zero_send_cost_is_not_missing)
{
	diag *d = diag_new(), *notes = diag_new();
	scn_scenario *s = fx_load_into(CLUSTER("ConnectX-6-HDR")
				       "variants: [{ name: t, network: host-tcp }]\n", d);
	profile_host_costs *hc = &s->cluster.host_costs.v.host;
	offload_costs missing, zero;
	hc->tcp_rx_cycles_per_byte = 4.0;
	hc->tcp_tx_cycles_per_byte = NAN;
	ck_assert_int_eq(offload_net_costs(s, &s->variants[0], 2.0e9, &missing, d, notes), SIM_OK);
	ck_assert(fx_has_msg(notes, "ASSUMPTION send-side CPU cost taken as the receive"));
	ck_assert_double_eq_tol(missing.total_tx_core_s_per_byte, 2e-9, 1e-21);
	hc->tcp_tx_cycles_per_byte = 0;
	ck_assert_int_eq(offload_net_costs(s, &s->variants[0], 2.0e9, &zero, d, NULL), SIM_OK);
	ck_assert_double_eq(zero.total_tx_core_s_per_byte, 0);
	ck_assert_double_eq_tol(zero.total_core_s_per_byte, 2e-9, 1e-21);
	ck_assert_double_eq_tol(setup_stack_cap_Bps(&missing, 1), 0.5e9, 1);
	ck_assert_double_eq_tol(setup_stack_cap_Bps(&zero, 1), 1e9, 1);
	scn_free(s);
	diag_free(d);
	diag_free(notes);
}
END_TEST

/* A scenario changed after the loader checked it (a field an option needs
 * taken away) is refused, naming the field, not costed with a NaN. */
START_TEST(a_field_taken_away_is_refused)
{
	diag *d = diag_new();
	scn_scenario *s = fx_load_into(CLUSTER(CX7_CRYPTO) "variants: [{ name: n, network: rdma, "
			       "crypto: nic-inline }]\n", d);
	offload_costs c;
	s->cluster.nic.v.nic.inline_crypto_bw_Bps = NAN;
	ck_assert_int_eq(offload_net_costs(s, &s->variants[0], 2.0e9, &c, d, NULL), SIM_EINVAL);
	ck_assert(fx_has_msg(d, "variant 'n' (crypto: nic-inline) needs 'inline_crypto_bw' of "
			  "profile 'ConnectX-7-NDR'"));
	scn_free(s);
	diag_free(d);
}
END_TEST

/* The loader asks for the engine's rate once, where the variant names the
 * option, and refuses the option on a NIC whose profile has no engine. */
START_TEST(the_loader_checks_nic_inline)
{
	/* ConnectX-7's latency is unpublished: given, as every transport needs it. */
	const char *no_rate = CLUSTER("{ profile: ConnectX-7-NDR, rdma_latency: 0.6us }")
		"variants: [{ name: n, network: rdma, crypto: nic-inline }]\n";
	const char *no_engine = CLUSTER("ConnectX-6-HDR")
		"variants: [{ name: n, network: rdma, crypto: nic-inline }]\n";
	diag *d = diag_new();
	scn_scenario *s = NULL;
	ck_assert_int_eq(scn_load_buffer("t.yaml", no_rate, strlen(no_rate), NULL, &s, d),
			 SIM_EPARSE);
	ck_assert_uint_eq(diag_count(d), 1);
	ck_assert(fx_has_msg(d, "t.yaml:12:46: variant 'n' (crypto: nic-inline) needs "
			  "'inline_crypto_bw' of nic profile 'ConnectX-7-NDR'"));
	diag_free(d);
	d = diag_new();
	ck_assert_int_eq(scn_load_buffer("t.yaml", no_engine, strlen(no_engine), NULL, &s, d),
			 SIM_EPARSE);
	ck_assert_uint_eq(diag_count(d), 1);
	ck_assert(fx_has_msg(d, "t.yaml:12:46: variant 'n' has crypto: nic-inline, but NIC "
			  "'ConnectX-6-HDR' has no inline crypto engine"));
	diag_free(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("offload");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, a_row_per_word);
	tcase_add_test(tc, nic_inline_caps_the_node_at_its_nics);
	tcase_add_test(tc, snap_engines_are_every_dpus);
	tcase_add_test(tc, host_crypto_costs_cores_nic_inline_none);
	tcase_add_test(tc, a_zero_send_cost_is_not_missing);
	tcase_add_test(tc, a_field_taken_away_is_refused);
	tcase_add_test(tc, the_loader_checks_nic_inline);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
