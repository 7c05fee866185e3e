/*
 * rma_common.c — the parts ibtest's one-sided commands share (rma_lat,
 * rma_bw, exchange; see rma_common.h): their options, window creation per
 * flavour, one operation per slot, passive-target synchronisation per mode,
 * and the checks of what a run moved.
 *
 * Every run is checked once, after its timing: the origin fills its buffer
 * (or the target its window, for get) with a pseudo-random stream that
 * depends on the size and the supplying rank, the receiving side is zeroed,
 * and after the run the receiver compares. Accumulate (MPI_SUM on
 * MPI_UNSIGNED_CHAR) must leave count x byte (mod 256) where count is the
 * number of operations that hit the slot; fetch-and-op (+1) and
 * compare-and-swap (k -> k + 1) leave the count in the target word and
 * count - 1 as the last fetched value.
 *
 *     origin                       target
 *     fill obuf (get: zero)        zero window (get: fill)
 *     ------------- MPI_Barrier -------------
 *     timed run of the benchmark's epochs
 *     ------------- MPI_Barrier -------------
 *     check obuf / results         check window
 *     ------- MPI_Allreduce(MIN, ok) --------
 */
#include "rma_common.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define RMA_PAGE 4096

// clang-format off
const char *const rma_op_names[RMA_OP_N] = {"put", "get", "acc", "fop", "cas", "sendrecv"};
const char *const rma_op_mpi[RMA_OP_N] = {
	"MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Fetch_and_op", "MPI_Compare_and_swap",
	"MPI_Sendrecv"};
const char *const rma_flavor_names[RMA_WIN_N] = {"allocate", "create", "dynamic", "shared"};
const char *const rma_flavor_mpi[RMA_WIN_N] = {
	"MPI_Win_allocate", "MPI_Win_create", "MPI_Win_create_dynamic", "MPI_Win_allocate_shared"};
const char *const rma_sync_names[RMA_SYNC_N] = {"flush", "lock", "fence", "pscw", "lock_all"};
const char *const rma_sync_mpi[RMA_SYNC_N] = {
	"MPI_Win_flush", "MPI_Win_lock/unlock", "MPI_Win_fence", "Post/Start/Complete/Wait",
	"MPI_Win_lock_all/unlock_all"};
// clang-format on

/* ---- options ---------------------------------------------------------------- */

enum { OPT_JSON = 256, OPT_BIDIR, OPT_TYPICAL, OPT_SLEEPS }; /* long options without a short form */

/* "a,b" or "all" over @names (those in @allowed) into a bit mask. */
static int parse_choice(const char *arg, const char *const *names, unsigned n, unsigned allowed,
			unsigned *mask_p)
{
	unsigned mask = 0;
	const char *p = arg;

	if (!strcmp(arg, "all")) {
		*mask_p = allowed;
		return 0;
	}
	while (*p) {
		size_t len = strcspn(p, ",");
		unsigned i;

		for (i = 0; i < n; i++)
			if ((allowed & RMA_BIT(i)) && strlen(names[i]) == len &&
			    !strncmp(names[i], p, len))
				break;
		if (i == n)
			return -1;
		mask |= RMA_BIT(i);
		p += len;
		if (*p == ',' && *++p == '\0')
			return -1;
	}
	if (!mask)
		return -1;
	*mask_p = mask;
	return 0;
}

/* "put, get or acc" of the accepted values, for messages and help. */
static void print_choices(FILE *f, const char *const *names, unsigned n, unsigned allowed, bool all)
{
	const char *sep = "";

	for (unsigned i = 0; i < n; i++) {
		if (!(allowed & RMA_BIT(i)))
			continue;
		fprintf(f, "%s%s", sep, names[i]);
		sep = ", ";
	}
	if (all)
		fprintf(f, "%sall", sep);
}

static const char *first_name(const char *const *names, unsigned n, unsigned mask)
{
	for (unsigned i = 0; i < n; i++)
		if (mask & RMA_BIT(i))
			return names[i];
	return "?";
}

