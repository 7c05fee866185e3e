/* ibx-test: np=1,2,3,4,5,7 timeout=240 */
/*
 * nbc_coll — MPI_Ibarrier, MPI_Ibcast, MPI_Igather(v), MPI_Iscatter(v),
 * MPI_Iallgather(v) and MPI_Ialltoall(v/w) against their blocking twins
 * (tested on their own): the same inputs go through both, and the whole
 * receive buffers — the gaps of strided types and of displacements
 * included, filled with a sentinel first — must come out byte for byte
 * the same. Every root, MPI_IN_PLACE wherever MPI allows it, contiguous
 * ints and strided vectors on either side, counts from zero through the
 * sizes where the schedules change algorithm (bcast segments, ring
 * allgather, pairwise alltoall), and 1 MiB for bcast and alltoall. Each
 * request is completed by another of Wait, Test, Waitall, Waitany,
 * Waitsome, Testall, Testany, Testsome, Request_get_status; the status of
 * a completed collective is empty.
 */
#include "mpitest.h"

static int rank, size;
static MPI_Datatype vec; /* 2 ints, 2 apart (gaps of 1 int), extent 3 ints */

enum { SENTINEL = 0x5a };

/* ---- helpers --------------------------------------------------------------------------------- */

static void fill(int *b, size_t n, int salt)
{
	for (size_t i = 0; i < n; i++)
		b[i] = rank * 1000003 + (int)i * 7 + salt;
}

static int *alloc_ints(size_t n)
{
	int *p = malloc((n + 1) * sizeof(int));

	CHECK(p, "out of memory (%zu ints)", n);
	return p;
}

/* Two receive buffers of @n ints, both set to the sentinel. */
static void two_rbufs(size_t n, int **a, int **b)
{
	*a = alloc_ints(n);
	*b = alloc_ints(n);
	memset(*a, SENTINEL, (n + 1) * sizeof(int));
	memset(*b, SENTINEL, (n + 1) * sizeof(int));
}

static void same(const void *a, const void *b, size_t n, const char *what)
{
	const unsigned char *x = a, *y = b;

	for (size_t i = 0; i < n; i++)
		CHECK(x[i] == y[i], "%s: byte %zu differs (blocking %02x, nonblocking %02x)", what,
		      i, x[i], y[i]);
}

/* Completes @r by one of the completion calls, a different one each time. */
static void complete(MPI_Request *r)
{
	static int method;
	MPI_Status st;
	int flag = 0, idx = -1, out = 0, count = -1;

	st.MPI_ERROR = MPI_SUCCESS;
	switch (method++ % 9) {
	case 0: MPI_OK(MPI_Wait(r, &st)); break;
	case 1:
		while (!flag)
			MPI_OK(MPI_Test(r, &flag, &st));
		break;
	case 2: MPI_OK(MPI_Waitall(1, r, &st)); break;
	case 3:
		MPI_OK(MPI_Waitany(1, r, &idx, &st));
		CHECK(idx == 0, "Waitany index %d", idx);
		break;
	case 4:
		MPI_OK(MPI_Waitsome(1, r, &out, &idx, &st));
		CHECK(out == 1 && idx == 0, "Waitsome: %d done, index %d", out, idx);
		break;
	case 5:
		while (!flag)
			MPI_OK(MPI_Testall(1, r, &flag, &st));
		break;
	case 6:
		while (!flag)
			MPI_OK(MPI_Testany(1, r, &idx, &flag, &st));
		CHECK(idx == 0, "Testany index %d", idx);
		break;
	case 7:
		while (out == 0)
			MPI_OK(MPI_Testsome(1, r, &out, &idx, &st));
		CHECK(out == 1 && idx == 0, "Testsome: %d done, index %d", out, idx);
		break;
	default:
		while (!flag)
			MPI_OK(MPI_Request_get_status(*r, &flag, &st));
		CHECK(*r != MPI_REQUEST_NULL, "Request_get_status freed the request");
		MPI_OK(MPI_Wait(r, MPI_STATUS_IGNORE));
		break;
	}
	CHECK(*r == MPI_REQUEST_NULL, "a completed collective request is not MPI_REQUEST_NULL");
	CHECK(st.MPI_ERROR == MPI_SUCCESS, "status error %d", st.MPI_ERROR);
	MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
	CHECK(count == 0, "a collective's status counts %d bytes", count);
}

/* ---- barrier, bcast
 * ------------------------------------------------------------------------------ */

