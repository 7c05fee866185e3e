/*
 * coll_alltoall.c — personalised all-to-all exchange of byte blocks.
 *
 * Small blocks (Bruck et al., "Efficient algorithms for all-to-all
 * communications in multiport message-passing systems", 1997): ceil(log2 p)
 * rounds instead of p - 1. Rank r first rotates its blocks so that index i
 * holds the block for rank r + i; in round k every block whose index has
 * bit k set moves 2^k ranks forward (packed into one message). A block thus
 * travels exactly its index and arrives at index i = (dest - source): a
 * final rotation puts the block from rank j at position j. Each block
 * moves about log2(p)/2 times, which is why this only pays for small ones.
 *
 * Otherwise (and for alltoallv): pairwise exchange, p - 1 steps; in step s
 * rank r sends to r + s and receives from r - s, so every step is a
 * permutation and no rank is swamped. Data goes straight between the user
 * buffers (or their packed images).
 *
 * Ranks that outnumber the cores (one node, up to 8 ranks, blocks up to
 * 256 KiB): every block at once, p - 1 receives and p - 1 sends posted
 * together, then one wait. A staged exchange waits at each step (Bruck's
 * round, a pairwise step) for a peer that may share our core and not be
 * running; here a rank that runs late finds its blocks already there and
 * the others wait for nothing but its sends. 4 ranks on 2 cores
 * (2026-11-25): 8 B 2.4 us against 4.5 pairwise and 3.9 Bruck; 64 KiB 19.5
 * against 26.7 pairwise; 1 MiB 361 against 340, so pairwise from 256 KiB
 * on.
 *
 * Which one runs is the selection table's choice (coll_select.c).
 */
#include "coll_int.h"

/* The own block is copied too (overlapped with the first exchange when
 * large). */
static int alltoall_pairwise(const coll_grp_t *g, const coll_lay_t *send, const coll_lay_t *recv)
{
	int p = g->size, r = g->rank, err;
	size_t own = lay_len(send, r) < lay_len(recv, r) ? lay_len(send, r) : lay_len(recv, r);
	bool overlap = p > 1 && own >= COLL_COPY_OVERLAP_MIN;

	if (!overlap && own && lay_ptr(send, r) != lay_ptr(recv, r))
		memcpy(lay_ptr(recv, r), lay_ptr(send, r), own);
	for (int s = 1; s < p; s++) {
		int dst = (r + s) % p, src = (r - s + p) % p;

		if (s == 1 && overlap) {
			/* The own block is copied while the first exchange is
			 * under way: the engine moves data between the pieces. */
			ibx_request_t rq[2];

			err = mpil_grp_irecv(g, lay_ptr(recv, src), lay_len(recv, src), src,
					     CT_ALLTOALL, &rq[0]);
			if (err == MPI_SUCCESS)
				err = mpil_grp_isend(g, lay_ptr(send, dst), lay_len(send, dst), dst,
						     CT_ALLTOALL, &rq[1]);
			if (err != MPI_SUCCESS) {
				mpil_grp_abandon(rq, rq[0].completed && rq[0].status < 0 ? 0 : 1);
				return err;
			}
			mpil_coll_copy_progress(lay_ptr(recv, r), lay_ptr(send, r), own);
			err = mpil_grp_waitall(rq, 2);
		} else {
			err = mpil_grp_sendrecv(g, lay_ptr(send, dst), lay_len(send, dst), dst,
						lay_ptr(recv, src), lay_len(recv, src), src,
						CT_ALLTOALL);
		}
		if (err != MPI_SUCCESS)
			return err;
	}
	return MPI_SUCCESS;
}

/* Every block at once (ranks outnumber cores). The caller has copied the
 * own block already. */
