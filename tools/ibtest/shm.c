/*
 * shm.c — `ibtest shm_lat` and `ibtest shm_bw`: perftest-style latency and
 * bandwidth of the engine's tagged messages between two ranks, run as
 *
 *     mpilite-run -n 2 ibtest shm_lat [-a | -s SIZE] [-n ITERS] [--json]
 *     mpilite-run -n 2 ibtest shm_bw  [-a | -s SIZE] [-n MSGS] [-t WINDOW] [--report_gbits]
 *
 * The peer is reached through whatever path ibx chose (shm for a node-local
 * peer; IBX_PATHS=verbs forces the verbs path), and the banner names it.
 *
 * shm_lat — ping-pong; each receive is posted before the message that it
 * waits for can leave, so no message goes through the unexpected queue:
 *
 *     rank 0                          rank 1
 *     post recv                       post recv (before the first message)
 *     t[i]  send ------------------>  wait recv, post next recv
 *           wait send, wait recv <--  send, wait send
 *     t[i+1] ...                      sample[i] = (t[i+1] - t[i]) / 2
 *
 * shm_bw — streaming: rank 0 sends windows of W messages (-t) and waits for
 * a zero-byte ack after each window; rank 1 posts the next window's
 * receives before it acks, so sends always meet posted receives. All
 * receives land in one buffer, as in osu_bw. BW average counts every timed
 * byte over the whole run; BW peak is the best single window.
 *
 *     rank 0                           rank 1
 *     post ack recv                    (window of W recvs already posted)
 *     send x W ----------------------> wait all
 *     wait sends                       post next window's recvs
 *     wait ack <---------------------- send ack
 */
#include "ibtest.h"

#include "ibx.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define SHM_TAG_DATA ((ibx_tag_t)0x1b7e5701)
#define SHM_TAG_ACK  ((ibx_tag_t)0x1b7e5702)

#define SHM_ALL_MAX	  (4u << 20) /* -a sweeps 0, 1, 2, 4 ... 4 MiB */
#define SHM_SIZE_LIMIT	  (1u << 30) /* -s accepts up to 1 GiB */
#define SHM_LAT_DEF_SIZE  2	     /* perftest's defaults */
#define SHM_BW_DEF_SIZE	  65536
#define SHM_LAT_DEF_ITERS 1000
#define SHM_BW_DEF_MSGS	  5000
#define SHM_BW_MAX_BYTES  (2ull << 30) /* default message count moves at most this */
#define SHM_BW_DEF_WINDOW 64

typedef enum { SHM_LAT, SHM_BW } shm_kind_t;

typedef struct shm_opts {
	shm_kind_t kind;
	const char *name;
	bool all, json, gbits;
	size_t size;
	unsigned iters;	 /* 0: default per size */
	long warmup;	 /* -1: default per size */
	unsigned window; /* shm_bw */
} shm_opts_t;

typedef struct shm_job {
	ibx_ctx_t *ctx;
	const shm_opts_t *o;
	int rank, peer;
	char *sbuf, *rbuf;
	ibx_request_t *reqs; /* shm_bw: one per window slot */
	char ack[8];	     /* shm_bw: the zero-byte ack's buffer */
} shm_job_t;

