/*
 * sendq.h — the send-queue engine of the verbs path (sendq.c), as used by
 * the channel, the rendezvous, the one-sided operations and progress:
 * credits, send-queue entries with selective signalling, pending marks,
 * the operation FIFO, message batches and chained posting. sendq.c's
 * header says why each works the way it does.
 *
 * What runs on every send and every completion is inline here, so that
 * the eager fast path and the CQ poll loop make no call for it.
 */
#ifndef IBX_QP_SENDQ_H
#define IBX_QP_SENDQ_H

#include "qp_int.h"

/* ---- credits ------------------------------------------------------------ */

/* Takes the peer's count of our messages it has consumed (hdr.credits or
 * its mailbox word). */
static inline void qp_credit_ack(qp_peer_t *p, uint16_t consumed)
{
	/* serial-number comparison: counters wrap at 2^16, C < 2^15 */
	if ((int16_t)(consumed - p->tx_acked) > 0 && (int16_t)(p->tx_sent - consumed) >= 0)
		p->tx_acked = consumed;
}

/* A credit is in hand without a look at the mailbox. */
static inline bool qp_credit_held(const qp_peer_t *p)
{
	return (uint16_t)(p->tx_sent - p->tx_acked) < p->tx_credits_max;
}

/* A credit is available, refreshed from the mailbox when none is held. */
static inline bool qp_credit_avail(qp_peer_t *p)
{
	uint16_t c;

	if (qp_credit_held(p))
		return true;
	if (qp_mbox_decode(atomic_load_explicit(&p->path->mbox[p->rank], memory_order_acquire), &c))
		qp_credit_ack(p, c);
	return qp_credit_held(p);
}

static inline bool qp_credit_take(qp_peer_t *p)
{
	if (!qp_credit_avail(p))
		return false;
	p->tx_sent++;
	return true;
}

/* Gives back a credit taken for a WQE that was not posted. */
static inline void qp_credit_undo(qp_peer_t *p)
{
	p->tx_sent--;
}

/* We owe the peer an explicit credit return (a mailbox write). */
static inline bool qp_credit_owed(const qp_peer_t *p)
{
	return (uint16_t)(p->rx_done - p->rx_told) >= p->path->credit_threshold;
}

/* ---- send-queue entries ------------------------------------------------- */

static inline uint32_t qp_sq_space(const qp_peer_t *p)
{
	return p->sq_max - (p->sq_head - p->sq_tail);
}

/* Claims the next send-queue entry (the caller checked space). */
static inline qp_sqe_t *qp_sqe_claim(qp_peer_t *p, uint64_t *wr_id_p)
{
	qp_sqe_t *e = &p->sqe[p->sq_head & p->sq_mask];

	*wr_id_p = qp_wrid_tx(p, p->sq_head);
	p->sq_head++;
	memset(e, 0, sizeof(*e));
	e->txbuf = -1;
	return e;
}

/* Decides whether a WQE is signalled (selective signalling): when the
 * caller needs its completion, every signal_every WQEs, and always when
 * the send queue or the bounce pool runs low, so that slots come back. */
static inline bool qp_sig_decide(qp_peer_t *p, bool need)
{
	qp_path_t *path = p->path;

	if (need || ++p->sq_unsig >= path->signal_every || qp_sq_space(p) <= path->signal_every ||
	    path->tx_nfree < path->tx_count / 4) {
		p->sq_unsig = 0;
		return true;
	}
	return false;
}

/* Claims the entry of the next WQE of @kind and decides its signalling
 * (@need: the caller needs its completion): e->signaled says which. The
 * caller checked space; *wr_id_p gets the WR's id. */
