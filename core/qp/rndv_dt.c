/*
 * rndv_dt.c — the verbs path's typed rendezvous pushed by the sender: the
 * transfer schemes of [Wu03] for a send whose data stays in the user's
 * blocks (a scattered typed request: ibx_req_scattered). The receiver
 * chooses the scheme when the RTS matches (its typed layer's selector, or
 * multi-w into one run for a contiguous receive) and says so in a CTS:
 *
 *   sender                                    receiver
 *   RTS {len, id, PUSH, avg block} ─────────► matched: choose
 *
 *   multi-w (zero copy, §5.3)
 *                       ◄──────────────────── CTS {rid, base, rkey, type (id,
 *                                               version, count) [+ layout]}
 *   per receiver block: one RDMA WRITE,         (the layout only the first
 *   gathering the send blocks that fill it       time: the sender caches it
 *   DONE {rid} ─────────────────────────────►    by (rank, id, version))
 *                       ◄──────────────────── FIN {id}: both complete
 *
 *   rwg-up (§5.1) and bc-spup (§4.2): segments of the receiver's pool
 *                       ◄──────────────────── CTS {rid, seg bytes, area, rkey,
 *                                               indices granted}
 *   per granted index g: WRITE WITH IMM into area + g·seg, imm = {rid, g}:
 *     rwg-up gathers from the user's blocks;
 *     bc-spup packs into a slot of its own pool first
 *                                             on each imm: unpack segment
 *                       ◄──────────────────── GRANT {id, g} while segments
 *                                               remain, else index g freed
 *                       ◄──────────────────── FIN {id} after the last unpack
 *
 *   generic / p-rrs (forced on a pushed send: the sender packs on request)
 *                       ◄──────────────────── CTS {rid, scheme}
 *   pack all, register
 *   PACKED {rid, addr, len, rkey} ──────────► the READ of rndv.c (into a
 *                                               buffer, or scattered)
 *                       ◄──────────────────── FIN {id}
 *
 * A contiguous receive of a pushed send takes multi-w with one receiver
 * run (QP_CTS_CONTIG): the sender's gather writes land in place.
 *
 * Segment pools (per process, made on first use): the receiver's unpack
 * area and the sender's pack slots, IBX_IB_DT_SEGMENTS segments of
 * IBX_IB_DT_SEGMENT bytes each, registered once. A message is granted up
 * to IBX_IB_DT_GRANT of them; when the pool has fewer than two free, the
 * message gets an area of its own, registered for it ([Wu03] §4.3.3's
 * overflow to dynamic registration). A sender without a free pack slot
 * gathers that segment instead (rwg-up), so it never waits for one.
 *
 * The sender's user buffer is read by the NIC until the receiver has all
 * of it, so every scheme completes the send on the FIN. Control messages
 * (CTS, GRANT, PACKED, DONE) go through the operation FIFO (OP_CTRL),
 * behind the writes they must follow.
 *
 * Length: ~840 lines; the protocol's three halves (pools, receiver,
 * sender) share the state structures and the control-message helper.
 */
#include "qp_config.h"
#include "sendq.h"

#include <stdlib.h>

#define QP_DT_GATHER_MAX 256 /* send blocks gathered into one segment write */

/* ---- segment pools ------------------------------------------------------------------ */

typedef struct qp_dt_pool {
	char *mem;
	ibx_rcache_region_t *reg;
	uint32_t lkey, rkey;
	uint32_t seg, count;
	uint32_t nfree;
	uint16_t free[];
} qp_dt_pool_t;

