/*
 * dt_pack.c — `ibtest dt_pack`: packing speed of the datatype engine
 * (core/dtype_rdma) against memcpy of the same number of bytes.
 *
 * For each block size B the type is a vector of fixed blocks of B bytes
 * with a stride of 2B (half the source is data, as in a matrix column of
 * structs); one call packs the whole of it. memcpy copies the same number of
 * packed bytes from a contiguous buffer. The ratio pack/memcpy is what the
 * specialised leaf kernels are for: it should approach 1 from 64-byte
 * blocks up (below that the work per byte is dominated by the per-block
 * step, and half of every source cache line is skipped data).
 *
 *   ibtest dt_pack [-s BYTES] [-t SECONDS] [--json]
 */
#include "ibtest.h"

#include "dtype_rdma/dtype.h"
#include "ibx_int.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const int64_t dt_pack_blocks[] = { 4, 8, 16, 64, 256, 4096 };

typedef struct dt_pack_row {
	int64_t block, nblocks;
	double pack_gbps, memcpy_gbps;
} dt_pack_row_t;

static volatile uint8_t dt_pack_sink;

/* best rate over @trials runs of @iters calls, in GB/s */
static double dt_pack_rate(const ibx_dt_t *dt, const void *src, const void *csrc, void *dst,
			   int64_t bytes, int64_t iters, int trials, bool use_memcpy)
{
	double best = 0;

	for (int t = 0; t < trials; t++) {
		double t0 = ibx_time_sec(), dt_s;

		for (int64_t i = 0; i < iters; i++) {
			if (use_memcpy)
				memcpy(dst, csrc, (size_t)bytes);
			else if (ibx_dt_pack(dt, 1, src, 0, bytes, dst) != IBX_OK)
				return -1;
			dt_pack_sink ^= ((uint8_t *)dst)[i % bytes];
		}
		dt_s = ibx_time_sec() - t0;
		if (dt_s > 0 && (double)bytes * (double)iters / dt_s / 1e9 > best)
			best = (double)bytes * (double)iters / dt_s / 1e9;
	}
	return best;
}

static void dt_pack_usage(FILE *f)
{
	fprintf(f, "usage: ibtest dt_pack [options]\n"
		   "  -s, --size BYTES     packed bytes per call (default 1m; k/m/g suffixes)\n"
		   "  -t, --time SECONDS   time per measurement (default 0.2)\n"
		   "      --json           results as one JSON document on stdout\n"
		   "  -h, --help\n");
}

static int dt_pack_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "time", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	dt_pack_row_t rows[IBX_ARRAY_SIZE(dt_pack_blocks)];
	int64_t bytes = 1 << 20;
	double tsec = 0.2;
	bool json = false;
	ibx_dt_t *byte = NULL;
	uint8_t *src = NULL, *csrc = NULL, *dst = NULL;
	int c, rc = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (ibx_config_parse_size(optarg, &bytes) != IBX_OK || bytes < 4096) {
				fprintf(stderr, "dt_pack: bad size '%s' (at least 4096)\n", optarg);
				return 2;
			}
			break;
		case 't': tsec = atof(optarg); break;
		case 'j': json = true; break;
		case 'h': dt_pack_usage(stdout); return 0;
		default: dt_pack_usage(stderr); return 2;
		}
	}
	if (tsec <= 0)
		tsec = 0.2;
	bytes -= bytes % 4096;
	src = malloc((size_t)bytes * 2);
	csrc = malloc((size_t)bytes);
	dst = malloc((size_t)bytes);
	if (!src || !csrc || !dst || ibx_dt_basic(1, 1, 1, &byte) != IBX_OK) {
		fprintf(stderr, "dt_pack: out of memory\n");
		goto out;
	}
	for (int64_t k = 0; k < 2 * bytes; k++)
		src[k] = (uint8_t)(k * 7);
	memset(csrc, 3, (size_t)bytes);
	memset(dst, 0, (size_t)bytes);

	for (size_t r = 0; r < IBX_ARRAY_SIZE(dt_pack_blocks); r++) {
		int64_t b = dt_pack_blocks[r], n = bytes / b, iters = 1;
		ibx_dt_t *vec = NULL;
		double t0, once;

		if (ibx_dt_vector(n, b, 2 * b, byte, &vec) != IBX_OK || ibx_dt_commit(vec) != IBX_OK) {
			fprintf(stderr, "dt_pack: cannot build the %lld-byte block vector\n",
				(long long)b);
			ibx_dt_free(&vec);
			goto out;
		}
		/* warm up and calibrate: iterations for ~tsec per trial */
		dt_pack_rate(vec, src, csrc, dst, bytes, 1, 1, true);
		t0 = ibx_time_sec();
		dt_pack_rate(vec, src, csrc, dst, bytes, 1, 1, false);
		once = ibx_time_sec() - t0;
		if (once > 0)
			iters = (int64_t)(tsec / once) + 1;
		rows[r].block = b;
		rows[r].nblocks = n;
		rows[r].pack_gbps = dt_pack_rate(vec, src, csrc, dst, bytes, iters, 5, false);
		rows[r].memcpy_gbps = dt_pack_rate(vec, src, csrc, dst, bytes, iters, 5, true);
		/* the packed data must be the vector's blocks */
		dt_pack_rate(vec, src, csrc, dst, bytes, 1, 1, false);
		if (memcmp(dst, src + 2 * b * (n - 1), (size_t)b)) {
			fprintf(stderr, "dt_pack: packed data is wrong for %lld-byte blocks\n",
				(long long)b);
			ibx_dt_free(&vec);
			goto out;
		}
		ibx_dt_free(&vec);
	}

	if (json) {
		printf("{\"test\": \"dt_pack\", \"packed_bytes\": %lld, \"stride\": \"2 x block\", "
		       "\"rows\": [",
		       (long long)bytes);
		for (size_t r = 0; r < IBX_ARRAY_SIZE(dt_pack_blocks); r++)
			printf("%s\n  {\"block\": %lld, \"blocks\": %lld, \"pack_GBps\": %.3f, "
			       "\"memcpy_GBps\": %.3f, \"ratio\": %.3f}",
			       r ? "," : "", (long long)rows[r].block, (long long)rows[r].nblocks,
			       rows[r].pack_gbps, rows[r].memcpy_gbps,
			       rows[r].pack_gbps / rows[r].memcpy_gbps);
		printf("\n]}\n");
	} else {
		printf("# dt_pack: vector of fixed blocks, stride 2 x block, %lld packed bytes per "
		       "call\n",
		       (long long)bytes);
		printf("%10s %10s %12s %14s %8s\n", "block[B]", "blocks", "pack[GB/s]",
		       "memcpy[GB/s]", "ratio");
		for (size_t r = 0; r < IBX_ARRAY_SIZE(dt_pack_blocks); r++)
			printf("%10lld %10lld %12.2f %14.2f %8.2f\n", (long long)rows[r].block,
			       (long long)rows[r].nblocks, rows[r].pack_gbps, rows[r].memcpy_gbps,
			       rows[r].pack_gbps / rows[r].memcpy_gbps);
	}
	rc = 0;
out:
	if (byte)
		ibx_dt_free(&byte);
	free(src);
	free(csrc);
	free(dst);
	return rc;
}

IBTEST_COMMAND("dt_pack", "datatype engine: pack speed of fixed-block vectors vs. memcpy",
	       dt_pack_main);
