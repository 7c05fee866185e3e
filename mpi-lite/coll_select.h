/*
 * coll_select.h — which algorithm a collective runs: one table
 * (coll_select.c) maps the collective, its size and properties of the call
 * and the communicator to an algorithm. It is the one source of truth: the
 * dispatchers of the algorithm files (coll_<family>.c) ask it on every call
 * and run what it names, MPI_Init logs it on rank 0 (IBX_LOG=info) and
 * `ibtest info` prints it.
 *
 * Self-contained on purpose (plain C and the engine's logging, no MPI
 * object): ibtest links coll_select.c without the rest of mpi-lite, and the
 * unit test compiles it alone.
 */
#ifndef MPIL_COLL_SELECT_H
#define MPIL_COLL_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The collectives with a choice of algorithm (Reduce_scatter_block is
 * Reduce_scatter with equal blocks). */
typedef enum mpil_coll_op {
	MPIL_COLL_BARRIER,
	MPIL_COLL_BCAST,
	MPIL_COLL_REDUCE,
	MPIL_COLL_ALLREDUCE,
	MPIL_COLL_REDUCE_SCATTER,
	MPIL_COLL_SCAN,
	MPIL_COLL_EXSCAN,
	MPIL_COLL_GATHER,
	MPIL_COLL_GATHERV,
	MPIL_COLL_SCATTER,
	MPIL_COLL_SCATTERV,
	MPIL_COLL_ALLGATHER,
	MPIL_COLL_ALLGATHERV,
	MPIL_COLL_ALLTOALL,
	MPIL_COLL_ALLTOALLV,
	MPIL_COLL_NOPS
} mpil_coll_op_t;

/* The algorithms; what each one is for a given collective is said in the
 * header comment of its family's file. */
typedef enum mpil_coll_alg {
	MPIL_COLL_ALG_NONE,	      /* no row matched: a hole in the table */
	MPIL_COLL_ALG_NODE_AWARE,     /* phases inside the nodes and among them */
	MPIL_COLL_ALG_DISSEMINATION,  /* barrier */
	MPIL_COLL_ALG_BINOMIAL,	      /* bcast, reduce, gather, scatter */
	MPIL_COLL_ALG_LINEAR,	      /* bcast, gather(v), scatter(v): the root to each;
				       * alltoall: every block at once */
	MPIL_COLL_ALG_SCATTER_RING,   /* bcast: scatter + ring allgather */
	MPIL_COLL_ALG_RS_GATHER,      /* reduce: ring reduce-scatter + gather */
	MPIL_COLL_ALG_PAIR,	      /* allreduce: one exchange + local op */
	MPIL_COLL_ALG_REC_DOUBLING,   /* allreduce, scan, exscan */
	MPIL_COLL_ALG_RABENSEIFNER,   /* allreduce: halving + doubling */
	MPIL_COLL_ALG_RING,	      /* reduce-scatter, allgather(v) */
	MPIL_COLL_ALG_REDUCE_SCATTER, /* reduce-scatter: reduce to 0 + scatter */
	MPIL_COLL_ALG_BRUCK,	      /* allgather, alltoall */
	MPIL_COLL_ALG_PAIRWISE,	      /* alltoall(v) */
	MPIL_COLL_ALG_FAN,	      /* barrier: all to rank 0, rank 0 to all */
	MPIL_COLL_NALGS
} mpil_coll_alg_t;

/* Properties of a call, the same on every rank of the group (so every
 * rank picks the same algorithm). */
enum {
	MPIL_COLL_SPANS_NODES = 1u << 0, /* node-aware algorithms apply: the
					  * communicator spans nodes */
	MPIL_COLL_ONE_NODE = 1u << 1,	 /* every member is on one node */
	MPIL_COLL_OVERSUB = 1u << 2,	 /* some node has more ranks than CPUs */
	MPIL_COLL_COMMUTE = 1u << 3,	 /* the reduction's op is commutative */
	MPIL_COLL_PREDEF = 1u << 4,	 /* predefined work elements (not a
					  * derived type with a user op) */
	MPIL_COLL_SAME_BLOCKS = 1u << 5, /* send block = receive block */
	MPIL_COLL_SPLITS = 1u << 6,	 /* count >= p (the selector sets it) */
};

typedef struct mpil_coll_query {
	mpil_coll_op_t op;
	int p;		 /* ranks of the group */
	size_t bytes;	 /* n: what the collective's sizes measure (its row) */
	long long count; /* elements (Bcast: bytes), for "count >= p" */
	unsigned props;	 /* MPIL_COLL_* above */
} mpil_coll_query_t;

/* The algorithm of the first row of @q->op whose conditions hold. */
mpil_coll_alg_t mpil_coll_select(const mpil_coll_query_t *q);

/* The last answer per collective: programs call a collective with the same
 * group and sizes again and again, and an 8-byte collective costs less
 * than 100 ns, so the table walk is skipped when nothing changed. (mpi-lite
 * serialises its callers: under MPI_THREAD_MULTIPLE its critical section,
 * thread.c, and no collective waits between reading and writing a memo.) */
typedef struct mpil_coll_memo {
	int p;
	unsigned props;
	size_t bytes;
	long long count;
	mpil_coll_alg_t alg; /* MPIL_COLL_ALG_NONE: empty */
} mpil_coll_memo_t;
extern mpil_coll_memo_t mpil_coll_memo[MPIL_COLL_NOPS];

static inline mpil_coll_alg_t mpil_coll_choose(const mpil_coll_query_t *q)
{
	mpil_coll_memo_t *m = &mpil_coll_memo[q->op];

	if (m->alg != MPIL_COLL_ALG_NONE && m->p == q->p && m->bytes == q->bytes &&
	    m->count == q->count && m->props == q->props)
		return m->alg;
	*m = (mpil_coll_memo_t){q->p, q->props, q->bytes, q->count, mpil_coll_select(q)};
	return m->alg;
}
const char *mpil_coll_alg_name(mpil_coll_alg_t alg);
const char *mpil_coll_op_name(mpil_coll_op_t op);

/* The table as text: a legend, then one line per row. */
void mpil_coll_select_print(FILE *f);
/* The same through the engine's log at level info (nothing when the level
 * is lower), headed by what MPI_COMM_WORLD's calls see: @p ranks and
 * @world_props. */
void mpil_coll_select_log(int p, unsigned world_props);

#endif /* MPIL_COLL_SELECT_H */
