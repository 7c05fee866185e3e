/*
 * eng_rma.c — `ibtest eng_rma_lat`: the latency of one one-sided operation
 * of the engine API and the flush that completes it, between two ranks, in
 * perftest's latency table, run as
 *
 *     mpilite-run -n 2 ibtest eng_rma_lat [-o get|put|fadd|cswap] [-m alloc|map]
 *                                         [-a | -s SIZE] [-n ITERS] [--json]
 *
 * It is `ibtest rma_lat -y flush --typical` without MPI: the difference to
 * that command is what the MPI layer adds to an operation, the difference
 * to perftest's ib_read_lat / ib_write_lat / ib_atomic_lat (over verbs) is
 * what the engine adds to the device. The peer is reached through the path
 * ibx chose (IBX_PATHS=verbs forces the verbs path); the banner names it
 * and the kind of memory the target exposes.
 *
 *     rank 0 (origin)                              rank 1 (target)
 *                                                  ibx_mem_alloc (-m alloc) or
 *                        ◄─── packed rkey ──────── ibx_mem_map of its own buffer
 *     t[i]   op -> rank 1; ibx_flush(ctx, 1)       asleep: ibx_progress every
 *     t[i+1] ...  sample[i] = t[i+1] - t[i]        100 us (never needed: the
 *     check what moved                             operations are one-sided)
 *     DONE {iterations} ─────────────────────────► checks its memory
 *                        ◄─── verdict ───────────
 *
 * Operations: get and put of SIZE bytes (1 B .. 4 MiB with -a), and the
 * 8-byte atomics fetch-and-add (+1) and compare-and-swap (old -> old + 1,
 * always succeeding: one origin). Each iteration is timed on its own, by
 * the clock perftest stamps its iterations with (the TSC where the kernel
 * keeps time with it, see verbs_perf.h), so that the two tables differ by
 * the transport and not by the clock; t_typical is their median, which a few descheduled iterations
 * do not move. Checked afterwards: the last get's bytes, every atomic's old value (each one more
 * than the one before), and at the target the put's bytes or the word's final count. A mismatch is
 * said on stderr and the exit status is 3.
 */
#include "ibtest.h"
#include "verbs_perf.h"

#include "ibx.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ENG_TAG_KEY   ((ibx_tag_t)0x1b7e5711)
#define ENG_TAG_DONE  ((ibx_tag_t)0x1b7e5712)
#define ENG_TAG_VERD  ((ibx_tag_t)0x1b7e5713)
#define ENG_TAG_START ((ibx_tag_t)0x1b7e5714)

#define ENG_ALL_MAX    (4u << 20) /* -a sweeps 1, 2, 4 ... 4 MiB */
#define ENG_SIZE_LIMIT (1u << 30)
#define ENG_DEF_ITERS  1000
#define ENG_NAP_US     100 /* the target's sleep between two looks */

typedef enum { ENG_GET, ENG_PUT, ENG_FADD, ENG_CSWAP } eng_op_t;
static const char *const eng_op_names[] = {"get", "put", "fadd", "cswap"};

typedef struct eng_opts {
	eng_op_t op;
	bool map; /* -m map: the target maps a buffer of its own */
	bool all, json;
	size_t size;
	unsigned iters;
	long warmup; /* -1: iters / 10, at least 10 */
} eng_opts_t;

/* What rank 1 exposes, sent to rank 0 in one tagged message. */
typedef struct eng_card {
	uint64_t addr;
	uint64_t key_len;
	unsigned char key[IBX_RKEY_PACKED_MAX];
} eng_card_t;

/* Rank 0's account of a size, checked by rank 1. */
typedef struct eng_done {
	uint64_t size;
	uint64_t ops; /* operations done on the target (warm-up included) */
} eng_done_t;

typedef struct eng_job {
	ibx_ctx_t *ctx;
	const eng_opts_t *o;
	int rank;
	size_t cap;
	char *local;  /* rank 0: the get destination / put source */
	char *target; /* rank 1: the exposed memory */
	ibx_mem_t *mem;
	ibx_rkey_t *rk;
	uint64_t raddr;
} eng_job_t;

/* The byte at offset @i of what a get reads or a put writes, for size @size. */
static char pattern(size_t i, size_t size)
{
	return (char)(i * 31 + size * 7 + 1);
}

