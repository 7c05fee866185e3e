/* ibx-test: np=1,2,3,4,5 timeout=120 */
/*
 * coll_dtypes — collectives on derived datatypes: every user buffer of a
 * non-contiguous type goes through pack/unpack, only the type signatures
 * have to match between ranks, and the gaps of a strided receive buffer
 * stay untouched.
 *   - data movers (Bcast, Gather(v), Scatter(v), Allgather(v),
 *     Alltoall(v)) with a strided vector on one side and a contiguous type
 *     on the other, every root, in place where MPI allows it;
 *   - reductions of derived types made of one predefined type with
 *     predefined ops (a strided vector of doubles, contiguous ints, a
 *     contiguous run of MPI_DOUBLE_INT pairs for MAXLOC), every
 *     reduction collective;
 *   - a user op on a non-contiguous derived type (the user function gets
 *     that type and the user's layout), non-commutative, in rank order;
 *   - MPI_BOTTOM with absolute addresses.
 */
#include "mpitest.h"

#include <stdbool.h>

static int rank, size;

#define GAP (-7)

/* ---- data movers -------------------------------------------------------------------------- */

static void test_movers(void)
{
	enum { N = 50 }; /* ints per rank */
	MPI_Datatype strided, contig;
	int *vbuf = malloc(sizeof(int) * 2 * N * (size_t)size + 8);
	int *cbuf = malloc(sizeof(int) * N * (size_t)size + 8);
	int *cnt = malloc(sizeof(int) * (size_t)size), *dsp = malloc(sizeof(int) * (size_t)size);

	CHECK(vbuf && cbuf && cnt && dsp, "out of memory");
	/* N ints, every other one: extent (2N - 1) ints, resized to 2N so
	 * that consecutive elements interleave nothing */
	MPI_Datatype v0;

	MPI_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &v0));
	MPI_OK(MPI_Type_create_resized(v0, 0, (MPI_Aint)(2 * N * sizeof(int)), &strided));
	MPI_OK(MPI_Type_free(&v0));
	MPI_OK(MPI_Type_commit(&strided));
	MPI_OK(MPI_Type_contiguous(N, MPI_INT, &contig));
	MPI_OK(MPI_Type_commit(&contig));

	for (int root = 0; root < size; root++) {
		/* Bcast: root strided, others contiguous (same signature) */
		for (int i = 0; i < 2 * N; i++)
			vbuf[i] = rank == root ? (i % 2 ? GAP : root * 1000 + i / 2) : GAP;
		for (int i = 0; i < N; i++)
			cbuf[i] = -1;
		if (rank == root)
			MPI_OK(MPI_Bcast(vbuf, 1, strided, root, MPI_COMM_WORLD));
		else
			MPI_OK(MPI_Bcast(cbuf, N, MPI_INT, root, MPI_COMM_WORLD));
		for (int i = 0; rank != root && i < N; i++)
			CHECK(cbuf[i] == root * 1000 + i, "Bcast strided->contig root %d elem %d",
			      root, i);
		/* and the other way round */
		for (int i = 0; i < N; i++)
			cbuf[i] = root * 7 + i;
		for (int i = 0; i < 2 * N; i++)
			vbuf[i] = GAP;
		if (rank == root)
			MPI_OK(MPI_Bcast(cbuf, 1, contig, root, MPI_COMM_WORLD));
		else
			MPI_OK(MPI_Bcast(vbuf, 1, strided, root, MPI_COMM_WORLD));
		for (int i = 0; rank != root && i < 2 * N; i++)
			CHECK(vbuf[i] == (i % 2 ? GAP : root * 7 + i / 2),
			      "Bcast into strided, int %d", i);

		/* Gather: send strided, receive contiguous blocks; root in place */
		for (int inplace = 0; inplace < 2; inplace++) {
			bool ip = inplace && rank == root;

			for (int i = 0; i < 2 * N; i++)
				vbuf[i] = i % 2 ? GAP : rank * 100 + i / 2;
			for (int i = 0; i < N * size; i++)
				cbuf[i] = ip && i / N == root ? root * 100 + i % N : -1;
			MPI_OK(MPI_Gather(ip ? MPI_IN_PLACE : vbuf, 1, strided, cbuf, N, MPI_INT,
					  root, MPI_COMM_WORLD));
			for (int i = 0; rank == root && i < N * size; i++)
				CHECK(cbuf[i] == (i / N) * 100 + i % N,
				      "Gather%s strided->int root %d: %d", ip ? " in place" : "",
				      root, i);
		}
		/* Gather into strided blocks at the root: gaps untouched */
		int *big = malloc(sizeof(int) * 2 * N * (size_t)size);

		CHECK(big, "out of memory");
		for (int i = 0; i < 2 * N * size; i++)
			big[i] = GAP;
		for (int i = 0; i < N; i++)
			cbuf[i] = rank * 3 + i;
		MPI_OK(MPI_Gather(cbuf, N, MPI_INT, big, 1, strided, root, MPI_COMM_WORLD));
		for (int i = 0; rank == root && i < 2 * N * size; i++) {
			int r = i / (2 * N), k = i % (2 * N);

			CHECK(big[i] == (k % 2 ? GAP : r * 3 + k / 2),
			      "Gather into strided: int %d", i);
		}
		/* Scatter back out of the strided blocks into contiguous ones */
		for (int i = 0; i < N; i++)
			cbuf[i] = -1;
		MPI_OK(MPI_Scatter(big, 1, strided, cbuf, 1, contig, root, MPI_COMM_WORLD));
		for (int i = 0; i < N; i++)
			CHECK(cbuf[i] == rank * 3 + i, "Scatter from strided: int %d", i);
		/* Gatherv / Scatterv with strided receive/send blocks */
		for (int r = 0; r < size; r++) {
			cnt[r] = r % 2;
			dsp[r] = size - 1 - r;
		}
		for (int i = 0; i < 2 * N * size; i++)
			big[i] = GAP;
		for (int i = 0; i < N; i++)
			cbuf[i] = rank * 11 + i;
		MPI_OK(MPI_Gatherv(cbuf, cnt[rank] * N, MPI_INT, big, cnt, dsp, strided, root,
				   MPI_COMM_WORLD));
		for (int i = 0; rank == root && i < 2 * N * size; i++) {
			int blk = i / (2 * N), k = i % (2 * N), r = size - 1 - blk;

			CHECK(big[i] == (k % 2 || cnt[r] == 0 ? GAP : r * 11 + k / 2),
			      "Gatherv into strided: int %d", i);
		}
		for (int i = 0; i < N; i++)
			cbuf[i] = -1;
		MPI_OK(MPI_Scatterv(big, cnt, dsp, strided, cbuf, cnt[rank] * N, MPI_INT, root,
				    MPI_COMM_WORLD));
		for (int i = 0; i < N; i++)
			CHECK(cbuf[i] == (cnt[rank] ? rank * 11 + i : -1),
			      "Scatterv from strided: %d", i);
		free(big);
	}

	/* Allgather / Alltoall with strided send, strided receive, in place */
	int *big = malloc(sizeof(int) * 2 * N * (size_t)size);

	CHECK(big, "out of memory");
	for (int inplace = 0; inplace < 2; inplace++) {
		for (int i = 0; i < 2 * N * size; i++)
			big[i] = inplace && i / (2 * N) == rank && i % 2 == 0
				     ? rank * 5 + (i % (2 * N)) / 2
				     : GAP;
		for (int i = 0; i < 2 * N; i++)
			vbuf[i] = i % 2 ? GAP : rank * 5 + i / 2;
		MPI_OK(MPI_Allgather(inplace ? MPI_IN_PLACE : vbuf, 1, strided, big, 1, strided,
				     MPI_COMM_WORLD));
		for (int i = 0; i < 2 * N * size; i++) {
			int r = i / (2 * N), k = i % (2 * N);

			CHECK(big[i] == (k % 2 ? GAP : r * 5 + k / 2),
			      "Allgather%s strided: int %d", inplace ? " in place" : "", i);
		}
		for (int r = 0; r < size; r++) {
			cnt[r] = 1;
			dsp[r] = r;
		}
		MPI_OK(MPI_Allgatherv(inplace ? MPI_IN_PLACE : vbuf, 1, strided, big, cnt, dsp,
				      strided, MPI_COMM_WORLD));
		for (int i = 0; i < 2 * N * size; i++) {
			int r = i / (2 * N), k = i % (2 * N);

			CHECK(big[i] == (k % 2 ? GAP : r * 5 + k / 2), "Allgatherv strided: int %d",
			      i);
		}
		/* Alltoall: block j of rank r holds r * 1000 + j * 10 + k */
		int *src = inplace ? big : malloc(sizeof(int) * 2 * N * (size_t)size);

		CHECK(src, "out of memory");
		for (int i = 0; i < 2 * N * size; i++)
			src[i] = i % 2 ? GAP : rank * 1000 + (i / (2 * N)) * 10 + (i % (2 * N)) / 2;
		if (!inplace)
			for (int i = 0; i < 2 * N * size; i++)
				big[i] = GAP;
		MPI_OK(MPI_Alltoall(inplace ? MPI_IN_PLACE : src, 1, strided, big, 1, strided,
				    MPI_COMM_WORLD));
		for (int i = 0; i < 2 * N * size; i++) {
			int r = i / (2 * N), k = i % (2 * N);

			CHECK(big[i] == (k % 2 ? GAP : r * 1000 + rank * 10 + k / 2),
			      "Alltoall%s strided: int %d", inplace ? " in place" : "", i);
		}
		/* Alltoallv: strided out, contiguous in */
		for (int i = 0; i < 2 * N * size; i++)
			src[i] = i % 2 ? GAP : rank * 1000 + (i / (2 * N)) * 10 + (i % (2 * N)) / 2;
		int *rc = malloc(sizeof(int) * (size_t)size),
		    *rd = malloc(sizeof(int) * (size_t)size);
		int *out = malloc(sizeof(int) * N * (size_t)size);

		CHECK(rc && rd && out, "out of memory");
		for (int r = 0; r < size; r++) {
			cnt[r] = 1;
			dsp[r] = r;
			rc[r] = N;
			rd[r] = (size - 1 - r) * N;
		}
		MPI_OK(MPI_Alltoallv(src, cnt, dsp, strided, out, rc, rd, MPI_INT, MPI_COMM_WORLD));
		for (int r = 0; r < size; r++)
			for (int k = 0; k < N; k++)
				CHECK(out[(size - 1 - r) * N + k] == r * 1000 + rank * 10 + k,
				      "Alltoallv strided->int from %d elem %d", r, k);
		free(rc);
		free(rd);
		free(out);
		if (!inplace)
			free(src);
	}
	free(big);
	MPI_OK(MPI_Type_free(&strided));
	MPI_OK(MPI_Type_free(&contig));
	free(vbuf);
	free(cbuf);
	free(cnt);
	free(dsp);
}

