/*
 * dt_xfer.c — typed messages (see dt_xfer.h for the schemes): the typed
 * send and receive entry points, the per-request state the paths reach
 * through req->dt, and the scheme bookkeeping (forced scheme, counts, the
 * IBX_LOG=info line per first message of a (type, size class)).
 *
 * A typed request is in one of two modes:
 *
 *   packed     the typed layer packed the send into `tmp` (or gives the
 *              receive `tmp` to land in): the path sees contiguous bytes;
 *              `done` frees tmp, after unpacking it for a receive
 *   scattered  the path reaches the user's blocks through the cursor
 *              (ops out / in / iov): packing into ring cells and pipe
 *              chunks, unpacking out of them, scatter lists for RDMA READ
 *
 * A send is scattered only where the path streams scattered sends
 * (ibx_path_ops_t.typed_send: shared memory) and the scheme does not want
 * the whole message packed first (generic and p-rrs do); a send to self is
 * always packed. A receive starts scattered; at a rendezvous the path asks
 * `choose`, which may turn it packed (generic).
 *
 * Length: ~780 lines: the entry points, the paths' per-request operations
 * and the layout cache they need (multi-w) belong together; the selector
 * itself is dt_select.c.
 */
#include "dt_xfer.h"

#include "dt_select.h"
#include "dt_config.h"
#include "dtype_int.h"

#include <stdlib.h>

typedef struct dtx_req {
	ibx_req_dt_t hdr; /* first: req->dt points here */
	ibx_ctx_t *ctx;
	const ibx_dt_t *dt;
	int64_t count;
	void *ubuf; /* the user's buffer */
	void *tmp;  /* packed mode: the contiguous bytes (buf_get) */
	size_t tmp_cap;
	bool recv;
	ibx_dt_cursor_t cur; /* out / in / iov resume here; pos -1: not set */
	bool cur_ok;
	struct dtx_req *next_free;
} dtx_req_t;

#define DTX_LOG_SLOTS 64
/* Layouts remembered per peer and direction ([Wu03] §5.4.2's datatype
 * cache). Both ends of a pair hold the same number: the receiver records
 * a layout as sent only while it has room, and the sender stores every
 * layout it receives (replacing an older version of the same id), so the
 * sender never lacks one the receiver thinks it has. Beyond that the
 * receiver sends the layout with every message. */
#define DTX_LAYOUTS 64
/* Whole-message pack buffers (generic, p-rrs) are kept for reuse, up to
 * DTX_BUFS of them and DTX_BUF_BYTES in all (enough for a window of a
 * hundred 1 MiB messages in flight): a buffer freshly mapped for
 * every message costs its page faults, and its unmapping a TLB shootdown,
 * each time (1 ms per 512 KiB message in a VM). Reused, it also stays
 * registered in the verbs path's registration cache. */
#define DTX_BUFS      128
#define DTX_BUF_BYTES (256u << 20)

typedef struct dtx_layout_id {
	uint64_t id;
	uint32_t ver;
} dtx_layout_id_t;

typedef struct dtx_peer {
	dtx_layout_id_t sent[DTX_LAYOUTS]; /* receiver: layouts this peer has */
	int nsent;
	struct {
		dtx_layout_id_t key;
		ibx_dt_t *dt; /* layout-only (deserialised) */
	} have[DTX_LAYOUTS];  /* sender: this peer's layouts */
	int nhave;
} dtx_peer_t;

typedef struct dtx_state {
	ibx_dt_scheme_t forced;
	uint64_t count[IBX_DT_SCHEME_COUNT];
	dtx_req_t *free_list;
	unsigned nfree;
	/* (type id, size class) pairs already named at IBX_LOG=info */
	uint64_t logged[DTX_LOG_SLOTS];
	int npeers;
	dtx_peer_t **peers; /* [npeers], made on first use */
	/* pack buffers kept for the next message (see buf_get) */
	struct {
		void *p;
		size_t cap;
	} bufs[DTX_BUFS];
	size_t buf_bytes;
} dtx_state_t;

#define DTX_FREE_MAX 64

static const char *const scheme_names[IBX_DT_SCHEME_COUNT] = {
    [IBX_DT_SCHEME_AUTO] = "auto",	 [IBX_DT_SCHEME_GENERIC] = "generic",
    [IBX_DT_SCHEME_BC_SPUP] = "bc-spup", [IBX_DT_SCHEME_RWG_UP] = "rwg-up",
    [IBX_DT_SCHEME_P_RRS] = "p-rrs",	 [IBX_DT_SCHEME_MULTI_W] = "multi-w",
};

