/* ibx-test: np=1,2,3,4 timeout=90 */
/*
 * io_shared — the shared file pointer and the split collectives, on files
 * in a temporary directory ($TMPDIR or /tmp, removed at the end):
 *
 *   write_shared  every rank appends records (rank, sequence number) with
 *                 the blocking and nonblocking forms at once: the file
 *                 holds each record exactly once, whole, each rank's in
 *                 its own order, nothing between them, and the pointer is
 *                 at the end; read_shared from the start hands every
 *                 record to exactly one rank;
 *   ordered       write_ordered / read_ordered place each rank's data
 *                 after the lower ranks', from where the pointer was;
 *   seek_shared   SET / CUR / END, and set_view resetting the pointer to
 *                 0 in etypes of the new view; MPI_MODE_APPEND starts it at
 *                 the end; MPI_MODE_SEQUENTIAL allows it (not seek_shared)
 *                 and MPI_DISPLACEMENT_CURRENT uses it;
 *   split         the _begin / _end pairs of _all, _at_all and _ordered,
 *                 the nonblocking collectives, and the misuse errors (end
 *                 without begin, two at once, another buffer, close in
 *                 between);
 *   errors        a bad count leaves the pointer where it was.
 *
 * Every byte is checked against what a plain POSIX read of the file shows.
 */
#include "mpitest.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

enum { K = 20 /* records per rank */ };

typedef struct rec {
	int32_t rank, seq;
	int64_t check; /* a function of both: a torn or mixed record shows */
} rec_t;

static int rank, size;
static char dir[512];

static int64_t rec_check(int r, int s)
{
	return (int64_t)r * 1000003 + s * 7919 + 0x5a5a;
}

static void make_dir(void)
{
	mt_make_tmpdir(dir, sizeof(dir), "ibx-ioshared");
}

static void path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

/* The whole file, as POSIX reads it (malloc'ed), its size in *len. */
static char *posix_read(const char *p, size_t *len)
{
	int fd = open(p, O_RDONLY);
	struct stat sb;
	char *buf;

	CHECK(fd >= 0 && fstat(fd, &sb) == 0, "open %s", p);
	buf = malloc((size_t)sb.st_size + 1);
	CHECK(buf && pread(fd, buf, (size_t)sb.st_size, 0) == sb.st_size, "read %s", p);
	close(fd);
	*len = (size_t)sb.st_size;
	return buf;
}

static MPI_File open_file(const char *name, int amode)
{
	char p[600];
	MPI_File fh;

	path(p, sizeof(p), name);
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, amode, MPI_INFO_NULL, &fh));
	return fh;
}

