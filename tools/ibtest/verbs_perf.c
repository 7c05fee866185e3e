/*
 * verbs_perf.c — `ibtest write_lat|write_bw|read_lat|read_bw|send_lat|
 * send_bw|atomic_lat|atomic_bw`: perftest's verbs benchmarks on the engine's
 * own RC QPs (core/qp), run like perftest between two shells:
 *
 *     ibtest write_bw [options]          server: waits for one client
 *     ibtest write_bw [options] HOST     client
 *
 * Options are perftest's where they apply (-d -i -x -p -s -n -a -q -t -r -l
 * -Q -I -o -A -R, --report_gbits; -F is accepted and ignored), so are the
 * defaults (2 B and 1000 iterations for latency, 64 KiB and 5000 for
 * bandwidth, TX depth 128, CQ moderation 100 — 1 above 8 KiB —, 512
 * receives for send tests, as many outstanding reads as the device allows,
 * inline data only where perftest would use it) and the numbers mean the
 * same: write and send latency are half a round trip, read and atomic
 * latency a full one, bandwidth is bytes over the time from the first post
 * to the last completion. The table on stdout has perftest's header and
 * columns (tools/ibtest/report.c); --json prints it on stderr and a JSON
 * document on stdout.
 *
 * Connection (the TCP side channel is perftest's "Data ex. method:
 * Ethernet"; -R connects the QPs through librdmacm instead, with the same
 * port number in rdma_cm's port space):
 *
 *     client                                   server (listening on -p)
 *     TCP connect  ---- HELLO {test, sizes, iters, QPs, reads, flags} -->
 *                  <--- OK {reads} or a mismatch message -------------  compare
 *     barrier      <------------------------------> (-R: listening now)
 *     per QP: create (INIT) or ibx_qp_cm_connect  <->  create or ibx_qp_cm_accept
 *                  <--> MEM {QP address record, target addr, rkey, len}
 *     ibx_qp_connect (RTR, RTS; not with -R)       ibx_qp_connect
 *     barrier      <------------------------------> barrier
 *     per size: prepare (zero targets, post receives), barrier, run,
 *               then a barrier (latency) or RESULT {peak, avg, rate}
 *               from the client (write/read/atomic bandwidth), which the
 *               server prints as its own row, as perftest's server does.
 *
 * If the peer dies, its end of the side channel closes; every polling loop
 * checks for that now and then (vp_alive), so nothing spins forever.
 */
#include "verbs_perf.h"

#include <ctype.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#define VP_DEF_PORT	     18515
#define VP_DEF_SIZE_LAT	     2
#define VP_DEF_SIZE_BW	     65536
#define VP_SIZE_ATOMIC	     8
#define VP_DEF_ITERS_LAT     1000
#define VP_DEF_ITERS_BW	     5000
#define VP_DEF_TX_BW	     128
#define VP_DEF_RX_SEND	     512
#define VP_DEF_CQ_MOD	     100
#define VP_CQ_MOD_SIZE_LIMIT 8192 /* perftest: no CQ moderation above this */
#define VP_ALL_MIN	     2
#define VP_ALL_MAX	     (8u << 20) /* -a: 2 .. 8 MiB, as perftest */
#define VP_SIZE_LIMIT	     (1u << 30)
#define VP_MAX_INLINE	     912 /* perftest's limit for -I */
/* perftest's inline defaults for latency tests on devices it knows */
#define VP_INLINE_WRITE	    220
#define VP_INLINE_SEND	    236
#define VP_VENDOR_MELLANOX  0x02c9
#define VP_CM_TIMEOUT_MS    30000
#define VP_CONNECT_RETRY_MS 5000

#define RESULT_LINE                                                                                \
	"---------------------------------------------------------------------------------------"  \
	"\n"

/* ---- side-channel wire format (big-endian) --------------------------------
 * HELLO  0 "IBXV"  4 u8 version  5 u8 test id  6 u8 flags (1: -a, 2: -R)
 *        7 u8 atomic type  8 be64 size  16 be32 iters  20 be32 QPs
 *        24 be32 outstanding reads (this side's, after the device's limit)
 * REPLY  0 "IBXV"  4 u8 status (0 ok)  8 be32 reads  12 message[116]
 * MEM    0 ibx_qp_addr record[32] (zero with -R)  32 be64 addr  40 be32 rkey
 *        44 be64 length
 * RESULT 0 be64 peak  8 be64 avg  16 be64 rate (IEEE doubles)  24 be64 msgs */
#define VP_MAGIC     "IBXV"
#define VP_VERSION   1
#define VP_HELLO_LEN 32
#define VP_REPLY_LEN 128
#define VP_MEM_LEN   56

static const vp_test_t vp_tests[] = {
    {"write_lat", VP_WRITE, VP_LAT, 1},	  {"write_bw", VP_WRITE, VP_BW, 2},
    {"read_lat", VP_READ, VP_LAT, 3},	  {"read_bw", VP_READ, VP_BW, 4},
    {"send_lat", VP_SEND, VP_LAT, 5},	  {"send_bw", VP_SEND, VP_BW, 6},
    {"atomic_lat", VP_ATOMIC, VP_LAT, 7}, {"atomic_bw", VP_ATOMIC, VP_BW, 8},
};

/* ---- small helpers --------------------------------------------------------- */

bool vp_use_tsc;
double vp_ns_per_tick = 1.0;

