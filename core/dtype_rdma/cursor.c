/*
 * cursor.c — partial processing of the packed stream of (type, count):
 * pack, unpack and block listing of any byte range [a, b).
 *
 * A cursor is a stack of frames, one per loop level from the count loop
 * down to a leaf, each holding its iteration i, copy j and base address:
 *
 *     f[0] count loop   i=17          base = buf
 *     f[1] STRUCT       i=1           base = buf + 17*extent
 *     f[2] VEC leaf     i=5, lpos=3   run at base + off + 5*stride, 3 bytes done
 *
 * Seeking to packed offset a walks down once: at each level the iteration
 * is a / (packed bytes per iteration) for regular loops, a binary search
 * of the prefix array for indexed ones; the remainder goes one level down.
 * So a seek costs O(depth) divisions (O(log blocks) for indexed levels),
 * never a replay from 0 — a BC-SPUP segment in the middle of a 10^8-block
 * vector starts as fast as the first one.
 *
 * Moving then runs the leaf loop; a VEC leaf (fixed block length, fixed
 * stride) is handed whole to a gather/scatter kernel specialised for 4, 8,
 * 16, 32 and 64-byte blocks (compile-time memcpy sizes become plain vector
 * loads/stores) and to memcpy per block above that (packing 512 B - 64 KiB
 * blocks: the CPU's string copy, see DT_MOVSB_MIN). Addresses are computed
 * in uint64_t so that negative displacements and strides wrap as intended.
 */
#include "dtype_int.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

enum { OP_PACK, OP_UNPACK, OP_EMIT };

typedef struct walk walk_t;
struct walk {
	int op;
	char *mem; /* pack: destination, unpack: source */
	ibx_status_t (*emit)(walk_t *w, int64_t pos, uint64_t addr, int64_t len);
	/* block callback, with one pending block being merged */
	ibx_dt_block_cb_t cb;
	void *arg;
	bool pending;
	int64_t ppos, plen;
	uint64_t paddr;
	/* iovec */
	struct iovec *iov;
	int niov, max_iov;
};

/* ---- kernels ----------------------------------------------------------------------- */

/* The strided side is an integer address: stepping past the last block
 * must not form an out-of-range pointer (a peer's count-1 loop may carry any
 * stride), and integer induction variables vectorise just as well. Blocks of
 * a cache line and more prefetch the source a few blocks ahead: a strided
 * stream with gaps defeats part of the hardware prefetcher. */
#define DT_PF_AHEAD 8
#define DT_KERNELS(N, attr, sfx)                                                                   \
	attr static void gather_##N##sfx(char *restrict d, uint64_t s, int64_t stride, int64_t n)  \
	{                                                                                          \
		for (int64_t k = 0; k < n; k++, d += N, s += (uint64_t)stride) {                   \
			if (N >= 64)                                                               \
				__builtin_prefetch((                                               \
				    const void *)(uintptr_t)(s + DT_PF_AHEAD * (uint64_t)stride)); \
			memcpy(d, (const char *)(uintptr_t)s, N);                                  \
		}                                                                                  \
	}                                                                                          \
	attr static void scatter_##N##sfx(uint64_t d, const char *restrict s, int64_t stride,      \
					  int64_t n)                                               \
	{                                                                                          \
		for (int64_t k = 0; k < n; k++, d += (uint64_t)stride, s += N)                     \
			memcpy((char *)(uintptr_t)d, s, N);                                        \
	}
DT_KERNELS(1, , )
DT_KERNELS(2, , )
DT_KERNELS(4, , )
DT_KERNELS(8, , )
DT_KERNELS(16, , )
DT_KERNELS(32, , )
DT_KERNELS(64, , )

#if defined(__x86_64__)
/* 32-byte moves where the CPU has them (the baseline x86-64 build has 16,
 * and compilers tuned for it split 32-byte memcpy into halves anyway) */
