/*
 * dtype.c — `ibtest dtype`: derived-datatype communication per transfer
 * scheme, the benchmarks of Wu, Wyckoff and Panda 2003 ("High Performance
 * Implementation of MPI Derived Datatype Communication over InfiniBand").
 * An MPI program (mpi-lite), run as
 *
 *     mpilite-run -n N ibtest dtype [-b lat,bw,put,alltoall] [--put]
 *                  [-S SCHEMES] [-c COLUMNS] [-B BLOCKS] [-k COUNT]
 *                  [-n ITERS] [-r REPS] [-W WINDOW] [--json] [--svg FILE]
 *     mpilite-run -n 2 ibtest dtype --calibrate ...     (dtype_calib.c)
 *
 * Vector benchmark (ranks 0 and 1; the others wait): a 128 x 4096 int array
 * (row-major) on each side, the type x columns of it:
 * MPI_Type_vector(128, x, 4096, MPI_INT), x = 1, 2, 4, ..., 2048 (-c).
 *   lat      ping-pong of one such message, one-way time (half the round
 *            trip), median over ITERS round trips (us)
 *   bw       rank 0: WINDOW x MPI_Isend + MPI_Waitall, then a 4-byte ack
 *            from rank 1, which posts WINDOW x MPI_Irecv into the same
 *            buffer; MB/s (10^6 bytes) = WINDOW x bytes / time, median over
 *            REPS (WINDOW = 100 as the paper)
 *   put      (--put or -b put) rank 0: MPI_Win_lock(EXCLUSIVE, 1); MPI_Put
 *            of 128·x contiguous ints into the vector type at rank 1 (an
 *            MPI_Win_allocate window holding the array); MPI_Win_unlock:
 *            latency per epoch (us, median), and WINDOW puts per epoch
 *            (MB/s, median over REPS)
 * Every row is measured per scheme of -S (default all six: auto, generic,
 * bc-spup, rwg-up, p-rrs, multi-w), set on every rank with
 * ibx_dt_scheme_set() and a barrier before the row, and once for the
 * contiguous reference of the same bytes (128·x ints from the array's
 * start, scheme auto), so that vs_contig = vector / contiguous is the
 * issue's ratio. The lat and bw benchmarks also print a "copies" row:
 * rank 0 alone packs and unpacks the same x columns (MPI_Pack, MPI_Unpack),
 * the bound of a scheme that packs and unpacks (copies_row).
 *
 * Struct Alltoall (all ranks): MPI_Alltoall of COUNT elements per peer
 * (-k, default 8) of struct { B bytes of MPI_INT at 0, B bytes of
 * MPI_FLOAT at 2B } resized to 4B (a gap after each block), for B = 4 B ..
 * 4 KiB (-B), per scheme and against the contiguous Alltoall of the same
 * bytes (2·B·COUNT per peer as MPI_INT). Each iteration is timed alone
 * between barriers, the slowest rank's time counts, median over ITERS (us).
 *
 * A scheme a path cannot do falls back to one it can; the "used" column is
 * the scheme that moved most of the row's messages, summed over ranks from
 * ibx_dt_scheme_count() ("-": none counted). Before each row's timing one
 * message is checked: every element of the receive buffer (data where the
 * type puts it, the gaps untouched); a wrong one is said on stderr and the
 * exit status is 3.
 *
 * Output: a table on stdout (stderr with --json, whose stdout is one JSON
 * document with a row per measurement: bench, scheme, used, columns or
 * block, bytes, value, unit, vs_contig, iters); --svg FILE: latency and
 * bandwidth against columns (log x), one line per scheme, a dashed one
 * for the contiguous reference and a dotted one for the copies, like the
 * paper's Figures 8, 9 and 11, and the Alltoall time against the block
 * size.
 *
 * Length: over 700 lines: one command, five benchmarks with their data
 * checks, and the plot; the plot (svg_*, about 200 lines) is the part that
 * could move to report.c, beside the one lock.c draws.
 */
#include "rma_common.h"

#include "dtype_rdma/dt_xfer.h"
#include "mpil_int.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DT_ROWS	    128
#define DT_COLS	    4096
#define DT_ELEMS    (DT_ROWS * DT_COLS)
#define DT_MAXPTS   16 /* columns or block sizes per run */
#define DT_CONTIG   (-1)
#define DT_COPIES   (-2) /* the two copies of a packing scheme, timed alone */
#define DT_TAG	    0x7d7
#define DT_TAG_ACK  0x7d8
#define DT_SENTINEL 0x5a5a5a5a /* even: never a pattern value (those are odd) */
#define DT_MB	    1e6

typedef enum { B_LAT, B_BW, B_PUT_LAT, B_PUT_BW, B_A2A, B_N } dt_bench_t;

static const char *const bench_names[B_N] = {"vector_lat", "vector_bw", "vector_put_lat",
					     "vector_put_bw", "struct_alltoall"};
static const char *const bench_units[B_N] = {"us", "MB/s", "us", "MB/s", "us"};
static const char *const bench_titles[B_N] = {
    "vector ping-pong latency, one way", "vector bandwidth, window of 100 messages",
    "vector MPI_Put latency, lock/put/unlock", "vector MPI_Put bandwidth, puts per epoch",
    "struct MPI_Alltoall"};

typedef struct dt_opts {
	unsigned benches; /* bit b: dt_bench_t b */
	unsigned schemes; /* bit s: ibx_dt_scheme_t s */
	int cols[DT_MAXPTS], ncols;
	int blocks[DT_MAXPTS], nblocks; /* Alltoall block bytes */
	int iters;			/* latency-type rows (0: per size) */
	int reps;			/* bandwidth rows (0: per size) */
	int window;			/* messages (puts) per bandwidth repetition */
	int a2a_count;			/* struct elements per peer */
	bool json;
	const char *svg;
} dt_opts_t;

