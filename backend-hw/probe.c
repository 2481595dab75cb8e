/* dpusim-hw probe: what RDMA devices, GPUs and CPUs this machine has, and
 * which transports and compute paths can run here. Reads, never changes. */
#define _GNU_SOURCE /* O_DIRECT */
#include "backend-hw/cmd.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <liburing.h>
#include <openssl/evp.h>

#include "backend-hw/gpu.h"
#include "backend-hw/json.h"
#include "backend-hw/log.h"
#include "backend-hw/pci.h"

#define PROBE_MAX_DEV 16
#define PROBE_MAX_PORT 4
#define PROBE_GIDS 4 /* read only the first few: reading ~1024 GID files is slow */

typedef struct probe_port {
	int num;
	const char *state;
	const char *link_layer;
	double rate_gbps;     /* 0 when the width/speed pair is unknown */
	int active_mtu;       /* bytes */
	bool active;          /* IBV_PORT_ACTIVE */
	int ngids;
	char gid[PROBE_GIDS][40];
	char gid_type[PROBE_GIDS][16];
	int gid_index[PROBE_GIDS];
} probe_port;

typedef struct probe_dev {
	char name[64];
	char fw[64];
	char node_guid[24];
	bool has_pci;
	uint16_t vendor, device;
	const hw_pci_id *pci;
	int nports;
	probe_port port[PROBE_MAX_PORT];
} probe_dev;

typedef struct probe {
	int ndev;
	probe_dev dev[PROBE_MAX_DEV];
	char rdma_note[160];
	int ngpu;
	hw_gpu_info gpu[HW_GPU_MAX];
	char gpu_note[200];
	char cpu_model[128];
	int cpus;
	double cpu_mhz;
	const char *cpu_mhz_source;
	bool verbs_usable, io_uring_usable, o_direct_usable, aes_gcm_usable;
} probe;

/* Reads the first line of a small file into buf (newline dropped). */
static int read_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)cap, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Per-lane data rates in Gb/s of each ibv active_speed value, as rdma-core's
 * ibv_devinfo prints them (SDR 2.5 ... NDR 100, XDR 200; IB spec vol. 2). */
static double lane_gbps(uint8_t speed)
{
	switch (speed) {
	case 1: return 2.5;
	case 2: return 5.0;
	case 4: case 8: return 10.0;
	case 16: return 14.0;
	case 32: return 25.0;
	case 64: return 50.0;
	case 128: return 100.0; /* XDR (200) only fits active_speed_ex */
	}
	return 0;
}

static int width_lanes(uint8_t width)
{
	switch (width) {
	case 1: return 1;
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	}
	return 0;
}

static void probe_gids(struct ibv_context *ctx, const char *dev, probe_port *p, int gid_len)
{
	for (int i = 0; i < gid_len && p->ngids < PROBE_GIDS && i < 16; i++) {
		union ibv_gid g;
		char path[256];
		int k = p->ngids;
		if (ibv_query_gid(ctx, (uint8_t)p->num, i, &g))
			continue;
		if (!g.global.subnet_prefix && !g.global.interface_id)
			continue;
		for (int b = 0, at = 0; b < 16; b += 2)
			at += snprintf(p->gid[k] + at, sizeof p->gid[k] - (size_t)at, "%s%02x%02x",
				       b ? ":" : "", g.raw[b], g.raw[b + 1]);
		snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d",
			 dev, p->num, i);
		if (read_line(path, p->gid_type[k], sizeof p->gid_type[k]))
			snprintf(p->gid_type[k], sizeof p->gid_type[k], "unknown");
		p->gid_index[k] = i;
		p->ngids++;
	}
}

static void probe_port_one(struct ibv_context *ctx, const char *dev, probe_port *p)
{
	struct ibv_port_attr a;
	if (ibv_query_port(ctx, (uint8_t)p->num, &a)) {
		p->state = "unqueryable";
		p->link_layer = "unknown";
		return;
	}
	p->state = ibv_port_state_str(a.state);
	p->active = a.state == IBV_PORT_ACTIVE;
	p->link_layer = a.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
	p->rate_gbps = lane_gbps(a.active_speed) * width_lanes(a.active_width);
	p->active_mtu = 128 << a.active_mtu;
	probe_gids(ctx, dev, p, a.gid_tbl_len);
}

static void probe_pci(probe_dev *d)
{
	char path[256], buf[32];
	snprintf(path, sizeof path, "/sys/class/infiniband/%s/device/vendor", d->name);
	if (read_line(path, buf, sizeof buf) || hw_pci_parse_id(buf, &d->vendor))
		return;
	snprintf(path, sizeof path, "/sys/class/infiniband/%s/device/device", d->name);
	if (read_line(path, buf, sizeof buf) || hw_pci_parse_id(buf, &d->device))
		return;
	d->has_pci = true;
	d->pci = hw_pci_lookup(d->vendor, d->device);
}

