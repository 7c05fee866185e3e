/*
 * comm.c — communicators: MPI_COMM_WORLD, MPI_COMM_SELF and their queries.
 *
 * A communicator is a context id (which separates its messages from every
 * other communicator's in the engine's 64-bit tag) plus a rank numbering:
 * the world's own for MPI_COMM_WORLD (no tables), a translation table both
 * ways otherwise (MPI_COMM_SELF: its one rank is this process's world
 * rank).
 */
#include "mpil_int.h"

#include <stdlib.h>

struct mpil_comm mpil_comm_world = {
	.magic = MPIL_MAGIC_COMM, .refcount = 1, .cid = 0,
	.errhandler = &mpil_errors_are_fatal, .predefined = true, .name = "MPI_COMM_WORLD",
};
struct mpil_comm mpil_comm_self = {
	.magic = MPIL_MAGIC_COMM, .refcount = 1, .cid = 2,
	.errhandler = &mpil_errors_are_fatal, .predefined = true, .name = "MPI_COMM_SELF",
};

int mpil_comm_init(void)
{
	MPI_Comm w = MPI_COMM_WORLD, s = MPI_COMM_SELF;

	w->rank = mpil_g.world_rank;
	w->size = mpil_g.world_size;
	w->rank_to_world = w->world_to_rank = NULL;

	s->rank = 0;
	s->size = 1;
	s->rank_to_world = malloc(sizeof(int));
	s->world_to_rank = malloc((size_t)mpil_g.world_size * sizeof(int));
	if (!s->rank_to_world || !s->world_to_rank) {
		mpil_comm_fini();
		return MPI_ERR_NO_MEM;
	}
	s->rank_to_world[0] = mpil_g.world_rank;
	for (int r = 0; r < mpil_g.world_size; r++)
		s->world_to_rank[r] = -1;
	s->world_to_rank[mpil_g.world_rank] = 0;
	mpil_g.next_cid = 4;
	return MPI_SUCCESS;
}

void mpil_comm_fini(void)
{
	MPI_Comm s = MPI_COMM_SELF;

	/* The error handlers stay: calls after MPI_Finalize are errors, and
	 * they are raised on MPI_COMM_WORLD's handler like any other. */
	free(s->rank_to_world);
	free(s->world_to_rank);
	s->rank_to_world = s->world_to_rank = NULL;
}

MPIL_PMPI_ALIAS(Comm_rank)
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
	static const char F[] = "MPI_Comm_rank";

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (ibx_unlikely(!rank))
		return mpil_err(comm, MPI_ERR_ARG, F, "rank is NULL");
	*rank = comm->rank;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_size)
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
	static const char F[] = "MPI_Comm_size";

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (ibx_unlikely(!size))
		return mpil_err(comm, MPI_ERR_ARG, F, "size is NULL");
	*size = comm->size;
	return MPI_SUCCESS;
}

/* The predefined attributes (MPI-3.1 §8.1.2): the value is a pointer to an
 * int that stays valid. */
static int attr_tag_ub = MPIL_TAG_UB;
static int attr_host = MPI_PROC_NULL;
static int attr_io = MPI_ANY_SOURCE; /* every process can do I/O */
static int attr_wtime_is_global = 0;
static int attr_universe_size;
static int attr_lastusedcode = MPI_ERR_LASTCODE;

MPIL_PMPI_ALIAS(Comm_get_attr)
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
	static const char F[] = "MPI_Comm_get_attr";
	int *val;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!attribute_val || !flag)
		return mpil_err(comm, MPI_ERR_ARG, F, "%s is NULL",
				flag ? "attribute_val" : "flag");
	switch (comm_keyval) {
	case MPI_TAG_UB: val = &attr_tag_ub; break;
	case MPI_HOST: val = &attr_host; break;
	case MPI_IO: val = &attr_io; break;
	case MPI_WTIME_IS_GLOBAL: val = &attr_wtime_is_global; break;
	case MPI_UNIVERSE_SIZE:
		attr_universe_size = mpil_g.world_size;
		val = &attr_universe_size;
		break;
	case MPI_LASTUSEDCODE: val = &attr_lastusedcode; break;
	case MPI_APPNUM: /* not started as part of an MPMD launch */
		*flag = 0;
		return MPI_SUCCESS;
	default:
		return mpil_err(comm, MPI_ERR_KEYVAL, F, "invalid keyval %d", comm_keyval);
	}
	*(int **)attribute_val = val;
	*flag = 1;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_set_name)
int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
	static const char F[] = "MPI_Comm_set_name";

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!comm_name)
		return mpil_err(comm, MPI_ERR_ARG, F, "comm_name is NULL");
	snprintf(comm->name, sizeof(comm->name), "%s", comm_name);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_get_name)
int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
	static const char F[] = "MPI_Comm_get_name";

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!comm_name || !resultlen)
		return mpil_err(comm, MPI_ERR_ARG, F, "%s is NULL",
				comm_name ? "resultlen" : "comm_name");
	memcpy(comm_name, comm->name, sizeof(comm->name));
	*resultlen = (int)strlen(comm_name);
	return MPI_SUCCESS;
}
