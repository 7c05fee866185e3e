/*
 * p2p_isendrecv.c — MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0
 * §3.10.2): a send and a receive started together, one request for both.
 *
 * The request the user holds (MPIL_REQ_PAIR) moves nothing itself: it
 * owns a receive request and a send request, started as MPI_Irecv and
 * MPI_Isend would start them (the receive first, as MPI_Sendrecv does,
 * so two ranks exchanging never wait on each other's send), and its
 * engine request completes when the last of its parts does:
 *
 *   MPI_Isendrecv ─► parts[0] = receive ─┐ each part's completion (its
 *                    parts[1] = send ────┤ engine callback, or at once)
 *                                        ▼ counts down `pending`
 *                    pending == 0 ─► the pair's ibx.completed = 1
 *
 * so every completion call (Wait, Test, Waitany, Request_get_status, a
 * freed request's sweep) treats it as any other request; finishing it
 * reports the receive's status (MPI-4.0: the status is the receive's) and
 * the first error of the two; releasing it releases both parts. A
 * MPI_PROC_NULL side has no part. MPI_Cancel does not cancel a pair (it
 * completes normally, which MPI allows).
 *
 * MPI_Isendrecv_replace sends a packed copy of the buffer (kept by the
 * pair) and receives into the buffer itself.
 */
#include "p2p_int.h"

#include <limits.h>
#include <stdlib.h>

/* A part's engine callback: one fewer to wait for. */
static void pair_part_done(ibx_request_t *x)
{
	mpil_request_t *pair = x->user_data;

	if (--pair->pending == 0) {
		pair->ibx.status = IBX_OK;
		__atomic_store_n(&pair->ibx.completed, 1, __ATOMIC_RELEASE);
	}
}

static mpil_request_t *pair_new(MPI_Comm comm, const char *fname)
{
	mpil_request_t *pair = mpil_req_alloc();

	if (!pair) {
		mpil_err(comm, MPI_ERR_NO_MEM, fname, "no memory for a request");
		return NULL;
	}
	mpil_req_hold(pair, comm, NULL);
	pair->kind = MPIL_REQ_PAIR;
	pair->parts[0] = pair->parts[1] = NULL;
	pair->pending = 1; /* dropped once both parts are started */
	pair->ibx.user_data = pair;
	return pair;
}

/* A part that is not started yet, its callback pointing at @pair. */
static mpil_request_t *part_new(mpil_request_t *pair, const char *fname)
{
	mpil_request_t *part = mpil_req_alloc();

	if (!part) {
		mpil_err(pair->comm, MPI_ERR_NO_MEM, fname, "no memory for a request");
		return NULL;
	}
	mpil_req_hold(part, pair->comm, NULL);
	part->ibx.cb = pair_part_done;
	part->ibx.user_data = pair;
	pair->pending++;
	return part;
}

/* Undoes a pair whose start failed: a receive already posted is withdrawn
 * (or, if it matched, finished), then everything is released. */
static void pair_abandon(mpil_request_t *pair)
{
	if (pair->parts[0]) {
		pair->parts[0]->ibx.cb = NULL; /* the pair goes first */
		mpil_recv_abandon(&pair->parts[0]);
	}
	mpil_req_release(pair);
}

/* Part @slot's start returned @err: on failure it is released; started,
 * it is the pair's, counted already if it is complete (no callback then). */
static int part_started(mpil_request_t *pair, int slot, mpil_request_t *part, int err)
{
	if (err != MPI_SUCCESS) {
		pair->pending--;
		mpil_req_release(part);
		return err;
	}
	pair->parts[slot] = part;
	if (mpil_req_done(part))
		pair_part_done(&pair->ibx);
	return MPI_SUCCESS;
}

/* Starts the receive part, unless @source is MPI_PROC_NULL. */
static int pair_recv(mpil_request_t *pair, void *buf, int count, MPI_Datatype dt, int source,
		     int tag, const char *fname)
{
	mpil_request_t *r;

	if (source == MPI_PROC_NULL)
		return MPI_SUCCESS;
	r = part_new(pair, fname);
	if (!r)
		return MPI_ERR_NO_MEM;
	return part_started(pair, 0, r, mpil_recv_start(r, buf, count, dt, source, tag, fname));
}

/* Starts the send part, unless @dest is MPI_PROC_NULL. */
static int pair_send(mpil_request_t *pair, const void *buf, int count, MPI_Datatype dt, int dest,
		     int tag, const char *fname)
{
	mpil_request_t *s;

	if (dest == MPI_PROC_NULL)
		return MPI_SUCCESS;
	s = part_new(pair, fname);
	if (!s)
		return MPI_ERR_NO_MEM;
	return part_started(pair, 1, s, mpil_send_start(s, buf, count, dt, dest, tag, 0, fname));
}

