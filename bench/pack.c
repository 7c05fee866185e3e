/*
 * pack.c — MPI_Pack speed of a strided vector type against memcpy of the
 * same bytes.
 *
 * The type is MPI_Type_vector(N, B, 2B, MPI_BYTE): N blocks of B bytes,
 * every other block of a 2 N B source buffer, N B bytes packed. For each
 * block size three copies of the same N B bytes are timed:
 *
 *   pack     MPI_Pack(src, 1, vector, out, ...)
 *   blocks   for each block: memcpy(out + i B, src + 2 i B, B) — what a
 *            hand-written pack loop does: "memcpy of the same bytes"
 *   contig   one memcpy of N B contiguous bytes (the streaming ceiling)
 *
 * One repetition repeats a copy for about 20 ms (count calibrated once);
 * the figure is the median over the repetitions, in GB/s of packed bytes
 * (10^9 B/s). Standard MPI only; one process (any launcher, or alone).
 *
 *   pack [-b 64,256,4k] [-t TOTAL] [-r REPS]     (TOTAL packed bytes, default 1m)
 *
 * Output: '#' comment lines, then per block size
 * "<block> <pack GB/s> <blocks GB/s> <contig GB/s> <pack/blocks> <pack/contig>".
 */
#include <mpi.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define PK_REP_SECONDS 0.02
#define PK_MAX_BLOCKS  8

enum { K_PACK, K_BLOCKS, K_CONTIG, K_N };

/* The compiler must not drop or merge copies whose result nobody reads. */
static inline void clobber(void *p)
{
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

static void copy_once(int kind, MPI_Datatype vec, const char *src, char *out, size_t b, size_t n)
{
	int pos = 0;

	switch (kind) {
	case K_PACK: MPI_Pack(src, 1, vec, out, (int)(n * b), &pos, MPI_COMM_SELF); break;
	case K_BLOCKS:
		for (size_t i = 0; i < n; i++)
			memcpy(out + i * b, src + 2 * i * b, b);
		break;
	default: memcpy(out, src, n * b); break;
	}
	clobber(out);
}

static double measure(int kind, MPI_Datatype vec, const char *src, char *out, size_t b, size_t n,
		      int reps)
{
	double *gbs = malloc((size_t)reps * sizeof(*gbs)), med;
	long count = 1;

	if (!gbs)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int i = 0; i < 4; i++)
		copy_once(kind, vec, src, out, b, n);
	for (;;) {
		double t0 = MPI_Wtime(), dt;

		for (long i = 0; i < count; i++)
			copy_once(kind, vec, src, out, b, n);
		dt = MPI_Wtime() - t0;
		if (dt >= PK_REP_SECONDS / 4 || count > (1L << 40)) {
			count =
			    (long)((double)count * PK_REP_SECONDS / (dt > 1e-9 ? dt : 1e-9)) + 1;
			break;
		}
		count *= 4;
	}
	for (int r = 0; r < reps; r++) {
		double t0 = MPI_Wtime();

		for (long i = 0; i < count; i++)
			copy_once(kind, vec, src, out, b, n);
		gbs[r] = (double)(n * b) * (double)count / (MPI_Wtime() - t0) / 1e9;
	}
	med = bench_median(gbs, (size_t)reps);
	free(gbs);
	return med;
}

static void usage(void)
{
	fprintf(stderr, "usage: pack [-b BLOCKS] [-t TOTAL] [-r REPS]\n"
			"  -b BLOCKS  comma-separated block sizes (default 64,256,4k)\n"
			"  -t TOTAL   packed bytes per copy (default 1m)\n"
			"  -r REPS    repetitions, the median is reported (default 11)\n");
}

int main(int argc, char **argv)
{
	size_t blocks[PK_MAX_BLOCKS] = {64, 256, 4096}, total = 1u << 20;
	int nblocks = 3, reps = 11, rank, opt, bad = 0;
	char *tok, *save;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	while ((opt = getopt(argc, argv, "b:t:r:h")) != -1) {
		switch (opt) {
		case 'b':
			nblocks = 0;
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save))
				if (nblocks == PK_MAX_BLOCKS ||
				    bench_parse_size(tok, &blocks[nblocks++]))
					bad = 1;
			break;
		case 't': bad |= bench_parse_size(optarg, &total); break;
		case 'r': bad |= bench_parse_int(optarg, 1, &reps); break;
		default: bad = 1; break;
		}
	}
	for (int i = 0; i < nblocks; i++)
		if (blocks[i] == 0 || blocks[i] > total || total > (1u << 30))
			bad = 1;
	if (bad || optind != argc) {
		if (rank == 0)
			usage();
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		printf(
		    "# pack: vector(N, B, 2B, MPI_BYTE), %zu packed bytes, median of %d (GB/s)\n",
		    total, reps);
		printf("# %-6s %10s %10s %10s %12s %12s\n", "block", "pack", "blocks", "contig",
		       "pack/blocks", "pack/contig");
	}
	for (int i = 0; rank == 0 && i < nblocks; i++) {
		size_t b = blocks[i], n = total / b;
		char *src = bench_alloc(2 * n * b, 's'), *out = bench_alloc(n * b, 'o');
		MPI_Datatype vec;
		double g[K_N];

		if (!src || !out)
			MPI_Abort(MPI_COMM_WORLD, 1);
		for (size_t j = 0; j < 2 * n * b; j++)
			src[j] = (char)(j * 131 + j / 4093);
		MPI_Type_vector((int)n, (int)b, (int)(2 * b), MPI_BYTE, &vec);
		MPI_Type_commit(&vec);
		for (int k = 0; k < K_N; k++)
			g[k] = measure(k, vec, src, out, b, n, reps);
		/* the packed bytes must be the blocks */
		copy_once(K_PACK, vec, src, out, b, n);
		for (size_t j = 0; j < n; j++)
			if (memcmp(out + j * b, src + 2 * j * b, b) != 0) {
				fprintf(stderr, "pack: MPI_Pack output wrong at block %zu\n", j);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		printf("  %-6zu %10.2f %10.2f %10.2f %12.3f %12.3f\n", b, g[K_PACK], g[K_BLOCKS],
		       g[K_CONTIG], g[K_PACK] / g[K_BLOCKS], g[K_PACK] / g[K_CONTIG]);
		fflush(stdout);
		MPI_Type_free(&vec);
		free(src);
		free(out);
	}
	MPI_Finalize();
	return 0;
}
