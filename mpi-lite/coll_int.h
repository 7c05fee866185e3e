/*
 * coll_int.h — what the collective files (coll*.c) share: groups of ranks
 * that an algorithm runs on, transfers on the collective context, the
 * node map, typed buffers as bytes, argument checks, the algorithm
 * families' dispatchers and the reduction view.
 *
 * Layering (top to bottom):
 *
 *   coll.c           MPI_* entry points of Barrier, Bcast and the reductions
 *   coll_blocks.c    MPI_* entry points of Gather(v), Scatter(v),
 *                    Allgather(v), Alltoall(v)
 *     coll_check.c     argument checks beyond one buffer; failure reports
 *     coll_layout.c    typed buffers as bytes (in place or packed), block
 *                      layouts of the gather family
 *     coll_redbuf.c    reduction buffers as work buffers
 *   coll_select.c    the selection table: collective, size, properties ->
 *                    algorithm (coll_select.h); the one place that decides
 *   coll_barrier.c   dissemination; node-aware fan-in / leaders / fan-out
 *   coll_bcast.c     binomial; linear; scatter + ring allgather; node-aware
 *   coll_reduce.c    reduce, allreduce, reduce-scatter (trees, recursive
 *                    doubling, rings, node-aware)
 *   coll_scan.c      scan, exscan: recursive doubling
 *   coll_gather.c    gather(v), scatter(v), allgather(v)
 *   coll_alltoall.c  alltoall(v): Bruck, pairwise exchange
 *   coll_exchange.c  every block to or from its peer at once, typed: the
 *                    neighbourhood collectives (coll_neighbor.c, their
 *                    entry points) and MPI_Alltoallw
 *   coll_node.c      the node map: where ranks run, node-aware splits
 *   coll_xfer.c      transfers between group ranks on the collective context
 *
 * Each family file has a dispatcher (mpil_coll_bcast, mpil_coll_gather, ...)
 * that asks the selection table and runs the algorithm it names; the
 * algorithms themselves are static to their file. Every algorithm runs on
 * a coll_grp_t: a list of ranks of one communicator (all of it, or one
 * node's members, or the node leaders) and moves bytes only; the entry
 * points deal with datatypes. Algorithms return an MPI error class and
 * never call an error handler.
 */
#ifndef MPIL_COLL_INT_H
#define MPIL_COLL_INT_H

#include "coll_select.h"
#include "mpil_int.h"

#include <limits.h>
#include <stdlib.h>

/* Steps of the algorithms: tags on the collective context (cid | 1). Every
 * step that could meet another step's message between the same two ranks
 * has its own tag; messages of one pair are never overtaken, so the
 * collectives that follow each other on a communicator cannot mix. */
enum coll_tag {
	CT_BARRIER = 1,
	CT_BARRIER_IN,
	CT_BARRIER_OUT,
	CT_BCAST,
	CT_BCAST_RING,
	CT_BCAST_INTRA,
	CT_RED_TREE,
	CT_RED_ROOT,
	CT_RED_RS,
	CT_RED_GATHER,
	CT_ALLRED_FOLD,
	CT_ALLRED_RD,
	CT_ALLRED_UNFOLD,
	CT_ALLRED_RS,
	CT_ALLRED_AG,
	CT_HIER_INTRA,
	CT_HIER_BCAST,
	CT_RS_RING,
	CT_RS_SCATTER,
	CT_GATHER,
	CT_SCATTER,
	CT_ALLGATHER,
	CT_ALLTOALL,
	CT_SCAN,
	CT_NODEMAP,
	CT_ALLTOALLW,
	CT_NEIGHBOR, /* graph and distributed graph neighbourhoods */
	/* Cartesian neighbourhoods: CT_NEIGHBOR_CART + 2 * dimension + 0 for
	 * a block going to the -1 neighbour, + 1 going to the +1 neighbour,
	 * so that a process that is both neighbours of another (periodic
	 * dimensions of size 1 or 2) gets each block in the right place */
	CT_NEIGHBOR_CART = 0x10000,
};