static void usage(const shm_opts_t *o, FILE *f)
{
	bool bw = o->kind == SHM_BW;

	fprintf(f, "usage: mpilite-run -n 2 ibtest %s [options]\n", o->name);
	fprintf(f, "  %s between two ranks over the ibx engine (tagged send/recv)\n\n",
		bw ? "streaming bandwidth" : "ping-pong latency (half round trip)");
	fprintf(f, "  -a, --all               sizes 0, 1, 2, 4 ... %u bytes\n", SHM_ALL_MAX);
	fprintf(f, "  -s, --size=SIZE         one size (k/m/g suffixes; default %d)\n",
		bw ? SHM_BW_DEF_SIZE : SHM_LAT_DEF_SIZE);
	if (bw) {
		fprintf(f,
			"  -n, --iters=MSGS        messages per size (default %d, fewer for "
			"large sizes: at most %llu MiB moved)\n",
			SHM_BW_DEF_MSGS, SHM_BW_MAX_BYTES >> 20);
		fprintf(f,
			"  -t, --tx-depth=WINDOW   messages in flight before an ack (default %d)\n",
			SHM_BW_DEF_WINDOW);
		fprintf(f, "      --report_gbits      bandwidth in Gb/sec instead of MB/sec\n");
		fprintf(
		    f,
		    "      --warmup=MSGS       untimed messages per size (default: 2 windows)\n");
	} else {
		fprintf(f, "  -n, --iters=ITERS       round trips per size (default %d)\n",
			SHM_LAT_DEF_ITERS);
		fprintf(
		    f, "      --warmup=ITERS      untimed round trips per size (default: iters/10, "
		       "at least 10)\n");
	}
	fprintf(f, "      --json              results as one JSON document on stdout (the table "
		   "goes to stderr)\n");
	fprintf(f, "  -h, --help              this text\n");
}

/* Returns 0 to run, 1 after --help, 2 on a usage error. */
static int parse_opts(shm_opts_t *o, int argc, char **argv)
{
	enum { OPT_GBITS = 256, OPT_JSON, OPT_WARMUP };
	static const struct option lopts[] = {
	    {"all", no_argument, NULL, 'a'},
	    {"size", required_argument, NULL, 's'},
	    {"iters", required_argument, NULL, 'n'},
	    {"tx-depth", required_argument, NULL, 't'},
	    {"report_gbits", no_argument, NULL, OPT_GBITS},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"warmup", required_argument, NULL, OPT_WARMUP},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	bool bw = o->kind == SHM_BW;
	unsigned long v;
	int opt;

	o->size = bw ? SHM_BW_DEF_SIZE : SHM_LAT_DEF_SIZE;
	o->warmup = -1;
	o->window = SHM_BW_DEF_WINDOW;
	optind = 1;
	while ((opt = getopt_long(argc, argv, bw ? "as:n:t:h" : "as:n:h", lopts, NULL)) != -1) {
		switch (opt) {
		case 'a': o->all = true; break;
		case 's':
			if (ibtest_parse_size(optarg, 0, SHM_SIZE_LIMIT, &o->size)) {
				fprintf(stderr, "ibtest %s: bad size '%s' (at most 1g)\n", o->name,
					optarg);
				return 2;
			}
			break;
		case 'n':
			if (ibtest_parse_count(optarg, bw ? 1 : 5, 100000000, &v)) {
				fprintf(stderr, "ibtest %s: bad iteration count '%s'\n", o->name,
					optarg);
				return 2;
			}
			o->iters = (unsigned)v;
			break;
		case 't':
			if (ibtest_parse_count(optarg, 1, 16384, &v)) {
				fprintf(stderr, "ibtest %s: bad tx-depth '%s' (1..16384)\n",
					o->name, optarg);
				return 2;
			}
			o->window = (unsigned)v;
			break;
		case OPT_GBITS:
			if (!bw)
				goto bad;
			o->gbits = true;
			break;
		case OPT_JSON: o->json = true; break;
		case OPT_WARMUP:
			if (ibtest_parse_count(optarg, 0, 100000000, &v)) {
				fprintf(stderr, "ibtest %s: bad warm-up count '%s'\n", o->name,
					optarg);
				return 2;
			}
			o->warmup = (long)v;
			break;
		case 'h': usage(o, stdout); return 1;
		default: goto bad;
		}
	}
	if (optind == argc)
		return 0;
	fprintf(stderr, "ibtest %s: unexpected argument '%s'\n", o->name, argv[optind]);
bad:
	usage(o, stderr);
	return 2;
}

/* Both ranks derive the same per-size counts from the same options. */
static unsigned lat_iters(const shm_opts_t *o)
{
	return o->iters ? o->iters : SHM_LAT_DEF_ITERS;
}

static unsigned lat_warmup(const shm_opts_t *o)
{
	return o->warmup >= 0 ? (unsigned)o->warmup : ibtest_lat_warmup(lat_iters(o));
}

