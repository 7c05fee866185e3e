/*
 * win_sync.c — the synchronisation of MPI one-sided communication
 * (MPI-3.1 §11.5): MPI_Win_fence, MPI_Win_post / start / complete / wait /
 * test, MPI_Win_lock / unlock, lock_all / unlock_all, the flushes,
 * MPI_Win_sync, and the epoch check every operation makes
 * (mpil_win_access_check). The three schemes are those of [Traff00] §2,
 * with counters in the members' control blocks (win_int.h) moved by
 * one-sided atomics instead of messages, so no call ever needs the target
 * process to be inside MPI.
 *
 * Fence: complete what this process started (flush every member it
 * touched), then a barrier among the members. Assertions: NOPRECEDE (no
 * operation to complete), NOSUCCEED (no epoch opens after it), both (no
 * synchronisation at all); NOSTORE and NOPUT leave nothing to skip in the
 * unified memory model beyond the memory barrier every fence makes.
 *
 * Post / start / complete / wait ([Traff00] §2's dedicated scheme, with
 * remote atomics for its messages):
 *
 *      target (exposure)                       origin (access)
 *      MPI_Win_post(G) ── ADD 1 ─────────────► POST + target   (origin's block)
 *        expected += |G|                       MPI_Win_start(G'):
 *                                                wait POST + target > posts_seen
 *                                                posts_seen++
 *                                              ... puts, gets ...
 *      COMPLETE  ◄───────────── ADD 1 ──────── MPI_Win_complete: flush, then ADD
 *      MPI_Win_wait: wait COMPLETE >= expected
 *
 * The counters only grow (nothing is reset while a peer may touch it), so
 * consecutive epochs need no agreement: the n-th start towards a target
 * waits for its n-th post. MPI_MODE_NOCHECK skips the post's notification
 * and the start's wait (both sides must give it, as MPI says).
 *
 * Passive target: MPI_Win_lock acquires at once (win_lock.c); the unlock
 * completes the operations to the target, then releases. MPI_Win_lock_all
 * acquires lazily: the shared lock on a member is taken by the first
 * operation towards it (mpil_win_access_check), as MPICH does — an epoch
 * that touches k of p members costs k lock round trips, not p; MPI-3.1
 * §11.5.3 lets the lock be taken after MPI_Win_lock_all returns, as long
 * as the operations of the epoch are protected by it.
 *
 * Epochs (win->access, enum mpil_win_epoch): a fence opens a FENCE epoch;
 * a fence epoch in which no operation was started (no member is dirty)
 * may be followed by any other epoch, as in MPICH and Open MPI, so that
 * "fence ... fence; lock ... unlock" needs no MPI_MODE_NOSUCCEED.
 * Exposure (post) and access epochs are independent.
 *
 * Length: just over 700 lines: the fence, PSCW and MPI_Win_sync entry
 * points stay beside the epoch rules above; each carries the one-line
 * MPI_THREAD_MULTIPLE guard (thread.c).
 */
#include "win_int.h"

#define FENCE_ASSERTS	(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)
#define POST_ASSERTS	(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT)
#define NO_SYNC_ASSERTS (MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

/* ---- checks ------------------------------------------------------------------------- */

static const char *epoch_name(int access)
{
	switch (access) {
	case MPIL_EPOCH_FENCE: return "a fence epoch with operations in it";
	case MPIL_EPOCH_PSCW: return "an access epoch of MPI_Win_start";
	case MPIL_EPOCH_LOCK: return "a lock epoch of MPI_Win_lock";
	case MPIL_EPOCH_LOCK_ALL: return "a lock epoch of MPI_Win_lock_all";
	}
	return "no epoch";
}

static int check_assert(MPI_Win win, int asserts, int allowed, const char *fname)
{
	if (ibx_likely((asserts & ~allowed) == 0))
		return MPI_SUCCESS;
	return mpil_win_err(win, MPI_ERR_ASSERT, fname,
			    "assert 0x%x has bits this call does not take (0x%x)",
			    (unsigned)asserts, (unsigned)(asserts & ~allowed));
}

