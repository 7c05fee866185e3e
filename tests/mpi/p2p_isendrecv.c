/* ibx-test: np=1,2,3,4 timeout=120 */
/*
 * p2p_isendrecv — MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0): a
 * ring shift in both directions at sizes from 0 B to 1 MiB (eager and
 * rendezvous, the receive or the send finishing first), with MPI_Wait,
 * MPI_Test loops, MPI_Waitall over several pairs in flight at once and
 * MPI_Request_free; a derived datatype on both sides; the status is the
 * receive's (source, tag, count); MPI_PROC_NULL on either side and both;
 * MPI_ANY_SOURCE / MPI_ANY_TAG; truncation reported as MPI_ERR_TRUNCATE
 * by the wait (the receive's error); argument errors (MPI_ERRORS_RETURN).
 */
#include "mpitest.h"

#include <stdlib.h>
#include <string.h>

static int rank, size;

static const size_t sizes[] = {0, 1, 100, 4096, 65536, 1 << 20};
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))

static void check_status(const MPI_Status *st, int src, int tag, size_t len, MPI_Datatype dt)
{
	int n;

	CHECK(st->MPI_SOURCE == src, "status source %d, expected %d", st->MPI_SOURCE, src);
	CHECK(st->MPI_TAG == tag, "status tag %d, expected %d", st->MPI_TAG, tag);
	MPI_OK(MPI_Get_count(st, dt, &n));
	CHECK((size_t)n == len, "count %d, expected %zu", n, len);
}

/* Each rank sends to right and receives from left (and the other way with
 * @dir = -1), every completion call in turn. */
static void shift(size_t len, int dir, int how)
{
	int right = (rank + dir + size) % size, left = (rank - dir + size) % size;
	unsigned char *out = malloc(len + 1), *in = malloc(len + 1);
	MPI_Request rq;
	MPI_Status st;
	int flag = 0, tag = 10 + how;

	CHECK(out && in, "no memory");
	mt_fill(out, len, rank, how);
	memset(in, 0, len + 1);
	MPI_OK(MPI_Isendrecv(out, (int)len, MPI_BYTE, right, tag, in, (int)len, MPI_BYTE, left, tag,
			     MPI_COMM_WORLD, &rq));
	CHECK(rq != MPI_REQUEST_NULL, "no request");
	if (how == 0) {
		MPI_OK(MPI_Wait(&rq, &st));
	} else if (how == 1) {
		while (!flag)
			MPI_OK(MPI_Test(&rq, &flag, &st));
	} else {
		MPI_OK(MPI_Request_get_status(rq, &flag, &st));
		MPI_OK(MPI_Wait(&rq, &st));
	}
	CHECK(rq == MPI_REQUEST_NULL, "request not freed");
	check_status(&st, left, tag, len, MPI_BYTE);
	CHECK(mt_verify(in, len, left, how) < 0, "len %zu: byte %ld wrong", len,
	      mt_verify(in, len, left, how));
	free(out);
	free(in);
}

