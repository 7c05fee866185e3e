/*
 * tag.c — tag matching, the self path, progress and wait.
 *
 * Matching is done once, here, for every path. A path hands each arriving
 * message to the tag layer in the order its sender sent it, which gives
 * MPI's non-overtaking rule:
 *
 *   path progress ──► ibx_tag_arrive_eager(src, tag, data, len)
 *                 └─► ibx_tag_arrive_rts(src, tag, len, rts)     (rendezvous)
 *
 *        ┌─────────────── posted receives (post order) ───────────────┐
 *   arrival: first posted receive that matches?  yes → deliver / rndv_recv
 *                                                no  → unexpected queue
 *   ibx_tag_recv: first unexpected message that matches? yes → deliver
 *                                                        no  → posted queue
 *
 * Match rule: (src == IBX_ANY_SOURCE || src == msg.src) &&
 *             (msg.tag & mask) == (tag & mask).
 *
 * Eager data that arrives unexpected is copied (into the entry itself when
 * short); a rendezvous announcement keeps the path's descriptor (at most
 * IBX_RTS_MAX bytes) until a receive matches it, then the path moves the
 * data straight into the receive buffer.
 *
 * Self: a send to oneself is delivered as an eager arrival (copied), except
 * IBX_SEND_SYNC, which completes only when matched: it waits in the
 * unexpected queue holding the send request and is copied from the sender's
 * buffer at match time.
 *
 * Matched probe (MPI_Mprobe): ibx_tag_mprobe takes the first matching
 * unexpected message out of the queue onto a `claimed` list, so no later
 * receive or probe can match it; ibx_tag_mrecv then delivers exactly that
 * entry (the same delivery a receive does), whatever was posted meanwhile:
 *
 *   unexpected queue ──ibx_tag_mprobe──► claimed (handle) ──ibx_tag_mrecv──► request
 */
#include "ibx_int.h"

#include <sched.h>
#include <stdlib.h>

enum unexp_kind { UNEXP_EAGER, UNEXP_RTS, UNEXP_SELF_SYNC };

#define UNEXP_INLINE 192 /* eager payloads up to this size live in the entry */

typedef struct ibx_unexp {
	struct ibx_unexp *next;
	int kind;
	int src;
	ibx_tag_t tag;
	size_t len;
	void *data;	     /* eager: inline_buf or malloc'ed */
	ibx_request_t *sreq; /* self sync send */
	size_t rts_len;
	union {
		unsigned char rts[IBX_RTS_MAX];
		unsigned char inline_buf[UNEXP_INLINE];
	} u;
} ibx_unexp_t;

/* A small free list of entries in the context: unexpected bursts do not
 * hit malloc for every message once warmed up. */
#define UNEXP_FREE_MAX 1024

static ibx_unexp_t *unexp_alloc(ibx_ctx_t *ctx)
{
	ibx_unexp_t *e = ctx->unexp_free;

	if (e) {
		ctx->unexp_free = e->next;
		ctx->unexp_free_count--;
		return e;
	}
	return malloc(sizeof(*e));
}

static void unexp_release(ibx_ctx_t *ctx, ibx_unexp_t *e)
{
	if (e->kind == UNEXP_EAGER && e->data != e->u.inline_buf)
		free(e->data);
	if (ctx->unexp_free_count >= UNEXP_FREE_MAX) {
		free(e);
		return;
	}
	e->next = ctx->unexp_free;
	ctx->unexp_free = e;
	ctx->unexp_free_count++;
}

static inline bool tag_matches(int want_src, ibx_tag_t want_tag, ibx_tag_t mask, int src,
			       ibx_tag_t tag)
{
	return (want_src == IBX_ANY_SOURCE || want_src == src) && ((tag ^ want_tag) & mask) == 0;
}

/* Completes @req inside the call that started it: no callback (the caller
 * sees IBX_OK), but a typed request's `done` runs as on any completion. */
static void complete_inline(ibx_request_t *req, ibx_status_t status)
{
	if (ibx_unlikely(req->dt != NULL))
		req->dt->ops->done(req, &status);
	req->status = status;
	req->completed = 1;
}

