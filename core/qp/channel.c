/*
 * channel.c — the verbs path's send/receive channel: eager messages through
 * a shared receive queue with credit-based flow control, the zero-copy
 * rendezvous with RDMA READ, progress (batched CQ polling, batched SRQ
 * reposting) and the conversion of any QP error into failed requests.
 *
 * One RC QP per peer, one CQ and one SRQ per process. Every message is a
 * 16-byte header (type, piggy-backed credits, source rank, tag) followed by
 * its body; it is posted inline when header + body fit IBX_IB_INLINE,
 * else copied into a registered bounce buffer.
 *
 * Credits (no receiver overrun, no lost message, no RNR in normal runs)
 * ---------------------------------------------------------------------
 * The receiver reserves C buffers per peer in its SRQ (SRQ size = peers * C
 * + 64 spare for buffers consumed but not yet reposted; C = IBX_IB_CREDITS,
 * lowered when IBX_IB_RX_BUFS cannot hold it for every peer) and tells each
 * peer its C in the address record. A sender keeps two 16-bit counters per
 * peer: sent and acked; it may send while sent - acked < C. The receiver
 * counts messages it has consumed from each peer (rx_done) and reports the
 * count back, so that every buffer is accounted for exactly once:
 *
 *   sender S                                    receiver R
 *   sent-acked < C ?  -- EAGER/RTS/FIN (hdr.credits = R's msgs consumed) -->
 *                                               rx_done++ (after the tag layer)
 *   acked = max(acked, hdr.credits) <-- any message R -> S piggy-backs rx_done
 *   ...burst, R has nothing to send...
 *                                               rx_done - told >= T:
 *   acked = max(acked, mailbox[R])  <== RDMA WRITE of rx_done into S's mailbox
 *       (no receive buffer consumed:        word for R (value | ~value << 16,
 *        S reads the word when it runs       a torn read is detected),
 *        out of credits)                     told = rx_done
 *
 * T is C/4 but at least 2 (conn.c, credit_threshold): a receiver that
 * answers every message piggy-backs its count on the answer and never
 * writes the mailbox; one that stays silent returns credits every T.
 * Finalize reports the counts (messages, explicit credit returns, queued
 * sends) at IBX_LOG=info.
 *
 * Out of credits (or send-queue slots, or bounce buffers), sends wait in a
 * per-peer FIFO behind which every later send queues too, so messages of one
 * peer reach the tag layer in send order; the FIFO is drained by progress as
 * a linked list of WRs (one ibv_post_send per batch). QPs use rnr_retry 7 so
 * that even a receiver-side accounting bug could only slow a sender down.
 *
 * Rendezvous (messages above IBX_IB_EAGER_LIMIT, and every IBX_SEND_SYNC)
 * ----------------------------------------------------------------------
 *   sender                                       receiver
 *   register buf (reg cache)
 *   RTS {tag, len, addr, rkey, id}   ----------> tag layer: unexpected queue
 *                                                or a posted receive matches
 *                                                -> ops->rndv_recv:
 *                                                   register rbuf, RDMA READ
 *                       <========= RDMA READ === min(len, buflen) bytes
 *                                                   (zero copy, signalled)
 *                                                READ completes: complete the
 *                                                receive (TRUNCATED if buflen
 *                                                < len, rreq->length = len)
 *   FIN {id} completes the send <------------- FIN {id}
 *
 * Errors: a failed work completion (or a fatal QP async event) logs once
 * "peer P QP 0xN: RDMA READ failed: <ibv_wc_status_str> (vendor err 0x..)",
 * moves the QP to ERR, and completes every request involving the peer —
 * queued sends, rendezvous sends waiting for their FIN, READs in flight,
 * one-sided operations, posted receives from it (ibx_tag_peer_failed) —
 * with IBX_ERR_UNREACHABLE (IBX_ERR_REMOTE_ACCESS for the one-sided
 * operation whose key was refused). Later sends fail at once. The QP's
 * retry count and timeout bound how long a dead peer can keep a WR pending.
 */
#include "qp_int.h"

#include <sched.h>
#include <stdlib.h>

#define POLL_BATCH 32
/* Consumed receive buffers go back to the SRQ as one linked list, off the
 * latency path: when a poll finds the CQ empty (we are waiting anyway) and
 * REPOST_IDLE are free, or at once when REPOST_MAX are. Reposting right
 * after the completion that freed the buffer would delay the answer the
 * application is about to send (16 WRs cost microseconds under emulation).
 * Never more than REPOST_MAX - 1 + POLL_BATCH wait, which the SRQ's spare
 * buffers cover. */
#define REPOST_IDLE 16
#define REPOST_MAX  32
_Static_assert(REPOST_MAX - 1 + POLL_BATCH < QP_RX_SPARE,
	       "buffers waiting for a repost must fit in the SRQ's spare buffers");
#define TXB_MAX 16

static inline qp_path_t *peer_path(const qp_peer_t *p)
{
	return p->path;
}

