/*
 * op.c — the predefined reduction operations and their kernels.
 *
 * Which op applies to which type follows MPI-3.1 §5.9.2:
 *
 *   MPI_MAX, MPI_MIN              C integer, multi-language, floating point
 *   MPI_SUM, MPI_PROD             C integer, multi-language, floating point, complex
 *   MPI_LAND, MPI_LOR, MPI_LXOR   C integer, logical
 *   MPI_BAND, MPI_BOR, MPI_BXOR   C integer, byte, multi-language
 *   MPI_MAXLOC, MPI_MINLOC        the value-index pairs
 *
 * plus what Open MPI and MPICH both accept beyond it (extensions, in the
 * README): MPI_CHAR counts as a C integer (datatype.c), and the logical
 * ops apply to the multi-language types too.
 *
 * A kernel computes inout[i] = in[i] op inout[i]. Signed integer sums and
 * products wrap around (computed in the unsigned type) rather than being
 * undefined behaviour, as every MPI implementation behaves in practice.
 * MPI_REPLACE and MPI_NO_OP exist for one-sided accumulate only.
 *
 * User operations (MPI_Op_create) call the user's function with the
 * datatype of the call; mpil_op_apply() is the one place that does so.
 * Whether a non-commutative op sees its operands in rank order is the
 * collectives' business (coll_reduce.c, coll_scan.c).
 */
#include "mpil_int.h"

#include <stdlib.h>

/* The kernels are simple loops over arrays that do not overlap (restrict):
 * GCC vectorizes them only from -O3 (at -O2 its cost model refuses any loop
 * whose count is not known), and osu_allreduce reduces MPI_CHAR by default:
 * 64 KiB, 2 ranks, 18 us scalar against 7 for MPI_INT (2026-11-25). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

/* (kind, C type, unsigned C type of the same width) */
#define OP_INT_TYPES(X)                                                                            \
	X(MPIL_DT_CHAR, char, unsigned char)                                                       \
	X(MPIL_DT_SIGNED_CHAR, signed char, unsigned char)                                         \
	X(MPIL_DT_UNSIGNED_CHAR, unsigned char, unsigned char)                                     \
	X(MPIL_DT_SHORT, short, unsigned short)                                                    \
	X(MPIL_DT_UNSIGNED_SHORT, unsigned short, unsigned short)                                  \
	X(MPIL_DT_INT, int, unsigned)                                                              \
	X(MPIL_DT_UNSIGNED, unsigned, unsigned)                                                    \
	X(MPIL_DT_LONG, long, unsigned long)                                                       \
	X(MPIL_DT_UNSIGNED_LONG, unsigned long, unsigned long)                                     \
	X(MPIL_DT_LONG_LONG, long long, unsigned long long)                                        \
	X(MPIL_DT_UNSIGNED_LONG_LONG, unsigned long long, unsigned long long)                      \
	X(MPIL_DT_INT8, int8_t, uint8_t)                                                           \
	X(MPIL_DT_INT16, int16_t, uint16_t)                                                        \
	X(MPIL_DT_INT32, int32_t, uint32_t)                                                        \
	X(MPIL_DT_INT64, int64_t, uint64_t)                                                        \
	X(MPIL_DT_UINT8, uint8_t, uint8_t)                                                         \
	X(MPIL_DT_UINT16, uint16_t, uint16_t)                                                      \
	X(MPIL_DT_UINT32, uint32_t, uint32_t)                                                      \
	X(MPIL_DT_UINT64, uint64_t, uint64_t)                                                      \
	X(MPIL_DT_AINT, MPI_Aint, uintptr_t)                                                       \
	X(MPIL_DT_OFFSET, MPI_Offset, unsigned long long)                                          \
	X(MPIL_DT_COUNT, MPI_Count, unsigned long long)

#define OP_FLOAT_TYPES(X)                                                                          \
	X(MPIL_DT_FLOAT, float)                                                                    \
	X(MPIL_DT_DOUBLE, double)                                                                  \
	X(MPIL_DT_LONG_DOUBLE, long double)

#define OP_COMPLEX_TYPES(X)                                                                        \
	X(MPIL_DT_C_FLOAT_COMPLEX, float _Complex)                                                 \
	X(MPIL_DT_C_DOUBLE_COMPLEX, double _Complex)                                               \
	X(MPIL_DT_C_LONG_DOUBLE_COMPLEX, long double _Complex)                                     \
	X(MPIL_DT_CXX_FLOAT_COMPLEX, float _Complex)                                               \
	X(MPIL_DT_CXX_DOUBLE_COMPLEX, double _Complex)                                             \
	X(MPIL_DT_CXX_LONG_DOUBLE_COMPLEX, long double _Complex)

