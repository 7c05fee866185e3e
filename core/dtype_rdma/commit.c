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
 * Compilation works bottom-up on "layouts" (loop_build.h): empty, one
 * run (off, len), or a loop; loop_build.c merges adjacent pieces on the
 * way. Shared children are compiled once (memoised per commit),
 * unreachable intermediate loops are dropped when the program is laid out
 * (below); prog_stats.c summarises the result.
 */
#include "loop_build.h"

static ibx_status_t compile(bld_t *b, const ibx_dt_t *dt, lay_t *out);

/* Compiles the blocks of a struct; loop_build.c merges them. */
static ibx_status_t mk_struct(bld_t *b, const ibx_dt_t *dt, lay_t *out)
{
	int64_t n = dt->count, m = 0;
	int64_t *offs = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
	int64_t *lens = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
	lay_t *bodies = malloc((size_t)(n ? n : 1) * sizeof(lay_t));
	uint32_t *nodes = malloc((size_t)(n ? n : 1) * sizeof(uint32_t));
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
		st = ibx_dt_bld_vec(b, 1, dt->blens[k], 0, t->ub - t->lb, 0, l, &bodies[m]);
		if (st)
			goto out;
		if (bodies[m].k == LAY_EMPTY)
			continue;
		offs[m] = dt->displs[k];
		m++;
	}
	if (m > 0)
		st = ibx_dt_bld_struct(b, m, offs, lens, bodies, nodes, out);
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
		st = ibx_dt_bld_vec(b, dt->count, dt->blocklen, dt->stride,
				    dt->child->ub - dt->child->lb, 0, c, &l);
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
		st = ibx_dt_bld_idx(b, dt->count, dt->blens, dt->displs,
				    dt->child->ub - dt->child->lb, c, &l);
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
