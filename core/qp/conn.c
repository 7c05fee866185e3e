/*
 * conn.c — the verbs path module: set-up of the device, CQ, SRQ, buffer
 * pools and one RC QP per peer, the address exchange through the bootstrap
 * (PMIx), connection, drain and teardown.
 *
 *   init     open IBX_DEVICE (GID per IBX_GID_INDEX), PD, registration cache,
 *            CQ, SRQ with peers*C+64 buffers (posted as one list), bounce
 *            pool, credit mailbox, atomic result slots, a QP per peer (INIT);
 *            ibx_boot_put("ibx.qp", record)
 *   <fence: collect>
 *   connect  ibx_boot_get(peer, "ibx.qp"): INIT→RTR→RTS towards the QP the
 *            peer created for us; credits and eager limit agreed per pair
 *   <fence: barrier>  — every QP is RTS before anyone sends
 *
 * The record (host byte order; a job runs one build on one architecture):
 *   qp_blob_t header | size x { qpn, psn } indexed by world rank (0: no QP)
 */
#include "qp_int.h"
#include "sendq.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define BOOT_KEY     "ibx.qp"
#define BLOB_MAGIC   0x49425851u /* "IBXQ" */
#define BLOB_VERSION 1
#define AMO_SLOTS    256
#define MIN_CREDITS  4

typedef struct qp_blob {
	uint32_t magic, version;
	int32_t size, rank;
	uint64_t mbox_addr;
	uint32_t mbox_rkey;
	uint16_t credits;
	uint16_t pad;
	uint32_t eager_limit;
	int32_t pid; /* node-local peers check that it lives */
	uint8_t addr[IBX_QP_ADDR_WIRE_LEN];
} qp_blob_t;

typedef struct qp_blob_ent {
	uint32_t qpn, psn;
} qp_blob_ent_t;

const ibx_path_ops_t ibx_qp_path_ops = {
    .name = "verbs",
    .typed_send = true,
    .typed_push = true,
    .tag_send = ibx_qp_tag_send,
    .rndv_recv = ibx_qp_rndv_recv,
    .put = ibx_qp_rma_put,
    .get = ibx_qp_rma_get,
    .put_imm = ibx_qp_rma_put_imm,
    .fetch_add = ibx_qp_rma_fetch_add,
    .cswap = ibx_qp_rma_cswap,
    .flush = ibx_qp_rma_flush,
    .lose = ibx_qp_peer_lose,
};

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static void *alloc_aligned(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len ? len : 4096))
		return NULL;
	memset(p, 0, len);
	return p;
}

static void path_free(qp_path_t *path)
{
	if (!path)
		return;
	path->finalizing = true;
	for (int i = 0; i < path->npeers; i++) {
		qp_peer_t *p = &path->peers[i];
		qp_op_t *op;

		while ((op = p->pend_head)) {
			p->pend_head = op->next;
			if (op->kind == OP_CTRL)
				ibx_qp_rndv_dt_op_fail(op);
			free(op);
		}
		ibx_qp_rndv_dt_peer_failed(p);
		if (p->qp)
			ibx_qp_destroy(p->qp);
		free(p->sqe);
	}
	ibx_qp_srq_destroy(path->srq);
	ibx_qp_mr_dereg(path->rx_mr);
	ibx_qp_mr_dereg(path->tx_mr);
	ibx_qp_mr_dereg(path->mbox_mr);
	ibx_qp_mr_dereg(path->amo_mr);
	ibx_qp_rndv_dt_fini(path);
	if (path->rcache)
		ibx_rcache_destroy(path->rcache);
	ibx_qp_cq_destroy(path->cq);
	ibx_qp_dev_close(path->dev);
	free(path->rx_mem);
	free(path->rx_wr);
	free(path->rx_sge);
	free(path->rx_free);
	free(path->tx_mem);
	free(path->tx_free);
	free((void *)path->mbox);
	free(path->amo);
	free(path->amo_free);
	free(path->peers);
	free(path->by_rank);
	free(path->nic_ipeers);
	free(path->qpn_hash);
	free(path);
}

