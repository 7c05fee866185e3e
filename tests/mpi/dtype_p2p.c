/* ibx-test: np=1,2,3,4 timeout=90 */
/*
 * dtype_p2p — derived datatypes in point-to-point communication, content
 * checked element by element, gaps checked untouched: vector, indexed,
 * a struct with padding (sent as an array of C structs), resized, subarray
 * in C and Fortran order, a nested vector-of-struct-of-vector, MPI_BOTTOM
 * with absolute addresses; through Send/Recv, Isend/Irecv, Ssend/Issend,
 * Sendrecv, Sendrecv_replace, Probe + Get_count/Get_elements (whole and
 * partial elements); a large vector (the rendezvous path); a type freed
 * while a receive on it is pending; sender and receiver using different
 * types with the same signature.
 *
 * Every rank sends to its right neighbour and receives from its left one
 * (itself with one rank); values encode (sender, index).
 */
#include "mpitest.h"

#include <stdbool.h>
#include <stddef.h>

static int rank, size, right, left;

static double dval(int src, long i)
{
	return src * 1000000.0 + (double)i;
}

static int ival(int src, long i)
{
	return src * 100000 + (int)i;
}

/* vector(100, 3, 7, double), 2 elements; received both as the vector
 * (gaps must stay untouched) and as plain doubles. */
static void test_vector(void)
{
	enum { CNT = 100, BL = 3, ST = 7, N = 2 };
	MPI_Datatype vec;
	MPI_Aint lb, ext;
	long span = (long)((N - 1) * ((CNT - 1) * ST + BL) + (CNT - 1) * ST + BL) + ST;
	double *s = malloc(sizeof(double) * (size_t)span),
	       *r = malloc(sizeof(double) * (size_t)span);
	double *flat = malloc(sizeof(double) * N * CNT * BL);
	MPI_Request rq[2];
	MPI_Status st;
	int n;

	CHECK(s && r && flat, "out of memory");
	MPI_OK(MPI_Type_vector(CNT, BL, ST, MPI_DOUBLE, &vec));
	MPI_OK(MPI_Type_commit(&vec));
	MPI_OK(MPI_Type_get_extent(vec, &lb, &ext));
	CHECK(lb == 0 && ext == (MPI_Aint)(((CNT - 1) * ST + BL) * sizeof(double)),
	      "vector extent %ld", (long)ext);
	for (long i = 0; i < span; i++) {
		s[i] = dval(rank, i);
		r[i] = -1.0;
	}
	/* vector to vector */
	MPI_OK(MPI_Irecv(r, N, vec, left, 1, MPI_COMM_WORLD, &rq[0]));
	MPI_OK(MPI_Isend(s, N, vec, right, 1, MPI_COMM_WORLD, &rq[1]));
	MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
	for (long e = 0; e < N; e++)
		for (long i = 0; i < (CNT - 1) * ST + BL; i++) {
			long at = e * (ext / (MPI_Aint)sizeof(double)) + i;
			bool data = i % ST < BL;

			CHECK(r[at] == (data ? dval(left, at) : -1.0),
			      "vector: element %ld offset %ld: %g (%s)", e, i, r[at],
			      data ? "data" : "gap written");
		}
	/* vector to contiguous doubles, blocking (alone: to itself) */
	if (size == 1) {
		MPI_OK(MPI_Sendrecv(s, N, vec, right, 2, flat, N * CNT * BL, MPI_DOUBLE, left, 2,
				    MPI_COMM_WORLD, &st));
	} else if (rank % 2 == 0) {
		MPI_OK(MPI_Send(s, N, vec, right, 2, MPI_COMM_WORLD));
		MPI_OK(MPI_Recv(flat, N * CNT * BL, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &st));
	} else {
		MPI_OK(MPI_Recv(flat, N * CNT * BL, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Send(s, N, vec, right, 2, MPI_COMM_WORLD));
	}
	MPI_OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
	CHECK(n == N * CNT * BL, "Get_count doubles %d", n);
	MPI_OK(MPI_Get_count(&st, vec, &n));
	CHECK(n == N, "Get_count vector %d", n);
	MPI_OK(MPI_Get_elements(&st, vec, &n));
	CHECK(n == N * CNT * BL, "Get_elements vector %d", n);
	for (long e = 0, k = 0; e < N; e++)
		for (long b = 0; b < CNT; b++)
			for (long j = 0; j < BL; j++, k++) {
				long at = e * (ext / (MPI_Aint)sizeof(double)) + b * ST + j;

				CHECK(flat[k] == dval(left, at), "flat %ld: %g", k, flat[k]);
			}
	MPI_OK(MPI_Type_free(&vec));
	CHECK(vec == MPI_DATATYPE_NULL, "Type_free did not reset the handle");
	free(s);
	free(r);
	free(flat);
}

/* indexed({3,1,4}, {0,5,9}, int): 3 elements of extent 13 ints, with
 * Sendrecv, and the same data received through an equivalent hindexed. */
static void test_indexed(void)
{
	int bl[3] = {3, 1, 4}, di[3] = {0, 5, 9};
	MPI_Aint hd[3] = {0, 5 * sizeof(int), 9 * sizeof(int)};
	MPI_Datatype idx, hidx;
	int s[39], r[39];
	MPI_Status st;
	int n;

	MPI_OK(MPI_Type_indexed(3, bl, di, MPI_INT, &idx));
	MPI_OK(MPI_Type_commit(&idx));
	MPI_OK(MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &hidx));
	MPI_OK(MPI_Type_commit(&hidx));
	for (int i = 0; i < 39; i++) {
		s[i] = ival(rank, i);
		r[i] = -7;
	}
	MPI_OK(MPI_Sendrecv(s, 3, idx, right, 3, r, 3, hidx, left, 3, MPI_COMM_WORLD, &st));
	MPI_OK(MPI_Get_count(&st, idx, &n));
	CHECK(n == 3, "indexed Get_count %d", n);
	for (int e = 0; e < 3; e++)
		for (int i = 0; i < 13; i++) {
			bool data = i < 3 || i == 5 || (i >= 9 && i < 13);
			int at = e * 13 + i;

			CHECK(r[at] == (data ? ival(left, at) : -7), "indexed %d: %d", at, r[at]);
		}
	MPI_OK(MPI_Type_free(&idx));
	MPI_OK(MPI_Type_free(&hidx));
}

