/*
 * type.c — datatype constructors and the bounds of the typemaps they
 * build (type_handle.c holds what every handle shares: references, wire
 * ids, commit and queries).
 *
 * A handle is a node of the constructor tree:
 *
 *     struct_t ──► [ double ]          every arrow is a reference: freeing
 *        │                             the user's handle of `vec` leaves it
 *        └──────► [ vec ] ──► [ int ]  alive as long as struct_t holds it
 *
 * Bounds follow MPI 3.1 §4.1 on the typemap the tree stands for, computed
 * per constructor from the children's summaries, never by expansion:
 *   - true_lb/true_ub: min/max over the basic entries (markers ignored);
 *   - lb/ub markers exist only through resized (MPI-3 removed MPI_LB/UB), so
 *     a type has both or neither; they are "sticky": a type built from a
 *     child with markers has lb = min, ub = max over the children's markers;
 *   - without markers the bounds are those of the copies of the children:
 *     lb = min(disp + child lb), ub = max(disp + child ub) (a child's own
 *     padding travels with it: contiguous(2, {double, char}) spans 32
 *     bytes), then ub grows by eps, rounding ub - lb up to a multiple of the
 *     largest alignment of a basic type in the typemap (the struct padding
 *     rule: {double, char} has extent 16).
 *
 * Which constructors pad is pad_extent() below. The standard defines eps
 * for every typemap, and Open MPI (checked: 4.1) pads every constructor —
 * hvector(2, 1, 12 bytes, double) has extent 24 there and here; MPICH pads
 * struct types only (extent 20). Users compare against both; this follows
 * the standard and Open MPI, and tests/sh/dtype_extents.sh diffs a set of
 * extents against Open MPI's.
 */
#include "dtype_int.h"

/* ---- bounds of a typemap built from copies of children ---------------------- */

typedef struct dt_acc {
	bool data, markers;
	int64_t tlb, tub; /* data bounds */
	int64_t mlb, mub; /* marker bounds */
	int64_t ilb, iub; /* implicit bounds: of the marker-free children with data */
	int64_t align, size, nelem;
	int depth;
	dt_sig_t sig;
} dt_acc_t;

static void acc_init(dt_acc_t *a)
{
	memset(a, 0, sizeof(*a));
	a->align = 1;
	a->tlb = a->mlb = a->ilb = INT64_MAX;
	a->tub = a->mub = a->iub = INT64_MIN;
	a->sig = ibx_dt_sig_empty();
}

/* @copies (> 0) copies of @c, at displacements between @dmin and @dmax
 * (both reached), appended to the typemap in order. */
static ibx_status_t acc_add(dt_acc_t *a, const ibx_dt_t *c, int64_t copies, int64_t dmin,
			    int64_t dmax)
{
	int64_t v, w;

	if (!dt_mul(copies, c->size, &v) || !dt_add(a->size, v, &a->size))
		return IBX_ERR_OVERFLOW;
	if (!dt_mul(copies, c->nelem, &v) || !dt_add(a->nelem, v, &a->nelem))
		return IBX_ERR_OVERFLOW;
	if (c->nelem > 0) {
		if (!dt_add(c->true_lb, dmin, &v) || !dt_add(c->true_ub, dmax, &w))
			return IBX_ERR_OVERFLOW;
		a->tlb = dt_min(a->tlb, v);
		a->tub = dt_max(a->tub, w);
		a->data = true;
		if (!c->markers) {
			if (!dt_add(c->lb, dmin, &v) || !dt_add(c->ub, dmax, &w))
				return IBX_ERR_OVERFLOW;
			a->ilb = dt_min(a->ilb, v);
			a->iub = dt_max(a->iub, w);
		}
	}
	if (c->markers) {
		if (!dt_add(c->lb, dmin, &v) || !dt_add(c->ub, dmax, &w))
			return IBX_ERR_OVERFLOW;
		a->mlb = dt_min(a->mlb, v);
		a->mub = dt_max(a->mub, w);
		a->markers = true;
	}
	a->align = dt_max(a->align, c->align);
	if (c->depth > a->depth)
		a->depth = c->depth;
	a->sig = ibx_dt_sig_cat(a->sig, ibx_dt_sig_rep(c->sig, (uint64_t)copies));
	return IBX_OK;
}

/* Displacement range of the copies i * stride + j * ext, 0 <= i < count,
 * 0 <= j < blocklen (count, blocklen >= 1). */
