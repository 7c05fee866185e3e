/*
 * config_table.h — the configuration variables of core, one row each
 * (name without the IBX_ prefix, type, default, help), and the struct that
 * holds their values: ibx_core_config() parses them on first use. The module
 * registers the table as its configuration section (core/config.h), so
 * `ibtest info` prints it with every other one.
 *
 * One row per line: a table reads better unwrapped.
 */
#ifndef IBX_CONFIG_TABLE_H
#define IBX_CONFIG_TABLE_H

#include "config.h"

// clang-format off
#define IBX_CORE_CONFIG(X) \
	X(LOG, STR, "warn", "log level: error|warn|info|debug|trace") \
	X(PATHS, STR, "auto", "auto (shm for node-local peers, verbs for the rest), shm, or verbs (every peer, node-local ones included, through core/qp)") \
	X(SPIN_COUNT, INT, "2000", "idle progress passes before a waiting rank starts yielding the CPU: then one pass in 256 while every node-local rank has a CPU; when they outnumber the CPUs, every pass, after a few passes unless this is set") \
	X(PEER_CHECK_MS, INT, "200", "while waiting, how often (ms) to check that node-local peers are still alive") \
	X(BOOT_TIMEOUT, INT, "60", "seconds a bootstrap (PMIx) get waits for a key that a peer has not published yet before failing")
// clang-format on

typedef struct ibx_core_config {
	IBX_CORE_CONFIG(IBX_CONFIG_FIELD)
} ibx_core_config_t;
IBX_CONFIG_DECLARE(ibx_core, ibx_core_config_t);

#endif /* IBX_CONFIG_TABLE_H */
