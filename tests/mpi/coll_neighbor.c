/* ibx-test: np=1,2,3,4,5 timeout=180 */
/*
 * coll_neighbor — the neighbourhood collectives (Neighbor_allgather(v),
 * Neighbor_alltoall(v/w)) on Cartesian grids (periodic: at one and two
 * processes a rank is its own or both neighbours; non-periodic:
 * MPI_PROC_NULL at the edges, whose receive blocks must stay untouched),
 * on a graph with repeated edges, and on distributed graphs with repeated
 * edges and unequal degrees (adjacent and MPI_Dist_graph_create). Every
 * block carries its own data (sender, block, element), so each received
 * block is checked against the block that should land there: in a grid
 * the block a neighbour sent towards us (block 2d+1 of the -1 neighbour),
 * in a graph the k-th edge between two processes at both ends (for
 * distributed graphs the edge weights name the edges). Counts vary per
 * block (v forms), types too (w form: strided vectors against contiguous
 * ints, byte displacements out of order), and receives go into strided
 * types.
 */
#include "mpitest.h"

enum { N = 4, MAXNB = 32, SENTINEL = -1 };

static int rank, size;

/* A process's neighbourhood and how to tell which block arrives where. */
typedef struct nbh {
	const char *name;
	MPI_Comm comm;
	int kind; /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
	int me, indeg, outdeg;
	int in[MAXNB], out[MAXNB], inw[MAXNB], outw[MAXNB];
	int pair[MAXNB]; /* receive block j is block pair[j] of in[j]'s sends */
} nbh_t;

/* What a sender calls its block @b (and a receiver expects): the block
 * index, or for distributed graphs the edge's weight. */
static int send_id(const nbh_t *n, int b)
{
	return n->kind == MPI_DIST_GRAPH ? n->outw[b] : b;
}

static int recv_id(const nbh_t *n, int j)
{
	return n->kind == MPI_DIST_GRAPH ? n->inw[j] : n->pair[j];
}

static int value(int sender, int id, int e)
{
	return sender * 100000 + id * 100 + e;
}

/* Occurrences of list[j] in list[0..j). */
static int occurrence(const int *list, int j)
{
	int k = 0;

	for (int i = 0; i < j; i++)
		k += list[i] == list[j];
	return k;
}

static void nbh_cart(nbh_t *n, MPI_Comm c, const char *name)
{
	int nd;

	n->name = name;
	n->comm = c;
	n->kind = MPI_CART;
	MPI_OK(MPI_Comm_rank(c, &n->me));
	MPI_OK(MPI_Cartdim_get(c, &nd));
	n->indeg = n->outdeg = 2 * nd;
	for (int d = 0; d < nd; d++)
		MPI_OK(MPI_Cart_shift(c, d, 1, &n->in[2 * d], &n->in[2 * d + 1]));
	for (int j = 0; j < n->indeg; j++) {
		n->out[j] = n->in[j];
		n->pair[j] = j ^ 1; /* from the -1 side comes what was sent towards +1 */
	}
}

static void nbh_graph(nbh_t *n, MPI_Comm c, const char *name)
{
	n->name = name;
	n->comm = c;
	n->kind = MPI_GRAPH;
	MPI_OK(MPI_Comm_rank(c, &n->me));
	MPI_OK(MPI_Graph_neighbors_count(c, n->me, &n->indeg));
	MPI_OK(MPI_Graph_neighbors(c, n->me, MAXNB, n->in));
	n->outdeg = n->indeg;
	memcpy(n->out, n->in, sizeof(n->in));
	for (int j = 0; j < n->indeg; j++) {
		int s = n->in[j], k = occurrence(n->in, j), cnt, nb[MAXNB];

		/* the k-th edge s -> me is the k-th me in s's list */
		MPI_OK(MPI_Graph_neighbors_count(c, s, &cnt));
		MPI_OK(MPI_Graph_neighbors(c, s, MAXNB, nb));
		n->pair[j] = -1;
		for (int b = 0; b < cnt; b++)
			if (nb[b] == n->me && k-- == 0) {
				n->pair[j] = b;
				break;
			}
		CHECK(n->pair[j] >= 0, "%s: no edge back from %d", name, s);
	}
}

