/*
 * shm_int.h — private interface of core/shm_lf: the layout of a shared
 * segment, the lock-free slot ring and the pipelined-copy buffers. The ring
 * sits on the message fast path, so it is inline here; the unit tests
 * (tests/unit/test_shm_ring.c) drive it, the segments and the pipe without a
 * full ibx context.
 *
 * One segment per process j, file IBX_SHM_DIR/ibx-<jobid>-<j>, created,
 * first-touched and NUMA-placed by j. It holds one "area" per node-local
 * peer i; everything in the area for i is WRITTEN BY i and read by j:
 *
 *   segment of j
 *   ┌──────────────────────────────┐
 *   │ header: magic, pids, geometry│  ranks[] = the area order (ascending)
 *   │   calib (lowest rank's: which│  shm_calib.c
 *   │   copy for a rendezvous)     │
 *   ├──────────────────────────────┤
 *   │ area for peer i              │
 *   │   slots[RING_SLOTS]  ◄─ i    │  ring i→j: 64-byte packet slots
 *   │   ack line           ◄─ i    │  i's consumption of ring j→i and of
 *   │                              │  the pipe j→i (they live in i's
 *   │                              │  segment): j, the writer of those,
 *   │                              │  reads "slot free" from its own memory
 *   │                              │  ([Gropp97] §9.3)
 *   │   chunk_hdr[CHUNKS]  ◄─ i    │  pipe i→j: full flags (seq) + length
 *   │   chunk[CHUNKS][CHUNK] ◄─ i  │  pipe i→j: data, page aligned
 *   │   cell[CELLS][CELL]    ◄─ i  │  eager cells i→j: payloads of 1-8 KiB
 *   │                              │  messages (header in the ring)
 *   ├──────────────────────────────┤
 *   │ area for peer i' ...         │
 *   └──────────────────────────────┘
 *
 * Slot ring ([Gropp97] §5, §9.1): single writer, single reader, no lock. Slot
 * positions count up forever (64 bit); position p lives in slot p % N and
 * is full when its seq word holds (uint32_t)(p + 1). The writer stores the
 * payload, then the seq with release (slot_publish); the reader loads the
 * seq with acquire (slot_consume), so the payload is visible before the
 * slot reads as full. A packet longer than one slot takes consecutive
 * slots; every slot starts with its own seq word (continuation slots carry
 * 60 payload bytes), so stale bytes of an older lap can never look like a
 * full header, whatever the user data was. The reader publishes how many
 * slots it has consumed (release) once per poll into the ack line; the
 * writer keeps a private limit and reads the ack (acquire) only when that
 * limit says the ring is full.
 */
#ifndef IBX_SHM_INT_H
#define IBX_SHM_INT_H

#include "ibx_int.h"
#include "shm_config.h"

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- packets and slots ---------------------------------------------------- */

#define IBX_SHM_SLOT_SIZE     64
#define IBX_SHM_HEAD_PAYLOAD  40 /* bytes carried in a packet's first slot */
#define IBX_SHM_CONT_PAYLOAD  60 /* bytes carried in each continuation slot */
#define IBX_SHM_MAX_PKT_SLOTS 65535u

enum ibx_shm_pkt_type {
	IBX_SHM_PKT_EAGER = 1, /* tag, len, payload */
	IBX_SHM_PKT_RTS = 2,   /* tag, ibx_shm_rts_t: a rendezvous announcement */
	IBX_SHM_PKT_CTS = 3,   /* receiver matched: stream aux=id, u64 bytes via the pipe */
	IBX_SHM_PKT_FIN = 4,   /* receiver matched and done reading (CMA or 0 bytes): aux=id,
				* i64 status */
	IBX_SHM_PKT_CTSW = 5,  /* receiver matched: write your part, aux=id, ibx_shm_ctsw_t */
	IBX_SHM_PKT_FINW = 6,  /* sender wrote its part: aux=id, i64 status */
	IBX_SHM_PKT_CELL = 7,  /* eager: tag, len; the payload is in the pair's next cell */
	IBX_SHM_PKT_CTSM = 8,  /* receiver matched a pushed typed send: write every block
				* into mine, aux=id, ibx_shm_ctsm_t; answered by FINW */
};

