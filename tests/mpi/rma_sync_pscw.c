/* ibx-test: np=1,2,3,4 timeout=60 launchers=mpilite,ompi */
/*
 * rma_sync_pscw — post / start / complete / wait: a ring (each rank
 * exposes its window to its left neighbour and accesses its right one)
 * over many epochs, half of them ended by polling MPI_Win_test; an
 * all-to-all epoch with puts and gets; MPI_MODE_NOCHECK on both sides
 * (posts ordered before the starts by a barrier); groups built from
 * MPI_COMM_WORLD's ranks on a window whose communicator numbers the
 * processes in reverse (groups are translated to window ranks); windows
 * of both memory kinds. Errors: start inside an epoch, complete without
 * start, wait / test without post, post twice, an access outside the
 * start group, a lock inside the epoch (MPI_ERR_RMA_SYNC), bad assertions
 * (MPI_ERR_ASSERT), a null group or one with a non-member (MPI_ERR_GROUP).
 */
#include "mpitest.h"

#include <stdbool.h>

#define EPOCHS 40

typedef struct wnd {
	MPI_Win win;
	MPI_Comm comm; /* the window's communicator */
	int *mem;
	int wrank; /* this process's rank in the window */
	bool allocated;
} wnd_t;

/* A window of @n ints over @comm. */
static void wnd_open(wnd_t *w, MPI_Comm comm, int n, bool allocate)
{
	MPI_Aint bytes = (MPI_Aint)n * (MPI_Aint)sizeof(int);

	w->comm = comm;
	w->allocated = allocate;
	MPI_OK(MPI_Comm_rank(comm, &w->wrank));
	if (allocate) {
		MPI_OK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, comm, &w->mem, &w->win));
	} else {
		w->mem = malloc((size_t)bytes);
		CHECK(w->mem != NULL, "malloc");
		MPI_OK(MPI_Win_create(w->mem, bytes, sizeof(int), MPI_INFO_NULL, comm, &w->win));
	}
	memset(w->mem, 0, (size_t)bytes);
	MPI_OK(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Barrier(comm));
}

static void wnd_close(wnd_t *w)
{
	MPI_OK(MPI_Win_free(&w->win));
	if (!w->allocated)
		free(w->mem);
}

/* The group of one world rank. */
static MPI_Group world_one(int world_rank)
{
	MPI_Group wg, g;

	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	MPI_OK(MPI_Group_incl(wg, 1, &world_rank, &g));
	MPI_OK(MPI_Group_free(&wg));
	return g;
}

/* Window rank of world rank @w. */
static int to_wrank(wnd_t *w, int world)
{
	MPI_Group wg, cg;
	int r;

	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
	MPI_OK(MPI_Comm_group(w->comm, &cg));
	MPI_OK(MPI_Group_translate_ranks(wg, 1, &world, cg, &r));
	MPI_OK(MPI_Group_free(&wg));
	MPI_OK(MPI_Group_free(&cg));
	return r;
}

/* Ring in world ranks: left exposes to us... we expose to left, access
 * right. Every second epoch ends with MPI_Win_test polling. */
static void ring(wnd_t *w, int rank, int size)
{
	int left = (rank - 1 + size) % size, right = (rank + 1) % size;
	MPI_Group lg = world_one(left), rg = world_one(right);
	int tr = to_wrank(w, right);

	for (int k = 1; k <= EPOCHS; k++) {
		int v = k * 1000 + rank, flag = 0, polls = 0;

		MPI_OK(MPI_Win_post(lg, k % 3 == 0 ? MPI_MODE_NOSTORE : 0, w->win));
		MPI_OK(MPI_Win_start(rg, 0, w->win));
		MPI_OK(MPI_Put(&v, 1, MPI_INT, tr, 0, 1, MPI_INT, w->win));
		MPI_OK(MPI_Win_complete(w->win));
		if (k % 2) {
			MPI_OK(MPI_Win_wait(w->win));
		} else {
			while (!flag) {
				MPI_OK(MPI_Win_test(w->win, &flag));
				polls++;
			}
			CHECK(polls >= 1, "test loop");
		}
		CHECK(w->mem[0] == k * 1000 + left, "epoch %d: slot holds %d, expected %d", k,
		      w->mem[0], k * 1000 + left);
	}
	MPI_OK(MPI_Group_free(&lg));
	MPI_OK(MPI_Group_free(&rg));
}

/* Everyone with everyone: puts of one slot each, then gets of the
 * neighbour's whole row in a second epoch. */
