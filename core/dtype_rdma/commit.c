/*
 * commit.c — compiles a constructor tree into the committed loop program.
 *
 * The program is a small DAG of loops; every loop instance sits at a base
 * address and runs `count` iterations. Iteration i starts at
 *
 *     base + off + disp(i)     disp(i) = i * stride        (VEC)
 *                              disp(i) = displs[i]         (BLKIDX, IDX, STRUCT)
 *
 * and its body is either a leaf — one contiguous run of blen (IDX:
 * blens[i]) bytes — or copies of a child loop placed el_extent apart
 * (blen copies, IDX: blens[i], STRUCT: one copy of children[i]). E.g. a 3-d
 * subarray of doubles, struct {int; double[3]} in a vector, and a vector of
 * 10^8 doubles with stride 2:
 *
 *   VEC count=nz stride=Y*X*8           VEC count=n stride=40           VEC leaf count=10^8
 *    └ VEC count=ny stride=X*8           └ STRUCT count=2               │   stride=16 blen=8
 *       └ VEC leaf count=nx*8 ...           ├ @0  VEC leaf 1x4 bytes    └─ one 64-byte loop:
 *         (one run per row)                 └ @8  VEC leaf 1x24 bytes      80 bytes committed
 *
 * (the struct of the middle example collapses further: both of its blocks
 * are runs, so it becomes an IDX leaf, and the vector over it one loop).
 * Each loop also records the packed size of one instance, and IDX/STRUCT
 * loops a prefix array of packed sizes per iteration, so a cursor seeks to
 * any packed offset by division (regular loops) or binary search (indexed
 * ones), one level at a time.
 *
 * Compilation works bottom-up on "layouts": empty, one run (off, len), or a
 * loop. Rules applied on the way (the merging of adjacent pieces):
 *   - copies of a run that touch (stride or extent == len) form one run;
 *   - a VEC repeated at exactly its span (count * stride) is one longer VEC
 *     (vector of vectors that tile, contiguous of a vector, the count loop);
 *   - a run list in packed order is merged where runs touch and becomes a
 *     run, a VEC leaf (equal lengths, constant stride), a BLKIDX leaf (equal
 *     lengths) or an IDX leaf;
 *   - a struct whose blocks are all runs is such a run list; one whose
 *     blocks are all the same loop is a BLKIDX (or VEC) over it.
 * Shared children are compiled once (memoised per commit), unreachable
 * intermediate loops are dropped when the program is laid out.
 */
#include "dtype_int.h"

enum { LAY_EMPTY, LAY_RUN, LAY_NODE };

typedef struct lay {
	int k;
	uint32_t node;
	int64_t off, len;
} lay_t;

typedef struct memo_ent {
	const ibx_dt_t *key;
	lay_t val;
} memo_ent_t;

typedef struct bld {
	ibx_dt_loop_t *loops;
	uint32_t nloops, cap;
	int64_t *aux;
	uint64_t naux, auxcap;
	memo_ent_t *memo;
	size_t memo_cap, memo_n;
} bld_t;

static const lay_t lay_empty = {.k = LAY_EMPTY};

static lay_t lay_run(int64_t off, int64_t len)
{
	return (lay_t){.k = LAY_RUN, .off = off, .len = len};
}

/* ---- builder storage ---------------------------------------------------------- */

static ibx_status_t bld_push(bld_t *b, const ibx_dt_loop_t *l, lay_t *out)
{
	if (b->nloops == b->cap) {
		uint32_t ncap = b->cap ? b->cap * 2 : 16;
		ibx_dt_loop_t *nl;

		if (b->cap >= UINT32_MAX / 4)
			return IBX_ERR_NO_RESOURCE;
		nl = realloc(b->loops, (size_t)ncap * sizeof(*nl));
		if (!nl)
			return IBX_ERR_NO_MEMORY;
		b->loops = nl;
		b->cap = ncap;
	}
	b->loops[b->nloops] = *l;
	*out = (lay_t){.k = LAY_NODE, .node = b->nloops++};
	return IBX_OK;
}

