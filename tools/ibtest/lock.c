/*
 * lock.c — `ibtest lock`: the cost of the engine's distributed mutex
 * (ibx_mutex_*, core/rma/mutex.c) per algorithm, measured as Ross, Latham,
 * Gropp, Thakur and Toonen (2005) §3 measure theirs. An engine program (no
 * MPI), run as
 *
 *     mpilite-run -n N ibtest lock [-a ALGOS] [-w WORKS] [-p COUNTS]
 *                                  [-i ITERS] [-u ITERS] [--json] [--svg FILE]
 *
 * Uncontended (the paper's first benchmark): mutex 0 lives at rank 0, rank
 * 1 (rank 0 itself when N = 1) locks and unlocks it in a tight loop, in
 * batches of u/20 iterations; the figure is the median batch mean (t_typical)
 * and the fastest batch (t_min), per lock+unlock pair.
 *
 *   rank 0 (home)      rank 1
 *   idle in the        t0; u x { lock(0); unlock(0) }; t1
 *   bootstrap fence
 *
 * Contended (Table 1 and Fig. 8): for each n of COUNTS, ranks 0 .. n-1
 * make a mutex among themselves (the others wait in the bootstrap fence,
 * off the CPU) and each runs ITERS x { lock; work; unlock } on mutex 0;
 * work is a busy wait of the given length (0, 1 ms, 10 ms by default; the
 * paper's nanosleep could not go below 10 ms). Holders are serialised, so
 *
 *   elapsed   = from the first member's start to the last one's end
 *               (CLOCK_MONOTONIC: the members share one node's clock)
 *   cycle     = elapsed / (n x ITERS)          time per hand-off
 *   overhead  = cycle - work                   (the work really done, as
 *                                               measured around each wait)
 *   percent   = 100 x overhead / cycle         (the paper's "percent overhead")
 *
 * --svg FILE plots overhead against n, one line per (algorithm, work).
 */
#include "ibtest.h"

#include <ibx.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ALGOS 3
#define MAX_WORKS 8
#define TAG_RES	  0x10c0000000ull /* results to rank 0 */
#define TAG_MUTEX 0x10d0000000ull /* the mutexes' own tags */

static const char *const algo_names[] = {"mcs", "onesided", "hybrid"};
static const ibx_mutex_algo_t algo_ids[] = {IBX_MUTEX_ALGO_MCS, IBX_MUTEX_ALGO_ONESIDED,
					    IBX_MUTEX_ALGO_HYBRID};

typedef struct lock_opts {
	unsigned algos;		 /* bit a: algo_names[a] */
	double works[MAX_WORKS]; /* seconds */
	int nworks;
	unsigned long procs; /* bit n: run with n processes */
	int iters;	     /* contended cycles per process (0: from the work) */
	int uiters;	     /* uncontended lock+unlock pairs */
	bool json;
	const char *svg;
} lock_opts_t;

typedef struct lock_point {
	int algo, work, n;
	double overhead_us;
} lock_point_t;

static ibx_ctx_t *ctx;
static int rank, size;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int fail(const char *what, ibx_status_t s)
{
	fprintf(stderr, "ibtest lock [rank %d]: %s: %s\n", rank, what, ibx_status_str(s));
	ibx_abort(ctx, 2, "ibtest lock failed");
	return 2;
}

static ibx_status_t msg(bool send, int peer, void *buf, size_t len)
{
	ibx_request_t rq = {.cb = NULL};
	ibx_status_t s = send ? ibx_tag_send(ctx, peer, buf, len, TAG_RES, 0, &rq)
			      : ibx_tag_recv(ctx, peer, buf, len, TAG_RES, IBX_TAG_MASK_ALL, &rq);

	return s == IBX_INPROGRESS ? ibx_wait(ctx, &rq) : s;
}

/* Busy work of @sec seconds; returns the time it really took. */
static double work(double sec)
{
	double t0 = now(), t;

	if (sec <= 0)
		return 0;
	while ((t = now()) - t0 < sec)
		;
	return t - t0;
}

/* ---- uncontended ------------------------------------------------------------------------ */

