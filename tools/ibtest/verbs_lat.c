/*
 * verbs_lat.c — the latency loops of ibtest's perftest-class commands, with
 * perftest's timing: a time stamp at every post, one sample per pair of
 * consecutive posts, halved for the ping-pongs (write, send) and not for
 * read and atomic, which are one full round trip per iteration.
 *
 * write_lat — both sides poll the last byte of their target region; each
 * write carries the iteration number in its last byte (perftest's scheme,
 * no completion is needed on the receiving side):
 *
 *     client                                      server
 *     t[i]  last byte := i+1, RDMA write ------>  wait target[size-1] == i+1
 *           poll send CQ                          t[i]  last byte := i+1, write
 *     wait target[size-1] == i+1  <-------------  poll send CQ
 *
 * send_lat — the same ping-pong with send/recv; receives are pre-posted
 * (-r, 512) and replenished only as far as the iterations need, so that none
 * is left behind for the next size.
 *
 * read_lat, atomic_lat — only the client works: post one signalled READ
 * (or 8-byte fetch-and-add / compare-and-swap) and poll its completion;
 * the server waits on the side channel.
 */
#include "verbs_perf.h"

#include <stdlib.h>

static ibx_status_t poll_one(vp_job_t *j, ibx_qp_cq_t *cq, struct ibv_wc *wc, const char *what)
{
	unsigned spins = 0;
	int n;

	while ((n = ibx_qp_cq_poll(cq, wc, 1)) == 0) {
		ibx_status_t st = vp_alive(j, &spins);

		if (st != IBX_OK)
			return st;
	}
	if (n < 0) {
		vp_err(j, "ibv_poll_cq failed while waiting for a %s completion", what);
		return IBX_ERR_IO;
	}
	return vp_wc_check(j, wc, what);
}

static ibx_status_t wait_byte(vp_job_t *j, volatile const char *p, char want)
{
	unsigned spins = 0;

	while (*p != want) {
		ibx_status_t st = vp_alive(j, &spins);

		if (st != IBX_OK)
			return st;
	}
	return IBX_OK;
}

static ibx_status_t lat_write(vp_job_t *j, size_t size, uint64_t *t)
{
	vp_conn_t *c = &j->conns[0];
	volatile const char *poll_buf = c->target + size - 1;
	char *post_buf = c->local + size - 1;
	struct ibv_sge sge = {(uintptr_t)c->local, (uint32_t)size, j->mr->lkey};
	struct ibv_send_wr wr;
	struct ibv_wc wc;
	unsigned iters = j->o->iters;
	ibx_status_t st;

	ibx_qp_wr_write(&wr, &sge, 1, c->peer.addr, c->peer.rkey, 0,
			IBX_QP_SIGNALED | vp_inline_flag(j, size));
	for (unsigned i = 0; i < iters; i++) {
		/* the client opens every round trip, the server answers it */
		if (j->server || i > 0) {
			st = wait_byte(j, poll_buf, (char)(j->server ? i + 1 : i));
			if (st != IBX_OK)
				return st;
		}
		t[i] = ibtest_ticks();
		*post_buf = (char)(i + 1);
		st = ibx_qp_post_list(c->qp, &wr, NULL);
		if (st != IBX_OK)
			return st;
		st = poll_one(j, j->scq, &wc, "RDMA WRITE");
		if (st != IBX_OK)
			return st;
	}
	return j->server ? IBX_OK : wait_byte(j, poll_buf, (char)iters);
}

static ibx_status_t recv_one(vp_job_t *j, vp_conn_t *c, size_t size, uint64_t *rcnt)
{
	struct ibv_wc wc;
	ibx_status_t st = poll_one(j, j->rcq, &wc, "RECV");
	uint64_t upto;

	if (st != IBX_OK)
		return st;
	if (wc.byte_len != size) {
		vp_err(j, "received %u bytes, expected %zu", wc.byte_len, size);
		return IBX_ERR_CORRUPT;
	}
	++*rcnt;
	upto = *rcnt + j->o->rx_depth;
	return vp_post_recvs(j, c, size, upto < j->o->iters ? upto : j->o->iters);
}

