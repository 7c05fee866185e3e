/*
 * exchange.c — `ibtest exchange`: the exchange test of [Traff00] §5, which
 * compares one-sided communication with point-to-point on a pattern that
 * suits both: every rank i supplies a block of SIZE bytes to each of the
 * ranks (i + j) mod P and takes one from each of (i - j) mod P, j = 1 .. N
 * (-k N neighbours, default 1; the paper runs N = 1 and N = P). Run as
 *
 *     mpilite-run -n P ibtest exchange [-o put|get|sendrecv|all]
 *                  [-y fence|pscw|lock|all] [-k N] [-w FLAVOUR]
 *                  [-a | -s SIZE] [-n EPOCHS] [--json]
 *
 * The paper's seven implementations, in its order (-o and -y select):
 *   Put-Fence, Get-Fence   MPI_Put / MPI_Get, the epoch opened and closed
 *                          with MPI_Win_fence
 *   Put-PSCW,  Get-PSCW    ("Ded" in the paper) MPI_Win_post to the ranks
 *                          that access this one, MPI_Win_start to the ranks
 *                          it accesses; MPI_Win_complete, MPI_Win_wait
 *   Put-Lock,  Get-Lock    MPI_Win_lock(EXCLUSIVE) / unlock per neighbour,
 *                          one after the other
 *   Sendrecv               MPI_Sendrecv per neighbour
 *
 *     every rank, each of warm-up + EPOCHS epochs:
 *       MPI_Barrier                    (the epochs start together)
 *       t0
 *       open (fence | post + start | -)
 *         N x Put / Get / lock-op-unlock / Sendrecv
 *       close (fence | complete + wait | -)
 *       t[e] = now - t0
 *     MPI_Reduce(MAX) of t[]: an epoch lasts until its slowest rank is done
 *
 * Figures: per size and implementation, the epoch times (each the slowest
 * rank's); the table shows their median, robust on a shared machine; the
 * JSON rows add the minimum (the fastest epoch, the figure the paper
 * reports, over its 25 epochs, the default here too), mean and maximum.
 * After the timed epochs every rank checks the blocks it received (each
 * neighbour's block is a pseudo-random stream of that neighbour): a
 * mismatch is said on stderr and the exit status is 3.
 *
 * Window layout per rank (2 N blocks of the largest size):
 *   [0, N*max)       blocks put here: block j-1 from rank i - j
 *   [N*max, 2N*max)  blocks got from here: block j-1 for rank i + j
 */
#include "rma_common.h"

#include <stdlib.h>
#include <string.h>

#define X_EPOCHS 25 /* [Traff00] §5: 25 epochs per variant and size */
#define X_WARMUP 2
#define X_NONE	 RMA_SYNC_N /* Sendrecv: no window synchronisation */

typedef struct xvariant {
	rma_op_t op;
	rma_sync_t sync;
	const char *label, *id;
} xvariant_t;

static const xvariant_t xvariants[] = {
    {RMA_OP_PUT, RMA_SYNC_FENCE, "Put-Fence", "put-fence"},
    {RMA_OP_GET, RMA_SYNC_FENCE, "Get-Fence", "get-fence"},
    {RMA_OP_PUT, RMA_SYNC_PSCW, "Put-PSCW", "put-pscw"},
    {RMA_OP_GET, RMA_SYNC_PSCW, "Get-PSCW", "get-pscw"},
    {RMA_OP_PUT, RMA_SYNC_LOCK, "Put-Lock", "put-lock"},
    {RMA_OP_GET, RMA_SYNC_LOCK, "Get-Lock", "get-lock"},
    {RMA_OP_SENDRECV, X_NONE, "Sendrecv", "sendrecv"},
};
#define X_NVARIANTS (sizeof(xvariants) / sizeof(xvariants[0]))

typedef struct xjob {
	const rma_opts_t *o;
	ibtest_report_t *rep;
	int rank, nranks, n;
	int *to, *from;			/* to[j-1] = i + j, from[j-1] = i - j (mod P) */
	MPI_Group to_group, from_group; /* pscw */
	rma_win_t win;
	size_t max;		    /* largest size of the run */
	unsigned char *sbuf, *rbuf; /* N blocks each */
	double *t, *tmax;	    /* per epoch: this rank's, the slowest rank's */
	bool selected[X_NVARIANTS];
} xjob_t;

typedef struct xstats {
	double median, min, avg, max;
} xstats_t;

