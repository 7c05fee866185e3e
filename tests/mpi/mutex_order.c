/* ibx-test: np=2,3,4,8 timeout=90 launchers=mpilite */
/*
 * mutex_order — the order in which the engine's mutex (ibx_mutex_*, no
 * MPI) passes the lock, under each algorithm on one object each:
 *
 *   rank 0 holds mutex 0; then ranks n-1, n-2, .., 1 queue one after the
 *   other (ibx_mutex_lock_start must say IBX_INPROGRESS; a token message
 *   tells the next rank to queue only once the previous one is queued);
 *   rank 0 unlocks. Every holder takes a ticket (an atomic fetch-add on a
 *   word at rank 0, outside the mutex's own memory) and passes the lock on.
 *
 *   mcs               FIFO: tickets in queueing order, n-1 first
 *   onesided, hybrid  the next waiting rank after the unlocker's, wrapping
 *                     (Ross et al. 2005, fig. 4): 1 first, then 2, ..
 *
 * Also the engine's own misuse statuses (IBX_ERR_BUSY, INVALID_PARAM).
 */
#include <ibx.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_TOKEN 7
#define TAG_KEY	  8
#define TAG_MUTEX 1000

static int rank, size;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL [rank %d] %s:%d: ", rank, __FILE__, __LINE__);       \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			ibx_abort(ctx, 1, "mutex_order failed");                                   \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)
#define OK(call)                                                                                   \
	do {                                                                                       \
		ibx_status_t s_ = (call);                                                          \
		CHECK(s_ == IBX_OK, "%s: %s", #call, ibx_status_str(s_));                          \
	} while (0)

static ibx_ctx_t *ctx;

static void msg_send(int to, int tag, const void *buf, size_t len)
{
	ibx_request_t rq = {.cb = NULL};
	ibx_status_t s = ibx_tag_send(ctx, to, buf, len, (ibx_tag_t)tag, 0, &rq);

	if (s == IBX_INPROGRESS)
		s = ibx_wait(ctx, &rq);
	CHECK(s == IBX_OK, "send to %d: %s", to, ibx_status_str(s));
}

/* A fetch-add on the ticket word at rank 0; over verbs it completes later. */
static uint64_t take_ticket(uint64_t taddr, const ibx_rkey_t *rk)
{
	ibx_request_t rq = {.cb = NULL};
	uint64_t t = 0;
	ibx_status_t s = ibx_atomic(ctx, IBX_ATOMIC_FADD, 1, 0, &t, taddr, rk, &rq);

	if (s == IBX_INPROGRESS)
		s = ibx_wait(ctx, &rq);
	CHECK(s == IBX_OK, "ticket fetch-add: %s", ibx_status_str(s));
	return t;
}

static void msg_recv(int from, int tag, void *buf, size_t len)
{
	ibx_request_t rq = {.cb = NULL};
	ibx_status_t s = ibx_tag_recv(ctx, from, buf, len, (ibx_tag_t)tag, IBX_TAG_MASK_ALL, &rq);

	if (s == IBX_INPROGRESS)
		s = ibx_wait(ctx, &rq);
	CHECK(s == IBX_OK, "receive from %d: %s", from, ibx_status_str(s));
}

static void one_algo(ibx_mutex_algo_t algo, const int *ranks, uint64_t taddr, ibx_rkey_t *rk)
{
	ibx_mutex_params_t p = {.algo = algo};
	ibx_mutex_t *m;
	uint64_t ticket, *tickets = calloc((size_t)size, sizeof(*tickets));
	int tok = 0;

	OK(ibx_mutex_create(ctx, ranks, size, 2, TAG_MUTEX, &p, &m));
	CHECK(ibx_mutex_home(m, 0) == 0 && ibx_mutex_home(m, 1) == 1 % size, "homes");
	CHECK(ibx_mutex_home(m, 2) == -1, "home of a bad index");
	OK(ibx_boot_barrier(ctx));
	if (rank == 0) {
		OK(ibx_mutex_lock(m, 0));
		CHECK(ibx_mutex_lock(m, 0) == IBX_ERR_BUSY, "second lock of a held mutex");
		CHECK(ibx_mutex_lock_wait(m, 1) == IBX_ERR_INVALID_PARAM, "wait without start");
		CHECK(ibx_mutex_unlock(m, 1) == IBX_ERR_INVALID_PARAM, "unlock of a free mutex");
		CHECK(ibx_mutex_lock(m, 2) == IBX_ERR_INVALID_PARAM, "bad index");
		if (size > 1) {
			msg_send(size - 1, TAG_TOKEN, &tok, sizeof(tok));
			msg_recv(1, TAG_TOKEN, &tok, sizeof(tok));
		}
		ticket = take_ticket(taddr, rk);
		OK(ibx_mutex_unlock(m, 0));
	} else {
		ibx_status_t s;

		msg_recv(rank + 1 < size ? rank + 1 : 0, TAG_TOKEN, &tok, sizeof(tok));
		s = ibx_mutex_lock_start(m, 0);
		CHECK(s == IBX_INPROGRESS, "lock_start while rank 0 holds: %s", ibx_status_str(s));
		CHECK(ibx_mutex_lock_start(m, 0) == IBX_ERR_BUSY, "second start while queued");
		msg_send(rank - 1, TAG_TOKEN, &tok, sizeof(tok));
		OK(ibx_mutex_lock_wait(m, 0));
		ticket = take_ticket(taddr, rk);
		OK(ibx_mutex_unlock(m, 0));
	}
	/* rank 0 collects: ticket t went to rank order[t] */
	if (rank == 0) {
		tickets[0] = ticket;
		for (int r = 1; r < size; r++)
			msg_recv(r, TAG_TOKEN, &tickets[r], sizeof(uint64_t));
		for (int r = 0; r < size; r++) {
			uint64_t want;

			if (r == 0)
				want = 0;
			else if (algo == IBX_MUTEX_ALGO_MCS)
				want = (uint64_t)(size - r); /* queued n-1 first */
			else
				want = (uint64_t)r; /* rank order after 0 */
			CHECK(tickets[r] - tickets[0] == want,
			      "%s: rank %d held the mutex as number %llu, expected %llu",
			      ibx_mutex_algo_name(m), r,
			      (unsigned long long)(tickets[r] - tickets[0]),
			      (unsigned long long)want);
		}
		printf("mutex_order: %s passes the lock in the expected order over %d ranks\n",
		       ibx_mutex_algo_name(m), size);
	} else {
		msg_send(0, TAG_TOKEN, &ticket, sizeof(ticket));
	}
	OK(ibx_mutex_free(m));
	free(tickets);
}

int main(void)
{
	unsigned char key[IBX_RKEY_PACKED_MAX];
	size_t klen = sizeof(key);
	uint64_t taddr = 0, *word = NULL;
	ibx_mem_t *mem = NULL;
	ibx_rkey_t *rk;
	int *ranks;

	if (ibx_init(NULL, &ctx) != IBX_OK)
		return 1;
	rank = ibx_rank(ctx);
	size = ibx_size(ctx);
	ranks = malloc((size_t)size * sizeof(*ranks));
	for (int r = 0; r < size; r++)
		ranks[r] = r;
	/* the ticket word at rank 0 */
	if (rank == 0) {
		OK(ibx_mem_alloc(ctx, 64, (void **)&word, &mem));
		OK(ibx_rkey_pack(ctx, mem, key, &klen));
		taddr = (uint64_t)(uintptr_t)word;
		for (int r = 1; r < size; r++) {
			msg_send(r, TAG_KEY, &taddr, sizeof(taddr));
			msg_send(r, TAG_KEY, key, klen);
		}
	} else {
		msg_recv(0, TAG_KEY, &taddr, sizeof(taddr));
		msg_recv(0, TAG_KEY, key, sizeof(key));
		klen = sizeof(key);
	}
	OK(ibx_rkey_unpack(ctx, 0, key, klen, &rk));
	one_algo(IBX_MUTEX_ALGO_MCS, ranks, taddr, rk);
	one_algo(IBX_MUTEX_ALGO_ONESIDED, ranks, taddr, rk);
	one_algo(IBX_MUTEX_ALGO_HYBRID, ranks, taddr, rk);
	OK(ibx_boot_barrier(ctx));
	ibx_rkey_destroy(ctx, rk);
	if (mem)
		OK(ibx_mem_unmap(ctx, mem));
	free(ranks);
	OK(ibx_finalize(ctx));
	return 0;
}
