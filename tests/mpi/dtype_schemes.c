/* ibx-test: np=2,3,4 timeout=240 launchers=mpilite,ompi */
/*
 * dtype_schemes — derived-datatype messages of every shape the transfer
 * schemes (generic, BC-SPUP, RWG-UP, P-RRS, Multi-W; Wu, Wyckoff and Panda
 * 2003) must carry, every received byte checked against a reference made
 * with MPI_Pack / MPI_Unpack. Plain MPI: it runs under Open MPI too. The
 * dtype_schemes_<scheme>.c variants run it with IBX_DT_SCHEME forced.
 *
 * Types: random nested derived types built from a seed: a signature tree
 * (a leaf of one basic type; REP: n copies of a child; SEQ: 2-3 children in
 * turn) nested 1-3 deep, realised independently on the two sides, so that
 * the type signatures are equal and the layouts differ: a REP becomes a
 * contiguous, vector, hvector, indexed, hindexed, indexed_block,
 * hindexed_block, subarray (C or Fortran order) or one-block struct, with
 * gaps, byte-granular (unaligned) displacements, zero-length blocks and
 * blocks listed out of address order; a SEQ becomes a struct whose members
 * sit in any address order, sometimes with an extra zero-length member; any
 * node may be resized (a larger extent, a lower lb) or dup'ed. The counts
 * differ too: the receiver may take the same n elements as one REP element,
 * or post more than arrives. Sender types may overlap (a vector whose
 * stride is shorter than its block), receiver types never do.
 *
 * Checks, every message: the whole receive buffer — the data where the
 * receive type puts it, every gap and 64 guard bytes on each side untouched
 * — equals MPI_Unpack of MPI_Pack of the sender's buffer (the receiver
 * rebuilds the sender's type and data from the seed), and the status count.
 * A truncated receive must hold the prefix that fits, as mpi-lite promises
 * (built against another MPI, only the bytes outside the receive type are
 * checked there: MPICH does not deliver the prefix).
 *
 * Plain MPI, run under Open MPI too (4.1.4: without the truncated
 * rendezvous receives, see test_truncate); built with MPICH 4.0.2 it passes
 * too, but for DTS_SEED=3 at 3 or 4 ranks, where MPICH reports
 * MPI_ERR_TRUNCATE for a 4.7 MB message received into exactly its size.
 *
 *   ring       every rank to its right neighbour, rounds of sizes from 1 byte
 *              to 4.7 MB (across the eager limits, the pipelines' chunk sizes,
 *              partial last segments), through Irecv+Send, Isend+Recv,
 *              MPI_Sendrecv and Irecv+Issend in turn; every third round also
 *              a message to itself
 *   many       16 messages in flight per rank (12 to the right, 4 to itself),
 *              receives and sends posted in shuffled orders, one Waitall
 *   zero       count 0 (into count 0 and into a positive count), and types
 *              of size 0 with a positive count
 *   truncate   receives shorter than the message, eager and rendezvous sizes:
 *              MPI_ERR_TRUNCATE (MPI_ERRORS_RETURN), the prefix that fits
 *              delivered, nothing else written; the next message is fine
 *   cache      a type freed and a new one of another layout (same size, same
 *              extent; likely the same handle or id) used at once, 12 times
 *              on both sides: the data must land per the new layout
 *   big        (2 ranks) one element of a type of more than 32 MiB packed
 *
 * A failure names the seed; DTS_SEED=<seed> reruns with another base seed,
 * DTS_ROUNDS=<n> changes the number of ring rounds (default 24), and
 * DTS_VERBOSE=1 prints every message's types as it is received.
 */
#include "mpitest.h"

#include <stdbool.h>
#include <stddef.h>

#define GUARD	 64
#define SENT	 0x5a
#define DESC_MAX 480

static int rank, size, right, left;
static unsigned long long base_seed = 0x2003;

/* ---- random numbers ------------------------------------------------------------------ */

typedef struct rng {
	uint64_t s;
} rng_t;

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rnd(rng_t *r)
{
	return mix64(r->s += 0x9e3779b97f4a7c15ull);
}

/* uniform in [lo, hi] */
static int rnd_in(rng_t *r, int lo, int hi)
{
	return hi <= lo ? lo : lo + (int)(rnd(r) % (uint64_t)(hi - lo + 1));
}

static bool chance(rng_t *r, int pct)
{
	return (int)(rnd(r) % 100) < pct;
}

/* a random divisor of n (n >= 1) */
static int rnd_div(rng_t *r, int n)
{
	int d[256], k = 0;

	for (int i = 1; (long)i * i <= n && k < 254; i++)
		if (n % i == 0) {
			d[k++] = i;
			if (i != n / i)
				d[k++] = n / i;
		}
	return d[rnd_in(r, 0, k - 1)];
}

/* the seed of one message: what kind of test, which round, which sender */
static uint64_t msg_seed(int kind, int round, int src, int k)
{
	return mix64(base_seed ^ (uint64_t)kind << 56 ^ (uint64_t)round << 36 ^
		     (uint64_t)src << 20 ^ (uint64_t)k);
}

/* ---- descriptions -------------------------------------------------------------------- */

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	char *s = malloc(DESC_MAX + 4);
	va_list ap;
	int n;

	CHECK(s, "out of memory");
	va_start(ap, f);
	n = vsnprintf(s, DESC_MAX, f, ap);
	va_end(ap);
	if (n >= DESC_MAX)
		strcpy(s + DESC_MAX - 4, "...");
	return s;
}

/* ---- signature trees ------------------------------------------------------------------ */

enum { N_LEAF, N_REP, N_SEQ };

