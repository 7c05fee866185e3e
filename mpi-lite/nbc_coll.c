/*
 * nbc_coll.c — MPI_Ibarrier, MPI_Ibcast, MPI_Igather(v) and
 * MPI_Iscatter(v): their argument checks (those of the blocking forms,
 * coll_check.c) and their schedules (nbc.c). Step tags: a round or
 * segment number, or 0 where two ranks exchange one message.
 *
 *   Ibarrier   dissemination: round k, send to r + 2^k, receive from
 *              r - 2^k (ceil(log2 p) rounds of zero-byte messages)
 *   Ibcast     binomial tree; above NBC_BCAST_SEG bytes at p > 2 in
 *              segments, pipelined down the tree:
 *
 *                inner rank, round i:  recv seg i ◄─ parent,
 *                                      send seg i-1 ─► every child
 *
 *   Igather(v), Iscatter(v)   linear: the root posts all p - 1 transfers
 *              in one round, every other rank one
 *
 * Send data is packed when the call is made; data received into a
 * temporary for a non-contiguous type is unpacked in the last round.
 */
#include "nbc_int.h"

#define NBC_BCAST_SEG	   (64 * 1024)
#define NBC_BCAST_MAX_SEGS 64 /* larger messages: larger segments */

/* The displacement of a single block as a v layout of one. */
static const int zero_displ = 0;

static nbc_sched_t *sched_new(MPI_Comm comm, int *err_p, const char *F)
{
	nbc_sched_t *s = mpil_nbc_new(comm);

	if (!s)
		*err_p = mpil_coll_failed(comm, MPI_ERR_NO_MEM, F);
	return s;
}

/* ---- MPI_Ibarrier ---------------------------------------------------------------------------- */

static void barrier_dissemination(nbc_sched_t *s, int p, int r)
{
	int k = 0;

	for (int dist = 1; dist < p; dist <<= 1, k++) {
		mpil_nbc_recv(s, NULL, 0, (r - dist + p) % p, k);
		mpil_nbc_send(s, NULL, 0, (r + dist) % p, k);
		mpil_nbc_round(s);
	}
}

MPIL_PMPI_ALIAS(Ibarrier)
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	static const char F[] = "MPI_Ibarrier";
	MPIL_CS_GUARD();
	nbc_sched_t *s;
	int err;

	MPIL_CHECK(mpil_nbc_check(comm, request, F));
	if (!(s = sched_new(comm, &err, F)))
		return err;
	barrier_dissemination(s, comm->size, comm->rank);
	return mpil_nbc_start(s, F, request);
}

/* ---- MPI_Ibcast ------------------------------------------------------------------------------ */

/* The segment size of a broadcast of @len bytes: the same on every rank. */
static size_t bcast_seg(size_t len, int p)
{
	size_t seg = NBC_BCAST_SEG;

	if (p <= 2 || len <= seg)
		return len;
	if ((len + seg - 1) / seg > NBC_BCAST_MAX_SEGS)
		seg = (len + NBC_BCAST_MAX_SEGS - 1) / NBC_BCAST_MAX_SEGS;
	return seg;
}

static void bcast_binomial(nbc_sched_t *s, MPI_Comm comm, char *buf, size_t len, int root)
{
	size_t seg = bcast_seg(len, comm->size);
	int nseg = (int)((len + seg - 1) / seg), parent, child[32];
	int nc = mpil_nbc_tree(comm->size, comm->rank, root, &parent, child);

#define SEG_AT(i)  (buf + (size_t)(i)*seg)
#define SEG_LEN(i) ((i) == nseg - 1 ? len - (size_t)(i)*seg : seg)
	if (parent < 0 || nc == 0) {
		/* the root sends, a leaf receives, every segment at once */
		for (int i = 0; i < nseg; i++) {
			if (parent < 0)
				for (int c = 0; c < nc; c++)
					mpil_nbc_send(s, SEG_AT(i), SEG_LEN(i), child[c], i);
			else
				mpil_nbc_recv(s, SEG_AT(i), SEG_LEN(i), parent, i);
		}
		mpil_nbc_round(s);
		return;
	}
	for (int i = 0; i <= nseg; i++) {
		if (i < nseg)
			mpil_nbc_recv(s, SEG_AT(i), SEG_LEN(i), parent, i);
		if (i > 0)
			for (int c = 0; c < nc; c++)
				mpil_nbc_send(s, SEG_AT(i - 1), SEG_LEN(i - 1), child[c], i - 1);
		mpil_nbc_round(s);
	}
#undef SEG_AT
#undef SEG_LEN
}