static ibx_status_t bld_aux(bld_t *b, uint64_t n, uint64_t *at_p)
{
	if (n > ((uint64_t)1 << 56) - b->naux)
		return IBX_ERR_NO_RESOURCE;
	if (b->naux + n > b->auxcap) {
		uint64_t ncap = b->auxcap ? b->auxcap : 64;
		int64_t *na;

		while (ncap < b->naux + n)
			ncap *= 2;
		if (ncap > SIZE_MAX / sizeof(int64_t))
			return IBX_ERR_NO_MEMORY;
		na = realloc(b->aux, (size_t)ncap * sizeof(*na));
		if (!na)
			return IBX_ERR_NO_MEMORY;
		b->aux = na;
		b->auxcap = ncap;
	}
	*at_p = b->naux;
	b->naux += n;
	return IBX_OK;
}

/* ---- loop makers (each returns the canonical layout) --------------------------- */

/* A VEC that may be a plain run. */
static ibx_status_t emit_vec(bld_t *b, ibx_dt_loop_t *m, lay_t *out)
{
	if (m->leaf && (m->count == 1 || m->stride == m->blen)) {
		*out = lay_run(m->off, m->size);
		return IBX_OK;
	}
	if (m->count == 1)
		m->stride = 0;
	return bld_push(b, m, out);
}

static ibx_status_t vec_leaf(bld_t *b, int64_t count, int64_t stride, int64_t blen, int64_t off,
			     lay_t *out)
{
	ibx_dt_loop_t l = {.kind = IBX_DT_LOOP_VEC, .leaf = 1};

	l.count = count;
	l.blen = blen;
	l.stride = stride;
	l.off = off;
	if (!dt_mul(count, blen, &l.size))
		return IBX_ERR_OVERFLOW;
	return emit_vec(b, &l, out);
}

static ibx_status_t vec_node(bld_t *b, int64_t count, int64_t blen, int64_t stride, int64_t ext,
			     int64_t off, uint32_t child, lay_t *out)
{
	ibx_dt_loop_t l = {.kind = IBX_DT_LOOP_VEC, .leaf = 0};

	l.count = count;
	l.blen = blen;
	l.stride = count > 1 ? stride : 0;
	l.el_extent = blen > 1 ? ext : 0;
	l.off = off;
	l.child = child;
	if (!dt_mul(count, blen, &l.size) || !dt_mul(l.size, b->loops[child].size, &l.size))
		return IBX_ERR_OVERFLOW;
	return bld_push(b, &l, out);
}

/* Turns a run into a (one-iteration) loop where a loop index is needed. */
static ibx_status_t as_node(bld_t *b, lay_t l, uint32_t *idx_p)
{
	ibx_dt_loop_t r = {.kind = IBX_DT_LOOP_VEC, .leaf = 1, .count = 1};
	lay_t out;
	ibx_status_t st;

	if (l.k == LAY_NODE) {
		*idx_p = l.node;
		return IBX_OK;
	}
	r.blen = r.size = l.len;
	r.off = l.off;
	st = bld_push(b, &r, &out);
	if (st)
		return st;
	*idx_p = out.node;
	return IBX_OK;
}

static ibx_status_t shift(bld_t *b, lay_t l, int64_t d, lay_t *out)
{
	ibx_dt_loop_t m;

	if (d == 0 || l.k == LAY_EMPTY) {
		*out = l;
		return IBX_OK;
	}
	if (l.k == LAY_RUN) {
		if (!dt_add(l.off, d, &l.off))
			return IBX_ERR_OVERFLOW;
		*out = l;
		return IBX_OK;
	}
	m = b->loops[l.node];
	if (!dt_add(m.off, d, &m.off))
		return IBX_ERR_OVERFLOW;
	return bld_push(b, &m, out);
}

/* k copies of loop @c placed @ext apart as one VEC, when they tile. */
static bool vec_merge(const ibx_dt_loop_t *c, int64_t k, int64_t ext, ibx_dt_loop_t *m)
{
	int64_t span;

	if (c->kind != IBX_DT_LOOP_VEC)
		return false;
	if (c->count > 1 && (!dt_mul(c->count, c->stride, &span) || span != ext))
		return false;
	*m = *c;
	if (!dt_mul(c->count, k, &m->count) || !dt_mul(c->size, k, &m->size))
		return false;
	m->stride = c->count > 1 ? c->stride : ext;
	return true;
}

