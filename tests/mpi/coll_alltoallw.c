/* ibx-test: np=1,2,3,4,5 timeout=120 */
/*
 * coll_alltoallw — MPI_Alltoallw with a different count, datatype and
 * byte displacement for every peer (contiguous ints, strided vectors,
 * indexed types that reverse the order, empty blocks whose type is
 * MPI_DATATYPE_NULL), out of place and in place; MPI_Reduce_scatter with
 * varying counts (zero included), out of place and in place, on MPI_INT
 * and on MPI_CHAR; MPI_Reduce_scatter_block; and the reductions on
 * MPI_CHAR that Open MPI and MPICH accept (an mpi-lite extension).
 */
#include "mpitest.h"

static int rank, size;

/* Elements rank @s sends rank @d: 0 when (s + d) % 4 == 3, for both
 * directions alike. */
static int wcount(int s, int d)
{
	return (s + d) % 4 == 3 ? 0 : 1 + (s + d) % 3;
}

static int wvalue(int s, int d, int e)
{
	return s * 10000 + d * 100 + e;
}

/* The type of the block exchanged with @peer: even peers plain ints,
 * odd ones a vector (send side: every other int) or an indexed type in
 * reverse order (receive side). NULL for an empty block. */
static MPI_Datatype block_type(int peer, int count, int recv, int *nelem)
{
	MPI_Datatype t;

	*nelem = count;
	if (count == 0)
		return MPI_DATATYPE_NULL;
	if (peer % 2 == 0)
		return MPI_INT;
	if (!recv) {
		MPI_OK(MPI_Type_vector(count, 1, 2, MPI_INT, &t));
	} else {
		int bl[4], di[4];

		for (int e = 0; e < count; e++) {
			bl[e] = 1;
			di[e] = count - 1 - e;
		}
		MPI_OK(MPI_Type_indexed(count, bl, di, MPI_INT, &t));
	}
	MPI_OK(MPI_Type_commit(&t));
	*nelem = 1;
	return t;
}

/* Where element @e of a block of @count with @peer sits (in ints from the
 * block start). */
static int slot(int peer, int count, int recv, int e)
{
	if (peer % 2 == 0)
		return e;
	return recv ? count - 1 - e : 2 * e;
}

static void free_types(MPI_Datatype *t, int n)
{
	for (int i = 0; i < n; i++)
		if (t[i] != MPI_DATATYPE_NULL && t[i] != MPI_INT)
			MPI_OK(MPI_Type_free(&t[i]));
}

static void test_alltoallw(int inplace)
{
	enum { STRIDE = 8 }; /* ints per block slot */
	int p = size, *sbuf = malloc(sizeof(int) * STRIDE * p),
	    *rbuf = malloc(sizeof(int) * STRIDE * p);
	int *sc = malloc(sizeof(int) * 4 * p), *rc = sc + p, *sd = sc + 2 * p, *rd = sc + 3 * p;
	MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * 2 * p), *rt = st + p;

	CHECK(sbuf && rbuf && sc && st, "out of memory");
	for (int i = 0; i < STRIDE * p; i++)
		sbuf[i] = rbuf[i] = -1;
	for (int i = 0; i < p; i++) {
		int blk_s = (p - 1 - i) * STRIDE, blk_r = ((i + 1) % p) * STRIDE; /* out of order */
		int n = wcount(rank, i);

		st[i] = block_type(i, n, inplace, &sc[i]);
		sd[i] = blk_s * (int)sizeof(int);
		rt[i] = block_type(i, wcount(i, rank), 1, &rc[i]);
		rd[i] = blk_r * (int)sizeof(int);
		for (int e = 0; e < n; e++) {
			if (inplace) /* what goes out is in the receive layout */
				rbuf[blk_r + slot(i, n, 1, e)] = wvalue(rank, i, e);
			else
				sbuf[blk_s + slot(i, n, 0, e)] = wvalue(rank, i, e);
		}
	}
	if (inplace)
		MPI_OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rbuf, rc, rd, rt,
				     MPI_COMM_WORLD));
	else
		MPI_OK(MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD));
	for (int i = 0; i < p; i++) {
		int n = wcount(i, rank), blk_r = ((i + 1) % p) * STRIDE;

		for (int e = 0; e < n; e++) {
			int got = rbuf[blk_r + slot(i, n, 1, e)];

			CHECK(got == wvalue(i, rank, e),
			      "Alltoallw%s: from %d element %d is %d, expected %d",
			      inplace ? " in place" : "", i, e, got, wvalue(i, rank, e));
		}
	}
	free_types(st, p);
	free_types(rt, p);
	free(st);
	free(sc);
	free(sbuf);
	free(rbuf);
}

