/*
 * win_acc.c — MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op,
 * MPI_Compare_and_swap, MPI_Raccumulate, MPI_Rget_accumulate (MPI-3.1
 * §11.3.4-11.3.7) and the element-wise atomicity they promise: every
 * accumulate-type operation on a target element, from any origin, is atomic
 * with respect to every other one on that element with the same type.
 *
 * All buffers of a call are made of one predefined type B (origin, result
 * and target datatypes may be derived from it; MPI_ERR_TYPE else); the op
 * is predefined and defined on B (MPI_ERR_OP; MPI_NO_OP only where
 * something is fetched). One method per (B, element address), the same at
 * every origin, so that no two origins update an element by methods that
 * do not exclude each other (within the engine's guarantee: its atomics
 * are atomic per kind of path, CPU or NIC — docs/design.md):
 *
 *   B                                       element                      method
 *   ─────────────────────────────────────── ──────────────────────────── ──────
 *   integers, float, double, bool, byte,    in one aligned 8-byte word   WORD
 *   char, wchar, Aint/Offset/Count (<= 8 B) wholly inside the target key
 *   the same                                anywhere else                LOCK
 *   long double, complex, MAXLOC pairs      anywhere                     LOCK
 *
 * WORD, an atomic on the word holding the element (enum amo_how): CPU
 * atomics when the memory is mapped here and allocated (MPI_Win_allocate /
 * _shared: node-local origins use the same instructions, [Zhou15]) —
 * fetch-add/and/or/xor or exchange for 8-byte integer SUM/BAND/BOR/BXOR or
 * REPLACE, else a CAS loop (apply the op kernel to the element inside the
 * word, compare-and-swap, retry with the word met); otherwise ibx_atomic
 * (CMA, verbs, our own created memory whose atomics take the owner's RMW
 * lock) — ADD/FADD, SWAP, one CSWAP for an 8-byte Compare_and_swap, CSWAP
 * loops for the rest, 16 elements in flight. An element under 8 bytes
 * starts from a plain read of its word and writes only if the operation
 * changes it (amo_unchanged): the NIC's CSWAP writes all 8 bytes, and must
 * not undo a put into the other bytes of the word.
 *
 * An operation on more than one element also holds the target's
 * accumulate lock from its first element to its last (acc_run), each
 * element still taking its method: operations never interleave with each
 * other, as in Open MPI and MPICH, and single-element ones (lock-free)
 * stay atomic with them element by element.
 *
 * LOCK, under the target's accumulate lock (win_lock.c):
 *
 *   origin ──acc_lock(target)──► get ──► op ──► put ──► flush ──► acc_unlock
 *
 * Ordering: with the default accumulate_ordering an operation is complete
 * at the target when the call returns (fetches and CAS loops wait for
 * their results; fire-and-forget ADDs are followed by a flush), so the
 * accumulates of one origin land in program order; accumulate_ordering=none
 * skips that flush. Request forms complete before returning the request.
 *
 * Length: the two methods, the argument checks and the six entry points
 * share the private call record (acc_t) and its helpers; split, they
 * would all have to be exported.
 */
#include "win_fast.h"
#include "win_int.h"
#include "dtype_rdma/dtype.h"

#include <stdlib.h>

#define ACC_BATCH 16 /* engine atomics in flight per round */

/* ---- one operation ------------------------------------------------------------------------ */

typedef struct acc {
	/* the call: origin, result (fetch: Get_accumulate, Fetch_and_op,
	 * Compare_and_swap) and target buffers; single: one element of a
	 * predefined type (in @groups, if not 0); cmp: the compare value */
	const void *obuf;
	void *rbuf;
	MPI_Datatype odt, rdt, tdt;
	int ocount, rcount, tcount, target;
	MPI_Aint disp;
	MPI_Op op;
	bool fetch, single;
	unsigned groups;
	MPI_Request *request; /* the request forms (rform) */
	bool rform;
	const char *cmp;
	MPI_Win win;
	const char *fname;
	/* what it became: B, its size, the target bytes covered, origin and
	 * result packed (in: unused by MPI_NO_OP; res: NULL without fetch) */
	mpil_win_where_t w;
	MPI_Datatype basic;
	size_t es, nbytes;
	const char *in;
	char *res;
	bool cpu;	/* CPU atomics on w.local */
	bool in_flight; /* fire-and-forget engine atomics were started */
	bool locked;	/* the whole operation holds the target's accumulate lock */
} acc_t;

/* Whether B's elements may take the WORD method at all. */
static bool word_type(MPI_Datatype b)
{
	return b->size <= 8 && !(b->group & (MPIL_DTG_COMPLEX | MPIL_DTG_PAIR));
}

/* Target address @raddr as a pointer here (w.local is set). */
static inline char *local_at(const acc_t *a, uint64_t raddr)
{
	return a->w.local + (raddr - a->w.raddr);
}