static void test_write_shared(void)
{
	MPI_File fh = open_file("records", MPI_MODE_CREATE | MPI_MODE_RDWR);
	rec_t r[K], got[K];
	MPI_Request rq[K];
	MPI_Status st;
	MPI_Offset pos;
	int seen[64][K] = {{0}}, last[64], cnt, n = 0;
	size_t len;
	char p[600];
	rec_t *all;

	for (int s = 0; s < K; s++) {
		r[s] = (rec_t){rank, s, rec_check(rank, s)};
		if (s % 2) { /* half nonblocking, completed before the next */
			MPI_OK(MPI_File_iwrite_shared(fh, &r[s], sizeof(rec_t), MPI_BYTE, &rq[s]));
			MPI_OK(MPI_Wait(&rq[s], &st));
		} else {
			MPI_OK(MPI_File_write_shared(fh, &r[s], sizeof(rec_t), MPI_BYTE, &st));
		}
		MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
		CHECK(cnt == (int)sizeof(rec_t), "write_shared moved %d bytes", cnt);
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == (MPI_Offset)(size * K * sizeof(rec_t)), "shared pointer at %lld, want %lld",
	      (long long)pos, (long long)(size * K * sizeof(rec_t)));

	path(p, sizeof(p), "records");
	all = (rec_t *)posix_read(p, &len);
	CHECK(len == size * K * sizeof(rec_t), "file of %zu bytes", len);
	for (int i = 0; i < size; i++)
		last[i] = -1;
	for (size_t i = 0; i < len / sizeof(rec_t); i++) {
		rec_t x = all[i];

		CHECK(x.rank >= 0 && x.rank < size && x.seq >= 0 && x.seq < K &&
			  x.check == rec_check(x.rank, x.seq),
		      "record %zu torn: rank %d seq %d", i, x.rank, x.seq);
		CHECK(!seen[x.rank][x.seq]++, "record (%d, %d) twice", x.rank, x.seq);
		CHECK(x.seq > last[x.rank], "rank %d: record %d after %d", x.rank, x.seq,
		      last[x.rank]);
		last[x.rank] = x.seq;
	}
	free(all);

	/* read_shared from the start: every record to exactly one rank */
	MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
	for (;;) {
		MPI_OK(MPI_File_read_shared(fh, &got[n % K], sizeof(rec_t), MPI_BYTE, &st));
		MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
		if (cnt == 0)
			break;
		CHECK(cnt == (int)sizeof(rec_t), "read_shared got %d bytes", cnt);
		CHECK(got[n % K].check == rec_check(got[n % K].rank, got[n % K].seq),
		      "read_shared: torn record");
		n++;
	}
	MPI_OK(MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK(n == size * K, "read_shared handed out %d records, want %d", n, size * K);
	MPI_OK(MPI_File_close(&fh));
}

/* Rank r has r + 1 ints of value 100 * round + r. */
static void test_ordered(void)
{
	MPI_File fh = open_file("ordered", MPI_MODE_CREATE | MPI_MODE_RDWR);
	int mine[64], back[64], n = rank + 1, cnt, total = size * (size + 1) / 2;
	MPI_Offset pos;
	MPI_Status st;
	size_t len;
	char p[600];
	int *all;

	MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < n; i++)
			mine[i] = 100 * round + rank;
		MPI_OK(MPI_File_write_ordered(fh, mine, n, MPI_INT, &st));
		MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
		CHECK(cnt == n, "write_ordered moved %d ints", cnt);
	}
	MPI_OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == 2 * total, "after write_ordered the pointer is at %lld, want %d",
	      (long long)pos, 2 * total);

	path(p, sizeof(p), "ordered");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	all = (int *)posix_read(p, &len);
	CHECK(len == 2 * (size_t)total * sizeof(int), "file of %zu bytes", len);
	for (int round = 0, i = 0; round < 2; round++)
		for (int r = 0; r < size; r++)
			for (int j = 0; j <= r; j++, i++)
				CHECK(all[i] == 100 * round + r, "int %d is %d, want %d", i, all[i],
				      100 * round + r);
	free(all);

	/* read back the second round, ordered, from where SEEK_CUR - total puts it */
	MPI_OK(MPI_File_seek_shared(fh, -total, MPI_SEEK_CUR));
	MPI_OK(MPI_File_read_ordered(fh, back, n, MPI_INT, &st));
	for (int i = 0; i < n; i++)
		CHECK(back[i] == 100 + rank, "read_ordered: [%d] = %d", i, back[i]);
	/* SEEK_END: the first etype past the end */
	MPI_OK(MPI_File_seek_shared(fh, -1, MPI_SEEK_END));
	MPI_OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == 2 * total - 1, "SEEK_END - 1: %lld", (long long)pos);
	MPI_FAILS(MPI_ERR_ARG, MPI_File_seek_shared(fh, -1, MPI_SEEK_SET));
	MPI_FAILS(MPI_ERR_ARG, MPI_File_seek_shared(fh, 0, 12345));
	MPI_OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == 2 * total - 1, "a refused seek moved the pointer to %lld", (long long)pos);

	/* a new view puts it back to 0, in the new etype */
	MPI_OK(MPI_File_set_view(fh, sizeof(int), MPI_SHORT, MPI_SHORT, "native", MPI_INFO_NULL));
	MPI_OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == 0, "set_view left the pointer at %lld", (long long)pos);

	/* a bad count: an error, and the pointer stays */
	MPI_FAILS(MPI_ERR_COUNT, MPI_File_write_shared(fh, mine, -1, MPI_SHORT, &st));
	MPI_FAILS(MPI_ERR_TYPE, MPI_File_write_shared(fh, mine, 1, MPI_BYTE, &st));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == 0, "refused writes moved the pointer to %lld", (long long)pos);
	MPI_OK(MPI_File_close(&fh));
}

static void test_modes(void)
{
	MPI_File fh;
	MPI_Offset pos, disp;
	MPI_Datatype et, ft;
	MPI_Status st;
	char rep[MPI_MAX_DATAREP_STRING], c = (char)('a' + rank), p[600];
	size_t len;
	char *all;

	/* APPEND: the pointer starts at the end of the existing file */
	fh = open_file("ordered", MPI_MODE_RDWR | MPI_MODE_APPEND);
	MPI_OK(MPI_File_get_position_shared(fh, &pos));
	CHECK(pos == (MPI_Offset)(size * (size + 1) * sizeof(int)), "APPEND: pointer at %lld",
	      (long long)pos);
	MPI_OK(MPI_File_close(&fh));

	/* SEQUENTIAL: shared accesses only; DISPLACEMENT_CURRENT is the pointer */
	fh = open_file("seq", MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL);
	MPI_OK(MPI_File_write_ordered(fh, &c, 1, MPI_CHAR, &st));
	MPI_FAILS(MPI_ERR_UNSUPPORTED_OPERATION, MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
	MPI_OK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_CHAR, MPI_CHAR, "native",
				 MPI_INFO_NULL));
	MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
	CHECK(disp == size, "DISPLACEMENT_CURRENT gave %lld, want %d", (long long)disp, size);
	MPI_OK(MPI_File_write_ordered(fh, &c, 1, MPI_CHAR, &st));
	MPI_OK(MPI_File_close(&fh));
	path(p, sizeof(p), "seq");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	all = posix_read(p, &len);
	CHECK(len == 2 * (size_t)size, "sequential file of %zu bytes", len);
	for (int i = 0; i < 2 * size; i++)
		CHECK(all[i] == 'a' + i % size, "sequential file: [%d] = %c", i, all[i]);
	free(all);
}

