/* ibx-test: np=1,2,3,4 timeout=60 launchers=mpilite,ompi */
/*
 * rma_sync_fence — MPI_Win_fence: epochs of puts and gets between fences
 * land exactly (every rank writes its slot at every target, then reads a
 * neighbour's), on windows of each memory kind (MPI_Win_allocate: mapped
 * memory; MPI_Win_create: the user's memory, reached by the kernel's copy),
 * with every assertion; stores through MPI_Win_allocate_shared pointers are
 * seen by the neighbour after a fence; and the errors: bad assertion bits
 * (MPI_ERR_ASSERT), operations after MPI_MODE_NOSUCCEED, a fence inside a
 * lock or exposure epoch, operations before a fence asserting
 * MPI_MODE_NOPRECEDE (MPI_ERR_RMA_SYNC). A fence epoch without operations
 * may be followed by a lock epoch; one with operations may not.
 */
#include "mpitest.h"

#include <stdbool.h>

#define ROUNDS 5

static int value(int round, int src, int dst)
{
	return 100000 * round + 100 * src + dst + 1;
}

/* One window: ROUNDS epochs of puts then gets, with the assertions that
 * hold for each. */
static void put_get_rounds(MPI_Win win, int *mem, int rank, int size)
{
	int got = 0, nb = (rank + 1) % size;

	for (int k = 0; k < ROUNDS; k++) {
		/* nothing before the first fence; no local stores ever */
		MPI_OK(MPI_Win_fence(k == 0 ? MPI_MODE_NOPRECEDE : MPI_MODE_NOSTORE, win));
		for (int t = 0; t < size; t++) {
			int v = value(k, rank, t);

			MPI_OK(MPI_Put(&v, 1, MPI_INT, t, rank, 1, MPI_INT, win));
		}
		MPI_OK(MPI_Win_fence(MPI_MODE_NOSTORE, win));
		for (int r = 0; r < size; r++)
			CHECK(mem[r] == value(k, r, rank),
			      "round %d: slot %d holds %d, expected %d", k, r, mem[r],
			      value(k, r, rank));
		/* read what the neighbour received from its own neighbour */
		MPI_OK(MPI_Get(&got, 1, MPI_INT, nb, nb, 1, MPI_INT, win));
		/* this epoch puts nothing anywhere */
		MPI_OK(MPI_Win_fence(MPI_MODE_NOPUT | MPI_MODE_NOSTORE, win));
		CHECK(got == value(k, nb, nb), "round %d: got %d from rank %d, expected %d", k, got,
		      nb, value(k, nb, nb));
	}
	/* closes the last epoch: an operation now has no epoch */
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Put(&got, 1, MPI_INT, nb, 0, 1, MPI_INT, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Get(&got, 1, MPI_INT, nb, 0, 1, MPI_INT, win));
	/* neither side: no synchronisation at all, and still no epoch */
	MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Put(&got, 1, MPI_INT, nb, 0, 1, MPI_INT, win));
}

static void fence_errors(MPI_Win win, int *mem, int rank, int size)
{
	MPI_Group g;
	int v = 7 + rank;

	MPI_FAILS(MPI_ERR_ASSERT, MPI_Win_fence(1, win));
	MPI_FAILS(MPI_ERR_ASSERT, MPI_Win_fence(MPI_MODE_NOCHECK, win));
	/* no window: reported on MPI_COMM_WORLD */
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_WIN, MPI_Win_fence(0, MPI_WIN_NULL));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

	/* a fence epoch nobody used may give way to a lock epoch */
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_fence(0, win));
	MPI_OK(MPI_Win_unlock(0, win));
	MPI_OK(MPI_Win_lock_all(0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_fence(0, win));
	MPI_OK(MPI_Win_unlock_all(win));

	/* one with operations in it may not */
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Put(&v, 1, MPI_INT, rank, 0, 1, MPI_INT, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, win));
	MPI_OK(MPI_Win_get_group(win, &g));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_start(g, 0, win));

	/* a fence that asserts NOPRECEDE after operations: they are
	 * completed, the fence synchronises, and the lie is reported */
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
	CHECK(mem[0] == v, "the put before the bad fence holds %d, expected %d", mem[0], v);
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

	/* a fence inside an exposure epoch */
	MPI_OK(MPI_Win_post(g, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_fence(0, win));
	MPI_OK(MPI_Win_start(g, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_fence(0, win));
	MPI_OK(MPI_Win_complete(win));
	MPI_OK(MPI_Win_wait(win));
	MPI_OK(MPI_Group_free(&g));
	(void)size;
}

static void one_window(bool allocate, int rank, int size)
{
	MPI_Aint bytes = (MPI_Aint)(size + 1) * (MPI_Aint)sizeof(int);
	int *mem = NULL;
	MPI_Win win;

	if (allocate) {
		MPI_OK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
					&win));
	} else {
		mem = malloc((size_t)bytes);
		CHECK(mem != NULL, "malloc");
		MPI_OK(
		    MPI_Win_create(mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	}
	memset(mem, 0, (size_t)bytes);
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	put_get_rounds(win, mem, rank, size);
	fence_errors(win, mem, rank, size);
	MPI_OK(MPI_Win_free(&win));
	if (!allocate)
		free(mem);
}

/* Stores through the pointers of a shared window are seen by their
 * target after the fence that ends the epoch. */
static void shared_stores(void)
{
	MPI_Comm node;
	MPI_Win win;
	MPI_Aint sz;
	int *mine, *next, r, n, du;

	MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
	MPI_OK(MPI_Comm_rank(node, &r));
	MPI_OK(MPI_Comm_size(node, &n));
	MPI_OK(MPI_Win_allocate_shared(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine,
				       &win));
	MPI_OK(MPI_Win_shared_query(win, (r + 1) % n, &sz, &du, &next));
	CHECK(sz == 2 * sizeof(int) && du == sizeof(int), "shared_query: size %ld, disp unit %d",
	      (long)sz, du);
	for (int k = 1; k <= ROUNDS; k++) {
		MPI_OK(MPI_Win_fence(0, win));
		next[0] = k * 1000 + r;
		MPI_OK(MPI_Win_fence(0, win));
		CHECK(mine[0] == k * 1000 + (r - 1 + n) % n, "round %d: shared slot holds %d", k,
		      mine[0]);
	}
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	MPI_OK(MPI_Win_free(&win));
	MPI_OK(MPI_Comm_free(&node));
}

int main(int argc, char **argv)
{
	int rank, size;

	mt_init(&argc, &argv, &rank, &size);
	one_window(true, rank, size);
	one_window(false, rank, size);
	shared_stores();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("rma_sync_fence: %d ranks OK\n", size);
	MPI_Finalize();
	return 0;
}
