/*
 * nbc_blocks.c — MPI_Iallgather(v) and MPI_Ialltoall(v/w): argument
 * checks (those of the blocking forms) and schedules (nbc.c).
 *
 *   Iallgather(v)  total <= NBC_AG_DIRECT bytes: direct, one round (every
 *                  rank sends its block to every other); else a ring:
 *
 *                    round k:  send block r - k ─► r + 1,
 *                              recv block r - k - 1 ◄─ r - 1
 *
 *                  (the total is the same on every rank: all choose alike)
 *   Ialltoall(v)   blocks <= NBC_A2A_DIRECT bytes (or p = 2): all at once,
 *                  one round; else pairwise exchange, round k = 1..p-1:
 *                  send to r + k, receive from r - k. Every ordered pair
 *                  carries exactly one message with step tag 0 either
 *                  way, so ranks of an alltoallv may choose differently
 *                  (each looks at its own blocks).
 *   Ialltoallw     every typed block at once (mpil_nbc_exchange)
 */
#include "nbc_int.h"

#define NBC_AG_DIRECT  (64 * 1024)
#define NBC_A2A_DIRECT (16 * 1024)

/* The displacement of a single block as a v layout of one. */
static const int zero_displ = 0;

static nbc_sched_t *sched_new(MPI_Comm comm, int *err_p, const char *F)
{
	nbc_sched_t *s = mpil_nbc_new(comm);

	if (!s)
		*err_p = mpil_coll_failed(comm, MPI_ERR_NO_MEM, F);
	return s;
}

/* ---- allgather ------------------------------------------------------------------------------- */

static void allgather_direct(nbc_sched_t *s, int p, int me, const coll_lay_t *lay)
{
	for (int i = 0; i < p; i++)
		if (i != me)
			mpil_nbc_recv(s, lay_ptr(lay, i), lay_len(lay, i), i, 0);
	for (int i = 0; i < p; i++)
		if (i != me)
			mpil_nbc_send(s, lay_ptr(lay, me), lay_len(lay, me), i, 0);
	mpil_nbc_round(s);
}

static void allgather_ring(nbc_sched_t *s, int p, int me, const coll_lay_t *lay)
{
	int right = (me + 1) % p, left = (me - 1 + p) % p;

	for (int k = 0; k < p - 1; k++) {
		int sb = (me - k + p) % p, rb = (me - k - 1 + p) % p;

		mpil_nbc_recv(s, lay_ptr(lay, rb), lay_len(lay, rb), left, k);
		mpil_nbc_send(s, lay_ptr(lay, sb), lay_len(lay, sb), right, k);
		mpil_nbc_round(s);
	}
}

/* Every rank's block is in place in @lay: collect the others'. */
static void allgather_sched(nbc_sched_t *s, MPI_Comm comm, const coll_lay_t *lay)
{
	size_t total = 0;

	for (int i = 0; i < comm->size; i++)
		total += lay_len(lay, i);
	if (total <= NBC_AG_DIRECT)
		allgather_direct(s, comm->size, comm->rank, lay);
	else
		allgather_ring(s, comm->size, comm->rank, lay);
}

MPIL_PMPI_ALIAS(Iallgather)
int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	static const char F[] = "MPI_Iallgather";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE;
	void *rtmp = NULL;
	coll_lay_t lay;
	nbc_sched_t *s;
	size_t len;
	int p, me, err;

	MPIL_CHECK(mpil_nbc_check(comm, request, F));
	p = comm->size;
	me = comm->rank;
	MPIL_CHECK(mpil_coll_check_typed(comm, recvcount, recvtype, F));
	MPIL_CHECK(mpil_check_buf(comm, recvbuf, recvcount, recvtype, F));
	len = coll_tbytes(recvcount, recvtype);
	if (!inplace) {
		MPIL_CHECK(mpil_coll_check_typed(comm, sendcount, sendtype, F));
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, sendcount, sendtype, F));
		if (mpil_coll_overlap(sendbuf, sendcount, sendtype, recvbuf,
				      (long long)recvcount * p, recvtype))
			return mpil_coll_err_alias(comm, F);
		if (coll_tbytes(sendcount, sendtype) > len)
			return mpil_coll_err_trunc(comm, F, coll_tbytes(sendcount, sendtype), len);
	}
	if (len == 0)
		return mpil_nbc_nothing(comm, F, request);
	if (!(s = sched_new(comm, &err, F)))
		return err;
	err = mpil_coll_lay_regular(&lay, recvbuf, recvcount, recvtype, p, false, -1, &rtmp);
	mpil_nbc_keep(s, rtmp);
	mpil_nbc_fail(s, err);
	if (err != MPI_SUCCESS)
		return mpil_nbc_start(s, F, request); /* reports it */
	/* own block into place, packed, now */
	if (!inplace)
		mpil_dt_pack(sendtype, sendbuf, sendcount, lay_ptr(&lay, me));
	else if (rtmp)
		mpil_dt_pack(recvtype, coll_block_at(recvbuf, me, recvcount, recvtype), recvcount,
			     lay_ptr(&lay, me));
	allgather_sched(s, comm, &lay);
	for (int i = 0; rtmp && i < p; i++)
		if (!(inplace && i == me))
			mpil_nbc_unpack(s, recvtype, lay_ptr(&lay, i), len,
					coll_block_at(recvbuf, i, recvcount, recvtype));
	return mpil_nbc_start(s, F, request);
}