static void usage(const rma_spec_t *s, FILE *f)
{
	fprintf(f, "usage: mpilite-run -n %s ibtest %s [options]\n  %s\n\n", s->nbr_opt ? "P" : "2",
		s->name, s->summary);
	fprintf(f, "  -o, --op=LIST         ");
	print_choices(f, rma_op_names, RMA_OP_N, s->ops, true);
	fprintf(f, " (comma-separated; default %s)\n",
		s->def_ops == s->ops ? "all" : first_name(rma_op_names, RMA_OP_N, s->def_ops));
	fprintf(f, "  -w, --win=%-11s ", s->flavor_all ? "LIST" : "FLAVOUR");
	print_choices(f, rma_flavor_names, RMA_WIN_N, s->flavors, s->flavor_all);
	fprintf(f, " (default %s)\n", first_name(rma_flavor_names, RMA_WIN_N, s->def_flavors));
	fprintf(f, "  -y, --sync=LIST       ");
	print_choices(f, rma_sync_names, RMA_SYNC_N, s->syncs, true);
	fprintf(f, " (default %s)\n",
		s->def_syncs == s->syncs ? "all"
					 : first_name(rma_sync_names, RMA_SYNC_N, s->def_syncs));
	fprintf(f, "  -a, --all             sizes %zu, %s2, 4 ... %u bytes%s\n", s->min_all,
		s->min_all ? "" : "1, ", RMA_ALL_MAX,
		s->ops & RMA_BIT(RMA_OP_FOP) ? " (fop, cas: always 8)" : "");
	fprintf(f, "  -s, --size=SIZE       one size (k/m/g suffixes; default %zu)\n", s->def_size);
	fprintf(f, "  -n, --iters=N         %s\n", s->iters_help);
	if (s->window_opt)
		fprintf(f, "  -t, --window=W        operations per epoch (default 64)\n");
	if (s->bidir_opt)
		fprintf(f,
			"      --bidir           both ranks issue at once (osu_put_bibw; -y fence "
			"or pscw, default pscw)\n");
	if (s->typical_opt)
		fprintf(f,
			"      --typical         passive target: time every iteration and report "
			"the median\n                        (perftest's t_typical) instead of the "
			"mean\n");
	if (s->typical_opt)
		fprintf(f, "      --target-sleeps   passive target: the idle target waits in "
			   "MPI_Ibarrier, testing it\n                        every 100 us and "
			   "sleeping between (as perftest's server\n                        "
			   "sleeps), instead of in MPI_Barrier\n");
	if (s->nbr_opt)
		fprintf(f, "  -k, --neighbours=N    rank i supplies a block to each of i+1 .. i+N "
			   "and takes one\n                        from each of i-1 .. i-N (mod P; "
			   "1 .. P, default 1)\n");
	fprintf(f, "      --json            results as one JSON document on stdout (the tables "
		   "go to stderr)\n");
	fprintf(f, "  -h, --help            this text\n");
}

static int bad_value(const rma_spec_t *s, char opt, const char *arg, const char *const *names,
		     unsigned n, unsigned allowed, bool all)
{
	fprintf(stderr, "ibtest %s: bad -%c value '%s' (", s->name, opt, arg);
	print_choices(stderr, names, n, allowed, all);
	fprintf(stderr, ")\n");
	return RMA_EXIT_USAGE;
}

static int bad_number(const rma_spec_t *s, const char *what, const char *arg)
{
	fprintf(stderr, "ibtest %s: bad %s '%s'\n", s->name, what, arg);
	return RMA_EXIT_USAGE;
}

