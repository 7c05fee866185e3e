/*
 * topo.c — the process topology object (topo_int.h): made by the
 * constructors, attached to their new communicator, copied by
 * MPI_Comm_dup, freed with the communicator; MPI_Topo_test; and the graph
 * topologies of MPI-3.1 §7.5.3 (MPI_Graph_create and its queries,
 * MPI_Graph_map). Cartesian grids are in topo_cart.c, distributed graphs
 * in topo_dist.c.
 *
 * A constructor checks its arguments (the same on every process, so every
 * process refuses them alike), builds the topology of this process and
 * then makes the communicator with mpil_comm_split: the context-id
 * agreement of comm_create.c, with the processes outside the topology
 * taking part under MPI_UNDEFINED (they get MPI_COMM_NULL). Ranks keep
 * their order: reorder is ignored.
 */
#include "topo_int.h"

#include <stdlib.h>

static const char *const topo_names[] = {
    [MPI_GRAPH] = "graph",
    [MPI_CART] = "Cartesian",
    [MPI_DIST_GRAPH] = "distributed graph",
};

mpil_topo_t *mpil_topo_new(int kind, size_t nints)
{
	mpil_topo_t *t = calloc(1, sizeof(*t) + nints * sizeof(int));

	if (t) {
		t->kind = kind;
		t->nmem = nints;
	}
	return t;
}

int *mpil_topo_take(mpil_topo_t *t, size_t n)
{
	int *p = t->mem + t->used;

	t->used += n;
	return p;
}

/* Where @p (in @old's storage) is in @t's copy of it. */
static int *rebase(const mpil_topo_t *old, mpil_topo_t *t, int *p)
{
	return p ? t->mem + (p - old->mem) : NULL;
}

int mpil_topo_dup(MPI_Comm from, MPI_Comm to)
{
	const mpil_topo_t *old = from->topo;
	mpil_topo_t *t;
	size_t sz;

	if (!old)
		return MPI_SUCCESS;
	sz = sizeof(*old) + old->nmem * sizeof(int);
	t = malloc(sz);
	if (!t)
		return MPI_ERR_NO_MEM;
	memcpy(t, old, sz);
	t->dims = rebase(old, t, old->dims);
	t->periods = rebase(old, t, old->periods);
	t->coords = rebase(old, t, old->coords);
	t->index = rebase(old, t, old->index);
	t->edges = rebase(old, t, old->edges);
	t->in = rebase(old, t, old->in);
	t->out = rebase(old, t, old->out);
	t->in_w = rebase(old, t, old->in_w);
	t->out_w = rebase(old, t, old->out_w);
	to->topo = t;
	return MPI_SUCCESS;
}

void mpil_topo_free(MPI_Comm c)
{
	free(c->topo);
	c->topo = NULL;
}

const mpil_topo_t *mpil_topo_get(MPI_Comm comm, int kind, int *err_p, const char *fname)
{
	const mpil_topo_t *t;

	*err_p = mpil_check_init(fname);
	if (*err_p == MPI_SUCCESS)
		*err_p = mpil_check_comm(comm, fname);
	if (*err_p != MPI_SUCCESS)
		return NULL;
	t = comm->topo;
	if (t && (kind == 0 || t->kind == kind))
		return t;
	if (!t)
		*err_p = mpil_err(comm, MPI_ERR_TOPOLOGY, fname,
				  "communicator %s has no process topology",
				  comm->name[0] ? comm->name : "(unnamed)");
	else
		*err_p = mpil_err(comm, MPI_ERR_TOPOLOGY, fname,
				  "communicator %s has a %s topology, not a %s one",
				  comm->name[0] ? comm->name : "(unnamed)", topo_names[t->kind],
				  topo_names[kind]);
	return NULL;
}

int mpil_topo_comm_create(MPI_Comm comm_old, int color, mpil_topo_t *t, MPI_Comm *newcomm,
			  const char *fname)
{
	MPI_Comm c;
	int err = mpil_comm_split(comm_old, color, comm_old->rank, &c, fname);

	if (err != MPI_SUCCESS || c == MPI_COMM_NULL)
		free(t);
	else
		c->topo = t;
	if (err == MPI_SUCCESS)
		*newcomm = c;
	return err;
}

