/*
 * progress.c — the verbs path's progress and dispatch: batched CQ polling,
 * batched SRQ reposting, the demultiplexing of received messages, the
 * retirement of completed send-queue entries, the draining of work that
 * waited for credits or slots, and the conversion of any QP error into
 * failed requests. It is the one file that knows every protocol: it hands
 * each completion, queued operation and failure to channel.c, rndv.c or
 * rdma.c; those post through the send queue (sendq.c) and come back here
 * only to queue an operation (ibx_qp_op_submit) or to fail a peer.
 *
 *   ibx_qp_path_progress
 *     poll the CQ, POLL_BATCH at a time
 *       receive  EAGER, RTS -> tag layer     FIN -> rndv.c
 *                WRITE WITH IMMEDIATE -> the handler (rdma.c sets it)
 *                then credits: piggy-backed in, returned when owed
 *       send     retire every entry up to the completed WQE (RC order):
 *                READ -> rndv.c      RMA, atomic -> rdma.c
 *     repost consumed receive buffers, as one list
 *     drain the marked peers: credit return, operation FIFO (rndv.c,
 *       rdma.c), tag FIFO (channel.c)
 *     now and then, when idle: asynchronous events, node-local peers' pids
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
#include "sendq.h"

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

/* ---- the operation FIFO's dispatch ------------------------------------------------ */

static inline bool op_is_rndv(const qp_op_t *op)
{
	return op->kind == OP_FIN || op->kind == OP_RNDV_READ || op->kind == OP_CTRL;
}

static ibx_status_t op_start(qp_peer_t *p, qp_op_t *op, bool from_queue)
{
	return op_is_rndv(op) ? ibx_qp_rndv_op_start(p, op, from_queue)
			      : ibx_qp_rma_op_start(p, op, from_queue);
}

static ibx_status_t op_fail(qp_peer_t *p, qp_op_t *op, bool from_queue, ibx_status_t why)
{
	return op_is_rndv(op) ? ibx_qp_rndv_op_fail(p, op, from_queue, why)
			      : ibx_qp_rma_op_fail(p, op, from_queue, why);
}

ibx_status_t ibx_qp_op_queue(qp_peer_t *p, qp_op_t *op)
{
	ibx_status_t st = ibx_qp_op_enqueue(p, op);

	return st == IBX_OK ? IBX_INPROGRESS : op_fail(p, op, false, st);
}

/* ---- send completions ------------------------------------------------------------ */

static const char *sqe_what(const qp_sqe_t *e)
{
	switch (e->kind) {
	case SQE_MSG: return "SEND";
	case SQE_MBOX: return "RDMA WRITE (credit mailbox)";
	case SQE_RNDV: return "RDMA READ";
	default: return ibx_qp_wr_opcode_str((enum ibv_wr_opcode)e->opcode);
	}
}

/* The completion dispatch: hands a retired entry's operation to its
 * protocol. Messages and mailbox writes end with their slot. */
static void sqe_done(qp_peer_t *p, qp_sqe_t *e, ibx_status_t st)
{
	switch (e->kind) {
	case SQE_RNDV: ibx_qp_rndv_read_done(p, e, st); break;
	case SQE_RMA:
	case SQE_AMO: ibx_qp_rma_sqe_done(p, e, st); break;
	default: break;
	}
	e->kind = 0;
}

static IBX_HOT void tx_completion(qp_path_t *path, const struct ibv_wc *wc)
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
		ibx_error(QP_PEER_FMT ": completion for WQE %u outside [%u, %u)", QP_PEER_ARGS(p),
			  seq, p->sq_tail, p->sq_head);
		return;
	}
	e = &p->sqe[seq & p->sq_mask];
	if (ibx_unlikely(wc->status != IBV_WC_SUCCESS)) {
		ibx_status_t why = ibx_qp_wc_status(wc->status);

		if (path->finalizing)
			ibx_debug(QP_PEER_FMT ": %s failed during finalize: %s", QP_PEER_ARGS(p),
				  sqe_what(e), ibv_wc_status_str(wc->status));
		else
			ibx_error(QP_PEER_FMT ": %s failed: %s (vendor err 0x%x)", QP_PEER_ARGS(p),
				  sqe_what(e), ibv_wc_status_str(wc->status), wc->vendor_err);
		/* only a one-sided operation's own key problem is REMOTE_ACCESS */
		if (why == IBX_ERR_REMOTE_ACCESS && e->kind != SQE_RMA && e->kind != SQE_AMO)
			why = IBX_ERR_UNREACHABLE;
		ibx_qp_peer_fail(p, why == IBX_OK ? IBX_ERR_UNREACHABLE : why, e);
		return;
	}
	/* completions of one QP arrive in order: everything up to seq is done */
	while (p->error == IBX_OK && (int32_t)(seq + 1 - p->sq_tail) > 0)
		sqe_done(p, qp_sq_retire_oldest(p), IBX_OK);
	if (qp_peer_has_pending(p))
		qp_pend_mark(p);
}

