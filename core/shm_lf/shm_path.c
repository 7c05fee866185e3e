/*
 * shm_path.c — the node-local path: lock-free slot rings per ordered pair
 * of processes, a pipelined copy and a kernel single copy (CMA) for large
 * messages ([Gropp97]; docs/design.md, "Shared memory").
 *
 * Set-up, inside ibx_init's collective sequence:
 *
 *   init     sweep segments stranded by dead jobs; create our segment
 *            <IBX_SHM_DIR>/ibx-<job>-<rank> with one area per local peer
 *            (shm_seg.c); boot_put("shm", {pid, size, probe addr, path})
 *   ── fence(collect) ──
 *   connect  for every peer: map its segment, find our area in it; probe
 *            CMA with an 8-byte process_vm_readv of the peer's probe word
 *   ── fence(barrier) ──
 *   ready    every peer has mapped us: unlink our name. From here on a
 *            normal exit, an abort or a kill -9 leaves nothing in /dev/shm.
 *
 * Eager (len ≤ IBX_SHM_EAGER_LIMIT, not SYNC), i → j:
 *
 *   i: tag_send                    ring i→j (in j's segment)        j: progress
 *      room? (private limit)    [EAGER tag len data | cont...]
 *      write slots ───────────► slot_publish ────► slot_consume ──► ibx_tag_arrive_eager
 *      return IBX_OK                                                (≤ 40 B straight
 *                                                                    from the slot)
 *      (ring full: re-read      ack.ring_consumed ◄──────────────── once per poll
 *       i's own ack line)       (in i's segment, [Gropp97] §9.3)
 *
 * Rendezvous through the pipe (larger, or SYNC), i → j:
 *
 *   sender i                                      receiver j
 *   RTS{len, addr, id} ─────── ring i→j ───────►  ibx_tag_arrive_rts ... a receive
 *                                                  matches: rndv_recv
 *                      ◄────── ring j→i ───────── CTS{id, bytes = min(len, buflen)}
 *   push chunk 0 ───────────── pipe i→j ───────►  pull chunk 0
 *   push chunk 1  (both copy at the same time)    pull chunk 1 ...
 *   all pushed: send complete                     all pulled: receive complete
 *                                                 (TRUNCATED if buflen < len)
 *
 *   One stream per ordered pair. The receiver sends CTS for the rendezvous
 *   it has matched, in match order, and drains them in that order; the
 *   sender streams in CTS order; one message's chunks follow the previous
 *   one's. Only matched messages ever enter the pipe, so a large message
 *   that nobody receives yet never holds back a later one (the RTS of every
 *   send goes out at once, in order with the eager packets).
 *
 * Rendezvous by single copy (len ≥ IBX_SHM_CMA_THRESHOLD, CMA allowed):
 *
 *   RTS{len, addr, id, CMA} ───────────────────►  matched; n = min(len, buflen)
 *                                                 n < 64k: process_vm_readv of
 *                                                 all n bytes
 *                           ◄─────────────────── FIN{id, status}: send complete
 *
 *   n ≥ 64k: both processes copy, each its half, at the same time:
 *                           ◄─────────────────── CTSW{id, raddr, s, n - s}
 *   process_vm_writev of [s, n)                   process_vm_readv of [0, s)
 *   to raddr in the receiver
 *   FINW{id, status} ─────────────────────────►  (and FIN, as above, once its
 *                                                 read is done)
 *   complete on FIN                               complete on FINW
 *
 *   If the kernel refuses (ptrace rules, EPERM: tried on the first page
 *   before anything is asked of the sender) the receiver answers with a
 *   CTS instead and the pipe serves.
 *
 * SYNC sends always take a rendezvous, so they complete only after the
 * receive matched (CTS or FIN came back). A rendezvous of zero bytes (SYNC
 * of an empty message, or a zero-length receive) is answered by FIN.
 *
 * Ordering: everything i sends to j goes through the one ring i→j in send
 * order — sends that find the ring full wait in a per-peer queue that is
 * drained before any newer send — and j hands packets to the tag layer in
 * ring order: MPI's non-overtaking rule. Control packets (CTS, FIN) are
 * not matched and may pass queued sends.
 *
 * Polling ([Gropp97] §9.1): a receiver checks the rings of its active senders
 * first, on every pass; a sender that stayed silent for SHM_IDLE_DEMOTE
 * passes drops to the idle set, whose rings are checked only when the
 * active ones had nothing (so a waiting rank still sees every ring on every
 * pass) or every (SHM_IDLE_SCAN_MASK+1)th pass under traffic, and comes
 * back the moment a packet is found there or we send to it.
 * Every SHM_CLOCK_MASK+1 passes the clock is read, and every
 * IBX_PEER_CHECK_MS the peers' pids are checked (kill(pid, 0), and not a
 * zombie in /proc/<pid>/stat): a dead
 * peer's already published packets are delivered, then everything pending
 * with it fails with IBX_ERR_UNREACHABLE. No allocation, syscall or clock
 * read happens per message.
 */
#define _GNU_SOURCE /* process_vm_readv, sched_getcpu */
#include "shm_int.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#define SHM_BOOT_KEY	   "shm"
#define SHM_RX_BUDGET	   64	/* packets taken from one ring per pass */
#define SHM_IDLE_DEMOTE	   4096 /* empty polls before a sender counts as idle */
#define SHM_IDLE_SCAN_MASK 15	/* idle senders: polled every 16th pass */
#define SHM_CLOCK_MASK	   1023 /* passes between two clock reads */

