/*
 * rma.c — MPI-3 one-sided communication (RMA) in the style of the OSU
 * one-sided benchmarks (osu_put_latency, osu_get_latency, osu_acc_latency,
 * osu_fop_latency, osu_cas_latency, osu_put_bw): rank 0, the origin, issues
 * every operation; rank 1, the target, sits idle in MPI_Barrier meanwhile,
 * so an implementation that needs the target to call MPI for progress gets
 * it there, as in osu.
 *
 *     rank 0 (origin)                          rank 1 (target)
 *       | lock_all                               |
 *       | Put(8 B) -> flush(1)   x iters  -----> | window memory
 *       | unlock_all; Barrier  ------------------| Barrier (idle all along)
 *
 * Measurements (-m; window flavour and synchronisation as osu's -w, -s):
 *   put_lat, get_lat  MPI_Put / MPI_Get + MPI_Win_flush; MPI_Win_allocate,
 *                 lock_all once
 *   put_lat_lock  MPI_Win_lock(SHARED) + MPI_Put + MPI_Win_unlock per
 *                 iteration; MPI_Win_create on malloc'ed (user) memory
 *   put_lat_dyn   MPI_Put + flush; MPI_Win_create_dynamic + attach
 *   acc_lat, fop_lat, cas_lat  MPI_Accumulate / MPI_Fetch_and_op (MPI_SUM)
 *                 / MPI_Compare_and_swap on MPI_LONG_LONG + flush
 *   xor_rate      every rank XORs random 8-byte words of a table spread over
 *                 all ranks (-x bytes each), MPI_Accumulate(MPI_BXOR) in one
 *                 lock_all epoch, MPI_Win_flush_all every 1024 updates (HPCC
 *                 RandomAccess); million updates/s, all ranks together
 *   put_bw        osu_put_bw: -W puts to distinct slots, one flush; GB/s
 *   fence_lat     MPI_Win_fence with no data, every rank; needs 4 ranks
 * The others need 2 (more ranks wait; xor_rate uses all). Without -m, all
 * that fit the rank count run.
 *
 * Length: over 700 lines on purpose: one standard-MPI program, ten small
 * measurements sharing one timing loop and one reporting format, that must
 * build unchanged against any MPI.
 *
 * Timing: calibrate (double the loop until the better of two runs takes
 * 1 ms), then up to 100 samples of a batch of iterations each, sized to fit
 * the budget (-t), cut short once twice the budget is spent. A latency sample is the batch's
 * mean per iteration; fence_lat and xor_rate take the slowest rank's time.
 * Figures: median over the samples; best = lowest latency, highest rate.
 *
 * Each measurement checks its result once, after the timing: the target
 * holds what was put, the origin what was got, the counters equal the
 * operations issued (acc, fop, cas), the table the XOR of every update
 * regenerated from the same seeds, a put between two fences arrived. A
 * mismatch prints an error, no figure, and the exit status is 3.
 *
 *   rma [-m LIST] [-s SIZES] [-b SIZES] [-W WINDOW] [-x BYTES] [-n MAX_ITERS]
 *       [-t SECONDS]
 *
 * Output (rank 0): '#' comment lines, then one line per measurement and size:
 * "<name> <bytes> <window> <sync> <median> <best> <unit> <samples> <iters/sample>".
 * Standard MPI only: built against mpi-lite, Open MPI and MPICH.
 */
#include <mpi.h>

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define RM_MAX_SIZES   16
#define RM_SAMPLES     100
#define RM_MIN_SAMPLES 5
#define RM_CALIBRATE_S 1e-3 /* the calibration loop grows until it takes this long */
#define RM_XOR_BATCH   1024 /* xor_rate: updates between two MPI_Win_flush_all */
#define RM_WINDOW      64   /* put_bw: puts per flush, as osu_put_bw */
#define RM_ORIGIN      0
#define RM_TARGET      1
#define RM_EXIT_CHECK  3 /* exit status when a result is wrong */
/* MPI_Win_allocate windows are never smaller than a page: MPICH 4.0.2
 * (ch4:ucx) places an 8-byte window's local memory where remote puts do
 * not land (the target never sees them; osu allocates megabytes anyway). */
