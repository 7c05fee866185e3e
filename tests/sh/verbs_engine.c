/*
 * verbs_engine.c — the verbs path under a many-to-one burst (run with
 * IBX_PATHS=verbs by tests/sh/verbs_engine.sh, on a real verbs device).
 *
 *   verbs_engine [COUNT]      burst mode (default 100000)
 *   verbs_engine ops          the path's ops table, rendezvous truncation,
 *                             and a completion error (see ops_mode)
 *
 * Every rank but 0 sends COUNT messages to rank 0 as fast as the engine
 * takes them: mostly 8-byte ones (inline), every 7th of 200 bytes (bounce
 * buffer), every 1000th of 64 KiB (rendezvous), every 997th with
 * IBX_SEND_SYNC. Rank 0 keeps a window of receives posted from
 * IBX_ANY_SOURCE with any tag (the rest land in the unexpected queue) and
 * checks, per sender: the sequence numbers arrive in order, none missing,
 * none duplicated, tag and length are the sender's, every byte is right.
 * Then every rank but 0 receives one reply that carries the count rank 0
 * saw from it. Any mismatch or error status exits non-zero.
 */
#include "ibx_int.h"
#include "qp/qp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define BIG    (64 * 1024)

static size_t msg_len(uint64_t seq)
{
	if (seq % 1000 == 999)
		return BIG;
	if (seq % 7 == 3)
		return 200;
	return 8;
}

static unsigned char pattern(int src, uint64_t seq, size_t i)
{
	return (unsigned char)(src * 37 + seq * 11 + i * 3 + (i >> 7));
}

static void fill(unsigned char *b, int src, uint64_t seq, size_t len)
{
	uint64_t word = ((uint64_t)src << 48) | seq;

	memcpy(b, &word, 8);
	for (size_t i = 8; i < len; i++)
		b[i] = pattern(src, seq, i);
}

static ibx_tag_t tag_of(int src, uint64_t seq)
{
	return ((ibx_tag_t)src << 40) | seq;
}

static int fail(int rank, const char *what, ibx_status_t st)
{
	fprintf(stderr, "rank %d: %s: %s\n", rank, what, ibx_status_str(st));
	return 1;
}

static int sender(ibx_ctx_t *ctx, int rank, uint64_t count)
{
	static ibx_request_t req[WINDOW];
	static unsigned char buf[WINDOW][BIG];
	ibx_status_t st;
	uint64_t seq, seen;
	ibx_request_t rr = {0};

	for (int w = 0; w < WINDOW; w++)
		req[w].completed = 1;
	for (seq = 0; seq < count; seq++) {
		int w = (int)(seq % WINDOW);
		size_t len = msg_len(seq);

		if (!req[w].completed) {
			st = ibx_wait(ctx, &req[w]);
			if (st != IBX_OK)
				return fail(rank, "send", st);
		} else if (req[w].status != IBX_OK && seq >= WINDOW) {
			return fail(rank, "send", req[w].status);
		}
		fill(buf[w], rank, seq, len);
		st = ibx_tag_send(ctx, 0, buf[w], len, tag_of(rank, seq),
				  seq % 997 == 5 ? IBX_SEND_SYNC : 0, &req[w]);
		if (st < 0)
			return fail(rank, "ibx_tag_send", st);
	}
	for (int w = 0; w < WINDOW; w++) {
		st = ibx_wait(ctx, &req[w]);
		if (st != IBX_OK)
			return fail(rank, "send", st);
	}
	st = ibx_tag_recv(ctx, 0, &seen, sizeof(seen), 1, IBX_TAG_MASK_ALL, &rr);
	if (st < 0 || (st = ibx_wait(ctx, &rr)) != IBX_OK)
		return fail(rank, "reply", st);
	if (seen != count) {
		fprintf(stderr, "rank %d: rank 0 saw %llu of my %llu messages\n", rank,
			(unsigned long long)seen, (unsigned long long)count);
		return 1;
	}
	printf("rank %d: %llu messages sent and confirmed\n", rank, (unsigned long long)count);
	return 0;
}

