/*
 * report.c — perftest-compatible result tables for ibtest commands.
 *
 * The header lines, the dashed separators and the column order are the ones
 * perftest (linux-rdma/perftest) prints, so a script written against
 * ib_send_lat / ib_write_bw output parses ibtest output too:
 *
 *   ---------------------------------------------------------------------------------------
 *    #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec] ...
 *    8       1000          0.21           3.40         0.23    ...
 *   ---------------------------------------------------------------------------------------
 *
 * Units follow perftest: latency in microseconds, bandwidth in MB/sec with
 * 1 MB = 2^20 bytes, or Gb/sec (10^9 bits) with --report_gbits, message rate
 * in millions of messages per second.
 *
 * Statistics (latency): t_typical is the median, as perftest's; t_avg and
 * t_stdev (population) are over all samples; the percentiles are
 * nearest-rank. perftest additionally drops its two slowest samples before
 * computing them; ibtest keeps every sample, so t_max is the true maximum.
 *
 * With json set, the table goes to stderr (still visible to a human) and
 * stdout carries one JSON document, written by ibtest_report_end():
 *
 *   {"test": "shm_lat", "results": [{"type": "lat", "bytes": 8, ...}, ...]}
 *
 * Commands with tables of their own (the osu-style rma_lat, rma_bw,
 * exchange) print them to r->out and add rows of their own shape to the
 * same document with ibtest_report_json_row().
 */
#include "ibtest.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define RESULT_LINE                                                                                \
	"---------------------------------------------------------------------------------------"  \
	"\n"

#define LAT_HEADER                                                                                 \
	" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "    \
	"t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"

#define BW_HEADER_MB                                                                               \
	" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
#define BW_HEADER_GB                                                                               \
	" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"

/* perftest's MB is 2^20 bytes; its Gb is 10^9 bits (125000000 bytes). */
#define MB_BYTES 1048576.0
#define GB_BYTES 125000000.0

enum { KIND_LAT, KIND_BW };

void ibtest_report_init(ibtest_report_t *r, const char *test, bool json, bool report_gbits)
{
	memset(r, 0, sizeof(*r));
	r->test = test ? test : "ibtest";
	r->json = json;
	r->report_gbits = report_gbits;
	r->out = json ? stderr : stdout;
}

/* ---- JSON collection ----------------------------------------------------- */

static void json_append(ibtest_report_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void json_append(ibtest_report_t *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!r->json)
		return;
	for (;;) {
		size_t room = r->json_cap - r->json_len;

		va_start(ap, fmt);
		n = vsnprintf(r->json_buf ? r->json_buf + r->json_len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < room) {
			r->json_len += (size_t)n;
			return;
		}
		size_t cap = r->json_cap ? r->json_cap * 2 : 1024;
		while (cap - r->json_len <= (size_t)n)
			cap *= 2;
		char *p = realloc(r->json_buf, cap);
		if (!p) {
			fprintf(stderr, "ibtest: out of memory collecting JSON results\n");
			r->json = false;
			return;
		}
		r->json_buf = p;
		r->json_cap = cap;
	}
}

