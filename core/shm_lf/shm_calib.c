/*
 * shm_calib.c — which copy carries a rendezvous on this machine: the
 * pipelined copy through shared chunks or the kernel single copy (CMA).
 * Neither wins everywhere: on a bare-metal server the kernel copy, which
 * moves every byte once, usually beats the pipe, which moves it twice; in
 * a virtual machine pinning the pages of every call (get_user_pages
 * through nested page tables) can make it the slower: on the 2-vCPU
 * Firecracker VMs of this project 1.4-1.6x out of cache and 2-14x in
 * cache (osu_bw 64 KiB: 16 GB/s by CMA against 58 by the pipe). So the
 * node measures, at start-up, instead of trusting a default that holds on
 * one host only.
 *
 * Cost model. Both copies keep the two processes busy at once:
 *
 *   pipe   sender memcpy user → chunk ┐ at the same time, chunk by chunk:
 *          receiver memcpy chunk → user┘ t_pipe(n) ≈ t_memcpy(n)
 *   CMA    receiver readv [0, n/2) ┐ at the same time (CTSW, shm_rndv.c):
 *          sender writev [n/2, n)  ┘ t_cma(n) ≈ t_kernel_copy(n/2)
 *          (below IBX_SHM_CMA_SPLIT_MIN the receiver reads all n alone)
 *
 * Splitting one message between the two copies never beats the faster
 * one: the time is linear in the split, so its minimum sits at an end.
 *
 * The calibration (node's lowest rank, in shm_init, ~1-2 ms; the result
 * goes into its segment header, which every local rank maps at connect, so
 * the whole node uses the one answer):
 *
 *   for n in 16k 64k 256k 1m, in cache (the same two buffers again, as the
 *   OSU benchmarks do):   t_pipe = memcpy of n in pipe-chunk pieces
 *                         t_cma  = process_vm_readv of our own memory,
 *                                  n/2 bytes (n from the split size)
 *   out of cache (x86: both buffers clflush'ed first), at 256k: the same
 *
 *   best of CALIB_REPS each (a preemption only ever adds time);
 *   r_in(n) = t_cma / t_pipe in cache, r_out = the same out of cache
 *
 * Process_vm_readv of our own address space takes the kernel path of a
 * real one (page pinning, per-page copy); what it misses (the other core's
 * cache) the pipe misses too. Which of the two patterns a program's
 * messages follow is not known in advance, so each size picks the copy
 * whose worse slowdown against the other is smaller:
 *
 *   loss(CMA) = max(r_in, r_out)   loss(pipe) = 1 / min(r_in, r_out)
 *   CMA  ⟺  loss(CMA) × margin < loss(pipe)  ⟺  r_in × r_out < 1 / margin
 *
 * with a margin of 1.21 (CALIB_MARGIN_PCT: CMA must be 10% faster in the
 * geometric mean of the two patterns; the pipe needs no ptrace permission
 * and pins no pages). The answer is a
 * threshold: the smallest size from which CMA wins at every measured size
 * above (sizes beyond 1m follow 1m), or 0, never.
 */
#define _GNU_SOURCE /* process_vm_readv */
#include "shm_int.h"

#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define CALIB_MAX	 (1u << 20) /* largest size measured */
#define CALIB_OUT_SIZE	 (256u << 10)
#define CALIB_REPS	 5
#define CALIB_OUT_REPS	 3
#define CALIB_BUDGET_NS	 (20 * 1000000ull) /* past this, one repetition each */
#define CALIB_MARGIN_PCT 121		   /* r_in * r_out * 1.21 < 1: 10% each */

static const uint32_t calib_sizes[IBX_SHM_CALIB_CLASSES] = {16u << 10, 64u << 10, 256u << 10,
							    1u << 20};

/* ---- the decision (pure: unit-tested with made-up timings) ---------------- */

/* r_in * r_out * margin < 1, as products of times: t_cma_in * t_cma_out * margin <
 * t_pipe_in * t_pipe_out. Without an out-of-cache figure, r_in alone
 * (squared, so that the margin means the same). */
static bool calib_cma_wins(const ibx_shm_calib_t *c, int i)
{
	const ibx_shm_calib_time_t *in = &c->in[i], *out = &c->out;
	long double cma, pipe;

	if (!in->pipe_ns || !in->cma_ns)
		return false;
	if (c->flags & IBX_SHM_CALIB_OUT) {
		cma = (long double)in->cma_ns * out->cma_ns;
		pipe = (long double)in->pipe_ns * out->pipe_ns;
	} else {
		cma = (long double)in->cma_ns * in->cma_ns;
		pipe = (long double)in->pipe_ns * in->pipe_ns;
	}
	return cma * CALIB_MARGIN_PCT < pipe * 100;
}

uint64_t ibx_shm_calib_decide(const ibx_shm_calib_t *c)
{
	uint64_t from = 0;

	if (!(c->flags & IBX_SHM_CALIB_CMA))
		return 0;
	/* from the largest size down, while CMA keeps winning */
	for (int i = IBX_SHM_CALIB_CLASSES - 1; i >= 0; i--) {
		if (!calib_cma_wins(c, i))
			break;
		from = c->in[i].bytes;
	}
	return from;
}

/* ---- the measurements ----------------------------------------------------- */

static void calib_evict(const uint8_t *b, size_t len)
{
#if defined(__x86_64__) || defined(__i386__)
	for (size_t off = 0; off < len; off += IBX_CACHELINE)
		__builtin_ia32_clflush(b + off);
	__builtin_ia32_mfence();
#else
	(void)b;
	(void)len;
#endif
}

