/* ibx-test: np=4,5 timeout=120 env="IBX_COLL_NODE_SIZE=2" */
/*
 * thread_coll_hier — node-aware collectives from several threads at once
 * (MPI_THREAD_MULTIPLE). With IBX_COLL_NODE_SIZE=2 every two consecutive
 * world ranks count as a node, so Barrier, Bcast, Reduce and Allreduce run
 * their intra-node / representatives / intra-node phases. Each thread has
 * communicators of its own — a duplicate of MPI_COMM_WORLD and one that
 * cuts the nodes differently (world ranks reversed) — and runs rounds of
 * collectives on them with a root that moves, while the other threads do
 * the same. A collective blocked in one phase lets another thread in: the
 * groups of one communicator's split must not be those of another's.
 *
 * Every result is checked; a wrong one fails the job, a lost message hangs
 * it until the runner's timeout.
 */
#include "mpitest.h"

#include <pthread.h>
#include <stdint.h>

enum { NT = 3, ROUNDS = 40, BIG = 16384 /* ints: 64 KiB, a rendezvous */ };

static int rank, size;
static MPI_Comm dup_comm[NT], rev_comm[NT];

static int val(int t, int round, int root, int i)
{
	return t * 1000000 + round * 10000 + root * 100 + i % 97;
}

/* One round on @comm: Bcast (small and large) and Reduce from @root,
 * Allreduce, Barrier. */
static void round_on(MPI_Comm comm, int t, int round, int *buf, int *out)
{
	int me, p, root, n = round % 4 == 3 ? BIG : 8;
	long sum, want;

	MPI_OK(MPI_Comm_rank(comm, &me));
	MPI_OK(MPI_Comm_size(comm, &p));
	root = (round + t) % p;

	for (int i = 0; i < n; i++)
		buf[i] = me == root ? val(t, round, root, i) : -1;
	MPI_OK(MPI_Bcast(buf, n, MPI_INT, root, comm));
	for (int i = 0; i < n; i++)
		CHECK(buf[i] == val(t, round, root, i),
		      "thread %d round %d: bcast from %d [%d] = %d", t, round, root, i, buf[i]);

	for (int i = 0; i < n; i++)
		buf[i] = me + i % 5;
	MPI_OK(MPI_Reduce(buf, out, n, MPI_INT, MPI_SUM, root, comm));
	if (me == root)
		for (int i = 0; i < n; i++)
			CHECK(out[i] == p * (p - 1) / 2 + p * (i % 5),
			      "thread %d round %d: reduce to %d [%d] = %d", t, round, root, i,
			      out[i]);

	sum = me + 1 + t;
	MPI_OK(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_LONG, MPI_SUM, comm));
	want = (long)p * (p + 1) / 2 + (long)p * t;
	CHECK(sum == want, "thread %d round %d: allreduce %ld, want %ld", t, round, sum, want);

	MPI_OK(MPI_Barrier(comm));
}

static void *thread_main(void *arg)
{
	int t = (int)(intptr_t)arg;
	int *buf = malloc(BIG * sizeof(int)), *out = malloc(BIG * sizeof(int));

	CHECK(buf && out, "no memory");
	for (int r = 0; r < ROUNDS; r++) {
		round_on(dup_comm[t], t, r, buf, out);
		round_on(rev_comm[t], t, r, buf, out);
	}
	free(buf);
	free(out);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[NT];
	int provided;

	MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
	CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
	MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	for (int t = 0; t < NT; t++) {
		MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup_comm[t]));
		MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev_comm[t]));
	}
	for (int t = 0; t < NT; t++)
		CHECK(pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t) == 0,
		      "pthread_create");
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < NT; t++) {
		MPI_OK(MPI_Comm_free(&dup_comm[t]));
		MPI_OK(MPI_Comm_free(&rev_comm[t]));
	}
	if (rank == 0)
		printf("thread_coll_hier: OK on %d ranks, %d threads each\n", size, NT);
	MPI_OK(MPI_Finalize());
	return 0;
}
