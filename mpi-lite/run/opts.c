/*
 * opts.c — mpilite-run's command line (and the variables that stand for its
 * options): "-n N [-x VAR[=value]]... [--opt value | --opt=value]... prog
 * args...". A file of its own so that tests/fuzz/fuzz_run_opts.c can drive
 * the parser without the launcher around it.
 */
#include "run_int.h"
#include "ibx_int.h"
#include "run_config.h"
#include "mpil_version.h"

#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " RUN_NAME " -n N [options] program [args...]\n"
		"Runs N ranks of program on this machine as one PMIx job.\n"
		"\n"
		"  -n, -np, --np N       number of ranks (more than the cores is fine)\n"
		"  -x VAR[=value]        set VAR in the ranks' environment; VAR alone passes\n"
		"                        the launcher's value (repeatable)\n"
		"  --tag-output          prefix each line of output with \"[rank] \"\n"
		"  --timeout S           end the job after S seconds (also MPIEXEC_TIMEOUT)\n"
		"  --bind-to WHAT        run each rank on its core (core), on the package\n"
		"                        (package, socket) or NUMA node (numa) of its core,\n"
		"                        or anywhere the launcher may run (none); default:\n"
		"                        core when the ranks do not outnumber the cores,\n"
		"                        none when they do (as Open MPI)\n"
		"  --map-by WHAT         rank i on core i (core, slot; the default), or round\n"
		"                        robin over the packages (package, socket) or the\n"
		"                        NUMA nodes (numa)\n"
		"  --report-bindings     print each rank's CPUs to stderr before the start\n"
		"  --emulate-nodes N[:DEV0,...,DEV<N-1>]\n"
		"                        a test feature: spread the ranks over N emulated\n"
		"                        nodes of this machine, consecutive ranks per node\n"
		"                        (the first np %% N nodes one rank more); node k is\n"
		"                        host <host>-n<k> to PMIx and, if the launcher may\n"
		"                        (CAP_SYS_ADMIN), to the ranks' gethostname(); its\n"
		"                        ranks get MPILITE_RUN_NODE=k and IBX_DEVICE=DEVk\n"
		"  -h, --help            this text\n"
		"  -V, --version         the version and the build configuration\n"
		"\n"
		"The ranks get the launcher's whole environment (as with mpirun), without\n"
		"the PMIX_* variables of an enclosing launcher, plus the -x settings,\n"
		"IBX_LAUNCHER=" RUN_NAME " and PMIx's own variables. Their stdin is /dev/null.\n"
		"\n"
		"When a rank exits with a non-zero status, is killed by a signal or calls\n"
		"abort (MPI_Abort / PMIx_Abort), or the timeout expires, every rank's\n"
		"process group gets SIGTERM, then SIGKILL after a grace period (%s s;\n"
		"MPILITE_RUN_KILL_GRACE=S sets it). A rank killed by a signal, or exiting\n"
		"non-zero before PMIx_Finalize, is first announced to the others as the\n"
		"PMIx event PMIX_ERR_PROC_TERM_WO_SYNC; they have %s s to end by themselves\n"
		"before the SIGTERM (MPILITE_RUN_NOTIFY_GRACE=S; 0: no event, SIGTERM at\n"
		"once). SIGINT, SIGTERM and SIGHUP are passed on to the ranks the same way\n"
		"(SIGKILL at the second); SIGUSR1 and SIGUSR2 are passed on only.\n"
		"\n"
		"MPILITE_RUN_BIND_TO, MPILITE_RUN_MAP_BY, MPILITE_RUN_REPORT_BINDINGS=y and\n"
		"MPILITE_RUN_EMULATE_NODES stand for the options (`ibtest info` lists every\n"
		"variable).\n"
		"\n"
		"Exit status: 0 when every rank exited with 0; otherwise that of the first\n"
		"failure: the rank's exit status, 128+S for a rank killed by signal S, the\n"
		"abort code (modulo 256; 0 becomes 1), 124 on timeout, 128+S when " RUN_NAME "\n"
		"got signal S, 126/127 when program cannot be executed / is not found,\n"
		"125 for an error of " RUN_NAME " itself.\n",
		mpil_run_config()->KILL_GRACE, mpil_run_config()->NOTIFY_GRACE);
}

