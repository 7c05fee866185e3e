/*
 * coll_xfer.c — byte transfers between the ranks of a group on the
 * collective context (cid | 1, coll_int.h), which the algorithms are made
 * of, and the same for whole communicators for the rest of mpi-lite
 * (mpil_coll_send & co. in mpil_int.h). Failures come back as MPI error
 * classes; no error handler is called here.
 */
#include "coll_int.h"

static inline ibx_tag_t ctag(const coll_grp_t *g, int tag)
{
	return mpil_tag(mpil_coll_cid(g->comm), tag);
}

int mpil_grp_send(const coll_grp_t *g, const void *buf, size_t len, int dst, int tag)
{
	return mpil_err_from_ibx(mpil_ibx_send(coll_world(g, dst), buf, len, ctag(g, tag), 0));
}

int mpil_grp_recv(const coll_grp_t *g, void *buf, size_t len, int src, int tag)
{
	ibx_request_t rq = {.cb = NULL};
	ibx_status_t st;

	st = ibx_tag_recv(mpil_g.ctx, coll_world(g, src), buf, len, ctag(g, tag), MPIL_MASK_TAG,
			  &rq);
	if (st >= 0)
		st = mpil_ibx_wait(&rq);
	return mpil_err_from_ibx(st);
}

int mpil_grp_sendrecv(const coll_grp_t *g, const void *sbuf, size_t slen, int dst, void *rbuf,
		      size_t rlen, int src, int tag)
{
	ibx_request_t rrq = {.cb = NULL};
	ibx_status_t st, rst;

	rst = ibx_tag_recv(mpil_g.ctx, coll_world(g, src), rbuf, rlen, ctag(g, tag), MPIL_MASK_TAG,
			   &rrq);
	if (rst < 0)
		return mpil_err_from_ibx(rst);
	st = mpil_ibx_send(coll_world(g, dst), sbuf, slen, ctag(g, tag), 0);
	if (st != IBX_OK) {
		/* Withdraw the receive; if it already matched, let it land. */
		if (ibx_request_cancel(mpil_g.ctx, &rrq) != IBX_OK)
			mpil_ibx_wait(&rrq);
		return mpil_err_from_ibx(st);
	}
	return mpil_err_from_ibx(mpil_ibx_wait(&rrq));
}

static int start_failed(ibx_request_t *rq, ibx_status_t st)
{
	rq->status = st;
	rq->completed = 1;
	return mpil_err_from_ibx(st);
}

int mpil_grp_isend(const coll_grp_t *g, const void *buf, size_t len, int dst, int tag,
		   ibx_request_t *rq)
{
	ibx_status_t st;

	rq->cb = NULL;
	st = ibx_tag_send(mpil_g.ctx, coll_world(g, dst), buf, len, ctag(g, tag), 0, rq);
	return st < 0 ? start_failed(rq, st) : MPI_SUCCESS;
}

int mpil_grp_irecv(const coll_grp_t *g, void *buf, size_t len, int src, int tag, ibx_request_t *rq)
{
	ibx_status_t st;

	rq->cb = NULL;
	st =
	    ibx_tag_recv(mpil_g.ctx, coll_world(g, src), buf, len, ctag(g, tag), MPIL_MASK_TAG, rq);
	return st < 0 ? start_failed(rq, st) : MPI_SUCCESS;
}

int mpil_grp_waitall(ibx_request_t *rq, int n)
{
	int err = MPI_SUCCESS;

	for (int i = 0; i < n; i++) {
		int e = mpil_err_from_ibx(mpil_ibx_wait(&rq[i]));

		if (err == MPI_SUCCESS)
			err = e;
	}
	return err;
}

void mpil_coll_copy_progress(void *dst, const void *src, size_t len)
{
	char *d = dst;
	const char *s = src;

	for (size_t off = 0; off < len; off += COLL_COPY_PIECE) {
		size_t n = len - off < COLL_COPY_PIECE ? len - off : COLL_COPY_PIECE;

		memcpy(d + off, s + off, n);
		ibx_progress(mpil_g.ctx);
	}
}

void mpil_grp_abandon(ibx_request_t *rq, int n)
{
	for (int i = 0; i < n; i++)
		if (!rq[i].completed && rq[i].kind == IBX_REQ_RECV)
			ibx_request_cancel(mpil_g.ctx, &rq[i]);
	mpil_grp_waitall(rq, n);
}

int mpil_coll_send(MPI_Comm comm, const void *buf, size_t len, int dest, int tag)
{
	coll_grp_t g;

	coll_grp_comm(&g, comm);
	return mpil_grp_send(&g, buf, len, dest, tag);
}

int mpil_coll_recv(MPI_Comm comm, void *buf, size_t len, int src, int tag)
{
	coll_grp_t g;

	coll_grp_comm(&g, comm);
	return mpil_grp_recv(&g, buf, len, src, tag);
}

int mpil_coll_sendrecv(MPI_Comm comm, const void *sbuf, size_t slen, int dest, void *rbuf,
		       size_t rlen, int src, int tag)
{
	coll_grp_t g;

	coll_grp_comm(&g, comm);
	return mpil_grp_sendrecv(&g, sbuf, slen, dest, rbuf, rlen, src, tag);
}