static void test_barrier(void)
{
	for (int i = 0; i < 4; i++) {
		MPI_Request r;

		MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r));
		complete(&r);
	}
}

static void test_bcast(void)
{
	static const int counts[] = {0, 1, 13, 5000, 40000};

	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		for (int root = 0; root < size; root++) {
			for (int v = 0; v < 2; v++) {
				int n = v ? counts[c] / 2 : counts[c];
				size_t ints = v ? (size_t)n * 3 : (size_t)n;
				MPI_Datatype t = v ? vec : MPI_INT;
				int *b, *x;
				MPI_Request r;

				two_rbufs(ints, &b, &x);
				if (rank == root) {
					fill(b, ints, (int)c);
					memcpy(x, b, ints * sizeof(int));
				}
				MPI_OK(MPI_Bcast(b, n, t, root, MPI_COMM_WORLD));
				MPI_OK(MPI_Ibcast(x, n, t, root, MPI_COMM_WORLD, &r));
				complete(&r);
				same(b, x, ints * sizeof(int), "Ibcast");
				free(b);
				free(x);
			}
		}
	}
}

/* 1 MiB from one root, checked against its content. */
static void test_bcast_large(void)
{
	size_t len = 1 << 20;
	unsigned char *buf = malloc(len);
	int root = size - 1;
	MPI_Request r;
	long bad;

	CHECK(buf, "out of memory");
	if (rank == root)
		mt_fill(buf, len, root, 3);
	else
		memset(buf, 0, len);
	MPI_OK(MPI_Ibcast(buf, (int)len, MPI_BYTE, root, MPI_COMM_WORLD, &r));
	complete(&r);
	bad = mt_verify(buf, len, root, 3);
	CHECK(bad < 0, "Ibcast 1 MiB: byte %ld wrong", bad);
	free(buf);
}

/* ---- gather, scatter
 * ------------------------------------------------------------------------------ */

/* Block counts of the v forms: rank i has 1 + (i + k) % 4 elements,
 * placed 5 apart in the v buffers (a gap after each). */
static int vcount(int i, int k)
{
	return (i + k) % 4 == 3 ? 0 : 1 + (i + k) % 4;
}

static void v_layout(int k, int *counts, int *displs)
{
	for (int i = 0; i < size; i++) {
		counts[i] = vcount(i, k);
		displs[i] = (size - 1 - i) * 6; /* reverse order, with gaps */
	}
}

static void test_gather(void)
{
	for (int root = 0; root < size; root++) {
		for (int k = 0; k < 6; k++) {
			int send_vec = k == 4, inplace = k % 2 && rank == root;
			int n = ((k % 3) * 9 + (k == 5 ? 3000 : 0)) / (send_vec ? 2 : 1) *
				(send_vec ? 2 : 1);
			size_t rints = (size_t)n * size;
			int *s = alloc_ints((size_t)n * 3), *b, *x;
			MPI_Request r;

			fill(s, (size_t)n * 3, k);
			two_rbufs(rints, &b, &x);
			if (inplace) {
				fill(b + (size_t)root * n, (size_t)n, k);
				fill(x + (size_t)root * n, (size_t)n, k);
			}
			MPI_OK(MPI_Gather(inplace ? MPI_IN_PLACE : s, send_vec ? n / 2 : n,
					  send_vec ? vec : MPI_INT, b, n, MPI_INT, root,
					  MPI_COMM_WORLD));
			MPI_OK(MPI_Igather(inplace ? MPI_IN_PLACE : s, send_vec ? n / 2 : n,
					   send_vec ? vec : MPI_INT, x, n, MPI_INT, root,
					   MPI_COMM_WORLD, &r));
			complete(&r);
			if (rank == root)
				same(b, x, rints * sizeof(int), "Igather");
			free(s);
			free(b);
			free(x);
		}
	}
}

