/*
 * wire.c — the serialised form of a committed type, sent to a peer so that
 * it can address our buffer block by block (Multi-W, [Wu03] §5.4.2), cached there by (rank, type
 * id, version).
 *
 * Layout, little-endian, no padding:
 *
 *   0  u32 magic "IBXD"   4 u16 format (1)   6 u16 flags (0)
 *   8  u64 type id        16 u32 version     20 u32 nloops     24 u64 naux
 *   32 i64 size  40 i64 lb  48 i64 extent  56 i64 true_lb  64 i64 true_ub
 *   72 u64 signature hash  80 i64 signature elements  88 u64 checksum
 *   96 nloops x 56 bytes:  u8 kind, u8 leaf, u16 0, u32 child,
 *                          i64 count, blen, stride, off, el_extent, u64 aux
 *      then naux x i64: per loop, in loop order and back to back,
 *      BLKIDX displs[count]; IDX displs[count] blens[count];
 *      STRUCT displs[count] children[count]  (prefix arrays are rebuilt)
 *
 * The checksum (FNV-1a 64 over the blob, its own field as zeros) catches
 * accidents; the validation below is what makes a hostile blob harmless:
 * exact length, known kinds, children strictly before their parent (so no
 * cycles, and depth <= IBX_DT_MAX_DEPTH), aux arrays exactly back to back
 * (memory is linear in the blob length, capped by IBX_DT_WIRE_MAX), every
 * count/length >= 1, every packed size and every byte span recomputed with
 * checked arithmetic, and the header's size and bounds equal to what the
 * loops describe. Anything else is IBX_ERR_CORRUPT.
 */
#include "dtype_int.h"
#include "dt_config.h"

IBX_CONFIG_DEFINE(ibx_dt, "core/dtype_rdma", "IBX_", ibx_dt_config_t, IBX_DT_CONFIG, NULL)

#define WIRE_MAGIC  0x44584249u /* "IBXD" */
#define WIRE_FORMAT 1
#define WIRE_HDR    96
#define WIRE_LOOP   56
#define WIRE_CSUM   88
#define SIG_P_LIMIT ((UINT64_C(1) << 61) - 1)

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static uint32_t get32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}
static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t checksum(const uint8_t *p, size_t len)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < len; i++) {
		uint8_t c = (i >= WIRE_CSUM && i < WIRE_CSUM + 8) ? 0 : p[i];

		h = (h ^ c) * UINT64_C(0x100000001b3);
	}
	return h;
}

static uint64_t wire_words(int kind, int64_t count)
{
	switch (kind) {
	case IBX_DT_LOOP_BLKIDX: return (uint64_t)count;
	case IBX_DT_LOOP_IDX:
	case IBX_DT_LOOP_STRUCT: return 2 * (uint64_t)count;
	default: return 0;
	}
}

/* ---- serialise ------------------------------------------------------------------ */

ibx_status_t ibx_dt_wire_size(const ibx_dt_t *dt, size_t *len_p)
{
	const ibx_dt_prog_t *p;
	uint64_t words = 0;

	if (!dt || !len_p || !dt->committed)
		return IBX_ERR_INVALID_PARAM;
	p = dt->prog;
	for (uint32_t i = 0; i < p->nloops; i++)
		words += wire_words(p->loops[i].kind, p->loops[i].count);
	*len_p = WIRE_HDR + (size_t)p->nloops * WIRE_LOOP + (size_t)words * 8;
	return IBX_OK;
}