/* A C struct with padding, described by MPI_Type_create_struct and
 * resized to the C struct's size, as an array. */
typedef struct particle {
	char tag;
	double pos[2];
	int id;
	short flags;
} particle_t;

static MPI_Datatype particle_type(void)
{
	int bl[4] = {1, 2, 1, 1};
	MPI_Aint d[4] = {offsetof(particle_t, tag), offsetof(particle_t, pos),
			 offsetof(particle_t, id), offsetof(particle_t, flags)};
	MPI_Datatype ty[4] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT}, t, r;
	MPI_Aint lb, ext;
	int sz;

	MPI_OK(MPI_Type_create_struct(4, bl, d, ty, &t));
	MPI_OK(MPI_Type_size(t, &sz));
	CHECK(sz == 1 + 16 + 4 + 2, "struct size %d", sz);
	/* the padding rule already gives the C struct's extent here */
	MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
	CHECK(lb == 0 && ext == sizeof(particle_t), "struct extent %ld, C %zu", (long)ext,
	      sizeof(particle_t));
	MPI_OK(MPI_Type_create_resized(t, 0, sizeof(particle_t), &r));
	MPI_OK(MPI_Type_free(&t));
	MPI_OK(MPI_Type_commit(&r));
	return r;
}

static void fill_particle(particle_t *p, int src, int i)
{
	memset(p, 0, sizeof(*p));
	p->tag = (char)('a' + (src + i) % 26);
	p->pos[0] = dval(src, i);
	p->pos[1] = -dval(src, i);
	p->id = ival(src, i);
	p->flags = (short)(i * 3 + src);
}

