/*
 * coll_select.c — the table that chooses every collective's algorithm, the
 * selector that reads it and its text form (coll_select.h).
 *
 * A row is a collective, conditions (ranks p, size n, properties of the
 * call that must or must not hold) and an algorithm; the first row of the
 * collective whose conditions all hold wins, so every collective ends with
 * an unconditional row. Why each threshold is where it is: the header
 * comment of the algorithm's file (measurements included).
 *
 * The trivial calls never get here: one rank, or nothing to move, returns
 * before any algorithm runs. The node-aware rows come first; their phases
 * (inside a node, among the nodes' representatives) select again without
 * MPIL_COLL_SPANS_NODES.
 */
#include "coll_select.h"

#include "ibx_int.h"

#include <stdarg.h>

/* Sizes that choose algorithms (bytes, n of the row). */
#define COLL_BCAST_SHORT_MAX	 (64 * 1024) /* binomial tree up to this */
#define COLL_BCAST_LINEAR_MAX	 8 /* oversubscribed node: root to each, up to this many ranks */
#define COLL_REDUCE_SHORT_MAX	 (64 * 1024) /* binomial reduce up to this */
#define COLL_ALLREDUCE_SHORT_MAX (16 * 1024) /* recursive doubling up to this */
#define COLL_ALLREDUCE_PAIR_MAX	 (64 * 1024) /* 2 ranks: one exchange + local op up to this */
#define COLL_GATHER_TREE_MAX	 2048	     /* binomial gather/scatter: block size */
#define COLL_ALLGATHER_SHORT_MAX (32 * 1024) /* Bruck allgather: total bytes */
#define COLL_ALLTOALL_BRUCK_MAX	 256	     /* Bruck alltoall: block size */
#define COLL_BARRIER_FAN_MAX	 8 /* crowded node: through rank 0, up to this many ranks */
#define COLL_ALLTOALL_LINEAR_P	 8 /* crowded node: all blocks at once, up to this many ranks */
#define COLL_ALLTOALL_LINEAR_MAX (256 * 1024) /* ... and blocks up to this */

/* One row: conditions and the algorithm they pick. */
typedef struct coll_rule {
	unsigned need, deny; /* properties that must / must not hold */
	int p_min, p_max;    /* 0: no bound */
	size_t n_above;	     /* n > n_above (0: no bound) */
	size_t n_upto;	     /* n <= n_upto (0: no bound) */
	mpil_coll_alg_t alg;
} coll_rule_t;

/* A collective's rows, in the order they are tried. */
typedef struct coll_rules {
	const char *name; /* MPI_<name> */
	const coll_rule_t *rows;
	size_t nrows;
} coll_rules_t;

#define RULES(name_, ...)                                                                          \
	{                                                                                          \
		.name = name_, .rows = (const coll_rule_t[]){__VA_ARGS__},                         \
		.nrows = sizeof((const coll_rule_t[]){__VA_ARGS__}) / sizeof(coll_rule_t)          \
	}

#define SPANS_NODES MPIL_COLL_SPANS_NODES
#define ONE_NODE    MPIL_COLL_ONE_NODE
#define OVERSUB	    MPIL_COLL_OVERSUB
#define COMMUTE	    MPIL_COLL_COMMUTE
#define PREDEF	    MPIL_COLL_PREDEF
#define SAME_BLOCKS MPIL_COLL_SAME_BLOCKS
#define SPLITS	    MPIL_COLL_SPLITS

/* The table, by collective (a lookup is one index and a few rows). One row
 * per line: a table reads better unwrapped. */
