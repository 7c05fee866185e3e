/*
 * reg_cache.c — the pin-down cache: lookup, merge, reference counts, LRU
 * eviction under byte/entry limits, and the processing of invalidations
 * queued by the memory hooks. Design, invalidation and OGR: reg_cache.h.
 *
 * A region is in exactly one of these states:
 *
 *   cached, referenced     in the tree
 *   cached, unreferenced   in the tree and on the LRU list (evictable)
 *   detached, referenced   out of the tree (invalidated, or absorbed by a
 *                          merge) on the detached list; deregistered at
 *                          its last put
 *   uncached               caching disabled: deregistered at its last put
 *
 * cur_bytes/cur_entries count every live registration, so the limits bound
 * what is pinned, not only what is findable.
 */
#include "reg_cache_int.h"

#include <stdlib.h>
#include <unistd.h>

IBX_CONFIG_DEFINE(ibx_rcache, "core/reg_cache", "IBX_", ibx_rcache_config_t, IBX_RCACHE_CONFIG,
		  NULL)

/* ---- lists and regions ------------------------------------------------ */

static void list_append(ibx_list_t *l, ibx_rcache_region_t *r)
{
	ibx_list_push_tail(l, &r->link);
}

static void list_remove(ibx_list_t *l, ibx_rcache_region_t *r)
{
	ibx_list_remove(l, &r->link);
}

static ibx_rcache_region_t *list_first(const ibx_list_t *l)
{
	return ibx_list_first_entry(l, ibx_rcache_region_t, link);
}

static inline ibx_rcache_region_t *region_of(ibx_itree_node_t *node)
{
	return ibx_container_of(node, ibx_rcache_region_t, node);
}

static inline uintptr_t region_start(const ibx_rcache_region_t *r)
{
	return (uintptr_t)r->node.start;
}

static inline size_t region_len(const ibx_rcache_region_t *r)
{
	return (size_t)(r->node.end - r->node.start);
}

/* ---- parameters ----------------------------------------------------------- */

void ibx_rcache_params_default(ibx_rcache_params_t *params)
{
	const ibx_rcache_config_t *cfg = ibx_rcache_config();

	memset(params, 0, sizeof(*params));
	params->name = "rcache";
	params->enable = cfg->RCACHE_ENABLE;
	params->max_bytes = cfg->RCACHE_MAX_BYTES > 0 ? (size_t)cfg->RCACHE_MAX_BYTES : 0;
	params->max_entries = cfg->RCACHE_MAX_ENTRIES > 0 ? (size_t)cfg->RCACHE_MAX_ENTRIES : 0;
	params->ogr = cfg->OGR_ENABLE;
}

/* ---- region life cycle ---------------------------------------------------- */

static ibx_status_t status_from_errno(int err)
{
	switch (err) {
	case EFAULT:
	case EINVAL: return IBX_ERR_INVALID_PARAM;
	case ENOMEM: return IBX_ERR_NO_MEMORY;
	case EPERM:
	case EAGAIN:
	case ENOSPC: return IBX_ERR_NO_RESOURCE;
	default: return IBX_ERR_IO;
	}
}

ibx_status_t ibx_rcache_region_create(ibx_rcache_t *cache, uintptr_t start, uintptr_t end,
				      bool quiet, ibx_rcache_region_t **region_p)
{
	ibx_rcache_region_t *r;
	ibx_status_t ret;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r) {
		ibx_error("%s: no memory for a region descriptor", cache->name);
		return IBX_ERR_NO_MEMORY;
	}
	errno = 0;
	ret = cache->ops->reg(cache->ops_ctx, (void *)start, end - start, &r->handle, &r->lkey,
			      &r->rkey);
	if (ret != IBX_OK) {
		err = errno ? errno : EIO;
		cache->stats.reg_failures++;
		if (quiet)
			ibx_debug("%s: %s(%p, %zu) failed: %s (will split the group)", cache->name,
				  cache->ops->name, (void *)start, (size_t)(end - start),
				  strerror(err));
		else
			ibx_error("%s: %s(%p, %zu) failed: %s", cache->name, cache->ops->name,
				  (void *)start, (size_t)(end - start), strerror(err));
		free(r);
		errno = err;
		return ret < 0 ? ret : status_from_errno(err);
	}
	r->node.start = start;
	r->node.end = end;
	cache->stats.regs++;
	cache->stats.bytes_registered += end - start;
	cache->stats.cur_bytes += end - start;
	cache->stats.cur_entries++;
	*region_p = r;
	return IBX_OK;
}