ibx_status_t ibx_dt_serialize(const ibx_dt_t *dt, void *buf, size_t len, size_t *used_p)
{
	const ibx_dt_prog_t *p;
	const int64_t *aux;
	uint8_t *o = buf, *q;
	uint64_t at = 0;
	size_t need;
	ibx_status_t st;

	st = ibx_dt_wire_size(dt, &need);
	if (st)
		return st;
	if (!buf || !used_p)
		return IBX_ERR_INVALID_PARAM;
	if (len < need)
		return IBX_ERR_TRUNCATED;
	p = dt->prog;
	aux = dt_prog_aux(p);
	memset(o, 0, WIRE_HDR);
	put32(o, WIRE_MAGIC);
	put16(o + 4, WIRE_FORMAT);
	put16(o + 6, 0);
	put64(o + 8, dt->wire_id);
	put32(o + 16, dt->wire_version);
	put32(o + 20, p->nloops);
	put64(o + 32, (uint64_t)dt->size);
	put64(o + 40, (uint64_t)dt->lb);
	put64(o + 48, (uint64_t)(dt->ub - dt->lb));
	put64(o + 56, (uint64_t)dt->true_lb);
	put64(o + 64, (uint64_t)dt->true_ub);
	put64(o + 72, dt->sig.h);
	put64(o + 80, (uint64_t)dt->nelem);
	q = o + WIRE_HDR + (size_t)p->nloops * WIRE_LOOP;
	for (uint32_t i = 0; i < p->nloops; i++) {
		const ibx_dt_loop_t *l = &p->loops[i];
		uint8_t *e = o + WIRE_HDR + (size_t)i * WIRE_LOOP;
		uint64_t w = wire_words(l->kind, l->count);

		e[0] = l->kind;
		e[1] = l->leaf;
		put16(e + 2, 0);
		put32(e + 4, l->leaf || l->kind == IBX_DT_LOOP_STRUCT ? 0 : l->child);
		put64(e + 8, (uint64_t)l->count);
		put64(e + 16, (uint64_t)l->blen);
		put64(e + 24, (uint64_t)l->stride);
		put64(e + 32, (uint64_t)l->off);
		put64(e + 40, (uint64_t)l->el_extent);
		put64(e + 48, w ? at : 0);
		for (uint64_t k = 0; k < w; k++, q += 8)
			put64(q, (uint64_t)aux[l->aux + k]);
		at += w;
	}
	put64(o + 24, at);
	put64(o + WIRE_CSUM, checksum(o, need));
	*used_p = need;
	return IBX_OK;
}

ibx_status_t ibx_dt_wire_seal(void *buf, size_t len)
{
	if (!buf || len < WIRE_HDR)
		return IBX_ERR_INVALID_PARAM;
	put64((uint8_t *)buf + WIRE_CSUM, checksum(buf, len));
	return IBX_OK;
}

/* ---- deserialise ---------------------------------------------------------------- */

#define BAD(...)                                                                                   \
	do {                                                                                       \
		ibx_debug("datatype blob: " __VA_ARGS__);                                          \
		st = IBX_ERR_CORRUPT;                                                              \
		goto err;                                                                          \
	} while (0)

/* byte span [lo, hi) of @b copies of a body spanning [lo, hi), @ext apart */
static bool copies_span(int64_t b, int64_t ext, int64_t *lo, int64_t *hi)
{
	int64_t e;

	if (!dt_mul(b - 1, ext, &e))
		return false;
	return dt_add(*lo, dt_min(0, e), lo) && dt_add(*hi, dt_max(0, e), hi);
}

typedef struct vinfo {
	int64_t lo, hi; /* bytes touched by one instance, relative to its base */
	uint32_t depth;
} vinfo_t;

