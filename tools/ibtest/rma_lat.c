/*
 * rma_lat.c — `ibtest rma_lat`: the latency of one MPI one-sided operation
 * between two ranks, in the manner of the OSU one-sided benchmarks
 * (osu_put_latency, osu_get_latency, osu_acc_latency, osu_fop_latency,
 * osu_cas_latency), run as
 *
 *     mpilite-run -n 2 ibtest rma_lat [-o OPS] [-w FLAVOURS] [-y SYNCS]
 *                                     [-a | -s SIZE] [-n ITERS] [--json]
 *
 * One osu-style table per (operation, window flavour, synchronisation):
 * "# Size  Latency (us)", the mean time of an iteration. Put, get and
 * accumulate (MPI_SUM on MPI_UNSIGNED_CHAR) sweep 1 B .. 4 MiB with -a;
 * fetch-and-op (+1) and compare-and-swap work on one uint64_t.
 *
 * Passive target (flush, lock, lock_all): rank 0 alone; rank 1 waits in
 * MPI_Barrier and is never needed for progress (--target-sleeps: it sleeps
 * instead, testing an MPI_Ibarrier every 100 us, as perftest's server does).
 *
 *     rank 0 (origin)                          rank 1 (target)
 *     [flush: MPI_Win_lock(SHARED, 1) once]     |
 *     t0  [lock(SHARED, 1) | lock_all]          | MPI_Barrier
 *         op -> rank 1                          |
 *         flush(1) | unlock(1) | unlock_all     |  x (warm-up + iters)
 *     t1  [flush: MPI_Win_unlock(1)]            |
 *     latency = (t1 - t0) / iters
 *
 * Active target (fence, pscw): both ranks, one operation in each direction
 * per iteration, as osu does; the figure is half an iteration.
 *
 *     rank 0                                  rank 1
 *     fence   | start(1)                      fence   | post(0)
 *     op -> 1 | op -> 1, complete             fence   | wait
 *     fence   | post(1)                       op -> 0 | start(0)
 *     fence   | wait                          fence   | op -> 0, complete
 *     latency = (t1 - t0) / iters / 2
 *
 * --typical (passive target): every timed iteration is timed on its own,
 * and the figure is their median — perftest's t_typical — which a few
 * descheduled iterations do not move (emulated devices, shared hosts).
 * The stamps are perftest's too: the TSC where the kernel keeps time with
 * it (ibtest_ticks), not MPI_Wtime's clock_gettime, which under emulation
 * costs several times an RDTSC inside every iteration.
 *
 * After the timed iterations, what they moved is checked (rma_common.c):
 * a mismatch is said on stderr and the exit status is 3.
 */
#include "rma_common.h"

#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#define LAT_ITERS	1000 /* osu's loop for small messages */
#define LAT_ITERS_LARGE 100  /* and above RMA_LARGE */

typedef struct lat_job {
	const rma_opts_t *o;
	ibtest_report_t *rep;
	int rank, peer;
	rma_op_t op;
	rma_flavor_t flavor;
	rma_sync_t sync;
	rma_win_t win;
	MPI_Group peer_group; /* pscw */
	unsigned char *obuf;
	uint64_t result;
	double *samples; /* --typical: each timed iteration (s) */
} lat_job_t;

static const rma_spec_t lat_spec = {
    .name = "rma_lat",
    .summary = "latency of MPI one-sided operations between 2 ranks (osu_put_latency & co)",
    .ops = RMA_BIT(RMA_OP_PUT) | RMA_BIT(RMA_OP_GET) | RMA_BIT(RMA_OP_ACC) | RMA_BIT(RMA_OP_FOP) |
	   RMA_BIT(RMA_OP_CAS),
    .syncs = RMA_BIT(RMA_SYNC_FLUSH) | RMA_BIT(RMA_SYNC_LOCK) | RMA_BIT(RMA_SYNC_FENCE) |
	     RMA_BIT(RMA_SYNC_PSCW) | RMA_BIT(RMA_SYNC_LOCK_ALL),
    .flavors = RMA_BIT(RMA_WIN_ALLOCATE) | RMA_BIT(RMA_WIN_CREATE) | RMA_BIT(RMA_WIN_DYNAMIC) |
	       RMA_BIT(RMA_WIN_SHARED),
    .def_ops = RMA_BIT(RMA_OP_PUT),
    .def_syncs = RMA_BIT(RMA_SYNC_FLUSH),
    .def_flavors = RMA_BIT(RMA_WIN_ALLOCATE),
    .flavor_all = true,
    .def_size = RMA_ATOMIC_SZ,
    .iters_help = "timed iterations per size (default 1000, 100 above 8 KiB)",
    .min_all = 1,
    .typical_opt = true,
};

