/*
 * main.c — mpilite-run, the launcher of ibx / mpi-lite jobs on one machine.
 * It embeds a PMIx server, so its ranks are ordinary PMIx clients (the same
 * binaries run under Open MPI's mpirun or srun --mpi=pmix on a cluster).
 *
 *   mpilite-run -n N [-x VAR[=value]]... [--tag-output] [--timeout S]
 *               [--bind-to core|package|numa|none] [--map-by core|package|numa]
 *               [--report-bindings] [--emulate-nodes N[:DEV0,...]] prog args...
 *
 * --emulate-nodes, a test feature, splits the ranks over N emulated nodes of
 * this machine (nodes.c): PMIx describes a job of N nodes, each rank gets
 * its node's host name (UTS namespace), MPILITE_RUN_NODE and IBX_DEVICE.
 *
 * Launch sequence:
 *
 *   mpilite-run                      PMIx server thread         rank r
 *     parse options, resolve prog
 *     plan the binding (bind.c)
 *     plan the nodes (nodes.c)
 *     block signals -> signalfd      (inherits the mask)
 *     mkdtemp $TMPDIR/mpilite-run.XXXXXX
 *     PMIx_server_init(tmpdir) ─────> progress thread
 *     register_nspace(job info) ────> cb
 *     for r in 0..N-1:
 *       register_client(r) ─────────> cb
 *       setup_fork(r, env), node env
 *       fork, [uts ns], bind, exec ───────────────────────────> PMIx_Init
 *                                    <──────────── connect ────┤ put/fence/get
 *     supervise: output, reaping,    abort upcall ──> pipe     │ PMIx_Abort?
 *     signals, timeout               finalized upcall ──> flag │ PMIx_Finalize
 *     a rank died: notify ──────────> event to every client ──>│ (handler)
 *     every rank reaped, output drained                        exit
 *     deregister_nspace, PMIx_server_finalize (skipped after a failure)
 *     rm -r tmpdir; rm <IBX_SHM_DIR>/ibx-<jobid>-*
 *     exit with the first failure's status
 *
 * The ranks' environment is the launcher's whole environment (as with
 * mpirun), without PMIX_* variables of an enclosing launcher (PMIX_MCA_*
 * tuning is kept), plus the -x settings, IBX_LAUNCHER=mpilite-run and the
 * PMIx connection variables of setup_fork (and, on emulated nodes,
 * PMIX_HOSTNAME, MPILITE_RUN_NODE, IBX_DEVICE). Their stdin is /dev/null.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2, asprintf */
#endif
#include "run_int.h"
#include "ibx_int.h"
#include "shm_lf/shm_config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* Sanitizer builds (make SAN=address|thread): libpmix keeps allocations
 * until exit and races with its own listener thread at finalize; the
 * sanitizers would turn every job's status into a failure. Not ours to fix,
 * and not ours to hide either: only libpmix's own frames are suppressed. */
#if defined(__SANITIZE_ADDRESS__)
#define RUN_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define RUN_TSAN 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RUN_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define RUN_TSAN 1
#endif
#endif
#ifdef RUN_ASAN
/* visible: the sanitizer runtime looks them up dynamically */
const char *__lsan_default_suppressions(void);
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void)
{
	return "leak:libpmix.so\nleak:libhwloc.so\nleak:libevent\n";
}
/* visible: the sanitizer runtime looks them up dynamically */
const char *__lsan_default_options(void);
__attribute__((visibility("default"))) const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}
#endif
#ifdef RUN_TSAN
/* visible: the sanitizer runtime looks them up dynamically */
const char *__tsan_default_suppressions(void);
__attribute__((visibility("default"))) const char *__tsan_default_suppressions(void)
{
	return "race:libpmix.so\nrace:libevent\n";
}
#endif

void run_msg(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), RUN_NAME ": ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf) - 1)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	/* one write, so that it does not interleave with the ranks' output */
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}

double run_now(void)
{
	return ibx_time_sec();
}

/* ---- environment arrays ---------------------------------------------------- */

static size_t env_count(char **env)
{
	size_t n = 0;

	while (env && env[n])
		n++;
	return n;
}

static ssize_t env_find(char **env, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], name, len) && env[i][len] == '=')
			return (ssize_t)i;
	return -1;
}

const char *run_env_get(char **env, const char *name)
{
	ssize_t i = env_find(env, name);

	return i < 0 ? NULL : env[i] + strlen(name) + 1;
}

int run_env_set(char ***env_p, const char *name, const char *value)
{
	char **env = *env_p;
	size_t n = env_count(env);
	ssize_t i = env_find(env, name);
	char *entry;

	if (asprintf(&entry, "%s=%s", name, value) < 0)
		return -1;
	if (i >= 0) {
		free(env[i]);
		env[i] = entry;
		return 0;
	}
	env = realloc(env, (n + 2) * sizeof(*env));
	if (!env) {
		free(entry);
		return -1;
	}
	env[n] = entry;
	env[n + 1] = NULL;
	*env_p = env;
	return 0;
}