typedef struct dt_row {
	dt_bench_t bench;
	int scheme; /* ibx_dt_scheme_t, or DT_CONTIG */
	int x;	    /* columns, or block bytes */
	double value;
} dt_row_t;

typedef struct dt_job {
	const dt_opts_t *o;
	ibtest_report_t rep;
	int rank, size;
	int *sarr, *rarr; /* the 128 x 4096 arrays */
	MPI_Win win;	  /* put: rank 1's array */
	int *warr;
	unsigned seq; /* pattern salt, one per checked message */
	dt_row_t rows[B_N * (IBX_DT_SCHEME_COUNT + 1) * DT_MAXPTS];
	int nrows;
} dt_job_t;

/* ---- small helpers -------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Element @i of what rank @src sends as message @seq: odd, so never the
 * sentinel. */
static int pattern(int src, unsigned seq, size_t i)
{
	uint32_t v = (uint32_t)i * 2654435761u ^ (seq * 40503u << 8) ^ (uint32_t)src * 97u;

	return (int)(v | 1u);
}

static const char *scheme_label(int s)
{
	if (s == DT_COPIES)
		return "copies";
	return s == DT_CONTIG ? "contiguous" : ibx_dt_scheme_name((ibx_dt_scheme_t)s);
}

/* Every rank: the scheme for the next row (DT_CONTIG: auto), then a barrier. */
static void set_scheme(int s)
{
	ibx_status_t st =
	    ibx_dt_scheme_set(mpil_g.ctx, s == DT_CONTIG ? IBX_DT_SCHEME_AUTO : (ibx_dt_scheme_t)s);

	if (st != IBX_OK) {
		fprintf(stderr, "ibtest dtype: ibx_dt_scheme_set(%s): %s\n", scheme_label(s),
			ibx_status_str(st));
		MPI_Abort(MPI_COMM_WORLD, RMA_EXIT_USAGE);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

static void counts(uint64_t c[IBX_DT_SCHEME_COUNT])
{
	for (int s = 0; s < IBX_DT_SCHEME_COUNT; s++)
		c[s] = ibx_dt_scheme_count(mpil_g.ctx, (ibx_dt_scheme_t)s);
}

/* Collective: the scheme that moved most messages since @before, over all
 * ranks; -1 when none was counted. */
static int used_scheme(const uint64_t before[IBX_DT_SCHEME_COUNT])
{
	uint64_t d[IBX_DT_SCHEME_COUNT];
	int best = -1;

	counts(d);
	for (int s = 0; s < IBX_DT_SCHEME_COUNT; s++)
		d[s] -= before[s];
	MPI_Allreduce(MPI_IN_PLACE, d, IBX_DT_SCHEME_COUNT, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (int s = 0; s < IBX_DT_SCHEME_COUNT; s++)
		if (d[s] && (best < 0 || d[s] > d[best]))
			best = s;
	return best;
}

/* Rank 0: the row in the table and the JSON document; kept for the plot. */
static void emit(dt_job_t *j, dt_bench_t b, int s, int used, int x, size_t bytes, double v,
		 int iters)
{
	double ref = NAN;

	if (j->rank != 0)
		return;
	for (int i = 0; i < j->nrows; i++)
		if (j->rows[i].bench == b && j->rows[i].scheme == DT_CONTIG && j->rows[i].x == x)
			ref = j->rows[i].value;
	if (j->nrows < (int)IBX_ARRAY_SIZE(j->rows))
		j->rows[j->nrows++] = (dt_row_t){b, s, x, v};
	fprintf(j->rep.out, " %-16s %-11s %-9s %6d %10zu %12.3f %-5s", bench_names[b],
		scheme_label(s), used >= 0 ? ibx_dt_scheme_name((ibx_dt_scheme_t)used) : "-", x,
		bytes, v, bench_units[b]);
	if (isfinite(ref) && ref > 0 && s != DT_CONTIG)
		fprintf(j->rep.out, " %9.2f\n", v / ref);
	else
		fputs("         -\n", j->rep.out);
	fflush(j->rep.out);
	ibtest_report_json_row(
	    &j->rep,
	    "\"bench\": \"%s\", \"scheme\": \"%s\", \"used\": %s%s%s, \"%s\": %d, \"bytes\": "
	    "%zu, \"value\": %.6g, \"unit\": \"%s\", \"vs_contig\": %.6g, \"iters\": %d",
	    bench_names[b], scheme_label(s), used >= 0 ? "\"" : "",
	    used >= 0 ? ibx_dt_scheme_name((ibx_dt_scheme_t)used) : "null", used >= 0 ? "\"" : "",
	    b == B_A2A ? "block" : "columns", x, bytes, v, bench_units[b],
	    isfinite(ref) && ref > 0 ? v / ref : 1.0, iters);
}

static void header(dt_job_t *j, const char *what)
{
	if (j->rank == 0)
		fprintf(j->rep.out,
			"# %s\n # bench          scheme      used      %6s      bytes        value "
			"unit  vs_contig\n",
			what, "x");
}

/* ---- the vector benchmark --------------------------------------------------------------- */

static int lat_iters(const dt_opts_t *o, size_t bytes)
{
	size_t n = (128u << 20) / (bytes ? bytes : 1);

	return o->iters ? o->iters : n > 1000 ? 1000 : n < 100 ? 100 : (int)n;
}

static int bw_reps(const dt_opts_t *o, size_t bytes)
{
	size_t n = (1024u << 20) / ((size_t)o->window * (bytes ? bytes : 1));

	return o->reps ? o->reps : n > 20 ? 20 : n < 5 ? 5 : (int)n;
}

/* The type of a row: x columns of the array, or 128·x contiguous ints. */
static MPI_Datatype vec_type(int x, bool contig)
{
	MPI_Datatype t;

	if (contig)
		MPI_Type_contiguous(DT_ROWS * x, MPI_INT, &t);
	else
		MPI_Type_vector(DT_ROWS, x, DT_COLS, MPI_INT, &t);
	MPI_Type_commit(&t);
	return t;
}

/* Does @arr hold, as rank @src's message @seq of x columns, what it must?
 * @packed: the sender's data is 128·x contiguous ints (put's origin);
 * @contig: so is the receiver's. Says the first wrong element. */
static bool vec_check(const int *arr, int src, unsigned seq, int x, bool packed, bool contig,
		      const char *what)
{
	for (size_t i = 0; i < DT_ELEMS; i++) {
		size_t row = i / DT_COLS, col = i % DT_COLS, k;
		bool in = contig ? i < (size_t)DT_ROWS * (size_t)x : col < (size_t)x;
		int want;

		k = contig || !packed ? i : row * (size_t)x + col; /* index at the sender */
		want = in ? pattern(src, seq, k) : DT_SENTINEL;
		if (arr[i] != want) {
			fprintf(stderr,
				"ibtest dtype: %s, %d columns: element (%zu, %zu) is %#x, expected "
				"%#x\n",
				what, x, row, col, (unsigned)arr[i], (unsigned)want);
			return false;
		}
	}
	return true;
}

static void fill(int *arr, int src, unsigned seq)
{
	for (size_t i = 0; i < DT_ELEMS; i++)
		arr[i] = pattern(src, seq, i);
}

static void clear(int *arr)
{
	for (size_t i = 0; i < DT_ELEMS; i++)
		arr[i] = DT_SENTINEL;
}

/* One message 0 -> 1 of the row's type, checked at rank 1. */
static bool vec_verify_send(dt_job_t *j, MPI_Datatype t, int x, bool contig)
{
	bool ok = true;

	j->seq++;
	if (j->rank == 0) {
		fill(j->sarr, 0, j->seq);
		MPI_Send(j->sarr, 1, t, 1, DT_TAG, MPI_COMM_WORLD);
	} else if (j->rank == 1) {
		clear(j->rarr);
		MPI_Recv(j->rarr, 1, t, 0, DT_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		ok = vec_check(j->rarr, 0, j->seq, x, false, contig, "send/recv");
	}
	return rma_all_ok(ok);
}

/* Ping-pong; rank 0's one-way time per round trip in @samples (us). */
static void vec_pingpong(dt_job_t *j, MPI_Datatype t, int iters, double *samples)
{
	int warm = (int)rma_warmup((unsigned)iters);

	for (int i = -warm; i < iters; i++) {
		double t0 = MPI_Wtime();

		if (j->rank == 0) {
			MPI_Send(j->sarr, 1, t, 1, DT_TAG, MPI_COMM_WORLD);
			MPI_Recv(j->rarr, 1, t, 1, DT_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(j->rarr, 1, t, 0, DT_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(j->sarr, 1, t, 0, DT_TAG, MPI_COMM_WORLD);
		}
		if (i >= 0)
			samples[i] = (MPI_Wtime() - t0) / 2 * 1e6;
	}
}

/* WINDOW messages back to back, then an ack; rank 0's MB/s per repetition. */
static void vec_stream(dt_job_t *j, MPI_Datatype t, size_t bytes, int reps, double *samples)
{
	MPI_Request *rq = malloc(sizeof(*rq) * (size_t)j->o->window);
	int ack = 0;

	for (int r = -1; r < reps; r++) {
		double t0 = MPI_Wtime();

		for (int k = 0; k < j->o->window; k++) {
			if (j->rank == 0)
				MPI_Isend(j->sarr, 1, t, 1, DT_TAG, MPI_COMM_WORLD, &rq[k]);
			else
				MPI_Irecv(j->rarr, 1, t, 0, DT_TAG, MPI_COMM_WORLD, &rq[k]);
		}
		MPI_Waitall(j->o->window, rq, MPI_STATUSES_IGNORE);
		if (j->rank == 0)
			MPI_Recv(&ack, 1, MPI_INT, 1, DT_TAG_ACK, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		else
			MPI_Send(&ack, 1, MPI_INT, 0, DT_TAG_ACK, MPI_COMM_WORLD);
		if (r >= 0)
			samples[r] = (double)j->o->window * (double)bytes /
				     rma_elapsed(t0, MPI_Wtime()) / DT_MB;
	}
	free(rq);
}

/* One epoch at rank 1 of @nput puts: 128·x ints from rank 0's array start
 * into target type @tt at displacement 0. */
static void put_epoch(dt_job_t *j, MPI_Datatype tt, int x, int nput)
{
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, j->win);
	for (int k = 0; k < nput; k++)
		MPI_Put(j->sarr, DT_ROWS * x, MPI_INT, 1, 0, 1, tt, j->win);
	MPI_Win_unlock(1, j->win);
}

static bool put_verify(dt_job_t *j, MPI_Datatype tt, int x, bool contig)
{
	bool ok = true;

	j->seq++;
	if (j->rank == 1)
		clear(j->warr);
	MPI_Barrier(MPI_COMM_WORLD);
	if (j->rank == 0) {
		fill(j->sarr, 0, j->seq);
		put_epoch(j, tt, x, 1);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (j->rank == 1)
		ok = vec_check(j->warr, 0, j->seq, x, true, contig, "MPI_Put");
	return rma_all_ok(ok);
}

/* Put rows: latency (one put per epoch, us) or bandwidth (WINDOW per
 * epoch, MB/s); rank 0's samples, rank 1 idles in the barrier. */
static void put_measure(dt_job_t *j, MPI_Datatype tt, int x, bool bw, int n, double *samples)
{
	size_t bytes = (size_t)DT_ROWS * (size_t)x * sizeof(int);
	int warm = bw ? 1 : (int)rma_warmup((unsigned)n);

	if (j->rank == 0) {
		for (int i = -warm; i < n; i++) {
			double t0 = MPI_Wtime(), dt;

			put_epoch(j, tt, x, bw ? j->o->window : 1);
			dt = rma_elapsed(t0, MPI_Wtime());
			if (i >= 0)
				samples[i] = bw ? (double)j->o->window * (double)bytes / dt / DT_MB
						: dt * 1e6;
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* One row of the vector benchmark: bench @b, scheme @s (DT_CONTIG: the
 * reference), x columns. Returns 0 or RMA_EXIT_CHECK. */
static int vec_row(dt_job_t *j, dt_bench_t b, int s, int x)
{
	bool contig = s == DT_CONTIG, put = b == B_PUT_LAT || b == B_PUT_BW;
	bool bw = b == B_BW || b == B_PUT_BW;
	size_t bytes = (size_t)DT_ROWS * (size_t)x * sizeof(int);
	int n = bw ? bw_reps(j->o, bytes) : lat_iters(j->o, bytes), used;
	double *samples = calloc((size_t)n, sizeof(double)), v = 0;
	MPI_Datatype t = vec_type(x, contig);
	uint64_t before[IBX_DT_SCHEME_COUNT];
	bool ok;

	set_scheme(s);
	ok = put ? put_verify(j, t, x, contig) : vec_verify_send(j, t, x, contig);
	if (!ok) {
		if (j->rank == 0)
			fprintf(stderr, "ibtest dtype: %s, scheme %s, %d columns: data wrong\n",
				bench_names[b], scheme_label(s), x);
		MPI_Type_free(&t);
		free(samples);
		return RMA_EXIT_CHECK;
	}
	counts(before);
	if (put)
		put_measure(j, t, x, bw, n, samples);
	else if (j->rank <= 1 && bw)
		vec_stream(j, t, bytes, n, samples);
	else if (j->rank <= 1)
		vec_pingpong(j, t, n, samples);
	used = used_scheme(before);
	if (j->rank == 0)
		v = median(samples, n);
	emit(j, b, s, used, x, bytes, v, n);
	MPI_Type_free(&t);
	free(samples);
	return 0;
}

/* The copies row: what the memory allows a scheme that packs at the sender
 * and unpacks at the receiver (generic, bc-spup). Rank 0 alone, the others
 * waiting: MPI_Pack of the x columns of its array into a buffer, then
 * MPI_Unpack of it into the other array, each timed (median of the row's
 * iterations). Latency: pack + unpack, one after the other (us);
 * bandwidth: bytes over the slower of the two, as if overlapped on two
 * cores (MB/s). No messages: a bound, not a scheme. */
static int copies_row(dt_job_t *j, dt_bench_t b, int x)
{
	size_t bytes = (size_t)DT_ROWS * (size_t)x * sizeof(int);
	int n = lat_iters(j->o, bytes);
	double *pk = calloc((size_t)n, sizeof(double)), *up = calloc((size_t)n, sizeof(double));
	void *tmp = malloc(bytes);
	MPI_Datatype t = vec_type(x, false);
	double v = 0;

	if (!pk || !up || !tmp) {
		fprintf(stderr, "ibtest dtype: out of memory\n");
		exit(1);
	}
	if (j->rank == 0) {
		for (int i = -(int)rma_warmup((unsigned)n); i < n; i++) {
			int pos = 0;
			double t0 = MPI_Wtime(), t1;

			MPI_Pack(j->sarr, 1, t, tmp, (int)bytes, &pos, MPI_COMM_SELF);
			t1 = MPI_Wtime();
			pos = 0;
			MPI_Unpack(tmp, (int)bytes, &pos, j->rarr, 1, t, MPI_COMM_SELF);
			if (i >= 0) {
				pk[i] = (t1 - t0) * 1e6;
				up[i] = (MPI_Wtime() - t1) * 1e6;
			}
		}
		if (b == B_LAT) {
			v = median(pk, n) + median(up, n);
		} else {
			double slow = fmax(median(pk, n), median(up, n));

			v = slow > 0 ? (double)bytes / slow : 0; /* bytes per us = MB/s */
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	emit(j, b, DT_COPIES, -1, x, bytes, v, n);
	MPI_Type_free(&t);
	free(tmp);
	free(up);
	free(pk);
	return 0;
}

static int vector_bench(dt_job_t *j, dt_bench_t b)
{
	const dt_opts_t *o = j->o;
	char what[160];
	int rc = 0;

	if (j->size < 2) {
		if (j->rank == 0)
			fprintf(j->rep.out, "# %s: needs 2 ranks (mpilite-run -n 2), skipped\n",
				bench_names[b]);
		return 0;
	}
	snprintf(what, sizeof(what),
		 "%s: MPI_Type_vector(128, x, 4096, MPI_INT), ranks 0 and 1 over %s",
		 bench_titles[b], ibx_peer_path_name(mpil_g.ctx, 1));
	header(j, what);
	for (int c = 0; c < o->ncols && !rc; c++) {
		rc = vec_row(j, b, DT_CONTIG, o->cols[c]);
		if (!rc && (b == B_LAT || b == B_BW))
			rc = copies_row(j, b, o->cols[c]);
		for (int s = 0; s < IBX_DT_SCHEME_COUNT && !rc; s++)
			if (o->schemes & (1u << s))
				rc = vec_row(j, b, s, o->cols[c]);
	}
	return rc;
}

/* ---- struct Alltoall --------------------------------------------------------------------- */

/* struct { B/4 MPI_INT at 0, B/4 MPI_FLOAT at 2B } resized to 4B */
static MPI_Datatype a2a_type(int block)
{
	int bl[2] = {block / 4, block / 4};
	MPI_Aint d[2] = {0, 2 * (MPI_Aint)block};
	MPI_Datatype ty[2] = {MPI_INT, MPI_FLOAT}, st, t;

	MPI_Type_create_struct(2, bl, d, ty, &st);
	MPI_Type_create_resized(st, 0, 4 * (MPI_Aint)block, &t);
	MPI_Type_free(&st);
	MPI_Type_commit(&t);
	return t;
}

/* Value of int @q of block @b of element @e from @src to @dst. */
static int a2a_value(int src, int dst, unsigned seq, size_t e, int b, int q)
{
	return pattern(src, seq, ((e * 2 + (size_t)b) << 20) + ((size_t)dst << 12) + (size_t)q);
}

/* Fills the send buffer (struct layout, or the same ints packed), clears
 * the receive buffer. */
static void a2a_prepare(dt_job_t *j, int *sb, int *rb, int block, bool contig, size_t ints)
{
	int k = j->o->a2a_count, per = block / 4;

	for (size_t i = 0; i < ints; i++) {
		sb[i] = DT_SENTINEL;
		rb[i] = DT_SENTINEL;
	}
	for (int dst = 0; dst < j->size; dst++)
		for (size_t e = 0; e < (size_t)k; e++)
			for (int b = 0; b < 2; b++)
				for (int q = 0; q < per; q++) {
					size_t at =
					    contig
						? (((size_t)dst * (size_t)k + e) * 2 + (size_t)b) *
							  (size_t)per +
						      (size_t)q
						: ((size_t)dst * (size_t)k + e) * (size_t)per * 4 +
						      (size_t)b * (size_t)per * 2 + (size_t)q;

					sb[at] = a2a_value(j->rank, dst, j->seq, e, b, q);
				}
}

static bool a2a_check(dt_job_t *j, const int *rb, int block, bool contig, size_t ints)
{
	int k = j->o->a2a_count, per = block / 4;
	size_t per_peer = contig ? (size_t)k * 2 * (size_t)per : (size_t)k * 4 * (size_t)per;

	for (size_t i = 0; i < ints; i++) {
		size_t src = i / per_peer, off = i % per_peer, e, b, q;
		int want = DT_SENTINEL;

		if (contig) {
			e = off / (2 * (size_t)per);
			b = off / (size_t)per % 2;
			q = off % (size_t)per;
			want = a2a_value((int)src, j->rank, j->seq, e, (int)b, (int)q);
		} else {
			e = off / (4 * (size_t)per);
			b = off / (size_t)per % 4; /* 0 data, 1 gap, 2 data, 3 gap */
			q = off % (size_t)per;
			if (b % 2 == 0)
				want = a2a_value((int)src, j->rank, j->seq, e, (int)b / 2, (int)q);
		}
		if (rb[i] != want) {
			fprintf(
			    stderr,
			    "ibtest dtype [rank %d]: alltoall, block %d: int %zu (from rank %zu) "
			    "is %#x, expected %#x\n",
			    j->rank, block, i, src, (unsigned)rb[i], (unsigned)want);
			return false;
		}
	}
	return true;
}

static int a2a_row(dt_job_t *j, int s, int block)
{
	bool contig = s == DT_CONTIG;
	int k = j->o->a2a_count, cnt = contig ? 2 * k * block / 4 : k, used;
	size_t per_peer = (size_t)2 * (size_t)block * (size_t)k; /* packed bytes */
	size_t ints = (size_t)j->size * (size_t)k * (size_t)block / 4 * (contig ? 2 : 4);
	size_t n0 = (32u << 20) / (per_peer * (size_t)j->size);
	int n = j->o->iters ? j->o->iters : n0 > 500 ? 500 : n0 < 20 ? 20 : (int)n0;
	int *sb = malloc(ints * sizeof(int)), *rb = malloc(ints * sizeof(int));
	double *t = calloc((size_t)n, sizeof(double)), v = 0;
	MPI_Datatype ty = contig ? MPI_INT : a2a_type(block);
	uint64_t before[IBX_DT_SCHEME_COUNT];
	bool ok;

	if (!sb || !rb || !t) {
		fprintf(stderr, "ibtest dtype: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	set_scheme(s);
	j->seq++;
	a2a_prepare(j, sb, rb, block, contig, ints);
	MPI_Alltoall(sb, cnt, ty, rb, cnt, ty, MPI_COMM_WORLD);
	ok = rma_all_ok(a2a_check(j, rb, block, contig, ints));
	if (ok) {
		counts(before);
		for (int i = -(int)rma_warmup((unsigned)n); i < n; i++) {
			double t0;

			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
			MPI_Alltoall(sb, cnt, ty, rb, cnt, ty, MPI_COMM_WORLD);
			if (i >= 0)
				t[i] = (MPI_Wtime() - t0) * 1e6;
		}
		used = used_scheme(before);
		MPI_Reduce(j->rank ? t : MPI_IN_PLACE, t, n, MPI_DOUBLE, MPI_MAX, 0,
			   MPI_COMM_WORLD);
		if (j->rank == 0)
			v = median(t, n);
		emit(j, B_A2A, s, used, block, per_peer, v, n);
	} else if (j->rank == 0) {
		fprintf(stderr, "ibtest dtype: alltoall, scheme %s, block %d: data wrong\n",
			scheme_label(s), block);
	}
	if (!contig)
		MPI_Type_free(&ty);
	free(sb);
	free(rb);
	free(t);
	return ok ? 0 : RMA_EXIT_CHECK;
}

static int a2a_bench(dt_job_t *j)
{
	char what[200];
	int rc = 0;

	snprintf(what, sizeof(what),
		 "struct MPI_Alltoall, %d ranks, %d elements per peer of struct { B bytes MPI_INT, "
		 "gap B, B bytes MPI_FLOAT, gap B }; x = B, bytes per peer = 2·B·%d; us",
		 j->size, j->o->a2a_count, j->o->a2a_count);
	header(j, what);
	for (int c = 0; c < j->o->nblocks && !rc; c++) {
		rc = a2a_row(j, DT_CONTIG, j->o->blocks[c]);
		for (int s = 0; s < IBX_DT_SCHEME_COUNT && !rc; s++)
			if (j->o->schemes & (1u << s))
				rc = a2a_row(j, s, j->o->blocks[c]);
	}
	return rc;
}

/* ---- the plot ---------------------------------------------------------------------------- */

/*
 * One panel per benchmark measured, stacked: x = columns (or block bytes)
 * on a log2 axis with a tick at every point measured; y logarithmic for
 * times (they span decades: 1 column to 2048 is 4096 x the bytes), linear
 * from 0 for bandwidth. One coloured line per scheme, the contiguous
 * reference dashed grey, a legend at the right.
 */
#define P_W 760.0
#define P_H 360.0
#define P_L 80.0
#define P_R 160.0
#define P_T 40.0
#define P_B 52.0

static const char *const scheme_colours[IBX_DT_SCHEME_COUNT] = {"#1f77b4", "#d62728", "#2ca02c",
								"#ff7f0e", "#9467bd", "#8c564b"};

typedef struct axis {
	double lo, hi; /* data range on the axis (log10 for log axes) */
	bool log;
} axis_t;

static double ax_frac(const axis_t *a, double v)
{
	double f;

	if (a->log)
		v = v > 0 ? log10(v) : a->lo;
	f = a->hi > a->lo ? (v - a->lo) / (a->hi - a->lo) : 0.5;
	return f < 0 ? 0 : f > 1 ? 1 : f;
}

/* 1, 2 or 5 x 10^k at or above @v */
static double nice_ceil(double v)
{
	double d = pow(10, floor(log10(v))), m = v / d;

	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * d;
}

static void svg_panel(FILE *f, const dt_job_t *j, dt_bench_t b, double top)
{
	double x0 = P_L, x1 = P_W - P_R, y0 = top + P_T, y1 = top + P_H - P_B;
	double vmin = 0, vmax = 0;
	int xmin = 1 << 30, xmax = 0, line = 0;
	bool logy = b != B_BW && b != B_PUT_BW;
	axis_t ax, ay;
	char xs[DT_MAXPTS * 8];

	for (int i = 0; i < j->nrows; i++) {
		const dt_row_t *r = &j->rows[i];

		if (r->bench != b)
			continue;
		xmin = r->x < xmin ? r->x : xmin;
		xmax = r->x > xmax ? r->x : xmax;
		if (r->value > 0 && (vmin == 0 || r->value < vmin))
			vmin = r->value;
		vmax = r->value > vmax ? r->value : vmax;
	}
	if (xmax == 0 || vmax <= 0)
		return;
	ax = (axis_t){log10(xmin), log10(xmax), true};
	if (logy) {
		ay = (axis_t){floor(log10(vmin)), ceil(log10(vmax)), true};
		if (ay.hi <= ay.lo)
			ay.hi = ay.lo + 1;
	} else {
		ay = (axis_t){0, nice_ceil(vmax), false};
	}
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"14\">ibtest dtype: %s", x0, top + 24,
		bench_titles[b]);
	if (b == B_A2A)
		fprintf(f, ", %d ranks, %d elements per peer", j->size, j->o->a2a_count);
	else
		fprintf(f, ", ranks 0 and 1 over %s", ibx_peer_path_name(mpil_g.ctx, 1));
	fputs("</text>\n", f);
	/* y grid and labels */
	for (int k = 0; k <= (logy ? (int)(ay.hi - ay.lo) : 5); k++) {
		double v = logy ? pow(10, ay.lo + k) : ay.hi * k / 5;
		double y = y1 - ax_frac(&ay, v) * (y1 - y0);

		fprintf(f,
			"<path d=\"M%.0f %.1f H%.0f\" stroke=\"#dddddd\"/>\n<text x=\"%.0f\" "
			"y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			x0, y, x1, x0 - 6, y + 4, v);
	}
	/* x ticks: every value measured */
	xs[0] = 0;
	for (int i = 0; i < j->nrows; i++) {
		const dt_row_t *r = &j->rows[i];
		char tag[16];
		double x;

		snprintf(tag, sizeof(tag), " %d ", r->x);
		if (r->bench != b || strstr(xs, tag))
			continue;
		if (strlen(xs) + strlen(tag) < sizeof(xs))
			strcat(xs, tag);
		x = x0 + ax_frac(&ax, r->x) * (x1 - x0);
		fprintf(f,
			"<path d=\"M%.1f %.0f v5\" stroke=\"black\"/>\n<text x=\"%.1f\" y=\"%.0f\" "
			"text-anchor=\"middle\" font-size=\"10\">%d</text>\n",
			x, y1, x, y1 + 17, r->x);
	}
	fprintf(f, "<path d=\"M%.0f %.0f V%.0f H%.0f\" stroke=\"black\" fill=\"none\"/>\n", x0, y0,
		y1, x1);
	fprintf(f,
		"<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s (log scale)</text>\n"
		"<text transform=\"translate(18 %.0f) rotate(-90)\" text-anchor=\"middle\">%s"
		"%s</text>\n",
		(x0 + x1) / 2, y1 + 38, b == B_A2A ? "block size B (bytes)" : "columns x",
		(y0 + y1) / 2, bench_units[b], logy ? " (log scale)" : "");
	/* one line per scheme, the references (the copies, contiguous) first */
	for (int s = DT_COPIES; s < IBX_DT_SCHEME_COUNT; s++) {
		const char *c = s == DT_COPIES	 ? "#000000"
				: s == DT_CONTIG ? "#777777"
						 : scheme_colours[s];
		const char *dash = s == DT_COPIES ? "2,3" : s == DT_CONTIG ? "6,4" : "none";
		double ly = y0 + 6 + 18.0 * line, lx = x1 + 16;
		bool first = true;

		for (int i = 0; i < j->nrows; i++) {
			const dt_row_t *r = &j->rows[i];

			if (r->bench != b || r->scheme != s)
				continue;
			if (first)
				fprintf(f,
					"<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
					"stroke-dasharray=\"%s\" d=\"",
					c, dash);
			fprintf(f, "%s%.1f %.1f ", first ? "M" : "L",
				x0 + ax_frac(&ax, r->x) * (x1 - x0),
				y1 - ax_frac(&ay, r->value) * (y1 - y0));
			first = false;
		}
		if (first)
			continue;
		fputs("\"/>\n", f);
		for (int i = 0; i < j->nrows; i++) {
			const dt_row_t *r = &j->rows[i];

			if (r->bench == b && r->scheme == s)
				fprintf(f,
					"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n",
					x0 + ax_frac(&ax, r->x) * (x1 - x0),
					y1 - ax_frac(&ay, r->value) * (y1 - y0), c);
		}
		fprintf(f,
			"<path d=\"M%.0f %.1f h24\" stroke=\"%s\" stroke-width=\"1.5\" "
			"stroke-dasharray=\"%s\"/>\n<text x=\"%.0f\" y=\"%.1f\">%s</text>\n",
			lx, ly, c, dash, lx + 30, ly + 4, scheme_label(s));
		line++;
	}
}

static void svg_write(const dt_job_t *j, const char *file)
{
	int np = 0, k = 0;
	FILE *f;

	for (int b = 0; b < B_N; b++)
		for (int i = 0; i < j->nrows; i++)
			if (j->rows[i].bench == (dt_bench_t)b) {
				np++;
				break;
			}
	f = fopen(file, "w");
	if (!f) {
		perror(file);
		return;
	}
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" "
		"height=\"100%%\" fill=\"white\"/>\n",
		P_W, P_H * (np ? np : 1));
	for (int b = 0; b < B_N; b++)
		for (int i = 0; i < j->nrows; i++)
			if (j->rows[i].bench == (dt_bench_t)b) {
				svg_panel(f, j, (dt_bench_t)b, P_H * k++);
				break;
			}
	fputs("</svg>\n", f);
	fclose(f);
}

/* ---- options ----------------------------------------------------------------------------- */

/* "1,2,4" or "A-B" (the powers of two from A to B); every value in
 * [min, max] and a multiple of @mult. Returns the count, or -1. */
static int parse_points(char *arg, int min, int max, int mult, bool sizes, int *out)
{
	char *tok, *save, *dash;
	int n = 0;

	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t a, b;

		dash = strchr(tok, '-');
		if (dash)
			*dash = 0;
		if (ibtest_parse_size(tok, (size_t)min, (size_t)max, &a) ||
		    (dash && ibtest_parse_size(dash + 1, a, (size_t)max, &b)))
			return -1;
		if (!sizes && (strpbrk(tok, "kKmMgG") || (dash && strpbrk(dash + 1, "kKmMgG"))))
			return -1;
		for (size_t v = a; v <= (dash ? b : a); v *= 2) {
			if (n == DT_MAXPTS || v % (size_t)mult)
				return -1;
			out[n++] = (int)v;
		}
	}
	return n;
}

static int usage(FILE *f, int rc)
{
	fprintf(f,
		"usage: mpilite-run -n N ibtest dtype [options]\n"
		"  derived-datatype transfer per scheme (Wu, Wyckoff and Panda 2003)\n"
		"  -b, --bench LIST     lat,bw,put,alltoall or all (default lat,bw,alltoall)\n"
		"      --put            add the vector MPI_Put rows (= -b ...,put)\n"
		"  -S, --scheme LIST    auto,generic,bc-spup,rwg-up,p-rrs,multi-w or all (default "
		"all)\n"
		"  -c, --columns LIST   vector columns x, e.g. 1,8,64 or 1-2048 (powers of two; "
		"default 1-2048)\n"
		"  -B, --blocks LIST    Alltoall block bytes, multiples of 4 (default 4-4k)\n"
		"  -k, --count N        Alltoall struct elements per peer (default 8)\n"
		"  -n, --iters N        ping-pongs, put epochs, Alltoalls per row (default per "
		"size)\n"
		"  -r, --reps N         bandwidth repetitions per row (default per size)\n"
		"  -W, --window N       messages or puts per bandwidth repetition (default 100)\n"
		"      --json           rows as one JSON document on stdout (table on stderr)\n"
		"      --svg FILE       plots against columns / block size, a line per scheme\n"
		"      --calibrate      instead: measure and store the datatype selector's\n"
		"                       thresholds for this device (= ibtest dtype_calibrate)\n"
		"  vector: MPI_Type_vector(128, x, 4096, MPI_INT) of a 128 x 4096 int array, ranks "
		"0 and 1;\n"
		"  every row also measured contiguous (the same bytes), vs_contig = row / that;\n"
		"  lat and bw add a 'copies' row: rank 0 alone packs and unpacks the same columns\n"
		"  (latency: pack + unpack; bandwidth: bytes / the slower), a packing scheme's "
		"bound\n");
	return rc;
}

static int parse_opts(int argc, char **argv, dt_opts_t *o)
{
	static const struct option lopts[] = {{"bench", required_argument, NULL, 'b'},
					      {"put", no_argument, NULL, 'P'},
					      {"scheme", required_argument, NULL, 'S'},
					      {"columns", required_argument, NULL, 'c'},
					      {"blocks", required_argument, NULL, 'B'},
					      {"count", required_argument, NULL, 'k'},
					      {"iters", required_argument, NULL, 'n'},
					      {"reps", required_argument, NULL, 'r'},
					      {"window", required_argument, NULL, 'W'},
					      {"json", no_argument, NULL, 'j'},
					      {"svg", required_argument, NULL, 's'},
					      {"help", no_argument, NULL, 'h'},
					      {NULL, 0, NULL, 0}};
	char cols[] = "1-2048", blocks[] = "4-4096", *tok, *save, *end;
	int opt;
	long v;

	*o = (dt_opts_t){.benches = 1u << B_LAT | 1u << B_BW | 1u << B_A2A,
			 .schemes = (1u << IBX_DT_SCHEME_COUNT) - 1,
			 .window = 100,
			 .a2a_count = 8};
	o->ncols = parse_points(cols, 1, DT_COLS, 1, false, o->cols);
	o->nblocks = parse_points(blocks, 4, 1 << 20, 4, true, o->blocks);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "b:S:c:B:k:n:r:W:h", lopts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			o->benches = 0;
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				if (!strcmp(tok, "lat"))
					o->benches |= 1u << B_LAT;
				else if (!strcmp(tok, "bw"))
					o->benches |= 1u << B_BW;
				else if (!strcmp(tok, "put"))
					o->benches |= 1u << B_PUT_LAT | 1u << B_PUT_BW;
				else if (!strcmp(tok, "alltoall"))
					o->benches |= 1u << B_A2A;
				else if (!strcmp(tok, "all"))
					o->benches = (1u << B_N) - 1;
				else
					goto bad;
			}
			break;
		case 'P': o->benches |= 1u << B_PUT_LAT | 1u << B_PUT_BW; break;
		case 'S':
			o->schemes = 0;
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				ibx_dt_scheme_t s;

				if (!strcmp(tok, "all"))
					o->schemes = (1u << IBX_DT_SCHEME_COUNT) - 1;
				else if (ibx_dt_scheme_parse(tok, &s) == IBX_OK)
					o->schemes |= 1u << s;
				else
					goto bad;
			}
			break;
		case 'c':
			if ((o->ncols = parse_points(optarg, 1, DT_COLS, 1, false, o->cols)) <= 0)
				goto bad;
			break;
		case 'B':
			if ((o->nblocks = parse_points(optarg, 4, 1 << 20, 4, true, o->blocks)) <=
			    0)
				goto bad;
			break;
		case 'k':
		case 'n':
		case 'r':
		case 'W':
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > 1000000)
				goto bad;
			*(opt == 'k'   ? &o->a2a_count
			  : opt == 'n' ? &o->iters
			  : opt == 'r' ? &o->reps
				       : &o->window) = (int)v;
			break;
		case 'j': o->json = true; break;
		case 's': o->svg = optarg; break;
		case 'h': return usage(stdout, 1);
		default: return usage(stderr, RMA_EXIT_USAGE);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ibtest dtype: unexpected argument '%s'\n", argv[optind]);
		return usage(stderr, RMA_EXIT_USAGE);
	}
	return 0;
bad:
	fprintf(stderr, "ibtest dtype: bad value '%s' for -%c\n", optarg, opt);
	return usage(stderr, RMA_EXIT_USAGE);
}

/* ---- main -------------------------------------------------------------------------------- */

static int dtype_main(int argc, char **argv)
{
	static const dt_bench_t order[] = {B_LAT, B_BW, B_PUT_LAT, B_PUT_BW, B_A2A};
	dt_opts_t o;
	dt_job_t *j;
	int rc;

	/* --calibrate is another program (dtype_calib.c), with its own MPI_Init */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--calibrate"))
			return ibtest_dtype_calibrate(argc, argv);
	if ((rc = rma_init("dtype", 0, &argc, &argv, &(int){0}, &(int){0})) != 0)
		return rc;
	/* options after MPI_Init: every rank parses the same, rank 0 speaks */
	rc = parse_opts(argc, argv, &o);
	j = calloc(1, sizeof(*j));
	if (!j) {
		MPI_Finalize();
		return 2;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &j->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &j->size);
	if (rc) {
		free(j);
		MPI_Finalize();
		return rc == 1 ? 0 : rc;
	}
	j->o = &o;
	ibtest_report_init(&j->rep, "dtype", o.json, false);
	if (posix_memalign((void **)&j->sarr, 4096, DT_ELEMS * sizeof(int)) ||
	    posix_memalign((void **)&j->rarr, 4096, DT_ELEMS * sizeof(int))) {
		fprintf(stderr, "ibtest dtype: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	clear(j->sarr);
	clear(j->rarr);
	if ((o.benches & (1u << B_PUT_LAT | 1u << B_PUT_BW)) && j->size >= 2) {
		MPI_Win_allocate(DT_ELEMS * sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &j->warr,
				 &j->win);
		clear(j->warr);
	}
	for (size_t b = 0; b < IBX_ARRAY_SIZE(order) && !rc; b++) {
		if (!(o.benches & (1u << order[b])))
			continue;
		rc = order[b] == B_A2A ? a2a_bench(j) : vector_bench(j, order[b]);
	}
	set_scheme(IBX_DT_SCHEME_AUTO);
	if (j->rank == 0) {
		ibtest_report_end(&j->rep);
		if (o.svg)
			svg_write(j, o.svg);
	}
	if ((o.benches & (1u << B_PUT_LAT | 1u << B_PUT_BW)) && j->size >= 2)
		MPI_Win_free(&j->win);
	free(j->sarr);
	free(j->rarr);
	free(j);
	MPI_Finalize();
	return rc;
}

IBTEST_COMMAND("dtype",
	       "derived-datatype transfer schemes: vector latency/bandwidth/put, struct "
	       "Alltoall (Wu, Wyckoff and Panda 2003)",
	       dtype_main);
