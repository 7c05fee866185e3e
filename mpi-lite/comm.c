/*
 * comm.c — communicators: MPI_COMM_WORLD and MPI_COMM_SELF, the life of a
 * communicator object (made, released, MPI_Comm_free), its queries,
 * comparison, name and hints. New communicators (dup, split, split_type,
 * create, create_group) are made in comm_create.c on a context id agreed
 * on in comm_cid.c.
 *
 * A communicator is a context id (which separates its messages from every
 * other communicator's in the engine's 64-bit tag) plus a rank numbering:
 * the world's own for MPI_COMM_WORLD and its congruent copies (no tables),
 * a translation table both ways otherwise.
 */
#include "comm_int.h"

#include <stdlib.h>

struct mpil_comm mpil_comm_world = {
    .magic = MPIL_MAGIC_COMM,
    .refcount = 1,
    .cid = 0,
    .errhandler = &mpil_errors_are_fatal,
    .predefined = true,
    .name = "MPI_COMM_WORLD",
};
struct mpil_comm mpil_comm_self = {
    .magic = MPIL_MAGIC_COMM,
    .refcount = 1,
    .cid = MPIL_CID_STRIDE,
    .errhandler = &mpil_errors_are_fatal,
    .predefined = true,
    .name = "MPI_COMM_SELF",
};

static mpil_pool_t comm_pool = MPIL_POOL_INIT(struct mpil_comm);

int mpil_comm_init(void)
{
	MPI_Comm w = MPI_COMM_WORLD, s = MPI_COMM_SELF;

	w->rank = mpil_g.world_rank;
	w->size = mpil_g.world_size;
	w->rank_to_world = w->world_to_rank = NULL;
	w->refcount = s->refcount = 1;

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
	mpil_cid_reset();
	mpil_cid_mark(w->cid, true);
	mpil_cid_mark(s->cid, true);
	return MPI_SUCCESS;
}

/* ---- life of a created communicator ---------------------------------------------- */

static void comm_free_parts(MPI_Comm c)
{
	mpil_attr_drop(c);
	mpil_topo_free(c);
	mpil_coll_split_free(c);
	free(c->rank_to_world);
	free(c->world_to_rank);
	c->rank_to_world = c->world_to_rank = NULL;
	mpil_info_release(c->info);
	c->info = MPI_INFO_NULL;
	if (c->errhandler)
		mpil_errh_release(c->errhandler);
	c->errhandler = NULL;
}

void mpil_comm_destroy(MPI_Comm c)
{
	comm_free_parts(c);
	mpil_cid_mark(c->cid, false);
	mpil_pool_put(&comm_pool, c);
}

void mpil_comm_release(MPI_Comm comm)
{
	if (--comm->refcount == 0 && !comm->predefined)
		mpil_comm_destroy(comm);
}

static void comm_destroy_live(void *obj)
{
	comm_free_parts(obj);
}

int mpil_comm_finalize_attrs(void)
{
	int err = mpil_attr_delete_all(MPI_COMM_SELF), e2;

	/* a failed callback leaves the rest of the attributes: drop them */
	mpil_attr_drop(MPI_COMM_SELF);
	e2 = mpil_attr_delete_all(MPI_COMM_WORLD);
	mpil_attr_drop(MPI_COMM_WORLD);
	return err != MPI_SUCCESS ? err : e2;
}

void mpil_comm_fini(void)
{
	MPI_Comm s = MPI_COMM_SELF, w = MPI_COMM_WORLD;

	/* The error handlers of the predefined communicators stay: calls
	 * after MPI_Finalize are errors, and they are raised on
	 * MPI_COMM_WORLD's handler like any other. */
	mpil_pool_fini(&comm_pool, comm_destroy_live);
	free(s->rank_to_world);
	free(s->world_to_rank);
	s->rank_to_world = s->world_to_rank = NULL;
	mpil_info_release(s->info);
	mpil_info_release(w->info);
	s->info = w->info = MPI_INFO_NULL;
}

