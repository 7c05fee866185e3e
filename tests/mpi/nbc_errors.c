/* ibx-test: np=1,2,3,4 timeout=90 nodes=1 */
/*
 * nbc_errors — the nonblocking collectives' errors, under
 * MPI_ERRORS_RETURN:
 *
 *   - invalid arguments get the blocking forms' error classes
 *     (MPI_ERR_COMM, _ROOT, _COUNT, _TYPE, _OP, _BUFFER for MPI_IN_PLACE
 *     where MPI does not allow it and for overlapping buffers, _TOPOLOGY
 *     for a neighbourhood collective without a topology), and a NULL
 *     request pointer MPI_ERR_ARG; they go to the communicator's own
 *     handler; a call that failed its checks starts nothing, so a rank
 *     alone with a bad call does not put the next collective out of step;
 *   - MPI_Cancel on a collective's request is an error (MPI_ERR_REQUEST,
 *     on MPI_COMM_WORLD's handler, as in Open MPI; MPI-3.1 §5.12 calls it
 *     erroneous) and leaves the collective running to normal completion;
 *   - MPI_Request_free on an active one is allowed;
 *   - a transfer that fails underway (a receive shorter than the message:
 *     a broadcast whose counts do not match) completes the request with
 *     MPI_ERR_TRUNCATE, through MPI_Wait's return and, with Waitall,
 *     MPI_ERR_IN_STATUS and the status's MPI_ERROR.
 */
#include "mpitest.h"

static int rank, size, handler_calls;

static void count_errors(MPI_Comm *comm, int *code, ...)
{
	(void)comm;
	(void)code;
	handler_calls++;
}

/* Wrong on every rank alike. */
static void test_args(MPI_Comm W, int p)
{
	int a[64] = {0}, b[64] = {0}, cnt[16], dsp[16], neg[16];
	MPI_Datatype types[16];
	MPI_Request r = MPI_REQUEST_NULL;

	for (int i = 0; i < 16; i++) {
		cnt[i] = 1;
		dsp[i] = i;
		neg[i] = i == p - 1 ? -1 : 1;
		types[i] = MPI_INT;
	}
	MPI_FAILS(MPI_ERR_COMM, MPI_Ibarrier(MPI_COMM_NULL, &r));
	MPI_FAILS(MPI_ERR_ARG, MPI_Ibarrier(W, NULL));
	MPI_FAILS(MPI_ERR_ARG, MPI_Ibcast(a, 1, MPI_INT, 0, W, NULL));
	MPI_FAILS(MPI_ERR_ARG, MPI_Iallreduce(a, b, 1, MPI_INT, MPI_SUM, W, NULL));
	MPI_FAILS(MPI_ERR_ARG, MPI_Ialltoallw(a, cnt, dsp, types, b, cnt, dsp, types, W, NULL));
	MPI_FAILS(MPI_ERR_ROOT, MPI_Ibcast(a, 1, MPI_INT, p, W, &r));
	MPI_FAILS(MPI_ERR_ROOT, MPI_Ibcast(a, 1, MPI_INT, -1, W, &r));
	MPI_FAILS(MPI_ERR_ROOT, MPI_Ireduce(a, b, 1, MPI_INT, MPI_SUM, p, W, &r));
	MPI_FAILS(MPI_ERR_ROOT, MPI_Igather(a, 1, MPI_INT, b, 1, MPI_INT, -2, W, &r));
	MPI_FAILS(MPI_ERR_ROOT, MPI_Iscatterv(a, cnt, dsp, MPI_INT, b, 1, MPI_INT, p, W, &r));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Ibcast(a, -1, MPI_INT, 0, W, &r));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Iallreduce(a, b, -1, MPI_INT, MPI_SUM, W, &r));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Iscan(a, b, -3, MPI_INT, MPI_SUM, W, &r));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Iallgather(a, 1, MPI_INT, b, -1, MPI_INT, W, &r));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Ialltoallv(a, neg, dsp, MPI_INT, b, cnt, dsp, MPI_INT, W, &r));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Ireduce_scatter(a, b, neg, MPI_INT, MPI_SUM, W, &r));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Ireduce_scatter_block(a, b, -1, MPI_INT, MPI_SUM, W, &r));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Ibcast(a, 1, MPI_DATATYPE_NULL, 0, W, &r));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Ialltoall(a, 1, MPI_INT, b, 1, MPI_DATATYPE_NULL, W, &r));
	MPI_FAILS(MPI_ERR_OP, MPI_Iallreduce(a, b, 1, MPI_INT, MPI_OP_NULL, W, &r));
	MPI_FAILS(MPI_ERR_OP, MPI_Ireduce(a, b, 1, MPI_INT, MPI_REPLACE, 0, W, &r));
	MPI_FAILS(MPI_ERR_OP, MPI_Iexscan(a, b, 1, MPI_FLOAT, MPI_BAND, W, &r));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Iallreduce(a, a, 4, MPI_INT, MPI_SUM, W, &r));
	MPI_FAILS(MPI_ERR_BUFFER,
		  MPI_Ialltoallw(a, cnt, dsp, types, MPI_IN_PLACE, cnt, dsp, types, W, &r));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Ineighbor_allgather(a, 1, MPI_INT, b, 1, MPI_INT, W, &r));
	MPI_FAILS(MPI_ERR_TOPOLOGY,
		  MPI_Ineighbor_alltoallw(a, cnt, NULL, types, b, cnt, NULL, types, W, &r));
	CHECK(r == MPI_REQUEST_NULL, "a failed call set the request");
}

