/*
 * regcache.c — `ibtest regcache [-d DEV] [-n ITERS] [--json]`: what memory
 * registration costs on a real verbs device, and what the registration
 * cache and Optimistic Group Registration (core/reg_cache) save.
 *
 *   1. the cost model the cache measures at creation (fixed + per byte,
 *      for one ibv_reg_mr + ibv_dereg_mr);
 *   2. a cache hit (region_get + region_put of a cached buffer) against a
 *      miss (the same with caching off: ibv_reg_mr + ibv_dereg_mr) for a
 *      few sizes;
 *   3. the worst case of buffer usage of [Wu03] §8.6: the vector of x int
 *      columns out of a 128 x 4096 int array (128 blocks of 4x bytes, 16 KiB
 *      apart), registered and deregistered afresh for every message, by
 *        per block   one registration per row (128),
 *        whole span  one registration from the first to the last row,
 *        OGR         ibx_rcache_ogr_get: the cost model decides the groups,
 *      and, for reference, OGR with caching on (every block a hit);
 *   4. the same vector when the gaps have holes (a page unmapped after every
 *      16th row, as happens when the buffers are separate allocations): the
 *      whole-span registration fails with EFAULT, OGR splits at the holes.
 *
 * Needs a device (in this project: tests/rxe/run-in-vm.sh -- ibtest
 * regcache). Under emulation (Soft-RoCE) absolute times are meaningless;
 * compare the columns with each other.
 */
#include "ibtest.h"

#include "reg_cache/reg_cache.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define ROWS	   128
#define ROW_STRIDE (4096 * 4) /* one row of the 128 x 4096 int array */
#define HOLE_EVERY 16

typedef struct rc_opts {
	const char *dev;
	int iters;
	bool json;
} rc_opts_t;

/* The table goes to stdout, or to stderr when stdout carries JSON. */
static FILE *tab;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ibtest regcache [-d DEV] [-n ITERS] [--json]\n"
		"  Cost of memory registration on a verbs device: cache hit vs. miss, and\n"
		"  Optimistic Group Registration vs. per-block and whole-span registration\n"
		"  of the [Wu03] §8.6 vector (128 rows x N int columns of a 128x4096 int array).\n"
		"  -d, --dev DEV     verbs device (default: the first one)\n"
		"  -n, --iters N     messages per vector measurement (default 20; hits x500)\n"
		"      --json        results as one JSON document on stdout (table on stderr)\n");
}

static int parse(int argc, char **argv, rc_opts_t *o)
{
	enum { OPT_JSON = 256 };
	static const struct option lopts[] = {
	    {"dev", required_argument, NULL, 'd'},
	    {"iters", required_argument, NULL, 'n'},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int opt;

	o->dev = NULL;
	o->iters = 20;
	o->json = false;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "d:n:h", lopts, NULL)) != -1) {
		switch (opt) {
		case 'd': o->dev = optarg; break;
		case 'n':
			o->iters = atoi(optarg);
			if (o->iters < 1) {
				fprintf(stderr, "ibtest regcache: -n needs a positive count\n");
				return -1;
			}
			break;
		case OPT_JSON: o->json = true; break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -1;
		}
	}
	return 0;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		fprintf(stderr,
			"ibtest regcache: no verbs device (on a host without RDMA: "
			"tests/rxe/run-in-vm.sh -- %s/bin/ibtest regcache)\n",
			getenv("BUILD") ? getenv("BUILD") : "build");
		if (list)
			ibv_free_device_list(list);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		if (name && strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			fprintf(stderr, "ibtest regcache: ibv_open_device(%s) failed: %s\n",
				ibv_get_device_name(list[i]), strerror(errno));
		break;
	}
	if (!ctx && name)
		fprintf(stderr, "ibtest regcache: no device named %s\n", name);
	ibv_free_device_list(list);
	return ctx;
}