static unsigned warmup_of(const eng_opts_t *o)
{
	return o->warmup >= 0 ? (unsigned)o->warmup : ibtest_lat_warmup(o->iters);
}

static bool is_atomic(eng_op_t op)
{
	return op == ENG_FADD || op == ENG_CSWAP;
}

/* ---- options ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f, "usage: mpilite-run -n 2 ibtest eng_rma_lat [options]\n"
		   "  one one-sided operation of the engine API + ibx_flush, 2 ranks (rank 1 "
		   "asleep)\n\n"
		   "  -o, --op=OP             get (default), put, fadd (fetch-and-add 1), cswap\n"
		   "  -m, --mem=KIND          the target's memory: alloc (ibx_mem_alloc, default) "
		   "or map\n"
		   "                          (ibx_mem_map of a buffer of its own)\n"
		   "  -a, --all               get / put: sizes 1, 2, 4 ... 4194304 bytes\n"
		   "  -s, --size=SIZE         get / put: one size (k/m/g suffixes; default 8); "
		   "atomics: 8\n");
	fprintf(f, "  -n, --iters=ITERS       timed operations per size (default %d)\n",
		ENG_DEF_ITERS);
	fprintf(f, "      --warmup=ITERS      untimed operations per size (default: iters/10, "
		   "at least 10)\n"
		   "      --json              results as one JSON document on stdout (the table "
		   "goes to stderr)\n"
		   "  -h, --help              this text\n");
}

static int parse_op(const char *s, eng_op_t *op_p)
{
	for (unsigned i = 0; i < sizeof(eng_op_names) / sizeof(eng_op_names[0]); i++) {
		if (!strcmp(s, eng_op_names[i])) {
			*op_p = (eng_op_t)i;
			return 0;
		}
	}
	return -1;
}

/* Returns 0 to run, 1 after --help, 2 on a usage error. */
static int parse_opts(eng_opts_t *o, int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_WARMUP };
	static const struct option lopts[] = {
	    {"op", required_argument, NULL, 'o'},
	    {"mem", required_argument, NULL, 'm'},
	    {"all", no_argument, NULL, 'a'},
	    {"size", required_argument, NULL, 's'},
	    {"iters", required_argument, NULL, 'n'},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"warmup", required_argument, NULL, OPT_WARMUP},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	bool size_given = false;
	unsigned long v;
	int opt;

	o->size = 8;
	o->iters = ENG_DEF_ITERS;
	o->warmup = -1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:m:as:n:h", lopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			if (parse_op(optarg, &o->op)) {
				fprintf(stderr,
					"ibtest eng_rma_lat: bad operation '%s' (get, put, fadd, "
					"cswap)\n",
					optarg);
				return 2;
			}
			break;
		case 'm':
			if (strcmp(optarg, "alloc") && strcmp(optarg, "map")) {
				fprintf(stderr,
					"ibtest eng_rma_lat: bad memory '%s' (alloc, map)\n",
					optarg);
				return 2;
			}
			o->map = !strcmp(optarg, "map");
			break;
		case 'a': o->all = true; break;
		case 's':
			if (ibtest_parse_size(optarg, 1, ENG_SIZE_LIMIT, &o->size)) {
				fprintf(stderr, "ibtest eng_rma_lat: bad size '%s' (1 .. 1g)\n",
					optarg);
				return 2;
			}
			size_given = true;
			break;
		case 'n':
			if (ibtest_parse_count(optarg, 5, 100000000, &v)) {
				fprintf(stderr, "ibtest eng_rma_lat: bad iteration count '%s'\n",
					optarg);
				return 2;
			}
			o->iters = (unsigned)v;
			break;
		case OPT_JSON: o->json = true; break;
		case OPT_WARMUP:
			if (ibtest_parse_count(optarg, 0, 100000000, &v)) {
				fprintf(stderr, "ibtest eng_rma_lat: bad warm-up count '%s'\n",
					optarg);
				return 2;
			}
			o->warmup = (long)v;
			break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ibtest eng_rma_lat: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (is_atomic(o->op) && (o->all || (size_given && o->size != 8))) {
		fprintf(stderr, "ibtest eng_rma_lat: %s works on one 8-byte word (no -a, -s 8)\n",
			eng_op_names[o->op]);
		return 2;
	}
	return 0;
}

/* ---- the two ranks ------------------------------------------------------------------ */

