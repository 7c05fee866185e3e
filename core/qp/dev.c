/*
 * dev.c — verbs device and port discovery, GID selection, PD, memory regions.
 *
 * IBX_DEVICE=name:port chooses a port; without it the first ACTIVE port of
 * the first device is used. On RoCE ports the GID decides the RoCE version
 * and the source address of every packet: RoCEv2 needs the GRH and its GID
 * table holds one entry per (IP address, RoCE version). We pick the RoCEv2
 * entry whose GID is an IPv4-mapped address (::ffff:a.b.c.d), which is what
 * rdma_cm would choose for an IPv4 connection and what Soft-RoCE (rxe)
 * needs; IBX_GID_INDEX overrides. InfiniBand ports use GID 0 and the LID.
 */
#include "qp.h"

#include <arpa/inet.h>
#include <stdlib.h>

IBX_CONFIG_DEFINE(ibx_qp, "core/qp", "IBX_", ibx_qp_config_t, IBX_QP_CONFIG, NULL)

int ibx_qp_mtu_bytes(enum ibv_mtu mtu)
{
	switch (mtu) {
	case IBV_MTU_256: return 256;
	case IBV_MTU_512: return 512;
	case IBV_MTU_1024: return 1024;
	case IBV_MTU_2048: return 2048;
	case IBV_MTU_4096: return 4096;
	}
	return 0;
}

bool ibx_qp_dev_available(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (!list)
		return false;
	ibv_free_device_list(list);
	return n > 0;
}

static bool gid_is_zero(const union ibv_gid *g)
{
	static const union ibv_gid zero;
	return memcmp(g, &zero, sizeof(zero)) == 0;
}

static bool gid_is_ipv4_mapped(const union ibv_gid *g)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return memcmp(g->raw, prefix, sizeof(prefix)) == 0;
}

/* Chooses the GID: explicit index, else the RoCEv2 IPv4-mapped entry, else
 * the first RoCEv2 entry, else the first non-zero one. */
static ibx_status_t dev_pick_gid(ibx_qp_dev_t *dev, int want)
{
	struct ibv_gid_entry e;
	int i, best = -1, best_rank = 0;

	if (want >= 0) {
		if (want >= dev->port_attr.gid_tbl_len ||
		    ibv_query_gid(dev->ctx, dev->port, want, &dev->gid) || gid_is_zero(&dev->gid)) {
			ibx_error("device %s:%u: GID index %d (IBX_GID_INDEX) is not a valid GID",
				  dev->name, dev->port, want);
			return IBX_ERR_NO_DEVICE;
		}
		dev->gid_index = want;
		return IBX_OK;
	}
	if (dev->link_layer != IBV_LINK_LAYER_ETHERNET) {
		/* InfiniBand: GID 0 carries the port GUID; routing uses the LID */
		dev->gid_index = -1;
		if (ibv_query_gid(dev->ctx, dev->port, 0, &dev->gid) == 0 &&
		    !gid_is_zero(&dev->gid))
			dev->gid_index = 0;
		return IBX_OK;
	}
	for (i = 0; i < dev->port_attr.gid_tbl_len; i++) {
		int rank;

		if (ibv_query_gid_ex(dev->ctx, dev->port, (uint32_t)i, &e, 0) != 0)
			continue; /* empty entries report ENODATA */
		if (gid_is_zero(&e.gid))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2)
			rank = gid_is_ipv4_mapped(&e.gid) ? 3 : 2;
		else
			rank = 1;
		if (rank > best_rank) {
			best_rank = rank;
			best = i;
			dev->gid = e.gid;
		}
		if (rank == 3)
			break;
	}
	if (best < 0) {
		ibx_error("device %s:%u: RoCE port without any GID (no IP address on its netdev?)",
			  dev->name, dev->port);
		return IBX_ERR_NO_DEVICE;
	}
	dev->gid_index = best;
	return IBX_OK;
}