static bool is_active(rma_sync_t s)
{
	return s == RMA_SYNC_FENCE || s == RMA_SYNC_PSCW;
}

static unsigned lat_iters(const rma_opts_t *o, size_t size)
{
	return o->iters ? o->iters : size > RMA_LARGE ? LAT_ITERS_LARGE : LAT_ITERS;
}

/* cas: iteration k swaps k for k + 1 (the operation completed at its epoch's end) */
static void next_cas(rma_xfer_t *x)
{
	x->cas_compare++;
	x->cas_swap++;
}

/* ---- timing loops ------------------------------------------------------------- */

/* The barrier that ends a row. Passive target with --target-sleeps: an
 * MPI_Ibarrier that the idle ranks test every 100 us, sleeping between,
 * so that their CPU is free (an emulated NIC's responder may need it),
 * as perftest's server sleeps; the origin waits for it as usual. */
static void end_barrier(const lat_job_t *j, bool passive)
{
	MPI_Request rq;
	int done = 0;

	if (!passive || !j->o->target_sleeps) {
		MPI_Barrier(MPI_COMM_WORLD);
		return;
	}
	MPI_Ibarrier(MPI_COMM_WORLD, &rq);
	if (j->rank == 0) {
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		return;
	}
	while (MPI_Test(&rq, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
		usleep(100);
}

static double loop_passive(lat_job_t *j, rma_xfer_t *x, unsigned warmup, unsigned total)
{
	double t0 = 0.0, t1;
	uint64_t prev = 0;

	rma_run_begin(&j->win, j->sync, j->peer);
	for (unsigned i = 0; i < total; i++) {
		if (i == warmup) {
			t0 = MPI_Wtime();
			prev = ibtest_ticks();
		}
		rma_epoch_begin(&j->win, j->sync, j->peer);
		rma_xfer_issue(x, 0);
		rma_epoch_end(&j->win, j->sync, j->peer);
		next_cas(x);
		if (j->samples && i >= warmup) {
			uint64_t now = ibtest_ticks();

			j->samples[i - warmup] = ibtest_ticks_to_ns(now - prev) * 1e-9;
			prev = now;
		}
	}
	t1 = MPI_Wtime();
	rma_run_end(&j->win, j->sync, j->peer);
	return rma_elapsed(t0, t1);
}

static double loop_fence(lat_job_t *j, rma_xfer_t *x, unsigned warmup, unsigned total)
{
	MPI_Win win = j->win.win;
	double t0 = 0.0;

	for (unsigned i = 0; i < total; i++) {
		if (i == warmup)
			t0 = MPI_Wtime();
		MPI_Win_fence(0, win);
		if (j->rank == 0)
			rma_xfer_issue(x, 0);
		MPI_Win_fence(0, win);
		if (j->rank == 1)
			rma_xfer_issue(x, 0);
		MPI_Win_fence(0, win);
		next_cas(x);
	}
	return rma_elapsed(t0, MPI_Wtime());
}

static double loop_pscw(lat_job_t *j, rma_xfer_t *x, unsigned warmup, unsigned total)
{
	MPI_Win win = j->win.win;
	MPI_Group g = j->peer_group;
	double t0 = 0.0;

	for (unsigned i = 0; i < total; i++) {
		if (i == warmup)
			t0 = MPI_Wtime();
		if (j->rank == 0) {
			MPI_Win_start(g, 0, win);
			rma_xfer_issue(x, 0);
			MPI_Win_complete(win);
			MPI_Win_post(g, 0, win);
			MPI_Win_wait(win);
		} else {
			MPI_Win_post(g, 0, win);
			MPI_Win_wait(win);
			MPI_Win_start(g, 0, win);
			rma_xfer_issue(x, 0);
			MPI_Win_complete(win);
		}
		next_cas(x);
	}
	return rma_elapsed(t0, MPI_Wtime());
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_of(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- one size ------------------------------------------------------------------- */

static void what_of(const lat_job_t *j, size_t size, char *buf, size_t len)
{
	snprintf(buf, len, "ibtest rma_lat: rank %d: %s, %s, %s, %zu bytes", j->rank,
		 rma_op_mpi[j->op], rma_flavor_mpi[j->flavor], rma_sync_mpi[j->sync], size);
}

/* Times one size; *usec_p (rank 0) is the latency. Returns 0, or
 * RMA_EXIT_CHECK when the data came out wrong on some rank. */
static int lat_one_size(lat_job_t *j, size_t size, double *usec_p)
{
	unsigned iters = lat_iters(j->o, size), warmup = rma_warmup(iters);
	bool both = is_active(j->sync), issues = both || j->rank == 0;
	bool targeted = both || j->rank == 1;
	rma_outcome_t c = {.op = j->op,
			   .size = size,
			   .slots = 1,
			   .per_epoch = 1,
			   .epochs = iters + warmup,
			   .origin = j->peer};
	rma_xfer_t x = {.w = &j->win,
			.op = j->op,
			.target = j->peer,
			.size = size,
			.obuf = j->obuf,
			.results = &j->result,
			.cas_swap = 1};
	char what[160];
	double t = 0.0;
	bool ok = true;

	if (targeted)
		rma_prepare_target(&c, j->rank, j->win.base);
	if (issues)
		rma_prepare_origin(&c, j->rank, j->obuf, &j->result);
	MPI_Barrier(MPI_COMM_WORLD);

	j->samples = NULL;
	if (j->o->typical && !both && j->rank == 0)
		j->samples = calloc(iters, sizeof(double)); /* NULL: the mean, as without */
	if (j->sync == RMA_SYNC_FENCE)
		t = loop_fence(j, &x, warmup, iters + warmup);
	else if (j->sync == RMA_SYNC_PSCW)
		t = loop_pscw(j, &x, warmup, iters + warmup);
	else if (j->rank == 0)
		t = loop_passive(j, &x, warmup, iters + warmup);
	if (j->samples) /* as if every iteration took the median */
		t = median_of(j->samples, iters) * iters;
	free(j->samples);
	j->samples = NULL;
	end_barrier(j, !both && j->sync != RMA_SYNC_FENCE && j->sync != RMA_SYNC_PSCW);

	what_of(j, size, what, sizeof(what));
	if (targeted && rma_check_target(&c, j->win.base, what))
		ok = false;
	if (issues && rma_check_origin(&c, j->peer, j->obuf, &j->result, what))
		ok = false;
	*usec_p = t * 1e6 / iters / (both ? 2 : 1);
	return rma_all_ok(ok) ? 0 : RMA_EXIT_CHECK;
}

/* ---- one table ------------------------------------------------------------------- */

static void table_header(const lat_job_t *j)
{
	FILE *f = j->rep->out;

	fprintf(f, "# ibtest rma_lat: %s Latency Test\n", rma_op_mpi[j->op]);
	fprintf(f, "# Window creation: %s\n", rma_flavor_mpi[j->flavor]);
	fprintf(f, "# Synchronization: %s\n", rma_sync_mpi[j->sync]);
	if (j->o->typical && !is_active(j->sync))
		fprintf(f, "# Latency: the median iteration (--typical)\n");
	fprintf(f, "%-10s%20s\n", "# Size", "Latency (us)");
}

static void table_row(const lat_job_t *j, size_t size, double usec)
{
	unsigned iters = lat_iters(j->o, size);

	fprintf(j->rep->out, "%-10zu%20.2f\n", size, usec);
	fflush(j->rep->out);
	ibtest_report_json_row(j->rep,
			       "\"op\": \"%s\", \"window\": \"%s\", \"sync\": \"%s\", \"bytes\": "
			       "%zu, \"iterations\": %u, \"warmup\": %u, \"latency_us\": %.6g, "
			       "\"verified\": true",
			       rma_op_names[j->op], rma_flavor_names[j->flavor],
			       rma_sync_names[j->sync], size, iters, rma_warmup(iters), usec);
}

static void table_skip(const lat_job_t *j)
{
	fprintf(j->rep->out, "# %s / %s / %s: skipped: %s failed (ranks on different nodes)\n",
		rma_op_mpi[j->op], rma_flavor_mpi[j->flavor], rma_sync_mpi[j->sync],
		rma_flavor_mpi[j->flavor]);
	ibtest_report_json_row(j->rep,
			       "\"op\": \"%s\", \"window\": \"%s\", \"sync\": \"%s\", "
			       "\"skipped\": \"%s failed\"",
			       rma_op_names[j->op], rma_flavor_names[j->flavor],
			       rma_sync_names[j->sync], rma_flavor_mpi[j->flavor]);
}

static int lat_table(lat_job_t *j)
{
	size_t size = rma_first_size(j->o, j->op);
	int rc = 0;

	if (rma_win_open(&j->win, j->flavor, rma_max_size(j->o, j->op))) {
		if (j->rank == 0)
			table_skip(j);
		return 0;
	}
	if (j->rank == 0)
		table_header(j);
	do {
		double usec;

		rc = lat_one_size(j, size, &usec);
		if (rc)
			break;
		if (j->rank == 0)
			table_row(j, size, usec);
	} while (rma_next_size(j->o, j->op, &size));
	if (j->rank == 0)
		fputc('\n', j->rep->out);
	rma_win_close(&j->win);
	return rc;
}

/* ---- driver ----------------------------------------------------------------------- */

/* One table per chosen (operation, flavour, synchronisation). */
static int lat_case(void *arg, rma_op_t op, rma_flavor_t flavor, rma_sync_t sync)
{
	lat_job_t *j = arg;

	j->op = op;
	j->flavor = flavor;
	j->sync = sync;
	return lat_table(j);
}

static size_t obuf_bytes(const rma_opts_t *o)
{
	size_t max = RMA_ATOMIC_SZ;

	for (int op = 0; op < RMA_OP_N; op++)
		if ((o->ops & RMA_BIT(op)) && rma_max_size(o, (rma_op_t)op) > max)
			max = rma_max_size(o, (rma_op_t)op);
	return (max + 4095) / 4096 * 4096;
}

static int rma_lat_main(int argc, char **argv)
{
	rma_opts_t o;
	lat_job_t j = {.o = &o};
	ibtest_report_t rep;
	int rc, nranks;
	size_t cap;

	rc = rma_parse_opts(&o, &lat_spec, argc, argv);
	if (rc)
		return rc == 1 ? 0 : rc;
	rc = rma_init(lat_spec.name, 2, &argc, &argv, &j.rank, &nranks);
	if (rc)
		return rc;
	j.peer = 1 - j.rank;
	j.peer_group = rma_group(&j.peer, 1);
	j.rep = &rep;
	cap = obuf_bytes(&o);
	j.obuf = aligned_alloc(4096, cap);
	if (!j.obuf) {
		fprintf(stderr, "ibtest rma_lat: rank %d: out of memory\n", j.rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(j.obuf, 0, cap);
	if (o.typical && j.rank == 0)
		ibtest_clock_init();
	ibtest_report_init(&rep, lat_spec.name, o.json, false);

	rc = rma_for_each_case(j.o, lat_case, &j);
	if (j.rank == 0)
		ibtest_report_end(&rep);
	free(j.obuf);
	MPI_Group_free(&j.peer_group);
	MPI_Finalize();
	return rc;
}

IBTEST_COMMAND("rma_lat", "MPI one-sided latency, 2 ranks under a launcher (osu_put_latency & co)",
	       rma_lat_main)
