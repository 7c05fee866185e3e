/* ibx-test: np=1,2,3 timeout=60 nodes=1 */
/*
 * rma_ops_errors — the error classes MPI_Put / MPI_Get / MPI_Rput / MPI_Rget
 * report through the window's handler (MPI_ERRORS_RETURN set on it):
 * MPI_ERR_WIN, MPI_ERR_ARG (no request), MPI_ERR_COUNT, MPI_ERR_TYPE
 * (NULL, uncommitted, different basic types), MPI_ERR_TRUNCATE (more sent
 * than the receiving side holds), MPI_ERR_RANK, MPI_ERR_RMA_SYNC (no epoch,
 * a target not locked, a request-based operation in a fence epoch),
 * MPI_ERR_RMA_RANGE (past the end of the window, also through a derived
 * target type). MPI_PROC_NULL does nothing and needs no epoch; a request
 * for it is complete. After every refused call the window still works.
 */
#include "mpitest.h"

enum { N = 16 };

static int rank, size;

int main(int argc, char **argv)
{
	MPI_Win win;
	MPI_Datatype uncommitted, vec, dvec;
	MPI_Request rq;
	int *mem, src[N], got[N], flag;
	int right;

	mt_init(&argc, &argv, &rank, &size);
	right = (rank + 1) % size;
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
				&win));
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	for (int i = 0; i < N; i++) {
		src[i] = 100 * rank + i;
		mem[i] = -1;
	}
	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
	MPI_OK(MPI_Type_vector(3, 1, 4, MPI_INT, &vec)); /* 3 ints spanning 9 */
	MPI_OK(MPI_Type_commit(&vec));
	MPI_OK(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &dvec));
	MPI_OK(MPI_Type_commit(&dvec));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* no epoch yet */
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Put(src, 1, MPI_INT, right, 0, 1, MPI_INT, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Get(got, 1, MPI_INT, right, 0, 1, MPI_INT, win));
	/* MPI_PROC_NULL needs none */
	MPI_OK(MPI_Put(src, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));

	MPI_OK(MPI_Win_fence(0, win));
	MPI_FAILS(MPI_ERR_WIN, MPI_Put(src, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_WIN_NULL));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Put(src, -1, MPI_INT, right, 0, 1, MPI_INT, win));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Get(got, 1, MPI_INT, right, 0, -3, MPI_INT, win));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Put(src, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Put(src, 1, uncommitted, right, 0, 2, MPI_INT, win));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Get(got, 2, MPI_INT, right, 0, 1, uncommitted, win));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Put(src, 2, MPI_INT, right, 0, 2, MPI_FLOAT, win));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Put(src, 1, vec, right, 0, 1, dvec, win));
	MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Put(src, 4, MPI_INT, right, 0, 2, MPI_INT, win));
	MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Get(got, 2, MPI_INT, right, 0, 1, vec, win));
	MPI_FAILS(MPI_ERR_RANK, MPI_Put(src, 1, MPI_INT, size, 0, 1, MPI_INT, win));
	MPI_FAILS(MPI_ERR_RANK, MPI_Get(got, 1, MPI_INT, -7, 0, 1, MPI_INT, win));
	MPI_FAILS(MPI_ERR_RMA_RANGE, MPI_Put(src, 2, MPI_INT, right, N - 1, 2, MPI_INT, win));
	MPI_FAILS(MPI_ERR_RMA_RANGE, MPI_Get(got, 1, MPI_INT, right, N, 1, MPI_INT, win));
	/* a vector of 3 ints spans 9: at 8 it ends past 16 */
	MPI_FAILS(MPI_ERR_RMA_RANGE, MPI_Put(src, 3, MPI_INT, right, 8, 1, vec, win));
	/* request-based operations need a passive-target epoch */
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Rput(src, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Rget(got, 1, MPI_INT, right, 0, 1, MPI_INT, win, &rq));
	MPI_FAILS(MPI_ERR_ARG, MPI_Rput(src, 1, MPI_INT, right, 0, 1, MPI_INT, win, NULL));
	/* a sender shorter than the receiver is fine; so is nothing at all */
	MPI_OK(MPI_Put(src, 3, MPI_INT, right, 7, 1, vec, win));
	MPI_OK(MPI_Put(src, 0, MPI_INT, right, N + 100, 0, MPI_INT, win));
	MPI_OK(MPI_Win_fence(0, win));
	{
		int left = (rank + size - 1) % size;

		for (int i = 0; i < N; i++) {
			int e = i == 7	  ? 100 * left
				: i == 11 ? 100 * left + 1
				: i == 15 ? 100 * left + 2
					  : -1;

			CHECK(mem[i] == e, "after the refused calls: int %d is %d, expected %d", i,
			      mem[i], e);
		}
	}
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

	/* MPI_Win_lock: only the locked rank is a target */
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
	if (size > 1)
		MPI_FAILS(MPI_ERR_RMA_SYNC,
			  MPI_Put(src, 1, MPI_INT,
				  (rank + 2) % size == right ? rank : (rank + 2) % size, 0, 1,
				  MPI_INT, win));
	MPI_OK(MPI_Rget(got, 2, MPI_INT, right, 7, 2, MPI_INT, win, &rq));
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	CHECK(rq == MPI_REQUEST_NULL, "request not freed");
	CHECK(got[0] == 100 * rank && got[1] == -1, "Rget under MPI_Win_lock: %d %d", got[0],
	      got[1]);
	MPI_OK(MPI_Win_unlock(right, win));

	/* MPI_PROC_NULL: a complete request, nothing moves */
	MPI_OK(MPI_Win_lock_all(0, win));
	MPI_OK(MPI_Rput(src, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &rq));
	MPI_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
	CHECK(flag && rq == MPI_REQUEST_NULL, "request for MPI_PROC_NULL not complete");
	MPI_OK(MPI_Win_unlock_all(win));

	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Type_free(&uncommitted));
	MPI_OK(MPI_Type_free(&vec));
	MPI_OK(MPI_Type_free(&dvec));
	MPI_OK(MPI_Win_free(&win));
	if (rank == 0)
		printf("rma_ops_errors: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