/* ---- reductions with predefined ops --------------------------------------------------------- */

static void test_reductions(void)
{
	enum { E = 4, C = 600 }; /* doubles per element (every other one), elements */
	MPI_Datatype dv, v0, i3, pairs;
	double *in = malloc(sizeof(double) * 2 * E * (C + 1) * (size_t)size);
	double *out = malloc(sizeof(double) * 2 * E * (C + 1) * (size_t)size);

	CHECK(in && out, "out of memory");
	MPI_OK(MPI_Type_vector(E, 1, 2, MPI_DOUBLE, &v0));
	MPI_OK(MPI_Type_create_resized(v0, 0, (MPI_Aint)(2 * E * sizeof(double)), &dv));
	MPI_OK(MPI_Type_free(&v0));
	MPI_OK(MPI_Type_commit(&dv));

	/* value of double k (of the packed stream) on rank r */
	for (int kind = 0; kind < 5; kind++) {
		for (int inplace = 0; inplace < 2; inplace++) {
			int n = kind == 3 ? C / size + 1 : C, tot = kind == 3 ? n * size : n;

			for (int i = 0; i < 2 * E * tot; i++) {
				in[i] = i % 2 ? GAP : (double)((rank + i / 2) % 7);
				out[i] = inplace ? in[i] : GAP;
			}
			void *sb = inplace ? MPI_IN_PLACE : (void *)in;

			switch (kind) {
			case 0:
				MPI_OK(MPI_Allreduce(sb, out, n, dv, MPI_SUM, MPI_COMM_WORLD));
				break;
			case 1:
				if (inplace && rank != 0) /* in place at the root only */
					sb = in;
				MPI_OK(MPI_Reduce(sb, out, n, dv, MPI_SUM, 0, MPI_COMM_WORLD));
				break;
			case 2: MPI_OK(MPI_Scan(sb, out, n, dv, MPI_SUM, MPI_COMM_WORLD)); break;
			case 3:
				MPI_OK(MPI_Reduce_scatter_block(sb, out, n, dv, MPI_SUM,
								MPI_COMM_WORLD));
				break;
			default: MPI_OK(MPI_Exscan(sb, out, n, dv, MPI_MAX, MPI_COMM_WORLD)); break;
			}
			int lo = 0, hi = size, first = 0, check = 1;

			if (kind == 1 && rank != 0)
				check = 0;
			if (kind == 2)
				hi = rank + 1;
			if (kind == 3)
				first = rank * n * 2 * E;
			if (kind == 4) {
				hi = rank;
				check = rank > 0;
			}
			for (int i = 0; check && i < 2 * E * n; i++) {
				int g = first + i;
				double e = 0;

				for (int r = lo; r < hi; r++) {
					double x = (double)((r + g / 2) % 7);

					e = kind == 4 ? (r == lo || x > e ? x : e) : e + x;
				}
				CHECK(out[i] == (i % 2 ? GAP : e),
				      "reduction %d%s of strided doubles: %d = %g", kind,
				      inplace ? " in place" : "", i, out[i]);
			}
		}
	}

	/* contiguous(3, MPI_INT) with MPI_MAX: the direct path */
	int a[3 * 10], b[3 * 10];

	MPI_OK(MPI_Type_contiguous(3, MPI_INT, &i3));
	MPI_OK(MPI_Type_commit(&i3));
	for (int i = 0; i < 30; i++)
		a[i] = (rank * 13 + i * 7) % 23;
	MPI_OK(MPI_Allreduce(a, b, 10, i3, MPI_MAX, MPI_COMM_WORLD));
	for (int i = 0; i < 30; i++) {
		int e = 0;

		for (int r = 0; r < size; r++)
			e = (r * 13 + i * 7) % 23 > e ? (r * 13 + i * 7) % 23 : e;
		CHECK(b[i] == e, "Allreduce contiguous(3, MPI_INT) MAX: %d", i);
	}
	MPI_OK(MPI_Type_free(&i3));

	/* 5 MPI_DOUBLE_INT pairs per element (padded pairs) with MAXLOC */
	struct {
		double v;
		int i;
	} pin[5 * 8], pout[5 * 8];

	MPI_OK(MPI_Type_contiguous(5, MPI_DOUBLE_INT, &pairs));
	MPI_OK(MPI_Type_commit(&pairs));
	for (int i = 0; i < 40; i++) {
		pin[i].v = (double)((rank + i) % 3);
		pin[i].i = rank;
	}
	MPI_OK(MPI_Allreduce(pin, pout, 8, pairs, MPI_MAXLOC, MPI_COMM_WORLD));
	for (int i = 0; i < 40; i++) {
		double best = -1;
		int where = -1;

		for (int r = 0; r < size; r++)
			if ((double)((r + i) % 3) > best) {
				best = (double)((r + i) % 3);
				where = r;
			}
		CHECK(pout[i].v == best && pout[i].i == where, "MAXLOC on pairs: %d", i);
	}
	MPI_OK(MPI_Type_free(&pairs));
	MPI_OK(MPI_Type_free(&dv));
	free(in);
	free(out);
}

