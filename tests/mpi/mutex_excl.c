/* ibx-test: np=1,2,3,4,8 timeout=120 */
/*
 * mutex_excl — MPIX_Mutex is mutual exclusion, whatever the algorithm
 * (IBX_MUTEX_ALGO; mutex_excl_onesided and mutex_excl_hybrid run this
 * program under the other two): every rank increments counters with a
 * non-atomic read (MPI_Get, flush), add, write (MPI_Put, flush) inside the
 * mutex that guards the counter, yielding the CPU between the read and the
 * write now and then so that an overlap of two holders would lose an
 * increment; the totals must be exact. One object holds MUTEXES mutexes
 * (homes i % size, each home locking its own too), and every rank also
 * takes two at once (in index order) for a counter that both guard.
 * With the argument --nolock the mutexes are skipped: the totals then come
 * out short with two ranks or more, which shows that the check can fail.
 */
#include "mpitest.h"

#include <sched.h>
#include <stdbool.h>

#define MUTEXES 3
#define ITERS	300

static MPI_Win win;
static long *mem;

/* counter @slot at rank @owner += 1, non-atomically */
static void bump(int owner, int slot, int it)
{
	long c = -1;

	MPI_OK(MPI_Get(&c, 1, MPI_LONG, owner, slot, 1, MPI_LONG, win));
	MPI_OK(MPI_Win_flush(owner, win));
	CHECK(c >= 0, "counter %d reads %ld", slot, c);
	if (it % 7 == 0)
		sched_yield(); /* let a second holder, if any, read the same value */
	c++;
	MPI_OK(MPI_Put(&c, 1, MPI_LONG, owner, slot, 1, MPI_LONG, win));
	MPI_OK(MPI_Win_flush(owner, win));
}

int main(int argc, char **argv)
{
	int rank, size, owner;
	bool nolock = argc > 1 && !strcmp(argv[1], "--nolock");
	MPIX_Mutex mtx;
	long got;

	mt_init(&argc, &argv, &rank, &size);
	owner = size - 1;
	MPI_OK(MPI_Win_allocate((MPI_Aint)(MUTEXES + 1) * (MPI_Aint)sizeof(long), sizeof(long),
				MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
	memset(mem, 0, (MUTEXES + 1) * sizeof(long));
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	MPI_OK(MPIX_Mutex_create(MUTEXES, MPI_COMM_WORLD, &mtx));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));

	for (int it = 0; it < ITERS; it++) {
		int i = (it + rank) % MUTEXES;

		if (!nolock)
			MPI_OK(MPIX_Mutex_lock(mtx, i, i % size));
		bump(owner, i, it);
		if (!nolock)
			MPI_OK(MPIX_Mutex_unlock(mtx, i, i % size));
		if (it % 10 == 0) {
			/* two at once, in index order: counter MUTEXES under 0 and 1 */
			if (!nolock) {
				MPI_OK(MPIX_Mutex_lock(mtx, 0, 0));
				MPI_OK(MPIX_Mutex_lock(mtx, 1, 1 % size));
			}
			bump(owner, MUTEXES, it);
			if (!nolock) {
				MPI_OK(MPIX_Mutex_unlock(mtx, 1, 1 % size));
				MPI_OK(MPIX_Mutex_unlock(mtx, 0, 0));
			}
		}
	}
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == owner) {
		long total = 0;

		MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, owner, 0, win));
		for (int i = 0; i < MUTEXES; i++)
			total += mem[i];
		got = mem[MUTEXES];
		MPI_OK(MPI_Win_unlock(owner, win));
		CHECK(total == (long)size * ITERS, "%ld increments counted, %ld made", total,
		      (long)size * ITERS);
		CHECK(got == (long)size * (ITERS / 10), "pair counter %ld, expected %ld", got,
		      (long)size * (ITERS / 10));
		printf("mutex_excl: %d ranks, %ld increments under %d mutexes, all counted\n", size,
		       total + got, MUTEXES);
	}
	MPI_OK(MPIX_Mutex_free(&mtx));
	CHECK(mtx == MPIX_MUTEX_NULL, "MPIX_Mutex_free left the handle set");
	MPI_OK(MPI_Win_free(&win));
	MPI_OK(MPI_Finalize());
	return 0;
}
