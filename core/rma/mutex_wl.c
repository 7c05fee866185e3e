/*
 * mutex_wl.c — the two waitlist algorithms of the distributed mutex, as
 * Ross, Latham, Gropp, Thakur and Toonen (2005) specify them: the home of
 * a mutex keeps a waitlist of one byte per member, which members read and
 * write only inside an exclusive access epoch. The paper's epoch is
 * MPI_Win_lock(EXCLUSIVE) on the home's window; here it is the epoch lock
 * word before the waitlist, taken with compare-and-swap and released after
 * the epoch's operations are complete at the home (flushed).
 *
 *   lock (§2.1, fig. 3)                       home: [epoch | b0 b1 .. bn-1]
 *     epoch { get the waitlist; put b_me = 1 }
 *     every other byte 0: held
 *     else wait for notification:
 *       onesided  spin on our poll byte (local) until it is set, reset it
 *       hybrid    receive a zero-byte message from any source (§2.2)
 *
 *   unlock (fig. 4, 6)
 *     epoch { get the waitlist; put b_me = 0 }
 *     next = first member after us, in rank order and wrapping, whose
 *            byte is set (fairness: nobody waits more than n - 1 turns)
 *     onesided  put 1 into next's poll byte
 *     hybrid    send next a zero-byte message
 *
 * Two epochs per uncontended lock and unlock, one more operation per
 * hand-off. The epoch reads the whole waitlist, our own byte included (the
 * paper's indexed type leaves it out; it is 0 in a lock epoch and 1 in an
 * unlock epoch, and is not looked at): one get instead of two.
 */
#include "mutex_int.h"

static const unsigned char byte_one = 1, byte_zero = 0;

/* One exclusive epoch at mutex @i's home: reads the waitlist into m->wl
 * and writes our byte. */
static ibx_status_t epoch(ibx_mutex_t *m, int i, const unsigned char *mine)
{
	int h = mutex_home_of(m, i);
	size_t off = mutex_home_off(m, i);
	unsigned idle = 0, pass = 0;
	ibx_status_t s, s2;
	uint64_t old;

	for (;;) {
		s = ibx_mutex_amo(m, h, off, IBX_ATOMIC_CSWAP, m->src_me, 0, &old);
		if (s != IBX_OK)
			return s;
		if (old == 0)
			break;
		s = ibx_mutex_idle(m, &idle, &pass, i, "the waitlist's epoch lock");
		if (s != IBX_OK)
			return s;
	}
	s = ibx_mutex_get(m, h, off + MUTEX_WL_OFF, m->wl, (size_t)m->n);
	if (s == IBX_OK)
		s = ibx_mutex_put(m, h, off + MUTEX_WL_OFF + (size_t)m->me, mine, 1);
	/* the put is complete at the home: the next epoch sees it */
	s2 = ibx_mutex_amo(m, h, off, IBX_ATOMIC_CSWAP, 0, m->src_me, &old);
	if (s2 == IBX_OK && old != m->src_me) {
		ibx_error("mutex %d: epoch lock word holds %llu, not ours", i,
			  (unsigned long long)old);
		s2 = IBX_ERR_CORRUPT;
	}
	return s != IBX_OK ? s : s2;
}

static ibx_request_t *wake_req(ibx_mutex_t *m, int i)
{
	return &m->wake[i];
}

ibx_status_t ibx_mutex_wl_start(ibx_mutex_t *m, int i)
{
	ibx_status_t s = epoch(m, i, &byte_one);
	int j;

	if (s != IBX_OK)
		return s;
	for (j = 0; j < m->n; j++)
		if (j != m->me && m->wl[j])
			break;
	if (j == m->n)
		return IBX_OK;
	if (m->algo == IBX_MUTEX_ALGO_HYBRID) {
		ibx_request_t *rq = wake_req(m, i);

		rq->cb = NULL;
		s = ibx_tag_recv(m->ctx, IBX_ANY_SOURCE, NULL, 0, m->tag + 1 + (ibx_tag_t)i,
				 IBX_TAG_MASK_ALL, rq);
		if (s != IBX_OK && s != IBX_INPROGRESS)
			return s; /* our byte stays set: the mutex is lost to the others */
	}
	return IBX_INPROGRESS;
}

ibx_status_t ibx_mutex_wl_wait(ibx_mutex_t *m, int i)
{
	unsigned idle = 0, pass = 0;
	ibx_status_t s;

	if (m->algo == IBX_MUTEX_ALGO_HYBRID) {
		ibx_request_t *rq = wake_req(m, i);

		while (!__atomic_load_n(&rq->completed, __ATOMIC_ACQUIRE)) {
			s = ibx_mutex_idle(m, &idle, &pass, i, "its notification");
			if (s != IBX_OK) {
				if (ibx_request_cancel(m->ctx, rq) == IBX_OK)
					return s;
				break; /* matched meanwhile */
			}
		}
		if (rq->status != IBX_OK)
			ibx_error("mutex %d: notification failed: %s", i,
				  ibx_status_str(rq->status));
		return rq->status;
	}
	unsigned char *poll = (unsigned char *)m->base + mutex_wait_off(m, i);

	while (!__atomic_load_n(poll, __ATOMIC_ACQUIRE)) {
		s = ibx_mutex_idle(m, &idle, &pass, i, "its poll byte");
		if (s != IBX_OK)
			return s;
	}
	__atomic_store_n(poll, 0, __ATOMIC_RELAXED);
	return IBX_OK;
}

ibx_status_t ibx_mutex_wl_unlock(ibx_mutex_t *m, int i)
{
	ibx_status_t s = epoch(m, i, &byte_zero);
	ibx_request_t rq;
	int next = -1;

	if (s != IBX_OK)
		return s;
	/* the next waiting member after us, wrapping (fig. 4) */
	for (int k = 1; k < m->n && next < 0; k++)
		if (m->wl[(m->me + k) % m->n])
			next = (m->me + k) % m->n;
	if (next < 0)
		return IBX_OK;
	if (m->algo == IBX_MUTEX_ALGO_ONESIDED)
		return ibx_mutex_put(m, next, mutex_wait_off(m, i), &byte_one, 1);
	rq.cb = NULL;
	s = ibx_tag_send(m->ctx, m->mb[next].rank, &m->src_zero, 0, m->tag + 1 + (ibx_tag_t)i, 0,
			 &rq);
	if (s == IBX_INPROGRESS)
		s = ibx_wait(m->ctx, &rq);
	if (s != IBX_OK)
		ibx_error("mutex %d: notifying rank %d failed: %s", i, m->mb[next].rank,
			  ibx_status_str(s));
	return s;
}
