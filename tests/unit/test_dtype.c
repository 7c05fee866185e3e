/*
 * test_dtype.c — core/dtype_rdma representation layer against a reference.
 *
 * The reference is written here from the MPI definitions, independently of
 * the engine: a type is its typemap, a list of (displacement, basic code)
 * entries plus lb/ub marker entries (resized), built by literal expansion
 * of each constructor; bounds follow MPI 3.1 §4.1 on that list; the packed
 * stream of (type, count) is the list of byte addresses it visits. Random
 * nested types (seeded PRNG; the seed is printed, IBX_TEST_SEED=<n> replays
 * it) are checked on: bounds, flattening, pack/unpack/block listing of
 * random byte ranges, iovec filling with resume, signatures and prefix
 * matching, serialise/deserialise, and hostile blobs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ibx.h"
#include "dtype_rdma/dtype.h"

/* ---- PRNG -------------------------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t seed_used;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* uniform in [lo, hi] */
static int64_t rr(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* a count or block length: 0 now and then, else in [1, hi] */
static int64_t rc(int64_t hi)
{
	return rr(0, 11) == 0 ? 0 : rr(1, hi);
}

/* ---- reference typemaps ---------------------------------------------------------- */

/* M_LB / M_UB: the markers of resized. M_ILB / M_IUB: the implicit bounds of
 * a marker-free child copy (its lb and ub, padding included), which bound a
 * marker-free type built from it. */
enum { M_LB = -1, M_UB = -2, M_ILB = -3, M_IUB = -4 };

typedef struct ent {
	int64_t disp;
	int code; /* > 0 basic, M_* bounds */
} ent_t;

typedef struct map {
	ent_t *e;
	size_t n, cap;
} map_t;

#define NBASIC 6
static const struct {
	int code;
	int64_t size, align;
} basics[NBASIC] = {{1, 1, 1}, {2, 2, 2}, {3, 4, 4}, {4, 4, 4}, {5, 8, 8}, {6, 16, 16}};
static ibx_dt_t *basic_dt[NBASIC];

static int64_t code_size(int code)
{
	return basics[code - 1].size;
}
static int64_t code_align(int code)
{
	return basics[code - 1].align;
}

#define MAP_LIMIT 3000

static void map_push(map_t *m, int64_t disp, int code)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 16;
		m->e = realloc(m->e, m->cap * sizeof(*m->e));
		assert_non_null(m->e);
	}
	m->e[m->n++] = (ent_t){disp, code};
}

typedef struct rbounds {
	int64_t lb, ub, tlb, tub, size, nelem;
	bool markers, data;
} rbounds_t;

/* A copy of @src's typemap at @shift: its data, plus (if @markers) its
 * markers, or for a marker-free @src with data its implicit bounds. */
static void map_add(map_t *dst, const map_t *src, const rbounds_t *sb, int64_t shift, bool markers)
{
	for (size_t k = 0; k < src->n; k++)
		if (src->e[k].code > 0 ||
		    (markers && (src->e[k].code == M_LB || src->e[k].code == M_UB)))
			map_push(dst, src->e[k].disp + shift, src->e[k].code);
	if (markers && !sb->markers && sb->data) {
		map_push(dst, sb->lb + shift, M_ILB);
		map_push(dst, sb->ub + shift, M_IUB);
	}
}

/* MPI 3.1 §4.1: markers win; without them lb/ub come from the basic entries
 * and the implicit bounds of the children, and ub is padded to the largest
 * alignment (every constructor pads, as Open MPI does: see type.c). */
static rbounds_t ref_bounds(const map_t *m)
{
	rbounds_t b = {0};
	bool data = false, mlb = false, mub = false;
	int64_t lbm = 0, ubm = 0, align = 1, ilb = INT64_MAX, iub = INT64_MIN;

	for (size_t k = 0; k < m->n; k++) {
		const ent_t *e = &m->e[k];

		if (e->code == M_LB) {
			lbm = mlb ? (e->disp < lbm ? e->disp : lbm) : e->disp;
			mlb = true;
		} else if (e->code == M_UB) {
			ubm = mub ? (e->disp > ubm ? e->disp : ubm) : e->disp;
			mub = true;
		} else if (e->code == M_ILB) {
			ilb = e->disp < ilb ? e->disp : ilb;
		} else if (e->code == M_IUB) {
			iub = e->disp > iub ? e->disp : iub;
		} else {
			int64_t end = e->disp + code_size(e->code);

			b.tlb = data ? (e->disp < b.tlb ? e->disp : b.tlb) : e->disp;
			b.tub = data ? (end > b.tub ? end : b.tub) : end;
			data = true;
			b.size += code_size(e->code);
			b.nelem++;
			if (code_align(e->code) > align)
				align = code_align(e->code);
		}
	}
	b.data = data;
	b.markers = mlb;
	b.lb = mlb ? lbm : (b.tlb < ilb ? b.tlb : ilb);
	if (mub) {
		b.ub = ubm;
	} else {
		int64_t ub = b.tub > iub ? b.tub : iub;
		int64_t ext = ub - b.lb, r = ((ext % align) + align) % align;

		b.ub = ub + (data && r ? align - r : 0);
	}
	return b;
}

typedef struct rtype {
	ibx_dt_t *dt;
	map_t map;
	rbounds_t b;
} rtype_t;

static int64_t rext(const rtype_t *t)
{
	return t->b.ub - t->b.lb;
}

static void rtype_free(rtype_t *t)
{
	if (!t)
		return;
	if (t->dt)
		assert_int_equal(ibx_dt_free(&t->dt), IBX_OK);
	free(t->map.e);
	free(t);
}

static rtype_t *rtype_new(void)
{
	rtype_t *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	return t;
}

static rtype_t *mk_basic(int i)
{
	rtype_t *t = rtype_new();

	assert_int_equal(ibx_dt_dup(basic_dt[i], &t->dt), IBX_OK);
	map_push(&t->map, 0, basics[i].code);
	t->b = ref_bounds(&t->map);
	return t;
}

/* ---- random types ---------------------------------------------------------------------- */

static rtype_t *gen(int depth);

static bool too_big(const map_t *m)
{
	return m->n > MAP_LIMIT;
}

/* finishes t (engine call already made into st), or gives up on it */
static rtype_t *finish(rtype_t *t, ibx_status_t st)
{
	assert_int_equal(st, IBX_OK);
	t->b = ref_bounds(&t->map);
	if (too_big(&t->map) || t->b.tub - t->b.tlb > 40000 || t->b.ub - t->b.lb > 40000 ||
	    t->b.ub - t->b.lb < -40000) {
		rtype_free(t);
		return NULL;
	}
	return t;
}

