/* ibx-test: np=1,2,3,4 timeout=60 nodes=1 */
/*
 * comm_groups — process groups: MPI_Comm_group, size and rank, incl/excl
 * (and the range forms), MPI_Group_translate_ranks (MPI_PROC_NULL,
 * MPI_UNDEFINED for non-members), MPI_Group_compare (IDENT / SIMILAR /
 * UNEQUAL), union / intersection / difference with the order MPI
 * prescribes, MPI_GROUP_EMPTY, the group of a split communicator, and the
 * error classes of bad arguments.
 */
#include "mpitest.h"

static int rank, size;

static int gsize(MPI_Group g)
{
	int s;

	MPI_OK(MPI_Group_size(g, &s));
	return s;
}

static int grank(MPI_Group g)
{
	int r;

	MPI_OK(MPI_Group_rank(g, &r));
	return r;
}

static int gcmp(MPI_Group a, MPI_Group b)
{
	int r;

	MPI_OK(MPI_Group_compare(a, b, &r));
	return r;
}

/* The world ranks of @g's members, in order, into @out. */
static void members(MPI_Group g, MPI_Group world, int *out)
{
	int n = gsize(g), *idx = malloc(sizeof(int) * (size_t)(n + 1));

	CHECK(idx, "out of memory");
	for (int i = 0; i < n; i++)
		idx[i] = i;
	MPI_OK(MPI_Group_translate_ranks(g, n, idx, world, out));
	free(idx);
}

static void expect_members(MPI_Group g, MPI_Group world, int n, const int *want, const char *what)
{
	int *got = malloc(sizeof(int) * (size_t)(n + 1));

	CHECK(got, "out of memory");
	CHECK(gsize(g) == n, "%s: size %d, expected %d", what, gsize(g), n);
	members(g, world, got);
	for (int i = 0; i < n; i++)
		CHECK(got[i] == want[i], "%s: member %d is world rank %d, expected %d", what, i,
		      got[i], want[i]);
	free(got);
}

static void test_basic(MPI_Group wg)
{
	MPI_Group rev, same, self, tmp;
	int *ranks = malloc(sizeof(int) * (size_t)size), *out = malloc(sizeof(int) * (size_t)size);

	CHECK(ranks && out, "out of memory");
	CHECK(gsize(wg) == size && grank(wg) == rank, "world group: %d of %d", grank(wg),
	      gsize(wg));
	for (int i = 0; i < size; i++)
		ranks[i] = size - 1 - i;
	MPI_OK(MPI_Group_incl(wg, size, ranks, &rev));
	CHECK(grank(rev) == size - 1 - rank, "reversed group rank %d", grank(rev));
	CHECK(gcmp(wg, wg) == MPI_IDENT, "world vs itself");
	CHECK(gcmp(wg, rev) == (size > 1 ? MPI_SIMILAR : MPI_IDENT), "world vs reversed: %d",
	      gcmp(wg, rev));
	/* translate world ranks into the reversed group, with MPI_PROC_NULL */
	for (int i = 0; i < size; i++)
		ranks[i] = i;
	ranks[0] = MPI_PROC_NULL;
	MPI_OK(MPI_Group_translate_ranks(wg, size, ranks, rev, out));
	CHECK(out[0] == MPI_PROC_NULL, "MPI_PROC_NULL translated to %d", out[0]);
	for (int i = 1; i < size; i++)
		CHECK(out[i] == size - 1 - i, "world %d is reversed %d, got %d", i, size - 1 - i,
		      out[i]);
	/* a group equal to the world's, built differently */
	MPI_OK(MPI_Group_excl(rev, 0, NULL, &tmp));
	CHECK(gcmp(tmp, rev) == MPI_IDENT, "excl of nothing");
	MPI_OK(MPI_Group_free(&tmp));
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &same));
	CHECK(gcmp(same, wg) == MPI_IDENT, "two world groups");
	/* the group of MPI_COMM_SELF */
	MPI_OK(MPI_Comm_group(MPI_COMM_SELF, &self));
	CHECK(gsize(self) == 1 && grank(self) == 0, "self group");
	MPI_OK(MPI_Group_translate_ranks(self, 1, (int[]){0}, wg, out));
	CHECK(out[0] == rank, "self's member is world rank %d", out[0]);
	CHECK(gcmp(self, wg) == (size == 1 ? MPI_IDENT : MPI_UNEQUAL), "self vs world");
	MPI_OK(MPI_Group_free(&self));
	MPI_OK(MPI_Group_free(&same));
	MPI_OK(MPI_Group_free(&rev));
	CHECK(rev == MPI_GROUP_NULL, "Group_free did not reset the handle");
	free(ranks);
	free(out);
}

