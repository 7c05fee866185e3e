/*
 * comm.c — communicators: MPI_COMM_WORLD and MPI_COMM_SELF, their queries,
 * and the creation of new ones (dup, split, split_type, create,
 * create_group), comparison and freeing.
 *
 * A communicator is a context id (which separates its messages from every
 * other communicator's in the engine's 64-bit tag) plus a rank numbering:
 * the world's own for MPI_COMM_WORLD and its congruent copies (no tables),
 * a translation table both ways otherwise.
 *
 * Context ids. Each process keeps a bitmap of the ids it uses (id = 4 *
 * bit; each id owns the contexts id, id|1 for collectives and id|2 for
 * creation traffic). Creating a communicator from a parent is one
 * agreement among the parent's members (those of the group for
 * MPI_Comm_create_group): every member contributes its bitmap (and, for a
 * split, its color and key), all of them OR the contributions together,
 * and every member then takes the lowest id free in the union:
 *
 *   rank 0  used 0,1,2      ─┐
 *   rank 1  used 0,1,3      ─┼─ all-OR ─► used 0,1,2,3 ─► new id = bit 4
 *   rank 2  used 0,1        ─┘            (same answer on every member)
 *
 * The id is free at every member of the new communicator, so no process
 * ever holds two communicators with the same id, whatever other
 * communicators are created concurrently among other processes.
 *
 * The all-OR runs on the parent's creation context (cid | 2) with tags
 * that user tags cannot take (bit 31 set), or the user's tag for
 * MPI_Comm_create_group. It is a dissemination exchange: in round k every
 * member sends what it has to member (r + 2^k) mod n and ORs in what
 * (r - 2^k) mod n sends; OR being idempotent, ceil(log2 n) rounds give
 * everyone the whole union.
 */
#include "mpil_int.h"

#include <stdlib.h>

#define CID_STRIDE 4u
#define CID_BITS   2048
#define CID_WORDS  (CID_BITS / 64)
#define TAG_CREATE 0x80000001u /* collective creations on a parent */

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
    .cid = CID_STRIDE,
    .errhandler = &mpil_errors_are_fatal,
    .predefined = true,
    .name = "MPI_COMM_SELF",
};

static uint64_t cid_used[CID_WORDS];
static mpil_pool_t comm_pool = MPIL_POOL_INIT(struct mpil_comm);

static void cid_mark(uint32_t cid, bool used)
{
	uint32_t bit = cid / CID_STRIDE;

	if (used)
		cid_used[bit / 64] |= (uint64_t)1 << (bit % 64);
	else
		cid_used[bit / 64] &= ~((uint64_t)1 << (bit % 64));
}

/* The lowest id free in @used, or 0 (the world's, never free) if none. */
static uint32_t cid_lowest_free(const uint64_t *used)
{
	for (int w = 0; w < CID_WORDS; w++)
		if (~used[w])
			return (uint32_t)(w * 64 + __builtin_ctzll(~used[w])) * CID_STRIDE;
	return 0;
}

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
	memset(cid_used, 0, sizeof(cid_used));
	cid_mark(w->cid, true);
	cid_mark(s->cid, true);
	return MPI_SUCCESS;
}

/* ---- life of a created communicator ---------------------------------------------- */

static void comm_free_parts(MPI_Comm c)
{
	mpil_attr_drop(c);
	free(c->rank_to_world);
	free(c->world_to_rank);
	c->rank_to_world = c->world_to_rank = NULL;
	mpil_info_release(c->info);
	c->info = MPI_INFO_NULL;
	if (c->errhandler)
		mpil_errh_release(c->errhandler);
	c->errhandler = NULL;
}

static void comm_destroy(MPI_Comm c)
{
	comm_free_parts(c);
	cid_mark(c->cid, false);
	mpil_pool_put(&comm_pool, c);
}

void mpil_comm_release(MPI_Comm comm)
{
	if (--comm->refcount == 0 && !comm->predefined)
		comm_destroy(comm);
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
static int comm_new(MPI_Comm parent, uint32_t cid, int n, const int *world, MPI_Comm *newcomm_p)
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
	cid_mark(cid, true);
	*newcomm_p = c;
	return MPI_SUCCESS;
}

/* ---- agreement among members ---------------------------------------------------------- */