static void check_particle(const particle_t *p, int src, int i, const char *what)
{
	particle_t want;
	const unsigned char *b = (const unsigned char *)p;

	fill_particle(&want, src, i);
	CHECK(p->tag == want.tag && p->pos[0] == want.pos[0] && p->pos[1] == want.pos[1] &&
		  p->id == want.id && p->flags == want.flags,
	      "%s: particle %d from %d wrong (id %d)", what, i, src, p->id);
	/* padding after tag and after flags untouched (0x5a) */
	for (size_t k = 1; k < offsetof(particle_t, pos); k++)
		CHECK(b[k] == 0x5a, "%s: particle %d: padding byte %zu written", what, i, k);
	for (size_t k = offsetof(particle_t, flags) + sizeof(short); k < sizeof(*p); k++)
		CHECK(b[k] == 0x5a, "%s: particle %d: tail byte %zu written", what, i, k);
}

static void test_struct(void)
{
	enum { N = 50 };
	particle_t s[N], r[N + 1];
	MPI_Datatype pt = particle_type();
	MPI_Request rq;
	MPI_Status st;
	int n;

	for (int i = 0; i < N; i++)
		fill_particle(&s[i], rank, i);
	memset(r, 0x5a, sizeof(r));
	MPI_OK(MPI_Irecv(r, N + 1, pt, left, 4, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Ssend(s, N, pt, right, 4, MPI_COMM_WORLD));
	MPI_OK(MPI_Wait(&rq, &st));
	MPI_OK(MPI_Get_count(&st, pt, &n));
	CHECK(n == N, "struct Get_count %d", n);
	MPI_OK(MPI_Get_elements(&st, pt, &n));
	CHECK(n == 5 * N, "struct Get_elements %d", n);
	for (int i = 0; i < N; i++)
		check_particle(&r[i], left, i, "Irecv");
	CHECK(r[N].id == 0x5a5a5a5a, "wrote past the message");

	/* Sendrecv_replace in place, Issend */
	for (int i = 0; i < N; i++)
		fill_particle(&r[i], rank, i);
	for (int i = 0; i < N; i++) {
		/* re-mark the padding (fill_particle zeroed it) */
		unsigned char *b = (unsigned char *)&r[i];

		memset(b + 1, 0x5a, offsetof(particle_t, pos) - 1);
		memset(b + offsetof(particle_t, flags) + sizeof(short), 0x5a,
		       sizeof(particle_t) - offsetof(particle_t, flags) - sizeof(short));
	}
	MPI_OK(MPI_Sendrecv_replace(r, N, pt, right, 5, left, 5, MPI_COMM_WORLD, &st));
	for (int i = 0; i < N; i++)
		check_particle(&r[i], left, i, "Sendrecv_replace");
	MPI_OK(MPI_Type_free(&pt));
}

/* resized(int, 0, 3 ints): every third int; and a negative lower bound. */
static void test_resized(void)
{
	MPI_Datatype every3, shifted;
	int s[30], r[30], r2[12];
	MPI_Aint lb, ext;
	MPI_Request rq[2];

	MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &every3));
	MPI_OK(MPI_Type_commit(&every3));
	for (int i = 0; i < 30; i++) {
		s[i] = ival(rank, i);
		r[i] = -1;
	}
	MPI_OK(MPI_Irecv(r, 10, every3, left, 6, MPI_COMM_WORLD, &rq[0]));
	MPI_OK(MPI_Isend(s, 10, every3, right, 6, MPI_COMM_WORLD, &rq[1]));
	MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
	for (int i = 0; i < 30; i++)
		CHECK(r[i] == (i % 3 == 0 ? ival(left, i) : -1), "resized %d: %d", i, r[i]);

	/* lb -8: element k's int sits 8 bytes past its lower bound */
	MPI_OK(MPI_Type_create_resized(MPI_INT, -8, 4 * sizeof(int), &shifted));
	MPI_OK(MPI_Type_commit(&shifted));
	MPI_OK(MPI_Type_get_extent(shifted, &lb, &ext));
	CHECK(lb == -8 && ext == 16, "resized lb %ld extent %ld", (long)lb, (long)ext);
	for (int i = 0; i < 12; i++)
		r2[i] = -1;
	MPI_OK(MPI_Sendrecv(s, 3, shifted, right, 7, r2, 3, shifted, left, 7, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE));
	for (int i = 0; i < 12; i++)
		CHECK(r2[i] == (i % 4 == 0 ? ival(left, i) : -1), "shifted %d: %d", i, r2[i]);
	MPI_OK(MPI_Type_free(&every3));
	MPI_OK(MPI_Type_free(&shifted));
}

