/* ibx-test: np=1,2,3 timeout=60 nodes=1 */
/*
 * rma_acc_errors — the error classes of the accumulate family, through the
 * window's handler (MPI_ERRORS_RETURN):
 *   MPI_ERR_OP     a user-defined op, MPI_OP_NULL, MPI_NO_OP in
 *                  MPI_Accumulate, an op the type's group does not allow
 *                  (BAND on double, MAXLOC on int, SUM on MPI_WCHAR)
 *   MPI_ERR_TYPE   MPI_Compare_and_swap on MPI_FLOAT / MPI_WCHAR / a derived
 *                  type; Fetch_and_op on a derived type; origin, result and
 *                  target of different predefined types; a target type
 *                  that mixes types; uncommitted
 *   MPI_ERR_COUNT, MPI_ERR_TRUNCATE, MPI_ERR_RANK, MPI_ERR_RMA_RANGE,
 *   MPI_ERR_RMA_SYNC (no epoch; Raccumulate / Rget_accumulate in a fence
 *                  epoch)
 * MPI_PROC_NULL does nothing; the window works after every refusal, and
 * MPI_REPLACE / MPI_NO_OP work on any predefined type (MPI_CHAR).
 */
#include "mpitest.h"

#include <stddef.h>
#include <wchar.h>

enum { N = 8 };

static int rank, size;