/* Copies an eager message into a matched receive and completes it. */
static void deliver_eager(ibx_request_t *req, int src, ibx_tag_t tag, const void *data, size_t len,
			  bool from_progress)
{
	size_t n = len <= req->buflen ? len : req->buflen;

	if (n)
		ibx_req_copy_in(req, 0, data, n);
	req->source = src;
	req->tag = tag;
	req->length = len;
	if (from_progress)
		ibx_req_complete(req, n == len ? IBX_OK : IBX_ERR_TRUNCATED);
	else
		complete_inline(req, n == len ? IBX_OK : IBX_ERR_TRUNCATED);
}

/* A SYNC send to self meets its receive: the first @len bytes of the send
 * into the receive, through a bounce on the stack when both are typed. */
static void self_copy(ibx_request_t *rreq, const ibx_request_t *sreq, size_t len)
{
	char bounce[4096];

	if (!ibx_req_scattered(sreq)) {
		ibx_req_copy_in(rreq, 0, sreq->buf, len);
		return;
	}
	if (!ibx_req_scattered(rreq)) {
		ibx_req_copy_out(sreq, 0, rreq->buf, len);
		return;
	}
	for (size_t off = 0; off < len; off += sizeof(bounce)) {
		size_t n = len - off < sizeof(bounce) ? len - off : sizeof(bounce);

		ibx_req_copy_out(sreq, off, bounce, n);
		ibx_req_copy_in(rreq, off, bounce, n);
	}
}

static void deliver_self_sync(ibx_request_t *rreq, ibx_request_t *sreq, int rank,
			      bool from_progress)
{
	size_t n = sreq->buflen <= rreq->buflen ? sreq->buflen : rreq->buflen;

	if (n)
		self_copy(rreq, sreq, n);
	rreq->source = rank;
	rreq->tag = sreq->tag;
	rreq->length = sreq->buflen;
	if (from_progress)
		ibx_req_complete(rreq, n == sreq->buflen ? IBX_OK : IBX_ERR_TRUNCATED);
	else
		complete_inline(rreq, n == sreq->buflen ? IBX_OK : IBX_ERR_TRUNCATED);
}

static void unexp_append(ibx_ctx_t *ctx, ibx_unexp_t *e)
{
	e->next = NULL;
	if (ctx->unexp_tail)
		ctx->unexp_tail->next = e;
	else
		ctx->unexp_head = e;
	ctx->unexp_tail = e;
}

static ibx_request_t *posted_match(ibx_ctx_t *ctx, int src, ibx_tag_t tag)
{
	ibx_request_t *r;

	ibx_rq_for_each(r, &ctx->posted)
	{
		if (tag_matches(r->peer, r->tag, r->mask, src, tag)) {
			ibx_rq_remove(&ctx->posted, r);
			return r;
		}
	}
	return NULL;
}

void ibx_tag_arrive_eager(ibx_ctx_t *ctx, int src, ibx_tag_t tag, const void *data, size_t len)
{
	ibx_request_t *req = posted_match(ctx, src, tag);
	ibx_unexp_t *e;

	if (req) {
		deliver_eager(req, src, tag, data, len, true);
		return;
	}
	e = unexp_alloc(ctx);
	if (!e)
		goto err_nomem;
	e->kind = UNEXP_EAGER;
	e->src = src;
	e->tag = tag;
	e->len = len;
	e->data = e->u.inline_buf;
	if (len > UNEXP_INLINE) {
		e->data = malloc(len);
		if (!e->data) {
			e->kind = UNEXP_RTS; /* so release does not free(data) */
			unexp_release(ctx, e);
			goto err_nomem;
		}
	}
	if (len)
		memcpy(e->data, data, len);
	unexp_append(ctx, e);
	return;
err_nomem:
	/* Losing a message silently would be worse than anything: the peer
	 * is marked failed so its receivers get an error instead of a hang. */
	ibx_error("out of memory buffering an unexpected %zu-byte message from rank %d", len, src);
	ibx_tag_peer_failed(ctx, src, IBX_ERR_NO_MEMORY);
}

