/*
 * shm_rndv.c — the rendezvous of the node-local path: the RTS a large or
 * SYNC send puts into the ring, the receiver's answer once a receive
 * matches (CTS, CTSW, CTSM, FIN), streaming matched messages through the
 * pipe, and the single copy by CMA, split between the two processes from
 * IBX_SHM_CMA_SPLIT_MIN on; for typed messages also p-rrs (the receiver
 * reads into its blocks) and multi-w (the sender writes its blocks into the
 * receiver's: diagram at rndv_recv_multiw). The copies themselves are in
 * shm_copy.c.
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
 * Which copy: the sender offers a single copy whenever CMA works between
 * the two (the CMA flag of the RTS); the receiver, which knows how many
 * bytes it takes, chooses: the single copy when n reaches the node's
 * threshold (IBX_SHM_CMA_THRESHOLD: calibrated at start-up by
 * shm_calib.c, or configured), the pipe otherwise.
 *
 * Rendezvous by single copy (n ≥ threshold, CMA offered):
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
 */
#include "shm_path.h"

#include <stdlib.h>
#include <sys/uio.h>

static ibx_request_t *rq_find_id(ibx_req_queue_t *q, uint32_t id)
{
	ibx_request_t *r;

	ibx_rq_for_each(r, q) if ((uint32_t)RQ_ID(r) == id) return r;
	return NULL;
}

/* ---- sender ---------------------------------------------------------------- */

bool ibx_shm_rndv_send(shm_peer_t *p, ibx_request_t *req)
{
	ibx_shm_rts_t rts;

	rts.len = req->buflen;
	rts.addr = (uint64_t)(uintptr_t)req->buf;
	rts.id = (uint32_t)RQ_ID(req);
	rts.flags = 0;
	rts.avg = 0;
	rts.pad = 0;
	/* an offer: the receiver knows how much it takes, and chooses; a
	 * scattered typed send has no one buffer to read from, but can
	 * write its blocks into the receiver's (multi-w) */
	if (p->cma_ok && !ibx_req_scattered(req))
		rts.flags = IBX_SHM_RTS_CMA;
	else if (p->cma_ok) {
		rts.flags = IBX_SHM_RTS_PUSH;
		rts.avg = req->dt->avg_block;
	}
	if (!ibx_shm_tx_send(&p->tx, IBX_SHM_PKT_RTS, 0, req->tag, &rts, sizeof(rts)))
		return false;
	ibx_rq_push(&p->rndv_tx, req);
	return true;
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
		ibx_shm_peer_fail(p->st, p, s);
		return IBX_OK;
	}
	if (s != IBX_OK)
		ibx_error("shm: process_vm_writev of %llu bytes to rank %d (pid %d) failed: %s",
			  (unsigned long long)w->bytes, p->rank, (int)p->pid, strerror(errno));
	/* the request stays in rndv_tx until the receiver's FIN */
	ibx_shm_send_ctrl64(p, IBX_SHM_PKT_FINW, id, (uint64_t)(int64_t)s);
	return IBX_OK;
}

/* Multi-w, each receiver block filled by the send's blocks (pairs). */
static int ctsm_put(void *arg, const struct iovec *src, int n, uint64_t raddr, size_t bytes)
{
	ibx_shm_cma_batch_t *b = arg;

	ibx_shm_cma_batch_add(b, src, n, raddr, bytes);
	return b->status == IBX_OK ? 0 : -1;
}

/* The receiver's layout, read from its memory; NULL (*s_p set) when it
 * cannot be. */
static void *ctsm_blob(shm_peer_t *p, const ibx_shm_ctsm_t *m, ibx_status_t *s_p)
{
	struct iovec iov;
	void *blob;

	if (m->blob_len > IBX_SHM_LAYOUT_MAX) {
		*s_p = IBX_ERR_CORRUPT;
		return NULL;
	}
	blob = malloc(m->blob_len);
	if (!blob) {
		*s_p = IBX_ERR_NO_MEMORY;
		return NULL;
	}
	iov.iov_base = blob;
	iov.iov_len = m->blob_len;
	*s_p = ibx_shm_cma_xfer(p->pid, &iov, 1, m->blob_addr, false);
	if (*s_p == IBX_OK)
		return blob;
	free(blob);
	return NULL;
}

/* CTSM: write our blocks into the receiver's (process_vm_writev, block
 * lists on both sides), then FINW; the send is complete. */