typedef union ibx_shm_slot {
	struct {
		_Atomic uint32_t seq; /* (uint32_t)(position + 1) when full */
		uint8_t type;	      /* enum ibx_shm_pkt_type */
		uint8_t flags;
		uint16_t nslots; /* slots of this packet, this one included */
		uint32_t len;	 /* payload bytes (FIN: status) */
		uint32_t aux;	 /* rendezvous id (CTS, FIN) */
		uint64_t tag;
		uint8_t data[IBX_SHM_HEAD_PAYLOAD];
	} h;
	struct {
		_Atomic uint32_t seq;
		uint8_t data[IBX_SHM_CONT_PAYLOAD];
	} c;
} __attribute__((aligned(IBX_SHM_SLOT_SIZE))) ibx_shm_slot_t;

_Static_assert(sizeof(ibx_shm_slot_t) == IBX_SHM_SLOT_SIZE, "a slot is one cache line");
_Static_assert(offsetof(ibx_shm_slot_t, h.data) + IBX_SHM_HEAD_PAYLOAD == IBX_SHM_SLOT_SIZE,
	       "head payload fills the slot");

/* The reader's consumption counters, in the writer's segment ([Gropp97] §9.3). */
typedef struct ibx_shm_ack {
	_Atomic uint64_t ring_consumed; /* slots of the ring consumed */
	_Atomic uint64_t pipe_consumed; /* pipe chunks consumed */
	_Atomic uint64_t cell_consumed; /* eager cells consumed */
	uint8_t pad[2 * IBX_CACHELINE - 24];
} __attribute__((aligned(IBX_CACHELINE))) ibx_shm_ack_t;

/* Rendezvous announcement: the tag layer keeps these bytes until a receive
 * matches, then hands them back to rndv_recv. */
typedef struct ibx_shm_rts {
	uint64_t len;	/* message length */
	uint64_t addr;	/* sender's buffer, in the sender's address space (CMA) */
	uint32_t id;	/* the sender's rendezvous id: comes back in CTS/FIN */
	uint32_t flags; /* IBX_SHM_RTS_* */
	uint32_t avg;	/* PUSH: the send type's average block (bytes, capped) */
	uint32_t pad;
} ibx_shm_rts_t;
#define IBX_SHM_RTS_CMA	 0x1u /* one buffer at addr: the receiver may read it (CMA) */
#define IBX_SHM_RTS_PUSH 0x2u /* typed, scattered: the sender can write its blocks (CTSM) */
_Static_assert(sizeof(ibx_shm_rts_t) <= IBX_SHM_HEAD_PAYLOAD, "an RTS fits one slot");
_Static_assert(sizeof(ibx_shm_rts_t) <= IBX_RTS_MAX, "the tag layer keeps the RTS");

/* Split single copy: the sender writes message bytes [offset, offset +
 * bytes) to raddr in the receiver, while the receiver reads [0, offset). */
typedef struct ibx_shm_ctsw {
	uint64_t raddr;
	uint64_t offset;
	uint64_t bytes;
} ibx_shm_ctsw_t;
_Static_assert(sizeof(ibx_shm_ctsw_t) <= IBX_SHM_HEAD_PAYLOAD, "a CTSW fits one slot");

/* Multi-w on shared memory: the receive type is (type_id, version) with
 * `count` elements at `rbase` in the receiver; its serialised layout is
 * `blob_len` bytes at `blob_addr` there (0 and 0: the sender has it from an
 * earlier message). The sender moves the first `bytes` of its message. */
typedef struct ibx_shm_ctsm {
	uint64_t rbase;
	uint64_t type_id;
	int64_t count;
	uint64_t blob_addr;
	uint64_t bytes;
	uint32_t blob_len;
	uint32_t version;
} ibx_shm_ctsm_t;
#define IBX_SHM_LAYOUT_MAX                                                                         \
	(1u << 30)	      /* a larger blob_len is corrupt (the datatype                        \
			       * engine applies IBX_DT_WIRE_MAX after) */
#define IBX_SHM_CTSM_SLOTS 2u /* 48 bytes: a head slot and one continuation */
_Static_assert(sizeof(ibx_shm_ctsm_t) <= IBX_SHM_HEAD_PAYLOAD + IBX_SHM_CONT_PAYLOAD,
	       "a CTSM fits two slots");

