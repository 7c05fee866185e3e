/*
 * file_io.c — the data access calls (MPI-3.1 §13.4): read / write with
 * explicit offsets (_at) or the individual file pointer, blocking,
 * collective (_all) and nonblocking (i..., i..._all). The shared file
 * pointer's forms are in file_shared.c, the split collectives in
 * file_split.c; all of them end here.
 *
 * Every form ends in mpil_file_access():
 *
 *   check (amode, count, datatype, offset)
 *   atomic mode and views that may overlap:  lock the stripes of the
 *                                            file range touched (file_atomic.c)
 *   mpil_file_map_xfer: preadv / pwritev     (file_map.c)
 *   unlock; advance the file pointer; status = bytes moved
 *
 * The collective forms are the independent access done by every member:
 * with each process owning a POSIX descriptor on a local file system there
 * is nothing to aggregate that the page cache does not already merge, and
 * the result is the same as the MPI semantics ask. The nonblocking forms
 * complete at once and return a completed request.
 */
#include "file_int.h"

#include <string.h>

int mpil_file_check_access(MPI_File fh, bool write, int count, MPI_Datatype dt, const void *buf,
			   const char *fname)
{
	int access = fh->amode & (MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY);

	if (write && access == MPI_MODE_RDONLY)
		return mpil_file_err(fh, MPI_ERR_READ_ONLY, fname, "file opened MPI_MODE_RDONLY");
	if (!write && access == MPI_MODE_WRONLY)
		return mpil_file_err(fh, MPI_ERR_ACCESS, fname, "file opened MPI_MODE_WRONLY");
	if (count < 0)
		return mpil_file_err(fh, MPI_ERR_COUNT, fname, "negative count %d", count);
	if (!dt)
		return mpil_file_err(fh, MPI_ERR_TYPE, fname, "datatype is MPI_DATATYPE_NULL");
	if (dt->magic != MPIL_MAGIC_DTYPE)
		return mpil_file_err(fh, MPI_ERR_TYPE, fname, "invalid datatype handle %p",
				     (void *)dt);
	if (!(dt->flags & MPIL_DTF_COMMITTED))
		return mpil_file_err(fh, MPI_ERR_TYPE, fname, "datatype is not committed");
	if ((int64_t)dt->size % fh->esize)
		return mpil_file_err(fh, MPI_ERR_TYPE, fname,
				     "datatype of %zu bytes is not a whole number of etypes of "
				     "%lld bytes",
				     dt->size, (long long)fh->esize);
	if (!buf && count > 0 && dt->size > 0 && (dt->flags & MPIL_DTF_PREDEFINED))
		return mpil_file_err(fh, MPI_ERR_BUFFER, fname, "NULL buffer with count %d", count);
	return MPI_SUCCESS;
}