const char *ibx_dt_scheme_name(ibx_dt_scheme_t s)
{
	return (unsigned)s < IBX_DT_SCHEME_COUNT ? scheme_names[s] : "?";
}

ibx_status_t ibx_dt_scheme_parse(const char *name, ibx_dt_scheme_t *s_p)
{
	if (!name || !s_p)
		return IBX_ERR_INVALID_PARAM;
	for (int s = 0; s < IBX_DT_SCHEME_COUNT; s++) {
		if (!strcmp(name, scheme_names[s])) {
			*s_p = (ibx_dt_scheme_t)s;
			return IBX_OK;
		}
	}
	return IBX_ERR_INVALID_PARAM;
}

/* ---- the context's state -------------------------------------------------------------- */

static void dtx_fini(ibx_ctx_t *ctx)
{
	dtx_state_t *st = ctx->dtx;

	for (int i = 0; st->peers && i < st->npeers; i++) {
		dtx_peer_t *pp = st->peers[i];

		for (int k = 0; pp && k < pp->nhave; k++)
			ibx_dt_free(&pp->have[k].dt);
		free(pp);
	}
	free(st->peers);

	for (int i = 0; i < DTX_BUFS; i++)
		free(st->bufs[i].p);
	while (st->free_list) {
		dtx_req_t *r = st->free_list;

		st->free_list = r->next_free;
		free(r);
	}
	free(st);
	ctx->dtx = NULL;
	ctx->dtx_fini = NULL;
}

static dtx_state_t *dtx_state(ibx_ctx_t *ctx)
{
	dtx_state_t *st = ctx->dtx;

	if (ibx_likely(st != NULL))
		return st;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	if (ibx_dt_scheme_parse(ibx_dt_config()->DT_SCHEME, &st->forced) != IBX_OK)
		st->forced = IBX_DT_SCHEME_AUTO; /* ibx_dt_xfer_init reported it */
	st->npeers = ctx->size;
	st->peers = calloc((size_t)ctx->size, sizeof(*st->peers));
	if (!st->peers) {
		free(st);
		return NULL;
	}
	ctx->dtx = st;
	ctx->dtx_fini = dtx_fini;
	return st;
}

ibx_status_t ibx_dt_xfer_init(ibx_ctx_t *ctx)
{
	const char *name = ibx_dt_config()->DT_SCHEME;
	ibx_dt_scheme_t s;

	if (!ctx)
		return IBX_ERR_INVALID_PARAM;
	if (ibx_dt_scheme_parse(name, &s) != IBX_OK) {
		ibx_error("IBX_DT_SCHEME=%s: not one of auto, generic, bc-spup, rwg-up, p-rrs, "
			  "multi-w",
			  name);
		return IBX_ERR_INVALID_PARAM;
	}
	if (!dtx_state(ctx))
		return IBX_ERR_NO_MEMORY;
	return ibx_dt_select_init(ctx);
}

ibx_status_t ibx_dt_scheme_set(ibx_ctx_t *ctx, ibx_dt_scheme_t s)
{
	dtx_state_t *st;

	if (!ctx || (unsigned)s >= IBX_DT_SCHEME_COUNT)
		return IBX_ERR_INVALID_PARAM;
	st = dtx_state(ctx);
	if (!st)
		return IBX_ERR_NO_MEMORY;
	st->forced = s;
	return IBX_OK;
}

ibx_dt_scheme_t ibx_dt_scheme_get(const ibx_ctx_t *ctx)
{
	const dtx_state_t *st = ctx ? ctx->dtx : NULL;
	ibx_dt_scheme_t s = IBX_DT_SCHEME_AUTO;

	if (st)
		return st->forced;
	ibx_dt_scheme_parse(ibx_dt_config()->DT_SCHEME, &s);
	return s;
}

uint64_t ibx_dt_scheme_count(const ibx_ctx_t *ctx, ibx_dt_scheme_t s)
{
	const dtx_state_t *st = ctx ? ctx->dtx : NULL;

	return st && (unsigned)s < IBX_DT_SCHEME_COUNT ? st->count[s] : 0;
}

