/*
 * nbc_red.c — the nonblocking reductions: MPI_Ireduce, MPI_Iallreduce,
 * MPI_Ireduce_scatter(_block), MPI_Iscan and MPI_Iexscan. Argument checks
 * are those of the blocking forms (coll.c); the user's buffers become
 * work buffers as there (coll_redbuf.c: directly, or a work copy loaded
 * when the call is made and stored back in the last round), and the
 * schedule keeps its own copy of the op (the user may free it).
 *
 *   Ireduce         binomial tree (commutative: rooted at the root;
 *                   otherwise rank-ordered, rooted at 0, which sends the
 *                   result on): one round receives every child's partial
 *                   result at once, the next combines them in rank order
 *                   and sends the sum up
 *   Iallreduce      recursive doubling; with p not a power of two the
 *                   first 2 * (p - 2^k) ranks fold pairwise first and the
 *                   even ones get the result back at the end
 *   Ireduce_scatter direct: every rank sends each block to its owner in
 *                   one round, the owner combines the p parts in rank order
 *   Iscan, Iexscan  recursive doubling (coll_scan.c explains the partial
 *                   results)
 *
 * Every combination keeps operands in rank order (lower ranks on the
 * left), so non-commutative ops are right; where the left operand is the
 * one that must stay, the result lands in the other buffer and the two
 * swap roles (the schedule knows every buffer when it is built).
 */
#include "nbc_int.h"

static nbc_sched_t *sched_new(MPI_Comm comm, int *err_p, const char *F)
{
	nbc_sched_t *s = mpil_nbc_new(comm);

	if (!s)
		*err_p = mpil_coll_failed(comm, MPI_ERR_NO_MEM, F);
	return s;
}

/* Work element @i of work buffer @buf. */
static inline char *welem(const nbc_sched_t *s, const void *buf, long long i)
{
	return (char *)buf + (size_t)i * mpil_nbc_rd(s)->ext;
}

/* The input and output work buffers of a reduction of @count user
 * elements: the user's buffers when direct (@out NULL unless
 * @want_out), else one work copy of the input for both (the caller
 * stores it back). */
static void red_bufs(nbc_sched_t *s, const coll_red_io_t *io, const void *sendbuf, void *recvbuf,
		     int count, bool want_out, const void **in_p, void **out_p)
{
	const void *ubuf = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
	void *base, *w;

	if (io->direct) {
		*in_p = coll_red_wptr(io, ubuf);
		*out_p = want_out ? coll_red_wptr(io, recvbuf) : NULL;
		return;
	}
	w = mpil_coll_red_load(io, ubuf, count, &base);
	mpil_nbc_keep(s, base);
	if (!w)
		mpil_nbc_fail(s, MPI_ERR_NO_MEM);
	*in_p = w;
	*out_p = w;
}

/* ---- schedules ------------------------------------------------------------------------------- */

static void reduce_tree(nbc_sched_t *s, MPI_Comm comm, const void *in, void *out, int n, int root)
{
	int p = comm->size, r = comm->rank, parent, child[32], nc;
	int troot = mpil_nbc_rd(s)->commute ? root : 0;
	const void *cur = in;
	void *t[32];

	nc = mpil_nbc_tree(p, r, troot, &parent, child);
	for (int c = 0; c < nc; c++) {
		t[c] = mpil_nbc_red_tmp(s, n);
		mpil_nbc_red_recv(s, t[c], n, child[c], 0);
	}
	mpil_nbc_round(s);
	/* the nearest child's subtree follows ours: smallest first */
	for (int c = nc - 1; c >= 0; c--) {
		mpil_nbc_reduce(s, cur, t[c], n); /* t[c] = cur op t[c] */
		cur = t[c];
	}
	if (parent >= 0) {
		mpil_nbc_red_send(s, cur, n, parent, 0);
		mpil_nbc_round(s);
	}
	if (troot == root) {
		if (r == root)
			mpil_nbc_red_copy(s, out, cur, n);
	} else if (r == troot) {
		mpil_nbc_red_send(s, cur, n, root, 1);
	} else if (r == root) {
		mpil_nbc_red_recv(s, out, n, troot, 1);
	}
	mpil_nbc_round(s);
}

