/* ibx-test: np=2,3,4 timeout=120 */
/*
 * thread_multiple — MPI_THREAD_MULTIPLE: NT threads per rank call MPI at
 * the same time, with no lock of their own:
 *
 *   p2p      blocking and nonblocking ring exchanges with a tag per thread,
 *            receives from MPI_ANY_SOURCE (one message from every rank) and
 *            with MPI_ANY_TAG on a communicator of the thread's own;
 *   handoff  thread 0 blocks in MPI_Recv for a reply that only comes once
 *            thread 1 of the same rank has sent the request to the peer
 *            (a blocking call that kept the library to itself deadlocks);
 *   coll     every thread duplicates MPI_COMM_WORLD (concurrent agreements
 *            on context ids), runs collectives on its duplicate and frees
 *            it, several times, while making and freeing datatypes;
 *   complete MPI_Waitany and MPI_Testsome on disjoint request sets;
 *   probe    MPI_Mprobe / MPI_Mrecv of messages of unknown size, per-thread
 *            tags, while MPI_Iprobe polls with wildcards.
 *
 * Every payload, status and result is checked; a wrong one fails the job.
 */
#include "mpitest.h"

#include <pthread.h>
#include <unistd.h>

enum { NT = 3, ROUNDS = 60, LEN = 512, NREQ = 8, DUPS = 6 };

static int rank, size, right, left;
static pthread_barrier_t bar;
static int recv_posted;	   /* handoff: thread 0 is about to block */
static MPI_Comm tcomm[NT]; /* a communicator of each thread's own */

static int val(int src, int t, int round, int i)
{
	return src * 1000000 + t * 100000 + round * 1000 + i % 1000;
}

static void fill(int *b, int n, int src, int t, int round)
{
	for (int i = 0; i < n; i++)
		b[i] = val(src, t, round, i);
}

static void check(const int *b, int n, int src, int t, int round, const char *what)
{
	for (int i = 0; i < n; i++)
		CHECK(b[i] == val(src, t, round, i), "%s: thread %d round %d from %d: [%d] = %d",
		      what, t, round, src, i, b[i]);
}

/* Ring exchanges: nonblocking, then blocking (MPI_Sendrecv and a
 * send/receive ordered by rank), tag 100 + t; sizes up to 64 KiB. */
static void p2p_ring(int t, int *out, int *in)
{
	for (int r = 0; r < ROUNDS; r++) {
		int n = r % 7 == 6 ? LEN * 32 : LEN, tag = 100 + t;
		MPI_Request rq[2];
		MPI_Status st;
		int cnt;

		fill(out, n, rank, t, r);
		memset(in, 0xff, sizeof(int) * (size_t)n);
		switch (r % 3) {
		case 0:
			MPI_OK(MPI_Irecv(in, n, MPI_INT, left, tag, MPI_COMM_WORLD, &rq[0]));
			MPI_OK(MPI_Isend(out, n, MPI_INT, right, tag, MPI_COMM_WORLD, &rq[1]));
			MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
			break;
		case 1:
			MPI_OK(MPI_Sendrecv(out, n, MPI_INT, right, tag, in, n, MPI_INT, left, tag,
					    MPI_COMM_WORLD, &st));
			CHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag, "sendrecv status %d/%d",
			      st.MPI_SOURCE, st.MPI_TAG);
			break;
		default:
			/* rank 0 sends first, everybody else receives first */
			if (rank == 0)
				MPI_OK(MPI_Send(out, n, MPI_INT, right, tag, MPI_COMM_WORLD));
			MPI_OK(MPI_Recv(in, n, MPI_INT, left, tag, MPI_COMM_WORLD, &st));
			if (rank != 0)
				MPI_OK(MPI_Send(out, n, MPI_INT, right, tag, MPI_COMM_WORLD));
			MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
			CHECK(cnt == n, "count %d, expected %d", cnt, n);
			break;
		}
		check(in, n, left, t, r, "ring");
	}
}

