/*
 * dtype_create.c — derived datatypes: the MPI-3.1 type constructors,
 * MPI_Type_commit and MPI_Type_free, on top of core/dtype_rdma.
 *
 * Each constructor checks its arguments (MPI error classes: a negative
 * count is MPI_ERR_COUNT, a negative block length or a bad array
 * MPI_ERR_ARG, a null/freed/invalid old type MPI_ERR_TYPE), converts
 * them to the engine's 64-bit form and wraps the engine type in a handle
 * whose size, bounds and element count it copies:
 *
 *   MPI_Type_vector(3, 2, 4, MPI_INT)  ──►  ibx_dt_vector(3, 2, 4, <int>)
 *        handle { size 24, lb 0, extent 40, engine ─► ibx_dt_t }
 *
 * Commit compiles the engine's loop program; a type whose elements tile
 * memory without gaps (the engine's "dense") is marked MPIL_DTF_CONTIG and
 * then moves without packing. A handle freed while a pending operation
 * holds it becomes a zombie (dead to the user) until that operation
 * releases it. Every constructor also records its call for
 * MPI_Type_get_contents (dtype_envelope.c).
 */
#include "dtype_int.h"
#include "dtype_rdma/dtype.h"

#include <stdlib.h>

static mpil_pool_t dt_pool = MPIL_POOL_INIT(struct mpil_datatype);

static void dt_destroy(MPI_Datatype dt)
{
	ibx_dt_t *e = dt->engine;

	mpil_dt_contents_free(dt, true);
	if (e)
		ibx_dt_free(&e);
	if (dt->flags & MPIL_DTF_NAME_OWNED)
		free((char *)dt->name);
	mpil_pool_put(&dt_pool, dt);
}

void mpil_dt_release(MPI_Datatype dt)
{
	if (dt->flags & MPIL_DTF_PREDEFINED)
		return;
	if (--dt->refcount == 0)
		dt_destroy(dt);
}

static void dt_destroy_live(void *obj)
{
	MPI_Datatype dt = obj;
	ibx_dt_t *e = dt->engine;

	mpil_dt_contents_free(dt, false);
	if (e)
		ibx_dt_free(&e);
	if (dt->flags & MPIL_DTF_NAME_OWNED)
		free((char *)dt->name);
}

void mpil_dt_derived_fini(void)
{
	mpil_pool_fini(&dt_pool, dt_destroy_live);
}

/* An engine failure to build a type, as an MPI error. */
static int engine_err(ibx_status_t st, const char *fname)
{
	switch (st) {
	case IBX_ERR_NO_MEMORY:
		return mpil_err(NULL, MPI_ERR_NO_MEM, fname, "no memory for the datatype");
	case IBX_ERR_OVERFLOW:
		return mpil_err(NULL, MPI_ERR_ARG, fname,
				"the datatype's size, bounds or displacements overflow 64 bits");
	case IBX_ERR_NO_RESOURCE:
		return mpil_err(
		    NULL, MPI_ERR_TYPE, fname,
		    "datatype nested deeper than %d constructors or too large to commit",
		    IBX_DT_MAX_TREE_DEPTH);
	default:
		return mpil_err(NULL, MPI_ERR_ARG, fname, "invalid datatype construction: %s",
				ibx_status_str(st));
	}
}

/* Wraps the new engine type @e (owned from here on) in a handle that
 * records the constructor call @args. */
