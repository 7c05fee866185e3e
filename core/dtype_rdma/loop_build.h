/*
 * loop_build.h — private to the commit files (commit.c, loop_build.c): the
 * "layouts" a constructor tree compiles into and the builder that collects
 * the loops made on the way, before commit.c lays them out as a program.
 */
#ifndef IBX_DT_LOOP_BUILD_H
#define IBX_DT_LOOP_BUILD_H

#include "dtype_int.h"

/* A compiled subtree: nothing, one run (off, len), or loop @node of the builder. */
enum { LAY_EMPTY, LAY_RUN, LAY_NODE };

typedef struct lay {
	int k;
	uint32_t node;
	int64_t off, len;
} lay_t;

typedef struct memo_ent {
	const ibx_dt_t *key;
	lay_t val;
} memo_ent_t;

/* The loops and aux words made so far (loop_build.c), and the layout of
 * every child compiled so far (commit.c's memo). */
typedef struct bld {
	ibx_dt_loop_t *loops;
	uint32_t nloops, cap;
	int64_t *aux;
	uint64_t naux, auxcap;
	memo_ent_t *memo;
	size_t memo_cap, memo_n;
} bld_t;

static const lay_t lay_empty = {.k = LAY_EMPTY};

static inline lay_t lay_run(int64_t off, int64_t len)
{
	return (lay_t){.k = LAY_RUN, .off = off, .len = len};
}

/* count blocks at off + i*stride, each blen copies of @l placed ext apart. */
ibx_status_t ibx_dt_bld_vec(bld_t *b, int64_t count, int64_t blen, int64_t stride, int64_t ext,
			    int64_t off, lay_t l, lay_t *out);
/* indexed family: n blocks of blens[k] copies of @l (ext apart) at displs[k] bytes */
ibx_status_t ibx_dt_bld_idx(bld_t *b, int64_t n, const int64_t *blens, const int64_t *displs,
			    int64_t ext, lay_t l, lay_t *out);
/* A struct's @m (> 0) non-empty blocks, bodies[k] placed at offs[k]; offs,
 * lens and nodes (m entries each) are scratch. */
ibx_status_t ibx_dt_bld_struct(bld_t *b, int64_t m, int64_t *offs, int64_t *lens,
			       const lay_t *bodies, uint32_t *nodes, lay_t *out);

#endif /* IBX_DT_LOOP_BUILD_H */
