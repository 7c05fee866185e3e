/*
 * errhandler.c — error classes, their strings, and communicator error
 * handlers (MPI-3.1 chapter 8.3-8.5).
 *
 * Error codes are error classes: every MPI function returns one of the
 * MPI_ERR_* values, and the detail of what went wrong ("invalid rank 7
 * (communicator size 4)") is given to the error handler, which prints it
 * for MPI_ERRORS_ARE_FATAL:
 *
 *   MPI_Send(..., dest = 7, ...)
 *     └─ mpil_err(comm, MPI_ERR_RANK, "MPI_Send", "invalid rank %d ...")
 *          ├─ MPI_ERRORS_RETURN     return MPI_ERR_RANK to the caller
 *          ├─ user function         call it with (&comm, &code), then return
 *          └─ MPI_ERRORS_ARE_FATAL  print, ibx_abort() the job, _exit()
 *
 * Errors without a (valid) communicator are raised on MPI_COMM_WORLD.
 * Windows have handlers of their own kind (win_attr.c, mpil_win_err), with
 * the same fatal end (mpil_err_fatal).
 */
#include "mpil_int.h"

#include <stdlib.h>
#include <unistd.h>

struct mpil_errhandler mpil_errors_are_fatal = {
    .magic = MPIL_MAGIC_ERRH,
    .kind = MPIL_ERRH_FATAL,
    .refcount = 1,
    .predefined = true,
};
struct mpil_errhandler mpil_errors_return = {
    .magic = MPIL_MAGIC_ERRH,
    .kind = MPIL_ERRH_RETURN,
    .refcount = 1,
    .predefined = true,
};

