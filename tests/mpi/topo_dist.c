/* ibx-test: np=1,2,3,4,5 timeout=120 nodes=1 */
/*
 * topo_dist — distributed graph topologies: MPI_Dist_graph_create_adjacent
 * weighted, unweighted (MPI_UNWEIGHTED) and with no edges at all
 * (MPI_WEIGHTS_EMPTY); MPI_Dist_graph_create with every edge named by rank
 * 0, by each edge's source, and by a third process, weighted and not; at
 * small sizes edges repeat and loop back. Each process checks
 * MPI_Dist_graph_neighbors_count and MPI_Dist_graph_neighbors (neighbours,
 * weights, arrays cut short, MPI_UNWEIGHTED as the weights argument)
 * against the graph every process knows, and the topology after
 * MPI_Comm_dup. Edges named by other processes arrive ordered by the
 * naming process, then its order of edges (mpi-lite's rule; MPI leaves the
 * order open).
 */
#include "mpitest.h"

static int rank, size;

/* A weight that names the edge s -> d, the @k-th of that kind. */
static int weight(int s, int d, int k)
{
	return 1000 * s + 10 * d + k;
}

typedef struct edge {
	int s, d, w;
	int ends; /* which ends this process checks: IN_END, OUT_END or both */
} edge_t;

enum { IN_END = 1, OUT_END = 2, BOTH_ENDS = 3 };

/* The edges of the whole graph in naming order, and what this process
 * should see of them. */
typedef struct expect {
	int n;
	edge_t e[64];
} expect_t;

static void expect_add(expect_t *x, int s, int d, int w)
{
	x->e[x->n++] = (edge_t){s, d, w, BOTH_ENDS};
}

static void check_lists(MPI_Comm g, const expect_t *x, int weighted)
{
	int in[64], inw[64], out[64], outw[64], indeg, outdeg, wt, ni = 0, no = 0, t;

	MPI_OK(MPI_Topo_test(g, &t));
	CHECK(t == MPI_DIST_GRAPH, "Topo_test: %d, expected MPI_DIST_GRAPH", t);
	MPI_OK(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &wt));
	CHECK(wt == weighted, "weighted flag %d, expected %d", wt, weighted);
	for (int i = 0; i < x->n; i++) {
		ni += (x->e[i].ends & IN_END) && x->e[i].d == rank;
		no += (x->e[i].ends & OUT_END) && x->e[i].s == rank;
	}
	CHECK(indeg == ni && outdeg == no, "degrees %d in %d out, expected %d %d", indeg, outdeg,
	      ni, no);
	MPI_OK(MPI_Dist_graph_neighbors(g, 64, in, weighted ? inw : MPI_UNWEIGHTED, 64, out,
					weighted ? outw : MPI_UNWEIGHTED));
	ni = no = 0;
	for (int i = 0; i < x->n; i++) {
		const edge_t *e = &x->e[i];

		if ((e->ends & IN_END) && e->d == rank) {
			CHECK(in[ni] == e->s, "source %d is %d, expected %d", ni, in[ni], e->s);
			CHECK(!weighted || inw[ni] == e->w, "source %d weight %d, expected %d", ni,
			      inw[ni], e->w);
			ni++;
		}
		if ((e->ends & OUT_END) && e->s == rank) {
			CHECK(out[no] == e->d, "destination %d is %d, expected %d", no, out[no],
			      e->d);
			CHECK(!weighted || outw[no] == e->w,
			      "destination %d weight %d, expected %d", no, outw[no], e->w);
			no++;
		}
	}
	/* arrays cut short: the first entries only */
	if (indeg > 1) {
		int two[2] = {-5, -5}, w2[2] = {-5, -5};

		MPI_OK(MPI_Dist_graph_neighbors(g, 1, two, weighted ? w2 : MPI_UNWEIGHTED, 0, NULL,
						MPI_UNWEIGHTED));
		CHECK(two[0] == in[0] && two[1] == -5 && (!weighted || w2[0] == inw[0]) &&
			  w2[1] == -5,
		      "maxindegree 1 wrote %d %d", two[0], two[1]);
	}
}

/* Checks @g and a duplicate of it, then frees both. */
static void check_and_free(MPI_Comm *g, const expect_t *x, int weighted)
{
	MPI_Comm dup;
	int n;

	MPI_OK(MPI_Comm_size(*g, &n));
	CHECK(n == size, "distributed graph communicator of size %d", n);
	check_lists(*g, x, weighted);
	MPI_OK(MPI_Comm_dup(*g, &dup));
	MPI_OK(MPI_Comm_free(g));
	check_lists(dup, x, weighted);
	MPI_OK(MPI_Comm_free(&dup));
}

