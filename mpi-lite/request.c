/*
 * request.c — nonblocking requests: the pool they come from, and their
 * completion (MPI_Wait/Test and friends, MPI_Request_free, MPI_Cancel).
 *
 * A request embeds the engine's ibx_request_t, which must not move until the
 * engine has completed it, so requests live in chunks that are never moved
 * or freed before MPI_Finalize, and are recycled through a free list (no
 * malloc per MPI_Isend/MPI_Irecv once warm).
 *
 * Life of a request:
 *
 *   mpil_req_alloc ─► started (ibx_tag_send/recv) ─► engine completes it
 *        ─► MPI_Wait/Test: mpil_req_finish (status, unpack) ─► mpil_req_release
 *
 * MPI_Request_free on an active request cannot release it while the engine
 * still owns the ibx_request_t: it goes on a zombie list, swept (finished and
 * released once complete) whenever the pool needs a request.
 *
 * A persistent request (p2p_persist.c) is the same object, started again
 * and again; completing it makes it inactive instead of releasing it:
 *
 *   MPI_*_init ─► inactive ──MPI_Start──► active ──Wait/Test completes it──► inactive
 *                    │                    │
 *                    │ Request_free:      │ Request_free: a zombie, released
 *                    ▼ released at once   ▼ once complete (as above)
 *
 * Every completion call treats an inactive request like MPI_REQUEST_NULL
 * (empty status, MPI_UNDEFINED when nothing else is active) but leaves the
 * handle as it is.
 *
 * A nonblocking collective's request (MPIL_REQ_NBC) is completed by its
 * schedule (nbc.c), which runs whenever the engine progresses; a
 * send-receive's (MPIL_REQ_PAIR) by the last of its two parts
 * (p2p_isendrecv.c); a generalized request's (MPIL_REQ_GREQ) by the
 * program (greq.c).
 *
 * Length: just over 700 lines: every Wait/Test form shares the pool, the
 * finishing and retiring steps and the multi-completion error record above
 * them; split, those would all have to be exported.
 */
#include "nbc_int.h"
#include "p2p_int.h"

#include <stdlib.h>

#define REQ_CHUNK 64

struct mpil_req_chunk {
	struct mpil_req_chunk *next;
	mpil_request_t reqs[REQ_CHUNK];
};

/* Finishes and releases the freed requests that have completed. */
static void req_sweep_zombies(void)
{
	mpil_request_t **pp = &mpil_g.req_zombies;

	while (*pp) {
		mpil_request_t *r = *pp;

		if (mpil_req_done(r)) {
			*pp = r->next;
			mpil_req_finish(r, MPI_STATUS_IGNORE);
			mpil_req_release(r);
		} else {
			pp = &r->next;
		}
	}
}

static int req_pool_grow(void)
{
	struct mpil_req_chunk *c = calloc(1, sizeof(*c));

	if (!c)
		return MPI_ERR_NO_MEM;
	c->next = mpil_g.req_chunks;
	mpil_g.req_chunks = c;
	for (int i = REQ_CHUNK - 1; i >= 0; i--) {
		c->reqs[i].magic = MPIL_MAGIC_DEAD;
		c->reqs[i].next = mpil_g.req_free;
		mpil_g.req_free = &c->reqs[i];
	}
	return MPI_SUCCESS;
}

mpil_request_t *mpil_req_alloc(void)
{
	mpil_request_t *r = mpil_g.req_free;

	if (ibx_unlikely(!r)) {
		req_sweep_zombies();
		if (!mpil_g.req_free && req_pool_grow() != MPI_SUCCESS)
			return NULL;
		r = mpil_g.req_free;
	}
	mpil_g.req_free = r->next;
	r->magic = MPIL_MAGIC_REQ;
	r->flags = 0;
	r->tmpbuf = NULL;
	r->ubuf = NULL;
	r->dtype = NULL;
	r->next = NULL;
	r->persist = NULL;
	r->ibx.completed = 0;
	r->ibx.cb = NULL;
	return r;
}

/* A persistent request's arguments, with what a persistent collective keeps. */
static void persist_free(struct mpil_persist *p)
{
	if (p && p->extra_free)
		p->extra_free(p->extra);
	free(p);
}