static const rma_spec_t x_spec = {
    .name = "exchange",
    .summary = "neighbour exchange, one-sided (Put/Get x Fence/PSCW/Lock) against MPI_Sendrecv "
	       "([Traff00] §5)",
    .ops = RMA_BIT(RMA_OP_PUT) | RMA_BIT(RMA_OP_GET) | RMA_BIT(RMA_OP_SENDRECV),
    .syncs = RMA_BIT(RMA_SYNC_FENCE) | RMA_BIT(RMA_SYNC_PSCW) | RMA_BIT(RMA_SYNC_LOCK),
    .flavors = RMA_BIT(RMA_WIN_ALLOCATE) | RMA_BIT(RMA_WIN_CREATE) | RMA_BIT(RMA_WIN_DYNAMIC) |
	       RMA_BIT(RMA_WIN_SHARED),
    .def_ops = RMA_BIT(RMA_OP_PUT) | RMA_BIT(RMA_OP_GET) | RMA_BIT(RMA_OP_SENDRECV),
    .def_syncs = RMA_BIT(RMA_SYNC_FENCE) | RMA_BIT(RMA_SYNC_PSCW) | RMA_BIT(RMA_SYNC_LOCK),
    .def_flavors = RMA_BIT(RMA_WIN_ALLOCATE),
    .flavor_all = false,
    .nbr_opt = true,
    .def_size = 1024,
    .iters_help = "timed epochs per size and implementation (default 25, as the paper)",
    .min_all = 0,
};

static unsigned x_epochs(const xjob_t *x)
{
	return x->o->iters ? x->o->iters : X_EPOCHS;
}

/* ---- one epoch ---------------------------------------------------------------- */

static size_t get_area(const xjob_t *x)
{
	return (size_t)x->n * x->max;
}

/* Block j-1 of this rank with neighbour j: put to i + j, or get from i - j. */
static void xfer(xjob_t *x, rma_op_t op, int j, size_t size)
{
	size_t off = (size_t)(j - 1) * size;
	int cnt = (int)size;

	if (op == RMA_OP_PUT) {
		int t = x->to[j - 1];

		MPI_Put(x->sbuf + off, cnt, MPI_BYTE, t, x->win.disp0[t] + (MPI_Aint)off, cnt,
			MPI_BYTE, x->win.win);
	} else {
		int t = x->from[j - 1];

		MPI_Get(x->rbuf + off, cnt, MPI_BYTE, t,
			x->win.disp0[t] + (MPI_Aint)(get_area(x) + off), cnt, MPI_BYTE, x->win.win);
	}
}

static void epoch_fence(xjob_t *x, rma_op_t op, size_t size)
{
	MPI_Win_fence(0, x->win.win);
	for (int j = 1; j <= x->n; j++)
		xfer(x, op, j, size);
	MPI_Win_fence(0, x->win.win);
}

/* Put: ranks i - j put into this rank's window (the exposure group is
 * from[]) and it puts into i + j (the access group, to[]); get: the other
 * way round. */
static void epoch_pscw(xjob_t *x, rma_op_t op, size_t size)
{
	bool put = op == RMA_OP_PUT;

	MPI_Win_post(put ? x->from_group : x->to_group, 0, x->win.win);
	MPI_Win_start(put ? x->to_group : x->from_group, 0, x->win.win);
	for (int j = 1; j <= x->n; j++)
		xfer(x, op, j, size);
	MPI_Win_complete(x->win.win);
	MPI_Win_wait(x->win.win);
}

/* [Traff00] §5: exclusive access, the targets locked one after the other */
static void epoch_lock(xjob_t *x, rma_op_t op, size_t size)
{
	for (int j = 1; j <= x->n; j++) {
		int t = op == RMA_OP_PUT ? x->to[j - 1] : x->from[j - 1];

		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, x->win.win);
		xfer(x, op, j, size);
		MPI_Win_unlock(t, x->win.win);
	}
}

