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

/*
 * The fast paths of the calls that move data (win_ops.c, win_acc.c): where
 * bytes [lo, lo + len) at @disp of window rank @target are mapped here, or
 * NULL when this is not the simple case — an invalid window or rank, a
 * dynamic window, no open epoch to the target yet (the first access under
 * lock_all takes the lock), memory not mapped, a displacement out of range.
 * NULL says nothing about errors: the general path then checks and reports.
 * It stores nothing: every store still in the store buffer delays a
 * locked instruction that follows.
 */
static inline char *fast_at(MPI_Win win, int target, MPI_Aint disp, MPI_Aint lo, size_t len)
{
	const mpil_win_target_t *t;
	MPI_Aint off;

	if (!mpil_initialized() || !mpil_win_valid(win) ||
	    (unsigned)target >= (unsigned)win->size || win->flavor == MPI_WIN_FLAVOR_DYNAMIC)
		return NULL;
	t = &win->t[target];
	switch (win->access) {
	case MPIL_EPOCH_FENCE: break;
	case MPIL_EPOCH_PSCW:
		if (!t->pscw_target)
			return NULL;
		break;
	case MPIL_EPOCH_LOCK:
	case MPIL_EPOCH_LOCK_ALL:
		if (!t->lock_type)
			return NULL;
		break;
	default: return NULL;
	}
	if (!t->local || disp < 0 || lo < 0 ||
	    __builtin_mul_overflow(disp, (MPI_Aint)t->disp_unit, &off) ||
	    __builtin_add_overflow(off, lo, &off) || (uint64_t)off > t->size ||
	    t->size - (uint64_t)off < len)
		return NULL;
	return (char *)t->local + off;
}

/* Put / Get of one contiguous datatype, the same on both sides, to
 * a part mapped here inside an open epoch: a memcpy before the general
 * path's records and walk (Put 8 B + flush 19 -> 12 ns). Anything else,
 * errors included, returns false: the general path checks and reports. */
static inline __attribute__((always_inline)) bool xfer_fast(bool put, void *obuf, int count,
							    MPI_Datatype odt, int target,
							    MPI_Aint disp, int tcount,
							    MPI_Datatype tdt, MPI_Win win)
{
	char *at;
	size_t n;

	if (count <= 0 || tcount != count || odt != tdt || !obuf || !mpil_dt_valid(tdt) ||
	    (tdt->flags & (MPIL_DTF_CONTIG | MPIL_DTF_COMMITTED)) !=
		(MPIL_DTF_CONTIG | MPIL_DTF_COMMITTED) ||
	    __builtin_mul_overflow((size_t)count, tdt->size, &n) || n == 0)
		return false;
	at = fast_at(win, target, disp, tdt->true_lb, n);
	if (!at)
		return false;
	if (put)
		memcpy(at, (char *)obuf + tdt->true_lb, n);
	else
		memcpy((char *)obuf + tdt->true_lb, at, n);
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

/*
 * The common atomics, by the CPU at once: one 8-byte integer of a
 * predefined type — MPI_Accumulate with XOR / OR / AND / SUM,
 * MPI_Fetch_and_op with those, MPI_REPLACE or MPI_NO_OP, MPI_Compare_and_swap
 * (@cmp) — on a member whose part is mapped here, aligned, inside an open
 * epoch. The general path's layers (its call record, the target walk, the
 * element record) are stores, and every store still in the store buffer
 * delays the locked instruction that follows: random 8-byte XORs from 2
 * ranks into Win_allocate memory ran 27 M updates/s per rank where the
 * bare `lock xor` runs 196 M. Without a result nothing is fetched (`lock
 * xor`, not a compare-exchange loop). Anything else, any error included,
 * returns false and takes the general path, which checks and reports it.
 */
static inline __attribute__((always_inline)) bool amo_fast(MPI_Op op, const void *in,
							   const void *cmp, void *res,
							   MPI_Datatype dt, int target,
							   MPI_Aint disp, MPI_Win win)
{
	uint64_t v = 0, old, *w;
	int id;

	if (!mpil_dt_valid(dt) ||
	    (dt->flags & (MPIL_DTF_PREDEFINED | MPIL_DTF_COMMITTED)) !=
		(MPIL_DTF_PREDEFINED | MPIL_DTF_COMMITTED) ||
	    !mpil_win_int8(dt) || !op || op->magic != MPIL_MAGIC_OP || !op->predefined)
		return false;
	id = op->id;
	if (id != MPIL_OP_REPLACE && id != MPIL_OP_NO_OP && !(op->groups & dt->group))
		return false;
	if (res ? (id != MPIL_OP_NO_OP && !in) || (cmp && id != MPIL_OP_REPLACE)
		: !in || (id != MPIL_OP_BXOR && id != MPIL_OP_BOR && id != MPIL_OP_BAND &&
			  id != MPIL_OP_SUM))
		return false;
	if (id != MPIL_OP_BXOR && id != MPIL_OP_BOR && id != MPIL_OP_BAND && id != MPIL_OP_SUM &&
	    id != MPIL_OP_REPLACE && id != MPIL_OP_NO_OP)
		return false;
	w = (uint64_t *)(void *)fast_at(win, target, disp, 0, 8);
	if (!w || ((uintptr_t)w & 7))
		return false;
	if (id != MPIL_OP_NO_OP)
		memcpy(&v, in, 8);
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
	return true;
}

static inline __attribute__((always_inline)) bool
mpil_win_acc_fast(const void *obuf, int ocount, MPI_Datatype odt, int target, MPI_Aint disp,
		  int tcount, MPI_Datatype tdt, MPI_Op op, MPI_Win win)
{
	return ocount == 1 && tcount == 1 && odt == tdt &&
	       amo_fast(op, obuf, NULL, NULL, tdt, target, disp, win);
}

static inline __attribute__((always_inline)) bool mpil_win_fop_fast(const void *obuf, void *res,
								    MPI_Datatype dt, int target,
								    MPI_Aint disp, MPI_Op op,
								    MPI_Win win)
{
	return res && amo_fast(op, obuf, NULL, res, dt, target, disp, win);
}

static inline __attribute__((always_inline)) bool mpil_win_cas_fast(const void *obuf,
								    const void *cmp, void *res,
								    MPI_Datatype dt, int target,
								    MPI_Aint disp, MPI_Win win)
{
	return obuf && cmp && res && amo_fast(MPI_REPLACE, obuf, cmp, res, dt, target, disp, win);
}

#endif /* MPIL_WIN_FAST_H */
