/*
 * topo_dist.c — distributed graph topologies (MPI-3.1 §7.5.4):
 * MPI_Dist_graph_create_adjacent, MPI_Dist_graph_create,
 * MPI_Dist_graph_neighbors_count and MPI_Dist_graph_neighbors.
 *
 * Each process keeps only its own sources and destinations (with their
 * weights when the graph is weighted). The adjacent form is given them;
 * the general form gets them from the processes that named its edges, in
 * one exchange on the old communicator (the alltoall algorithms of
 * coll_alltoall.c): a process that names the edge s -> d (weight w)
 * tells d "source s, w" and s "destination d, w":
 *
 *   rank 2 names 0 -> 1:   rank 1 gets {IN, 0, w}   rank 0 gets {OUT, 1, w}
 *
 * Records arrive in the order (naming process, its order of edges) at
 * both ends of an edge, so when a pair of processes shares several edges
 * the k-th of them is the k-th in the source's destinations and in the
 * destination's sources: the neighbour collectives pair them up right.
 *
 * The new communicator holds the same processes in the same order (reorder
 * is ignored) and, as every communicator made by a constructor, no
 * attributes. The info hints are checked and not kept.
 *
 * MPI_UNWEIGHTED makes an unweighted graph; MPI_WEIGHTS_EMPTY stands for
 * the weights of a process with no edges in a weighted graph. Error
 * classes (Open MPI's, with MPI_ERR_RANK for a rank outside the
 * communicator): negative degrees or weights, NULL arrays, weights given
 * on one side only, MPI_ERR_ARG.
 */
#include "coll_int.h"
#include "topo_int.h"

#include <stdlib.h>

/* The objects behind MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY: only their
 * addresses mean anything. */
struct mpil_weights {
	int unused;
};
struct mpil_weights mpil_unweighted, mpil_weights_empty;

/* ---- argument checks ---------------------------------------------------------------------- */

static int check_ranks(MPI_Comm comm, int n, const int *ranks, const char *what, const char *fname)
{
	if (n > 0 && !ranks)
		return mpil_err(comm, MPI_ERR_ARG, fname, "%s is NULL", what);
	for (int i = 0; i < n; i++)
		if (ranks[i] < 0 || ranks[i] >= comm->size)
			return mpil_err(comm, MPI_ERR_RANK, fname,
					"%s[%d] is %d (communicator size %d)", what, i, ranks[i],
					comm->size);
	return MPI_SUCCESS;
}

/* @n weights of a weighted graph (MPI_WEIGHTS_EMPTY fits n == 0 only). */
static int check_weights(MPI_Comm comm, int n, const int *w, const char *what, const char *fname)
{
	if (n == 0)
		return MPI_SUCCESS;
	if (!w || w == MPI_WEIGHTS_EMPTY)
		return mpil_err(comm, MPI_ERR_ARG, fname, "%s is %s for %d edges", what,
				w ? "MPI_WEIGHTS_EMPTY" : "NULL", n);
	for (int i = 0; i < n; i++)
		if (w[i] < 0)
			return mpil_err(comm, MPI_ERR_ARG, fname, "%s[%d] is negative (%d)", what,
					i, w[i]);
	return MPI_SUCCESS;
}

static int check_start(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	MPIL_CHECK(mpil_check_comm(comm, fname));
	MPIL_CHECK(mpil_check_info(comm, info, true, fname));
	return mpil_topo_check_out(comm, newcomm, "comm_dist_graph", fname);
}

/* A topology with room for @indeg sources and @outdeg destinations. */
static mpil_topo_t *dist_new(int indeg, int outdeg, bool weighted)
{
	size_t n = (size_t)indeg + (size_t)outdeg;
	mpil_topo_t *t = mpil_topo_new(MPI_DIST_GRAPH, weighted ? 2 * n : n);

	if (!t)
		return NULL;
	t->indeg = indeg;
	t->outdeg = outdeg;
	t->weighted = weighted;
	t->in = mpil_topo_take(t, (size_t)indeg);
	t->out = mpil_topo_take(t, (size_t)outdeg);
	if (weighted) {
		t->in_w = mpil_topo_take(t, (size_t)indeg);
		t->out_w = mpil_topo_take(t, (size_t)outdeg);
	}
	return t;
}

