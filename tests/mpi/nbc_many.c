/* ibx-test: np=1,2,3,4,5,7 timeout=240 */
/*
 * nbc_many — many nonblocking collectives in flight at once: 40 per
 * communicator on MPI_COMM_WORLD, two duplicates of it and an odd/even
 * split, all started before any completes (every kind, every root, small
 * and multi-round sizes). Meanwhile, on the same communicators: user
 * messages with MPI_ANY_SOURCE / MPI_ANY_TAG receives (which must never
 * take a collective's message, nor the collectives a user's), and
 * blocking MPI_Allreduce / MPI_Bcast / MPI_Barrier started after the
 * nonblocking ones (which must not take their messages either). Each
 * rank then completes its requests in its own order — shuffled, by
 * Waitany, Waitsome, Testsome or Testany depending on the rank — and
 * every result is checked against what the rank computes itself. The
 * duplicates and the split are freed before any request completes.
 */
#include "mpitest.h"

static int rank, size;

enum { NSLOT = 40, NCOMM = 4, NUSER = 8 };

enum kind {
	K_BARRIER,
	K_BCAST,
	K_ALLREDUCE,
	K_REDUCE,
	K_SCAN,
	K_EXSCAN,
	K_GATHER,
	K_SCATTER,
	K_ALLGATHER,
	K_ALLTOALL,
	K_RSB,
	K_NKINDS
};

typedef struct slot {
	int kind, root, salt, n;
	MPI_Comm comm;
	int me, p;
	int *in, *out;
} slot_t;

static int val(int who, int i, int salt)
{
	return who * 1000 + i * 3 + salt;
}

static int *ints(size_t n)
{
	int *p = calloc(n + 1, sizeof(int));

	CHECK(p, "out of memory");
	return p;
}

/* Sum over ranks 0..k-1 of val(r, i, salt). */
static int sum_upto(int k, int i, int salt)
{
	return 1000 * k * (k - 1) / 2 + k * (i * 3 + salt);
}

static void start(slot_t *s, MPI_Request *r)
{
	int n = s->n, p = s->p, me = s->me;

	s->in = ints((size_t)n * p);
	s->out = ints((size_t)n * p);
	for (int i = 0; i < n * p; i++)
		s->in[i] = val(me, i, s->salt);
	switch (s->kind) {
	case K_BARRIER: MPI_OK(MPI_Ibarrier(s->comm, r)); break;
	case K_BCAST:
		MPI_OK(MPI_Ibcast(me == s->root ? s->in : s->out, n, MPI_INT, s->root, s->comm, r));
		break;
	case K_ALLREDUCE:
		MPI_OK(MPI_Iallreduce(s->in, s->out, n, MPI_INT, MPI_SUM, s->comm, r));
		break;
	case K_REDUCE:
		MPI_OK(MPI_Ireduce(s->in, s->out, n, MPI_INT, MPI_SUM, s->root, s->comm, r));
		break;
	case K_SCAN: MPI_OK(MPI_Iscan(s->in, s->out, n, MPI_INT, MPI_SUM, s->comm, r)); break;
	case K_EXSCAN: MPI_OK(MPI_Iexscan(s->in, s->out, n, MPI_INT, MPI_SUM, s->comm, r)); break;
	case K_GATHER:
		MPI_OK(MPI_Igather(s->in, n, MPI_INT, s->out, n, MPI_INT, s->root, s->comm, r));
		break;
	case K_SCATTER:
		MPI_OK(MPI_Iscatter(s->in, n, MPI_INT, s->out, n, MPI_INT, s->root, s->comm, r));
		break;
	case K_ALLGATHER:
		MPI_OK(MPI_Iallgather(s->in, n, MPI_INT, s->out, n, MPI_INT, s->comm, r));
		break;
	case K_ALLTOALL:
		MPI_OK(MPI_Ialltoall(s->in, n, MPI_INT, s->out, n, MPI_INT, s->comm, r));
		break;
	default:
		MPI_OK(MPI_Ireduce_scatter_block(s->in, s->out, n, MPI_INT, MPI_SUM, s->comm, r));
		break;
	}
}

static void verify(const slot_t *s)
{
	int n = s->n, p = s->p, me = s->me, salt = s->salt, *o = s->out;

	for (int i = 0; i < n; i++) {
		switch (s->kind) {
		case K_BCAST:
			if (me != s->root)
				CHECK(o[i] == val(s->root, i, salt), "Ibcast slot %d", salt);
			break;
		case K_ALLREDUCE:
			CHECK(o[i] == sum_upto(p, i, salt), "Iallreduce slot %d", salt);
			break;
		case K_REDUCE:
			if (me == s->root)
				CHECK(o[i] == sum_upto(p, i, salt), "Ireduce slot %d", salt);
			break;
		case K_SCAN: CHECK(o[i] == sum_upto(me + 1, i, salt), "Iscan slot %d", salt); break;
		case K_EXSCAN:
			if (me > 0)
				CHECK(o[i] == sum_upto(me, i, salt), "Iexscan slot %d", salt);
			break;
		case K_SCATTER:
			CHECK(o[i] == val(s->root, me * n + i, salt), "Iscatter slot %d", salt);
			break;
		case K_RSB:
			CHECK(o[i] == sum_upto(p, me * n + i, salt),
			      "Ireduce_scatter_block slot %d", salt);
			break;
		default: break;
		}
		for (int j = 0; j < p; j++) {
			if (s->kind == K_GATHER && me == s->root)
				CHECK(o[j * n + i] == val(j, i, salt), "Igather slot %d", salt);
			if (s->kind == K_ALLGATHER)
				CHECK(o[j * n + i] == val(j, i, salt), "Iallgather slot %d", salt);
			if (s->kind == K_ALLTOALL)
				CHECK(o[j * n + i] == val(j, me * n + i, salt), "Ialltoall slot %d",
				      salt);
		}
	}
}