/* Slots a packet of @len payload bytes takes. */
static inline uint32_t ibx_shm_pkt_slots(size_t len)
{
	if (len <= IBX_SHM_HEAD_PAYLOAD)
		return 1;
	return 1 + (uint32_t)((len - IBX_SHM_HEAD_PAYLOAD + IBX_SHM_CONT_PAYLOAD - 1) /
			      IBX_SHM_CONT_PAYLOAD);
}

/* Largest payload that fits @slots slots. */
static inline size_t ibx_shm_pkt_capacity(uint32_t slots)
{
	return slots ? IBX_SHM_HEAD_PAYLOAD + (size_t)(slots - 1) * IBX_SHM_CONT_PAYLOAD : 0;
}

/*
 * The two memory-ordering points of the ring. slot_publish: every payload
 * store of the packet (earlier in program order) becomes visible before
 * the seq that marks the slot full (release; [Gropp97] §5: "the order of writes
 * to separate locations might be altered" otherwise). slot_consume: the
 * reader sees the payload the writer stored before it published (acquire).
 * On x86 both are plain moves; the compiler must still not reorder them.
 */
static inline void slot_publish(ibx_shm_slot_t *s, uint64_t pos)
{
	atomic_store_explicit(&s->h.seq, (uint32_t)(pos + 1), memory_order_release);
}

static inline bool slot_consume(ibx_shm_slot_t *s, uint64_t pos)
{
	return atomic_load_explicit(&s->h.seq, memory_order_acquire) == (uint32_t)(pos + 1);
}

/* Copies 0..40 bytes with fixed-size moves: no libc call for the short
 * messages that decide latency. Overlapping moves cover odd lengths. */
static inline void ibx_shm_copy_short(void *dst, const void *src, size_t len)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	if (len >= 16) {
		if (len > 32)
			memcpy(d + 16, s + 16, 16);
		memcpy(d, s, 16);
		memcpy(d + len - 16, s + len - 16, 16);
	} else if (len >= 8) {
		memcpy(d, s, 8);
		memcpy(d + len - 8, s + len - 8, 8);
	} else if (len >= 4) {
		memcpy(d, s, 4);
		memcpy(d + len - 4, s + len - 4, 4);
	} else if (len) {
		d[0] = s[0];
		d[len / 2] = s[len / 2];
		d[len - 1] = s[len - 1];
	}
}

/* ---- ring: writer side ---------------------------------------------------- */

typedef struct ibx_shm_tx {
	ibx_shm_slot_t *slots; /* in the reader's segment */
	uint64_t head;	       /* next position to write */
	uint64_t limit;	       /* positions below this are known free */
	uint32_t mask;
	uint32_t nslots;
	ibx_shm_ack_t *ack; /* in our own segment, written by the reader */
} ibx_shm_tx_t;

static inline void ibx_shm_tx_init(ibx_shm_tx_t *tx, ibx_shm_slot_t *slots, uint32_t nslots,
				   ibx_shm_ack_t *ack)
{
	tx->slots = slots;
	tx->head = 0;
	tx->limit = nslots;
	tx->mask = nslots - 1;
	tx->nslots = nslots;
	tx->ack = ack;
}

/* True if @k more slots are free. Reads the reader's counter only when the
 * cached limit says "full" ([Gropp97] §9.3: the sender's knowledge that a slot is
 * free should be a local read, and a rare one). */
static inline bool ibx_shm_tx_room(ibx_shm_tx_t *tx, uint32_t k)
{
	if (ibx_likely(tx->head + k <= tx->limit))
		return true;
	/* acquire: the reader has finished reading those slots before we
	 * overwrite them */
	tx->limit =
	    atomic_load_explicit(&tx->ack->ring_consumed, memory_order_acquire) + tx->nslots;
	return tx->head + k <= tx->limit;
}

/* Writes a one-slot packet that carries no payload of its own (an eager
 * cell's header: @len is the cell's); the caller has checked the room. */
