/*
 * mutex.c — MPIX_Mutex (mpi.h, "MPIX_Mutex"): the distributed mutexes of
 * Ross, Latham, Gropp, Thakur and Toonen (2005) with MPICH's old MPIX_Mutex
 * argument conventions, mapped onto the engine's ibx_mutex_* (core/rma/
 * mutex.c, which holds the algorithms):
 *
 *   MPIX_Mutex_create(count, comm)  ─► private duplicate of comm (its
 *       point-to-point tags carry the mutex's key exchange and the hybrid
 *       algorithm's notifications, never meeting the user's traffic)
 *       ─► ibx_mutex_create over comm's world ranks, in comm's order, with
 *          the tags (dup's context id << 32) + 0 .. count
 *   MPIX_Mutex_lock(m, i, rank)     ─► ibx_mutex_lock(i); rank must be
 *       i % size, the home of mutex i
 *
 * Errors are raised on the communicator given at creation (its error
 * handler at the time of the error), or on the duplicate once the user has
 * freed that communicator.
 */
#include "mpil_int.h"

#include <stdlib.h>

#define MPIL_MAGIC_MUTEX       0x6d4d7478u /* "mMtx" */
#define MPIL_PMPIX_ALIAS(name) MPIL_WEAK_ALIAS_(MPIX_##name, PMPIX_##name)

MPIL_PMPIX_ALIAS(Mutex_create)
MPIL_PMPIX_ALIAS(Mutex_free)
MPIL_PMPIX_ALIAS(Mutex_lock)
MPIL_PMPIX_ALIAS(Mutex_unlock)

struct mpil_mutex {
	uint32_t magic;
	int count, size;
	MPI_Comm comm; /* the user's: errors */
	MPI_Comm dup;  /* private: the engine's tags */
	ibx_mutex_t *m;
};

static MPI_Comm err_comm(MPIX_Mutex h)
{
	return mpil_comm_valid(h->comm) ? h->comm : h->dup;
}

static bool mutex_valid(MPIX_Mutex h)
{
	return h && h->magic == MPIL_MAGIC_MUTEX;
}

int PMPIX_Mutex_create(int count, MPI_Comm comm, MPIX_Mutex *hdl)
{
	static const char fn[] = "MPIX_Mutex_create";
	MPIL_CS_GUARD();
	MPIX_Mutex h;
	int *ranks, err;
	ibx_status_t s;

	MPIL_CHECK(mpil_check_init(fn));
	if (!mpil_comm_valid(comm))
		return mpil_err(NULL, MPI_ERR_COMM, fn, "invalid communicator");
	if (count < 1)
		return mpil_err(comm, MPI_ERR_ARG, fn, "count %d (at least 1 mutex)", count);
	if (!hdl)
		return mpil_err(comm, MPI_ERR_ARG, fn, "NULL handle pointer");
	h = calloc(1, sizeof(*h));
	ranks = malloc((size_t)comm->size * sizeof(*ranks));
	if (!h || !ranks) {
		free(h);
		free(ranks);
		return mpil_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	err = PMPI_Comm_dup(comm, &h->dup); /* collective; reports on comm itself */
	if (err != MPI_SUCCESS) {
		free(h);
		free(ranks);
		return err;
	}
	PMPI_Comm_set_errhandler(h->dup, MPI_ERRORS_RETURN);
	for (int r = 0; r < comm->size; r++)
		ranks[r] = mpil_comm_to_world(comm, r);
	s = ibx_mutex_create(mpil_g.ctx, ranks, comm->size, count, (ibx_tag_t)h->dup->cid << 32,
			     NULL, &h->m);
	free(ranks);
	if (s != IBX_OK) {
		PMPI_Comm_free(&h->dup);
		free(h);
		return mpil_err(comm, mpil_err_from_ibx(s), fn, "creating %d mutexes: %s", count,
				ibx_status_str(s));
	}
	h->magic = MPIL_MAGIC_MUTEX;
	h->count = count;
	h->size = comm->size;
	h->comm = comm;
	*hdl = h;
	return MPI_SUCCESS;
}

int PMPIX_Mutex_free(MPIX_Mutex *hdl)
{
	static const char fn[] = "MPIX_Mutex_free";
	MPIL_CS_GUARD();
	MPIX_Mutex h;
	MPI_Comm comm;
	ibx_status_t s;

	MPIL_CHECK(mpil_check_init(fn));
	if (!hdl || !mutex_valid(*hdl))
		return mpil_err(NULL, MPI_ERR_ARG, fn, "invalid mutex handle");
	h = *hdl;
	comm = err_comm(h);
	s = ibx_mutex_free(h->m);
	h->magic = MPIL_MAGIC_DEAD;
	*hdl = MPIX_MUTEX_NULL;
	if (s != IBX_OK) {
		/* the duplicate's members may be gone: leave it */
		free(h);
		return mpil_err(comm, mpil_err_from_ibx(s), fn, "%s", ibx_status_str(s));
	}
	PMPI_Comm_free(&h->dup);
	free(h);
	return MPI_SUCCESS;
}

/* The checks lock and unlock share; MPI_SUCCESS or the raised error. */
static int mutex_args(MPIX_Mutex h, int i, int rank, const char *fn)
{
	MPIL_CHECK(mpil_check_init(fn));
	if (!mutex_valid(h))
		return mpil_err(NULL, MPI_ERR_ARG, fn, "invalid mutex handle");
	if (i < 0 || i >= h->count)
		return mpil_err(err_comm(h), MPI_ERR_ARG, fn,
				"mutex index %d out of range (the object has %d)", i, h->count);
	if (rank != i % h->size)
		return mpil_err(err_comm(h), MPI_ERR_RANK, fn,
				"mutex %d lives at rank %d, not at rank %d", i, i % h->size, rank);
	return MPI_SUCCESS;
}

int PMPIX_Mutex_lock(MPIX_Mutex h, int mutex_index, int rank)
{
	static const char fn[] = "MPIX_Mutex_lock";
	MPIL_CS_GUARD();
	ibx_status_t s;

	MPIL_CHECK(mutex_args(h, mutex_index, rank, fn));
	s = ibx_mutex_lock(h->m, mutex_index);
	if (ibx_likely(s == IBX_OK))
		return MPI_SUCCESS;
	if (s == IBX_ERR_BUSY)
		return mpil_err(err_comm(h), MPI_ERR_RMA_SYNC, fn,
				"this process already holds mutex %d (at rank %d)", mutex_index,
				rank);
	return mpil_err(err_comm(h), mpil_err_from_ibx(s), fn, "mutex %d (at rank %d): %s",
			mutex_index, rank, ibx_status_str(s));
}

int PMPIX_Mutex_unlock(MPIX_Mutex h, int mutex_index, int rank)
{
	static const char fn[] = "MPIX_Mutex_unlock";
	MPIL_CS_GUARD();
	ibx_status_t s;

	MPIL_CHECK(mutex_args(h, mutex_index, rank, fn));
	s = ibx_mutex_unlock(h->m, mutex_index);
	if (ibx_likely(s == IBX_OK))
		return MPI_SUCCESS;
	if (s == IBX_ERR_INVALID_PARAM)
		return mpil_err(err_comm(h), MPI_ERR_RMA_SYNC, fn,
				"this process does not hold mutex %d (at rank %d)", mutex_index,
				rank);
	return mpil_err(err_comm(h), mpil_err_from_ibx(s), fn, "mutex %d (at rank %d): %s",
			mutex_index, rank, ibx_status_str(s));
}