static unsigned bw_msgs(const shm_opts_t *o, size_t size)
{
	unsigned long long n = SHM_BW_DEF_MSGS;

	if (o->iters)
		return o->iters;
	if (size && n * size > SHM_BW_MAX_BYTES)
		n = SHM_BW_MAX_BYTES / size;
	if (n < 2ull * o->window)
		n = 2ull * o->window;
	return (unsigned)n;
}

static unsigned bw_warmup(const shm_opts_t *o)
{
	return o->warmup >= 0 ? (unsigned)o->warmup : 2 * o->window;
}

/* A started operation: IBX_OK (done at once) and IBX_INPROGRESS are fine. */
static ibx_status_t started(ibx_status_t st)
{
	return st == IBX_INPROGRESS ? IBX_OK : st;
}

static ibx_status_t post_recv(shm_job_t *j, void *buf, size_t len, ibx_tag_t tag,
			      ibx_request_t *req)
{
	memset(req, 0, sizeof(*req));
	return started(ibx_tag_recv(j->ctx, j->peer, buf, len, tag, IBX_TAG_MASK_ALL, req));
}

static ibx_status_t post_send(shm_job_t *j, const void *buf, size_t len, ibx_tag_t tag,
			      ibx_request_t *req)
{
	memset(req, 0, sizeof(*req));
	return started(ibx_tag_send(j->ctx, j->peer, buf, len, tag, 0, req));
}

/* Waits for a receive and checks that the whole expected message came. */
static ibx_status_t wait_recv(shm_job_t *j, ibx_request_t *req, size_t len)
{
	ibx_status_t st = ibx_wait(j->ctx, req);

	if (st == IBX_OK && req->length != len) {
		fprintf(stderr, "ibtest %s: rank %d: received %zu bytes, expected %zu\n",
			j->o->name, j->rank, req->length, len);
		return IBX_ERR_CORRUPT;
	}
	return st;
}

#define TRY(what, expr)                                                                            \
	do {                                                                                       \
		ibx_status_t st_ = (expr);                                                         \
		if (st_ != IBX_OK) {                                                               \
			fprintf(stderr, "ibtest %s: rank %d: %s failed: %s\n", j->o->name,         \
				j->rank, what, ibx_status_str(st_));                               \
			return st_;                                                                \
		}                                                                                  \
	} while (0)

/* ---- shm_lat ------------------------------------------------------------- */

static ibx_status_t lat_one_size(shm_job_t *j, size_t size, double *samples)
{
	unsigned iters = lat_iters(j->o), warmup = lat_warmup(j->o), total = iters + warmup;
	ibx_request_t sreq, rreq;
	uint64_t prev = 0;

	if (j->rank == 1)
		TRY("ibx_tag_recv", post_recv(j, j->rbuf, size, SHM_TAG_DATA, &rreq));
	/* rank 1's first receive is posted before rank 0 can send */
	TRY("ibx_boot_barrier", ibx_boot_barrier(j->ctx));

	for (unsigned i = 0; i < total; i++) {
		if (j->rank == 0) {
			if (i == warmup)
				prev = ibtest_now_ns();
			TRY("ibx_tag_recv", post_recv(j, j->rbuf, size, SHM_TAG_DATA, &rreq));
			TRY("ibx_tag_send", post_send(j, j->sbuf, size, SHM_TAG_DATA, &sreq));
			TRY("send", ibx_wait(j->ctx, &sreq));
			TRY("receive", wait_recv(j, &rreq, size));
			if (i >= warmup) {
				uint64_t t = ibtest_now_ns();

				samples[i - warmup] = (double)(t - prev) / 2000.0;
				prev = t;
			}
		} else {
			TRY("receive", wait_recv(j, &rreq, size));
			if (i + 1 < total)
				TRY("ibx_tag_recv",
				    post_recv(j, j->rbuf, size, SHM_TAG_DATA, &rreq));
			TRY("ibx_tag_send", post_send(j, j->sbuf, size, SHM_TAG_DATA, &sreq));
			TRY("send", ibx_wait(j->ctx, &sreq));
		}
	}
	return IBX_OK;
}

/* ---- shm_bw -------------------------------------------------------------- */

