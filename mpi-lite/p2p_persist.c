/*
 * p2p_persist.c — persistent requests (MPI-3.1 §3.9): MPI_Send_init,
 * MPI_Bsend_init, MPI_Ssend_init, MPI_Rsend_init, MPI_Recv_init, MPI_Start
 * and MPI_Startall.
 *
 * A persistent request is an ordinary pool request (request.c) that also
 * carries the arguments of its operation (struct mpil_persist, p2p_int.h)
 * and holds its communicator and datatype for its whole life. Each
 * MPI_Start runs the same start function a nonblocking call uses on the
 * request's own embedded engine request, so Wait/Test complete it like any
 * other; they then leave it inactive instead of releasing it:
 *
 *              MPI_Start                     Wait/Test/... completes it
 *   inactive ─────────────► active ─────────────────────────────► inactive
 *      │  Wait/Test: empty     │ MPI_Cancel (receive not yet      (status of
 *      │  status, at once      │ matched): completes cancelled     the message)
 *      │                       │
 *      │ MPI_Request_free      │ MPI_Request_free: freed once complete
 *      ▼                       ▼
 *   released               released (zombie list, request.c)
 *
 *   op      what MPI_Start does                 the request completes when
 *   SEND    ibx_tag_send (Send_init, Rsend_init) the buffer may be reused
 *   SSEND   ibx_tag_send(IBX_SEND_SYNC)          the receive has matched
 *   BSEND   mpil_bsend: copy to the attached      at once (MPIL_REQ_DONE)
 *           buffer, send from there
 *   RECV    ibx_tag_recv                         the message is in
 *   COLL    the MPI_I* call again, on this        the collective is done
 *           request (nbc_persist.c)
 *
 * A peer MPI_PROC_NULL completes at start. The buffer is read (sends) at
 * every start, so its contents may change between starts; a
 * non-contiguous message is packed into a buffer the request keeps.
 */
#include "p2p_int.h"

#include <stdlib.h>

/* A new inactive persistent request; the arguments were checked. */
static int persist_new(void *buf, int count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
		       int op, const char *fname, MPI_Request *req_p)
{
	mpil_request_t *r = mpil_req_alloc();
	struct mpil_persist *p = malloc(sizeof(*p));

	if (ibx_unlikely(!r || !p)) {
		free(p);
		if (r)
			mpil_req_release(r);
		return mpil_err(comm, MPI_ERR_NO_MEM, fname, "no memory for a persistent request");
	}
	mpil_req_hold(r, comm, dt);
	p->buf = buf;
	p->count = count;
	p->peer = peer;
	p->tag = tag;
	p->op = (uint8_t)op;
	p->active = false;
	p->extra = NULL;
	p->extra_start = NULL;
	p->extra_free = NULL;
	r->persist = p;
	mpil_req_preset(r, MPI_ANY_SOURCE); /* never read while inactive */
	*req_p = r;
	return MPI_SUCCESS;
}

static int send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		     int op, const char *fname, MPI_Request *req_p)
{
	MPIL_CHECK(mpil_check_send(buf, count, dt, dest, tag, comm, fname));
	MPIL_CHECK(mpil_check_request_ptr(comm, req_p, fname));
	return persist_new((void *)buf, count, dt, dest, tag, comm, op, fname, req_p);
}

MPIL_PMPI_ALIAS(Send_init)
int PMPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
		   MPI_Comm comm, MPI_Request *request)
{
	MPIL_CS_GUARD();
	return send_init(buf, count, datatype, dest, tag, comm, MPIL_PERSIST_SEND, "MPI_Send_init",
			 request);
}

MPIL_PMPI_ALIAS(Rsend_init)
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
		    MPI_Comm comm, MPI_Request *request)
{
	MPIL_CS_GUARD();
	/* A ready send may be a standard one (MPI-3.1 §3.4), as MPI_Rsend is. */
	return send_init(buf, count, datatype, dest, tag, comm, MPIL_PERSIST_SEND, "MPI_Rsend_init",
			 request);
}

MPIL_PMPI_ALIAS(Ssend_init)
int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
		    MPI_Comm comm, MPI_Request *request)
{
	MPIL_CS_GUARD();
	return send_init(buf, count, datatype, dest, tag, comm, MPIL_PERSIST_SSEND,
			 "MPI_Ssend_init", request);
}