static void probe_dev_one(struct ibv_device *ibdev, probe_dev *d, probe *pr)
{
	struct ibv_context *ctx;
	struct ibv_device_attr a;
	uint64_t guid = be64toh(ibv_get_device_guid(ibdev));
	snprintf(d->name, sizeof d->name, "%s", ibv_get_device_name(ibdev));
	snprintf(d->node_guid, sizeof d->node_guid, "%016" PRIx64, guid);
	probe_pci(d);
	ctx = ibv_open_device(ibdev);
	if (!ctx) {
		snprintf(d->fw, sizeof d->fw, "(cannot open: %s)", strerror(errno));
		return;
	}
	if (!ibv_query_device(ctx, &a)) {
		snprintf(d->fw, sizeof d->fw, "%s", a.fw_ver);
		for (int p = 1; p <= a.phys_port_cnt && d->nports < PROBE_MAX_PORT; p++) {
			probe_port *pp = &d->port[d->nports++];
			pp->num = p;
			probe_port_one(ctx, d->name, pp);
			if (pp->active && pp->ngids > 0)
				pr->verbs_usable = true;
		}
	}
	ibv_close_device(ctx);
}

static void probe_rdma(probe *pr)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list) {
		snprintf(pr->rdma_note, sizeof pr->rdma_note,
			 "no RDMA device (libibverbs: %s)", strerror(errno));
		return;
	}
	if (n == 0)
		snprintf(pr->rdma_note, sizeof pr->rdma_note, "no RDMA device (libibverbs found none)");
	for (int i = 0; i < n && pr->ndev < PROBE_MAX_DEV; i++)
		probe_dev_one(list[i], &pr->dev[pr->ndev++], pr);
	ibv_free_device_list(list);
}

static void probe_cpu(probe *pr)
{
	char line[512], khz[32];
	FILE *f = fopen("/proc/cpuinfo", "r");
	pr->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(pr->cpu_model, sizeof pr->cpu_model, "unknown");
	while (f && fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "model name", 10) && !strcmp(pr->cpu_model, "unknown"))
			snprintf(pr->cpu_model, sizeof pr->cpu_model, "%s", colon + 2);
		if (!strncmp(line, "cpu MHz", 7) && pr->cpu_mhz == 0) {
			pr->cpu_mhz = atof(colon + 1);
			pr->cpu_mhz_source = "/proc/cpuinfo cpu MHz (current, cpu0)";
		}
	}
	if (f)
		fclose(f);
	if (!read_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", khz, sizeof khz)) {
		pr->cpu_mhz = atof(khz) / 1000.0;
		pr->cpu_mhz_source = "cpufreq cpuinfo_max_freq (cpu0)";
	}
}

double hw_cpu_hz(const char **source)
{
	probe *pr = calloc(1, sizeof *pr);
	double hz;
	if (!pr)
		return 0;
	probe_cpu(pr);
	hz = pr->cpu_mhz * 1e6;
	if (source)
		*source = pr->cpu_mhz_source;
	free(pr);
	return hz;
}

static void probe_paths(probe *pr)
{
	struct io_uring ring;
	char path[] = "/tmp/dpusim-hw-probe-XXXXXX";
	/* A fresh name (O_EXCL), removed at once; O_DIRECT is tried on the same
	 * descriptor rather than by opening the name again. */
	int fd = mkostemp(path, O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		int fl = fcntl(fd, F_GETFL);
		unlink(path);
		pr->o_direct_usable = fl >= 0 && fcntl(fd, F_SETFL, fl | O_DIRECT) == 0;
		close(fd);
	}
	if (io_uring_queue_init(2, &ring, 0) == 0) {
		pr->io_uring_usable = true;
		io_uring_queue_exit(&ring);
	}
	pr->aes_gcm_usable = EVP_aes_256_gcm() != NULL;
}

static void probe_gpus(probe *pr)
{
	int n = hw_gpu_probe(pr->gpu, HW_GPU_MAX, pr->gpu_note, sizeof pr->gpu_note);
	pr->ngpu = n > 0 ? n : 0;
	if (n == 0 && !pr->gpu_note[0])
		snprintf(pr->gpu_note, sizeof pr->gpu_note, "no GPU");
}

