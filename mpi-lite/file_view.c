/*
 * file_view.c — file views and the individual file pointer (MPI-3.1
 * §13.3, §13.4.3): MPI_File_set_view / get_view, seek, get_position,
 * get_byte_offset, get_type_extent.
 *
 * A view is (disp, etype, filetype): the filetype is tiled from byte disp
 * on, copy k at disp + k * extent, and the bytes its typemap covers, in
 * order, are the view's stream. Offsets of the data access calls count
 * etypes of that stream. Stream byte s lies in copy k = s / size at packed
 * offset r = s % size of the filetype, so
 *
 *     file offset(s) = disp + k * extent + (displacement of packed byte r)
 *
 * and the engine's datatype cursor gives the last term by seeking to r
 * (O(depth) work, no walk from the start). A dense filetype (MPI_BYTE, a
 * contiguous type with lb 0) makes this disp + s.
 *
 * A filetype may hold no bytes (a process that takes no part of the file,
 * MPICH's setview_zero): its view's stream is empty, every offset maps to
 * disp, and an access moves nothing and reports 0 elements, as in MPICH
 * and Open MPI. Displacements must be non-negative and, in typemap order,
 * not decrease, and on a file open for writing no two bytes of the view
 * may be the same file byte (MPI-3.1 §13.3), in the etype and the
 * filetype: set_view checks them, with MPI_ERR_IO as ROMIO does.
 */
#include "file_int.h"

#include "dtype_rdma/dtype.h"

#include <stdlib.h>
#include <string.h>

/* the view's blocks that the overlap check still compares */
#define VIEW_SIG_MAX_BLOCKS 4096

static void view_set(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype)
{
	fh->disp = disp;
	fh->etype = etype;
	fh->filetype = filetype;
	fh->esize = (int64_t)etype->size;
	fh->ft_size = (int64_t)filetype->size;
	fh->ft_extent = filetype->extent;
	fh->ft_contig = mpil_dt_contig(filetype) && filetype->true_lb == 0 && filetype->lb == 0 &&
			filetype->extent == (MPI_Aint)filetype->size && filetype->size > 0;
	fh->pos = 0;
}

void mpil_file_view_default(MPI_File fh)
{
	view_set(fh, 0, MPI_BYTE, MPI_BYTE);
}

void mpil_file_view_release(MPI_File fh)
{
	mpil_dt_release(fh->etype);
	mpil_dt_release(fh->filetype);
	fh->etype = fh->filetype = NULL;
}

MPI_Offset mpil_file_view_offset(MPI_File fh, int64_t s)
{
	ibx_dt_cursor_t c;
	struct iovec v = {0};
	int64_t k, r, b;
	int n = 0;

	if (fh->ft_contig)
		return fh->disp + s;
	if (fh->ft_size == 0)
		return fh->disp; /* an empty stream */
	k = s / fh->ft_size;
	r = s % fh->ft_size;
	if (ibx_dt_cursor_init(&c, fh->filetype->engine, 1, NULL, r) == IBX_OK)
		ibx_dt_cursor_iov(&c, 1, &v, 1, &n, &b);
	return fh->disp + k * fh->ft_extent + (n ? (MPI_Offset)(uintptr_t)v.iov_base : 0);
}

typedef struct below {
	int64_t rem, bytes;
} below_t;

static ibx_status_t below_block(void *arg, int64_t packed_off, void *addr, size_t len)
{
	below_t *b = arg;
	int64_t d = (int64_t)(uintptr_t)addr;

	(void)packed_off;
	if (d >= b->rem)
		return IBX_ERR_BUSY; /* displacements never decrease: done */
	b->bytes += d + (int64_t)len <= b->rem ? (int64_t)len : b->rem - d;
	return IBX_OK;
}

int64_t mpil_file_view_bytes_below(MPI_File fh, MPI_Offset size)
{
	below_t b = {0};
	int64_t x;

	if (size <= fh->disp || fh->ft_size == 0)
		return 0;
	x = size - fh->disp;
	if (fh->ft_contig)
		return x;
	b.rem = x % fh->ft_extent;
	if (b.rem)
		ibx_dt_blocks(fh->filetype->engine, 1, NULL, 0, fh->ft_size, below_block, &b);
	return x / fh->ft_extent * fh->ft_size + b.bytes;
}

