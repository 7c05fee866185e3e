/*
 * coll.c — the collective operations of MPI-3.1 chapter 5 (blocking, on
 * intracommunicators). This file holds the entry points of MPI_Barrier,
 * MPI_Bcast and the reductions; coll_blocks.c those of the gather family.
 * An entry point checks its arguments (coll_check.c), turns typed buffers
 * into bytes (coll_layout.c, coll_redbuf.c) and calls its family's
 * dispatcher (coll_<family>.c), which runs the algorithm that the
 * selection table names (coll_select.c). coll_int.h maps the files.
 *
 * Data path of every collective:
 *
 *   user buffer ──(contiguous type: in place | else mpil_dt_pack)──► bytes
 *   bytes ──algorithm (coll_*.c) on the collective context cid | 1──► bytes
 *   bytes ──(contiguous: already there | else mpil_dt_unpack)──► user buffer
 *
 * so derived datatypes work wherever mpil_dt_pack/unpack handle them. Only
 * the type signatures must match between ranks (MPI), never the types.
 * Reductions run on predefined elements: a derived type reduced with a
 * predefined op is packed into the one predefined type it is made of; with
 * a user op the user function gets the user's datatype and layout.
 *
 * Algorithms by collective and size (p ranks; n bytes). A summary: the one
 * source of truth is the table in coll_select.c, which every dispatcher
 * consults; `ibtest info` prints it, and so does MPI_Init on rank 0 with
 * IBX_LOG=info.
 *
 *   Barrier         dissemination; across nodes: fan-in, leaders, fan-out
 *   Bcast           p = 2 or n <= 64 KiB (or ranks outnumber cores):
 *                   binomial (one node, oversubscribed, p <= 8: linear);
 *                   else scatter + ring allgather
 *   Reduce          binomial (rank-ordered tree for non-commutative ops);
 *                   commutative, p > 2, n > 64 KiB: ring reduce-scatter +
 *                   gather to the root
 *   Allreduce       p = 2, commutative: one exchange + local op; n <= 16 KiB
 *                   or non-commutative: recursive doubling; else
 *                   Rabenseifner (recursive halving reduce-scatter +
 *                   recursive doubling allgather)
 *   Reduce_scatter  commutative: ring; else reduce + scatter
 *   Scan, Exscan    recursive doubling
 *   Gather, Scatter block <= 2 KiB and p > 2: binomial; else linear
 *   Gatherv, Scatterv  linear
 *   Allgather       total <= 32 KiB and p > 2: Bruck; else ring
 *   Allgatherv      ring
 *   Alltoall        block <= 256 B and p > 2: Bruck; else pairwise
 *   Alltoallv       pairwise
 *
 * Bcast, Barrier, Allreduce and Reduce with commutative ops are node-aware
 * on communicators that span several nodes (coll_node.c): the phases
 * inside a node and among the nodes' representatives each pick their
 * algorithm from the table.
 */
#include "coll_int.h"

