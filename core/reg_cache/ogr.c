/*
 * ogr.c — Optimistic Group Registration ([Wu03] §5.4.1; the model of its [33])
 * and the measurement of the registration cost model it runs on.
 *
 *   input (any order)   b3      b0  b1         b2                    b4
 *   1. hits             buffers already covered by a cached region
 *   2. page-align the misses, sort by start, fuse those that share or
 *      touch pages into blocks (no gap to decide about)
 *   3. group: walk the blocks left to right; the next block joins the
 *      current group iff per_byte * gap < fixed (and the group stays
 *      within the cache's byte limit)
 *   4. register each group optimistically; on failure split it where
 *      msync() says the gap is unmapped (or, if it found nothing, at the
 *      largest gap) and retry the parts; a single block that fails is the
 *      caller's error
 *   5. every buffer gets a reference on the region that covers it
 *
 * Step 4 uses an explicit stack of block ranges, so a list of 100k blocks
 * that splits all the way down cannot overflow the C stack.
 */
#include "reg_cache_int.h"

#include <stdlib.h>
#include <sys/mman.h>

typedef struct ogr_item {
	uintptr_t start, end; /* page aligned */
	size_t idx;	      /* index in the caller's list */
} ogr_item_t;

typedef struct ogr_block {
	uintptr_t start, end;
	size_t first, last; /* items [first, last) */
} ogr_block_t;