/* One option; 0 taken, 1 --help, RMA_EXIT_USAGE otherwise. */
static int take_opt(rma_opts_t *o, int opt, const char *arg, bool *sync_given)
{
	const rma_spec_t *s = o->spec;
	unsigned long v;

	switch (opt) {
	case 'o':
		if (parse_choice(arg, rma_op_names, RMA_OP_N, s->ops, &o->ops))
			return bad_value(s, 'o', arg, rma_op_names, RMA_OP_N, s->ops, true);
		return 0;
	case 'w':
		if (parse_choice(arg, rma_flavor_names, RMA_WIN_N, s->flavors, &o->flavors) ||
		    (!s->flavor_all && (o->flavors & (o->flavors - 1))))
			return bad_value(s, 'w', arg, rma_flavor_names, RMA_WIN_N, s->flavors,
					 s->flavor_all);
		return 0;
	case 'y':
		if (parse_choice(arg, rma_sync_names, RMA_SYNC_N, s->syncs, &o->syncs))
			return bad_value(s, 'y', arg, rma_sync_names, RMA_SYNC_N, s->syncs, true);
		*sync_given = strcmp(arg, "all") != 0;
		return 0;
	case 'a': o->all = true; return 0;
	case 's':
		if (ibtest_parse_size(arg, 0, RMA_SIZE_LIMIT, &o->size)) {
			fprintf(stderr, "ibtest %s: bad size '%s' (at most 1g)\n", s->name, arg);
			return RMA_EXIT_USAGE;
		}
		return 0;
	case 'n':
		if (ibtest_parse_count(arg, 1, 100000000, &v))
			return bad_number(s, "iteration count", arg);
		o->iters = (unsigned)v;
		return 0;
	case 't':
		if (ibtest_parse_count(arg, 1, 16384, &v))
			return bad_number(s, "window (1..16384)", arg);
		o->window = (unsigned)v;
		return 0;
	case 'k':
		if (ibtest_parse_count(arg, 1, 1u << 20, &v))
			return bad_number(s, "neighbour count", arg);
		o->neighbours = (unsigned)v;
		return 0;
	case OPT_BIDIR: o->bidir = true; return 0;
	case OPT_TYPICAL: o->typical = true; return 0;
	case OPT_SLEEPS: o->target_sleeps = true; return 0;
	case OPT_JSON: o->json = true; return 0;
	case 'h': usage(s, stdout); return 1;
	}
	usage(s, stderr);
	return RMA_EXIT_USAGE;
}

/* What the options say together: -a against -s, --bidir's synchronisations. */
static int check_opts(rma_opts_t *o, bool size_given, bool sync_given)
{
	const rma_spec_t *s = o->spec;
	unsigned active = RMA_BIT(RMA_SYNC_FENCE) | RMA_BIT(RMA_SYNC_PSCW);

	if (o->all && size_given) {
		fprintf(stderr, "ibtest %s: -a and -s exclude each other\n", s->name);
		return RMA_EXIT_USAGE;
	}
	if (!o->bidir)
		return 0;
	if (sync_given && (o->syncs & ~active)) {
		fprintf(stderr, "ibtest %s: --bidir takes -y fence or pscw\n", s->name);
		return RMA_EXIT_USAGE;
	}
	/* -y all: the two that fit; no -y: pscw, as osu_put_bibw */
	o->syncs = sync_given ? o->syncs : o->syncs == s->syncs ? active : RMA_BIT(RMA_SYNC_PSCW);
	return 0;
}