/* A 4x5x6 int array; the 2x3x2 block at (1,1,3) in both orders. */
static void test_subarray(int order)
{
	int sizes[3] = {4, 5, 6}, sub[3] = {2, 3, 2}, start[3] = {1, 1, 3};
	int s[120], r[120];
	MPI_Datatype t;
	MPI_Aint lb, ext;
	MPI_Status st;
	int n;

	MPI_OK(MPI_Type_create_subarray(3, sizes, sub, start, order, MPI_INT, &t));
	MPI_OK(MPI_Type_commit(&t));
	MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
	CHECK(lb == 0 && ext == 120 * sizeof(int), "subarray extent %ld", (long)ext);
	for (int i = 0; i < 120; i++) {
		s[i] = ival(rank, i);
		r[i] = -1;
	}
	MPI_OK(MPI_Sendrecv(s, 1, t, right, 8, r, 1, t, left, 8, MPI_COMM_WORLD, &st));
	MPI_OK(MPI_Get_elements(&st, t, &n));
	CHECK(n == 12, "subarray elements %d", n);
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 5; b++)
			for (int c = 0; c < 6; c++) {
				/* linear index of (a, b, c): C has c fastest,
				 * Fortran a fastest */
				int lin = order == MPI_ORDER_C ? (a * 5 + b) * 6 + c
							       : (c * 5 + b) * 4 + a;
				bool in = a >= 1 && a < 3 && b >= 1 && b < 4 && c >= 3 && c < 5;

				CHECK(r[lin] == (in ? ival(left, lin) : -1),
				      "subarray %s (%d,%d,%d): %d",
				      order == MPI_ORDER_C ? "C" : "Fortran", a, b, c, r[lin]);
			}
	MPI_OK(MPI_Type_free(&t));
}

