/*
 * dt_config.h — the configuration variables of core/dtype_rdma, the datatype engine, one row each
 * (name without the IBX_ prefix, type, default, help), and the struct that
 * holds their values: ibx_dt_config() parses them on first use. The module
 * registers the table as its configuration section (core/config.h), so
 * `ibtest info` prints it with every other one.
 *
 * One row per line: a table reads better unwrapped.
 */
#ifndef IBX_DT_CONFIG_H
#define IBX_DT_CONFIG_H

#include "config.h"

// clang-format off
#define IBX_DT_CONFIG(X) \
	X(DT_WIRE_MAX, INT, "16m", "largest serialised datatype layout accepted from a peer (bytes); larger ones are rejected as corrupt")
// clang-format on

typedef struct ibx_dt_config {
	IBX_DT_CONFIG(IBX_CONFIG_FIELD)
} ibx_dt_config_t;
IBX_CONFIG_DECLARE(ibx_dt, ibx_dt_config_t);

#endif /* IBX_DT_CONFIG_H */