/* Every rank sends thread t of every other rank one message (tag 200 +
 * NT * round + t: a fast rank's next round must not be taken for this one);
 * thread t takes them from MPI_ANY_SOURCE and tells them apart by the
 * status. Then the same with MPI_ANY_TAG on the thread's own communicator. */
static void p2p_wild(int t, int *out, int *in)
{
	MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)size);
	int *seen = calloc((size_t)size, sizeof(int));

	CHECK(rq && seen, "out of memory");
	for (int r = 0; r < 4; r++) {
		int k = 0;

		memset(seen, 0, sizeof(int) * (size_t)size);
		fill(out, LEN, rank, t, r);
		for (int p = 0; p < size; p++)
			if (p != rank)
				MPI_OK(MPI_Isend(out, LEN, MPI_INT, p, 200 + NT * r + t,
						 MPI_COMM_WORLD, &rq[k++]));
		for (int j = 0; j < size - 1; j++) {
			MPI_Status st;

			MPI_OK(MPI_Recv(in, LEN, MPI_INT, MPI_ANY_SOURCE, 200 + NT * r + t,
					MPI_COMM_WORLD, &st));
			CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < size && st.MPI_SOURCE != rank,
			      "any-source status %d", st.MPI_SOURCE);
			CHECK(!seen[st.MPI_SOURCE]++, "two messages from %d", st.MPI_SOURCE);
			check(in, LEN, st.MPI_SOURCE, t, r, "any-source");
		}
		MPI_OK(MPI_Waitall(k, rq, MPI_STATUSES_IGNORE));
		/* any tag, on this thread's communicator: the tag says the round */
		MPI_OK(MPI_Isend(out, LEN, MPI_INT, right, 50 + r, tcomm[t], &rq[0]));
		{
			MPI_Status st;

			MPI_OK(MPI_Recv(in, LEN, MPI_INT, left, MPI_ANY_TAG, tcomm[t], &st));
			CHECK(st.MPI_TAG == 50 + r, "any-tag: tag %d, expected %d", st.MPI_TAG,
			      50 + r);
			check(in, LEN, left, t, r, "any-tag");
		}
		MPI_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
	}
	free(rq);
	free(seen);
}

/* Thread 0 blocks in MPI_Recv for the right neighbour's reply; thread 1
 * then sends that neighbour the request and serves the left one's. */
static void handoff(int t)
{
	int req = rank, rep = -1, got = -1;

	for (int r = 0; r < 5; r++) {
		pthread_barrier_wait(&bar);
		if (t == 0) {
			__atomic_store_n(&recv_posted, 1, __ATOMIC_RELEASE);
			MPI_OK(MPI_Recv(&rep, 1, MPI_INT, right, 900, MPI_COMM_WORLD,
					MPI_STATUS_IGNORE));
			CHECK(rep == right * 10 + r, "handoff reply %d, expected %d", rep,
			      right * 10 + r);
		} else if (t == 1) {
			while (!__atomic_load_n(&recv_posted, __ATOMIC_ACQUIRE))
				sched_yield();
			usleep(2000); /* thread 0 is in MPI_Recv by now, most likely */
			MPI_OK(MPI_Send(&req, 1, MPI_INT, right, 901, MPI_COMM_WORLD));
			MPI_OK(MPI_Recv(&got, 1, MPI_INT, left, 901, MPI_COMM_WORLD,
					MPI_STATUS_IGNORE));
			CHECK(got == left, "handoff request %d, expected %d", got, left);
			rep = rank * 10 + r;
			MPI_OK(MPI_Send(&rep, 1, MPI_INT, left, 900, MPI_COMM_WORLD));
		}
		if (t == 0) /* the reply needed thread 1's request: it saw the flag */
			__atomic_store_n(&recv_posted, 0, __ATOMIC_RELEASE);
		pthread_barrier_wait(&bar);
	}
}

