/* ibx-test: np=3,4 timeout=60 launchers=mpilite */
/*
 * mutex_death — a process that dies holding an MPIX_Mutex must not leave
 * the others waiting for ever (IBX_MUTEX_ALGO: mcs here; mutex_death_
 * onesided and mutex_death_hybrid run this program under the other two):
 * rank 1 takes mutex 0 (home: rank 0) and exits without releasing it
 * (status 0, so the launcher lets the job go on); ranks 2 .. then wait for
 * it, behind it in the queue. Each waiter must see the lost member and
 * return MPI_ERR_OTHER (under MPI_ERRORS_RETURN) instead of hanging, and
 * report it to rank 0, which checks every report. The survivors then leave
 * without MPI_Finalize (a collective with a dead member). Only
 * mpilite-run: other launchers end a job whose rank exits early.
 */
#include "mpitest.h"

#include <unistd.h>

int main(int argc, char **argv)
{
	int rank, size, rc, cls = -1;
	MPIX_Mutex m;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPIX_Mutex_create(2, MPI_COMM_WORLD, &m));
	if (rank == 1)
		MPI_OK(MPIX_Mutex_lock(m, 0, 0));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	switch (rank) {
	case 0:
		for (int r = 2; r < size; r++) {
			MPI_OK(MPI_Recv(&cls, 1, MPI_INT, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(cls == MPI_ERR_OTHER, "rank %d's lock ended with class %d", r, cls);
		}
		printf("mutex_death: %d waiters saw the holder's loss\n", size - 2);
		break;
	case 1: fflush(stdout); _exit(0); /* dies holding mutex 0 */
	default:
		rc = MPIX_Mutex_lock(m, 0, 0);
		CHECK(rc != MPI_SUCCESS, "the mutex held by a dead process was granted");
		MPI_OK(MPI_Error_class(rc, &cls));
		/* synchronous: the report must reach rank 0 before _exit tears
		 * down the connection (an eager send is only locally complete;
		 * over verbs its WQE could go with the QP) */
		MPI_OK(MPI_Ssend(&cls, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
		break;
	}
	fflush(stdout);
	_exit(0);
}
