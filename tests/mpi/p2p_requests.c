/* ibx-test: np=1,2,3,4 timeout=120 */
/*
 * p2p_requests — completing requests: Wait/Test on null requests, Waitany,
 * Waitsome, Testany, Testsome, Testall, Waitall with null entries, the
 * all-inactive cases (MPI_UNDEFINED), Request_get_status (does not free),
 * Request_free on active sends and receives, and thousands of requests in
 * flight (pool growth and reuse).
 */
#include "mpitest.h"

#define NREQ 16

static void check_empty(const MPI_Status *st, const char *what)
{
	int n, flag;

	CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG &&
		  st->MPI_ERROR == MPI_SUCCESS,
	      "%s: status %d/%d/%d is not empty", what, st->MPI_SOURCE, st->MPI_TAG, st->MPI_ERROR);
	MPI_OK(MPI_Get_count(st, MPI_INT, &n));
	MPI_OK(MPI_Test_cancelled(st, &flag));
	CHECK(n == 0 && !flag, "%s: empty status count %d cancelled %d", what, n, flag);
}

static void test_null(void)
{
	MPI_Request rq = MPI_REQUEST_NULL,
		    arr[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
	MPI_Status st, sts[3];
	int flag = 0, idx = 0, out = 0, ind[3];

	MPI_OK(MPI_Wait(&rq, &st));
	check_empty(&st, "Wait(MPI_REQUEST_NULL)");
	MPI_OK(MPI_Test(&rq, &flag, &st));
	CHECK(flag, "Test(MPI_REQUEST_NULL) flag %d", flag);
	check_empty(&st, "Test(MPI_REQUEST_NULL)");
	MPI_OK(MPI_Waitany(3, arr, &idx, &st));
	CHECK(idx == MPI_UNDEFINED, "Waitany over null requests: index %d", idx);
	check_empty(&st, "Waitany(null)");
	MPI_OK(MPI_Waitany(0, NULL, &idx, &st));
	CHECK(idx == MPI_UNDEFINED, "Waitany(0): index %d", idx);
	flag = 0;
	MPI_OK(MPI_Testany(3, arr, &idx, &flag, &st));
	CHECK(flag && idx == MPI_UNDEFINED, "Testany over nulls: flag %d index %d", flag, idx);
	check_empty(&st, "Testany(null)");
	MPI_OK(MPI_Waitsome(3, arr, &out, ind, sts));
	CHECK(out == MPI_UNDEFINED, "Waitsome over nulls: outcount %d", out);
	MPI_OK(MPI_Testsome(3, arr, &out, ind, sts));
	CHECK(out == MPI_UNDEFINED, "Testsome over nulls: outcount %d", out);
	flag = 0;
	MPI_OK(MPI_Testall(3, arr, &flag, sts));
	CHECK(flag, "Testall over nulls: flag %d", flag);
	for (int i = 0; i < 3; i++)
		check_empty(&sts[i], "Testall(null)");
	MPI_OK(MPI_Waitall(3, arr, sts));
	for (int i = 0; i < 3; i++)
		check_empty(&sts[i], "Waitall(null)");
	MPI_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
	CHECK(flag, "Request_get_status(null)");
}

/* Waitany/Testany/Waitsome/Testsome: receives completed in an order the
 * test controls (the sender releases them one message at a time). */
static void test_any_some(int rank, int size)
{
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;
	int in[NREQ], out[NREQ], seen[NREQ], idx, flag, n, ind[NREQ];
	MPI_Request rq[NREQ], sq[NREQ];
	MPI_Status st, sts[NREQ];

	for (int i = 0; i < NREQ; i++) {
		in[i] = -1;
		seen[i] = 0;
		out[i] = rank * 100 + i;
		MPI_OK(MPI_Irecv(&in[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &rq[i]));
	}
	/* Nothing sent yet: Testany and Testsome find nothing. */
	MPI_OK(MPI_Testany(NREQ, rq, &idx, &flag, &st));
	CHECK(!flag && idx == MPI_UNDEFINED, "Testany before any send: flag %d index %d", flag,
	      idx);
	MPI_OK(MPI_Testsome(NREQ, rq, &n, ind, sts));
	CHECK(n == 0, "Testsome before any send: outcount %d", n);
	MPI_OK(MPI_Testall(NREQ, rq, &flag, sts));
	CHECK(!flag, "Testall before any send");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* Send tags in reverse order; Waitany must return exactly the one
	 * message that is there (one at a time: a barrier after each). */
	for (int k = NREQ - 1; k >= NREQ / 2; k--) {
		MPI_OK(MPI_Send(&out[k], 1, MPI_INT, right, k, MPI_COMM_WORLD));
		MPI_OK(MPI_Waitany(NREQ, rq, &idx, &st));
		CHECK(idx == k, "Waitany returned index %d, expected %d", idx, k);
		CHECK(rq[k] == MPI_REQUEST_NULL, "Waitany did not free the request");
		CHECK(in[k] == left * 100 + k && st.MPI_TAG == k && st.MPI_SOURCE == left,
		      "Waitany data %d tag %d", in[k], st.MPI_TAG);
		seen[k] = 1;
		/* Nobody sends the next one before everyone got this one. */
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	}
	/* Two at once for Waitsome / Testsome. */
	for (int k = NREQ / 2 - 1; k >= 0; k -= 2) {
		MPI_OK(MPI_Send(&out[k], 1, MPI_INT, right, k, MPI_COMM_WORLD));
		MPI_OK(MPI_Send(&out[k - 1], 1, MPI_INT, right, k - 1, MPI_COMM_WORLD));
		int got = 0;

		while (got < 2) {
			if (k % 4 == 1)
				MPI_OK(MPI_Waitsome(NREQ, rq, &n, ind, sts));
			else
				MPI_OK(MPI_Testsome(NREQ, rq, &n, ind, sts));
			CHECK(n != MPI_UNDEFINED && n >= 0 && got + n <= 2, "outcount %d", n);
			for (int j = 0; j < n; j++) {
				int i = ind[j];

				CHECK(i == k || i == k - 1, "completed index %d, expected %d or %d",
				      i, k, k - 1);
				CHECK(!seen[i] && rq[i] == MPI_REQUEST_NULL, "index %d twice", i);
				CHECK(in[i] == left * 100 + i && sts[j].MPI_TAG == i,
				      "Waitsome data %d tag %d", in[i], sts[j].MPI_TAG);
				seen[i] = 1;
			}
			got += n;
		}
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	}
	for (int i = 0; i < NREQ; i++)
		CHECK(seen[i] && rq[i] == MPI_REQUEST_NULL, "request %d never completed", i);
	/* Everything inactive now. */
	MPI_OK(MPI_Waitany(NREQ, rq, &idx, &st));
	CHECK(idx == MPI_UNDEFINED, "Waitany over completed requests: %d", idx);
	MPI_OK(MPI_Waitsome(NREQ, rq, &n, ind, sts));
	CHECK(n == MPI_UNDEFINED, "Waitsome over completed requests: %d", n);

	/* Testall: false until all are done, then true and all freed. */
	for (int i = 0; i < 4; i++)
		MPI_OK(MPI_Irecv(&in[i], 1, MPI_INT, left, 50 + i, MPI_COMM_WORLD, &rq[i]));
	rq[4] = MPI_REQUEST_NULL;
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	for (int i = 0; i < 3; i++)
		MPI_OK(MPI_Isend(&out[i], 1, MPI_INT, right, 50 + i, MPI_COMM_WORLD, &sq[i]));
	MPI_OK(MPI_Waitall(3, sq, MPI_STATUSES_IGNORE));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	for (int spin = 0; spin < 100; spin++) {
		MPI_OK(MPI_Testall(5, rq, &flag, sts));
		CHECK(!flag, "Testall true while a receive is still pending");
	}
	for (int i = 0; i < 3; i++)
		CHECK(rq[i] != MPI_REQUEST_NULL, "Testall freed request %d on a false result", i);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* everyone has looked before the last send */
	MPI_OK(MPI_Send(&out[3], 1, MPI_INT, right, 53, MPI_COMM_WORLD));
	do {
		MPI_OK(MPI_Testall(5, rq, &flag, sts));
	} while (!flag);
	for (int i = 0; i < 4; i++) {
		CHECK(rq[i] == MPI_REQUEST_NULL && in[i] == left * 100 + i &&
			  sts[i].MPI_TAG == 50 + i,
		      "Testall request %d: data %d tag %d", i, in[i], sts[i].MPI_TAG);
	}
	check_empty(&sts[4], "Testall null entry");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void test_get_status_and_free(int rank, int size)
{
	int right = (rank + 1) % size, left = (rank - 1 + size) % size, flag, x = -1, v = rank;
	MPI_Request rq, sq;
	MPI_Status st;
	char *big = malloc(1 << 20), *bigin = malloc(1 << 20);

	CHECK(big && bigin, "out of memory");
	/* Request_get_status: reports completion without freeing. */
	MPI_OK(MPI_Irecv(&x, 1, MPI_INT, left, 60, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Request_get_status(rq, &flag, &st));
	CHECK(!flag, "Request_get_status: complete before the send");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* nobody sends before everyone looked */
	MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 60, MPI_COMM_WORLD));
	do {
		MPI_OK(MPI_Request_get_status(rq, &flag, &st));
	} while (!flag);
	CHECK(rq != MPI_REQUEST_NULL, "Request_get_status freed the request");
	CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 60 && x == left, "get_status: %d/%d x=%d",
	      st.MPI_SOURCE, st.MPI_TAG, x);
	MPI_OK(MPI_Request_get_status(rq, &flag, &st));
	CHECK(flag, "Request_get_status second call");
	MPI_OK(MPI_Wait(&rq, &st));
	CHECK(st.MPI_SOURCE == left && rq == MPI_REQUEST_NULL, "Wait after get_status");

	/* Request_free of an active send (a large one, still in flight):
	 * the message is still delivered. */
	mt_fill(big, 1 << 20, rank, 61);
	MPI_OK(MPI_Isend(big, 1 << 20, MPI_BYTE, right, 61, MPI_COMM_WORLD, &sq));
	MPI_OK(MPI_Request_free(&sq));
	CHECK(sq == MPI_REQUEST_NULL, "Request_free did not null the handle");
	MPI_OK(MPI_Recv(bigin, 1 << 20, MPI_BYTE, left, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	CHECK(mt_verify(bigin, 1 << 20, left, 61) < 0, "message of a freed send corrupt");
	/* The sender learns its buffer is free through a later message. */
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* Request_free of an active receive: the data still lands. */
	x = -1;
	MPI_OK(MPI_Irecv(&x, 1, MPI_INT, left, 62, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Request_free(&rq));
	MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 62, MPI_COMM_WORLD));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	while (x == -1) {
		int dummy;

		MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 9999, MPI_COMM_WORLD, &dummy, MPI_STATUS_IGNORE));
	}
	CHECK(x == left, "freed receive got %d", x);

	/* Request_free of a completed request. */
	MPI_OK(MPI_Isend(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &sq));
	MPI_OK(MPI_Request_free(&sq));
	free(big);
	free(bigin);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Many requests at once: the pool grows, and recycled requests work. */
static void test_many(int rank, int size)
{
	enum { MANY = 3000 };
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;
	MPI_Request *rq = malloc(sizeof(*rq) * 2 * MANY);
	int *in = malloc(sizeof(int) * MANY), *out = malloc(sizeof(int) * MANY);

	CHECK(rq && in && out, "out of memory");
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < MANY; i++) {
			out[i] = rank * MANY + i + round;
			in[i] = -1;
			MPI_OK(MPI_Irecv(&in[i], 1, MPI_INT, left, i % 7, MPI_COMM_WORLD, &rq[i]));
		}
		for (int i = 0; i < MANY; i++)
			MPI_OK(MPI_Isend(&out[i], 1, MPI_INT, right, i % 7, MPI_COMM_WORLD,
					 &rq[MANY + i]));
		MPI_OK(MPI_Waitall(2 * MANY, rq, MPI_STATUSES_IGNORE));
		for (int i = 0; i < MANY; i++)
			CHECK(in[i] == left * MANY + i + round, "round %d message %d = %d", round,
			      i, in[i]);
	}
	free(rq);
	free(in);
	free(out);
}

int main(int argc, char **argv)
{
	int rank, size;

	mt_init(&argc, &argv, &rank, &size);
	test_null();
	test_any_some(rank, size);
	test_get_status_and_free(rank, size);
	test_many(rank, size);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("p2p_requests: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
