/*
 * darray.c — the distributed-array constructor (MPI-3.1 §4.1.4,
 * MPI_Type_create_darray): the part of an ndims-dimensional global array
 * of @old that process @rank of a psizes[0] x ... process grid owns, when
 * each dimension is distributed by blocks, cyclically by blocks of darg
 * elements, or not at all (HPF's BLOCK, CYCLIC(k) and *).
 *
 * The process grid is row-major whatever the array's order: rank ->
 * coordinates as in MPI_Cart_create. The type is built a dimension at a
 * time, the array's fastest dimension first, each level a hvector whose
 * byte stride is that dimension's step in the whole array:
 *
 *   block:  hvector(mine, 1, step, T)              elements at coord * blk
 *   cyclic: hvector(mine / darg, darg, p * darg * step, T)
 *           + a last partial block (struct)        elements at coord * darg
 *
 * where T is the previous level (old at the fastest), resized to span its
 * whole dimension so that copies of it side by side are a step apart. Each
 * level's first element is an offset along its dimension; their sum, in
 * bytes, places the whole, and the result is resized to
 * [0, extent(old) * prod(gsizes)).
 * The same construction as the MPI standard's description and ROMIO's,
 * so that the typemap (and a file view made of it) matches other MPIs'.
 */
#include "dtype_int.h"

/* Frees @t and returns @next (a constructor's result replacing it). */
static ibx_dt_t *replace(ibx_dt_t *t, ibx_dt_t *next)
{
	if (t)
		ibx_dt_release(t);
	return next;
}

/* One dimension by blocks: *first_p its first element's index. */
static ibx_status_t dim_block(int64_t g, int64_t darg, int64_t p, int64_t r, int64_t step,
			      bool fastest, ibx_dt_t *t, ibx_dt_t **out, int64_t *first_p)
{
	int64_t blk = darg == IBX_DT_DARG_DEFAULT ? (g + p - 1) / p : darg;
	int64_t mine = g - blk * r;

	if (blk < 1 || blk * p < g)
		return IBX_ERR_INVALID_PARAM;
	mine = mine < 0 ? 0 : mine > blk ? blk : mine;
	*first_p = mine ? blk * r : 0;
	return fastest ? ibx_dt_contiguous(mine, t, out) : ibx_dt_hvector(mine, 1, step, t, out);
}

/* One dimension cyclically by blocks of darg. The fastest dimension
 * carries its own offset and extent (as the standard's construction
 * does); the others report theirs in *first_p. */
static ibx_status_t dim_cyclic(int64_t g, int64_t darg, int64_t p, int64_t r, int64_t step,
			       bool fastest, ibx_dt_t *t, ibx_dt_t **out, int64_t *first_p)
{
	int64_t blk = darg == IBX_DT_DARG_DEFAULT ? 1 : darg, start = r * blk, mine = 0, stride;
	int64_t count, rem, lens[2], displs[2];
	ibx_dt_t *v = NULL, *tmp = NULL, *types[2];
	ibx_status_t st;

	if (blk < 1 || !dt_mul(p * blk, step, &stride))
		return blk < 1 ? IBX_ERR_INVALID_PARAM : IBX_ERR_OVERFLOW;
	if (start < g) {
		mine = (g - start) / (p * blk) * blk;
		rem = (g - start) % (p * blk);
		mine += rem < blk ? rem : blk;
	}
	count = mine / blk;
	rem = mine % blk;
	st = ibx_dt_hvector(count, blk, stride, t, &v);
	if (st == IBX_OK && rem) { /* the last, partial block */
		lens[0] = 1;
		lens[1] = rem;
		displs[0] = 0;
		displs[1] = count * stride;
		types[0] = v;
		types[1] = t;
		st = ibx_dt_struct(2, lens, displs, types, &tmp);
		v = replace(v, st == IBX_OK ? tmp : NULL);
	}
	*first_p = 0;
	if (st == IBX_OK && fastest) {
		int64_t at = start * step;

		st = ibx_dt_hindexed_block(1, 1, &at, v, &tmp);
		v = replace(v, st == IBX_OK ? tmp : NULL);
		if (st == IBX_OK)
			st = ibx_dt_resized(v, 0, g * step, &tmp);
		v = replace(v, st == IBX_OK ? tmp : NULL);
	} else if (mine) {
		*first_p = start;
	}
	if (st != IBX_OK) {
		replace(v, NULL);
		return st;
	}
	*out = v;
	return IBX_OK;
}

