/*
 * p2p.c — point-to-point communication: the send modes, receives, probes,
 * send-receive, and the status queries.
 *
 * The blocking calls are the latency path: an engine request on the stack,
 * argument checks as predictable branches, and one ibx_tag_send/recv plus
 * ibx_wait — no allocation, no request object. Nonblocking calls take a
 * request from the pool (request.c).
 *
 *   MPI_Send / MPI_Rsend    ibx_tag_send(flags 0)        (Rsend: a receive is
 *                                                         posted, so Send is right)
 *   MPI_Ssend / MPI_Issend  ibx_tag_send(IBX_SEND_SYNC)  completes once matched
 *   MPI_Recv / MPI_Irecv    ibx_tag_recv(src or IBX_ANY_SOURCE, tag, mask)
 *   MPI_PROC_NULL           nothing is sent; a receive completes at once with
 *                           source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0
 *
 * Non-contiguous datatypes (derived ones, padded pairs) go to the engine's
 * typed messages (ibx_tag_send_dt / ibx_tag_recv_dt: the transfer scheme
 * is chosen per message, no whole-message pack buffer where the path can
 * avoid it); a nonblocking operation holds its datatype until it is
 * released, since the user may free it. Contiguous ones, derived or not,
 * go straight from and to the user's buffer. The message carries no type signature: a receive only
 * learns the byte count (MPI_Get_count says MPI_UNDEFINED when it is not a whole number of
 * elements).
 *
 * Persistent requests, buffered mode and matched probes build on the start
 * functions here: p2p_persist.c, p2p_bsend.c, p2p_mprobe.c (p2p_int.h).
 */
#include "p2p_int.h"

#include <stdlib.h>

/* ---- blocking ------------------------------------------------------------------------ */

static inline int send_bytes(const void *data, size_t len, int dest, int tag, MPI_Comm comm,
			     unsigned flags, const char *fname)
{
	ibx_status_t st = mpil_ibx_send(mpil_comm_to_world(comm, dest), data, len,
					mpil_tag(comm->cid, tag), flags);

	if (ibx_unlikely(st != IBX_OK))
		return mpil_err_ibx(comm, fname, st, true, dest);
	return MPI_SUCCESS;
}

static int __attribute__((noinline))
send_typed(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
	   unsigned flags, const char *fname)
{
	ibx_request_t rq;
	ibx_status_t st;

	rq.cb = NULL;
	st = ibx_tag_send_dt(mpil_g.ctx, mpil_comm_to_world(comm, dest), buf, count, dt->engine,
			     mpil_tag(comm->cid, tag), flags, &rq);
	if (st == IBX_INPROGRESS)
		st = ibx_wait(mpil_g.ctx, &rq);
	if (ibx_unlikely(st != IBX_OK))
		return mpil_err_ibx(comm, fname, st, true, dest);
	return MPI_SUCCESS;
}

static inline int send_blocking(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
				MPI_Comm comm, unsigned flags, const char *fname)
{
	if (ibx_unlikely(dest == MPI_PROC_NULL))
		return MPI_SUCCESS;
	if (ibx_unlikely(!mpil_dt_contig(dt)))
		return send_typed(buf, count, dt, dest, tag, comm, flags, fname);
	return send_bytes(mpil_data_start(buf, dt), (size_t)count * dt->size, dest, tag, comm,
			  flags, fname);
}

/* Waits for the receive @rq started with status @st and fills @status. */
static inline int recv_finish(ibx_status_t st, int source, MPI_Comm comm, MPI_Status *status,
			      ibx_request_t *rq, const char *fname)
{
	if (ibx_unlikely(st < 0))
		return mpil_err_ibx(comm, fname, st, false, source);
	st = mpil_ibx_wait(rq);
	if (ibx_likely(st == IBX_OK || st == IBX_ERR_TRUNCATED))
		mpil_status_from_ibx(status, comm, rq);
	if (ibx_likely(st == IBX_OK))
		return MPI_SUCCESS;
	return mpil_err_req(comm, false, rq, mpil_err_from_ibx(st), fname);
}