MPIL_PMPI_ALIAS(Topo_test)
int PMPI_Topo_test(MPI_Comm comm, int *status)
{
	static const char F[] = "MPI_Topo_test";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(mpil_topo_check_out(comm, status, "status", F));
	t = comm->topo;
	*status = t ? t->kind : MPI_UNDEFINED;
	return MPI_SUCCESS;
}

/* ---- graphs ------------------------------------------------------------------------ */

/* A graph of @nnodes nodes (index, edges as MPI_Graph_create takes them)
 * that a communicator of @comm's size can hold: *nedges_p its edge
 * count. Self-loops and repeated edges are allowed (MPI-3.1 §7.5.3). */
static int check_graph(MPI_Comm comm, int nnodes, const int *index, const int *edges, int *nedges_p,
		       const char *fname)
{
	int nedges;

	if (nnodes < 0 || nnodes > comm->size)
		return mpil_err(comm, MPI_ERR_ARG, fname,
				"nnodes is %d (the communicator has %d processes)", nnodes,
				comm->size);
	if (nnodes > 0 && !index)
		return mpil_err(comm, MPI_ERR_ARG, fname, "index is NULL");
	for (int i = 0; i < nnodes; i++)
		if (index[i] < (i ? index[i - 1] : 0))
			return mpil_err(comm, MPI_ERR_ARG, fname,
					"index[%d] is %d, below index[%d] = %d (index counts "
					"edges cumulatively)",
					i, index[i], i - 1, i ? index[i - 1] : 0);
	nedges = nnodes ? index[nnodes - 1] : 0;
	if (nedges > 0 && !edges)
		return mpil_err(comm, MPI_ERR_ARG, fname, "edges is NULL");
	for (int e = 0; e < nedges; e++)
		if (edges[e] < 0 || edges[e] >= nnodes)
			return mpil_err(comm, MPI_ERR_ARG, fname,
					"edges[%d] is %d, not a node of the %d-node graph", e,
					edges[e], nnodes);
	*nedges_p = nedges;
	return MPI_SUCCESS;
}

/* This process's copy of the graph, its neighbours being both its
 * sources and its destinations. */
static mpil_topo_t *graph_new(int rank, int nnodes, const int *index, const int *edges, int nedges)
{
	mpil_topo_t *t = mpil_topo_new(MPI_GRAPH, (size_t)nnodes + (size_t)nedges);
	int first;

	if (!t)
		return NULL;
	t->nnodes = nnodes;
	t->nedges = nedges;
	t->index = mpil_topo_take(t, (size_t)nnodes);
	t->edges = mpil_topo_take(t, (size_t)nedges);
	memcpy(t->index, index, (size_t)nnodes * sizeof(int)); /* nnodes > rank >= 0 */
	if (nedges > 0)
		memcpy(t->edges, edges, (size_t)nedges * sizeof(int));
	first = rank ? index[rank - 1] : 0;
	t->in = t->out = t->edges + first;
	t->indeg = t->outdeg = index[rank] - first;
	return t;
}

MPIL_PMPI_ALIAS(Graph_create)
int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
		      int reorder, MPI_Comm *comm_graph)
{
	static const char F[] = "MPI_Graph_create";
	MPIL_CS_GUARD();
	mpil_topo_t *t = NULL;
	int nedges;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm_old, F));
	MPIL_CHECK(mpil_topo_check_out(comm_old, comm_graph, "comm_graph", F));
	MPIL_CHECK(check_graph(comm_old, nnodes, index, edges, &nedges, F));
	if (comm_old->rank < nnodes) {
		t = graph_new(comm_old->rank, nnodes, index, edges, nedges);
		if (!t)
			return mpil_err(comm_old, MPI_ERR_NO_MEM, F, "no memory for the graph");
	}
	return mpil_topo_comm_create(comm_old, t ? 0 : MPI_UNDEFINED, t, comm_graph, F);
}