static rtype_t *gen_derived(int depth)
{
	rtype_t *old = gen(depth - 1), *t = rtype_new();
	int kind = (int)rr(0, 10);
	int64_t ext = rext(old);
	ibx_status_t st = IBX_OK;

	if (too_big(&old->map) || (old->map.n > 200 && kind != 7 && kind != 8)) {
		rtype_free(t);
		return old;
	}
	switch (kind) {
	case 0: { /* contiguous */
		int64_t n = rc(4);

		st = ibx_dt_contiguous(n, old->dt, &t->dt);
		for (int64_t i = 0; i < n && !too_big(&t->map); i++)
			map_add(&t->map, &old->map, &old->b, i * ext, true);
		break;
	}
	case 1:
	case 2: { /* vector, hvector */
		int64_t n = rc(4), bl = rc(3), stride = kind == 1 ? rr(-4, 6) : rr(-64, 96);
		int64_t sb = kind == 1 ? stride * ext : stride;

		st = kind == 1 ? ibx_dt_vector(n, bl, stride, old->dt, &t->dt)
			       : ibx_dt_hvector(n, bl, stride, old->dt, &t->dt);
		for (int64_t i = 0; i < n && !too_big(&t->map); i++)
			for (int64_t j = 0; j < bl; j++)
				map_add(&t->map, &old->map, &old->b, i * sb + j * ext, true);
		break;
	}
	case 3:
	case 4:
	case 5:
	case 6: { /* indexed, hindexed, indexed_block, hindexed_block */
		int64_t n = rc(4), bls[4], dis[4], blk = rc(3);
		bool h = kind == 4 || kind == 6, block = kind >= 5;

		for (int64_t k = 0; k < n; k++) {
			bls[k] = block ? blk : rc(3);
			dis[k] = h ? rr(-64, 128) : rr(-5, 10);
		}
		if (kind == 3)
			st = ibx_dt_indexed(n, bls, dis, old->dt, &t->dt);
		else if (kind == 4)
			st = ibx_dt_hindexed(n, bls, dis, old->dt, &t->dt);
		else if (kind == 5)
			st = ibx_dt_indexed_block(n, blk, dis, old->dt, &t->dt);
		else
			st = ibx_dt_hindexed_block(n, blk, dis, old->dt, &t->dt);
		for (int64_t k = 0; k < n && !too_big(&t->map); k++)
			for (int64_t j = 0; j < bls[k]; j++)
				map_add(&t->map, &old->map, &old->b,
					(h ? dis[k] : dis[k] * ext) + j * ext, true);
		break;
	}
	case 7: { /* resized */
		int64_t lb = rr(-16, 16), e = rr(-8, 64);

		st = ibx_dt_resized(old->dt, lb, e, &t->dt);
		map_add(&t->map, &old->map, &old->b, 0, false);
		map_push(&t->map, lb, M_LB);
		map_push(&t->map, lb + e, M_UB);
		break;
	}
	case 8: /* dup */
		st = ibx_dt_dup(old->dt, &t->dt);
		map_add(&t->map, &old->map, &old->b, 0, true);
		break;
	case 9: { /* struct */
		int64_t n = rr(1, 3), bls[3], dis[3];
		rtype_t *ch[3];
		ibx_dt_t *tys[3];

		ch[0] = old;
		for (int64_t k = 1; k < n; k++)
			ch[k] = rr(0, 1) ? gen(depth - 1) : mk_basic((int)rr(0, NBASIC - 1));
		for (int64_t k = 0; k < n; k++) {
			bls[k] = rc(2);
			dis[k] = rr(-16, 128);
			tys[k] = ch[k]->dt;
		}
		st = ibx_dt_struct(n, bls, dis, tys, &t->dt);
		for (int64_t k = 0; k < n && !too_big(&t->map); k++)
			for (int64_t j = 0; j < bls[k]; j++)
				map_add(&t->map, &ch[k]->map, &ch[k]->b, dis[k] + j * rext(ch[k]),
					true);
		for (int64_t k = 1; k < n; k++)
			rtype_free(ch[k]);
		break;
	}
	default: { /* subarray, straight from its definition */
		int nd = (int)rr(1, 3), order = (int)rr(0, 1);
		int64_t sz[3], sub[3], start[3], idx[3] = {0}, total = 1;

		for (int d = 0; d < nd; d++) {
			sz[d] = rr(1, 4);
			sub[d] = rr(0, 11) ? rr(1, sz[d]) : 0;
			start[d] = rr(0, sz[d] - sub[d]);
			total *= sz[d];
		}
		st = ibx_dt_subarray(nd, sz, sub, start, order, old->dt, &t->dt);
		for (int d = 0; d < nd; d++)
			if (sub[d] == 0)
				goto markers;
		for (;;) {
			int64_t lin = 0;

			/* linear index: C has the last dimension fastest, Fortran the first */
			if (order == IBX_DT_ORDER_C)
				for (int d = 0; d < nd; d++)
					lin = lin * sz[d] + start[d] + idx[d];
			else
				for (int d = nd - 1; d >= 0; d--)
					lin = lin * sz[d] + start[d] + idx[d];
			map_add(&t->map, &old->map, &old->b, lin * ext, false);
			if (too_big(&t->map))
				break;
			/* next index tuple in memory order of the subarray */
			int d = order == IBX_DT_ORDER_C ? nd - 1 : 0,
			    step = order == IBX_DT_ORDER_C ? -1 : 1;
			for (; d >= 0 && d < nd; d += step) {
				if (++idx[d] < sub[d])
					break;
				idx[d] = 0;
			}
			if (d < 0 || d >= nd)
				break;
		}
	markers:
		map_push(&t->map, 0, M_LB);
		map_push(&t->map, total * ext, M_UB);
		break;
	}
	}
	rtype_free(old);
	return finish(t, st);
}

static rtype_t *gen(int depth)
{
	for (int tries = 0; depth > 0 && tries < 8; tries++) {
		rtype_t *t;

		if (rr(0, 5) == 0)
			break;
		t = gen_derived(depth);
		if (t)
			return t;
	}
	return mk_basic((int)rr(0, NBASIC - 1));
}

/* ---- the reference packed stream ---------------------------------------------------------- */

typedef struct stream {
	int64_t *addr; /* byte offset from the buffer origin of each packed byte */
	int64_t n, lo, hi;
} stream_t;

static stream_t ref_stream(const rtype_t *t, int64_t count)
{
	stream_t s = {0};
	int64_t k = 0;

	s.n = count * t->b.size;
	s.addr = malloc((size_t)(s.n ? s.n : 1) * sizeof(int64_t));
	assert_non_null(s.addr);
	for (int64_t i = 0; i < count; i++)
		for (size_t e = 0; e < t->map.n; e++) {
			if (t->map.e[e].code < 0)
				continue;
			for (int64_t b = 0; b < code_size(t->map.e[e].code); b++)
				s.addr[k++] = i * rext(t) + t->map.e[e].disp + b;
		}
	assert_int_equal(k, s.n);
	s.lo = 0;
	s.hi = 1;
	for (int64_t j = 0; j < s.n; j++) {
		if (j == 0 || s.addr[j] < s.lo)
			s.lo = s.addr[j];
		if (j == 0 || s.addr[j] + 1 > s.hi)
			s.hi = s.addr[j] + 1;
	}
	return s;
}

typedef struct blk {
	int64_t pos, off, len;
} blk_t;

typedef struct blist {
	blk_t *v;
	int64_t n, cap;
	int64_t base;	 /* buffer origin, subtracted from addresses */
	int64_t fail_at; /* return an error on this block number, -1 never */
	int64_t calls;
} blist_t;

static void blist_push(blist_t *l, int64_t pos, int64_t off, int64_t len)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = realloc(l->v, (size_t)l->cap * sizeof(*l->v));
		assert_non_null(l->v);
	}
	l->v[l->n++] = (blk_t){pos, off, len};
}

/* maximal runs of consecutive addresses in [a, b) of the stream */
static blist_t ref_blocks(const stream_t *s, int64_t a, int64_t b)
{
	blist_t l = {0};

	for (int64_t j = a; j < b; j++) {
		if (l.n && l.v[l.n - 1].off + l.v[l.n - 1].len == s->addr[j])
			l.v[l.n - 1].len++;
		else
			blist_push(&l, j, s->addr[j], 1);
	}
	return l;
}

static ibx_status_t collect_cb(void *arg, int64_t pos, void *addr, size_t len)
{
	blist_t *l = arg;

	if (l->calls++ == l->fail_at)
		return IBX_ERR_BUSY;
	blist_push(l, pos, (int64_t)((uintptr_t)addr - (uintptr_t)l->base), (int64_t)len);
	return IBX_OK;
}

static void assert_blists_equal(const blist_t *x, const blist_t *y)
{
	assert_int_equal(x->n, y->n);
	for (int64_t k = 0; k < x->n; k++) {
		assert_int_equal(x->v[k].pos, y->v[k].pos);
		assert_int_equal(x->v[k].off, y->v[k].off);
		assert_int_equal(x->v[k].len, y->v[k].len);
	}
}

/* merges blocks that touch in both packed order and memory */
static void blist_merge(blist_t *l)
{
	int64_t m = 0;

	for (int64_t k = 0; k < l->n; k++) {
		if (m && l->v[m - 1].off + l->v[m - 1].len == l->v[k].off &&
		    l->v[m - 1].pos + l->v[m - 1].len == l->v[k].pos)
			l->v[m - 1].len += l->v[k].len;
		else
			l->v[m++] = l->v[k];
	}
	l->n = m;
}

/* ---- checks of one type -------------------------------------------------------------------- */

static void check_bounds(const rtype_t *t)
{
	ibx_dt_info_t in;

	assert_int_equal(ibx_dt_query(t->dt, &in), IBX_OK);
	assert_int_equal(in.size, t->b.size);
	assert_int_equal(in.lb, t->b.lb);
	assert_int_equal(in.ub, t->b.ub);
	assert_int_equal(in.extent, t->b.ub - t->b.lb);
	assert_int_equal(in.true_lb, t->b.tlb);
	assert_int_equal(in.true_extent, t->b.tub - t->b.tlb);
	assert_int_equal(in.nelem, t->b.nelem);
	assert_int_equal(ibx_dt_size(t->dt), t->b.size);
	assert_int_equal(ibx_dt_extent(t->dt), t->b.ub - t->b.lb);
}