typedef struct sig_acc {
	int64_t n, cap;
	int64_t *v;
} sig_acc_t;

static ibx_status_t sig_block(void *arg, int64_t packed_off, void *addr, size_t len)
{
	sig_acc_t *a = arg;

	(void)packed_off;
	if (a->n == VIEW_SIG_MAX_BLOCKS)
		return IBX_ERR_BUSY;
	if (a->n == a->cap) {
		int64_t ncap = a->cap ? a->cap * 2 : 16;
		int64_t *nv = realloc(a->v, (size_t)ncap * 2 * sizeof(*nv));

		if (!nv)
			return IBX_ERR_NO_MEMORY;
		a->v = nv;
		a->cap = ncap;
	}
	a->v[2 * a->n] = (int64_t)(uintptr_t)addr;
	a->v[2 * a->n + 1] = (int64_t)len;
	a->n++;
	return IBX_OK;
}

int mpil_file_view_sig(MPI_File fh, mpil_file_view_sig_t *sig)
{
	sig_acc_t a = {0};
	ibx_status_t st;

	sig->disp = fh->disp;
	sig->period = fh->ft_extent;
	if (fh->ft_contig) {
		sig->period = fh->ft_size;
		a.v = malloc(2 * sizeof(*a.v));
		if (!a.v)
			return MPI_ERR_NO_MEM;
		a.v[0] = 0;
		a.v[1] = fh->ft_size;
		a.n = 1;
	} else {
		st = ibx_dt_blocks(fh->filetype->engine, 1, NULL, 0, fh->ft_size, sig_block, &a);
		if (st == IBX_ERR_BUSY) {
			a.n = -1; /* too many blocks to compare: assume overlap */
		} else if (st != IBX_OK) {
			free(a.v);
			return mpil_err_from_ibx(st);
		}
	}
	sig->nblocks = a.n;
	sig->blocks = a.v;
	return MPI_SUCCESS;
}

/* ---- MPI_File_set_view / get_view --------------------------------------------------------- */

static int check_type(MPI_File fh, MPI_Datatype dt, const char *what, const char *fname)
{
	if (!dt)
		return mpil_file_err(fh, MPI_ERR_TYPE, fname, "%s is MPI_DATATYPE_NULL", what);
	if (dt->magic != MPIL_MAGIC_DTYPE)
		return mpil_file_err(fh, MPI_ERR_TYPE, fname, "invalid %s handle %p", what,
				     (void *)dt);
	if (!(dt->flags & MPIL_DTF_COMMITTED))
		return mpil_file_err(fh, MPI_ERR_TYPE, fname, "%s is not committed", what);
	return MPI_SUCCESS;
}

typedef struct order {
	int64_t start, end; /* where the previous block began and ended */
	bool decreasing, overlapping;
} order_t;

static ibx_status_t order_block(void *arg, int64_t packed_off, void *addr, size_t len)
{
	order_t *o = arg;
	int64_t d = (int64_t)(uintptr_t)addr;

	(void)packed_off;
	if (len == 0)
		return IBX_OK;
	if (d < o->start) {
		o->decreasing = true;
		return IBX_ERR_BUSY; /* enough */
	}
	if (d < o->end)
		o->overlapping = true;
	o->start = d;
	if (d + (int64_t)len > o->end)
		o->end = d + (int64_t)len;
	return IBX_OK;
}

/* The typemap rules of etypes and filetypes: displacements non-negative
 * and non-decreasing; on a file opened for writing, no two blocks
 * overlapping (@writable). MPI_ERR_IO, as ROMIO (MPICH's, and one of Open
 * MPI's) answers; Open MPI's own answers MPI_ERR_IO for a negative
 * displacement and MPI_ERR_TYPE for the rest. */