static qp_dt_pool_t *pool_make(qp_path_t *path)
{
	const ibx_qp_config_t *cfg = ibx_qp_config();
	uint32_t seg = (uint32_t)cfg->IB_DT_SEGMENT, count = (uint32_t)cfg->IB_DT_SEGMENTS;
	qp_dt_pool_t *pl;

	if (count > 0xffff)
		count = 0xffff;
	pl = calloc(1, sizeof(*pl) + count * sizeof(uint16_t));
	if (!pl)
		return NULL;
	pl->seg = seg;
	pl->count = count;
	if (posix_memalign((void **)&pl->mem, 4096, (size_t)seg * count) != 0) {
		free(pl);
		return NULL;
	}
	if (ibx_rcache_region_get(path->rcache, pl->mem, (size_t)seg * count, &pl->reg) != IBX_OK) {
		ibx_error("registering the %u x %u-byte datatype segment pool failed", count, seg);
		free(pl->mem);
		free(pl);
		return NULL;
	}
	pl->lkey = ibx_rcache_region_lkey(pl->reg);
	pl->rkey = ibx_rcache_region_rkey(pl->reg);
	for (uint32_t i = 0; i < count; i++)
		pl->free[i] = (uint16_t)(count - 1 - i);
	pl->nfree = count;
	return pl;
}

static void pool_destroy(qp_path_t *path, qp_dt_pool_t *pl)
{
	if (!pl)
		return;
	ibx_rcache_region_put(path->rcache, pl->reg);
	free(pl->mem);
	free(pl);
}

static qp_dt_pool_t *pool_of(qp_path_t *path, qp_dt_pool_t **slot)
{
	if (!*slot)
		*slot = pool_make(path);
	return *slot;
}

static int pool_take(qp_dt_pool_t *pl)
{
	return pl && pl->nfree ? pl->free[--pl->nfree] : -1;
}

static void pool_give(qp_dt_pool_t *pl, int i)
{
	if (pl && i >= 0 && (uint32_t)i < pl->count && pl->nfree < pl->count)
		pl->free[pl->nfree++] = (uint16_t)i;
}

void ibx_qp_rndv_dt_fini(qp_path_t *path)
{
	pool_destroy(path, path->dt_rx_pool);
	pool_destroy(path, path->dt_tx_pool);
	path->dt_rx_pool = path->dt_tx_pool = NULL;
}

/* ---- control messages ------------------------------------------------------------------ */

/* Sends (type, body) now or behind the queued operations; the body is
 * copied. A message that cannot even be queued fails the peer (its other
 * side would wait for it forever). */
static ibx_status_t ctrl_send(qp_peer_t *p, uint8_t type, const void *body, size_t len)
{
	void *copy = malloc(len);
	struct iovec iov;
	qp_op_t op;
	ibx_status_t st;

	if (!copy) {
		ibx_error("peer %d: out of memory for a rendezvous control message", p->rank);
		ibx_qp_peer_fail(p, IBX_ERR_NO_MEMORY, NULL);
		return IBX_ERR_NO_MEMORY;
	}
	memcpy(copy, body, len);
	iov.iov_base = copy;
	iov.iov_len = len;
	memset(&op, 0, sizeof(op));
	op.kind = OP_CTRL;
	op.imm = type;
	op.iov = &iov;
	op.n = 1;
	st = ibx_qp_op_submit(p, &op, ibx_qp_rndv_op_start);
	if (st == IBX_ERR_NO_MEMORY) {
		free(copy);
		ibx_qp_peer_fail(p, IBX_ERR_NO_MEMORY, NULL);
	}
	return st;
}

ibx_status_t ibx_qp_rndv_dt_op_start(qp_peer_t *p, qp_op_t *op)
{
	qp_txb_t b;
	ibx_status_t st;

	if (!qp_msg_can_post(p, op->iov[0].iov_len))
		return IBX_ERR_BUSY;
	qp_txb_init(&b, p);
	ibx_qp_txb_add(&b, (uint8_t)op->imm, 0, op->iov[0].iov_base, op->iov[0].iov_len);
	st = ibx_qp_txb_flush(&b);
	free(op->iov[0].iov_base);
	return st == IBX_OK ? IBX_INPROGRESS : st;
}

void ibx_qp_rndv_dt_op_fail(qp_op_t *op)
{
	free(op->iov[0].iov_base);
}

/* ---- receiver ------------------------------------------------------------------------------ */