/* ---- credits ---------------------------------------------------------------- */

static inline void credit_ack(qp_peer_t *p, uint16_t consumed)
{
	/* serial-number comparison: counters wrap at 2^16, C < 2^15 */
	if ((int16_t)(consumed - p->tx_acked) > 0 && (int16_t)(p->tx_sent - consumed) >= 0)
		p->tx_acked = consumed;
}

static inline bool credit_avail(qp_peer_t *p)
{
	uint16_t c;

	if ((uint16_t)(p->tx_sent - p->tx_acked) < p->tx_credits_max)
		return true;
	if (qp_mbox_decode(atomic_load_explicit(&peer_path(p)->mbox[p->rank], memory_order_acquire),
			   &c))
		credit_ack(p, c);
	return (uint16_t)(p->tx_sent - p->tx_acked) < p->tx_credits_max;
}

bool ibx_qp_credit_take(qp_peer_t *p)
{
	if (!credit_avail(p))
		return false;
	p->tx_sent++;
	return true;
}

static inline bool credit_owed(const qp_peer_t *p)
{
	return (uint16_t)(p->rx_done - p->rx_told) >= peer_path(p)->credit_threshold;
}

/* ---- send queue ------------------------------------------------------------- */

bool ibx_qp_sig_decide(qp_peer_t *p, bool need)
{
	qp_path_t *path = peer_path(p);

	if (need || ++p->sq_unsig >= path->signal_every || qp_sq_space(p) <= path->signal_every ||
	    path->tx_nfree < path->tx_count / 4) {
		p->sq_unsig = 0;
		return true;
	}
	return false;
}

ibx_status_t ibx_qp_chain_post(qp_peer_t *p, struct ibv_send_wr *first)
{
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(p->qp->qp, first, &bad);

	if (ibx_likely(rc == 0))
		return IBX_OK;
	ibx_error("peer %d QP 0x%x: ibv_post_send(%s) failed: %s", p->rank, p->qp->qpn,
		  bad ? ibx_qp_wr_opcode_str(bad->opcode) : "-", strerror(rc));
	/* the claimed entries (posted or not) are failed with the peer */
	ibx_qp_peer_fail(p, IBX_ERR_IO, NULL);
	return IBX_ERR_IO;
}

void ibx_qp_pend_mark(qp_peer_t *p)
{
	qp_path_t *path = peer_path(p);

	if (p->on_pend_list)
		return;
	p->on_pend_list = true;
	p->pend_next = path->pend_list;
	path->pend_list = p;
}

/* Mailbox write of our consumed count (credit return without a message).
 * Signalled on request: the flush WQE that makes earlier unsignalled WQEs
 * complete. Inline when the device allows (the value is then captured at
 * post time), else from our registered source word for this peer. */
static ibx_status_t mbox_post(qp_peer_t *p, bool signaled)
{
	qp_path_t *path = peer_path(p);
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	uint64_t wr_id;
	qp_sqe_t *e;
	bool sig;
	_Atomic uint32_t *src = &path->mbox[path->ctx->size + p->rank];

	if (qp_sq_space(p) == 0)
		return IBX_ERR_BUSY;
	p->mbox_val = qp_mbox_encode(p->rx_done);
	atomic_store_explicit(src, p->mbox_val, memory_order_relaxed);
	p->rx_told = p->rx_done;
	if (signaled)
		path->stats.flush_wqes++;
	else
		path->stats.credit_writes++;
	sig = ibx_qp_sig_decide(p, signaled);
	e = qp_sqe_claim(p, &wr_id);
	e->kind = SQE_MBOX;
	e->opcode = IBV_WR_RDMA_WRITE;
	e->signaled = sig;
	if (sig)
		p->sq_last_sig = p->sq_head;
	if (p->qp->max_inline >= sizeof(uint32_t))
		sge = (struct ibv_sge){(uintptr_t)&p->mbox_val, sizeof(uint32_t), 0};
	else
		sge = (struct ibv_sge){(uintptr_t)src, sizeof(uint32_t), path->mbox_mr->lkey};
	ibx_qp_wr_write(&wr, &sge, 1, p->rmbox_addr, p->rmbox_rkey, wr_id,
			(sig ? IBX_QP_SIGNALED : 0) |
			    (p->qp->max_inline >= sizeof(uint32_t) ? IBX_QP_INLINE : 0));
	return ibx_qp_chain_post(p, &wr);
}

ibx_status_t ibx_qp_post_flush_wqe(qp_peer_t *p)
{
	return mbox_post(p, true);
}

/* ---- message batches -------------------------------------------------------- */

typedef struct txb {
	qp_peer_t *p;
	int n;
	struct ibv_send_wr wr[TXB_MAX];
	struct ibv_sge sge[TXB_MAX][2];
	qp_hdr_t hdr[TXB_MAX];
	union {
		qp_rts_t rts;
		qp_fin_t fin;
	} body[TXB_MAX];
	ibx_request_t *done[TXB_MAX]; /* eager sends to complete after the post */
	int ndone;
} txb_t;

