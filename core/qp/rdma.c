/*
 * rdma.c — the verbs path's one-sided operations: RDMA WRITE with a gather
 * list, RDMA READ with a scatter list, WRITE WITH IMMEDIATE, 8-byte
 * fetch-and-add and compare-and-swap, flush; and the registration of memory
 * that peers reach with them.
 *
 * An operation becomes one WQE per max_sge buffers (a datatype's block list
 * is a chain of WRs posted with one ibv_post_send, [Wu03] §7.4/§8.5); a list
 * longer than the send queue goes out in parts as slots free up. Small
 * writes (<= IBX_IB_INLINE) are posted inline and need no registration;
 * the others get their buffers from the registration cache with OGR. A
 * request, when given, completes when its last WQE completes (remote
 * completion on RC); without one the WQEs stay unsignalled (selective
 * signalling) and flush() waits for them:
 *
 *   put(req=NULL) x N  ->  W W W W (unsignalled)
 *   flush              ->  ... + mailbox WRITE (signalled) -> its completion
 *                          retires every earlier WQE of the QP (RC order)
 *
 * A small get (one buffer, <= GET_BCOPY_MAX bytes) reads into a bounce
 * buffer, which carries {destination, length} in its first bytes, and is
 * copied out at the completion: no registration-cache lookup on the
 * latency path (the send bounce buffers are registered once). With nothing
 * queued before it, ibx_qp_rma_get posts it straight to its WQE, without
 * the operation record and its dispatch.
 *
 * An operation posted on an idle send queue is signalled all the same: the
 * put-then-flush (or get-then-flush) of a latency-bound code then waits
 * for the operation's own completion, one round trip, instead of sending a
 * flush WQE behind it (two packets more each way).
 *
 * WRITE WITH IMMEDIATE consumes a receive buffer at the target, so it takes
 * a send credit like a message; the target's progress hands (source, imm)
 * to the handler set with ibx_qp_path_set_imm_handler. Atomic results land
 * in a registered slot and are copied to the caller's result on completion;
 * an atomic, like a small get, is posted straight to its WQE when nothing
 * is queued before it.
 *
 * Operations post through the send queue (sendq.c); one that finds no slot
 * (or credit, or atomic slot) waits in the peer's operation FIFO behind
 * earlier ones (ibx_qp_op_submit), and progress starts it again through
 * ibx_qp_rma_op_start.
 */
#include "sendq.h"

#include <sched.h>
#include <stdlib.h>

#define CHAIN_MAX 16
/* A flush polls its own CQ; every this many idle passes the whole engine. */
#define FLUSH_ALL_EVERY 16

/* Nothing of the QP is outstanding: the WQE about to be posted is alone. */
static inline bool sq_idle(const qp_peer_t *p)
{
	return p->sq_head == p->sq_tail;
}

/* A small get's bounce buffer: where its bytes go, then the bytes. */
#define GET_BCOPY_HDR 16
#define GET_BCOPY_MAX 256
typedef struct get_bcopy_hdr {
	void *dst;
	size_t len;
} get_bcopy_hdr_t;
_Static_assert(sizeof(get_bcopy_hdr_t) <= GET_BCOPY_HDR, "bounce header");

