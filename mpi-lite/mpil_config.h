/*
 * mpil_config.h — the configuration variables of mpi-lite, one row each
 * (name without the IBX_ prefix, type, default, help), and the struct that
 * holds their values: mpil_config() parses them on first use. The module
 * registers the table as its configuration section (core/config.h), so
 * `ibtest info` prints it with every other one.
 *
 * One row per line: a table reads better unwrapped.
 */
#ifndef MPIL_CONFIG_H
#define MPIL_CONFIG_H

#include "config.h"

// clang-format off
#define MPIL_CONFIG(X) \
	X(COLL_HIER, BOOL, "y", "collectives: node-aware algorithms (inside each node first, then among one representative per node) on communicators that span several nodes") \
	X(COLL_NODE_SIZE, INT, "0", "collectives: take every N consecutive world ranks for one node instead of the real node map (tests the node-aware algorithms on one machine); 0 = the real map") \
	X(IO_LOCK_STRIPE, INT, "64k", "MPI-IO atomic mode: bytes of file guarded by one lock stripe; an access locks the stripes its byte range covers, so accesses to different stripes proceed concurrently") \
	X(IO_LOCKS, INT, "64", "MPI-IO atomic mode: distributed mutexes per open file (stripe s is guarded by mutex s mod N, homed round-robin on the ranks); an access covering N stripes or more takes them all") \
	X(IO_OVERLAP_CHECK, BOOL, "y", "MPI-IO atomic mode: compare the views of all ranks when one is set (and at MPI_File_set_atomicity); if no byte is in two views, accesses take no lock; n = always lock") \
	X(THREAD_MULTIPLE, BOOL, "y", "threads: MPI_Init_thread grants MPI_THREAD_MULTIPLE when asked (every MPI call then runs in a process-wide critical section that blocking calls release while they wait); n = answer MPI_THREAD_SERIALIZED") \
	X(WIN_SHARE, BOOL, "y", "windows: MPI_Win_create and MPI_Win_attach move the user's pages into a shared segment in place (same addresses and bytes) so that node-local ranks reach them with loads and stores instead of a system call per operation; not under MPI_THREAD_MULTIPLE; n = leave user memory where it is")
// clang-format on

typedef struct mpil_config {
	MPIL_CONFIG(IBX_CONFIG_FIELD)
} mpil_config_t;
IBX_CONFIG_DECLARE(mpil, mpil_config_t);

#endif /* MPIL_CONFIG_H */
