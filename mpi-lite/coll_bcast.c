/*
 * coll_bcast.c — broadcast of bytes within a group.
 *
 * Short messages: binomial tree from the root (ranks relative to the root):
 *
 *     0 ──► 4 ──► 6 ──► 7         a rank receives once from its parent
 *     │     └───► 5                (vr - lowest set bit of vr), then sends
 *     ├───► 2 ──► 3                to vr + 2^j for each 2^j below that bit
 *     └───► 1
 *
 * Long messages (van de Geijn): the message is cut into p chunks, scattered
 * down the same binomial tree (each rank gets the chunks of its subtree),
 * then a ring allgather passes every chunk around; the root only sends, so
 * its buffer is never written. log p + p - 1 steps moving about 2n bytes
 * per rank instead of n log p at the root.
 *
 * Two ranks: one send, whatever the size (the scatter + ring would move the
 * same bytes in two steps). Ranks that outnumber the cores: every hop of a
 * tree waits until its sender is scheduled, so within a node of up to
 * COLL_BCAST_LINEAR_MAX (coll_select.c) ranks the root sends to each rank itself (linear:
 * one hop; 4 and 8 ranks on 2 cores, 8 B to 1 MiB: 0.6-0.9 x the binomial
 * tree's time), and beyond that the binomial tree at every size — each of
 * the scatter + ring's log p + p - 1 steps costs a context switch there
 * (4 ranks on 2 cores, 128 KiB and 1 MiB: the tree took half the time).
 *
 * Several nodes: the root's message first goes to one representative per
 * node (the root itself on its own node), then each representative
 * broadcasts inside its node — every byte crosses the network once per
 * node instead of once per remote rank.
 *
 * Which one runs is the selection table's choice (coll_select.c).
 */
#include "coll_int.h"

static inline int real_rank(int vr, int root, int n)
{
	return (vr + root) % n;
}