/* a buffer covering the stream's addresses, with a recognisable pattern */
typedef struct tbuf {
	uint8_t *mem;
	uint8_t *origin;
	size_t len;
} tbuf_t;

static tbuf_t tbuf_new(const stream_t *s)
{
	tbuf_t b;

	b.len = (size_t)(s->hi - s->lo);
	b.mem = malloc(b.len);
	assert_non_null(b.mem);
	for (size_t k = 0; k < b.len; k++)
		b.mem[k] = (uint8_t)(k * 131 + 7);
	b.origin = (uint8_t *)((uintptr_t)b.mem - (uintptr_t)s->lo);
	return b;
}

static void check_ranges(const rtype_t *t, const ibx_dt_t *dt, int64_t count, int rounds)
{
	stream_t s = ref_stream(t, count);
	tbuf_t b = tbuf_new(&s), u = tbuf_new(&s), r = tbuf_new(&s);
	uint8_t *packed = malloc((size_t)s.n + 1), *in = malloc((size_t)s.n + 1);
	ibx_dt_cursor_t c;

	assert_non_null(packed);
	assert_non_null(in);
	for (int round = 0; round < rounds; round++) {
		int64_t a = s.n ? rr(0, s.n) : 0, e = s.n ? rr(a, s.n) : 0, done;
		blist_t got = {0}, want;

		if (round == 0) {
			a = 0;
			e = s.n;
		}
		/* pack */
		memset(packed, 0xee, (size_t)s.n + 1);
		assert_int_equal(ibx_dt_pack(dt, count, b.origin, a, e, packed), IBX_OK);
		for (int64_t j = a; j < e; j++)
			assert_int_equal(packed[j - a], b.origin[s.addr[j]]);
		assert_int_equal(packed[e - a], 0xee);
		/* unpack, later bytes win on overlapping typemaps in both */
		for (int64_t j = 0; j < e - a; j++)
			in[j] = (uint8_t)rnd();
		memcpy(u.mem, b.mem, b.len);
		memcpy(r.mem, b.mem, b.len);
		assert_int_equal(ibx_dt_unpack(dt, count, u.origin, a, e, in), IBX_OK);
		for (int64_t j = a; j < e; j++)
			r.origin[s.addr[j]] = in[j - a];
		assert_memory_equal(u.mem, r.mem, b.len);
		/* block listing */
		want = ref_blocks(&s, a, e);
		got.base = (int64_t)(uintptr_t)b.origin;
		got.fail_at = -1;
		assert_int_equal(ibx_dt_blocks(dt, count, b.origin, a, e, collect_cb, &got),
				 IBX_OK);
		assert_blists_equal(&got, &want);
		/* the same through a cursor, with a callback failing once midway */
		free(got.v);
		got = (blist_t){.base = (int64_t)(uintptr_t)b.origin, .fail_at = rr(0, 3)};
		assert_int_equal(ibx_dt_cursor_init(&c, dt, count, b.origin, a), IBX_OK);
		{
			ibx_status_t st = ibx_dt_cursor_blocks(&c, e - a, collect_cb, &got, &done);

			if (st == IBX_ERR_BUSY) {
				int64_t at = ibx_dt_cursor_pos(&c);

				assert_true(at >= a && at <= e);
				assert_int_equal(
				    at, got.n ? got.v[got.n - 1].pos + got.v[got.n - 1].len : a);
				got.fail_at = -1;
				assert_int_equal(
				    ibx_dt_cursor_blocks(&c, e - at, collect_cb, &got, &done),
				    IBX_OK);
				assert_int_equal(done, e - at);
			} else {
				assert_int_equal(st, IBX_OK);
				assert_int_equal(done, e - a);
			}
		}
		blist_merge(&got);
		assert_blists_equal(&got, &want);
		/* iovec filling with resume: a few entries at a time */
		{
			struct iovec iov[3];
			blist_t acc = {0};
			int64_t pos = a, left = e - a;
			int max_iov = (int)rr(1, 3);

			assert_int_equal(ibx_dt_cursor_init(&c, dt, count, b.origin, a), IBX_OK);
			while (left > 0) {
				int n;
				int64_t bytes, lim = rr(1, left), sum = 0;

				assert_int_equal(
				    ibx_dt_cursor_iov(&c, lim, iov, max_iov, &n, &bytes), IBX_OK);
				assert_true(n >= 1 && n <= max_iov);
				assert_true(bytes >= 1 && bytes <= lim);
				for (int k = 0; k < n; k++) {
					blist_push(&acc, pos + sum,
						   (int64_t)((uintptr_t)iov[k].iov_base -
							     (uintptr_t)b.origin),
						   (int64_t)iov[k].iov_len);
					sum += (int64_t)iov[k].iov_len;
				}
				assert_int_equal(sum, bytes);
				pos += bytes;
				left -= bytes;
			}
			assert_int_equal(ibx_dt_cursor_left(&c), s.n - e);
			blist_merge(&acc);
			assert_blists_equal(&acc, &want);
			free(acc.v);
		}
		free(got.v);
		free(want.v);
		/* sequential segments through one cursor == one pack */
		assert_int_equal(ibx_dt_cursor_init(&c, dt, count, b.origin, a), IBX_OK);
		for (int64_t at = a; at < e;) {
			int64_t seg = rr(1, 40);

			seg = seg < e - at ? seg : e - at;
			assert_int_equal(ibx_dt_cursor_pack(&c, in + (at - a), seg, &done), IBX_OK);
			assert_int_equal(done, seg);
			at += done;
		}
		for (int64_t j = a; j < e; j++)
			assert_int_equal(in[j - a], b.origin[s.addr[j]]);
	}
	free(packed);
	free(in);
	free(b.mem);
	free(u.mem);
	free(r.mem);
	free(s.addr);
}

static void check_flatten(const rtype_t *t, const ibx_dt_t *dt, int64_t count)
{
	stream_t s = ref_stream(t, count);
	blist_t want = ref_blocks(&s, 0, s.n);
	ibx_dt_block_t *bl;
	int64_t n;
	ibx_dt_stats_t st;

	assert_int_equal(ibx_dt_flatten(dt, count, &bl, &n), IBX_OK);
	assert_int_equal(n, want.n);
	for (int64_t k = 0; k < n; k++) {
		assert_int_equal(bl[k].off, want.v[k].off);
		assert_int_equal(bl[k].len, want.v[k].len);
	}
	free(bl);
	free(want.v);
	free(s.addr);
	/* stats: program runs, each a whole number of basic elements */
	assert_int_equal(ibx_dt_stats(dt, &st), IBX_OK);
	if (t->b.size == 0) {
		assert_int_equal(st.blocks, 0);
	} else {
		stream_t s1 = ref_stream(t, 1);
		blist_t one = ref_blocks(&s1, 0, s1.n);

		assert_true(st.blocks >= one.n);
		assert_true(st.blocks <= t->b.nelem);
		assert_true(st.min_block >= 1 && st.min_block <= st.median_block &&
			    st.median_block <= st.max_block);
		assert_true(st.avg_block * (double)st.blocks > (double)t->b.size - 0.5 &&
			    st.avg_block * (double)st.blocks < (double)t->b.size + 0.5);
		assert_true(st.depth >= 1 && st.depth <= IBX_DT_MAX_DEPTH);
		free(one.v);
		free(s1.addr);
	}
}

/* ---- signatures ---------------------------------------------------------------------------- */

static int *ref_seq(const rtype_t *t, int64_t count, int64_t *n_p)
{
	int *v = malloc((size_t)(count * t->b.nelem + 1) * sizeof(int));
	int64_t n = 0;

	assert_non_null(v);
	for (int64_t i = 0; i < count; i++)
		for (size_t e = 0; e < t->map.n; e++)
			if (t->map.e[e].code > 0)
				v[n++] = t->map.e[e].code;
	*n_p = n;
	return v;
}

/* a type with exactly the basic sequence v[0..n) (struct of runs of equal codes) */
static ibx_dt_t *type_of_seq(const int *v, int64_t n)
{
	int64_t bl[64], dis[64], m = 0, at = 0;
	ibx_dt_t *tys[64], *dt;

	for (int64_t k = 0; k < n; k++) {
		if (m && tys[m - 1] == basic_dt[v[k] - 1] && m < 64) {
			bl[m - 1]++;
		} else {
			assert_true(m < 64);
			tys[m] = basic_dt[v[k] - 1];
			bl[m] = 1;
			dis[m] = at;
			m++;
		}
		at += code_size(v[k]);
	}
	assert_int_equal(ibx_dt_struct(m, bl, dis, tys, &dt), IBX_OK);
	return dt;
}