static inline int recv_bytes(void *data, size_t len, int source, int tag, MPI_Comm comm,
			     MPI_Status *status, ibx_request_t *rq, const char *fname)
{
	ibx_tag_t t, mask;
	ibx_status_t st;

	mpil_recv_match(comm, tag, &t, &mask);
	rq->cb = NULL; /* the engine calls it on completion */
	st = ibx_tag_recv(mpil_g.ctx, mpil_source_to_world(comm, source), data, len, t, mask, rq);
	return recv_finish(st, source, comm, status, rq, fname);
}

int mpil_check_recv_type(MPI_Comm comm, MPI_Datatype dt, int count, const char *fname)
{
	if (ibx_dt_overlaps(dt->engine, count))
		return mpil_err(comm, MPI_ERR_TYPE, fname,
				"the receive datatype's blocks overlap (%d elements)", count);
	return MPI_SUCCESS;
}

static int __attribute__((noinline))
recv_typed(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
	   MPI_Status *status, const char *fname)
{
	ibx_request_t rq;
	ibx_tag_t t, mask;
	ibx_status_t st;

	MPIL_CHECK(mpil_check_recv_type(comm, dt, count, fname));
	mpil_recv_match(comm, tag, &t, &mask);
	rq.cb = NULL;
	st = ibx_tag_recv_dt(mpil_g.ctx, mpil_source_to_world(comm, source), buf, count, dt->engine,
			     t, mask, &rq);
	return recv_finish(st, source, comm, status, &rq, fname);
}

static inline int recv_blocking(void *buf, int count, MPI_Datatype dt, int source, int tag,
				MPI_Comm comm, MPI_Status *status, const char *fname)
{
	ibx_request_t rq;

	if (ibx_unlikely(source == MPI_PROC_NULL)) {
		mpil_status_proc_null(status);
		return MPI_SUCCESS;
	}
	if (ibx_unlikely(!mpil_dt_contig(dt)))
		return recv_typed(buf, count, dt, source, tag, comm, status, fname);
	return recv_bytes(mpil_data_start(buf, dt), (size_t)count * dt->size, source, tag, comm,
			  status, &rq, fname);
}

MPIL_PMPI_ALIAS(Send)
int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	static const char F[] = "MPI_Send";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_send(buf, count, datatype, dest, tag, comm, F));
	return send_blocking(buf, count, datatype, dest, tag, comm, 0, F);
}

MPIL_PMPI_ALIAS(Rsend)
int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	static const char F[] = "MPI_Rsend";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_send(buf, count, datatype, dest, tag, comm, F));
	return send_blocking(buf, count, datatype, dest, tag, comm, 0, F);
}

MPIL_PMPI_ALIAS(Ssend)
int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	static const char F[] = "MPI_Ssend";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_send(buf, count, datatype, dest, tag, comm, F));
	return send_blocking(buf, count, datatype, dest, tag, comm, IBX_SEND_SYNC, F);
}

MPIL_PMPI_ALIAS(Recv)
int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
	      MPI_Status *status)
{
	static const char F[] = "MPI_Recv";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_recv(buf, count, datatype, source, tag, comm, F));
	return recv_blocking(buf, count, datatype, source, tag, comm, status, F);
}

/* ---- nonblocking --------------------------------------------------------------------- */

static mpil_request_t *req_new(MPI_Comm comm, int kind, const char *fname)
{
	mpil_request_t *r = mpil_req_alloc();

	if (ibx_unlikely(!r)) {
		mpil_err(comm, MPI_ERR_NO_MEM, fname, "no memory for a request");
		return NULL;
	}
	mpil_req_hold(r, comm, NULL);
	r->kind = (uint8_t)kind;
	if (kind == MPIL_REQ_DONE) {
		mpil_status_proc_null(&r->preset);
		r->preset.MPI_ERROR = MPI_SUCCESS;
	}
	return r;
}

