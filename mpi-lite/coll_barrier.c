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
 */
#include "coll_int.h"

int mpil_coll_barrier_flat(const coll_grp_t *g)
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

int mpil_barrier(MPI_Comm comm)
{
	coll_grp_t g;
	coll_hier_t h;
	int err;

	coll_grp_comm(&g, comm);
	if (g.size == 1)
		return MPI_SUCCESS;
	if (!mpil_coll_multinode(comm))
		return mpil_coll_barrier_flat(&g);
	mpil_coll_hier_get(comm, 0, &h);
	err = fan_in(&h.intra, h.intra_root);
	if (err == MPI_SUCCESS && h.is_rep)
		err = mpil_coll_barrier_flat(&h.inter);
	if (err == MPI_SUCCESS)
		err = mpil_coll_bcast_binomial(&h.intra, NULL, 0, h.intra_root, CT_BARRIER_OUT);
	return err;
}
