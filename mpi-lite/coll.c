/*
 * coll.c — the collective operations of MPI-3.1 chapter 5 (blocking, on
 * intracommunicators): argument checks, typed buffers to bytes, the choice
 * of algorithm, and what the algorithm files share (transfers on the
 * collective context, the node map). The algorithms themselves live in
 * coll_<family>.c; coll_int.h lists them.
 *
 * Data path of every collective:
 *
 *   user buffer ──(contiguous type: in place | else mpil_dt_pack)──► bytes
 *   bytes ──algorithm (coll_*.c) on the collective context cid | 1──► bytes
 *   bytes ──(contiguous: already there | else mpil_dt_unpack)──► user buffer
 *
 * so derived datatypes work wherever mpil_dt_pack/unpack handle them. Only
 * the type signatures must match between ranks (MPI), never the types.
 * Reductions run on predefined elements: a derived type reduced with a
 * predefined op is packed into the one predefined type it is made of; with
 * a user op the user function gets the user's datatype and layout.
 *
 * Algorithms by collective and size (p ranks; n bytes):
 *
 *   Barrier         dissemination; across nodes: fan-in, leaders, fan-out
 *   Bcast           p = 2 or n <= 64 KiB (or ranks outnumber cores):
 *                   binomial; else scatter + ring allgather
 *   Reduce          binomial (rank-ordered tree for non-commutative ops);
 *                   commutative, p > 2, n > 64 KiB: ring reduce-scatter +
 *                   gather to the root
 *   Allreduce       p = 2, commutative: one exchange + local op; n <= 16 KiB
 *                   or non-commutative: recursive doubling; else
 *                   Rabenseifner (recursive halving reduce-scatter +
 *                   recursive doubling allgather)
 *   Reduce_scatter  commutative: ring; else reduce + scatter
 *   Scan, Exscan    recursive doubling
 *   Gather, Scatter block <= 2 KiB and p > 2: binomial; else linear
 *   Gatherv, Scatterv  linear
 *   Allgather       total <= 32 KiB and p > 2: Bruck; else ring
 *   Allgatherv      ring
 *   Alltoall        block <= 256 B and p > 2: Bruck; else pairwise
 *   Alltoallv       pairwise
 *
 * Bcast, Barrier, Allreduce and Reduce with commutative ops are node-aware
 * on communicators that span several nodes (mpil_coll_hier_get): the phases
 * inside a node and among the nodes' representatives each pick their
 * algorithm from the table.
 */
#include "coll_int.h"

#include <unistd.h>

/* Where nothing is moved (zero bytes) a pointer is still needed. */
static char coll_nothing[1];

/* @buf + @off as an address: user buffers may be MPI_BOTTOM (NULL) with
 * absolute displacements, where pointer arithmetic would be undefined. */
static inline char *at(const void *buf, MPI_Aint off)
{
	return (char *)((uintptr_t)buf + (uintptr_t)off);
}

/* ---- transfers on the collective context --------------------------------------------------- */

static inline ibx_tag_t ctag(const coll_grp_t *g, int tag)
{
	return mpil_tag(mpil_coll_cid(g->comm), tag);
}

int mpil_grp_send(const coll_grp_t *g, const void *buf, size_t len, int dst, int tag)
{
	return mpil_err_from_ibx(mpil_ibx_send(coll_world(g, dst), buf, len, ctag(g, tag), 0));
}

int mpil_grp_recv(const coll_grp_t *g, void *buf, size_t len, int src, int tag)
{
	ibx_request_t rq = {.cb = NULL};
	ibx_status_t st;

	st = ibx_tag_recv(mpil_g.ctx, coll_world(g, src), buf, len, ctag(g, tag), MPIL_MASK_TAG,
			  &rq);
	if (st >= 0)
		st = mpil_ibx_wait(&rq);
	return mpil_err_from_ibx(st);
}

int mpil_grp_sendrecv(const coll_grp_t *g, const void *sbuf, size_t slen, int dst, void *rbuf,
		      size_t rlen, int src, int tag)
{
	ibx_request_t rrq = {.cb = NULL};
	ibx_status_t st, rst;

	rst = ibx_tag_recv(mpil_g.ctx, coll_world(g, src), rbuf, rlen, ctag(g, tag), MPIL_MASK_TAG,
			   &rrq);
	if (rst < 0)
		return mpil_err_from_ibx(rst);
	st = mpil_ibx_send(coll_world(g, dst), sbuf, slen, ctag(g, tag), 0);
	if (st != IBX_OK) {
		/* Withdraw the receive; if it already matched, let it land. */
		if (ibx_request_cancel(mpil_g.ctx, &rrq) != IBX_OK)
			mpil_ibx_wait(&rrq);
		return mpil_err_from_ibx(st);
	}
	return mpil_err_from_ibx(mpil_ibx_wait(&rrq));
}

static int start_failed(ibx_request_t *rq, ibx_status_t st)
{
	rq->status = st;
	rq->completed = 1;
	return mpil_err_from_ibx(st);
}

int mpil_grp_isend(const coll_grp_t *g, const void *buf, size_t len, int dst, int tag,
		   ibx_request_t *rq)
{
	ibx_status_t st;

	rq->cb = NULL;
	st = ibx_tag_send(mpil_g.ctx, coll_world(g, dst), buf, len, ctag(g, tag), 0, rq);
	return st < 0 ? start_failed(rq, st) : MPI_SUCCESS;
}

int mpil_grp_irecv(const coll_grp_t *g, void *buf, size_t len, int src, int tag, ibx_request_t *rq)
{
	ibx_status_t st;

	rq->cb = NULL;
	st =
	    ibx_tag_recv(mpil_g.ctx, coll_world(g, src), buf, len, ctag(g, tag), MPIL_MASK_TAG, rq);
	return st < 0 ? start_failed(rq, st) : MPI_SUCCESS;
}

int mpil_grp_waitall(ibx_request_t *rq, int n)
{
	int err = MPI_SUCCESS;

	for (int i = 0; i < n; i++) {
		int e = mpil_err_from_ibx(mpil_ibx_wait(&rq[i]));

		if (err == MPI_SUCCESS)
			err = e;
	}
	return err;
}

void mpil_coll_copy_progress(void *dst, const void *src, size_t len)
{
	char *d = dst;
	const char *s = src;

	for (size_t off = 0; off < len; off += COLL_COPY_PIECE) {
		size_t n = len - off < COLL_COPY_PIECE ? len - off : COLL_COPY_PIECE;

		memcpy(d + off, s + off, n);
		ibx_progress(mpil_g.ctx);
	}
}

void mpil_grp_abandon(ibx_request_t *rq, int n)
{
	for (int i = 0; i < n; i++)
		if (!rq[i].completed && rq[i].kind == IBX_REQ_RECV)
			ibx_request_cancel(mpil_g.ctx, &rq[i]);
	mpil_grp_waitall(rq, n);
}

int mpil_coll_send(MPI_Comm comm, const void *buf, size_t len, int dest, int tag)
{
	coll_grp_t g;

	coll_grp_comm(&g, comm);
	return mpil_grp_send(&g, buf, len, dest, tag);
}

int mpil_coll_recv(MPI_Comm comm, void *buf, size_t len, int src, int tag)
{
	coll_grp_t g;

	coll_grp_comm(&g, comm);
	return mpil_grp_recv(&g, buf, len, src, tag);
}

int mpil_coll_sendrecv(MPI_Comm comm, const void *sbuf, size_t slen, int dest, void *rbuf,
		       size_t rlen, int src, int tag)
{
	coll_grp_t g;

	coll_grp_comm(&g, comm);
	return mpil_grp_sendrecv(&g, sbuf, slen, dest, rbuf, rlen, src, tag);
}