/* After how many consumed messages the receiver returns credits without a
 * message of its own to carry them: C/4, so that a sender streaming to a
 * silent receiver gets credits back long before it runs out, but never
 * below 2 (when C allows): a receiver that answers each message (ping-pong,
 * request/response) then always has its answer to piggy-back the count on,
 * and returns nothing explicitly. With 1, every message would cost an extra
 * RDMA write — the case with many peers, where C falls to MIN_CREDITS. */
static uint16_t credit_threshold(uint16_t credits)
{
	uint16_t t = credits / 4;

	if (t < 2)
		t = credits < 2 ? credits : 2;
	return t;
}

/* Sizes every pool from the configuration and the number of peers. */
static ibx_status_t path_size(qp_path_t *path, int n)
{
	const ibx_qp_config_t *cfg = ibx_qp_config();
	const struct ibv_device_attr *da = &path->dev->attr;
	int64_t credits = cfg->IB_CREDITS, rx = cfg->IB_RX_BUFS, sq = cfg->IB_SQ_DEPTH;
	int64_t cqe;

	if (cfg->IB_EAGER_LIMIT < 0 || cfg->IB_EAGER_LIMIT > (1 << 20)) {
		ibx_error("IBX_IB_EAGER_LIMIT=%lld: expected 0 .. 1m",
			  (long long)cfg->IB_EAGER_LIMIT);
		return IBX_ERR_INVALID_PARAM;
	}
	if (credits < 1 || credits > 8192) {
		ibx_error("IBX_IB_CREDITS=%lld: expected 1 .. 8192", (long long)credits);
		return IBX_ERR_INVALID_PARAM;
	}
	path->eager_limit = (uint32_t)cfg->IB_EAGER_LIMIT;
	/* every peer gets C reserved buffers: shrink C before growing the SRQ */
	if (rx < QP_RX_SPARE + n * credits)
		credits = (rx - QP_RX_SPARE) / n;
	if (credits < MIN_CREDITS)
		credits = MIN_CREDITS;
	if (credits > cfg->IB_CREDITS)
		credits = cfg->IB_CREDITS;
	if (rx < QP_RX_SPARE + n * credits)
		rx = QP_RX_SPARE + n * credits;
	if (da->max_srq_wr > 0 && rx > da->max_srq_wr) {
		ibx_error("device %s: %d peers x %lld credits need an SRQ of %lld buffers, the "
			  "device allows %d",
			  path->dev->name, n, (long long)credits, (long long)rx, da->max_srq_wr);
		return IBX_ERR_NO_RESOURCE;
	}
	path->credits = (uint16_t)credits;
	path->credit_threshold = credit_threshold((uint16_t)credits);
	path->rx_count = (uint32_t)rx;
	path->rx_stride = (uint32_t)((sizeof(qp_hdr_t) + path->eager_limit + 63) & ~(size_t)63);
	if (path->rx_stride < 128)
		path->rx_stride = 128;
	path->tx_stride = path->rx_stride;
	path->tx_count = (uint32_t)(cfg->IB_TX_BUFS > 16 ? cfg->IB_TX_BUFS : 16);

	/* the CQ must hold every possible completion: posted receives plus
	 * every signalled send of every QP */
	if (sq < 16)
		sq = 16;
	if (sq > da->max_qp_wr)
		sq = da->max_qp_wr;
	cqe = rx + (int64_t)n * sq + 16;
	if (cqe > da->max_cqe) {
		sq = (da->max_cqe - rx - 16) / n;
		if (sq < 16) {
			ibx_error("device %s: a CQ for %d peers needs %lld entries, the device "
				  "allows %d (lower IBX_IB_RX_BUFS / IBX_IB_SQ_DEPTH)",
				  path->dev->name, n, (long long)(rx + 16 * n + 16), da->max_cqe);
			return IBX_ERR_NO_RESOURCE;
		}
		cqe = rx + (int64_t)n * sq + 16;
	}
	path->sq_depth = (uint32_t)sq;
	path->signal_every = (uint32_t)cfg->IB_SIGNAL_EVERY;
	if (path->signal_every < 1)
		path->signal_every = 1;
	if (path->signal_every > path->sq_depth / 4)
		path->signal_every = path->sq_depth / 4;
	path->inline_max = cfg->IB_INLINE > 0 ? (uint32_t)cfg->IB_INLINE : 0;
	path->ka_ns = cfg->IB_KEEPALIVE > 0 ? (uint64_t)cfg->IB_KEEPALIVE * 1000000ull : 0;
	path->retry_budget_ns = ibx_qp_retry_budget_ns(cfg->IB_TIMEOUT, cfg->IB_RETRY);
	path->ka_dead_ns =
	    path->retry_budget_ns < UINT64_MAX / 2 ? 2 * path->retry_budget_ns : UINT64_MAX;
	if (path->ka_dead_ns < 2000000000ull)
		path->ka_dead_ns = 2000000000ull;
	path->max_sge = da->max_sge < 16 ? (uint32_t)da->max_sge : 16;
	path->max_sge_rd = da->max_sge_rd > 0 ? (uint32_t)da->max_sge_rd : path->max_sge;
	if (path->max_sge_rd > path->max_sge)
		path->max_sge_rd = path->max_sge;
	path->max_msg =
	    path->dev->port_attr.max_msg_sz ? path->dev->port_attr.max_msg_sz : (1ull << 31);
	if (path->max_msg > (1ull << 30))
		path->max_msg = 1ull << 30;
	return IBX_OK;
}

