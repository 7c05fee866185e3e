/*
 * verbs_opts.c — the command line of ibtest's perftest-class commands:
 * perftest's options where they apply (-d -i -x -p -s -n -a -q -t -r -l -Q
 * -I -o -A -R, --report_gbits; -F accepted and ignored; --json ours), its
 * defaults and the dependencies between them, and the usage text.
 */
#include "verbs_perf.h"

#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>

#define VP_DEF_PORT	     18515 /* -p: TCP side channel and rdma_cm */
#define VP_DEF_SIZE_LAT	     2
#define VP_DEF_SIZE_BW	     65536
#define VP_SIZE_ATOMIC	     8
#define VP_DEF_ITERS_LAT     1000
#define VP_DEF_ITERS_BW	     5000
#define VP_DEF_TX_BW	     128
#define VP_DEF_RX_SEND	     512
#define VP_DEF_CQ_MOD	     100
#define VP_CQ_MOD_SIZE_LIMIT 8192 /* perftest: no CQ moderation above this */
#define VP_SIZE_LIMIT	     (1u << 30)
#define VP_MAX_INLINE	     912 /* perftest's limit for -I */

enum { OPT_GBITS = 256, OPT_JSON };

static const char vp_short_opts[] = "d:i:x:p:s:an:q:t:r:l:Q:I:o:A:RFh";
static const struct option vp_long_opts[] = {
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

/* What one option did to the options: taken, a value out of range or not
 * for this test, an option this test does not have, or --help. */
typedef enum { OPT_TAKEN, OPT_BAD_VALUE, OPT_BAD, OPT_HELP } opt_result_t;

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

static void opts_defaults(vp_opts_t *o)
{
	const vp_test_t *t = o->test;
	bool bw = t->kind == VP_BW;

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
}

/* Applies option @opt (its argument @arg) to @o; *size_set_p records -s. */
static opt_result_t opts_apply(vp_opts_t *o, int opt, const char *arg, bool *size_set_p)
{
	const vp_test_t *t = o->test;
	bool bw = t->kind == VP_BW;
	long v;

	switch (opt) {
	case 'd': o->dev_name = arg; break;
	case 'i':
		if (parse_num(arg, 1, 255, &v))
			return OPT_BAD_VALUE;
		o->ib_port = (int)v;
		break;
	case 'x':
		if (parse_num(arg, 0, 1023, &v))
			return OPT_BAD_VALUE;
		o->gid_index = (int)v;
		break;
	case 'p':
		if (parse_num(arg, 1, 65535, &v))
			return OPT_BAD_VALUE;
		o->tcp_port = (uint16_t)v;
		break;
	case 's':
		if (ibtest_parse_size(arg, 1, VP_SIZE_LIMIT, &o->size))
			return OPT_BAD_VALUE;
		*size_set_p = true;
		break;
	case 'a': o->all = true; break;
	case 'n':
		if (parse_num(arg, 5, 100000000, &v))
			return OPT_BAD_VALUE;
		o->iters = (unsigned)v;
		break;
	case 'q':
		if (parse_num(arg, 1, 16384, &v) || (!bw && v != 1))
			return OPT_BAD_VALUE;
		o->num_qps = (unsigned)v;
		break;
	case 't':
		if (!bw || parse_num(arg, 1, 15000, &v))
			return OPT_BAD_VALUE;
		o->tx_depth = (unsigned)v;
		break;
	case 'r':
		if (t->verb != VP_SEND || parse_num(arg, 1, 16384, &v))
			return OPT_BAD_VALUE;
		o->rx_depth = (unsigned)v;
		break;
	case 'l':
		if (!bw || parse_num(arg, 1, 1024, &v))
			return OPT_BAD_VALUE;
		o->post_list = (unsigned)v;
		break;
	case 'Q':
		if (!bw || parse_num(arg, 1, 1024, &v))
			return OPT_BAD_VALUE;
		o->cq_mod = (unsigned)v;
		o->cq_mod_set = true;
		break;
	case 'I':
		if (parse_num(arg, 0, VP_MAX_INLINE, &v))
			return OPT_BAD_VALUE;
		o->inline_req = (int)v;
		break;
	case 'o':
		if (parse_num(arg, 1, 65536, &v))
			return OPT_BAD_VALUE;
		o->out_reads = (int)v;
		break;
	case 'A':
		if (t->verb != VP_ATOMIC)
			return OPT_BAD_VALUE;
		if (!strcmp(arg, "FETCH_AND_ADD"))
			o->atomic = VP_FETCH_AND_ADD;
		else if (!strcmp(arg, "CMP_AND_SWAP"))
			o->atomic = VP_CMP_AND_SWAP;
		else
			return OPT_BAD_VALUE;
		break;
	case 'R': o->rdma_cm = true; break;
	case 'F': break;
	case OPT_GBITS:
		if (!bw)
			return OPT_BAD;
		o->report_gbits = true;
		break;
	case OPT_JSON: o->json = true; break;
	case 'h': return OPT_HELP;
	default: return OPT_BAD;
	}
	return OPT_TAKEN;
}

/* Options that contradict each other or the test; prints why, returns 2. */
static int opts_check(const vp_opts_t *o, bool size_set)
{
	const vp_test_t *t = o->test;

	if (t->verb == VP_ATOMIC && size_set && o->size != VP_SIZE_ATOMIC) {
		fprintf(stderr,
			"ibtest %s: message size cannot be changed for atomic tests (8 B)\n",
			t->name);
		return 2;
	}
	if (o->post_list > 1 && o->iters % o->post_list) {
		fprintf(stderr,
			"ibtest %s: the iteration count must be a multiple of the post "
			"list size (-l %u)\n",
			t->name, o->post_list);
		return 2;
	}
	if (o->post_list > 1 && o->cq_mod_set && o->post_list % o->cq_mod) {
		fprintf(stderr,
			"ibtest %s: the post list size must be a multiple of the CQ "
			"moderation (-Q)\n",
			t->name);
		return 2;
	}
	return 0;
}

/* perftest's dependencies between the defaults */
static void opts_derive(vp_opts_t *o)
{
	if (o->test->verb == VP_ATOMIC)
		o->all = false; /* -a: the one size atomics have */
	if (o->tx_depth > o->iters)
		o->tx_depth = o->iters;
	if (o->rx_depth > o->iters)
		o->rx_depth = o->iters;
	if (o->test->kind != VP_BW) {
		o->cq_mod = 1;
	} else {
		if (o->size > VP_CQ_MOD_SIZE_LIMIT && !o->all && !o->cq_mod_set)
			o->cq_mod = 1;
		if (o->cq_mod > o->tx_depth)
			o->cq_mod = o->tx_depth;
		if (o->post_list > 1 && !o->cq_mod_set)
			o->cq_mod = o->post_list;
	}
}

int vp_parse_opts(vp_opts_t *o, int argc, char **argv)
{
	const vp_test_t *t = o->test;
	bool size_set = false;
	int opt;

	opts_defaults(o);
	optind = 1;
	while ((opt = getopt_long(argc, argv, vp_short_opts, vp_long_opts, NULL)) != -1) {
		switch (opts_apply(o, opt, optarg, &size_set)) {
		case OPT_TAKEN: break;
		case OPT_HELP: usage(t, stdout); return 1;
		case OPT_BAD_VALUE:
			fprintf(stderr, "ibtest %s: bad or unsupported value for -%c: '%s'\n",
				t->name, opt, optarg ? optarg : "");
			usage(t, stderr);
			return 2;
		case OPT_BAD: usage(t, stderr); return 2;
		}
	}
	if (optind < argc)
		o->host = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "ibtest %s: unexpected argument '%s'\n", t->name, argv[optind]);
		usage(t, stderr);
		return 2;
	}
	if (opts_check(o, size_set))
		return 2;
	opts_derive(o);
	return 0;
}
