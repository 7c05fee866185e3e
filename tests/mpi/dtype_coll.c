/* ibx-test: np=1,2,3,4 timeout=90 */
/*
 * dtype_coll — derived datatypes in the collectives: a strided vector in
 * MPI_Bcast, a padded struct (resized to its C size) in MPI_Gather,
 * MPI_Scatter and MPI_Allgather, a resized "every other int" type in
 * MPI_Alltoall with a different (contiguous) type on the receiving side,
 * and reductions over derived types built from one predefined type
 * (contiguous and vector of MPI_INT with MPI_SUM, a dup of
 * MPI_DOUBLE_INT with MPI_MAXLOC). Gaps in receive buffers must stay
 * untouched.
 */
#include "mpitest.h"

#include <stddef.h>

static int rank, size;

typedef struct item {
	short s;
	double d;
	char c;
} item_t;

static MPI_Datatype item_type(void)
{
	int bl[3] = {1, 1, 1};
	MPI_Aint d[3] = {offsetof(item_t, s), offsetof(item_t, d), offsetof(item_t, c)};
	MPI_Datatype ty[3] = {MPI_SHORT, MPI_DOUBLE, MPI_CHAR}, t, r;

	MPI_OK(MPI_Type_create_struct(3, bl, d, ty, &t));
	MPI_OK(MPI_Type_create_resized(t, 0, sizeof(item_t), &r));
	MPI_OK(MPI_Type_free(&t));
	MPI_OK(MPI_Type_commit(&r));
	return r;
}

static void set_item(item_t *it, int src, int i)
{
	memset(it, 0x33, sizeof(*it)); /* padding marker */
	it->s = (short)(src * 100 + i);
	it->d = src + i / 8.0;
	it->c = (char)('a' + (src * 3 + i) % 26);
}

static void check_item(const item_t *it, int src, int i, const char *what)
{
	item_t want;

	set_item(&want, src, i);
	CHECK(it->s == want.s && it->d == want.d && it->c == want.c,
	      "%s: item %d of rank %d is (%d, %g, %c)", what, i, src, it->s, it->d, it->c);
	CHECK(memcmp((const char *)it + sizeof(short), (const char *)&want + sizeof(short),
		     offsetof(item_t, d) - sizeof(short)) == 0,
	      "%s: item %d of rank %d: padding written", what, i, src);
}

static void test_bcast(void)
{
	MPI_Datatype vec;
	double buf[60];

	MPI_OK(MPI_Type_vector(10, 2, 6, MPI_DOUBLE, &vec));
	MPI_OK(MPI_Type_commit(&vec));
	for (int root = 0; root < size; root++) {
		for (int i = 0; i < 60; i++)
			buf[i] = rank == root ? root * 1000.0 + i : -1;
		MPI_OK(MPI_Bcast(buf, 1, vec, root, MPI_COMM_WORLD));
		for (int i = 0; i < 60; i++) {
			double want = rank == root || i % 6 < 2 ? root * 1000.0 + i : -1;

			if (i >= 56)
				want = rank == root ? root * 1000.0 + i : -1;
			CHECK(buf[i] == want, "bcast from %d: element %d is %g", root, i, buf[i]);
		}
	}
	MPI_OK(MPI_Type_free(&vec));
}

static void test_gather_scatter(void)
{
	enum { N = 5 };
	MPI_Datatype it = item_type();
	item_t mine[N], *all = malloc(sizeof(item_t) * N * (size_t)size);
	int root = size - 1;

	CHECK(all, "out of memory");
	for (int i = 0; i < N; i++)
		set_item(&mine[i], rank, i);
	memset(all, 0x33, sizeof(item_t) * N * (size_t)size);
	MPI_OK(MPI_Gather(mine, N, it, all, N, it, root, MPI_COMM_WORLD));
	if (rank == root)
		for (int r = 0; r < size; r++)
			for (int i = 0; i < N; i++)
				check_item(&all[r * N + i], r, i, "gather");

	/* scatter back, each rank gets the root's block r */
	if (rank == root)
		for (int r = 0; r < size; r++)
			for (int i = 0; i < N; i++)
				set_item(&all[r * N + i], r + 10, i);
	memset(mine, 0x33, sizeof(mine));
	MPI_OK(MPI_Scatter(all, N, it, mine, N, it, root, MPI_COMM_WORLD));
	for (int i = 0; i < N; i++)
		check_item(&mine[i], rank + 10, i, "scatter");

	/* allgather */
	for (int i = 0; i < N; i++)
		set_item(&mine[i], rank, i);
	memset(all, 0x33, sizeof(item_t) * N * (size_t)size);
	MPI_OK(MPI_Allgather(mine, N, it, all, N, it, MPI_COMM_WORLD));
	for (int r = 0; r < size; r++)
		for (int i = 0; i < N; i++)
			check_item(&all[r * N + i], r, i, "allgather");
	MPI_OK(MPI_Type_free(&it));
	free(all);
}