/* ---- groups and transfers (coll_xfer.c)
 * ----------------------------------------------------------- */

typedef struct coll_grp {
	MPI_Comm comm;
	int size, rank;	  /* in the group */
	const int *ranks; /* group rank -> rank of comm; NULL: the identity */
} coll_grp_t;

static inline void coll_grp_comm(coll_grp_t *g, MPI_Comm comm)
{
	g->comm = comm;
	g->size = comm->size;
	g->rank = comm->rank;
	g->ranks = NULL;
}

static inline int coll_world(const coll_grp_t *g, int r)
{
	return mpil_comm_to_world(g->comm, g->ranks ? g->ranks[r] : r);
}

/* Blocking transfers between group ranks (mpil_coll_send & co. for groups). */
int mpil_grp_send(const coll_grp_t *g, const void *buf, size_t len, int dst, int tag);
int mpil_grp_recv(const coll_grp_t *g, void *buf, size_t len, int src, int tag);
int mpil_grp_sendrecv(const coll_grp_t *g, const void *sbuf, size_t slen, int dst, void *rbuf,
		      size_t rlen, int src, int tag);

/* Nonblocking ones: @rq is the caller's and stays in place until waited
 * for. On an error nothing was started and *rq is marked complete with it,
 * so mpil_grp_waitall() may still be called on the whole array. */
int mpil_grp_isend(const coll_grp_t *g, const void *buf, size_t len, int dst, int tag,
		   ibx_request_t *rq);
int mpil_grp_irecv(const coll_grp_t *g, void *buf, size_t len, int src, int tag, ibx_request_t *rq);
/* Waits for all @n; returns the first error (MPI class). */
int mpil_grp_waitall(ibx_request_t *rq, int n);
/* After a failure to start request @n: waits for the ones started before
 * it (receives are withdrawn when they have not matched yet). */
void mpil_grp_abandon(ibx_request_t *rq, int n);

/* ---- the node map (coll_node.c)
 * --------------------------------------------------------------------- */

/* A communicator split by nodes for the node-aware algorithms: this
 * process's node members (ascending) and one representative per node —
 * the root on the root's node, the lowest rank elsewhere. */
typedef struct coll_hier {
	coll_grp_t intra; /* my node's members of the communicator */
	coll_grp_t inter; /* the representatives (valid when is_rep) */
	bool is_rep;
	int intra_root; /* my representative's index in intra */
	int inter_root; /* the root's node's index in inter */
} coll_hier_t;

/* Where @g runs, as properties for the selection table: for a whole
 * communicator MPIL_COLL_SPANS_NODES (it spans more than one node and
 * node-aware algorithms are enabled) or else MPIL_COLL_ONE_NODE; for a
 * subgroup neither (where its members run is not known here);
 * MPIL_COLL_OVERSUB when some node of the job runs more ranks than it has
 * CPUs. The same answer on every member, so the choices based on it agree. */
unsigned mpil_coll_where(const coll_grp_t *g);
/* For a communicator that spans nodes: fills @h for @root (any rank for
 * rooted collectives, 0 for the others). The arrays behind @h belong to
 * @comm's cached split, valid until its next collective; MPI_ERR_NO_MEM
 * when the split cannot be built. */
int mpil_coll_hier_get(MPI_Comm comm, int root, coll_hier_t *h);

/* ---- block layouts (the gather family) -------------------------------------------------- */

/* Where the p blocks of a gather/scatter buffer are: block i at
 * base + i * stride with len bytes, or (v variants) at base + off[i] with
 * lens[i] bytes. base already includes the type's true lower bound. */
typedef struct coll_lay {
	char *base;
	size_t stride, len;
	const ptrdiff_t *off;
	const size_t *lens;
} coll_lay_t;

static inline char *lay_ptr(const coll_lay_t *l, int i)
{
	return l->off ? l->base + l->off[i] : l->base + (size_t)i * l->stride;
}

static inline size_t lay_len(const coll_lay_t *l, int i)
{
	return l->lens ? l->lens[i] : l->len;
}

