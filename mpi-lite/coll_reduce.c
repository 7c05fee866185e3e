/*
 * coll_reduce.c — reduce, allreduce and reduce-scatter within a group, on
 * work buffers (coll_int.h: "Reductions").
 *
 * Operands are always combined lower rank first (x_lo op x_hi), so
 * non-commutative operations get the rank order MPI requires; commutative
 * ones are free to use trees rooted anywhere and rings.
 *
 * Reduce, short or non-commutative: binomial tree. A rank combines what its
 * subtree sends (x_mine op x_subtree: the subtree holds the higher relative
 * ranks) and passes the result to its parent. For a non-commutative op the
 * tree is rooted at rank 0 (relative = real ranks, so every subtree is a
 * contiguous run of ranks above its root) and rank 0 forwards the result to
 * the root.
 *
 * Reduce, long and commutative (Rabenseifner's idea with a ring): ring
 * reduce-scatter, after which rank i holds the reduction of segment i, then
 * every rank sends its segment to the root: 2n bytes per rank instead of
 * n log p at the root.
 *
 * Allreduce, short (or a non-commutative op, or a derived work type):
 * recursive doubling. With p' = the largest power of two <= p and
 * r = p - p', the first 2r ranks fold pairwise (even into odd) so p' ranks
 * exchange-and-reduce in log2 p' rounds; the folded-out ranks get the
 * result back at the end.
 *
 * Allreduce, two ranks and a commutative op, up to 64 KiB: one exchange of
 * the whole vector and one local reduction (each rank computes x_mine op
 * x_other straight into its receive buffer). Beyond, Rabenseifner below
 * with p = 2: each rank reduces one half and the halves are swapped, so
 * each rank reduces n/2 instead of n for one more exchange of n/2 each
 * way. 2 ranks pinned, doubles (2026-11-25): 64 KiB 7.1 us both; 128 KiB
 * 12.1 against 13.0; 256 KiB 21.2 against 24.2; 1 MiB 78 against 98 us.
 *
 * Allreduce, long, commutative (Rabenseifner): reduce-scatter by recursive
 * halving (step k swaps half of the current range with rank ^ 2^k and
 * reduces the half it keeps), then allgather by recursive doubling (the
 * same pairs backwards), among the largest power of two of ranks after
 * the fold above: 2 log2 p steps moving the ring's 2n (p-1)/p bytes. Every
 * element is reduced by exactly one rank, so all ranks get identical bits.
 * Measured at 3, 4 and 5 ranks on 2 cores (64 KiB-1 MiB) against a ring
 * reduce-scatter + allgather (2 (p-1) steps, the same bytes) and recursive
 * doubling (log p steps of n bytes): the fastest from 64 KiB on, since
 * here every step that waits for a peer may wait for a context switch.
 *
 * Allreduce across nodes (commutative op): reduce inside each node to its
 * representative, allreduce among the representatives, broadcast inside
 * each node. Reduce across nodes (commutative op): inside each node to its
 * representative (the root on the root's node), then among the
 * representatives to the root.
 *
 * Reduce-scatter, commutative: a ring reduce-scatter with the segment
 * sizes the caller gives, arranged so that rank i ends with segment i.
 * Otherwise: reduce to rank 0 and scatter the segments.
 *
 * Which one runs is the selection table's choice (coll_select.c).
 */
#include "coll_int.h"

void mpil_coll_red_init(coll_red_t *rd, MPI_Op op, MPI_Datatype dt)
{
	rd->op = op;
	rd->dt = dt;
	rd->ext = (size_t)dt->extent;
	rd->whole = !(dt->flags & MPIL_DTF_PREDEFINED);
	rd->lo = rd->whole ? dt->true_lb : 0;
	rd->commute = op->commutative;
}

void *mpil_coll_red_alloc(const coll_red_t *rd, int n, void **base_p)
{
	size_t bytes = red_span(rd, n);
	char *base = malloc(bytes ? bytes : 1);

	*base_p = base;
	return base ? base - rd->lo : NULL;
}

/* Copies the @n elements of work buffer @src into @dst. */
static void red_copy(const coll_red_t *rd, void *dst, const void *src, int n)
{
	if (dst != src)
		memcpy(red_first(rd, dst), red_first(rd, (void *)src), red_span(rd, n));
}