MPIL_PMPI_ALIAS(Ibcast)
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
		MPI_Request *request)
{
	static const char F[] = "MPI_Ibcast";
	MPIL_CS_GUARD();
	nbc_sched_t *s;
	void *tmp = NULL;
	char *data;
	size_t len;
	int err;

	MPIL_CHECK(mpil_nbc_check(comm, request, F));
	MPIL_CHECK(mpil_coll_check_typed(comm, count, datatype, F));
	MPIL_CHECK(mpil_check_buf(comm, buffer, count, datatype, F));
	MPIL_CHECK(mpil_coll_check_root(comm, root, F));
	len = coll_tbytes(count, datatype);
	if (comm->size == 1 || len == 0)
		return mpil_nbc_nothing(comm, F, request);
	if (!(s = sched_new(comm, &err, F)))
		return err;
	if (comm->rank == root)
		data = mpil_coll_tb_read(buffer, count, datatype, &tmp);
	else
		data = mpil_coll_tb_write(buffer, count, datatype, &tmp);
	mpil_nbc_keep(s, tmp);
	if (!data)
		mpil_nbc_fail(s, MPI_ERR_NO_MEM);
	bcast_binomial(s, comm, data, len, root);
	if (comm->rank != root && tmp)
		mpil_nbc_unpack(s, datatype, tmp, len, buffer);
	return mpil_nbc_start(s, F, request);
}

/* ---- MPI_Igather(v) -------------------------------------------------------------------------- */

/* The root's side of a linear gather into @lay (own block: @mine, mylen
 * bytes, NULL when in place), then the unpacking of a packed layout of
 * a non-contiguous type (the block in place excepted). */
static void gather_root(nbc_sched_t *s, MPI_Comm comm, const coll_lay_t *lay, const char *mine,
			size_t mylen)
{
	int p = comm->size, me = comm->rank;

	if (mine)
		mpil_nbc_copy(s, lay_ptr(lay, me), mine, mylen);
	for (int i = 0; i < p; i++)
		if (i != me)
			mpil_nbc_recv(s, lay_ptr(lay, i), lay_len(lay, i), i, 0);
	mpil_nbc_round(s);
}

MPIL_PMPI_ALIAS(Igather)
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
		 MPI_Request *request)
{
	static const char F[] = "MPI_Igather";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE, am_root;
	void *stmp = NULL, *rtmp = NULL;
	const char *mine = NULL;
	size_t len, mylen = 0;
	coll_lay_t lay = {0};
	nbc_sched_t *s;
	int p, err;

	MPIL_CHECK(mpil_nbc_check(comm, request, F));
	MPIL_CHECK(mpil_coll_check_rooted(comm, root, true, sendbuf, sendcount, sendtype, recvbuf,
					  recvcount, recvtype, &len, &mylen, F));
	p = comm->size;
	am_root = comm->rank == root;
	if (len == 0)
		return mpil_nbc_nothing(comm, F, request);
	if (!(s = sched_new(comm, &err, F)))
		return err;
	if (!inplace) {
		mine = mpil_coll_tb_read(sendbuf, sendcount, sendtype, &stmp);
		mpil_nbc_keep(s, stmp);
		if (!mine)
			mpil_nbc_fail(s, MPI_ERR_NO_MEM);
	}
	if (!am_root) {
		mpil_nbc_send(s, mine, mylen, root, 0);
		return mpil_nbc_start(s, F, request);
	}
	err = mpil_coll_lay_regular(&lay, recvbuf, recvcount, recvtype, p, false, -1, &rtmp);
	mpil_nbc_keep(s, rtmp);
	mpil_nbc_fail(s, err);
	if (err != MPI_SUCCESS)
		return mpil_nbc_start(s, F, request); /* reports it */
	gather_root(s, comm, &lay, mine, mylen);
	for (int i = 0; rtmp && i < p; i++)
		if (!(inplace && i == root))
			mpil_nbc_unpack(s, recvtype, lay_ptr(&lay, i), len,
					coll_block_at(recvbuf, i, recvcount, recvtype));
	return mpil_nbc_start(s, F, request);
}

