/*
 * win_fast.h — the fast paths of the one-sided calls that move data: the
 * simple case done at once, before the general path (win_ops.c, win_acc.c)
 * builds its records, walks the target datatype and picks a method.
 *
 *   MPI_Put / MPI_Get     one contiguous datatype, the same on both sides  memcpy
 *   MPI_Accumulate        one 8-byte integer: XOR, OR, AND, SUM           lock xor / or / and / add
 *   MPI_Fetch_and_op      ... also REPLACE, NO_OP                         lock xadd, xchg, ...
 *   MPI_Compare_and_swap  one 8-byte integer                              lock cmpxchg
 *
 * always to a window part mapped here (a node-local member's
 * MPI_Win_allocate memory, a shared window, our own), inside an epoch that
 * is already open to the target. Everything else — other types or counts,
 * a part reached through a path, the first access under lock_all (which
 * takes the lock), and every error — returns false: the general path does
 * it, checks and reports. The CPU atomics are the ones the general path
 * uses on mapped memory, so both paths stay atomic with each other.
 */
#ifndef MPIL_WIN_FAST_H
#define MPIL_WIN_FAST_H

#include "win_int.h"

#include <string.h>

/* Inline in the entry points (win_ops.c, win_acc.c): a call would store
 * its return address, and a store still pending delays the locked
 * instruction (random XOR from 2 ranks: 15-20 % fewer updates through a call). */

/* What a fast path returns when the call is not its simple case: the
 * general path then does it (and finds and reports any error). */
#define MPIL_FAST_NO (-1)
/* In an entry point: return what the fast path did, unless it did not. */
#define MPIL_FAST_TRY(call)                                                                        \
	do {                                                                                       \
		int fast_rc_ = (call);                                                             \
		if (fast_rc_ != MPIL_FAST_NO)                                                      \
			return fast_rc_;                                                           \
	} while (0)

/*
 * Window rank @target's part when bytes [lo, lo + len) at @disp of it are
 * the simple case (their offset in *off_p), or NULL when they are not: an
 * invalid window or rank, a dynamic window, no open epoch to the target yet
 * (the first access under lock_all takes the lock), a displacement out of
 * range. NULL says nothing about errors: the general path checks and
 * reports. It stores nothing but *off_p (a register once inlined): every
 * store still in the store buffer delays a locked instruction that follows.
 */
static inline const mpil_win_target_t *fast_part(MPI_Win win, int target, MPI_Aint disp,
						 MPI_Aint lo, size_t len, MPI_Aint *off_p)
{
	const mpil_win_target_t *t;
	MPI_Aint off;

	if (!mpil_initialized() || !mpil_win_valid(win) ||
	    (unsigned)target >= (unsigned)win->size || win->flavor == MPI_WIN_FLAVOR_DYNAMIC)
		return NULL;
	t = &win->t[target];
	if (!mpil_win_epoch_open(win, t))
		return NULL;
	if (disp < 0 || lo < 0 || __builtin_mul_overflow(disp, (MPI_Aint)t->disp_unit, &off) ||
	    __builtin_add_overflow(off, lo, &off) || (uint64_t)off > t->size ||
	    t->size - (uint64_t)off < len)
		return NULL;
	*off_p = off;
	return t;
}

/* The bytes mapped here (load / store), or NULL. */
static inline char *fast_at(MPI_Win win, int target, MPI_Aint disp, MPI_Aint lo, size_t len)
{
	MPI_Aint off;
	const mpil_win_target_t *t = fast_part(win, target, disp, lo, len, &off);

	return t && t->local ? (char *)t->local + off : NULL;
}

/* Put / Get of one contiguous datatype, the same on both sides, inside an
 * open epoch: a memcpy to a part mapped here (Put 8 B + flush 19 -> 12
 * ns), else one engine operation completed by the next flush, before the
 * general path's records and walk. Anything else returns false: the
 * general path checks and reports; so does an engine refusal (nothing was
 * started, or a put or get started again does no harm). */
