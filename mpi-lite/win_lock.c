/*
 * win_lock.c — the words of a window member's control block (win_int.h)
 * and what is built on them: the passive-target reader-writer lock, the
 * accumulate lock, and the one waiting loop of the window's
 * synchronisation (mpil_win_wait_until; it lives here because it backs off
 * exactly when the polls it drives went over the network).
 *
 * Reaching a word: a member's control block comes from ibx_mem_alloc, so
 * when it is mapped here (t->ctl_local: this process, or a node-local
 * member on the shared-memory path) a word is a plain atomic load or a CPU
 * atomic; otherwise it is ibx_get / ibx_atomic on the block's key, waited
 * for. (When verbs peers update a block with the NIC's atomics, the engine
 * does not map it, not even for its owner: CPU atomics would not be atomic
 * with the NIC's.) Either way the member itself takes no part.
 *
 * The lock (MPI_Win_lock): the phase-fair ticket lock of [Brandenburg10]
 * on words LOCK_RIN, LOCK_ROUT, LOCK_WIN, LOCK_WOUT, drawn and reasoned
 * about in win_lock_pf.h, whose step machine this file drives:
 *
 *      origin                                   target's control block
 *      ──────                                   ──────────────────────
 *      shared:     FADD(RIN, 0x100) ───────────► RIN  readers in | phase
 *                  [poll RIN while phase = w]
 *      exclusive:  FADD(WIN, 1) ───────────────► WIN  tickets taken
 *                  [poll WOUT until = ticket] ◄── WOUT tickets served
 *                  FADD(RIN, PRES|PHID) ───────► RIN
 *                  [poll ROUT until = RIN seen] ◄ ROUT readers out
 *
 * An uncontended shared lock costs one atomic, an exclusive one two atomics
 * and two reads; release is one atomic (shared) or two. What the release
 * needs (the writer's phase bits) stays in t->lock_state.
 *
 * The accumulate lock (ACC_LOCK): test, then compare-and-swap 0 → world
 * rank + 1; released by compare-and-swap back to 0. Holding the holder's
 * rank in the word lets a waiter name it.
 *
 * Waiting (mpil_win_wait_until): poll, then one pass of the engine's
 * progress (ibx_progress_wait: it yields the CPU when ranks outnumber the
 * cores, so a holder that waits for our core gets it). When the poll went
 * over the network, back off exponentially up to a few microseconds, so
 * that waiters do not flood the target's NIC. Every few polls, every
 * member of the window is checked: the holder of a lock may be a third
 * process, and a member the engine lost ends the wait with an error that
 * names it, never a hang.
 */
#include "win_int.h"
#include "win_lock_pf.h"

_Static_assert(MPIL_WCTL_LOCK_RIN + MPIL_PF_RIN == MPIL_WCTL_LOCK_RIN &&
		   MPIL_WCTL_LOCK_RIN + MPIL_PF_ROUT == MPIL_WCTL_LOCK_ROUT &&
		   MPIL_WCTL_LOCK_RIN + MPIL_PF_WIN == MPIL_WCTL_LOCK_WIN &&
		   MPIL_WCTL_LOCK_RIN + MPIL_PF_WOUT == MPIL_WCTL_LOCK_WOUT,
	       "the lock's words are RIN, ROUT, WIN, WOUT in this order");

#define BACKOFF_MIN_NS 128
#define BACKOFF_MAX_NS 4096
#define LIVENESS_EVERY 64	     /* polls between checks of the members */
#define PROBE_NS       1000000000ull /* members over the network: a read per second of waiting */
#define ACC_LOCK_FREE  0

/* Control-block operations that went over the network (ibx_get /
 * ibx_atomic), so that a wait can tell a remote poll from a local one
 * (per thread: each waits on its own polls). */
static __thread unsigned long ctl_remote_ops;

/* ---- control-block words ---------------------------------------------------------- */

static int ctl_fail(MPI_Win win, int target, int word, const char *what, ibx_status_t st,
		    const char *fname)
{
	return mpil_win_err(win, mpil_err_from_ibx(st), fname,
			    "%s of control word %d of window rank %d (world rank %d) failed: %s",
			    what, word, target, win->t[target].world, ibx_status_str(st));
}

static uint64_t ctl_raddr(const mpil_win_target_t *t, int word)
{
	return t->ctl_base + 8u * (uint64_t)word;
}

/* Waits for an engine request of this file (the remote forms below). */
static ibx_status_t ctl_wait(ibx_status_t st, ibx_request_t *rq)
{
	ctl_remote_ops++;
	if (st == IBX_INPROGRESS)
		st = mpil_ibx_wait(rq);
	return st;
}