typedef struct qp_dtr {
	struct qp_dtr *next;
	ibx_request_t *req;
	uint32_t rid, sid; /* ours, the sender's */
	uint8_t scheme;
	size_t n;
	/* multi-w: the registration of the receive buffer */
	ibx_rcache_region_t *reg;
	/* segments */
	uint32_t seg, nsegs, granted, landed;
	char *area;		  /* pool memory, or the message's own */
	ibx_rcache_region_t *own; /* the message's own area's registration */
	uint32_t nheld;		  /* pool indices held */
	uint16_t held[QP_DT_GRANT_MAX];
} qp_dtr_t;

static qp_dtr_t *dtr_find(qp_peer_t *p, uint32_t rid)
{
	for (qp_dtr_t *r = p->dt_recvs; r; r = r->next)
		if (r->rid == rid)
			return r;
	return NULL;
}

static qp_dtr_t *dtr_new(qp_peer_t *p, ibx_request_t *req, size_t n)
{
	qp_dtr_t *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->req = req;
	r->n = n;
	r->sid = (uint32_t)req->priv[0];
	/* 15 bits travel in the immediate; skip ids still in use */
	do
		r->rid = p->dt_next_rid++ & QP_IMM_RID_MASK;
	while (dtr_find(p, r->rid));
	r->next = p->dt_recvs;
	p->dt_recvs = r;
	return r;
}

/* Unlinks @r, releases what it holds and frees it. */
static void dtr_free(qp_peer_t *p, qp_dtr_t *r)
{
	qp_path_t *path = p->path;

	for (qp_dtr_t **pp = &p->dt_recvs; *pp; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	}
	if (r->reg)
		ibx_rcache_region_put(path->rcache, r->reg);
	if (r->own) {
		ibx_rcache_region_put(path->rcache, r->own);
		free(r->area);
	}
	for (uint32_t i = 0; i < r->nheld; i++)
		pool_give(path->dt_rx_pool, r->held[i]);
	free(r);
}

/* The receive is complete: FIN to the sender, then the request. */
static void dtr_finish(qp_peer_t *p, qp_dtr_t *r, ibx_status_t st)
{
	ibx_request_t *req = r->req;

	if (st == IBX_OK)
		ibx_qp_rndv_fin(p, r->sid);
	dtr_free(p, r);
	if (st == IBX_OK && req->priv[2])
		st = IBX_ERR_TRUNCATED;
	ibx_req_complete(req, st);
}

static void cts_init(qp_cts_t *c, const qp_dtr_t *r)
{
	memset(c, 0, sizeof(*c));
	c->id = r->sid;
	c->rid = r->rid;
	c->len = r->n;
	c->scheme = r->scheme;
}

/* Multi-w: registers the receive buffer and sends the layout (or, for a
 * contiguous receive, the run). Negative when it cannot (the layout does
 * not fit a message, the buffer does not register): then another scheme
 * serves. */
static int recv_multiw(qp_peer_t *p, qp_dtr_t *r)
{
	ibx_request_t *req = r->req;
	bool typed = ibx_req_scattered(req);
	size_t cap = p->eager_max > sizeof(qp_cts_t) ? p->eager_max - sizeof(qp_cts_t) : 0;
	char *msg = malloc(sizeof(qp_cts_t) + cap);
	qp_cts_t c;
	size_t blob = 0;
	const char *at = req->buf;
	size_t span = r->n;
	int ret = -1;

	if (!msg)
		return -1;
	cts_init(&c, r);
	if (typed) {
		if (req->dt->ops->layout(req, p->rank, msg + sizeof(c), cap, &blob, &c.type_id,
					 &c.version, &c.count) < 0)
			goto out;
		at = (const char *)req->buf + req->dt->lb;
		span = (size_t)req->dt->span;
		c.flags = blob ? QP_CTS_LAYOUT : 0;
		c.blob_len = (uint32_t)blob;
	} else {
		c.flags = QP_CTS_CONTIG;
	}
	if (ibx_rcache_region_get(p->path->rcache, at, span, &r->reg) != IBX_OK) {
		ibx_debug("peer %d: the receive buffer does not register (%zu bytes): no multi-w",
			  p->rank, span);
		r->reg = NULL;
		goto out;
	}
	c.base = (uint64_t)(uintptr_t)req->buf;
	c.rkey = ibx_rcache_region_rkey(r->reg);
	memcpy(msg, &c, sizeof(c));
	ret = ctrl_send(p, QP_MSG_CTS, msg, sizeof(c) + blob) < 0 ? -2 : 0;
out:
	free(msg);
	return ret;
}