static size_t iov_total(const struct iovec *iov, int n)
{
	size_t t = 0;

	for (int i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

static void regs_release(qp_path_t *path, qp_regs_t *regs)
{
	if (!regs)
		return;
	ibx_rcache_ogr_put(path->rcache, regs->r, (size_t)regs->n);
	free(regs);
}

/* A small get's bytes out of its bounce buffer: a word or two by moves the
 * compiler inlines, rather than a call into the C library (a page of its
 * code more per operation). */
static inline void bounce_copy(void *dst, const char *src, size_t len)
{
	switch (len) {
	case 8: memcpy(dst, src, 8); return;
	case 4: memcpy(dst, src, 4); return;
	case 16: memcpy(dst, src, 16); return;
	default: memcpy(dst, src, len); return;
	}
}

IBX_HOT void ibx_qp_rma_sqe_done(qp_peer_t *p, qp_sqe_t *e, ibx_status_t st)
{
	qp_path_t *path = p->path;

	if (!e->last)
		return;
	if (e->kind == SQE_AMO) {
		uint32_t slot = (uint32_t)((uintptr_t)e->aux - 1);

		if (st == IBX_OK && e->result)
			*e->result = path->amo[slot];
		path->amo_free[path->amo_nfree++] = slot;
	} else {
		regs_release(path, e->aux);
		/* a small get: its bytes are in the bounce buffer (retired, not
		 * reused before this returns) */
		if (e->result && st == IBX_OK) {
			const get_bcopy_hdr_t *h = (const void *)e->result;

			bounce_copy(h->dst, (const char *)h + GET_BCOPY_HDR, h->len);
		}
	}
	e->aux = NULL;
	e->result = NULL;
	if (p->rma_outstanding)
		p->rma_outstanding--;
	if (e->req)
		ibx_req_complete(e->req, st);
}

ibx_status_t ibx_qp_rma_op_fail(qp_peer_t *p, qp_op_t *op, bool from_queue, ibx_status_t why)
{
	if (p->rma_outstanding)
		p->rma_outstanding--;
	regs_release(p->path, op->regs);
	op->regs = NULL;
	if (from_queue && op->req)
		ibx_req_complete(op->req, why);
	return why;
}

/* ---- put / get / put_imm -------------------------------------------------------- */

static ibx_status_t rma_start_chain(qp_peer_t *p, qp_op_t *op, bool from_queue, uint32_t maxsge);

/* No send-queue slot yet: the operation is started again later. */
static ibx_status_t rma_busy(qp_peer_t *p, bool is_imm)
{
	/* the credit of a write with immediate is taken again next time */
	if (is_imm)
		qp_credit_undo(p);
	return IBX_ERR_BUSY;
}

/* A small get fits a bounce buffer, and one is free. */
static inline bool get_bcopy_fits(const qp_path_t *path, size_t len)
{
	return len <= GET_BCOPY_MAX && GET_BCOPY_HDR + len <= path->tx_stride && path->tx_nfree > 0;
}

/* Posts a small get into a bounce buffer (get_bcopy_fits, a free slot:
 * the caller checked); the bytes reach @dst at the completion. */
static inline ibx_status_t get_bcopy_post(qp_peer_t *p, void *dst, size_t len, uint64_t raddr,
					  uint32_t rkey, ibx_request_t *req)
{
	qp_path_t *path = p->path;
	uint32_t b = path->tx_free[--path->tx_nfree];
	char *buf = path->tx_mem + (size_t)b * path->tx_stride;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	uint64_t wr_id;
	qp_sqe_t *e;
	ibx_status_t st;

	*(get_bcopy_hdr_t *)(void *)buf = (get_bcopy_hdr_t){dst, len};
	sge = (struct ibv_sge){(uintptr_t)buf + GET_BCOPY_HDR, (uint32_t)len, path->tx_mr->lkey};
	e = qp_sqe_next(p, SQE_RMA, IBV_WR_RDMA_READ, req != NULL || sq_idle(p), &wr_id);
	e->txbuf = (int32_t)b;
	e->req = req;
	e->last = 1;
	e->bytes = (uint32_t)len;
	e->result = (uint64_t *)(void *)buf;
	ibx_qp_wr_write(&wr, &sge, 1, raddr, rkey, wr_id, e->signaled ? IBX_QP_SIGNALED : 0);
	wr.opcode = IBV_WR_RDMA_READ;
	st = ibx_qp_chain_post(p, &wr);
	return st == IBX_OK ? IBX_INPROGRESS : st;
}

/* The two small cases (an inline write, a get through a bounce buffer) are
 * posted from here with a frame of one WQE (under 1 KiB of stack);
 * everything else goes to rma_start_chain, whose WQE and SGE arrays take
 * 10 KiB. A small put or get from a thread with a small stack (user-level
 * threads often have 16 KiB) then does not come near its end. */
static IBX_HOT ibx_status_t rma_start(qp_peer_t *p, qp_op_t *op, bool from_queue)
{
	qp_path_t *path = p->path;
	bool is_read = op->kind == OP_GET, is_imm = op->kind == OP_PUT_IMM;
	uint32_t maxsge = is_read ? path->max_sge_rd : path->max_sge;
	struct ibv_send_wr wr[1];
	struct ibv_sge sge[1][32];
	size_t total;
	ibx_status_t st;

	if (maxsge > 32)
		maxsge = 32;
	/* a write with immediate consumes a receive buffer: it takes a credit,
	 * given back below when its last WQE cannot be posted yet */
	if (is_imm && !qp_credit_take(p))
		return IBX_ERR_BUSY;
	total = op->pos == 0 ? iov_total(op->iov, op->n) : 1;
	if (op->pos == 0 && total == 0 && !is_imm)
		return IBX_OK; /* nothing to move */

	/* small write: inline, one WQE, no registration */
	if (op->pos == 0 && !is_read && total <= path->inline_max && total <= p->qp->max_inline &&
	    (uint32_t)op->n <= maxsge) {
		uint64_t wr_id;
		qp_sqe_t *e;
		bool sig;
		int k = 0;

		if (qp_sq_space(p) == 0)
			return rma_busy(p, is_imm);
		for (int i = 0; i < op->n; i++)
			if (op->iov[i].iov_len)
				sge[0][k++] = (struct ibv_sge){(uintptr_t)op->iov[i].iov_base,
							       (uint32_t)op->iov[i].iov_len, 0};
		e = qp_sqe_next(p, SQE_RMA, is_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
				op->req != NULL || sq_idle(p), &wr_id);
		e->req = op->req;
		e->last = 1;
		sig = e->signaled;
		if (is_imm)
			ibx_qp_wr_write_imm(&wr[0], sge[0], k, op->raddr, op->rkey, op->imm, wr_id,
					    (sig ? IBX_QP_SIGNALED : 0) | (k ? IBX_QP_INLINE : 0));
		else
			ibx_qp_wr_write(&wr[0], sge[0], k, op->raddr, op->rkey, wr_id,
					(sig ? IBX_QP_SIGNALED : 0) | IBX_QP_INLINE);
		op->pos = op->n;
		st = ibx_qp_chain_post(p, wr);
		return st == IBX_OK ? IBX_INPROGRESS : st;
	}

	if (op->pos == 0 && is_read && op->n == 1 && get_bcopy_fits(path, total)) {
		if (qp_sq_space(p) == 0)
			return rma_busy(p, is_imm);
		op->pos = op->n;
		return get_bcopy_post(p, op->iov[0].iov_base, total, op->raddr, op->rkey, op->req);
	}
	return rma_start_chain(p, op, from_queue, maxsge);
}

/* rma_start's general case: registered buffers, any number of WQEs of at
 * most @maxsge entries each (rma_start's, already capped at 32). */
static __attribute__((noinline)) ibx_status_t rma_start_chain(qp_peer_t *p, qp_op_t *op,
							      bool from_queue, uint32_t maxsge)
{
	qp_path_t *path = p->path;
	bool is_read = op->kind == OP_GET, is_imm = op->kind == OP_PUT_IMM;
	struct ibv_send_wr wr[CHAIN_MAX];
	struct ibv_sge sge[CHAIN_MAX][32];
	int nwr = 0;
	ibx_status_t st;

	if (!op->regs && op->n > 0) {
		qp_regs_t *regs = calloc(1, sizeof(*regs) + (size_t)op->n * sizeof(regs->r[0]));

		if (!regs) {
			st = IBX_ERR_NO_MEMORY;
			goto fail;
		}
		regs->n = op->n;
		st = ibx_rcache_ogr_get(path->rcache, op->iov, (size_t)op->n, regs->r);
		if (st != IBX_OK) {
			ibx_error("peer %d: registering %d buffer(s) for %s failed: %s", p->rank,
				  op->n, is_read ? "RDMA READ" : "RDMA WRITE", ibx_status_str(st));
			free(regs);
			goto fail;
		}
		op->regs = regs;
	}
	do {
		uint32_t k = 0;
		uint64_t bytes = 0, wr_id;
		qp_sqe_t *e;
		bool last, sig;
		enum ibv_wr_opcode opc;

		if (qp_sq_space(p) == 0)
			break;
		while (op->pos < op->n && k < maxsge) {
			const struct iovec *v = &op->iov[op->pos];

			if (v->iov_len) {
				if (k && bytes + v->iov_len > path->max_msg)
					break;
				sge[nwr][k++] =
				    (struct ibv_sge){(uintptr_t)v->iov_base, (uint32_t)v->iov_len,
						     ibx_rcache_region_lkey(op->regs->r[op->pos])};
				bytes += v->iov_len;
			}
			op->pos++;
		}
		/* trailing empty buffers belong to this WQE: it is the last */
		while (op->pos < op->n && op->iov[op->pos].iov_len == 0)
			op->pos++;
		last = op->pos == op->n;
		opc = is_read ? IBV_WR_RDMA_READ
			      : (last && is_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE);
		e = qp_sqe_next(p, SQE_RMA, opc, last && (op->req || (nwr == 0 && sq_idle(p))),
				&wr_id);
		e->req = op->req;
		e->last = last;
		e->bytes = (uint32_t)bytes;
		sig = e->signaled;
		if (last) {
			e->aux = op->regs;
			op->regs = NULL;
		}
		ibx_qp_wr_write(&wr[nwr], sge[nwr], (int)k, op->raddr + op->roff, op->rkey, wr_id,
				sig ? IBX_QP_SIGNALED : 0);
		wr[nwr].opcode = opc;
		if (opc == IBV_WR_RDMA_WRITE_WITH_IMM)
			wr[nwr].imm_data = htobe32(op->imm);
		op->roff += bytes;
		if (nwr)
			wr[nwr - 1].next = &wr[nwr];
		nwr++;
		if (nwr == CHAIN_MAX && !last) {
			st = ibx_qp_chain_post(p, wr);
			if (st != IBX_OK)
				return st;
			nwr = 0;
		}
	} while (op->pos < op->n);
	if (nwr) {
		st = ibx_qp_chain_post(p, wr);
		if (st != IBX_OK)
			return st;
	}
	if (op->pos < op->n)
		return rma_busy(p, is_imm);
	return IBX_INPROGRESS;

fail:
	if (is_imm)
		qp_credit_undo(p);
	return ibx_qp_rma_op_fail(p, op, from_queue, st);
}

/* ---- atomics -------------------------------------------------------------------- */

/* Posts an 8-byte atomic (OP_FADD: add @a; OP_CSWAP: compare @a, swap @b);
 * the old value reaches @result at the completion. */
static inline ibx_status_t amo_post(qp_peer_t *p, enum qp_op_kind kind, uint64_t raddr,
				    uint32_t rkey, uint64_t a, uint64_t b, uint64_t *result,
				    ibx_request_t *req)
{
	qp_path_t *path = p->path;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	uint64_t wr_id;
	uint32_t slot;
	qp_sqe_t *e;
	ibx_status_t st;

	if (qp_sq_space(p) == 0 || path->amo_nfree == 0)
		return IBX_ERR_BUSY;
	slot = path->amo_free[--path->amo_nfree];
	sge = (struct ibv_sge){(uintptr_t)&path->amo[slot], 8, path->amo_mr->lkey};
	/* the result is copied out at the completion: always signalled */
	e = qp_sqe_next(p, SQE_AMO,
			kind == OP_FADD ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP,
			true, &wr_id);
	e->req = req;
	e->last = 1;
	e->aux = (void *)(uintptr_t)(slot + 1);
	e->result = result;
	if (kind == OP_FADD)
		ibx_qp_wr_fetch_add(&wr, &sge, raddr, rkey, a, wr_id, IBX_QP_SIGNALED);
	else
		ibx_qp_wr_cswap(&wr, &sge, raddr, rkey, a, b, wr_id, IBX_QP_SIGNALED);
	st = ibx_qp_chain_post(p, &wr);
	return st == IBX_OK ? IBX_INPROGRESS : st;
}

static IBX_HOT ibx_status_t amo_start(qp_peer_t *p, qp_op_t *op)
{
	return amo_post(p, op->kind, op->raddr, op->rkey, op->a, op->b, op->result, op->req);
}

/* ---- the operation FIFO's entries ------------------------------------------------ */

/* Started by a call (rma_submit, inlined there) or from the FIFO
 * (ibx_qp_rma_op_start). */
static inline ibx_status_t rma_op_start(qp_peer_t *p, qp_op_t *op, bool from_queue)
{
	ibx_status_t st;

	switch (op->kind) {
	case OP_PUT:
	case OP_PUT_IMM:
	case OP_GET:
		st = rma_start(p, op, from_queue);
		if (st == IBX_OK) { /* zero bytes */
			if (p->rma_outstanding)
				p->rma_outstanding--;
			if (from_queue && op->req)
				ibx_req_complete(op->req, IBX_OK);
		}
		return st;
	case OP_FADD:
	case OP_CSWAP: return amo_start(p, op);
	}
	return IBX_ERR_INVALID_PARAM;
}

ibx_status_t ibx_qp_rma_op_start(qp_peer_t *p, qp_op_t *op, bool from_queue)
{
	return rma_op_start(p, op, from_queue);
}

/* ---- the path ops ------------------------------------------------------------- */

/* An operation starts: the caller's request, if any, is in progress until
 * its last WQE completes, and the peer's flush waits for it. */
static inline void rma_begin(qp_peer_t *p, ibx_request_t *req)
{
	if (req) {
		req->completed = 0;
		req->status = IBX_INPROGRESS;
	}
	p->rma_outstanding++;
}

/* Nothing queued before a new operation, the peer alive and a send-queue
 * slot free: a small one can go straight to its WQE. */
static inline bool rma_direct_ok(const qp_peer_t *p)
{
	return !p->pend_head && p->error == IBX_OK && qp_sq_space(p) > 0;
}

static IBX_HOT ibx_status_t rma_submit(ibx_peer_t *peer, qp_op_t *op)
{
	qp_peer_t *p = peer->path;
	ibx_status_t st;

	if (ibx_unlikely(p->error != IBX_OK))
		return p->error;
	rma_begin(p, op->req);
	st = ibx_qp_op_submit(p, op, rma_op_start);
	if (st == IBX_OK && op->req) {
		op->req->status = IBX_OK;
		op->req->completed = 1;
	}
	return st;
}

static IBX_HOT ibx_status_t iov_check(qp_peer_t *p, const struct iovec *iov, int n)
{
	if (n < 0 || (n > 0 && !iov))
		return IBX_ERR_INVALID_PARAM;
	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len > p->path->max_msg) {
			ibx_error("peer %d: a %zu-byte block exceeds the port's message size %llu",
				  p->rank, iov[i].iov_len, (unsigned long long)p->path->max_msg);
			return IBX_ERR_INVALID_PARAM;
		}
	}
	return IBX_OK;
}

