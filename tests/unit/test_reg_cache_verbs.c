/*
 * test_reg_cache_verbs.c — core/reg_cache over the real ibv_reg_mr, on the
 * first verbs device. Every test skips when there is none (the host); in
 * the Soft-RoCE VM (tests/rxe) they run.
 *
 * What the NIC sees is checked by the NIC: an RC queue pair connected to
 * itself RDMA-READs through the rkey the cache handed out, so a stale
 * registration shows up as old bytes, not only as a counter. The first test
 * shows the hazard is real on this device: an MR kept across munmap + mmap
 * at the same address still reads the old pages.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <infiniband/verbs.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

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

static size_t pg;

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	char *sink; /* RDMA READ destination */
	size_t sink_len;
	struct ibv_mr *sink_mr;
} dev;

/* ---- a queue pair connected to itself ------------------------------------ */

static int find_gid(struct ibv_context *ctx, int port, union ibv_gid *gid)
{
	struct ibv_port_attr pa;
	int best = -1;

	if (ibv_query_port(ctx, (uint8_t)port, &pa))
		return -1;
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid g;
		static const uint8_t zero[16];

		if (ibv_query_gid(ctx, (uint8_t)port, i, &g) || !memcmp(g.raw, zero, 16))
			continue;
		/* prefer the IPv4-mapped (RoCEv2) GID, as core/qp does */
		if (g.raw[10] == 0xff && g.raw[11] == 0xff) {
			*gid = g;
			return i;
		}
		if (best < 0) {
			*gid = g;
			best = i;
		}
	}
	return best;
}