static int receiver(ibx_ctx_t *ctx, int size, uint64_t count)
{
	static ibx_request_t req[WINDOW];
	static unsigned char buf[WINDOW][BIG];
	uint64_t *next = calloc((size_t)size, sizeof(*next));
	uint64_t total = (uint64_t)(size - 1) * count, got, posted = 0, errors = 0;
	ibx_status_t st;

	if (!next)
		return 1;
	for (int w = 0; w < WINDOW && posted < total; w++, posted++) {
		st = ibx_tag_recv(ctx, IBX_ANY_SOURCE, buf[w], BIG, 0, 0, &req[w]);
		if (st < 0)
			return fail(0, "ibx_tag_recv", st);
	}
	/* receives complete in the order they were posted (each matches the
	 * next message in arrival order), so walk the window in order */
	for (got = 0; got < total; got++) {
		int w = (int)(got % WINDOW), src;
		uint64_t word, seq;
		size_t len;

		st = ibx_wait(ctx, &req[w]);
		if (st != IBX_OK)
			return fail(0, "receive", st);
		src = req[w].source;
		memcpy(&word, buf[w], 8);
		seq = word & ((1ull << 48) - 1);
		len = req[w].length;
		if (src < 1 || src >= size || (int)(word >> 48) != src) {
			fprintf(stderr, "rank 0: message from %d carries source %d\n", src,
				(int)(word >> 48));
			return 1;
		}
		if (seq != next[src]) {
			fprintf(stderr,
				"rank 0: from rank %d got seq %llu, expected %llu "
				"(out of order, lost or duplicated)\n",
				src, (unsigned long long)seq, (unsigned long long)next[src]);
			return 1;
		}
		if (req[w].tag != tag_of(src, seq) || len != msg_len(seq)) {
			fprintf(stderr, "rank 0: rank %d seq %llu: tag 0x%llx length %zu\n", src,
				(unsigned long long)seq, (unsigned long long)req[w].tag, len);
			return 1;
		}
		for (size_t i = 8; i < len; i++) {
			if (buf[w][i] != pattern(src, seq, i)) {
				if (errors++ < 5)
					fprintf(stderr, "rank 0: rank %d seq %llu byte %zu wrong\n",
						src, (unsigned long long)seq, i);
				break;
			}
		}
		next[src]++;
		if (posted < total) {
			st = ibx_tag_recv(ctx, IBX_ANY_SOURCE, buf[w], BIG, 0, 0, &req[w]);
			if (st < 0)
				return fail(0, "ibx_tag_recv", st);
			posted++;
		}
	}
	if (errors) {
		fprintf(stderr, "rank 0: %llu corrupt messages\n", (unsigned long long)errors);
		return 1;
	}
	for (int r = 1; r < size; r++) {
		ibx_request_t sr = {0};

		st = ibx_tag_send(ctx, r, &next[r], sizeof(next[r]), 1, 0, &sr);
		if (st < 0 || (st = ibx_wait(ctx, &sr)) != IBX_OK)
			return fail(0, "reply", st);
	}
	printf("rank 0: %llu messages from %d ranks in order and intact\n",
	       (unsigned long long)total, size - 1);
	free(next);
	return 0;
}

/* ---- ops mode ------------------------------------------------------------
 * Rank 0 exposes a 4 MiB window; every other rank r, through the verbs
 * path's ops table (what core/rma and the datatype schemes use):
 *   put with a 3-buffer gather list      -> r's region + 0
 *   1000 unsignalled 8-byte puts, flush  -> r's region + 16 KiB
 *   10 writes with immediate, flush      -> r's region + 32 KiB (rank 0 counts)
 *   a 300 KB put (registered, not inline)-> r's region + 64 KiB
 *   get with a 3-buffer scatter list     <- rank 0's pattern at 3 MiB
 *   fetch-add r on word 0, compare-swap increment of word 1
 * then rank 0 checks everything; a 100000-byte rendezvous into a 50000-byte
 * receive (TRUNCATED, length 100000, the first 50000 bytes right), SYNC
 * sends of 0 and 100 bytes; finally rank 1 puts with a bad rkey: its
 * request fails with IBX_ERR_REMOTE_ACCESS, a later send to rank 0 fails at
 * once, and the other ranks still talk to rank 0. */