/* @n of the caller's integers (the array may be NULL when n is 0). */
static void copy_given(int *dst, const int *src, int n)
{
	if (n > 0)
		memcpy(dst, src, (size_t)n * sizeof(int));
}

MPIL_PMPI_ALIAS(Dist_graph_create_adjacent)
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
				    const int sourceweights[], int outdegree,
				    const int destinations[], const int destweights[],
				    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
	static const char F[] = "MPI_Dist_graph_create_adjacent";
	MPIL_CS_GUARD();
	bool weighted = sourceweights != MPI_UNWEIGHTED;
	mpil_topo_t *t;

	MPIL_CHECK(check_start(comm_old, info, comm_dist_graph, F));
	if (indegree < 0 || outdegree < 0)
		return mpil_err(comm_old, MPI_ERR_ARG, F, "negative %s (%d)",
				indegree < 0 ? "indegree" : "outdegree",
				indegree < 0 ? indegree : outdegree);
	MPIL_CHECK(check_ranks(comm_old, indegree, sources, "sources", F));
	MPIL_CHECK(check_ranks(comm_old, outdegree, destinations, "destinations", F));
	if (weighted != (destweights != MPI_UNWEIGHTED))
		return mpil_err(comm_old, MPI_ERR_ARG, F,
				"MPI_UNWEIGHTED as %s only (both or neither)",
				weighted ? "destweights" : "sourceweights");
	if (weighted) {
		MPIL_CHECK(check_weights(comm_old, indegree, sourceweights, "sourceweights", F));
		MPIL_CHECK(check_weights(comm_old, outdegree, destweights, "destweights", F));
	}
	t = dist_new(indegree, outdegree, weighted);
	if (!t)
		return mpil_err(comm_old, MPI_ERR_NO_MEM, F, "no memory for the graph");
	copy_given(t->in, sources, indegree);
	copy_given(t->out, destinations, outdegree);
	if (weighted) {
		copy_given(t->in_w, sourceweights, indegree);
		copy_given(t->out_w, destweights, outdegree);
	}
	return mpil_topo_comm_create(comm_old, 0, t, comm_dist_graph, F);
}

/* ---- MPI_Dist_graph_create: who learns what -------------------------------------------- */

enum { REC_IN, REC_OUT, REC_INTS = 3 }; /* a record: {REC_IN/OUT, peer, weight} */

/* The edges as this process names them. */
typedef struct dist_edges {
	int n;
	const int *sources, *degrees, *dests, *weights; /* weights NULL: unweighted */
} dist_edges_t;

/* Calls @fn(arg, s, d, w) for every named edge, in order. */
static void edges_each(const dist_edges_t *e, void (*fn)(void *, int, int, int), void *arg)
{
	for (int i = 0, k = 0; i < e->n; i++)
		for (int j = 0; j < e->degrees[i]; j++, k++)
			fn(arg, e->sources[i], e->dests[k], e->weights ? e->weights[k] : 1);
}

/* The records bound for each process: counts (in ints), then the data. */
typedef struct dist_out {
	int *count, *pos, *buf;
} dist_out_t;

static void edge_count(void *arg, int s, int d, int w)
{
	dist_out_t *o = arg;

	o->count[d] += REC_INTS;
	o->count[s] += REC_INTS;
}

static void edge_put(void *arg, int s, int d, int w)
{
	dist_out_t *o = arg;
	int *to_d = o->buf + o->pos[d], *to_s;

	o->pos[d] += REC_INTS;
	to_s = o->buf + o->pos[s];
	o->pos[s] += REC_INTS;
	to_d[0] = REC_IN;
	to_d[1] = s;
	to_d[2] = w;
	to_s[0] = REC_OUT;
	to_s[1] = d;
	to_s[2] = w;
}

/* The prefix sums of @count[p] into @displ; the total. */
static long long prefix(const int *count, int *displ, int p)
{
	long long total = 0;

	for (int i = 0; i < p; i++) {
		displ[i] = (int)total;
		total += count[i];
	}
	return total;
}

/* Moves the records: @o (filled) out, every process's for this one into
 * *recs_p (malloc'ed), *nints_p ints. Collective over @comm. */
