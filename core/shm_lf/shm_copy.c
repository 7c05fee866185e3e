/*
 * shm_copy.c — the two ways the node-local path moves a large message:
 *
 * The pipelined copy. The chunks of pair i→j sit in j's segment. The
 * sender copies the next part of the message into chunk q and publishes
 * it; the receiver copies chunk q out while the sender already fills
 * chunk q+1, so the two copies of copy-through-shared-memory run on two
 * cores at once instead of one after the other ([Gropp97] §8: two memcpys are
 * the limit of a shared-memory transport; overlapping them is what brings
 * it close to one). The chunks of a message alone in the pipe ramp up:
 * the first carries IBX_SHM_PIPE_FIRST bytes, each next one up to three
 * times what was pushed before, up to a whole chunk (16k 48k 64k 64k ...
 * by default), so the receiver starts copying after a small one
 * (ping-pong). Behind other messages every chunk is whole: a stream pays
 * one hand-off (flag and ack lines crossing between the cores) per 64 KiB
 * rather than per 16 KiB (osu_bw 256 KiB-4 MiB: +5-15%, 2026-11-25):
 *
 *   sender                 chunk q % N            receiver
 *   wait pos < limit       (limit = consumed + N, re-read only when hit)
 *   memcpy in, len ──────► hdr.seq = q+1 (chunk_publish)
 *                                         chunk_consume(q+1) ──► memcpy out
 *                          ack.pipe_consumed = q+1 ◄──────────── (release)
 *
 * Chunks never mix two messages: the last chunk of a message may be short,
 * and the next message starts in the next chunk.
 *
 * The ring. The sender picks the slot of every position and writes the
 * slot of the next one into the chunk's header (hdr.next, published with
 * seq), so the receiver only follows the chain. Slots cycle through the
 * first R of the pair's N chunks, and R may change while the pipe is
 * empty. Which R is faster depends on where the two processes run, by
 * a factor of up to four (osu_bw, 64 KiB-4 MiB, measured here 2026-11-27):
 *
 *   two hyperthreads of one core: a small ring (4 x 64k) stays in the L2
 *     they share; a ring larger than L2 makes the writer fetch every line
 *     back from L3 (2026-11-25: 8 x 64k 10% slower);
 *   two cores: the reader takes every line of a small ring out of the
 *     writer's L2, modified, one snoop at a time (7-11 GB/s on Zen 4); a
 *     ring larger than L2 (32 x 64k) has pushed the lines out to the
 *     shared L3 before they are read (29-35 GB/s).
 *
 * The machine does not say which (a VM's topology hides hyperthreads),
 * so with IBX_SHM_PIPE_RING=0 (auto) the sender measures, per peer: it
 * starts with all N chunks; a stream (publications less than RING_GAP_NS
 * apart) is timed in batches of RING_BATCH bytes once RING_WARMUP bytes
 * of it have passed (an empty pipe first fills at the sender's own pace);
 * after RING_SAMPLES batches it switches to the small ring (once the pipe
 * is empty), times as many, and keeps the ring of the faster median
 * batch. The median: a preemption or a pause inside a batch moves one
 * sample, not the verdict. Two cores of Zen 4, osu_bw 1 MiB: medians of
 * 30-62 us per MiB through 32 chunks, 117-147 through 4.
 *
 *   position p in slot s: hdr[s] = {seq p+1, len, next}
 *   next = s + 1 < R ? s + 1 : 0      (with s ≥ R after a shrink: 0)
 *   the sender is at most R positions ahead of the receiver's ack, so a
 *   slot is reused only after the position before it in the slot was
 *   consumed; R changes only when ack == pos (everything consumed)
 *
 * The single copy. process_vm_readv/writev (CMA) let the kernel copy
 * between two address spaces once: one remote range (ibx_shm_cma_xfer), or
 * block lists on both sides in batches (ibx_shm_cma_batch_*, multi-w).
 * ptrace rules may refuse it (EPERM); the caller then falls back on the
 * pipe.
 */
#define _GNU_SOURCE /* process_vm_readv, sched_getcpu */
#include "shm_int.h"

#include <sys/uio.h>

