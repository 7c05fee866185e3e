/*
 * win_lock_pf.h — the decisions of the passive-target lock (win_lock.c) as
 * pure functions: a phase-fair reader-writer ticket lock ([Brandenburg10],
 * the PF-T lock) on four 64-bit words of the target's control block, moved
 * only by fetch-add and read, so that NIC atomics can run it.
 *
 *   RIN  = readers in × RINC | writer phase bits (PRES | PHID)
 *   ROUT = readers out × RINC
 *   WIN  = writer tickets taken,  WOUT = writer tickets served
 *
 *   reader lock    w = FADD(RIN, RINC) & WBITS
 *                  if w: wait while (read(RIN) & WBITS) == w
 *   reader unlock  FADD(ROUT, RINC)
 *   writer lock    ticket = FADD(WIN, 1); wait until read(WOUT) == ticket
 *                  w = PRES | (ticket & PHID); seen = FADD(RIN, w)
 *                  wait until read(ROUT) == seen
 *   writer unlock  FADD(RIN, -w); FADD(WOUT, 1)
 *
 * Writers queue in ticket order. A writer that sets its phase bits counts
 * the readers already in (seen) and waits for exactly those to leave;
 * readers arriving after it see the bits and wait for the phase to change.
 * PHID alternates between consecutive writers, so readers blocked by one
 * writer enter as soon as it leaves, even when the next writer has already
 * set its own bits: phases alternate, and neither readers nor writers
 * starve. Writer unlock subtracts exactly the bits it added (RIN's low byte
 * holds only those while it holds the lock), two's complement.
 *
 * One locker's progress is a small machine: mpil_pf_op() says which word
 * to touch next and how (fetch-add or read), mpil_pf_result() consumes the
 * value the operation returned. The unit test (tests/unit/test_win_lock.c)
 * runs several machines on plain words through every interleaving; the
 * library runs one with remote atomics.
 */
#ifndef MPIL_WIN_LOCK_PF_H
#define MPIL_WIN_LOCK_PF_H

#include <stdbool.h>
#include <stdint.h>

#define MPIL_PF_RINC  0x100u
#define MPIL_PF_WBITS 0x3u
#define MPIL_PF_PRES  0x2u
#define MPIL_PF_PHID  0x1u

/* the four words, in control-block order (win_int.h: MPIL_WCTL_LOCK_*) */
enum { MPIL_PF_RIN, MPIL_PF_ROUT, MPIL_PF_WIN, MPIL_PF_WOUT };

enum mpil_pf_pc {
	MPIL_PF_IDLE,
	MPIL_PF_R_ENTER, /* FADD(RIN, RINC) */
	MPIL_PF_R_WAIT,	 /* read RIN until the writer bits change */
	MPIL_PF_R_HELD,
	MPIL_PF_R_EXIT,	  /* FADD(ROUT, RINC) */
	MPIL_PF_W_TICKET, /* FADD(WIN, 1) */
	MPIL_PF_W_TURN,	  /* read WOUT until it is our ticket */
	MPIL_PF_W_PHASE,  /* FADD(RIN, w): block new readers, count old ones */
	MPIL_PF_W_DRAIN,  /* read ROUT until the counted readers left */
	MPIL_PF_W_HELD,
	MPIL_PF_W_CLEAR, /* FADD(RIN, -w) */
	MPIL_PF_W_EXIT,	 /* FADD(WOUT, 1) */
};

/* One locker: where it is and what it learnt. */
typedef struct mpil_pf {
	uint8_t pc;	 /* enum mpil_pf_pc */
	uint64_t w;	 /* reader: the writer bits it saw; writer: its own */
	uint64_t ticket; /* writer: its ticket (TURN), then RIN as it saw it (DRAIN) */
} mpil_pf_t;

/* The next operation: a fetch-add of @add on @word, or a read of it. */
typedef struct mpil_pf_op {
	int word;
	bool read;
	uint64_t add;
} mpil_pf_op_t;