static bool copy_range(int64_t count, int64_t stride, int64_t blocklen, int64_t ext, int64_t base,
		       int64_t *dmin_p, int64_t *dmax_p)
{
	int64_t s, e, lo, hi;

	if (!dt_mul(count - 1, stride, &s) || !dt_mul(blocklen - 1, ext, &e))
		return false;
	if (!dt_add(dt_min(0, s), dt_min(0, e), &lo) || !dt_add(dt_max(0, s), dt_max(0, e), &hi))
		return false;
	if (!dt_add(base, lo, &lo) || !dt_add(base, hi, &hi))
		return false;
	*dmin_p = lo;
	*dmax_p = hi;
	return true;
}

/* Whether a marker-free type made by constructor @kind rounds its extent
 * up to its alignment (see the file header). */
static bool pad_extent(int kind)
{
	(void)kind;
	return true;
}

static ibx_status_t acc_finish(dt_acc_t *a, ibx_dt_t *dt, int kind)
{
	int64_t ext;

	if (a->depth + 1 > IBX_DT_MAX_TREE_DEPTH) {
		ibx_debug("datatype nesting deeper than %d", IBX_DT_MAX_TREE_DEPTH);
		return IBX_ERR_NO_RESOURCE;
	}
	dt->depth = a->depth + 1;
	dt->size = a->size;
	dt->nelem = a->nelem;
	dt->sig = a->sig;
	dt->align = a->align;
	dt->markers = a->markers;
	if (a->data) {
		dt->true_lb = a->tlb;
		dt->true_ub = a->tub;
	} else {
		dt->true_lb = dt->true_ub = 0;
	}
	if (a->markers) {
		dt->lb = a->mlb;
		dt->ub = a->mub;
	} else {
		dt->lb = a->data ? a->ilb : 0;
		dt->ub = a->data ? a->iub : 0;
		if (a->data && a->align > 1 && pad_extent(kind)) {
			int64_t r;

			if (!dt_sub(dt->ub, dt->lb, &ext))
				return IBX_ERR_OVERFLOW;
			r = ext % a->align;
			if (r < 0)
				r += a->align;
			if (r && !dt_add(dt->ub, a->align - r, &dt->ub))
				return IBX_ERR_OVERFLOW;
		}
	}
	if (!dt_sub(dt->ub, dt->lb, &ext))
		return IBX_ERR_OVERFLOW;
	return IBX_OK;
}

static ibx_status_t check_old(const ibx_dt_t *old, ibx_dt_t **dt_p)
{
	if (!old || !dt_p)
		return IBX_ERR_INVALID_PARAM;
	if (old->kind == DT_REMOTE) {
		ibx_debug("a deserialised layout cannot be part of a new datatype");
		return IBX_ERR_INVALID_PARAM;
	}
	return IBX_OK;
}

static int64_t ext_of(const ibx_dt_t *dt)
{
	return dt->ub - dt->lb;
}

/* ---- constructors ------------------------------------------------------------ */

ibx_status_t ibx_dt_basic(uint32_t code, int64_t size, int64_t align, ibx_dt_t **dt_p)
{
	ibx_dt_t *dt;
	ibx_status_t st;

	if (!dt_p || size < 1 || align < 1 || (align & (align - 1)) || size % align)
		return IBX_ERR_INVALID_PARAM;
	st = ibx_dt_alloc(DT_BASIC, &dt);
	if (st)
		return st;
	dt->code = code;
	dt->size = size;
	dt->ub = size;
	dt->true_ub = size;
	dt->align = align;
	dt->nelem = 1;
	dt->sig = ibx_dt_sig_basic(code, size);
	*dt_p = dt;
	return IBX_OK;
}

/* count blocks of blocklen copies of old, block i at i * stride bytes */
static ibx_status_t make_hvector(int kind, int64_t count, int64_t blocklen, int64_t stride,
				 ibx_dt_t *old, ibx_dt_t **dt_p)
{
	ibx_dt_t *dt;
	dt_acc_t a;
	ibx_status_t st;
	int64_t copies, dmin, dmax;

	st = check_old(old, dt_p);
	if (st)
		return st;
	if (count < 0 || blocklen < 0)
		return IBX_ERR_INVALID_PARAM;
	acc_init(&a);
	a.depth = old->depth;
	if (!dt_mul(count, blocklen, &copies))
		return IBX_ERR_OVERFLOW;
	if (copies > 0) {
		if (!copy_range(count, stride, blocklen, ext_of(old), 0, &dmin, &dmax))
			return IBX_ERR_OVERFLOW;
		st = acc_add(&a, old, copies, dmin, dmax);
		if (st)
			return st;
	}
	st = ibx_dt_alloc(kind, &dt);
	if (st)
		return st;
	st = acc_finish(&a, dt, dt->kind);
	if (st)
		goto err_free;
	dt->count = count;
	dt->blocklen = blocklen;
	dt->stride = stride;
	dt->child = old;
	dt_retain_child(old);
	*dt_p = dt;
	return IBX_OK;

err_free:
	ibx_dt_release(dt);
	return st;
}

