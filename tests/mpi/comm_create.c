/* ibx-test: np=1,2,3,4 timeout=120 */
/*
 * comm_create — communicator creation and what the new communicators do:
 * MPI_Comm_dup (congruent, isolated from its parent, inherits the error
 * handler, not the name), MPI_Comm_split (key order, ties by parent rank,
 * MPI_UNDEFINED gives MPI_COMM_NULL), MPI_Comm_split_type(SHARED) (the
 * processes of one node), MPI_Comm_create and MPI_Comm_create_group,
 * MPI_Comm_compare in all four outcomes, communication on every new
 * communicator with the same tags as on the others (a context id shared
 * by two communicators of one process would mix them up), creations
 * interleaved on overlapping communicators, thousands of create/free
 * cycles (context ids are recycled), and freeing.
 */
#include "mpitest.h"

#include <stdbool.h>

static int rank, size;

static int compare(MPI_Comm a, MPI_Comm b)
{
	int r;

	MPI_OK(MPI_Comm_compare(a, b, &r));
	return r;
}

static void test_dup(void)
{
	MPI_Comm d, dd;
	MPI_Errhandler eh;
	int r, s, len;
	char name[MPI_MAX_OBJECT_NAME];

	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
	MPI_OK(MPI_Comm_rank(d, &r));
	MPI_OK(MPI_Comm_size(d, &s));
	CHECK(r == rank && s == size, "dup: rank %d size %d", r, s);
	CHECK(compare(MPI_COMM_WORLD, MPI_COMM_WORLD) == MPI_IDENT, "world vs world");
	CHECK(compare(MPI_COMM_WORLD, d) == MPI_CONGRUENT, "world vs dup: %d",
	      compare(MPI_COMM_WORLD, d));
	/* the error handler is inherited (world's is ERRORS_RETURN here), the name not */
	MPI_OK(MPI_Comm_get_errhandler(d, &eh));
	CHECK(eh == MPI_ERRORS_RETURN, "dup did not inherit the error handler");
	MPI_OK(MPI_Errhandler_free(&eh));
	MPI_OK(MPI_Comm_get_name(d, name, &len));
	CHECK(len == 0 && name[0] == '\0', "dup is named \"%s\"", name);
	MPI_OK(MPI_Comm_set_name(d, "my dup"));
	MPI_OK(MPI_Comm_get_name(d, name, &len));
	CHECK(strcmp(name, "my dup") == 0 && len == 6, "name \"%s\"", name);
	MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
	CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "world's name \"%s\"", name);

	/* a dup of a dup, and all three used at once with the same tag */
	MPI_OK(MPI_Comm_dup(d, &dd));
	CHECK(compare(d, dd) == MPI_CONGRUENT, "dup vs dup of dup");
	{
		MPI_Comm cs[3] = {MPI_COMM_WORLD, d, dd};
		int ids[3] = {100, 101, 102};

		mt_rings(3, cs, ids);
	}
	/* collectives on the dup */
	{
		int v = rank + 1, sum = 0;

		MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, dd));
		CHECK(sum == size * (size + 1) / 2, "allreduce on dup: %d", sum);
		MPI_OK(MPI_Barrier(d));
	}
	MPI_OK(MPI_Comm_free(&dd));
	CHECK(dd == MPI_COMM_NULL, "Comm_free did not reset the handle");
	MPI_OK(MPI_Comm_free(&d));
}

static void test_split(void)
{
	MPI_Comm half, undef, same;
	int r, s, color = rank % 2;

	/* reverse order by key */
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, -rank, &half));
	MPI_OK(MPI_Comm_rank(half, &r));
	MPI_OK(MPI_Comm_size(half, &s));
	{
		int members = (size - color + 1) / 2; /* ranks with my parity */
		int higher = 0;			      /* same parity, higher rank */

		for (int k = rank + 2; k < size; k += 2)
			higher++;
		CHECK(s == members && r == higher, "split: rank %d of %d, expected %d of %d", r, s,
		      higher, members);
	}
	{
		/* translate: my split rank r is world rank... check via a
		 * message to split rank 0 */
		int v = rank, got = -1;

		if (r == 0) {
			for (int i = 1; i < s; i++) {
				MPI_Status st;

				MPI_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 3, half, &st));
				CHECK(got % 2 == color, "split message from world rank %d", got);
				/* split rank i is the i-th highest world rank of my parity */
				CHECK(got == rank - 2 * st.MPI_SOURCE,
				      "split rank %d is world rank %d", st.MPI_SOURCE, got);
			}
		} else {
			MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 3, half));
		}
	}
	if (size > 1)
		CHECK(compare(MPI_COMM_WORLD, half) == MPI_UNEQUAL, "world vs half");

	/* the last rank opts out */
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == size - 1 ? MPI_UNDEFINED : 0, 0, &undef));
	if (rank == size - 1) {
		CHECK(undef == MPI_COMM_NULL, "MPI_UNDEFINED color gave a communicator");
	} else {
		MPI_OK(MPI_Comm_size(undef, &s));
		MPI_OK(MPI_Comm_rank(undef, &r));
		CHECK(s == size - 1 && r == rank, "split without the last: %d of %d", r, s);
	}

	/* one color, equal keys: parent order, congruent */
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 5, 0, &same));
	CHECK(compare(MPI_COMM_WORLD, same) == MPI_CONGRUENT, "one-color split");
	/* reversed keys, one color: same members, other order */
	{
		MPI_Comm rev;

		MPI_OK(MPI_Comm_split(same, 1, size - rank, &rev));
		CHECK(compare(same, rev) == (size > 1 ? MPI_SIMILAR : MPI_CONGRUENT),
		      "reversed split: %d", compare(same, rev));
		{
			MPI_Comm cs[4] = {MPI_COMM_WORLD, same, rev, half};
			int ids[4] = {200, 201, 202, 203};

			mt_rings(4, cs, ids);
		}
		MPI_OK(MPI_Comm_free(&rev));
	}
	if (undef != MPI_COMM_NULL) {
		int id = 300;

		mt_rings(1, &undef, &id);
		MPI_OK(MPI_Comm_free(&undef));
	}
	MPI_OK(MPI_Comm_free(&same));
	MPI_OK(MPI_Comm_free(&half));
}

