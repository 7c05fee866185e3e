/* ibx-test: np=2,3,4 timeout=240 */
/*
 * coll_large — MPI_Allreduce, MPI_Bcast and MPI_Alltoall with large
 * messages, at and around the sizes where the algorithms and the
 * node-local rendezvous change (the eager limit, pipe chunks, the split
 * size of the single copy, the selection table's thresholds: 8-64 KiB,
 * 1 MiB) and at odd sizes beyond: every result checked element by
 * element, separate and in-place buffers, the bytes after each buffer
 * untouched. The same program runs with the rendezvous copy the node's
 * calibration chose; tests/sh/shm_engine.sh forces each copy.
 */
#include "mpitest.h"

static int rank, size;

static const size_t lens[] = {
    8,	   8184,  8192,	  8200,	  16376,  16384,   16392,   32768,   65528,
    65536, 65544, 131072, 262152, 524288, 1048568, 1048576, 1048584, 3000000,
};
#define NLENS ((int)(sizeof(lens) / sizeof(lens[0])))
#define GUARD 64

static unsigned char pattern(size_t i, int salt)
{
	return (unsigned char)((i * 2654435761u + (unsigned)salt * 40503u) >> 13);
}

static void fill(unsigned char *b, size_t len, int salt)
{
	for (size_t i = 0; i < len; i++)
		b[i] = pattern(i, salt);
}

static void check_bytes(const unsigned char *b, size_t len, int salt, const char *what)
{
	for (size_t i = 0; i < len; i++)
		CHECK(b[i] == pattern(i, salt), "%s of %zu bytes: byte %zu wrong", what, len, i);
	for (size_t i = len; i < len + GUARD; i++)
		CHECK(b[i] == 0xee, "%s of %zu bytes: overran at %zu", what, len, i);
}

/* Sums of small integers are exact in doubles, whatever the order. */
static double elem(size_t i, int r)
{
	return (double)((i % 977) * 3 + (size_t)r * 100000);
}

static void test_allreduce(size_t len, int inplace)
{
	size_t n = len / sizeof(double);
	double *in = malloc(n * sizeof(double) + 1), *out = malloc(n * sizeof(double) + GUARD);
	long long *li = malloc(n * sizeof(long long) + 1),
		  *lo = malloc(n * sizeof(long long) + GUARD);

	CHECK(in && out && li && lo, "out of memory");
	for (size_t i = 0; i < n; i++) {
		in[i] = elem(i, rank);
		li[i] = (long long)((i * 7919 + (size_t)rank * 104729) % 1000003);
	}
	memset((char *)out + n * sizeof(double), 0xee, GUARD);
	if (inplace) {
		memcpy(out, in, n * sizeof(double));
		MPI_OK(
		    MPI_Allreduce(MPI_IN_PLACE, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
	} else {
		MPI_OK(MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
	}
	for (size_t i = 0; i < n; i++) {
		double e = 0;

		for (int r = 0; r < size; r++)
			e += elem(i, r);
		CHECK(out[i] == e, "Allreduce SUM %zu B%s: element %zu is %g, expected %g", len,
		      inplace ? " in place" : "", i, out[i], e);
	}
	for (size_t i = 0; i < GUARD; i++)
		CHECK(((unsigned char *)out)[n * sizeof(double) + i] == 0xee,
		      "Allreduce %zu B overran", len);
	/* a second op and type: the largest contribution wins */
	MPI_OK(MPI_Allreduce(li, lo, (int)n, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD));
	for (size_t i = 0; i < n; i++) {
		long long e = 0;

		for (int r = 0; r < size; r++) {
			long long v = (long long)((i * 7919 + (size_t)r * 104729) % 1000003);

			e = v > e ? v : e;
		}
		CHECK(lo[i] == e, "Allreduce MAX %zu B: element %zu", len, i);
	}
	free(in);
	free(out);
	free(li);
	free(lo);
}

static void test_bcast(size_t len, int root)
{
	unsigned char *b = malloc(len + GUARD);

	CHECK(b, "out of memory");
	memset(b, 0xee, len + GUARD);
	if (rank == root)
		fill(b, len, root + 7);
	MPI_OK(MPI_Bcast(b, (int)len, MPI_BYTE, root, MPI_COMM_WORLD));
	check_bytes(b, len, root + 7, "Bcast");
	free(b);
}

static void test_alltoall(size_t len, int inplace)
{
	unsigned char *sb = malloc(len * (size_t)size), *rb = malloc(len * (size_t)size + GUARD);

	CHECK(sb && rb, "out of memory");
	for (int d = 0; d < size; d++)
		fill(sb + (size_t)d * len, len, rank * 64 + d);
	memset(rb, 0xee, len * (size_t)size + GUARD);
	if (inplace) {
		memcpy(rb, sb, len * (size_t)size);
		MPI_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_BYTE, rb, (int)len, MPI_BYTE,
				    MPI_COMM_WORLD));
	} else {
		MPI_OK(
		    MPI_Alltoall(sb, (int)len, MPI_BYTE, rb, (int)len, MPI_BYTE, MPI_COMM_WORLD));
	}
	for (int s = 0; s < size; s++) {
		const unsigned char *blk = rb + (size_t)s * len;

		for (size_t i = 0; i < len; i++)
			CHECK(blk[i] == pattern(i, s * 64 + rank),
			      "Alltoall %zu B%s: block from %d, byte %zu", len,
			      inplace ? " in place" : "", s, i);
	}
	for (size_t i = 0; i < GUARD; i++)
		CHECK(rb[len * (size_t)size + i] == 0xee, "Alltoall %zu B overran", len);
	free(sb);
	free(rb);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	mt_rank = rank;
	for (int k = 0; k < NLENS; k++) {
		size_t len = lens[k];

		test_allreduce(len, k % 2);
		test_bcast(len, k % size);
		test_bcast(len, size - 1);
		/* Alltoall: p blocks per rank; the largest only every other size */
		if (len <= 1048584 || k % 2)
			test_alltoall(len, k % 3 == 0);
		/* the same size twice in a row: cached choices must not stick */
		test_allreduce(len, !(k % 2));
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("coll_large: %d sizes, %d ranks: all good\n", NLENS, size);
	MPI_Finalize();
	return 0;
}
