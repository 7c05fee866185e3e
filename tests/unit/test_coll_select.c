/*
 * test_coll_select.c — mpi-lite's table of collective algorithms
 * (mpi-lite/coll_select.c) against the choices the collectives made
 * before the table existed, written out here as they were in the code
 * (thresholds inline), with the changes since (issue 11: the barrier and
 * Alltoall of an oversubscribed node, Allreduce of two ranks by halves
 * above 64 KiB): over a grid of rank counts, sizes around
 * every threshold, element counts and properties, the table must name
 * the same algorithm. Then a few cases by name, and the printed form.
 *
 * coll_select.c is compiled into this test (it needs nothing of mpi-lite
 * but its own header), so the test links like every other unit test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "coll_select.c"

#define KIB 1024

/* ---- the choices as the code made them ------------------------------------------------------ */

typedef struct where {
	bool spans, one_node, oversub; /* spans and one_node never both */
} where_t;

static mpil_coll_alg_t old_barrier(int p, const where_t *w)
{
	if (w->spans)
		return MPIL_COLL_ALG_NODE_AWARE;
	if (w->one_node && w->oversub && p > 2 && p <= 8)
		return MPIL_COLL_ALG_FAN;
	return MPIL_COLL_ALG_DISSEMINATION;
}

/* p > 1, len > 0 (the callers return before otherwise) */
static mpil_coll_alg_t old_bcast(int p, size_t len, const where_t *w)
{
	if (w->spans)
		return MPIL_COLL_ALG_NODE_AWARE;
	if (w->one_node && p > 2 && p <= 8 && w->oversub)
		return MPIL_COLL_ALG_LINEAR;
	if (p == 2 || len <= 64 * KIB || len < (size_t)p || w->oversub)
		return MPIL_COLL_ALG_BINOMIAL;
	return MPIL_COLL_ALG_SCATTER_RING;
}

/* p > 1, n > 0; @span: bytes of the n work elements */
static mpil_coll_alg_t old_reduce(int p, int n, size_t span, bool commute, bool whole,
				  const where_t *w)
{
	if (w->spans && commute)
		return MPIL_COLL_ALG_NODE_AWARE;
	if (commute && !whole && p > 2 && n >= p && span > 64 * KIB)
		return MPIL_COLL_ALG_RS_GATHER;
	return MPIL_COLL_ALG_BINOMIAL;
}

static mpil_coll_alg_t old_allreduce(int p, int n, size_t span, bool commute, bool whole,
				     const where_t *w)
{
	if (w->spans && commute)
		return MPIL_COLL_ALG_NODE_AWARE;
	if (p == 2 && commute && !whole && span <= 64 * KIB)
		return MPIL_COLL_ALG_PAIR;
	if (commute && !whole && span > 16 * KIB && n >= p)
		return MPIL_COLL_ALG_RABENSEIFNER;
	return MPIL_COLL_ALG_REC_DOUBLING;
}

static mpil_coll_alg_t old_reduce_scatter(bool commute, bool whole)
{
	return commute && !whole ? MPIL_COLL_ALG_RING : MPIL_COLL_ALG_REDUCE_SCATTER;
}

static mpil_coll_alg_t old_gather(int p, size_t block)
{
	return p > 2 && block <= 2048 ? MPIL_COLL_ALG_BINOMIAL : MPIL_COLL_ALG_LINEAR;
}

static mpil_coll_alg_t old_allgather(int p, size_t block)
{
	return p > 2 && (size_t)p * block <= 32 * KIB ? MPIL_COLL_ALG_BRUCK : MPIL_COLL_ALG_RING;
}

static mpil_coll_alg_t old_alltoall(int p, size_t slen, size_t rlen, const where_t *w)
{
	if (w->one_node && w->oversub && p > 2 && p <= 8 && slen <= 256 * KIB && slen == rlen)
		return MPIL_COLL_ALG_LINEAR;
	return p > 2 && slen <= 256 && slen == rlen ? MPIL_COLL_ALG_BRUCK : MPIL_COLL_ALG_PAIRWISE;
}

/* ---- the grid ------------------------------------------------------------------------------- */

