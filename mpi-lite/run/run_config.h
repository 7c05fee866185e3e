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
	X(BIND_TO, STR, "auto", "what each rank may run on, as --bind-to: core (its core's hardware threads), package or socket, numa (every core of its package / NUMA node), none (the launcher's CPUs); auto = core when the ranks do not outnumber the cores the launcher may use, none when they do (Open MPI's default)") \
	X(EMULATE_NODES, STR, "1", "a test feature, as --emulate-nodes N[:DEV0,...]: the ranks spread over N emulated nodes of this machine, consecutive ranks per node (the first np % N nodes one more); node k is host <short host name>-n<k> to PMIx and, when the launcher may (CAP_SYS_ADMIN), in the rank's own UTS namespace; its ranks get MPILITE_RUN_NODE=k and, with devices, IBX_DEVICE=DEVk; 1 = this machine as it is") \
	X(KILL_GRACE, STR, "3", "seconds mpilite-run waits between SIGTERM and SIGKILL when it ends a job (a rank failed, called MPI_Abort, or the time limit expired); decimal, > 0") \
	X(MAP_BY, STR, "core", "where rank i is placed, as --map-by: core or slot (core i, in the order of packages, then of CPUs), package or socket, numa (round robin over the packages / NUMA nodes, the next free core of each)") \
	X(NOTIFY_GRACE, STR, "1", "seconds the other ranks have to end by themselves when a rank was killed by a signal or exited non-zero before PMIx_Finalize: mpilite-run first sends them the PMIx event PMIX_ERR_PROC_TERM_WO_SYNC naming that rank, then SIGTERM after this long; decimal, 0 = SIGTERM at once, without the event") \
	X(REPORT_BINDINGS, BOOL, "n", "print each rank's CPUs to stderr before the job starts, as --report-bindings") \
	X(SYSFS, STR, "/sys/devices/system", "where mpilite-run reads the CPU topology for mapping and binding: cpu/cpuN/topology/{physical_package_id,die_id,core_id} and node/nodeN/cpulist (tests point it at a made-up machine)")
// clang-format on

typedef struct mpil_run_config {
	MPIL_RUN_CONFIG(IBX_CONFIG_FIELD)
} mpil_run_config_t;
IBX_CONFIG_DECLARE(mpil_run, mpil_run_config_t);

#endif /* MPIL_RUN_CONFIG_H */