// clang-format off
static const coll_rules_t coll_table[MPIL_COLL_NOPS] = {
	[MPIL_COLL_BARRIER] = RULES("Barrier",
		{.need = SPANS_NODES, .alg = MPIL_COLL_ALG_NODE_AWARE},
		{.need = ONE_NODE | OVERSUB, .p_min = 3, .p_max = COLL_BARRIER_FAN_MAX, .alg = MPIL_COLL_ALG_FAN},
		{.alg = MPIL_COLL_ALG_DISSEMINATION}),
	[MPIL_COLL_BCAST] = RULES("Bcast",
		{.need = SPANS_NODES, .alg = MPIL_COLL_ALG_NODE_AWARE},
		{.need = ONE_NODE | OVERSUB, .p_min = 3, .p_max = COLL_BCAST_LINEAR_MAX, .alg = MPIL_COLL_ALG_LINEAR},
		{.need = SPLITS, .deny = OVERSUB, .p_min = 3, .n_above = COLL_BCAST_SHORT_MAX, .alg = MPIL_COLL_ALG_SCATTER_RING},
		{.alg = MPIL_COLL_ALG_BINOMIAL}),
	[MPIL_COLL_REDUCE] = RULES("Reduce",
		{.need = SPANS_NODES | COMMUTE, .alg = MPIL_COLL_ALG_NODE_AWARE},
		{.need = COMMUTE | PREDEF | SPLITS, .p_min = 3, .n_above = COLL_REDUCE_SHORT_MAX, .alg = MPIL_COLL_ALG_RS_GATHER},
		{.alg = MPIL_COLL_ALG_BINOMIAL}),
	[MPIL_COLL_ALLREDUCE] = RULES("Allreduce",
		{.need = SPANS_NODES | COMMUTE, .alg = MPIL_COLL_ALG_NODE_AWARE},
		{.need = COMMUTE | PREDEF, .p_min = 2, .p_max = 2, .n_upto = COLL_ALLREDUCE_PAIR_MAX, .alg = MPIL_COLL_ALG_PAIR},
		{.need = COMMUTE | PREDEF | SPLITS, .n_above = COLL_ALLREDUCE_SHORT_MAX, .alg = MPIL_COLL_ALG_RABENSEIFNER},
		{.alg = MPIL_COLL_ALG_REC_DOUBLING}),
	[MPIL_COLL_REDUCE_SCATTER] = RULES("Reduce_scatter",
		{.need = COMMUTE | PREDEF, .alg = MPIL_COLL_ALG_RING},
		{.alg = MPIL_COLL_ALG_REDUCE_SCATTER}),
	[MPIL_COLL_SCAN] = RULES("Scan",
		{.alg = MPIL_COLL_ALG_REC_DOUBLING}),
	[MPIL_COLL_EXSCAN] = RULES("Exscan",
		{.alg = MPIL_COLL_ALG_REC_DOUBLING}),
	[MPIL_COLL_GATHER] = RULES("Gather",
		{.p_min = 3, .n_upto = COLL_GATHER_TREE_MAX, .alg = MPIL_COLL_ALG_BINOMIAL},
		{.alg = MPIL_COLL_ALG_LINEAR}),
	[MPIL_COLL_GATHERV] = RULES("Gatherv",
		{.alg = MPIL_COLL_ALG_LINEAR}),
	[MPIL_COLL_SCATTER] = RULES("Scatter",
		{.p_min = 3, .n_upto = COLL_GATHER_TREE_MAX, .alg = MPIL_COLL_ALG_BINOMIAL},
		{.alg = MPIL_COLL_ALG_LINEAR}),
	[MPIL_COLL_SCATTERV] = RULES("Scatterv",
		{.alg = MPIL_COLL_ALG_LINEAR}),
	[MPIL_COLL_ALLGATHER] = RULES("Allgather",
		{.p_min = 3, .n_upto = COLL_ALLGATHER_SHORT_MAX, .alg = MPIL_COLL_ALG_BRUCK},
		{.alg = MPIL_COLL_ALG_RING}),
	[MPIL_COLL_ALLGATHERV] = RULES("Allgatherv",
		{.alg = MPIL_COLL_ALG_RING}),
	[MPIL_COLL_ALLTOALL] = RULES("Alltoall",
		{.need = ONE_NODE | OVERSUB | SAME_BLOCKS, .p_min = 3, .p_max = COLL_ALLTOALL_LINEAR_P, .n_upto = COLL_ALLTOALL_LINEAR_MAX, .alg = MPIL_COLL_ALG_LINEAR},
		{.need = SAME_BLOCKS, .p_min = 3, .n_upto = COLL_ALLTOALL_BRUCK_MAX, .alg = MPIL_COLL_ALG_BRUCK},
		{.alg = MPIL_COLL_ALG_PAIRWISE}),
	[MPIL_COLL_ALLTOALLV] = RULES("Alltoallv",
		{.alg = MPIL_COLL_ALG_PAIRWISE}),
};
// clang-format on