static inline void ibx_shm_tx_write_hdr(ibx_shm_tx_t *tx, uint8_t type, uint64_t tag, size_t len)
{
	uint64_t pos = tx->head;
	ibx_shm_slot_t *h = &tx->slots[pos & tx->mask];

	h->h.type = type;
	h->h.flags = 0;
	h->h.nslots = 1;
	h->h.len = (uint32_t)len;
	h->h.aux = 0;
	h->h.tag = tag;
	slot_publish(h, pos);
	tx->head = pos + 1;
}

/* Writes one packet of @k = ibx_shm_pkt_slots(len) slots; the caller has
 * checked ibx_shm_tx_room(tx, k). */
static inline void ibx_shm_tx_write(ibx_shm_tx_t *tx, uint8_t type, uint32_t aux, uint64_t tag,
				    const void *data, size_t len, uint32_t k)
{
	uint64_t pos = tx->head;
	ibx_shm_slot_t *h = &tx->slots[pos & tx->mask];
	const uint8_t *src = data;

	if (ibx_unlikely(k > 1)) {
		size_t off = IBX_SHM_HEAD_PAYLOAD;

		for (uint32_t i = 1; i < k; i++) {
			ibx_shm_slot_t *c = &tx->slots[(pos + i) & tx->mask];
			size_t n =
			    len - off < IBX_SHM_CONT_PAYLOAD ? len - off : IBX_SHM_CONT_PAYLOAD;

			/* The reader never tests this seq (the head's covers the
			 * packet) but it must not hold user bytes: a later lap
			 * may put a header here. */
			atomic_store_explicit(&c->c.seq, (uint32_t)(pos + i + 1),
					      memory_order_relaxed);
			if (n == IBX_SHM_CONT_PAYLOAD)
				memcpy(c->c.data, src + off, IBX_SHM_CONT_PAYLOAD);
			else
				memcpy(c->c.data, src + off, n);
			off += n;
		}
		memcpy(h->h.data, src, IBX_SHM_HEAD_PAYLOAD);
	} else {
		ibx_shm_copy_short(h->h.data, src, len);
	}
	h->h.type = type;
	h->h.flags = 0;
	h->h.nslots = (uint16_t)k;
	h->h.len = (uint32_t)len;
	h->h.aux = aux;
	h->h.tag = tag;
	slot_publish(h, pos);
	tx->head = pos + k;
}

/* Room check plus write; false when the ring is full. */
static inline bool ibx_shm_tx_send(ibx_shm_tx_t *tx, uint8_t type, uint32_t aux, uint64_t tag,
				   const void *data, size_t len)
{
	uint32_t k = ibx_shm_pkt_slots(len);

	if (!ibx_shm_tx_room(tx, k))
		return false;
	ibx_shm_tx_write(tx, type, aux, tag, data, len, k);
	return true;
}

/* ---- ring: reader side ---------------------------------------------------- */

typedef struct ibx_shm_rx {
	ibx_shm_slot_t *slots; /* in our own segment */
	uint64_t tail;	       /* next position to read */
	uint64_t released;     /* last value published to the ack */
	uint32_t mask;
	uint32_t nslots;
	ibx_shm_ack_t *ack; /* in the writer's segment */
} ibx_shm_rx_t;

static inline void ibx_shm_rx_init(ibx_shm_rx_t *rx, ibx_shm_slot_t *slots, uint32_t nslots,
				   ibx_shm_ack_t *ack)
{
	rx->slots = slots;
	rx->tail = 0;
	rx->released = 0;
	rx->mask = nslots - 1;
	rx->nslots = nslots;
	rx->ack = ack;
}

/* The packet at the read position, or NULL if the writer has not
 * published it yet. */
static inline ibx_shm_slot_t *ibx_shm_rx_peek(ibx_shm_rx_t *rx)
{
	ibx_shm_slot_t *s = &rx->slots[rx->tail & rx->mask];

	return slot_consume(s, rx->tail) ? s : NULL;
}

/* Checks what a peer wrote before we trust it to size a copy. */
static inline bool ibx_shm_rx_valid(const ibx_shm_rx_t *rx, const ibx_shm_slot_t *h)
{
	uint32_t k = h->h.nslots;

	return k >= 1 && k <= rx->nslots &&
	       (h->h.type != IBX_SHM_PKT_EAGER || ibx_shm_pkt_slots(h->h.len) == k);
}

