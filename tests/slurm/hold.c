/*
 * hold — a job for tests/slurm/run.sh to kill a task of: after a barrier
 * every rank prints "hold: rank R pid P" and then waits for ever (rank 0 in
 * a receive from any rank, the others in a barrier that rank 0 never
 * enters). When a task is killed (kill -9), the survivors must see the loss
 * and end the job with a non-zero status instead of hanging. Reaching the
 * end is wrong either way: exit status 3.
 */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rank, size, v = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Barrier(MPI_COMM_WORLD);
	printf("hold: rank %d pid %ld of %d\n", rank, (long)getpid(), size);
	fflush(stdout);
	if (rank == 0)
		MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	else
		MPI_Barrier(MPI_COMM_WORLD);
	return 3;
}