static int red_send(const coll_grp_t *g, const coll_red_t *rd, const void *buf, int n, int dst,
		    int tag)
{
	return mpil_grp_send(g, red_first(rd, (void *)buf), red_span(rd, n), dst, tag);
}

static int red_recv(const coll_grp_t *g, const coll_red_t *rd, void *buf, int n, int src, int tag)
{
	return mpil_grp_recv(g, red_first(rd, buf), red_span(rd, n), src, tag);
}

/* First element of segment @i when @count elements are split in @n. */
static inline int seg_start(int count, int n, int i)
{
	return (int)((long long)count * i / n);
}

/* ---- reduce -------------------------------------------------------------------------------- */

static int reduce_binomial(const coll_grp_t *g, const void *in, void *rbuf, int n,
			   const coll_red_t *rd, int root)
{
	int p = g->size, r = g->rank, troot = rd->commute ? root : 0;
	int vr = (r - troot + p) % p, err = MPI_SUCCESS;
	const void *cur = in; /* the partial result so far */
	void *spare[2] = {NULL, NULL}, *base[2] = {NULL, NULL};
	int nspare = 0;

	/* Writable buffers to receive into: the root's rbuf (skipped while it
	 * holds cur, as in place), temporaries. Two suffice: cur alternates. */
	if (r == root)
		spare[nspare++] = rbuf;
	for (int mask = 1; mask < p; mask <<= 1) {
		if (vr & mask) {
			err = red_send(g, rd, cur, n, (vr - mask + troot) % p, CT_RED_TREE);
			break;
		}
		if (vr + mask >= p)
			continue;
		/* A buffer that does not hold cur. */
		void *x = NULL;

		for (int i = 0; i < 2 && !x; i++) {
			if (i >= nspare) {
				spare[i] = mpil_coll_red_alloc(rd, n, &base[i]);
				if (!spare[i]) {
					err = MPI_ERR_NO_MEM;
					goto out;
				}
				nspare++;
			}
			if (spare[i] != cur)
				x = spare[i];
		}
		err = red_recv(g, rd, x, n, (vr + mask + troot) % p, CT_RED_TREE);
		if (err != MPI_SUCCESS)
			goto out;
		red_apply(rd, cur, x, n); /* x = mine op subtree */
		cur = x;
	}
	if (err != MPI_SUCCESS)
		goto out;
	if (troot != root) {
		/* Non-commutative: rank 0 has the result, the root wants it. */
		if (r == 0)
			err = red_send(g, rd, cur, n, root, CT_RED_ROOT);
		else if (r == root)
			err = red_recv(g, rd, rbuf, n, 0, CT_RED_ROOT);
	} else if (r == root && cur != rbuf) {
		red_copy(rd, rbuf, cur, n);
	}
out:
	free(base[0]);
	free(base[1]);
	return err;
}

/* Ring reduce-scatter over @acc (every rank's full input, overwritten):
 * afterwards segment i of rank i's acc holds the reduction. Segment i is
 * counts[i] elements at displs[i]; @tmp holds the largest segment. */
static int rs_ring(const coll_grp_t *g, char *acc, char *tmp, const int *counts, const int *displs,
		   const coll_red_t *rd, int tag)
{
	int p = g->size, r = g->rank, left = (r - 1 + p) % p, right = (r + 1) % p, err;
	size_t ext = rd->ext;

	for (int s = 0; s < p - 1; s++) {
		int ss = (r - s - 1 + p) % p, rs = (r - s - 2 + 2 * p) % p;

		err = mpil_grp_sendrecv(g, acc + (size_t)displs[ss] * ext, (size_t)counts[ss] * ext,
					right, tmp, (size_t)counts[rs] * ext, left, tag);
		if (err != MPI_SUCCESS)
			return err;
		red_apply(rd, tmp, acc + (size_t)displs[rs] * ext, counts[rs]);
	}
	return MPI_SUCCESS;
}