#define WIN	    (4u << 20)
#define REGION	    (512u << 10)
#define PATTERN_OFF (3u << 20)
#define BIGPUT	    300000

static int imm_count[64];
static uint32_t imm_last[64];

static void on_imm(ibx_ctx_t *ctx, int src, uint32_t imm, void *arg)
{
	if (src >= 0 && src < 64) {
		imm_count[src]++;
		imm_last[src] = imm;
	}
}

static unsigned char wpat(size_t i)
{
	return (unsigned char)(i * 13 + (i >> 9));
}

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %d: ", rank);                                        \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, " (line %d)\n", __LINE__);                                 \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

static ibx_status_t wait_req(ibx_ctx_t *ctx, ibx_request_t *r, ibx_status_t st)
{
	if (st == IBX_OK)
		return IBX_OK;
	if (st < 0)
		return st;
	return ibx_wait(ctx, r);
}

static int ops_target(ibx_ctx_t *ctx, int rank, int size)
{
	unsigned char *win = NULL, *rb;
	ibx_mem_key_t key;
	void *h;
	ibx_status_t st;
	ibx_request_t r = {0};
	uint64_t sum = 0;

	CHECK(posix_memalign((void **)&win, 4096, WIN) == 0, "no memory");
	memset(win, 0, WIN);
	for (size_t i = 0; i < REGION; i++)
		win[PATTERN_OFF + i] = wpat(i);
	st = ibx_qp_path_mem_reg(ctx, win, WIN, &key, &h);
	CHECK(st == IBX_OK, "mem_reg: %s", ibx_status_str(st));
	CHECK(ibx_qp_path_set_imm_handler(ctx, on_imm, NULL) == IBX_OK, "imm handler");
	for (int p = 1; p < size; p++) {
		st = ibx_tag_send(ctx, p, &key, sizeof(key), 100, 0, &r);
		CHECK(wait_req(ctx, &r, st) == IBX_OK, "key to %d", p);
	}
	/* the origins work; the barrier says they are done (their flushes
	 * returned: the data is here) */
	CHECK(ibx_boot_barrier(ctx) == IBX_OK, "barrier");
	/* imm notifications arrive through progress */
	for (int spin = 0; spin < 100000; spin++) {
		int all = 1;

		for (int p = 1; p < size; p++)
			all &= imm_count[p] == 10;
		if (all)
			break;
		ibx_progress(ctx);
	}
	for (int p = 1; p < size; p++) {
		unsigned char *reg = win + (size_t)p * REGION;
		uint64_t v;

		sum += (uint64_t)p;
		for (size_t i = 0; i < 1000; i++)
			CHECK(reg[i] == (unsigned char)(p + i), "gather piece 1 from %d byte %zu",
			      p, i);
		for (size_t i = 0; i < 3; i++)
			CHECK(reg[1000 + i] == (unsigned char)(p + 5000 + i),
			      "gather piece 2 from %d", p);
		for (size_t i = 0; i < 7000; i++)
			CHECK(reg[1003 + i] == (unsigned char)(p + 20000 + i),
			      "gather piece 3 from %d", p);
		CHECK(reg[8003] == 0, "gather overran");
		for (uint64_t k = 0; k < 1000; k++) {
			memcpy(&v, reg + 16384 + 8 * k, 8);
			CHECK(v == ((uint64_t)p << 32 | k), "small put %llu from %d",
			      (unsigned long long)k, p);
		}
		for (uint64_t k = 0; k < 10; k++) {
			memcpy(&v, reg + 32768 + 8 * k, 8);
			CHECK(v == 1000u * (uint64_t)p + k, "put_imm data %llu from %d",
			      (unsigned long long)k, p);
		}
		CHECK(imm_count[p] == 10 && imm_last[p] == 1000u * (uint32_t)p + 9,
		      "imm from %d: %d seen, last %u", p, imm_count[p], imm_last[p]);
		for (size_t i = 0; i < BIGPUT; i++)
			CHECK(reg[65536 + i] == (unsigned char)(i * 7 + p),
			      "big put from %d byte %zu", p, i);
	}
	CHECK(((uint64_t *)win)[0] == sum, "fetch-add total %llu, want %llu",
	      (unsigned long long)((uint64_t *)win)[0], (unsigned long long)sum);
	CHECK(((uint64_t *)win)[1] == (uint64_t)(size - 1), "cswap count %llu",
	      (unsigned long long)((uint64_t *)win)[1]);

	/* truncation and SYNC sends from every origin */
	rb = malloc(100000);
	CHECK(rb != NULL, "no memory");
	for (int p = 1; p < size; p++) {
		ibx_request_t rr = {0};

		memset(rb, 0, 100000);
		st = ibx_tag_recv(ctx, p, rb, 50000, 200, IBX_TAG_MASK_ALL, &rr);
		st = wait_req(ctx, &rr, st);
		CHECK(st == IBX_ERR_TRUNCATED, "truncated receive: %s", ibx_status_str(st));
		CHECK(rr.length == 100000, "truncated length %zu", rr.length);
		for (size_t i = 0; i < 50000; i++)
			CHECK(rb[i] == (unsigned char)(i + p), "truncated data byte %zu", i);
		CHECK(rb[50000] == 0, "wrote past the receive buffer");
		st = ibx_tag_recv(ctx, p, rb, 10, 201, IBX_TAG_MASK_ALL, &rr);
		st = wait_req(ctx, &rr, st);
		CHECK(st == IBX_OK && rr.length == 0, "0-byte sync: %s", ibx_status_str(st));
		st = ibx_tag_recv(ctx, p, rb, 1000, 202, IBX_TAG_MASK_ALL, &rr);
		st = wait_req(ctx, &rr, st);
		CHECK(st == IBX_OK && rr.length == 100 && rb[99] == (unsigned char)(99 + p),
		      "100-byte sync: %s", ibx_status_str(st));
	}
	CHECK(ibx_boot_barrier(ctx) == IBX_OK, "barrier");
	/* rank 1 broke its connection; the others still reach us */
	for (int p = 2; p < size; p++) {
		ibx_request_t rr = {0};
		uint64_t v = 0;

		st = ibx_tag_recv(ctx, p, &v, sizeof(v), 300, IBX_TAG_MASK_ALL, &rr);
		st = wait_req(ctx, &rr, st);
		CHECK(st == IBX_OK && v == 300u + (uint64_t)p, "message after rank 1's error: %s",
		      ibx_status_str(st));
	}
	CHECK(ibx_boot_barrier(ctx) == IBX_OK, "barrier");
	ibx_qp_path_mem_dereg(ctx, h);
	free(win);
	free(rb);
	printf("rank 0: ops mode: window, immediates, atomics, truncation all as expected\n");
	return 0;
}

