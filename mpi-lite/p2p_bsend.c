/*
 * p2p_bsend.c — buffered mode (MPI-3.1 §3.6): MPI_Buffer_attach,
 * MPI_Buffer_detach, MPI_Bsend and MPI_Ibsend (MPI_Bsend_init starts
 * through mpil_bsend too).
 *
 * A buffered send copies its message into the buffer the user attached and
 * sends it from there, so it completes at once whatever the receiver does.
 * Each message is one block of the buffer, an MPI_BSEND_OVERHEAD-bounded
 * header followed by the packed message:
 *
 *   ┌──────────────── block ────────────────┐
 *   │ ibx_request_t │ next │ size │ message │    (8-byte aligned)
 *   └───────────────────────────────────────┘
 *
 * The header holds the message's engine send request: the attached buffer
 * does not move until it is detached, and detaching waits for every send,
 * so the request stays in place until the engine completes it, as the
 * engine requires — no request from the pool, no allocation per message.
 *
 * Space is allocated as §3.6.1 models it: circular and contiguous. Blocks
 * follow each other in the order of the Bsend calls, from the end of the
 * newest one, wrapping to the start of the buffer when the rest of it is
 * too small; the oldest block is reclaimed once its send has completed
 * (and with it every following block whose send has completed):
 *
 *   base                                                               end
 *    │ free │ oldest │ ... │ newest │ free: the next block goes here ... │
 *    │ ... │ newest │ free: ... or here │ oldest │ ... │ wasted (too short) │
 *                                                       (wrapped)
 *
 * When the message does not fit, the engine progresses once and completed
 * blocks are reclaimed; if it still does not fit the call fails with
 * MPI_ERR_BUFFER at once, as in Open MPI and MPICH (it does not wait for
 * space, which could deadlock). A failed send of a buffered message (its
 * peer lost) cannot be reported to anyone; the engine logs it.
 */
#include "p2p_int.h"

#define BSEND_ALIGN _Alignof(bsend_block_t)

typedef struct bsend_block {
	ibx_request_t ibx;	  /* the message's send: in place until complete */
	struct bsend_block *next; /* the next newer block */
	size_t size;		  /* bytes of the block, header included, aligned */
} bsend_block_t;

/* A message of n bytes needs at most MPI_BSEND_OVERHEAD more in the buffer:
 * the header, the padding of the message to the next block, and the
 * alignment of the buffer's start (once per buffer). */
_Static_assert(sizeof(bsend_block_t) + 2 * (_Alignof(bsend_block_t) - 1) <= MPI_BSEND_OVERHEAD,
	       "MPI_BSEND_OVERHEAD (mpi.h) is smaller than a buffered message's header");

static struct {
	bool attached;
	void *user; /* as attached: what MPI_Buffer_detach returns */
	int user_size;
	char *base, *end; /* the aligned part of it */
	bsend_block_t *oldest, *newest;
} bsend;

static inline size_t align_up(size_t n)
{
	return (n + BSEND_ALIGN - 1) & ~(size_t)(BSEND_ALIGN - 1);
}

/* Reclaims the blocks whose sends have completed, oldest first. */
static void ring_reclaim(void)
{
	while (bsend.oldest && __atomic_load_n(&bsend.oldest->ibx.completed, __ATOMIC_ACQUIRE))
		bsend.oldest = bsend.oldest->next;
	if (!bsend.oldest)
		bsend.newest = NULL; /* empty: the next block starts at base again */
}

/* Where a block of @need bytes fits after the newest block, or NULL. */
static char *ring_find(size_t need)
{
	char *o, *e;

	if (!bsend.oldest)
		return (size_t)(bsend.end - bsend.base) >= need ? bsend.base : NULL;
	o = (char *)bsend.oldest;
	e = (char *)bsend.newest + bsend.newest->size;
	if (e > o) { /* not wrapped: free space after the newest, then before the oldest */
		if ((size_t)(bsend.end - e) >= need)
			return e;
		return (size_t)(o - bsend.base) >= need ? bsend.base : NULL;
	}
	return (size_t)(o - e) >= need ? e : NULL; /* wrapped: the gap between them */
}

static size_t ring_used(void)
{
	size_t n = 0;

	for (bsend_block_t *b = bsend.oldest; b; b = b->next)
		n += b->size;
	return n;
}

/* A block of @need bytes, or NULL (reported on @comm) when none fits. */
static bsend_block_t *block_alloc(size_t need, size_t msglen, MPI_Comm comm, const char *fname)
{
	char *at;

	ring_reclaim();
	at = ring_find(need);
	if (!at) {
		ibx_progress(mpil_g.ctx);
		ring_reclaim();
		at = ring_find(need);
	}
	if (ibx_likely(at != NULL))
		return (bsend_block_t *)at;
	if (!bsend.attached)
		mpil_err(comm, MPI_ERR_BUFFER, fname,
			 "no buffer attached for a buffered send (MPI_Buffer_attach)");
	else
		mpil_err(comm, MPI_ERR_BUFFER, fname,
			 "no room for a %zu-byte message in the attached buffer of %d bytes "
			 "(%zu in use; each message takes its size plus MPI_BSEND_OVERHEAD = %d)",
			 msglen, bsend.user_size, ring_used(), MPI_BSEND_OVERHEAD);
	return NULL;
}