static const char *const alg_names[MPIL_COLL_NALGS] = {
    [MPIL_COLL_ALG_NONE] = "(none)",
    [MPIL_COLL_ALG_NODE_AWARE] = "node-aware",
    [MPIL_COLL_ALG_DISSEMINATION] = "dissemination",
    [MPIL_COLL_ALG_BINOMIAL] = "binomial tree",
    [MPIL_COLL_ALG_LINEAR] = "linear",
    [MPIL_COLL_ALG_SCATTER_RING] = "scatter + ring allgather",
    [MPIL_COLL_ALG_RS_GATHER] = "ring reduce-scatter + gather",
    [MPIL_COLL_ALG_PAIR] = "one exchange + local op",
    [MPIL_COLL_ALG_REC_DOUBLING] = "recursive doubling",
    [MPIL_COLL_ALG_RABENSEIFNER] = "Rabenseifner",
    [MPIL_COLL_ALG_RING] = "ring",
    [MPIL_COLL_ALG_REDUCE_SCATTER] = "reduce to rank 0 + scatter",
    [MPIL_COLL_ALG_BRUCK] = "Bruck",
    [MPIL_COLL_ALG_PAIRWISE] = "pairwise exchange",
    [MPIL_COLL_ALG_FAN] = "fan-in + fan-out at rank 0",
};

/* Indexed by bit number of the property. */
static const char *const prop_names[] = {
    "spans nodes", "one node",	   "oversubscribed", "commutative",
    "predefined",  "equal blocks", "count >= p",
};
_Static_assert(1u << IBX_ARRAY_SIZE(prop_names) == MPIL_COLL_SPLITS << 1,
	       "a name for every property");

/* ---- selection ---------------------------------------------------------------------------- */

static bool rule_holds(const coll_rule_t *r, const mpil_coll_query_t *q, unsigned props)
{
	return (props & r->need) == r->need && !(props & r->deny) &&
	       (!r->p_min || q->p >= r->p_min) && (!r->p_max || q->p <= r->p_max) &&
	       (!r->n_above || q->bytes > r->n_above) && (!r->n_upto || q->bytes <= r->n_upto);
}

mpil_coll_memo_t mpil_coll_memo[MPIL_COLL_NOPS];

mpil_coll_alg_t mpil_coll_select(const mpil_coll_query_t *q)
{
	unsigned props = q->props | (q->count >= q->p ? MPIL_COLL_SPLITS : 0);
	const coll_rules_t *t;

	if (ibx_unlikely((unsigned)q->op >= MPIL_COLL_NOPS))
		return MPIL_COLL_ALG_NONE;
	t = &coll_table[q->op];
	for (size_t i = 0; i < t->nrows; i++)
		if (rule_holds(&t->rows[i], q, props))
			return t->rows[i].alg;
	return MPIL_COLL_ALG_NONE;
}

const char *mpil_coll_alg_name(mpil_coll_alg_t alg)
{
	return (unsigned)alg < MPIL_COLL_NALGS ? alg_names[alg] : "?";
}

const char *mpil_coll_op_name(mpil_coll_op_t op)
{
	return (unsigned)op < MPIL_COLL_NOPS ? coll_table[op].name : "?";
}

/* ---- the table as text -------------------------------------------------------------------- */

static const char *const legend[] = {
    "per collective, the first row whose conditions hold picks the algorithm",
    "p: ranks; n: bytes (Bcast: the message; Reduce, Allreduce: the vector; Gather, Scatter,",
    "  Alltoall: one block; Allgather: all p blocks); count: elements (Bcast: bytes)",
    "node-aware: inside each node, then among one representative per node; each phase",
    "  selects again, without 'spans nodes'; one rank or zero bytes: nothing runs",
};