/* ---- MPI_Barrier, MPI_Bcast ----------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Barrier)
int PMPI_Barrier(MPI_Comm comm)
{
	static const char F[] = "MPI_Barrier";
	MPIL_CS_GUARD();
	int err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	err = mpil_barrier(comm);
	return coll_done(comm, err, F);
}

MPIL_PMPI_ALIAS(Bcast)
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
	static const char F[] = "MPI_Bcast";
	MPIL_CS_GUARD();
	size_t len;
	void *tmp = NULL;
	char *data;
	int err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(mpil_coll_check_typed(comm, count, datatype, F));
	MPIL_CHECK(mpil_check_buf(comm, buffer, count, datatype, F));
	MPIL_CHECK(mpil_coll_check_root(comm, root, F));
	len = coll_tbytes(count, datatype);
	if (comm->size == 1 || len == 0)
		return MPI_SUCCESS;
	if (comm->rank == root)
		data = mpil_coll_tb_read(buffer, count, datatype, &tmp);
	else
		data = mpil_coll_tb_write(buffer, count, datatype, &tmp);
	if (!data)
		return mpil_coll_failed(comm, MPI_ERR_NO_MEM, F);
	err = mpil_bcast_bytes(data, len, root, comm);
	if (comm->rank == root || err != MPI_SUCCESS)
		free(tmp);
	else
		mpil_coll_tb_write_done(buffer, count, datatype, tmp);
	return coll_done(comm, err, F);
}

/* ---- reductions ---------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Reduce)
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		int root, MPI_Comm comm)
{
	static const char F[] = "MPI_Reduce";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE, am_root;
	coll_red_io_t io;
	coll_grp_t g;
	void *base = NULL, *w;
	int n, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(mpil_coll_check_root(comm, root, F));
	MPIL_CHECK(mpil_check_count(comm, count, F));
	MPIL_CHECK(mpil_coll_check_reduction(comm, count, datatype, op, &io, F));
	am_root = comm->rank == root;
	MPIL_CHECK(mpil_coll_check_inplace_root(comm, inplace, am_root, "sendbuf", F));
	if (!inplace)
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, count, datatype, F));
	if (am_root) {
		MPIL_CHECK(mpil_check_buf(comm, recvbuf, count, datatype, F));
		if (!inplace &&
		    (sendbuf == recvbuf ||
		     mpil_coll_overlap(sendbuf, count, datatype, recvbuf, count, datatype)) &&
		    count > 0 && datatype->size > 0)
			return mpil_coll_err_alias(comm, F);
	}
	if (count == 0 || datatype->size == 0)
		return MPI_SUCCESS;
	coll_grp_comm(&g, comm);
	n = coll_red_n(&io, count);
	if (io.direct) {
		err =
		    mpil_coll_reduce(&g, inplace ? NULL : coll_red_wptr(&io, sendbuf),
				     am_root ? coll_red_wptr(&io, recvbuf) : NULL, n, &io.rd, root);
	} else {
		w = mpil_coll_red_load(&io, inplace ? recvbuf : sendbuf, count, &base);
		if (!w)
			return mpil_coll_failed(comm, MPI_ERR_NO_MEM, F);
		err = mpil_coll_reduce(&g, am_root ? NULL : w, am_root ? w : NULL, n, &io.rd, root);
		if (err == MPI_SUCCESS && am_root)
			err = mpil_coll_red_store(&io, w, recvbuf, count);
		free(base);
	}
	return coll_done(comm, err, F);
}

/* Allreduce, Scan and Exscan: the same arguments, different algorithms. */
enum { RED_ALL, RED_SCAN, RED_EXSCAN };

static int reduce_all(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		      MPI_Op op, MPI_Comm comm, int kind, const char *F)
{
	bool inplace = sendbuf == MPI_IN_PLACE;
	coll_red_io_t io;
	coll_grp_t g;
	void *base = NULL, *w;
	int n, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(mpil_check_count(comm, count, F));
	MPIL_CHECK(mpil_coll_check_reduction(comm, count, datatype, op, &io, F));
	MPIL_CHECK(mpil_check_buf(comm, recvbuf, count, datatype, F));
	if (!inplace) {
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, count, datatype, F));
		if ((sendbuf == recvbuf ||
		     mpil_coll_overlap(sendbuf, count, datatype, recvbuf, count, datatype)) &&
		    count > 0 && datatype->size > 0)
			return mpil_coll_err_alias(comm, F);
	}
	if (count == 0 || datatype->size == 0)
		return MPI_SUCCESS;
	coll_grp_comm(&g, comm);
	n = coll_red_n(&io, count);
	if (io.direct) {
		const void *s = inplace ? NULL : coll_red_wptr(&io, sendbuf);

		w = coll_red_wptr(&io, recvbuf);
		if (kind == RED_ALL)
			err = mpil_coll_allreduce(&g, s, w, n, &io.rd);
		else
			err = mpil_coll_scan(&g, s, w, n, &io.rd, kind == RED_EXSCAN);
		return coll_done(comm, err, F);
	}
	w = mpil_coll_red_load(&io, inplace ? recvbuf : sendbuf, count, &base);
	if (!w)
		return mpil_coll_failed(comm, MPI_ERR_NO_MEM, F);
	if (kind == RED_ALL)
		err = mpil_coll_allreduce(&g, NULL, w, n, &io.rd);
	else
		err = mpil_coll_scan(&g, NULL, w, n, &io.rd, kind == RED_EXSCAN);
	if (err == MPI_SUCCESS && !(kind == RED_EXSCAN && comm->rank == 0))
		err = mpil_coll_red_store(&io, w, recvbuf, count);
	free(base);
	return coll_done(comm, err, F);
}

MPIL_PMPI_ALIAS(Allreduce)
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		   MPI_Comm comm)
{
	MPIL_CS_GUARD();
	return reduce_all(sendbuf, recvbuf, count, datatype, op, comm, RED_ALL, "MPI_Allreduce");
}

