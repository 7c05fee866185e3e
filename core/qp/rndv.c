/*
 * rndv.c — the verbs path's rendezvous, for messages above
 * IBX_IB_EAGER_LIMIT and every IBX_SEND_SYNC: the sender's RTS, the
 * receiver's zero-copy RDMA READ and its completion, and the FIN, sent by
 * the receiver and received by the sender.
 *
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
 * RTS and FIN are messages of the send queue (sendq.c: credits, batches);
 * a READ or a FIN that finds no credit, slot or buffer waits in the peer's
 * operation FIFO, which progress drains through ibx_qp_rndv_op_start.
 * A receive of zero bytes sends the FIN alone. A READ longer than the
 * port's message size goes as several WQEs posted as one chain.
 *
 * A typed receive whose blocks are scattered (ibx_req_scattered) asks its
 * typed layer for the scheme (the sender's bytes are always contiguous
 * here: the verbs path takes typed sends packed): generic lands in a
 * buffer and is unpacked at completion (the READ above, unchanged);
 * p-rrs READs straight into the blocks — the block list as scatter
 * entries, posted by the one-sided get (rdma.c: max_sge_rd per WQE, long
 * lists in parts, the user buffer registered by OGR) — and then sends the
 * FIN ([Wu03] §5.2).
 *
 * The request fields while a rendezvous runs: the send, on the peer's
 * rndv_sends until its FIN, holds its id in priv[0] and its buffer's
 * registration in priv[1]; the receive holds the sender's id in priv[0],
 * its registration in priv[1] and "truncated" in priv[2].
 */
#include "sendq.h"

#include <stdlib.h>

#define READ_CHAIN_MAX 16

/* ---- sender ------------------------------------------------------------------------ */