static void nbh_dist(nbh_t *n, MPI_Comm c, const char *name)
{
	int w;

	n->name = name;
	n->comm = c;
	n->kind = MPI_DIST_GRAPH;
	MPI_OK(MPI_Comm_rank(c, &n->me));
	MPI_OK(MPI_Dist_graph_neighbors_count(c, &n->indeg, &n->outdeg, &w));
	CHECK(w, "%s: the test's graphs are weighted", name);
	MPI_OK(MPI_Dist_graph_neighbors(c, MAXNB, n->in, n->inw, MAXNB, n->out, n->outw));
}

/* Receive block @j of @cnt elements at @got: the expected data, or
 * untouched for MPI_PROC_NULL. */
static void check_block(const nbh_t *n, const char *coll, int j, const int *got, int cnt, int id)
{
	for (int e = 0; e < cnt; e++) {
		int want = n->in[j] == MPI_PROC_NULL ? SENTINEL : value(n->in[j], id, e);

		CHECK(got[e] == want, "%s %s: block %d (from %d) element %d is %d, expected %d",
		      n->name, coll, j, n->in[j], e, got[e], want);
	}
}

static void run_alltoall(const nbh_t *n)
{
	int sbuf[MAXNB * N], rbuf[MAXNB * N];

	for (int b = 0; b < n->outdeg; b++)
		for (int e = 0; e < N; e++)
			sbuf[b * N + e] = value(n->me, send_id(n, b), e);
	for (int i = 0; i < MAXNB * N; i++)
		rbuf[i] = SENTINEL;
	MPI_OK(MPI_Neighbor_alltoall(sbuf, N, MPI_INT, rbuf, N, MPI_INT, n->comm));
	for (int j = 0; j < n->indeg; j++)
		check_block(n, "alltoall", j, &rbuf[j * N], N, recv_id(n, j));
}

/* Receiving into a strided type: element e of block j at 2 * (j*N + e). */
static void run_alltoall_strided(const nbh_t *n)
{
	int sbuf[MAXNB * N], rbuf[2 * MAXNB * N], blk[N];
	MPI_Datatype strided, rs;

	MPI_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &strided));
	MPI_OK(MPI_Type_create_resized(strided, 0, 2 * N * (MPI_Aint)sizeof(int), &rs));
	MPI_OK(MPI_Type_commit(&rs));
	for (int b = 0; b < n->outdeg; b++)
		for (int e = 0; e < N; e++)
			sbuf[b * N + e] = value(n->me, send_id(n, b), e);
	for (int i = 0; i < 2 * MAXNB * N; i++)
		rbuf[i] = SENTINEL;
	MPI_OK(MPI_Neighbor_alltoall(sbuf, N, MPI_INT, rbuf, 1, rs, n->comm));
	for (int j = 0; j < n->indeg; j++) {
		for (int e = 0; e < N; e++) {
			blk[e] = rbuf[2 * (j * N + e)];
			CHECK(rbuf[2 * (j * N + e) + 1] == SENTINEL, "%s: strided gap written",
			      n->name);
		}
		check_block(n, "alltoall (strided)", j, blk, N, recv_id(n, j));
	}
	MPI_OK(MPI_Type_free(&strided));
	MPI_OK(MPI_Type_free(&rs));
}

static void run_allgather(const nbh_t *n)
{
	int sbuf[N], rbuf[MAXNB * N];

	for (int e = 0; e < N; e++)
		sbuf[e] = value(n->me, 0, e);
	for (int i = 0; i < MAXNB * N; i++)
		rbuf[i] = SENTINEL;
	MPI_OK(MPI_Neighbor_allgather(sbuf, N, MPI_INT, rbuf, N, MPI_INT, n->comm));
	for (int j = 0; j < n->indeg; j++)
		check_block(n, "allgather", j, &rbuf[j * N], N, 0);
}

