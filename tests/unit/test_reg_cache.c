/*
 * test_reg_cache.c — core/reg_cache and core/interval_tree on the host.
 *
 * The cache's logic runs against a registrar that behaves like a NIC
 * would where it matters: it refuses ranges that are not entirely mapped
 * and writable (checked with the real mincore() and /proc/self/maps, so an
 * OGR gap failure is a real one), faults the pages in, and remembers which
 * physical pages it "pinned" (/proc/self/pagemap). That last part is the
 * oracle for stale registrations: a region handed out by the cache must
 * still describe the pages the process sees at that address.
 *
 * The memory-hook tests run in the mode this process was loaded with
 * (IBX_RCACHE_MEMHOOKS, "patch" on x86-64); test_interpose_mode re-runs the
 * whole suite in a child with IBX_RCACHE_MEMHOOKS=interpose.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "interval_tree.h"
#include "reg_cache/reg_cache.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static size_t pg;
static bool have_pfn; /* /proc/self/pagemap shows frame numbers (root) */

/* ---- the recording, mapping-checking registrar ---------------------------- */

typedef struct treg_mr {
	uintptr_t addr;
	size_t len;
	uint32_t key;
	uint64_t *pfn;
} treg_mr_t;

typedef struct treg_call {
	uintptr_t addr;
	size_t len;
	bool ok;
} treg_call_t;

typedef struct treg {
	unsigned nreg, ndereg, nfail, live, misaligned;
	treg_call_t calls[512];
	unsigned ncalls;
	uint32_t next_key;
	uint32_t dereg_keys[512];
	unsigned ndereg_keys;
} treg_t;

static int pagemap_fd = -1;

/* Frame numbers of the pages of [addr, addr + len); 0 where none. */
static void read_pfns(uintptr_t addr, size_t len, uint64_t *pfn)
{
	size_t n = len / pg;

	for (size_t i = 0; i < n; i++) {
		uint64_t e = 0;
		off_t off = (off_t)((addr / pg + i) * sizeof(e));

		if (pagemap_fd < 0 || pread(pagemap_fd, &e, sizeof(e), off) != sizeof(e))
			e = 0;
		pfn[i] = (e >> 63) ? (e & ((1ull << 55) - 1)) : 0;
	}
}

/* Is all of [addr, addr + len) mapped writable, per /proc/self/maps? */
static bool maps_writable(uintptr_t addr, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uintptr_t want = addr, end = addr + len;

	if (!f)
		return false;
	while (want < end && fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		char perm[8];

		if (sscanf(line, "%lx-%lx %7s", &s, &e, perm) != 3)
			continue;
		if (e <= want)
			continue;
		if (s > want || perm[1] != 'w')
			break;
		want = e;
	}
	fclose(f);
	return want >= end;
}

static ibx_status_t treg_reg(void *ctx, void *addr, size_t len, void **handle_p, uint32_t *lkey_p,
			     uint32_t *rkey_p)
{
	treg_t *t = ctx;
	uintptr_t a = (uintptr_t)addr;
	unsigned char *vec;
	treg_mr_t *mr;
	bool ok;

	if (a % pg || len % pg || len == 0)
		t->misaligned++;
	vec = malloc(len / pg + 1);
	assert_non_null(vec);
	/* The real check: mincore fails with ENOMEM on unmapped pages. */
	ok = mincore(addr, len, vec) == 0 && maps_writable(a, len);
	free(vec);
	if (t->ncalls < IBX_ARRAY_SIZE(t->calls))
		t->calls[t->ncalls++] = (treg_call_t){a, len, ok};
	if (!ok) {
		t->nfail++;
		errno = EFAULT;
		return IBX_ERR_INVALID_PARAM;
	}
	/* Pin-like: fault every page in for writing, then remember them. */
	if (madvise(addr, len, MADV_POPULATE_WRITE) != 0) {
		for (size_t off = 0; off < len; off += pg) {
			volatile char *p = (volatile char *)addr + off;
			*p = *p;
		}
	}
	mr = calloc(1, sizeof(*mr));
	assert_non_null(mr);
	mr->pfn = calloc(len / pg, sizeof(uint64_t));
	assert_non_null(mr->pfn);
	mr->addr = a;
	mr->len = len;
	mr->key = ++t->next_key;
	read_pfns(a, len, mr->pfn);
	t->nreg++;
	t->live++;
	*handle_p = mr;
	*lkey_p = mr->key;
	*rkey_p = mr->key | 0x80000000u;
	return IBX_OK;
}

static ibx_status_t treg_dereg(void *ctx, void *handle)
{
	treg_t *t = ctx;
	treg_mr_t *mr = handle;

	t->ndereg++;
	t->live--;
	if (t->ndereg_keys < IBX_ARRAY_SIZE(t->dereg_keys))
		t->dereg_keys[t->ndereg_keys++] = mr->key;
	free(mr->pfn);
	free(mr);
	return IBX_OK;
}

static const ibx_rcache_reg_ops_t treg_ops = {"test_reg", treg_reg, treg_dereg};

static bool was_deregistered(const treg_t *t, uint32_t key)
{
	for (unsigned i = 0; i < t->ndereg_keys; i++)
		if (t->dereg_keys[i] == key)
			return true;
	return false;
}

/* The oracle: does the registration still pin the pages mapped now? */
static bool region_is_current(const ibx_rcache_region_t *r)
{
	const treg_mr_t *mr = ibx_rcache_region_handle(r);
	size_t n = mr->len / pg;
	uint64_t *now = calloc(n, sizeof(uint64_t));
	bool same = true;

	assert_non_null(now);
	read_pfns(mr->addr, mr->len, now);
	for (size_t i = 0; i < n; i++)
		if (now[i] == 0 || now[i] != mr->pfn[i])
			same = false;
	free(now);
	return same;
}

static ibx_rcache_t *mkcache(treg_t *t, size_t max_bytes, size_t max_entries, double fixed_ns,
			     double per_byte_ns)
{
	ibx_rcache_params_t p;
	ibx_rcache_t *cache = NULL;

	memset(t, 0, sizeof(*t));
	ibx_rcache_params_default(&p);
	p.name = "test";
	p.enable = true;
	p.ogr = true;
	p.max_bytes = max_bytes;
	p.max_entries = max_entries;
	p.cost.fixed_ns = fixed_ns;
	p.cost.per_byte_ns = per_byte_ns;
	assert_int_equal(ibx_rcache_create(&treg_ops, t, &p, &cache), IBX_OK);
	assert_non_null(cache);
	return cache;
}

static ibx_rcache_t *mkcache_default(treg_t *t)
{
	return mkcache(t, 1ul << 30, 1000, 10000, 1.0);
}