static void start_rndv(ibx_ctx_t *ctx, ibx_request_t *req, int src, ibx_tag_t tag, size_t msg_len,
		       const void *rts, bool from_progress)
{
	ibx_peer_t *peer = &ctx->peers[src];
	ibx_status_t st;

	req->source = src;
	req->tag = tag;
	req->length = msg_len;
	st = peer->ops->rndv_recv(peer, rts, req);
	if (st == IBX_OK && !req->completed) {
		complete_inline(req, msg_len <= req->buflen ? IBX_OK : IBX_ERR_TRUNCATED);
	} else if (st < 0 && !req->completed) {
		if (from_progress)
			ibx_req_complete(req, st);
		else
			complete_inline(req, st);
	}
}

void ibx_tag_arrive_rts(ibx_ctx_t *ctx, int src, ibx_tag_t tag, size_t msg_len, const void *rts,
			size_t rts_len)
{
	ibx_request_t *req = posted_match(ctx, src, tag);
	ibx_unexp_t *e;

	if (req) {
		start_rndv(ctx, req, src, tag, msg_len, rts, true);
		return;
	}
	if (rts_len > IBX_RTS_MAX) {
		ibx_error("rendezvous descriptor of %zu bytes from rank %d exceeds %d", rts_len,
			  src, IBX_RTS_MAX);
		ibx_tag_peer_failed(ctx, src, IBX_ERR_CORRUPT);
		return;
	}
	e = unexp_alloc(ctx);
	if (!e) {
		ibx_error("out of memory queueing a rendezvous from rank %d", src);
		ibx_tag_peer_failed(ctx, src, IBX_ERR_NO_MEMORY);
		return;
	}
	e->kind = UNEXP_RTS;
	e->src = src;
	e->tag = tag;
	e->len = msg_len;
	e->rts_len = rts_len;
	memcpy(e->u.rts, rts, rts_len);
	unexp_append(ctx, e);
}

void ibx_tag_peer_failed(ibx_ctx_t *ctx, int peer, ibx_status_t why)
{
	ibx_request_t *r, *next;

	if (peer < 0 || peer >= ctx->size)
		return;
	if (ctx->peers[peer].error == IBX_OK)
		ctx->peers[peer].error = why;
	ibx_rq_for_each_safe(r, next, &ctx->posted)
	{
		if (r->peer == peer) {
			ibx_rq_remove(&ctx->posted, r);
			r->source = peer;
			ibx_req_complete(r, why);
		}
	}
}

/* ---- sends ----------------------------------------------------------------- */

static ibx_status_t self_send(ibx_ctx_t *ctx, ibx_request_t *req)
{
	ibx_request_t *rreq;
	ibx_unexp_t *e;

	/* (a typed send to self is packed by the typed layer: see dt_xfer.c) */
	if (!(req->flags & IBX_SEND_SYNC)) {
		ibx_tag_arrive_eager(ctx, ctx->rank, req->tag, req->buf, req->buflen);
		return IBX_OK;
	}
	rreq = posted_match(ctx, ctx->rank, req->tag);
	if (rreq) {
		deliver_self_sync(rreq, req, ctx->rank, true);
		return IBX_OK;
	}
	e = unexp_alloc(ctx);
	if (!e)
		return IBX_ERR_NO_MEMORY;
	e->kind = UNEXP_SELF_SYNC;
	e->src = ctx->rank;
	e->tag = req->tag;
	e->len = req->buflen;
	e->sreq = req;
	unexp_append(ctx, e);
	return IBX_INPROGRESS;
}