static const int ranks[] = {2, 3, 4, 5, 7, 8, 9, 16, 17, 64, 1000};
static const size_t sizes[] = {1,
			       2,
			       7,
			       8,
			       255,
			       256,
			       257,
			       2047,
			       2048,
			       2049,
			       16 * KIB - 1,
			       16 * KIB,
			       16 * KIB + 1,
			       32 * KIB - 1,
			       32 * KIB,
			       32 * KIB + 1,
			       64 * KIB - 1,
			       64 * KIB,
			       64 * KIB + 1,
			       64 * KIB + 8,
			       1024 * KIB};
static const size_t elem_sizes[] = {1, 4, 8, 16, 64 * KIB + 1};
static const where_t wheres[] = {
    {false, false, false}, {false, false, true}, {false, true, false},
    {false, true, true},   {true, false, false}, {true, false, true},
};

static unsigned where_props(const where_t *w)
{
	return (w->spans ? MPIL_COLL_SPANS_NODES : 0) | (w->one_node ? MPIL_COLL_ONE_NODE : 0) |
	       (w->oversub ? MPIL_COLL_OVERSUB : 0);
}

static unsigned red_props(bool commute, bool whole)
{
	return (commute ? MPIL_COLL_COMMUTE : 0) | (whole ? 0 : MPIL_COLL_PREDEF);
}

static mpil_coll_alg_t ask(mpil_coll_op_t op, int p, size_t bytes, long long count, unsigned props)
{
	mpil_coll_query_t q = {.op = op, .p = p, .bytes = bytes, .count = count, .props = props};

	return mpil_coll_select(&q);
}

#define assert_same(got, want, what, p, n)                                                         \
	do {                                                                                       \
		if ((got) != (want))                                                               \
			fail_msg("%s p=%d n=%zu: table %s, code %s", what, p, (size_t)(n),         \
				 mpil_coll_alg_name(got), mpil_coll_alg_name(want));               \
	} while (0)

static void test_barrier_bcast(void **state)
{
	for (size_t w = 0; w < IBX_ARRAY_SIZE(wheres); w++) {
		const where_t *wh = &wheres[w];
		unsigned props = where_props(wh);

		for (size_t i = 0; i < IBX_ARRAY_SIZE(ranks); i++) {
			int p = ranks[i];

			assert_same(ask(MPIL_COLL_BARRIER, p, 0, 0, props), old_barrier(p, wh),
				    "Barrier", p, 0);
			for (size_t j = 0; j < IBX_ARRAY_SIZE(sizes); j++) {
				size_t len = sizes[j];

				assert_same(ask(MPIL_COLL_BCAST, p, len, (long long)len, props),
					    old_bcast(p, len, wh), "Bcast", p, len);
			}
		}
	}
}

static void test_reductions(void **state)
{
	for (size_t w = 0; w < IBX_ARRAY_SIZE(wheres); w++) {
		const where_t *wh = &wheres[w];

		for (int c = 0; c < 4; c++) {
			bool commute = c & 1, whole = c & 2;
			unsigned props = where_props(wh) | red_props(commute, whole);

			for (size_t i = 0; i < IBX_ARRAY_SIZE(ranks); i++) {
				int p = ranks[i];

				assert_same(ask(MPIL_COLL_REDUCE_SCATTER, p, 8, 1, props),
					    old_reduce_scatter(commute, whole), "Reduce_scatter", p,
					    8);
				for (size_t j = 0; j < IBX_ARRAY_SIZE(sizes); j++) {
					for (size_t e = 0; e < IBX_ARRAY_SIZE(elem_sizes); e++) {
						size_t span = sizes[j];
						int n = (int)((span + elem_sizes[e] - 1) /
							      elem_sizes[e]);

						assert_same(
						    ask(MPIL_COLL_REDUCE, p, span, n, props),
						    old_reduce(p, n, span, commute, whole, wh),
						    "Reduce", p, span);
						assert_same(
						    ask(MPIL_COLL_ALLREDUCE, p, span, n, props),
						    old_allreduce(p, n, span, commute, whole, wh),
						    "Allreduce", p, span);
						assert_same(ask(MPIL_COLL_SCAN, p, span, n, props),
							    MPIL_COLL_ALG_REC_DOUBLING, "Scan", p,
							    span);
						assert_same(
						    ask(MPIL_COLL_EXSCAN, p, span, n, props),
						    MPIL_COLL_ALG_REC_DOUBLING, "Exscan", p, span);
					}
				}
			}
		}
	}
}

