/*
 * nbc.c — the engine of the nonblocking collectives: each MPI_I* call
 * builds a schedule, and the schedule runs round by round in the
 * background of whatever MPI call the process makes next.
 *
 * A schedule is a list of steps cut into rounds (as in Open MPI's libnbc and
 * MPICH's MPIR_Sched): transfers (a nonblocking send or receive of
 * bytes on the collective context) and local steps (copy, reduce, unpack
 * into the user's type, store a reduction's work buffer, or call a
 * function that decides on what arrived and may append rounds:
 * MPI_Comm_idup's agreement). The MPI_I* call
 * builds it whole — every buffer known, temporaries allocated, send data
 * packed — and starts its first round before it returns:
 *
 *   MPI_Iallreduce ─► checks ─► build ─► round 0 starts ─► request to the user
 *
 *   round k starts: its steps in order — local ones run, transfers are posted
 *   round k ends:   every transfer it posted has completed ─► round k + 1 starts
 *   last round ends ─► temporaries freed, request complete (error class kept)
 *
 * e.g. MPI_Iallreduce, 4 ranks, rank 1 (recursive doubling, nbc_red.c):
 *
 *   round 0:  send acc ─► 0,  recv tmp ◄─ 0
 *   round 1:  acc = tmp op acc;  send acc ─► 3,  recv tmp ◄─ 3
 *   round 2:  tmp = acc op tmp (rank 3's part goes right of ours);  copy tmp ─► recvbuf
 *
 * Progress. Every MPI call that waits or tests — MPI_Wait on anything,
 * MPI_Test, MPI_Iprobe, a blocking send or receive, a blocking collective
 * — drives the engine through ibx_progress(), and so does the engine
 * itself when it waits for resources. While a schedule is running, this
 * file hangs nbc_progress() on it (ibx_progress_hook_set): after the paths
 * have moved, the hook completes the rounds whose transfers are done and
 * starts the next ones, for every running schedule, oldest first. No
 * schedule needs its own request to be waited for. The transfers the hook
 * starts call ibx_progress in turn; a nested call is ignored.
 *
 * Matching. Transfers use the collective context (cid | 1, as the
 * blocking collectives), so user messages never meet them, with tags that
 * the blocking collectives never use (theirs are small, coll_int.h):
 *
 *   bit 31       1: a nonblocking collective
 *   bits 30..11  the call's sequence number on its communicator
 *                (comm->coll_seq: every member numbers its nonblocking
 *                collectives in the order it starts them, which MPI makes
 *                the same order everywhere)
 *   bits 10..0   the step tag, which the algorithm chooses (NBC_STEP_TAGS)
 *
 * so collectives in flight at once on one communicator never take each
 * other's messages, whatever order their rounds run in, and no blocking
 * collective started later takes theirs. 2^20 calls must be in flight
 * before a number comes round again.
 *
 * Requests (request.c): MPIL_REQ_NBC, held by the schedule until it
 * completes (ibx.completed, error class in preset.MPI_ERROR); the status
 * it gives is empty. MPI_Cancel on it is an error (MPI-3.1 §5.12 makes it
 * erroneous; Open MPI answers MPI_ERR_REQUEST, as here) and leaves it
 * running; MPI_Request_free lets it finish in the background, and
 * MPI_Finalize waits for such orphans before its closing barrier.
 *
 * Length: just over 700 lines: building, running and completing a schedule
 * are one state machine over one structure; the algorithms are elsewhere
 * (nbc_coll.c, nbc_blocks.c, nbc_red.c, nbc_neighbor.c, comm_idup.c).
 */
#include "nbc_int.h"

#define NBC_TAG_NB	 0x80000000u
#define NBC_SEQ_MASK	 0xfffffu /* 20 bits */
#define NBC_STEP_BITS	 11	  /* log2(NBC_STEP_TAGS) */
#define NBC_INLINE_STEPS 16	  /* a small schedule needs no allocation for its steps */
#define NBC_INLINE_RQ	 8	  /* nor for the transfers of a round */
#define NBC_CACHE	 8	  /* finished schedules kept for the next calls */

