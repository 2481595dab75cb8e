/* backend-hw/pci: the ConnectX/BlueField id table and sysfs id parsing. */
#include <check.h>
#include <stdlib.h>

#include "backend-hw/pci.h"
#include "sim/err.h"
#include "tests/unit/check_main.h"

START_TEST(known_parts)
{
	/* Ids from the mlx5 driver's table (drivers/net/ethernet/mellanox/mlx5/core/main.c). */
	const hw_pci_id *cx6 = hw_pci_lookup(0x15b3, 0x101b);
	const hw_pci_id *cx7 = hw_pci_lookup(0x15b3, 0x1021);
	const hw_pci_id *bf2 = hw_pci_lookup(0x15b3, 0xa2d6);
	const hw_pci_id *bf3 = hw_pci_lookup(0x15b3, 0xa2dc);
	ck_assert_ptr_nonnull(cx6);
	ck_assert_ptr_nonnull(cx7);
	ck_assert_ptr_nonnull(bf2);
	ck_assert_ptr_nonnull(bf3);
	ck_assert_int_eq(cx6->family, HW_PCI_CONNECTX6);
	ck_assert_int_eq(cx7->family, HW_PCI_CONNECTX7);
	ck_assert_int_eq(bf2->family, HW_PCI_BLUEFIELD2);
	ck_assert_int_eq(bf3->family, HW_PCI_BLUEFIELD3);
	ck_assert(hw_pci_is_dpu(bf2->family) && hw_pci_is_dpu(bf3->family));
	ck_assert(!hw_pci_is_dpu(cx6->family) && !hw_pci_is_dpu(cx7->family));
	ck_assert_str_eq(hw_pci_family_name(bf3->family), "BlueField-3");
	ck_assert_str_eq(hw_pci_family_name(cx7->family), "ConnectX-7");
	ck_assert_str_eq(cx6->name, "ConnectX-6");
}
END_TEST

START_TEST(variants_and_vfs)
{
	const hw_pci_id *dx = hw_pci_lookup(0x15b3, 0x101d), *vf = hw_pci_lookup(0x15b3, 0x101c);
	ck_assert_int_eq(dx->family, HW_PCI_CONNECTX6);
	ck_assert(!dx->is_vf);
	ck_assert_int_eq(vf->family, HW_PCI_CONNECTX6);
	ck_assert(vf->is_vf);
}
END_TEST

START_TEST(unknown_parts)
{
	ck_assert_ptr_null(hw_pci_lookup(0x8086, 0x101b));  /* right device id, wrong vendor */
	ck_assert_ptr_null(hw_pci_lookup(0x15b3, 0x1003));  /* ConnectX-3: mlx4, not in the table */
	ck_assert_str_eq(hw_pci_family_name(HW_PCI_OTHER), "other");
}
END_TEST

START_TEST(parse_sysfs_ids)
{
	uint16_t v = 0;
	ck_assert_int_eq(hw_pci_parse_id("0x15b3\n", &v), 0);
	ck_assert_uint_eq(v, 0x15b3);
	ck_assert_int_eq(hw_pci_parse_id("0xA2DC", &v), 0);
	ck_assert_uint_eq(v, 0xa2dc);
	ck_assert_int_eq(hw_pci_parse_id("15b3", &v), SIM_EPARSE);
	ck_assert_int_eq(hw_pci_parse_id("0x", &v), SIM_EPARSE);
	ck_assert_int_eq(hw_pci_parse_id("0x-5", &v), SIM_EPARSE);
	ck_assert_int_eq(hw_pci_parse_id("0x10000", &v), SIM_EPARSE);
	ck_assert_int_eq(hw_pci_parse_id("0x15b3 junk", &v), SIM_EPARSE);
	ck_assert_int_eq(hw_pci_parse_id(NULL, &v), SIM_EPARSE);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hw_pci");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, known_parts);
	tcase_add_test(tc, variants_and_vfs);
	tcase_add_test(tc, unknown_parts);
	tcase_add_test(tc, parse_sysfs_ids);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
