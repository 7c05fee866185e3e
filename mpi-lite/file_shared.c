/*
 * file_shared.c — the shared file pointer (MPI-3.1 §13.4.4): read_shared,
 * write_shared and their nonblocking forms, the collective read_ordered /
 * write_ordered, seek_shared, get_position_shared.
 *
 * The pointer is one int64 (etypes of the view) in a window at rank 0 of
 * the file's communicator, made when the file is opened and kept in a
 * passive-target epoch (lock_all) until it is closed. Every use is a
 * remote atomic that rank 0 never has to help with (mpi-lite's windows do
 * them with NIC or CPU atomics), so a rank writing with the shared pointer
 * does not wait for rank 0 to call MPI:
 *
 *   write_shared(n)     old = fetch_and_op(+n) at rank 0; flush
 *                       write at old                      (file_io.c)
 *   write_ordered(n)    counts = allgather(n)
 *                       rank 0: base = fetch_and_op(+sum of counts);
 *                       bcast base
 *                       write at base + counts of the lower ranks
 *   seek_shared         rank 0: fetch_and_op(replace), then bcast of the
 *                       outcome: nobody uses the pointer before it is set
 *   get_position_shared fetch_and_op(no_op)
 *
 * The pointer moves before the access, by the whole request: a read that
 * meets the end of the file still advances it by the count asked (as
 * ROMIO does). MPI_File_set_view sets it back to 0, as the standard says.
 */
#include "file_int.h"

#include <stdlib.h>

/* Etypes of the view in @count elements of @dt (checked to be whole). */
static int64_t req_etypes(MPI_File fh, int count, MPI_Datatype dt)
{
	return (int64_t)count * (int64_t)dt->size / fh->esize;
}

static int sp_fetch_op(MPI_File fh, int64_t operand, MPI_Op op, int64_t *old)
{
	int err = PMPI_Fetch_and_op(&operand, old, MPI_INT64_T, 0, 0, op, fh->sp_win);

	return err != MPI_SUCCESS ? err : PMPI_Win_flush(0, fh->sp_win);
}

int mpil_file_shared_create(MPI_File fh, MPI_Offset pos)
{
	int64_t *base = NULL;
	bool owner = fh->comm->rank == 0;
	int err = PMPI_Win_allocate(owner ? (MPI_Aint)sizeof(int64_t) : 0, sizeof(int64_t),
				    MPI_INFO_NULL, fh->comm, &base, &fh->sp_win);

	if (err != MPI_SUCCESS) {
		fh->sp_win = MPI_WIN_NULL;
		return err;
	}
	if (owner)
		*base = pos; /* before anyone can reach it: the barrier below */
	err = PMPI_Win_lock_all(MPI_MODE_NOCHECK, fh->sp_win);
	if (err == MPI_SUCCESS)
		err = mpil_barrier(fh->comm);
	if (err != MPI_SUCCESS)
		mpil_file_shared_free(fh);
	return err;
}

void mpil_file_shared_free(MPI_File fh)
{
	if (fh->sp_win == MPI_WIN_NULL)
		return;
	PMPI_Win_unlock_all(fh->sp_win);
	PMPI_Win_free(&fh->sp_win);
	fh->sp_win = MPI_WIN_NULL;
}

/* Collective: rank 0 sets the pointer to @pos (when @set) or reads it
 * (*pos out); everyone gets the outcome, and the value. */
static int sp_root_op(MPI_File fh, bool set, MPI_Offset *pos)
{
	int64_t v[2] = {MPI_SUCCESS, 0}, old;
	int err;

	if (fh->comm->rank == 0) {
		v[0] = sp_fetch_op(fh, set ? *pos : 0, set ? MPI_REPLACE : MPI_NO_OP, &old);
		v[1] = set ? *pos : old;
	}
	err = mpil_bcast_bytes(v, sizeof(v), 0, fh->comm);
	if (err != MPI_SUCCESS)
		return err;
	*pos = v[1];
	return (int)v[0];
}

int mpil_file_shared_reset(MPI_File fh)
{
	MPI_Offset zero = 0;
	/* after every rank's earlier use of the pointer, as with seek_shared */
	int err = mpil_barrier(fh->comm);

	return err != MPI_SUCCESS ? err : sp_root_op(fh, true, &zero);
}

int mpil_file_shared_read_all(MPI_File fh, MPI_Offset *pos)
{
	return sp_root_op(fh, false, pos);
}

/* read_shared / write_shared: checked, then the pointer moves by the
 * request, then the access at where it was; @nb: the nonblocking form,
 * ending in *@request. */
static int shared_access(MPI_File fh, bool write, void *buf, int count, MPI_Datatype dt,
			 MPI_Status *status, bool nb, MPI_Request *request, const char *fname)
{
	int64_t old;
	int err;

	MPIL_CHECK(mpil_file_check(fh, fname));
	if (nb && !request)
		return mpil_file_err(fh, MPI_ERR_ARG, fname, "request is NULL");
	MPIL_CHECK(mpil_file_check_access(fh, write, count, dt, buf, fname));
	err = sp_fetch_op(fh, req_etypes(fh, count, dt), MPI_SUM, &old);
	if (err != MPI_SUCCESS)
		return mpil_file_err(fh, err, fname, "moving the shared file pointer");
	if (nb)
		return mpil_file_iaccess(fh, write, MPIL_FILE_AT_SHARED, old, buf, count, dt,
					 request, fname);
	return mpil_file_access(fh, write, MPIL_FILE_AT_SHARED, old, buf, count, dt, status, fname);
}

