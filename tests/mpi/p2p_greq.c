/* ibx-test: np=1,2 timeout=60 nodes=1 */
/*
 * p2p_greq — generalized requests (MPI_Grequest_start, _complete): the
 * request is not complete until the program says so (MPI_Test, MPI_
 * Request_get_status); once complete, MPI_Wait gets the status the query
 * function fills in (source, tag, elements, cancelled) and its error,
 * and the free function runs exactly once, after the query; MPI_Cancel
 * calls the cancel function with whether it was complete; MPI_Request_
 * free before completion runs only the free function, once the program
 * completes it; MPI_Waitall mixes it with a receive; a second thread
 * completes one while the main thread waits (MPI_THREAD_MULTIPLE); the
 * free function's error returned by the call that ran it; the argument
 * errors.
 */
#include "mpitest.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

static int rank, size;

typedef struct greq_state {
	int queries, frees, cancels, last_complete;
	int query_rc; /* what the query function returns */
	int free_rc;  /* what the free function returns */
	int order;    /* 1 when free ran after the last query */
} greq_state_t;

static int query_fn(void *extra, MPI_Status *st)
{
	greq_state_t *g = extra;

	g->queries++;
	g->order = 0;
	st->MPI_SOURCE = 42;
	st->MPI_TAG = 7;
	MPI_Status_set_elements(st, MPI_INT, 3);
	MPI_Status_set_cancelled(st, 0);
	return g->query_rc;
}

static int free_fn(void *extra)
{
	greq_state_t *g = extra;

	g->frees++;
	g->order = 1;
	return g->free_rc;
}

static int cancel_fn(void *extra, int complete)
{
	greq_state_t *g = extra;

	g->cancels++;
	g->last_complete = complete;
	return MPI_SUCCESS;
}

static void basic(void)
{
	greq_state_t g = {0};
	MPI_Request rq;
	MPI_Status st;
	int flag = 1, n;

	MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rq));
	MPI_OK(MPI_Test(&rq, &flag, &st));
	CHECK(!flag && rq != MPI_REQUEST_NULL, "incomplete generalized request tested complete");
	MPI_OK(MPI_Request_get_status(rq, &flag, &st));
	CHECK(!flag && g.queries == 0, "get_status before completion: flag %d, %d queries", flag,
	      g.queries);
	MPI_OK(MPI_Grequest_complete(rq));
	MPI_OK(MPI_Request_get_status(rq, &flag, &st));
	CHECK(flag && g.queries == 1 && g.frees == 0, "get_status: flag %d, %d queries, %d frees",
	      flag, g.queries, g.frees);
	MPI_OK(MPI_Wait(&rq, &st));
	CHECK(rq == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
	CHECK(g.queries == 2 && g.frees == 1 && g.order == 1,
	      "wait: %d queries, %d frees, order %d", g.queries, g.frees, g.order);
	MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(st.MPI_SOURCE == 42 && st.MPI_TAG == 7 && n == 3, "status %d/%d/%d", st.MPI_SOURCE,
	      st.MPI_TAG, n);
	MPI_OK(MPI_Test_cancelled(&st, &flag));
	CHECK(!flag, "cancelled");
	CHECK(g.cancels == 0, "cancel function called");
}

