/*
 * io_atomic.c — MPI_File_write_at in atomic mode: every rank writes the
 * same 128 KiB region of one file, in 16 pieces of 8 KiB, with
 * MPI_File_set_atomicity(fh, 1), so each write call must land whole: after
 * concurrent calls, every byte range one call covers holds one rank's data
 * (MPI-3.1 §13.6.1). Modes (-m):
 *
 *   file   one call; the file view is a vector filetype of 16 blocks of
 *          8 KiB with a stride of 16 KiB (the pieces are noncontiguous in
 *          the file, 256 KiB spanned), memory contiguous
 *   mem    one call; memory is 16 blocks of 8 KiB with a stride of 16 KiB
 *          (a vector memory type), the file range contiguous (128 KiB)
 *   calls  16 calls of 8 KiB each, contiguous in file (the 128 KiB region)
 *
 * Every rank writes its own pattern (its rank in every byte of the piece
 * plus the piece number, so a torn call is visible); the timing loop is
 * calibrated to the budget (-t), median over samples of the mean time per
 * write (one call; for "calls" the 16 calls together) in usec, the slowest
 * rank's time per sample.
 *
 * Check, after the timed loop of each mode: a barrier, then one more round
 * in which every rank writes at once; then every rank reads the file back
 * and rank 0 looks at it: in "file" and "mem" mode the whole region written
 * by one call must come from one rank; in "calls" mode each 8 KiB piece
 * (one call) must come from one rank. A mixed region is printed as
 * "wrong" (the line still has the time) and the exit status is 3. The check
 * is repeated (-r rounds) because interleaving depends on timing.
 *
 *   io_atomic [-m LIST] [-t SECONDS] [-r ROUNDS] [-d DIR]
 *
 * Output (rank 0): "# ..." comments, then per mode
 *   "<mode> <bytes> <pieces> <median_us> <best_us> <samples> <ok|wrong> <bad_rounds>/<rounds>"
 * The file is in DIR (default $TMPDIR, else /tmp) and removed at the end.
 * Standard MPI only: built against mpi-lite, Open MPI and MPICH.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"

#define IO_PIECE      8192
#define IO_PIECES     16
#define IO_BYTES      (IO_PIECE * IO_PIECES)
#define IO_SAMPLES    50
#define IO_EXIT_CHECK 3

enum { M_FILE, M_MEM, M_CALLS, M_N };
static const char *const mode_names[] = {"file", "mem", "calls"};

static int rank, nprocs;
static unsigned char *mbuf; /* twice IO_BYTES: the "mem" layout needs the gaps */

static unsigned char pattern(int r, int piece)
{
	return (unsigned char)(1 + r * IO_PIECES + piece);
}

/* Fills our buffer as @mode lays the pieces out in memory. */
static void fill(int mode)
{
	for (int p = 0; p < IO_PIECES; p++) {
		size_t at = mode == M_MEM ? (size_t)p * 2 * IO_PIECE : (size_t)p * IO_PIECE;

		memset(mbuf + at, pattern(rank, p), IO_PIECE);
	}
}

static int write_once(MPI_File fh, int mode, MPI_Datatype memtype)
{
	int rc = MPI_SUCCESS;

	switch (mode) {
	case M_FILE:
		rc = MPI_File_write_at(fh, 0, mbuf, IO_BYTES, MPI_BYTE, MPI_STATUS_IGNORE);
		break;
	case M_MEM: rc = MPI_File_write_at(fh, 0, mbuf, 1, memtype, MPI_STATUS_IGNORE); break;
	default:
		for (int p = 0; p < IO_PIECES && rc == MPI_SUCCESS; p++)
			rc = MPI_File_write_at(fh, (MPI_Offset)p * IO_PIECE, mbuf + p * IO_PIECE,
					       IO_PIECE, MPI_BYTE, MPI_STATUS_IGNORE);
		break;
	}
	return rc;
}

/* Rank 0: is every call's region in @file (what the file holds where the
 * pieces went, in piece order) from one rank? */
static int region_ok(const unsigned char *got, int mode)
{
	int units = mode == M_CALLS ? IO_PIECES : 1, per = IO_PIECES / units;

	for (int u = 0; u < units; u++) {
		int writer = -1;

		for (int p = u * per; p < (u + 1) * per; p++) {
			const unsigned char *b = got + (size_t)p * IO_PIECE;

			for (size_t i = 0; i < IO_PIECE; i++) {
				int r = (b[i] - 1 - p) / IO_PIECES;

				if (b[i] == 0 || (b[i] - 1 - p) % IO_PIECES || r < 0 || r >= nprocs)
					return 0; /* not anybody's byte for this piece */
				if (writer < 0)
					writer = r;
				else if (r != writer)
					return 0;
			}
		}
	}
	return 1;
}

static void die(const char *what, int rc)
{
	char s[MPI_MAX_ERROR_STRING];
	int len = 0;

	MPI_Error_string(rc, s, &len);
	fprintf(stderr, "io_atomic [rank %d]: %s: %s\n", rank, what, s);
	MPI_Abort(MPI_COMM_WORLD, 2);
}