/* ---- peer failure ------------------------------------------------------------------ */

void ibx_qp_peer_fail(qp_peer_t *p, ibx_status_t why, const qp_sqe_t *culprit)
{
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
		qp_sqe_t *e = qp_sq_retire_oldest(p);
		bool own = e == culprit || (culprit_req && e->req == culprit_req);

		sqe_done(p, e, own ? why : IBX_ERR_UNREACHABLE);
	}
	while ((op = qp_op_pop(p))) {
		op_fail(p, op, true, IBX_ERR_UNREACHABLE);
		free(op);
	}
	while ((r = ibx_rq_first(&p->pend_tag))) {
		ibx_rq_remove(&p->pend_tag, r);
		ibx_req_complete(r, IBX_ERR_UNREACHABLE);
	}
	ibx_qp_rndv_peer_failed(p);
	p->rma_outstanding = 0;
	/* posted receives from the peer, and its entry in the context (the
	 * loopback QP carries no messages: our own receives stay) */
	if (p != p->path->self)
		ibx_tag_peer_failed(p->path->ctx, p->rank, IBX_ERR_UNREACHABLE);
	else
		p->ipeer->error = IBX_ERR_UNREACHABLE;
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

/* ---- receives ---------------------------------------------------------------------- */

const char *ibx_qp_rx_check(const void *buf, size_t len, int nranks)
{
	qp_hdr_t h;
	qp_cts_t c;
	size_t body;

	if (len < sizeof(h))
		return "short header";
	memcpy(&h, buf, sizeof(h));
	if (h.src < 0 || h.src >= nranks)
		return "sender out of range";
	body = len - sizeof(h);
	switch (h.type) {
	case QP_MSG_EAGER: return NULL;
	case QP_MSG_RTS:
	case QP_MSG_PACKED: return body == sizeof(qp_rts_t) ? NULL : "RTS length";
	case QP_MSG_FIN:
	case QP_MSG_GRANT:
	case QP_MSG_DONE: return body == sizeof(qp_fin_t) ? NULL : "FIN length";
	case QP_MSG_CTS: break;
	default: return "unknown type";
	}
	if (body < sizeof(c))
		return "CTS length";
	memcpy(&c, (const char *)buf + sizeof(h), sizeof(c));
	body -= sizeof(c);
	switch (c.scheme) {
	case IBX_DT_SCHEME_GENERIC:
	case IBX_DT_SCHEME_P_RRS: return body == 0 ? NULL : "CTS length";
	case IBX_DT_SCHEME_MULTI_W:
		return body == ((c.flags & QP_CTS_LAYOUT) ? c.blob_len : 0) ? NULL
									    : "CTS layout length";
	case IBX_DT_SCHEME_RWG_UP:
	case IBX_DT_SCHEME_BC_SPUP:
		return c.nseg <= QP_DT_GRANT_MAX && body == (size_t)c.nseg * sizeof(uint16_t)
			   ? NULL
			   : "CTS segment grant";
	default: return "CTS scheme";
	}
}

static void rx_corrupt(qp_path_t *path, const struct ibv_wc *wc, const char *what)
{
	qp_peer_t *p = peer_by_qpn(path, wc->qp_num);

	if (!p) {
		ibx_error("%s: malformed message (%s, %u bytes) on QP 0x%x of no peer",
			  path->dev->name, what, wc->byte_len, wc->qp_num);
		return;
	}
	ibx_error(QP_PEER_FMT ": malformed message (%s, %u bytes): dropping the peer",
		  QP_PEER_ARGS(p), what, wc->byte_len);
	{
		ibx_qp_peer_fail(p, IBX_ERR_CORRUPT, NULL);
		if (p->ipeer->error == IBX_OK)
			p->ipeer->error = IBX_ERR_CORRUPT;
	}
}