IBX_HOT ibx_status_t ibx_qp_rma_put(ibx_peer_t *peer, const struct iovec *src, int n,
				    uint64_t raddr, uint32_t rkey, ibx_request_t *req)
{
	qp_op_t op = {.kind = OP_PUT, .req = req, .raddr = raddr, .rkey = rkey, .iov = src, .n = n};
	ibx_status_t st = iov_check(peer->path, src, n);

	return st != IBX_OK ? st : rma_submit(peer, &op);
}

/* The general path of a get: an operation record, queued if need be. */
static __attribute__((noinline)) ibx_status_t rma_get_op(ibx_peer_t *peer, const struct iovec *dst,
							 int n, uint64_t raddr, uint32_t rkey,
							 ibx_request_t *req)
{
	qp_op_t op = {.kind = OP_GET, .req = req, .raddr = raddr, .rkey = rkey, .iov = dst, .n = n};
	ibx_status_t st = iov_check(peer->path, dst, n);

	return st != IBX_OK ? st : rma_submit(peer, &op);
}

IBX_HOT ibx_status_t ibx_qp_rma_get(ibx_peer_t *peer, const struct iovec *dst, int n,
				    uint64_t raddr, uint32_t rkey, ibx_request_t *req)
{
	qp_peer_t *p = peer->path;

	/* one small buffer, nothing queued before it, a slot free: straight
	 * to its WQE, without the operation record's dispatch */
	if (n == 1 && dst && dst[0].iov_len && rma_direct_ok(p) &&
	    get_bcopy_fits(p->path, dst[0].iov_len)) {
		rma_begin(p, req);
		return get_bcopy_post(p, dst[0].iov_base, dst[0].iov_len, raddr, rkey, req);
	}
	return rma_get_op(peer, dst, n, raddr, rkey, req);
}

