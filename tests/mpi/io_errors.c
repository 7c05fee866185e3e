/* ibx-test: np=1,2 timeout=60 nodes=1 */
/*
 * io_errors — error handling of the MPI-IO calls (MPI-3.1 §13.7): files and
 * MPI_FILE_NULL default to MPI_ERRORS_RETURN; a file error handler set on
 * MPI_FILE_NULL becomes the one of files opened later and gets open errors;
 * a user handler is called with the file and the class (by a failing call
 * and by MPI_File_call_errhandler); handlers of other kinds are refused
 * (MPI_ERR_ARG) and a file handler on a communicator too. Error classes:
 * MPI_ERR_NO_SUCH_FILE (open, delete), MPI_ERR_FILE_EXISTS (EXCL),
 * MPI_ERR_AMODE (conflicting or missing access modes), MPI_ERR_READ_ONLY
 * (write on RDONLY, set_size), MPI_ERR_ACCESS (read on WRONLY; a file
 * without write permission, unless run as root), MPI_ERR_BAD_FILE (a
 * directory), MPI_ERR_FILE (MPI_FILE_NULL, a closed handle), MPI_ERR_ARG
 * (negative offset, bad whence), MPI_ERR_COUNT, MPI_ERR_TYPE (uncommitted,
 * not a whole number of etypes, bad filetype),
 * MPI_ERR_UNSUPPORTED_DATAREP, MPI_ERR_UNSUPPORTED_OPERATION (explicit
 * offsets in SEQUENTIAL mode); MPI_Error_string describes the I/O classes.
 */
#include "mpitest.h"

#include <sys/stat.h>
#include <unistd.h>

static int rank, size;
static char dir[512];
static int calls, last_code;
static MPI_File last_file;

static void file_handler(MPI_File *fh, int *code, ...)
{
	calls++;
	last_file = *fh;
	last_code = *code;
}

static void comm_handler(MPI_Comm *comm, int *code, ...)
{
	(void)comm, (void)code;
}

static void make_dir(void)
{
	mt_make_tmpdir(dir, sizeof(dir), "ibx-io");
}

