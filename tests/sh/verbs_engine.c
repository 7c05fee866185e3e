/*
 * verbs_engine.c — the verbs path under a many-to-one burst (run with
 * IBX_PATHS=verbs by tests/sh/verbs_engine.sh, on a real verbs device).
 *
 *   verbs_engine [COUNT]      (default 100000)
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
#include "ibx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define BIG (64 * 1024)

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
	ibx_request_t rr = { 0 };

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
			fprintf(stderr, "rank 0: from rank %d got seq %llu, expected %llu "
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
		ibx_request_t sr = { 0 };

		st = ibx_tag_send(ctx, r, &next[r], sizeof(next[r]), 1, 0, &sr);
		if (st < 0 || (st = ibx_wait(ctx, &sr)) != IBX_OK)
			return fail(0, "reply", st);
	}
	printf("rank 0: %llu messages from %d ranks in order and intact\n",
	       (unsigned long long)total, size - 1);
	free(next);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t count = argc > 1 ? strtoull(argv[1], NULL, 0) : 100000;
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
			fprintf(stderr, "rank %d: rank %d uses path %s, not verbs (IBX_PATHS=verbs?)\n",
				rank, r, path);
			ibx_finalize(ctx);
			return 2;
		}
	}
	rc = rank == 0 ? receiver(ctx, size, count) : sender(ctx, rank, count);
	st = ibx_finalize(ctx);
	if (st != IBX_OK && rc == 0)
		rc = fail(rank, "ibx_finalize", st);
	return rc;
}
