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
 *
 * This file holds the commands and their driver (set-up in order, banner,
 * one size after another, tear-down) with the helpers every other piece
 * uses (time stamps, error lines, completion checks, receive posting); the
 * pieces are listed in verbs_perf.h.
 */
#include "verbs_perf.h"

#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#define RESULT_LINE                                                                                \
	"---------------------------------------------------------------------------------------"  \
	"\n"

static const vp_test_t vp_tests[] = {
    {"write_lat", VP_WRITE, VP_LAT, 1},	  {"write_bw", VP_WRITE, VP_BW, 2},
    {"read_lat", VP_READ, VP_LAT, 3},	  {"read_bw", VP_READ, VP_BW, 4},
    {"send_lat", VP_SEND, VP_LAT, 5},	  {"send_bw", VP_SEND, VP_BW, 6},
    {"atomic_lat", VP_ATOMIC, VP_LAT, 7}, {"atomic_bw", VP_ATOMIC, VP_BW, 8},
};

/* ---- small helpers --------------------------------------------------------- */

void vp_err(const vp_job_t *j, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ibtest %s (%s): ", j->o->test->name, j->server ? "server" : "client");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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

	rc = vp_parse_opts(&o, argc, argv);
	if (rc)
		return rc == 1 ? 0 : 2;
	j.server = o.host == NULL;
	j.out = o.json ? stderr : stdout;
	ibtest_clock_init();

	st = vp_open(&j);
	if (st == IBX_OK)
		st = j.server ? vp_ctl_accept(&j) : vp_ctl_connect(&j);
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