int mpil_send_start(mpil_request_t *r, const void *buf, int count, MPI_Datatype dt, int dest,
		    int tag, unsigned flags, const char *fname)
{
	MPI_Comm comm = r->comm;
	size_t len = (size_t)count * dt->size;
	const void *data = mpil_data_start(buf, dt);
	ibx_status_t st;

	r->kind = MPIL_REQ_SEND;
	if (ibx_unlikely(!mpil_dt_contig(dt)) && len) {
		mpil_req_hold_dtype(r, dt);
		st = ibx_tag_send_dt(mpil_g.ctx, mpil_comm_to_world(comm, dest), buf, count,
				     dt->engine, mpil_tag(comm->cid, tag), flags, &r->ibx);
	} else {
		st = ibx_tag_send(mpil_g.ctx, mpil_comm_to_world(comm, dest), data, len,
				  mpil_tag(comm->cid, tag), flags, &r->ibx);
	}
	if (ibx_unlikely(st < 0))
		return mpil_err_ibx(comm, fname, st, true, dest);
	return MPI_SUCCESS;
}

int mpil_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
	       unsigned flags, const char *fname, MPI_Request *req_p)
{
	mpil_request_t *r;
	int err;

	r = req_new(comm, dest == MPI_PROC_NULL ? MPIL_REQ_DONE : MPIL_REQ_SEND, fname);
	if (ibx_unlikely(!r))
		return MPI_ERR_NO_MEM;
	if (dest != MPI_PROC_NULL) {
		err = mpil_send_start(r, buf, count, dt, dest, tag, flags, fname);
		if (ibx_unlikely(err != MPI_SUCCESS)) {
			mpil_req_release(r);
			return err;
		}
	}
	*req_p = r;
	return MPI_SUCCESS;
}

void mpil_req_hold_dtype(mpil_request_t *r, MPI_Datatype dt)
{
	if (r->dtype != dt) { /* a persistent request holds its own already */
		r->dtype = dt;
		mpil_dt_retain(dt); /* released with the request */
	}
}

int mpil_recv_start(mpil_request_t *r, void *buf, int count, MPI_Datatype dt, int source, int tag,
		    const char *fname)
{
	MPI_Comm comm = r->comm;
	size_t len = (size_t)count * dt->size;
	ibx_tag_t t, mask;
	ibx_status_t st;

	r->kind = MPIL_REQ_RECV;
	mpil_recv_match(comm, tag, &t, &mask);
	if (ibx_unlikely(!mpil_dt_contig(dt)) && len) {
		MPIL_CHECK(mpil_check_recv_type(comm, dt, count, fname));
		mpil_req_hold_dtype(r, dt);
		st = ibx_tag_recv_dt(mpil_g.ctx, mpil_source_to_world(comm, source), buf, count,
				     dt->engine, t, mask, &r->ibx);
	} else {
		st = ibx_tag_recv(mpil_g.ctx, mpil_source_to_world(comm, source),
				  mpil_data_start(buf, dt), len, t, mask, &r->ibx);
	}
	if (ibx_unlikely(st < 0))
		return mpil_err_ibx(comm, fname, st, false, source);
	return MPI_SUCCESS;
}

int mpil_irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
	       const char *fname, MPI_Request *req_p)
{
	mpil_request_t *r;
	int err;

	r = req_new(comm, source == MPI_PROC_NULL ? MPIL_REQ_DONE : MPIL_REQ_RECV, fname);
	if (ibx_unlikely(!r))
		return MPI_ERR_NO_MEM;
	if (source != MPI_PROC_NULL) {
		err = mpil_recv_start(r, buf, count, dt, source, tag, fname);
		if (ibx_unlikely(err != MPI_SUCCESS)) {
			mpil_req_release(r);
			return err;
		}
	}
	*req_p = r;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Isend)
int PMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
	       MPI_Request *request)
{
	static const char F[] = "MPI_Isend";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_send(buf, count, datatype, dest, tag, comm, F));
	MPIL_CHECK(mpil_check_request_ptr(comm, request, F));
	return mpil_isend(buf, count, datatype, dest, tag, comm, 0, F, request);
}

MPIL_PMPI_ALIAS(Irsend)
int PMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
		MPI_Request *request)
{
	static const char F[] = "MPI_Irsend";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_send(buf, count, datatype, dest, tag, comm, F));
	MPIL_CHECK(mpil_check_request_ptr(comm, request, F));
	return mpil_isend(buf, count, datatype, dest, tag, comm, 0, F, request);
}