static ibx_status_t path_buffers(qp_path_t *path, int world)
{
	struct ibv_recv_wr *wr;
	uint32_t i;
	ibx_status_t st;

	path->rx_mem = alloc_aligned((size_t)path->rx_count * path->rx_stride);
	path->rx_wr = calloc(path->rx_count, sizeof(*path->rx_wr));
	path->rx_sge = calloc(path->rx_count, sizeof(*path->rx_sge));
	path->rx_free = calloc(path->rx_count, sizeof(*path->rx_free));
	path->tx_mem = alloc_aligned((size_t)path->tx_count * path->tx_stride);
	path->tx_free = calloc(path->tx_count, sizeof(*path->tx_free));
	/* mailbox: [0, world) written by peers, [world, 2 world) our sources */
	path->mbox = alloc_aligned(2 * (size_t)world * sizeof(uint32_t));
	path->amo_count = AMO_SLOTS;
	path->amo = alloc_aligned(AMO_SLOTS * sizeof(uint64_t));
	path->amo_free = calloc(AMO_SLOTS, sizeof(*path->amo_free));
	if (!path->rx_mem || !path->rx_wr || !path->rx_sge || !path->rx_free || !path->tx_mem ||
	    !path->tx_free || !path->mbox || !path->amo || !path->amo_free)
		return IBX_ERR_NO_MEMORY;
	st = ibx_qp_mr_reg(path->dev, path->rx_mem, (size_t)path->rx_count * path->rx_stride,
			   IBV_ACCESS_LOCAL_WRITE, &path->rx_mr);
	if (st == IBX_OK)
		st =
		    ibx_qp_mr_reg(path->dev, path->tx_mem, (size_t)path->tx_count * path->tx_stride,
				  IBV_ACCESS_LOCAL_WRITE, &path->tx_mr);
	if (st == IBX_OK)
		st = ibx_qp_mr_reg(
		    path->dev, (void *)path->mbox, 2 * (size_t)world * sizeof(uint32_t),
		    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &path->mbox_mr);
	if (st == IBX_OK)
		st = ibx_qp_mr_reg(path->dev, path->amo, AMO_SLOTS * sizeof(uint64_t),
				   IBV_ACCESS_LOCAL_WRITE, &path->amo_mr);
	if (st != IBX_OK)
		return st;
	for (i = 0; i < path->tx_count; i++)
		path->tx_free[i] = path->tx_count - 1 - i;
	path->tx_nfree = path->tx_count;
	for (i = 0; i < AMO_SLOTS; i++)
		path->amo_free[i] = AMO_SLOTS - 1 - i;
	path->amo_nfree = AMO_SLOTS;
	for (i = 0; i < path->rx_count; i++) {
		wr = &path->rx_wr[i];
		path->rx_sge[i] =
		    (struct ibv_sge){(uintptr_t)(path->rx_mem + (size_t)i * path->rx_stride),
				     path->rx_stride, path->rx_mr->lkey};
		wr->wr_id = QP_WRID_RX | i;
		wr->sg_list = &path->rx_sge[i];
		wr->num_sge = 1;
		wr->next = i + 1 < path->rx_count ? &path->rx_wr[i + 1] : NULL;
	}
	return ibx_qp_srq_post_list(path->srq, &path->rx_wr[0]);
}

