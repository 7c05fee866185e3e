/*
 * shm_config.h — the configuration variables of core/shm_lf, the node-local path, one row each
 * (name without the IBX_ prefix, type, default, help), and the struct that
 * holds their values: ibx_shm_config() parses them on first use. The module
 * registers the table as its configuration section (core/config.h), so
 * `ibtest info` prints it with every other one.
 *
 * One row per line: a table reads better unwrapped.
 */
#ifndef IBX_SHM_CONFIG_H
#define IBX_SHM_CONFIG_H

#include "config.h"

// clang-format off
#define IBX_SHM_CONFIG(X) \
	X(SHM_RING_SLOTS, INT, "1024", "cache-line slots in each ordered-pair ring (power of two, 8..65536; 64 bytes each, 40 payload bytes in a packet's first slot, 60 in the others)") \
	X(SHM_EAGER_LIMIT, INT, "8k", "largest message sent through the slot ring (at most what half the receiver's ring holds); larger ones use a rendezvous. Measured: the ring has the lower latency up to 8-16k, the pipe the higher streaming bandwidth from 8k") \
	X(SHM_CMA_THRESHOLD, INT, "64k", "rendezvous size from which the kernel single copy (CMA: the receiver process_vm_readv's the first half while the sender process_vm_writev's the second) replaces the pipelined copy; 0 = never. Measured: CMA streams 1.6-3x faster from 64k, the pipe is ~20% quicker in ping-pong only below 128k") \
	X(SHM_PIPE_CHUNK, INT, "16k", "chunk size of the pipelined rendezvous copy (multiple of 64, 4k..64m); smaller chunks fill the pipeline sooner (ping-pong), streaming is the same from 16k to 64k") \
	X(SHM_PIPE_CHUNKS, INT, "16", "chunks per ordered pair in the pipelined copy (2..1024): the sender fills one while the receiver drains another") \
	X(SHM_DIR, STR, "/dev/shm", "directory of the shared segments (they are unlinked as soon as all peers have attached)")
// clang-format on

typedef struct ibx_shm_config {
	IBX_SHM_CONFIG(IBX_CONFIG_FIELD)
} ibx_shm_config_t;
IBX_CONFIG_DECLARE(ibx_shm, ibx_shm_config_t);

#endif /* IBX_SHM_CONFIG_H */
