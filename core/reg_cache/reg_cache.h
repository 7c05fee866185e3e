/*
 * reg_cache.h — pin-down registration cache with Optimistic Group
 * Registration (ibx_rcache_*), used by core/qp and the datatype schemes.
 *
 * What it does
 * ------------
 * Registering memory with the NIC (ibv_reg_mr) pins pages and costs
 * microseconds to milliseconds; deregistering costs as much again. The
 * cache keeps registrations after their user is done with them ("pin-down
 * cache", [Wu03] §5.4.1 [12]) and hands them out again when a later transfer
 * touches memory that an existing registration already covers:
 *
 *   region_get(addr, len):   covered by a cached region?  -- yes --> hit, ref++
 *                                       | no
 *                            page-align, absorb overlapping (and small
 *                            adjacent) cached regions, register the union,
 *                            evict least-recently-used unreferenced regions
 *                            while over IBX_RCACHE_MAX_BYTES/_MAX_ENTRIES
 *   region_put(region):      ref--; at 0 the region joins the LRU list
 *
 * Regions live in an interval tree (core/interval_tree.h) keyed by start,
 * so lookup is O(log n).
 *
 * Invalidation: memory that goes away must never reach the NIC again
 * -------------------------------------------------------------------
 * A registration pins the *physical* pages that were mapped when it was
 * made. If the application unmaps the memory and maps something new at the
 * same address (munmap + mmap, free + malloc of a large block, brk trim +
 * grow, madvise(DONTNEED) + touch), a cache hit would hand the NIC the old
 * pages: sends read stale data, receives land where nobody looks. So every
 * way memory leaves the process is reported to the cache (memhooks.c):
 *
 *   munmap(a,l)       ----\
 *   mremap(a,l,..)    -----\   hook: push [a,a+l) onto each cache's    API call (get/put/ogr/
 *   madvise(DONTNEED, -----+-> pending-invalidation ring (lock-free   -> stats/flush): drain the
 *           FREE,REMOVE)   /   of malloc and of the cache lock), then  ring under the cache lock,
 *   mmap(MAP_FIXED)   ----/    do the real system call                 unhook overlapping regions,
 *   brk/sbrk shrink   ---/                                             deregister unreferenced ones
 *                                                                      now, the rest at last put
 *
 * The hook itself never deregisters: it may run inside malloc or inside the
 * verbs provider with their locks held, and ibv_dereg_mr could re-enter
 * them. Every lookup drains the ring first, so an unmap that happened
 * before a get can never be answered from a stale region.
 *
 * How the hooks see the calls (IBX_RCACHE_MEMHOOKS):
 *   patch      (x86-64, default) libc's own munmap/mremap/madvise/mmap/brk
 *              entry points are redirected to the hooks (a 13-byte absolute
 *              jump written over their first instructions, as Open MPI's
 *              "patcher" and UCX's "bistro" do), so calls from *inside* glibc
 *              — free() unmapping a large chunk, heap trimming through
 *              sbrk/brk, thread-arena shrinking through madvise — are seen
 *              too. This is the only way to see them: glibc calls its own
 *              hidden aliases, which no symbol interposition can reach.
 *   interpose  libibx defines munmap, mremap, madvise, mmap, brk, sbrk and
 *              malloc_trim itself (so the application's calls and those of
 *              other shared libraries reach the hooks, also when libibx.a is
 *              linked statically) and forwards to the next definition
 *              (dlsym(RTLD_NEXT), resolved once in a constructor; before
 *              that, or in a static executable, the raw system call). As
 *              glibc-internal calls stay invisible here, the constructor
 *              also tells glibc never to give memory back by itself:
 *              mallopt(M_MMAP_MAX, 0) (large blocks come from the heap, so
 *              free never munmaps), M_TRIM_THRESHOLD = -1 (no sbrk trim) and
 *              M_ARENA_MAX = 1 (no thread heaps that glibc could delete).
 *              malloc_trim() drops every cached region. The price is that
 *              the process never returns freed heap memory to the kernel.
 *   The interposed symbols exist in both modes; under "patch" they only
 *   forward, because the patched libc entry reports the event.
 * Not covered: memory released by code that issues raw system calls (the
 * ASan/TSan allocators, ld.so's dlclose), SysV shmdt, and in "interpose"
 * mode large blocks malloc'ed before libibx's constructor ran.
 *
 * Fork safety
 * -----------
 * A registered page that the parent writes after fork() is copied for one
 * of the two processes (copy-on-write), and the NIC may keep the copy the
 * process no longer sees. ibx_rcache_create_verbs() therefore calls
 * ibv_fork_init() — which marks registered ranges MADV_DONTFORK — before its
 * first registration, unless the environment already decided
 * (RDMAV_FORK_SAFE or IBV_FORK_SAFE set) or the kernel makes it unnecessary
 * (ibv_is_fork_initialized() == IBV_FORK_UNNEEDED: Linux >= 5.13 pins with
 * FOLL_PIN and copies pinned pages for the child at fork). If another part of
 * the process registered memory first, ibv_fork_init() fails with EINVAL and
 * a warning says so. A child must not use registrations of its parent.
 *
 * Optimistic Group Registration ([Wu03] §5.4.1)
 * ------------------------------------------
 * For a list of buffers (a datatype's blocks) the choice is between one
 * registration per block (many fixed costs) and one for the whole span
 * (pays for every byte of the gaps). OGR takes the cost model
 *     cost(region) = fixed + per_byte * bytes      (register + deregister)
 * — measured once when the cache is created, or injected — and, after
 * page-aligning and sorting the blocks not already cached, joins two
 * neighbours exactly when the gap between them is cheaper to register
 * than a second region (per_byte * gap < fixed). With a linear model each
 * gap decision is independent, so this greedy pass is optimal.
 *
 *   blocks  [A]  [B]        [C][D]                          [E]
 *   gaps       g1     g2  (touch)           g3 (too large)
 *   groups  [ A  g1  B  g2  C  D ]                           [E]
 *
 * Each group is registered "optimistically": the gaps were never touched
 * by the caller and may not be mapped at all. When the registration fails
 * (EFAULT from ibv_reg_mr), the group is split at the gaps that msync()
 * reports as unmapped — or, if none is, at its largest gap — and the parts
 * are tried again, down to single blocks; only a block that itself cannot
 * be registered is an error:
 *
 *   [ A  g1  B  xx  C  D ]  --EFAULT-->  [ A  g1  B ]   [ C  D ]
 *                 ^ unmapped
 *
 * Every input buffer gets a referenced region that covers it.
 *
 * Threads: every call may come from any thread (one mutex per cache).
 */