struct nbc_sched {
	MPI_Comm comm;
	mpil_request_t *req; /* the user's, once started */
	uint32_t tag_base;   /* NBC_TAG_NB | sequence number << NBC_STEP_BITS */
	int err;	     /* the first error (MPI class) */
	/* the steps: all of them, in order */
	nbc_step_t *steps;
	int nsteps, cap;
	int next; /* the first step not run yet */
	/* building: transfers in the current round, and the most in any */
	int posts, maxposts;
	/* the transfers of the round under way: [ndone, nrq) may be pending */
	ibx_request_t *rq;
	int nrq, ndone, rqcap;
	/* called once when the schedule ends (mpil_nbc_on_end) */
	nbc_fn_t end_fn;
	void *end_arg;
	/* what is freed or released when the schedule ends */
	void **mem;
	int nmem, memcap;
	void **dts; /* MPI_Datatype */
	int ndts, dtcap;
	/* reductions: the user's buffers and types, with a copy of the op */
	coll_red_io_t io;
	struct mpil_op op;
	struct nbc_sched *prev, *next_active; /* the running list / the cache */
	nbc_step_t step0[NBC_INLINE_STEPS];
	ibx_request_t rq0[NBC_INLINE_RQ];
};

static struct {
	nbc_sched_t *head, *tail; /* running, oldest first */
	nbc_sched_t *cache;	  /* finished, for reuse */
	int ncache;
	bool busy; /* a schedule is being run: ignore nested progress */
	/* persistent collectives (mpil_nbc_redirect) */
	bool dry;	      /* build and check, do not start */
	mpil_request_t *into; /* start on this request */
	uint32_t seq;	      /* ... with this sequence number (the one its init took) */
} nbc;

/* ---- owned memory ---------------------------------------------------------------------------- */

/* Appends @p to the growable array *arr_p; false when out of memory. */
static bool ptr_push(void ***arr_p, int *n_p, int *cap_p, void *p)
{
	if (*n_p == *cap_p) {
		int cap = *cap_p ? 2 * *cap_p : 8;
		void **a = realloc(*arr_p, (size_t)cap * sizeof(*a));

		if (!a)
			return false;
		*arr_p = a;
		*cap_p = cap;
	}
	(*arr_p)[(*n_p)++] = p;
	return true;
}

void mpil_nbc_fail(nbc_sched_t *s, int err)
{
	if (s->err == MPI_SUCCESS)
		s->err = err;
}

void mpil_nbc_keep(nbc_sched_t *s, void *mem)
{
	if (mem && !ptr_push(&s->mem, &s->nmem, &s->memcap, mem)) {
		free(mem);
		mpil_nbc_fail(s, MPI_ERR_NO_MEM);
	}
}

void *mpil_nbc_tmp(nbc_sched_t *s, size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p)
		mpil_nbc_fail(s, MPI_ERR_NO_MEM);
	mpil_nbc_keep(s, p);
	return p;
}

static void nbc_hold(nbc_sched_t *s, MPI_Datatype dt)
{
	if (!dt || (dt->flags & MPIL_DTF_PREDEFINED))
		return;
	if (!ptr_push(&s->dts, &s->ndts, &s->dtcap, dt)) {
		mpil_nbc_fail(s, MPI_ERR_NO_MEM);
		return;
	}
	mpil_dt_retain(dt);
}

/* ---- schedules: life ------------------------------------------------------------------------- */

/* The end hook, once. */
static void sched_end(nbc_sched_t *s)
{
	nbc_fn_t fn = s->end_fn;

	s->end_fn = NULL;
	if (fn)
		fn(s, s->end_arg);
}

/* Frees what @s owns and keeps it for the next call (or frees it). */
static void sched_free(nbc_sched_t *s)
{
	sched_end(s);
	for (int i = 0; i < s->nmem; i++)
		free(s->mem[i]);
	for (int i = 0; i < s->ndts; i++)
		mpil_dt_release((MPI_Datatype)s->dts[i]);
	s->nmem = s->ndts = 0;
	if (s->steps != s->step0)
		free(s->steps);
	if (s->rq != s->rq0)
		free(s->rq);
	s->steps = s->step0;
	s->rq = s->rq0;
	if (nbc.ncache < NBC_CACHE) {
		s->next_active = nbc.cache;
		nbc.cache = s;
		nbc.ncache++;
		return;
	}
	free(s->mem);
	free(s->dts);
	free(s);
}