static void check_signature(const rtype_t *t)
{
	int64_t count = rr(1, 3), n, m;
	int *seq = ref_seq(t, count, &n);
	ibx_dt_sig_t sig, sig2;
	ibx_dt_t *s;

	assert_int_equal(ibx_dt_signature(t->dt, count, &sig), IBX_OK);
	assert_int_equal(sig.nelem, n);
	assert_int_equal(ibx_dt_sig_match(&sig, t->dt, count), IBX_OK);
	if (n > 0 && n <= 48) {
		/* an independently built type with the same sequence hashes the same */
		s = type_of_seq(seq, n);
		assert_int_equal(ibx_dt_signature(s, 1, &sig2), IBX_OK);
		assert_int_equal(sig2.hash, sig.hash);
		assert_int_equal(sig2.nelem, sig.nelem);
		ibx_dt_free(&s);
		/* a prefix matches, the same prefix with one element changed does not */
		m = rr(1, n);
		s = type_of_seq(seq, m);
		assert_int_equal(ibx_dt_signature(s, 1, &sig2), IBX_OK);
		assert_int_equal(ibx_dt_sig_match(&sig2, t->dt, count), IBX_OK);
		ibx_dt_free(&s);
		{
			int64_t k = rr(0, m - 1);
			int keep = seq[k];

			seq[k] = seq[k] % NBASIC + 1;
			s = type_of_seq(seq, m);
			seq[k] = keep;
			assert_int_equal(ibx_dt_signature(s, 1, &sig2), IBX_OK);
			assert_int_equal(ibx_dt_sig_match(&sig2, t->dt, count),
					 IBX_ERR_INVALID_PARAM);
			ibx_dt_free(&s);
		}
	}
	/* more elements than the receive takes */
	assert_int_equal(ibx_dt_signature(t->dt, count + 1, &sig2), IBX_OK);
	if (t->b.nelem > 0)
		assert_int_equal(ibx_dt_sig_match(&sig2, t->dt, count), IBX_ERR_TRUNCATED);
	else
		assert_int_equal(ibx_dt_sig_match(&sig2, t->dt, count), IBX_OK);
	free(seq);
}

/* ---- serialisation ------------------------------------------------------------------------ */

static void *blob_of(const ibx_dt_t *dt, size_t *len_p)
{
	size_t len, used;
	void *blob;

	assert_int_equal(ibx_dt_wire_size(dt, &len), IBX_OK);
	blob = malloc(len);
	assert_non_null(blob);
	assert_int_equal(ibx_dt_serialize(dt, blob, len - 1, &used), IBX_ERR_TRUNCATED);
	assert_int_equal(ibx_dt_serialize(dt, blob, len, &used), IBX_OK);
	assert_int_equal(used, len);
	*len_p = len;
	return blob;
}

/* whatever a deserialised layout claims, walking it stays inside its span */
static void walk_remote_safely(ibx_dt_t *r)
{
	ibx_dt_info_t in;
	ibx_dt_block_t *bl;
	int64_t n;

	assert_int_equal(ibx_dt_query(r, &in), IBX_OK);
	if (in.size > (1 << 20) || in.true_extent > (1 << 22))
		return;
	assert_int_equal(ibx_dt_flatten(r, 1, &bl, &n), IBX_OK);
	for (int64_t k = 0; k < n; k++) {
		assert_true(bl[k].len >= 1);
		assert_true(bl[k].off >= in.true_lb);
		assert_true(bl[k].off + bl[k].len <= in.true_lb + in.true_extent);
	}
	free(bl);
	{
		uint8_t *mem = malloc((size_t)in.true_extent + 1),
			*out = malloc((size_t)in.size + 1);

		assert_non_null(mem);
		assert_non_null(out);
		memset(mem, 1, (size_t)in.true_extent + 1);
		assert_int_equal(ibx_dt_pack(r, 1, (void *)((uintptr_t)mem - (uintptr_t)in.true_lb),
					     0, in.size, out),
				 IBX_OK);
		free(mem);
		free(out);
	}
}

static void check_wire(const rtype_t *t)
{
	size_t len;
	uint8_t *blob = blob_of(t->dt, &len), *bad = malloc(len + 8);
	ibx_dt_t *r = NULL;
	ibx_dt_info_t a, b;
	uint64_t id, id2;
	uint32_t ver, ver2;

	assert_non_null(bad);
	assert_int_equal(ibx_dt_deserialize(blob, len, &r), IBX_OK);
	assert_int_equal(ibx_dt_query(t->dt, &a), IBX_OK);
	assert_int_equal(ibx_dt_query(r, &b), IBX_OK);
	assert_true(b.remote && b.committed);
	assert_int_equal(a.size, b.size);
	assert_int_equal(a.lb, b.lb);
	assert_int_equal(a.extent, b.extent);
	assert_int_equal(a.true_lb, b.true_lb);
	assert_int_equal(a.true_extent, b.true_extent);
	assert_int_equal(ibx_dt_wire_id(t->dt, &id, &ver), IBX_OK);
	assert_int_equal(ibx_dt_wire_id(r, &id2, &ver2), IBX_OK);
	assert_int_equal(id, id2);
	assert_int_equal(ver, ver2);
	check_flatten(t, r, rr(0, 3));
	check_ranges(t, r, rr(1, 2), 3);
	{
		/* the remote layout's signature is the sender's */
		ibx_dt_sig_t s1;

		assert_int_equal(ibx_dt_signature(t->dt, 2, &s1), IBX_OK);
		assert_int_equal(ibx_dt_sig_match(&s1, r, 2), IBX_OK);
		/* a prefix ending inside an element needs the tree, which a peer's
		 * layout does not carry */
		if (t->b.nelem > 1) {
			s1.nelem = 1;
			assert_int_equal(ibx_dt_sig_match(&s1, r, 2), IBX_ERR_UNSUPPORTED);
		}
	}
	/* a remote layout cannot be a constructor's child */
	{
		ibx_dt_t *x = NULL;

		assert_int_equal(ibx_dt_contiguous(2, r, &x), IBX_ERR_INVALID_PARAM);
		assert_null(x);
	}
	ibx_dt_free(&r);
	/* truncations */
	for (int k = 0; k < 4; k++) {
		size_t cut = (size_t)rr(0, (int64_t)len - 1);

		assert_int_equal(ibx_dt_deserialize(blob, cut, &r), IBX_ERR_CORRUPT);
	}
	/* a trailing byte */
	memcpy(bad, blob, len);
	bad[len] = 0;
	assert_int_equal(ibx_dt_deserialize(bad, len + 1, &r), IBX_ERR_CORRUPT);
	/* flips: caught by the checksum; resealed: rejected or harmless */
	for (int k = 0; k < 12; k++) {
		size_t at = (size_t)rr(0, (int64_t)len - 1);
		uint8_t flip = (uint8_t)rr(1, 255);
		ibx_status_t st;

		memcpy(bad, blob, len);
		bad[at] ^= flip;
		/* FNV-1a steps are bijections: one changed byte always changes it */
		assert_int_equal(ibx_dt_deserialize(bad, len, &r), IBX_ERR_CORRUPT);
		assert_int_equal(ibx_dt_wire_seal(bad, len), IBX_OK);
		st = ibx_dt_deserialize(bad, len, &r);
		assert_true(st == IBX_OK || st == IBX_ERR_CORRUPT);
		if (st == IBX_OK) {
			walk_remote_safely(r);
			ibx_dt_free(&r);
		}
	}
	free(bad);
	free(blob);
}

/* ---- the random test ---------------------------------------------------------------------- */

static void test_random_types(void **state)
{
	int hist_depth[IBX_DT_MAX_DEPTH + 1] = {0}, contig = 0, maxloops = 0, n = 1500;
	int64_t maxent = 0;

	(void)state;
	for (int it = 0; it < n; it++) {
		rtype_t *t = gen((int)rr(1, 6));
		int64_t count = rr(0, 3);
		ibx_dt_stats_t st;
		ibx_dt_info_t in;

		check_bounds(t);
		check_signature(t);
		assert_int_equal(ibx_dt_commit(t->dt), IBX_OK);
		assert_int_equal(ibx_dt_commit(t->dt), IBX_OK); /* idempotent */
		check_flatten(t, t->dt, count);
		check_ranges(t, t->dt, count ? count : 1, 8);
		check_wire(t);
		assert_int_equal(ibx_dt_stats(t->dt, &st), IBX_OK);
		assert_int_equal(ibx_dt_query(t->dt, &in), IBX_OK);
		hist_depth[st.depth]++;
		contig += in.contig;
		maxloops = st.loops > maxloops ? st.loops : maxloops;
		maxent = (int64_t)t->map.n > maxent ? (int64_t)t->map.n : maxent;
		rtype_free(t);
	}
	printf("random types: %d, contiguous %d, most loops %d, largest typemap %lld entries, "
	       "loop depth histogram:",
	       n, contig, maxloops, (long long)maxent);
	for (int d = 0; d <= IBX_DT_MAX_DEPTH; d++)
		if (hist_depth[d])
			printf(" %d:%d", d, hist_depth[d]);
	printf("\n");
}