ibx_status_t ibx_dt_contiguous(int64_t count, ibx_dt_t *old, ibx_dt_t **dt_p)
{
	ibx_status_t st = check_old(old, dt_p);

	if (st)
		return st;
	return make_hvector(DT_CONTIG, count, 1, ext_of(old), old, dt_p);
}

ibx_status_t ibx_dt_vector(int64_t count, int64_t blocklen, int64_t stride, ibx_dt_t *old,
			   ibx_dt_t **dt_p)
{
	ibx_status_t st = check_old(old, dt_p);
	int64_t bytes;

	if (st)
		return st;
	if (count < 0 || blocklen < 0)
		return IBX_ERR_INVALID_PARAM;
	if (!dt_mul(stride, ext_of(old), &bytes))
		return IBX_ERR_OVERFLOW;
	return make_hvector(DT_VECTOR, count, blocklen, bytes, old, dt_p);
}

ibx_status_t ibx_dt_hvector(int64_t count, int64_t blocklen, int64_t stride, ibx_dt_t *old,
			    ibx_dt_t **dt_p)
{
	return make_hvector(DT_HVECTOR, count, blocklen, stride, old, dt_p);
}

/* indexed family: blocklens == NULL means every block has @blocklen;
 * @unit converts displacements to bytes (old's extent, or 1 for h*). */
static ibx_status_t make_indexed(int kind, int64_t count, const int64_t *blocklens,
				 int64_t blocklen, const int64_t *displs, bool bytes, ibx_dt_t *old,
				 ibx_dt_t **dt_p)
{
	ibx_dt_t *dt = NULL;
	dt_acc_t a;
	ibx_status_t st;
	int64_t ext, copies = 0, dmin = INT64_MAX, dmax = INT64_MIN;
	int64_t *bl = NULL, *dp = NULL;

	st = check_old(old, dt_p);
	if (st)
		return st;
	if (count < 0 || (count > 0 && !displs) || (!blocklens && blocklen < 0))
		return IBX_ERR_INVALID_PARAM;
	if ((uint64_t)count > SIZE_MAX / sizeof(int64_t))
		return IBX_ERR_OVERFLOW;
	ext = ext_of(old);
	if (count > 0) {
		bl = malloc((size_t)count * sizeof(*bl));
		dp = malloc((size_t)count * sizeof(*dp));
		if (!bl || !dp) {
			st = IBX_ERR_NO_MEMORY;
			goto err_arrays;
		}
	}
	for (int64_t k = 0; k < count; k++) {
		int64_t b = blocklens ? blocklens[k] : blocklen, lo, hi;

		if (b < 0) {
			st = IBX_ERR_INVALID_PARAM;
			goto err_arrays;
		}
		bl[k] = b;
		if (bytes)
			dp[k] = displs[k];
		else if (!dt_mul(displs[k], ext, &dp[k])) {
			st = IBX_ERR_OVERFLOW;
			goto err_arrays;
		}
		if (b == 0)
			continue;
		if (!dt_add(copies, b, &copies) || !copy_range(1, 0, b, ext, dp[k], &lo, &hi)) {
			st = IBX_ERR_OVERFLOW;
			goto err_arrays;
		}
		dmin = dt_min(dmin, lo);
		dmax = dt_max(dmax, hi);
	}
	acc_init(&a);
	a.depth = old->depth;
	if (copies > 0) {
		st = acc_add(&a, old, copies, dmin, dmax);
		if (st)
			goto err_arrays;
	}
	st = ibx_dt_alloc(kind, &dt);
	if (st)
		goto err_arrays;
	st = acc_finish(&a, dt, dt->kind);
	if (st)
		goto err_dt;
	dt->count = count;
	dt->blocklen = blocklens ? -1 : blocklen;
	dt->blens = bl;
	dt->displs = dp;
	dt->child = old;
	dt_retain_child(old);
	*dt_p = dt;
	return IBX_OK;

err_dt:
	ibx_dt_release(dt);
err_arrays:
	free(bl);
	free(dp);
	return st;
}