/* ---- pack buffers ------------------------------------------------------------------------ */

/* A buffer of at least @len bytes: the smallest kept one that fits without
 * wasting more than its size again, else a new one (page-rounded). */
static void *buf_get(dtx_state_t *st, size_t len, size_t *cap_p)
{
	int best = -1;
	size_t cap;
	void *p;

	for (int i = 0; i < DTX_BUFS; i++) {
		if (st->bufs[i].p && st->bufs[i].cap >= len && st->bufs[i].cap / 2 <= len + 4096 &&
		    (best < 0 || st->bufs[i].cap < st->bufs[best].cap))
			best = i;
	}
	if (best >= 0) {
		p = st->bufs[best].p;
		*cap_p = st->bufs[best].cap;
		st->buf_bytes -= st->bufs[best].cap;
		st->bufs[best].p = NULL;
		return p;
	}
	cap = (len + 4095) & ~(size_t)4095;
	if (!cap)
		cap = 4096;
	if (posix_memalign(&p, 4096, cap) != 0)
		return NULL;
	*cap_p = cap;
	return p;
}

/* Keeps @p for a later message, or frees it (the largest kept one goes
 * first when the cache is full). */
static void buf_put(dtx_state_t *st, void *p, size_t cap)
{
	int slot = -1, largest = -1;

	if (!p)
		return;
	for (int i = 0; i < DTX_BUFS; i++) {
		if (!st->bufs[i].p && slot < 0)
			slot = i;
		if (st->bufs[i].p && (largest < 0 || st->bufs[i].cap > st->bufs[largest].cap))
			largest = i;
	}
	if (cap > DTX_BUF_BYTES) {
		free(p);
		return;
	}
	while ((slot < 0 || st->buf_bytes + cap > DTX_BUF_BYTES) && largest >= 0) {
		free(st->bufs[largest].p);
		st->buf_bytes -= st->bufs[largest].cap;
		st->bufs[largest].p = NULL;
		slot = largest;
		largest = -1;
		for (int i = 0; i < DTX_BUFS; i++)
			if (st->bufs[i].p &&
			    (largest < 0 || st->bufs[i].cap > st->bufs[largest].cap))
				largest = i;
	}
	st->bufs[slot].p = p;
	st->bufs[slot].cap = cap;
	st->buf_bytes += cap;
}

/* ---- per-request state ------------------------------------------------------------------ */

static dtx_req_t *dtx_req_get(dtx_state_t *st)
{
	dtx_req_t *r = st->free_list;

	if (r) {
		st->free_list = r->next_free;
		st->nfree--;
	} else if (!(r = malloc(sizeof(*r)))) {
		return NULL;
	}
	return r;
}

static void dtx_req_put(dtx_state_t *st, dtx_req_t *r)
{
	buf_put(st, r->tmp, r->tmp_cap);
	r->tmp = NULL;
	if (st->nfree >= DTX_FREE_MAX) {
		free(r);
		return;
	}
	r->next_free = st->free_list;
	st->free_list = r;
	st->nfree++;
}

static inline dtx_req_t *dtx_of(const ibx_request_t *req)
{
	return (dtx_req_t *)req->dt;
}

/* The request's cursor at packed offset @off (kept between calls: the
 * paths move through a message in order, so this rarely seeks). */
static ibx_dt_cursor_t *cursor_at(dtx_req_t *r, size_t off)
{
	if (!r->cur_ok) {
		if (ibx_dt_cursor_init(&r->cur, r->dt, r->count, r->ubuf, (int64_t)off) != IBX_OK)
			return NULL;
		r->cur_ok = true;
	} else if (r->cur.pos != (int64_t)off &&
		   ibx_dt_cursor_seek(&r->cur, (int64_t)off) != IBX_OK) {
		return NULL;
	}
	return &r->cur;
}

static void op_out(const ibx_request_t *req, size_t off, void *dst, size_t len)
{
	ibx_dt_cursor_t *c = cursor_at(dtx_of(req), off);
	int64_t done;

	/* offsets come from the path's own bookkeeping inside buflen */
	if (c)
		ibx_dt_cursor_pack(c, dst, (int64_t)len, &done);
}

static void op_in(ibx_request_t *req, size_t off, const void *src, size_t len)
{
	ibx_dt_cursor_t *c = cursor_at(dtx_of(req), off);
	int64_t done;

	if (c)
		ibx_dt_cursor_unpack(c, src, (int64_t)len, &done);
}

