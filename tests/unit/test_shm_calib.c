/*
 * test_shm_calib.c — core/shm_lf/shm_calib.c: which rendezvous copy the
 * node uses. The decision from made-up timings (CMA faster everywhere,
 * nowhere, from some size on, faster in cache but slower out of it, no
 * out-of-cache figure, CMA refused), then one real calibration on this
 * machine: it must finish within its budget, measure every size, and
 * answer a threshold the decision rule gives for its own figures.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shm_lf/shm_int.h"

static const uint64_t sizes[IBX_SHM_CALIB_CLASSES] = {16u << 10, 64u << 10, 256u << 10, 1u << 20};

/* Timings with CMA / pipe = ratio[i] in cache and @out out of cache
 * (out <= 0: no out-of-cache figure). */
static ibx_shm_calib_t made_up(const double ratio[IBX_SHM_CALIB_CLASSES], double out)
{
	ibx_shm_calib_t c = {.flags = IBX_SHM_CALIB_DONE | IBX_SHM_CALIB_CMA};

	for (int i = 0; i < IBX_SHM_CALIB_CLASSES; i++) {
		c.in[i].bytes = sizes[i];
		c.in[i].pipe_ns = sizes[i] / 16; /* 16 B/ns */
		c.in[i].cma_ns = (uint64_t)((double)c.in[i].pipe_ns * ratio[i]);
	}
	if (out > 0) {
		c.flags |= IBX_SHM_CALIB_OUT;
		c.out.bytes = 256u << 10;
		c.out.pipe_ns = 20000;
		c.out.cma_ns = (uint64_t)(20000 * out);
	}
	return c;
}

static void test_decide_cma_everywhere(void **state)
{
	const double r[] = {0.5, 0.4, 0.3, 0.3};
	ibx_shm_calib_t c = made_up(r, 0.6);

	assert_int_equal(ibx_shm_calib_decide(&c), 16u << 10);
}

static void test_decide_pipe_everywhere(void **state)
{
	/* this machine's kind: a VM where pinning pages costs more than a copy */
	const double r[] = {13.7, 5.6, 4.2, 1.8};
	ibx_shm_calib_t c = made_up(r, 1.55);

	assert_int_equal(ibx_shm_calib_decide(&c), 0);
}

static void test_decide_from_a_size(void **state)
{
	const double r[] = {3.0, 1.2, 0.7, 0.5};
	ibx_shm_calib_t c = made_up(r, 0.8);

	assert_int_equal(ibx_shm_calib_decide(&c), 256u << 10);
}

static void test_decide_largest_run_only(void **state)
{
	/* CMA ahead at 16k but not at 64k: it starts where it stays ahead */
	const double r[] = {0.5, 1.5, 0.6, 0.5};
	ibx_shm_calib_t c = made_up(r, 0.7);

	assert_int_equal(ibx_shm_calib_decide(&c), 256u << 10);
}

static void test_decide_out_of_cache_counts(void **state)
{
	/* a little faster in cache, much slower out of it: the pipe's worst
	 * case (1 / 0.95) is milder than CMA's (1.5) */
	const double r[] = {0.95, 0.95, 0.95, 0.95};
	ibx_shm_calib_t c = made_up(r, 1.5);

	assert_int_equal(ibx_shm_calib_decide(&c), 0);
	/* slower in cache, far faster out of it: CMA's worst case (1.1) is
	 * milder than the pipe's (1 / 0.4) */
	const double r2[] = {1.1, 1.1, 1.1, 1.1};

	c = made_up(r2, 0.4);
	assert_int_equal(ibx_shm_calib_decide(&c), 16u << 10);
}

static void test_decide_margin(void **state)
{
	/* 5% ahead is within the margin: the pipe keeps it */
	const double r[] = {0.95, 0.95, 0.95, 0.95};
	ibx_shm_calib_t c = made_up(r, 0);

	assert_int_equal(ibx_shm_calib_decide(&c), 0);
	/* 20% ahead in cache, no out-of-cache figure (not x86): CMA */
	const double r2[] = {0.8, 0.8, 0.8, 0.8};

	c = made_up(r2, 0);
	assert_int_equal(ibx_shm_calib_decide(&c), 16u << 10);
}

static void test_decide_cma_refused(void **state)
{
	const double r[] = {0.5, 0.4, 0.3, 0.3};
	ibx_shm_calib_t c = made_up(r, 0.5);

	c.flags &= ~(uint32_t)IBX_SHM_CALIB_CMA;
	assert_int_equal(ibx_shm_calib_decide(&c), 0);
	/* a size never measured (time 0) never picks CMA */
	c = made_up(r, 0.5);
	c.in[1].cma_ns = 0;
	assert_int_equal(ibx_shm_calib_decide(&c), 256u << 10);
}

/* The real thing, on this machine: sane, bounded, self-consistent. */
static void test_calibrate(void **state)
{
	ibx_shm_calib_t c;
	char desc[256];
	uint64_t from;

	assert_int_equal(ibx_shm_calibrate(16384, &c), IBX_OK);
	assert_true(c.flags & IBX_SHM_CALIB_DONE);
	assert_true(c.flags & IBX_SHM_CALIB_CMA); /* our own memory: always allowed */
	/* 20 ms budget, plus the mapping; a loaded machine may add some */
	assert_true(c.cost_ns > 0 && c.cost_ns < 500 * 1000000ull);
	for (int i = 0; i < IBX_SHM_CALIB_CLASSES; i++) {
		assert_int_equal(c.in[i].bytes, sizes[i]);
		assert_true(c.in[i].pipe_ns > 0 && c.in[i].cma_ns > 0);
		/* no copy of 1 MiB takes a second, none runs at 1 TB/s */
		assert_true(c.in[i].pipe_ns < 1000000000ull && c.in[i].cma_ns < 1000000000ull);
		assert_true(c.in[i].pipe_ns * 1000 >= c.in[i].bytes);
	}
#if defined(__x86_64__) || defined(__i386__)
	assert_true(c.flags & IBX_SHM_CALIB_OUT);
	assert_true(c.out.pipe_ns > 0 && c.out.cma_ns > 0);
#endif
	from = ibx_shm_calib_decide(&c);
	assert_int_equal(from, c.cma_from);
	assert_true(from == 0 || from == sizes[0] || from == sizes[1] || from == sizes[2] ||
		    from == sizes[3]);
	ibx_shm_calib_describe(&c, desc, sizeof(desc));
	assert_non_null(strstr(desc, "16k "));
	assert_non_null(strstr(desc, "1m "));
	print_message("calibration: %.2f ms, CMA from %llu; CMA / pipe: %s\n",
		      (double)c.cost_ns / 1e6, (unsigned long long)from, desc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_decide_cma_everywhere),
	    cmocka_unit_test(test_decide_pipe_everywhere),
	    cmocka_unit_test(test_decide_from_a_size),
	    cmocka_unit_test(test_decide_largest_run_only),
	    cmocka_unit_test(test_decide_out_of_cache_counts),
	    cmocka_unit_test(test_decide_margin),
	    cmocka_unit_test(test_decide_cma_refused),
	    cmocka_unit_test(test_calibrate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