/* What a process publishes at init (the path follows, NUL-terminated). */
typedef struct shm_boot_info {
	uint32_t version;
	int32_t pid;
	uint64_t size;
	uint64_t probe_addr;
	uint64_t probe_value;
	char path[];
} shm_boot_info_t;

/* A control packet waiting for room in the ring. */
typedef struct shm_ctrl {
	uint8_t type;
	uint8_t len;
	uint32_t id;
	uint64_t val[3];
} shm_ctrl_t;

struct shm_state;

typedef struct shm_peer {
	/* fast path: the two ends of the rings with this peer */
	ibx_shm_tx_t tx; /* ring me→peer, in the peer's segment */
	ibx_shm_rx_t rx; /* ring peer→me, in our segment */
	size_t eager_limit;
	uint32_t idle; /* empty polls in a row */
	int order_pos; /* index in state->order */
	bool failed;
	bool cma_ok;   /* we may process_vm_readv/writev the peer */
	bool has_work; /* counted in state->nwork */
	int rank;
	pid_t pid;
	ibx_peer_t *peer;
	struct shm_state *st;
	/* rendezvous and back-pressure */
	ibx_req_queue_t pending; /* sends waiting for ring room, in send order */
	ibx_req_queue_t rndv_tx; /* RTS sent, waiting for CTS or FIN */
	ibx_req_queue_t pipe_tx; /* CTS received: streamed in CTS order */
	ibx_req_queue_t pipe_rx; /* CTS sent: drained in CTS order */
	ibx_req_queue_t cma_rx;	 /* split single copy: our part read, waiting for FINW */
	shm_ctrl_t *ctrl;	 /* circular queue of control packets */
	uint32_t ctrl_head, ctrl_count, ctrl_cap;
	uint32_t next_id;
	ibx_shm_pipe_t ptx; /* pipe me→peer, in the peer's segment */
	ibx_shm_pipe_t prx; /* pipe peer→me, in our segment */
	ibx_shm_seg_t seg;  /* the peer's segment, mapped here */
} shm_peer_t;

typedef struct shm_state {
	ibx_ctx_t *ctx;
	int npeers;
	shm_peer_t *peers; /* ascending ranks = area order */
	int *order;	   /* peer indices: [0, nactive) active, the rest idle */
	int nactive;
	int nwork; /* peers with queued work */
	bool in_progress;
	uint64_t tick;
	uint64_t next_check_ns, check_ns;
	size_t cma_threshold; /* 0: never */
	uint8_t *scratch;     /* gathers multi-slot eager packets */
	ibx_shm_geom_t geom;
	ibx_shm_seg_t seg;   /* ours */
	uint64_t probe_word; /* peers read it to learn whether CMA works */
} shm_state_t;

/* request private fields */
#define RQ_ID(r)     ((r)->priv[0]) /* send: rendezvous id */
#define RQ_BYTES(r)  ((r)->priv[1]) /* bytes to move through the pipe */
#define RQ_RNDV(r)   ((r)->priv[2]) /* send: rendezvous (not eager) */
#define RQ_STATUS(r) ((r)->priv[3]) /* receive (split copy): how our part went */

/* From this size a single copy is split between the two processes. */
#define SHM_CMA_SPLIT_MIN (64u << 10)

static const ibx_path_ops_t shm_ops;

/* ---- bookkeeping ----------------------------------------------------------- */

static void update_work(shm_peer_t *p)
{
	bool w = p->ctrl_count || !ibx_list_empty(&p->pending) || !ibx_list_empty(&p->pipe_tx) ||
		 !ibx_list_empty(&p->pipe_rx);

	if (w != p->has_work) {
		p->has_work = w;
		p->st->nwork += w ? 1 : -1;
	}
}

static void order_swap(shm_state_t *st, int a, int b)
{
	int pa = st->order[a], pb = st->order[b];

	st->order[a] = pb;
	st->order[b] = pa;
	st->peers[pb].order_pos = a;
	st->peers[pa].order_pos = b;
}

static inline void promote(shm_peer_t *p)
{
	shm_state_t *st = p->st;

	p->idle = 0;
	if (ibx_likely(p->order_pos < st->nactive) || p->failed)
		return;
	order_swap(st, p->order_pos, st->nactive);
	st->nactive++;
}

static void demote(shm_peer_t *p)
{
	shm_state_t *st = p->st;

	if (p->order_pos >= st->nactive)
		return;
	st->nactive--;
	order_swap(st, p->order_pos, st->nactive);
}

static ibx_request_t *rq_find_id(ibx_req_queue_t *q, uint32_t id)
{
	ibx_request_t *r;

	ibx_rq_for_each(r, q) if ((uint32_t)RQ_ID(r) == id) return r;
	return NULL;
}

static void fail_queue(ibx_req_queue_t *q, ibx_status_t why)
{
	ibx_request_t *r;

	while ((r = ibx_rq_first(q))) {
		ibx_rq_remove(q, r);
		ibx_req_complete(r, why);
	}
}

static int poll_peer(shm_state_t *st, shm_peer_t *p);

/* The peer is lost: everything pending with it fails, never hangs. */
static void peer_fail(shm_state_t *st, shm_peer_t *p, ibx_status_t why)
{
	if (p->failed)
		return;
	p->failed = true;
	ibx_error("shm: lost rank %d (pid %d): %s", p->rank, (int)p->pid, ibx_status_str(why));
	demote(p);
	if (p->peer->error == IBX_OK)
		p->peer->error = why;
	p->ctrl_count = 0;
	fail_queue(&p->pending, why);
	fail_queue(&p->rndv_tx, why);
	fail_queue(&p->pipe_tx, why);
	fail_queue(&p->pipe_rx, why);
	fail_queue(&p->cma_rx, why);
	update_work(p);
	ibx_tag_peer_failed(st->ctx, p->rank, why);
}