int mpil_file_access(MPI_File fh, bool write, mpil_file_at_t at, MPI_Offset offset, void *buf,
		     int count, MPI_Datatype dt, MPI_Status *status, const char *fname)
{
	int64_t nbytes, s, done = 0;
	MPI_Offset lo = 0, hi = 0;
	int err, eno;

	MPIL_CHECK(mpil_file_check(fh, fname));
	MPIL_CHECK(mpil_file_check_access(fh, write, count, dt, buf, fname));
	if (at == MPIL_FILE_AT_OFFSET) {
		if (fh->amode & MPI_MODE_SEQUENTIAL)
			return mpil_file_err(fh, MPI_ERR_UNSUPPORTED_OPERATION, fname,
					     "explicit offsets on a file opened "
					     "MPI_MODE_SEQUENTIAL");
		if (offset < 0)
			return mpil_file_err(fh, MPI_ERR_ARG, fname, "negative offset %lld",
					     (long long)offset);
	} else if (at == MPIL_FILE_AT_INDIVIDUAL) {
		offset = fh->pos;
	}
	nbytes = (int64_t)count * (int64_t)dt->size;
	if (offset > (INT64_MAX - nbytes) / fh->esize)
		return mpil_file_err(fh, MPI_ERR_ARG, fname, "offset %lld overflows",
				     (long long)offset);
	s = offset * fh->esize;
	if (nbytes > 0 && fh->ft_size > 0) { /* (a view without bytes moves none) */
		bool lock = fh->atomic && !fh->disjoint;

		if (lock) {
			mpil_file_map_range(fh, s, nbytes, &lo, &hi);
			err = mpil_file_lock(fh, lo, hi);
			if (err != MPI_SUCCESS)
				return mpil_file_err(fh, err, fname, "locking bytes [%lld, %lld)",
						     (long long)lo, (long long)hi);
		}
		eno = mpil_file_map_xfer(fh, write, s, buf, count, dt, nbytes, &done);
		if (lock) {
			err = mpil_file_unlock(fh, lo, hi);
			if (err != MPI_SUCCESS && !eno)
				return mpil_file_err(fh, err, fname, "unlocking bytes [%lld, %lld)",
						     (long long)lo, (long long)hi);
		}
		if (eno)
			return mpil_file_err(fh, mpil_file_errno_class(eno), fname,
					     "%s of %lld bytes at view offset %lld: %s",
					     write ? "write" : "read", (long long)nbytes,
					     (long long)offset, strerror(eno));
	}
	if (at == MPIL_FILE_AT_INDIVIDUAL)
		fh->pos += done / fh->esize;
	mpil_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, done);
	return MPI_SUCCESS;
}

int mpil_file_iaccess(MPI_File fh, bool write, mpil_file_at_t at, MPI_Offset offset, void *buf,
		      int count, MPI_Datatype dt, MPI_Request *request, const char *fname)
{
	mpil_request_t *r;
	MPI_Status st;

	MPIL_CHECK(mpil_file_check(fh, fname));
	if (!request)
		return mpil_file_err(fh, MPI_ERR_ARG, fname, "request is NULL");
	MPIL_CHECK(mpil_file_access(fh, write, at, offset, buf, count, dt, &st, fname));
	r = mpil_req_alloc();
	if (!r)
		return mpil_file_err(fh, MPI_ERR_NO_MEM, fname, "no memory for a request");
	r->kind = MPIL_REQ_DONE;
	r->comm = MPI_COMM_SELF; /* outlives the file, if the request does */
	mpil_status_empty(&r->preset);
	r->preset.mpil_count = st.mpil_count;
	*request = r;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_read_at)
int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
		      MPI_Status *status)
{
	MPIL_CS_GUARD();
	return mpil_file_access(fh, false, MPIL_FILE_AT_OFFSET, offset, buf, count, datatype,
				status, "MPI_File_read_at");
}

MPIL_PMPI_ALIAS(File_read_at_all)
int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
			  MPI_Datatype datatype, MPI_Status *status)
{
	MPIL_CS_GUARD();
	return mpil_file_access(fh, false, MPIL_FILE_AT_OFFSET, offset, buf, count, datatype,
				status, "MPI_File_read_at_all");
}

MPIL_PMPI_ALIAS(File_write_at)
int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
		       MPI_Datatype datatype, MPI_Status *status)
{
	MPIL_CS_GUARD();
	return mpil_file_access(fh, true, MPIL_FILE_AT_OFFSET, offset, (void *)buf, count, datatype,
				status, "MPI_File_write_at");
}

MPIL_PMPI_ALIAS(File_write_at_all)
int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
			   MPI_Datatype datatype, MPI_Status *status)
{
	MPIL_CS_GUARD();
	return mpil_file_access(fh, true, MPIL_FILE_AT_OFFSET, offset, (void *)buf, count, datatype,
				status, "MPI_File_write_at_all");
}