static char *map_pages(size_t n)
{
	char *p = mmap(NULL, n * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

static ibx_rcache_stats_t stats(ibx_rcache_t *c)
{
	ibx_rcache_stats_t s;

	ibx_rcache_stats_get(c, &s);
	return s;
}

static bool patch_mode(void)
{
	return !strcmp(ibx_rcache_memhooks_mode(), "patch");
}

/* ---- interval tree -------------------------------------------------------- */

#define NIV 600

static void test_itree_against_brute_force(void **state)
{
	static ibx_itree_node_t nodes[NIV];
	bool in[NIV] = {false};
	ibx_itree_t tree;
	unsigned seed = 12345;

	ibx_itree_init(&tree);
	for (int round = 0; round < 20000; round++) {
		int i = (int)(rand_r(&seed) % NIV);

		if (in[i]) {
			ibx_itree_remove(&tree, &nodes[i]);
			in[i] = false;
		} else {
			/* many equal starts and nested/overlapping ranges */
			nodes[i].start = rand_r(&seed) % 2000;
			nodes[i].end = nodes[i].start + 1 + rand_r(&seed) % 300;
			ibx_itree_insert(&tree, &nodes[i]);
			in[i] = true;
		}
		if (round % 97)
			continue;
		assert_int_equal(ibx_itree_check(&tree), 0);
		for (int q = 0; q < 20; q++) {
			uint64_t s = rand_r(&seed) % 2300, e = s + 1 + rand_r(&seed) % 200;
			ibx_itree_node_t *cov = ibx_itree_find_covering(&tree, s, e);
			ibx_itree_node_t *ov = ibx_itree_first_overlap(&tree, s, e);
			ibx_itree_node_t *bcov = NULL, *bov = NULL;

			for (int k = 0; k < NIV; k++) {
				if (!in[k])
					continue;
				if (nodes[k].start <= s && nodes[k].end >= e &&
				    (!bcov || nodes[k].start < bcov->start))
					bcov = &nodes[k];
				if (nodes[k].start < e && nodes[k].end > s &&
				    (!bov || nodes[k].start < bov->start))
					bov = &nodes[k];
			}
			/* the lowest start is unique up to ties */
			assert_true((cov == NULL) == (bcov == NULL));
			if (cov) {
				assert_true(cov->start <= s && cov->end >= e);
				assert_int_equal(cov->start, bcov->start);
			}
			assert_true((ov == NULL) == (bov == NULL));
			if (ov) {
				assert_true(ov->start < e && ov->end > s);
				assert_int_equal(ov->start, bov->start);
			}
		}
	}
	assert_int_equal(ibx_itree_check(&tree), 0);
}

/* ---- get / put / hits / refcounts ----------------------------------------- */

static void test_hit_miss_refcount(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache_default(&t);
	char *p = map_pages(16);
	ibx_rcache_region_t *a, *b, *d;
	ibx_rcache_stats_t s;

	assert_int_equal(ibx_rcache_region_get(c, p + 100, 200, &a), IBX_OK);
	assert_ptr_equal(ibx_rcache_region_base(a), p);
	assert_int_equal(ibx_rcache_region_len(a), pg);
	assert_int_equal(ibx_rcache_region_lkey(a), t.next_key);
	assert_int_equal(ibx_rcache_region_rkey(a), t.next_key | 0x80000000u);
	assert_int_equal(ibx_rcache_region_refcount(a), 1);
	assert_true(region_is_current(a) || !have_pfn);

	assert_int_equal(ibx_rcache_region_get(c, p + 300, 10, &b), IBX_OK);
	assert_ptr_equal(a, b);
	assert_int_equal(ibx_rcache_region_refcount(a), 2);
	/* a buffer crossing into the next page is not covered */
	assert_int_equal(ibx_rcache_region_get(c, p + pg - 8, 16, &d), IBX_OK);
	assert_ptr_not_equal(d, a);
	s = stats(c);
	assert_int_equal(s.hits, 1);
	assert_int_equal(s.misses, 2);
	assert_int_equal(t.nreg, 2);

	/* d absorbed a (they share page 0): a is out of the tree, but held */
	assert_int_equal(s.merges, 1);
	assert_int_equal(t.ndereg, 0);
	ibx_rcache_region_put(c, a);
	ibx_rcache_region_put(c, b);
	/* ... and deregistered at its last put */
	assert_int_equal(t.ndereg, 1);
	assert_true(was_deregistered(&t, 1));
	ibx_rcache_region_put(c, d);
	assert_int_equal(t.ndereg, 1);
	assert_int_equal(ibx_rcache_region_refcount(d), 0);
	/* unreferenced but cached: hit again, no new registration */
	assert_int_equal(ibx_rcache_region_get(c, p, 2 * pg, &b), IBX_OK);
	assert_ptr_equal(b, d);
	assert_int_equal(t.nreg, 2);
	ibx_rcache_region_put(c, b);

	assert_int_equal(ibx_rcache_region_get(c, p, 0, &b), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_rcache_region_get(c, (void *)(UINTPTR_MAX - 10), 100, &b),
			 IBX_ERR_OVERFLOW);
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
	assert_int_equal(t.misaligned, 0);
	munmap(p, 16 * pg);
}

/* ---- merging -------------------------------------------------------------- */

static void test_merge_overlapping(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache_default(&t);
	char *p = map_pages(8);
	ibx_rcache_region_t *r1, *r2, *r3, *r;
	ibx_rcache_stats_t s;

	assert_int_equal(ibx_rcache_region_get(c, p, pg, &r1), IBX_OK);
	assert_int_equal(ibx_rcache_region_get(c, p + 3 * pg, pg, &r2), IBX_OK);
	ibx_rcache_region_put(c, r2); /* r1 stays referenced */
	/* [0.5, 3.5) pages shares pages with both: one region [0, 4) */
	assert_int_equal(ibx_rcache_region_get(c, p + pg / 2, 3 * pg, &r3), IBX_OK);
	assert_ptr_equal(ibx_rcache_region_base(r3), p);
	assert_int_equal(ibx_rcache_region_len(r3), 4 * pg);
	s = stats(c);
	assert_int_equal(s.merges, 2);
	assert_int_equal(t.nreg, 3);
	/* r2 was unreferenced: deregistered at once; r1 is held: not yet */
	assert_int_equal(t.ndereg, 1);
	assert_true(was_deregistered(&t, 2));
	assert_true(ibx_rcache_region_valid(r1));
	assert_int_equal(s.cur_entries, 2);
	/* new lookups inside r1's range find the merged region */
	assert_int_equal(ibx_rcache_region_get(c, p + 10, 10, &r), IBX_OK);
	assert_ptr_equal(r, r3);
	ibx_rcache_region_put(c, r);
	ibx_rcache_region_put(c, r1);
	assert_int_equal(t.ndereg, 2);
	assert_true(was_deregistered(&t, 1));
	ibx_rcache_region_put(c, r3);
	s = stats(c);
	assert_int_equal(s.cur_entries, 1);
	assert_int_equal(s.cur_bytes, 4 * pg);
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
	munmap(p, 8 * pg);
}

static void test_merge_adjacent_rule(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache_default(&t);
	char *p = map_pages(8);
	ibx_rcache_region_t *r;

	assert_int_equal(ibx_rcache_region_get(c, p, pg, &r), IBX_OK);
	ibx_rcache_region_put(c, r);
	/* touching neighbour of equal size: absorbed -> [0, 2) */
	assert_int_equal(ibx_rcache_region_get(c, p + pg, pg, &r), IBX_OK);
	assert_ptr_equal(ibx_rcache_region_base(r), p);
	assert_int_equal(ibx_rcache_region_len(r), 2 * pg);
	ibx_rcache_region_put(c, r);
	/* touching neighbour larger than the request: left alone -> [2, 3) */
	assert_int_equal(ibx_rcache_region_get(c, p + 2 * pg, pg, &r), IBX_OK);
	assert_ptr_equal(ibx_rcache_region_base(r), p + 2 * pg);
	assert_int_equal(ibx_rcache_region_len(r), pg);
	ibx_rcache_region_put(c, r);
	assert_int_equal(stats(c).merges, 1);
	assert_int_equal(stats(c).cur_entries, 2);
	/* a request spanning both merges everything: [0, 4) */
	assert_int_equal(ibx_rcache_region_get(c, p + pg, 3 * pg, &r), IBX_OK);
	assert_ptr_equal(ibx_rcache_region_base(r), p);
	assert_int_equal(ibx_rcache_region_len(r), 4 * pg);
	ibx_rcache_region_put(c, r);
	assert_int_equal(stats(c).cur_entries, 1);
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
	munmap(p, 8 * pg);
}

/* ---- LRU eviction --------------------------------------------------------- */

static void getput(ibx_rcache_t *c, void *addr, size_t len)
{
	ibx_rcache_region_t *r;

	assert_int_equal(ibx_rcache_region_get(c, addr, len, &r), IBX_OK);
	ibx_rcache_region_put(c, r);
}

static void test_lru_entry_limit(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache(&t, 1ul << 30, 2, 10000, 1.0);
	char *p = map_pages(8);
	char *A = p, *B = p + 2 * pg, *C = p + 4 * pg;

	getput(c, A, pg); /* key 1 */
	getput(c, B, pg); /* key 2 */
	getput(c, A, pg); /* hit: A is now the most recently used */
	assert_int_equal(stats(c).hits, 1);
	getput(c, C, pg); /* key 3: evicts the LRU one, B */
	assert_int_equal(stats(c).evictions, 1);
	assert_true(was_deregistered(&t, 2));
	assert_false(was_deregistered(&t, 1));
	getput(c, A, pg);
	assert_int_equal(stats(c).hits, 2);
	getput(c, B, pg); /* miss again, evicts C (LRU) */
	assert_int_equal(stats(c).misses, 4);
	assert_true(was_deregistered(&t, 3));
	assert_int_equal(stats(c).cur_entries, 2);
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
	munmap(p, 8 * pg);
}

static void test_lru_byte_limit(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache(&t, 3 * pg, 100, 10000, 1.0);
	char *p = map_pages(12);
	ibx_rcache_region_t *a, *b;
	ibx_rcache_stats_t s;

	getput(c, p, 2 * pg);	       /* key 1, 2 pages */
	getput(c, p + 4 * pg, 2 * pg); /* key 2: 4 > 3 pages, evicts key 1 */
	assert_true(was_deregistered(&t, 1));
	assert_int_equal(stats(c).cur_bytes, 2 * pg);
	/* referenced regions are never evicted: the limit is exceeded */
	assert_int_equal(ibx_rcache_region_get(c, p + 8 * pg, 2 * pg, &a),
			 IBX_OK); /* key 3, evicts 2 */
	assert_true(was_deregistered(&t, 2));
	assert_int_equal(ibx_rcache_region_get(c, p, 2 * pg, &b), IBX_OK); /* key 4 */
	s = stats(c);
	assert_int_equal(s.cur_bytes, 4 * pg);
	assert_int_equal(s.evictions, 2);
	/* releasing b puts the cache over its limit: b itself (the only
	 * unreferenced one) goes */
	ibx_rcache_region_put(c, b);
	assert_true(was_deregistered(&t, 4));
	assert_int_equal(stats(c).cur_bytes, 2 * pg);
	ibx_rcache_region_put(c, a);
	assert_false(was_deregistered(&t, 3));
	/* a region larger than the whole limit is used, then dropped */
	assert_int_equal(ibx_rcache_region_get(c, p, 5 * pg, &b), IBX_OK);
	ibx_rcache_region_put(c, b);
	s = stats(c);
	assert_true(s.cur_bytes <= 3 * pg);
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
	munmap(p, 12 * pg);
}

static void test_no_cache_mode(void **state)
{
	treg_t t;
	ibx_rcache_params_t prm;
	ibx_rcache_t *c;
	char *p = map_pages(4);
	ibx_rcache_region_t *a, *b;

	memset(&t, 0, sizeof(t));
	ibx_rcache_params_default(&prm);
	prm.enable = false;
	prm.cost.fixed_ns = 1000;
	prm.cost.per_byte_ns = 1;
	assert_int_equal(ibx_rcache_create(&treg_ops, &t, &prm, &c), IBX_OK);
	assert_int_equal(ibx_rcache_region_get(c, p, 100, &a), IBX_OK);
	assert_int_equal(ibx_rcache_region_get(c, p, 100, &b), IBX_OK);
	assert_ptr_not_equal(a, b);
	assert_int_equal(t.nreg, 2);
	ibx_rcache_region_put(c, a);
	assert_int_equal(t.ndereg, 1);
	ibx_rcache_region_put(c, b);
	assert_int_equal(t.ndereg, 2);
	assert_int_equal(stats(c).hits, 0);
	ibx_rcache_destroy(c);
	munmap(p, 4 * pg);
}

static void test_destroy_with_references(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache_default(&t);
	char *p = map_pages(4);
	ibx_rcache_region_t *a, *b;

	assert_int_equal(ibx_rcache_region_get(c, p, pg, &a), IBX_OK);
	assert_int_equal(ibx_rcache_region_get(c, p + 2 * pg, pg, &b), IBX_OK);
	munmap(p + 2 * pg, pg); /* b detached at the next call, still referenced */
	assert_int_equal(stats(c).invalidations, 1);
	assert_false(ibx_rcache_region_valid(b));
	ibx_rcache_destroy(c); /* warns; must not leak registrations */
	assert_int_equal(t.live, 0);
	munmap(p, 4 * pg);
}

/* ---- invalidation --------------------------------------------------------- */

static void test_invalidate_munmap(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache_default(&t);
	char *p = map_pages(4), *q;
	ibx_rcache_region_t *r, *held;
	uint32_t key;

	memset(p, 0x5a, 4 * pg);
	assert_int_equal(ibx_rcache_region_get(c, p, 4 * pg, &r), IBX_OK);
	key = ibx_rcache_region_lkey(r);
	ibx_rcache_region_put(c, r);
	assert_int_equal(munmap(p, 4 * pg), 0);
	assert_int_equal(stats(c).invalidations, 1);
	assert_true(was_deregistered(&t, key));

	/* the same address again, new pages: must be a miss */
	q = mmap(p, 4 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	assert_ptr_equal(q, p);
	assert_int_equal(ibx_rcache_region_get(c, q, 4 * pg, &r), IBX_OK);
	assert_int_not_equal(ibx_rcache_region_lkey(r), key);
	assert_int_equal(stats(c).misses, 2);
	if (have_pfn)
		assert_true(region_is_current(r));

	/* unmapping part of a referenced region: detached, kept registered
	 * until the last put */
	assert_int_equal(ibx_rcache_region_get(c, q, pg, &held), IBX_OK);
	assert_ptr_equal(held, r);
	key = ibx_rcache_region_lkey(r);
	assert_int_equal(munmap(q + 2 * pg, pg), 0);
	assert_int_equal(stats(c).invalidations, 2);
	assert_false(ibx_rcache_region_valid(held));
	assert_false(was_deregistered(&t, key));
	ibx_rcache_region_put(c, r);
	assert_false(was_deregistered(&t, key));
	ibx_rcache_region_put(c, held);
	assert_true(was_deregistered(&t, key));
	/* page 0 is still mapped: a fresh region for it */
	getput(c, q, pg);
	assert_int_equal(stats(c).misses, 3);
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
	munmap(q, 4 * pg);
}

static void test_unrelated_unmap_keeps_regions(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache_default(&t);
	char *p = map_pages(4), *other = map_pages(4);

	getput(c, p, 4 * pg);
	assert_int_equal(munmap(other, 4 * pg), 0);
	assert_int_equal(madvise(p, 4 * pg, MADV_WILLNEED), 0);
	assert_int_equal(madvise(p, 4 * pg, MADV_DONTFORK), 0); /* what ibv_fork_init does */
	assert_int_equal(madvise(p, 4 * pg, MADV_DOFORK), 0);
	getput(c, p + 10, 100);
	assert_int_equal(stats(c).invalidations, 0);
	assert_int_equal(stats(c).hits, 1);
	ibx_rcache_destroy(c);
	munmap(p, 4 * pg);
}

static void test_invalidate_mremap(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache_default(&t);
	char *p = map_pages(4), *q;
	ibx_rcache_region_t *r;
	uint32_t key;

	/* shrink in place: the tail pages are gone */
	assert_int_equal(ibx_rcache_region_get(c, p + 2 * pg, 2 * pg, &r), IBX_OK);
	key = ibx_rcache_region_lkey(r);
	ibx_rcache_region_put(c, r);
	q = mremap(p, 4 * pg, 2 * pg, 0);
	assert_ptr_equal(q, p);
	assert_int_equal(stats(c).invalidations, 1);
	assert_true(was_deregistered(&t, key));

	/* move: the old address is no longer the memory that was registered */
	getput(c, p, 2 * pg);
	q = mremap(p, 2 * pg, 64 * pg, MREMAP_MAYMOVE);
	assert_true(q != MAP_FAILED);
	assert_int_equal(stats(c).invalidations, 2);
	assert_int_equal(t.live, 0);
	getput(c, q, 64 * pg);
	assert_int_equal(stats(c).misses, 3);
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
	munmap(q, 64 * pg);
}

static void test_invalidate_madvise(void **state)
{
	static const int advice[] = {MADV_DONTNEED, MADV_FREE, MADV_REMOVE};
	treg_t t;
	ibx_rcache_t *c = mkcache_default(&t);
	char *p = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ibx_rcache_region_t *r;

	assert_true(p != MAP_FAILED);
	for (unsigned i = 0; i < IBX_ARRAY_SIZE(advice); i++) {
		uint32_t key;

		memset(p, 0x33, 4 * pg);
		assert_int_equal(ibx_rcache_region_get(c, p + pg, pg, &r), IBX_OK);
		key = ibx_rcache_region_lkey(r);
		assert_true(region_is_current(r) || !have_pfn);
		ibx_rcache_region_put(c, r);
		/* MADV_FREE is only for private memory; EINVAL here is fine, the
		 * hook reports before the kernel decides */
		(void)madvise(p, 2 * pg, advice[i]);
		assert_int_equal(stats(c).invalidations, i + 1);
		assert_true(was_deregistered(&t, key));
		/* touched again: new pages, new registration */
		memset(p, 0x44, 4 * pg);
		assert_int_equal(ibx_rcache_region_get(c, p + pg, pg, &r), IBX_OK);
		assert_int_not_equal(ibx_rcache_region_lkey(r), key);
		if (have_pfn)
			assert_true(region_is_current(r));
		ibx_rcache_region_put(c, r);
		ibx_rcache_flush(c);
	}
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
	munmap(p, 4 * pg);
}

static void test_invalidate_mmap_fixed(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache_default(&t);
	char *p = map_pages(4), *q;
	ibx_rcache_region_t *r;

	getput(c, p, 4 * pg);
	q = mmap(p + pg, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
		 0);
	assert_ptr_equal(q, p + pg);
	assert_int_equal(stats(c).invalidations, 1);
	assert_int_equal(ibx_rcache_region_get(c, p, 4 * pg, &r), IBX_OK);
	assert_int_equal(stats(c).misses, 2);
	if (have_pfn)
		assert_true(region_is_current(r));
	ibx_rcache_region_put(c, r);
	ibx_rcache_destroy(c);
	munmap(p, 4 * pg);
}

static void test_invalidate_sbrk(void **state)
{
	treg_t t;
	ibx_rcache_t *c;
	char *old, *cur;

	c = mkcache_default(&t);
	old = sbrk(0);
	if (old == (void *)-1 || (uintptr_t)old % pg) {
		ibx_rcache_destroy(c);
		skip();
	}
	assert_ptr_equal(sbrk((intptr_t)(4 * pg)), old);
	memset(old, 1, 4 * pg);
	getput(c, old, 4 * pg);
	cur = sbrk(0);
	if (cur != old + 4 * pg) {
		/* malloc moved the break in between; shrinking would hurt it */
		ibx_rcache_destroy(c);
		skip();
	}
	assert_ptr_equal(sbrk(-(intptr_t)(2 * pg)), old + 4 * pg);
	assert_int_equal(stats(c).invalidations, 1);
	assert_int_equal(t.live, 0);
	/* grow again: the same addresses, new pages */
	assert_ptr_equal(sbrk((intptr_t)(2 * pg)), old + 2 * pg);
	memset(old, 2, 4 * pg);
	getput(c, old, 4 * pg);
	assert_int_equal(stats(c).misses, 2);
	if (sbrk(0) == old + 4 * pg) {
		assert_int_equal(brk(old), 0);
		assert_int_equal(stats(c).invalidations, 2);
	}
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
}

/* Under "patch", a call made from inside libc (here: through the pointer
 * to libc's own munmap, as free() does through its hidden alias) is seen. */
static void test_libc_internal_munmap(void **state)
{
	treg_t t;
	ibx_rcache_t *c;
	void *libc;
	int (*libc_munmap)(void *, size_t);
	char *p;

	if (!patch_mode())
		skip();
	libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	assert_non_null(libc);
	libc_munmap = (int (*)(void *, size_t))dlsym(libc, "munmap");
	assert_non_null(libc_munmap);
	c = mkcache_default(&t);
	p = map_pages(4);
	getput(c, p, 4 * pg);
	assert_int_equal(libc_munmap(p, 4 * pg), 0);
	assert_int_equal(stats(c).invalidations, 1);
	assert_int_equal(t.live, 0);
	ibx_rcache_destroy(c);
	dlclose(libc);
}

/*
 * free + malloc of a large block while its registration is cached. Under
 * "patch" glibc returns the block to the kernel (mmap'ed chunk) and maps a
 * new one at the same address: the cache must see the munmap and miss.
 * Under "interpose" glibc was told to keep the memory: the block comes back
 * with the same pages, and a hit is then correct. Either way the oracle
 * decides: whatever the cache returns must pin the pages mapped now.
 */
static void test_free_malloc_reuse(void **state)
{
	const size_t sz = 4 << 20;
	treg_t t;
	ibx_rcache_t *c;
	ibx_rcache_region_t *r;
	char *a, *b;
	uint32_t key;

	if (UNDER_ASAN)
		skip(); /* ASan's allocator maps and unmaps with raw system calls */
	if (!strcmp(ibx_rcache_memhooks_mode(), "none"))
		skip(); /* IBX_RCACHE_ENABLE=n at load: glibc-internal unmaps are unseen */
	if (patch_mode())
		mallopt(M_MMAP_THRESHOLD, 128 * 1024); /* large blocks really go back */
	c = mkcache_default(&t);
	a = malloc(sz);
	assert_non_null(a);
	memset(a, 0x11, sz);
	assert_int_equal(ibx_rcache_region_get(c, a, sz, &r), IBX_OK);
	key = ibx_rcache_region_lkey(r);
	ibx_rcache_region_put(c, r);
	free(a);
	b = malloc(sz);
	assert_non_null(b);
	memset(b, 0x22, sz);
	if (b != a) {
		free(b);
		ibx_rcache_destroy(c);
		skip(); /* the allocator did not reuse the address */
	}
	assert_int_equal(ibx_rcache_region_get(c, b, sz, &r), IBX_OK);
	if (patch_mode()) {
		assert_int_equal(stats(c).invalidations, 1);
		assert_true(was_deregistered(&t, key));
		assert_int_equal(stats(c).misses, 2);
		assert_int_not_equal(ibx_rcache_region_lkey(r), key);
	}
	if (have_pfn)
		assert_true(region_is_current(r));
	ibx_rcache_region_put(c, r);
	free(b);
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
}

/* glibc trimming the top of the heap (free -> systrim -> sbrk(-n) ->
 * __brk, all internal) while a registration covers it. */
static void test_heap_trim(void **state)
{
	const size_t sz = 1 << 20;
	treg_t t;
	ibx_rcache_t *c;
	ibx_rcache_region_t *r;
	char *a, *b, *spare, *brk_before, *brk_after;

	if (UNDER_ASAN || !patch_mode())
		skip();
	mallopt(M_MMAP_THRESHOLD, 32 << 20); /* from the heap, not mmap */
	mallopt(M_TRIM_THRESHOLD, 128 * 1024);
	c = mkcache_default(&t);
	/* The small allocations of the registration below must not land
	 * between the block and the top of the heap, or free() cannot merge
	 * the block into the top and trim: give them a free chunk below it. */
	spare = malloc(64 * 1024);
	a = malloc(sz);
	assert_non_null(spare);
	assert_non_null(a);
	free(spare);
	memset(a, 0x11, sz);
	assert_int_equal(ibx_rcache_region_get(c, a, sz, &r), IBX_OK);
	ibx_rcache_region_put(c, r);
	brk_before = sbrk(0);
	free(a);
	brk_after = sbrk(0);
	if (brk_after >= brk_before || (uintptr_t)brk_after >= (uintptr_t)a + sz) {
		ibx_rcache_destroy(c);
		mallopt(M_MMAP_THRESHOLD, 128 * 1024);
		skip(); /* the block was not at the top, nothing was trimmed */
	}
	assert_true(stats(c).invalidations >= 1);
	assert_int_equal(t.live, 0);
	b = malloc(sz);
	assert_non_null(b);
	memset(b, 0x22, sz);
	assert_int_equal(ibx_rcache_region_get(c, b, sz, &r), IBX_OK);
	assert_int_equal(stats(c).misses, 2);
	if (have_pfn)
		assert_true(region_is_current(r));
	ibx_rcache_region_put(c, r);
	free(b);
	ibx_rcache_destroy(c);
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

/* More unmaps than the pending ring holds before the cache looks: the
 * overflow range must still catch every one. */
static void test_invalidation_ring_overflow(void **state)
{
	enum { N = 100 };
	treg_t t;
	ibx_rcache_t *c = mkcache(&t, 1ul << 30, 1000, 10000, 1.0);
	char *p = map_pages(2 * N);

	/* every other page, so that no two regions touch and merge */
	for (int i = 0; i < N; i++)
		getput(c, p + 2 * i * pg, pg);
	assert_int_equal(stats(c).cur_entries, N);
	for (int i = 0; i < N; i++)
		munmap(p + 2 * i * pg, pg);
	assert_int_equal(stats(c).invalidations, N);
	assert_int_equal(t.live, 0);
	ibx_rcache_destroy(c);
	munmap(p, 2 * N * pg);
}

/* One thread hits a cached region while another registers, unmaps and
 * re-maps memory; every one of the second thread's regions must be
 * invalidated exactly once. */
typedef struct churn_arg {
	ibx_rcache_t *cache;
	int iters;
} churn_arg_t;

static void *churn(void *arg)
{
	churn_arg_t *a = arg;

	for (int i = 0; i < a->iters; i++) {
		char *m =
		    mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ibx_rcache_region_t *r;

		if (m == MAP_FAILED)
			return (void *)1;
		if (ibx_rcache_region_get(a->cache, m, 2 * pg, &r) != IBX_OK)
			return (void *)1;
		ibx_rcache_region_put(a->cache, r);
		munmap(m, 2 * pg);
	}
	return NULL;
}

static void test_threads(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache_default(&t);
	char *p = map_pages(4);
	churn_arg_t arg = {c, 300};
	pthread_t th;
	void *ret;

	/* 4 pages: longer than the churned regions, so never absorbed by them */
	getput(c, p, 4 * pg);
	assert_int_equal(pthread_create(&th, NULL, churn, &arg), 0);
	for (int i = 0; i < 3000; i++)
		getput(c, p + (i % 4) * 100, 50);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_null(ret);
	assert_int_equal(stats(c).invalidations, 300);
	assert_int_equal(stats(c).cur_entries, 1);
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
	munmap(p, 4 * pg);
}

/* A child of fork() inherits the hooks: unmapping there and creating a
 * cache there (write lock on the listener list) must work and must not
 * touch the parent's cache. */
static void test_fork_child(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache_default(&t);
	char *p = map_pages(4);
	int status;
	pid_t pid;

	getput(c, p, 4 * pg);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		treg_t t2;
		ibx_rcache_t *c2;
		ibx_rcache_params_t prm;
		ibx_rcache_region_t *r;
		char *q;

		alarm(20); /* a deadlock kills the child, and fails the test */
		munmap(p, 4 * pg);
		memset(&t2, 0, sizeof(t2));
		ibx_rcache_params_default(&prm);
		prm.enable = true;
		prm.cost.fixed_ns = 1000;
		prm.cost.per_byte_ns = 1;
		q = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (q == MAP_FAILED || ibx_rcache_create(&treg_ops, &t2, &prm, &c2) != IBX_OK ||
		    ibx_rcache_region_get(c2, q, 10, &r) != IBX_OK)
			_exit(1);
		ibx_rcache_region_put(c2, r);
		munmap(q, pg);
		ibx_rcache_stats_t s2;
		ibx_rcache_stats_get(c2, &s2);
		_exit(s2.invalidations == 1 ? 0 : 2);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	getput(c, p, 4 * pg);
	assert_int_equal(stats(c).invalidations, 0);
	assert_int_equal(stats(c).hits, 1);
	ibx_rcache_destroy(c);
	munmap(p, 4 * pg);
}

/* ---- Optimistic Group Registration ---------------------------------------- */

static struct iovec iov(void *base, size_t len)
{
	return (struct iovec){base, len};
}

static void expect_call(const treg_t *t, unsigned i, const void *addr, size_t len, bool ok)
{
	assert_true(i < t->ncalls);
	assert_ptr_equal((void *)t->calls[i].addr, addr);
	assert_int_equal(t->calls[i].len, len);
	assert_int_equal(t->calls[i].ok, ok);
}

static void expect_covers(ibx_rcache_region_t *r, const struct iovec *v)
{
	assert_non_null(r);
	assert_true((char *)ibx_rcache_region_base(r) <= (char *)v->iov_base);
	assert_true((char *)ibx_rcache_region_base(r) + ibx_rcache_region_len(r) >=
		    (char *)v->iov_base + v->iov_len);
}

/* fixed 10 us, 1 ns/B: gaps below 10000 bytes are worth registering */
static void test_ogr_grouping(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache(&t, 1ul << 30, 1000, 10000, 1.0);
	char *p = map_pages(32);
	/* deliberately out of order */
	struct iovec v[] = {
	    iov(p + 20 * pg + 8, 100), /* [20,21) */
	    iov(p + 10, 100),	       /* [0,1)   */
	    iov(p + 3 * pg, 2 * pg),   /* [3,5): 1-page gap (4096 B) to [0,2) -> joined */
	    iov(p + pg - 50, 100),     /* [0,2): touches, fused */
	    iov(p + 21 * pg, pg),      /* [21,22): touches [20,21) */
	    iov(p + 20 * pg + 8, 100), /* duplicate */
	    iov(p + 100, 0),	       /* empty */
	};
	ibx_rcache_region_t *r[IBX_ARRAY_SIZE(v)], *r2[IBX_ARRAY_SIZE(v)];
	ibx_rcache_stats_t s;

	assert_int_equal(ibx_rcache_ogr_get(c, v, IBX_ARRAY_SIZE(v), r), IBX_OK);
	/* [5,20) is a 15-page gap (61440 B > 10000 B): two regions */
	assert_int_equal(t.ncalls, 2);
	expect_call(&t, 0, p, 5 * pg, true);
	expect_call(&t, 1, p + 20 * pg, 2 * pg, true);
	for (unsigned i = 0; i < 6; i++)
		expect_covers(r[i], &v[i]);
	assert_null(r[6]);
	assert_ptr_equal(r[1], r[2]);
	assert_ptr_equal(r[1], r[3]);
	assert_ptr_equal(r[0], r[4]);
	assert_ptr_equal(r[0], r[5]);
	assert_ptr_not_equal(r[0], r[1]);
	assert_int_equal(ibx_rcache_region_refcount(r[1]), 3);
	assert_int_equal(ibx_rcache_region_refcount(r[0]), 3);
	s = stats(c);
	assert_int_equal(s.ogr_regions, 2);
	assert_int_equal(s.ogr_splits, 0);

	/* the same list again: every buffer is a hit */
	assert_int_equal(ibx_rcache_ogr_get(c, v, IBX_ARRAY_SIZE(v), r2), IBX_OK);
	assert_int_equal(t.ncalls, 2);
	assert_int_equal(memcmp(r, r2, sizeof(r)), 0);
	ibx_rcache_ogr_put(c, r2, IBX_ARRAY_SIZE(v));
	ibx_rcache_ogr_put(c, r, IBX_ARRAY_SIZE(v));
	assert_int_equal(ibx_rcache_region_refcount(r[0]), 0);
	assert_int_equal(stats(c).hits, 6);
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
	munmap(p, 32 * pg);
}

/* The same list when bytes are expensive (gap limit 1000 B < 1 page):
 * only touching blocks share a region. */
static void test_ogr_expensive_bytes(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache(&t, 1ul << 30, 1000, 1000, 1.0);
	char *p = map_pages(32);
	struct iovec v[] = {iov(p + 10, 100), iov(p + pg - 50, 100), iov(p + 3 * pg, 2 * pg),
			    iov(p + 20 * pg + 8, 100), iov(p + 21 * pg, pg)};
	ibx_rcache_region_t *r[IBX_ARRAY_SIZE(v)];

	assert_int_equal(ibx_rcache_ogr_get(c, v, IBX_ARRAY_SIZE(v), r), IBX_OK);
	assert_int_equal(t.ncalls, 3);
	expect_call(&t, 0, p, 2 * pg, true);
	expect_call(&t, 1, p + 3 * pg, 2 * pg, true);
	expect_call(&t, 2, p + 20 * pg, 2 * pg, true);
	for (unsigned i = 0; i < IBX_ARRAY_SIZE(v); i++)
		expect_covers(r[i], &v[i]);
	ibx_rcache_ogr_put(c, r, IBX_ARRAY_SIZE(v));
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
	munmap(p, 32 * pg);
}

/* mmap 3 pages, unmap the middle one: the group over both sides fails for
 * real and is split at the hole. */
static void test_ogr_unmapped_gap(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache(&t, 1ul << 30, 1000, 1e6, 1.0);
	char *p = map_pages(3);
	struct iovec v[] = {iov(p + 100, 200), iov(p + 2 * pg + 300, 200)};
	ibx_rcache_region_t *r[2];
	ibx_rcache_stats_t s;

	assert_int_equal(munmap(p + pg, pg), 0);
	assert_int_equal(ibx_rcache_ogr_get(c, v, 2, r), IBX_OK);
	assert_int_equal(t.ncalls, 3);
	expect_call(&t, 0, p, 3 * pg, false); /* optimistic, refused */
	expect_call(&t, 1, p, pg, true);
	expect_call(&t, 2, p + 2 * pg, pg, true);
	expect_covers(r[0], &v[0]);
	expect_covers(r[1], &v[1]);
	assert_ptr_not_equal(r[0], r[1]);
	s = stats(c);
	assert_int_equal(s.ogr_splits, 1);
	assert_int_equal(s.reg_failures, 1);
	assert_int_equal(s.ogr_regions, 2);
	ibx_rcache_ogr_put(c, r, 2);
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
	munmap(p, 3 * pg);
}

/* Several holes, and a mapped but inaccessible (PROT_NONE) gap, which msync
 * cannot see: the bisection at the largest gap must find it. */
static void test_ogr_holes_and_prot_none(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache(&t, 1ul << 30, 1000, 1e9, 1.0);
	char *p = map_pages(12);
	struct iovec v[] = {iov(p, pg),		 iov(p + 2 * pg, pg), iov(p + 4 * pg, pg),
			    iov(p + 7 * pg, pg), iov(p + 9 * pg, pg), iov(p + 11 * pg, pg)};
	ibx_rcache_region_t *r[IBX_ARRAY_SIZE(v)];
	unsigned ok = 0;

	assert_int_equal(munmap(p + pg, pg), 0);		      /* hole */
	assert_int_equal(mprotect(p + 5 * pg, 2 * pg, PROT_NONE), 0); /* 2-page "gap" */
	assert_int_equal(munmap(p + 10 * pg, pg), 0);		      /* hole */
	assert_int_equal(ibx_rcache_ogr_get(c, v, IBX_ARRAY_SIZE(v), r), IBX_OK);
	for (unsigned i = 0; i < IBX_ARRAY_SIZE(v); i++)
		expect_covers(r[i], &v[i]);
	/* no region may span a hole or the PROT_NONE pages */
	for (unsigned i = 0; i < t.ncalls; i++) {
		uintptr_t s = t.calls[i].addr, e = s + t.calls[i].len;
		bool spans = (s < (uintptr_t)p + 2 * pg && e > (uintptr_t)p + pg) ||
			     (s < (uintptr_t)p + 7 * pg && e > (uintptr_t)p + 5 * pg) ||
			     (s < (uintptr_t)p + 11 * pg && e > (uintptr_t)p + 10 * pg);

		assert_int_equal(t.calls[i].ok, !spans);
		ok += t.calls[i].ok;
	}
	/* [0,1) | [2,5) | [7,10) would do; [2,5) and [7,10) straddle nothing */
	assert_int_equal(ok, 4);
	assert_ptr_equal(r[1], r[2]);
	assert_ptr_not_equal(r[2], r[3]);
	ibx_rcache_ogr_put(c, r, IBX_ARRAY_SIZE(v));
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
	munmap(p, 12 * pg);
}

static void test_ogr_bad_buffer_all_or_nothing(void **state)
{
	treg_t t;
	ibx_rcache_t *c = mkcache(&t, 1ul << 30, 1000, 1000, 1.0);
	char *p = map_pages(8);
	struct iovec v[] = {iov(p, 100), iov(p + 4 * pg, 100)};
	ibx_rcache_region_t *r[2] = {(void *)1, (void *)1};

	assert_int_equal(munmap(p + 4 * pg, pg), 0);
	assert_int_equal(ibx_rcache_ogr_get(c, v, 2, r), IBX_ERR_INVALID_PARAM);
	assert_null(r[0]);
	assert_null(r[1]);
	/* the good region was registered and stays cached, unreferenced */
	getput(c, p, 100);
	assert_int_equal(stats(c).hits, 1);
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);
	munmap(p, 8 * pg);
}

static void test_ogr_mixed_hits_and_disabled(void **state)
{
	treg_t t;
	ibx_rcache_params_t prm;
	ibx_rcache_t *c = mkcache(&t, 1ul << 30, 1000, 10000, 1.0);
	char *p = map_pages(16);
	struct iovec v[] = {iov(p, 100), iov(p + 2 * pg, 100), iov(p + 8 * pg, 100),
			    iov(p + 10 * pg, 100)};
	ibx_rcache_region_t *r[4], *held;

	/* [8,9) is already cached: only the rest is grouped */
	assert_int_equal(ibx_rcache_region_get(c, p + 8 * pg, pg, &held), IBX_OK);
	assert_int_equal(ibx_rcache_ogr_get(c, v, 4, r), IBX_OK);
	assert_ptr_equal(r[2], held);
	assert_int_equal(t.ncalls, 3);
	expect_call(&t, 1, p, 3 * pg, true);
	expect_call(&t, 2, p + 10 * pg, pg, true); /* 7-page gap: alone */
	ibx_rcache_ogr_put(c, r, 4);
	ibx_rcache_region_put(c, held);
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);

	/* IBX_OGR_ENABLE=n: buffer by buffer through the cache */
	memset(&t, 0, sizeof(t));
	ibx_rcache_params_default(&prm);
	prm.enable = true;
	prm.ogr = false;
	prm.max_bytes = 1ul << 30;
	prm.max_entries = 1000;
	assert_int_equal(ibx_rcache_create(&treg_ops, &t, &prm, &c), IBX_OK);
	assert_int_equal(ibx_rcache_ogr_get(c, v, 4, r), IBX_OK);
	assert_int_equal(t.ncalls, 4);
	for (unsigned i = 0; i < 4; i++)
		expect_call(&t, i, (char *)v[i].iov_base, pg, true);
	ibx_rcache_ogr_put(c, r, 4);
	ibx_rcache_destroy(c);
	assert_int_equal(t.live, 0);

	/* caching off (the [Wu03] §8.6 worst case): grouped, dropped at the put */
	memset(&t, 0, sizeof(t));
	prm.enable = false;
	prm.ogr = true;
	prm.cost.fixed_ns = 1e6;
	prm.cost.per_byte_ns = 1;
	assert_int_equal(ibx_rcache_create(&treg_ops, &t, &prm, &c), IBX_OK);
	assert_int_equal(ibx_rcache_ogr_get(c, v, 4, r), IBX_OK);
	assert_int_equal(t.ncalls, 1);
	expect_call(&t, 0, p, 11 * pg, true);
	ibx_rcache_ogr_put(c, r, 4);
	assert_int_equal(t.live, 0);
	ibx_rcache_destroy(c);
	munmap(p, 16 * pg);
}

static void test_cost_model_measured(void **state)
{
	treg_t t;
	ibx_rcache_params_t prm;
	ibx_rcache_t *c;
	ibx_rcache_cost_t cost;

	memset(&t, 0, sizeof(t));
	ibx_rcache_params_default(&prm);
	prm.ogr = true; /* cost zero: measured with the registrar */
	assert_int_equal(ibx_rcache_create(&treg_ops, &t, &prm, &c), IBX_OK);
	cost = ibx_rcache_cost(c);
	assert_true(cost.fixed_ns > 0);
	assert_true(cost.per_byte_ns > 0);
	assert_true(t.nreg >= 4);
	assert_int_equal(t.live, 0);
	assert_int_equal(stats(c).regs, 0); /* measuring is not caching */
	ibx_rcache_destroy(c);
}

/* ---- the whole suite again under IBX_RCACHE_MEMHOOKS=interpose ------------ */

static void test_interpose_mode(void **state)
{
	char exe[4096], out[] = "/tmp/test_reg_cache_interpose_XXXXXX";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int fd, status;
	pid_t pid;

	if (getenv("IBX_TEST_CHILD"))
		skip();
	assert_true(n > 0);
	exe[n] = '\0';
	fd = mkstemp(out);
	assert_true(fd >= 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("IBX_RCACHE_MEMHOOKS", "interpose", 1);
		setenv("IBX_TEST_CHILD", "1", 1);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char buf[4096];
		ssize_t k;

		lseek(fd, 0, SEEK_SET);
		while ((k = read(fd, buf, sizeof(buf))) > 0)
			fwrite(buf, 1, (size_t)k, stderr);
	}
	close(fd);
	unlink(out);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_mode_is_expected(void **state)
{
	const char *want = getenv("IBX_RCACHE_MEMHOOKS");

	if (!ibx_rcache_config()->RCACHE_ENABLE) {
		assert_string_equal(ibx_rcache_memhooks_mode(), "none");
		return;
	}
	if (want && !strcmp(want, "interpose")) {
		assert_string_equal(ibx_rcache_memhooks_mode(), "interpose");
		return;
	}
#if defined(__x86_64__)
	assert_string_equal(ibx_rcache_memhooks_mode(), "patch");
#else
	assert_string_equal(ibx_rcache_memhooks_mode(), "interpose");
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mode_is_expected),
	    cmocka_unit_test(test_itree_against_brute_force),
	    cmocka_unit_test(test_hit_miss_refcount),
	    cmocka_unit_test(test_merge_overlapping),
	    cmocka_unit_test(test_merge_adjacent_rule),
	    cmocka_unit_test(test_lru_entry_limit),
	    cmocka_unit_test(test_lru_byte_limit),
	    cmocka_unit_test(test_no_cache_mode),
	    cmocka_unit_test(test_destroy_with_references),
	    cmocka_unit_test(test_invalidate_munmap),
	    cmocka_unit_test(test_unrelated_unmap_keeps_regions),
	    cmocka_unit_test(test_invalidate_mremap),
	    cmocka_unit_test(test_invalidate_madvise),
	    cmocka_unit_test(test_invalidate_mmap_fixed),
	    cmocka_unit_test(test_invalidate_sbrk),
	    cmocka_unit_test(test_libc_internal_munmap),
	    cmocka_unit_test(test_free_malloc_reuse),
	    cmocka_unit_test(test_heap_trim),
	    cmocka_unit_test(test_invalidation_ring_overflow),
	    cmocka_unit_test(test_threads),
	    cmocka_unit_test(test_fork_child),
	    cmocka_unit_test(test_ogr_grouping),
	    cmocka_unit_test(test_ogr_expensive_bytes),
	    cmocka_unit_test(test_ogr_unmapped_gap),
	    cmocka_unit_test(test_ogr_holes_and_prot_none),
	    cmocka_unit_test(test_ogr_bad_buffer_all_or_nothing),
	    cmocka_unit_test(test_ogr_mixed_hits_and_disabled),
	    cmocka_unit_test(test_cost_model_measured),
	    cmocka_unit_test(test_interpose_mode),
	};
	uint64_t e = 0;
	char *probe;

	pg = (size_t)sysconf(_SC_PAGESIZE);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	probe = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (probe != MAP_FAILED) {
		probe[0] = 1;
		read_pfns((uintptr_t)probe, pg, &e);
		have_pfn = e != 0;
		munmap(probe, pg);
	}
	if (!have_pfn)
		fprintf(stderr, "note: /proc/self/pagemap shows no frame numbers (not root?):"
				" the stale-page oracle is off\n");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