static inline bool msg_fits_inline(const qp_peer_t *p, size_t body)
{
	return sizeof(qp_hdr_t) + body <= peer_path(p)->inline_max &&
	       sizeof(qp_hdr_t) + body <= p->qp->max_inline;
}

/* Can one message of @body bytes be posted now (credit, slot, buffer)? */
static inline bool msg_can_post(qp_peer_t *p, size_t body)
{
	return qp_sq_space(p) > 0 && (msg_fits_inline(p, body) || peer_path(p)->tx_nfree > 0) &&
	       credit_avail(p);
}

/* Appends one message; the caller checked msg_can_post. */
static void txb_add(txb_t *b, uint8_t type, ibx_tag_t tag, const void *body, size_t len)
{
	qp_peer_t *p = b->p;
	qp_path_t *path = peer_path(p);
	int i = b->n++;
	qp_hdr_t *h = &b->hdr[i];
	struct ibv_sge *sge = b->sge[i];
	uint64_t wr_id;
	qp_sqe_t *e;
	unsigned flags = 0;
	int nsge;
	bool sig;

	p->tx_sent++;
	path->stats.msgs_sent++;
	h->type = type;
	h->flags = 0;
	h->credits = p->rx_done;
	h->src = path->ctx->rank;
	h->tag = tag;
	p->rx_told = p->rx_done;

	sig = ibx_qp_sig_decide(p, false);
	e = qp_sqe_claim(p, &wr_id);
	e->kind = SQE_MSG;
	e->opcode = IBV_WR_SEND;
	e->signaled = sig;
	if (sig)
		p->sq_last_sig = p->sq_head;
	if (msg_fits_inline(p, len)) {
		sge[0] = (struct ibv_sge){(uintptr_t)h, sizeof(*h), 0};
		sge[1] = (struct ibv_sge){(uintptr_t)body, (uint32_t)len, 0};
		nsge = len ? 2 : 1;
		flags |= IBX_QP_INLINE;
	} else {
		uint32_t t = path->tx_free[--path->tx_nfree];
		char *buf = path->tx_mem + (size_t)t * path->tx_stride;

		memcpy(buf, h, sizeof(*h));
		if (len)
			memcpy(buf + sizeof(*h), body, len);
		e->txbuf = (int32_t)t;
		sge[0] = (struct ibv_sge){(uintptr_t)buf, (uint32_t)(sizeof(*h) + len),
					  path->tx_mr->lkey};
		nsge = 1;
	}
	if (sig)
		flags |= IBX_QP_SIGNALED;
	ibx_qp_wr_send(&b->wr[i], sge, nsge, wr_id, flags);
	if (i)
		b->wr[i - 1].next = &b->wr[i];
}

static ibx_status_t txb_flush(txb_t *b)
{
	ibx_status_t st = IBX_OK;
	int i, nd = b->ndone;

	if (b->n)
		st = ibx_qp_chain_post(b->p, b->wr);
	b->n = 0;
	b->ndone = 0;
	/* inline payloads were copied by the post: the buffers are free */
	for (i = 0; i < nd; i++)
		ibx_req_complete(b->done[i], st == IBX_OK ? IBX_OK : IBX_ERR_UNREACHABLE);
	return st;
}

static ibx_status_t send_fin(qp_peer_t *p, uint32_t id);

/* ---- tag sends -------------------------------------------------------------- */

static inline bool tag_is_rndv(const qp_peer_t *p, const ibx_request_t *req)
{
	return (req->flags & IBX_SEND_SYNC) || req->buflen > p->eager_max;
}

static inline size_t tag_body_len(const qp_peer_t *p, const ibx_request_t *req)
{
	return tag_is_rndv(p, req) ? sizeof(qp_rts_t) : req->buflen;
}

/* Starts @req (resources checked): eager -> added to the batch, complete
 * after the post (@queued: through ibx_req_complete, else the caller
 * returns IBX_OK); rendezvous -> register, RTS, wait for the FIN. */
static ibx_status_t tag_start(qp_peer_t *p, txb_t *b, ibx_request_t *req, bool queued)
{
	qp_path_t *path = peer_path(p);
	ibx_rcache_region_t *reg = NULL;
	qp_rts_t *rts;
	ibx_status_t st;

	if (!tag_is_rndv(p, req)) {
		txb_add(b, QP_MSG_EAGER, req->tag, req->buf, req->buflen);
		if (queued)
			b->done[b->ndone++] = req;
		return IBX_OK;
	}
	if (req->buflen) {
		st = ibx_rcache_region_get(path->rcache, req->buf, req->buflen, &reg);
		if (st != IBX_OK) {
			ibx_error(
			    "peer %d: registering a %zu-byte rendezvous send buffer failed: %s",
			    p->rank, req->buflen, ibx_status_str(st));
			return st;
		}
	}
	req->priv[0] = p->rndv_next_id++;
	req->priv[1] = (uintptr_t)reg;
	ibx_rq_push(&p->rndv_sends, req);
	rts = &b->body[b->n].rts;
	rts->addr = (uintptr_t)req->buf;
	rts->len = req->buflen;
	rts->rkey = reg ? ibx_rcache_region_rkey(reg) : 0;
	rts->id = (uint32_t)req->priv[0];
	txb_add(b, QP_MSG_RTS, req->tag, rts, sizeof(*rts));
	return IBX_INPROGRESS;
}

