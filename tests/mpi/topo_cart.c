/* ibx-test: np=1,2,3,4,6 timeout=120 nodes=1 */
/*
 * topo_cart — Cartesian topologies: MPI_Dims_create (balanced factors,
 * dimensions given in advance, what cannot be), MPI_Cart_create on grids
 * of one to three dimensions (a grid smaller than the communicator leaves
 * the last ranks out; a zero-dimensional one is rank 0 alone), the
 * queries (Topo_test, Cartdim_get, Cart_get, Cart_rank, Cart_coords),
 * MPI_Cart_shift in periodic and non-periodic dimensions (MPI_PROC_NULL
 * past the edges, wrapping, large displacements), messages along the
 * shifts, MPI_Cart_sub into rows, columns and single processes,
 * MPI_Cart_map, and the topology following MPI_Comm_dup / MPI_Comm_idup
 * and staying with the copy after the original is freed.
 */
#include "mpitest.h"

static int rank, size;

static void dims_case(int nnodes, int ndims, const int *given, const int *want)
{
	int d[8];

	memcpy(d, given, (size_t)ndims * sizeof(int));
	MPI_OK(MPI_Dims_create(nnodes, ndims, d));
	for (int i = 0; i < ndims; i++)
		CHECK(d[i] == want[i], "Dims_create(%d, %d): dims[%d] = %d, expected %d", nnodes,
		      ndims, i, d[i], want[i]);
}

static void test_dims_create(void)
{
	dims_case(6, 2, (int[]){0, 0}, (int[]){3, 2});
	dims_case(12, 3, (int[]){0, 3, 0}, (int[]){2, 3, 2});
	dims_case(16, 3, (int[]){0, 0, 0}, (int[]){4, 2, 2});
	dims_case(30, 3, (int[]){0, 0, 0}, (int[]){5, 3, 2});
	dims_case(24, 4, (int[]){0, 0, 0, 0}, (int[]){3, 2, 2, 2});
	dims_case(7, 3, (int[]){0, 0, 0}, (int[]){7, 1, 1});
	dims_case(1, 2, (int[]){0, 0}, (int[]){1, 1});
	dims_case(36, 2, (int[]){0, 0}, (int[]){6, 6});
	dims_case(40, 2, (int[]){0, 0}, (int[]){8, 5});
	dims_case(6, 2, (int[]){2, 3}, (int[]){2, 3}); /* nothing left to choose */
	dims_case(8, 3, (int[]){0, 1, 0}, (int[]){4, 1, 2});
	dims_case(1, 0, (int[]){0}, (int[]){0});
	/* balanced as MPICH: not the greedy 12 x 6, 20 x 18 x 14, 41 x 12 x 6 x 6 */
	dims_case(72, 2, (int[]){0, 0}, (int[]){9, 8});
	dims_case(1323, 2, (int[]){0, 0}, (int[]){49, 27});
	dims_case(5040, 3, (int[]){0, 0, 0}, (int[]){21, 16, 15});
	dims_case(17712, 4, (int[]){0, 0, 0, 0}, (int[]){41, 9, 8, 6});
	dims_case(1 << 30, 3, (int[]){0, 0, 0}, (int[]){1024, 1024, 1024});
	dims_case(2147483647, 2, (int[]){0, 0}, (int[]){2147483647, 1}); /* a prime */
	/* what cannot be: MPI_ERR_DIMS */
	int d[3] = {0, 5, 0};

	MPI_FAILS(MPI_ERR_DIMS, MPI_Dims_create(12, 2, (int[]){0, 5}));
	MPI_FAILS(MPI_ERR_DIMS, MPI_Dims_create(7, 2, (int[]){2, 3}));
	MPI_FAILS(MPI_ERR_DIMS, MPI_Dims_create(6, 2, (int[]){2, 2}));
	MPI_FAILS(MPI_ERR_DIMS, MPI_Dims_create(6, 0, d));
	CHECK(d[0] == 0 && d[1] == 5 && d[2] == 0, "a refused Dims_create changed dims");
	/* the common use: the world's size */
	int w[2] = {0, 0};

	MPI_OK(MPI_Dims_create(size, 2, w));
	CHECK(w[0] * w[1] == size && w[0] >= w[1], "Dims_create(%d, 2) = %d x %d", size, w[0],
	      w[1]);
}