/* count blocks at off + i*stride, each blen copies of @l placed ext apart. */
static ibx_status_t mk_vec(bld_t *b, int64_t count, int64_t blen, int64_t stride, int64_t ext,
			   int64_t off, lay_t l, lay_t *out)
{
	ibx_dt_loop_t m;
	ibx_status_t st;
	int64_t v;

	if (count == 0 || blen == 0 || l.k == LAY_EMPTY) {
		*out = lay_empty;
		return IBX_OK;
	}
	if (count == 1)
		stride = 0;
	if (blen > 1) {
		if (l.k == LAY_RUN) {
			if (ext == l.len) {
				if (!dt_mul(l.len, blen, &l.len))
					return IBX_ERR_OVERFLOW;
				st = IBX_OK;
			} else {
				st = vec_leaf(b, blen, ext, l.len, l.off, &l);
			}
		} else if (vec_merge(&b->loops[l.node], blen, ext, &m)) {
			st = emit_vec(b, &m, &l);
		} else if (count == 1) {
			return vec_node(b, blen, 1, ext, 0, off, l.node, out);
		} else {
			return vec_node(b, count, blen, stride, ext, off, l.node, out);
		}
		if (st)
			return st;
	}
	if (count == 1)
		return shift(b, l, off, out);
	if (l.k == LAY_RUN) {
		if (!dt_add(off, l.off, &v))
			return IBX_ERR_OVERFLOW;
		return vec_leaf(b, count, stride, l.len, v, out);
	}
	if (vec_merge(&b->loops[l.node], count, stride, &m)) {
		if (!dt_add(m.off, off, &m.off))
			return IBX_ERR_OVERFLOW;
		return emit_vec(b, &m, out);
	}
	return vec_node(b, count, 1, stride, 0, off, l.node, out);
}

/* BLKIDX or IDX loop over displs[m] (leaf: runs; else copies of @child). */
static ibx_status_t idx_loop(bld_t *b, int kind, bool leaf, int64_t m, const int64_t *displs,
			     const int64_t *blens, int64_t blen, int64_t ext, uint32_t child,
			     lay_t *out)
{
	ibx_dt_loop_t l = {.kind = (uint8_t)kind, .leaf = leaf, .count = m};
	int64_t unit = leaf ? 1 : b->loops[child].size;
	uint64_t words = kind == IBX_DT_LOOP_BLKIDX ? (uint64_t)m : 3 * (uint64_t)m + 1;
	ibx_status_t st;
	int64_t *a;

	st = bld_aux(b, words, &l.aux);
	if (st)
		return st;
	a = b->aux + l.aux;
	memcpy(a, displs, (size_t)m * sizeof(*a));
	if (kind == IBX_DT_LOOP_BLKIDX) {
		l.blen = blen;
		if (!dt_mul(m, blen, &l.size) || !dt_mul(l.size, unit, &l.size))
			return IBX_ERR_OVERFLOW;
	} else {
		memcpy(a + m, blens, (size_t)m * sizeof(*a));
		a[2 * m] = 0;
		for (int64_t k = 0; k < m; k++) {
			int64_t v;

			if (!dt_mul(blens[k], unit, &v) ||
			    !dt_add(a[2 * m + k], v, &a[2 * m + k + 1]))
				return IBX_ERR_OVERFLOW;
		}
		l.size = a[3 * m];
	}
	if (!leaf) {
		l.child = child;
		l.el_extent = (kind == IBX_DT_LOOP_IDX || blen > 1) ? ext : 0;
	}
	return bld_push(b, &l, out);
}

static ibx_status_t struct_loop(bld_t *b, int64_t m, const int64_t *displs, const uint32_t *nodes,
				lay_t *out)
{
	ibx_dt_loop_t l = {.kind = IBX_DT_LOOP_STRUCT, .leaf = 0, .count = m};
	ibx_status_t st;
	int64_t *a;

	st = bld_aux(b, 3 * (uint64_t)m + 1, &l.aux);
	if (st)
		return st;
	a = b->aux + l.aux;
	memcpy(a, displs, (size_t)m * sizeof(*a));
	a[2 * m] = 0;
	for (int64_t k = 0; k < m; k++) {
		a[m + k] = nodes[k];
		if (!dt_add(a[2 * m + k], b->loops[nodes[k]].size, &a[2 * m + k + 1]))
			return IBX_ERR_OVERFLOW;
	}
	l.size = a[3 * m];
	return bld_push(b, &l, out);
}