/* ---- typed buffers as bytes (coll_layout.c) --------------------------------------------- */

/* @buf + @off as an address: user buffers may be MPI_BOTTOM (NULL) with
 * absolute displacements, where pointer arithmetic would be undefined. */
static inline char *coll_at(const void *buf, MPI_Aint off)
{
	return (char *)((uintptr_t)buf + (uintptr_t)off);
}

static inline size_t coll_tbytes(long long count, MPI_Datatype dt)
{
	return (size_t)count * dt->size;
}

/* Block i of a buffer of blocks of @count elements. */
static inline char *coll_block_at(const void *buf, int i, int count, MPI_Datatype dt)
{
	return coll_at(buf, (MPI_Aint)i * count * dt->extent);
}

/* The bytes of @count elements at @buf: in place for a contiguous type,
 * else packed into *tmp_p (to free). NULL when out of memory. */
char *mpil_coll_tb_read(const void *buf, int count, MPI_Datatype dt, void **tmp_p);
/* Where to receive @count elements for @buf: in place for a contiguous
 * type, else a temporary that mpil_coll_tb_write_done() unpacks. */
char *mpil_coll_tb_write(void *buf, int count, MPI_Datatype dt, void **tmp_p);
void mpil_coll_tb_write_done(void *buf, int count, MPI_Datatype dt, void *tmp);

/* A regular layout of p blocks of @count elements at @buf: in place for a
 * contiguous type (*tmp_p NULL), else a packed temporary of p blocks
 * (filled with the user's blocks when @fill; block @skip excepted, -1 for
 * none). Returns MPI_ERR_NO_MEM or MPI_SUCCESS. */
int mpil_coll_lay_regular(coll_lay_t *l, const void *buf, int count, MPI_Datatype dt, int p,
			  bool fill, int skip, void **tmp_p);
/* Unpacks the blocks of a packed regular layout into the user buffer. */
void mpil_coll_lay_regular_done(const coll_lay_t *l, void *buf, int count, MPI_Datatype dt, int p,
				int skip, void *tmp);
/* A v layout: block i is counts[i] elements at displs[i] * extent. In
 * place for a contiguous type, else packed back to back in a temporary
 * (filled when @fill, block @skip excepted). *mem_p holds the offset and
 * length arrays (and the temporary): free it. */
int mpil_coll_lay_v(coll_lay_t *l, const void *buf, const int *counts, const int *displs,
		    MPI_Datatype dt, int p, bool fill, int skip, void **mem_p);
void mpil_coll_lay_v_done(const coll_lay_t *l, void *buf, const int *counts, const int *displs,
			  MPI_Datatype dt, int p, int skip);
/* A packed copy of the p blocks at @buf, never in place (the send side of
 * an in-place alltoall, whose receive blocks overwrite it): a regular
 * layout in *tmp_p, a v layout in *mem_p (both to free). */
int mpil_coll_lay_regular_copy(coll_lay_t *l, const void *buf, int count, MPI_Datatype dt, int p,
			       void **tmp_p);
int mpil_coll_lay_v_copy(coll_lay_t *l, const void *buf, const int *counts, const int *displs,
			 MPI_Datatype dt, int p, void **mem_p);

/* ---- argument checks (coll_check.c) -------------------------------------------------------- */

/* Reports a collective that failed underway (MPI_ERR_NO_MEM or a failed
 * transfer) through @comm's error handler. */
int mpil_coll_failed(MPI_Comm comm, int err, const char *fname);

/* What an entry point returns for the error class @err of its algorithm. */
static inline int coll_done(MPI_Comm comm, int err, const char *fname)
{
	return ibx_likely(err == MPI_SUCCESS) ? MPI_SUCCESS : mpil_coll_failed(comm, err, fname);
}

