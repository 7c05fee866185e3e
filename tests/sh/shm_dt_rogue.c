/*
 * shm_dt_rogue.c — a receiver that lies, against the shared-memory multi-w
 * of typed messages (core/shm_lf/shm_rndv.c), run by shm_dt_rogue.sh
 * under mpilite-run with 2 ranks.
 *
 * Rank 0 is an honest engine sending a vector type (128 blocks of 1 KiB,
 * 4 KiB apart: a rendezvous whose RTS offers to push its blocks). Rank 1
 * receives nothing; it answers each RTS itself, through the path's own
 * control packets, with the CTSM a receiver that chose multi-w sends —
 * but wrong, one way per round:
 *
 *   round  the CTSM                                    rank 0's send
 *   1      the layout is 256 bytes of noise            IBX_ERR_CORRUPT
 *   2      no layout, of a type never sent             IBX_ERR_CORRUPT
 *   3      a true layout of a 64-byte type, for the    IBX_ERR_CORRUPT
 *          whole 128 KiB message
 *   4      the layout at an address not mapped in      IBX_ERR_REMOTE_ACCESS
 *          rank 1 (the sender's CMA read faults)
 *   5      (honest) rank 1 posts a real typed receive  IBX_OK, the data right
 *          with multi-w forced
 *   6      a CTSM naming a rendezvous that does not    IBX_ERR_CORRUPT: rank 0
 *          exist                                       drops rank 1 as lost
 *
 * Rounds 1-4: both ends learn the error (the send's status at rank 0, the
 * FINW's at rank 1), nothing is written into rank 1's memory, and the pair
 * stays usable (round 5 proves it). The rogue relies on one fact of the
 * protocol: a pair's rendezvous ids count 1, 2, 3... from the first one.
 * If that changed, round 1 would meet an unknown id and the pair would be
 * dropped — and round 5 would fail, not pass.
 *
 * Exit 0 when every round behaved; prints "shm_dt_rogue: skip" and exits 77
 * when the kernel refuses CMA between the ranks (no multi-w to test).
 */
#define _GNU_SOURCE
#include "dtype_rdma/dt_xfer.h"
#include "ibx_int.h"
#include "bootstrap.h"
#include "shm_lf/shm_path.h"
#include "engine_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BLOCKS 128
#define BLOCK  1024
#define STRIDE 4096
#define MSG    (BLOCKS * BLOCK)
#define ROUNDS 6
#define TAG(r) (100 + (r))
#define SENTRY 0x5a

static ibx_ctx_t *ctx;
static int rank;

static ibx_dt_t *vector_type(void)
{
	ibx_dt_t *byte, *v;

	CHECK(ibx_dt_basic(1, 1, 1, &byte) == IBX_OK, "basic");
	CHECK(ibx_dt_vector(BLOCKS, BLOCK, STRIDE, byte, &v) == IBX_OK, "vector");
	CHECK(ibx_dt_commit(v) == IBX_OK, "commit");
	ibx_dt_free(&byte);
	return v;
}

static uint8_t pattern(size_t i, int round)
{
	return (uint8_t)(i * 131 + (size_t)round * 7 + 1);
}

/* ---- rank 0: the honest sender ------------------------------------------------------------ */

static ibx_status_t send_round(const ibx_dt_t *v, uint8_t *buf, int round)
{
	ibx_request_t req = {0};
	ibx_status_t st;

	for (size_t i = 0; i < (size_t)BLOCKS * STRIDE; i++)
		buf[i] = pattern(i, round);
	st = ibx_tag_send_dt(ctx, 1, buf, 1, v, TAG(round), 0, &req);
	if (st == IBX_OK || st == IBX_INPROGRESS)
		st = ibx_wait(ctx, &req);
	return st;
}

