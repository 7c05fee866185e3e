/*
 * dtype_vec.c — the vector benchmark of Wu, Wyckoff and Panda 2003 in plain
 * MPI, so that every MPI runs the same code: a 128 x 4096 int array
 * (row-major) on ranks 0 and 1, the message x columns of it,
 * MPI_Type_vector(128, x, 4096, MPI_INT), and the contiguous message of the
 * same bytes (128·x ints) for reference.
 *
 *   lat   ping-pong of one message (rank 0 sends, rank 1 returns it); the
 *         figure is half the round trip, median over the iterations (usec)
 *   bw    rank 0: 100 x MPI_Isend + MPI_Waitall, then a 4-byte ack from
 *         rank 1, which posts 100 x MPI_Irecv into the same buffer; MB/s
 *         (10^6 bytes), median over repetitions
 *   put   rank 0: MPI_Win_lock(EXCLUSIVE, 1), MPI_Put of 128·x contiguous
 *         ints into the vector type at rank 1 (an MPI_Win_allocate window
 *         holding its array), MPI_Win_unlock; median per epoch (usec).
 *         Rank 1 waits in MPI_Barrier meanwhile.
 *
 *   dtype_vec [-m lat,bw,put] [-c 1,2,4,...] [-n ITERS] [-r REPS]
 *
 * Before each row one message (or put) is checked element by element at
 * rank 1: the columns carry the sender's values, the rest of the array is
 * untouched; a wrong element prints an error and the exit status is 3.
 *
 * Output (rank 0), '#' lines are comments:
 *   <mode> vector|contig <columns> <bytes> <median> <best> <samples>
 * (usec for lat and put, MB/s for bw). Standard MPI only: built against
 * mpi-lite, Open MPI and MPICH by bench/dtype.sh.
 */
#include <mpi.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define V_ROWS	     128
#define V_COLS	     4096
#define V_ELEMS	     (V_ROWS * V_COLS)
#define V_TAG	     11
#define V_ACK	     12
#define V_WINDOW     100
#define V_MAXCOLS    16
#define V_EXIT_CHECK 3
#define V_SENTINEL   0x5a5a5a5a

enum { M_LAT, M_BW, M_PUT, M_N };
static const char *const mode_names[M_N] = {"lat", "bw", "put"};

static int rank;
static int *sarr, *rarr, *warr;
static MPI_Win win;

/* odd, so never the sentinel */
static int val(unsigned seq, size_t i)
{
	return (int)(((unsigned)i * 2654435761u ^ seq * 40503u) | 1u);
}

static MPI_Datatype make_type(int x, int contig)
{
	MPI_Datatype t;

	if (contig)
		MPI_Type_contiguous(V_ROWS * x, MPI_INT, &t);
	else
		MPI_Type_vector(V_ROWS, x, V_COLS, MPI_INT, &t);
	MPI_Type_commit(&t);
	return t;
}

/* Rank 1: @arr after a message of x columns (@packed: the sender's data was
 * 128·x contiguous ints) of sequence @seq. 1 if right. */
static int check(const int *arr, unsigned seq, int x, int packed, int contig)
{
	for (size_t i = 0; i < V_ELEMS; i++) {
		size_t row = i / V_COLS, col = i % V_COLS;
		int in = contig ? i < (size_t)V_ROWS * (size_t)x : col < (size_t)x;
		int want =
		    in ? val(seq, contig || !packed ? i : row * (size_t)x + col) : V_SENTINEL;

		if (arr[i] != want) {
			fprintf(
			    stderr,
			    "dtype_vec: %d columns%s: element (%zu, %zu) is %#x, expected %#x\n", x,
			    contig ? " (contiguous)" : "", row, col, (unsigned)arr[i],
			    (unsigned)want);
			return 0;
		}
	}
	return 1;
}

