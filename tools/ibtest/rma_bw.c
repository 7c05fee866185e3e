/*
 * rma_bw.c — `ibtest rma_bw`: the bandwidth of MPI one-sided operations
 * between two ranks, in the manner of osu_put_bw / osu_get_bw (and, with
 * --bidir, osu_put_bibw), run as
 *
 *     mpilite-run -n 2 ibtest rma_bw [-o OPS] [-w FLAVOURS] [-y SYNCS]
 *                                    [-a | -s SIZE] [-n EPOCHS] [-t W]
 *                                    [--bidir] [--json]
 *
 * An epoch is W operations (-t, default 64, as osu's window) to distinct
 * slots of the target window, closed by the synchronisation; the figure is
 * MB/s = SIZE x W x epochs / time / 10^6 (osu's MB), twice that with
 * --bidir, where both ranks issue. The slots of one epoch span at most
 * 16 MiB: where W x SIZE is more, slots are reused round-robin (osu
 * allocates W x SIZE; the bytes moved are the same).
 *
 *     rank 0 (origin)                            rank 1 (target)
 *     [flush: MPI_Win_lock(SHARED, 1) once]      |
 *     t0  [lock(SHARED, 1) | lock_all]           | (passive: MPI_Barrier,
 *         op -> slot k of rank 1, k = 0 .. W-1   |  never needed)
 *         flush(1) | unlock(1) | unlock_all      | x (warm-up + epochs)
 *     fence:  fence, W ops, fence                | fence, fence
 *     pscw:   start(1), W ops, complete          | post(0), wait
 *     t1
 *
 *     --bidir, both ranks at once:
 *     fence:  fence, W ops -> peer, fence
 *     pscw:   post(peer), start(peer), W ops -> peer, complete, wait
 *
 * Fetch-and-op and compare-and-swap move 8 bytes per operation, each to
 * its own slot, each with its own result. What the run moved is checked
 * afterwards (rma_common.c): a mismatch is said and the exit status is 3.
 */
#include "rma_common.h"

#include <stdlib.h>
#include <string.h>

#define BW_EPOCHS	100 /* osu's loop for small messages */
#define BW_EPOCHS_LARGE 20  /* and above RMA_LARGE */
#define BW_SPAN_CAP	(16u << 20)

typedef struct bw_job {
	const rma_opts_t *o;
	ibtest_report_t *rep;
	int rank, peer;
	rma_op_t op;
	rma_flavor_t flavor;
	rma_sync_t sync;
	rma_win_t win;
	MPI_Group peer_group; /* pscw */
	unsigned char *obuf;
	uint64_t *results; /* one per operation of an epoch */
} bw_job_t;

static const rma_spec_t bw_spec = {
    .name = "rma_bw",
    .summary = "bandwidth of MPI one-sided operations between 2 ranks (osu_put_bw & co)",
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
    .window_opt = true,
    .bidir_opt = true,
    .def_size = 65536,
    .iters_help = "timed epochs per size (default 100, 20 above 8 KiB)",
    .min_all = 1,
};

static unsigned bw_epochs(const rma_opts_t *o, size_t size)
{
	return o->iters ? o->iters : size > RMA_LARGE ? BW_EPOCHS_LARGE : BW_EPOCHS;
}

/* Distinct target slots of an epoch at @size. */
static unsigned bw_slots(const bw_job_t *j, size_t size)
{
	size_t fit = size ? BW_SPAN_CAP / size : j->o->window;

	if (rma_op_is_atomic(j->op) || fit >= j->o->window)
		return j->o->window;
	return fit ? (unsigned)fit : 1;
}

/* Window bytes that hold the slots of every size of the run. */
static size_t bw_span_max(const rma_opts_t *o, rma_op_t op)
{
	size_t max = rma_max_size(o, op), all = (size_t)o->window * max;

	if (rma_op_is_atomic(op))
		return (size_t)o->window * RMA_ATOMIC_SZ;
	if (all > BW_SPAN_CAP)
		all = BW_SPAN_CAP;
	return all > max ? all : max;
}

/* ---- timing loops ------------------------------------------------------------- */

static void issue_window(const bw_job_t *j, rma_xfer_t *x, unsigned slots)
{
	for (unsigned k = 0; k < j->o->window; k++)
		rma_xfer_issue(x, k % slots);
}

/* cas: epoch e swaps e for e + 1 in each slot */
static void next_epoch(rma_xfer_t *x)
{
	x->cas_compare++;
	x->cas_swap++;
}

