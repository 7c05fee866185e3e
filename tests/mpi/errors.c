/* ibx-test: np=1,2,3 timeout=60 nodes=1 */
/*
 * errors — every invalid argument gets its MPI error class under
 * MPI_ERRORS_RETURN (never a crash), Error_class / Error_string describe
 * every class, and error handlers are chosen and called as MPI-3.1 §8.3
 * says: the communicator's own handler, MPI_COMM_WORLD's for errors without
 * a valid communicator, user handlers with (comm, code).
 */
#include "mpitest.h"

#include <limits.h>

static int handler_calls, handler_code;
static MPI_Comm handler_comm;

static void count_errors(MPI_Comm *comm, int *code, ...)
{
	handler_calls++;
	handler_code = *code;
	handler_comm = *comm;
}

static void test_strings(void)
{
	char s[MPI_MAX_ERROR_STRING], prev[MPI_MAX_ERROR_STRING] = "";
	int len, cls;

	for (int c = MPI_SUCCESS; c <= MPI_ERR_LASTCODE; c++) {
		memset(s, 0, sizeof(s));
		MPI_OK(MPI_Error_string(c, s, &len));
		CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (size_t)len == strlen(s),
		      "Error_string(%d): length %d for \"%s\"", c, len, s);
		CHECK(strcmp(s, prev) != 0, "classes %d and %d have the same string", c - 1, c);
		memcpy(prev, s, sizeof(s));
		MPI_OK(MPI_Error_class(c, &cls));
		CHECK(cls == c, "Error_class(%d) = %d", c, cls);
	}
	MPI_OK(MPI_Error_string(MPI_ERR_RANK, s, &len));
	CHECK(strstr(s, "MPI_ERR_RANK") && strstr(s, "rank"), "MPI_ERR_RANK string \"%s\"", s);
	MPI_OK(MPI_Error_string(MPI_ERR_TRUNCATE, s, &len));
	CHECK(strstr(s, "MPI_ERR_TRUNCATE") != NULL, "MPI_ERR_TRUNCATE string \"%s\"", s);
	MPI_OK(MPI_Error_string(MPI_SUCCESS, s, &len));
	CHECK(strstr(s, "MPI_SUCCESS") != NULL, "MPI_SUCCESS string \"%s\"", s);
	MPI_FAILS(MPI_ERR_ARG, MPI_Error_string(-1, s, &len));
	MPI_FAILS(MPI_ERR_ARG, MPI_Error_string(MPI_ERR_LASTCODE + 1, s, &len));
	MPI_FAILS(MPI_ERR_ARG, MPI_Error_class(10000, &cls));
	MPI_FAILS(MPI_ERR_ARG, MPI_Error_class(MPI_ERR_RANK, NULL));
}