/* ---- fixed cases ---------------------------------------------------------------------------- */

static ibx_dt_t *B(int code)
{
	return basic_dt[code - 1];
}
enum { CHAR = 1, SHORT = 2, INT = 3, FLOAT = 4, DOUBLE = 5, LDOUBLE = 6 };

static void expect_bounds(ibx_dt_t *dt, int64_t lb, int64_t extent, int64_t tlb, int64_t text,
			  int64_t size)
{
	ibx_dt_info_t in;

	assert_int_equal(ibx_dt_query(dt, &in), IBX_OK);
	assert_int_equal(in.lb, lb);
	assert_int_equal(in.extent, extent);
	assert_int_equal(in.true_lb, tlb);
	assert_int_equal(in.true_extent, text);
	assert_int_equal(in.size, size);
}

static void test_mpi_extent_rules(void **state)
{
	ibx_dt_t *t1, *t2, *t3, *r, *c;
	int64_t bl[3] = {1, 1, 1}, d[3] = {0, 8, 0};
	ibx_dt_t *ty[3] = {B(DOUBLE), B(CHAR), NULL};

	(void)state;
	/* struct {double; char}: 9 bytes of data, extent padded to 16 */
	assert_int_equal(ibx_dt_struct(2, bl, d, ty, &t1), IBX_OK);
	expect_bounds(t1, 0, 16, 0, 9, 9);
	/* MAXLOC pairs as C lays them out */
	ty[0] = B(FLOAT), ty[1] = B(INT), d[1] = 4;
	assert_int_equal(ibx_dt_struct(2, bl, d, ty, &t2), IBX_OK);
	expect_bounds(t2, 0, 8, 0, 8, 8);
	ibx_dt_free(&t2);
	ty[0] = B(DOUBLE), ty[1] = B(INT), d[1] = 8;
	assert_int_equal(ibx_dt_struct(2, bl, d, ty, &t2), IBX_OK);
	expect_bounds(t2, 0, 16, 0, 12, 12);
	ibx_dt_free(&t2);
	ty[0] = B(SHORT), ty[1] = B(INT), d[1] = 4;
	assert_int_equal(ibx_dt_struct(2, bl, d, ty, &t2), IBX_OK);
	expect_bounds(t2, 0, 8, 0, 8, 6);
	ibx_dt_free(&t2);
	ty[0] = B(LDOUBLE), ty[1] = B(INT), d[1] = 16;
	assert_int_equal(ibx_dt_struct(2, bl, d, ty, &t2), IBX_OK);
	expect_bounds(t2, 0, 32, 0, 20, 20);
	ibx_dt_free(&t2);
	/* MPI 3.1 Example 4.6 (struct): B = (2, 1, 3), D = (0, 16, 26),
	 * T = (float, type1, char): data 0..29, aligned to 8 -> extent 32 */
	{
		int64_t b3[3] = {2, 1, 3}, d3[3] = {0, 16, 26};
		ibx_dt_t *t3y[3] = {B(FLOAT), t1, B(CHAR)};

		assert_int_equal(ibx_dt_struct(3, b3, d3, t3y, &t3), IBX_OK);
		expect_bounds(t3, 0, 32, 0, 29, 8 + 9 + 3);
	}
	/* resized markers are sticky: contiguous(2, resized(int, -4, 12)) */
	assert_int_equal(ibx_dt_resized(B(INT), -4, 12, &r), IBX_OK);
	expect_bounds(r, -4, 12, 0, 4, 4);
	assert_int_equal(ibx_dt_contiguous(2, r, &c), IBX_OK);
	expect_bounds(c, -4, 24, 0, 16, 8);
	ibx_dt_free(&c);
	/* ...and win over data placed beyond them in a struct */
	{
		ibx_dt_t *r6, *s, *sy[2];
		int64_t b2[2] = {1, 1}, d2[2] = {0, 100};

		assert_int_equal(ibx_dt_resized(B(INT), 0, 6, &r6), IBX_OK);
		sy[0] = r6, sy[1] = B(CHAR);
		assert_int_equal(ibx_dt_struct(2, b2, d2, sy, &s), IBX_OK);
		expect_bounds(s, 0, 6, 0, 101, 5);
		ibx_dt_free(&s);
		/* no alignment padding once markers exist: contiguous(1, resized(int, 0, 6)) */
		assert_int_equal(ibx_dt_contiguous(1, r6, &s), IBX_OK);
		expect_bounds(s, 0, 6, 0, 4, 4);
		ibx_dt_free(&s);
		ibx_dt_free(&r6);
	}
	/* eps applies to any marker-free typemap: hvector(2, 1, 12 bytes, double)
	 * (Open MPI: 24; MPICH pads structs only: 20) */
	assert_int_equal(ibx_dt_hvector(2, 1, 12, B(DOUBLE), &c), IBX_OK);
	expect_bounds(c, 0, 24, 0, 20, 16);
	ibx_dt_free(&c);
	/* a child's padding travels with it: hvector(2, 1, 20 bytes, {double, char})
	 * spans 20 + 16 bytes, padded to 40 (the data alone, 29 bytes, would
	 * give 32) */
	assert_int_equal(ibx_dt_hvector(2, 1, 20, t1, &c), IBX_OK);
	expect_bounds(c, 0, 40, 0, 29, 18);
	ibx_dt_free(&c);
	assert_int_equal(ibx_dt_contiguous(2, t1, &c), IBX_OK);
	expect_bounds(c, 0, 32, 0, 25, 18);
	ibx_dt_free(&c);
	/* negative displacement: lb follows the data */
	{
		int64_t b1 = 2, d1 = -3;

		assert_int_equal(ibx_dt_hindexed(1, &b1, &d1, B(CHAR), &c), IBX_OK);
		expect_bounds(c, -3, 2, -3, 2, 2);
		ibx_dt_free(&c);
	}
	/* vector(3, 2, 4, int): extent (2*4 + 2) * 4 */
	assert_int_equal(ibx_dt_vector(3, 2, 4, B(INT), &c), IBX_OK);
	expect_bounds(c, 0, 40, 0, 40, 24);
	/* dup keeps everything */
	{
		ibx_dt_t *dd;

		assert_int_equal(ibx_dt_dup(c, &dd), IBX_OK);
		expect_bounds(dd, 0, 40, 0, 40, 24);
		ibx_dt_free(&dd);
	}
	ibx_dt_free(&c);
	/* empty types */
	assert_int_equal(ibx_dt_contiguous(0, B(DOUBLE), &c), IBX_OK);
	expect_bounds(c, 0, 0, 0, 0, 0);
	assert_int_equal(ibx_dt_commit(c), IBX_OK);
	{
		ibx_dt_info_t in;
		ibx_dt_cursor_t cur;
		int64_t done;
		char out[4];

		assert_int_equal(ibx_dt_query(c, &in), IBX_OK);
		assert_true(in.contig && in.dense);
		assert_int_equal(ibx_dt_cursor_init(&cur, c, 1000, NULL, 0), IBX_OK);
		assert_int_equal(ibx_dt_cursor_pack(&cur, out, 4, &done), IBX_OK);
		assert_int_equal(done, 0);
	}
	ibx_dt_free(&c);
	ibx_dt_free(&t3);
	ibx_dt_free(&t1);
	ibx_dt_free(&r);
}

static void expect_blocks(ibx_dt_t *dt, int64_t count, const int64_t *offlen, int64_t n)
{
	ibx_dt_block_t *bl;
	int64_t got;

	assert_int_equal(ibx_dt_commit(dt), IBX_OK);
	assert_int_equal(ibx_dt_flatten(dt, count, &bl, &got), IBX_OK);
	assert_int_equal(got, n);
	for (int64_t k = 0; k < n; k++) {
		assert_int_equal(bl[k].off, offlen[2 * k]);
		assert_int_equal(bl[k].len, offlen[2 * k + 1]);
	}
	free(bl);
}