/* Row-major coordinates of @r in @dims. */
static void coords_of(int r, int ndims, const int *dims, int *c)
{
	for (int i = ndims - 1; i >= 0; i--) {
		c[i] = r % dims[i];
		r /= dims[i];
	}
}

static int rank_of(int ndims, const int *dims, const int *c)
{
	int r = 0;

	for (int i = 0; i < ndims; i++)
		r = r * dims[i] + c[i];
	return r;
}

/* Everything a grid says about itself, checked against the arithmetic. */
static void check_grid(MPI_Comm cart, int ndims, const int *dims, const int *periods)
{
	int t, nd, d[3], p[3], c[3], want[3], r, cr, n = 1;

	MPI_OK(MPI_Topo_test(cart, &t));
	CHECK(t == MPI_CART, "Topo_test: %d, expected MPI_CART", t);
	MPI_OK(MPI_Cartdim_get(cart, &nd));
	CHECK(nd == ndims, "Cartdim_get: %d, expected %d", nd, ndims);
	MPI_OK(MPI_Comm_rank(cart, &cr));
	MPI_OK(MPI_Cart_get(cart, 3, d, p, c));
	coords_of(cr, ndims, dims, want);
	for (int i = 0; i < ndims; i++) {
		CHECK(d[i] == dims[i] && p[i] == (periods[i] != 0) && c[i] == want[i],
		      "Cart_get dim %d: dims %d periods %d coords %d, expected %d %d %d", i, d[i],
		      p[i], c[i], dims[i], periods[i] != 0, want[i]);
	}
	MPI_OK(MPI_Cart_rank(cart, c, &r));
	CHECK(r == cr, "Cart_rank of my coordinates: %d, expected %d", r, cr);
	for (int i = 0; i < ndims; i++)
		n *= dims[i];
	for (int q = 0; q < n; q++) {
		MPI_OK(MPI_Cart_coords(cart, q, 3, c));
		coords_of(q, ndims, dims, want);
		for (int i = 0; i < ndims; i++)
			CHECK(c[i] == want[i], "Cart_coords(%d)[%d] = %d, expected %d", q, i, c[i],
			      want[i]);
	}
}

/* The expected neighbour @disp steps along @dim of the grid, from @me. */
static int expect_shift(int ndims, const int *dims, const int *periods, int me, int dim,
			long long disp)
{
	int c[3];
	long long to;

	coords_of(me, ndims, dims, c);
	to = c[dim] + disp;
	if (periods[dim])
		to = ((to % dims[dim]) + dims[dim]) % dims[dim];
	else if (to < 0 || to >= dims[dim])
		return MPI_PROC_NULL;
	c[dim] = (int)to;
	return rank_of(ndims, dims, c);
}

static void check_shifts(MPI_Comm cart, int ndims, const int *dims, const int *periods)
{
	static const int disps[] = {1, -1, 0, 2, 3, -5, 7, 1000001};
	int me;

	MPI_OK(MPI_Comm_rank(cart, &me));
	for (int dim = 0; dim < ndims; dim++)
		for (size_t k = 0; k < sizeof(disps) / sizeof(disps[0]); k++) {
			int src, dst, disp = disps[k];

			MPI_OK(MPI_Cart_shift(cart, dim, disp, &src, &dst));
			CHECK(src == expect_shift(ndims, dims, periods, me, dim, -disp) &&
				  dst == expect_shift(ndims, dims, periods, me, dim, disp),
			      "Cart_shift(dim %d, disp %d) from %d: %d -> %d", dim, disp, me, src,
			      dst);
		}
	/* messages along dimension 0: each receives its source's rank */
	for (int dim = 0; dim < ndims; dim++) {
		int src, dst, got = -7;

		MPI_OK(MPI_Cart_shift(cart, dim, 1, &src, &dst));
		MPI_OK(MPI_Sendrecv(&me, 1, MPI_INT, dst, 40 + dim, &got, 1, MPI_INT, src, 40 + dim,
				    cart, MPI_STATUS_IGNORE));
		CHECK(got == (src == MPI_PROC_NULL ? -7 : src),
		      "shift message along %d from %d: got %d", dim, src, got);
	}
}

