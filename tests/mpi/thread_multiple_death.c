/* ibx-test: np=2,3,4 timeout=30 expect=nonzero */
/*
 * thread_multiple_death — MPI_THREAD_MULTIPLE: the last rank crashes
 * (SIGSEGV) while three threads of every other rank wait on it at once:
 * one in MPI_Recv from it, one in a barrier of a communicator of its own,
 * one in a large MPI_Send to it (which needs the dead rank to take the
 * data). The job must end with a failure status within the time limit,
 * not hang with threads that never get the library back.
 */
#include "mpitest.h"

#include <pthread.h>
#include <signal.h>

enum { NT = 3 };

static int rank, size;
static MPI_Comm tcomm[NT];
static char big[1 << 20];

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg, v = 0;

	switch (t) {
	case 0: MPI_Recv(&v, 1, MPI_INT, size - 1, 0, tcomm[t], MPI_STATUS_IGNORE); break;
	case 1: MPI_Barrier(tcomm[t]); break;
	default: MPI_Send(big, (int)sizeof(big), MPI_BYTE, size - 1, 0, tcomm[t]); break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int provided;
	pthread_t th[NT];

	MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
	MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	mt_rank = rank;
	CHECK(provided == MPI_THREAD_MULTIPLE, "MULTIPLE asked, %d provided", provided);
	for (int t = 0; t < NT; t++)
		MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == size - 1) {
		fflush(stdout);
		raise(SIGSEGV);
		return 0;
	}
	for (int t = 0; t < NT; t++)
		CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0,
		      "pthread_create");
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	/* Reaching here is only correct if every wait reported the loss as an
	 * error; exit non-zero either way. */
	return 3;
}
