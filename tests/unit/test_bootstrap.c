/*
 * test_bootstrap.c — core/bootstrap.c without a launcher: the singleton
 * (rank 0 of 1, put/fence/get kept locally), the start-up detection rules
 * (srun without PMIx and hydra are refused with a message saying what to
 * do; a PMIx environment whose server is gone is a hard error), and the
 * job-id sanitiser. The PMIx paths with a real server are exercised by
 * tests/sh/launcher_*.sh.
 *
 * Each detection case runs ibx_boot_init in a forked child with its own
 * environment, its stderr captured, so that one case's PMIx state or
 * variables cannot leak into the next.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ibx_int.h"
#include "bootstrap.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Every variable the detection looks at, so that the runner's own
 * environment (say, the tests started under a launcher) plays no part. */
static void clear_launcher_env(void)
{
	static const char *const vars[] = {"SLURM_STEP_NUM_TASKS", "PMI_FD", "PMI_RANK",
					   "PMI_SIZE"};
	char name[256];

	for (size_t i = 0; i < IBX_ARRAY_SIZE(vars); i++)
		unsetenv(vars[i]);
	for (;;) {
		char **e;

		for (e = environ; e && *e; e++)
			if (!strncmp(*e, "PMIX_", 5) && strncmp(*e, "PMIX_MCA_", 9))
				break;
		if (!e || !*e)
			break;
		snprintf(name, sizeof(name), "%.*s", (int)(strcspn(*e, "=")), *e);
		unsetenv(name);
	}
}

typedef struct child_result {
	int status;	/* ibx_status_t of ibx_boot_init */
	char err[4096]; /* what it logged */
} child_result_t;

/* Runs ibx_boot_init in a child with @env ("NAME=value", NULL-terminated)
 * added to a clean environment. */
static void init_in_child(const char *const *env, child_result_t *res)
{
	int outp[2], errp[2];
	pid_t pid;
	int wst;
	ssize_t n;
	size_t off = 0;

	assert_int_equal(pipe(outp), 0);
	assert_int_equal(pipe(errp), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		ibx_boot_t *boot = NULL;
		int st;

		close(outp[0]);
		close(errp[0]);
		dup2(errp[1], STDERR_FILENO);
		alarm(30); /* a hang is a failure, not a stuck suite */
		clear_launcher_env();
		for (const char *const *e = env; e && *e; e++)
			putenv((char *)*e);
		st = ibx_boot_init(&boot);
		if (write(outp[1], &st, sizeof(st)) != sizeof(st))
			_exit(3);
		/* No fini after a PMIx failure: none was needed (and the PMIx
		 * library must not be finalized after a failed init). */
		if (st == IBX_OK)
			ibx_boot_fini(boot);
		_exit(0);
	}
	close(outp[1]);
	close(errp[1]);
	res->status = 99;
	n = read(outp[0], &res->status, sizeof(res->status));
	assert_int_equal(n, sizeof(res->status));
	while (off < sizeof(res->err) - 1 &&
	       (n = read(errp[0], res->err + off, sizeof(res->err) - 1 - off)) > 0)
		off += (size_t)n;
	res->err[off] = '\0';
	close(outp[0]);
	close(errp[0]);
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	assert_true(WIFEXITED(wst));
	assert_int_equal(WEXITSTATUS(wst), 0);
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("expected \"%s\" in:\n%s", needle, hay);
}

/* ---- singleton ---------------------------------------------------------- */

static void test_singleton_identity(void **state)
{
	ibx_boot_t *boot = NULL;
	char want[64];

	(void)state;
	clear_launcher_env();
	assert_int_equal(ibx_boot_init(&boot), IBX_OK);
	assert_non_null(boot);
	assert_int_equal(ibx_boot_rank(boot), 0);
	assert_int_equal(ibx_boot_size(boot), 1);
	assert_int_equal(ibx_boot_local_size(boot), 1);
	assert_int_equal(ibx_boot_local_ranks(boot)[0], 0);
	snprintf(want, sizeof(want), "single-%ld", (long)getpid());
	assert_string_equal(ibx_boot_job_id(boot), want);
	ibx_boot_fini(boot);
}