int mpil_coll_check_root(MPI_Comm comm, int root, const char *F);
/* A count and a datatype. */
int mpil_coll_check_typed(MPI_Comm comm, int count, MPI_Datatype dt, const char *F);
/* A counts array: given, no negative entry; *total_p its sum. */
int mpil_coll_check_counts(MPI_Comm comm, const int *counts, int n, const char *what,
			   long long *total_p, const char *F);
int mpil_coll_check_displs(MPI_Comm comm, const int *displs, const char *what, const char *F);
/* A buffer that receives or sends @total elements (NULL only when nothing
 * moves). */
int mpil_coll_check_vbuf(MPI_Comm comm, const void *buf, long long total, MPI_Datatype dt,
			 const char *F);
/* MPI_IN_PLACE as @which ("sendbuf", "recvbuf") only at the root. */
int mpil_coll_check_inplace_root(MPI_Comm comm, bool inplace, bool am_root, const char *which,
				 const char *F);
/* The arguments of Gather (@gather) and Scatter, blocking or not: the
 * root; MPI_IN_PLACE only at the root, as @mine; the own block @mine (what a
 * rank sends in Gather, receives in Scatter) and, at the root, @all (p
 * blocks), which must not share bytes with @mine, and whose block must hold
 * the own block (Gather) or fit into it (Scatter). *mylen_p: the own block's
 * bytes (0 in place); *len_p: a block's bytes (the root's, else the own). */
int mpil_coll_check_rooted(MPI_Comm comm, int root, bool gather, const void *mine, int minecount,
			   MPI_Datatype minetype, const void *all, int allcount,
			   MPI_Datatype alltype, size_t *len_p, size_t *mylen_p, const char *F);
/* Receive blocks of a v layout must not overlap (MPI-3.1 §5.5: no location
 * is written twice). Checked for contiguous types, where it is exact. */
int mpil_coll_check_recv_blocks(MPI_Comm comm, const void *buf, const int *counts,
				const int *displs, MPI_Datatype dt, int p, const char *F);
/* Do (a, ac, at) and (b, bc, bt) share bytes? Exact for contiguous types;
 * otherwise only the same start with the same type counts. */
bool mpil_coll_overlap(const void *a, long long ac, MPI_Datatype at, const void *b, long long bc,
		       MPI_Datatype bt);
/* Do the blocks of two v layouts share bytes? (One block: counts = &n,
 * displs = &zero, p = 1.) */
bool mpil_coll_overlap_vv(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype st,
			  int sp, const void *rbuf, const int *rcounts, const int *rdispls,
			  MPI_Datatype rt, int rp);
/* The errors of send and receive buffers that share bytes, and of an own
 * block larger than its receive block. */
int mpil_coll_err_alias(MPI_Comm comm, const char *F);
int mpil_coll_err_trunc(MPI_Comm comm, const char *F, size_t have, size_t room);

/* ---- the gather family (coll_gather.c, coll_alltoall.c) ------------------------------------ */

/* gather (@op MPIL_COLL_GATHER or _GATHERV): @mine (mylen bytes; NULL at
 * the root means "already in place") to block g->rank of @recv at @root.
 * Gather: equal blocks, recv->len set to their size on every rank (base:
 * root only). */
int mpil_coll_gather(const coll_grp_t *g, mpil_coll_op_t op, int root, const void *mine,
		     size_t mylen, const coll_lay_t *recv);
/* scatter (MPIL_COLL_SCATTER or _SCATTERV): block i of @send at @root to
 * rank i's @mine (NULL at the root: leave the root's block where it is).
 * Scatter: equal blocks, send->len set to their size on every rank. */
int mpil_coll_scatter(const coll_grp_t *g, mpil_coll_op_t op, int root, const coll_lay_t *send,
		      void *mine, size_t mylen);
/* allgather (MPIL_COLL_ALLGATHER or _ALLGATHERV): every rank's own block
 * is already in place in @recv. */
int mpil_coll_allgather(const coll_grp_t *g, mpil_coll_op_t op, const coll_lay_t *recv);
/* The ring itself, for the node map (built before any choice is made). */
int mpil_coll_allgather_ring(const coll_grp_t *g, const coll_lay_t *recv);