ibx_status_t ibx_dt_darray(int size, int rank, int ndims, const int64_t *gsizes,
			   const int *distribs, const int64_t *dargs, const int64_t *psizes,
			   int order, ibx_dt_t *old, ibx_dt_t **dt_p)
{
	int64_t coords[IBX_DT_MAX_DEPTH], step, disp = 0, first, v, left = rank, nprocs = 1;
	ibx_dt_t *t = NULL, *next;
	ibx_status_t st = IBX_OK;

	if (!old || !dt_p || ndims < 1 || ndims > IBX_DT_MAX_DEPTH || size < 1 || rank < 0 ||
	    rank >= size || !gsizes || !distribs || !dargs || !psizes ||
	    (order != IBX_DT_ORDER_C && order != IBX_DT_ORDER_FORTRAN))
		return IBX_ERR_INVALID_PARAM;
	for (int d = 0; d < ndims; d++) {
		if (gsizes[d] < 1 || psizes[d] < 1 || !dt_mul(nprocs, psizes[d], &nprocs) ||
		    (dargs[d] < 1 && dargs[d] != IBX_DT_DARG_DEFAULT) ||
		    (distribs[d] == IBX_DT_DIST_NONE && psizes[d] != 1) ||
		    (distribs[d] != IBX_DT_DIST_NONE && distribs[d] != IBX_DT_DIST_BLOCK &&
		     distribs[d] != IBX_DT_DIST_CYCLIC))
			return IBX_ERR_INVALID_PARAM;
	}
	if (nprocs != size)
		return IBX_ERR_INVALID_PARAM;
	for (int d = ndims - 1; d >= 0; d--) { /* row-major process grid */
		coords[d] = left % psizes[d];
		left /= psizes[d];
	}
	step = ibx_dt_extent(old);
	for (int k = 0; k < ndims && st == IBX_OK; k++) {
		int d = order == IBX_DT_ORDER_C ? ndims - 1 - k : k;
		ibx_dt_t *in = t ? t : old;

		next = NULL;
		if (distribs[d] == IBX_DT_DIST_CYCLIC)
			st = dim_cyclic(gsizes[d], dargs[d], psizes[d], coords[d], step, k == 0, in,
					&next, &first);
		else /* block, or none: one block of the whole dimension */
			st = dim_block(gsizes[d],
				       distribs[d] == IBX_DT_DIST_NONE ? IBX_DT_DARG_DEFAULT
								       : dargs[d],
				       psizes[d], coords[d], step, k == 0, in, &next, &first);
		t = replace(t, next);
		if (st == IBX_OK && (!dt_mul(first, step, &v) || !dt_add(disp, v, &disp) ||
				     !dt_mul(step, gsizes[d], &step)))
			st = IBX_ERR_OVERFLOW;
		/* the level spans its whole dimension: the next one repeats it
		 * (blocks of a cyclic distribution) at that step */
		if (st == IBX_OK)
			st = ibx_dt_resized(t, 0, step, &next);
		if (st == IBX_OK)
			t = replace(t, next);
	}
	if (st == IBX_OK)
		st = ibx_dt_hindexed_block(1, 1, &disp, t, &next);
	if (st == IBX_OK) {
		t = replace(t, next);
		st = ibx_dt_resized(t, 0, step, &next);
	}
	if (st != IBX_OK) {
		replace(t, NULL);
		return st;
	}
	replace(t, NULL);
	*dt_p = next;
	return IBX_OK;
}