static void test_open_errors(void)
{
	char p[600], q[600];
	MPI_File fh = MPI_FILE_NULL;
	MPI_Errhandler eh;

	snprintf(p, sizeof(p), "%s/none", dir);
	snprintf(q, sizeof(q), "%s/exists", dir);
	MPI_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
	CHECK(eh == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN");
	MPI_FAILS(MPI_ERR_NO_SUCH_FILE,
		  MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	CHECK(fh == MPI_FILE_NULL, "failed open wrote the handle");
	MPI_FAILS(MPI_ERR_NO_SUCH_FILE, MPI_File_delete(p, MPI_INFO_NULL));
	MPI_FAILS(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_CREATE,
					       MPI_INFO_NULL, &fh));
	MPI_FAILS(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_RDWR,
					       MPI_INFO_NULL, &fh));
	MPI_FAILS(MPI_ERR_AMODE,
		  MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
	MPI_FAILS(MPI_ERR_AMODE,
		  MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL,
				MPI_INFO_NULL, &fh));
	MPI_FAILS(MPI_ERR_AMODE,
		  MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_EXCL | 0x10000,
				MPI_INFO_NULL, &fh));
	MPI_FAILS(MPI_ERR_BAD_FILE,
		  MPI_File_open(MPI_COMM_WORLD, dir, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	MPI_FAILS(MPI_ERR_COMM,
		  MPI_File_open(MPI_COMM_NULL, q, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));

	/* EXCL: one winner, then everyone fails alike */
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, q, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
			     MPI_INFO_NULL, &fh));
	MPI_OK(MPI_File_close(&fh));
	MPI_FAILS(MPI_ERR_FILE_EXISTS,
		  MPI_File_open(MPI_COMM_WORLD, q,
				MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL,
				&fh));

	/* a user handler on MPI_FILE_NULL: open errors, and new files get it */
	MPI_OK(MPI_File_create_errhandler(file_handler, &eh));
	MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
	calls = 0;
	MPI_FAILS(MPI_ERR_NO_SUCH_FILE,
		  MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	CHECK(calls == 1 && last_file == MPI_FILE_NULL && last_code == MPI_ERR_NO_SUCH_FILE,
	      "MPI_FILE_NULL handler: %d calls, code %d", calls, last_code);
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, q, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	{
		MPI_Errhandler got;

		MPI_OK(MPI_File_get_errhandler(fh, &got));
		CHECK(got == eh, "a new file did not inherit MPI_FILE_NULL's handler");
		MPI_OK(MPI_Errhandler_free(&got));
	}
	MPI_OK(MPI_File_close(&fh));
	MPI_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Errhandler_free(&eh));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		MPI_OK(MPI_File_delete(q, MPI_INFO_NULL));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void test_handlers(MPI_File fh)
{
	MPI_Errhandler eh, got, ceh;
	int buf[4] = {0};

	MPI_OK(MPI_File_get_errhandler(fh, &got));
	CHECK(got == MPI_ERRORS_RETURN, "default file handler is not MPI_ERRORS_RETURN");
	MPI_OK(MPI_File_create_errhandler(file_handler, &eh));
	MPI_OK(MPI_File_set_errhandler(fh, eh));
	MPI_OK(MPI_Errhandler_free(&eh)); /* the file keeps its reference */
	calls = 0;
	MPI_FAILS(MPI_ERR_ARG, MPI_File_write_at(fh, -1, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
	CHECK(calls == 1 && last_file == fh && last_code == MPI_ERR_ARG,
	      "user handler: %d calls, code %d", calls, last_code);
	MPI_OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
	CHECK(calls == 2 && last_code == MPI_ERR_IO, "call_errhandler: %d calls", calls);
	/* handlers of other kinds */
	MPI_OK(MPI_Comm_create_errhandler(comm_handler, &ceh));
	MPI_FAILS(MPI_ERR_ARG, MPI_File_set_errhandler(fh, ceh));
	MPI_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_ARG, MPI_File_set_errhandler(fh, ceh));
	MPI_OK(MPI_Errhandler_free(&ceh));
	MPI_OK(MPI_File_create_errhandler(file_handler, &eh));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	MPI_OK(MPI_Errhandler_free(&eh));
	MPI_OK(MPI_Errhandler_free(&got));
}

/* The error class of MPI_File_set_view(@fh, 0, @etype, @filetype) (the
 * byte view is restored after a success). */
static int view_error_class(MPI_File fh, MPI_Datatype etype, MPI_Datatype filetype)
{
	int rc = MPI_File_set_view(fh, 0, etype, filetype, "native", MPI_INFO_NULL), cls;

	if (rc == MPI_SUCCESS) {
		MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
		return MPI_SUCCESS;
	}
	MPI_OK(MPI_Error_class(rc, &cls));
	return cls;
}

static void test_access_errors(void)
{
	char p[600];
	MPI_File fh, stale;
	MPI_Datatype unc, three, bad;
	int buf[16] = {0};
	MPI_Request rq;

	snprintf(p, sizeof(p), "%s/access", dir);
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
			     &fh));
	test_handlers(fh);
	MPI_FAILS(MPI_ERR_ACCESS, MPI_File_read_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
	MPI_FAILS(MPI_ERR_ACCESS, MPI_File_read(fh, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
	MPI_FAILS(MPI_ERR_ARG, MPI_File_write_at(fh, -4, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
	MPI_FAILS(MPI_ERR_ARG, MPI_File_iwrite_at(fh, -4, buf, 1, MPI_INT, &rq));
	MPI_FAILS(MPI_ERR_COUNT, MPI_File_write_at(fh, 0, buf, -1, MPI_INT, MPI_STATUS_IGNORE));
	MPI_FAILS(MPI_ERR_TYPE, MPI_File_write(fh, buf, 1, MPI_DATATYPE_NULL, MPI_STATUS_IGNORE));
	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &unc));
	MPI_FAILS(MPI_ERR_TYPE, MPI_File_write(fh, buf, 1, unc, MPI_STATUS_IGNORE));
	MPI_FAILS(MPI_ERR_TYPE, MPI_File_set_view(fh, 0, MPI_INT, unc, "native", MPI_INFO_NULL));
	MPI_OK(MPI_Type_free(&unc));
	MPI_FAILS(MPI_ERR_UNSUPPORTED_DATAREP,
		  MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_File_set_view(fh, -8, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
	/* etype of 12 bytes: an int is not a whole number of them */
	MPI_OK(MPI_Type_contiguous(3, MPI_INT, &three));
	MPI_OK(MPI_Type_commit(&three));
	MPI_FAILS(MPI_ERR_TYPE, MPI_File_set_view(fh, 0, three, MPI_INT, "native", MPI_INFO_NULL));
	MPI_OK(MPI_File_set_view(fh, 0, three, three, "native", MPI_INFO_NULL));
	MPI_FAILS(MPI_ERR_TYPE, MPI_File_write(fh, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
	MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
	MPI_OK(MPI_Type_free(&three));
	/* a filetype with a negative displacement */
	{
		int bl = 1, d = -1;

		MPI_OK(MPI_Type_indexed(1, &bl, &d, MPI_INT, &bad));
		MPI_OK(MPI_Type_commit(&bad));
		MPI_FAILS(MPI_ERR_IO,
			  MPI_File_set_view(fh, 0, MPI_INT, bad, "native", MPI_INFO_NULL));
		MPI_FAILS(MPI_ERR_IO, MPI_File_set_view(fh, 0, bad, bad, "native", MPI_INFO_NULL));
		MPI_OK(MPI_Type_free(&bad));
	}
	/* displacements that decrease, blocks that overlap, copies that
	 * overlap: an error in MPICH and Open MPI alike (the class differs:
	 * MPI_ERR_IO in ROMIO, here; MPI_ERR_TYPE in Open MPI's own) */
	{
		int bl[2] = {1, 1}, dec[2] = {3, 0}, bl3[2] = {3, 1}, ovl[2] = {0, 1};
		MPI_Datatype t;
		int cls;

		MPI_OK(MPI_Type_indexed(2, bl, dec, MPI_INT, &t));
		MPI_OK(MPI_Type_commit(&t));
		cls = view_error_class(fh, MPI_INT, t);
		CHECK(cls == MPI_ERR_IO || (!MPILITE_BUILD && cls == MPI_ERR_TYPE),
		      "decreasing filetype: class %d", cls);
		cls = view_error_class(fh, t, t);
		CHECK(cls == MPI_ERR_IO || (!MPILITE_BUILD && cls == MPI_ERR_TYPE),
		      "decreasing etype: class %d", cls);
		MPI_OK(MPI_Type_free(&t));
		MPI_OK(MPI_Type_indexed(2, bl3, ovl, MPI_INT, &t));
		MPI_OK(MPI_Type_commit(&t));
		cls = view_error_class(fh, MPI_INT, t);
		CHECK(cls == MPI_ERR_IO || (!MPILITE_BUILD && cls == MPI_ERR_TYPE),
		      "overlapping filetype: class %d", cls);
		MPI_OK(MPI_Type_free(&t));
		{
			MPI_Datatype two, shrunk;

			MPI_OK(MPI_Type_contiguous(2, MPI_INT, &two));
			MPI_OK(MPI_Type_create_resized(two, 0, sizeof(int), &shrunk));
			MPI_OK(MPI_Type_commit(&shrunk));
			cls = view_error_class(fh, MPI_INT, shrunk);
			CHECK(cls == MPI_ERR_IO || (!MPILITE_BUILD && cls != MPI_SUCCESS),
			      "filetype whose copies overlap: class %d", cls);
			MPI_OK(MPI_Type_free(&shrunk));
			MPI_OK(MPI_Type_free(&two));
		}
	}
	MPI_FAILS(MPI_ERR_ARG, MPI_File_seek(fh, -1, MPI_SEEK_SET));
	MPI_FAILS(MPI_ERR_ARG, MPI_File_seek(fh, 0, 12345));
	MPI_FAILS(MPI_ERR_ARG, MPI_File_get_byte_offset(fh, -1, NULL));
	MPI_FAILS(MPI_ERR_ARG, MPI_File_set_size(fh, -1));
	stale = fh;
	MPI_OK(MPI_File_close(&fh));
	MPI_FAILS(MPI_ERR_FILE, MPI_File_write(stale, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
	MPI_FAILS(MPI_ERR_FILE, MPI_File_close(&stale));
	MPI_FAILS(MPI_ERR_FILE, MPI_File_get_size(MPI_FILE_NULL, NULL));
	MPI_FAILS(MPI_ERR_FILE, MPI_File_set_atomicity(MPI_FILE_NULL, 1));

	/* read-only */
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
	MPI_FAILS(MPI_ERR_READ_ONLY, MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
	MPI_FAILS(MPI_ERR_READ_ONLY, MPI_File_write_all(fh, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
	MPI_FAILS(MPI_ERR_READ_ONLY, MPI_File_set_size(fh, 0));
	if (MPILITE_BUILD) {
		/* overlapping blocks are only an error on a file open for
		 * writing (MPI-3.1 §13.3; ROMIO agrees) */
		int bl3[2] = {3, 1}, ovl[2] = {0, 1};
		MPI_Datatype t;

		MPI_OK(MPI_Type_indexed(2, bl3, ovl, MPI_INT, &t));
		MPI_OK(MPI_Type_commit(&t));
		MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, t, "native", MPI_INFO_NULL));
		MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
		MPI_OK(MPI_Type_free(&t));
	}
	MPI_OK(MPI_File_close(&fh));

	/* sequential: no explicit offsets, no seek */
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
			     MPI_INFO_NULL, &fh));
	MPI_FAILS(MPI_ERR_UNSUPPORTED_OPERATION,
		  MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE));
	MPI_FAILS(MPI_ERR_UNSUPPORTED_OPERATION, MPI_File_seek(fh, 0, MPI_SEEK_SET));
	MPI_OK(MPI_File_close(&fh));

	/* no permission (root is never refused) */
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		CHECK(chmod(p, 0444) == 0, "chmod");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (geteuid() != 0) {
		MPI_FAILS(MPI_ERR_ACCESS,
			  MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		MPI_OK(MPI_File_delete(p, MPI_INFO_NULL));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void test_strings(void)
{
	static const int cls[] = {
	    MPI_ERR_IO,	       MPI_ERR_NO_SUCH_FILE, MPI_ERR_ACCESS,
	    MPI_ERR_AMODE,     MPI_ERR_FILE_EXISTS,  MPI_ERR_NO_SPACE,
	    MPI_ERR_READ_ONLY, MPI_ERR_BAD_FILE,     MPI_ERR_QUOTA,
	    MPI_ERR_FILE,      MPI_ERR_FILE_IN_USE,  MPI_ERR_UNSUPPORTED_DATAREP};
	char s[MPI_MAX_ERROR_STRING];
	int len, c;

	for (size_t i = 0; i < sizeof(cls) / sizeof(cls[0]); i++) {
		MPI_OK(MPI_Error_string(cls[i], s, &len));
		CHECK(len > 10 && strstr(s, "MPI_ERR_"), "error string of %d: \"%s\"", cls[i], s);
		MPI_OK(MPI_Error_class(cls[i], &c));
		CHECK(c == cls[i], "class of %d is %d", cls[i], c);
	}
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	make_dir();
	test_open_errors();
	test_access_errors();
	test_strings();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		CHECK(rmdir(dir) == 0, "rmdir %s", dir);
	MPI_OK(MPI_Finalize());
	return 0;
}