#define DT_AVX2 __attribute__((target("avx2")))
#define DT_KERNELS_AVX2(N)                                                                         \
	DT_AVX2 static void gather_##N##_avx2(char *restrict d, uint64_t s, int64_t stride,        \
					      int64_t n)                                           \
	{                                                                                          \
		for (int64_t k = 0; k < n; k++, d += N, s += (uint64_t)stride) {                   \
			const __m256i *p = (const __m256i *)(uintptr_t)s;                          \
			if (N >= 64)                                                               \
				__builtin_prefetch((                                               \
				    const void *)(uintptr_t)(s + DT_PF_AHEAD * (uint64_t)stride)); \
			for (int w = 0; w < N / 32; w++)                                           \
				_mm256_storeu_si256((__m256i *)d + w, _mm256_loadu_si256(p + w));  \
		}                                                                                  \
	}                                                                                          \
	DT_AVX2 static void scatter_##N##_avx2(uint64_t d, const char *restrict s, int64_t stride, \
					       int64_t n)                                          \
	{                                                                                          \
		for (int64_t k = 0; k < n; k++, d += (uint64_t)stride, s += N) {                   \
			__m256i *p = (__m256i *)(uintptr_t)d;                                      \
			for (int w = 0; w < N / 32; w++)                                           \
				_mm256_storeu_si256(p + w,                                         \
						    _mm256_loadu_si256((const __m256i *)s + w));   \
		}                                                                                  \
	}
DT_KERNELS_AVX2(32)
DT_KERNELS_AVX2(64)
#define dt_have_avx2() __builtin_cpu_supports("avx2")

/*
 * Packing blocks of 512 B - 64 KiB: `rep movsb` rather than memcpy, where
 * the CPU has fast strings (ERMS). Below its own threshold (8 KiB with
 * AVX-512) glibc copies with vector registers, whose every store first
 * fetches the line; the string copy writes whole lines without fetching
 * them. It matters when the destination is a pipe chunk the other core
 * has just read: the vector benchmark (`ibtest dtype`, 128 blocks 16 KiB
 * apart, 2 cores, 2026-11-26) went from 28.4 to 39.6 GB/s with 1 KiB blocks
 * and 31.4 to 43.4 GB/s with 2 KiB ones (one-way latency 5.44 -> 4.25 and
 * 8.4 -> 6.4 us). 256 B blocks and 4 KiB ones gained nothing; unpacking
 * (stores into the receiver's own lines) neither.
 *
 * These blocks prefetch every line of the block DT_PF_BLOCKS ahead, not
 * only its first: each block starts a new page, where the hardware's
 * streamer stops, and a stride that is a multiple of 4 KiB folds the
 * blocks onto a fraction of the L2 sets, so they come from L3. 4 KiB
 * blocks 16 KiB apart: 37-42 -> 47-48 GB/s (1024 columns; 2 and 4 blocks
 * ahead alike, smaller blocks no better).
 */
#define DT_MOVSB_MIN 512
#define DT_MOVSB_MAX (64 << 10)
#define DT_PF_BLOCKS 2

static inline void prefetch_block(uint64_t a, int64_t len)
{
	for (int64_t o = 0; o < len; o += 64)
		__builtin_prefetch((const void *)(uintptr_t)(a + (uint64_t)o));
}
static bool dt_have_erms(void)
{
	static int have = -1;
	unsigned a, b, c, d;

	if (have < 0) {
		__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0));
		have = 0;
		if (a >= 7) {
			__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
			have = (b >> 9) & 1; /* CPUID.(EAX=7,ECX=0):EBX.ERMS[bit 9] */
		}
	}
	return have;
}

static inline void copy_movsb(char *d, const char *s, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}
#else
#define dt_have_avx2()	0
#define gather_32_avx2	gather_32
#define gather_64_avx2	gather_64
#define scatter_32_avx2 scatter_32
#define scatter_64_avx2 scatter_64
#define DT_MOVSB_MIN	INT64_MAX
#define DT_MOVSB_MAX	0
#define dt_have_erms()	false
#define copy_movsb	memcpy
#define DT_PF_BLOCKS	0
#define prefetch_block(a, len)
#endif

static void gather(char *restrict d, uint64_t s, int64_t stride, int64_t blen, int64_t n)
{
	switch (blen) {
	case 1: gather_1(d, s, stride, n); return;
	case 2: gather_2(d, s, stride, n); return;
	case 4: gather_4(d, s, stride, n); return;
	case 8: gather_8(d, s, stride, n); return;
	case 16: gather_16(d, s, stride, n); return;
	case 32:
		dt_have_avx2() ? gather_32_avx2(d, s, stride, n) : gather_32(d, s, stride, n);
		return;
	case 64:
		dt_have_avx2() ? gather_64_avx2(d, s, stride, n) : gather_64(d, s, stride, n);
		return;
	}
	if (stride == blen) {
		memcpy(d, (const char *)(uintptr_t)s, (size_t)(blen * n));
		return;
	}
	if (blen >= DT_MOVSB_MIN && blen < DT_MOVSB_MAX && dt_have_erms()) {
		for (int64_t k = 0; k < n; k++, d += blen, s += (uint64_t)stride) {
			prefetch_block(s + DT_PF_BLOCKS * (uint64_t)stride, blen);
			copy_movsb(d, (const char *)(uintptr_t)s, (size_t)blen);
		}
		return;
	}
	for (int64_t k = 0; k < n; k++, d += blen, s += (uint64_t)stride) {
		__builtin_prefetch((const void *)(uintptr_t)(s + DT_PF_AHEAD * (uint64_t)stride));
		memcpy(d, (const char *)(uintptr_t)s, (size_t)blen);
	}
}