/* A list of conditions being written into a buffer. */
typedef struct cond_text {
	char *buf;
	size_t size, len;
} cond_text_t;

/* Appends one condition, after ", " unless it is the first. */
static void __attribute__((format(printf, 2, 3))) cond_add(cond_text_t *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len && t->len + 2 < t->size) {
		memcpy(t->buf + t->len, ", ", 3);
		t->len += 2;
	}
	if (t->len >= t->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len = t->len + (size_t)n < t->size ? t->len + (size_t)n : t->size - 1;
}

/* "256 B", "64 KiB" */
static const char *size_str(size_t n, char *buf, size_t size)
{
	if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, size, "%zu KiB", n / 1024);
	else
		snprintf(buf, size, "%zu B", n);
	return buf;
}

static void cond_props(cond_text_t *t, unsigned props, const char *prefix)
{
	for (size_t b = 0; b < IBX_ARRAY_SIZE(prop_names); b++)
		if (props & (1u << b))
			cond_add(t, "%s%s", prefix, prop_names[b]);
}

/* The conditions of @r in words; @first: the collective's first row. */
static void cond_str(const coll_rule_t *r, bool first, char *buf, size_t size)
{
	cond_text_t t = {.buf = buf, .size = size};
	char n[32];

	buf[0] = '\0';
	if (r->p_min && r->p_min == r->p_max)
		cond_add(&t, "p = %d", r->p_min);
	else if (r->p_min && r->p_max)
		cond_add(&t, "%d <= p <= %d", r->p_min, r->p_max);
	else if (r->p_min)
		cond_add(&t, "p >= %d", r->p_min);
	else if (r->p_max)
		cond_add(&t, "p <= %d", r->p_max);
	if (r->n_above)
		cond_add(&t, "n > %s", size_str(r->n_above, n, sizeof(n)));
	if (r->n_upto)
		cond_add(&t, "n <= %s", size_str(r->n_upto, n, sizeof(n)));
	cond_props(&t, r->need, "");
	cond_props(&t, r->deny, "not ");
	if (!t.len)
		cond_add(&t, "%s", first ? "always" : "otherwise");
}

typedef void coll_emit_fn(void *ctx, const char *line);

/* The legend, then the rows collective by collective. */
static void select_text(coll_emit_fn *emit, void *ctx)
{
	char line[256], cond[160];

	for (size_t i = 0; i < IBX_ARRAY_SIZE(legend); i++)
		emit(ctx, legend[i]);
	for (int op = 0; op < MPIL_COLL_NOPS; op++) {
		const coll_rules_t *t = &coll_table[op];

		for (size_t i = 0; i < t->nrows; i++) {
			cond_str(&t->rows[i], i == 0, cond, sizeof(cond));
			snprintf(line, sizeof(line), "%-15s %-56s %s", t->name, cond,
				 alg_names[t->rows[i].alg]);
			emit(ctx, line);
		}
	}
}

static void emit_file(void *ctx, const char *line)
{
	fprintf(ctx, "  %s\n", line);
}

void mpil_coll_select_print(FILE *f)
{
	select_text(emit_file, f);
}

static void emit_log(void *ctx, const char *line)
{
	ibx_info("coll: %s", line);
}

void mpil_coll_select_log(int p, unsigned world_props)
{
	char props[160];
	cond_text_t t = {.buf = props, .size = sizeof(props)};

	if (ibx_log_level_cur < IBX_LOG_INFO)
		return;
	props[0] = '\0';
	cond_add(&t, "p = %d", p);
	cond_props(&t, world_props & ~MPIL_COLL_OVERSUB, "");
	cond_props(&t, MPIL_COLL_OVERSUB, world_props & MPIL_COLL_OVERSUB ? "" : "not ");
	ibx_info("coll: collective algorithms; MPI_COMM_WORLD's calls see %s", props);
	select_text(emit_log, NULL);
}