/* Deregisters and frees a region that is in no tree and no list. */
static void region_destroy(ibx_rcache_t *cache, ibx_rcache_region_t *r)
{
	if (cache->ops->dereg(cache->ops_ctx, r->handle) == IBX_OK)
		cache->stats.deregs++;
	else
		ibx_error("%s: %s could not deregister [%p, +%zu): %s", cache->name,
			  cache->ops->name, (void *)region_start(r), region_len(r),
			  strerror(errno ? errno : EIO));
	cache->stats.cur_bytes -= region_len(r);
	cache->stats.cur_entries--;
	free(r);
}

static void bbox_reset(ibx_rcache_t *cache)
{
	atomic_store(&cache->bbox_lo, UINTPTR_MAX);
	atomic_store(&cache->bbox_hi, 0);
}

void ibx_rcache_region_insert(ibx_rcache_t *cache, ibx_rcache_region_t *r)
{
	if (!cache->params.enable)
		return;
	/* Widen the box before the region becomes findable, so that a hook
	 * that runs after this get returned sees it. */
	if (region_start(r) < atomic_load(&cache->bbox_lo))
		atomic_store(&cache->bbox_lo, region_start(r));
	if ((uintptr_t)r->node.end > atomic_load(&cache->bbox_hi))
		atomic_store(&cache->bbox_hi, (uintptr_t)r->node.end);
	ibx_itree_insert(&cache->tree, &r->node);
	r->flags |= REGION_IN_TREE;
}

/* Takes a cached region out of the tree (and the LRU if unreferenced). */
static void region_unhook(ibx_rcache_t *cache, ibx_rcache_region_t *r)
{
	ibx_itree_remove(&cache->tree, &r->node);
	r->flags &= ~REGION_IN_TREE;
	if (r->flags & REGION_IN_LRU) {
		list_remove(&cache->lru, r);
		r->flags &= ~REGION_IN_LRU;
	}
	if (cache->tree.count == 0)
		bbox_reset(cache);
}

/* Out of the tree for good: free now if nobody holds it, else at last put. */
static void region_retire(ibx_rcache_t *cache, ibx_rcache_region_t *r)
{
	region_unhook(cache, r);
	if (r->refcount == 0) {
		region_destroy(cache, r);
	} else {
		r->flags |= REGION_DETACHED;
		list_append(&cache->detached, r);
	}
}

static void evict_lru_head(ibx_rcache_t *cache)
{
	ibx_rcache_region_t *r = list_first(&cache->lru);

	ibx_trace("%s: evicting [%p, +%zu)", cache->name, (void *)region_start(r), region_len(r));
	cache->stats.evictions++;
	region_retire(cache, r);
}

void ibx_rcache_evict_for(ibx_rcache_t *cache, size_t len)
{
	while (!ibx_list_empty(&cache->lru) &&
	       (cache->stats.cur_bytes + len > cache->params.max_bytes ||
		cache->stats.cur_entries + 1 > cache->params.max_entries))
		evict_lru_head(cache);
}

static void evict_over_limits(ibx_rcache_t *cache)
{
	while (!ibx_list_empty(&cache->lru) &&
	       (cache->stats.cur_bytes > cache->params.max_bytes ||
		cache->stats.cur_entries > cache->params.max_entries))
		evict_lru_head(cache);
}

void ibx_rcache_ref(ibx_rcache_t *cache, ibx_rcache_region_t *r)
{
	if (r->flags & REGION_IN_LRU) {
		list_remove(&cache->lru, r);
		r->flags &= ~REGION_IN_LRU;
	}
	r->refcount++;
}

void ibx_rcache_unref(ibx_rcache_t *cache, ibx_rcache_region_t *r)
{
	if (--r->refcount > 0)
		return;
	if (r->flags & REGION_IN_TREE) {
		list_append(&cache->lru, r);
		r->flags |= REGION_IN_LRU;
		evict_over_limits(cache);
		return;
	}
	if (r->flags & REGION_DETACHED)
		list_remove(&cache->detached, r);
	region_destroy(cache, r);
}