ibx_status_t ibx_tag_send(ibx_ctx_t *ctx, int dest, const void *buf, size_t len, ibx_tag_t tag,
			  unsigned flags, ibx_request_t *req)
{
	ibx_peer_t *peer;
	ibx_status_t st;

	if (ibx_unlikely(!ctx || !req || dest < 0 || dest >= ctx->size || (!buf && len) ||
			 (flags & ~IBX_SEND_SYNC)))
		return IBX_ERR_INVALID_PARAM;
	peer = &ctx->peers[dest];
	if (ibx_unlikely(peer->error != IBX_OK))
		return peer->error;
	ibx_req_init(req, IBX_REQ_SEND);
	req->buf = (void *)buf;
	req->buflen = len;
	req->tag = tag;
	req->flags = flags;
	req->peer = dest;
	if (dest == ctx->rank)
		st = self_send(ctx, req);
	else
		st = peer->ops->tag_send(peer, req);
	if (st == IBX_OK) {
		req->status = IBX_OK;
		req->completed = 1;
	}
	return st;
}

ibx_status_t ibx_tag_send_req(ibx_ctx_t *ctx, ibx_request_t *req)
{
	ibx_peer_t *peer = &ctx->peers[req->peer];
	ibx_status_t st;

	if (ibx_unlikely(peer->error != IBX_OK))
		return peer->error;
	if (req->peer == ctx->rank)
		st = self_send(ctx, req);
	else
		st = peer->ops->tag_send(peer, req);
	if (st == IBX_OK)
		complete_inline(req, IBX_OK);
	return st;
}

/* ---- receives -------------------------------------------------------------- */

/* Hands the unexpected message @e to the receive @req (initialised for
 * it) and frees the entry. */
static ibx_status_t unexp_deliver(ibx_ctx_t *ctx, ibx_unexp_t *e, ibx_request_t *req)
{
	switch (e->kind) {
	case UNEXP_EAGER: deliver_eager(req, e->src, e->tag, e->data, e->len, false); break;
	case UNEXP_SELF_SYNC:
		deliver_self_sync(req, e->sreq, e->src, false);
		ibx_req_complete(e->sreq, IBX_OK);
		break;
	case UNEXP_RTS: start_rndv(ctx, req, e->src, e->tag, e->len, e->u.rts, false); break;
	}
	unexp_release(ctx, e);
	return req->completed ? IBX_OK : IBX_INPROGRESS;
}

static ibx_unexp_t *unexp_take(ibx_ctx_t *ctx, int src, ibx_tag_t tag, ibx_tag_t mask)
{
	ibx_unexp_t *prev = NULL;

	for (ibx_unexp_t *e = ctx->unexp_head; e; prev = e, e = e->next) {
		if (!tag_matches(src, tag, mask, e->src, e->tag))
			continue;
		if (prev)
			prev->next = e->next;
		else
			ctx->unexp_head = e->next;
		if (ctx->unexp_tail == e)
			ctx->unexp_tail = prev;
		return e;
	}
	return NULL;
}

ibx_status_t ibx_tag_recv(ibx_ctx_t *ctx, int src, void *buf, size_t len, ibx_tag_t tag,
			  ibx_tag_t mask, ibx_request_t *req)
{
	if (ibx_unlikely(!ctx || !req || (!buf && len) ||
			 (src != IBX_ANY_SOURCE && (src < 0 || src >= ctx->size))))
		return IBX_ERR_INVALID_PARAM;
	ibx_req_init(req, IBX_REQ_RECV);
	req->buf = buf;
	req->buflen = len;
	req->tag = tag;
	req->mask = mask;
	req->peer = src;
	return ibx_tag_recv_req(ctx, req);
}

ibx_status_t ibx_tag_recv_req(ibx_ctx_t *ctx, ibx_request_t *req)
{
	int src = req->peer;
	ibx_unexp_t *e;

	e = ctx->unexp_head ? unexp_take(ctx, src, req->tag, req->mask) : NULL;
	if (!e) {
		if (src != IBX_ANY_SOURCE && ctx->peers[src].error != IBX_OK)
			return ctx->peers[src].error;
		ibx_rq_push(&ctx->posted, req);
		return IBX_INPROGRESS;
	}
	return unexp_deliver(ctx, e, req);
}

