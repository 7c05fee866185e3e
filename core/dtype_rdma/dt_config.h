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
	X(DT_WIRE_MAX, INT, "16m", "largest serialised datatype layout accepted from a peer (bytes); larger ones are rejected as corrupt") \
	X(DT_SCHEME, STR, "auto", "how a derived-datatype message moves: auto (chosen per message), generic (pack, send, unpack), bc-spup (segments packed and unpacked in flight), rwg-up, p-rrs (pack, then the receiver reads or copies straight into its blocks), multi-w; a scheme a path cannot do falls back to auto's choice") \
	X(DT_SCATTER_MIN_BLOCK, INT, "8k", "auto: the receiver's average block length (bytes) from which a contiguous (or packed) sender's data is read or copied straight into the blocks (p-rrs) instead of landing in a buffer and being unpacked") \
	X(DT_MULTIW_MIN_BLOCK, INT, "16k", "auto: the average block length (bytes) of both the send and the receive type from which each block pair is written directly (multi-w: RDMA writes, or on shared memory process_vm_writev where the calibration found it faster than the pipe)") \
	X(DT_CALIB_DIR, STR, "", "directory of the selector's per-device calibration files (dtype-DEVICE.conf, written by ibtest dtype --calibrate; default $XDG_CACHE_HOME/ibx or ~/.cache/ibx); a threshold set in the environment wins over the file") \
	X(DT_PUSH_MIN_BLOCK, INT, "0", "auto, verbs: the send type's average block length (bytes) from which the sender offers its blocks in place (the receiver then chooses multi-w, rwg-up or bc-spup) instead of packing first (generic, p-rrs)") \
	X(DT_GATHER_MIN_BLOCK, INT, "4k", "auto, verbs: the send type's average block length (bytes) from which segments are gathered straight from the user's blocks (rwg-up) rather than packed first (bc-spup)")
// clang-format on

typedef struct ibx_dt_config {
	IBX_DT_CONFIG(IBX_CONFIG_FIELD)
} ibx_dt_config_t;
IBX_CONFIG_DECLARE(ibx_dt, ibx_dt_config_t);

#endif /* IBX_DT_CONFIG_H */
