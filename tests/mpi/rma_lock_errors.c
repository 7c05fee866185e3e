/* ibx-test: np=1,2,3,4 timeout=60 launchers=mpilite,ompi nodes=1 */
/*
 * rma_lock_errors — every misuse of passive-target synchronisation gets
 * its error class through the window's handler (MPI_ERRORS_RETURN) and
 * leaves the window usable: a bad lock type (MPI_ERR_LOCKTYPE), a bad
 * rank (MPI_ERR_RANK), bad assertion bits (MPI_ERR_ASSERT), and
 * MPI_ERR_RMA_SYNC for a second lock of a locked target, an unlock
 * without lock, lock_all inside a lock epoch and the reverse, unlock_all
 * without lock_all, flushes outside a passive epoch or towards a target
 * not locked, operations outside any epoch or towards a target not
 * locked, and any lock on a window created with no_locks=true. The valid
 * corner cases pass: MPI_PROC_NULL, several targets locked at once,
 * MPI_Win_sync in any epoch, a window with no_locks=true still fences.
 * Each misuse is followed by a correct epoch whose result is checked.
 */
#include "mpitest.h"

static void check_usable(MPI_Win win, int *mem, int rank, int size, int salt)
{
	int v = salt * 100 + rank, back = -1, t = (rank + 1) % size;

	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
	MPI_OK(MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win));
	MPI_OK(MPI_Win_flush(t, win));
	MPI_OK(MPI_Get(&back, 1, MPI_INT, t, 0, 1, MPI_INT, win));
	MPI_OK(MPI_Win_unlock(t, win));
	CHECK(back == v, "after the errors: read %d, expected %d", back, v);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
	CHECK(mem[0] == salt * 100 + (rank - 1 + size) % size, "window holds %d", mem[0]);
	MPI_OK(MPI_Win_unlock(rank, win));
}

static void argument_errors(MPI_Win win, int rank, int size)
{
	MPI_FAILS(MPI_ERR_LOCKTYPE, MPI_Win_lock(0, 0, 0, win));
	MPI_FAILS(MPI_ERR_LOCKTYPE, MPI_Win_lock(MPI_LOCK_SHARED + 100, 0, 0, win));
	MPI_FAILS(MPI_ERR_RANK, MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win));
	MPI_FAILS(MPI_ERR_RANK, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, -3, 0, win));
	MPI_FAILS(MPI_ERR_RANK, MPI_Win_unlock(size, win));
	MPI_FAILS(MPI_ERR_RANK, MPI_Win_flush(size + 2, win));
	MPI_FAILS(MPI_ERR_RANK, MPI_Win_flush_local(-7, win));
	MPI_FAILS(MPI_ERR_ASSERT, MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOSTORE, win));
	MPI_FAILS(MPI_ERR_ASSERT, MPI_Win_lock_all(MPI_MODE_NOPUT, win));
	MPI_FAILS(MPI_ERR_ASSERT, MPI_Win_lock_all(1, win));
	/* MPI_PROC_NULL: nothing to lock, nothing to release */
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, MPI_PROC_NULL, 0, win));
	MPI_OK(MPI_Win_unlock(MPI_PROC_NULL, win));
	(void)rank;
}

static void epoch_errors(MPI_Win win, int rank, int size)
{
	int v = 1, other = (rank + 1) % size;

	/* no epoch at all */
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Put(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Get(&v, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_unlock(rank, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_flush(rank, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_flush_all(win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_flush_local(rank, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_flush_local_all(win));
	MPI_OK(MPI_Win_sync(win));

	/* a lock epoch on this rank */
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(win));
	MPI_OK(MPI_Win_sync(win));
	MPI_OK(MPI_Win_flush_all(win));
	if (size > 1) {
		MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_unlock(other, win));
		MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_flush(other, win));
		MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_flush_local(other, win));
		MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Put(&v, 1, MPI_INT, other, 1, 1, MPI_INT, win));
		/* a second target joins the epoch */
		MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, other, 0, win));
		MPI_OK(MPI_Get(&v, 1, MPI_INT, other, 1, 1, MPI_INT, win));
		MPI_OK(MPI_Win_flush(other, win));
		MPI_OK(MPI_Win_unlock(other, win));
	}
	MPI_OK(MPI_Win_unlock(rank, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_unlock(rank, win));

	/* a lock_all epoch */
	MPI_OK(MPI_Win_lock_all(0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_unlock(rank, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_fence(0, win));
	MPI_OK(MPI_Get(&v, 1, MPI_INT, other, 1, 1, MPI_INT, win));
	MPI_OK(MPI_Win_flush(other, win));
	MPI_OK(MPI_Win_flush_local_all(win));
	MPI_OK(MPI_Win_sync(win));
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_flush_all(win));
}

/* no_locks=true: MPI_Win_lock and lock_all are refused, fences work. */
static void no_locks(int rank, int size)
{
	MPI_Info info;
	MPI_Win win;
	int *mem, v = rank + 1;

	MPI_OK(MPI_Info_create(&info));
	MPI_OK(MPI_Info_set(info, "no_locks", "true"));
	MPI_OK(MPI_Win_allocate(sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &mem, &win));
	MPI_OK(MPI_Info_free(&info));
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, MPI_MODE_NOCHECK, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, win));
	MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
	MPI_OK(MPI_Put(&v, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win));
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	CHECK(*mem == (rank - 1 + size) % size + 1, "no_locks window holds %d", *mem);
	MPI_OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
	int rank, size, *mem;
	MPI_Win win;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
				&win));
	mem[0] = mem[1] = 0;
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	argument_errors(win, rank, size);
	check_usable(win, mem, rank, size, 1);
	epoch_errors(win, rank, size);
	check_usable(win, mem, rank, size, 2);
	MPI_OK(MPI_Win_free(&win));
	no_locks(rank, size);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("rma_lock_errors: %d ranks OK\n", size);
	MPI_Finalize();
	return 0;
}