ibx_status_t ibx_dt_indexed(int64_t count, const int64_t *blocklens, const int64_t *displs,
			    ibx_dt_t *old, ibx_dt_t **dt_p)
{
	if (count > 0 && !blocklens)
		return IBX_ERR_INVALID_PARAM;
	return make_indexed(DT_INDEXED, count, blocklens, 0, displs, false, old, dt_p);
}

ibx_status_t ibx_dt_hindexed(int64_t count, const int64_t *blocklens, const int64_t *displs,
			     ibx_dt_t *old, ibx_dt_t **dt_p)
{
	if (count > 0 && !blocklens)
		return IBX_ERR_INVALID_PARAM;
	return make_indexed(DT_HINDEXED, count, blocklens, 0, displs, true, old, dt_p);
}

ibx_status_t ibx_dt_indexed_block(int64_t count, int64_t blocklen, const int64_t *displs,
				  ibx_dt_t *old, ibx_dt_t **dt_p)
{
	return make_indexed(DT_INDEXED_BLOCK, count, NULL, blocklen, displs, false, old, dt_p);
}

ibx_status_t ibx_dt_hindexed_block(int64_t count, int64_t blocklen, const int64_t *displs,
				   ibx_dt_t *old, ibx_dt_t **dt_p)
{
	return make_indexed(DT_HINDEXED_BLOCK, count, NULL, blocklen, displs, true, old, dt_p);
}

ibx_status_t ibx_dt_struct(int64_t count, const int64_t *blocklens, const int64_t *displs,
			   ibx_dt_t *const *types, ibx_dt_t **dt_p)
{
	ibx_dt_t *dt = NULL;
	dt_acc_t a;
	ibx_status_t st;
	int64_t *bl = NULL, *dp = NULL;
	ibx_dt_t **ty = NULL;

	if (!dt_p || count < 0 || (count > 0 && (!blocklens || !displs || !types)))
		return IBX_ERR_INVALID_PARAM;
	if ((uint64_t)count > SIZE_MAX / sizeof(int64_t))
		return IBX_ERR_OVERFLOW;
	acc_init(&a);
	for (int64_t k = 0; k < count; k++) {
		st = check_old(types[k], dt_p);
		if (st)
			return st;
		if (blocklens[k] < 0)
			return IBX_ERR_INVALID_PARAM;
		if (types[k]->depth > a.depth)
			a.depth = types[k]->depth;
	}
	for (int64_t k = 0; k < count; k++) {
		int64_t lo, hi;

		if (blocklens[k] == 0)
			continue;
		if (!copy_range(1, 0, blocklens[k], ext_of(types[k]), displs[k], &lo, &hi))
			return IBX_ERR_OVERFLOW;
		st = acc_add(&a, types[k], blocklens[k], lo, hi);
		if (st)
			return st;
	}
	if (count > 0) {
		bl = malloc((size_t)count * sizeof(*bl));
		dp = malloc((size_t)count * sizeof(*dp));
		ty = malloc((size_t)count * sizeof(*ty));
		if (!bl || !dp || !ty) {
			st = IBX_ERR_NO_MEMORY;
			goto err_arrays;
		}
		memcpy(bl, blocklens, (size_t)count * sizeof(*bl));
		memcpy(dp, displs, (size_t)count * sizeof(*dp));
	}
	st = ibx_dt_alloc(DT_STRUCT, &dt);
	if (st)
		goto err_arrays;
	st = acc_finish(&a, dt, dt->kind);
	if (st)
		goto err_dt;
	for (int64_t k = 0; k < count; k++) {
		ty[k] = types[k];
		dt_retain_child(ty[k]);
	}
	dt->count = count;
	dt->blens = bl;
	dt->displs = dp;
	dt->types = ty;
	*dt_p = dt;
	return IBX_OK;

err_dt:
	ibx_dt_release(dt);
err_arrays:
	free(bl);
	free(dp);
	free(ty);
	return st;
}

