/*
 * ibtest.h — shared pieces of the ibtest tool: command registration and
 * perftest-compatible reporting.
 *
 * Each command lives in its own file and registers itself:
 *
 *     static int shm_lat_main(int argc, char **argv) { ... }
 *     IBTEST_COMMAND("shm_lat", "ping-pong latency over the shm path", shm_lat_main);
 *
 * main.c dispatches `ibtest NAME args...` to it (argv[0] is NAME).
 */
#ifndef IBTEST_H
#define IBTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef int (*ibtest_main_t)(int argc, char **argv);

typedef struct ibtest_cmd {
	const char *name;
	const char *help;
	ibtest_main_t main;
	struct ibtest_cmd *next;
} ibtest_cmd_t;

void ibtest_register(ibtest_cmd_t *cmd);

#define IBTEST_COMMAND(name_, help_, fn_)                                                          \
	static ibtest_cmd_t ibtest_cmd_##fn_ = {name_, help_, fn_, NULL};                          \
	__attribute__((constructor)) static void ibtest_reg_##fn_(void)                            \
	{                                                                                          \
		ibtest_register(&ibtest_cmd_##fn_);                                                \
	}

/* A size option: digits with an optional k/m/g suffix (powers of 1024; the
 * engine's configuration grammar) within [min, max]. 0 on success, -1 for
 * anything else (a sign, garbage, out of range). */
int ibtest_parse_size(const char *s, size_t min, size_t max, size_t *value_p);
/* A count option: decimal digits only, within [min, max]; 0 or -1 as above. */
int ibtest_parse_count(const char *s, unsigned long min, unsigned long max, unsigned long *value_p);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t ibtest_now_ns(void);
/* ---- time stamps -----------------------------------------------------------
 * Latency loops stamp every iteration. As perftest does, they read the TSC
 * where the kernel itself keeps time with it (an RDTSC costs a third of a
 * clock_gettime under emulation, and touches no vDSO page); the rate is
 * measured against CLOCK_MONOTONIC once (ibtest_clock_init), so
 * ibtest_ticks_to_ns turns differences into nanoseconds. Elsewhere the
 * ticks are CLOCK_MONOTONIC nanoseconds. */
extern bool ibtest_use_tsc;
extern double ibtest_ns_per_tick;
void ibtest_clock_init(void);
static inline uint64_t ibtest_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(ibtest_use_tsc, 1))
		return __builtin_ia32_rdtsc();
#endif
	return ibtest_now_ns();
}
static inline double ibtest_ticks_to_ns(uint64_t ticks)
{
	return (double)ticks * ibtest_ns_per_tick;
}
/* The untimed iterations of a latency test without --warmup: a tenth of
 * the timed ones, at least 10. */
unsigned ibtest_lat_warmup(unsigned iters);

/* ---- perftest-compatible reports (tools/ibtest/report.c) ----------------
 * Latency: samples are per-iteration times in microseconds (already halved
 * for half-round-trip tests); the table has perftest's columns:
 *   #bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec]
 *   t_stdev[usec] 99% percentile[usec] 99.9% percentile[usec]
 * Bandwidth: #bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]
 * (Gb/sec instead of MB/sec with report_gbits).
 * With json set, each row is also collected and printed as one JSON
 * document at ibtest_report_end(). */
typedef struct ibtest_report {
	const char *test; /* e.g. "write_lat" */
	bool json;
	bool report_gbits;
	bool header_done;
	FILE *out;
	/* collected JSON rows */
	char *json_buf;
	size_t json_len, json_cap;
} ibtest_report_t;

void ibtest_report_init(ibtest_report_t *r, const char *test, bool json, bool report_gbits);
void ibtest_report_lat(ibtest_report_t *r, size_t bytes, unsigned iters, double *samples_usec,
		       size_t nsamples);
void ibtest_report_bw(ibtest_report_t *r, size_t bytes, unsigned iters, double bw_peak_MBps,
		      double bw_avg_MBps, double msg_rate_Mpps);
void ibtest_report_end(ibtest_report_t *r);
/* A row of a command's own shape (its table is its own): @fmt writes the
 * members between the row's braces, e.g. "\"bytes\": %zu, \"MBps\": %.6g";
 * numbers must be finite. Collected only when r->json is set. */
void ibtest_report_json_row(ibtest_report_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* `ibtest dtype --calibrate` (dtype_calib.c): the datatype selector's
 * thresholds for this device, measured and stored. */
int ibtest_dtype_calibrate(int argc, char **argv);

#endif
