/* ibx-test: np=1,2,3,4 timeout=120 */
/*
 * p2p_match — which message a receive gets, and what its status says:
 * non-overtaking order (same tag, eager and rendezvous mixed, blocking and
 * nonblocking sends), MPI_ANY_SOURCE / MPI_ANY_TAG, tag selectivity,
 * Probe / Iprobe / Get_count, Sendrecv(_replace), MPI_PROC_NULL,
 * communicator isolation (MPI_COMM_SELF vs MPI_COMM_WORLD), truncation
 * (MPI_ERR_TRUNCATE under MPI_ERRORS_RETURN), and cancelling receives.
 */
#include "mpitest.h"

#define NMSG 600

/* Message i of the ordering test: mostly small, every 37th one larger than
 * any eager limit, so eager and rendezvous messages interleave. */
static size_t order_len(int i)
{
	return i % 37 == 0 ? 70000 + (size_t)i : 8 + (size_t)(i % 5) * 4;
}

static void test_order(int rank, int size)
{
	size_t maxlen = 70000 + NMSG;
	unsigned char *buf = malloc(maxlen);
	MPI_Status st;

	CHECK(buf, "out of memory");
	if (size == 1) {
		/* To oneself: nonblocking sends first, then receives. */
		MPI_Request *rq = malloc(sizeof(*rq) * NMSG);
		unsigned char *big = malloc(maxlen * 4);

		CHECK(rq && big, "out of memory");
		for (int i = 0; i < NMSG; i++) {
			unsigned char *p = big + (size_t)(i % 4) * maxlen;

			if (i >= 4) {
				/* buffers are reused every 4 messages */
				int n, k = i - 4;

				MPI_OK(MPI_Recv(buf, (int)maxlen, MPI_BYTE, 0, 3, MPI_COMM_WORLD,
						&st));
				MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
				CHECK((size_t)n == order_len(k), "self message %d: %d bytes", k, n);
				CHECK(mt_verify(buf, order_len(k), 0, k) < 0,
				      "self message %d overtaken or corrupt", k);
				MPI_OK(MPI_Wait(&rq[k], MPI_STATUS_IGNORE));
			}
			mt_fill(p, order_len(i), 0, i);
			MPI_OK(MPI_Isend(p, (int)order_len(i), MPI_BYTE, 0, 3, MPI_COMM_WORLD,
					 &rq[i]));
		}
		for (int k = NMSG - 4; k < NMSG; k++) {
			MPI_OK(MPI_Recv(buf, (int)maxlen, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &st));
			CHECK(mt_verify(buf, order_len(k), 0, k) < 0, "self message %d", k);
		}
		MPI_OK(MPI_Waitall(4, &rq[NMSG - 4], MPI_STATUSES_IGNORE));
		free(rq);
		free(big);
		free(buf);
		return;
	}
	if (rank != 0) {
		unsigned char *sbuf = malloc(maxlen);

		CHECK(sbuf, "out of memory");
		/* Blocking sends, then a burst of nonblocking ones. */
		for (int i = 0; i < NMSG / 2; i++) {
			mt_fill(sbuf, order_len(i), rank, i);
			MPI_OK(MPI_Send(sbuf, (int)order_len(i), MPI_BYTE, 0, 3, MPI_COMM_WORLD));
		}
		MPI_Request rq[NMSG / 2];
		unsigned char *bufs = malloc(maxlen * (NMSG / 2) / 8 + maxlen);

		CHECK(bufs, "out of memory");
		size_t off = 0;

		for (int i = NMSG / 2; i < NMSG; i++) {
			mt_fill(bufs + off, order_len(i), rank, i);
			MPI_OK(MPI_Isend(bufs + off, (int)order_len(i), MPI_BYTE, 0, 3,
					 MPI_COMM_WORLD, &rq[i - NMSG / 2]));
			off += order_len(i);
		}
		MPI_OK(MPI_Waitall(NMSG / 2, rq, MPI_STATUSES_IGNORE));
		free(bufs);
		free(sbuf);
	} else {
		/* Rank 0: from rank 1 by name, from the others through
		 * MPI_ANY_SOURCE; each sender's sequence must arrive in order. */
		int *next = calloc((size_t)size, sizeof(int));

		CHECK(next, "out of memory");
		for (int i = 0; i < NMSG; i++) {
			MPI_OK(MPI_Recv(buf, (int)maxlen, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &st));
			CHECK(st.MPI_SOURCE == 1, "source %d", st.MPI_SOURCE);
			CHECK(mt_verify(buf, order_len(i), 1, i) < 0,
			      "message %d from rank 1 out of order or corrupt", i);
		}
		for (int i = 0; i < NMSG * (size - 2); i++) {
			int n, src, k;

			MPI_OK(MPI_Recv(buf, (int)maxlen, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
					MPI_COMM_WORLD, &st));
			src = st.MPI_SOURCE;
			CHECK(src >= 2 && src < size, "ANY_SOURCE gave source %d", src);
			CHECK(st.MPI_TAG == 3, "ANY_TAG gave tag %d", st.MPI_TAG);
			k = next[src]++;
			MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
			CHECK((size_t)n == order_len(k), "message %d from %d: %d bytes", k, src, n);
			CHECK(mt_verify(buf, order_len(k), src, k) < 0,
			      "message %d from rank %d overtaken or corrupt", k, src);
		}
		free(next);
	}
	free(buf);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Tags select: messages are taken in tag order opposite to sending order. */
static void test_tags(int rank, int size)
{
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;
	int v[5], got;
	MPI_Request rq[5];
	MPI_Status st;

	for (int t = 0; t < 5; t++) {
		v[t] = 1000 * rank + t;
		MPI_OK(MPI_Isend(&v[t], 1, MPI_INT, right, 10 + t, MPI_COMM_WORLD, &rq[t]));
	}
	for (int t = 4; t >= 0; t--) {
		MPI_OK(MPI_Recv(&got, 1, MPI_INT, left, 10 + t, MPI_COMM_WORLD, &st));
		CHECK(got == 1000 * left + t, "tag %d: got %d", 10 + t, got);
		CHECK(st.MPI_TAG == 10 + t && st.MPI_SOURCE == left, "status %d/%d", st.MPI_SOURCE,
		      st.MPI_TAG);
	}
	MPI_OK(MPI_Waitall(5, rq, MPI_STATUSES_IGNORE));
	/* The largest tag MPI_TAG_UB allows goes through. */
	int *ub, flag;

	MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
	CHECK(flag && *ub >= 32767, "MPI_TAG_UB %d (flag %d)", flag ? *ub : -1, flag);
	MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, right, *ub, &got, 1, MPI_INT, left, *ub,
			    MPI_COMM_WORLD, &st));
	CHECK(got == left && st.MPI_TAG == *ub, "tag MPI_TAG_UB: got %d tag %d", got, st.MPI_TAG);
}