/* Collectives on a duplicate of the thread's own communicator (two threads
 * must not run collectives on one communicator at once: MPI-3.1 §12.4.3),
 * made and freed DUPS times while the other threads do the same; datatypes
 * made, used and freed in between. */
static void coll(int t)
{
	for (int d = 0; d < DUPS; d++) {
		MPI_Comm c;
		MPI_Datatype vec;
		int x = rank + t + d, sum = -1, root = (t + d) % size, b = -1, tsz = 0;
		int *all = malloc(sizeof(int) * (size_t)size), buf[16], got[16];

		CHECK(all != NULL, "out of memory");
		MPI_OK(MPI_Comm_dup(tcomm[t], &c));
		MPI_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c));
		CHECK(sum == size * (size - 1) / 2 + size * (t + d), "allreduce %d", sum);
		if (rank == root)
			b = 7 * t + d;
		MPI_OK(MPI_Bcast(&b, 1, MPI_INT, root, c));
		CHECK(b == 7 * t + d, "bcast %d", b);
		MPI_OK(MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, c));
		for (int p = 0; p < size; p++)
			CHECK(all[p] == p + t + d, "allgather [%d] = %d", p, all[p]);
		MPI_OK(MPI_Barrier(c));
		/* a datatype of this thread's: every other int of 16 */
		MPI_OK(MPI_Type_vector(8, 1, 2, MPI_INT, &vec));
		MPI_OK(MPI_Type_commit(&vec));
		MPI_OK(MPI_Type_size(vec, &tsz));
		CHECK(tsz == 8 * (int)sizeof(int), "type size %d", tsz);
		for (int i = 0; i < 16; i++) {
			buf[i] = i + 100 * t;
			got[i] = -1;
		}
		MPI_OK(MPI_Sendrecv(buf, 1, vec, rank, 77, got, 8, MPI_INT, rank, 77, c,
				    MPI_STATUS_IGNORE));
		for (int i = 0; i < 8; i++)
			CHECK(got[i] == 2 * i + 100 * t, "vector [%d] = %d", i, got[i]);
		MPI_OK(MPI_Type_free(&vec));
		CHECK(vec == MPI_DATATYPE_NULL, "type handle not reset");
		MPI_OK(MPI_Comm_free(&c));
		free(all);
	}
}

/* NREQ receives per thread from the left, completed by MPI_Waitany (even
 * threads) or MPI_Testsome (odd ones); each index once, each payload right. */
static void complete(int t, int *out, int *in)
{
	MPI_Request rr[NREQ], sr[NREQ];
	int done[NREQ] = {0}, ndone = 0;

	for (int k = 0; k < NREQ; k++) {
		MPI_OK(MPI_Irecv(in + k * LEN, LEN, MPI_INT, left, 300 + t * NREQ + k,
				 MPI_COMM_WORLD, &rr[k]));
	}
	for (int k = 0; k < NREQ; k++) {
		fill(out + k * LEN, LEN, rank, t, k);
		MPI_OK(MPI_Isend(out + k * LEN, LEN, MPI_INT, right, 300 + t * NREQ + k,
				 MPI_COMM_WORLD, &sr[k]));
	}
	while (ndone < NREQ) {
		int idx[NREQ], n = 0;
		MPI_Status st[NREQ];

		if (t % 2 == 0) {
			MPI_OK(MPI_Waitany(NREQ, rr, &idx[0], &st[0]));
			CHECK(idx[0] != MPI_UNDEFINED, "waitany: nothing left");
			n = 1;
		} else {
			MPI_OK(MPI_Testsome(NREQ, rr, &n, idx, st));
			CHECK(n != MPI_UNDEFINED, "testsome: nothing left");
		}
		for (int j = 0; j < n; j++) {
			int k = idx[j];

			CHECK(k >= 0 && k < NREQ && !done[k], "index %d twice or out of range", k);
			CHECK(st[j].MPI_TAG == 300 + t * NREQ + k, "tag %d for index %d",
			      st[j].MPI_TAG, k);
			done[k] = 1;
			ndone++;
			check(in + k * LEN, LEN, left, t, k, "waitany/testsome");
		}
	}
	MPI_OK(MPI_Waitall(NREQ, sr, MPI_STATUSES_IGNORE));
}