static ibx_status_t send_wait(ibx_ctx_t *ctx, int peer, const void *buf, size_t len, ibx_tag_t tag)
{
	ibx_request_t rq = {0};
	ibx_status_t st = ibx_tag_send(ctx, peer, buf, len, tag, 0, &rq);

	return st == IBX_INPROGRESS ? ibx_wait(ctx, &rq) : st;
}

static ibx_status_t recv_wait(ibx_ctx_t *ctx, int peer, void *buf, size_t len, ibx_tag_t tag)
{
	ibx_request_t rq = {0};
	ibx_status_t st = ibx_tag_recv(ctx, peer, buf, len, tag, IBX_TAG_MASK_ALL, &rq);

	return st == IBX_INPROGRESS ? ibx_wait(ctx, &rq) : st;
}

/* Rank 1: expose the memory and send its card. */
static ibx_status_t expose(eng_job_t *j)
{
	eng_card_t card = {0};
	size_t len = sizeof(card.key);
	ibx_status_t st;

	if (j->o->map) {
		j->target = aligned_alloc(4096, (j->cap + 4095) / 4096 * 4096);
		if (!j->target)
			return IBX_ERR_NO_MEMORY;
		memset(j->target, 0, j->cap);
		st = ibx_mem_map(j->ctx, j->target, j->cap, &j->mem);
	} else {
		void *p;

		st = ibx_mem_alloc(j->ctx, j->cap, &p, &j->mem);
		j->target = p;
	}
	if (st == IBX_OK)
		st = ibx_rkey_pack(j->ctx, j->mem, card.key, &len);
	if (st != IBX_OK)
		return st;
	card.addr = (uint64_t)(uintptr_t)j->target;
	card.key_len = len;
	return send_wait(j->ctx, 0, &card, sizeof(card), ENG_TAG_KEY);
}

/* Rank 0: the target's card, unpacked. */
static ibx_status_t reach(eng_job_t *j)
{
	eng_card_t card;
	ibx_status_t st = recv_wait(j->ctx, 1, &card, sizeof(card), ENG_TAG_KEY);

	if (st != IBX_OK)
		return st;
	if (card.key_len > sizeof(card.key))
		return IBX_ERR_CORRUPT;
	j->raddr = card.addr;
	return ibx_rkey_unpack(j->ctx, 1, card.key, (size_t)card.key_len, &j->rk);
}

/* Rank 1, before a size: what the origin will read or change. */
static void target_fill(eng_job_t *j, size_t size)
{
	if (is_atomic(j->o->op))
		memset(j->target, 0, 8);
	else if (j->o->op == ENG_GET)
		for (size_t i = 0; i < size; i++)
			j->target[i] = pattern(i, size);
	else
		memset(j->target, 0, size);
}

/* Rank 1, after a size: 0 when its memory shows what rank 0 did. */
static int target_check(const eng_job_t *j, const eng_done_t *d)
{
	uint64_t word;

	switch (j->o->op) {
	case ENG_FADD:
	case ENG_CSWAP:
		memcpy(&word, j->target, 8);
		if (word != d->ops) {
			fprintf(stderr,
				"ibtest eng_rma_lat: the word at rank 1 is %llu after %llu %s\n",
				(unsigned long long)word, (unsigned long long)d->ops,
				eng_op_names[j->o->op]);
			return -1;
		}
		return 0;
	case ENG_PUT:
		for (size_t i = 0; i < d->size; i++) {
			if (j->target[i] != pattern(i, d->size)) {
				fprintf(stderr,
					"ibtest eng_rma_lat: put of %llu bytes: byte %zu wrong at "
					"rank 1\n",
					(unsigned long long)d->size, i);
				return -1;
			}
		}
		return 0;
	default: return 0;
	}
}

/* Rank 0: one operation and its flush; @k counts the operations of this
 * size so far (the atomics' expected old value). 1 when an atomic's old
 * value was not the expected one. */
static ibx_status_t one_op(eng_job_t *j, size_t size, uint64_t k, int *bad)
{
	uint64_t old = 0;
	ibx_status_t st;

	switch (j->o->op) {
	case ENG_GET: st = ibx_get(j->ctx, j->local, size, j->raddr, j->rk, NULL); break;
	case ENG_PUT: st = ibx_put(j->ctx, j->local, size, j->raddr, j->rk, NULL); break;
	case ENG_FADD:
		st = ibx_atomic(j->ctx, IBX_ATOMIC_FADD, 1, 0, &old, j->raddr, j->rk, NULL);
		break;
	default:
		st = ibx_atomic(j->ctx, IBX_ATOMIC_CSWAP, k + 1, k, &old, j->raddr, j->rk, NULL);
		break;
	}
	if (st != IBX_OK && st != IBX_INPROGRESS)
		return st;
	st = ibx_flush(j->ctx, 1);
	if (st == IBX_OK && is_atomic(j->o->op) && old != k)
		*bad = 1;
	return st;
}