/* ---- sending --------------------------------------------------------------- */

/* Puts an eager packet or an RTS into the ring; false when it is full. */
static bool send_start(shm_peer_t *p, ibx_request_t *req)
{
	ibx_shm_rts_t rts;
	size_t thr = p->st->cma_threshold;

	if (!RQ_RNDV(req))
		return ibx_shm_tx_send(&p->tx, IBX_SHM_PKT_EAGER, 0, req->tag, req->buf,
				       req->buflen);
	rts.len = req->buflen;
	rts.addr = (uint64_t)(uintptr_t)req->buf;
	rts.id = (uint32_t)RQ_ID(req);
	rts.flags = p->cma_ok && thr && req->buflen >= thr ? IBX_SHM_RTS_CMA : 0;
	if (!ibx_shm_tx_send(&p->tx, IBX_SHM_PKT_RTS, 0, req->tag, &rts, sizeof(rts)))
		return false;
	ibx_rq_push(&p->rndv_tx, req);
	return true;
}

static ibx_status_t send_slow(shm_peer_t *p, ibx_request_t *req)
{
	if (p->failed)
		return p->peer->error != IBX_OK ? p->peer->error : IBX_ERR_UNREACHABLE;
	RQ_RNDV(req) = (req->flags & IBX_SEND_SYNC) || req->buflen > p->eager_limit;
	RQ_ID(req) = RQ_RNDV(req) ? ++p->next_id : 0;
	promote(p);
	if (ibx_list_empty(&p->pending) && send_start(p, req))
		return RQ_RNDV(req) ? IBX_INPROGRESS : IBX_OK;
	/* ring full: wait, in order, behind earlier sends */
	ibx_rq_push(&p->pending, req);
	update_work(p);
	return IBX_INPROGRESS;
}

static ibx_status_t shm_tag_send(ibx_peer_t *peer, ibx_request_t *req)
{
	shm_peer_t *p = peer->path;

	/* the fast path: a few compares, the slot stores, one release */
	if (ibx_likely(!(req->flags & IBX_SEND_SYNC) && req->buflen <= p->eager_limit &&
		       ibx_list_empty(&p->pending)) &&
	    ibx_likely(
		ibx_shm_tx_send(&p->tx, IBX_SHM_PKT_EAGER, 0, req->tag, req->buf, req->buflen))) {
		promote(p);
		return IBX_OK;
	}
	return send_slow(p, req);
}

static bool ctrl_try(shm_peer_t *p, const shm_ctrl_t *c)
{
	return ibx_shm_tx_send(&p->tx, c->type, c->id, 0, c->val, c->len);
}

/* CTS, CTSW, FIN, FINW: straight into the ring, or queued (in order) if it
 * is full. */
static void send_ctrl(shm_peer_t *p, uint8_t type, uint32_t id, const void *data, size_t len)
{
	shm_ctrl_t *c, tmp = {.type = type, .len = (uint8_t)len, .id = id};

	if (p->failed)
		return;
	memcpy(tmp.val, data, len);
	if (!p->ctrl_count && ctrl_try(p, &tmp))
		return;
	if (p->ctrl_count == p->ctrl_cap) {
		uint32_t cap = p->ctrl_cap ? 2 * p->ctrl_cap : 16;
		shm_ctrl_t *q = malloc(cap * sizeof(*q));

		if (!q) {
			ibx_error("shm: out of memory queueing a control packet for rank %d",
				  p->rank);
			peer_fail(p->st, p, IBX_ERR_NO_MEMORY);
			return;
		}
		for (uint32_t i = 0; i < p->ctrl_count; i++)
			q[i] = p->ctrl[(p->ctrl_head + i) % p->ctrl_cap];
		free(p->ctrl);
		p->ctrl = q;
		p->ctrl_cap = cap;
		p->ctrl_head = 0;
	}
	c = &p->ctrl[(p->ctrl_head + p->ctrl_count) % p->ctrl_cap];
	*c = tmp;
	p->ctrl_count++;
	update_work(p);
}

static void send_ctrl64(shm_peer_t *p, uint8_t type, uint32_t id, uint64_t val)
{
	send_ctrl(p, type, id, &val, sizeof(val));
}

static int ctrl_drain(shm_peer_t *p)
{
	int n = 0;

	while (p->ctrl_count) {
		shm_ctrl_t *c = &p->ctrl[p->ctrl_head];

		if (!ctrl_try(p, c))
			break;
		p->ctrl_head = (p->ctrl_head + 1) % p->ctrl_cap;
		p->ctrl_count--;
		n++;
	}
	return n;
}

static int pending_drain(shm_peer_t *p)
{
	ibx_request_t *req;
	int n = 0;

	while ((req = ibx_rq_first(&p->pending))) {
		ibx_rq_remove(&p->pending, req);
		if (!send_start(p, req)) {
			/* back to the head: order is kept */
			ibx_list_push_head(&p->pending, &req->link);
			break;
		}
		n++;
		if (!RQ_RNDV(req))
			ibx_req_complete(req, IBX_OK);
	}
	return n;
}

