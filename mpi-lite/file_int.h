/*
 * file_int.h — private to the MPI-IO files (MPI-3.1 chapter 13):
 *
 *   file.c        open, close, delete, sizes, sync, amode, group, info
 *   file_errh.c   file error handlers, errno -> error class, handle checks
 *   file_view.c   views, the individual file pointer, seek, byte offsets
 *   file_map.c    (view, offset, count, memory type) -> preadv / pwritev
 *   file_io.c     read / write (_at, _all, nonblocking) entry points
 *   file_atomic.c atomic mode: stripe locks on the distributed mutex and
 *                 the collective check that views cannot overlap
 *
 * A file is an MPI_File pointing to a struct mpil_file from a pool (as the
 * other handles: a closed handle stays readable and says so). Each process
 * holds its own POSIX descriptor of the file; all data access is positioned
 * (pread/pwrite family), so the descriptor has no file position of its own
 * that matters.
 */
#ifndef MPIL_FILE_INT_H
#define MPIL_FILE_INT_H

#include "mpil_int.h"

#include <sys/uio.h>

#define MPIL_MAGIC_FILE 0x6d46696cu /* "mFil" */

/* The footprint of one rank's view as the overlap check sees it (one
 * period of the view, blocks as offsets from the start of the period). */
typedef struct mpil_file_view_sig {
	MPI_Offset disp;   /* where the first period starts */
	MPI_Offset period; /* filetype extent */
	int64_t nblocks;   /* -1: unknown (too many blocks): assume overlap */
	int64_t *blocks;   /* 2 * nblocks: offset, length (malloc'ed) */
} mpil_file_view_sig_t;

struct mpil_file {
	uint32_t magic;
	int fd;
	int amode;
	MPI_Comm comm; /* private duplicate of the opening communicator */
	MPI_Info info; /* hints as given (MPI_INFO_NULL if none) */
	MPI_Errhandler errhandler;
	char *path;
	/* the view (file_view.c) */
	MPI_Offset disp;
	MPI_Datatype etype, filetype; /* retained */
	int64_t esize;		      /* etype size */
	int64_t ft_size, ft_extent;   /* filetype size and extent */
	bool ft_contig; /* the filetype is [0, size) dense: stream byte s at disp + s */
	MPI_Offset pos; /* individual file pointer, in etypes of the view */
	/* atomic mode (file_atomic.c) */
	bool atomic;
	bool disjoint;	    /* no two ranks' views share a byte: no locking */
	bool check_overlap; /* IBX_IO_OVERLAP_CHECK (rank 0's) */
	MPIX_Mutex mutex;   /* created when locking is first needed (collective) */
	int64_t stripe;	    /* bytes per lock stripe (0: not agreed on yet) */
	int nlocks;	    /* mutexes in the set */
	/* the shared file pointer (file_shared.c): an int64, in etypes of
	 * the view, at rank 0 of a window held in a lock_all epoch */
	MPI_Win sp_win;
	/* the split collective in progress (file_split.c) */
	const char *split_op; /* its MPI name, NULL when none */
	const void *split_buf;
	MPI_Status split_status;
	int split_err;
};

static inline bool mpil_file_valid(MPI_File fh)
{
	return fh && fh->magic == MPIL_MAGIC_FILE;
}

/* ---- file_errh.c ------------------------------------------------------------------ */
/* The handler of MPI_FILE_NULL: the default of new files and the one that
 * MPI_File_open / MPI_File_delete errors go to (MPI_ERRORS_RETURN at first). */
extern MPI_Errhandler mpil_file_default_errh;

/* Raises @errclass in @fname on @fh's handler (MPI_FILE_NULL's for a
 * NULL or invalid handle). Returns @errclass. */
int mpil_file_err(MPI_File fh, int errclass, const char *fname, const char *fmt, ...)
    __attribute__((cold, noinline, format(printf, 4, 5)));
/* The error class of a failed system call's errno. */
int mpil_file_errno_class(int err);
/* MPI is initialised and @fh is an open file, else the error (on
 * MPI_FILE_NULL's handler). */
int mpil_file_check_failed(MPI_File fh, const char *fname) __attribute__((cold, noinline));
static inline int mpil_file_check(MPI_File fh, const char *fname)
{
	if (ibx_likely(mpil_initialized() && mpil_file_valid(fh)))
		return MPI_SUCCESS;
	return mpil_file_check_failed(fh, fname);
}
/* Agrees on one error class over @comm (the first nonzero by rank order
 * wins, so all members return the same class); MPI error class of the
 * agreement itself otherwise. */
int mpil_file_agree(MPI_Comm comm, int err);

/* ---- file.c ------------------------------------------------------------------------ */
/* The pool slot of @fh goes back (close, failed open). */
void mpil_file_free(MPI_File fh);

