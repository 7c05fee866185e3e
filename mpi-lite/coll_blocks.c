/*
 * coll_blocks.c — the MPI entry points of the collectives that move one
 * block per rank (MPI-3.1 §5.5-5.8): MPI_Gather(v), MPI_Scatter(v),
 * MPI_Allgather(v), MPI_Alltoall(v). Each checks its arguments
 * (coll_check.c), lays the typed buffers out as byte blocks
 * (coll_layout.c) and hands them to its family's dispatcher, which runs
 * what the selection table names (coll_select.c). See coll.c for the data
 * path.
 */
#include "coll_int.h"

/* The displacement of a single block as a v layout of one. */
static const int zero_displ = 0;

MPIL_PMPI_ALIAS(Gather)
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	static const char F[] = "MPI_Gather";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE, am_root;
	void *stmp = NULL, *rtmp = NULL;
	const char *mine = NULL;
	size_t len, mylen = 0;
	coll_lay_t lay = {0};
	coll_grp_t g;
	int p, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(mpil_coll_check_rooted(comm, root, true, sendbuf, sendcount, sendtype, recvbuf,
					  recvcount, recvtype, &len, &mylen, F));
	p = comm->size;
	am_root = comm->rank == root;
	if (len == 0)
		return MPI_SUCCESS; /* the same on every rank: signatures match */
	if (!inplace) {
		mine = mpil_coll_tb_read(sendbuf, sendcount, sendtype, &stmp);
		if (!mine)
			return mpil_coll_failed(comm, MPI_ERR_NO_MEM, F);
	}
	lay.len = lay.stride = len;
	if (am_root) {
		/* A packed receive buffer holds the root's own block too (the
		 * tree reads it from there when in place). */
		err =
		    mpil_coll_lay_regular(&lay, recvbuf, recvcount, recvtype, p, false, -1, &rtmp);
		if (err != MPI_SUCCESS)
			goto out;
		if (inplace && rtmp)
			mpil_dt_pack(recvtype, coll_block_at(recvbuf, root, recvcount, recvtype),
				     recvcount, lay.base + (size_t)root * len);
	}
	coll_grp_comm(&g, comm);
	err = mpil_coll_gather(&g, MPIL_COLL_GATHER, root, mine, mylen, &lay);
	if (err == MPI_SUCCESS && am_root)
		mpil_coll_lay_regular_done(&lay, recvbuf, recvcount, recvtype, p,
					   inplace ? root : -1, rtmp);
	else
		free(rtmp);
out:
	free(stmp);
	return coll_done(comm, err, F);
}

MPIL_PMPI_ALIAS(Gatherv)
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
		 MPI_Comm comm)
{
	static const char F[] = "MPI_Gatherv";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE, am_root;
	void *stmp = NULL, *mem = NULL;
	const char *mine = NULL;
	size_t mylen = 0;
	coll_lay_t lay = {0};
	coll_grp_t g;
	long long total;
	int p, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
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
	if (!inplace) {
		mine = mpil_coll_tb_read(sendbuf, sendcount, sendtype, &stmp);
		if (!mine)
			return mpil_coll_failed(comm, MPI_ERR_NO_MEM, F);
	}
	if (am_root) {
		err = mpil_coll_lay_v(&lay, recvbuf, recvcounts, displs, recvtype, p, false, -1,
				      &mem);
		if (err != MPI_SUCCESS)
			goto out;
	}
	coll_grp_comm(&g, comm);
	err = mpil_coll_gather(&g, MPIL_COLL_GATHERV, root, mine, mylen, &lay);
	if (err == MPI_SUCCESS && am_root)
		mpil_coll_lay_v_done(&lay, recvbuf, recvcounts, displs, recvtype, p,
				     inplace ? root : -1);
out:
	free(mem);
	free(stmp);
	return coll_done(comm, err, F);
}

