/*
 * bootclient.c — a tiny PMIx client for the launcher scenarios
 * (tests/sh/launcher_*.sh). It uses core/bootstrap.c only: init, prints
 * what it learnt, exchanges a per-rank blob (collecting fence) and a second
 * one (non-collecting fence, i.e. direct modex), checks every peer's bytes,
 * checks that a key nobody put is reported missing instead of blocking,
 * then does whatever the mode arguments ask and ends with a barrier.
 *
 *   bootclient [MODE]...      R is a rank number or "all"
 *     exit R N        rank R exits with status N after the exchange
 *     abort R N       rank R calls ibx_boot_abort(N, msg), then _exit(N)
 *     sleep R         rank R sleeps forever after the exchange
 *     ignoreterm R    rank R ignores SIGTERM (the launcher must SIGKILL it)
 *     kill9 R         rank R sends itself SIGKILL after the exchange
 *     lines N         every rank prints N lines on stdout, N/10 on stderr
 *     env VAR         every rank prints "rank R env VAR=<value>" ("(unset)")
 *     nofini R        rank R exits 0 after the final barrier without ibx_boot_fini
 *     barrier         every rank waits for all the others (a fence) here
 *     shmfile R       rank R creates <IBX_SHM_DIR>/ibx-<jobid>-bootclient<R>, as a
 *                     shm segment a killed rank leaves behind (the launcher
 *                     must remove it)
 *
 * Lines it prints (the scripts grep them):
 *   rank R of S: local L [a,b,c] job ID launcher X pid P
 *   rank R: modex ok with S ranks
 *   rank R: done
 * Exit status: 0 good, 2 bootstrap refused/failed, 3 exchange mismatch.
 */
#include "ibx_int.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_MODES 16

typedef struct mode {
	const char *name;
	int rank; /* -1: every rank */
	long arg;
	const char *str;
} bc_mode_t;

static int nmodes;
static bc_mode_t modes[MAX_MODES];

static void usage(void)
{
	fprintf(stderr, "usage: bootclient [exit R N | abort R N | sleep R | ignoreterm R | "
			"kill9 R | lines N | env VAR | nofini R | shmfile R | barrier]...\n");
	exit(64);
}

static int parse_rank(const char *s)
{
	char *end;
	long v;

	if (!strcmp(s, "all"))
		return -1;
	v = strtol(s, &end, 10);
	if (*end || v < 0)
		usage();
	return (int)v;
}

static long parse_long(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || end == s)
		usage();
	return v;
}

static void parse_modes(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		bc_mode_t *m;

		if (nmodes == MAX_MODES)
			usage();
		m = &modes[nmodes++];
		m->name = argv[i];
		m->rank = -1;
		if (!strcmp(argv[i], "exit") || !strcmp(argv[i], "abort")) {
			if (i + 2 >= argc)
				usage();
			m->rank = parse_rank(argv[++i]);
			m->arg = parse_long(argv[++i]);
		} else if (!strcmp(argv[i], "sleep") || !strcmp(argv[i], "ignoreterm") ||
			   !strcmp(argv[i], "kill9") || !strcmp(argv[i], "nofini") ||
			   !strcmp(argv[i], "shmfile")) {
			if (i + 1 >= argc)
				usage();
			m->rank = parse_rank(argv[++i]);
		} else if (!strcmp(argv[i], "lines")) {
			if (i + 1 >= argc)
				usage();
			m->arg = parse_long(argv[++i]);
		} else if (!strcmp(argv[i], "env")) {
			if (i + 1 >= argc)
				usage();
			m->str = argv[++i];
		} else if (!strcmp(argv[i], "barrier")) {
			/* no argument */
		} else {
			usage();
		}
	}
}

static bool applies(const bc_mode_t *m, int rank)
{
	return m->rank < 0 || m->rank == rank;
}

/* The blob rank @r publishes in round @round: length and bytes both depend
 * on the rank, so a mix-up between peers cannot go unnoticed. */