static int uncontended(const lock_opts_t *o, int a, ibtest_report_t *rep)
{
	int locker = size > 1 ? 1 : 0, group[2] = {0, 1}, nb = 20;
	int per = o->uiters / nb > 0 ? o->uiters / nb : 1;
	ibx_mutex_params_t p = {.algo = algo_ids[a]};
	double batch[20], res[2] = {0, 0};
	ibx_mutex_t *m;
	ibx_status_t s;

	if (rank > locker)
		return ibx_boot_barrier(ctx) == IBX_OK ? 0 : fail("fence", IBX_ERR_BOOTSTRAP);
	s = ibx_mutex_create(ctx, group, locker + 1, 1, TAG_MUTEX, &p, &m);
	if (s != IBX_OK)
		return fail("ibx_mutex_create", s);
	if (rank == locker) {
		for (int i = 0; i < 100; i++) /* warm-up */
			if ((s = ibx_mutex_lock(m, 0)) != IBX_OK ||
			    (s = ibx_mutex_unlock(m, 0)) != IBX_OK)
				return fail("warm-up", s);
		for (int b = 0; b < nb; b++) {
			double t0 = now();

			for (int i = 0; i < per; i++) {
				s = ibx_mutex_lock(m, 0);
				if (s == IBX_OK)
					s = ibx_mutex_unlock(m, 0);
				if (s != IBX_OK)
					return fail("lock/unlock", s);
			}
			batch[b] = (now() - t0) / per * 1e6;
		}
		qsort(batch, (size_t)nb, sizeof(double), cmp_double);
		res[0] = batch[nb / 2];
		res[1] = batch[0];
	}
	s = ibx_mutex_free(m);
	if (s != IBX_OK)
		return fail("ibx_mutex_free", s);
	if (locker != 0 &&
	    (s = msg(rank == locker, rank == locker ? 0 : locker, res, sizeof(res))) != IBX_OK)
		return fail("result", s);
	if (rank == 0) {
		fprintf(rep->out, " %-10s %8d %16.3f %14.3f\n", algo_names[a], per * nb, res[0],
			res[1]);
		ibtest_report_json_row(rep,
				       "\"type\": \"uncontended\", \"algo\": \"%s\", \"iters\": "
				       "%d, \"t_typical_us\": %.4f, \"t_min_us\": %.4f",
				       algo_names[a], per * nb, res[0], res[1]);
	}
	return ibx_boot_barrier(ctx) == IBX_OK ? 0 : fail("fence", IBX_ERR_BOOTSTRAP);
}

/* ---- contended ----------------------------------------------------------------------------- */

static int contended(const lock_opts_t *o, int a, int w, int n, ibtest_report_t *rep,
		     lock_point_t *pt)
{
	double sec = o->works[w], res[3], elapsed, worked, cycle, over, t_start, t_end;
	int iters = o->iters ? o->iters : sec > 0 ? (int)(0.05 / sec) : 20000;
	ibx_mutex_params_t p = {.algo = algo_ids[a]};
	int *group = malloc((size_t)n * sizeof(int));
	ibx_mutex_t *m;
	ibx_status_t s;

	if (iters < 5)
		iters = 5;
	for (int r = 0; r < n; r++)
		group[r] = r;
	if (rank < n) {
		double t0, did = 0;

		s = ibx_mutex_create(ctx, group, n, 1, TAG_MUTEX, &p, &m);
		if (s != IBX_OK)
			return fail("ibx_mutex_create", s);
		t0 = now();
		for (int i = 0; i < iters; i++) {
			if ((s = ibx_mutex_lock(m, 0)) != IBX_OK)
				return fail("lock", s);
			did += work(sec);
			if ((s = ibx_mutex_unlock(m, 0)) != IBX_OK)
				return fail("unlock", s);
		}
		res[0] = t0;
		res[1] = now();
		res[2] = did;
		s = ibx_mutex_free(m);
		if (s != IBX_OK)
			return fail("ibx_mutex_free", s);
		if (rank > 0 && (s = msg(true, 0, res, sizeof(res))) != IBX_OK)
			return fail("result", s);
	}
	free(group);
	if (rank == 0) {
		t_start = res[0];
		t_end = res[1];
		worked = res[2];
		for (int r = 1; r < n; r++) {
			double o3[3];

			if ((s = msg(false, r, o3, sizeof(o3))) != IBX_OK)
				return fail("result", s);
			t_start = o3[0] < t_start ? o3[0] : t_start;
			t_end = o3[1] > t_end ? o3[1] : t_end;
			worked += o3[2];
		}
		elapsed = t_end - t_start;
		cycle = elapsed / (n * iters) * 1e6;
		over = cycle - worked / (n * iters) * 1e6;
		fprintf(rep->out, " %-10s %3d %10.3f %7d %14.3f %16.3f %12.2f\n", algo_names[a], n,
			sec * 1e3, iters, cycle, over, cycle > 0 ? 100 * over / cycle : 0);
		ibtest_report_json_row(rep,
				       "\"type\": \"contended\", \"algo\": \"%s\", \"n\": %d, "
				       "\"work_ms\": %.6g, \"iters\": %d, \"cycle_us\": %.4f, "
				       "\"overhead_us\": %.4f, \"overhead_pct\": %.4f, "
				       "\"total_overhead_ms\": %.4f",
				       algo_names[a], n, sec * 1e3, iters, cycle, over,
				       cycle > 0 ? 100 * over / cycle : 0.0,
				       over * n * iters / 1e3);
		*pt = (lock_point_t){a, w, n, over};
	}
	return ibx_boot_barrier(ctx) == IBX_OK ? 0 : fail("fence", IBX_ERR_BOOTSTRAP);
}