static void allreduce_rd(nbc_sched_t *s, MPI_Comm comm, const void *in, void *out, int n)
{
	int p = comm->size, r = comm->rank, pof2 = 1, rem, nr;
	void *acc = out, *tmp;

	mpil_nbc_red_copy(s, out, in, n);
	if (p == 1)
		return;
	while (pof2 * 2 <= p)
		pof2 *= 2;
	rem = p - pof2;
	tmp = mpil_nbc_red_tmp(s, n);
	if (r < 2 * rem) {
		if (r % 2 == 0) { /* folds into r + 1, gets the result back */
			mpil_nbc_red_send(s, acc, n, r + 1, 0);
			mpil_nbc_round(s);
			mpil_nbc_red_recv(s, out, n, r + 1, 2);
			mpil_nbc_round(s);
			return;
		}
		mpil_nbc_red_recv(s, tmp, n, r - 1, 0);
		mpil_nbc_round(s);
		mpil_nbc_reduce(s, tmp, acc, n);
		nr = r / 2;
	} else {
		nr = r - rem;
	}
	for (int mask = 1; mask < pof2; mask <<= 1) {
		int pn = nr ^ mask, peer = pn < rem ? 2 * pn + 1 : pn + rem;

		mpil_nbc_red_send(s, acc, n, peer, 1);
		mpil_nbc_red_recv(s, tmp, n, peer, 1);
		mpil_nbc_round(s);
		if (pn < nr || mpil_nbc_rd(s)->commute) {
			mpil_nbc_reduce(s, tmp, acc, n); /* acc = theirs op acc */
		} else {
			void *t = acc;

			mpil_nbc_reduce(s, acc, tmp, n); /* tmp = acc op theirs */
			acc = tmp;
			tmp = t;
		}
	}
	mpil_nbc_red_copy(s, out, acc, n);
	if (r < 2 * rem)
		mpil_nbc_red_send(s, out, n, r - 1, 2);
}

/* A work buffer of @p parts of @n elements each, back to back (p * n may
 * not fit an int). */
static char *parts_tmp(nbc_sched_t *s, int p, int n)
{
	const coll_red_t *rd = mpil_nbc_rd(s);
	size_t bytes = (size_t)(p - 1) * (size_t)n * rd->ext + red_span(rd, n);
	char *base = mpil_nbc_tmp(s, bytes);

	return base ? base - rd->lo : NULL;
}

/* @in holds sum(counts) work elements; rank i gets the reduction of its
 * counts[i] in @out. */
static void reduce_scatter_direct(nbc_sched_t *s, MPI_Comm comm, const void *in, void *out,
				  const int *counts)
{
	int p = comm->size, me = comm->rank, mine = counts[me];
	long long off = 0, myoff = 0;
	char *t;

	if (p == 1) {
		mpil_nbc_red_copy(s, out, in, mine);
		return;
	}
	t = mine > 0 ? parts_tmp(s, p, mine) : NULL;
	for (int i = 0; i < p; i++) {
		if (i == me) {
			myoff = off;
		} else {
			if (mine > 0)
				mpil_nbc_red_recv(s, welem(s, t, (long long)i * mine), mine, i, 0);
			if (counts[i] > 0)
				mpil_nbc_red_send(s, welem(s, in, off), counts[i], i, 0);
		}
		off += counts[i];
	}
	mpil_nbc_round(s);
	if (mine == 0)
		return;
	/* part i in t[i] (ours copied: the input stays as it is) */
	mpil_nbc_red_copy(s, welem(s, t, (long long)me * mine), welem(s, in, myoff), mine);
	for (int i = 1; i < p; i++)
		mpil_nbc_reduce(s, welem(s, t, (long long)(i - 1) * mine),
				welem(s, t, (long long)i * mine), mine);
	mpil_nbc_red_copy(s, out, welem(s, t, (long long)(p - 1) * mine), mine);
}