static int ops_origin(ibx_ctx_t *ctx, int rank, int size)
{
	const ibx_path_ops_t *ops = ctx->peers[0].ops;
	ibx_peer_t *peer = &ctx->peers[0];
	ibx_request_t r = {0};
	ibx_mem_key_t key;
	unsigned char *src = malloc(BIGPUT), *dst = malloc(4000), *msg = malloc(100000);
	uint64_t *small = malloc(1000 * sizeof(uint64_t)), imm_val[10], result = 0;
	struct iovec iov[3];
	uint64_t base;
	ibx_status_t st;

	CHECK(src && dst && msg && small, "no memory");
	st = ibx_tag_recv(ctx, 0, &key, sizeof(key), 100, IBX_TAG_MASK_ALL, &r);
	CHECK(wait_req(ctx, &r, st) == IBX_OK, "key");
	base = key.addr + (uint64_t)rank * REGION;

	/* gather: three pieces of a buffer -> one run */
	for (size_t i = 0; i < 30000; i++)
		src[i] = (unsigned char)(rank + i);
	iov[0] = (struct iovec){src, 1000};
	iov[1] = (struct iovec){src + 5000, 3};
	iov[2] = (struct iovec){src + 20000, 7000};
	st = ops->put(peer, iov, 3, base, key.rkey, &r);
	CHECK(wait_req(ctx, &r, st) == IBX_OK, "put gather: %s", ibx_status_str(r.status));

	/* many small unsignalled puts, then flush */
	for (uint64_t k = 0; k < 1000; k++) {
		small[k] = (uint64_t)rank << 32 | k;
		iov[0] = (struct iovec){&small[k], 8};
		st = ops->put(peer, iov, 1, base + 16384 + 8 * k, key.rkey, NULL);
		CHECK(st >= 0, "small put %llu: %s", (unsigned long long)k, ibx_status_str(st));
	}
	for (uint64_t k = 0; k < 10; k++) {
		imm_val[k] = 1000u * (uint64_t)rank + k;
		iov[0] = (struct iovec){&imm_val[k], 8};
		st = ops->put_imm(peer, iov, 1, base + 32768 + 8 * k, key.rkey,
				  (uint32_t)imm_val[k], NULL);
		CHECK(st >= 0, "put_imm: %s", ibx_status_str(st));
	}
	st = ops->flush(peer);
	CHECK(st == IBX_OK, "flush: %s", ibx_status_str(st));

	/* a large put from ordinary (cache-registered) memory */
	for (size_t i = 0; i < BIGPUT; i++)
		src[i] = (unsigned char)(i * 7 + rank);
	iov[0] = (struct iovec){src, BIGPUT};
	st = ops->put(peer, iov, 1, base + 65536, key.rkey, &r);
	CHECK(wait_req(ctx, &r, st) == IBX_OK, "big put: %s", ibx_status_str(r.status));

	/* scatter: one remote run -> three local pieces */
	memset(dst, 0, 4000);
	iov[0] = (struct iovec){dst, 1000};
	iov[1] = (struct iovec){dst + 1500, 1};
	iov[2] = (struct iovec){dst + 2000, 1999};
	st = ops->get(peer, iov, 3, key.addr + PATTERN_OFF + 100 * (uint64_t)rank, key.rkey, &r);
	CHECK(wait_req(ctx, &r, st) == IBX_OK, "get scatter: %s", ibx_status_str(r.status));
	for (size_t i = 0; i < 1000; i++)
		CHECK(dst[i] == wpat(100 * (size_t)rank + i), "get piece 1 byte %zu", i);
	CHECK(dst[1500] == wpat(100 * (size_t)rank + 1000), "get piece 2");
	for (size_t i = 0; i < 1999; i++)
		CHECK(dst[2000 + i] == wpat(100 * (size_t)rank + 1001 + i), "get piece 3 byte %zu",
		      i);
	CHECK(dst[1000] == 0 && dst[1501] == 0, "get wrote between pieces");

	/* atomics */
	st = ops->fetch_add(peer, key.addr, key.rkey, (uint64_t)rank, &result, &r);
	CHECK(wait_req(ctx, &r, st) == IBX_OK, "fetch_add: %s", ibx_status_str(r.status));
	for (uint64_t guess = 0;; guess = result) {
		st = ops->cswap(peer, key.addr + 8, key.rkey, guess, guess + 1, &result, &r);
		CHECK(wait_req(ctx, &r, st) == IBX_OK, "cswap: %s", ibx_status_str(r.status));
		if (result == guess)
			break;
	}
	CHECK(ops->fetch_add(peer, key.addr + 4, key.rkey, 1, &result, &r) == IBX_ERR_INVALID_PARAM,
	      "misaligned atomic accepted");
	CHECK(ops->flush(peer) == IBX_OK, "flush");
	CHECK(ibx_boot_barrier(ctx) == IBX_OK, "barrier");

	/* rendezvous into a shorter receive; SYNC sends */
	for (size_t i = 0; i < 100000; i++)
		msg[i] = (unsigned char)(i + rank);
	st = ibx_tag_send(ctx, 0, msg, 100000, 200, 0, &r);
	CHECK(wait_req(ctx, &r, st) == IBX_OK, "truncated send: %s", ibx_status_str(r.status));
	st = ibx_tag_send(ctx, 0, NULL, 0, 201, IBX_SEND_SYNC, &r);
	CHECK(wait_req(ctx, &r, st) == IBX_OK, "0-byte sync send: %s", ibx_status_str(r.status));
	st = ibx_tag_send(ctx, 0, msg, 100, 202, IBX_SEND_SYNC, &r);
	CHECK(wait_req(ctx, &r, st) == IBX_OK, "sync send: %s", ibx_status_str(r.status));
	CHECK(ibx_boot_barrier(ctx) == IBX_OK, "barrier");

	if (rank == 1) {
		/* a bad rkey: an error on this request, not a hang */
		iov[0] = (struct iovec){msg, 64};
		st = ops->put(peer, iov, 1, key.addr, key.rkey ^ 0x5a5a00, &r);
		st = wait_req(ctx, &r, st);
		CHECK(st == IBX_ERR_REMOTE_ACCESS, "bad rkey put: %s", ibx_status_str(st));
		/* the peer is now failed: sends fail at once */
		st = ibx_tag_send(ctx, 0, msg, 8, 300, 0, &r);
		CHECK(st == IBX_ERR_UNREACHABLE, "send after the error: %s", ibx_status_str(st));
		CHECK(ops->flush(peer) != IBX_OK, "flush after the error succeeded");
		printf("rank 1: bad rkey -> %s, then sends fail at once\n",
		       ibx_status_str(IBX_ERR_REMOTE_ACCESS));
	} else {
		uint64_t v = 300u + (uint64_t)rank;

		st = ibx_tag_send(ctx, 0, &v, sizeof(v), 300, 0, &r);
		CHECK(wait_req(ctx, &r, st) == IBX_OK, "send after rank 1's error");
	}
	CHECK(ibx_boot_barrier(ctx) == IBX_OK, "barrier");
	free(src);
	free(dst);
	free(msg);
	free(small);
	printf("rank %d: ops mode done\n", rank);
	return 0;
}

