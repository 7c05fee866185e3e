/*
 * test_win_lock.c — the passive-target lock of mpi-lite's windows
 * (mpi-lite/win_lock_pf.h: the phase-fair reader-writer ticket lock of
 * [Brandenburg10], as a step machine over four words) checked by
 * exhaustive exploration: two or three lockers, each taking the lock
 * twice (every mix of shared and exclusive), run through every
 * interleaving of their word operations. A locker's one operation on a
 * word is atomic, as a remote atomic or a read is; every other
 * interleaving is explored. In every reachable state:
 *
 *   - mutual exclusion: at most one writer holds, and never with a reader;
 *   - no deadlock: unless everyone is done, someone can change the state
 *     (a waiting read that changes nothing is not progress);
 *   - writers hold the lock in the order of their tickets;
 *   - phase fairness: a reader that had to wait enters after at most one
 *     writer has held the lock since it began waiting;
 *   - at the end the words are balanced (readers in = readers out, no
 *     writer bits, tickets taken = tickets served).
 *
 * States are remembered (hash set), so each is expanded once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "win_lock_pf.h"

#define MAXL   3
#define ROUNDS 2

typedef struct locker {
	mpil_pf_t l;
	uint8_t round;	   /* acquisitions begun */
	uint8_t myticket;  /* writer: its ticket, kept for the order check */
	uint8_t wacq_wait; /* reader: writer acquisitions when it began to wait */
	bool excl[ROUNDS]; /* the script: exclusive or shared, per round */
} locker_t;

typedef struct state {
	uint64_t word[4];
	uint8_t wacq; /* writer acquisitions so far */
	locker_t lk[MAXL];
} state_t;

/* ---- a set of visited states (open addressing on a packed key) ------------------------------ */

typedef struct key {
	uint16_t word[4];
	uint8_t wacq;
	struct {
		uint8_t pc, w, round, myticket, wacq_wait;
		uint16_t ticket;
	} lk[MAXL];
} key_t_;

typedef struct set {
	key_t_ *slot;
	uint8_t *used;
	size_t cap, n;
} set_t;

static void pack(const state_t *s, int n, key_t_ *k)
{
	memset(k, 0, sizeof(*k));
	for (int i = 0; i < 4; i++)
		k->word[i] = (uint16_t)s->word[i];
	k->wacq = s->wacq;
	for (int i = 0; i < n; i++) {
		k->lk[i].pc = s->lk[i].l.pc;
		k->lk[i].w = (uint8_t)s->lk[i].l.w;
		k->lk[i].ticket = (uint16_t)s->lk[i].l.ticket;
		k->lk[i].round = s->lk[i].round;
		k->lk[i].myticket = s->lk[i].myticket;
		k->lk[i].wacq_wait = s->lk[i].wacq_wait;
	}
}

static uint64_t hash_key(const key_t_ *k)
{
	const unsigned char *p = (const unsigned char *)k;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static void set_init(set_t *s, size_t cap)
{
	s->cap = cap;
	s->n = 0;
	s->slot = calloc(cap, sizeof(*s->slot));
	s->used = calloc(cap, 1);
	assert_non_null(s->slot);
	assert_non_null(s->used);
}

static void set_free(set_t *s)
{
	free(s->slot);
	free(s->used);
}

static void set_grow(set_t *s);

/* true if @k was new */
static bool set_add(set_t *s, const key_t_ *k)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap)
		set_grow(s);
	for (i = hash_key(k) & (s->cap - 1); s->used[i]; i = (i + 1) & (s->cap - 1))
		if (memcmp(&s->slot[i], k, sizeof(*k)) == 0)
			return false;
	s->used[i] = 1;
	s->slot[i] = *k;
	s->n++;
	return true;
}

static void set_grow(set_t *s)
{
	set_t big;

	set_init(&big, s->cap * 2);
	for (size_t i = 0; i < s->cap; i++)
		if (s->used[i])
			set_add(&big, &s->slot[i]);
	set_free(s);
	*s = big;
}

/* ---- the exploration --------------------------------------------------------------------------
 */

typedef struct explore {
	int n;
	set_t seen;
	size_t states, finals;
} explore_t;

static bool locker_done(const locker_t *k)
{
	return k->l.pc == MPIL_PF_IDLE && k->round == ROUNDS;
}