/* ---- the node map ---------------------------------------------------------------------------
 *
 * Built once in MPI_Init when the job spans several nodes: every process
 * knows its own node's members (ibx_local_ranks), so one allgather of
 * "my node's lowest world rank" gives every process the node of every
 * rank. The split of a communicator is then computed locally, identically
 * on all its members, in O(size) per collective (no allocation). The same
 * allgather tells everyone whether any node runs more ranks than it has
 * CPUs, which some algorithm choices depend on (they must agree job-wide).
 */
static struct {
	bool multi;	    /* node-aware algorithms on: the world spans nodes */
	bool oversub;	    /* some node has more ranks than CPUs */
	int *node;	    /* [world size]: node id = the node's lowest world rank */
	int *stamp, *idx;   /* [world size] scratch, by node id */
	int *intra, *inter; /* [world size] scratch: the groups of mpil_coll_hier_get */
	int gen;
} nm;

bool mpil_coll_oversubscribed(void)
{
	return nm.oversub;
}

int mpil_coll_init(void)
{
	const mpil_config_t *cfg = mpil_config();
	int ws = mpil_g.world_size, me = mpil_g.world_rank, err = MPI_SUCCESS;
	int nlocal = ibx_local_size(mpil_g.ctx), *info = NULL;
	int64_t fake = cfg->COLL_NODE_SIZE;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	bool spread, hier;

	memset(&nm, 0, sizeof(nm));
	nm.oversub = ncpu > 0 && nlocal > ncpu;
	if (ws == 1)
		return MPI_SUCCESS;
	spread = nlocal < ws;
	hier = cfg->COLL_HIER && (fake > 0 ? ws > fake : spread);
	if (spread) {
		/* {node's lowest world rank, oversubscribed} from everyone */
		coll_grp_t g;
		coll_lay_t lay = {.stride = 2 * sizeof(int), .len = 2 * sizeof(int)};

		info = malloc(2 * (size_t)ws * sizeof(int));
		if (!info)
			return MPI_ERR_NO_MEM;
		info[2 * me] = ibx_local_ranks(mpil_g.ctx)[0];
		info[2 * me + 1] = nm.oversub;
		lay.base = (char *)info;
		coll_grp_comm(&g, MPI_COMM_WORLD);
		err = mpil_coll_allgather_ring(&g, &lay);
		for (int w = 0; err == MPI_SUCCESS && w < ws; w++)
			nm.oversub |= info[2 * w + 1] != 0;
	}
	if (err == MPI_SUCCESS && hier) {
		nm.node = malloc(5 * (size_t)ws * sizeof(int));
		if (!nm.node)
			err = MPI_ERR_NO_MEM;
	}
	if (err != MPI_SUCCESS || !hier) {
		free(info);
		if (err != MPI_SUCCESS)
			mpil_coll_fini();
		return err;
	}
	nm.stamp = nm.node + ws;
	nm.idx = nm.stamp + ws;
	nm.intra = nm.idx + ws;
	nm.inter = nm.intra + ws;
	for (int w = 0; w < ws; w++) {
		nm.stamp[w] = 0;
		nm.node[w] = fake > 0 ? (int)(w / fake * fake) : info[2 * w];
	}
	free(info);
	nm.multi = true;
	return MPI_SUCCESS;
}

void mpil_coll_fini(void)
{
	free(nm.node);
	memset(&nm, 0, sizeof(nm));
}

static inline int node_of(MPI_Comm comm, int r)
{
	return nm.node[mpil_comm_to_world(comm, r)];
}

bool mpil_coll_multinode(MPI_Comm comm)
{
	int mine;

	if (!nm.multi || comm->size == 1)
		return false;
	if (!comm->rank_to_world)
		return comm->size == mpil_g.world_size;
	mine = node_of(comm, comm->rank);
	for (int r = 0; r < comm->size; r++)
		if (node_of(comm, r) != mine)
			return true;
	return false;
}

void mpil_coll_hier_get(MPI_Comm comm, int root, coll_hier_t *h)
{
	int p = comm->size, me = comm->rank, mykey = node_of(comm, me);
	int nintra = 0, ninter = 0, myidx = 0, rep;

	if (++nm.gen == 0) { /* wrapped: forget every stamp */
		for (int w = 0; w < mpil_g.world_size; w++)
			nm.stamp[w] = 0;
		nm.gen = 1;
	}
	for (int r = 0; r < p; r++) {
		int key = node_of(comm, r);

		if (key == mykey) {
			if (r == me)
				myidx = nintra;
			nm.intra[nintra++] = r;
		}
		if (nm.stamp[key] != nm.gen) { /* the node's lowest rank */
			nm.stamp[key] = nm.gen;
			nm.idx[key] = ninter;
			nm.inter[ninter++] = r;
		}
	}
	h->inter_root = nm.idx[node_of(comm, root)];
	nm.inter[h->inter_root] = root;
	rep = nm.inter[nm.idx[mykey]];
	h->is_rep = rep == me;
	h->intra = (coll_grp_t){.comm = comm, .size = nintra, .rank = myidx, .ranks = nm.intra};
	h->inter =
	    (coll_grp_t){.comm = comm, .size = ninter, .rank = nm.idx[mykey], .ranks = nm.inter};
	h->intra_root = 0;
	for (int i = 0; i < nintra; i++)
		if (nm.intra[i] == rep)
			h->intra_root = i;
}

/* ---- argument checks ------------------------------------------------------------------------ */

static int coll_failed(MPI_Comm comm, int err, const char *fname)
{
	if (err == MPI_ERR_NO_MEM)
		return mpil_err(comm, err, fname, "out of memory for temporary buffers");
	return mpil_err(comm, err, fname, "a transfer between members of %s failed",
			comm->name[0] ? comm->name : "the communicator");
}

static int check_root(MPI_Comm comm, int root, const char *F)
{
	if (ibx_likely(root >= 0 && root < comm->size))
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_ROOT, F, "invalid root %d (communicator size %d)", root,
			comm->size);
}

static int check_typed(MPI_Comm comm, int count, MPI_Datatype dt, const char *F)
{
	MPIL_CHECK(mpil_check_count(comm, count, F));
	return mpil_check_dtype(comm, dt, F);
}

/* A counts array: given, no negative entry; *total_p its sum. */
static int check_counts(MPI_Comm comm, const int *counts, int n, const char *what,
			long long *total_p, const char *F)
{
	long long total = 0;

	if (ibx_unlikely(!counts))
		return mpil_err(comm, MPI_ERR_ARG, F, "%s is NULL", what);
	for (int i = 0; i < n; i++) {
		if (ibx_unlikely(counts[i] < 0))
			return mpil_err(comm, MPI_ERR_COUNT, F, "%s[%d] is negative (%d)", what, i,
					counts[i]);
		total += counts[i];
	}
	*total_p = total;
	return MPI_SUCCESS;
}

static int check_displs(MPI_Comm comm, const int *displs, const char *what, const char *F)
{
	if (ibx_likely(displs != NULL))
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_ARG, F, "%s is NULL", what);
}

/* A buffer that receives or sends @total elements (NULL only when nothing
 * moves). */
static int check_vbuf(MPI_Comm comm, const void *buf, long long total, MPI_Datatype dt,
		      const char *F)
{
	return mpil_check_buf(comm, buf, total > 0 ? 1 : 0, dt, F);
}

/* Bytes [lo, hi) that (buf, count, dt) covers, for a contiguous type. */
static bool span_of(const void *buf, long long count, MPI_Datatype dt, uintptr_t *lo, uintptr_t *hi)
{
	if (!mpil_dt_contig(dt) || count <= 0 || dt->size == 0)
		return false;
	*lo = (uintptr_t)at(buf, dt->true_lb);
	*hi = *lo + (uintptr_t)count * dt->size;
	return true;
}