/* Fills the port fields; IBX_ERR_NO_DEVICE if the port is not ACTIVE. */
static ibx_status_t dev_use_port(ibx_qp_dev_t *dev, uint8_t port, int gid_index, bool quiet)
{
	int rc;

	rc = ibv_query_port(dev->ctx, port, &dev->port_attr);
	if (rc) {
		if (!quiet)
			ibx_error("device %s: ibv_query_port(%u) failed: %s", dev->name, port,
				  strerror(rc));
		return IBX_ERR_NO_DEVICE;
	}
	if (dev->port_attr.state != IBV_PORT_ACTIVE) {
		if (!quiet)
			ibx_error("device %s port %u is %s, not ACTIVE", dev->name, port,
				  ibv_port_state_str(dev->port_attr.state));
		return IBX_ERR_NO_DEVICE;
	}
	dev->port = port;
	dev->lid = dev->port_attr.lid;
	dev->active_mtu = dev->port_attr.active_mtu;
	dev->link_layer = dev->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET
			      ? IBV_LINK_LAYER_ETHERNET
			      : IBV_LINK_LAYER_INFINIBAND;
	if (gid_index < 0)
		gid_index = (int)ibx_qp_config()->GID_INDEX;
	return dev_pick_gid(dev, gid_index);
}

static ibx_status_t dev_setup(ibx_qp_dev_t *dev, int want_port, int gid_index, bool quiet)
{
	ibx_status_t st = IBX_ERR_NO_DEVICE;
	int rc, p;

	rc = ibv_query_device(dev->ctx, &dev->attr);
	if (rc) {
		ibx_error("device %s: ibv_query_device failed: %s", dev->name, strerror(rc));
		return IBX_ERR_IO;
	}
	if (want_port > 0) {
		st = dev_use_port(dev, (uint8_t)want_port, gid_index, quiet);
	} else {
		for (p = 1; p <= dev->attr.phys_port_cnt; p++) {
			st = dev_use_port(dev, (uint8_t)p, gid_index, true);
			if (st == IBX_OK)
				break;
		}
	}
	if (st != IBX_OK)
		return st;
	dev->pd = ibv_alloc_pd(dev->ctx);
	if (!dev->pd) {
		ibx_error("device %s: ibv_alloc_pd failed: %s", dev->name, strerror(errno));
		return IBX_ERR_IO;
	}
	return IBX_OK;
}

ibx_status_t ibx_qp_dev_open_ctx(struct ibv_context *ctx, uint8_t port, int gid_index,
				 ibx_qp_dev_t **dev_p)
{
	ibx_qp_dev_t *dev = calloc(1, sizeof(*dev));
	ibx_status_t st;

	if (!dev)
		return IBX_ERR_NO_MEMORY;
	dev->ctx = ctx;
	snprintf(dev->name, sizeof(dev->name), "%s", ibv_get_device_name(ctx->device));
	st = dev_setup(dev, port, gid_index, false);
	if (st != IBX_OK) {
		free(dev);
		return st;
	}
	*dev_p = dev;
	return IBX_OK;
}