/* Even segments of @n elements: counts/displs of p entries. */
static int even_segments(int n, int p, int **counts_p, int **displs_p)
{
	int *c = malloc(2 * (size_t)p * sizeof(int));

	if (!c)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < p; i++) {
		c[p + i] = seg_start(n, p, i);
		c[i] = seg_start(n, p, i + 1) - c[p + i];
	}
	*counts_p = c;
	*displs_p = c + p;
	return MPI_SUCCESS;
}

static int reduce_rs_gather(const coll_grp_t *g, const void *in, void *rbuf, int n,
			    const coll_red_t *rd, int root)
{
	int p = g->size, r = g->rank, *counts, *displs, err;
	size_t ext = rd->ext;
	char *acc, *tmp = NULL;
	void *acc_base = NULL;

	err = even_segments(n, p, &counts, &displs);
	if (err != MPI_SUCCESS)
		return err;
	if (r == root) {
		acc = rbuf;
	} else {
		acc = mpil_coll_red_alloc(rd, n, &acc_base);
		if (!acc) {
			err = MPI_ERR_NO_MEM;
			goto out;
		}
	}
	red_copy(rd, acc, in, n);
	tmp = malloc(((size_t)n / (size_t)p + 1) * ext);
	if (!tmp) {
		err = MPI_ERR_NO_MEM;
		goto out;
	}
	err = rs_ring(g, acc, tmp, counts, displs, rd, CT_RED_RS);
	if (err != MPI_SUCCESS)
		goto out;
	if (r != root) {
		err = mpil_grp_send(g, acc + (size_t)displs[r] * ext, (size_t)counts[r] * ext, root,
				    CT_RED_GATHER);
	} else {
		ibx_request_t *rq = malloc((size_t)p * sizeof(*rq));
		int k = 0;

		if (!rq) {
			err = MPI_ERR_NO_MEM;
			goto out;
		}
		for (int i = 0; i < p && err == MPI_SUCCESS; i++) {
			if (i == root)
				continue;
			err = mpil_grp_irecv(g, acc + (size_t)displs[i] * ext,
					     (size_t)counts[i] * ext, i, CT_RED_GATHER, &rq[k]);
			if (err != MPI_SUCCESS)
				mpil_grp_abandon(rq, k);
			else
				k++;
		}
		if (err == MPI_SUCCESS)
			err = mpil_grp_waitall(rq, k);
		free(rq);
	}
out:
	free(tmp);
	free(acc_base);
	free(counts);
	return err;
}

static int reduce_node_aware(const coll_grp_t *g, const void *in, void *rbuf, int n,
			     const coll_red_t *rd, int root);

/* Reduce within @g by the algorithm the selection table names; @where:
 * mpil_coll_where() of @g, 0 in a phase of the node-aware reduce. */
static int reduce_run(const coll_grp_t *g, const void *in, void *rbuf, int n, const coll_red_t *rd,
		      int root, unsigned where)
{
	mpil_coll_query_t q = {.op = MPIL_COLL_REDUCE,
			       .p = g->size,
			       .bytes = red_span(rd, n),
			       .count = n,
			       .props = where | coll_red_props(rd)};

	if (g->size == 1) {
		red_copy(rd, rbuf, in, n);
		return MPI_SUCCESS;
	}
	switch (mpil_coll_choose(&q)) {
	case MPIL_COLL_ALG_NODE_AWARE: return reduce_node_aware(g, in, rbuf, n, rd, root);
	case MPIL_COLL_ALG_RS_GATHER: return reduce_rs_gather(g, in, rbuf, n, rd, root);
	case MPIL_COLL_ALG_BINOMIAL: return reduce_binomial(g, in, rbuf, n, rd, root);
	default: return MPI_ERR_INTERN;
	}
}

/* Inside each node to its representative (the root on its node), then
 * among the representatives to the root. */
