/*
 * rcache_config.h — the configuration variables of core/reg_cache, the registration cache, one row
 * each (name without the IBX_ prefix, type, default, help), and the struct that holds their values:
 * ibx_rcache_config() parses them on first use. The module registers the table as its configuration
 * section (core/config.h), so `ibtest info` prints it with every other one.
 *
 * One row per line: a table reads better unwrapped.
 */
#ifndef IBX_RCACHE_CONFIG_H
#define IBX_RCACHE_CONFIG_H

#include "config.h"

// clang-format off
#define IBX_RCACHE_CONFIG(X) \
	X(RCACHE_ENABLE, BOOL, "y", "cache memory registrations") \
	X(RCACHE_MAX_BYTES, INT, "4g", "most bytes kept registered in the cache") \
	X(RCACHE_MAX_ENTRIES, INT, "4096", "most regions kept in the cache") \
	X(OGR_ENABLE, BOOL, "y", "Optimistic Group Registration for lists of buffers") \
	X(RCACHE_MEMHOOKS, STR, "auto", "how the cache learns that memory went away: patch (redirect libc's munmap/mremap/madvise/mmap/brk so calls from inside malloc are seen too; x86-64), interpose (symbol interposition plus mallopt so malloc never returns memory by itself), auto (patch if possible, else interpose)")
// clang-format on

typedef struct ibx_rcache_config {
	IBX_RCACHE_CONFIG(IBX_CONFIG_FIELD)
} ibx_rcache_config_t;
IBX_CONFIG_DECLARE(ibx_rcache, ibx_rcache_config_t);

#endif /* IBX_RCACHE_CONFIG_H */