/* A set of processes taking part in an agreement: @size of them, this one
 * being @rank, world ranks @world (NULL: the identity). */
typedef struct members {
	int size, rank;
	const int *world;
} members_t;

static inline int member_world(const members_t *m, int r)
{
	return m->world ? m->world[r] : r;
}

/*
 * words[0..n) |= the same array of every other member (dissemination, see
 * the file header), on context @ctx with engine tag value @tag. Returns
 * an MPI error class.
 */
static int all_or(const members_t *m, uint32_t ctx, uint32_t tag, uint64_t *words, size_t n)
{
	size_t len = n * sizeof(uint64_t);
	uint64_t *in;
	int err = MPI_SUCCESS;

	if (m->size == 1)
		return MPI_SUCCESS;
	in = malloc(len);
	if (!in)
		return MPI_ERR_NO_MEM;
	for (int k = 1; k < m->size && err == MPI_SUCCESS; k <<= 1) {
		int to = member_world(m, (m->rank + k) % m->size);
		int from = member_world(m, (m->rank - k + m->size) % m->size);
		ibx_tag_t t = ((ibx_tag_t)ctx << 32) | tag;
		ibx_request_t rq = {.cb = NULL};
		ibx_status_t st;

		/* receive first: members exchanging both ways never wait on
		 * each other's send */
		st = ibx_tag_recv(mpil_g.ctx, from, in, len, t, MPIL_MASK_TAG, &rq);
		if (st < 0) {
			err = mpil_err_from_ibx(st);
			break;
		}
		st = mpil_ibx_send(to, words, len, t, 0);
		if (st != IBX_OK) {
			if (ibx_request_cancel(mpil_g.ctx, &rq) != IBX_OK)
				mpil_ibx_wait(&rq);
			err = mpil_err_from_ibx(st);
			break;
		}
		st = mpil_ibx_wait(&rq);
		if (st != IBX_OK) {
			err = mpil_err_from_ibx(st);
			break;
		}
		if (rq.length != len) {
			err = MPI_ERR_INTERN;
			break;
		}
		for (size_t i = 0; i < n; i++)
			words[i] |= in[i];
	}
	free(in);
	return err;
}

static void members_of_comm(MPI_Comm comm, members_t *m)
{
	m->size = comm->size;
	m->rank = comm->rank;
	m->world = comm->rank_to_world;
}

/* Agreement on @parent among @m: ORs the bitmaps (and @extra words, which
 * each member filled with its own part) and returns the new id in *cid_p
 * (0 if every id is taken). */
static int agree(MPI_Comm parent, const members_t *m, uint32_t tag, uint64_t *words, size_t nextra,
		 uint32_t *cid_p)
{
	int err;

	memcpy(words, cid_used, sizeof(cid_used));
	err = all_or(m, parent->cid | 2u, tag, words, CID_WORDS + nextra);
	if (err == MPI_SUCCESS)
		*cid_p = cid_lowest_free(words);
	return err;
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
			"all %d context ids are in use (free unused communicators)", CID_BITS);
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

/* ---- queries ------------------------------------------------------------------------- */

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

MPIL_PMPI_ALIAS(Comm_test_inter)
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
	static const char F[] = "MPI_Comm_test_inter";

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	if (!flag)
		return mpil_err(comm, MPI_ERR_ARG, F, "flag is NULL");
	*flag = 0; /* mpi-lite has intracommunicators only */
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

MPIL_PMPI_ALIAS(Comm_group)
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
	static const char F[] = "MPI_Comm_group";
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

/* ---- creation ---------------------------------------------------------------------- */

/* MPI_Comm_dup / MPI_Comm_dup_with_info: @info is the new hints, or @dup_info
 * says to copy @comm's. */
