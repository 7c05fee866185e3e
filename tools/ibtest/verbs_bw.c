/*
 * verbs_bw.c — the bandwidth loops of ibtest's perftest-class commands.
 *
 * The client keeps a window of at most -t (128) WRs per QP in flight on
 * each of -q QPs, posting -l WRs at a time as one linked list (one
 * ibv_post_send), and asks for a completion only every -Q WRs (CQ
 * moderation; the last WR of a size is always signalled). A completion
 * carries in its wr_id how many WRs it retires, so the window and the
 * counts are exact.
 *
 *     client                                  server
 *     post window, poll, post ...  --------->  (write/read/atomic: nothing
 *     RESULT {peak, avg, rate} ------------->   to do; prints the client's
 *                                              figures, as perftest's server)
 *                                              (send: receives kept posted,
 *                                              its own receive-side figures)
 *
 * Figures, as perftest computes them: BW average = bytes of all messages /
 * (last completion - first post); MsgRate = messages / the same time; BW
 * peak = the best rate over any span from a post to a later completion,
 * (messages from that post to that completion) x size / (time between).
 * The send_bw server has no peak (0.00, as perftest) and times from its
 * first receive to its last.
 *
 * Small messages (<= 2 KiB, no post list) cycle through a page of the local
 * and remote buffers by cache line, as perftest's do.
 */
#include "verbs_perf.h"

#include <stdlib.h>

/* Above this many (post, completion) pairs the peak search samples the
 * posts instead of trying every one. */
#define VP_PEAK_PAIRS_MAX 40000000ull
#define VP_RESULT_LEN	  32

struct vp_bw_state {
	uint64_t *post_t, *post_n; /* per post call: time, messages posted before */
	uint64_t *done_t, *done_n; /* per completion: time, messages completed after */
	size_t nposts, ndone;
	struct ibv_send_wr *wrs; /* num_qps lists of post_list WRs */
	struct ibv_sge *sges;
};

ibx_status_t vp_bw_init(vp_job_t *j, uint64_t max_msgs)
{
	size_t nwr = (size_t)j->o->num_qps * j->o->post_list;
	struct vp_bw_state *b = calloc(1, sizeof(*b));

	if (!b)
		return IBX_ERR_NO_MEMORY;
	j->bw = b;
	b->post_t = malloc(max_msgs * sizeof(uint64_t));
	b->post_n = malloc(max_msgs * sizeof(uint64_t));
	b->done_t = malloc(max_msgs * sizeof(uint64_t));
	b->done_n = malloc(max_msgs * sizeof(uint64_t));
	b->wrs = calloc(nwr, sizeof(*b->wrs));
	b->sges = calloc(nwr, sizeof(*b->sges));
	if (!b->post_t || !b->post_n || !b->done_t || !b->done_n || !b->wrs || !b->sges) {
		vp_err(j, "out of memory for %llu time stamps", (unsigned long long)max_msgs);
		return IBX_ERR_NO_MEMORY;
	}
	return IBX_OK;
}

void vp_bw_fini(vp_job_t *j)
{
	struct vp_bw_state *b = j->bw;

	if (!b)
		return;
	free(b->post_t);
	free(b->post_n);
	free(b->done_t);
	free(b->done_n);
	free(b->wrs);
	free(b->sges);
	free(b);
	j->bw = NULL;
}

/* ---- client ---------------------------------------------------------------- */

/* Builds QP @q's list of post_list WRs for messages of @size. */
static void bw_build(vp_job_t *j, unsigned q, size_t size)
{
	const vp_opts_t *o = j->o;
	vp_conn_t *c = &j->conns[q];
	unsigned pl = o->post_list;
	bool cycle = size <= VP_CYCLE_BUFFER / 2;
	size_t step = vp_cycle_step(size), slots = cycle ? VP_CYCLE_BUFFER / step : 1;

	for (unsigned k = 0; k < pl; k++) {
		struct ibv_send_wr *wr = &j->bw->wrs[q * pl + k];
		struct ibv_sge *sge = &j->bw->sges[q * pl + k];
		size_t off = (k % slots) * step;
		uint64_t raddr = c->peer.addr + off;

		sge->addr = (uintptr_t)(c->local + off);
		sge->length = (uint32_t)size;
		sge->lkey = j->mr->lkey;
		switch (o->test->verb) {
		case VP_WRITE:
			ibx_qp_wr_write(wr, sge, 1, raddr, c->peer.rkey, 0,
					vp_inline_flag(j, size));
			break;
		case VP_READ: ibx_qp_wr_read(wr, sge, 1, raddr, c->peer.rkey, 0, 0); break;
		case VP_SEND: ibx_qp_wr_send(wr, sge, 1, 0, vp_inline_flag(j, size)); break;
		case VP_ATOMIC:
			if (o->atomic == VP_FETCH_AND_ADD)
				ibx_qp_wr_fetch_add(wr, sge, raddr, c->peer.rkey, 1, 0, 0);
			else
				ibx_qp_wr_cswap(wr, sge, raddr, c->peer.rkey, 0, 1, 0, 0);
			break;
		}
		wr->next = k + 1 < pl ? wr + 1 : NULL;
	}
	c->scnt = c->ccnt = c->sig_end = 0;
}

