/* ibx-test: np=1,2,4 timeout=60 */
/*
 * io_basic — the MPI-IO calls on a file in a temporary directory ($TMPDIR or
 * /tmp, removed at the end): open with CREATE / EXCL / APPEND /
 * DELETE_ON_CLOSE, get_amode, get_group, set_info / get_info, set_size,
 * preallocate, get_size, sync; read / write with explicit offsets and the
 * individual file pointer, independent, collective (_all) and nonblocking,
 * through the default view, a contiguous etype view, and derived views
 * (a strided vector filetype per rank, a resized indexed filetype) with
 * contiguous and derived memory types; seek SET / CUR / END,
 * get_position, get_byte_offset, get_view (derived types come back as new
 * handles), MPI_Get_count / MPI_Get_elements on the statuses, reads at the
 * end of the file (short count), a filetype without bytes on some ranks
 * (their accesses move nothing, as in MPICH and Open MPI), and every byte
 * checked against what a plain POSIX read of the file shows.
 */
#include "mpitest.h"

#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

static int rank, size;
static char dir[512];

static void make_dir(void)
{
	mt_make_tmpdir(dir, sizeof(dir), "ibx-io");
}

static void path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

/* The file's bytes as POSIX read shows them. */
static void posix_read(const char *p, void *buf, size_t len, size_t *got)
{
	int fd = open(p, O_RDONLY);
	ssize_t r;

	CHECK(fd >= 0, "open %s", p);
	r = pread(fd, buf, len, 0);
	CHECK(r >= 0, "pread");
	*got = (size_t)r;
	close(fd);
}

static void test_open_modes(void)
{
	char p[600];
	MPI_File fh;
	MPI_Group g, wg;
	MPI_Info info, used;
	MPI_Offset sz;
	int amode, res, flag, nkeys;
	char val[64];

	path(p, sizeof(p), "modes");
	MPI_OK(MPI_Info_create(&info));
	MPI_OK(MPI_Info_set(info, "access_style", "write_once"));
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
			     info, &fh));
	MPI_OK(MPI_Info_free(&info));
	MPI_OK(MPI_File_get_amode(fh, &amode));
	CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR), "amode %d", amode);
	MPI_OK(MPI_File_get_group(fh, &g));
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	MPI_OK(MPI_Group_compare(g, wg, &res));
	CHECK(res == MPI_IDENT, "file group compares %d", res);
	MPI_OK(MPI_Group_free(&g));
	MPI_OK(MPI_Group_free(&wg));
	MPI_OK(MPI_File_get_info(fh, &used));
	MPI_OK(MPI_Info_get(used, "access_style", sizeof(val) - 1, val, &flag));
	CHECK(flag && !strcmp(val, "write_once"), "hint lost: %d %s", flag, val);
	MPI_OK(MPI_Info_free(&used));
	MPI_OK(MPI_File_set_info(fh, MPI_INFO_NULL));
	MPI_OK(MPI_File_get_info(fh, &used));
	MPI_OK(MPI_Info_get_nkeys(used, &nkeys));
	CHECK(nkeys == 0, "%d hints after set_info(MPI_INFO_NULL)", nkeys);
	MPI_OK(MPI_Info_free(&used));

	MPI_OK(MPI_File_set_size(fh, 1000));
	MPI_OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 1000, "size %lld after set_size(1000)", sz);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));   /* all saw it before the next change */
	MPI_OK(MPI_File_preallocate(fh, 500)); /* never shrinks */
	MPI_OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 1000, "size %lld after preallocate(500)", sz);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* all saw it before the next change */
	MPI_OK(MPI_File_preallocate(fh, 4096));
	MPI_OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 4096, "size %lld after preallocate(4096)", sz);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* all saw it before the next change */
	MPI_OK(MPI_File_set_size(fh, 10));
	MPI_OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 10, "size %lld after set_size(10)", sz);
	MPI_OK(MPI_File_sync(fh));
	MPI_OK(MPI_File_close(&fh));
	CHECK(fh == MPI_FILE_NULL, "close did not reset the handle");

	/* APPEND: the individual pointers start at the end */
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL,
			     &fh));
	MPI_OK(MPI_File_get_position(fh, &sz));
	CHECK(sz == 10, "APPEND position %lld", sz);
	MPI_OK(MPI_File_close(&fh));

	/* DELETE_ON_CLOSE */
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
			     MPI_INFO_NULL, &fh));
	MPI_OK(MPI_File_close(&fh));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	CHECK(access(p, F_OK) != 0, "DELETE_ON_CLOSE left %s", p);

	/* UNIQUE_OPEN and SEQUENTIAL are accepted */
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, p,
			     MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_UNIQUE_OPEN |
				 MPI_MODE_SEQUENTIAL,
			     MPI_INFO_NULL, &fh));
	MPI_OK(MPI_File_close(&fh));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		MPI_OK(MPI_File_delete(p, MPI_INFO_NULL));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Default view, explicit offsets and the file pointer, all forms. */