/* Wrong only where the root (or only a non-root) can see it: one rank
 * alone makes a bad call, and the next collective must still match. */
static void test_one_sided(void)
{
	int a[8] = {0}, b[64] = {0}, x = rank + 1, sum = 0;
	MPI_Request r;

	if (rank == size - 1) {
		if (size > 1)
			MPI_FAILS(MPI_ERR_BUFFER, MPI_Igather(MPI_IN_PLACE, 1, MPI_INT, b, 1,
							      MPI_INT, 0, MPI_COMM_WORLD, &r));
		MPI_FAILS(MPI_ERR_ROOT, MPI_Ibcast(a, 1, MPI_INT, size + 3, MPI_COMM_WORLD, &r));
	}
	MPI_OK(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
	MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK(sum == size * (size + 1) / 2, "Iallreduce after one rank's bad calls: %d", sum);
}

static void test_handler(void)
{
	MPI_Errhandler eh;
	MPI_Comm dup;
	MPI_Request r;
	int x = 0, y[16];

	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	MPI_OK(MPI_Comm_create_errhandler(count_errors, &eh));
	MPI_OK(MPI_Comm_set_errhandler(dup, eh));
	handler_calls = 0;
	MPI_Ibcast(&x, 1, MPI_INT, size, dup, &r);
	MPI_Iallreduce(&x, &x, 1, MPI_INT, MPI_SUM, dup, &r);
	MPI_Ialltoall(&x, 1, MPI_INT, y, -1, MPI_INT, dup, &r);
	MPI_Ibarrier(dup, NULL);
	CHECK(handler_calls == 4, "the communicator's handler ran %d times, not 4", handler_calls);
	MPI_OK(MPI_Errhandler_free(&eh));
	MPI_OK(MPI_Comm_free(&dup));
}

static void test_cancel_free(void)
{
	int in[4], out[4], flag = 1;
	MPI_Request r, keep;
	MPI_Status st;

	for (int i = 0; i < 4; i++)
		in[i] = rank + i;
	MPI_OK(MPI_Iallreduce(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
	keep = r;
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Cancel(&r));
	CHECK(r == keep, "MPI_Cancel changed the handle");
	MPI_OK(MPI_Wait(&r, &st));
	MPI_OK(MPI_Test_cancelled(&st, &flag));
	CHECK(!flag, "a collective reported as cancelled");
	for (int i = 0; i < 4; i++)
		CHECK(out[i] == size * (size - 1) / 2 + size * i, "Iallreduce after MPI_Cancel");
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Cancel(&r)); /* MPI_REQUEST_NULL now */

	/* freed while active: allowed, the collective ends on its own */
	MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r));
	MPI_OK(MPI_Request_free(&r));
	CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Rank 1 expects fewer elements than the root broadcasts. */
static void test_truncate(void)
{
	int buf[8] = {0};
	MPI_Request r[2];
	MPI_Status st[2];

	if (size < 2)
		return;
	for (int k = 0; k < 2; k++) {
		int n = rank == 1 ? 2 : 8, err;

		if (rank == 0)
			for (int i = 0; i < 8; i++)
				buf[i] = i;
		MPI_OK(MPI_Ibcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD, &r[0]));
		if (k == 0) {
			err = MPI_Wait(&r[0], &st[0]);
			if (rank == 1)
				MPI_FAILS(MPI_ERR_TRUNCATE, err);
			else
				MPI_OK(err);
			CHECK(r[0] == MPI_REQUEST_NULL, "a failed request was kept");
			continue;
		}
		MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r[1]));
		err = MPI_Waitall(2, r, st);
		if (rank == 1) {
			MPI_FAILS(MPI_ERR_IN_STATUS, err);
			CHECK(st[0].MPI_ERROR == MPI_ERR_TRUNCATE, "status error %d",
			      st[0].MPI_ERROR);
			CHECK(st[1].MPI_ERROR == MPI_SUCCESS, "status error %d", st[1].MPI_ERROR);
		} else {
			MPI_OK(err);
		}
	}
}

int main(int argc, char **argv)
{
	int x, sum;
	MPI_Request r;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	test_args(MPI_COMM_WORLD, size);
	test_args(MPI_COMM_SELF, 1);
	test_one_sided();
	test_handler();
	test_cancel_free();
	test_truncate();

	/* everything still works */
	x = rank + 1;
	MPI_OK(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
	MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK(sum == size * (size + 1) / 2, "Iallreduce after the errors: %d", sum);
	MPI_OK(MPI_Finalize());
	return 0;
}
