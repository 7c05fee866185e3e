/*
 * ops.c — the one-sided operations of the engine API: put, get (and their
 * gather / scatter forms), 8-byte atomics and flush, on (remote address,
 * remote key). Each goes the route its key chose at unpack (rma_int.h):
 *
 *   DIRECT  memcpy / C11 atomics on memory mapped here; complete on return
 *   CMA     the shm path's put / get (process_vm_writev / readv); atomics
 *           as read-modify-write under the owner's RMW lock
 *   VERBS   the verbs path's RDMA WRITE / READ / atomics; complete when the
 *           request completes, or at flush
 *
 * Every address range is checked against the key before anything moves,
 * so an origin can never touch the owner's memory outside what it mapped.
 */
#include "rma_int.h"
#include "qp/qp.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define IOV_MAX_RMA 1024 /* longest local list per call */

/* ---- checks ------------------------------------------------------------------------ */

static bool range_ok(const ibx_rkey_t *rk, uint64_t raddr, size_t len)
{
	if (raddr < rk->base || raddr - rk->base > rk->len)
		return false;
	return len <= rk->len - (raddr - rk->base);
}

static ibx_status_t iov_total(const struct iovec *iov, int n, size_t *total_p)
{
	size_t t = 0;

	if (n < 0 || n > IOV_MAX_RMA || (n > 0 && !iov))
		return IBX_ERR_INVALID_PARAM;
	for (int i = 0; i < n; i++) {
		if (!iov[i].iov_base && iov[i].iov_len)
			return IBX_ERR_INVALID_PARAM;
		if (t + iov[i].iov_len < t)
			return IBX_ERR_OVERFLOW;
		t += iov[i].iov_len;
	}
	*total_p = t;
	return IBX_OK;
}

static IBX_HOT ibx_status_t op_check(ibx_ctx_t *ctx, const ibx_rkey_t *rk, uint64_t raddr,
				     size_t len)
{
	if (ibx_unlikely(!ctx || !rk))
		return IBX_ERR_INVALID_PARAM;
	if (ibx_unlikely(!range_ok(rk, raddr, len))) {
		ibx_debug("rma: [0x%llx, +%zu) is outside rank %d's mapping [0x%llx, +%llu)",
			  (unsigned long long)raddr, len, rk->owner, (unsigned long long)rk->base,
			  (unsigned long long)rk->len);
		return IBX_ERR_INVALID_PARAM;
	}
	if (rk->owner != ctx->rank && ibx_unlikely(ctx->peers[rk->owner].error != IBX_OK))
		return ctx->peers[rk->owner].error;
	return IBX_OK;
}

static void req_start(ibx_request_t *req, int peer)
{
	if (!req)
		return;
	ibx_req_init(req, 0);
	req->peer = peer;
}

/* Complete before return: as with a send that finished at once, the
 * request is marked complete and its callback is not called. */
static ibx_status_t req_done(ibx_request_t *req)
{
	if (req) {
		req->status = IBX_OK;
		req->completed = 1;
	}
	return IBX_OK;
}

static char *direct_at(const ibx_rkey_t *rk, uint64_t raddr)
{
	/* integer arithmetic: a zero-length key may have no memory (NULL) */
	return (char *)((uintptr_t)rk->direct + (uintptr_t)(raddr - rk->base));
}

ibx_status_t ibx_rkey_ptr(const ibx_rkey_t *rkey, uint64_t raddr, void **ptr_p)
{
	if (!rkey || !ptr_p)
		return IBX_ERR_INVALID_PARAM;
	if (!range_ok(rkey, raddr, 0))
		return IBX_ERR_INVALID_PARAM;
	/* CPU atomics through the pointer would not be atomic with the
	 * NIC's (amo_peer), nor with node-local peers' updates under our RMW
	 * lock (rmw_self): not direct in the sense this call promises */
	if (rkey->route != RMA_ROUTE_DIRECT || rkey->amo_peer || rkey->rmw_self)
		return IBX_ERR_UNSUPPORTED;
	*ptr_p = direct_at(rkey, raddr);
	return IBX_OK;
}

ibx_status_t ibx_rkey_map(const ibx_rkey_t *rkey, uint64_t raddr, void **ptr_p)
{
	char *base;

	if (!rkey || !ptr_p)
		return IBX_ERR_INVALID_PARAM;
	if (!range_ok(rkey, raddr, 0))
		return IBX_ERR_INVALID_PARAM;
	base = rkey->direct ? rkey->direct : rkey->seg_base;
	if (!base)
		return IBX_ERR_UNSUPPORTED;
	*ptr_p = base + (raddr - rkey->base);
	return IBX_OK;
}

/* ---- put / get ------------------------------------------------------------------- */

