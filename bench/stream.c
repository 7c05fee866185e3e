/*
 * stream.c — streaming bandwidth in the style of osu_bw and osu_bibw:
 * rank 0 keeps a window of non-blocking sends in flight, rank 1 a
 * matching window of receives; after each window rank 1 replies with a
 * small message, so the timed loop ends only when every byte has arrived.
 * With -B both ranks send a window to each other at once (osu_bibw: no
 * reply, each side waits for its sends and receives).
 *
 *     rank 0                                 rank 1
 *       | -- Isend x W (size) --------------> | Irecv x W, Waitall
 *       | Waitall                             |
 *       | <------------- Send(4 B) ---------- |
 *
 *     bandwidth = size * W * iters / elapsed       (MB/s, 1 MB = 10^6 B)
 *     -B:       2 * size * W * iters / elapsed     (both directions)
 *
 * Buffers. By default, as in osu_bw, every message of a window is sent
 * from one buffer and received into one buffer: the data stay in the
 * caches, and the figure is the transport's. With -F FOOTPRINT the k-th
 * message of the run uses buffer k % N of N = FOOTPRINT / size distinct
 * buffers on each side (at least one): with a footprint well above the
 * last-level cache every message streams from and to memory, as a program
 * that moves a large data set does.
 *
 *   stream [-s SIZE | -m MIN -M MAX] [-W WINDOW] [-n ITERS] [-w WARMUP] [-B] [-F FOOTPRINT]
 *
 * Output (rank 0): '#' comment lines, then "<bytes> <MB/s>" per size.
 */
#include <mpi.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"

#define ST_TAG		2
#define ST_ACK_TAG	3
#define ST_LARGE	8192
#define ST_ITERS_SMALL	100
#define ST_ITERS_LARGE	20
#define ST_WARMUP_SMALL 10
#define ST_WARMUP_LARGE 2
#define ST_WINDOW	64

static void usage(void)
{
	fprintf(stderr,
		"usage: stream [-s SIZE | -m MIN -M MAX] [-W WINDOW] [-n ITERS] [-w WARMUP] [-B]\n"
		"              [-F FOOTPRINT]\n"
		"  -s SIZE       one message size only (k/m suffixes)\n"
		"  -m MIN        smallest size of the sweep (default 8)\n"
		"  -M MAX        largest size of the sweep (default 4m)\n"
		"  -W WINDOW     messages in flight per iteration (default %d)\n"
		"  -n ITERS      timed windows per size (default %d, %d above %d B)\n"
		"  -w WARMUP     untimed windows per size (default %d, %d above %d B)\n"
		"  -B            bidirectional: both ranks send a window at once (osu_bibw)\n"
		"  -F FOOTPRINT  cycle through FOOTPRINT / size distinct buffers per side\n"
		"                (default: one, as osu_bw)\n",
		ST_WINDOW, ST_ITERS_SMALL, ST_ITERS_LARGE, ST_LARGE, ST_WARMUP_SMALL,
		ST_WARMUP_LARGE, ST_LARGE);
}

/* One side's buffers: n of size bytes each, at least one. */
typedef struct st_bufs {
	char *mem;
	size_t size, n, next;
} st_bufs_t;

static char *st_next(st_bufs_t *b)
{
	char *p = b->mem + b->next * b->size;

	b->next = b->next + 1 == b->n ? 0 : b->next + 1;
	return p;
}

/* (Re)sizes @b for messages of @size within @footprint bytes. */
static int st_bufs_setup(st_bufs_t *b, size_t size, size_t footprint, int fill)
{
	size_t n = footprint / (size ? size : 1);

	free(b->mem);
	b->n = n ? n : 1;
	b->size = size;
	b->next = 0;
	b->mem = bench_alloc(b->n * size, fill);
	return b->mem ? 0 : -1;
}