void ibx_shm_pipe_init(ibx_shm_pipe_t *p, ibx_shm_chunk_hdr_t *hdrs, uint8_t *data, size_t chunk,
		       uint32_t nchunks, ibx_shm_ack_t *ack)
{
	p->hdrs = hdrs;
	p->data = data;
	p->chunk = chunk;
	p->first = chunk;
	p->nchunks = nchunks;
	p->slot = 0;
	p->ring = nchunks;
	p->pos = 0;
	p->limit = nchunks;
	p->ack = ack;
	memset(&p->tune, 0, sizeof(p->tune));
}

/* ---- the ring's size -------------------------------------------------------- */

#define RING_BATCH   (1u << 20)		  /* bytes of a timed batch */
#define RING_SAMPLES IBX_SHM_RING_SAMPLES /* batches per ring before choosing */
#define RING_GAP_NS  (200 * 1000ull)	  /* a longer pause ends a streak */
#define RING_WARMUP  (4u << 20)		  /* bytes of a streak before its first batch */

void ibx_shm_pipe_tune_init(ibx_shm_pipe_t *p, uint32_t ring, uint32_t small)
{
	memset(&p->tune, 0, sizeof(p->tune));
	p->ring = p->nchunks;
	if (ring >= 2) {
		p->ring = ring < p->nchunks ? ring : p->nchunks;
		p->limit = p->pos + p->ring; /* only before the first push */
		return;
	}
	if (small < 2 || small >= p->nchunks)
		return; /* nothing to choose from */
	p->tune.small = small;
	p->tune.want = IBX_SHM_RING_LARGE;
}

bool ibx_shm_pipe_tune_announce(ibx_shm_pipe_t *p)
{
	bool a = p->tune.announce;

	p->tune.announce = false;
	return a;
}

/* A streak ends, and the batch under way is dropped. */
static void ring_streak_end(ibx_shm_ring_tune_t *t)
{
	t->streak_bytes = 0;
	t->batch_t0 = 0;
}

static inline uint32_t ring_len(const ibx_shm_pipe_t *p, int which)
{
	return which == IBX_SHM_RING_SMALL ? p->tune.small : p->nchunks;
}

/* The ring we want, once the pipe is empty. */
static void ring_switch(ibx_shm_pipe_t *p)
{
	uint32_t want = ring_len(p, p->tune.want);
	uint64_t consumed = atomic_load_explicit(&p->ack->pipe_consumed, memory_order_acquire);

	if (consumed != p->pos)
		return;
	p->ring = want;
	p->limit = consumed + want;
	ring_streak_end(&p->tune);
}

static uint64_t median_ns(const uint64_t *v)
{
	uint64_t w[RING_SAMPLES];

	memcpy(w, v, sizeof(w));
	for (int i = 1; i < RING_SAMPLES; i++) /* insertion sort of a handful */
		for (int j = i; j > 0 && w[j] < w[j - 1]; j--) {
			uint64_t x = w[j];

			w[j] = w[j - 1];
			w[j - 1] = x;
		}
	return w[RING_SAMPLES / 2];
}

/* A batch through the ring in use is done: note it, move on to the other
 * ring or decide. */
static void ring_sample(ibx_shm_ring_tune_t *t, uint64_t ns)
{
	int r = t->want, other = !r;

	t->ns[r][t->samples[r]] = ns;
	if (++t->samples[r] < RING_SAMPLES)
		return;
	t->median_ns[r] = median_ns(t->ns[r]);
	if (t->samples[other] < RING_SAMPLES) {
		t->want = (uint8_t)other;
		return;
	}
	t->want = t->median_ns[IBX_SHM_RING_SMALL] < t->median_ns[IBX_SHM_RING_LARGE]
		      ? IBX_SHM_RING_SMALL
		      : IBX_SHM_RING_LARGE;
	t->decided = t->announce = true;
}

/* After publishing @n bytes: the batch clock. A streak is a run of
 * publications less than RING_GAP_NS apart; its first RING_WARMUP bytes
 * are not timed, then every RING_BATCH bytes are a sample. */