static void test_singleton_modex(void **state)
{
	ibx_boot_t *boot = NULL;
	const char first[] = "first value", second[] = "the second, longer value";
	char longkey[600];
	void *data = NULL;
	size_t len = 12345;

	(void)state;
	clear_launcher_env();
	assert_int_equal(ibx_boot_init(&boot), IBX_OK);

	assert_int_equal(ibx_boot_put(boot, "addr", first, sizeof(first)), IBX_OK);
	assert_int_equal(ibx_boot_put(boot, "addr", second, sizeof(second)), IBX_OK);
	assert_int_equal(ibx_boot_put(boot, "empty", NULL, 0), IBX_OK);
	assert_int_equal(ibx_boot_fence(boot, true), IBX_OK);
	assert_int_equal(ibx_boot_fence(boot, false), IBX_OK);

	/* the later put replaces the earlier one */
	assert_int_equal(ibx_boot_get(boot, 0, "addr", &data, &len), IBX_OK);
	assert_int_equal(len, sizeof(second));
	assert_memory_equal(data, second, sizeof(second));
	free(data);

	data = NULL;
	assert_int_equal(ibx_boot_get(boot, 0, "empty", &data, &len), IBX_OK);
	assert_int_equal(len, 0);
	free(data);

	/* a known key reads the same; a singleton has no server to wait for */
	data = NULL;
	assert_int_equal(ibx_boot_get_known(boot, 0, "addr", &data, &len), IBX_OK);
	assert_int_equal(len, sizeof(second));
	assert_memory_equal(data, second, sizeof(second));
	free(data);
	assert_int_equal(ibx_boot_get_known(boot, 0, "never-put", &data, &len), IBX_ERR_NOT_FOUND);
	assert_int_equal(ibx_boot_get_known(boot, 1, "addr", &data, &len), IBX_ERR_INVALID_PARAM);

	/* missing keys and bad ranks fail without touching the outputs */
	data = (void *)0x1;
	len = 7;
	assert_int_equal(ibx_boot_get(boot, 0, "never-put", &data, &len), IBX_ERR_NOT_FOUND);
	assert_int_equal(ibx_boot_get(boot, 1, "addr", &data, &len), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_boot_get(boot, -1, "addr", &data, &len), IBX_ERR_INVALID_PARAM);
	assert_ptr_equal(data, (void *)0x1);
	assert_int_equal(len, 7);

	/* keys PMIx could not carry are refused the same way in a singleton */
	memset(longkey, 'k', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = '\0';
	assert_int_equal(ibx_boot_put(boot, longkey, first, sizeof(first)), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_boot_put(boot, "", first, sizeof(first)), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_boot_put(boot, NULL, first, sizeof(first)), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_boot_put(boot, "x", NULL, 4), IBX_ERR_INVALID_PARAM);

	ibx_boot_fini(boot);
}

/* Two bootstraps in one process are independent (ibx_init after a
 * finalize, tests that init twice). */
static void test_singleton_reinit(void **state)
{
	ibx_boot_t *a = NULL, *b = NULL;
	void *data = NULL;
	size_t len;

	(void)state;
	clear_launcher_env();
	assert_int_equal(ibx_boot_init(&a), IBX_OK);
	assert_int_equal(ibx_boot_put(a, "k", "a", 1), IBX_OK);
	assert_int_equal(ibx_boot_init(&b), IBX_OK);
	assert_int_equal(ibx_boot_get(b, 0, "k", &data, &len), IBX_ERR_NOT_FOUND);
	ibx_boot_fini(a);
	ibx_boot_fini(b);
}

static void test_singleton_abort(void **state)
{
	int errp[2], wst;
	char buf[2048];
	ssize_t n;
	size_t off = 0;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(errp), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		ibx_boot_t *boot = NULL;

		close(errp[0]);
		dup2(errp[1], STDERR_FILENO);
		clear_launcher_env();
		if (ibx_boot_init(&boot) != IBX_OK)
			_exit(2);
		/* no launcher to tell: it says so itself and lets the caller exit */
		if (ibx_boot_abort(boot, 5, "singleton gives up") != IBX_OK)
			_exit(3);
		_exit(5);
	}
	close(errp[1]);
	while (off < sizeof(buf) - 1 && (n = read(errp[0], buf + off, sizeof(buf) - 1 - off)) > 0)
		off += (size_t)n;
	buf[off] = '\0';
	close(errp[0]);
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	assert_true(WIFEXITED(wst));
	assert_int_equal(WEXITSTATUS(wst), 5);
	assert_contains(buf, "abort with code 5: singleton gives up");
	assert_int_equal(ibx_boot_abort(NULL, 1, "x"), IBX_ERR_INVALID_PARAM);
}

/* ---- start-up detection ------------------------------------------------- */

static void test_detect_plain_is_singleton(void **state)
{
	static const char *const env[] = {NULL};
	child_result_t r;

	(void)state;
	init_in_child(env, &r);
	assert_int_equal(r.status, IBX_OK);
}

static void test_detect_srun_without_pmix(void **state)
{
	static const char *const env[] = {"SLURM_STEP_NUM_TASKS=2", NULL};
	child_result_t r;

	(void)state;
	init_in_child(env, &r);
	assert_int_equal(r.status, IBX_ERR_BOOTSTRAP);
	assert_contains(r.err, "srun --mpi=pmix");
	assert_contains(r.err, "2 tasks");
}

static void test_detect_srun_one_task(void **state)
{
	/* srun -n 1 without PMIx is an honest job of one */
	static const char *const env[] = {"SLURM_STEP_NUM_TASKS=1", NULL};
	child_result_t r;

	(void)state;
	init_in_child(env, &r);
	assert_int_equal(r.status, IBX_OK);
}

