/*
 * run_config.h — the configuration variables of mpilite-run, one row each
 * (name without the MPILITE_RUN_ prefix, type, default, help), and the
 * struct that holds their values: mpil_run_config() parses them on first
 * use. Registered as the launcher's configuration section (core/config.h),
 * so `ibtest info` prints it with every other one.
 *
 * One row per line: a table reads better unwrapped.
 */
#ifndef MPIL_RUN_CONFIG_H
#define MPIL_RUN_CONFIG_H

#include "config.h"

// clang-format off
#define MPIL_RUN_CONFIG(X) \
	X(KILL_GRACE, STR, "3", "seconds mpilite-run waits between SIGTERM and SIGKILL when it ends a job (a rank failed, called MPI_Abort, or the time limit expired); decimal, > 0")
// clang-format on

typedef struct mpil_run_config {
	MPIL_RUN_CONFIG(IBX_CONFIG_FIELD)
} mpil_run_config_t;
IBX_CONFIG_DECLARE(mpil_run, mpil_run_config_t);

#endif /* MPIL_RUN_CONFIG_H */