ibx_status_t ibx_qp_rndv_send(qp_peer_t *p, qp_txb_t *b, ibx_request_t *req)
{
	ibx_rcache_region_t *reg = NULL;
	qp_rts_t *rts;
	ibx_status_t st;

	if (ibx_req_scattered(req))
		return ibx_qp_rndv_dt_send(p, b, req);
	if (req->buflen) {
		st = ibx_rcache_region_get(p->path->rcache, req->buf, req->buflen, &reg);
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
	rts->flags = 0;
	rts->avg_block = 0;
	ibx_qp_txb_add(b, QP_MSG_RTS, req->tag, rts, sizeof(*rts));
	return IBX_INPROGRESS;
}

static void send_done(qp_peer_t *p, ibx_request_t *req, ibx_status_t st)
{
	ibx_rcache_region_t *reg = (ibx_rcache_region_t *)(uintptr_t)req->priv[1];

	ibx_rq_remove(&p->rndv_sends, req);
	if (reg)
		ibx_rcache_region_put(p->path->rcache, reg);
	if (ibx_req_scattered(req))
		ibx_qp_rndv_dt_send_done(p->path, req);
	ibx_req_complete(req, st);
}

void ibx_qp_rndv_fin_recv(qp_peer_t *p, const qp_fin_t *fin)
{
	ibx_request_t *r;

	ibx_rq_for_each(r, &p->rndv_sends)
	{
		if ((uint32_t)r->priv[0] == fin->id) {
			send_done(p, r, IBX_OK);
			return;
		}
	}
	ibx_warn(QP_PEER_FMT ": FIN for unknown rendezvous %u", QP_PEER_ARGS(p), fin->id);
}

void ibx_qp_rndv_peer_failed(qp_peer_t *p)
{
	ibx_request_t *r;

	while ((r = ibx_rq_first(&p->rndv_sends)))
		send_done(p, r, IBX_ERR_UNREACHABLE);
	ibx_qp_rndv_dt_peer_failed(p);
}

/* ---- FIN ------------------------------------------------------------------------------- */

/* The one FIN sender: posts FIN {id} now, or IBX_ERR_BUSY when a credit,
 * a slot or a bounce buffer is missing (the operation FIFO retries). */
static ibx_status_t fin_start(qp_peer_t *p, uint32_t id)
{
	qp_txb_t b;

	if (!qp_msg_can_post(p, sizeof(qp_fin_t)))
		return IBX_ERR_BUSY;
	qp_txb_init(&b, p);
	b.body[0].fin.id = id;
	b.body[0].fin.pad = 0;
	ibx_qp_txb_add(&b, QP_MSG_FIN, 0, &b.body[0].fin, sizeof(qp_fin_t));
	return ibx_qp_txb_flush(&b);
}

/* Sends FIN {id} now or queues it behind the peer's queued operations. A
 * FIN that cannot even be queued fails the peer: its sender would wait for
 * it forever. */
static ibx_status_t fin_submit(qp_peer_t *p, uint32_t id)
{
	qp_op_t op = {.kind = OP_FIN, .imm = id};
	ibx_status_t st = ibx_qp_op_submit(p, &op, ibx_qp_rndv_op_start);

	if (st == IBX_ERR_NO_MEMORY) {
		ibx_error("peer %d: rendezvous FIN %u lost: dropping the peer", p->rank, id);
		ibx_qp_peer_fail(p, IBX_ERR_NO_MEMORY, NULL);
	}
	return st;
}

ibx_status_t ibx_qp_rndv_fin(qp_peer_t *p, uint32_t id)
{
	return fin_submit(p, id);
}

/* ---- receiver ------------------------------------------------------------------------ */

/* ---- receiver: p-rrs (read-scatter into a typed receive's blocks) ------------------ */

typedef struct prrs {
	ibx_request_t get;   /* the READs' request */
	ibx_request_t *recv; /* the typed receive */
	qp_peer_t *p;
	uint32_t id; /* the sender's rendezvous id */
	int n;
	struct iovec iov[];
} prrs_t;

static void prrs_finish(prrs_t *x, ibx_status_t st)
{
	ibx_request_t *req = x->recv;

	if (st == IBX_OK)
		fin_submit(x->p, x->id);
	free(x);
	if (st == IBX_OK && req->priv[2])
		st = IBX_ERR_TRUNCATED;
	ibx_req_complete(req, st);
}

static void prrs_get_done(ibx_request_t *get)
{
	prrs_finish(ibx_container_of(get, prrs_t, get), get->status);
}

/* The receive's blocks for the first @n bytes, each at most max_msg. */
static prrs_t *prrs_blocks(qp_peer_t *p, ibx_request_t *req, size_t n)
{
	size_t cap = 64, got = 0, bytes, max = p->path->max_msg;
	prrs_t *x = malloc(sizeof(*x) + cap * sizeof(struct iovec));

	if (!x)
		return NULL;
	x->n = 0;
	while (got < n) {
		struct iovec chunk[64];
		int k = req->dt->ops->iov(req, n - got, chunk, 64, &bytes);

		if (k <= 0 || !bytes)
			goto err;
		for (int i = 0; i < k; i++) {
			for (size_t o = 0; o < chunk[i].iov_len; o += max) {
				if ((size_t)x->n == cap) {
					prrs_t *y =
					    realloc(x, sizeof(*x) + 2 * cap * sizeof(struct iovec));

					if (!y)
						goto err;
					x = y;
					cap *= 2;
				}
				x->iov[x->n].iov_base = (char *)chunk[i].iov_base + o;
				x->iov[x->n++].iov_len =
				    chunk[i].iov_len - o < max ? chunk[i].iov_len - o : max;
			}
		}
		got += bytes;
	}
	return x;
err:
	free(x);
	return NULL;
}

static ibx_status_t prrs_start(ibx_peer_t *peer, const qp_rts_t *rts, ibx_request_t *req, size_t n)
{
	qp_peer_t *p = peer->path;
	prrs_t *x = prrs_blocks(p, req, n);
	ibx_status_t st;

	if (!x)
		return IBX_ERR_NO_MEMORY;
	x->recv = req;
	x->p = p;
	x->id = rts->id;
	x->get.cb = prrs_get_done;
	x->get.user_data = NULL;
	ibx_req_init(&x->get, IBX_REQ_RECV);
	st = ibx_qp_rma_get(peer, x->iov, x->n, rts->addr, rts->rkey, &x->get);
	if (st == IBX_OK) {
		/* done at once: the FIN, and the tag layer completes the receive */
		fin_submit(p, rts->id);
		free(x);
		return IBX_OK;
	}
	if (st < 0)
		free(x);
	return st;
}

ibx_status_t ibx_qp_rndv_recv(ibx_peer_t *peer, const void *rtsv, ibx_request_t *req)
{
	qp_peer_t *p = peer->path;
	qp_rts_t rts;
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
		ibx_status_t st = fin_submit(p, rts.id);

		return st < 0 ? st : IBX_OK;
	}
	if (rts.flags & QP_RTS_PUSH)
		return ibx_qp_rndv_dt_recv(p, &rts, req, n);
	return ibx_qp_rndv_read(peer, &rts, req);
}

ibx_status_t ibx_qp_rndv_read(ibx_peer_t *peer, const qp_rts_t *rts, ibx_request_t *req)
{
	qp_peer_t *p = peer->path;
	size_t n = rts->len < req->buflen ? rts->len : req->buflen;
	qp_op_t op;

	if (ibx_req_scattered(req)) {
		unsigned can = IBX_DT_CAN(IBX_DT_SCHEME_P_RRS);
		/* chosen already when the sender packed on our request */
		int scheme = req->dt->scheme != IBX_DT_SCHEME_AUTO
				 ? req->dt->scheme
				 : req->dt->ops->choose(req, n, true, 0, can, can);

		if (scheme < 0)
			return IBX_ERR_NO_MEMORY;
		if (scheme == IBX_DT_SCHEME_P_RRS)
			return prrs_start(peer, rts, req, n);
	}
	memset(&op, 0, sizeof(op));
	op.kind = OP_RNDV_READ;
	op.req = req;
	op.raddr = rts->addr;
	op.rkey = rts->rkey;
	op.a = n;
	return ibx_qp_op_submit(p, &op, ibx_qp_rndv_op_start);
}

