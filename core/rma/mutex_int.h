/*
 * mutex_int.h — private to the distributed mutex (include/ibx.h,
 * "distributed mutex"): the object, where each algorithm keeps its words,
 * and the helpers that reach them (mutex.c) for the algorithms
 * (mutex_mcs.c: the queue lock; mutex_wl.c: the waitlist algorithms of
 * Ross et al. 2005).
 *
 * Every member allocates one region (ibx_mem_alloc: node-local members
 * reach it with loads, stores and CPU atomics, the others through RDMA):
 *
 *   [0, woff)        home blocks, hstride bytes each: block j holds mutex
 *                    j * n + me (the mutexes this member is home of)
 *                      mcs:            tail word (0: free; else the last
 *                                      waiter's group index + 1)
 *                      onesided/hybrid epoch lock word (0: free; else the
 *                                      holder's index + 1), then the
 *                                      waitlist: one byte per member
 *   [woff, len)      waiter blocks, wstride bytes each, one per mutex:
 *                      mcs:            next word (the successor's index + 1,
 *                                      written by the successor), flag word
 *                                      (set to 1 by the predecessor: ours)
 *                      onesided        poll byte (set by the unlocker)
 *                      hybrid          none (a message notifies)
 *
 * Offsets depend only on (algorithm, n, count), so every member computes
 * them for every other.
 */
#ifndef IBX_MUTEX_INT_H
#define IBX_MUTEX_INT_H

#include "rma_int.h"

enum { MUTEX_FREE, MUTEX_QUEUED, MUTEX_HELD };

#define MUTEX_LINE   64 /* home blocks on lines of their own: no false sharing */
#define MUTEX_WL_OFF 8	/* waitlist after the epoch lock word */
#define MUTEX_NEXT   0	/* mcs waiter block: next word */
#define MUTEX_FLAG   8	/* mcs waiter block: flag word */
#define MUTEX_CHECK  64 /* idle passes between checks for lost members */

typedef struct mutex_member {
	int rank;	/* world rank */
	uint64_t base;	/* its region, in its address space */
	ibx_rkey_t *rk; /* its key */
	char *direct;	/* its region mapped here with CPU atomics (ibx_rkey_ptr), or NULL */
} mutex_member_t;

struct ibx_mutex {
	ibx_ctx_t *ctx;
	ibx_mutex_algo_t algo;
	int n, me, count;
	ibx_tag_t tag;
	size_t hstride, wstride, woff, len;
	char *base; /* our region */
	ibx_mem_t *mem;
	mutex_member_t *mb;	  /* [n] */
	unsigned char *state;	  /* [count]: MUTEX_FREE / QUEUED / HELD */
	ibx_request_t *wake;	  /* hybrid [count]: the posted notification receive */
	unsigned char *wl;	  /* onesided / hybrid: a copy of one waitlist [n] */
	uint64_t src_one, src_me; /* sources of puts: 1, and our index + 1 */
	uint64_t src_zero;
};

/* Where a mutex's words are. */
static inline int mutex_home_of(const ibx_mutex_t *m, int i)
{
	return i % m->n;
}
static inline size_t mutex_home_off(const ibx_mutex_t *m, int i)
{
	return (size_t)(i / m->n) * m->hstride;
}
static inline size_t mutex_wait_off(const ibx_mutex_t *m, int i)
{
	return m->woff + (size_t)i * m->wstride;
}
/* A word of our own region (read while waiting, reset before queueing). */
static inline uint64_t *mutex_word(const ibx_mutex_t *m, size_t off)
{
	return (uint64_t *)(void *)(m->base + off);
}

/* 8-byte atomic on member @who's word at @off (see ibx_atomic). */
ibx_status_t ibx_mutex_amo(ibx_mutex_t *m, int who, size_t off, ibx_atomic_op_t op, uint64_t value,
			   uint64_t compare, uint64_t *old_p);
/* Writes @len bytes to member @who's region at @off; complete and visible
 * there on return. An 8-byte aligned word is written in one store, so a
 * poller never sees half of it. */
ibx_status_t ibx_mutex_put(ibx_mutex_t *m, int who, size_t off, const void *src, size_t len);
/* Reads @len bytes of member @who's region at @off. */
ibx_status_t ibx_mutex_get(ibx_mutex_t *m, int who, size_t off, void *dst, size_t len);
/* One pass of a wait: progresses the engine (yielding the CPU when ranks
 * outnumber cores), and every MUTEX_CHECK idle passes looks for lost
 * members: IBX_ERR_UNREACHABLE, logged with @what and mutex @i. */
ibx_status_t ibx_mutex_idle(ibx_mutex_t *m, unsigned *idle_p, unsigned *pass_p, int i,
			    const char *what);

/* The algorithms: lock_start returns IBX_OK (held) or IBX_INPROGRESS
 * (queued); lock_wait ends a queued one; unlock hands over. */
ibx_status_t ibx_mutex_mcs_start(ibx_mutex_t *m, int i);
ibx_status_t ibx_mutex_mcs_wait(ibx_mutex_t *m, int i);
ibx_status_t ibx_mutex_mcs_unlock(ibx_mutex_t *m, int i);
ibx_status_t ibx_mutex_wl_start(ibx_mutex_t *m, int i);
ibx_status_t ibx_mutex_wl_wait(ibx_mutex_t *m, int i);
ibx_status_t ibx_mutex_wl_unlock(ibx_mutex_t *m, int i);

#endif /* IBX_MUTEX_INT_H */
