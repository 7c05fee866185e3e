/* ibx-test: np=1,2,3,4,8 timeout=90 launchers=mpilite,ompi */
/*
 * rma_lock_excl — MPI_LOCK_EXCLUSIVE is mutual exclusion: every rank
 * increments counters with a non-atomic read (MPI_Get, flush), add,
 * write (MPI_Put) under the exclusive lock of the counter's owner, all
 * ranks hammering the same owner at once, round after round over every
 * owner; any overlap of two holders loses an increment, so the totals
 * must be exact. Both memory kinds (MPI_Win_allocate, MPI_Win_create);
 * several locks held at once (one per target, in rank order); and
 * MPI_MODE_NOCHECK, which takes no lock and so releases none: exclusive
 * locks taken after it still exclude each other.
 */
#include "mpitest.h"

#include <stdbool.h>

#define ITERS 150

typedef struct wnd {
	MPI_Win win;
	long *mem;
	bool allocated;
} wnd_t;

static void wnd_open(wnd_t *w, int n, bool allocate)
{
	MPI_Aint bytes = (MPI_Aint)n * (MPI_Aint)sizeof(long);

	w->allocated = allocate;
	if (allocate) {
		MPI_OK(MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem,
					&w->win));
	} else {
		w->mem = malloc((size_t)bytes);
		CHECK(w->mem != NULL, "malloc");
		MPI_OK(MPI_Win_create(w->mem, bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
				      &w->win));
	}
	memset(w->mem, 0, (size_t)bytes);
	MPI_OK(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void wnd_close(wnd_t *w)
{
	MPI_OK(MPI_Win_free(&w->win));
	if (!w->allocated)
		free(w->mem);
}

/* counter @slot of @target += 1, non-atomically, inside the lock */
static void bump(MPI_Win win, int target, int slot)
{
	long c = -1;

	MPI_OK(MPI_Get(&c, 1, MPI_LONG, target, slot, 1, MPI_LONG, win));
	MPI_OK(MPI_Win_flush(target, win));
	CHECK(c >= 0, "counter %d of rank %d reads %ld", slot, target, c);
	c++;
	MPI_OK(MPI_Put(&c, 1, MPI_LONG, target, slot, 1, MPI_LONG, win));
}

/* This rank's own counter @slot, read under a shared lock of itself. */
static long own(wnd_t *w, int rank, int slot)
{
	long v;

	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, w->win));
	v = w->mem[slot];
	MPI_OK(MPI_Win_unlock(rank, w->win));
	return v;
}

static void counters(wnd_t *w, int rank, int size)
{
	long expect;

	/* everyone on one owner at a time, the owner changing each round */
	for (int i = 0; i < ITERS; i++) {
		int t = i % size;

		MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w->win));
		bump(w->win, t, 0);
		MPI_OK(MPI_Win_unlock(t, w->win));
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	expect = (long)size * (ITERS / size + (rank < ITERS % size));
	CHECK(own(w, rank, 0) == expect, "counter 0: %ld, expected %ld", own(w, rank, 0), expect);

	/* every lock at once, taken in rank order (no deadlock), each
	 * counter bumped while all are held */
	for (int i = 0; i < ITERS / 10; i++) {
		for (int t = 0; t < size; t++)
			MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w->win));
		for (int t = 0; t < size; t++)
			bump(w->win, t, 1);
		for (int t = size - 1; t >= 0; t--)
			MPI_OK(MPI_Win_unlock(t, w->win));
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	expect = (long)size * (ITERS / 10);
	CHECK(own(w, rank, 1) == expect, "counter 1: %ld, expected %ld", own(w, rank, 1), expect);
}

/* NOCHECK: rank 0 alone works on its own window without a lock, then
 * everyone uses real exclusive locks on it again. */
static void nocheck(wnd_t *w, int rank, int size)
{
	if (rank == 0) {
		for (int i = 0; i < 10; i++) {
			MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, MPI_MODE_NOCHECK, w->win));
			bump(w->win, 0, 2);
			MPI_OK(MPI_Win_unlock(0, w->win));
		}
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	for (int i = 0; i < 10; i++) {
		MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w->win));
		bump(w->win, 0, 2);
		MPI_OK(MPI_Win_unlock(0, w->win));
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		CHECK(own(w, 0, 2) == 10 + 10L * size, "counter 2: %ld, expected %ld", own(w, 0, 2),
		      10 + 10L * size);
}

int main(int argc, char **argv)
{
	int rank, size;

	mt_init(&argc, &argv, &rank, &size);
	for (int alloc = 1; alloc >= 0; alloc--) {
		wnd_t w;

		wnd_open(&w, 4, alloc);
		counters(&w, rank, size);
		nocheck(&w, rank, size);
		wnd_close(&w);
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("rma_lock_excl: %d ranks OK\n", size);
	MPI_Finalize();
	return 0;
}