MPIL_PMPI_ALIAS(Issend)
int PMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
		MPI_Request *request)
{
	static const char F[] = "MPI_Issend";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_send(buf, count, datatype, dest, tag, comm, F));
	MPIL_CHECK(mpil_check_request_ptr(comm, request, F));
	return mpil_isend(buf, count, datatype, dest, tag, comm, IBX_SEND_SYNC, F, request);
}

MPIL_PMPI_ALIAS(Irecv)
int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
	       MPI_Request *request)
{
	static const char F[] = "MPI_Irecv";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_recv(buf, count, datatype, source, tag, comm, F));
	MPIL_CHECK(mpil_check_request_ptr(comm, request, F));
	return mpil_irecv(buf, count, datatype, source, tag, comm, F, request);
}

/* ---- send-receive ---------------------------------------------------------------------- */

/* A send failed after the receive was posted: withdraw the receive (or,
 * if it already matched, let it finish) so its buffer is free again. */
void mpil_recv_abandon(MPI_Request *rreq)
{
	mpil_request_t *r = *rreq;

	if (r->kind == MPIL_REQ_RECV && !r->ibx.completed) {
		(void)ibx_request_cancel(mpil_g.ctx, &r->ibx);
		mpil_ibx_wait(&r->ibx);
	}
	mpil_req_finish(r, MPI_STATUS_IGNORE);
	mpil_req_release(r);
	*rreq = MPI_REQUEST_NULL;
}

static int wait_recv(MPI_Request *rreq, MPI_Status *status, const char *fname)
{
	if ((*rreq)->kind != MPIL_REQ_DONE)
		mpil_ibx_wait(&(*rreq)->ibx);
	return mpil_req_complete(rreq, status, fname);
}

int mpil_check_sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
			int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
			int source, int recvtag, MPI_Comm comm, const char *fname)
{
	MPIL_CHECK(mpil_check_send(sendbuf, sendcount, sendtype, dest, sendtag, comm, fname));
	MPIL_CHECK(mpil_check_data(recvbuf, recvcount, recvtype, comm, fname));
	MPIL_CHECK(mpil_check_source(comm, source, fname));
	return mpil_check_recv_tag(comm, recvtag, fname);
}

int mpil_check_sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int sendtag,
				int source, int recvtag, MPI_Comm comm, const char *fname)
{
	MPIL_CHECK(mpil_check_send(buf, count, dt, dest, sendtag, comm, fname));
	MPIL_CHECK(mpil_check_source(comm, source, fname));
	return mpil_check_recv_tag(comm, recvtag, fname);
}

MPIL_PMPI_ALIAS(Sendrecv)
int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
		  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
		  MPI_Comm comm, MPI_Status *status)
{
	static const char F[] = "MPI_Sendrecv";
	MPIL_CS_GUARD();
	MPI_Request rreq;
	int err;

	MPIL_CHECK(mpil_check_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
				       recvcount, recvtype, source, recvtag, comm, F));
	/* Receive first, so two ranks exchanging with each other never wait
	 * on each other's send. */
	MPIL_CHECK(mpil_irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, F, &rreq));
	err = send_blocking(sendbuf, sendcount, sendtype, dest, sendtag, comm, 0, F);
	if (err != MPI_SUCCESS) {
		mpil_recv_abandon(&rreq);
		return err;
	}
	return wait_recv(&rreq, status, F);
}

MPIL_PMPI_ALIAS(Sendrecv_replace)
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
			  int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
	static const char F[] = "MPI_Sendrecv_replace";
	MPIL_CS_GUARD();
	size_t len;
	void *packed = NULL;
	MPI_Request rreq;
	int err = MPI_SUCCESS;

	MPIL_CHECK(mpil_check_sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag,
					       comm, F));
	/* The outgoing data is copied aside, then the buffer receives. */
	len = (size_t)count * datatype->size;
	if (len && dest != MPI_PROC_NULL) {
		packed = malloc(len);
		if (!packed)
			return mpil_err(comm, MPI_ERR_NO_MEM, F,
					"no memory for a %zu-byte copy of the message", len);
		mpil_dt_pack(datatype, buf, count, packed);
	}
	err = mpil_irecv(buf, count, datatype, source, recvtag, comm, F, &rreq);
	if (err != MPI_SUCCESS)
		goto out;
	if (dest != MPI_PROC_NULL)
		err = send_bytes(packed, len, dest, sendtag, comm, 0, F);
	if (err != MPI_SUCCESS) {
		mpil_recv_abandon(&rreq);
		goto out;
	}
	err = wait_recv(&rreq, status, F);