/* One step of locker @i from @s into @t; false when it cannot move (done)
 * or its step is a waiting read that changes nothing. */
static bool step(const state_t *s, int i, state_t *t)
{
	locker_t *k;
	mpil_pf_op_t op;
	uint64_t v;

	*t = *s;
	k = &t->lk[i];
	if (locker_done(k))
		return false;
	if (k->l.pc == MPIL_PF_IDLE) {
		mpil_pf_lock(&k->l, k->excl[k->round]);
		k->round++;
		return true;
	}
	if (mpil_pf_held(&k->l)) {
		mpil_pf_unlock(&k->l, k->l.pc == MPIL_PF_W_HELD, k->l.w);
		return true;
	}
	op = mpil_pf_op(&k->l);
	assert_true(op.word >= 0 && op.word < 4);
	v = t->word[op.word];
	if (!op.read)
		t->word[op.word] += op.add;
	if (k->l.pc == MPIL_PF_W_TICKET)
		k->myticket = (uint8_t)v;
	mpil_pf_result(&k->l, v);
	if (k->l.pc == MPIL_PF_R_WAIT && s->lk[i].l.pc == MPIL_PF_R_ENTER)
		k->wacq_wait = t->wacq;
	if (k->l.pc == MPIL_PF_W_HELD) {
		/* writers in ticket order */
		assert_int_equal(k->myticket, t->wacq);
		t->wacq++;
	}
	if (k->l.pc == MPIL_PF_R_HELD && s->lk[i].l.pc == MPIL_PF_R_WAIT) {
		/* phase fairness: at most one writer went first */
		assert_true(t->wacq - k->wacq_wait <= 1);
	}
	return memcmp(&t->word, &s->word, sizeof(s->word)) != 0 ||
	       memcmp(&t->lk[i], &s->lk[i], sizeof(t->lk[i])) != 0 || t->wacq != s->wacq;
}

static void check_exclusion(const state_t *s, int n)
{
	int writers = 0, readers = 0;

	for (int i = 0; i < n; i++) {
		writers += s->lk[i].l.pc == MPIL_PF_W_HELD;
		readers += s->lk[i].l.pc == MPIL_PF_R_HELD;
	}
	if (writers > 1 || (writers && readers)) {
		fprintf(stderr, "exclusion broken: %d writers, %d readers hold the lock\n", writers,
			readers);
		fail();
	}
}

static void check_final(const state_t *s)
{
	assert_int_equal(s->word[MPIL_PF_RIN] & 0xff, 0);
	assert_int_equal(s->word[MPIL_PF_RIN], s->word[MPIL_PF_ROUT]);
	assert_int_equal(s->word[MPIL_PF_WIN], s->word[MPIL_PF_WOUT]);
}

static void dfs(explore_t *e, const state_t *s)
{
	key_t_ key;
	bool moved = false, all_done = true;

	pack(s, e->n, &key);
	if (!set_add(&e->seen, &key))
		return;
	e->states++;
	check_exclusion(s, e->n);
	for (int i = 0; i < e->n; i++) {
		state_t t;

		all_done &= locker_done(&s->lk[i]);
		if (step(s, i, &t)) {
			moved = true;
			dfs(e, &t);
		}
	}
	if (all_done) {
		e->finals++;
		check_final(s);
	} else if (!moved) {
		fprintf(stderr, "deadlock: every locker waits\n");
		fail();
	}
}

/* Every script of @n lockers: each round of each locker shared or
 * exclusive. */
static size_t explore_all(int n)
{
	int bits = n * ROUNDS;
	size_t total = 0;

	for (unsigned mask = 0; mask < (1u << bits); mask++) {
		explore_t e = {.n = n};
		state_t s;

		memset(&s, 0, sizeof(s));
		for (int i = 0; i < n; i++)
			for (int r = 0; r < ROUNDS; r++)
				s.lk[i].excl[r] = (mask >> (i * ROUNDS + r)) & 1;
		set_init(&e.seen, 1 << 12);
		dfs(&e, &s);
		assert_true(e.finals > 0);
		total += e.states;
		set_free(&e.seen);
	}
	return total;
}

static void test_two_lockers(void **unused)
{
	size_t n = explore_all(2);

	printf("2 lockers: %zu states\n", n);
	assert_true(n > 100);
}

static void test_three_lockers(void **unused)
{
	size_t n = explore_all(3);

	printf("3 lockers: %zu states\n", n);
	assert_true(n > 1000);
}