void vp_clock_init(void)
{
#if defined(__x86_64__) || defined(__i386__)
	char cs[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	uint64_t n0, t0, n1, t1;

	if (f) {
		if (!fgets(cs, sizeof(cs), f))
			cs[0] = 0;
		fclose(f);
	}
	if (strncmp(cs, "tsc", 3) != 0)
		return;
	n0 = ibx_time_ns();
	t0 = __builtin_ia32_rdtsc();
	usleep(20000);
	n1 = ibx_time_ns();
	t1 = __builtin_ia32_rdtsc();
	if (t1 <= t0 || n1 <= n0)
		return;
	vp_ns_per_tick = (double)(n1 - n0) / (double)(t1 - t0);
	vp_use_tsc = true;
#endif
}

void vp_err(const vp_job_t *j, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ibtest %s (%s): ", j->o->test->name, j->server ? "server" : "client");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- the TCP side channel --------------------------------------------------- */

ibx_status_t vp_ctl_send(vp_job_t *j, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(j->ctl, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			vp_err(j, "side channel: send failed: %s", strerror(errno));
			return IBX_ERR_UNREACHABLE;
		}
		p += n;
		len -= (size_t)n;
	}
	return IBX_OK;
}

ibx_status_t vp_ctl_recv(vp_job_t *j, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(j->ctl, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			vp_err(j, "the peer closed the connection (it failed or was stopped)");
			return IBX_ERR_UNREACHABLE;
		}
		if (n < 0) {
			vp_err(j, "side channel: recv failed: %s", strerror(errno));
			return IBX_ERR_UNREACHABLE;
		}
		p += n;
		len -= (size_t)n;
	}
	return IBX_OK;
}

ibx_status_t vp_barrier(vp_job_t *j)
{
	char c = 'b';
	ibx_status_t st = vp_ctl_send(j, &c, 1);

	if (st == IBX_OK)
		st = vp_ctl_recv(j, &c, 1);
	if (st == IBX_OK && c != 'b') {
		vp_err(j, "side channel out of step (got 0x%02x at a barrier)", (unsigned char)c);
		st = IBX_ERR_CORRUPT;
	}
	return st;
}