/* Copies the payload of a multi-slot packet (validated) to @dst. */
static inline void ibx_shm_rx_gather(const ibx_shm_rx_t *rx, const ibx_shm_slot_t *h, void *dst)
{
	uint8_t *d = dst;
	size_t len = h->h.len, off = IBX_SHM_HEAD_PAYLOAD;
	uint64_t pos = rx->tail;

	if (h->h.nslots == 1) {
		ibx_shm_copy_short(d, h->h.data, len);
		return;
	}
	memcpy(d, h->h.data, IBX_SHM_HEAD_PAYLOAD);
	for (uint32_t i = 1; i < h->h.nslots; i++) {
		const ibx_shm_slot_t *c = &rx->slots[(pos + i) & rx->mask];
		size_t n = len - off < IBX_SHM_CONT_PAYLOAD ? len - off : IBX_SHM_CONT_PAYLOAD;

		if (n == IBX_SHM_CONT_PAYLOAD)
			memcpy(d + off, c->c.data, IBX_SHM_CONT_PAYLOAD);
		else
			memcpy(d + off, c->c.data, n);
		off += n;
	}
}

static inline void ibx_shm_rx_advance(ibx_shm_rx_t *rx, const ibx_shm_slot_t *h)
{
	rx->tail += h->h.nslots;
}

/* Hands the consumed slots back to the writer, once per poll rather than
 * once per packet: the line lives in the writer's segment. release: our
 * reads of those slots are done before the writer may reuse them. */
static inline void ibx_shm_rx_release(ibx_shm_rx_t *rx)
{
	if (rx->tail != rx->released) {
		atomic_store_explicit(&rx->ack->ring_consumed, rx->tail, memory_order_release);
		rx->released = rx->tail;
	}
}

/* ---- eager cells ---------------------------------------------------------- */

/*
 * Eager messages too long for a few slots go in one memcpy to a cell of
 * the pair's cell ring (in the reader's segment) while the slot ring
 * carries a one-slot CELL header in their place, so that they keep their
 * order among all packets: cells are filled and drained in the order of
 * their headers, so a header needs no cell number.
 *
 *   writer                          reader (at the CELL header, in ring order)
 *   cell_claim: pos < limit? ─────► cell pos % n: memcpy payload in
 *   slot_publish(CELL hdr) ───────► slot_consume: payload at cell rpos % n
 *                                   (the tag layer copies it out)
 *   limit = cell_consumed + n ◄──── cell_consumed = rpos (release, per poll)
 *
 * The header's release (slot_publish) orders the payload before it.
 */
typedef struct ibx_shm_cells {
	uint8_t *data;	    /* in the reader's segment */
	uint32_t size;	    /* bytes per cell */
	uint32_t n;	    /* cells; 0: none */
	uint64_t pos;	    /* tx: next cell to fill; rx: next to drain */
	uint64_t limit;	    /* tx: cells below this are known free */
	uint64_t released;  /* rx: last value published to the ack */
	ibx_shm_ack_t *ack; /* tx: our own segment; rx: the writer's */
} ibx_shm_cells_t;

static inline void ibx_shm_cells_init(ibx_shm_cells_t *c, uint8_t *data, uint32_t size, uint32_t n,
				      ibx_shm_ack_t *ack)
{
	c->data = data;
	c->size = size;
	c->n = n;
	c->pos = 0;
	c->limit = n;
	c->released = 0;
	c->ack = ack;
}

/* Writer: the next free cell, or NULL when all are full. The caller fills
 * it, publishes the header, then calls ibx_shm_cell_filled. */
static inline uint8_t *ibx_shm_cell_claim(ibx_shm_cells_t *c)
{
	if (ibx_unlikely(c->pos >= c->limit)) {
		/* acquire: the reader is done with the cell before we refill it */
		c->limit =
		    atomic_load_explicit(&c->ack->cell_consumed, memory_order_acquire) + c->n;
		if (c->pos >= c->limit)
			return NULL;
	}
	return c->data + (size_t)(c->pos % c->n) * c->size;
}

static inline void ibx_shm_cell_filled(ibx_shm_cells_t *c)
{
	c->pos++;
}

/* Reader: the payload of the CELL header in hand; then ibx_shm_cell_next. */
static inline const uint8_t *ibx_shm_cell_peek(const ibx_shm_cells_t *c)
{
	return c->data + (size_t)(c->pos % c->n) * c->size;
}

