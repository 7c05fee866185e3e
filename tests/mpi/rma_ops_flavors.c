/* ibx-test: np=1,2,3,4 timeout=60 */
/*
 * rma_ops_flavors — MPI_Put / MPI_Get / MPI_Rput / MPI_Rget with
 * contiguous and derived datatypes (vector, indexed, struct of one basic
 * type, several elements of a derived type) at origin and target, on every
 * window flavour (allocate, create, dynamic, allocate_shared), every rank
 * targeting every rank including itself; fence epochs and lock_all epochs
 * with request-based operations. Every int of every origin slot is checked,
 * and so are the gaps, which must keep their sentinel.
 *
 * Each target holds one slot of S ints per origin; origin o writes only its
 * own slot, so all puts of an epoch are disjoint.
 */
#include "mpitest.h"

#include <stdbool.h>
#include <stddef.h>

enum { K = 12, S = 32, OB = 40, NCASES = 6 };
#define SENTINEL (-1)

static int rank, size;

/* One case: K ints, origin element i at origin index o_idx[i] goes to
 * slot index t_idx[i]. */
typedef struct tcase {
	const char *name;
	MPI_Datatype otype, ttype;
	int ocount, tcount;
	int o_idx[K], t_idx[K];
} tcase_t;

static tcase_t cases[NCASES];

static int val(int origin, int target, int c, int i)
{
	return 1000000 * (origin + 1) + 10000 * target + 100 * c + i;
}

static MPI_Datatype commit(MPI_Datatype t)
{
	MPI_OK(MPI_Type_commit(&t));
	return t;
}

static void build_cases(void)
{
	tcase_t *c;
	int n;

	c = &cases[0]; /* contiguous both sides */
	*c = (tcase_t){"contig", MPI_INT, MPI_INT, K, K, {0}, {0}};
	for (int i = 0; i < K; i++)
		c->o_idx[i] = c->t_idx[i] = i;

	c = &cases[1]; /* vector origin, contiguous target */
	*c = (tcase_t){"vector->contig", MPI_DATATYPE_NULL, MPI_INT, 1, K, {0}, {0}};
	MPI_OK(MPI_Type_vector(K, 1, 2, MPI_INT, &c->otype));
	c->otype = commit(c->otype);
	for (int i = 0; i < K; i++) {
		c->o_idx[i] = 2 * i;
		c->t_idx[i] = i;
	}

	c = &cases[2]; /* contiguous origin, vector target */
	*c = (tcase_t){"contig->vector", MPI_INT, MPI_DATATYPE_NULL, K, 1, {0}, {0}};
	MPI_OK(MPI_Type_vector(4, 3, 5, MPI_INT, &c->ttype));
	c->ttype = commit(c->ttype);
	n = 0;
	for (int b = 0; b < 4; b++)
		for (int j = 0; j < 3; j++) {
			c->o_idx[n] = n;
			c->t_idx[n] = 5 * b + j;
			n++;
		}

	c = &cases[3]; /* indexed both sides, different layouts */
	*c = (tcase_t){"indexed->indexed", MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, 1, 1, {0}, {0}};
	{
		int obl[3] = {2, 4, 6}, odi[3] = {0, 5, 12};
		int tbl[3] = {6, 1, 5}, tdi[3] = {1, 9, 20};

		MPI_OK(MPI_Type_indexed(3, obl, odi, MPI_INT, &c->otype));
		MPI_OK(MPI_Type_indexed(3, tbl, tdi, MPI_INT, &c->ttype));
		c->otype = commit(c->otype);
		c->ttype = commit(c->ttype);
		n = 0;
		for (int b = 0; b < 3; b++)
			for (int j = 0; j < obl[b]; j++)
				c->o_idx[n++] = odi[b] + j;
		n = 0;
		for (int b = 0; b < 3; b++)
			for (int j = 0; j < tbl[b]; j++)
				c->t_idx[n++] = tdi[b] + j;
	}

	c = &cases[4]; /* structs made of ints only */
	*c = (tcase_t){"struct->struct", MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, 1, 1, {0}, {0}};
	{
		int obl[2] = {4, 8}, tbl[2] = {3, 9};
		MPI_Aint odi[2] = {2 * sizeof(int), 8 * sizeof(int)},
			 tdi[2] = {0, 10 * sizeof(int)};
		MPI_Datatype ts[2] = {MPI_INT, MPI_INT};

		MPI_OK(MPI_Type_create_struct(2, obl, odi, ts, &c->otype));
		MPI_OK(MPI_Type_create_struct(2, tbl, tdi, ts, &c->ttype));
		c->otype = commit(c->otype);
		c->ttype = commit(c->ttype);
		for (int i = 0; i < K; i++) {
			c->o_idx[i] = i < 4 ? 2 + i : 8 + (i - 4);
			c->t_idx[i] = i < 3 ? i : 10 + (i - 3);
		}
	}

	c = &cases[5]; /* two elements of a vector against six of a contiguous pair */
	*c = (tcase_t){"2 vectors->6 pairs", MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, 2, 6, {0}, {0}};
	MPI_OK(MPI_Type_vector(3, 2, 3, MPI_INT, &c->otype));
	c->otype = commit(c->otype);
	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &c->ttype));
	c->ttype = commit(c->ttype);
	n = 0;
	for (int e = 0; e < 2; e++)
		for (int b = 0; b < 3; b++)
			for (int j = 0; j < 2; j++) {
				c->o_idx[n] = 8 * e + 3 * b + j;
				c->t_idx[n] = n;
				n++;
			}
}