static int comm_dup(MPI_Comm comm, MPI_Info info, bool dup_info, MPI_Comm *newcomm,
		    const char *fname)
{
	uint64_t words[CID_WORDS];
	members_t m;
	uint32_t cid;
	MPI_Comm c;
	int err;

	members_of_comm(comm, &m);
	err = agree(comm, &m, TAG_CREATE, words, 0, &cid);
	if (err != MPI_SUCCESS)
		return create_failed(comm, err, fname);
	if (cid == 0)
		return no_cid(comm, fname);
	if (comm->rank_to_world)
		err = comm_new(comm, cid, comm->size, comm->rank_to_world, &c);
	else {
		int *world = malloc((size_t)comm->size * sizeof(int));

		if (!world)
			return create_failed(comm, MPI_ERR_NO_MEM, fname);
		for (int r = 0; r < comm->size; r++)
			world[r] = r;
		err = comm_new(comm, cid, comm->size, world, &c);
		free(world);
	}
	if (err != MPI_SUCCESS)
		return create_failed(comm, err, fname);
	err = mpil_info_copy(dup_info ? comm->info : info, &c->info);
	if (err == MPI_SUCCESS) {
		err = mpil_attr_dup(comm, c);
		if (err != MPI_SUCCESS) {
			mpil_attr_delete_all(c);
			comm_destroy(c);
			return mpil_err(comm, err, fname, "an attribute copy callback failed");
		}
	}
	if (err != MPI_SUCCESS) {
		comm_destroy(c);
		return create_failed(comm, err, fname);
	}
	*newcomm = c;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_dup)
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	static const char F[] = "MPI_Comm_dup";

	MPIL_CHECK(check_newcomm(comm, newcomm, F));
	return comm_dup(comm, MPI_INFO_NULL, true, newcomm, F);
}

MPIL_PMPI_ALIAS(Comm_dup_with_info)
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
	static const char F[] = "MPI_Comm_dup_with_info";

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
	uint64_t *words = calloc(CID_WORDS + n, sizeof(uint64_t));
	split_ent_t *ents = NULL;
	int *world = NULL, nmine = 0, err;
	members_t m;
	uint32_t cid;
	MPI_Comm c = MPI_COMM_NULL;

	if (!words)
		return create_failed(comm, MPI_ERR_NO_MEM, fname);
	members_of_comm(comm, &m);
	words[CID_WORDS + (size_t)comm->rank] = split_slot(color, key);
	err = agree(comm, &m, TAG_CREATE, words, n, &cid);
	if (err != MPI_SUCCESS) {
		free(words);
		return create_failed(comm, err, fname);
	}
	if (color == MPI_UNDEFINED) {
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
		uint64_t slot = words[CID_WORDS + r];

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
	err = comm_new(comm, cid, nmine, world, &c);
	if (err == MPI_SUCCESS) {
		err = mpil_info_copy(info, &c->info);
		if (err != MPI_SUCCESS)
			comm_destroy(c);
	}
out:
	free(words);
	free(ents);
	free(world);
	if (err != MPI_SUCCESS)
		return create_failed(comm, err, fname);
	*newcomm = c;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Comm_split)
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	static const char F[] = "MPI_Comm_split";

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
		*newcomm = MPI_COMM_NULL;
		return MPI_SUCCESS;
	}
	if (cid == 0)
		return no_cid(comm, fname);
	err = comm_new(comm, cid, g->size, g->world, newcomm);
	return err == MPI_SUCCESS ? MPI_SUCCESS : create_failed(comm, err, fname);
}

MPIL_PMPI_ALIAS(Comm_create)
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	static const char F[] = "MPI_Comm_create";
	uint64_t words[CID_WORDS];
	members_t m;
	uint32_t cid;
	int err;

	MPIL_CHECK(check_newcomm(comm, newcomm, F));
	MPIL_CHECK(check_subgroup(comm, group, F));
	/* every member of @comm takes part (with its own group if the groups
	 * are disjoint: MPI-2.2 §6.4.2), so the id suits them all */
	members_of_comm(comm, &m);
	err = agree(comm, &m, TAG_CREATE, words, 0, &cid);
	if (err != MPI_SUCCESS)
		return create_failed(comm, err, F);
	return comm_from_group(comm, group, cid, newcomm, F);
}

MPIL_PMPI_ALIAS(Comm_create_group)
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	static const char F[] = "MPI_Comm_create_group";
	uint64_t words[CID_WORDS];
	members_t m;
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
	err = agree(comm, &m, (uint32_t)tag, words, 0, &cid);
	if (err != MPI_SUCCESS)
		return create_failed(comm, err, F);
	return comm_from_group(comm, group, cid, newcomm, F);
}

MPIL_PMPI_ALIAS(Comm_free)
int PMPI_Comm_free(MPI_Comm *comm)
{
	static const char F[] = "MPI_Comm_free";
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
