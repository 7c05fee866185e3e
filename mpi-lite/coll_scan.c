/*
 * coll_scan.c — inclusive and exclusive prefix reductions (MPI_Scan,
 * MPI_Exscan) by recursive doubling, for any number of ranks.
 *
 * Every rank keeps two vectors: `partial`, the reduction of the aligned
 * block of ranks it belongs to at the current level (2^k ranks, cut at p),
 * and its result. In round k it swaps `partial` with rank r ^ 2^k (when
 * that rank exists); the partner's block is adjacent to its own:
 *
 *     partner below (r ^ 2^k < r): result  = theirs op result
 *                                  partial = theirs op partial
 *     partner above:               partial = partial op theirs
 *
 * so operands always combine lower ranks first (non-commutative ops are
 * right) and rank r ends with x_0 op ... op x_r after ceil(log2 p) rounds.
 * The exclusive scan starts with an empty result and takes the first
 * block from below as it is; rank 0's result stays undefined (MPI).
 *
 * The selection table (coll_select.c) names this one algorithm for both;
 * the dispatcher asks it all the same, so that the table stays the one
 * place that says what runs.
 */
#include "coll_int.h"

static int scan_recursive_doubling(const coll_grp_t *g, const void *sbuf, void *rbuf, int n,
				   const coll_red_t *rd, bool exclusive)
{
	int p = g->size, r = g->rank, err = MPI_SUCCESS;
	const void *in = sbuf ? sbuf : rbuf;
	void *pbase = NULL, *tbase = NULL;
	char *partial, *tmp;
	size_t bytes = red_span(rd, n);
	bool have = !exclusive;

	if (n == 0)
		return MPI_SUCCESS;
	if (p == 1) {
		if (!exclusive && in != rbuf)
			memcpy(red_first(rd, rbuf), red_first(rd, (void *)in), bytes);
		return MPI_SUCCESS;
	}
	partial = mpil_coll_red_alloc(rd, n, &pbase);
	tmp = mpil_coll_red_alloc(rd, n, &tbase);
	if (!partial || !tmp) {
		err = MPI_ERR_NO_MEM;
		goto out;
	}
	memcpy(red_first(rd, partial), red_first(rd, (void *)in), bytes);
	if (!exclusive && in != rbuf)
		memcpy(red_first(rd, rbuf), red_first(rd, (void *)in), bytes);
	for (int mask = 1; mask < p; mask <<= 1) {
		int dst = r ^ mask;

		if (dst >= p)
			continue;
		err = mpil_grp_sendrecv(g, red_first(rd, partial), bytes, dst, red_first(rd, tmp),
					bytes, dst, CT_SCAN);
		if (err != MPI_SUCCESS)
			goto out;
		if (dst < r) {
			if (have) {
				red_apply(rd, tmp, rbuf, n);
			} else {
				memcpy(red_first(rd, rbuf), red_first(rd, tmp), bytes);
				have = true;
			}
			red_apply(rd, tmp, partial, n);
		} else {
			char *t = partial;

			red_apply(rd, partial, tmp, n);
			partial = tmp;
			tmp = t;
		}
	}
out:
	free(pbase);
	free(tbase);
	return err;
}

int mpil_coll_scan(const coll_grp_t *g, const void *sbuf, void *rbuf, int n, const coll_red_t *rd,
		   bool exclusive)
{
	mpil_coll_query_t q = {.op = exclusive ? MPIL_COLL_EXSCAN : MPIL_COLL_SCAN,
			       .p = g->size,
			       .bytes = red_span(rd, n),
			       .count = n,
			       .props = coll_red_props(rd)};

	switch (mpil_coll_choose(&q)) {
	case MPIL_COLL_ALG_REC_DOUBLING:
		return scan_recursive_doubling(g, sbuf, rbuf, n, rd, exclusive);
	default: return MPI_ERR_INTERN;
	}
}