static void scan_rd(nbc_sched_t *s, MPI_Comm comm, const void *in, void *out, int n, bool exclusive)
{
	int p = comm->size, r = comm->rank, k = 0;
	bool have = !exclusive;
	void *partial, *tmp;

	if (!exclusive)
		mpil_nbc_red_copy(s, out, in, n);
	if (p == 1)
		return;
	partial = mpil_nbc_red_tmp(s, n);
	tmp = mpil_nbc_red_tmp(s, n);
	mpil_nbc_red_copy(s, partial, in, n);
	for (int mask = 1; mask < p; mask <<= 1, k++) {
		int peer = r ^ mask;

		if (peer >= p)
			continue;
		mpil_nbc_red_send(s, partial, n, peer, k);
		mpil_nbc_red_recv(s, tmp, n, peer, k);
		mpil_nbc_round(s);
		if (peer < r) {
			if (have) {
				mpil_nbc_reduce(s, tmp, out, n);
			} else {
				mpil_nbc_red_copy(s, out, tmp, n);
				have = true;
			}
			mpil_nbc_reduce(s, tmp, partial, n);
		} else {
			void *t = partial;

			mpil_nbc_reduce(s, partial, tmp, n);
			partial = tmp;
			tmp = t;
		}
	}
}

/* ---- MPI_Ireduce ----------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Ireduce)
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		 int root, MPI_Comm comm, MPI_Request *request)
{
	static const char F[] = "MPI_Ireduce";
	MPIL_CS_GUARD();
	bool inplace = sendbuf == MPI_IN_PLACE, am_root;
	coll_red_io_t io;
	nbc_sched_t *s;
	const void *in;
	void *out;
	int err;

	MPIL_CHECK(mpil_nbc_check(comm, request, F));
	MPIL_CHECK(mpil_coll_check_root(comm, root, F));
	MPIL_CHECK(mpil_check_count(comm, count, F));
	MPIL_CHECK(mpil_coll_check_reduction(comm, count, datatype, op, &io, F));
	am_root = comm->rank == root;
	MPIL_CHECK(mpil_coll_check_inplace_root(comm, inplace, am_root, "sendbuf", F));
	if (!inplace)
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, count, datatype, F));
	if (am_root) {
		MPIL_CHECK(mpil_check_buf(comm, recvbuf, count, datatype, F));
		if (!inplace &&
		    (sendbuf == recvbuf ||
		     mpil_coll_overlap(sendbuf, count, datatype, recvbuf, count, datatype)) &&
		    count > 0 && datatype->size > 0)
			return mpil_coll_err_alias(comm, F);
	}
	if (count == 0 || datatype->size == 0)
		return mpil_nbc_nothing(comm, F, request);
	if (!(s = sched_new(comm, &err, F)))
		return err;
	mpil_nbc_red_set(s, &io);
	red_bufs(s, &io, sendbuf, recvbuf, count, am_root, &in, &out);
	reduce_tree(s, comm, in, out, coll_red_n(&io, count), root);
	if (am_root && !io.direct)
		mpil_nbc_store(s, out, recvbuf, count);
	return mpil_nbc_start(s, F, request);
}

/* ---- MPI_Iallreduce, MPI_Iscan, MPI_Iexscan -------------------------------------------------- */

/* The same arguments, different schedules. */
enum { RED_ALL, RED_SCAN, RED_EXSCAN };

static int reduce_all(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		      MPI_Op op, MPI_Comm comm, MPI_Request *request, int kind, const char *F)
{
	bool inplace = sendbuf == MPI_IN_PLACE;
	coll_red_io_t io;
	nbc_sched_t *s;
	const void *in;
	void *out;
	int n, err;

	MPIL_CHECK(mpil_nbc_check(comm, request, F));
	MPIL_CHECK(mpil_check_count(comm, count, F));
	MPIL_CHECK(mpil_coll_check_reduction(comm, count, datatype, op, &io, F));
	MPIL_CHECK(mpil_check_buf(comm, recvbuf, count, datatype, F));
	if (!inplace) {
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, count, datatype, F));
		if ((sendbuf == recvbuf ||
		     mpil_coll_overlap(sendbuf, count, datatype, recvbuf, count, datatype)) &&
		    count > 0 && datatype->size > 0)
			return mpil_coll_err_alias(comm, F);
	}
	if (count == 0 || datatype->size == 0)
		return mpil_nbc_nothing(comm, F, request);
	if (!(s = sched_new(comm, &err, F)))
		return err;
	mpil_nbc_red_set(s, &io);
	red_bufs(s, &io, sendbuf, recvbuf, count, true, &in, &out);
	n = coll_red_n(&io, count);
	if (kind == RED_ALL)
		allreduce_rd(s, comm, in, out, n);
	else
		scan_rd(s, comm, in, out, n, kind == RED_EXSCAN);
	if (!io.direct && !(kind == RED_EXSCAN && comm->rank == 0))
		mpil_nbc_store(s, out, recvbuf, count);
	return mpil_nbc_start(s, F, request);
}

