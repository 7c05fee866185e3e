/* ibx-test: np=1,2 timeout=60 launchers=mpilite,ompi nodes=1 */
/*
 * dtype_darray — MPI_Type_create_darray against the rules of HPF's
 * distributions, worked out element by element: for many arrays (1 to 3
 * dimensions, C and Fortran order, BLOCK / CYCLIC(k) / NONE, default and
 * explicit dargs, process grids of 1 to 6) and every rank of each grid,
 * the type packed from an array holding each element's own index must
 * give exactly the elements that rank owns, in array order; the parts of
 * all ranks must cover the array once; lb 0, extent the whole array, size
 * what the rank owns; MPI_Type_get_contents returns the arguments. Also a
 * send of the type to ourselves, an old type of two ints, and the
 * refusals (grid of another size, NONE over two processes, a block too
 * small, bad distribution, darg, order).
 */
#include "mpitest.h"

#include <stdbool.h>
#include <string.h>

enum { MAXD = 3, MAXE = 9 * 9 * 9 };

typedef struct shape {
	int ndims, order, gs[MAXD], dist[MAXD], darg[MAXD], ps[MAXD];
} shape_t;

/* Which coordinate of the grid owns index @i of dimension @d. */
static int owner(const shape_t *s, int d, int i)
{
	int g = s->gs[d], p = s->ps[d], k = s->darg[d];

	switch (s->dist[d]) {
	case MPI_DISTRIBUTE_BLOCK: return i / (k == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : k);
	case MPI_DISTRIBUTE_CYCLIC: return i / (k == MPI_DISTRIBUTE_DFLT_DARG ? 1 : k) % p;
	default: return 0;
	}
}

/* The rank owning linear element @e (array order) of @s. */
static int owner_rank(const shape_t *s, int e)
{
	int idx[MAXD], r = 0;

	for (int k = 0; k < s->ndims; k++) { /* fastest dimension first */
		int d = s->order == MPI_ORDER_C ? s->ndims - 1 - k : k;

		idx[d] = e % s->gs[d];
		e /= s->gs[d];
	}
	for (int d = 0; d < s->ndims; d++) /* row-major grid */
		r = r * s->ps[d] + owner(s, d, idx[d]);
	return r;
}

static int nelems(const shape_t *s)
{
	int n = 1;

	for (int d = 0; d < s->ndims; d++)
		n *= s->gs[d];
	return n;
}

static void check_shape(const shape_t *s, MPI_Datatype old, int per)
{
	int n = nelems(s), size = 1, array[MAXE * 2], packed[MAXE * 2], covered[MAXE] = {0};

	for (int d = 0; d < s->ndims; d++)
		size *= s->ps[d];
	for (int e = 0; e < n * per; e++)
		array[e] = e;
	for (int r = 0; r < size; r++) {
		MPI_Datatype t;
		MPI_Aint lb, ext;
		int tsize, pos = 0, got = 0, ni, na, nd, comb, ints[4 * MAXD + 4];
		MPI_Datatype oldback;

		MPI_OK(MPI_Type_create_darray(size, r, s->ndims, s->gs, s->dist, s->darg, s->ps,
					      s->order, old, &t));
		MPI_OK(MPI_Type_commit(&t));
		MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
		CHECK(lb == 0 && ext == (MPI_Aint)n * per * (MPI_Aint)sizeof(int),
		      "rank %d of %d: lb %ld extent %ld, array of %d", r, size, (long)lb, (long)ext,
		      n);
		MPI_OK(MPI_Type_size(t, &tsize));
		MPI_OK(MPI_Pack(array, 1, t, packed, sizeof(packed), &pos, MPI_COMM_SELF));
		CHECK(pos == tsize, "packed %d bytes, size %d", pos, tsize);
		for (int e = 0; e < n; e++) {
			if (owner_rank(s, e) != r)
				continue;
			CHECK(got < tsize / (int)sizeof(int) / per,
			      "rank %d: more owned than packed", r);
			for (int j = 0; j < per; j++)
				CHECK(
				    packed[got * per + j] == e * per + j,
				    "rank %d of %d (ndims %d order %d): element %d is %d, want %d",
				    r, size, s->ndims, s->order, got, packed[got * per + j],
				    e * per + j);
			covered[e]++;
			got++;
		}
		CHECK(got * per * (int)sizeof(int) == tsize, "rank %d: owns %d, type has %d bytes",
		      r, got, tsize);
		MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
		CHECK(comb == MPI_COMBINER_DARRAY && ni == 4 * s->ndims + 4 && na == 0 && nd == 1,
		      "envelope %d %d %d %d", comb, ni, na, nd);
		MPI_OK(MPI_Type_get_contents(t, ni, 0, 1, ints, NULL, &oldback));
		CHECK(ints[0] == size && ints[1] == r && ints[2] == s->ndims &&
			  ints[3 + 4 * s->ndims] == s->order &&
			  !memcmp(&ints[3], s->gs, s->ndims * sizeof(int)) &&
			  !memcmp(&ints[3 + 2 * s->ndims], s->darg, s->ndims * sizeof(int)),
		      "contents differ");
		if (oldback != old)
			MPI_OK(MPI_Type_free(&oldback));
		MPI_OK(MPI_Type_free(&t));
	}
	for (int e = 0; e < n; e++)
		CHECK(covered[e] == 1, "element %d owned %d times", e, covered[e]);
}

