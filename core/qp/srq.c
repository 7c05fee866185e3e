/*
 * srq.c — shared receive queues. The verbs path keeps one SRQ for all its
 * QPs, so receive buffers scale with the credits handed out, not with the
 * number of peers times a per-QP depth; buffers go back as linked lists
 * (one ibv_post_srq_recv per batch).
 */
#include "qp.h"

#include <stdlib.h>

ibx_status_t ibx_qp_srq_create(ibx_qp_dev_t *dev, uint32_t max_wr, uint32_t max_sge,
			       ibx_qp_srq_t **srq_p)
{
	struct ibv_srq_init_attr ia;
	ibx_qp_srq_t *srq = calloc(1, sizeof(*srq));

	if (!srq)
		return IBX_ERR_NO_MEMORY;
	if (dev->attr.max_srq_wr > 0 && max_wr > (uint32_t)dev->attr.max_srq_wr) {
		ibx_error(
		    "device %s: SRQ of %u buffers exceeds max_srq_wr %d (lower IBX_IB_RX_BUFS)",
		    dev->name, max_wr, dev->attr.max_srq_wr);
		free(srq);
		return IBX_ERR_NO_RESOURCE;
	}
	memset(&ia, 0, sizeof(ia));
	ia.attr.max_wr = max_wr;
	ia.attr.max_sge = max_sge;
	srq->srq = ibv_create_srq(dev->pd, &ia);
	if (!srq->srq) {
		ibx_error("device %s: ibv_create_srq(%u wr) failed: %s", dev->name, max_wr,
			  strerror(errno));
		free(srq);
		return IBX_ERR_IO;
	}
	srq->dev = dev;
	srq->max_wr = ia.attr.max_wr;
	srq->max_sge = ia.attr.max_sge;
	*srq_p = srq;
	return IBX_OK;
}

void ibx_qp_srq_destroy(ibx_qp_srq_t *srq)
{
	int rc;

	if (!srq)
		return;
	rc = ibv_destroy_srq(srq->srq);
	if (rc)
		ibx_warn("device %s: ibv_destroy_srq failed: %s", srq->dev->name, strerror(rc));
	free(srq);
}

ibx_status_t ibx_qp_srq_post_list(ibx_qp_srq_t *srq, struct ibv_recv_wr *first)
{
	struct ibv_recv_wr *bad = NULL;
	int rc = ibv_post_srq_recv(srq->srq, first, &bad);

	if (ibx_unlikely(rc)) {
		ibx_error("device %s: ibv_post_srq_recv failed at wr_id 0x%llx: %s", srq->dev->name,
			  bad ? (unsigned long long)bad->wr_id : 0ull, strerror(rc));
		return IBX_ERR_IO;
	}
	return IBX_OK;
}