bool vp_peer_gone(vp_job_t *j)
{
	struct pollfd pfd = {.fd = j->ctl, .events = POLLIN};
	char c;
	ssize_t n;

	if (poll(&pfd, 1, 0) <= 0)
		return false;
	if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))
		return true;
	/* readable: a barrier byte that arrived early, or the end of the stream */
	n = recv(j->ctl, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static void ctl_tune(int fd)
{
	int one = 1;

	/* barriers are single bytes: do not let Nagle hold them back */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static ibx_status_t ctl_accept(vp_job_t *j)
{
	struct addrinfo hints, *res = NULL, *ai;
	char service[8];
	int lfd = -1, one = 1, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(service, sizeof(service), "%u", j->o->tcp_port);
	rc = getaddrinfo(NULL, service, &hints, &res);
	if (rc) {
		vp_err(j, "getaddrinfo(port %s): %s", service, gai_strerror(rc));
		return IBX_ERR_IO;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		lfd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (lfd < 0)
			continue;
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(lfd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(lfd, 1) == 0)
			break;
		close(lfd);
		lfd = -1;
	}
	freeaddrinfo(res);
	if (lfd < 0) {
		vp_err(j, "cannot listen on TCP port %u: %s", j->o->tcp_port, strerror(errno));
		return IBX_ERR_IO;
	}
	fprintf(j->out, "\n************************************\n"
			"* Waiting for client to connect... *\n"
			"************************************\n");
	fflush(j->out);
	do {
		j->ctl = accept(lfd, NULL, NULL);
	} while (j->ctl < 0 && errno == EINTR);
	close(lfd);
	if (j->ctl < 0) {
		vp_err(j, "accept on TCP port %u failed: %s", j->o->tcp_port, strerror(errno));
		return IBX_ERR_IO;
	}
	ctl_tune(j->ctl);
	return IBX_OK;
}

static ibx_status_t ctl_connect(vp_job_t *j)
{
	struct addrinfo hints, *res = NULL, *ai;
	char service[8];
	uint64_t deadline = ibx_time_ns() + VP_CONNECT_RETRY_MS * 1000000ull;
	int rc, err = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(service, sizeof(service), "%u", j->o->tcp_port);
	rc = getaddrinfo(j->o->host, service, &hints, &res);
	if (rc) {
		vp_err(j, "cannot resolve %s: %s", j->o->host, gai_strerror(rc));
		return IBX_ERR_INVALID_PARAM;
	}
	/* a server started a moment ago may not listen yet: retry a little */
	for (;;) {
		for (ai = res; ai; ai = ai->ai_next) {
			j->ctl = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
			if (j->ctl < 0) {
				err = errno;
				continue;
			}
			if (connect(j->ctl, ai->ai_addr, ai->ai_addrlen) == 0)
				break;
			err = errno;
			close(j->ctl);
			j->ctl = -1;
		}
		if (j->ctl >= 0 || err != ECONNREFUSED || ibx_time_ns() > deadline)
			break;
		usleep(100000);
	}
	freeaddrinfo(res);
	if (j->ctl < 0) {
		vp_err(j, "cannot connect to %s port %u: %s", j->o->host, j->o->tcp_port,
		       strerror(err));
		return IBX_ERR_UNREACHABLE;
	}
	ctl_tune(j->ctl);
	return IBX_OK;
}

/* ---- options ------------------------------------------------------------------ */

static void usage(const vp_test_t *t, FILE *f)
{
	bool bw = t->kind == VP_BW;

	fprintf(f,
		"usage: ibtest %s [options]          start a server and wait for a client\n"
		"       ibtest %s [options] HOST     connect to the server at HOST\n\n",
		t->name, t->name);
	fprintf(f,
		"perftest's ib_%s on the engine's own RC QPs (core/qp). Both sides take the "
		"same options.\n",
		t->name);
	if (t->kind == VP_LAT)
		fprintf(f, "Latency is %s round trip per iteration (as perftest).\n\n",
			t->verb == VP_READ || t->verb == VP_ATOMIC ? "a full" : "half a");
	else
		fprintf(f,
			"Bandwidth over the time from the first post to the last completion.\n\n");
	fprintf(f,
		"  -d, --ib-dev=DEV        verbs device (default: IBX_DEVICE, else the first "
		"active port)\n"
		"  -i, --ib-port=PORT      port of the device (default: its first active one)\n"
		"  -x, --gid-index=N       GID index (default: the RoCEv2 IPv4-mapped GID)\n"
		"  -p, --port=PORT         TCP (and with -R rdma_cm) port (default %d)\n",
		VP_DEF_PORT);
	if (t->verb == VP_ATOMIC) {
		fprintf(f, "  -A, --atomic_type=TYPE  FETCH_AND_ADD (default) or CMP_AND_SWAP; "
			   "messages are 8 bytes\n");
	} else {
		fprintf(f,
			"  -s, --size=SIZE         message size (k/m/g suffixes; default %d)\n"
			"  -a, --all               sizes %d .. %u, powers of two\n",
			bw ? VP_DEF_SIZE_BW : VP_DEF_SIZE_LAT, VP_ALL_MIN, VP_ALL_MAX);
	}
	fprintf(f, "  -n, --iters=N           iterations per size (at least 5; default %d)\n",
		bw ? VP_DEF_ITERS_BW : VP_DEF_ITERS_LAT);
	if (bw) {
		fprintf(f,
			"  -q, --qp=N              QPs, each with its own window (default 1)\n"
			"  -t, --tx-depth=N        outstanding WRs per QP (default %d)\n"
			"  -l, --post_list=N       post WRs as linked lists of N, one signalled "
			"(default 1)\n"
			"  -Q, --cq-mod=N          one completion per N WRs (default %d; 1 above "
			"%d B; N with -l)\n"
			"      --report_gbits      bandwidth in Gb/sec instead of MB/sec\n",
			VP_DEF_TX_BW, VP_DEF_CQ_MOD, VP_CQ_MOD_SIZE_LIMIT);
	}
	if (t->verb == VP_SEND)
		fprintf(f, "  -r, --rx-depth=N        receives kept posted (default %d)\n",
			VP_DEF_RX_SEND);
	if (t->verb == VP_WRITE || t->verb == VP_SEND)
		fprintf(f, "  -I, --inline_size=N     payloads up to N bytes go inline (default: "
			   "perftest's for the device)\n");
	if (t->verb == VP_READ || t->verb == VP_ATOMIC)
		fprintf(f, "  -o, --outs=N            outstanding reads/atomics per QP (default: "
			   "device maximum)\n");
	fprintf(f, "  -R, --rdma_cm           connect the QPs with librdmacm (ibx_qp_cm_*)\n"
		   "  -F, --CPU-freq          accepted and ignored (perftest compatibility)\n"
		   "      --json              results as JSON on stdout (the table goes to "
		   "stderr)\n"
		   "  -h, --help              this text\n");
}

static int parse_size(const char *s, size_t *value_p)
{
	unsigned long long v, mult = 1;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (tolower((unsigned char)*end)) {
	case 'k':
		mult = 1ull << 10;
		end++;
		break;
	case 'm':
		mult = 1ull << 20;
		end++;
		break;
	case 'g':
		mult = 1ull << 30;
		end++;
		break;
	default: break;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || (v && mult > VP_SIZE_LIMIT / v) || v * mult > VP_SIZE_LIMIT || v == 0)
		return -1;
	*value_p = (size_t)(v * mult);
	return 0;
}

static int parse_num(const char *s, long min, long max, long *value_p)
{
	long v;
	char *end;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -1;
	*value_p = v;
	return 0;
}

/* Returns 0 to run, 1 after --help, 2 on a usage error. */
static int parse_opts(vp_opts_t *o, int argc, char **argv)
{
	enum { OPT_GBITS = 256, OPT_JSON };
	static const struct option lopts[] = {
	    {"ib-dev", required_argument, NULL, 'd'},
	    {"ib-port", required_argument, NULL, 'i'},
	    {"gid-index", required_argument, NULL, 'x'},
	    {"port", required_argument, NULL, 'p'},
	    {"size", required_argument, NULL, 's'},
	    {"all", no_argument, NULL, 'a'},
	    {"iters", required_argument, NULL, 'n'},
	    {"qp", required_argument, NULL, 'q'},
	    {"tx-depth", required_argument, NULL, 't'},
	    {"rx-depth", required_argument, NULL, 'r'},
	    {"post_list", required_argument, NULL, 'l'},
	    {"cq-mod", required_argument, NULL, 'Q'},
	    {"inline_size", required_argument, NULL, 'I'},
	    {"outs", required_argument, NULL, 'o'},
	    {"atomic_type", required_argument, NULL, 'A'},
	    {"rdma_cm", no_argument, NULL, 'R'},
	    {"CPU-freq", no_argument, NULL, 'F'},
	    {"report_gbits", no_argument, NULL, OPT_GBITS},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const vp_test_t *t = o->test;
	bool bw = t->kind == VP_BW, size_set = false;
	const char *name = t->name;
	long v;
	int opt;

	o->ib_port = 0;
	o->gid_index = -1;
	o->tcp_port = VP_DEF_PORT;
	o->size = t->verb == VP_ATOMIC ? VP_SIZE_ATOMIC : bw ? VP_DEF_SIZE_BW : VP_DEF_SIZE_LAT;
	o->iters = bw ? VP_DEF_ITERS_BW : VP_DEF_ITERS_LAT;
	o->num_qps = 1;
	o->tx_depth = bw ? VP_DEF_TX_BW : 1;
	o->rx_depth = VP_DEF_RX_SEND;
	o->post_list = 1;
	o->cq_mod = VP_DEF_CQ_MOD;
	o->inline_req = -1;
	o->out_reads = 0;
	o->atomic = VP_FETCH_AND_ADD;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "d:i:x:p:s:an:q:t:r:l:Q:I:o:A:RFh", lopts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'd': o->dev_name = optarg; break;
		case 'i':
			if (parse_num(optarg, 1, 255, &v))
				goto bad_value;
			o->ib_port = (int)v;
			break;
		case 'x':
			if (parse_num(optarg, 0, 1023, &v))
				goto bad_value;
			o->gid_index = (int)v;
			break;
		case 'p':
			if (parse_num(optarg, 1, 65535, &v))
				goto bad_value;
			o->tcp_port = (uint16_t)v;
			break;
		case 's':
			if (parse_size(optarg, &o->size))
				goto bad_value;
			size_set = true;
			break;
		case 'a': o->all = true; break;
		case 'n':
			if (parse_num(optarg, 5, 100000000, &v))
				goto bad_value;
			o->iters = (unsigned)v;
			break;
		case 'q':
			if (parse_num(optarg, 1, 16384, &v) || (!bw && v != 1))
				goto bad_value;
			o->num_qps = (unsigned)v;
			break;
		case 't':
			if (!bw || parse_num(optarg, 1, 15000, &v))
				goto bad_value;
			o->tx_depth = (unsigned)v;
			break;
		case 'r':
			if (t->verb != VP_SEND || parse_num(optarg, 1, 16384, &v))
				goto bad_value;
			o->rx_depth = (unsigned)v;
			break;
		case 'l':
			if (!bw || parse_num(optarg, 1, 1024, &v))
				goto bad_value;
			o->post_list = (unsigned)v;
			break;
		case 'Q':
			if (!bw || parse_num(optarg, 1, 1024, &v))
				goto bad_value;
			o->cq_mod = (unsigned)v;
			o->cq_mod_set = true;
			break;
		case 'I':
			if (parse_num(optarg, 0, VP_MAX_INLINE, &v))
				goto bad_value;
			o->inline_req = (int)v;
			break;
		case 'o':
			if (parse_num(optarg, 1, 65536, &v))
				goto bad_value;
			o->out_reads = (int)v;
			break;
		case 'A':
			if (t->verb != VP_ATOMIC)
				goto bad_value;
			if (!strcmp(optarg, "FETCH_AND_ADD"))
				o->atomic = VP_FETCH_AND_ADD;
			else if (!strcmp(optarg, "CMP_AND_SWAP"))
				o->atomic = VP_CMP_AND_SWAP;
			else
				goto bad_value;
			break;
		case 'R': o->rdma_cm = true; break;
		case 'F': break;
		case OPT_GBITS:
			if (!bw)
				goto bad;
			o->report_gbits = true;
			break;
		case OPT_JSON: o->json = true; break;
		case 'h': usage(t, stdout); return 1;
		default: goto bad;
		}
	}
	if (optind < argc)
		o->host = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "ibtest %s: unexpected argument '%s'\n", name, argv[optind]);
		goto bad;
	}
	if (t->verb == VP_ATOMIC && size_set && o->size != VP_SIZE_ATOMIC) {
		fprintf(stderr,
			"ibtest %s: message size cannot be changed for atomic tests (8 B)\n", name);
		return 2;
	}
	if (t->verb == VP_ATOMIC)
		o->all = false; /* -a: the one size atomics have */
	if (o->post_list > 1 && o->iters % o->post_list) {
		fprintf(stderr,
			"ibtest %s: the iteration count must be a multiple of the post "
			"list size (-l %u)\n",
			name, o->post_list);
		return 2;
	}
	if (o->post_list > 1 && o->cq_mod_set && o->post_list % o->cq_mod) {
		fprintf(stderr,
			"ibtest %s: the post list size must be a multiple of the CQ "
			"moderation (-Q)\n",
			name);
		return 2;
	}
	/* perftest's dependencies between the defaults */
	if (o->tx_depth > o->iters)
		o->tx_depth = o->iters;
	if (o->rx_depth > o->iters)
		o->rx_depth = o->iters;
	if (!bw) {
		o->cq_mod = 1;
	} else {
		if (o->size > VP_CQ_MOD_SIZE_LIMIT && !o->all && !o->cq_mod_set)
			o->cq_mod = 1;
		if (o->cq_mod > o->tx_depth)
			o->cq_mod = o->tx_depth;
		if (o->post_list > 1 && !o->cq_mod_set)
			o->cq_mod = o->post_list;
	}
	return 0;

