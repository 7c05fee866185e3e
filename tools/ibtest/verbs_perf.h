/*
 * verbs_perf.h — the perftest-class commands of ibtest (write_lat, write_bw,
 * read_lat, read_bw, send_lat, send_bw, atomic_lat, atomic_bw) on the
 * engine's own QPs (core/qp). Shared between
 *
 *   verbs_perf.c   the commands, banner and per-size driver, shared helpers;
 *   verbs_opts.c   options, defaults and usage;
 *   verbs_oob.c    the TCP side channel (connect/accept, messages, barriers);
 *   verbs_setup.c  parameter handshake, device, buffers, CQs, QPs (directly
 *                  or through rdma_cm) and their tear-down;
 *   verbs_lat.c    the latency loops;
 *   verbs_bw.c     the bandwidth loops and their statistics.
 *
 * A run is two processes, as with perftest: `ibtest write_bw` listens,
 * `ibtest write_bw HOST` connects. Both sides keep a TCP connection to the
 * other (perftest's "Data ex. method : Ethernet") for the parameter check,
 * the exchange of buffer address/rkey/length, start/end barriers of every
 * message size and the client's bandwidth results, which the server prints
 * too.
 */
#ifndef IBTEST_VERBS_PERF_H
#define IBTEST_VERBS_PERF_H

#include "ibtest.h"

#include "qp/qp.h"

typedef enum { VP_WRITE, VP_READ, VP_SEND, VP_ATOMIC } vp_verb_t;
typedef enum { VP_LAT, VP_BW } vp_kind_t;
typedef enum { VP_FETCH_AND_ADD, VP_CMP_AND_SWAP } vp_atomic_t;

/* One command: the verb, latency or bandwidth, perftest's banner title. */
typedef struct vp_test {
	const char *name; /* "write_lat" */
	vp_verb_t verb;
	vp_kind_t kind;
	uint8_t id; /* checked by the peer: both sides run one test */
} vp_test_t;

/* Command line; both sides of a run must agree on what the peer checks
 * (test, sizes, iterations, QPs, outstanding reads, atomic type). */
typedef struct vp_opts {
	const vp_test_t *test;
	const char *host;     /* NULL: server */
	const char *dev_name; /* -d */
	int ib_port;	      /* -i, 0: first active port */
	int gid_index;	      /* -x, -1: ibx's choice (RoCEv2 IPv4-mapped) */
	uint16_t tcp_port;    /* -p */
	size_t size;	      /* -s */
	bool all;	      /* -a */
	unsigned iters;	      /* -n */
	unsigned num_qps;     /* -q */
	unsigned tx_depth;    /* -t */
	unsigned rx_depth;    /* -r (send tests) */
	unsigned post_list;   /* -l */
	unsigned cq_mod;      /* -Q (after the perftest rules) */
	bool cq_mod_set;
	int inline_req;	    /* -I, -1: perftest's default for the device */
	int out_reads;	    /* -o, 0: device maximum */
	vp_atomic_t atomic; /* -A */
	bool rdma_cm;	    /* -R */
	bool report_gbits, json;
} vp_opts_t;

/* What the peer needs to reach one QP's target region. */
typedef struct vp_remote_mem {
	uint64_t addr;
	uint32_t rkey;
	uint64_t len;
} vp_remote_mem_t;

/* One connection (QP) and its slice of the registered buffer:
 *   local   what our operations send from / read into (perftest's send half)
 *   target  what the peer's operations write / read (its remote address) */
typedef struct vp_conn {
	ibx_qp_t *qp;
	char *local, *target;
	vp_remote_mem_t peer; /* the peer's target region */
	uint64_t scnt, ccnt;  /* posted / completed (bandwidth) */
	uint64_t sig_end;     /* WRs up to the last signalled one */
	uint64_t rposted;     /* receives posted (send tests) */
	uint64_t rcnt;	      /* receives completed (send_bw server) */
} vp_conn_t;

struct vp_bw_state;

typedef struct vp_job {
	const vp_opts_t *o;
	bool server;
	int ctl; /* TCP side channel */
	ibx_qp_dev_t *dev;
	ibx_qp_cq_t *scq, *rcq;
	ibx_qp_cm_listener_t *listener;
	char *buf;
	size_t buf_len; /* num_qps * 2 * region */
	size_t region;	/* bytes of one local or target region */
	struct ibv_mr *mr;
	vp_conn_t *conns;
	unsigned inline_max;	/* payloads up to this size go inline */
	unsigned out_reads;	/* granted outstanding READ/atomics */
	struct vp_bw_state *bw; /* verbs_bw.c */
	ibtest_report_t rep;
	FILE *out; /* banner and table: stdout, stderr with --json */
} vp_job_t;

/* Bandwidth figures of one size (MB/sec = 2^20 bytes/sec, as perftest). */
typedef struct vp_bw_result {
	double peak_MBps, avg_MBps, msg_rate_Mpps;
	uint64_t msgs;
} vp_bw_result_t;