static void test_sets(MPI_Group wg)
{
	MPI_Group evens, low, u, in, diff, e2, x;
	int ne = (size + 1) / 2, nl = (size + 1) / 2;
	int *ranks = calloc((size_t)size + 1, sizeof(int)),
	    *want = calloc((size_t)size + 1, sizeof(int));
	int n;

	CHECK(ranks && want, "out of memory");
	/* evens, highest first */
	for (int i = 0; i < ne; i++)
		ranks[i] = 2 * (ne - 1 - i);
	MPI_OK(MPI_Group_incl(wg, ne, ranks, &evens));
	expect_members(evens, wg, ne, ranks, "evens");
	CHECK(grank(evens) == (rank % 2 ? MPI_UNDEFINED : ne - 1 - rank / 2), "rank in evens %d",
	      grank(evens));
	/* the lower half by a range */
	MPI_OK(MPI_Group_range_incl(wg, 1, (int[][3]){{0, nl - 1, 1}}, &low));
	for (int i = 0; i < nl; i++)
		want[i] = i;
	expect_members(low, wg, nl, want, "low");

	/* union: evens (their order), then the low ones not even */
	MPI_OK(MPI_Group_union(evens, low, &u));
	n = 0;
	for (int i = 0; i < ne; i++)
		want[n++] = ranks[i];
	for (int i = 0; i < nl; i++)
		if (i % 2)
			want[n++] = i;
	expect_members(u, wg, n, want, "union");
	/* intersection: the low evens, in evens' order (descending) */
	MPI_OK(MPI_Group_intersection(evens, low, &in));
	n = 0;
	for (int i = 0; i < ne; i++)
		if (ranks[i] < nl)
			want[n++] = ranks[i];
	expect_members(in, wg, n, want, "intersection");
	/* difference: evens not low */
	MPI_OK(MPI_Group_difference(evens, low, &diff));
	n = 0;
	for (int i = 0; i < ne; i++)
		if (ranks[i] >= nl)
			want[n++] = ranks[i];
	expect_members(diff, wg, n, want, "difference");
	if (n == 0)
		CHECK(diff == MPI_GROUP_EMPTY, "empty difference is not MPI_GROUP_EMPTY");

	/* evens by exclusion (odds, via a strided range) is the same set,
	 * in ascending order: SIMILAR unless there is only one */
	if (size > 1) {
		MPI_OK(MPI_Group_range_excl(wg, 1, (int[][3]){{1, size - 1, 2}}, &e2));
		CHECK(gcmp(e2, evens) == (ne > 1 ? MPI_SIMILAR : MPI_IDENT),
		      "evens by exclusion vs evens: %d", gcmp(e2, evens));
		MPI_OK(MPI_Group_free(&e2));
	}
	/* a descending range */
	MPI_OK(MPI_Group_range_incl(wg, 1, (int[][3]){{size - 1, 0, -1}}, &x));
	for (int i = 0; i < size; i++)
		want[i] = size - 1 - i;
	expect_members(x, wg, size, want, "descending range");
	MPI_OK(MPI_Group_free(&x));

	/* the empty group */
	CHECK(gsize(MPI_GROUP_EMPTY) == 0 && grank(MPI_GROUP_EMPTY) == MPI_UNDEFINED,
	      "MPI_GROUP_EMPTY");
	MPI_OK(MPI_Group_intersection(evens, MPI_GROUP_EMPTY, &x));
	CHECK(x == MPI_GROUP_EMPTY, "intersection with the empty group");
	MPI_OK(MPI_Group_union(MPI_GROUP_EMPTY, evens, &x));
	CHECK(gcmp(x, evens) == MPI_IDENT, "union with the empty group");
	MPI_OK(MPI_Group_free(&x));
	MPI_OK(MPI_Group_incl(wg, 0, NULL, &x));
	CHECK(x == MPI_GROUP_EMPTY && gcmp(x, MPI_GROUP_EMPTY) == MPI_IDENT, "incl of none");
	/* non-members translate to MPI_UNDEFINED */
	if (size > 1) {
		int one = 1, out = 0;

		MPI_OK(MPI_Group_translate_ranks(wg, 1, &one, evens, &out));
		CHECK(out == MPI_UNDEFINED, "odd rank 1 in evens: %d", out);
	}
	MPI_OK(MPI_Group_free(&u));
	MPI_OK(MPI_Group_free(&in));
	MPI_OK(MPI_Group_free(&diff));
	MPI_OK(MPI_Group_free(&low));
	MPI_OK(MPI_Group_free(&evens));
	free(ranks);
	free(want);
}