nbc_sched_t *mpil_nbc_new(MPI_Comm comm)
{
	/* taken even when memory is short: the members' numbers stay in step;
	 * a persistent collective keeps the one its init took */
	uint32_t seq = nbc.into ? nbc.seq : comm->coll_seq++;
	nbc_sched_t *s = nbc.cache;

	nbc.seq = seq;
	if (s) {
		nbc.cache = s->next_active;
		nbc.ncache--;
	} else {
		s = malloc(sizeof(*s));
		if (!s)
			return NULL;
		s->mem = NULL;
		s->dts = NULL;
		s->memcap = s->dtcap = 0;
		s->nmem = s->ndts = 0;
		s->steps = s->step0;
		s->rq = s->rq0;
	}
	s->comm = comm;
	s->req = NULL;
	s->tag_base = NBC_TAG_NB | ((seq & NBC_SEQ_MASK) << NBC_STEP_BITS);
	s->err = MPI_SUCCESS;
	s->cap = NBC_INLINE_STEPS;
	s->nsteps = s->next = 0;
	s->posts = s->maxposts = 0;
	s->nrq = s->ndone = 0;
	s->rqcap = NBC_INLINE_RQ;
	s->end_fn = NULL;
	s->prev = s->next_active = NULL;
	return s;
}

/* ---- building -------------------------------------------------------------------------------- */

static bool steps_grow(nbc_sched_t *s)
{
	int cap = 2 * s->cap;
	nbc_step_t *st;

	if (s->steps == s->step0) {
		st = malloc((size_t)cap * sizeof(*st));
		if (st)
			memcpy(st, s->step0, sizeof(s->step0));
	} else {
		st = realloc(s->steps, (size_t)cap * sizeof(*st));
	}
	if (!st)
		return false;
	s->steps = st;
	s->cap = cap;
	return true;
}

/* A new step of @kind at the end, zeroed; NULL when out of memory. */
static nbc_step_t *step_add(nbc_sched_t *s, int kind)
{
	nbc_step_t *st;

	if (s->nsteps == s->cap && !steps_grow(s)) {
		mpil_nbc_fail(s, MPI_ERR_NO_MEM);
		return NULL;
	}
	st = &s->steps[s->nsteps++];
	*st = (nbc_step_t){.kind = (uint8_t)kind};
	return st;
}

static void xfer_add(nbc_sched_t *s, int kind, const void *src, void *dst, size_t len, int peer,
		     int tag)
{
	nbc_step_t *st;

	if (peer == MPI_PROC_NULL || !(st = step_add(s, kind)))
		return;
	st->src = src;
	st->dst = dst;
	st->len = len;
	st->peer = peer;
	st->tag = tag & (NBC_STEP_TAGS - 1);
	s->posts++;
}

void mpil_nbc_send(nbc_sched_t *s, const void *buf, size_t len, int peer, int tag)
{
	xfer_add(s, NBC_SEND, buf, NULL, len, peer, tag);
}

void mpil_nbc_recv(nbc_sched_t *s, void *buf, size_t len, int peer, int tag)
{
	xfer_add(s, NBC_RECV, NULL, buf, len, peer, tag);
}

void mpil_nbc_copy(nbc_sched_t *s, void *dst, const void *src, size_t len)
{
	nbc_step_t *st;

	if (len == 0 || dst == src || !(st = step_add(s, NBC_COPY)))
		return;
	st->src = src;
	st->dst = dst;
	st->len = len;
}

void mpil_nbc_unpack(nbc_sched_t *s, MPI_Datatype dt, const void *packed, size_t len, void *ubuf)
{
	nbc_step_t *st;

	if (len == 0)
		return;
	if (s->posts > 0)
		mpil_nbc_round(s); /* it unpacks what the round receives */
	if (!(st = step_add(s, NBC_UNPACK)))
		return;
	st->src = packed;
	st->dst = ubuf;
	st->len = len;
	st->dt = dt;
	nbc_hold(s, dt);
}

void mpil_nbc_round(nbc_sched_t *s)
{
	if (s->nsteps == 0 || s->steps[s->nsteps - 1].last)
		return;
	s->steps[s->nsteps - 1].last = true;
	if (s->posts > s->maxposts)
		s->maxposts = s->posts;
	s->posts = 0;
}

void mpil_nbc_call(nbc_sched_t *s, nbc_fn_t fn, void *arg)
{
	nbc_step_t *st;

	mpil_nbc_round(s);
	if (!(st = step_add(s, NBC_CALL)))
		return;
	st->fn = fn;
	st->dst = arg;
	mpil_nbc_round(s);
}