ibx_status_t ibx_dt_deserialize(const void *buf, size_t len, ibx_dt_t **dt_p)
{
	const uint8_t *in = buf;
	ibx_dt_prog_t *p = NULL;
	ibx_dt_t *dt = NULL;
	vinfo_t *vi = NULL;
	ibx_status_t st;
	uint32_t nloops;
	uint64_t naux, at = 0, rt = 0;
	int64_t size, lb, extent, tlb, tub, nelem, ub;
	uint64_t hash;
	const uint8_t *wl, *wa;
	int64_t *aux;

	if (!buf || !dt_p)
		return IBX_ERR_INVALID_PARAM;
	if (len < WIRE_HDR)
		BAD("%zu bytes, shorter than the header", len);
	if ((int64_t)len > ibx_dt_config()->DT_WIRE_MAX || len > SIZE_MAX / 4)
		BAD("%zu bytes, over IBX_DT_WIRE_MAX", len);
	if (get32(in) != WIRE_MAGIC || get16(in + 4) != WIRE_FORMAT || get16(in + 6) != 0)
		BAD("bad magic/format");
	nloops = get32(in + 20);
	naux = get64(in + 24);
	if (nloops > (len - WIRE_HDR) / WIRE_LOOP)
		BAD("%u loops do not fit", nloops);
	if (naux != (len - WIRE_HDR - (size_t)nloops * WIRE_LOOP) / 8 ||
	    (len - WIRE_HDR - (size_t)nloops * WIRE_LOOP) % 8)
		BAD("length %zu does not match %u loops and %llu aux words", len, nloops,
		    (unsigned long long)naux);
	if (get64(in + WIRE_CSUM) != checksum(in, len))
		BAD("checksum mismatch");
	size = (int64_t)get64(in + 32);
	lb = (int64_t)get64(in + 40);
	extent = (int64_t)get64(in + 48);
	tlb = (int64_t)get64(in + 56);
	tub = (int64_t)get64(in + 64);
	hash = get64(in + 72);
	nelem = (int64_t)get64(in + 80);
	if (!dt_add(lb, extent, &ub))
		BAD("lb + extent overflows");
	if (hash >= SIG_P_LIMIT || nelem < 0 || nelem > size || (nelem == 0) != (size == 0) ||
	    (nelem == 0 && hash != 0))
		BAD("inconsistent signature");
	wl = in + WIRE_HDR;
	wa = wl + (size_t)nloops * WIRE_LOOP;

	/* pass 1: kinds, aux ranges back to back, runtime aux size */
	for (uint32_t i = 0; i < nloops; i++) {
		const uint8_t *e = wl + (size_t)i * WIRE_LOOP;
		int kind = e[0];
		int64_t count = (int64_t)get64(e + 8);
		uint64_t w;

		if (kind < IBX_DT_LOOP_VEC || kind > IBX_DT_LOOP_STRUCT || e[1] > 1 ||
		    get16(e + 2) != 0 || (kind == IBX_DT_LOOP_STRUCT && e[1]))
			BAD("loop %u: bad kind", i);
		if (count < 1 || (kind != IBX_DT_LOOP_VEC && (uint64_t)count > naux))
			BAD("loop %u: bad count %lld", i, (long long)count);
		w = wire_words(kind, count);
		if (get64(e + 48) != (w ? at : 0) || w > naux - at)
			BAD("loop %u: aux out of place", i);
		at += w;
		rt += kind == IBX_DT_LOOP_BLKIDX ? w : (w ? w + w / 2 + 1 : 0);
	}
	if (at != naux)
		BAD("%llu aux words unused", (unsigned long long)(naux - at));
	st = ibx_dt_prog_alloc(nloops, rt, &p);
	if (st)
		goto err;
	vi = calloc(nloops ? nloops : 1, sizeof(*vi));
	if (!vi) {
		st = IBX_ERR_NO_MEMORY;
		goto err;
	}
	aux = dt_prog_aux(p);

	/* pass 2: fields, sizes, spans, depth — children are already checked */
	rt = 0;
	for (uint32_t i = 0; i < nloops; i++) {
		const uint8_t *e = wl + (size_t)i * WIRE_LOOP;
		ibx_dt_loop_t *l = &p->loops[i];
		const uint8_t *src = wa + 8 * (size_t)get64(e + 48);
		int64_t lo = INT64_MAX, hi = INT64_MIN, *a, v;
		uint32_t depth = 0;

		l->kind = e[0];
		l->leaf = e[1];
		l->child = get32(e + 4);
		l->count = (int64_t)get64(e + 8);
		l->blen = (int64_t)get64(e + 16);
		l->stride = (int64_t)get64(e + 24);
		l->off = (int64_t)get64(e + 32);
		l->el_extent = (int64_t)get64(e + 40);
		l->aux = rt;
		a = aux + rt;
		rt += l->kind == IBX_DT_LOOP_BLKIDX ? (uint64_t)l->count
		      : l->kind == IBX_DT_LOOP_VEC  ? 0
						    : 3 * (uint64_t)l->count + 1;
		if ((l->leaf || l->kind == IBX_DT_LOOP_STRUCT) && (l->child || l->el_extent))
			BAD("loop %u: leaf with a child", i);
		if (!l->leaf && l->kind != IBX_DT_LOOP_STRUCT && l->child >= i)
			BAD("loop %u: child %u not before it", i, l->child);
		if (l->kind != IBX_DT_LOOP_VEC && l->stride)
			BAD("loop %u: stride on an indexed loop", i);
		if ((l->kind == IBX_DT_LOOP_VEC || l->kind == IBX_DT_LOOP_BLKIDX) ? l->blen < 1
										  : l->blen != 0)
			BAD("loop %u: bad block length", i);

		if (l->kind == IBX_DT_LOOP_VEC || l->kind == IBX_DT_LOOP_BLKIDX) {
			int64_t blo = 0, bhi = l->blen, unit = 1, dlo, dhi;

			if (!l->leaf) {
				const vinfo_t *c = &vi[l->child];

				blo = c->lo;
				bhi = c->hi;
				unit = p->loops[l->child].size;
				depth = c->depth;
				if (!copies_span(l->blen, l->el_extent, &blo, &bhi))
					BAD("loop %u: copies overflow", i);
			}
			if (!dt_mul(l->count, l->blen, &l->size) ||
			    !dt_mul(l->size, unit, &l->size))
				BAD("loop %u: size overflows", i);
			if (l->kind == IBX_DT_LOOP_VEC) {
				if (!dt_mul(l->count - 1, l->stride, &v))
					BAD("loop %u: stride overflows", i);
				dlo = dt_min(0, v);
				dhi = dt_max(0, v);
				if (!dt_add(dlo, blo, &lo) || !dt_add(dhi, bhi, &hi))
					BAD("loop %u: span overflows", i);
			} else {
				for (int64_t k = 0; k < l->count; k++) {
					int64_t d = (int64_t)get64(src + 8 * k), x, y;

					a[k] = d;
					if (!dt_add(d, blo, &x) || !dt_add(d, bhi, &y))
						BAD("loop %u: span overflows", i);
					lo = dt_min(lo, x);
					hi = dt_max(hi, y);
				}
			}
		} else {
			/* IDX or STRUCT: per-iteration bodies, prefix sums rebuilt */
			a[2 * l->count] = 0;
			for (int64_t k = 0; k < l->count; k++) {
				int64_t d = (int64_t)get64(src + 8 * k);
				int64_t x = (int64_t)get64(src + 8 * (l->count + k));
				int64_t blo, bhi, bsize, y;

				a[k] = d;
				a[l->count + k] = x;
				if (l->kind == IBX_DT_LOOP_STRUCT) {
					if (x < 0 || x >= i)
						BAD("loop %u: struct child %lld not before it", i,
						    (long long)x);
					blo = vi[x].lo;
					bhi = vi[x].hi;
					bsize = p->loops[x].size;
					depth = depth > vi[x].depth ? depth : vi[x].depth;
				} else if (x < 1) {
					BAD("loop %u: block length %lld", i, (long long)x);
				} else if (l->leaf) {
					blo = 0;
					bhi = bsize = x;
				} else {
					blo = vi[l->child].lo;
					bhi = vi[l->child].hi;
					depth = vi[l->child].depth;
					if (!copies_span(x, l->el_extent, &blo, &bhi) ||
					    !dt_mul(x, p->loops[l->child].size, &bsize))
						BAD("loop %u: copies overflow", i);
				}
				if (!dt_add(a[2 * l->count + k], bsize, &a[2 * l->count + k + 1]) ||
				    !dt_add(d, blo, &y) || !dt_add(d, bhi, &v))
					BAD("loop %u: size or span overflows", i);
				lo = dt_min(lo, y);
				hi = dt_max(hi, v);
			}
			l->size = a[3 * l->count];
		}
		if (!dt_add(lo, l->off, &lo) || !dt_add(hi, l->off, &hi))
			BAD("loop %u: offset overflows", i);
		vi[i].lo = lo;
		vi[i].hi = hi;
		vi[i].depth = depth + 1;
		if (vi[i].depth > IBX_DT_MAX_DEPTH)
			BAD("loop %u: nested deeper than %d", i, IBX_DT_MAX_DEPTH);
	}
	if (nloops == 0) {
		if (size != 0 || tlb != 0 || tub != 0)
			BAD("empty layout with size %lld", (long long)size);
	} else {
		const vinfo_t *r = &vi[nloops - 1];

		if (p->loops[nloops - 1].size != size || r->lo != tlb || r->hi != tub)
			BAD("header size/bounds disagree with the loops");
		p->depth = r->depth;
	}
	st = ibx_dt_alloc(DT_REMOTE, &dt);
	if (st)
		goto err;
	dt->size = size;
	dt->lb = lb;
	dt->ub = ub;
	dt->true_lb = tlb;
	dt->true_ub = tub;
	dt->nelem = nelem;
	dt->sig = ibx_dt_sig_of_hash(hash, nelem);
	dt->markers = true;
	dt->wire_id = get64(in + 8);
	dt->wire_version = get32(in + 16);
	dt->has_wire_id = true;
	st = ibx_dt_install_prog(dt, p); /* takes p, also on failure */
	p = NULL;
	if (st) {
		if (st == IBX_ERR_OVERFLOW)
			BAD("run counts overflow");
		goto err;
	}
	free(vi);
	*dt_p = dt;
	return IBX_OK;

err:
	free(vi);
	free(p);
	if (dt)
		ibx_dt_release(dt);
	return st;
}
