/* ibx-test: np=1,2,3,4,6 timeout=180 */
/*
 * comm_idup — MPI_Comm_idup and MPI_Comm_idup_with_info are nonblocking:
 *
 *  - the duplicate is congruent, isolated from its parent (rings with the
 *    same tag on both at once), inherits attributes through their copy
 *    callback and the error handler, not the name; _with_info gives the
 *    caller's hints;
 *  - a member returns from the call before the others have made theirs:
 *    every rank but 0 starts its idup, then sends to rank 0, which only
 *    calls its own idup once all have arrived (a blocking agreement
 *    deadlocks here);
 *  - overlapping creations in different orders: each rank dups the pair
 *    communicators {r, r+1} and {r-1, r}, which form a cycle (with
 *    MPI_Comm_dup this deadlocks), and even ranks make a blocking
 *    MPI_Comm_create_group / MPI_Comm_split before their idup while odd
 *    ranks make it after;
 *  - many at once on one parent, interleaved with MPI_Ibarrier and
 *    MPI_Iallreduce, and rounds of idups on two overlapping communicators
 *    mixed with blocking MPI_Comm_dup on the world: every communicator a
 *    process holds at once has its own context (rings across all of them
 *    with MPI_ANY_SOURCE / MPI_ANY_TAG catch a shared one);
 *  - argument errors.
 */
#include "mpitest.h"

#include <stdbool.h>

static int rank, size;

/* ---- what the duplicate is ------------------------------------------------------------------ */

static int copies; /* calls of the copy callback */

static int copy_fn(MPI_Comm c, int keyval, void *extra, void *in, void *out, int *flag)
{
	copies++;
	*(void **)out = (char *)in + 1;
	*flag = 1;
	return MPI_SUCCESS;
}

static void test_basic(void)
{
	static char val[4];
	MPI_Comm d = MPI_COMM_NULL, parent;
	MPI_Request rq;
	MPI_Status st;
	int key, flag, cmp, len;
	void *got;
	char name[MPI_MAX_OBJECT_NAME];

	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
	MPI_OK(MPI_Comm_set_name(parent, "parent"));
	MPI_OK(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL));
	MPI_OK(MPI_Comm_set_attr(parent, key, val));
	copies = 0;
	MPI_OK(MPI_Comm_idup(parent, &d, &rq));
	CHECK(rq != MPI_REQUEST_NULL, "no request");
	MPI_OK(MPI_Wait(&rq, &st));
	CHECK(rq == MPI_REQUEST_NULL, "MPI_Wait did not free the request");
	CHECK(d != MPI_COMM_NULL, "no communicator after completion");
	MPI_OK(MPI_Comm_compare(parent, d, &cmp));
	CHECK(cmp == MPI_CONGRUENT, "compare: %d", cmp);
	CHECK(copies == 1, "copy callback called %d times", copies);
	MPI_OK(MPI_Comm_get_attr(d, key, &got, &flag));
	CHECK(flag && got == val + 1, "attribute not copied (flag %d)", flag);
	MPI_OK(MPI_Comm_get_name(d, name, &len));
	CHECK(len == 0, "the duplicate is named \"%s\"", name);
	{
		MPI_Comm cs[2] = {parent, d};
		int ids[2] = {1, 2};

		mt_rings(2, cs, ids);
	}
	MPI_OK(MPI_Comm_free(&d));
	MPI_OK(MPI_Comm_free_keyval(&key));
	MPI_OK(MPI_Comm_free(&parent));
}

static void test_with_info(void)
{
	MPI_Info info, got;
	MPI_Comm d;
	MPI_Request rq;
	char v[MPI_MAX_INFO_VAL];
	int flag;

	MPI_OK(MPI_Info_create(&info));
	MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
	MPI_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &d, &rq));
	MPI_OK(MPI_Info_free(&info)); /* the call copied it */
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	MPI_OK(MPI_Comm_get_info(d, &got));
	MPI_OK(MPI_Info_get(got, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL - 1, v, &flag));
	CHECK(flag && strcmp(v, "true") == 0, "hint lost (flag %d)", flag);
	MPI_OK(MPI_Info_free(&got));
	MPI_OK(MPI_Barrier(d));
	MPI_OK(MPI_Comm_free(&d));
}

/* ---- nonblocking -------------------------------------------------------------------------- */

