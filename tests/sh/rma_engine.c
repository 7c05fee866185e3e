/*
 * rma_engine.c — the engine's one-sided API end to end, through the public
 * header only (run by tests/sh/rma_engine.sh under mpilite-run: shared
 * memory and self on the host, IBX_PATHS=verbs in the Soft-RoCE VM).
 *
 *   rma_engine [alloc|map|share] [ROUNDS]
 *
 * Every rank exposes one region (ibx_mem_alloc; ibx_mem_map of malloc'ed
 * memory; or ibx_mem_share of a static array whose tail was written
 * before the call), packs its key and sends {address, key} to every rank. Then, with
 * every rank as a target (itself included):
 *   puts      contiguous and gathered, into the origin's own slot, flushed;
 *             after a barrier each owner checks every slot byte by byte
 *   gets      contiguous and scattered, of another origin's slot
 *   tickets   ROUNDS fetch-and-adds of 1 on rank 0's counter from everyone:
 *             the tickets gathered at rank 0 must be a permutation
 *   adds      ROUNDS adds of (rank + 1) on every target's sum word
 *   swaps     ROUNDS swaps of distinct values on rank 0's swap word: every
 *             value written is seen exactly once (returned or left)
 *   spinlock  a compare-and-swap lock on every target guards a plain counter
 *             that is read, incremented and written back with get / put
 * and the refusals: out-of-range and misaligned accesses, corrupt keys, a
 * key claimed by the wrong owner, bad arguments. With share, also which
 * memory moves (see test_share): its bytes survive the move, node-local
 * peers reach moved memory directly and the stack through system calls,
 * and memory unmapped and mapped again at the same address is moved anew,
 * not taken for the old segment. Exit 0 when all hold.
 *
 * Over verbs a rank's atomics on its own memory go through the NIC too
 * (the loopback QP), so the counters hold with every rank, itself included.
 */
#include <ibx.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define REGION	 (1u << 20)
#define SLOT	 (64u * 1024)
#define WORDS	 64 /* first 512 bytes: the atomic words, then the slots */
#define W_TICKET 0
#define W_SUM	 1
#define W_SWAP	 2
#define W_LOCK	 3
#define W_COUNT	 4
#define TAG_KEY	 11
#define TAG_RES	 12

#define CHECK(c, ...)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "rma_engine rank %d: ", g_rank);                           \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);                         \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

typedef struct peer_key {
	uint64_t base;
	uint64_t len;
	unsigned char key[IBX_RKEY_PACKED_MAX];
} peer_key_t;

static int g_rank, g_size;
static ibx_ctx_t *g_ctx;
static ibx_rkey_t **g_rk;
static uint64_t *g_base;

static unsigned char pat(int origin, int target, size_t i)
{
	return (unsigned char)(origin * 31 + target * 7 + i * 13 + (i >> 9));
}

static ibx_status_t wait_req(ibx_request_t *r, ibx_status_t st)
{
	if (st == IBX_INPROGRESS)
		return ibx_wait(g_ctx, r);
	return st;
}

static void barrier(void)
{
	CHECK(ibx_boot_barrier(g_ctx) == IBX_OK, "barrier");
}

static uint64_t word(int target, int w)
{
	return g_base[target] + 8u * (uint64_t)w;
}

static uint64_t slot(int target, int origin)
{
	return g_base[target] + WORDS * 8 + (uint64_t)origin * SLOT;
}

/* ---- set-up: every rank learns every region's address and key -------------- */

/* Sends {base, key of @mem} to every rank; fills rk[p] and bases[p]. */
static void exchange(const void *base, uint64_t len, ibx_mem_t *mem, ibx_rkey_t **rk,
		     uint64_t *bases)
{
	peer_key_t mine = {(uint64_t)(uintptr_t)base, len, {0}}, *all;
	ibx_request_t *rq;
	size_t klen = sizeof(mine.key);

	CHECK(ibx_rkey_pack(g_ctx, mem, mine.key, &klen) == IBX_OK, "rkey_pack");
	all = calloc((size_t)g_size, sizeof(*all));
	rq = calloc((size_t)g_size * 2, sizeof(*rq));
	CHECK(all && rq, "no memory");
	for (int p = 0; p < g_size; p++) {
		ibx_status_t st = ibx_tag_recv(g_ctx, p, &all[p], sizeof(all[p]), TAG_KEY,
					       IBX_TAG_MASK_ALL, &rq[p]);
		CHECK(st == IBX_OK || st == IBX_INPROGRESS, "recv key");
	}
	for (int p = 0; p < g_size; p++) {
		ibx_status_t st =
		    ibx_tag_send(g_ctx, p, &mine, sizeof(mine), TAG_KEY, 0, &rq[g_size + p]);
		CHECK(wait_req(&rq[g_size + p], st) == IBX_OK, "send key to %d", p);
	}
	for (int p = 0; p < g_size; p++) {
		CHECK(ibx_wait(g_ctx, &rq[p]) == IBX_OK, "key from %d", p);
		CHECK(ibx_rkey_unpack(g_ctx, p, all[p].key, sizeof(all[p].key), &rk[p]) == IBX_OK,
		      "unpack key of %d", p);
		bases[p] = all[p].base;
	}
	free(rq);
	free(all);
}