/* Do (a, ac, at) and (b, bc, bt) share bytes? Exact for contiguous types;
 * otherwise only the same start with the same type counts (interleaved
 * layouts, e.g. two columns of one matrix, may legitimately share a
 * span). */
static bool overlap(const void *a, long long ac, MPI_Datatype at, const void *b, long long bc,
		    MPI_Datatype bt)
{
	uintptr_t alo, ahi, blo, bhi;

	if (ac <= 0 || bc <= 0 || at->size == 0 || bt->size == 0)
		return false;
	if (span_of(a, ac, at, &alo, &ahi) && span_of(b, bc, bt, &blo, &bhi))
		return alo < bhi && blo < ahi;
	return a == b && at == bt;
}

static int cmp_span(const void *a, const void *b)
{
	const uintptr_t *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The byte ranges [lo, hi) of the nonempty blocks of a v layout (counts,
 * displs in elements of @dt at @buf), sorted by lo, as pairs in *s_p
 * (malloc'ed). Returns how many, or -1 when @dt is not contiguous (where
 * ranges say nothing exact) or memory is short. *any_p: some block has
 * data. */
static int vspans(const void *buf, const int *counts, const int *displs, MPI_Datatype dt, int p,
		  uintptr_t **s_p, bool *any_p)
{
	uintptr_t *s;
	int n = 0;

	*s_p = NULL;
	*any_p = false;
	for (int i = 0; i < p; i++)
		if (counts[i] > 0 && dt->size > 0)
			*any_p = true;
	if (!mpil_dt_contig(dt))
		return -1;
	s = malloc(2 * (size_t)p * sizeof(*s) + 1);
	if (!s)
		return -1;
	for (int i = 0; i < p; i++)
		if (span_of(at(buf, (MPI_Aint)displs[i] * dt->extent), counts[i], dt, &s[2 * n],
			    &s[2 * n + 1]))
			n++;
	qsort(s, (size_t)n, 2 * sizeof(*s), cmp_span);
	*s_p = s;
	return n;
}

/* Do two sorted lists of ranges meet? (A list may overlap itself.) */
static bool spans_meet(const uintptr_t *a, int na, const uintptr_t *b, int nb)
{
	int i = 0, j = 0;

	while (i < na && j < nb) {
		if (a[2 * i + 1] <= b[2 * j])
			i++;
		else if (b[2 * j + 1] <= a[2 * i])
			j++;
		else
			return true;
	}
	return false;
}

/* Do the blocks of two v layouts share bytes? (One block: counts = &n,
 * displs = &zero, p = 1.) Exact for contiguous types, else the same buffer
 * and type with data on both sides counts. */
static bool overlap_vv(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype st,
		       int sp, const void *rbuf, const int *rcounts, const int *rdispls,
		       MPI_Datatype rt, int rp)
{
	uintptr_t *a, *b;
	bool sany, rany, meet;
	int na = vspans(sbuf, scounts, sdispls, st, sp, &a, &sany);
	int nb = vspans(rbuf, rcounts, rdispls, rt, rp, &b, &rany);

	if (na < 0 || nb < 0)
		meet = sany && rany && sbuf == rbuf && st == rt;
	else
		meet = spans_meet(a, na, b, nb);
	free(a);
	free(b);
	return meet;
}

static const int zero_displ = 0;

/* Receive blocks of a v layout must not overlap (MPI-3.1 §5.5: no location
 * is written twice). Checked for contiguous types, where it is exact. */
static int check_recv_blocks(MPI_Comm comm, const void *buf, const int *counts, const int *displs,
			     MPI_Datatype dt, int p, const char *F)
{
	uintptr_t *s, end = 0;
	bool any;
	int n = vspans(buf, counts, displs, dt, p, &s, &any), err = MPI_SUCCESS;

	for (int i = 0; i < n; i++) {
		if (i > 0 && s[2 * i] < end) {
			err = mpil_err(
			    comm, MPI_ERR_ARG, F,
			    "receive blocks overlap (counts/displacements write a byte twice)");
			break;
		}
		if (s[2 * i + 1] > end)
			end = s[2 * i + 1];
	}
	free(s);
	return err;
}

static int err_alias(MPI_Comm comm, const char *F)
{
	return mpil_err(comm, MPI_ERR_BUFFER, F,
			"send and receive buffers overlap (use MPI_IN_PLACE)");
}

static int err_trunc(MPI_Comm comm, const char *F, size_t have, size_t room)
{
	return mpil_err(comm, MPI_ERR_TRUNCATE, F,
			"own block of %zu bytes does not fit the %zu-byte receive block", have,
			room);
}

/* ---- typed buffers as bytes ----------------------------------------------------------------- */

static inline size_t tbytes(long long count, MPI_Datatype dt)
{
	return (size_t)count * dt->size;
}

/* The bytes of @count elements at @buf: in place for a contiguous type,
 * else packed into *tmp_p (to free). NULL when out of memory. */
static char *tb_read(const void *buf, int count, MPI_Datatype dt, void **tmp_p)
{
	size_t len = tbytes(count, dt);

	*tmp_p = NULL;
	if (len == 0)
		return coll_nothing;
	if (mpil_dt_contig(dt))
		return at(buf, dt->true_lb);
	*tmp_p = malloc(len);
	if (*tmp_p)
		mpil_dt_pack(dt, buf, count, *tmp_p);
	return *tmp_p;
}

/* Where to receive @count elements for @buf: in place for a contiguous
 * type, else a temporary that tb_write_done() unpacks. */
static char *tb_write(void *buf, int count, MPI_Datatype dt, void **tmp_p)
{
	size_t len = tbytes(count, dt);

	*tmp_p = NULL;
	if (len == 0)
		return coll_nothing;
	if (mpil_dt_contig(dt))
		return at(buf, dt->true_lb);
	*tmp_p = malloc(len);
	return *tmp_p;
}

static void tb_write_done(void *buf, int count, MPI_Datatype dt, void *tmp)
{
	if (tmp) {
		mpil_dt_unpack(dt, tmp, tbytes(count, dt), buf);
		free(tmp);
	}
}

/* Block i of a buffer of blocks of @count elements. */
static inline char *block_at(const void *buf, int i, int count, MPI_Datatype dt)
{
	return at(buf, (MPI_Aint)i * count * dt->extent);
}

/* A regular layout of p blocks of @count elements at @buf: in place for a
 * contiguous type (*tmp_p NULL), else a packed temporary of p blocks
 * (filled with the user's blocks when @fill; block @skip excepted, -1 for
 * none). Returns MPI_ERR_NO_MEM or MPI_SUCCESS. */
static int lay_regular(coll_lay_t *l, const void *buf, int count, MPI_Datatype dt, int p, bool fill,
		       int skip, void **tmp_p)
{
	size_t len = tbytes(count, dt);

	*tmp_p = NULL;
	l->off = NULL;
	l->lens = NULL;
	l->len = l->stride = len;
	if (len == 0) {
		l->base = coll_nothing;
		return MPI_SUCCESS;
	}
	if (mpil_dt_contig(dt)) {
		l->base = at(buf, dt->true_lb);
		return MPI_SUCCESS;
	}
	*tmp_p = malloc((size_t)p * len);
	if (!*tmp_p)
		return MPI_ERR_NO_MEM;
	l->base = *tmp_p;
	if (fill)
		for (int i = 0; i < p; i++)
			if (i != skip)
				mpil_dt_pack(dt, block_at(buf, i, count, dt), count,
					     l->base + (size_t)i * len);
	return MPI_SUCCESS;
}

/* Unpacks the blocks of a packed regular layout into the user buffer. */
static void lay_regular_done(const coll_lay_t *l, void *buf, int count, MPI_Datatype dt, int p,
			     int skip, void *tmp)
{
	if (!tmp)
		return;
	for (int i = 0; i < p; i++)
		if (i != skip)
			mpil_dt_unpack(dt, l->base + (size_t)i * l->len, l->len,
				       block_at(buf, i, count, dt));
	free(tmp);
}

/* A v layout: block i is counts[i] elements at displs[i] * extent. In
 * place for a contiguous type, else packed back to back in a temporary
 * (filled when @fill, block @skip excepted). *mem_p holds the offset and
 * length arrays (and the temporary): free it. */
static int lay_v(coll_lay_t *l, const void *buf, const int *counts, const int *displs,
		 MPI_Datatype dt, int p, bool fill, int skip, void **mem_p)
{
	bool contig = mpil_dt_contig(dt);
	size_t total = 0, arrays = (size_t)p * (sizeof(ptrdiff_t) + sizeof(size_t));
	ptrdiff_t *off;
	size_t *lens;
	char *mem;

	for (int i = 0; i < p; i++)
		total += tbytes(counts[i], dt);
	mem = malloc(arrays + (contig ? 0 : total) + 1);
	*mem_p = mem;
	if (!mem)
		return MPI_ERR_NO_MEM;
	off = (ptrdiff_t *)mem;
	lens = (size_t *)(off + p);
	l->off = off;
	l->lens = lens;
	l->stride = l->len = 0;
	if (contig) {
		l->base = at(buf, dt->true_lb);
		for (int i = 0; i < p; i++) {
			off[i] = (ptrdiff_t)displs[i] * dt->extent;
			lens[i] = tbytes(counts[i], dt);
		}
		return MPI_SUCCESS;
	}
	l->base = mem + arrays;
	total = 0;
	for (int i = 0; i < p; i++) {
		off[i] = (ptrdiff_t)total;
		lens[i] = tbytes(counts[i], dt);
		if (fill && i != skip && lens[i])
			mpil_dt_pack(dt, at(buf, (MPI_Aint)displs[i] * dt->extent), counts[i],
				     l->base + total);
		total += lens[i];
	}
	return MPI_SUCCESS;
}

static void lay_v_done(const coll_lay_t *l, void *buf, const int *counts, const int *displs,
		       MPI_Datatype dt, int p, int skip)
{
	if (mpil_dt_contig(dt))
		return;
	for (int i = 0; i < p; i++)
		if (i != skip && l->lens[i])
			mpil_dt_unpack(dt, l->base + l->off[i], l->lens[i],
				       at(buf, (MPI_Aint)displs[i] * dt->extent));
}

/* ---- reductions: user buffers as work buffers ------------------------------------------------ */

typedef struct red_io {
	coll_red_t rd;
	MPI_Datatype udt; /* the user's datatype */
	int factor;	  /* work elements per user element */
	bool direct;	  /* user buffers are work buffers (at + shift) */
	MPI_Aint shift;
} red_io_t;

static void red_io_init(red_io_t *io, MPI_Op op, MPI_Datatype dt)
{
	io->udt = dt;
	io->factor = 1;
	io->shift = 0;
	if (dt->flags & MPIL_DTF_PREDEFINED) {
		mpil_coll_red_init(&io->rd, op, dt);
		io->direct = true;
	} else if (op->predefined) {
		MPI_Datatype b = dt->basic; /* not NULL: mpil_check_op made sure */

		mpil_coll_red_init(&io->rd, op, b);
		io->factor = (int)(dt->size / b->size);
		io->direct = mpil_dt_contig(dt) && mpil_dt_contig(b);
		io->shift = dt->true_lb;
	} else {
		mpil_coll_red_init(&io->rd, op, dt);
		io->direct = mpil_dt_contig(dt);
	}
}

/* Work elements of @count user elements; -1 if they do not fit an int. */
static int red_n(const red_io_t *io, long long count)
{
	long long n = count * io->factor;

	return n > INT_MAX ? -1 : (int)n;
}

static inline void *red_wptr(const red_io_t *io, const void *ubuf)
{
	return at(ubuf, io->shift);
}

/* A work copy of @count user elements at @ubuf (not direct). */
static void *red_load(const red_io_t *io, const void *ubuf, int count, void **base_p)
{
	int n = red_n(io, count);
	size_t bytes = tbytes(count, io->udt);
	void *w = mpil_coll_red_alloc(&io->rd, n, base_p), *tmp;

	if (!w)
		return NULL;
	if (io->rd.dt != io->udt && mpil_dt_contig(io->rd.dt)) {
		mpil_dt_pack(io->udt, ubuf, count, w);
		return w;
	}
	tmp = malloc(bytes + 1);
	if (!tmp) {
		free(*base_p);
		*base_p = NULL;
		return NULL;
	}
	mpil_dt_pack(io->udt, ubuf, count, tmp);
	if (io->rd.dt != io->udt)
		mpil_dt_unpack(io->rd.dt, tmp, bytes, w); /* padded pairs */
	else
		mpil_dt_unpack(io->udt, tmp, bytes, w); /* the user's own layout */
	free(tmp);
	return w;
}

/* Work buffer @w back into @count user elements at @ubuf. */
static int red_store(const red_io_t *io, const void *w, void *ubuf, int count)
{
	size_t bytes = tbytes(count, io->udt);
	void *tmp;

	if (io->rd.dt != io->udt && mpil_dt_contig(io->rd.dt)) {
		mpil_dt_unpack(io->udt, w, bytes, ubuf);
		return MPI_SUCCESS;
	}
	tmp = malloc(bytes + 1);
	if (!tmp)
		return MPI_ERR_NO_MEM;
	if (io->rd.dt != io->udt)
		mpil_dt_pack(io->rd.dt, w, red_n(io, count), tmp);
	else
		mpil_dt_pack(io->udt, w, count, tmp);
	mpil_dt_unpack(io->udt, tmp, bytes, ubuf);
	free(tmp);
	return MPI_SUCCESS;
}

/* Checks shared by the reductions: count, type, op; *io set up. */
static int check_reduction(MPI_Comm comm, long long count, MPI_Datatype dt, MPI_Op op, red_io_t *io,
			   const char *F)
{
	MPIL_CHECK(mpil_check_dtype(comm, dt, F));
	MPIL_CHECK(mpil_check_op(comm, op, dt, F));
	red_io_init(io, op, dt);
	if (ibx_unlikely(red_n(io, count) < 0))
		return mpil_err(comm, MPI_ERR_COUNT, F,
				"%lld elements of %s are too many basic elements", count,
				dt->name ? dt->name : "(derived)");
	return MPI_SUCCESS;
}

/* ---- MPI_Barrier, MPI_Bcast --------------------------------------------------------------------
 */

MPIL_PMPI_ALIAS(Barrier)
int PMPI_Barrier(MPI_Comm comm)
{
	static const char F[] = "MPI_Barrier";
	int err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	err = mpil_barrier(comm);
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}

MPIL_PMPI_ALIAS(Bcast)
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
	static const char F[] = "MPI_Bcast";
	size_t len;
	void *tmp = NULL;
	char *data;
	int err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(check_typed(comm, count, datatype, F));
	MPIL_CHECK(mpil_check_buf(comm, buffer, count, datatype, F));
	MPIL_CHECK(check_root(comm, root, F));
	len = tbytes(count, datatype);
	if (comm->size == 1 || len == 0)
		return MPI_SUCCESS;
	if (comm->rank == root)
		data = tb_read(buffer, count, datatype, &tmp);
	else
		data = tb_write(buffer, count, datatype, &tmp);
	if (!data)
		return coll_failed(comm, MPI_ERR_NO_MEM, F);
	err = mpil_bcast_bytes(data, len, root, comm);
	if (comm->rank == root || err != MPI_SUCCESS)
		free(tmp);
	else
		tb_write_done(buffer, count, datatype, tmp);
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}

