/*
 * engine_rma.c — one-sided communication with the engine API, no MPI: rank
 * 0 exposes a counter and a table; every rank takes a ticket with a remote
 * fetch-and-add and writes its rank into the table at its ticket with a
 * remote put. Rank 0 never takes part in the transfers.
 *
 *   cc -o engine_rma engine_rma.c $(pkg-config --cflags --libs ibx)
 *   mpilite-run -n 4 ./engine_rma
 *
 * Exit status 0 when the table holds every rank exactly once.
 */
#include <ibx.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_TAG 1

typedef struct exposed {
	uint64_t addr;
	unsigned char key[IBX_RKEY_PACKED_MAX];
	size_t key_len;
} exposed_t;

static int fail(const char *what, ibx_status_t st)
{
	fprintf(stderr, "engine_rma: %s: %s\n", what, ibx_status_str(st));
	return 1;
}

/* Rank 0: allocate [counter | table of size words], send its key to all. */
static ibx_status_t expose(ibx_ctx_t *ctx, int size, uint64_t **mem_p, ibx_mem_t **h_p)
{
	exposed_t e = {.key_len = sizeof(e.key)};
	void *base;
	ibx_status_t st;

	st = ibx_mem_alloc(ctx, (size_t)(size + 1) * 8, &base, h_p);
	if (st != IBX_OK)
		return st;
	e.addr = (uint64_t)(uintptr_t)base;
	st = ibx_rkey_pack(ctx, *h_p, e.key, &e.key_len);
	for (int r = 1; st == IBX_OK && r < size; r++) {
		ibx_request_t rq = {0};

		st = ibx_tag_send(ctx, r, &e, sizeof(e), KEY_TAG, 0, &rq);
		if (st == IBX_INPROGRESS)
			st = ibx_wait(ctx, &rq);
	}
	*mem_p = base;
	return st;
}

/* Any rank: take a ticket at rank 0 and write our rank at it. */
static ibx_status_t take_ticket(ibx_ctx_t *ctx, int rank, const exposed_t *e)
{
	ibx_rkey_t *rk;
	ibx_request_t rq = {0};
	uint64_t ticket, me = (uint64_t)rank;
	ibx_status_t st;

	st = ibx_rkey_unpack(ctx, 0, e->key, e->key_len, &rk);
	if (st != IBX_OK)
		return st;
	st = ibx_atomic(ctx, IBX_ATOMIC_FADD, 1, 0, &ticket, e->addr, rk, &rq);
	if (st == IBX_INPROGRESS)
		st = ibx_wait(ctx, &rq);
	if (st == IBX_OK)
		st = ibx_put(ctx, &me, 8, e->addr + 8 * (1 + ticket), rk, NULL);
	if (st >= IBX_OK)
		st = ibx_flush(ctx, 0); /* the put is complete and visible at rank 0 */
	ibx_rkey_destroy(ctx, rk);
	return st;
}

int main(void)
{
	ibx_ctx_t *ctx;
	ibx_mem_t *h = NULL;
	uint64_t *mem = NULL;
	exposed_t e;
	int rank, size, bad = 0;
	ibx_status_t st;

	st = ibx_init(NULL, &ctx);
	if (st != IBX_OK)
		return fail("init", st);
	rank = ibx_rank(ctx);
	size = ibx_size(ctx);
	if (rank == 0) {
		st = expose(ctx, size, &mem, &h);
		if (st != IBX_OK)
			return fail("expose", st);
	} else {
		ibx_request_t rq = {0};

		st = ibx_tag_recv(ctx, 0, &e, sizeof(e), KEY_TAG, IBX_TAG_MASK_ALL, &rq);
		if (st == IBX_INPROGRESS)
			st = ibx_wait(ctx, &rq);
		if (st != IBX_OK)
			return fail("receive the key", st);
		st = take_ticket(ctx, rank, &e);
		if (st != IBX_OK)
			return fail("ticket", st);
	}
	st = ibx_boot_barrier(ctx); /* every rank's put has been flushed */
	if (st != IBX_OK)
		return fail("barrier", st);
	if (rank == 0) {
		uint64_t seen = 0;

		printf("arrival order:");
		for (int i = 0; i < size - 1; i++) {
			printf(" %llu", (unsigned long long)mem[1 + i]);
			seen |= 1ull << (mem[1 + i] % 64);
		}
		printf("\n");
		bad = mem[0] != (uint64_t)(size - 1) ||
		      (size <= 64 && seen != (((size < 64 ? 1ull << size : 0) - 1) & ~1ull));
		ibx_mem_unmap(ctx, h);
	}
	st = ibx_finalize(ctx);
	if (st != IBX_OK)
		return fail("finalize", st);
	return bad;
}
