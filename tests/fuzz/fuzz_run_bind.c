/*
 * fuzz_run_bind.c — libFuzzer target for what mpilite-run reads of the
 * machine before it places ranks (mpi-lite/run/bind.c, compiled in here
 * whole, as tests/sh/bind_plan.c does): the sysfs files of the CPU
 * topology and NUMA nodes, the CPU list format, and the plan made from
 * them.
 *
 * Input: NUL-separated words. Word 0: rank count (two bytes), --bind-to and
 * --map-by (one byte each); word 1: the CPUs the launcher may use
 * (cpulist); words 2-3: node0/cpulist and node1/cpulist; then, per CPU
 * 0..7, physical_package_id, core_id and die_id. Words 2 and up become
 * files of a made-up sysfs tree (MPILITE_RUN_SYSFS); a missing word is a
 * missing file. Every rank of an accepted plan gets a core, and a bound
 * rank only CPUs the launcher may use.
 *
 *   make fuzz && build/fuzz/fuzz_run_bind $(mktemp -d) tests/fuzz/corpus/fuzz_run_bind
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static cpu_set_t fuzz_allowed;

static int fuzz_getaffinity(pid_t pid, size_t len, cpu_set_t *set)
{
	(void)pid;
	(void)len;
	*set = fuzz_allowed;
	return 0;
}

#define sched_getaffinity fuzz_getaffinity
#include "run/bind.c"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CPUS 8

static char root[256];

/* main.c's (not linked here): formatted, then dropped */
void run_msg(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
}

static void file_path(char *buf, size_t len, int word)
{
	static const char *const topo[] = {"physical_package_id", "core_id", "die_id"};

	if (word < 4)
		snprintf(buf, len, "%s/node/node%d/cpulist", root, word - 2);
	else
		snprintf(buf, len, "%s/cpu/cpu%d/topology/%s", root, (word - 4) / 3,
			 topo[(word - 4) % 3]);
}

#define NWORDS (4 + 3 * FUZZ_CPUS)

static void cleanup(void)
{
	char path[512];

	for (int w = 2; w < NWORDS; w++) {
		file_path(path, sizeof(path), w);
		unlink(path);
	}
	for (int c = 0; c < FUZZ_CPUS; c++) {
		snprintf(path, sizeof(path), "%s/cpu/cpu%d/topology", root, c);
		rmdir(path);
		snprintf(path, sizeof(path), "%s/cpu/cpu%d", root, c);
		rmdir(path);
	}
	for (int n = 0; n < 2; n++) {
		snprintf(path, sizeof(path), "%s/node/node%d", root, n);
		rmdir(path);
	}
	snprintf(path, sizeof(path), "%s/cpu", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/node", root);
	rmdir(path);
	rmdir(root);
}

static void mkdir_p(const char *fmt, int i)
{
	char path[512];

	snprintf(path, sizeof(path), fmt, root, i);
	if (mkdir(path, 0700) && errno != EEXIST)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(root, sizeof(root), "%s/ibx-fuzz-sysfs-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root))
		abort();
	atexit(cleanup);
	mkdir_p("%s/cpu", 0);
	mkdir_p("%s/node", 0);
	for (int n = 0; n < 2; n++)
		mkdir_p("%s/node/node%d", n);
	for (int c = 0; c < FUZZ_CPUS; c++) {
		mkdir_p("%s/cpu/cpu%d", c);
		mkdir_p("%s/cpu/cpu%d/topology", c);
	}
	setenv("MPILITE_RUN_SYSFS", root, 1);
	return 0;
}

static void check_plan(const run_binding_t *b)
{
	FUZZ_FAIL_IF(b->np < 1 || b->ncores < 0 || b->ncores > CPU_COUNT(&fuzz_allowed),
		     "plan with more cores than allowed CPUs");
	if (b->ncores == 0)
		return;
	for (int k = 0; k < b->ncores; k++) {
		cpu_set_t in;

		CPU_AND(&in, &b->cores[k].cpus, &fuzz_allowed);
		FUZZ_FAIL_IF(!CPU_EQUAL(&in, &b->cores[k].cpus) || !CPU_COUNT(&in) ||
				 b->cores[k].package < 0 || b->cores[k].package >= b->npackages ||
				 b->cores[k].numa < 0 || b->cores[k].numa >= b->nnumas,
			     "core with CPUs not allowed, none, or a bad package / NUMA index");
	}
	for (int r = 0; r < b->np; r++) {
		cpu_set_t set, in;

		FUZZ_FAIL_IF(b->core_of[r] < 0 || b->core_of[r] >= b->ncores,
			     "rank mapped to no core");
		if (!rank_cpus(b, r, &set))
			continue;
		CPU_AND(&in, &set, &fuzz_allowed);
		FUZZ_FAIL_IF(!CPU_EQUAL(&in, &set) || !CPU_COUNT(&set),
			     "rank bound to CPUs the launcher may not use, or to none");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *words[NWORDS] = {0};
	size_t lens[NWORDS] = {0};
	run_opts_t opts = {0};
	run_binding_t *b;
	size_t i, start = 0;
	int nw = 0;
	char path[512];

	if (size > 4096)
		return 0;
	for (i = 0; i <= size && nw < NWORDS; i++) {
		if (i < size && data[i])
			continue;
		words[nw] = (const char *)data + start;
		lens[nw++] = i - start;
		start = i + 1;
	}
	if (nw < 2 || lens[0] < 4)
		return 0;
	opts.np =
	    1 + ((uint8_t)words[0][0] << 8 | (uint8_t)words[0][1]) % 40; /* up to 2.5 per core */
	opts.bind_to = (run_bind_to_t)((uint8_t)words[0][2] % (RUN_BIND_NUMA + 1));
	opts.map_by = (run_map_by_t)((uint8_t)words[0][3] % (RUN_MAP_NUMA + 1));
	{
		char list[4097];

		memcpy(list, words[1], lens[1]);
		list[lens[1]] = '\0';
		if (!parse_cpulist(list, &fuzz_allowed))
			return 0;
	}
	/* the plan reads the files of every allowed CPU: keep to the few
	 * that have any, plus some without (4096 CPUs is slow, not new) */
	for (int c = 2 * FUZZ_CPUS; c < CPU_SETSIZE; c++)
		CPU_CLR(c, &fuzz_allowed);
	for (int w = 2; w < NWORDS; w++) {
		FILE *f;

		file_path(path, sizeof(path), w);
		if (w >= nw) {
			unlink(path);
			continue;
		}
		f = fopen(path, "w");
		if (!f || (lens[w] && fwrite(words[w], 1, lens[w], f) != lens[w]) || fclose(f))
			abort();
	}
	b = run_binding_plan(&opts);
	FUZZ_FAIL_IF(!b, "no plan (only out of memory may do that)");
	check_plan(b);
	run_binding_report(b);
	run_binding_free(b);
	return 0;
}