static ibx_rcache_t *mkcache(struct ibv_pd *pd, bool enable, ibx_rcache_cost_t cost)
{
	ibx_rcache_params_t p;
	ibx_rcache_t *c = NULL;
	ibx_status_t st;

	ibx_rcache_params_default(&p);
	p.enable = enable;
	p.ogr = true;
	p.max_bytes = 1ul << 32;
	p.max_entries = 1 << 16;
	p.cost = cost;
	st = ibx_rcache_create_verbs(pd, &p, &c);
	if (st != IBX_OK) {
		fprintf(stderr, "ibtest regcache: creating the cache failed: %s\n",
			ibx_status_str(st));
		return NULL;
	}
	return c;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), dbl_cmp);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* get + put of [buf, buf + len) @iters times; median microseconds, or a
 * negative value if a registration failed. */
static double time_get_put(ibx_rcache_t *c, char *buf, size_t len, int iters)
{
	double *t = calloc((size_t)iters, sizeof(*t)), m;
	ibx_rcache_region_t *r;

	if (!t)
		return -1;
	for (int i = 0; i < iters; i++) {
		uint64_t t0 = ibx_time_ns();

		if (ibx_rcache_region_get(c, buf, len, &r) != IBX_OK) {
			free(t);
			return -1;
		}
		ibx_rcache_region_put(c, r);
		t[i] = (double)(ibx_time_ns() - t0) / 1e3;
	}
	m = median(t, iters);
	free(t);
	return m;
}

enum { S_BLOCK, S_SPAN, S_OGR, S_OGR_CACHED, S_COUNT };

/* One message's registration + deregistration by strategy @s; returns
 * microseconds, or -errno-ish (negative) on failure. */
static double one_message(ibx_rcache_t *c, int s, const struct iovec *v, ibx_rcache_region_t **r)
{
	uint64_t t0 = ibx_time_ns();
	ibx_status_t st = IBX_OK;
	int i;

	switch (s) {
	case S_BLOCK:
		for (i = 0; i < ROWS && st == IBX_OK; i++)
			st = ibx_rcache_region_get(c, v[i].iov_base, v[i].iov_len, &r[i]);
		if (st != IBX_OK)
			i--;
		while (i-- > 0)
			ibx_rcache_region_put(c, r[i]);
		break;
	case S_SPAN:
		st = ibx_rcache_region_get(
		    c, v[0].iov_base,
		    (size_t)((char *)v[ROWS - 1].iov_base - (char *)v[0].iov_base) +
			v[ROWS - 1].iov_len,
		    &r[0]);
		if (st == IBX_OK)
			ibx_rcache_region_put(c, r[0]);
		break;
	default:
		st = ibx_rcache_ogr_get(c, v, ROWS, r);
		if (st == IBX_OK)
			ibx_rcache_ogr_put(c, r, ROWS);
		break;
	}
	if (st != IBX_OK)
		return -1;
	return (double)(ibx_time_ns() - t0) / 1e3;
}

typedef struct vec_result {
	int columns;
	bool holes;
	double us[S_COUNT]; /* < 0: failed */
	double ogr_regions; /* per message */
} vec_result_t;