/* Runs (offs[k], lens[k] > 0) in packed order; the arrays are scratch. */
static ibx_status_t mk_runs(bld_t *b, int64_t n, int64_t *offs, int64_t *lens, lay_t *out)
{
	int64_t m = 0, s = 0, end;
	bool uniform = true, arith = true;

	for (int64_t k = 0; k < n; k++) {
		if (m > 0 && dt_add(offs[m - 1], lens[m - 1], &end) && end == offs[k]) {
			if (!dt_add(lens[m - 1], lens[k], &lens[m - 1]))
				return IBX_ERR_OVERFLOW;
			continue;
		}
		offs[m] = offs[k];
		lens[m] = lens[k];
		m++;
	}
	if (m == 1) {
		*out = lay_run(offs[0], lens[0]);
		return IBX_OK;
	}
	for (int64_t k = 1; k < m; k++) {
		int64_t d;

		uniform = uniform && lens[k] == lens[0];
		if (!dt_sub(offs[k], offs[k - 1], &d) || (k > 1 && d != s))
			arith = false;
		if (k == 1)
			s = d;
	}
	if (uniform && arith)
		return vec_leaf(b, m, s, lens[0], offs[0], out);
	if (uniform)
		return idx_loop(b, IBX_DT_LOOP_BLKIDX, true, m, offs, NULL, lens[0], 0, 0, out);
	return idx_loop(b, IBX_DT_LOOP_IDX, true, m, offs, lens, 0, 0, 0, out);
}

static bool arith_step(int64_t m, const int64_t *offs, int64_t *s_p)
{
	int64_t s = 0, d;

	for (int64_t k = 1; k < m; k++) {
		if (!dt_sub(offs[k], offs[k - 1], &d) || (k > 1 && d != s))
			return false;
		s = d;
	}
	*s_p = s;
	return m > 1;
}

/* indexed family: n blocks of blens[k] copies of @l (ext apart) at displs[k] bytes */
static ibx_status_t mk_idx(bld_t *b, int64_t n, const int64_t *blens, const int64_t *displs,
			   int64_t ext, lay_t l, lay_t *out)
{
	int64_t *offs = NULL, *lens = NULL, m = 0, s;
	bool uniform = true, all1 = true;
	ibx_dt_loop_t tmp;
	ibx_status_t st = IBX_OK;
	uint32_t c;
	lay_t body;

	*out = lay_empty;
	if (l.k == LAY_EMPTY || n == 0)
		return IBX_OK;
	offs = malloc((size_t)n * sizeof(*offs));
	lens = malloc((size_t)n * sizeof(*lens));
	if (!offs || !lens) {
		st = IBX_ERR_NO_MEMORY;
		goto out;
	}
	for (int64_t k = 0; k < n; k++) {
		if (blens[k] == 0)
			continue;
		offs[m] = displs[k];
		lens[m] = blens[k];
		uniform = uniform && lens[m] == lens[0];
		all1 = all1 && lens[m] == 1;
		m++;
	}
	if (m == 0)
		goto out;
	if (l.k == LAY_RUN && (ext == l.len || all1)) {
		for (int64_t k = 0; k < m; k++) {
			if (!dt_add(offs[k], l.off, &offs[k]) ||
			    !dt_mul(lens[k], l.len, &lens[k])) {
				st = IBX_ERR_OVERFLOW;
				goto out;
			}
		}
		st = mk_runs(b, m, offs, lens, out);
		goto out;
	}
	if (!uniform) {
		st = as_node(b, l, &c);
		if (!st)
			st = idx_loop(b, IBX_DT_LOOP_IDX, false, m, offs, lens, 0, ext, c, out);
		goto out;
	}
	if (m == 1) {
		st = mk_vec(b, 1, lens[0], 0, ext, offs[0], l, out);
		goto out;
	}
	if (l.k == LAY_NODE && lens[0] > 1 && !vec_merge(&b->loops[l.node], lens[0], ext, &tmp)) {
		/* one loop level: blocks of lens[0] copies of the child */
		if (arith_step(m, offs, &s))
			st = vec_node(b, m, lens[0], s, ext, offs[0], l.node, out);
		else
			st = idx_loop(b, IBX_DT_LOOP_BLKIDX, false, m, offs, NULL, lens[0], ext,
				      l.node, out);
		goto out;
	}
	st = mk_vec(b, 1, lens[0], 0, ext, 0, l, &body);
	if (st)
		goto out;
	if (body.k == LAY_RUN) {
		for (int64_t k = 0; k < m; k++) {
			if (!dt_add(offs[k], body.off, &offs[k])) {
				st = IBX_ERR_OVERFLOW;
				goto out;
			}
			lens[k] = body.len;
		}
		st = mk_runs(b, m, offs, lens, out);
	} else if (arith_step(m, offs, &s)) {
		st = mk_vec(b, m, 1, s, 0, offs[0], body, out);
	} else {
		st = idx_loop(b, IBX_DT_LOOP_BLKIDX, false, m, offs, NULL, 1, 0, body.node, out);
	}
out:
	free(offs);
	free(lens);
	return st;
}