/* Whether @raddr lies in the key's range (its end included). */
static inline bool key_has(const acc_t *a, uint64_t raddr)
{
	void *p;

	return ibx_rkey_ptr(a->w.rk, raddr, &p) != IBX_ERR_INVALID_PARAM;
}

/* ---- WORD: one atomic per element, on the 8-byte word that holds it ------------------------ */

/* The atomic an element takes (the same decision for CPU and engine). */
enum amo_how {
	AMO_LOOP,  /* CAS of the word with the element updated, retried */
	AMO_CSWAP, /* 8-byte Compare_and_swap: one CAS */
	AMO_SWAP,  /* 8-byte REPLACE */
	AMO_ADD,   /* 8-byte integer SUM, nothing fetched (engine: complete at flush) */
	AMO_FADD,  /* 8-byte integer SUM; MPI_NO_OP: adding 0, an atomic read */
	/* 8-byte BAND, BOR, BXOR: CPU only (the NIC has no such atomics) */
	AMO_AND,
	AMO_OR,
	AMO_XOR
};

static const ibx_atomic_op_t amo_engine_op[] = {
    [AMO_LOOP] = IBX_ATOMIC_CSWAP, [AMO_CSWAP] = IBX_ATOMIC_CSWAP, [AMO_SWAP] = IBX_ATOMIC_SWAP,
    [AMO_ADD] = IBX_ATOMIC_ADD,	   [AMO_FADD] = IBX_ATOMIC_FADD,
};

typedef struct amo {
	uint64_t waddr; /* the word (target address) */
	unsigned shift; /* the (first) element's offset in it */
	unsigned n;	/* consecutive elements in the word (a CAS loop), else 1 */
	int how;	/* enum amo_how */
	uint64_t val;	/* the operand (CSWAP: the swap value) */
	uint64_t guess; /* CSWAP: the compare value; LOOP: the word we think is there */
	uint64_t seen;	/* what the atomic found */
	int64_t poff;	/* the element's packed offset */
	bool done, started;
	bool read;	  /* engine, element under 8 bytes: read the word first (amo_read) */
	ibx_request_t rq; /* engine atomics */
} amo_t;

/* The word @w with the element at @shift updated by the origin element
 * at packed offset @poff (Compare_and_swap: replaced if it equals cmp). */
static uint64_t word_apply(const acc_t *a, uint64_t w, unsigned shift, int64_t poff)
{
	char *e = (char *)&w + shift;
	uint64_t in = 0, io = 0;

	if (a->cmp) {
		if (memcmp(e, a->cmp, a->es) == 0)
			memcpy(e, a->in, a->es);
		return w;
	}
	switch (a->op->id) {
	case MPIL_OP_NO_OP: return w;
	case MPIL_OP_REPLACE: memcpy(e, a->in + poff, a->es); return w;
	default:
		memcpy(&in, a->in + poff, a->es);
		memcpy(&io, e, a->es);
		a->op->kernel(&in, &io, 1, (mpil_dt_kind_t)a->basic->kind);
		memcpy(e, &io, a->es);
		return w;
	}
}

static void amo_prepare(const acc_t *a, amo_t *s, uint64_t raddr, int64_t poff)
{
	int id = a->op->id;

	memset(s, 0, offsetof(amo_t, rq)); /* not the request: a CPU atomic has none */
	s->waddr = raddr & ~(uint64_t)7;
	s->shift = (unsigned)(raddr & 7);
	s->n = 1;
	s->poff = poff;
	s->read = !a->cpu && a->es < 8;
	if (!a->cmp && id == MPIL_OP_NO_OP && !s->read) {
		s->how = AMO_FADD;
		return;
	}
	if (a->es != 8)
		return;
	if (a->cmp) {
		s->how = AMO_CSWAP;
		memcpy(&s->guess, a->cmp, 8);
		memcpy(&s->val, a->in, 8);
		return;
	}
	memcpy(&s->val, a->in + poff, 8);
	if (id == MPIL_OP_REPLACE)
		s->how = AMO_SWAP;
	else if (id == MPIL_OP_SUM && mpil_win_int8(a->basic))
		s->how = a->res || a->cpu ? AMO_FADD : AMO_ADD;
	else if (a->cpu && (id == MPIL_OP_BAND || id == MPIL_OP_BOR || id == MPIL_OP_BXOR))
		s->how = id == MPIL_OP_BAND ? AMO_AND : id == MPIL_OP_BOR ? AMO_OR : AMO_XOR;
}

/* The word @w with the @s's elements updated. */
static uint64_t amo_apply(const acc_t *a, const amo_t *s, uint64_t w)
{
	for (unsigned i = 0; i < s->n; i++)
		w = word_apply(a, w, s->shift + i * (unsigned)a->es,
			       s->poff + (int64_t)(i * a->es));
	return w;
}

/* The value the atomic writes. */
static uint64_t amo_new(const acc_t *a, const amo_t *s)
{
	return s->how == AMO_LOOP ? amo_apply(a, s, s->guess) : s->val;
}