/* ---- a user op on a non-contiguous type ------------------------------------------------------ */

/* An affine map a t + b stored as int a, a gap int, int b, a gap int: the
 * type is vector(2, 1, 2, MPI_INT) resized to 16 bytes. */
typedef struct {
	int a, gap1, b, gap2;
} aff_t;

static MPI_Datatype aff_type;
static int aff_bad_type;

static void aff_op(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
	const aff_t *x = invec;
	aff_t *y = inoutvec;

	if (*dt != aff_type)
		aff_bad_type++;
	for (int i = 0; i < *len; i++) {
		unsigned a = (unsigned)x[i].a * (unsigned)y[i].a;
		unsigned b = (unsigned)y[i].a * (unsigned)x[i].b + (unsigned)y[i].b;

		y[i].a = (int)a;
		y[i].b = (int)b;
	}
}

static aff_t aff_of(int r, int i)
{
	return (aff_t){2 * ((r + i) % 5) + 1, GAP, r * 3 + i, GAP};
}

static aff_t aff_fold(int lo, int hi, int i)
{
	aff_t e = aff_of(lo, i);

	for (int r = lo + 1; r < hi; r++) {
		aff_t x = aff_of(r, i);
		unsigned a = (unsigned)e.a * (unsigned)x.a,
			 b = (unsigned)x.a * (unsigned)e.b + (unsigned)x.b;

		e.a = (int)a;
		e.b = (int)b;
	}
	return e;
}

