/* ConnectX / BlueField PCI id table.
 *
 * Source: the Linux mlx5 driver's id table, mlx5_core_pci_table in
 * drivers/net/ethernet/mellanox/mlx5/core/main.c (Linux 6.x), whose entry
 * comments give the names below; the same ids appear in the pci.ids database
 * (https://pci-ids.ucw.cz, vendor 15b3), e.g. 101b "MT28908 Family
 * [ConnectX-6]", 1021 "MT2910 Family [ConnectX-7]", a2d6 "MT42822 BlueField-2
 * integrated ConnectX-6 Dx network controller", a2dc "MT43244 BlueField-3
 * integrated ConnectX-7 network controller". */
#include "backend-hw/pci.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "sim/err.h"

#define MLX HW_PCI_VENDOR_MELLANOX

static const hw_pci_id table[] = {
	{ MLX, 0x1017, HW_PCI_CONNECTX5, false, "ConnectX-5" },
	{ MLX, 0x1018, HW_PCI_CONNECTX5, true, "ConnectX-5 VF" },
	{ MLX, 0x1019, HW_PCI_CONNECTX5, false, "ConnectX-5 Ex" },
	{ MLX, 0x101a, HW_PCI_CONNECTX5, true, "ConnectX-5 Ex VF" },
	{ MLX, 0x101b, HW_PCI_CONNECTX6, false, "ConnectX-6" },
	{ MLX, 0x101c, HW_PCI_CONNECTX6, true, "ConnectX-6 VF" },
	{ MLX, 0x101d, HW_PCI_CONNECTX6, false, "ConnectX-6 Dx" },
	{ MLX, 0x101e, HW_PCI_CONNECTX6, true, "ConnectX Family mlx5Gen Virtual Function" },
	{ MLX, 0x101f, HW_PCI_CONNECTX6, false, "ConnectX-6 Lx" },
	{ MLX, 0x1021, HW_PCI_CONNECTX7, false, "ConnectX-7" },
	{ MLX, 0x1023, HW_PCI_CONNECTX8, false, "ConnectX-8" },
	{ MLX, 0xa2d2, HW_PCI_BLUEFIELD1, false, "BlueField integrated ConnectX-5 network controller" },
	{ MLX, 0xa2d3, HW_PCI_BLUEFIELD1, true, "BlueField integrated ConnectX-5 network controller VF" },
	{ MLX, 0xa2d6, HW_PCI_BLUEFIELD2, false, "BlueField-2 integrated ConnectX-6 Dx network controller" },
	{ MLX, 0xa2dc, HW_PCI_BLUEFIELD3, false, "BlueField-3 integrated ConnectX-7 network controller" },
	{ MLX, 0xa2df, HW_PCI_BLUEFIELD4, false, "BlueField-4 integrated ConnectX-8 network controller" },
};

const hw_pci_id *hw_pci_lookup(unsigned vendor, unsigned device)
{
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].vendor == vendor && table[i].device == device)
			return &table[i];
	return NULL;
}

const char *hw_pci_family_name(enum hw_pci_family f)
{
	switch (f) {
	case HW_PCI_CONNECTX5: return "ConnectX-5";
	case HW_PCI_CONNECTX6: return "ConnectX-6";
	case HW_PCI_CONNECTX7: return "ConnectX-7";
	case HW_PCI_CONNECTX8: return "ConnectX-8";
	case HW_PCI_BLUEFIELD1: return "BlueField";
	case HW_PCI_BLUEFIELD2: return "BlueField-2";
	case HW_PCI_BLUEFIELD3: return "BlueField-3";
	case HW_PCI_BLUEFIELD4: return "BlueField-4";
	case HW_PCI_OTHER: break;
	}
	return "other";
}

bool hw_pci_is_dpu(enum hw_pci_family f)
{
	return f == HW_PCI_BLUEFIELD1 || f == HW_PCI_BLUEFIELD2 || f == HW_PCI_BLUEFIELD3 ||
	       f == HW_PCI_BLUEFIELD4;
}

int hw_pci_parse_id(const char *text, uint16_t *out)
{
	char *end;
	unsigned long v;
	if (!text || text[0] != '0' || (text[1] != 'x' && text[1] != 'X') ||
	    !isxdigit((unsigned char)text[2]))
		return SIM_EPARSE;
	errno = 0;
	v = strtoul(text + 2, &end, 16);
	if (errno || end == text + 2 || v > 0xffff)
		return SIM_EPARSE;
	while (*end == '\n' || *end == ' ')
		end++;
	if (*end)
		return SIM_EPARSE;
	*out = (uint16_t)v;
	return 0;
}