MPIL_PMPI_ALIAS(Scatter)
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	static const char F[] = "MPI_Scatter";
	MPIL_CS_GUARD();
	bool inplace = recvbuf == MPI_IN_PLACE, am_root;
	void *stmp = NULL, *rtmp = NULL;
	char *mine = NULL;
	size_t len, mylen = 0;
	coll_lay_t lay = {0};
	coll_grp_t g;
	int p, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(mpil_coll_check_rooted(comm, root, false, recvbuf, recvcount, recvtype, sendbuf,
					  sendcount, sendtype, &len, &mylen, F));
	p = comm->size;
	am_root = comm->rank == root;
	if (len == 0)
		return MPI_SUCCESS; /* the same on every rank: signatures match */
	if (!inplace) {
		mine = mpil_coll_tb_write(recvbuf, recvcount, recvtype, &rtmp);
		if (!mine)
			return mpil_coll_failed(comm, MPI_ERR_NO_MEM, F);
	}
	lay.len = lay.stride = len;
	if (am_root) {
		err = mpil_coll_lay_regular(&lay, sendbuf, sendcount, sendtype, p, true,
					    inplace ? root : -1, &stmp);
		if (err != MPI_SUCCESS)
			goto out;
	}
	coll_grp_comm(&g, comm);
	err = mpil_coll_scatter(&g, MPIL_COLL_SCATTER, root, &lay, mine, mylen);
out:
	if (err == MPI_SUCCESS && !inplace) {
		mpil_coll_tb_write_done(recvbuf, recvcount, recvtype, rtmp);
		rtmp = NULL;
	}
	free(rtmp);
	free(stmp);
	return coll_done(comm, err, F);
}

MPIL_PMPI_ALIAS(Scatterv)
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
		  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
		  int root, MPI_Comm comm)
{
	static const char F[] = "MPI_Scatterv";
	MPIL_CS_GUARD();
	bool inplace = recvbuf == MPI_IN_PLACE, am_root;
	void *mem = NULL, *rtmp = NULL;
	char *mine = NULL;
	size_t mylen = 0;
	coll_lay_t lay = {0};
	coll_grp_t g;
	long long total;
	int p, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
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
	if (!inplace) {
		mine = mpil_coll_tb_write(recvbuf, recvcount, recvtype, &rtmp);
		if (!mine)
			return mpil_coll_failed(comm, MPI_ERR_NO_MEM, F);
	}
	if (am_root) {
		err = mpil_coll_lay_v(&lay, sendbuf, sendcounts, displs, sendtype, p, true,
				      inplace ? root : -1, &mem);
		if (err != MPI_SUCCESS)
			goto out;
	}
	coll_grp_comm(&g, comm);
	err = mpil_coll_scatter(&g, MPIL_COLL_SCATTERV, root, &lay, mine, mylen);
out:
	if (err == MPI_SUCCESS && !inplace) {
		mpil_coll_tb_write_done(recvbuf, recvcount, recvtype, rtmp);
		rtmp = NULL;
	}
	free(rtmp);
	free(mem);
	return coll_done(comm, err, F);
}

/* ---- allgather ------------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Allgather)
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char F[] = "MPI_Allgather";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE;
	void *rtmp = NULL;
	coll_lay_t lay;
	coll_grp_t g;
	size_t len;
	int p, me, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
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
		return MPI_SUCCESS;
	err = mpil_coll_lay_regular(&lay, recvbuf, recvcount, recvtype, p, false, -1, &rtmp);
	if (err != MPI_SUCCESS)
		return mpil_coll_failed(comm, err, F);
	/* Own block into place, packed. */
	if (!inplace)
		mpil_dt_pack(sendtype, sendbuf, sendcount, lay_ptr(&lay, me));
	else if (rtmp)
		mpil_dt_pack(recvtype, coll_block_at(recvbuf, me, recvcount, recvtype), recvcount,
			     lay_ptr(&lay, me));
	coll_grp_comm(&g, comm);
	err = mpil_coll_allgather(&g, MPIL_COLL_ALLGATHER, &lay);
	if (err == MPI_SUCCESS)
		mpil_coll_lay_regular_done(&lay, recvbuf, recvcount, recvtype, p, inplace ? me : -1,
					   rtmp);
	else
		free(rtmp);
	return coll_done(comm, err, F);
}

