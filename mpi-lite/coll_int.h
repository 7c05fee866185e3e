/*
 * coll_int.h — what the collective files (coll*.c) share: groups of ranks
 * that an algorithm runs on, transfers on the collective context, the
 * node map, block layouts of the gather family and the reduction view.
 *
 * Layering:
 *
 *   coll.c          MPI_* entry points: argument checks, typed buffers to
 *                   bytes (contiguous types in place, others packed through
 *                   mpil_dt_pack/unpack), choice of algorithm by size
 *   coll_barrier.c  dissemination; node-aware fan-in / leaders / fan-out
 *   mpil_coll_bcast.c    binomial; scatter + ring allgather; node-aware
 *   mpil_coll_reduce.c   reduce, allreduce, reduce-scatter (trees, recursive
 *                   doubling, rings, node-aware)
 *   coll_gather.c   gather(v), scatter(v), allgather(v)
 *   coll_alltoall.c alltoall(v): Bruck, pairwise exchange
 *   mpil_coll_scan.c     scan, exscan: recursive doubling
 *
 * Every algorithm runs on a coll_grp_t: a list of ranks of one
 * communicator (all of it, or one node's members, or the node leaders) and
 * moves bytes only; the entry points deal with datatypes. Algorithms return
 * an MPI error class and never call an error handler.
 */
#ifndef MPIL_COLL_INT_H
#define MPIL_COLL_INT_H

#include "mpil_int.h"

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
};

/* ---- groups and transfers ----------------------------------------------------------- */

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

/* ---- the node map --------------------------------------------------------------------- */

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

/* True when @comm spans more than one node (and node-aware algorithms are
 * enabled): then mpil_coll_hier_get() fills @h for @root (any rank for rooted
 * collectives, 0 for the others). The arrays behind @h are shared scratch,
 * valid until the next call. */
bool mpil_coll_multinode(MPI_Comm comm);
void mpil_coll_hier_get(MPI_Comm comm, int root, coll_hier_t *h);

/* True when some node of the job runs more ranks than it has CPUs (the
 * same answer on every rank, so algorithm choices based on it agree). */
bool mpil_coll_oversubscribed(void);

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

/* gather: @mine (mylen bytes; NULL at the root means "already in place")
 * to block g->rank of @recv at @root. The binomial tree needs equal blocks
 * and recv->len set to their size on every rank (base: root only). */
int mpil_coll_gather_linear(const coll_grp_t *g, int root, const void *mine, size_t mylen,
			    const coll_lay_t *recv);
int mpil_coll_gather_binomial(const coll_grp_t *g, int root, const void *mine, size_t mylen,
			      const coll_lay_t *recv);
/* scatter: block i of @send at @root to rank i's @mine (NULL at the root:
 * leave the root's block where it is). The binomial tree needs equal
 * blocks and send->len set to their size on every rank. */
int mpil_coll_scatter_linear(const coll_grp_t *g, int root, const coll_lay_t *send, void *mine,
			     size_t mylen);
int mpil_coll_scatter_binomial(const coll_grp_t *g, int root, const coll_lay_t *send, void *mine,
			       size_t mylen);
/* allgather: every rank's own block is already in place in @recv. */
int mpil_coll_allgather_ring(const coll_grp_t *g, const coll_lay_t *recv);
int mpil_coll_allgather_bruck(const coll_grp_t *g, const coll_lay_t *recv);

/* alltoall: block i of @send goes to rank i's block g->rank of @recv. The
 * own block: pairwise copies it when @copy_own (overlapped with the first
 * exchange when large); for Bruck the caller has copied it already. */
int mpil_coll_alltoall_pairwise(const coll_grp_t *g, const coll_lay_t *send, const coll_lay_t *recv,
				bool copy_own);
int mpil_coll_alltoall_bruck(const coll_grp_t *g, const coll_lay_t *send, const coll_lay_t *recv);

/* memcpy in pieces with a pass of the progress engine between them, so
 * that transfers already started keep moving during a large local copy. */
void mpil_coll_copy_progress(void *dst, const void *src, size_t len);

/* ---- broadcast and barrier ------------------------------------------------------------- */
int mpil_coll_bcast_binomial(const coll_grp_t *g, void *buf, size_t len, int root, int tag);
int mpil_coll_bcast_scatter_ring(const coll_grp_t *g, void *buf, size_t len, int root);
int mpil_coll_bcast(const coll_grp_t *g, void *buf, size_t len, int root);
int mpil_coll_barrier_flat(const coll_grp_t *g);

/* ---- reductions ---------------------------------------------------------------------------
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

/* Sizes that choose algorithms (bytes). */
#define COLL_BCAST_SHORT_MAX	 (64 * 1024) /* binomial tree up to this */
#define COLL_BCAST_LINEAR_MAX	 8 /* oversubscribed node: root to each, up to this many ranks */
#define COLL_ALLREDUCE_SHORT_MAX (16 * 1024) /* recursive doubling up to this */
#define COLL_REDUCE_SHORT_MAX	 (64 * 1024) /* binomial reduce up to this */
#define COLL_GATHER_TREE_MAX	 2048	     /* binomial gather/scatter: block size */
#define COLL_ALLGATHER_SHORT_MAX (32 * 1024) /* Bruck allgather: total bytes */
#define COLL_ALLTOALL_BRUCK_MAX	 256	     /* Bruck alltoall: block size */
#define COLL_COPY_OVERLAP_MIN	 (64 * 1024) /* own block copied during the exchange */
#define COLL_COPY_PIECE		 (32 * 1024) /* mpil_coll_copy_progress: bytes per piece */

#endif /* MPIL_COLL_INT_H */