static ibx_status_t qp_path_init(ibx_ctx_t *ctx, const int *ranks, int n, void **state_p)
{
	qp_path_t *path;
	ibx_rcache_params_t rp;
	ibx_qp_init_attr_t ia;
	qp_blob_t *blob = NULL;
	qp_blob_ent_t *ent;
	ibx_qp_addr_t me;
	size_t blen;
	ibx_status_t st;
	int i, flags;

	*state_p = NULL;
	if (n == 0)
		return IBX_OK;
	path = calloc(1, sizeof(*path));
	if (!path)
		return IBX_ERR_NO_MEMORY;
	path->ctx = ctx;
	st = ibx_qp_dev_open(NULL, -1, &path->dev);
	if (st != IBX_OK)
		goto err;
	/* progress polls async events without blocking */
	flags = fcntl(path->dev->ctx->async_fd, F_GETFL);
	if (flags < 0 || fcntl(path->dev->ctx->async_fd, F_SETFL, flags | O_NONBLOCK) < 0)
		ibx_warn("device %s: cannot make the async event fd non-blocking: %s",
			 path->dev->name, strerror(errno));
	/* the cache makes the process fork-safe first: before any registration */
	ibx_rcache_params_default(&rp);
	rp.name = path->dev->name;
	st = ibx_rcache_create_verbs(path->dev->pd, &rp, &path->rcache);
	if (st != IBX_OK)
		goto err;
	st = path_size(path, n);
	if (st != IBX_OK)
		goto err;
	st = ibx_qp_cq_create(
	    path->dev, (int)(path->rx_count + (uint32_t)(n + 1) * path->sq_depth + 16), &path->cq);
	if (st != IBX_OK)
		goto err;
	st = ibx_qp_srq_create(path->dev, path->rx_count, 1, &path->srq);
	if (st != IBX_OK)
		goto err;
	st = path_buffers(path, ctx->size);
	if (st != IBX_OK)
		goto err;

	path->peers = calloc((size_t)n + 1, sizeof(*path->peers));
	path->by_rank = calloc((size_t)ctx->size, sizeof(*path->by_rank));
	path->qpn_mask = pow2_at_least((uint32_t)(n + 1) * 2) - 1;
	path->qpn_hash = calloc(path->qpn_mask + 1, sizeof(*path->qpn_hash));
	if (!path->peers || !path->by_rank || !path->qpn_hash) {
		st = IBX_ERR_NO_MEMORY;
		goto err;
	}
	ia = IBX_QP_INIT_ATTR_DEFAULT(path->cq);
	ia.srq = path->srq;
	ia.max_send_wr = path->sq_depth;
	ia.max_send_sge = path->max_sge;
	ia.max_inline = path->inline_max;
	path->self = &path->peers[n];
	path->self_ipeer.rank = ctx->rank;
	path->self_ipeer.local = true;
	path->nic_ipeers = calloc((size_t)n + 1, sizeof(*path->nic_ipeers));
	if (!path->nic_ipeers) {
		st = IBX_ERR_NO_MEMORY;
		goto err;
	}
	for (i = 0; i <= n; i++) {
		qp_peer_t *p = &path->peers[i];
		uint32_t h;

		p->path = path;
		p->rank = i < n ? ranks[i] : ctx->rank;
		p->idx = i;
		p->ipeer = i < n ? &ctx->peers[ranks[i]] : &path->self_ipeer;
		if (i < n && ctx->nic_local && ctx->peers[ranks[i]].local) {
			/* shm carries its messages: the QP is for atomics only */
			p->ipeer = &path->nic_ipeers[i];
			p->ipeer->rank = ranks[i];
			p->ipeer->local = true;
		}
		st = ibx_qp_create(path->dev, &ia, &p->qp);
		if (st != IBX_OK)
			goto err;
		p->sq_max = p->qp->max_send_wr;
		p->sq_mask = pow2_at_least(p->sq_max) - 1;
		p->sqe = calloc(p->sq_mask + 1, sizeof(*p->sqe));
		if (!p->sqe) {
			st = IBX_ERR_NO_MEMORY;
			goto err;
		}
		if (p->qp->max_send_sge < path->max_sge)
			path->max_sge = p->qp->max_send_sge;
		if (i < n)
			path->by_rank[p->rank] = p;
		for (h = (p->qp->qpn * 2654435761u) & path->qpn_mask; path->qpn_hash[h];
		     h = (h + 1) & path->qpn_mask)
			;
		path->qpn_hash[h] = p;
	}
	if (path->max_sge_rd > path->max_sge)
		path->max_sge_rd = path->max_sge;

	blen = sizeof(*blob) + (size_t)ctx->size * sizeof(*ent);
	blob = calloc(1, blen);
	if (!blob) {
		st = IBX_ERR_NO_MEMORY;
		goto err;
	}
	blob->magic = BLOB_MAGIC;
	blob->version = BLOB_VERSION;
	blob->size = ctx->size;
	blob->rank = ctx->rank;
	blob->mbox_addr = (uintptr_t)path->mbox;
	blob->mbox_rkey = path->mbox_mr->rkey;
	blob->credits = path->credits;
	blob->eager_limit = path->eager_limit;
	blob->pid = (int32_t)getpid();
	ibx_qp_local_addr(path->peers[0].qp, &me);
	me.qpn = me.psn = 0;
	ibx_qp_addr_pack(&me, blob->addr);
	ent = (qp_blob_ent_t *)(blob + 1);
	for (i = 0; i < n; i++) {
		ent[path->peers[i].rank].qpn = path->peers[i].qp->qpn;
		ent[path->peers[i].rank].psn = path->peers[i].qp->psn;
	}
	st = ibx_boot_put(ctx->boot, BOOT_KEY, blob, blen);
	free(blob);
	if (st != IBX_OK)
		goto err;
	{
		char desc[160];

		ibx_qp_dev_describe(path->dev, desc, sizeof(desc));
		ibx_info("verbs path: %s, %d peer(s), %u credits each, SRQ %u x %u bytes, "
			 "SQ %u, inline %u",
			 desc, n, path->credits, path->rx_count, path->rx_stride, path->sq_depth,
			 path->peers[0].qp->max_inline);
	}
	path->npeers = n + 1;
	*state_p = path;
	return IBX_OK;

err:
	path->npeers = path->peers ? n + 1 : 0;
	path_free(path);
	return st;
}

