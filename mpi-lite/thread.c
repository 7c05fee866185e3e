/*
 * thread.c — MPI_THREAD_MULTIPLE: the critical section of mpi-lite.
 *
 * Under MPI_THREAD_MULTIPLE every MPI function runs inside one
 * process-wide critical section (MPIL_CS_GUARD, mpil_int.h), so mpi-lite
 * and the engine below it keep seeing one thread at a time, exactly as
 * under MPI_THREAD_SERIALIZED. At the other levels the guard costs one
 * load of mpil_g.mt and a branch that is never taken.
 *
 *   thread A: MPI_Recv ─► enter ─► post ─► wait ┐           ┌─► leave
 *                                    poll, idle ─┴─ release ─┘  (re-take)
 *   thread B:                 MPI_Send ─► enter (A released) ─► leave
 *
 * Blocking calls must not keep the section while they wait: a thread
 * blocked in MPI_Recv has to let another thread of its process send the
 * message that, through a peer, completes it. Every wait of mpi-lite and
 * of the engine polls through ibx_progress_wait, which calls the engine's
 * idle hook (ibx_idle_hook_set) between two polls; the hook (cs_idle)
 * releases the section whatever the recursion depth, lets the threads
 * that wait for it in, and takes it back at the same depth. It does so
 * only when a thread waits to enter: a lone waiter keeps polling without
 * touching the mutex. A waiter re-reads its request's completion flag
 * after the hook, under the section (the mutex orders it after the
 * progress of the thread that completed it).
 *
 * Recursion: an MPI function that calls another (PMPI_ internally, or
 * through a user callback: error handlers, reduction ops, attribute
 * copy/delete functions, generalized requests) enters again on the same
 * thread; the depth is counted per thread (the only thread-local state of
 * mpi-lite), the mutex taken once.
 *
 * Hand-over: glibc's mutex is not fair, and a waiter that polls would
 * re-take it at once, before the thread it woke runs. So the releasing
 * waiter yields until another thread has entered (the entry count moved)
 * or nobody waits any more, and only then takes the section back.
 */
#include "mpil_int.h"

#include <sched.h>
#include <stdatomic.h>

static pthread_mutex_t cs_mutex = PTHREAD_MUTEX_INITIALIZER;
static __thread unsigned cs_depth; /* this thread's nesting; 0: outside */
static atomic_uint cs_waiters;	   /* threads blocked on cs_mutex */
static atomic_ulong cs_entries;	   /* times the mutex was taken */

void mpil_cs_enter_slow(void)
{
	if (cs_depth++)
		return;
	if (pthread_mutex_trylock(&cs_mutex) != 0) {
		atomic_fetch_add_explicit(&cs_waiters, 1, memory_order_relaxed);
		pthread_mutex_lock(&cs_mutex);
		atomic_fetch_sub_explicit(&cs_waiters, 1, memory_order_relaxed);
	}
	atomic_fetch_add_explicit(&cs_entries, 1, memory_order_relaxed);
}

void mpil_cs_exit_slow(void)
{
	if (--cs_depth == 0)
		pthread_mutex_unlock(&cs_mutex);
}

void mpil_cs_yield(void)
{
	unsigned depth = cs_depth;
	unsigned long seen;

	if (!depth || !atomic_load_explicit(&cs_waiters, memory_order_relaxed))
		return;
	seen = atomic_load_explicit(&cs_entries, memory_order_relaxed);
	cs_depth = 0;
	pthread_mutex_unlock(&cs_mutex);
	while (atomic_load_explicit(&cs_entries, memory_order_relaxed) == seen &&
	       atomic_load_explicit(&cs_waiters, memory_order_relaxed))
		sched_yield();
	mpil_cs_enter_slow();
	cs_depth = depth;
}

static void cs_idle(ibx_ctx_t *ctx, void *arg)
{
	(void)ctx;
	(void)arg;
	mpil_cs_yield();
}

void mpil_cs_start(ibx_ctx_t *ctx)
{
	ibx_idle_hook_set(ctx, cs_idle, NULL);
	__atomic_store_n(&mpil_g.mt, 1, __ATOMIC_RELAXED);
}
