/* ibx-test: np=1,2,3,4 timeout=120 */
/*
 * p2p_persist — persistent requests: inactive requests in every completion
 * call (empty status, handle kept, MPI_UNDEFINED), a ring restarted many
 * times with changing buffer contents (contiguous, derived, 1 MiB
 * rendezvous, synchronous and ready mode), completion order through
 * Waitany, Startall over mixed kinds (standard, synchronous, buffered,
 * ready, receive, MPI_PROC_NULL), cancel of a started receive and reuse
 * after it, and MPI_Request_free of active persistent requests.
 */
#include "mpitest.h"

#define BIG (1 << 20)

static int rank, size, left, right;

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

/* Inactive persistent requests look like null ones to every completion
 * call, but keep their handles. */
static void test_inactive(void)
{
	int x = 0, flag = 0, idx = 0, out = 0, ind[3];
	MPI_Request rq[3];
	MPI_Status st, sts[3];

	MPI_OK(MPI_Send_init(&x, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &rq[0]));
	MPI_OK(MPI_Recv_init(&x, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &rq[1]));
	rq[2] = MPI_REQUEST_NULL;
	MPI_Request keep0 = rq[0], keep1 = rq[1];

	MPI_OK(MPI_Wait(&rq[0], &st));
	check_empty(&st, "Wait(inactive)");
	MPI_OK(MPI_Test(&rq[1], &flag, &st));
	CHECK(flag, "Test(inactive) flag %d", flag);
	check_empty(&st, "Test(inactive)");
	MPI_OK(MPI_Request_get_status(rq[0], &flag, &st));
	CHECK(flag, "Request_get_status(inactive) flag %d", flag);
	check_empty(&st, "Request_get_status(inactive)");
	MPI_OK(MPI_Waitany(3, rq, &idx, &st));
	CHECK(idx == MPI_UNDEFINED, "Waitany over inactive requests: index %d", idx);
	check_empty(&st, "Waitany(inactive)");
	flag = 0;
	MPI_OK(MPI_Testany(3, rq, &idx, &flag, &st));
	CHECK(flag && idx == MPI_UNDEFINED, "Testany over inactive: flag %d index %d", flag, idx);
	MPI_OK(MPI_Waitsome(3, rq, &out, ind, sts));
	CHECK(out == MPI_UNDEFINED, "Waitsome over inactive: outcount %d", out);
	MPI_OK(MPI_Testsome(3, rq, &out, ind, sts));
	CHECK(out == MPI_UNDEFINED, "Testsome over inactive: outcount %d", out);
	flag = 0;
	MPI_OK(MPI_Testall(3, rq, &flag, sts));
	CHECK(flag, "Testall over inactive: flag %d", flag);
	MPI_OK(MPI_Waitall(3, rq, sts));
	for (int i = 0; i < 3; i++)
		check_empty(&sts[i], "Waitall(inactive)");
	/* Canceling an inactive request does nothing. */
	MPI_OK(MPI_Cancel(&rq[1]));
	CHECK(rq[0] == keep0 && rq[1] == keep1, "a completion call changed an inactive handle");
	/* Freeing an inactive request frees it at once. */
	MPI_OK(MPI_Request_free(&rq[0]));
	MPI_OK(MPI_Request_free(&rq[1]));
	CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "Request_free kept a handle");
}

/* A ring restarted many times; the send buffer changes between starts. */
static void ring_rounds(int nrounds, size_t len, int mode, int salt)
{
	char *out = malloc(len), *in = malloc(len);
	MPI_Request rq[2];
	MPI_Status sts[2];
	int cnt;

	CHECK(out && in, "out of memory");
	MPI_OK(MPI_Recv_init(in, (int)len, MPI_BYTE, left, salt, MPI_COMM_WORLD, &rq[0]));
	if (mode == 0)
		MPI_OK(MPI_Send_init(out, (int)len, MPI_BYTE, right, salt, MPI_COMM_WORLD, &rq[1]));
	else if (mode == 1)
		MPI_OK(
		    MPI_Ssend_init(out, (int)len, MPI_BYTE, right, salt, MPI_COMM_WORLD, &rq[1]));
	else
		MPI_OK(
		    MPI_Rsend_init(out, (int)len, MPI_BYTE, right, salt, MPI_COMM_WORLD, &rq[1]));
	for (int k = 0; k < nrounds; k++) {
		mt_fill(out, len, rank, salt + k);
		memset(in, 0, len);
		if (mode == 2) {
			/* ready mode: every receive is posted before any send */
			MPI_OK(MPI_Start(&rq[0]));
			MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
			MPI_OK(MPI_Start(&rq[1]));
		} else {
			MPI_OK(MPI_Startall(2, rq));
		}
		MPI_OK(MPI_Waitall(2, rq, sts));
		CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL,
		      "Waitall freed a persistent request");
		CHECK(mt_verify(in, len, left, salt + k) < 0, "mode %d len %zu round %d: corrupt",
		      mode, len, k);
		MPI_OK(MPI_Get_count(&sts[0], MPI_BYTE, &cnt));
		CHECK(sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == salt && cnt == (int)len,
		      "round %d: status %d/%d count %d", k, sts[0].MPI_SOURCE, sts[0].MPI_TAG, cnt);
	}
	MPI_OK(MPI_Request_free(&rq[0]));
	MPI_OK(MPI_Request_free(&rq[1]));
	free(out);
	free(in);
}