static void test_split_type(void)
{
	MPI_Comm node, none;
	char me[MPI_MAX_PROCESSOR_NAME], other[MPI_MAX_PROCESSOR_NAME];
	int len, r, s;

	MPI_OK(
	    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
	MPI_OK(MPI_Comm_rank(node, &r));
	MPI_OK(MPI_Comm_size(node, &s));
	CHECK(s >= 1 && s <= size, "node communicator of size %d", s);
	/* everyone in it runs on my host: each sends its name to node rank 0 */
	MPI_OK(MPI_Get_processor_name(me, &len));
	if (r == 0) {
		for (int i = 1; i < s; i++) {
			MPI_OK(MPI_Recv(other, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, i, 4, node,
					MPI_STATUS_IGNORE));
			CHECK(strcmp(me, other) == 0, "node rank %d is on %s, not %s", i, other,
			      me);
		}
	} else {
		MPI_OK(MPI_Send(me, len + 1, MPI_CHAR, 0, 4, node));
	}
	/* and everyone on my host is in it: count the world ranks with my name */
	{
		int same_host = 0;

		for (int root = 0; root < size; root++) {
			memcpy(other, me, sizeof(me));
			MPI_OK(MPI_Bcast(other, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, root,
					 MPI_COMM_WORLD));
			same_host += strcmp(other, me) == 0;
		}
		CHECK(same_host == s, "%d ranks on this host, node communicator has %d", same_host,
		      s);
	}
	/* keys: rank order kept */
	if (s == size)
		CHECK(r == rank, "node rank %d, world rank %d", r, rank);
	MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none));
	CHECK(none == MPI_COMM_NULL, "split_type MPI_UNDEFINED gave a communicator");
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &none));
	MPI_OK(MPI_Comm_free(&node));
}

static void test_create(void)
{
	MPI_Group wg, evens, odds_rev;
	MPI_Comm ce, cg = MPI_COMM_NULL;
	int n = (size + 1) / 2, *ranks = malloc(sizeof(int) * (size_t)size), r, s;

	CHECK(ranks, "out of memory");
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	for (int i = 0; i < n; i++)
		ranks[i] = 2 * i;
	MPI_OK(MPI_Group_incl(wg, n, ranks, &evens));
	MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, evens, &ce));
	if (rank % 2) {
		CHECK(ce == MPI_COMM_NULL, "odd rank got a communicator from Comm_create");
	} else {
		MPI_OK(MPI_Comm_rank(ce, &r));
		MPI_OK(MPI_Comm_size(ce, &s));
		CHECK(r == rank / 2 && s == n, "create: rank %d of %d", r, s);
	}
	/* odd ranks, highest first, by MPI_Comm_create_group: only they call */
	for (int i = 0; i < size / 2; i++)
		ranks[i] = size - 1 - (size % 2) - 2 * i;
	MPI_OK(MPI_Group_incl(wg, size / 2, ranks, &odds_rev));
	if (rank % 2) {
		MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, odds_rev, 9, &cg));
		MPI_OK(MPI_Comm_rank(cg, &r));
		MPI_OK(MPI_Comm_size(cg, &s));
		CHECK(s == size / 2 && ranks[r] == rank, "create_group: rank %d of %d", r, s);
	}
	/* each half talks on its own communicator, and all on the world */
	{
		MPI_Comm cs[2] = {MPI_COMM_WORLD, rank % 2 ? cg : ce};
		int ids[2] = {400, 401 + rank % 2};

		mt_rings(2, cs, ids);
	}
	if (ce != MPI_COMM_NULL)
		MPI_OK(MPI_Comm_free(&ce));
	if (cg != MPI_COMM_NULL)
		MPI_OK(MPI_Comm_free(&cg));
	MPI_OK(MPI_Group_free(&evens));
	MPI_OK(MPI_Group_free(&odds_rev));
	MPI_OK(MPI_Group_free(&wg));
	free(ranks);
}

