/*
 * prog_stats.c — block statistics of a committed program (ibx_dt_stats_t):
 * how many contiguous runs one element packs from, and their length
 * distribution, which the scheme selector reads instead of walking the
 * layout.
 */
#include "dtype_int.h"

typedef struct run_w {
	int64_t len, weight;
} run_w_t;

static int run_cmp(const void *x, const void *y)
{
	const run_w_t *a = x, *b = y;

	return (a->len > b->len) - (a->len < b->len);
}

/*
 * How often each loop runs per element (a DAG: sum over its parents, top
 * down from the root), then the weighted run lengths of the leaves. Every
 * run is >= 1 byte and distinct runs are distinct packed bytes, so a valid
 * program never overflows; a peer's program that does is rejected.
 */
ibx_status_t ibx_dt_prog_stats(const ibx_dt_prog_t *p, ibx_dt_stats_t *stats_p)
{
	ibx_dt_stats_t s = {0};
	const int64_t *aux = dt_prog_aux(p);
	int64_t *mult = NULL, sum = 0, v;
	run_w_t *runs = NULL;
	uint64_t nruns = 0, cap = 0;
	ibx_status_t st = IBX_ERR_OVERFLOW;

	s.program_bytes = (int64_t)dt_prog_bytes(p);
	s.loops = (int)p->nloops;
	s.depth = (int)p->depth;
	if (p->nloops == 0) {
		*stats_p = s;
		return IBX_OK;
	}
	mult = calloc(p->nloops, sizeof(*mult));
	if (!mult)
		return IBX_ERR_NO_MEMORY;
	for (uint32_t i = 0; i < p->nloops; i++)
		if (p->loops[i].leaf)
			cap +=
			    p->loops[i].kind == IBX_DT_LOOP_IDX ? (uint64_t)p->loops[i].count : 1;
	runs = malloc((size_t)cap * sizeof(*runs));
	if (!runs) {
		st = IBX_ERR_NO_MEMORY;
		goto out;
	}
	mult[p->nloops - 1] = 1;
	for (uint32_t i = p->nloops; i-- > 0;) {
		const ibx_dt_loop_t *l = &p->loops[i];
		const int64_t *a = aux + l->aux;
		int64_t m = mult[i];

		if (m == 0)
			continue;
		if (l->kind == IBX_DT_LOOP_STRUCT) {
			for (int64_t k = 0; k < l->count; k++)
				if (!dt_add(mult[a[l->count + k]], m, &mult[a[l->count + k]]))
					goto out;
		} else if (!l->leaf) {
			int64_t copies;

			if (l->kind == IBX_DT_LOOP_IDX)
				copies = a[3 * l->count] / p->loops[l->child].size;
			else if (!dt_mul(l->count, l->blen, &copies))
				goto out;
			if (!dt_mul(copies, m, &v) || !dt_add(mult[l->child], v, &mult[l->child]))
				goto out;
		} else if (l->kind == IBX_DT_LOOP_IDX) {
			for (int64_t k = 0; k < l->count; k++)
				runs[nruns++] = (run_w_t){a[l->count + k], m};
		} else {
			if (!dt_mul(l->count, m, &v))
				goto out;
			runs[nruns++] = (run_w_t){l->blen, v};
		}
	}
	qsort(runs, (size_t)nruns, sizeof(*runs), run_cmp);
	for (uint64_t k = 0; k < nruns; k++)
		if (!dt_add(sum, runs[k].weight, &sum))
			goto out;
	s.blocks = sum;
	s.avg_block = sum ? (double)p->loops[p->nloops - 1].size / (double)sum : 0.0;
	if (nruns) {
		int64_t half = sum / 2 + (sum & 1), acc = 0; /* lower median: ceil(sum/2)-th run */

		s.min_block = runs[0].len;
		s.max_block = runs[nruns - 1].len;
		for (uint64_t k = 0; k < nruns; k++) {
			acc += runs[k].weight;
			if (acc >= half) {
				s.median_block = runs[k].len;
				break;
			}
		}
	}
	*stats_p = s;
	st = IBX_OK;
out:
	free(mult);
	free(runs);
	return st;
}