/* The latency path: an eager message that fits inline, with a credit and
 * a send-queue slot at hand and nothing queued before it. Under emulation
 * (rxe in a TCG VM) every instruction here is on the measured round trip:
 * header and payload are copied into one stack buffer (one inline SGE is
 * cheaper for the provider than two) and posted through a WR prepared at
 * connect time. */
static ibx_status_t eager_fast(qp_peer_t *p, const ibx_request_t *req)
{
	struct {
		qp_hdr_t h;
		unsigned char data[QP_FAST_MAX];
	} msg;
	struct ibv_send_wr *bad;
	qp_sqe_t *e;
	uint32_t seq = p->sq_head++;
	bool sig;
	int rc;

	msg.h.type = QP_MSG_EAGER;
	msg.h.flags = 0;
	msg.h.credits = p->rx_done;
	msg.h.src = p->path->ctx->rank;
	msg.h.tag = req->tag;
	if (req->buflen)
		memcpy(msg.data, req->buf, req->buflen);
	p->rx_told = p->rx_done;
	p->tx_sent++;
	p->path->stats.msgs_sent++;
	sig = ++p->sq_unsig >= p->path->signal_every || qp_sq_space(p) <= p->path->signal_every;
	e = &p->sqe[seq & p->sq_mask];
	e->kind = SQE_MSG;
	e->opcode = IBV_WR_SEND;
	e->signaled = sig;
	e->last = 0;
	e->txbuf = -1;
	e->req = NULL;
	if (sig) {
		p->sq_unsig = 0;
		p->sq_last_sig = p->sq_head;
	}
	p->fast_sge.addr = (uintptr_t)&msg;
	p->fast_sge.length = (uint32_t)(sizeof(msg.h) + req->buflen);
	p->fast_wr.wr_id = qp_wrid_tx(p, seq);
	p->fast_wr.send_flags = IBV_SEND_INLINE | (sig ? IBV_SEND_SIGNALED : 0);
	rc = ibv_post_send(p->qp->qp, &p->fast_wr, &bad);
	if (ibx_unlikely(rc)) {
		ibx_error("peer %d QP 0x%x: ibv_post_send(SEND) failed: %s", p->rank, p->qp->qpn,
			  strerror(rc));
		ibx_qp_peer_fail(p, IBX_ERR_IO, NULL);
		return IBX_ERR_UNREACHABLE;
	}
	return IBX_OK;
}

ibx_status_t ibx_qp_tag_send(ibx_peer_t *peer, ibx_request_t *req)
{
	qp_peer_t *p = peer->path;
	txb_t b;
	ibx_status_t st, pst;

	if (ibx_likely(req->buflen <= p->fast_max && !(req->flags & IBX_SEND_SYNC) &&
		       p->error == IBX_OK && ibx_list_empty(&p->pend_tag) && qp_sq_space(p) > 0 &&
		       (uint16_t)(p->tx_sent - p->tx_acked) < p->tx_credits_max))
		return eager_fast(p, req);
	if (ibx_unlikely(p->error != IBX_OK))
		return p->error;
	if (ibx_unlikely(!ibx_list_empty(&p->pend_tag) || !msg_can_post(p, tag_body_len(p, req)))) {
		/* FIFO: behind anything already waiting */
		peer_path(p)->stats.sends_queued++;
		ibx_rq_push(&p->pend_tag, req);
		ibx_qp_pend_mark(p);
		return IBX_INPROGRESS;
	}
	b.p = p;
	b.n = 0;
	b.ndone = 0;
	st = tag_start(p, &b, req, false);
	if (st < 0)
		return st;
	pst = txb_flush(&b);
	if (pst != IBX_OK)
		/* the peer failed: a rendezvous send was completed with it */
		return st == IBX_INPROGRESS ? IBX_INPROGRESS : pst;
	return st;
}

/* ---- rendezvous receive ------------------------------------------------------- */

ibx_status_t ibx_qp_rndv_recv(ibx_peer_t *peer, const void *rtsv, ibx_request_t *req)
{
	qp_peer_t *p = peer->path;
	qp_rts_t rts;
	qp_op_t op;
	size_t n;

	if (p->error != IBX_OK)
		return p->error;
	memcpy(&rts, rtsv, sizeof(rts));
	n = rts.len < req->buflen ? rts.len : req->buflen;
	req->length = rts.len;
	req->priv[0] = rts.id;
	req->priv[1] = 0;
	req->priv[2] = rts.len > req->buflen;
	if (n == 0) {
		/* nothing to move: the FIN alone; the tag layer completes */
		ibx_status_t st = send_fin(p, rts.id);
		return st < 0 ? st : IBX_OK;
	}
	memset(&op, 0, sizeof(op));
	op.kind = OP_RNDV_READ;
	op.req = req;
	op.raddr = rts.addr;
	op.rkey = rts.rkey;
	op.a = n;
	return ibx_qp_op_submit(p, &op);
}