static void scatter(uint64_t d, const char *restrict s, int64_t stride, int64_t blen, int64_t n)
{
	switch (blen) {
	case 1: scatter_1(d, s, stride, n); return;
	case 2: scatter_2(d, s, stride, n); return;
	case 4: scatter_4(d, s, stride, n); return;
	case 8: scatter_8(d, s, stride, n); return;
	case 16: scatter_16(d, s, stride, n); return;
	case 32:
		dt_have_avx2() ? scatter_32_avx2(d, s, stride, n) : scatter_32(d, s, stride, n);
		return;
	case 64:
		dt_have_avx2() ? scatter_64_avx2(d, s, stride, n) : scatter_64(d, s, stride, n);
		return;
	}
	if (stride == blen) {
		memcpy((char *)(uintptr_t)d, s, (size_t)(blen * n));
		return;
	}
	for (int64_t k = 0; k < n; k++, d += (uint64_t)stride, s += blen)
		memcpy((char *)(uintptr_t)d, s, (size_t)blen);
}

/* ---- frames -------------------------------------------------------------------------- */

static inline int64_t it_copies(const ibx_dt_cursor_t *c, const ibx_dt_loop_t *n, int64_t i)
{
	switch (n->kind) {
	case IBX_DT_LOOP_IDX: return c->aux[n->aux + (uint64_t)n->count + (uint64_t)i];
	case IBX_DT_LOOP_STRUCT: return 1;
	default: return n->blen;
	}
}

static inline uint64_t it_disp(const ibx_dt_cursor_t *c, const ibx_dt_loop_t *n, int64_t i)
{
	if (n->kind == IBX_DT_LOOP_VEC)
		return (uint64_t)i * (uint64_t)n->stride;
	return (uint64_t)c->aux[n->aux + (uint64_t)i];
}

static inline const ibx_dt_loop_t *it_child(const ibx_dt_cursor_t *c, const ibx_dt_loop_t *n,
					    int64_t i)
{
	if (n->kind == IBX_DT_LOOP_STRUCT)
		return &c->loops[c->aux[n->aux + (uint64_t)n->count + (uint64_t)i]];
	return &c->loops[n->child];
}

static inline void push_child(ibx_dt_cursor_t *c, int k)
{
	const ibx_dt_frame_t *f = &c->f[k];
	const ibx_dt_loop_t *n = f->n;

	c->f[k + 1] = (ibx_dt_frame_t){
	    .n = it_child(c, n, f->i),
	    .base = f->base + (uint64_t)n->off + it_disp(c, n, f->i) +
		    (uint64_t)f->j * (uint64_t)n->el_extent,
	};
}

/* frames 0..k are placed; go down to the first run of f[k]'s current copy */
static void descend(ibx_dt_cursor_t *c, int k)
{
	while (!c->f[k].n->leaf) {
		push_child(c, k);
		k++;
	}
	c->depth = k + 1;
	c->lpos = 0;
}

/* the leaf frame is exhausted: step the nearest loop that has more */
static void advance(ibx_dt_cursor_t *c)
{
	for (int k = c->depth - 2; k >= 0; k--) {
		ibx_dt_frame_t *f = &c->f[k];

		if (++f->j < it_copies(c, f->n, f->i)) {
			descend(c, k);
			return;
		}
		f->j = 0;
		if (++f->i < f->n->count) {
			descend(c, k);
			return;
		}
	}
	c->depth = 0;
	c->lpos = 0;
}