/* Creates, checks and frees the grid @dims / @periods on the world. */
static void grid_case(int ndims, const int *dims, const int *periods)
{
	MPI_Comm cart, dup;
	int n = 1, csize;

	for (int i = 0; i < ndims; i++)
		n *= dims[i];
	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 1, &cart));
	if (rank >= n) {
		CHECK(cart == MPI_COMM_NULL, "rank %d outside a grid of %d got a communicator",
		      rank, n);
		return;
	}
	CHECK(cart != MPI_COMM_NULL, "no communicator for rank %d of a %d-process grid", rank, n);
	MPI_OK(MPI_Comm_size(cart, &csize));
	CHECK(csize == n, "grid communicator of size %d, expected %d", csize, n);
	check_grid(cart, ndims, dims, periods);
	check_shifts(cart, ndims, dims, periods);
	/* a duplicate carries the topology, also once the original is gone */
	MPI_OK(MPI_Comm_dup(cart, &dup));
	MPI_OK(MPI_Comm_free(&cart));
	check_grid(dup, ndims, dims, periods);
	check_shifts(dup, ndims, dims, periods);
	MPI_OK(MPI_Comm_free(&dup));
}

static void test_grids(void)
{
	int d2[2] = {0, 0}, d3[3] = {0, 0, 0};

	grid_case(1, (int[]){size}, (int[]){1});
	grid_case(1, (int[]){size}, (int[]){0});
	MPI_OK(MPI_Dims_create(size, 2, d2));
	grid_case(2, d2, (int[]){1, 0});
	grid_case(2, d2, (int[]){0, 1});
	MPI_OK(MPI_Dims_create(size, 3, d3));
	grid_case(3, d3, (int[]){1, 1, 0});
	if (size > 1) /* smaller than the communicator */
		grid_case(1, (int[]){size - 1}, (int[]){1});
	if (size >= 4)
		grid_case(2, (int[]){2, size / 2}, (int[]){1, 1});
}

static void test_zero_dims(void)
{
	MPI_Comm cart;
	int t, nd, n, r;

	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &cart));
	if (rank != 0) {
		CHECK(cart == MPI_COMM_NULL, "a zero-dimensional grid holds rank 0 only");
		return;
	}
	MPI_OK(MPI_Comm_size(cart, &n));
	MPI_OK(MPI_Topo_test(cart, &t));
	MPI_OK(MPI_Cartdim_get(cart, &nd));
	MPI_OK(MPI_Cart_rank(cart, NULL, &r));
	CHECK(n == 1 && t == MPI_CART && nd == 0 && r == 0,
	      "zero-dimensional grid: size %d topo %d ndims %d rank %d", n, t, nd, r);
	MPI_OK(MPI_Comm_free(&cart));
}