static inline __attribute__((always_inline)) bool xfer_fast(bool put, void *obuf, int count,
							    MPI_Datatype odt, int target,
							    MPI_Aint disp, int tcount,
							    MPI_Datatype tdt, MPI_Win win)
{
	const mpil_win_target_t *t;
	MPI_Aint off;
	ibx_status_t st;
	char *o;
	size_t n;

	if (count <= 0 || tcount != count || odt != tdt || !obuf || !mpil_dt_valid(tdt) ||
	    (tdt->flags & (MPIL_DTF_CONTIG | MPIL_DTF_COMMITTED)) !=
		(MPIL_DTF_CONTIG | MPIL_DTF_COMMITTED) ||
	    __builtin_mul_overflow((size_t)count, tdt->size, &n) || n == 0)
		return false;
	t = fast_part(win, target, disp, tdt->true_lb, n, &off);
	if (!t)
		return false;
	o = (char *)obuf + tdt->true_lb;
	if (t->local) {
		if (put)
			memcpy((char *)t->local + off, o, n);
		else
			memcpy(o, (char *)t->local + off, n);
	} else {
		if (!t->rk)
			return false;
		st = put ? ibx_put(mpil_g.ctx, o, n, t->base + (uint64_t)off, t->rk, NULL)
			 : ibx_get(mpil_g.ctx, o, n, t->base + (uint64_t)off, t->rk, NULL);
		if (st != IBX_OK && st != IBX_INPROGRESS)
			return false;
	}
	mpil_win_dirty(win, target);
	return true;
}

static inline __attribute__((always_inline)) bool mpil_win_put_fast(const void *obuf, int count,
								    MPI_Datatype odt, int target,
								    MPI_Aint disp, int tcount,
								    MPI_Datatype tdt, MPI_Win win)
{
	return xfer_fast(true, (void *)obuf, count, odt, target, disp, tcount, tdt, win);
}

static inline __attribute__((always_inline)) bool mpil_win_get_fast(void *obuf, int count,
								    MPI_Datatype odt, int target,
								    MPI_Aint disp, int tcount,
								    MPI_Datatype tdt, MPI_Win win)
{
	return xfer_fast(false, obuf, count, odt, target, disp, tcount, tdt, win);
}

/* An atomic the NIC (or the path) does exactly, on a part not mapped
 * here, started without a request: like MPI_Get's, it completes — and
 * writes @res, if any — at the flush, unlock, fence or complete that ends
 * it, where MPI lets the caller read the result; a failure is reported
 * there. (Waiting here would be a second poll loop per call.) Not started:
 * MPIL_FAST_NO, the general path tries and reports. */
static inline int amo_remote(const mpil_win_target_t *t, MPI_Aint off, ibx_atomic_op_t eop,
			     uint64_t v, uint64_t cmpv, void *res, MPI_Win win, int target)
{
	uint64_t raddr = t->base + (uint64_t)off;
	ibx_status_t st;

	/* the engine stores the result as a word */
	if (!t->rk || (raddr & 7) || ((uintptr_t)res & 7))
		return MPIL_FAST_NO;
	st = ibx_atomic(mpil_g.ctx, eop, v, cmpv, res, raddr, t->rk, NULL);
	if (st != IBX_OK && st != IBX_INPROGRESS)
		return MPIL_FAST_NO;
	mpil_win_dirty(win, target);
	return MPI_SUCCESS;
}

/*
 * The common atomics at once: one 8-byte integer of a predefined type —
 * MPI_Accumulate with XOR / OR / AND / SUM, MPI_Fetch_and_op with those,
 * MPI_REPLACE or MPI_NO_OP, MPI_Compare_and_swap (@cmp) — inside an epoch
 * open to the target. On a part mapped here, aligned: the CPU atomic. The
 * general path's layers (its call record, the target walk, the element
 * record) are stores, and every store still in the store buffer delays the
 * locked instruction that follows: random 8-byte XORs from 2 ranks into
 * Win_allocate memory ran 27 M updates/s per rank where the bare `lock
 * xor` runs 196 M. Without a result nothing is fetched (`lock xor`, not a
 * compare-exchange loop). On a part reached through the engine, the forms
 * the NIC does exactly (SUM as add or fetch-and-add, NO_OP as fetch-and-add
 * of 0, REPLACE as swap, compare-and-swap), completed at the epoch's next
 * synchronisation: the same atomics the general path uses there. Returns
 * MPI_SUCCESS or MPIL_FAST_NO: anything else, errors included, for the
 * general path.
 */