static ibx_status_t lat_send(vp_job_t *j, size_t size, uint64_t *t)
{
	vp_conn_t *c = &j->conns[0];
	struct ibv_sge sge = {(uintptr_t)c->local, (uint32_t)size, j->mr->lkey};
	struct ibv_send_wr wr;
	struct ibv_wc wc;
	unsigned iters = j->o->iters;
	uint64_t rcnt = 0;
	ibx_status_t st;

	ibx_qp_wr_send(&wr, &sge, 1, 0, IBX_QP_SIGNALED | vp_inline_flag(j, size));
	for (unsigned i = 0; i < iters; i++) {
		if (j->server || i > 0) {
			st = recv_one(j, c, size, &rcnt);
			if (st != IBX_OK)
				return st;
		}
		t[i] = ibtest_ticks();
		st = ibx_qp_post_list(c->qp, &wr, NULL);
		if (st != IBX_OK)
			return st;
		st = poll_one(j, j->scq, &wc, "SEND");
		if (st != IBX_OK)
			return st;
	}
	return j->server ? IBX_OK : recv_one(j, c, size, &rcnt);
}

static ibx_status_t lat_rdma(vp_job_t *j, size_t size, uint64_t *t)
{
	vp_conn_t *c = &j->conns[0];
	struct ibv_sge sge = {(uintptr_t)c->local, (uint32_t)size, j->mr->lkey};
	struct ibv_send_wr wr;
	struct ibv_wc wc;
	const char *what;
	ibx_status_t st;

	if (j->o->test->verb == VP_READ) {
		ibx_qp_wr_read(&wr, &sge, 1, c->peer.addr, c->peer.rkey, 0, IBX_QP_SIGNALED);
		what = "RDMA READ";
	} else if (j->o->atomic == VP_FETCH_AND_ADD) {
		ibx_qp_wr_fetch_add(&wr, &sge, c->peer.addr, c->peer.rkey, 1, 0, IBX_QP_SIGNALED);
		what = "ATOMIC FETCH AND ADD";
	} else {
		ibx_qp_wr_cswap(&wr, &sge, c->peer.addr, c->peer.rkey, 0, 1, 0, IBX_QP_SIGNALED);
		what = "ATOMIC COMPARE AND SWAP";
	}
	for (unsigned i = 0; i < j->o->iters; i++) {
		t[i] = ibtest_ticks();
		st = ibx_qp_post_list(c->qp, &wr, NULL);
		if (st != IBX_OK)
			return st;
		st = poll_one(j, j->scq, &wc, what);
		if (st != IBX_OK)
			return st;
	}
	return IBX_OK;
}

ibx_status_t vp_lat_run(vp_job_t *j, size_t size, double *samples, size_t *nsamples_p)
{
	const vp_opts_t *o = j->o;
	vp_conn_t *c = &j->conns[0];
	bool passive = j->server && (o->test->verb == VP_READ || o->test->verb == VP_ATOMIC);
	/* perftest's rtt factor: half a round trip per sample for ping-pongs */
	double div = o->test->verb == VP_WRITE || o->test->verb == VP_SEND ? 2000.0 : 1000.0;
	uint64_t *t = NULL;
	ibx_status_t st;

	*nsamples_p = 0;
	if (!passive) {
		t = malloc((size_t)o->iters * sizeof(*t));
		if (!t)
			return IBX_ERR_NO_MEMORY;
	}
	/* a stale poll byte or receive of the previous size must not count */
	if (o->test->verb == VP_WRITE)
		memset(c->target, 0, size);
	c->rposted = 0;
	st = IBX_OK;
	if (o->test->verb == VP_SEND)
		st = vp_post_recvs(j, c, size, o->rx_depth < o->iters ? o->rx_depth : o->iters);
	if (st == IBX_OK)
		st = vp_barrier(j);
	if (st == IBX_OK && !passive) {
		switch (o->test->verb) {
		case VP_WRITE: st = lat_write(j, size, t); break;
		case VP_SEND: st = lat_send(j, size, t); break;
		case VP_READ:
		case VP_ATOMIC: st = lat_rdma(j, size, t); break;
		}
	}
	if (st == IBX_OK)
		st = vp_barrier(j);
	if (st == IBX_OK && !passive) {
		for (unsigned i = 0; i + 1 < o->iters; i++)
			samples[i] = ibtest_ticks_to_ns(t[i + 1] - t[i]) / div;
		*nsamples_p = o->iters - 1;
	}
	free(t);
	return st;
}