static const struct {
	const char *name;
	const char *text;
} err_table[MPI_ERR_LASTCODE + 1] = {
    [MPI_SUCCESS] = {"MPI_SUCCESS", "no error"},
    [MPI_ERR_BUFFER] = {"MPI_ERR_BUFFER", "invalid buffer pointer"},
    [MPI_ERR_COUNT] = {"MPI_ERR_COUNT", "invalid count argument"},
    [MPI_ERR_TYPE] = {"MPI_ERR_TYPE", "invalid datatype"},
    [MPI_ERR_TAG] = {"MPI_ERR_TAG", "invalid tag"},
    [MPI_ERR_COMM] = {"MPI_ERR_COMM", "invalid communicator"},
    [MPI_ERR_RANK] = {"MPI_ERR_RANK", "invalid rank"},
    [MPI_ERR_REQUEST] = {"MPI_ERR_REQUEST", "invalid request"},
    [MPI_ERR_ROOT] = {"MPI_ERR_ROOT", "invalid root"},
    [MPI_ERR_GROUP] = {"MPI_ERR_GROUP", "invalid group"},
    [MPI_ERR_OP] = {"MPI_ERR_OP", "invalid reduction operation"},
    [MPI_ERR_TOPOLOGY] = {"MPI_ERR_TOPOLOGY", "invalid topology"},
    [MPI_ERR_DIMS] = {"MPI_ERR_DIMS", "invalid dimension argument"},
    [MPI_ERR_ARG] = {"MPI_ERR_ARG", "invalid argument of some other kind"},
    [MPI_ERR_UNKNOWN] = {"MPI_ERR_UNKNOWN", "unknown error"},
    [MPI_ERR_TRUNCATE] = {"MPI_ERR_TRUNCATE", "message truncated on receive"},
    [MPI_ERR_OTHER] = {"MPI_ERR_OTHER", "known error not in this list"},
    [MPI_ERR_INTERN] = {"MPI_ERR_INTERN", "internal MPI (implementation) error"},
    [MPI_ERR_PENDING] = {"MPI_ERR_PENDING", "pending request"},
    [MPI_ERR_IN_STATUS] = {"MPI_ERR_IN_STATUS", "error code is in status"},
    [MPI_ERR_ACCESS] = {"MPI_ERR_ACCESS", "permission denied"},
    [MPI_ERR_AMODE] = {"MPI_ERR_AMODE", "error related to the amode passed to MPI_File_open"},
    [MPI_ERR_ASSERT] = {"MPI_ERR_ASSERT", "invalid assertion argument"},
    [MPI_ERR_BAD_FILE] = {"MPI_ERR_BAD_FILE", "invalid file name"},
    [MPI_ERR_BASE] = {"MPI_ERR_BASE", "invalid base passed to MPI_Free_mem"},
    [MPI_ERR_CONVERSION] = {"MPI_ERR_CONVERSION",
			    "error in a user-supplied data conversion function"},
    [MPI_ERR_DISP] = {"MPI_ERR_DISP", "invalid displacement argument"},
    [MPI_ERR_DUP_DATAREP] = {"MPI_ERR_DUP_DATAREP",
			     "data representation identifier already registered"},
    [MPI_ERR_FILE_EXISTS] = {"MPI_ERR_FILE_EXISTS", "file exists"},
    [MPI_ERR_FILE_IN_USE] = {"MPI_ERR_FILE_IN_USE",
			     "file operation could not be completed: file in use"},
    [MPI_ERR_FILE] = {"MPI_ERR_FILE", "invalid file handle"},
    [MPI_ERR_INFO_KEY] = {"MPI_ERR_INFO_KEY", "key longer than MPI_MAX_INFO_KEY"},
    [MPI_ERR_INFO_NOKEY] = {"MPI_ERR_INFO_NOKEY", "invalid key passed to MPI_Info_delete"},
    [MPI_ERR_INFO_VALUE] = {"MPI_ERR_INFO_VALUE", "value longer than MPI_MAX_INFO_VAL"},
    [MPI_ERR_INFO] = {"MPI_ERR_INFO", "invalid info argument"},
    [MPI_ERR_IO] = {"MPI_ERR_IO", "other I/O error"},
    [MPI_ERR_KEYVAL] = {"MPI_ERR_KEYVAL", "invalid keyval"},
    [MPI_ERR_LOCKTYPE] = {"MPI_ERR_LOCKTYPE", "invalid lock type"},
    [MPI_ERR_NAME] = {"MPI_ERR_NAME", "invalid service name passed to MPI_Lookup_name"},
    [MPI_ERR_NO_MEM] = {"MPI_ERR_NO_MEM", "out of memory"},
    [MPI_ERR_NOT_SAME] = {"MPI_ERR_NOT_SAME", "collective argument not identical on all processes"},
    [MPI_ERR_NO_SPACE] = {"MPI_ERR_NO_SPACE", "not enough space"},
    [MPI_ERR_NO_SUCH_FILE] = {"MPI_ERR_NO_SUCH_FILE", "file does not exist"},
    [MPI_ERR_PORT] = {"MPI_ERR_PORT", "invalid port name"},
    [MPI_ERR_QUOTA] = {"MPI_ERR_QUOTA", "quota exceeded"},
    [MPI_ERR_READ_ONLY] = {"MPI_ERR_READ_ONLY", "read-only file or file system"},
    [MPI_ERR_RMA_ATTACH] = {"MPI_ERR_RMA_ATTACH", "memory cannot be attached"},
    [MPI_ERR_RMA_CONFLICT] = {"MPI_ERR_RMA_CONFLICT", "conflicting accesses to window"},
    [MPI_ERR_RMA_RANGE] = {"MPI_ERR_RMA_RANGE", "target memory is not part of the window"},
    [MPI_ERR_RMA_SHARED] = {"MPI_ERR_RMA_SHARED", "memory cannot be shared"},
    [MPI_ERR_RMA_SYNC] = {"MPI_ERR_RMA_SYNC", "wrong synchronization of RMA calls"},
    [MPI_ERR_RMA_FLAVOR] = {"MPI_ERR_RMA_FLAVOR", "wrong type of window"},
    [MPI_ERR_SERVICE] = {"MPI_ERR_SERVICE", "invalid service name passed to MPI_Unpublish_name"},
    [MPI_ERR_SIZE] = {"MPI_ERR_SIZE", "invalid size argument"},
    [MPI_ERR_SPAWN] = {"MPI_ERR_SPAWN", "error in spawning processes"},
    [MPI_ERR_UNSUPPORTED_DATAREP] = {"MPI_ERR_UNSUPPORTED_DATAREP",
				     "unsupported data representation"},
    [MPI_ERR_UNSUPPORTED_OPERATION] = {"MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"},
    [MPI_ERR_WIN] = {"MPI_ERR_WIN", "invalid window"},
    [MPI_T_ERR_MEMORY] = {"MPI_T_ERR_MEMORY", "out of memory (tool interface)"},
    [MPI_T_ERR_NOT_INITIALIZED] = {"MPI_T_ERR_NOT_INITIALIZED", "tool interface not initialized"},
    [MPI_T_ERR_CANNOT_INIT] = {"MPI_T_ERR_CANNOT_INIT", "tool interface cannot be initialized"},
    [MPI_T_ERR_INVALID_INDEX] = {"MPI_T_ERR_INVALID_INDEX", "index invalid or out of range"},
    [MPI_T_ERR_INVALID_ITEM] = {"MPI_T_ERR_INVALID_ITEM", "item index out of range"},
    [MPI_T_ERR_INVALID_HANDLE] = {"MPI_T_ERR_INVALID_HANDLE", "invalid handle"},
    [MPI_T_ERR_OUT_OF_HANDLES] = {"MPI_T_ERR_OUT_OF_HANDLES", "no more handles available"},
    [MPI_T_ERR_OUT_OF_SESSIONS] = {"MPI_T_ERR_OUT_OF_SESSIONS", "no more sessions available"},
    [MPI_T_ERR_INVALID_SESSION] = {"MPI_T_ERR_INVALID_SESSION", "invalid session"},
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = {"MPI_T_ERR_CVAR_SET_NOT_NOW",
				    "control variable cannot be set at this moment"},
    [MPI_T_ERR_CVAR_SET_NEVER] = {"MPI_T_ERR_CVAR_SET_NEVER",
				  "control variable cannot be set until end of execution"},
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = {"MPI_T_ERR_PVAR_NO_STARTSTOP",
				     "variable cannot be started or stopped"},
    [MPI_T_ERR_PVAR_NO_WRITE] = {"MPI_T_ERR_PVAR_NO_WRITE", "variable cannot be written or reset"},
    [MPI_T_ERR_PVAR_NO_ATOMIC] = {"MPI_T_ERR_PVAR_NO_ATOMIC",
				  "variable cannot be read and written atomically"},
    [MPI_T_ERR_INVALID_NAME] = {"MPI_T_ERR_INVALID_NAME", "invalid variable name"},
    [MPI_T_ERR_INVALID] = {"MPI_T_ERR_INVALID", "invalid use of the tool interface"},
};