static void test_contig(void)
{
	enum { N = 1000 };
	char p[600];
	MPI_File fh;
	MPI_Status st;
	MPI_Request rq;
	MPI_Offset pos, sz, off;
	int w[N], r[N], cnt, i;
	unsigned char *all;
	size_t got;

	path(p, sizeof(p), "contig");
	MPI_OK(
	    MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	for (i = 0; i < N; i++)
		w[i] = rank * 100000 + i;
	/* rank r owns bytes [r * 4N, (r + 1) * 4N): first half with write_at,
	 * the second with seek + write_all */
	off = (MPI_Offset)rank * N * 4;
	MPI_OK(MPI_File_write_at(fh, off, w, N / 2, MPI_INT, &st));
	MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
	CHECK(cnt == N / 2, "write_at count %d", cnt);
	MPI_OK(MPI_File_seek(fh, off + N / 2 * 4, MPI_SEEK_SET));
	MPI_OK(MPI_File_write_all(fh, w + N / 2, N / 4, MPI_INT, &st));
	MPI_OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == off + 3 * N / 4 * 4, "position %lld after write_all", pos);
	MPI_OK(MPI_File_iwrite(fh, w + 3 * N / 4, N / 4, MPI_INT, &rq));
	MPI_OK(MPI_Wait(&rq, &st));
	MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
	CHECK(cnt == N / 4, "iwrite count %d", cnt);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	MPI_OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == (MPI_Offset)size * N * 4, "size %lld", sz);
	memset(r, 0, sizeof(r));
	MPI_OK(MPI_File_read_at_all(fh, off, r, N, MPI_INT, &st));
	MPI_OK(MPI_Get_elements(&st, MPI_INT, &cnt));
	CHECK(cnt == N && !memcmp(r, w, sizeof(w)), "read_at_all: %d elements", cnt);
	/* the other ranks' data, through seek CUR and iread_at */
	memset(r, 0, sizeof(r));
	MPI_OK(MPI_File_iread_at(fh, ((MPI_Offset)(rank + 1) % size) * N * 4, r, N, MPI_INT, &rq));
	MPI_OK(MPI_Wait(&rq, &st));
	for (i = 0; i < N; i++)
		CHECK(r[i] == ((rank + 1) % size) * 100000 + i, "iread_at word %d = %d", i, r[i]);
	MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
	MPI_OK(MPI_File_seek(fh, off + 8, MPI_SEEK_CUR));
	MPI_OK(MPI_File_read(fh, r, 1, MPI_INT, &st));
	CHECK(r[0] == w[2], "read after seek CUR: %d", r[0]);
	{
		/* ROMIO's names, which MPICH and Open MPI both have */
		MPIO_Request mrq;

		MPI_OK(MPI_File_iread(fh, r, 1, MPI_INT, &mrq));
		MPI_OK(MPIO_Wait(&mrq, MPI_STATUS_IGNORE));
	}
	CHECK(r[0] == w[3], "iread after read: %d", r[0]);
	/* at the end: a short read, then nothing */
	MPI_OK(MPI_File_seek(fh, -6, MPI_SEEK_END));
	MPI_OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == sz - 6, "seek END position %lld", pos);
	MPI_OK(MPI_File_read(fh, r, 4, MPI_INT, &st));
	MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
	CHECK(cnt == 6, "short read: %d bytes", cnt);
	MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
	CHECK(cnt == MPI_UNDEFINED, "short read: count %d ints", cnt);
	MPI_OK(MPI_File_read_all(fh, r, 4, MPI_INT, &st));
	MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
	CHECK(cnt == 0, "read past the end: %d", cnt);
	MPI_OK(MPI_File_get_byte_offset(fh, 77, &off));
	CHECK(off == 77, "byte offset %lld in the default view", off);
	MPI_OK(MPI_File_sync(fh));
	MPI_OK(MPI_File_close(&fh));

	if (rank == 0) {
		all = malloc((size_t)size * N * 4);
		posix_read(p, all, (size_t)size * N * 4, &got);
		CHECK(got == (size_t)size * N * 4, "file has %zu bytes", got);
		for (int q = 0; q < size; q++)
			for (i = 0; i < N; i++) {
				int v;

				memcpy(&v, all + ((size_t)q * N + i) * 4, 4);
				CHECK(v == q * 100000 + i, "file word %d of rank %d is %d", i, q,
				      v);
			}
		free(all);
		MPI_OK(MPI_File_delete(p, MPI_INFO_NULL));
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/*
 * Derived views: etype MPI_INT, filetype = rank r's blocks of B ints in
 * each row of size * B ints (vector, resized to the row), displacement
 * 16 bytes. The memory side is once contiguous, once a vector with gaps.
 */
static void test_vector_view(void)
{
	enum { B = 3, ROWS = 50, N = B * ROWS };
	const MPI_Offset disp = 16;
	char p[600], rep[MPI_MAX_DATAREP_STRING];
	MPI_Datatype ft, mt, et2, ft2;
	MPI_File fh;
	MPI_Status st;
	MPI_Offset off, d2;
	int w[N], r[2 * N], cnt, i;
	unsigned char *file;
	size_t got, fsize = disp + (size_t)ROWS * size * B * 4;

	path(p, sizeof(p), "vector");
	/* this rank's block at rank * B ints of each row: one hindexed block at
	 * that displacement, resized to the row (lb 0) */
	{
		int bl = B;
		MPI_Aint dd = (MPI_Aint)rank * B * 4;
		MPI_Datatype s;

		MPI_OK(MPI_Type_create_hindexed(1, &bl, &dd, MPI_INT, &s));
		MPI_OK(MPI_Type_create_resized(s, 0, (MPI_Aint)size * B * 4, &ft));
		MPI_OK(MPI_Type_free(&s));
		MPI_OK(MPI_Type_commit(&ft));
	}
	MPI_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &mt)); /* every other int in memory */
	MPI_OK(MPI_Type_commit(&mt));

	MPI_OK(
	    MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	MPI_OK(MPI_File_set_view(fh, disp, MPI_INT, ft, "native", MPI_INFO_NULL));
	MPI_OK(MPI_File_get_view(fh, &d2, &et2, &ft2, rep));
	CHECK(d2 == disp && et2 == MPI_INT && ft2 != ft && !strcmp(rep, "native"),
	      "get_view: disp %lld etype %p rep %s", d2, (void *)et2, rep);
	MPI_OK(MPI_Type_free(&ft2));
	MPI_OK(MPI_File_get_byte_offset(fh, B + 1, &off));
	CHECK(off == disp + (MPI_Offset)size * B * 4 + (MPI_Offset)rank * B * 4 + 4,
	      "byte offset of etype %d: %lld", B + 1, off);

	for (i = 0; i < N; i++)
		w[i] = rank * 1000 + i;
	/* first half contiguous from memory at an explicit offset, second
	 * half from every other int of r[] through the file pointer */
	MPI_OK(MPI_File_write_at_all(fh, 0, w, N / 2, MPI_INT, &st));
	for (i = 0; i < N - N / 2; i++)
		r[2 * i] = w[N / 2 + i], r[2 * i + 1] = -1;
	MPI_OK(MPI_File_seek(fh, N / 2, MPI_SEEK_SET));
	{
		MPI_Datatype half;

		MPI_OK(MPI_Type_vector(N - N / 2, 1, 2, MPI_INT, &half));
		MPI_OK(MPI_Type_commit(&half));
		MPI_OK(MPI_File_write(fh, r, 1, half, &st));
		MPI_OK(MPI_Get_count(&st, half, &cnt));
		CHECK(cnt == 1, "derived write count %d", cnt);
		MPI_OK(MPI_Get_elements(&st, half, &cnt));
		CHECK(cnt == N - N / 2, "derived write elements %d", cnt);
		MPI_OK(MPI_Type_free(&half));
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* read it all back into every other int */
	for (i = 0; i < 2 * N; i++)
		r[i] = -7;
	MPI_OK(MPI_File_read_at(fh, 0, r, 1, mt, &st));
	for (i = 0; i < N; i++)
		CHECK(r[2 * i] == w[i] && r[2 * i + 1] == -7, "view read: int %d = %d (gap %d)", i,
		      r[2 * i], r[2 * i + 1]);
	/* seek END: the view's end is where this rank's last block ends */
	MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
	MPI_OK(MPI_File_get_position(fh, &off));
	CHECK(off == N, "seek END in the view: %lld (expected %d)", off, N);
	MPI_OK(MPI_File_close(&fh));

	if (rank == 0) {
		file = malloc(fsize + 64);
		posix_read(p, file, fsize + 64, &got);
		CHECK(got == fsize, "file of %zu bytes, expected %zu", got, fsize);
		for (size_t row = 0; row < ROWS; row++)
			for (int q = 0; q < size; q++)
				for (int b = 0; b < B; b++) {
					int v;

					memcpy(&v, file + disp + ((row * size + q) * B + b) * 4, 4);
					CHECK(v == q * 1000 + (int)row * B + b,
					      "row %zu rank %d int %d: %d", row, q, b, v);
				}
		free(file);
		MPI_OK(MPI_File_delete(p, MPI_INFO_NULL));
	}
	MPI_OK(MPI_Type_free(&mt));
	MPI_OK(MPI_Type_free(&ft));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* An indexed filetype with blocks of different lengths, a struct etype
 * (two ints), MPI_COMM_SELF files (every rank its own file). */
static void test_indexed_self(void)
{
	char p[600], name[64];
	int bl[3] = {1, 3, 2}, dsp[3] = {0, 2, 7}; /* in etypes (8 bytes each) */
	MPI_Datatype et, ft;
	MPI_File fh;
	MPI_Status st;
	int w[24], r[24], i, cnt;
	unsigned char file[512];
	size_t got;

	snprintf(name, sizeof(name), "self-%d", rank);
	path(p, sizeof(p), name);
	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &et));
	MPI_OK(MPI_Type_commit(&et));
	MPI_OK(MPI_Type_indexed(3, bl, dsp, et, &ft));
	MPI_OK(MPI_Type_commit(&ft)); /* 6 etypes over an extent of 9 */
	MPI_OK(
	    MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	MPI_OK(MPI_File_set_view(fh, 0, et, ft, "native", MPI_INFO_NULL));
	for (i = 0; i < 24; i++)
		w[i] = i + 1;
	MPI_OK(MPI_File_write_at(fh, 0, w, 12, et, &st)); /* two filetype copies */
	MPI_OK(MPI_Get_count(&st, et, &cnt));
	CHECK(cnt == 12, "indexed write count %d", cnt);
	memset(r, 0, sizeof(r));
	MPI_OK(MPI_File_read_at(fh, 1, r, 11, et, &st)); /* from the second etype */
	CHECK(!memcmp(r, w + 2, 22 * sizeof(int)), "indexed read back");
	MPI_OK(MPI_File_close(&fh));
	posix_read(p, file, sizeof(file), &got);
	/* copy k at 72 k: etypes at 0, 2-4, 7-8 */
	CHECK(got == 72 + 9 * 8, "self file of %zu bytes", got);
	{
		static const int at[6] = {0, 2, 3, 4, 7, 8};

		for (int k = 0; k < 2; k++)
			for (int e = 0; e < 6; e++) {
				int v[2];

				memcpy(v, file + 72 * k + 8 * at[e], 8);
				CHECK(v[0] == w[2 * (6 * k + e)] && v[1] == w[2 * (6 * k + e) + 1],
				      "copy %d etype %d: %d %d", k, e, v[0], v[1]);
			}
	}
	MPI_OK(MPI_File_delete(p, MPI_INFO_NULL));
	MPI_OK(MPI_Type_free(&ft));
	MPI_OK(MPI_Type_free(&et));
}

/*
 * Odd ranks (rank 0 when alone) take no part of the file: their filetype
 * holds no bytes (MPICH's setview_zero). The others each own int slot
 * `rank` of every group of `size`. Two rounds of write_all, then the
 * file shows the owners' values and zeros (holes) in the other slots.
 */
static void test_empty_view(void)
{
	char p[600];
	bool empty = size == 1 || rank % 2;
	MPI_Datatype base, ft;
	MPI_File fh;
	MPI_Status st;
	MPI_Offset pos, byte;
	int w[2] = {100 + rank, 200 + rank}, r[2] = {-1, -1}, cnt;
	int file[64];
	size_t got;

	path(p, sizeof(p), "empty-view");
	if (empty) {
		MPI_OK(MPI_Type_contiguous(0, MPI_INT, &base));
	} else {
		int at = rank;

		MPI_OK(MPI_Type_create_indexed_block(1, 1, &at, MPI_INT, &base));
	}
	MPI_OK(MPI_Type_create_resized(base, 0, (MPI_Aint)(size * sizeof(int)), &ft));
	MPI_OK(MPI_Type_commit(&ft));
	MPI_OK(
	    MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	MPI_OK(MPI_File_set_view(fh, 8, MPI_INT, ft, "native", MPI_INFO_NULL));
	for (int round = 0; round < 2; round++) {
		MPI_OK(MPI_File_write_all(fh, &w[round], 1, MPI_INT, &st));
		MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
		CHECK(cnt == (empty ? 0 : 1), "write_all round %d: count %d", round, cnt);
	}
	MPI_OK(MPI_File_get_position(fh, &pos));
	CHECK(pos == (empty ? 0 : 2), "position %lld", (long long)pos);
	MPI_OK(MPI_File_get_byte_offset(fh, empty ? 5 : 1, &byte));
	CHECK(byte == (empty ? 8 : 8 + (MPI_Offset)((size + rank) * sizeof(int))),
	      "byte offset %lld", (long long)byte);
	MPI_OK(MPI_File_sync(fh));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_File_sync(fh));
	MPI_OK(MPI_File_read_at_all(fh, 0, r, 2, MPI_INT, &st));
	MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
	CHECK(cnt == (empty ? 0 : 2) && (empty ? r[0] == -1 : r[0] == w[0] && r[1] == w[1]),
	      "read back: count %d, %d %d", cnt, r[0], r[1]);
	MPI_OK(MPI_File_close(&fh));
	if (rank == 0) {
		posix_read(p, file, sizeof(file), &got);
		if (size == 1) {
			CHECK(got == 0, "nobody wrote, yet the file has %zu bytes", got);
		} else {
			/* the last owner's second value ends the file */
			int last = (size - 1) % 2 ? size - 2 : size - 1;

			CHECK(got == 8 + (size + last + 1) * sizeof(int), "file of %zu bytes", got);
			for (int k = 0; k < 2; k++)
				for (int q = 0;
				     q < size && 8 + (k * size + q + 1) * sizeof(int) <= got; q++) {
					int v = file[2 + k * size + q];
					int want = q % 2 ? 0 : (k ? 200 : 100) + q;

					CHECK(v == want, "slot %d of group %d: %d, expected %d", q,
					      k, v, want);
				}
		}
		MPI_OK(MPI_File_delete(p, MPI_INFO_NULL));
	}
	MPI_OK(MPI_Type_free(&ft));
	MPI_OK(MPI_Type_free(&base));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	make_dir();
	test_open_modes();
	test_contig();
	test_vector_view();
	test_indexed_self();
	test_empty_view();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		CHECK(rmdir(dir) == 0, "rmdir %s (left files?)", dir);
	MPI_OK(MPI_Finalize());
	if (rank == 0)
		printf("io_basic: ok (%d ranks)\n", size);
	return 0;
}