static void test_p2p_args(int rank, int size)
{
	int buf[4] = {0}, flag, n;
	MPI_Request rq, stale;
	MPI_Status st;
	MPI_Comm W = MPI_COMM_WORLD;
	MPI_Datatype bogus_type = (MPI_Datatype)(void *)MPI_COMM_WORLD;
	MPI_Comm bogus_comm = (MPI_Comm)(void *)MPI_INT;

	/* rank */
	MPI_FAILS(MPI_ERR_RANK, MPI_Send(buf, 1, MPI_INT, size, 0, W));
	MPI_FAILS(MPI_ERR_RANK, MPI_Send(buf, 1, MPI_INT, -5, 0, W));
	MPI_FAILS(MPI_ERR_RANK, MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, W));
	MPI_FAILS(MPI_ERR_RANK, MPI_Ssend(buf, 1, MPI_INT, INT_MAX, 0, W));
	MPI_FAILS(MPI_ERR_RANK, MPI_Isend(buf, 1, MPI_INT, size + 3, 0, W, &rq));
	MPI_FAILS(MPI_ERR_RANK, MPI_Recv(buf, 1, MPI_INT, size, 0, W, &st));
	MPI_FAILS(MPI_ERR_RANK, MPI_Irecv(buf, 1, MPI_INT, -7, 0, W, &rq));
	MPI_FAILS(MPI_ERR_RANK, MPI_Probe(size, 0, W, &st));
	MPI_FAILS(MPI_ERR_RANK, MPI_Iprobe(-9, 0, W, &flag, &st));
	MPI_FAILS(MPI_ERR_RANK,
		  MPI_Sendrecv(buf, 1, MPI_INT, rank, 0, buf + 1, 1, MPI_INT, size, 0, W, &st));
	MPI_FAILS(MPI_ERR_RANK, MPI_Send(buf, 1, MPI_INT, 1, 0, MPI_COMM_SELF));
	/* tag */
	MPI_FAILS(MPI_ERR_TAG, MPI_Send(buf, 1, MPI_INT, rank, -1, W));
	MPI_FAILS(MPI_ERR_TAG, MPI_Send(buf, 1, MPI_INT, rank, MPI_ANY_TAG, W));
	MPI_FAILS(MPI_ERR_TAG, MPI_Isend(buf, 1, MPI_INT, rank, -100, W, &rq));
	MPI_FAILS(MPI_ERR_TAG, MPI_Recv(buf, 1, MPI_INT, rank, -2, W, &st));
	MPI_FAILS(MPI_ERR_TAG, MPI_Irecv(buf, 1, MPI_INT, rank, INT_MIN, W, &rq));
	MPI_FAILS(MPI_ERR_TAG, MPI_Iprobe(rank, -3, W, &flag, &st));
	MPI_FAILS(MPI_ERR_TAG, MPI_Sendrecv_replace(buf, 1, MPI_INT, rank, 0, rank, -4, W, &st));
	/* count */
	MPI_FAILS(MPI_ERR_COUNT, MPI_Send(buf, -1, MPI_INT, rank, 0, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Recv(buf, -1, MPI_INT, rank, 0, W, &st));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Irecv(buf, INT_MIN, MPI_INT, rank, 0, W, &rq));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Waitall(-1, &rq, MPI_STATUSES_IGNORE));
	/* datatype */
	MPI_FAILS(MPI_ERR_TYPE, MPI_Send(buf, 1, MPI_DATATYPE_NULL, rank, 0, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Send(buf, 1, bogus_type, rank, 0, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, rank, 0, W, &rq));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_size(MPI_DATATYPE_NULL, &n));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_size(bogus_type, &n));
	st.mpil_count = 0;
	MPI_FAILS(MPI_ERR_TYPE, MPI_Get_count(&st, MPI_DATATYPE_NULL, &n));
	/* communicator (raised on MPI_COMM_WORLD, whose handler returns) */
	MPI_FAILS(MPI_ERR_COMM, MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_COMM, MPI_Send(buf, 1, MPI_INT, 0, 0, bogus_comm));
	MPI_FAILS(MPI_ERR_COMM, MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st));
	MPI_FAILS(MPI_ERR_COMM, MPI_Irecv(buf, 1, MPI_INT, 0, 0, bogus_comm, &rq));
	MPI_FAILS(MPI_ERR_COMM, MPI_Comm_rank(MPI_COMM_NULL, &n));
	MPI_FAILS(MPI_ERR_COMM, MPI_Comm_size(bogus_comm, &n));
	MPI_FAILS(MPI_ERR_COMM, MPI_Probe(0, 0, MPI_COMM_NULL, &st));
	MPI_FAILS(MPI_ERR_COMM, MPI_Comm_set_errhandler(MPI_COMM_NULL, MPI_ERRORS_RETURN));
	/* buffer */
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Send(NULL, 5, MPI_INT, rank, 0, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Recv(NULL, 5, MPI_INT, rank, 0, W, &st));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Isend(NULL, 1, MPI_DOUBLE, rank, 0, W, &rq));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Send(MPI_IN_PLACE, 1, MPI_INT, rank, 0, W));
	/* NULL with count 0 is fine */
	MPI_OK(MPI_Sendrecv(NULL, 0, MPI_INT, rank, 3, NULL, 0, MPI_INT, rank, 3, W, &st));
	MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(n == 0, "empty message count %d", n);
	/* request */
	MPI_FAILS(MPI_ERR_ARG, MPI_Isend(buf, 1, MPI_INT, rank, 0, W, NULL));
	rq = (MPI_Request)(void *)MPI_COMM_WORLD;
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Wait(&rq, &st));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Test(&rq, &flag, &st));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Waitall(1, &rq, MPI_STATUSES_IGNORE));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Waitany(1, &rq, &n, &st));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Cancel(&rq));
	rq = MPI_REQUEST_NULL;
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Request_free(&rq));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Cancel(&rq));
	/* a handle that was already completed and freed */
	MPI_OK(MPI_Isend(buf, 1, MPI_INT, rank, 44, W, &rq));
	stale = rq;
	MPI_OK(MPI_Recv(buf + 1, 1, MPI_INT, rank, 44, W, &st));
	MPI_OK(MPI_Wait(&rq, &st));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Wait(&stale, &st));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Request_free(&stale));
	/* other arguments */
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_rank(W, NULL));
	MPI_FAILS(MPI_ERR_ARG, MPI_Wait(NULL, &st));
	MPI_FAILS(MPI_ERR_ARG, MPI_Get_count(NULL, MPI_INT, &n));
	MPI_FAILS(MPI_ERR_ARG, MPI_Iprobe(0, 0, W, NULL, &st));
	MPI_FAILS(MPI_ERR_ARG, MPI_Waitany(0, NULL, NULL, &st));
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_set_errhandler(W, MPI_ERRHANDLER_NULL));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_get_attr(W, 12345, &n, &flag));
	/* MPI_Init a second time */
	MPI_FAILS(MPI_ERR_OTHER, MPI_Init(NULL, NULL));
}