/* Inlined in each entry point: a small put or get is a latency path. */
static inline __attribute__((always_inline)) ibx_status_t xfer(ibx_ctx_t *ctx,
							       const struct iovec *iov, int n,
							       uint64_t raddr, const ibx_rkey_t *rk,
							       ibx_request_t *req, bool put)
{
	ibx_peer_t *peer;
	size_t total;
	ibx_status_t s;

	s = iov_total(iov, n, &total);
	if (s != IBX_OK)
		return s;
	s = op_check(ctx, rk, raddr, total);
	if (s != IBX_OK)
		return s;
	req_start(req, rk->owner);
	if (rk->route == RMA_ROUTE_DIRECT) {
		char *at = direct_at(rk, raddr);

		for (int i = 0; i < n; i++) {
			if (put)
				memmove(at, iov[i].iov_base, iov[i].iov_len);
			else
				memmove(iov[i].iov_base, at, iov[i].iov_len);
			at += iov[i].iov_len;
		}
		return req_done(req);
	}
	peer = &ctx->peers[rk->owner];
	peer->rma_via |= IBX_RMA_VIA_PATH;
	if (put)
		return peer->ops->put(peer, iov, n, raddr, rk->verbs_rkey, req);
	return peer->ops->get(peer, iov, n, raddr, rk->verbs_rkey, req);
}

IBX_HOT ibx_status_t ibx_put(ibx_ctx_t *ctx, const void *buf, size_t len, uint64_t raddr,
			     const ibx_rkey_t *rkey, ibx_request_t *req)
{
	struct iovec v = {(void *)buf, len};

	if (!buf && len)
		return IBX_ERR_INVALID_PARAM;
	return xfer(ctx, &v, 1, raddr, rkey, req, true);
}

IBX_HOT ibx_status_t ibx_get(ibx_ctx_t *ctx, void *buf, size_t len, uint64_t raddr,
			     const ibx_rkey_t *rkey, ibx_request_t *req)
{
	struct iovec v = {buf, len};

	if (!buf && len)
		return IBX_ERR_INVALID_PARAM;
	return xfer(ctx, &v, 1, raddr, rkey, req, false);
}

ibx_status_t ibx_putv(ibx_ctx_t *ctx, const struct iovec *iov, int iovcnt, uint64_t raddr,
		      const ibx_rkey_t *rkey, ibx_request_t *req)
{
	return xfer(ctx, iov, iovcnt, raddr, rkey, req, true);
}

ibx_status_t ibx_getv(ibx_ctx_t *ctx, const struct iovec *iov, int iovcnt, uint64_t raddr,
		      const ibx_rkey_t *rkey, ibx_request_t *req)
{
	return xfer(ctx, iov, iovcnt, raddr, rkey, req, false);
}

/* ---- atomics ---------------------------------------------------------------------- */

/* The new value of a word that held @old. */
static uint64_t amo_apply(ibx_atomic_op_t op, uint64_t old, uint64_t value, uint64_t compare)
{
	switch (op) {
	case IBX_ATOMIC_ADD:
	case IBX_ATOMIC_FADD: return old + value;
	case IBX_ATOMIC_SWAP: return value;
	case IBX_ATOMIC_CSWAP: return old == compare ? value : old;
	}
	return old;
}

/* A word in memory mapped here, shared with node-local peers that use the
 * same instructions on it. */