static void sender(void)
{
	static const ibx_status_t want[ROUNDS + 1] = {
	    0,	    IBX_ERR_CORRUPT, IBX_ERR_CORRUPT, IBX_ERR_CORRUPT, IBX_ERR_REMOTE_ACCESS,
	    IBX_OK, IBX_ERR_CORRUPT};
	uint8_t *buf = malloc((size_t)BLOCKS * STRIDE);
	ibx_dt_t *v = vector_type();

	CHECK(buf, "malloc");
	for (int r = 1; r <= ROUNDS; r++) {
		ibx_status_t st = send_round(v, buf, r);

		CHECK(st == want[r], "round %d: the send ended with %s, not %s", r,
		      ibx_status_str(st), ibx_status_str(want[r]));
		printf("shm_dt_rogue: round %d: the send ended with %s\n", r, ibx_status_str(st));
		fflush(stdout);
	}
	/* the pair is gone after round 6: a new send fails at once */
	CHECK(send_round(v, buf, ROUNDS + 1) != IBX_OK, "a send to a dropped peer succeeded");
	ibx_dt_free(&v);
	free(buf);
}

/* ---- rank 1: the rogue -------------------------------------------------------------------- */

/* Waits for rank 0's RTS of round @r to sit unmatched here. */
static void await_rts(int r)
{
	ibx_probe_info_t info;

	while (ibx_tag_probe(ctx, 0, TAG(r), IBX_TAG_MASK_ALL, &info) != IBX_OK)
		ibx_progress(ctx);
	CHECK(info.length == MSG, "round %d: a %zu-byte message", r, info.length);
}

/* Sends @m as the CTSM of rendezvous @id and waits for the FINW, which
 * completes a stand-in receive queued where the engine queues its own. */
static ibx_status_t lie(uint32_t id, const ibx_shm_ctsm_t *m)
{
	shm_peer_t *p = ctx->peers[0].path;
	ibx_request_t fake = {0};

	ibx_req_init(&fake, IBX_REQ_RECV);
	fake.buflen = (size_t)m->bytes;
	fake.length = 0;
	RQ_ID(&fake) = id;
	RQ_STATUS(&fake) = (uint64_t)IBX_OK;
	RQ_BLOB(&fake) = 0;
	ibx_rq_push(&p->cma_rx, &fake);
	ibx_shm_send_ctrl(p, IBX_SHM_PKT_CTSM, id, m, sizeof(*m));
	ibx_shm_promote(p);
	while (!fake.completed)
		ibx_progress(ctx);
	return fake.status;
}

