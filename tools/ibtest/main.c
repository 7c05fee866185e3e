/*
 * main.c — the ibtest driver: `ibtest NAME args...` runs the command NAME.
 *
 * Commands live in their own files and register themselves before main()
 * runs (IBTEST_COMMAND in ibtest.h, a constructor per command). The list is
 * kept sorted by name as it is built, so the help text lists commands in a
 * stable order whatever the link order of the object files.
 */
#include "ibtest.h"

#include "ibx_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static ibtest_cmd_t *ibtest_cmds;

int ibtest_parse_size(const char *s, size_t min, size_t max, size_t *value_p)
{
	int64_t v;

	/* a leading digit: no sign, no blank (strtoll would take both) */
	if (!s || !isdigit((unsigned char)*s) || ibx_config_parse_size(s, &v) != IBX_OK)
		return -1;
	if (v < 0 || (uint64_t)v < min || (uint64_t)v > max)
		return -1;
	*value_p = (size_t)v;
	return 0;
}

int ibtest_parse_count(const char *s, unsigned long min, unsigned long max, unsigned long *value_p)
{
	unsigned long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*value_p = v;
	return 0;
}

uint64_t ibtest_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool ibtest_use_tsc;
double ibtest_ns_per_tick = 1.0;

void ibtest_clock_init(void)
{
#if defined(__x86_64__) || defined(__i386__)
	char cs[32] = "";
	FILE *f;
	uint64_t n0, t0, n1, t1;

	if (ibtest_use_tsc)
		return;
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f) {
		if (!fgets(cs, sizeof(cs), f))
			cs[0] = 0;
		fclose(f);
	}
	if (strncmp(cs, "tsc", 3) != 0)
		return;
	n0 = ibtest_now_ns();
	t0 = __builtin_ia32_rdtsc();
	usleep(20000);
	n1 = ibtest_now_ns();
	t1 = __builtin_ia32_rdtsc();
	if (t1 <= t0 || n1 <= n0)
		return;
	ibtest_ns_per_tick = (double)(n1 - n0) / (double)(t1 - t0);
	ibtest_use_tsc = true;
#endif
}

unsigned ibtest_lat_warmup(unsigned iters)
{
	return iters / 10 < 10 ? 10 : iters / 10;
}

void ibtest_register(ibtest_cmd_t *cmd)
{
	ibtest_cmd_t **pos = &ibtest_cmds;

	while (*pos && strcmp((*pos)->name, cmd->name) < 0)
		pos = &(*pos)->next;
	if (*pos && !strcmp((*pos)->name, cmd->name)) {
		/* two files claim one name: keep the first, say so at run time */
		fprintf(stderr, "ibtest: command '%s' registered twice; ignoring the second\n",
			cmd->name);
		return;
	}
	cmd->next = *pos;
	*pos = cmd;
}

static void usage(FILE *f)
{
	size_t width = 0;

	fprintf(f,
		"ibtest %d.%d — ibx profiling tool (perftest-style verbs and engine tests)\n\n"
		"usage: ibtest COMMAND [ARGS...]\n"
		"       ibtest COMMAND --help      options of one command\n\n"
		"Multi-rank commands run under a launcher, e.g. mpilite-run -n 2 ibtest shm_lat\n\n"
		"commands:\n",
		IBX_VERSION_MAJOR, IBX_VERSION_MINOR);
	for (const ibtest_cmd_t *c = ibtest_cmds; c; c = c->next)
		if (strlen(c->name) > width)
			width = strlen(c->name);
	for (const ibtest_cmd_t *c = ibtest_cmds; c; c = c->next)
		fprintf(f, "  %-*s  %s\n", (int)width, c->name, c->help ? c->help : "");
	if (!ibtest_cmds)
		fprintf(f, "  (none built in)\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("ibtest %d.%d\n", IBX_VERSION_MAJOR, IBX_VERSION_MINOR);
		return 0;
	}
	for (const ibtest_cmd_t *c = ibtest_cmds; c; c = c->next)
		if (!strcmp(c->name, argv[1]))
			return c->main(argc - 1, argv + 1);

	fprintf(stderr, "ibtest: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
