/* ibx-test: np=1,2,3,4 timeout=90 */
/*
 * thread_serialized — MPI_THREAD_SERIALIZED: MPI_Init_thread grants
 * what is asked, and two threads of every rank then take turns in
 * MPI under one mutex — nonblocking sends and receives started by one
 * thread may be completed by the other — exchanging tagged messages with
 * the same thread of the neighbouring ranks; every payload is checked. The
 * second thread is not the main one (MPI_Is_thread_main says so), and it
 * also creates and frees a communicator.
 */
#include "mpitest.h"

#include <pthread.h>
#include <stdbool.h>

enum { ROUNDS = 300, LEN = 300 }; /* 2.4 KB messages, some 24 KB */

static int rank, size, right, left;
static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;

/* requests started by one thread, completed by whichever looks first */
static MPI_Request shared_req = MPI_REQUEST_NULL;
static double shared_buf[LEN];
static int shared_done;

static void lock(void)
{
	pthread_mutex_lock(&mpi_lock);
}

static void unlock(void)
{
	pthread_mutex_unlock(&mpi_lock);
}

static double val(int src, int thread, int round, int i)
{
	return src * 1e7 + thread * 1e6 + round * 1e3 + i;
}

/* Waits for @rq by polling with MPI_Test, the lock held only per call. */
static void wait_turns(MPI_Request *rq)
{
	int flag = 0;

	while (!flag) {
		lock();
		MPI_OK(MPI_Test(rq, &flag, MPI_STATUS_IGNORE));
		unlock();
		if (!flag)
			sched_yield();
	}
}

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg, flag;
	double *out = malloc(sizeof(double) * LEN * 10), *in = malloc(sizeof(double) * LEN * 10);

	CHECK(out && in, "out of memory");
	lock();
	MPI_OK(MPI_Is_thread_main(&flag));
	CHECK(flag == (t == 0), "thread %d: Is_thread_main %d", t, flag);
	unlock();
	for (int r = 0; r < ROUNDS; r++) {
		int n = r % 10 == 9 ? LEN * 10 : LEN; /* now and then a larger one */
		MPI_Request rq[2];

		for (int i = 0; i < n; i++) {
			out[i] = val(rank, t, r, i);
			in[i] = -1;
		}
		lock();
		MPI_OK(MPI_Irecv(in, n, MPI_DOUBLE, left, 100 + t, MPI_COMM_WORLD, &rq[0]));
		MPI_OK(MPI_Isend(out, n, MPI_DOUBLE, right, 100 + t, MPI_COMM_WORLD, &rq[1]));
		unlock();
		wait_turns(&rq[0]);
		wait_turns(&rq[1]);
		for (int i = 0; i < n; i++)
			CHECK(in[i] == val(left, t, r, i), "thread %d round %d: element %d is %g",
			      t, r, i, in[i]);
	}
	/* a communicator made and used by this thread alone (the other waits
	 * for the lock): creation is collective per thread pair */
	if (t == 1) {
		MPI_Comm c;
		int x = rank, sum = -1;

		lock();
		MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
		MPI_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c));
		MPI_OK(MPI_Comm_free(&c));
		unlock();
		CHECK(sum == size * (size - 1) / 2, "allreduce from thread 1: %d", sum);
	}
	/* thread 0 receives what thread 1 posts: a request crosses threads */
	lock();
	if (t == 1)
		MPI_OK(
		    MPI_Irecv(shared_buf, LEN, MPI_DOUBLE, left, 300, MPI_COMM_WORLD, &shared_req));
	unlock();
	if (t == 0) {
		for (int i = 0; i < LEN; i++)
			out[i] = val(rank, 9, 9, i);
		lock();
		MPI_OK(MPI_Send(out, LEN, MPI_DOUBLE, right, 300, MPI_COMM_WORLD));
		unlock();
		for (bool done = false; !done;) {
			lock();
			if (shared_req != MPI_REQUEST_NULL) {
				MPI_OK(MPI_Wait(&shared_req, MPI_STATUS_IGNORE));
				shared_done = 1;
			}
			done = shared_done;
			unlock();
			sched_yield();
		}
		for (int i = 0; i < LEN; i++)
			CHECK(shared_buf[i] == val(left, 9, 9, i), "cross-thread receive %d: %g", i,
			      shared_buf[i]);
	}
	free(out);
	free(in);
	return NULL;
}

int main(int argc, char **argv)
{
	int provided, level;
	pthread_t th;

	MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided));
	MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	mt_rank = rank;
	CHECK(provided == MPI_THREAD_SERIALIZED, "SERIALIZED asked, %d provided", provided);
	MPI_OK(MPI_Query_thread(&level));
	CHECK(level == MPI_THREAD_SERIALIZED, "Query_thread %d", level);
	right = (rank + 1) % size;
	left = (rank - 1 + size) % size;
	CHECK(pthread_create(&th, NULL, worker, (void *)(intptr_t)1) == 0, "pthread_create");
	worker((void *)(intptr_t)0);
	CHECK(pthread_join(th, NULL) == 0, "pthread_join");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("thread_serialized: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