static int check_rank(MPI_Win win, int rank, const char *fname)
{
	if (ibx_likely(rank >= 0 && rank < win->size))
		return MPI_SUCCESS;
	return mpil_win_err(win, MPI_ERR_RANK, fname, "invalid rank %d (window of %d members)",
			    rank, win->size);
}

/* Every member of @g must be a member of the window. */
static int check_group(MPI_Win win, MPI_Group g, const char *fname)
{
	if (!mpil_group_valid(g))
		return mpil_win_err(win, MPI_ERR_GROUP, fname, "%s",
				    g ? "invalid group handle" : "group is MPI_GROUP_NULL");
	for (int i = 0; i < g->size; i++)
		if (mpil_comm_from_world(win->comm, g->world[i]) < 0)
			return mpil_win_err(win, MPI_ERR_GROUP, fname,
					    "rank %d of the group (world rank %d) is not a member "
					    "of the window",
					    i, g->world[i]);
	return MPI_SUCCESS;
}

/* Window rank of member @i of @g (checked by check_group). */
static int group_wrank(MPI_Win win, MPI_Group g, int i)
{
	return mpil_comm_from_world(win->comm, g->world[i]);
}

static bool any_dirty(MPI_Win win)
{
	for (int r = 0; r < win->size; r++)
		if (win->t[r].dirty)
			return true;
	return false;
}

/* A new access epoch may open: none is open, or only a fence's that no
 * operation used. */
static int check_no_access(MPI_Win win, const char *fname)
{
	if (win->access == MPIL_EPOCH_NONE || (win->access == MPIL_EPOCH_FENCE && !any_dirty(win)))
		return MPI_SUCCESS;
	return mpil_win_err(win, MPI_ERR_RMA_SYNC, fname, "%s is open", epoch_name(win->access));
}

int mpil_win_access_check(MPI_Win win, int target, const char *fname)
{
	mpil_win_target_t *t;

	if (target == MPI_PROC_NULL && win->access != MPIL_EPOCH_NONE)
		return MPI_SUCCESS;
	if (target != MPI_PROC_NULL)
		MPIL_CHECK(check_rank(win, target, fname));
	t = &win->t[target == MPI_PROC_NULL ? 0 : target];
	if (ibx_likely(mpil_win_epoch_open(win, t)))
		return MPI_SUCCESS;
	switch (win->access) {
	case MPIL_EPOCH_PSCW:
		return mpil_win_err(win, MPI_ERR_RMA_SYNC, fname,
				    "window rank %d is not in the group of MPI_Win_start", target);
	case MPIL_EPOCH_LOCK:
		return mpil_win_err(win, MPI_ERR_RMA_SYNC, fname,
				    "window rank %d is not locked by this process", target);
	case MPIL_EPOCH_LOCK_ALL:
		/* the first access under MPI_Win_lock_all takes the lock */
		return mpil_win_lock_acquire(win, target, MPI_LOCK_SHARED, fname);
	}
	return mpil_win_err(win, MPI_ERR_RMA_SYNC, fname,
			    "no access epoch is open (MPI_Win_fence, MPI_Win_start, MPI_Win_lock "
			    "or MPI_Win_lock_all opens one)");
}

/* ---- completion --------------------------------------------------------------------- */

IBX_HOT int mpil_win_flush_target(MPI_Win win, int target, const char *fname)
{
	mpil_win_target_t *t = &win->t[target];
	ibx_status_t st;

	/* the owner of the memory (a shared window's segment may belong to
	 * another member of the node) and, for dynamic windows' regions and
	 * the control block, the member itself; a flush of an untouched
	 * peer costs a memory barrier */
	st = ibx_flush(mpil_g.ctx, t->rk_owner);
	if (st == IBX_OK && t->world != t->rk_owner)
		st = ibx_flush(mpil_g.ctx, t->world);
	t->dirty = false;
	if (ibx_unlikely(st != IBX_OK))
		return mpil_win_err(win, mpil_err_from_ibx(st), fname,
				    "completing the operations to window rank %d (world rank %d) "
				    "failed: %s",
				    target, t->world, ibx_status_str(st));
	return MPI_SUCCESS;
}

