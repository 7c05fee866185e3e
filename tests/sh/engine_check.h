/*
 * engine_check.h — the check of the engine test programs in tests/sh that
 * run as ranks (shm_engine.c, shm_dt_rogue.c): a failed condition prints
 * the rank, the place, the condition and a message, and ends the process
 * with status 1. The including file defines `static int rank`.
 */
#ifndef IBX_TESTS_ENGINE_CHECK_H
#define IBX_TESTS_ENGINE_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", rank, __FILE__,      \
				__LINE__, #cond);                                                  \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#endif /* IBX_TESTS_ENGINE_CHECK_H */
