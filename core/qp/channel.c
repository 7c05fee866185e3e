/*
 * channel.c — the verbs path's tagged sends: the choice of protocol (eager
 * up to the pair's eager limit, the rendezvous of rndv.c above it and for
 * every IBX_SEND_SYNC), the latency path for small eager messages, and the
 * peer's FIFO of tag sends that wait for a credit, a send-queue slot or a
 * bounce buffer. What arrives is demultiplexed by progress.c.
 *
 * One RC QP per peer, one CQ and one SRQ per process. Every message is a
 * 16-byte header (type, piggy-backed credits, source rank, tag) followed by
 * its body; it is posted inline when header + body fit IBX_IB_INLINE,
 * else copied into a registered bounce buffer (sendq.c: credits, batches).
 *
 *   ibx_qp_tag_send(req)
 *     small, nothing queued, credit + slot  -> eager_fast: one inline SEND
 *                                              from the stack, done at return
 *     tag sends queued, or no credit, slot  -> pend_tag, in send order;
 *       or buffer                              progress drains it in batches
 *                                              (ibx_qp_tag_drain)
 *     eager                                 -> a batch of one: inline or
 *                                              bounce buffer, done at return
 *     rendezvous                            -> rndv.c: RTS, done at the FIN
 *
 *   sender                                       receiver
 *   EAGER hdr{credits, src, tag} | payload --SEND--> SRQ buffer
 *                                                -> ibx_tag_arrive_eager:
 *                                                   a posted receive or the
 *                                                   unexpected queue (a copy)
 */
#include "sendq.h"

/* ---- protocol choice ------------------------------------------------------------ */

static inline bool tag_is_rndv(const qp_peer_t *p, const ibx_request_t *req)
{
	return (req->flags & IBX_SEND_SYNC) || req->buflen > p->eager_max;
}

/* What the send needs posted: a body of this many bytes (a scattered
 * eager message is packed into a bounce buffer, so it counts as one that
 * never goes inline). */
static inline size_t tag_body_len(const qp_peer_t *p, const ibx_request_t *req)
{
	if (tag_is_rndv(p, req))
		return sizeof(qp_rts_t);
	if (ibx_req_scattered(req) && req->buflen <= p->path->inline_max)
		return p->path->inline_max + 1;
	return req->buflen;
}

/* Starts @req (resources checked): eager -> added to the batch, complete
 * after the post (@queued: through ibx_req_complete, else the caller
 * returns IBX_OK); rendezvous -> register, RTS, wait for the FIN. */
static ibx_status_t tag_start(qp_peer_t *p, qp_txb_t *b, ibx_request_t *req, bool queued)
{
	if (tag_is_rndv(p, req))
		return ibx_qp_rndv_send(p, b, req);
	if (ibx_req_scattered(req))
		ibx_qp_txb_add_req(b, QP_MSG_EAGER, req); /* packed into the bounce */
	else
		ibx_qp_txb_add(b, QP_MSG_EAGER, req->tag, req->buf, req->buflen);
	if (queued)
		b->done[b->ndone++] = req;
	return IBX_OK;
}

/* ---- tag sends -------------------------------------------------------------------- */

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
		ibx_req_copy_out(req, 0, msg.data, req->buflen);
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
	e->bytes = 0;
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
		ibx_error(QP_PEER_FMT ": ibv_post_send(SEND) failed: %s", QP_PEER_ARGS(p),
			  strerror(rc));
		ibx_qp_peer_fail(p, IBX_ERR_IO, NULL);
		return IBX_ERR_UNREACHABLE;
	}
	return IBX_OK;
}

ibx_status_t ibx_qp_tag_send(ibx_peer_t *peer, ibx_request_t *req)
{
	qp_peer_t *p = peer->path;
	qp_txb_t b;
	ibx_status_t st, pst;

	if (ibx_likely(req->buflen <= p->fast_max && !(req->flags & IBX_SEND_SYNC) &&
		       p->error == IBX_OK && ibx_list_empty(&p->pend_tag) && qp_sq_space(p) > 0 &&
		       qp_credit_held(p)))
		return eager_fast(p, req);
	if (ibx_unlikely(p->error != IBX_OK))
		return p->error;
	if (ibx_unlikely(!ibx_list_empty(&p->pend_tag) ||
			 !qp_msg_can_post(p, tag_body_len(p, req)))) {
		/* FIFO: behind anything already waiting */
		p->path->stats.sends_queued++;
		ibx_rq_push(&p->pend_tag, req);
		qp_pend_mark(p);
		return IBX_INPROGRESS;
	}
	qp_txb_init(&b, p);
	st = tag_start(p, &b, req, false);
	if (st < 0)
		return st;
	pst = ibx_qp_txb_flush(&b);
	if (pst != IBX_OK)
		/* the peer failed: a rendezvous send was completed with it */
		return st == IBX_INPROGRESS ? IBX_INPROGRESS : pst;
	return st;
}

void ibx_qp_tag_drain(qp_peer_t *p)
{
	ibx_request_t *req;
	qp_txb_t b;

	qp_txb_init(&b, p);
	while (p->error == IBX_OK && (req = ibx_rq_first(&p->pend_tag))) {
		size_t body = tag_body_len(p, req);
		ibx_status_t st;

		if (!qp_msg_can_post(p, body)) {
			if (!qp_msg_fits_inline(p, body) && p->path->tx_nfree == 0)
				ibx_qp_sq_reclaim(p->path);
			break;
		}
		ibx_rq_remove(&p->pend_tag, req);
		st = tag_start(p, &b, req, true);
		if (st < 0) {
			/* post what is claimed before a callback can post more */
			ibx_qp_txb_flush(&b);
			ibx_req_complete(req, st);
		}
		if (b.n == QP_TXB_MAX)
			ibx_qp_txb_flush(&b);
	}
	ibx_qp_txb_flush(&b);
}