static void exchange_keys(const void *base, ibx_mem_t *mem)
{
	g_rk = calloc((size_t)g_size, sizeof(*g_rk));
	g_base = calloc((size_t)g_size, sizeof(*g_base));
	CHECK(g_rk && g_base, "no memory");
	exchange(base, REGION, mem, g_rk, g_base);
}

/* ---- data movement ------------------------------------------------------------------ */

static void test_puts(unsigned char *region)
{
	static unsigned char src[SLOT];

	for (int t = 0; t < g_size; t++) {
		struct iovec v[3];

		for (size_t i = 0; i < SLOT; i++)
			src[i] = pat(g_rank, t, i);
		/* first half in one put, second half gathered from three pieces */
		CHECK(ibx_put(g_ctx, src, SLOT / 2, slot(t, g_rank), g_rk[t], NULL) >= 0,
		      "put to %d", t);
		v[0] = (struct iovec){src + SLOT / 2, 100};
		v[1] = (struct iovec){src + SLOT / 2 + 100, 3};
		v[2] = (struct iovec){src + SLOT / 2 + 103, SLOT / 2 - 103};
		CHECK(ibx_putv(g_ctx, v, 3, slot(t, g_rank) + SLOT / 2, g_rk[t], NULL) >= 0,
		      "putv to %d", t);
		CHECK(ibx_flush(g_ctx, t) == IBX_OK, "flush %d", t);
	}
	barrier();
	for (int o = 0; o < g_size; o++) {
		const unsigned char *s = region + WORDS * 8 + (size_t)o * SLOT;

		for (size_t i = 0; i < SLOT; i++)
			CHECK(s[i] == pat(o, g_rank, i), "slot of %d byte %zu: %u", o, i, s[i]);
	}
	barrier();
}

static void test_gets(void)
{
	static unsigned char dst[SLOT];
	int o = (g_rank + 1) % g_size;

	for (int t = 0; t < g_size; t++) {
		ibx_request_t r = {0};
		struct iovec v[2];

		memset(dst, 0, sizeof(dst));
		CHECK(wait_req(&r, ibx_get(g_ctx, dst, 4096, slot(t, o), g_rk[t], &r)) == IBX_OK,
		      "get from %d", t);
		v[0] = (struct iovec){dst + 4096, 1};
		v[1] = (struct iovec){dst + 4097, SLOT - 4097};
		CHECK(wait_req(&r, ibx_getv(g_ctx, v, 2, slot(t, o) + 4096, g_rk[t], &r)) == IBX_OK,
		      "getv from %d", t);
		for (size_t i = 0; i < SLOT; i++)
			CHECK(dst[i] == pat(o, t, i), "get from %d byte %zu", t, i);
	}
}

/* ---- atomics ---------------------------------------------------------------------- */

