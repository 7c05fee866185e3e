/*
 * sendq.c — the verbs path's send queue, on which the channel (channel.c),
 * the rendezvous (rndv.c) and the one-sided operations (rdma.c) sit: send
 * credits and their return through the peer's mailbox, selective
 * signalling, chained posting, message batches (inline WQEs or bounce
 * buffers), and the FIFOs of work that waits for a credit, a send-queue
 * slot or a bounce buffer. The checks made on every send are inline in
 * sendq.h. The send queue calls up once: a failed post fails the peer
 * (ibx_qp_peer_fail, progress.c), which completes every claimed entry.
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
 * sends) at IBX_LOG=info. A WRITE WITH IMMEDIATE consumes a receive buffer
 * too, so it takes a credit like a message (rdma.c).
 *
 * Selective signalling
 * --------------------
 * A WQE is signalled when its operation needs the completion (the last WQE
 * of a request, READs, atomics), every IBX_IB_SIGNAL_EVERY WQEs, and
 * whenever the send queue or the bounce pool runs low. RC completes the
 * WQEs of a QP in order, so one completion retires every earlier entry
 * (progress.c), with its slot and bounce buffer. Unsignalled WQEs that no
 * signalled one follows would hold theirs forever: a flush, finalize or an
 * empty bounce pool then posts the flush WQE, a signalled mailbox write.
 *
 * Chained posting
 * ---------------
 * A user claims one entry per WQE (sendq.h: qp_sqe_next), links its WRs and
 * posts them with one ibv_post_send ([Wu03] §8.5): a batch of messages, the
 * READs of a rendezvous, the gather/scatter WQEs of a one-sided operation.
 *
 * Pending marks
 * -------------
 * Out of credits (or send-queue slots, or bounce buffers), sends wait in a
 * per-peer FIFO behind which every later send queues too, so messages of one
 * peer reach the tag layer in send order: tag sends on pend_tag, the
 * rendezvous FINs and READs and the one-sided operations on the operation
 * FIFO (pend_head). A peer with waiting work, or with a credit return that
 * found no slot, is marked once on the path's pending list; progress drains
 * the marked peers after each poll, posting each FIFO as a linked list of
 * WRs (one ibv_post_send per batch). QPs use rnr_retry 7 so that even a
 * receiver-side accounting bug could only slow a sender down.
 */
#include "sendq.h"

#include <stdlib.h>

/* ---- chained posting ---------------------------------------------------------- */

ibx_status_t ibx_qp_chain_post_failed(qp_peer_t *p, const struct ibv_send_wr *bad, int rc)
{
	ibx_error(QP_PEER_FMT ": ibv_post_send(%s) failed: %s", QP_PEER_ARGS(p),
		  bad ? ibx_qp_wr_opcode_str(bad->opcode) : "-", strerror(rc));
	/* the claimed entries (posted or not) are failed with the peer */
	ibx_qp_peer_fail(p, IBX_ERR_IO, NULL);
	return IBX_ERR_IO;
}

/* ---- credit mailbox ------------------------------------------------------------- */

/* Mailbox write of our consumed count (credit return without a message).
 * Signalled on request: the flush WQE that makes earlier unsignalled WQEs
 * complete. Inline when the device allows (the value is then captured at
 * post time), else from our registered source word for this peer. */
static ibx_status_t mbox_post(qp_peer_t *p, bool signaled)
{
	qp_path_t *path = p->path;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	uint64_t wr_id;
	qp_sqe_t *e;
	_Atomic uint32_t *src = &path->mbox[path->ctx->size + p->rank];
	bool inl = p->qp->max_inline >= sizeof(uint32_t);

	if (qp_sq_space(p) == 0)
		return IBX_ERR_BUSY;
	p->mbox_val = qp_mbox_encode(p->rx_done);
	atomic_store_explicit(src, p->mbox_val, memory_order_relaxed);
	p->rx_told = p->rx_done;
	if (signaled)
		path->stats.flush_wqes++;
	else
		path->stats.credit_writes++;
	e = qp_sqe_next(p, SQE_MBOX, IBV_WR_RDMA_WRITE, signaled, &wr_id);
	if (inl)
		sge = (struct ibv_sge){(uintptr_t)&p->mbox_val, sizeof(uint32_t), 0};
	else
		sge = (struct ibv_sge){(uintptr_t)src, sizeof(uint32_t), path->mbox_mr->lkey};
	ibx_qp_wr_write(&wr, &sge, 1, p->rmbox_addr, p->rmbox_rkey, wr_id,
			(e->signaled ? IBX_QP_SIGNALED : 0) | (inl ? IBX_QP_INLINE : 0));
	return ibx_qp_chain_post(p, &wr);
}

ibx_status_t ibx_qp_credit_return(qp_peer_t *p)
{
	return mbox_post(p, false);
}

ibx_status_t ibx_qp_post_flush_wqe(qp_peer_t *p)
{
	return mbox_post(p, true);
}