/* ---- reductions
 * ---------------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Reduce)
int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		int root, MPI_Comm comm)
{
	static const char F[] = "MPI_Reduce";
	bool inplace = sendbuf == MPI_IN_PLACE, am_root;
	red_io_t io;
	coll_grp_t g;
	void *base = NULL, *w;
	int n, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(check_root(comm, root, F));
	MPIL_CHECK(mpil_check_count(comm, count, F));
	MPIL_CHECK(check_reduction(comm, count, datatype, op, &io, F));
	am_root = comm->rank == root;
	if (inplace && !am_root)
		return mpil_err(comm, MPI_ERR_BUFFER, F,
				"MPI_IN_PLACE as sendbuf on a non-root rank");
	if (!inplace)
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, count, datatype, F));
	if (am_root) {
		MPIL_CHECK(mpil_check_buf(comm, recvbuf, count, datatype, F));
		if (!inplace &&
		    (sendbuf == recvbuf ||
		     overlap(sendbuf, count, datatype, recvbuf, count, datatype)) &&
		    count > 0 && datatype->size > 0)
			return err_alias(comm, F);
	}
	if (count == 0 || datatype->size == 0)
		return MPI_SUCCESS;
	coll_grp_comm(&g, comm);
	n = red_n(&io, count);
	if (io.direct) {
		err = mpil_coll_reduce(&g, inplace ? NULL : red_wptr(&io, sendbuf),
				       am_root ? red_wptr(&io, recvbuf) : NULL, n, &io.rd, root);
	} else {
		w = red_load(&io, inplace ? recvbuf : sendbuf, count, &base);
		if (!w)
			return coll_failed(comm, MPI_ERR_NO_MEM, F);
		err = mpil_coll_reduce(&g, am_root ? NULL : w, am_root ? w : NULL, n, &io.rd, root);
		if (err == MPI_SUCCESS && am_root)
			err = red_store(&io, w, recvbuf, count);
		free(base);
	}
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}

/* Allreduce, Scan and Exscan: the same arguments, different algorithms. */
enum { RED_ALL, RED_SCAN, RED_EXSCAN };