/* Completes the operations to every member that has some; the first error
 * is returned, the others are completed all the same. */
static IBX_HOT int flush_dirty(MPI_Win win, const char *fname)
{
	int first = MPI_SUCCESS;

	for (int r = 0; r < win->size; r++) {
		int err;

		if (!win->t[r].dirty)
			continue;
		err = mpil_win_flush_target(win, r, fname);
		if (err != MPI_SUCCESS && first == MPI_SUCCESS)
			first = err;
	}
	atomic_thread_fence(memory_order_seq_cst);
	return first;
}

/* ---- counters of post / complete ---------------------------------------------------- */

/* Adds 1 to @word of member @r without waiting: a CPU atomic when its
 * control block is mapped here, else a remote atomic that ctl_add_finish
 * completes (so notifications to many members overlap). */
static int ctl_add_start(MPI_Win win, int r, int word, const char *fname)
{
	mpil_win_target_t *t = &win->t[r];
	ibx_status_t st;

	if (t->ctl_local) {
		__atomic_fetch_add(&t->ctl_local[word], 1, __ATOMIC_SEQ_CST);
		return MPI_SUCCESS;
	}
	st = ibx_atomic(mpil_g.ctx, IBX_ATOMIC_ADD, 1, 0, NULL, t->ctl_base + 8u * (uint64_t)word,
			t->ctl_rk, NULL);
	if (ibx_likely(st == IBX_OK || st == IBX_INPROGRESS))
		return MPI_SUCCESS;
	return mpil_win_err(win, mpil_err_from_ibx(st), fname,
			    "notifying window rank %d (world rank %d) failed: %s", r, t->world,
			    ibx_status_str(st));
}

static int ctl_add_finish(MPI_Win win, int r, const char *fname)
{
	mpil_win_target_t *t = &win->t[r];
	ibx_status_t st;

	if (t->ctl_local)
		return MPI_SUCCESS;
	st = ibx_flush(mpil_g.ctx, t->world);
	if (ibx_likely(st == IBX_OK))
		return MPI_SUCCESS;
	return mpil_win_err(win, mpil_err_from_ibx(st), fname,
			    "notifying window rank %d (world rank %d) failed: %s", r, t->world,
			    ibx_status_str(st));
}

/* Adds 1 to @word of every member of @g; the first error is returned. */
static int ctl_add_group(MPI_Win win, MPI_Group g, int word, const char *fname)
{
	int first = MPI_SUCCESS, err;

	for (int i = 0; i < g->size && first == MPI_SUCCESS; i++)
		first = ctl_add_start(win, group_wrank(win, g, i), word, fname);
	for (int i = 0; i < g->size; i++) {
		err = ctl_add_finish(win, group_wrank(win, g, i), fname);
		if (err != MPI_SUCCESS && first == MPI_SUCCESS)
			first = err;
	}
	return first;
}

static uint64_t own_word(MPI_Win win, int word)
{
	return __atomic_load_n(&win->ctl[word], __ATOMIC_ACQUIRE);
}

