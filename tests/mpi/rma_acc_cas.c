/* ibx-test: np=1,2,3,4,8 timeout=120 */
/*
 * rma_acc_cas — MPI_Compare_and_swap:
 *
 *   - a spin lock per rank, every rank taking every rank's lock (its own
 *     included) in turn, on allocate and create windows, with an 8-byte
 *     lock word (one compare-and-swap) and with a 4-byte one (a CAS on the
 *     8-byte word that holds it, whose other half is the counter the lock
 *     protects); inside the lock a non-atomic read-increment-write of a
 *     counter by MPI_Get / MPI_Put: the counters must count every entry,
 *     and the lock must read as ours while we hold it;
 *   - the result of successful and failed swaps on every type MPI allows
 *     (C integers of 1, 2, 4 and 8 bytes, MPI_BYTE, MPI_C_BOOL, MPI_AINT),
 *     and on an int that straddles an 8-byte word.
 */
#include "mpitest.h"

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

enum { ITER = 8 };

typedef struct wmem {
	long long lock8;
	long long count8;
	int lock4; /* same 8-byte word as count4 */
	int count4;
	/* the type checks */
	_Alignas(8) unsigned char bytes[32];
} wmem_t;

#define OFF(f) ((MPI_Aint)offsetof(wmem_t, f))

static int rank, size;

/* ---- the spin locks --------------------------------------------------------------------- */

static void acquire(MPI_Win win, int t, MPI_Datatype dt, MPI_Aint disp)
{
	long long me8 = rank + 1, zero8 = 0, old8 = -1;
	int me4 = rank + 1, zero4 = 0, old4 = -1;
	bool eight = dt == MPI_LONG_LONG;

	for (;;) {
		if (eight)
			MPI_OK(MPI_Compare_and_swap(&me8, &zero8, &old8, dt, t, disp, win));
		else
			MPI_OK(MPI_Compare_and_swap(&me4, &zero4, &old4, dt, t, disp, win));
		MPI_OK(MPI_Win_flush(t, win));
		if ((eight ? old8 : old4) == 0)
			return;
		CHECK((eight ? old8 : old4) != rank + 1, "rank %d's lock is ours already", t);
		sched_yield(); /* ranks may outnumber cores */
	}
}

static void release(MPI_Win win, int t, MPI_Datatype dt, MPI_Aint disp)
{
	long long me8 = rank + 1, zero8 = 0, old8 = -1;
	int me4 = rank + 1, zero4 = 0, old4 = -1;

	if (dt == MPI_LONG_LONG)
		MPI_OK(MPI_Compare_and_swap(&zero8, &me8, &old8, dt, t, disp, win));
	else
		MPI_OK(MPI_Compare_and_swap(&zero4, &me4, &old4, dt, t, disp, win));
	MPI_OK(MPI_Win_flush(t, win));
	CHECK((dt == MPI_LONG_LONG ? old8 : old4) == rank + 1,
	      "releasing rank %d's lock: it held %lld, not us", t,
	      dt == MPI_LONG_LONG ? old8 : (long long)old4);
}

/* The critical section: the lock reads as ours; counter++ by get and put. */
static void critical(MPI_Win win, int t, MPI_Datatype dt, MPI_Aint lock, MPI_Aint count)
{
	long long c8 = -1, held8 = -1;
	int c4 = -1, held4 = -1;

	if (dt == MPI_LONG_LONG) {
		MPI_OK(MPI_Fetch_and_op(NULL, &held8, dt, t, lock, MPI_NO_OP, win));
		MPI_OK(MPI_Get(&c8, 1, dt, t, count, 1, dt, win));
		MPI_OK(MPI_Win_flush(t, win));
		CHECK(held8 == rank + 1, "rank %d's lock holds %lld inside our section", t, held8);
		c8++;
		MPI_OK(MPI_Put(&c8, 1, dt, t, count, 1, dt, win));
	} else {
		MPI_OK(MPI_Fetch_and_op(NULL, &held4, dt, t, lock, MPI_NO_OP, win));
		MPI_OK(MPI_Get(&c4, 1, dt, t, count, 1, dt, win));
		MPI_OK(MPI_Win_flush(t, win));
		CHECK(held4 == rank + 1, "rank %d's lock holds %d inside our section", t, held4);
		c4++;
		MPI_OK(MPI_Put(&c4, 1, dt, t, count, 1, dt, win));
	}
	MPI_OK(MPI_Win_flush(t, win));
}

static void spin_locks(MPI_Win win, wmem_t *m, const char *name)
{
	memset(m, 0, sizeof(*m));
	MPI_OK(MPI_Win_sync(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock_all(0, win));
	for (int j = 0; j < ITER; j++)
		for (int s = 0; s < size; s++) {
			int t = (rank + s) % size;

			acquire(win, t, MPI_LONG_LONG, OFF(lock8));
			critical(win, t, MPI_LONG_LONG, OFF(lock8), OFF(count8));
			release(win, t, MPI_LONG_LONG, OFF(lock8));
			acquire(win, t, MPI_INT, OFF(lock4));
			critical(win, t, MPI_INT, OFF(lock4), OFF(count4));
			release(win, t, MPI_INT, OFF(lock4));
		}
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_sync(win));
	CHECK(m->lock8 == 0 && m->lock4 == 0, "%s: locks left taken (%lld, %d)", name, m->lock8,
	      m->lock4);
	CHECK(m->count8 == (long long)size * ITER, "%s: 8-byte lock: counter %lld, expected %d",
	      name, m->count8, size * ITER);
	CHECK(m->count4 == size * ITER, "%s: 4-byte lock: counter %d, expected %d", name, m->count4,
	      size * ITER);
}

