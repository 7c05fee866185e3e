/* ibx-test: np=1,2,3,4,5,7 timeout=240 */
/*
 * nbc_reduce — MPI_Ireduce, MPI_Iallreduce, MPI_Iscan, MPI_Iexscan,
 * MPI_Ireduce_scatter and MPI_Ireduce_scatter_block against their
 * blocking twins (tested on their own), byte for byte over the whole
 * receive buffer, for every root and with and without MPI_IN_PLACE, on:
 *
 *   MPI_INT with MPI_SUM, MPI_2INT with MPI_MAXLOC (a pair type), a
 *   strided vector of ints with MPI_SUM (reduced through a work copy), a
 *   contiguous type of 3 ints with MPI_BXOR, and a user operation that
 *   is not commutative — composition of affine maps x -> a x + b — on
 *   MPI_2INT, on a contiguous pair type and on a strided pair type (the
 *   user function gets the user's layout), where any operand out of
 *   rank order changes the result.
 *
 * Counts run from zero to 1000 elements, and 1 MiB of MPI_INT for
 * Iallreduce. Operations and derived types are freed while the requests
 * that use them are still active (types only where the user op does not
 * query them).
 */
#include "mpitest.h"

static int rank, size;

enum { SENTINEL = 0x5a, P = 10007 };

/* ---- the affine maps ------------------------------------------------------------------------- */

/* inout[i] = in[i] o inout[i]: (a1, b1) o (a2, b2) = (a1 a2, a1 b2 + b1) mod P.
 * Pairs are contiguous (extent 2 ints) or 2 ints apart (extent 3 ints). */
static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	MPI_Aint lb, extent;
	int *x = in, *y = inout, stride, second;

	MPI_OK(MPI_Type_get_extent(*dt, &lb, &extent));
	stride = (int)(extent / (MPI_Aint)sizeof(int));
	second = stride == 3 ? 2 : 1;

	for (int i = 0; i < *len; i++) {
		int *a = x + i * stride, *b = y + i * stride;
		long a1 = a[0], b1 = a[second], a2 = b[0], b2 = b[second];

		b[0] = (int)(a1 * a2 % P);
		b[second] = (int)((a1 * b2 + b1) % P);
	}
}

/* ---- configurations -------------------------------------------------------------------------- */

typedef struct cfg {
	const char *name;
	MPI_Datatype dt;
	MPI_Op op;
	int ints; /* extent in ints */
	int user; /* the op is created (and freed) per call */
	int commute;
} cfg_t;

static cfg_t cfgs[8];
static int ncfg;

static void add_cfg(const char *name, MPI_Datatype dt, MPI_Op op, int ints, int user)
{
	cfgs[ncfg++] = (cfg_t){name, dt, op, ints, user, !user};
}

/* The datatype of one call: derived ones are a fresh copy, freed (by
 * drop_type) while the call is still running — except for the user op,
 * which asks its datatype argument for its extent (mpi-lite refuses
 * queries on a handle the user has freed). */
static MPI_Datatype use_type(const cfg_t *c, int *fresh)
{
	MPI_Datatype t;
	int ni, na, nd, comb;

	MPI_OK(MPI_Type_get_envelope(c->dt, &ni, &na, &nd, &comb));
	*fresh = comb != MPI_COMBINER_NAMED && !c->user;
	if (!*fresh)
		return c->dt;
	MPI_OK(MPI_Type_dup(c->dt, &t));
	MPI_OK(MPI_Type_commit(&t));
	return t;
}

static void drop_type(MPI_Datatype *t, int fresh)
{
	if (fresh)
		MPI_OK(MPI_Type_free(t));
}

static MPI_Op user_op(void)
{
	MPI_Op op;

	MPI_OK(MPI_Op_create(affine, 0, &op));
	return op;
}

/* Every int in [1, P): valid for every op here (no overflow). */
static void fill(int *b, size_t n, int salt)
{
	for (size_t i = 0; i < n; i++)
		b[i] = 1 + (int)(((size_t)rank * 7919u + i * 131u + (size_t)salt * 17u) % (P - 1));
}

static int *alloc_ints(size_t n)
{
	int *p = malloc((n + 1) * sizeof(int));

	CHECK(p, "out of memory (%zu ints)", n);
	return p;
}

static void two_rbufs(size_t n, int **a, int **b)
{
	*a = alloc_ints(n);
	*b = alloc_ints(n);
	memset(*a, SENTINEL, (n + 1) * sizeof(int));
	memset(*b, SENTINEL, (n + 1) * sizeof(int));
}