static void ring_account(ibx_shm_pipe_t *p, size_t n)
{
	ibx_shm_ring_tune_t *t = &p->tune;
	uint64_t now;

	if (t->decided || p->ring != ring_len(p, t->want))
		return; /* not the ring to measure yet: waiting for an empty pipe */
	now = ibx_time_ns();
	if (now - t->last_ns > RING_GAP_NS)
		ring_streak_end(t);
	t->last_ns = now;
	t->streak_bytes += n;
	if (!t->batch_t0) {
		if (t->streak_bytes >= RING_WARMUP) {
			t->batch_t0 = now;
			t->batch_bytes = 0;
		}
		return;
	}
	t->batch_bytes += n;
	if (t->batch_bytes >= RING_BATCH) {
		ring_sample(t, (now - t->batch_t0) * RING_BATCH / t->batch_bytes);
		t->batch_t0 = now;
		t->batch_bytes = 0;
	}
}

size_t ibx_shm_pipe_push(ibx_shm_pipe_t *p, const ibx_request_t *req, size_t at, size_t len,
			 size_t off)
{
	bool tuning = p->tune.small && !(p->tune.decided && p->ring == ring_len(p, p->tune.want));
	size_t done = 0;

	if (ibx_unlikely(tuning) && p->ring != ring_len(p, p->tune.want))
		ring_switch(p);
	while (done < len) {
		size_t want = 3 * (off + done) < p->first ? p->first : 3 * (off + done);
		uint32_t c = p->slot, next = c + 1 < p->ring ? c + 1 : 0;
		size_t n;

		if (p->pos >= p->limit) {
			/* acquire: the receiver has copied the chunk out before we
			 * overwrite it */
			p->limit =
			    atomic_load_explicit(&p->ack->pipe_consumed, memory_order_acquire) +
			    p->ring;
			if (p->pos >= p->limit)
				break;
		}
		if (want > p->chunk)
			want = p->chunk;
		n = len - done < want ? len - done : want;
		ibx_req_copy_out(req, at + done, p->data + (size_t)c * p->chunk, n);
		p->hdrs[c].len = n;
		p->hdrs[c].next = next;
		chunk_publish(&p->hdrs[c], p->pos);
		if (ibx_unlikely(tuning))
			ring_account(p, n);
		p->slot = next;
		p->pos++;
		done += n;
	}
	return done;
}

size_t ibx_shm_pipe_pull(ibx_shm_pipe_t *p, ibx_request_t *req, size_t at, size_t len)
{
	size_t done = 0;

	while (done < len) {
		uint32_t c = p->slot, next;
		size_t n;

		if (!chunk_consume(&p->hdrs[c], p->pos))
			break;
		n = p->hdrs[c].len;
		next = p->hdrs[c].next;
		if (ibx_unlikely(n == 0 || n > p->chunk || n > len - done || next >= p->nchunks))
			return (size_t)-1;
		ibx_req_copy_in(req, at + done, p->data + (size_t)c * p->chunk, n);
		p->slot = next;
		p->pos++;
		done += n;
		/* per chunk, so that the sender refills while we copy the next */
		atomic_store_explicit(&p->ack->pipe_consumed, p->pos, memory_order_release);
	}
	return done;
}

#define CMA_IOV_BATCH 256

/* What a failed process_vm_readv/writev means: refused by the kernel's
 * rules (the caller falls back on the pipe), the process gone, an address
 * not mapped on one side, ... */
static ibx_status_t cma_errno_status(int err)
{
	switch (err) {
	case EPERM:
	case ENOSYS: return IBX_ERR_UNSUPPORTED;
	case ESRCH: return IBX_ERR_UNREACHABLE;
	case EFAULT: return IBX_ERR_REMOTE_ACCESS;
	case ENOMEM: return IBX_ERR_NO_MEMORY;
	default: return IBX_ERR_IO;
	}
}

/* Drops @n bytes from the front of an iovec list. */
static void iov_advance(struct iovec **iov_p, int *n_p, size_t n)
{
	while (n && *n_p) {
		struct iovec *v = *iov_p;

		if (n < v->iov_len) {
			v->iov_base = (char *)v->iov_base + n;
			v->iov_len -= n;
			return;
		}
		n -= v->iov_len;
		(*iov_p)++;
		(*n_p)--;
	}
	while (*n_p && (*iov_p)->iov_len == 0) {
		(*iov_p)++;
		(*n_p)--;
	}
}

