/* ibx-test: np=1,2,3,4 timeout=120 */
/*
 * p2p_bsend — buffered mode: a buffer sized by the standard's formula
 * (MPI_Pack_size + MPI_BSEND_OVERHEAD per message) holds that many
 * messages; the circular allocation reclaims space as sends complete
 * (messages of varied sizes, two unreceived at a time, through a buffer
 * for four: blocks wrap around); MPI_Ibsend
 * and MPI_Bsend_init complete at once; 1 MiB (rendezvous) and derived-type
 * messages; MPI_Buffer_detach returns the buffer only once its messages
 * have left (the buffer is scribbled over right after, the receivers check
 * their data); the errors: no buffer, too small a buffer (MPI_ERR_BUFFER,
 * also at MPI_Start), attaching twice, bad arguments.
 */
#include "mpitest.h"

#define BIG (1 << 20)

static int rank, size, left, right;

static int pack_size(int count, MPI_Datatype dt)
{
	int n;

	MPI_OK(MPI_Pack_size(count, dt, MPI_COMM_WORLD, &n));
	return n;
}

static void detach_expect(void *buf, int bsize)
{
	void *det;
	int dsize;

	MPI_OK(MPI_Buffer_detach(&det, &dsize));
	CHECK(det == buf && dsize == bsize, "detach returned %p/%d, attached %p/%d", det, dsize,
	      buf, bsize);
}

/* A buffer for exactly N messages takes N messages, even unreceived. */
static void test_exact_fit(void)
{
	enum { N = 10, LEN = 300 };
	int bsize = N * (pack_size(LEN, MPI_INT) + MPI_BSEND_OVERHEAD);
	char *bbuf = malloc((size_t)bsize + 1);
	int out[N][LEN], in[LEN];

	CHECK(bbuf, "out of memory");
	/* an odd address: alignment comes out of the overhead too */
	MPI_OK(MPI_Buffer_attach(bbuf + 1, bsize));
	for (int i = 0; i < N; i++) {
		for (int j = 0; j < LEN; j++)
			out[i][j] = rank * 1000000 + i * 1000 + j;
		MPI_OK(MPI_Bsend(out[i], LEN, MPI_INT, right, 10 + i, MPI_COMM_WORLD));
	}
	/* the user's copies may change at once */
	memset(out, 0, sizeof(out));
	for (int i = N - 1; i >= 0; i--) {
		MPI_OK(MPI_Recv(in, LEN, MPI_INT, left, 10 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int j = 0; j < LEN; j++)
			CHECK(in[j] == left * 1000000 + i * 1000 + j, "message %d [%d] = %d", i, j,
			      in[j]);
	}
	detach_expect(bbuf + 1, bsize);
	free(bbuf);
}

/* A buffered send that waits for room (MPI_ERRORS_RETURN): the receivers
 * make progress, so room comes. */
static void bsend_when_room(const void *buf, int len, int dest, int tag)
{
	int rc, cls, flag;

	while ((rc = MPI_Bsend(buf, len, MPI_CHAR, dest, tag, MPI_COMM_WORLD)) != MPI_SUCCESS) {
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_BUFFER, "Bsend failed with class %d", cls);
		MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 9999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
	}
}

/* Many messages of varied sizes, eager and rendezvous, through a buffer
 * for four of the largest, two of them still unreceived at each send:
 * space is reclaimed as the sends complete and blocks wrap around. */
static void test_wrap(void)
{
	enum { ROUNDS = 120, MAXLEN = 120000 };
	int bsize = 4 * (MAXLEN + MPI_BSEND_OVERHEAD), cnt;
	char *bbuf = malloc((size_t)bsize), *out = malloc(MAXLEN), *in = malloc(MAXLEN);
	MPI_Status st;

	CHECK(bbuf && out && in, "out of memory");
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Buffer_attach(bbuf, bsize));
	for (int k = 0; k <= ROUNDS; k++) {
		int len = (k * 7919) % MAXLEN + 1, prev = ((k - 1) * 7919) % MAXLEN + 1;

		if (k < ROUNDS) {
			mt_fill(out, (size_t)len, rank, k);
			bsend_when_room(out, len, right, 20);
		}
		if (k == 0)
			continue;
		MPI_OK(MPI_Recv(in, MAXLEN, MPI_CHAR, left, 20, MPI_COMM_WORLD, &st));
		MPI_OK(MPI_Get_count(&st, MPI_CHAR, &cnt));
		CHECK(cnt == prev && mt_verify(in, (size_t)prev, left, k - 1) < 0,
		      "message %d: %d bytes, expected %d, or corrupt", k - 1, cnt, prev);
	}
	detach_expect(bbuf, bsize);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	free(bbuf);
	free(out);
	free(in);
}