const char *mpil_err_class_name(int errclass)
{
	if (errclass < 0 || errclass > MPI_ERR_LASTCODE)
		return mpil_errcode_string(errclass); /* added by the program, or NULL */
	return err_table[errclass].name;
}

int mpil_err_from_ibx(ibx_status_t st)
{
	switch (st) {
	case IBX_OK:
	case IBX_INPROGRESS: return MPI_SUCCESS;
	case IBX_ERR_TRUNCATED: return MPI_ERR_TRUNCATE;
	case IBX_ERR_NO_MEMORY: return MPI_ERR_NO_MEM;
	case IBX_ERR_INVALID_PARAM: return MPI_ERR_ARG;
	case IBX_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
	case IBX_ERR_OVERFLOW: return MPI_ERR_COUNT;
	case IBX_ERR_NO_RESOURCE:
	case IBX_ERR_BUSY: return MPI_ERR_NO_SPACE;
	case IBX_ERR_UNREACHABLE:
	case IBX_ERR_IO:
	case IBX_ERR_TIMEOUT:
	case IBX_ERR_NO_DEVICE:
	case IBX_ERR_BOOTSTRAP:
	case IBX_ERR_CANCELED:
	case IBX_ERR_REMOTE_ACCESS:
	case IBX_ERR_CORRUPT:
	case IBX_ERR_NOT_FOUND: return MPI_ERR_OTHER;
	}
	return MPI_ERR_INTERN;
}

/* Ends the job: through the launcher when the engine is up, else alone. */
static void __attribute__((noreturn)) fatal_exit(int code, const char *msg)
{
	fflush(stdout);
	fflush(stderr);
	if (mpil_g.ctx)
		ibx_abort(mpil_g.ctx, code, msg);
	_exit(code & 0xff ? code & 0xff : 1);
}

void mpil_err_fatal(int errclass, const char *fname, const char *detail)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "MPI error in %s: %s: %s", fname,
		 mpil_err_class_name(errclass) ? mpil_err_class_name(errclass)
					       : "unknown error class",
		 detail);
	if (mpil_g.state == MPIL_STATE_INITIALIZED)
		fprintf(stderr, "[rank %d] %s\n", mpil_g.world_rank, msg);
	else
		fprintf(stderr, "%s\n", msg);
	fatal_exit(errclass, msg);
}

static int raise_on(MPI_Comm comm, int errclass, const char *fname, const char *detail)
{
	MPI_Errhandler eh = comm->errhandler;

	switch (eh->kind) {
	case MPIL_ERRH_RETURN: return errclass;
	case MPIL_ERRH_USER: {
		MPI_Comm c = comm;
		int code = errclass;

		eh->comm_fn(&c, &code);
		return errclass;
	}
	default: mpil_err_fatal(errclass, fname, detail);
	}
}

