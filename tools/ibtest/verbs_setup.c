/*
 * verbs_setup.c — how the two sides of ibtest's perftest-class commands get
 * ready to measure: the parameter handshake over the side channel (HELLO /
 * REPLY: both run the same test with the same sizes, iterations and QPs,
 * and agree on outstanding reads), the device, the registered buffer and
 * CQs, the QPs with the exchange of their address records and target
 * regions (MEM), and the tear-down of all of it.
 */
#include "verbs_perf.h"

#include <stdlib.h>
#include <unistd.h>

/* perftest's inline defaults for latency tests on devices it knows */
#define VP_INLINE_WRITE	   220
#define VP_INLINE_SEND	   236
#define VP_VENDOR_MELLANOX 0x02c9
#define VP_CM_TIMEOUT_MS   30000

/* ---- side-channel wire format (big-endian) --------------------------------
 * HELLO  0 "IBXV"  4 u8 version  5 u8 test id  6 u8 flags (1: -a, 2: -R)
 *        7 u8 atomic type  8 be64 size  16 be32 iters  20 be32 QPs
 *        24 be32 outstanding reads (this side's, after the device's limit)
 * REPLY  0 "IBXV"  4 u8 status (0 ok)  8 be32 reads  12 message[116]
 * MEM    0 ibx_qp_addr record[32] (zero with -R)  32 be64 addr  40 be32 rkey
 *        44 be64 length
 * RESULT 0 be64 peak  8 be64 avg  16 be64 rate (IEEE doubles)  24 be64 msgs
 *        (verbs_bw.c) */
#define VP_MAGIC     "IBXV"
#define VP_VERSION   1
#define VP_HELLO_LEN 32
#define VP_REPLY_LEN 128
#define VP_MEM_LEN   56

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

/* Client: sends HELLO and reads the server's REPLY; *peer_reads_p gets
 * the server's outstanding reads. */
static ibx_status_t hello_client(vp_job_t *j, unsigned *peer_reads_p)
{
	uint8_t hello[VP_HELLO_LEN], reply[VP_REPLY_LEN];
	ibx_status_t st;

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
	*peer_reads_p = vp_get_be32(reply + 8);
	return IBX_OK;
}

/* Server: checks the client's HELLO and answers it, with the reason when
 * it refuses (the client prints it too); *peer_reads_p gets the client's
 * outstanding reads. */
static ibx_status_t hello_server(vp_job_t *j, unsigned *peer_reads_p)
{
	uint8_t hello[VP_HELLO_LEN], reply[VP_REPLY_LEN];
	char msg[64];
	const char *why;
	ibx_status_t st;

	st = vp_ctl_recv(j, hello, sizeof(hello));
	if (st != IBX_OK)
		return st;
	why = hello_mismatch(j, hello, msg, sizeof(msg));
	memset(reply, 0, sizeof(reply));
	memcpy(reply, VP_MAGIC, 4);
	reply[4] = why ? 1 : 0;
	vp_put_be32(reply + 8, j->out_reads);
	if (why)
		snprintf((char *)reply + 12, VP_REPLY_LEN - 12, "%.*s", VP_REPLY_LEN - 13, why);
	st = vp_ctl_send(j, reply, sizeof(reply));
	if (st != IBX_OK)
		return st;
	if (why) {
		vp_err(j, "refusing the client: %s", why);
		return IBX_ERR_INVALID_PARAM;
	}
	*peer_reads_p = vp_get_be32(hello + 24);
	return IBX_OK;
}

/* Afterwards both sides use the smaller number of outstanding
 * reads/atomics, so that no initiator has more in flight than its
 * responder accepts. */
ibx_status_t vp_hello(vp_job_t *j)
{
	unsigned peer_reads;
	ibx_status_t st;

	st = j->server ? hello_server(j, &peer_reads) : hello_client(j, &peer_reads);
	if (st != IBX_OK)
		return st;
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

ibx_status_t vp_open(vp_job_t *j)
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

ibx_status_t vp_alloc(vp_job_t *j)
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

static ibx_qp_init_attr_t vp_qp_attr(const vp_job_t *j, unsigned inline_req)
{
	const vp_opts_t *o = j->o;
	ibx_qp_init_attr_t ia = IBX_QP_INIT_ATTR_DEFAULT(j->scq);

	ia.recv_cq = j->rcq;
	ia.max_send_wr = o->tx_depth + o->post_list;
	ia.max_recv_wr = o->test->verb == VP_SEND ? o->rx_depth : 1;
	ia.max_send_sge = 1;
	ia.max_recv_sge = 1;
	ia.max_inline = inline_req;
	ia.max_rd_atomic = (int)j->out_reads;
	return ia;
}

/* QP @q: created (INIT), or with -R accepted / connected through rdma_cm. */
static ibx_status_t vp_qp_open(vp_job_t *j, const ibx_qp_init_attr_t *ia, unsigned q)
{
	const vp_opts_t *o = j->o;
	vp_conn_t *c = &j->conns[q];
	ibx_status_t st;

	if (!o->rdma_cm)
		st = ibx_qp_create(j->dev, ia, &c->qp);
	else if (j->server)
		st = ibx_qp_cm_accept(j->listener, j->dev, ia, NULL, 0, NULL, NULL,
				      VP_CM_TIMEOUT_MS, &c->qp);
	else
		st = ibx_qp_cm_connect(o->host, o->tcp_port, j->dev, ia, NULL, 0, NULL, NULL,
				       VP_CM_TIMEOUT_MS, &c->qp);
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
	return IBX_OK;
}

/* Swaps MEM records for @c: sets its peer region; @theirs keeps the
 * peer's record (its QP address record, unless -R). */
static ibx_status_t vp_mem_exchange(vp_job_t *j, vp_conn_t *c, uint8_t theirs[VP_MEM_LEN])
{
	uint8_t mine[VP_MEM_LEN];
	ibx_status_t st;

	vp_mem_pack(j, c, mine);
	st = vp_ctl_send(j, mine, sizeof(mine));
	if (st == IBX_OK)
		st = vp_ctl_recv(j, theirs, VP_MEM_LEN);
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
	return IBX_OK;
}

/* One QP from creation to RTS (rdma_cm has connected it already). */
static ibx_status_t vp_connect_one(vp_job_t *j, const ibx_qp_init_attr_t *ia, unsigned q)
{
	vp_conn_t *c = &j->conns[q];
	uint8_t theirs[VP_MEM_LEN];
	ibx_qp_addr_t remote;
	ibx_status_t st;

	st = vp_qp_open(j, ia, q);
	if (st == IBX_OK)
		st = vp_mem_exchange(j, c, theirs);
	if (st != IBX_OK || j->o->rdma_cm)
		return st;
	st = ibx_qp_addr_unpack(theirs, &remote);
	if (st == IBX_OK)
		st = ibx_qp_connect(c->qp, &remote, NULL);
	if (st != IBX_OK)
		vp_err(j, "cannot connect QP %u: %s", q, ibx_status_str(st));
	return st;
}

ibx_status_t vp_connect_qps(vp_job_t *j)
{
	const vp_opts_t *o = j->o;
	unsigned inline_req = vp_default_inline(j);
	ibx_qp_init_attr_t ia = vp_qp_attr(j, inline_req);
	ibx_status_t st;

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
		st = vp_connect_one(j, &ia, q);
		if (st != IBX_OK)
			return st;
	}
	/* both sides in RTS before anything is posted */
	return vp_barrier(j);
}

void vp_close(vp_job_t *j)
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
