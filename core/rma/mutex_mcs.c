/*
 * mutex_mcs.c — the default algorithm of the distributed mutex: the queue
 * lock of Mellor-Crummey and Scott (1991) on 8-byte RDMA atomics. The
 * home keeps one tail word per mutex; every member keeps, per mutex, a next
 * word and a flag word in its own region (mutex_int.h). A waiter spins only
 * on its own flag, so no member ever polls remote memory, the home takes
 * no part (no target progress), and the lock passes in arrival order.
 *
 *   A (holder)            home: tail            B (arrives)
 *                                               next_B = 0, flag_B = 0
 *                         tail = B  ◄─ swap ─── (returns A: queued)
 *   next_A = B  ◄───────────── put ──────────── spin on flag_B (local)
 *   unlock: next_A != 0
 *   flag_B = 1  ─────────────── put ──────────► B holds the lock
 *
 *   unlock with next == 0: compare-and-swap tail (A → 0); if it fails, a
 *   waiter has swapped itself in but not linked yet: wait for next, then
 *   set its flag.
 *
 * Remote operations per hand-off: one swap and one put to enter, one put
 * (or one compare-and-swap when nobody waits) to leave: O(1) whatever the
 * number of waiters. Node-local members do the same with CPU atomics and
 * stores on the mapped regions.
 */
#include "mutex_int.h"

ibx_status_t ibx_mutex_mcs_start(ibx_mutex_t *m, int i)
{
	size_t w = mutex_wait_off(m, i);
	uint64_t pred;
	ibx_status_t s;

	/* reset before the swap publishes us: our successor writes next
	 * only after it has seen us in the tail, our predecessor the flag
	 * only after it has seen our link */
	__atomic_store_n(mutex_word(m, w + MUTEX_NEXT), 0, __ATOMIC_RELAXED);
	__atomic_store_n(mutex_word(m, w + MUTEX_FLAG), 0, __ATOMIC_RELEASE);
	s = ibx_mutex_amo(m, mutex_home_of(m, i), mutex_home_off(m, i), IBX_ATOMIC_SWAP, m->src_me,
			  0, &pred);
	if (s != IBX_OK)
		return s;
	if (pred == 0)
		return IBX_OK;
	if (pred > (uint64_t)m->n) {
		ibx_error("mutex %d: tail word holds %llu (group of %d)", i,
			  (unsigned long long)pred, m->n);
		return IBX_ERR_CORRUPT;
	}
	s = ibx_mutex_put(m, (int)pred - 1, w + MUTEX_NEXT, &m->src_me, 8);
	return s == IBX_OK ? IBX_INPROGRESS : s;
}

ibx_status_t ibx_mutex_mcs_wait(ibx_mutex_t *m, int i)
{
	uint64_t *flag = mutex_word(m, mutex_wait_off(m, i) + MUTEX_FLAG);
	unsigned idle = 0, pass = 0;
	ibx_status_t s;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		s = ibx_mutex_idle(m, &idle, &pass, i, "its holder to hand it over");
		if (s != IBX_OK)
			return s;
	}
	return IBX_OK;
}

ibx_status_t ibx_mutex_mcs_unlock(ibx_mutex_t *m, int i)
{
	uint64_t *next = mutex_word(m, mutex_wait_off(m, i) + MUTEX_NEXT);
	uint64_t succ = __atomic_load_n(next, __ATOMIC_ACQUIRE), old;
	unsigned idle = 0, pass = 0;
	ibx_status_t s;

	if (succ == 0) {
		s = ibx_mutex_amo(m, mutex_home_of(m, i), mutex_home_off(m, i), IBX_ATOMIC_CSWAP, 0,
				  m->src_me, &old);
		if (s != IBX_OK)
			return s;
		if (old == m->src_me)
			return IBX_OK; /* nobody waited */
		/* a waiter swapped itself in after us: its link is on the way */
		while (!(succ = __atomic_load_n(next, __ATOMIC_ACQUIRE))) {
			s = ibx_mutex_idle(m, &idle, &pass, i, "its next waiter to queue");
			if (s != IBX_OK)
				return s;
		}
	}
	if (succ > (uint64_t)m->n) {
		ibx_error("mutex %d: next word holds %llu (group of %d)", i,
			  (unsigned long long)succ, m->n);
		return IBX_ERR_CORRUPT;
	}
	return ibx_mutex_put(m, (int)succ - 1, mutex_wait_off(m, i) + MUTEX_FLAG, &m->src_one, 8);
}
