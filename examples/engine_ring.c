/*
 * engine_ring.c — the engine API without MPI: a token travels around a ring
 * of processes over libibx's tagged messages.
 *
 *   cc -o engine_ring engine_ring.c $(pkg-config --cflags --libs ibx)
 *   mpilite-run -n 4 ./engine_ring [rounds]
 *
 * Each rank receives the token from its left neighbour, adds its rank and
 * passes it on; rank 0 starts every round and checks the sum. Exit status 0
 * when every round arrived with the expected value.
 */
#include <ibx.h>
#include <stdio.h>
#include <stdlib.h>

#define TOKEN_TAG 7

static int check(ibx_status_t st, const char *what)
{
	if (st == IBX_OK || st == IBX_INPROGRESS)
		return 0;
	fprintf(stderr, "engine_ring: %s: %s\n", what, ibx_status_str(st));
	return 1;
}

/* Sends @value to @dest and waits until the buffer may be reused. */
static int send_token(ibx_ctx_t *ctx, int dest, long value)
{
	ibx_request_t rq = {0};
	ibx_status_t st = ibx_tag_send(ctx, dest, &value, sizeof(value), TOKEN_TAG, 0, &rq);

	if (check(st, "send"))
		return 1;
	return check(ibx_wait(ctx, &rq), "send completion");
}

static int recv_token(ibx_ctx_t *ctx, int src, long *value)
{
	ibx_request_t rq = {0};
	ibx_status_t st =
	    ibx_tag_recv(ctx, src, value, sizeof(*value), TOKEN_TAG, IBX_TAG_MASK_ALL, &rq);

	if (check(st, "recv"))
		return 1;
	if (check(ibx_wait(ctx, &rq), "recv completion"))
		return 1;
	if (rq.length != sizeof(*value)) {
		fprintf(stderr, "engine_ring: token of %zu bytes\n", rq.length);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	ibx_ctx_t *ctx;
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	int rank, size, left, right, bad = 0;
	long token, want;

	if (check(ibx_init(NULL, &ctx), "init"))
		return 1;
	rank = ibx_rank(ctx);
	size = ibx_size(ctx);
	left = (rank + size - 1) % size;
	right = (rank + 1) % size;
	want = (long)size * (size - 1) / 2;
	for (int r = 0; r < rounds && !bad; r++) {
		if (rank == 0) {
			bad |= send_token(ctx, right, 0);
			bad |= recv_token(ctx, left, &token);
			if (!bad && token != want) {
				fprintf(stderr, "engine_ring: round %d: %ld, want %ld\n", r, token,
					want);
				bad = 1;
			}
		} else {
			bad |= recv_token(ctx, left, &token);
			bad |= send_token(ctx, right, token + rank);
		}
	}
	if (rank == 0 && !bad)
		printf("engine_ring: %d rounds over %d ranks (path to rank %d: %s)\n", rounds, size,
		       right, ibx_peer_path_name(ctx, right));
	if (check(ibx_finalize(ctx), "finalize"))
		bad = 1;
	return bad;
}