/* Rank 0: warm-up and timed operations of one size, then the checks. */
static ibx_status_t origin_size(eng_job_t *j, size_t size, double *samples, int *bad)
{
	const eng_opts_t *o = j->o;
	unsigned warm = warmup_of(o);
	uint64_t k = 0, t0, t1;
	eng_done_t done = {.size = size};
	char verdict = 1;
	ibx_status_t st = IBX_OK;

	if (o->op == ENG_PUT)
		for (size_t i = 0; i < size; i++)
			j->local[i] = pattern(i, size);
	else
		memset(j->local, 0, size);
	for (unsigned i = 0; i < warm && st == IBX_OK; i++, k++)
		st = one_op(j, size, k, bad);
	t0 = ibtest_ticks();
	for (unsigned i = 0; i < o->iters && st == IBX_OK; i++, k++) {
		st = one_op(j, size, k, bad);
		t1 = ibtest_ticks();
		samples[i] = ibtest_ticks_to_ns(t1 - t0) / 1000.0;
		t0 = t1;
	}
	if (st != IBX_OK)
		return st;
	if (o->op == ENG_GET) {
		for (size_t i = 0; i < size; i++) {
			if (j->local[i] != pattern(i, size)) {
				fprintf(stderr,
					"ibtest eng_rma_lat: get of %zu bytes: byte %zu wrong\n",
					size, i);
				*bad = 1;
				break;
			}
		}
	} else if (is_atomic(o->op) && *bad) {
		fprintf(stderr, "ibtest eng_rma_lat: an %s returned a wrong old value\n",
			eng_op_names[o->op]);
	}
	done.ops = k; /* warm-up and timed */
	st = send_wait(j->ctx, 1, &done, sizeof(done), ENG_TAG_DONE);
	if (st == IBX_OK)
		st = recv_wait(j->ctx, 1, &verdict, 1, ENG_TAG_VERD);
	if (st == IBX_OK && verdict != 0)
		*bad = 1;
	return st;
}

/* Rank 1: asleep until rank 0 is done with a size, then check. */
static ibx_status_t target_size(eng_job_t *j, size_t size)
{
	ibx_request_t rq = {0};
	eng_done_t done;
	char verdict;
	ibx_status_t st;

	st = ibx_tag_recv(j->ctx, 0, &done, sizeof(done), ENG_TAG_DONE, IBX_TAG_MASK_ALL, &rq);
	if (st != IBX_OK && st != IBX_INPROGRESS)
		return st;
	/* rank 0 needs nothing of us until it is done */
	while (!__atomic_load_n(&rq.completed, __ATOMIC_ACQUIRE)) {
		usleep(ENG_NAP_US);
		ibx_progress(j->ctx);
	}
	if (rq.status != IBX_OK)
		return rq.status;
	if (done.size != size)
		return IBX_ERR_CORRUPT;
	verdict = target_check(j, &done) ? 1 : 0;
	return send_wait(j->ctx, 0, &verdict, 1, ENG_TAG_VERD);
}

/* Rank 1 fills its memory before rank 0 starts a size: a zero-byte
 * message says it is ready. */
static ibx_status_t size_start(eng_job_t *j, size_t size)
{
	char none;

	if (j->rank == 1) {
		target_fill(j, size);
		return send_wait(j->ctx, 0, &none, 0, ENG_TAG_START);
	}
	return recv_wait(j->ctx, 1, &none, 0, ENG_TAG_START);
}

static void banner(const eng_job_t *j, FILE *f)
{
	const eng_opts_t *o = j->o;

	fprintf(f, "---------------------------------------------------------------------------"
		   "------------\n");
	fprintf(f, "                    ibx engine one-sided %s + flush latency\n",
		eng_op_names[o->op]);
	fprintf(f, " Path            : %-16s Target memory  : %s\n", ibx_peer_path_name(j->ctx, 1),
		o->map ? "ibx_mem_map" : "ibx_mem_alloc");
	fprintf(f, " Iterations      : %-16u Warm-up        : %u\n", o->iters, warmup_of(o));
	fprintf(f, " Sizes           : %s\n", o->all ? "1 .. 4194304 (-a)" : "one (-s)");
}