/* ---- invalidation --------------------------------------------------------- */

static void invalidate_range(ibx_rcache_t *cache, uintptr_t start, uintptr_t end)
{
	ibx_itree_node_t *node;

	while ((node = ibx_itree_first_overlap(&cache->tree, start, end))) {
		ibx_rcache_region_t *r = region_of(node);

		ibx_debug("%s: [%p, +%zu) invalidated by an unmap of [%p, %p)%s", cache->name,
			  (void *)region_start(r), region_len(r), (void *)start, (void *)end,
			  r->refcount ? " (still referenced)" : "");
		r->flags |= REGION_INVALID;
		cache->stats.invalidations++;
		region_retire(cache, r);
	}
}

void ibx_rcache_drain_invq(ibx_rcache_t *cache)
{
	rcache_invq_t *q = &cache->invq;
	uintptr_t start[RCACHE_INVQ_SIZE], end[RCACHE_INVQ_SIZE], ov_start = 0, ov_end = 0;
	unsigned n;
	bool ov;

	/* Deregistering may unmap memory (inside the provider) and queue more. */
	while (atomic_load_explicit(&q->pending, memory_order_acquire)) {
		while (atomic_flag_test_and_set_explicit(&q->lock, memory_order_acquire))
			ibx_cpu_relax();
		n = q->n;
		memcpy(start, q->start, n * sizeof(start[0]));
		memcpy(end, q->end, n * sizeof(end[0]));
		ov = q->overflow;
		if (ov) {
			ov_start = q->ov_start;
			ov_end = q->ov_end;
		}
		q->n = 0;
		q->overflow = false;
		atomic_store_explicit(&q->pending, 0, memory_order_relaxed);
		atomic_flag_clear_explicit(&q->lock, memory_order_release);

		for (unsigned i = 0; i < n; i++)
			invalidate_range(cache, start[i], end[i]);
		if (ov)
			invalidate_range(cache, ov_start, ov_end);
	}
}

/* ---- lookup / get / put --------------------------------------------------- */

ibx_rcache_region_t *ibx_rcache_lookup(ibx_rcache_t *cache, uintptr_t start, uintptr_t end)
{
	ibx_itree_node_t *node = ibx_itree_find_covering(&cache->tree, start, end);

	return node ? region_of(node) : NULL;
}

typedef struct merge_set {
	ibx_rcache_region_t **r;
	size_t n, cap;
	uintptr_t lo, hi;   /* page-aligned request */
	uintptr_t ulo, uhi; /* union */
	bool nomem;
} merge_set_t;

/*
 * Which cached neighbours a miss absorbs: every region sharing a page with
 * the request (so the result covers all of them and later requests that
 * span both hit), and a region that only touches it if that region is not
 * larger than the request. The second rule lets a run of adjacent buffers
 * grow one region geometrically without re-registering a long region for
 * every small neighbour (which would cost O(n^2) bytes for a sequential
 * walk).
 */
static int merge_collect(ibx_itree_node_t *node, void *arg)
{
	merge_set_t *m = arg;
	ibx_rcache_region_t *r = region_of(node);
	uintptr_t s = region_start(r), e = (uintptr_t)r->node.end;
	bool overlaps = s < m->hi && e > m->lo;

	if (!overlaps && region_len(r) > m->hi - m->lo)
		return 0;
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 8;
		ibx_rcache_region_t **nr = realloc(m->r, cap * sizeof(*nr));

		if (!nr) {
			m->nomem = true;
			return 1;
		}
		m->r = nr;
		m->cap = cap;
	}
	m->r[m->n++] = r;
	if (s < m->ulo)
		m->ulo = s;
	if (e > m->uhi)
		m->uhi = e;
	return 0;
}

