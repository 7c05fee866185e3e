/* ibx-test: np=1,2,3,4,5,7 timeout=180 */
/*
 * nbc_progress — nonblocking collectives move on in the background of
 * any MPI call, not only when their own request is waited for or tested.
 * The results are watched in the receive buffers (reading a buffer of an
 * active operation is not allowed by MPI, but shows here whether the
 * schedule has reached its last round), and each request is completed
 * only afterwards:
 *
 *   1. Ibcast (256 KiB, pipelined down the tree), Iallreduce, Iallgather
 *      and Ialltoall, while every rank only calls MPI_Iprobe;
 *   2. Iscan, Ireduce and Igather, while every rank only calls MPI_Test on
 *      an unrelated receive (from itself, sent afterwards);
 *   3. an Ibcast of 1 MiB from rank 0, which inner ranks of the tree must
 *      forward, while ranks only wait in blocking point-to-point: rank 0
 *      answers pings in MPI_Recv / MPI_Send; the others ping it with a
 *      blocking MPI_Sendrecv until their data is in, then report and wait
 *      in MPI_Recv for the release that rank 0 sends once all have
 *      reported (segments a rank still has to forward go out meanwhile);
 *   4. an Iallreduce whose request was freed at once (MPI_Request_free)
 *      still delivers, and an Ibarrier freed just before MPI_Finalize ends
 *      inside it.
 */
#include "mpitest.h"

#include <stdbool.h>

static int rank, size;

#define LIMIT_S 120.0 /* far beyond any run: a stuck schedule, not a slow one */

enum { N_RED = 1000, N_AG = 300, BC1 = 256 * 1024, BC3 = 1 << 20 };

static unsigned char *bc1, *bc3;
static int *red, *ag, *a2a, *scan, *reduce, *gat, *freed;

static bool bcast_done(const unsigned char *b, size_t len, int salt)
{
	return mt_verify(b, len, 0, salt) < 0;
}

static bool allreduce_done(const int *b)
{
	for (int i = 0; i < N_RED; i++)
		if (b[i] != size * (size - 1) / 2 + size * i)
			return false;
	return true;
}

static bool phase1_done(void)
{
	if (!bcast_done(bc1, BC1, 1) || !allreduce_done(red))
		return false;
	for (int r = 0; r < size; r++)
		for (int i = 0; i < N_AG; i++)
			if (ag[r * N_AG + i] != r * 1000 + i)
				return false;
	for (int r = 0; r < size; r++)
		if (a2a[r] != r * 100 + rank)
			return false;
	return true;
}

static bool phase2_done(void)
{
	for (int i = 0; i < N_RED; i++)
		if (scan[i] != rank * (rank + 1) / 2 + (rank + 1) * i)
			return false;
	if (rank == size - 1) {
		if (!allreduce_done(reduce))
			return false;
		for (int r = 0; r < size; r++)
			if (gat[r] != r + 7)
				return false;
	}
	return true;
}

/* Calls @poll until @done says so (LIMIT_S at most). */
static void spin(bool (*done)(void), void (*poll)(void *), void *arg, const char *what)
{
	double t0 = MPI_Wtime();

	for (unsigned n = 0;; n++) {
		poll(arg);
		if (n % 64 == 0 && done())
			return;
		CHECK(MPI_Wtime() - t0 < LIMIT_S, "%s: no progress in %.0f s", what, LIMIT_S);
	}
}

static void poll_iprobe(void *arg)
{
	int flag;

	MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
	CHECK(!flag, "a message nobody sent");
}

static void poll_test(void *arg)
{
	int flag;

	MPI_OK(MPI_Test(arg, &flag, MPI_STATUS_IGNORE));
	CHECK(!flag, "the unrelated receive completed early");
}

static void phase1(void)
{
	int *sa = malloc(sizeof(int) * size), mine[N_AG];
	MPI_Request rq[4];

	CHECK(sa, "out of memory");
	if (rank == 0)
		mt_fill(bc1, BC1, 0, 1);
	for (int i = 0; i < N_RED; i++)
		red[i] = rank + i;
	for (int i = 0; i < N_AG; i++)
		mine[i] = rank * 1000 + i;
	for (int r = 0; r < size; r++)
		sa[r] = rank * 100 + r;
	MPI_OK(MPI_Ibcast(bc1, BC1, MPI_BYTE, 0, MPI_COMM_WORLD, &rq[0]));
	MPI_OK(MPI_Iallreduce(MPI_IN_PLACE, red, N_RED, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[1]));
	MPI_OK(MPI_Iallgather(mine, N_AG, MPI_INT, ag, N_AG, MPI_INT, MPI_COMM_WORLD, &rq[2]));
	MPI_OK(MPI_Ialltoall(sa, 1, MPI_INT, a2a, 1, MPI_INT, MPI_COMM_WORLD, &rq[3]));
	spin(phase1_done, poll_iprobe, NULL, "Ibcast/Iallreduce/Iallgather/Ialltoall under Iprobe");
	MPI_OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
	CHECK(phase1_done(), "results changed after completion");
	free(sa);
}