/* alltoall (MPIL_COLL_ALLTOALL or _ALLTOALLV): block i of @send goes to
 * rank i's block g->rank of @recv, the own block included. */
int mpil_coll_alltoall(const coll_grp_t *g, mpil_coll_op_t op, const coll_lay_t *send,
		       const coll_lay_t *recv);

/* memcpy in pieces with a pass of the progress engine between them, so
 * that transfers already started keep moving during a large local copy
 * (coll_xfer.c). */
void mpil_coll_copy_progress(void *dst, const void *src, size_t len);

/* ---- block exchanges (coll_exchange.c) -------------------------------------------------- */

/* A block of @count elements of @dt at @buf (the user's address of the
 * block), to or from rank @peer of the communicator (MPI_PROC_NULL:
 * nothing moves, the buffer is left alone), on collective tag @tag. */
typedef struct coll_xblk {
	void *buf;
	int count;
	MPI_Datatype dt;
	int peer, tag;
} coll_xblk_t;

/* Posts every receive of @recv[nr], then every send of @send[ns], and
 * waits for all (non-contiguous types packed and unpacked around them);
 * an MPI error class, no handler called. Blocks between the same two
 * processes with the same tag pair up in order. */
int mpil_coll_exchange(MPI_Comm comm, const coll_xblk_t *send, int ns, const coll_xblk_t *recv,
		       int nr);
/* Block @b: @count elements of @dt at @buf + @displ bytes (an empty block
 * gets MPI_BYTE: its type need not be valid). */
void mpil_coll_xblk_set(coll_xblk_t *b, const void *buf, MPI_Aint displ, int count, MPI_Datatype dt,
			int peer, int tag);
/* The w forms' arrays for @n blocks (@side: "send", "recv"): given, no
 * negative count, a committed type for every nonempty block. */
int mpil_coll_check_wblocks(MPI_Comm comm, const int *counts, const void *displs,
			    const MPI_Datatype *types, int n, const char *side, const char *F);

/* ---- broadcast (coll_bcast.c) -------------------------------------------------------------- */
int mpil_coll_bcast(const coll_grp_t *g, void *buf, size_t len, int root);
/* The tree itself, for the barrier's fan-out (zero bytes). */
int mpil_coll_bcast_binomial(const coll_grp_t *g, void *buf, size_t len, int root, int tag);

/* ---- reductions (coll_reduce.c, coll_scan.c) --------------------------------------------
 *
 * Reductions work on buffers of @n elements of a "work type" in that
 * type's own layout (element i at i * extent): a predefined type (for
 * derived types reduced with a predefined op, the one predefined type they
 * are made of: the entry points pack them into it), or a derived type with
 * a user op — then the user function sees exactly the layout it was given
 * (MPI passes it the datatype of the call), and the algorithms move whole
 * buffers only, as the bytes that an element span covers may interleave
 * with the next element's.
 */
typedef struct coll_red {
	MPI_Op op;
	MPI_Datatype dt; /* the work type */
	size_t ext;	 /* its extent */
	MPI_Aint lo;	 /* buffer pointer -> first byte of the span */
	bool whole;	 /* derived work type: move whole buffers only */
	bool commute;
} coll_red_t;

void mpil_coll_red_init(coll_red_t *rd, MPI_Op op, MPI_Datatype dt);

/* Bytes that @n elements span (what a transfer of a work buffer moves). */
static inline size_t red_span(const coll_red_t *rd, int n)
{
	if (n <= 0)
		return 0;
	if (!rd->whole)
		return (size_t)n * rd->ext;
	return (size_t)(n - 1) * rd->ext + (size_t)rd->dt->true_extent;
}

/* The first byte that a work buffer's elements occupy. */
static inline char *red_first(const coll_red_t *rd, void *buf)
{
	return (char *)buf + rd->lo;
}

/* inout = in op inout over @n elements. */
static inline void red_apply(const coll_red_t *rd, const void *in, void *inout, int n)
{
	mpil_op_apply(rd->op, in, inout, n, rd->dt);
}