/* ---- the plot ------------------------------------------------------------------------------- */

/*
 * Overhead per hand-off against n, one line per (algorithm, work): colour
 * by algorithm, dash pattern and marker by work, a legend that shows both.
 * The overheads span five decades (tens of ns without work, up to ms when
 * 8 ranks share 2 cores with 10 ms of work), so the y axis is logarithmic,
 * from the decade below the smallest positive point to the one above the
 * largest; a point at or below 0 (the work took longer than measured
 * around it) sits on the bottom edge as a hollow marker. The x axis has a
 * tick at every n measured.
 */
#define SVG_W 720.0
#define SVG_H 440.0
#define SVG_L 80.0
#define SVG_R 200.0
#define SVG_T 40.0
#define SVG_B 56.0

static double svg_x(int n, int nmin, int nmax)
{
	return SVG_L +
	       (nmax > nmin ? (double)(n - nmin) / (nmax - nmin) : 0.5) * (SVG_W - SVG_L - SVG_R);
}

static double svg_y(double v, double lo, double hi)
{
	double f = v > 0 ? (log10(v) - lo) / (hi - lo) : 0;

	f = f < 0 ? 0 : f > 1 ? 1 : f;
	return SVG_H - SVG_B - f * (SVG_H - SVG_B - SVG_T);
}

static void svg_marker(FILE *f, int w, double x, double y, const char *colour, bool hollow)
{
	const char *fill = hollow ? "white" : colour;

	switch (w % 3) {
	case 0:
		fprintf(f,
			"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" stroke=\"%s\"/>\n",
			x, y, fill, colour);
		break;
	case 1:
		fprintf(f,
			"<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"%s\" "
			"stroke=\"%s\"/>\n",
			x - 3.5, y - 3.5, fill, colour);
		break;
	default:
		fprintf(
		    f,
		    "<path d=\"M%.1f %.1f L%.1f %.1f L%.1f %.1f Z\" fill=\"%s\" stroke=\"%s\"/>\n",
		    x, y - 4.5, x + 4.5, y + 3.5, x - 4.5, y + 3.5, fill, colour);
		break;
	}
}