void mpil_req_release(mpil_request_t *req)
{
	if (req->kind == MPIL_REQ_PAIR)
		mpil_pair_release_parts(req);
	else if (req->kind == MPIL_REQ_GREQ)
		mpil_greq_release(req);
	free(req->tmpbuf);
	req->tmpbuf = NULL;
	persist_free(req->persist);
	req->persist = NULL;
	if (req->flags & MPIL_REQF_HOLDS) {
		if (req->dtype)
			mpil_dt_release(req->dtype);
		mpil_comm_release(req->comm);
	}
	req->flags = 0;
	req->dtype = NULL;
	req->magic = MPIL_MAGIC_DEAD;
	req->next = mpil_g.req_free;
	mpil_g.req_free = req;
}

void mpil_req_pool_fini(void)
{
	struct mpil_req_chunk *c, *next;

	for (c = mpil_g.req_chunks; c; c = next) {
		next = c->next;
		for (int i = 0; i < REQ_CHUNK; i++) {
			free(c->reqs[i].tmpbuf);
			persist_free(c->reqs[i].persist);
			if (c->reqs[i].kind == MPIL_REQ_GREQ)
				mpil_greq_fini(&c->reqs[i]);
		}
		free(c);
	}
	mpil_g.req_chunks = NULL;
	mpil_g.req_free = NULL;
	mpil_g.req_zombies = NULL;
}

int mpil_req_finish(mpil_request_t *req, MPI_Status *status)
{
	const ibx_request_t *x = &req->ibx;

	switch (req->kind) {
	case MPIL_REQ_DONE:
		if (status != MPI_STATUS_IGNORE) {
			int e = status->MPI_ERROR;

			*status = req->preset;
			status->MPI_ERROR = e;
		}
		return MPI_SUCCESS;
	case MPIL_REQ_SEND:
		if (status != MPI_STATUS_IGNORE) {
			status->mpil_count = 0;
			status->mpil_cancelled = 0;
		}
		return mpil_err_from_ibx(x->status);
	case MPIL_REQ_NBC: /* the schedule's error class; an empty status */
		mpil_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
		return req->preset.MPI_ERROR;
	case MPIL_REQ_PAIR: return mpil_pair_finish(req, status);
	case MPIL_REQ_GREQ: return mpil_greq_finish(req, status);
	default: break;
	}
	if (x->status == IBX_ERR_CANCELED) {
		if (status != MPI_STATUS_IGNORE) {
			mpil_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
			status->mpil_cancelled = 1;
		}
		return MPI_SUCCESS;
	}
	if (x->status != IBX_OK && x->status != IBX_ERR_TRUNCATED) {
		if (status != MPI_STATUS_IGNORE)
			status->mpil_count = 0;
		return mpil_err_from_ibx(x->status);
	}
	if (req->tmpbuf) {
		size_t got = x->length < x->buflen ? x->length : x->buflen;

		mpil_dt_unpack(req->dtype, req->tmpbuf, got, req->ubuf);
		free(req->tmpbuf);
		req->tmpbuf = NULL;
	}
	mpil_status_from_ibx(status, req->comm, x);
	return mpil_err_from_ibx(x->status);
}

int mpil_err_ibx(MPI_Comm comm, const char *fname, ibx_status_t st, bool send, int peer)
{
	int err = mpil_err_from_ibx(st);
	const char *what = send ? "send to" : "receive from";

	if (peer == MPI_ANY_SOURCE)
		return mpil_err(comm, err, fname, "%s any source failed: %s", what,
				ibx_status_str(st));
	return mpil_err(comm, err, fname, "%s rank %d failed: %s", what, peer, ibx_status_str(st));
}

int mpil_err_req(MPI_Comm comm, bool send, const ibx_request_t *x, int err, const char *fname)
{
	if (err == MPI_ERR_TRUNCATE)
		return mpil_err(comm, err, fname,
				"message of %zu bytes from rank %d truncated to a %zu-byte buffer",
				x->length, mpil_comm_from_world(comm, x->source), x->buflen);
	if (send)
		return mpil_err_ibx(comm, fname, x->status, true,
				    mpil_comm_from_world(comm, x->peer));
	return mpil_err_ibx(comm, fname, x->status, false,
			    x->peer == IBX_ANY_SOURCE ? MPI_ANY_SOURCE
						      : mpil_comm_from_world(comm, x->peer));
}

