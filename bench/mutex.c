/*
 * mutex.c — a distributed mutex over MPI one-sided communication, as Ross,
 * Latham, Gropp, Thakur and Toonen (2005) build and measure it
 * ("Implementing MPI-IO Atomic Mode Without File System Support"), so that
 * every MPI can be measured with the same algorithm; built by mpi-lite it
 * also measures MPIX_Mutex (mpi-lite's own mutex, its default algorithm).
 *
 * Algorithms (-a):
 *   onesided  §2.1: the home keeps a waitlist of one byte per rank in an
 *             MPI_Win_allocate window. lock = one MPI_Win_lock(EXCLUSIVE)
 *             epoch at the home that puts our byte = 1 and gets every other
 *             byte (an indexed type that leaves our byte out); if one is
 *             set, spin on our own poll byte (a second window), each look
 *             an exclusive epoch on ourselves, then reset it. unlock = the
 *             same epoch putting 0; the next waiting rank after us
 *             (wrapping) gets its poll byte set by a put in one more epoch.
 *   hybrid    §2.2: the same, but the notification is a zero-byte
 *             MPI_Send to the next rank, which waits in MPI_Recv from
 *             MPI_ANY_SOURCE.
 *   mpix      MPIX_Mutex_lock / MPIX_Mutex_unlock (mpi-lite only).
 * Mutex k lives at rank k % size; mutex 0 at rank 0, mutex 1 at rank 1.
 *
 * Measurements (-m):
 *   uncontended  rank 0 locks and unlocks mutex 1 (home: rank 1, which sits
 *                in MPI_Barrier meanwhile) and then mutex 0 (its own);
 *                calibrated batches (about 2 ms each) for half the budget
 *                each; median and best batch mean per lock+unlock (usec).
 *   contended    every rank runs { lock(0); work; unlock(0) } for the
 *                budget (-t, per work value of -w), then finishes its
 *                cycle. Holders are serialised, so with A acquisitions in
 *                all (every rank's count) and elapsed from the first start
 *                to the last end (CLOCK_MONOTONIC: one node's clock),
 *                cycle = elapsed / A and overhead = cycle - the mean work
 *                really done per cycle: the time per hand-off lost to the
 *                lock (the paper's Table 1 / Fig. 8 overhead, per hand-off).
 *                min and max are the fewest and most acquisitions of one
 *                rank: a starved rank shows as a min far below A / size.
 *
 * Mutual exclusion is checked in every cycle through a counter and an
 * owner word in an MPI_Win_allocate_shared window (all ranks on one node):
 * on entry the owner must be 0, then it is set to us and the counter is
 * incremented by a plain load and store; on exit the owner must still be
 * us. At the end the counter must equal the acquisitions. A violation
 * prints an error and the exit status is 3. A lock or unlock that returns
 * an error exits with status 2. An algorithm that needs the target to call
 * MPI (onesided or hybrid where the MPI has no asynchronous progress) may
 * hang: the caller bounds every run with a time limit; the lines printed
 * so far (one per point, flushed) stay valid.
 *
 *   mutex [-a onesided|hybrid|mpix] [-m uncontended|contended] [-w WORKS]
 *         [-t SECONDS]
 *
 * Output (rank 0), '#' lines are comments:
 *   uncontended <algo> remote|self <median_us> <best_us> <samples> <iters/sample>
 *   contended <algo> <ranks> <work_ms> <overhead_us> <cycle_us> <acq> <min> <max>
 * Standard MPI only (plus MPIX_Mutex under mpi-lite, where mpi.h defines
 * MPILITE): built against mpi-lite, Open MPI and MPICH.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"

#define MX_EXIT_CHECK 3
#define MX_EXIT_CALL  2
#define MX_TAG	      4711 /* hybrid notifications: MX_TAG + mutex */
#define MX_MUTEXES    2	   /* 0 at rank 0, 1 at rank 1 */
#define MX_MAX_WORKS  8
#define MX_SAMPLES    100
#define MX_BATCH_S    2e-3 /* an uncontended batch lasts about this long */
#define MX_MIN_WIN    4096 /* allocated windows of at least a page (see rma.c) */

enum { A_ONESIDED, A_HYBRID, A_MPIX };
static const char *const algo_names[] = {"onesided", "hybrid", "mpix"};