/* Sends the FIN now, or queues it behind other queued operations. */
static ibx_status_t send_fin(qp_peer_t *p, uint32_t id)
{
	qp_op_t *op;
	txb_t b;

	if (!p->pend_head && msg_can_post(p, sizeof(qp_fin_t))) {
		b.p = p;
		b.n = 0;
		b.ndone = 0;
		b.body[0].fin.id = id;
		b.body[0].fin.pad = 0;
		txb_add(&b, QP_MSG_FIN, 0, &b.body[0].fin, sizeof(qp_fin_t));
		return txb_flush(&b);
	}
	op = calloc(1, sizeof(*op));
	if (!op) {
		ibx_error("peer %d: out of memory queueing a rendezvous FIN", p->rank);
		ibx_qp_peer_fail(p, IBX_ERR_NO_MEMORY, NULL);
		return IBX_ERR_NO_MEMORY;
	}
	op->kind = OP_FIN;
	op->imm = id;
	if (p->pend_tail)
		p->pend_tail->next = op;
	else
		p->pend_head = op;
	p->pend_tail = op;
	ibx_qp_pend_mark(p);
	return IBX_INPROGRESS;
}

ibx_status_t ibx_qp_fin_start(qp_peer_t *p, uint32_t id)
{
	txb_t b;

	if (!msg_can_post(p, sizeof(qp_fin_t)))
		return IBX_ERR_BUSY;
	b.p = p;
	b.n = 0;
	b.ndone = 0;
	b.body[0].fin.id = id;
	b.body[0].fin.pad = 0;
	txb_add(&b, QP_MSG_FIN, 0, &b.body[0].fin, sizeof(qp_fin_t));
	return txb_flush(&b);
}

/* ---- send completions --------------------------------------------------------- */

static void sqe_retire(qp_peer_t *p, qp_sqe_t *e, ibx_status_t st)
{
	qp_path_t *path = peer_path(p);

	if (e->txbuf >= 0) {
		path->tx_free[path->tx_nfree++] = (uint32_t)e->txbuf;
		e->txbuf = -1;
	}
	switch (e->kind) {
	case SQE_RNDV:
		if (e->last && e->req) {
			ibx_request_t *req = e->req;
			ibx_rcache_region_t *reg = (ibx_rcache_region_t *)(uintptr_t)req->priv[1];

			if (reg)
				ibx_rcache_region_put(path->rcache, reg);
			req->priv[1] = 0;
			if (st == IBX_OK) {
				send_fin(p, (uint32_t)req->priv[0]);
				ibx_req_complete(req, req->priv[2] ? IBX_ERR_TRUNCATED : IBX_OK);
			} else {
				ibx_req_complete(req, st);
			}
		}
		break;
	case SQE_RMA:
	case SQE_AMO: ibx_qp_sqe_rma_done(p, e, st); break;
	default: break;
	}
	e->kind = 0;
}

static const char *sqe_what(const qp_sqe_t *e)
{
	switch (e->kind) {
	case SQE_MSG: return "SEND";
	case SQE_MBOX: return "RDMA WRITE (credit mailbox)";
	case SQE_RNDV: return "RDMA READ";
	default: return ibx_qp_wr_opcode_str((enum ibv_wr_opcode)e->opcode);
	}
}