/* The group of a split communicator matches the split. */
static void test_comm_group(MPI_Group wg)
{
	MPI_Comm c;
	MPI_Group g;
	int *want = malloc(sizeof(int) * (size_t)size), n = 0;

	CHECK(want, "out of memory");
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &c));
	MPI_OK(MPI_Comm_group(c, &g));
	for (int r = size - 1; r >= 0; r--)
		if (r % 2 == rank % 2)
			want[n++] = r;
	expect_members(g, wg, n, want, "split's group");
	MPI_OK(MPI_Group_free(&g));
	MPI_OK(MPI_Comm_free(&c));
	free(want);
}

static void test_errors(MPI_Group wg)
{
	MPI_Group g, stale, nul = MPI_GROUP_NULL;
	int out[2], r;

	MPI_FAILS(MPI_ERR_RANK, MPI_Group_incl(wg, 1, (int[]){size}, &g));
	MPI_FAILS(MPI_ERR_RANK, MPI_Group_incl(wg, 1, (int[]){-1}, &g));
	if (size > 1)
		MPI_FAILS(MPI_ERR_RANK, MPI_Group_incl(wg, 2, (int[]){0, 0}, &g));
	MPI_FAILS(MPI_ERR_ARG, MPI_Group_incl(wg, size + 1, (int[5]){0}, &g));
	MPI_FAILS(MPI_ERR_RANK, MPI_Group_excl(wg, 1, (int[]){size + 3}, &g));
	MPI_FAILS(MPI_ERR_ARG, MPI_Group_range_incl(wg, 1, (int[][3]){{0, 0, 0}}, &g));
	MPI_FAILS(MPI_ERR_RANK, MPI_Group_range_incl(wg, 1, (int[][3]){{0, size, 1}}, &g));
	MPI_FAILS(MPI_ERR_RANK,
		  MPI_Group_translate_ranks(wg, 1, (int[]){size}, MPI_GROUP_EMPTY, out));
	MPI_FAILS(MPI_ERR_GROUP, MPI_Group_size(MPI_GROUP_NULL, &r));
	MPI_FAILS(MPI_ERR_GROUP, MPI_Group_free(&nul));
	MPI_FAILS(MPI_ERR_ARG, MPI_Group_free(NULL));
	MPI_FAILS(MPI_ERR_GROUP, MPI_Group_union(wg, MPI_GROUP_NULL, &g));
	MPI_FAILS(MPI_ERR_ARG, MPI_Group_rank(wg, NULL));
	MPI_OK(MPI_Group_incl(wg, 1, (int[]){0}, &g));
	stale = g;
	MPI_OK(MPI_Group_free(&g));
	MPI_FAILS(MPI_ERR_GROUP, MPI_Group_size(stale, &r));
	MPI_FAILS(MPI_ERR_GROUP, MPI_Group_compare(stale, wg, &r));
}

int main(int argc, char **argv)
{
	MPI_Group wg;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	test_basic(wg);
	test_sets(wg);
	test_comm_group(wg);
	test_errors(wg);
	MPI_OK(MPI_Group_free(&wg));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("comm_groups: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