static void query_error(void)
{
	greq_state_t g = {.query_rc = MPI_ERR_OTHER};
	MPI_Request rq[2];
	MPI_Status st[2];
	int cls, err, x = rank, y = -1;

	/* alone: MPI_Wait returns the query function's error */
	MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rq[0]));
	MPI_OK(MPI_Grequest_complete(rq[0]));
	err = MPI_Wait(&rq[0], &st[0]);
	MPI_Error_class(err, &cls);
	CHECK(cls == MPI_ERR_OTHER, "query error: class %d", cls);
	CHECK(rq[0] == MPI_REQUEST_NULL && g.frees == 1, "failed wait: request %p, %d frees",
	      (void *)rq[0], g.frees);
	/* beside a receive in MPI_Waitall: MPI_ERR_IN_STATUS, each its own */
	memset(&g, 0, sizeof(g));
	g.query_rc = MPI_ERR_OTHER;
	MPI_OK(MPI_Irecv(&y, 1, MPI_INT, rank, 3, MPI_COMM_WORLD, &rq[0]));
	MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rq[1]));
	MPI_OK(MPI_Send(&x, 1, MPI_INT, rank, 3, MPI_COMM_WORLD));
	MPI_OK(MPI_Grequest_complete(rq[1]));
	err = MPI_Waitall(2, rq, st);
	MPI_Error_class(err, &cls);
	CHECK(cls == MPI_ERR_IN_STATUS, "waitall: class %d", cls);
	MPI_Error_class(st[1].MPI_ERROR, &cls);
	CHECK(st[0].MPI_ERROR == MPI_SUCCESS && cls == MPI_ERR_OTHER, "waitall errors %d, %d",
	      st[0].MPI_ERROR, st[1].MPI_ERROR);
	CHECK(y == rank && g.frees == 1, "waitall: y %d, %d frees", y, g.frees);
}

/* The free function's error is the error of the call that ran it (MPI-3.1
 * §12.2): MPI_Wait, MPI_Waitall (in its status), MPI_Request_free of a
 * complete request, MPI_Grequest_complete of a freed one. */
static void free_error(void)
{
	greq_state_t g = {.free_rc = MPI_ERR_INTERN};
	MPI_Request rq[2], keep;
	MPI_Status st[2];
	int cls, err;

	MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rq[0]));
	MPI_OK(MPI_Grequest_complete(rq[0]));
	err = MPI_Wait(&rq[0], &st[0]);
	MPI_Error_class(err, &cls);
	CHECK(cls == MPI_ERR_INTERN && rq[0] == MPI_REQUEST_NULL && g.frees == 1,
	      "wait, free error: class %d, %d frees", cls, g.frees);
	memset(&g, 0, sizeof(g));
	g.free_rc = MPI_ERR_INTERN;
	MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rq[0]));
	MPI_OK(MPI_Irecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq[1]));
	MPI_OK(MPI_Grequest_complete(rq[0]));
	err = MPI_Waitall(2, rq, st);
	MPI_Error_class(err, &cls);
	CHECK(cls == MPI_ERR_IN_STATUS, "waitall, free error: class %d", cls);
	MPI_Error_class(st[0].MPI_ERROR, &cls);
	CHECK(cls == MPI_ERR_INTERN && st[1].MPI_ERROR == MPI_SUCCESS && g.frees == 1,
	      "waitall, free error: statuses %d, %d; %d frees", st[0].MPI_ERROR, st[1].MPI_ERROR,
	      g.frees);
	memset(&g, 0, sizeof(g));
	g.free_rc = MPI_ERR_INTERN;
	MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rq[0]));
	MPI_OK(MPI_Grequest_complete(rq[0]));
	err = MPI_Request_free(&rq[0]);
	MPI_Error_class(err, &cls);
	CHECK(cls == MPI_ERR_INTERN && g.frees == 1, "request_free, free error: class %d", cls);
	memset(&g, 0, sizeof(g));
	g.free_rc = MPI_ERR_INTERN;
	MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rq[0]));
	keep = rq[0];
	MPI_OK(MPI_Request_free(&rq[0]));
	err = MPI_Grequest_complete(keep);
	MPI_Error_class(err, &cls);
	CHECK(cls == MPI_ERR_INTERN && g.frees == 1,
	      "grequest_complete of a freed one, free error: class %d, %d frees", cls, g.frees);
}