static int op_iov(ibx_request_t *req, size_t max_bytes, struct iovec *iov, int max, size_t *bytes_p)
{
	dtx_req_t *r = dtx_of(req);
	ibx_dt_cursor_t *c = r->cur_ok ? &r->cur : cursor_at(r, 0);
	int64_t bytes = 0;
	int n = 0;

	if (!c || ibx_dt_cursor_iov(c, (int64_t)max_bytes, iov, max, &n, &bytes) != IBX_OK) {
		*bytes_p = 0;
		return 0;
	}
	*bytes_p = (size_t)bytes;
	return n;
}

/* Names the scheme of the first message of each (type, size class). */
static void log_choice(dtx_state_t *st, const dtx_req_t *r, size_t len, const char *why)
{
	uint64_t id = 0, key;
	uint32_t ver = 0;
	int cls = 63 - __builtin_clzll((unsigned long long)len | 1);

	if (ibx_log_level_cur < IBX_LOG_INFO)
		return;
	ibx_dt_wire_id(r->dt, &id, &ver);
	key = (id << 8 | (uint64_t)cls) + 1;
	for (int i = 0; i < DTX_LOG_SLOTS; i++) {
		if (st->logged[i] == key)
			return;
		if (!st->logged[i]) {
			st->logged[i] = key;
			break;
		}
	}
	ibx_info("datatype %llu, %zu-byte message: %s (%s)", (unsigned long long)id, len,
		 ibx_dt_scheme_name(r->hdr.scheme), why);
}

/* Turns a scattered receive into a packed one landing in a buffer of its
 * own (unpacked by `done`). */
static int make_packed_recv(ibx_request_t *req, dtx_req_t *r)
{
	void *tmp = buf_get(r->ctx->dtx, req->buflen, &r->tmp_cap);

	if (!tmp)
		return -1;
	r->tmp = tmp;
	req->buf = tmp;
	r->hdr.packed = true;
	return 0;
}

static int op_choose(ibx_request_t *req, size_t len, bool sender_contig, uint32_t sender_avg,
		     unsigned can, unsigned fast)
{
	dtx_req_t *r = dtx_of(req);
	dtx_state_t *st = r->ctx->dtx;
	const char *why;
	ibx_dt_scheme_t s = ibx_dt_select_recv(r->ctx, r->dt, r->count, len, sender_contig,
					       sender_avg, can, fast, st->forced, &why);

	r->hdr.scheme = (uint8_t)s;
	if (s == IBX_DT_SCHEME_GENERIC && make_packed_recv(req, r) < 0)
		return -1;
	log_choice(st, r, len, why);
	return (int)s;
}

static void op_done(ibx_request_t *req, ibx_status_t *status)
{
	dtx_req_t *r = dtx_of(req);
	dtx_state_t *st = r->ctx->dtx;

	if (r->recv && r->hdr.packed && r->tmp &&
	    (*status == IBX_OK || *status == IBX_ERR_TRUNCATED)) {
		size_t n = req->length < req->buflen ? req->length : req->buflen;

		if (n && ibx_dt_unpack(r->dt, r->count, r->ubuf, 0, (int64_t)n, r->tmp) != IBX_OK)
			*status = IBX_ERR_INVALID_PARAM;
	}
	if (r->recv && r->hdr.scheme != IBX_DT_SCHEME_AUTO)
		st->count[r->hdr.scheme]++;
	req->buf = r->ubuf;
	req->dt = NULL;
	dtx_req_put(st, r);
}

/* ---- multi-w: layouts across the wire -------------------------------------------------- */

static dtx_peer_t *peer_of(dtx_state_t *st, int rank)
{
	if (rank < 0 || rank >= st->npeers)
		return NULL;
	if (!st->peers[rank])
		st->peers[rank] = calloc(1, sizeof(dtx_peer_t));
	return st->peers[rank];
}

