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
 * Ranks that outnumber the cores (one node, up to COLL_BARRIER_FAN_MAX
 * ranks, coll_select.c): fan-in to rank 0 and fan-out from it, linear.
 *
 *     1, 2, 3 ──arrived──► 0          0 ──release──► 1, 2, 3
 *
 * A dissemination round waits for a peer that may share our core and not
 * be running; here every rank waits for rank 0 alone, and rank 0 leaves
 * first. That order is what a rooted collective after a barrier wants: a
 * Bcast from rank 0 found its receivers waiting for a root that was still
 * inside the dissemination (4 ranks on 2 cores: the receivers on the
 * other core left up to 11 us before it), so osu_bcast's 8-byte figure
 * was 0.93 us of waiting for 0.05 us of work. Open MPI's default barrier
 * for small groups is the same fan (with its recursive doubling instead,
 * its osu_bcast 8 B is 3.2 us, not 0.13). Measured 2026-11-25, 2 cores:
 * barrier 3 / 4 / 8 ranks 8.1 / 5.8 / 19.9 us against 10.1 / 6.4 / 34.1
 * with dissemination; Bcast 8 B after it 0.06 us (was 0.93; Open MPI
 * 0.09-0.2).
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

	err = mpil_coll_hier_get(comm, 0, &h);
	if (err == MPI_SUCCESS)
		err = fan_in(&h.intra, h.intra_root);
	if (err == MPI_SUCCESS && h.is_rep)
		err = barrier_dissemination(&h.inter);
	if (err == MPI_SUCCESS)
		err = mpil_coll_bcast_binomial(&h.intra, NULL, 0, h.intra_root, CT_BARRIER_OUT);
	return err;
}

/* Every rank tells rank 0 it has arrived; rank 0, once all have, releases
 * each in turn and is the first to leave. */
static int barrier_fan(const coll_grp_t *g)
{
	int err;

	if (g->rank) {
		err = mpil_grp_send(g, NULL, 0, 0, CT_BARRIER_IN);
		return err == MPI_SUCCESS ? mpil_grp_recv(g, NULL, 0, 0, CT_BARRIER_OUT) : err;
	}
	for (int i = 1; i < g->size; i++) {
		err = mpil_grp_recv(g, NULL, 0, i, CT_BARRIER_IN);
		if (err != MPI_SUCCESS)
			return err;
	}
	for (int i = 1; i < g->size; i++) {
		err = mpil_grp_send(g, NULL, 0, i, CT_BARRIER_OUT);
		if (err != MPI_SUCCESS)
			return err;
	}
	return MPI_SUCCESS;
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
	case MPIL_COLL_ALG_FAN: return barrier_fan(&g);
	case MPIL_COLL_ALG_DISSEMINATION: return barrier_dissemination(&g);
	default: return MPI_ERR_INTERN;
	}
}
