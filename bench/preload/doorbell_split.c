/*
 * doorbell_split.c — an LD_PRELOAD library for the Soft-RoCE benchmarks
 * (bench/rxe-split.sh): it splits a verbs latency loop's time at the
 * doorbell, for perftest and ibtest alike, without changing either.
 *
 * Soft-RoCE (rxe) rings its doorbell with write(2) on the uverbs command
 * file, and the kernel runs the whole emulated round trip inside that call:
 * the post returns with the completion already in the CQ. Timing write()
 * therefore separates
 *   in  — the time inside the doorbell call: the emulated NIC (kernel), and
 *   gap — from one doorbell's return to the next one's call: the program's
 *         own user-space work per iteration (post, poll, MPI layers, timing).
 *
 *   ─ post ─► write(uverbs) ══ requester → responder → completer ══► ─ poll, MPI ─► write(uverbs)
 * ═══
 *             |<──────────────────────── in ──────────────────────>|<──── gap ────>|
 *
 * Only writes to files whose path starts with DOORBELL_SPLIT_PREFIX (default
 * /dev/infiniband/uverbs) count, and only from the first thread that rings
 * one (a PMIx or progress thread's writes go elsewhere anyway). At exit, a
 * process that saw at least 100 doorbells appends one line to the file
 * DOORBELL_SPLIT_OUT (stderr when unset):
 *
 *   doorbell-split tag=TAG pid=PID n=N in_us=MEDIAN,P25,P75 gap_us=MEDIAN,P25,P75
 *
 * leaving out the first 10 % of doorbells (connection set-up, warm-up);
 * TAG is DOORBELL_SPLIT_TAG. Time stamps are TSC reads on x86 (converted with
 * the TSC rate measured against CLOCK_MONOTONIC over the process's life),
 * CLOCK_MONOTONIC elsewhere. The wrapper adds the same few instructions to
 * every doorbell of every program, so comparisons stay fair; absolute
 * figures are a little above an unwrapped run's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SPLIT_MAX_SAMPLES (1u << 20)
#define SPLIT_MAX_FD	  4096
#define SPLIT_MIN_REPORT  100

typedef ssize_t (*write_fn_t)(int, const void *, size_t);

enum { FD_UNKNOWN = 0, FD_DOORBELL, FD_OTHER };

static write_fn_t real_write;
static const char *fd_prefix = "/dev/infiniband/uverbs";
static unsigned char fd_kind[SPLIT_MAX_FD];
static atomic_int owner_claimed;
static __thread int is_owner = -1; /* -1: not decided yet */
static uint64_t *in_ticks, *gap_ticks;
static unsigned nsamples;
static uint64_t last_end;
static uint64_t tsc0, ns0;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return now_ns();
#endif
}

__attribute__((constructor)) static void split_init(void)
{
	const char *p = getenv("DOORBELL_SPLIT_PREFIX");

	real_write = (write_fn_t)dlsym(RTLD_NEXT, "write");
	if (p && *p)
		fd_prefix = p;
	tsc0 = ticks();
	ns0 = now_ns();
}

static bool fd_is_doorbell(int fd)
{
	char link[64], path[PATH_MAX];
	ssize_t n;

	if (fd < 0 || fd >= SPLIT_MAX_FD)
		return false;
	if (fd_kind[fd] == FD_UNKNOWN) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof(path) - 1);
		if (n > 0)
			path[n] = '\0';
		fd_kind[fd] = n > 0 && strncmp(path, fd_prefix, strlen(fd_prefix)) == 0
				  ? FD_DOORBELL
				  : FD_OTHER;
	}
	return fd_kind[fd] == FD_DOORBELL;
}

static bool thread_owns_samples(void)
{
	int expected = 0;

	if (is_owner < 0)
		is_owner = atomic_compare_exchange_strong(&owner_claimed, &expected, 1);
	return is_owner == 1;
}

static void record(uint64_t start, uint64_t end)
{
	if (!in_ticks) {
		in_ticks = malloc(SPLIT_MAX_SAMPLES * sizeof(*in_ticks));
		gap_ticks = malloc(SPLIT_MAX_SAMPLES * sizeof(*gap_ticks));
		if (!in_ticks || !gap_ticks) {
			free(in_ticks);
			free(gap_ticks);
			in_ticks = gap_ticks = NULL;
			nsamples = SPLIT_MAX_SAMPLES; /* stop trying */
			return;
		}
	}
	in_ticks[nsamples] = end - start;
	gap_ticks[nsamples] = last_end ? start - last_end : 0;
	nsamples++;
	last_end = end;
}

__attribute__((visibility("default"))) ssize_t write(int fd, const void *buf, size_t count)
{
	uint64_t start, end;
	ssize_t ret;

	if (!real_write)
		split_init();
	if (nsamples >= SPLIT_MAX_SAMPLES || !fd_is_doorbell(fd) || !thread_owns_samples())
		return real_write(fd, buf, count);
	start = ticks();
	ret = real_write(fd, buf, count);
	end = ticks();
	record(start, end);
	return ret;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median, 25th and 75th percentile of v[0..n) in microseconds. */
static void quartiles_us(uint64_t *v, unsigned n, double per_us, double q[3])
{
	qsort(v, n, sizeof(*v), cmp_u64);
	q[0] = (double)v[n / 2] / per_us;
	q[1] = (double)v[n / 4] / per_us;
	q[2] = (double)v[(3 * (size_t)n) / 4] / per_us;
}

__attribute__((destructor)) static void split_report(void)
{
	unsigned skip = nsamples / 10, n;
	double per_us, in_q[3], gap_q[3];
	uint64_t dns;
	const char *out = getenv("DOORBELL_SPLIT_OUT"), *tag = getenv("DOORBELL_SPLIT_TAG");
	char line[512];
	int fd, len;

	if (!in_ticks || nsamples < SPLIT_MIN_REPORT)
		return;
	/* the first kept doorbell's gap reaches back into the skipped ones: fine;
	 * sample 0 has no gap at all, and skip >= 10 leaves it out */
	n = nsamples - skip;
	dns = now_ns() - ns0;
	per_us = dns ? (double)(ticks() - tsc0) / ((double)dns / 1000.0) : 1.0;
	quartiles_us(in_ticks + skip, n, per_us, in_q);
	quartiles_us(gap_ticks + skip, n, per_us, gap_q);
	len = snprintf(
	    line, sizeof(line),
	    "doorbell-split tag=%s pid=%d n=%u in_us=%.3f,%.3f,%.3f gap_us=%.3f,%.3f,%.3f\n",
	    tag && *tag ? tag : "-", (int)getpid(), n, in_q[0], in_q[1], in_q[2], gap_q[0],
	    gap_q[1], gap_q[2]);
	if (len <= 0)
		return;
	fd = out && *out ? open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644) : 2;
	if (fd < 0)
		return;
	if (real_write(fd, line, (size_t)len) < 0) {
		/* nothing else to report it with */
	}
	if (fd != 2)
		close(fd);
}