static void cancel_and_free(void)
{
	greq_state_t g = {0};
	MPI_Request rq, keep;

	MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rq));
	MPI_OK(MPI_Cancel(&rq));
	CHECK(g.cancels == 1 && g.last_complete == 0, "cancel before completion: %d, complete %d",
	      g.cancels, g.last_complete);
	MPI_OK(MPI_Grequest_complete(rq));
	MPI_OK(MPI_Cancel(&rq));
	CHECK(g.cancels == 2 && g.last_complete == 1, "cancel after completion: %d, complete %d",
	      g.cancels, g.last_complete);
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	CHECK(g.frees == 1 && g.queries == 1, "after wait: %d frees, %d queries", g.frees,
	      g.queries);
	/* freed before completion: no query, the free function once complete */
	memset(&g, 0, sizeof(g));
	MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rq));
	keep = rq;
	MPI_OK(MPI_Request_free(&rq));
	CHECK(rq == MPI_REQUEST_NULL && g.frees == 0, "freed active: %d frees", g.frees);
	MPI_OK(MPI_Grequest_complete(keep));
	/* "called ... in MPI_REQUEST_FREE or MPI_GREQUEST_COMPLETE, whichever
	 * happens last" */
	CHECK(g.frees == 1, "freed, then completed: %d frees", g.frees);
	{
		MPI_Request more[200];

		/* requests until the pool runs dry and sweeps the freed ones (or
		 * MPI_Finalize does): never a query for a freed one */
		for (int i = 0; i < 200; i++)
			MPI_OK(MPI_Irecv(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD,
					 &more[i]));
		MPI_OK(MPI_Waitall(200, more, MPI_STATUSES_IGNORE));
	}
	CHECK(g.queries == 0, "freed request queried %d times", g.queries);
	CHECK(g.frees <= 1, "free function ran %d times", g.frees);
	/* completed, then freed: the free function at once, no query */
	memset(&g, 0, sizeof(g));
	MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rq));
	MPI_OK(MPI_Grequest_complete(rq));
	MPI_OK(MPI_Request_free(&rq));
	CHECK(g.frees == 1 && g.queries == 0, "complete then freed: %d frees, %d queries", g.frees,
	      g.queries);
}

static void *completer(void *arg)
{
	struct timespec ts = {0, 20 * 1000 * 1000};

	nanosleep(&ts, NULL);
	MPI_OK(MPI_Grequest_complete(*(MPI_Request *)arg));
	return NULL;
}

static void other_thread(int provided)
{
	greq_state_t g = {0};
	MPI_Request rq, copy;
	pthread_t t;

	if (provided < MPI_THREAD_MULTIPLE)
		return;
	MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rq));
	copy = rq;
	CHECK(pthread_create(&t, NULL, completer, &copy) == 0, "pthread_create");
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	pthread_join(t, NULL);
	CHECK(g.queries == 1 && g.frees == 1, "threaded: %d queries, %d frees", g.queries, g.frees);
}

static void errors(void)
{
	greq_state_t g = {0};
	MPI_Request rq;
	int x, y;

	MPI_FAILS(MPI_ERR_ARG, MPI_Grequest_start(NULL, free_fn, cancel_fn, &g, &rq));
	MPI_FAILS(MPI_ERR_ARG, MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, NULL));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Grequest_complete(MPI_REQUEST_NULL));
	MPI_OK(MPI_Irecv(&y, 1, MPI_INT, rank, 4, MPI_COMM_WORLD, &rq));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Grequest_complete(rq)); /* not generalized */
	x = 1;
	MPI_OK(MPI_Send(&x, 1, MPI_INT, rank, 4, MPI_COMM_WORLD));
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rq));
	MPI_OK(MPI_Grequest_complete(rq));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Grequest_complete(rq)); /* twice */
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
	int provided;

	MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
	MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	mt_rank = rank;
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	basic();
	query_error();
	free_error();
	cancel_and_free();
	other_thread(provided);
	errors();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("p2p_greq: ok (%d ranks, thread level %d)\n", size, provided);
	MPI_OK(MPI_Finalize());
	return 0;
}
