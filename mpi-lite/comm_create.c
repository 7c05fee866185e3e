/*
 * comm_create.c — new communicators from a parent: MPI_Comm_dup (and
 * _with_info, and MPI_Comm_idup), MPI_Comm_split, MPI_Comm_split_type,
 * MPI_Comm_create and MPI_Comm_create_group. Each is one agreement among
 * the members on the parent (comm_cid.c) followed by the new object
 * (comm.c). A duplicate gets a copy of the parent's process topology
 * (topo.c); the topology constructors make theirs through
 * mpil_comm_split.
 *
 * MPI_Comm_idup runs the same agreement in the background
 * (comm_idup.c) and makes the duplicate here (mpil_comm_dup_make) when it
 * ends. An id the agreement held but no communicator took is let go.
 */
#include "comm_int.h"

#include <stdlib.h>

#define TAG_CREATE 0x80000001u /* collective creations on a parent */

static void members_of_comm(MPI_Comm comm, mpil_members_t *m)
{
	m->size = comm->size;
	m->rank = comm->rank;
	m->world = comm->rank_to_world;
}

static int create_failed(MPI_Comm parent, int err, const char *fname)
{
	if (err == MPI_ERR_NO_MEM)
		return mpil_err(parent, err, fname, "no memory for the new communicator");
	return mpil_err(parent, err, fname,
			"agreeing on the new communicator with the other members failed");
}

static int no_cid(MPI_Comm parent, const char *fname)
{
	return mpil_err(parent, MPI_ERR_OTHER, fname,
			"all %d context ids are in use (free unused communicators)", MPIL_CID_BITS);
}

/* ---- argument checks ---------------------------------------------------------------- */

static int check_newcomm(MPI_Comm comm, MPI_Comm *newcomm, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	MPIL_CHECK(mpil_check_comm(comm, fname));
	if (!newcomm)
		return mpil_err(comm, MPI_ERR_ARG, fname, "newcomm is NULL");
	return MPI_SUCCESS;
}

/* Every member of @g must be in @comm. */
static int check_subgroup(MPI_Comm comm, MPI_Group g, const char *fname)
{
	MPIL_CHECK(mpil_check_group(comm, g, fname));
	for (int r = 0; r < g->size; r++)
		if (mpil_comm_from_world(comm, g->world[r]) < 0)
			return mpil_err(comm, MPI_ERR_GROUP, fname,
					"rank %d of the group (world rank %d) is not in the "
					"communicator",
					r, g->world[r]);
	return MPI_SUCCESS;
}

/* ---- creation ---------------------------------------------------------------------- */

int mpil_comm_dup_make(MPI_Comm comm, uint32_t cid, MPI_Info info, bool dup_info, MPI_Comm *newcomm,
		       const char **what_p)
{
	MPI_Comm c;
	int err;

	*what_p = NULL;
	if (comm->rank_to_world) {
		err = mpil_comm_new(comm, cid, comm->size, comm->rank_to_world, &c);
	} else {
		int *world = malloc((size_t)comm->size * sizeof(int));

		if (!world) {
			mpil_cid_mark(cid, false);
			return MPI_ERR_NO_MEM;
		}
		for (int r = 0; r < comm->size; r++)
			world[r] = r;
		err = mpil_comm_new(comm, cid, comm->size, world, &c);
		free(world);
	}
	if (err != MPI_SUCCESS) {
		mpil_cid_mark(cid, false);
		return err;
	}
	err = mpil_topo_dup(comm, c);
	if (err == MPI_SUCCESS)
		err = mpil_info_copy(dup_info ? comm->info : info, &c->info);
	if (err == MPI_SUCCESS) {
		err = mpil_attr_dup(comm, c);
		if (err != MPI_SUCCESS) {
			*what_p = "an attribute copy callback failed";
			mpil_attr_delete_all(c);
		}
	}
	if (err != MPI_SUCCESS) {
		mpil_comm_destroy(c);
		return err;
	}
	*newcomm = c;
	return MPI_SUCCESS;
}

/* MPI_Comm_dup / MPI_Comm_dup_with_info: @info is the new hints, or @dup_info
 * says to copy @comm's. */