/* Both parts started: the pair's own count goes, and *req_p is it. */
static int pair_go(mpil_request_t *pair, MPI_Request *req_p)
{
	pair_part_done(&pair->ibx);
	*req_p = pair;
	return MPI_SUCCESS;
}

int mpil_pair_finish(mpil_request_t *pair, MPI_Status *status)
{
	int err = MPI_SUCCESS, e2 = MPI_SUCCESS;

	if (pair->parts[0]) {
		err = mpil_req_finish(pair->parts[0], status);
	} else if (status != MPI_STATUS_IGNORE) {
		int e = status->MPI_ERROR;

		mpil_status_proc_null(status);
		status->MPI_ERROR = e;
	}
	if (pair->parts[1])
		e2 = mpil_req_finish(pair->parts[1], MPI_STATUS_IGNORE);
	return err != MPI_SUCCESS ? err : e2;
}

int mpil_pair_report(mpil_request_t *pair, int err, const char *fname)
{
	mpil_request_t *recv = pair->parts[0], *send = pair->parts[1];

	/* the part that failed: the receive's error comes first (finish) */
	if (recv && mpil_req_finish(recv, MPI_STATUS_IGNORE) == err)
		return mpil_err_req(pair->comm, false, &recv->ibx, err, fname);
	if (send)
		return mpil_err_req(pair->comm, true, &send->ibx, err, fname);
	return mpil_err(pair->comm, err, fname, "send-receive failed");
}

void mpil_pair_release_parts(mpil_request_t *pair)
{
	for (int i = 0; i < 2; i++) {
		if (pair->parts[i])
			mpil_req_release(pair->parts[i]);
		pair->parts[i] = NULL;
	}
}

MPIL_PMPI_ALIAS(Isendrecv)
int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
		   void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
		   MPI_Comm comm, MPI_Request *request)
{
	static const char F[] = "MPI_Isendrecv";
	MPIL_CS_GUARD();
	mpil_request_t *pair;
	int err;

	MPIL_CHECK(mpil_check_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
				       recvcount, recvtype, source, recvtag, comm, F));
	MPIL_CHECK(mpil_check_request_ptr(comm, request, F));
	pair = pair_new(comm, F);
	if (!pair)
		return MPI_ERR_NO_MEM;
	err = pair_recv(pair, recvbuf, recvcount, recvtype, source, recvtag, F);
	if (err == MPI_SUCCESS)
		err = pair_send(pair, sendbuf, sendcount, sendtype, dest, sendtag, F);
	if (err != MPI_SUCCESS) {
		pair_abandon(pair);
		return err;
	}
	return pair_go(pair, request);
}

MPIL_PMPI_ALIAS(Isendrecv_replace)
int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
			   int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
	static const char F[] = "MPI_Isendrecv_replace";
	MPIL_CS_GUARD();
	mpil_request_t *pair;
	size_t len;
	int err;

	MPIL_CHECK(mpil_check_sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag,
					       comm, F));
	MPIL_CHECK(mpil_check_request_ptr(comm, request, F));
	len = (size_t)count * datatype->size;
	if (len > INT_MAX && dest != MPI_PROC_NULL)
		return mpil_err(comm, MPI_ERR_COUNT, F,
				"a %zu-byte message: at most INT_MAX bytes are copied aside", len);
	pair = pair_new(comm, F);
	if (!pair)
		return MPI_ERR_NO_MEM;
	/* the outgoing data is copied aside (the pair keeps the copy), then
	 * the buffer receives */
	if (len && dest != MPI_PROC_NULL) {
		pair->tmpbuf = malloc(len);
		if (!pair->tmpbuf) {
			mpil_req_release(pair);
			return mpil_err(comm, MPI_ERR_NO_MEM, F,
					"no memory for a %zu-byte copy of the message", len);
		}
		mpil_dt_pack(datatype, buf, count, pair->tmpbuf);
	}
	err = pair_recv(pair, buf, count, datatype, source, recvtag, F);
	if (err == MPI_SUCCESS)
		err = pair_send(pair, pair->tmpbuf, (int)len, MPI_BYTE, dest, sendtag, F);
	if (err != MPI_SUCCESS) {
		pair_abandon(pair);
		return err;
	}
	return pair_go(pair, request);
}
