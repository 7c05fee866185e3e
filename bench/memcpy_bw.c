/*
 * memcpy_bw.c — single-thread memcpy bandwidth, the ceiling for any
 * copy-through-shared-memory transport on this machine (bench/compare.sh
 * divides the 4 MiB streaming bandwidth by the 4 MiB figure here).
 *
 * Plain C, no MPI: it links with mpilite-cc like the other bench programs but
 * calls nothing from it.
 *
 * For each size, one repetition copies the same source to the same
 * destination back to back for about 50 ms (the count calibrated once per
 * size); the result is the median repetition. GB/s counts the bytes copied
 * (10^9 B/s), as memcpy benchmarks usually do, not read + write traffic.
 *
 *   memcpy_bw [-r REPS] [SIZE...]          (default sizes 64k 1m 4m)
 *
 * Output: '#' comment lines, then "<bytes> <median GB/s> <best GB/s>".
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"

#define MC_REP_SECONDS 0.05

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The compiler must not drop or merge copies whose result nobody reads. */
static void copy_n(void *dst, const void *src, size_t len, long n)
{
	for (long i = 0; i < n; i++) {
		memcpy(dst, src, len);
		__asm__ __volatile__("" : : "r"(dst), "r"(src) : "memory");
	}
}

static int measure(size_t len, int reps, double *median_p, double *best_p)
{
	char *src = bench_alloc(len, 's'), *dst = bench_alloc(len, 'd');
	double *gbs = malloc((size_t)reps * sizeof(*gbs));
	long n = 1;

	if (!src || !dst || !gbs) {
		free(src);
		free(dst);
		free(gbs);
		return -1;
	}
	/* warm caches and TLB, then find a count that takes ~MC_REP_SECONDS */
	copy_n(dst, src, len, 4);
	for (;;) {
		double t0 = now_sec();

		copy_n(dst, src, len, n);
		double dt = now_sec() - t0;
		if (dt >= MC_REP_SECONDS / 4 || n > (1L << 40)) {
			n = (long)((double)n * MC_REP_SECONDS / (dt > 1e-9 ? dt : 1e-9)) + 1;
			break;
		}
		n *= 4;
	}
	for (int r = 0; r < reps; r++) {
		double t0 = now_sec();

		copy_n(dst, src, len, n);
		gbs[r] = (double)len * (double)n / (now_sec() - t0) / 1e9;
	}
	*median_p = bench_median(gbs, (size_t)reps);
	*best_p = gbs[reps - 1];
	free(src);
	free(dst);
	free(gbs);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const defaults[] = {"64k", "1m", "4m"};
	const char *const *sizes = defaults;
	int nsizes = 3, reps = 9, opt;

	while ((opt = getopt(argc, argv, "r:h")) != -1) {
		switch (opt) {
		case 'r':
			if (bench_parse_int(optarg, 1, &reps) == 0)
				break;
			/* fall through */
		default:
			fprintf(stderr,
				"usage: memcpy_bw [-r REPS] [SIZE...]  (default 64k 1m 4m)\n");
			return 2;
		}
	}
	if (optind < argc) {
		sizes = (const char *const *)&argv[optind];
		nsizes = argc - optind;
	}

	printf("# memcpy_bw: one thread, median of %d repetitions\n", reps);
	printf("# %-10s %14s %14s\n", "bytes", "median[GB/s]", "best[GB/s]");
	for (int i = 0; i < nsizes; i++) {
		size_t len;
		double med, best;

		if (bench_parse_size(sizes[i], &len) || len == 0) {
			fprintf(stderr, "memcpy_bw: bad size '%s'\n", sizes[i]);
			return 2;
		}
		if (measure(len, reps, &med, &best)) {
			fprintf(stderr, "memcpy_bw: cannot allocate 2 x %zu bytes\n", len);
			return 1;
		}
		printf("  %-10zu %14.2f %14.2f\n", len, med, best);
		fflush(stdout);
	}
	return 0;
}