static int alltoall_linear(const coll_grp_t *g, const coll_lay_t *send, const coll_lay_t *recv)
{
	int p = g->size, r = g->rank, k = 0, err = MPI_SUCCESS;
	ibx_request_t stack_rq[16], *rq = stack_rq;

	if (2 * (size_t)(p - 1) > IBX_ARRAY_SIZE(stack_rq)) {
		rq = malloc(2 * (size_t)(p - 1) * sizeof(*rq));
		if (!rq)
			return MPI_ERR_NO_MEM;
	}
	for (int s = 1; s < p && err == MPI_SUCCESS; s++) {
		int src = (r - s + p) % p;

		err = mpil_grp_irecv(g, lay_ptr(recv, src), lay_len(recv, src), src, CT_ALLTOALL,
				     &rq[k]);
		if (err == MPI_SUCCESS)
			k++;
	}
	for (int s = 1; s < p && err == MPI_SUCCESS; s++) {
		int dst = (r + s) % p;

		err = mpil_grp_isend(g, lay_ptr(send, dst), lay_len(send, dst), dst, CT_ALLTOALL,
				     &rq[k]);
		if (err == MPI_SUCCESS)
			k++;
	}
	if (err != MPI_SUCCESS)
		mpil_grp_abandon(rq, k);
	else
		err = mpil_grp_waitall(rq, k);
	if (rq != stack_rq)
		free(rq);
	return err;
}

/* The caller has copied the own block already. */
static int alltoall_bruck(const coll_grp_t *g, const coll_lay_t *send, const coll_lay_t *recv)
{
	int p = g->size, r = g->rank, err = MPI_SUCCESS;
	size_t len = send->len, half = (size_t)(p / 2 + 1) * len;
	char *tmp = malloc((size_t)p * len + 2 * half + 1), *out, *in;

	if (!tmp)
		return MPI_ERR_NO_MEM;
	out = tmp + (size_t)p * len;
	in = out + half;
	for (int i = 0; i < p; i++)
		memcpy(tmp + (size_t)i * len, lay_ptr(send, (r + i) % p), len);
	for (int k = 1; k < p; k <<= 1) {
		size_t n = 0;

		for (int i = k; i < p; i++)
			if (i & k)
				memcpy(out + (n++) * len, tmp + (size_t)i * len, len);
		err = mpil_grp_sendrecv(g, out, n * len, (r + k) % p, in, n * len, (r - k + p) % p,
					CT_ALLTOALL);
		if (err != MPI_SUCCESS)
			goto out;
		n = 0;
		for (int i = k; i < p; i++)
			if (i & k)
				memcpy(tmp + (size_t)i * len, in + (n++) * len, len);
	}
	/* Index i now holds the block from rank r - i. */
	for (int i = 1; i < p; i++)
		memcpy(lay_ptr(recv, (r - i + p) % p), tmp + (size_t)i * len, len);
out:
	free(tmp);
	return err;
}

int mpil_coll_alltoall(const coll_grp_t *g, mpil_coll_op_t op, const coll_lay_t *send,
		       const coll_lay_t *recv)
{
	mpil_coll_query_t q = {.op = op,
			       .p = g->size,
			       .bytes = send->len,
			       .props = (send->len == recv->len ? MPIL_COLL_SAME_BLOCKS : 0) |
					mpil_coll_where(g)};
	int me = g->rank;

	switch (mpil_coll_choose(&q)) {
	case MPIL_COLL_ALG_LINEAR:
		if (lay_ptr(recv, me) != lay_ptr(send, me))
			memcpy(lay_ptr(recv, me), lay_ptr(send, me), send->len);
		return alltoall_linear(g, send, recv);
	case MPIL_COLL_ALG_BRUCK:
		if (lay_ptr(recv, me) != lay_ptr(send, me))
			memcpy(lay_ptr(recv, me), lay_ptr(send, me), send->len);
		return alltoall_bruck(g, send, recv);
	case MPIL_COLL_ALG_PAIRWISE: return alltoall_pairwise(g, send, recv);
	default: return MPI_ERR_INTERN;
	}
}