/*
 * A new communicator with context id @cid over the processes @world[0..n)
 * (world ranks, in rank order; this process is among them), inheriting
 * @parent's error handler. Congruent with MPI_COMM_WORLD: no tables.
 */
int mpil_comm_new(MPI_Comm parent, uint32_t cid, int n, const int *world, MPI_Comm *newcomm_p)
{
	MPI_Comm c = mpil_pool_get(&comm_pool);
	bool identity = n == mpil_g.world_size;
	int me = -1;

	if (!c)
		return MPI_ERR_NO_MEM;
	for (int r = 0; r < n; r++) {
		identity = identity && world[r] == r;
		if (world[r] == mpil_g.world_rank)
			me = r;
	}
	if (me < 0) {
		mpil_pool_put(&comm_pool, c);
		return MPI_ERR_INTERN;
	}
	if (!identity) {
		c->rank_to_world = malloc((size_t)n * sizeof(int));
		c->world_to_rank = malloc((size_t)mpil_g.world_size * sizeof(int));
		if (!c->rank_to_world || !c->world_to_rank) {
			free(c->rank_to_world);
			free(c->world_to_rank);
			mpil_pool_put(&comm_pool, c);
			return MPI_ERR_NO_MEM;
		}
		for (int r = 0; r < mpil_g.world_size; r++)
			c->world_to_rank[r] = -1;
		for (int r = 0; r < n; r++) {
			c->rank_to_world[r] = world[r];
			c->world_to_rank[world[r]] = r;
		}
	}
	c->magic = MPIL_MAGIC_COMM;
	c->refcount = 1;
	c->cid = cid;
	c->rank = me;
	c->size = n;
	c->errhandler = parent->errhandler;
	if (!c->errhandler->predefined)
		c->errhandler->refcount++;
	mpil_cid_mark(cid, true);
	*newcomm_p = c;
	return MPI_SUCCESS;
}

/* ---- queries ------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Comm_rank)
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
	static const char F[] = "MPI_Comm_rank";
	MPIL_CS_GUARD();

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
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (ibx_unlikely(!size))
		return mpil_err(comm, MPI_ERR_ARG, F, "size is NULL");
	*size = comm->size;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_test_inter)
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
	static const char F[] = "MPI_Comm_test_inter";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!flag)
		return mpil_err(comm, MPI_ERR_ARG, F, "flag is NULL");
	*flag = 0; /* mpi-lite has intracommunicators only */
	return MPI_SUCCESS;
}

/* No process of mpi-lite is spawned (there is no MPI_Comm_spawn). */
MPIL_PMPI_ALIAS(Comm_get_parent)
int PMPI_Comm_get_parent(MPI_Comm *parent)
{
	static const char F[] = "MPI_Comm_get_parent";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (!parent)
		return mpil_err(NULL, MPI_ERR_ARG, F, "parent is NULL");
	*parent = MPI_COMM_NULL;
	return MPI_SUCCESS;
}

/* The remote side of an intercommunicator: mpi-lite has none. */
static int not_inter(MPI_Comm comm, const void *out, const char *F)
{
	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!out)
		return mpil_err(comm, MPI_ERR_ARG, F, "output argument is NULL");
	return mpil_err(comm, MPI_ERR_COMM, F, "not an intercommunicator");
}

MPIL_PMPI_ALIAS(Comm_remote_size)
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
	MPIL_CS_GUARD();
	return not_inter(comm, size, "MPI_Comm_remote_size");
}

MPIL_PMPI_ALIAS(Comm_remote_group)
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
	MPIL_CS_GUARD();
	return not_inter(comm, group, "MPI_Comm_remote_group");
}