ibx_status_t ibx_shm_cma_xfer(pid_t pid, const struct iovec *iov, int n, uint64_t raddr, bool write)
{
	struct iovec local[CMA_IOV_BATCH];
	int i = 0;
	size_t skip = 0; /* bytes of iov[i] already moved */

	while (i < n) {
		struct iovec remote;
		size_t total = 0;
		int cnt = 0;
		ssize_t r;

		for (int k = i; k < n && cnt < CMA_IOV_BATCH; k++) {
			size_t off = k == i ? skip : 0;

			if (iov[k].iov_len - off == 0)
				continue;
			local[cnt].iov_base = (char *)iov[k].iov_base + off;
			local[cnt].iov_len = iov[k].iov_len - off;
			total += local[cnt].iov_len;
			cnt++;
		}
		if (!cnt)
			break;
		remote.iov_base = (void *)(uintptr_t)raddr;
		remote.iov_len = total;
		r = write ? process_vm_writev(pid, local, (unsigned long)cnt, &remote, 1, 0)
			  : process_vm_readv(pid, local, (unsigned long)cnt, &remote, 1, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return cma_errno_status(errno);
		}
		if (r == 0) {
			errno = EFAULT;
			return IBX_ERR_REMOTE_ACCESS;
		}
		raddr += (uint64_t)r;
		/* resume after a partial transfer */
		for (size_t left = (size_t)r; left;) {
			size_t avail = iov[i].iov_len - skip;

			if (left < avail) {
				skip += left;
				left = 0;
			} else {
				left -= avail;
				i++;
				skip = 0;
			}
		}
		while (i < n && iov[i].iov_len == skip) {
			i++;
			skip = 0;
		}
	}
	return IBX_OK;
}

/* One process_vm_writev of the batch, resumed after a partial transfer
 * (the kernel stops at the first fault; EFAULT then tells which side). */
static ibx_status_t batch_send(ibx_shm_cma_batch_t *b)
{
	struct iovec *l = b->local, *r = b->remote;
	int nl = b->nl, nr = b->nr;

	while (nl && nr) {
		ssize_t got =
		    process_vm_writev(b->pid, l, (unsigned long)nl, r, (unsigned long)nr, 0);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return cma_errno_status(errno);
		if (got == 0) {
			errno = EFAULT;
			return IBX_ERR_REMOTE_ACCESS;
		}
		iov_advance(&l, &nl, (size_t)got);
		iov_advance(&r, &nr, (size_t)got);
	}
	return nl || nr ? IBX_ERR_CORRUPT : IBX_OK; /* the two sides' bytes differ */
}

ibx_status_t ibx_shm_cma_batch_flush(ibx_shm_cma_batch_t *b)
{
	if (b->status == IBX_OK && (b->nl || b->nr))
		b->status = batch_send(b);
	b->nl = b->nr = 0;
	return b->status;
}

void ibx_shm_cma_batch_add(ibx_shm_cma_batch_t *b, const struct iovec *src, int n, uint64_t raddr,
			   size_t bytes)
{
	if (b->status != IBX_OK)
		return;
	if (b->nr == IBX_SHM_CMA_BATCH || b->nl + n > IBX_SHM_CMA_BATCH)
		ibx_shm_cma_batch_flush(b);
	if (n > IBX_SHM_CMA_BATCH) { /* more sender blocks than a call takes */
		struct iovec one = {.iov_base = (void *)(uintptr_t)raddr, .iov_len = bytes};

		for (int i = 0; i < n && b->status == IBX_OK; i += IBX_SHM_CMA_BATCH) {
			int k = n - i < IBX_SHM_CMA_BATCH ? n - i : IBX_SHM_CMA_BATCH;
			size_t part = 0;

			for (int j = 0; j < k; j++)
				part += src[i + j].iov_len;
			memcpy(b->local, src + i, (size_t)k * sizeof(*src));
			b->nl = k;
			one.iov_len = part;
			b->remote[0] = one;
			b->nr = 1;
			ibx_shm_cma_batch_flush(b);
			one.iov_base = (char *)one.iov_base + part;
		}
		return;
	}
	memcpy(b->local + b->nl, src, (size_t)n * sizeof(*src));
	b->nl += n;
	b->remote[b->nr].iov_base = (void *)(uintptr_t)raddr;
	b->remote[b->nr].iov_len = bytes;
	b->nr++;
}
