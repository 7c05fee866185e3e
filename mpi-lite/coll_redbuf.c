/*
 * coll_redbuf.c — the user's buffers of a reduction as work buffers
 * (coll_int.h, "Reductions"): directly where the layout allows, else a
 * work copy loaded from the user's elements and stored back into them;
 * and the checks that every reduction entry point makes (type, op, how
 * many work elements).
 */
#include "coll_int.h"

static void red_io_init(coll_red_io_t *io, MPI_Op op, MPI_Datatype dt)
{
	io->udt = dt;
	io->factor = 1;
	io->shift = 0;
	if (dt->flags & MPIL_DTF_PREDEFINED) {
		mpil_coll_red_init(&io->rd, op, dt);
		io->direct = true;
	} else if (op->predefined) {
		MPI_Datatype b = dt->basic; /* not NULL: mpil_check_op made sure */

		mpil_coll_red_init(&io->rd, op, b);
		io->factor = (int)(dt->size / b->size);
		io->direct = mpil_dt_contig(dt) && mpil_dt_contig(b);
		io->shift = dt->true_lb;
	} else {
		mpil_coll_red_init(&io->rd, op, dt);
		io->direct = mpil_dt_contig(dt);
	}
}

/* A work copy of @count user elements at @ubuf (not direct). */
void *mpil_coll_red_load(const coll_red_io_t *io, const void *ubuf, int count, void **base_p)
{
	int n = coll_red_n(io, count);
	size_t bytes = coll_tbytes(count, io->udt);
	void *w = mpil_coll_red_alloc(&io->rd, n, base_p), *tmp;

	if (!w)
		return NULL;
	if (io->rd.dt != io->udt && mpil_dt_contig(io->rd.dt)) {
		mpil_dt_pack(io->udt, ubuf, count, w);
		return w;
	}
	tmp = malloc(bytes + 1);
	if (!tmp) {
		free(*base_p);
		*base_p = NULL;
		return NULL;
	}
	mpil_dt_pack(io->udt, ubuf, count, tmp);
	if (io->rd.dt != io->udt)
		mpil_dt_unpack(io->rd.dt, tmp, bytes, w); /* padded pairs */
	else
		mpil_dt_unpack(io->udt, tmp, bytes, w); /* the user's own layout */
	free(tmp);
	return w;
}

/* Work buffer @w back into @count user elements at @ubuf. */
int mpil_coll_red_store(const coll_red_io_t *io, const void *w, void *ubuf, int count)
{
	size_t bytes = coll_tbytes(count, io->udt);
	void *tmp;

	if (io->rd.dt != io->udt && mpil_dt_contig(io->rd.dt)) {
		mpil_dt_unpack(io->udt, w, bytes, ubuf);
		return MPI_SUCCESS;
	}
	tmp = malloc(bytes + 1);
	if (!tmp)
		return MPI_ERR_NO_MEM;
	if (io->rd.dt != io->udt)
		mpil_dt_pack(io->rd.dt, w, coll_red_n(io, count), tmp);
	else
		mpil_dt_pack(io->udt, w, count, tmp);
	mpil_dt_unpack(io->udt, tmp, bytes, ubuf);
	free(tmp);
	return MPI_SUCCESS;
}

/* Checks shared by the reductions: count, type, op; *io set up. */
int mpil_coll_check_reduction(MPI_Comm comm, long long count, MPI_Datatype dt, MPI_Op op,
			      coll_red_io_t *io, const char *F)
{
	MPIL_CHECK(mpil_check_dtype(comm, dt, F));
	MPIL_CHECK(mpil_check_op(comm, op, dt, F));
	red_io_init(io, op, dt);
	if (ibx_unlikely(coll_red_n(io, count) < 0))
		return mpil_err(comm, MPI_ERR_COUNT, F,
				"%lld elements of %s are too many basic elements", count,
				dt->name ? dt->name : "(derived)");
	return MPI_SUCCESS;
}

int mpil_coll_check_reduce_scatter(MPI_Comm comm, const void *sendbuf, void *recvbuf,
				   const int *recvcounts, int block, bool is_block,
				   MPI_Datatype datatype, MPI_Op op, long long *total_p,
				   int *mine_p, coll_red_io_t *io, const char *F)
{
	int p = comm->size, mine;
	long long total;

	if (!is_block) {
		MPIL_CHECK(mpil_coll_check_counts(comm, recvcounts, p, "recvcounts", &total, F));
		mine = recvcounts[comm->rank];
	} else {
		MPIL_CHECK(mpil_check_count(comm, block, F));
		total = (long long)block * p;
		mine = block;
	}
	MPIL_CHECK(mpil_coll_check_reduction(comm, total, datatype, op, io, F));
	if (sendbuf == MPI_IN_PLACE) {
		MPIL_CHECK(mpil_coll_check_vbuf(comm, recvbuf, total, datatype, F));
	} else {
		MPIL_CHECK(mpil_coll_check_vbuf(comm, sendbuf, total, datatype, F));
		MPIL_CHECK(mpil_check_buf(comm, recvbuf, mine, datatype, F));
		if ((sendbuf == recvbuf && mine > 0) ||
		    mpil_coll_overlap(sendbuf, total, datatype, recvbuf, mine, datatype))
			if (datatype->size > 0)
				return mpil_coll_err_alias(comm, F);
	}
	*total_p = total;
	*mine_p = mine;
	return MPI_SUCCESS;
}
