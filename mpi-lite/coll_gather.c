/*
 * coll_gather.c — gather, scatter and allgather of byte blocks within a
 * group (the v variants are the same algorithms on per-block lengths).
 *
 * Gather/scatter, small blocks: binomial tree on ranks relative to the
 * root. The subtree of relative rank v is [v, v + lowbit(v)), so its blocks
 * are one contiguous run of a buffer in relative order: a rank receives
 * its children's runs next to its own block (gather) or forwards slices of
 * the run it got (scatter) — log p steps instead of p - 1 messages at the
 * root. The root rotates relative order into rank order at the end (gather)
 * or the start (scatter), unless it is rank 0 of a dense buffer.
 *
 * Gather/scatter, large blocks and the v variants: the root posts every
 * transfer at once and waits (the engine overlaps them); data moves once.
 *
 * Allgather, small (Bruck, any p): block i of a buffer in relative order
 * holds rank r + i's block; in round k rank r sends its first
 * min(2^k, p - 2^k) blocks to r - 2^k and appends what r + 2^k sends.
 * ceil(log2 p) rounds, then one rotation into place.
 *
 * Allgather, large, and allgatherv: ring; in step s rank r passes block
 * r - s to the right and takes block r - s - 1 from the left. Data goes
 * straight between the receive buffers.
 *
 * Which one runs is the selection table's choice (coll_select.c).
 */
#include "coll_int.h"

/* Relative rank @v's subtree size (lowest set bit, or p at the root),
 * clipped at p; *mask_p is that bit. */
static int subtree(int v, int p, int *mask_p)
{
	int mask = 1;

	while (mask < p && !(v & mask))
		mask <<= 1;
	*mask_p = mask;
	return v + mask < p ? mask : p - v;
}

static int wait_started(ibx_request_t *rq, int k, int err)
{
	if (err != MPI_SUCCESS) {
		mpil_grp_abandon(rq, k);
		return err;
	}
	return mpil_grp_waitall(rq, k);
}

/* ---- gather -------------------------------------------------------------------------------- */

static int gather_linear(const coll_grp_t *g, int root, const void *mine, size_t mylen,
			 const coll_lay_t *recv)
{
	int p = g->size, k = 0, err = MPI_SUCCESS;
	ibx_request_t *rq;

	if (g->rank != root)
		return mpil_grp_send(g, mine, mylen, root, CT_GATHER);
	if (mine)
		memcpy(lay_ptr(recv, root), mine,
		       mylen < lay_len(recv, root) ? mylen : lay_len(recv, root));
	if (p == 1)
		return MPI_SUCCESS;
	rq = malloc((size_t)(p - 1) * sizeof(*rq));
	if (!rq)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < p && err == MPI_SUCCESS; i++) {
		if (i == root)
			continue;
		err = mpil_grp_irecv(g, lay_ptr(recv, i), lay_len(recv, i), i, CT_GATHER, &rq[k]);
		if (err == MPI_SUCCESS)
			k++;
	}
	err = wait_started(rq, k, err);
	free(rq);
	return err;
}

static int gather_binomial(const coll_grp_t *g, int root, const void *mine, size_t mylen,
			   const coll_lay_t *recv)
{
	size_t len = recv->len; /* every block's size (mylen: this rank's, the same but at
				 * a root that sends less than it receives) */
	int p = g->size, vr = (g->rank - root + p) % p, mask, sub, err = MPI_SUCCESS, first = 0;
	char *tmp;
	bool direct;

	sub = subtree(vr, p, &mask);
	if (sub == 1 && vr != 0)
		return mpil_grp_send(g, mine, mylen, (vr - mask + root) % p, CT_GATHER);
	/* Rank 0 as root of a dense buffer receives in place. */
	direct = vr == 0 && root == 0 && !recv->off && recv->stride == len;
	tmp = direct ? recv->base : malloc((size_t)sub * len + 1);
	if (!tmp)
		return MPI_ERR_NO_MEM;
	if (vr == 0 && !mine) { /* in place: the root's block is there already */
		mine = lay_ptr(recv, root);
		mylen = len;
		first = 1;
	}
	if (tmp != mine)
		memcpy(tmp, mine, mylen < len ? mylen : len);
	for (int m = 1; m < mask && vr + m < p; m <<= 1) {
		int child = vr + m, csub = child + m < p ? m : p - child;

		err = mpil_grp_recv(g, tmp + (size_t)m * len, (size_t)csub * len,
				    (child + root) % p, CT_GATHER);
		if (err != MPI_SUCCESS)
			goto out;
	}
	if (vr != 0) {
		err = mpil_grp_send(g, tmp, (size_t)sub * len, (vr - mask + root) % p, CT_GATHER);
	} else if (!direct) {
		for (int j = first; j < p; j++)
			memcpy(lay_ptr(recv, (j + root) % p), tmp + (size_t)j * len, len);
	}
out:
	if (!direct)
		free(tmp);
	return err;
}

int mpil_coll_gather(const coll_grp_t *g, mpil_coll_op_t op, int root, const void *mine,
		     size_t mylen, const coll_lay_t *recv)
{
	mpil_coll_query_t q = {.op = op, .p = g->size, .bytes = recv->len};

	switch (mpil_coll_choose(&q)) {
	case MPIL_COLL_ALG_BINOMIAL: return gather_binomial(g, root, mine, mylen, recv);
	case MPIL_COLL_ALG_LINEAR: return gather_linear(g, root, mine, mylen, recv);
	default: return MPI_ERR_INTERN;
	}
}