/* Messages of a size the receiver learns from MPI_Mprobe; the last thread
 * also polls MPI_Iprobe with wildcards meanwhile (must not disturb them). */
static void probe(int t, int *out)
{
	for (int r = 0; r < 20; r++) {
		int n = 1 + (r * 37 + t * 11) % (LEN * 4), cnt, *buf, flag;
		MPI_Message msg;
		MPI_Request rq;
		MPI_Status st;

		fill(out, n, rank, t, r);
		MPI_OK(MPI_Isend(out, n, MPI_INT, right, 500 + t, MPI_COMM_WORLD, &rq));
		if (t == NT - 1)
			for (int i = 0; i < 50; i++)
				MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
						  &flag, MPI_STATUS_IGNORE));
		if (r % 2) {
			MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, 500 + t, MPI_COMM_WORLD, &msg, &st));
		} else {
			for (flag = 0; !flag;)
				MPI_OK(
				    MPI_Improbe(left, 500 + t, MPI_COMM_WORLD, &flag, &msg, &st));
		}
		CHECK(st.MPI_SOURCE == left, "mprobe source %d", st.MPI_SOURCE);
		MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
		CHECK(cnt == n, "mprobe count %d, expected %d", cnt, n);
		buf = malloc(sizeof(int) * (size_t)cnt);
		CHECK(buf != NULL, "out of memory");
		MPI_OK(MPI_Mrecv(buf, cnt, MPI_INT, &msg, MPI_STATUS_IGNORE));
		CHECK(msg == MPI_MESSAGE_NULL, "message handle not reset");
		check(buf, cnt, left, t, r, "mrecv");
		free(buf);
		MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	}
}

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg, flag;
	int *out = malloc(sizeof(int) * LEN * 32), *in = malloc(sizeof(int) * LEN * 32);

	CHECK(out && in, "out of memory");
	MPI_OK(MPI_Is_thread_main(&flag));
	CHECK(flag == (t == 0), "thread %d: Is_thread_main says %d", t, flag);
	p2p_ring(t, out, in);
	p2p_wild(t, out, in);
	handoff(t);
	coll(t);
	complete(t, out, in);
	probe(t, out);
	free(out);
	free(in);
	return NULL;
}

int main(int argc, char **argv)
{
	int provided, level;
	pthread_t th[NT];

	MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
	MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	mt_rank = rank;
	CHECK(provided == MPI_THREAD_MULTIPLE, "MULTIPLE asked, %d provided", provided);
	MPI_OK(MPI_Query_thread(&level));
	CHECK(level == MPI_THREAD_MULTIPLE, "Query_thread %d", level);
	right = (rank + 1) % size;
	left = (rank - 1 + size) % size;
	for (int t = 0; t < NT; t++)
		MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]));
	CHECK(pthread_barrier_init(&bar, NULL, NT) == 0, "pthread_barrier_init");
	for (int t = 1; t < NT; t++)
		CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0,
		      "pthread_create");
	worker((void *)(intptr_t)0);
	for (int t = 1; t < NT; t++)
		CHECK(pthread_join(th[t], NULL) == 0, "pthread_join");
	pthread_barrier_destroy(&bar);
	for (int t = 0; t < NT; t++)
		MPI_OK(MPI_Comm_free(&tcomm[t]));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("thread_multiple: OK on %d ranks, %d threads each\n", size, NT);
	MPI_OK(MPI_Finalize());
	return 0;
}
