/*
 * overlap.c — does (type, count) write any byte twice? (ibx_dt_overlaps)
 *
 * The blocks, flattened and sorted by offset, overlap iff some block
 * starts before the previous one ends. One element is checked once per
 * type. Elements of a count > 1 cannot meet when the extent covers the
 * data span (true extent) of one element; when it does not (a resized
 * type interleaving its elements, say) the whole count is checked, and
 * the largest count found disjoint is kept, so a receive loop pays once.
 * A flattening that does not fit in memory counts as disjoint (the
 * receive proceeds as it would without the check).
 */
#include "dtype_int.h"

#include <stdlib.h>

static int block_cmp(const void *a, const void *b)
{
	const ibx_dt_block_t *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* 1 disjoint, 2 overlapping */
static int blocks_overlap(const ibx_dt_t *dt, int64_t count)
{
	ibx_dt_block_t *b = NULL;
	int64_t n = 0;
	int verdict = 1;

	if (ibx_dt_flatten(dt, count, &b, &n) != IBX_OK)
		return 1;
	qsort(b, (size_t)n, sizeof(*b), block_cmp);
	for (int64_t i = 1; i < n; i++) {
		if (b[i].off < b[i - 1].off + b[i - 1].len) {
			verdict = 2;
			break;
		}
	}
	free(b);
	return verdict;
}

bool ibx_dt_overlaps(const ibx_dt_t *dt, int64_t count)
{
	ibx_dt_t *t = (ibx_dt_t *)dt;
	int v;

	if (!dt || count <= 0 || !dt->committed || dt->size == 0)
		return false;
	v = atomic_load_explicit(&t->overlap, memory_order_relaxed);
	if (!v) {
		v = blocks_overlap(dt, 1);
		atomic_store_explicit(&t->overlap, v, memory_order_relaxed);
	}
	if (v == 2)
		return true;
	int64_t ext = dt->ub - dt->lb, span = dt->true_ub - dt->true_lb;

	if (count == 1 || (ext < 0 ? -ext : ext) >= span ||
	    count <= atomic_load_explicit(&t->disjoint_count, memory_order_relaxed))
		return false;
	if (blocks_overlap(dt, count) == 2)
		return true;
	atomic_store_explicit(&t->disjoint_count, count, memory_order_relaxed);
	return false;
}