ibx_status_t ibx_qp_rma_put_imm(ibx_peer_t *peer, const struct iovec *src, int n, uint64_t raddr,
				uint32_t rkey, uint32_t imm, ibx_request_t *req)
{
	qp_op_t op = {.kind = OP_PUT_IMM,
		      .req = req,
		      .raddr = raddr,
		      .rkey = rkey,
		      .imm = imm,
		      .iov = src,
		      .n = n};
	ibx_status_t st = iov_check(peer->path, src, n);

	return st != IBX_OK ? st : rma_submit(peer, &op);
}

/* The general path of an atomic: an operation record, queued if need be. */
static __attribute__((noinline)) ibx_status_t amo_op(ibx_peer_t *peer, enum qp_op_kind kind,
						     uint64_t raddr, uint32_t rkey, uint64_t a,
						     uint64_t b, uint64_t *result,
						     ibx_request_t *req)
{
	qp_op_t op = {.kind = kind,
		      .req = req,
		      .raddr = raddr,
		      .rkey = rkey,
		      .a = a,
		      .b = b,
		      .result = result};

	return rma_submit(peer, &op);
}

/* An atomic: straight to its WQE when nothing is queued before it and a
 * slot is free, else as an operation record (queued if need be). */
static inline ibx_status_t amo_submit(ibx_peer_t *peer, enum qp_op_kind kind, uint64_t raddr,
				      uint32_t rkey, uint64_t a, uint64_t b, uint64_t *result,
				      ibx_request_t *req)
{
	qp_peer_t *p = peer->path;

	if (raddr & 7)
		return IBX_ERR_INVALID_PARAM;
	if (rma_direct_ok(p) && p->path->amo_nfree > 0) {
		rma_begin(p, req);
		return amo_post(p, kind, raddr, rkey, a, b, result, req);
	}
	return amo_op(peer, kind, raddr, rkey, a, b, result, req);
}