static int op_layout(ibx_request_t *req, int peer, void *buf, size_t cap, size_t *len_p,
		     uint64_t *id_p, uint32_t *ver_p, int64_t *count_p)
{
	dtx_req_t *r = dtx_of(req);
	dtx_peer_t *pp = peer_of(r->ctx->dtx, peer);
	size_t need;

	if (!pp || ibx_dt_wire_id(r->dt, id_p, ver_p) != IBX_OK)
		return -1;
	*count_p = r->count;
	for (int i = 0; i < pp->nsent; i++) {
		if (pp->sent[i].id == *id_p && pp->sent[i].ver == *ver_p) {
			*len_p = 0;
			return 0;
		}
	}
	if (ibx_dt_wire_size(r->dt, &need) != IBX_OK)
		return -1;
	if (need > cap) {
		*len_p = need;
		return -2;
	}
	if (ibx_dt_serialize(r->dt, buf, cap, &need) != IBX_OK)
		return -1;
	if (pp->nsent < DTX_LAYOUTS)
		pp->sent[pp->nsent++] = (dtx_layout_id_t){*id_p, *ver_p};
	*len_p = need;
	return 0;
}

/* The receiver's layout (id, ver): from @blob (then kept, replacing an
 * older version of the id) or the cache. *tmp_p is set when the type is
 * not kept (the caller frees it). */
static ibx_dt_t *layout_get(dtx_peer_t *pp, uint64_t id, uint32_t ver, const void *blob, size_t len,
			    ibx_dt_t **tmp_p)
{
	ibx_dt_t *t = NULL;
	uint64_t bid;
	uint32_t bver;
	int slot = -1;

	*tmp_p = NULL;
	for (int i = 0; i < pp->nhave; i++) {
		if (pp->have[i].key.id != id)
			continue;
		if (!blob && pp->have[i].key.ver == ver)
			return pp->have[i].dt;
		slot = i;
	}
	if (!blob)
		return NULL; /* never sent: a protocol error */
	if (ibx_dt_deserialize(blob, len, &t) != IBX_OK)
		return NULL;
	if (ibx_dt_wire_id(t, &bid, &bver) != IBX_OK || bid != id || bver != ver) {
		ibx_dt_free(&t);
		return NULL;
	}
	if (slot < 0 && pp->nhave < DTX_LAYOUTS)
		slot = pp->nhave++;
	else if (slot >= 0)
		ibx_dt_free(&pp->have[slot].dt);
	if (slot < 0) {
		*tmp_p = t;
		return t;
	}
	pp->have[slot].key = (dtx_layout_id_t){id, ver};
	pp->have[slot].dt = t;
	return t;
}

typedef struct pair_walk {
	dtx_req_t *r;
	int (*put)(void *arg, const struct iovec *src, int n, uint64_t raddr, size_t bytes);
	void *arg;
} pair_walk_t;

/* One receiver block: the send's bytes at the same packed offset, as
 * gather lists, written to it. */
static ibx_status_t pair_block(void *arg, int64_t packed_off, void *addr, size_t len)
{
	pair_walk_t *w = arg;
	ibx_dt_cursor_t *c = cursor_at(w->r, (size_t)packed_off);
	size_t done = 0;

	while (c && done < len) {
		struct iovec iov[64];
		int64_t bytes = 0;
		int n = 0;

		if (ibx_dt_cursor_iov(c, (int64_t)(len - done), iov, 64, &n, &bytes) != IBX_OK ||
		    !bytes)
			return IBX_ERR_CORRUPT;
		if (w->put(w->arg, iov, n, (uint64_t)(uintptr_t)addr + done, (size_t)bytes) < 0)
			return IBX_ERR_IO;
		done += (size_t)bytes;
	}
	return c ? IBX_OK : IBX_ERR_CORRUPT;
}

static int op_pairs(ibx_request_t *req, int peer, uint64_t id, uint32_t ver, const void *blob,
		    size_t blob_len, uint64_t rbase, int64_t rcount, size_t len,
		    int (*put)(void *arg, const struct iovec *src, int n, uint64_t raddr,
			       size_t bytes),
		    void *arg)
{
	dtx_req_t *r = dtx_of(req);
	dtx_peer_t *pp = peer_of(r->ctx->dtx, peer);
	pair_walk_t w = {r, put, arg};
	ibx_dt_t *tmp = NULL, *t;
	ibx_dt_cursor_t rc;
	int64_t done = 0;
	int ret = -1;

	if (!pp || !(t = layout_get(pp, id, ver, blob, blob_len, &tmp)))
		return -1;
	if (rcount >= 0 &&
	    ibx_dt_cursor_init(&rc, t, rcount, (void *)(uintptr_t)rbase, 0) == IBX_OK &&
	    (int64_t)len <= ibx_dt_cursor_left(&rc) &&
	    ibx_dt_cursor_blocks(&rc, (int64_t)len, pair_block, &w, &done) == IBX_OK &&
	    done == (int64_t)len)
		ret = 0;
	ibx_dt_free(&tmp);
	return ret;
}

