/*
 * files.c — the files mpilite-run is responsible for: its private temporary
 * directory ($TMPDIR/mpilite-run.XXXXXX, the PMIx server's rendezvous and
 * data files; removed in every case) and, after the job, any shared-memory
 * segment of the job that a killed rank could not unlink
 * (<IBX_SHM_DIR>/ibx-<jobid>-*).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "run_int.h"
#include "ibx_int.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <unistd.h>

int run_tmpdir_create(char *path, size_t len)
{
	const char *base = getenv("TMPDIR");
	int n;

	if (!base || !*base)
		base = "/tmp";
	n = snprintf(path, len, "%s/" RUN_NAME ".XXXXXX", base);
	if (n < 0 || (size_t)n >= len) {
		run_msg("TMPDIR=%s is too long", base);
		return -1;
	}
	if (!mkdtemp(path)) {
		run_msg("cannot create a temporary directory %s: %s", path, strerror(errno));
		path[0] = '\0';
		return -1;
	}
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	if (remove(path) < 0 && errno != ENOENT)
		run_msg("cannot remove %s: %s", path, strerror(errno));
	return 0;
}

void run_tmpdir_remove(const char *path)
{
	if (!path || !*path)
		return;
	if (nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) < 0 && errno != ENOENT)
		run_msg("cannot remove %s: %s", path, strerror(errno));
}

int run_shm_cleanup(const char *dir, const char *job_id)
{
	char prefix[IBX_BOOT_JOB_ID_MAX + 8];
	struct dirent *de;
	DIR *d;
	int fd, n = 0;

	snprintf(prefix, sizeof(prefix), "ibx-%s-", job_id);
	d = opendir(dir);
	if (!d) {
		if (errno != ENOENT)
			run_msg("cannot read %s: %s", dir, strerror(errno));
		return 0;
	}
	fd = dirfd(d);
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		if (unlinkat(fd, de->d_name, 0) < 0) {
			if (errno != ENOENT)
				run_msg("cannot remove %s/%s: %s", dir, de->d_name,
					strerror(errno));
			continue;
		}
		ibx_info("removed leftover %s/%s", dir, de->d_name);
		n++;
	}
	closedir(d);
	return n;
}