static ibx_status_t compile(bld_t *b, const ibx_dt_t *dt, lay_t *out);

static ibx_status_t mk_struct(bld_t *b, const ibx_dt_t *dt, lay_t *out)
{
	int64_t n = dt->count, m = 0, s;
	int64_t *offs = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
	int64_t *lens = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
	lay_t *bodies = malloc((size_t)(n ? n : 1) * sizeof(lay_t));
	uint32_t *nodes = malloc((size_t)(n ? n : 1) * sizeof(uint32_t));
	bool allruns = true, same = true;
	ibx_status_t st = IBX_OK;

	*out = lay_empty;
	if (!offs || !lens || !bodies || !nodes) {
		st = IBX_ERR_NO_MEMORY;
		goto out;
	}
	for (int64_t k = 0; k < n; k++) {
		const ibx_dt_t *t = dt->types[k];
		lay_t l;

		if (dt->blens[k] == 0)
			continue;
		st = compile(b, t, &l);
		if (st)
			goto out;
		st = mk_vec(b, 1, dt->blens[k], 0, t->ub - t->lb, 0, l, &bodies[m]);
		if (st)
			goto out;
		if (bodies[m].k == LAY_EMPTY)
			continue;
		offs[m] = dt->displs[k];
		allruns = allruns && bodies[m].k == LAY_RUN;
		m++;
	}
	if (m == 0)
		goto out;
	if (allruns) {
		for (int64_t k = 0; k < m; k++) {
			if (!dt_add(offs[k], bodies[k].off, &offs[k])) {
				st = IBX_ERR_OVERFLOW;
				goto out;
			}
			lens[k] = bodies[k].len;
		}
		st = mk_runs(b, m, offs, lens, out);
		goto out;
	}
	for (int64_t k = 0; k < m; k++) {
		st = as_node(b, bodies[k], &nodes[k]);
		if (st)
			goto out;
		same = same && nodes[k] == nodes[0];
	}
	if (!same)
		st = struct_loop(b, m, offs, nodes, out);
	else if (m == 1)
		st = shift(b, (lay_t){.k = LAY_NODE, .node = nodes[0]}, offs[0], out);
	else if (arith_step(m, offs, &s))
		st = mk_vec(b, m, 1, s, 0, offs[0], (lay_t){.k = LAY_NODE, .node = nodes[0]}, out);
	else
		st = idx_loop(b, IBX_DT_LOOP_BLKIDX, false, m, offs, NULL, 1, 0, nodes[0], out);
out:
	free(offs);
	free(lens);
	free(bodies);
	free(nodes);
	return st;
}

/* ---- memo of compiled children ---------------------------------------------------- */

static size_t memo_slot(const bld_t *b, const ibx_dt_t *key)
{
	uint64_t h = (uint64_t)(uintptr_t)key * UINT64_C(0x9e3779b97f4a7c15);

	return (size_t)(h >> 20) & (b->memo_cap - 1);
}

static bool memo_get(const bld_t *b, const ibx_dt_t *key, lay_t *val)
{
	if (!b->memo_cap)
		return false;
	for (size_t i = memo_slot(b, key);; i = (i + 1) & (b->memo_cap - 1)) {
		if (!b->memo[i].key)
			return false;
		if (b->memo[i].key == key) {
			*val = b->memo[i].val;
			return true;
		}
	}
}