static void rx_completion(qp_path_t *path, const struct ibv_wc *wc)
{
	uint32_t idx = (uint32_t)(wc->wr_id & ~QP_WRID_RX);
	char *buf = path->rx_mem + (size_t)idx * path->rx_stride;
	const qp_hdr_t *h = (const qp_hdr_t *)buf;
	const char *why;
	qp_peer_t *p;
	uint32_t imm;
	int seg;

	if (ibx_unlikely(wc->status != IBV_WC_SUCCESS)) {
		path->rx_free[path->rx_nfree++] = idx;
		p = peer_by_qpn(path, wc->qp_num);
		if (wc->status == IBV_WC_WR_FLUSH_ERR || !p || p->error != IBX_OK)
			return;
		if (path->finalizing)
			ibx_debug(QP_PEER_FMT ": RECV failed during finalize: %s", QP_PEER_ARGS(p),
				  ibv_wc_status_str(wc->status));
		else
			ibx_error(QP_PEER_FMT ": RECV failed: %s (vendor err 0x%x)",
				  QP_PEER_ARGS(p), ibv_wc_status_str(wc->status), wc->vendor_err);
		ibx_qp_peer_fail(p, IBX_ERR_UNREACHABLE, NULL);
		return;
	}
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		p = peer_by_qpn(path, wc->qp_num);
		path->rx_free[path->rx_nfree++] = idx;
		if (!p || p->error != IBX_OK)
			return;
		p->rx_done++;
		imm = be32toh(wc->imm_data);
		seg = ibx_qp_rndv_dt_imm(p, imm);
		if (seg < 0) {
			ibx_error(QP_PEER_FMT ": segment write 0x%x matches no rendezvous",
				  QP_PEER_ARGS(p), imm);
			ibx_qp_peer_fail(p, IBX_ERR_CORRUPT, NULL);
			return;
		}
		if (seg == 0 && path->imm_cb)
			path->imm_cb(path->ctx, p->rank, imm, path->imm_arg);
		else if (seg == 0)
			ibx_debug("peer %d: write with immediate 0x%x and no handler", p->rank,
				  be32toh(wc->imm_data));
		goto credits;
	}
	why = ibx_qp_rx_check(buf, wc->byte_len, path->ctx->size);
	if (ibx_unlikely(why || !path->by_rank[h->src] ||
			 path->by_rank[h->src]->qp->qpn != wc->qp_num)) {
		path->rx_free[path->rx_nfree++] = idx;
		rx_corrupt(path, wc, why ? why : "sender is not this QP's peer");
		return;
	}
	p = path->by_rank[h->src];
	if (ibx_unlikely(p->error != IBX_OK)) {
		path->rx_free[path->rx_nfree++] = idx;
		return;
	}
	qp_credit_ack(p, h->credits);
	p->rx_done++;
	path->stats.msgs_recvd++;
	switch (h->type) {
	case QP_MSG_EAGER:
		ibx_tag_arrive_eager(path->ctx, p->rank, h->tag, buf + sizeof(*h),
				     wc->byte_len - sizeof(*h));
		break;
	case QP_MSG_RTS: {
		qp_rts_t rts;

		memcpy(&rts, buf + sizeof(*h), sizeof(rts));
		ibx_tag_arrive_rts(path->ctx, p->rank, h->tag, rts.len, &rts, sizeof(rts));
		break;
	}
	case QP_MSG_FIN: {
		qp_fin_t fin;

		memcpy(&fin, buf + sizeof(*h), sizeof(fin));
		ibx_qp_rndv_fin_recv(p, &fin);
		break;
	}
	case QP_MSG_CTS:
	case QP_MSG_GRANT:
	case QP_MSG_PACKED:
	case QP_MSG_DONE:
		if (!ibx_qp_rndv_dt_msg(p, h->type, buf + sizeof(*h), wc->byte_len - sizeof(*h))) {
			path->rx_free[path->rx_nfree++] = idx;
			rx_corrupt(path, wc, "typed rendezvous message of no rendezvous");
			return;
		}
		break;
	}
	/* only now: a nested progress (from a completion callback) must not
	 * repost the buffer while the tag layer still reads it */
	path->rx_free[path->rx_nfree++] = idx;
credits:
	if (p->error == IBX_OK && qp_credit_owed(p) && ibx_qp_credit_return(p) == IBX_ERR_BUSY)
		qp_pend_mark(p); /* no slot now: progress retries */
	if (qp_peer_has_pending(p))
		qp_pend_mark(p);
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