static uint64_t amo(ibx_atomic_op_t op, uint64_t v, uint64_t cmp, int t, int w)
{
	ibx_request_t r = {0};
	uint64_t old = 0;
	ibx_status_t st = ibx_atomic(g_ctx, op, v, cmp, &old, word(t, w), g_rk[t], &r);

	CHECK(wait_req(&r, st) == IBX_OK, "atomic %d on %d word %d: %s", (int)op, t, w,
	      ibx_status_str(r.status));
	return old;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Rank 0 gathers @n values from every rank that took part (itself only
 * with self atomics) and checks that, with @left, they are consecutive
 * from @expect_first. */
static void gather_check(uint64_t *mine, int n, const char *what, uint64_t expect_first,
			 const uint64_t *left)
{
	int parts = g_size, k = 0;
	uint64_t *all;

	if (g_rank != 0) {
		ibx_request_t r = {0};

		CHECK(wait_req(&r, ibx_tag_send(g_ctx, 0, mine, (size_t)n * 8, TAG_RES, 0, &r)) ==
			  IBX_OK,
		      "send %s", what);
		return;
	}
	all = calloc((size_t)(g_size * n + 1), 8);
	CHECK(all, "no memory");
	memcpy(all, mine, (size_t)n * 8);
	k = n;
	for (int p = 1; p < g_size; p++, k += n) {
		ibx_request_t r = {0};

		CHECK(wait_req(&r, ibx_tag_recv(g_ctx, p, all + k, (size_t)n * 8, TAG_RES,
						IBX_TAG_MASK_ALL, &r)) == IBX_OK,
		      "recv %s", what);
	}
	if (left)
		all[k++] = *left;
	qsort(all, (size_t)k, 8, cmp_u64);
	for (int i = 0; i < k; i++)
		CHECK(all[i] == expect_first + (uint64_t)i, "%s: value %d is %llu (%d parts)", what,
		      i, (unsigned long long)all[i], parts);
	free(all);
}

/* Fetch-and-adds on rank 0's counter: the tickets drawn are a permutation.
 * First each waited for by its request, then (from where the counter
 * stands) all without requests, their results written by the flush. */
static void test_tickets(int rounds, uint64_t *region_words)
{
	uint64_t *got = calloc((size_t)rounds, 8);

	CHECK(got, "no memory");
	for (int i = 0; i < rounds; i++)
		got[i] = amo(IBX_ATOMIC_FADD, 1, 0, 0, W_TICKET);
	CHECK(ibx_flush_all(g_ctx) == IBX_OK, "flush_all");
	barrier();
	gather_check(got, rounds, "tickets", 0, NULL);
	barrier();
	for (int i = 0; i < rounds; i++) {
		got[i] = ~0ull;
		CHECK(ibx_atomic(g_ctx, IBX_ATOMIC_FADD, 1, 0, &got[i], word(0, W_TICKET), g_rk[0],
				 NULL) >= 0,
		      "fetch-add %d without a request", i);
	}
	CHECK(ibx_flush(g_ctx, 0) == IBX_OK, "flush of the fetch-adds without requests");
	barrier();
	gather_check(got, rounds, "tickets without requests", (uint64_t)rounds * (uint64_t)g_size,
		     NULL);
	if (g_rank == 0) {
		CHECK(region_words[W_TICKET] == 2 * (uint64_t)rounds * (uint64_t)g_size,
		      "ticket counter %llu", (unsigned long long)region_words[W_TICKET]);
	}
	free(got);
	barrier();
}

static void test_adds(int rounds, uint64_t *region_words)
{
	uint64_t expect = 0;

	for (int t = 0; t < g_size; t++)
		for (int i = 0; i < rounds; i++)
			CHECK(ibx_atomic(g_ctx, IBX_ATOMIC_ADD, (uint64_t)g_rank + 1, 0, NULL,
					 word(t, W_SUM), g_rk[t], NULL) >= 0,
			      "add on %d", t);
	CHECK(ibx_flush_all(g_ctx) == IBX_OK, "flush_all");
	barrier();
	for (int o = 0; o < g_size; o++)
		expect += (uint64_t)(o + 1) * (uint64_t)rounds;
	CHECK(region_words[W_SUM] == expect, "sum %llu, expected %llu",
	      (unsigned long long)region_words[W_SUM], (unsigned long long)expect);
	barrier();
}

/* Values 1 + origin * rounds + i are swapped into rank 0's word (which
 * starts at 0 = the value nobody writes): returned values plus the one left
 * must be 0 and every written value, once each. */
static void test_swaps(int rounds, uint64_t *region_words)
{
	uint64_t *got = calloc((size_t)rounds, 8);

	CHECK(got, "no memory");
	for (int i = 0; i < rounds; i++)
		got[i] = amo(IBX_ATOMIC_SWAP, 1 + (uint64_t)g_rank * (uint64_t)rounds + (uint64_t)i,
			     0, 0, W_SWAP);
	barrier();
	gather_check(got, rounds, "swaps", 0, g_rank == 0 ? &region_words[W_SWAP] : NULL);
	free(got);
	barrier();
}

static void lock_take(int t)
{
	unsigned spins = 0;

	while (amo(IBX_ATOMIC_CSWAP, (uint64_t)g_rank + 1, 0, t, W_LOCK) != 0)
		if (++spins % 64 == 0)
			ibx_progress(g_ctx);
}

static void lock_give(int t)
{
	uint64_t old = amo(IBX_ATOMIC_CSWAP, 0, (uint64_t)g_rank + 1, t, W_LOCK);

	CHECK(old == (uint64_t)g_rank + 1, "lock of %d held by %llu, not me", t,
	      (unsigned long long)old);
}

static void test_spinlock(int rounds, uint64_t *region_words)
{
	uint64_t expect = 0;

	for (int t = 0; t < g_size; t++) {
		for (int i = 0; i < rounds; i++) {
			ibx_request_t r = {0};
			uint64_t c;

			lock_take(t);
			CHECK(wait_req(&r, ibx_get(g_ctx, &c, 8, word(t, W_COUNT), g_rk[t], &r)) ==
				  IBX_OK,
			      "get count");
			c++;
			CHECK(ibx_put(g_ctx, &c, 8, word(t, W_COUNT), g_rk[t], NULL) >= 0,
			      "put count");
			CHECK(ibx_flush(g_ctx, t) == IBX_OK, "flush before unlock");
			lock_give(t);
		}
	}
	barrier();
	expect = (uint64_t)rounds * (uint64_t)g_size;
	CHECK(region_words[W_COUNT] == expect, "locked counter %llu, expected %llu",
	      (unsigned long long)region_words[W_COUNT], (unsigned long long)expect);
	barrier();
}

/* ibx_rkey_ptr: a local address for memory mapped here (self; node-local
 * allocated memory on the shm path), which must read what puts wrote. */
static void test_ptr(const char *kind)
{
	const char *paths = getenv("IBX_PATHS");
	bool verbs = paths && strcmp(paths, "verbs") == 0;

	for (int t = 0; t < g_size; t++) {
		int o = (t + 1) % g_size;
		void *p = NULL;
		ibx_status_t st = ibx_rkey_ptr(g_rk[t], slot(t, o), &p);
		/* over verbs even our own memory is not "direct": our atomics on it
		 * go through the NIC, which CPU atomics would not be atomic with;
		 * nor is our own private memory when node-local peers update it
		 * under our RMW lock (map, 2 ranks or more) */
		bool want = !verbs && (strcmp(kind, "map") != 0 || (t == g_rank && g_size == 1));

		CHECK(want ? st == IBX_OK : st == IBX_ERR_UNSUPPORTED, "rkey_ptr of %d: %s", t,
		      ibx_status_str(st));
		for (size_t i = 0; want && i < SLOT; i += 97)
			CHECK(((unsigned char *)p)[i] == pat(o, t, i),
			      "byte %zu through rkey_ptr of %d", i, t);
		CHECK(ibx_rkey_ptr(g_rk[t], g_base[t] + REGION + 1, &p) == IBX_ERR_INVALID_PARAM,
		      "rkey_ptr beyond the end");
	}
}

/* ---- ibx_mem_share ----------------------------------------------------------------- */

#define SHARE_LEN 3000 /* not a page: the move covers the pages around it */

/* The static region of the share kind (.bss: ordinary private memory). */
static unsigned char g_static[REGION] __attribute__((aligned(4096)));

static unsigned char share_pat(int owner, int variant, size_t i)
{
	return (unsigned char)(owner * 17 + variant * 101 + i * 7 + 1);
}

/* Every rank exposes @buf (filled with variant @v) through ibx_mem_share;
 * every rank then reads every other's copy with a get and, where @direct
 * says node-local peers should reach it directly, through ibx_rkey_ptr. */
static void share_case(const char *what, unsigned char *buf, int v, bool direct)
{
	const char *paths = getenv("IBX_PATHS");
	bool verbs = paths && strcmp(paths, "verbs") == 0;
	ibx_rkey_t **rk = calloc((size_t)g_size, sizeof(*rk));
	uint64_t *bases = calloc((size_t)g_size, sizeof(*bases));
	unsigned char got[SHARE_LEN];
	ibx_request_t rq = {.cb = NULL};
	ibx_mem_t *mem;

	CHECK(rk && bases, "no memory");
	for (size_t i = 0; i < SHARE_LEN; i++)
		buf[i] = share_pat(g_rank, v, i);
	CHECK(ibx_mem_share(g_ctx, buf, SHARE_LEN, &mem) == IBX_OK, "%s: share", what);
	for (size_t i = 0; i < SHARE_LEN; i++)
		CHECK(buf[i] == share_pat(g_rank, v, i), "%s: byte %zu changed by the move", what,
		      i);
	exchange(buf, SHARE_LEN, mem, rk, bases);
	for (int t = 0; t < g_size; t++) {
		void *p = NULL;
		ibx_status_t st = ibx_rkey_ptr(rk[t], bases[t], &p);
		bool want = !verbs && (direct || (t == g_rank && g_size == 1));

		CHECK(want ? st == IBX_OK : st == IBX_ERR_UNSUPPORTED,
		      "%s: rkey_ptr of rank %d: %s", what, t, ibx_status_str(st));
		for (size_t i = 0; want && i < SHARE_LEN; i++)
			CHECK(((unsigned char *)p)[i] == share_pat(t, v, i),
			      "%s: byte %zu of rank %d through rkey_ptr", what, i, t);
		memset(got, 0, sizeof(got));
		CHECK(wait_req(&rq, ibx_get(g_ctx, got, SHARE_LEN, bases[t], rk[t], &rq)) == IBX_OK,
		      "%s: get from rank %d", what, t);
		for (size_t i = 0; i < SHARE_LEN; i++)
			CHECK(got[i] == share_pat(t, v, i), "%s: byte %zu of rank %d through get",
			      what, i, t);
	}
	barrier();
	for (int t = 0; t < g_size; t++)
		ibx_rkey_destroy(g_ctx, rk[t]);
	CHECK(ibx_mem_unmap(g_ctx, mem) == IBX_OK, "%s: unmap", what);
	free(rk);
	free(bases);
}

static void test_share(void)
{
	unsigned char stack_buf[SHARE_LEN];
	size_t len = 4 * 4096;
	unsigned char *anon, *heap = malloc(SHARE_LEN);

	CHECK(heap, "no memory");
	/* heap memory moves; the stack never does */
	share_case("heap", heap, 1, true);
	share_case("stack", stack_buf, 2, false);
	/* part of the static region again: its segment is reused */
	share_case("static again", g_static + REGION - 2 * SHARE_LEN, 3, true);
	/* unmapped and mapped again at the same address: a new segment, with
	 * the new bytes, never the old one */
	anon = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(anon != MAP_FAILED, "mmap");
	share_case("anonymous", anon + 100, 4, true);
	CHECK(munmap(anon, len) == 0, "munmap");
	CHECK(mmap(anon, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
		   0) == anon,
	      "mmap again");
	share_case("anonymous, mapped again", anon + 100, 5, true);
	munmap(anon, len);
	free(heap);
}

/* ---- refusals ---------------------------------------------------------------------- */

static void test_refusals(ibx_mem_t *mem)
{
	unsigned char key[IBX_RKEY_PACKED_MAX], bad[IBX_RKEY_PACKED_MAX];
	size_t klen = sizeof(key), small = 8;
	int t = (g_rank + 1) % g_size;
	uint64_t v = 0, end = g_base[t] + REGION;
	ibx_rkey_t *rk;

	CHECK(ibx_put(g_ctx, &v, 8, end - 4, g_rk[t], NULL) == IBX_ERR_INVALID_PARAM,
	      "put across the end");
	CHECK(ibx_get(g_ctx, &v, 8, g_base[t] - 8, g_rk[t], NULL) == IBX_ERR_INVALID_PARAM,
	      "get before the start");
	CHECK(ibx_put(g_ctx, &v, 1, end, g_rk[t], NULL) == IBX_ERR_INVALID_PARAM, "put at the end");
	CHECK(ibx_put(g_ctx, &v, 0, end, g_rk[t], NULL) >= 0, "empty put at the end");
	CHECK(ibx_atomic(g_ctx, IBX_ATOMIC_FADD, 1, 0, &v, word(t, 0) + 4, g_rk[t], NULL) ==
		  IBX_ERR_INVALID_PARAM,
	      "misaligned atomic");
	CHECK(ibx_atomic(g_ctx, IBX_ATOMIC_FADD, 1, 0, NULL, word(t, 0), g_rk[t], NULL) ==
		  IBX_ERR_INVALID_PARAM,
	      "fetching atomic without a result");
	CHECK(ibx_atomic(g_ctx, (ibx_atomic_op_t)99, 1, 0, &v, word(t, 0), g_rk[t], NULL) ==
		  IBX_ERR_INVALID_PARAM,
	      "unknown atomic");
	CHECK(ibx_putv(g_ctx, NULL, 2, g_base[t], g_rk[t], NULL) == IBX_ERR_INVALID_PARAM,
	      "putv without a list");
	CHECK(ibx_put(g_ctx, &v, 8, g_base[t], NULL, NULL) == IBX_ERR_INVALID_PARAM, "no key");
	CHECK(ibx_flush(g_ctx, g_size) == IBX_ERR_INVALID_PARAM, "flush of a bad rank");
	CHECK(ibx_rkey_pack(g_ctx, mem, key, &small) == IBX_ERR_OVERFLOW, "pack into 8 bytes");
	CHECK(ibx_rkey_pack(g_ctx, mem, key, &klen) == IBX_OK, "pack");
	CHECK(ibx_rkey_unpack(g_ctx, t, key, klen, &rk) == IBX_ERR_CORRUPT || g_size == 1,
	      "my key claimed for rank %d", t);
	CHECK(ibx_rkey_unpack(g_ctx, g_rank, key, klen - 1, &rk) == IBX_ERR_CORRUPT, "short key");
	for (size_t i = 0; i < klen; i++) {
		memcpy(bad, key, klen);
		bad[i] ^= 0x40;
		CHECK(ibx_rkey_unpack(g_ctx, g_rank, bad, klen, &rk) == IBX_ERR_CORRUPT,
		      "key with byte %zu flipped", i);
	}
	CHECK(ibx_rkey_unpack(g_ctx, -1, key, klen, &rk) == IBX_ERR_INVALID_PARAM, "rank -1");
	CHECK(ibx_mem_map(g_ctx, NULL, 8, &mem) == IBX_ERR_INVALID_PARAM, "map NULL");
	CHECK(ibx_mem_alloc(g_ctx, 8, NULL, &mem) == IBX_ERR_INVALID_PARAM, "alloc without addr");
}

int main(int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : "alloc";
	int rounds = argc > 2 ? atoi(argv[2]) : 500;
	void *region = NULL;
	ibx_mem_t *mem;
	ibx_status_t st;

	st = ibx_init(NULL, &g_ctx);
	CHECK(st == IBX_OK, "init: %s", ibx_status_str(st));
	g_rank = ibx_rank(g_ctx);
	g_size = ibx_size(g_ctx);
	CHECK(rounds > 0 && (unsigned)g_size * SLOT + WORDS * 8 <= REGION, "bad arguments");
	if (strcmp(kind, "alloc") == 0) {
		st = ibx_mem_alloc(g_ctx, REGION, &region, &mem);
	} else if (strcmp(kind, "share") == 0) {
		/* bytes written before the move must survive it */
		region = g_static;
		for (size_t i = REGION / 2; i < REGION; i++)
			g_static[i] = share_pat(g_rank, 0, i);
		st = ibx_mem_share(g_ctx, region, REGION, &mem);
		for (size_t i = REGION / 2; st == IBX_OK && i < REGION; i++)
			CHECK(g_static[i] == share_pat(g_rank, 0, i), "static byte %zu moved wrong",
			      i);
	} else {
		CHECK(strcmp(kind, "map") == 0, "usage: rma_engine [alloc|map|share] [ROUNDS]");
		region = calloc(1, REGION);
		CHECK(region, "no memory");
		st = ibx_mem_map(g_ctx, region, REGION, &mem);
	}
	CHECK(st == IBX_OK, "%s: %s", kind, ibx_status_str(st));
	exchange_keys(region, mem);
	barrier();
	test_puts(region);
	test_gets();
	test_ptr(kind);
	barrier();
	test_tickets(rounds, region);
	test_adds(rounds, region);
	test_swaps(rounds, region);
	test_spinlock(rounds / 5 + 1, region);
	test_refusals(mem);
	barrier();
	if (strcmp(kind, "share") == 0)
		test_share();
	for (int p = 0; p < g_size; p++)
		ibx_rkey_destroy(g_ctx, g_rk[p]);
	CHECK(ibx_mem_unmap(g_ctx, mem) == IBX_OK, "unmap");
	if (strcmp(kind, "map") == 0)
		free(region);
	st = ibx_finalize(g_ctx);
	CHECK(st == IBX_OK, "finalize: %s", ibx_status_str(st));
	if (g_rank == 0)
		printf("rma_engine %s: %d ranks, %d rounds: all passed\n", kind, g_size, rounds);
	free(g_rk);
	free(g_base);
	return 0;
}