MPIL_PMPI_ALIAS(Scan)
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
	      MPI_Comm comm)
{
	MPIL_CS_GUARD();
	return reduce_all(sendbuf, recvbuf, count, datatype, op, comm, RED_SCAN, "MPI_Scan");
}

MPIL_PMPI_ALIAS(Exscan)
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		MPI_Comm comm)
{
	MPIL_CS_GUARD();
	return reduce_all(sendbuf, recvbuf, count, datatype, op, comm, RED_EXSCAN, "MPI_Exscan");
}

/* Reduce_scatter and Reduce_scatter_block: @recvcounts (user elements) per
 * rank, or (@is_block) @block for every rank. */
static int reduce_scatter(const void *sendbuf, void *recvbuf, const int *recvcounts, int block,
			  bool is_block, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
			  const char *F)
{
	bool inplace = sendbuf == MPI_IN_PLACE;
	long long total;
	coll_red_io_t io;
	coll_grp_t g;
	int p, me, mine, *counts = NULL, err;
	void *ibase = NULL, *obase = NULL, *win, *wout;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	p = comm->size;
	me = comm->rank;
	MPIL_CHECK(mpil_coll_check_reduce_scatter(comm, sendbuf, recvbuf, recvcounts, block,
						  is_block, datatype, op, &total, &mine, &io, F));
	if (total == 0 || datatype->size == 0)
		return MPI_SUCCESS;
	counts = malloc((size_t)p * sizeof(int));
	if (!counts)
		return mpil_coll_failed(comm, MPI_ERR_NO_MEM, F);
	for (int i = 0; i < p; i++)
		counts[i] = coll_red_n(&io, is_block ? block : recvcounts[i]);
	coll_grp_comm(&g, comm);
	if (io.direct) {
		err = mpil_coll_reduce_scatter(&g, inplace ? NULL : coll_red_wptr(&io, sendbuf),
					       coll_red_wptr(&io, recvbuf), counts, &io.rd);
	} else {
		win = mpil_coll_red_load(&io, inplace ? recvbuf : sendbuf, (int)total, &ibase);
		wout = mpil_coll_red_alloc(&io.rd, counts[me], &obase);
		err = MPI_ERR_NO_MEM;
		if (win && wout)
			err = mpil_coll_reduce_scatter(&g, win, wout, counts, &io.rd);
		if (err == MPI_SUCCESS)
			err = mpil_coll_red_store(&io, wout, recvbuf, mine);
		free(ibase);
		free(obase);
	}
	free(counts);
	return coll_done(comm, err, F);
}

MPIL_PMPI_ALIAS(Reduce_scatter_block)
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
			      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	MPIL_CS_GUARD();
	return reduce_scatter(sendbuf, recvbuf, NULL, recvcount, true, datatype, op, comm,
			      "MPI_Reduce_scatter_block");
}

MPIL_PMPI_ALIAS(Reduce_scatter)
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
			MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	MPIL_CS_GUARD();
	return reduce_scatter(sendbuf, recvbuf, recvcounts, 0, false, datatype, op, comm,
			      "MPI_Reduce_scatter");
}

MPIL_PMPI_ALIAS(Reduce_local)
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
		      MPI_Op op)
{
	static const char F[] = "MPI_Reduce_local";
	MPIL_CS_GUARD();
	coll_red_io_t io;
	void *ib = NULL, *ob = NULL, *wi, *wo;
	int n, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_count(NULL, count, F));
	MPIL_CHECK(mpil_coll_check_reduction(NULL, count, datatype, op, &io, F));
	MPIL_CHECK(mpil_check_buf(NULL, inbuf, count, datatype, F));
	MPIL_CHECK(mpil_check_buf(NULL, inoutbuf, count, datatype, F));
	if (count == 0 || datatype->size == 0)
		return MPI_SUCCESS;
	n = coll_red_n(&io, count);
	if (io.direct) {
		red_apply(&io.rd, coll_red_wptr(&io, inbuf), coll_red_wptr(&io, inoutbuf), n);
		return MPI_SUCCESS;
	}
	wi = mpil_coll_red_load(&io, inbuf, count, &ib);
	wo = mpil_coll_red_load(&io, inoutbuf, count, &ob);
	err = MPI_ERR_NO_MEM;
	if (wi && wo) {
		red_apply(&io.rd, wi, wo, n);
		err = mpil_coll_red_store(&io, wo, inoutbuf, count);
	}
	free(ib);
	free(ob);
	return err == MPI_SUCCESS ? MPI_SUCCESS
				  : mpil_err(NULL, err, F, "out of memory for temporary buffers");
}
