/*
 * dtype_int.h — private to core/dtype_rdma: the type object behind a
 * handle, the committed loop program, checked arithmetic and the signature
 * algebra shared by type_handle.c, type.c, commit.c (with loop_build.c and
 * prog_stats.c), cursor.c, sig.c and wire.c.
 */
#ifndef IBX_DTYPE_INT_H
#define IBX_DTYPE_INT_H

#include "dtype.h"
#include "ibx_int.h"

#include <stdatomic.h>
#include <stdlib.h>

/* Constructor that made a type (the tree keeps them for commit and signatures). */
enum dt_kind {
	DT_BASIC = 1,
	DT_CONTIG,
	DT_VECTOR,
	DT_HVECTOR,
	DT_INDEXED,
	DT_HINDEXED,
	DT_INDEXED_BLOCK,
	DT_HINDEXED_BLOCK,
	DT_STRUCT,
	DT_RESIZED,
	DT_DUP,
	DT_SUBARRAY,
	DT_REMOTE, /* deserialised: a loop program without a tree */
};

/* Composable hash of a basic-type sequence (sig.c): h = sum x_i B^(n-1-i)
 * mod 2^61-1 and pw = B^n, so cat(a, b) = (a.h * b.pw + b.h, a.pw * b.pw). */
typedef struct dt_sig {
	uint64_t h;
	uint64_t pw;
} dt_sig_t;

/*
 * A committed program: loops[nloops] (children before parents, the root
 * last) followed by aux[naux], one allocation. Aux arrays per loop kind:
 *   VEC     none
 *   BLKIDX  displs[count]
 *   IDX     displs[count] blens[count] prefix[count + 1]
 *   STRUCT  displs[count] children[count] prefix[count + 1]
 * prefix[i] = packed bytes of iterations 0..i-1 (binary search on seek).
 */
typedef struct ibx_dt_prog {
	uint32_t nloops;
	uint32_t depth;
	uint64_t naux;
	ibx_dt_loop_t loops[];
} ibx_dt_prog_t;

static inline int64_t *dt_prog_aux(const ibx_dt_prog_t *p)
{
	return (int64_t *)(p->loops + p->nloops);
}

static inline size_t dt_prog_bytes(const ibx_dt_prog_t *p)
{
	return sizeof(*p) + (size_t)p->nloops * sizeof(ibx_dt_loop_t) + (size_t)p->naux * 8u;
}

struct ibx_dt {
	atomic_int refs;
	uint8_t kind; /* enum dt_kind */
	bool committed;
	bool markers;	    /* carries lb/ub markers (from a resized inside) */
	bool contig, dense; /* committed only, see ibx_dt_info_t */
	bool has_wire_id;
	int depth;     /* constructor nesting, 0 for basic */
	uint32_t code; /* basic */
	int64_t size, lb, ub, true_lb, true_ub, align, nelem;
	dt_sig_t sig;
	/* constructor arguments (displacements converted to bytes) */
	int64_t count;
	int64_t blocklen; /* vector, hvector, *_block */
	int64_t stride;	  /* vector, hvector: bytes */
	int64_t *blens;	  /* indexed, hindexed, struct: [count] */
	int64_t *displs;  /* indexed*, hindexed*, struct: [count] bytes */
	ibx_dt_t **types; /* struct: [count], one reference each */
	ibx_dt_t *child;  /* other derived kinds: one reference */
	/* committed form */
	ibx_dt_prog_t *prog;
	ibx_dt_stats_t stats;
	uint64_t wire_id;
	uint32_t wire_version;
	/* one element's blocks: 0 not known yet, 1 disjoint, 2 overlapping
	 * (overlap.c, computed on first ask) */
	atomic_int overlap;
	/* the largest count of elements known not to overlap (interleaving
	 * types: extent below the data span) */
	_Atomic int64_t disjoint_count;
};

/* ---- checked arithmetic (false on overflow) ------------------------------ */
static inline bool dt_add(int64_t a, int64_t b, int64_t *r)
{
	return !__builtin_add_overflow(a, b, r);
}
static inline bool dt_sub(int64_t a, int64_t b, int64_t *r)
{
	return !__builtin_sub_overflow(a, b, r);
}
static inline bool dt_mul(int64_t a, int64_t b, int64_t *r)
{
	return !__builtin_mul_overflow(a, b, r);
}
static inline int64_t dt_min(int64_t a, int64_t b)
{
	return a < b ? a : b;
}
static inline int64_t dt_max(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* ---- type_handle.c ------------------------------------------------------ */
ibx_status_t ibx_dt_alloc(int kind, ibx_dt_t **dt_p);
/* Another reference, taken by a parent on its child (the handle is live). */
static inline void dt_retain_child(ibx_dt_t *dt)
{
	atomic_fetch_add_explicit(&dt->refs, 1, memory_order_relaxed);
}
void ibx_dt_release(ibx_dt_t *dt);
/* Gives a committed type its wire id and version (id reuse bumps the version). */
ibx_status_t ibx_dt_wire_id_assign(ibx_dt_t *dt);

/* ---- commit.c ------------------------------------------------------------ */
ibx_status_t ibx_dt_compile(const ibx_dt_t *dt, ibx_dt_prog_t **prog_p);
ibx_status_t ibx_dt_prog_alloc(uint32_t nloops, uint64_t naux, ibx_dt_prog_t **prog_p);
/* Marks @dt committed with @prog (takes ownership): contig, stats, id. */
ibx_status_t ibx_dt_install_prog(ibx_dt_t *dt, ibx_dt_prog_t *prog);

/* ---- prog_stats.c -------------------------------------------------------- */
/* Stats of a valid program; IBX_ERR_OVERFLOW if its run counts do not fit. */
ibx_status_t ibx_dt_prog_stats(const ibx_dt_prog_t *prog, ibx_dt_stats_t *stats_p);

/* ---- sig.c --------------------------------------------------------------- */
dt_sig_t ibx_dt_sig_empty(void);
dt_sig_t ibx_dt_sig_basic(uint32_t code, int64_t size);
dt_sig_t ibx_dt_sig_cat(dt_sig_t a, dt_sig_t b);
dt_sig_t ibx_dt_sig_rep(dt_sig_t s, uint64_t k);
/* A sequence known only by its hash and length (a peer's layout). */
dt_sig_t ibx_dt_sig_of_hash(uint64_t hash, int64_t nelem);

#endif /* IBX_DTYPE_INT_H */