static int reduce_all(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		      MPI_Op op, MPI_Comm comm, int kind, const char *F)
{
	bool inplace = sendbuf == MPI_IN_PLACE;
	red_io_t io;
	coll_grp_t g;
	void *base = NULL, *w;
	int n, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(mpil_check_count(comm, count, F));
	MPIL_CHECK(check_reduction(comm, count, datatype, op, &io, F));
	MPIL_CHECK(mpil_check_buf(comm, recvbuf, count, datatype, F));
	if (!inplace) {
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, count, datatype, F));
		if ((sendbuf == recvbuf ||
		     overlap(sendbuf, count, datatype, recvbuf, count, datatype)) &&
		    count > 0 && datatype->size > 0)
			return err_alias(comm, F);
	}
	if (count == 0 || datatype->size == 0)
		return MPI_SUCCESS;
	coll_grp_comm(&g, comm);
	n = red_n(&io, count);
	if (io.direct) {
		const void *s = inplace ? NULL : red_wptr(&io, sendbuf);

		w = red_wptr(&io, recvbuf);
		if (kind == RED_ALL)
			err = mpil_coll_allreduce(&g, s, w, n, &io.rd);
		else
			err = mpil_coll_scan(&g, s, w, n, &io.rd, kind == RED_EXSCAN);
		return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
	}
	w = red_load(&io, inplace ? recvbuf : sendbuf, count, &base);
	if (!w)
		return coll_failed(comm, MPI_ERR_NO_MEM, F);
	if (kind == RED_ALL)
		err = mpil_coll_allreduce(&g, NULL, w, n, &io.rd);
	else
		err = mpil_coll_scan(&g, NULL, w, n, &io.rd, kind == RED_EXSCAN);
	if (err == MPI_SUCCESS && !(kind == RED_EXSCAN && comm->rank == 0))
		err = red_store(&io, w, recvbuf, count);
	free(base);
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}

MPIL_PMPI_ALIAS(Allreduce)
int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		   MPI_Comm comm)
{
	return reduce_all(sendbuf, recvbuf, count, datatype, op, comm, RED_ALL, "MPI_Allreduce");
}

MPIL_PMPI_ALIAS(Scan)
int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
	      MPI_Comm comm)
{
	return reduce_all(sendbuf, recvbuf, count, datatype, op, comm, RED_SCAN, "MPI_Scan");
}

MPIL_PMPI_ALIAS(Exscan)
int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		MPI_Comm comm)
{
	return reduce_all(sendbuf, recvbuf, count, datatype, op, comm, RED_EXSCAN, "MPI_Exscan");
}

/* Reduce_scatter and Reduce_scatter_block: @recvcounts (user elements) per
 * rank, or (@is_block) @block for every rank. */
static int reduce_scatter(const void *sendbuf, void *recvbuf, const int *recvcounts, int block,
			  bool is_block, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
			  const char *F)
{
	bool inplace = sendbuf == MPI_IN_PLACE;
	long long total;
	red_io_t io;
	coll_grp_t g;
	int p, me, mine, *counts = NULL, err;
	void *ibase = NULL, *obase = NULL, *win, *wout;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	p = comm->size;
	me = comm->rank;
	if (!is_block) {
		MPIL_CHECK(check_counts(comm, recvcounts, p, "recvcounts", &total, F));
		mine = recvcounts[me];
	} else {
		MPIL_CHECK(mpil_check_count(comm, block, F));
		total = (long long)block * p;
		mine = block;
	}
	MPIL_CHECK(check_reduction(comm, total, datatype, op, &io, F));
	if (inplace) {
		MPIL_CHECK(check_vbuf(comm, recvbuf, total, datatype, F));
	} else {
		MPIL_CHECK(check_vbuf(comm, sendbuf, total, datatype, F));
		MPIL_CHECK(mpil_check_buf(comm, recvbuf, mine, datatype, F));
		if ((sendbuf == recvbuf && mine > 0) ||
		    overlap(sendbuf, total, datatype, recvbuf, mine, datatype))
			if (datatype->size > 0)
				return err_alias(comm, F);
	}
	if (total == 0 || datatype->size == 0)
		return MPI_SUCCESS;
	counts = malloc((size_t)p * sizeof(int));
	if (!counts)
		return coll_failed(comm, MPI_ERR_NO_MEM, F);
	for (int i = 0; i < p; i++)
		counts[i] = red_n(&io, is_block ? block : recvcounts[i]);
	coll_grp_comm(&g, comm);
	if (io.direct) {
		err = mpil_coll_reduce_scatter(&g, inplace ? NULL : red_wptr(&io, sendbuf),
					       red_wptr(&io, recvbuf), counts, &io.rd);
	} else {
		win = red_load(&io, inplace ? recvbuf : sendbuf, (int)total, &ibase);
		wout = mpil_coll_red_alloc(&io.rd, counts[me], &obase);
		err = MPI_ERR_NO_MEM;
		if (win && wout)
			err = mpil_coll_reduce_scatter(&g, win, wout, counts, &io.rd);
		if (err == MPI_SUCCESS)
			err = red_store(&io, wout, recvbuf, mine);
		free(ibase);
		free(obase);
	}
	free(counts);
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}

