/*
 * pingpong.c — point-to-point latency in the style of osu_latency: ranks 0
 * and 1 bounce one message back and forth; the reported figure is half the
 * round-trip time, averaged over many iterations after a warm-up.
 *
 *     rank 0                    rank 1
 *       | ---- Send(size) ----->  |
 *       | <--- Send(size) ------  |      latency = elapsed / (2 * iters)
 *
 * Standard MPI only: it is built against mpi-lite, Open MPI and MPICH alike
 * by bench/compare.sh.
 *
 *   pingpong [-s SIZE | -m MIN -M MAX] [-n ITERS] [-w WARMUP] [-U]
 *
 * Output (rank 0): comment lines start with '#'; each data line is
 * "<bytes> <latency usec>". With -U, every timed iteration's half round
 * trip follows its size's data line, in run order, in the layout of
 * perftest's `ib_send_lat -U` ("<iteration>, <usec>"), so that one long run
 * can be cut into blocks exactly as perftest's samples are. Each iteration
 * is timed on its own: rank 0 reads the clock at the end of every
 * iteration, warm-up included, so that the timed iterations run exactly the
 * code the warm-up ran (under an emulator such as the Soft-RoCE VM's TCG,
 * code executed for the first time costs tens of microseconds, and a clock
 * read first met in the timed loop would be charged to the transport). The
 * mean line is still the whole loop's elapsed time over the iterations.
 */
#include <mpi.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench_common.h"

#define PP_TAG 1
/* As osu_latency: fewer iterations once messages stop being "small". */
#define PP_LARGE	8192
#define PP_ITERS_SMALL	10000
#define PP_ITERS_LARGE	1000
#define PP_WARMUP_SMALL 1000
#define PP_WARMUP_LARGE 100

/* Timed iterations for one size: -n, else as osu_latency. */
static int pp_iters(int iters_opt, size_t size)
{
	return iters_opt ? iters_opt : size > PP_LARGE ? PP_ITERS_LARGE : PP_ITERS_SMALL;
}

/* stamps[k] is the end of timed iteration k; t0 its start. */
static void pp_print_samples(const double *stamps, int iters, double t0)
{
	for (int k = 0; k < iters; k++) {
		printf("%d, %.3f\n", k + 1, (stamps[k] - (k ? stamps[k - 1] : t0)) * 1e6 / 2.0);
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: pingpong [-s SIZE | -m MIN -M MAX] [-n ITERS] [-w WARMUP] [-U]\n"
		"  -s SIZE    one message size only (k/m suffixes)\n"
		"  -m MIN     smallest size of the sweep (default 8)\n"
		"  -M MAX     largest size of the sweep (default 4m)\n"
		"  -n ITERS   timed iterations per size (default %d, %d above %d B)\n"
		"  -w WARMUP  untimed iterations per size (default %d, %d above %d B)\n"
		"  -U         also print every timed iteration's half round trip\n"
		"             (\"<iteration>, <usec>\", as ib_send_lat -U)\n",
		PP_ITERS_SMALL, PP_ITERS_LARGE, PP_LARGE, PP_WARMUP_SMALL, PP_WARMUP_LARGE,
		PP_LARGE);
}

int main(int argc, char **argv)
{
	size_t min_size = 8, max_size = 4u << 20;
	int iters_opt = 0, warmup_opt = -1;
	int rank, nprocs, opt, bad = 0, per_iter = 0;
	double *stamps = NULL;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

	while ((opt = getopt(argc, argv, "s:m:M:n:w:Uh")) != -1) {
		switch (opt) {
		case 's':
			bad |= bench_parse_size(optarg, &min_size);
			max_size = min_size;
			break;
		case 'm': bad |= bench_parse_size(optarg, &min_size); break;
		case 'M': bad |= bench_parse_size(optarg, &max_size); break;
		case 'n': bad |= bench_parse_int(optarg, 1, &iters_opt); break;
		case 'w': bad |= bench_parse_int(optarg, 0, &warmup_opt); break;
		case 'U': per_iter = 1; break;
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
			fprintf(stderr, "pingpong: needs exactly 2 ranks (got %d)\n", nprocs);
		MPI_Finalize();
		return 2;
	}

	buf = bench_alloc(max_size, rank == 0 ? 'a' : 'b');
	if (per_iter && rank == 0)
		/* the smallest size has the most iterations */
		stamps = malloc((size_t)pp_iters(iters_opt, min_size) * sizeof(*stamps));
	if (!buf || (per_iter && rank == 0 && !stamps)) {
		fprintf(stderr, "pingpong: rank %d: cannot allocate the buffers\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank == 0)
		printf("# pingpong: half round trip, 2 ranks\n# %-10s %14s\n", "bytes",
		       "latency[usec]");

	for (size_t size = min_size;; size = size ? size * 2 : 1) {
		int iters = pp_iters(iters_opt, size);
		int warmup = warmup_opt >= 0   ? warmup_opt
			     : size > PP_LARGE ? PP_WARMUP_LARGE
					       : PP_WARMUP_SMALL;
		double t0 = 0.0, t1;

		MPI_Barrier(MPI_COMM_WORLD);
		for (int i = 0; i < warmup + iters; i++) {
			if (i == warmup)
				t0 = MPI_Wtime();
			if (rank == 0) {
				MPI_Send(buf, (int)size, MPI_CHAR, 1, PP_TAG, MPI_COMM_WORLD);
				MPI_Recv(buf, (int)size, MPI_CHAR, 1, PP_TAG, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				if (stamps) /* warm-up stamps land in slot 0, overwritten */
					stamps[i < warmup ? 0 : i - warmup] = MPI_Wtime();
			} else {
				MPI_Recv(buf, (int)size, MPI_CHAR, 0, PP_TAG, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				MPI_Send(buf, (int)size, MPI_CHAR, 0, PP_TAG, MPI_COMM_WORLD);
			}
		}
		t1 = MPI_Wtime();
		if (rank == 0) {
			printf("  %-10zu %14.3f\n", size, (t1 - t0) * 1e6 / (2.0 * iters));
			if (stamps)
				pp_print_samples(stamps, iters, t0);
			fflush(stdout);
		}
		if (size >= max_size)
			break;
	}

	free(stamps);
	free(buf);
	MPI_Finalize();
	return 0;
}