#define RM_MIN_WIN 4096

// clang-format off
enum { M_PUT_LAT, M_GET_LAT, M_PUT_LAT_LOCK, M_PUT_LAT_DYN, M_ACC_LAT, M_FOP_LAT, M_CAS_LAT,
       M_XOR_RATE, M_PUT_BW, M_FENCE_LAT, M_N };

/* name, window flavour (put_lat_lock: MPI_Win_create, put_lat_dyn:
 * MPI_Win_create_dynamic, the others MPI_Win_allocate), synchronisation */
static const struct rm_meas {
	const char *name, *flavor, *sync;
	int min_ranks;
} meas[M_N] = {
	[M_PUT_LAT]      = {"put_lat",      "allocate", "flush",     2},
	[M_GET_LAT]      = {"get_lat",      "allocate", "flush",     2},
	[M_PUT_LAT_LOCK] = {"put_lat_lock", "create",   "lock",      2},
	[M_PUT_LAT_DYN]  = {"put_lat_dyn",  "dynamic",  "flush",     2},
	[M_ACC_LAT]      = {"acc_lat",      "allocate", "flush",     2},
	[M_FOP_LAT]      = {"fop_lat",      "allocate", "flush",     2},
	[M_CAS_LAT]      = {"cas_lat",      "allocate", "flush",     2},
	[M_XOR_RATE]     = {"xor_rate",     "allocate", "flush_all", 2},
	[M_PUT_BW]       = {"put_bw",       "allocate", "flush",     2},
	[M_FENCE_LAT]    = {"fence_lat",    "allocate", "fence",     4},
};
// clang-format on

struct rm_opts {
	int budget_s, window;
	long max_iters;
	size_t xor_bytes;
};

/* What one measurement's loop works on. */
struct rm_ctx {
	MPI_Win win;
	MPI_Aint disp;	     /* target displacement (dynamic windows: an address) */
	size_t bytes;	     /* per operation */
	int window;	     /* put_bw: puts per flush */
	unsigned char *obuf; /* origin buffer (fop: the operand; cas: new, compare) */
	long long res;	     /* fetch_and_op / compare_and_swap result */
	long long cas_next;  /* cas_lat: the value the target holds if all went well */
	long cas_fail;
	long calls; /* loop iterations so far, warm-up included */
	/* xor_rate */
	uint64_t rng, words, *vals;
};

typedef void rm_loop_fn(struct rm_ctx *c, long n);

static int rank, nprocs;

static void usage(void)
{
	fprintf(
	    stderr,
	    "usage: rma [-m LIST] [-s SIZES] [-b SIZES] [-W WINDOW] [-x BYTES] [-n MAX_ITERS] "
	    "[-t SECONDS]\n"
	    "  -m LIST       comma-separated measurements (default: all the rank count allows):\n"
	    "                put_lat,get_lat,put_lat_lock,put_lat_dyn,acc_lat,fop_lat,cas_lat,\n"
	    "                xor_rate,put_bw (2 ranks), fence_lat (4 ranks)\n"
	    "  -s SIZES      sizes of put_lat, get_lat, put_lat_lock, put_lat_dyn, acc_lat\n"
	    "                (multiples of 8) (default 8; k/m suffixes)\n"
	    "  -b SIZES      put_bw sizes (default 64k,4m)\n"
	    "  -W WINDOW     put_bw: puts per flush (default %d)\n"
	    "  -x BYTES      xor_rate: table bytes per rank (default 1m)\n"
	    "  -n MAX_ITERS  timed iterations per measurement at most (default 10000000)\n"
	    "  -t SECONDS    time budget per measurement (default 2)\n",
	    RM_WINDOW);
}

/* ---- data patterns and checks ------------------------------------------- */

static uint64_t rm_splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Fills (or, with @check, compares) @len bytes with a pattern drawn from
 * @seed; returns the number of the first differing byte + 1, 0 if equal. */