bad_value:
	fprintf(stderr, "ibtest %s: bad or unsupported value for -%c: '%s'\n", name, opt,
		optarg ? optarg : "");
bad:
	usage(t, stderr);
	return 2;
}

/* ---- parameters both sides must share -------------------------------------------- */

static void hello_pack(const vp_job_t *j, uint8_t out[VP_HELLO_LEN])
{
	const vp_opts_t *o = j->o;

	memset(out, 0, VP_HELLO_LEN);
	memcpy(out, VP_MAGIC, 4);
	out[4] = VP_VERSION;
	out[5] = o->test->id;
	out[6] = (uint8_t)((o->all ? 1 : 0) | (o->rdma_cm ? 2 : 0));
	out[7] = (uint8_t)o->atomic;
	vp_put_be64(out + 8, o->all ? 0 : o->size);
	vp_put_be32(out + 16, o->iters);
	vp_put_be32(out + 20, o->num_qps);
	vp_put_be32(out + 24, j->out_reads);
}

/* The server's check of the client's HELLO: NULL when they agree, else
 * what differs (both sides print it). */
static const char *hello_mismatch(const vp_job_t *j, const uint8_t *in, char *msg, size_t len)
{
	uint8_t mine[VP_HELLO_LEN];

	hello_pack(j, mine);
	if (memcmp(in, VP_MAGIC, 4) || in[4] != VP_VERSION)
		return "the client is not an ibtest verbs test of this version";
	if (in[5] != mine[5])
		return "the client runs another test";
	if ((in[6] ^ mine[6]) & 1)
		return "one side runs all sizes (-a), the other does not";
	if ((in[6] ^ mine[6]) & 2)
		return "one side uses rdma_cm (-R), the other does not";
	if (in[7] != mine[7])
		return "different atomic types (-A)";
	if (vp_get_be64(in + 8) != vp_get_be64(mine + 8)) {
		snprintf(msg, len, "different sizes (-s): server %llu, client %llu",
			 (unsigned long long)vp_get_be64(mine + 8),
			 (unsigned long long)vp_get_be64(in + 8));
		return msg;
	}
	if (vp_get_be32(in + 16) != vp_get_be32(mine + 16)) {
		snprintf(msg, len, "different iteration counts (-n): server %u, client %u",
			 vp_get_be32(mine + 16), vp_get_be32(in + 16));
		return msg;
	}
	if (vp_get_be32(in + 20) != vp_get_be32(mine + 20)) {
		snprintf(msg, len, "different QP counts (-q): server %u, client %u",
			 vp_get_be32(mine + 20), vp_get_be32(in + 20));
		return msg;
	}
	return NULL;
}