static inline void ibx_shm_cell_next(ibx_shm_cells_t *c)
{
	c->pos++;
}

/* Hands the drained cells back, once per poll. release: our reads of them
 * are done before the writer refills them. */
static inline void ibx_shm_cells_release(ibx_shm_cells_t *c)
{
	if (c->pos != c->released) {
		atomic_store_explicit(&c->ack->cell_consumed, c->pos, memory_order_release);
		c->released = c->pos;
	}
}

/* ---- pipelined copy ------------------------------------------------------- */

/* One chunk's full flag: seq = chunk position + 1 when full; next: the
 * slot the following position goes into (the sender's ring, see
 * shm_copy.c), published with seq. */
typedef struct ibx_shm_chunk_hdr {
	_Atomic uint64_t seq;
	uint64_t len;
	uint32_t next;
	uint8_t pad[IBX_CACHELINE - 20];
} __attribute__((aligned(IBX_CACHELINE))) ibx_shm_chunk_hdr_t;

/* The same ordering points as the ring, for pipe chunks. */
static inline void chunk_publish(ibx_shm_chunk_hdr_t *c, uint64_t pos)
{
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
}

static inline bool chunk_consume(ibx_shm_chunk_hdr_t *c, uint64_t pos)
{
	return atomic_load_explicit(&c->seq, memory_order_acquire) == pos + 1;
}

/* The sender's choice of ring (shm_copy.c): times of batches of a stream
 * through each of the two rings, and the clock of the current one. */
enum { IBX_SHM_RING_SMALL, IBX_SHM_RING_LARGE };
#define IBX_SHM_RING_SAMPLES 5
typedef struct ibx_shm_ring_tune {
	uint32_t small;			      /* 0: the ring is fixed */
	uint8_t want;			      /* ring to measure or keep (IBX_SHM_RING_*) */
	uint8_t samples[2];		      /* batches timed per ring */
	bool decided;			      /* both measured: @want is the faster */
	bool announce;			      /* decided since the owner last looked */
	uint64_t ns[2][IBX_SHM_RING_SAMPLES]; /* batch times per ring */
	uint64_t median_ns[2];		      /* their medians, once complete */
	uint64_t last_ns;		      /* last publication */
	uint64_t streak_bytes;		      /* published since the stream's last pause */
	uint64_t batch_t0;		      /* ns; 0: no batch under way */
	uint64_t batch_bytes;		      /* published since batch_t0 */
} ibx_shm_ring_tune_t;

typedef struct ibx_shm_pipe {
	ibx_shm_chunk_hdr_t *hdrs;
	uint8_t *data;
	size_t chunk; /* bytes per chunk */
	size_t first; /* tx: a message's first chunk carries this much (ramp) */
	uint32_t nchunks;
	uint32_t slot;		  /* slot of position pos (tx: ours; rx: the sender's word) */
	uint32_t ring;		  /* tx: slots in rotation, 2..nchunks */
	uint64_t pos;		  /* next chunk position to fill (tx) or drain (rx) */
	uint64_t limit;		  /* tx: positions below are known free */
	ibx_shm_ack_t *ack;	  /* tx: own segment; rx: the writer's segment */
	ibx_shm_ring_tune_t tune; /* tx */
} ibx_shm_pipe_t;

/* No ramp: every chunk full (p->first = chunk; the path sets its ramp);
 * a fixed ring of all @nchunks until ibx_shm_pipe_tune_init. */
void ibx_shm_pipe_init(ibx_shm_pipe_t *p, ibx_shm_chunk_hdr_t *hdrs, uint8_t *data, size_t chunk,
		       uint32_t nchunks, ibx_shm_ack_t *ack);
/* Sender: a fixed ring of @ring chunks (0: measure and choose between
 * @small chunks and all of them). */
void ibx_shm_pipe_tune_init(ibx_shm_pipe_t *p, uint32_t ring, uint32_t small);
/* Sender: ring size chosen since the last call? (for the path's log line) */
bool ibx_shm_pipe_tune_announce(ibx_shm_pipe_t *p);
/* Sender: copies the next bytes of a message — of @req's bytes from
 * offset @at, at most @len (through the cursor for a typed request: the
 * segment pack of BC-SPUP), @off of them pushed before — into free chunks; returns the bytes copied
 * (0 when every chunk is still full). A chunk carries clamp(3 x (@off + bytes pushed by this call),
 * first, chunk): a small first chunk starts the receiver's copy early, the next ones soon fill
 * whole chunks; an @off of SIZE_MAX / 4 or more means whole chunks from the start. */
