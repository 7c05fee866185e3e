/*
 * fault_peer — the fault scenarios of the verbs lane's two-node part
 * (tests/rxe/suite.sh, part "faults"): 4 ranks on 2 emulated nodes
 * (ranks 0 1 | 2 3), rank 2 the victim, the others blocked on it while the
 * script strikes from outside (kill -9, SIGSTOP, the link taken down).
 *
 *   fault_peer recv   0, 1: MPI_Recv from 2
 *   fault_peer rndv   0: MPI_Send of 8 MiB to 2 (rendezvous, never matched);
 *                     1: MPI_Recv from 2
 *   fault_peer coll   0, 1: MPI_Allreduce of 1 MiB on {0, 1, 2} (2 never
 *                     joins)
 *   fault_peer rma    window at 2; 0: lock epoch at 2 with puts, small
 *                     gets and flushes; 1: MPI_Win_lock at 2 behind it
 *   fault_peer link   0 <-> 2 and 1 <-> 3: 1 MiB ping-pongs, checked,
 *                     until the link fails (the script takes it down)
 *
 * In the kill scenarios rank 3, the victim's node-mate, waits for a message
 * from rank 1 that never comes: the ranks that see the loss are those
 * across the link, whose report must name the device and QP (rank 3 would
 * see it over shared memory, by pid, and might end the job first).
 *
 * Each rank prints "fault_peer: rank R pid P ready" once it is about to
 * block, so that the script knows whom to strike and when. Reaching the
 * end is always a failure (exit 3): after the strike, the only correct
 * ending is an error (MPI_ERRORS_ARE_FATAL: the job ends with a message
 * naming the peer, device and QP) or the launcher's kill. A wrong payload
 * in "link" exits 4: corruption delivered as success.
 */
#include "mpitest.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define VICTIM 2

static void ready(int rank)
{
	printf("fault_peer: rank %d pid %d ready\n", rank, (int)getpid());
	fflush(stdout);
}

static void victim_wait(void)
{
	ready(VICTIM);
	for (;;)
		pause();
}

/* Rank 3: blocked on rank 1, which never sends. */
static void bystander_wait(void)
{
	int v;

	ready(3);
	MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* The victim and the bystander take their places (false: the scenario
 * is over for this rank); ranks 0 and 1, which block on the victim, say
 * they are about to (true). */
static bool take_places(int rank)
{
	if (rank == VICTIM)
		victim_wait();
	if (rank == 3) {
		bystander_wait();
		return false;
	}
	ready(rank);
	return true;
}

static void scenario_recv(int rank)
{
	int v;

	if (!take_places(rank))
		return;
	MPI_Recv(&v, 1, MPI_INT, VICTIM, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void scenario_rndv(int rank)
{
	static char big[8 << 20];
	int v;

	if (!take_places(rank))
		return;
	if (rank == 0)
		MPI_Send(big, (int)sizeof(big), MPI_BYTE, VICTIM, 0, MPI_COMM_WORLD);
	else
		MPI_Recv(&v, 1, MPI_INT, VICTIM, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void scenario_coll(int rank)
{
	static double in[1 << 17], out[1 << 17];
	MPI_Comm three;

	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 3 ? MPI_UNDEFINED : 0, rank, &three));
	if (!take_places(rank))
		return;
	MPI_Allreduce(in, out, 1 << 17, MPI_DOUBLE, MPI_SUM, three);
}

static void scenario_rma(int rank)
{
	char *base;
	MPI_Win win;

	MPI_OK(MPI_Win_allocate(1 << 20, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == VICTIM)
		victim_wait();
	if (rank == 0) {
		static char buf[1 << 16];
		uint64_t word;

		MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, VICTIM, 0, win));
		ready(rank);
		for (;;) {
			MPI_Put(buf, sizeof(buf), MPI_BYTE, VICTIM, 0, sizeof(buf), MPI_BYTE, win);
			/* and a small get: the bounce-buffer path, straight to its WQE */
			MPI_Get(&word, 8, MPI_BYTE, VICTIM, 1 << 17, 8, MPI_BYTE, win);
			if (MPI_Win_flush(VICTIM, win) != MPI_SUCCESS)
				break;
		}
	} else if (rank == 1) {
		sleep(1); /* behind rank 0's exclusive lock */
		ready(rank);
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, VICTIM, 0, win);
	} else {
		bystander_wait();
	}
}

static void scenario_link(int rank)
{
	enum { N = 1 << 20 };
	static unsigned char buf[N];
	int peer = rank ^ 2; /* 0 <-> 2, 1 <-> 3: across the link */

	ready(rank);
	for (unsigned it = 0;; it++) {
		if (rank < 2) {
			memset(buf, (int)(it & 0xff), N);
			MPI_Send(buf, N, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, N, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, N, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, N, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
		}
		for (int i = 0; i < N; i += 4093)
			if (buf[i] != (unsigned char)(it & 0xff)) {
				fprintf(stderr,
					"fault_peer: rank %d: iteration %u: byte %d is %u\n", rank,
					it, i, buf[i]);
				exit(4);
			}
	}
}

int main(int argc, char **argv)
{
	int rank, size;
	const char *what = argc > 1 ? argv[1] : "";

	mt_init(&argc, &argv, &rank, &size);
	CHECK(size == 4, "needs 4 ranks (2 nodes x 2), not %d", size);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (!strcmp(what, "recv"))
		scenario_recv(rank);
	else if (!strcmp(what, "rndv"))
		scenario_rndv(rank);
	else if (!strcmp(what, "coll"))
		scenario_coll(rank);
	else if (!strcmp(what, "rma"))
		scenario_rma(rank);
	else if (!strcmp(what, "link"))
		scenario_link(rank);
	else
		CHECK(0, "unknown scenario \"%s\" (recv, rndv, coll, rma, link)", what);
	fprintf(stderr, "fault_peer: rank %d: %s returned: no error after the strike\n", rank,
		what);
	return 3;
}