static void svg_write(const char *file, const lock_opts_t *o, const lock_point_t *pt, int npt)
{
	static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c"};
	static const char *const dashes[] = {"none", "7,4", "2,3", "9,3,2,3"};
	double vmin = 0, vmax = 0, lo, hi;
	int nmin = 1 << 30, nmax = 0, line = 0;
	unsigned long ns = 0;
	FILE *f = fopen(file, "w");

	if (!f) {
		perror(file);
		return;
	}
	for (int i = 0; i < npt; i++) {
		double v = pt[i].overhead_us;

		if (v > 0 && (vmin == 0 || v < vmin))
			vmin = v;
		vmax = v > vmax ? v : vmax;
		nmin = pt[i].n < nmin ? pt[i].n : nmin;
		nmax = pt[i].n > nmax ? pt[i].n : nmax;
		ns |= 1ul << pt[i].n;
	}
	if (npt == 0 || vmax <= 0) {
		vmin = vmax = 1;
		nmin = nmax = 1;
		ns = 2;
	}
	lo = floor(log10(vmin));
	hi = ceil(log10(vmax));
	if (hi <= lo)
		hi = lo + 1;
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" "
		"height=\"100%%\" fill=\"white\"/>\n<text x=\"%.0f\" y=\"22\" font-size=\"14\">"
		"ibtest lock: overhead per hand-off against processes</text>\n",
		SVG_W, SVG_H, SVG_L);
	/* decades: grid line and label; the axes */
	for (double d = lo; d <= hi + 1e-9; d++) {
		double y = svg_y(pow(10, d), lo, hi);

		fprintf(f,
			"<path d=\"M%.0f %.1f H%.0f\" stroke=\"#dddddd\"/>\n"
			"<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			SVG_L, y, SVG_W - SVG_R, SVG_L - 6, y + 4, pow(10, d));
	}
	for (int n = nmin; n <= nmax; n++) {
		if (!((ns >> n) & 1))
			continue;
		fprintf(f,
			"<path d=\"M%.1f %.0f v5\" stroke=\"black\"/>\n<text x=\"%.1f\" y=\"%.0f\" "
			"text-anchor=\"middle\">%d</text>\n",
			svg_x(n, nmin, nmax), SVG_H - SVG_B, svg_x(n, nmin, nmax),
			SVG_H - SVG_B + 18, n);
	}
	fprintf(f, "<path d=\"M%.0f %.0f V%.0f H%.0f\" stroke=\"black\" fill=\"none\"/>\n", SVG_L,
		SVG_T, SVG_H - SVG_B, SVG_W - SVG_R);
	fprintf(f,
		"<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">processes n</text>\n"
		"<text transform=\"translate(18 %.0f) rotate(-90)\" text-anchor=\"middle\">"
		"overhead per hand-off (us, log scale)</text>\n",
		(SVG_L + SVG_W - SVG_R) / 2, SVG_H - 16, (SVG_T + SVG_H - SVG_B) / 2);
	for (int a = 0; a < MAX_ALGOS; a++) {
		if (!(o->algos & (1u << a)))
			continue;
		for (int w = 0; w < o->nworks; w++) {
			const char *c = colours[a], *dash = dashes[w % 4];
			double ly = SVG_T + 18.0 * line++, lx = SVG_W - SVG_R + 16;
			bool first = true;

			fprintf(f,
				"<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
				"stroke-dasharray=\"%s\" d=\"",
				c, dash);
			for (int i = 0; i < npt; i++) {
				if (pt[i].algo != a || pt[i].work != w)
					continue;
				fprintf(f, "%s%.1f %.1f ", first ? "M" : "L",
					svg_x(pt[i].n, nmin, nmax),
					svg_y(pt[i].overhead_us, lo, hi));
				first = false;
			}
			fputs("\"/>\n", f);
			for (int i = 0; i < npt; i++)
				if (pt[i].algo == a && pt[i].work == w)
					svg_marker(f, w, svg_x(pt[i].n, nmin, nmax),
						   svg_y(pt[i].overhead_us, lo, hi), c,
						   pt[i].overhead_us <= 0);
			/* legend: a line sample with its marker, then the label */
			fprintf(f,
				"<path d=\"M%.0f %.1f h28\" stroke=\"%s\" stroke-width=\"1.5\" "
				"stroke-dasharray=\"%s\"/>\n",
				lx, ly, c, dash);
			svg_marker(f, w, lx + 14, ly, c, false);
			fprintf(f, "<text x=\"%.0f\" y=\"%.1f\">%s, work %g ms</text>\n", lx + 36,
				ly + 4, algo_names[a], o->works[w] * 1e3);
		}
	}
	fputs("</svg>\n", f);
	fclose(f);
}

/* ---- options ------------------------------------------------------------------------------- */