static int dt_wrap(ibx_dt_t *e, MPI_Datatype basic, const mpil_dt_args_t *args,
		   MPI_Datatype *newtype, const char *fname)
{
	ibx_dt_info_t in;
	MPI_Datatype dt;

	if (ibx_dt_query(e, &in) != IBX_OK) {
		ibx_dt_free(&e);
		return mpil_err(NULL, MPI_ERR_INTERN, fname, "cannot query the new datatype");
	}
	dt = mpil_pool_get(&dt_pool);
	if (!dt) {
		ibx_dt_free(&e);
		return mpil_err(NULL, MPI_ERR_NO_MEM, fname, "no memory for a datatype");
	}
	dt->magic = MPIL_MAGIC_DTYPE;
	dt->refcount = 1;
	dt->kind = MPIL_DT_DERIVED;
	dt->group = MPIL_DTG_NONE;
	dt->size = (size_t)in.size;
	dt->lb = (MPI_Aint)in.lb;
	dt->extent = (MPI_Aint)in.extent;
	dt->true_lb = (MPI_Aint)in.true_lb;
	dt->true_extent = (MPI_Aint)in.true_extent;
	dt->elements = (MPI_Count)in.nelem;
	dt->engine = e;
	dt->basic = basic;
	if (in.committed) {
		dt->flags |= MPIL_DTF_COMMITTED;
		if (in.dense)
			dt->flags |= MPIL_DTF_CONTIG;
	}
	if (mpil_dt_contents_set(dt, args) != MPI_SUCCESS) {
		dt_destroy(dt);
		return mpil_err(NULL, MPI_ERR_NO_MEM, fname, "no memory for a datatype");
	}
	*newtype = dt;
	return MPI_SUCCESS;
}

int mpil_dt_clone(MPI_Datatype dt, MPI_Datatype *copy_p)
{
	ibx_dt_t *e = dt->engine;
	MPI_Datatype c;

	if (ibx_dt_retain(e) != IBX_OK)
		return MPI_ERR_INTERN;
	c = mpil_pool_get(&dt_pool);
	if (!c) {
		ibx_dt_free(&e);
		return MPI_ERR_NO_MEM;
	}
	*c = *dt;
	c->magic = MPIL_MAGIC_DTYPE; /* @dt may be a zombie: freed, still referenced */
	c->refcount = 1;
	c->flags &= ~MPIL_DTF_NAME_OWNED;
	c->name = NULL;
	c->contents = NULL;
	if (mpil_dt_contents_copy(c, dt) != MPI_SUCCESS) {
		dt_destroy(c);
		return MPI_ERR_NO_MEM;
	}
	*copy_p = c;
	return MPI_SUCCESS;
}

/* ---- argument checks ------------------------------------------------------------------ */

static int check_new(int count, MPI_Datatype old, MPI_Datatype *newtype, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	if (!newtype)
		return mpil_err(NULL, MPI_ERR_ARG, fname, "newtype is NULL");
	MPIL_CHECK(mpil_check_count(NULL, count, fname));
	if (old)
		MPIL_CHECK(mpil_check_dtype_handle(NULL, old, fname));
	return MPI_SUCCESS;
}

static int check_blocklen(int blocklength, const char *fname)
{
	if (blocklength >= 0)
		return MPI_SUCCESS;
	return mpil_err(NULL, MPI_ERR_ARG, fname, "negative block length %d", blocklength);
}

static int check_array(int count, const void *a, const char *what, const char *fname)
{
	if (count == 0 || a)
		return MPI_SUCCESS;
	return mpil_err(NULL, MPI_ERR_ARG, fname, "%s is NULL", what);
}

/* int64 copies of the arrays (and the block length checks): *bl_p gets
 * the block lengths when @blens is not NULL (else NULL), *di_p the
 * displacements (from the ints @idispl if not NULL, else from @adispl). */
static int widen(int count, const int *blens, const int *idispl, const MPI_Aint *adispl,
		 int64_t **bl_p, int64_t **di_p, const char *fname)
{
	int64_t *bl = NULL, *di = NULL;
	size_t n = count > 0 ? (size_t)count : 1;

	*bl_p = *di_p = NULL;
	if (blens) {
		bl = malloc(n * sizeof(*bl));
		if (!bl)
			return mpil_err(NULL, MPI_ERR_NO_MEM, fname, "no memory for %d blocks",
					count);
		for (int i = 0; i < count; i++) {
			if (blens[i] < 0) {
				free(bl);
				return mpil_err(NULL, MPI_ERR_ARG, fname,
						"negative block length %d at index %d", blens[i],
						i);
			}
			bl[i] = blens[i];
		}
	}
	di = malloc(n * sizeof(*di));
	if (!di) {
		free(bl);
		return mpil_err(NULL, MPI_ERR_NO_MEM, fname, "no memory for %d blocks", count);
	}
	for (int i = 0; i < count; i++)
		di[i] = idispl ? idispl[i] : (int64_t)adispl[i];
	*bl_p = bl;
	*di_p = di;
	return MPI_SUCCESS;
}

