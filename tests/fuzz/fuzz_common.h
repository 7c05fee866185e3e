/*
 * fuzz_common.h — what the fuzz targets (tests/fuzz/fuzz_*.c) share.
 *
 * FUZZ_FAIL_IF(cond, what): an input made the code under test break a
 * promise. Said through the sanitizers' report stream, which libFuzzer's
 * -close_fd_mask leaves open (tests/run-tests.sh closes the target's own
 * stdout and stderr: the library's messages about malformed input would
 * fill the log), then a crash, whose input libFuzzer keeps.
 *
 * Seeds: run with IBX_FUZZ_SEEDS=<dir> (tests/fuzz/make-corpus.sh does), a
 * target whose inputs are binary records makes a few with the code that
 * makes them for real (ibx_rkey_pack, ibx_shm_seg_create,
 * ibx_dt_serialize...), writes them to <dir>/seed-<name> from its
 * LLVMFuzzerInitialize and exits, so the corpus follows the formats.
 */
#ifndef IBX_FUZZ_COMMON_H
#define IBX_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>

void __sanitizer_report_error_summary(const char *summary);

static inline __attribute__((noreturn)) void fuzz_fail(const char *what, const char *file, int line)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "fuzz check failed at %s:%d: %s", file, line, what);
	__sanitizer_report_error_summary(msg);
	__builtin_trap();
}

#define FUZZ_FAIL_IF(cond, what)                                                                   \
	do {                                                                                       \
		if (cond)                                                                          \
			fuzz_fail(what, __FILE__, __LINE__);                                       \
	} while (0)

/* The directory to write seeds to, or NULL when fuzzing. */
static inline const char *fuzz_seed_dir(void)
{
	const char *d = getenv("IBX_FUZZ_SEEDS");

	return d && *d ? d : NULL;
}

static inline void fuzz_seed_write(const char *name, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%s", fuzz_seed_dir(), name);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

#endif /* IBX_FUZZ_COMMON_H */