static size_t rm_pattern(unsigned char *p, size_t len, uint64_t seed, int check)
{
	for (size_t off = 0; off < len; off += 8) {
		uint64_t w = rm_splitmix(&seed);
		size_t n = len - off < 8 ? len - off : 8;

		if (!check)
			memcpy(p + off, &w, n);
		else if (memcmp(p + off, &w, n))
			return off + 1;
	}
	return 0;
}

/* What a failed check found, for rm_agree. */
static char rm_why[160];

/* Every rank learns whether every rank's check passed; a failing rank says
 * what went wrong. */
static int rm_agree(int ok, const char *name)
{
	int all;

	if (!ok)
		fprintf(stderr, "rma: %s: rank %d: wrong result: %s\n", name, rank, rm_why);
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	return all;
}

/* ---- timing ------------------------------------------------------------- */

/* One timed run of @n iterations: rank 0 alone, or (@collective) every rank,
 * started together, the slowest rank's time. */
static double rm_timed(rm_loop_fn *fn, struct rm_ctx *c, long n, int collective)
{
	double t0, dt, worst;

	if (collective)
		MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	fn(c, n);
	dt = MPI_Wtime() - t0;
	if (!collective)
		return dt;
	MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return worst;
}

/* Calibrates, then fills @sec with per-sample times of *per_p iterations
 * each; returns the number of samples. Collective runs take the same
 * decisions on every rank: they are made from reduced times only. */
static int rm_time(rm_loop_fn *fn, struct rm_ctx *c, int collective, const struct rm_opts *o,
		   double *sec, long *per_p)
{
	double dt, dt2, one, spent = 0.0, budget = o->budget_s;
	long n = 1, per, cap;
	int nsamples, s;

	fn(c, 1); /* warm-up: first-time costs (connections, page faults) */
	for (;;) {
		/* the better of two: one preemption must not stop the doubling */
		dt = rm_timed(fn, c, n, collective);
		dt2 = rm_timed(fn, c, n, collective);
		dt = dt2 < dt ? dt2 : dt;
		if (dt >= RM_CALIBRATE_S || n >= o->max_iters)
			break;
		n *= 2;
	}
	one = dt / n > 1e-9 ? dt / n : 1e-9;
	nsamples = budget / one > RM_SAMPLES	   ? RM_SAMPLES
		   : budget / one < RM_MIN_SAMPLES ? RM_MIN_SAMPLES
						   : (int)(budget / one);
	per = (long)(budget / nsamples / one);
	cap = o->max_iters / nsamples;
	per = per > cap ? cap : per;
	per = per < 1 ? 1 : per;
	for (s = 0; s < nsamples;) {
		sec[s] = rm_timed(fn, c, per, collective);
		spent += sec[s++];
		if (spent > 2.0 * budget && s >= RM_MIN_SAMPLES)
			break;
	}
	*per_p = per;
	return s;
}

/* Rank 0 prints the measurement's line. @work > 0: a rate of @work units
 * per iteration (figure = work * per / sec, best = largest); otherwise a
 * latency in usec per iteration (best = smallest). */
static void rm_report(int m, size_t bytes, double *sec, int ns, long per, double work,
		      const char *unit)
{
	double best;

	if (rank != 0)
		return;
	for (int i = 0; i < ns; i++)
		sec[i] = work > 0 ? work * per / sec[i] : sec[i] / per * 1e6;
	double med = bench_median(sec, (size_t)ns); /* sorts */

	best = work > 0 ? sec[ns - 1] : sec[0];
	printf("%-13s %9zu %-9s %-9s %12.3f %12.3f %-7s %7d %9ld\n", meas[m].name, bytes,
	       meas[m].flavor, meas[m].sync, med, best, unit, ns, per);
	fflush(stdout);
}

/* ---- the loops (rank 0 for the passive-target ones) ---------------------- */

static void loop_put_flush(struct rm_ctx *c, long n)
{
	for (long i = 0; i < n; i++) {
		MPI_Put(c->obuf, (int)c->bytes, MPI_BYTE, RM_TARGET, c->disp, (int)c->bytes,
			MPI_BYTE, c->win);
		MPI_Win_flush(RM_TARGET, c->win);
	}
	c->calls += n;
}