/* ---- constructors ------------------------------------------------------------------------ */

MPIL_PMPI_ALIAS(Type_contiguous)
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	static const char F[] = "MPI_Type_contiguous";
	MPIL_CS_GUARD();
	mpil_dt_ints_t ints[] = {{1, &count}};
	mpil_dt_args_t args = {MPI_COMBINER_CONTIGUOUS, 1, ints, 0, NULL, 1, &oldtype};
	ibx_dt_t *e;
	ibx_status_t st;

	MPIL_CHECK(check_new(count, oldtype, newtype, F));
	MPIL_CHECK(mpil_check_dtype_handle(NULL, oldtype, F));
	st = ibx_dt_contiguous(count, oldtype->engine, &e);
	if (st)
		return engine_err(st, F);
	return dt_wrap(e, oldtype->basic, &args, newtype, F);
}

MPIL_PMPI_ALIAS(Type_vector)
int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
		     MPI_Datatype *newtype)
{
	static const char F[] = "MPI_Type_vector";
	MPIL_CS_GUARD();
	int vals[] = {count, blocklength, stride};
	mpil_dt_ints_t ints[] = {{3, vals}};
	mpil_dt_args_t args = {MPI_COMBINER_VECTOR, 1, ints, 0, NULL, 1, &oldtype};
	ibx_dt_t *e;
	ibx_status_t st;

	MPIL_CHECK(check_new(count, oldtype, newtype, F));
	MPIL_CHECK(mpil_check_dtype_handle(NULL, oldtype, F));
	MPIL_CHECK(check_blocklen(blocklength, F));
	st = ibx_dt_vector(count, blocklength, stride, oldtype->engine, &e);
	if (st)
		return engine_err(st, F);
	return dt_wrap(e, oldtype->basic, &args, newtype, F);
}

MPIL_PMPI_ALIAS(Type_create_hvector)
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
			     MPI_Datatype *newtype)
{
	static const char F[] = "MPI_Type_create_hvector";
	MPIL_CS_GUARD();
	int vals[] = {count, blocklength};
	mpil_dt_ints_t ints[] = {{2, vals}};
	mpil_dt_args_t args = {MPI_COMBINER_HVECTOR, 1, ints, 1, &stride, 1, &oldtype};
	ibx_dt_t *e;
	ibx_status_t st;

	MPIL_CHECK(check_new(count, oldtype, newtype, F));
	MPIL_CHECK(mpil_check_dtype_handle(NULL, oldtype, F));
	MPIL_CHECK(check_blocklen(blocklength, F));
	st = ibx_dt_hvector(count, blocklength, stride, oldtype->engine, &e);
	if (st)
		return engine_err(st, F);
	return dt_wrap(e, oldtype->basic, &args, newtype, F);
}

/* The four indexed constructors. */
enum idx_kind { IDX, HIDX, IDX_BLOCK, HIDX_BLOCK };

/* Their calls as MPI_Type_get_contents returns them: the integers are
 * count, the block length(s) and (integer forms) the displacements. */
static int indexed_wrap(ibx_dt_t *e, enum idx_kind kind, int count, const int *blens,
			const int *blocklength, const int *idispl, const MPI_Aint *adispl,
			MPI_Datatype oldtype, MPI_Datatype *newtype, const char *fname)
{
	static const int combiners[] = {
	    [IDX] = MPI_COMBINER_INDEXED,
	    [HIDX] = MPI_COMBINER_HINDEXED,
	    [IDX_BLOCK] = MPI_COMBINER_INDEXED_BLOCK,
	    [HIDX_BLOCK] = MPI_COMBINER_HINDEXED_BLOCK,
	};
	bool per_block = kind == IDX || kind == HIDX, bytes = kind == HIDX || kind == HIDX_BLOCK;
	mpil_dt_ints_t ints[3] = {
	    {1, &count},
	    per_block ? (mpil_dt_ints_t){count, blens} : (mpil_dt_ints_t){1, blocklength},
	    {bytes ? 0 : count, idispl},
	};
	mpil_dt_args_t args = {combiners[kind], 3, ints, bytes ? count : 0, adispl, 1, &oldtype};

	return dt_wrap(e, oldtype->basic, &args, newtype, fname);
}