static int check_layout(MPI_File fh, MPI_Datatype dt, bool writable, const char *what,
			const char *fname)
{
	order_t o = {0};

	if (dt->size == 0)
		return MPI_SUCCESS;
	if (dt->true_lb < 0)
		return mpil_file_err(fh, MPI_ERR_IO, fname,
				     "displacements of the %s must be non-negative (true lb %ld)",
				     what, (long)dt->true_lb);
	if (mpil_dt_contig(dt))
		return MPI_SUCCESS;
	(void)ibx_dt_blocks(dt->engine, 1, NULL, 0, (int64_t)dt->size, order_block, &o);
	if (o.decreasing)
		return mpil_file_err(fh, MPI_ERR_IO, fname,
				     "displacements of the %s must not decrease", what);
	if (o.overlapping && writable)
		return mpil_file_err(fh, MPI_ERR_IO, fname,
				     "the %s has overlapping blocks, and the file is open for "
				     "writing",
				     what);
	return MPI_SUCCESS;
}

static int check_view(MPI_File fh, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep,
		      const char *fname)
{
	bool writable = !(fh->amode & MPI_MODE_RDONLY);

	MPIL_CHECK(check_type(fh, etype, "etype", fname));
	MPIL_CHECK(check_type(fh, filetype, "filetype", fname));
	if (!datarep)
		return mpil_file_err(fh, MPI_ERR_ARG, fname, "datarep is NULL");
	if (strcmp(datarep, "native") != 0)
		return mpil_file_err(fh, MPI_ERR_UNSUPPORTED_DATAREP, fname,
				     "data representation \"%s\" (only \"native\")", datarep);
	if (etype->size == 0)
		return mpil_file_err(fh, MPI_ERR_TYPE, fname, "etype of size 0");
	if (filetype->size % etype->size != 0)
		return mpil_file_err(fh, MPI_ERR_TYPE, fname,
				     "filetype of %zu bytes is not a whole number of etypes of "
				     "%zu bytes",
				     filetype->size, etype->size);
	MPIL_CHECK(check_layout(fh, etype, writable, "etype", fname));
	MPIL_CHECK(check_layout(fh, filetype, writable, "filetype", fname));
	if (filetype->size > 0 && filetype->extent <= 0)
		return mpil_file_err(fh, MPI_ERR_IO, fname,
				     "a filetype holding data needs a positive extent (%ld)",
				     (long)filetype->extent);
	if (filetype->size > 0 && writable && filetype->true_extent > filetype->extent)
		return mpil_file_err(
		    fh, MPI_ERR_IO, fname,
		    "copies of the filetype overlap (true lb %ld, true extent %ld, "
		    "extent %ld)",
		    (long)filetype->true_lb, (long)filetype->true_extent, (long)filetype->extent);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_set_view)
int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
		       const char *datarep, MPI_Info info)
{
	static const char F[] = "MPI_File_set_view";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_file_check(fh, F));
	MPIL_CHECK(check_view(fh, etype, filetype, datarep, F));
	if (info && *(const uint32_t *)(const void *)info != MPIL_MAGIC_INFO)
		return mpil_file_err(fh, MPI_ERR_INFO, F, "invalid info handle %p", (void *)info);
	if (disp == MPI_DISPLACEMENT_CURRENT) {
		MPI_Offset sp;
		int err;

		if (!(fh->amode & MPI_MODE_SEQUENTIAL))
			return mpil_file_err(fh, MPI_ERR_ARG, F,
					     "MPI_DISPLACEMENT_CURRENT without "
					     "MPI_MODE_SEQUENTIAL");
		/* in sequential mode, where the shared file pointer is */
		err = mpil_file_shared_read_all(fh, &sp);
		if (err != MPI_SUCCESS)
			return mpil_file_err(fh, err, F, "reading the shared file pointer");
		disp = mpil_file_view_offset(fh, sp * fh->esize);
	} else if (disp < 0) {
		return mpil_file_err(fh, MPI_ERR_ARG, F, "negative displacement %lld",
				     (long long)disp);
	}
	mpil_dt_retain(etype);
	mpil_dt_retain(filetype);
	mpil_file_view_release(fh);
	view_set(fh, disp, etype, filetype);
	if (mpil_file_shared_reset(fh) != MPI_SUCCESS)
		return mpil_file_err(fh, MPI_ERR_INTERN, F, "resetting the shared file pointer");
	if (fh->atomic)
		return mpil_file_atomic_setup(fh, F);
	return MPI_SUCCESS;
}