static int rank, nprocs, algo;
static MPI_Win wl_win, poll_win, chk_win;
static unsigned char *poll_base; /* our poll bytes, one per mutex */
static volatile long long *chk;	 /* [0] owner (rank + 1), [1] counter: shared */
static MPI_Datatype others;	 /* every waitlist byte but ours */
static unsigned char *wl_copy;	 /* [nprocs] */
static long violations;
#ifdef MPILITE
static MPIX_Mutex mpix;
#endif

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void call_ok(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "mutex [rank %d]: %s failed (%d)\n", rank, what, rc);
		MPI_Abort(MPI_COMM_WORLD, MX_EXIT_CALL);
	}
}

/* ---- the paper's algorithms ------------------------------------------------------- */

static MPI_Aint wl_disp(int k)
{
	return (MPI_Aint)(k / nprocs) * nprocs;
}

/* One exclusive epoch at mutex @k's home: our byte := @mine, the others
 * into wl_copy; returns the next waiting rank after us (wrapping) or -1. */
static int wl_epoch(int k, unsigned char mine)
{
	int home = k % nprocs, next = -1;

	memset(wl_copy, 0, (size_t)nprocs);
	call_ok(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, home, 0, wl_win), "MPI_Win_lock");
	call_ok(MPI_Put(&mine, 1, MPI_BYTE, home, wl_disp(k) + rank, 1, MPI_BYTE, wl_win),
		"MPI_Put");
	call_ok(MPI_Get(wl_copy, 1, others, home, wl_disp(k), 1, others, wl_win), "MPI_Get");
	call_ok(MPI_Win_unlock(home, wl_win), "MPI_Win_unlock");
	for (int j = 1; j < nprocs && next < 0; j++)
		if (wl_copy[(rank + j) % nprocs])
			next = (rank + j) % nprocs;
	return next;
}

static void mx_lock(int k)
{
	unsigned char v = 0;

	if (algo == A_MPIX) {
#ifdef MPILITE
		call_ok(MPIX_Mutex_lock(mpix, k, k % nprocs), "MPIX_Mutex_lock");
#endif
		return;
	}
	if (wl_epoch(k, 1) < 0)
		return; /* nobody else in the waitlist: ours */
	if (algo == A_HYBRID) {
		call_ok(MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, MX_TAG + k, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE),
			"MPI_Recv");
		return;
	}
	while (!v) { /* fig. 3: look at our poll byte, one epoch each time */
		call_ok(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, poll_win), "MPI_Win_lock");
		v = ((volatile unsigned char *)poll_base)[k];
		call_ok(MPI_Win_unlock(rank, poll_win), "MPI_Win_unlock");
	}
	call_ok(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, poll_win), "MPI_Win_lock");
	poll_base[k] = 0;
	call_ok(MPI_Win_unlock(rank, poll_win), "MPI_Win_unlock");
}

static void mx_unlock(int k)
{
	static const unsigned char one = 1;
	int next;

	if (algo == A_MPIX) {
#ifdef MPILITE
		call_ok(MPIX_Mutex_unlock(mpix, k, k % nprocs), "MPIX_Mutex_unlock");
#endif
		return;
	}
	next = wl_epoch(k, 0);
	if (next < 0)
		return;
	if (algo == A_HYBRID) {
		call_ok(MPI_Send(NULL, 0, MPI_BYTE, next, MX_TAG + k, MPI_COMM_WORLD), "MPI_Send");
		return;
	}
	call_ok(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, poll_win), "MPI_Win_lock");
	call_ok(MPI_Put(&one, 1, MPI_BYTE, next, k, 1, MPI_BYTE, poll_win), "MPI_Put");
	call_ok(MPI_Win_unlock(next, poll_win), "MPI_Win_unlock");
}

/* ---- the exclusion check -------------------------------------------------------------- */

static void enter(void)
{
	long long c;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (chk[0] != 0)
		violations++;
	chk[0] = rank + 1;
	c = chk[1]; /* a plain read-modify-write: overlapping holders lose counts */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	chk[1] = c + 1;
}