/* Segment schemes: grants the first indices (the pool's, or an area of
 * the message's own when the pool is short). */
static int recv_segments(qp_peer_t *p, qp_dtr_t *r)
{
	qp_path_t *path = p->path;
	qp_dt_pool_t *pl = pool_of(path, &path->dt_rx_pool);
	uint32_t grant = (uint32_t)ibx_qp_config()->IB_DT_GRANT, seg;
	char msg[sizeof(qp_cts_t) + QP_DT_GRANT_MAX * sizeof(uint16_t)];
	uint16_t *idx = (uint16_t *)(void *)(msg + sizeof(qp_cts_t));
	qp_cts_t c;

	if (!pl)
		return -1;
	seg = pl->seg;
	r->seg = seg;
	r->nsegs = (uint32_t)((r->n + seg - 1) / seg);
	if (grant > QP_DT_GRANT_MAX)
		grant = QP_DT_GRANT_MAX;
	if (grant < 1)
		grant = 1;
	if (grant > r->nsegs)
		grant = r->nsegs;
	cts_init(&c, r);
	c.seg = seg;
	if (pl->nfree >= 2) {
		if (grant > pl->nfree)
			grant = pl->nfree;
		for (uint32_t i = 0; i < grant; i++)
			idx[i] = r->held[r->nheld++] = (uint16_t)pool_take(pl);
		r->area = pl->mem;
		c.base = (uint64_t)(uintptr_t)pl->mem;
		c.rkey = pl->rkey;
	} else {
		size_t bytes = (size_t)grant * seg;

		if (posix_memalign((void **)&r->area, 4096, bytes) != 0)
			return -1;
		if (ibx_rcache_region_get(path->rcache, r->area, bytes, &r->own) != IBX_OK) {
			free(r->area);
			r->area = NULL;
			return -1;
		}
		for (uint32_t i = 0; i < grant; i++)
			idx[i] = (uint16_t)i;
		c.base = (uint64_t)(uintptr_t)r->area;
		c.rkey = ibx_rcache_region_rkey(r->own);
	}
	r->granted = grant;
	c.nseg = (uint16_t)grant;
	memcpy(msg, &c, sizeof(c));
	return ctrl_send(p, QP_MSG_CTS, msg, sizeof(c) + grant * sizeof(uint16_t)) < 0 ? -2 : 0;
}

/* Generic or p-rrs for a pushed send: ask the sender to pack. */
static int recv_packed(qp_peer_t *p, qp_dtr_t *r)
{
	qp_cts_t c;

	cts_init(&c, r);
	return ctrl_send(p, QP_MSG_CTS, &c, sizeof(c)) < 0 ? -2 : 0;
}

static int recv_start(qp_peer_t *p, qp_dtr_t *r)
{
	switch (r->scheme) {
	case IBX_DT_SCHEME_MULTI_W: return recv_multiw(p, r);
	case IBX_DT_SCHEME_RWG_UP:
	case IBX_DT_SCHEME_BC_SPUP: return recv_segments(p, r);
	default: return recv_packed(p, r);
	}
}