static void amo_result(const acc_t *a, amo_t *s)
{
	s->done = true;
	if (a->res)
		memcpy(a->res + s->poff, (char *)&s->seen + s->shift, s->n * a->es);
}

/* A CAS loop whose element the operation leaves as it is (a compare that
 * fails, MPI_NO_OP, ...) is done without writing: the word met is the
 * answer. Over the NIC this matters: its compare-and-swap writes all 8
 * bytes back, and a plain put into the word's other bytes (another
 * element, not under any lock: a lock word next to the counter it guards)
 * that lands between the NIC's read and write would be undone. */
static bool amo_unchanged(const acc_t *a, amo_t *s)
{
	if (s->how != AMO_LOOP || amo_apply(a, s, s->guess) != s->guess)
		return false;
	s->seen = s->guess;
	amo_result(a, s);
	return true;
}

/* The atomic has returned: done, or (a CAS loop that met another value)
 * to be tried again with the value it met. */
static void amo_settle(const acc_t *a, amo_t *s)
{
	if (s->how == AMO_LOOP && s->seen != s->guess) {
		s->guess = s->seen;
		amo_unchanged(a, s);
		return;
	}
	amo_result(a, s);
}

/* With CPU instructions on the mapped word; without a result nothing is
 * fetched (a fetching XOR is a load and a compare-exchange loop). */
