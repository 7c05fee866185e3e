/* ibx-test: np=1,2 timeout=60 nodes=1 */
/*
 * p2p_persist_errors — the argument errors of the persistent-request calls
 * under MPI_ERRORS_RETURN: each MPI_*_init checks what its nonblocking twin
 * checks (count, type, rank, tag, communicator, buffer, request pointer);
 * MPI_Start and MPI_Startall refuse null, freed, non-persistent and active
 * requests with MPI_ERR_REQUEST (Startall then starts none of them); and a
 * user error handler on the communicator hears about it.
 */
#include "mpitest.h"

static int rank, size, handler_calls, handler_code;

static void count_errors(MPI_Comm *comm, int *code, ...)
{
	(void)comm;
	handler_calls++;
	handler_code = *code;
}

static void test_init_args(MPI_Comm comm)
{
	int x[4] = {0};
	MPI_Request rq = MPI_REQUEST_NULL;

	MPI_FAILS(MPI_ERR_COUNT, MPI_Send_init(x, -1, MPI_INT, 0, 0, comm, &rq));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Ssend_init(x, 1, MPI_DATATYPE_NULL, 0, 0, comm, &rq));
	MPI_FAILS(MPI_ERR_RANK, MPI_Rsend_init(x, 1, MPI_INT, size, 0, comm, &rq));
	MPI_FAILS(MPI_ERR_RANK, MPI_Bsend_init(x, 1, MPI_INT, MPI_ANY_SOURCE, 0, comm, &rq));
	MPI_FAILS(MPI_ERR_TAG, MPI_Send_init(x, 1, MPI_INT, 0, -1, comm, &rq));
	MPI_FAILS(MPI_ERR_COMM, MPI_Send_init(x, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &rq));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Send_init(NULL, 4, MPI_INT, 0, 0, comm, &rq));
	MPI_FAILS(MPI_ERR_ARG, MPI_Send_init(x, 1, MPI_INT, 0, 0, comm, NULL));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Recv_init(x, -2, MPI_INT, 0, 0, comm, &rq));
	MPI_FAILS(MPI_ERR_RANK, MPI_Recv_init(x, 1, MPI_INT, -7, 0, comm, &rq));
	MPI_FAILS(MPI_ERR_TAG, MPI_Recv_init(x, 1, MPI_INT, 0, -5, comm, &rq));
	MPI_FAILS(MPI_ERR_ARG, MPI_Recv_init(x, 1, MPI_INT, 0, 0, comm, NULL));
	CHECK(rq == MPI_REQUEST_NULL, "a failed init set the request");
	/* a zero count with a NULL buffer is fine */
	MPI_OK(MPI_Recv_init(NULL, 0, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &rq));
	MPI_OK(MPI_Request_free(&rq));
}

static void test_start_args(MPI_Comm comm)
{
	int x = 0, y = 0, flag;
	MPI_Request rq, r2[2], nb, freed, nul = MPI_REQUEST_NULL;

	MPI_FAILS(MPI_ERR_ARG, MPI_Start(NULL));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Start(&nul));
	/* a nonblocking (not persistent) request */
	MPI_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, comm, &nb));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Start(&nb));
	MPI_OK(MPI_Wait(&nb, MPI_STATUS_IGNORE));
	/* a freed one */
	MPI_OK(MPI_Recv_init(&x, 1, MPI_INT, 0, 1, comm, &rq));
	freed = rq;
	MPI_OK(MPI_Request_free(&rq));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Start(&freed));
	/* an active one: Start and Startall refuse it, nothing else starts */
	MPI_OK(MPI_Recv_init(&x, 1, MPI_INT, rank, 2, comm, &r2[0]));
	MPI_OK(MPI_Recv_init(&y, 1, MPI_INT, rank, 3, comm, &r2[1]));
	MPI_OK(MPI_Start(&r2[0]));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Start(&r2[0]));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Startall(2, r2));
	MPI_OK(MPI_Test(&r2[1], &flag, MPI_STATUS_IGNORE));
	CHECK(flag, "Startall started a request although another was active");
	/* the same request twice in one Startall */
	MPI_OK(MPI_Request_free(&r2[1]));
	r2[1] = r2[0];
	MPI_OK(MPI_Cancel(&r2[0]));
	MPI_OK(MPI_Wait(&r2[0], MPI_STATUS_IGNORE));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Startall(2, r2));
	MPI_OK(MPI_Cancel(&r2[0]));
	MPI_OK(MPI_Wait(&r2[0], MPI_STATUS_IGNORE));
	MPI_OK(MPI_Request_free(&r2[0]));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Startall(-1, r2));
	MPI_FAILS(MPI_ERR_ARG, MPI_Startall(1, NULL));
	MPI_OK(MPI_Startall(0, NULL));
	/* Request_free of MPI_REQUEST_NULL */
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Request_free(&nul));
}

/* A user handler on the communicator of the request hears MPI_Start's
 * error. */
static void test_handler(void)
{
	MPI_Comm dup;
	MPI_Errhandler eh;
	MPI_Request rq;
	int x = 0;

	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	MPI_OK(MPI_Comm_create_errhandler(count_errors, &eh));
	MPI_OK(MPI_Comm_set_errhandler(dup, eh));
	MPI_OK(MPI_Recv_init(&x, 1, MPI_INT, rank, 9, dup, &rq));
	MPI_OK(MPI_Start(&rq));
	handler_calls = 0;
	(void)MPI_Start(&rq);
	CHECK(handler_calls == 1, "user handler called %d times", handler_calls);
	CHECK(handler_code != MPI_SUCCESS, "handler got MPI_SUCCESS");
	MPI_OK(MPI_Cancel(&rq));
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	MPI_OK(MPI_Request_free(&rq));
	MPI_OK(MPI_Errhandler_free(&eh));
	MPI_OK(MPI_Comm_free(&dup));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	test_init_args(MPI_COMM_WORLD);
	test_start_args(MPI_COMM_WORLD);
	test_handler();
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("p2p_persist_errors: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