/* ---- every allowed type ------------------------------------------------------------------- */

typedef struct ctype {
	MPI_Datatype dt;
	const char *name;
	size_t size;
	MPI_Aint off; /* byte offset in `bytes` */
} ctype_t;

/* Swaps at the right neighbour's memory: fails against a wrong compare
 * value, then succeeds; the results say what was there. Bytes around the
 * element must not change. */
static void check_type(MPI_Win win, wmem_t *m, const ctype_t *c)
{
	int t = (rank + 1) % size, from = (rank + size - 1) % size;
	unsigned char init[8], wrong[8], mine[8], res[8];

	memset(m->bytes, 0xee, sizeof(m->bytes));
	for (size_t b = 0; b < c->size; b++) {
		/* C_BOOL holds 0 or 1 only */
		init[b] = c->dt == MPI_C_BOOL ? 0 : (unsigned char)(0x11 * (b + 1));
		wrong[b] = c->dt == MPI_C_BOOL ? 1 : (unsigned char)(0x21 * (b + 1));
		mine[b] = c->dt == MPI_C_BOOL ? 1 : (unsigned char)(0x30 + b + rank);
	}
	memcpy(m->bytes + c->off, init, c->size);
	MPI_OK(MPI_Win_sync(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
	if (c->dt != MPI_C_BOOL) {
		memset(res, 0, sizeof(res));
		MPI_OK(MPI_Compare_and_swap(mine, wrong, res, c->dt, t, OFF(bytes) + c->off, win));
		MPI_OK(MPI_Win_flush(t, win));
		CHECK(memcmp(res, init, c->size) == 0, "%s: failed swap returned another value",
		      c->name);
	}
	memset(res, 0, sizeof(res));
	MPI_OK(MPI_Compare_and_swap(mine, init, res, c->dt, t, OFF(bytes) + c->off, win));
	MPI_OK(MPI_Win_unlock(t, win));
	CHECK(memcmp(res, init, c->size) == 0, "%s: successful swap returned another value",
	      c->name);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_sync(win));
	for (size_t b = 0; b < c->size; b++) {
		unsigned char e = c->dt == MPI_C_BOOL ? 1 : (unsigned char)(0x30 + b + from);

		CHECK(m->bytes[c->off + (MPI_Aint)b] == e, "%s: byte %zu is %#x, expected %#x",
		      c->name, b, m->bytes[c->off + (MPI_Aint)b], e);
	}
	for (MPI_Aint b = 0; b < (MPI_Aint)sizeof(m->bytes); b++)
		if (b < c->off || b >= c->off + (MPI_Aint)c->size)
			CHECK(m->bytes[b] == 0xee, "%s: byte %ld outside the element changed",
			      c->name, (long)b);
}

static void all_types(MPI_Win win, wmem_t *m)
{
	static const ctype_t types[] = {
	    {MPI_LONG_LONG, "MPI_LONG_LONG", 8, 8},
	    {MPI_INT, "MPI_INT", 4, 4},
	    {MPI_UNSIGNED, "MPI_UNSIGNED (low half)", 4, 8},
	    {MPI_SHORT, "MPI_SHORT", 2, 10},
	    {MPI_INT8_T, "MPI_INT8_T", 1, 13},
	    {MPI_BYTE, "MPI_BYTE", 1, 7},
	    {MPI_C_BOOL, "MPI_C_BOOL", 1, 3},
	    {MPI_AINT, "MPI_AINT", 8, 16},
	    {MPI_UINT64_T, "MPI_UINT64_T", 8, 24},
	    {MPI_INT, "MPI_INT straddling a word", 4, 6},
	    {MPI_SHORT, "MPI_SHORT straddling a word", 2, 15},
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		check_type(win, m, &types[i]);
}

int main(int argc, char **argv)
{
	MPI_Win win;
	wmem_t *m;
	void *p;

	mt_init(&argc, &argv, &rank, &size);

	MPI_OK(MPI_Win_allocate(sizeof(wmem_t), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &m, &win));
	spin_locks(win, m, "MPI_Win_allocate");
	all_types(win, m);
	MPI_OK(MPI_Win_free(&win));

	CHECK(posix_memalign(&p, 64, sizeof(wmem_t)) == 0, "out of memory");
	m = p;
	MPI_OK(MPI_Win_create(m, sizeof(wmem_t), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	spin_locks(win, m, "MPI_Win_create");
	all_types(win, m);
	MPI_OK(MPI_Win_free(&win));
	free(p);

	if (rank == 0)
		printf("rma_acc_cas: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