typedef struct sig {
	int kind;
	int basic; /* N_LEAF */
	int n;	   /* N_REP: copies */
	bool fat;  /* N_REP of a leaf that must stay one block (large messages) */
	int nkids;
	struct sig *kid[3];
} sig_t;

static const struct {
	MPI_Datatype t;
	const char *name;
} basics[] = {{MPI_CHAR, "char"}, {MPI_SHORT, "short"}, {MPI_INT, "int"}, {MPI_DOUBLE, "double"}};
#define NBASIC ((int)(sizeof(basics) / sizeof(basics[0])))

static sig_t *sig_new(int kind)
{
	sig_t *s = calloc(1, sizeof(*s));

	CHECK(s, "out of memory");
	s->kind = kind;
	return s;
}

static sig_t *sig_rep(sig_t *kid, int n, bool fat)
{
	sig_t *s = sig_new(N_REP);

	s->kid[0] = kid;
	s->nkids = 1;
	s->n = n;
	s->fat = fat;
	return s;
}

static sig_t *sig_leaf(rng_t *r)
{
	sig_t *s = sig_new(N_LEAF);

	s->basic = rnd_in(r, 0, NBASIC - 1);
	return s;
}

/* A tree @depth levels above its leaves; with @fat, every leaf is a run of
 * 16-128 elements in one block (a large message of tiny blocks would take
 * millions of blocks). */
static sig_t *sig_gen(rng_t *r, int depth, bool fat)
{
	sig_t *s;

	if (depth == 0) {
		if (fat)
			return sig_rep(sig_leaf(r), rnd_in(r, 16, 128), true);
		return chance(r, 50) ? sig_leaf(r) : sig_rep(sig_leaf(r), rnd_in(r, 1, 6), false);
	}
	if (chance(r, 60)) {
		int n = chance(r, 4) ? 0 : chance(r, 15) ? rnd_in(r, 9, 40) : rnd_in(r, 1, 8);

		return sig_rep(sig_gen(r, depth - 1, fat), n, false);
	}
	s = sig_new(N_SEQ);
	s->nkids = rnd_in(r, 2, 3);
	for (int i = 0; i < s->nkids; i++)
		s->kid[i] = sig_gen(r, i == 0 ? depth - 1 : rnd_in(r, 0, depth - 1), fat);
	return s;
}

static size_t sig_size(const sig_t *s)
{
	int sz;
	size_t t = 0;

	switch (s->kind) {
	case N_LEAF: MPI_Type_size(basics[s->basic].t, &sz); return (size_t)sz;
	case N_REP: return (size_t)s->n * sig_size(s->kid[0]);
	default:
		for (int i = 0; i < s->nkids; i++)
			t += sig_size(s->kid[i]);
		return t;
	}
}

static void sig_free(sig_t *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nkids; i++)
		sig_free(s->kid[i]);
	free(s);
}

/* ---- realising a tree as a datatype ------------------------------------------------------- */

typedef struct rt {
	MPI_Datatype t;
	char *desc;
} rt_t;

static bool predefined(MPI_Datatype t)
{
	for (int i = 0; i < NBASIC; i++)
		if (t == basics[i].t)
			return true;
	return false;
}

static void rt_free(rt_t *x)
{
	if (!predefined(x->t) && x->t != MPI_DATATYPE_NULL)
		MPI_OK(MPI_Type_free(&x->t));
	free(x->desc);
	x->desc = NULL;
}

static void extents(MPI_Datatype t, MPI_Aint *lb, MPI_Aint *ext, MPI_Aint *tlb, MPI_Aint *text)
{
	MPI_OK(MPI_Type_get_extent(t, lb, ext));
	MPI_OK(MPI_Type_get_true_extent(t, tlb, text));
}

/*
 * @k blocks of lengths @len (some 0) placed without overlap at increasing
 * addresses in a random order (the typemap order is the index order, the
 * address order a permutation of it when @shuffle), with gaps of 0..2 units
 * (@unit bytes each) plus, when @bytes, 0..@unit+3 odd bytes; displacements
 * in units (@d) or in bytes (@hd); all shifted down by a few units
 * sometimes (negative displacements).
 */