/* ---- pending work ------------------------------------------------------------------ */

static void peer_drain(qp_peer_t *p)
{
	if (qp_credit_owed(p))
		ibx_qp_credit_return(p);
	while (p->error == IBX_OK && p->pend_head) {
		qp_op_t *op = p->pend_head;
		ibx_status_t st = op_start(p, op, true);

		if (st == IBX_ERR_BUSY)
			break;
		if (p->pend_head == op) /* not consumed by a failure */
			free(qp_op_pop(p));
	}
	ibx_qp_tag_drain(p);
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
		if (p->error == IBX_OK && (qp_peer_has_pending(p) || qp_credit_owed(p)))
			qp_pend_mark(p);
	}
}

/* ---- async events ------------------------------------------------------------------ */

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
				ibx_error(QP_PEER_FMT ": async event %s", QP_PEER_ARGS(p),
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
			    "device %s:%u: async event %s: remote peers fail unless the port is "
			    "active again within the QP retry budget (%.2f s)",
			    path->dev->name, path->dev->port, ibv_event_type_str(ev.event_type),
			    (double)path->retry_budget_ns / 1e9);
			if (!path->port_down_ns)
				path->port_down_ns = ibx_time_ns();
			break;
		case IBV_EVENT_PORT_ACTIVE:
			if (path->port_down_ns)
				ibx_warn("device %s:%u: port active again", path->dev->name,
					 path->dev->port);
			path->port_down_ns = 0;
			break;
		default:
			ibx_debug("device %s: async event %s", path->dev->name,
				  ibv_event_type_str(ev.event_type));
			break;
		}
		ibv_ack_async_event(&ev);
	}
}

/* ---- node-local peers' liveness ------------------------------------------------------ */

/* A node-local peer reached through the NIC that died leaves our QP
 * retrying a QP that no longer exists; the device gives up after the
 * retry budget, or (Soft-RoCE, loopback) never. Its pid says it at once. */
static void live_check(qp_path_t *path)
{
	uint64_t now = ibx_time_ns();

	if (now < path->live_next_ns)
		return;
	path->live_next_ns = now + path->live_ns;
	for (int i = 0; i < path->npeers; i++) {
		qp_peer_t *p = &path->peers[i];

		if (!p->pid || p->error != IBX_OK || ibx_pid_alive(p->pid))
			continue;
		ibx_error(QP_PEER_FMT ": its process (pid %d, on this node) is gone",
			  QP_PEER_ARGS(p), (int)p->pid);
		ibx_qp_peer_fail(p, IBX_ERR_UNREACHABLE, NULL);
	}
}

/* ---- remote peers' liveness: keepalive probes ------------------------------------------ */

/* A remote peer that died, or the link to it, is noticed only by work
 * posted to it: its QP's retries run out. A process blocked in a receive
 * from it, or in a collective behind it, posts nothing. So while we wait,
 * every IBX_IB_KEEPALIVE ms each remote peer that neither said nor
 * completed anything since the last look gets a probe, unless the last one
 * is still out. The probe is the signalled mailbox write: an RDMA write of
 * our credit count, idempotent, no receive buffer used, no CPU at the
 * peer. Its failure goes the usual way ("peer P (dev:port QP a -> b): RDMA
 * WRITE (credit mailbox) failed: transport retry counter exceeded") and
 * every request with the peer fails. A stopped but living peer acks in its
 * kernel or NIC: only the launcher's time limit ends that wait. */
/* Our last probe of @p is still in the send queue. */
static bool qp_ka_outstanding(const qp_peer_t *p)
{
	return p->ka_posted &&
	       (uint32_t)(p->ka_seq - p->sq_tail) < (uint32_t)(p->sq_head - p->sq_tail);
}

/* A probe still unanswered long after the QP should have given up on it.
 * A NIC fails the work once its retries run out; Soft-RoCE (measured,
 * kernel 6.1) keeps work to a vanished QP, or over a link without carrier,
 * pending for ever. So the path keeps the clock: a probe fails the peer
 * after qp_ka_limit (sendq.h): ka_dead_ns, plus the time the transfers
 * queued before it take. Small work ahead (messages, atomics, a mutex's
 * hand-off) adds nothing: a holder unlocking towards a dead waiter learns
 * it in 2 s, not 30. */