static int parse_opts(int argc, char **argv, lock_opts_t *o)
{
	static const struct option lopts[] = {{"algo", required_argument, NULL, 'a'},
					      {"work", required_argument, NULL, 'w'},
					      {"procs", required_argument, NULL, 'p'},
					      {"iters", required_argument, NULL, 'i'},
					      {"uiters", required_argument, NULL, 'u'},
					      {"json", no_argument, NULL, 'j'},
					      {"svg", required_argument, NULL, 's'},
					      {"help", no_argument, NULL, 'h'},
					      {NULL, 0, NULL, 0}};
	char *tok, *save, *end;
	int opt;

	*o = (lock_opts_t){.algos = 7, .works = {0, 1e-3, 10e-3}, .nworks = 3, .uiters = 20000};
	o->procs = ~0ul;
	while ((opt = getopt_long(argc, argv, "a:w:p:i:u:h", lopts, NULL)) != -1) {
		switch (opt) {
		case 'a':
			o->algos = 0;
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				int a = 0;

				while (a < MAX_ALGOS && strcmp(tok, algo_names[a]))
					a++;
				if (a == MAX_ALGOS)
					goto usage;
				o->algos |= 1u << a;
			}
			break;
		case 'w':
			o->nworks = 0;
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				double v = strtod(tok, &end);

				if (end == tok || v < 0 || o->nworks == MAX_WORKS)
					goto usage;
				if (!strcmp(end, "ms"))
					v *= 1e-3;
				else if (!strcmp(end, "us"))
					v *= 1e-6;
				else if (strcmp(end, "s") && *end)
					goto usage;
				o->works[o->nworks++] = v;
			}
			break;
		case 'p':
			o->procs = 0;
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				long v = strtol(tok, &end, 10);

				if (*end || v < 1 || v > 63)
					goto usage;
				o->procs |= 1ul << v;
			}
			break;
		case 'i': o->iters = atoi(optarg); break;
		case 'u': o->uiters = atoi(optarg); break;
		case 'j': o->json = true; break;
		case 's': o->svg = optarg; break;
		default: goto usage;
		}
	}
	if (o->uiters < 20 || o->iters < 0)
		goto usage;
	return 0;
usage:
	fprintf(opt == 'h' ? stdout : stderr,
		"usage: mpilite-run -n N ibtest lock [-a mcs,onesided,hybrid] [-w 0,1ms,10ms]\n"
		"         [-p 1,2,4,8] [-i ITERS] [-u ITERS] [--json] [--svg FILE]\n"
		"  uncontended lock+unlock latency (home rank 0, locker rank 1) and the\n"
		"  overhead per hand-off with n = 1..N processes contending (-p: which n)\n"
		"  and WORK inside the critical section, per algorithm (Ross et al. 2005)\n"
		"  -i  cycles per process (default: 20000 without work, else 50 ms of work)\n"
		"  -u  uncontended lock+unlock pairs (default 20000)\n");
	return opt == 'h' ? 1 : -1;
}

static int lock_main(int argc, char **argv)
{
	lock_point_t pts[MAX_ALGOS * MAX_WORKS * 64];
	int npt = 0, rc = 0;
	ibtest_report_t rep;
	lock_opts_t o;
	ibx_status_t s;

	rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc > 0 ? 0 : 1;
	if ((s = ibx_init(NULL, &ctx)) != IBX_OK) {
		fprintf(stderr, "ibtest lock: ibx_init: %s\n", ibx_status_str(s));
		return 2;
	}
	rank = ibx_rank(ctx);
	size = ibx_size(ctx);
	ibtest_report_init(&rep, "lock", o.json, false);
	if (rank == 0)
		fprintf(rep.out,
			"# uncontended lock+unlock (home rank 0, locker rank %d, path %s)\n"
			" algo        #iters  t_typical[usec]    t_min[usec]\n",
			size > 1 ? 1 : 0, ibx_peer_path_name(ctx, size > 1 ? 1 : 0));
	for (int a = 0; a < MAX_ALGOS && !rc; a++)
		if (o.algos & (1u << a))
			rc = uncontended(&o, a, &rep);
	if (rank == 0)
		fprintf(rep.out, "# contended: n processes, lock; work; unlock\n"
				 " algo         n   work[ms]   iters    cycle[usec]   "
				 "overhead[usec]  overhead[%%]\n");
	for (int a = 0; a < MAX_ALGOS && !rc; a++)
		for (int w = 0; w < o.nworks && !rc; w++)
			for (int n = 1; n <= size && !rc; n++)
				if ((o.procs >> n) & 1 && (o.algos & (1u << a)))
					rc = contended(&o, a, w, n, &rep, &pts[npt++]);
	if (rank == 0) {
		ibtest_report_end(&rep);
		if (o.svg)
			svg_write(o.svg, &o, pts, npt);
	}
	ibx_finalize(ctx);
	return rc;
}

IBTEST_COMMAND("lock",
	       "distributed mutex: uncontended latency, contended overhead (Ross et al. 2005)",
	       lock_main);