/* User messages around the collectives: NUSER to the right neighbour,
 * received with wildcards. */
static void user_start(MPI_Comm c, int me, int p, int *sbuf, int *rbuf, MPI_Request *r)
{
	for (int k = 0; k < NUSER; k++) {
		sbuf[k] = me * 100 + k;
		MPI_OK(MPI_Isend(&sbuf[k], 1, MPI_INT, (me + 1) % p, k, c, &r[2 * k]));
		MPI_OK(
		    MPI_Irecv(&rbuf[k], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &r[2 * k + 1]));
	}
}

static void user_check(int me, int p, const int *rbuf)
{
	int left = (me - 1 + p) % p;

	for (int k = 0; k < NUSER; k++)
		CHECK(rbuf[k] == left * 100 + k, "user message %d: %d", k, rbuf[k]);
}

/* Completes all @n requests in this rank's way. */
static void complete_all(MPI_Request *r, int n)
{
	int *idx = ints((size_t)n), left = n, out, flag;

	/* shuffle (the same requests, another order on every rank) */
	for (int i = n - 1; i > 0; i--) {
		int j = (i * 7 + rank * 13) % (i + 1);
		MPI_Request t = r[i];

		r[i] = r[j];
		r[j] = t;
	}
	while (left > 0) {
		switch (rank % 4) {
		case 0:
			MPI_OK(MPI_Waitany(n, r, &idx[0], MPI_STATUS_IGNORE));
			CHECK(idx[0] != MPI_UNDEFINED, "Waitany found nothing active");
			left--;
			break;
		case 1:
			MPI_OK(MPI_Waitsome(n, r, &out, idx, MPI_STATUSES_IGNORE));
			CHECK(out > 0, "Waitsome: %d", out);
			left -= out;
			break;
		case 2:
			MPI_OK(MPI_Testsome(n, r, &out, idx, MPI_STATUSES_IGNORE));
			CHECK(out != MPI_UNDEFINED, "Testsome found nothing active");
			left -= out;
			break;
		default:
			MPI_OK(MPI_Testany(n, r, &idx[0], &flag, MPI_STATUS_IGNORE));
			left -= flag && idx[0] != MPI_UNDEFINED;
			break;
		}
	}
	for (int i = 0; i < n; i++)
		CHECK(r[i] == MPI_REQUEST_NULL, "request %d left", i);
	MPI_OK(MPI_Waitany(n, r, &idx[0], MPI_STATUS_IGNORE));
	CHECK(idx[0] == MPI_UNDEFINED, "Waitany on nothing: %d", idx[0]);
	free(idx);
}

/* A blocking collective on @c in the middle of the nonblocking ones. */
static void blocking_between(MPI_Comm c, int me, int p, int salt)
{
	int x = me + salt, sum = 0, b = me == p - 1 ? salt : -1;

	MPI_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c));
	CHECK(sum == p * (p - 1) / 2 + p * salt, "blocking Allreduce among nonblocking ones");
	MPI_OK(MPI_Bcast(&b, 1, MPI_INT, p - 1, c));
	CHECK(b == salt, "blocking Bcast among nonblocking ones");
	MPI_OK(MPI_Barrier(c));
}

int main(int argc, char **argv)
{
	MPI_Comm comms[NCOMM];
	slot_t *slots = calloc(NCOMM * NSLOT, sizeof(*slots));
	int nreq = NCOMM * (NSLOT + 2 * NUSER), k = 0;
	MPI_Request *req = calloc((size_t)nreq, sizeof(*req));
	int usend[NCOMM][NUSER], urecv[NCOMM][NUSER], mes[NCOMM], ps[NCOMM];

	mt_init(&argc, &argv, &rank, &size);
	CHECK(slots && req, "out of memory");
	comms[0] = MPI_COMM_WORLD;
	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[2]));
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &comms[3]));
	for (int c = 0; c < NCOMM; c++) {
		int me, p;

		MPI_OK(MPI_Comm_rank(comms[c], &me));
		MPI_OK(MPI_Comm_size(comms[c], &p));
		mes[c] = me;
		ps[c] = p;
		for (int i = 0; i < NSLOT; i++) {
			slot_t *s = &slots[c * NSLOT + i];

			*s = (slot_t){.kind = (i + c) % K_NKINDS,
				      .root = (i * 3 + c) % p,
				      .salt = c * NSLOT + i,
				      /* every 7th: past the one-round schedules */
				      .n = i % 7 == 6 ? 6000 : 1 + i % 5,
				      .comm = comms[c],
				      .me = me,
				      .p = p};
			start(s, &req[k++]);
			if (i == NSLOT / 2) {
				user_start(comms[c], me, p, usend[c], urecv[c], &req[k]);
				k += 2 * NUSER;
				blocking_between(comms[c], me, p, c);
			}
		}
	}
	CHECK(k == nreq, "%d requests, expected %d", k, nreq);
	/* freed with their collectives running: these finish all the same */
	for (int c = 1; c < NCOMM; c++)
		MPI_OK(MPI_Comm_free(&comms[c]));
	complete_all(req, nreq);
	for (int i = 0; i < NCOMM * NSLOT; i++) {
		verify(&slots[i]);
		free(slots[i].in);
		free(slots[i].out);
	}
	for (int c = 0; c < NCOMM; c++)
		user_check(mes[c], ps[c], urecv[c]);
	free(slots);
	free(req);
	MPI_OK(MPI_Finalize());
	return 0;
}
