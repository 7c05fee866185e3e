/*
 * bench_common.h — small helpers shared by the benchmark programs in bench/.
 *
 * The programs are standard MPI (plus memcpy_bw, plain C) and are compiled
 * with mpilite-cc, mpicc.openmpi and mpicc.mpich alike, so nothing here may
 * depend on ibx or on one MPI implementation.
 */
#ifndef IBX_BENCH_COMMON_H
#define IBX_BENCH_COMMON_H

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses "8", "64k", "4m", "1g" (powers of 1024). Returns 0 on success. */
static inline int bench_parse_size(const char *s, size_t *value_p)
{
	char *end;
	unsigned long long v, mult = 1;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (tolower((unsigned char)*end)) {
	case 'k':
		mult = 1ull << 10;
		end++;
		break;
	case 'm':
		mult = 1ull << 20;
		end++;
		break;
	case 'g':
		mult = 1ull << 30;
		end++;
		break;
	default: break;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end != '\0' || (v && mult > SIZE_MAX / v))
		return -1;
	*value_p = (size_t)(v * mult);
	return 0;
}

/* Parses a positive int. Returns 0 on success. */
static inline int bench_parse_int(const char *s, int min, int *value_p)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < min || v > 1000000000L)
		return -1;
	*value_p = (int)v;
	return 0;
}

/* Page-aligned buffer filled with @fill, so that every page is mapped
 * before the timed loop (first-touch page faults are not what we measure). */
static inline void *bench_alloc(size_t len, int fill)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len ? len : 1))
		return NULL;
	memset(p, fill, len ? len : 1);
	return p;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of @n values (sorts them in place). */
static inline double bench_median(double *v, size_t n)
{
	if (n == 0)
		return 0.0;
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