static void all_to_all(wnd_t *w, int rank, int size, int assert)
{
	MPI_Group all;
	int *row = malloc((size_t)size * sizeof(int));

	CHECK(row != NULL, "malloc");
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &all));
	for (int k = 1; k <= 3; k++) {
		MPI_OK(MPI_Win_post(all, assert, w->win));
		if (assert & MPI_MODE_NOCHECK)
			MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* every post before any start */
		MPI_OK(MPI_Win_start(all, assert &MPI_MODE_NOCHECK, w->win));
		for (int t = 0; t < size; t++) {
			int v = k * 10000 + rank * 100 + t;

			MPI_OK(MPI_Put(&v, 1, MPI_INT, to_wrank(w, t), rank, 1, MPI_INT, w->win));
		}
		MPI_OK(MPI_Win_complete(w->win));
		MPI_OK(MPI_Win_wait(w->win));
		for (int r = 0; r < size; r++)
			CHECK(w->mem[r] == k * 10000 + r * 100 + rank,
			      "all-to-all %d: slot %d holds %d", k, r, w->mem[r]);
		/* read the right neighbour's row */
		MPI_OK(MPI_Win_post(all, assert, w->win));
		if (assert & MPI_MODE_NOCHECK)
			MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		MPI_OK(MPI_Win_start(all, assert &MPI_MODE_NOCHECK, w->win));
		MPI_OK(MPI_Get(row, size, MPI_INT, to_wrank(w, (rank + 1) % size), 0, size, MPI_INT,
			       w->win));
		MPI_OK(MPI_Win_complete(w->win));
		MPI_OK(MPI_Win_wait(w->win));
		for (int r = 0; r < size; r++)
			CHECK(row[r] == k * 10000 + r * 100 + (rank + 1) % size,
			      "all-to-all %d: got %d from slot %d", k, row[r], r);
	}
	MPI_OK(MPI_Group_free(&all));
	free(row);
}

static void errors(wnd_t *w, int rank, int size)
{
	MPI_Group all, lg = world_one((rank - 1 + size) % size), rg = world_one((rank + 1) % size);
	MPI_Win win = w->win;
	int v = 1, flag;

	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &all));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_complete(win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_wait(win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_test(win, &flag));
	MPI_FAILS(MPI_ERR_ASSERT, MPI_Win_post(all, MPI_MODE_NOPRECEDE, win));
	MPI_FAILS(MPI_ERR_ASSERT, MPI_Win_start(all, MPI_MODE_NOSTORE, win));
	MPI_FAILS(MPI_ERR_GROUP, MPI_Win_post(MPI_GROUP_NULL, 0, win));
	MPI_FAILS(MPI_ERR_GROUP, MPI_Win_start(MPI_GROUP_NULL, 0, win));

	/* a second start or post inside the epochs, a lock inside them */
	MPI_OK(MPI_Win_post(lg, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_post(lg, 0, win));
	MPI_OK(MPI_Win_start(rg, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_start(rg, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, w->wrank, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_flush_all(win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_fence(0, win));
	MPI_FAILS(MPI_ERR_ARG, MPI_Win_test(win, NULL));
	if (size > 2) /* the left neighbour is not in the start group */
		MPI_FAILS(MPI_ERR_RMA_SYNC,
			  MPI_Put(&v, 1, MPI_INT, to_wrank(w, (rank - 1 + size) % size), 0, 1,
				  MPI_INT, win));
	MPI_OK(MPI_Win_complete(win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_complete(win));
	MPI_OK(MPI_Win_wait(win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_wait(win));

	/* a start inside a lock epoch */
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, w->wrank, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_start(rg, 0, win));
	MPI_OK(MPI_Win_unlock(w->wrank, win));

	MPI_OK(MPI_Group_free(&all));
	MPI_OK(MPI_Group_free(&lg));
	MPI_OK(MPI_Group_free(&rg));
}

/* A group with a process outside the window. */
static void foreign_group(int rank, int size)
{
	wnd_t w;
	MPI_Group all;

	if (size == 1)
		return;
	wnd_open(&w, MPI_COMM_SELF, 1, true);
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &all));
	MPI_FAILS(MPI_ERR_GROUP, MPI_Win_post(all, 0, w.win));
	MPI_FAILS(MPI_ERR_GROUP, MPI_Win_start(all, 0, w.win));
	MPI_OK(MPI_Group_free(&all));
	wnd_close(&w);
	(void)rank;
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Comm rev;

	mt_init(&argc, &argv, &rank, &size);
	/* window ranks in reverse order of world ranks */
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
	for (int alloc = 0; alloc < 2; alloc++)
		for (int c = 0; c < 2; c++) {
			wnd_t w;

			wnd_open(&w, c ? rev : MPI_COMM_WORLD, size, alloc);
			ring(&w, rank, size);
			all_to_all(&w, rank, size, 0);
			all_to_all(&w, rank, size, MPI_MODE_NOCHECK);
			errors(&w, rank, size);
			/* the counters are consistent after the errors */
			ring(&w, rank, size);
			wnd_close(&w);
		}
	foreign_group(rank, size);
	MPI_OK(MPI_Comm_free(&rev));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("rma_sync_pscw: %d ranks OK\n", size);
	MPI_Finalize();
	return 0;
}