void mpil_nbc_on_end(nbc_sched_t *s, nbc_fn_t fn, void *arg)
{
	s->end_fn = fn;
	s->end_arg = arg;
}

uint32_t mpil_nbc_id(const nbc_sched_t *s)
{
	return s->tag_base;
}

/* ---- building reductions --------------------------------------------------------------------- */

void mpil_nbc_red_set(nbc_sched_t *s, const coll_red_io_t *io)
{
	s->io = *io;
	s->op = *io->rd.op;
	s->io.rd.op = &s->op;
	nbc_hold(s, io->udt);
	nbc_hold(s, io->rd.dt);
}

const coll_red_t *mpil_nbc_rd(const nbc_sched_t *s)
{
	return &s->io.rd;
}

void *mpil_nbc_red_tmp(nbc_sched_t *s, int n)
{
	void *base, *w = mpil_coll_red_alloc(&s->io.rd, n, &base);

	if (!w)
		mpil_nbc_fail(s, MPI_ERR_NO_MEM);
	mpil_nbc_keep(s, base);
	return w;
}

void mpil_nbc_reduce(nbc_sched_t *s, const void *in, void *inout, int n)
{
	nbc_step_t *st;

	if (n <= 0 || !(st = step_add(s, NBC_REDUCE)))
		return;
	st->src = in;
	st->dst = inout;
	st->n = n;
}

void mpil_nbc_red_send(nbc_sched_t *s, const void *buf, int n, int peer, int tag)
{
	const coll_red_t *rd = &s->io.rd;

	mpil_nbc_send(s, red_first(rd, (void *)buf), red_span(rd, n), peer, tag);
}

void mpil_nbc_red_recv(nbc_sched_t *s, void *buf, int n, int peer, int tag)
{
	const coll_red_t *rd = &s->io.rd;

	mpil_nbc_recv(s, red_first(rd, buf), red_span(rd, n), peer, tag);
}

void mpil_nbc_red_copy(nbc_sched_t *s, void *dst, const void *src, int n)
{
	const coll_red_t *rd = &s->io.rd;

	if (dst != src)
		mpil_nbc_copy(s, red_first(rd, dst), red_first(rd, (void *)src), red_span(rd, n));
}

void mpil_nbc_store(nbc_sched_t *s, const void *w, void *ubuf, int count)
{
	nbc_step_t *st;

	if (count <= 0)
		return;
	if (s->posts > 0)
		mpil_nbc_round(s); /* it stores what the round receives */
	if (!(st = step_add(s, NBC_STORE)))
		return;
	st->src = w;
	st->dst = ubuf;
	st->n = count;
}

/* ---- running --------------------------------------------------------------------------------- */

static void xfer_start(nbc_sched_t *s, const nbc_step_t *st)
{
	ibx_request_t *q = &s->rq[s->nrq];
	ibx_tag_t tag =
	    ((ibx_tag_t)mpil_coll_cid(s->comm) << 32) | (s->tag_base | (uint32_t)st->tag);
	int world = mpil_comm_to_world(s->comm, st->peer);
	ibx_status_t rc;

	if (s->nrq == s->rqcap) { /* a round appended by a call step: too wide */
		mpil_nbc_fail(s, MPI_ERR_INTERN);
		return;
	}
	q->cb = NULL;
	if (st->kind == NBC_SEND)
		rc = ibx_tag_send(mpil_g.ctx, world, st->src, st->len, tag, 0, q);
	else
		rc = ibx_tag_recv(mpil_g.ctx, world, st->dst, st->len, tag, MPIL_MASK_TAG, q);
	if (rc < 0)
		mpil_nbc_fail(s, mpil_err_from_ibx(rc));
	else
		s->nrq++;
}

static void step_run(nbc_sched_t *s, const nbc_step_t *st)
{
	switch (st->kind) {
	case NBC_SEND:
	case NBC_RECV: xfer_start(s, st); break;
	case NBC_COPY: memcpy(st->dst, st->src, st->len); break;
	case NBC_REDUCE: red_apply(&s->io.rd, st->src, st->dst, st->n); break;
	case NBC_UNPACK: mpil_dt_unpack(st->dt, st->src, st->len, st->dst); break;
	case NBC_STORE:
		mpil_nbc_fail(s, mpil_coll_red_store(&s->io, st->src, st->dst, st->n));
		break;
	case NBC_CALL: st->fn(s, st->dst); break;
	default: mpil_nbc_fail(s, MPI_ERR_INTERN); break;
	}
}