ibx_status_t ibx_qp_dev_open(const char *spec, int gid_index, ibx_qp_dev_t **dev_p)
{
	struct ibv_device **list;
	char want_name[IBV_SYSFS_NAME_MAX] = "";
	int want_port = 0, n = 0, i;
	ibx_qp_dev_t *dev;
	ibx_status_t st = IBX_ERR_NO_DEVICE;

	if (!spec || !*spec)
		spec = ibx_qp_config()->DEVICE;
	if (spec && *spec) {
		const char *colon = strchr(spec, ':');
		size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);

		if (nl == 0 || nl >= sizeof(want_name)) {
			ibx_error("IBX_DEVICE '%s': expected name[:port]", spec);
			return IBX_ERR_INVALID_PARAM;
		}
		memcpy(want_name, spec, nl);
		if (colon) {
			char *end;
			long p = strtol(colon + 1, &end, 10);

			if (*end || p < 1 || p > 255) {
				ibx_error("IBX_DEVICE '%s': bad port number", spec);
				return IBX_ERR_INVALID_PARAM;
			}
			want_port = (int)p;
		}
	}

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return IBX_ERR_NO_MEMORY;
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		ibx_error("no verbs device: ibv_get_device_list: %s",
			  list ? "empty list" : strerror(errno));
		goto err_free;
	}
	for (i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);

		if (*want_name && strcmp(name, want_name) != 0)
			continue;
		dev->ctx = ibv_open_device(list[i]);
		if (!dev->ctx) {
			ibx_error("device %s: ibv_open_device failed: %s", name, strerror(errno));
			st = IBX_ERR_IO;
			continue;
		}
		snprintf(dev->name, sizeof(dev->name), "%s", name);
		dev->own_ctx = true;
		st = dev_setup(dev, want_port, gid_index, !*want_name);
		if (st == IBX_OK)
			break;
		ibv_close_device(dev->ctx);
		dev->ctx = NULL;
		if (*want_name)
			break;
	}
	if (st != IBX_OK) {
		if (*want_name && i == n)
			ibx_error("verbs device '%s' not found", want_name);
		else if (!*want_name)
			ibx_error("no ACTIVE port on any of %d verbs device(s)", n);
		goto err_list;
	}
	ibv_free_device_list(list);
	ibx_debug("verbs device %s:%u gid index %d mtu %d", dev->name, dev->port, dev->gid_index,
		  ibx_qp_mtu_bytes(dev->active_mtu));
	*dev_p = dev;
	return IBX_OK;

err_list:
	if (list)
		ibv_free_device_list(list);
err_free:
	free(dev);
	return st;
}

void ibx_qp_dev_close(ibx_qp_dev_t *dev)
{
	int rc;

	if (!dev)
		return;
	if (dev->pd) {
		rc = ibv_dealloc_pd(dev->pd);
		if (rc)
			ibx_warn("device %s: ibv_dealloc_pd failed: %s (resources still in use)",
				 dev->name, strerror(rc));
	}
	if (dev->own_ctx && dev->ctx)
		ibv_close_device(dev->ctx);
	free(dev);
}

void ibx_qp_dev_describe(const ibx_qp_dev_t *dev, char *buf, size_t len)
{
	char gid[INET6_ADDRSTRLEN] = "-";

	if (dev->gid_index >= 0)
		inet_ntop(AF_INET6, dev->gid.raw, gid, sizeof(gid));
	snprintf(buf, len, "%s:%u %s gid[%d]=%s lid %u mtu %d", dev->name, dev->port,
		 dev->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "IB", dev->gid_index, gid,
		 dev->lid, ibx_qp_mtu_bytes(dev->active_mtu));
}

ibx_status_t ibx_qp_mr_reg(ibx_qp_dev_t *dev, void *addr, size_t len, int access,
			   struct ibv_mr **mr_p)
{
	struct ibv_mr *mr = ibv_reg_mr(dev->pd, addr, len, access);

	if (!mr) {
		int e = errno;

		ibx_error("device %s: ibv_reg_mr(%p, %zu) failed: %s%s", dev->name, addr, len,
			  strerror(e), e == ENOMEM || e == EPERM ? " (ulimit -l?)" : "");
		return e == ENOMEM ? IBX_ERR_NO_MEMORY : IBX_ERR_IO;
	}
	*mr_p = mr;
	return IBX_OK;
}

void ibx_qp_mr_dereg(struct ibv_mr *mr)
{
	int rc;

	if (!mr)
		return;
	rc = ibv_dereg_mr(mr);
	if (rc)
		ibx_warn("ibv_dereg_mr(lkey 0x%x) failed: %s", mr->lkey, strerror(rc));
}