static int pipe_tx_work(shm_peer_t *p)
{
	ibx_request_t *req;
	int n = 0;

	while ((req = ibx_rq_first(&p->pipe_tx))) {
		size_t want = RQ_BYTES(req);

		if (req->done < want) {
			size_t k = ibx_shm_pipe_push(&p->ptx, (const char *)req->buf + req->done,
						     want - req->done);

			req->done += k;
			n += k != 0;
			if (req->done < want)
				break;
		}
		ibx_rq_remove(&p->pipe_tx, req);
		ibx_req_complete(req, IBX_OK);
		n++;
	}
	return n;
}

/* ---- receiving ------------------------------------------------------------- */

static int pipe_rx_work(shm_state_t *st, shm_peer_t *p)
{
	ibx_request_t *req;
	int n = 0;

	while ((req = ibx_rq_first(&p->pipe_rx))) {
		size_t want = RQ_BYTES(req);

		if (req->done < want) {
			size_t k = ibx_shm_pipe_pull(&p->prx, (char *)req->buf + req->done,
						     want - req->done);

			if (k == (size_t)-1) {
				ibx_error("shm: rank %d published a pipe chunk that does not fit "
					  "its message",
					  p->rank);
				peer_fail(st, p, IBX_ERR_CORRUPT);
				return n;
			}
			req->done += k;
			n += k != 0;
			if (req->done < want)
				break;
		}
		ibx_rq_remove(&p->pipe_rx, req);
		ibx_req_complete(req, req->length <= req->buflen ? IBX_OK : IBX_ERR_TRUNCATED);
		n++;
	}
	return n;
}

/*
 * The single copy (CMA) of @n bytes into req->buf. From SHM_CMA_SPLIT_MIN
 * on the two processes share it: we ask the sender (CTSW) to write the
 * second half straight into our buffer with process_vm_writev while we
 * read the first half from its buffer with process_vm_readv — two cores
 * copying once each, no intermediate buffer, no line crossing twice.
 *
 *   receiver                                   sender
 *   read first page (refused? -> the pipe)
 *   CTSW{id, raddr = buf + s, s, n - s} ─────► process_vm_writev [s, n)
 *   process_vm_readv [page, s)                 (at the same time)
 *   FIN{id, status} ─────────────────────────► (its buffer is free): complete
 *   complete  ◄─────────────────────────────── FINW{id, status}
 *
 * Returns IBX_ERR_UNSUPPORTED, with nothing moved, when the kernel refuses.
 */
static ibx_status_t rndv_recv_cma(shm_peer_t *p, const ibx_shm_rts_t *rts, ibx_request_t *req,
				  size_t n)
{
	size_t split = n >= SHM_CMA_SPLIT_MIN ? (n / 2) & ~(size_t)4095 : n;
	size_t first = split < 4096 ? split : 4096;
	struct iovec iov = {.iov_base = req->buf, .iov_len = first};
	bool asked = false; /* the sender writes a part */
	ibx_status_t s;

	s = ibx_shm_cma_xfer(p->pid, &iov, 1, rts->addr, false);
	if (s == IBX_ERR_UNSUPPORTED) {
		ibx_info("shm: CMA from rank %d refused (%s): using the pipelined copy", p->rank,
			 strerror(errno));
		p->cma_ok = false;
		return s;
	}
	if (s == IBX_OK && split < n) {
		ibx_shm_ctsw_t w = {.raddr = (uint64_t)(uintptr_t)req->buf + split,
				    .offset = split,
				    .bytes = n - split};

		send_ctrl(p, IBX_SHM_PKT_CTSW, rts->id, &w, sizeof(w));
		asked = true;
	}
	if (s == IBX_OK && first < split) {
		iov.iov_base = (char *)req->buf + first;
		iov.iov_len = split - first;
		s = ibx_shm_cma_xfer(p->pid, &iov, 1, rts->addr + first, false);
	}
	if (s == IBX_ERR_UNREACHABLE) {
		peer_fail(p->st, p, s);
		return s;
	}
	if (s != IBX_OK)
		ibx_error("shm: process_vm_readv of %zu bytes from rank %d (pid %d) failed: %s",
			  split, p->rank, (int)p->pid, strerror(errno));
	/* the sender's buffer is no longer read: its send may complete */
	send_ctrl64(p, IBX_SHM_PKT_FIN, rts->id, (uint64_t)(int64_t)s);
	if (!asked)
		return s;
	/* the sender is writing the rest into req->buf: wait for its FINW */
	RQ_ID(req) = rts->id;
	RQ_STATUS(req) = (uint64_t)(int64_t)s;
	ibx_rq_push(&p->cma_rx, req);
	promote(p);
	return IBX_INPROGRESS;
}

/* CTSW: write our part of a split single copy into the receiver. */
static ibx_status_t tx_ctsw(shm_peer_t *p, uint32_t id, const ibx_shm_ctsw_t *w)
{
	ibx_request_t *req = rq_find_id(&p->rndv_tx, id);
	struct iovec iov;
	ibx_status_t s;

	if (!req || w->offset > req->buflen || w->bytes > req->buflen - w->offset)
		return IBX_ERR_CORRUPT;
	iov.iov_base = (char *)req->buf + w->offset;
	iov.iov_len = w->bytes;
	s = ibx_shm_cma_xfer(p->pid, &iov, 1, w->raddr, true);
	if (s == IBX_ERR_UNREACHABLE) {
		peer_fail(p->st, p, s);
		return IBX_OK;
	}
	if (s != IBX_OK)
		ibx_error("shm: process_vm_writev of %llu bytes to rank %d (pid %d) failed: %s",
			  (unsigned long long)w->bytes, p->rank, (int)p->pid, strerror(errno));
	/* the request stays in rndv_tx until the receiver's FIN */
	send_ctrl64(p, IBX_SHM_PKT_FINW, id, (uint64_t)(int64_t)s);
	return IBX_OK;
}

