/*
 * p2p_int.h — what the point-to-point files share: argument checks, the
 * mapping of ranks and tags onto the engine, and the entry points from one
 * file to the next.
 *
 *   p2p.c          send modes, receives, probes, send-receive, status queries
 *   p2p_persist.c  persistent requests (MPI_*_init, MPI_Start, MPI_Startall)
 *   p2p_bsend.c    buffered mode: the attached buffer, MPI_Bsend, MPI_Ibsend
 *   p2p_mprobe.c   matched probe and receive (MPI_Mprobe ... MPI_Imrecv)
 *   p2p_isendrecv.c  MPI_Isendrecv(_replace): one request for a send and a receive
 *   greq.c         generalized requests (MPI_Grequest_start, _complete)
 *   request.c      completion of every request kind (Wait, Test, ...)
 *
 * Every check reports through the communicator's error handler and returns
 * the error class, as mpil_err does.
 */
#ifndef MPIL_P2P_INT_H
#define MPIL_P2P_INT_H

#include "dtype_rdma/dt_xfer.h"
#include "mpil_int.h"

/* ---- argument checks --------------------------------------------------------------- */

static inline int mpil_check_dest(MPI_Comm comm, int dest, const char *fname)
{
	if (ibx_likely((unsigned)dest < (unsigned)comm->size || dest == MPI_PROC_NULL))
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_RANK, fname, "invalid rank %d (communicator size %d)", dest,
			comm->size);
}

static inline int mpil_check_source(MPI_Comm comm, int source, const char *fname)
{
	if (ibx_likely((unsigned)source < (unsigned)comm->size || source == MPI_ANY_SOURCE ||
		       source == MPI_PROC_NULL))
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_RANK, fname, "invalid source rank %d (communicator size %d)",
			source, comm->size);
}

static inline int mpil_check_send_tag(MPI_Comm comm, int tag, const char *fname)
{
	if (ibx_likely(tag >= 0))
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_TAG, fname, "invalid tag %d (valid tags: 0..%d)", tag,
			MPIL_TAG_UB);
}

static inline int mpil_check_recv_tag(MPI_Comm comm, int tag, const char *fname)
{
	if (ibx_likely(tag >= 0 || tag == MPI_ANY_TAG))
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_TAG, fname,
			"invalid tag %d (valid tags: 0..%d, or MPI_ANY_TAG)", tag, MPIL_TAG_UB);
}

/* (buf, count, dt) describes a message that fits the engine's size_t. */
static inline int mpil_check_data(const void *buf, int count, MPI_Datatype dt, MPI_Comm comm,
				  const char *fname)
{
	MPIL_CHECK(mpil_check_count(comm, count, fname));
	MPIL_CHECK(mpil_check_dtype(comm, dt, fname));
	if (ibx_unlikely(dt->size > (size_t)INT64_MAX / ((size_t)count + 1)))
		return mpil_err(comm, MPI_ERR_COUNT, fname,
				"%d elements of a %zu-byte datatype overflow a message", count,
				dt->size);
	return mpil_check_buf(comm, buf, count, dt, fname);
}

static inline int mpil_check_send(const void *buf, int count, MPI_Datatype dt, int dest, int tag,
				  MPI_Comm comm, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	MPIL_CHECK(mpil_check_comm(comm, fname));
	MPIL_CHECK(mpil_check_data(buf, count, dt, comm, fname));
	MPIL_CHECK(mpil_check_dest(comm, dest, fname));
	return mpil_check_send_tag(comm, tag, fname);
}

static inline int mpil_check_recv(const void *buf, int count, MPI_Datatype dt, int source, int tag,
				  MPI_Comm comm, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	MPIL_CHECK(mpil_check_comm(comm, fname));
	MPIL_CHECK(mpil_check_data(buf, count, dt, comm, fname));
	MPIL_CHECK(mpil_check_source(comm, source, fname));
	return mpil_check_recv_tag(comm, tag, fname);
}

static inline int mpil_check_probe(int source, int tag, MPI_Comm comm, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	MPIL_CHECK(mpil_check_comm(comm, fname));
	MPIL_CHECK(mpil_check_source(comm, source, fname));
	return mpil_check_recv_tag(comm, tag, fname);
}

static inline int mpil_check_request_ptr(MPI_Comm comm, MPI_Request *request, const char *fname)
{
	if (ibx_likely(request != NULL))
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_ARG, fname, "request is NULL");
}

/* ---- mapping onto the engine ---------------------------------------------------------- */

/* Where the data of a contiguous (buf, dt) starts (no arithmetic on NULL:
 * buf may be MPI_BOTTOM with absolute displacements). */
static inline void *mpil_data_start(const void *buf, MPI_Datatype dt)
{
	return (void *)((uintptr_t)buf + (uintptr_t)dt->true_lb);
}

static inline int mpil_source_to_world(MPI_Comm comm, int source)
{
	return source == MPI_ANY_SOURCE ? IBX_ANY_SOURCE : mpil_comm_to_world(comm, source);
}

static inline void mpil_recv_match(MPI_Comm comm, int tag, ibx_tag_t *tag_p, ibx_tag_t *mask_p)
{
	if (tag == MPI_ANY_TAG) {
		*tag_p = mpil_tag(comm->cid, 0);
		*mask_p = MPIL_MASK_ANY_TAG;
	} else {
		*tag_p = mpil_tag(comm->cid, tag);
		*mask_p = MPIL_MASK_TAG;
	}
}

/* ---- starting operations on an existing request (p2p.c) ------------------------------ */