static void loop_get_flush(struct rm_ctx *c, long n)
{
	for (long i = 0; i < n; i++) {
		MPI_Get(c->obuf, (int)c->bytes, MPI_BYTE, RM_TARGET, c->disp, (int)c->bytes,
			MPI_BYTE, c->win);
		MPI_Win_flush(RM_TARGET, c->win);
	}
	c->calls += n;
}

static void loop_put_lock(struct rm_ctx *c, long n)
{
	for (long i = 0; i < n; i++) {
		MPI_Win_lock(MPI_LOCK_SHARED, RM_TARGET, 0, c->win);
		MPI_Put(c->obuf, (int)c->bytes, MPI_BYTE, RM_TARGET, c->disp, (int)c->bytes,
			MPI_BYTE, c->win);
		MPI_Win_unlock(RM_TARGET, c->win);
	}
	c->calls += n;
}

static void loop_acc(struct rm_ctx *c, long n)
{
	int count = (int)(c->bytes / sizeof(long long));

	for (long i = 0; i < n; i++) {
		MPI_Accumulate(c->obuf, count, MPI_LONG_LONG, RM_TARGET, c->disp, count,
			       MPI_LONG_LONG, MPI_SUM, c->win);
		MPI_Win_flush(RM_TARGET, c->win);
	}
	c->calls += n;
}

static void loop_fop(struct rm_ctx *c, long n)
{
	for (long i = 0; i < n; i++) {
		MPI_Fetch_and_op(c->obuf, &c->res, MPI_LONG_LONG, RM_TARGET, c->disp, MPI_SUM,
				 c->win);
		MPI_Win_flush(RM_TARGET, c->win);
	}
	c->calls += n;
}

/* Each swap expects the value the previous one left: all succeed when the
 * operation is atomic and the result comes back right. */
static void loop_cas(struct rm_ctx *c, long n)
{
	long long *opnd = (long long *)c->obuf; /* [0] new value, [1] compare */

	for (long i = 0; i < n; i++) {
		opnd[1] = c->cas_next;
		opnd[0] = c->cas_next + 1;
		MPI_Compare_and_swap(&opnd[0], &opnd[1], &c->res, MPI_LONG_LONG, RM_TARGET, c->disp,
				     c->win);
		MPI_Win_flush(RM_TARGET, c->win);
		if (c->res == opnd[1])
			c->cas_next++;
		else
			c->cas_fail++;
	}
	c->calls += n;
}

static void loop_put_bw(struct rm_ctx *c, long n)
{
	for (long i = 0; i < n; i++) {
		for (int j = 0; j < c->window; j++)
			MPI_Put(c->obuf + (size_t)j * c->bytes, (int)c->bytes, MPI_BYTE, RM_TARGET,
				c->disp + (MPI_Aint)((size_t)j * c->bytes), (int)c->bytes, MPI_BYTE,
				c->win);
		MPI_Win_flush(RM_TARGET, c->win);
	}
	c->calls += n;
}

/* One random update: the word index over the whole table, and the value. */
static uint64_t rm_xor_next(uint64_t *rng, uint64_t total, uint64_t *idx_p)
{
	uint64_t r = rm_splitmix(rng);

	*idx_p = r % total;
	return r;
}

static void loop_xor(struct rm_ctx *c, long n)
{
	uint64_t total = c->words * (uint64_t)nprocs, idx;

	for (long i = 0; i < n; i++) {
		/* the origin values stay untouched until the flush completes them */
		for (int k = 0; k < RM_XOR_BATCH; k++) {
			c->vals[k] = rm_xor_next(&c->rng, total, &idx);
			MPI_Accumulate(&c->vals[k], 1, MPI_UNSIGNED_LONG_LONG,
				       (int)(idx / c->words), (MPI_Aint)(idx % c->words), 1,
				       MPI_UNSIGNED_LONG_LONG, MPI_BXOR, c->win);
		}
		MPI_Win_flush_all(c->win);
	}
	c->calls += n;
}