static ibx_status_t peer_connect(qp_path_t *path, qp_peer_t *p)
{
	ibx_ctx_t *ctx = path->ctx;
	const qp_blob_t *blob;
	const qp_blob_ent_t *ent;
	ibx_qp_addr_t remote;
	void *data = NULL;
	size_t len = 0;
	ibx_status_t st;

	st = ibx_boot_get_known(ctx->boot, p->rank, BOOT_KEY, &data, &len);
	if (st != IBX_OK) {
		ibx_error("peer %d: no verbs address record (%s)", p->rank, ibx_status_str(st));
		return st;
	}
	blob = data;
	st = IBX_ERR_CORRUPT;
	if (len < sizeof(*blob) || blob->magic != BLOB_MAGIC || blob->version != BLOB_VERSION ||
	    blob->size != ctx->size || blob->rank != p->rank ||
	    len != sizeof(*blob) + (size_t)ctx->size * sizeof(*ent) || blob->credits == 0) {
		ibx_error("peer %d: malformed verbs address record (%zu bytes)", p->rank, len);
		goto out;
	}
	if (ibx_qp_addr_unpack(blob->addr, &remote) != IBX_OK) {
		ibx_error("peer %d: malformed verbs address", p->rank);
		goto out;
	}
	ent = (const qp_blob_ent_t *)(blob + 1);
	if (ent[ctx->rank].qpn == 0) {
		ibx_error("peer %d created no QP for rank %d: the two disagree on the path",
			  p->rank, ctx->rank);
		st = IBX_ERR_UNREACHABLE;
		goto out;
	}
	remote.qpn = ent[ctx->rank].qpn & 0xffffff;
	remote.psn = ent[ctx->rank].psn & 0xffffff;
	st = ibx_qp_connect(p->qp, &remote, NULL);
	if (st != IBX_OK) {
		ibx_error("peer %d: connecting QP 0x%x to QP 0x%x failed", p->rank, p->qp->qpn,
			  remote.qpn);
		goto out;
	}
	p->tx_credits_max = blob->credits;
	p->eager_max =
	    blob->eager_limit < path->eager_limit ? blob->eager_limit : path->eager_limit;
	/* the latency path: one inline SGE, WR fields filled once */
	p->fast_max = p->qp->max_inline < path->inline_max ? p->qp->max_inline : path->inline_max;
	p->fast_max = p->fast_max > sizeof(qp_hdr_t) ? p->fast_max - (uint32_t)sizeof(qp_hdr_t) : 0;
	if (p->fast_max > QP_FAST_MAX)
		p->fast_max = QP_FAST_MAX;
	if (p->fast_max > p->eager_max)
		p->fast_max = p->eager_max;
	memset(&p->fast_wr, 0, sizeof(p->fast_wr));
	p->fast_wr.opcode = IBV_WR_SEND;
	p->fast_wr.sg_list = &p->fast_sge;
	p->fast_wr.num_sge = 1;
	p->fast_sge.lkey = 0;
	p->rmbox_addr = blob->mbox_addr + (uint64_t)ctx->rank * sizeof(uint32_t);
	p->rmbox_rkey = blob->mbox_rkey;
	p->ipeer->ops = &ibx_qp_path_ops;
	p->ipeer->path = p;
	/* a node-local peer reached through the NIC: its death is seen by its
	 * pid, not only after the QP's retries (which some devices never end
	 * for a peer whose QP vanished) */
	if (p->ipeer->local && blob->pid > 0) {
		p->pid = blob->pid;
		path->live_ns = (uint64_t)(ibx_core_config()->PEER_CHECK_MS > 0
					       ? ibx_core_config()->PEER_CHECK_MS
					       : 200) *
				1000000ull;
	}
	ibx_debug("peer %d: QP 0x%x -> QP 0x%x, %u credits, eager <= %u", p->rank, p->qp->qpn,
		  remote.qpn, p->tx_credits_max, p->eager_max);
	st = IBX_OK;
out:
	free(data);
	return st;
}