static void tx_completion(qp_path_t *path, const struct ibv_wc *wc)
{
	uint32_t idx = (uint32_t)(wc->wr_id >> 32), seq = (uint32_t)wc->wr_id;
	qp_peer_t *p;
	qp_sqe_t *e;

	if (ibx_unlikely(idx >= (uint32_t)path->npeers)) {
		ibx_error("completion with unknown wr_id 0x%llx (QP 0x%x): %s",
			  (unsigned long long)wc->wr_id, wc->qp_num, ibv_wc_status_str(wc->status));
		return;
	}
	p = &path->peers[idx];
	if (ibx_unlikely(p->error != IBX_OK))
		return; /* flushed work of a peer already failed */
	if (ibx_unlikely((uint32_t)(seq - p->sq_tail) >= (uint32_t)(p->sq_head - p->sq_tail))) {
		ibx_error("peer %d QP 0x%x: completion for WQE %u outside [%u, %u)", p->rank,
			  p->qp->qpn, seq, p->sq_tail, p->sq_head);
		return;
	}
	e = &p->sqe[seq & p->sq_mask];
	if (ibx_unlikely(wc->status != IBV_WC_SUCCESS)) {
		ibx_status_t why = ibx_qp_wc_status(wc->status);

		if (path->finalizing)
			ibx_debug("peer %d QP 0x%x: %s failed during finalize: %s", p->rank,
				  p->qp->qpn, sqe_what(e), ibv_wc_status_str(wc->status));
		else
			ibx_error("peer %d QP 0x%x: %s failed: %s (vendor err 0x%x)", p->rank,
				  p->qp->qpn, sqe_what(e), ibv_wc_status_str(wc->status),
				  wc->vendor_err);
		/* only a one-sided operation's own key problem is REMOTE_ACCESS */
		if (why == IBX_ERR_REMOTE_ACCESS && e->kind != SQE_RMA && e->kind != SQE_AMO)
			why = IBX_ERR_UNREACHABLE;
		ibx_qp_peer_fail(p, why == IBX_OK ? IBX_ERR_UNREACHABLE : why, e);
		return;
	}
	/* completions of one QP arrive in order: everything up to seq is done */
	while (p->error == IBX_OK && (int32_t)(seq + 1 - p->sq_tail) > 0) {
		qp_sqe_t *r = &p->sqe[p->sq_tail & p->sq_mask];

		p->sq_tail++;
		sqe_retire(p, r, IBX_OK);
	}
	if (!ibx_list_empty(&p->pend_tag) || p->pend_head)
		ibx_qp_pend_mark(p);
}

/* ---- peer failure ----------------------------------------------------------- */

void ibx_qp_peer_fail(qp_peer_t *p, ibx_status_t why, const qp_sqe_t *culprit)
{
	qp_path_t *path = peer_path(p);
	ibx_request_t *culprit_req = culprit ? culprit->req : NULL;
	ibx_request_t *r;
	qp_op_t *op;

	if (p->error != IBX_OK)
		return;
	p->error = IBX_ERR_UNREACHABLE;
	if (p->qp->state != IBX_QP_STATE_ERROR)
		ibx_qp_set_error(p->qp);
	/* outstanding WQEs: their requests fail (the culprit's with @why) */
	while (p->sq_tail != p->sq_head) {
		qp_sqe_t *e = &p->sqe[p->sq_tail & p->sq_mask];
		bool own = e == culprit || (culprit_req && e->req == culprit_req);

		p->sq_tail++;
		sqe_retire(p, e, own ? why : IBX_ERR_UNREACHABLE);
	}
	while ((op = p->pend_head)) {
		p->pend_head = op->next;
		ibx_qp_op_queue_fail(p, op, IBX_ERR_UNREACHABLE);
	}
	p->pend_tail = NULL;
	while ((r = ibx_rq_first(&p->pend_tag))) {
		ibx_rq_remove(&p->pend_tag, r);
		ibx_req_complete(r, IBX_ERR_UNREACHABLE);
	}
	while ((r = ibx_rq_first(&p->rndv_sends))) {
		ibx_rcache_region_t *reg = (ibx_rcache_region_t *)(uintptr_t)r->priv[1];

		ibx_rq_remove(&p->rndv_sends, r);
		if (reg)
			ibx_rcache_region_put(path->rcache, reg);
		ibx_req_complete(r, IBX_ERR_UNREACHABLE);
	}
	p->rma_outstanding = 0;
	/* posted receives from the peer, and its entry in the context */
	ibx_tag_peer_failed(path->ctx, p->rank, IBX_ERR_UNREACHABLE);
}

static qp_peer_t *peer_by_qpn(qp_path_t *path, uint32_t qpn)
{
	uint32_t h = (qpn * 2654435761u) & path->qpn_mask;

	while (path->qpn_hash[h]) {
		if (path->qpn_hash[h]->qp->qpn == qpn)
			return path->qpn_hash[h];
		h = (h + 1) & path->qpn_mask;
	}
	return NULL;
}

/* ---- receives --------------------------------------------------------------- */

static void rx_corrupt(qp_path_t *path, const struct ibv_wc *wc, const char *what)
{
	qp_peer_t *p = peer_by_qpn(path, wc->qp_num);

	ibx_error("peer %d QP 0x%x: malformed message (%s, %u bytes): dropping the peer",
		  p ? p->rank : -1, wc->qp_num, what, wc->byte_len);
	if (p) {
		ibx_qp_peer_fail(p, IBX_ERR_CORRUPT, NULL);
		if (p->ipeer->error == IBX_OK)
			p->ipeer->error = IBX_ERR_CORRUPT;
	}
}

static void rndv_fin(qp_peer_t *p, const qp_fin_t *fin)
{
	ibx_request_t *r;

	ibx_rq_for_each(r, &p->rndv_sends)
	{
		if ((uint32_t)r->priv[0] == fin->id) {
			ibx_rcache_region_t *reg = (ibx_rcache_region_t *)(uintptr_t)r->priv[1];

			ibx_rq_remove(&p->rndv_sends, r);
			if (reg)
				ibx_rcache_region_put(peer_path(p)->rcache, reg);
			ibx_req_complete(r, IBX_OK);
			return;
		}
	}
	ibx_warn("peer %d QP 0x%x: FIN for unknown rendezvous %u", p->rank, p->qp->qpn, fin->id);
}