static const struct ibx_req_dt_ops dtx_ops = {.out = op_out,
					      .in = op_in,
					      .iov = op_iov,
					      .choose = op_choose,
					      .done = op_done,
					      .layout = op_layout,
					      .pairs = op_pairs};

/* ---- entry points ------------------------------------------------------------------------ */

/* Checks (count, dt) and sizes the message; *contig_p when its bytes are one
 * run starting at buf + *lb_p. */
static ibx_status_t typed_check(const ibx_dt_t *dt, int64_t count, size_t *len_p, bool *contig_p,
				int64_t *lb_p, ibx_dt_info_t *in)
{
	if (!dt || count < 0 || ibx_dt_query(dt, in) != IBX_OK || !in->committed || in->remote)
		return IBX_ERR_INVALID_PARAM;
	if (in->size && count > INT64_MAX / in->size)
		return IBX_ERR_OVERFLOW;
	*len_p = (size_t)(count * in->size);
	*contig_p = in->dense || (in->contig && count <= 1) || !*len_p;
	*lb_p = in->true_lb;
	return IBX_OK;
}

static dtx_req_t *dtx_req_new(ibx_ctx_t *ctx, ibx_request_t *req, const ibx_dt_t *dt, int64_t count,
			      void *buf, bool recv)
{
	dtx_state_t *st = dtx_state(ctx);
	dtx_req_t *r = st ? dtx_req_get(st) : NULL;

	if (!r)
		return NULL;
	r->hdr.ops = &dtx_ops;
	r->hdr.packed = false;
	r->hdr.scheme = IBX_DT_SCHEME_AUTO;
	r->hdr.lb = 0;
	r->hdr.span = 0;
	r->hdr.avg_block = 0;
	r->ctx = ctx;
	r->dt = dt;
	r->count = count;
	r->ubuf = buf;
	r->tmp = NULL;
	r->recv = recv;
	r->cur_ok = false;
	req->dt = &r->hdr;
	return r;
}

/* The type's average block, for the receiver's choice. */
static uint32_t avg_block(const ibx_dt_t *dt)
{
	ibx_dt_stats_t s;

	if (ibx_dt_stats(dt, &s) != IBX_OK)
		return 0;
	return s.avg_block >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)s.avg_block;
}

/* Whether a send to @peer streams from the user's blocks (else it is packed
 * first, whole). */
static bool send_scattered(ibx_ctx_t *ctx, int dest, dtx_state_t *st, const ibx_dt_t *dt)
{
	const ibx_peer_t *peer = &ctx->peers[dest];

	if (dest == ctx->rank || !peer->ops || !peer->ops->typed_send)
		return false;
	if (st->forced == IBX_DT_SCHEME_GENERIC || st->forced == IBX_DT_SCHEME_P_RRS)
		return false;
	/* pushed sends (verbs): the measured model says whether pushing pays */
	return !peer->ops->typed_push || st->forced != IBX_DT_SCHEME_AUTO || ibx_dt_select_push(dt);
}