int main(int argc, char **argv)
{
	bool ops_mode = argc > 1 && strcmp(argv[1], "ops") == 0;
	uint64_t count = argc > 1 && !ops_mode ? strtoull(argv[1], NULL, 0) : 100000;
	ibx_ctx_t *ctx;
	ibx_status_t st;
	int rank, size, rc;

	st = ibx_init(NULL, &ctx);
	if (st != IBX_OK)
		return fail(-1, "ibx_init", st);
	rank = ibx_rank(ctx);
	size = ibx_size(ctx);
	if (size < 2) {
		fprintf(stderr, "run with at least 2 ranks\n");
		ibx_finalize(ctx);
		return 2;
	}
	for (int r = 0; r < size; r++) {
		const char *path = ibx_peer_path_name(ctx, r);

		if (r != rank && strcmp(path, "verbs") != 0) {
			fprintf(stderr,
				"rank %d: rank %d uses path %s, not verbs (IBX_PATHS=verbs?)\n",
				rank, r, path);
			ibx_finalize(ctx);
			return 2;
		}
	}
	if (ops_mode)
		rc = rank == 0 ? ops_target(ctx, rank, size) : ops_origin(ctx, rank, size);
	else
		rc = rank == 0 ? receiver(ctx, size, count) : sender(ctx, rank, count);
	st = ibx_finalize(ctx);
	if (st != IBX_OK && rc == 0)
		rc = fail(rank, "ibx_finalize", st);
	return rc;
}