out:
	free(packed);
	return err;
}

/* ---- probes ------------------------------------------------------------------------------ */

/* One look at the unexpected messages: *flag and @status. */
static int probe_once(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status,
		      const char *fname)
{
	ibx_probe_info_t info;
	ibx_tag_t t, mask;
	ibx_status_t st;

	mpil_recv_match(comm, tag, &t, &mask);
	st = ibx_tag_probe(mpil_g.ctx, mpil_source_to_world(comm, source), t, mask, &info);
	if (st == IBX_OK) {
		*flag = 1;
		mpil_status_set(status, mpil_comm_from_world(comm, info.source),
				(int)(uint32_t)info.tag, (MPI_Count)info.length);
		return MPI_SUCCESS;
	}
	*flag = 0;
	if (st == IBX_ERR_NOT_FOUND)
		return MPI_SUCCESS;
	return mpil_err_ibx(comm, fname, st, false, source);
}

MPIL_PMPI_ALIAS(Iprobe)
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	static const char F[] = "MPI_Iprobe";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_probe(source, tag, comm, F));
	if (!flag)
		return mpil_err(comm, MPI_ERR_ARG, F, "flag is NULL");
	if (source == MPI_PROC_NULL) {
		*flag = 1;
		mpil_status_proc_null(status);
		return MPI_SUCCESS;
	}
	ibx_progress(mpil_g.ctx);
	return probe_once(source, tag, comm, flag, status, F);
}

MPIL_PMPI_ALIAS(Probe)
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	static const char F[] = "MPI_Probe";
	MPIL_CS_GUARD();
	unsigned idle = 0;
	int flag = 0;

	MPIL_CHECK(mpil_check_probe(source, tag, comm, F));
	if (source == MPI_PROC_NULL) {
		mpil_status_proc_null(status);
		return MPI_SUCCESS;
	}
	for (;;) {
		MPIL_CHECK(probe_once(source, tag, comm, &flag, status, F));
		if (flag)
			return MPI_SUCCESS;
		ibx_progress_wait(mpil_g.ctx, &idle);
	}
}

/* ---- status queries ------------------------------------------------------------------------ */

static int check_status_query(const MPI_Status *status, MPI_Datatype dt, const void *count,
			      const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	if (!status || !count)
		return mpil_err(NULL, MPI_ERR_ARG, fname, "%s is NULL",
				status ? "count" : "status");
	return mpil_check_dtype(NULL, dt, fname);
}

MPIL_PMPI_ALIAS(Get_count)
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
	static const char F[] = "MPI_Get_count";
	MPIL_CS_GUARD();
	MPI_Count n;

	MPIL_CHECK(check_status_query(status, datatype, count, F));
	if (datatype->size == 0) {
		*count = 0;
		return MPI_SUCCESS;
	}
	n = status->mpil_count / (MPI_Count)datatype->size;
	if (status->mpil_count % (MPI_Count)datatype->size || n > INT_MAX)
		*count = MPI_UNDEFINED;
	else
		*count = (int)n;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Get_elements_x)
int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
	static const char F[] = "MPI_Get_elements_x";
	MPIL_CS_GUARD();
	MPI_Count n;

	MPIL_CHECK(check_status_query(status, datatype, count, F));
	n = mpil_dt_elements(datatype, status->mpil_count);
	*count = n < 0 ? MPI_UNDEFINED : n;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Get_elements)
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
	static const char F[] = "MPI_Get_elements";
	MPIL_CS_GUARD();
	MPI_Count n;

	MPIL_CHECK(check_status_query(status, datatype, count, F));
	n = mpil_dt_elements(datatype, status->mpil_count);
	*count = n < 0 || n > INT_MAX ? MPI_UNDEFINED : (int)n;
	return MPI_SUCCESS;
}
