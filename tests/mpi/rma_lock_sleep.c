/* ibx-test: np=2,3,4 timeout=90 launchers=mpilite,ompi */
/*
 * rma_lock_sleep — passive-target communication needs nothing of the
 * target: rank 0 exposes a window and then sleeps outside MPI (sleep(1)
 * the first time, then naps until the work is there), while every other rank locks its
 * window (exclusive, then shared, then through lock_all), puts, reads
 * back, accumulates and unlocks. Rank 0 checks its window memory with
 * plain loads before it calls MPI again: were any of those calls waiting
 * for rank 0 to progress, the values would never arrive and the test
 * would end by its time limit. Both memory kinds (MPI_Win_allocate, whose
 * memory other ranks map; MPI_Win_create, reached by the kernel's copy).
 */
#include "mpitest.h"

#include <stdbool.h>
#include <time.h>
#include <unistd.h>

enum { ACC, SLOTS }; /* then one slot per rank */

static long expected(int r, int k)
{
	return 100L * k + r;
}

static void origin(MPI_Win win, int rank, int size, int k)
{
	long v = expected(rank, k), back = -1, one = 1;

	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
	MPI_OK(MPI_Put(&v, 1, MPI_LONG, 0, SLOTS + rank, 1, MPI_LONG, win));
	MPI_OK(MPI_Win_unlock(0, win));

	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
	MPI_OK(MPI_Get(&back, 1, MPI_LONG, 0, SLOTS + rank, 1, MPI_LONG, win));
	MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, ACC, 1, MPI_LONG, MPI_SUM, win));
	MPI_OK(MPI_Win_unlock(0, win));
	CHECK(back == v, "read back %ld, expected %ld", back, v);

	MPI_OK(MPI_Win_lock_all(0, win));
	MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, ACC, 1, MPI_LONG, MPI_SUM, win));
	MPI_OK(MPI_Win_unlock_all(win));
	(void)size;
}

/* Rank 0, outside MPI: every slot and the accumulated count are there. */
static bool all_there(volatile long *mem, int size, int k, long acc)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (int r = 1; r < size; r++)
		if (mem[SLOTS + r] != expected(r, k))
			return false;
	return mem[ACC] == acc;
}

/* @acc: what the accumulations of every round of this window add up to */
static void sleeper(long *mem, int size, int k, long acc)
{
	struct timespec nap = {0, 10 * 1000 * 1000};

	if (k == 1)
		sleep(1);
	/* later rounds, or a very loaded machine: nap, still outside MPI,
	 * until everything is there (for up to a minute) */
	for (int i = 0; i < 6000 && !all_there(mem, size, k, acc); i++)
		nanosleep(&nap, NULL);
	for (int r = 1; r < size; r++)
		CHECK(mem[SLOTS + r] == expected(r, k), "slot of rank %d holds %ld, expected %ld",
		      r, mem[SLOTS + r], expected(r, k));
	CHECK(mem[ACC] == acc, "accumulated %ld, expected %ld", mem[ACC], acc);
}

int main(int argc, char **argv)
{
	int rank, size, k = 0;

	mt_init(&argc, &argv, &rank, &size);
	for (int alloc = 1; alloc >= 0; alloc--) {
		MPI_Aint bytes = (MPI_Aint)(SLOTS + size) * (MPI_Aint)sizeof(long);
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
		/* two rounds per window: the second finds the lock words used */
		for (int round = 0; round < 2; round++) {
			k++;
			MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
			if (rank == 0)
				sleeper(mem, size, k, 2L * (size - 1) * (round + 1));
			else
				origin(win, rank, size, k);
			MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		}
		MPI_OK(MPI_Win_free(&win));
		if (!alloc)
			free(mem);
	}
	if (rank == 0)
		printf("rma_lock_sleep: %d ranks OK\n", size);
	MPI_Finalize();
	return 0;
}