static ibx_status_t memo_put(bld_t *b, const ibx_dt_t *key, lay_t val)
{
	size_t i;

	if (2 * (b->memo_n + 1) > b->memo_cap) {
		size_t ncap = b->memo_cap ? b->memo_cap * 2 : 64;
		memo_ent_t *old = b->memo, *nm = calloc(ncap, sizeof(*nm));
		size_t ocap = b->memo_cap;

		if (!nm)
			return IBX_ERR_NO_MEMORY;
		b->memo = nm;
		b->memo_cap = ncap;
		for (size_t k = 0; k < ocap; k++) {
			if (!old[k].key)
				continue;
			for (i = memo_slot(b, old[k].key); nm[i].key; i = (i + 1) & (ncap - 1))
				;
			nm[i] = old[k];
		}
		free(old);
	}
	for (i = memo_slot(b, key); b->memo[i].key; i = (i + 1) & (b->memo_cap - 1))
		;
	b->memo[i].key = key;
	b->memo[i].val = val;
	b->memo_n++;
	return IBX_OK;
}

static ibx_status_t compile(bld_t *b, const ibx_dt_t *dt, lay_t *out)
{
	ibx_status_t st;
	lay_t l, c;

	if (memo_get(b, dt, out))
		return IBX_OK;
	switch (dt->kind) {
	case DT_BASIC: l = lay_run(0, dt->size); break;
	case DT_CONTIG:
	case DT_VECTOR:
	case DT_HVECTOR:
		st = compile(b, dt->child, &c);
		if (st)
			return st;
		st = mk_vec(b, dt->count, dt->blocklen, dt->stride, dt->child->ub - dt->child->lb,
			    0, c, &l);
		if (st)
			return st;
		break;
	case DT_INDEXED:
	case DT_HINDEXED:
	case DT_INDEXED_BLOCK:
	case DT_HINDEXED_BLOCK:
		st = compile(b, dt->child, &c);
		if (st)
			return st;
		st = mk_idx(b, dt->count, dt->blens, dt->displs, dt->child->ub - dt->child->lb, c,
			    &l);
		if (st)
			return st;
		break;
	case DT_STRUCT:
		st = mk_struct(b, dt, &l);
		if (st)
			return st;
		break;
	case DT_RESIZED:
	case DT_DUP:
	case DT_SUBARRAY:
		st = compile(b, dt->child, &l);
		if (st)
			return st;
		break;
	default: return IBX_ERR_INVALID_PARAM;
	}
	*out = l;
	return memo_put(b, dt, l);
}

/* ---- laying out the program ------------------------------------------------------- */

ibx_status_t ibx_dt_prog_alloc(uint32_t nloops, uint64_t naux, ibx_dt_prog_t **prog_p)
{
	ibx_dt_prog_t *p;
	size_t bytes;

	if (naux > (SIZE_MAX - sizeof(*p)) / 16 ||
	    nloops > (SIZE_MAX - sizeof(*p) - naux * 8) / sizeof(ibx_dt_loop_t))
		return IBX_ERR_NO_MEMORY;
	bytes = sizeof(*p) + (size_t)nloops * sizeof(ibx_dt_loop_t) + (size_t)naux * 8;
	p = calloc(1, bytes);
	if (!p)
		return IBX_ERR_NO_MEMORY;
	p->nloops = nloops;
	p->naux = naux;
	*prog_p = p;
	return IBX_OK;
}

static uint64_t aux_words(const ibx_dt_loop_t *l)
{
	switch (l->kind) {
	case IBX_DT_LOOP_BLKIDX: return (uint64_t)l->count;
	case IBX_DT_LOOP_IDX:
	case IBX_DT_LOOP_STRUCT: return 3 * (uint64_t)l->count + 1;
	default: return 0;
	}
}

typedef struct layout {
	const bld_t *b;
	uint32_t *map;	 /* builder index -> program index, UINT32_MAX unvisited */
	uint32_t *order; /* program index -> builder index */
	uint32_t *depth;
	uint32_t n;
	uint64_t naux;
} layout_t;

