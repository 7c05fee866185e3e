/*
 * fuzz_shm_ring.c — libFuzzer target for the checks a receiver makes on
 * what a node-local peer wrote into its area of the shared segment
 * (core/shm_lf/shm_int.h, shm_copy.c): packet headers in the slot ring
 * (ibx_shm_rx_valid before ibx_shm_rx_gather sizes a copy with them),
 * eager cells, and the length words of the pipe's chunks
 * (ibx_shm_pipe_pull).
 *
 * The reading loop is ibx_shm_poll_peer's (shm_ring.c, static there): a
 * one-slot eager packet is read in place, anything else is validated
 * first; a cell header must fit a cell; an eager packet is gathered into
 * a scratch buffer of ibx_shm_pkt_capacity(ring slots) bytes, as the path
 * allocates it. Rendezvous packets go to shm_rndv.c, not reached here. The
 * ring, cells, scratch and destination buffers are heap blocks of exactly
 * their size, so ASan sees any copy that leaves them.
 *
 * Input: 8 bytes of geometry (ring slots, cells, cell size, pipe chunks,
 * chunk size, bytes the receiver expects, whether the full flags are made
 * right), then the ring's slots, the cells, the chunks' length words and
 * the chunks' data.
 *
 *   make fuzz && build/fuzz/fuzz_shm_ring $(mktemp -d) tests/fuzz/corpus/fuzz_shm_ring
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm_lf/shm_int.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct input {
	const uint8_t *p;
	size_t left;
} input_t;

/* The next @len bytes of the input (zeros once it runs out). */
static void take(input_t *in, void *dst, size_t len)
{
	size_t n = len < in->left ? len : in->left;

	memcpy(dst, in->p, n);
	memset((uint8_t *)dst + n, 0, len - n);
	in->p += n;
	in->left -= n;
}

static volatile uint8_t sink;

static void consume(const uint8_t *p, size_t len)
{
	if (len) {
		sink ^= p[0];
		sink ^= p[len - 1];
	}
}

static void read_ring(input_t *in, uint32_t nslots, uint32_t ncells, uint32_t cell_size, bool fix)
{
	ibx_shm_slot_t *slots = aligned_alloc(IBX_SHM_SLOT_SIZE, nslots * sizeof(*slots));
	size_t cap = ibx_shm_pkt_capacity(nslots);
	uint8_t *scratch = malloc(cap), *cells = ncells ? malloc((size_t)ncells * cell_size) : NULL;
	ibx_shm_ack_t *ack = aligned_alloc(IBX_CACHELINE, sizeof(*ack));
	ibx_shm_rx_t rx;
	ibx_shm_cells_t rxc;
	ibx_shm_slot_t *h;

	if (!slots || !scratch || (ncells && !cells) || !ack)
		goto out;
	take(in, slots, nslots * sizeof(*slots));
	if (cells)
		take(in, cells, (size_t)ncells * cell_size);
	memset(ack, 0, sizeof(*ack));
	if (fix) /* every slot full for the first lap */
		for (uint32_t i = 0; i < nslots; i++)
			atomic_store(&slots[i].h.seq, i + 1);
	ibx_shm_rx_init(&rx, slots, nslots, ack);
	ibx_shm_cells_init(&rxc, cells, cell_size, ncells, ack);
	/* one lap: beyond it the full flags would be the writer's next lap */
	while (rx.tail < nslots && (h = ibx_shm_rx_peek(&rx))) {
		if (h->h.type == IBX_SHM_PKT_EAGER && h->h.nslots == 1 &&
		    h->h.len <= IBX_SHM_HEAD_PAYLOAD) {
			consume(h->h.data, h->h.len);
		} else {
			if (!ibx_shm_rx_valid(&rx, h))
				break; /* the peer is failed */
			if (h->h.type == IBX_SHM_PKT_CELL) {
				if (h->h.nslots != 1 || !rxc.n || h->h.len > rxc.size)
					break;
				consume(ibx_shm_cell_peek(&rxc), h->h.len);
				ibx_shm_cell_next(&rxc);
			} else if (h->h.type == IBX_SHM_PKT_EAGER) {
				FUZZ_FAIL_IF(
				    h->h.len > cap,
				    "a validated eager packet is larger than the scratch buffer");
				ibx_shm_rx_gather(&rx, h, scratch);
				consume(scratch, h->h.len);
			}
		}
		ibx_shm_rx_advance(&rx, h);
	}
	ibx_shm_rx_release(&rx);
	ibx_shm_cells_release(&rxc);
	FUZZ_FAIL_IF(atomic_load(&ack->ring_consumed) != rx.tail ||
			 atomic_load(&ack->cell_consumed) != rxc.pos,
		     "consumption published to the writer differs from what was read");
out:
	free(slots);
	free(scratch);
	free(cells);
	free(ack);
}

/* A plain (contiguous) request over @buf, as the pipe copies into and out
 * of a message's buffer. */
static void plain_request(ibx_request_t *req, void *buf, size_t len)
{
	memset(req, 0, sizeof(*req));
	req->buf = buf;
	req->buflen = len;
}