MPIL_PMPI_ALIAS(Reduce_scatter_block)
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
			      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	return reduce_scatter(sendbuf, recvbuf, NULL, recvcount, true, datatype, op, comm,
			      "MPI_Reduce_scatter_block");
}

MPIL_PMPI_ALIAS(Reduce_scatter)
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
			MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	return reduce_scatter(sendbuf, recvbuf, recvcounts, 0, false, datatype, op, comm,
			      "MPI_Reduce_scatter");
}

MPIL_PMPI_ALIAS(Reduce_local)
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
		      MPI_Op op)
{
	static const char F[] = "MPI_Reduce_local";
	red_io_t io;
	void *ib = NULL, *ob = NULL, *wi, *wo;
	int n, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_count(NULL, count, F));
	MPIL_CHECK(check_reduction(NULL, count, datatype, op, &io, F));
	MPIL_CHECK(mpil_check_buf(NULL, inbuf, count, datatype, F));
	MPIL_CHECK(mpil_check_buf(NULL, inoutbuf, count, datatype, F));
	if (count == 0 || datatype->size == 0)
		return MPI_SUCCESS;
	n = red_n(&io, count);
	if (io.direct) {
		red_apply(&io.rd, red_wptr(&io, inbuf), red_wptr(&io, inoutbuf), n);
		return MPI_SUCCESS;
	}
	wi = red_load(&io, inbuf, count, &ib);
	wo = red_load(&io, inoutbuf, count, &ob);
	err = MPI_ERR_NO_MEM;
	if (wi && wo) {
		red_apply(&io.rd, wi, wo, n);
		err = red_store(&io, wo, inoutbuf, count);
	}
	free(ib);
	free(ob);
	return err == MPI_SUCCESS ? MPI_SUCCESS
				  : mpil_err(NULL, err, F, "out of memory for temporary buffers");
}

/* ---- gather, scatter ------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Gather)
int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	static const char F[] = "MPI_Gather";
	bool inplace = sendbuf == MPI_IN_PLACE, am_root;
	void *stmp = NULL, *rtmp = NULL;
	const char *mine = NULL;
	size_t len, mylen = 0;
	coll_lay_t lay = {0};
	coll_grp_t g;
	int p, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(check_root(comm, root, F));
	p = comm->size;
	am_root = comm->rank == root;
	if (inplace && !am_root)
		return mpil_err(comm, MPI_ERR_BUFFER, F,
				"MPI_IN_PLACE as sendbuf on a non-root rank");
	if (!inplace) {
		MPIL_CHECK(check_typed(comm, sendcount, sendtype, F));
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, sendcount, sendtype, F));
		mylen = tbytes(sendcount, sendtype);
	}
	if (am_root) {
		MPIL_CHECK(check_typed(comm, recvcount, recvtype, F));
		MPIL_CHECK(mpil_check_buf(comm, recvbuf, recvcount, recvtype, F));
		len = tbytes(recvcount, recvtype);
		if (!inplace) {
			if (overlap(sendbuf, sendcount, sendtype, recvbuf, (long long)recvcount * p,
				    recvtype))
				return err_alias(comm, F);
			if (mylen > len)
				return err_trunc(comm, F, mylen, len);
		}
	} else {
		len = mylen;
	}
	if (len == 0)
		return MPI_SUCCESS; /* the same on every rank: signatures match */
	if (!inplace) {
		mine = tb_read(sendbuf, sendcount, sendtype, &stmp);
		if (!mine)
			return coll_failed(comm, MPI_ERR_NO_MEM, F);
	}
	lay.len = lay.stride = len;
	if (am_root) {
		/* A packed receive buffer holds the root's own block too (the
		 * tree reads it from there when in place). */
		err = lay_regular(&lay, recvbuf, recvcount, recvtype, p, false, -1, &rtmp);
		if (err != MPI_SUCCESS)
			goto out;
		if (inplace && rtmp)
			mpil_dt_pack(recvtype, block_at(recvbuf, root, recvcount, recvtype),
				     recvcount, lay.base + (size_t)root * len);
	}
	coll_grp_comm(&g, comm);
	if (p > 2 && len <= COLL_GATHER_TREE_MAX)
		err = mpil_coll_gather_binomial(&g, root, mine, mylen, &lay);
	else
		err = mpil_coll_gather_linear(&g, root, mine, mylen, &lay);
	if (err == MPI_SUCCESS && am_root)
		lay_regular_done(&lay, recvbuf, recvcount, recvtype, p, inplace ? root : -1, rtmp);
	else
		free(rtmp);
out:
	free(stmp);
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}

MPIL_PMPI_ALIAS(Gatherv)
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
		 MPI_Comm comm)
{
	static const char F[] = "MPI_Gatherv";
	bool inplace = sendbuf == MPI_IN_PLACE, am_root;
	void *stmp = NULL, *mem = NULL;
	const char *mine = NULL;
	size_t mylen = 0;
	coll_lay_t lay = {0};
	coll_grp_t g;
	long long total;
	int p, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(check_root(comm, root, F));
	p = comm->size;
	am_root = comm->rank == root;
	if (inplace && !am_root)
		return mpil_err(comm, MPI_ERR_BUFFER, F,
				"MPI_IN_PLACE as sendbuf on a non-root rank");
	if (!inplace) {
		MPIL_CHECK(check_typed(comm, sendcount, sendtype, F));
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, sendcount, sendtype, F));
		mylen = tbytes(sendcount, sendtype);
	}
	if (am_root) {
		MPIL_CHECK(check_counts(comm, recvcounts, p, "recvcounts", &total, F));
		MPIL_CHECK(check_displs(comm, displs, "displs", F));
		MPIL_CHECK(mpil_check_dtype(comm, recvtype, F));
		MPIL_CHECK(check_vbuf(comm, recvbuf, total, recvtype, F));
		MPIL_CHECK(check_recv_blocks(comm, recvbuf, recvcounts, displs, recvtype, p, F));
		if (!inplace) {
			if (overlap_vv(sendbuf, &sendcount, &zero_displ, sendtype, 1, recvbuf,
				       recvcounts, displs, recvtype, p))
				return err_alias(comm, F);
			if (mylen > tbytes(recvcounts[root], recvtype))
				return err_trunc(comm, F, mylen,
						 tbytes(recvcounts[root], recvtype));
		}
	}
	if (!inplace) {
		mine = tb_read(sendbuf, sendcount, sendtype, &stmp);
		if (!mine)
			return coll_failed(comm, MPI_ERR_NO_MEM, F);
	}
	if (am_root) {
		err = lay_v(&lay, recvbuf, recvcounts, displs, recvtype, p, false, -1, &mem);
		if (err != MPI_SUCCESS)
			goto out;
	}
	coll_grp_comm(&g, comm);
	err = mpil_coll_gather_linear(&g, root, mine, mylen, &lay);
	if (err == MPI_SUCCESS && am_root)
		lay_v_done(&lay, recvbuf, recvcounts, displs, recvtype, p, inplace ? root : -1);
out:
	free(mem);
	free(stmp);
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}

