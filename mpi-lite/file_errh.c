/*
 * file_errh.c — errors of the MPI-IO calls (MPI-3.1 §13.7, §8.3.3): file
 * error handlers, the error class of each errno, handle checks.
 *
 * Files differ from communicators and windows in two ways:
 *
 *   - the default handler of a new file is MPI_ERRORS_RETURN (I/O errors
 *     are expected and handled by the program), and
 *   - MPI_FILE_NULL has a handler of its own: MPI_File_set_errhandler(
 *     MPI_FILE_NULL, eh) changes it. It is the handler every file gets at
 *     MPI_File_open, and the one errors without a file go to (a failed
 *     MPI_File_open or MPI_File_delete, an invalid file handle).
 *
 *   MPI_File_write(fh, ...) on a read-only file
 *     └─ mpil_file_err(fh, MPI_ERR_READ_ONLY, "MPI_File_write", ...)
 *          ├─ MPI_ERRORS_RETURN     return the class
 *          ├─ user file handler     call it with (&fh, &code), then return
 *          └─ MPI_ERRORS_ARE_FATAL  print, end the job (mpil_err_fatal)
 */
#include "file_int.h"

#include <errno.h>
#include <stdlib.h>

MPI_Errhandler mpil_file_default_errh = MPI_ERRORS_RETURN;

int mpil_file_err(MPI_File fh, int errclass, const char *fname, const char *fmt, ...)
{
	char detail[384];
	MPI_Errhandler eh;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	eh = mpil_file_valid(fh) ? fh->errhandler : mpil_file_default_errh;
	switch (eh->kind) {
	case MPIL_ERRH_RETURN: return errclass;
	case MPIL_ERRH_FILE_USER: {
		MPI_File f = mpil_file_valid(fh) ? fh : MPI_FILE_NULL;
		int code = errclass;

		eh->file_fn(&f, &code);
		return errclass;
	}
	default: {
		char msg[512];

		if (mpil_file_valid(fh))
			snprintf(msg, sizeof(msg), "%s (file \"%s\")", detail, fh->path);
		else
			snprintf(msg, sizeof(msg), "%s", detail);
		mpil_err_fatal(errclass, fname, msg);
	}
	}
}

int mpil_file_errno_class(int err)
{
	switch (err) {
	case ENOENT:
	case ENOTDIR: return MPI_ERR_NO_SUCH_FILE;
	case EACCES:
	case EPERM: return MPI_ERR_ACCESS;
	case EEXIST: return MPI_ERR_FILE_EXISTS;
	case ENOSPC:
	case EFBIG: return MPI_ERR_NO_SPACE;
	case EDQUOT: return MPI_ERR_QUOTA;
	case EROFS: return MPI_ERR_READ_ONLY;
	case ENAMETOOLONG:
	case EISDIR:
	case ELOOP:
	case ENXIO: return MPI_ERR_BAD_FILE;
	case ETXTBSY:
	case EBUSY: return MPI_ERR_FILE_IN_USE;
	case ENOMEM: return MPI_ERR_NO_MEM;
	default: return MPI_ERR_IO;
	}
}

int mpil_file_check_failed(MPI_File fh, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	if (mpil_file_valid(fh))
		return MPI_SUCCESS;
	if (!fh)
		return mpil_file_err(NULL, MPI_ERR_FILE, fname, "file is MPI_FILE_NULL");
	return mpil_file_err(NULL, MPI_ERR_FILE, fname, "invalid file handle %p%s", (void *)fh,
			     fh->magic == MPIL_MAGIC_DEAD ? " (closed)" : "");
}

int mpil_file_agree(MPI_Comm comm, int err)
{
	int all = err;
	int rc = mpil_allreduce(&err, &all, 1, MPI_INT, MPI_MAX, comm);

	return rc != MPI_SUCCESS ? rc : all;
}

/* ---- error handlers ---------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(File_create_errhandler)
int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
				MPI_Errhandler *errhandler)
{
	static const char F[] = "MPI_File_create_errhandler";
	MPIL_CS_GUARD();
	MPI_Errhandler eh;

	MPIL_CHECK(mpil_check_init(F));
	if (!file_errhandler_fn || !errhandler)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL",
				errhandler ? "file_errhandler_fn" : "errhandler");
	eh = calloc(1, sizeof(*eh));
	if (!eh)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "allocating an error handler");
	eh->magic = MPIL_MAGIC_ERRH;
	eh->kind = MPIL_ERRH_FILE_USER;
	eh->refcount = 1;
	eh->file_fn = file_errhandler_fn;
	*errhandler = eh;
	return MPI_SUCCESS;
}

/* MPI_FILE_NULL is a valid argument here: it names the default handler. */
static int check_file_or_null(MPI_File fh, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	return fh == MPI_FILE_NULL ? MPI_SUCCESS : mpil_file_check(fh, fname);
}

MPIL_PMPI_ALIAS(File_set_errhandler)
int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
	static const char F[] = "MPI_File_set_errhandler";
	MPIL_CS_GUARD();
	MPI_Errhandler *slot, old;

	MPIL_CHECK(check_file_or_null(file, F));
	if (!errhandler || errhandler->magic != MPIL_MAGIC_ERRH)
		return mpil_file_err(file, MPI_ERR_ARG, F, "invalid error handler %p",
				     (void *)errhandler);
	if (errhandler->kind == MPIL_ERRH_USER || errhandler->kind == MPIL_ERRH_WIN_USER)
		return mpil_file_err(
		    file, MPI_ERR_ARG, F, "error handler %p was made for %s", (void *)errhandler,
		    errhandler->kind == MPIL_ERRH_USER ? "communicators" : "windows");
	slot = file ? &file->errhandler : &mpil_file_default_errh;
	old = *slot;
	if (!errhandler->predefined)
		errhandler->refcount++;
	*slot = errhandler;
	mpil_errh_release(old);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_get_errhandler)
int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
	static const char F[] = "MPI_File_get_errhandler";
	MPIL_CS_GUARD();
	MPI_Errhandler eh;

	MPIL_CHECK(check_file_or_null(file, F));
	if (!errhandler)
		return mpil_file_err(file, MPI_ERR_ARG, F, "errhandler is NULL");
	eh = file ? file->errhandler : mpil_file_default_errh;
	/* the caller owns a reference (MPI_Errhandler_free releases it) */
	if (!eh->predefined)
		eh->refcount++;
	*errhandler = eh;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_call_errhandler)
int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
	static const char F[] = "MPI_File_call_errhandler";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_file_or_null(fh, F));
	mpil_file_err(fh, errorcode, F, "raised by the application");
	return MPI_SUCCESS;
}