/* A derived (strided) type on both sides: packed at every start, unpacked
 * at every completion. */
static void ring_vector(int nrounds)
{
	enum { N = 64 };
	int out[2 * N], in[2 * N];
	MPI_Datatype vec;
	MPI_Request rq[2];

	MPI_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
	MPI_OK(MPI_Type_commit(&vec));
	MPI_OK(MPI_Recv_init(in, 1, vec, left, 5, MPI_COMM_WORLD, &rq[0]));
	MPI_OK(MPI_Send_init(out, 1, vec, right, 5, MPI_COMM_WORLD, &rq[1]));
	MPI_OK(MPI_Type_free(&vec)); /* the requests hold it */
	for (int k = 0; k < nrounds; k++) {
		for (int i = 0; i < 2 * N; i++) {
			out[i] = rank * 100000 + k * 1000 + i;
			in[i] = -1;
		}
		MPI_OK(MPI_Startall(2, rq));
		MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
		for (int i = 0; i < 2 * N; i++) {
			int want = i % 2 ? -1 : left * 100000 + k * 1000 + i;

			CHECK(in[i] == want, "vector round %d: in[%d] = %d, expected %d", k, i,
			      in[i], want);
		}
	}
	MPI_OK(MPI_Request_free(&rq[0]));
	MPI_OK(MPI_Request_free(&rq[1]));
}

/* Waitany hands back exactly the persistent receive whose message came. */
static void test_order(void)
{
	enum { NR = 6 };
	int in[NR], out[NR], idx;
	MPI_Request rq[NR];
	MPI_Status st;

	for (int i = 0; i < NR; i++)
		MPI_OK(MPI_Recv_init(&in[i], 1, MPI_INT, left, 20 + i, MPI_COMM_WORLD, &rq[i]));
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < NR; i++)
			in[i] = -1;
		MPI_OK(MPI_Startall(NR, rq));
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		for (int k = NR - 1; k >= 0; k--) {
			out[k] = rank * 1000 + round * 100 + k;
			MPI_OK(MPI_Send(&out[k], 1, MPI_INT, right, 20 + k, MPI_COMM_WORLD));
			MPI_OK(MPI_Waitany(NR, rq, &idx, &st));
			CHECK(idx == k, "round %d: Waitany returned %d, expected %d", round, idx,
			      k);
			CHECK(rq[k] != MPI_REQUEST_NULL, "Waitany freed a persistent request");
			CHECK(in[k] == left * 1000 + round * 100 + k && st.MPI_TAG == 20 + k,
			      "round %d: in[%d] = %d tag %d", round, k, in[k], st.MPI_TAG);
			MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		}
		MPI_OK(MPI_Waitany(NR, rq, &idx, &st));
		CHECK(idx == MPI_UNDEFINED, "all completed, Waitany gave %d", idx);
	}
	for (int i = 0; i < NR; i++)
		MPI_OK(MPI_Request_free(&rq[i]));
}