static void loop_fence(struct rm_ctx *c, long n)
{
	for (long i = 0; i < n; i++)
		MPI_Win_fence(0, c->win);
	c->calls += n;
}

/* ---- measurements --------------------------------------------------------- */

static uint64_t rm_seed(int m, size_t bytes)
{
	return 0x5EED0000ull + (uint64_t)m * 0x1000003ull + bytes;
}

/* Before the run: the origin buffer holds the pattern for puts, 1s for
 * acc/fop, zero for gets; the target's window memory the pattern for
 * get_lat, zero otherwise (counters start at 0). */
static int rm_init(int m, struct rm_ctx *c, size_t obytes, unsigned char *tmem, size_t tbytes)
{
	if (!(c->obuf = bench_alloc(obytes, 0)))
		return -1;
	if (m == M_ACC_LAT || m == M_FOP_LAT)
		for (size_t i = 0; i < obytes / sizeof(long long); i++)
			((long long *)c->obuf)[i] = 1;
	else if (m != M_GET_LAT && m != M_CAS_LAT)
		rm_pattern(c->obuf, obytes, rm_seed(m, c->bytes), 0);
	if (rank != RM_TARGET)
		return 0;
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, c->win);
	if (m == M_GET_LAT)
		rm_pattern(tmem, tbytes, rm_seed(m, c->bytes), 0);
	else
		memset(tmem, 0, tbytes);
	MPI_Win_unlock(rank, c->win);
	return 0;
}

/* After a passive-target run: the origin checks what it fetched, the
 * target its window memory (read inside an exclusive lock on itself, right
 * in the separate memory model as in the unified). */
static int rm_check(int m, struct rm_ctx *c, unsigned char *tmem, size_t tbytes)
{
	const long long *v = (const long long *)tmem;
	size_t bad = 0;

	if (rank == RM_ORIGIN) {
		if (m == M_GET_LAT &&
		    (bad = rm_pattern(c->obuf, c->bytes, rm_seed(m, c->bytes), 1)))
			snprintf(rm_why, sizeof(rm_why),
				 "origin byte %zu differs from the target's", bad - 1);
		else if (m == M_FOP_LAT && c->res != c->calls - 1)
			snprintf(rm_why, sizeof(rm_why), "last fetched value %lld, want %ld",
				 c->res, c->calls - 1);
		else if (m == M_CAS_LAT && (c->cas_fail || c->cas_next != c->calls))
			snprintf(rm_why, sizeof(rm_why),
				 "%ld of %ld swaps found an unexpected value", c->cas_fail,
				 c->calls);
		else
			return 1;
		return 0;
	}
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, c->win);
	if (m == M_ACC_LAT || m == M_FOP_LAT || m == M_CAS_LAT) {
		for (size_t i = 0; !bad && i < (m == M_ACC_LAT ? c->bytes / 8 : 1); i++)
			if (v[i] != c->calls) {
				snprintf(rm_why, sizeof(rm_why),
					 "target word %zu is %lld, want %ld", i, v[i], c->calls);
				bad = 1;
			}
	} else if (m != M_GET_LAT && (bad = rm_pattern(tmem, tbytes, rm_seed(m, c->bytes), 1))) {
		snprintf(rm_why, sizeof(rm_why), "target byte %zu of %zu is not what was put",
			 bad - 1, tbytes);
	}
	MPI_Win_unlock(rank, c->win);
	return !bad;
}

/* The window of a passive-target measurement; *tmem_p its local memory. */
static int rm_win_open(int m, struct rm_ctx *c, size_t tbytes, unsigned char **tmem_p)
{
	MPI_Aint addr = 0;

	c->disp = 0;
	switch (m) {
	default:
		MPI_Win_allocate((MPI_Aint)(tbytes < RM_MIN_WIN ? RM_MIN_WIN : tbytes), 1,
				 MPI_INFO_NULL, MPI_COMM_WORLD, tmem_p, &c->win);
		return 0;
	case M_PUT_LAT_LOCK:
		/* user memory, not MPI_Alloc_mem: the path of a plain buffer */
		*tmem_p = bench_alloc(tbytes, 0);
		if (!*tmem_p)
			return -1;
		MPI_Win_create(*tmem_p, (MPI_Aint)tbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
			       &c->win);
		return 0;
	case M_PUT_LAT_DYN:
		MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &c->win);
		*tmem_p = NULL;
		if (rank == RM_TARGET) {
			*tmem_p = bench_alloc(tbytes, 0);
			if (!*tmem_p)
				return -1;
			MPI_Win_attach(c->win, *tmem_p, (MPI_Aint)tbytes);
			MPI_Get_address(*tmem_p, &addr);
		}
		MPI_Bcast(&addr, 1, MPI_AINT, RM_TARGET, MPI_COMM_WORLD);
		c->disp = addr;
		return 0;
	}
}