/* ---- fence ---------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Win_fence)
int PMPI_Win_fence(int asserts, MPI_Win win)
{
	static const char F[] = "MPI_Win_fence";
	MPIL_CS_GUARD();
	bool dirty;
	int err;

	MPIL_CHECK(mpil_win_check(win, F));
	MPIL_CHECK(check_assert(win, asserts, FENCE_ASSERTS, F));
	if (win->access != MPIL_EPOCH_NONE && win->access != MPIL_EPOCH_FENCE)
		return mpil_win_err(win, MPI_ERR_RMA_SYNC, F, "%s is open",
				    epoch_name(win->access));
	if (win->post_group)
		return mpil_win_err(win, MPI_ERR_RMA_SYNC, F,
				    "an exposure epoch of MPI_Win_post is open (no MPI_Win_wait)");
	/* MPI_MODE_NOPRECEDE: nothing was started, so nothing is dirty and
	 * nothing is flushed */
	dirty = any_dirty(win);
	if (dirty)
		MPIL_CHECK(flush_dirty(win, F));
	/* MPI_MODE_NOSTORE / MPI_MODE_NOPUT would let a separate memory model
	 * skip copying between the private and public window; in the unified
	 * model (one memory, reached by loads, stores and the NIC alike)
	 * there is nothing to skip but this barrier, which every fence makes */
	atomic_thread_fence(memory_order_seq_cst);
	if ((asserts & NO_SYNC_ASSERTS) != NO_SYNC_ASSERTS) {
		/* neither side of the fence is empty: everyone's operations
		 * before it are complete before anyone's after it start */
		err = mpil_barrier(win->comm);
		if (err != MPI_SUCCESS)
			return mpil_win_err(win, err, F,
					    "the barrier among the window's members failed");
		atomic_thread_fence(memory_order_seq_cst);
	}
	win->access = (asserts & MPI_MODE_NOSUCCEED) ? MPIL_EPOCH_NONE : MPIL_EPOCH_FENCE;
	win->fence_assert = asserts;
	if (dirty && (asserts & MPI_MODE_NOPRECEDE))
		return mpil_win_err(win, MPI_ERR_RMA_SYNC, F,
				    "operations were started before a fence that asserts "
				    "MPI_MODE_NOPRECEDE (they were completed)");
	return MPI_SUCCESS;
}

/* ---- post / start / complete / wait / test ------------------------------------------------- */

static void group_retain(MPI_Group g)
{
	if (!g->predefined)
		g->refcount++;
}

MPIL_PMPI_ALIAS(Win_post)
int PMPI_Win_post(MPI_Group group, int asserts, MPI_Win win)
{
	static const char F[] = "MPI_Win_post";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_win_check(win, F));
	MPIL_CHECK(check_assert(win, asserts, POST_ASSERTS, F));
	MPIL_CHECK(check_group(win, group, F));
	if (win->post_group)
		return mpil_win_err(win, MPI_ERR_RMA_SYNC, F,
				    "an exposure epoch of MPI_Win_post is already open");
	/* our stores to the window before the post come before the origins'
	 * accesses after it */
	atomic_thread_fence(memory_order_seq_cst);
	if (!(asserts & MPI_MODE_NOCHECK))
		MPIL_CHECK(ctl_add_group(win, group, MPIL_WCTL_POST + win->rank, F));
	win->completes_expected += (uint64_t)group->size;
	group_retain(group);
	win->post_group = group;
	return MPI_SUCCESS;
}

typedef struct posts_wait {
	MPI_Group g;
	int next; /* members before it have posted */
} posts_wait_t;

/* Consumes the posts of the start group in order; done when every member
 * has posted. */
static bool all_posted(MPI_Win win, void *arg)
{
	posts_wait_t *pw = arg;

	while (pw->next < pw->g->size) {
		int r = group_wrank(win, pw->g, pw->next);

		if (own_word(win, MPIL_WCTL_POST + r) <= win->t[r].posts_seen)
			return false;
		win->t[r].posts_seen++;
		pw->next++;
	}
	return true;
}

static void pscw_targets_set(MPI_Win win, MPI_Group g, bool in)
{
	for (int i = 0; i < g->size; i++)
		win->t[group_wrank(win, g, i)].pscw_target = in;
}

MPIL_PMPI_ALIAS(Win_start)
int PMPI_Win_start(MPI_Group group, int asserts, MPI_Win win)
{
	static const char F[] = "MPI_Win_start";
	MPIL_CS_GUARD();
	posts_wait_t pw = {.g = group};

	MPIL_CHECK(mpil_win_check(win, F));
	MPIL_CHECK(check_assert(win, asserts, MPI_MODE_NOCHECK, F));
	MPIL_CHECK(check_group(win, group, F));
	MPIL_CHECK(check_no_access(win, F));
	if (!(asserts & MPI_MODE_NOCHECK))
		MPIL_CHECK(mpil_win_wait_until(win, all_posted, &pw, F));
	pscw_targets_set(win, group, true);
	group_retain(group);
	win->start_group = group;
	win->access = MPIL_EPOCH_PSCW;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_complete)
