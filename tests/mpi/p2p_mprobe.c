/* ibx-test: np=1,2,3,4 timeout=120 */
/*
 * p2p_mprobe — matched probe and receive: every rank sends a batch of
 * messages (some 1 MiB, rendezvous) to rank 0, which takes them with
 * MPI_Mprobe / MPI_Improbe from MPI_ANY_SOURCE with MPI_ANY_TAG and
 * receives each through its handle (MPI_Mrecv / MPI_Imrecv), while a
 * wildcard receive and probes posted in between must never get a claimed
 * message: each message arrives exactly once, through its handle.
 * Also: MPI_Improbe finds nothing when nothing is there, MPI_PROC_NULL
 * gives MPI_MESSAGE_NO_PROC, a derived type, truncation, and the argument
 * errors (MPI_ERRORS_RETURN).
 */
#include "mpitest.h"

#define BIG  (1 << 20)
#define NMSG 12

static int rank, size;

/* Message i of a sender: [source, i, tag] then filler; every third is
 * 1 MiB. */
static size_t msg_len(int i)
{
	return i % 3 == 2 ? BIG : (size_t)(16 + 40 * i);
}

static int msg_tag(int i)
{
	return 100 + (i * 7) % 5;
}

static void fill_msg(int *buf, int src, int i)
{
	size_t n = msg_len(i) / sizeof(int);

	buf[0] = src;
	buf[1] = i;
	buf[2] = msg_tag(i);
	for (size_t j = 3; j < n; j++)
		buf[j] = (int)(src * 7 + i * 13 + j);
}

static void check_msg(const int *buf, const MPI_Status *st, int *seen)
{
	int src = buf[0], i = buf[1], cnt;

	CHECK(src == st->MPI_SOURCE && src >= 0 && src < size && i >= 0 && i < NMSG,
	      "message from %d (status %d) number %d", src, st->MPI_SOURCE, i);
	CHECK(buf[2] == msg_tag(i) && st->MPI_TAG == msg_tag(i), "message %d/%d: tag %d/%d", src, i,
	      buf[2], st->MPI_TAG);
	MPI_OK(MPI_Get_count(st, MPI_BYTE, &cnt));
	CHECK((size_t)cnt == msg_len(i), "message %d/%d: %d bytes", src, i, cnt);
	for (size_t j = 3; j < msg_len(i) / sizeof(int); j++)
		CHECK(buf[j] == (int)(src * 7 + i * 13 + j), "message %d/%d corrupt at %zu", src, i,
		      j);
	CHECK(!seen[src * NMSG + i], "message %d/%d received twice", src, i);
	seen[src * NMSG + i] = 1;
}

/* Many senders, one matched-probing receiver with a wildcard receive
 * competing for the same messages. */
static void test_many_senders(MPI_Comm comm)
{
	int *seen = calloc((size_t)size * NMSG, sizeof(int));
	int *sbuf[NMSG], *rbuf = malloc(BIG), *wbuf = malloc(BIG), got = 0, flag;
	MPI_Request sreq[NMSG], wreq = MPI_REQUEST_NULL;
	MPI_Message msg;
	MPI_Status st;

	CHECK(seen && rbuf && wbuf, "out of memory");
	for (int i = 0; i < NMSG; i++) {
		sbuf[i] = malloc(msg_len(i));
		CHECK(sbuf[i], "out of memory");
		fill_msg(sbuf[i], rank, i);
		MPI_OK(
		    MPI_Isend(sbuf[i], (int)msg_len(i), MPI_BYTE, 0, msg_tag(i), comm, &sreq[i]));
	}
	if (rank == 0) {
		while (got < size * NMSG) {
			/* the last message is the wildcard receive's */
			if (wreq != MPI_REQUEST_NULL && got == size * NMSG - 1) {
				MPI_OK(MPI_Wait(&wreq, &st));
				check_msg(wbuf, &st, seen);
				got++;
				continue;
			}
			if (got % 2) {
				MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &msg, &st));
			} else {
				do {
					MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag,
							   &msg, &st));
				} while (!flag);
			}
			CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC,
			      "Mprobe gave no message");
			/* A wildcard receive posted now must take another message
			 * (or wait), never the claimed one. */
			if (wreq == MPI_REQUEST_NULL && got + 1 < size * NMSG)
				MPI_OK(MPI_Irecv(wbuf, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
						 comm, &wreq));
			if (got % 3 == 0) {
				MPI_Request r;

				MPI_OK(MPI_Imrecv(rbuf, BIG, MPI_BYTE, &msg, &r));
				MPI_OK(MPI_Wait(&r, &st));
			} else {
				MPI_OK(MPI_Mrecv(rbuf, BIG, MPI_BYTE, &msg, &st));
			}
			CHECK(msg == MPI_MESSAGE_NULL, "Mrecv left the message handle set");
			check_msg(rbuf, &st, seen);
			got++;
			if (wreq != MPI_REQUEST_NULL) {
				MPI_OK(MPI_Test(&wreq, &flag, &st));
				if (flag) {
					check_msg(wbuf, &st, seen);
					got++;
				}
			}
		}
		CHECK(wreq == MPI_REQUEST_NULL, "a wildcard receive is left");
		for (int i = 0; i < size * NMSG; i++)
			CHECK(seen[i], "message %d/%d never received", i / NMSG, i % NMSG);
	}
	MPI_OK(MPI_Waitall(NMSG, sreq, MPI_STATUSES_IGNORE));
	for (int i = 0; i < NMSG; i++)
		free(sbuf[i]);
	free(seen);
	free(rbuf);
	free(wbuf);
	MPI_OK(MPI_Barrier(comm));
}