/* Posts QP @q's next list: moves small messages to their next slot, asks
 * for a completion every cq_mod-th WR and on the last one, and records in
 * each signalled WR's wr_id how many WRs its completion retires. */
static ibx_status_t bw_post(vp_job_t *j, unsigned q, size_t size)
{
	const vp_opts_t *o = j->o;
	vp_conn_t *c = &j->conns[q];
	unsigned pl = o->post_list;
	struct ibv_send_wr *first = &j->bw->wrs[q * pl];

	if (pl == 1 && size <= VP_CYCLE_BUFFER / 2) {
		size_t step = vp_cycle_step(size);
		size_t off = (size_t)(c->scnt % (VP_CYCLE_BUFFER / step)) * step;

		first->sg_list->addr = (uintptr_t)(c->local + off);
		if (o->test->verb == VP_ATOMIC)
			first->wr.atomic.remote_addr = c->peer.addr + off;
		else if (o->test->verb != VP_SEND)
			first->wr.rdma.remote_addr = c->peer.addr + off;
	}
	for (unsigned k = 0; k < pl; k++) {
		struct ibv_send_wr *wr = first + k;
		uint64_t n = c->scnt + k;

		if (n % o->cq_mod == o->cq_mod - 1 || n == (uint64_t)o->iters - 1) {
			wr->send_flags |= IBV_SEND_SIGNALED;
			wr->wr_id = ((uint64_t)q << 32) | (n + 1 - c->sig_end);
			c->sig_end = n + 1;
		} else {
			wr->send_flags &= ~(unsigned)IBV_SEND_SIGNALED;
		}
	}
	return ibx_qp_post_list(c->qp, first, NULL);
}

static ibx_status_t bw_client(vp_job_t *j, size_t size, vp_bw_result_t *r)
{
	const vp_opts_t *o = j->o;
	struct vp_bw_state *b = j->bw;
	uint64_t tot = (uint64_t)o->iters * o->num_qps, tots = 0, totc = 0;
	struct ibv_wc wc[VP_POLL_BATCH];
	unsigned spins = 0;
	ibx_status_t st;

	for (unsigned q = 0; q < o->num_qps; q++)
		bw_build(j, q, size);
	b->nposts = b->ndone = 0;
	st = vp_barrier(j);
	if (st != IBX_OK)
		return st;

	while (totc < tot) {
		for (unsigned q = 0; q < o->num_qps; q++) {
			vp_conn_t *c = &j->conns[q];

			while (c->scnt < o->iters && c->scnt - c->ccnt < o->tx_depth) {
				b->post_t[b->nposts] = ibtest_ticks();
				b->post_n[b->nposts++] = tots;
				st = bw_post(j, q, size);
				if (st != IBX_OK)
					return st;
				c->scnt += o->post_list;
				tots += o->post_list;
			}
		}
		int n = ibx_qp_cq_poll(j->scq, wc, VP_POLL_BATCH);

		if (n < 0) {
			vp_err(j, "ibv_poll_cq failed");
			return IBX_ERR_IO;
		}
		if (n == 0) {
			st = vp_alive(j, &spins);
			if (st != IBX_OK)
				return st;
			continue;
		}
		uint64_t now = ibtest_ticks();

		for (int i = 0; i < n; i++) {
			uint64_t covered = wc[i].wr_id & 0xffffffffu;

			st = vp_wc_check(j, &wc[i], ibx_qp_wc_opcode_str(wc[i].opcode));
			if (st != IBX_OK)
				return st;
			j->conns[wc[i].wr_id >> 32].ccnt += covered;
			totc += covered;
			b->done_t[b->ndone] = now;
			b->done_n[b->ndone++] = totc;
		}
	}

	/* the best rate from any post to any later completion (perftest's peak) */
	double best = 0.0;
	size_t stride = 1;

	if ((unsigned long long)b->nposts * b->ndone > VP_PEAK_PAIRS_MAX)
		stride = (size_t)((unsigned long long)b->nposts * b->ndone / VP_PEAK_PAIRS_MAX) + 1;
	for (size_t p = 0; p < b->nposts; p += stride) {
		for (size_t k = 0; k < b->ndone; k++) {
			if (b->done_n[k] <= b->post_n[p] || b->done_t[k] <= b->post_t[p])
				continue;
			double rate = (double)(b->done_n[k] - b->post_n[p]) /
				      ibtest_ticks_to_ns(b->done_t[k] - b->post_t[p]);
			if (rate > best)
				best = rate;
		}
	}
	double secs = ibtest_ticks_to_ns(b->done_t[b->ndone - 1] - b->post_t[0]) * 1e-9;

	r->msgs = tot;
	r->peak_MBps = best * 1e9 * (double)size / 1048576.0;
	r->avg_MBps = (double)tot * (double)size / secs / 1048576.0;
	r->msg_rate_Mpps = (double)tot / secs / 1e6;
	return IBX_OK;
}