static int make_indexed(enum idx_kind kind, int count, const int *blens, int blocklength,
			const int *idispl, const MPI_Aint *adispl, MPI_Datatype oldtype,
			MPI_Datatype *newtype, const char *fname)
{
	bool per_block = kind == IDX || kind == HIDX, bytes = kind == HIDX || kind == HIDX_BLOCK;
	int64_t *bl, *di;
	ibx_dt_t *e;
	ibx_status_t st;

	MPIL_CHECK(check_new(count, oldtype, newtype, fname));
	MPIL_CHECK(mpil_check_dtype_handle(NULL, oldtype, fname));
	if (per_block)
		MPIL_CHECK(check_array(count, blens, "array_of_blocklengths", fname));
	else
		MPIL_CHECK(check_blocklen(blocklength, fname));
	MPIL_CHECK(check_array(count, bytes ? (const void *)adispl : (const void *)idispl,
			       "array_of_displacements", fname));
	MPIL_CHECK(
	    widen(count, per_block ? blens : NULL, bytes ? NULL : idispl, adispl, &bl, &di, fname));
	switch (kind) {
	case IDX: st = ibx_dt_indexed(count, bl, di, oldtype->engine, &e); break;
	case HIDX: st = ibx_dt_hindexed(count, bl, di, oldtype->engine, &e); break;
	case IDX_BLOCK:
		st = ibx_dt_indexed_block(count, blocklength, di, oldtype->engine, &e);
		break;
	default: st = ibx_dt_hindexed_block(count, blocklength, di, oldtype->engine, &e); break;
	}
	free(bl);
	free(di);
	if (st)
		return engine_err(st, fname);
	return indexed_wrap(e, kind, count, blens, &blocklength, idispl, adispl, oldtype, newtype,
			    fname);
}

MPIL_PMPI_ALIAS(Type_indexed)
int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
		      const int array_of_displacements[], MPI_Datatype oldtype,
		      MPI_Datatype *newtype)
{
	MPIL_CS_GUARD();
	return make_indexed(IDX, count, array_of_blocklengths, 0, array_of_displacements, NULL,
			    oldtype, newtype, "MPI_Type_indexed");
}

MPIL_PMPI_ALIAS(Type_create_hindexed)
int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
			      const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
			      MPI_Datatype *newtype)
{
	MPIL_CS_GUARD();
	return make_indexed(HIDX, count, array_of_blocklengths, 0, NULL, array_of_displacements,
			    oldtype, newtype, "MPI_Type_create_hindexed");
}

MPIL_PMPI_ALIAS(Type_create_indexed_block)
int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
				   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	MPIL_CS_GUARD();
	return make_indexed(IDX_BLOCK, count, NULL, blocklength, array_of_displacements, NULL,
			    oldtype, newtype, "MPI_Type_create_indexed_block");
}

MPIL_PMPI_ALIAS(Type_create_hindexed_block)
int PMPI_Type_create_hindexed_block(int count, int blocklength,
				    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
				    MPI_Datatype *newtype)
{
	MPIL_CS_GUARD();
	return make_indexed(HIDX_BLOCK, count, NULL, blocklength, NULL, array_of_displacements,
			    oldtype, newtype, "MPI_Type_create_hindexed_block");
}