/* ---- single machines, by hand --------------------------------------------------------------- */

/* Runs @l on @w until it holds, is idle, or waits without moving. */
static void run(mpil_pf_t *l, uint64_t *w)
{
	for (int guard = 0; guard < 16 && !mpil_pf_held(l) && l->pc != MPIL_PF_IDLE; guard++) {
		mpil_pf_op_t op = mpil_pf_op(l);
		uint64_t v = w[op.word];
		uint8_t pc = l->pc;

		if (!op.read)
			w[op.word] += op.add;
		mpil_pf_result(l, v);
		if (op.read && l->pc == pc)
			return;
	}
}

static void test_uncontended(void **unused)
{
	uint64_t w[4] = {0};
	mpil_pf_t r, x;

	/* a reader: one fetch-add in, one out */
	mpil_pf_lock(&r, false);
	run(&r, w);
	assert_int_equal(r.pc, MPIL_PF_R_HELD);
	assert_int_equal(w[MPIL_PF_RIN], MPIL_PF_RINC);
	mpil_pf_unlock(&r, false, r.w);
	run(&r, w);
	assert_int_equal(r.pc, MPIL_PF_IDLE);
	assert_int_equal(w[MPIL_PF_ROUT], MPIL_PF_RINC);

	/* a writer: ticket 0 has phase id 0 */
	mpil_pf_lock(&x, true);
	run(&x, w);
	assert_int_equal(x.pc, MPIL_PF_W_HELD);
	assert_int_equal(x.w, MPIL_PF_PRES);
	assert_int_equal(w[MPIL_PF_RIN], MPIL_PF_RINC | MPIL_PF_PRES);

	/* a reader arriving now waits for the phase to change */
	mpil_pf_lock(&r, false);
	run(&r, w);
	assert_int_equal(r.pc, MPIL_PF_R_WAIT);
	mpil_pf_unlock(&x, true, x.w);
	run(&x, w);
	assert_int_equal(x.pc, MPIL_PF_IDLE);
	assert_int_equal(w[MPIL_PF_RIN], 2 * MPIL_PF_RINC);
	assert_int_equal(w[MPIL_PF_WOUT], 1);
	run(&r, w);
	assert_int_equal(r.pc, MPIL_PF_R_HELD);

	/* the next writer (ticket 1, phase id 1) waits for that reader */
	mpil_pf_lock(&x, true);
	run(&x, w);
	assert_int_equal(x.pc, MPIL_PF_W_DRAIN);
	assert_int_equal(x.w, MPIL_PF_PRES | MPIL_PF_PHID);
	mpil_pf_unlock(&r, false, 0);
	run(&r, w);
	run(&x, w);
	assert_int_equal(x.pc, MPIL_PF_W_HELD);

	/* idle and held machines name no word */
	assert_int_equal(mpil_pf_op(&x).word, -1);
	assert_int_equal(mpil_pf_op(&r).word, -1);
}

/* Phase alternation: readers blocked by writer 0 get in when it leaves,
 * although writer 1 has set its bits already. */
static void test_phase_alternation(void **unused)
{
	uint64_t w[4] = {0};
	mpil_pf_t x0, x1, r;

	mpil_pf_lock(&x0, true);
	run(&x0, w);
	assert_int_equal(x0.pc, MPIL_PF_W_HELD);
	mpil_pf_lock(&r, false);
	run(&r, w);
	assert_int_equal(r.pc, MPIL_PF_R_WAIT);
	mpil_pf_lock(&x1, true);
	run(&x1, w);
	assert_int_equal(x1.pc, MPIL_PF_W_TURN);
	mpil_pf_unlock(&x0, true, x0.w);
	run(&x0, w);
	/* writer 1 takes its turn and sets phase id 1 before the reader looks */
	run(&x1, w);
	assert_int_equal(x1.pc, MPIL_PF_W_DRAIN);
	run(&r, w);
	assert_int_equal(r.pc, MPIL_PF_R_HELD);
	mpil_pf_unlock(&r, false, 0);
	run(&r, w);
	run(&x1, w);
	assert_int_equal(x1.pc, MPIL_PF_W_HELD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_uncontended),
	    cmocka_unit_test(test_phase_alternation),
	    cmocka_unit_test(test_two_lockers),
	    cmocka_unit_test(test_three_lockers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