ibx_status_t ibx_rcache_get_locked(ibx_rcache_t *cache, uintptr_t addr, size_t len,
				   ibx_rcache_region_t **region_p)
{
	ibx_rcache_region_t *r = NULL;
	merge_set_t m = {0};
	ibx_status_t ret;
	uintptr_t lo, hi;

	ibx_rcache_drain_invq(cache);
	if (cache->params.enable) {
		r = ibx_rcache_lookup(cache, addr, addr + len);
		if (r) {
			cache->stats.hits++;
			ibx_rcache_ref(cache, r);
			*region_p = r;
			return IBX_OK;
		}
	}
	cache->stats.misses++;
	lo = rcache_page_down(cache, addr);
	hi = rcache_page_up(cache, addr + len);
	if (hi < addr + len) /* the last page wraps around */
		return IBX_ERR_OVERFLOW;

	m.lo = m.ulo = lo;
	m.hi = m.uhi = hi;
	if (cache->params.enable) {
		/* One byte beyond each side finds the regions that only touch. */
		ibx_itree_for_each_overlap(&cache->tree, lo ? lo - 1 : 0,
					   hi < UINTPTR_MAX ? hi + 1 : hi, merge_collect, &m);
		if (m.nomem || m.uhi - m.ulo > cache->params.max_bytes)
			m.n = 0; /* register just the request */
	}
	if (m.n == 0) {
		m.ulo = lo;
		m.uhi = hi;
	}
	/* The absorbed regions must not be evicted under our feet. */
	for (size_t i = 0; i < m.n; i++) {
		if (m.r[i]->flags & REGION_IN_LRU) {
			list_remove(&cache->lru, m.r[i]);
			m.r[i]->flags &= ~REGION_IN_LRU;
		}
	}
	ibx_rcache_evict_for(cache, m.uhi - m.ulo);
	ret = ibx_rcache_region_create(cache, m.ulo, m.uhi, m.n > 0, &r);
	if (ret != IBX_OK && m.n > 0) {
		/* The union failed (memory limit?): fall back to the request. */
		for (size_t i = 0; i < m.n; i++) {
			if (m.r[i]->refcount == 0) {
				list_append(&cache->lru, m.r[i]);
				m.r[i]->flags |= REGION_IN_LRU;
			}
		}
		m.n = 0;
		ret = ibx_rcache_region_create(cache, lo, hi, false, &r);
	}
	if (ret != IBX_OK)
		goto out;
	for (size_t i = 0; i < m.n; i++) {
		cache->stats.merges++;
		region_retire(cache, m.r[i]);
	}
	ibx_rcache_region_insert(cache, r);
	ibx_rcache_ref(cache, r);
	*region_p = r;
out:
	free(m.r);
	return ret;
}

ibx_status_t ibx_rcache_region_get(ibx_rcache_t *cache, const void *addr, size_t len,
				   ibx_rcache_region_t **region_p)
{
	ibx_status_t ret;

	if (!cache || !region_p || len == 0)
		return IBX_ERR_INVALID_PARAM;
	if ((uintptr_t)addr + len < (uintptr_t)addr)
		return IBX_ERR_OVERFLOW;
	pthread_mutex_lock(&cache->lock);
	ret = ibx_rcache_get_locked(cache, (uintptr_t)addr, len, region_p);
	pthread_mutex_unlock(&cache->lock);
	return ret;
}

void ibx_rcache_region_put(ibx_rcache_t *cache, ibx_rcache_region_t *region)
{
	if (!region)
		return;
	pthread_mutex_lock(&cache->lock);
	ibx_rcache_drain_invq(cache);
	ibx_rcache_unref(cache, region);
	pthread_mutex_unlock(&cache->lock);
}

uint32_t ibx_rcache_region_lkey(const ibx_rcache_region_t *region)
{
	return region->lkey;
}

uint32_t ibx_rcache_region_rkey(const ibx_rcache_region_t *region)
{
	return region->rkey;
}

void *ibx_rcache_region_base(const ibx_rcache_region_t *region)
{
	return (void *)region_start(region);
}

size_t ibx_rcache_region_len(const ibx_rcache_region_t *region)
{
	return region_len(region);
}

void *ibx_rcache_region_handle(const ibx_rcache_region_t *region)
{
	return region->handle;
}

unsigned ibx_rcache_region_refcount(const ibx_rcache_region_t *region)
{
	return region->refcount;
}

bool ibx_rcache_region_valid(const ibx_rcache_region_t *region)
{
	return !(region->flags & REGION_INVALID);
}

/* ---- whole cache ---------------------------------------------------------- */

