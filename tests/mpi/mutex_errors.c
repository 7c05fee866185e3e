/* ibx-test: np=1,2,3 timeout=60 nodes=1 */
/*
 * mutex_errors — misuse of MPIX_Mutex is reported with its error class
 * under MPI_ERRORS_RETURN, and leaves the object usable: a count below 1,
 * an index outside [0, count), a rank that is not the mutex's home
 * (MPI_ERR_RANK), a lock of a mutex this process already holds and an
 * unlock of one it does not hold (MPI_ERR_RMA_SYNC), an invalid handle.
 * Then every rank locks the mutex it is home of, and the mutexes of the
 * others, and frees the object.
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
	int rank, size, count;
	MPIX_Mutex m = MPIX_MUTEX_NULL, bad = MPIX_MUTEX_NULL;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_ARG, MPIX_Mutex_create(0, MPI_COMM_WORLD, &m));
	MPI_FAILS(MPI_ERR_COMM, MPIX_Mutex_create(1, MPI_COMM_NULL, &m));
	count = size + 2;
	MPI_OK(MPIX_Mutex_create(count, MPI_COMM_WORLD, &m));

	MPI_FAILS(MPI_ERR_ARG, MPIX_Mutex_lock(m, count, 0));
	MPI_FAILS(MPI_ERR_ARG, MPIX_Mutex_lock(m, -1, 0));
	MPI_FAILS(MPI_ERR_ARG, MPIX_Mutex_unlock(m, count, 0));
	MPI_FAILS(MPI_ERR_RANK, MPIX_Mutex_lock(m, 1, 1 % size + 1));
	MPI_FAILS(MPI_ERR_RANK, MPIX_Mutex_unlock(m, 0, -1));
	MPI_FAILS(MPI_ERR_ARG, MPIX_Mutex_lock(bad, 0, 0));
	MPI_FAILS(MPI_ERR_ARG, MPIX_Mutex_free(&bad));

	/* mutex @rank lives here: the home locks its own */
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPIX_Mutex_unlock(m, rank, rank));
	MPI_OK(MPIX_Mutex_lock(m, rank, rank));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPIX_Mutex_lock(m, rank, rank));
	MPI_OK(MPIX_Mutex_unlock(m, rank, rank));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPIX_Mutex_unlock(m, rank, rank));

	/* every mutex, from every rank, after the errors */
	for (int round = 0; round < 20; round++)
		for (int i = 0; i < count; i++) {
			MPI_OK(MPIX_Mutex_lock(m, i, i % size));
			MPI_OK(MPIX_Mutex_unlock(m, i, i % size));
		}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPIX_Mutex_free(&m));
	MPI_FAILS(MPI_ERR_ARG, MPIX_Mutex_lock(m, 0, 0));
	if (rank == 0)
		printf("mutex_errors: every misuse reported, %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