/* One Startall over every kind at once, twice. */
static void test_mixed(void)
{
	enum { K = 5 };
	int out[K], in[K], pn = 7, flag;
	int bsize = 4 * (int)(sizeof(int) + MPI_BSEND_OVERHEAD);
	void *bbuf = malloc((size_t)bsize), *det;
	MPI_Request rq[2 * K + 2];
	MPI_Status sts[2 * K + 2];

	CHECK(bbuf, "out of memory");
	MPI_OK(MPI_Buffer_attach(bbuf, bsize));
	for (int i = 0; i < K; i++)
		MPI_OK(MPI_Recv_init(&in[i], 1, MPI_INT, left, 40 + i, MPI_COMM_WORLD, &rq[i]));
	MPI_OK(MPI_Send_init(&out[0], 1, MPI_INT, right, 40, MPI_COMM_WORLD, &rq[K]));
	MPI_OK(MPI_Ssend_init(&out[1], 1, MPI_INT, right, 41, MPI_COMM_WORLD, &rq[K + 1]));
	MPI_OK(MPI_Bsend_init(&out[2], 1, MPI_INT, right, 42, MPI_COMM_WORLD, &rq[K + 2]));
	MPI_OK(MPI_Rsend_init(&out[3], 1, MPI_INT, right, 43, MPI_COMM_WORLD, &rq[K + 3]));
	MPI_OK(MPI_Send_init(&out[4], 1, MPI_INT, right, 44, MPI_COMM_WORLD, &rq[K + 4]));
	MPI_OK(MPI_Send_init(&pn, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq[2 * K]));
	MPI_OK(MPI_Recv_init(&pn, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq[2 * K + 1]));
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < K; i++) {
			out[i] = rank * 10 + i + round * 1000;
			in[i] = -1;
		}
		/* receives first everywhere (the ready send needs its receive) */
		MPI_OK(MPI_Startall(K, rq));
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		MPI_OK(MPI_Startall(K + 2, &rq[K]));
		/* a buffered send completes at its start */
		MPI_OK(MPI_Test(&rq[K + 2], &flag, MPI_STATUS_IGNORE));
		CHECK(flag, "started Bsend_init request not complete");
		MPI_OK(MPI_Waitall(2 * K + 2, rq, sts));
		for (int i = 0; i < K; i++)
			CHECK(in[i] == left * 10 + i + round * 1000 && sts[i].MPI_TAG == 40 + i,
			      "mixed round %d: in[%d] = %d", round, i, in[i]);
		CHECK(sts[2 * K + 1].MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL receive source %d",
		      sts[2 * K + 1].MPI_SOURCE);
	}
	for (int i = 0; i < 2 * K + 2; i++)
		MPI_OK(MPI_Request_free(&rq[i]));
	MPI_OK(MPI_Buffer_detach(&det, &bsize));
	CHECK(det == bbuf, "Buffer_detach returned %p, attached %p", det, bbuf);
	free(bbuf);
}

/* A started persistent receive is cancelled, then started again and
 * receives a real message. */
static void test_cancel(void)
{
	int x = -1, v = rank, flag;
	MPI_Request rq;
	MPI_Status st;

	MPI_OK(MPI_Recv_init(&x, 1, MPI_INT, left, 60, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Start(&rq));
	MPI_OK(MPI_Cancel(&rq));
	MPI_OK(MPI_Wait(&rq, &st));
	MPI_OK(MPI_Test_cancelled(&st, &flag));
	CHECK(flag, "started persistent receive not cancelled");
	CHECK(rq != MPI_REQUEST_NULL && x == -1, "cancel: handle %p x %d", (void *)rq, x);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* nobody sends before all cancelled */
	MPI_OK(MPI_Start(&rq));
	MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 60, MPI_COMM_WORLD));
	MPI_OK(MPI_Wait(&rq, &st));
	MPI_OK(MPI_Test_cancelled(&st, &flag));
	CHECK(!flag && x == left && st.MPI_SOURCE == left, "restart after cancel: x %d", x);
	MPI_OK(MPI_Request_free(&rq));
}

/* MPI_Request_free of active persistent requests: the operations finish. */
static void test_free_active(void)
{
	char *big = malloc(BIG), *bigin = malloc(BIG);
	int x = -1, v = rank;
	MPI_Request rq, sq;

	CHECK(big && bigin, "out of memory");
	/* an active receive: the data still lands */
	MPI_OK(MPI_Recv_init(&x, 1, MPI_INT, left, 70, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Start(&rq));
	MPI_OK(MPI_Request_free(&rq));
	CHECK(rq == MPI_REQUEST_NULL, "Request_free kept the handle");
	MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 70, MPI_COMM_WORLD));
	while (x == -1) {
		int dummy;

		MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 9999, MPI_COMM_WORLD, &dummy, MPI_STATUS_IGNORE));
	}
	CHECK(x == left, "freed persistent receive got %d", x);
	/* an active 1 MiB send (rendezvous): the message is still delivered */
	mt_fill(big, BIG, rank, 71);
	MPI_OK(MPI_Send_init(big, BIG, MPI_BYTE, right, 71, MPI_COMM_WORLD, &sq));
	MPI_OK(MPI_Start(&sq));
	MPI_OK(MPI_Request_free(&sq));
	MPI_OK(MPI_Recv(bigin, BIG, MPI_BYTE, left, 71, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	CHECK(mt_verify(bigin, BIG, left, 71) < 0, "message of a freed persistent send corrupt");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* every send buffer is free again */
	free(big);
	free(bigin);
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	left = (rank - 1 + size) % size;
	right = (rank + 1) % size;
	test_inactive();
	ring_rounds(200, 64, 0, 100);
	ring_rounds(100, 4000, 1, 101);
	ring_rounds(50, 100, 2, 102);
	ring_rounds(8, BIG, 0, 103);
	ring_rounds(4, BIG, 1, 104);
	ring_vector(50);
	test_order();
	test_mixed();
	test_cancel();
	test_free_active();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("p2p_persist: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