/* The pipe's per-process work: @n bytes in @chunk pieces. */
static uint64_t calib_pipe_once(uint8_t *dst, const uint8_t *src, size_t n, size_t chunk)
{
	uint64_t t0 = ibx_time_ns();

	for (size_t off = 0; off < n; off += chunk) {
		memcpy(dst + off, src + off, n - off < chunk ? n - off : chunk);
		/* one memcpy per chunk, as the pipe does: no merging */
		__asm__ __volatile__("" : : "r"(dst) : "memory");
	}
	return ibx_time_ns() - t0;
}

/* The receiver's part of a CMA copy of a message of @n bytes; 0 when the
 * kernel refuses. */
static uint64_t calib_cma_once(uint8_t *dst, uint8_t *src, size_t n)
{
	size_t part = n >= IBX_SHM_CMA_SPLIT_MIN ? n / 2 : n;
	struct iovec l = {.iov_base = dst, .iov_len = part};
	struct iovec r = {.iov_base = src, .iov_len = part};
	uint64_t t0 = ibx_time_ns();
	ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);

	return got == (ssize_t)part ? ibx_time_ns() - t0 : 0;
}

static inline uint64_t min_ns(uint64_t a, uint64_t b)
{
	return !a || (b && b < a) ? b : a;
}

/* Best of @reps of both copies of @n bytes; @evict: out of cache. False
 * when the kernel refused CMA. */
static bool calib_measure(uint8_t *dst, uint8_t *src, size_t n, size_t chunk, int reps, bool evict,
			  uint64_t deadline, ibx_shm_calib_time_t *t)
{
	t->bytes = n;
	t->pipe_ns = t->cma_ns = 0;
	for (int r = 0; r < reps; r++) {
		uint64_t c;

		if (evict) {
			calib_evict(src, n);
			calib_evict(dst, n);
		}
		t->pipe_ns = min_ns(t->pipe_ns, calib_pipe_once(dst, src, n, chunk) ?: 1);
		if (evict) {
			calib_evict(src, n);
			calib_evict(dst, n);
		}
		c = calib_cma_once(dst, src, n);
		if (!c)
			return false;
		t->cma_ns = min_ns(t->cma_ns, c);
		if (ibx_time_ns() > deadline)
			break;
	}
	return true;
}

ibx_status_t ibx_shm_calibrate(size_t chunk, ibx_shm_calib_t *c_p)
{
	uint64_t t0 = ibx_time_ns(), deadline = t0 + CALIB_BUDGET_NS;
	ibx_shm_calib_t c = {0};
	uint8_t *mem, *src, *dst;
	bool ok = true;

	/* fresh anonymous pages, as user buffers are (no huge-page advice:
	 * the kernel copy pins 4 KiB pages unless the system says otherwise) */
	mem = mmap(NULL, 2 * (size_t)CALIB_MAX, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (mem == MAP_FAILED) {
		ibx_error("shm: calibration: cannot map 2 x %u bytes: %s", CALIB_MAX,
			  strerror(errno));
		return IBX_ERR_NO_MEMORY;
	}
	src = mem;
	dst = mem + CALIB_MAX;
	memset(src, 0x5a, CALIB_MAX);
	memset(dst, 0xa5, CALIB_MAX);
	for (int i = 0; i < IBX_SHM_CALIB_CLASSES && ok; i++) {
		/* a warm-up copy each way first: in cache means in cache */
		calib_pipe_once(dst, src, calib_sizes[i], chunk);
		ok = calib_measure(dst, src, calib_sizes[i], chunk, CALIB_REPS, false, deadline,
				   &c.in[i]);
	}
#if defined(__x86_64__) || defined(__i386__)
	if (ok) {
		ok = calib_measure(dst, src, CALIB_OUT_SIZE, chunk, CALIB_OUT_REPS, true, deadline,
				   &c.out);
		c.flags |= IBX_SHM_CALIB_OUT;
	}
#endif
	if (ok)
		c.flags |= IBX_SHM_CALIB_CMA;
	else
		ibx_info("shm: calibration: process_vm_readv of our own memory failed (%s): "
			 "the pipelined copy serves every rendezvous",
			 strerror(errno));
	munmap(mem, 2 * (size_t)CALIB_MAX);
	c.cma_from = ibx_shm_calib_decide(&c);
	c.cost_ns = ibx_time_ns() - t0;
	c.flags |= IBX_SHM_CALIB_DONE;
	*c_p = c;
	return IBX_OK;
}

/* "16k", "1m" */
static const char *calib_size_str(uint64_t n, char *buf, size_t size)
{
	if (n >= (1u << 20) && n % (1u << 20) == 0)
		snprintf(buf, size, "%llum", (unsigned long long)(n >> 20));
	else if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, size, "%lluk", (unsigned long long)(n >> 10));
	else
		snprintf(buf, size, "%llu", (unsigned long long)n);
	return buf;
}

void ibx_shm_calib_describe(const ibx_shm_calib_t *c, char *buf, size_t size)
{
	size_t len = 0;
	char s[24];

	buf[0] = '\0';
	for (int i = 0; i < IBX_SHM_CALIB_CLASSES && len < size; i++) {
		const ibx_shm_calib_time_t *t = &c->in[i];

		if (!t->pipe_ns || !t->cma_ns)
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%s %.2f", len ? ", " : "",
					calib_size_str(t->bytes, s, sizeof(s)),
					(double)t->cma_ns / (double)t->pipe_ns);
	}
	if ((c->flags & IBX_SHM_CALIB_OUT) && c->out.pipe_ns && len < size)
		snprintf(buf + len, size - len, "; out of cache %s %.2f",
			 calib_size_str(c->out.bytes, s, sizeof(s)),
			 (double)c->out.cma_ns / (double)c->out.pipe_ns);
}