static inline __attribute__((always_inline)) int amo_fast(MPI_Op op, const void *in,
							  const void *cmp, void *res,
							  MPI_Datatype dt, int target,
							  MPI_Aint disp, MPI_Win win)
{
	const mpil_win_target_t *t;
	uint64_t v = 0, old, *w;
	MPI_Aint off;
	bool word_op; /* XOR, OR, AND, SUM: the four without a result too */
	int id;

	if (!mpil_dt_valid(dt) ||
	    (dt->flags & (MPIL_DTF_PREDEFINED | MPIL_DTF_COMMITTED)) !=
		(MPIL_DTF_PREDEFINED | MPIL_DTF_COMMITTED) ||
	    !mpil_win_int8(dt) || !op || op->magic != MPIL_MAGIC_OP || !op->predefined)
		return MPIL_FAST_NO;
	id = op->id;
	if (id != MPIL_OP_REPLACE && id != MPIL_OP_NO_OP && !(op->groups & dt->group))
		return MPIL_FAST_NO;
	word_op =
	    id == MPIL_OP_BXOR || id == MPIL_OP_BOR || id == MPIL_OP_BAND || id == MPIL_OP_SUM;
	if (!word_op && !(res && (id == MPIL_OP_REPLACE || id == MPIL_OP_NO_OP)))
		return MPIL_FAST_NO;
	if ((id != MPIL_OP_NO_OP && !in) || (cmp && id != MPIL_OP_REPLACE))
		return MPIL_FAST_NO;
	t = fast_part(win, target, disp, 0, 8, &off);
	if (!t)
		return MPIL_FAST_NO;
	if (id != MPIL_OP_NO_OP)
		memcpy(&v, in, 8);
	if (!t->local) {
		uint64_t cmpv = 0;

		if (cmp) {
			memcpy(&cmpv, cmp, 8);
			return amo_remote(t, off, IBX_ATOMIC_CSWAP, v, cmpv, res, win, target);
		}
		if (id == MPIL_OP_SUM && !res)
			return amo_remote(t, off, IBX_ATOMIC_ADD, v, 0, NULL, win, target);
		if (id == MPIL_OP_SUM || id == MPIL_OP_NO_OP)
			return amo_remote(t, off, IBX_ATOMIC_FADD, v, 0, res, win, target);
		if (id == MPIL_OP_REPLACE)
			return amo_remote(t, off, IBX_ATOMIC_SWAP, v, 0, res, win, target);
		return MPIL_FAST_NO; /* XOR, OR, AND: a compare-and-swap loop */
	}
	w = (uint64_t *)(void *)((char *)t->local + off);
	if ((uintptr_t)w & 7)
		return MPIL_FAST_NO;
	if (cmp) {
		memcpy(&old, cmp, 8);
		__atomic_compare_exchange_n(w, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else if (!res) {
		switch (id) {
		case MPIL_OP_BXOR: __atomic_fetch_xor(w, v, __ATOMIC_SEQ_CST); break;
		case MPIL_OP_BOR: __atomic_fetch_or(w, v, __ATOMIC_SEQ_CST); break;
		case MPIL_OP_BAND: __atomic_fetch_and(w, v, __ATOMIC_SEQ_CST); break;
		default: __atomic_fetch_add(w, v, __ATOMIC_SEQ_CST); break;
		}
	} else {
		switch (id) {
		case MPIL_OP_BXOR: old = __atomic_fetch_xor(w, v, __ATOMIC_SEQ_CST); break;
		case MPIL_OP_BOR: old = __atomic_fetch_or(w, v, __ATOMIC_SEQ_CST); break;
		case MPIL_OP_BAND: old = __atomic_fetch_and(w, v, __ATOMIC_SEQ_CST); break;
		case MPIL_OP_SUM: old = __atomic_fetch_add(w, v, __ATOMIC_SEQ_CST); break;
		case MPIL_OP_REPLACE: old = __atomic_exchange_n(w, v, __ATOMIC_SEQ_CST); break;
		default: old = __atomic_load_n(w, __ATOMIC_SEQ_CST); break;
		}
	}
	if (res)
		memcpy(res, &old, 8);
	mpil_win_dirty(win, target); /* as the general path: a flush has work */
	return MPI_SUCCESS;
}

static inline __attribute__((always_inline)) int
mpil_win_acc_fast(const void *obuf, int ocount, MPI_Datatype odt, int target, MPI_Aint disp,
		  int tcount, MPI_Datatype tdt, MPI_Op op, MPI_Win win)
{
	if (ocount != 1 || tcount != 1 || odt != tdt)
		return MPIL_FAST_NO;
	return amo_fast(op, obuf, NULL, NULL, tdt, target, disp, win);
}

static inline __attribute__((always_inline)) int mpil_win_fop_fast(const void *obuf, void *res,
								   MPI_Datatype dt, int target,
								   MPI_Aint disp, MPI_Op op,
								   MPI_Win win)
{
	if (!res)
		return MPIL_FAST_NO;
	return amo_fast(op, obuf, NULL, res, dt, target, disp, win);
}

static inline __attribute__((always_inline)) int mpil_win_cas_fast(const void *obuf,
								   const void *cmp, void *res,
								   MPI_Datatype dt, int target,
								   MPI_Aint disp, MPI_Win win)
{
	if (!obuf || !cmp || !res)
		return MPIL_FAST_NO;
	return amo_fast(MPI_REPLACE, obuf, cmp, res, dt, target, disp, win);
}

#endif /* MPIL_WIN_FAST_H */
