/*
 * stream.c — streaming bandwidth in the style of osu_bw: rank 0 keeps a
 * window of non-blocking sends in flight, rank 1 a matching window of
 * receives; after each window rank 1 replies with a small message, so the
 * timed loop ends only when every byte has arrived.
 *
 *     rank 0                                 rank 1
 *       | -- Isend x W (size) --------------> | Irecv x W, Waitall
 *       | Waitall                             |
 *       | <------------- Send(4 B) ---------- |
 *
 *     bandwidth = size * W * iters / elapsed       (MB/s, 1 MB = 10^6 B)
 *
 * As in osu_bw, all receives of a window land in one buffer: the data are
 * identical and the point is the transport, not the memory footprint.
 *
 *   stream [-s SIZE | -m MIN -M MAX] [-W WINDOW] [-n ITERS] [-w WARMUP]
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
		"usage: stream [-s SIZE | -m MIN -M MAX] [-W WINDOW] [-n ITERS] [-w WARMUP]\n"
		"  -s SIZE    one message size only (k/m suffixes)\n"
		"  -m MIN     smallest size of the sweep (default 8)\n"
		"  -M MAX     largest size of the sweep (default 4m)\n"
		"  -W WINDOW  messages in flight per iteration (default %d)\n"
		"  -n ITERS   timed windows per size (default %d, %d above %d B)\n"
		"  -w WARMUP  untimed windows per size (default %d, %d above %d B)\n",
		ST_WINDOW, ST_ITERS_SMALL, ST_ITERS_LARGE, ST_LARGE, ST_WARMUP_SMALL,
		ST_WARMUP_LARGE, ST_LARGE);
}

int main(int argc, char **argv)
{
	size_t min_size = 8, max_size = 4u << 20;
	int window = ST_WINDOW, iters_opt = 0, warmup_opt = -1;
	int rank, nprocs, opt, bad = 0;
	MPI_Request *reqs;
	MPI_Status *stats; /* not MPI_STATUSES_IGNORE: gcc 12 flags MPICH's (MPI_Status *)1 */
	char *buf, ack[4] = {0};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

	while ((opt = getopt(argc, argv, "s:m:M:W:n:w:h")) != -1) {
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
		default: bad = 1; break;
		}
	}
	if (bad || optind != argc || min_size > max_size || max_size > (1u << 30)) {
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

	buf = bench_alloc(max_size, rank == 0 ? 'a' : 'b');
	reqs = malloc((size_t)window * sizeof(*reqs));
	stats = malloc((size_t)window * sizeof(*stats));
	if (!buf || !reqs || !stats) {
		fprintf(stderr, "stream: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank == 0)
		printf("# stream: window of %d, 2 ranks\n# %-10s %14s\n", window, "bytes",
		       "bw[MB/s]");

	for (size_t size = min_size;; size = size ? size * 2 : 1) {
		int iters = iters_opt	      ? iters_opt
			    : size > ST_LARGE ? ST_ITERS_LARGE
					      : ST_ITERS_SMALL;
		int warmup = warmup_opt >= 0   ? warmup_opt
			     : size > ST_LARGE ? ST_WARMUP_LARGE
					       : ST_WARMUP_SMALL;
		double t0 = 0.0, t1;

		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < warmup + iters; i++) {
			if (i == warmup)
				t0 = MPI_Wtime();
			if (rank == 0) {
				for (int w = 0; w < window; w++)
					MPI_Isend(buf, (int)size, MPI_CHAR, 1, ST_TAG,
						  MPI_COMM_WORLD, &reqs[w]);
				MPI_Waitall(window, reqs, stats);
				MPI_Recv(ack, (int)sizeof(ack), MPI_CHAR, 1, ST_ACK_TAG,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				for (int w = 0; w < window; w++)
					MPI_Irecv(buf, (int)size, MPI_CHAR, 0, ST_TAG,
						  MPI_COMM_WORLD, &reqs[w]);
				MPI_Waitall(window, reqs, stats);
				MPI_Send(ack, (int)sizeof(ack), MPI_CHAR, 0, ST_ACK_TAG,
					 MPI_COMM_WORLD);
			}
		}
		t1 = MPI_Wtime();
		if (rank == 0) {
			double bytes = (double)size * window * iters;

			printf("  %-10zu %14.2f\n", size, bytes / (t1 - t0) / 1e6);
			fflush(stdout);
		}
		if (size >= max_size)
			break;
	}

	free(stats);
	free(reqs);
	free(buf);
	MPI_Finalize();
	return 0;
}