#define OP_LOGICAL_TYPES(X)                                                                        \
	X(MPIL_DT_C_BOOL, _Bool)                                                                   \
	X(MPIL_DT_CXX_BOOL, unsigned char)

/* One loop per (kind, type): `b` is inout[i], `a` is in[i]. */
#define LOOP(kind_, T, expr)                                                                       \
	case kind_: {                                                                              \
		const T *restrict in_ = in;                                                        \
		T *restrict io_ = inout;                                                           \
		for (size_t i = 0; i < n; i++) {                                                   \
			const T a = in_[i], b = io_[i];                                            \
			io_[i] = (T)(expr);                                                        \
		}                                                                                  \
		break;                                                                             \
	}

#define SUM_INT(k, T, U)  LOOP(k, T, (U)((U)a + (U)b))
#define PROD_INT(k, T, U) LOOP(k, T, (U)(1u * (U)a * (U)b))
#define SUM_FP(k, T)	  LOOP(k, T, a + b)
#define PROD_FP(k, T)	  LOOP(k, T, a *b)
#define MAX_INT(k, T, U)  LOOP(k, T, a > b ? a : b)
#define MIN_INT(k, T, U)  LOOP(k, T, a < b ? a : b)
#define MAX_FP(k, T)	  LOOP(k, T, a > b ? a : b)
#define MIN_FP(k, T)	  LOOP(k, T, a < b ? a : b)
#define LAND_INT(k, T, U) LOOP(k, T, a &&b)
#define LOR_INT(k, T, U)  LOOP(k, T, a || b)
#define LXOR_INT(k, T, U) LOOP(k, T, !a != !b)
#define LAND_L(k, T)	  LOOP(k, T, a &&b)
#define LOR_L(k, T)	  LOOP(k, T, a || b)
#define LXOR_L(k, T)	  LOOP(k, T, !a != !b)
#define BAND_INT(k, T, U) LOOP(k, T, a &b)
#define BOR_INT(k, T, U)  LOOP(k, T, a | b)
#define BXOR_INT(k, T, U) LOOP(k, T, a ^ b)

static void k_sum(const void *in, void *inout, size_t n, mpil_dt_kind_t kind)
{
	switch (kind) {
		OP_INT_TYPES(SUM_INT)
		OP_FLOAT_TYPES(SUM_FP)
		OP_COMPLEX_TYPES(SUM_FP)
	default: break;
	}
}

static void k_prod(const void *in, void *inout, size_t n, mpil_dt_kind_t kind)
{
	switch (kind) {
		OP_INT_TYPES(PROD_INT)
		OP_FLOAT_TYPES(PROD_FP)
		OP_COMPLEX_TYPES(PROD_FP)
	default: break;
	}
}

static void k_max(const void *in, void *inout, size_t n, mpil_dt_kind_t kind)
{
	switch (kind) {
		OP_INT_TYPES(MAX_INT)
		OP_FLOAT_TYPES(MAX_FP)
	default: break;
	}
}

static void k_min(const void *in, void *inout, size_t n, mpil_dt_kind_t kind)
{
	switch (kind) {
		OP_INT_TYPES(MIN_INT)
		OP_FLOAT_TYPES(MIN_FP)
	default: break;
	}
}

static void k_land(const void *in, void *inout, size_t n, mpil_dt_kind_t kind)
{
	switch (kind) {
		OP_INT_TYPES(LAND_INT)
		OP_LOGICAL_TYPES(LAND_L)
	default: break;
	}
}

static void k_lor(const void *in, void *inout, size_t n, mpil_dt_kind_t kind)
{
	switch (kind) {
		OP_INT_TYPES(LOR_INT)
		OP_LOGICAL_TYPES(LOR_L)
	default: break;
	}
}

static void k_lxor(const void *in, void *inout, size_t n, mpil_dt_kind_t kind)
{
	switch (kind) {
		OP_INT_TYPES(LXOR_INT)
		OP_LOGICAL_TYPES(LXOR_L)
	default: break;
	}
}

static void k_band(const void *in, void *inout, size_t n, mpil_dt_kind_t kind)
{
	switch (kind) {
		OP_INT_TYPES(BAND_INT)
		BAND_INT(MPIL_DT_BYTE, unsigned char, unsigned char)
	default: break;
	}
}

static void k_bor(const void *in, void *inout, size_t n, mpil_dt_kind_t kind)
{
	switch (kind) {
		OP_INT_TYPES(BOR_INT)
		BOR_INT(MPIL_DT_BYTE, unsigned char, unsigned char)
	default: break;
	}
}

static void k_bxor(const void *in, void *inout, size_t n, mpil_dt_kind_t kind)
{
	switch (kind) {
		OP_INT_TYPES(BXOR_INT)
		BXOR_INT(MPIL_DT_BYTE, unsigned char, unsigned char)
	default: break;
	}
}

