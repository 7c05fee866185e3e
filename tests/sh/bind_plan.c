/*
 * bind_plan.c — mpilite-run's mapping and binding (mpi-lite/run/bind.c,
 * compiled in here whole) on a made-up machine, for launcher_binding.sh:
 * the CPUs the launcher may use are given on the command line instead of
 * read with sched_getaffinity, and the topology comes from the tree that
 * MPILITE_RUN_SYSFS points at. Nothing is started; it prints what
 * --report-bindings would.
 *
 *   bind_plan CPULIST NP BIND_TO MAP_BY
 *
 * Output: the --report-bindings lines without the "mpilite-run: " prefix,
 * e.g. "rank 1 bound to core 1 (package 0, NUMA node 0): CPUs 2,6".
 * Exit status: 0, or 2 for a bad argument (with bind.c's message).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static cpu_set_t test_allowed;

static int test_getaffinity(pid_t pid, size_t len, cpu_set_t *set)
{
	(void)pid;
	(void)len;
	*set = test_allowed;
	return 0;
}

#define sched_getaffinity test_getaffinity
#include "run/bind.c"
#include "run/run_config.c"

void run_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

int main(int argc, char **argv)
{
	run_opts_t opts = {0};
	run_binding_t *b;

	if (argc != 5) {
		fprintf(stderr, "usage: bind_plan CPULIST NP BIND_TO MAP_BY\n");
		return 2;
	}
	if (!parse_cpulist(argv[1], &test_allowed)) {
		fprintf(stderr, "bind_plan: bad CPU list '%s'\n", argv[1]);
		return 2;
	}
	opts.np = atoi(argv[2]);
	if (opts.np < 1 || run_bind_to_parse(argv[3], "BIND_TO", &opts.bind_to) < 0 ||
	    run_map_by_parse(argv[4], "MAP_BY", &opts.map_by) < 0)
		return 2;
	b = run_binding_plan(&opts);
	if (!b)
		return 1;
	run_binding_report(b);
	run_binding_free(b);
	return 0;
}
