/* ibx-test: np=1,2,3 timeout=60 */
/*
 * p2p_types — typed point-to-point: basic types keep their values, the
 * value-index pairs whose C struct has padding (MPI_DOUBLE_INT,
 * MPI_SHORT_INT, MPI_LONG_DOUBLE_INT: packed for transfer) arrive field by
 * field without touching the padding, and Get_count / Get_elements count
 * elements, not bytes, including after a short message.
 */
#include "mpitest.h"

#include <complex.h>

typedef struct {
	double v;
	int i;
} dint_t;
typedef struct {
	short v;
	int i;
} sint_t;
typedef struct {
	long double v;
	int i;
} ldint_t;

static void test_pairs(int rank, int size)
{
	enum { N = 20000 }; /* large enough for the rendezvous path */
	int right = (rank + 1) % size, left = (rank - 1 + size) % size, n;
	dint_t *ds = malloc(sizeof(dint_t) * N), *dr = malloc(sizeof(dint_t) * (N + 1));
	sint_t ss[7], sr[10];
	ldint_t ls[3], lr[3];
	MPI_Status st;
	MPI_Request rq[2];

	CHECK(ds && dr, "out of memory");
	for (int i = 0; i < N; i++) {
		ds[i].v = rank + i * 0.25;
		ds[i].i = -i - rank;
	}
	/* receive with a marker in every padding byte: it must survive */
	memset(dr, 0x77, sizeof(dint_t) * (N + 1));
	MPI_OK(MPI_Irecv(dr, N + 1, MPI_DOUBLE_INT, left, 1, MPI_COMM_WORLD, &rq[0]));
	MPI_OK(MPI_Isend(ds, N, MPI_DOUBLE_INT, right, 1, MPI_COMM_WORLD, &rq[1]));
	MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
	for (int i = 0; i < N; i++) {
		CHECK(dr[i].v == left + i * 0.25 && dr[i].i == -i - left, "DOUBLE_INT %d: (%g,%d)",
		      i, dr[i].v, dr[i].i);
		const unsigned char *pad =
		    (const unsigned char *)&dr[i] + sizeof(double) + sizeof(int);

		for (size_t k = 0; k < sizeof(dint_t) - sizeof(double) - sizeof(int); k++)
			CHECK(pad[k] == 0x77, "DOUBLE_INT %d: padding byte %zu written", i, k);
	}
	CHECK(dr[N].i == 0x77777777, "wrote past the message");

	/* blocking, short message into a longer buffer: counts in elements */
	for (int i = 0; i < 7; i++) {
		ss[i].v = (short)(rank * 100 + i);
		ss[i].i = i * 3;
	}
	MPI_OK(MPI_Sendrecv(ss, 7, MPI_SHORT_INT, right, 2, sr, 10, MPI_SHORT_INT, left, 2,
			    MPI_COMM_WORLD, &st));
	MPI_OK(MPI_Get_count(&st, MPI_SHORT_INT, &n));
	CHECK(n == 7, "Get_count MPI_SHORT_INT %d", n);
	MPI_OK(MPI_Get_elements(&st, MPI_SHORT_INT, &n));
	CHECK(n == 14, "Get_elements MPI_SHORT_INT %d (two basic elements each)", n);
	MPI_Count nx;

	MPI_OK(MPI_Get_elements_x(&st, MPI_SHORT_INT, &nx));
	CHECK(nx == 14, "Get_elements_x %lld", (long long)nx);
	for (int i = 0; i < 7; i++)
		CHECK(sr[i].v == left * 100 + i && sr[i].i == i * 3, "SHORT_INT %d", i);

	/* Sendrecv_replace with a packed type */
	for (int i = 0; i < 3; i++) {
		ls[i].v = (long double)rank / 3 + i;
		ls[i].i = rank + i;
	}
	memcpy(lr, ls, sizeof(ls));
	MPI_OK(MPI_Sendrecv_replace(lr, 3, MPI_LONG_DOUBLE_INT, right, 3, left, 3, MPI_COMM_WORLD,
				    &st));
	for (int i = 0; i < 3; i++)
		CHECK(lr[i].v == (long double)left / 3 + i && lr[i].i == left + i,
		      "LONG_DOUBLE_INT %d", i);
	MPI_OK(MPI_Get_count(&st, MPI_LONG_DOUBLE_INT, &n));
	CHECK(n == 3, "Get_count MPI_LONG_DOUBLE_INT %d", n);
	free(ds);
	free(dr);
}

static void test_basic(int rank, int size)
{
	int right = (rank + 1) % size, left = (rank - 1 + size) % size, n;
	long double ld[5], ldr[5];
	double complex z[4], zr[4];
	short s[9];
	MPI_Status st;

	for (int i = 0; i < 5; i++)
		ld[i] = (long double)1 / (rank + i + 3);
	MPI_OK(MPI_Sendrecv(ld, 5, MPI_LONG_DOUBLE, right, 4, ldr, 5, MPI_LONG_DOUBLE, left, 4,
			    MPI_COMM_WORLD, &st));
	for (int i = 0; i < 5; i++)
		CHECK(ldr[i] == (long double)1 / (left + i + 3), "long double %d", i);
	for (int i = 0; i < 4; i++)
		z[i] = rank + i * I;
	MPI_OK(MPI_Sendrecv(z, 4, MPI_C_DOUBLE_COMPLEX, right, 5, zr, 4, MPI_C_DOUBLE_COMPLEX, left,
			    5, MPI_COMM_WORLD, &st));
	for (int i = 0; i < 4; i++)
		CHECK(zr[i] == left + i * I, "complex %d", i);
	MPI_OK(MPI_Get_count(&st, MPI_C_DOUBLE_COMPLEX, &n));
	CHECK(n == 4, "complex count %d", n);
	MPI_OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
	CHECK(n == 8, "complex as doubles %d", n);
	/* 9 shorts seen as ints: not a whole number */
	for (int i = 0; i < 9; i++)
		s[i] = (short)i;
	MPI_OK(MPI_Sendrecv(s, 9, MPI_SHORT, rank, 6, s, 0, MPI_SHORT, MPI_PROC_NULL, 6,
			    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	MPI_OK(MPI_Probe(rank, 6, MPI_COMM_WORLD, &st));
	MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(n == MPI_UNDEFINED, "18 bytes as MPI_INT: %d", n);
	MPI_OK(MPI_Get_count(&st, MPI_SHORT, &n));
	CHECK(n == 9, "18 bytes as MPI_SHORT: %d", n);
	short back[9];

	MPI_OK(MPI_Recv(back, 9, MPI_SHORT, rank, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	for (int i = 0; i < 9; i++)
		CHECK(back[i] == i, "short %d", i);
}

int main(int argc, char **argv)
{
	int rank, size;

	mt_init(&argc, &argv, &rank, &size);
	test_pairs(rank, size);
	test_basic(rank, size);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("p2p_types: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