/* Every shape from a small generator, deterministic. */
static void all_shapes(MPI_Datatype old, int per, int *count)
{
	static const int gridsz[][MAXD] = {{1, 1, 1}, {2, 1, 1}, {3, 1, 1}, {2, 2, 1},
					   {1, 3, 2}, {2, 3, 1}, {1, 1, 4}};
	unsigned seed = 12345;

	for (int ndims = 1; ndims <= MAXD; ndims++)
		for (int gi = 0; gi < (int)(sizeof(gridsz) / sizeof(gridsz[0])); gi++)
			for (int rep = 0; rep < 6; rep++) {
				shape_t s = {.ndims = ndims,
					     .order = rep % 2 ? MPI_ORDER_FORTRAN : MPI_ORDER_C};
				bool ok = true;

				for (int d = 0; d < ndims; d++) {
					seed = seed * 1103515245u + 12345u;
					s.ps[d] = gridsz[gi][d];
					s.gs[d] = 1 + (int)(seed >> 16) % 9;
					s.dist[d] = s.ps[d] == 1 && (seed >> 8) % 4 == 0
							? MPI_DISTRIBUTE_NONE
							: (int)((seed >> 4) % 2);
					s.darg[d] = (seed >> 12) % 3 == 0
							? MPI_DISTRIBUTE_DFLT_DARG
							: 1 + (int)((seed >> 20) % 4);
					if (s.dist[d] == MPI_DISTRIBUTE_BLOCK &&
					    s.darg[d] != MPI_DISTRIBUTE_DFLT_DARG &&
					    s.darg[d] * s.ps[d] < s.gs[d])
						s.darg[d] = MPI_DISTRIBUTE_DFLT_DARG;
				}
				for (int d = ndims; d < MAXD; d++)
					ok = ok && gridsz[gi][d] == 1;
				if (!ok)
					continue;
				check_shape(&s, old, per);
				(*count)++;
			}
}

static void refusals(void)
{
	int gs[2] = {8, 8}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
	    darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
	MPI_Datatype t;

	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_darray(5, 0, 2, gs, dist, darg, ps, MPI_ORDER_C,
						      MPI_INT, &t)); /* 4 in the grid */
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Type_create_darray(4, 4, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_darray(4, 0, 2, gs, dist, darg, ps, 7, MPI_INT, &t));
	dist[0] = MPI_DISTRIBUTE_NONE;
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Type_create_darray(4, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t));
	dist[0] = MPI_DISTRIBUTE_BLOCK;
	darg[0] = 3; /* 3 x 2 < 8 */
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Type_create_darray(4, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t));
	darg[0] = 0;
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Type_create_darray(4, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t));
	darg[0] = MPI_DISTRIBUTE_DFLT_DARG;
	dist[1] = 99;
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Type_create_darray(4, 0, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* The type on the wire: my part of a 6 x 7 array, cyclic(2) x block over
 * the world, sent to myself into a contiguous buffer. */
static void send_to_self(int rank, int size)
{
	int gs[2] = {6, 7}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
	    darg[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {size, 1}, a[42], b[42], n, tsize;
	MPI_Datatype t;
	shape_t s = {2,
		     MPI_ORDER_C,
		     {6, 7},
		     {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
		     {2, MPI_DISTRIBUTE_DFLT_DARG},
		     {size, 1}};

	for (int i = 0; i < 42; i++)
		a[i] = 1000 + i;
	MPI_OK(MPI_Type_create_darray(size, rank, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t));
	MPI_OK(MPI_Type_commit(&t));
	MPI_OK(MPI_Type_size(t, &tsize));
	MPI_OK(MPI_Sendrecv(a, 1, t, rank, 5, b, 42, MPI_INT, rank, 5, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE));
	n = 0;
	for (int e = 0; e < 42; e++)
		if (owner_rank(&s, e) == rank) {
			CHECK(b[n] == 1000 + e, "sent to self: [%d] = %d, want %d", n, b[n],
			      1000 + e);
			n++;
		}
	CHECK(n * (int)sizeof(int) == tsize, "sent %d elements, type of %d bytes", n, tsize);
	MPI_OK(MPI_Type_free(&t));
}

int main(int argc, char **argv)
{
	int rank, size, count = 0;
	MPI_Datatype two;

	mt_init(&argc, &argv, &rank, &size);
	all_shapes(MPI_INT, 1, &count);
	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &two));
	MPI_OK(MPI_Type_commit(&two));
	all_shapes(two, 2, &count);
	MPI_OK(MPI_Type_free(&two));
	refusals();
	send_to_self(rank, size);
	if (rank == 0)
		printf("dtype_darray: OK, %d arrays on every rank of their grids\n", count);
	MPI_OK(MPI_Finalize());
	return 0;
}