int mpil_coll_bcast_binomial(const coll_grp_t *g, void *buf, size_t len, int root, int tag)
{
	int n = g->size, vr = (g->rank - root + n) % n, mask = 1, err;

	while (mask < n) {
		if (vr & mask) {
			err = mpil_grp_recv(g, buf, len, real_rank(vr - mask, root, n), tag);
			if (err != MPI_SUCCESS)
				return err;
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0; mask >>= 1) {
		if (vr + mask < n) {
			err = mpil_grp_send(g, buf, len, real_rank(vr + mask, root, n), tag);
			if (err != MPI_SUCCESS)
				return err;
		}
	}
	return MPI_SUCCESS;
}

/* Offset of chunk @i of @n equal chunks of @len bytes (the last ones may be
 * short or empty). */
static inline size_t chunk_off(size_t len, int n, int i)
{
	size_t c = (len + (size_t)n - 1) / (size_t)n, off = c * (size_t)i;

	return off < len ? off : len;
}

static int bcast_scatter_ring(const coll_grp_t *g, void *vbuf, size_t len, int root)
{
	int n = g->size, vr = (g->rank - root + n) % n, mask = 1, err;
	char *buf = vbuf;

	/* Scatter: a subtree rooted at vr (size mask) gets chunks [vr, vr+mask). */
	while (mask < n) {
		if (vr & mask) {
			int hi = vr + mask < n ? vr + mask : n;
			size_t a = chunk_off(len, n, vr), b = chunk_off(len, n, hi);

			err = mpil_grp_recv(g, buf + a, b - a, real_rank(vr - mask, root, n),
					    CT_BCAST);
			if (err != MPI_SUCCESS)
				return err;
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0; mask >>= 1) {
		if (vr + mask < n) {
			int hi = vr + 2 * mask < n ? vr + 2 * mask : n;
			size_t a = chunk_off(len, n, vr + mask), b = chunk_off(len, n, hi);

			err = mpil_grp_send(g, buf + a, b - a, real_rank(vr + mask, root, n),
					    CT_BCAST);
			if (err != MPI_SUCCESS)
				return err;
		}
	}
	/* Ring allgather: at step i, pass chunk vr - i right, take chunk
	 * vr - i - 1 from the left. The root has everything and never
	 * receives, so its left neighbour never sends to it. */
	int left = (vr - 1 + n) % n, right = (vr + 1) % n;

	for (int i = 0; i < n - 1; i++) {
		int sc = (vr - i + n) % n, rc = (vr - i - 1 + n) % n;
		size_t sa = chunk_off(len, n, sc), sb = chunk_off(len, n, sc + 1);
		size_t ra = chunk_off(len, n, rc), rb = chunk_off(len, n, rc + 1);

		if (vr == 0)
			err = mpil_grp_send(g, buf + sa, sb - sa, real_rank(right, root, n),
					    CT_BCAST_RING);
		else if (right == 0)
			err = mpil_grp_recv(g, buf + ra, rb - ra, real_rank(left, root, n),
					    CT_BCAST_RING);
		else
			err = mpil_grp_sendrecv(g, buf + sa, sb - sa, real_rank(right, root, n),
						buf + ra, rb - ra, real_rank(left, root, n),
						CT_BCAST_RING);
		if (err != MPI_SUCCESS)
			return err;
	}
	return MPI_SUCCESS;
}

/* The root sends to every other rank in turn. */
static int bcast_linear(const coll_grp_t *g, void *buf, size_t len, int root, int tag)
{
	if (g->rank != root)
		return mpil_grp_recv(g, buf, len, root, tag);
	for (int i = 1; i < g->size; i++) {
		int err = mpil_grp_send(g, buf, len, (root + i) % g->size, tag);

		if (err != MPI_SUCCESS)
			return err;
	}
	return MPI_SUCCESS;
}

static int bcast_node_aware(const coll_grp_t *g, void *buf, size_t len, int root, unsigned where);

/* Broadcast within @g by the algorithm the selection table names; @where:
 * mpil_coll_where() of @g, or what a node-aware phase knows of its group. */
static int bcast_run(const coll_grp_t *g, void *buf, size_t len, int root, int tag, unsigned where)
{
	mpil_coll_query_t q = {.op = MPIL_COLL_BCAST,
			       .p = g->size,
			       .bytes = len,
			       .count = (long long)len,
			       .props = where};

	if (g->size == 1 || len == 0)
		return MPI_SUCCESS;
	switch (mpil_coll_choose(&q)) {
	case MPIL_COLL_ALG_NODE_AWARE: return bcast_node_aware(g, buf, len, root, where);
	case MPIL_COLL_ALG_LINEAR: return bcast_linear(g, buf, len, root, tag);
	case MPIL_COLL_ALG_SCATTER_RING: return bcast_scatter_ring(g, buf, len, root);
	case MPIL_COLL_ALG_BINOMIAL: return mpil_coll_bcast_binomial(g, buf, len, root, tag);
	default: return MPI_ERR_INTERN;
	}
}

/* To the representatives (among nodes: not one node), then inside each
 * node (one node); each phase selects again. */
static int bcast_node_aware(const coll_grp_t *g, void *buf, size_t len, int root, unsigned where)
{
	unsigned oversub = where & MPIL_COLL_OVERSUB;
	coll_hier_t h;
	int err;

	err = mpil_coll_hier_get(g->comm, root, &h);
	if (err != MPI_SUCCESS)
		return err;
	if (h.is_rep && h.inter.size > 1) {
		err = bcast_run(&h.inter, buf, len, h.inter_root, CT_BCAST, oversub);
		if (err != MPI_SUCCESS)
			return err;
	}
	return bcast_run(&h.intra, buf, len, h.intra_root, CT_BCAST_INTRA,
			 oversub | MPIL_COLL_ONE_NODE);
}

int mpil_coll_bcast(const coll_grp_t *g, void *buf, size_t len, int root)
{
	return bcast_run(g, buf, len, root, CT_BCAST, mpil_coll_where(g));
}

int mpil_bcast_bytes(void *buf, size_t len, int root, MPI_Comm comm)
{
	coll_grp_t g;

	coll_grp_comm(&g, comm);
	return mpil_coll_bcast(&g, buf, len, root);
}