MPIL_PMPI_ALIAS(File_read_shared)
int PMPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
			  MPI_Status *status)
{
	MPIL_CS_GUARD();
	return shared_access(fh, false, buf, count, datatype, status, false, NULL,
			     "MPI_File_read_shared");
}

MPIL_PMPI_ALIAS(File_write_shared)
int PMPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
			   MPI_Status *status)
{
	MPIL_CS_GUARD();
	return shared_access(fh, true, (void *)buf, count, datatype, status, false, NULL,
			     "MPI_File_write_shared");
}

MPIL_PMPI_ALIAS(File_iread_shared)
int PMPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
			   MPI_Request *request)
{
	MPIL_CS_GUARD();
	return shared_access(fh, false, buf, count, datatype, NULL, true, request,
			     "MPI_File_iread_shared");
}

MPIL_PMPI_ALIAS(File_iwrite_shared)
int PMPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
			    MPI_Request *request)
{
	MPIL_CS_GUARD();
	return shared_access(fh, true, (void *)buf, count, datatype, NULL, true, request,
			     "MPI_File_iwrite_shared");
}

/* The collective ordered access: each rank's place is the pointer plus
 * what the lower ranks move; the pointer moves by the sum, once. An
 * argument error on any rank fails the call on all (before anything
 * moves), so no rank waits for a partner that gave up. */
int mpil_file_ordered(MPI_File fh, bool write, void *buf, int count, MPI_Datatype dt,
		      MPI_Status *status, const char *fname)
{
	int p = fh->comm->size, me = fh->comm->rank, err;
	int64_t mine, *counts, v[2] = {MPI_SUCCESS, 0}, below = 0, sum = 0;

	MPIL_CHECK(mpil_file_check(fh, fname));
	err = mpil_file_check_access(fh, write, count, dt, buf, fname);
	err = mpil_file_agree(fh->comm, err);
	if (err != MPI_SUCCESS)
		return mpil_file_err(fh, err, fname, "invalid arguments on some rank");
	counts = malloc((size_t)p * sizeof(*counts));
	if (!counts)
		return mpil_file_err(fh, MPI_ERR_NO_MEM, fname, "no memory for %d counts", p);
	mine = req_etypes(fh, count, dt);
	err = PMPI_Allgather(&mine, 1, MPI_INT64_T, counts, 1, MPI_INT64_T, fh->comm);
	for (int r = 0; err == MPI_SUCCESS && r < p; r++) {
		below += r < me ? counts[r] : 0;
		sum += counts[r];
	}
	free(counts);
	if (err == MPI_SUCCESS && me == 0)
		v[0] = sp_fetch_op(fh, sum, MPI_SUM, &v[1]);
	if (err == MPI_SUCCESS)
		err = mpil_bcast_bytes(v, sizeof(v), 0, fh->comm);
	if (err == MPI_SUCCESS)
		err = (int)v[0];
	if (err != MPI_SUCCESS)
		return mpil_file_err(fh, err, fname, "moving the shared file pointer");
	return mpil_file_access(fh, write, MPIL_FILE_AT_SHARED, v[1] + below, buf, count, dt,
				status, fname);
}

MPIL_PMPI_ALIAS(File_read_ordered)
int PMPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
			   MPI_Status *status)
{
	MPIL_CS_GUARD();
	return mpil_file_ordered(fh, false, buf, count, datatype, status, "MPI_File_read_ordered");
}

MPIL_PMPI_ALIAS(File_write_ordered)
int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
			    MPI_Status *status)
{
	MPIL_CS_GUARD();
	return mpil_file_ordered(fh, true, (void *)buf, count, datatype, status,
				 "MPI_File_write_ordered");
}

MPIL_PMPI_ALIAS(File_seek_shared)
int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
	static const char F[] = "MPI_File_seek_shared";
	MPIL_CS_GUARD();
	MPI_Offset pos = 0;
	int64_t cur = 0;
	int err;

	MPIL_CHECK(mpil_file_check(fh, F));
	if (fh->amode & MPI_MODE_SEQUENTIAL)
		return mpil_file_err(fh, MPI_ERR_UNSUPPORTED_OPERATION, F,
				     "file opened MPI_MODE_SEQUENTIAL");
	/* every rank's earlier shared accesses are done; the arguments must
	 * be the same everywhere: rank 0's decide, its outcome is everyone's */
	err = mpil_barrier(fh->comm);
	if (err == MPI_SUCCESS && fh->comm->rank == 0) {
		if (whence == MPI_SEEK_CUR)
			err = sp_fetch_op(fh, 0, MPI_NO_OP, &cur);
		if (err == MPI_SUCCESS)
			err = mpil_file_seek_target(fh, cur, offset, whence, &pos, F);
		if (err == MPI_SUCCESS)
			err = sp_fetch_op(fh, pos, MPI_REPLACE, &cur);
	}
	err = mpil_file_agree(fh->comm, err);
	if (err != MPI_SUCCESS && fh->comm->rank != 0)
		return mpil_file_err(fh, err, F, "failed at rank 0");
	return err;
}

MPIL_PMPI_ALIAS(File_get_position_shared)
int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
	static const char F[] = "MPI_File_get_position_shared";
	MPIL_CS_GUARD();
	int64_t v;
	int err;

	MPIL_CHECK(mpil_file_check(fh, F));
	if (!offset)
		return mpil_file_err(fh, MPI_ERR_ARG, F, "offset is NULL");
	err = sp_fetch_op(fh, 0, MPI_NO_OP, &v);
	if (err != MPI_SUCCESS)
		return mpil_file_err(fh, err, F, "reading the shared file pointer");
	*offset = v;
	return MPI_SUCCESS;
}