static void test_gatherv(void)
{
	int *counts = alloc_ints((size_t)size), *displs = alloc_ints((size_t)size);

	for (int root = 0; root < size; root++) {
		for (int k = 0; k < 4; k++) {
			int inplace = k % 2 && rank == root, rvec = k >= 2;
			size_t rints = (size_t)size * 6 * (rvec ? 3 : 1) + 8;
			int *s = alloc_ints(8), *b, *x, me;
			MPI_Datatype rt = rvec ? vec : MPI_INT;
			MPI_Request r;

			v_layout(k, counts, displs);
			me = counts[rank];
			fill(s, 8, k);
			two_rbufs(rints, &b, &x);
			if (rvec) /* counts of vectors: two ints each */
				me *= 2;
			if (inplace) {
				size_t at = (size_t)displs[root] * (rvec ? 3 : 1);

				fill(b + at, (size_t)counts[root] * 3, k);
				fill(x + at, (size_t)counts[root] * 3, k);
			}
			MPI_OK(MPI_Gatherv(inplace ? MPI_IN_PLACE : s, me, MPI_INT, b, counts,
					   displs, rt, root, MPI_COMM_WORLD));
			MPI_OK(MPI_Igatherv(inplace ? MPI_IN_PLACE : s, me, MPI_INT, x, counts,
					    displs, rt, root, MPI_COMM_WORLD, &r));
			complete(&r);
			if (rank == root)
				same(b, x, rints * sizeof(int), "Igatherv");
			free(s);
			free(b);
			free(x);
		}
	}
	free(counts);
	free(displs);
}

static void test_scatter(void)
{
	for (int root = 0; root < size; root++) {
		for (int k = 0; k < 6; k++) {
			int recv_vec = k == 4, inplace = k % 2 && rank == root;
			int n = ((k % 3) * 9 + (k == 5 ? 3000 : 0)) / (recv_vec ? 2 : 1) *
				(recv_vec ? 2 : 1);
			size_t sints = (size_t)n * size, rints = (size_t)n * 3;
			int *s = alloc_ints(sints), *b, *x;
			MPI_Request r;

			fill(s, sints, k);
			two_rbufs(rints, &b, &x);
			MPI_OK(MPI_Scatter(s, n, MPI_INT, inplace ? MPI_IN_PLACE : b,
					   recv_vec ? n / 2 : n, recv_vec ? vec : MPI_INT, root,
					   MPI_COMM_WORLD));
			MPI_OK(MPI_Iscatter(s, n, MPI_INT, inplace ? MPI_IN_PLACE : x,
					    recv_vec ? n / 2 : n, recv_vec ? vec : MPI_INT, root,
					    MPI_COMM_WORLD, &r));
			complete(&r);
			same(b, x, rints * sizeof(int), "Iscatter");
			free(s);
			free(b);
			free(x);
		}
	}
}

static void test_scatterv(void)
{
	int *counts = alloc_ints((size_t)size), *displs = alloc_ints((size_t)size);

	for (int root = 0; root < size; root++) {
		for (int k = 0; k < 4; k++) {
			int inplace = k % 2 && rank == root, svec = k >= 2, me;
			size_t sints = (size_t)size * 6 * (svec ? 3 : 1) + 8;
			int *s = alloc_ints(sints), *b, *x;
			MPI_Request r;

			v_layout(k, counts, displs);
			me = counts[rank] * (svec ? 2 : 1);
			fill(s, sints, k);
			two_rbufs(8, &b, &x);
			MPI_OK(MPI_Scatterv(s, counts, displs, svec ? vec : MPI_INT,
					    inplace ? MPI_IN_PLACE : b, me, MPI_INT, root,
					    MPI_COMM_WORLD));
			MPI_OK(MPI_Iscatterv(s, counts, displs, svec ? vec : MPI_INT,
					     inplace ? MPI_IN_PLACE : x, me, MPI_INT, root,
					     MPI_COMM_WORLD, &r));
			complete(&r);
			same(b, x, 8 * sizeof(int), "Iscatterv");
			free(s);
			free(b);
			free(x);
		}
	}
	free(counts);
	free(displs);
}

/* ---- allgather ------------------------------------------------------------------------------- */

static void test_allgather(void)
{
	/* 5000 ints a rank: more than the direct schedule's 64 KiB at p >= 4 */
	static const int counts[] = {0, 1, 10, 5000};

	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		for (int k = 0; k < 3; k++) {
			int n = counts[c], inplace = k == 1, rvec = k == 2;
			size_t rints = (size_t)n * size * (rvec ? 3 : 1);
			int *s = alloc_ints((size_t)n * 2), *b, *x, rn = rvec ? n / 2 : n;
			MPI_Request r;

			fill(s, (size_t)n * 2, k);
			two_rbufs(rints, &b, &x);
			if (inplace) {
				fill(b + (size_t)rank * n, (size_t)n, k);
				fill(x + (size_t)rank * n, (size_t)n, k);
			}
			MPI_OK(MPI_Allgather(inplace ? MPI_IN_PLACE : s, rvec ? rn * 2 : n, MPI_INT,
					     b, rn, rvec ? vec : MPI_INT, MPI_COMM_WORLD));
			MPI_OK(MPI_Iallgather(inplace ? MPI_IN_PLACE : s, rvec ? rn * 2 : n,
					      MPI_INT, x, rn, rvec ? vec : MPI_INT, MPI_COMM_WORLD,
					      &r));
			complete(&r);
			same(b, x, rints * sizeof(int), "Iallgather");
			free(s);
			free(b);
			free(x);
		}
	}
}