static void leave(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (chk[0] != rank + 1)
		violations++;
	chk[0] = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* ---- set-up ------------------------------------------------------------------------------ */

static void setup(void)
{
	MPI_Comm node;
	MPI_Aint sz;
	int du, nsize, len[2], disp[2];
	void *p;

	wl_copy = calloc((size_t)nprocs, 1);
	len[0] = rank;
	disp[0] = 0;
	len[1] = nprocs - rank - 1;
	disp[1] = rank + 1;
	call_ok(MPI_Type_indexed(2, len, disp, MPI_BYTE, &others), "MPI_Type_indexed");
	call_ok(MPI_Type_commit(&others), "MPI_Type_commit");
	call_ok(MPI_Win_allocate(MX_MIN_WIN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &wl_win),
		"MPI_Win_allocate");
	memset(p, 0, MX_MIN_WIN);
	call_ok(MPI_Win_allocate(MX_MIN_WIN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &poll_win),
		"MPI_Win_allocate");
	poll_base = p;
	memset(p, 0, MX_MIN_WIN);
	call_ok(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
		"MPI_Comm_split_type");
	MPI_Comm_size(node, &nsize);
	if (nsize != nprocs) {
		if (rank == 0)
			fprintf(stderr, "mutex: all ranks must share one node (the check)\n");
		MPI_Abort(MPI_COMM_WORLD, MX_EXIT_CALL);
	}
	call_ok(MPI_Win_allocate_shared(rank == 0 ? 64 : 0, 1, MPI_INFO_NULL, node, &p, &chk_win),
		"MPI_Win_allocate_shared");
	call_ok(MPI_Win_shared_query(chk_win, 0, &sz, &du, &p), "MPI_Win_shared_query");
	chk = p;
	call_ok(MPI_Win_lock_all(MPI_MODE_NOCHECK, chk_win), "MPI_Win_lock_all");
	if (rank == 0)
		chk[0] = chk[1] = 0;
	MPI_Win_sync(chk_win);
#ifdef MPILITE
	if (algo == A_MPIX)
		call_ok(MPIX_Mutex_create(MX_MUTEXES, MPI_COMM_WORLD, &mpix), "MPIX_Mutex_create");
#endif
	MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- measurements ------------------------------------------------------------------------ */

static double batch(int k, long iters)
{
	double t0 = now();

	for (long i = 0; i < iters; i++) {
		mx_lock(k);
		enter();
		leave();
		mx_unlock(k);
	}
	return now() - t0;
}

static void uncontended(double budget)
{
	static const char *const where[] = {"self", "remote"};

	for (int k = 1; k >= 0; k--) {
		double s[MX_SAMPLES], t0;
		long iters = 1;
		int ns = 0;

		if (rank == 0) {
			batch(k, 100); /* warm-up */
			while (batch(k, iters) < MX_BATCH_S && iters < (1L << 30))
				iters *= 2;
			t0 = now();
			while (ns < MX_SAMPLES && (ns < 5 || now() - t0 < budget / 2))
				s[ns++] = batch(k, iters) / (double)iters * 1e6;
			bench_median(s, (size_t)ns);
			printf("uncontended %s %s %.4f %.4f %d %ld\n", algo_names[algo], where[k],
			       s[ns / 2], s[0], ns, iters);
			fflush(stdout);
		}
		MPI_Barrier(MPI_COMM_WORLD); /* the home idles here meanwhile */
	}
}

static double busy(double sec)
{
	double t0 = now(), t = t0;

	while (sec > 0 && (t = now()) - t0 < sec)
		;
	return t - t0;
}

static void contended(double work, double budget)
{
	double mine[3], *all = NULL, t_end, worked = 0, t_start, t_last, deadline;
	long count = 0, total = 0, cmin = 0, cmax = 0, *counts = NULL;

	if (rank == 0) {
		all = malloc(3 * sizeof(double) * (size_t)nprocs);
		counts = malloc(sizeof(long) * (size_t)nprocs);
		chk[1] = 0;
	}
	MPI_Win_sync(chk_win);
	MPI_Barrier(MPI_COMM_WORLD);
	t_start = now();
	deadline = t_start + budget;
	do {
		mx_lock(0);
		enter();
		worked += busy(work);
		leave();
		mx_unlock(0);
		count++;
	} while (now() < deadline);
	t_end = now();
	mine[0] = t_start;
	mine[1] = t_end;
	mine[2] = worked;
	MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	MPI_Gather(&count, 1, MPI_LONG, counts, 1, MPI_LONG, 0, MPI_COMM_WORLD);
	MPI_Win_sync(chk_win);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		t_start = all[0];
		t_last = all[1];
		worked = 0;
		cmin = cmax = counts[0];
		for (int r = 0; r < nprocs; r++) {
			t_start = all[3 * r] < t_start ? all[3 * r] : t_start;
			t_last = all[3 * r + 1] > t_last ? all[3 * r + 1] : t_last;
			worked += all[3 * r + 2];
			total += counts[r];
			cmin = counts[r] < cmin ? counts[r] : cmin;
			cmax = counts[r] > cmax ? counts[r] : cmax;
		}
		if (chk[1] != total) {
			fprintf(stderr,
				"mutex: error: %s, %d ranks: counter %lld after %ld acquisitions: "
				"mutual exclusion violated\n",
				algo_names[algo], nprocs, (long long)chk[1], total);
			violations++;
		}
		printf("contended %s %d %g %.4f %.4f %ld %ld %ld\n", algo_names[algo], nprocs,
		       work * 1e3, ((t_last - t_start) - worked) / (double)total * 1e6,
		       (t_last - t_start) / (double)total * 1e6, total, cmin, cmax);
		fflush(stdout);
		free(all);
		free(counts);
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: mutex [-a onesided|hybrid%s] [-m uncontended|contended] "
		"[-w WORKS] [-t SECONDS]\n"
		"  -w  contended: work in the critical section, comma-separated, in\n"
		"      seconds or with a ms/us suffix (default 0,1ms)\n"
		"  -t  seconds per measurement point (default 1; fractions allowed)\n",
#ifdef MPILITE
		"|mpix"
#else
		""
#endif
	);
}

int main(int argc, char **argv)
{
	double works[MX_MAX_WORKS] = {0, 1e-3}, budget = 1;
	int nworks = 2, contend = 0, opt;
	long bad;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	algo = A_ONESIDED;
	while ((opt = getopt(argc, argv, "a:m:w:t:h")) != -1) {
		char *tok, *save, *end;

		switch (opt) {
		case 'a':
			for (algo = 0; algo < 3 && strcmp(optarg, algo_names[algo]); algo++)
				;
#ifndef MPILITE
			if (algo == A_MPIX)
				algo = 3; /* MPIX_Mutex is mpi-lite's */
#endif
			if (algo > A_MPIX)
				goto usage;
			break;
		case 'm':
			if (!strcmp(optarg, "contended"))
				contend = 1;
			else if (strcmp(optarg, "uncontended"))
				goto usage;
			break;
		case 'w':
			nworks = 0;
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				double v = strtod(tok, &end);

				if (end == tok || v < 0 || nworks == MX_MAX_WORKS)
					goto usage;
				if (!strcmp(end, "ms"))
					v *= 1e-3;
				else if (!strcmp(end, "us"))
					v *= 1e-6;
				else if (*end && strcmp(end, "s"))
					goto usage;
				works[nworks++] = v;
			}
			break;
		case 't':
			budget = strtod(optarg, &end);
			if (*end || budget <= 0)
				goto usage;
			break;
		default: goto usage;
		}
	}
	if (nprocs < 2) {
		if (rank == 0)
			fprintf(stderr, "mutex: needs at least 2 ranks\n");
		MPI_Finalize();
		return 1;
	}
	setup();
	if (rank == 0)
		printf("# mutex: %s, %d ranks, %g s per point\n", algo_names[algo], nprocs, budget);
	if (contend)
		for (int w = 0; w < nworks; w++)
			contended(works[w], budget);
	else
		uncontended(budget);
	MPI_Allreduce(&violations, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (bad && rank == 0)
		fprintf(stderr, "mutex: error: %ld mutual exclusion violations (%s)\n", bad,
			algo_names[algo]);
	MPI_Win_unlock_all(chk_win);
#ifdef MPILITE
	if (algo == A_MPIX)
		MPIX_Mutex_free(&mpix);
#endif
	MPI_Win_free(&chk_win);
	MPI_Win_free(&poll_win);
	MPI_Win_free(&wl_win);
	MPI_Type_free(&others);
	free(wl_copy);
	MPI_Finalize();
	return bad ? MX_EXIT_CHECK : 0;
usage:
	if (rank == 0)
		usage();
	MPI_Finalize();
	return 1;
}