static int reduce_node_aware(const coll_grp_t *g, const void *in, void *rbuf, int n,
			     const coll_red_t *rd, int root)
{
	coll_hier_t h;
	void *base = NULL;
	char *acc;
	int err = mpil_coll_hier_get(g->comm, root, &h);

	if (err != MPI_SUCCESS)
		return err;
	if (!h.is_rep)
		return reduce_run(&h.intra, in, NULL, n, rd, h.intra_root, 0);
	acc = g->rank == root ? rbuf : mpil_coll_red_alloc(rd, n, &base);
	if (!acc)
		return MPI_ERR_NO_MEM;
	err = reduce_run(&h.intra, in, acc, n, rd, h.intra_root, 0);
	if (err == MPI_SUCCESS)
		err = reduce_run(&h.inter, acc, g->rank == root ? rbuf : NULL, n, rd, h.inter_root,
				 0);
	free(base);
	return err;
}

int mpil_coll_reduce(const coll_grp_t *g, const void *sbuf, void *rbuf, int n, const coll_red_t *rd,
		     int root)
{
	if (n == 0)
		return MPI_SUCCESS;
	return reduce_run(g, sbuf ? sbuf : rbuf, rbuf, n, rd, root, mpil_coll_where(g));
}

/* ---- allreduce ----------------------------------------------------------------------------- */

/* The fold of recursive doubling and Rabenseifner for p not a power of two:
 * among the first 2 * rem ranks (rem = p - the largest power of two <= p),
 * even ones hand their operand to the next odd one, which computes
 * (r-1) op r into @acc (@tmp: a work buffer of @n elements), and sit out
 * the exchange. *newrank_p: the rank among the pof2 that take part, -1 for
 * those that sit out. */
static int allreduce_fold_in(const coll_grp_t *g, const coll_red_t *rd, char *acc, char *tmp, int n,
			     int *pof2_p, int *rem_p, int *newrank_p)
{
	int p = g->size, r = g->rank, pof2 = 1, rem, err = MPI_SUCCESS;

	while (pof2 * 2 <= p)
		pof2 *= 2;
	rem = p - pof2;
	*pof2_p = pof2;
	*rem_p = rem;
	if (r >= 2 * rem) {
		*newrank_p = r - rem;
	} else if (r % 2 == 0) {
		err = red_send(g, rd, acc, n, r + 1, CT_ALLRED_FOLD);
		*newrank_p = -1;
	} else {
		err = red_recv(g, rd, tmp, n, r - 1, CT_ALLRED_FOLD);
		if (err == MPI_SUCCESS)
			red_apply(rd, tmp, acc, n); /* (r-1) op r */
		*newrank_p = r / 2;
	}
	return err;
}

/* The real rank of @newrank after allreduce_fold_in. */
static inline int fold_real_rank(int newrank, int rem)
{
	return newrank < rem ? newrank * 2 + 1 : newrank + rem;
}

/* The unfold: the odd ranks of the fold send the result back. */
static int allreduce_fold_out(const coll_grp_t *g, const coll_red_t *rd, char *buf, int n, int rem)
{
	int r = g->rank;

	if (r >= 2 * rem)
		return MPI_SUCCESS;
	if (r % 2 == 0)
		return red_recv(g, rd, buf, n, r + 1, CT_ALLRED_UNFOLD);
	return red_send(g, rd, buf, n, r - 1, CT_ALLRED_UNFOLD);
}

static int allreduce_recursive_doubling(const coll_grp_t *g, char *rbuf, int n,
					const coll_red_t *rd)
{
	int r = g->rank, pof2, rem, newrank, err;
	void *tbase;
	char *acc = rbuf, *tmp = mpil_coll_red_alloc(rd, n, &tbase);

	if (!tmp)
		return MPI_ERR_NO_MEM;
	err = allreduce_fold_in(g, rd, acc, tmp, n, &pof2, &rem, &newrank);
	if (err != MPI_SUCCESS)
		goto out;
	if (newrank >= 0) {
		for (int mask = 1; mask < pof2; mask <<= 1) {
			int dst = fold_real_rank(newrank ^ mask, rem);

			err = mpil_grp_sendrecv(g, red_first(rd, acc), red_span(rd, n), dst,
						red_first(rd, tmp), red_span(rd, n), dst,
						CT_ALLRED_RD);
			if (err != MPI_SUCCESS)
				goto out;
			if (dst < r) {
				red_apply(rd, tmp, acc, n); /* theirs op mine */
			} else {
				char *t = acc;

				red_apply(rd, acc, tmp, n); /* mine op theirs */
				acc = tmp;
				tmp = t;
			}
		}
		if (acc != rbuf)
			red_copy(rd, rbuf, acc, n);
	}
	err = allreduce_fold_out(g, rd, rbuf, n, rem);
out:
	free(tbase);
	return err;
}