/* ---- server ------------------------------------------------------------------ */

/* send_bw: keeps receives posted and times them from the first to the last. */
static ibx_status_t bw_server_recv(vp_job_t *j, size_t size, vp_bw_result_t *r)
{
	const vp_opts_t *o = j->o;
	uint64_t tot = (uint64_t)o->iters * o->num_qps, totr = 0, t0 = 0, t1;
	struct ibv_wc wc[VP_POLL_BATCH];
	unsigned spins = 0;
	ibx_status_t st;

	for (unsigned q = 0; q < o->num_qps; q++) {
		vp_conn_t *c = &j->conns[q];

		c->rposted = c->rcnt = 0;
		st = vp_post_recvs(j, c, size, o->rx_depth < o->iters ? o->rx_depth : o->iters);
		if (st != IBX_OK)
			return st;
	}
	st = vp_barrier(j);
	if (st != IBX_OK)
		return st;
	while (totr < tot) {
		int n = ibx_qp_cq_poll(j->rcq, wc, VP_POLL_BATCH);

		if (n < 0) {
			vp_err(j, "ibv_poll_cq failed");
			return IBX_ERR_IO;
		}
		if (n == 0) {
			st = vp_alive(j, &spins);
			if (st != IBX_OK)
				return st;
			continue;
		}
		if (totr == 0)
			t0 = ibtest_ticks();
		for (int i = 0; i < n; i++) {
			vp_conn_t *c = &j->conns[wc[i].wr_id];
			uint64_t upto;

			st = vp_wc_check(j, &wc[i], "RECV");
			if (st != IBX_OK)
				return st;
			if (wc[i].byte_len != size) {
				vp_err(j, "received %u bytes, expected %zu", wc[i].byte_len, size);
				return IBX_ERR_CORRUPT;
			}
			c->rcnt++;
			totr++;
			upto = c->rcnt + o->rx_depth;
			st = vp_post_recvs(j, c, size, upto < o->iters ? upto : o->iters);
			if (st != IBX_OK)
				return st;
		}
	}
	t1 = ibtest_ticks();
	double secs = ibtest_ticks_to_ns(t1 > t0 ? t1 - t0 : 1) * 1e-9;

	r->msgs = tot;
	r->peak_MBps = 0.0;
	r->avg_MBps = (double)tot * (double)size / secs / 1048576.0;
	r->msg_rate_Mpps = (double)tot / secs / 1e6;
	return IBX_OK;
}

static void result_pack(const vp_bw_result_t *r, uint8_t out[VP_RESULT_LEN])
{
	const double v[3] = {r->peak_MBps, r->avg_MBps, r->msg_rate_Mpps};
	uint64_t bits;

	for (int i = 0; i < 3; i++) {
		memcpy(&bits, &v[i], 8);
		vp_put_be64(out + 8 * i, bits);
	}
	vp_put_be64(out + 24, r->msgs);
}

static void result_unpack(const uint8_t in[VP_RESULT_LEN], vp_bw_result_t *r)
{
	double v[3];
	uint64_t bits;

	for (int i = 0; i < 3; i++) {
		bits = vp_get_be64(in + 8 * i);
		memcpy(&v[i], &bits, 8);
	}
	r->peak_MBps = v[0];
	r->avg_MBps = v[1];
	r->msg_rate_Mpps = v[2];
	r->msgs = vp_get_be64(in + 24);
}

ibx_status_t vp_bw_run(vp_job_t *j, size_t size, vp_bw_result_t *res_p)
{
	uint8_t msg[VP_RESULT_LEN];
	vp_bw_result_t mine = {0}, theirs = {0};
	ibx_status_t st;

	if (!j->server) {
		st = bw_client(j, size, &mine);
		if (st != IBX_OK)
			return st;
		result_pack(&mine, msg);
		st = vp_ctl_send(j, msg, sizeof(msg));
		if (st == IBX_OK)
			*res_p = mine;
		return st;
	}
	if (j->o->test->verb == VP_SEND) {
		st = bw_server_recv(j, size, &mine);
	} else {
		/* the client's operations need nothing from us but the buffer */
		st = vp_barrier(j);
	}
	if (st == IBX_OK)
		st = vp_ctl_recv(j, msg, sizeof(msg));
	if (st != IBX_OK)
		return st;
	result_unpack(msg, &theirs);
	if (theirs.msgs != (uint64_t)j->o->iters * j->o->num_qps) {
		vp_err(j, "the client reported %llu messages, expected %llu",
		       (unsigned long long)theirs.msgs,
		       (unsigned long long)j->o->iters * j->o->num_qps);
		return IBX_ERR_CORRUPT;
	}
	*res_p = j->o->test->verb == VP_SEND ? mine : theirs;
	return IBX_OK;
}