static int run_vector(ibx_rcache_t *nocache, ibx_rcache_t *cached, char *arr, int columns,
		      bool holes, int iters, vec_result_t *res)
{
	struct iovec v[ROWS];
	ibx_rcache_region_t *r[ROWS];
	double *t = calloc((size_t)iters, sizeof(*t));
	ibx_rcache_stats_t s0, s1;

	if (!t)
		return -1;
	for (int i = 0; i < ROWS; i++)
		v[i] = (struct iovec){arr + (size_t)i * ROW_STRIDE, (size_t)columns * 4};
	res->columns = columns;
	res->holes = holes;
	for (int s = 0; s < S_COUNT; s++) {
		ibx_rcache_t *c = s == S_OGR_CACHED ? cached : nocache;
		bool failed = false;

		if (s == S_OGR)
			ibx_rcache_stats_get(c, &s0);
		if (s == S_OGR_CACHED && one_message(c, s, v, r) < 0) /* warm the cache */
			failed = true;
		/* The whole span over holes is expected to fail (EFAULT); the
		 * table says so, the log need not, once per column count. */
		int saved_log = ibx_log_level_cur;
		if (holes && s == S_SPAN)
			ibx_log_level_cur = -1;
		for (int it = 0; it < iters && !failed; it++) {
			t[it] = one_message(c, s, v, r);
			failed = t[it] < 0;
		}
		ibx_log_level_cur = saved_log;
		res->us[s] = failed ? -1 : median(t, iters);
		if (s == S_OGR) {
			ibx_rcache_stats_get(c, &s1);
			res->ogr_regions = (double)(s1.ogr_regions - s0.ogr_regions) / iters;
		}
	}
	ibx_rcache_flush(cached);
	free(t);
	return 0;
}

static void cell(double us)
{
	if (us < 0)
		fprintf(tab, " %12s", "fails");
	else
		fprintf(tab, " %12.1f", us);
}

static void json_num(FILE *f, const char *key, double v, bool comma)
{
	if (v < 0)
		fprintf(f, "\"%s\": null%s", key, comma ? ", " : "");
	else
		fprintf(f, "\"%s\": %.3f%s", key, v, comma ? ", " : "");
}