static int comm_dup(MPI_Comm comm, MPI_Info info, bool dup_info, MPI_Comm *newcomm,
		    const char *fname)
{
	uint64_t words[MPIL_CID_WORDS];
	mpil_members_t m;
	const char *what;
	uint32_t cid;
	int err;

	members_of_comm(comm, &m);
	err = mpil_cid_agree(comm, &m, TAG_CREATE, words, 0, &cid);
	if (err != MPI_SUCCESS)
		return create_failed(comm, err, fname);
	if (cid == 0)
		return no_cid(comm, fname);
	err = mpil_comm_dup_make(comm, cid, info, dup_info, newcomm, &what);
	if (err != MPI_SUCCESS && what)
		return mpil_err(comm, err, fname, "%s", what);
	if (err != MPI_SUCCESS)
		return create_failed(comm, err, fname);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_dup)
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	static const char F[] = "MPI_Comm_dup";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_newcomm(comm, newcomm, F));
	return comm_dup(comm, MPI_INFO_NULL, true, newcomm, F);
}

MPIL_PMPI_ALIAS(Comm_dup_with_info)
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
	static const char F[] = "MPI_Comm_dup_with_info";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_newcomm(comm, newcomm, F));
	MPIL_CHECK(mpil_check_info(comm, info, true, F));
	return comm_dup(comm, info, false, newcomm, F);
}

/* One member's (color, key) in the split agreement. */
static inline uint64_t split_slot(int color, int key)
{
	return (uint64_t)(uint32_t)color << 32 | (uint32_t)key;
}

typedef struct split_ent {
	int key, rank, world;
} split_ent_t;

static int split_cmp(const void *a, const void *b)
{
	const split_ent_t *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int comm_split(MPI_Comm comm, int color, int key, MPI_Info info, MPI_Comm *newcomm,
		      const char *fname)
{
	size_t n = (size_t)comm->size;
	uint64_t *words = calloc(MPIL_CID_WORDS + n, sizeof(uint64_t));
	split_ent_t *ents = NULL;
	int *world = NULL, nmine = 0, err;
	mpil_members_t m;
	uint32_t cid;
	MPI_Comm c = MPI_COMM_NULL;

	if (!words)
		return create_failed(comm, MPI_ERR_NO_MEM, fname);
	members_of_comm(comm, &m);
	words[MPIL_CID_WORDS + (size_t)comm->rank] = split_slot(color, key);
	err = mpil_cid_agree(comm, &m, TAG_CREATE, words, n, &cid);
	if (err != MPI_SUCCESS) {
		free(words);
		return create_failed(comm, err, fname);
	}
	if (color == MPI_UNDEFINED) {
		if (cid)
			mpil_cid_mark(cid, false);
		free(words);
		*newcomm = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	if (cid == 0) {
		free(words);
		return no_cid(comm, fname);
	}
	ents = malloc(n * sizeof(*ents));
	world = malloc(n * sizeof(*world));
	if (!ents || !world) {
		err = MPI_ERR_NO_MEM;
		goto out;
	}
	for (size_t r = 0; r < n; r++) {
		uint64_t slot = words[MPIL_CID_WORDS + r];

		if ((int)(uint32_t)(slot >> 32) != color)
			continue;
		ents[nmine].key = (int)(uint32_t)slot;
		ents[nmine].rank = (int)r;
		ents[nmine].world = mpil_comm_to_world(comm, (int)r);
		nmine++;
	}
	qsort(ents, (size_t)nmine, sizeof(*ents), split_cmp);
	for (int i = 0; i < nmine; i++)
		world[i] = ents[i].world;
	err = mpil_comm_new(comm, cid, nmine, world, &c);
	if (err == MPI_SUCCESS) {
		err = mpil_info_copy(info, &c->info);
		if (err != MPI_SUCCESS)
			mpil_comm_destroy(c); /* lets the id go */
		cid = 0;
	}
out:
	free(words);
	free(ents);
	free(world);
	if (err != MPI_SUCCESS && cid)
		mpil_cid_mark(cid, false);
	if (err != MPI_SUCCESS)
		return create_failed(comm, err, fname);
	*newcomm = c;
	return MPI_SUCCESS;
}

int mpil_comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm_p, const char *fname)
{
	return comm_split(comm, color, key, MPI_INFO_NULL, newcomm_p, fname);
}

MPIL_PMPI_ALIAS(Comm_split)
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	static const char F[] = "MPI_Comm_split";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_newcomm(comm, newcomm, F));
	if (color < 0 && color != MPI_UNDEFINED)
		return mpil_err(comm, MPI_ERR_ARG, F,
				"color %d (must be non-negative or MPI_UNDEFINED)", color);
	return comm_split(comm, color, key, MPI_INFO_NULL, newcomm, F);
}