static void test_detect_hydra_fd(void **state)
{
	static const char *const env[] = {"PMI_FD=3", NULL};
	child_result_t r;

	(void)state;
	init_in_child(env, &r);
	assert_int_equal(r.status, IBX_ERR_BOOTSTRAP);
	assert_contains(r.err, "hydra's mpiexec speaks PMI-1/2, not PMIx");
	assert_contains(r.err, "use mpilite-run or Open MPI's mpirun");
}

static void test_detect_hydra_rank(void **state)
{
	static const char *const env[] = {"PMI_RANK=0", NULL};
	child_result_t r;

	(void)state;
	init_in_child(env, &r);
	assert_int_equal(r.status, IBX_ERR_BOOTSTRAP);
	assert_contains(r.err, "hydra");
}

/* srun's variables come second: with PMIx variables present, PMIx decides. */
static void test_detect_pmix_first(void **state)
{
	static const char *const env[] = {"PMIX_SERVER_URI41=pmix-server.1;tcp4://127.0.0.1:1",
					  "SLURM_STEP_NUM_TASKS=4", "PMI_FD=3", NULL};
	child_result_t r;

	(void)state;
	init_in_child(env, &r);
	assert_int_equal(r.status, IBX_ERR_BOOTSTRAP);
	assert_contains(r.err, "PMIx_Init failed");
	assert_null(strstr(r.err, "srun"));
	assert_null(strstr(r.err, "hydra"));
}

/* A stale PMIx environment (launcher gone) is an error, not a singleton. */
static void test_detect_pmix_stale_namespace(void **state)
{
	static const char *const env[] = {"PMIX_NAMESPACE=gone.1234", "PMIX_RANK=0", NULL};
	child_result_t r;

	(void)state;
	init_in_child(env, &r);
	assert_int_equal(r.status, IBX_ERR_BOOTSTRAP);
	assert_contains(r.err, "PMIx_Init failed");
	assert_contains(r.err, "PMIX_NAMESPACE");
}

/* ---- job id --------------------------------------------------------------- */

static void check_id(const char *in, const char *want)
{
	char out[IBX_BOOT_JOB_ID_MAX];

	memset(out, 'X', sizeof(out));
	ibx_boot_sanitize_id(in, out, sizeof(out));
	assert_string_equal(out, want);
}

static bool id_is_safe(const char *s)
{
	if (!*s || *s == '.')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.'))
			return false;
	return true;
}

static void test_sanitize_id(void **state)
{
	char a[300], b[300], oa[IBX_BOOT_JOB_ID_MAX], ob[IBX_BOOT_JOB_ID_MAX], small[5];

	(void)state;
	check_id("mpilite.1234.abcdef", "mpilite.1234.abcdef");
	check_id("3170238465", "3170238465");
	check_id("slurm.pmix.77.0", "slurm.pmix.77.0");
	check_id("prterun-host-1234@1", "prterun_host_1234_1");
	check_id("../etc/passwd", "_._etc_passwd");
	check_id(".hidden", "_hidden");
	check_id("a b/c\nd", "a_b_c_d");
	check_id("", "job");
	check_id(NULL, "job");

	/* too long: the head, then '_' and a hash of the whole input */
	memset(a, 'n', sizeof(a) - 1);
	a[sizeof(a) - 1] = '\0';
	memcpy(b, a, sizeof(a));
	b[sizeof(b) - 2] = 'm';
	ibx_boot_sanitize_id(a, oa, sizeof(oa));
	ibx_boot_sanitize_id(b, ob, sizeof(ob));
	assert_int_equal(strlen(oa), sizeof(oa) - 1);
	assert_int_equal(strlen(ob), sizeof(ob) - 1);
	assert_true(id_is_safe(oa));
	assert_int_equal(oa[sizeof(oa) - 10], '_');
	assert_memory_equal(oa, a, sizeof(oa) - 10);
	assert_string_not_equal(oa, ob);
	/* deterministic: the launcher and the ranks must agree */
	ibx_boot_sanitize_id(a, ob, sizeof(ob));
	assert_string_equal(oa, ob);

	/* tiny buffers: plain truncation, always terminated */
	ibx_boot_sanitize_id("abcdefgh", small, sizeof(small));
	assert_string_equal(small, "abcd");
	ibx_boot_sanitize_id("abc", small, 1);
	assert_string_equal(small, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_singleton_identity),
	    cmocka_unit_test(test_singleton_modex),
	    cmocka_unit_test(test_singleton_reinit),
	    cmocka_unit_test(test_singleton_abort),
	    cmocka_unit_test(test_detect_plain_is_singleton),
	    cmocka_unit_test(test_detect_srun_without_pmix),
	    cmocka_unit_test(test_detect_srun_one_task),
	    cmocka_unit_test(test_detect_hydra_fd),
	    cmocka_unit_test(test_detect_hydra_rank),
	    cmocka_unit_test(test_detect_pmix_first),
	    cmocka_unit_test(test_detect_pmix_stale_namespace),
	    cmocka_unit_test(test_sanitize_id),
	};

	/* the refusals are logged at error level, which must be on */
	unsetenv("IBX_LOG");
	(void)ibx_config_reload();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