MPIL_PMPI_ALIAS(Allgatherv)
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
		    MPI_Comm comm)
{
	static const char F[] = "MPI_Allgatherv";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE;
	void *mem = NULL;
	coll_lay_t lay;
	coll_grp_t g;
	long long total;
	int p, me, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
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
		return MPI_SUCCESS;
	/* A packed layout holds the own block when in place. */
	err = mpil_coll_lay_v(&lay, recvbuf, recvcounts, displs, recvtype, p, false, -1, &mem);
	if (err != MPI_SUCCESS)
		return mpil_coll_failed(comm, err, F);
	if (!inplace)
		mpil_dt_pack(sendtype, sendbuf, sendcount, lay_ptr(&lay, me));
	else if (!mpil_dt_contig(recvtype))
		mpil_dt_pack(recvtype, coll_at(recvbuf, (MPI_Aint)displs[me] * recvtype->extent),
			     recvcounts[me], lay_ptr(&lay, me));
	coll_grp_comm(&g, comm);
	err = mpil_coll_allgather(&g, MPIL_COLL_ALLGATHERV, &lay);
	if (err == MPI_SUCCESS)
		mpil_coll_lay_v_done(&lay, recvbuf, recvcounts, displs, recvtype, p,
				     inplace ? me : -1);
	free(mem);
	return coll_done(comm, err, F);
}

/* ---- alltoall -------------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Alltoall)
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char F[] = "MPI_Alltoall";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE;
	void *stmp = NULL, *rtmp = NULL;
	coll_lay_t slay, rlay;
	coll_grp_t g;
	size_t slen, rlen;
	int p, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
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
		return MPI_SUCCESS;
	/* In place, the send data is the receive buffer's: a packed copy. */
	if (inplace)
		err = mpil_coll_lay_regular_copy(&slay, recvbuf, recvcount, recvtype, p, &stmp);
	else
		err =
		    mpil_coll_lay_regular(&slay, sendbuf, sendcount, sendtype, p, true, -1, &stmp);
	if (err == MPI_SUCCESS)
		err =
		    mpil_coll_lay_regular(&rlay, recvbuf, recvcount, recvtype, p, false, -1, &rtmp);
	if (err != MPI_SUCCESS)
		goto out;
	coll_grp_comm(&g, comm);
	err = mpil_coll_alltoall(&g, MPIL_COLL_ALLTOALL, &slay, &rlay);
	if (err == MPI_SUCCESS) {
		mpil_coll_lay_regular_done(&rlay, recvbuf, recvcount, recvtype, p, -1, rtmp);
		rtmp = NULL;
	}
out:
	free(rtmp);
	free(stmp);
	return coll_done(comm, err, F);
}

MPIL_PMPI_ALIAS(Alltoallv)
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
		   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char F[] = "MPI_Alltoallv";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE;
	void *smem = NULL, *rmem = NULL;
	coll_lay_t slay, rlay;
	coll_grp_t g;
	long long stotal, rtotal;
	int p, me, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
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
		err = mpil_coll_lay_v(&slay, sendbuf, sendcounts, sdispls, sendtype, p, true, -1,
				      &smem);
	} else {
		/* In place: a packed copy of what the receive buffer holds. */
		err = mpil_coll_lay_v_copy(&slay, recvbuf, recvcounts, rdispls, recvtype, p, &smem);
	}
	if (err == MPI_SUCCESS)
		err = mpil_coll_lay_v(&rlay, recvbuf, recvcounts, rdispls, recvtype, p, false, -1,
				      &rmem);
	if (err != MPI_SUCCESS)
		goto out;
	coll_grp_comm(&g, comm);
	err = mpil_coll_alltoall(&g, MPIL_COLL_ALLTOALLV, &slay, &rlay);
	if (err == MPI_SUCCESS)
		mpil_coll_lay_v_done(&rlay, recvbuf, recvcounts, rdispls, recvtype, p, -1);
out:
	free(rmem);
	free(smem);
	return coll_done(comm, err, F);
}