static ibx_status_t shm_rndv_recv(ibx_peer_t *peer, const void *rts_bytes, ibx_request_t *req)
{
	shm_peer_t *p = peer->path;
	ibx_shm_rts_t rts;
	size_t n;

	if (p->failed)
		return p->peer->error != IBX_OK ? p->peer->error : IBX_ERR_UNREACHABLE;
	memcpy(&rts, rts_bytes, sizeof(rts));
	n = rts.len <= req->buflen ? (size_t)rts.len : req->buflen;
	if (n == 0) {
		send_ctrl64(p, IBX_SHM_PKT_FIN, rts.id, (uint64_t)IBX_OK);
		return IBX_OK;
	}
	if ((rts.flags & IBX_SHM_RTS_CMA) && p->cma_ok) {
		ibx_status_t s = rndv_recv_cma(p, &rts, req, n);

		if (s != IBX_ERR_UNSUPPORTED)
			return s;
		/* refused before anything moved: the pipe serves */
	}
	RQ_BYTES(req) = n;
	req->done = 0;
	ibx_rq_push(&p->pipe_rx, req);
	update_work(p);
	send_ctrl64(p, IBX_SHM_PKT_CTS, rts.id, n);
	promote(p);
	return IBX_INPROGRESS;
}

/* Everything but a one-slot eager packet. */
static ibx_status_t rx_packet(shm_state_t *st, shm_peer_t *p, ibx_shm_slot_t *h)
{
	ibx_request_t *req;
	ibx_shm_rts_t rts;
	uint64_t val;

	if (!ibx_shm_rx_valid(&p->rx, h))
		return IBX_ERR_CORRUPT;
	switch (h->h.type) {
	case IBX_SHM_PKT_EAGER:
		ibx_shm_rx_gather(&p->rx, h, st->scratch);
		ibx_tag_arrive_eager(st->ctx, p->rank, h->h.tag, st->scratch, h->h.len);
		return IBX_OK;
	case IBX_SHM_PKT_RTS:
		if (h->h.nslots != 1 || h->h.len != sizeof(rts))
			return IBX_ERR_CORRUPT;
		memcpy(&rts, h->h.data, sizeof(rts));
		ibx_tag_arrive_rts(st->ctx, p->rank, h->h.tag, rts.len, &rts, sizeof(rts));
		return IBX_OK;
	case IBX_SHM_PKT_CTSW: {
		ibx_shm_ctsw_t w;

		if (h->h.nslots != 1 || h->h.len != sizeof(w))
			return IBX_ERR_CORRUPT;
		memcpy(&w, h->h.data, sizeof(w));
		return tx_ctsw(p, h->h.aux, &w);
	}
	case IBX_SHM_PKT_FINW: {
		ibx_status_t mine;

		if (h->h.nslots != 1 || h->h.len != sizeof(val))
			return IBX_ERR_CORRUPT;
		memcpy(&val, h->h.data, sizeof(val));
		req = rq_find_id(&p->cma_rx, h->h.aux);
		if (!req)
			return IBX_ERR_CORRUPT;
		ibx_rq_remove(&p->cma_rx, req);
		mine = (ibx_status_t)(int64_t)RQ_STATUS(req);
		if (mine == IBX_OK)
			mine = (ibx_status_t)(int64_t)val;
		if (mine == IBX_OK && req->length > req->buflen)
			mine = IBX_ERR_TRUNCATED;
		ibx_req_complete(req, mine);
		return IBX_OK;
	}
	case IBX_SHM_PKT_CTS:
	case IBX_SHM_PKT_FIN:
		if (h->h.nslots != 1 || h->h.len != sizeof(val))
			return IBX_ERR_CORRUPT;
		memcpy(&val, h->h.data, sizeof(val));
		req = rq_find_id(&p->rndv_tx, h->h.aux);
		if (!req)
			return IBX_ERR_CORRUPT;
		ibx_rq_remove(&p->rndv_tx, req);
		if (h->h.type == IBX_SHM_PKT_FIN) {
			ibx_req_complete(req, (ibx_status_t)(int64_t)val);
			return IBX_OK;
		}
		if (val > req->buflen)
			return IBX_ERR_CORRUPT;
		RQ_BYTES(req) = val;
		req->done = 0;
		ibx_rq_push(&p->pipe_tx, req);
		update_work(p);
		return IBX_OK;
	}
	return IBX_ERR_CORRUPT;
}

/* Hands the packets published in the ring from @p to the tag layer. */
static int poll_peer(shm_state_t *st, shm_peer_t *p)
{
	ibx_shm_slot_t *h;
	int n = 0;

	while (n < SHM_RX_BUDGET && (h = ibx_shm_rx_peek(&p->rx))) {
		if (ibx_likely(h->h.type == IBX_SHM_PKT_EAGER && h->h.nslots == 1 &&
			       h->h.len <= IBX_SHM_HEAD_PAYLOAD)) {
			/* the payload is read in place: the slot is handed back
			 * only after the tag layer has copied it */
			ibx_tag_arrive_eager(st->ctx, p->rank, h->h.tag, h->h.data, h->h.len);
		} else if (ibx_unlikely(rx_packet(st, p, h) != IBX_OK)) {
			ibx_error("shm: malformed packet (type %u, %u slots, len %u) from rank %d",
				  h->h.type, h->h.nslots, h->h.len, p->rank);
			peer_fail(st, p, IBX_ERR_CORRUPT);
			return n;
		}
		ibx_shm_rx_advance(&p->rx, h);
		n++;
	}
	if (n) {
		ibx_shm_rx_release(&p->rx);
		p->idle = 0;
	}
	return n;
}