IBX_HOT ibx_status_t ibx_qp_rma_fetch_add(ibx_peer_t *peer, uint64_t raddr, uint32_t rkey,
					  uint64_t add, uint64_t *result, ibx_request_t *req)
{
	return amo_submit(peer, OP_FADD, raddr, rkey, add, 0, result, req);
}

IBX_HOT ibx_status_t ibx_qp_rma_cswap(ibx_peer_t *peer, uint64_t raddr, uint32_t rkey,
				      uint64_t compare, uint64_t swap, uint64_t *result,
				      ibx_request_t *req)
{
	return amo_submit(peer, OP_CSWAP, raddr, rkey, compare, swap, result, req);
}

IBX_HOT ibx_status_t ibx_qp_rma_flush(ibx_peer_t *peer)
{
	qp_peer_t *p = peer->path;
	qp_path_t *path = p->path;
	unsigned idle = 0;

	while (p->error == IBX_OK && p->rma_outstanding) {
		/* unsignalled WQEs complete with the next signalled one */
		if (!p->pend_head && qp_sq_needs_flush(p))
			ibx_qp_post_flush_wqe(p);
		/* our CQ first (what we wait for is there); the whole engine
		 * every FLUSH_ALL_EVERY idle passes, for the other paths' peers */
		if (ibx_qp_path_progress(path->ctx, path) > 0)
			idle = 0;
		else if (++idle % FLUSH_ALL_EVERY == 0 && ibx_progress(path->ctx) > 0)
			idle = 0;
		else if (idle > 2000)
			sched_yield();
	}
	return p->error;
}