int rma_parse_opts(rma_opts_t *o, const rma_spec_t *spec, int argc, char **argv)
{
	// clang-format off
	static const struct option lopts[] = {
	    {"op", required_argument, NULL, 'o'},
	    {"win", required_argument, NULL, 'w'},
	    {"sync", required_argument, NULL, 'y'},
	    {"all", no_argument, NULL, 'a'},
	    {"size", required_argument, NULL, 's'},
	    {"iters", required_argument, NULL, 'n'},
	    {"window", required_argument, NULL, 't'},
	    {"neighbours", required_argument, NULL, 'k'},
	    {"bidir", no_argument, NULL, OPT_BIDIR},
	    {"typical", no_argument, NULL, OPT_TYPICAL},
	    {"target-sleeps", no_argument, NULL, OPT_SLEEPS},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	// clang-format on
	bool size_given = false, sync_given = false;
	char shorts[32] = "o:w:y:as:n:h";
	int opt, rc;

	memset(o, 0, sizeof(*o));
	o->spec = spec;
	o->ops = spec->def_ops;
	o->syncs = spec->def_syncs;
	o->flavors = spec->def_flavors;
	o->size = spec->def_size;
	o->window = 64;
	o->neighbours = 1;
	if (spec->window_opt)
		strcat(shorts, "t:");
	if (spec->nbr_opt)
		strcat(shorts, "k:");
	optind = 1;
	while ((opt = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
		/* long forms of options another command has */
		if ((opt == 't' && !spec->window_opt) || (opt == 'k' && !spec->nbr_opt) ||
		    (opt == OPT_BIDIR && !spec->bidir_opt) ||
		    ((opt == OPT_TYPICAL || opt == OPT_SLEEPS) && !spec->typical_opt)) {
			fprintf(stderr, "ibtest %s: '%s' is not an option of this command\n",
				spec->name, argv[optind - 1]);
			opt = '?';
		}
		size_given |= opt == 's';
		rc = take_opt(o, opt, optarg, &sync_given);
		if (rc)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, "ibtest %s: unexpected argument '%s'\n", spec->name, argv[optind]);
		usage(spec, stderr);
		return RMA_EXIT_USAGE;
	}
	return check_opts(o, size_given, sync_given);
}

bool rma_op_is_atomic(rma_op_t op)
{
	return op == RMA_OP_FOP || op == RMA_OP_CAS;
}

int rma_for_each_case(const rma_opts_t *o,
		      int (*fn)(void *arg, rma_op_t op, rma_flavor_t flavor, rma_sync_t sync),
		      void *arg)
{
	for (int op = 0; op < RMA_OP_N; op++)
		for (int fl = 0; fl < RMA_WIN_N; fl++)
			for (int sy = 0; sy < RMA_SYNC_N; sy++) {
				int rc;

				if (!(o->ops & RMA_BIT(op)) || !(o->flavors & RMA_BIT(fl)) ||
				    !(o->syncs & RMA_BIT(sy)))
					continue;
				rc = fn(arg, (rma_op_t)op, (rma_flavor_t)fl, (rma_sync_t)sy);
				if (rc)
					return rc;
			}
	return 0;
}

size_t rma_first_size(const rma_opts_t *o, rma_op_t op)
{
	return rma_op_is_atomic(op) ? RMA_ATOMIC_SZ : o->all ? o->spec->min_all : o->size;
}

bool rma_next_size(const rma_opts_t *o, rma_op_t op, size_t *size_p)
{
	if (rma_op_is_atomic(op) || !o->all || *size_p >= RMA_ALL_MAX)
		return false;
	*size_p = *size_p ? *size_p * 2 : 1;
	return true;
}

size_t rma_max_size(const rma_opts_t *o, rma_op_t op)
{
	return rma_op_is_atomic(op) ? RMA_ATOMIC_SZ : o->all ? RMA_ALL_MAX : o->size;
}

int rma_init(const char *name, int need, int *argc_p, char ***argv_p, int *rank_p, int *size_p)
{
	MPI_Init(argc_p, argv_p);
	MPI_Comm_rank(MPI_COMM_WORLD, rank_p);
	MPI_Comm_size(MPI_COMM_WORLD, size_p);
	if (!need || *size_p == need)
		return 0;
	if (*rank_p == 0)
		fprintf(stderr,
			"ibtest %s: needs exactly %d ranks, got %d (run: mpilite-run -n %d "
			"ibtest %s)\n",
			name, need, *size_p, need, name);
	MPI_Finalize();
	return RMA_EXIT_USAGE;
}

unsigned rma_warmup(unsigned iters)
{
	return iters / 10 + 1;
}

double rma_elapsed(double t0, double t1)
{
	return t1 > t0 ? t1 - t0 : 1e-9;
}

bool rma_all_ok(bool ok)
{
	int v = ok;

	MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	return v != 0;
}

/* ---- windows ---------------------------------------------------------------- */

static int open_shared(rma_win_t *w)
{
	int rc;

	/* the one flavour that may be refused: ranks on different nodes */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = MPI_Win_allocate_shared((MPI_Aint)w->bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->base,
				     &w->win);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	if (rma_all_ok(rc == MPI_SUCCESS))
		return 0;
	if (rc == MPI_SUCCESS)
		MPI_Win_free(&w->win);
	return RMA_WIN_SKIP;
}

int rma_win_open(rma_win_t *w, rma_flavor_t flavor, size_t bytes)
{
	int nranks;

	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	memset(w, 0, sizeof(*w));
	w->flavor = flavor;
	w->bytes = (bytes < RMA_PAGE ? RMA_PAGE : bytes + RMA_PAGE - 1) / RMA_PAGE * RMA_PAGE;
	w->disp0 = calloc((size_t)nranks, sizeof(*w->disp0));
	if (flavor == RMA_WIN_CREATE || flavor == RMA_WIN_DYNAMIC)
		w->base = aligned_alloc(RMA_PAGE, w->bytes);
	if (!w->disp0 || ((flavor == RMA_WIN_CREATE || flavor == RMA_WIN_DYNAMIC) && !w->base)) {
		fprintf(stderr, "ibtest: out of memory for a %zu-byte window\n", w->bytes);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	switch (flavor) {
	case RMA_WIN_ALLOCATE:
		MPI_Win_allocate((MPI_Aint)w->bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->base,
				 &w->win);
		break;
	case RMA_WIN_CREATE:
		MPI_Win_create(w->base, (MPI_Aint)w->bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
			       &w->win);
		break;
	case RMA_WIN_DYNAMIC: {
		MPI_Aint addr;

		MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
		MPI_Win_attach(w->win, w->base, (MPI_Aint)w->bytes);
		MPI_Get_address(w->base, &addr);
		MPI_Allgather(&addr, 1, MPI_AINT, w->disp0, 1, MPI_AINT, MPI_COMM_WORLD);
		break;
	}
	case RMA_WIN_SHARED:
		if (open_shared(w)) {
			free(w->disp0);
			w->disp0 = NULL;
			return RMA_WIN_SKIP;
		}
		break;
	case RMA_WIN_N: break;
	}
	/* first-touch faults are not what we measure */
	memset(w->base, 0, w->bytes);
	MPI_Barrier(MPI_COMM_WORLD);
	return 0;
}

void rma_win_close(rma_win_t *w)
{
	if (w->flavor == RMA_WIN_DYNAMIC)
		MPI_Win_detach(w->win, w->base);
	MPI_Win_free(&w->win);
	if (w->flavor == RMA_WIN_CREATE || w->flavor == RMA_WIN_DYNAMIC)
		free(w->base);
	free(w->disp0);
	memset(w, 0, sizeof(*w));
}

MPI_Group rma_group(const int *ranks, int n)
{
	MPI_Group world, g;

	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, n, ranks, &g);
	MPI_Group_free(&world);
	return g;
}

/* ---- operations and passive-target synchronisation ------------------------- */

void rma_xfer_issue(const rma_xfer_t *x, unsigned slot)
{
	static const uint64_t one = 1;
	size_t off = (size_t)slot * (rma_op_is_atomic(x->op) ? RMA_ATOMIC_SZ : x->size);
	MPI_Aint disp = x->w->disp0[x->target] + (MPI_Aint)off;
	int n = (int)x->size;

	switch (x->op) {
	case RMA_OP_PUT:
		MPI_Put(x->obuf + off, n, MPI_BYTE, x->target, disp, n, MPI_BYTE, x->w->win);
		break;
	case RMA_OP_GET:
		MPI_Get(x->obuf + off, n, MPI_BYTE, x->target, disp, n, MPI_BYTE, x->w->win);
		break;
	case RMA_OP_ACC:
		MPI_Accumulate(x->obuf + off, n, MPI_UNSIGNED_CHAR, x->target, disp, n,
			       MPI_UNSIGNED_CHAR, MPI_SUM, x->w->win);
		break;
	case RMA_OP_FOP:
		MPI_Fetch_and_op(&one, &x->results[slot], MPI_UINT64_T, x->target, disp, MPI_SUM,
				 x->w->win);
		break;
	case RMA_OP_CAS:
		MPI_Compare_and_swap(&x->cas_swap, &x->cas_compare, &x->results[slot], MPI_UINT64_T,
				     x->target, disp, x->w->win);
		break;
	default: break;
	}
}

void rma_run_begin(const rma_win_t *w, rma_sync_t s, int target)
{
	if (s == RMA_SYNC_FLUSH)
		MPI_Win_lock(MPI_LOCK_SHARED, target, 0, w->win);
}

void rma_run_end(const rma_win_t *w, rma_sync_t s, int target)
{
	if (s == RMA_SYNC_FLUSH)
		MPI_Win_unlock(target, w->win);
}

void rma_epoch_begin(const rma_win_t *w, rma_sync_t s, int target)
{
	if (s == RMA_SYNC_LOCK)
		MPI_Win_lock(MPI_LOCK_SHARED, target, 0, w->win);
	else if (s == RMA_SYNC_LOCK_ALL)
		MPI_Win_lock_all(0, w->win);
}

void rma_epoch_end(const rma_win_t *w, rma_sync_t s, int target)
{
	if (s == RMA_SYNC_FLUSH)
		MPI_Win_flush(target, w->win);
	else if (s == RMA_SYNC_LOCK)
		MPI_Win_unlock(target, w->win);
	else if (s == RMA_SYNC_LOCK_ALL)
		MPI_Win_unlock_all(w->win);
}

/* ---- data checks ------------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Byte @k of rank @rank's stream at size @size: counter-based, so any part
 * of the stream can be made without the bytes before it. */
static unsigned char pattern_at(size_t size, int rank, size_t k)
{
	uint64_t seed = mix64(((uint64_t)size << 16) ^ (uint64_t)(unsigned)rank ^ 0x1b7e5703ull);

	return (unsigned char)(mix64(seed + k / 8 * 0x9e3779b97f4a7c15ull) >> (k % 8 * 8));
}

void rma_pattern_fill(unsigned char *p, size_t off, size_t len, size_t size, int rank)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern_at(size, rank, off + i);
}