/* ---- progress -------------------------------------------------------------- */

static int poll_idle(shm_state_t *st)
{
	int ev = 0;

	for (int i = st->nactive; i < st->npeers; i++) {
		shm_peer_t *p = &st->peers[st->order[i]];
		int n;

		if (p->failed)
			continue;
		n = poll_peer(st, p);
		if (n) {
			ev += n;
			promote(p); /* swaps it below nactive; order[i] is now another idle peer */
			i--;
		}
	}
	return ev;
}

static int do_work(shm_state_t *st)
{
	int ev = 0;

	for (int i = 0; i < st->npeers && st->nwork; i++) {
		shm_peer_t *p = &st->peers[i];

		if (!p->has_work)
			continue;
		if (p->ctrl_count)
			ev += ctrl_drain(p);
		if (!ibx_list_empty(&p->pending))
			ev += pending_drain(p);
		if (!ibx_list_empty(&p->pipe_rx))
			ev += pipe_rx_work(st, p);
		if (!ibx_list_empty(&p->pipe_tx))
			ev += pipe_tx_work(p);
		update_work(p);
	}
	return ev;
}

static void check_peers(shm_state_t *st)
{
	uint64_t now = ibx_time_ns();

	if (now < st->next_check_ns)
		return;
	st->next_check_ns = now + st->check_ns;
	for (int i = 0; i < st->npeers; i++) {
		shm_peer_t *p = &st->peers[i];

		if (p->failed || ibx_shm_pid_alive(p->pid))
			continue;
		/* what it published before it died is still good */
		while (!p->failed && poll_peer(st, p))
			;
		peer_fail(st, p, IBX_ERR_UNREACHABLE);
	}
}

static int shm_progress(ibx_ctx_t *ctx, void *state)
{
	shm_state_t *st = state;
	int ev = 0;

	/* A completion callback that calls ibx_progress must not take the
	 * packet that is being delivered a second time. */
	if (ibx_unlikely(!st || st->in_progress))
		return 0;
	st->in_progress = true;
	for (int i = 0; i < st->nactive;) {
		shm_peer_t *p = &st->peers[st->order[i]];
		int n = poll_peer(st, p);

		ev += n;
		if (ibx_unlikely(!n && ++p->idle > SHM_IDLE_DEMOTE && ibx_list_empty(&p->rndv_tx) &&
				 ibx_list_empty(&p->cma_rx) && !p->has_work)) {
			demote(p); /* order[i] is now another active peer */
			continue;
		}
		i++;
	}
	st->tick++;
	/* idle senders: whenever the active ones had nothing (a waiting rank
	 * sees every ring on every pass, even when it yields the CPU between
	 * passes), and every SHM_IDLE_SCAN_MASK+1 passes under traffic */
	if (st->nactive < st->npeers && (!ev || !(st->tick & SHM_IDLE_SCAN_MASK)))
		ev += poll_idle(st);
	if (ibx_unlikely(st->nwork))
		ev += do_work(st);
	if (ibx_unlikely(!(st->tick & SHM_CLOCK_MASK)))
		check_peers(st);
	st->in_progress = false;
	return ev;
}

static bool shm_busy(ibx_ctx_t *ctx, void *state)
{
	shm_state_t *st = state;

	if (!st)
		return false;
	if (st->nwork)
		return true;
	for (int i = 0; i < st->npeers; i++)
		if (!ibx_list_empty(&st->peers[i].rndv_tx) || !ibx_list_empty(&st->peers[i].cma_rx))
			return true;
	return false;
}

/* ---- one-sided: CMA, the shm twin of RDMA gather/scatter ------------------- */