/* MAXLOC/MINLOC (MPI-3.1 §5.9.4): the better value wins; on a tie, the
 * smaller index. */
#define LOC_PAIRS(X)                                                                               \
	X(MPIL_DT_FLOAT_INT, mpil_float_int_t)                                                     \
	X(MPIL_DT_DOUBLE_INT, mpil_double_int_t)                                                   \
	X(MPIL_DT_LONG_INT, mpil_long_int_t)                                                       \
	X(MPIL_DT_2INT, mpil_2int_t)                                                               \
	X(MPIL_DT_SHORT_INT, mpil_short_int_t)                                                     \
	X(MPIL_DT_LONG_DOUBLE_INT, mpil_long_double_int_t)

#define LOC_LOOP(kind_, T, better)                                                                 \
	case kind_: {                                                                              \
		const T *in_ = in;                                                                 \
		T *io_ = inout;                                                                    \
		for (size_t i = 0; i < n; i++) {                                                   \
			if (in_[i].v better io_[i].v)                                              \
				io_[i] = in_[i];                                                   \
			else if (in_[i].v == io_[i].v && in_[i].i < io_[i].i)                      \
				io_[i].i = in_[i].i;                                               \
		}                                                                                  \
		break;                                                                             \
	}
#define MAXLOC_PAIR(k, T) LOC_LOOP(k, T, >)
#define MINLOC_PAIR(k, T) LOC_LOOP(k, T, <)

static void k_maxloc(const void *in, void *inout, size_t n, mpil_dt_kind_t kind)
{
	switch (kind) {
		LOC_PAIRS(MAXLOC_PAIR)
	default: break;
	}
}

static void k_minloc(const void *in, void *inout, size_t n, mpil_dt_kind_t kind)
{
	switch (kind) {
		LOC_PAIRS(MINLOC_PAIR)
	default: break;
	}
}

#define G_INT	MPIL_DTG_INT
#define G_MULTI MPIL_DTG_MULTI
#define G_FLOAT MPIL_DTG_FLOAT
#define G_CPLX	MPIL_DTG_COMPLEX
#define G_LOG	MPIL_DTG_LOGICAL
#define G_BYTE	MPIL_DTG_BYTE
#define G_PAIR	MPIL_DTG_PAIR
#define G_ALL	0xffffu

#define OP_PREDEF(var, id_, groups_, kernel_, coll_, nm)                                           \
	struct mpil_op var = {                                                                     \
	    .magic = MPIL_MAGIC_OP,                                                                \
	    .refcount = 1,                                                                         \
	    .id = id_,                                                                             \
	    .groups = groups_,                                                                     \
	    .commutative = true,                                                                   \
	    .predefined = true,                                                                    \
	    .coll_ok = coll_,                                                                      \
	    .kernel = kernel_,                                                                     \
	    .name = nm,                                                                            \
	}

OP_PREDEF(mpil_op_max, MPIL_OP_MAX, G_INT | G_MULTI | G_FLOAT, k_max, true, "MPI_MAX");
OP_PREDEF(mpil_op_min, MPIL_OP_MIN, G_INT | G_MULTI | G_FLOAT, k_min, true, "MPI_MIN");
OP_PREDEF(mpil_op_sum, MPIL_OP_SUM, G_INT | G_MULTI | G_FLOAT | G_CPLX, k_sum, true, "MPI_SUM");
OP_PREDEF(mpil_op_prod, MPIL_OP_PROD, G_INT | G_MULTI | G_FLOAT | G_CPLX, k_prod, true, "MPI_PROD");
OP_PREDEF(mpil_op_land, MPIL_OP_LAND, G_INT | G_MULTI | G_LOG, k_land, true, "MPI_LAND");
OP_PREDEF(mpil_op_lor, MPIL_OP_LOR, G_INT | G_MULTI | G_LOG, k_lor, true, "MPI_LOR");
OP_PREDEF(mpil_op_lxor, MPIL_OP_LXOR, G_INT | G_MULTI | G_LOG, k_lxor, true, "MPI_LXOR");
OP_PREDEF(mpil_op_band, MPIL_OP_BAND, G_INT | G_BYTE | G_MULTI, k_band, true, "MPI_BAND");
OP_PREDEF(mpil_op_bor, MPIL_OP_BOR, G_INT | G_BYTE | G_MULTI, k_bor, true, "MPI_BOR");
OP_PREDEF(mpil_op_bxor, MPIL_OP_BXOR, G_INT | G_BYTE | G_MULTI, k_bxor, true, "MPI_BXOR");
OP_PREDEF(mpil_op_maxloc, MPIL_OP_MAXLOC, G_PAIR, k_maxloc, true, "MPI_MAXLOC");
OP_PREDEF(mpil_op_minloc, MPIL_OP_MINLOC, G_PAIR, k_minloc, true, "MPI_MINLOC");
OP_PREDEF(mpil_op_replace, MPIL_OP_REPLACE, G_ALL, NULL, false, "MPI_REPLACE");
OP_PREDEF(mpil_op_no_op, MPIL_OP_NO_OP, G_ALL, NULL, false, "MPI_NO_OP");