MPIL_PMPI_ALIAS(File_iread_at)
int PMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
		       MPI_Request *request)
{
	MPIL_CS_GUARD();
	return mpil_file_iaccess(fh, false, MPIL_FILE_AT_OFFSET, offset, buf, count, datatype,
				 request, "MPI_File_iread_at");
}

MPIL_PMPI_ALIAS(File_iwrite_at)
int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
			MPI_Datatype datatype, MPI_Request *request)
{
	MPIL_CS_GUARD();
	return mpil_file_iaccess(fh, true, MPIL_FILE_AT_OFFSET, offset, (void *)buf, count,
				 datatype, request, "MPI_File_iwrite_at");
}

MPIL_PMPI_ALIAS(File_read)
int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	MPIL_CS_GUARD();
	return mpil_file_access(fh, false, MPIL_FILE_AT_INDIVIDUAL, 0, buf, count, datatype, status,
				"MPI_File_read");
}

MPIL_PMPI_ALIAS(File_read_all)
int PMPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
	MPIL_CS_GUARD();
	return mpil_file_access(fh, false, MPIL_FILE_AT_INDIVIDUAL, 0, buf, count, datatype, status,
				"MPI_File_read_all");
}

MPIL_PMPI_ALIAS(File_write)
int PMPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
		    MPI_Status *status)
{
	MPIL_CS_GUARD();
	return mpil_file_access(fh, true, MPIL_FILE_AT_INDIVIDUAL, 0, (void *)buf, count, datatype,
				status, "MPI_File_write");
}

MPIL_PMPI_ALIAS(File_write_all)
int PMPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
			MPI_Status *status)
{
	MPIL_CS_GUARD();
	return mpil_file_access(fh, true, MPIL_FILE_AT_INDIVIDUAL, 0, (void *)buf, count, datatype,
				status, "MPI_File_write_all");
}

MPIL_PMPI_ALIAS(File_iread)
int PMPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
	MPIL_CS_GUARD();
	return mpil_file_iaccess(fh, false, MPIL_FILE_AT_INDIVIDUAL, 0, buf, count, datatype,
				 request, "MPI_File_iread");
}

MPIL_PMPI_ALIAS(File_iwrite)
int PMPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
		     MPI_Request *request)
{
	MPIL_CS_GUARD();
	return mpil_file_iaccess(fh, true, MPIL_FILE_AT_INDIVIDUAL, 0, (void *)buf, count, datatype,
				 request, "MPI_File_iwrite");
}

/* The nonblocking collective forms (MPI-3.1): as the blocking ones, the
 * independent access of every member, complete at return. */
MPIL_PMPI_ALIAS(File_iread_at_all)
int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
			   MPI_Datatype datatype, MPI_Request *request)
{
	MPIL_CS_GUARD();
	return mpil_file_iaccess(fh, false, MPIL_FILE_AT_OFFSET, offset, buf, count, datatype,
				 request, "MPI_File_iread_at_all");
}

MPIL_PMPI_ALIAS(File_iwrite_at_all)
int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
			    MPI_Datatype datatype, MPI_Request *request)
{
	MPIL_CS_GUARD();
	return mpil_file_iaccess(fh, true, MPIL_FILE_AT_OFFSET, offset, (void *)buf, count,
				 datatype, request, "MPI_File_iwrite_at_all");
}

MPIL_PMPI_ALIAS(File_iread_all)
int PMPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
			MPI_Request *request)
{
	MPIL_CS_GUARD();
	return mpil_file_iaccess(fh, false, MPIL_FILE_AT_INDIVIDUAL, 0, buf, count, datatype,
				 request, "MPI_File_iread_all");
}

MPIL_PMPI_ALIAS(File_iwrite_all)
int PMPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
			 MPI_Request *request)
{
	MPIL_CS_GUARD();
	return mpil_file_iaccess(fh, true, MPIL_FILE_AT_INDIVIDUAL, 0, (void *)buf, count, datatype,
				 request, "MPI_File_iwrite_all");
}