MPIL_PMPI_ALIAS(Iallgatherv)
int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
		     MPI_Comm comm, MPI_Request *request)
{
	static const char F[] = "MPI_Iallgatherv";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE;
	void *mem = NULL;
	coll_lay_t lay;
	nbc_sched_t *s;
	long long total;
	int p, me, err;

	MPIL_CHECK(mpil_nbc_check(comm, request, F));
	p = comm->size;
	me = comm->rank;
	MPIL_CHECK(mpil_coll_check_counts(comm, recvcounts, p, "recvcounts", &total, F));
	MPIL_CHECK(mpil_coll_check_displs(comm, displs, "displs", F));
	MPIL_CHECK(mpil_check_dtype(comm, recvtype, F));
	MPIL_CHECK(mpil_coll_check_vbuf(comm, recvbuf, total, recvtype, F));
	MPIL_CHECK(mpil_coll_check_recv_blocks(comm, recvbuf, recvcounts, displs, recvtype, p, F));
	if (!inplace) {
		MPIL_CHECK(mpil_coll_check_typed(comm, sendcount, sendtype, F));
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, sendcount, sendtype, F));
		if (mpil_coll_overlap_vv(sendbuf, &sendcount, &zero_displ, sendtype, 1, recvbuf,
					 recvcounts, displs, recvtype, p))
			return mpil_coll_err_alias(comm, F);
		if (coll_tbytes(sendcount, sendtype) > coll_tbytes(recvcounts[me], recvtype))
			return mpil_coll_err_trunc(comm, F, coll_tbytes(sendcount, sendtype),
						   coll_tbytes(recvcounts[me], recvtype));
	}
	if (total == 0 || recvtype->size == 0)
		return mpil_nbc_nothing(comm, F, request);
	if (!(s = sched_new(comm, &err, F)))
		return err;
	err = mpil_coll_lay_v(&lay, recvbuf, recvcounts, displs, recvtype, p, false, -1, &mem);
	mpil_nbc_keep(s, mem);
	mpil_nbc_fail(s, err);
	if (err != MPI_SUCCESS)
		return mpil_nbc_start(s, F, request); /* reports it */
	if (!inplace)
		mpil_dt_pack(sendtype, sendbuf, sendcount, lay_ptr(&lay, me));
	else if (!mpil_dt_contig(recvtype))
		mpil_dt_pack(recvtype, coll_at(recvbuf, (MPI_Aint)displs[me] * recvtype->extent),
			     recvcounts[me], lay_ptr(&lay, me));
	allgather_sched(s, comm, &lay);
	for (int i = 0; !mpil_dt_contig(recvtype) && i < p; i++)
		if (!(inplace && i == me))
			mpil_nbc_unpack(s, recvtype, lay_ptr(&lay, i), lay_len(&lay, i),
					coll_at(recvbuf, (MPI_Aint)displs[i] * recvtype->extent));
	return mpil_nbc_start(s, F, request);
}

/* ---- alltoall -------------------------------------------------------------------------------- */

/* Block i of @send to rank i, block i of @recv from rank i; @pairwise:
 * one peer per round. */
static void alltoall_sched(nbc_sched_t *s, MPI_Comm comm, const coll_lay_t *send,
			   const coll_lay_t *recv, bool pairwise)
{
	int p = comm->size, me = comm->rank;

	mpil_nbc_copy(s, lay_ptr(recv, me), lay_ptr(send, me), lay_len(send, me));
	for (int k = 1; k < p; k++) {
		int to = (me + k) % p, from = (me - k + p) % p;

		mpil_nbc_recv(s, lay_ptr(recv, from), lay_len(recv, from), from, 0);
		mpil_nbc_send(s, lay_ptr(send, to), lay_len(send, to), to, 0);
		if (pairwise)
			mpil_nbc_round(s);
	}
	mpil_nbc_round(s);
}