static ibx_status_t tx_ctsm(shm_peer_t *p, uint32_t id, const ibx_shm_ctsm_t *m)
{
	ibx_request_t *req = rq_find_id(&p->rndv_tx, id);
	ibx_shm_cma_batch_t b = {.pid = p->pid, .status = IBX_OK}; /* 8 KiB of iovecs */
	ibx_status_t s = IBX_OK;
	void *blob = NULL;

	if (!req || !ibx_req_scattered(req) || m->bytes > req->buflen ||
	    (m->blob_len != 0) != (m->blob_addr != 0))
		return IBX_ERR_CORRUPT;
	ibx_rq_remove(&p->rndv_tx, req);
	if (m->blob_len)
		blob = ctsm_blob(p, m, &s);
	if (s == IBX_OK) {
		if (req->dt->ops->pairs(req, p->rank, m->type_id, m->version, blob, m->blob_len,
					m->rbase, m->count, m->bytes, ctsm_put, &b) < 0 &&
		    b.status == IBX_OK) {
			ibx_error("shm: rank %d named a receive layout that is corrupt, was never "
				  "sent, or is short of the message (type %#llx version %u, %llu "
				  "bytes)",
				  p->rank, (unsigned long long)m->type_id, m->version,
				  (unsigned long long)m->bytes);
			s = IBX_ERR_CORRUPT;
		}
		if (s == IBX_OK)
			s = ibx_shm_cma_batch_flush(&b);
	}
	free(blob);
	if (s == IBX_ERR_UNREACHABLE) {
		ibx_req_complete(req, s);
		ibx_shm_peer_fail(p->st, p, s);
		return IBX_OK;
	}
	if (s != IBX_OK && s != IBX_ERR_CORRUPT)
		ibx_error("shm: multi-w to rank %d (pid %d) failed: %s", p->rank, (int)p->pid,
			  ibx_status_str(s));
	/* process_vm_writev has returned: the bytes are in the receiver */
	ibx_shm_send_ctrl64(p, IBX_SHM_PKT_FINW, id, (uint64_t)(int64_t)s);
	ibx_req_complete(req, s);
	return IBX_OK;
}

/* CTS or FIN for a send of ours: stream it (CTS) or complete it (FIN). */
static ibx_status_t tx_answer(shm_peer_t *p, const ibx_shm_slot_t *h, uint64_t val)
{
	ibx_request_t *req = rq_find_id(&p->rndv_tx, h->h.aux);

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
	ibx_shm_update_work(p);
	return IBX_OK;
}

static void pipe_ring_log(const shm_peer_t *p)
{
	const ibx_shm_ring_tune_t *t = &p->ptx.tune;

	ibx_info("shm: pipe to rank %d: a ring of %u chunks (median 1 MiB batch: %.1f us through "
		 "%u, %.1f us through %u)",
		 p->rank, t->want == IBX_SHM_RING_SMALL ? t->small : p->ptx.nchunks,
		 (double)t->median_ns[IBX_SHM_RING_LARGE] / 1e3, p->ptx.nchunks,
		 (double)t->median_ns[IBX_SHM_RING_SMALL] / 1e3, t->small);
}

static int pipe_tx_work(shm_peer_t *p)
{
	ibx_request_t *req;
	int n = 0;

	while ((req = ibx_rq_first(&p->pipe_tx))) {
		size_t want = RQ_BYTES(req);

		if (req->done < want) {
			/* the ramp only for a message alone in the pipe: behind
			 * others the receiver is busy anyway, whole chunks cost
			 * fewer hand-offs */
			size_t off = req->link.next ? SIZE_MAX / 4 : req->done;
			size_t k =
			    ibx_shm_pipe_push(&p->ptx, req, req->done, want - req->done, off);

			req->done += k;
			n += k != 0;
			if (req->done < want)
				break;
		}
		ibx_rq_remove(&p->pipe_tx, req);
		ibx_req_complete(req, IBX_OK);
		n++;
	}
	if (ibx_unlikely(ibx_shm_pipe_tune_announce(&p->ptx)))
		pipe_ring_log(p);
	return n;
}

/* ---- receiver -------------------------------------------------------------- */

