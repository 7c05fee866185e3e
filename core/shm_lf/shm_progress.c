/*
 * shm_progress.c — progress of the node-local path: which rings to poll
 * (the active and idle sets of senders), the queued work of each peer
 * (control packets and sends waiting for ring room, the pipes of matched
 * rendezvous), and when to look at the peers' liveness.
 *
 * Polling ([Gropp97] §9.1): a receiver checks the rings of its active senders
 * first, on every pass; a sender that stayed silent for SHM_IDLE_DEMOTE
 * passes drops to the idle set, whose rings are checked only when the
 * active ones had nothing (so a waiting rank still sees every ring on every
 * pass) or every (SHM_IDLE_SCAN_MASK+1)th pass under traffic, and comes
 * back the moment a packet is found there or we send to it.
 * Every SHM_CLOCK_MASK+1 passes the clock is read for the liveness check
 * (shm_liveness.c). No allocation, syscall or clock read happens per
 * message.
 */
#include "shm_path.h"

#define SHM_IDLE_DEMOTE	   4096 /* empty polls before a sender counts as idle */
#define SHM_IDLE_SCAN_MASK 15	/* idle senders: polled every 16th pass */
#define SHM_CLOCK_MASK	   1023 /* passes between two clock reads */

/* ---- the active set: state->order[0, nactive) ------------------------------ */

static void order_swap(shm_state_t *st, int a, int b)
{
	int pa = st->order[a], pb = st->order[b];

	st->order[a] = pb;
	st->order[b] = pa;
	st->peers[pb].order_pos = a;
	st->peers[pa].order_pos = b;
}

void ibx_shm_active_add(shm_peer_t *p)
{
	shm_state_t *st = p->st;

	order_swap(st, p->order_pos, st->nactive);
	st->nactive++;
}

void ibx_shm_active_remove(shm_peer_t *p)
{
	shm_state_t *st = p->st;

	if (p->order_pos >= st->nactive)
		return;
	st->nactive--;
	order_swap(st, p->order_pos, st->nactive);
}

/* ---- one pass -------------------------------------------------------------- */

static int poll_idle(shm_state_t *st)
{
	int ev = 0;

	for (int i = st->nactive; i < st->npeers; i++) {
		shm_peer_t *p = &st->peers[st->order[i]];
		int n;

		if (p->failed)
			continue;
		n = ibx_shm_poll_peer(st, p);
		if (n) {
			ev += n;
			/* swaps it below nactive; order[i] is now another idle peer */
			ibx_shm_promote(p);
			i--;
		}
	}
	return ev;
}

static int do_work(shm_state_t *st)
{
	int ev = 0;

	for (int i = 0; i < st->npeers && st->nwork; i++) {
		shm_peer_t *p = &st->peers[i];

		if (!p->has_work)
			continue;
		ev += ibx_shm_ring_drain(p);
		ev += ibx_shm_rndv_pipe_work(st, p);
		ibx_shm_update_work(p);
	}
	return ev;
}

int ibx_shm_progress(ibx_ctx_t *ctx, void *state)
{
	shm_state_t *st = state;
	int ev = 0;

	/* A completion callback that calls ibx_progress must not take the
	 * packet that is being delivered a second time. */
	if (ibx_unlikely(!st || st->in_progress))
		return 0;
	st->in_progress = true;
	for (int i = 0; i < st->nactive;) {
		shm_peer_t *p = &st->peers[st->order[i]];
		int n = ibx_shm_poll_peer(st, p);

		ev += n;
		if (ibx_unlikely(!n && ++p->idle > SHM_IDLE_DEMOTE && ibx_list_empty(&p->rndv_tx) &&
				 ibx_list_empty(&p->cma_rx) && !p->has_work)) {
			ibx_shm_active_remove(p); /* order[i] is now another active peer */
			continue;
		}
		i++;
	}
	st->tick++;
	/* idle senders: whenever the active ones had nothing (a waiting rank
	 * sees every ring on every pass, even when it yields the CPU between
	 * passes), and every SHM_IDLE_SCAN_MASK+1 passes under traffic */
	if (st->nactive < st->npeers && (!ev || !(st->tick & SHM_IDLE_SCAN_MASK)))
		ev += poll_idle(st);
	if (ibx_unlikely(st->nwork))
		ev += do_work(st);
	if (ibx_unlikely(!(st->tick & SHM_CLOCK_MASK)))
		ibx_shm_check_peers(st);
	st->in_progress = false;
	return ev;
}

bool ibx_shm_busy(ibx_ctx_t *ctx, void *state)
{
	shm_state_t *st = state;

	if (!st)
		return false;
	if (st->nwork)
		return true;
	for (int i = 0; i < st->npeers; i++)
		if (!ibx_list_empty(&st->peers[i].rndv_tx) || !ibx_list_empty(&st->peers[i].cma_rx))
			return true;
	return false;
}
