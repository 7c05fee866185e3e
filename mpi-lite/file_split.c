/*
 * file_split.c — the split collective data access (MPI-3.1 §13.4.5):
 * MPI_File_{read,write}{_all,_at_all,_ordered}_begin / _end.
 *
 * _begin does the whole access (as the other collective forms, the
 * independent access of every member) and keeps its outcome in the file;
 * _end hands it over. The rules the standard sets are checked, each with
 * MPI_ERR_IO as MPICH's ROMIO does: at most one split collective per file
 * at a time, an _end only after its own _begin, with the same buffer; and
 * a file cannot be closed between the two.
 */
#include "file_int.h"

/* A _begin: nothing else in progress on @fh, then the whole access
 * (@ordered: the ordered one, through the shared pointer; else the one
 * @at @offset), its outcome kept for _end. The access's own error
 * (already raised on the file's handler) is also _end's. */
static int split_begin(MPI_File fh, const char *op, bool write, bool ordered, mpil_file_at_t at,
		       MPI_Offset offset, void *buf, int count, MPI_Datatype dt)
{
	MPIL_CHECK(mpil_file_check(fh, op));
	if (fh->split_op)
		return mpil_file_err(fh, MPI_ERR_IO, op,
				     "%s is still in progress: one split collective at a time",
				     fh->split_op);
	mpil_status_empty(&fh->split_status);
	fh->split_err =
	    ordered
		? mpil_file_ordered(fh, write, buf, count, dt, &fh->split_status, op)
		: mpil_file_access(fh, write, at, offset, buf, count, dt, &fh->split_status, op);
	fh->split_op = op;
	fh->split_buf = buf;
	return fh->split_err;
}

/* _end of @begin: its outcome, into *@status. */
static int split_end(MPI_File fh, const char *begin, const void *buf, MPI_Status *status,
		     const char *fname)
{
	MPIL_CHECK(mpil_file_check(fh, fname));
	if (fh->split_op != begin)
		return mpil_file_err(fh, MPI_ERR_IO, fname, "no %s in progress%s%s", begin,
				     fh->split_op ? " (in progress: " : "",
				     fh->split_op ? fh->split_op : "");
	if (buf != fh->split_buf)
		return mpil_file_err(fh, MPI_ERR_BUFFER, fname,
				     "buffer %p is not the one given to %s (%p)", buf, begin,
				     fh->split_buf);
	fh->split_op = NULL;
	if (status && status != MPI_STATUS_IGNORE)
		*status = fh->split_status;
	return fh->split_err;
}

static const char READ_ALL[] = "MPI_File_read_all_begin", WRITE_ALL[] = "MPI_File_write_all_begin",
		  READ_AT_ALL[] = "MPI_File_read_at_all_begin",
		  WRITE_AT_ALL[] = "MPI_File_write_at_all_begin",
		  READ_ORDERED[] = "MPI_File_read_ordered_begin",
		  WRITE_ORDERED[] = "MPI_File_write_ordered_begin";

MPIL_PMPI_ALIAS(File_read_all_begin)
int PMPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
	MPIL_CS_GUARD();
	return split_begin(fh, READ_ALL, false, false, MPIL_FILE_AT_INDIVIDUAL, 0, buf, count,
			   datatype);
}

MPIL_PMPI_ALIAS(File_read_all_end)
int PMPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
	MPIL_CS_GUARD();
	return split_end(fh, READ_ALL, buf, status, "MPI_File_read_all_end");
}

MPIL_PMPI_ALIAS(File_write_all_begin)
int PMPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
	MPIL_CS_GUARD();
	return split_begin(fh, WRITE_ALL, true, false, MPIL_FILE_AT_INDIVIDUAL, 0, (void *)buf,
			   count, datatype);
}

MPIL_PMPI_ALIAS(File_write_all_end)
int PMPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
	MPIL_CS_GUARD();
	return split_end(fh, WRITE_ALL, buf, status, "MPI_File_write_all_end");
}

MPIL_PMPI_ALIAS(File_read_at_all_begin)
int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count,
				MPI_Datatype datatype)
{
	MPIL_CS_GUARD();
	return split_begin(fh, READ_AT_ALL, false, false, MPIL_FILE_AT_OFFSET, offset, buf, count,
			   datatype);
}

MPIL_PMPI_ALIAS(File_read_at_all_end)
int PMPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
	MPIL_CS_GUARD();
	return split_end(fh, READ_AT_ALL, buf, status, "MPI_File_read_at_all_end");
}

MPIL_PMPI_ALIAS(File_write_at_all_begin)
int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
				 MPI_Datatype datatype)
{
	MPIL_CS_GUARD();
	return split_begin(fh, WRITE_AT_ALL, true, false, MPIL_FILE_AT_OFFSET, offset, (void *)buf,
			   count, datatype);
}

MPIL_PMPI_ALIAS(File_write_at_all_end)
int PMPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
	MPIL_CS_GUARD();
	return split_end(fh, WRITE_AT_ALL, buf, status, "MPI_File_write_at_all_end");
}

MPIL_PMPI_ALIAS(File_read_ordered_begin)
int PMPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
	MPIL_CS_GUARD();
	return split_begin(fh, READ_ORDERED, false, true, MPIL_FILE_AT_SHARED, 0, buf, count,
			   datatype);
}

MPIL_PMPI_ALIAS(File_read_ordered_end)
int PMPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
	MPIL_CS_GUARD();
	return split_end(fh, READ_ORDERED, buf, status, "MPI_File_read_ordered_end");
}

MPIL_PMPI_ALIAS(File_write_ordered_begin)
int PMPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
	MPIL_CS_GUARD();
	return split_begin(fh, WRITE_ORDERED, true, true, MPIL_FILE_AT_SHARED, 0, (void *)buf,
			   count, datatype);
}

MPIL_PMPI_ALIAS(File_write_ordered_end)
int PMPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
	MPIL_CS_GUARD();
	return split_end(fh, WRITE_ORDERED, buf, status, "MPI_File_write_ordered_end");
}