static void rm_win_close(int m, struct rm_ctx *c, unsigned char *tmem)
{
	if (m == M_PUT_LAT_DYN && tmem)
		MPI_Win_detach(c->win, tmem);
	MPI_Win_free(&c->win);
	if (m == M_PUT_LAT_LOCK || m == M_PUT_LAT_DYN)
		free(tmem);
}

/* put_lat, get_lat, put_lat_lock, put_lat_dyn, acc_lat, fop_lat, cas_lat,
 * put_bw: rank 0 works, the others wait in MPI_Barrier. Returns 0 when the
 * result checked out. */
static int rm_passive(int m, size_t bytes, const struct rm_opts *o, double *sec)
{
	static rm_loop_fn *const loops[M_N] = {
	    [M_PUT_LAT] = loop_put_flush,     [M_GET_LAT] = loop_get_flush,
	    [M_PUT_LAT_LOCK] = loop_put_lock, [M_PUT_LAT_DYN] = loop_put_flush,
	    [M_ACC_LAT] = loop_acc,	      [M_FOP_LAT] = loop_fop,
	    [M_CAS_LAT] = loop_cas,	      [M_PUT_BW] = loop_put_bw,
	};
	struct rm_ctx c = {.bytes = bytes, .window = m == M_PUT_BW ? o->window : 1};
	size_t tbytes = bytes * (size_t)c.window, obytes = m == M_CAS_LAT ? 16 : tbytes;
	unsigned char *tmem = NULL;
	long per = 0;
	int ns = 0, ok = 1;

	if (rm_win_open(m, &c, tbytes, &tmem) || rm_init(m, &c, obytes, tmem, tbytes)) {
		fprintf(stderr, "rma: %s: out of memory\n", meas[m].name);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == RM_ORIGIN) {
		if (m != M_PUT_LAT_LOCK)
			MPI_Win_lock_all(0, c.win);
		ns = rm_time(loops[m], &c, 0, o, sec, &per);
		if (m != M_PUT_LAT_LOCK)
			MPI_Win_unlock_all(c.win);
		ok = rm_check(m, &c, tmem, tbytes);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Bcast(&c.calls, 1, MPI_LONG, RM_ORIGIN, MPI_COMM_WORLD);
	if (rank == RM_TARGET)
		ok = rm_check(m, &c, tmem, tbytes);
	ok = rm_agree(ok, meas[m].name);
	if (ok) /* no figure for a wrong result */
		rm_report(m, bytes, sec, ns, per, m == M_PUT_BW ? (double)tbytes / 1e9 : 0,
			  m == M_PUT_BW ? "GB/s" : "usec");
	rm_win_close(m, &c, tmem);
	free(c.obuf);
	return ok ? 0 : -1;
}

/* xor_rate: the table is the union of every rank's window; after the run
 * each rank regenerates its updates into a full-size shadow table, the
 * shadows are XOR-reduced, and every rank compares its part. */
static int rm_xor(const struct rm_opts *o, double *sec)
{
	struct rm_ctx c = {.words = o->xor_bytes / 8, .rng = 0xC0FFEEull + (uint64_t)rank};
	uint64_t *table, *shadow, total = c.words * (uint64_t)nprocs, idx, seed = c.rng;
	long per;
	int ns, ok = 1;

	MPI_Win_allocate((MPI_Aint)(o->xor_bytes < RM_MIN_WIN ? RM_MIN_WIN : o->xor_bytes), 8,
			 MPI_INFO_NULL, MPI_COMM_WORLD, &table, &c.win);
	c.vals = calloc(RM_XOR_BATCH, sizeof(*c.vals));
	shadow = calloc(total, sizeof(*shadow));
	if (!c.vals || !shadow)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, c.win);
	memset(table, 0, o->xor_bytes);
	MPI_Win_unlock(rank, c.win);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, c.win);
	ns = rm_time(loop_xor, &c, 1, o, sec, &per);
	MPI_Win_unlock_all(c.win);
	MPI_Barrier(MPI_COMM_WORLD);

	for (long u = 0; u < c.calls * RM_XOR_BATCH; u++) {
		uint64_t r = rm_xor_next(&seed, total, &idx);

		shadow[idx] ^= r;
	}
	MPI_Allreduce(MPI_IN_PLACE, shadow, (int)total, MPI_UNSIGNED_LONG_LONG, MPI_BXOR,
		      MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, c.win);
	for (uint64_t i = 0; ok && i < c.words; i++)
		if (table[i] != shadow[(uint64_t)rank * c.words + i]) {
			snprintf(rm_why, sizeof(rm_why), "table word %llu is not the updates' XOR",
				 (unsigned long long)i);
			ok = 0;
		}
	MPI_Win_unlock(rank, c.win);
	ok = rm_agree(ok, meas[M_XOR_RATE].name);
	if (ok)
		rm_report(M_XOR_RATE, 8, sec, ns, per, (double)nprocs * RM_XOR_BATCH / 1e6,
			  "Mupd/s");
	MPI_Win_free(&c.win);
	free(c.vals);
	free(shadow);
	return ok ? 0 : -1;
}

