/* ibx-test: np=1,2,3 timeout=30 expect=6 nodes=1 */
/*
 * errors_fatal — under the default handler (MPI_ERRORS_ARE_FATAL) an invalid
 * rank ends the whole job with the error class as its exit status
 * (MPI_ERR_RANK = 6), while the other ranks are blocked in a receive that
 * can never complete: the launcher must take them down, not hang.
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
	int rank, size, v = 0;
	MPI_Errhandler eh;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
	CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler is not MPI_ERRORS_ARE_FATAL");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == size - 1) {
		MPI_Send(&v, 1, MPI_INT, size + 6, 0, MPI_COMM_WORLD);
		fprintf(stderr, "FAIL: MPI_Send to an invalid rank returned\n");
		return 0; /* exit status 0: the test fails */
	}
	MPI_Recv(&v, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	fprintf(stderr, "FAIL: a receive that nobody sends to completed\n");
	return 0;
}