/* Starts the engine send of (buf, count, dt) to rank @dest (not
 * MPI_PROC_NULL) of r->comm on @r, which becomes MPIL_REQ_SEND. A
 * non-contiguous message is a typed engine send, @r holding the type.
 * Errors are reported on r->comm; @r is left for the caller to release. */
int mpil_send_start(mpil_request_t *r, const void *buf, int count, MPI_Datatype dt, int dest,
		    int tag, unsigned flags, const char *fname);
/* @r holds @dt until it is released (a typed operation: the user may free
 * the type meanwhile). */
void mpil_req_hold_dtype(mpil_request_t *r, MPI_Datatype dt);
/* MPI_ERR_TYPE, reported on @comm, when (dt, count) writes a byte twice. */
int mpil_check_recv_type(MPI_Comm comm, MPI_Datatype dt, int count, const char *fname);
/* Posts the engine receive from @source (a rank or MPI_ANY_SOURCE) on @r,
 * which becomes MPIL_REQ_RECV; a non-contiguous one as a typed receive
 * (@r holds the type). */
int mpil_recv_start(mpil_request_t *r, void *buf, int count, MPI_Datatype dt, int source, int tag,
		    const char *fname);

/* Makes @r complete at start (MPIL_REQ_DONE) with an empty status from
 * @source: MPI_PROC_NULL peers, buffered sends. */
static inline void mpil_req_preset(mpil_request_t *r, int source)
{
	r->kind = MPIL_REQ_DONE;
	mpil_status_set(&r->preset, source, MPI_ANY_TAG, 0);
	r->preset.MPI_ERROR = MPI_SUCCESS;
}

/* ---- persistent requests (p2p_persist.c) ---------------------------------------------- */

enum mpil_persist_op {
	MPIL_PERSIST_SEND,
	MPIL_PERSIST_SSEND,
	MPIL_PERSIST_BSEND,
	MPIL_PERSIST_RECV,
	MPIL_PERSIST_COLL /* a persistent collective (nbc_persist.c): extra_start */
};

/* What each MPI_Start of a persistent request starts (the datatype and
 * communicator are the request's own, held for its lifetime). */
struct mpil_persist {
	void *buf;
	int count;
	int peer; /* dest or source: a rank of req->comm, MPI_ANY_SOURCE, MPI_PROC_NULL */
	int tag;
	uint8_t op;  /* enum mpil_persist_op */
	bool active; /* started, and not yet completed by a Wait/Test call */
	/* MPIL_PERSIST_COLL: the operation's own state, how MPI_Start starts
	 * it, and how it goes with the request */
	void *extra;
	int (*extra_start)(mpil_request_t *r, const char *fname);
	void (*extra_free)(void *extra);
};

/* An inactive persistent request: Wait/Test treat it like MPI_REQUEST_NULL
 * but leave the handle alone. */
static inline bool mpil_req_inactive(const mpil_request_t *r)
{
	return r->persist && !r->persist->active;
}

/* A send failed after the receive *@rreq was posted: withdraws it (or, if
 * it matched, lets it finish), releases it, sets *@rreq to NULL (p2p.c). */
void mpil_recv_abandon(MPI_Request *rreq);
/* The argument checks of a send-receive (MPI_Sendrecv, MPI_Isendrecv):
 * the send's, the receive buffer's, the source and the receive tag; and
 * those of the _replace forms, whose one buffer the send's check covers
 * (p2p.c). */
int mpil_check_sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
			int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
			int source, int recvtag, MPI_Comm comm, const char *fname);
int mpil_check_sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int sendtag,
				int source, int recvtag, MPI_Comm comm, const char *fname);

/* ---- send-receive requests (p2p_isendrecv.c) ----------------------------------------- */

/* A completed MPIL_REQ_PAIR: the receive's status (an empty one without
 * a receive) and the first error of its parts, as mpil_req_finish. */
int mpil_pair_finish(mpil_request_t *pair, MPI_Status *status);
/* Reports @err (from mpil_pair_finish) for the part it came from. */
int mpil_pair_report(mpil_request_t *pair, int err, const char *fname);
/* Releases the parts (with the pair, by mpil_req_release). */
void mpil_pair_release_parts(mpil_request_t *pair);

/* ---- generalized requests (greq.c) -------------------------------------------------- */

/* A completed MPIL_REQ_GREQ: its query function's status and error (none
 * once freed by the program). */
int mpil_greq_finish(mpil_request_t *r, MPI_Status *status);
int mpil_greq_report(int err, const char *fname);
/* MPI_Cancel: its cancel function. */
int mpil_greq_cancel(mpil_request_t *r, const char *fname);
/* Its free function, once (a later call returns MPI_SUCCESS): what it
 * returned, which the calling MPI function reports with
 * mpil_greq_free_report. */
int mpil_greq_free(mpil_request_t *r);
int mpil_greq_free_report(int err, const char *fname);
/* Its free function unless run already, then the callbacks' record (by
 * mpil_req_release). */
void mpil_greq_release(mpil_request_t *r);
/* MPI_Finalize: one freed by the program and completed since runs its free
 * function; one never completed is dropped without its callbacks. */
void mpil_greq_fini(mpil_request_t *r);

/* ---- buffered mode (p2p_bsend.c) ------------------------------------------------------ */

/* Copies (buf, count, dt) into the attached buffer and starts its send to
 * @dest (MPI_PROC_NULL: nothing); MPI_ERR_BUFFER when it does not fit. */
int mpil_bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
	       const char *fname);

/* MPI_Finalize, once the engine is down: forgets the attached buffer and
 * frees the message handles never received (p2p_bsend.c, p2p_mprobe.c). */
void mpil_bsend_fini(void);
void mpil_mprobe_fini(void);

#endif /* MPIL_P2P_INT_H */