/* post-order: children get lower program indices than their parents */
static ibx_status_t visit(layout_t *L, uint32_t i, uint32_t level)
{
	const ibx_dt_loop_t *l = &L->b->loops[i];
	uint32_t d = 0;
	ibx_status_t st;

	if (L->map[i] != UINT32_MAX)
		return IBX_OK;
	if (level >= IBX_DT_MAX_DEPTH) {
		ibx_debug("datatype needs more than %d nested loops", IBX_DT_MAX_DEPTH);
		return IBX_ERR_NO_RESOURCE;
	}
	if (l->kind == IBX_DT_LOOP_STRUCT) {
		const int64_t *ch = L->b->aux + l->aux + l->count;

		for (int64_t k = 0; k < l->count; k++) {
			st = visit(L, (uint32_t)ch[k], level + 1);
			if (st)
				return st;
			d = d > L->depth[ch[k]] ? d : L->depth[ch[k]];
		}
	} else if (!l->leaf) {
		st = visit(L, l->child, level + 1);
		if (st)
			return st;
		d = L->depth[l->child];
	}
	L->depth[i] = d + 1;
	L->map[i] = L->n;
	L->order[L->n++] = i;
	L->naux += aux_words(l);
	return IBX_OK;
}

static ibx_status_t lay_out(bld_t *b, lay_t root, ibx_dt_prog_t **prog_p)
{
	layout_t L = {.b = b};
	ibx_dt_prog_t *p;
	ibx_status_t st;
	uint64_t at = 0;
	int64_t *aux;

	if (root.k == LAY_EMPTY)
		return ibx_dt_prog_alloc(0, 0, prog_p);
	if (root.k == LAY_RUN) {
		st = ibx_dt_prog_alloc(1, 0, &p);
		if (st)
			return st;
		p->loops[0] = (ibx_dt_loop_t){.kind = IBX_DT_LOOP_VEC, .leaf = 1, .count = 1};
		p->loops[0].blen = p->loops[0].size = root.len;
		p->loops[0].off = root.off;
		p->depth = 1;
		*prog_p = p;
		return IBX_OK;
	}
	L.map = malloc((size_t)b->nloops * sizeof(uint32_t));
	L.order = malloc((size_t)b->nloops * sizeof(uint32_t));
	L.depth = malloc((size_t)b->nloops * sizeof(uint32_t));
	if (!L.map || !L.order || !L.depth) {
		st = IBX_ERR_NO_MEMORY;
		goto out;
	}
	memset(L.map, 0xff, (size_t)b->nloops * sizeof(uint32_t));
	st = visit(&L, root.node, 0);
	if (!st && L.depth[root.node] > IBX_DT_MAX_DEPTH) {
		ibx_debug("datatype needs more than %d nested loops", IBX_DT_MAX_DEPTH);
		st = IBX_ERR_NO_RESOURCE;
	}
	if (st)
		goto out;
	st = ibx_dt_prog_alloc(L.n, L.naux, &p);
	if (st)
		goto out;
	p->depth = L.depth[root.node];
	aux = dt_prog_aux(p);
	for (uint32_t k = 0; k < L.n; k++) {
		const ibx_dt_loop_t *src = &b->loops[L.order[k]];
		ibx_dt_loop_t *dst = &p->loops[k];
		uint64_t w = aux_words(src);

		*dst = *src;
		if (!src->leaf && src->kind != IBX_DT_LOOP_STRUCT)
			dst->child = L.map[src->child];
		dst->aux = w ? at : 0;
		if (w)
			memcpy(aux + at, b->aux + src->aux, (size_t)w * 8);
		if (src->kind == IBX_DT_LOOP_STRUCT) {
			for (int64_t j = 0; j < src->count; j++)
				aux[at + (uint64_t)src->count + (uint64_t)j] =
				    L.map[aux[at + (uint64_t)src->count + (uint64_t)j]];
		}
		at += w;
	}
	*prog_p = p;
out:
	free(L.map);
	free(L.order);
	free(L.depth);
	return st;
}

ibx_status_t ibx_dt_compile(const ibx_dt_t *dt, ibx_dt_prog_t **prog_p)
{
	bld_t b = {0};
	ibx_status_t st;
	lay_t root;

	st = compile(&b, dt, &root);
	if (!st)
		st = lay_out(&b, root, prog_p);
	free(b.loops);
	free(b.aux);
	free(b.memo);
	return st;
}

/* ---- statistics -------------------------------------------------------------------- */

typedef struct run_w {
	int64_t len, weight;
} run_w_t;

static int run_cmp(const void *x, const void *y)
{
	const run_w_t *a = x, *b = y;

	return (a->len > b->len) - (a->len < b->len);
}

/*
 * How often each loop runs per element (a DAG: sum over its parents, top
 * down from the root), then the weighted run lengths of the leaves. Every
 * run is >= 1 byte and distinct runs are distinct packed bytes, so a valid
 * program never overflows; a peer's program that does is rejected.
 */