/* ---- file_view.c --------------------------------------------------------------------- */
/* Sets the default view (disp 0, MPI_BYTE, MPI_BYTE) on a new file. */
void mpil_file_view_default(MPI_File fh);
/* Drops the view's datatype references (close). */
void mpil_file_view_release(MPI_File fh);
/* Number of stream bytes of the view that lie below file offset @size. */
int64_t mpil_file_view_bytes_below(MPI_File fh, MPI_Offset size);
/* File offset of stream byte @s of the view. */
MPI_Offset mpil_file_view_offset(MPI_File fh, int64_t s);
/* This rank's view footprint; sig->blocks malloc'ed (free it). */
int mpil_file_view_sig(MPI_File fh, mpil_file_view_sig_t *sig);

/* ---- file_map.c ------------------------------------------------------------------------ */
/*
 * Moves @nbytes of the view's stream from stream byte @s between the file
 * and @count elements of @dt at @buf: each contiguous run of the view in
 * the file is one preadv / pwritev whose iovec list is the memory type's
 * blocks for that run (IOV_MAX at a time). Sets *done_p to the bytes moved
 * (fewer than @nbytes only for a read that meets the end of the file).
 * Returns 0 or an errno value.
 */
int mpil_file_map_xfer(MPI_File fh, bool write, int64_t s, void *buf, int count, MPI_Datatype dt,
		       int64_t nbytes, int64_t *done_p);
/* The smallest file range [*lo_p, *hi_p) holding stream bytes [s, s + n), n > 0. */
void mpil_file_map_range(MPI_File fh, int64_t s, int64_t n, MPI_Offset *lo_p, MPI_Offset *hi_p);

/* ---- file_io.c ---------------------------------------------------------------------------- */
/* Where an access starts: an explicit offset (the _at forms; refused in
 * MPI_MODE_SEQUENTIAL), the individual file pointer (advanced by the
 * bytes moved), or an offset taken from the shared file pointer (allowed
 * in every mode; the pointer was advanced before). */
typedef enum { MPIL_FILE_AT_OFFSET, MPIL_FILE_AT_INDIVIDUAL, MPIL_FILE_AT_SHARED } mpil_file_at_t;
/* The checks of a data access (amode, count, datatype, buffer), before
 * anything moves. */
int mpil_file_check_access(MPI_File fh, bool write, int count, MPI_Datatype dt, const void *buf,
			   const char *fname);
/* A data access: lock if atomic mode needs it, preadv / pwritev, status.
 * @offset (etypes) unless @at is MPIL_FILE_AT_INDIVIDUAL. */
int mpil_file_access(MPI_File fh, bool write, mpil_file_at_t at, MPI_Offset offset, void *buf,
		     int count, MPI_Datatype dt, MPI_Status *status, const char *fname);
/* The same, ending in a completed request (the nonblocking forms). */
int mpil_file_iaccess(MPI_File fh, bool write, mpil_file_at_t at, MPI_Offset offset, void *buf,
		      int count, MPI_Datatype dt, MPI_Request *request, const char *fname);

/* ---- file_shared.c ---------------------------------------------------------------------- */
/* Collective (open): the shared pointer's window, the pointer at @pos. */
int mpil_file_shared_create(MPI_File fh, MPI_Offset pos);
/* Collective (close). */
void mpil_file_shared_free(MPI_File fh);
/* Collective (set_view): the pointer back to 0, seen by every rank after. */
int mpil_file_shared_reset(MPI_File fh);
/* Collective: the pointer's value on every rank (MPI_DISPLACEMENT_CURRENT). */
int mpil_file_shared_read_all(MPI_File fh, MPI_Offset *pos);
/* Collective: read_ordered / write_ordered (and their split forms). */
int mpil_file_ordered(MPI_File fh, bool write, void *buf, int count, MPI_Datatype dt,
		      MPI_Status *status, const char *fname);

/* ---- file_view.c, seek ------------------------------------------------------------------- */
/* Where MPI_File_seek(@offset, @whence) from @cur lands (etypes), or the
 * error raised on @fh in @fname. */
int mpil_file_seek_target(MPI_File fh, MPI_Offset cur, MPI_Offset offset, int whence,
			  MPI_Offset *pos, const char *fname);

/* ---- file_atomic.c ------------------------------------------------------------------------ */
/* Collective: called by set_atomicity and set_view (@fh->atomic already
 * set): agrees on the locking parameters, creates the mutex set if locking
 * can be needed and decides whether the views are disjoint. */
int mpil_file_atomic_setup(MPI_File fh, const char *fname);
/* Locks / unlocks the stripes of file range [lo, hi) (a no-op unless
 * atomic mode needs it). MPI error class. */
int mpil_file_lock(MPI_File fh, MPI_Offset lo, MPI_Offset hi);
int mpil_file_unlock(MPI_File fh, MPI_Offset lo, MPI_Offset hi);
/* Collective: frees the mutex set (close). */
void mpil_file_atomic_free(MPI_File fh);

#endif /* MPIL_FILE_INT_H */
