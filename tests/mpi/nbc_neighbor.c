/* ibx-test: np=1,2,3,4,5 timeout=180 */
/*
 * nbc_neighbor — MPI_Ineighbor_allgather(v) and MPI_Ineighbor_alltoall(v/w)
 * against their blocking twins (tested on their own), byte for byte over
 * the whole receive buffers (gaps and the blocks of MPI_PROC_NULL
 * neighbours, which must stay untouched, included), all five started at
 * once and completed together, on: a periodic ring (at one and two
 * processes a rank is its own or both neighbours), open and half-periodic
 * 2-d grids, a graph with repeated edges, a distributed graph with
 * repeated edges and one with unequal degrees. Receive sides use strided
 * vectors as well as ints; v forms put blocks in reverse order with gaps;
 * the w form mixes types per block.
 */
#include "mpitest.h"

static int rank, size;
static MPI_Datatype vec; /* 2 ints, 2 apart, extent 3 ints */

enum { SENTINEL = 0x5a, N = 4, SLOT = 16 /* ints per block slot */ };

typedef struct nb {
	MPI_Comm comm;
	const char *name;
	int indeg, outdeg;
} nb_t;

static void degrees(nb_t *t)
{
	int kind, nd, n, weighted;

	MPI_OK(MPI_Topo_test(t->comm, &kind));
	if (kind == MPI_CART) {
		MPI_OK(MPI_Cartdim_get(t->comm, &nd));
		t->indeg = t->outdeg = 2 * nd;
	} else if (kind == MPI_GRAPH) {
		MPI_OK(MPI_Graph_neighbors_count(t->comm, rank, &n));
		t->indeg = t->outdeg = n;
	} else {
		MPI_OK(MPI_Dist_graph_neighbors_count(t->comm, &t->indeg, &t->outdeg, &weighted));
	}
}

/* The receive buffers of the five calls, twice (blocking, nonblocking). */
typedef struct bufs {
	int *r[5];
	size_t len; /* ints each */
} bufs_t;

static void bufs_init(bufs_t *b, const nb_t *t)
{
	b->len = (size_t)(t->indeg + 1) * SLOT * 3;
	for (int i = 0; i < 5; i++) {
		b->r[i] = malloc(b->len * sizeof(int));
		CHECK(b->r[i], "out of memory");
		memset(b->r[i], SENTINEL, b->len * sizeof(int));
	}
}

static void bufs_free(bufs_t *b)
{
	for (int i = 0; i < 5; i++)
		free(b->r[i]);
}

/* All five calls on @t, blocking (@req NULL) or started at once. */
static void run(const nb_t *t, int k, bufs_t *b, MPI_Request *req)
{
	int in = t->indeg, out = t->outdeg, mx = (in > out ? in : out) + 1;
	int *s = malloc(sizeof(int) * SLOT * mx), *rc = malloc(sizeof(int) * 6 * mx);
	int *rd = rc + mx, *sc = rc + 2 * mx, *sd = rc + 3 * mx, *sc2 = rc + 4 * mx,
	    *rc2 = rc + 5 * mx;
	MPI_Aint *swd = malloc(sizeof(MPI_Aint) * 2 * mx), *rwd = swd + mx;
	MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * 2 * mx), *rt = st + mx;
	MPI_Datatype rtype = k % 2 ? vec : MPI_INT;
	int rn = k % 2 ? N / 2 : N; /* N ints as vectors: N / 2 of them */

	CHECK(s && rc && swd && st, "out of memory");
	for (int i = 0; i < SLOT * mx; i++)
		s[i] = rank * 10000 + i * 3 + k;
	for (int i = 0; i < mx; i++) {
		rc[i] = rn;			 /* what in[i] sends: N ints */
		rd[i] = (in - 1 - i) * SLOT / 3; /* reverse order, gaps */
		sc[i] = N;
		sd[i] = i * SLOT;
		st[i] = (i + k) % 2 ? vec : MPI_INT;
		rt[i] = (i + k + 1) % 2 ? vec : MPI_INT;
		swd[i] = (MPI_Aint)i * SLOT * (MPI_Aint)sizeof(int);
		rwd[i] = (MPI_Aint)(in - 1 - i) * SLOT * (MPI_Aint)sizeof(int);
	}
	if (req) {
		MPI_OK(
		    MPI_Ineighbor_allgather(s, N, MPI_INT, b->r[0], rn, rtype, t->comm, &req[0]));
		MPI_OK(MPI_Ineighbor_allgatherv(s, N, MPI_INT, b->r[1], rc, rd, rtype, t->comm,
						&req[1]));
		MPI_OK(MPI_Ineighbor_alltoall(s, N, MPI_INT, b->r[2], rn, rtype, t->comm, &req[2]));
	} else {
		MPI_OK(MPI_Neighbor_allgather(s, N, MPI_INT, b->r[0], rn, rtype, t->comm));
		MPI_OK(MPI_Neighbor_allgatherv(s, N, MPI_INT, b->r[1], rc, rd, rtype, t->comm));
		MPI_OK(MPI_Neighbor_alltoall(s, N, MPI_INT, b->r[2], rn, rtype, t->comm));
	}
	for (int i = 0; i < out; i++)
		sd[i] = (out - 1 - i) * SLOT;
	if (req)
		MPI_OK(MPI_Ineighbor_alltoallv(s, sc, sd, MPI_INT, b->r[3], rc, rd, rtype, t->comm,
					       &req[3]));
	else
		MPI_OK(MPI_Neighbor_alltoallv(s, sc, sd, MPI_INT, b->r[3], rc, rd, rtype, t->comm));
	/* w: the arrays of the nonblocking call must stay until it completes */
	for (int i = 0; i < mx; i++) {
		sc2[i] = st[i] == vec ? N / 2 : N;
		rc2[i] = rt[i] == vec ? N / 2 : N;
	}
	if (req)
		MPI_OK(MPI_Ineighbor_alltoallw(s, sc2, swd, st, b->r[4], rc2, rwd, rt, t->comm,
					       &req[4]));
	else
		MPI_OK(MPI_Neighbor_alltoallw(s, sc2, swd, st, b->r[4], rc2, rwd, rt, t->comm));
	if (req)
		MPI_OK(MPI_Waitall(5, req, MPI_STATUSES_IGNORE));
	free(s);
	free(rc);
	free(swd);
	free(st);
}