ibx_status_t ibx_dt_prog_stats(const ibx_dt_prog_t *p, ibx_dt_stats_t *stats_p)
{
	ibx_dt_stats_t s = {0};
	const int64_t *aux = dt_prog_aux(p);
	int64_t *mult = NULL, sum = 0, v;
	run_w_t *runs = NULL;
	uint64_t nruns = 0, cap = 0;
	ibx_status_t st = IBX_ERR_OVERFLOW;

	s.program_bytes = (int64_t)dt_prog_bytes(p);
	s.loops = (int)p->nloops;
	s.depth = (int)p->depth;
	if (p->nloops == 0) {
		*stats_p = s;
		return IBX_OK;
	}
	mult = calloc(p->nloops, sizeof(*mult));
	if (!mult)
		return IBX_ERR_NO_MEMORY;
	for (uint32_t i = 0; i < p->nloops; i++)
		if (p->loops[i].leaf)
			cap +=
			    p->loops[i].kind == IBX_DT_LOOP_IDX ? (uint64_t)p->loops[i].count : 1;
	runs = malloc((size_t)cap * sizeof(*runs));
	if (!runs) {
		st = IBX_ERR_NO_MEMORY;
		goto out;
	}
	mult[p->nloops - 1] = 1;
	for (uint32_t i = p->nloops; i-- > 0;) {
		const ibx_dt_loop_t *l = &p->loops[i];
		const int64_t *a = aux + l->aux;
		int64_t m = mult[i];

		if (m == 0)
			continue;
		if (l->kind == IBX_DT_LOOP_STRUCT) {
			for (int64_t k = 0; k < l->count; k++)
				if (!dt_add(mult[a[l->count + k]], m, &mult[a[l->count + k]]))
					goto out;
		} else if (!l->leaf) {
			int64_t copies;

			if (l->kind == IBX_DT_LOOP_IDX)
				copies = a[3 * l->count] / p->loops[l->child].size;
			else if (!dt_mul(l->count, l->blen, &copies))
				goto out;
			if (!dt_mul(copies, m, &v) || !dt_add(mult[l->child], v, &mult[l->child]))
				goto out;
		} else if (l->kind == IBX_DT_LOOP_IDX) {
			for (int64_t k = 0; k < l->count; k++)
				runs[nruns++] = (run_w_t){a[l->count + k], m};
		} else {
			if (!dt_mul(l->count, m, &v))
				goto out;
			runs[nruns++] = (run_w_t){l->blen, v};
		}
	}
	qsort(runs, (size_t)nruns, sizeof(*runs), run_cmp);
	for (uint64_t k = 0; k < nruns; k++)
		if (!dt_add(sum, runs[k].weight, &sum))
			goto out;
	s.blocks = sum;
	s.avg_block = sum ? (double)p->loops[p->nloops - 1].size / (double)sum : 0.0;
	if (nruns) {
		int64_t half = sum / 2 + (sum & 1), acc = 0; /* lower median: ceil(sum/2)-th run */

		s.min_block = runs[0].len;
		s.max_block = runs[nruns - 1].len;
		for (uint64_t k = 0; k < nruns; k++) {
			acc += runs[k].weight;
			if (acc >= half) {
				s.median_block = runs[k].len;
				break;
			}
		}
	}
	*stats_p = s;
	st = IBX_OK;
out:
	free(mult);
	free(runs);
	return st;
}

ibx_status_t ibx_dt_install_prog(ibx_dt_t *dt, ibx_dt_prog_t *prog)
{
	const ibx_dt_loop_t *r = prog->nloops ? &prog->loops[prog->nloops - 1] : NULL;
	ibx_status_t st;

	st = ibx_dt_prog_stats(prog, &dt->stats);
	if (st)
		goto err;
	if (dt->kind != DT_REMOTE) {
		st = ibx_dt_wire_id_assign(dt);
		if (st)
			goto err;
	}
	dt->contig =
	    !r || (prog->nloops == 1 && r->kind == IBX_DT_LOOP_VEC && r->leaf && r->count == 1);
	dt->dense = dt->contig && (dt->size == 0 || dt->size == dt->ub - dt->lb);
	dt->prog = prog;
	dt->committed = true;
	return IBX_OK;
err:
	free(prog);
	return st;
}