static ibx_status_t shm_cma_op(ibx_peer_t *peer, const struct iovec *iov, int n, uint64_t raddr,
			       ibx_request_t *req, bool write)
{
	shm_peer_t *p = peer->path;
	ibx_status_t s;

	if (p->failed)
		return p->peer->error != IBX_OK ? p->peer->error : IBX_ERR_UNREACHABLE;
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
			peer_fail(p->st, p, s);
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

static ibx_status_t shm_put(ibx_peer_t *peer, const struct iovec *src, int n, uint64_t raddr,
			    uint32_t rkey, ibx_request_t *req)
{
	return shm_cma_op(peer, src, n, raddr, req, true);
}

static ibx_status_t shm_get(ibx_peer_t *peer, const struct iovec *dst, int n, uint64_t raddr,
			    uint32_t rkey, ibx_request_t *req)
{
	return shm_cma_op(peer, dst, n, raddr, req, false);
}

static ibx_status_t shm_flush(ibx_peer_t *peer)
{
	/* put and get complete before they return */
	return IBX_OK;
}

/* A CMA copy is not atomic and has no completion event at the target:
 * these need the target's memory in a shared segment (not here yet). */
static ibx_status_t shm_put_imm(ibx_peer_t *peer, const struct iovec *src, int n, uint64_t raddr,
				uint32_t rkey, uint32_t imm, ibx_request_t *req)
{
	return IBX_ERR_UNSUPPORTED;
}

static ibx_status_t shm_fetch_add(ibx_peer_t *peer, uint64_t raddr, uint32_t rkey, uint64_t add,
				  uint64_t *result, ibx_request_t *req)
{
	return IBX_ERR_UNSUPPORTED;
}

static ibx_status_t shm_cswap(ibx_peer_t *peer, uint64_t raddr, uint32_t rkey, uint64_t compare,
			      uint64_t swap, uint64_t *result, ibx_request_t *req)
{
	return IBX_ERR_UNSUPPORTED;
}

static const ibx_path_ops_t shm_ops = {
    .name = "shm",
    .tag_send = shm_tag_send,
    .rndv_recv = shm_rndv_recv,
    .put = shm_put,
    .get = shm_get,
    .put_imm = shm_put_imm,
    .fetch_add = shm_fetch_add,
    .cswap = shm_cswap,
    .flush = shm_flush,
};

/* ---- set-up ---------------------------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void state_free(shm_state_t *st)
{
	for (int i = 0; i < st->npeers; i++) {
		ibx_shm_seg_detach(&st->peers[i].seg);
		free(st->peers[i].ctrl);
	}
	ibx_shm_seg_detach(&st->seg);
	free(st->scratch);
	free(st->order);
	free(st->peers);
	free(st);
}

static ibx_status_t shm_init(ibx_ctx_t *ctx, const int *ranks, int n, void **state_p)
{
	const ibx_shm_config_t *cfg = ibx_shm_config();
	shm_boot_info_t *info = NULL;
	shm_state_t *st;
	int *sorted = NULL;
	size_t info_len;
	ibx_status_t ret;

	*state_p = NULL;
	if (n <= 0)
		return IBX_OK;
	if (cfg->SHM_RING_SLOTS <= 0 || cfg->SHM_RING_SLOTS > 65536 || cfg->SHM_PIPE_CHUNKS <= 0 ||
	    cfg->SHM_PIPE_CHUNKS > 1024 || cfg->SHM_PIPE_CHUNK <= 0 || cfg->SHM_EAGER_LIMIT < 0 ||
	    cfg->SHM_CMA_THRESHOLD < 0) {
		ibx_error("shm: IBX_SHM_* values out of range (see ibtest info)");
		return IBX_ERR_INVALID_PARAM;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return IBX_ERR_NO_MEMORY;
	st->ctx = ctx;
	st->geom.ring_slots = (uint32_t)cfg->SHM_RING_SLOTS;
	st->geom.pipe_chunks = (uint32_t)cfg->SHM_PIPE_CHUNKS;
	st->geom.pipe_chunk = (uint64_t)cfg->SHM_PIPE_CHUNK;
	ret = ibx_shm_geom_check(&st->geom);
	if (ret != IBX_OK)
		goto err_free;
	st->cma_threshold = (size_t)cfg->SHM_CMA_THRESHOLD;
	st->check_ns =
	    (uint64_t)(ibx_core_config()->PEER_CHECK_MS > 0 ? ibx_core_config()->PEER_CHECK_MS
							    : 200) *
	    1000000ull;
	st->peers = calloc((size_t)n, sizeof(*st->peers));
	st->order = calloc((size_t)n, sizeof(*st->order));
	sorted = malloc((size_t)n * sizeof(*sorted));
	/* any multi-slot eager packet our ring can carry is gathered here */
	st->scratch = malloc(ibx_shm_pkt_capacity(st->geom.ring_slots));
	if (!st->peers || !st->order || !sorted || !st->scratch) {
		ret = IBX_ERR_NO_MEMORY;
		goto err_free;
	}
	st->npeers = n;
	memcpy(sorted, ranks, (size_t)n * sizeof(*sorted));
	qsort(sorted, (size_t)n, sizeof(*sorted), cmp_int);

	/* a kill -9 between create and unlink of an earlier job */
	(void)ibx_shm_sweep(cfg->SHM_DIR);
	ret = ibx_shm_seg_create(cfg->SHM_DIR, ibx_boot_job_id(ctx->boot), ctx->rank, sorted, n,
				 &st->geom, &st->seg);
	if (ret != IBX_OK)
		goto err_free;

	st->probe_word = ((uint64_t)getpid() << 32) ^ IBX_SHM_MAGIC ^ ibx_time_ns();
	info_len = sizeof(*info) + strlen(st->seg.path) + 1;
	info = calloc(1, info_len);
	if (!info) {
		ret = IBX_ERR_NO_MEMORY;
		goto err_free;
	}
	info->version = IBX_SHM_VERSION;
	info->pid = (int32_t)getpid();
	info->size = st->seg.size;
	info->probe_addr = (uint64_t)(uintptr_t)&st->probe_word;
	info->probe_value = st->probe_word;
	memcpy(info->path, st->seg.path, strlen(st->seg.path) + 1);
	ret = ibx_boot_put(ctx->boot, SHM_BOOT_KEY, info, info_len);
	free(info);
	if (ret != IBX_OK)
		goto err_free;

	for (int i = 0; i < n; i++) {
		shm_peer_t *p = &st->peers[i];

		p->rank = sorted[i];
		p->st = st;
		p->peer = &ctx->peers[p->rank];
		p->order_pos = i;
		p->pid = -1;
		st->order[i] = i;
	}
	free(sorted);
	*state_p = st;
	return IBX_OK;

err_free:
	free(sorted);
	state_free(st); /* unlinks our segment if it was created */
	return ret;
}