ibx_status_t ibx_tag_probe(ibx_ctx_t *ctx, int src, ibx_tag_t tag, ibx_tag_t mask,
			   ibx_probe_info_t *info)
{
	if (!ctx || !info || (src != IBX_ANY_SOURCE && (src < 0 || src >= ctx->size)))
		return IBX_ERR_INVALID_PARAM;
	for (ibx_unexp_t *e = ctx->unexp_head; e; e = e->next) {
		if (tag_matches(src, tag, mask, e->src, e->tag)) {
			info->source = e->src;
			info->tag = e->tag;
			info->length = e->len;
			return IBX_OK;
		}
	}
	if (src != IBX_ANY_SOURCE && ctx->peers[src].error != IBX_OK)
		return ctx->peers[src].error;
	return IBX_ERR_NOT_FOUND;
}

ibx_status_t ibx_tag_mprobe(ibx_ctx_t *ctx, int src, ibx_tag_t tag, ibx_tag_t mask,
			    ibx_probe_info_t *info, ibx_tag_msg_t **msg_p)
{
	ibx_unexp_t *e;

	if (!ctx || !info || !msg_p || (src != IBX_ANY_SOURCE && (src < 0 || src >= ctx->size)))
		return IBX_ERR_INVALID_PARAM;
	e = ctx->unexp_head ? unexp_take(ctx, src, tag, mask) : NULL;
	if (!e) {
		if (src != IBX_ANY_SOURCE && ctx->peers[src].error != IBX_OK)
			return ctx->peers[src].error;
		return IBX_ERR_NOT_FOUND;
	}
	/* Off the queue, onto the claimed list (finalize frees what was
	 * never received). */
	e->next = ctx->claimed;
	ctx->claimed = e;
	info->source = e->src;
	info->tag = e->tag;
	info->length = e->len;
	*msg_p = e;
	return IBX_OK;
}

/* Takes @msg off the claimed list; false if it is not there. */
static bool claimed_remove(ibx_ctx_t *ctx, ibx_unexp_t *msg)
{
	for (ibx_unexp_t **pp = &ctx->claimed; *pp; pp = &(*pp)->next) {
		if (*pp == msg) {
			*pp = msg->next;
			return true;
		}
	}
	return false;
}

ibx_status_t ibx_tag_mrecv(ibx_ctx_t *ctx, ibx_tag_msg_t *msg, void *buf, size_t len,
			   ibx_request_t *req)
{
	if (ibx_unlikely(!ctx || !msg || !req || (!buf && len)))
		return IBX_ERR_INVALID_PARAM;
	if (ibx_unlikely(!claimed_remove(ctx, msg)))
		return IBX_ERR_INVALID_PARAM; /* received already, or never probed */
	ibx_req_init(req, IBX_REQ_RECV);
	req->buf = buf;
	req->buflen = len;
	return ibx_tag_mrecv_req(ctx, msg, req);
}

ibx_status_t ibx_tag_mrecv_req(ibx_ctx_t *ctx, ibx_tag_msg_t *msg, ibx_request_t *req)
{
	req->tag = msg->tag;
	req->mask = IBX_TAG_MASK_ALL;
	req->peer = msg->src;
	return unexp_deliver(ctx, msg, req);
}

bool ibx_tag_msg_take(ibx_ctx_t *ctx, ibx_tag_msg_t *msg)
{
	return claimed_remove(ctx, msg);
}

ibx_status_t ibx_request_cancel(ibx_ctx_t *ctx, ibx_request_t *req)
{
	if (!ctx || !req)
		return IBX_ERR_INVALID_PARAM;
	if (req->completed)
		return IBX_ERR_BUSY;
	ibx_request_t *r;

	ibx_rq_for_each(r, &ctx->posted)
	{
		if (r == req) {
			ibx_rq_remove(&ctx->posted, req);
			ibx_req_complete(req, IBX_ERR_CANCELED);
			return IBX_OK;
		}
	}
	return IBX_ERR_BUSY; /* a send, or a receive already matched */
}

/* ---- progress ----------------------------------------------------------------- */

