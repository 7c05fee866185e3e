/* ibx-test: np=1,2,3,4,8 timeout=90 launchers=mpilite,ompi */
/*
 * rma_lock_shared — shared locks, lock_all, flushes and fairness:
 *
 *   - shared locks are held together: every rank takes the shared lock
 *     of one owner, announces itself there (MPI_Fetch_and_op) and, still
 *     holding it, waits until all ranks have announced themselves; were
 *     shared locks exclusive, the first holder would wait for ever;
 *   - MPI_Win_lock_all (with and without MPI_MODE_NOCHECK): every rank
 *     writes its slot at every member, flush_all, reads them back
 *     (flush_local_all), and after unlock_all every member holds every
 *     rank's value; MPI_Win_flush / flush_local complete one target's
 *     operations inside the epoch (a get after them sees the put);
 *   - a writer is not starved: rank 0 takes the exclusive lock 30 times
 *     while every other rank takes the shared lock back to back until it
 *     sees rank 0's stop flag; under each exclusive hold, no reader is
 *     inside (a counter the readers raise and lower under the shared lock
 *     reads 0). With a reader-preference lock rank 0 would wait for ever.
 */
#include "mpitest.h"

#include <sched.h>
#include <stdbool.h>

enum { ARRIVE, INSIDE, STOP, WRITES, NFIXED }; /* slots before the per-rank ones */

static long fop(MPI_Win win, int target, int slot, long add)
{
	long old;

	MPI_OK(
	    MPI_Fetch_and_op(&add, &old, MPI_LONG, target, slot, add ? MPI_SUM : MPI_NO_OP, win));
	MPI_OK(MPI_Win_flush(target, win));
	return old;
}

static void together(MPI_Win win, int rank, int size)
{
	for (int round = 0; round < 3; round++) {
		int t = round % size;
		long want = (long)size * (round / size + 1);

		MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
		fop(win, t, ARRIVE, 1);
		while (fop(win, t, ARRIVE, 0) < want)
			sched_yield(); /* ranks may outnumber cores */
		MPI_OK(MPI_Win_unlock(t, win));
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	(void)rank;
}

static void lock_all(MPI_Win win, long *mem, int rank, int size, int assert)
{
	long v = 1000L * (assert ? 2 : 1) + rank, back;

	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock_all(assert, win));
	for (int t = 0; t < size; t++)
		MPI_OK(MPI_Put(&v, 1, MPI_LONG, t, NFIXED + rank, 1, MPI_LONG, win));
	MPI_OK(MPI_Win_flush_all(win));
	for (int t = 0; t < size; t++) {
		back = -1;
		MPI_OK(MPI_Get(&back, 1, MPI_LONG, t, NFIXED + rank, 1, MPI_LONG, win));
		MPI_OK(MPI_Win_flush_local_all(win));
		CHECK(back == v, "lock_all: rank %d slot %d reads %ld, expected %ld", t,
		      NFIXED + rank, back, v);
	}
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
	for (int r = 0; r < size; r++)
		CHECK(mem[NFIXED + r] == 1000L * (assert ? 2 : 1) + r,
		      "lock_all: slot %d holds %ld", NFIXED + r, mem[NFIXED + r]);
	MPI_OK(MPI_Win_unlock(rank, win));
}

static void flushes(MPI_Win win, int rank, int size)
{
	int t = (rank + 1) % size;
	long v, back;

	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	/* each rank works on its right neighbour's slot of its own */
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
	for (int i = 0; i < 20; i++) {
		v = 5000 + 10 * i + rank;
		MPI_OK(MPI_Put(&v, 1, MPI_LONG, t, NFIXED + rank, 1, MPI_LONG, win));
		if (i % 2)
			MPI_OK(MPI_Win_flush(t, win));
		else
			MPI_OK(MPI_Win_flush_local(t, win));
		MPI_OK(MPI_Get(&back, 1, MPI_LONG, t, NFIXED + rank, 1, MPI_LONG, win));
		MPI_OK(MPI_Win_flush(t, win));
		CHECK(back == v, "flush: read %ld after writing %ld", back, v);
	}
	MPI_OK(MPI_Win_unlock(t, win));
}

/* Rank 0 writes (exclusive) 30 times; the others read (shared) until
 * rank 0's last write sets STOP. */
static void writer_not_starved(MPI_Win win, int rank, int size)
{
	const int target = size - 1, writes = 30;
	long reads = 0;

	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0) {
		for (int i = 1; i <= writes; i++) {
			MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
			CHECK(fop(win, target, INSIDE, 0) == 0,
			      "readers inside during exclusive hold %d", i);
			fop(win, target, WRITES, 1);
			if (i == writes)
				fop(win, target, STOP, 1);
			MPI_OK(MPI_Win_unlock(target, win));
		}
	} else {
		for (bool stop = false; !stop; reads++) {
			MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
			fop(win, target, INSIDE, 1);
			stop = fop(win, target, STOP, 0) != 0;
			fop(win, target, INSIDE, -1);
			MPI_OK(MPI_Win_unlock(target, win));
		}
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == target) {
		MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
		CHECK(fop(win, target, WRITES, 0) == writes, "writes: %ld",
		      fop(win, target, WRITES, 0));
		CHECK(fop(win, target, INSIDE, 0) == 0, "inside: %ld", fop(win, target, INSIDE, 0));
		MPI_OK(MPI_Win_unlock(target, win));
	}
}

int main(int argc, char **argv)
{
	int rank, size;

	mt_init(&argc, &argv, &rank, &size);
	for (int alloc = 1; alloc >= 0; alloc--) {
		MPI_Aint bytes = (MPI_Aint)(NFIXED + size) * (MPI_Aint)sizeof(long);
		long *mem = NULL;
		MPI_Win win;

		if (alloc) {
			MPI_OK(MPI_Win_allocate(bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
						&mem, &win));
		} else {
			mem = malloc((size_t)bytes);
			CHECK(mem != NULL, "malloc");
			MPI_OK(MPI_Win_create(mem, bytes, sizeof(long), MPI_INFO_NULL,
					      MPI_COMM_WORLD, &win));
		}
		memset(mem, 0, (size_t)bytes);
		MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		together(win, rank, size);
		lock_all(win, mem, rank, size, 0);
		lock_all(win, mem, rank, size, MPI_MODE_NOCHECK);
		flushes(win, rank, size);
		writer_not_starved(win, rank, size);
		MPI_OK(MPI_Win_free(&win));
		if (!alloc)
			free(mem);
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("rma_lock_shared: %d ranks OK\n", size);
	MPI_Finalize();
	return 0;
}