static ibx_status_t read_start(qp_peer_t *p, qp_op_t *op, bool from_queue)
{
	qp_path_t *path = p->path;
	ibx_request_t *req = op->req;
	struct ibv_send_wr wr[READ_CHAIN_MAX];
	struct ibv_sge sge[READ_CHAIN_MAX];
	uint64_t len = op->a, off, chunk = path->max_msg;
	uint32_t nchunks = (uint32_t)((len + chunk - 1) / chunk), i;
	ibx_rcache_region_t *reg;
	ibx_status_t st;

	if (nchunks > READ_CHAIN_MAX) {
		ibx_error("peer %d: rendezvous of %llu bytes needs %u READs (at most %d)", p->rank,
			  (unsigned long long)len, nchunks, READ_CHAIN_MAX);
		if (from_queue)
			ibx_req_complete(req, IBX_ERR_UNSUPPORTED);
		return IBX_ERR_UNSUPPORTED;
	}
	if (qp_sq_space(p) < nchunks)
		return IBX_ERR_BUSY;
	reg = (ibx_rcache_region_t *)(uintptr_t)req->priv[1];
	if (!reg) {
		st = ibx_rcache_region_get(path->rcache, req->buf, len, &reg);
		if (st != IBX_OK) {
			ibx_error("peer %d: registering a %llu-byte rendezvous receive buffer "
				  "failed: %s",
				  p->rank, (unsigned long long)len, ibx_status_str(st));
			if (from_queue)
				ibx_req_complete(req, st);
			return st;
		}
		req->priv[1] = (uintptr_t)reg;
	}
	for (i = 0, off = 0; i < nchunks; i++, off += chunk) {
		bool last = i + 1 == nchunks;
		uint64_t wr_id;
		qp_sqe_t *e = qp_sqe_next(p, SQE_RNDV, IBV_WR_RDMA_READ, last, &wr_id);

		e->req = req;
		e->last = last;
		sge[i] = (struct ibv_sge){(uintptr_t)req->buf + off,
					  (uint32_t)(last ? len - off : chunk),
					  ibx_rcache_region_lkey(reg)};
		e->bytes = sge[i].length;
		ibx_qp_wr_read(&wr[i], &sge[i], 1, op->raddr + off, op->rkey, wr_id,
			       e->signaled ? IBX_QP_SIGNALED : 0);
		if (i)
			wr[i - 1].next = &wr[i];
	}
	st = ibx_qp_chain_post(p, wr);
	/* on failure the peer failed and the request with it */
	return st == IBX_OK ? IBX_INPROGRESS : st;
}

static void read_release(qp_path_t *path, ibx_request_t *req)
{
	ibx_rcache_region_t *reg = (ibx_rcache_region_t *)(uintptr_t)req->priv[1];

	if (reg)
		ibx_rcache_region_put(path->rcache, reg);
	req->priv[1] = 0;
}

void ibx_qp_rndv_read_done(qp_peer_t *p, qp_sqe_t *e, ibx_status_t st)
{
	ibx_request_t *req = e->req;

	if (!e->last || !req)
		return;
	read_release(p->path, req);
	if (st != IBX_OK) {
		ibx_req_complete(req, st);
		return;
	}
	fin_submit(p, (uint32_t)req->priv[0]);
	ibx_req_complete(req, req->priv[2] ? IBX_ERR_TRUNCATED : IBX_OK);
}

/* ---- the operation FIFO's entries: OP_RNDV_READ, OP_FIN ---------------------------- */

ibx_status_t ibx_qp_rndv_op_start(qp_peer_t *p, qp_op_t *op, bool from_queue)
{
	ibx_status_t st;

	if (op->kind == OP_RNDV_READ)
		return read_start(p, op, from_queue);
	if (op->kind == OP_CTRL)
		return ibx_qp_rndv_dt_op_start(p, op);
	st = fin_start(p, op->imm);
	return st == IBX_OK ? IBX_INPROGRESS : st;
}

ibx_status_t ibx_qp_rndv_op_fail(qp_peer_t *p, qp_op_t *op, bool from_queue, ibx_status_t why)
{
	/* a FIN (or control message) of a failed peer has no one left to tell */
	if (op->kind == OP_CTRL)
		ibx_qp_rndv_dt_op_fail(op);
	if (op->kind == OP_RNDV_READ) {
		read_release(p->path, op->req);
		if (from_queue)
			ibx_req_complete(op->req, why);
	}
	return why;
}