static void test_split(void)
{
	MPI_File fh = open_file("split", MPI_MODE_CREATE | MPI_MODE_RDWR);
	int out[8], in[8], other[8], cnt;
	MPI_Request rq;
	MPI_Status st;

	for (int i = 0; i < 8; i++)
		out[i] = rank * 8 + i;
	MPI_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_IO, MPI_File_write_all_end(fh, out, &st)); /* no begin */
	MPI_OK(MPI_File_write_at_all_begin(fh, rank * sizeof(out), out, 8, MPI_INT));
	MPI_FAILS(MPI_ERR_IO, MPI_File_read_all_begin(fh, in, 8, MPI_INT)); /* two at once */
	MPI_FAILS(MPI_ERR_IO, MPI_File_write_all_end(fh, out, &st));	    /* not its end */
	MPI_FAILS(MPI_ERR_BUFFER, MPI_File_write_at_all_end(fh, other, &st));
	MPI_FAILS(MPI_ERR_IO, MPI_File_close(&fh)); /* in between */
	MPI_OK(MPI_File_write_at_all_end(fh, out, &st));
	MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
	CHECK(cnt == 8, "write_at_all_end: count %d", cnt);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the neighbour's block is written */

	MPI_OK(MPI_File_read_at_all_begin(fh, ((rank + 1) % size) * sizeof(in), in, 8, MPI_INT));
	MPI_OK(MPI_File_read_at_all_end(fh, in, &st));
	for (int i = 0; i < 8; i++)
		CHECK(in[i] == (rank + 1) % size * 8 + i, "read_at_all: [%d] = %d", i, in[i]);

	/* the individual pointer: _all_begin, then the nonblocking collectives */
	MPI_OK(MPI_File_seek(fh, rank * sizeof(in), MPI_SEEK_SET));
	MPI_OK(MPI_File_read_all_begin(fh, in, 8, MPI_INT));
	MPI_OK(MPI_File_read_all_end(fh, in, MPI_STATUS_IGNORE));
	for (int i = 0; i < 8; i++)
		CHECK(in[i] == rank * 8 + i, "read_all: [%d] = %d", i, in[i]);
	MPI_OK(MPI_File_iwrite_at_all(fh, (size + rank) * sizeof(out), out, 8, MPI_INT, &rq));
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	MPI_OK(MPI_File_seek(fh, (size + rank) * sizeof(in), MPI_SEEK_SET));
	MPI_OK(MPI_File_iread_all(fh, in, 8, MPI_INT, &rq));
	MPI_OK(MPI_Wait(&rq, &st));
	MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
	CHECK(cnt == 8, "iread_all: count %d", cnt);
	for (int i = 0; i < 8; i++)
		CHECK(in[i] == rank * 8 + i, "iread_all: [%d] = %d", i, in[i]);

	/* ordered, split: after what is there (pointer at 0: seek to the end) */
	MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
	MPI_OK(MPI_File_write_ordered_begin(fh, out, 8, MPI_INT));
	MPI_OK(MPI_File_write_ordered_end(fh, out, MPI_STATUS_IGNORE));
	MPI_OK(MPI_File_seek_shared(fh, 2 * size * sizeof(in), MPI_SEEK_SET));
	MPI_OK(MPI_File_read_ordered_begin(fh, in, 8, MPI_INT));
	MPI_OK(MPI_File_read_ordered_end(fh, in, &st));
	for (int i = 0; i < 8; i++)
		CHECK(in[i] == rank * 8 + i, "read_ordered_end: [%d] = %d", i, in[i]);
	MPI_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
	char p[600];

	mt_init(&argc, &argv, &rank, &size);
	CHECK(size <= 64, "at most 64 ranks");
	make_dir();
	test_write_shared();
	test_ordered();
	test_modes();
	test_split();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0) {
		const char *names[] = {"records", "ordered", "seq", "split"};

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			path(p, sizeof(p), names[i]);
			CHECK(unlink(p) == 0, "unlink %s", p);
		}
		CHECK(rmdir(dir) == 0, "rmdir %s (left files?)", dir);
		printf("io_shared: OK on %d ranks\n", size);
	}
	MPI_OK(MPI_Finalize());
	return 0;
}