static void test_coll_args(int rank, int size)
{
	int a[4] = {1, 2, 3, 4}, b[4];
	MPI_Comm W = MPI_COMM_WORLD;
	MPI_Op bogus_op = (MPI_Op)(void *)MPI_INT;

	MPI_FAILS(MPI_ERR_COMM, MPI_Barrier(MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_ROOT, MPI_Bcast(a, 4, MPI_INT, size, W));
	MPI_FAILS(MPI_ERR_ROOT, MPI_Bcast(a, 4, MPI_INT, -1, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Bcast(a, -4, MPI_INT, 0, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Bcast(a, 4, MPI_DATATYPE_NULL, 0, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Bcast(NULL, 4, MPI_INT, 0, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(a, b, 4, MPI_INT, MPI_OP_NULL, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(a, b, 4, MPI_INT, bogus_op, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(a, b, 4, MPI_DOUBLE, MPI_BAND, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(a, b, 4, MPI_WCHAR, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_INT, MPI_MAXLOC, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(a, b, 4, MPI_INT, MPI_REPLACE, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Allreduce(a, b, -1, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Allreduce(a, b, 4, MPI_DATATYPE_NULL, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(a, a, 4, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(a, NULL, 4, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(NULL, b, 4, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(a, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM, W));
	/* after all that, a collective still works */
	MPI_OK(MPI_Allreduce(&rank, b, 1, MPI_INT, MPI_SUM, W));
	CHECK(b[0] == size * (size - 1) / 2, "Allreduce after errors: %d", b[0]);
}

static void test_handlers(int rank, int size)
{
	MPI_Errhandler eh, got;
	int buf = 0, rc;

	/* MPI_COMM_SELF has its own handler: returning errors there does
	 * not involve MPI_COMM_WORLD's. */
	MPI_OK(MPI_Comm_create_errhandler(count_errors, &eh));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
	MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
	CHECK(got == eh, "Comm_get_errhandler returned another handler");
	MPI_OK(MPI_Errhandler_free(&got));
	/* The communicator keeps the handler alive after the user frees it. */
	MPI_OK(MPI_Errhandler_free(&eh));
	CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free did not null the handle");

	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	handler_calls = 0;
	MPI_FAILS(MPI_ERR_RANK, MPI_Send(&buf, 1, MPI_INT, 5, 0, MPI_COMM_SELF));
	CHECK(handler_calls == 0, "an error on MPI_COMM_SELF called MPI_COMM_WORLD's handler");

	rc = MPI_Send(&buf, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD);
	CHECK(rc == MPI_ERR_RANK && handler_calls == 1 && handler_code == MPI_ERR_RANK &&
		  handler_comm == MPI_COMM_WORLD,
	      "user handler: rc %d calls %d code %d", rc, handler_calls, handler_code);
	/* no valid communicator: MPI_COMM_WORLD's handler */
	rc = MPI_Barrier(MPI_COMM_NULL);
	CHECK(rc == MPI_ERR_COMM && handler_calls == 2 && handler_code == MPI_ERR_COMM &&
		  handler_comm == MPI_COMM_WORLD,
	      "MPI_COMM_NULL error: rc %d calls %d code %d", rc, handler_calls, handler_code);
	MPI_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER));
	CHECK(handler_calls == 3 && handler_code == MPI_ERR_OTHER, "Comm_call_errhandler");

	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
	CHECK(got == MPI_ERRORS_RETURN, "handler is not MPI_ERRORS_RETURN");
	MPI_OK(MPI_Errhandler_free(&got));
	MPI_FAILS(MPI_ERR_RANK, MPI_Send(&buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD));
	CHECK(handler_calls == 3, "replaced handler still called");
	(void)rank;
}

int main(int argc, char **argv)
{
	int rank, size, v;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	test_strings();
	test_p2p_args(rank, size);
	test_coll_args(rank, size);
	test_handlers(rank, size);
	/* the library still works */
	MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 1, &v, 1, MPI_INT,
			    (rank - 1 + size) % size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	CHECK(v == (rank - 1 + size) % size, "ring after errors: %d", v);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("errors: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	/* calls after MPI_Finalize are errors, not crashes */
	MPI_FAILS(MPI_ERR_OTHER, MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
	int flag;

	MPI_OK(MPI_Finalized(&flag));
	CHECK(flag, "MPI_Finalized false after MPI_Finalize");
	return 0;
}