ibx_status_t ibx_qp_rndv_dt_recv(qp_peer_t *p, const qp_rts_t *rts, ibx_request_t *req, size_t n)
{
	unsigned can = IBX_DT_CAN(IBX_DT_SCHEME_MULTI_W) | IBX_DT_CAN(IBX_DT_SCHEME_RWG_UP) |
		       IBX_DT_CAN(IBX_DT_SCHEME_BC_SPUP) | IBX_DT_CAN(IBX_DT_SCHEME_P_RRS);
	qp_dtr_t *r = dtr_new(p, req, n);
	int ret;

	if (!r)
		return IBX_ERR_NO_MEMORY;
	if (ibx_req_scattered(req)) {
		int s = req->dt->ops->choose(req, n, false, rts->avg_block, can, can);

		if (s < 0) {
			dtr_free(p, r);
			return IBX_ERR_NO_MEMORY;
		}
		r->scheme = (uint8_t)s;
	} else {
		r->scheme = IBX_DT_SCHEME_MULTI_W; /* gather writes into the one run */
	}
	ret = recv_start(p, r);
	if (ret == -1 && r->scheme == IBX_DT_SCHEME_MULTI_W) {
		/* no multi-w here: segments (the typed layer records the change) */
		r->scheme = IBX_DT_SCHEME_RWG_UP;
		if (req->dt)
			req->dt->scheme = IBX_DT_SCHEME_RWG_UP;
		ret = recv_segments(p, r);
	}
	if (ret < 0) {
		dtr_free(p, r);
		return ret == -2 ? IBX_ERR_UNREACHABLE : IBX_ERR_NO_MEMORY;
	}
	return IBX_INPROGRESS;
}

/* A segment landed: unpack it, then re-grant its index or let it go. */
static int seg_landed(qp_peer_t *p, qp_dtr_t *r, uint32_t g)
{
	size_t off = (size_t)r->landed * r->seg, len;
	const char *src;

	if (r->landed >= r->nsegs || (r->own ? g >= r->granted : g >= p->path->dt_rx_pool->count))
		return -1;
	len = r->n - off < r->seg ? r->n - off : r->seg;
	src = r->area + (size_t)g * r->seg;
	ibx_req_copy_in(r->req, off, src, len);
	r->landed++;
	if (r->granted < r->nsegs) {
		qp_fin_t gr = {.id = r->sid, .pad = g};

		r->granted++;
		ctrl_send(p, QP_MSG_GRANT, &gr, sizeof(gr));
	} else if (!r->own) {
		for (uint32_t i = 0; i < r->nheld; i++) {
			if (r->held[i] == g) {
				r->held[i] = r->held[--r->nheld];
				pool_give(p->path->dt_rx_pool, (int)g);
				break;
			}
		}
	}
	if (r->landed == r->nsegs)
		dtr_finish(p, r, IBX_OK);
	return 0;
}

int ibx_qp_rndv_dt_imm(qp_peer_t *p, uint32_t imm)
{
	qp_dtr_t *r;

	if (!(imm & QP_IMM_SEG))
		return 0;
	r = dtr_find(p, (imm >> QP_IMM_RID_SHIFT) & QP_IMM_RID_MASK);
	if (!r || (r->scheme != IBX_DT_SCHEME_RWG_UP && r->scheme != IBX_DT_SCHEME_BC_SPUP) ||
	    seg_landed(p, r, imm & 0xffffu) < 0)
		return -1;
	return 1;
}

/* PACKED: the sender packed on our request; the READ of rndv.c moves it. */
static bool packed_recv(qp_peer_t *p, const qp_rts_t *pk)
{
	qp_dtr_t *r = dtr_find(p, pk->flags);
	ibx_request_t *req;
	qp_rts_t rts = *pk;
	ibx_status_t st;

	if (!r || (r->scheme != IBX_DT_SCHEME_GENERIC && r->scheme != IBX_DT_SCHEME_P_RRS))
		return false;
	req = r->req;
	dtr_free(p, r);
	rts.flags = 0;
	st = ibx_qp_rndv_read(p->ipeer, &rts, req);
	if (st < 0)
		ibx_req_complete(req, st);
	return true;
}

static bool done_recv(qp_peer_t *p, uint32_t rid)
{
	qp_dtr_t *r = dtr_find(p, rid);

	if (!r || r->scheme != IBX_DT_SCHEME_MULTI_W)
		return false;
	dtr_finish(p, r, IBX_OK);
	return true;
}

void ibx_qp_rndv_dt_peer_failed(qp_peer_t *p)
{
	while (p->dt_recvs) {
		qp_dtr_t *r = p->dt_recvs;
		ibx_request_t *req = r->req;

		dtr_free(p, r);
		ibx_req_complete(req, IBX_ERR_UNREACHABLE);
	}
}