static double loop_passive(bw_job_t *j, rma_xfer_t *x, unsigned slots, unsigned warmup,
			   unsigned total)
{
	double t0 = 0.0, t1;

	rma_run_begin(&j->win, j->sync, j->peer);
	for (unsigned e = 0; e < total; e++) {
		if (e == warmup)
			t0 = MPI_Wtime();
		rma_epoch_begin(&j->win, j->sync, j->peer);
		issue_window(j, x, slots);
		rma_epoch_end(&j->win, j->sync, j->peer);
		next_epoch(x);
	}
	t1 = MPI_Wtime();
	rma_run_end(&j->win, j->sync, j->peer);
	return rma_elapsed(t0, t1);
}

/* fence and pscw, one way (rank 0 issues) or both (--bidir) */
static double loop_active(bw_job_t *j, rma_xfer_t *x, unsigned slots, unsigned warmup,
			  unsigned total)
{
	bool issues = j->o->bidir || j->rank == 0, exposes = j->o->bidir || j->rank == 1;
	MPI_Win win = j->win.win;
	double t0 = 0.0;

	for (unsigned e = 0; e < total; e++) {
		if (e == warmup)
			t0 = MPI_Wtime();
		if (j->sync == RMA_SYNC_FENCE) {
			MPI_Win_fence(0, win);
			if (issues)
				issue_window(j, x, slots);
			MPI_Win_fence(0, win);
		} else {
			if (exposes)
				MPI_Win_post(j->peer_group, 0, win);
			if (issues) {
				MPI_Win_start(j->peer_group, 0, win);
				issue_window(j, x, slots);
				MPI_Win_complete(win);
			}
			if (exposes)
				MPI_Win_wait(win);
		}
		next_epoch(x);
	}
	return rma_elapsed(t0, MPI_Wtime());
}

/* ---- one size ------------------------------------------------------------------- */

typedef struct bw_result {
	unsigned epochs, slots;
	double secs, MBps;
} bw_result_t;

/* Times one size (rank 0's figures in *res). Returns 0, or RMA_EXIT_CHECK
 * when the data came out wrong on some rank. */
static int bw_one_size(bw_job_t *j, size_t size, bw_result_t *res)
{
	unsigned epochs = bw_epochs(j->o, size), warmup = rma_warmup(epochs);
	unsigned slots = bw_slots(j, size);
	bool active = j->sync == RMA_SYNC_FENCE || j->sync == RMA_SYNC_PSCW;
	bool issues = j->o->bidir || j->rank == 0, targeted = j->o->bidir || j->rank == 1;
	rma_outcome_t c = {.op = j->op,
			   .size = size,
			   .slots = slots,
			   .per_epoch = j->o->window,
			   .epochs = epochs + warmup,
			   .origin = j->peer};
	rma_xfer_t x = {.w = &j->win,
			.op = j->op,
			.target = j->peer,
			.size = size,
			.obuf = j->obuf,
			.results = j->results,
			.cas_swap = 1};
	char what[160];
	bool ok = true;
	double t = 0.0;

	if (targeted)
		rma_prepare_target(&c, j->rank, j->win.base);
	if (issues)
		rma_prepare_origin(&c, j->rank, j->obuf, j->results);
	MPI_Barrier(MPI_COMM_WORLD);
	if (active)
		t = loop_active(j, &x, slots, warmup, epochs + warmup);
	else if (j->rank == 0)
		t = loop_passive(j, &x, slots, warmup, epochs + warmup);
	MPI_Barrier(MPI_COMM_WORLD);

	snprintf(what, sizeof(what), "ibtest rma_bw: rank %d: %s, %s, %s%s, %zu bytes", j->rank,
		 rma_op_mpi[j->op], rma_flavor_mpi[j->flavor], rma_sync_mpi[j->sync],
		 j->o->bidir ? " (bidir)" : "", size);
	if (targeted && rma_check_target(&c, j->win.base, what))
		ok = false;
	if (issues && rma_check_origin(&c, j->peer, j->obuf, j->results, what))
		ok = false;
	res->epochs = epochs;
	res->slots = slots;
	res->secs = t;
	res->MBps = (double)size * j->o->window * epochs * (j->o->bidir ? 2 : 1) / t / 1e6;
	return rma_all_ok(ok) ? 0 : RMA_EXIT_CHECK;
}

/* ---- one table ------------------------------------------------------------------- */