static void amo_cpu(const acc_t *a, amo_t *s)
{
	uint64_t *w = (uint64_t *)(void *)local_at(a, s->waddr);

	if (!a->res) {
		switch (s->how) {
		case AMO_FADD:
			if (s->val) /* else MPI_NO_OP: nothing to do */
				__atomic_fetch_add(w, s->val, __ATOMIC_SEQ_CST);
			return;
		case AMO_AND: __atomic_fetch_and(w, s->val, __ATOMIC_SEQ_CST); return;
		case AMO_OR: __atomic_fetch_or(w, s->val, __ATOMIC_SEQ_CST); return;
		case AMO_XOR: __atomic_fetch_xor(w, s->val, __ATOMIC_SEQ_CST); return;
		default: break; /* SWAP, CSWAP, LOOP: below */
		}
	}
	switch (s->how) {
	case AMO_FADD:
		s->seen = s->val ? __atomic_fetch_add(w, s->val, __ATOMIC_SEQ_CST)
				 : __atomic_load_n(w, __ATOMIC_SEQ_CST);
		break;
	case AMO_SWAP: s->seen = __atomic_exchange_n(w, s->val, __ATOMIC_SEQ_CST); break;
	case AMO_AND: s->seen = __atomic_fetch_and(w, s->val, __ATOMIC_SEQ_CST); break;
	case AMO_OR: s->seen = __atomic_fetch_or(w, s->val, __ATOMIC_SEQ_CST); break;
	case AMO_XOR: s->seen = __atomic_fetch_xor(w, s->val, __ATOMIC_SEQ_CST); break;
	default: /* CSWAP, LOOP: a failed CAS stores what it met in seen */
		s->seen = s->guess;
		__atomic_compare_exchange_n(w, &s->seen, amo_new(a, s), false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
		break;
	}
}

static void cpu_elem(const acc_t *a, uint64_t raddr, int64_t poff)
{
	amo_t s;

	amo_prepare(a, &s, raddr, poff);
	if (s.how == AMO_LOOP) /* start from what is there */
		s.guess =
		    __atomic_load_n((uint64_t *)(void *)local_at(a, s.waddr), __ATOMIC_RELAXED);
	do {
		amo_cpu(a, &s);
		amo_settle(a, &s);
	} while (!s.done);
}

/* @n consecutive elements from @raddr, all in one word, with one CPU
 * compare-and-swap of the word (retried while another update slips in):
 * each element's update is atomic, as MPI asks, and a word of 8 bytes
 * costs one atomic instead of 8. */
static void cpu_word_run(const acc_t *a, uint64_t raddr, unsigned n, int64_t poff)
{
	uint64_t *w = (uint64_t *)(void *)local_at(a, raddr & ~(uint64_t)7);
	unsigned shift = (unsigned)(raddr & 7);
	uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED), nv;

	do {
		nv = old;
		for (unsigned i = 0; i < n; i++)
			nv = word_apply(a, nv, shift + i * (unsigned)a->es,
					poff + (int64_t)(i * a->es));
	} while (
	    !__atomic_compare_exchange_n(w, &old, nv, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	if (a->res)
		for (unsigned i = 0; i < n; i++)
			memcpy(a->res + poff + (int64_t)(i * a->es),
			       (char *)&old + shift + i * a->es, a->es);
}

/* Words a CPU block batch reads, computes and swaps at a time. */
#define CPU_BATCH_WORDS 256

/* The whole words [w0, w0 + 8n) of a contiguous block (element size
 * dividing 8, the block starting on an element boundary), the origin's
 * elements from packed offset @poff: the new words are computed by one
 * kernel call per batch from plain loads, then each swapped in by a
 * compare-and-swap against what was loaded; a word changed meanwhile (a
 * single-element atomic from another origin) is done again on its own by
 * cpu_word_run. Each element's update stays atomic, and the kernel runs
 * once per 2 KiB instead of once per element. */
static void cpu_words(const acc_t *a, uint64_t w0, size_t n, int64_t poff)
{
	uint64_t old[CPU_BATCH_WORDS], nv[CPU_BATCH_WORDS];
	unsigned per = (unsigned)(8 / a->es);
	int id = a->op->id;

	for (size_t done = 0; done < n;) {
		size_t k = n - done < CPU_BATCH_WORDS ? n - done : CPU_BATCH_WORDS;
		uint64_t *w = (uint64_t *)(void *)local_at(a, w0 + 8 * done);
		int64_t p = poff + (int64_t)(8 * done);

		for (size_t i = 0; i < k; i++)
			old[i] = __atomic_load_n(&w[i], __ATOMIC_RELAXED);
		memcpy(nv, old, 8 * k);
		if (id == MPIL_OP_REPLACE)
			memcpy(nv, a->in + p, 8 * k);
		else if (id != MPIL_OP_NO_OP)
			a->op->kernel(a->in + p, nv, k * per, (mpil_dt_kind_t)a->basic->kind);
		for (size_t i = 0; i < k; i++) {
			uint64_t seen = old[i];

			if (nv[i] == old[i] ||
			    __atomic_compare_exchange_n(&w[i], &seen, nv[i], false,
							__ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
				if (a->res)
					memcpy(a->res + p + (int64_t)(8 * i), &old[i], 8);
				continue;
			}
			cpu_word_run(a, w0 + 8 * (done + i), per, p + (int64_t)(8 * i));
		}
		done += k;
	}
}

/* A contiguous block of the target by CPU atomics: its partial words at
 * either end element by element within the word, its whole words in
 * batches (cpu_words). */
static void cpu_block(const acc_t *a, uint64_t raddr, uint64_t end, int64_t poff)
{
	uint64_t w0 = (raddr + 7) & ~(uint64_t)7, w1 = end & ~(uint64_t)7, mid;

	if (w0 >= w1) { /* no whole word: the elements of one word, or of two */
		mid = w0 < end ? w0 : end;
		if (mid > raddr)
			cpu_word_run(a, raddr, (unsigned)((mid - raddr) / a->es), poff);
		if (end > mid)
			cpu_word_run(a, mid, (unsigned)((end - mid) / a->es),
				     poff + (int64_t)(mid - raddr));
		return;
	}
	if (raddr < w0)
		cpu_word_run(a, raddr, (unsigned)((w0 - raddr) / a->es), poff);
	cpu_words(a, w0, (size_t)(w1 - w0) / 8, poff + (int64_t)(w0 - raddr));
	if (end > w1)
		cpu_word_run(a, w1, (unsigned)((end - w1) / a->es), poff + (int64_t)(w1 - raddr));
}

/* With the engine: started here, waited for in amo_run. */
static ibx_status_t amo_start(acc_t *a, amo_t *s)
{
	bool add = s->how == AMO_ADD; /* nothing to wait for: complete at the flush */
	ibx_status_t st;

	s->rq.cb = NULL;
	st = ibx_atomic(mpil_g.ctx, amo_engine_op[s->how], amo_new(a, s), s->guess,
			add ? NULL : &s->seen, s->waddr, a->w.rk, add ? NULL : &s->rq);
	a->in_flight |= add;
	s->started = !add && (st == IBX_OK || st == IBX_INPROGRESS);
	s->done = add && (st == IBX_OK || st == IBX_INPROGRESS);
	return st == IBX_INPROGRESS ? IBX_OK : st;
}

typedef struct amo_batch {
	int n;
	amo_t s[ACC_BATCH];
} amo_batch_t;

/* Waits for an engine read or atomic that @s started; false (and the
 * first failure kept in @first) if it did not complete. */
static bool amo_wait(amo_t *s, ibx_status_t *first)
{
	ibx_status_t st;

	s->started = false;
	if ((st = mpil_ibx_wait(&s->rq)) == IBX_OK)
		return true;
	if (*first == IBX_OK)
		*first = st;
	return false;
}

/* Elements under 8 bytes through the engine start from the word as it is,
 * read (RDMA READ, CMA or a load), never from an atomic that writes it
 * back; a CAS loop starts from it and may end there (amo_unchanged: so
 * does MPI_NO_OP, which changes nothing). */
static ibx_status_t amo_read(acc_t *a, amo_batch_t *b)
{
	ibx_status_t first = IBX_OK;

	for (int i = 0; i < b->n; i++) {
		amo_t *s = &b->s[i];
		ibx_status_t st;

		if (!s->read)
			continue;
		s->rq.cb = NULL;
		st = ibx_get(mpil_g.ctx, &s->seen, 8, s->waddr, a->w.rk, &s->rq);
		s->started = st == IBX_OK || st == IBX_INPROGRESS;
		if (!s->started && first == IBX_OK)
			first = st;
	}
	for (int i = 0; i < b->n; i++) {
		amo_t *s = &b->s[i];

		if (!s->started || !amo_wait(s, &first))
			continue;
		s->guess = s->seen;
		amo_unchanged(a, s);
	}
	return first;
}

/* Runs the batch until every element is done; waits for everything it
 * started, also after a failure (the requests live here). */
static ibx_status_t amo_run(acc_t *a, amo_batch_t *b)
{
	ibx_status_t first = amo_read(a, b);
	bool again = true;

	while (again && first == IBX_OK) {
		again = false;
		for (int i = 0; i < b->n && first == IBX_OK; i++)
			if (!b->s[i].done)
				first = amo_start(a, &b->s[i]);
		for (int i = 0; i < b->n; i++) {
			amo_t *s = &b->s[i];

			if (!s->started)
				continue;
			if (amo_wait(s, &first))
				amo_settle(a, s);
			again |= !s->done;
		}
	}
	b->n = 0;
	return first;
}

/* ---- LOCK: under the target's accumulate lock -------------------------------------------- */

typedef struct tmove {
	const acc_t *a;
	char *tmp; /* packed target bytes, from stream offset base_poff */
	int64_t base_poff;
	bool put;
} tmove_t;

static ibx_status_t tmove_block(void *arg, int64_t poff, void *addr, size_t len)
{
	const tmove_t *m = arg;
	const acc_t *a = m->a;
	uint64_t raddr = (uint64_t)(uintptr_t)addr;
	char *t = m->tmp + (poff - m->base_poff);
	ibx_status_t st;

	if (a->w.local) {
		memcpy(m->put ? local_at(a, raddr) : t, m->put ? t : local_at(a, raddr), len);
		return IBX_OK;
	}
	st = m->put ? ibx_put(mpil_g.ctx, t, len, raddr, a->w.rk, NULL)
		    : ibx_get(mpil_g.ctx, t, len, raddr, a->w.rk, NULL);
	return st == IBX_INPROGRESS ? IBX_OK : st;
}

/* Reads or writes the target bytes of stream offsets [poff, poff + len):
 * the whole operation, or the one element at @raddr; complete on return. */
static ibx_status_t tmove(const acc_t *a, char *tmp, bool whole, int64_t poff, uint64_t raddr,
			  size_t len, bool put)
{
	tmove_t m = {a, tmp, poff, put};
	ibx_status_t st =
	    whole ? mpil_win_walk(a->tdt, a->tcount, a->w.raddr, a->nbytes, tmove_block, &m)
		  : tmove_block(&m, poff, (void *)(uintptr_t)raddr, len);

	return st == IBX_OK && !a->w.local ? ibx_flush(mpil_g.ctx, a->w.owner) : st;
}

/* Applies the op to the old values @tmp (stream offsets [poff, poff +
 * len)); @arrays: room for two C arrays of the elements (padded pairs).
 * False when nothing is to be written back. */
static bool apply_range(const acc_t *a, char *tmp, char *arrays, int64_t poff, size_t len)
{
	MPI_Datatype b = a->basic;
	size_t n = len / a->es;
	char *ta = arrays + n * (size_t)b->extent;

	if (a->res)
		memcpy(a->res + poff, tmp, len);
	if (a->cmp) {
		if (memcmp(tmp, a->cmp, a->es) != 0)
			return false;
		memcpy(tmp, a->in, a->es);
		return true;
	}
	if (a->op->id == MPIL_OP_NO_OP)
		return false;
	if (a->op->id == MPIL_OP_REPLACE) {
		memcpy(tmp, a->in + poff, len);
	} else if (mpil_dt_contig(b)) {
		a->op->kernel(a->in + poff, tmp, n, (mpil_dt_kind_t)b->kind);
	} else { /* a padded pair: the kernel works on C structs */
		mpil_dt_unpack(b, a->in + poff, len, arrays);
		mpil_dt_unpack(b, tmp, len, ta);
		a->op->kernel(arrays, ta, n, (mpil_dt_kind_t)b->kind);
		mpil_dt_pack(b, ta, (int)n, tmp);
	}
	return true;
}

static int acc_locked(acc_t *a, bool whole, int64_t poff, uint64_t raddr, size_t len)
{
	/* padded pairs: two C arrays after the packed bytes, 16-byte aligned */
	size_t at = (len + 15) & ~(size_t)15,
	       need = mpil_dt_contig(a->basic) ? len : at + 2 * (len / a->es) * a->basic->extent;
	_Alignas(16) char small[128]; /* one element, whatever its type */
	char *tmp = need <= sizeof(small) ? small : malloc(need);
	ibx_status_t st;
	int err;

	if (!tmp)
		return mpil_win_err(a->win, MPI_ERR_NO_MEM, a->fname,
				    "no memory for %zu bytes of target data", need);
	err = a->locked ? MPI_SUCCESS : mpil_win_acc_lock(a->win, a->w.target, a->fname);
	if (err != MPI_SUCCESS)
		goto out;
	st = tmove(a, tmp, whole, poff, raddr, len, false);
	if (st == IBX_OK && apply_range(a, tmp, tmp + at, poff, len))
		st = tmove(a, tmp, whole, poff, raddr, len, true);
	err = a->locked ? MPI_SUCCESS : mpil_win_acc_unlock(a->win, a->w.target, a->fname);
	if (st != IBX_OK)
		err = mpil_win_err(a->win, mpil_err_from_ibx(st), a->fname,
				   "accumulate at rank %d failed: %s", a->w.target,
				   ibx_status_str(st));
out:
	if (tmp != small)
		free(tmp);
	return err;
}

/* ---- WORD over the target's blocks ----------------------------------------------------------- */

/* How many elements of @es bytes from @e (before @end) lie in @e's word,
 * none straddling its end: those one compare-and-swap of the word covers. */
static unsigned same_word_run(uint64_t e, uint64_t end, size_t es)
{
	uint64_t w = e & ~(uint64_t)7;
	unsigned n = 1;

	while (e + n * es < end && ((e + n * es) & ~(uint64_t)7) == w &&
	       ((e + n * es) & 7) + es <= 8)
		n++;
	return n;
}

typedef struct word_walk {
	acc_t *a;
	amo_batch_t *b; /* engine atomics (CPU atomics: unused) */
	int err;	/* MPI error class of a LOCK element, reported already */
} word_walk_t;

static ibx_status_t word_block(void *arg, int64_t poff, void *addr, size_t len)
{
	word_walk_t *ww = arg;
	acc_t *a = ww->a;
	uint64_t raddr = (uint64_t)(uintptr_t)addr, end = raddr + len;
	size_t es = a->es;
	/* a block of whole words is in the key (mpil_win_where checked it);
	 * else the words of its ends are in the key: all of them are */
	bool all_in = !((raddr | end) & 7) ||
		      (key_has(a, raddr & ~(uint64_t)7) && key_has(a, (end + 7) & ~(uint64_t)7));

	/* CPU atomics on a block of whole elements that no word boundary cuts */
	if (a->cpu && all_in && !a->cmp && 8 % es == 0 && raddr % es == 0) {
		cpu_block(a, raddr, end, poff);
		return IBX_OK;
	}
	for (uint64_t e = raddr; e < end; e += es, poff += (int64_t)es) {
		uint64_t w = e & ~(uint64_t)7;
		ibx_status_t st;

		if ((e & 7) + es > 8 || (!all_in && !(key_has(a, w) && key_has(a, w + 8)))) {
			/* no word holds it: LOCK, as at every origin */
			ww->err = acc_locked(a, false, poff, e, es);
			if (ww->err != MPI_SUCCESS)
				return IBX_ERR_CANCELED;
		} else if (a->cpu && es < 8) {
			/* the block's next elements in the same word: one CAS */
			unsigned n = same_word_run(e, end, es);

			cpu_word_run(a, e, n, poff);
			e += (n - 1) * es;
			poff += (int64_t)((n - 1) * es);
		} else if (a->cpu) {
			cpu_elem(a, e, poff);
		} else {
			amo_t *s = &ww->b->s[ww->b->n++];
			unsigned n;

			amo_prepare(a, s, e, poff);
			/* a CAS loop: the block's next elements in the same word too */
			n = s->how == AMO_LOOP && !a->cmp ? same_word_run(e, end, es) : 1;
			s->n = n;
			e += (n - 1) * es;
			poff += (int64_t)((n - 1) * es);
			if (ww->b->n == ACC_BATCH && (st = amo_run(a, ww->b)) != IBX_OK)
				return st;
		}
	}
	return IBX_OK;
}

/* The engine's batch (kilobytes) lives in this frame only. */
static __attribute__((noinline)) ibx_status_t words_engine(word_walk_t *ww)
{
	acc_t *a = ww->a;
	amo_batch_t b;
	ibx_status_t st;

	b.n = 0;
	ww->b = &b;
	st = mpil_win_walk(a->tdt, a->tcount, a->w.raddr, a->nbytes, word_block, ww);
	return st == IBX_OK && b.n > 0 ? amo_run(a, &b) : st;
}

/* The elements of a word type, each by its own atomic (WORD, or LOCK for
 * an element no word holds). */
static int acc_words(acc_t *a)
{
	word_walk_t ww = {a, NULL, MPI_SUCCESS};
	ibx_status_t st;

	/* CPU atomics wherever the engine maps the memory for them (w.local:
	 * ibx_rkey_ptr promises that every other origin's atomics on it are
	 * CPU atomics too: allocated or moved memory, or our own when no
	 * node-local peer updates it under the engine's lock) */
	a->cpu = a->w.local != NULL;
	st = a->cpu ? mpil_win_walk(a->tdt, a->tcount, a->w.raddr, a->nbytes, word_block, &ww)
		    : words_engine(&ww);
	if (ww.err != MPI_SUCCESS)
		return ww.err;
	/* under the whole-operation lock, every update lands before it goes */
	if (st == IBX_OK && a->in_flight && (a->win->acc_ordering || a->locked))
		st = ibx_flush(mpil_g.ctx, a->w.owner);
	if (st != IBX_OK)
		return mpil_win_err(a->win, mpil_err_from_ibx(st), a->fname,
				    "atomic update at rank %d failed: %s", a->w.target,
				    ibx_status_str(st));
	return MPI_SUCCESS;
}

/* Called with bytes to move (acc_do returns before for none). */
static int acc_run(acc_t *a)
{
	int err, uerr;

	mpil_win_dirty(a->win, a->w.target);
	if (!word_type(a->basic))
		return acc_locked(a, true, 0, 0, a->nbytes);
	if (a->nbytes == a->es)
		return acc_words(a);
	/* Several elements: each still by its atomic (so that single-element
	 * operations, which take no lock, stay atomic with them), and the
	 * whole operation under the target's accumulate lock, so that two
	 * operations on the same elements never interleave: a 16-byte
	 * MPI_REPLACE of MPI_BYTEs and a 16-byte MPI_Get_accumulate of them
	 * (a linked list's {rank, displacement} pointer) see each other
	 * whole. MPI promises atomicity per element only; Open MPI and MPICH
	 * both give it per operation, and codes count on it. */
	MPIL_CHECK(mpil_win_acc_lock(a->win, a->w.target, a->fname));
	a->locked = true;
	err = acc_words(a);
	a->locked = false;
	uerr = mpil_win_acc_unlock(a->win, a->w.target, a->fname);
	return err != MPI_SUCCESS ? err : uerr;
}

/* ---- argument checks ------------------------------------------------------------------------ */

/* MPI_NO_OP ignores the origin buffer (MPI-3.1 §11.3.4). */
static bool no_op(MPI_Op op)
{
	return op && op->magic == MPIL_MAGIC_OP && op->id == MPIL_OP_NO_OP;
}

/* Window, buffers, op, types, sizes: everything before the target rank. */
static int acc_check(acc_t *a)
{
	bool origin = !no_op(a->op);
	MPI_Win win = a->win;
	const char *f = a->fname;
	size_t tb, ob, rb;

	MPIL_CHECK(mpil_win_check(win, f));
	if (ibx_unlikely(a->rform && !a->request))
		return mpil_win_err(win, MPI_ERR_ARG, f, "request is NULL");
	if (a->single)
		MPIL_CHECK(mpil_win_check_predefined(win, a->tdt, a->groups, f));
	if (origin)
		MPIL_CHECK(mpil_win_check_data(win, a->ocount, a->odt, "origin", f));
	if (a->fetch)
		MPIL_CHECK(mpil_win_check_data(win, a->rcount, a->rdt, "result", f));
	MPIL_CHECK(mpil_win_check_data(win, a->tcount, a->tdt, "target", f));
	MPIL_CHECK(mpil_win_check_op(win, a->op, a->fetch, f));
	tb = (size_t)a->tcount * a->tdt->size;
	ob = origin ? (size_t)a->ocount * a->odt->size : tb;
	rb = a->fetch ? (size_t)a->rcount * a->rdt->size : ob;
	/* nothing moves: the types need not agree (a zero-size derived type
	 * has no predefined type at all), as Open MPI and MPICH accept */
	if (ob > 0)
		MPIL_CHECK(mpil_win_check_basic(win, a->op, origin ? a->odt : NULL,
						a->fetch ? a->rdt : NULL, a->tdt, f));
	if (ibx_unlikely(ob > tb || ob > rb))
		return mpil_win_err(win, MPI_ERR_TRUNCATE, f,
				    "%zu bytes do not fit the %zu-byte %s buffer", ob,
				    ob > tb ? tb : rb, ob > tb ? "target" : "result");
	a->nbytes = ob;
	return MPI_SUCCESS;
}

/* ---- the calls ---------------------------------------------------------------------------- */

/* A non-contiguous origin is packed first; a non-contiguous result is
 * fetched packed and unpacked at the end. */
static int acc_do(acc_t *a)
{
	MPI_Request *request = a->request;
	char *pin = NULL, *pres = NULL;
	bool origin;
	int err;

	MPIL_CHECK(acc_check(a));
	if (a->target == MPI_PROC_NULL)
		return request ? mpil_win_req_done(a->win, request, a->fname) : MPI_SUCCESS;
	MPIL_CHECK(mpil_win_where(a->win, a->target, a->disp, a->tcount, a->tdt, request != NULL,
				  &a->w, a->fname));
	if (a->nbytes == 0) /* nothing moves: the buffers may be NULL */
		return request ? mpil_win_req_done(a->win, request, a->fname) : MPI_SUCCESS;
	a->basic = a->tdt->basic;
	a->es = a->basic->size;
	origin = a->op->id != MPIL_OP_NO_OP;
	if (origin && mpil_dt_contig(a->odt))
		a->in = (const char *)((uintptr_t)a->obuf + (uintptr_t)a->odt->true_lb);
	else if (origin && (a->in = pin = malloc(a->nbytes + 1)) != NULL)
		mpil_dt_pack(a->odt, a->obuf, a->ocount, pin);
	if (a->fetch)
		a->res = mpil_dt_contig(a->rdt)
			     ? (char *)((uintptr_t)a->rbuf + (uintptr_t)a->rdt->true_lb)
			     : (pres = malloc(a->nbytes + 1));
	if ((origin && !a->in) || (a->fetch && !a->res))
		err = mpil_win_err(a->win, MPI_ERR_NO_MEM, a->fname, "no memory for %zu bytes",
				   a->nbytes);
	else
		err = acc_run(a);
	if (pres && err == MPI_SUCCESS)
		mpil_dt_unpack(a->rdt, pres, a->nbytes, a->rbuf);
	if (ibx_unlikely(pin || pres)) {
		free(pin);
		free(pres);
	}
	if (err != MPI_SUCCESS || !request)
		return err;
	return mpil_win_req_done(a->win, request, a->fname);
}

#define ACC_CALL(ob, oc, od, rb, rc, rd, tr, td, tc, tt, o, w, fe, f)                              \
	{                                                                                          \
		.obuf = (ob), .ocount = (oc), .odt = (od), .rbuf = (rb), .rcount = (rc),           \
		.rdt = (rd), .target = (tr), .disp = (td), .tcount = (tc), .tdt = (tt), .op = (o), \
		.win = (w), .fetch = (fe), .fname = (f)                                            \
	}

MPIL_PMPI_ALIAS_HOT(Accumulate)
IBX_HOT int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
			    int target_rank, MPI_Aint target_disp, int target_count,
			    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
	MPIL_CS_GUARD();
	MPIL_FAST_TRY(mpil_win_acc_fast(origin_addr, origin_count, origin_datatype, target_rank,
					target_disp, target_count, target_datatype, op, win));
	acc_t a =
	    ACC_CALL(origin_addr, origin_count, origin_datatype, NULL, 0, NULL, target_rank,
		     target_disp, target_count, target_datatype, op, win, false, "MPI_Accumulate");

	return acc_do(&a);
}

MPIL_PMPI_ALIAS(Raccumulate)
int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
		     int target_rank, MPI_Aint target_disp, int target_count,
		     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
	MPIL_CS_GUARD();
	acc_t a =
	    ACC_CALL(origin_addr, origin_count, origin_datatype, NULL, 0, NULL, target_rank,
		     target_disp, target_count, target_datatype, op, win, false, "MPI_Raccumulate");

	a.rform = true;
	a.request = request;
	return acc_do(&a);
}

MPIL_PMPI_ALIAS(Get_accumulate)
int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
			void *result_addr, int result_count, MPI_Datatype result_datatype,
			int target_rank, MPI_Aint target_disp, int target_count,
			MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
	MPIL_CS_GUARD();
	acc_t a = ACC_CALL(origin_addr, origin_count, origin_datatype, result_addr, result_count,
			   result_datatype, target_rank, target_disp, target_count, target_datatype,
			   op, win, true, "MPI_Get_accumulate");

	return acc_do(&a);
}

