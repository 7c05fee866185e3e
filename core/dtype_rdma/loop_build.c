/*
 * loop_build.c — the loop makers of commit (see commit.c for the program
 * they build): copies of compiled children become the smallest layout that
 * packs the same bytes.
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
 */
#include "loop_build.h"

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
ibx_status_t ibx_dt_bld_vec(bld_t *b, int64_t count, int64_t blen, int64_t stride, int64_t ext,
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
ibx_status_t ibx_dt_bld_idx(bld_t *b, int64_t n, const int64_t *blens, const int64_t *displs,
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
		st = ibx_dt_bld_vec(b, 1, lens[0], 0, ext, offs[0], l, out);
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
	st = ibx_dt_bld_vec(b, 1, lens[0], 0, ext, 0, l, &body);
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
		st = ibx_dt_bld_vec(b, m, 1, s, 0, offs[0], body, out);
	} else {
		st = idx_loop(b, IBX_DT_LOOP_BLKIDX, false, m, offs, NULL, 1, 0, body.node, out);
	}
out:
	free(offs);
	free(lens);
	return st;
}

/* The merging rules of a struct over already compiled blocks. */
ibx_status_t ibx_dt_bld_struct(bld_t *b, int64_t m, int64_t *offs, int64_t *lens,
			       const lay_t *bodies, uint32_t *nodes, lay_t *out)
{
	bool allruns = true, same = true;
	ibx_status_t st;
	int64_t s;

	for (int64_t k = 0; k < m; k++)
		allruns = allruns && bodies[k].k == LAY_RUN;
	if (allruns) {
		for (int64_t k = 0; k < m; k++) {
			if (!dt_add(offs[k], bodies[k].off, &offs[k]))
				return IBX_ERR_OVERFLOW;
			lens[k] = bodies[k].len;
		}
		return mk_runs(b, m, offs, lens, out);
	}
	for (int64_t k = 0; k < m; k++) {
		st = as_node(b, bodies[k], &nodes[k]);
		if (st)
			return st;
		same = same && nodes[k] == nodes[0];
	}
	if (!same)
		return struct_loop(b, m, offs, nodes, out);
	if (m == 1)
		return shift(b, (lay_t){.k = LAY_NODE, .node = nodes[0]}, offs[0], out);
	if (arith_step(m, offs, &s))
		return ibx_dt_bld_vec(b, m, 1, s, 0, offs[0],
				      (lay_t){.k = LAY_NODE, .node = nodes[0]}, out);
	return idx_loop(b, IBX_DT_LOOP_BLKIDX, false, m, offs, NULL, 1, 0, nodes[0], out);
}