static void test_alltoall(void)
{
	MPI_Datatype every2;
	int *s = malloc(sizeof(int) * 8 * (size_t)size),
	    *r = malloc(sizeof(int) * 4 * (size_t)size);

	CHECK(s && r, "out of memory");
	MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every2));
	MPI_OK(MPI_Type_commit(&every2));
	for (int i = 0; i < 8 * size; i++)
		s[i] = rank * 10000 + i;
	for (int i = 0; i < 4 * size; i++)
		r[i] = -1;
	/* 4 "every other int" elements to each rank, received as 4 ints */
	MPI_OK(MPI_Alltoall(s, 4, every2, r, 4, MPI_INT, MPI_COMM_WORLD));
	for (int src = 0; src < size; src++)
		for (int k = 0; k < 4; k++) {
			int want = src * 10000 + rank * 8 + 2 * k;

			CHECK(r[src * 4 + k] == want,
			      "alltoall from %d, element %d: %d, expected %d", src, k,
			      r[src * 4 + k], want);
		}
	MPI_OK(MPI_Type_free(&every2));
	free(s);
	free(r);
}

static void test_reduce(void)
{
	MPI_Datatype c3, v2, dpair;
	int in[6], out[6];
	struct {
		double v;
		int i;
	} p[2], q[2];

	MPI_OK(MPI_Type_contiguous(3, MPI_INT, &c3));
	MPI_OK(MPI_Type_commit(&c3));
	for (int i = 0; i < 6; i++) {
		in[i] = rank + i;
		out[i] = -1;
	}
	MPI_OK(MPI_Allreduce(in, out, 2, c3, MPI_SUM, MPI_COMM_WORLD));
	for (int i = 0; i < 6; i++)
		CHECK(out[i] == size * (size - 1) / 2 + size * i, "allreduce contiguous %d: %d", i,
		      out[i]);

	/* a vector (gaps stay untouched at the root) */
	MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &v2));
	MPI_OK(MPI_Type_commit(&v2));
	for (int i = 0; i < 6; i++)
		out[i] = -1;
	MPI_OK(MPI_Reduce(in, out, 1, v2, MPI_SUM, 0, MPI_COMM_WORLD));
	if (rank == 0)
		for (int i = 0; i < 5; i++)
			CHECK(out[i] == (i % 2 ? -1 : size * (size - 1) / 2 + size * i),
			      "reduce vector %d: %d", i, out[i]);

	/* MAXLOC on a dup of MPI_DOUBLE_INT */
	MPI_OK(MPI_Type_dup(MPI_DOUBLE_INT, &dpair));
	MPI_OK(MPI_Type_commit(&dpair));
	p[0].v = rank % 2 ? 100.0 : (double)rank;
	p[0].i = rank;
	p[1].v = -rank;
	p[1].i = rank;
	MPI_OK(MPI_Allreduce(p, q, 2, dpair, MPI_MAXLOC, MPI_COMM_WORLD));
	CHECK(q[0].v == (size > 1 ? 100.0 : 0.0) && q[0].i == (size > 1 ? 1 : 0),
	      "maxloc[0] (%g, %d)", q[0].v, q[0].i);
	CHECK(q[1].v == 0.0 && q[1].i == 0, "maxloc[1] (%g, %d)", q[1].v, q[1].i);
	MPI_OK(MPI_Type_free(&c3));
	MPI_OK(MPI_Type_free(&v2));
	MPI_OK(MPI_Type_free(&dpair));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	test_bcast();
	test_gather_scatter();
	test_alltoall();
	test_reduce();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("dtype_coll: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