/* Agrees on the parameters; afterwards both sides use the smaller number
 * of outstanding reads/atomics, so that no initiator has more in flight
 * than its responder accepts. */
static ibx_status_t vp_hello(vp_job_t *j)
{
	uint8_t hello[VP_HELLO_LEN], reply[VP_REPLY_LEN];
	char msg[64];
	const char *why;
	unsigned peer_reads;
	ibx_status_t st;

	if (!j->server) {
		hello_pack(j, hello);
		st = vp_ctl_send(j, hello, sizeof(hello));
		if (st == IBX_OK)
			st = vp_ctl_recv(j, reply, sizeof(reply));
		if (st != IBX_OK)
			return st;
		if (memcmp(reply, VP_MAGIC, 4)) {
			vp_err(j, "the server is not an ibtest verbs test");
			return IBX_ERR_CORRUPT;
		}
		if (reply[4] != 0) {
			reply[VP_REPLY_LEN - 1] = 0;
			vp_err(j, "the server refused: %s", (const char *)reply + 12);
			return IBX_ERR_INVALID_PARAM;
		}
		peer_reads = vp_get_be32(reply + 8);
	} else {
		st = vp_ctl_recv(j, hello, sizeof(hello));
		if (st != IBX_OK)
			return st;
		why = hello_mismatch(j, hello, msg, sizeof(msg));
		memset(reply, 0, sizeof(reply));
		memcpy(reply, VP_MAGIC, 4);
		reply[4] = why ? 1 : 0;
		vp_put_be32(reply + 8, j->out_reads);
		if (why)
			snprintf((char *)reply + 12, VP_REPLY_LEN - 12, "%.*s", VP_REPLY_LEN - 13,
				 why);
		st = vp_ctl_send(j, reply, sizeof(reply));
		if (st != IBX_OK)
			return st;
		if (why) {
			vp_err(j, "refusing the client: %s", why);
			return IBX_ERR_INVALID_PARAM;
		}
		peer_reads = vp_get_be32(hello + 24);
	}
	if (peer_reads && peer_reads < j->out_reads)
		j->out_reads = peer_reads;
	return IBX_OK;
}

/* ---- device, memory, QPs --------------------------------------------------------- */

/* The device to open: -d[:-i], else (-R client) where rdma_cm routes the
 * server's address, else -i on the first device, else ibx's default. */
static ibx_status_t vp_dev_spec(vp_job_t *j, char *spec, size_t len)
{
	const vp_opts_t *o = j->o;
	struct ibv_device **list;
	int n = 0;

	spec[0] = 0;
	if (o->dev_name) {
		if (o->ib_port)
			snprintf(spec, len, "%s:%d", o->dev_name, o->ib_port);
		else
			snprintf(spec, len, "%s", o->dev_name);
		return IBX_OK;
	}
	if (o->rdma_cm && !j->server)
		return ibx_qp_cm_route_dev(o->host, o->tcp_port, VP_CM_TIMEOUT_MS, spec, len);
	if (!o->ib_port)
		return IBX_OK;
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		if (list)
			ibv_free_device_list(list);
		vp_err(j, "no verbs device");
		return IBX_ERR_NO_DEVICE;
	}
	snprintf(spec, len, "%s:%d", ibv_get_device_name(list[0]), o->ib_port);
	ibv_free_device_list(list);
	return IBX_OK;
}

/* perftest inlines small latency-test payloads only on devices it knows
 * (Mellanox/NVIDIA); elsewhere — rxe among them — it sends none inline. */
static unsigned vp_default_inline(const vp_job_t *j)
{
	const vp_opts_t *o = j->o;

	if (o->inline_req >= 0)
		return (unsigned)o->inline_req;
	if (o->test->kind != VP_LAT || j->dev->attr.vendor_id != VP_VENDOR_MELLANOX)
		return 0;
	return o->test->verb == VP_WRITE  ? VP_INLINE_WRITE
	       : o->test->verb == VP_SEND ? VP_INLINE_SEND
					  : 0;
}