/* ---- memory for peers ------------------------------------------------------------ */

static qp_path_t *ctx_path(ibx_ctx_t *ctx)
{
	for (int i = 0; i < ctx->npaths; i++)
		if (ctx->paths[i].mod == &ibx_qp_path_module)
			return ctx->paths[i].state;
	return NULL;
}

ibx_status_t ibx_qp_path_mem_reg(ibx_ctx_t *ctx, void *addr, size_t len, ibx_mem_key_t *key_p,
				 void **handle_p)
{
	qp_path_t *path = ctx ? ctx_path(ctx) : NULL;
	ibx_rcache_region_t *reg;
	ibx_status_t st;

	if (!path)
		return IBX_ERR_NOT_FOUND;
	if (!addr || !len)
		return IBX_ERR_INVALID_PARAM;
	st = ibx_rcache_region_get(path->rcache, addr, len, &reg);
	if (st != IBX_OK)
		return st;
	memset(key_p, 0, sizeof(*key_p));
	key_p->addr = (uintptr_t)addr;
	key_p->len = len;
	key_p->rkey = ibx_rcache_region_rkey(reg);
	key_p->lkey = ibx_rcache_region_lkey(reg);
	*handle_p = reg;
	return IBX_OK;
}

bool ibx_qp_path_present(ibx_ctx_t *ctx)
{
	return ctx_path(ctx) != NULL;
}