size_t rma_pattern_check(const unsigned char *p, size_t off, size_t len, size_t size, int rank)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern_at(size, rank, off + i))
			return i + 1;
	return 0;
}

/* Operations of a run that hit slot @s. */
static uint64_t slot_count(const rma_outcome_t *c, unsigned s)
{
	uint64_t per = c->per_epoch / c->slots + (s < c->per_epoch % c->slots);

	return per * c->epochs;
}

static size_t span(const rma_outcome_t *c)
{
	return (size_t)c->slots * (rma_op_is_atomic(c->op) ? RMA_ATOMIC_SZ : c->size);
}

void rma_prepare_target(const rma_outcome_t *c, int me, unsigned char *win_mem)
{
	if (c->op == RMA_OP_GET)
		rma_pattern_fill(win_mem, 0, span(c), c->size, me);
	else
		memset(win_mem, 0, span(c));
}

void rma_prepare_origin(const rma_outcome_t *c, int me, unsigned char *obuf, uint64_t *results)
{
	if (c->op == RMA_OP_PUT || c->op == RMA_OP_ACC)
		rma_pattern_fill(obuf, 0, span(c), c->size, me);
	else if (c->op == RMA_OP_GET)
		memset(obuf, 0, span(c));
	else
		memset(results, 0, c->slots * sizeof(*results));
}