static int req_report(mpil_request_t *req, int err, const char *fname)
{
	if (req->kind == MPIL_REQ_NBC)
		return mpil_coll_failed(req->comm, err, fname);
	if (req->kind == MPIL_REQ_PAIR)
		return mpil_pair_report(req, err, fname);
	if (req->kind == MPIL_REQ_GREQ)
		return mpil_greq_report(err, fname);
	return mpil_err_req(req->comm, req->kind == MPIL_REQ_SEND, &req->ibx, err, fname);
}

/* ---- argument checks ------------------------------------------------------------ */

static int check_req(MPI_Request req, const char *fname)
{
	if (ibx_likely(req == MPI_REQUEST_NULL || req->magic == MPIL_MAGIC_REQ))
		return MPI_SUCCESS;
	return mpil_err(NULL, MPI_ERR_REQUEST, fname, "invalid request handle %p", (void *)req);
}

static int check_req_array(int count, MPI_Request reqs[], const char *fname)
{
	if (count < 0)
		return mpil_err(NULL, MPI_ERR_COUNT, fname, "negative count %d", count);
	if (count > 0 && !reqs)
		return mpil_err(NULL, MPI_ERR_ARG, fname, "array_of_requests is NULL");
	for (int i = 0; i < count; i++) {
		if (ibx_unlikely(reqs[i] != MPI_REQUEST_NULL && reqs[i]->magic != MPIL_MAGIC_REQ))
			return mpil_err(NULL, MPI_ERR_REQUEST, fname,
					"invalid request handle %p at index %d", (void *)reqs[i],
					i);
	}
	return MPI_SUCCESS;
}

/* MPI_REQUEST_NULL, or an inactive persistent request: nothing to complete. */
static inline bool req_idle(MPI_Request r)
{
	return r == MPI_REQUEST_NULL || mpil_req_inactive(r);
}

/* A finished request leaves the user's hands (released, handle nulled),
 * except a persistent one, which becomes inactive and stays the user's.
 * Returns what a generalized request's free function returned. */
static inline int req_retire(MPI_Request *handle)
{
	mpil_request_t *r = *handle;
	int err = MPI_SUCCESS;

	if (r->persist) {
		r->persist->active = false;
		return MPI_SUCCESS;
	}
	if (ibx_unlikely(r->kind == MPIL_REQ_GREQ))
		err = mpil_greq_free(r);
	mpil_req_release(r);
	*handle = MPI_REQUEST_NULL;
	return err;
}

int mpil_req_complete(MPI_Request *handle, MPI_Status *status, const char *fname)
{
	mpil_request_t *r = *handle;
	int err = mpil_req_finish(r, status);
	int freed;

	if (ibx_unlikely(err != MPI_SUCCESS))
		err = req_report(r, err, fname);
	freed = req_retire(handle);
	if (ibx_unlikely(freed != MPI_SUCCESS) && err == MPI_SUCCESS)
		err = mpil_greq_free_report(freed, fname);
	return err;
}