/* A JSON number, or null for what JSON cannot represent. */
static void json_num(ibtest_report_t *r, const char *key, double v)
{
	if (isfinite(v))
		json_append(r, ", \"%s\": %.9g", key, v);
	else
		json_append(r, ", \"%s\": null", key);
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_row_begin(ibtest_report_t *r, const char *type, size_t bytes, unsigned iters)
{
	json_append(r, "%s\n    {\"type\": \"%s\", \"bytes\": %zu, \"iterations\": %u",
		    r->json_len ? "," : "", type, bytes, iters);
}

/* ---- table --------------------------------------------------------------- */

/* The header goes out before the first row (a report holds one kind). */
static void table_header(ibtest_report_t *r, int kind)
{
	if (r->header_done)
		return;
	fputs(RESULT_LINE, r->out);
	if (kind == KIND_LAT)
		fputs(LAT_HEADER, r->out);
	else
		fputs(r->report_gbits ? BW_HEADER_GB : BW_HEADER_MB, r->out);
	r->header_done = true;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted samples: the smallest value with at
 * least p of the samples at or below it. */
static double percentile(const double *sorted, size_t n, double p)
{
	double rank = ceil(p * (double)n);
	size_t i = rank < 1.0 ? 0 : (size_t)rank - 1;

	return sorted[i < n ? i : n - 1];
}

void ibtest_report_lat(ibtest_report_t *r, size_t bytes, unsigned iters, double *samples_usec,
		       size_t nsamples)
{
	double sum = 0.0, sq = 0.0, avg, stdev, median, p99, p999;

	if (!nsamples || !samples_usec) {
		fprintf(stderr, "ibtest: %s: no samples for %zu bytes\n", r->test, bytes);
		return;
	}
	qsort(samples_usec, nsamples, sizeof(*samples_usec), cmp_double);
	for (size_t i = 0; i < nsamples; i++)
		sum += samples_usec[i];
	avg = sum / (double)nsamples;
	for (size_t i = 0; i < nsamples; i++)
		sq += (samples_usec[i] - avg) * (samples_usec[i] - avg);
	stdev = sqrt(sq / (double)nsamples);
	median = nsamples % 2 ? samples_usec[nsamples / 2]
			      : 0.5 * (samples_usec[nsamples / 2 - 1] + samples_usec[nsamples / 2]);
	p99 = percentile(samples_usec, nsamples, 0.99);
	p999 = percentile(samples_usec, nsamples, 0.999);

	table_header(r, KIND_LAT);
	/* perftest's latency row, tabs included */
	fprintf(
	    r->out,
	    " %-7zu %u          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t"
	    "%-7.2f \t\t%-7.2f\n",
	    bytes, iters, samples_usec[0], samples_usec[nsamples - 1], median, avg, stdev, p99,
	    p999);
	fflush(r->out);

	json_row_begin(r, "lat", bytes, iters);
	json_append(r, ", \"units\": \"usec\"");
	json_num(r, "t_min", samples_usec[0]);
	json_num(r, "t_max", samples_usec[nsamples - 1]);
	json_num(r, "t_typical", median);
	json_num(r, "t_avg", avg);
	json_num(r, "t_stdev", stdev);
	json_num(r, "p99", p99);
	json_num(r, "p99_9", p999);
	json_append(r, ", \"samples\": %zu}", nsamples);
}

void ibtest_report_bw(ibtest_report_t *r, size_t bytes, unsigned iters, double bw_peak_MBps,
		      double bw_avg_MBps, double msg_rate_Mpps)
{
	double scale = r->report_gbits ? MB_BYTES / GB_BYTES : 1.0;
	double peak = bw_peak_MBps * scale, avg = bw_avg_MBps * scale;

	table_header(r, KIND_BW);
	/* perftest switches to six decimals for tiny Gb/sec figures */
	if (r->report_gbits && avg < 0.1)
		fprintf(r->out,
			" %-7zu    %u           %-7.6f            %-7.6f            %-7.6f\n",
			bytes, iters, peak, avg, msg_rate_Mpps);
	else
		fprintf(r->out, " %-7zu    %-10u       %-7.2f            %-7.2f\t\t   %-7.6f\n",
			bytes, iters, peak, avg, msg_rate_Mpps);
	fflush(r->out);

	json_row_begin(r, "bw", bytes, iters);
	json_append(r, ", \"units\": \"%s\"", r->report_gbits ? "Gb/sec" : "MB/sec");
	json_num(r, "bw_peak", peak);
	json_num(r, "bw_average", avg);
	json_num(r, "msg_rate_mpps", msg_rate_Mpps);
	json_append(r, "}");
}

void ibtest_report_json_row(ibtest_report_t *r, const char *fmt, ...)
{
	va_list ap, ap2;
	char *row;
	int n;

	if (!r->json)
		return;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	row = n < 0 ? NULL : malloc((size_t)n + 1);
	if (row)
		vsnprintf(row, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	va_end(ap);
	if (!row) {
		fprintf(stderr, "ibtest: out of memory collecting JSON results\n");
		r->json = false;
		return;
	}
	json_append(r, "%s\n    {%s}", r->json_len ? "," : "", row);
	free(row);
}

void ibtest_report_end(ibtest_report_t *r)
{
	if (r->header_done)
		fputs(RESULT_LINE, r->out);
	fflush(r->out);
	if (r->json) {
		fputs("{\"test\": ", stdout);
		json_string(stdout, r->test);
		fputs(", \"results\": [", stdout);
		if (r->json_len)
			fwrite(r->json_buf, 1, r->json_len, stdout);
		fputs(r->json_len ? "\n  ]}\n" : "]}\n", stdout);
		fflush(stdout);
	}
	free(r->json_buf);
	r->json_buf = NULL;
	r->json_len = r->json_cap = 0;
	r->header_done = false;
}
