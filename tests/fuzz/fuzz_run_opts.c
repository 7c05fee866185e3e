/*
 * fuzz_run_opts.c — libFuzzer target for mpilite-run's command line
 * (run_opts_parse, mpi-lite/run/opts.c), together with the variables that
 * stand for its options (MPILITE_RUN_BIND_TO, _MAP_BY, _KILL_GRACE,
 * _REPORT_BINDINGS, _EMULATE_NODES, _NOTIFY_GRACE, MPIEXEC_TIMEOUT).
 *
 * Input: NUL-separated words. The first word, when it starts with '@',
 * holds variable settings ("@NAME=value;NAME=value"), applied with setenv
 * and reloaded before the parse; the other words are argv[1..]. Whatever
 * the parser accepts must be a runnable job description; --help and
 * --version write to stdout, which is closed.
 *
 *   make fuzz && build/fuzz/fuzz_run_opts $(mktemp -d) tests/fuzz/corpus/fuzz_run_opts
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/run_int.h"
#include "ibx_int.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* main.c's (not linked here): the parser's messages go nowhere */
void run_msg(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap); /* still formatted: a bad format crashes */
	va_end(ap);
}

static const char *const vars[] = {"MPILITE_RUN_BIND_TO",
				   "MPILITE_RUN_MAP_BY",
				   "MPILITE_RUN_KILL_GRACE",
				   "MPILITE_RUN_REPORT_BINDINGS",
				   "MPILITE_RUN_EMULATE_NODES",
				   "MPILITE_RUN_NOTIFY_GRACE",
				   "MPIEXEC_TIMEOUT"};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

/* "NAME=value;NAME=value": only the launcher's own variables are touched. */
static void set_vars(char *s)
{
	for (char *tok = strtok(s, ";"); tok; tok = strtok(NULL, ";")) {
		char *eq = strchr(tok, '=');

		if (!eq)
			continue;
		*eq = '\0';
		for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
			if (!strcmp(tok, vars[i]))
				setenv(vars[i], eq + 1, 1);
	}
}

static void check_opts(const run_opts_t *o, int argc, char **argv)
{
	FUZZ_FAIL_IF(o->np < 1 || o->np > 1000000 || o->timeout_s < 0 || o->timeout_s > 1e9 ||
			 !(o->grace_s > 0) || o->nx < 0 || o->nx >= argc,
		     "accepted command line with an out-of-range count, time or -x list");
	FUZZ_FAIL_IF(o->bind_to > RUN_BIND_NUMA || o->map_by > RUN_MAP_NUMA,
		     "accepted command line with an unknown binding or mapping");
	/* the program and its arguments are the tail of argv, NULL-terminated */
	FUZZ_FAIL_IF(o->argv <= argv || o->argv >= argv + argc || !o->argv[0] || argv[argc],
		     "accepted command line whose program is not the tail of argv");
	for (int i = 0; i < o->nx; i++)
		FUZZ_FAIL_IF(!o->xvars[i] || !o->xvars[i][0] || o->xvars[i][0] == '=',
			     "accepted -x that is not VAR or VAR=value");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, **words, **argv;
	int argc = 1, rc;
	size_t i, w;
	run_opts_t opts;

	if (size > 4096)
		return 0;
	/* words: NUL-terminated copies, the last one terminated here */
	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (i = 0; i < size; i++)
		argc += buf[i] == '\0';
	argc += 1;
	argv = words = calloc((size_t)argc + 1, sizeof(*argv));
	if (!words) {
		free(buf);
		return 0;
	}
	argv[0] = "mpilite-run";
	argc = 1;
	for (i = 0, w = 0; i <= size; i++) {
		if (buf[i] != '\0')
			continue;
		argv[argc++] = buf + w;
		w = i + 1;
	}
	argv[argc] = NULL;
	if (argc > 1 && argv[1][0] == '@') {
		set_vars(argv[1] + 1);
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	ibx_config_reload();
	rc = run_opts_parse(argc, argv, &opts);
	if (rc == 0)
		check_opts(&opts, argc, argv);
	else
		FUZZ_FAIL_IF(rc != 1 && rc != -1,
			     "run_opts_parse returned something else than 0, 1 or -1");
	free(opts.xvars);
	for (size_t v = 0; v < sizeof(vars) / sizeof(vars[0]); v++)
		unsetenv(vars[v]);
	free(words);
	free(buf);
	return 0;
}