/* Two ranks, commutative op: swap whole vectors, reduce locally. */
static int allreduce_pair(const coll_grp_t *g, const void *sbuf, char *rbuf, int n,
			  const coll_red_t *rd)
{
	int other = 1 - g->rank, err;
	size_t bytes = red_span(rd, n);
	void *tbase = NULL;
	char *tmp;

	if (sbuf) {
		err = mpil_grp_sendrecv(g, sbuf, bytes, other, rbuf, bytes, other, CT_ALLRED_RD);
		if (err == MPI_SUCCESS)
			red_apply(rd, sbuf, rbuf, n); /* mine op theirs */
		return err;
	}
	tmp = mpil_coll_red_alloc(rd, n, &tbase);
	if (!tmp)
		return MPI_ERR_NO_MEM;
	err = mpil_grp_sendrecv(g, rbuf, bytes, other, tmp, bytes, other, CT_ALLRED_RD);
	if (err == MPI_SUCCESS)
		red_apply(rd, tmp, rbuf, n); /* theirs op mine */
	free(tbase);
	return err;
}

/* Rabenseifner: reduce-scatter by recursive halving, then allgather by
 * recursive doubling, among the largest power of two of ranks (the others
 * folded in first, as in recursive doubling). 2 log2 p steps moving the
 * ring's bytes. Commutative ops. Input @sbuf (NULL: in place), result in
 * @acc; outside the fold the first step sends from @sbuf and receives the
 * partner's half straight into @acc (no copy of the whole input first). */
static int allreduce_rabenseifner(const coll_grp_t *g, const void *sbuf, char *acc, int n,
				  const coll_red_t *rd)
{
	int pof2, rem, newrank, err, lv = 0;
	int lo = 0, hi = n, los[32], his[32];
	size_t ext = rd->ext;
	const char *in = sbuf ? sbuf : acc; /* where the first step's operands are */
	void *tbase;
	char *tmp = mpil_coll_red_alloc(rd, n, &tbase);

	if (!tmp)
		return MPI_ERR_NO_MEM;
	pof2 = 1;
	while (pof2 * 2 <= g->size)
		pof2 *= 2;
	if (sbuf && g->rank < 2 * (g->size - pof2)) {
		/* in the fold: it works on acc */
		red_copy(rd, acc, sbuf, n);
		in = acc;
	}
	err = allreduce_fold_in(g, rd, acc, tmp, n, &pof2, &rem, &newrank);
	if (err != MPI_SUCCESS)
		goto out;
	if (newrank >= 0) {
		/* reduce-scatter: halve my range each step */
		for (int mask = pof2 / 2; mask > 0; mask /= 2, lv++) {
			int newdst = newrank ^ mask, dst = fold_real_rank(newdst, rem);
			int mid = lo + (hi - lo) / 2, klo, khi, slo, shi;
			bool first = in != acc;

			los[lv] = lo;
			his[lv] = hi;
			if (newrank < newdst)
				klo = lo, khi = mid, slo = mid, shi = hi;
			else
				klo = mid, khi = hi, slo = lo, shi = mid;
			/* first step: the partner's half lands in acc */
			err =
			    mpil_grp_sendrecv(g, in + (size_t)slo * ext, (size_t)(shi - slo) * ext,
					      dst, first ? acc + (size_t)klo * ext : tmp,
					      (size_t)(khi - klo) * ext, dst, CT_ALLRED_RS);
			if (err != MPI_SUCCESS)
				goto out;
			red_apply(rd, first ? in + (size_t)klo * ext : tmp, acc + (size_t)klo * ext,
				  khi - klo);
			in = acc;
			lo = klo;
			hi = khi;
		}
		/* allgather: the same pairs backwards, doubling my range */
		for (int mask = 1; mask < pof2; mask *= 2) {
			int dst = fold_real_rank(newrank ^ mask, rem);
			int plo, phi;

			lv--;
			/* the partner holds the other part of [los[lv], his[lv]) */
			if (lo == los[lv])
				plo = hi, phi = his[lv];
			else
				plo = los[lv], phi = lo;
			err = mpil_grp_sendrecv(g, acc + (size_t)lo * ext, (size_t)(hi - lo) * ext,
						dst, acc + (size_t)plo * ext,
						(size_t)(phi - plo) * ext, dst, CT_ALLRED_AG);
			if (err != MPI_SUCCESS)
				goto out;
			lo = los[lv];
			hi = his[lv];
		}
	}
	err = allreduce_fold_out(g, rd, acc, n, rem);
out:
	free(tbase);
	return err;
}