/* ---- single request --------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Wait)
int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
	static const char F[] = "MPI_Wait";
	MPIL_CS_GUARD();
	mpil_request_t *r;

	MPIL_CHECK(mpil_check_init(F));
	if (ibx_unlikely(!request))
		return mpil_err(NULL, MPI_ERR_ARG, F, "request is NULL");
	r = *request;
	if (r == MPI_REQUEST_NULL) {
		mpil_status_empty(status);
		return MPI_SUCCESS;
	}
	MPIL_CHECK(check_req(r, F));
	if (ibx_unlikely(mpil_req_inactive(r))) {
		mpil_status_empty(status);
		return MPI_SUCCESS;
	}
	if (r->kind != MPIL_REQ_DONE)
		mpil_ibx_wait(&r->ibx);
	return mpil_req_complete(request, status, F);
}

MPIL_PMPI_ALIAS(Test)
int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	static const char F[] = "MPI_Test";
	MPIL_CS_GUARD();
	mpil_request_t *r;

	MPIL_CHECK(mpil_check_init(F));
	if (ibx_unlikely(!request || !flag))
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL", request ? "flag" : "request");
	r = *request;
	if (r == MPI_REQUEST_NULL) {
		*flag = 1;
		mpil_status_empty(status);
		return MPI_SUCCESS;
	}
	MPIL_CHECK(check_req(r, F));
	if (ibx_unlikely(mpil_req_inactive(r))) {
		*flag = 1;
		mpil_status_empty(status);
		return MPI_SUCCESS;
	}
	if (!mpil_req_done(r)) {
		ibx_progress(mpil_g.ctx);
		if (!mpil_req_done(r)) {
			*flag = 0;
			return MPI_SUCCESS;
		}
	}
	atomic_thread_fence(memory_order_acquire);
	*flag = 1;
	return mpil_req_complete(request, status, F);
}

MPIL_PMPI_ALIAS(Request_get_status)
int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
	static const char F[] = "MPI_Request_get_status";
	MPIL_CS_GUARD();
	int err;

	MPIL_CHECK(mpil_check_init(F));
	if (!flag)
		return mpil_err(NULL, MPI_ERR_ARG, F, "flag is NULL");
	if (request == MPI_REQUEST_NULL) {
		*flag = 1;
		mpil_status_empty(status);
		return MPI_SUCCESS;
	}
	MPIL_CHECK(check_req(request, F));
	if (mpil_req_inactive(request)) {
		*flag = 1;
		mpil_status_empty(status);
		return MPI_SUCCESS;
	}
	if (!mpil_req_done(request))
		ibx_progress(mpil_g.ctx);
	if (!mpil_req_done(request)) {
		*flag = 0;
		return MPI_SUCCESS;
	}
	atomic_thread_fence(memory_order_acquire);
	*flag = 1;
	/* Finishing twice is harmless: the unpack happens once. */
	err = mpil_req_finish(request, status);
	return err == MPI_SUCCESS ? MPI_SUCCESS : req_report(request, err, F);
}

MPIL_PMPI_ALIAS(Request_free)
int PMPI_Request_free(MPI_Request *request)
{
	static const char F[] = "MPI_Request_free";
	MPIL_CS_GUARD();
	mpil_request_t *r;
	int err = MPI_SUCCESS;

	MPIL_CHECK(mpil_check_init(F));
	if (!request)
		return mpil_err(NULL, MPI_ERR_ARG, F, "request is NULL");
	r = *request;
	if (r == MPI_REQUEST_NULL)
		return mpil_err(NULL, MPI_ERR_REQUEST, F, "request is MPI_REQUEST_NULL");
	MPIL_CHECK(check_req(r, F));
	if (mpil_req_inactive(r)) {
		mpil_req_release(r);
	} else if (mpil_req_done(r)) {
		r->flags |= MPIL_REQF_FREED; /* (a generalized request's status is not asked for) */
		mpil_req_finish(r, MPI_STATUS_IGNORE);
		err = r->kind == MPIL_REQ_GREQ ? mpil_greq_free(r) : MPI_SUCCESS;
		mpil_req_release(r);
	} else {
		r->flags |= MPIL_REQF_FREED;
		r->next = mpil_g.req_zombies;
		mpil_g.req_zombies = r;
	}
	*request = MPI_REQUEST_NULL;
	return err == MPI_SUCCESS ? MPI_SUCCESS : mpil_greq_free_report(err, F);
}

MPIL_PMPI_ALIAS(Cancel)
int PMPI_Cancel(MPI_Request *request)
{
	static const char F[] = "MPI_Cancel";
	MPIL_CS_GUARD();
	mpil_request_t *r;

	MPIL_CHECK(mpil_check_init(F));
	if (!request)
		return mpil_err(NULL, MPI_ERR_ARG, F, "request is NULL");
	r = *request;
	if (r == MPI_REQUEST_NULL)
		return mpil_err(NULL, MPI_ERR_REQUEST, F, "request is MPI_REQUEST_NULL");
	MPIL_CHECK(check_req(r, F));
	/* MPI-3.1 §5.12: erroneous for a nonblocking collective; it runs on
	 * (Open MPI's answer, MPI_ERR_REQUEST). */
	if (r->kind == MPIL_REQ_NBC)
		return mpil_err(NULL, MPI_ERR_REQUEST, F,
				"a nonblocking collective cannot be cancelled");
	/* A receive not matched yet is withdrawn; anything else (a send, a
	 * matched receive) completes normally and MPI_Test_cancelled says
	 * false, which MPI-3.1 §3.8.4 allows. An inactive persistent request
	 * has nothing to cancel (as in Open MPI). */
	if (!mpil_req_inactive(r) && r->kind == MPIL_REQ_RECV && !r->ibx.completed)
		(void)ibx_request_cancel(mpil_g.ctx, &r->ibx);
	if (r->kind == MPIL_REQ_GREQ)
		return mpil_greq_cancel(r, F);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Test_cancelled)
