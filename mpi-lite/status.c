/*
 * status.c — the status setters of MPI-3.1 §12.3 (for generalized
 * requests and layered libraries): MPI_Status_set_elements(_x) and
 * MPI_Status_set_cancelled. The queries (MPI_Get_count, MPI_Get_elements,
 * MPI_Test_cancelled) are in p2p.c.
 *
 * A status carries the byte count of the message (mpil_count). Setting
 * @count basic elements of a datatype stores the bytes those elements
 * take, whole datatype elements first, then the first basic elements of
 * one more: for a struct {int, double} (12 bytes, 2 basic elements),
 * 3 elements are 12 + 4 bytes. MPI_Get_elements then says 3 and
 * MPI_Get_count MPI_UNDEFINED, as the standard asks (and Open MPI does;
 * MPICH counts whole datatype elements instead).
 */
#include "mpil_int.h"

/* Basic elements wholly inside the first @b packed bytes of @dt, even when
 * @b ends inside an element (mpil_dt_elements says -1 there: step back to
 * where the last whole element ends; basic elements are at most a few
 * dozen bytes). */
static MPI_Count elements_floor(MPI_Datatype dt, MPI_Count b)
{
	for (; b > 0; b--) {
		MPI_Count n = mpil_dt_elements(dt, b);

		if (n >= 0)
			return n;
	}
	return 0;
}

/* Packed bytes of the first @r basic elements of one element of @dt
 * (r below the element count): the least b holding r of them. */
static MPI_Count bytes_of_first(MPI_Datatype dt, MPI_Count r)
{
	MPI_Count lo = 0, hi = (MPI_Count)dt->size;

	while (lo < hi) {
		MPI_Count mid = lo + (hi - lo) / 2;

		if (elements_floor(dt, mid) >= r)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static int set_elements(MPI_Status *status, MPI_Datatype dt, MPI_Count count, const char *fname)
{
	MPI_Count per, bytes;

	MPIL_CHECK(mpil_check_init(fname));
	if (status == MPI_STATUS_IGNORE)
		return mpil_err(NULL, MPI_ERR_ARG, fname, "status is NULL");
	MPIL_CHECK(mpil_check_dtype(NULL, dt, fname));
	per = dt->elements;
	if (count < 0)
		return mpil_err(NULL, MPI_ERR_COUNT, fname, "negative count %lld",
				(long long)count);
	if (count > 0 && (per <= 0 || dt->size == 0))
		return mpil_err(NULL, MPI_ERR_ARG, fname,
				"%lld elements of a datatype without data", (long long)count);
	if (count == 0) {
		status->mpil_count = 0;
		return MPI_SUCCESS;
	}
	/* any byte count an MPI_Count holds (MPICH's big_count_status sets
	 * 0x7654321f71234567 bytes) */
	if (__builtin_mul_overflow(count / per, (MPI_Count)dt->size, &bytes) ||
	    (count % per && __builtin_add_overflow(bytes, bytes_of_first(dt, count % per), &bytes)))
		return mpil_err(NULL, MPI_ERR_COUNT, fname, "%lld elements overflow the byte count",
				(long long)count);
	status->mpil_count = bytes;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Status_set_elements)
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
	MPIL_CS_GUARD();
	return set_elements(status, datatype, count, "MPI_Status_set_elements");
}

MPIL_PMPI_ALIAS(Status_set_elements_x)
int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
	MPIL_CS_GUARD();
	return set_elements(status, datatype, count, "MPI_Status_set_elements_x");
}

MPIL_PMPI_ALIAS(Status_set_cancelled)
int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
	static const char F[] = "MPI_Status_set_cancelled";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (status == MPI_STATUS_IGNORE)
		return mpil_err(NULL, MPI_ERR_ARG, F, "status is NULL");
	status->mpil_cancelled = flag != 0;
	return MPI_SUCCESS;
}