static void test_allgatherv(void)
{
	int *counts = alloc_ints((size_t)size), *displs = alloc_ints((size_t)size);

	for (int k = 0; k < 6; k++) {
		int inplace = k % 2, rvec = k >= 4, big = k == 2 || k == 3, me;
		size_t rints;
		int *s, *b, *x;
		MPI_Request r;

		v_layout(k, counts, displs);
		if (big) /* past the direct schedule: the ring */
			for (int i = 0; i < size; i++) {
				counts[i] *= 6000;
				displs[i] *= 6000;
			}
		rints = (size_t)size * 6 * (big ? 6000 : 1) * (rvec ? 3 : 1) + 8;
		me = counts[rank] * (rvec ? 2 : 1);
		s = alloc_ints((size_t)me + 1);
		fill(s, (size_t)me, k);
		two_rbufs(rints, &b, &x);
		if (inplace) {
			size_t at = (size_t)displs[rank] * (rvec ? 3 : 1);

			fill(b + at, (size_t)counts[rank] * (rvec ? 3 : 1), k);
			fill(x + at, (size_t)counts[rank] * (rvec ? 3 : 1), k);
		}
		MPI_OK(MPI_Allgatherv(inplace ? MPI_IN_PLACE : s, me, MPI_INT, b, counts, displs,
				      rvec ? vec : MPI_INT, MPI_COMM_WORLD));
		MPI_OK(MPI_Iallgatherv(inplace ? MPI_IN_PLACE : s, me, MPI_INT, x, counts, displs,
				       rvec ? vec : MPI_INT, MPI_COMM_WORLD, &r));
		complete(&r);
		same(b, x, rints * sizeof(int), "Iallgatherv");
		free(s);
		free(b);
		free(x);
	}
	free(counts);
	free(displs);
}

/* ---- alltoall
 * ------------------------------------------------------------------------------------- */

static void test_alltoall(void)
{
	/* 5000 ints = 20 KB a block: past the all-at-once schedule */
	static const int counts[] = {0, 1, 7, 5000};

	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		for (int k = 0; k < 3; k++) {
			int n = counts[c], inplace = k == 1, svec = k == 2;
			size_t ints = (size_t)n * size * 3;
			int *s = alloc_ints(ints), *b, *x;
			MPI_Request r;

			fill(s, ints, k);
			two_rbufs(ints, &b, &x);
			if (inplace) {
				fill(b, ints, k);
				fill(x, ints, k);
			}
			MPI_OK(MPI_Alltoall(inplace ? MPI_IN_PLACE : s, svec ? n / 2 : n,
					    svec ? vec : MPI_INT, b, svec ? n / 2 * 2 : n, MPI_INT,
					    MPI_COMM_WORLD));
			MPI_OK(MPI_Ialltoall(inplace ? MPI_IN_PLACE : s, svec ? n / 2 : n,
					     svec ? vec : MPI_INT, x, svec ? n / 2 * 2 : n, MPI_INT,
					     MPI_COMM_WORLD, &r));
			complete(&r);
			same(b, x, ints * sizeof(int), "Ialltoall");
			free(s);
			free(b);
			free(x);
		}
	}
}

/* Blocks of 1 MiB (256 KiB beyond 4 ranks), checked against their content. */
static void test_alltoall_large(void)
{
	size_t blk = size <= 4 ? 1 << 20 : 1 << 18;
	unsigned char *s = malloc(blk * size), *d = malloc(blk * size);
	MPI_Request r;

	CHECK(s && d, "out of memory");
	for (int i = 0; i < size; i++)
		mt_fill(s + blk * i, blk, rank, i);
	memset(d, 0, blk * size);
	MPI_OK(MPI_Ialltoall(s, (int)blk, MPI_BYTE, d, (int)blk, MPI_BYTE, MPI_COMM_WORLD, &r));
	complete(&r);
	for (int i = 0; i < size; i++) {
		long bad = mt_verify(d + blk * i, blk, i, rank);

		CHECK(bad < 0, "Ialltoall %zu-byte blocks: block from %d wrong at byte %ld", blk, i,
		      bad);
	}
	free(s);
	free(d);
}