static int item_cmp(const void *a, const void *b)
{
	const ogr_item_t *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Is every page of [start, end) mapped? msync(MS_ASYNC) is a no-op apart
 * from this check, and needs no per-page vector (mincore would). */
static bool range_mapped(uintptr_t start, uintptr_t end)
{
	if (start >= end)
		return true;
	return msync((void *)start, end - start, MS_ASYNC) == 0 || errno != ENOMEM;
}

typedef struct ogr_ctx {
	ibx_rcache_t *cache;
	const ogr_item_t *items;
	const ogr_block_t *blocks;
	ibx_rcache_region_t **regions; /* caller's output */
} ogr_ctx_t;

static void assign(ogr_ctx_t *c, ibx_rcache_region_t *r, size_t b0, size_t b1)
{
	for (size_t b = b0; b < b1; b++) {
		for (size_t k = c->blocks[b].first; k < c->blocks[b].last; k++) {
			ibx_rcache_ref(c->cache, r);
			c->regions[c->items[k].idx] = r;
		}
	}
}

/*
 * Registers blocks [g0, g1) as one region, splitting on failure. @stack has
 * room for 2 * (g1 - g0) entries.
 */
static ibx_status_t register_group(ogr_ctx_t *c, size_t g0, size_t g1, size_t *stack)
{
	ibx_rcache_t *cache = c->cache;
	const ogr_block_t *bl = c->blocks;
	size_t sp = 0;

	stack[sp++] = g0;
	stack[sp++] = g1;
	while (sp) {
		size_t hi = stack[--sp], lo = stack[--sp];
		ibx_rcache_region_t *r;
		ibx_status_t ret;
		size_t nsplit = 0;

		ibx_rcache_evict_for(cache, bl[hi - 1].end - bl[lo].start);
		ret =
		    ibx_rcache_region_create(cache, bl[lo].start, bl[hi - 1].end, hi - lo > 1, &r);
		if (ret == IBX_OK) {
			ibx_rcache_region_insert(cache, r);
			cache->stats.ogr_regions++;
			assign(c, r, lo, hi);
			/* The references keep r off the LRU until the caller puts. */
			continue;
		}
		if (hi - lo == 1)
			return ret; /* the caller's own buffer cannot be registered */
		cache->stats.ogr_splits++;
		/* Split at every gap that is not (entirely) mapped; pushed in
		 * reverse so the parts are registered left to right. */
		size_t end = hi;
		for (size_t b = hi - 1; b > lo; b--) {
			if (!range_mapped(bl[b - 1].end, bl[b].start)) {
				stack[sp++] = b;
				stack[sp++] = end;
				end = b;
				nsplit++;
			}
		}
		if (nsplit == 0) {
			/* Mapped but not registrable (read-only, PROT_NONE, a
			 * device mapping...) or another failure: bisect at the
			 * largest gap. */
			size_t cut = lo + 1;
			for (size_t b = lo + 1; b < hi; b++)
				if (bl[b].start - bl[b - 1].end > bl[cut].start - bl[cut - 1].end)
					cut = b;
			stack[sp++] = cut;
			stack[sp++] = hi;
			end = cut;
		}
		stack[sp++] = lo;
		stack[sp++] = end;
		ibx_debug("%s: OGR group [%p, %p) of %zu blocks split into %zu parts", cache->name,
			  (void *)bl[lo].start, (void *)bl[hi - 1].end, hi - lo,
			  nsplit ? nsplit + 1 : 2);
	}
	return IBX_OK;
}

static ibx_status_t ogr_get_locked(ibx_rcache_t *cache, const struct iovec *bufs, size_t n,
				   ibx_rcache_region_t **regions)
{
	ogr_item_t *items = NULL;
	ogr_block_t *blocks = NULL;
	size_t *stack = NULL;
	size_t nitems = 0, nblocks = 0, g0 = 0;
	ogr_ctx_t c = {cache, NULL, NULL, regions};
	ibx_status_t ret = IBX_OK;
	double fixed = cache->params.cost.fixed_ns, per_byte = cache->params.cost.per_byte_ns;
	/* Largest gap worth registering rather than paying a second region. */
	double max_gap = per_byte > 0 ? fixed / per_byte : 1e300;
	size_t max_group = cache->params.enable ? cache->params.max_bytes : SIZE_MAX;

	for (size_t i = 0; i < n; i++)
		regions[i] = NULL;
	items = malloc((n ? n : 1) * sizeof(*items));
	if (!items) {
		ret = IBX_ERR_NO_MEMORY;
		goto err;
	}
	/* 1. hits */
	for (size_t i = 0; i < n; i++) {
		uintptr_t s = (uintptr_t)bufs[i].iov_base, e = s + bufs[i].iov_len;
		ibx_rcache_region_t *r;

		if (bufs[i].iov_len == 0)
			continue;
		if (e < s || rcache_page_up(cache, e) < e) {
			ret = IBX_ERR_OVERFLOW;
			goto err;
		}
		if (cache->params.enable && (r = ibx_rcache_lookup(cache, s, e))) {
			cache->stats.hits++;
			ibx_rcache_ref(cache, r);
			regions[i] = r;
			continue;
		}
		cache->stats.misses++;
		items[nitems].start = rcache_page_down(cache, s);
		items[nitems].end = rcache_page_up(cache, e);
		items[nitems].idx = i;
		nitems++;
	}
	if (nitems == 0)
		goto out;
	/* 2. sort and fuse into blocks */
	qsort(items, nitems, sizeof(*items), item_cmp);
	blocks = malloc(nitems * sizeof(*blocks));
	stack = malloc(2 * nitems * sizeof(*stack));
	if (!blocks || !stack) {
		ret = IBX_ERR_NO_MEMORY;
		goto err;
	}
	for (size_t k = 0; k < nitems; k++) {
		if (nblocks && items[k].start <= blocks[nblocks - 1].end) {
			if (items[k].end > blocks[nblocks - 1].end)
				blocks[nblocks - 1].end = items[k].end;
			blocks[nblocks - 1].last = k + 1;
			continue;
		}
		blocks[nblocks].start = items[k].start;
		blocks[nblocks].end = items[k].end;
		blocks[nblocks].first = k;
		blocks[nblocks].last = k + 1;
		nblocks++;
	}
	/* 3. group by the cost model, 4. register */
	c.items = items;
	c.blocks = blocks;
	for (size_t b = 1; b <= nblocks; b++) {
		if (b < nblocks) {
			uintptr_t gap = blocks[b].start - blocks[b - 1].end;
			uintptr_t span = blocks[b].end - blocks[g0].start;

			if ((double)gap < max_gap && span <= max_group)
				continue;
		}
		ret = register_group(&c, g0, b, stack);
		if (ret != IBX_OK)
			goto err;
		g0 = b;
	}
out:
	free(stack);
	free(blocks);
	free(items);
	return IBX_OK;

err:
	if (ret == IBX_ERR_NO_MEMORY)
		ibx_error("%s: no memory for OGR of %zu buffers", cache->name, n);
	/* All or nothing: drop what this call acquired. */
	for (size_t i = 0; i < n; i++) {
		if (regions[i]) {
			ibx_rcache_unref(cache, regions[i]);
			regions[i] = NULL;
		}
	}
	free(stack);
	free(blocks);
	free(items);
	return ret;
}

ibx_status_t ibx_rcache_ogr_get(ibx_rcache_t *cache, const struct iovec *bufs, size_t n,
				ibx_rcache_region_t **regions_p)
{
	ibx_status_t ret = IBX_OK;

	if (!cache || (n && (!bufs || !regions_p)))
		return IBX_ERR_INVALID_PARAM;
	pthread_mutex_lock(&cache->lock);
	ibx_rcache_drain_invq(cache);
	cache->stats.ogr_calls++;
	if (cache->params.ogr) {
		ret = ogr_get_locked(cache, bufs, n, regions_p);
	} else {
		/* Block by block through the cache (IBX_OGR_ENABLE=n). */
		size_t i;

		for (i = 0; i < n; i++) {
			regions_p[i] = NULL;
			if (bufs[i].iov_len == 0)
				continue;
			ret = ibx_rcache_get_locked(cache, (uintptr_t)bufs[i].iov_base,
						    bufs[i].iov_len, &regions_p[i]);
			if (ret != IBX_OK)
				break;
		}
		if (ret != IBX_OK) {
			while (i-- > 0) {
				if (regions_p[i]) {
					ibx_rcache_unref(cache, regions_p[i]);
					regions_p[i] = NULL;
				}
			}
		}
	}
	pthread_mutex_unlock(&cache->lock);
	return ret;
}

void ibx_rcache_ogr_put(ibx_rcache_t *cache, ibx_rcache_region_t *const *regions, size_t n)
{
	pthread_mutex_lock(&cache->lock);
	ibx_rcache_drain_invq(cache);
	for (size_t i = 0; i < n; i++)
		if (regions[i])
			ibx_rcache_unref(cache, regions[i]);
	pthread_mutex_unlock(&cache->lock);
}

/* ---- cost model ----------------------------------------------------------- */

#define COST_REPS 5

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Registers and deregisters 1, 16, 64 and 256 pages of a scratch mapping a
 * few times each and fits time = fixed + per_byte * bytes (least squares
 * over the per-size medians). Runs once per cache, before any hook is
 * installed for it; costs a few milliseconds on hardware.
 */
ibx_status_t ibx_rcache_measure_cost(ibx_rcache_t *cache, ibx_rcache_cost_t *cost_p)
{
	static const size_t pages[] = {1, 16, 64, 256};
	const size_t nsizes = IBX_ARRAY_SIZE(pages);
	size_t len = pages[nsizes - 1] * cache->page_size;
	double x[IBX_ARRAY_SIZE(pages)], y[IBX_ARRAY_SIZE(pages)];
	double sx = 0, sy = 0, sxx = 0, sxy = 0, den;
	ibx_rcache_cost_t cost;
	char *buf;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		ibx_error("%s: mmap of %zu bytes to measure registration costs failed: %s",
			  cache->name, len, strerror(errno));
		return IBX_ERR_NO_MEMORY;
	}
	memset(buf, 0, len);
	for (size_t s = 0; s < nsizes; s++) {
		double t[COST_REPS];
		size_t bytes = pages[s] * cache->page_size;

		for (int rep = 0; rep < COST_REPS; rep++) {
			void *handle;
			uint32_t lkey, rkey;
			uint64_t t0 = ibx_time_ns();

			if (cache->ops->reg(cache->ops_ctx, buf, bytes, &handle, &lkey, &rkey) !=
			    IBX_OK) {
				int err = errno;

				ibx_warn("%s: %s(%zu bytes) failed while measuring the OGR cost"
					 " model: %s; using 10 us + 0.06 ns/B",
					 cache->name, cache->ops->name, bytes, strerror(err));
				munmap(buf, len);
				cost_p->fixed_ns = 10000;
				cost_p->per_byte_ns = 0.06;
				return IBX_OK;
			}
			cache->ops->dereg(cache->ops_ctx, handle);
			t[rep] = (double)(ibx_time_ns() - t0);
		}
		qsort(t, COST_REPS, sizeof(t[0]), dbl_cmp);
		x[s] = (double)bytes;
		y[s] = t[COST_REPS / 2];
	}
	munmap(buf, len);
	for (size_t s = 0; s < nsizes; s++) {
		sx += x[s];
		sy += y[s];
		sxx += x[s] * x[s];
		sxy += x[s] * y[s];
	}
	den = (double)nsizes * sxx - sx * sx;
	cost.per_byte_ns = den > 0 ? ((double)nsizes * sxy - sx * sy) / den : 0;
	cost.fixed_ns = (sy - cost.per_byte_ns * sx) / (double)nsizes;
	/* Noise can make either term non-positive; keep the model usable. */
	if (cost.per_byte_ns <= 0)
		cost.per_byte_ns = 1e-3;
	if (cost.fixed_ns <= 0)
		cost.fixed_ns = y[0] > 0 ? y[0] : 1000;
	ibx_debug("%s: registration cost model %.0f ns + %.4f ns/B (1 page: %.0f ns, %zu pages:"
		  " %.0f ns)",
		  cache->name, cost.fixed_ns, cost.per_byte_ns, y[0], pages[nsizes - 1],
		  y[nsizes - 1]);
	*cost_p = cost;
	return IBX_OK;
}