/* What get_view returns: predefined types as they are, a new handle
 * (which the caller frees) for a derived one. */
static int view_type_out(MPI_Datatype dt, MPI_Datatype *out)
{
	if (dt->flags & MPIL_DTF_PREDEFINED) {
		*out = dt;
		return MPI_SUCCESS;
	}
	return PMPI_Type_dup(dt, out);
}

MPIL_PMPI_ALIAS(File_get_view)
int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
		       char *datarep)
{
	static const char F[] = "MPI_File_get_view";
	MPIL_CS_GUARD();
	int err;

	MPIL_CHECK(mpil_file_check(fh, F));
	if (!disp || !etype || !filetype || !datarep)
		return mpil_file_err(fh, MPI_ERR_ARG, F, "NULL output argument");
	err = view_type_out(fh->etype, etype);
	if (err == MPI_SUCCESS) {
		err = view_type_out(fh->filetype, filetype);
		if (err != MPI_SUCCESS && *etype != fh->etype)
			PMPI_Type_free(etype);
	}
	if (err != MPI_SUCCESS)
		return mpil_file_err(fh, err, F, "copying the view's datatypes");
	*disp = fh->disp;
	strcpy(datarep, "native");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_get_type_extent)
int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
	static const char F[] = "MPI_File_get_type_extent";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_file_check(fh, F));
	if (!datatype || datatype->magic != MPIL_MAGIC_DTYPE)
		return mpil_file_err(fh, MPI_ERR_TYPE, F, "invalid datatype %p", (void *)datatype);
	if (!extent)
		return mpil_file_err(fh, MPI_ERR_ARG, F, "extent is NULL");
	*extent = datatype->extent; /* "native": the extent in memory */
	return MPI_SUCCESS;
}

/* ---- the individual file pointer ------------------------------------------------------------ */

int mpil_file_seek_target(MPI_File fh, MPI_Offset cur, MPI_Offset offset, int whence,
			  MPI_Offset *pos, const char *fname)
{
	MPI_Offset base, size;
	int err;

	switch (whence) {
	case MPI_SEEK_SET: base = 0; break;
	case MPI_SEEK_CUR: base = cur; break;
	case MPI_SEEK_END:
		err = PMPI_File_get_size(fh, &size);
		if (err != MPI_SUCCESS)
			return err;
		/* the first etype of the view at or past the end of the file */
		base = (mpil_file_view_bytes_below(fh, size) + fh->esize - 1) / fh->esize;
		break;
	default: return mpil_file_err(fh, MPI_ERR_ARG, fname, "invalid whence %d", whence);
	}
	if ((offset < 0 && base < -offset) || (offset > 0 && base > INT64_MAX - offset) ||
	    base + offset > INT64_MAX / fh->esize)
		return mpil_file_err(fh, MPI_ERR_ARG, fname,
				     "offset %lld from %lld leaves the view (negative or too far)",
				     (long long)offset, (long long)base);
	*pos = base + offset;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_seek)
int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
	static const char F[] = "MPI_File_seek";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_file_check(fh, F));
	if (fh->amode & MPI_MODE_SEQUENTIAL)
		return mpil_file_err(fh, MPI_ERR_UNSUPPORTED_OPERATION, F,
				     "file opened MPI_MODE_SEQUENTIAL");
	return mpil_file_seek_target(fh, fh->pos, offset, whence, &fh->pos, F);
}

MPIL_PMPI_ALIAS(File_get_position)
int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
	static const char F[] = "MPI_File_get_position";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_file_check(fh, F));
	if (!offset)
		return mpil_file_err(fh, MPI_ERR_ARG, F, "offset is NULL");
	*offset = fh->pos;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_get_byte_offset)
int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
	static const char F[] = "MPI_File_get_byte_offset";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_file_check(fh, F));
	if (!disp)
		return mpil_file_err(fh, MPI_ERR_ARG, F, "disp is NULL");
	if (offset < 0 || offset > INT64_MAX / fh->esize)
		return mpil_file_err(fh, MPI_ERR_ARG, F, "invalid offset %lld", (long long)offset);
	*disp = mpil_file_view_offset(fh, offset * fh->esize);
	return MPI_SUCCESS;
}
