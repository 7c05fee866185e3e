/* ibx-test: np=3,4 timeout=60 launchers=mpilite */
/*
 * rma_lock_death — a process that dies holding a passive-target lock must
 * not leave the others waiting for ever: rank 1 takes rank 0's exclusive
 * lock and exits without releasing it (status 0, so the launcher lets the
 * job go on); rank 2 (exclusive) and rank 3 (shared) then wait for that
 * lock. The holder is a third process, neither waiter nor target: each
 * waiter must see the lost member and return an error (MPI_ERR_OTHER,
 * under MPI_ERRORS_RETURN) instead of hanging, and report it to rank 0,
 * which checks every report. The survivors then leave without
 * MPI_Finalize (a collective with a dead member). Only mpilite-run: other
 * launchers end a job whose rank exits before MPI_Finalize.
 * In the verbs lane the holder is a node-local process reached through the
 * NIC: the engine sees it gone by its pid (Soft-RoCE never ends the retries
 * of a QP whose peer QP vanished on the same device).
 */
#include "mpitest.h"

#include <unistd.h>

int main(int argc, char **argv)
{
	int rank, size, *mem, rc, cls = -1;
	MPI_Win win;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(
	    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	if (rank == 1)
		MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	switch (rank) {
	case 0:
		for (int r = 2; r < size; r++) {
			MPI_OK(MPI_Recv(&cls, 1, MPI_INT, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			CHECK(cls == MPI_ERR_OTHER, "rank %d's lock ended with class %d", r, cls);
		}
		printf("rma_lock_death: %d waiters saw the holder's loss\n", size - 2);
		break;
	case 1:
		/* dies holding the lock */
		fflush(stdout);
		_exit(0);
	default:
		rc = MPI_Win_lock(rank == 2 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, 0, 0, win);
		CHECK(rc != MPI_SUCCESS, "the lock held by a dead process was granted");
		MPI_OK(MPI_Error_class(rc, &cls));
		/* synchronous: an eager send is only locally complete, and over
		 * verbs its WQE could go with the QP at the _exit below */
		MPI_OK(MPI_Ssend(&cls, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
		break;
	}
	fflush(stdout);
	_exit(0);
}