static void free_cases(void)
{
	for (int c = 0; c < NCASES; c++) {
		if (cases[c].otype != MPI_INT)
			MPI_OK(MPI_Type_free(&cases[c].otype));
		if (cases[c].ttype != MPI_INT)
			MPI_OK(MPI_Type_free(&cases[c].ttype));
	}
}

/* ---- one window ------------------------------------------------------------------- */

typedef struct twin {
	const char *name;
	MPI_Win win;
	int *mem;	/* this rank's size * S ints */
	MPI_Aint *base; /* dynamic: every rank's address of its memory */
	bool dynamic;
} twin_t;

static MPI_Aint disp_of(const twin_t *w, int target, int origin)
{
	if (w->dynamic)
		return w->base[target] + (MPI_Aint)(origin * S * sizeof(int));
	return (MPI_Aint)origin * S;
}

static void reset_mem(const twin_t *w)
{
	for (int i = 0; i < size * S; i++)
		w->mem[i] = SENTINEL;
}

/* Our slot at every target holds what the case put there. */
static void check_slots(const twin_t *w, const tcase_t *c, int ci)
{
	for (int o = 0; o < size; o++) {
		int *slot = w->mem + o * S;
		int expect[S];

		for (int i = 0; i < S; i++)
			expect[i] = SENTINEL;
		for (int i = 0; i < K; i++)
			expect[c->t_idx[i]] = val(o, rank, ci, c->o_idx[i]);
		for (int i = 0; i < S; i++)
			CHECK(slot[i] == expect[i],
			      "%s, %s: slot of rank %d, int %d is %d, expected %d", w->name,
			      c->name, o, i, slot[i], expect[i]);
	}
}

static void fill_origin(int obuf[][OB], int ci)
{
	for (int t = 0; t < size; t++)
		for (int i = 0; i < OB; i++)
			obuf[t][i] = val(rank, t, ci, i);
}

static void check_got(const twin_t *w, const tcase_t *c, int gbuf[][OB], int ci, const char *how)
{
	for (int t = 0; t < size; t++) {
		int expect[OB];

		for (int i = 0; i < OB; i++)
			expect[i] = SENTINEL;
		for (int i = 0; i < K; i++)
			expect[c->o_idx[i]] = val(rank, t, ci, c->o_idx[i]);
		for (int i = 0; i < OB; i++)
			CHECK(gbuf[t][i] == expect[i],
			      "%s, %s, %s from rank %d: int %d is %d, expected %d", w->name,
			      c->name, how, t, i, gbuf[t][i], expect[i]);
	}
}

/* Fence epochs: put to every rank, check, get back from every rank. */
static void run_fence(const twin_t *w, int ci, int obuf[][OB], int gbuf[][OB])
{
	const tcase_t *c = &cases[ci];

	reset_mem(w);
	fill_origin(obuf, ci);
	MPI_OK(MPI_Win_fence(0, w->win));
	for (int k = 0; k < size; k++) {
		int t = (rank + k) % size;

		MPI_OK(MPI_Put(obuf[t], c->ocount, c->otype, t, disp_of(w, t, rank), c->tcount,
			       c->ttype, w->win));
	}
	MPI_OK(MPI_Win_fence(0, w->win));
	check_slots(w, c, ci);
	for (int t = 0; t < size; t++)
		for (int i = 0; i < OB; i++)
			gbuf[t][i] = SENTINEL;
	for (int k = 0; k < size; k++) {
		int t = (rank + size - k) % size;

		MPI_OK(MPI_Get(gbuf[t], c->ocount, c->otype, t, disp_of(w, t, rank), c->tcount,
			       c->ttype, w->win));
	}
	MPI_OK(MPI_Win_fence(0, w->win));
	check_got(w, c, gbuf, ci, "MPI_Get");
}