/* A claimed message is invisible to probes; it is received exactly where
 * its handle says, even after later messages with the same tag. */
static void test_claimed_invisible(MPI_Comm comm)
{
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;
	int a = rank * 10 + 1, b = rank * 10 + 2, x = -1, y = -1, flag;
	MPI_Message m, m2 = MPI_MESSAGE_NULL;
	MPI_Status st;

	MPI_OK(MPI_Send(&a, 1, MPI_INT, right, 7, comm));
	MPI_OK(MPI_Mprobe(left, 7, comm, &m, &st));
	CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7, "Mprobe status %d/%d", st.MPI_SOURCE,
	      st.MPI_TAG);
	MPI_OK(MPI_Iprobe(left, 7, comm, &flag, MPI_STATUS_IGNORE));
	CHECK(!flag, "Iprobe sees a claimed message");
	MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &m2, MPI_STATUS_IGNORE));
	CHECK(!flag, "Improbe claimed a message claimed already");
	MPI_OK(MPI_Barrier(comm));
	MPI_OK(MPI_Send(&b, 1, MPI_INT, right, 7, comm));
	MPI_OK(MPI_Recv(&y, 1, MPI_INT, left, 7, comm, MPI_STATUS_IGNORE));
	CHECK(y == left * 10 + 2, "Recv got %d, not the second message", y);
	MPI_OK(MPI_Mrecv(&x, 1, MPI_INT, &m, &st));
	CHECK(x == left * 10 + 1, "Mrecv got %d, not the claimed message", x);
	MPI_OK(MPI_Barrier(comm));
}