MPIL_PMPI_ALIAS(Rget_accumulate)
int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
			 void *result_addr, int result_count, MPI_Datatype result_datatype,
			 int target_rank, MPI_Aint target_disp, int target_count,
			 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
	MPIL_CS_GUARD();
	acc_t a = ACC_CALL(origin_addr, origin_count, origin_datatype, result_addr, result_count,
			   result_datatype, target_rank, target_disp, target_count, target_datatype,
			   op, win, true, "MPI_Rget_accumulate");

	a.rform = true;
	a.request = request;
	return acc_do(&a);
}

MPIL_PMPI_ALIAS_HOT(Fetch_and_op)
IBX_HOT int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
			      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
	MPIL_CS_GUARD();
	MPIL_FAST_TRY(mpil_win_fop_fast(origin_addr, result_addr, datatype, target_rank,
					target_disp, op, win));
	acc_t a = ACC_CALL(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
			   target_disp, 1, datatype, op, win, true, "MPI_Fetch_and_op");

	a.single = true;
	return acc_do(&a);
}

MPIL_PMPI_ALIAS_HOT(Compare_and_swap)
IBX_HOT int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr,
				  void *result_addr, MPI_Datatype datatype, int target_rank,
				  MPI_Aint target_disp, MPI_Win win)
{
	MPIL_CS_GUARD();
	MPIL_FAST_TRY(mpil_win_cas_fast(origin_addr, compare_addr, result_addr, datatype,
					target_rank, target_disp, win));
	acc_t a =
	    ACC_CALL(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp,
		     1, datatype, MPI_REPLACE, win, true, "MPI_Compare_and_swap");

	a.single = true;
	a.groups = MPIL_DTG_INT | MPIL_DTG_MULTI | MPIL_DTG_LOGICAL | MPIL_DTG_BYTE;
	a.cmp = compare_addr;
	return acc_do(&a);
}
