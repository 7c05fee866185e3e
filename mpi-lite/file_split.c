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

/* The checks of a _begin: nothing else in progress on @fh. */
static int split_begin_check(MPI_File fh, const char *fname)
{
	MPIL_CHECK(mpil_file_check(fh, fname));
	if (fh->split_op)
		return mpil_file_err(fh, MPI_ERR_IO, fname,
				     "%s is still in progress: one split collective at a time",
				     fh->split_op);
	mpil_status_empty(&fh->split_status);
	return MPI_SUCCESS;
}

/* Keeps the outcome of a _begin's access; the access's own error (already
 * raised on the file's handler) is also _end's. */
static int split_keep(MPI_File fh, int err, const void *buf, const char *fname)
{
	fh->split_op = fname;
	fh->split_buf = buf;
	fh->split_err = err;
	return err;
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
	MPIL_CHECK(split_begin_check(fh, READ_ALL));
	return split_keep(fh,
			  mpil_file_access(fh, false, MPIL_FILE_AT_INDIVIDUAL, 0, buf, count,
					   datatype, &fh->split_status, READ_ALL),
			  buf, READ_ALL);
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
	MPIL_CHECK(split_begin_check(fh, WRITE_ALL));
	return split_keep(fh,
			  mpil_file_access(fh, true, MPIL_FILE_AT_INDIVIDUAL, 0, (void *)buf, count,
					   datatype, &fh->split_status, WRITE_ALL),
			  buf, WRITE_ALL);
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
	MPIL_CHECK(split_begin_check(fh, READ_AT_ALL));
	return split_keep(fh,
			  mpil_file_access(fh, false, MPIL_FILE_AT_OFFSET, offset, buf, count,
					   datatype, &fh->split_status, READ_AT_ALL),
			  buf, READ_AT_ALL);
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
	MPIL_CHECK(split_begin_check(fh, WRITE_AT_ALL));
	return split_keep(fh,
			  mpil_file_access(fh, true, MPIL_FILE_AT_OFFSET, offset, (void *)buf,
					   count, datatype, &fh->split_status, WRITE_AT_ALL),
			  buf, WRITE_AT_ALL);
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
	MPIL_CHECK(split_begin_check(fh, READ_ORDERED));
	return split_keep(
	    fh, mpil_file_ordered(fh, false, buf, count, datatype, &fh->split_status, READ_ORDERED),
	    buf, READ_ORDERED);
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
	MPIL_CHECK(split_begin_check(fh, WRITE_ORDERED));
	return split_keep(fh,
			  mpil_file_ordered(fh, true, (void *)buf, count, datatype,
					    &fh->split_status, WRITE_ORDERED),
			  buf, WRITE_ORDERED);
}

MPIL_PMPI_ALIAS(File_write_ordered_end)
int PMPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
	MPIL_CS_GUARD();
	return split_end(fh, WRITE_ORDERED, buf, status, "MPI_File_write_ordered_end");
}