static void test_user_op(void)
{
	enum { N = 700 };
	MPI_Datatype v0;
	MPI_Op op;
	aff_t *in = malloc(sizeof(aff_t) * N * (size_t)size),
	      *out = malloc(sizeof(aff_t) * N * (size_t)size);

	CHECK(in && out, "out of memory");
	MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v0));
	MPI_OK(MPI_Type_create_resized(v0, 0, sizeof(aff_t), &aff_type));
	MPI_OK(MPI_Type_free(&v0));
	MPI_OK(MPI_Type_commit(&aff_type));
	MPI_OK(MPI_Op_create(aff_op, 0, &op));
	for (int kind = 0; kind < 5; kind++) {
		int n = kind == 3 ? N / size : N, tot = kind == 3 ? n * size : n;

		for (int i = 0; i < tot; i++) {
			in[i] = aff_of(rank, i);
			out[i] = (aff_t){-1, 12345, -1, 54321};
		}
		switch (kind) {
		case 0: MPI_OK(MPI_Allreduce(in, out, n, aff_type, op, MPI_COMM_WORLD)); break;
		case 1:
			MPI_OK(MPI_Reduce(in, out, n, aff_type, op, size - 1, MPI_COMM_WORLD));
			break;
		case 2: MPI_OK(MPI_Scan(in, out, n, aff_type, op, MPI_COMM_WORLD)); break;
		case 3:
			MPI_OK(MPI_Reduce_scatter_block(in, out, n, aff_type, op, MPI_COMM_WORLD));
			break;
		default: MPI_OK(MPI_Exscan(in, out, n, aff_type, op, MPI_COMM_WORLD)); break;
		}
		int hi = kind == 2   ? rank + 1
			 : kind == 4 ? rank
				     : size,
		    first = kind == 3 ? rank * n : 0;
		bool check = !(kind == 1 && rank != size - 1) && hi > 0;

		for (int i = 0; i < n; i++) {
			CHECK(out[i].gap1 == 12345 && out[i].gap2 == 54321,
			      "user op on a derived type, collective %d: gap of element %d written",
			      kind, i);
			if (!check)
				continue;
			aff_t e = aff_fold(0, hi, first + i);

			CHECK(out[i].a == e.a && out[i].b == e.b,
			      "user op on a derived type, collective %d: element %d out of order",
			      kind, i);
		}
	}
	CHECK(aff_bad_type == 0, "the user function got another datatype %d times", aff_bad_type);
	MPI_OK(MPI_Op_free(&op));
	MPI_OK(MPI_Type_free(&aff_type));
	free(in);
	free(out);
}