MPIL_PMPI_ALIAS(Graph_map)
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
	static const char F[] = "MPI_Graph_map";
	MPIL_CS_GUARD();
	int nedges;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(mpil_topo_check_out(comm, newrank, "newrank", F));
	MPIL_CHECK(check_graph(comm, nnodes, index, edges, &nedges, F));
	/* the identity mapping, as MPI_Graph_create uses */
	*newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Graphdims_get)
int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
	static const char F[] = "MPI_Graphdims_get";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	int err;

	t = mpil_topo_get(comm, MPI_GRAPH, &err, F);
	if (!t)
		return err;
	MPIL_CHECK(mpil_topo_check_out(comm, nnodes, "nnodes", F));
	MPIL_CHECK(mpil_topo_check_out(comm, nedges, "nedges", F));
	*nnodes = t->nnodes;
	*nedges = t->nedges;
	return MPI_SUCCESS;
}

/* An output array of @max entries to take up to @n: its first
 * min(max, n) entries are written. */
static int check_out_array(MPI_Comm comm, int max, int n, const void *arr, const char *what,
			   const char *fname)
{
	if (max < 0)
		return mpil_err(comm, MPI_ERR_ARG, fname, "negative array size %d for %s", max,
				what);
	if (max > 0 && n > 0 && !arr)
		return mpil_err(comm, MPI_ERR_ARG, fname, "%s is NULL", what);
	return MPI_SUCCESS;
}

static void copy_ints(int *dst, const int *src, int max, int n)
{
	if (max > 0 && n > 0)
		memcpy(dst, src, (size_t)(max < n ? max : n) * sizeof(int));
}

MPIL_PMPI_ALIAS(Graph_get)
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
	static const char F[] = "MPI_Graph_get";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	int err;

	t = mpil_topo_get(comm, MPI_GRAPH, &err, F);
	if (!t)
		return err;
	MPIL_CHECK(check_out_array(comm, maxindex, t->nnodes, index, "index", F));
	MPIL_CHECK(check_out_array(comm, maxedges, t->nedges, edges, "edges", F));
	copy_ints(index, t->index, maxindex, t->nnodes);
	copy_ints(edges, t->edges, maxedges, t->nedges);
	return MPI_SUCCESS;
}

/* The neighbours of node @rank of graph @t: *first_p, count returned. */
static int graph_neighbors(const mpil_topo_t *t, int rank, const int **first_p)
{
	int a = rank ? t->index[rank - 1] : 0;

	*first_p = t->edges + a;
	return t->index[rank] - a;
}

static int check_node(MPI_Comm comm, const mpil_topo_t *t, int rank, const char *fname)
{
	if (rank >= 0 && rank < t->nnodes)
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_RANK, fname, "rank %d is not a node of the %d-node graph",
			rank, t->nnodes);
}

MPIL_PMPI_ALIAS(Graph_neighbors_count)
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
	static const char F[] = "MPI_Graph_neighbors_count";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	const int *first;
	int err;

	t = mpil_topo_get(comm, MPI_GRAPH, &err, F);
	if (!t)
		return err;
	MPIL_CHECK(check_node(comm, t, rank, F));
	MPIL_CHECK(mpil_topo_check_out(comm, nneighbors, "nneighbors", F));
	*nneighbors = graph_neighbors(t, rank, &first);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Graph_neighbors)
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
	static const char F[] = "MPI_Graph_neighbors";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	const int *first;
	int err, n;

	t = mpil_topo_get(comm, MPI_GRAPH, &err, F);
	if (!t)
		return err;
	MPIL_CHECK(check_node(comm, t, rank, F));
	n = graph_neighbors(t, rank, &first);
	MPIL_CHECK(check_out_array(comm, maxneighbors, n, neighbors, "neighbors", F));
	copy_ints(neighbors, first, maxneighbors, n);
	return MPI_SUCCESS;
}