static inline qp_sqe_t *qp_sqe_next(qp_peer_t *p, enum qp_sqe_kind kind, enum ibv_wr_opcode opcode,
				    bool need, uint64_t *wr_id_p)
{
	bool sig = qp_sig_decide(p, need);
	qp_sqe_t *e = qp_sqe_claim(p, wr_id_p);

	e->kind = (uint8_t)kind;
	e->opcode = (uint8_t)opcode;
	e->signaled = sig;
	if (sig)
		p->sq_last_sig = p->sq_head;
	return e;
}

/* Unsignalled WQEs are outstanding and no signalled one follows them:
 * they (and their bounce buffers) come back only with a flush WQE. */
static inline bool qp_sq_needs_flush(const qp_peer_t *p)
{
	return p->sq_head != p->sq_tail && p->sq_last_sig != p->sq_head;
}

/* Bytes of the transfers (RMA, rendezvous READs) outstanding before
 * send-queue entry @seq; messages and atomics count 0. */
static inline uint64_t qp_sq_bytes_before(const qp_peer_t *p, uint32_t seq)
{
	uint64_t n = 0;

	for (uint32_t s = p->sq_tail; s != seq; s++)
		n += p->sqe[s & p->sq_mask].bytes;
	return n;
}

/* How long a keepalive probe with @ahead bytes of transfers queued before
 * it may stay unanswered before the peer counts as gone (progress.c):
 * @dead_ns, plus those bytes at QP_KA_NS_PER_BYTE (a link of 10 MB/s,
 * slower than Soft-RoCE under emulation), at most QP_KA_MAX_FACTOR times
 * @dead_ns. */
#define QP_KA_NS_PER_BYTE 100
#define QP_KA_MAX_FACTOR  15
static inline uint64_t qp_ka_limit(uint64_t dead_ns, uint64_t ahead)
{
	uint64_t max = dead_ns * QP_KA_MAX_FACTOR;

	if (ahead >= (max - dead_ns) / QP_KA_NS_PER_BYTE)
		return max;
	return dead_ns + ahead * QP_KA_NS_PER_BYTE;
}

/* Retires the oldest outstanding entry: its slot and bounce buffer come
 * back; the caller hands its operation to the protocol (progress.c). */
static inline qp_sqe_t *qp_sq_retire_oldest(qp_peer_t *p)
{
	qp_sqe_t *e = &p->sqe[p->sq_tail++ & p->sq_mask];
	qp_path_t *path = p->path;

	if (e->txbuf >= 0) {
		path->tx_free[path->tx_nfree++] = (uint32_t)e->txbuf;
		e->txbuf = -1;
	}
	return e;
}

/* ---- pending work --------------------------------------------------------- */

/* Puts the peer (once) on the path's list of peers that progress drains. */
static inline void qp_pend_mark(qp_peer_t *p)
{
	qp_path_t *path = p->path;

	if (p->on_pend_list)
		return;
	p->on_pend_list = true;
	p->pend_next = path->pend_list;
	path->pend_list = p;
}

/* Tag sends or operations wait in the peer's FIFOs. */
static inline bool qp_peer_has_pending(const qp_peer_t *p)
{
	return !ibx_list_empty(&p->pend_tag) || p->pend_head;
}

/* Appends a copy of @op (and of its iovec array) to the operation FIFO and
 * marks the peer: IBX_OK, or IBX_ERR_NO_MEMORY (logged). */
ibx_status_t ibx_qp_op_enqueue(qp_peer_t *p, const qp_op_t *op);

/* Starts @op (on the caller's stack) with @start, its protocol's start
 * function, when nothing is queued before it; queues a copy when work is
 * queued or @start finds no slot (IBX_ERR_BUSY): IBX_INPROGRESS (posted or
 * queued), IBX_OK (completed at once) or an error. Inline: a one-sided
 * operation's post is a few calls deep, not five. */
static inline ibx_status_t ibx_qp_op_submit(qp_peer_t *p, qp_op_t *op,
					    ibx_status_t (*start)(qp_peer_t *, qp_op_t *, bool))
{
	if (ibx_likely(!p->pend_head)) {
		ibx_status_t st = start(p, op, false);

		if (ibx_likely(st != IBX_ERR_BUSY))
			return st;
	}
	return ibx_qp_op_queue(p, op);
}

