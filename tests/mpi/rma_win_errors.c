/* ibx-test: np=1,2,3,4 timeout=60 launchers=mpilite,ompi nodes=1 */
/*
 * rma_win_errors — window error handlers and the error classes of the window
 * calls: MPI_ERRORS_ARE_FATAL by default, MPI_ERRORS_RETURN returning the
 * class, a user handler called with the window and the class (by a failing
 * call and by MPI_Win_call_errhandler), handlers of the wrong kind refused
 * (MPI_ERR_ARG), MPI_ERR_WIN for MPI_WIN_NULL and freed windows (raised on
 * MPI_COMM_WORLD), MPI_ERR_RMA_FLAVOR (attach / detach on a window that is
 * not dynamic, shared_query on a dynamic one; on a created one mpi-lite
 * answers as MPI 4.1 does, others may refuse), MPI_ERR_RMA_ATTACH
 * (overlap, detach of what is not attached), argument
 * errors of creation (raised on the communicator), MPI_ERR_BASE from
 * MPI_Free_mem, MPI_ERR_RMA_SYNC from MPI_Win_free while a lock is held or
 * puts since a fence are not completed by one (every member fails alike,
 * and the window stays usable), and where an
 * operation lands: MPI_ERR_RANK, MPI_ERR_DISP and MPI_ERR_RMA_RANGE (past
 * the end, a member of size 0, an overflowing displacement).
 */
#include "mpitest.h"

#include <stdbool.h>

static int rank, size;
static int calls, last_code;
static MPI_Win last_win;

static void win_handler(MPI_Win *win, int *code, ...)
{
	calls++;
	last_win = *win;
	last_code = *code;
}

static void comm_handler(MPI_Comm *comm, int *code, ...)
{
	(void)comm, (void)code;
}