static int measure(const char *path, int mode, double budget, int rounds)
{
	MPI_Datatype ftype = MPI_DATATYPE_NULL, memtype = MPI_DATATYPE_NULL;
	double s[IO_SAMPLES], t0, t, tmax, start;
	unsigned char *got = NULL;
	int rc, ns = 0, bad = 0, badr = 0;
	long iters = 1;
	MPI_File fh;

	rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
			   &fh);
	if (rc != MPI_SUCCESS)
		die("MPI_File_open", rc);
	if (mode == M_FILE) {
		MPI_Type_vector(IO_PIECES, IO_PIECE, 2 * IO_PIECE, MPI_BYTE, &ftype);
		MPI_Type_commit(&ftype);
		rc = MPI_File_set_view(fh, 0, MPI_BYTE, ftype, "native", MPI_INFO_NULL);
		if (rc != MPI_SUCCESS)
			die("MPI_File_set_view", rc);
	} else if (mode == M_MEM) {
		MPI_Type_vector(IO_PIECES, IO_PIECE, 2 * IO_PIECE, MPI_BYTE, &memtype);
		MPI_Type_commit(&memtype);
	}
	if ((rc = MPI_File_set_atomicity(fh, 1)) != MPI_SUCCESS)
		die("MPI_File_set_atomicity", rc);
	fill(mode);
	/* calibrate: double the loop until it takes 1 ms on the slowest rank */
	for (;;) {
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (long i = 0; i < iters; i++)
			if ((rc = write_once(fh, mode, memtype)) != MPI_SUCCESS)
				die("MPI_File_write_at", rc);
		t = MPI_Wtime() - t0;
		MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		if (tmax >= 1e-3 || iters >= (1L << 20))
			break;
		iters *= 2;
	}
	start = MPI_Wtime();
	for (int go = 1; go;) {
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (long i = 0; i < iters; i++)
			if ((rc = write_once(fh, mode, memtype)) != MPI_SUCCESS)
				die("MPI_File_write_at", rc);
		t = (MPI_Wtime() - t0) / (double)iters * 1e6;
		MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		s[ns++] = tmax;
		go = ns < IO_SAMPLES && (ns < 5 || MPI_Wtime() - start < budget);
		MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
	}
	/* the check: all ranks write at once, then rank 0 reads what landed */
	if (rank == 0)
		got = malloc(IO_BYTES);
	for (int r = 0; r < rounds; r++) {
		MPI_Barrier(MPI_COMM_WORLD);
		if ((rc = write_once(fh, mode, memtype)) != MPI_SUCCESS)
			die("MPI_File_write_at", rc);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			/* read the pieces back in piece order: through the view in
			 * "file" mode, contiguous otherwise */
			rc = MPI_File_read_at(fh, 0, got, IO_BYTES, MPI_BYTE, MPI_STATUS_IGNORE);
			if (rc != MPI_SUCCESS)
				die("MPI_File_read_at", rc);
			if (!region_ok(got, mode))
				badr++;
		}
	}
	MPI_Bcast(&badr, 1, MPI_INT, 0, MPI_COMM_WORLD);
	bad = badr > 0;
	MPI_File_close(&fh);
	if (ftype != MPI_DATATYPE_NULL)
		MPI_Type_free(&ftype);
	if (memtype != MPI_DATATYPE_NULL)
		MPI_Type_free(&memtype);
	if (rank == 0) {
		bench_median(s, (size_t)ns);
		printf("%s %d %d %.3f %.3f %d %s %d/%d\n", mode_names[mode], IO_BYTES, IO_PIECES,
		       s[ns / 2], s[0], ns, bad ? "wrong" : "ok", badr, rounds);
		if (bad)
			fprintf(stderr,
				"io_atomic: %s: %d of %d rounds interleaved the ranks' writes "
				"in atomic mode\n",
				mode_names[mode], badr, rounds);
		fflush(stdout);
		free(got);
	}
	return bad;
}

int main(int argc, char **argv)
{
	int modes[M_N] = {1, 1, 1}, rounds = 20, opt, bad = 0;
	double budget = 1;
	const char *dir = getenv("TMPDIR");
	char path[4096], *tok, *save, *end;
	unsigned stamp;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	while ((opt = getopt(argc, argv, "m:t:r:d:h")) != -1) {
		switch (opt) {
		case 'm':
			memset(modes, 0, sizeof(modes));
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				int m = 0;

				while (m < M_N && strcmp(tok, mode_names[m]))
					m++;
				if (m == M_N)
					goto usage;
				modes[m] = 1;
			}
			break;
		case 't':
			budget = strtod(optarg, &end);
			if (*end || budget <= 0)
				goto usage;
			break;
		case 'r':
			if (bench_parse_int(optarg, 1, &rounds))
				goto usage;
			break;
		case 'd': dir = optarg; break;
		default: goto usage;
		}
	}
	if (!dir || !*dir)
		dir = "/tmp";
	stamp = (unsigned)getpid();
	MPI_Bcast(&stamp, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
	snprintf(path, sizeof(path), "%s/ibx-io_atomic-%u.dat", dir, stamp);
	mbuf = bench_alloc(2 * IO_BYTES, 0);
	if (rank == 0)
		printf("# io_atomic: %d ranks, MPI_File_write_at of %d B in %d pieces, atomic "
		       "mode, %s\n",
		       nprocs, IO_BYTES, IO_PIECES, path);
	for (int m = 0; m < M_N; m++)
		if (modes[m])
			bad |= measure(path, m, budget, rounds);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		MPI_File_delete(path, MPI_INFO_NULL);
	free(mbuf);
	MPI_Finalize();
	return bad ? IO_EXIT_CHECK : 0;
usage:
	if (rank == 0)
		fprintf(stderr, "usage: io_atomic [-m file,mem,calls] [-t SECONDS] [-r ROUNDS] "
				"[-d DIR]\n");
	MPI_Finalize();
	return 1;
}
