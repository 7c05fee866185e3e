/* ibx-test: np=1,2,3,4 timeout=30 expect=7 */
/*
 * abort — MPI_Abort(MPI_COMM_WORLD, 7) on the last rank ends the job with
 * exit status 7 while the others wait in a receive and a barrier.
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
	int rank, size, v = 0;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == size - 1) {
		MPI_Abort(MPI_COMM_WORLD, 7);
		fprintf(stderr, "FAIL: MPI_Abort returned\n");
		return 0;
	}
	if (rank % 2)
		MPI_Barrier(MPI_COMM_WORLD);
	else
		MPI_Recv(&v, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	fprintf(stderr, "FAIL: rank %d got past the aborting rank\n", rank);
	return 0;
}