/* The launcher reported peers gone (core/bootstrap_events.c): each path
 * fails what is pending with them, naming the connection. Runs on an idle
 * pass of the thread that progresses the context, never on PMIx's thread. */
static void peers_lost(ibx_ctx_t *ctx, unsigned gen)
{
	char why[96];
	int code;

	ctx->lost_seen = gen;
	for (int r = 0; r < ctx->size; r++) {
		ibx_peer_t *peer = &ctx->peers[r];

		if (r == ctx->rank || peer->error != IBX_OK || !ibx_boot_lost(ctx->boot, r, &code))
			continue;
		if (code > 128 && code < 128 + 65)
			snprintf(why, sizeof(why),
				 "the launcher reports it killed by signal %d (status %d)",
				 code - 128, code);
		else if (code >= 0)
			snprintf(why, sizeof(why),
				 "the launcher reports it ended without finalizing (status %d)",
				 code);
		else
			snprintf(why, sizeof(why), "the launcher reports it gone");
		if (peer->ops)
			peer->ops->lose(peer, why);
		if (peer->error == IBX_OK) { /* a peer no path had taken yet */
			ibx_error("peer %d: %s", r, why);
			peer->error = IBX_ERR_UNREACHABLE;
			ibx_tag_peer_failed(ctx, r, IBX_ERR_UNREACHABLE);
		}
	}
}

int ibx_progress(ibx_ctx_t *ctx)
{
	int n = 0;
	unsigned gen;

	for (int i = 0; i < ctx->npaths; i++)
		n += ctx->paths[i].mod->progress(ctx, ctx->paths[i].state);
	if (ctx->progress_hook)
		n += ctx->progress_hook(ctx, ctx->progress_arg);
	if (!n && ibx_unlikely((gen = atomic_load_explicit(ctx->lost_gen, memory_order_acquire)) !=
			       ctx->lost_seen))
		peers_lost(ctx, gen);
	return n;
}

void ibx_progress_hook_set(ibx_ctx_t *ctx, ibx_progress_hook_t hook, void *arg)
{
	ctx->progress_hook = hook;
	ctx->progress_arg = arg;
}

void ibx_idle_hook_set(ibx_ctx_t *ctx, ibx_idle_hook_t hook, void *arg)
{
	ctx->idle_hook = hook;
	ctx->idle_arg = arg;
}

int ibx_progress_wait(ibx_ctx_t *ctx, unsigned *idle_p)
{
	int n = ibx_progress(ctx);

	if (n) {
		*idle_p = 0;
	} else if (++*idle_p > ctx->spin_count && !(*idle_p & ctx->yield_mask)) {
		/* Ranks may outnumber cores: let the peer we wait for run
		 * (every pass then; with a core each, one pass in 256) */
		sched_yield();
	}
	/* the upper layer's other threads may come in between two polls */
	if (ibx_unlikely(ctx->idle_hook != NULL))
		ctx->idle_hook(ctx, ctx->idle_arg);
	return n;
}

ibx_status_t ibx_wait(ibx_ctx_t *ctx, ibx_request_t *req)
{
	unsigned idle = 0;

	if (!ctx || !req)
		return IBX_ERR_INVALID_PARAM;
	while (!__atomic_load_n(&req->completed, __ATOMIC_ACQUIRE))
		ibx_progress_wait(ctx, &idle);
	return req->status;
}

/* Frees what is left in the unexpected queue and the claimed list (finalize). */
void ibx_tag_cleanup(ibx_ctx_t *ctx)
{
	ibx_unexp_t *e, *next;

	for (e = ctx->unexp_head; e; e = next) {
		next = e->next;
		unexp_release(ctx, e);
	}
	ctx->unexp_head = ctx->unexp_tail = NULL;
	for (e = ctx->claimed; e; e = next) { /* matched by a probe, never received */
		next = e->next;
		unexp_release(ctx, e);
	}
	ctx->claimed = NULL;
	while (ctx->unexp_free) {
		e = ctx->unexp_free;
		ctx->unexp_free = e->next;
		free(e);
	}
	ctx->unexp_free_count = 0;
}