/* fence_lat: every rank; checked by one put to the right neighbour between
 * two fences. */
static int rm_fence(const struct rm_opts *o, double *sec)
{
	struct rm_ctx c = {.bytes = 0};
	long long *slot, mine = rank + 1;
	long per;
	int ns, ok;

	MPI_Win_allocate(RM_MIN_WIN, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &slot,
			 &c.win);
	*slot = 0; /* before the first fence: no epoch yet */
	MPI_Win_fence(0, c.win);
	ns = rm_time(loop_fence, &c, 1, o, sec, &per);
	MPI_Put(&mine, 1, MPI_LONG_LONG, (rank + 1) % nprocs, 0, 1, MPI_LONG_LONG, c.win);
	MPI_Win_fence(0, c.win);
	ok = *slot == (rank + nprocs - 1) % nprocs + 1;
	if (!ok)
		snprintf(rm_why, sizeof(rm_why), "slot holds %lld after the fence, want %d", *slot,
			 (rank + nprocs - 1) % nprocs + 1);
	MPI_Win_fence(MPI_MODE_NOSUCCEED, c.win);
	ok = rm_agree(ok, meas[M_FENCE_LAT].name);
	if (ok)
		rm_report(M_FENCE_LAT, 0, sec, ns, per, 0, "usec");
	MPI_Win_free(&c.win);
	return ok ? 0 : -1;
}

/* ---- options -------------------------------------------------------------- */

static int rm_parse_sizes(char *arg, size_t *sizes, int *n_p)
{
	char *save, *tok;
	int bad = 0;

	*n_p = 0;
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (*n_p == RM_MAX_SIZES || bench_parse_size(tok, &sizes[(*n_p)++]) ||
		    sizes[*n_p - 1] == 0 || sizes[*n_p - 1] > (1u << 30))
			bad = 1;
	return bad || *n_p == 0;
}

static int rm_parse_list(char *arg, int *want)
{
	char *save, *tok;
	int bad = 0;

	memset(want, 0, M_N * sizeof(*want));
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 0; k < M_N && strcmp(tok, meas[k].name); k++)
			;
		if (k == M_N)
			bad = 1;
		else
			want[k] = 1;
	}
	return bad;
}

/* Needs 2 ranks, 4 for fence_lat: an explicit request that cannot run is
 * an error, the default set drops what does not fit. */