MPIL_PMPI_ALIAS(Bsend_init)
int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
		    MPI_Comm comm, MPI_Request *request)
{
	MPIL_CS_GUARD();
	return send_init(buf, count, datatype, dest, tag, comm, MPIL_PERSIST_BSEND,
			 "MPI_Bsend_init", request);
}

MPIL_PMPI_ALIAS(Recv_init)
int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
		   MPI_Request *request)
{
	static const char F[] = "MPI_Recv_init";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_recv(buf, count, datatype, source, tag, comm, F));
	MPIL_CHECK(mpil_check_request_ptr(comm, request, F));
	return persist_new(buf, count, datatype, source, tag, comm, MPIL_PERSIST_RECV, F, request);
}

/* ---- starting ------------------------------------------------------------------------- */

/* @r may be started: a live, inactive persistent request. */
static int check_startable(MPI_Request r, int index, const char *fname)
{
	char where[32] = "";

	if (index >= 0)
		snprintf(where, sizeof(where), " at index %d", index);
	if (ibx_unlikely(r == MPI_REQUEST_NULL))
		return mpil_err(NULL, MPI_ERR_REQUEST, fname, "request%s is MPI_REQUEST_NULL",
				where);
	if (ibx_unlikely(!mpil_req_valid(r)))
		return mpil_err(NULL, MPI_ERR_REQUEST, fname, "invalid request handle %p%s",
				(void *)r, where);
	if (ibx_unlikely(!r->persist))
		return mpil_err(r->comm, MPI_ERR_REQUEST, fname,
				"request%s is not persistent (not from an MPI_*_init call)", where);
	if (ibx_unlikely(r->persist->active))
		return mpil_err(r->comm, MPI_ERR_REQUEST, fname,
				"persistent request%s is already active (complete it first)",
				where);
	return MPI_SUCCESS;
}

/* Starts the operation of the inactive persistent request @r; it is active
 * once this returns MPI_SUCCESS (errors: reported, still inactive). */
static int persist_start(mpil_request_t *r, const char *fname)
{
	struct mpil_persist *p = r->persist;
	int err = MPI_SUCCESS;

	if (p->peer == MPI_PROC_NULL) {
		mpil_req_preset(r, MPI_PROC_NULL);
		p->active = true;
		return MPI_SUCCESS;
	}
	switch (p->op) {
	case MPIL_PERSIST_SEND:
		err = mpil_send_start(r, p->buf, p->count, r->dtype, p->peer, p->tag, 0, fname);
		break;
	case MPIL_PERSIST_SSEND:
		err = mpil_send_start(r, p->buf, p->count, r->dtype, p->peer, p->tag, IBX_SEND_SYNC,
				      fname);
		break;
	case MPIL_PERSIST_BSEND:
		err = mpil_bsend(p->buf, p->count, r->dtype, p->peer, p->tag, r->comm, fname);
		mpil_req_preset(r, MPI_ANY_SOURCE);
		break;
	case MPIL_PERSIST_RECV:
		err = mpil_recv_start(r, p->buf, p->count, r->dtype, p->peer, p->tag, fname);
		break;
	case MPIL_PERSIST_COLL: err = p->extra_start(r, fname); break;
	}
	p->active = err == MPI_SUCCESS;
	return err;
}

MPIL_PMPI_ALIAS(Start)
int PMPI_Start(MPI_Request *request)
{
	static const char F[] = "MPI_Start";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (ibx_unlikely(!request))
		return mpil_err(NULL, MPI_ERR_ARG, F, "request is NULL");
	MPIL_CHECK(check_startable(*request, -1, F));
	return persist_start(*request, F);
}

MPIL_PMPI_ALIAS(Startall)
int PMPI_Startall(int count, MPI_Request array_of_requests[])
{
	static const char F[] = "MPI_Startall";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (count < 0)
		return mpil_err(NULL, MPI_ERR_COUNT, F, "negative count %d", count);
	if (count > 0 && !array_of_requests)
		return mpil_err(NULL, MPI_ERR_ARG, F, "array_of_requests is NULL");
	/* All or nothing as far as the arguments go: a bad entry starts none. */
	for (int i = 0; i < count; i++)
		MPIL_CHECK(check_startable(array_of_requests[i], i, F));
	for (int i = 0; i < count; i++) {
		/* the same request twice in the array: active by now */
		MPIL_CHECK(check_startable(array_of_requests[i], i, F));
		MPIL_CHECK(persist_start(array_of_requests[i], F));
	}
	return MPI_SUCCESS;
}