static void seek(ibx_dt_cursor_t *c, int64_t pos)
{
	int64_t r = pos;
	int k = 0;

	c->pos = pos;
	c->lpos = 0;
	c->depth = 0;
	if (pos >= c->total)
		return;
	c->f[0] = (ibx_dt_frame_t){.n = &c->top, .base = c->buf};
	for (;;) {
		ibx_dt_frame_t *f = &c->f[k];
		const ibx_dt_loop_t *n = f->n, *ch;
		int64_t i, j;

		if (n->kind == IBX_DT_LOOP_VEC || n->kind == IBX_DT_LOOP_BLKIDX) {
			int64_t isz = n->size / n->count;

			i = r / isz;
			r -= i * isz;
		} else {
			/* last iteration whose prefix is <= r (iterations are never empty) */
			const int64_t *pre = c->aux + n->aux + 2 * (uint64_t)n->count;
			int64_t lo = 0, hi = n->count - 1;

			while (lo < hi) {
				int64_t mid = lo + (hi - lo + 1) / 2;

				if (pre[mid] <= r)
					lo = mid;
				else
					hi = mid - 1;
			}
			i = lo;
			r -= pre[i];
		}
		f->i = i;
		f->j = 0;
		if (n->leaf) {
			c->lpos = r;
			c->depth = k + 1;
			return;
		}
		ch = it_child(c, n, i);
		j = r / ch->size;
		r -= j * ch->size;
		f->j = j;
		push_child(c, k);
		k++;
	}
}

/* ---- the walk ------------------------------------------------------------------------ */

static ibx_status_t walk(ibx_dt_cursor_t *c, int64_t budget, walk_t *w, int64_t *done_p)
{
	ibx_status_t st = IBX_OK;
	int64_t done = 0;

	while (done < budget && c->depth > 0) {
		ibx_dt_frame_t *f = &c->f[c->depth - 1];
		const ibx_dt_loop_t *n = f->n;
		int64_t left = budget - done;

		if (n->kind == IBX_DT_LOOP_VEC && w->op != OP_EMIT && c->lpos == 0 &&
		    n->blen <= left) {
			int64_t k = dt_min(n->count - f->i, left / n->blen);
			uint64_t p =
			    f->base + (uint64_t)n->off + (uint64_t)f->i * (uint64_t)n->stride;

			if (w->op == OP_PACK)
				gather(w->mem + done, p, n->stride, n->blen, k);
			else
				scatter(p, w->mem + done, n->stride, n->blen, k);
			f->i += k;
			done += k * n->blen;
		} else {
			int64_t len = n->kind == IBX_DT_LOOP_IDX
					  ? c->aux[n->aux + (uint64_t)n->count + (uint64_t)f->i]
					  : n->blen;
			uint64_t a =
			    f->base + (uint64_t)n->off + it_disp(c, n, f->i) + (uint64_t)c->lpos;
			int64_t piece = dt_min(len - c->lpos, left);

			switch (w->op) {
			case OP_PACK:
				memcpy(w->mem + done, (const void *)(uintptr_t)a, (size_t)piece);
				break;
			case OP_UNPACK:
				memcpy((void *)(uintptr_t)a, w->mem + done, (size_t)piece);
				break;
			default:
				st = w->emit(w, c->pos + done, a, piece);
				if (st)
					goto out;
			}
			done += piece;
			c->lpos += piece;
			if (c->lpos < len)
				continue; /* budget ends inside the run */
			c->lpos = 0;
			f->i++;
		}
		if (f->i == n->count)
			advance(c);
	}
out:
	c->pos += done;
	*done_p = done;
	return st;
}

/* ---- cursor API ----------------------------------------------------------------------- */