#define VP_ALL_MIN	2
#define VP_ALL_MAX	(8u << 20) /* -a: 2 .. 8 MiB, as perftest */
#define VP_CYCLE_BUFFER 4096u	   /* perftest: small messages cycle through a page */
#define VP_CACHE_LINE	64u
#define VP_POLL_BATCH	16

/* ---- side-channel encoding (big-endian, any alignment) ------------------- */
static inline void vp_put_be32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, 4);
}
static inline void vp_put_be64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, 8);
}
static inline uint32_t vp_get_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be32toh(v);
}
static inline uint64_t vp_get_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

/* Largest message of the run: the region each QP needs on either side. */
static inline size_t vp_max_size(const vp_opts_t *o)
{
	return o->all ? VP_ALL_MAX : o->size;
}

/* ---- verbs_opts.c ------------------------------------------------------------ */
/* Fills @o (its test set) from the command line. Returns 0 to run, 1 after
 * --help, 2 on a usage error (already reported, with the usage text where
 * an option was wrong). */
int vp_parse_opts(vp_opts_t *o, int argc, char **argv);

/* ---- verbs_oob.c: the TCP side channel ----------------------------------- */
/* Server: listens on -p and accepts one client into j->ctl. */
ibx_status_t vp_ctl_accept(vp_job_t *j);
/* Client: connects j->ctl to the server at -p of the host. */
ibx_status_t vp_ctl_connect(vp_job_t *j);
/* Both sides call it; returns when both arrived. */
ibx_status_t vp_barrier(vp_job_t *j);
ibx_status_t vp_ctl_send(vp_job_t *j, const void *buf, size_t len);
ibx_status_t vp_ctl_recv(vp_job_t *j, void *buf, size_t len);
/* True when the peer closed the side channel (it failed or was killed). */
bool vp_peer_gone(vp_job_t *j);

/* ---- verbs_setup.c: in the order vp_main calls them -------------------------- */
/* Opens the device (-d, -i, -x) and sets the outstanding reads (-o). */
ibx_status_t vp_open(vp_job_t *j);
/* Agrees on the parameters with the peer over the side channel. */
ibx_status_t vp_hello(vp_job_t *j);
/* Buffer (both regions of every QP), its MR, send and receive CQs. */
ibx_status_t vp_alloc(vp_job_t *j);
/* Every QP up to RTS, with the peer's target regions in j->conns. */
ibx_status_t vp_connect_qps(vp_job_t *j);
/* Releases whatever of the above exists. */
void vp_close(vp_job_t *j);

/* ---- verbs_perf.c: shared helpers ---------------------------------------- */
/* Prints "ibtest NAME: <message>" on stderr. */
void vp_err(const vp_job_t *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Polling loops call vp_alive() with a counter of their own (a register,
 * not a store per spin) so that a dead peer never leaves us spinning
 * forever; one in 2^18 spins (about a millisecond) looks. */
static inline ibx_status_t vp_alive(vp_job_t *j, unsigned *spins)
{
	if (ibx_likely((++*spins & 0x3ffffu) != 0))
		return IBX_OK;
	if (!vp_peer_gone(j))
		return IBX_OK;
	vp_err(j, "the peer closed the connection (it failed or was stopped)");
	return IBX_ERR_UNREACHABLE;
}
/* Checks a work completion; logs a failed one with the verb and status. */
ibx_status_t vp_wc_check(vp_job_t *j, const struct ibv_wc *wc, const char *what);
/* Posts receives on @c until @upto have been posted in this size (send tests). */
ibx_status_t vp_post_recvs(vp_job_t *j, vp_conn_t *c, size_t size, uint64_t upto);
/* Flags of a send-side WR of @size (inline when it fits). */
static inline unsigned vp_inline_flag(const vp_job_t *j, size_t size)
{
	return size <= j->inline_max ? IBX_QP_INLINE : 0;
}
/* Bytes between consecutive messages when small ones cycle through a page. */
static inline size_t vp_cycle_step(size_t size)
{
	return (size + VP_CACHE_LINE - 1) / VP_CACHE_LINE * VP_CACHE_LINE;
}

/* ---- verbs_lat.c ----------------------------------------------------------- */
/* One size of a latency test. Sides that measure fill @samples (iters - 1
 * per-iteration times in usec, already halved for write and send) and
 * return IBX_OK with *nsamples_p set; the passive side of read/atomic
 * tests returns with 0 samples. */
ibx_status_t vp_lat_run(vp_job_t *j, size_t size, double *samples, size_t *nsamples_p);

/* ---- verbs_bw.c ------------------------------------------------------------ */
/* Allocates the time stamp arrays for up to @max_msgs messages. */
ibx_status_t vp_bw_init(vp_job_t *j, uint64_t max_msgs);
void vp_bw_fini(vp_job_t *j);
/* One size of a bandwidth test; *res_p is what this side prints (the
 * server of write/read/atomic gets the client's figures). */
ibx_status_t vp_bw_run(vp_job_t *j, size_t size, vp_bw_result_t *res_p);

#endif /* IBTEST_VERBS_PERF_H */