static int wrong_byte(const char *what, const char *where, size_t i, unsigned got, unsigned want)
{
	fprintf(stderr, "%s: byte %zu of the %s is 0x%02x, expected 0x%02x\n", what, i, where, got,
		want);
	return -1;
}

static int wrong_word(const char *what, const char *where, unsigned s, uint64_t got, uint64_t want)
{
	fprintf(stderr, "%s: %s %u is %llu, expected %llu\n", what, where, s,
		(unsigned long long)got, (unsigned long long)want);
	return -1;
}

int rma_check_target(const rma_outcome_t *c, const unsigned char *win_mem, const char *what)
{
	size_t n = span(c), bad;
	uint64_t word;

	switch (c->op) {
	case RMA_OP_PUT:
		bad = rma_pattern_check(win_mem, 0, n, c->size, c->origin);
		return bad ? wrong_byte(what, "target window", bad - 1, win_mem[bad - 1],
					pattern_at(c->size, c->origin, bad - 1))
			   : 0;
	case RMA_OP_ACC:
		for (size_t i = 0; i < n; i++) {
			unsigned char want =
			    (unsigned char)(slot_count(c, (unsigned)(i / c->size)) *
					    pattern_at(c->size, c->origin, i));
			if (win_mem[i] != want)
				return wrong_byte(what, "target window", i, win_mem[i], want);
		}
		return 0;
	case RMA_OP_FOP:
	case RMA_OP_CAS:
		for (unsigned s = 0; s < c->slots; s++) {
			memcpy(&word, win_mem + (size_t)s * RMA_ATOMIC_SZ, sizeof(word));
			if (word != slot_count(c, s))
				return wrong_word(what, "target word", s, word, slot_count(c, s));
		}
		return 0;
	default: return 0;
	}
}

int rma_check_origin(const rma_outcome_t *c, int target, const unsigned char *obuf,
		     const uint64_t *results, const char *what)
{
	size_t bad;

	if (c->op == RMA_OP_GET) {
		bad = rma_pattern_check(obuf, 0, span(c), c->size, target);
		return bad ? wrong_byte(what, "origin buffer", bad - 1, obuf[bad - 1],
					pattern_at(c->size, target, bad - 1))
			   : 0;
	}
	if (!rma_op_is_atomic(c->op))
		return 0;
	/* the last operation on a slot fetched the count before it */
	for (unsigned s = 0; s < c->slots; s++)
		if (slot_count(c, s) && results[s] != slot_count(c, s) - 1)
			return wrong_word(what, "fetched value of slot", s, results[s],
					  slot_count(c, s) - 1);
	return 0;
}
