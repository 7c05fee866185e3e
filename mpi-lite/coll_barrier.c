/*
 * coll_barrier.c — MPI_Barrier.
 *
 * Dissemination (Hensgen, Finkel, Manber): round k sends to rank + 2^k and
 * receives from rank - 2^k; after ceil(log2 p) rounds every rank has heard,
 * directly or not, from every other. Any p, no idle ranks.
 *
 * Several nodes: the node's members report to their representative up a
 * binomial tree (fan-in), the representatives run the dissemination among
 * themselves, and the release goes back down the tree (fan-out): the
 * network sees log2(nodes) rounds of one message per node.
 *
 * Which one runs is the selection table's choice (coll_select.c).
 */
#include "coll_int.h"

static int barrier_dissemination(const coll_grp_t *g)
{
	int n = g->size, r = g->rank;

	for (int k = 1; k < n; k <<= 1) {
		int err = mpil_grp_sendrecv(g, NULL, 0, (r + k) % n, NULL, 0, (r - k + n) % n,
					    CT_BARRIER);
		if (err != MPI_SUCCESS)
			return err;
	}
	return MPI_SUCCESS;
}

/* Binomial fan-in to @root: a rank hears from its whole subtree, then
 * tells its parent. */
static int fan_in(const coll_grp_t *g, int root)
{
	int n = g->size, vr = (g->rank - root + n) % n, err;

	for (int mask = 1; mask < n; mask <<= 1) {
		if (vr & mask)
			return mpil_grp_send(g, NULL, 0, (vr - mask + root) % n, CT_BARRIER_IN);
		if (vr + mask < n) {
			err = mpil_grp_recv(g, NULL, 0, (vr + mask + root) % n, CT_BARRIER_IN);
			if (err != MPI_SUCCESS)
				return err;
		}
	}
	return MPI_SUCCESS;
}

static int barrier_node_aware(MPI_Comm comm)
{
	coll_hier_t h;
	int err;

	mpil_coll_hier_get(comm, 0, &h);
	err = fan_in(&h.intra, h.intra_root);
	if (err == MPI_SUCCESS && h.is_rep)
		err = barrier_dissemination(&h.inter);
	if (err == MPI_SUCCESS)
		err = mpil_coll_bcast_binomial(&h.intra, NULL, 0, h.intra_root, CT_BARRIER_OUT);
	return err;
}

int mpil_barrier(MPI_Comm comm)
{
	mpil_coll_query_t q = {.op = MPIL_COLL_BARRIER};
	coll_grp_t g;

	coll_grp_comm(&g, comm);
	if (g.size == 1)
		return MPI_SUCCESS;
	q.p = g.size;
	q.props = mpil_coll_where(&g);
	switch (mpil_coll_choose(&q)) {
	case MPIL_COLL_ALG_NODE_AWARE: return barrier_node_aware(comm);
	case MPIL_COLL_ALG_DISSEMINATION: return barrier_dissemination(&g);
	default: return MPI_ERR_INTERN;
	}
}