/* The largest block of two layouts. */
static size_t lay_max(const coll_lay_t *a, const coll_lay_t *b, int p)
{
	size_t m = 0;

	for (int i = 0; i < p; i++) {
		if (lay_len(a, i) > m)
			m = lay_len(a, i);
		if (lay_len(b, i) > m)
			m = lay_len(b, i);
	}
	return m;
}

MPIL_PMPI_ALIAS(Ialltoall)
int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	static const char F[] = "MPI_Ialltoall";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE;
	void *stmp = NULL, *rtmp = NULL;
	coll_lay_t slay, rlay;
	nbc_sched_t *s;
	size_t slen, rlen;
	int p, err;

	MPIL_CHECK(mpil_nbc_check(comm, request, F));
	p = comm->size;
	MPIL_CHECK(mpil_coll_check_typed(comm, recvcount, recvtype, F));
	MPIL_CHECK(mpil_check_buf(comm, recvbuf, recvcount, recvtype, F));
	rlen = coll_tbytes(recvcount, recvtype);
	if (!inplace) {
		MPIL_CHECK(mpil_coll_check_typed(comm, sendcount, sendtype, F));
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, sendcount, sendtype, F));
		if (mpil_coll_overlap(sendbuf, (long long)sendcount * p, sendtype, recvbuf,
				      (long long)recvcount * p, recvtype))
			return mpil_coll_err_alias(comm, F);
		slen = coll_tbytes(sendcount, sendtype);
		if (slen > rlen)
			return mpil_coll_err_trunc(comm, F, slen, rlen);
	} else {
		slen = rlen;
	}
	if (slen == 0 && rlen == 0)
		return mpil_nbc_nothing(comm, F, request);
	if (!(s = sched_new(comm, &err, F)))
		return err;
	/* in place, the send data is the receive buffer's: a packed copy */
	if (inplace)
		err = mpil_coll_lay_regular_copy(&slay, recvbuf, recvcount, recvtype, p, &stmp);
	else
		err =
		    mpil_coll_lay_regular(&slay, sendbuf, sendcount, sendtype, p, true, -1, &stmp);
	mpil_nbc_keep(s, stmp);
	if (err == MPI_SUCCESS)
		err =
		    mpil_coll_lay_regular(&rlay, recvbuf, recvcount, recvtype, p, false, -1, &rtmp);
	mpil_nbc_keep(s, rtmp);
	mpil_nbc_fail(s, err);
	if (err != MPI_SUCCESS)
		return mpil_nbc_start(s, F, request); /* reports it */
	alltoall_sched(s, comm, &slay, &rlay, p > 2 && rlen > NBC_A2A_DIRECT);
	if (rtmp)
		mpil_nbc_unpack(s, recvtype, rtmp, (size_t)p * rlen, recvbuf);
	return mpil_nbc_start(s, F, request);
}