MPIL_PMPI_ALIAS(Igatherv)
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
		  MPI_Comm comm, MPI_Request *request)
{
	static const char F[] = "MPI_Igatherv";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE, am_root;
	void *stmp = NULL, *mem = NULL;
	const char *mine = NULL;
	size_t mylen = 0;
	coll_lay_t lay = {0};
	nbc_sched_t *s;
	long long total;
	int p, err;

	MPIL_CHECK(mpil_nbc_check(comm, request, F));
	MPIL_CHECK(mpil_coll_check_root(comm, root, F));
	p = comm->size;
	am_root = comm->rank == root;
	MPIL_CHECK(mpil_coll_check_inplace_root(comm, inplace, am_root, "sendbuf", F));
	if (!inplace) {
		MPIL_CHECK(mpil_coll_check_typed(comm, sendcount, sendtype, F));
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, sendcount, sendtype, F));
		mylen = coll_tbytes(sendcount, sendtype);
	}
	if (am_root) {
		MPIL_CHECK(mpil_coll_check_counts(comm, recvcounts, p, "recvcounts", &total, F));
		MPIL_CHECK(mpil_coll_check_displs(comm, displs, "displs", F));
		MPIL_CHECK(mpil_check_dtype(comm, recvtype, F));
		MPIL_CHECK(mpil_coll_check_vbuf(comm, recvbuf, total, recvtype, F));
		MPIL_CHECK(
		    mpil_coll_check_recv_blocks(comm, recvbuf, recvcounts, displs, recvtype, p, F));
		if (!inplace) {
			if (mpil_coll_overlap_vv(sendbuf, &sendcount, &zero_displ, sendtype, 1,
						 recvbuf, recvcounts, displs, recvtype, p))
				return mpil_coll_err_alias(comm, F);
			if (mylen > coll_tbytes(recvcounts[root], recvtype))
				return mpil_coll_err_trunc(comm, F, mylen,
							   coll_tbytes(recvcounts[root], recvtype));
		}
	}
	if (!(s = sched_new(comm, &err, F)))
		return err;
	if (!inplace) {
		mine = mpil_coll_tb_read(sendbuf, sendcount, sendtype, &stmp);
		mpil_nbc_keep(s, stmp);
		if (!mine)
			mpil_nbc_fail(s, MPI_ERR_NO_MEM);
	}
	if (!am_root) {
		mpil_nbc_send(s, mine, mylen, root, 0);
		return mpil_nbc_start(s, F, request);
	}
	err = mpil_coll_lay_v(&lay, recvbuf, recvcounts, displs, recvtype, p, false, -1, &mem);
	mpil_nbc_keep(s, mem);
	mpil_nbc_fail(s, err);
	if (err != MPI_SUCCESS)
		return mpil_nbc_start(s, F, request); /* reports it */
	gather_root(s, comm, &lay, mine, mylen);
	for (int i = 0; !mpil_dt_contig(recvtype) && i < p; i++)
		if (!(inplace && i == root))
			mpil_nbc_unpack(s, recvtype, lay_ptr(&lay, i), lay_len(&lay, i),
					coll_at(recvbuf, (MPI_Aint)displs[i] * recvtype->extent));
	return mpil_nbc_start(s, F, request);
}

/* ---- MPI_Iscatter(v) ------------------------------------------------------------------------- */

/* The root's side of a linear scatter from @lay (own block into @mine,
 * NULL when in place). */
static void scatter_root(nbc_sched_t *s, MPI_Comm comm, const coll_lay_t *lay, char *mine)
{
	int p = comm->size, me = comm->rank;

	for (int i = 0; i < p; i++)
		if (i != me)
			mpil_nbc_send(s, lay_ptr(lay, i), lay_len(lay, i), i, 0);
	if (mine)
		mpil_nbc_copy(s, mine, lay_ptr(lay, me), lay_len(lay, me));
	mpil_nbc_round(s);
}

/* The receive side of a scatter (@mylen bytes into @mine, @rtmp a packed
 * temporary of the user's @recvbuf), or the root's own block (@have
 * bytes), then the unpacking. */
static void scatter_mine(nbc_sched_t *s, int root, char *mine, size_t mylen, void *rtmp,
			 void *recvbuf, MPI_Datatype recvtype, size_t have)
{
	if (root >= 0) {
		mpil_nbc_recv(s, mine, mylen, root, 0);
		mpil_nbc_round(s);
		have = mylen;
	}
	if (rtmp)
		mpil_nbc_unpack(s, recvtype, rtmp, have, recvbuf);
}