static ibx_status_t vp_open(vp_job_t *j)
{
	const vp_opts_t *o = j->o;
	char spec[IBV_SYSFS_NAME_MAX + 8];
	int max_reads;
	ibx_status_t st;

	st = vp_dev_spec(j, spec, sizeof(spec));
	if (st != IBX_OK)
		return st;
	st = ibx_qp_dev_open(spec[0] ? spec : NULL, o->gid_index, &j->dev);
	if (st != IBX_OK) {
		vp_err(j, "cannot open the verbs device %s: %s", spec[0] ? spec : "(default)",
		       ibx_status_str(st));
		return st;
	}
	max_reads = j->dev->attr.max_qp_rd_atom < j->dev->attr.max_qp_init_rd_atom
			? j->dev->attr.max_qp_rd_atom
			: j->dev->attr.max_qp_init_rd_atom;
	if (max_reads < 1)
		max_reads = 1;
	j->out_reads = (unsigned)max_reads;
	if (o->out_reads > 0 && o->out_reads < max_reads)
		j->out_reads = (unsigned)o->out_reads;
	else if (o->out_reads > max_reads)
		fprintf(stderr,
			"ibtest %s: %d outstanding reads is above the device's %d; using %d\n",
			o->test->name, o->out_reads, max_reads, max_reads);
	return IBX_OK;
}

static size_t vp_max_size(const vp_opts_t *o)
{
	return o->all ? VP_ALL_MAX : o->size;
}

static ibx_status_t vp_alloc(vp_job_t *j)
{
	const vp_opts_t *o = j->o;
	size_t region = vp_max_size(o);
	int sdepth, rdepth;
	ibx_status_t st;

	if (region < VP_CYCLE_BUFFER)
		region = VP_CYCLE_BUFFER;
	region = (region + 4095) / 4096 * 4096;
	j->region = region;
	j->buf_len = (size_t)o->num_qps * 2 * region;
	j->buf = aligned_alloc(4096, j->buf_len);
	j->conns = calloc(o->num_qps, sizeof(*j->conns));
	if (!j->buf || !j->conns) {
		vp_err(j, "out of memory (%zu bytes of buffers)", j->buf_len);
		return IBX_ERR_NO_MEMORY;
	}
	/* touch every page now: first-touch faults are not what we measure */
	memset(j->buf, 0, j->buf_len);
	for (unsigned q = 0; q < o->num_qps; q++) {
		vp_conn_t *c = &j->conns[q];

		c->local = j->buf + (size_t)q * 2 * region;
		c->target = c->local + region;
		memset(c->local, j->server ? 's' : 'c', region);
	}
	st = ibx_qp_mr_reg(j->dev, j->buf, j->buf_len, IBX_QP_ACCESS_ALL, &j->mr);
	if (st != IBX_OK)
		return st;
	sdepth = (int)(o->num_qps * (o->tx_depth + o->post_list) + VP_POLL_BATCH);
	rdepth = o->test->verb == VP_SEND ? (int)(o->num_qps * o->rx_depth + VP_POLL_BATCH) : 16;
	st = ibx_qp_cq_create(j->dev, sdepth, &j->scq);
	if (st == IBX_OK)
		st = ibx_qp_cq_create(j->dev, rdepth, &j->rcq);
	return st;
}

static void vp_mem_pack(const vp_job_t *j, const vp_conn_t *c, uint8_t out[VP_MEM_LEN])
{
	ibx_qp_addr_t me;

	memset(out, 0, VP_MEM_LEN);
	if (!j->o->rdma_cm) {
		ibx_qp_local_addr(c->qp, &me);
		ibx_qp_addr_pack(&me, out);
	}
	vp_put_be64(out + 32, (uint64_t)(uintptr_t)c->target);
	vp_put_be32(out + 40, j->mr->rkey);
	vp_put_be64(out + 44, j->region);
}

static ibx_status_t vp_connect_qps(vp_job_t *j)
{
	const vp_opts_t *o = j->o;
	ibx_qp_init_attr_t ia = IBX_QP_INIT_ATTR_DEFAULT(j->scq);
	unsigned inline_req = vp_default_inline(j);
	uint8_t mine[VP_MEM_LEN], theirs[VP_MEM_LEN];
	ibx_status_t st;

	ia.recv_cq = j->rcq;
	ia.max_send_wr = o->tx_depth + o->post_list;
	ia.max_recv_wr = o->test->verb == VP_SEND ? o->rx_depth : 1;
	ia.max_send_sge = 1;
	ia.max_recv_sge = 1;
	ia.max_inline = inline_req;
	ia.max_rd_atomic = (int)j->out_reads;

	if (o->rdma_cm && j->server) {
		st = ibx_qp_cm_listen(NULL, o->tcp_port, &j->listener);
		if (st != IBX_OK)
			return st;
	}
	/* the listener exists before the client tries to reach it */
	st = vp_barrier(j);
	if (st != IBX_OK)
		return st;
	j->inline_max = inline_req;
	for (unsigned q = 0; q < o->num_qps; q++) {
		vp_conn_t *c = &j->conns[q];
		ibx_qp_addr_t remote;

		if (!o->rdma_cm)
			st = ibx_qp_create(j->dev, &ia, &c->qp);
		else if (j->server)
			st = ibx_qp_cm_accept(j->listener, j->dev, &ia, NULL, 0, NULL, NULL,
					      VP_CM_TIMEOUT_MS, &c->qp);
		else
			st = ibx_qp_cm_connect(o->host, o->tcp_port, j->dev, &ia, NULL, 0, NULL,
					       NULL, VP_CM_TIMEOUT_MS, &c->qp);
		if (st != IBX_OK) {
			vp_err(j, "cannot %s QP %u: %s",
			       !o->rdma_cm ? "create"
			       : j->server ? "accept"
					   : "connect",
			       q, ibx_status_str(st));
			return st;
		}
		if (c->qp->max_inline < j->inline_max)
			j->inline_max = c->qp->max_inline;
		vp_mem_pack(j, c, mine);
		st = vp_ctl_send(j, mine, sizeof(mine));
		if (st == IBX_OK)
			st = vp_ctl_recv(j, theirs, sizeof(theirs));
		if (st != IBX_OK)
			return st;
		c->peer.addr = vp_get_be64(theirs + 32);
		c->peer.rkey = vp_get_be32(theirs + 40);
		c->peer.len = vp_get_be64(theirs + 44);
		if (c->peer.len < j->region) {
			vp_err(j, "the peer's buffer (%llu bytes) is smaller than ours (%zu)",
			       (unsigned long long)c->peer.len, j->region);
			return IBX_ERR_CORRUPT;
		}
		if (o->rdma_cm)
			continue;
		st = ibx_qp_addr_unpack(theirs, &remote);
		if (st == IBX_OK)
			st = ibx_qp_connect(c->qp, &remote, NULL);
		if (st != IBX_OK) {
			vp_err(j, "cannot connect QP %u: %s", q, ibx_status_str(st));
			return st;
		}
	}
	/* both sides in RTS before anything is posted */
	return vp_barrier(j);
}