MPIL_PMPI_ALIAS(Type_create_struct)
int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
			    const MPI_Aint array_of_displacements[],
			    const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
	static const char F[] = "MPI_Type_create_struct";
	MPIL_CS_GUARD();
	mpil_dt_ints_t ints[] = {{1, &count}, {count, array_of_blocklengths}};
	mpil_dt_args_t args = {.combiner = MPI_COMBINER_STRUCT,
			       .npieces = 2,
			       .pieces = ints,
			       .na = count,
			       .aints = array_of_displacements,
			       .nd = count,
			       .types = array_of_types};
	MPI_Datatype basic = NULL;
	bool mixed = false;
	ibx_dt_t **types, *e;
	int64_t *bl, *di;
	ibx_status_t st;

	MPIL_CHECK(check_new(count, NULL, newtype, F));
	MPIL_CHECK(check_array(count, array_of_blocklengths, "array_of_blocklengths", F));
	MPIL_CHECK(check_array(count, array_of_displacements, "array_of_displacements", F));
	MPIL_CHECK(check_array(count, array_of_types, "array_of_types", F));
	for (int i = 0; i < count; i++) {
		MPI_Datatype t = array_of_types[i];

		if (!mpil_dt_valid(t))
			return mpil_err(NULL, MPI_ERR_TYPE, F, "%s at index %d of array_of_types",
					t ? "invalid or freed datatype" : "MPI_DATATYPE_NULL", i);
		if (array_of_blocklengths[i] > 0 && t->size > 0) {
			/* one predefined type throughout, or none */
			if (!t->basic || (basic && basic != t->basic))
				mixed = true;
			basic = t->basic;
		}
	}
	MPIL_CHECK(widen(count, array_of_blocklengths, NULL, array_of_displacements, &bl, &di, F));
	types = malloc((count > 0 ? (size_t)count : 1) * sizeof(*types));
	if (!types) {
		free(bl);
		free(di);
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for %d blocks", count);
	}
	for (int i = 0; i < count; i++)
		types[i] = array_of_types[i]->engine;
	st = ibx_dt_struct(count, bl, di, types, &e);
	free(types);
	free(bl);
	free(di);
	if (st)
		return engine_err(st, F);
	return dt_wrap(e, mixed ? NULL : basic, &args, newtype, F);
}

MPIL_PMPI_ALIAS(Type_create_resized)
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
			     MPI_Datatype *newtype)
{
	static const char F[] = "MPI_Type_create_resized";
	MPIL_CS_GUARD();
	MPI_Aint bounds[] = {lb, extent};
	mpil_dt_args_t args = {MPI_COMBINER_RESIZED, 0, NULL, 2, bounds, 1, &oldtype};
	ibx_dt_t *e;
	ibx_status_t st;

	MPIL_CHECK(check_new(0, oldtype, newtype, F));
	MPIL_CHECK(mpil_check_dtype_handle(NULL, oldtype, F));
	st = ibx_dt_resized(oldtype->engine, lb, extent, &e);
	if (st)
		return engine_err(st, F);
	return dt_wrap(e, oldtype->basic, &args, newtype, F);
}

MPIL_PMPI_ALIAS(Type_dup)
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	static const char F[] = "MPI_Type_dup";
	MPIL_CS_GUARD();
	mpil_dt_args_t args = {MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &oldtype};
	ibx_dt_t *e;
	ibx_status_t st;

	MPIL_CHECK(check_new(0, oldtype, newtype, F));
	MPIL_CHECK(mpil_check_dtype_handle(NULL, oldtype, F));
	st = ibx_dt_dup(oldtype->engine, &e);
	if (st)
		return engine_err(st, F);
	MPIL_CHECK(dt_wrap(e, oldtype->basic, &args, newtype, F));
	/* the same layout as the old type: a dup of MPI_INT reduces as MPI_INT */
	(*newtype)->kind = oldtype->kind;
	(*newtype)->group = oldtype->group;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_create_subarray)