int PMPI_Win_complete(MPI_Win win)
{
	static const char F[] = "MPI_Win_complete";
	MPIL_CS_GUARD();
	MPI_Group g;
	int err;

	MPIL_CHECK(mpil_win_check(win, F));
	if (win->access != MPIL_EPOCH_PSCW)
		return mpil_win_err(win, MPI_ERR_RMA_SYNC, F,
				    "no access epoch of MPI_Win_start is open (%s)",
				    epoch_name(win->access));
	g = win->start_group;
	/* our operations are complete at each target before it counts us */
	err = flush_dirty(win, F);
	if (err == MPI_SUCCESS)
		err = ctl_add_group(win, g, MPIL_WCTL_COMPLETE, F);
	/* the epoch is over, whatever failed */
	pscw_targets_set(win, g, false);
	win->start_group = NULL;
	win->access = MPIL_EPOCH_NONE;
	mpil_group_release(g);
	return err;
}

static bool all_completed(MPI_Win win, void *arg)
{
	return own_word(win, MPIL_WCTL_COMPLETE) >= win->completes_expected;
}

static void exposure_end(MPI_Win win)
{
	atomic_thread_fence(memory_order_seq_cst);
	mpil_group_release(win->post_group);
	win->post_group = NULL;
}

static int check_exposure(MPI_Win win, const char *fname)
{
	if (win->post_group)
		return MPI_SUCCESS;
	return mpil_win_err(win, MPI_ERR_RMA_SYNC, fname,
			    "no exposure epoch of MPI_Win_post is open");
}

MPIL_PMPI_ALIAS(Win_wait)
int PMPI_Win_wait(MPI_Win win)
{
	static const char F[] = "MPI_Win_wait";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_win_check(win, F));
	MPIL_CHECK(check_exposure(win, F));
	MPIL_CHECK(mpil_win_wait_until(win, all_completed, NULL, F));
	exposure_end(win);
	return MPI_SUCCESS;
}

/* The origins of the exposure epoch are alive (MPI_Win_test does not wait,
 * but a caller polling it must learn of a lost origin). */
static int origins_alive(MPI_Win win, const char *fname)
{
	MPI_Group g = win->post_group;

	for (int i = 0; i < g->size; i++) {
		int w = g->world[i];
		ibx_status_t st;

		if (w == mpil_g.world_rank)
			continue;
		st = __atomic_load_n(&mpil_g.ctx->peers[w].error, __ATOMIC_RELAXED);
		if (ibx_unlikely(st != IBX_OK))
			return mpil_win_err(win, mpil_err_from_ibx(st), fname,
					    "window rank %d (world rank %d) of the MPI_Win_post "
					    "group was lost: %s",
					    group_wrank(win, g, i), w, ibx_status_str(st));
	}
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_test)
int PMPI_Win_test(MPI_Win win, int *flag)
{
	static const char F[] = "MPI_Win_test";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_win_check(win, F));
	if (!flag)
		return mpil_win_err(win, MPI_ERR_ARG, F, "flag is NULL");
	MPIL_CHECK(check_exposure(win, F));
	*flag = 0;
	if (!all_completed(win, NULL)) {
		ibx_progress(mpil_g.ctx);
		MPIL_CHECK(origins_alive(win, F));
		if (!all_completed(win, NULL))
			return MPI_SUCCESS;
	}
	exposure_end(win);
	*flag = 1;
	return MPI_SUCCESS;
}

/* ---- passive target ------------------------------------------------------------------- */

static int check_locks_allowed(MPI_Win win, const char *fname)
{
	if (ibx_likely(!win->no_locks))
		return MPI_SUCCESS;
	return mpil_win_err(win, MPI_ERR_RMA_SYNC, fname,
			    "the window was created with the info hint no_locks=true");
}

