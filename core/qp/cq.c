/*
 * cq.c — completion queues and the naming of work completions: opcodes as
 * words for messages, and the mapping of ibv_wc_status to ibx_status_t.
 */
#include "qp.h"

#include <stdlib.h>

ibx_status_t ibx_qp_cq_create(ibx_qp_dev_t *dev, int depth, ibx_qp_cq_t **cq_p)
{
	ibx_qp_cq_t *cq = calloc(1, sizeof(*cq));

	if (!cq)
		return IBX_ERR_NO_MEMORY;
	if (depth > dev->attr.max_cqe)
		depth = dev->attr.max_cqe;
	cq->cq = ibv_create_cq(dev->ctx, depth, NULL, NULL, 0);
	if (!cq->cq) {
		ibx_error("device %s: ibv_create_cq(%d) failed: %s", dev->name, depth,
			  strerror(errno));
		free(cq);
		return IBX_ERR_IO;
	}
	cq->dev = dev;
	cq->depth = cq->cq->cqe;
	*cq_p = cq;
	return IBX_OK;
}

void ibx_qp_cq_destroy(ibx_qp_cq_t *cq)
{
	int rc;

	if (!cq)
		return;
	rc = ibv_destroy_cq(cq->cq);
	if (rc)
		ibx_warn("device %s: ibv_destroy_cq failed: %s", cq->dev->name, strerror(rc));
	free(cq);
}

int ibx_qp_cq_wait(ibx_qp_cq_t *cq, struct ibv_wc *wc, int n, int timeout_ms)
{
	uint64_t deadline = timeout_ms < 0 ? 0 : ibx_time_ns() + (uint64_t)timeout_ms * 1000000ull;
	int got = 0, k, i;
	unsigned spins = 0;

	while (got < n) {
		k = ibx_qp_cq_poll(cq, wc + got, n - got);
		if (k < 0)
			return k;
		for (i = 0; i < k; i++)
			if (wc[got + i].status != IBV_WC_SUCCESS)
				return got + i + 1;
		got += k;
		if (k == 0 && timeout_ms >= 0 && (++spins & 1023) == 0 && ibx_time_ns() > deadline)
			break;
	}
	return got;
}

const char *ibx_qp_wr_opcode_str(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE: return "RDMA WRITE";
	case IBV_WR_RDMA_WRITE_WITH_IMM: return "RDMA WRITE WITH IMM";
	case IBV_WR_SEND: return "SEND";
	case IBV_WR_SEND_WITH_IMM: return "SEND WITH IMM";
	case IBV_WR_RDMA_READ: return "RDMA READ";
	case IBV_WR_ATOMIC_CMP_AND_SWP: return "ATOMIC COMPARE AND SWAP";
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return "ATOMIC FETCH AND ADD";
	default: return "work request";
	}
}

const char *ibx_qp_wc_opcode_str(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA WRITE";
	case IBV_WC_RDMA_READ: return "RDMA READ";
	case IBV_WC_COMP_SWAP: return "ATOMIC COMPARE AND SWAP";
	case IBV_WC_FETCH_ADD: return "ATOMIC FETCH AND ADD";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV RDMA WITH IMM";
	default: return "completion";
	}
}

ibx_status_t ibx_qp_wc_status(enum ibv_wc_status st)
{
	switch (st) {
	case IBV_WC_SUCCESS: return IBX_OK;
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_MW_BIND_ERR: return IBX_ERR_REMOTE_ACCESS;
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_WR_FLUSH_ERR:
	case IBV_WC_REM_ABORT_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR:
	case IBV_WC_FATAL_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_BAD_RESP_ERR: return IBX_ERR_UNREACHABLE;
	default: return IBX_ERR_IO;
	}
}