static int pipe_rx_work(shm_state_t *st, shm_peer_t *p)
{
	ibx_request_t *req;
	int n = 0;

	while ((req = ibx_rq_first(&p->pipe_rx))) {
		size_t want = RQ_BYTES(req);

		if (req->done < want) {
			size_t k = ibx_shm_pipe_pull(&p->prx, req, req->done, want - req->done);

			if (k == (size_t)-1) {
				ibx_error("shm: rank %d published a pipe chunk that does not fit "
					  "its message",
					  p->rank);
				ibx_shm_peer_fail(st, p, IBX_ERR_CORRUPT);
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
 * The single copy (CMA) of @n bytes into req->buf. From IBX_SHM_CMA_SPLIT_MIN
 * on the two processes share it: we ask the sender (CTSW) to write the
 * second half straight into our buffer with process_vm_writev while we
 * read the first half from its buffer with process_vm_readv — two cores
 * copying once each, no intermediate buffer, no line crossing twice. The
 * first page is read before the sender is asked for anything, so a
 * refusal leaves the pipe to serve with nothing moved.
 *
 * Returns IBX_ERR_UNSUPPORTED, with nothing moved, when the kernel refuses.
 */
static ibx_status_t rndv_recv_cma(shm_peer_t *p, const ibx_shm_rts_t *rts, ibx_request_t *req,
				  size_t n)
{
	size_t split = n >= IBX_SHM_CMA_SPLIT_MIN ? (n / 2) & ~(size_t)4095 : n;
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

		ibx_shm_send_ctrl(p, IBX_SHM_PKT_CTSW, rts->id, &w, sizeof(w));
		asked = true;
	}
	if (s == IBX_OK && first < split) {
		iov.iov_base = (char *)req->buf + first;
		iov.iov_len = split - first;
		s = ibx_shm_cma_xfer(p->pid, &iov, 1, rts->addr + first, false);
	}
	if (s == IBX_ERR_UNREACHABLE) {
		ibx_shm_peer_fail(p->st, p, s);
		return s;
	}
	if (s != IBX_OK)
		ibx_error("shm: process_vm_readv of %zu bytes from rank %d (pid %d) failed: %s",
			  split, p->rank, (int)p->pid, strerror(errno));
	/* the sender's buffer is no longer read: its send may complete */
	ibx_shm_send_ctrl64(p, IBX_SHM_PKT_FIN, rts->id, (uint64_t)(int64_t)s);
	if (!asked)
		return s;
	/* the sender is writing the rest into req->buf: wait for its FINW */
	RQ_ID(req) = rts->id;
	RQ_STATUS(req) = (uint64_t)(int64_t)s;
	RQ_BLOB(req) = 0;
	ibx_rq_push(&p->cma_rx, req);
	ibx_shm_promote(p);
	return IBX_INPROGRESS;
}

/*
 * P-RRS on shared memory: the sender's bytes are contiguous (a contiguous
 * type, or packed by the typed layer); the kernel copies them straight
 * into the receive's blocks, CMA_SCATTER_IOV blocks per call. Then FIN.
 * IBX_ERR_UNSUPPORTED, with nothing moved, when the kernel refuses.
 */
#define CMA_SCATTER_IOV 64

static ibx_status_t rndv_recv_cma_scatter(shm_peer_t *p, const ibx_shm_rts_t *rts,
					  ibx_request_t *req, size_t n)
{
	struct iovec iov[CMA_SCATTER_IOV];
	ibx_status_t s = IBX_OK;
	size_t done = 0, bytes;

	while (done < n && s == IBX_OK) {
		int cnt = req->dt->ops->iov(req, n - done, iov, CMA_SCATTER_IOV, &bytes);

		if (cnt <= 0 || bytes == 0) {
			s = IBX_ERR_CORRUPT;
			break;
		}
		s = ibx_shm_cma_xfer(p->pid, iov, cnt, rts->addr + done, false);
		if (s == IBX_ERR_UNSUPPORTED && done == 0) {
			p->cma_ok = false;
			return s;
		}
		done += bytes;
	}
	if (s == IBX_ERR_UNREACHABLE) {
		ibx_shm_peer_fail(p->st, p, s);
		return s;
	}
	if (s != IBX_OK)
		ibx_error("shm: scattering %zu bytes from rank %d (pid %d) failed: %s", n, p->rank,
			  (int)p->pid, ibx_status_str(s));
	ibx_shm_send_ctrl64(p, IBX_SHM_PKT_FIN, rts->id, (uint64_t)(int64_t)s);
	return s;
}

/*
 * Multi-w on shared memory: the sender writes its blocks straight into
 * ours, one process_vm_writev per batch of block pairs (zero copies of our
 * own; the kernel's one). Our layout goes along the first time only, read
 * by the sender from our memory (CMA), so it never passes through the
 * ring; the sender caches it per (rank, type id, version), as over verbs.
 *
 *   RTS{len, PUSH, avg} ─────────────────────────►  matched: multi-w chosen
 *                       ◄──────────────────────── CTSM{rbase, id, version,
 *                                                       count, blob?, bytes}
 *   [process_vm_readv of the blob]
 *   process_vm_writev, block lists on both sides
 *   FINW{status}: send complete ──────────────────►  complete on FINW
 *
 * Returns IBX_INPROGRESS, or IBX_ERR_UNSUPPORTED (nothing sent) when our
 * layout cannot be had: then the pipe serves.
 */
static ibx_status_t rndv_recv_multiw(shm_peer_t *p, const ibx_shm_rts_t *rts, ibx_request_t *req,
				     size_t n)
{
	ibx_shm_ctsm_t m = {.rbase = (uint64_t)(uintptr_t)req->buf, .bytes = n};
	size_t blen = 0;
	void *blob = NULL;
	int r =
	    req->dt->ops->layout(req, p->rank, NULL, 0, &blen, &m.type_id, &m.version, &m.count);

	if (r == -2) { /* the sender has not seen it: serialise it for the sender to read */
		blob = malloc(blen);
		r = blob ? req->dt->ops->layout(req, p->rank, blob, blen, &blen, &m.type_id,
						&m.version, &m.count)
			 : -1;
	}
	if (r < 0 || blen > IBX_SHM_LAYOUT_MAX) {
		free(blob);
		return IBX_ERR_UNSUPPORTED;
	}
	m.blob_addr = blob ? (uint64_t)(uintptr_t)blob : 0;
	m.blob_len = (uint32_t)blen;
	RQ_ID(req) = rts->id;
	RQ_STATUS(req) = (uint64_t)IBX_OK;
	RQ_BLOB(req) = (uint64_t)(uintptr_t)blob;
	ibx_rq_push(&p->cma_rx, req);
	ibx_shm_send_ctrl(p, IBX_SHM_PKT_CTSM, rts->id, &m, sizeof(m));
	ibx_shm_promote(p);
	return IBX_INPROGRESS;
}

/* A typed receive: the scheme for this message (dt_select.c), which may
 * give the request a contiguous landing buffer (generic). */
static int rndv_recv_scheme(shm_peer_t *p, const ibx_shm_rts_t *rts, ibx_request_t *req, size_t n)
{
	bool contig = rts->flags & IBX_SHM_RTS_CMA; /* offered only from one buffer */
	/* the single copy only where it beats the pipe (shm_calib.c) */
	bool cma_fast = p->st->cma_threshold && n >= p->st->cma_threshold;
	unsigned can = IBX_DT_CAN(IBX_DT_SCHEME_BC_SPUP), fast = can, single = 0;

	if (contig && p->cma_ok)
		single = IBX_DT_CAN(IBX_DT_SCHEME_P_RRS);
	else if ((rts->flags & IBX_SHM_RTS_PUSH) && p->cma_ok)
		single = IBX_DT_CAN(IBX_DT_SCHEME_MULTI_W);
	can |= single;
	if (cma_fast)
		fast |= single;
	return req->dt->ops->choose(req, n, contig, contig ? 0 : rts->avg, can, fast);
}

void ibx_shm_cma_rx_drop(shm_peer_t *p, ibx_request_t *req)
{
	ibx_rq_remove(&p->cma_rx, req);
	free((void *)(uintptr_t)RQ_BLOB(req));
	RQ_BLOB(req) = 0;
}

/* FINW: the sender has written its part of a split single copy, or all of
 * a multi-w. */
static ibx_status_t rx_finw(shm_peer_t *p, uint32_t id, uint64_t val)
{
	ibx_request_t *req = rq_find_id(&p->cma_rx, id);
	ibx_status_t mine;

	if (!req)
		return IBX_ERR_CORRUPT;
	ibx_shm_cma_rx_drop(p, req);
	mine = (ibx_status_t)(int64_t)RQ_STATUS(req);
	if (mine == IBX_OK)
		mine = (ibx_status_t)(int64_t)val;
	if (mine == IBX_OK && req->length > req->buflen)
		mine = IBX_ERR_TRUNCATED;
	ibx_req_complete(req, mine);
	return IBX_OK;
}

ibx_status_t ibx_shm_rndv_recv(ibx_peer_t *peer, const void *rts_bytes, ibx_request_t *req)
{
	shm_peer_t *p = peer->path;
	ibx_shm_rts_t rts;
	size_t n;

	if (p->failed)
		return ibx_shm_lost_status(p);
	memcpy(&rts, rts_bytes, sizeof(rts));
	n = rts.len <= req->buflen ? (size_t)rts.len : req->buflen;
	if (n == 0) {
		ibx_shm_send_ctrl64(p, IBX_SHM_PKT_FIN, rts.id, (uint64_t)IBX_OK);
		return IBX_OK;
	}
	if (ibx_req_scattered(req)) {
		int scheme = rndv_recv_scheme(p, &rts, req, n);

		if (scheme < 0)
			return IBX_ERR_NO_MEMORY;
		if (scheme == IBX_DT_SCHEME_P_RRS) {
			ibx_status_t s = rndv_recv_cma_scatter(p, &rts, req, n);

			if (s != IBX_ERR_UNSUPPORTED) {
				p->st->nrecv_cma++;
				return s;
			}
			p->st->nrecv_refused++;
		}
		if (scheme == IBX_DT_SCHEME_MULTI_W) {
			ibx_status_t s = rndv_recv_multiw(p, &rts, req, n);

			if (s != IBX_ERR_UNSUPPORTED) {
				p->st->nrecv_cma++;
				return s;
			}
		}
	}
	if (!ibx_req_scattered(req) && (rts.flags & IBX_SHM_RTS_CMA) && p->cma_ok &&
	    p->st->cma_threshold && n >= p->st->cma_threshold) {
		ibx_status_t s = rndv_recv_cma(p, &rts, req, n);

		if (s != IBX_ERR_UNSUPPORTED) {
			p->st->nrecv_cma++;
			return s;
		}
		/* refused before anything moved: the pipe serves */
		p->st->nrecv_refused++;
	}
	p->st->nrecv_pipe++;
	RQ_BYTES(req) = n;
	req->done = 0;
	ibx_rq_push(&p->pipe_rx, req);
	ibx_shm_update_work(p);
	ibx_shm_send_ctrl64(p, IBX_SHM_PKT_CTS, rts.id, n);
	ibx_shm_promote(p);
	return IBX_INPROGRESS;
}

/* ---- packets from the ring and queued work --------------------------------- */

ibx_status_t ibx_shm_rndv_packet(shm_state_t *st, shm_peer_t *p, ibx_shm_slot_t *h)
{
	ibx_shm_rts_t rts;
	ibx_shm_ctsw_t w;
	ibx_shm_ctsm_t m;
	uint8_t pkt[IBX_SHM_HEAD_PAYLOAD + IBX_SHM_CONT_PAYLOAD];
	uint64_t val;

	switch (h->h.type) {
	case IBX_SHM_PKT_RTS:
		if (h->h.nslots != 1 || h->h.len != sizeof(rts))
			return IBX_ERR_CORRUPT;
		memcpy(&rts, h->h.data, sizeof(rts));
		ibx_tag_arrive_rts(st->ctx, p->rank, h->h.tag, rts.len, &rts, sizeof(rts));
		return IBX_OK;
	case IBX_SHM_PKT_CTSW:
		if (h->h.nslots != 1 || h->h.len != sizeof(w))
			return IBX_ERR_CORRUPT;
		memcpy(&w, h->h.data, sizeof(w));
		return tx_ctsw(p, h->h.aux, &w);
	case IBX_SHM_PKT_CTSM:
		if (h->h.nslots != IBX_SHM_CTSM_SLOTS || h->h.len != sizeof(m))
			return IBX_ERR_CORRUPT;
		ibx_shm_rx_gather(&p->rx, h, pkt);
		memcpy(&m, pkt, sizeof(m));
		return tx_ctsm(p, h->h.aux, &m);
	case IBX_SHM_PKT_FINW:
	case IBX_SHM_PKT_CTS:
	case IBX_SHM_PKT_FIN:
		if (h->h.nslots != 1 || h->h.len != sizeof(val))
			return IBX_ERR_CORRUPT;
		memcpy(&val, h->h.data, sizeof(val));
		if (h->h.type == IBX_SHM_PKT_FINW)
			return rx_finw(p, h->h.aux, val);
		return tx_answer(p, h, val);
	}
	return IBX_ERR_CORRUPT;
}

int ibx_shm_rndv_pipe_rx_work(shm_state_t *st, shm_peer_t *p)
{
	return ibx_list_empty(&p->pipe_rx) ? 0 : pipe_rx_work(st, p);
}

int ibx_shm_rndv_pipe_work(shm_state_t *st, shm_peer_t *p)
{
	int n = ibx_shm_rndv_pipe_rx_work(st, p);

	if (!ibx_list_empty(&p->pipe_tx))
		n += pipe_tx_work(p);
	return n;
}