/* Unlinks the FIFO's head (NULL when empty); the caller frees it. */
static inline qp_op_t *qp_op_pop(qp_peer_t *p)
{
	qp_op_t *op = p->pend_head;

	if (op) {
		p->pend_head = op->next;
		if (!p->pend_head)
			p->pend_tail = NULL;
	}
	return op;
}

/* ---- message batches: eager, RTS and FIN sends ------------------------------ */
#define QP_TXB_MAX 16

typedef struct qp_txb {
	qp_peer_t *p;
	int n;
	struct ibv_send_wr wr[QP_TXB_MAX];
	struct ibv_sge sge[QP_TXB_MAX][2];
	qp_hdr_t hdr[QP_TXB_MAX];
	union {
		qp_rts_t rts;
		qp_fin_t fin;
	} body[QP_TXB_MAX];		 /* RTS / FIN bodies, alive until the post */
	ibx_request_t *done[QP_TXB_MAX]; /* eager sends to complete after the post */
	int ndone;
} qp_txb_t;

static inline void qp_txb_init(qp_txb_t *b, qp_peer_t *p)
{
	b->p = p;
	b->n = 0;
	b->ndone = 0;
}

static inline bool qp_msg_fits_inline(const qp_peer_t *p, size_t body)
{
	return sizeof(qp_hdr_t) + body <= p->path->inline_max &&
	       sizeof(qp_hdr_t) + body <= p->qp->max_inline;
}

/* Can one message of @body bytes be posted now (credit, slot, buffer)? */
static inline bool qp_msg_can_post(qp_peer_t *p, size_t body)
{
	return qp_sq_space(p) > 0 && (qp_msg_fits_inline(p, body) || p->path->tx_nfree > 0) &&
	       qp_credit_avail(p);
}

/* Appends one message, taking its credit, entry and (when it does not fit
 * inline) bounce buffer; the caller checked qp_msg_can_post and that the
 * batch has room. */
void ibx_qp_txb_add(qp_txb_t *b, uint8_t type, ibx_tag_t tag, const void *body, size_t len);
/* The same for a scattered typed eager send: packed straight into a bounce
 * buffer (the caller checked one is free). */
void ibx_qp_txb_add_req(qp_txb_t *b, uint8_t type, ibx_request_t *req);
/* Posts the batch as one chain, then completes the eager sends queued
 * with it (their payloads were copied by the post). */
ibx_status_t ibx_qp_txb_flush(qp_txb_t *b);

/* ---- posting ---------------------------------------------------------------- */

/* The peer fails: ibv_post_send refused @bad (NULL: unknown) with errno @rc. */
ibx_status_t ibx_qp_chain_post_failed(qp_peer_t *p, const struct ibv_send_wr *bad, int rc);

/* Posts a chain whose WQEs were claimed; on failure the peer fails. */
static inline ibx_status_t ibx_qp_chain_post(qp_peer_t *p, struct ibv_send_wr *first)
{
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(p->qp->qp, first, &bad);

	return ibx_likely(rc == 0) ? IBX_OK : ibx_qp_chain_post_failed(p, bad, rc);
}
/* Returns credits without a message: a mailbox write of our consumed
 * count (IBX_ERR_BUSY: no send-queue slot). */
ibx_status_t ibx_qp_credit_return(qp_peer_t *p);
/* Posts a signalled mailbox write so every earlier WQE completes. */
ibx_status_t ibx_qp_post_flush_wqe(qp_peer_t *p);
/* Asks every peer whose unsignalled WQEs hold bounce buffers for a
 * completion (a flush WQE): the pool ran dry. */
void ibx_qp_sq_reclaim(qp_path_t *path);

#endif /* IBX_QP_SENDQ_H */