static void phase2(void)
{
	int in[N_RED], g = rank + 7, token = rank, got = -1;
	MPI_Request rq[3], unrelated;

	for (int i = 0; i < N_RED; i++)
		in[i] = rank + i;
	MPI_OK(MPI_Irecv(&got, 1, MPI_INT, 0, 98, MPI_COMM_SELF, &unrelated));
	MPI_OK(MPI_Iscan(in, scan, N_RED, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]));
	MPI_OK(MPI_Ireduce(in, reduce, N_RED, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD, &rq[1]));
	MPI_OK(MPI_Igather(&g, 1, MPI_INT, gat, 1, MPI_INT, size - 1, MPI_COMM_WORLD, &rq[2]));
	spin(phase2_done, poll_test, &unrelated, "Iscan/Ireduce/Igather under MPI_Test");
	MPI_OK(MPI_Send(&token, 1, MPI_INT, 0, 98, MPI_COMM_SELF));
	MPI_OK(MPI_Wait(&unrelated, MPI_STATUS_IGNORE));
	CHECK(got == rank, "token %d", got);
	MPI_OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
	CHECK(phase2_done(), "results changed after completion");
}

static bool phase3_mine(void)
{
	return bcast_done(bc3, BC3, 3);
}

enum { PING = 1, DONE = 2, TAG_IN = 94, TAG_PONG = 95, TAG_RELEASE = 96 };

/* Rank 0 answers pings until every other rank is done, then releases them. */
static void phase3_server(void)
{
	int msg, done = 0;
	MPI_Status st;

	while (done < size - 1) {
		MPI_OK(MPI_Recv(&msg, 1, MPI_INT, MPI_ANY_SOURCE, TAG_IN, MPI_COMM_WORLD, &st));
		if (msg == DONE)
			done++;
		else
			MPI_OK(MPI_Send(&msg, 1, MPI_INT, st.MPI_SOURCE, TAG_PONG, MPI_COMM_WORLD));
	}
	for (int r = 1; r < size; r++)
		MPI_OK(MPI_Send(&msg, 1, MPI_INT, r, TAG_RELEASE, MPI_COMM_WORLD));
}

/* The others ping rank 0 (a blocking Sendrecv that waits for the answer)
 * until their data is in, say so, and wait in MPI_Recv for the release,
 * forwarding what their children still need meanwhile. */
static void phase3_client(void)
{
	double t0 = MPI_Wtime();
	int msg = PING, pong;

	while (!phase3_mine()) {
		MPI_OK(MPI_Sendrecv(&msg, 1, MPI_INT, 0, TAG_IN, &pong, 1, MPI_INT, 0, TAG_PONG,
				    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(MPI_Wtime() - t0 < LIMIT_S,
		      "Ibcast under blocking point-to-point: no "
		      "progress in %.0f s",
		      LIMIT_S);
	}
	msg = DONE;
	MPI_OK(MPI_Send(&msg, 1, MPI_INT, 0, TAG_IN, MPI_COMM_WORLD));
	MPI_OK(MPI_Recv(&msg, 1, MPI_INT, 0, TAG_RELEASE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

static void phase3(void)
{
	MPI_Request rq;

	if (rank == 0)
		mt_fill(bc3, BC3, 0, 3);
	else
		memset(bc3, 0, BC3);
	MPI_OK(MPI_Ibcast(bc3, BC3, MPI_BYTE, 0, MPI_COMM_WORLD, &rq));
	if (rank == 0)
		phase3_server();
	else
		phase3_client();
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	CHECK(phase3_mine(), "Ibcast 1 MiB: wrong data");
}

static bool phase4_done(void)
{
	return allreduce_done(freed);
}

static void phase4(void)
{
	MPI_Request rq;
	int in[N_RED];

	for (int i = 0; i < N_RED; i++)
		in[i] = rank + i;
	MPI_OK(MPI_Iallreduce(in, freed, N_RED, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Request_free(&rq));
	CHECK(rq == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
	spin(phase4_done, poll_iprobe, NULL, "a freed Iallreduce under Iprobe");
	/* the others may still need our part: a barrier before the buffers go */
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq));
	MPI_OK(MPI_Request_free(&rq));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	bc1 = malloc(BC1);
	bc3 = malloc(BC3);
	red = malloc(sizeof(int) * N_RED);
	ag = malloc(sizeof(int) * N_AG * size);
	a2a = malloc(sizeof(int) * size);
	scan = malloc(sizeof(int) * N_RED);
	reduce = malloc(sizeof(int) * N_RED);
	gat = malloc(sizeof(int) * size);
	freed = malloc(sizeof(int) * N_RED);
	CHECK(bc1 && bc3 && red && ag && a2a && scan && reduce && gat && freed, "out of memory");
	phase1();
	phase2();
	phase3();
	phase4();
	MPI_OK(MPI_Finalize()); /* ends the freed Ibarrier first */
	free(bc1);
	free(bc3);
	free(red);
	free(ag);
	free(a2a);
	free(scan);
	free(reduce);
	free(gat);
	free(freed);
	return 0;
}