/* Nothing there; MPI_PROC_NULL; a derived type; 1 MiB through Imrecv. */
static void test_edges(MPI_Comm comm)
{
	enum { N = 50 };
	int right = (rank + 1) % size, left = (rank - 1 + size) % size, flag = -1, cnt;
	int out[2 * N], in[2 * N];
	char *big = malloc(BIG), *bigin = malloc(BIG);
	MPI_Message m = MPI_MESSAGE_NULL;
	MPI_Datatype vec;
	MPI_Request r;
	MPI_Status st;

	CHECK(big && bigin, "out of memory");
	MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, 555, comm, &flag, &m, &st));
	CHECK(flag == 0, "Improbe found a message nobody sent");

	MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 3, comm, &m, &st));
	CHECK(m == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL &&
		  st.MPI_TAG == MPI_ANY_TAG,
	      "Mprobe(MPI_PROC_NULL): %p %d/%d", (void *)m, st.MPI_SOURCE, st.MPI_TAG);
	MPI_OK(MPI_Mrecv(in, 5, MPI_INT, &m, &st));
	MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
	CHECK(m == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && cnt == 0,
	      "Mrecv(MPI_MESSAGE_NO_PROC): source %d count %d", st.MPI_SOURCE, cnt);
	MPI_OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, comm, &flag, &m, &st));
	CHECK(flag && m == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL)");
	MPI_OK(MPI_Imrecv(in, 5, MPI_INT, &m, &r));
	MPI_OK(MPI_Wait(&r, &st));
	CHECK(m == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL, "Imrecv(NO_PROC)");

	/* a strided receive type */
	MPI_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
	MPI_OK(MPI_Type_commit(&vec));
	for (int i = 0; i < 2 * N; i++) {
		out[i] = rank * 1000 + i;
		in[i] = -1;
	}
	MPI_OK(MPI_Send(out, N, MPI_INT, right, 8, comm));
	MPI_OK(MPI_Mprobe(left, 8, comm, &m, &st));
	MPI_OK(MPI_Imrecv(in, 1, vec, &m, &r));
	MPI_OK(MPI_Type_free(&vec)); /* the receive holds it */
	MPI_OK(MPI_Wait(&r, &st));
	for (int i = 0; i < 2 * N; i++)
		CHECK(in[i] == (i % 2 ? -1 : left * 1000 + i / 2), "vector in[%d] = %d", i, in[i]);

	/* 1 MiB, rendezvous, the receive started only after the probe */
	mt_fill(big, BIG, rank, 9);
	MPI_OK(MPI_Isend(big, BIG, MPI_BYTE, right, 9, comm, &r));
	MPI_OK(MPI_Mprobe(MPI_ANY_SOURCE, 9, comm, &m, &st));
	MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
	CHECK(cnt == BIG && st.MPI_SOURCE == left, "1 MiB probe: %d bytes from %d", cnt,
	      st.MPI_SOURCE);
	MPI_OK(MPI_Mrecv(bigin, BIG, MPI_BYTE, &m, &st));
	CHECK(mt_verify(bigin, BIG, left, 9) < 0, "1 MiB matched message corrupt");
	MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	free(big);
	free(bigin);
	MPI_OK(MPI_Barrier(comm));
}

static void test_errors(MPI_Comm comm)
{
	int right = (rank + 1) % size, left = (rank - 1 + size) % size, x[4] = {1, 2, 3, 4};
	int flag;
	MPI_Message m = MPI_MESSAGE_NULL, stale;
	MPI_Request r;
	MPI_Status st;

	MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_RANK, MPI_Mprobe(size, 0, comm, &m, &st));
	MPI_FAILS(MPI_ERR_TAG, MPI_Mprobe(0, -5, comm, &m, &st));
	MPI_FAILS(MPI_ERR_COMM, MPI_Mprobe(0, 0, MPI_COMM_NULL, &m, &st));
	MPI_FAILS(MPI_ERR_ARG, MPI_Mprobe(0, 0, comm, NULL, &st));
	MPI_FAILS(MPI_ERR_ARG, MPI_Improbe(0, 0, comm, NULL, &m, &st));
	MPI_FAILS(MPI_ERR_RANK, MPI_Improbe(-7, 0, comm, &flag, &m, &st));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Mrecv(x, 1, MPI_INT, &m, &st));
	MPI_FAILS(MPI_ERR_ARG, MPI_Mrecv(x, 1, MPI_INT, NULL, &st));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Imrecv(x, 1, MPI_INT, &m, &r));

	/* a bad receive leaves the message for a good one */
	MPI_OK(MPI_Send(x, 4, MPI_INT, right, 11, comm));
	MPI_OK(MPI_Mprobe(left, 11, comm, &m, &st));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Mrecv(x, -1, MPI_INT, &m, &st));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Mrecv(x, 1, MPI_DATATYPE_NULL, &m, &st));
	MPI_FAILS(MPI_ERR_ARG, MPI_Imrecv(x, 4, MPI_INT, &m, NULL));
	CHECK(m != MPI_MESSAGE_NULL, "a failed Mrecv consumed the message");
	/* truncation: the message is received (and gone), the error says so */
	stale = m;
	MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Mrecv(x, 2, MPI_INT, &m, &st));
	CHECK(m == MPI_MESSAGE_NULL, "truncated Mrecv left the handle");
	/* the handle of a received message is dead */
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Mrecv(x, 4, MPI_INT, &stale, &st));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	MPI_OK(MPI_Barrier(comm));
}

int main(int argc, char **argv)
{
	MPI_Comm comm;

	mt_init(&argc, &argv, &rank, &size);
	/* A communicator of its own: nothing else can match there. */
	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
	test_many_senders(comm);
	test_claimed_invisible(comm);
	test_edges(comm);
	test_many_senders(MPI_COMM_WORLD);
	test_errors(comm);
	MPI_OK(MPI_Comm_free(&comm));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("p2p_mprobe: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