static void same(const void *a, const void *b, size_t n, const char *what, const cfg_t *c,
		 int count)
{
	const unsigned char *x = a, *y = b;

	for (size_t i = 0; i < n; i++)
		CHECK(x[i] == y[i], "%s on %s, count %d: byte %zu differs (%02x, %02x)", what,
		      c->name, count, i, x[i], y[i]);
}

static void wait_req(MPI_Request *r, int k)
{
	int flag = 0;

	if (k % 2) {
		MPI_OK(MPI_Wait(r, MPI_STATUS_IGNORE));
		return;
	}
	while (!flag)
		MPI_OK(MPI_Test(r, &flag, MPI_STATUS_IGNORE));
}

/* ---- the reductions
 * -------------------------------------------------------------------------------- */

static void test_reduce(const cfg_t *c, int n)
{
	for (int root = 0; root < size; root++) {
		for (int k = 0; k < 2; k++) {
			int inplace = k && rank == root;
			size_t ints = (size_t)n * c->ints;
			int *s = alloc_ints(ints), *b, *x;
			MPI_Op op = c->user ? user_op() : c->op;
			MPI_Request r;
			int fresh;
			MPI_Datatype dt = use_type(c, &fresh);

			fill(s, ints, root);
			two_rbufs(ints, &b, &x);
			if (inplace) {
				memcpy(b, s, ints * sizeof(int));
				memcpy(x, s, ints * sizeof(int));
			}
			MPI_OK(MPI_Reduce(inplace ? MPI_IN_PLACE : s, b, n, c->dt, op, root,
					  MPI_COMM_WORLD));
			MPI_OK(MPI_Ireduce(inplace ? MPI_IN_PLACE : s, x, n, dt, op, root,
					   MPI_COMM_WORLD, &r));
			if (c->user)
				MPI_OK(MPI_Op_free(&op)); /* while the request is active */
			drop_type(&dt, fresh);
			wait_req(&r, k + root);
			if (rank == root)
				same(b, x, ints * sizeof(int), "Ireduce", c, n);
			free(s);
			free(b);
			free(x);
		}
	}
}

/* kind 0: allreduce, 1: scan, 2: exscan */
static void test_all(const cfg_t *c, int n, int kind)
{
	static const char *names[] = {"Iallreduce", "Iscan", "Iexscan"};

	for (int k = 0; k < 2; k++) {
		int inplace = k;
		size_t ints = (size_t)n * c->ints;
		int *s = alloc_ints(ints), *b, *x;
		MPI_Op op = c->user ? user_op() : c->op;
		MPI_Request r;
		int fresh;
		MPI_Datatype dt = use_type(c, &fresh);

		fill(s, ints, kind);
		two_rbufs(ints, &b, &x);
		if (inplace) {
			memcpy(b, s, ints * sizeof(int));
			memcpy(x, s, ints * sizeof(int));
		}
		if (kind == 0) {
			MPI_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : s, b, n, c->dt, op,
					     MPI_COMM_WORLD));
			MPI_OK(MPI_Iallreduce(inplace ? MPI_IN_PLACE : s, x, n, dt, op,
					      MPI_COMM_WORLD, &r));
		} else if (kind == 1) {
			MPI_OK(
			    MPI_Scan(inplace ? MPI_IN_PLACE : s, b, n, c->dt, op, MPI_COMM_WORLD));
			MPI_OK(MPI_Iscan(inplace ? MPI_IN_PLACE : s, x, n, dt, op, MPI_COMM_WORLD,
					 &r));
		} else {
			MPI_OK(MPI_Exscan(inplace ? MPI_IN_PLACE : s, b, n, c->dt, op,
					  MPI_COMM_WORLD));
			MPI_OK(MPI_Iexscan(inplace ? MPI_IN_PLACE : s, x, n, dt, op, MPI_COMM_WORLD,
					   &r));
		}
		if (c->user)
			MPI_OK(MPI_Op_free(&op)); /* while the request is active */
		drop_type(&dt, fresh);
		wait_req(&r, k + kind);
		if (!(kind == 2 && rank == 0)) /* undefined there */
			same(b, x, ints * sizeof(int), names[kind], c, n);
		free(s);
		free(b);
		free(x);
	}
}