int mpil_err(MPI_Comm comm, int errclass, const char *fname, const char *fmt, ...)
{
	char detail[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (!mpil_comm_valid(comm))
		comm = MPI_COMM_WORLD;
	return raise_on(comm, errclass, fname, detail);
}

int mpil_err_state(const char *fname)
{
	return mpil_err(NULL, MPI_ERR_OTHER, fname, "called %s",
			mpil_g.state == MPIL_STATE_PRE_INIT ? "before MPI_Init"
							    : "after MPI_Finalize");
}

void mpil_errh_release(MPI_Errhandler eh)
{
	if (!eh->predefined && --eh->refcount == 0) {
		eh->magic = MPIL_MAGIC_DEAD;
		free(eh);
	}
}

static int check_errh(MPI_Comm comm, MPI_Errhandler eh, const char *fname)
{
	if (ibx_likely(eh && eh->magic == MPIL_MAGIC_ERRH))
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_ARG, fname, "invalid error handler %p", (void *)eh);
}

/* A handler made for windows does not attach to a communicator. */
static int check_comm_errh(MPI_Comm comm, MPI_Errhandler eh, const char *fname)
{
	MPIL_CHECK(check_errh(comm, eh, fname));
	if (ibx_unlikely(eh->kind == MPIL_ERRH_WIN_USER || eh->kind == MPIL_ERRH_FILE_USER))
		return mpil_err(comm, MPI_ERR_ARG, fname, "error handler %p was made for %s",
				(void *)eh, eh->kind == MPIL_ERRH_WIN_USER ? "windows" : "files");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_set_errhandler)
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
	static const char F[] = "MPI_Comm_set_errhandler";
	MPIL_CS_GUARD();
	MPI_Errhandler old;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(check_comm_errh(comm, errhandler, F));
	old = comm->errhandler;
	if (!errhandler->predefined)
		errhandler->refcount++;
	comm->errhandler = errhandler;
	mpil_errh_release(old);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_get_errhandler)
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
	static const char F[] = "MPI_Comm_get_errhandler";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!errhandler)
		return mpil_err(comm, MPI_ERR_ARG, F, "errhandler is NULL");
	/* The caller owns a reference (MPI_Errhandler_free releases it). */
	if (!comm->errhandler->predefined)
		comm->errhandler->refcount++;
	*errhandler = comm->errhandler;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_create_errhandler)
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function, MPI_Errhandler *errhandler)
{
	static const char F[] = "MPI_Comm_create_errhandler";
	MPIL_CS_GUARD();
	MPI_Errhandler eh;

	MPIL_CHECK(mpil_check_init(F));
	if (!function || !errhandler)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL",
				function ? "errhandler" : "function");
	eh = calloc(1, sizeof(*eh));
	if (!eh)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "allocating an error handler");
	eh->magic = MPIL_MAGIC_ERRH;
	eh->kind = MPIL_ERRH_USER;
	eh->refcount = 1;
	eh->comm_fn = function;
	*errhandler = eh;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Errhandler_free)
int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
	static const char F[] = "MPI_Errhandler_free";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (!errhandler)
		return mpil_err(NULL, MPI_ERR_ARG, F, "errhandler is NULL");
	MPIL_CHECK(check_errh(NULL, *errhandler, F));
	/* Freeing a predefined handler is allowed (MPI-3.1 §8.3.4): a no-op. */
	mpil_errh_release(*errhandler);
	*errhandler = MPI_ERRHANDLER_NULL;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_call_errhandler)
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
	static const char F[] = "MPI_Comm_call_errhandler";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	raise_on(comm, errorcode, F, "raised by the application");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Error_string)
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
	static const char F[] = "MPI_Error_string";
	MPIL_CS_GUARD();
	const char *added;
	int n;

	if (!string || !resultlen)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL",
				string ? "resultlen" : "string");
	added = mpil_errcode_string(errorcode);
	if (added)
		n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", added);
	else if (errorcode < 0 || errorcode > MPI_ERR_LASTCODE)
		return mpil_err(NULL, MPI_ERR_ARG, F, "invalid error code %d", errorcode);
	else
		n = snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", err_table[errorcode].name,
			     err_table[errorcode].text);
	*resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Error_class)
int PMPI_Error_class(int errorcode, int *errorclass)
{
	static const char F[] = "MPI_Error_class";
	MPIL_CS_GUARD();

	if (!errorclass)
		return mpil_err(NULL, MPI_ERR_ARG, F, "errorclass is NULL");
	if (!mpil_errcode_class(errorcode, errorclass))
		return mpil_err(NULL, MPI_ERR_ARG, F, "invalid error code %d", errorcode);
	return MPI_SUCCESS;
}