static void print_text(const probe *pr)
{
	printf("dpusim-hw probe\n\ncompiled-in paths: %s\n\nRDMA devices:\n", hw_compiled_paths());
	if (pr->ndev == 0)
		printf("  %s\n", pr->rdma_note);
	for (int i = 0; i < pr->ndev; i++) {
		const probe_dev *d = &pr->dev[i];
		printf("  %s  firmware %s  node GUID %s\n", d->name, d->fw, d->node_guid);
		if (!d->has_pci)
			printf("    PCI: none (a software device such as rxe/Soft-RoCE, or no sysfs link)\n");
		else
			printf("    PCI %04x:%04x  %s%s\n", d->vendor, d->device,
			       d->pci ? d->pci->name : "not a ConnectX/BlueField in dpusim's table",
			       d->pci && hw_pci_is_dpu(d->pci->family) ? "  (DPU)" : "");
		for (int p = 0; p < d->nports; p++) {
			const probe_port *pp = &d->port[p];
			printf("    port %d: %s, %s, %.1f Gb/s, MTU %d\n", pp->num, pp->state,
			       pp->link_layer, pp->rate_gbps, pp->active_mtu);
			for (int g = 0; g < pp->ngids; g++)
				printf("      GID[%d] %s  %s\n", pp->gid_index[g], pp->gid[g],
				       pp->gid_type[g]);
		}
	}
	printf("\nGPUs:\n");
	if (pr->ngpu == 0)
		printf("  %s\n", pr->gpu_note);
	for (int i = 0; i < pr->ngpu; i++) {
		const hw_gpu_info *g = &pr->gpu[i];
		printf("  GPU %d: %s, compute %d.%d, %.1f GiB, %d SMs, PCI %s, NUMA node %d\n", i,
		       g->name, g->cc_major, g->cc_minor, (double)g->mem_bytes / (1 << 30),
		       g->sm_count, g->pci_bus_id, g->numa_node);
	}
	printf("\nCPU: %s, %d logical CPUs online", pr->cpu_model, pr->cpus);
	if (pr->cpu_mhz > 0)
		printf(", %.0f MHz (%s)", pr->cpu_mhz, pr->cpu_mhz_source);
	printf("\n\nusable here:\n");
	printf("  tcp transport      yes\n");
	printf("  verbs transport    %s\n", pr->verbs_usable ? "yes" : "no (no active RDMA port)");
	printf("  cuda compute       %s\n", pr->ngpu > 0 ? "yes" : "no");
	printf("  gpudirect (dmabuf) %s\n", pr->ngpu > 0 && pr->verbs_usable ? "possible" : "no");
	printf("  cpu compute        yes\n");
	printf("  storage O_DIRECT   %s\n", pr->o_direct_usable ? "yes" : "no (tmp filesystem refuses it)");
	printf("  storage io_uring   %s\n", pr->io_uring_usable ? "yes" : "no (kernel refuses io_uring)");
	printf("  storage cuFile     %s\n", !hw_cufile_compiled()
		? "no (not compiled in: no cufile.h and libcufile under the CUDA toolkit at build time)"
		: pr->ngpu > 0 ? "compiled in (GPUDirect Storage; bench opens its driver)"
			       : "compiled in, but no GPU");
	printf("  crypto AES-GCM     %s\n", pr->aes_gcm_usable ? "yes (OpenSSL EVP)" : "no");
}