static void place(rng_t *r, int k, const int *len, MPI_Aint unit, bool bytes, int *d, MPI_Aint *hd)
{
	int order[64];
	MPI_Aint pos = rnd_in(r, 0, 2) * unit, shift = chance(r, 20) ? rnd_in(r, 1, 3) * unit : 0;
	bool shuffle = chance(r, 35);

	for (int i = 0; i < k; i++)
		order[i] = i;
	for (int i = k - 1; shuffle && i > 0; i--) {
		int j = rnd_in(r, 0, i), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (int i = 0; i < k; i++) {
		int b = order[i];

		if (bytes)
			hd[b] = pos - shift;
		else
			d[b] = (int)((pos - shift) / (unit ? unit : 1));
		pos += (MPI_Aint)len[b] * unit + (chance(r, 40) ? 0 : rnd_in(r, 1, 2) * unit);
		if (bytes && chance(r, 50))
			pos += rnd_in(r, 1, (int)unit + 3);
	}
}

/* n split into k blocks (1..64), some of length 0 */
static int split(rng_t *r, int n, int *len)
{
	int k = rnd_in(r, 1, n + 1 < 64 ? n + 1 : 64), cut[64], left_ = n;

	for (int i = 0; i < k - 1; i++)
		cut[i] = rnd_in(r, 0, n);
	/* lengths from sorted cuts: insertion sort, k is small */
	for (int i = 1; i < k - 1; i++)
		for (int j = i; j > 0 && cut[j - 1] > cut[j]; j--) {
			int t = cut[j];

			cut[j] = cut[j - 1];
			cut[j - 1] = t;
		}
	for (int i = 0, prev = 0; i < k; i++) {
		int end = i < k - 1 ? cut[i] : n;

		len[i] = end - prev;
		left_ -= len[i];
		prev = end;
	}
	CHECK(left_ == 0, "split");
	return k;
}

static rt_t realize(const sig_t *s, rng_t *r, bool recv);

/*
 * Copies of a type at its extent overlap when its data spans more than the
 * extent, which happens: the lb and ub of a struct with a resized member
 * are that member's (MPI's sticky lb / ub markers), whatever the other
 * members' data. Such a type is resized to its true extent (plus a gap
 * sometimes) before it is repeated.
 */
static rt_t fit(rng_t *r, rt_t c)
{
	MPI_Aint lb, e, tlb, te;
	int sz;
	rt_t w;

	MPI_OK(MPI_Type_size(c.t, &sz));
	extents(c.t, &lb, &e, &tlb, &te);
	if (sz == 0 || te <= e)
		return c;
	MPI_OK(MPI_Type_create_resized(c.t, tlb, te + (chance(r, 50) ? 0 : rnd_in(r, 1, 8)), &w.t));
	w.desc = fmt("fit(%s)", c.desc);
	rt_free(&c);
	return w;
}

/* n copies of child @c in one of the layouts; the child is released. */
static rt_t rep_layout(rng_t *r, rt_t c, int n, bool recv, bool fat)
{
	MPI_Aint lb, e, tlb, te, hd[64];
	int pick = fat ? 0 : rnd_in(r, 0, 8), len[64], d[64], k, bl, nb;
	rt_t o = {MPI_DATATYPE_NULL, NULL};

	c = fit(r, c);
	extents(c.t, &lb, &e, &tlb, &te);
	if (n == 0 && pick >= 3)
		pick = 0;
	if (e <= 0 && (pick == 2 || pick == 4 || pick == 6))
		pick = 1; /* byte strides from an extent of 0 make no sense */
	switch (pick) {
	case 0:
		MPI_OK(MPI_Type_contiguous(n, c.t, &o.t));
		o.desc = fmt("ctg(%d,%s)", n, c.desc);
		break;
	case 1:
	case 2: {
		bool h = pick == 2;
		long stride;

		bl = n ? rnd_div(r, n) : 1;
		nb = n ? n / bl : 0;
		stride = bl + (chance(r, 30) ? 0 : rnd_in(r, 1, 3));
		if (!recv && bl > 1 && chance(r, 10))
			stride = rnd_in(r, 0, bl - 1); /* the sender's blocks overlap */
		if (h) {
			MPI_Aint hs = (MPI_Aint)stride * e + (chance(r, 50) ? 0 : rnd_in(r, 1, 7));

			if (recv && hs < (MPI_Aint)bl * e)
				hs = (MPI_Aint)bl * e;
			MPI_OK(MPI_Type_create_hvector(nb, bl, hs, c.t, &o.t));
			o.desc = fmt("hvec(%d,%d,%ldB,%s)", nb, bl, (long)hs, c.desc);
		} else {
			MPI_OK(MPI_Type_vector(nb, bl, (int)stride, c.t, &o.t));
			o.desc = fmt("vec(%d,%d,%ld,%s)", nb, bl, stride, c.desc);
		}
		break;
	}
	case 3:
	case 4:
		k = split(r, n, len);
		place(r, k, len, e, pick == 4, d, hd);
		if (pick == 3) {
			MPI_OK(MPI_Type_indexed(k, len, d, c.t, &o.t));
			o.desc = fmt("idx[%d;%d@%d..](%s)", k, len[0], d[0], c.desc);
		} else {
			MPI_OK(MPI_Type_create_hindexed(k, len, hd, c.t, &o.t));
			o.desc = fmt("hidx[%d;%d@%ldB..](%s)", k, len[0], (long)hd[0], c.desc);
		}
		break;
	case 5:
	case 6:
		bl = rnd_div(r, n);
		k = n / bl;
		if (k > 64) { /* place() takes up to 64 blocks */
			MPI_OK(MPI_Type_contiguous(n, c.t, &o.t));
			o.desc = fmt("ctg(%d,%s)", n, c.desc);
			break;
		}
		for (int i = 0; i < k; i++)
			len[i] = bl;
		place(r, k, len, e, pick == 6, d, hd);
		if (pick == 5) {
			MPI_OK(MPI_Type_create_indexed_block(k, bl, d, c.t, &o.t));
			o.desc = fmt("iblk(%d,%d,%s)", k, bl, c.desc);
		} else {
			MPI_OK(MPI_Type_create_hindexed_block(k, bl, hd, c.t, &o.t));
			o.desc = fmt("hiblk(%d,%d,%s)", k, bl, c.desc);
		}
		break;
	case 7: {
		int nd = rnd_in(r, 2, 3), sizes[3], sub[3], start[3], rest = n, slack;
		int order = chance(r, 50) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;

		for (int i = 0; i < nd; i++) {
			sub[i] = i == nd - 1 ? rest : rnd_div(r, rest);
			rest /= sub[i];
		}
		slack = rnd_in(r, 0, nd - 1); /* one dimension has room around the part */
		for (int i = 0; i < nd; i++) {
			sizes[i] = sub[i] + (i == slack ? rnd_in(r, 0, 2) : 0);
			start[i] = rnd_in(r, 0, sizes[i] - sub[i]);
		}
		MPI_OK(MPI_Type_create_subarray(nd, sizes, sub, start, order, c.t, &o.t));
		o.desc = fmt("sub%dd%s(%dx%dx%d of %dx%dx%d,%s)", nd,
			     order == MPI_ORDER_C ? "C" : "F", sub[0], sub[1], nd > 2 ? sub[2] : 1,
			     sizes[0], sizes[1], nd > 2 ? sizes[2] : 1, c.desc);
		break;
	}
	default: {
		MPI_Aint disp = rnd_in(r, -2, 3) * (e > 0 ? e : 1);
		int one = n;

		MPI_OK(MPI_Type_create_struct(1, &one, &disp, &c.t, &o.t));
		o.desc = fmt("st1(%d@%ld,%s)", n, (long)disp, c.desc);
		break;
	}
	}
	rt_free(&c);
	return o;
}

/* A struct of the children, blocklength 1 each, in any address order. */
static rt_t seq_layout(const sig_t *s, rng_t *r, bool recv)
{
	rt_t kids[3], o;
	MPI_Datatype ty[4];
	MPI_Aint disp[4], lb, e, tlb[3], te[3], pos = rnd_in(r, 0, 8), shift = 0;
	int bl[4], order[3] = {0, 1, 2}, k = s->nkids;
	char *d;

	for (int i = 0; i < k; i++) {
		kids[i] = realize(s->kid[i], r, recv);
		extents(kids[i].t, &lb, &e, &tlb[i], &te[i]);
	}
	for (int i = k - 1; i > 0; i--) {
		int j = rnd_in(r, 0, i), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	if (chance(r, 20))
		shift = rnd_in(r, 1, 64);
	for (int i = 0; i < k; i++) {
		int m = order[i];

		pos += chance(r, 40) ? 0 : rnd_in(r, 1, 12);
		disp[m] = pos - tlb[m] - shift;
		pos += te[m];
		ty[m] = kids[m].t;
		bl[m] = 1;
	}
	if (chance(r, 15)) { /* a zero-length member */
		ty[k] = MPI_DOUBLE;
		bl[k] = 0;
		disp[k] = rnd_in(r, -16, 64);
		k++;
	}
	MPI_OK(MPI_Type_create_struct(k, bl, disp, ty, &o.t));
	d = fmt("{%s@%ld,%s@%ld%s%s%s}", kids[0].desc, (long)disp[0], kids[1].desc, (long)disp[1],
		s->nkids > 2 ? "," : "", s->nkids > 2 ? kids[2].desc : "",
		k > s->nkids ? ",0@" : "");
	o.desc = d;
	for (int i = 0; i < s->nkids; i++)
		rt_free(&kids[i]);
	return o;
}

static rt_t realize(const sig_t *s, rng_t *r, bool recv)
{
	rt_t o;
	int sz;

	if (s->kind == N_LEAF) {
		o.t = basics[s->basic].t;
		o.desc = fmt("%s", basics[s->basic].name);
		return o;
	}
	o = s->kind == N_REP ? rep_layout(r, realize(s->kid[0], r, recv), s->n, recv, s->fat)
			     : seq_layout(s, r, recv);
	MPI_OK(MPI_Type_size(o.t, &sz));
	if (sz > 0 && chance(r, 12)) { /* resized: a lower lb, a larger extent */
		MPI_Aint lb, e, tlb, te, nlb;
		rt_t w;

		extents(o.t, &lb, &e, &tlb, &te);
		nlb = tlb - rnd_in(r, 0, 16);
		MPI_OK(
		    MPI_Type_create_resized(o.t, nlb, te + (tlb - nlb) + rnd_in(r, 0, 24), &w.t));
		w.desc = fmt("rsz(%ld,%s)", (long)nlb, o.desc);
		rt_free(&o);
		o = w;
	} else if (chance(r, 5)) {
		rt_t w;

		MPI_OK(MPI_Type_dup(o.t, &w.t));
		w.desc = fmt("dup(%s)", o.desc);
		rt_free(&o);
		o = w;
	}
	return o;
}

/* ---- messages: a layout per side, buffers, the reference ------------------------------------ */

typedef struct lay {
	MPI_Datatype t;
	int count;
	MPI_Aint lo, hi; /* bytes the type may touch, from the buffer's origin */
	size_t bytes;	 /* count x size */
	char *desc;
} lay_t;

typedef struct plan {
	uint64_t seed;
	lay_t s, r;
	const char *what;
} plan_t;

enum { P_NORMAL, P_ZERO, P_SHORT, P_BIG };

static void lay_set(lay_t *l, rt_t x, int count)
{
	MPI_Aint lb, e, tlb, te;
	int sz;

	MPI_OK(MPI_Type_commit(&x.t));
	extents(x.t, &lb, &e, &tlb, &te);
	MPI_OK(MPI_Type_size(x.t, &sz));
	l->t = x.t;
	l->desc = x.desc;
	l->count = count;
	l->bytes = (size_t)sz * (size_t)count;
	if (count == 0 || sz == 0) {
		l->lo = l->hi = 0;
	} else {
		l->lo = tlb + (e < 0 ? (count - 1) * e : 0);
		l->hi = tlb + te + (e > 0 ? (count - 1) * e : 0);
	}
}

static void lay_free(lay_t *l)
{
	rt_t x = {l->t, l->desc};

	rt_free(&x);
	l->t = MPI_DATATYPE_NULL;
}

static void plan_free(plan_t *p)
{
	lay_free(&p->s);
	lay_free(&p->r);
}

/* The big plan's tree: REP(SEQ(runs of int, double, char), n) over 32 MiB. */
static sig_t *sig_big(rng_t *r)
{
	sig_t *q = sig_new(N_SEQ);
	size_t el;

	q->nkids = 3;
	for (int i = 0; i < 3; i++) {
		sig_t *leaf = sig_new(N_LEAF);

		leaf->basic = (int[]){2, 3, 0}[i];
		q->kid[i] = sig_rep(leaf, rnd_in(r, 16, 256), true);
	}
	el = sig_size(q);
	return sig_rep(q, (int)((33u << 20) / el + 1), false);
}

/*
 * Both sides' layouts of one message, from @seed alone: every rank that
 * makes the plan of a seed gets the same types. @target: about the bytes.
 * Layouts spanning far more memory than their bytes are drawn again.
 */
static void plan_make(plan_t *p, uint64_t seed, size_t target, int kind, const char *what)
{
	for (int attempt = 0;; attempt++) {
		rng_t g = {seed + (uint64_t)attempt * 0x51ed27}, rs, rr;
		sig_t *sig = kind == P_BIG ? sig_big(&g)
					   : sig_gen(&g, rnd_in(&g, 1, 3), target >= (256u << 10));
		size_t el = sig_size(sig), limit;
		int c, cs, cr, v = rnd_in(&g, 0, 9), w = rnd_in(&g, 0, 9);
		rt_t ts, tr;

		if (kind == P_BIG)
			c = 1;
		else if (el == 0)
			c = rnd_in(&g, 0, 3);
		else
			c = (int)(target / el) > 0 ? (int)(target / el) : 1;
		if (kind == P_SHORT && (el == 0 || c < 2)) {
			sig_free(sig);
			continue;
		}
		rs = (rng_t){g.s ^ 0x5e4d};
		rr = (rng_t){g.s ^ 0x7ec0};
		cs = c;
		cr = c;
		if (kind != P_BIG && c <= 4096 && v >= 8) {
			/* the sender's c elements as one element of REP(tree, c) */
			sig_t *rep = sig_rep(sig, c, false);

			ts = realize(rep, &rs, false);
			cs = 1;
			rep->kid[0] = NULL, rep->nkids = 0;
			sig_free(rep);
		} else {
			ts = realize(sig, &rs, false);
		}
		if (kind != P_BIG && c <= 4096 && w >= 7) {
			sig_t *rep = sig_rep(sig, c, false);

			tr = realize(rep, &rr, true);
			cr = 1;
			rep->kid[0] = NULL, rep->nkids = 0;
			sig_free(rep);
		} else {
			tr = realize(sig, &rr, true);
			if (kind == P_NORMAL && w >= 5)
				cr = c + rnd_in(&g, 1, 3); /* room for more than arrives */
		}
		if (kind == P_ZERO) {
			cs = 0;
			cr = cr == 1 ? rnd_in(&g, 0, 1) : rnd_in(&g, 0, 3);
		}
		if (kind == P_SHORT) {
			if (cr == 1) { /* one REP element: take the tree's type instead */
				rt_free(&tr);
				tr = realize(sig, &rr, true);
			}
			cr = c - 1 - rnd_in(&g, 0, (c - 1) / 2);
		}
		sig_free(sig);
		ts = fit(&g, ts);
		tr = fit(&g, tr);
		lay_set(&p->s, ts, cs);
		lay_set(&p->r, tr, cr);
		p->seed = seed;
		p->what = what;
		limit = p->s.bytes > p->r.bytes ? p->s.bytes : p->r.bytes;
		limit = kind == P_BIG	     ? 3 * limit
			: limit > (1u << 20) ? 4 * limit
					     : 16 * limit + 65536;
		if ((size_t)(p->s.hi - p->s.lo) <= limit && (size_t)(p->r.hi - p->r.lo) <= limit)
			return;
		plan_free(p);
	}
}

typedef struct buf {
	unsigned char *base, *org;
	size_t len;
} buf_t;

/* A buffer for @l: its span and the guards; random bytes from @dseed, or
 * the sentinel when dseed is 0. */
static void buf_make(buf_t *b, const lay_t *l, uint64_t dseed)
{
	b->len = (size_t)(l->hi - l->lo) + 2 * GUARD;
	b->base = malloc(b->len);
	CHECK(b->base, "out of memory (%zu bytes)", b->len);
	b->org = b->base + GUARD - l->lo;
	if (dseed) {
		rng_t r = {dseed};
		size_t i = 0;

		for (; i + 8 <= b->len; i += 8) {
			uint64_t v = rnd(&r);

			memcpy(b->base + i, &v, 8);
		}
		for (; i < b->len; i++)
			b->base[i] = (unsigned char)rnd(&r);
	} else {
		memset(b->base, SENT, b->len);
	}
}

static uint64_t data_seed(const plan_t *p)
{
	return p->seed ^ 0xda7a0000da7aull;
}

/*
 * After the receive: @got must equal the sentinel buffer into which the
 * first min(sent, capacity) bytes of MPI_Pack(sender's data) are unpacked
 * (the rest of the capacity sentinel), and the status must count them.
 */
static void check(const plan_t *p, const buf_t *got, const MPI_Status *st, int src)
{
	size_t n = p->s.bytes < p->r.bytes ? p->s.bytes : p->r.bytes;
	buf_t sb, exp;
	unsigned char *packed, *stream;
	int psz = 0, pos = 0, cnt;

	buf_make(&sb, &p->s, data_seed(p));
	MPI_OK(MPI_Pack_size(p->s.count, p->s.t, MPI_COMM_WORLD, &psz));
	packed = malloc((size_t)psz + 1);
	stream = malloc(p->r.bytes + 1);
	CHECK(packed && stream, "out of memory");
	MPI_OK(MPI_Pack(sb.org, p->s.count, p->s.t, packed, psz, &pos, MPI_COMM_WORLD));
	CHECK((size_t)pos == p->s.bytes, "%s: MPI_Pack made %d bytes, not %zu", p->what, pos,
	      p->s.bytes);
	memcpy(stream, packed, n);
	memset(stream + n, SENT, p->r.bytes - n);
	buf_make(&exp, &p->r, 0);
	pos = 0;
	MPI_OK(
	    MPI_Unpack(stream, (int)p->r.bytes, &pos, exp.org, p->r.count, p->r.t, MPI_COMM_WORLD));
#ifndef MPILITE
	/* Elsewhere (MPICH, for one) a truncated receive need not deliver the
	 * prefix: only what lies outside the receive type must be untouched. */
	if (p->r.bytes < p->s.bytes) {
		memset(stream, 0xff, p->r.bytes);
		memset(exp.base, 0, exp.len);
		pos = 0;
		MPI_OK(MPI_Unpack(stream, (int)p->r.bytes, &pos, exp.org, p->r.count, p->r.t,
				  MPI_COMM_WORLD));
		for (size_t i = 0; i < exp.len; i++)
			exp.base[i] = exp.base[i] ? got->base[i] : SENT;
	}
#endif
	if (memcmp(got->base, exp.base, got->len)) {
		size_t i = 0;

		while (got->base[i] == exp.base[i])
			i++;
		mt_fail(__FILE__, __LINE__,
			"%s from rank %d: seed %#llx (base %#llx): byte %ld from the origin "
			"(%s) is %#x, expected %#x\n  sender   %s x %d (%zu bytes)\n  "
			"receiver %s x %d (%zu bytes)",
			p->what, src, (unsigned long long)p->seed, base_seed,
			(long)i - (long)(exp.org - exp.base),
			i < GUARD || i >= got->len - GUARD ? "a guard byte" : "inside the span",
			got->base[i], exp.base[i], p->s.desc, p->s.count, p->s.bytes, p->r.desc,
			p->r.count, p->r.bytes);
	}
#ifndef MPILITE
	if (p->r.bytes < p->s.bytes)
		st = NULL; /* MPICH counts 0 bytes of a truncated receive */
#endif
	if (st) {
		MPI_OK(MPI_Get_count(st, MPI_BYTE, &cnt));
		CHECK((size_t)cnt == n,
		      "%s from rank %d: seed %#llx: status counts %d bytes, not %zu", p->what, src,
		      (unsigned long long)p->seed, cnt, n);
	}
	free(sb.base);
	free(exp.base);
	free(packed);
	free(stream);
}

/* One side of a message: the plan and this side's buffer. */
typedef struct end {
	plan_t p;
	buf_t b;
	MPI_Request rq;
	MPI_Status st;
	int peer, tag;
} end_t;

static void end_send(end_t *x, uint64_t seed, size_t target, int kind, const char *what, int peer,
		     int tag)
{
	plan_make(&x->p, seed, target, kind, what);
	buf_make(&x->b, &x->p.s, data_seed(&x->p));
	x->peer = peer;
	x->tag = tag;
	x->rq = MPI_REQUEST_NULL;
}

static bool verbose;

static void end_recv(end_t *x, uint64_t seed, size_t target, int kind, const char *what, int peer,
		     int tag)
{
	plan_make(&x->p, seed, target, kind, what);
	if (verbose)
		fprintf(stderr,
			"[rank %d] %s from %d, seed %#llx: %s x %d (%zu bytes) into %s x %d\n",
			rank, what, peer, (unsigned long long)seed, x->p.s.desc, x->p.s.count,
			x->p.s.bytes, x->p.r.desc, x->p.r.count);
	buf_make(&x->b, &x->p.r, 0);
	x->peer = peer;
	x->tag = tag;
	x->rq = MPI_REQUEST_NULL;
}

static void end_free(end_t *x)
{
	plan_free(&x->p);
	free(x->b.base);
}

#define ISEND(x)                                                                                   \
	MPI_OK(MPI_Isend((x)->b.org, (x)->p.s.count, (x)->p.s.t, (x)->peer, (x)->tag,              \
			 MPI_COMM_WORLD, &(x)->rq))
#define IRECV(x)                                                                                   \
	MPI_OK(MPI_Irecv((x)->b.org, (x)->p.r.count, (x)->p.r.t, (x)->peer, (x)->tag,              \
			 MPI_COMM_WORLD, &(x)->rq))

/* ---- the tests ------------------------------------------------------------------------------ */

static const size_t targets[] = {1,    5,     60,    333,    512,    777,     4000,   8191,
				 8300, 16385, 65537, 150000, 700000, 2100000, 4700000};
#define NTARGETS ((int)(sizeof(targets) / sizeof(targets[0])))
#define NSMALL	 11 /* targets[0 .. NSMALL) stay below 256 KiB */

static void test_ring(int rounds)
{
	static const char *const modes[] = {"Irecv+Send", "Isend+Recv", "Sendrecv", "Irecv+Issend"};

	for (int i = 0; i < rounds; i++) {
		int m = i % 4;
		end_t s, r;

		end_send(&s, msg_seed(1, i, rank, 0), targets[(i * 7 + rank * 3) % NTARGETS],
			 P_NORMAL, modes[m], right, 100 + i);
		end_recv(&r, msg_seed(1, i, left, 0), targets[(i * 7 + left * 3) % NTARGETS],
			 P_NORMAL, modes[m], left, 100 + i);
		switch (m) {
		case 0:
			IRECV(&r);
			MPI_OK(
			    MPI_Send(s.b.org, s.p.s.count, s.p.s.t, right, s.tag, MPI_COMM_WORLD));
			MPI_OK(MPI_Wait(&r.rq, &r.st));
			break;
		case 1:
			ISEND(&s);
			MPI_OK(MPI_Recv(r.b.org, r.p.r.count, r.p.r.t, left, r.tag, MPI_COMM_WORLD,
					&r.st));
			MPI_OK(MPI_Wait(&s.rq, MPI_STATUS_IGNORE));
			break;
		case 2:
			MPI_OK(MPI_Sendrecv(s.b.org, s.p.s.count, s.p.s.t, right, s.tag, r.b.org,
					    r.p.r.count, r.p.r.t, left, r.tag, MPI_COMM_WORLD,
					    &r.st));
			break;
		default:
			IRECV(&r);
			MPI_OK(MPI_Issend(s.b.org, s.p.s.count, s.p.s.t, right, s.tag,
					  MPI_COMM_WORLD, &s.rq));
			MPI_OK(MPI_Wait(&s.rq, MPI_STATUS_IGNORE));
			MPI_OK(MPI_Wait(&r.rq, &r.st));
			break;
		}
		check(&r.p, &r.b, &r.st, left);
		end_free(&s);
		end_free(&r);
		if (i % 3 == 2) { /* to itself: Isend + Recv, or Sendrecv */
			size_t t = targets[(i * 5 + rank) % NTARGETS];

			end_send(&s, msg_seed(2, i, rank, 0), t, P_NORMAL, "self", rank, 7);
			end_recv(&r, msg_seed(2, i, rank, 0), t, P_NORMAL, "self", rank, 7);
			if (i % 2) {
				ISEND(&s);
				MPI_OK(MPI_Recv(r.b.org, r.p.r.count, r.p.r.t, rank, 7,
						MPI_COMM_WORLD, &r.st));
				MPI_OK(MPI_Wait(&s.rq, MPI_STATUS_IGNORE));
			} else {
				MPI_OK(MPI_Sendrecv(s.b.org, s.p.s.count, s.p.s.t, rank, 7, r.b.org,
						    r.p.r.count, r.p.r.t, rank, 7, MPI_COMM_WORLD,
						    &r.st));
			}
			check(&r.p, &r.b, &r.st, rank);
			end_free(&s);
			end_free(&r);
		}
	}
}

/* 12 messages to the right and 4 to itself in flight at once. */
static void test_many(void)
{
	enum { NR = 12, NS = 4, N = NR + NS };
	end_t s[N], r[N];
	MPI_Request rq[2 * N];
	MPI_Status st[2 * N];
	int ord[N];
	rng_t g = {msg_seed(3, 0, rank, 0)};

	for (int k = 0; k < N; k++) {
		int to = k < NR ? right : rank, from = k < NR ? left : rank;

		end_send(&s[k], msg_seed(3, k, rank, 1), targets[(k * 5 + rank) % NSMALL], P_NORMAL,
			 "many", to, 200 + k);
		end_recv(&r[k], msg_seed(3, k, from, 1), targets[(k * 5 + from) % NSMALL], P_NORMAL,
			 "many", from, 200 + k);
		ord[k] = k;
	}
	for (int k = N - 1; k > 0; k--) {
		int j = rnd_in(&g, 0, k), t = ord[k];

		ord[k] = ord[j];
		ord[j] = t;
	}
	for (int k = 0; k < N; k++)
		IRECV(&r[ord[k]]);
	for (int k = 0; k < N; k++)
		ISEND(&s[ord[N - 1 - k]]);
	for (int k = 0; k < N; k++) {
		rq[k] = r[k].rq;
		rq[N + k] = s[k].rq;
	}
	MPI_OK(MPI_Waitall(2 * N, rq, st));
	for (int k = 0; k < N; k++) {
		check(&r[k].p, &r[k].b, &st[k], r[k].peer);
		end_free(&r[k]);
		end_free(&s[k]);
	}
}

/* count 0 into count 0 or more; types of size 0 are among the random ones. */
static void test_zero(void)
{
	for (int i = 0; i < 4; i++) {
		end_t s, r;

		end_send(&s, msg_seed(4, i, rank, 0), targets[i * 3], P_ZERO, "count 0", right,
			 300);
		end_recv(&r, msg_seed(4, i, left, 0), targets[i * 3], P_ZERO, "count 0", left, 300);
		IRECV(&r);
		ISEND(&s);
		MPI_OK(MPI_Wait(&r.rq, &r.st));
		MPI_OK(MPI_Wait(&s.rq, MPI_STATUS_IGNORE));
		check(&r.p, &r.b, &r.st, left);
		end_free(&s);
		end_free(&r);
	}
}

/* Receives shorter than the message: eager and rendezvous sizes. */
static void test_truncate(void)
{
	static const size_t sizes[] = {100, 3000, 20000, 600000};

	for (int i = 0; i < (int)(sizeof(sizes) / sizeof(sizes[0])); i++) {
		end_t s, r;
		int rc, cls;

#ifdef OPEN_MPI
		/* Open MPI 4.1.4 (ob1, vader with CMA) writes past the receive
		 * buffer when it truncates a rendezvous message into a derived
		 * type (AddressSanitizer: process_vm_readv in
		 * mca_btl_vader_get_cma), e.g. DTS_SEED=6 or 9 at 3 ranks. */
		if (sizes[i] > 8192)
			continue;
#endif
		end_send(&s, msg_seed(5, i, rank, 0), sizes[i], P_SHORT, "truncate", right, 400);
		end_recv(&r, msg_seed(5, i, left, 0), sizes[i], P_SHORT, "truncate", left, 400);
		CHECK(r.p.r.bytes < r.p.s.bytes, "truncate plan: %zu into %zu", r.p.s.bytes,
		      r.p.r.bytes);
		ISEND(&s);
		rc = MPI_Recv(r.b.org, r.p.r.count, r.p.r.t, left, 400, MPI_COMM_WORLD, &r.st);
		MPI_OK(MPI_Error_class(rc, &cls));
		CHECK(cls == MPI_ERR_TRUNCATE,
		      "truncate: %zu bytes into %zu: class %d, not MPI_ERR_TRUNCATE; seed %#llx",
		      r.p.s.bytes, r.p.r.bytes, cls, (unsigned long long)r.p.seed);
		MPI_OK(MPI_Wait(&s.rq, MPI_STATUS_IGNORE));
		check(&r.p, &r.b, &r.st, left);
		end_free(&s);
		end_free(&r);
	}
	/* and the next message is whole */
	{
		end_t s, r;

		end_send(&s, msg_seed(5, 9, rank, 0), 50000, P_NORMAL, "after truncate", right,
			 401);
		end_recv(&r, msg_seed(5, 9, left, 0), 50000, P_NORMAL, "after truncate", left, 401);
		IRECV(&r);
		ISEND(&s);
		MPI_OK(MPI_Wait(&r.rq, &r.st));
		MPI_OK(MPI_Wait(&s.rq, MPI_STATUS_IGNORE));
		check(&r.p, &r.b, &r.st, left);
		end_free(&s);
		end_free(&r);
	}
}

/*
 * Three layouts of 16 blocks of 2 ints, all of size 32 ints and extent 47:
 * a vector (stride 3), an indexed at other offsets, and a hindexed at those
 * offsets listed from the highest address down. Each iteration makes the
 * sender's and the receiver's type afresh (different layouts), sends, and
 * frees them: a handle or id reused must not bring back an old layout.
 */
static rt_t cache_type(int which)
{
	static const int at[16] = {0, 2, 5, 9, 11, 14, 18, 20, 24, 27, 29, 33, 36, 38, 42, 45};
	int bl[16];
	MPI_Aint hd[16];
	rt_t o;

	for (int i = 0; i < 16; i++) {
		bl[i] = 2;
		hd[i] = (MPI_Aint)at[15 - i] * (MPI_Aint)sizeof(int);
	}
	switch (which % 3) {
	case 0:
		MPI_OK(MPI_Type_vector(16, 2, 3, MPI_INT, &o.t));
		o.desc = fmt("vec(16,2,3,int)");
		break;
	case 1:
		MPI_OK(MPI_Type_indexed(16, bl, at, MPI_INT, &o.t));
		o.desc = fmt("idx(16x2 at 0,2,5,..,45)");
		break;
	default:
		MPI_OK(MPI_Type_create_hindexed(16, bl, hd, MPI_INT, &o.t));
		o.desc = fmt("hidx(16x2 at 45,42,..,0)");
		break;
	}
	return o;
}

static void test_cache(void)
{
	static const int counts[] = {1, 3, 2000};

	for (int it = 0; it < 12; it++) {
		end_t s, r;
		int c = counts[it % 3];

		/* both ranks make both types of the pair, as plan_make does */
		for (int side = 0; side < 2; side++) {
			end_t *x = side ? &r : &s;
			int src = side ? left : rank;

			lay_set(&x->p.s, cache_type(it + src), c);
			lay_set(&x->p.r, cache_type(it + src + 1), c);
			x->p.seed = msg_seed(6, it, src, 0);
			x->p.what = "cache";
		}
		buf_make(&s.b, &s.p.s, data_seed(&s.p));
		buf_make(&r.b, &r.p.r, 0);
		MPI_OK(MPI_Sendrecv(s.b.org, c, s.p.s.t, right, 500, r.b.org, c, r.p.r.t, left, 500,
				    MPI_COMM_WORLD, &r.st));
		check(&r.p, &r.b, &r.st, left);
		end_free(&s);
		end_free(&r);
	}
}

/* 2 ranks: one element of a type of more than 32 MiB packed, 0 -> 1. */
static void test_big(void)
{
	end_t x;

	if (size != 2)
		return;
	if (rank == 0) {
		end_send(&x, msg_seed(7, 0, 0, 0), 0, P_BIG, "big", 1, 600);
		CHECK(x.p.s.bytes > (32u << 20), "big: %zu bytes", x.p.s.bytes);
		MPI_OK(MPI_Send(x.b.org, x.p.s.count, x.p.s.t, 1, 600, MPI_COMM_WORLD));
	} else {
		end_recv(&x, msg_seed(7, 0, 0, 0), 0, P_BIG, "big", 0, 600);
		MPI_OK(MPI_Recv(x.b.org, x.p.r.count, x.p.r.t, 0, 600, MPI_COMM_WORLD, &x.st));
		check(&x.p, &x.b, &x.st, 0);
	}
	end_free(&x);
}

int main(int argc, char **argv)
{
	const char *e;
	int rounds = 24;

	mt_init(&argc, &argv, &rank, &size);
	right = (rank + 1) % size;
	left = (rank - 1 + size) % size;
	if ((e = getenv("DTS_SEED")) && *e)
		base_seed = strtoull(e, NULL, 0);
	if ((e = getenv("DTS_ROUNDS")) && *e)
		rounds = atoi(e);
	verbose = (e = getenv("DTS_VERBOSE")) && *e == '1';
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	if (rank == 0)
		printf("dtype_schemes: %d ranks, base seed %#llx, %d ring rounds\n", size,
		       base_seed, rounds);
	test_ring(rounds);
	test_many();
	test_zero();
	test_truncate();
	test_cache();
	test_big();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("dtype_schemes: ok\n");
	MPI_OK(MPI_Finalize());
	return 0;
}