/* The loopback QP: connected to itself, it carries only one-sided
 * operations on our own memory (no messages, so no credits are used). */
static ibx_status_t self_connect(qp_path_t *path, qp_peer_t *p)
{
	ibx_qp_addr_t me;
	ibx_status_t st;

	ibx_qp_local_addr(p->qp, &me);
	st = ibx_qp_connect(p->qp, &me, NULL);
	if (st != IBX_OK) {
		ibx_error("rank %d: connecting the loopback QP 0x%x failed", p->rank, p->qp->qpn);
		return st;
	}
	p->tx_credits_max = path->credits;
	p->eager_max = path->eager_limit;
	p->fast_max = 0;
	p->rmbox_addr = (uintptr_t)path->mbox + (uint64_t)p->rank * sizeof(uint32_t);
	p->rmbox_rkey = path->mbox_mr->rkey;
	p->ipeer->ops = &ibx_qp_path_ops;
	p->ipeer->path = p;
	return IBX_OK;
}

static ibx_status_t qp_path_connect(ibx_ctx_t *ctx, void *state)
{
	qp_path_t *path = state;
	ibx_status_t st;

	if (!path)
		return IBX_OK;
	for (int i = 0; i < path->npeers; i++) {
		qp_peer_t *p = &path->peers[i];

		st = p == path->self ? self_connect(path, p) : peer_connect(path, p);
		if (st != IBX_OK)
			return st;
	}
	return IBX_OK;
}

