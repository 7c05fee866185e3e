/*
 * qp.c — RC queue pairs: creation, the RESET→INIT→RTR→RTS state machine,
 * address records and their wire encoding.
 *
 *   ibx_qp_create     RESET → INIT   (port, pkey index 0, remote access)
 *   ibx_qp_connect    INIT  → RTR    (remote QPN/PSN, path MTU, AH with the
 *                                     GRH on RoCE, responder resources)
 *                     RTR   → RTS    (our PSN, ACK timeout, retry counts,
 *                                     initiator depth for READ/atomics)
 *   ibx_qp_set_error  any   → ERR    (outstanding WRs flush)
 *
 * The PSNs are random 24-bit values so that a stale packet of an earlier
 * connection between the same QP numbers cannot be taken for a new one.
 */
#include "qp.h"
#include "qp_int.h"

#include <stdlib.h>
#include <unistd.h>

static uint32_t qp_random_psn(uint32_t salt)
{
	static _Atomic uint64_t state;
	uint64_t x = atomic_load_explicit(&state, memory_order_relaxed);

	if (x == 0)
		x = ibx_time_ns() ^ ((uint64_t)getpid() << 32);
	x ^= salt;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	atomic_store_explicit(&state, x, memory_order_relaxed);
	return (uint32_t)(x >> 20) & 0xffffff;
}

ibx_status_t ibx_qp_create(ibx_qp_dev_t *dev, const ibx_qp_init_attr_t *attr, ibx_qp_t **qp_p)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	ibx_qp_t *qp = calloc(1, sizeof(*qp));
	int rc, rd;

	if (!qp)
		return IBX_ERR_NO_MEMORY;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = attr->send_cq->cq;
	ia.recv_cq = attr->recv_cq->cq;
	ia.srq = attr->srq ? attr->srq->srq : NULL;
	ia.qp_type = IBV_QPT_RC;
	ia.sq_sig_all = attr->sq_sig_all ? 1 : 0;
	ia.cap.max_send_wr = attr->max_send_wr;
	ia.cap.max_recv_wr = attr->srq ? 0 : attr->max_recv_wr;
	ia.cap.max_send_sge = attr->max_send_sge;
	ia.cap.max_recv_sge = attr->srq ? 0 : attr->max_recv_sge;
	ia.cap.max_inline_data = attr->max_inline;
	qp->qp = ibv_create_qp(dev->pd, &ia);
	if (!qp->qp && attr->max_inline > 0) {
		/* some devices cap inline data below what was asked: retry without */
		ia.cap.max_inline_data = 0;
		qp->qp = ibv_create_qp(dev->pd, &ia);
	}
	if (!qp->qp) {
		ibx_error("device %s: ibv_create_qp(RC, send %u x %u sge, recv %u, inline %u) "
			  "failed: %s",
			  dev->name, attr->max_send_wr, attr->max_send_sge, attr->max_recv_wr,
			  attr->max_inline, strerror(errno));
		goto err_free;
	}
	qp->dev = dev;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->srq = attr->srq;
	qp->qpn = qp->qp->qp_num;
	qp->psn = qp_random_psn(qp->qpn);
	qp->max_inline = ia.cap.max_inline_data;
	qp->max_send_wr = ia.cap.max_send_wr;
	qp->max_recv_wr = ia.cap.max_recv_wr;
	qp->max_send_sge = ia.cap.max_send_sge;
	qp->max_recv_sge = ia.cap.max_recv_sge;
	rd = attr->max_rd_atomic > 0 ? attr->max_rd_atomic : 16;
	if (rd > dev->attr.max_qp_rd_atom)
		rd = dev->attr.max_qp_rd_atom;
	if (rd > dev->attr.max_qp_init_rd_atom)
		rd = dev->attr.max_qp_init_rd_atom;
	qp->max_rd_atomic = rd;

	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_INIT;
	qa.pkey_index = 0;
	qa.port_num = dev->port;
	qa.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE;
	rc = ibv_modify_qp(qp->qp, &qa,
			   IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (rc) {
		ibx_error("device %s QP 0x%x: ibv_modify_qp(RESET->INIT) failed: %s", dev->name,
			  qp->qpn, strerror(rc));
		goto err_qp;
	}
	qp->state = IBX_QP_STATE_INIT;
	*qp_p = qp;
	return IBX_OK;

err_qp:
	ibv_destroy_qp(qp->qp);
err_free:
	free(qp);
	return IBX_ERR_IO;
}