static void my_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv)
{
	MPI_Win win;
	MPI_Op user;
	MPI_Datatype uncommitted, vec, mixed;
	MPI_Request rq;
	long long *mem, one = 1, res = 0, cmp = 0;
	int ione[4] = {1, 1, 1, 1}, ires[4];
	float f = 1.0f, fres;
	double d = 1.0;
	char c = 'x', cres = 0;
	wchar_t wc = L'x', wres = 0;
	int right;

	mt_init(&argc, &argv, &rank, &size);
	right = (rank + 1) % size;
	MPI_OK(MPI_Win_allocate(N * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
				MPI_COMM_WORLD, &mem, &win));
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	for (int i = 0; i < N; i++)
		mem[i] = 0;
	MPI_OK(MPI_Op_create(my_sum, 1, &user));
	MPI_OK(MPI_Type_contiguous(2, MPI_LONG_LONG, &uncommitted));
	MPI_OK(MPI_Type_vector(2, 1, 2, MPI_LONG_LONG, &vec));
	MPI_OK(MPI_Type_commit(&vec));
	{
		int bl[2] = {1, 1};
		MPI_Aint di[2] = {0, 8};
		MPI_Datatype ts[2] = {MPI_LONG_LONG, MPI_DOUBLE};

		MPI_OK(MPI_Type_create_struct(2, bl, di, ts, &mixed));
		MPI_OK(MPI_Type_commit(&mixed));
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* no epoch */
	MPI_FAILS(MPI_ERR_RMA_SYNC,
		  MPI_Accumulate(&one, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG, MPI_SUM, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC,
		  MPI_Fetch_and_op(&one, &res, MPI_LONG_LONG, right, 0, MPI_SUM, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC,
		  MPI_Compare_and_swap(&one, &cmp, &res, MPI_LONG_LONG, right, 0, win));
	MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, MPI_PROC_NULL, 0, 1, MPI_LONG_LONG, MPI_SUM,
			      win));

	MPI_OK(MPI_Win_fence(0, win));
	/* ops */
	MPI_FAILS(MPI_ERR_OP, MPI_Accumulate(ione, 1, MPI_INT, right, 0, 1, MPI_INT, user, win));
	MPI_FAILS(MPI_ERR_OP, MPI_Accumulate(&one, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG,
					     MPI_OP_NULL, win));
	MPI_FAILS(MPI_ERR_OP, MPI_Accumulate(&one, 1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG,
					     MPI_NO_OP, win));
	MPI_FAILS(MPI_ERR_OP,
		  MPI_Accumulate(&d, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, MPI_BAND, win));
	MPI_FAILS(MPI_ERR_OP,
		  MPI_Accumulate(ione, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_MAXLOC, win));
	MPI_FAILS(MPI_ERR_OP,
		  MPI_Accumulate(&wc, 1, MPI_WCHAR, right, 0, 1, MPI_WCHAR, MPI_SUM, win));
	MPI_FAILS(MPI_ERR_OP, MPI_Fetch_and_op(ione, ires, MPI_INT, right, 0, user, win));
	MPI_FAILS(MPI_ERR_OP, MPI_Get_accumulate(ione, 1, MPI_INT, ires, 1, MPI_INT, right, 0, 1,
						 MPI_INT, user, win));
	/* types */
	MPI_FAILS(MPI_ERR_TYPE, MPI_Compare_and_swap(&f, &f, &fres, MPI_FLOAT, right, 0, win));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Compare_and_swap(&wc, &wc, &wres, MPI_WCHAR, right, 0, win));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Compare_and_swap(&one, &cmp, &res, vec, right, 0, win));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Fetch_and_op(&one, &res, vec, right, 0, MPI_SUM, win));
	MPI_FAILS(MPI_ERR_TYPE,
		  MPI_Accumulate(&d, 1, MPI_DOUBLE, right, 0, 1, MPI_LONG_LONG, MPI_SUM, win));
	MPI_FAILS(MPI_ERR_TYPE,
		  MPI_Accumulate(&one, 2, MPI_LONG_LONG, right, 0, 1, mixed, MPI_REPLACE, win));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Get_accumulate(&one, 1, MPI_LONG_LONG, &d, 1, MPI_DOUBLE, right,
						   0, 1, MPI_LONG_LONG, MPI_SUM, win));
	MPI_FAILS(MPI_ERR_TYPE,
		  MPI_Accumulate(&one, 2, MPI_LONG_LONG, right, 0, 1, uncommitted, MPI_SUM, win));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Accumulate(&one, 1, MPI_DATATYPE_NULL, right, 0, 1,
					       MPI_LONG_LONG, MPI_SUM, win));
	/* counts, sizes, ranks, range */
	MPI_FAILS(MPI_ERR_COUNT, MPI_Accumulate(&one, -1, MPI_LONG_LONG, right, 0, 1, MPI_LONG_LONG,
						MPI_SUM, win));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Get_accumulate(&one, 1, MPI_LONG_LONG, &res, -2, MPI_LONG_LONG,
						    right, 0, 1, MPI_LONG_LONG, MPI_SUM, win));
	MPI_FAILS(MPI_ERR_TRUNCATE,
		  MPI_Accumulate(ione, 4, MPI_INT, right, 0, 2, MPI_INT, MPI_SUM, win));
	MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Get_accumulate(ione, 4, MPI_INT, ires, 2, MPI_INT, right, 0,
						       4, MPI_INT, MPI_SUM, win));
	MPI_FAILS(MPI_ERR_RANK,
		  MPI_Accumulate(&one, 1, MPI_LONG_LONG, size, 0, 1, MPI_LONG_LONG, MPI_SUM, win));
	MPI_FAILS(MPI_ERR_RANK, MPI_Fetch_and_op(&one, &res, MPI_LONG_LONG, -4, 0, MPI_SUM, win));
	MPI_FAILS(MPI_ERR_RMA_RANGE,
		  MPI_Accumulate(&one, 1, MPI_LONG_LONG, right, N, 1, MPI_LONG_LONG, MPI_SUM, win));
	MPI_FAILS(MPI_ERR_RMA_RANGE,
		  MPI_Compare_and_swap(&one, &cmp, &res, MPI_LONG_LONG, right, N, win));
	MPI_FAILS(MPI_ERR_RMA_RANGE,
		  MPI_Fetch_and_op(&one, &res, MPI_LONG_LONG, right, N + 5, MPI_SUM, win));
	/* request-based forms need a passive-target epoch */
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Raccumulate(&one, 1, MPI_LONG_LONG, right, 0, 1,
						    MPI_LONG_LONG, MPI_SUM, win, &rq));
	MPI_FAILS(MPI_ERR_RMA_SYNC,
		  MPI_Rget_accumulate(&one, 1, MPI_LONG_LONG, &res, 1, MPI_LONG_LONG, right, 0, 1,
				      MPI_LONG_LONG, MPI_SUM, win, &rq));
	/* what is allowed: REPLACE and NO_OP on MPI_CHAR, PROC_NULL */
	MPI_OK(MPI_Accumulate(&c, 1, MPI_CHAR, right, 7, 1, MPI_CHAR, MPI_REPLACE, win));
	MPI_OK(MPI_Fetch_and_op(&one, &res, MPI_LONG_LONG, MPI_PROC_NULL, 0, MPI_SUM, win));
	MPI_OK(MPI_Compare_and_swap(&one, &cmp, &res, MPI_LONG_LONG, MPI_PROC_NULL, 0, win));
	MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, right, 1, 1, MPI_LONG_LONG, MPI_SUM, win));
	MPI_OK(MPI_Win_fence(0, win));
	CHECK(mem[1] == 1, "after the refused calls: mem[1] = %lld, expected 1", mem[1]);
	CHECK(mem[0] == 0, "a refused call changed mem[0] to %lld", mem[0]);
	CHECK(((char *)mem)[0] == 0, "a refused call changed byte 0");
	CHECK(((char *)&mem[7])[0] == 'x', "MPI_REPLACE on MPI_CHAR: byte is %d",
	      ((char *)&mem[7])[0]);
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Fetch_and_op(NULL, &cres, MPI_CHAR, right, 7, MPI_NO_OP, win));
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	CHECK(cres == 'x', "MPI_NO_OP on MPI_CHAR read %d", cres);

	/* request-based forms in a lock epoch: complete requests */
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
	MPI_OK(
	    MPI_Raccumulate(&one, 1, MPI_LONG_LONG, right, 2, 1, MPI_LONG_LONG, MPI_SUM, win, &rq));
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	MPI_OK(MPI_Rget_accumulate(&one, 1, MPI_LONG_LONG, &res, 1, MPI_LONG_LONG, right, 2, 1,
				   MPI_LONG_LONG, MPI_SUM, win, &rq));
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	CHECK(res == 1, "Rget_accumulate fetched %lld, expected 1", res);
	MPI_OK(MPI_Win_unlock(right, win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_sync(win));
	CHECK(mem[2] == 2, "request-based accumulates: mem[2] = %lld, expected 2", mem[2]);

	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Op_free(&user));
	MPI_OK(MPI_Type_free(&uncommitted));
	MPI_OK(MPI_Type_free(&vec));
	MPI_OK(MPI_Type_free(&mixed));
	MPI_OK(MPI_Win_free(&win));
	if (rank == 0)
		printf("rma_acc_errors: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