char **run_env_dup(char **env)
{
	size_t n = env_count(env);
	char **copy = calloc(n + 1, sizeof(*copy));

	if (!copy)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		copy[i] = strdup(env[i]);
		if (!copy[i]) {
			run_env_free(copy);
			return NULL;
		}
	}
	return copy;
}

void run_env_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

/* The launcher's environment minus an enclosing launcher's PMIx variables,
 * plus the -x settings and IBX_LAUNCHER. */
static char **build_rank_env(const run_opts_t *opts)
{
	size_t n = env_count(environ), k = 0;
	char **env = calloc(n + 1, sizeof(*env));

	if (!env)
		goto err_nomem;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(environ[i], "PMIX_", 5) && strncmp(environ[i], "PMIX_MCA_", 9))
			continue;
		env[k] = strdup(environ[i]);
		if (!env[k])
			goto err_free;
		k++;
	}
	for (int i = 0; i < opts->nx; i++) {
		const char *x = opts->xvars[i], *eq = strchr(x, '=');
		char name[256];
		const char *value;

		if (eq) {
			snprintf(name, sizeof(name), "%.*s", (int)(eq - x), x);
			value = eq + 1;
		} else {
			snprintf(name, sizeof(name), "%s", x);
			value = getenv(name);
			if (!value) {
				run_msg("-x %s: not set in the environment; ignored", name);
				continue;
			}
		}
		if (run_env_set(&env, name, value) < 0)
			goto err_free;
	}
	if (run_env_set(&env, "IBX_LAUNCHER", RUN_NAME) < 0)
		goto err_free;
	return env;

err_free:
	run_env_free(env);
err_nomem:
	run_msg("out of memory building the ranks' environment");
	return NULL;
}

/* The program as execve() needs it: searched in the ranks' PATH. Returns a
 * malloc'ed path, or NULL with *code_p set and a message printed. */
static char *resolve_program(const char *prog, char **env, int *code_p)
{
	const char *path = run_env_get(env, "PATH");
	struct stat st;
	char *found = NULL;

	if (strchr(prog, '/')) {
		found = strdup(prog);
		if (!found)
			goto err_nomem;
		return found;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t dlen = colon ? (size_t)(colon - path) : strlen(path);

		/* an empty PATH entry means the current directory */
		if (asprintf(&found, "%.*s/%s", dlen ? (int)dlen : 1, dlen ? path : ".", prog) < 0)
			goto err_nomem;
		if (stat(found, &st) == 0 && S_ISREG(st.st_mode) && access(found, X_OK) == 0)
			return found;
		free(found);
		found = NULL;
		path += dlen;
		if (*path == ':')
			path++;
	}
	run_msg("%s: command not found", prog);
	*code_p = RUN_EXIT_NOTFOUND;
	return NULL;
err_nomem:
	run_msg("out of memory");
	*code_p = RUN_EXIT_INTERNAL;
	return NULL;
}

/* ---- process set-up -------------------------------------------------------------- */

/* A pipe created while 0, 1 or 2 is closed would become the rank's stdio. */
static int ensure_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		if (open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
			return -1;
	}
	return 0;
}

/* Two pipes per rank: lift the soft open-file limit to the hard one. */
static int raise_fd_limit(int np)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)np * 2 + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < need) {
		run_msg("%d ranks need %llu open files, the limit is %llu (ulimit -n)", np,
			(unsigned long long)need, (unsigned long long)rl.rlim_cur);
		return -1;
	}
	return 0;
}

/*
 * Blocks the signals the supervision loop handles and opens a signalfd for
 * them. Done before PMIx_server_init so that the PMIx thread inherits the
 * mask and every signal lands in the signalfd. A SIGINT or SIGHUP that was
 * ignored when we started (nohup, a background job of a script) stays
 * ignored, as it would for any program.
 */