static ibx_status_t bw_post_window(shm_job_t *j, size_t size, unsigned cnt)
{
	for (unsigned w = 0; w < cnt; w++)
		TRY("ibx_tag_recv", post_recv(j, j->rbuf, size, SHM_TAG_DATA, &j->reqs[w]));
	return IBX_OK;
}

/* Messages in window @k of a run of @msgs messages. */
static unsigned bw_window_count(unsigned msgs, unsigned window, unsigned k)
{
	unsigned left = msgs - k * window;

	return left < window ? left : window;
}

static ibx_status_t bw_phase(shm_job_t *j, size_t size, unsigned msgs, double *peak_Bps,
			     double *elapsed_s)
{
	unsigned window = j->o->window, nwin = (msgs + window - 1) / window;
	ibx_request_t ack;
	uint64_t start, t0;

	*peak_Bps = 0.0;
	if (j->rank == 1 && nwin)
		TRY("post", bw_post_window(j, size, bw_window_count(msgs, window, 0)));
	TRY("ibx_boot_barrier", ibx_boot_barrier(j->ctx));

	start = t0 = ibtest_now_ns();
	for (unsigned k = 0; k < nwin; k++) {
		unsigned cnt = bw_window_count(msgs, window, k);

		if (j->rank == 0) {
			TRY("ibx_tag_recv", post_recv(j, j->ack, 0, SHM_TAG_ACK, &ack));
			for (unsigned w = 0; w < cnt; w++)
				TRY("ibx_tag_send",
				    post_send(j, j->sbuf, size, SHM_TAG_DATA, &j->reqs[w]));
			for (unsigned w = 0; w < cnt; w++)
				TRY("send", ibx_wait(j->ctx, &j->reqs[w]));
			TRY("ack", wait_recv(j, &ack, 0));

			uint64_t t = ibtest_now_ns();
			double bps = (double)size * cnt / ((double)(t - t0) * 1e-9);
			if (bps > *peak_Bps)
				*peak_Bps = bps;
			t0 = t;
		} else {
			for (unsigned w = 0; w < cnt; w++)
				TRY("receive", wait_recv(j, &j->reqs[w], size));
			if (k + 1 < nwin)
				TRY("post",
				    bw_post_window(j, size, bw_window_count(msgs, window, k + 1)));
			TRY("ibx_tag_send", post_send(j, j->ack, 0, SHM_TAG_ACK, &ack));
			TRY("ack send", ibx_wait(j->ctx, &ack));
		}
	}
	*elapsed_s = (double)(ibtest_now_ns() - start) * 1e-9;
	return IBX_OK;
}

/* ---- driver -------------------------------------------------------------- */

static void banner(const shm_job_t *j, FILE *f)
{
	const shm_opts_t *o = j->o;

	fprintf(f, "---------------------------------------------------------------------------"
		   "------------\n");
	fprintf(f, "                    ibx %s\n",
		o->kind == SHM_LAT ? "Tagged Send Latency Test" : "Tagged Send BW Test");
	fprintf(f, " Path            : %-16s Ranks          : %d\n",
		ibx_peer_path_name(j->ctx, j->peer), ibx_size(j->ctx));
	if (o->kind == SHM_LAT)
		fprintf(f, " Iterations      : %-16u Warm-up        : %u\n", lat_iters(o),
			lat_warmup(o));
	else
		fprintf(f, " TX depth        : %-16u Warm-up msgs   : %u\n", o->window,
			bw_warmup(o));
	fprintf(f, " Sizes           : %s\n", o->all ? "0 .. 4194304 (-a)" : "one (-s)");
}