static int dist_move(MPI_Comm comm, const dist_out_t *o, const int *sdispl, int **recs_p,
		     long long *nints_p)
{
	int p = comm->size, *rcount = calloc(2 * (size_t)p, sizeof(int)), *rdispl, *recs = NULL;
	coll_lay_t sl = {.base = (char *)o->count, .stride = sizeof(int), .len = sizeof(int)};
	coll_lay_t rl = sl, svl, rvl;
	void *smem = NULL, *rmem = NULL;
	long long total = 0;
	coll_grp_t g;
	int err;

	if (!rcount)
		return MPI_ERR_NO_MEM;
	rdispl = rcount + p;
	rl.base = (char *)rcount;
	coll_grp_comm(&g, comm);
	err = mpil_coll_alltoall(&g, MPIL_COLL_ALLTOALL, &sl, &rl);
	if (err == MPI_SUCCESS) {
		total = prefix(rcount, rdispl, p);
		recs = malloc((size_t)total * sizeof(int) + 1);
		err = recs ? MPI_SUCCESS : MPI_ERR_NO_MEM;
	}
	if (err == MPI_SUCCESS)
		err = mpil_coll_lay_v(&svl, o->buf, o->count, sdispl, MPI_INT, p, false, -1, &smem);
	if (err == MPI_SUCCESS)
		err = mpil_coll_lay_v(&rvl, recs, rcount, rdispl, MPI_INT, p, false, -1, &rmem);
	if (err == MPI_SUCCESS)
		err = mpil_coll_alltoall(&g, MPIL_COLL_ALLTOALLV, &svl, &rvl);
	free(smem);
	free(rmem);
	free(rcount);
	if (err != MPI_SUCCESS) {
		free(recs);
		return err;
	}
	*recs_p = recs;
	*nints_p = total;
	return MPI_SUCCESS;
}

/* This process's topology from the records it got. */
static mpil_topo_t *dist_from_records(const int *recs, long long nints, bool weighted)
{
	int indeg = 0, outdeg = 0, ni = 0, no = 0;
	mpil_topo_t *t;

	for (long long r = 0; r < nints; r += REC_INTS) {
		if (recs[r] == REC_IN)
			indeg++;
		else
			outdeg++;
	}
	t = dist_new(indeg, outdeg, weighted);
	if (!t)
		return NULL;
	for (long long r = 0; r < nints; r += REC_INTS) {
		if (recs[r] == REC_IN) {
			if (weighted)
				t->in_w[ni] = recs[r + 2];
			t->in[ni++] = recs[r + 1];
		} else {
			if (weighted)
				t->out_w[no] = recs[r + 2];
			t->out[no++] = recs[r + 1];
		}
	}
	return t;
}