static void test_reduce_scatter(const cfg_t *c, int n, int block)
{
	int *counts = alloc_ints((size_t)size), total = 0;

	for (int i = 0; i < size; i++) {
		counts[i] = block ? n : (i + n) % 3 * n;
		total += counts[i];
	}
	for (int k = 0; k < 2; k++) {
		int inplace = k, mine = counts[rank];
		size_t ints = (size_t)total * c->ints;
		int *s = alloc_ints(ints), *b, *x;
		MPI_Op op = c->user ? user_op() : c->op;
		MPI_Request r;
		int fresh;
		MPI_Datatype dt = use_type(c, &fresh);

		fill(s, ints, 5);
		two_rbufs(ints, &b, &x);
		if (inplace) {
			memcpy(b, s, ints * sizeof(int));
			memcpy(x, s, ints * sizeof(int));
		}
		if (block) {
			MPI_OK(MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : s, b, n, c->dt, op,
							MPI_COMM_WORLD));
			MPI_OK(MPI_Ireduce_scatter_block(inplace ? MPI_IN_PLACE : s, x, n, dt, op,
							 MPI_COMM_WORLD, &r));
		} else {
			MPI_OK(MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : s, b, counts, c->dt, op,
						  MPI_COMM_WORLD));
			MPI_OK(MPI_Ireduce_scatter(inplace ? MPI_IN_PLACE : s, x, counts, dt, op,
						   MPI_COMM_WORLD, &r));
		}
		if (c->user)
			MPI_OK(MPI_Op_free(&op)); /* while the request is active */
		drop_type(&dt, fresh);
		wait_req(&r, k);
		/* in place, what follows our block is scratch */
		same(b, x, (inplace ? (size_t)mine * c->ints : ints) * sizeof(int),
		     block ? "Ireduce_scatter_block" : "Ireduce_scatter", c, n);
		free(s);
		free(b);
		free(x);
	}
	free(counts);
}

/* 1 MiB of ints, checked against the sum each rank computes. */
static void test_allreduce_large(void)
{
	size_t n = (1 << 20) / sizeof(int);
	int *s = alloc_ints(n), *d = alloc_ints(n);
	MPI_Request r;

	for (size_t i = 0; i < n; i++)
		s[i] = rank + (int)(i % 1000);
	MPI_OK(MPI_Iallreduce(s, d, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
	MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	for (size_t i = 0; i < n; i++)
		CHECK(d[i] == size * (size - 1) / 2 + size * (int)(i % 1000),
		      "Iallreduce 1 MiB: element %zu is %d", i, d[i]);
	free(s);
	free(d);
}

int main(int argc, char **argv)
{
	static const int counts[] = {0, 1, 5, 1000};
	MPI_Datatype vec, vpair, contig3, pair2, v;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
	MPI_OK(MPI_Type_create_resized(v, 0, 3 * sizeof(int), &vec));
	MPI_OK(MPI_Type_commit(&vec));
	MPI_OK(MPI_Type_dup(vec, &vpair));
	MPI_OK(MPI_Type_commit(&vpair));
	MPI_OK(MPI_Type_free(&v));
	MPI_OK(MPI_Type_contiguous(3, MPI_INT, &contig3));
	MPI_OK(MPI_Type_commit(&contig3));
	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair2));
	MPI_OK(MPI_Type_commit(&pair2));
	add_cfg("MPI_INT/MPI_SUM", MPI_INT, MPI_SUM, 1, 0);
	add_cfg("MPI_2INT/MPI_MAXLOC", MPI_2INT, MPI_MAXLOC, 2, 0);
	add_cfg("vector/MPI_SUM", vec, MPI_SUM, 3, 0);
	add_cfg("contiguous(3)/MPI_BXOR", contig3, MPI_BXOR, 3, 0);
	add_cfg("MPI_2INT/affine", MPI_2INT, MPI_OP_NULL, 2, 1);
	add_cfg("contiguous(2)/affine", pair2, MPI_OP_NULL, 2, 1);
	add_cfg("strided pair/affine", vpair, MPI_OP_NULL, 3, 1);
	for (int c = 0; c < ncfg; c++) {
		for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
			int n = counts[i];

			test_reduce(&cfgs[c], n);
			test_all(&cfgs[c], n, 0);
			test_all(&cfgs[c], n, 1);
			test_all(&cfgs[c], n, 2);
			test_reduce_scatter(&cfgs[c], n, 0);
			test_reduce_scatter(&cfgs[c], n, 1);
		}
	}
	test_allreduce_large();
	MPI_OK(MPI_Type_free(&vec));
	MPI_OK(MPI_Type_free(&vpair));
	MPI_OK(MPI_Type_free(&contig3));
	MPI_OK(MPI_Type_free(&pair2));
	MPI_OK(MPI_Finalize());
	return 0;
}
