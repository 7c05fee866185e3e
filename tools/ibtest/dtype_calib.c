/*
 * dtype_calib.c — `ibtest dtype --calibrate` (also `ibtest dtype_calibrate`):
 * measures the crossovers the derived-datatype selector uses on this
 * machine's device and stores them as the device's calibration file,
 * which every later job on the device loads (core/dtype_rdma/dt_select.c).
 *
 * Two ranks ping-pong a message of about 256 KiB whose blocks are B bytes
 * (every other B-byte block of a buffer) on both sides, for B = 8 B ..
 * 16 KiB, once per forced scheme: multi-w, rwg-up, bc-spup (the sender
 * pushes from its blocks), p-rrs, generic (the sender packs first, the
 * receiver reads). A threshold is the smallest B from which the scheme it
 * enables is at least as fast as its alternative at B and at every larger
 * B measured (median of the ping-pongs, each timed alone); "never" is 1 GiB:
 *
 *   DT_PUSH_MIN_BLOCK      min(push schemes) <= min(p-rrs, generic)
 *   DT_SCATTER_MIN_BLOCK   p-rrs   <= generic
 *   DT_MULTIW_MIN_BLOCK    multi-w <= min(rwg-up, bc-spup)
 *   DT_GATHER_MIN_BLOCK    rwg-up  <= bc-spup
 *
 *   mpilite-run -n 2 ibtest dtype --calibrate [--reps N] [--json] [--no-save]
 */
#include "ibtest.h"

#include "dtype_rdma/dt_select.h"
#include "mpil_int.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define CAL_NSIZES  12
#define CAL_TARGET  (256 * 1024) /* bytes per message */
#define CAL_NEVER   (1ll << 30)
#define CAL_BATCHES 5

