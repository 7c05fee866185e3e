/* ibx-test: np=1,2,3,4,5 timeout=120 nodes=1 */
/*
 * topo_graph — graph topologies (MPI_Graph_create): a ring (at one and two
 * processes its edges repeat and loop back, which MPI allows), a star, a
 * graph smaller than the communicator (the last rank gets MPI_COMM_NULL),
 * an empty one (MPI_COMM_NULL everywhere); the queries Topo_test,
 * Graphdims_get, Graph_get (whole and cut short), Graph_neighbors_count
 * and Graph_neighbors for every node, MPI_Graph_map, messages to the
 * neighbours, and the graph following MPI_Comm_dup.
 */
#include "mpitest.h"

static int rank, size;

typedef struct graph {
	int nnodes, index[16], edges[64];
} graph_t;

/* Node i: i+1 and i-1 (mod n). */
static void make_ring(graph_t *g, int n)
{
	g->nnodes = n;
	for (int i = 0, e = 0; i < n; i++) {
		g->edges[e++] = (i + 1) % n;
		g->edges[e++] = (i - 1 + n) % n;
		g->index[i] = e;
	}
}

/* Node 0 linked to every other node and they to it. */
static void make_star(graph_t *g, int n)
{
	int e = 0;

	g->nnodes = n;
	for (int i = 1; i < n; i++)
		g->edges[e++] = i;
	g->index[0] = e;
	for (int i = 1; i < n; i++) {
		g->edges[e++] = 0;
		g->index[i] = e;
	}
}

static void check_graph(MPI_Comm gc, const graph_t *g)
{
	int t, nn, ne, idx[16], ed[64], cnt, nb[64], me;
	int nedges = g->nnodes ? g->index[g->nnodes - 1] : 0;

	MPI_OK(MPI_Topo_test(gc, &t));
	CHECK(t == MPI_GRAPH, "Topo_test: %d, expected MPI_GRAPH", t);
	MPI_OK(MPI_Graphdims_get(gc, &nn, &ne));
	CHECK(nn == g->nnodes && ne == nedges, "Graphdims_get: %d nodes %d edges", nn, ne);
	MPI_OK(MPI_Graph_get(gc, 16, 64, idx, ed));
	for (int i = 0; i < nn; i++)
		CHECK(idx[i] == g->index[i], "Graph_get index[%d] = %d", i, idx[i]);
	for (int i = 0; i < ne; i++)
		CHECK(ed[i] == g->edges[i], "Graph_get edges[%d] = %d", i, ed[i]);
	/* cut short: only what fits is written */
	ed[1] = -9;
	MPI_OK(MPI_Graph_get(gc, 1, 1, idx, ed));
	CHECK(idx[0] == g->index[0] && ed[1] == -9, "Graph_get wrote past maxedges");
	for (int r = 0; r < nn; r++) {
		int first = r ? g->index[r - 1] : 0;

		MPI_OK(MPI_Graph_neighbors_count(gc, r, &cnt));
		CHECK(cnt == g->index[r] - first, "node %d: %d neighbours", r, cnt);
		MPI_OK(MPI_Graph_neighbors(gc, r, 64, nb));
		for (int k = 0; k < cnt; k++)
			CHECK(nb[k] == g->edges[first + k], "node %d neighbour %d is %d", r, k,
			      nb[k]);
	}
	/* a message to every neighbour, one from every neighbour */
	MPI_OK(MPI_Comm_rank(gc, &me));
	MPI_OK(MPI_Graph_neighbors_count(gc, me, &cnt));
	MPI_OK(MPI_Graph_neighbors(gc, me, 64, nb));
	{
		MPI_Request rq[128];
		int got[64], n = 0;

		for (int k = 0; k < cnt; k++)
			MPI_OK(MPI_Irecv(&got[k], 1, MPI_INT, nb[k], 5, gc, &rq[n++]));
		for (int k = 0; k < cnt; k++)
			MPI_OK(MPI_Isend(&me, 1, MPI_INT, nb[k], 5, gc, &rq[n++]));
		MPI_OK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
		for (int k = 0; k < cnt; k++)
			CHECK(got[k] == nb[k], "from neighbour %d got %d", nb[k], got[k]);
	}
}

static void graph_case(const graph_t *g)
{
	MPI_Comm gc, dup;
	int n, nr;

	MPI_OK(MPI_Graph_map(MPI_COMM_WORLD, g->nnodes, g->index, g->edges, &nr));
	CHECK(nr == (rank < g->nnodes ? rank : MPI_UNDEFINED), "Graph_map: %d", nr);
	MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, g->nnodes, g->index, g->edges, 1, &gc));
	if (rank >= g->nnodes) {
		CHECK(gc == MPI_COMM_NULL, "rank %d outside a %d-node graph got a communicator",
		      rank, g->nnodes);
		return;
	}
	MPI_OK(MPI_Comm_size(gc, &n));
	CHECK(n == g->nnodes, "graph communicator of size %d, expected %d", n, g->nnodes);
	check_graph(gc, g);
	MPI_OK(MPI_Comm_dup(gc, &dup));
	MPI_OK(MPI_Comm_free(&gc));
	check_graph(dup, g);
	MPI_OK(MPI_Comm_free(&dup));
}

int main(int argc, char **argv)
{
	graph_t g;
	MPI_Comm gc;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	make_ring(&g, size);
	graph_case(&g);
	make_star(&g, size);
	if (size > 1)
		graph_case(&g);
	if (size > 1) {
		make_ring(&g, size - 1);
		graph_case(&g);
	}
	/* no nodes: nobody gets a communicator */
	MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &gc));
	CHECK(gc == MPI_COMM_NULL, "an empty graph gave a communicator");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("topo_graph: %d ranks OK\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
