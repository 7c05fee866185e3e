/*
 * shm_liveness.c — lost peers of the node-local path. Every
 * IBX_PEER_CHECK_MS (looked at on the progress passes that read the clock,
 * shm_progress.c) the peers' pids are checked (kill(pid, 0), and not a
 * zombie in /proc/<pid>/stat): what a dead peer published is delivered
 * (drain_published), then everything pending with it fails with
 * IBX_ERR_UNREACHABLE; so does one the launcher reports gone (the path
 * op "lose"). A peer that writes nonsense into its ring or pipe,
 * or one we cannot queue a control packet for, is failed the same way.
 */
#include "shm_path.h"

static void fail_queue(ibx_req_queue_t *q, ibx_status_t why)
{
	ibx_request_t *r;

	while ((r = ibx_rq_first(q))) {
		ibx_rq_remove(q, r);
		ibx_req_complete(r, why);
	}
}

void ibx_shm_peer_fail(shm_state_t *st, shm_peer_t *p, ibx_status_t why)
{
	ibx_request_t *r;

	if (p->failed)
		return;
	p->failed = true;
	ibx_error("shm: lost rank %d (pid %d): %s", p->rank, (int)p->pid, ibx_status_str(why));
	ibx_shm_active_remove(p);
	if (p->peer->error == IBX_OK)
		p->peer->error = why;
	p->ctrl_count = 0;
	fail_queue(&p->pending, why);
	fail_queue(&p->rndv_tx, why);
	fail_queue(&p->pipe_tx, why);
	fail_queue(&p->pipe_rx, why);
	while ((r = ibx_rq_first(&p->cma_rx))) {
		ibx_shm_cma_rx_drop(p, r);
		ibx_req_complete(r, why);
	}
	ibx_shm_update_work(p);
	ibx_tag_peer_failed(st->ctx, p->rank, why);
}

/* What a peer published before it died is still good: the packets in its
 * ring, and the chunks of matched messages it pushed into our pipe (its
 * send completed once the last chunk was in, and it may have exited right
 * after; seen under load, when the peer check of a progress pass came
 * between the pass's pipe work and our next one). */
static void drain_published(shm_state_t *st, shm_peer_t *p)
{
	int n;

	do {
		n = ibx_shm_poll_peer(st, p);
		if (!p->failed)
			n += ibx_shm_rndv_pipe_rx_work(st, p);
	} while (n > 0 && !p->failed);
}

void ibx_shm_check_peers(shm_state_t *st)
{
	uint64_t now = ibx_time_ns();

	if (now < st->next_check_ns)
		return;
	st->next_check_ns = now + st->check_ns;
	for (int i = 0; i < st->npeers; i++) {
		shm_peer_t *p = &st->peers[i];

		if (p->failed || ibx_pid_alive(p->pid))
			continue;
		drain_published(st, p);
		ibx_shm_peer_fail(st, p, IBX_ERR_UNREACHABLE);
	}
}

void ibx_shm_peer_lose(ibx_peer_t *peer, const char *why)
{
	shm_peer_t *p = peer->path;

	if (p->failed)
		return;
	ibx_error("shm: rank %d (pid %d): %s", p->rank, (int)p->pid, why);
	drain_published(p->st, p);
	ibx_shm_peer_fail(p->st, p, IBX_ERR_UNREACHABLE);
}