static void test_subarray(void **state)
{
	ibx_dt_t *s;
	int64_t sizes[2] = {4, 5}, sub[2] = {2, 3}, start[2] = {1, 2};

	(void)state;
	/* C order, 4 rows x 5 doubles, rows 1-2, columns 2-4 */
	assert_int_equal(ibx_dt_subarray(2, sizes, sub, start, IBX_DT_ORDER_C, B(DOUBLE), &s),
			 IBX_OK);
	expect_bounds(s, 0, 160, 56, 64, 48);
	{
		const int64_t want[] = {56, 24, 96, 24};

		expect_blocks(s, 1, want, 2);
	}
	{
		/* count 2: the second array follows at the full extent */
		const int64_t want[] = {56, 24, 96, 24, 216, 24, 256, 24};

		expect_blocks(s, 2, want, 4);
	}
	ibx_dt_free(&s);
	/* Fortran order: dimension 0 is fastest: 4 x 5 column-major, rows 1-2 of
	 * columns 2-4 are runs of 2 at (col * 4 + 1) * 8 */
	assert_int_equal(ibx_dt_subarray(2, sizes, sub, start, IBX_DT_ORDER_FORTRAN, B(DOUBLE), &s),
			 IBX_OK);
	{
		const int64_t want[] = {72, 16, 104, 16, 136, 16};

		expect_blocks(s, 1, want, 3);
	}
	expect_bounds(s, 0, 160, 72, 80, 48);
	ibx_dt_free(&s);
	/* invalid shapes */
	start[1] = 3;
	assert_int_equal(ibx_dt_subarray(2, sizes, sub, start, IBX_DT_ORDER_C, B(DOUBLE), &s),
			 IBX_ERR_INVALID_PARAM);
	start[1] = 2;
	assert_int_equal(ibx_dt_subarray(2, sizes, sub, start, 7, B(DOUBLE), &s),
			 IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_subarray(0, sizes, sub, start, IBX_DT_ORDER_C, B(DOUBLE), &s),
			 IBX_ERR_INVALID_PARAM);
	sub[0] = 5;
	assert_int_equal(ibx_dt_subarray(2, sizes, sub, start, IBX_DT_ORDER_C, B(DOUBLE), &s),
			 IBX_ERR_INVALID_PARAM);
}

static void test_huge_vector(void **state)
{
	const int64_t n = 100000000;
	ibx_dt_t *v;
	ibx_dt_stats_t st;
	ibx_dt_info_t in;
	double win[64];
	double out[16];

	(void)state;
	assert_int_equal(ibx_dt_vector(n, 1, 2, B(DOUBLE), &v), IBX_OK);
	assert_int_equal(ibx_dt_commit(v), IBX_OK);
	assert_int_equal(ibx_dt_stats(v, &st), IBX_OK);
	/* constant memory: one loop, a few dozen bytes */
	assert_int_equal(st.loops, 1);
	assert_true(st.program_bytes <= 128);
	assert_int_equal(st.blocks, n);
	assert_int_equal(st.median_block, 8);
	assert_int_equal(st.max_block, 8);
	assert_true(st.avg_block == 8.0);
	assert_int_equal(ibx_dt_query(v, &in), IBX_OK);
	assert_int_equal(in.size, 8 * n);
	assert_int_equal(in.extent, (n - 1) * 16 + 8);
	assert_false(in.contig);
	/* seek deep into the stream: pack elements 99999990.. from a window that
	 * stands in for the (never allocated) 1.6 GB array */
	{
		int64_t first = n - 10, base_off = first * 16;
		uintptr_t origin = (uintptr_t)win - (uintptr_t)base_off;

		for (int k = 0; k < 64; k++)
			win[k] = (double)(first * 2 + k);
		assert_int_equal(ibx_dt_pack(v, 1, (void *)origin, first * 8 + 4, n * 8, out),
				 IBX_OK);
		/* first 4 bytes are the upper half of element `first` */
		assert_memory_equal(out, (char *)&win[0] + 4, 4);
		for (int k = 1; k < 10; k++)
			assert_memory_equal((char *)out + 4 + 8 * (k - 1), &win[2 * k], 8);
	}
	/* three of them: seek to the last element of the third */
	{
		ibx_dt_cursor_t c;

		assert_int_equal(ibx_dt_cursor_init(&c, v, 3, NULL, 8 * n * 3 - 8), IBX_OK);
		assert_int_equal(ibx_dt_cursor_left(&c), 8);
	}
	ibx_dt_free(&v);
}

static void test_merging(void **state)
{
	ibx_dt_t *a, *b, *c;
	ibx_dt_stats_t st;
	ibx_dt_info_t in;
	int64_t bl[2] = {1, 1}, d[2] = {0, 4};
	ibx_dt_t *ty[2] = {B(INT), B(INT)};

	(void)state;
	/* vector with stride == blocklen is contiguous */
	assert_int_equal(ibx_dt_vector(1000, 3, 3, B(INT), &a), IBX_OK);
	assert_int_equal(ibx_dt_commit(a), IBX_OK);
	assert_int_equal(ibx_dt_query(a, &in), IBX_OK);
	assert_true(in.contig && in.dense);
	assert_int_equal(ibx_dt_stats(a, &st), IBX_OK);
	assert_int_equal(st.blocks, 1);
	assert_int_equal(st.median_block, 12000);
	ibx_dt_free(&a);
	/* contiguous of struct {int; int} is one run */
	assert_int_equal(ibx_dt_struct(2, bl, d, ty, &a), IBX_OK);
	assert_int_equal(ibx_dt_contiguous(50, a, &b), IBX_OK);
	assert_int_equal(ibx_dt_commit(b), IBX_OK);
	assert_int_equal(ibx_dt_stats(b, &st), IBX_OK);
	assert_int_equal(st.loops, 1);
	assert_int_equal(st.blocks, 1);
	ibx_dt_free(&b);
	ibx_dt_free(&a);
	/* vector of vectors that tile is one loop: rows of a matrix column */
	assert_int_equal(ibx_dt_vector(3, 1, 2, B(DOUBLE), &a), IBX_OK); /* extent 40 */
	assert_int_equal(ibx_dt_resized(a, 0, 48, &b), IBX_OK);		 /* span of 3 x 16 */
	assert_int_equal(ibx_dt_contiguous(7, b, &c), IBX_OK);
	assert_int_equal(ibx_dt_commit(c), IBX_OK);
	assert_int_equal(ibx_dt_stats(c, &st), IBX_OK);
	assert_int_equal(st.loops, 1);
	assert_int_equal(st.blocks, 21);
	ibx_dt_free(&c);
	ibx_dt_free(&b);
	ibx_dt_free(&a);
	/* stats of an indexed type: blocks 4, 8, 12, 40 bytes */
	{
		int64_t ibl[4] = {1, 2, 3, 10}, idi[4] = {0, 10, 20, 40};

		assert_int_equal(ibx_dt_indexed(4, ibl, idi, B(INT), &a), IBX_OK);
		assert_int_equal(ibx_dt_commit(a), IBX_OK);
		assert_int_equal(ibx_dt_stats(a, &st), IBX_OK);
		assert_int_equal(st.blocks, 4);
		assert_int_equal(st.median_block, 8);
		assert_int_equal(st.min_block, 4);
		assert_int_equal(st.max_block, 40);
		assert_true(st.avg_block == 16.0);
		/* adjacent blocks merge at commit: (0,1) and (1,2) are one run */
		ibl[0] = 1, idi[0] = 0, ibl[1] = 2, idi[1] = 1;
		assert_int_equal(ibx_dt_indexed(2, ibl, idi, B(INT), &b), IBX_OK);
		assert_int_equal(ibx_dt_commit(b), IBX_OK);
		assert_int_equal(ibx_dt_query(b, &in), IBX_OK);
		assert_true(in.contig && in.dense);
		ibx_dt_free(&b);
		ibx_dt_free(&a);
	}
}

