/* ibx-test: np=1,2,3,4,5,7 timeout=180 */
/*
 * coll_alltoall — MPI_Alltoall and MPI_Alltoallv: block sizes on both
 * sides of the Bruck/pairwise threshold (0 B to 200 KB), MPI_IN_PLACE,
 * irregular counts and displacements (reversed order, gaps left
 * untouched, empty blocks, blocks of different sizes per pair), a
 * non-contiguous predefined type, and a reversed communicator. Block
 * (i -> j) carries bytes that only i can produce for j, so a block in the
 * wrong place is caught.
 */
#include "mpitest.h"

#include <stdbool.h>

static int rank, size;

/* salt of the block from rank @src to rank @dst */
static int bsalt(int src, int dst, int run)
{
	return dst * 1009 + run * 31 + src;
}

static const size_t blens[] = {0, 1, 8, 255, 256, 257, 1000, 65536, 200000};
#define NBLENS ((int)(sizeof(blens) / sizeof(blens[0])))

static void test_alltoall(MPI_Comm comm, const char *cname)
{
	int me, p;
	unsigned char *sb, *rb;

	MPI_OK(MPI_Comm_rank(comm, &me));
	MPI_OK(MPI_Comm_size(comm, &p));
	sb = malloc(200000 * (size_t)p + 1);
	rb = malloc(200000 * (size_t)p + 1);
	CHECK(sb && rb, "out of memory");
	for (int bi = 0; bi < NBLENS; bi++) {
		size_t b = blens[bi];

		for (int inplace = 0; inplace < 2; inplace++) {
			int run = bi * 2 + inplace;
			unsigned char *src = inplace ? rb : sb;

			memset(rb, 0xee, b * (size_t)p + 1);
			for (int j = 0; j < p; j++)
				mt_fill(src + b * (size_t)j, b, me, bsalt(me, j, run));
			MPI_OK(MPI_Alltoall(inplace ? MPI_IN_PLACE : (void *)sb, (int)b, MPI_BYTE,
					    rb, (int)b, MPI_BYTE, comm));
			for (int i = 0; i < p; i++) {
				long bad = mt_verify(rb + b * (size_t)i, b, i, bsalt(i, me, run));

				CHECK(bad < 0,
				      "Alltoall%s on %s, %zu B blocks: block from %d wrong at %ld",
				      inplace ? " in place" : "", cname, b, i, bad);
			}
			CHECK(rb[b * (size_t)p] == 0xee, "Alltoall wrote past the buffer");
			if (!inplace)
				for (int j = 0; j < p; j++)
					CHECK(mt_verify(sb + b * (size_t)j, b, me,
							bsalt(me, j, run)) < 0,
					      "Alltoall changed the send buffer");
		}
	}
	/* ints as ints, and the padded pair type */
	int n = 40;
	int *si = malloc(sizeof(int) * (size_t)(n * p)),
	    *ri = malloc(sizeof(int) * (size_t)(n * p));
	struct {
		long v;
		int i;
	} *sl = malloc(16 * (size_t)(n * p)), *rl = malloc(16 * (size_t)(n * p));

	CHECK(si && ri && sl && rl, "out of memory");
	for (int j = 0; j < p; j++)
		for (int k = 0; k < n; k++) {
			si[j * n + k] = me * 10000 + j * 100 + k;
			sl[j * n + k].v = -(me * 10000L + j * 100 + k);
			sl[j * n + k].i = me + j;
		}
	MPI_OK(MPI_Alltoall(si, n, MPI_INT, ri, n, MPI_INT, comm));
	MPI_OK(MPI_Alltoall(sl, n, MPI_LONG_INT, rl, n, MPI_LONG_INT, comm));
	for (int i = 0; i < p; i++)
		for (int k = 0; k < n; k++) {
			CHECK(ri[i * n + k] == i * 10000 + me * 100 + k, "Alltoall MPI_INT");
			CHECK(rl[i * n + k].v == -(i * 10000L + me * 100 + k) &&
				  rl[i * n + k].i == i + me,
			      "Alltoall MPI_LONG_INT from %d elem %d", i, k);
		}
	free(si);
	free(ri);
	free(sl);
	free(rl);
	free(sb);
	free(rb);
}

/* Alltoallv: rank i sends cnt(i, j) ints to rank j (symmetric, as
 * MPI_IN_PLACE needs; some empty); receive blocks laid out backwards with
 * gaps of 2, send blocks backwards with gaps of 1. */
static int cnt(int i, int j, int scale)
{
	return (i + j) % 3 == 0 ? 0 : ((i * j + i + j) % 7 + 1) * scale;
}

static int val(int i, int j, int k)
{
	return i * 1000000 + j * 10000 + k;
}

static void test_alltoallv(MPI_Comm comm, const char *cname)
{
	int me, p;

	MPI_OK(MPI_Comm_rank(comm, &me));
	MPI_OK(MPI_Comm_size(comm, &p));
	int *sc = malloc(sizeof(int) * (size_t)p), *sd = malloc(sizeof(int) * (size_t)p);
	int *rc = malloc(sizeof(int) * (size_t)p), *rd = malloc(sizeof(int) * (size_t)p);

	CHECK(sc && sd && rc && rd, "out of memory");
	for (int scale = 1; scale <= 3000; scale *= 3000) {
		int stot = 0, rtot = 0;

		for (int j = 0; j < p; j++)
			sc[j] = cnt(me, j, scale);
		for (int j = p - 1; j >= 0; j--) {
			sd[j] = stot;
			stot += sc[j] + 1;
		}
		for (int i = p - 1; i >= 0; i--) {
			rc[i] = cnt(i, me, scale);
			rd[i] = rtot;
			rtot += rc[i] + 2;
		}
		int *s = malloc(sizeof(int) * (size_t)(stot + 1)),
		    *r = malloc(sizeof(int) * (size_t)(rtot + 1));

		CHECK(s && r, "out of memory");
		for (int inplace = 0; inplace < 2; inplace++) {
			for (int k = 0; k < rtot; k++)
				r[k] = -1;
			if (!inplace) {
				for (int j = 0; j < p; j++)
					for (int k = 0; k < sc[j]; k++)
						s[sd[j] + k] = val(me, j, k);
				MPI_OK(MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, comm));
			} else {
				/* in place: the receive layout holds what goes out */
				for (int j = 0; j < p; j++)
					for (int k = 0; k < rc[j]; k++)
						r[rd[j] + k] = val(me, j, k);
				MPI_OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, r,
						     rc, rd, MPI_INT, comm));
			}
			for (int i = 0; i < p; i++) {
				for (int k = 0; k < rc[i]; k++)
					CHECK(r[rd[i] + k] == val(i, me, k),
					      "Alltoallv%s on %s scale %d: from %d elem %d = %d",
					      inplace ? " in place" : "", cname, scale, i, k,
					      r[rd[i] + k]);
				CHECK(r[rd[i] + rc[i]] == -1 && r[rd[i] + rc[i] + 1] == -1,
				      "Alltoallv wrote a gap");
			}
		}
		free(s);
		free(r);
	}
	free(sc);
	free(sd);
	free(rc);
	free(rd);
}

int main(int argc, char **argv)
{
	MPI_Comm rev;

	mt_init(&argc, &argv, &rank, &size);
	test_alltoall(MPI_COMM_WORLD, "MPI_COMM_WORLD");
	test_alltoallv(MPI_COMM_WORLD, "MPI_COMM_WORLD");
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
	test_alltoall(rev, "a reversed communicator");
	test_alltoallv(rev, "a reversed communicator");
	MPI_OK(MPI_Comm_free(&rev));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("coll_alltoall: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