/* After an error: receives of the round that have not matched are
 * withdrawn; the rest is waited for (their buffers are in use). */
static void round_abandon(nbc_sched_t *s)
{
	for (int i = s->ndone; i < s->nrq; i++)
		if (!s->rq[i].completed && s->rq[i].kind == IBX_REQ_RECV)
			(void)ibx_request_cancel(mpil_g.ctx, &s->rq[i]);
}

static void round_start(nbc_sched_t *s)
{
	s->nrq = s->ndone = 0;
	while (s->next < s->nsteps) {
		/* a copy: a call step may append steps, moving the array */
		nbc_step_t st = s->steps[s->next++];

		step_run(s, &st);
		if (s->err != MPI_SUCCESS) {
			round_abandon(s);
			return;
		}
		if (st.last)
			return;
	}
}

/* Have all transfers of the round under way completed? Collects their
 * errors. */
static bool round_done(nbc_sched_t *s)
{
	while (s->ndone < s->nrq) {
		ibx_request_t *q = &s->rq[s->ndone];

		if (!__atomic_load_n(&q->completed, __ATOMIC_ACQUIRE))
			return false;
		if (q->status != IBX_OK)
			mpil_nbc_fail(s, mpil_err_from_ibx(q->status));
		s->ndone++;
	}
	return true;
}

/* Runs @s as far as it goes without waiting. Returns how many rounds
 * moved (events, for ibx_progress); *done_p when nothing is left. */
static int sched_advance(nbc_sched_t *s, bool *done_p)
{
	int moved = 0;

	*done_p = false;
	while (round_done(s)) {
		if (s->err != MPI_SUCCESS || s->next == s->nsteps) {
			*done_p = true;
			return moved + 1;
		}
		round_start(s);
		moved++;
	}
	return moved;
}

/* The user's request completes with the schedule's error class. */
static void sched_complete(nbc_sched_t *s)
{
	mpil_request_t *r = s->req;
	int err;

	sched_end(s);
	err = s->err;
	sched_free(s);
	r->preset.MPI_ERROR = err;
	r->ibx.status = IBX_OK;
	__atomic_store_n(&r->ibx.completed, 1, __ATOMIC_RELEASE);
}

static int nbc_progress(ibx_ctx_t *ctx, void *arg);

static void active_push(nbc_sched_t *s)
{
	s->prev = nbc.tail;
	s->next_active = NULL;
	if (nbc.tail)
		nbc.tail->next_active = s;
	else
		nbc.head = s;
	nbc.tail = s;
	if (nbc.head == s)
		ibx_progress_hook_set(mpil_g.ctx, nbc_progress, NULL);
}

static void active_remove(nbc_sched_t *s)
{
	if (s->prev)
		s->prev->next_active = s->next_active;
	else
		nbc.head = s->next_active;
	if (s->next_active)
		s->next_active->prev = s->prev;
	else
		nbc.tail = s->prev;
	if (!nbc.head)
		ibx_progress_hook_set(mpil_g.ctx, NULL, NULL);
}

/* The progress hook: every running schedule, oldest first. */
static int nbc_progress(ibx_ctx_t *ctx, void *arg)
{
	nbc_sched_t *s, *next;
	int moved = 0;

	if (nbc.busy)
		return 0;
	nbc.busy = true;
	for (s = nbc.head; s; s = next) {
		bool done;

		next = s->next_active;
		moved += sched_advance(s, &done);
		if (done) {
			active_remove(s);
			sched_complete(s);
		}
	}
	nbc.busy = false;
	return moved;
}

void mpil_nbc_redirect(bool dry, mpil_request_t *into, uint32_t *seq)
{
	nbc.dry = dry;
	nbc.into = into;
	if (into)
		nbc.seq = *seq;
	else if (seq)
		*seq = nbc.seq; /* the one the dry run took */
}