int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
			      const int array_of_starts[], int order, MPI_Datatype oldtype,
			      MPI_Datatype *newtype)
{
	static const char F[] = "MPI_Type_create_subarray";
	MPIL_CS_GUARD();
	mpil_dt_ints_t ints[] = {{1, &ndims},
				 {ndims, array_of_sizes},
				 {ndims, array_of_subsizes},
				 {ndims, array_of_starts},
				 {1, &order}};
	mpil_dt_args_t args = {MPI_COMBINER_SUBARRAY, 5, ints, 0, NULL, 1, &oldtype};
	int64_t *sz, *sub, *start;
	ibx_dt_t *e;
	ibx_status_t st;

	MPIL_CHECK(check_new(0, oldtype, newtype, F));
	MPIL_CHECK(mpil_check_dtype_handle(NULL, oldtype, F));
	if (ndims < 1)
		return mpil_err(NULL, MPI_ERR_ARG, F, "ndims is %d (must be positive)", ndims);
	if (!array_of_sizes || !array_of_subsizes || !array_of_starts)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL",
				!array_of_sizes	     ? "array_of_sizes"
				: !array_of_subsizes ? "array_of_subsizes"
						     : "array_of_starts");
	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
		return mpil_err(NULL, MPI_ERR_ARG, F,
				"order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
	for (int d = 0; d < ndims; d++) {
		int n = array_of_sizes[d], s = array_of_subsizes[d], o = array_of_starts[d];

		if (n < 1 || s < 0 || s > n || o < 0 || o > n - s)
			return mpil_err(
			    NULL, MPI_ERR_ARG, F,
			    "dimension %d: size %d, subsize %d, start %d (need size >= 1, "
			    "0 <= subsize <= size, 0 <= start <= size - subsize)",
			    d, n, s, o);
	}
	sz = malloc(3 * (size_t)ndims * sizeof(*sz));
	if (!sz)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for %d dimensions", ndims);
	sub = sz + ndims;
	start = sub + ndims;
	for (int d = 0; d < ndims; d++) {
		sz[d] = array_of_sizes[d];
		sub[d] = array_of_subsizes[d];
		start[d] = array_of_starts[d];
	}
	st = ibx_dt_subarray(ndims, sz, sub, start,
			     order == MPI_ORDER_C ? IBX_DT_ORDER_C : IBX_DT_ORDER_FORTRAN,
			     oldtype->engine, &e);
	free(sz);
	if (st)
		return engine_err(st, F);
	return dt_wrap(e, oldtype->basic, &args, newtype, F);
}

/* The engine's darray arguments from MPI's (*a_p: gsizes, dargs, psizes,
 * malloc'ed), checked: the error raised if one is wrong. */
static int darray_args(int size, int rank, int ndims, const int gsizes[], const int distribs[],
		       const int dargs[], const int psizes[], int order, int64_t **a_p,
		       const char *F)
{
	int64_t *a, nprocs = 1;

	if (size < 1 || rank < 0 || rank >= size || ndims < 1) {
		return mpil_err(NULL, MPI_ERR_ARG, F, "size %d, rank %d, ndims %d", size, rank,
				ndims);
	}
	if (!gsizes || !distribs || !dargs || !psizes) {
		return mpil_err(NULL, MPI_ERR_ARG, F, "an array argument is NULL");
	}
	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
		return mpil_err(NULL, MPI_ERR_ARG, F,
				"order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
	}
	for (int d = 0; d < ndims; d++) {
		int g = gsizes[d], ds = distribs[d], k = dargs[d], p = psizes[d];
		const char *why = g < 1	  ? "gsize must be positive"
				  : p < 1 ? "psize must be positive"
				  : ds != MPI_DISTRIBUTE_BLOCK && ds != MPI_DISTRIBUTE_CYCLIC &&
					  ds != MPI_DISTRIBUTE_NONE
				      ? "unknown distribution"
				  : ds == MPI_DISTRIBUTE_NONE && p != 1
				      ? "MPI_DISTRIBUTE_NONE needs psize 1"
				  : k != MPI_DISTRIBUTE_DFLT_DARG && k < 1
				      ? "darg must be positive or the default"
				  : ds == MPI_DISTRIBUTE_BLOCK && k != MPI_DISTRIBUTE_DFLT_DARG &&
					  (int64_t)k * p < g
				      ? "blocks of darg x psize do not cover gsize"
				      : NULL;

		if (why)
			return mpil_err(
			    NULL, MPI_ERR_ARG, F,
			    "dimension %d (gsize %d, distrib %d, darg %d, psize %d): %s", d, g, ds,
			    k, p, why);
		nprocs *= p;
		if (nprocs > size)
			break;
	}
	if (nprocs != size)
		return mpil_err(NULL, MPI_ERR_ARG, F, "the process grid does not have %d processes",
				size);
	a = malloc(3 * (size_t)ndims * sizeof(*a));
	if (!a)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for %d dimensions", ndims);
	for (int d = 0; d < ndims; d++) {
		a[d] = gsizes[d];
		a[ndims + d] =
		    dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? IBX_DT_DARG_DEFAULT : dargs[d];
		a[2 * ndims + d] = psizes[d];
	}
	*a_p = a;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_create_darray)