static void test_probe(int rank, int size)
{
	int right = (rank + 1) % size, left = (rank - 1 + size) % size, flag, n;
	char out[777], *in;
	MPI_Status st;
	MPI_Request rq;

	/* Nothing is ever sent with tag 99. */
	MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, &st));
	CHECK(!flag, "Iprobe found a message that was never sent");

	mt_fill(out, sizeof(out), rank, 9);
	MPI_OK(MPI_Isend(out, (int)sizeof(out), MPI_CHAR, right, 9, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
	CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 9, "Probe status %d/%d", st.MPI_SOURCE,
	      st.MPI_TAG);
	MPI_OK(MPI_Get_count(&st, MPI_CHAR, &n));
	CHECK(n == 777, "Probe count %d", n);
	MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(n == MPI_UNDEFINED, "777 bytes as MPI_INT: count %d, expected MPI_UNDEFINED", n);
	MPI_OK(MPI_Get_elements(&st, MPI_SHORT, &n));
	CHECK(n == MPI_UNDEFINED, "777 bytes as MPI_SHORT: elements %d", n);
	/* Probing again sees the same message. */
	do {
		MPI_OK(MPI_Iprobe(left, 9, MPI_COMM_WORLD, &flag, &st));
	} while (!flag);
	MPI_OK(MPI_Get_count(&st, MPI_CHAR, &n));
	CHECK(n == 777 && st.MPI_SOURCE == left, "Iprobe count %d source %d", n, st.MPI_SOURCE);
	in = malloc((size_t)n);
	CHECK(in, "out of memory");
	MPI_OK(MPI_Recv(in, n, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
	CHECK(mt_verify(in, 777, left, 9) < 0, "probed message corrupt");
	free(in);
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	/* Once received, it is gone. */
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
	CHECK(!flag, "a received message is still there for Iprobe");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void test_sendrecv(int rank, int size)
{
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;
	double out[300], in[300];
	MPI_Status st;
	int n;

	for (int i = 0; i < 300; i++)
		out[i] = rank * 1000.0 + i;
	MPI_OK(MPI_Sendrecv(out, 300, MPI_DOUBLE, right, 5, in, 300, MPI_DOUBLE, left, 5,
			    MPI_COMM_WORLD, &st));
	for (int i = 0; i < 300; i++)
		CHECK(in[i] == left * 1000.0 + i, "Sendrecv element %d = %g", i, in[i]);
	MPI_OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
	CHECK(n == 300 && st.MPI_SOURCE == left && st.MPI_TAG == 5, "Sendrecv status");

	/* Sendrecv_replace around the ring, small and large. */
	for (int len = 1; len <= 300000; len *= 300) {
		int *b = malloc(sizeof(int) * (size_t)len);

		CHECK(b, "out of memory");
		for (int i = 0; i < len; i++)
			b[i] = rank * 7 + i;
		MPI_OK(
		    MPI_Sendrecv_replace(b, len, MPI_INT, right, 6, left, 6, MPI_COMM_WORLD, &st));
		for (int i = 0; i < len; i++)
			CHECK(b[i] == left * 7 + i, "Sendrecv_replace(%d) element %d = %d", len, i,
			      b[i]);
		CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 6, "Sendrecv_replace status");
		free(b);
	}

	/* A non-periodic chain: the ends talk to MPI_PROC_NULL. */
	int up = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
	int down = rank > 0 ? rank - 1 : MPI_PROC_NULL;
	int v = rank, w = -5;

	MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, up, 7, &w, 1, MPI_INT, down, 7, MPI_COMM_WORLD, &st));
	if (down == MPI_PROC_NULL) {
		CHECK(w == -5, "receive from MPI_PROC_NULL wrote the buffer");
		CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
		      "PROC_NULL status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
		MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
		CHECK(n == 0, "PROC_NULL count %d", n);
	} else {
		CHECK(w == down && st.MPI_SOURCE == down, "chain: got %d from %d", w,
		      st.MPI_SOURCE);
	}
}