int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
	static const char F[] = "MPI_Test_cancelled";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (!status || !flag)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL", status ? "flag" : "status");
	*flag = status->mpil_cancelled != 0;
	return MPI_SUCCESS;
}

/* ---- arrays of requests -------------------------------------------------------------- */

/*
 * Multiple-completion calls record each request's error in its status and
 * return MPI_ERR_IN_STATUS; the handler hears about the first failure.
 */
typedef struct multi_err {
	MPI_Comm comm; /* the first failed request's (NULL: a generalized one) */
	int index;
	int err; /* MPI_SUCCESS while nothing failed */
} multi_err_t;

static void complete_in_array(MPI_Request reqs[], int i, MPI_Status *status, multi_err_t *me)
{
	mpil_request_t *r = reqs[i];
	MPI_Comm comm = r->comm;
	int err = mpil_req_finish(r, status);
	int freed = req_retire(&reqs[i]);

	if (err == MPI_SUCCESS)
		err = freed;
	if (status != MPI_STATUS_IGNORE)
		status->MPI_ERROR = err;
	if (err != MPI_SUCCESS && me->err == MPI_SUCCESS) {
		me->comm = comm;
		me->index = i;
		me->err = err;
	}
}

static int multi_result(const multi_err_t *me, const char *fname)
{
	if (ibx_likely(me->err == MPI_SUCCESS))
		return MPI_SUCCESS;
	return mpil_err(me->comm, MPI_ERR_IN_STATUS, fname,
			"request %d failed with %s (each status holds its request's error)",
			me->index, mpil_err_class_name(me->err));
}

MPIL_PMPI_ALIAS(Waitall)
int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
	static const char F[] = "MPI_Waitall";
	MPIL_CS_GUARD();
	multi_err_t me = {NULL, 0, MPI_SUCCESS};

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(check_req_array(count, array_of_requests, F));
	for (int i = 0; i < count; i++) {
		mpil_request_t *r = array_of_requests[i];

		if (!req_idle(r) && r->kind != MPIL_REQ_DONE)
			mpil_ibx_wait(&r->ibx);
	}
	for (int i = 0; i < count; i++) {
		MPI_Status *st = array_of_statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE
									  : &array_of_statuses[i];

		if (req_idle(array_of_requests[i]))
			mpil_status_empty(st);
		else
			complete_in_array(array_of_requests, i, st, &me);
	}
	return multi_result(&me, F);
}

MPIL_PMPI_ALIAS(Testall)
int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
		 MPI_Status array_of_statuses[])
{
	static const char F[] = "MPI_Testall";
	MPIL_CS_GUARD();
	multi_err_t me = {NULL, 0, MPI_SUCCESS};

	MPIL_CHECK(mpil_check_init(F));
	if (!flag)
		return mpil_err(NULL, MPI_ERR_ARG, F, "flag is NULL");
	MPIL_CHECK(check_req_array(count, array_of_requests, F));
	ibx_progress(mpil_g.ctx);
	for (int i = 0; i < count; i++) {
		mpil_request_t *r = array_of_requests[i];

		if (!req_idle(r) && !mpil_req_done(r)) {
			*flag = 0;
			return MPI_SUCCESS;
		}
	}
	atomic_thread_fence(memory_order_acquire);
	*flag = 1;
	for (int i = 0; i < count; i++) {
		MPI_Status *st = array_of_statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE
									  : &array_of_statuses[i];

		if (req_idle(array_of_requests[i]))
			mpil_status_empty(st);
		else
			complete_in_array(array_of_requests, i, st, &me);
	}
	return multi_result(&me, F);
}

/* Index of a done request in reqs[], -1 if none is, MPI_UNDEFINED if no
 * request is active. */