static void test_refcount(void **state)
{
	ibx_dt_t *child, *mid, *top, *ty[2];
	int64_t bl[2] = {2, 1}, d[2] = {0, 64};
	double src[32], out[8];

	(void)state;
	for (int k = 0; k < 32; k++)
		src[k] = k;
	assert_int_equal(ibx_dt_vector(2, 1, 3, B(DOUBLE), &child), IBX_OK);
	assert_int_equal(ibx_dt_contiguous(2, child, &mid), IBX_OK);
	ty[0] = mid, ty[1] = child;
	assert_int_equal(ibx_dt_struct(2, bl, d, ty, &top), IBX_OK);
	/* free the children's handles before the parent is even committed */
	assert_int_equal(ibx_dt_free(&child), IBX_OK);
	assert_null(child);
	assert_int_equal(ibx_dt_free(&mid), IBX_OK);
	assert_int_equal(ibx_dt_commit(top), IBX_OK);
	assert_int_equal(ibx_dt_pack(top, 1, src, 0, 64, out), IBX_OK);
	/* mid = child x2 at extent 32: elements 0,3,4,7; twice (mid extent 64),
	 * then child at byte 64: elements 8, 11 */
	{
		const double want[8] = {0, 3, 4, 7, 8, 11, 12, 15};

		assert_memory_equal(out, want, sizeof(want));
	}
	/* a retained reference outlives the handle */
	assert_int_equal(ibx_dt_retain(top), IBX_OK);
	{
		ibx_dt_t *keep = top;

		assert_int_equal(ibx_dt_free(&top), IBX_OK);
		assert_int_equal(ibx_dt_pack(keep, 1, src, 0, 16, out), IBX_OK);
		assert_int_equal(ibx_dt_free(&keep), IBX_OK);
	}
	/* wire ids: a freed type's id is reused with a higher version */
	{
		ibx_dt_t *x, *y;
		uint64_t id1, id2;
		uint32_t v1, v2;

		assert_int_equal(ibx_dt_contiguous(3, B(INT), &x), IBX_OK);
		assert_int_equal(ibx_dt_commit(x), IBX_OK);
		assert_int_equal(ibx_dt_wire_id(x, &id1, &v1), IBX_OK);
		ibx_dt_free(&x);
		assert_int_equal(ibx_dt_contiguous(4, B(INT), &y), IBX_OK);
		assert_int_equal(ibx_dt_commit(y), IBX_OK);
		assert_int_equal(ibx_dt_wire_id(y, &id2, &v2), IBX_OK);
		assert_int_equal(id1, id2);
		assert_true(v2 > v1);
		ibx_dt_free(&y);
	}
}

static void test_invalid(void **state)
{
	ibx_dt_t *t = NULL, *u;
	int64_t bl[2] = {1, -1}, d[2] = {0, 8};
	ibx_dt_t *ty[2] = {B(INT), NULL};
	char buf[64], out[64];

	(void)state;
	/* negative counts and block lengths */
	assert_int_equal(ibx_dt_contiguous(-1, B(INT), &t), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_vector(-2, 1, 1, B(INT), &t), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_vector(2, -1, 1, B(INT), &t), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_hvector(2, -1, 8, B(INT), &t), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_indexed(2, bl, d, B(INT), &t), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_hindexed(-1, bl, d, B(INT), &t), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_indexed_block(2, -3, d, B(INT), &t), IBX_ERR_INVALID_PARAM);
	ty[1] = B(INT);
	assert_int_equal(ibx_dt_struct(2, bl, d, ty, &t), IBX_ERR_INVALID_PARAM);
	assert_null(t);
	/* NULL handles and arrays */
	ty[1] = NULL, bl[1] = 1;
	assert_int_equal(ibx_dt_struct(2, bl, d, ty, &t), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_contiguous(2, NULL, &t), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_contiguous(2, B(INT), NULL), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_indexed(2, NULL, d, B(INT), &t), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_hindexed_block(2, 1, NULL, B(INT), &t), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_resized(NULL, 0, 4, &t), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_commit(NULL), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_free(NULL), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_free(&t), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_query(NULL, &(ibx_dt_info_t){0}), IBX_ERR_INVALID_PARAM);
	/* bad basic types */
	assert_int_equal(ibx_dt_basic(9, 0, 1, &t), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_basic(9, 6, 4, &t), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_basic(9, 12, 3, &t), IBX_ERR_INVALID_PARAM);
	/* int64 overflow of sizes, extents, strides, displacements */
	assert_int_equal(ibx_dt_contiguous(INT64_MAX / 4, B(DOUBLE), &t), IBX_ERR_OVERFLOW);
	assert_int_equal(ibx_dt_vector(2, 1, INT64_MAX / 4, B(DOUBLE), &t), IBX_ERR_OVERFLOW);
	assert_int_equal(ibx_dt_hvector(3, 1, INT64_MAX / 2 + 1, B(CHAR), &t), IBX_ERR_OVERFLOW);
	assert_int_equal(ibx_dt_hvector(INT64_MAX / 2, 4, 1, B(CHAR), &t), IBX_ERR_OVERFLOW);
	d[1] = INT64_MAX / 2;
	bl[1] = 1;
	assert_int_equal(ibx_dt_indexed(2, bl, d, B(DOUBLE), &t), IBX_ERR_OVERFLOW);
	d[1] = INT64_MAX - 2;
	assert_int_equal(ibx_dt_hindexed(2, bl, d, B(DOUBLE), &t), IBX_ERR_OVERFLOW);
	assert_int_equal(ibx_dt_resized(B(INT), INT64_MAX - 5, 10, &t), IBX_ERR_OVERFLOW);
	{
		/* a valid huge type, but count copies of it overflow */
		assert_int_equal(ibx_dt_contiguous(INT64_MAX / 16, B(CHAR), &u), IBX_OK);
		assert_int_equal(ibx_dt_contiguous(32, u, &t), IBX_ERR_OVERFLOW);
		assert_int_equal(ibx_dt_commit(u), IBX_OK);
		assert_int_equal(ibx_dt_pack(u, 32, buf, 0, 8, out), IBX_ERR_OVERFLOW);
		ibx_dt_free(&u);
	}
	/* uncommitted types cannot move data; bad ranges */
	assert_int_equal(ibx_dt_contiguous(4, B(INT), &u), IBX_OK);
	assert_int_equal(ibx_dt_pack(u, 1, buf, 0, 16, out), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_unpack(u, 1, buf, 0, 16, out), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_stats(u, &(ibx_dt_stats_t){0}), IBX_ERR_INVALID_PARAM);
	{
		size_t len;

		assert_int_equal(ibx_dt_wire_size(u, &len), IBX_ERR_INVALID_PARAM);
	}
	assert_int_equal(ibx_dt_commit(u), IBX_OK);
	assert_int_equal(ibx_dt_pack(u, 1, buf, 0, 17, out), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_pack(u, 1, buf, 8, 4, out), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_pack(u, -1, buf, 0, 0, out), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_pack(NULL, 1, buf, 0, 0, out), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_dt_pack(u, 1, buf, 0, 16, out), IBX_OK);
	ibx_dt_free(&u);
}

/* ---- hostile blobs ----------------------------------------------------------------------------
 */

static void p64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static void p32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* a blob with @n loops and @naux aux words; loops and aux to be filled */
static uint8_t *mk_blob(uint32_t n, uint64_t naux, size_t *len_p)
{
	size_t len = 96 + 56 * (size_t)n + 8 * (size_t)naux;
	uint8_t *b = calloc(1, len);

	assert_non_null(b);
	p32(b, 0x44584249u);
	b[4] = 1;
	p32(b + 20, n);
	p64(b + 24, naux);
	*len_p = len;
	return b;
}

static uint8_t *loop_at(uint8_t *b, uint32_t i)
{
	return b + 96 + 56 * (size_t)i;
}

static void set_loop(uint8_t *b, uint32_t i, int kind, int leaf, uint32_t child, int64_t count,
		     int64_t blen, int64_t stride, int64_t off, int64_t ext, uint64_t aux)
{
	uint8_t *e = loop_at(b, i);

	e[0] = (uint8_t)kind;
	e[1] = (uint8_t)leaf;
	p32(e + 4, child);
	p64(e + 8, (uint64_t)count);
	p64(e + 16, (uint64_t)blen);
	p64(e + 24, (uint64_t)stride);
	p64(e + 32, (uint64_t)off);
	p64(e + 40, (uint64_t)ext);
	p64(e + 48, aux);
}

static void set_hdr(uint8_t *b, int64_t size, int64_t lb, int64_t ext, int64_t tlb, int64_t tub,
		    uint64_t hash, int64_t nelem)
{
	p64(b + 32, (uint64_t)size);
	p64(b + 40, (uint64_t)lb);
	p64(b + 48, (uint64_t)ext);
	p64(b + 56, (uint64_t)tlb);
	p64(b + 64, (uint64_t)tub);
	p64(b + 72, hash);
	p64(b + 80, (uint64_t)nelem);
}

static ibx_status_t try_blob(uint8_t *b, size_t len)
{
	ibx_dt_t *r = NULL;
	ibx_status_t st;

	assert_int_equal(ibx_dt_wire_seal(b, len), IBX_OK);
	st = ibx_dt_deserialize(b, len, &r);
	if (st == IBX_OK) {
		walk_remote_safely(r);
		ibx_dt_free(&r);
	} else {
		assert_null(r);
	}
	return st;
}