static int parse_int(const char *s, const char *opt, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 1000000) {
		run_msg("%s: '%s' is not a positive number of ranks", opt, s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/* @zero_ok: 0 is a valid answer too ("at once"). */
static int parse_secs(const char *s, const char *opt, bool zero_ok, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(zero_ok ? v >= 0 : v > 0) || v > 1e9) {
		run_msg("%s: '%s' is not a %s number of seconds", opt, s,
			zero_ok ? "non-negative" : "positive");
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_seconds(const char *s, const char *opt, double *out)
{
	return parse_secs(s, opt, false, out);
}

/* the largest N: as many as ranks, and ranks are at most a million */
#define NODES_MAX 1000000

static int nodes_syntax_error(const char *s, const char *opt)
{
	run_msg("%s: '%s' is not N or N:DEV0,...,DEV<N-1> (N nodes, one device per node)", opt, s);
	return -1;
}

/* --emulate-nodes "N[:DEV0,DEV1,...]" (DEV may be name:port): the syntax;
 * *devices_p points into @s. N against the ranks: check_nodes. */
static int parse_nodes(const char *s, const char *opt, int *nnodes_p, const char **devices_p)
{
	const char *devs = NULL;
	char *end;
	long v;
	int count;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || (*end && *end != ':'))
		return nodes_syntax_error(s, opt);
	if (v < 1 || v > NODES_MAX) {
		run_msg("%s: %s nodes: give 1 to the number of ranks", opt, s);
		return -1;
	}
	if (*end == ':') {
		devs = end + 1;
		count = 1;
		for (const char *p = devs, *entry = devs;; p++) {
			if (*p != ',' && *p != '\0')
				continue;
			if (p == entry) {
				run_msg("%s: '%s' has an empty device name", opt, s);
				return -1;
			}
			if (*p == '\0')
				break;
			count++;
			entry = p + 1;
		}
		if (count != v) {
			run_msg("%s: '%s' names %d device%s for %ld node%s: give one per node", opt,
				s, count, count == 1 ? "" : "s", v, v == 1 ? "" : "s");
			return -1;
		}
	}
	*nnodes_p = (int)v;
	*devices_p = devs;
	return 0;
}

static int check_nodes(int nnodes, int np, const char *opt)
{
	if (nnodes <= np)
		return 0;
	run_msg("%s: %d nodes for %d rank%s: every node needs a rank (give 1 to %d nodes)", opt,
		nnodes, np, np == 1 ? "" : "s", np);
	return -1;
}

int run_opts_parse(int argc, char **argv, run_opts_t *opts)
{
	const mpil_run_config_t *cfg = mpil_run_config();
	bool bind_given = false, map_given = false;
	const char *nodes_opt = "MPILITE_RUN_EMULATE_NODES";
	int i;

	memset(opts, 0, sizeof(*opts));
	opts->xvars = calloc((size_t)argc, sizeof(*opts->xvars));
	if (!opts->xvars) {
		run_msg("out of memory");
		return -1;
	}
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;

		if (a[0] != '-')
			break;
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 1;
		}
		if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf(RUN_NAME " (ibx %d.%d.%d), PMIx %s\n", IBX_VERSION_MAJOR,
			       IBX_VERSION_MINOR, IBX_VERSION_PATCH, PMIx_Get_version());
			printf("built:\n");
			mpil_version_print(stdout, "  ");
			return 1;
		}
		if (!strcmp(a, "--tag-output")) {
			opts->tag_output = true;
			continue;
		}
		if (!strcmp(a, "--report-bindings")) {
			opts->report_bindings = true;
			continue;
		}
		/* options with a value: "-opt value" or "--opt=value" */
		if (!strncmp(a, "--timeout=", 10)) {
			val = a + 10;
			a = "--timeout";
		} else if (!strncmp(a, "--np=", 5)) {
			val = a + 5;
			a = "--np";
		} else if (!strncmp(a, "--bind-to=", 10)) {
			val = a + 10;
			a = "--bind-to";
		} else if (!strncmp(a, "--map-by=", 9)) {
			val = a + 9;
			a = "--map-by";
		} else if (!strncmp(a, "--emulate-nodes=", 16)) {
			val = a + 16;
			a = "--emulate-nodes";
		} else if (!strcmp(a, "-n") || !strcmp(a, "-np") || !strcmp(a, "--np") ||
			   !strcmp(a, "-x") || !strcmp(a, "--timeout") || !strcmp(a, "--bind-to") ||
			   !strcmp(a, "--map-by") || !strcmp(a, "--emulate-nodes")) {
			if (i + 1 >= argc) {
				run_msg("%s needs a value (see --help)", a);
				return -1;
			}
			val = argv[++i];
		} else {
			run_msg("unknown option %s (see --help)", a);
			return -1;
		}
		if (!strcmp(a, "--timeout")) {
			if (parse_seconds(val, a, &opts->timeout_s) < 0)
				return -1;
		} else if (!strcmp(a, "--bind-to")) {
			if (run_bind_to_parse(val, a, &opts->bind_to) < 0)
				return -1;
			bind_given = true;
		} else if (!strcmp(a, "--map-by")) {
			if (run_map_by_parse(val, a, &opts->map_by) < 0)
				return -1;
			map_given = true;
		} else if (!strcmp(a, "--emulate-nodes")) {
			if (parse_nodes(val, a, &opts->nnodes, &opts->node_devices) < 0)
				return -1;
			nodes_opt = a;
		} else if (!strcmp(a, "-x")) {
			if (!*val || *val == '=') {
				run_msg("-x: '%s' is not VAR or VAR=value", val);
				return -1;
			}
			opts->xvars[opts->nx++] = (char *)val;
		} else if (parse_int(val, a, &opts->np) < 0) {
			return -1;
		}
	}
	if (i >= argc) {
		run_msg("no program to run (see --help)");
		return -1;
	}
	if (opts->np < 1) {
		run_msg("the number of ranks is missing: -n N (see --help)");
		return -1;
	}
	if (opts->timeout_s == 0 && getenv("MPIEXEC_TIMEOUT") && *getenv("MPIEXEC_TIMEOUT") &&
	    parse_seconds(getenv("MPIEXEC_TIMEOUT"), "MPIEXEC_TIMEOUT", &opts->timeout_s) < 0)
		return -1;
	if (parse_seconds(cfg->KILL_GRACE, "MPILITE_RUN_KILL_GRACE", &opts->grace_s) < 0)
		return -1;
	if (parse_secs(cfg->NOTIFY_GRACE, "MPILITE_RUN_NOTIFY_GRACE", true, &opts->notify_grace_s) <
	    0)
		return -1;
	/* (an empty variable: as unset) */
	if (opts->nnodes == 0 && *cfg->EMULATE_NODES &&
	    parse_nodes(cfg->EMULATE_NODES, nodes_opt, &opts->nnodes, &opts->node_devices) < 0)
		return -1;
	if (opts->nnodes == 0)
		opts->nnodes = 1;
	if (check_nodes(opts->nnodes, opts->np, nodes_opt) < 0)
		return -1;
	/* the options win over their variables */
	if (!bind_given &&
	    run_bind_to_parse(cfg->BIND_TO, "MPILITE_RUN_BIND_TO", &opts->bind_to) < 0)
		return -1;
	if (!map_given && run_map_by_parse(cfg->MAP_BY, "MPILITE_RUN_MAP_BY", &opts->map_by) < 0)
		return -1;
	opts->report_bindings |= cfg->REPORT_BINDINGS;
	opts->argv = argv + i;
	return 0;
}