enum { C_MW, C_RWG, C_BC, C_PRRS, C_GEN, C_N };
static const ibx_dt_scheme_t cal_scheme[C_N] = {IBX_DT_SCHEME_MULTI_W, IBX_DT_SCHEME_RWG_UP,
						IBX_DT_SCHEME_BC_SPUP, IBX_DT_SCHEME_P_RRS,
						IBX_DT_SCHEME_GENERIC};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One-way time (us) of a ping-pong: rank 0 sends (sbuf, st), rank 1
 * receives into (rbuf, rt) and answers the same way; the median of
 * CAL_BATCHES x @reps ping-pongs timed one by one (like perftest's
 * t_typical: an emulated device's scheduler-tick stalls do not move it). */
static double pingpong(int rank, void *sbuf, MPI_Datatype st, void *rbuf, MPI_Datatype rt, int reps)
{
	int n = CAL_BATCHES * reps;
	double *t = malloc((size_t)n * sizeof(double)), med;

	if (!t)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int k = 0; k < n; k++) {
		double t0 = MPI_Wtime();

		if (rank == 0) {
			MPI_Send(sbuf, 1, st, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(rbuf, 1, rt, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(rbuf, 1, rt, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(sbuf, 1, st, 0, 0, MPI_COMM_WORLD);
		}
		t[k] = (MPI_Wtime() - t0) / 2 * 1e6;
	}
	qsort(t, (size_t)n, sizeof(t[0]), cmp_double);
	med = t[n / 2];
	free(t);
	/* both ranks use rank 0's figure */
	MPI_Bcast(&med, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	return med;
}

/* The smallest size from which @a <= @b at every larger size too. */
static int64_t crossover(const int64_t *sizes, const double *a, const double *b, int n)
{
	int64_t from = CAL_NEVER;

	for (int i = n - 1; i >= 0; i--) {
		if (a[i] > b[i])
			break;
		from = sizes[i];
	}
	return from;
}

int ibtest_dtype_calibrate(int argc, char **argv)
{
	static const struct option opts[] = {{"calibrate", no_argument, NULL, 'c'},
					     {"reps", required_argument, NULL, 'r'},
					     {"json", no_argument, NULL, 'j'},
					     {"no-save", no_argument, NULL, 'n'},
					     {NULL, 0, NULL, 0}};
	int64_t sizes[CAL_NSIZES];
	double t[C_N][CAL_NSIZES];
	int reps = 20, rank, size, c;
	bool json = false, save = true;
	ibx_dt_model_t m;
	const char *dev;
	char *sbuf, *rbuf;
	ibtest_report_t rep;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c': break;
		case 'r': reps = atoi(optarg); break;
		case 'j': json = true; break;
		case 'n': save = false; break;
		default:
			fprintf(stderr, "usage: ibtest dtype --calibrate [--reps N] [--json] "
					"[--no-save]\n");
			return 2;
		}
	}
	if (reps < 1) {
		fprintf(stderr, "ibtest dtype --calibrate: --reps must be at least 1\n");
		return 2;
	}
	MPI_Init(NULL, NULL);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "ibtest dtype --calibrate: run it with 2 ranks (the pair "
					"to calibrate: on two nodes for the verbs device)\n");
		MPI_Finalize();
		return 2;
	}
	sbuf = calloc(2, CAL_TARGET + 65536);
	rbuf = calloc(2, CAL_TARGET + 65536);
	if (!sbuf || !rbuf) {
		fprintf(stderr, "ibtest dtype --calibrate: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int i = 0; i < CAL_NSIZES; i++) {
		int64_t b = 8ll << i;
		int nb = (int)(CAL_TARGET / b < 16 ? 16 : CAL_TARGET / b);
		MPI_Datatype vec;

		sizes[i] = b;
		MPI_Type_create_hvector(nb, (int)b, 2 * b, MPI_BYTE, &vec);
		MPI_Type_commit(&vec);
		for (int s = 0; s < C_N; s++) {
			ibx_dt_scheme_set(mpil_g.ctx, cal_scheme[s]);
			t[s][i] = pingpong(rank, sbuf, vec, rbuf, vec, reps);
		}
		MPI_Type_free(&vec);
	}
	ibx_dt_scheme_set(mpil_g.ctx, IBX_DT_SCHEME_AUTO);
	ibx_dt_model_get(&m);
	m.scatter_min = crossover(sizes, t[C_PRRS], t[C_GEN], CAL_NSIZES);
	{
		double best[CAL_NSIZES];

		for (int i = 0; i < CAL_NSIZES; i++)
			best[i] = t[C_RWG][i] < t[C_BC][i] ? t[C_RWG][i] : t[C_BC][i];
		m.multiw_min = crossover(sizes, t[C_MW], best, CAL_NSIZES);
	}
	m.gather_min = crossover(sizes, t[C_RWG], t[C_BC], CAL_NSIZES);
	{
		double push[CAL_NSIZES], pull[CAL_NSIZES];

		for (int i = 0; i < CAL_NSIZES; i++) {
			push[i] = t[C_MW][i] < t[C_RWG][i] ? t[C_MW][i] : t[C_RWG][i];
			push[i] = t[C_BC][i] < push[i] ? t[C_BC][i] : push[i];
			pull[i] = t[C_PRRS][i] < t[C_GEN][i] ? t[C_PRRS][i] : t[C_GEN][i];
		}
		m.push_min = crossover(sizes, push, pull, CAL_NSIZES);
	}
	dev = ibx_ctx_device(mpil_g.ctx);
	if (rank == 0) {
		ibtest_report_init(&rep, "dtype_calibrate", json, false);
		printf("# block [B]  multi-w   rwg-up  bc-spup    p-rrs  generic   (one-way us, "
		       "~%d KiB messages)\n",
		       CAL_TARGET / 1024);
		for (int i = 0; i < CAL_NSIZES; i++) {
			printf("%11lld %8.2f %8.2f %8.2f %8.2f %8.2f\n", (long long)sizes[i],
			       t[C_MW][i], t[C_RWG][i], t[C_BC][i], t[C_PRRS][i], t[C_GEN][i]);
			ibtest_report_json_row(
			    &rep,
			    "\"block\": %lld, \"multi_w\": %.6g, \"rwg_up\": %.6g, "
			    "\"bc_spup\": %.6g, \"p_rrs\": %.6g, \"generic\": %.6g",
			    (long long)sizes[i], t[C_MW][i], t[C_RWG][i], t[C_BC][i], t[C_PRRS][i],
			    t[C_GEN][i]);
		}
		printf("DT_PUSH_MIN_BLOCK=%lld\n", (long long)m.push_min);
		printf("DT_SCATTER_MIN_BLOCK=%lld\n", (long long)m.scatter_min);
		printf("DT_MULTIW_MIN_BLOCK=%lld\n", (long long)m.multiw_min);
		printf("DT_GATHER_MIN_BLOCK=%lld\n", (long long)m.gather_min);
		if (!save) {
			printf("# not saved (--no-save)\n");
		} else if (!dev) {
			printf("# no verbs device in this job (shared memory only): nothing saved; "
			       "calibrate a pair of ranks that talk over verbs\n");
		} else {
			char path[512];
			ibx_status_t st = ibx_dt_calib_save(dev, &m);

			ibx_dt_calib_path(dev, path, sizeof(path));
			printf("# %s %s\n", st == IBX_OK ? "saved to" : "could not write", path);
		}
		ibtest_report_end(&rep);
	}
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}

IBTEST_COMMAND("dtype_calibrate",
	       "measure the derived-datatype selector's thresholds for this device and store "
	       "them (same as dtype --calibrate)",
	       ibtest_dtype_calibrate);