static int check_op_handle(MPI_Comm comm, MPI_Op op, const char *fname)
{
	if (ibx_unlikely(!op))
		return mpil_err(comm, MPI_ERR_OP, fname, "operation is MPI_OP_NULL");
	if (ibx_unlikely(op->magic != MPIL_MAGIC_OP))
		return mpil_err(comm, MPI_ERR_OP, fname, "invalid operation handle %p", (void *)op);
	return MPI_SUCCESS;
}

int mpil_check_op(MPI_Comm comm, MPI_Op op, MPI_Datatype dt, const char *fname)
{
	MPI_Datatype basic;

	MPIL_CHECK(check_op_handle(comm, op, fname));
	if (ibx_unlikely(!op->coll_ok))
		return mpil_err(comm, MPI_ERR_OP, fname, "%s is only for one-sided accumulate",
				op->name);
	if (!op->predefined)
		return MPI_SUCCESS;
	/* A derived type qualifies through the one predefined type it is
	 * made of (its elements are reduced packed). */
	basic = dt->basic;
	if (!basic)
		return mpil_err(comm, MPI_ERR_OP, fname,
				"%s needs a datatype made of one predefined type; %s mixes types",
				op->name, dt->name ? dt->name : "this derived type");
	if (!(op->groups & basic->group))
		return mpil_err(comm, MPI_ERR_OP, fname, "%s is not defined for datatype %s",
				op->name, dt->name ? dt->name : basic->name);
	return MPI_SUCCESS;
}

void mpil_op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt)
{
	if (count <= 0)
		return;
	if (op->predefined) {
		op->kernel(in, inout, (size_t)count, (mpil_dt_kind_t)dt->kind);
	} else {
		int n = count;
		MPI_Datatype t = dt;

		op->user_fn((void *)in, inout, &n, &t);
	}
}

/* ---- user operations ------------------------------------------------------------------------
 *
 * MPI_Op_create'd objects come from a small pool and go back to it on
 * MPI_Op_free with their magic changed, so a stale handle is reported as
 * MPI_ERR_OP instead of reading freed memory.
 */
static struct mpil_op **op_pool; /* freed objects, for reuse */
static int op_pool_n, op_pool_cap;

MPIL_PMPI_ALIAS(Op_create)
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
	static const char F[] = "MPI_Op_create";
	MPIL_CS_GUARD();
	struct mpil_op *o;

	MPIL_CHECK(mpil_check_init(F));
	if (!user_fn || !op)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL", op ? "user_fn" : "op");
	o = op_pool_n ? op_pool[--op_pool_n] : malloc(sizeof(*o));
	if (!o)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for an operation");
	*o = (struct mpil_op){
	    .magic = MPIL_MAGIC_OP,
	    .refcount = 1,
	    .id = MPIL_OP_USER,
	    .commutative = commute != 0,
	    .predefined = false,
	    .coll_ok = true,
	    .user_fn = user_fn,
	    .name = "user operation",
	};
	*op = o;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Op_free)
int PMPI_Op_free(MPI_Op *op)
{
	static const char F[] = "MPI_Op_free";
	MPIL_CS_GUARD();
	struct mpil_op *o;

	MPIL_CHECK(mpil_check_init(F));
	if (!op)
		return mpil_err(NULL, MPI_ERR_ARG, F, "op is NULL");
	MPIL_CHECK(check_op_handle(NULL, *op, F));
	o = *op;
	if (o->predefined)
		return mpil_err(NULL, MPI_ERR_OP, F, "%s is predefined and cannot be freed",
				o->name);
	if (op_pool_n == op_pool_cap) {
		int cap = op_pool_cap ? 2 * op_pool_cap : 16;
		struct mpil_op **pool = realloc(op_pool, (size_t)cap * sizeof(*pool));

		if (!pool)
			return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory to free an operation");
		op_pool = pool;
		op_pool_cap = cap;
	}
	o->magic = MPIL_MAGIC_DEAD;
	op_pool[op_pool_n++] = o;
	*op = MPI_OP_NULL;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Op_commutative)
int PMPI_Op_commutative(MPI_Op op, int *commute)
{
	static const char F[] = "MPI_Op_commutative";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(check_op_handle(NULL, op, F));
	if (!commute)
		return mpil_err(NULL, MPI_ERR_ARG, F, "commute is NULL");
	*commute = op->commutative;
	return MPI_SUCCESS;
}
