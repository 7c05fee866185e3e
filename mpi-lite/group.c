/*
 * group.c — process groups (MPI-3.1 §6.3): an ordered list of world ranks.
 *
 * Groups are local objects: every operation here is computed by the
 * calling process alone. Set operations keep the order MPI prescribes:
 * union = group1 then the members of group2 not in group1, intersection
 * and difference in group1's order. An empty result is MPI_GROUP_EMPTY
 * (a predefined group; freeing it is a no-op).
 */
#include "mpil_int.h"

#include <stdlib.h>

struct mpil_group mpil_group_empty = {
    .magic = MPIL_MAGIC_GROUP,
    .refcount = 1,
    .size = 0,
    .rank = MPI_UNDEFINED,
    .predefined = true,
};

static mpil_pool_t group_pool = MPIL_POOL_INIT(struct mpil_group);

MPI_Group mpil_group_new(int n, const int *world)
{
	MPI_Group g;

	if (n == 0)
		return MPI_GROUP_EMPTY;
	g = mpil_pool_get(&group_pool);
	if (!g)
		return NULL;
	g->world = malloc((size_t)n * sizeof(int));
	if (!g->world) {
		mpil_pool_put(&group_pool, g);
		return NULL;
	}
	memcpy(g->world, world, (size_t)n * sizeof(int));
	g->magic = MPIL_MAGIC_GROUP;
	g->refcount = 1;
	g->size = n;
	g->rank = MPI_UNDEFINED;
	for (int r = 0; r < n; r++)
		if (world[r] == mpil_g.world_rank)
			g->rank = r;
	return g;
}

void mpil_group_release(MPI_Group g)
{
	if (g->predefined || --g->refcount > 0)
		return;
	free(g->world);
	g->world = NULL;
	mpil_pool_put(&group_pool, g);
}

static void group_destroy_live(void *obj)
{
	MPI_Group g = obj;

	free(g->world);
}

void mpil_group_fini(void)
{
	mpil_pool_fini(&group_pool, group_destroy_live);
}

int mpil_check_group(MPI_Comm comm, MPI_Group g, const char *fname)
{
	if (ibx_likely(mpil_group_valid(g)))
		return MPI_SUCCESS;
	if (!g)
		return mpil_err(comm, MPI_ERR_GROUP, fname, "group is MPI_GROUP_NULL");
	return mpil_err(comm, MPI_ERR_GROUP, fname, "invalid group handle %p%s", (void *)g,
			g->magic == MPIL_MAGIC_DEAD ? " (freed)" : "");
}

/* A world-rank → group-rank map of @g (-1: not a member); NULL when out of
 * memory. */
static int *rank_map(MPI_Group g)
{
	int *map = malloc((size_t)mpil_g.world_size * sizeof(int));

	if (!map)
		return NULL;
	for (int w = 0; w < mpil_g.world_size; w++)
		map[w] = -1;
	for (int r = 0; r < g->size; r++)
		map[g->world[r]] = r;
	return map;
}

static int group_result(int n, const int *world, MPI_Group *newgroup, const char *fname)
{
	MPI_Group g = mpil_group_new(n, world);

	if (!g)
		return mpil_err(NULL, MPI_ERR_NO_MEM, fname, "no memory for a group");
	*newgroup = g;
	return MPI_SUCCESS;
}

static int check_two(MPI_Group g1, MPI_Group g2, const void *out, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	MPIL_CHECK(mpil_check_group(NULL, g1, fname));
	MPIL_CHECK(mpil_check_group(NULL, g2, fname));
	if (!out)
		return mpil_err(NULL, MPI_ERR_ARG, fname, "output argument is NULL");
	return MPI_SUCCESS;
}