static void json_dev(FILE *f, const probe_dev *d)
{
	fputc('{', f);
	hw_json_key(f, "name", 1), hw_json_str(f, d->name);
	hw_json_key(f, "firmware", 0), hw_json_str(f, d->fw);
	hw_json_key(f, "node_guid", 0), hw_json_str(f, d->node_guid);
	if (d->has_pci) {
		char id[8];
		hw_json_key(f, "pci", 0), fputc('{', f);
		snprintf(id, sizeof id, "0x%04x", d->vendor);
		hw_json_key(f, "vendor", 1), hw_json_str(f, id);
		snprintf(id, sizeof id, "0x%04x", d->device);
		hw_json_key(f, "device", 0), hw_json_str(f, id);
		hw_json_key(f, "family", 0), hw_json_str(f, d->pci ? hw_pci_family_name(d->pci->family) : "other");
		hw_json_key(f, "dpu", 0), fputs(d->pci && hw_pci_is_dpu(d->pci->family) ? "true" : "false", f);
		fputc('}', f);
	}
	hw_json_key(f, "ports", 0), fputc('[', f);
	for (int p = 0; p < d->nports; p++) {
		const probe_port *pp = &d->port[p];
		fprintf(f, "%s{", p ? "," : "");
		hw_json_key(f, "port", 1), fprintf(f, "%d", pp->num);
		hw_json_key(f, "state", 0), hw_json_str(f, pp->state);
		hw_json_key(f, "link_layer", 0), hw_json_str(f, pp->link_layer);
		hw_json_key(f, "rate_gbps", 0), hw_json_num(f, pp->rate_gbps);
		hw_json_key(f, "mtu", 0), fprintf(f, "%d", pp->active_mtu);
		hw_json_key(f, "gids", 0), fputc('[', f);
		for (int g = 0; g < pp->ngids; g++) {
			fprintf(f, "%s{", g ? "," : "");
			hw_json_key(f, "index", 1), fprintf(f, "%d", pp->gid_index[g]);
			hw_json_key(f, "gid", 0), hw_json_str(f, pp->gid[g]);
			hw_json_key(f, "type", 0), hw_json_str(f, pp->gid_type[g]);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputs("]}", f);
}

static void json_gpu(FILE *f, const hw_gpu_info *g)
{
	char cc[16];
	snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor);
	fputc('{', f);
	hw_json_key(f, "name", 1), hw_json_str(f, g->name);
	hw_json_key(f, "compute_capability", 0), hw_json_str(f, cc);
	hw_json_key(f, "mem_bytes", 0), fprintf(f, "%" PRIu64, g->mem_bytes);
	hw_json_key(f, "sm_count", 0), fprintf(f, "%d", g->sm_count);
	hw_json_key(f, "pci_bus_id", 0), hw_json_str(f, g->pci_bus_id);
	if (g->numa_node >= 0)
		hw_json_key(f, "numa_node", 0), fprintf(f, "%d", g->numa_node);
	fputc('}', f);
}

static void json_bool(FILE *f, const char *key, bool v)
{
	hw_json_key(f, key, 0), fputs(v ? "true" : "false", f);
}

/* ,"key":{"devices":[ ... the caller lists the devices ... */
static void devices_open(FILE *f, const char *key)
{
	hw_json_key(f, key, 0), fputc('{', f);
	hw_json_key(f, "devices", 1), fputc('[', f);
}

/* ...]} closing devices_open's, with a note saying why when there are none. */
static void devices_close(FILE *f, int n, const char *note)
{
	fputc(']', f);
	if (n == 0)
		hw_json_key(f, "note", 0), hw_json_str(f, note);
	fputc('}', f);
}

static void print_json(const probe *pr)
{
	FILE *f = stdout;
	fputc('{', f);
	hw_json_key(f, "schema", 1), hw_json_str(f, "dpusim-hw-probe/1");
	hw_json_key(f, "compiled", 0), hw_json_str(f, hw_compiled_paths());
	devices_open(f, "rdma");
	for (int i = 0; i < pr->ndev; i++)
		fputs(i ? "," : "", f), json_dev(f, &pr->dev[i]);
	devices_close(f, pr->ndev, pr->rdma_note);
	devices_open(f, "gpus");
	for (int i = 0; i < pr->ngpu; i++)
		fputs(i ? "," : "", f), json_gpu(f, &pr->gpu[i]);
	devices_close(f, pr->ngpu, pr->gpu_note);
	hw_json_key(f, "cpu", 0), fputc('{', f);
	hw_json_key(f, "model", 1), hw_json_str(f, pr->cpu_model);
	hw_json_key(f, "logical_cpus", 0), fprintf(f, "%d", pr->cpus);
	if (pr->cpu_mhz > 0) {
		hw_json_key(f, "mhz", 0), hw_json_num(f, pr->cpu_mhz);
		hw_json_key(f, "mhz_source", 0), hw_json_str(f, pr->cpu_mhz_source);
	}
	fputs("},", f);
	hw_json_key(f, "usable", 1), fputc('{', f);
	hw_json_key(f, "tcp", 1), fputs("true", f);
	json_bool(f, "verbs", pr->verbs_usable);
	json_bool(f, "cuda", pr->ngpu > 0);
	json_bool(f, "gpudirect", pr->ngpu > 0 && pr->verbs_usable);
	json_bool(f, "cpu", true);
	json_bool(f, "o_direct", pr->o_direct_usable);
	json_bool(f, "io_uring", pr->io_uring_usable);
	json_bool(f, "cufile", hw_cufile_compiled() && pr->ngpu > 0);
	json_bool(f, "aes_gcm", pr->aes_gcm_usable);
	fputs("}}\n", f);
}

int hw_cmd_probe(int argc, char **argv)
{
	bool json = false;
	probe *pr;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else
			return hw_fail(2, "probe: unknown option '%s' (see 'dpusim-hw probe --help')", argv[i]);
	}
	pr = calloc(1, sizeof *pr);
	if (!pr)
		return hw_fail(2, "out of memory");
	probe_rdma(pr);
	probe_gpus(pr);
	probe_cpu(pr);
	probe_paths(pr);
	if (json)
		print_json(pr);
	else
		print_text(pr);
	free(pr);
	return 0;
}