MPIL_PMPI_ALIAS(Iscatter)
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
		  MPI_Request *request)
{
	static const char F[] = "MPI_Iscatter";
	MPIL_CS_GUARD();
	bool inplace = recvbuf == MPI_IN_PLACE, am_root;
	void *stmp = NULL, *rtmp = NULL;
	char *mine = NULL;
	size_t len, mylen = 0;
	coll_lay_t lay = {0};
	nbc_sched_t *s;
	int p, err;

	MPIL_CHECK(mpil_nbc_check(comm, request, F));
	MPIL_CHECK(mpil_coll_check_rooted(comm, root, false, recvbuf, recvcount, recvtype, sendbuf,
					  sendcount, sendtype, &len, &mylen, F));
	p = comm->size;
	am_root = comm->rank == root;
	if (len == 0)
		return mpil_nbc_nothing(comm, F, request);
	if (!(s = sched_new(comm, &err, F)))
		return err;
	if (!inplace) {
		mine = mpil_coll_tb_write(recvbuf, recvcount, recvtype, &rtmp);
		mpil_nbc_keep(s, rtmp);
		if (!mine)
			mpil_nbc_fail(s, MPI_ERR_NO_MEM);
	}
	if (am_root) {
		err = mpil_coll_lay_regular(&lay, sendbuf, sendcount, sendtype, p, true,
					    inplace ? root : -1, &stmp);
		mpil_nbc_keep(s, stmp);
		mpil_nbc_fail(s, err);
		if (err != MPI_SUCCESS)
			return mpil_nbc_start(s, F, request); /* reports it */
		scatter_root(s, comm, &lay, mine);
	}
	scatter_mine(s, am_root ? -1 : root, mine, mylen, rtmp, recvbuf, recvtype, len);
	return mpil_nbc_start(s, F, request);
}

MPIL_PMPI_ALIAS(Iscatterv)
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
		   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
		   int root, MPI_Comm comm, MPI_Request *request)
{
	static const char F[] = "MPI_Iscatterv";
	MPIL_CS_GUARD();
	bool inplace = recvbuf == MPI_IN_PLACE, am_root;
	void *mem = NULL, *rtmp = NULL;
	char *mine = NULL;
	size_t mylen = 0;
	coll_lay_t lay = {0};
	nbc_sched_t *s;
	long long total;
	int p, err;

	MPIL_CHECK(mpil_nbc_check(comm, request, F));
	MPIL_CHECK(mpil_coll_check_root(comm, root, F));
	p = comm->size;
	am_root = comm->rank == root;
	MPIL_CHECK(mpil_coll_check_inplace_root(comm, inplace, am_root, "recvbuf", F));
	if (!inplace) {
		MPIL_CHECK(mpil_coll_check_typed(comm, recvcount, recvtype, F));
		MPIL_CHECK(mpil_check_buf(comm, recvbuf, recvcount, recvtype, F));
		mylen = coll_tbytes(recvcount, recvtype);
	}
	if (am_root) {
		MPIL_CHECK(mpil_coll_check_counts(comm, sendcounts, p, "sendcounts", &total, F));
		MPIL_CHECK(mpil_coll_check_displs(comm, displs, "displs", F));
		MPIL_CHECK(mpil_check_dtype(comm, sendtype, F));
		MPIL_CHECK(mpil_coll_check_vbuf(comm, sendbuf, total, sendtype, F));
		if (!inplace) {
			if (mpil_coll_overlap_vv(sendbuf, sendcounts, displs, sendtype, p, recvbuf,
						 &recvcount, &zero_displ, recvtype, 1))
				return mpil_coll_err_alias(comm, F);
			if (coll_tbytes(sendcounts[root], sendtype) > mylen)
				return mpil_coll_err_trunc(
				    comm, F, coll_tbytes(sendcounts[root], sendtype), mylen);
		}
	}
	if (!(s = sched_new(comm, &err, F)))
		return err;
	if (!inplace) {
		mine = mpil_coll_tb_write(recvbuf, recvcount, recvtype, &rtmp);
		mpil_nbc_keep(s, rtmp);
		if (!mine)
			mpil_nbc_fail(s, MPI_ERR_NO_MEM);
	}
	if (am_root) {
		err = mpil_coll_lay_v(&lay, sendbuf, sendcounts, displs, sendtype, p, true,
				      inplace ? root : -1, &mem);
		mpil_nbc_keep(s, mem);
		mpil_nbc_fail(s, err);
		if (err != MPI_SUCCESS)
			return mpil_nbc_start(s, F, request); /* reports it */
		scatter_root(s, comm, &lay, mine);
	}
	scatter_mine(s, am_root ? -1 : root, mine, mylen, rtmp, recvbuf, recvtype,
		     am_root ? lay_len(&lay, root) : 0);
	return mpil_nbc_start(s, F, request);
}