static void test_alltoallv(void)
{
	int *sc = alloc_ints((size_t)size * 4), *sd = sc + size, *rc = sc + 2 * size,
	    *rd = sc + 3 * size;

	for (int k = 0; k < 6; k++) {
		int inplace = k % 2, big = k >= 4 ? 6000 : 1;
		size_t ints = (size_t)size * 6 * big + 8;
		int *s = alloc_ints(ints), *b, *x;
		MPI_Request r;

		for (int i = 0; i < size; i++) {
			/* rank a sends rank b as many as b receives from a */
			sc[i] = vcount(rank + i, k) * big;
			rc[i] = vcount(i + rank, k) * big;
			sd[i] = i * 6 * big;
			rd[i] = (size - 1 - i) * 6 * big;
		}
		if (inplace)
			memcpy(sd, rd, sizeof(int) * size);
		fill(s, ints, k);
		two_rbufs(ints, &b, &x);
		if (inplace) {
			fill(b, ints, k);
			fill(x, ints, k);
		}
		MPI_OK(MPI_Alltoallv(inplace ? MPI_IN_PLACE : s, sc, sd, MPI_INT, b, rc, rd,
				     MPI_INT, MPI_COMM_WORLD));
		MPI_OK(MPI_Ialltoallv(inplace ? MPI_IN_PLACE : s, sc, sd, MPI_INT, x, rc, rd,
				      MPI_INT, MPI_COMM_WORLD, &r));
		complete(&r);
		same(b, x, ints * sizeof(int), "Ialltoallv");
		free(s);
		free(b);
		free(x);
	}
	free(sc);
}

static void test_alltoallw(void)
{
	int *sc = alloc_ints((size_t)size * 4), *sd = sc + size, *rc = sc + 2 * size,
	    *rd = sc + 3 * size;
	MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * 2 * size), *rt = st + size;

	CHECK(st, "out of memory");
	for (int k = 0; k < 4; k++) {
		int inplace = k % 2;
		size_t ints = (size_t)size * 16 + 8;
		int *s = alloc_ints(ints), *b, *x;
		MPI_Request r;

		for (int i = 0; i < size; i++) {
			int n = vcount(rank + i, k); /* the same both ways */

			/* odd peers: vectors one side (two ints each), ints the other */
			st[i] = (i + k) % 2 ? vec : MPI_INT;
			rt[i] = inplace ? st[i] : ((i + k) % 2 ? MPI_INT : vec);
			sc[i] = st[i] == vec ? n : 2 * n;
			rc[i] = rt[i] == vec ? n : 2 * n;
			sd[i] = i * 16 * (int)sizeof(int);
			rd[i] = (size - 1 - i) * 16 * (int)sizeof(int);
		}
		if (inplace)
			memcpy(rc, sc, sizeof(int) * size);
		fill(s, ints, k);
		two_rbufs(ints, &b, &x);
		if (inplace) {
			fill(b, ints, k);
			fill(x, ints, k);
		}
		MPI_OK(MPI_Alltoallw(inplace ? MPI_IN_PLACE : s, sc, sd, st, b, rc, rd, rt,
				     MPI_COMM_WORLD));
		MPI_OK(MPI_Ialltoallw(inplace ? MPI_IN_PLACE : s, sc, sd, st, x, rc, rd, rt,
				      MPI_COMM_WORLD, &r));
		complete(&r);
		same(b, x, ints * sizeof(int), "Ialltoallw");
		free(s);
		free(b);
		free(x);
	}
	free(st);
	free(sc);
}

int main(int argc, char **argv)
{
	MPI_Datatype v;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
	MPI_OK(MPI_Type_create_resized(v, 0, 3 * sizeof(int), &vec));
	MPI_OK(MPI_Type_commit(&vec));
	MPI_OK(MPI_Type_free(&v));
	test_barrier();
	test_bcast();
	test_bcast_large();
	test_gather();
	test_gatherv();
	test_scatter();
	test_scatterv();
	test_allgather();
	test_allgatherv();
	test_alltoall();
	test_alltoall_large();
	test_alltoallv();
	test_alltoallw();
	MPI_OK(MPI_Type_free(&vec));
	MPI_OK(MPI_Finalize());
	return 0;
}