static void test_hostile_blobs(void **state)
{
	size_t len;
	uint8_t *b;

	(void)state;
	/* the well-formed baseline: VEC leaf 4 x 8 bytes stride 16 */
	b = mk_blob(1, 0, &len);
	set_loop(b, 0, 1, 1, 0, 4, 8, 16, 0, 0, 0);
	set_hdr(b, 32, 0, 56, 0, 56, 12345, 4);
	assert_int_equal(try_blob(b, len), IBX_OK);
	/* header lies about size / bounds */
	set_hdr(b, 40, 0, 56, 0, 56, 12345, 4);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_hdr(b, 32, 0, 56, 0, 64, 12345, 4);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_hdr(b, 32, INT64_MAX, 56, 0, 56, 12345, 4);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_hdr(b, 32, 0, 56, 0, 56, 12345, 33); /* more elements than bytes */
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_hdr(b, 32, 0, 56, 0, 56, 12345, 4);
	/* zero / negative counts and lengths, unknown kinds, stray fields */
	set_loop(b, 0, 1, 1, 0, 0, 8, 16, 0, 0, 0);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_loop(b, 0, 1, 1, 0, 4, 0, 16, 0, 0, 0);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_loop(b, 0, 1, 1, 0, 4, -8, 16, 0, 0, 0);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_loop(b, 0, 9, 1, 0, 4, 8, 16, 0, 0, 0);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_loop(b, 0, 1, 2, 0, 4, 8, 16, 0, 0, 0);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_loop(b, 0, 1, 1, 0, 4, 8, 16, 0, 7, 0);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	/* a non-leaf pointing at itself (a cycle) */
	set_loop(b, 0, 1, 0, 0, 4, 1, 16, 0, 0, 0);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	/* sizes and spans beyond int64 */
	set_loop(b, 0, 1, 1, 0, INT64_MAX / 2, 8, 16, 0, 0, 0);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_loop(b, 0, 1, 1, 0, 4, 8, INT64_MAX / 2, 0, 0, 0);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_loop(b, 0, 1, 1, 0, 4, 8, 16, INT64_MAX - 20, 0, 0);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	/* length must match exactly */
	set_loop(b, 0, 1, 1, 0, 4, 8, 16, 0, 0, 0);
	assert_int_equal(try_blob(b, len), IBX_OK);
	p64(b + 24, 1);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	p64(b + 24, 0);
	p32(b + 20, 1000000);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	p32(b + 20, 1);
	b[4] = 2; /* unknown format */
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	free(b);

	/* indexed loops: aux arrays must be in place, lengths >= 1 */
	b = mk_blob(2, 2 + 4, &len);
	set_loop(b, 0, 2, 1, 0, 2, 4, 0, 0, 0, 0);   /* BLKIDX leaf, displs at 0 */
	set_loop(b, 1, 3, 0, 0, 2, 0, 0, 0, 100, 2); /* IDX of loop 0 */
	p64(loop_at(b, 2), 0);			     /* aux[0] BLKIDX displ 0 */
	p64(loop_at(b, 2) + 8, 8);		     /* aux[1] displ 8 */
	p64(loop_at(b, 2) + 16, 0);		     /* IDX displs */
	p64(loop_at(b, 2) + 24, 1000);
	p64(loop_at(b, 2) + 32, 1); /* IDX blens */
	p64(loop_at(b, 2) + 40, 3);
	/* instance of loop 0 spans [0, 12), copies 100 apart; blocks at 0 and 1000 */
	set_hdr(b, 32, 0, 1212, 0, 1212, 99, 8);
	assert_int_equal(try_blob(b, len), IBX_OK);
	p64(loop_at(b, 2) + 40, 0);
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	p64(loop_at(b, 2) + 40, 3);
	set_loop(b, 1, 3, 0, 0, 2, 0, 0, 0, 100, 3); /* aux overlapping */
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_loop(b, 1, 3, 0, 1, 2, 0, 0, 0, 100, 2); /* child is itself */
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_loop(b, 1, 3, 0, 0, 3, 0, 0, 0, 100, 2); /* count beyond its aux */
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_loop(b, 1, 3, 0, 0, 2, 0, 0, 0, INT64_MAX / 2, 2); /* copies overflow */
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	set_loop(b, 1, 4, 0, 0, 2, 0, 0, 0, 0, 2); /* STRUCT whose children[] = 1, 3 */
	assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
	free(b);

	/* nesting deeper than a cursor holds: a chain of VECs of count 1 */
	{
		uint32_t n = IBX_DT_MAX_DEPTH + 1;

		b = mk_blob(n, 0, &len);
		set_loop(b, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0);
		for (uint32_t i = 1; i < n; i++)
			set_loop(b, i, 1, 0, i - 1, 1, 1, 0, 0, 0, 0);
		set_hdr(b, 1, 0, 1, 0, 1, 5, 1);
		assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
		free(b);
		b = mk_blob(n - 1, 0, &len);
		set_loop(b, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0);
		for (uint32_t i = 1; i < n - 1; i++)
			set_loop(b, i, 1, 0, i - 1, 1, 1, 0, 0, 0, 0);
		set_hdr(b, 1, 0, 1, 0, 1, 5, 1);
		assert_int_equal(try_blob(b, len), IBX_OK);
		free(b);
	}
	/* an exponential DAG (STRUCT of two copies of the previous, 20 levels):
	 * only 2^20 runs, but counted without expanding */
	{
		uint32_t n = 21;

		b = mk_blob(n, 4 * (n - 1), &len);
		set_loop(b, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0);
		for (uint32_t i = 1; i < n; i++) {
			uint8_t *a = loop_at(b, n) + 32 * (size_t)(i - 1);

			set_loop(b, i, 4, 0, 0, 2, 0, 0, 0, 0, 4 * (uint64_t)(i - 1));
			p64(a, 0);
			p64(a + 8, (uint64_t)1 << (i - 1));
			p64(a + 16, i - 1);
			p64(a + 24, i - 1);
		}
		set_hdr(b, 1 << 20, 0, 1 << 20, 0, 1 << 20, 5, 1 << 20);
		assert_int_equal(try_blob(b, len), IBX_OK);
		{
			ibx_dt_t *r;
			ibx_dt_stats_t st;

			assert_int_equal(ibx_dt_deserialize(b, len, &r), IBX_OK);
			assert_int_equal(ibx_dt_stats(r, &st), IBX_OK);
			assert_int_equal(st.blocks, 1 << 20);
			assert_int_equal(st.loops, 21);
			assert_int_equal(st.median_block, 1);
			ibx_dt_free(&r);
		}
		/* one element more than bytes */
		set_hdr(b, 1 << 20, 0, 1 << 20, 0, 1 << 20, 5, (1 << 20) + 1);
		assert_int_equal(try_blob(b, len), IBX_ERR_CORRUPT);
		free(b);
	}
	/* garbage */
	{
		uint8_t junk[300];

		for (int k = 0; k < 200; k++) {
			size_t n = (size_t)rr(0, sizeof(junk));
			ibx_dt_t *r = NULL;

			for (size_t j = 0; j < n; j++)
				junk[j] = (uint8_t)rnd();
			assert_int_equal(ibx_dt_deserialize(junk, n, &r), IBX_ERR_CORRUPT);
		}
	}
}

/* ---- setup ----------------------------------------------------------------------------------- */

static int group_setup(void **state)
{
	const char *env = getenv("IBX_TEST_SEED");

	(void)state;
	seed_used = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ (uint64_t)getpid() << 20;
	rng_state = seed_used;
	printf("dtype test seed: %llu (IBX_TEST_SEED=%llu replays it)\n",
	       (unsigned long long)seed_used, (unsigned long long)seed_used);
	for (int i = 0; i < NBASIC; i++)
		if (ibx_dt_basic((uint32_t)basics[i].code, basics[i].size, basics[i].align,
				 &basic_dt[i]) != IBX_OK)
			return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	for (int i = 0; i < NBASIC; i++)
		ibx_dt_free(&basic_dt[i]);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mpi_extent_rules), cmocka_unit_test(test_subarray),
	    cmocka_unit_test(test_huge_vector),	     cmocka_unit_test(test_merging),
	    cmocka_unit_test(test_refcount),	     cmocka_unit_test(test_invalid),
	    cmocka_unit_test(test_hostile_blobs),    cmocka_unit_test(test_random_types),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