#ifndef IBX_REG_CACHE_H
#define IBX_REG_CACHE_H

#include "ibx_int.h"
#include "rcache_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct ibv_pd;

typedef struct ibx_rcache ibx_rcache_t;
typedef struct ibx_rcache_region ibx_rcache_region_t;

/*
 * The registrar: what the cache calls to pin and unpin memory. Production
 * uses ibv_reg_mr/ibv_dereg_mr (ibx_rcache_create_verbs); tests inject
 * their own. @addr and @len are page aligned.
 */
typedef struct ibx_rcache_reg_ops {
	const char *name; /* the verb named in messages, e.g. "ibv_reg_mr" */
	/* On failure returns a status and leaves errno set to the cause
	 * (EFAULT when part of the range is not mapped or not writable). */
	ibx_status_t (*reg)(void *ctx, void *addr, size_t len, void **handle_p, uint32_t *lkey_p,
			    uint32_t *rkey_p);
	ibx_status_t (*dereg)(void *ctx, void *handle);
} ibx_rcache_reg_ops_t;

/* OGR cost model: time of one registration plus its deregistration. */
typedef struct ibx_rcache_cost {
	double fixed_ns;    /* per region */
	double per_byte_ns; /* per registered byte */
} ibx_rcache_cost_t;

typedef struct ibx_rcache_params {
	const char *name;   /* for messages (the device name) */
	bool enable;	    /* false: no caching, every get registers, the
			     * last put deregisters (OGR still groups) */
	size_t max_bytes;   /* unreferenced regions are evicted (LRU) ... */
	size_t max_entries; /* ... while the cache holds more than this */
	bool ogr;	    /* false: ogr_get registers buffer by buffer */
	/* Zero: measured at create time by registering a few sizes. */
	ibx_rcache_cost_t cost;
} ibx_rcache_params_t;