static ibx_status_t qp_path_ready(ibx_ctx_t *ctx, void *state)
{
	return IBX_OK;
}

static bool qp_path_busy(ibx_ctx_t *ctx, void *state)
{
	qp_path_t *path = state;
	bool busy = false;

	if (!path)
		return false;
	for (int i = 0; i < path->npeers; i++) {
		qp_peer_t *p = &path->peers[i];

		if (p->error != IBX_OK)
			continue;
		/* a peer may wait for credits we still owe it */
		if (p->rx_done != p->rx_told)
			ibx_qp_post_flush_wqe(p);
		if (p->pend_tag.head || p->pend_head || p->rndv_sends.head) {
			busy = true;
			continue;
		}
		if (p->sq_head != p->sq_tail) {
			/* unsignalled WQEs complete with a signalled one */
			if (p->sq_last_sig != p->sq_head)
				ibx_qp_post_flush_wqe(p);
			busy = true;
		}
	}
	return busy;
}

static void qp_path_fini(ibx_ctx_t *ctx, void *state)
{
	qp_path_t *path = state;

	if (!path)
		return;
	ibx_info(
	    "verbs path: %llu messages sent, %llu received, %llu explicit credit returns, "
	    "%llu flush WQEs (%llu of them keepalive probes), %llu tag sends queued (for a credit, "
	    "a "
	    "send slot or a bounce buffer)",
	    (unsigned long long)path->stats.msgs_sent, (unsigned long long)path->stats.msgs_recvd,
	    (unsigned long long)path->stats.credit_writes,
	    (unsigned long long)path->stats.flush_wqes, (unsigned long long)path->stats.keepalives,
	    (unsigned long long)path->stats.sends_queued);
	for (int i = 0; i < path->npeers; i++) {
		qp_peer_t *p = &path->peers[i];

		if (p->ipeer && p->ipeer->path == p) {
			p->ipeer->ops = NULL;
			p->ipeer->path = NULL;
		}
	}
	path_free(path);
}

static const char *qp_path_device(void *state)
{
	qp_path_t *path = state;

	return path && path->dev ? path->dev->name : NULL;
}

const ibx_path_module_t ibx_qp_path_module = {
    .name = "verbs",
    .init = qp_path_init,
    .connect = qp_path_connect,
    .ready = qp_path_ready,
    .progress = ibx_qp_path_progress,
    .busy = qp_path_busy,
    .fini = qp_path_fini,
    .device = qp_path_device,
};
