/* Recognising NVIDIA/Mellanox ConnectX NICs and BlueField DPUs by their PCI
 * vendor/device ids. Pure table lookup: no sysfs, no verbs. */
#ifndef DPUSIM_HW_PCI_H
#define DPUSIM_HW_PCI_H

#include <stdbool.h>
#include <stdint.h>

#define HW_PCI_VENDOR_MELLANOX 0x15b3u

enum hw_pci_family {
	HW_PCI_OTHER = 0,   /* not in the table (another vendor, an older part) */
	HW_PCI_CONNECTX5,
	HW_PCI_CONNECTX6,
	HW_PCI_CONNECTX7,
	HW_PCI_CONNECTX8,
	HW_PCI_BLUEFIELD1,
	HW_PCI_BLUEFIELD2,
	HW_PCI_BLUEFIELD3,
	HW_PCI_BLUEFIELD4,
};

typedef struct hw_pci_id {
	uint16_t vendor;
	uint16_t device;
	enum hw_pci_family family;
	bool is_vf;             /* an SR-IOV virtual function */
	const char *name;       /* as the mlx5 driver's table comments it */
} hw_pci_id;

/* The entry for vendor:device, or NULL when the pair is not in the table. */
const hw_pci_id *hw_pci_lookup(unsigned vendor, unsigned device);

/* "ConnectX-6", "BlueField-3", ... or "other" (never NULL). */
const char *hw_pci_family_name(enum hw_pci_family f);

/* True for the BlueField families (a DPU: NIC plus Arm cores). */
bool hw_pci_is_dpu(enum hw_pci_family f);

/* Parses a sysfs id file's contents such as "0x15b3\n" into *out.
 * Returns 0, or SIM_EPARSE when it is not a 16-bit hexadecimal number. */
int hw_pci_parse_id(const char *text, uint16_t *out);

#endif
