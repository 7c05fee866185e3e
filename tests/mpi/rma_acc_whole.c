/* ibx-test: np=2,3,4 timeout=120 launchers=mpilite,ompi */
/*
 * rma_acc_whole — an accumulate of several elements is seen whole by every
 * other accumulate: MPI itself promises atomicity per element only, but
 * Open MPI and MPICH give it per operation and codes count on it (a linked
 * list whose {rank, displacement} pointers are swapped with a 16-byte
 * MPI_REPLACE of MPI_BYTEs and read with a 16-byte MPI_Get_accumulate).
 *
 * At rank 0's record (16 bytes: two equal halves), writers (odd ranks)
 * replace it with MPI_Accumulate(MPI_REPLACE) while
 * readers (even ranks) fetch it with MPI_Get_accumulate(MPI_NO_OP): every
 * fetched record must have two equal halves. As 16 MPI_BYTEs and as four
 * MPI_INTs; on an MPI_Win_allocate window (CPU atomics on the node) and an
 * MPI_Win_create window (the engine's atomics).
 */
#include "mpitest.h"

#include <stdbool.h>
#include <stdint.h>

static int rank, size, iter = 4000;

typedef struct rec {
	int64_t lo, hi;
} rec_t;

static void run(MPI_Win win, MPI_Datatype dt, int count, const char *what)
{
	bool writer = rank & 1;
	long torn = 0;

	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock_all(0, win));
	for (int i = 0; i < iter; i++) {
		rec_t r;

		if (writer) {
			r.lo = r.hi = (int64_t)rank * 1000000 + i + 1;
			MPI_OK(MPI_Accumulate(&r, count, dt, 0, 0, count, dt, MPI_REPLACE, win));
		} else {
			r.lo = -1;
			r.hi = -2;
			MPI_OK(MPI_Get_accumulate(NULL, 0, dt, &r, count, dt, 0, 0, count, dt,
						  MPI_NO_OP, win));
		}
		MPI_OK(MPI_Win_flush(0, win));
		if (!writer && r.lo != r.hi && torn++ == 0)
			printf("rma_acc_whole: %s: rank %d read a torn record %lld / %lld\n", what,
			       rank, (long long)r.lo, (long long)r.hi);
	}
	MPI_OK(MPI_Win_unlock_all(win));
	CHECK(torn == 0, "%s: %ld of %d records read torn", what, torn, iter);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void both_types(MPI_Win win, const char *kind)
{
	char what[64];

	snprintf(what, sizeof(what), "%s, 16 x MPI_BYTE", kind);
	run(win, MPI_BYTE, 16, what);
	snprintf(what, sizeof(what), "%s, 4 x MPI_INT", kind);
	run(win, MPI_INT, 4, what);
}

int main(int argc, char **argv)
{
	rec_t *mem, *own = calloc(1, sizeof(rec_t));
	MPI_Win win;

	mt_init(&argc, &argv, &rank, &size);
	/* over an emulated NIC an operation takes tens of microseconds: fewer,
	 * and each one a wider window for a reader to slip into */
	if (getenv("IBX_PATHS") && strstr(getenv("IBX_PATHS"), "verbs"))
		iter = 300;
	MPI_OK(MPI_Win_allocate(sizeof(rec_t), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
	memset(mem, 0, sizeof(*mem));
	MPI_OK(MPI_Win_sync(win));
	both_types(win, "MPI_Win_allocate");
	MPI_OK(MPI_Win_free(&win));

	MPI_OK(MPI_Win_create(own, sizeof(rec_t), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	both_types(win, "MPI_Win_create");
	MPI_OK(MPI_Win_free(&win));
	free(own);
	MPI_OK(MPI_Finalize());
	if (rank == 0)
		printf("rma_acc_whole: ok (%d ranks)\n", size);
	return 0;
}