/* Each sender sends 1 + (its rank % 3) elements; blocks land in reverse
 * order with a gap of one. */
static void run_allgatherv(const nbh_t *n)
{
	int sbuf[N], rbuf[MAXNB * (N + 1)], counts[MAXNB], displs[MAXNB], mine = 1 + n->me % 3;

	for (int e = 0; e < mine; e++)
		sbuf[e] = value(n->me, 0, e);
	for (int i = 0; i < MAXNB * (N + 1); i++)
		rbuf[i] = SENTINEL;
	for (int j = 0; j < n->indeg; j++) {
		counts[j] = n->in[j] == MPI_PROC_NULL ? 2 : 1 + n->in[j] % 3;
		displs[j] = (n->indeg - 1 - j) * (N + 1);
	}
	MPI_OK(
	    MPI_Neighbor_allgatherv(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT, n->comm));
	for (int j = 0; j < n->indeg; j++) {
		check_block(n, "allgatherv", j, &rbuf[displs[j]], counts[j], 0);
		CHECK(rbuf[displs[j] + counts[j]] == SENTINEL, "%s allgatherv: past block %d",
		      n->name, j);
	}
}

/* Block id k holds 1 + k % 3 elements. */
static void run_alltoallv(const nbh_t *n)
{
	int sbuf[MAXNB * N], rbuf[MAXNB * N], sc[MAXNB], sd[MAXNB], rc[MAXNB], rd[MAXNB];

	for (int b = 0; b < n->outdeg; b++) {
		int id = send_id(n, b);

		sc[b] = 1 + id % 3;
		sd[b] = (n->outdeg - 1 - b) * N; /* out of order */
		for (int e = 0; e < sc[b]; e++)
			sbuf[sd[b] + e] = value(n->me, id, e);
	}
	for (int i = 0; i < MAXNB * N; i++)
		rbuf[i] = SENTINEL;
	for (int j = 0; j < n->indeg; j++) {
		rc[j] = n->in[j] == MPI_PROC_NULL ? 3 : 1 + recv_id(n, j) % 3;
		rd[j] = j * N;
	}
	MPI_OK(MPI_Neighbor_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, n->comm));
	for (int j = 0; j < n->indeg; j++)
		check_block(n, "alltoallv", j, &rbuf[rd[j]], rc[j], recv_id(n, j));
}

/* Odd ids go out as 2 strided pairs, even ones as N plain ints; all come
 * in as N ints at byte displacements in reverse order. */
static void run_alltoallw(const nbh_t *n)
{
	int sbuf[MAXNB * 2 * N], rbuf[MAXNB * N], sc[MAXNB], rc[MAXNB];
	MPI_Aint sd[MAXNB], rd[MAXNB];
	MPI_Datatype st[MAXNB], rt[MAXNB], pairs;

	MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &pairs)); /* ints 0 and 2, extent 3 */
	MPI_OK(MPI_Type_commit(&pairs));
	for (int b = 0; b < n->outdeg; b++) {
		int id = send_id(n, b), *blk = &sbuf[b * 2 * N];
		static const int at[N] = {0, 2, 3, 5}; /* where 2 pairs put N ints */

		sd[b] = (MPI_Aint)(b * 2 * N * sizeof(int));
		if (id % 2) {
			st[b] = pairs;
			sc[b] = 2;
		} else {
			st[b] = MPI_INT;
			sc[b] = N;
		}
		for (int e = 0; e < N; e++)
			blk[id % 2 ? at[e] : e] = value(n->me, id, e);
	}
	for (int i = 0; i < MAXNB * N; i++)
		rbuf[i] = SENTINEL;
	for (int j = 0; j < n->indeg; j++) {
		rc[j] = N;
		rt[j] = MPI_INT;
		rd[j] = (MPI_Aint)((n->indeg - 1 - j) * N * sizeof(int));
	}
	MPI_OK(MPI_Neighbor_alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, n->comm));
	for (int j = 0; j < n->indeg; j++)
		check_block(n, "alltoallw", j, &rbuf[(n->indeg - 1 - j) * N], N, recv_id(n, j));
	MPI_OK(MPI_Type_free(&pairs));
}

