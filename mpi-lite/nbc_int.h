/*
 * nbc_int.h — nonblocking collectives (MPI-3.1 §5.12 and §7.7): the
 * schedule that each MPI_I* call builds and the engine that runs it in
 * the background of every MPI call (nbc.c, where the design is drawn).
 *
 *   nbc.c           schedules: building, starting, progress, completion
 *   nbc_coll.c      MPI_Ibarrier, MPI_Ibcast, MPI_Igather(v), MPI_Iscatter(v)
 *   nbc_blocks.c    MPI_Iallgather(v), MPI_Ialltoall(v/w)
 *   nbc_red.c       MPI_Ireduce, MPI_Iallreduce, MPI_Ireduce_scatter(_block),
 *                   MPI_Iscan, MPI_Iexscan
 *   nbc_neighbor.c  MPI_Ineighbor_allgather(v), MPI_Ineighbor_alltoall(v/w)
 *   comm_idup.c     MPI_Comm_idup(_with_info): an agreement built on call steps
 *   nbc_persist.c   the persistent collectives (MPI_Bcast_init, ...): each
 *                   MPI_Start makes the MPI_I* call's schedule again
 *
 * An entry point checks its arguments as its blocking twin does
 * (coll_check.c), lays the user's buffers out as bytes (coll_layout.c,
 * coll_redbuf.c: packing happens when the call is made), appends the
 * steps of its algorithm to a new schedule and starts it. Peers are ranks
 * of the communicator; every transfer moves bytes.
 */
#ifndef MPIL_NBC_INT_H
#define MPIL_NBC_INT_H

#include "coll_int.h"

/* What a step does when its round starts. */
enum nbc_step_kind {
	NBC_SEND,   /* src, len to peer */
	NBC_RECV,   /* dst, len from peer */
	NBC_COPY,   /* len bytes from src to dst */
	NBC_REDUCE, /* dst = src op dst over n work elements (the schedule's reduction) */
	NBC_UNPACK, /* len packed bytes at src into elements of dt at dst */
	NBC_STORE,  /* work buffer src into n user elements at dst (mpil_coll_red_store) */
	NBC_CALL,   /* fn(schedule, arg): a decision taken on what earlier rounds brought */
};

typedef struct nbc_sched nbc_sched_t;
typedef void (*nbc_fn_t)(nbc_sched_t *s, void *arg);

typedef struct nbc_step {
	uint8_t kind; /* enum nbc_step_kind */
	bool last;    /* the last step of its round */
	int peer;     /* transfers: a rank of the communicator */
	int tag;      /* transfers: the step tag (NBC_STEP_TAGS of them) */
	int n;
	const void *src;
	void *dst;
	size_t len;
	MPI_Datatype dt;
	nbc_fn_t fn; /* NBC_CALL (its argument in dst) */
} nbc_step_t;

/* Step tags within one call: 11 bits (nbc.c, "Matching"). */
#define NBC_STEP_TAGS 2048

/* A new, empty schedule on @comm, which counts as one collective call on
 * it (its sequence number is taken); NULL when out of memory. */
nbc_sched_t *mpil_nbc_new(MPI_Comm comm);

/*
 * Building: steps are appended in order; mpil_nbc_round() ends a round
 * (the steps after it wait until every transfer before it has completed).
 * Within a round, local steps run in order with the posting of its
 * transfers, so a local step must not touch a buffer that a transfer of
 * its own round moves (unpack and store end the round first if it has
 * transfers: they act on what arrives). Out of memory is remembered and reported by
 * mpil_nbc_start, so the builders need not check each call.
 */
void mpil_nbc_send(nbc_sched_t *s, const void *buf, size_t len, int peer, int tag);
void mpil_nbc_recv(nbc_sched_t *s, void *buf, size_t len, int peer, int tag);
void mpil_nbc_copy(nbc_sched_t *s, void *dst, const void *src, size_t len);
/* (the schedule holds @dt until it ends: the user may free it) */
void mpil_nbc_unpack(nbc_sched_t *s, MPI_Datatype dt, const void *packed, size_t len, void *ubuf);
void mpil_nbc_round(nbc_sched_t *s);

/*
 * A step that calls @fn(s, @arg) in a round of its own, after every
 * transfer before it has completed: a schedule whose next rounds depend
 * on what arrived (MPI_Comm_idup's agreement, comm_idup.c). @fn may append
 * steps — they run after it — or fail the schedule (mpil_nbc_fail); a
 * round it appends moves at most NBC_INLINE_RQ transfers.
 */