static void epoch_sendrecv(xjob_t *x, size_t size)
{
	int cnt = (int)size;

	for (int j = 1; j <= x->n; j++) {
		size_t off = (size_t)(j - 1) * size;

		MPI_Sendrecv(x->sbuf + off, cnt, MPI_BYTE, x->to[j - 1], j, x->rbuf + off, cnt,
			     MPI_BYTE, x->from[j - 1], j, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
}

static void epoch(xjob_t *x, const xvariant_t *v, size_t size)
{
	switch (v->sync) {
	case RMA_SYNC_FENCE: epoch_fence(x, v->op, size); break;
	case RMA_SYNC_PSCW: epoch_pscw(x, v->op, size); break;
	case RMA_SYNC_LOCK: epoch_lock(x, v->op, size); break;
	default: epoch_sendrecv(x, size); break;
	}
}

/* ---- one size of one variant ----------------------------------------------------- */

/* Where the blocks this rank receives land. */
static unsigned char *recv_area(const xjob_t *x, const xvariant_t *v)
{
	return v->op == RMA_OP_PUT ? x->win.base : x->rbuf;
}

static void prepare(xjob_t *x, const xvariant_t *v, size_t size)
{
	size_t len = (size_t)x->n * size;

	if (v->op == RMA_OP_GET)
		rma_pattern_fill(x->win.base + get_area(x), 0, len, size, x->rank);
	else
		rma_pattern_fill(x->sbuf, 0, len, size, x->rank);
	memset(recv_area(x, v), 0, len);
}

/* Block j-1 came from rank i - j, bytes [(j-1) size, j size) of its stream. */
static bool check(const xjob_t *x, const xvariant_t *v, size_t size)
{
	const unsigned char *got = recv_area(x, v);

	for (int j = 1; j <= x->n; j++) {
		size_t off = (size_t)(j - 1) * size;
		size_t bad = rma_pattern_check(got + off, off, size, size, x->from[j - 1]);

		if (bad) {
			fprintf(stderr,
				"ibtest exchange: rank %d: %s, %zu bytes: byte %zu of the block "
				"from rank %d is wrong\n",
				x->rank, v->label, size, bad - 1, x->from[j - 1]);
			return false;
		}
	}
	return true;
}

static int cmp_double(const void *a, const void *b)
{
	double p = *(const double *)a, q = *(const double *)b;

	return (p > q) - (p < q);
}

static void stats_of(double *t, unsigned n, xstats_t *s)
{
	double sum = 0.0;

	qsort(t, n, sizeof(*t), cmp_double);
	for (unsigned i = 0; i < n; i++)
		sum += t[i];
	s->min = t[0];
	s->max = t[n - 1];
	s->avg = sum / n;
	s->median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Times one size; rank 0 gets the statistics in microseconds. Returns 0,
 * or RMA_EXIT_CHECK when some rank received wrong data. */
static int x_one(xjob_t *x, const xvariant_t *v, size_t size, xstats_t *s)
{
	unsigned epochs = x_epochs(x);

	prepare(x, v, size);
	for (unsigned e = 0; e < X_WARMUP + epochs; e++) {
		double t0;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		epoch(x, v, size);
		x->t[e] = rma_elapsed(t0, MPI_Wtime()) * 1e6;
	}
	MPI_Reduce(x->t + X_WARMUP, x->tmax, (int)epochs, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD); /* lock: the last unlocks are done everywhere */
	if (!rma_all_ok(check(x, v, size)))
		return RMA_EXIT_CHECK;
	if (x->rank == 0)
		stats_of(x->tmax, epochs, s);
	return 0;
}

/* ---- table ------------------------------------------------------------------------ */

static void table_header(const xjob_t *x)
{
	FILE *f = x->rep->out;

	fprintf(f, "# ibtest exchange: %d ranks, %d neighbour%s each, window %s\n", x->nranks, x->n,
		x->n > 1 ? "s" : "", rma_flavor_mpi[x->win.flavor]);
	if (x->n == 1)
		fprintf(f,
			"# rank i supplies a block to rank i+1 and takes one from rank i-1 "
			"(mod %d)\n",
			x->nranks);
	else
		fprintf(f,
			"# rank i supplies a block to each of i+1 .. i+%d and takes one from "
			"each of i-1 .. i-%d (mod %d)\n",
			x->n, x->n, x->nranks);
	fprintf(f, "# time per epoch (us): the slowest rank's, median over %u epochs\n",
		x_epochs(x));
	fprintf(f, "%-10s", "# Size");
	for (size_t v = 0; v < X_NVARIANTS; v++)
		if (x->selected[v])
			fprintf(f, "%12s", xvariants[v].label);
	fputc('\n', f);
}

static void json_row(const xjob_t *x, const xvariant_t *v, size_t size, const xstats_t *s)
{
	ibtest_report_json_row(
	    x->rep,
	    "\"variant\": \"%s\", \"op\": \"%s\", \"sync\": \"%s\", \"window\": \"%s\", "
	    "\"ranks\": %d, \"neighbours\": %d, \"bytes\": %zu, \"epochs\": %u, \"warmup\": %d, "
	    "\"t_median_us\": %.6g, \"t_min_us\": %.6g, \"t_avg_us\": %.6g, \"t_max_us\": %.6g, "
	    "\"verified\": true",
	    v->id, rma_op_names[v->op], v->sync == X_NONE ? "none" : rma_sync_names[v->sync],
	    rma_flavor_names[x->win.flavor], x->nranks, x->n, size, x_epochs(x), X_WARMUP,
	    s->median, s->min, s->avg, s->max);
}

/* One row: every selected variant at @size. */
static int x_row(xjob_t *x, size_t size)
{
	FILE *f = x->rep->out;

	if (x->rank == 0)
		fprintf(f, "%-10zu", size);
	for (size_t v = 0; v < X_NVARIANTS; v++) {
		xstats_t s;
		int rc;

		if (!x->selected[v])
			continue;
		rc = x_one(x, &xvariants[v], size, &s);
		if (rc) {
			if (x->rank == 0)
				fputc('\n', f);
			return rc;
		}
		if (x->rank == 0) {
			fprintf(f, "%12.2f", s.median);
			fflush(f);
			json_row(x, &xvariants[v], size, &s);
		}
	}
	if (x->rank == 0)
		fputc('\n', f);
	return 0;
}

static int x_run(xjob_t *x)
{
	size_t size = rma_first_size(x->o, RMA_OP_PUT);
	int rc;

	if (x->rank == 0)
		table_header(x);
	do {
		rc = x_row(x, size);
		if (rc)
			return rc;
	} while (rma_next_size(x->o, RMA_OP_PUT, &size));
	return 0;
}

/* ---- set-up ----------------------------------------------------------------------- */

static void select_variants(xjob_t *x)
{
	for (size_t v = 0; v < X_NVARIANTS; v++) {
		const xvariant_t *xv = &xvariants[v];

		x->selected[v] = (x->o->ops & RMA_BIT(xv->op)) &&
				 (xv->sync == X_NONE || (x->o->syncs & RMA_BIT(xv->sync)));
	}
}

/* Neighbours, groups, buffers; the window comes after. */
static void x_setup(xjob_t *x)
{
	size_t blocks;

	x->to = calloc((size_t)x->n, sizeof(*x->to));
	x->from = calloc((size_t)x->n, sizeof(*x->from));
	x->max = rma_max_size(x->o, RMA_OP_PUT);
	blocks = (size_t)x->n * x->max;
	x->sbuf = malloc(blocks ? blocks : 1);
	x->rbuf = malloc(blocks ? blocks : 1);
	x->t = calloc(X_WARMUP + x_epochs(x), sizeof(*x->t));
	x->tmax = calloc(x_epochs(x), sizeof(*x->tmax));
	if (!x->to || !x->from || !x->sbuf || !x->rbuf || !x->t || !x->tmax) {
		fprintf(stderr, "ibtest exchange: rank %d: out of memory\n", x->rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int j = 1; j <= x->n; j++) {
		x->to[j - 1] = (x->rank + j) % x->nranks;
		x->from[j - 1] = ((x->rank - j) % x->nranks + x->nranks) % x->nranks;
	}
	x->to_group = rma_group(x->to, x->n);
	x->from_group = rma_group(x->from, x->n);
	memset(x->sbuf, 0, blocks);
	memset(x->rbuf, 0, blocks);
	select_variants(x);
}

static void x_teardown(xjob_t *x)
{
	MPI_Group_free(&x->to_group);
	MPI_Group_free(&x->from_group);
	free(x->tmax);
	free(x->t);
	free(x->rbuf);
	free(x->sbuf);
	free(x->from);
	free(x->to);
}

static rma_flavor_t the_flavor(const rma_opts_t *o)
{
	for (int f = 0; f < RMA_WIN_N; f++)
		if (o->flavors & RMA_BIT(f))
			return (rma_flavor_t)f;
	return RMA_WIN_ALLOCATE;
}

static int exchange_main(int argc, char **argv)
{
	rma_opts_t o;
	xjob_t x = {.o = &o};
	ibtest_report_t rep;
	rma_flavor_t flavor;
	int rc;

	rc = rma_parse_opts(&o, &x_spec, argc, argv);
	if (rc)
		return rc == 1 ? 0 : rc;
	rc = rma_init(x_spec.name, 0, &argc, &argv, &x.rank, &x.nranks);
	if (rc)
		return rc;
	if (o.neighbours > (unsigned)x.nranks) {
		if (x.rank == 0)
			fprintf(stderr,
				"ibtest exchange: -k %u: more neighbours than the %d ranks\n",
				o.neighbours, x.nranks);
		MPI_Finalize();
		return RMA_EXIT_USAGE;
	}
	x.n = (int)o.neighbours;
	x.rep = &rep;
	ibtest_report_init(&rep, x_spec.name, o.json, false);
	x_setup(&x);
	flavor = the_flavor(&o);
	if (rma_win_open(&x.win, flavor, 2 * get_area(&x))) {
		if (x.rank == 0)
			fprintf(rep.out,
				"# exchange: skipped: %s failed (ranks on different nodes)\n",
				rma_flavor_mpi[flavor]);
		rc = 0;
	} else {
		rc = x_run(&x);
		rma_win_close(&x.win);
	}
	if (x.rank == 0)
		ibtest_report_end(&rep);
	x_teardown(&x);
	MPI_Finalize();
	return rc;
}

IBTEST_COMMAND("exchange",
	       "neighbour exchange, Put/Get x Fence/PSCW/Lock against Sendrecv, P ranks "
	       "([Traff00] §5)",
	       exchange_main)