MPIL_PMPI_ALIAS(Scatter)
int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	static const char F[] = "MPI_Scatter";
	bool inplace = recvbuf == MPI_IN_PLACE, am_root;
	void *stmp = NULL, *rtmp = NULL;
	char *mine = NULL;
	size_t len, mylen = 0;
	coll_lay_t lay = {0};
	coll_grp_t g;
	int p, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(check_root(comm, root, F));
	p = comm->size;
	am_root = comm->rank == root;
	if (inplace && !am_root)
		return mpil_err(comm, MPI_ERR_BUFFER, F,
				"MPI_IN_PLACE as recvbuf on a non-root rank");
	if (!inplace) {
		MPIL_CHECK(check_typed(comm, recvcount, recvtype, F));
		MPIL_CHECK(mpil_check_buf(comm, recvbuf, recvcount, recvtype, F));
		mylen = tbytes(recvcount, recvtype);
	}
	if (am_root) {
		MPIL_CHECK(check_typed(comm, sendcount, sendtype, F));
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, sendcount, sendtype, F));
		len = tbytes(sendcount, sendtype);
		if (!inplace) {
			if (overlap(sendbuf, (long long)sendcount * p, sendtype, recvbuf, recvcount,
				    recvtype))
				return err_alias(comm, F);
			if (len > mylen)
				return err_trunc(comm, F, len, mylen);
		}
	} else {
		len = mylen;
	}
	if (len == 0)
		return MPI_SUCCESS; /* the same on every rank: signatures match */
	if (!inplace) {
		mine = tb_write(recvbuf, recvcount, recvtype, &rtmp);
		if (!mine)
			return coll_failed(comm, MPI_ERR_NO_MEM, F);
	}
	lay.len = lay.stride = len;
	if (am_root) {
		err = lay_regular(&lay, sendbuf, sendcount, sendtype, p, true, inplace ? root : -1,
				  &stmp);
		if (err != MPI_SUCCESS)
			goto out;
	}
	coll_grp_comm(&g, comm);
	if (p > 2 && len <= COLL_GATHER_TREE_MAX)
		err = mpil_coll_scatter_binomial(&g, root, &lay, mine, mylen);
	else
		err = mpil_coll_scatter_linear(&g, root, &lay, mine, mylen);
out:
	if (err == MPI_SUCCESS && !inplace) {
		tb_write_done(recvbuf, recvcount, recvtype, rtmp);
		rtmp = NULL;
	}
	free(rtmp);
	free(stmp);
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}

MPIL_PMPI_ALIAS(Scatterv)
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
		  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
		  int root, MPI_Comm comm)
{
	static const char F[] = "MPI_Scatterv";
	bool inplace = recvbuf == MPI_IN_PLACE, am_root;
	void *mem = NULL, *rtmp = NULL;
	char *mine = NULL;
	size_t mylen = 0;
	coll_lay_t lay = {0};
	coll_grp_t g;
	long long total;
	int p, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(check_root(comm, root, F));
	p = comm->size;
	am_root = comm->rank == root;
	if (inplace && !am_root)
		return mpil_err(comm, MPI_ERR_BUFFER, F,
				"MPI_IN_PLACE as recvbuf on a non-root rank");
	if (!inplace) {
		MPIL_CHECK(check_typed(comm, recvcount, recvtype, F));
		MPIL_CHECK(mpil_check_buf(comm, recvbuf, recvcount, recvtype, F));
		mylen = tbytes(recvcount, recvtype);
	}
	if (am_root) {
		MPIL_CHECK(check_counts(comm, sendcounts, p, "sendcounts", &total, F));
		MPIL_CHECK(check_displs(comm, displs, "displs", F));
		MPIL_CHECK(mpil_check_dtype(comm, sendtype, F));
		MPIL_CHECK(check_vbuf(comm, sendbuf, total, sendtype, F));
		if (!inplace) {
			if (overlap_vv(sendbuf, sendcounts, displs, sendtype, p, recvbuf,
				       &recvcount, &zero_displ, recvtype, 1))
				return err_alias(comm, F);
			if (tbytes(sendcounts[root], sendtype) > mylen)
				return err_trunc(comm, F, tbytes(sendcounts[root], sendtype),
						 mylen);
		}
	}
	if (!inplace) {
		mine = tb_write(recvbuf, recvcount, recvtype, &rtmp);
		if (!mine)
			return coll_failed(comm, MPI_ERR_NO_MEM, F);
	}
	if (am_root) {
		err = lay_v(&lay, sendbuf, sendcounts, displs, sendtype, p, true,
			    inplace ? root : -1, &mem);
		if (err != MPI_SUCCESS)
			goto out;
	}
	coll_grp_comm(&g, comm);
	err = mpil_coll_scatter_linear(&g, root, &lay, mine, mylen);
out:
	if (err == MPI_SUCCESS && !inplace) {
		tb_write_done(recvbuf, recvcount, recvtype, rtmp);
		rtmp = NULL;
	}
	free(rtmp);
	free(mem);
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}

/* ---- allgather ------------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Allgather)
int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char F[] = "MPI_Allgather";
	bool inplace = sendbuf == MPI_IN_PLACE;
	void *rtmp = NULL;
	coll_lay_t lay;
	coll_grp_t g;
	size_t len;
	int p, me, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	p = comm->size;
	me = comm->rank;
	MPIL_CHECK(check_typed(comm, recvcount, recvtype, F));
	MPIL_CHECK(mpil_check_buf(comm, recvbuf, recvcount, recvtype, F));
	len = tbytes(recvcount, recvtype);
	if (!inplace) {
		MPIL_CHECK(check_typed(comm, sendcount, sendtype, F));
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, sendcount, sendtype, F));
		if (overlap(sendbuf, sendcount, sendtype, recvbuf, (long long)recvcount * p,
			    recvtype))
			return err_alias(comm, F);
		if (tbytes(sendcount, sendtype) > len)
			return err_trunc(comm, F, tbytes(sendcount, sendtype), len);
	}
	if (len == 0)
		return MPI_SUCCESS;
	err = lay_regular(&lay, recvbuf, recvcount, recvtype, p, false, -1, &rtmp);
	if (err != MPI_SUCCESS)
		return coll_failed(comm, err, F);
	/* Own block into place, packed. */
	if (!inplace)
		mpil_dt_pack(sendtype, sendbuf, sendcount, lay_ptr(&lay, me));
	else if (rtmp)
		mpil_dt_pack(recvtype, block_at(recvbuf, me, recvcount, recvtype), recvcount,
			     lay_ptr(&lay, me));
	coll_grp_comm(&g, comm);
	if (p > 2 && (size_t)p * len <= COLL_ALLGATHER_SHORT_MAX)
		err = mpil_coll_allgather_bruck(&g, &lay);
	else
		err = mpil_coll_allgather_ring(&g, &lay);
	if (err == MPI_SUCCESS)
		lay_regular_done(&lay, recvbuf, recvcount, recvtype, p, inplace ? me : -1, rtmp);
	else
		free(rtmp);
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}

MPIL_PMPI_ALIAS(Allgatherv)
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
		    MPI_Comm comm)
{
	static const char F[] = "MPI_Allgatherv";
	bool inplace = sendbuf == MPI_IN_PLACE;
	void *mem = NULL;
	coll_lay_t lay;
	coll_grp_t g;
	long long total;
	int p, me, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	p = comm->size;
	me = comm->rank;
	MPIL_CHECK(check_counts(comm, recvcounts, p, "recvcounts", &total, F));
	MPIL_CHECK(check_displs(comm, displs, "displs", F));
	MPIL_CHECK(mpil_check_dtype(comm, recvtype, F));
	MPIL_CHECK(check_vbuf(comm, recvbuf, total, recvtype, F));
	MPIL_CHECK(check_recv_blocks(comm, recvbuf, recvcounts, displs, recvtype, p, F));
	if (!inplace) {
		MPIL_CHECK(check_typed(comm, sendcount, sendtype, F));
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, sendcount, sendtype, F));
		if (overlap_vv(sendbuf, &sendcount, &zero_displ, sendtype, 1, recvbuf, recvcounts,
			       displs, recvtype, p))
			return err_alias(comm, F);
		if (tbytes(sendcount, sendtype) > tbytes(recvcounts[me], recvtype))
			return err_trunc(comm, F, tbytes(sendcount, sendtype),
					 tbytes(recvcounts[me], recvtype));
	}
	if (total == 0 || recvtype->size == 0)
		return MPI_SUCCESS;
	/* A packed layout holds the own block when in place. */
	err = lay_v(&lay, recvbuf, recvcounts, displs, recvtype, p, false, -1, &mem);
	if (err != MPI_SUCCESS)
		return coll_failed(comm, err, F);
	if (!inplace)
		mpil_dt_pack(sendtype, sendbuf, sendcount, lay_ptr(&lay, me));
	else if (!mpil_dt_contig(recvtype))
		mpil_dt_pack(recvtype, at(recvbuf, (MPI_Aint)displs[me] * recvtype->extent),
			     recvcounts[me], lay_ptr(&lay, me));
	coll_grp_comm(&g, comm);
	err = mpil_coll_allgather_ring(&g, &lay);
	if (err == MPI_SUCCESS)
		lay_v_done(&lay, recvbuf, recvcounts, displs, recvtype, p, inplace ? me : -1);
	free(mem);
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}