void mpil_nbc_call(nbc_sched_t *s, nbc_fn_t fn, void *arg);
/* @fn(s, @arg) runs once when @s ends, however it ends (built but never
 * started, failed, or complete), before its temporaries are freed; it may
 * still set the error class the request completes with (mpil_nbc_fail). */
void mpil_nbc_on_end(nbc_sched_t *s, nbc_fn_t fn, void *arg);
/* A number that the schedule's members share and no other schedule
 * running on its communicator has. */
uint32_t mpil_nbc_id(const nbc_sched_t *s);

/* A temporary of @len bytes freed with the schedule; NULL when out of
 * memory (remembered). */
void *mpil_nbc_tmp(nbc_sched_t *s, size_t len);
/* @mem (malloc'ed, may be NULL) is freed with the schedule. */
void mpil_nbc_keep(nbc_sched_t *s, void *mem);
/* Remembers an error of the building (MPI_ERR_NO_MEM). */
void mpil_nbc_fail(nbc_sched_t *s, int err);

/* Reductions: the schedule's reduction is @io (its op copied: the user
 * may free it; its types held). Work buffers as in coll_int.h. */
void mpil_nbc_red_set(nbc_sched_t *s, const coll_red_io_t *io);
const coll_red_t *mpil_nbc_rd(const nbc_sched_t *s);
/* A work temporary of @n elements (NULL when out of memory, remembered). */
void *mpil_nbc_red_tmp(nbc_sched_t *s, int n);
void mpil_nbc_reduce(nbc_sched_t *s, const void *in, void *inout, int n);
void mpil_nbc_red_send(nbc_sched_t *s, const void *buf, int n, int peer, int tag);
void mpil_nbc_red_recv(nbc_sched_t *s, void *buf, int n, int peer, int tag);
void mpil_nbc_red_copy(nbc_sched_t *s, void *dst, const void *src, int n);
void mpil_nbc_store(nbc_sched_t *s, const void *w, void *ubuf, int count);

/* Starts @s and hands its request to the user (*req_p). A building error
 * is reported through the communicator's handler (and @s freed); a
 * transfer that fails later completes the request with the error. */
int mpil_nbc_start(nbc_sched_t *s, const char *fname, MPI_Request *req_p);
/* A call with nothing to move: a request complete at once (it still
 * counts as a call on @comm). */
int mpil_nbc_nothing(MPI_Comm comm, const char *fname, MPI_Request *req_p);

/* For the persistent collectives (nbc_persist.c): until the next call,
 * mpil_nbc_start only checks what was built (@dry: MPI_*_init), or starts
 * the schedule on the persistent request @into (MPI_Start) instead of a
 * new one, with the sequence number *@seq rather than a new one: the
 * members match persistent collectives in the order of their inits, and
 * may start them in any order (MPI-4.0 §6.13). Ending a dry run, (false,
 * NULL, &seq) returns the number it took. (false, NULL, NULL) is the
 * normal state. */
void mpil_nbc_redirect(bool dry, mpil_request_t *into, uint32_t *seq);

/* The checks that every MPI_I* call starts with. */
int mpil_nbc_check(MPI_Comm comm, MPI_Request *req_p, const char *fname);

/* MPI_Finalize: waits for the schedules still running (requests freed by
 * the user while active), then drops the cached ones. */
void mpil_nbc_fini(void);

/* ---- shared by the builders ------------------------------------------------------------------ */

/* This rank's place in the binomial tree of @p ranks rooted at @root: its
 * parent (-1 at the root) and its children, the largest subtree first.
 * Counted from the root (v = (rank - root) mod p), the child v + 2^j
 * heads the subtree v + 2^j ... v + 2^(j+1) - 1 (cut at p). Returns how
 * many children. */
static inline int mpil_nbc_tree(int p, int r, int root, int *parent_p, int child[32])
{
	int vr = (r - root + p) % p, mask = 1, n = 0;

	*parent_p = -1;
	for (; mask < p; mask <<= 1) {
		if (vr & mask) {
			*parent_p = (vr - mask + root) % p;
			break;
		}
	}
	for (mask >>= 1; mask > 0; mask >>= 1)
		if (vr + mask < p)
			child[n++] = (vr + mask + root) % p;
	return n;
}

/* Receives the blocks of @recv[nr] and sends those of @send[ns] in one
 * round (typed, packed when the call is made, unpacked at the end): the
 * exchange of MPI_Ialltoallw and the neighbourhood collectives. Block
 * tags are step tags. */
void mpil_nbc_exchange(nbc_sched_t *s, const coll_xblk_t *send, int ns, const coll_xblk_t *recv,
		       int nr);

#endif /* MPIL_NBC_INT_H */