static void vp_close(vp_job_t *j)
{
	if (j->conns)
		for (unsigned q = 0; q < j->o->num_qps; q++)
			ibx_qp_destroy(j->conns[q].qp);
	ibx_qp_mr_dereg(j->mr);
	ibx_qp_cq_destroy(j->rcq);
	ibx_qp_cq_destroy(j->scq);
	ibx_qp_cm_listener_close(j->listener);
	ibx_qp_dev_close(j->dev);
	free(j->conns);
	free(j->buf);
	if (j->ctl >= 0)
		close(j->ctl);
}

/* ---- shared by the loops ------------------------------------------------------------ */

ibx_status_t vp_wc_check(vp_job_t *j, const struct ibv_wc *wc, const char *what)
{
	if (ibx_likely(wc->status == IBV_WC_SUCCESS))
		return IBX_OK;
	vp_err(j, "%s completion failed: %s (%s, QP 0x%x, vendor error 0x%x)", what,
	       ibv_wc_status_str(wc->status), ibx_qp_wc_opcode_str(wc->opcode), wc->qp_num,
	       wc->vendor_err);
	return ibx_qp_wc_status(wc->status);
}

ibx_status_t vp_post_recvs(vp_job_t *j, vp_conn_t *c, size_t size, uint64_t upto)
{
	struct ibv_sge sge = {(uintptr_t)c->target, (uint32_t)size, j->mr->lkey};

	while (c->rposted < upto) {
		ibx_status_t st = ibx_qp_post_recv(c->qp, &sge, 1, (uint64_t)(c - j->conns));

		if (st != IBX_OK)
			return st;
		c->rposted++;
	}
	return IBX_OK;
}

/* ---- banner --------------------------------------------------------------------------- */

static const char *vp_title(const vp_opts_t *o, char *buf, size_t len)
{
	const vp_test_t *t = o->test;
	const char *kind = t->kind == VP_LAT ? "Latency" : o->post_list > 1 ? "Post List BW" : "BW";

	switch (t->verb) {
	case VP_WRITE: snprintf(buf, len, "RDMA_Write %s Test", kind); break;
	case VP_READ: snprintf(buf, len, "RDMA_Read %s Test", kind); break;
	case VP_SEND: snprintf(buf, len, "Send %s Test", kind); break;
	case VP_ATOMIC:
		snprintf(buf, len, "Atomic %s %s Test",
			 o->atomic == VP_FETCH_AND_ADD ? "FETCH_AND_ADD" : "CMP_AND_SWAP", kind);
		break;
	}
	return buf;
}

/* perftest prints GIDs as 16 decimal bytes */
static void print_gid(FILE *f, const union ibv_gid *g)
{
	fputs(" GID: ", f);
	for (int i = 0; i < 16; i++)
		fprintf(f, "%02d%s", g->raw[i], i < 15 ? ":" : "\n");
}

static void vp_banner(vp_job_t *j)
{
	const vp_opts_t *o = j->o;
	const vp_test_t *t = o->test;
	FILE *f = j->out;
	char title[64];

	fputs(RESULT_LINE, f);
	fprintf(f, "                    %s\n", vp_title(o, title, sizeof(title)));
	fprintf(f, " Dual-port       : OFF\t\tDevice         : %s\n", j->dev->name);
	fprintf(f, " Number of qps   : %u\t\tTransport type : IB\n", o->num_qps);
	fprintf(f, " Connection type : RC\t\tUsing SRQ      : OFF\n");
	fprintf(f, " Engine QPs      : ibx core/qp\tPort           : %u\n", j->dev->port);
	if (t->kind == VP_BW || !j->server)
		fprintf(f, " TX depth        : %u\n", o->tx_depth);
	if (t->verb == VP_SEND)
		fprintf(f, " RX depth        : %u\n", o->rx_depth);
	if (o->post_list > 1)
		fprintf(f, " Post List       : %u\n", o->post_list);
	if (t->kind == VP_BW)
		fprintf(f, " CQ Moderation   : %u\n", o->cq_mod);
	fprintf(f, " Mtu             : %d[B]\n", ibx_qp_mtu_bytes(j->dev->active_mtu));
	fprintf(f, " Link type       : %s\n",
		j->dev->link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "IB");
	if (j->dev->gid_index >= 0)
		fprintf(f, " GID index       : %d\n", j->dev->gid_index);
	if (t->verb == VP_READ || t->verb == VP_ATOMIC)
		fprintf(f, " Outstand reads  : %u\n", j->out_reads);
	else
		fprintf(f, " Max inline data : %u[B]\n", j->inline_max);
	fprintf(f, " rdma_cm QPs\t : %s\n", o->rdma_cm ? "ON" : "OFF");
	fprintf(f, " Data ex. method : Ethernet\n");
	fputs(RESULT_LINE, f);
	for (unsigned q = 0; q < o->num_qps; q++) {
		const vp_conn_t *c = &j->conns[q];
		const ibx_qp_t *qp = c->qp;

		fprintf(
		    f,
		    " local address: LID %04x QPN 0x%04x PSN 0x%06x RKey 0x%06x VAddr 0x%014llx\n",
		    j->dev->lid, qp->qpn, qp->psn, j->mr->rkey,
		    (unsigned long long)(uintptr_t)c->target);
		print_gid(f, &j->dev->gid);
		fprintf(
		    f,
		    " remote address: LID %04x QPN 0x%04x PSN 0x%06x RKey 0x%06x VAddr 0x%014llx\n",
		    qp->remote.lid, qp->remote.qpn, qp->remote.psn, c->peer.rkey,
		    (unsigned long long)c->peer.addr);
		print_gid(f, &qp->remote.gid);
	}
	fflush(f);
}

