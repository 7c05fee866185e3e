/*
 * reg_cache_int.h — private to core/reg_cache: the cache and region
 * objects, the pending-invalidation ring shared with the memory hooks,
 * and the functions the module's files call in each other.
 */
#ifndef IBX_REG_CACHE_INT_H
#define IBX_REG_CACHE_INT_H

#include "reg_cache.h"
#include "interval_tree.h"

#include <pthread.h>
#include <stdatomic.h>

struct ibx_rcache_region {
	ibx_itree_node_t node; /* [base, base + len) while cached */
	ibx_list_node_t link;  /* LRU (cached, unreferenced) or detached list
				* (uncached, referenced) */
	void *handle;
	uint32_t lkey, rkey;
	unsigned refcount;
	unsigned flags; /* REGION_* */
};

#define REGION_IN_TREE	0x1u /* findable by get */
#define REGION_IN_LRU	0x2u
#define REGION_DETACHED 0x4u /* out of the tree, still referenced */
#define REGION_INVALID	0x8u /* its memory went away */

/*
 * Ranges reported by the memory hooks and not yet processed. Written by
 * hooks (any thread, possibly inside malloc), drained by API calls under
 * the cache lock. A full ring folds further ranges into one covering range:
 * invalidating too much is only slower, never wrong.
 */
#define RCACHE_INVQ_SIZE 64
typedef struct rcache_invq {
	atomic_flag lock;
	atomic_uint pending; /* non-zero: something to drain */
	unsigned n;
	uintptr_t start[RCACHE_INVQ_SIZE], end[RCACHE_INVQ_SIZE];
	bool overflow;
	uintptr_t ov_start, ov_end;
} rcache_invq_t;

struct ibx_rcache {
	pthread_mutex_t lock;
	const ibx_rcache_reg_ops_t *ops;
	void *ops_ctx;
	ibx_rcache_params_t params;
	char name[64];
	size_t page_size;
	ibx_itree_t tree;
	ibx_list_t lru;	     /* head = least recently released */
	ibx_list_t detached; /* referenced regions no longer in the tree */
	ibx_rcache_stats_t stats;
	/* memory hooks */
	rcache_invq_t invq;
	/* Bounding box of everything ever cached since the tree was last
	 * empty: hooks skip events outside it without taking any lock. */
	atomic_uintptr_t bbox_lo, bbox_hi;
	struct ibx_rcache *hook_next; /* memhooks listener list */
	bool hooked;
	/* the verbs registrar's state, when created by create_verbs */
	void *verbs_ctx;
};

/* reg_cache.c — called with cache->lock held */
void ibx_rcache_drain_invq(ibx_rcache_t *cache);
ibx_rcache_region_t *ibx_rcache_lookup(ibx_rcache_t *cache, uintptr_t start, uintptr_t end);
void ibx_rcache_ref(ibx_rcache_t *cache, ibx_rcache_region_t *region);
void ibx_rcache_unref(ibx_rcache_t *cache, ibx_rcache_region_t *region);
/* Makes room for @len more bytes and one more entry (LRU eviction). */
void ibx_rcache_evict_for(ibx_rcache_t *cache, size_t len);
/* Registers [start, end) (page aligned) into a new region with refcount 0,
 * not yet in the tree. @quiet: a failure is expected and handled by the
 * caller (OGR), so log it at debug level only. */
ibx_status_t ibx_rcache_region_create(ibx_rcache_t *cache, uintptr_t start, uintptr_t end,
				      bool quiet, ibx_rcache_region_t **region_p);
/* Caches @region (tree + accounting) unless caching is disabled. */
void ibx_rcache_region_insert(ibx_rcache_t *cache, ibx_rcache_region_t *region);
ibx_status_t ibx_rcache_get_locked(ibx_rcache_t *cache, uintptr_t addr, size_t len,
				   ibx_rcache_region_t **region_p);

static inline uintptr_t rcache_page_down(const ibx_rcache_t *cache, uintptr_t a)
{
	return a & ~(uintptr_t)(cache->page_size - 1);
}
static inline uintptr_t rcache_page_up(const ibx_rcache_t *cache, uintptr_t a)
{
	return (a + cache->page_size - 1) & ~(uintptr_t)(cache->page_size - 1);
}

/* ogr.c */
/* Measures the registrar's cost model (fixed + per byte) by registering
 * a few sizes of a scratch mapping. */
ibx_status_t ibx_rcache_measure_cost(ibx_rcache_t *cache, ibx_rcache_cost_t *cost_p);

/* memhooks.c */
/* Starts/stops delivering memory events to @cache's ring. */
void ibx_memhooks_add(ibx_rcache_t *cache);
void ibx_memhooks_remove(ibx_rcache_t *cache);

#endif /* IBX_REG_CACHE_INT_H */