static int find_done(int count, MPI_Request reqs[])
{
	bool active = false;

	for (int i = 0; i < count; i++) {
		if (req_idle(reqs[i]))
			continue;
		if (mpil_req_done(reqs[i]))
			return i;
		active = true;
	}
	return active ? -1 : MPI_UNDEFINED;
}

MPIL_PMPI_ALIAS(Waitany)
int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
	static const char F[] = "MPI_Waitany";
	MPIL_CS_GUARD();
	unsigned idle = 0;
	int i;

	MPIL_CHECK(mpil_check_init(F));
	if (!index)
		return mpil_err(NULL, MPI_ERR_ARG, F, "index is NULL");
	MPIL_CHECK(check_req_array(count, array_of_requests, F));
	while ((i = find_done(count, array_of_requests)) == -1)
		ibx_progress_wait(mpil_g.ctx, &idle);
	*index = i;
	if (i == MPI_UNDEFINED) {
		mpil_status_empty(status);
		return MPI_SUCCESS;
	}
	atomic_thread_fence(memory_order_acquire);
	return mpil_req_complete(&array_of_requests[i], status, F);
}

MPIL_PMPI_ALIAS(Testany)
int PMPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
		 MPI_Status *status)
{
	static const char F[] = "MPI_Testany";
	MPIL_CS_GUARD();
	int i;

	MPIL_CHECK(mpil_check_init(F));
	if (!index || !flag)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL", index ? "flag" : "index");
	MPIL_CHECK(check_req_array(count, array_of_requests, F));
	i = find_done(count, array_of_requests);
	if (i == -1) {
		ibx_progress(mpil_g.ctx);
		i = find_done(count, array_of_requests);
	}
	if (i == -1) {
		*flag = 0;
		*index = MPI_UNDEFINED;
		return MPI_SUCCESS;
	}
	*flag = 1;
	*index = i;
	if (i == MPI_UNDEFINED) {
		mpil_status_empty(status);
		return MPI_SUCCESS;
	}
	atomic_thread_fence(memory_order_acquire);
	return mpil_req_complete(&array_of_requests[i], status, F);
}

/* Completes every done request of reqs[]; *outcount = how many, or
 * MPI_UNDEFINED when none is active. Returns an MPI error class. */
static int some_collect(int incount, MPI_Request reqs[], int *outcount, int indices[],
			MPI_Status statuses[], const char *fname)
{
	multi_err_t me = {NULL, 0, MPI_SUCCESS};
	bool active = false;
	int n = 0;

	atomic_thread_fence(memory_order_acquire);
	for (int i = 0; i < incount; i++) {
		if (req_idle(reqs[i]))
			continue;
		active = true;
		if (!mpil_req_done(reqs[i]))
			continue;
		MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];

		indices[n++] = i;
		complete_in_array(reqs, i, st, &me);
	}
	*outcount = active ? n : MPI_UNDEFINED;
	return multi_result(&me, fname);
}

static int check_some_args(int incount, MPI_Request reqs[], int *outcount, int indices[],
			   const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	if (!outcount || (incount > 0 && !indices))
		return mpil_err(NULL, MPI_ERR_ARG, fname, "%s is NULL",
				outcount ? "array_of_indices" : "outcount");
	return check_req_array(incount, reqs, fname);
}

MPIL_PMPI_ALIAS(Waitsome)
int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
		  int array_of_indices[], MPI_Status array_of_statuses[])
{
	static const char F[] = "MPI_Waitsome";
	MPIL_CS_GUARD();
	unsigned idle = 0;

	MPIL_CHECK(check_some_args(incount, array_of_requests, outcount, array_of_indices, F));
	while (find_done(incount, array_of_requests) == -1)
		ibx_progress_wait(mpil_g.ctx, &idle);
	return some_collect(incount, array_of_requests, outcount, array_of_indices,
			    array_of_statuses, F);
}

MPIL_PMPI_ALIAS(Testsome)
int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
		  int array_of_indices[], MPI_Status array_of_statuses[])
{
	static const char F[] = "MPI_Testsome";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_some_args(incount, array_of_requests, outcount, array_of_indices, F));
	ibx_progress(mpil_g.ctx);
	return some_collect(incount, array_of_requests, outcount, array_of_indices,
			    array_of_statuses, F);
}
