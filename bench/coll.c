/*
 * coll.c — collective latency in the style of the OSU collective benchmarks
 * (osu_allreduce, osu_bcast, osu_alltoall): every iteration is timed on
 * every rank, with a barrier between iterations (not timed), so each
 * figure is the time of one isolated collective.
 *
 *   iteration i:  t0 = MPI_Wtime(); MPI_<op>(...); t[i] = MPI_Wtime() - t0;
 *                 MPI_Barrier
 *
 * The latency of an iteration is the mean over the ranks (OSU's "avg
 * latency"); the reported figure is the median over the iterations, with
 * the minimum beside it. The iteration count adapts to a time budget per
 * measurement (a calibration on rank 0, broadcast; rank 0 also stops the
 * run for everyone once twice the budget is spent), so an implementation
 * that takes milliseconds per call (oversubscribed ranks that do not
 * yield) still finishes.
 *
 * Operations: allreduce (MPI_DOUBLE, MPI_SUM; size = bytes of the vector),
 * bcast (MPI_BYTE from rank 0), alltoall (MPI_BYTE; size = bytes per rank
 * pair). Standard MPI only: built against mpi-lite, Open MPI and MPICH.
 *
 *   coll [-c allreduce,bcast,alltoall] [-s 8,1m] [-n MAX_ITERS] [-w WARMUP] [-t SECONDS]
 *
 * Output (rank 0): '#' comment lines, then one line per (op, size):
 * "<op> <bytes> <median usec> <min usec> <iters>".
 */
#include <mpi.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define CO_MAX_SIZES   32
#define CO_CALIBRATE   5
#define CO_CHECK_EVERY 16 /* iterations between two looks at the clock */

enum { OP_ALLREDUCE, OP_BCAST, OP_ALLTOALL, OP_N };
static const char *const op_names[OP_N] = {"allreduce", "bcast", "alltoall"};

static int rank, nprocs;

static void usage(void)
{
	fprintf(stderr,
		"usage: coll [-c OPS] [-s SIZES] [-n MAX_ITERS] [-w WARMUP] [-t SECONDS]\n"
		"  -c OPS        comma-separated: allreduce,bcast,alltoall (default all)\n"
		"  -s SIZES      comma-separated sizes, k/m suffixes (default 8,1m)\n"
		"  -n MAX_ITERS  timed iterations per measurement at most (default 10000)\n"
		"  -w WARMUP     untimed iterations first (default 10%% of the timed, 2..100)\n"
		"  -t SECONDS    time budget per measurement, fractions allowed (default 2)\n");
}

static void run_op(int op, size_t size, char *sbuf, char *rbuf)
{
	switch (op) {
	case OP_ALLREDUCE:
		MPI_Allreduce(sbuf, rbuf, (int)(size / sizeof(double)), MPI_DOUBLE, MPI_SUM,
			      MPI_COMM_WORLD);
		break;
	case OP_BCAST: MPI_Bcast(sbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD); break;
	default:
		MPI_Alltoall(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, MPI_COMM_WORLD);
		break;
	}
}

static void measure(int op, size_t size, int max_iters, int warmup_opt, double budget_s)
{
	size_t bytes = op == OP_ALLTOALL ? size * (size_t)nprocs : size;
	char *sbuf = bench_alloc(bytes, 1), *rbuf = bench_alloc(bytes, 0);
	double *t, *sum = NULL, one;
	int iters = 1, warmup;

	if (!sbuf || !rbuf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	/* calibrate: the slowest rank's mean over a few iterations */
	for (int i = 0; i < 2; i++)
		run_op(op, size, sbuf, rbuf);
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int i = 0; i < CO_CALIBRATE; i++) {
		run_op(op, size, sbuf, rbuf);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	one = (MPI_Wtime() - t0) / CO_CALIBRATE;
	if (rank == 0) {
		double fit = budget_s / (one > 1e-9 ? one : 1e-9);

		iters = fit > max_iters ? max_iters : fit < 5 ? 5 : (int)fit;
	}
	MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
	warmup = warmup_opt >= 0    ? warmup_opt
		 : iters / 10 > 100 ? 100
		 : iters / 10 > 2   ? iters / 10
				    : 2;
	t = calloc((size_t)iters, sizeof(*t));
	if (rank == 0)
		sum = calloc((size_t)iters, sizeof(*sum));
	if (!t || (rank == 0 && !sum))
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int i = 0; i < warmup; i++) {
		run_op(op, size, sbuf, rbuf);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++) {
		double s = MPI_Wtime();

		run_op(op, size, sbuf, rbuf);
		t[i] = MPI_Wtime() - s;
		MPI_Barrier(MPI_COMM_WORLD);
		/* The calibration may have been optimistic (a loaded machine):
		 * rank 0 ends the measurement, for everyone, once twice the
		 * budget is spent. */
		if (i % CO_CHECK_EVERY == CO_CHECK_EVERY - 1) {
			int stop = rank == 0 && MPI_Wtime() - t0 > 2.0 * budget_s;

			MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
			if (stop) {
				iters = i + 1;
				break;
			}
		}
	}
	MPI_Reduce(t, sum, iters, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		double med;

		for (int i = 0; i < iters; i++)
			sum[i] = sum[i] / nprocs * 1e6;
		med = bench_median(sum, (size_t)iters); /* sorts: sum[0] is the minimum */
		printf("%-10s %10zu %12.3f %12.3f %8d\n", op_names[op], size, med, sum[0], iters);
		fflush(stdout);
	}
	free(t);
	free(sum);
	free(sbuf);
	free(rbuf);
}

int main(int argc, char **argv)
{
	size_t sizes[CO_MAX_SIZES] = {8, 1u << 20};
	int nsizes = 2, ops[OP_N] = {1, 1, 1}, max_iters = 10000, warmup = -1;
	double budget_s = 2.0;
	int opt, bad = 0;
	char *tok, *save;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	while ((opt = getopt(argc, argv, "c:s:n:w:t:h")) != -1) {
		switch (opt) {
		case 'c':
			memset(ops, 0, sizeof(ops));
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				int k;

				for (k = 0; k < OP_N && strcmp(tok, op_names[k]); k++)
					;
				if (k == OP_N)
					bad = 1;
				else
					ops[k] = 1;
			}
			break;
		case 's':
			nsizes = 0;
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save))
				if (nsizes == CO_MAX_SIZES ||
				    bench_parse_size(tok, &sizes[nsizes++]))
					bad = 1;
			break;
		case 'n': bad |= bench_parse_int(optarg, 1, &max_iters); break;
		case 'w': bad |= bench_parse_int(optarg, 0, &warmup); break;
		case 't':
			budget_s = strtod(optarg, &tok);
			bad |= *tok != '\0' || !(budget_s >= 0.01 && budget_s <= 3600);
			break;
		default: bad = 1; break;
		}
	}
	for (int i = 0; i < nsizes; i++)
		if (sizes[i] < sizeof(double) || sizes[i] > (1u << 30))
			bad = 1;
	if (bad || optind != argc) {
		if (rank == 0)
			usage();
		MPI_Finalize();
		return 2;
	}
	if (rank == 0) {
		printf("# coll: %d ranks; per-iteration latency, mean over ranks, median over "
		       "iterations\n",
		       nprocs);
		printf("# %-8s %10s %12s %12s %8s\n", "op", "bytes", "median[usec]", "min[usec]",
		       "iters");
	}
	for (int op = 0; op < OP_N; op++)
		for (int i = 0; ops[op] && i < nsizes; i++)
			measure(op, sizes[i], max_iters, warmup, budget_s);
	MPI_Finalize();
	return 0;
}