/* Can we read the peer's memory with CMA? One 8-byte read of a word whose
 * value it published tells (ptrace access rules: Yama, credentials). */
static bool cma_probe(shm_peer_t *p, const shm_boot_info_t *info)
{
	uint64_t v = 0;
	struct iovec iov = {.iov_base = &v, .iov_len = sizeof(v)};
	ibx_status_t s = ibx_shm_cma_xfer(p->pid, &iov, 1, info->probe_addr, false);

	if (s == IBX_OK && v == info->probe_value)
		return true;
	ibx_info("shm: CMA to rank %d (pid %d) not usable (%s): large messages use the "
		 "pipelined copy, put/get are unsupported",
		 p->rank, (int)p->pid, s == IBX_OK ? "probe mismatch" : strerror(errno));
	return false;
}

static ibx_status_t connect_peer(shm_state_t *st, int i)
{
	ibx_ctx_t *ctx = st->ctx;
	shm_peer_t *p = &st->peers[i];
	shm_boot_info_t *info = NULL;
	ibx_shm_area_t mine, theirs;
	const ibx_shm_geom_t *pg;
	size_t len = 0;
	ibx_status_t ret;
	int idx;

	ret = ibx_boot_get(ctx->boot, p->rank, SHM_BOOT_KEY, (void **)&info, &len);
	if (ret != IBX_OK) {
		ibx_error("shm: no segment address from rank %d: %s", p->rank, ibx_status_str(ret));
		return ret;
	}
	if (len <= sizeof(*info) || info->version != IBX_SHM_VERSION ||
	    ((char *)info)[len - 1] != '\0') {
		ibx_error("shm: malformed segment address from rank %d (%zu bytes)", p->rank, len);
		ret = IBX_ERR_CORRUPT;
		goto out;
	}
	p->pid = info->pid;
	ret = ibx_shm_seg_attach(info->path, p->rank, info->pid, info->size, &p->seg);
	if (ret != IBX_OK)
		goto out;
	idx = ibx_shm_seg_area_index(&p->seg, ctx->rank);
	if (idx < 0) {
		ibx_error("shm: rank %d's segment has no ring for rank %d (ranks disagree on "
			  "which peers are node-local)",
			  p->rank, ctx->rank);
		ret = IBX_ERR_UNREACHABLE;
		goto out;
	}
	pg = &p->seg.hdr->geom;
	ibx_shm_seg_area(&p->seg, idx, &theirs); /* written by us, read by the peer */
	ibx_shm_seg_area(&st->seg, i, &mine);	 /* written by the peer, read by us */
	ibx_shm_tx_init(&p->tx, theirs.slots, pg->ring_slots, mine.ack);
	ibx_shm_rx_init(&p->rx, mine.slots, st->geom.ring_slots, theirs.ack);
	ibx_shm_pipe_init(&p->ptx, theirs.chunk_hdrs, theirs.chunks, pg->pipe_chunk,
			  pg->pipe_chunks, mine.ack);
	ibx_shm_pipe_init(&p->prx, mine.chunk_hdrs, mine.chunks, st->geom.pipe_chunk,
			  st->geom.pipe_chunks, theirs.ack);
	/* at least two eager packets fit the peer's ring at once */
	p->eager_limit = (size_t)ibx_shm_config()->SHM_EAGER_LIMIT;
	if (p->eager_limit > ibx_shm_pkt_capacity(pg->ring_slots / 2))
		p->eager_limit = ibx_shm_pkt_capacity(pg->ring_slots / 2);
	p->cma_ok = cma_probe(p, info);
	p->peer->ops = &shm_ops;
	p->peer->path = p;
	ibx_debug("shm: rank %d connected (pid %d, ring %u slots, pipe %u x %llu, eager %zu, "
		  "CMA %s)",
		  p->rank, (int)p->pid, pg->ring_slots, pg->pipe_chunks,
		  (unsigned long long)pg->pipe_chunk, p->eager_limit, p->cma_ok ? "yes" : "no");
out:
	free(info);
	return ret;
}

static ibx_status_t shm_connect(ibx_ctx_t *ctx, void *state)
{
	shm_state_t *st = state;

	if (!st)
		return IBX_OK;
	for (int i = 0; i < st->npeers; i++) {
		ibx_status_t ret = connect_peer(st, i);

		if (ret != IBX_OK)
			return ret; /* fini unmaps what was attached */
	}
	st->nactive = st->npeers;
	st->next_check_ns = ibx_time_ns() + st->check_ns;
	return IBX_OK;
}

static ibx_status_t shm_ready(ibx_ctx_t *ctx, void *state)
{
	shm_state_t *st = state;

	/* every peer has mapped our segment (the barrier before ready): the
	 * name has done its job */
	return st ? ibx_shm_seg_unlink(&st->seg) : IBX_OK;
}

static void shm_fini(ibx_ctx_t *ctx, void *state)
{
	shm_state_t *st = state;

	if (!st)
		return;
	for (int i = 0; i < st->npeers; i++) {
		ibx_peer_t *peer = st->peers[i].peer;

		if (peer->path == &st->peers[i]) {
			peer->ops = NULL;
			peer->path = NULL;
		}
	}
	state_free(st);
}

const ibx_path_module_t ibx_shm_path_module = {
    .name = "shm",
    .init = shm_init,
    .connect = shm_connect,
    .ready = shm_ready,
    .progress = shm_progress,
    .busy = shm_busy,
    .fini = shm_fini,
};