/* ---- sender ---------------------------------------------------------------------------------- */

typedef struct qp_dts {
	uint8_t scheme;
	uint32_t rid;
	size_t n, off; /* bytes to move, moved */
	uint32_t seg;
	uint64_t base;
	uint32_t rkey;
	uint32_t qh, qt; /* granted indices not written yet: q[qt..qh) */
	uint16_t q[QP_DT_GRANT_MAX];
	uint32_t nslots; /* bc-spup: pack slots in flight */
	struct {
		uint16_t g, slot;
	} slots[QP_DT_GRANT_MAX];
	/* generic / p-rrs: the packed copy */
	void *tmp;
	ibx_rcache_region_t *treg;
} qp_dts_t;

#define DTS(req) ((qp_dts_t *)(uintptr_t)(req)->priv[3])

ibx_status_t ibx_qp_rndv_dt_send(qp_peer_t *p, qp_txb_t *b, ibx_request_t *req)
{
	qp_rts_t *rts;

	req->priv[0] = p->rndv_next_id++;
	req->priv[1] = 0;
	req->priv[3] = 0;
	ibx_rq_push(&p->rndv_sends, req);
	rts = &b->body[b->n].rts;
	memset(rts, 0, sizeof(*rts));
	rts->len = req->buflen;
	rts->id = (uint32_t)req->priv[0];
	rts->flags = QP_RTS_PUSH;
	rts->avg_block = req->dt->avg_block;
	ibx_qp_txb_add(b, QP_MSG_RTS, req->tag, rts, sizeof(*rts));
	return IBX_INPROGRESS;
}

void ibx_qp_rndv_dt_send_done(qp_path_t *path, ibx_request_t *req)
{
	qp_dts_t *s = DTS(req);

	if (!s)
		return;
	for (uint32_t i = 0; i < s->nslots; i++)
		pool_give(path->dt_tx_pool, s->slots[i].slot);
	if (s->treg)
		ibx_rcache_region_put(path->rcache, s->treg);
	free(s->tmp);
	free(s);
	req->priv[3] = 0;
}

static ibx_request_t *send_find(qp_peer_t *p, uint32_t id)
{
	ibx_request_t *r;

	ibx_rq_for_each(r, &p->rndv_sends) if ((uint32_t)r->priv[0] == id) return r;
	return NULL;
}

/* Multi-w: one write per receiver block, gathering the send's blocks. */
typedef struct mw_arg {
	qp_peer_t *p;
	uint32_t rkey;
} mw_arg_t;

static int mw_put(void *arg, const struct iovec *src, int n, uint64_t raddr, size_t bytes)
{
	mw_arg_t *a = arg;

	(void)bytes;
	return ibx_qp_rma_put(a->p->ipeer, src, n, raddr, a->rkey, NULL) < 0 ? -1 : 0;
}

/* The send's next @len bytes as gather lists of at most @max bytes each,
 * written from @raddr on. */
static int gather_put(qp_peer_t *p, ibx_request_t *req, size_t len, uint64_t raddr, uint32_t rkey)
{
	struct iovec iov[64];
	size_t done = 0, bytes;

	while (done < len) {
		size_t want = len - done < p->path->max_msg ? len - done : p->path->max_msg;
		int k = req->dt->ops->iov(req, want, iov, 64, &bytes);

		if (k <= 0 || !bytes)
			return -1;
		if (ibx_qp_rma_put(p->ipeer, iov, k, raddr + done, rkey, NULL) < 0)
			return -1;
		done += bytes;
	}
	return 0;
}

static int send_multiw(qp_peer_t *p, ibx_request_t *req, const qp_cts_t *c, const void *blob)
{
	mw_arg_t a = {p, c->rkey};
	qp_fin_t done = {.id = c->rid};
	int ret;

	if (c->flags & QP_CTS_CONTIG)
		ret = gather_put(p, req, c->len, c->base, c->rkey);
	else
		ret = req->dt->ops->pairs(req, p->rank, c->type_id, c->version,
					  (c->flags & QP_CTS_LAYOUT) ? blob : NULL, c->blob_len,
					  c->base, c->count, c->len, mw_put, &a);
	if (ret < 0)
		return -1;
	/* behind the writes in the FIFO; RC places them before it lands */
	ctrl_send(p, QP_MSG_DONE, &done, sizeof(done));
	return 0;
}