void ibx_qp_local_addr(const ibx_qp_t *qp, ibx_qp_addr_t *a)
{
	memset(a, 0, sizeof(*a));
	a->gid = qp->dev->gid;
	a->gid_valid = qp->dev->gid_index >= 0;
	a->qpn = qp->qpn;
	a->psn = qp->psn;
	a->lid = qp->dev->lid;
	a->mtu = (uint8_t)qp->dev->active_mtu;
	a->link_layer = qp->dev->link_layer;
}

uint64_t ibx_qp_retry_budget_ns(int64_t timeout, int64_t retry)
{
	if (timeout <= 0)
		return UINT64_MAX;
	if (timeout > 31)
		timeout = 31;
	if (retry < 0)
		retry = 0;
	if (retry > 7)
		retry = 7;
	return (4096ull << timeout) * (uint64_t)(retry + 1);
}

ibx_status_t ibx_qp_connect(ibx_qp_t *qp, const ibx_qp_addr_t *remote,
			    const ibx_qp_conn_attr_t *cattr)
{
	const ibx_qp_config_t *cfg = ibx_qp_config();
	ibx_qp_dev_t *dev = qp->dev;
	struct ibv_qp_attr qa;
	enum ibv_mtu mtu;
	int rc;

	if (qp->state != IBX_QP_STATE_INIT) {
		ibx_error("device %s QP 0x%x: connect in state %d (only once, from INIT)",
			  dev->name, qp->qpn, (int)qp->state);
		return IBX_ERR_INVALID_PARAM;
	}
	if (remote->link_layer != dev->link_layer) {
		ibx_error("device %s QP 0x%x: remote QP 0x%x is on %s, we are on %s", dev->name,
			  qp->qpn, remote->qpn,
			  remote->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand",
			  dev->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand");
		return IBX_ERR_UNREACHABLE;
	}
	mtu = cattr && cattr->mtu ? cattr->mtu : dev->active_mtu;
	if (remote->mtu && (enum ibv_mtu)remote->mtu < mtu)
		mtu = (enum ibv_mtu)remote->mtu;

	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTR;
	qa.path_mtu = mtu;
	qa.dest_qp_num = remote->qpn;
	qa.rq_psn = remote->psn & 0xffffff;
	qa.max_dest_rd_atomic = (uint8_t)qp->max_rd_atomic;
	qa.min_rnr_timer = (uint8_t)(cattr && cattr->min_rnr_timer ? cattr->min_rnr_timer : 12);
	qa.ah_attr.port_num = dev->port;
	qa.ah_attr.dlid = remote->lid;
	qa.ah_attr.sl = 0;
	qa.ah_attr.src_path_bits = 0;
	/* RoCE has no LIDs: every packet carries a GRH built from the GIDs */
	if (dev->link_layer == IBV_LINK_LAYER_ETHERNET ||
	    (remote->gid_valid && dev->gid_index >= 0 &&
	     memcmp(remote->gid.raw, dev->gid.raw, 8) != 0)) {
		if (!remote->gid_valid || dev->gid_index < 0) {
			ibx_error("device %s QP 0x%x: a GID is needed to reach QP 0x%x", dev->name,
				  qp->qpn, remote->qpn);
			return IBX_ERR_UNREACHABLE;
		}
		qa.ah_attr.is_global = 1;
		qa.ah_attr.grh.dgid = remote->gid;
		qa.ah_attr.grh.sgid_index = (uint8_t)dev->gid_index;
		qa.ah_attr.grh.hop_limit = 64;
		qa.ah_attr.grh.traffic_class = 0;
		qa.ah_attr.grh.flow_label = 0;
	}
	rc = ibv_modify_qp(qp->qp, &qa,
			   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (rc) {
		ibx_error("device %s QP 0x%x: ibv_modify_qp(INIT->RTR, remote QP 0x%x, mtu %d) "
			  "failed: %s",
			  dev->name, qp->qpn, remote->qpn, ibx_qp_mtu_bytes(mtu), strerror(rc));
		return IBX_ERR_IO;
	}

	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTS;
	qa.sq_psn = qp->psn;
	qa.timeout = (uint8_t)(cattr && cattr->timeout ? cattr->timeout : cfg->IB_TIMEOUT);
	qa.retry_cnt = (uint8_t)(cattr && cattr->retry_cnt ? cattr->retry_cnt : cfg->IB_RETRY);
	qa.rnr_retry = (uint8_t)(cattr && cattr->rnr_retry ? cattr->rnr_retry : 7);
	qa.max_rd_atomic = (uint8_t)qp->max_rd_atomic;
	rc = ibv_modify_qp(qp->qp, &qa,
			   IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			       IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	if (rc) {
		ibx_error("device %s QP 0x%x: ibv_modify_qp(RTR->RTS) failed: %s", dev->name,
			  qp->qpn, strerror(rc));
		return IBX_ERR_IO;
	}
	qp->remote = *remote;
	qp->state = IBX_QP_STATE_RTS;
	return IBX_OK;
}

ibx_status_t ibx_qp_set_error(ibx_qp_t *qp)
{
	struct ibv_qp_attr qa;
	int rc;

	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_ERR;
	rc = ibv_modify_qp(qp->qp, &qa, IBV_QP_STATE);
	qp->state = IBX_QP_STATE_ERROR;
	if (rc) {
		ibx_warn("device %s QP 0x%x: ibv_modify_qp(->ERR) failed: %s", qp->dev->name,
			 qp->qpn, strerror(rc));
		return IBX_ERR_IO;
	}
	return IBX_OK;
}

void ibx_qp_destroy(ibx_qp_t *qp)
{
	int rc;

	if (!qp)
		return;
	ibx_qp_cm_release(qp, true);
	rc = ibv_destroy_qp(qp->qp);
	if (rc)
		ibx_warn("device %s QP 0x%x: ibv_destroy_qp failed: %s", qp->dev->name, qp->qpn,
			 strerror(rc));
	ibx_qp_cm_release(qp, false);
	free(qp);
}

ibx_status_t ibx_qp_post_failed(ibx_qp_t *qp, const char *verb, int err,
				const struct ibv_send_wr *bad)
{
	ibx_error("device %s QP 0x%x (remote QP 0x%x): %s(%s) failed: %s", qp->dev->name, qp->qpn,
		  qp->remote.qpn, verb, bad ? ibx_qp_wr_opcode_str(bad->opcode) : "-",
		  strerror(err));
	return err == ENOMEM ? IBX_ERR_BUSY : IBX_ERR_IO;
}

ibx_status_t ibx_qp_post_recv_list(ibx_qp_t *qp, struct ibv_recv_wr *first)
{
	struct ibv_recv_wr *bad = NULL;
	int rc = ibv_post_recv(qp->qp, first, &bad);

	if (ibx_unlikely(rc)) {
		ibx_error("device %s QP 0x%x: ibv_post_recv failed: %s", qp->dev->name, qp->qpn,
			  strerror(rc));
		return IBX_ERR_IO;
	}
	return IBX_OK;
}

/* Wire record (big-endian):
 *   0  u8  magic 0xB1   1 u8 mtu   2 u8 link layer   3 u8 flags (1: gid valid)
 *   4  be32 qpn         8 be32 psn 12 be16 lid       14 be16 0
 *   16 gid[16] */
void ibx_qp_addr_pack(const ibx_qp_addr_t *a, uint8_t out[IBX_QP_ADDR_WIRE_LEN])
{
	uint32_t v32;
	uint16_t v16;

	memset(out, 0, IBX_QP_ADDR_WIRE_LEN);
	out[0] = 0xB1;
	out[1] = a->mtu;
	out[2] = a->link_layer;
	out[3] = a->gid_valid ? 1 : 0;
	v32 = htobe32(a->qpn);
	memcpy(out + 4, &v32, 4);
	v32 = htobe32(a->psn);
	memcpy(out + 8, &v32, 4);
	v16 = htobe16(a->lid);
	memcpy(out + 12, &v16, 2);
	memcpy(out + 16, a->gid.raw, 16);
}

ibx_status_t ibx_qp_addr_unpack(const uint8_t in[IBX_QP_ADDR_WIRE_LEN], ibx_qp_addr_t *a)
{
	uint32_t v32;
	uint16_t v16;
	ibx_qp_addr_t r;

	if (in[0] != 0xB1 || in[3] > 1 || (in[1] && !ibx_qp_mtu_bytes((enum ibv_mtu)in[1])))
		return IBX_ERR_CORRUPT;
	memset(&r, 0, sizeof(r));
	r.mtu = in[1];
	r.link_layer = in[2];
	r.gid_valid = in[3];
	memcpy(&v32, in + 4, 4);
	r.qpn = be32toh(v32) & 0xffffff;
	memcpy(&v32, in + 8, 4);
	r.psn = be32toh(v32) & 0xffffff;
	memcpy(&v16, in + 12, 2);
	r.lid = be16toh(v16);
	memcpy(r.gid.raw, in + 16, 16);
	*a = r;
	return IBX_OK;
}