int mpil_win_ctl_read(MPI_Win win, int target, int word, uint64_t *val_p, const char *fname)
{
	mpil_win_target_t *t = &win->t[target];
	ibx_request_t rq;
	ibx_status_t st;

	if (t->ctl_local) {
		*val_p = __atomic_load_n(&t->ctl_local[word], __ATOMIC_ACQUIRE);
		return MPI_SUCCESS;
	}
	rq.cb = NULL;
	st = ctl_wait(ibx_get(mpil_g.ctx, val_p, 8, ctl_raddr(t, word), t->ctl_rk, &rq), &rq);
	if (ibx_unlikely(st != IBX_OK))
		return ctl_fail(win, target, word, "reading", st, fname);
	return MPI_SUCCESS;
}

int mpil_win_ctl_fadd(MPI_Win win, int target, int word, uint64_t add, uint64_t *old_p,
		      const char *fname)
{
	mpil_win_target_t *t = &win->t[target];
	ibx_request_t rq;
	ibx_status_t st;
	uint64_t old;

	if (t->ctl_local) {
		old = __atomic_fetch_add(&t->ctl_local[word], add, __ATOMIC_SEQ_CST);
	} else {
		rq.cb = NULL;
		st = ctl_wait(ibx_atomic(mpil_g.ctx, IBX_ATOMIC_FADD, add, 0, &old,
					 ctl_raddr(t, word), t->ctl_rk, &rq),
			      &rq);
		if (ibx_unlikely(st != IBX_OK))
			return ctl_fail(win, target, word, "fetch-and-add", st, fname);
	}
	if (old_p)
		*old_p = old;
	return MPI_SUCCESS;
}