static int loop_qp_create(void)
{
	struct ibv_qp_init_attr ia = {0};
	struct ibv_qp_attr a;
	union ibv_gid gid;
	int gidx;

	dev.cq = ibv_create_cq(dev.ctx, 16, NULL, NULL, 0);
	if (!dev.cq)
		return -1;
	ia.send_cq = ia.recv_cq = dev.cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	dev.qp = ibv_create_qp(dev.pd, &ia);
	if (!dev.qp)
		return -1;
	gidx = find_gid(dev.ctx, 1, &gid);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(dev.qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dev.qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = 1;
	if (gidx >= 0) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = gid;
		a.ah_attr.grh.sgid_index = (uint8_t)gidx;
		a.ah_attr.grh.hop_limit = 64;
	} else {
		struct ibv_port_attr pa;

		if (ibv_query_port(dev.ctx, 1, &pa))
			return -1;
		a.ah_attr.dlid = pa.lid;
	}
	if (ibv_modify_qp(dev.qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(dev.qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* RDMA-READs @len bytes at @addr through @rkey into dev.sink. Returns the
 * completion status (IBV_WC_SUCCESS = 0). */
static int rdma_read(const void *addr, uint32_t rkey, size_t len)
{
	struct ibv_sge sge = {(uintptr_t)dev.sink, (uint32_t)len, dev.sink_mr->lkey};
	struct ibv_send_wr wr = {0}, *bad;
	struct ibv_wc wc;
	time_t t0 = time(NULL);
	int n;

	assert_true(len <= dev.sink_len);
	memset(dev.sink, 0, len);
	wr.opcode = IBV_WR_RDMA_READ;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)addr;
	wr.wr.rdma.rkey = rkey;
	assert_int_equal(ibv_post_send(dev.qp, &wr, &bad), 0);
	while ((n = ibv_poll_cq(dev.cq, 1, &wc)) == 0)
		assert_true(time(NULL) - t0 < 30);
	assert_int_equal(n, 1);
	if (wc.status != IBV_WC_SUCCESS)
		fprintf(stderr, "RDMA READ: %s\n", ibv_wc_status_str(wc.status));
	return (int)wc.status;
}

/* Does the NIC, through @region, see @len bytes of @c at @addr? */
static bool nic_sees(const ibx_rcache_region_t *region, const void *addr, size_t len, char c)
{
	if (rdma_read(addr, ibx_rcache_region_rkey(region), len) != IBV_WC_SUCCESS)
		return false;
	for (size_t i = 0; i < len; i++)
		if (dev.sink[i] != c)
			return false;
	return true;
}

static int setup(void **state)
{
	struct ibv_device **list;
	int n = 0;

	pg = (size_t)sysconf(_SC_PAGESIZE);
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		if (list)
			ibv_free_device_list(list);
		return 0; /* every test skips */
	}
	dev.ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!dev.ctx)
		return -1;
	dev.pd = ibv_alloc_pd(dev.ctx);
	if (!dev.pd)
		return -1;
	/* before any registration of ours, as the cache would do it */
	dev.sink_len = 8 << 20;
	dev.sink =
	    mmap(NULL, dev.sink_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (dev.sink == MAP_FAILED)
		return -1;
	if (loop_qp_create()) {
		fprintf(stderr, "loopback QP set-up failed: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	if (dev.sink_mr)
		ibv_dereg_mr(dev.sink_mr);
	if (dev.qp)
		ibv_destroy_qp(dev.qp);
	if (dev.cq)
		ibv_destroy_cq(dev.cq);
	if (dev.pd)
		ibv_dealloc_pd(dev.pd);
	if (dev.ctx)
		ibv_close_device(dev.ctx);
	return 0;
}

static void need_device(void)
{
	if (!dev.ctx)
		skip();
	if (!dev.sink_mr) {
		dev.sink_mr = ibv_reg_mr(dev.pd, dev.sink, dev.sink_len, IBV_ACCESS_LOCAL_WRITE);
		assert_non_null(dev.sink_mr);
	}
}

static ibx_rcache_t *mkcache(size_t max_entries, double fixed_ns, double per_byte_ns)
{
	ibx_rcache_params_t p;
	ibx_rcache_t *c = NULL;

	ibx_rcache_params_default(&p);
	p.enable = true;
	p.ogr = true;
	p.max_bytes = 1ul << 30;
	p.max_entries = max_entries;
	p.cost.fixed_ns = fixed_ns;
	p.cost.per_byte_ns = per_byte_ns;
	assert_int_equal(ibx_rcache_create_verbs(dev.pd, &p, &c), IBX_OK);
	return c;
}

static ibx_rcache_stats_t stats(ibx_rcache_t *c)
{
	ibx_rcache_stats_t s;

	ibx_rcache_stats_get(c, &s);
	return s;
}

static char *map_pages(size_t n, char fill)
{
	char *p = mmap(NULL, n * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	memset(p, fill, n * pg);
	return p;
}

/* ---- tests ----------------------------------------------------------------- */

/* Without a cache: an MR kept across munmap + mmap at the same address
 * reads the old pages. This is what the cache must never hand out. */
static void test_stale_mr_hazard_is_real(void **state)
{
	struct ibv_mr *mr;
	char *p, *q;

	need_device();
	p = map_pages(4, 'A');
	mr = ibv_reg_mr(dev.pd, p, 4 * pg, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	assert_non_null(mr);
	assert_int_equal(rdma_read(p, mr->rkey, 4 * pg), IBV_WC_SUCCESS);
	assert_int_equal(dev.sink[0], 'A');
	assert_int_equal(munmap(p, 4 * pg), 0);
	q = mmap(p, 4 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	assert_ptr_equal(q, p);
	memset(q, 'B', 4 * pg);
	assert_int_equal(rdma_read(q, mr->rkey, 4 * pg), IBV_WC_SUCCESS);
	assert_int_equal(dev.sink[0], 'A'); /* the NIC still has the old pages */
	ibv_dereg_mr(mr);
	munmap(q, 4 * pg);
}

static void test_hit_miss(void **state)
{
	ibx_rcache_t *c;
	ibx_rcache_region_t *a, *b;
	struct ibv_mr *mr;
	char *p;

	need_device();
	c = mkcache(100, 10000, 0.1);
	p = map_pages(8, 'h');
	assert_int_equal(ibx_rcache_region_get(c, p + 10, 3 * pg, &a), IBX_OK);
	mr = ibx_rcache_region_handle(a);
	assert_ptr_equal(mr->addr, p);
	assert_int_equal(mr->length, 4 * pg);
	assert_int_equal(ibx_rcache_region_lkey(a), mr->lkey);
	assert_int_equal(ibx_rcache_region_rkey(a), mr->rkey);
	assert_true(nic_sees(a, p + 10, 3 * pg, 'h'));
	ibx_rcache_region_put(c, a);
	assert_int_equal(ibx_rcache_region_get(c, p + pg, pg, &b), IBX_OK);
	assert_ptr_equal(a, b);
	assert_int_equal(stats(c).hits, 1);
	assert_int_equal(stats(c).regs, 1);
	ibx_rcache_region_put(c, b);
	ibx_rcache_destroy(c);
	munmap(p, 8 * pg);
}

static void test_invalidate_munmap_remap(void **state)
{
	ibx_rcache_t *c;
	ibx_rcache_region_t *r;
	char *p, *q;

	need_device();
	c = mkcache(100, 10000, 0.1);
	p = map_pages(4, 'A');
	assert_int_equal(ibx_rcache_region_get(c, p, 4 * pg, &r), IBX_OK);
	assert_true(nic_sees(r, p, 4 * pg, 'A'));
	ibx_rcache_region_put(c, r);
	assert_int_equal(munmap(p, 4 * pg), 0);
	q = mmap(p, 4 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	assert_ptr_equal(q, p);
	memset(q, 'B', 4 * pg);
	assert_int_equal(ibx_rcache_region_get(c, q, 4 * pg, &r), IBX_OK);
	assert_int_equal(stats(c).invalidations, 1);
	assert_int_equal(stats(c).misses, 2);
	assert_int_equal(stats(c).regs, 2);
	assert_int_equal(stats(c).deregs, 1);
	assert_true(nic_sees(r, q, 4 * pg, 'B'));
	ibx_rcache_region_put(c, r);
	ibx_rcache_destroy(c);
	munmap(q, 4 * pg);
}

static void test_invalidate_madvise_mremap(void **state)
{
	ibx_rcache_t *c;
	ibx_rcache_region_t *r;
	char *p, *q;

	need_device();
	c = mkcache(100, 10000, 0.1);
	p = map_pages(4, 'A');
	assert_int_equal(ibx_rcache_region_get(c, p, 4 * pg, &r), IBX_OK);
	ibx_rcache_region_put(c, r);
	assert_int_equal(madvise(p, 4 * pg, MADV_DONTNEED), 0);
	memset(p, 'C', 4 * pg); /* fresh zero pages, now written */
	assert_int_equal(ibx_rcache_region_get(c, p, 4 * pg, &r), IBX_OK);
	assert_int_equal(stats(c).invalidations, 1);
	assert_true(nic_sees(r, p, 4 * pg, 'C'));
	ibx_rcache_region_put(c, r);

	q = mremap(p, 4 * pg, 256 * pg, MREMAP_MAYMOVE);
	assert_true(q != MAP_FAILED);
	memset(q, 'D', 256 * pg);
	assert_int_equal(ibx_rcache_region_get(c, q, 256 * pg, &r), IBX_OK);
	assert_int_equal(stats(c).invalidations, 2);
	assert_true(nic_sees(r, q, 256 * pg, 'D'));
	ibx_rcache_region_put(c, r);
	ibx_rcache_destroy(c);
	munmap(q, 256 * pg);
}

/* free + malloc of a large block at the same address, the NIC reading it. */
static void test_free_malloc_reuse(void **state)
{
	const size_t sz = 4 << 20;
	ibx_rcache_t *c;
	ibx_rcache_region_t *r;
	char *a, *b;

	need_device();
	if (UNDER_ASAN)
		skip();
	if (!strcmp(ibx_rcache_memhooks_mode(), "patch"))
		mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	c = mkcache(100, 10000, 0.1);
	a = malloc(sz);
	assert_non_null(a);
	memset(a, 'A', sz);
	assert_int_equal(ibx_rcache_region_get(c, a, sz, &r), IBX_OK);
	assert_true(nic_sees(r, a, sz, 'A'));
	ibx_rcache_region_put(c, r);
	free(a);
	b = malloc(sz);
	assert_non_null(b);
	memset(b, 'B', sz);
	if (b != a) {
		free(b);
		ibx_rcache_destroy(c);
		skip();
	}
	assert_int_equal(ibx_rcache_region_get(c, b, sz, &r), IBX_OK);
	assert_true(nic_sees(r, b, sz, 'B'));
	ibx_rcache_region_put(c, r);
	free(b);
	ibx_rcache_destroy(c);
}

static void test_lru_eviction(void **state)
{
	ibx_rcache_t *c;
	ibx_rcache_region_t *r;
	char *p;

	need_device();
	c = mkcache(2, 10000, 0.1);
	p = map_pages(8, 'e');
	for (int i = 0; i < 4; i++) {
		assert_int_equal(ibx_rcache_region_get(c, p + 2 * i * pg, pg, &r), IBX_OK);
		ibx_rcache_region_put(c, r);
	}
	assert_int_equal(stats(c).evictions, 2);
	assert_int_equal(stats(c).deregs, 2);
	assert_int_equal(stats(c).cur_entries, 2);
	ibx_rcache_destroy(c);
	munmap(p, 8 * pg);
}

/* mmap 3 pages, unmap the middle: ibv_reg_mr over the span really fails
 * with EFAULT, and OGR splits instead of failing. */
static void test_ogr_unmapped_gap(void **state)
{
	ibx_rcache_t *c;
	ibx_rcache_region_t *r[2];
	struct ibv_mr *mr;
	struct iovec v[2];
	ibx_rcache_stats_t s;
	char *p;

	need_device();
	p = map_pages(3, 'g');
	assert_int_equal(munmap(p + pg, pg), 0);
	errno = 0;
	mr = ibv_reg_mr(dev.pd, p, 3 * pg, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	assert_null(mr);
	assert_int_equal(errno, EFAULT);

	c = mkcache(100, 1e9, 0.1); /* any gap is worth joining */
	v[0] = (struct iovec){p + 100, 200};
	v[1] = (struct iovec){p + 2 * pg + 300, 200};
	assert_int_equal(ibx_rcache_ogr_get(c, v, 2, r), IBX_OK);
	s = stats(c);
	assert_int_equal(s.reg_failures, 1);
	assert_int_equal(s.ogr_splits, 1);
	assert_int_equal(s.ogr_regions, 2);
	assert_ptr_not_equal(r[0], r[1]);
	assert_true(nic_sees(r[0], v[0].iov_base, v[0].iov_len, 'g'));
	assert_true(nic_sees(r[1], v[1].iov_base, v[1].iov_len, 'g'));
	ibx_rcache_ogr_put(c, r, 2);
	ibx_rcache_destroy(c);
	munmap(p, 3 * pg);
}

/* The [Wu03] §8.6 vector: 128 rows of 16 bytes out of a 128 x 4096-int array. */
static void test_ogr_vector(void **state)
{
	enum { ROWS = 128, STRIDE = 4096 * 4, BLOCK = 16 };
	ibx_rcache_t *c;
	ibx_rcache_region_t *r[ROWS];
	struct iovec v[ROWS];
	ibx_rcache_cost_t cost;
	char *p;
	size_t nregions;

	need_device();
	c = mkcache(1000, 0, 0); /* measured */
	cost = ibx_rcache_cost(c);
	assert_true(cost.fixed_ns > 0 && cost.per_byte_ns > 0);
	p = map_pages(ROWS * STRIDE / pg, 'v');
	for (int i = 0; i < ROWS; i++)
		v[i] = (struct iovec){p + (size_t)i * STRIDE, BLOCK};
	assert_int_equal(ibx_rcache_ogr_get(c, v, ROWS, r), IBX_OK);
	nregions = stats(c).ogr_regions;
	/* the model decides; whatever it decided must be consistent with it */
	if ((double)(STRIDE - pg) * cost.per_byte_ns < cost.fixed_ns)
		assert_int_equal(nregions, 1);
	else
		assert_int_equal(nregions, ROWS);
	for (int i = 0; i < ROWS; i += 37)
		assert_true(nic_sees(r[i], v[i].iov_base, BLOCK, 'v'));
	fprintf(stderr, "cost model %.0f ns + %.4f ns/B: %zu region(s) for 128 rows\n",
		cost.fixed_ns, cost.per_byte_ns, nregions);
	ibx_rcache_ogr_put(c, r, ROWS);
	ibx_rcache_destroy(c);
	munmap(p, ROWS * STRIDE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stale_mr_hazard_is_real),
	    cmocka_unit_test(test_hit_miss),
	    cmocka_unit_test(test_invalidate_munmap_remap),
	    cmocka_unit_test(test_invalidate_madvise_mremap),
	    cmocka_unit_test(test_free_malloc_reuse),
	    cmocka_unit_test(test_lru_eviction),
	    cmocka_unit_test(test_ogr_unmapped_gap),
	    cmocka_unit_test(test_ogr_vector),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
