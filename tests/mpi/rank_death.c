/* ibx-test: np=2,3,4 timeout=30 expect=nonzero */
/*
 * rank_death — a rank crashes (SIGSEGV) in the middle of a job while the
 * others are blocked on it (a receive, a barrier, a large send that needs
 * the dead rank to pull the data). The job must end with a failure status
 * within the time limit instead of hanging.
 */
#include "mpitest.h"

#include <signal.h>

int main(int argc, char **argv)
{
	int rank, size, v = 0;
	static char big[1 << 20];

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == size - 1) {
		fflush(stdout);
		raise(SIGSEGV);
		return 0;
	}
	switch (rank % 3) {
	case 0: MPI_Recv(&v, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); break;
	case 1: MPI_Barrier(MPI_COMM_WORLD); break;
	default: MPI_Send(big, (int)sizeof(big), MPI_BYTE, size - 1, 0, MPI_COMM_WORLD); break;
	}
	/* Reaching here is only correct if the engine reported the loss as an
	 * error; exit non-zero either way, after a last collective. */
	MPI_Barrier(MPI_COMM_WORLD);
	return 3;
}