/* One window, both directions with -B. */
static void st_window(int rank, int window, size_t size, int bidir, st_bufs_t *sb, st_bufs_t *rb,
		      MPI_Request *reqs, MPI_Status *stats)
{
	int peer = 1 - rank, n = 0;
	char ack[4] = {0};

	if (rank == 1 || bidir)
		for (int w = 0; w < window; w++)
			MPI_Irecv(st_next(rb), (int)size, MPI_CHAR, peer, ST_TAG, MPI_COMM_WORLD,
				  &reqs[n++]);
	if (rank == 0 || bidir)
		for (int w = 0; w < window; w++)
			MPI_Isend(st_next(sb), (int)size, MPI_CHAR, peer, ST_TAG, MPI_COMM_WORLD,
				  &reqs[n++]);
	MPI_Waitall(n, reqs, stats);
	if (bidir)
		return;
	if (rank == 0)
		MPI_Recv(ack, (int)sizeof(ack), MPI_CHAR, 1, ST_ACK_TAG, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	else
		MPI_Send(ack, (int)sizeof(ack), MPI_CHAR, 0, ST_ACK_TAG, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	size_t min_size = 8, max_size = 4u << 20, footprint = 0;
	int window = ST_WINDOW, iters_opt = 0, warmup_opt = -1, bidir = 0;
	int rank, nprocs, opt, bad = 0;
	MPI_Request *reqs;
	MPI_Status *stats; /* not MPI_STATUSES_IGNORE: gcc 12 flags MPICH's (MPI_Status *)1 */
	st_bufs_t sb = {0}, rb = {0};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

	while ((opt = getopt(argc, argv, "s:m:M:W:n:w:BF:h")) != -1) {
		switch (opt) {
		case 's':
			bad |= bench_parse_size(optarg, &min_size);
			max_size = min_size;
			break;
		case 'm': bad |= bench_parse_size(optarg, &min_size); break;
		case 'M': bad |= bench_parse_size(optarg, &max_size); break;
		case 'W': bad |= bench_parse_int(optarg, 1, &window); break;
		case 'n': bad |= bench_parse_int(optarg, 1, &iters_opt); break;
		case 'w': bad |= bench_parse_int(optarg, 0, &warmup_opt); break;
		case 'B': bidir = 1; break;
		case 'F': bad |= bench_parse_size(optarg, &footprint); break;
		default: bad = 1; break;
		}
	}
	if (bad || optind != argc || min_size > max_size || max_size > (1u << 30) ||
	    footprint > (4ull << 30)) {
		if (rank == 0)
			usage();
		MPI_Finalize();
		return 2;
	}
	if (nprocs != 2) {
		if (rank == 0)
			fprintf(stderr, "stream: needs exactly 2 ranks (got %d)\n", nprocs);
		MPI_Finalize();
		return 2;
	}

	reqs = malloc(2 * (size_t)window * sizeof(*reqs));
	stats = malloc(2 * (size_t)window * sizeof(*stats));
	if (!reqs || !stats) {
		fprintf(stderr, "stream: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank == 0)
		printf("# stream: window of %d, 2 ranks, %s, %s\n# %-10s %14s\n", window,
		       bidir ? "both directions" : "one direction",
		       footprint ? "distinct buffers" : "one buffer per side", "bytes", "bw[MB/s]");

	for (size_t size = min_size;; size = size ? size * 2 : 1) {
		int iters = iters_opt	      ? iters_opt
			    : size > ST_LARGE ? ST_ITERS_LARGE
					      : ST_ITERS_SMALL;
		int warmup = warmup_opt >= 0   ? warmup_opt
			     : size > ST_LARGE ? ST_WARMUP_LARGE
					       : ST_WARMUP_SMALL;
		double t0 = 0.0, t1;

		/* only the sides this rank uses: a footprint may be large */
		if (((rank == 0 || bidir) && st_bufs_setup(&sb, size, footprint, 'a' + rank)) ||
		    ((rank == 1 || bidir) && st_bufs_setup(&rb, size, footprint, 'c' + rank))) {
			fprintf(stderr, "stream: rank %d: out of memory\n", rank);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < warmup + iters; i++) {
			if (i == warmup)
				t0 = MPI_Wtime();
			st_window(rank, window, size, bidir, &sb, &rb, reqs, stats);
		}
		t1 = MPI_Wtime();
		if (rank == 0) {
			double bytes = (double)size * window * iters * (bidir ? 2 : 1);

			printf("  %-10zu %14.2f\n", size, bytes / (t1 - t0) / 1e6);
			fflush(stdout);
		}
		if (size >= max_size)
			break;
	}

	free(stats);
	free(reqs);
	free(sb.mem);
	free(rb.mem);
	MPI_Finalize();
	return 0;
}
