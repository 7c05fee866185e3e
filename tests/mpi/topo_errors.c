/* ibx-test: np=1,2,3,4 timeout=90 nodes=1 */
/*
 * topo_errors — the error classes of the topology functions, the
 * neighbourhood collectives and the other calls of this family, under
 * MPI_ERRORS_RETURN, raised on the communicator's error handler (a user
 * handler on a grid sees them with that grid):
 *   MPI_ERR_TOPOLOGY  a topology query or neighbourhood collective on a
 *                     communicator without that kind of topology
 *   MPI_ERR_COMM      MPI_COMM_NULL
 *   MPI_ERR_DIMS      MPI_Dims_create asked the impossible or given a
 *                     negative size, a dimension of size 0, a shift
 *                     direction that is no dimension
 *   MPI_ERR_ARG       grids larger than the communicator, negative ndims
 *                     or degrees, coordinates outside a non-periodic
 *                     dimension, maxdims too small, NULL arrays, malformed
 *                     graphs, negative weights, MPI_UNWEIGHTED on one side
 *   MPI_ERR_RANK      ranks outside the communicator or the graph
 *   MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_BUFFER  in the neighbourhood
 *                     collectives and MPI_Alltoallw
 * Every refused collective call is refused on every rank alike, so no rank
 * is left waiting; the communicators still work afterwards.
 */
#include "mpitest.h"

static int rank, size;
static int handler_calls;
static MPI_Comm handler_comm;

static void count_errors(MPI_Comm *comm, int *code, ...)
{
	handler_calls++;
	handler_comm = *comm;
}

static void test_no_topology(void)
{
	MPI_Comm W = MPI_COMM_WORLD;
	int c[4] = {0}, r, a, b, d[4], p[4], buf[8];
	MPI_Comm sub;

	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_coords(W, 0, 1, c));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_rank(W, c, &r));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_shift(W, 0, 1, &a, &b));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_get(W, 4, d, p, c));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Cartdim_get(W, &r));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_sub(W, (int[]){1}, &sub));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Graphdims_get(W, &a, &b));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Graph_get(W, 4, 4, d, p));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Graph_neighbors_count(W, 0, &r));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Graph_neighbors(W, 0, 4, d));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Dist_graph_neighbors_count(W, &a, &b, &r));
	MPI_FAILS(MPI_ERR_TOPOLOGY,
		  MPI_Dist_graph_neighbors(W, 4, d, MPI_UNWEIGHTED, 4, p, MPI_UNWEIGHTED));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Neighbor_allgather(buf, 1, MPI_INT, buf, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Neighbor_alltoall(buf, 1, MPI_INT, buf, 1, MPI_INT, W));
	/* MPI_COMM_NULL */
	MPI_FAILS(MPI_ERR_COMM, MPI_Topo_test(MPI_COMM_NULL, &r));
	MPI_FAILS(MPI_ERR_COMM, MPI_Cart_create(MPI_COMM_NULL, 1, (int[]){1}, (int[]){0}, 0, &sub));
	MPI_FAILS(MPI_ERR_COMM, MPI_Cartdim_get(MPI_COMM_NULL, &r));
	MPI_FAILS(MPI_ERR_COMM,
		  MPI_Neighbor_alltoall(buf, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_COMM,
		  MPI_Dist_graph_create_adjacent(MPI_COMM_NULL, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
						 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &sub));
	MPI_FAILS(MPI_ERR_ARG, MPI_Topo_test(W, NULL));
}