static uint64_t amo_cpu(uint64_t *w, ibx_atomic_op_t op, uint64_t value, uint64_t compare)
{
	uint64_t old;

	switch (op) {
	case IBX_ATOMIC_ADD:
	case IBX_ATOMIC_FADD: return __atomic_fetch_add(w, value, __ATOMIC_SEQ_CST);
	case IBX_ATOMIC_SWAP: return __atomic_exchange_n(w, value, __ATOMIC_SEQ_CST);
	case IBX_ATOMIC_CSWAP:
		old = compare;
		__atomic_compare_exchange_n(w, &old, value, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
		return old;
	}
	return 0;
}

/*
 * The owner's RMW lock: the word holds the holder's pid. Held for one
 * read-modify-write (two system calls at most), so waiters spin with the
 * engine's waiting rules; a holder that died is detected by its pid and
 * becomes an error, not a hang.
 */
static ibx_status_t rmw_lock(ibx_ctx_t *ctx, rma_ctl_t *ctl, int owner)
{
	uint64_t me = (uint64_t)getpid();
	unsigned idle = 0;

	for (unsigned spins = 1;; spins++) {
		uint64_t cur = 0;

		if (atomic_compare_exchange_weak_explicit(
			&ctl->rmw_lock, &cur, me, memory_order_acquire, memory_order_relaxed))
			return IBX_OK;
		if (spins % 4096 == 0 && cur && !ibx_pid_alive((pid_t)cur)) {
			ibx_error("rma: process %llu died holding rank %d's atomic lock",
				  (unsigned long long)cur, owner);
			return IBX_ERR_UNREACHABLE;
		}
		ibx_progress_wait(ctx, &idle);
	}
}

static void rmw_unlock(rma_ctl_t *ctl)
{
	atomic_store_explicit(&ctl->rmw_lock, 0, memory_order_release);
}

/* The bytes of a word that an update changes, [*off, *off + return): the
 * locked read-modify-writes below write back only those, so that a plain
 * put into the word's other bytes (a neighbouring element: not under the
 * lock) between the read and the write is not undone. 0: nothing changed. */
static unsigned changed_bytes(uint64_t old, uint64_t nv, unsigned *off)
{
	const unsigned char *a = (const unsigned char *)&old, *b = (const unsigned char *)&nv;
	unsigned lo = 0, hi = 8;

	while (lo < 8 && a[lo] == b[lo])
		lo++;
	while (hi > lo && a[hi - 1] == b[hi - 1])
		hi--;
	*off = lo;
	return hi - lo;
}

/* Read-modify-write of a word in memory this process cannot map: read and
 * write it through the path (CMA) while holding the owner's lock. */
static ibx_status_t amo_locked_path(ibx_ctx_t *ctx, const ibx_rkey_t *rk, ibx_atomic_op_t op,
				    uint64_t value, uint64_t compare, uint64_t raddr,
				    uint64_t *old_p)
{
	ibx_peer_t *peer = &ctx->peers[rk->owner];
	uint64_t old, nv;
	struct iovec v = {&old, 8};
	ibx_status_t s;

	if (!rk->ctl) {
		ibx_error("rma: atomics on rank %d's memory need its control page, which "
			  "could not be mapped here",
			  rk->owner);
		return IBX_ERR_UNSUPPORTED;
	}
	s = rmw_lock(ctx, rk->ctl, rk->owner);
	if (s != IBX_OK)
		return s;
	s = peer->ops->get(peer, &v, 1, raddr, 0, NULL);
	if (s == IBX_OK) {
		unsigned off, n;

		nv = amo_apply(op, old, value, compare);
		n = changed_bytes(old, nv, &off);
		if (n) {
			struct iovec w = {(char *)&nv + off, n};

			s = peer->ops->put(peer, &w, 1, raddr + off, 0, NULL);
		}
	}
	rmw_unlock(rk->ctl);
	if (s == IBX_OK)
		*old_p = old;
	return s;
}

/* Our own private memory: the same lock as node-local peers take, so that
 * the update is atomic with theirs. */
static uint64_t amo_locked_self(ibx_ctx_t *ctx, const ibx_rkey_t *rk, uint64_t *w,
				ibx_atomic_op_t op, uint64_t value, uint64_t compare)
{
	uint64_t old, nv;
	unsigned off, n;

	if (!rk->ctl || rmw_lock(ctx, rk->ctl, rk->owner) != IBX_OK)
		return amo_cpu(w, op, value, compare);
	old = __atomic_load_n(w, __ATOMIC_RELAXED);
	nv = amo_apply(op, old, value, compare);
	n = changed_bytes(old, nv, &off);
	/* byte by byte: a neighbour's bytes in the word are not ours to write */
	for (unsigned i = off; i < off + n; i++)
		__atomic_store_n((unsigned char *)w + i, ((unsigned char *)&nv)[i],
				 __ATOMIC_RELAXED);
	rmw_unlock(rk->ctl);
	return old;
}

/* SWAP over verbs: the NIC has no exchange, so compare-and-swap until the
 * compared value was the one in memory. Completes before return. */
static ibx_status_t amo_verbs_swap(ibx_ctx_t *ctx, ibx_peer_t *peer, uint32_t key, uint64_t value,
				   uint64_t raddr, uint64_t *old_p)
{
	uint64_t guess = 0, seen;
	ibx_request_t r;
	ibx_status_t s;

	for (;;) {
		ibx_req_init(&r, 0);
		r.cb = NULL;
		s = peer->ops->cswap(peer, raddr, key, guess, value, &seen, &r);
		if (s == IBX_INPROGRESS)
			s = ibx_wait(ctx, &r);
		if (s != IBX_OK)
			return s;
		if (seen == guess)
			break;
		guess = seen;
	}
	*old_p = seen;
	return IBX_OK;
}

static IBX_HOT ibx_status_t amo_verbs(ibx_ctx_t *ctx, const ibx_rkey_t *rk, ibx_atomic_op_t op,
				      uint64_t value, uint64_t compare, uint64_t *result,
				      uint64_t raddr, ibx_request_t *req)
{
	ibx_peer_t *peer = rk->amo_peer ? rk->amo_peer : &ctx->peers[rk->owner];
	rma_state_t *st = ctx->rma;
	ibx_status_t s;
	uint32_t key = rk->amo_peer ? rk->amo_rkey : rk->verbs_rkey;

	/* the loopback QP is our own path's: a flush of ourselves completes it */
	ctx->peers[rk->owner].rma_via |=
	    rk->amo_peer && rk->owner != ctx->rank ? IBX_RMA_VIA_NIC : IBX_RMA_VIA_PATH;
	switch (op) {
	case IBX_ATOMIC_ADD:
		return peer->ops->fetch_add(peer, raddr, key, value, &st->scratch, req);
	case IBX_ATOMIC_FADD: return peer->ops->fetch_add(peer, raddr, key, value, result, req);
	case IBX_ATOMIC_CSWAP:
		return peer->ops->cswap(peer, raddr, key, compare, value, result, req);
	case IBX_ATOMIC_SWAP:
		s = amo_verbs_swap(ctx, peer, key, value, raddr, result);
		return s == IBX_OK ? req_done(req) : s;
	}
	return IBX_ERR_INVALID_PARAM;
}

IBX_HOT ibx_status_t ibx_atomic(ibx_ctx_t *ctx, ibx_atomic_op_t op, uint64_t value,
				uint64_t compare, uint64_t *result, uint64_t raddr,
				const ibx_rkey_t *rkey, ibx_request_t *req)
{
	uint64_t old = 0;
	ibx_status_t s;

	if ((unsigned)op > IBX_ATOMIC_CSWAP || (op != IBX_ATOMIC_ADD && !result) || (raddr & 7))
		return IBX_ERR_INVALID_PARAM;
	s = op_check(ctx, rkey, raddr, 8);
	if (s != IBX_OK)
		return s;
	req_start(req, rkey->owner);
	if (rkey->amo_peer)
		return amo_verbs(ctx, rkey, op, value, compare, result, raddr, req);
	switch (rkey->route) {
	case RMA_ROUTE_VERBS: return amo_verbs(ctx, rkey, op, value, compare, result, raddr, req);
	case RMA_ROUTE_CMA:
		s = amo_locked_path(ctx, rkey, op, value, compare, raddr, &old);
		if (s != IBX_OK)
			return s;
		break;
	case RMA_ROUTE_DIRECT: {
		uint64_t *w = (uint64_t *)(void *)direct_at(rkey, raddr);

		if (rkey->owner == ctx->rank && !(rkey->flags & RMA_KEY_SEG))
			old = amo_locked_self(ctx, rkey, w, op, value, compare);
		else
			old = amo_cpu(w, op, value, compare);
		break;
	}
	}
	if (result)
		*result = old;
	return req_done(req);
}

/* ---- flush ------------------------------------------------------------------------- */

/* Completes the engine operations towards @peer (those through a path:
 * direct and CMA operations are complete when they return). */
static IBX_HOT ibx_status_t flush_peer(ibx_ctx_t *ctx, int peer)
{
	ibx_peer_t *p = &ctx->peers[peer];
	uint8_t via = p->rma_via;

	if (ibx_likely(via == 0))
		return IBX_OK;
	if (peer == ctx->rank) { /* only atomics through the loopback QP */
		ibx_peer_t *lb = ibx_qp_path_self(ctx);

		p->rma_via = 0;
		return lb ? lb->ops->flush(lb) : IBX_ERR_UNREACHABLE;
	}
	if (via & IBX_RMA_VIA_NIC) { /* atomics on a node-local owner's memory */
		ibx_peer_t *np = ibx_qp_path_nic_peer(ctx, peer);
		ibx_status_t s;

		p->rma_via &= (uint8_t)~IBX_RMA_VIA_NIC;
		s = np ? np->ops->flush(np) : IBX_ERR_UNREACHABLE;
		if (s != IBX_OK)
			return s;
	}
	if (!(via & IBX_RMA_VIA_PATH))
		return IBX_OK;
	/* a lost peer keeps its mark: every later flush reports it */
	if (p->error != IBX_OK)
		return p->error;
	p->rma_via = 0;
	return p->ops->flush(p);
}

IBX_HOT ibx_status_t ibx_flush(ibx_ctx_t *ctx, int peer)
{
	if (!ctx || peer < 0 || peer >= ctx->size)
		return IBX_ERR_INVALID_PARAM;
	/* order direct and CMA operations before whatever the caller does next */
	atomic_thread_fence(memory_order_seq_cst);
	return flush_peer(ctx, peer);
}

ibx_status_t ibx_flush_all(ibx_ctx_t *ctx)
{
	ibx_status_t first = IBX_OK;

	if (!ctx)
		return IBX_ERR_INVALID_PARAM;
	atomic_thread_fence(memory_order_seq_cst);
	for (int r = 0; r < ctx->size; r++) {
		ibx_status_t s = flush_peer(ctx, r);

		if (s != IBX_OK && first == IBX_OK)
			first = s;
	}
	return first;
}