/* The three places a block can go, in order: after the newest block, at
 * the start of the buffer (wrapping), and in the gap between a wrapped
 * newest block and the oldest. Each receiver acknowledges a message, so
 * the sender knows which blocks are free (rendezvous messages: a block
 * stays in use until its message is read). Buffer: three blocks. */
static void test_gap(void)
{
	enum { L = 60000, NSEND = 8 };
	int bsize = 3 * (L + MPI_BSEND_OVERHEAD), ack = 0;
	char *bbuf = malloc((size_t)bsize), *out = malloc(L), *in = malloc(L);

	CHECK(bbuf && out && in, "out of memory");
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Buffer_attach(bbuf, bsize));
	for (int k = 0; k < 3; k++) { /* fills the buffer: A B C */
		mt_fill(out, L, rank, 60 + k);
		bsend_when_room(out, L, right, 60);
	}
	for (int k = 0; k < NSEND; k++) {
		MPI_OK(MPI_Recv(in, L, MPI_CHAR, left, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(mt_verify(in, L, left, 60 + k) < 0, "gap test: message %d corrupt", k);
		MPI_OK(MPI_Send(&k, 1, MPI_INT, left, 61, MPI_COMM_WORLD));
		MPI_OK(MPI_Recv(&ack, 1, MPI_INT, right, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(ack == k, "ack %d, expected %d", ack, k);
		if (k + 3 < NSEND) { /* D wraps to the start, E goes into the gap... */
			mt_fill(out, L, rank, 60 + k + 3);
			bsend_when_room(out, L, right, 60);
		}
	}
	detach_expect(bbuf, bsize);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	free(bbuf);
	free(out);
	free(in);
}

/* MPI_Ibsend and MPI_Bsend_init: complete at once; a derived type. */
static void test_ibsend_persistent(void)
{
	enum { N = 32, ROUNDS = 40 };
	MPI_Datatype vec;
	int out[2 * N], in[2 * N], flag;
	MPI_Request rq, pq;
	int bsize;
	char *bbuf;

	MPI_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
	MPI_OK(MPI_Type_commit(&vec));
	bsize = 3 * (pack_size(1, vec) + MPI_BSEND_OVERHEAD);
	bbuf = malloc((size_t)bsize);
	CHECK(bbuf, "out of memory");
	MPI_OK(MPI_Buffer_attach(bbuf, bsize));
	MPI_OK(MPI_Bsend_init(out, 1, vec, right, 31, MPI_COMM_WORLD, &pq));
	for (int k = 0; k < ROUNDS; k++) {
		for (int i = 0; i < 2 * N; i++) {
			out[i] = rank * 100000 + k * 100 + i;
			in[i] = -7;
		}
		if (k % 2) {
			MPI_OK(MPI_Ibsend(out, 1, vec, right, 31, MPI_COMM_WORLD, &rq));
			MPI_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
			CHECK(flag && rq == MPI_REQUEST_NULL, "Ibsend not complete at once");
		} else {
			MPI_OK(MPI_Start(&pq));
			MPI_OK(MPI_Test(&pq, &flag, MPI_STATUS_IGNORE));
			CHECK(flag && pq != MPI_REQUEST_NULL, "Bsend_init start not complete");
		}
		memset(out, 0, sizeof(out)); /* copied already */
		MPI_OK(MPI_Recv(in, 1, vec, left, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int i = 0; i < 2 * N; i++) {
			int want = i % 2 ? -7 : left * 100000 + k * 100 + i;

			CHECK(in[i] == want, "round %d: in[%d] = %d, expected %d", k, i, in[i],
			      want);
		}
	}
	MPI_OK(MPI_Request_free(&pq));
	MPI_OK(MPI_Type_free(&vec));
	detach_expect(bbuf, bsize);
	free(bbuf);
}

/* A 1 MiB buffered message (rendezvous from the attached buffer): detach
 * waits until it has left; the buffer is scribbled over and freed right
 * after, and the receiver still gets the message intact. */
static void test_detach_waits(void)
{
	int bsize = BIG + MPI_BSEND_OVERHEAD;
	char *bbuf = malloc((size_t)bsize), *out = malloc(BIG), *in = malloc(BIG);
	MPI_Request rq;
	int dsize_dummy;

	CHECK(bbuf && out && in, "out of memory");
	for (int round = 0; round < 3; round++) {
		MPI_OK(MPI_Irecv(in, BIG, MPI_BYTE, left, 40, MPI_COMM_WORLD, &rq));
		MPI_OK(MPI_Buffer_attach(bbuf, bsize));
		mt_fill(out, BIG, rank, 40 + round);
		MPI_OK(MPI_Bsend(out, BIG, MPI_BYTE, right, 40, MPI_COMM_WORLD));
		memset(out, 0, BIG);
		detach_expect(bbuf, bsize);
		memset(bbuf, 0xee, (size_t)bsize);
		MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
		CHECK(mt_verify(in, BIG, left, 40 + round) < 0, "round %d: 1 MiB message corrupt",
		      round);
	}
	free(bbuf);
	free(out);
	free(in);
	/* detach without a buffer: NULL and 0 */
	void *det = &dsize_dummy;
	int dsize = -1;

	MPI_OK(MPI_Buffer_detach(&det, &dsize));
	CHECK(det == NULL && dsize == 0, "detach with nothing attached: %p/%d", det, dsize);
}

static void test_errors(void)
{
	int x[1000] = {0}, flag;
	int small = (int)sizeof(x[0]) * 10 + MPI_BSEND_OVERHEAD;
	char *bbuf = malloc((size_t)small), *other = malloc(64);
	MPI_Request rq;

	CHECK(bbuf && other, "out of memory");
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Bsend(x, 1, MPI_INT, right, 50, MPI_COMM_WORLD));
	MPI_FAILS(MPI_ERR_ARG, MPI_Buffer_attach(bbuf, -1));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Buffer_attach(NULL, 100));
	MPI_OK(MPI_Buffer_attach(bbuf, small));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Buffer_attach(other, 64));
	/* too big for the buffer, in every form */
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Bsend(x, 1000, MPI_INT, right, 50, MPI_COMM_WORLD));
	rq = MPI_REQUEST_NULL;
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Ibsend(x, 100, MPI_INT, right, 50, MPI_COMM_WORLD, &rq));
	CHECK(rq == MPI_REQUEST_NULL, "a failed Ibsend set the request");
	MPI_OK(MPI_Bsend_init(x, 500, MPI_INT, right, 50, MPI_COMM_WORLD, &rq));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Start(&rq));
	MPI_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE)); /* still inactive */
	CHECK(flag && rq != MPI_REQUEST_NULL, "failed Start left the request active");
	MPI_OK(MPI_Request_free(&rq));
	/* what fits still goes, and a second one does not fit beside it
	 * until it has been sent */
	x[0] = rank;
	MPI_OK(MPI_Bsend(x, 10, MPI_INT, right, 51, MPI_COMM_WORLD));
	MPI_OK(MPI_Recv(x, 10, MPI_INT, left, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	CHECK(x[0] == left, "small buffered message: %d", x[0]);
	/* argument checks */
	MPI_FAILS(MPI_ERR_COUNT, MPI_Bsend(x, -1, MPI_INT, right, 50, MPI_COMM_WORLD));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Bsend(x, 1, MPI_DATATYPE_NULL, right, 50, MPI_COMM_WORLD));
	MPI_FAILS(MPI_ERR_RANK, MPI_Bsend(x, 1, MPI_INT, size, 50, MPI_COMM_WORLD));
	MPI_FAILS(MPI_ERR_TAG, MPI_Bsend(x, 1, MPI_INT, right, -3, MPI_COMM_WORLD));
	MPI_FAILS(MPI_ERR_COMM, MPI_Bsend(x, 1, MPI_INT, right, 50, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Bsend(NULL, 1, MPI_INT, right, 50, MPI_COMM_WORLD));
	MPI_FAILS(MPI_ERR_ARG, MPI_Ibsend(x, 1, MPI_INT, right, 50, MPI_COMM_WORLD, NULL));
	MPI_FAILS(MPI_ERR_ARG, MPI_Buffer_detach(NULL, &flag));
	/* MPI_PROC_NULL needs no space */
	MPI_OK(MPI_Bsend(x, 1000, MPI_INT, MPI_PROC_NULL, 50, MPI_COMM_WORLD));
	detach_expect(bbuf, small);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	free(bbuf);
	free(other);
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	left = (rank - 1 + size) % size;
	right = (rank + 1) % size;
	test_exact_fit();
	test_wrap();
	test_gap();
	test_ibsend_persistent();
	test_detach_waits();
	test_errors();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("p2p_bsend: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