static size_t blob_make(int r, int round, const char *job, unsigned char *buf, size_t cap)
{
	size_t len = 100 + (size_t)r * 37 + (size_t)round * 11;
	int n;

	if (len > cap)
		len = cap;
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(r * 7 + round * 13 + (int)i);
	n = snprintf((char *)buf, len, "bootclient rank=%d round=%d job=%s", r, round, job);
	(void)n;
	return len;
}

static int exchange(ibx_boot_t *boot, int round, bool collect)
{
	unsigned char mine[4096], want[4096];
	int rank = ibx_boot_rank(boot), size = ibx_boot_size(boot);
	const char *job = ibx_boot_job_id(boot);
	char key[32];
	size_t len;
	ibx_status_t st;
	int bad = 0;

	snprintf(key, sizeof(key), "blob%d", round);
	len = blob_make(rank, round, job, mine, sizeof(mine));
	st = ibx_boot_put(boot, key, mine, len);
	if (st == IBX_OK && round == 1)
		st = ibx_boot_put(boot, "empty", NULL, 0);
	if (st != IBX_OK) {
		printf("rank %d: put failed: %s\n", rank, ibx_status_str(st));
		return 1;
	}
	st = ibx_boot_fence(boot, collect);
	if (st != IBX_OK) {
		printf("rank %d: fence failed: %s\n", rank, ibx_status_str(st));
		return 1;
	}
	for (int p = 0; p < size; p++) {
		void *data = NULL;
		size_t got = 0, wlen = blob_make(p, round, job, want, sizeof(want));

		/* every rank put it: a known key (asked of the server when PMIx's
		 * hash store left it there) */
		st = ibx_boot_get_known(boot, p, key, &data, &got);
		if (st != IBX_OK) {
			printf("rank %d: get %s of rank %d failed: %s\n", rank, key, p,
			       ibx_status_str(st));
			bad++;
			continue;
		}
		if (got != wlen || memcmp(data, want, wlen)) {
			printf("rank %d: %s of rank %d is wrong (%zu bytes, want %zu)\n", rank, key,
			       p, got, wlen);
			bad++;
		}
		free(data);
		if (round != 1)
			continue;
		data = NULL;
		st = ibx_boot_get_known(boot, p, "empty", &data, &got);
		if (st != IBX_OK || got != 0) {
			printf("rank %d: empty key of rank %d: %s, %zu bytes\n", rank, p,
			       ibx_status_str(st), got);
			bad++;
		}
		free(data);
		/* A key nobody put must come back as missing, not block. */
		data = NULL;
		st = ibx_boot_get(boot, p, "nokey", &data, &got);
		if (st != IBX_ERR_NOT_FOUND) {
			printf("rank %d: key nobody put, rank %d: %s (want not found)\n", rank, p,
			       ibx_status_str(st));
			free(data);
			bad++;
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	ibx_boot_t *boot;
	ibx_status_t st;
	int rank, size, bad;
	const int *local;
	char lbuf[1024];
	size_t off = 0;

	parse_modes(argc, argv);
	st = ibx_boot_init(&boot);
	if (st != IBX_OK) {
		fprintf(stderr, "bootclient: ibx_boot_init failed: %s\n", ibx_status_str(st));
		return 2;
	}
	rank = ibx_boot_rank(boot);
	size = ibx_boot_size(boot);
	local = ibx_boot_local_ranks(boot);
	for (int i = 0; i < ibx_boot_local_size(boot) && off < sizeof(lbuf) - 16; i++)
		off += (size_t)snprintf(lbuf + off, sizeof(lbuf) - off, "%s%d", i ? "," : "",
					local[i]);
	lbuf[off] = '\0';
	printf("rank %d of %d: local %d [%s] job %s launcher %s pid %d\n", rank, size,
	       ibx_boot_local_size(boot), lbuf, ibx_boot_job_id(boot),
	       getenv("IBX_LAUNCHER") ? getenv("IBX_LAUNCHER") : "(none)", (int)getpid());
	fflush(stdout);

	bad = exchange(boot, 1, true);
	bad += exchange(boot, 2, false);
	if (bad) {
		printf("rank %d: modex FAILED (%d errors)\n", rank, bad);
		fflush(stdout);
		ibx_boot_fini(boot);
		return 3;
	}
	printf("rank %d: modex ok with %d ranks\n", rank, size);
	fflush(stdout);

	for (int i = 0; i < nmodes; i++) {
		bc_mode_t *m = &modes[i];

		if (!applies(m, rank))
			continue;
		if (!strcmp(m->name, "ignoreterm")) {
			signal(SIGTERM, SIG_IGN);
		} else if (!strcmp(m->name, "env")) {
			const char *v = getenv(m->str);
			printf("rank %d env %s=%s\n", rank, m->str, v ? v : "(unset)");
		} else if (!strcmp(m->name, "lines")) {
			for (long l = 0; l < m->arg; l++)
				printf(
				    "rank %d line %ld of %ld: the quick brown fox jumps over the "
				    "lazy dog\n",
				    rank, l, m->arg);
			for (long l = 0; l < m->arg / 10; l++)
				fprintf(stderr, "rank %d errline %ld\n", rank, l);
		} else if (!strcmp(m->name, "barrier")) {
			fflush(stdout);
			st = ibx_boot_fence(boot, false);
			if (st != IBX_OK) {
				printf("rank %d: barrier failed: %s\n", rank, ibx_status_str(st));
				fflush(stdout);
				for (;;)
					pause();
			}
		} else if (!strcmp(m->name, "shmfile")) {
			const char *dir = getenv("IBX_SHM_DIR");
			char path[512];
			int fd;

			snprintf(path, sizeof(path), "%s/ibx-%s-bootclient%d",
				 dir && *dir ? dir : "/dev/shm", ibx_boot_job_id(boot), rank);
			fd = open(path, O_CREAT | O_WRONLY, 0600);
			if (fd < 0) {
				printf("rank %d: cannot create %s: %s\n", rank, path,
				       strerror(errno));
			} else {
				printf("rank %d: created %s\n", rank, path);
				close(fd);
			}
		} else if (!strcmp(m->name, "exit")) {
			printf("rank %d: exiting with %ld\n", rank, m->arg);
			fflush(stdout);
			_exit((int)m->arg);
		} else if (!strcmp(m->name, "abort")) {
			char msg[64];

			snprintf(msg, sizeof(msg), "bootclient abort on rank %d", rank);
			printf("rank %d: aborting with %ld\n", rank, m->arg);
			fflush(stdout);
			st = ibx_boot_abort(boot, (int)m->arg, msg);
			if (st != IBX_OK)
				printf("rank %d: abort failed: %s\n", rank, ibx_status_str(st));
			fflush(stdout);
			_exit((int)m->arg);
		} else if (!strcmp(m->name, "kill9")) {
			printf("rank %d: killing myself\n", rank);
			fflush(stdout);
			kill(getpid(), SIGKILL);
		} else if (!strcmp(m->name, "sleep")) {
			printf("rank %d: sleeping pid %d\n", rank, (int)getpid());
			fflush(stdout);
			for (;;)
				pause();
		}
	}
	fflush(stdout);
	st = ibx_boot_fence(boot, false);
	if (st != IBX_OK) {
		/* a peer is gone: the launcher ends the job; an exit status of
		 * our own here would race with the peer's for "first failure" */
		printf("rank %d: final fence failed: %s; waiting to be ended\n", rank,
		       ibx_status_str(st));
		fflush(stdout);
		for (;;)
			pause();
	}
	for (int i = 0; i < nmodes; i++) {
		if (!strcmp(modes[i].name, "nofini") && applies(&modes[i], rank)) {
			printf("rank %d: done without fini\n", rank);
			fflush(stdout);
			_exit(0);
		}
	}
	ibx_boot_fini(boot);
	printf("rank %d: done\n", rank);
	return 0;
}