size_t ibx_shm_pipe_push(ibx_shm_pipe_t *p, const ibx_request_t *req, size_t at, size_t len,
			 size_t off);
/* Receiver: copies full chunks of the current message (at most @len bytes
 * remain) into @req's bytes from offset @at (unpacking a typed request)
 * and frees them; returns the bytes copied, or
 * (size_t)-1 if the writer published a chunk that does not fit. */
size_t ibx_shm_pipe_pull(ibx_shm_pipe_t *p, ibx_request_t *req, size_t at, size_t len);

/* ---- which copy for a rendezvous (shm_calib.c) ----------------------------- */

/* From this size a single copy is split between the two processes. */
#define IBX_SHM_CMA_SPLIT_MIN (64u << 10)
#define IBX_SHM_CALIB_CLASSES 4 /* sizes measured: 16k 64k 256k 1m */

/* One size: the per-process time of each copy (best of the repetitions). */
typedef struct ibx_shm_calib_time {
	uint64_t bytes;
	uint64_t pipe_ns; /* memcpy of bytes in pipe-chunk pieces */
	uint64_t cma_ns;  /* process_vm_readv of our part (half from the split size) */
} ibx_shm_calib_time_t;

enum {
	IBX_SHM_CALIB_DONE = 1u << 0, /* measured (else: the threshold was configured) */
	IBX_SHM_CALIB_CMA = 1u << 1,  /* the kernel copy worked */
	IBX_SHM_CALIB_OUT = 1u << 2,  /* out holds an out-of-cache measurement */
};

/* The node's answer, in its lowest rank's segment header. */
typedef struct ibx_shm_calib {
	uint64_t cma_from; /* rendezvous of this many bytes and more: CMA; 0: never */
	uint64_t cost_ns;  /* what measuring took */
	uint32_t flags;	   /* IBX_SHM_CALIB_* */
	uint32_t pad;
	ibx_shm_calib_time_t in[IBX_SHM_CALIB_CLASSES]; /* in cache, by size */
	ibx_shm_calib_time_t out;			/* out of cache */
} ibx_shm_calib_t;

/* Measures both copies (pipe chunks of @chunk bytes) and decides; about
 * 1-2 ms, 20 ms at most. IBX_ERR_NO_MEMORY if no buffer could be mapped. */
ibx_status_t ibx_shm_calibrate(size_t chunk, ibx_shm_calib_t *c_p);
/* The threshold the timings in @c call for (0: never CMA). */
uint64_t ibx_shm_calib_decide(const ibx_shm_calib_t *c);
/* "16k 5.41, 64k 4.08, ...; out of cache 256k 1.52": time of CMA / pipe. */
void ibx_shm_calib_describe(const ibx_shm_calib_t *c, char *buf, size_t size);

/* ---- segments ------------------------------------------------------------- */

#define IBX_SHM_MAGIC	0x69627873686d6c66ull /* "ibxshmlf" */
#define IBX_SHM_VERSION 3u
#define IBX_SHM_PREFIX	"ibx-"

typedef struct ibx_shm_geom {
	uint32_t ring_slots; /* power of two */
	uint32_t pipe_chunks;
	uint64_t pipe_chunk; /* multiple of 64 */
	uint32_t cells;	     /* eager cells per pair, 0..1024 */
	uint32_t cell_size;  /* multiple of 64, at most 64 KiB (0 without cells) */
} ibx_shm_geom_t;

typedef struct ibx_shm_seg_hdr {
	_Atomic uint64_t magic; /* stored last (release): the header is complete */
	uint32_t version;
	int32_t owner_rank;
	int32_t owner_pid;
	int32_t launcher_pid; /* parent at creation: the job is live while it is */
	uint32_t uid;
	uint32_t npeers;
	uint64_t pidns; /* inode of /proc/self/ns/pid: pids compare only within */
	uint64_t size;
	uint64_t area_off; /* first area */
	uint64_t area_size;
	ibx_shm_geom_t geom;
	ibx_shm_calib_t calib; /* the lowest local rank's: which rendezvous copy */
	char jobid[64];
	int32_t peers[]; /* ranks of the areas, ascending */
} ibx_shm_seg_hdr_t;