static int rm_check_ranks(int *want, int explicit)
{
	if (nprocs < 2) {
		if (rank == 0)
			fprintf(stderr, "rma: needs at least 2 ranks, got %d\n", nprocs);
		return -1;
	}
	for (int m = 0; m < M_N; m++) {
		if (!want[m] || nprocs >= meas[m].min_ranks)
			continue;
		if (explicit) {
			if (rank == 0)
				fprintf(stderr, "rma: %s needs at least %d ranks, got %d\n",
					meas[m].name, meas[m].min_ranks, nprocs);
			return -1;
		}
		want[m] = 0;
		if (rank == 0)
			printf("# %s skipped: needs %d ranks\n", meas[m].name, meas[m].min_ranks);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rm_opts o = {
	    .budget_s = 2, .window = RM_WINDOW, .max_iters = 10000000, .xor_bytes = 1u << 20};
	size_t lat_sizes[RM_MAX_SIZES] = {8}, bw_sizes[RM_MAX_SIZES] = {64u << 10, 4u << 20};
	int n_lat = 1, n_bw = 2, want[M_N], explicit = 0, opt, bad = 0, failed = 0, iters = 0;
	double *sec;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	for (int m = 0; m < M_N; m++)
		want[m] = 1;
	while ((opt = getopt(argc, argv, "m:s:b:W:x:n:t:h")) != -1) {
		switch (opt) {
		case 'm':
			bad |= rm_parse_list(optarg, want);
			explicit = 1;
			break;
		case 's': bad |= rm_parse_sizes(optarg, lat_sizes, &n_lat); break;
		case 'b': bad |= rm_parse_sizes(optarg, bw_sizes, &n_bw); break;
		case 'W': bad |= bench_parse_int(optarg, 1, &o.window); break;
		case 'x': bad |= bench_parse_size(optarg, &o.xor_bytes); break;
		case 'n':
			bad |= bench_parse_int(optarg, 1, &iters);
			o.max_iters = iters;
			break;
		case 't': bad |= bench_parse_int(optarg, 1, &o.budget_s); break;
		default: bad = 1; break;
		}
	}
	for (int i = 0; want[M_ACC_LAT] && i < n_lat; i++)
		bad |= lat_sizes[i] % sizeof(long long) != 0;
	bad |= o.xor_bytes < 8 || o.xor_bytes % 8 || o.xor_bytes > (64u << 20);
	if (bad || optind != argc) {
		if (rank == 0)
			usage();
		MPI_Finalize();
		return 2;
	}
	if (rm_check_ranks(want, explicit)) {
		MPI_Finalize();
		return 2;
	}
	sec = calloc(RM_SAMPLES, sizeof(*sec));
	if (!sec)
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (rank == 0) {
		printf("# rma: %d ranks; origin rank 0, target rank 1 idle in MPI_Barrier "
		       "(xor_rate, fence_lat: every rank); budget %d s per measurement\n",
		       nprocs, o.budget_s);
		printf("# latency: median (best = min) over samples of the mean per iteration; "
		       "rates: median (best = max)\n");
		printf("# %-11s %9s %-9s %-9s %12s %12s %-7s %7s %9s\n", "name", "bytes", "window",
		       "sync", "median", "best", "unit", "samples", "iters/smp");
	}
	for (int m = 0; m < M_N && !failed; m++) {
		int lat = m != M_PUT_BW && m != M_XOR_RATE && m != M_FENCE_LAT;
		int fixed8 = m == M_FOP_LAT || m == M_CAS_LAT;

		if (!want[m])
			continue;
		if (m == M_XOR_RATE)
			failed = rm_xor(&o, sec);
		else if (m == M_FENCE_LAT)
			failed = rm_fence(&o, sec);
		else if (fixed8)
			failed = rm_passive(m, sizeof(long long), &o, sec);
		else
			for (int i = 0; i < (lat ? n_lat : n_bw) && !failed; i++)
				failed = rm_passive(m, lat ? lat_sizes[i] : bw_sizes[i], &o, sec);
	}
	free(sec);
	MPI_Finalize();
	return failed ? RM_EXIT_CHECK : 0;
}