/* Cart_sub of a d0 x d1 grid into rows, columns and points. */
static void test_sub(void)
{
	int dims[2] = {0, 0}, periods[2] = {1, 0}, c[2], sc[2], sd[2], sp[2];
	MPI_Comm cart, row, col, pt;
	int n, r, nd, sum, want = 0;

	MPI_OK(MPI_Dims_create(size, 2, dims));
	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
	MPI_OK(MPI_Cart_coords(cart, rank, 2, c));
	/* rows: dimension 1 kept */
	MPI_OK(MPI_Cart_sub(cart, (int[]){0, 1}, &row));
	MPI_OK(MPI_Comm_size(row, &n));
	MPI_OK(MPI_Comm_rank(row, &r));
	MPI_OK(MPI_Cart_get(row, 2, sd, sp, sc));
	MPI_OK(MPI_Cartdim_get(row, &nd));
	CHECK(n == dims[1] && r == c[1] && nd == 1 && sd[0] == dims[1] && sp[0] == 0 &&
		  sc[0] == c[1],
	      "row: size %d rank %d ndims %d dims %d periods %d coords %d", n, r, nd, sd[0], sp[0],
	      sc[0]);
	MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, row));
	for (int j = 0; j < dims[1]; j++)
		want += c[0] * dims[1] + j;
	CHECK(sum == want, "row members sum to %d, expected %d", sum, want);
	check_shifts(row, 1, (int[]){dims[1]}, (int[]){0});
	/* columns: dimension 0 kept, periodic */
	MPI_OK(MPI_Cart_sub(cart, (int[]){1, 0}, &col));
	MPI_OK(MPI_Comm_size(col, &n));
	MPI_OK(MPI_Comm_rank(col, &r));
	MPI_OK(MPI_Cart_get(col, 1, sd, sp, sc));
	CHECK(n == dims[0] && r == c[0] && sd[0] == dims[0] && sp[0] == 1,
	      "column: size %d rank %d dims %d periods %d", n, r, sd[0], sp[0]);
	MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, col));
	want = 0;
	for (int i = 0; i < dims[0]; i++)
		want += i * dims[1] + c[1];
	CHECK(sum == want, "column members sum to %d, expected %d", sum, want);
	check_shifts(col, 1, (int[]){dims[0]}, (int[]){1});
	/* nothing kept: every process alone, a zero-dimensional grid */
	MPI_OK(MPI_Cart_sub(cart, (int[]){0, 0}, &pt));
	MPI_OK(MPI_Comm_size(pt, &n));
	MPI_OK(MPI_Cartdim_get(pt, &nd));
	CHECK(n == 1 && nd == 0, "point: size %d ndims %d", n, nd);
	MPI_OK(MPI_Comm_free(&pt));
	MPI_OK(MPI_Comm_free(&col));
	MPI_OK(MPI_Comm_free(&row));
	MPI_OK(MPI_Comm_free(&cart));
}

static void test_map_and_idup(void)
{
	int nr, dims[2] = {0, 0}, periods[2] = {0, 0}, flag, t;
	MPI_Comm cart, dup;
	MPI_Request rq;
	MPI_Status st;

	MPI_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, (int[]){size}, (int[]){0}, &nr));
	CHECK(nr == rank, "Cart_map over the whole world: %d", nr);
	MPI_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, (int[]){1}, (int[]){0}, &nr));
	CHECK(nr == (rank == 0 ? 0 : MPI_UNDEFINED), "Cart_map onto one process: %d", nr);
	MPI_OK(MPI_Dims_create(size, 2, dims));
	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
	MPI_OK(MPI_Comm_idup(cart, &dup, &rq));
	MPI_OK(MPI_Wait(&rq, &st));
	CHECK(rq == MPI_REQUEST_NULL, "Comm_idup request not freed by MPI_Wait");
	MPI_OK(MPI_Test_cancelled(&st, &flag));
	CHECK(!flag, "Comm_idup status says cancelled");
	MPI_OK(MPI_Topo_test(dup, &t));
	CHECK(t == MPI_CART, "Comm_idup lost the topology (%d)", t);
	MPI_OK(MPI_Comm_free(&cart));
	check_grid(dup, 2, dims, periods);
	MPI_OK(MPI_Comm_free(&dup));
	MPI_OK(MPI_Topo_test(MPI_COMM_WORLD, &t));
	CHECK(t == MPI_UNDEFINED, "MPI_COMM_WORLD has a topology (%d)", t);
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	test_dims_create();
	test_grids();
	test_zero_dims();
	test_sub();
	test_map_and_idup();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("topo_cart: %d ranks OK\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