MPIL_PMPI_ALIAS(Iallreduce)
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		    MPI_Comm comm, MPI_Request *request)
{
	MPIL_CS_GUARD();
	return reduce_all(sendbuf, recvbuf, count, datatype, op, comm, request, RED_ALL,
			  "MPI_Iallreduce");
}

MPIL_PMPI_ALIAS(Iscan)
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
	       MPI_Comm comm, MPI_Request *request)
{
	MPIL_CS_GUARD();
	return reduce_all(sendbuf, recvbuf, count, datatype, op, comm, request, RED_SCAN,
			  "MPI_Iscan");
}

MPIL_PMPI_ALIAS(Iexscan)
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		 MPI_Comm comm, MPI_Request *request)
{
	MPIL_CS_GUARD();
	return reduce_all(sendbuf, recvbuf, count, datatype, op, comm, request, RED_EXSCAN,
			  "MPI_Iexscan");
}

/* ---- MPI_Ireduce_scatter(_block) ------------------------------------------------------------- */

/* The work buffers of a reduce-scatter: the input (all @total user
 * elements), the output (@mine); not direct: work copies, the output
 * stored back by the caller at the end. */
static void rs_bufs(nbc_sched_t *s, const coll_red_io_t *io, const void *sendbuf, void *recvbuf,
		    long long total, int mine, const void **in_p, void **out_p)
{
	void *base;

	if (io->direct) {
		*in_p = coll_red_wptr(io, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf);
		*out_p = coll_red_wptr(io, recvbuf);
		return;
	}
	*in_p =
	    mpil_coll_red_load(io, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, (int)total, &base);
	mpil_nbc_keep(s, base);
	if (!*in_p)
		mpil_nbc_fail(s, MPI_ERR_NO_MEM);
	*out_p = mpil_nbc_red_tmp(s, coll_red_n(io, mine));
}

/* Reduce_scatter and Reduce_scatter_block: @recvcounts (user elements)
 * per rank, or (@is_block) @block for every rank. */
static int reduce_scatter(const void *sendbuf, void *recvbuf, const int *recvcounts, int block,
			  bool is_block, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
			  MPI_Request *request, const char *F)
{
	long long total;
	coll_red_io_t io;
	nbc_sched_t *s;
	const void *in;
	void *out;
	int p, mine, *counts, err;

	MPIL_CHECK(mpil_nbc_check(comm, request, F));
	p = comm->size;
	MPIL_CHECK(mpil_coll_check_reduce_scatter(comm, sendbuf, recvbuf, recvcounts, block,
						  is_block, datatype, op, &total, &mine, &io, F));
	if (total == 0 || datatype->size == 0)
		return mpil_nbc_nothing(comm, F, request);
	if (!(s = sched_new(comm, &err, F)))
		return err;
	mpil_nbc_red_set(s, &io);
	counts = mpil_nbc_tmp(s, (size_t)p * sizeof(int));
	if (!counts)
		return mpil_nbc_start(s, F, request); /* reports it */
	for (int i = 0; i < p; i++)
		counts[i] = coll_red_n(&io, is_block ? block : recvcounts[i]);
	rs_bufs(s, &io, sendbuf, recvbuf, total, mine, &in, &out);
	reduce_scatter_direct(s, comm, in, out, counts);
	if (!io.direct)
		mpil_nbc_store(s, out, recvbuf, mine);
	return mpil_nbc_start(s, F, request);
}

MPIL_PMPI_ALIAS(Ireduce_scatter_block)
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
			       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
			       MPI_Request *request)
{
	MPIL_CS_GUARD();
	return reduce_scatter(sendbuf, recvbuf, NULL, recvcount, true, datatype, op, comm, request,
			      "MPI_Ireduce_scatter_block");
}

MPIL_PMPI_ALIAS(Ireduce_scatter)
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
			 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	MPIL_CS_GUARD();
	return reduce_scatter(sendbuf, recvbuf, recvcounts, 0, false, datatype, op, comm, request,
			      "MPI_Ireduce_scatter");
}
