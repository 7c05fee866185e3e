/*
 * greq.c — generalized requests (MPI-3.1 §12.2): a request that the
 * program completes itself (MPI_Grequest_start, MPI_Grequest_complete),
 * for operations MPI does not know about, waited for and tested like any
 * other. Its three callbacks:
 *
 *   query_fn(extra, status)    when a Wait/Test/Request_get_status finds it
 *                              complete: fills the status; its return is the
 *                              request's error
 *   free_fn(extra)             when the request is released: by the
 *                              completion call, by MPI_Request_free of a
 *                              complete one, or by MPI_Grequest_complete
 *                              of a freed one; its error is that call's
 *   cancel_fn(extra, done)     on MPI_Cancel, with done = whether
 *                              MPI_Grequest_complete was called
 *
 * The request (MPIL_REQ_GREQ) moves nothing: MPI_Grequest_complete sets its
 * engine request's completed flag, which every wait loop watches, so a
 * thread blocked in MPI_Wait sees another thread's MPI_Grequest_complete
 * (the wait loops let other threads in between two polls).
 */
#include "p2p_int.h"

#include <stdlib.h>

struct mpil_greq {
	MPI_Grequest_query_function *query_fn;
	MPI_Grequest_free_function *free_fn;
	MPI_Grequest_cancel_function *cancel_fn;
	void *extra_state;
};

MPIL_PMPI_ALIAS(Grequest_start)
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
			MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
			MPI_Request *request)
{
	static const char F[] = "MPI_Grequest_start";
	MPIL_CS_GUARD();
	struct mpil_greq *g;
	mpil_request_t *r;

	MPIL_CHECK(mpil_check_init(F));
	if (!query_fn || !free_fn || !cancel_fn || !request)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL",
				!query_fn    ? "query_fn"
				: !free_fn   ? "free_fn"
				: !cancel_fn ? "cancel_fn"
					     : "request");
	g = malloc(sizeof(*g));
	r = g ? mpil_req_alloc() : NULL;
	if (!r) {
		free(g);
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for a request");
	}
	g->query_fn = query_fn;
	g->free_fn = free_fn;
	g->cancel_fn = cancel_fn;
	g->extra_state = extra_state;
	r->kind = MPIL_REQ_GREQ;
	r->comm = MPI_COMM_NULL; /* errors go to the default handler */
	r->greq = g;
	r->ibx.status = IBX_INPROGRESS;
	*request = r;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Grequest_complete)
int PMPI_Grequest_complete(MPI_Request request)
{
	static const char F[] = "MPI_Grequest_complete";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (!mpil_req_valid(request) || request->kind != MPIL_REQ_GREQ)
		return mpil_err(NULL, MPI_ERR_REQUEST, F, "not a generalized request: %p",
				(void *)request);
	if (request->ibx.completed)
		return mpil_err(NULL, MPI_ERR_REQUEST, F,
				"the generalized request is already complete");
	request->ibx.status = IBX_OK;
	__atomic_store_n(&request->ibx.completed, 1, __ATOMIC_RELEASE);
	/* freed by the program already: its free function runs now (the
	 * record goes with the next sweep of freed requests) */
	if (request->flags & MPIL_REQF_FREED) {
		int err = mpil_greq_free(request);

		if (err != MPI_SUCCESS)
			return mpil_greq_free_report(err, F);
	}
	return MPI_SUCCESS;
}

int mpil_greq_finish(mpil_request_t *r, MPI_Status *status)
{
	MPI_Status tmp;
	MPI_Status *st = status == MPI_STATUS_IGNORE ? &tmp : status;
	int e = st->MPI_ERROR, rc;

	/* freed by the program (MPI_Request_free): nobody asks for a status */
	if (r->flags & MPIL_REQF_FREED)
		return MPI_SUCCESS;
	/* what query_fn does not set: an empty status */
	mpil_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
	rc = r->greq->query_fn(r->greq->extra_state, st);
	st->MPI_ERROR = e; /* a single completion leaves it alone (request.c) */
	return rc;
}

int mpil_greq_report(int err, const char *fname)
{
	return mpil_err(NULL, err, fname,
			"the query function of a generalized request returned "
			"error %d",
			err);
}

int mpil_greq_cancel(mpil_request_t *r, const char *fname)
{
	int rc = r->greq->cancel_fn(r->greq->extra_state, r->ibx.completed != 0);

	if (rc != MPI_SUCCESS)
		return mpil_err(NULL, rc, fname,
				"the cancel function of a generalized request returned error %d",
				rc);
	return MPI_SUCCESS;
}

int mpil_greq_free(mpil_request_t *r)
{
	struct mpil_greq *g = r->greq;
	MPI_Grequest_free_function *fn = g ? g->free_fn : NULL;

	if (!fn)
		return MPI_SUCCESS;
	g->free_fn = NULL; /* once */
	return fn(g->extra_state);
}

int mpil_greq_free_report(int err, const char *fname)
{
	return mpil_err(NULL, err, fname,
			"the free function of a generalized request returned error %d", err);
}

void mpil_greq_release(mpil_request_t *r)
{
	struct mpil_greq *g = r->greq;

	if (!g)
		return;
	/* where no call can report its error (MPI_Finalize) */
	(void)mpil_greq_free(r);
	r->greq = NULL;
	free(g);
}

void mpil_greq_fini(mpil_request_t *r)
{
	if (!r->greq)
		return;
	if ((r->flags & MPIL_REQF_FREED) && r->ibx.completed) {
		mpil_greq_release(r);
		return;
	}
	free(r->greq);
	r->greq = NULL;
}