/* A lock_all epoch with request-based operations. */
static void run_requests(const twin_t *w, int ci, int obuf[][OB], int gbuf[][OB])
{
	const tcase_t *c = &cases[ci];
	MPI_Request rq[64];

	CHECK(size <= 64, "too many ranks");
	reset_mem(w);
	fill_origin(obuf, ci);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock_all(0, w->win));
	for (int t = 0; t < size; t++)
		MPI_OK(MPI_Rput(obuf[t], c->ocount, c->otype, t, disp_of(w, t, rank), c->tcount,
				c->ttype, w->win, &rq[t]));
	MPI_OK(MPI_Waitall(size, rq, MPI_STATUSES_IGNORE));
	MPI_OK(MPI_Win_unlock_all(w->win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	check_slots(w, c, ci);
	for (int t = 0; t < size; t++)
		for (int i = 0; i < OB; i++)
			gbuf[t][i] = SENTINEL;
	MPI_OK(MPI_Win_lock_all(0, w->win));
	for (int t = 0; t < size; t++)
		MPI_OK(MPI_Rget(gbuf[t], c->ocount, c->otype, t, disp_of(w, t, rank), c->tcount,
				c->ttype, w->win, &rq[t]));
	/* an Rget's data is there once its request completes */
	MPI_OK(MPI_Waitall(size, rq, MPI_STATUSES_IGNORE));
	check_got(w, c, gbuf, ci, "MPI_Rget");
	MPI_OK(MPI_Win_unlock_all(w->win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void run_window(const twin_t *w)
{
	int(*obuf)[OB] = malloc(sizeof(int) * OB * (size_t)size);
	int(*gbuf)[OB] = malloc(sizeof(int) * OB * (size_t)size);

	CHECK(obuf && gbuf, "out of memory");
	for (int ci = 0; ci < NCASES; ci++) {
		run_fence(w, ci, obuf, gbuf);
		run_requests(w, ci, obuf, gbuf);
	}
	free(obuf);
	free(gbuf);
}

static void test_allocate(void)
{
	twin_t w = {.name = "MPI_Win_allocate"};

	MPI_OK(MPI_Win_allocate((MPI_Aint)(size * S * sizeof(int)), sizeof(int), MPI_INFO_NULL,
				MPI_COMM_WORLD, &w.mem, &w.win));
	run_window(&w);
	MPI_OK(MPI_Win_free(&w.win));
}

static void test_create(void)
{
	twin_t w = {.name = "MPI_Win_create"};

	w.mem = malloc(sizeof(int) * S * (size_t)size);
	CHECK(w.mem, "out of memory");
	MPI_OK(MPI_Win_create(w.mem, (MPI_Aint)(size * S * sizeof(int)), sizeof(int), MPI_INFO_NULL,
			      MPI_COMM_WORLD, &w.win));
	run_window(&w);
	MPI_OK(MPI_Win_free(&w.win));
	free(w.mem);
}

static void test_dynamic(void)
{
	twin_t w = {.name = "MPI_Win_create_dynamic", .dynamic = true};
	MPI_Aint mine;

	w.mem = malloc(sizeof(int) * S * (size_t)size);
	w.base = malloc(sizeof(MPI_Aint) * (size_t)size);
	CHECK(w.mem && w.base, "out of memory");
	MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w.win));
	MPI_OK(MPI_Win_attach(w.win, w.mem, (MPI_Aint)(size * S * sizeof(int))));
	MPI_OK(MPI_Get_address(w.mem, &mine));
	MPI_OK(MPI_Allgather(&mine, 1, MPI_AINT, w.base, 1, MPI_AINT, MPI_COMM_WORLD));
	run_window(&w);
	MPI_OK(MPI_Win_detach(w.win, w.mem));
	MPI_OK(MPI_Win_free(&w.win));
	free(w.mem);
	free(w.base);
}

/* Every rank shares one node in these runs: one shared window over the
 * node's communicator (skipped where the library refuses it). */
static void test_shared(void)
{
	twin_t w = {.name = "MPI_Win_allocate_shared"};
	MPI_Comm node;
	int nsize, rc;

	MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
	MPI_OK(MPI_Comm_size(node, &nsize));
	if (nsize != size) {
		MPI_OK(MPI_Comm_free(&node));
		return;
	}
	MPI_OK(MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN));
	rc = MPI_Win_allocate_shared((MPI_Aint)(size * S * sizeof(int)), sizeof(int), MPI_INFO_NULL,
				     node, &w.mem, &w.win);
	MPI_OK(MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
	if (rc == MPI_SUCCESS) {
		run_window(&w);
		MPI_OK(MPI_Win_free(&w.win));
	} else if (rank == 0) {
		printf("rma_ops_flavors: MPI_Win_allocate_shared refused here (error %d)\n", rc);
	}
	MPI_OK(MPI_Comm_free(&node));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	build_cases();
	test_allocate();
	test_create();
	test_dynamic();
	test_shared();
	free_cases();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("rma_ops_flavors: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