static void prepare(unsigned seq, int *dst_rank1)
{
	if (rank == 0)
		for (size_t i = 0; i < V_ELEMS; i++)
			sarr[i] = val(seq, i);
	else if (rank == 1)
		for (size_t i = 0; i < V_ELEMS; i++)
			dst_rank1[i] = V_SENTINEL;
}

/* One checked message (or put); every rank learns the outcome. */
static int verify(int mode, MPI_Datatype t, int x, int contig, unsigned seq)
{
	int ok = 1;

	prepare(seq, mode == M_PUT ? warr : rarr);
	MPI_Barrier(MPI_COMM_WORLD);
	if (mode == M_PUT) {
		if (rank == 0) {
			MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
			MPI_Put(sarr, V_ROWS * x, MPI_INT, 1, 0, 1, t, win);
			MPI_Win_unlock(1, win);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 1)
			ok = check(warr, seq, x, 1, contig);
	} else if (rank == 0) {
		MPI_Send(sarr, 1, t, 1, V_TAG, MPI_COMM_WORLD);
	} else if (rank == 1) {
		MPI_Recv(rarr, 1, t, 0, V_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		ok = check(rarr, seq, x, 0, contig);
	}
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	return ok;
}

/* n samples at rank 0 (usec per one-way or epoch, MB/s for bw), warm-up first */
static void measure(int mode, MPI_Datatype t, int x, int n, double *s)
{
	size_t bytes = (size_t)V_ROWS * (size_t)x * sizeof(int);
	static MPI_Status st[V_WINDOW]; /* not MPI_STATUSES_IGNORE: gcc's
					 * -Wstringop-overflow on MPICH's mpi.h */
	MPI_Request rq[V_WINDOW];
	int warm = mode == M_BW ? 1 : n / 10 + 1, ack = 0;

	for (int i = -warm; i < n; i++) {
		double t0 = MPI_Wtime(), dt;

		if (mode == M_LAT && rank == 0) {
			MPI_Send(sarr, 1, t, 1, V_TAG, MPI_COMM_WORLD);
			MPI_Recv(rarr, 1, t, 1, V_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (mode == M_LAT && rank == 1) {
			MPI_Recv(rarr, 1, t, 0, V_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(sarr, 1, t, 0, V_TAG, MPI_COMM_WORLD);
		} else if (mode == M_BW && rank <= 1) {
			for (int k = 0; k < V_WINDOW; k++) {
				if (rank == 0)
					MPI_Isend(sarr, 1, t, 1, V_TAG, MPI_COMM_WORLD, &rq[k]);
				else
					MPI_Irecv(rarr, 1, t, 0, V_TAG, MPI_COMM_WORLD, &rq[k]);
			}
			MPI_Waitall(V_WINDOW, rq, st);
			if (rank == 0)
				MPI_Recv(&ack, 1, MPI_INT, 1, V_ACK, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
			else
				MPI_Send(&ack, 1, MPI_INT, 0, V_ACK, MPI_COMM_WORLD);
		} else if (mode == M_PUT && rank == 0) {
			MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
			MPI_Put(sarr, V_ROWS * x, MPI_INT, 1, 0, 1, t, win);
			MPI_Win_unlock(1, win);
		}
		dt = MPI_Wtime() - t0;
		if (dt <= 0)
			dt = 1e-9;
		if (i >= 0)
			s[i] = mode == M_LAT  ? dt / 2 * 1e6
			       : mode == M_BW ? (double)V_WINDOW * (double)bytes / dt / 1e6
					      : dt * 1e6;
	}
	if (mode == M_PUT)
		MPI_Barrier(MPI_COMM_WORLD);
}

static int default_iters(int mode, size_t bytes)
{
	size_t n = (mode == M_BW ? (512u << 20) / (V_WINDOW * bytes) : (128u << 20) / bytes);
	size_t lo = mode == M_BW ? 5 : 100, hi = mode == M_BW ? 20 : 1000;

	return (int)(n < lo ? lo : n > hi ? hi : n);
}

static void usage(void)
{
	fprintf(
	    stderr,
	    "usage: dtype_vec [-m lat,bw,put] [-c 1,2,4,...] [-n ITERS] [-r REPS]\n"
	    "  MPI_Type_vector(128, x, 4096, MPI_INT) of a 128 x 4096 int array, ranks 0 and 1,\n"
	    "  against 128*x contiguous ints; -n: iterations of lat and put, -r: bw repetitions\n");
}

int main(int argc, char **argv)
{
	int cols[V_MAXCOLS], ncols = 0, modes = 1 << M_LAT | 1 << M_PUT, iters = 0, reps = 0;
	int size, opt, rc = 0;
	unsigned seq = 0;
	char *tok, *save;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int x = 1; x <= 2048; x *= 2)
		cols[ncols++] = x;
	while ((opt = getopt(argc, argv, "m:c:n:r:h")) != -1) {
		switch (opt) {
		case 'm':
			modes = 0;
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				int m = 0;

				while (m < M_N && strcmp(tok, mode_names[m]))
					m++;
				if (m == M_N)
					goto bad;
				modes |= 1 << m;
			}
			break;
		case 'c':
			ncols = 0;
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save))
				if (ncols == V_MAXCOLS || bench_parse_int(tok, 1, &cols[ncols]) ||
				    cols[ncols++] > V_COLS)
					goto bad;
			break;
		case 'n':
			if (bench_parse_int(optarg, 1, &iters))
				goto bad;
			break;
		case 'r':
			if (bench_parse_int(optarg, 1, &reps))
				goto bad;
			break;
		default: goto bad;
		}
	}
	if (size < 2)
		goto bad;
	sarr = bench_alloc(V_ELEMS * sizeof(int), 0);
	rarr = bench_alloc(V_ELEMS * sizeof(int), 0);
	if (!sarr || !rarr) {
		fprintf(stderr, "dtype_vec: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (modes & 1 << M_PUT)
		MPI_Win_allocate(V_ELEMS * sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &warr,
				 &win);
	if (rank == 0)
		printf(
		    "# dtype_vec: MPI_Type_vector(128, x, 4096, MPI_INT) of a 128 x 4096 int "
		    "array, ranks 0 and 1 of %d\n# mode layout columns bytes median best samples "
		    "(lat, put: usec; bw: MB/s)\n",
		    size);
	for (int m = 0; m < M_N && !rc; m++) {
		if (!(modes & 1 << m))
			continue;
		for (int c = 0; c < ncols && !rc; c++) {
			for (int contig = 1; contig >= 0 && !rc; contig--) {
				int x = cols[c];
				size_t bytes = (size_t)V_ROWS * (size_t)x * sizeof(int);
				int n = m == M_BW ? (reps ? reps : default_iters(m, bytes))
						  : (iters ? iters : default_iters(m, bytes));
				double *s = calloc((size_t)n, sizeof(double)), med, best;
				MPI_Datatype t = make_type(x, contig);

				if (!verify(m, t, x, contig, ++seq)) {
					rc = V_EXIT_CHECK;
				} else {
					measure(m, t, x, n, s);
					if (rank == 0) {
						med = bench_median(s, (size_t)n); /* sorts */
						best = m == M_BW ? s[n - 1] : s[0];
						printf("%s %s %d %zu %.3f %.3f %d\n", mode_names[m],
						       contig ? "contig" : "vector", x, bytes, med,
						       best, n);
						fflush(stdout);
					}
				}
				MPI_Type_free(&t);
				free(s);
			}
		}
	}
	if (modes & 1 << M_PUT)
		MPI_Win_free(&win);
	free(sarr);
	free(rarr);
	MPI_Finalize();
	return rc;
bad:
	if (rank == 0)
		usage();
	MPI_Finalize();
	return 2;
}