/* Recursive doubling and Rabenseifner reduce in place: the input into
 * @rbuf first. */
static char *allreduce_in_place(const coll_red_t *rd, const void *sbuf, void *rbuf, int n)
{
	if (sbuf)
		red_copy(rd, rbuf, sbuf, n);
	return rbuf;
}

static int allreduce_node_aware(const coll_grp_t *g, const void *sbuf, void *rbuf, int n,
				const coll_red_t *rd);

/* Allreduce within @g by the algorithm the selection table names;
 * @where: mpil_coll_where() of @g, 0 in a phase of the node-aware one. */
static int allreduce_run(const coll_grp_t *g, const void *sbuf, void *rbuf, int n,
			 const coll_red_t *rd, unsigned where)
{
	mpil_coll_query_t q = {.op = MPIL_COLL_ALLREDUCE,
			       .p = g->size,
			       .bytes = red_span(rd, n),
			       .count = n,
			       .props = where | coll_red_props(rd)};

	if (g->size == 1) {
		allreduce_in_place(rd, sbuf, rbuf, n);
		return MPI_SUCCESS;
	}
	switch (mpil_coll_choose(&q)) {
	case MPIL_COLL_ALG_NODE_AWARE: return allreduce_node_aware(g, sbuf, rbuf, n, rd);
	case MPIL_COLL_ALG_PAIR: return allreduce_pair(g, sbuf, rbuf, n, rd);
	case MPIL_COLL_ALG_RABENSEIFNER: return allreduce_rabenseifner(g, sbuf, rbuf, n, rd);
	case MPIL_COLL_ALG_REC_DOUBLING:
		return allreduce_recursive_doubling(g, allreduce_in_place(rd, sbuf, rbuf, n), n,
						    rd);
	default: return MPI_ERR_INTERN;
	}
}

/* Reduce inside each node to its representative, allreduce among the
 * representatives, broadcast inside each node. */
static int allreduce_node_aware(const coll_grp_t *g, const void *sbuf, void *rbuf, int n,
				const coll_red_t *rd)
{
	coll_hier_t h;
	int err;

	err = mpil_coll_hier_get(g->comm, 0, &h);
	if (err == MPI_SUCCESS)
		err = mpil_coll_reduce(&h.intra, sbuf, rbuf, n, rd, h.intra_root);
	if (err == MPI_SUCCESS && h.is_rep && h.inter.size > 1)
		err = allreduce_run(&h.inter, NULL, rbuf, n, rd, 0);
	if (err == MPI_SUCCESS && h.intra.size > 1)
		err = mpil_coll_bcast(&h.intra, red_first(rd, rbuf), red_span(rd, n), h.intra_root);
	return err;
}

int mpil_coll_allreduce(const coll_grp_t *g, const void *sbuf, void *rbuf, int n,
			const coll_red_t *rd)
{
	if (n == 0)
		return MPI_SUCCESS;
	return allreduce_run(g, sbuf, rbuf, n, rd, mpil_coll_where(g));
}

int mpil_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
		   MPI_Comm comm)
{
	coll_grp_t g;
	coll_red_t rd;

	coll_grp_comm(&g, comm);
	mpil_coll_red_init(&rd, op, dt);
	return mpil_coll_allreduce(&g, sendbuf == MPI_IN_PLACE ? NULL : sendbuf, recvbuf, count,
				   &rd);
}

/* ---- reduce-scatter ------------------------------------------------------------------------- */