static void block_append(bsend_block_t *b, size_t size)
{
	b->size = size;
	b->next = NULL;
	if (bsend.newest)
		bsend.newest->next = b;
	else
		bsend.oldest = b;
	bsend.newest = b;
}

int mpil_bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
	       const char *fname)
{
	size_t len = (size_t)count * dt->size, need;
	bsend_block_t *b;
	ibx_status_t st;
	void *data;

	if (dest == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (ibx_unlikely(len > (size_t)INT_MAX))
		return mpil_err(comm, MPI_ERR_BUFFER, fname,
				"a %zu-byte message exceeds any buffer MPI_Buffer_attach takes",
				len);
	need = align_up(sizeof(*b) + len);
	b = block_alloc(need, len, comm, fname);
	if (ibx_unlikely(!b))
		return MPI_ERR_BUFFER;
	data = b + 1;
	if (len && mpil_dt_contig(dt))
		memcpy(data, mpil_data_start(buf, dt), len);
	else if (len)
		mpil_dt_pack(dt, buf, count, data);
	b->ibx.cb = NULL;
	st = ibx_tag_send(mpil_g.ctx, mpil_comm_to_world(comm, dest), data, len,
			  mpil_tag(comm->cid, tag), 0, &b->ibx);
	if (ibx_unlikely(st < 0))
		return mpil_err_ibx(comm, fname, st, true, dest); /* the block stays free */
	block_append(b, need);
	return MPI_SUCCESS;
}

/* ---- the buffer ----------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Buffer_attach)
int PMPI_Buffer_attach(void *buffer, int size)
{
	static const char F[] = "MPI_Buffer_attach";
	MPIL_CS_GUARD();
	uintptr_t start, end;

	MPIL_CHECK(mpil_check_init(F));
	if (size < 0)
		return mpil_err(NULL, MPI_ERR_ARG, F, "negative size %d", size);
	if (!buffer && size > 0)
		return mpil_err(NULL, MPI_ERR_BUFFER, F, "NULL buffer of %d bytes", size);
	if (bsend.attached)
		return mpil_err(NULL, MPI_ERR_BUFFER, F,
				"a buffer (%p, %d bytes) is attached already: detach it first",
				bsend.user, bsend.user_size);
	start = align_up((uintptr_t)buffer);
	end = (uintptr_t)buffer + (size_t)size;
	bsend.attached = true;
	bsend.user = buffer;
	bsend.user_size = size;
	bsend.base = (char *)start;
	bsend.end = (char *)(start < end ? end : start);
	bsend.oldest = bsend.newest = NULL;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Buffer_detach)
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
	static const char F[] = "MPI_Buffer_detach";
	MPIL_CS_GUARD();
	unsigned idle = 0;

	MPIL_CHECK(mpil_check_init(F));
	if (!buffer_addr || !size)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL",
				buffer_addr ? "size" : "buffer_addr");
	/* Nothing attached: a NULL buffer of 0 bytes (as MPICH; the
	 * standard says nothing). */
	if (!bsend.attached) {
		*(void **)buffer_addr = NULL;
		*size = 0;
		return MPI_SUCCESS;
	}
	/* Every buffered message must have left the buffer (§3.6.1). */
	for (ring_reclaim(); bsend.oldest; ring_reclaim())
		ibx_progress_wait(mpil_g.ctx, &idle);
	*(void **)buffer_addr = bsend.user;
	*size = bsend.user_size;
	memset(&bsend, 0, sizeof(bsend));
	return MPI_SUCCESS;
}

void mpil_bsend_fini(void)
{
	/* The engine has drained every send (ibx_finalize): the blocks are
	 * complete; the buffer stays the user's. */
	memset(&bsend, 0, sizeof(bsend));
}

/* ---- sends ---------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Bsend)
int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	static const char F[] = "MPI_Bsend";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_send(buf, count, datatype, dest, tag, comm, F));
	return mpil_bsend(buf, count, datatype, dest, tag, comm, F);
}

MPIL_PMPI_ALIAS(Ibsend)
int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
		MPI_Request *request)
{
	static const char F[] = "MPI_Ibsend";
	MPIL_CS_GUARD();
	mpil_request_t *r;
	int err;

	MPIL_CHECK(mpil_check_send(buf, count, datatype, dest, tag, comm, F));
	MPIL_CHECK(mpil_check_request_ptr(comm, request, F));
	r = mpil_req_alloc();
	if (ibx_unlikely(!r))
		return mpil_err(comm, MPI_ERR_NO_MEM, F, "no memory for a request");
	mpil_req_hold(r, comm, NULL);
	/* The copy is the whole operation: the request is complete at once. */
	err = mpil_bsend(buf, count, datatype, dest, tag, comm, F);
	if (ibx_unlikely(err != MPI_SUCCESS)) {
		mpil_req_release(r);
		return err;
	}
	mpil_req_preset(r, dest == MPI_PROC_NULL ? MPI_PROC_NULL : MPI_ANY_SOURCE);
	*request = r;
	return MPI_SUCCESS;
}