int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
			    const int array_of_distribs[], const int array_of_dargs[],
			    const int array_of_psizes[], int order, MPI_Datatype oldtype,
			    MPI_Datatype *newtype)
{
	static const char F[] = "MPI_Type_create_darray";
	MPIL_CS_GUARD();
	mpil_dt_ints_t ints[] = {{1, &size},
				 {1, &rank},
				 {1, &ndims},
				 {ndims, array_of_gsizes},
				 {ndims, array_of_distribs},
				 {ndims, array_of_dargs},
				 {ndims, array_of_psizes},
				 {1, &order}};
	mpil_dt_args_t args = {MPI_COMBINER_DARRAY, 8, ints, 0, NULL, 1, &oldtype};
	int *dist;
	int64_t *a = NULL;
	ibx_dt_t *e;
	ibx_status_t st;

	MPIL_CHECK(check_new(0, oldtype, newtype, F));
	MPIL_CHECK(mpil_check_dtype_handle(NULL, oldtype, F));
	MPIL_CHECK(darray_args(size, rank, ndims, array_of_gsizes, array_of_distribs,
			       array_of_dargs, array_of_psizes, order, &a, F));
	dist = malloc((size_t)ndims * sizeof(*dist));
	if (!dist) {
		free(a);
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for %d dimensions", ndims);
	}
	for (int d = 0; d < ndims; d++)
		dist[d] = array_of_distribs[d] == MPI_DISTRIBUTE_BLOCK	  ? IBX_DT_DIST_BLOCK
			  : array_of_distribs[d] == MPI_DISTRIBUTE_CYCLIC ? IBX_DT_DIST_CYCLIC
									  : IBX_DT_DIST_NONE;
	st = ibx_dt_darray(size, rank, ndims, a, dist, a + ndims, a + 2 * ndims,
			   order == MPI_ORDER_C ? IBX_DT_ORDER_C : IBX_DT_ORDER_FORTRAN,
			   oldtype->engine, &e);
	free(dist);
	free(a);
	if (st)
		return engine_err(st, F);
	return dt_wrap(e, oldtype->basic, &args, newtype, F);
}

/* ---- commit and free ---------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Type_commit)
int PMPI_Type_commit(MPI_Datatype *datatype)
{
	static const char F[] = "MPI_Type_commit";
	MPIL_CS_GUARD();
	MPI_Datatype dt;
	ibx_dt_info_t in;
	ibx_status_t st;

	MPIL_CHECK(mpil_check_init(F));
	if (!datatype)
		return mpil_err(NULL, MPI_ERR_ARG, F, "datatype is NULL");
	dt = *datatype;
	MPIL_CHECK(mpil_check_dtype_handle(NULL, dt, F));
	if (dt->flags & MPIL_DTF_COMMITTED)
		return MPI_SUCCESS;
	st = ibx_dt_commit(dt->engine);
	if (st == IBX_OK)
		st = ibx_dt_query(dt->engine, &in);
	if (st)
		return engine_err(st, F);
	dt->flags |= MPIL_DTF_COMMITTED;
	if (in.dense)
		dt->flags |= MPIL_DTF_CONTIG;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_free)
int PMPI_Type_free(MPI_Datatype *datatype)
{
	static const char F[] = "MPI_Type_free";
	MPIL_CS_GUARD();
	MPI_Datatype dt;

	MPIL_CHECK(mpil_check_init(F));
	if (!datatype)
		return mpil_err(NULL, MPI_ERR_ARG, F, "datatype is NULL");
	dt = *datatype;
	MPIL_CHECK(mpil_check_dtype_handle(NULL, dt, F));
	if (dt->flags & MPIL_DTF_PREDEFINED)
		return mpil_err(NULL, MPI_ERR_TYPE, F, "predefined datatype %s cannot be freed",
				dt->name);
	*datatype = MPI_DATATYPE_NULL;
	if (--dt->refcount == 0)
		dt_destroy(dt);
	else
		dt->magic = MPIL_MAGIC_ZOMBIE;
	return MPI_SUCCESS;
}