/* vector(3, 2, 3, struct{vector(2,1,2,short) @0, int[2] @12}) */
static void test_nested(void)
{
	MPI_Datatype v, st, w;
	int bl[2] = {1, 2};
	MPI_Aint d[2] = {0, 12}, lb, ext, sext;
	MPI_Datatype ty[2];
	unsigned char s[512], r[512];
	int sz;

	MPI_OK(MPI_Type_vector(2, 1, 2, MPI_SHORT, &v));
	ty[0] = v, ty[1] = MPI_INT;
	MPI_OK(MPI_Type_create_struct(2, bl, d, ty, &st));
	MPI_OK(MPI_Type_vector(3, 2, 3, st, &w));
	/* the parts may go once the outer type exists */
	MPI_OK(MPI_Type_free(&v));
	MPI_OK(MPI_Type_get_extent(st, &lb, &sext));
	MPI_OK(MPI_Type_free(&st));
	MPI_OK(MPI_Type_commit(&w));
	MPI_OK(MPI_Type_size(w, &sz));
	CHECK(sz == 6 * 12, "nested size %d", sz);
	MPI_OK(MPI_Type_get_extent(w, &lb, &ext));
	CHECK(lb == 0 && sext == 20 && ext == (2 * 3 + 2) * sext, "nested extent %ld (struct %ld)",
	      (long)ext, (long)sext);
	for (int i = 0; i < 512; i++) {
		s[i] = (unsigned char)(rank * 31 + i);
		r[i] = 0xee;
	}
	MPI_OK(
	    MPI_Sendrecv(s, 1, w, right, 9, r, 1, w, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	/* reference: which bytes of one w belong to it */
	for (int k = 0; k < (int)ext; k++) {
		int blk = k / (int)sext, off = k % (int)sext;
		bool in_blk = blk % 3 < 2 && blk / 3 < 3;
		bool in_st = (off < 2) || (off >= 4 && off < 6) || (off >= 12 && off < 20);
		unsigned char want = in_blk && in_st ? (unsigned char)(left * 31 + k) : 0xee;

		CHECK(r[k] == want, "nested byte %d: %#x, expected %#x", k, r[k], want);
	}
	CHECK(r[ext] == 0xee, "nested: wrote past the extent");
	MPI_OK(MPI_Type_free(&w));
}

/* Absolute addresses: two separate variables through MPI_BOTTOM. */
static void test_bottom(void)
{
	static double a_s, a_r;
	static int b_s[3], b_r[3];
	int bl[2] = {1, 3};
	MPI_Aint d[2];
	MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_INT}, ts, tr;

	a_s = dval(rank, 1);
	for (int i = 0; i < 3; i++) {
		b_s[i] = ival(rank, i);
		b_r[i] = -1;
	}
	a_r = -1;
	MPI_OK(MPI_Get_address(&a_s, &d[0]));
	MPI_OK(MPI_Get_address(b_s, &d[1]));
	MPI_OK(MPI_Type_create_struct(2, bl, d, ty, &ts));
	MPI_OK(MPI_Type_commit(&ts));
	MPI_OK(MPI_Get_address(&a_r, &d[0]));
	MPI_OK(MPI_Get_address(b_r, &d[1]));
	MPI_OK(MPI_Type_create_struct(2, bl, d, ty, &tr));
	MPI_OK(MPI_Type_commit(&tr));
	MPI_OK(MPI_Sendrecv(MPI_BOTTOM, 1, ts, right, 10, MPI_BOTTOM, 1, tr, left, 10,
			    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	CHECK(a_r == dval(left, 1), "MPI_BOTTOM double %g", a_r);
	for (int i = 0; i < 3; i++)
		CHECK(b_r[i] == ival(left, i), "MPI_BOTTOM int %d: %d", i, b_r[i]);
	MPI_OK(MPI_Type_free(&ts));
	MPI_OK(MPI_Type_free(&tr));
}

/* 200k doubles at stride 2 (1.6 MB packed: the rendezvous path), and the
 * receive's type freed while the receive is pending. */
static void test_large_and_freed(void)
{
	enum { N = 200000 };
	double *s = malloc(sizeof(double) * 2 * N), *r = malloc(sizeof(double) * 2 * N);
	MPI_Datatype vs, vr;
	MPI_Request rq[2];
	MPI_Status st;
	int n;

	CHECK(s && r, "out of memory");
	for (long i = 0; i < 2 * N; i++) {
		s[i] = dval(rank, i);
		r[i] = -1;
	}
	MPI_OK(MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &vs));
	MPI_OK(MPI_Type_commit(&vs));
	MPI_OK(MPI_Type_dup(vs, &vr));
	MPI_OK(MPI_Irecv(r, 1, vr, left, 11, MPI_COMM_WORLD, &rq[0]));
	/* freeing now is allowed: the pending receive keeps the type */
	MPI_OK(MPI_Type_free(&vr));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Isend(s, 1, vs, right, 11, MPI_COMM_WORLD, &rq[1]));
	MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
	for (long i = 0; i < 2 * N; i++)
		CHECK(r[i] == (i % 2 == 0 ? dval(left, i) : -1), "large vector %ld: %g", i, r[i]);

	/* a probe sees the bytes; Get_count/elements in any type */
	MPI_OK(MPI_Isend(s, 1, vs, right, 12, MPI_COMM_WORLD, &rq[1]));
	MPI_OK(MPI_Probe(left, 12, MPI_COMM_WORLD, &st));
	MPI_OK(MPI_Get_count(&st, vs, &n));
	CHECK(n == 1, "probe Get_count vector %d", n);
	MPI_OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
	CHECK(n == N, "probe Get_count double %d", n);
	MPI_OK(MPI_Recv(r, N, MPI_DOUBLE, left, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
	for (long i = 0; i < N; i++)
		CHECK(r[i] == dval(left, 2 * i), "probed vector %ld: %g", i, r[i]);
	MPI_OK(MPI_Type_free(&vs));
	free(s);
	free(r);
}

/* A short message: fewer elements than the receive, and one that ends in
 * the middle of an element (Get_count MPI_UNDEFINED, Get_elements exact). */
static void test_partial(void)
{
	MPI_Datatype pair3;
	int s[9], r[12];
	MPI_Status st;
	int n;
	MPI_Count nx;

	/* element: 3 ints at stride 2 */
	MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &pair3));
	MPI_OK(MPI_Type_commit(&pair3));
	for (int i = 0; i < 9; i++)
		s[i] = ival(rank, i);
	for (int i = 0; i < 12; i++)
		r[i] = -1;
	/* 5 ints into room for 2 elements (6 ints): one whole element and
	 * 2 ints of the next */
	MPI_OK(MPI_Sendrecv(s, 5, MPI_INT, right, 13, r, 2, pair3, left, 13, MPI_COMM_WORLD, &st));
	MPI_OK(MPI_Get_count(&st, pair3, &n));
	CHECK(n == MPI_UNDEFINED, "partial Get_count %d", n);
	MPI_OK(MPI_Get_elements(&st, pair3, &n));
	CHECK(n == 5, "partial Get_elements %d", n);
	MPI_OK(MPI_Get_elements_x(&st, pair3, &nx));
	CHECK(nx == 5, "partial Get_elements_x %lld", (long long)nx);
	{
		/* element extent 5 ints: unpacked to ints 0,2,4 then 5,7 */
		int at[5] = {0, 2, 4, 5, 7};

		for (int i = 0; i < 5; i++)
			CHECK(r[at[i]] == ival(left, i), "partial %d: %d", i, r[at[i]]);
		CHECK(r[1] == -1 && r[3] == -1 && r[6] == -1 && r[8] == -1 && r[9] == -1,
		      "partial: wrote outside the data");
	}
	/* a byte count that cuts a basic element (seen by a probe):
	 * Get_elements undefined */
	{
		char bytes[6] = {0};
		MPI_Request rq;

		MPI_OK(MPI_Isend(bytes, 6, MPI_BYTE, right, 14, MPI_COMM_WORLD, &rq));
		MPI_OK(MPI_Probe(left, 14, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Get_elements(&st, pair3, &n));
		CHECK(n == MPI_UNDEFINED, "6 bytes as ints: Get_elements %d", n);
		MPI_OK(MPI_Get_count(&st, pair3, &n));
		CHECK(n == MPI_UNDEFINED, "6 bytes as ints: Get_count %d", n);
		MPI_OK(MPI_Recv(bytes, 6, MPI_BYTE, left, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	}
	MPI_OK(MPI_Type_free(&pair3));
}

/* contiguous(10, int) and a dup: dense derived types, any count. */
static void test_contiguous(void)
{
	MPI_Datatype c10, d;
	int s[40], r[40];
	MPI_Status st;
	int n;

	MPI_OK(MPI_Type_contiguous(10, MPI_INT, &c10));
	MPI_OK(MPI_Type_commit(&c10));
	MPI_OK(MPI_Type_dup(c10, &d));
	for (int i = 0; i < 40; i++) {
		s[i] = ival(rank, i);
		r[i] = -1;
	}
	MPI_OK(MPI_Sendrecv(s, 3, c10, right, 15, r, 4, d, left, 15, MPI_COMM_WORLD, &st));
	MPI_OK(MPI_Get_count(&st, d, &n));
	CHECK(n == 3, "contiguous Get_count %d", n);
	for (int i = 0; i < 40; i++)
		CHECK(r[i] == (i < 30 ? ival(left, i) : -1), "contiguous %d: %d", i, r[i]);
	MPI_OK(MPI_Type_free(&c10));
	MPI_OK(MPI_Type_free(&d));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	right = (rank + 1) % size;
	left = (rank - 1 + size) % size;
	test_vector();
	test_indexed();
	test_struct();
	test_resized();
	test_subarray(MPI_ORDER_C);
	test_subarray(MPI_ORDER_FORTRAN);
	test_nested();
	test_bottom();
	test_large_and_freed();
	test_partial();
	test_contiguous();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("dtype_p2p: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