/* ---- scatter ------------------------------------------------------------------------------- */

static int scatter_linear(const coll_grp_t *g, int root, const coll_lay_t *send, void *mine,
			  size_t mylen)
{
	int p = g->size, k = 0, err = MPI_SUCCESS;
	ibx_request_t *rq;

	if (g->rank != root)
		return mpil_grp_recv(g, mine, mylen, root, CT_SCATTER);
	if (mine)
		memcpy(mine, lay_ptr(send, root),
		       mylen < lay_len(send, root) ? mylen : lay_len(send, root));
	if (p == 1)
		return MPI_SUCCESS;
	rq = malloc((size_t)(p - 1) * sizeof(*rq));
	if (!rq)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < p && err == MPI_SUCCESS; i++) {
		if (i == root)
			continue;
		err = mpil_grp_isend(g, lay_ptr(send, i), lay_len(send, i), i, CT_SCATTER, &rq[k]);
		if (err == MPI_SUCCESS)
			k++;
	}
	err = wait_started(rq, k, err);
	free(rq);
	return err;
}

static int scatter_binomial(const coll_grp_t *g, int root, const coll_lay_t *send, void *mine,
			    size_t mylen)
{
	size_t len = send->len; /* every block's size, set on every rank */
	int p = g->size, vr = (g->rank - root + p) % p, mask, sub, err = MPI_SUCCESS;
	char *tmp;
	bool direct;

	sub = subtree(vr, p, &mask);
	if (sub == 1 && vr != 0)
		return mpil_grp_recv(g, mine, mylen, (vr - mask + root) % p, CT_SCATTER);
	direct = vr == 0 && root == 0 && !send->off && send->stride == len;
	tmp = direct ? send->base : malloc((size_t)sub * len + 1);
	if (!tmp)
		return MPI_ERR_NO_MEM;
	if (vr == 0) {
		if (!direct)
			for (int j = 0; j < p; j++)
				memcpy(tmp + (size_t)j * len, lay_ptr(send, (j + root) % p), len);
	} else {
		err = mpil_grp_recv(g, tmp, (size_t)sub * len, (vr - mask + root) % p, CT_SCATTER);
		if (err != MPI_SUCCESS)
			goto out;
	}
	for (int m = mask >> 1; m > 0; m >>= 1) {
		int child = vr + m;

		if (child >= p)
			continue;
		int csub = child + m < p ? m : p - child;

		err = mpil_grp_send(g, tmp + (size_t)m * len, (size_t)csub * len,
				    (child + root) % p, CT_SCATTER);
		if (err != MPI_SUCCESS)
			goto out;
	}
	if (mine && mine != tmp)
		memcpy(mine, tmp, mylen < len ? mylen : len);
out:
	if (!direct)
		free(tmp);
	return err;
}

int mpil_coll_scatter(const coll_grp_t *g, mpil_coll_op_t op, int root, const coll_lay_t *send,
		      void *mine, size_t mylen)
{
	mpil_coll_query_t q = {.op = op, .p = g->size, .bytes = send->len};

	switch (mpil_coll_choose(&q)) {
	case MPIL_COLL_ALG_BINOMIAL: return scatter_binomial(g, root, send, mine, mylen);
	case MPIL_COLL_ALG_LINEAR: return scatter_linear(g, root, send, mine, mylen);
	default: return MPI_ERR_INTERN;
	}
}

/* ---- allgather ----------------------------------------------------------------------------- */

int mpil_coll_allgather_ring(const coll_grp_t *g, const coll_lay_t *recv)
{
	int p = g->size, r = g->rank, left = (r - 1 + p) % p, right = (r + 1) % p;

	for (int s = 0; s < p - 1; s++) {
		int sb = (r - s + p) % p, rb = (r - s - 1 + p) % p;
		int err =
		    mpil_grp_sendrecv(g, lay_ptr(recv, sb), lay_len(recv, sb), right,
				      lay_ptr(recv, rb), lay_len(recv, rb), left, CT_ALLGATHER);

		if (err != MPI_SUCCESS)
			return err;
	}
	return MPI_SUCCESS;
}

static int allgather_bruck(const coll_grp_t *g, const coll_lay_t *recv)
{
	int p = g->size, r = g->rank, err = MPI_SUCCESS;
	size_t len = recv->len;
	char *tmp = malloc((size_t)p * len + 1);

	if (!tmp)
		return MPI_ERR_NO_MEM;
	memcpy(tmp, lay_ptr(recv, r), len);
	for (int d = 1; d < p; d <<= 1) {
		int cnt = d < p - d ? d : p - d;

		err = mpil_grp_sendrecv(g, tmp, (size_t)cnt * len, (r - d + p) % p,
					tmp + (size_t)d * len, (size_t)cnt * len, (r + d) % p,
					CT_ALLGATHER);
		if (err != MPI_SUCCESS)
			goto out;
	}
	for (int i = 1; i < p; i++)
		memcpy(lay_ptr(recv, (r + i) % p), tmp + (size_t)i * len, len);
out:
	free(tmp);
	return err;
}

int mpil_coll_allgather(const coll_grp_t *g, mpil_coll_op_t op, const coll_lay_t *recv)
{
	mpil_coll_query_t q = {.op = op, .p = g->size, .bytes = (size_t)g->size * recv->len};

	switch (mpil_coll_choose(&q)) {
	case MPIL_COLL_ALG_BRUCK: return allgather_bruck(g, recv);
	case MPIL_COLL_ALG_RING: return mpil_coll_allgather_ring(g, recv);
	default: return MPI_ERR_INTERN;
	}
}