/* ---- the driver ------------------------------------------------------------------------- */

static ibx_status_t vp_run_sizes(vp_job_t *j)
{
	const vp_opts_t *o = j->o;
	size_t first = o->all ? VP_ALL_MIN : o->size, last = vp_max_size(o);
	double *samples = NULL;
	ibx_status_t st = IBX_OK;

	if (o->test->kind == VP_LAT) {
		samples = malloc((size_t)o->iters * sizeof(*samples));
		if (!samples)
			return IBX_ERR_NO_MEMORY;
	} else {
		st = vp_bw_init(j, (uint64_t)o->iters * o->num_qps);
		if (st != IBX_OK)
			return st;
	}
	for (size_t size = first; st == IBX_OK && size <= last; size *= 2) {
		if (o->test->kind == VP_LAT) {
			size_t n = 0;

			st = vp_lat_run(j, size, samples, &n);
			if (st == IBX_OK && n)
				ibtest_report_lat(&j->rep, size, o->iters, samples, n);
		} else {
			vp_bw_result_t r;

			st = vp_bw_run(j, size, &r);
			if (st == IBX_OK && r.msgs)
				ibtest_report_bw(&j->rep, size, (unsigned)r.msgs, r.peak_MBps,
						 r.avg_MBps, r.msg_rate_Mpps);
		}
	}
	free(samples);
	if (o->test->kind == VP_BW)
		vp_bw_fini(j);
	return st;
}

static int vp_main(const vp_test_t *t, int argc, char **argv)
{
	vp_opts_t o = {.test = t};
	vp_job_t j = {.o = &o, .ctl = -1};
	ibx_status_t st;
	int rc;

	rc = parse_opts(&o, argc, argv);
	if (rc)
		return rc == 1 ? 0 : 2;
	j.server = o.host == NULL;
	j.out = o.json ? stderr : stdout;
	vp_clock_init();

	st = vp_open(&j);
	if (st == IBX_OK)
		st = j.server ? ctl_accept(&j) : ctl_connect(&j);
	if (st == IBX_OK)
		st = vp_hello(&j);
	if (st == IBX_OK)
		st = vp_alloc(&j);
	if (st == IBX_OK)
		st = vp_connect_qps(&j);
	if (st == IBX_OK) {
		vp_banner(&j);
		ibtest_report_init(&j.rep, t->name, o.json, o.report_gbits);
		st = vp_run_sizes(&j);
		if (st == IBX_OK && !j.rep.header_done)
			fputs(RESULT_LINE, j.out); /* the passive side of read/atomic latency */
		if (st == IBX_OK)
			ibtest_report_end(&j.rep);
		else
			free(j.rep.json_buf);
	}
	if (st != IBX_OK)
		vp_err(&j, "failed: %s", ibx_status_str(st));
	vp_close(&j);
	return st == IBX_OK ? 0 : 1;
}

static int write_lat_main(int argc, char **argv)
{
	return vp_main(&vp_tests[0], argc, argv);
}
static int write_bw_main(int argc, char **argv)
{
	return vp_main(&vp_tests[1], argc, argv);
}
static int read_lat_main(int argc, char **argv)
{
	return vp_main(&vp_tests[2], argc, argv);
}
static int read_bw_main(int argc, char **argv)
{
	return vp_main(&vp_tests[3], argc, argv);
}
static int send_lat_main(int argc, char **argv)
{
	return vp_main(&vp_tests[4], argc, argv);
}
static int send_bw_main(int argc, char **argv)
{
	return vp_main(&vp_tests[5], argc, argv);
}
static int atomic_lat_main(int argc, char **argv)
{
	return vp_main(&vp_tests[6], argc, argv);
}
static int atomic_bw_main(int argc, char **argv)
{
	return vp_main(&vp_tests[7], argc, argv);
}

IBTEST_COMMAND("write_lat", "RDMA write ping-pong latency, server/client (ib_write_lat)",
	       write_lat_main)
IBTEST_COMMAND("write_bw", "RDMA write bandwidth, server/client (ib_write_bw)", write_bw_main)
IBTEST_COMMAND("read_lat", "RDMA read round-trip latency, server/client (ib_read_lat)",
	       read_lat_main)
IBTEST_COMMAND("read_bw", "RDMA read bandwidth, server/client (ib_read_bw)", read_bw_main)
IBTEST_COMMAND("send_lat", "send/recv ping-pong latency, server/client (ib_send_lat)",
	       send_lat_main)
IBTEST_COMMAND("send_bw", "send/recv bandwidth, server/client (ib_send_bw)", send_bw_main)
IBTEST_COMMAND("atomic_lat", "8-byte atomic round-trip latency, server/client (ib_atomic_lat)",
	       atomic_lat_main)
IBTEST_COMMAND("atomic_bw", "8-byte atomic bandwidth, server/client (ib_atomic_bw)", atomic_bw_main)
