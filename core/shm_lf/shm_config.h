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
	X(SHM_EAGER_CELLS, INT, "32", "cells per ordered pair for eager messages above 512 bytes (each cell IBX_SHM_EAGER_LIMIT bytes, rounded up to 64; 0 = none; with more than 8 local peers 8/peers of it, at least 4): the payload goes into a cell in one memcpy and the ring carries a one-slot header, instead of 60-byte pieces in slots; with every cell full, slots carry it. Measured (2 cores): 8 KiB latency 0.62 -> 0.31 us, osu_bw 24 -> 47 GB/s, osu_bibw 27 -> 49 GB/s (8 cells: 37 / 37)") \
	X(SHM_CMA_THRESHOLD, STR, "auto", "rendezvous size from which the kernel single copy (CMA: the receiver process_vm_readv's the first half while the sender process_vm_writev's the second) replaces the pipelined copy. auto: the node's lowest rank measures both copies at start-up (1-2 ms, in and out of cache) and every local rank uses its answer (IBX_LOG=info prints it); 0 = never (pipe only); a size = from that size (1 = always)") \
	X(SHM_PIPE_CHUNK, INT, "64k", "largest chunk of the pipelined rendezvous copy (multiple of 64, 4k..64m): what one hand-off between the two processes carries at most. Measured (osu_bw, 2 cores): in cache 64k x 4 streams 5-15% faster than 16k x 16 from 256k messages on, out of cache the same") \
	X(SHM_PIPE_FIRST, INT, "16k", "bytes in the first pipe chunk of a message alone in the pipe (at least 64); each next chunk carries up to three times what was pushed before, up to IBX_SHM_PIPE_CHUNK: the receiver starts copying sooner (ping-pong 32-64k: 5-13% faster). A message queued behind others goes in whole chunks") \
	X(SHM_PIPE_CHUNKS, INT, "32", "chunks per ordered pair in the pipelined copy (2..1024), of which the sender cycles through a ring of IBX_SHM_PIPE_RING; cut to fit IBX_SHM_PIPE_MEM with many local peers (not below 4). 32 x 64k is larger than a core's L2 (1-2 MiB): osu_bw 64k-4m 29-35 GB/s between two cores of Zen 4, against 7-11 through 4 chunks") \
	X(SHM_PIPE_RING, INT, "0", "chunks the sender cycles through (2..IBX_SHM_PIPE_CHUNKS); 0 = auto: per peer, the sender times 1 MiB batches of a stream (after its first 4 MiB) through all chunks, then through 4, five each, and keeps the ring of the faster median (IBX_LOG=info says which). A small ring stays in the L2 two hyperthreads share; between two cores a ring larger than L2 was 2-4x faster (Zen 4)") \
	X(SHM_PIPE_MEM, INT, "64m", "most bytes of pipes in one process's segment (one pipe per local peer, IBX_SHM_PIPE_CHUNKS x IBX_SHM_PIPE_CHUNK each): with many local peers the chunks per pair are cut to fit, not below 4") \
	X(SHM_DIR, STR, "/dev/shm", "directory of the shared segments (they are unlinked as soon as all peers have attached)")
// clang-format on

typedef struct ibx_shm_config {
	IBX_SHM_CONFIG(IBX_CONFIG_FIELD)
} ibx_shm_config_t;
IBX_CONFIG_DECLARE(ibx_shm, ibx_shm_config_t);

#endif /* IBX_SHM_CONFIG_H */
