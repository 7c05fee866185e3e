/*
 * ring.c — the demo program: a token goes around a ring of ranks.
 *
 *   mpilite-cc -O2 -o ring examples/ring.c
 *   mpilite-run -n 4 ./ring [laps]
 *
 * Rank 0 starts a counter; every rank adds its rank number and passes it to
 * the right, lap after lap. At the end every rank checks the counter
 * against the closed form, the ranks agree on the result with MPI_Allreduce,
 * and rank 0 prints the time per hop. Plain MPI: it builds unchanged
 * against any MPI implementation.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, laps = argc > 1 ? atoi(argv[1]) : 10000, len, ok, all_ok;
	long long token = 0, expect;
	char host[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];
	double t0, t1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Get_processor_name(host, &len);
	MPI_Get_library_version(lib, &len);
	if (laps < 1)
		laps = 1;
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;

	printf("rank %d of %d on %s\n", rank, size, host);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int lap = 0; lap < laps; lap++) {
		if (rank == 0) {
			token += rank;
			MPI_Send(&token, 1, MPI_LONG_LONG, right, lap, MPI_COMM_WORLD);
			MPI_Recv(&token, 1, MPI_LONG_LONG, left, lap, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&token, 1, MPI_LONG_LONG, left, lap, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			token += rank;
			MPI_Send(&token, 1, MPI_LONG_LONG, right, lap, MPI_COMM_WORLD);
		}
	}
	t1 = MPI_Wtime();
	/* Rank 0 saw the complete laps; share its counter with everyone. */
	MPI_Bcast(&token, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
	expect = (long long)laps * size * (size - 1) / 2;
	ok = token == expect;
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("%s: %d ranks, %d laps, token %lld (expected %lld): %s\n", lib, size, laps,
		       token, expect, all_ok ? "correct" : "WRONG");
		printf("%.3f us per hop (%d hops in %.3f ms)\n",
		       (t1 - t0) * 1e6 / ((double)laps * size), laps * size, (t1 - t0) * 1e3);
	}
	MPI_Finalize();
	return all_ok ? 0 : 1;
}