MPIL_PMPI_ALIAS(Win_lock)
int PMPI_Win_lock(int lock_type, int rank, int asserts, MPI_Win win)
{
	static const char F[] = "MPI_Win_lock";
	MPIL_CS_GUARD();
	mpil_win_target_t *t;

	MPIL_CHECK(mpil_win_check(win, F));
	if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
		return mpil_win_err(win, MPI_ERR_LOCKTYPE, F,
				    "lock type %d is neither MPI_LOCK_SHARED nor "
				    "MPI_LOCK_EXCLUSIVE",
				    lock_type);
	if (rank == MPI_PROC_NULL)
		return MPI_SUCCESS;
	MPIL_CHECK(check_rank(win, rank, F));
	MPIL_CHECK(check_assert(win, asserts, MPI_MODE_NOCHECK, F));
	MPIL_CHECK(check_locks_allowed(win, F));
	if (win->access != MPIL_EPOCH_LOCK)
		MPIL_CHECK(check_no_access(win, F));
	t = &win->t[rank];
	if (t->lock_type)
		return mpil_win_err(win, MPI_ERR_RMA_SYNC, F,
				    "window rank %d is already locked by this process", rank);
	if (asserts & MPI_MODE_NOCHECK) {
		/* no one else locks it: take nothing, release nothing */
		t->lock_type = lock_type;
		t->lock_nocheck = true;
	} else {
		MPIL_CHECK(mpil_win_lock_acquire(win, rank, lock_type, F));
	}
	win->nlocked++;
	win->access = MPIL_EPOCH_LOCK;
	return MPI_SUCCESS;
}

/* Completes the operations to @r (@always: even when none was started
 * since the last flush, as for an explicit flush), then drops this
 * process's lock on it. */
static int unlock_one(MPI_Win win, int r, bool always, const char *fname)
{
	mpil_win_target_t *t = &win->t[r];
	int err = MPI_SUCCESS, err2 = MPI_SUCCESS;

	if (always || t->dirty)
		err = mpil_win_flush_target(win, r, fname);
	if (t->lock_nocheck) {
		t->lock_type = 0;
		t->lock_nocheck = false;
	} else {
		/* released even when the flush failed: holding it forever
		 * would stop every other process */
		err2 = mpil_win_lock_release(win, r, fname);
	}
	return err != MPI_SUCCESS ? err : err2;
}

MPIL_PMPI_ALIAS(Win_unlock)
int PMPI_Win_unlock(int rank, MPI_Win win)
{
	static const char F[] = "MPI_Win_unlock";
	MPIL_CS_GUARD();
	int err;

	MPIL_CHECK(mpil_win_check(win, F));
	if (rank == MPI_PROC_NULL)
		return MPI_SUCCESS;
	MPIL_CHECK(check_rank(win, rank, F));
	if (win->access != MPIL_EPOCH_LOCK || !win->t[rank].lock_type)
		return mpil_win_err(win, MPI_ERR_RMA_SYNC, F,
				    "window rank %d is not locked by MPI_Win_lock of this process",
				    rank);
	err = unlock_one(win, rank, true, F);
	if (--win->nlocked == 0)
		win->access = MPIL_EPOCH_NONE;
	return err;
}

MPIL_PMPI_ALIAS(Win_lock_all)
int PMPI_Win_lock_all(int asserts, MPI_Win win)
{
	static const char F[] = "MPI_Win_lock_all";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_win_check(win, F));
	MPIL_CHECK(check_assert(win, asserts, MPI_MODE_NOCHECK, F));
	MPIL_CHECK(check_locks_allowed(win, F));
	MPIL_CHECK(check_no_access(win, F));
	if (asserts & MPI_MODE_NOCHECK)
		for (int r = 0; r < win->size; r++) {
			win->t[r].lock_type = MPI_LOCK_SHARED;
			win->t[r].lock_nocheck = true;
		}
	/* otherwise each member's shared lock is taken by the first
	 * operation towards it (mpil_win_access_check) */
	win->access = MPIL_EPOCH_LOCK_ALL;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_unlock_all)