/* A work buffer for @n elements: *base_p is what to free, the return value
 * what to use as the buffer pointer. NULL when out of memory. */
void *mpil_coll_red_alloc(const coll_red_t *rd, int n, void **base_p);

/* Reduce to @root: @sbuf (NULL: the input is in @rbuf) on every rank,
 * @rbuf the result at the root (other ranks: may be NULL). */
int mpil_coll_reduce(const coll_grp_t *g, const void *sbuf, void *rbuf, int n, const coll_red_t *rd,
		     int root);
/* Allreduce: @sbuf NULL means in place. */
int mpil_coll_allreduce(const coll_grp_t *g, const void *sbuf, void *rbuf, int n,
			const coll_red_t *rd);
/* Reduce-scatter: @sbuf (NULL: in @rbuf) holds sum(counts) elements; rank
 * i gets the reduction of its counts[i] elements (at offset
 * sum(counts[0..i)) of the input) in @rbuf. */
int mpil_coll_reduce_scatter(const coll_grp_t *g, const void *sbuf, void *rbuf, const int *counts,
			     const coll_red_t *rd);
/* Inclusive (@exclusive false) or exclusive prefix reduction. */
int mpil_coll_scan(const coll_grp_t *g, const void *sbuf, void *rbuf, int n, const coll_red_t *rd,
		   bool exclusive);

/* The properties of a reduction that the selection table reads. */
static inline unsigned coll_red_props(const coll_red_t *rd)
{
	return (rd->commute ? MPIL_COLL_COMMUTE : 0) | (rd->whole ? 0 : MPIL_COLL_PREDEF);
}

/* ---- the user's buffers of a reduction (coll_redbuf.c) ------------------------------------- */

typedef struct coll_red_io {
	coll_red_t rd;
	MPI_Datatype udt; /* the user's datatype */
	int factor;	  /* work elements per user element */
	bool direct;	  /* user buffers are work buffers (at + shift) */
	MPI_Aint shift;
} coll_red_io_t;

/* Work elements of @count user elements; -1 if they do not fit an int. */
static inline int coll_red_n(const coll_red_io_t *io, long long count)
{
	long long n = count * io->factor;

	return n > INT_MAX ? -1 : (int)n;
}

/* A direct user buffer as a work buffer. */
static inline void *coll_red_wptr(const coll_red_io_t *io, const void *ubuf)
{
	return coll_at(ubuf, io->shift);
}

/* Checks shared by the reductions: count, type, op; *io set up. */
int mpil_coll_check_reduction(MPI_Comm comm, long long count, MPI_Datatype dt, MPI_Op op,
			      coll_red_io_t *io, const char *F);
/* The arguments of Reduce_scatter (@recvcounts) and Reduce_scatter_block
 * (@is_block: @block for every rank), blocking or not: *total_p the
 * elements reduced, *mine_p this rank's share; *io set up. */
int mpil_coll_check_reduce_scatter(MPI_Comm comm, const void *sendbuf, void *recvbuf,
				   const int *recvcounts, int block, bool is_block,
				   MPI_Datatype datatype, MPI_Op op, long long *total_p,
				   int *mine_p, coll_red_io_t *io, const char *F);
/* A work copy of @count user elements at @ubuf (not direct): the return
 * value, *base_p what to free. NULL when out of memory. */
void *mpil_coll_red_load(const coll_red_io_t *io, const void *ubuf, int count, void **base_p);
/* Work buffer @w back into @count user elements at @ubuf. */
int mpil_coll_red_store(const coll_red_io_t *io, const void *w, void *ubuf, int count);

/* Algorithm internals (bytes); the sizes that choose algorithms are rows
 * of the selection table (coll_select.c). */
#define COLL_COPY_OVERLAP_MIN (64 * 1024) /* own block copied during the exchange */
#define COLL_COPY_PIECE	      (32 * 1024) /* mpil_coll_copy_progress: bytes per piece */

#endif /* MPIL_COLL_INT_H */