/* ---- MPI_BOTTOM --------------------------------------------------------------------------------
 */

static void test_bottom(void)
{
	static double x[4];
	static int y[3];
	MPI_Aint ax, ay;
	MPI_Datatype abs_t, abs_d;
	int bl[2] = {4, 3};
	MPI_Aint disp[2];
	MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};

	MPI_OK(MPI_Get_address(x, &ax));
	MPI_OK(MPI_Get_address(y, &ay));
	disp[0] = ax;
	disp[1] = ay;
	MPI_OK(MPI_Type_create_struct(2, bl, disp, types, &abs_t));
	MPI_OK(MPI_Type_commit(&abs_t));
	for (int i = 0; i < 4; i++)
		x[i] = rank == 0 ? 1.5 * i : -1;
	for (int i = 0; i < 3; i++)
		y[i] = rank == 0 ? 10 + i : -1;
	MPI_OK(MPI_Bcast(MPI_BOTTOM, 1, abs_t, 0, MPI_COMM_WORLD));
	for (int i = 0; i < 4; i++)
		CHECK(x[i] == 1.5 * i, "Bcast MPI_BOTTOM: x[%d] = %g", i, x[i]);
	for (int i = 0; i < 3; i++)
		CHECK(y[i] == 10 + i, "Bcast MPI_BOTTOM: y[%d] = %d", i, y[i]);
	/* an absolute type of doubles only: reducible with MPI_SUM */
	MPI_OK(MPI_Type_create_hindexed(1, bl, disp, MPI_DOUBLE, &abs_d));
	MPI_OK(MPI_Type_commit(&abs_d));
	for (int i = 0; i < 4; i++)
		x[i] = rank + i;
	MPI_OK(MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, abs_d, MPI_SUM, MPI_COMM_WORLD));
	for (int i = 0; i < 4; i++)
		CHECK(x[i] == size * (size - 1) / 2 + size * i, "Allreduce MPI_BOTTOM: x[%d] = %g",
		      i, x[i]);
	MPI_OK(MPI_Type_free(&abs_t));
	MPI_OK(MPI_Type_free(&abs_d));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	test_movers();
	test_reductions();
	test_user_op();
	test_bottom();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("coll_dtypes: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