/*
 * Overlapping communicators created in interleaved order: P = ranks
 * {0, 1, 2} and Q = ranks {1, 2, 3} (with 4 ranks) by create_group (only
 * members call), then a dup of each; ranks 1 and 2 belong to all four and
 * exchange on all at once with the same tag.
 */
static void test_interleaved(void)
{
	MPI_Group wg, gp, gq;
	MPI_Comm p = MPI_COMM_NULL, q = MPI_COMM_NULL, pd = MPI_COMM_NULL, qd = MPI_COMM_NULL;
	int pr[3], qr[3], np = size >= 3 ? 3 : size;

	for (int i = 0; i < np; i++) {
		pr[i] = i;
		qr[i] = size >= 4 ? i + 1 : i;
	}
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	MPI_OK(MPI_Group_incl(wg, np, pr, &gp));
	MPI_OK(MPI_Group_incl(wg, np, qr, &gq));
	/* members of both create P first, then Q; the others only theirs */
	if (rank < np)
		MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, gp, 1, &p));
	if (rank >= qr[0] && rank <= qr[np - 1])
		MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, gq, 2, &q));
	if (p != MPI_COMM_NULL)
		MPI_OK(MPI_Comm_dup(p, &pd));
	if (q != MPI_COMM_NULL)
		MPI_OK(MPI_Comm_dup(q, &qd));
	{
		MPI_Comm cs[4];
		int ids[4], n = 0;

		if (p != MPI_COMM_NULL)
			cs[n] = p, ids[n++] = 500;
		if (q != MPI_COMM_NULL)
			cs[n] = q, ids[n++] = 501;
		if (pd != MPI_COMM_NULL)
			cs[n] = pd, ids[n++] = 502;
		if (qd != MPI_COMM_NULL)
			cs[n] = qd, ids[n++] = 503;
		mt_rings(n, cs, ids);
	}
	if (p != MPI_COMM_NULL && q != MPI_COMM_NULL)
		CHECK(compare(p, q) == (size >= 4 ? MPI_UNEQUAL : MPI_CONGRUENT), "P vs Q: %d",
		      compare(p, q));
	MPI_Comm *all[4] = {&p, &q, &pd, &qd};

	for (int i = 0; i < 4; i++)
		if (*all[i] != MPI_COMM_NULL)
			MPI_OK(MPI_Comm_free(all[i]));
	MPI_OK(MPI_Group_free(&gp));
	MPI_OK(MPI_Group_free(&gq));
	MPI_OK(MPI_Group_free(&wg));
}

/* More create/free cycles than there are context ids. */
static void test_many(void)
{
	MPI_Comm keep[16], c;

	for (int i = 0; i < 16; i++)
		MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &keep[i]));
	for (int i = 0; i < 2500; i++) {
		MPI_OK(MPI_Comm_split(keep[i % 16], 0, rank, &c));
		MPI_OK(MPI_Comm_free(&c));
	}
	mt_rings(16, keep,
		 (int[16]){600, 601, 602, 603, 604, 605, 606, 607, 608, 609, 610, 611, 612, 613,
			   614, 615});
	for (int i = 0; i < 16; i++)
		MPI_OK(MPI_Comm_free(&keep[i]));
}

static void test_errors(void)
{
	MPI_Comm c, stale, w = MPI_COMM_WORLD, nul = MPI_COMM_NULL;
	int r;

	MPI_FAILS(MPI_ERR_COMM, MPI_Comm_free(&w));
	MPI_FAILS(MPI_ERR_COMM, MPI_Comm_free(&nul));
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_free(NULL));
	MPI_FAILS(MPI_ERR_COMM, MPI_Comm_dup(MPI_COMM_NULL, &c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_dup(MPI_COMM_WORLD, NULL));
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &c));
	MPI_FAILS(MPI_ERR_GROUP, MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c));
	MPI_FAILS(MPI_ERR_COMM, MPI_Comm_compare(MPI_COMM_NULL, MPI_COMM_WORLD, &r));
	MPI_OK(MPI_Comm_dup(MPI_COMM_SELF, &c));
	CHECK(compare(MPI_COMM_SELF, c) == MPI_CONGRUENT, "dup of self");
	stale = c;
	MPI_OK(MPI_Comm_free(&c));
	MPI_FAILS(MPI_ERR_COMM, MPI_Comm_rank(stale, &r));
	MPI_FAILS(MPI_ERR_COMM, MPI_Send(&r, 1, MPI_INT, 0, 0, stale));
	MPI_FAILS(MPI_ERR_COMM, MPI_Comm_free(&stale));
	/* a communicator freed while a receive on it is pending: the
	 * receive still completes */
	{
		MPI_Request rq;
		int v = -1, x = 42 + rank;

		MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
		MPI_OK(MPI_Irecv(&v, 1, MPI_INT, rank, 5, c, &rq));
		MPI_OK(MPI_Send(&x, 1, MPI_INT, rank, 5, c));
		MPI_OK(MPI_Comm_free(&c));
		MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
		CHECK(v == 42 + rank, "receive on a freed communicator got %d", v);
	}
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	test_dup();
	test_split();
	test_split_type();
	test_create();
	test_interleaved();
	test_many();
	test_errors();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("comm_create: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