static void check_topo(MPI_Comm c, const char *name)
{
	static const char *calls[] = {"Ineighbor_allgather", "Ineighbor_allgatherv",
				      "Ineighbor_alltoall", "Ineighbor_alltoallv",
				      "Ineighbor_alltoallw"};
	nb_t t = {c, name, 0, 0};
	MPI_Request req[5];

	degrees(&t);
	for (int k = 0; k < 2; k++) {
		bufs_t b, x;

		bufs_init(&b, &t);
		bufs_init(&x, &t);
		run(&t, k, &b, NULL);
		run(&t, k, &x, req);
		for (int i = 0; i < 5; i++)
			for (size_t j = 0; j < b.len; j++)
				CHECK(b.r[i][j] == x.r[i][j], "%s on %s (%s): int %zu: %d, not %d",
				      calls[i], name, k % 2 ? "vectors" : "ints", j, x.r[i][j],
				      b.r[i][j]);
		bufs_free(&b);
		bufs_free(&x);
	}
	MPI_OK(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
	int p, dims[2] = {0, 0}, index[64], edges[256], e = 0, in[64], out[64], ni = 0, no = 0;
	MPI_Datatype v;
	MPI_Comm c;

	mt_init(&argc, &argv, &rank, &size);
	p = size;
	MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
	MPI_OK(MPI_Type_create_resized(v, 0, 3 * sizeof(int), &vec));
	MPI_OK(MPI_Type_commit(&vec));
	MPI_OK(MPI_Type_free(&v));

	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, (int[]){p}, (int[]){1}, 0, &c));
	check_topo(c, "periodic ring");
	MPI_OK(MPI_Dims_create(p, 2, dims));
	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, (int[]){0, 0}, 0, &c));
	check_topo(c, "open 2-d grid");
	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, (int[]){1, 0}, 0, &c));
	check_topo(c, "half-periodic 2-d grid");

	for (int i = 0; i < p; i++) {
		edges[e++] = (i + 1) % p;
		edges[e++] = (i - 1 + p) % p;
		if (i == 0)
			edges[e++] = p / 2;
		if (i == p / 2)
			edges[e++] = 0;
		index[i] = e;
	}
	MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, p, index, edges, 0, &c));
	check_topo(c, "graph with repeated edges");

	out[0] = out[1] = (rank + 1) % p;
	out[2] = (rank + 2) % p;
	in[0] = in[1] = (rank - 1 + p) % p;
	in[2] = (rank - 2 + 2 * p) % p;
	MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, in, MPI_UNWEIGHTED, 3, out,
					      MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
	check_topo(c, "distributed graph with repeated edges");

	for (int j = 0; j < p; j++) {
		if (j < rank)
			in[ni++] = j;
		if (j > rank)
			out[no++] = j;
	}
	MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, ni, in, MPI_UNWEIGHTED, no, out,
					      MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
	check_topo(c, "distributed graph, unequal degrees");

	MPI_OK(MPI_Type_free(&vec));
	MPI_OK(MPI_Finalize());
	return 0;
}