/* Rank i gets i % 3 elements (rank 0 none); input element k of rank r is
 * r + k, so the sum at k is p * k + p(p-1)/2. */
static void test_reduce_scatter(int inplace)
{
	int p = size, total = 0, *counts = malloc(sizeof(int) * p), off = 0;
	int *in, *out;

	CHECK(counts, "out of memory");
	for (int i = 0; i < p; i++) {
		counts[i] = i % 3;
		total += counts[i];
	}
	for (int i = 0; i < rank; i++)
		off += counts[i];
	in = malloc(sizeof(int) * (total + 1));
	out = malloc(sizeof(int) * (total + 1));
	CHECK(in && out, "out of memory");
	for (int k = 0; k < total; k++)
		in[k] = rank + k;
	out[counts[rank]] = -7;
	MPI_OK(MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : in, inplace ? in : out, counts, MPI_INT,
				  MPI_SUM, MPI_COMM_WORLD));
	for (int e = 0; e < counts[rank]; e++) {
		int k = off + e, got = inplace ? in[e] : out[e];

		CHECK(got == p * k + p * (p - 1) / 2, "Reduce_scatter%s element %d: %d",
		      inplace ? " in place" : "", e, got);
	}
	if (!inplace)
		CHECK(out[counts[rank]] == -7, "Reduce_scatter wrote past its block");
	free(in);
	free(out);
	free(counts);
}

static void test_char_reductions(void)
{
	char in[5], out[5], rs[2], *blocks = malloc((size_t)size * 2 + 1);
	int p = size, counts[64];

	CHECK(blocks, "out of memory");
	for (int i = 0; i < 5; i++)
		in[i] = (char)(rank + i);
	MPI_OK(MPI_Allreduce(in, out, 5, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD));
	for (int i = 0; i < 5; i++)
		CHECK(out[i] == (char)(p * i + p * (p - 1) / 2), "Allreduce SUM MPI_CHAR [%d] = %d",
		      i, out[i]);
	MPI_OK(MPI_Allreduce(in, out, 5, MPI_CHAR, MPI_MAX, MPI_COMM_WORLD));
	CHECK(out[0] == (char)(p - 1), "Allreduce MAX MPI_CHAR = %d", out[0]);
	MPI_OK(MPI_Allreduce(MPI_IN_PLACE, in, 5, MPI_CHAR, MPI_MIN, MPI_COMM_WORLD));
	CHECK(in[4] == 4, "Allreduce MIN MPI_CHAR in place = %d", in[4]);
	/* Reduce_scatter on MPI_CHAR: two per rank */
	for (int i = 0; i < 2 * p; i++)
		blocks[i] = (char)(i % 7);
	for (int i = 0; i < p && i < 64; i++)
		counts[i] = 2;
	if (p <= 64) {
		MPI_OK(MPI_Reduce_scatter(blocks, rs, counts, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD));
		for (int e = 0; e < 2; e++)
			CHECK(rs[e] == (char)(p * ((2 * rank + e) % 7)),
			      "Reduce_scatter MPI_CHAR [%d] = %d", e, rs[e]);
	}
	free(blocks);
}

static void test_reduce_scatter_block(void)
{
	int p = size, *in = malloc(sizeof(int) * 3 * p), out[3];

	CHECK(in, "out of memory");
	for (int k = 0; k < 3 * p; k++)
		in[k] = k * (rank + 1);
	MPI_OK(MPI_Reduce_scatter_block(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	for (int e = 0; e < 3; e++)
		CHECK(out[e] == (3 * rank + e) * p * (p + 1) / 2, "Reduce_scatter_block [%d] = %d",
		      e, out[e]);
	free(in);
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	test_alltoallw(0);
	test_alltoallw(1);
	test_reduce_scatter(0);
	test_reduce_scatter(1);
	test_reduce_scatter_block();
	test_char_reductions();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("coll_alltoallw: %d ranks OK\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
