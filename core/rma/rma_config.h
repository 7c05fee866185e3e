/*
 * rma_config.h — the configuration variables of core/rma, one row each
 * (name without the IBX_ prefix, type, default, help), and the struct that
 * holds their values: ibx_rma_config() parses them on first use. The module
 * registers the table as its configuration section (core/config.h), so
 * `ibtest info` prints it with every other one.
 *
 * One row per line: a table reads better unwrapped.
 */
#ifndef IBX_RMA_CONFIG_H
#define IBX_RMA_CONFIG_H

#include "config.h"

// clang-format off
#define IBX_RMA_CONFIG(X) \
	X(MUTEX_ALGO, STR, "mcs", "algorithm of the distributed mutex (ibx_mutex_*, MPIX_Mutex_*), the same at every member: mcs (queue lock on 8-byte RDMA atomics: tail word at the home rank, each waiter spins on a flag in its own memory; O(1) remote operations per hand-off, FIFO), onesided (Ross et al. 2005, section 2.1: waitlist byte vector at the home rank read and written in one exclusive epoch, the unlocker sets the next waiter's poll byte) or hybrid (section 2.2: the same waitlist, notification by a zero-byte message)")
// clang-format on

typedef struct ibx_rma_config {
	IBX_RMA_CONFIG(IBX_CONFIG_FIELD)
} ibx_rma_config_t;
IBX_CONFIG_DECLARE(ibx_rma, ibx_rma_config_t);

#endif /* IBX_RMA_CONFIG_H */