/* Bounce buffers held by unsignalled sends come back only with a later
 * signalled completion on the same QP: ask for one where none is coming. */
void ibx_qp_sq_reclaim(qp_path_t *path)
{
	for (int i = 0; i < path->npeers; i++) {
		qp_peer_t *q = &path->peers[i];

		if (q->error == IBX_OK && qp_sq_needs_flush(q))
			mbox_post(q, true);
	}
}

/* ---- message batches -------------------------------------------------------------- */

/* Claims entry i of the batch for a message of @type and fills its header. */
static qp_sqe_t *txb_claim(qp_txb_t *b, uint8_t type, ibx_tag_t tag, int *i_p, uint64_t *wr_id_p)
{
	qp_peer_t *p = b->p;
	qp_path_t *path = p->path;
	int i = b->n++;
	qp_hdr_t *h = &b->hdr[i];

	p->tx_sent++;
	path->stats.msgs_sent++;
	h->type = type;
	h->flags = 0;
	h->credits = p->rx_done;
	h->src = path->ctx->rank;
	h->tag = tag;
	p->rx_told = p->rx_done;
	*i_p = i;
	return qp_sqe_next(p, SQE_MSG, IBV_WR_SEND, false, wr_id_p);
}

/* Links entry i, with its SGEs, into the batch's chain. */
static void txb_link(qp_txb_t *b, int i, qp_sqe_t *e, int nsge, unsigned flags, uint64_t wr_id)
{
	if (e->signaled)
		flags |= IBX_QP_SIGNALED;
	ibx_qp_wr_send(&b->wr[i], b->sge[i], nsge, wr_id, flags);
	if (i)
		b->wr[i - 1].next = &b->wr[i];
}

/* A bounce buffer for entry i, holding its header; returns where the
 * body goes. */
static char *txb_bounce(qp_txb_t *b, int i, qp_sqe_t *e, size_t len)
{
	qp_path_t *path = b->p->path;
	uint32_t t = path->tx_free[--path->tx_nfree];
	char *buf = path->tx_mem + (size_t)t * path->tx_stride;

	memcpy(buf, &b->hdr[i], sizeof(qp_hdr_t));
	e->txbuf = (int32_t)t;
	b->sge[i][0] =
	    (struct ibv_sge){(uintptr_t)buf, (uint32_t)(sizeof(qp_hdr_t) + len), path->tx_mr->lkey};
	return buf + sizeof(qp_hdr_t);
}

void ibx_qp_txb_add(qp_txb_t *b, uint8_t type, ibx_tag_t tag, const void *body, size_t len)
{
	struct ibv_sge *sge;
	uint64_t wr_id;
	qp_sqe_t *e;
	int i, nsge;

	e = txb_claim(b, type, tag, &i, &wr_id);
	sge = b->sge[i];
	if (qp_msg_fits_inline(b->p, len)) {
		sge[0] = (struct ibv_sge){(uintptr_t)&b->hdr[i], sizeof(qp_hdr_t), 0};
		sge[1] = (struct ibv_sge){(uintptr_t)body, (uint32_t)len, 0};
		nsge = len ? 2 : 1;
		txb_link(b, i, e, nsge, IBX_QP_INLINE, wr_id);
		return;
	}
	if (len)
		memcpy(txb_bounce(b, i, e, len), body, len);
	txb_link(b, i, e, 1, 0, wr_id);
}

void ibx_qp_txb_add_req(qp_txb_t *b, uint8_t type, ibx_request_t *req)
{
	uint64_t wr_id;
	qp_sqe_t *e;
	int i;

	e = txb_claim(b, type, req->tag, &i, &wr_id);
	if (req->buflen)
		ibx_req_copy_out(req, 0, txb_bounce(b, i, e, req->buflen), req->buflen);
	else
		txb_bounce(b, i, e, 0);
	txb_link(b, i, e, 1, 0, wr_id);
}

ibx_status_t ibx_qp_txb_flush(qp_txb_t *b)
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

/* ---- the operation FIFO ------------------------------------------------------------ */

ibx_status_t ibx_qp_op_enqueue(qp_peer_t *p, const qp_op_t *op)
{
	/* a copy: the caller's op and iovec array may go away */
	qp_op_t *q = malloc(sizeof(*q) + (size_t)(op->n > 0 ? op->n : 0) * sizeof(struct iovec));

	if (!q) {
		ibx_error("peer %d: out of memory queueing an operation", p->rank);
		return IBX_ERR_NO_MEMORY;
	}
	*q = *op;
	q->next = NULL;
	if (op->n > 0 && op->iov) {
		memcpy(q->iovs, op->iov, (size_t)op->n * sizeof(struct iovec));
		q->iov = q->iovs;
	}
	if (p->pend_tail)
		p->pend_tail->next = q;
	else
		p->pend_head = q;
	p->pend_tail = q;
	qp_pend_mark(p);
	return IBX_OK;
}
