/*
 * coll_exchange.c — the block exchange: every process sends each of its
 * blocks straight to the peer it is for and receives each of its blocks
 * straight from its peer, all at once, on the collective context. The
 * neighbourhood collectives (coll_neighbor.c) and MPI_Alltoallw, whose
 * blocks may all have different types, counts and peers, are made of it:
 *
 *   post every receive (into the user's buffer for a contiguous type, a
 *   temporary otherwise) ─► post every send (packed first if needed)
 *   ─► wait for all ─► unpack the temporaries
 *
 * Blocks between the same two processes with the same tag pair up in the
 * order they are posted (the engine keeps a pair's messages in order);
 * a block whose peer is MPI_PROC_NULL neither moves nor touches its
 * buffer. A zero-byte block still sends a message, so both ends always
 * agree on how many messages there are.
 */
#include "coll_int.h"

/* Starts the @nr receives, then the @ns sends (@tmp: one packing buffer
 * per block, receives first); *started_p requests were started. */
static int exchange_start(const coll_grp_t *g, const coll_xblk_t *send, int ns,
			  const coll_xblk_t *recv, int nr, ibx_request_t *rq, void **tmp,
			  int *started_p)
{
	int k = 0, err = MPI_SUCCESS;

	for (int i = 0; i < nr && err == MPI_SUCCESS; i++) {
		const coll_xblk_t *b = &recv[i];
		char *p;

		if (b->peer == MPI_PROC_NULL)
			continue;
		p = mpil_coll_tb_write(b->buf, b->count, b->dt, &tmp[i]);
		if (!p)
			err = MPI_ERR_NO_MEM;
		else if ((err = mpil_grp_irecv(g, p, coll_tbytes(b->count, b->dt), b->peer, b->tag,
					       &rq[k])) == MPI_SUCCESS)
			k++;
	}
	for (int i = 0; i < ns && err == MPI_SUCCESS; i++) {
		const coll_xblk_t *b = &send[i];
		const char *p;

		if (b->peer == MPI_PROC_NULL)
			continue;
		p = mpil_coll_tb_read(b->buf, b->count, b->dt, &tmp[nr + i]);
		if (!p)
			err = MPI_ERR_NO_MEM;
		else if ((err = mpil_grp_isend(g, p, coll_tbytes(b->count, b->dt), b->peer, b->tag,
					       &rq[k])) == MPI_SUCCESS)
			k++;
	}
	*started_p = k;
	return err;
}

int mpil_coll_exchange(MPI_Comm comm, const coll_xblk_t *send, int ns, const coll_xblk_t *recv,
		       int nr)
{
	size_t n = (size_t)ns + (size_t)nr;
	ibx_request_t *rq = calloc(n + 1, sizeof(*rq));
	void **tmp = calloc(n + 1, sizeof(*tmp));
	int started = 0, err;
	coll_grp_t g;

	if (!rq || !tmp) {
		free(rq);
		free(tmp);
		return MPI_ERR_NO_MEM;
	}
	coll_grp_comm(&g, comm);
	err = exchange_start(&g, send, ns, recv, nr, rq, tmp, &started);
	if (err != MPI_SUCCESS)
		mpil_grp_abandon(rq, started);
	else
		err = mpil_grp_waitall(rq, started);
	for (int i = 0; i < nr; i++)
		if (tmp[i] && err == MPI_SUCCESS) {
			mpil_coll_tb_write_done(recv[i].buf, recv[i].count, recv[i].dt, tmp[i]);
			tmp[i] = NULL;
		}
	for (size_t i = 0; i < n; i++)
		free(tmp[i]);
	free(tmp);
	free(rq);
	return err;
}

/* ---- MPI_Alltoallw ------------------------------------------------------------------------ */

int mpil_coll_check_wblocks(MPI_Comm comm, const int *counts, const void *displs,
			    const MPI_Datatype *types, int n, const char *side, const char *F)
{
	if (n > 0 && (!counts || !displs || !types))
		return mpil_err(comm, MPI_ERR_ARG, F, "%s%s is NULL", side,
				!counts	  ? "counts"
				: !displs ? "displs"
					  : "types");
	for (int i = 0; i < n; i++) {
		if (counts[i] < 0)
			return mpil_err(comm, MPI_ERR_COUNT, F, "%scounts[%d] is negative (%d)",
					side, i, counts[i]);
		/* the type of an empty block is never looked at */
		if (counts[i] > 0)
			MPIL_CHECK(mpil_check_dtype(comm, types[i], F));
	}
	return MPI_SUCCESS;
}

void mpil_coll_xblk_set(coll_xblk_t *b, const void *buf, MPI_Aint displ, int count, MPI_Datatype dt,
			int peer, int tag)
{
	b->buf = coll_at(buf, displ);
	b->count = count;
	b->dt = count > 0 ? dt : MPI_BYTE;
	b->peer = peer;
	b->tag = tag;
}

/* In place: the send blocks are a packed copy of the receive blocks,
 * made before anything arrives; *copy_p is to free. */
static int inplace_sends(coll_xblk_t *s, const coll_xblk_t *r, int p, void **copy_p)
{
	size_t total = 0, off = 0;
	char *copy;

	for (int i = 0; i < p; i++)
		total += coll_tbytes(r[i].count, r[i].dt);
	copy = malloc(total + 1);
	*copy_p = copy;
	if (!copy)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < p; i++) {
		size_t len = coll_tbytes(r[i].count, r[i].dt);

		mpil_dt_pack(r[i].dt, r[i].buf, r[i].count, copy + off);
		mpil_coll_xblk_set(&s[i], copy, (MPI_Aint)off, (int)len, MPI_BYTE, i, CT_ALLTOALLW);
		off += len;
	}
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Alltoallw)
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
		   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
		   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	static const char F[] = "MPI_Alltoallw";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE;
	void *copy = NULL;
	coll_xblk_t *s, *r;
	int p, err = MPI_SUCCESS;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	p = comm->size;
	if (recvbuf == MPI_IN_PLACE)
		return mpil_err(comm, MPI_ERR_BUFFER, F, "MPI_IN_PLACE as recvbuf");
	MPIL_CHECK(mpil_coll_check_wblocks(comm, recvcounts, rdispls, recvtypes, p, "recv", F));
	if (!inplace)
		MPIL_CHECK(
		    mpil_coll_check_wblocks(comm, sendcounts, sdispls, sendtypes, p, "send", F));
	s = malloc(2 * (size_t)p * sizeof(*s));
	if (!s)
		return mpil_coll_failed(comm, MPI_ERR_NO_MEM, F);
	r = s + p;
	for (int i = 0; i < p; i++) {
		mpil_coll_xblk_set(&r[i], recvbuf, rdispls[i], recvcounts[i], recvtypes[i], i,
				   CT_ALLTOALLW);
		if (!inplace)
			mpil_coll_xblk_set(&s[i], sendbuf, sdispls[i], sendcounts[i], sendtypes[i],
					   i, CT_ALLTOALLW);
	}
	if (inplace)
		err = inplace_sends(s, r, p, &copy);
	if (err == MPI_SUCCESS)
		err = mpil_coll_exchange(comm, s, p, r, p);
	free(copy);
	free(s);
	return coll_done(comm, err, F);
}