typedef struct ibx_rcache_stats {
	uint64_t hits, misses;
	uint64_t regs, deregs;	   /* registrar calls that succeeded */
	uint64_t reg_failures;	   /* registrar calls that failed (OGR retries too) */
	uint64_t evictions;	   /* unreferenced regions dropped by the limits */
	uint64_t invalidations;	   /* regions dropped because their memory went away */
	uint64_t merges;	   /* cached regions absorbed into a bigger one */
	uint64_t bytes_registered; /* sum over all registrations */
	uint64_t ogr_calls, ogr_regions, ogr_splits;
	size_t cur_bytes, cur_entries; /* registered now (cached or still referenced) */
} ibx_rcache_stats_t;

/* Defaults from IBX_RCACHE_ENABLE, IBX_RCACHE_MAX_BYTES,
 * IBX_RCACHE_MAX_ENTRIES, IBX_OGR_ENABLE; cost zero (measure). */
void ibx_rcache_params_default(ibx_rcache_params_t *params);

/* A cache over an arbitrary registrar. @params may be NULL (defaults). */
ibx_status_t ibx_rcache_create(const ibx_rcache_reg_ops_t *ops, void *ops_ctx,
			       const ibx_rcache_params_t *params, ibx_rcache_t **cache_p);
/* A cache over ibv_reg_mr on @pd with LOCAL_WRITE | REMOTE_WRITE |
 * REMOTE_READ | REMOTE_ATOMIC (atomic only if the device has atomics).
 * Makes the process fork-safe first (see above). The handle of a region
 * is its struct ibv_mr *. */
ibx_status_t ibx_rcache_create_verbs(struct ibv_pd *pd, const ibx_rcache_params_t *params,
				     ibx_rcache_t **cache_p);
/* Deregisters everything. Regions still referenced are reported (a caller
 * bug) and deregistered too; their pointers die with the cache. */
void ibx_rcache_destroy(ibx_rcache_t *cache);

/* A referenced region covering [addr, addr + len), len > 0. */
ibx_status_t ibx_rcache_region_get(ibx_rcache_t *cache, const void *addr, size_t len,
				   ibx_rcache_region_t **region_p);
void ibx_rcache_region_put(ibx_rcache_t *cache, ibx_rcache_region_t *region);

uint32_t ibx_rcache_region_lkey(const ibx_rcache_region_t *region);
uint32_t ibx_rcache_region_rkey(const ibx_rcache_region_t *region);
void *ibx_rcache_region_base(const ibx_rcache_region_t *region); /* page aligned */
size_t ibx_rcache_region_len(const ibx_rcache_region_t *region);
void *ibx_rcache_region_handle(const ibx_rcache_region_t *region); /* registrar's */
/* Diagnostics: current references; false once the memory under the region
 * went away (the region stays usable by its holders' in-flight work, but
 * no new get returns it). */
unsigned ibx_rcache_region_refcount(const ibx_rcache_region_t *region);
bool ibx_rcache_region_valid(const ibx_rcache_region_t *region);

/*
 * Optimistic Group Registration: for each bufs[i] with iov_len > 0,
 * regions_p[i] receives a referenced region covering it (NULL for empty
 * buffers). Buffers already covered by cached regions are hits; the rest
 * are grouped and registered as described above. All or nothing: on error
 * no reference is held.
 */
ibx_status_t ibx_rcache_ogr_get(ibx_rcache_t *cache, const struct iovec *bufs, size_t n,
				ibx_rcache_region_t **regions_p);
/* Puts every non-NULL regions[i] (one reference each). */
void ibx_rcache_ogr_put(ibx_rcache_t *cache, ibx_rcache_region_t *const *regions, size_t n);

void ibx_rcache_stats_get(ibx_rcache_t *cache, ibx_rcache_stats_t *stats_p);
/* The cost model OGR uses (measured or injected). */
ibx_rcache_cost_t ibx_rcache_cost(const ibx_rcache_t *cache);
/* Deregisters every unreferenced region (and processes pending
 * invalidations). */
void ibx_rcache_flush(ibx_rcache_t *cache);

/* "patch", "interpose" or "none" (IBX_RCACHE_ENABLE=n): how invalidation
 * events are caught in this process (fixed at load time). */
const char *ibx_rcache_memhooks_mode(void);

#endif /* IBX_REG_CACHE_H */