/* Every process's view: sources r-1 and r+2, destinations r+1 and r-2. */
static void test_adjacent(int weighted)
{
	int p = size, src[2], dst[2], sw[2], dw[2];
	expect_t x = {0};
	MPI_Comm g;

	/* the same edges for everyone's expectations, in this process's order */
	src[0] = (rank - 1 + p) % p;
	src[1] = (rank + 2) % p;
	dst[0] = (rank + 1) % p;
	dst[1] = (rank - 2 + p) % p;
	for (int i = 0; i < 2; i++) {
		sw[i] = weight(src[i], rank, i);
		dw[i] = weight(rank, dst[i], 1 - i);
		x.e[x.n++] = (edge_t){src[i], rank, sw[i], IN_END};
		x.e[x.n++] = (edge_t){rank, dst[i], dw[i], OUT_END};
	}
	MPI_OK(MPI_Dist_graph_create_adjacent(
	    MPI_COMM_WORLD, 2, src, weighted ? sw : MPI_UNWEIGHTED, 2, dst,
	    weighted ? dw : MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &g));
	check_and_free(&g, &x, weighted);
}

static void test_adjacent_empty(void)
{
	expect_t x = {0};
	MPI_Comm g;

	MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL,
					      MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
	check_and_free(&g, &x, 1);
}

/* Rank 0 names every edge: s -> s+1 and s -> s+3. */
static void test_create_by_root(int weighted)
{
	int p = size, src[16], deg[16], dst[32], w[32], k = 0;
	expect_t x = {0};
	MPI_Comm g;

	for (int s = 0; s < p; s++) {
		src[s] = s;
		deg[s] = 2;
		for (int j = 0; j < 2; j++, k++) {
			dst[k] = (s + (j ? 3 : 1)) % p;
			w[k] = weight(s, dst[k], j);
			expect_add(&x, s, dst[k], w[k]);
		}
	}
	MPI_OK(MPI_Dist_graph_create(
	    MPI_COMM_WORLD, rank == 0 ? p : 0, src, deg, dst,
	    weighted ? (rank == 0 ? w : MPI_WEIGHTS_EMPTY) : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
	check_and_free(&g, &x, weighted);
}

/* Each source names its own edges: r -> r+1, r -> r+2, r -> r+1 again. */
static void test_create_by_source(void)
{
	int p = size, dst[3], w[3];
	expect_t x = {0};
	MPI_Comm g;

	for (int s = 0; s < p; s++)
		for (int j = 0; j < 3; j++) {
			int d = (s + (j == 1 ? 2 : 1)) % p;

			expect_add(&x, s, d, weight(s, d, j));
			if (s == rank) {
				dst[j] = d;
				w[j] = weight(s, d, j);
			}
		}
	MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, (int[]){3}, dst, w, MPI_INFO_NULL, 0,
				     &g));
	check_and_free(&g, &x, 1);
}

/* Rank r names the edge r+1 -> r+2 (unweighted), and rank 0 also names
 * the edge 0 -> 0 twice in two separate entries. */
static void test_create_third_party(void)
{
	int p = size, srcs[3], degs[3], dsts[3], n = 0;
	expect_t x = {0};
	MPI_Comm g;

	for (int r = 0; r < p; r++) {
		expect_add(&x, (r + 1) % p, (r + 2) % p, 0);
		if (r == 0) {
			expect_add(&x, 0, 0, 0);
			expect_add(&x, 0, 0, 0);
		}
	}
	srcs[n] = (rank + 1) % p;
	degs[n] = 1;
	dsts[n++] = (rank + 2) % p;
	if (rank == 0)
		for (int j = 0; j < 2; j++) {
			srcs[n] = 0;
			degs[n] = 1;
			dsts[n++] = 0;
		}
	MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts, MPI_UNWEIGHTED,
				     MPI_INFO_NULL, 0, &g));
	check_and_free(&g, &x, 0);
}

int main(int argc, char **argv)
{
	MPI_Info info;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	test_adjacent(1);
	test_adjacent(0);
	test_adjacent_empty();
	test_create_by_root(1);
	test_create_by_root(0);
	test_create_by_source();
	test_create_third_party();
	/* hints are accepted (and ignored) */
	{
		MPI_Comm g;
		expect_t x = {0};

		MPI_OK(MPI_Info_create(&info));
		MPI_OK(MPI_Info_set(info, "ibx_unknown_hint", "1"));
		MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, MPI_UNWEIGHTED,
					     info, 0, &g));
		MPI_OK(MPI_Info_free(&info));
		check_and_free(&g, &x, 0);
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("topo_dist: %d ranks OK\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