static void test_blocks(void **state)
{
	for (size_t i = 0; i < IBX_ARRAY_SIZE(ranks); i++) {
		int p = ranks[i];

		for (size_t j = 0; j < IBX_ARRAY_SIZE(sizes); j++) {
			size_t len = sizes[j];

			assert_same(ask(MPIL_COLL_GATHER, p, len, 0, 0), old_gather(p, len),
				    "Gather", p, len);
			assert_same(ask(MPIL_COLL_SCATTER, p, len, 0, 0), old_gather(p, len),
				    "Scatter", p, len);
			assert_same(ask(MPIL_COLL_ALLGATHER, p, (size_t)p * len, 0, 0),
				    old_allgather(p, len), "Allgather", p, len);
			for (size_t w = 0; w < IBX_ARRAY_SIZE(wheres); w++) {
				unsigned props = where_props(&wheres[w]);

				assert_same(ask(MPIL_COLL_ALLTOALL, p, len, 0,
						props | MPIL_COLL_SAME_BLOCKS),
					    old_alltoall(p, len, len, &wheres[w]), "Alltoall", p,
					    len);
				assert_same(ask(MPIL_COLL_ALLTOALL, p, len, 0, props),
					    old_alltoall(p, len, len + 1, &wheres[w]),
					    "Alltoall (unequal)", p, len);
			}
			assert_same(ask(MPIL_COLL_GATHERV, p, len, 0, 0), MPIL_COLL_ALG_LINEAR,
				    "Gatherv", p, len);
			assert_same(ask(MPIL_COLL_SCATTERV, p, len, 0, 0), MPIL_COLL_ALG_LINEAR,
				    "Scatterv", p, len);
			assert_same(ask(MPIL_COLL_ALLGATHERV, p, len, 0, 0), MPIL_COLL_ALG_RING,
				    "Allgatherv", p, len);
			assert_same(ask(MPIL_COLL_ALLTOALLV, p, len, 0, 0), MPIL_COLL_ALG_PAIRWISE,
				    "Alltoallv", p, len);
		}
	}
}

/* ---- a few by name -------------------------------------------------------------------------- */