ibx_status_t ibx_tag_send_dt(ibx_ctx_t *ctx, int dest, const void *buf, int64_t count,
			     const ibx_dt_t *dt, ibx_tag_t tag, unsigned flags, ibx_request_t *req)
{
	ibx_dt_info_t in;
	size_t len;
	bool contig;
	int64_t lb;
	dtx_req_t *r;
	ibx_status_t st;

	if (!ctx || !req || dest < 0 || dest >= ctx->size || (flags & ~IBX_SEND_SYNC))
		return IBX_ERR_INVALID_PARAM;
	/* buf may be NULL: a type of absolute addresses (MPI_BOTTOM) */
	st = typed_check(dt, count, &len, &contig, &lb, &in);
	if (st != IBX_OK)
		return st;
	if (contig)
		return ibx_tag_send(ctx, dest, len ? (const char *)buf + lb : buf, len, tag, flags,
				    req);
	if (ctx->peers[dest].error != IBX_OK)
		return ctx->peers[dest].error;
	ibx_req_init(req, IBX_REQ_SEND);
	r = dtx_req_new(ctx, req, dt, count, (void *)buf, false);
	if (!r)
		return IBX_ERR_NO_MEMORY;
	req->buf = (void *)buf;
	req->buflen = len;
	req->tag = tag;
	req->flags = flags;
	req->peer = dest;
	r->hdr.avg_block = avg_block(dt);
	if (!send_scattered(ctx, dest, ctx->dtx, dt)) {
		r->tmp = buf_get(ctx->dtx, len, &r->tmp_cap);
		if (!r->tmp) {
			req->dt = NULL;
			dtx_req_put(ctx->dtx, r);
			return IBX_ERR_NO_MEMORY;
		}
		ibx_dt_pack(dt, count, buf, 0, (int64_t)len, r->tmp);
		req->buf = r->tmp;
		r->hdr.packed = true;
	}
	st = ibx_tag_send_req(ctx, req);
	if (st < 0 && req->dt) {
		req->dt = NULL;
		dtx_req_put(ctx->dtx, r);
	}
	return st;
}

/* A receive's request, initialised by the caller but for the typed state. */
static ibx_status_t recv_setup(ibx_ctx_t *ctx, void *buf, int64_t count, const ibx_dt_t *dt,
			       ibx_request_t *req, bool *contig_p, size_t *len_p, int64_t *lb_p)
{
	ibx_dt_info_t in;
	ibx_status_t st = typed_check(dt, count, len_p, contig_p, lb_p, &in);

	if (st != IBX_OK)
		return st;
	if (*contig_p)
		return IBX_OK;
	if (ibx_dt_overlaps(dt, count)) {
		ibx_debug("typed receive: the type's blocks overlap");
		return IBX_ERR_INVALID_PARAM;
	}
	ibx_req_init(req, IBX_REQ_RECV);
	if (!dtx_req_new(ctx, req, dt, count, buf, true))
		return IBX_ERR_NO_MEMORY;
	req->dt->lb = in.true_lb;
	req->dt->span = (count - 1) * in.extent + in.true_extent;
	req->buf = buf;
	req->buflen = *len_p;
	return IBX_OK;
}

static ibx_status_t recv_cleanup(ibx_ctx_t *ctx, ibx_request_t *req, ibx_status_t st)
{
	if (st < 0 && req->dt) {
		dtx_req_t *r = dtx_of(req);

		req->dt = NULL;
		dtx_req_put(ctx->dtx, r);
	}
	return st;
}

ibx_status_t ibx_tag_recv_dt(ibx_ctx_t *ctx, int src, void *buf, int64_t count, const ibx_dt_t *dt,
			     ibx_tag_t tag, ibx_tag_t mask, ibx_request_t *req)
{
	size_t len;
	bool contig;
	int64_t lb;
	ibx_status_t st;

	if (!ctx || !req || (src != IBX_ANY_SOURCE && (src < 0 || src >= ctx->size)))
		return IBX_ERR_INVALID_PARAM;
	st = recv_setup(ctx, buf, count, dt, req, &contig, &len, &lb);
	if (st != IBX_OK)
		return st;
	if (contig)
		return ibx_tag_recv(ctx, src, len ? (char *)buf + lb : buf, len, tag, mask, req);
	req->tag = tag;
	req->mask = mask;
	req->peer = src;
	return recv_cleanup(ctx, req, ibx_tag_recv_req(ctx, req));
}

ibx_status_t ibx_tag_mrecv_dt(ibx_ctx_t *ctx, ibx_tag_msg_t *msg, void *buf, int64_t count,
			      const ibx_dt_t *dt, ibx_request_t *req)
{
	size_t len;
	bool contig;
	int64_t lb;
	ibx_status_t st;

	if (!ctx || !msg || !req)
		return IBX_ERR_INVALID_PARAM;
	st = recv_setup(ctx, buf, count, dt, req, &contig, &len, &lb);
	if (st != IBX_OK)
		return st;
	if (contig)
		return ibx_tag_mrecv(ctx, msg, len ? (char *)buf + lb : buf, len, req);
	if (!ibx_tag_msg_take(ctx, msg))
		return recv_cleanup(ctx, req, IBX_ERR_INVALID_PARAM);
	return recv_cleanup(ctx, req, ibx_tag_mrecv_req(ctx, msg, req));
}