/* ---- queries ----------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Group_size)
int PMPI_Group_size(MPI_Group group, int *size)
{
	static const char F[] = "MPI_Group_size";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_group(NULL, group, F));
	if (!size)
		return mpil_err(NULL, MPI_ERR_ARG, F, "size is NULL");
	*size = group->size;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Group_rank)
int PMPI_Group_rank(MPI_Group group, int *rank)
{
	static const char F[] = "MPI_Group_rank";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_group(NULL, group, F));
	if (!rank)
		return mpil_err(NULL, MPI_ERR_ARG, F, "rank is NULL");
	*rank = group->rank;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Group_translate_ranks)
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
			       int ranks2[])
{
	static const char F[] = "MPI_Group_translate_ranks";
	MPIL_CS_GUARD();
	int *map;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_group(NULL, group1, F));
	MPIL_CHECK(mpil_check_group(NULL, group2, F));
	if (n < 0)
		return mpil_err(NULL, MPI_ERR_ARG, F, "negative n %d", n);
	if (n > 0 && (!ranks1 || !ranks2))
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL", ranks1 ? "ranks2" : "ranks1");
	for (int i = 0; i < n; i++)
		if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= group1->size))
			return mpil_err(NULL, MPI_ERR_RANK, F,
					"ranks1[%d] = %d is not a rank of group1 (size %d)", i,
					ranks1[i], group1->size);
	map = rank_map(group2);
	if (!map)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory");
	for (int i = 0; i < n; i++) {
		if (ranks1[i] == MPI_PROC_NULL) {
			ranks2[i] = MPI_PROC_NULL;
		} else {
			int r = map[group1->world[ranks1[i]]];

			ranks2[i] = r < 0 ? MPI_UNDEFINED : r;
		}
	}
	free(map);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Group_compare)
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
	static const char F[] = "MPI_Group_compare";
	MPIL_CS_GUARD();
	bool same_order = true;
	int *map;

	MPIL_CHECK(check_two(group1, group2, result, F));
	if (group1->size != group2->size) {
		*result = MPI_UNEQUAL;
		return MPI_SUCCESS;
	}
	map = rank_map(group2);
	if (!map)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory");
	*result = MPI_IDENT;
	for (int r = 0; r < group1->size; r++) {
		int r2 = map[group1->world[r]];

		if (r2 < 0) {
			*result = MPI_UNEQUAL;
			break;
		}
		same_order = same_order && r2 == r;
	}
	if (*result != MPI_UNEQUAL && !same_order)
		*result = MPI_SIMILAR;
	free(map);
	return MPI_SUCCESS;
}

/* ---- set operations --------------------------------------------------------------------- */

enum set_op { SET_UNION, SET_INTERSECTION, SET_DIFFERENCE };

static int set_op(MPI_Group g1, MPI_Group g2, enum set_op op, MPI_Group *newgroup,
		  const char *fname)
{
	int *map, *out, n = 0, err;

	MPIL_CHECK(check_two(g1, g2, newgroup, fname));
	map = rank_map(g1);
	out = malloc(((size_t)g1->size + (size_t)g2->size + 1) * sizeof(int));
	if (!map || !out) {
		free(map);
		free(out);
		return mpil_err(NULL, MPI_ERR_NO_MEM, fname, "no memory");
	}
	/* map[w] >= 0: w is in g1; mark the ones of g2 too (-2 - rank in g1) */
	for (int r = 0; r < g2->size; r++) {
		int w = g2->world[r];

		if (map[w] >= 0)
			map[w] = -2 - map[w];
	}
	for (int r = 0; r < g1->size; r++) {
		bool in2 = map[g1->world[r]] <= -2;

		if (op == SET_UNION || (op == SET_INTERSECTION) == in2)
			out[n++] = g1->world[r];
	}
	if (op == SET_UNION)
		for (int r = 0; r < g2->size; r++)
			if (map[g2->world[r]] == -1)
				out[n++] = g2->world[r];
	err = group_result(n, out, newgroup, fname);
	free(map);
	free(out);
	return err;
}

MPIL_PMPI_ALIAS(Group_union)
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	MPIL_CS_GUARD();
	return set_op(group1, group2, SET_UNION, newgroup, "MPI_Group_union");
}

MPIL_PMPI_ALIAS(Group_intersection)
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	MPIL_CS_GUARD();
	return set_op(group1, group2, SET_INTERSECTION, newgroup, "MPI_Group_intersection");
}

MPIL_PMPI_ALIAS(Group_difference)
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	MPIL_CS_GUARD();
	return set_op(group1, group2, SET_DIFFERENCE, newgroup, "MPI_Group_difference");
}

/* ---- subsets ---------------------------------------------------------------------------- */

/* Checks that ranks[0..n) are distinct ranks of @g. */
static int check_rank_list(MPI_Group g, int n, const int *ranks, const char *fname)
{
	bool *seen;

	if (n < 0 || n > g->size)
		return mpil_err(NULL, MPI_ERR_ARG, fname, "n = %d (group size %d)", n, g->size);
	if (n > 0 && !ranks)
		return mpil_err(NULL, MPI_ERR_ARG, fname, "ranks is NULL");
	seen = calloc((size_t)g->size + 1, sizeof(bool));
	if (!seen)
		return mpil_err(NULL, MPI_ERR_NO_MEM, fname, "no memory");
	for (int i = 0; i < n; i++) {
		int r = ranks[i];

		if (r < 0 || r >= g->size || seen[r]) {
			free(seen);
			return mpil_err(
			    NULL, MPI_ERR_RANK, fname, "ranks[%d] = %d is %s (group size %d)", i, r,
			    r < 0 || r >= g->size ? "not a rank of the group" : "listed twice",
			    g->size);
		}
		seen[r] = true;
	}
	free(seen);
	return MPI_SUCCESS;
}