int PMPI_Win_unlock_all(MPI_Win win)
{
	static const char F[] = "MPI_Win_unlock_all";
	MPIL_CS_GUARD();
	int first = MPI_SUCCESS;

	MPIL_CHECK(mpil_win_check(win, F));
	if (win->access != MPIL_EPOCH_LOCK_ALL)
		return mpil_win_err(win, MPI_ERR_RMA_SYNC, F,
				    "no epoch of MPI_Win_lock_all is open (%s)",
				    epoch_name(win->access));
	for (int r = 0; r < win->size; r++) {
		int err;

		if (!win->t[r].lock_type)
			continue;
		err = unlock_one(win, r, false, F);
		if (err != MPI_SUCCESS && first == MPI_SUCCESS)
			first = err;
	}
	win->access = MPIL_EPOCH_NONE;
	return first;
}

/* Flushes are only allowed in a passive-target epoch, towards a member it
 * covers (@rank < 0: every member). */
static IBX_HOT int check_passive(MPI_Win win, int rank, const char *fname)
{
	if (win->access == MPIL_EPOCH_LOCK_ALL ||
	    (win->access == MPIL_EPOCH_LOCK && (rank < 0 || win->t[rank].lock_type)))
		return MPI_SUCCESS;
	if (win->access == MPIL_EPOCH_LOCK)
		return mpil_win_err(win, MPI_ERR_RMA_SYNC, fname,
				    "window rank %d is not locked by this process", rank);
	return mpil_win_err(win, MPI_ERR_RMA_SYNC, fname,
			    "a flush needs a passive-target epoch (MPI_Win_lock or "
			    "MPI_Win_lock_all), not %s",
			    epoch_name(win->access));
}

static IBX_HOT int flush_one(int rank, MPI_Win win, const char *fname)
{
	MPIL_CHECK(mpil_win_check(win, fname));
	if (rank != MPI_PROC_NULL)
		MPIL_CHECK(check_rank(win, rank, fname));
	MPIL_CHECK(check_passive(win, rank == MPI_PROC_NULL ? -1 : rank, fname));
	if (rank == MPI_PROC_NULL)
		return MPI_SUCCESS;
	return mpil_win_flush_target(win, rank, fname);
}

static IBX_HOT int flush_all(MPI_Win win, const char *fname)
{
	MPIL_CHECK(mpil_win_check(win, fname));
	MPIL_CHECK(check_passive(win, -1, fname));
	return flush_dirty(win, fname);
}

/* The engine's flush is remote completion, which includes local
 * completion: the _local forms are the same calls. */
MPIL_PMPI_ALIAS_HOT(Win_flush)
IBX_HOT int PMPI_Win_flush(int rank, MPI_Win win)
{
	MPIL_CS_GUARD();
	return flush_one(rank, win, "MPI_Win_flush");
}

MPIL_PMPI_ALIAS_HOT(Win_flush_local)
IBX_HOT int PMPI_Win_flush_local(int rank, MPI_Win win)
{
	MPIL_CS_GUARD();
	return flush_one(rank, win, "MPI_Win_flush_local");
}

MPIL_PMPI_ALIAS_HOT(Win_flush_all)
IBX_HOT int PMPI_Win_flush_all(MPI_Win win)
{
	MPIL_CS_GUARD();
	return flush_all(win, "MPI_Win_flush_all");
}

MPIL_PMPI_ALIAS(Win_flush_local_all)
int PMPI_Win_flush_local_all(MPI_Win win)
{
	MPIL_CS_GUARD();
	return flush_all(win, "MPI_Win_flush_local_all");
}

/* Unified memory model: the public and private copies are one memory, so
 * synchronising them is a memory barrier (valid in any epoch). */
MPIL_PMPI_ALIAS(Win_sync)
int PMPI_Win_sync(MPI_Win win)
{
	static const char F[] = "MPI_Win_sync";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_win_check(win, F));
	atomic_thread_fence(memory_order_seq_cst);
	return MPI_SUCCESS;
}

void mpil_win_sync_fini(MPI_Win win)
{
	if (win->start_group) {
		pscw_targets_set(win, win->start_group, false);
		mpil_group_release(win->start_group);
		win->start_group = NULL;
	}
	if (win->post_group) {
		mpil_group_release(win->post_group);
		win->post_group = NULL;
	}
	win->access = MPIL_EPOCH_NONE;
	win->nlocked = 0;
}