int mpil_nbc_start(nbc_sched_t *s, const char *fname, MPI_Request *req_p)
{
	MPI_Comm comm = s->comm;
	mpil_request_t *r = NULL;
	bool busy = nbc.busy, done;

	if (nbc.dry) { /* a persistent collective's init: the checks only */
		int err = s->err;

		sched_free(s);
		return err == MPI_SUCCESS ? MPI_SUCCESS : mpil_coll_failed(comm, err, fname);
	}

	mpil_nbc_round(s);
	if (s->err == MPI_SUCCESS && s->maxposts > NBC_INLINE_RQ) {
		s->rq = malloc((size_t)s->maxposts * sizeof(*s->rq));
		if (!s->rq) {
			s->rq = s->rq0;
			mpil_nbc_fail(s, MPI_ERR_NO_MEM);
		} else {
			s->rqcap = s->maxposts;
		}
	}
	if (s->err == MPI_SUCCESS && !(r = nbc.into ? nbc.into : mpil_req_alloc()))
		mpil_nbc_fail(s, MPI_ERR_NO_MEM);
	if (s->err != MPI_SUCCESS) {
		int err = s->err;

		sched_free(s);
		return mpil_coll_failed(comm, err, fname);
	}
	r->kind = MPIL_REQ_NBC;
	r->preset.MPI_ERROR = MPI_SUCCESS;
	if (r == nbc.into) /* a persistent request, which holds its communicator */
		__atomic_store_n(&r->ibx.completed, 0, __ATOMIC_RELAXED);
	else
		mpil_req_hold(r, comm, NULL);
	s->req = r;
	*req_p = r;
	/* the first rounds at once (a nested ibx_progress leaves the others be) */
	nbc.busy = true;
	sched_advance(s, &done);
	nbc.busy = busy;
	if (done)
		sched_complete(s);
	else
		active_push(s);
	return MPI_SUCCESS;
}

int mpil_nbc_nothing(MPI_Comm comm, const char *fname, MPI_Request *req_p)
{
	nbc_sched_t *s = mpil_nbc_new(comm);

	if (!s)
		return mpil_coll_failed(comm, MPI_ERR_NO_MEM, fname);
	return mpil_nbc_start(s, fname, req_p);
}

int mpil_nbc_check(MPI_Comm comm, MPI_Request *req_p, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	MPIL_CHECK(mpil_check_comm(comm, fname));
	if (ibx_unlikely(!req_p))
		return mpil_err(comm, MPI_ERR_ARG, fname, "request is NULL");
	return MPI_SUCCESS;
}

void mpil_nbc_fini(void)
{
	unsigned idle = 0;

	while (nbc.head)
		ibx_progress_wait(mpil_g.ctx, &idle);
	while (nbc.cache) {
		nbc_sched_t *s = nbc.cache;

		nbc.cache = s->next_active;
		free(s->mem);
		free(s->dts);
		free(s);
	}
	nbc.ncache = 0;
}

/* ---- the block exchange ---------------------------------------------------------------------- */

void mpil_nbc_exchange(nbc_sched_t *s, const coll_xblk_t *send, int ns, const coll_xblk_t *recv,
		       int nr)
{
	char **land = calloc((size_t)nr + 1, sizeof(*land));
	void *tmp;

	if (!land) {
		mpil_nbc_fail(s, MPI_ERR_NO_MEM);
		return;
	}
	for (int i = 0; i < nr; i++) {
		const coll_xblk_t *b = &recv[i];

		if (b->peer == MPI_PROC_NULL)
			continue;
		land[i] = mpil_coll_tb_write(b->buf, b->count, b->dt, &tmp);
		mpil_nbc_keep(s, tmp);
		if (!land[i])
			mpil_nbc_fail(s, MPI_ERR_NO_MEM);
		mpil_nbc_recv(s, land[i], coll_tbytes(b->count, b->dt), b->peer, b->tag);
	}
	for (int i = 0; i < ns; i++) {
		const coll_xblk_t *b = &send[i];
		const char *p;

		if (b->peer == MPI_PROC_NULL)
			continue;
		p = mpil_coll_tb_read(b->buf, b->count, b->dt, &tmp);
		mpil_nbc_keep(s, tmp);
		if (!p)
			mpil_nbc_fail(s, MPI_ERR_NO_MEM);
		mpil_nbc_send(s, p, coll_tbytes(b->count, b->dt), b->peer, b->tag);
	}
	mpil_nbc_round(s);
	for (int i = 0; i < nr; i++)
		if (land[i] && !mpil_dt_contig(recv[i].dt))
			mpil_nbc_unpack(s, recv[i].dt, land[i],
					coll_tbytes(recv[i].count, recv[i].dt), recv[i].buf);
	free(land);
}