static void test_named_cases(void **state)
{
	unsigned sum = MPIL_COLL_COMMUTE | MPIL_COLL_PREDEF;

	/* Bcast: the tree up to 64 KiB, scatter + ring above, linear on a
	 * crowded node of up to 8 ranks */
	assert_int_equal(ask(MPIL_COLL_BCAST, 4, 64 * KIB, 64 * KIB, MPIL_COLL_ONE_NODE),
			 MPIL_COLL_ALG_BINOMIAL);
	assert_int_equal(ask(MPIL_COLL_BCAST, 4, 64 * KIB + 1, 64 * KIB + 1, MPIL_COLL_ONE_NODE),
			 MPIL_COLL_ALG_SCATTER_RING);
	assert_int_equal(ask(MPIL_COLL_BCAST, 2, 1024 * KIB, 1024 * KIB, MPIL_COLL_ONE_NODE),
			 MPIL_COLL_ALG_BINOMIAL);
	assert_int_equal(ask(MPIL_COLL_BCAST, 8, 8, 8, MPIL_COLL_ONE_NODE | MPIL_COLL_OVERSUB),
			 MPIL_COLL_ALG_LINEAR);
	assert_int_equal(
	    ask(MPIL_COLL_BCAST, 9, 1024 * KIB, 1024 * KIB, MPIL_COLL_ONE_NODE | MPIL_COLL_OVERSUB),
	    MPIL_COLL_ALG_BINOMIAL);
	/* Allreduce of doubles: pair at 2 ranks up to 64 KiB, recursive
	 * doubling up to 16 KiB, Rabenseifner above; a user op that does not
	 * commute stays with recursive doubling */
	assert_int_equal(ask(MPIL_COLL_ALLREDUCE, 2, 64 * KIB, 8 * KIB, sum), MPIL_COLL_ALG_PAIR);
	assert_int_equal(ask(MPIL_COLL_ALLREDUCE, 2, 64 * KIB + 8, 8 * KIB + 1, sum),
			 MPIL_COLL_ALG_RABENSEIFNER);
	assert_int_equal(ask(MPIL_COLL_ALLREDUCE, 2, 1024 * KIB, 128 * KIB, sum),
			 MPIL_COLL_ALG_RABENSEIFNER);
	assert_int_equal(ask(MPIL_COLL_ALLREDUCE, 4, 16 * KIB, 2 * KIB, sum),
			 MPIL_COLL_ALG_REC_DOUBLING);
	assert_int_equal(ask(MPIL_COLL_ALLREDUCE, 4, 16 * KIB + 8, 2 * KIB + 1, sum),
			 MPIL_COLL_ALG_RABENSEIFNER);
	assert_int_equal(ask(MPIL_COLL_ALLREDUCE, 4, 1024 * KIB, 128 * KIB, MPIL_COLL_PREDEF),
			 MPIL_COLL_ALG_REC_DOUBLING);
	assert_int_equal(ask(MPIL_COLL_ALLREDUCE, 4, 8, 1, sum | MPIL_COLL_SPANS_NODES),
			 MPIL_COLL_ALG_NODE_AWARE);
	/* a crowded node: the barrier through rank 0, Alltoall all at once */
	assert_int_equal(ask(MPIL_COLL_BARRIER, 4, 0, 0, MPIL_COLL_ONE_NODE | MPIL_COLL_OVERSUB),
			 MPIL_COLL_ALG_FAN);
	assert_int_equal(ask(MPIL_COLL_BARRIER, 4, 0, 0, MPIL_COLL_ONE_NODE),
			 MPIL_COLL_ALG_DISSEMINATION);
	assert_int_equal(ask(MPIL_COLL_ALLTOALL, 4, 8, 0,
			     MPIL_COLL_ONE_NODE | MPIL_COLL_OVERSUB | MPIL_COLL_SAME_BLOCKS),
			 MPIL_COLL_ALG_LINEAR);
	assert_int_equal(
	    ask(MPIL_COLL_ALLTOALL, 4, 8, 0, MPIL_COLL_ONE_NODE | MPIL_COLL_SAME_BLOCKS),
	    MPIL_COLL_ALG_BRUCK);
	assert_string_equal(mpil_coll_alg_name(MPIL_COLL_ALG_RABENSEIFNER), "Rabenseifner");
	assert_string_equal(mpil_coll_op_name(MPIL_COLL_ALLTOALL), "Alltoall");
}

/* Every collective ends with an unconditional row: nothing falls through. */
static void test_no_holes(void **state)
{
	for (int op = 0; op < MPIL_COLL_NOPS; op++)
		for (unsigned props = 0; props < MPIL_COLL_SPLITS; props++)
			for (size_t i = 0; i < IBX_ARRAY_SIZE(ranks); i++)
				assert_int_not_equal(ask((mpil_coll_op_t)op, ranks[i], 1, 0, props),
						     MPIL_COLL_ALG_NONE);
}

/* ---- the printed table ---------------------------------------------------------------------- */

static void test_print(void **state)
{
	char *text = NULL;
	size_t len = 0, lines = 0, rows = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	mpil_coll_select_print(f);
	fclose(f);
	for (const char *s = text; *s; s++)
		lines += *s == '\n';
	for (int op = 0; op < MPIL_COLL_NOPS; op++)
		rows += coll_table[op].nrows;
	assert_int_equal(lines, IBX_ARRAY_SIZE(legend) + rows);
	assert_non_null(strstr(text, "p >= 3, n > 64 KiB, count >= p, not oversubscribed"));
	assert_non_null(strstr(text, "scatter + ring allgather"));
	assert_non_null(strstr(text, "p >= 3, n <= 256 B, equal blocks"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_barrier_bcast), cmocka_unit_test(test_reductions),
	    cmocka_unit_test(test_blocks),	  cmocka_unit_test(test_named_cases),
	    cmocka_unit_test(test_no_holes),	  cmocka_unit_test(test_print),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