static void rogue(void)
{
	static uint8_t noise[256];
	uint8_t *land = malloc((size_t)BLOCKS * STRIDE), *hole;
	ibx_dt_t *v = vector_type(), *small;
	ibx_shm_ctsm_t m;
	size_t blen;
	void *blob;
	ibx_request_t req = {0};
	ibx_status_t st;

	CHECK(land, "malloc");
	memset(land, SENTRY, (size_t)BLOCKS * STRIDE);
	for (size_t i = 0; i < sizeof(noise); i++)
		noise[i] = (uint8_t)(i * 37 + 11);

	/* 1: noise for a layout */
	await_rts(1);
	memset(&m, 0, sizeof(m));
	m.rbase = (uint64_t)(uintptr_t)land;
	m.type_id = 77;
	m.version = 1;
	m.count = 1;
	m.bytes = MSG;
	m.blob_addr = (uint64_t)(uintptr_t)noise;
	m.blob_len = sizeof(noise);
	st = lie(1, &m);
	CHECK(st == IBX_ERR_CORRUPT, "round 1: FINW said %s", ibx_status_str(st));

	/* 2: no layout, of a type the sender never saw */
	await_rts(2);
	m.type_id = 78;
	m.blob_addr = 0;
	m.blob_len = 0;
	st = lie(2, &m);
	CHECK(st == IBX_ERR_CORRUPT, "round 2: FINW said %s", ibx_status_str(st));

	/* 3: a true layout, too small for the bytes claimed */
	await_rts(3);
	{
		ibx_dt_t *byte;

		CHECK(ibx_dt_basic(1, 1, 1, &byte) == IBX_OK, "basic");
		CHECK(ibx_dt_contiguous(64, byte, &small) == IBX_OK &&
			  ibx_dt_commit(small) == IBX_OK,
		      "contiguous");
		ibx_dt_free(&byte);
	}
	CHECK(ibx_dt_wire_size(small, &blen) == IBX_OK && (blob = malloc(blen)), "wire size");
	CHECK(ibx_dt_serialize(small, blob, blen, &blen) == IBX_OK, "serialize");
	CHECK(ibx_dt_wire_id(small, &m.type_id, &m.version) == IBX_OK, "wire id");
	m.blob_addr = (uint64_t)(uintptr_t)blob;
	m.blob_len = (uint32_t)blen;
	st = lie(3, &m);
	CHECK(st == IBX_ERR_CORRUPT, "round 3: FINW said %s", ibx_status_str(st));

	/* 4: the layout at an address with nothing mapped */
	await_rts(4);
	hole = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(hole != MAP_FAILED && munmap(hole, 4096) == 0, "mmap");
	m.type_id = 79;
	m.blob_addr = (uint64_t)(uintptr_t)hole;
	m.blob_len = 512;
	st = lie(4, &m);
	CHECK(st == IBX_ERR_REMOTE_ACCESS, "round 4: FINW said %s", ibx_status_str(st));

	for (size_t i = 0; i < (size_t)BLOCKS * STRIDE; i++)
		CHECK(land[i] == SENTRY, "byte %zu of the landing buffer written by a lie", i);

	/* 5: honest, multi-w forced */
	CHECK(ibx_dt_scheme_set(ctx, IBX_DT_SCHEME_MULTI_W) == IBX_OK, "scheme");
	st = ibx_tag_recv_dt(ctx, 0, land, 1, v, TAG(5), IBX_TAG_MASK_ALL, &req);
	if (st == IBX_OK || st == IBX_INPROGRESS)
		st = ibx_wait(ctx, &req);
	CHECK(st == IBX_OK, "round 5: the receive ended with %s", ibx_status_str(st));
	for (size_t i = 0; i < (size_t)BLOCKS * STRIDE; i++) {
		bool in = i % STRIDE < BLOCK;

		CHECK(land[i] == (in ? pattern(i, 5) : SENTRY), "round 5: byte %zu is %#x", i,
		      land[i]);
	}
	CHECK(ibx_dt_scheme_count(ctx, IBX_DT_SCHEME_MULTI_W) == 1,
	      "round 5 did not move by multi-w");

	/* 6: a rendezvous that does not exist; rank 0 drops us, we leave */
	await_rts(6);
	m.blob_addr = 0;
	m.blob_len = 0;
	ibx_shm_send_ctrl(ctx->peers[0].path, IBX_SHM_PKT_CTSM, 4242, &m, sizeof(m));
	ibx_shm_promote(ctx->peers[0].path);
	ibx_progress(ctx);

	ibx_dt_free(&small);
	ibx_dt_free(&v);
	free(blob);
	free(land);
}

int main(void)
{
	CHECK(ibx_init(NULL, &ctx) == IBX_OK, "ibx_init");
	rank = ibx_rank(ctx);
	CHECK(ibx_size(ctx) == 2, "needs 2 ranks");
	CHECK(!strcmp(ibx_peer_path_name(ctx, 1 - rank), "shm"), "the peer is not over shm");
	if (!((shm_peer_t *)ctx->peers[1 - rank].path)->cma_ok) {
		if (rank == 0)
			printf("shm_dt_rogue: skip: the kernel refuses CMA between the ranks\n");
		ibx_finalize(ctx);
		return 77;
	}
	if (rank == 0)
		sender();
	else
		rogue();
	/* rank 1 stays until rank 0 has seen round 6 (a launcher fence, not a
	 * message); no finalize: rank 0 has dropped rank 1 */
	CHECK(ibx_boot_barrier(ctx) == IBX_OK, "barrier");
	printf("shm_dt_rogue: rank %d ok\n", rank);
	return 0;
}