int mpil_win_ctl_cas(MPI_Win win, int target, int word, uint64_t cmp, uint64_t swap,
		     uint64_t *old_p, const char *fname)
{
	mpil_win_target_t *t = &win->t[target];
	ibx_request_t rq;
	ibx_status_t st;
	uint64_t old = cmp;

	if (t->ctl_local) {
		__atomic_compare_exchange_n(&t->ctl_local[word], &old, swap, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		rq.cb = NULL;
		st = ctl_wait(ibx_atomic(mpil_g.ctx, IBX_ATOMIC_CSWAP, swap, cmp, &old,
					 ctl_raddr(t, word), t->ctl_rk, &rq),
			      &rq);
		if (ibx_unlikely(st != IBX_OK))
			return ctl_fail(win, target, word, "compare-and-swap", st, fname);
	}
	*old_p = old;
	return MPI_SUCCESS;
}

/* ---- waiting ------------------------------------------------------------------------ */

/* Every member of @win is still reachable (MPI error naming the first
 * that is not). */
static int members_alive(MPI_Win win, const char *fname)
{
	ibx_ctx_t *ctx = mpil_g.ctx;

	for (int r = 0; r < win->size; r++) {
		int w = win->t[r].world;
		ibx_status_t st;

		if (w == ctx->rank)
			continue;
		st = __atomic_load_n(&ctx->peers[w].error, __ATOMIC_RELAXED);
		if (ibx_unlikely(st != IBX_OK))
			return mpil_win_err(win, mpil_err_from_ibx(st), fname,
					    "window rank %d (world rank %d) was lost while this "
					    "process waited for the window's synchronisation: %s",
					    r, w, ibx_status_str(st));
	}
	return MPI_SUCCESS;
}

/* Progresses for @ns nanoseconds (the back-off between remote polls). */
static void progress_for(uint64_t ns, unsigned *idle)
{
	uint64_t until = ibx_time_ns() + ns;

	do
		ibx_progress_wait(mpil_g.ctx, idle);
	while (ibx_time_ns() < until);
}

/*
 * The engine learns of a lost node-local peer by its pid, but of a lost
 * verbs peer only when an operation towards it fails: every PROBE_NS of
 * waiting, read a word of each member reached over the network, so that a
 * holder that died on another node fails the wait (after the transport's
 * retries) instead of leaving it to spin on a live target for ever.
 */
static int probe_remote_members(MPI_Win win, const char *fname)
{
	for (int r = 0; r < win->size; r++) {
		uint64_t v;

		if (!win->t[r].ctl_local)
			MPIL_CHECK(mpil_win_ctl_read(win, r, MPIL_WCTL_COMPLETE, &v, fname));
	}
	return MPI_SUCCESS;
}

int mpil_win_wait_until(MPI_Win win, bool (*done)(MPI_Win win, void *arg), void *arg,
			const char *fname)
{
	uint64_t backoff = 0, probe_at = 0;
	unsigned idle = 0;

	for (unsigned polls = 1;; polls++) {
		unsigned long remote = ctl_remote_ops;

		if (done(win, arg))
			return MPI_SUCCESS;
		if (polls % LIVENESS_EVERY == 0) {
			uint64_t now = ibx_time_ns();

			MPIL_CHECK(members_alive(win, fname));
			if (!probe_at)
				probe_at = now + PROBE_NS;
			else if (now >= probe_at) {
				MPIL_CHECK(probe_remote_members(win, fname));
				probe_at = now + PROBE_NS;
			}
		}
		if (remote != ctl_remote_ops) {
			backoff = backoff ? backoff * 2 : BACKOFF_MIN_NS;
			if (backoff > BACKOFF_MAX_NS)
				backoff = BACKOFF_MAX_NS;
			progress_for(backoff, &idle);
		} else {
			ibx_progress_wait(mpil_g.ctx, &idle);
		}
	}
}

/* ---- the passive-target lock ------------------------------------------------------ */

typedef struct pf_run {
	mpil_pf_t l;
	int target;
	int err;
	const char *fname;
} pf_run_t;

/* One operation of the lock's machine on the target's words. */
static int pf_step(MPI_Win win, pf_run_t *pr)
{
	mpil_pf_op_t op = mpil_pf_op(&pr->l);
	int word = MPIL_WCTL_LOCK_RIN + op.word;
	uint64_t v;
	int err;

	if (op.read)
		err = mpil_win_ctl_read(win, pr->target, word, &v, pr->fname);
	else
		err = mpil_win_ctl_fadd(win, pr->target, word, op.add, &v, pr->fname);
	if (err == MPI_SUCCESS)
		mpil_pf_result(&pr->l, v);
	return err;
}

/* A waiting state's poll: done when the machine moved on (or failed; the
 * failure was reported already). */
static bool pf_poll(MPI_Win win, void *arg)
{
	pf_run_t *pr = arg;

	pr->err = pf_step(win, pr);
	return pr->err != MPI_SUCCESS || !mpil_pf_waiting(&pr->l);
}

/* Runs the machine until it holds the lock or is idle again. */
static int pf_run(MPI_Win win, pf_run_t *pr)
{
	while (!mpil_pf_held(&pr->l) && pr->l.pc != MPIL_PF_IDLE) {
		if (mpil_pf_waiting(&pr->l)) {
			pr->err = MPI_SUCCESS;
			MPIL_CHECK(mpil_win_wait_until(win, pf_poll, pr, pr->fname));
			MPIL_CHECK(pr->err);
		} else {
			MPIL_CHECK(pf_step(win, pr));
		}
	}
	return MPI_SUCCESS;
}

int mpil_win_lock_acquire(MPI_Win win, int target, int lock_type, const char *fname)
{
	mpil_win_target_t *t = &win->t[target];
	pf_run_t pr = {.target = target, .fname = fname};

	mpil_pf_lock(&pr.l, lock_type == MPI_LOCK_EXCLUSIVE);
	MPIL_CHECK(pf_run(win, &pr));
	t->lock_type = lock_type;
	t->lock_state = pr.l.w;
	return MPI_SUCCESS;
}

int mpil_win_lock_release(MPI_Win win, int target, const char *fname)
{
	mpil_win_target_t *t = &win->t[target];
	pf_run_t pr = {.target = target, .fname = fname};

	mpil_pf_unlock(&pr.l, t->lock_type == MPI_LOCK_EXCLUSIVE, t->lock_state);
	/* ours no longer, whatever the release says: retrying it could
	 * release someone else's phase */
	t->lock_type = 0;
	t->lock_state = 0;
	return pf_run(win, &pr);
}

/* ---- the accumulate lock ------------------------------------------------------------ */

typedef struct acc_try {
	int target;
	uint64_t me;
	int err;
	const char *fname;
} acc_try_t;

/* Test, then test-and-set: a taken lock is only read while it stays taken. */
static bool acc_poll(MPI_Win win, void *arg)
{
	acc_try_t *a = arg;
	uint64_t v;

	a->err = mpil_win_ctl_read(win, a->target, MPIL_WCTL_ACC_LOCK, &v, a->fname);
	if (a->err != MPI_SUCCESS)
		return true;
	if (v != ACC_LOCK_FREE)
		return false;
	a->err = mpil_win_ctl_cas(win, a->target, MPIL_WCTL_ACC_LOCK, ACC_LOCK_FREE, a->me, &v,
				  a->fname);
	return a->err != MPI_SUCCESS || v == ACC_LOCK_FREE;
}

int mpil_win_acc_lock(MPI_Win win, int target, const char *fname)
{
	acc_try_t a = {.target = target, .me = (uint64_t)mpil_g.world_rank + 1, .fname = fname};

	MPIL_CHECK(mpil_win_wait_until(win, acc_poll, &a, fname));
	return a.err;
}

int mpil_win_acc_unlock(MPI_Win win, int target, const char *fname)
{
	uint64_t me = (uint64_t)mpil_g.world_rank + 1, old;

	MPIL_CHECK(
	    mpil_win_ctl_cas(win, target, MPIL_WCTL_ACC_LOCK, me, ACC_LOCK_FREE, &old, fname));
	if (ibx_unlikely(old != me))
		return mpil_win_err(win, MPI_ERR_INTERN, fname,
				    "the accumulate lock of window rank %d is held by world rank "
				    "%lld, not by this process",
				    target, (long long)old - 1);
	return MPI_SUCCESS;
}