static void test_dims_and_create(void)
{
	MPI_Comm W = MPI_COMM_WORLD, c;
	int d[3] = {0, 0, 0}, r;

	MPI_FAILS(MPI_ERR_DIMS, MPI_Dims_create(7, 2, (int[]){2, 0}));
	MPI_FAILS(MPI_ERR_DIMS, MPI_Dims_create(6, 2, (int[]){-1, 0}));
	MPI_FAILS(MPI_ERR_ARG, MPI_Dims_create(0, 2, d));
	MPI_FAILS(MPI_ERR_ARG, MPI_Dims_create(-4, 2, d));
	MPI_FAILS(MPI_ERR_ARG, MPI_Dims_create(4, -1, d));
	MPI_FAILS(MPI_ERR_ARG, MPI_Dims_create(4, 2, NULL));
	MPI_FAILS(MPI_ERR_ARG, MPI_Cart_create(W, -1, d, d, 0, &c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Cart_create(W, 1, (int[]){size + 1}, (int[]){0}, 0, &c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Cart_create(W, 2, (int[]){size, 2}, (int[]){0, 0}, 0, &c));
	MPI_FAILS(MPI_ERR_DIMS, MPI_Cart_create(W, 2, (int[]){1, 0}, (int[]){0, 0}, 0, &c));
	MPI_FAILS(MPI_ERR_DIMS, MPI_Cart_create(W, 1, (int[]){-2}, (int[]){0}, 0, &c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Cart_create(W, 1, NULL, (int[]){0}, 0, &c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Cart_create(W, 1, (int[]){1}, NULL, 0, &c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Cart_create(W, 1, (int[]){1}, (int[]){0}, 0, NULL));
	MPI_FAILS(MPI_ERR_ARG, MPI_Cart_map(W, 1, (int[]){size + 1}, (int[]){0}, &r));
	MPI_FAILS(MPI_ERR_DIMS, MPI_Cart_map(W, 1, (int[]){0}, (int[]){0}, &r));
	/* graphs */
	MPI_FAILS(MPI_ERR_ARG, MPI_Graph_create(W, size + 1, (int[64]){0}, (int[1]){0}, 0, &c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Graph_create(W, -1, NULL, NULL, 0, &c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Graph_create(W, 1, NULL, NULL, 0, &c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Graph_create(W, 1, (int[]){-1}, (int[]){0}, 0, &c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Graph_create(W, 1, (int[]){1}, (int[]){1}, 0, &c));
	if (size >= 2)
		MPI_FAILS(MPI_ERR_ARG, MPI_Graph_create(W, 2, (int[]){2, 1}, (int[]){1, 1}, 0, &c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Graph_map(W, size + 1, (int[64]){0}, (int[1]){0}, &r));
	/* distributed graphs */
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Dist_graph_create_adjacent(W, -1, NULL, MPI_UNWEIGHTED, 0, NULL,
						 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
	MPI_FAILS(MPI_ERR_RANK,
		  MPI_Dist_graph_create_adjacent(W, 1, (int[]){size}, MPI_UNWEIGHTED, 0, NULL,
						 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Dist_graph_create_adjacent(W, 1, (int[]){0}, (int[]){-3}, 0, NULL,
						 MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &c));
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Dist_graph_create_adjacent(W, 1, (int[]){0}, (int[]){1}, 0, NULL,
						 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Dist_graph_create_adjacent(W, 1, (int[]){0}, MPI_WEIGHTS_EMPTY, 0, NULL,
						 MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Dist_graph_create(W, -1, NULL, NULL, NULL, MPI_UNWEIGHTED,
						     MPI_INFO_NULL, 0, &c));
	MPI_FAILS(MPI_ERR_RANK, MPI_Dist_graph_create(W, 1, (int[]){-1}, (int[]){0}, NULL,
						      MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Dist_graph_create(W, 1, (int[]){0}, (int[]){-1}, NULL,
						     MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
	MPI_FAILS(MPI_ERR_RANK, MPI_Dist_graph_create(W, 1, (int[]){0}, (int[]){1}, (int[]){size},
						      MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Dist_graph_create(W, 1, (int[]){0}, (int[]){1}, (int[]){0},
						     (int[]){-1}, MPI_INFO_NULL, 0, &c));
}

/* On a grid with a user handler: the handler sees every error. */
static void test_on_grid(void)
{
	MPI_Errhandler eh;
	MPI_Comm cart, sub, idup;
	int c[2], r, a, b, d[2], p[2], buf[8] = {0}, calls;

	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, (int[]){size}, (int[]){0}, 0, &cart));
	MPI_OK(MPI_Comm_create_errhandler(count_errors, &eh));
	MPI_OK(MPI_Comm_set_errhandler(cart, eh));
	handler_calls = 0;
	MPI_FAILS(MPI_ERR_DIMS, MPI_Cart_shift(cart, 1, 1, &a, &b));
	MPI_FAILS(MPI_ERR_DIMS, MPI_Cart_shift(cart, -1, 1, &a, &b));
	MPI_FAILS(MPI_ERR_RANK, MPI_Cart_coords(cart, size, 1, c));
	MPI_FAILS(MPI_ERR_RANK, MPI_Cart_coords(cart, -1, 1, c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Cart_coords(cart, 0, 0, c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Cart_rank(cart, (int[]){size}, &r));
	MPI_FAILS(MPI_ERR_ARG, MPI_Cart_rank(cart, (int[]){-1}, &r));
	MPI_FAILS(MPI_ERR_ARG, MPI_Cart_get(cart, 0, d, p, c));
	MPI_FAILS(MPI_ERR_ARG, MPI_Cart_sub(cart, NULL, &sub));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Graph_neighbors_count(cart, 0, &r));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Dist_graph_neighbors_count(cart, &a, &b, &r));
	/* neighbourhood collectives: arguments */
	MPI_FAILS(MPI_ERR_COUNT, MPI_Neighbor_alltoall(buf, -1, MPI_INT, buf, 1, MPI_INT, cart));
	MPI_FAILS(MPI_ERR_TYPE,
		  MPI_Neighbor_allgather(buf, 1, MPI_DATATYPE_NULL, buf, 1, MPI_INT, cart));
	MPI_FAILS(MPI_ERR_BUFFER,
		  MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, buf, 1, MPI_INT, cart));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Neighbor_alltoall(buf, 1, MPI_INT, NULL, 1, MPI_INT, cart));
	MPI_FAILS(MPI_ERR_ARG, MPI_Neighbor_allgatherv(buf, 1, MPI_INT, buf, NULL, (int[]){0, 0},
						       MPI_INT, cart));
	MPI_FAILS(MPI_ERR_COUNT,
		  MPI_Neighbor_alltoallv(buf, (int[]){1, -1}, (int[]){0, 1}, MPI_INT, buf,
					 (int[]){1, 1}, (int[]){0, 1}, MPI_INT, cart));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Neighbor_alltoallw(buf, (int[]){1, 1}, (MPI_Aint[]){0, 4},
						       (MPI_Datatype[]){MPI_INT, MPI_DATATYPE_NULL},
						       buf, (int[]){1, 1}, (MPI_Aint[]){0, 4},
						       (MPI_Datatype[]){MPI_INT, MPI_INT}, cart));
	MPI_FAILS(MPI_ERR_ARG, MPI_Neighbor_alltoallw(buf, NULL, NULL, NULL, buf, (int[]){1, 1},
						      (MPI_Aint[]){0, 4},
						      (MPI_Datatype[]){MPI_INT, MPI_INT}, cart));
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_idup(cart, &idup, NULL));
	calls = handler_calls;
	CHECK(calls == 20 && handler_comm == cart, "the grid's handler saw %d errors", calls);
	/* still works */
	MPI_OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, buf, 1, MPI_INT, cart));
	MPI_OK(MPI_Comm_free(&cart));
	MPI_OK(MPI_Errhandler_free(&eh));
}

static void test_graph_queries(void)
{
	MPI_Comm g;
	int r, nb[4];

	MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, 1, (int[]){1}, (int[]){0}, 0, &g));
	if (g == MPI_COMM_NULL)
		return;
	MPI_FAILS(MPI_ERR_RANK, MPI_Graph_neighbors_count(g, 1, &r));
	MPI_FAILS(MPI_ERR_RANK, MPI_Graph_neighbors(g, -1, 4, nb));
	MPI_FAILS(MPI_ERR_ARG, MPI_Graph_neighbors(g, 0, -1, nb));
	MPI_FAILS(MPI_ERR_ARG, MPI_Graph_get(g, -1, 0, nb, nb));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_shift(g, 0, 1, &r, &r));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Dist_graph_neighbors_count(g, &r, &r, &r));
	MPI_OK(MPI_Comm_free(&g));
}

static void test_alltoallw(void)
{
	int p = size, *cnt = calloc((size_t)p, sizeof(int)), *dis = calloc((size_t)p, sizeof(int));
	MPI_Datatype *ty = calloc((size_t)p, sizeof(MPI_Datatype));
	int buf[4];
	MPI_Comm W = MPI_COMM_WORLD;

	CHECK(cnt && dis && ty, "out of memory");
	for (int i = 0; i < p; i++)
		ty[i] = MPI_INT;
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Alltoallw(buf, cnt, dis, ty, MPI_IN_PLACE, cnt, dis, ty, W));
	MPI_FAILS(MPI_ERR_ARG, MPI_Alltoallw(buf, NULL, dis, ty, buf, cnt, dis, ty, W));
	MPI_FAILS(MPI_ERR_ARG, MPI_Alltoallw(buf, cnt, dis, ty, buf, cnt, NULL, ty, W));
	cnt[p - 1] = -1;
	MPI_FAILS(MPI_ERR_COUNT, MPI_Alltoallw(buf, cnt, dis, ty, buf, cnt, dis, ty, W));
	cnt[p - 1] = 1;
	ty[p - 1] = MPI_DATATYPE_NULL;
	MPI_FAILS(MPI_ERR_TYPE, MPI_Alltoallw(buf, cnt, dis, ty, buf, cnt, dis, ty, W));
	MPI_FAILS(MPI_ERR_COMM, MPI_Alltoallw(buf, cnt, dis, ty, buf, cnt, dis, ty, MPI_COMM_NULL));
	free(cnt);
	free(dis);
	free(ty);
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	test_no_topology();
	test_dims_and_create();
	test_on_grid();
	test_graph_queries();
	test_alltoallw();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("topo_errors: %d ranks OK\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