static void test_proc_null(void)
{
	int v = 11, n, flag;
	MPI_Status st;
	MPI_Request rq;

	MPI_OK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
	MPI_OK(MPI_Ssend(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
	MPI_OK(MPI_Rsend(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
	st.MPI_SOURCE = st.MPI_TAG = 1234;
	MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
	CHECK(v == 11, "Recv from MPI_PROC_NULL wrote the buffer");
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "status %d/%d",
	      st.MPI_SOURCE, st.MPI_TAG);
	MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(n == 0, "count %d", n);

	MPI_OK(MPI_Irecv(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Test(&rq, &flag, &st));
	CHECK(flag && rq == MPI_REQUEST_NULL, "Irecv from MPI_PROC_NULL not complete at once");
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "Irecv status");
	MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(n == 0, "Irecv PROC_NULL count %d", n);
	MPI_OK(MPI_Isend(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Wait(&rq, &st));
	MPI_OK(MPI_Issend(&v, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Wait(&rq, &st));
	MPI_OK(MPI_Probe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Probe(MPI_PROC_NULL) source %d", st.MPI_SOURCE);
	MPI_OK(MPI_Iprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &flag, &st));
	CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL, "Iprobe(MPI_PROC_NULL)");
}

/* The same tag in two communicators never mixes. */
static void test_comm_isolation(int rank)
{
	int a = 100 + rank, b = 200 + rank, x, n, sz;
	MPI_Request r1, r2;
	MPI_Status st;

	MPI_OK(MPI_Comm_size(MPI_COMM_SELF, &sz));
	MPI_OK(MPI_Comm_rank(MPI_COMM_SELF, &n));
	CHECK(sz == 1 && n == 0, "MPI_COMM_SELF: rank %d of %d", n, sz);
	MPI_OK(MPI_Isend(&a, 1, MPI_INT, rank, 4, MPI_COMM_WORLD, &r1));
	MPI_OK(MPI_Isend(&b, 1, MPI_INT, 0, 4, MPI_COMM_SELF, &r2));
	MPI_OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &st));
	CHECK(x == b && st.MPI_SOURCE == 0 && st.MPI_TAG == 4,
	      "MPI_COMM_SELF received %d from %d: a world message leaked in", x, st.MPI_SOURCE);
	MPI_OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st));
	CHECK(x == a && st.MPI_SOURCE == rank, "world self-message: %d from %d", x, st.MPI_SOURCE);
	MPI_OK(MPI_Wait(&r1, MPI_STATUS_IGNORE));
	MPI_OK(MPI_Wait(&r2, MPI_STATUS_IGNORE));
	/* A synchronous send to oneself completes once the receive matches. */
	MPI_OK(MPI_Issend(&a, 1, MPI_INT, 0, 8, MPI_COMM_SELF, &r1));
	MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, 8, MPI_COMM_SELF, MPI_STATUS_IGNORE));
	MPI_OK(MPI_Wait(&r1, MPI_STATUS_IGNORE));
	CHECK(x == a, "Issend to self: %d", x);
	/* Collectives on MPI_COMM_SELF. */
	MPI_OK(MPI_Barrier(MPI_COMM_SELF));
	MPI_OK(MPI_Allreduce(&a, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
	CHECK(x == a, "Allreduce on MPI_COMM_SELF: %d", x);
}

static void test_truncate(int rank, int size)
{
	int right = (rank + 1) % size, left = (rank - 1 + size) % size, n, cls;
	MPI_Status st;
	MPI_Request rq;

	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	for (int pass = 0; pass < 2; pass++) {
		/* 100 bytes into 50, then (rendezvous) 100000 into 5000 */
		size_t len = pass ? 100000 : 100, cap = pass ? 5000 : 50;
		unsigned char *out = malloc(len), *in = malloc(cap + 16);
		int rc;

		CHECK(out && in, "out of memory");
		mt_fill(out, len, rank, 20 + pass);
		memset(in, 0x5a, cap + 16);
		MPI_OK(MPI_Isend(out, (int)len, MPI_BYTE, right, 20 + pass, MPI_COMM_WORLD, &rq));
		st.MPI_ERROR = -77;
		rc = MPI_Recv(in, (int)cap, MPI_BYTE, left, 20 + pass, MPI_COMM_WORLD, &st);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK(cls == MPI_ERR_TRUNCATE, "truncated Recv returned class %d", cls);
		CHECK(st.MPI_ERROR == -77, "single-completion call changed MPI_ERROR");
		CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 20 + pass, "truncated status %d/%d",
		      st.MPI_SOURCE, st.MPI_TAG);
		MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
		CHECK(n == (int)cap, "truncated count %d, expected the %zu bytes received", n, cap);
		CHECK(mt_verify(in, cap, left, 20 + pass) < 0, "truncated data wrong");
		for (int i = 0; i < 16; i++)
			CHECK(in[cap + (size_t)i] == 0x5a, "truncation wrote past the buffer");
		MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));

		/* The same through Irecv + Wait, and through Waitall. */
		MPI_OK(MPI_Isend(out, (int)len, MPI_BYTE, right, 30, MPI_COMM_WORLD, &rq));
		MPI_Request rr;

		MPI_OK(MPI_Irecv(in, (int)cap, MPI_BYTE, left, 30, MPI_COMM_WORLD, &rr));
		rc = MPI_Wait(&rr, &st);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK(cls == MPI_ERR_TRUNCATE && rr == MPI_REQUEST_NULL,
		      "truncated Wait returned class %d", cls);
		MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));

		MPI_Request two[2];
		MPI_Status sts[2];

		MPI_OK(MPI_Irecv(in, (int)cap, MPI_BYTE, left, 31, MPI_COMM_WORLD, &two[0]));
		MPI_OK(MPI_Isend(out, (int)len, MPI_BYTE, right, 31, MPI_COMM_WORLD, &two[1]));
		rc = MPI_Waitall(2, two, sts);
		CHECK(rc == MPI_ERR_IN_STATUS, "Waitall with a truncation returned %d", rc);
		CHECK(sts[0].MPI_ERROR == MPI_ERR_TRUNCATE && sts[1].MPI_ERROR == MPI_SUCCESS,
		      "Waitall statuses %d/%d", sts[0].MPI_ERROR, sts[1].MPI_ERROR);
		CHECK(two[0] == MPI_REQUEST_NULL && two[1] == MPI_REQUEST_NULL,
		      "Waitall left requests");
		free(out);
		free(in);
	}
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void test_cancel(int rank, int size)
{
	int right = (rank + 1) % size, left = (rank - 1 + size) % size, x = -1, flag, v;
	MPI_Request rq;
	MPI_Status st;

	/* A receive nothing will match: cancelled. */
	MPI_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Cancel(&rq));
	MPI_OK(MPI_Wait(&rq, &st));
	MPI_OK(MPI_Test_cancelled(&st, &flag));
	CHECK(flag, "an unmatched receive was not cancelled");
	CHECK(x == -1, "cancelled receive wrote the buffer");

	/* A receive that already completed: not cancelled. */
	v = rank;
	MPI_OK(MPI_Irecv(&x, 1, MPI_INT, left, 78, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Send(&v, 1, MPI_INT, right, 78, MPI_COMM_WORLD));
	do {
		MPI_OK(MPI_Request_get_status(rq, &flag, MPI_STATUS_IGNORE));
	} while (!flag);
	MPI_OK(MPI_Cancel(&rq));
	MPI_OK(MPI_Wait(&rq, &st));
	MPI_OK(MPI_Test_cancelled(&st, &flag));
	CHECK(!flag && x == left, "a completed receive reported cancelled (x=%d)", x);

	/* A send: completes normally, the message is delivered. */
	MPI_OK(MPI_Isend(&v, 1, MPI_INT, right, 79, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Cancel(&rq));
	MPI_OK(MPI_Wait(&rq, &st));
	MPI_OK(MPI_Test_cancelled(&st, &flag));
	if (!flag) {
		MPI_OK(MPI_Recv(&x, 1, MPI_INT, left, 79, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(x == left, "send after failed cancel delivered %d", x);
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
	int rank, size;

	mt_init(&argc, &argv, &rank, &size);
	test_order(rank, size);
	test_tags(rank, size);
	test_probe(rank, size);
	test_sendrecv(rank, size);
	test_proc_null();
	test_comm_isolation(rank);
	test_truncate(rank, size);
	test_cancel(rank, size);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("p2p_match: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