ibx_status_t ibx_dt_cursor_init(ibx_dt_cursor_t *cur, const ibx_dt_t *dt, int64_t count,
				const void *buf, int64_t offset)
{
	const ibx_dt_prog_t *p;
	const ibx_dt_loop_t *r;
	int64_t total, ext = 0, span;

	if (!cur || !dt || count < 0 || !dt->committed) {
		if (dt && !dt->committed)
			ibx_debug("datatype used for data movement before commit");
		return IBX_ERR_INVALID_PARAM;
	}
	p = dt->prog;
	if (!dt_mul(count, dt->size, &total) || !dt_sub(dt->ub, dt->lb, &ext) ||
	    (count > 1 && !dt_mul(count - 1, ext, &span)))
		return IBX_ERR_OVERFLOW;
	if (offset < 0 || offset > total)
		return IBX_ERR_INVALID_PARAM;
	cur->dt = dt;
	cur->loops = p->loops;
	cur->aux = dt_prog_aux(p);
	cur->buf = (uint64_t)(uintptr_t)buf;
	cur->count = count;
	cur->total = total;
	memset(&cur->top, 0, sizeof(cur->top));
	if (total > 0) {
		r = &p->loops[p->nloops - 1];
		if (count == 1) {
			cur->top = *r;
		} else if (r->kind == IBX_DT_LOOP_VEC &&
			   (r->count == 1 || (dt_mul(r->count, r->stride, &span) && span == ext))) {
			/* the count loop continues the root's own stride: one loop */
			cur->top = *r;
			cur->top.count = r->count * count; /* <= total: iterations are >= 1 byte */
			cur->top.stride = r->count > 1 ? r->stride : ext;
			cur->top.size = total;
			if (r->leaf && cur->top.stride == r->blen) {
				cur->top.count = 1;
				cur->top.blen = total;
				cur->top.stride = 0;
			}
		} else {
			cur->top.kind = IBX_DT_LOOP_VEC;
			cur->top.count = count;
			cur->top.blen = 1;
			cur->top.stride = ext;
			cur->top.child = p->nloops - 1;
			cur->top.size = total;
		}
	}
	seek(cur, offset);
	return IBX_OK;
}

ibx_status_t ibx_dt_cursor_seek(ibx_dt_cursor_t *cur, int64_t offset)
{
	if (!cur || offset < 0 || offset > cur->total)
		return IBX_ERR_INVALID_PARAM;
	seek(cur, offset);
	return IBX_OK;
}

ibx_status_t ibx_dt_cursor_pack(ibx_dt_cursor_t *cur, void *out, int64_t len, int64_t *done_p)
{
	walk_t w = {.op = OP_PACK, .mem = out};
	int64_t done;

	if (!cur || len < 0 || (!out && len > 0) || !done_p)
		return IBX_ERR_INVALID_PARAM;
	walk(cur, len, &w, &done);
	*done_p = done;
	return IBX_OK;
}

ibx_status_t ibx_dt_cursor_unpack(ibx_dt_cursor_t *cur, const void *in, int64_t len,
				  int64_t *done_p)
{
	walk_t w = {.op = OP_UNPACK, .mem = (char *)(uintptr_t)in};
	int64_t done;

	if (!cur || len < 0 || (!in && len > 0) || !done_p)
		return IBX_ERR_INVALID_PARAM;
	walk(cur, len, &w, &done);
	*done_p = done;
	return IBX_OK;
}

static ibx_status_t emit_cb(walk_t *w, int64_t pos, uint64_t addr, int64_t len)
{
	ibx_status_t st;

	if (w->pending && w->paddr + (uint64_t)w->plen == addr) {
		w->plen += len;
		return IBX_OK;
	}
	if (w->pending) {
		st = w->cb(w->arg, w->ppos, (void *)(uintptr_t)w->paddr, (size_t)w->plen);
		if (st)
			return st;
	}
	w->pending = true;
	w->ppos = pos;
	w->paddr = addr;
	w->plen = len;
	return IBX_OK;
}

ibx_status_t ibx_dt_cursor_blocks(ibx_dt_cursor_t *cur, int64_t len, ibx_dt_block_cb_t cb,
				  void *arg, int64_t *done_p)
{
	walk_t w = {.op = OP_EMIT, .emit = emit_cb, .cb = cb, .arg = arg};
	int64_t start, done;
	ibx_status_t st;

	if (!cur || len < 0 || !cb || !done_p)
		return IBX_ERR_INVALID_PARAM;
	start = cur->pos;
	st = walk(cur, len, &w, &done);
	if (!st && w.pending)
		st = cb(arg, w.ppos, (void *)(uintptr_t)w.paddr, (size_t)w.plen);
	if (st) {
		/* the pending block was not taken: resume at it */
		seek(cur, w.ppos);
		return st;
	}
	*done_p = cur->pos - start;
	return IBX_OK;
}

static ibx_status_t emit_iov(walk_t *w, int64_t pos, uint64_t addr, int64_t len)
{
	(void)pos;
	if (w->niov > 0) {
		struct iovec *v = &w->iov[w->niov - 1];

		if ((uint64_t)(uintptr_t)v->iov_base + v->iov_len == addr) {
			v->iov_len += (size_t)len;
			return IBX_OK;
		}
	}
	if (w->niov == w->max_iov)
		return IBX_ERR_BUSY; /* full: the block stays for the next call */
	w->iov[w->niov++] = (struct iovec){(void *)(uintptr_t)addr, (size_t)len};
	return IBX_OK;
}