/* Rank 0 makes its call only after everyone else has returned from theirs. */
static void test_returns_early(void)
{
	MPI_Comm d;
	MPI_Request rq;
	int token = rank;

	if (rank == 0) {
		for (int i = 1; i < size; i++)
			MPI_OK(
			    MPI_Recv(&token, 1, MPI_INT, i, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
	} else {
		MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
		MPI_OK(MPI_Send(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD));
	}
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	MPI_OK(MPI_Barrier(d));
	MPI_OK(MPI_Comm_free(&d));
}

/* The communicator of the pair {lo, lo + 1 mod size} (MPI_COMM_NULL
 * elsewhere): made for every lo in turn. */
static void make_pairs(MPI_Comm *mine_lo, MPI_Comm *mine_hi)
{
	*mine_lo = *mine_hi = MPI_COMM_NULL;
	for (int lo = 0; lo < size; lo++) {
		int hi = (lo + 1) % size;
		bool in = rank == lo || rank == hi;
		MPI_Comm c;

		MPI_OK(
		    MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, rank == lo ? 0 : 1, &c));
		if (rank == lo)
			*mine_lo = c; /* the pair where I am the lower */
		else if (rank == hi)
			*mine_hi = c;
		else
			CHECK(c == MPI_COMM_NULL, "split gave a communicator to an outsider");
	}
}

static void test_overlap(void)
{
	MPI_Comm lo, hi, dlo, dhi;
	MPI_Request rq[2];

	if (size < 3)
		return; /* the pairs form no cycle */
	make_pairs(&lo, &hi);
	MPI_OK(MPI_Comm_idup(lo, &dlo, &rq[0]));
	MPI_OK(MPI_Comm_idup(hi, &dhi, &rq[1]));
	MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
	{
		/* a pair's id is its lower rank's: the same at both members */
		int below = (rank - 1 + size) % size;
		MPI_Comm cs[4] = {lo, hi, dlo, dhi};
		int ids[4] = {100 + rank, 100 + below, 200 + rank, 200 + below};

		mt_rings(4, cs, ids);
	}
	MPI_OK(MPI_Comm_free(&dlo));
	MPI_OK(MPI_Comm_free(&dhi));
	MPI_OK(MPI_Comm_free(&lo));
	MPI_OK(MPI_Comm_free(&hi));
}

/* Blocking creations before the idup on even ranks, after it on odd. */
static void test_blocking_between(void)
{
	MPI_Group wg;
	MPI_Comm grp, spl, d;
	MPI_Request rq;

	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	if (rank % 2 == 0) {
		MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, wg, 3, &grp));
		MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &spl));
		MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
	} else {
		MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
		MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, wg, 3, &grp));
		MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &spl));
	}
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	{
		MPI_Comm cs[4] = {MPI_COMM_WORLD, grp, spl, d};
		int ids[4] = {20, 21, 22, 23};

		mt_rings(4, cs, ids);
	}
	MPI_OK(MPI_Group_free(&wg));
	MPI_OK(MPI_Comm_free(&grp));
	MPI_OK(MPI_Comm_free(&spl));
	MPI_OK(MPI_Comm_free(&d));
}

#define MANY 12

/* Many idups on one parent, with other nonblocking collectives among them. */
static void test_many(void)
{
	MPI_Comm d[MANY], cs[MANY + 1];
	MPI_Request rq[2 * MANY];
	int in[MANY], out[MANY], ids[MANY + 1];

	for (int i = 0; i < MANY; i++) {
		in[i] = rank + i;
		if (i % 2)
			MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[2 * i]));
		else
			MPI_OK(MPI_Iallreduce(&in[i], &out[i], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
					      &rq[2 * i]));
		MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[i], &rq[2 * i + 1]));
	}
	MPI_OK(MPI_Waitall(2 * MANY, rq, MPI_STATUSES_IGNORE));
	for (int i = 0; i < MANY; i += 2)
		CHECK(out[i] == size * (size - 1) / 2 + size * i, "iallreduce %d: %d", i, out[i]);
	cs[0] = MPI_COMM_WORLD;
	ids[0] = 30;
	for (int i = 0; i < MANY; i++) {
		cs[i + 1] = d[i];
		ids[i + 1] = 31 + i;
	}
	mt_rings(MANY + 1, cs, ids);
	for (int i = 0; i < MANY; i++)
		MPI_OK(MPI_Comm_free(&d[i]));
}

/*
 * Rounds of: idups of two overlapping communicators (the halves [0, n/2]
 * and [n/2, n): the middle rank is in both) and a blocking dup of the
 * world while they are under way, the blocking one first on some ranks
 * and last on others. Agreements of one process then pick ids while
 * others of the same process are under way; everything made in a round
 * is checked for distinct contexts before it is freed.
 */
static void test_mixed_rounds(void)
{
	int mid = size / 2;
	MPI_Comm a, b;

	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank <= mid ? 0 : MPI_UNDEFINED, rank, &a));
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank >= mid ? 0 : MPI_UNDEFINED, rank, &b));
	for (int round = 0; round < 60; round++) {
		MPI_Comm made[3], cs[6];
		MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
		int n = 0, ids[6];
		bool first = (rank + round) % 2;

		made[0] = made[1] = MPI_COMM_NULL;
		if (first)
			MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &made[2]));
		if (a != MPI_COMM_NULL)
			MPI_OK(MPI_Comm_idup(a, &made[0], &rq[0]));
		if (b != MPI_COMM_NULL)
			MPI_OK(MPI_Comm_idup(b, &made[1], &rq[1]));
		if (!first)
			MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &made[2]));
		MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
		cs[n] = MPI_COMM_WORLD, ids[n++] = 40;
		if (a != MPI_COMM_NULL)
			cs[n] = a, ids[n++] = 41;
		if (b != MPI_COMM_NULL)
			cs[n] = b, ids[n++] = 42;
		for (int i = 0; i < 3; i++)
			if (made[i] != MPI_COMM_NULL)
				cs[n] = made[i], ids[n++] = 43 + i;
		mt_rings(n, cs, ids);
		for (int i = 0; i < 3; i++)
			if (made[i] != MPI_COMM_NULL)
				MPI_OK(MPI_Comm_free(&made[i]));
	}
	if (a != MPI_COMM_NULL)
		MPI_OK(MPI_Comm_free(&a));
	if (b != MPI_COMM_NULL)
		MPI_OK(MPI_Comm_free(&b));
}

/* ---- errors --------------------------------------------------------------------------------- */

static void test_errors(void)
{
	MPI_Comm d;
	MPI_Request rq;

	MPI_FAILS(MPI_ERR_COMM, MPI_Comm_idup(MPI_COMM_NULL, &d, &rq));
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_idup(MPI_COMM_WORLD, NULL, &rq));
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_idup(MPI_COMM_WORLD, &d, NULL));
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, NULL, &rq));
	/* a failed call took no collective number: the next one still matches */
	MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	MPI_OK(MPI_Barrier(d));
	MPI_OK(MPI_Comm_free(&d));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	test_errors();
	test_basic();
	test_with_info();
	test_returns_early();
	test_overlap();
	test_blocking_between();
	test_many();
	test_mixed_rounds();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("comm_idup: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