static void rx_completion(qp_path_t *path, const struct ibv_wc *wc)
{
	uint32_t idx = (uint32_t)(wc->wr_id & ~QP_WRID_RX);
	char *buf = path->rx_mem + (size_t)idx * path->rx_stride;
	const qp_hdr_t *h = (const qp_hdr_t *)buf;
	qp_peer_t *p;

	if (ibx_unlikely(wc->status != IBV_WC_SUCCESS)) {
		path->rx_free[path->rx_nfree++] = idx;
		p = peer_by_qpn(path, wc->qp_num);
		if (wc->status == IBV_WC_WR_FLUSH_ERR || !p || p->error != IBX_OK)
			return;
		if (path->finalizing)
			ibx_debug("peer %d QP 0x%x: RECV failed during finalize: %s", p->rank,
				  p->qp->qpn, ibv_wc_status_str(wc->status));
		else
			ibx_error("peer %d QP 0x%x: RECV failed: %s (vendor err 0x%x)", p->rank,
				  p->qp->qpn, ibv_wc_status_str(wc->status), wc->vendor_err);
		ibx_qp_peer_fail(p, IBX_ERR_UNREACHABLE, NULL);
		return;
	}
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		p = peer_by_qpn(path, wc->qp_num);
		path->rx_free[path->rx_nfree++] = idx;
		if (!p || p->error != IBX_OK)
			return;
		p->rx_done++;
		if (path->imm_cb)
			path->imm_cb(path->ctx, p->rank, be32toh(wc->imm_data), path->imm_arg);
		else
			ibx_debug("peer %d: write with immediate 0x%x and no handler", p->rank,
				  be32toh(wc->imm_data));
		goto credits;
	}
	if (ibx_unlikely(wc->byte_len < sizeof(qp_hdr_t) || h->src < 0 ||
			 h->src >= path->ctx->size || !path->by_rank[h->src] ||
			 path->by_rank[h->src]->qp->qpn != wc->qp_num)) {
		path->rx_free[path->rx_nfree++] = idx;
		rx_corrupt(path, wc, "bad header");
		return;
	}
	p = path->by_rank[h->src];
	if (ibx_unlikely(p->error != IBX_OK)) {
		path->rx_free[path->rx_nfree++] = idx;
		return;
	}
	credit_ack(p, h->credits);
	p->rx_done++;
	path->stats.msgs_recvd++;
	switch (h->type) {
	case QP_MSG_EAGER:
		ibx_tag_arrive_eager(path->ctx, p->rank, h->tag, buf + sizeof(*h),
				     wc->byte_len - sizeof(*h));
		break;
	case QP_MSG_RTS: {
		qp_rts_t rts;

		if (wc->byte_len != sizeof(*h) + sizeof(rts)) {
			path->rx_free[path->rx_nfree++] = idx;
			rx_corrupt(path, wc, "RTS length");
			return;
		}
		memcpy(&rts, buf + sizeof(*h), sizeof(rts));
		ibx_tag_arrive_rts(path->ctx, p->rank, h->tag, rts.len, &rts, sizeof(rts));
		break;
	}
	case QP_MSG_FIN: {
		qp_fin_t fin;

		if (wc->byte_len != sizeof(*h) + sizeof(fin)) {
			path->rx_free[path->rx_nfree++] = idx;
			rx_corrupt(path, wc, "FIN length");
			return;
		}
		memcpy(&fin, buf + sizeof(*h), sizeof(fin));
		rndv_fin(p, &fin);
		break;
	}
	default:
		path->rx_free[path->rx_nfree++] = idx;
		rx_corrupt(path, wc, "unknown type");
		return;
	}
	/* only now: a nested progress (from a completion callback) must not
	 * repost the buffer while the tag layer still reads it */
	path->rx_free[path->rx_nfree++] = idx;
credits:
	if (p->error == IBX_OK && credit_owed(p) && mbox_post(p, false) == IBX_ERR_BUSY)
		ibx_qp_pend_mark(p); /* no slot now: progress retries */
	if (!ibx_list_empty(&p->pend_tag) || p->pend_head)
		ibx_qp_pend_mark(p);
}

static void rx_repost(qp_path_t *path)
{
	uint32_t i, n = path->rx_nfree;

	if (!n)
		return;
	for (i = 0; i < n; i++) {
		struct ibv_recv_wr *wr = &path->rx_wr[path->rx_free[i]];

		wr->next = i + 1 < n ? &path->rx_wr[path->rx_free[i + 1]] : NULL;
	}
	path->rx_nfree = 0;
	if (ibx_qp_srq_post_list(path->srq, &path->rx_wr[path->rx_free[0]]) != IBX_OK)
		ibx_error("device %s: %u receive buffers lost from the SRQ", path->dev->name, n);
}

/* ---- pending work ----------------------------------------------------------- */