MPIL_PMPI_ALIAS(Comm_split_type)
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
	static const char F[] = "MPI_Comm_split_type";
	MPIL_CS_GUARD();
	int color;

	MPIL_CHECK(check_newcomm(comm, newcomm, F));
	MPIL_CHECK(mpil_check_info(comm, info, true, F));
	if (split_type == MPI_COMM_TYPE_SHARED) {
		/* the node's lowest world rank names the node */
		const int *local = ibx_local_ranks(mpil_g.ctx);

		color = local && ibx_local_size(mpil_g.ctx) > 0 ? local[0] : mpil_g.world_rank;
	} else if (split_type == MPI_UNDEFINED) {
		color = MPI_UNDEFINED;
	} else {
		return mpil_err(comm, MPI_ERR_ARG, F,
				"split_type %d (MPI_COMM_TYPE_SHARED or MPI_UNDEFINED)",
				split_type);
	}
	return comm_split(comm, color, key, info, newcomm, F);
}

/* The communicator over @g's members (ordered as in @g) with id @cid. */
static int comm_from_group(MPI_Comm comm, MPI_Group g, uint32_t cid, MPI_Comm *newcomm,
			   const char *fname)
{
	int err;

	if (g->rank == MPI_UNDEFINED) {
		if (cid)
			mpil_cid_mark(cid, false);
		*newcomm = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	if (cid == 0)
		return no_cid(comm, fname);
	err = mpil_comm_new(comm, cid, g->size, g->world, newcomm);
	if (err == MPI_SUCCESS)
		return MPI_SUCCESS;
	mpil_cid_mark(cid, false);
	return create_failed(comm, err, fname);
}

MPIL_PMPI_ALIAS(Comm_create)
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	static const char F[] = "MPI_Comm_create";
	MPIL_CS_GUARD();
	uint64_t words[MPIL_CID_WORDS];
	mpil_members_t m;
	uint32_t cid;
	int err;

	MPIL_CHECK(check_newcomm(comm, newcomm, F));
	MPIL_CHECK(check_subgroup(comm, group, F));
	/* every member of @comm takes part (with its own group if the groups
	 * are disjoint: MPI-2.2 §6.4.2), so the id suits them all */
	members_of_comm(comm, &m);
	err = mpil_cid_agree(comm, &m, TAG_CREATE, words, 0, &cid);
	if (err != MPI_SUCCESS)
		return create_failed(comm, err, F);
	return comm_from_group(comm, group, cid, newcomm, F);
}

MPIL_PMPI_ALIAS(Comm_create_group)
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	static const char F[] = "MPI_Comm_create_group";
	MPIL_CS_GUARD();
	uint64_t words[MPIL_CID_WORDS];
	mpil_members_t m;
	uint32_t cid = 0;
	int err;

	MPIL_CHECK(check_newcomm(comm, newcomm, F));
	MPIL_CHECK(check_subgroup(comm, group, F));
	if (tag < 0)
		return mpil_err(comm, MPI_ERR_TAG, F, "invalid tag %d (valid tags: 0..%d)", tag,
				MPIL_TAG_UB);
	if (group->rank == MPI_UNDEFINED) {
		/* only members call; an outsider (say, with MPI_GROUP_EMPTY)
		 * gets no communicator */
		*newcomm = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	/* only the group's members take part: the agreement runs among them,
	 * on the parent's creation context with the caller's tag */
	m.size = group->size;
	m.rank = group->rank;
	m.world = group->world;
	err = mpil_cid_agree(comm, &m, (uint32_t)tag, words, 0, &cid);
	if (err != MPI_SUCCESS)
		return create_failed(comm, err, F);
	return comm_from_group(comm, group, cid, newcomm, F);
}