static void run_all(const nbh_t *n)
{
	run_alltoall(n);
	run_alltoall_strided(n);
	run_allgather(n);
	run_allgatherv(n);
	run_alltoallv(n);
	run_alltoallw(n);
}

static void test_carts(void)
{
	int dims[2] = {0, 0};
	MPI_Comm c;
	nbh_t n;

	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, (int[]){size}, (int[]){1}, 0, &c));
	nbh_cart(&n, c, "periodic ring");
	run_all(&n);
	MPI_OK(MPI_Comm_free(&c));
	MPI_OK(MPI_Dims_create(size, 2, dims));
	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, (int[]){0, 0}, 0, &c));
	nbh_cart(&n, c, "open 2-d grid");
	run_all(&n);
	MPI_OK(MPI_Comm_free(&c));
	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, (int[]){1, 0}, 0, &c));
	nbh_cart(&n, c, "half-periodic 2-d grid");
	run_all(&n);
	MPI_OK(MPI_Comm_free(&c));
}

/* A ring (i +- 1) with a chord between 0 and size / 2, both ways. */
static void test_graph(void)
{
	int index[64], edges[256], e = 0, p = size;
	MPI_Comm c;
	nbh_t n;

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
	nbh_graph(&n, c, "graph");
	run_all(&n);
	MPI_OK(MPI_Comm_free(&c));
}

/* The weight of the k-th edge s -> d: names it at both ends. */
static int edge_id(int s, int d, int k)
{
	return (s * 7 + d * 3 + k * 11) % 97;
}

/* out: r+1, r+1, r+2; in: r-1, r-1, r-2 (repeated edges, and loops at
 * small sizes). */
static void test_dist_adjacent(void)
{
	int p = size, in[3], out[3], inw[3], outw[3];
	MPI_Comm c;
	nbh_t n;

	out[0] = out[1] = (rank + 1) % p;
	out[2] = (rank + 2) % p;
	in[0] = in[1] = (rank - 1 + p) % p;
	in[2] = (rank - 2 + 2 * p) % p;
	for (int i = 0; i < 3; i++) {
		outw[i] = edge_id(rank, out[i], occurrence(out, i));
		inw[i] = edge_id(in[i], rank, occurrence(in, i));
	}
	/* at two processes r+1 and r+2 differ but r-1, r-2 repeat them: the
	 * occurrence counts still agree at both ends */
	MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, in, inw, 3, out, outw,
					      MPI_INFO_NULL, 0, &c));
	nbh_dist(&n, c, "adjacent distributed graph");
	run_all(&n);
	MPI_OK(MPI_Comm_free(&c));
}

/* Rank 0 names s -> s+1 for all s and s -> 0 for odd s; the others name
 * s -> s+2 for their own s. Unequal degrees; weights name the edges. */
static void test_dist_create(void)
{
	int p = size, src[64], deg[64], dst[128], w[128], ns = 0, k = 0;
	MPI_Comm c;
	nbh_t n;

	if (rank == 0) {
		for (int s = 0; s < p; s++) {
			src[ns] = s;
			deg[ns] = 1 + (s % 2);
			dst[k] = (s + 1) % p;
			w[k] = 200 + k;
			k++;
			if (s % 2) {
				dst[k] = 0;
				w[k] = 200 + k;
				k++;
			}
			ns++;
		}
	} else {
		src[0] = rank;
		deg[0] = 1;
		dst[0] = (rank + 2) % p;
		w[0] = 500 + rank;
		ns = 1;
	}
	MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, ns, src, deg, dst, w, MPI_INFO_NULL, 0, &c));
	nbh_dist(&n, c, "distributed graph");
	run_all(&n);
	MPI_OK(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	test_carts();
	test_graph();
	test_dist_adjacent();
	test_dist_create();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("coll_neighbor: %d ranks OK\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