/* Bounce buffers held by unsignalled sends come back only with a later
 * signalled completion on the same QP: ask for one where none is coming. */
static void tx_reclaim(qp_path_t *path)
{
	for (int i = 0; i < path->npeers; i++) {
		qp_peer_t *q = &path->peers[i];

		if (q->error == IBX_OK && q->sq_head != q->sq_tail && q->sq_last_sig != q->sq_head)
			mbox_post(q, true);
	}
}

static void peer_drain(qp_peer_t *p)
{
	qp_path_t *path = peer_path(p);
	ibx_request_t *req;
	txb_t b;

	if (credit_owed(p))
		mbox_post(p, false);
	while (p->error == IBX_OK && p->pend_head) {
		qp_op_t *op = p->pend_head;
		ibx_status_t st = ibx_qp_op_start(p, op, true);

		if (st == IBX_ERR_BUSY)
			break;
		if (p->pend_head == op) { /* not consumed by a failure */
			p->pend_head = op->next;
			if (!p->pend_head)
				p->pend_tail = NULL;
			free(op);
		}
	}
	b.p = p;
	b.n = 0;
	b.ndone = 0;
	while (p->error == IBX_OK && (req = ibx_rq_first(&p->pend_tag))) {
		size_t body = tag_body_len(p, req);
		ibx_status_t st;

		if (!msg_can_post(p, body)) {
			if (!msg_fits_inline(p, body) && path->tx_nfree == 0)
				tx_reclaim(path);
			break;
		}
		ibx_rq_remove(&p->pend_tag, req);
		st = tag_start(p, &b, req, true);
		if (st < 0) {
			/* post what is claimed before a callback can post more */
			txb_flush(&b);
			ibx_req_complete(req, st);
		}
		if (b.n == TXB_MAX)
			txb_flush(&b);
	}
	txb_flush(&b);
}

static void pend_run(qp_path_t *path)
{
	qp_peer_t *list = path->pend_list, *p, *next;

	path->pend_list = NULL;
	for (p = list; p; p = next) {
		next = p->pend_next;
		p->on_pend_list = false;
		if (p->error != IBX_OK)
			continue;
		peer_drain(p);
		if (p->error == IBX_OK &&
		    (p->pend_head || !ibx_list_empty(&p->pend_tag) || credit_owed(p)))
			ibx_qp_pend_mark(p);
	}
}

/* ---- async events ----------------------------------------------------------- */

static void async_check(qp_path_t *path)
{
	struct ibv_async_event ev;

	while (ibv_get_async_event(path->dev->ctx, &ev) == 0) {
		qp_peer_t *p = NULL;

		switch (ev.event_type) {
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
			p = peer_by_qpn(path, ev.element.qp->qp_num);
			if (p && p->error == IBX_OK) {
				ibx_error("peer %d QP 0x%x: async event %s", p->rank, p->qp->qpn,
					  ibv_event_type_str(ev.event_type));
				ibx_qp_peer_fail(p, IBX_ERR_UNREACHABLE, NULL);
			}
			break;
		case IBV_EVENT_DEVICE_FATAL:
			ibx_error("device %s: async event %s: every verbs peer is lost",
				  path->dev->name, ibv_event_type_str(ev.event_type));
			for (int i = 0; i < path->npeers; i++)
				ibx_qp_peer_fail(&path->peers[i], IBX_ERR_UNREACHABLE, NULL);
			break;
		case IBV_EVENT_PORT_ERR:
			ibx_warn(
			    "device %s:%u: async event %s (QPs fail once their retries run out)",
			    path->dev->name, path->dev->port, ibv_event_type_str(ev.event_type));
			break;
		default:
			ibx_debug("device %s: async event %s", path->dev->name,
				  ibv_event_type_str(ev.event_type));
			break;
		}
		ibv_ack_async_event(&ev);
	}
}

/* ---- progress --------------------------------------------------------------- */

int ibx_qp_path_progress(ibx_ctx_t *ctx, void *state)
{
	qp_path_t *path = state;
	struct ibv_wc wc[POLL_BATCH];
	int n, i, events = 0;

	if (!path)
		return 0;
	do {
		n = ibv_poll_cq(path->cq->cq, POLL_BATCH, wc);
		if (ibx_unlikely(n < 0)) {
			ibx_error("device %s: ibv_poll_cq failed (%d)", path->dev->name, n);
			return events;
		}
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id & QP_WRID_RX)
				rx_completion(path, &wc[i]);
			else
				tx_completion(path, &wc[i]);
		}
		events += n;
		if (path->rx_nfree >= (n ? REPOST_MAX : REPOST_IDLE))
			rx_repost(path);
	} while (n == POLL_BATCH);
	if (path->pend_list)
		pend_run(path);
	/* a QP can also die without a completion (async event): look now
	 * and then, a syscall every 64k idle polls */
	if (n == 0 && events == 0 && (++path->progress_calls & 0xffff) == 0)
		async_check(path);
	return events;
}
