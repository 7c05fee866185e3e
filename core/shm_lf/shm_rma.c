/*
 * shm_rma.c — one-sided operations of the node-local path. put and get are
 * the kernel single copy (CMA: process_vm_writev/readv), the shm twin of
 * RDMA gather/scatter; they complete before they return. The rest of the
 * one-sided slots of the ops table return IBX_ERR_UNSUPPORTED.
 */
#include "shm_path.h"

#include <sys/uio.h>

static ibx_status_t cma_op(ibx_peer_t *peer, const struct iovec *iov, int n, uint64_t raddr,
			   ibx_request_t *req, bool write)
{
	shm_peer_t *p = peer->path;
	ibx_status_t s;

	if (p->failed)
		return ibx_shm_lost_status(p);
	if (!p->cma_ok)
		return IBX_ERR_UNSUPPORTED;
	if (n < 0 || (n && !iov))
		return IBX_ERR_INVALID_PARAM;
	s = ibx_shm_cma_xfer(p->pid, iov, n, raddr, write);
	if (s == IBX_ERR_UNSUPPORTED) {
		ibx_info("shm: CMA to rank %d refused (%s): put/get unsupported from now on",
			 p->rank, strerror(errno));
		p->cma_ok = false;
		return s;
	}
	if (s != IBX_OK) {
		ibx_error("shm: process_vm_%s at 0x%llx of rank %d (pid %d) failed: %s",
			  write ? "writev" : "readv", (unsigned long long)raddr, p->rank,
			  (int)p->pid, strerror(errno));
		if (s == IBX_ERR_UNREACHABLE)
			ibx_shm_peer_fail(p->st, p, s);
		return s;
	}
	/* Done already: like tag_send's IBX_OK, the request is complete and its
	 * callback is not called. */
	if (req) {
		req->status = IBX_OK;
		req->completed = 1;
	}
	return IBX_OK;
}

ibx_status_t ibx_shm_rma_put(ibx_peer_t *peer, const struct iovec *src, int n, uint64_t raddr,
			     uint32_t rkey, ibx_request_t *req)
{
	return cma_op(peer, src, n, raddr, req, true);
}

ibx_status_t ibx_shm_rma_get(ibx_peer_t *peer, const struct iovec *dst, int n, uint64_t raddr,
			     uint32_t rkey, ibx_request_t *req)
{
	return cma_op(peer, dst, n, raddr, req, false);
}

ibx_status_t ibx_shm_rma_flush(ibx_peer_t *peer)
{
	/* put and get complete before they return */
	return IBX_OK;
}

/* A CMA copy is not atomic and has no completion event at the target:
 * these need the target's memory in a shared segment (not here yet). */
ibx_status_t ibx_shm_rma_put_imm(ibx_peer_t *peer, const struct iovec *src, int n, uint64_t raddr,
				 uint32_t rkey, uint32_t imm, ibx_request_t *req)
{
	return IBX_ERR_UNSUPPORTED;
}

ibx_status_t ibx_shm_rma_fetch_add(ibx_peer_t *peer, uint64_t raddr, uint32_t rkey, uint64_t add,
				   uint64_t *result, ibx_request_t *req)
{
	return IBX_ERR_UNSUPPORTED;
}

ibx_status_t ibx_shm_rma_cswap(ibx_peer_t *peer, uint64_t raddr, uint32_t rkey, uint64_t compare,
			       uint64_t swap, uint64_t *result, ibx_request_t *req)
{
	return IBX_ERR_UNSUPPORTED;
}