static void read_pipe(input_t *in, uint32_t nchunks, size_t chunk, size_t want, bool fix)
{
	ibx_shm_chunk_hdr_t *hdrs = aligned_alloc(IBX_CACHELINE, nchunks * sizeof(*hdrs));
	uint8_t *chunks = malloc(nchunks * chunk), *dst = malloc(want ? want : 1);
	ibx_shm_ack_t *ack = aligned_alloc(IBX_CACHELINE, sizeof(*ack));
	ibx_shm_pipe_t p;
	ibx_request_t req;
	size_t done = 0;

	if (!hdrs || !chunks || !dst || !ack)
		goto out;
	memset(hdrs, 0, nchunks * sizeof(*hdrs));
	for (uint32_t i = 0; i < nchunks; i++) {
		uint64_t seq;

		take(in, &seq, sizeof(seq));
		take(in, &hdrs[i].len, sizeof(hdrs[i].len));
		atomic_store(&hdrs[i].seq, fix ? i + 1 : seq);
	}
	take(in, chunks, nchunks * chunk);
	memset(ack, 0, sizeof(*ack));
	ibx_shm_pipe_init(&p, hdrs, chunks, chunk, nchunks, ack);
	plain_request(&req, dst, want);
	/* as the receiver of a message of @want bytes: pull until it stalls */
	while (done < want) {
		size_t n = ibx_shm_pipe_pull(&p, &req, done, want - done);

		if (n == (size_t)-1)
			break; /* the peer is failed */
		FUZZ_FAIL_IF(n > want - done, "pipe pull copied more than asked");
		if (n == 0)
			break;
		done += n;
	}
	consume(dst, done);
out:
	free(hdrs);
	free(chunks);
	free(dst);
	free(ack);
}

/* A ring of 16 slots, two 64-byte cells and two 128-byte chunks, written
 * by the writer's side of the code: a short and a long eager packet, a
 * cell header with its cell, a rendezvous announcement, and a 200-byte
 * message in the pipe, which the receiver expects whole. */
static void write_seeds(void)
{
	static uint8_t seed[8 + 16 * 64 + 2 * 64 + 2 * 16 + 2 * 128];
	static const uint8_t geo[8] = {1, 2, 0, 0, 1, 200, 0, 0};
	ibx_shm_slot_t *slots = aligned_alloc(64, 16 * sizeof(*slots));
	ibx_shm_chunk_hdr_t *hdrs = aligned_alloc(64, 2 * sizeof(*hdrs));
	ibx_shm_ack_t *ack = aligned_alloc(64, sizeof(*ack));
	uint8_t cells[2 * 64], chunks[2 * 128], msg[200], *cell, *o = seed;
	ibx_shm_rts_t rts = {.len = 1 << 20, .addr = 0x7f0000001000, .id = 3};
	ibx_shm_cells_t txc;
	ibx_request_t req;
	ibx_shm_pipe_t p;
	ibx_shm_tx_t tx;

	if (!slots || !hdrs || !ack)
		abort();
	memset(slots, 0, 16 * sizeof(*slots));
	memset(hdrs, 0, 2 * sizeof(*hdrs));
	memset(ack, 0, sizeof(*ack));
	memset(cells, 0, sizeof(cells));
	memset(chunks, 0, sizeof(chunks));
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	ibx_shm_tx_init(&tx, slots, 16, ack);
	ibx_shm_cells_init(&txc, cells, 64, 2, ack);
	if (!ibx_shm_tx_send(&tx, IBX_SHM_PKT_EAGER, 0, 42, msg, 5) ||
	    !ibx_shm_tx_send(&tx, IBX_SHM_PKT_EAGER, 0, 43, msg, 150))
		abort();
	cell = ibx_shm_cell_claim(&txc);
	memcpy(cell, msg, 64);
	ibx_shm_tx_write_hdr(&tx, IBX_SHM_PKT_CELL, 44, 64);
	ibx_shm_cell_filled(&txc);
	if (!ibx_shm_tx_send(&tx, IBX_SHM_PKT_RTS, 0, 45, &rts, sizeof(rts)))
		abort();
	ibx_shm_pipe_init(&p, hdrs, chunks, 128, 2, ack);
	plain_request(&req, msg, sizeof(msg));
	if (ibx_shm_pipe_push(&p, &req, 0, sizeof(msg), SIZE_MAX / 4) != sizeof(msg))
		abort();
	memcpy(o, geo, 8);
	o += 8;
	memcpy(o, slots, 16 * 64);
	o += 16 * 64;
	memcpy(o, cells, sizeof(cells));
	o += sizeof(cells);
	for (int i = 0; i < 2; i++) {
		uint64_t seq = atomic_load(&hdrs[i].seq);

		memcpy(o, &seq, 8);
		memcpy(o + 8, &hdrs[i].len, 8);
		o += 16;
	}
	memcpy(o, chunks, sizeof(chunks));
	fuzz_seed_write("packets", seed, sizeof(seed));
	exit(0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (fuzz_seed_dir())
		write_seeds();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	input_t in = {data, size};
	uint8_t geo[8];
	uint32_t nslots, ncells, cell_size, nchunks;
	size_t chunk, want;
	bool fix;

	if (size < sizeof(geo) || size > 64 * 1024)
		return 0;
	take(&in, geo, sizeof(geo));
	nslots = 8u << (geo[0] % 4);		      /* 8..64: powers of two, as geom_check */
	ncells = geo[1] % 4;			      /* 0..3 */
	cell_size = IBX_CACHELINE * (1 + geo[2] % 4); /* 64..256 */
	nchunks = 2 + geo[3] % 3;		      /* 2..4 */
	chunk = IBX_CACHELINE * (1 + geo[4] % 4);     /* smaller than real: more laps */
	want = (size_t)(geo[5] | geo[6] << 8) % (2 * nchunks * chunk + 1);
	fix = !(geo[7] & 1);
	read_ring(&in, nslots, ncells, cell_size, fix);
	read_pipe(&in, nchunks, chunk, want, fix);
	return 0;
}
