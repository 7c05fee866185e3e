/*
 * info.c — `ibtest info`: what this build of ibx will run with.
 *
 * Prints the ibx version and the build configuration (mpi-lite/version.c:
 * git commit, compiler and flags, sanitizer, the libraries found and their
 * versions, the MPI version; PMIx's version at run time), every
 * configuration variable with its current value
 * (every module's section in the one registry, core/config.h: the engine's,
 * mpi-lite's and mpilite-run's) and the verbs devices libibverbs sees: per port its state, link
 * layer, LID, MTU and the valid GID table entries with their type (IB, RoCE v1, RoCE v2) and
 * network interface. Nothing here needs a launcher or another rank. `ibtest info --markdown` prints
 * the variables as README's table.
 *
 * Also mpi-lite's table of collective algorithms (mpi-lite/coll_select.c, linked in alone): which
 * algorithm each collective runs by size and properties of the call.
 */
#include "ibtest.h"

#include "coll_select.h"
#include "dtype_rdma/dt_config.h"
#include "ibx_int.h"
#include "mpil_config.h"
#include "mpil_version.h"
#include "qp/qp_config.h"
#include "reg_cache/rcache_config.h"
#include "run/run_config.h"
#include "shm_lf/shm_config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <pmix.h>

static const char *link_layer_str(uint8_t ll)
{
	switch (ll) {
	case IBV_LINK_LAYER_INFINIBAND: return "InfiniBand";
	case IBV_LINK_LAYER_ETHERNET: return "Ethernet";
	default: return "unspecified";
	}
}

static const char *gid_type_str(enum ibv_gid_type type)
{
	switch (type) {
	case IBV_GID_TYPE_IB: return "IB";
	case IBV_GID_TYPE_ROCE_V1: return "RoCE v1";
	case IBV_GID_TYPE_ROCE_V2: return "RoCE v2";
	default: return "?";
	}
}

static bool gid_is_zero(const union ibv_gid *gid)
{
	static const uint8_t zero[16];

	return !memcmp(gid->raw, zero, sizeof(zero));
}

static void print_gids(struct ibv_context *vctx, uint8_t port, int tbl_len)
{
	int shown = 0;

	for (int i = 0; i < tbl_len; i++) {
		struct ibv_gid_entry e;
		char addr[INET6_ADDRSTRLEN], ifname[IF_NAMESIZE] = "";

		/* unused slots fail with ENODATA (or read as zero on old kernels) */
		if (ibv_query_gid_ex(vctx, port, (uint32_t)i, &e, 0) || gid_is_zero(&e.gid))
			continue;
		if (!inet_ntop(AF_INET6, e.gid.raw, addr, sizeof(addr)))
			snprintf(addr, sizeof(addr), "?");
		if (e.ndev_ifindex && !if_indextoname(e.ndev_ifindex, ifname))
			ifname[0] = '\0';
		printf("      gid[%3d]  %-40s %-8s %s\n", i, addr, gid_type_str(e.gid_type),
		       ifname);
		shown++;
	}
	if (!shown)
		printf("      (no valid GIDs)\n");
}

static void print_device(struct ibv_device *dev)
{
	struct ibv_context *vctx = ibv_open_device(dev);
	struct ibv_device_attr attr;

	printf("  %s  (%s, node GUID %016llx)\n", ibv_get_device_name(dev),
	       ibv_node_type_str(dev->node_type),
	       (unsigned long long)be64toh(ibv_get_device_guid(dev)));
	if (!vctx) {
		printf("    cannot open: %s\n", strerror(errno));
		return;
	}
	if (ibv_query_device(vctx, &attr)) {
		printf("    ibv_query_device failed: %s\n", strerror(errno));
		ibv_close_device(vctx);
		return;
	}
	printf("    fw %s, max_qp %d, max_cqe %d, max_mr_size %llu, max_sge %d, atomics %s\n",
	       attr.fw_ver[0] ? attr.fw_ver : "-", attr.max_qp, attr.max_cqe,
	       (unsigned long long)attr.max_mr_size, attr.max_sge,
	       attr.atomic_cap == IBV_ATOMIC_NONE ? "no" : "yes");
	for (uint8_t port = 1; port <= attr.phys_port_cnt; port++) {
		struct ibv_port_attr pa;

		if (ibv_query_port(vctx, port, &pa)) {
			printf("    port %u: ibv_query_port failed: %s\n", port, strerror(errno));
			continue;
		}
		printf("    port %u: %s, link layer %s, lid %u, active mtu %d, gid table %d\n",
		       port, ibv_port_state_str(pa.state), link_layer_str(pa.link_layer), pa.lid,
		       pa.active_mtu ? 128 << pa.active_mtu : 0, pa.gid_tbl_len);
		print_gids(vctx, port, pa.gid_tbl_len);
	}
	ibv_close_device(vctx);
}

/* Every configuration section. Naming them links each into ibtest, also
 * those of modules ibtest does not otherwise use, and of mpi-lite and
 * mpilite-run (a static link takes only the objects something refers to). */
static ibx_config_section_t *const all_sections[] = {
    &ibx_core_config_section,	&ibx_shm_config_section, &ibx_qp_config_section,
    &ibx_rcache_config_section, &ibx_dt_config_section,	 &mpil_config_section,
    &mpil_run_config_section};

static int info_main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"markdown", no_argument, NULL, 'm'},
	    {NULL, 0, NULL, 0},
	};
	struct ibv_device **devs;
	int opt, n = 0;
	bool markdown = false;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (opt == 'm') {
			markdown = true;
			continue;
		}
		fprintf(opt == 'h' ? stdout : stderr,
			"usage: ibtest info [--markdown]\n"
			"  prints the ibx version and build configuration, every configuration\n"
			"  variable, mpi-lite's collective algorithms and the verbs devices;\n"
			"  --markdown: only the variables, as a Markdown table (README's)\n");
		return opt == 'h' ? 0 : 2;
	}
	if (optind != argc) {
		fprintf(stderr, "ibtest info: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	for (size_t i = 0; i < IBX_ARRAY_SIZE(all_sections); i++)
		ibx_config_register(all_sections[i]);
	if (markdown) {
		ibx_config_print_markdown(stdout);
		return 0;
	}

	printf("ibx %d.%d.%d\n", IBX_VERSION_MAJOR, IBX_VERSION_MINOR, IBX_VERSION_PATCH);
	printf("built:\n");
	mpil_version_print(stdout, "  ");
	printf("running with:\n  PMIx         %s\n\n", PMIx_Get_version());
	printf("configuration (environment variables, by module):\n");
	ibx_config_print(stdout);

	printf("\nmpi-lite collective algorithms:\n");
	mpil_coll_select_print(stdout);

	printf("\nverbs devices:\n");
	errno = 0;
	devs = ibv_get_device_list(&n);
	if (!devs || n == 0) {
		/* ENOSYS: no RDMA subsystem in this kernel (no /sys/class/infiniband) */
		if (errno && errno != ENOSYS)
			printf("  no verbs devices (%s)\n", strerror(errno));
		else
			printf("  no verbs devices\n");
		if (devs)
			ibv_free_device_list(devs);
		return 0;
	}
	for (int i = 0; i < n; i++)
		print_device(devs[i]);
	ibv_free_device_list(devs);
	return 0;
}

IBTEST_COMMAND(
    "info", "ibx version and build, IBX_* configuration, collective algorithms and verbs devices",
    info_main)