/* ---- alltoall -------------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Alltoall)
int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char F[] = "MPI_Alltoall";
	bool inplace = sendbuf == MPI_IN_PLACE;
	void *stmp = NULL, *rtmp = NULL;
	coll_lay_t slay, rlay;
	coll_grp_t g;
	size_t slen, rlen;
	int p, me, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	p = comm->size;
	me = comm->rank;
	MPIL_CHECK(check_typed(comm, recvcount, recvtype, F));
	MPIL_CHECK(mpil_check_buf(comm, recvbuf, recvcount, recvtype, F));
	rlen = tbytes(recvcount, recvtype);
	if (!inplace) {
		MPIL_CHECK(check_typed(comm, sendcount, sendtype, F));
		MPIL_CHECK(mpil_check_buf(comm, sendbuf, sendcount, sendtype, F));
		if (overlap(sendbuf, (long long)sendcount * p, sendtype, recvbuf,
			    (long long)recvcount * p, recvtype))
			return err_alias(comm, F);
		slen = tbytes(sendcount, sendtype);
		if (slen > rlen)
			return err_trunc(comm, F, slen, rlen);
	} else {
		slen = rlen;
	}
	if (slen == 0 && rlen == 0)
		return MPI_SUCCESS;
	if (inplace) {
		/* The send data is the receive buffer's: take a packed copy. */
		if (mpil_dt_contig(recvtype)) {
			stmp = malloc((size_t)p * rlen);
			if (stmp)
				memcpy(stmp, at(recvbuf, recvtype->true_lb), (size_t)p * rlen);
			slay = (coll_lay_t){.base = stmp, .stride = rlen, .len = rlen};
			err = stmp ? MPI_SUCCESS : MPI_ERR_NO_MEM;
		} else {
			err = lay_regular(&slay, recvbuf, recvcount, recvtype, p, true, -1, &stmp);
		}
	} else {
		err = lay_regular(&slay, sendbuf, sendcount, sendtype, p, true, -1, &stmp);
	}
	if (err == MPI_SUCCESS)
		err = lay_regular(&rlay, recvbuf, recvcount, recvtype, p, false, -1, &rtmp);
	if (err != MPI_SUCCESS)
		goto out;
	coll_grp_comm(&g, comm);
	if (p > 2 && slen <= COLL_ALLTOALL_BRUCK_MAX && slen == rlen) {
		if (lay_ptr(&rlay, me) != lay_ptr(&slay, me))
			memcpy(lay_ptr(&rlay, me), lay_ptr(&slay, me), slen);
		err = mpil_coll_alltoall_bruck(&g, &slay, &rlay);
	} else {
		err = mpil_coll_alltoall_pairwise(&g, &slay, &rlay, true);
	}
	if (err == MPI_SUCCESS) {
		lay_regular_done(&rlay, recvbuf, recvcount, recvtype, p, -1, rtmp);
		rtmp = NULL;
	}
out:
	free(rtmp);
	free(stmp);
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}

MPIL_PMPI_ALIAS(Alltoallv)
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
		   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char F[] = "MPI_Alltoallv";
	bool inplace = sendbuf == MPI_IN_PLACE;
	void *smem = NULL, *rmem = NULL;
	coll_lay_t slay, rlay;
	coll_grp_t g;
	long long stotal, rtotal;
	int p, me, err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	p = comm->size;
	me = comm->rank;
	MPIL_CHECK(check_counts(comm, recvcounts, p, "recvcounts", &rtotal, F));
	MPIL_CHECK(check_displs(comm, rdispls, "rdispls", F));
	MPIL_CHECK(mpil_check_dtype(comm, recvtype, F));
	MPIL_CHECK(check_vbuf(comm, recvbuf, rtotal, recvtype, F));
	MPIL_CHECK(check_recv_blocks(comm, recvbuf, recvcounts, rdispls, recvtype, p, F));
	if (!inplace) {
		MPIL_CHECK(check_counts(comm, sendcounts, p, "sendcounts", &stotal, F));
		MPIL_CHECK(check_displs(comm, sdispls, "sdispls", F));
		MPIL_CHECK(mpil_check_dtype(comm, sendtype, F));
		MPIL_CHECK(check_vbuf(comm, sendbuf, stotal, sendtype, F));
		if (overlap_vv(sendbuf, sendcounts, sdispls, sendtype, p, recvbuf, recvcounts,
			       rdispls, recvtype, p))
			return err_alias(comm, F);
		if (tbytes(sendcounts[me], sendtype) > tbytes(recvcounts[me], recvtype))
			return err_trunc(comm, F, tbytes(sendcounts[me], sendtype),
					 tbytes(recvcounts[me], recvtype));
		err = lay_v(&slay, sendbuf, sendcounts, sdispls, sendtype, p, true, -1, &smem);
	} else {
		/* A packed copy of what the receive buffer holds. */
		if (mpil_dt_contig(recvtype)) {
			coll_lay_t in;
			void *imem = NULL;

			err =
			    lay_v(&in, recvbuf, recvcounts, rdispls, recvtype, p, false, -1, &imem);
			if (err == MPI_SUCCESS) {
				size_t total = tbytes(rtotal, recvtype), o = 0;
				size_t arrays = (size_t)p * (sizeof(ptrdiff_t) + sizeof(size_t));
				char *mem = malloc(arrays + total + 1);

				smem = mem;
				if (!mem) {
					err = MPI_ERR_NO_MEM;
				} else {
					ptrdiff_t *off = (ptrdiff_t *)mem;
					size_t *lens = (size_t *)(off + p);

					slay = (coll_lay_t){
					    .base = mem + arrays, .off = off, .lens = lens};
					for (int i = 0; i < p; i++) {
						off[i] = (ptrdiff_t)o;
						lens[i] = lay_len(&in, i);
						memcpy(slay.base + o, lay_ptr(&in, i), lens[i]);
						o += lens[i];
					}
				}
			}
			free(imem);
		} else {
			err = lay_v(&slay, recvbuf, recvcounts, rdispls, recvtype, p, true, -1,
				    &smem);
		}
	}
	if (err == MPI_SUCCESS)
		err = lay_v(&rlay, recvbuf, recvcounts, rdispls, recvtype, p, false, -1, &rmem);
	if (err != MPI_SUCCESS)
		goto out;
	coll_grp_comm(&g, comm);
	err = mpil_coll_alltoall_pairwise(&g, &slay, &rlay, true);
	if (err == MPI_SUCCESS)
		lay_v_done(&rlay, recvbuf, recvcounts, rdispls, recvtype, p, -1);
out:
	free(rmem);
	free(smem);
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : coll_failed(comm, err, F);
}