MPIL_PMPI_ALIAS(Ialltoallv)
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
		    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	static const char F[] = "MPI_Ialltoallv";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE;
	void *smem = NULL, *rmem = NULL;
	coll_lay_t slay, rlay;
	nbc_sched_t *s;
	long long stotal, rtotal;
	int p, me, err;

	MPIL_CHECK(mpil_nbc_check(comm, request, F));
	p = comm->size;
	me = comm->rank;
	MPIL_CHECK(mpil_coll_check_counts(comm, recvcounts, p, "recvcounts", &rtotal, F));
	MPIL_CHECK(mpil_coll_check_displs(comm, rdispls, "rdispls", F));
	MPIL_CHECK(mpil_check_dtype(comm, recvtype, F));
	MPIL_CHECK(mpil_coll_check_vbuf(comm, recvbuf, rtotal, recvtype, F));
	MPIL_CHECK(mpil_coll_check_recv_blocks(comm, recvbuf, recvcounts, rdispls, recvtype, p, F));
	if (!inplace) {
		MPIL_CHECK(mpil_coll_check_counts(comm, sendcounts, p, "sendcounts", &stotal, F));
		MPIL_CHECK(mpil_coll_check_displs(comm, sdispls, "sdispls", F));
		MPIL_CHECK(mpil_check_dtype(comm, sendtype, F));
		MPIL_CHECK(mpil_coll_check_vbuf(comm, sendbuf, stotal, sendtype, F));
		if (mpil_coll_overlap_vv(sendbuf, sendcounts, sdispls, sendtype, p, recvbuf,
					 recvcounts, rdispls, recvtype, p))
			return mpil_coll_err_alias(comm, F);
		if (coll_tbytes(sendcounts[me], sendtype) > coll_tbytes(recvcounts[me], recvtype))
			return mpil_coll_err_trunc(comm, F, coll_tbytes(sendcounts[me], sendtype),
						   coll_tbytes(recvcounts[me], recvtype));
	}
	if (!(s = sched_new(comm, &err, F)))
		return err;
	if (!inplace)
		err = mpil_coll_lay_v(&slay, sendbuf, sendcounts, sdispls, sendtype, p, true, -1,
				      &smem);
	else /* a packed copy of what the receive buffer holds */
		err = mpil_coll_lay_v_copy(&slay, recvbuf, recvcounts, rdispls, recvtype, p, &smem);
	mpil_nbc_keep(s, smem);
	if (err == MPI_SUCCESS)
		err = mpil_coll_lay_v(&rlay, recvbuf, recvcounts, rdispls, recvtype, p, false, -1,
				      &rmem);
	mpil_nbc_keep(s, rmem);
	mpil_nbc_fail(s, err);
	if (err != MPI_SUCCESS)
		return mpil_nbc_start(s, F, request); /* reports it */
	alltoall_sched(s, comm, &slay, &rlay, p > 2 && lay_max(&slay, &rlay, p) > NBC_A2A_DIRECT);
	for (int i = 0; !mpil_dt_contig(recvtype) && i < p; i++)
		mpil_nbc_unpack(s, recvtype, lay_ptr(&rlay, i), lay_len(&rlay, i),
				coll_at(recvbuf, (MPI_Aint)rdispls[i] * recvtype->extent));
	return mpil_nbc_start(s, F, request);
}

/* In place: the send blocks are a packed copy of the receive blocks,
 * made when the call is (freed with the schedule). */
static void inplace_sends(nbc_sched_t *s, coll_xblk_t *sb, const coll_xblk_t *rb, int p)
{
	size_t total = 0, off = 0;
	char *copy;

	for (int i = 0; i < p; i++)
		total += coll_tbytes(rb[i].count, rb[i].dt);
	copy = mpil_nbc_tmp(s, total + 1);
	for (int i = 0; copy && i < p; i++) {
		size_t len = coll_tbytes(rb[i].count, rb[i].dt);

		mpil_dt_pack(rb[i].dt, rb[i].buf, rb[i].count, copy + off);
		mpil_coll_xblk_set(&sb[i], copy, (MPI_Aint)off, (int)len, MPI_BYTE, i, 0);
		off += len;
	}
}

MPIL_PMPI_ALIAS(Ialltoallw)
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
		    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
		    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
		    MPI_Request *request)
{
	static const char F[] = "MPI_Ialltoallw";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE;
	coll_xblk_t *sb, *rb;
	nbc_sched_t *s;
	int p, err;

	MPIL_CHECK(mpil_nbc_check(comm, request, F));
	p = comm->size;
	if (recvbuf == MPI_IN_PLACE)
		return mpil_err(comm, MPI_ERR_BUFFER, F, "MPI_IN_PLACE as recvbuf");
	MPIL_CHECK(mpil_coll_check_wblocks(comm, recvcounts, rdispls, recvtypes, p, "recv", F));
	if (!inplace)
		MPIL_CHECK(
		    mpil_coll_check_wblocks(comm, sendcounts, sdispls, sendtypes, p, "send", F));
	if (!(s = sched_new(comm, &err, F)))
		return err;
	sb = mpil_nbc_tmp(s, 2 * (size_t)p * sizeof(*sb));
	if (!sb)
		return mpil_nbc_start(s, F, request); /* reports it */
	rb = sb + p;
	for (int i = 0; i < p; i++) {
		mpil_coll_xblk_set(&rb[i], recvbuf, rdispls[i], recvcounts[i], recvtypes[i], i, 0);
		if (!inplace)
			mpil_coll_xblk_set(&sb[i], sendbuf, sdispls[i], sendcounts[i], sendtypes[i],
					   i, 0);
	}
	if (inplace)
		inplace_sends(s, sb, rb, p);
	mpil_nbc_exchange(s, sb, p, rb, p);
	return mpil_nbc_start(s, F, request);
}