MPIL_PMPI_ALIAS(Comm_set_name)
int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
	static const char F[] = "MPI_Comm_set_name";
	MPIL_CS_GUARD();

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
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!comm_name || !resultlen)
		return mpil_err(comm, MPI_ERR_ARG, F, "%s is NULL",
				comm_name ? "resultlen" : "comm_name");
	memcpy(comm_name, comm->name, sizeof(comm->name));
	*resultlen = (int)strlen(comm_name);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_group)
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
	static const char F[] = "MPI_Comm_group";
	MPIL_CS_GUARD();
	int *world;
	MPI_Group g;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!group)
		return mpil_err(comm, MPI_ERR_ARG, F, "group is NULL");
	world = malloc((size_t)comm->size * sizeof(int));
	if (!world)
		return mpil_err(comm, MPI_ERR_NO_MEM, F, "no memory for a group");
	for (int r = 0; r < comm->size; r++)
		world[r] = mpil_comm_to_world(comm, r);
	g = mpil_group_new(comm->size, world);
	free(world);
	if (!g)
		return mpil_err(comm, MPI_ERR_NO_MEM, F, "no memory for a group");
	*group = g;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_compare)
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
	static const char F[] = "MPI_Comm_compare";
	MPIL_CS_GUARD();
	bool same_order = true;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm1, F));
	MPIL_CHECK(mpil_check_comm(comm2, F));
	if (!result)
		return mpil_err(comm1, MPI_ERR_ARG, F, "result is NULL");
	if (comm1 == comm2) {
		*result = MPI_IDENT;
		return MPI_SUCCESS;
	}
	if (comm1->size != comm2->size) {
		*result = MPI_UNEQUAL;
		return MPI_SUCCESS;
	}
	for (int r = 0; r < comm1->size; r++) {
		int w = mpil_comm_to_world(comm1, r), r2 = mpil_comm_from_world(comm2, w);

		if (r2 < 0) {
			*result = MPI_UNEQUAL;
			return MPI_SUCCESS;
		}
		same_order = same_order && r2 == r;
	}
	*result = same_order ? MPI_CONGRUENT : MPI_SIMILAR;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_free)
int PMPI_Comm_free(MPI_Comm *comm)
{
	static const char F[] = "MPI_Comm_free";
	MPIL_CS_GUARD();
	MPI_Comm c;
	int err;

	MPIL_CHECK(mpil_check_init(F));
	if (!comm)
		return mpil_err(NULL, MPI_ERR_ARG, F, "comm is NULL");
	c = *comm;
	MPIL_CHECK(mpil_check_comm(c, F));
	if (c->predefined)
		return mpil_err(c, MPI_ERR_COMM, F, "%s cannot be freed", c->name);
	/* the delete callbacks run first; one failing stops the free */
	err = mpil_attr_delete_all(c);
	if (err != MPI_SUCCESS)
		return mpil_err(c, err, F, "an attribute delete callback failed");
	*comm = MPI_COMM_NULL;
	/* pending operations keep it (and its context id) until they end */
	c->magic = MPIL_MAGIC_ZOMBIE;
	mpil_comm_release(c);
	return MPI_SUCCESS;
}

/* ---- hints ------------------------------------------------------------------------ */

MPIL_PMPI_ALIAS(Comm_set_info)
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
	static const char F[] = "MPI_Comm_set_info";
	MPIL_CS_GUARD();
	MPI_Info copy;
	int err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(mpil_check_info(comm, info, false, F));
	err = mpil_info_copy(info, &copy);
	if (err != MPI_SUCCESS)
		return mpil_err(comm, err, F, "no memory for the hints");
	mpil_info_release(comm->info);
	comm->info = copy;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_get_info)
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
	static const char F[] = "MPI_Comm_get_info";
	MPIL_CS_GUARD();
	int err;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!info_used)
		return mpil_err(comm, MPI_ERR_ARG, F, "info_used is NULL");
	/* a new object the caller frees, empty when no hints were set */
	if (comm->info)
		err = mpil_info_copy(comm->info, info_used);
	else
		err = PMPI_Info_create(info_used);
	if (err != MPI_SUCCESS)
		return mpil_err(comm, err, F, "no memory for an info object");
	return MPI_SUCCESS;
}