ibx_status_t ibx_rcache_create(const ibx_rcache_reg_ops_t *ops, void *ops_ctx,
			       const ibx_rcache_params_t *params, ibx_rcache_t **cache_p)
{
	ibx_rcache_t *cache;
	ibx_status_t ret;
	long page;
	int rc;

	if (!ops || !ops->reg || !ops->dereg || !cache_p)
		return IBX_ERR_INVALID_PARAM;
	cache = calloc(1, sizeof(*cache));
	if (!cache) {
		ibx_error("rcache: no memory for the cache");
		return IBX_ERR_NO_MEMORY;
	}
	rc = pthread_mutex_init(&cache->lock, NULL);
	if (rc) {
		ibx_error("rcache: pthread_mutex_init failed: %s", strerror(rc));
		ret = IBX_ERR_NO_RESOURCE;
		goto err_free;
	}
	if (params)
		cache->params = *params;
	else
		ibx_rcache_params_default(&cache->params);
	snprintf(cache->name, sizeof(cache->name), "%s",
		 cache->params.name ? cache->params.name : "rcache");
	cache->params.name = cache->name;
	cache->ops = ops;
	cache->ops_ctx = ops_ctx;
	page = sysconf(_SC_PAGESIZE);
	cache->page_size = page > 0 ? (size_t)page : 4096;
	ibx_itree_init(&cache->tree);
	atomic_flag_clear(&cache->invq.lock);
	atomic_init(&cache->invq.pending, 0);
	atomic_init(&cache->bbox_lo, UINTPTR_MAX);
	atomic_init(&cache->bbox_hi, 0);

	if (cache->params.ogr &&
	    (cache->params.cost.fixed_ns <= 0 || cache->params.cost.per_byte_ns <= 0)) {
		ret = ibx_rcache_measure_cost(cache, &cache->params.cost);
		if (ret != IBX_OK)
			goto err_mutex;
	}
	/* No caching, no stale hits: only a caching instance needs the hooks. */
	if (cache->params.enable)
		ibx_memhooks_add(cache);
	ibx_debug("%s: created (cache %s, max %zu bytes / %zu entries, OGR %s: %.0f ns + %.4f ns/B,"
		  " memory hooks: %s)",
		  cache->name, cache->params.enable ? "on" : "off", cache->params.max_bytes,
		  cache->params.max_entries, cache->params.ogr ? "on" : "off",
		  cache->params.cost.fixed_ns, cache->params.cost.per_byte_ns,
		  ibx_rcache_memhooks_mode());
	*cache_p = cache;
	return IBX_OK;

err_mutex:
	pthread_mutex_destroy(&cache->lock);
err_free:
	free(cache);
	return ret;
}

void ibx_rcache_destroy(ibx_rcache_t *cache)
{
	ibx_itree_node_t *node;
	size_t referenced = 0;

	if (!cache)
		return;
	if (cache->hooked)
		ibx_memhooks_remove(cache);
	pthread_mutex_lock(&cache->lock);
	ibx_rcache_drain_invq(cache);
	while ((node = cache->tree.root)) {
		ibx_rcache_region_t *r = region_of(node);

		if (r->refcount)
			referenced++;
		region_unhook(cache, r);
		region_destroy(cache, r);
	}
	while (!ibx_list_empty(&cache->detached)) {
		ibx_rcache_region_t *r = list_first(&cache->detached);

		referenced++;
		list_remove(&cache->detached, r);
		region_destroy(cache, r);
	}
	if (referenced)
		ibx_warn("%s: destroyed with %zu regions still referenced", cache->name,
			 referenced);
	pthread_mutex_unlock(&cache->lock);
	pthread_mutex_destroy(&cache->lock);
	free(cache->verbs_ctx);
	free(cache);
}

void ibx_rcache_stats_get(ibx_rcache_t *cache, ibx_rcache_stats_t *stats_p)
{
	pthread_mutex_lock(&cache->lock);
	ibx_rcache_drain_invq(cache);
	*stats_p = cache->stats;
	pthread_mutex_unlock(&cache->lock);
}

ibx_rcache_cost_t ibx_rcache_cost(const ibx_rcache_t *cache)
{
	return cache->params.cost;
}

void ibx_rcache_flush(ibx_rcache_t *cache)
{
	pthread_mutex_lock(&cache->lock);
	ibx_rcache_drain_invq(cache);
	while (!ibx_list_empty(&cache->lru))
		region_retire(cache, list_first(&cache->lru));
	pthread_mutex_unlock(&cache->lock);
}