/* A wrapper with the same typemap as @old (dup, subarray, resized). */
static ibx_status_t make_alias(int kind, ibx_dt_t *old, ibx_dt_t **dt_p)
{
	ibx_dt_t *dt;
	ibx_status_t st;

	if (old->depth + 1 > IBX_DT_MAX_TREE_DEPTH)
		return IBX_ERR_NO_RESOURCE;
	st = ibx_dt_alloc(kind, &dt);
	if (st)
		return st;
	dt->depth = old->depth + 1;
	dt->size = old->size;
	dt->nelem = old->nelem;
	dt->sig = old->sig;
	dt->align = old->align;
	dt->true_lb = old->true_lb;
	dt->true_ub = old->true_ub;
	dt->markers = old->markers;
	dt->lb = old->lb;
	dt->ub = old->ub;
	dt->child = old;
	dt_retain_child(old);
	*dt_p = dt;
	return IBX_OK;
}

ibx_status_t ibx_dt_resized(ibx_dt_t *old, int64_t lb, int64_t extent, ibx_dt_t **dt_p)
{
	ibx_dt_t *dt;
	ibx_status_t st = check_old(old, dt_p);
	int64_t ub;

	if (st)
		return st;
	if (!dt_add(lb, extent, &ub))
		return IBX_ERR_OVERFLOW;
	st = make_alias(DT_RESIZED, old, &dt);
	if (st)
		return st;
	/* the same typemap with explicit bounds */
	dt->markers = true;
	dt->lb = lb;
	dt->ub = ub;
	*dt_p = dt;
	return IBX_OK;
}

ibx_status_t ibx_dt_dup(ibx_dt_t *old, ibx_dt_t **dt_p)
{
	ibx_dt_t *dt;
	ibx_status_t st = check_old(old, dt_p);

	if (st)
		return st;
	st = make_alias(DT_DUP, old, &dt);
	if (st)
		return st;
	if (old->committed) {
		st = ibx_dt_commit(dt);
		if (st) {
			ibx_dt_release(dt);
			return st;
		}
	}
	*dt_p = dt;
	return IBX_OK;
}

/*
 * subarray = resized(hindexed_block(1, 1, {start offset}, T), 0, whole array)
 * with T the hvector chain over the dimensions, fastest first:
 *   T0 = contiguous(subsizes[f0], old), Tk = hvector(subsizes[fk], 1, stride_k, Tk-1)
 * stride_k = extent(old) * prod(sizes of the faster dimensions).
 */
ibx_status_t ibx_dt_subarray(int ndims, const int64_t *sizes, const int64_t *subsizes,
			     const int64_t *starts, int order, ibx_dt_t *old, ibx_dt_t **dt_p)
{
	ibx_dt_t *t = NULL, *t2 = NULL, *dt;
	ibx_status_t st = check_old(old, dt_p);
	int64_t stride, disp = 0, v;

	if (st)
		return st;
	if (ndims < 1 || !sizes || !subsizes || !starts ||
	    (order != IBX_DT_ORDER_C && order != IBX_DT_ORDER_FORTRAN))
		return IBX_ERR_INVALID_PARAM;
	for (int d = 0; d < ndims; d++) {
		if (sizes[d] < 1 || subsizes[d] < 0 || subsizes[d] > sizes[d] || starts[d] < 0 ||
		    starts[d] > sizes[d] - subsizes[d])
			return IBX_ERR_INVALID_PARAM;
	}
	stride = ext_of(old);
	for (int k = 0; k < ndims; k++) {
		int d = order == IBX_DT_ORDER_C ? ndims - 1 - k : k;

		if (k == 0)
			st = ibx_dt_contiguous(subsizes[d], old, &t2);
		else
			st = ibx_dt_hvector(subsizes[d], 1, stride, t, &t2);
		if (st)
			goto err;
		if (t)
			ibx_dt_release(t);
		t = t2;
		t2 = NULL;
		if (!dt_mul(starts[d], stride, &v) || !dt_add(disp, v, &disp) ||
		    !dt_mul(stride, sizes[d], &stride)) {
			st = IBX_ERR_OVERFLOW;
			goto err;
		}
	}
	st = ibx_dt_hindexed_block(1, 1, &disp, t, &t2);
	if (st)
		goto err;
	ibx_dt_release(t);
	t = t2;
	t2 = NULL;
	st = ibx_dt_resized(t, 0, stride, &t2);
	if (st)
		goto err;
	ibx_dt_release(t);
	t = t2;
	t2 = NULL;
	st = make_alias(DT_SUBARRAY, t, &dt);
	if (st)
		goto err;
	ibx_dt_release(t);
	*dt_p = dt;
	return IBX_OK;

err:
	if (t)
		ibx_dt_release(t);
	return st;
}