static inline void mpil_pf_lock(mpil_pf_t *l, bool exclusive)
{
	l->pc = exclusive ? MPIL_PF_W_TICKET : MPIL_PF_R_ENTER;
	l->w = 0;
	l->ticket = 0;
}

/* The release of a lock held with writer bits @w (0 for a reader). */
static inline void mpil_pf_unlock(mpil_pf_t *l, bool exclusive, uint64_t w)
{
	l->pc = exclusive ? MPIL_PF_W_CLEAR : MPIL_PF_R_EXIT;
	l->w = w;
}

static inline bool mpil_pf_held(const mpil_pf_t *l)
{
	return l->pc == MPIL_PF_R_HELD || l->pc == MPIL_PF_W_HELD;
}

/* A state that polls a word until someone else changes it. */
static inline bool mpil_pf_waiting(const mpil_pf_t *l)
{
	return l->pc == MPIL_PF_R_WAIT || l->pc == MPIL_PF_W_TURN || l->pc == MPIL_PF_W_DRAIN;
}

static inline mpil_pf_op_t mpil_pf_op(const mpil_pf_t *l)
{
	switch (l->pc) {
	case MPIL_PF_R_ENTER: return (mpil_pf_op_t){MPIL_PF_RIN, false, MPIL_PF_RINC};
	case MPIL_PF_R_WAIT: return (mpil_pf_op_t){MPIL_PF_RIN, true, 0};
	case MPIL_PF_R_EXIT: return (mpil_pf_op_t){MPIL_PF_ROUT, false, MPIL_PF_RINC};
	case MPIL_PF_W_TICKET: return (mpil_pf_op_t){MPIL_PF_WIN, false, 1};
	case MPIL_PF_W_TURN: return (mpil_pf_op_t){MPIL_PF_WOUT, true, 0};
	case MPIL_PF_W_PHASE: return (mpil_pf_op_t){MPIL_PF_RIN, false, l->w};
	case MPIL_PF_W_DRAIN: return (mpil_pf_op_t){MPIL_PF_ROUT, true, 0};
	case MPIL_PF_W_CLEAR: return (mpil_pf_op_t){MPIL_PF_RIN, false, (uint64_t)0 - l->w};
	case MPIL_PF_W_EXIT: return (mpil_pf_op_t){MPIL_PF_WOUT, false, 1};
	}
	/* IDLE and the HELD states touch nothing */
	return (mpil_pf_op_t){-1, true, 0};
}

/* @v: what the operation of mpil_pf_op() returned (the word before a
 * fetch-add, the word for a read). */
static inline void mpil_pf_result(mpil_pf_t *l, uint64_t v)
{
	switch (l->pc) {
	case MPIL_PF_R_ENTER:
		l->w = v & MPIL_PF_WBITS;
		l->pc = l->w ? MPIL_PF_R_WAIT : MPIL_PF_R_HELD;
		break;
	case MPIL_PF_R_WAIT:
		if ((v & MPIL_PF_WBITS) != l->w)
			l->pc = MPIL_PF_R_HELD;
		break;
	case MPIL_PF_W_TICKET:
		l->ticket = v;
		l->pc = MPIL_PF_W_TURN;
		break;
	case MPIL_PF_W_TURN:
		if (v == l->ticket) {
			l->w = MPIL_PF_PRES | (l->ticket & MPIL_PF_PHID);
			l->pc = MPIL_PF_W_PHASE;
		}
		break;
	case MPIL_PF_W_PHASE:
		l->ticket = v; /* readers in before us (low byte: 0, no writer) */
		l->pc = MPIL_PF_W_DRAIN;
		break;
	case MPIL_PF_W_DRAIN:
		if (v == l->ticket)
			l->pc = MPIL_PF_W_HELD;
		break;
	case MPIL_PF_W_CLEAR: l->pc = MPIL_PF_W_EXIT; break;
	case MPIL_PF_R_EXIT:
	case MPIL_PF_W_EXIT: l->pc = MPIL_PF_IDLE; break;
	}
}

#endif /* MPIL_WIN_LOCK_PF_H */