static void table_header(const bw_job_t *j)
{
	FILE *f = j->rep->out;

	fprintf(f, "# ibtest rma_bw: %s %sBandwidth Test (%u operations per epoch)\n",
		rma_op_mpi[j->op], j->o->bidir ? "Bi-directional " : "", j->o->window);
	fprintf(f, "# Window creation: %s\n", rma_flavor_mpi[j->flavor]);
	fprintf(f, "# Synchronization: %s\n", rma_sync_mpi[j->sync]);
	fprintf(f, "%-10s%20s\n", "# Size", "Bandwidth (MB/s)");
}

static void table_row(const bw_job_t *j, size_t size, const bw_result_t *r)
{
	fprintf(j->rep->out, "%-10zu%20.2f\n", size, r->MBps);
	fflush(j->rep->out);
	ibtest_report_json_row(
	    j->rep,
	    "\"op\": \"%s\", \"window\": \"%s\", \"sync\": \"%s\", \"bidir\": %s, \"bytes\": %zu, "
	    "\"ops_per_epoch\": %u, \"slots\": %u, \"epochs\": %u, \"warmup\": %u, "
	    "\"seconds\": %.9g, \"bw_MBps\": %.9g, \"verified\": true",
	    rma_op_names[j->op], rma_flavor_names[j->flavor], rma_sync_names[j->sync],
	    j->o->bidir ? "true" : "false", size, j->o->window, r->slots, r->epochs,
	    rma_warmup(r->epochs), r->secs, r->MBps);
}

static void table_skip(const bw_job_t *j)
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

static int bw_table(bw_job_t *j)
{
	size_t size = rma_first_size(j->o, j->op);
	int rc = 0;

	if (rma_win_open(&j->win, j->flavor, bw_span_max(j->o, j->op))) {
		if (j->rank == 0)
			table_skip(j);
		return 0;
	}
	if (j->rank == 0)
		table_header(j);
	do {
		bw_result_t r;

		rc = bw_one_size(j, size, &r);
		if (rc)
			break;
		if (j->rank == 0)
			table_row(j, size, &r);
	} while (rma_next_size(j->o, j->op, &size));
	if (j->rank == 0)
		fputc('\n', j->rep->out);
	rma_win_close(&j->win);
	return rc;
}

/* ---- driver ----------------------------------------------------------------------- */

/* One table per chosen (operation, flavour, synchronisation). */
static int bw_case(void *arg, rma_op_t op, rma_flavor_t flavor, rma_sync_t sync)
{
	bw_job_t *j = arg;

	j->op = op;
	j->flavor = flavor;
	j->sync = sync;
	return bw_table(j);
}

static size_t obuf_bytes(const rma_opts_t *o)
{
	size_t max = 0;

	for (int op = 0; op < RMA_OP_N; op++)
		if ((o->ops & RMA_BIT(op)) && bw_span_max(o, (rma_op_t)op) > max)
			max = bw_span_max(o, (rma_op_t)op);
	return (max + 4095) / 4096 * 4096;
}

static int rma_bw_main(int argc, char **argv)
{
	rma_opts_t o;
	bw_job_t j = {.o = &o};
	ibtest_report_t rep;
	int rc, nranks;
	size_t cap;

	rc = rma_parse_opts(&o, &bw_spec, argc, argv);
	if (rc)
		return rc == 1 ? 0 : rc;
	rc = rma_init(bw_spec.name, 2, &argc, &argv, &j.rank, &nranks);
	if (rc)
		return rc;
	j.peer = 1 - j.rank;
	j.peer_group = rma_group(&j.peer, 1);
	j.rep = &rep;
	cap = obuf_bytes(&o);
	j.obuf = aligned_alloc(4096, cap);
	j.results = calloc(o.window, sizeof(*j.results));
	if (!j.obuf || !j.results) {
		fprintf(stderr, "ibtest rma_bw: rank %d: out of memory\n", j.rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(j.obuf, 0, cap);
	ibtest_report_init(&rep, bw_spec.name, o.json, false);

	rc = rma_for_each_case(j.o, bw_case, &j);
	if (j.rank == 0)
		ibtest_report_end(&rep);
	free(j.results);
	free(j.obuf);
	MPI_Group_free(&j.peer_group);
	MPI_Finalize();
	return rc;
}

IBTEST_COMMAND("rma_bw",
	       "MPI one-sided bandwidth, 2 ranks under a launcher (osu_put_bw, osu_get_bw, "
	       "--bidir: osu_put_bibw)",
	       rma_bw_main)