static ibx_status_t run_sizes(shm_job_t *j, ibtest_report_t *rep)
{
	const shm_opts_t *o = j->o;
	size_t first = o->all ? 0 : o->size, last = o->all ? SHM_ALL_MAX : o->size;
	double *samples = NULL;

	if (o->kind == SHM_LAT) {
		samples = malloc(lat_iters(o) * sizeof(*samples));
		if (!samples)
			return IBX_ERR_NO_MEMORY;
	}
	for (size_t size = first;; size = size ? size * 2 : 1) {
		ibx_status_t st;

		if (o->kind == SHM_LAT) {
			st = lat_one_size(j, size, samples);
			if (st == IBX_OK && j->rank == 0)
				ibtest_report_lat(rep, size, lat_iters(o), samples, lat_iters(o));
		} else {
			unsigned msgs = bw_msgs(o, size);
			double peak, secs;

			st = bw_phase(j, size, bw_warmup(o), &peak, &secs);
			if (st == IBX_OK)
				st = bw_phase(j, size, msgs, &peak, &secs);
			if (st == IBX_OK && j->rank == 0) {
				double avg = (double)size * msgs / secs;

				ibtest_report_bw(rep, size, msgs, peak / 1048576.0, avg / 1048576.0,
						 msgs / secs / 1e6);
			}
		}
		if (st != IBX_OK) {
			free(samples);
			return st;
		}
		if (size >= last)
			break;
	}
	free(samples);
	return IBX_OK;
}

static int shm_main(shm_kind_t kind, const char *name, int argc, char **argv)
{
	shm_opts_t o = {.kind = kind, .name = name};
	shm_job_t j = {.o = &o};
	ibtest_report_t rep = {0};
	ibx_status_t st;
	size_t cap;
	int rc;

	rc = parse_opts(&o, argc, argv);
	if (rc)
		return rc == 1 ? 0 : 2;

	st = ibx_init(NULL, &j.ctx);
	if (st != IBX_OK) {
		fprintf(stderr, "ibtest %s: ibx_init failed: %s\n", name, ibx_status_str(st));
		return 1;
	}
	j.rank = ibx_rank(j.ctx);
	if (ibx_size(j.ctx) != 2) {
		if (j.rank == 0)
			fprintf(stderr,
				"ibtest %s: needs exactly 2 ranks, got %d "
				"(run: mpilite-run -n 2 ibtest %s)\n",
				name, ibx_size(j.ctx), name);
		ibx_finalize(j.ctx);
		return 2;
	}
	j.peer = 1 - j.rank;

	cap = o.all ? SHM_ALL_MAX : o.size;
	j.sbuf = aligned_alloc(4096, (cap + 4095) / 4096 * 4096 + 4096);
	j.rbuf = aligned_alloc(4096, (cap + 4095) / 4096 * 4096 + 4096);
	j.reqs = calloc(o.window, sizeof(*j.reqs));
	if (!j.sbuf || !j.rbuf || !j.reqs) {
		fprintf(stderr, "ibtest %s: rank %d: out of memory\n", name, j.rank);
		ibx_abort(j.ctx, 1, "ibtest: out of memory");
		return 1;
	}
	/* touch every page now: first-touch faults are not what we measure */
	memset(j.sbuf, 'a' + j.rank, cap + 1);
	memset(j.rbuf, 0, cap + 1);

	if (j.rank == 0) {
		ibtest_report_init(&rep, name, o.json, o.gbits);
		banner(&j, rep.out);
	}
	st = run_sizes(&j, &rep);
	if (st != IBX_OK) {
		ibx_abort(j.ctx, 1, "ibtest: benchmark failed");
		return 1;
	}
	if (j.rank == 0)
		ibtest_report_end(&rep);

	free(j.reqs);
	free(j.rbuf);
	free(j.sbuf);
	st = ibx_finalize(j.ctx);
	if (st != IBX_OK) {
		fprintf(stderr, "ibtest %s: ibx_finalize failed: %s\n", name, ibx_status_str(st));
		return 1;
	}
	return 0;
}

static int shm_lat_main(int argc, char **argv)
{
	return shm_main(SHM_LAT, "shm_lat", argc, argv);
}

static int shm_bw_main(int argc, char **argv)
{
	return shm_main(SHM_BW, "shm_bw", argc, argv);
}

IBTEST_COMMAND("shm_lat", "ping-pong latency between 2 ranks over the engine (perftest table)",
	       shm_lat_main)
IBTEST_COMMAND("shm_bw", "streaming bandwidth between 2 ranks over the engine (perftest table)",
	       shm_bw_main)