ibx_status_t ibx_dt_cursor_iov(ibx_dt_cursor_t *cur, int64_t max_bytes, struct iovec *iov,
			       int max_iov, int *niov_p, int64_t *bytes_p)
{
	walk_t w = {.op = OP_EMIT, .emit = emit_iov, .iov = iov, .max_iov = max_iov};
	int64_t done;
	ibx_status_t st;

	if (!cur || max_bytes < 0 || !iov || max_iov < 1 || !niov_p || !bytes_p)
		return IBX_ERR_INVALID_PARAM;
	st = walk(cur, max_bytes, &w, &done);
	if (st && st != IBX_ERR_BUSY)
		return st;
	*niov_p = w.niov;
	*bytes_p = done;
	return IBX_OK;
}

/* ---- one-shot ranges ------------------------------------------------------------------- */

static ibx_status_t range_init(ibx_dt_cursor_t *c, const ibx_dt_t *dt, int64_t count,
			       const void *buf, int64_t a, int64_t b)
{
	ibx_status_t st;

	if (a < 0 || b < a)
		return IBX_ERR_INVALID_PARAM;
	st = ibx_dt_cursor_init(c, dt, count, buf, a);
	if (st)
		return st;
	return b > c->total ? IBX_ERR_INVALID_PARAM : IBX_OK;
}

ibx_status_t ibx_dt_pack(const ibx_dt_t *dt, int64_t count, const void *buf, int64_t a, int64_t b,
			 void *out)
{
	ibx_dt_cursor_t c;
	int64_t done;
	ibx_status_t st = range_init(&c, dt, count, buf, a, b);

	if (st)
		return st;
	return ibx_dt_cursor_pack(&c, out, b - a, &done);
}

ibx_status_t ibx_dt_unpack(const ibx_dt_t *dt, int64_t count, void *buf, int64_t a, int64_t b,
			   const void *in)
{
	ibx_dt_cursor_t c;
	int64_t done;
	ibx_status_t st = range_init(&c, dt, count, buf, a, b);

	if (st)
		return st;
	return ibx_dt_cursor_unpack(&c, in, b - a, &done);
}

ibx_status_t ibx_dt_blocks(const ibx_dt_t *dt, int64_t count, const void *buf, int64_t a, int64_t b,
			   ibx_dt_block_cb_t cb, void *arg)
{
	ibx_dt_cursor_t c;
	int64_t done;
	ibx_status_t st = range_init(&c, dt, count, buf, a, b);

	if (st)
		return st;
	return ibx_dt_cursor_blocks(&c, b - a, cb, arg, &done);
}

typedef struct flat {
	ibx_dt_block_t *v;
	int64_t n, cap;
} flat_t;

static ibx_status_t flat_add(void *arg, int64_t packed_off, void *addr, size_t len)
{
	flat_t *fl = arg;

	(void)packed_off;
	if (fl->n == fl->cap) {
		int64_t ncap = fl->cap ? fl->cap * 2 : 64;
		ibx_dt_block_t *nv;

		if ((uint64_t)ncap > SIZE_MAX / sizeof(*nv))
			return IBX_ERR_NO_MEMORY;
		nv = realloc(fl->v, (size_t)ncap * sizeof(*nv));
		if (!nv)
			return IBX_ERR_NO_MEMORY;
		fl->v = nv;
		fl->cap = ncap;
	}
	fl->v[fl->n++] = (ibx_dt_block_t){(int64_t)(uintptr_t)addr, (int64_t)len};
	return IBX_OK;
}

ibx_status_t ibx_dt_flatten(const ibx_dt_t *dt, int64_t count, ibx_dt_block_t **blocks_p,
			    int64_t *nblocks_p)
{
	flat_t fl = {0};
	ibx_dt_cursor_t c;
	int64_t done;
	ibx_status_t st;

	if (!blocks_p || !nblocks_p)
		return IBX_ERR_INVALID_PARAM;
	st = ibx_dt_cursor_init(&c, dt, count, NULL, 0);
	if (st)
		return st;
	st = ibx_dt_cursor_blocks(&c, c.total, flat_add, &fl, &done);
	if (st) {
		free(fl.v);
		return st;
	}
	*blocks_p = fl.v;
	*nblocks_p = fl.n;
	return IBX_OK;
}