static int group_incl(MPI_Group group, int n, const int *ranks, MPI_Group *newgroup,
		      const char *fname)
{
	int *world, err;

	MPIL_CHECK(check_rank_list(group, n, ranks, fname));
	world = malloc(((size_t)n + 1) * sizeof(int));
	if (!world)
		return mpil_err(NULL, MPI_ERR_NO_MEM, fname, "no memory");
	for (int i = 0; i < n; i++)
		world[i] = group->world[ranks[i]];
	err = group_result(n, world, newgroup, fname);
	free(world);
	return err;
}

static int group_excl(MPI_Group group, int n, const int *ranks, MPI_Group *newgroup,
		      const char *fname)
{
	int *world, m = 0, err;
	bool *out;

	MPIL_CHECK(check_rank_list(group, n, ranks, fname));
	world = malloc(((size_t)group->size + 1) * sizeof(int));
	out = calloc((size_t)group->size + 1, sizeof(bool));
	if (!world || !out) {
		free(world);
		free(out);
		return mpil_err(NULL, MPI_ERR_NO_MEM, fname, "no memory");
	}
	for (int i = 0; i < n; i++)
		out[ranks[i]] = true;
	for (int r = 0; r < group->size; r++)
		if (!out[r])
			world[m++] = group->world[r];
	err = group_result(m, world, newgroup, fname);
	free(world);
	free(out);
	return err;
}

static int check_one(MPI_Group group, MPI_Group *newgroup, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	MPIL_CHECK(mpil_check_group(NULL, group, fname));
	if (!newgroup)
		return mpil_err(NULL, MPI_ERR_ARG, fname, "newgroup is NULL");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Group_incl)
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	static const char F[] = "MPI_Group_incl";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_one(group, newgroup, F));
	return group_incl(group, n, ranks, newgroup, F);
}

MPIL_PMPI_ALIAS(Group_excl)
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	static const char F[] = "MPI_Group_excl";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_one(group, newgroup, F));
	return group_excl(group, n, ranks, newgroup, F);
}

/* The ranks that triplets (first, last, stride) name, in order; *n_p of
 * them in a malloc'ed array. */
static int expand_ranges(MPI_Group group, int n, int ranges[][3], int **ranks_p, int *n_p,
			 const char *fname)
{
	int64_t total = 0;
	int *ranks, k = 0;

	if (n < 0)
		return mpil_err(NULL, MPI_ERR_ARG, fname, "negative n %d", n);
	if (n > 0 && !ranges)
		return mpil_err(NULL, MPI_ERR_ARG, fname, "ranges is NULL");
	for (int i = 0; i < n; i++) {
		int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];

		if (stride == 0 || first < 0 || first >= group->size || last < 0 ||
		    last >= group->size)
			return mpil_err(NULL, stride == 0 ? MPI_ERR_ARG : MPI_ERR_RANK, fname,
					"range %d = (%d, %d, %d) (group size %d)", i, first, last,
					stride, group->size);
		if ((stride > 0 && first > last) || (stride < 0 && first < last))
			continue;
		total += ((int64_t)last - first) / stride + 1;
		if (total > group->size)
			return mpil_err(NULL, MPI_ERR_RANK, fname,
					"the ranges name more ranks than the group has (%d)",
					group->size);
	}
	ranks = malloc(((size_t)total + 1) * sizeof(int));
	if (!ranks)
		return mpil_err(NULL, MPI_ERR_NO_MEM, fname, "no memory");
	for (int i = 0; i < n; i++) {
		int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];

		for (int64_t r = first; stride > 0 ? r <= last : r >= last; r += stride)
			ranks[k++] = (int)r;
	}
	*ranks_p = ranks;
	*n_p = k;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Group_range_incl)
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
	static const char F[] = "MPI_Group_range_incl";
	MPIL_CS_GUARD();
	int *ranks, k, err;

	MPIL_CHECK(check_one(group, newgroup, F));
	MPIL_CHECK(expand_ranges(group, n, ranges, &ranks, &k, F));
	err = group_incl(group, k, ranks, newgroup, F);
	free(ranks);
	return err;
}

MPIL_PMPI_ALIAS(Group_range_excl)
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
	static const char F[] = "MPI_Group_range_excl";
	MPIL_CS_GUARD();
	int *ranks, k, err;

	MPIL_CHECK(check_one(group, newgroup, F));
	MPIL_CHECK(expand_ranges(group, n, ranges, &ranks, &k, F));
	err = group_excl(group, k, ranks, newgroup, F);
	free(ranks);
	return err;
}

MPIL_PMPI_ALIAS(Group_free)
int PMPI_Group_free(MPI_Group *group)
{
	static const char F[] = "MPI_Group_free";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (!group)
		return mpil_err(NULL, MPI_ERR_ARG, F, "group is NULL");
	MPIL_CHECK(mpil_check_group(NULL, *group, F));
	mpil_group_release(*group);
	*group = MPI_GROUP_NULL;
	return MPI_SUCCESS;
}