static void test_handlers(void)
{
	MPI_Errhandler eh, ceh, got;
	MPI_Win win;
	char buf[64];
	int rc;

	MPI_OK(MPI_Win_create(buf, sizeof(buf), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	MPI_OK(MPI_Win_get_errhandler(win, &got));
	CHECK(got == MPI_ERRORS_ARE_FATAL, "default window handler is not MPI_ERRORS_ARE_FATAL");
	MPI_OK(MPI_Errhandler_free(&got));

	MPI_OK(MPI_Win_create_errhandler(win_handler, &eh));
	MPI_OK(MPI_Win_set_errhandler(win, eh));
	MPI_OK(MPI_Errhandler_free(&eh)); /* the window keeps its reference */
	rc = MPI_Win_attach(win, buf, 8);
	CHECK(rc == MPI_ERR_RMA_FLAVOR, "attach on a created window returned %d", rc);
	CHECK(calls == 1 && last_win == win && last_code == MPI_ERR_RMA_FLAVOR,
	      "user handler: %d calls, window %p (expected %p), code %d", calls, (void *)last_win,
	      (void *)win, last_code);
	MPI_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
	CHECK(calls == 2 && last_code == MPI_ERR_OTHER, "call_errhandler: %d calls, code %d", calls,
	      last_code);
	MPI_OK(MPI_Win_get_errhandler(win, &got));
	MPI_OK(MPI_Win_call_errhandler(win, MPI_ERR_RMA_CONFLICT));
	CHECK(calls == 3 && last_code == MPI_ERR_RMA_CONFLICT, "got handler is not the user's");

	/* handlers of the other kind do not attach */
	MPI_OK(MPI_Comm_create_errhandler(comm_handler, &ceh));
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_ARG, MPI_Win_set_errhandler(win, ceh));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_set_errhandler(MPI_COMM_WORLD, got));
	MPI_OK(MPI_Errhandler_free(&ceh));
	MPI_OK(MPI_Errhandler_free(&got));

	/* MPI_ERRORS_RETURN: the classes */
	MPI_FAILS(MPI_ERR_RMA_FLAVOR, MPI_Win_attach(win, buf, 8));
	MPI_FAILS(MPI_ERR_RMA_FLAVOR, MPI_Win_detach(win, buf));
	{
		/* MPI 4.1 allows it on created windows; MPI 3.1 raises the
		 * flavour class (Open MPI 4.1.4). mpi-lite does the former: our
		 * own part is ours, another member's is shared or size 0, NULL */
		MPI_Aint qs = -1;
		int qdu = 0, me, cls = -1;
		void *qb = (void *)0x1;

		MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
		rc = MPI_Win_shared_query(win, 0, &qs, &qdu, &qb);
		if (!MPILITE_BUILD && rc != MPI_SUCCESS) {
			MPI_Error_class(rc, &cls);
			CHECK(cls == MPI_ERR_RMA_FLAVOR, "shared_query: class %d", cls);
		} else {
			CHECK(rc == MPI_SUCCESS, "MPI_Win_shared_query of a created window failed");
			CHECK(qdu == 1, "disp_unit %d", qdu);
			if (me == 0)
				CHECK(qs == (MPI_Aint)sizeof(buf) && qb == buf,
				      "own part: %ld bytes at %p, not %zu at %p", (long)qs, qb,
				      sizeof(buf), (void *)buf);
			else
				CHECK((qs == 0) == (qb == NULL), "rank 0's part: %ld bytes at %p",
				      (long)qs, qb);
		}
	}
	MPI_OK(MPI_Win_free(&win));
	MPI_FAILS(MPI_ERR_WIN, MPI_Win_free(&win)); /* MPI_WIN_NULL, raised on the world */
	MPI_FAILS(MPI_ERR_ARG, MPI_Win_free(NULL));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void test_creation_args(void)
{
	MPI_Win win;
	void *base;
	char buf[8];
	int x;

	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_SIZE, MPI_Win_create(buf, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	MPI_FAILS(MPI_ERR_DISP, MPI_Win_create(buf, 8, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	MPI_FAILS(MPI_ERR_ARG, MPI_Win_create(NULL, 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	MPI_FAILS(MPI_ERR_ARG, MPI_Win_create(buf, 8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, NULL));
	MPI_FAILS(MPI_ERR_COMM, MPI_Win_create(buf, 8, 1, MPI_INFO_NULL, MPI_COMM_NULL, &win));
	MPI_FAILS(MPI_ERR_SIZE,
		  MPI_Win_allocate(-8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
	MPI_FAILS(MPI_ERR_ARG, MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, NULL, &win));
	MPI_FAILS(MPI_ERR_DISP,
		  MPI_Win_allocate_shared(8, -4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
	MPI_FAILS(MPI_ERR_BASE, MPI_Free_mem(&x));
	MPI_FAILS(MPI_ERR_SIZE, MPI_Alloc_mem(-1, MPI_INFO_NULL, &base));
	MPI_OK(MPI_Free_mem(NULL));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void test_attach_errors(void)
{
	static char regions[65][16];
	MPI_Win win, dead;
	char big[256];
	int i;

	MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	{
		MPI_Aint qs;
		int qdu;
		void *qb;

		MPI_FAILS(MPI_ERR_RMA_FLAVOR, MPI_Win_shared_query(win, 0, &qs, &qdu, &qb));
	}
	MPI_OK(MPI_Win_attach(win, big, 128));
	MPI_FAILS(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, big + 64, 128)); /* overlaps */
	MPI_FAILS(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, big, 16));	   /* same base */
	MPI_FAILS(MPI_ERR_RMA_ATTACH, MPI_Win_detach(win, big + 1));	   /* not attached */
	MPI_FAILS(MPI_ERR_SIZE, MPI_Win_attach(win, big + 200, -1));
	MPI_OK(MPI_Win_attach(win, big + 128, 128)); /* adjacent is fine */
	MPI_OK(MPI_Win_detach(win, big));
	MPI_OK(MPI_Win_detach(win, big + 128));
	MPI_FAILS(MPI_ERR_RMA_ATTACH, MPI_Win_detach(win, big));
	/* no limit on regions (the table grows); overlaps still refused */
	for (i = 0; i < 65; i++)
		MPI_OK(MPI_Win_attach(win, regions[i], 16));
	MPI_FAILS(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, regions[64] + 8, 8));
	for (i = 0; i < 65; i++)
		MPI_OK(MPI_Win_detach(win, regions[(i * 7) % 65]));
	MPI_FAILS(MPI_ERR_RMA_ATTACH, MPI_Win_detach(win, regions[64]));
	dead = win;
	MPI_OK(MPI_Win_free(&win));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_WIN, MPI_Win_attach(dead, big, 8)); /* freed: raised on the world */
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void test_free_with_lock(void)
{
	MPI_Win win;
	int *base, rc;

	MPI_OK(
	    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	if (rank == 0)
		MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, size - 1, 0, win));
	rc = MPI_Win_free(&win);
	CHECK(rc == MPI_ERR_RMA_SYNC, "MPI_Win_free with a lock held somewhere returned %d", rc);
	CHECK(win != MPI_WIN_NULL, "the failed free cleared the handle");
	if (rank == 0)
		MPI_OK(MPI_Win_unlock(size - 1, win));
	/* a fence epoch with operations not yet completed by a fence */
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Put(&rank, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_free(&win));
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	MPI_OK(MPI_Win_free(&win));
}

static void test_targets(void)
{
	MPI_Aint bytes = rank == size - 1 && size > 1 ? 0 : 64;
	MPI_Win win;
	long *base, v[8] = {0};

	MPI_OK(MPI_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Win_lock_all(0, win));
	MPI_OK(MPI_Put(v, 8, MPI_LONG, 0, 0, 8, MPI_LONG, win)); /* exactly the window */
	MPI_FAILS(MPI_ERR_RMA_RANGE, MPI_Put(v, 2, MPI_LONG, 0, 7, 2, MPI_LONG, win));
	MPI_FAILS(MPI_ERR_RMA_RANGE, MPI_Get(v, 1, MPI_LONG, 0, 8, 1, MPI_LONG, win));
	MPI_FAILS(MPI_ERR_RANK, MPI_Put(v, 1, MPI_LONG, size, 0, 1, MPI_LONG, win));
	MPI_FAILS(MPI_ERR_RANK, MPI_Get(v, 1, MPI_LONG, -5, 0, 1, MPI_LONG, win));
	MPI_FAILS(MPI_ERR_DISP, MPI_Put(v, 1, MPI_LONG, 0, -1, 1, MPI_LONG, win));
	MPI_FAILS(MPI_ERR_RMA_RANGE,
		  MPI_Put(v, 1, MPI_LONG, 0, (MPI_Aint)1 << 61, 1, MPI_LONG, win));
	if (size > 1)
		MPI_FAILS(MPI_ERR_RMA_RANGE,
			  MPI_Put(v, 1, MPI_LONG, size - 1, 0, 1, MPI_LONG, win));
	MPI_OK(MPI_Put(v, 1, MPI_LONG, MPI_PROC_NULL, 1 << 20, 1, MPI_LONG, win));
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	test_handlers();
	test_creation_args();
	test_attach_errors();
	test_free_with_lock();
	test_targets();
	MPI_OK(MPI_Finalize());
	if (rank == 0)
		printf("rma_win_errors: ok (%d ranks)\n", size);
	return 0;
}
