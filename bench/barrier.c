/*
 * barrier.c — MPI_Barrier latency, written for the oversubscribed case
 * (4 ranks on 2 cores) where an implementation that spins without yielding
 * pays a scheduler time slice per barrier.
 *
 * One repetition times a run of back-to-back barriers and takes the mean; the
 * slowest rank's figure counts (MPI_Allreduce with MPI_MAX, so every rank
 * sees it). The result is the median over the repetitions, with min and max
 * beside it.
 *
 * The number of barriers per repetition adapts to a time budget: a short
 * calibration on rank 0 estimates the cost of one barrier, and the count is
 * broadcast, so a 16 ms-per-barrier implementation still finishes in seconds
 * instead of minutes. Should the calibration have been too optimistic, the
 * repetitions stop (all ranks alike, from the reduced times) once twice the
 * budget is spent and at least 3 repetitions are done.
 *
 *   barrier [-n MAX_ITERS] [-r REPS] [-t SECONDS]
 *
 * Output (rank 0): '#' comment lines, then
 * "<nranks> <median usec> <min usec> <max usec> <iters> <reps>".
 */
#include <mpi.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_common.h"

#define BA_CALIBRATE 10

static void usage(void)
{
	fprintf(stderr, "usage: barrier [-n MAX_ITERS] [-r REPS] [-t SECONDS]\n"
			"  -n MAX_ITERS  barriers per repetition at most (default 2000)\n"
			"  -r REPS       repetitions, the median is reported (default 11)\n"
			"  -t SECONDS    time budget for all repetitions (default 4)\n");
}

int main(int argc, char **argv)
{
	int max_iters = 2000, reps = 11, budget_s = 4, iters = 1;
	int rank, nprocs, opt, bad = 0;
	double *per_rep = NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

	while ((opt = getopt(argc, argv, "n:r:t:h")) != -1) {
		switch (opt) {
		case 'n': bad |= bench_parse_int(optarg, 1, &max_iters); break;
		case 'r': bad |= bench_parse_int(optarg, 1, &reps); break;
		case 't': bad |= bench_parse_int(optarg, 1, &budget_s); break;
		default: bad = 1; break;
		}
	}
	if (bad || optind != argc) {
		if (rank == 0)
			usage();
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		per_rep = malloc((size_t)reps * sizeof(*per_rep));
		if (!per_rep)
			MPI_Abort(MPI_COMM_WORLD, 1);
	}

	/* warm-up, then calibrate */
	for (int i = 0; i < BA_CALIBRATE; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < BA_CALIBRATE; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	double one = (MPI_Wtime() - t0) / BA_CALIBRATE;
	if (rank == 0) {
		double fit = (double)budget_s / reps / (one > 1e-9 ? one : 1e-9);

		iters = fit > max_iters ? max_iters : fit < 1.0 ? 1 : (int)fit;
	}
	MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);

	int done = 0;
	double spent = 0.0;

	for (int r = 0; r < reps; r++) {
		double mine, worst = 0.0;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			MPI_Barrier(MPI_COMM_WORLD);
		mine = (MPI_Wtime() - t0) / iters;
		MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		if (rank == 0)
			per_rep[r] = worst * 1e6;
		done = r + 1;
		spent += worst * iters;
		if (done >= 3 && spent > 2.0 * budget_s)
			break;
	}

	if (rank == 0) {
		double med = bench_median(per_rep, (size_t)done);

		printf("# barrier: %d ranks, %d barriers x %d repetitions\n", nprocs, iters, done);
		printf("# %-6s %12s %12s %12s %8s %6s\n", "ranks", "median[usec]", "min[usec]",
		       "max[usec]", "iters", "reps");
		printf("  %-6d %12.3f %12.3f %12.3f %8d %6d\n", nprocs, med, per_rep[0],
		       per_rep[done - 1], iters, done);
		free(per_rep);
	}
	MPI_Finalize();
	return 0;
}