/* The same in place: the buffer holds what left sent afterwards. */
static void shift_replace(size_t len)
{
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;
	unsigned char *buf = malloc(len + 1);
	MPI_Request rq;
	MPI_Status st;

	CHECK(buf, "no memory");
	mt_fill(buf, len, rank, 7);
	MPI_OK(
	    MPI_Isendrecv_replace(buf, (int)len, MPI_BYTE, right, 5, left, 5, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Wait(&rq, &st));
	check_status(&st, left, 5, len, MPI_BYTE);
	CHECK(mt_verify(buf, len, left, 7) < 0, "replace len %zu: byte %ld wrong", len,
	      mt_verify(buf, len, left, 7));
	free(buf);
}

/* Several pairs in flight at once, completed by MPI_Waitall in reverse
 * order of their start; the first one freed instead of waited for (its
 * buffers stay until after MPI_Finalize, which completes it). */
static unsigned char *freed_out, *freed_in;

static void many_in_flight(void)
{
	enum { K = 6 };
	const size_t len = 200000; /* rendezvous */
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;
	unsigned char *out = malloc(K * len), *in = calloc(K, len);
	MPI_Request rq[K], rev[K];
	MPI_Status st[K];

	CHECK(out && in, "no memory");
	for (int k = 0; k < K; k++) {
		mt_fill(out + k * len, len, rank, 20 + k);
		MPI_OK(MPI_Isendrecv(out + k * len, (int)len, MPI_BYTE, right, 20 + k, in + k * len,
				     (int)len, MPI_BYTE, left, 20 + k, MPI_COMM_WORLD, &rq[k]));
	}
	for (int k = 0; k < K; k++)
		rev[k] = rq[K - 1 - k];
	MPI_OK(MPI_Request_free(&rev[K - 1])); /* the first started */
	CHECK(rev[K - 1] == MPI_REQUEST_NULL, "freed request not set to MPI_REQUEST_NULL");
	MPI_OK(MPI_Waitall(K - 1, rev, st));
	for (int k = 0; k < K - 1; k++) {
		int pk = K - 1 - k;

		check_status(&st[k], left, 20 + pk, len, MPI_BYTE);
		CHECK(mt_verify(in + pk * len, len, left, 20 + pk) < 0, "pair %d: byte %ld wrong",
		      pk, mt_verify(in + pk * len, len, left, 20 + pk));
	}
	freed_out = out;
	freed_in = in;
}

/* A vector type on the send side, contiguous ints on the receive side. */
static void derived(void)
{
	enum { N = 1000 };
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;
	int *out = malloc(2 * N * sizeof(int)), *in = malloc(N * sizeof(int));
	MPI_Datatype vec;
	MPI_Request rq;
	MPI_Status st;

	CHECK(out && in, "no memory");
	for (int i = 0; i < 2 * N; i++)
		out[i] = i % 2 ? -1 : rank * 100000 + i / 2;
	MPI_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
	MPI_OK(MPI_Type_commit(&vec));
	MPI_OK(MPI_Isendrecv(out, 1, vec, right, 3, in, N, MPI_INT, left, 3, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Type_free(&vec)); /* the pair keeps what it needs */
	MPI_OK(MPI_Wait(&rq, &st));
	check_status(&st, left, 3, N, MPI_INT);
	for (int i = 0; i < N; i++)
		CHECK(in[i] == left * 100000 + i, "derived: element %d is %d", i, in[i]);
	/* replace with the vector type: the strided slots receive, the gaps stay */
	MPI_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
	MPI_OK(MPI_Type_commit(&vec));
	MPI_OK(MPI_Isendrecv_replace(out, 1, vec, right, 4, left, 4, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Wait(&rq, &st));
	for (int i = 0; i < 2 * N; i++)
		CHECK(out[i] == (i % 2 ? -1 : left * 100000 + i / 2), "replace vector: [%d] = %d",
		      i, out[i]);
	MPI_OK(MPI_Type_free(&vec));
	free(out);
	free(in);
}

/* MPI_PROC_NULL on either side, both, and wildcards. */
static void corners(void)
{
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;
	int x = rank, y = -7;
	MPI_Request rq;
	MPI_Status st;
	int n;

	MPI_OK(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, &y, 1, MPI_INT, MPI_PROC_NULL, 1,
			     MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Wait(&rq, &st));
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "proc null status %d/%d",
	      st.MPI_SOURCE, st.MPI_TAG);
	MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(n == 0 && y == -7, "proc null: count %d, y %d", n, y);
	/* send to nobody, receive from left (which sends to nobody too: a
	 * second exchange feeds it) */
	MPI_OK(MPI_Isendrecv(&x, 1, MPI_INT, right, 2, &y, 1, MPI_INT, MPI_PROC_NULL, 2,
			     MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Wait(&rq, &st));
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "receive from MPI_PROC_NULL: source %d",
	      st.MPI_SOURCE);
	MPI_OK(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 2, &y, 1, MPI_INT, MPI_ANY_SOURCE,
			     MPI_ANY_TAG, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Wait(&rq, &st));
	CHECK(y == left && st.MPI_SOURCE == left && st.MPI_TAG == 2, "wildcards: %d from %d/%d", y,
	      st.MPI_SOURCE, st.MPI_TAG);
	MPI_OK(MPI_Isendrecv_replace(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_PROC_NULL, 0,
				     MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	CHECK(x == rank, "replace with MPI_PROC_NULL changed the buffer: %d", x);
}

/* A receive buffer too small: the wait reports the truncation. */
static void truncation(void)
{
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;
	int out[4] = {1, 2, 3, 4}, in[4] = {0};
	MPI_Request rq;
	MPI_Status st;
	int err, cls;

	MPI_OK(
	    MPI_Isendrecv(out, 4, MPI_INT, right, 9, in, 2, MPI_INT, left, 9, MPI_COMM_WORLD, &rq));
	err = MPI_Wait(&rq, &st);
	MPI_Error_class(err, &cls);
	CHECK(cls == MPI_ERR_TRUNCATE, "truncated receive: class %d", cls);
	CHECK(rq == MPI_REQUEST_NULL, "request not freed after the error");
}

static void errors(void)
{
	int x = 0, y = 0;
	MPI_Request rq;

	MPI_FAILS(MPI_ERR_RANK, MPI_Isendrecv(&x, 1, MPI_INT, size, 0, &y, 1, MPI_INT, 0, 0,
					      MPI_COMM_WORLD, &rq));
	MPI_FAILS(MPI_ERR_RANK,
		  MPI_Isendrecv(&x, 1, MPI_INT, 0, 0, &y, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, &rq));
	MPI_FAILS(MPI_ERR_TAG,
		  MPI_Isendrecv(&x, 1, MPI_INT, 0, -3, &y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq));
	MPI_FAILS(MPI_ERR_TAG,
		  MPI_Isendrecv(&x, 1, MPI_INT, 0, 0, &y, 1, MPI_INT, 0, -3, MPI_COMM_WORLD, &rq));
	MPI_FAILS(MPI_ERR_COUNT,
		  MPI_Isendrecv(&x, -1, MPI_INT, 0, 0, &y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq));
	MPI_FAILS(MPI_ERR_COUNT,
		  MPI_Isendrecv(&x, 1, MPI_INT, 0, 0, &y, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Isendrecv(&x, 1, MPI_DATATYPE_NULL, 0, 0, &y, 1, MPI_INT, 0, 0,
					      MPI_COMM_WORLD, &rq));
	MPI_FAILS(MPI_ERR_COMM,
		  MPI_Isendrecv(&x, 1, MPI_INT, 0, 0, &y, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &rq));
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Isendrecv(&x, 1, MPI_INT, 0, 0, &y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL));
	MPI_FAILS(MPI_ERR_TAG,
		  MPI_Isendrecv_replace(&x, 1, MPI_INT, 0, MPI_ANY_TAG, 0, 0, MPI_COMM_WORLD, &rq));
	MPI_FAILS(MPI_ERR_RANK,
		  MPI_Isendrecv_replace(&x, 1, MPI_INT, 0, 0, size, 0, MPI_COMM_WORLD, &rq));
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Isendrecv_replace(&x, 1, MPI_INT, 0, 0, 0, 0, MPI_COMM_WORLD, NULL));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	for (int i = 0; i < NSIZES; i++)
		for (int how = 0; how < 3; how++) {
			shift(sizes[i], 1, how);
			shift(sizes[i], -1, how);
		}
	for (int i = 0; i < NSIZES; i++)
		shift_replace(sizes[i]);
	many_in_flight();
	derived();
	corners();
	truncation();
	errors();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("p2p_isendrecv: ok (%d ranks)\n", size);
	MPI_OK(MPI_Finalize());
	free(freed_out);
	free(freed_in);
	return 0;
}