/* The whole exchange: *t_p this process's topology. */
static int dist_build(MPI_Comm comm, const dist_edges_t *e, mpil_topo_t **t_p)
{
	int p = comm->size, *mem = calloc(3 * (size_t)p, sizeof(int)), *sdispl, *recs = NULL;
	dist_out_t o = {.count = mem, .pos = mem ? mem + p : NULL};
	long long total, nints = 0;
	int err;

	if (!mem)
		return MPI_ERR_NO_MEM;
	sdispl = mem + 2 * p;
	edges_each(e, edge_count, &o);
	total = prefix(o.count, sdispl, p);
	memcpy(o.pos, sdispl, (size_t)p * sizeof(int));
	o.buf = malloc((size_t)total * sizeof(int) + 1);
	if (!o.buf) {
		free(mem);
		return MPI_ERR_NO_MEM;
	}
	edges_each(e, edge_put, &o);
	err = dist_move(comm, &o, sdispl, &recs, &nints);
	free(o.buf);
	free(mem);
	if (err != MPI_SUCCESS)
		return err;
	*t_p = dist_from_records(recs, nints, e->weights != NULL);
	free(recs);
	return *t_p ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* The arguments of MPI_Dist_graph_create; *e set from them. */
static int check_edges(MPI_Comm comm, int n, const int *sources, const int *degrees,
		       const int *dests, const int *weights, dist_edges_t *e, const char *fname)
{
	long long nedges = 0;

	if (n < 0)
		return mpil_err(comm, MPI_ERR_ARG, fname, "n is negative (%d)", n);
	if (n > 0 && !degrees)
		return mpil_err(comm, MPI_ERR_ARG, fname, "degrees is NULL");
	MPIL_CHECK(check_ranks(comm, n, sources, "sources", fname));
	for (int i = 0; i < n; i++) {
		if (degrees[i] < 0)
			return mpil_err(comm, MPI_ERR_ARG, fname, "degrees[%d] is negative (%d)", i,
					degrees[i]);
		nedges += degrees[i];
	}
	if (nedges > INT_MAX / (2 * REC_INTS))
		return mpil_err(comm, MPI_ERR_ARG, fname, "%lld edges are too many", nedges);
	MPIL_CHECK(check_ranks(comm, (int)nedges, dests, "destinations", fname));
	if (weights != MPI_UNWEIGHTED)
		MPIL_CHECK(check_weights(comm, (int)nedges, weights, "weights", fname));
	*e = (dist_edges_t){n, sources, degrees, dests, NULL};
	if (weights != MPI_UNWEIGHTED)
		e->weights = nedges ? weights : MPI_WEIGHTS_EMPTY; /* non-NULL: weighted */
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Dist_graph_create)
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
			   const int destinations[], const int weights[], MPI_Info info,
			   int reorder, MPI_Comm *comm_dist_graph)
{
	static const char F[] = "MPI_Dist_graph_create";
	MPIL_CS_GUARD();
	mpil_topo_t *t = NULL;
	dist_edges_t e = {0};
	int err;

	MPIL_CHECK(check_start(comm_old, info, comm_dist_graph, F));
	MPIL_CHECK(check_edges(comm_old, n, sources, degrees, destinations, weights, &e, F));
	err = dist_build(comm_old, &e, &t);
	if (err == MPI_ERR_NO_MEM)
		return mpil_err(comm_old, err, F, "no memory for the graph");
	if (err != MPI_SUCCESS)
		return mpil_err(comm_old, err, F,
				"exchanging the edges with the other processes failed");
	return mpil_topo_comm_create(comm_old, 0, t, comm_dist_graph, F);
}

/* ---- queries ---------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Dist_graph_neighbors_count)
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
	static const char F[] = "MPI_Dist_graph_neighbors_count";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	int err;

	t = mpil_topo_get(comm, MPI_DIST_GRAPH, &err, F);
	if (!t)
		return err;
	MPIL_CHECK(mpil_topo_check_out(comm, indegree, "indegree", F));
	MPIL_CHECK(mpil_topo_check_out(comm, outdegree, "outdegree", F));
	MPIL_CHECK(mpil_topo_check_out(comm, weighted, "weighted", F));
	*indegree = t->indeg;
	*outdegree = t->outdeg;
	*weighted = t->weighted;
	return MPI_SUCCESS;
}

/* Up to @max of the @n neighbours @nb (weights @w) into @out / @out_w;
 * weights only for a weighted graph and a real array. */
static void copy_neighbors(int max, int n, const int *nb, const int *w, int *out, int *out_w)
{
	int k = max < n ? max : n;

	if (k <= 0)
		return;
	memcpy(out, nb, (size_t)k * sizeof(int));
	if (w && out_w && out_w != MPI_UNWEIGHTED && out_w != MPI_WEIGHTS_EMPTY)
		memcpy(out_w, w, (size_t)k * sizeof(int));
}

MPIL_PMPI_ALIAS(Dist_graph_neighbors)
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
			      int maxoutdegree, int destinations[], int destweights[])
{
	static const char F[] = "MPI_Dist_graph_neighbors";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	int err;

	t = mpil_topo_get(comm, MPI_DIST_GRAPH, &err, F);
	if (!t)
		return err;
	if (maxindegree < 0 || maxoutdegree < 0)
		return mpil_err(comm, MPI_ERR_ARG, F, "negative %s (%d)",
				maxindegree < 0 ? "maxindegree" : "maxoutdegree",
				maxindegree < 0 ? maxindegree : maxoutdegree);
	if ((maxindegree > 0 && t->indeg > 0 && !sources) ||
	    (maxoutdegree > 0 && t->outdeg > 0 && !destinations))
		return mpil_err(comm, MPI_ERR_ARG, F, "%s is NULL",
				maxindegree > 0 && t->indeg > 0 && !sources ? "sources"
									    : "destinations");
	copy_neighbors(maxindegree, t->indeg, t->in, t->in_w, sources, sourceweights);
	copy_neighbors(maxoutdegree, t->outdeg, t->out, t->out_w, destinations, destweights);
	return MPI_SUCCESS;
}