/* One segment of @s into receiver index @g. */
static int seg_write(qp_peer_t *p, ibx_request_t *req, qp_dts_t *s, uint16_t g)
{
	qp_path_t *path = p->path;
	size_t len = s->n - s->off < s->seg ? s->n - s->off : s->seg;
	uint32_t imm = QP_IMM_SEG | (s->rid << QP_IMM_RID_SHIFT) | g;
	uint64_t raddr = s->base + (uint64_t)g * s->seg;
	struct iovec iov[QP_DT_GATHER_MAX];
	int k = 0, slot = -1;
	size_t got = 0, bytes;

	if (s->scheme == IBX_DT_SCHEME_BC_SPUP) {
		qp_dt_pool_t *pl = pool_of(path, &path->dt_tx_pool);

		if (pl && pl->seg >= len)
			slot = pool_take(pl);
	}
	if (slot >= 0) {
		char *mem = path->dt_tx_pool->mem + (size_t)slot * path->dt_tx_pool->seg;

		ibx_req_copy_out(req, s->off, mem, len);
		s->slots[s->nslots].g = g;
		s->slots[s->nslots++].slot = (uint16_t)slot;
		iov[0].iov_base = mem;
		iov[0].iov_len = len;
		k = 1;
	} else {
		/* rwg-up, or bc-spup without a free slot: gather in place, in
		 * writes of QP_DT_GATHER_MAX blocks; the last one carries the
		 * immediate (RC places the others first) */
		size_t put = 0;

		while (got < len) {
			int m = req->dt->ops->iov(req, len - got, iov + k, QP_DT_GATHER_MAX - k,
						  &bytes);

			if (m <= 0 || !bytes)
				return -1;
			k += m;
			got += bytes;
			if (k == QP_DT_GATHER_MAX && got < len) {
				if (ibx_qp_rma_put(p->ipeer, iov, k, raddr + put, s->rkey, NULL) <
				    0)
					return -1;
				put = got;
				k = 0;
			}
		}
		raddr += put;
	}
	s->off += len;
	return ibx_qp_rma_put_imm(p->ipeer, iov, k, raddr, s->rkey, imm, NULL) < 0 ? -1 : 0;
}

/* Writes segments while granted indices last. */
static int seg_pump(qp_peer_t *p, ibx_request_t *req, qp_dts_t *s)
{
	while (s->qt != s->qh && s->off < s->n) {
		uint16_t g = s->q[s->qt++ % QP_DT_GRANT_MAX];

		if (seg_write(p, req, s, g) < 0)
			return -1;
	}
	return 0;
}

/* The pack slot that carried index @g is free again. */
static void slot_release(qp_path_t *path, qp_dts_t *s, uint16_t g)
{
	for (uint32_t i = 0; i < s->nslots; i++) {
		if (s->slots[i].g == g) {
			pool_give(path->dt_tx_pool, s->slots[i].slot);
			s->slots[i] = s->slots[--s->nslots];
			return;
		}
	}
}

static int send_segments(qp_peer_t *p, ibx_request_t *req, qp_dts_t *s, const qp_cts_t *c,
			 const uint16_t *idx)
{
	s->seg = c->seg;
	s->base = c->base;
	s->rkey = c->rkey;
	if (!s->seg || c->nseg == 0 || c->nseg > QP_DT_GRANT_MAX)
		return -1;
	for (uint32_t i = 0; i < c->nseg; i++)
		s->q[s->qh++ % QP_DT_GRANT_MAX] = idx[i];
	return seg_pump(p, req, s);
}