ibx_peer_t *ibx_qp_path_self(ibx_ctx_t *ctx)
{
	qp_path_t *path = ctx_path(ctx);

	return path && path->self && path->self->error == IBX_OK ? &path->self_ipeer : NULL;
}

ibx_peer_t *ibx_qp_path_nic_peer(ibx_ctx_t *ctx, int rank)
{
	qp_path_t *path = ctx_path(ctx);
	qp_peer_t *p;

	if (!path || rank < 0 || rank >= ctx->size || rank == ctx->rank)
		return NULL;
	p = path->by_rank[rank];
	return p && p->error == IBX_OK && p->ipeer->path == p ? p->ipeer : NULL;
}

void ibx_qp_path_mem_dereg(ibx_ctx_t *ctx, void *handle)
{
	qp_path_t *path = ctx ? ctx_path(ctx) : NULL;

	if (path && handle)
		ibx_rcache_region_put(path->rcache, handle);
}

ibx_status_t ibx_qp_path_set_imm_handler(ibx_ctx_t *ctx, ibx_qp_imm_cb_t cb, void *arg)
{
	qp_path_t *path = ctx ? ctx_path(ctx) : NULL;

	if (!path)
		return IBX_ERR_NOT_FOUND;
	path->imm_cb = cb;
	path->imm_arg = arg;
	return IBX_OK;
}