static void keepalive_overdue(qp_path_t *path, qp_peer_t *p, uint64_t now)
{
	uint64_t limit = qp_ka_limit(path->ka_dead_ns, p->ka_ahead);

	if (now - p->ka_sent_ns < limit)
		return;
	ibx_error(QP_PEER_FMT ": keepalive probe unanswered for %.2f s (the QP retry budget "
			      "is %.2f s): the peer or the link to it is gone",
		  QP_PEER_ARGS(p), (double)(now - p->ka_sent_ns) / 1e9,
		  (double)path->retry_budget_ns / 1e9);
	ibx_qp_peer_fail(p, IBX_ERR_UNREACHABLE, NULL);
}

static void keepalive_check(qp_path_t *path)
{
	uint64_t now = ibx_time_ns();

	if (now < path->ka_next_ns)
		return;
	path->ka_next_ns = now + path->ka_ns;
	for (int i = 0; i < path->npeers; i++) {
		qp_peer_t *p = &path->peers[i];
		bool heard = p->rx_done != p->ka_rx_done || p->sq_tail != p->ka_sq_tail;

		p->ka_rx_done = p->rx_done;
		p->ka_sq_tail = p->sq_tail;
		if (p == path->self || p->pid || p->error != IBX_OK || heard)
			continue;
		if (qp_ka_outstanding(p)) {
			keepalive_overdue(path, p, now);
			continue;
		}
		/* The probe is signalled: it also completes the unsignalled
		 * work before it. Its limit counts the transfers in that work. */
		p->ka_seq = p->sq_head;
		p->ka_posted = true;
		p->ka_ahead = qp_sq_bytes_before(p, p->sq_head);
		p->ka_sent_ns = now;
		path->stats.keepalives++;
		ibx_trace(QP_PEER_FMT ": silent for %llu ms: keepalive probe", QP_PEER_ARGS(p),
			  (unsigned long long)(path->ka_ns / 1000000));
		if (ibx_qp_post_flush_wqe(p) != IBX_OK) /* no slot: work in flight will tell */
			p->ka_posted = false;
	}
}

/* The port went down (IBV_EVENT_PORT_ERR). A NIC would fail each QP's
 * work once its retries run out; Soft-RoCE, when the link under it has no
 * carrier, keeps the work pending for ever (measured). So the path keeps
 * the clock itself: a port still not ACTIVE one retry budget after the
 * event fails every remote peer, as the QPs would have. Node-local peers
 * reached through the NIC are left to their pid check. */
static void port_down_check(qp_path_t *path)
{
	struct ibv_port_attr pa;
	uint64_t now = ibx_time_ns();
	double secs;

	if (now - path->port_down_ns < path->retry_budget_ns)
		return;
	if (ibv_query_port(path->dev->ctx, path->dev->port, &pa) == 0 &&
	    pa.state == IBV_PORT_ACTIVE) {
		path->port_down_ns = 0; /* back before its event reached us */
		return;
	}
	secs = (double)(now - path->port_down_ns) / 1e9;
	path->port_down_ns = 0;
	for (int i = 0; i < path->npeers; i++) {
		qp_peer_t *p = &path->peers[i];

		if (p == path->self || p->pid || p->error != IBX_OK)
			continue;
		ibx_error(QP_PEER_FMT ": the port has been down for %.2f s, longer than the QP "
				      "retry budget (IBX_IB_TIMEOUT, IBX_IB_RETRY)",
			  QP_PEER_ARGS(p), secs);
		ibx_qp_peer_fail(p, IBX_ERR_UNREACHABLE, NULL);
	}
}

void ibx_qp_peer_lose(ibx_peer_t *peer, const char *why)
{
	qp_peer_t *p = peer->path;

	if (p->error != IBX_OK)
		return;
	ibx_error(QP_PEER_FMT ": %s", QP_PEER_ARGS(p), why);
	ibx_qp_peer_fail(p, IBX_ERR_UNREACHABLE, NULL);
}

/* ---- progress ------------------------------------------------------------------------- */

IBX_HOT int ibx_qp_path_progress(ibx_ctx_t *ctx, void *state)
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
	if (n == 0 && events == 0) {
		++path->progress_calls;
		if ((path->progress_calls & 0xffff) == 0)
			async_check(path);
		if ((path->progress_calls & 0xff) == 0) {
			if (path->live_ns)
				live_check(path);
			if (path->ka_ns)
				keepalive_check(path);
			if (path->port_down_ns) {
				async_check(path); /* the port may be back */
				if (path->port_down_ns)
					port_down_check(path);
			}
		}
	}
	return events;
}