/* Commutative: a ring over a copy of the whole input in @acc; rank r's
 * segment to @rbuf. */
static int rs_ring_all(const coll_grp_t *g, const void *in, char *acc, void *rbuf,
		       const int *counts, const int *displs, int total, size_t maxseg,
		       const coll_red_t *rd)
{
	int r = g->rank, err;
	char *tmp;

	red_copy(rd, acc, in, total);
	tmp = malloc(maxseg * rd->ext + 1);
	if (!tmp)
		return MPI_ERR_NO_MEM;
	err = rs_ring(g, acc, tmp, counts, displs, rd, CT_RS_RING);
	if (err == MPI_SUCCESS)
		memcpy(rbuf, acc + (size_t)displs[r] * rd->ext, (size_t)counts[r] * rd->ext);
	free(tmp);
	return err;
}

/* Rank 0 hands out the segments of the reduction in @acc. */
static int rs_scatter_from_0(const coll_grp_t *g, char *acc, void *rbuf, const int *counts,
			     const int *displs, const coll_red_t *rd)
{
	int p = g->size, k = 0, err = MPI_SUCCESS;
	ibx_request_t *rq;

	if (g->rank != 0)
		return red_recv(g, rd, rbuf, counts[g->rank], 0, CT_RS_SCATTER);
	rq = malloc((size_t)p * sizeof(*rq));
	if (!rq)
		return MPI_ERR_NO_MEM;
	for (int i = 1; i < p && err == MPI_SUCCESS; i++) {
		if (rd->whole) {
			/* Derived work type: the segment is elements of it. */
			char *a = red_first(rd, acc + (size_t)displs[i] * rd->ext);

			err =
			    mpil_grp_isend(g, a, red_span(rd, counts[i]), i, CT_RS_SCATTER, &rq[k]);
		} else {
			err = mpil_grp_isend(g, acc + (size_t)displs[i] * rd->ext,
					     (size_t)counts[i] * rd->ext, i, CT_RS_SCATTER, &rq[k]);
		}
		if (err != MPI_SUCCESS)
			mpil_grp_abandon(rq, k);
		else
			k++;
	}
	if (err == MPI_SUCCESS)
		err = mpil_grp_waitall(rq, k);
	free(rq);
	if (err == MPI_SUCCESS)
		red_copy(rd, rbuf, acc, counts[0]);
	return err;
}

int mpil_coll_reduce_scatter(const coll_grp_t *g, const void *sbuf, void *rbuf, const int *counts,
			     const coll_red_t *rd)
{
	mpil_coll_query_t q = {.op = MPIL_COLL_REDUCE_SCATTER, .p = g->size};
	int p = g->size, total = 0, err;
	int *displs = malloc((size_t)p * sizeof(int));
	const void *in = sbuf ? sbuf : rbuf;
	void *acc_base = NULL;
	char *acc;
	size_t maxseg = 0;

	if (!displs)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < p; i++) {
		displs[i] = total;
		total += counts[i];
		if ((size_t)counts[i] > maxseg)
			maxseg = (size_t)counts[i];
	}
	err = MPI_SUCCESS;
	if (total == 0)
		goto out;
	if (p == 1) {
		red_copy(rd, rbuf, in, counts[0]);
		goto out;
	}
	acc = mpil_coll_red_alloc(rd, total, &acc_base);
	if (!acc) {
		err = MPI_ERR_NO_MEM;
		goto out;
	}
	q.bytes = red_span(rd, total);
	q.count = total;
	q.props = coll_red_props(rd);
	switch (mpil_coll_choose(&q)) {
	case MPIL_COLL_ALG_RING:
		err = rs_ring_all(g, in, acc, rbuf, counts, displs, total, maxseg, rd);
		break;
	case MPIL_COLL_ALG_REDUCE_SCATTER:
		/* The whole vector to rank 0 (in rank order), then its segments. */
		err = mpil_coll_reduce(g, in, acc, total, rd, 0);
		if (err == MPI_SUCCESS)
			err = rs_scatter_from_0(g, acc, rbuf, counts, displs, rd);
		break;
	default: err = MPI_ERR_INTERN;
	}
out:
	free(acc_base);
	free(displs);
	return err;
}