static int regcache_main(int argc, char **argv)
{
	static const int columns[] = {1, 4, 16, 64, 256, 512, 1024, 2048};
	static const size_t miss_sizes[] = {4096, 65536, 1 << 20};
	enum { NCOL = IBX_ARRAY_SIZE(columns), NMISS = IBX_ARRAY_SIZE(miss_sizes) };
	rc_opts_t o;
	struct ibv_context *ctx;
	struct ibv_pd *pd = NULL;
	ibx_rcache_t *cached = NULL, *nocache = NULL;
	ibx_rcache_cost_t cost, none = {0, 0};
	double hit_us[NMISS], miss_us[NMISS];
	vec_result_t vec[2][NCOL];
	size_t arr_len = (size_t)ROWS * ROW_STRIDE, pg = (size_t)sysconf(_SC_PAGESIZE);
	char *arr = MAP_FAILED;
	int rc = 1, prc;

	prc = parse(argc, argv, &o);
	if (prc)
		return prc > 0 ? 0 : 2;
	tab = o.json ? stderr : stdout;
	ctx = open_dev(o.dev);
	if (!ctx)
		return 1;
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		fprintf(stderr, "ibtest regcache: ibv_alloc_pd failed: %s\n", strerror(errno));
		goto out;
	}
	cached = mkcache(pd, true, none); /* measures the cost model */
	if (!cached)
		goto out;
	cost = ibx_rcache_cost(cached);
	nocache = mkcache(pd, false, cost);
	if (!nocache)
		goto out;
	arr = mmap(NULL, arr_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arr == MAP_FAILED) {
		fprintf(stderr, "ibtest regcache: mmap of %zu bytes failed: %s\n", arr_len,
			strerror(errno));
		goto out;
	}
	memset(arr, 1, arr_len);

	fprintf(tab, "device %s, memory hooks: %s\n", ibv_get_device_name(ctx->device),
		ibx_rcache_memhooks_mode());
	fprintf(tab,
		"cost model (reg + dereg): %.1f us + %.4f ns/B (%.2f us per 4 KiB page);"
		" OGR joins gaps below %.0f KiB\n",
		cost.fixed_ns / 1e3, cost.per_byte_ns, cost.per_byte_ns * 4096 / 1e3,
		cost.fixed_ns / cost.per_byte_ns / 1024);

	/* hit vs miss */
	for (size_t i = 0; i < NMISS; i++) {
		hit_us[i] = time_get_put(cached, arr, miss_sizes[i], 500 * o.iters);
		miss_us[i] = time_get_put(nocache, arr, miss_sizes[i], 5 * o.iters);
		ibx_rcache_flush(cached);
	}
	fprintf(tab, "\n%10s %12s %14s\n", "bytes", "hit[usec]", "miss[usec]");
	for (size_t i = 0; i < NMISS; i++)
		fprintf(tab, "%10zu %12.3f %14.1f\n", miss_sizes[i], hit_us[i], miss_us[i]);

	/* §8.6: the vector, worst-case buffer usage */
	for (int h = 0; h < 2; h++) {
		if (h == 1) {
			/* the last page of every 16th row's stride: always in a gap */
			for (int row = HOLE_EVERY - 1; row < ROWS - 1; row += HOLE_EVERY)
				munmap(arr + (size_t)(row + 1) * ROW_STRIDE - pg, pg);
		}
		fprintf(tab,
			"\n128 x N int columns of a 128x4096 int array%s, registered per message"
			" [usec]\n",
			h ? ", with a hole after every 16th row" : "");
		fprintf(tab, "%8s %10s %12s %12s %12s %12s %12s\n", "columns", "block[B]",
			"per_block", "whole_span", "OGR", "OGR_regions", "OGR_cached");
		for (int k = 0; k < (int)NCOL; k++) {
			vec_result_t *res = &vec[h][k];

			if (run_vector(nocache, cached, arr, columns[k], h, o.iters, res))
				goto out;
			fprintf(tab, "%8d %10d", columns[k], columns[k] * 4);
			cell(res->us[S_BLOCK]);
			cell(res->us[S_SPAN]);
			cell(res->us[S_OGR]);
			fprintf(tab, " %12.1f", res->ogr_regions);
			cell(res->us[S_OGR_CACHED]);
			fprintf(tab, "\n");
		}
	}

	if (o.json) {
		printf("{\"test\": \"regcache\", \"device\": \"%s\", \"memhooks\": \"%s\", ",
		       ibv_get_device_name(ctx->device), ibx_rcache_memhooks_mode());
		printf("\"cost\": {\"fixed_ns\": %.1f, \"per_byte_ns\": %.6f}, \"hit_miss\": [",
		       cost.fixed_ns, cost.per_byte_ns);
		for (size_t i = 0; i < NMISS; i++) {
			printf("%s{\"bytes\": %zu, ", i ? ", " : "", miss_sizes[i]);
			json_num(stdout, "hit_usec", hit_us[i], true);
			json_num(stdout, "miss_usec", miss_us[i], false);
			printf("}");
		}
		printf("], \"vector\": [");
		for (int h = 0; h < 2; h++) {
			for (int k = 0; k < (int)NCOL; k++) {
				const vec_result_t *res = &vec[h][k];

				printf("%s{\"columns\": %d, \"block_bytes\": %d, \"holes\": %s, ",
				       h || k ? ", " : "", res->columns, res->columns * 4,
				       res->holes ? "true" : "false");
				json_num(stdout, "per_block_usec", res->us[S_BLOCK], true);
				json_num(stdout, "whole_span_usec", res->us[S_SPAN], true);
				json_num(stdout, "ogr_usec", res->us[S_OGR], true);
				json_num(stdout, "ogr_regions", res->ogr_regions, true);
				json_num(stdout, "ogr_cached_usec", res->us[S_OGR_CACHED], false);
				printf("}");
			}
		}
		printf("]}\n");
	}
	rc = 0;
out:
	if (arr != MAP_FAILED)
		munmap(arr, arr_len);
	ibx_rcache_destroy(nocache);
	ibx_rcache_destroy(cached);
	if (pd)
		ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return rc;
}

IBTEST_COMMAND("regcache",
	       "registration cost on a verbs device: cache hit vs. miss, OGR vs. per-block and"
	       " whole-span ([Wu03] §8.6)",
	       regcache_main);