/* Where things sit inside one area (same for all areas of a segment). */
typedef struct ibx_shm_area_layout {
	size_t slots_off, ack_off, hdrs_off, data_off, cells_off, size;
} ibx_shm_area_layout_t;

typedef struct ibx_shm_area {
	ibx_shm_slot_t *slots;
	ibx_shm_ack_t *ack;
	ibx_shm_chunk_hdr_t *chunk_hdrs;
	uint8_t *chunks;
	uint8_t *cells;
} ibx_shm_area_t;

typedef struct ibx_shm_seg {
	void *base;
	size_t size;
	ibx_shm_seg_hdr_t *hdr;
	char path[PATH_MAX];
	bool owner;  /* we created it */
	bool linked; /* the name still exists (owner only) */
} ibx_shm_seg_t;

ibx_status_t ibx_shm_geom_check(const ibx_shm_geom_t *g);
ibx_status_t ibx_shm_area_layout(const ibx_shm_geom_t *g, ibx_shm_area_layout_t *l_p);
/* Path of rank's segment: <dir>/ibx-<jobid>-<rank>. */
ibx_status_t ibx_shm_seg_path(const char *dir, const char *jobid, int rank, char *out,
			      size_t outlen);
/* Creates, sizes, NUMA-places and first-touches the segment of @rank with
 * one area per rank of @peers (ascending, without @rank). */
ibx_status_t ibx_shm_seg_create(const char *dir, const char *jobid, int rank, const int *peers,
				int npeers, const ibx_shm_geom_t *g, ibx_shm_seg_t *seg);
/* Maps a peer's segment and checks its header (owner rank and pid, size). */
ibx_status_t ibx_shm_seg_attach(const char *path, int owner_rank, pid_t owner_pid, size_t size,
				ibx_shm_seg_t *seg);
/* Index of @rank's area, or -1. */
int ibx_shm_seg_area_index(const ibx_shm_seg_t *seg, int rank);
void ibx_shm_seg_area(const ibx_shm_seg_t *seg, int idx, ibx_shm_area_t *a);
/* Removes the name (owner; idempotent). The mappings stay valid. */
ibx_status_t ibx_shm_seg_unlink(ibx_shm_seg_t *seg);
/* Unmaps; an owner that has not unlinked yet does so first. */
void ibx_shm_seg_detach(ibx_shm_seg_t *seg);
/* Unlinks segments in @dir left by jobs that died before their ranks
 * unlinked them: our uid and pid namespace, creator dead and its launcher
 * dead. Returns how many were removed. */
int ibx_shm_sweep(const char *dir);

/* ---- single copy (CMA) ---------------------------------------------------- */

/* Moves @n local iovecs to/from [raddr, raddr + total) in process @pid
 * with process_vm_writev/readv, resuming partial transfers. */
ibx_status_t ibx_shm_cma_xfer(pid_t pid, const struct iovec *iov, int n, uint64_t raddr,
			      bool write);
/* Blocks to blocks: process_vm_writev of local iovecs into remote ones,
 * gathered by ibx_shm_cma_batch_add and sent in calls of up to
 * IBX_SHM_CMA_BATCH entries a side (ibx_shm_cma_batch_flush sends the rest).
 * Once a call fails the batch keeps its status and moves nothing more. */
#define IBX_SHM_CMA_BATCH 256
typedef struct ibx_shm_cma_batch {
	pid_t pid;
	ibx_status_t status;
	int nl, nr;
	struct iovec local[IBX_SHM_CMA_BATCH];
	struct iovec remote[IBX_SHM_CMA_BATCH];
} ibx_shm_cma_batch_t;
void ibx_shm_cma_batch_add(ibx_shm_cma_batch_t *b, const struct iovec *src, int n, uint64_t raddr,
			   size_t bytes);
ibx_status_t ibx_shm_cma_batch_flush(ibx_shm_cma_batch_t *b);

#endif /* IBX_SHM_INT_H */