static int setup_signals(run_job_t *job)
{
	static const int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < IBX_ARRAY_SIZE(sigs); i++) {
		if ((sigs[i] == SIGINT || sigs[i] == SIGHUP) &&
		    sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaddset(&set, sigs[i]);
	}
	if (sigprocmask(SIG_BLOCK, &set, &job->orig_mask) < 0) {
		run_msg("sigprocmask: %s", strerror(errno));
		return -1;
	}
	/* a reader of our output that goes away must not kill the launcher */
	if (sigaction(SIGPIPE, &ign, &job->orig_sigpipe) < 0) {
		run_msg("sigaction(SIGPIPE): %s", strerror(errno));
		return -1;
	}
	job->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (job->sig_fd < 0) {
		run_msg("signalfd: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The abort upcall's pipe: both ends non-blocking (the PMIx thread must
 * never wait for the main thread), as large as the system allows. */
static int setup_event_pipe(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		run_msg("pipe: %s", strerror(errno));
		return -1;
	}
	(void)fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
	return 0;
}

int main(int argc, char **argv)
{
	run_opts_t opts;
	run_job_t job;
	char tmpdir[PATH_MAX] = "";
	char *path = NULL;
	run_binding_t *binding = NULL;
	run_nodes_t *nodes = NULL;
	const char *shm_dir;
	int evp[2] = {-1, -1};
	int ret = RUN_EXIT_INTERNAL, rc;
	bool registered = false, pmix_orderly = true;

	memset(&job, 0, sizeof(job));
	job.sig_fd = job.event_fd = job.devnull = -1;
	if (ensure_std_fds() < 0)
		return RUN_EXIT_INTERNAL;
	(void)ibx_core_config(); /* IBX_LOG for the launcher's own debug output */
	rc = run_opts_parse(argc, argv, &opts);
	if (rc != 0) {
		free(opts.xvars);
		return rc > 0 ? 0 : RUN_EXIT_INTERNAL;
	}
	job.opts = &opts;
	job.start = run_now();
	job.launcher_pid = getpid();

	job.env = build_rank_env(&opts);
	if (!job.env)
		goto err_opts;
	path = resolve_program(opts.argv[0], job.env, &ret);
	if (!path)
		goto err_env;
	job.path = path;
	if (raise_fd_limit(opts.np) < 0)
		goto err_path;
	binding = run_binding_plan(&opts);
	if (!binding)
		goto err_path;
	job.binding = binding;
	/* (before the PMIx thread exists: it probes with a fork) */
	nodes = run_nodes_plan(&opts);
	if (!nodes)
		goto err_binding;
	job.nodes = nodes;
	if (opts.report_bindings) {
		run_nodes_report(nodes);
		run_binding_report(binding);
	}
	job.ranks = calloc((size_t)opts.np, sizeof(*job.ranks));
	if (!job.ranks) {
		run_msg("out of memory");
		goto err_nodes;
	}
	job.devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (job.devnull < 0) {
		run_msg("open /dev/null: %s", strerror(errno));
		goto err_ranks;
	}
	if (setup_signals(&job) < 0)
		goto err_devnull;
	if (setup_event_pipe(evp) < 0)
		goto err_signals;
	job.event_fd = evp[0];
	if (run_tmpdir_create(tmpdir, sizeof(tmpdir)) < 0)
		goto err_evp;

	/* unique on this host while we run; the pid alone could be reused by a
	 * later launcher while stale files of this one are still around */
	snprintf(job.nspace, sizeof(job.nspace), "mpilite.%ld.%lx", (long)job.launcher_pid,
		 (unsigned long)(ibx_time_ns() & 0xffffffu));
	ibx_boot_sanitize_id(job.nspace, job.job_id, sizeof(job.job_id));

	if (run_server_init(tmpdir, evp[1]) < 0)
		goto err_tmpdir;
	if (run_server_register_job(job.nspace, nodes) < 0)
		goto err_server;
	registered = true;

	run_job_start(&job);
	ret = run_job_supervise(&job);
	/*
	 * libpmix 4.2.2 frees objects it still uses when clients die in the
	 * middle of a fence (valgrind: freed in pmix_ptl_base_connection_handler,
	 * then written by PMIx_server_finalize); deregister then hangs or
	 * finalize crashes. After a failed job the server is therefore left as
	 * it is and we _exit() once our own cleanup is done: its files all
	 * live in tmpdir, which goes anyway.
	 */
	pmix_orderly = !job.failed;

err_server:
	if (pmix_orderly && run_server_fini(registered ? job.nspace : NULL) < 0)
		pmix_orderly = false;
err_tmpdir:
	run_tmpdir_remove(tmpdir);
	/* belt and braces: the shm path unlinks its segments itself, but not
	 * when a rank was killed before every peer had attached */
	shm_dir = run_env_get(job.env, "IBX_SHM_DIR");
	if (!shm_dir || !*shm_dir)
		shm_dir = ibx_shm_config()->SHM_DIR;
	if (job.nstarted)
		run_shm_cleanup(shm_dir, job.job_id);
err_evp:
	close(evp[0]);
	close(evp[1]);
err_signals:
	close(job.sig_fd);
err_devnull:
	close(job.devnull);
err_ranks:
	free(job.ranks);
err_nodes:
	run_nodes_free(nodes);
err_binding:
	run_binding_free(binding);
err_path:
	free(path);
err_env:
	run_env_free(job.env);
err_opts:
	free(opts.xvars);
	if (!pmix_orderly)
		_exit(ret); /* no exit handlers while the PMIx thread still runs */
	return ret;
}