/* Generic / p-rrs on request: pack all, register, PACKED. */
static int send_pack(qp_peer_t *p, ibx_request_t *req, qp_dts_t *s, const qp_cts_t *c)
{
	qp_rts_t pk;

	s->tmp = malloc(req->buflen ? req->buflen : 1);
	if (!s->tmp)
		return -1;
	ibx_req_copy_out(req, 0, s->tmp, req->buflen);
	if (ibx_rcache_region_get(p->path->rcache, s->tmp, req->buflen ? req->buflen : 1,
				  &s->treg) != IBX_OK) {
		s->treg = NULL;
		return -1;
	}
	memset(&pk, 0, sizeof(pk));
	pk.addr = (uint64_t)(uintptr_t)s->tmp;
	pk.len = req->buflen;
	pk.rkey = ibx_rcache_region_rkey(s->treg);
	pk.id = (uint32_t)req->priv[0];
	pk.flags = c->rid; /* PACKED: flags name the receiver's rendezvous */
	ctrl_send(p, QP_MSG_PACKED, &pk, sizeof(pk));
	return 0;
}

static bool cts_recv(qp_peer_t *p, const void *body, size_t len)
{
	ibx_request_t *req;
	qp_cts_t c;
	qp_dts_t *s;
	const char *extra = (const char *)body + sizeof(c);
	size_t nextra = len - sizeof(c);
	int ret;

	memcpy(&c, body, sizeof(c)); /* framing checked: ibx_qp_rx_check */
	req = send_find(p, c.id);
	if (!req || !ibx_req_scattered(req) || DTS(req) || c.len > req->buflen)
		return false;
	s = calloc(1, sizeof(*s));
	if (!s)
		return false;
	s->scheme = c.scheme;
	s->rid = c.rid;
	s->n = c.len;
	req->priv[3] = (uintptr_t)s;
	switch (c.scheme) {
	case IBX_DT_SCHEME_MULTI_W: ret = send_multiw(p, req, &c, extra); break;
	case IBX_DT_SCHEME_RWG_UP:
	case IBX_DT_SCHEME_BC_SPUP: {
		uint16_t idx[QP_DT_GRANT_MAX];

		memcpy(idx, extra, nextra);
		ret = send_segments(p, req, s, &c, idx);
		break;
	}
	default: ret = send_pack(p, req, s, &c); break;
	}
	if (ret < 0) {
		ibx_error(QP_PEER_FMT ": the %s rendezvous %u cannot proceed", QP_PEER_ARGS(p),
			  c.scheme == IBX_DT_SCHEME_MULTI_W ? "multi-w" : "typed", c.id);
		ibx_qp_peer_fail(p, IBX_ERR_CORRUPT, NULL);
	}
	return true;
}

static bool grant_recv(qp_peer_t *p, const qp_fin_t *gr)
{
	ibx_request_t *req = send_find(p, gr->id);
	qp_dts_t *s = req ? DTS(req) : NULL;

	if (!s || (s->scheme != IBX_DT_SCHEME_RWG_UP && s->scheme != IBX_DT_SCHEME_BC_SPUP) ||
	    gr->pad > 0xffff || s->qh - s->qt >= QP_DT_GRANT_MAX)
		return false;
	slot_release(p->path, s, (uint16_t)gr->pad);
	s->q[s->qh++ % QP_DT_GRANT_MAX] = (uint16_t)gr->pad;
	if (seg_pump(p, req, s) < 0)
		ibx_qp_peer_fail(p, IBX_ERR_IO, NULL);
	return true;
}

/* ---- dispatch ------------------------------------------------------------------------------- */

bool ibx_qp_rndv_dt_msg(qp_peer_t *p, uint8_t type, const void *body, size_t len)
{
	qp_fin_t f;
	qp_rts_t pk;

	/* lengths checked: ibx_qp_rx_check */
	switch (type) {
	case QP_MSG_CTS: return cts_recv(p, body, len);
	case QP_MSG_GRANT: memcpy(&f, body, sizeof(f)); return grant_recv(p, &f);
	case QP_MSG_DONE: memcpy(&f, body, sizeof(f)); return done_recv(p, f.id);
	case QP_MSG_PACKED: memcpy(&pk, body, sizeof(pk)); return packed_recv(p, &pk);
	}
	return false;
}