static ibx_status_t run_sizes(eng_job_t *j, ibtest_report_t *rep, int *bad)
{
	const eng_opts_t *o = j->o;
	size_t first = o->all ? 1 : o->size, last = o->all ? ENG_ALL_MAX : o->size;
	double *samples = NULL;
	ibx_status_t st = IBX_OK;

	if (j->rank == 0) {
		samples = malloc(o->iters * sizeof(*samples));
		if (!samples)
			return IBX_ERR_NO_MEMORY;
		ibtest_clock_init();
	}
	for (size_t size = first; st == IBX_OK; size *= 2) {
		st = size_start(j, size);
		if (st == IBX_OK && j->rank == 0) {
			st = origin_size(j, size, samples, bad);
			if (st == IBX_OK)
				ibtest_report_lat(rep, size, o->iters, samples, o->iters);
		} else if (st == IBX_OK) {
			st = target_size(j, size);
		}
		if (size >= last)
			break;
	}
	free(samples);
	return st;
}

static int eng_rma_lat_main(int argc, char **argv)
{
	eng_opts_t o = {0};
	eng_job_t j = {.o = &o};
	ibtest_report_t rep = {0};
	ibx_status_t st;
	int rc, bad = 0;

	rc = parse_opts(&o, argc, argv);
	if (rc)
		return rc == 1 ? 0 : 2;
	st = ibx_init(NULL, &j.ctx);
	if (st != IBX_OK) {
		fprintf(stderr, "ibtest eng_rma_lat: ibx_init failed: %s\n", ibx_status_str(st));
		return 1;
	}
	j.rank = ibx_rank(j.ctx);
	if (ibx_size(j.ctx) != 2) {
		if (j.rank == 0)
			fprintf(stderr,
				"ibtest eng_rma_lat: needs exactly 2 ranks, got %d (run: "
				"mpilite-run -n 2 ibtest eng_rma_lat)\n",
				ibx_size(j.ctx));
		ibx_finalize(j.ctx);
		return 2;
	}
	j.cap = o.all ? ENG_ALL_MAX : is_atomic(o.op) ? 8 : o.size;
	if (j.rank == 0) {
		j.local = aligned_alloc(4096, (j.cap + 4095) / 4096 * 4096);
		if (!j.local) {
			ibx_abort(j.ctx, 1, "ibtest eng_rma_lat: out of memory");
			return 1;
		}
		memset(j.local, 0, j.cap);
		st = reach(&j);
	} else {
		st = expose(&j);
	}
	if (st != IBX_OK) {
		fprintf(stderr, "ibtest eng_rma_lat: rank %d: setting up the memory failed: %s\n",
			j.rank, ibx_status_str(st));
		ibx_abort(j.ctx, 1, "ibtest eng_rma_lat: set-up failed");
		return 1;
	}
	if (j.rank == 0) {
		ibtest_report_init(&rep, "eng_rma_lat", o.json, false);
		banner(&j, rep.out);
	}
	st = run_sizes(&j, &rep, &bad);
	if (st != IBX_OK) {
		fprintf(stderr, "ibtest eng_rma_lat: rank %d: %s failed: %s\n", j.rank,
			eng_op_names[o.op], ibx_status_str(st));
		ibx_abort(j.ctx, 1, "ibtest eng_rma_lat: benchmark failed");
		return 1;
	}
	if (j.rank == 0) {
		ibtest_report_end(&rep);
		ibx_rkey_destroy(j.ctx, j.rk);
	}
	st = ibx_boot_barrier(j.ctx); /* nobody unmaps what the other may still touch */
	if (st == IBX_OK && j.mem)
		st = ibx_mem_unmap(j.ctx, j.mem);
	if (o.map)
		free(j.target);
	free(j.local);
	if (ibx_finalize(j.ctx) != IBX_OK || st != IBX_OK)
		return 1;
	return bad ? 3 : 0;
}

IBTEST_COMMAND("eng_rma_lat",
	       "one-sided latency over the engine API: get / put / atomic + flush, 2 ranks "
	       "(rma_lat without MPI)",
	       eng_rma_lat_main)
