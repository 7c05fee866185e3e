/*
 * test_verbs_qp.c — core/qp's low-level verbs layer on a real device: two RC
 * QPs of one process connected to each other through the one device
 * (loopback), every operation with its data checked, list posting,
 * completion errors turned into ibx errors, and rdma_cm connect/accept
 * between two processes.
 *
 * Needs a verbs device (the Soft-RoCE VM: tests/rxe/run-in-vm.sh); every
 * case skips when there is none.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "qp/qp.h"
#include "qp/sendq.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define WAIT_MS 20000

typedef struct pair {
	ibx_qp_dev_t *dev;
	ibx_qp_cq_t *cq;
	ibx_qp_t *a, *b;
	char *abuf, *bbuf; /* 64 KiB each */
	struct ibv_mr *amr, *bmr;
} pair_t;

static int pair_setup(void **state)
{
	pair_t *p;
	ibx_qp_init_attr_t ia;
	ibx_qp_addr_t aa, ba;

	if (!ibx_qp_dev_available()) {
		*state = NULL;
		return 0;
	}
	p = calloc(1, sizeof(*p));
	assert_non_null(p);
	assert_int_equal(ibx_qp_dev_open(NULL, -1, &p->dev), IBX_OK);
	assert_int_equal(ibx_qp_cq_create(p->dev, 512, &p->cq), IBX_OK);
	ia = IBX_QP_INIT_ATTR_DEFAULT(p->cq);
	ia.max_send_sge = 4;
	assert_int_equal(ibx_qp_create(p->dev, &ia, &p->a), IBX_OK);
	assert_int_equal(ibx_qp_create(p->dev, &ia, &p->b), IBX_OK);
	ibx_qp_local_addr(p->a, &aa);
	ibx_qp_local_addr(p->b, &ba);
	assert_int_equal(ibx_qp_connect(p->a, &ba, NULL), IBX_OK);
	assert_int_equal(ibx_qp_connect(p->b, &aa, NULL), IBX_OK);
	assert_int_equal(posix_memalign((void **)&p->abuf, 4096, 65536), 0);
	assert_int_equal(posix_memalign((void **)&p->bbuf, 4096, 65536), 0);
	memset(p->abuf, 0, 65536);
	memset(p->bbuf, 0, 65536);
	assert_int_equal(ibx_qp_mr_reg(p->dev, p->abuf, 65536, IBX_QP_ACCESS_ALL, &p->amr), IBX_OK);
	assert_int_equal(ibx_qp_mr_reg(p->dev, p->bbuf, 65536, IBX_QP_ACCESS_ALL, &p->bmr), IBX_OK);
	*state = p;
	return 0;
}

static int pair_teardown(void **state)
{
	pair_t *p = *state;

	if (!p)
		return 0;
	ibx_qp_destroy(p->a);
	ibx_qp_destroy(p->b);
	ibx_qp_mr_dereg(p->amr);
	ibx_qp_mr_dereg(p->bmr);
	ibx_qp_cq_destroy(p->cq);
	ibx_qp_dev_close(p->dev);
	free(p->abuf);
	free(p->bbuf);
	free(p);
	return 0;
}

#define NEED_DEVICE(p)                                                                             \
	do {                                                                                       \
		if (!(p)) {                                                                        \
			print_message("no verbs device\n");                                        \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/* One completion, successful, with @wr_id. */
static struct ibv_wc wait_one(ibx_qp_cq_t *cq, uint64_t wr_id)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	assert_int_equal(ibx_qp_cq_wait(cq, &wc, 1, WAIT_MS), 1);
	if (wc.status != IBV_WC_SUCCESS)
		fail_msg("completion failed: %s", ibv_wc_status_str(wc.status));
	assert_int_equal(wc.wr_id, wr_id);
	return wc;
}

static void fill(char *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (char)(seed * 131 + i * 7 + (i >> 8));
}

static void test_device_and_connect(void **state)
{
	pair_t *p = *state;
	ibx_qp_addr_t a, back;
	uint8_t wire[IBX_QP_ADDR_WIRE_LEN];
	char desc[160];

	NEED_DEVICE(p);
	ibx_qp_dev_describe(p->dev, desc, sizeof(desc));
	print_message("device: %s\n", desc);
	assert_int_equal(p->a->state, IBX_QP_STATE_RTS);
	assert_int_equal(p->b->state, IBX_QP_STATE_RTS);
	assert_int_equal(p->a->remote.qpn, p->b->qpn);
	assert_true(ibx_qp_mtu_bytes(p->dev->active_mtu) >= 256);
	if (p->dev->link_layer == IBV_LINK_LAYER_ETHERNET) {
		/* RoCE: the default GID is the RoCEv2 IPv4-mapped one */
		struct ibv_gid_entry e;

		assert_true(p->dev->gid_index >= 0);
		assert_int_equal(
		    ibv_query_gid_ex(p->dev->ctx, p->dev->port, (uint32_t)p->dev->gid_index, &e, 0),
		    0);
		assert_int_equal(e.gid_type, IBV_GID_TYPE_ROCE_V2);
		assert_int_equal(p->dev->gid.raw[10], 0xff);
		assert_int_equal(p->dev->gid.raw[11], 0xff);
	}
	/* the wire record round-trips and rejects garbage */
	ibx_qp_local_addr(p->a, &a);
	ibx_qp_addr_pack(&a, wire);
	assert_int_equal(ibx_qp_addr_unpack(wire, &back), IBX_OK);
	assert_int_equal(back.qpn, a.qpn);
	assert_int_equal(back.psn, a.psn);
	assert_int_equal(back.lid, a.lid);
	assert_memory_equal(back.gid.raw, a.gid.raw, 16);
	wire[0] ^= 1;
	assert_int_equal(ibx_qp_addr_unpack(wire, &back), IBX_ERR_CORRUPT);
	/* connecting twice is refused */
	assert_int_equal(ibx_qp_connect(p->a, &a, NULL), IBX_ERR_INVALID_PARAM);
	/* a named device that does not exist */
	ibx_qp_dev_t *d = NULL;
	assert_int_equal(ibx_qp_dev_open("nosuchdev:1", -1, &d), IBX_ERR_NO_DEVICE);
	char spec[80];
	snprintf(spec, sizeof(spec), "%s:%u", p->dev->name, p->dev->port);
	assert_int_equal(ibx_qp_dev_open(spec, p->dev->gid_index, &d), IBX_OK);
	assert_int_equal(d->gid_index, p->dev->gid_index);
	ibx_qp_dev_close(d);
}

static void test_write_gather(void **state)
{
	pair_t *p = *state;
	struct ibv_sge sge[3];

	NEED_DEVICE(p);
	fill(p->abuf, 65536, 1);
	memset(p->bbuf, 0, 65536);
	/* three blocks scattered in a's buffer -> one contiguous run in b's */
	sge[0] = (struct ibv_sge){(uintptr_t)(p->abuf + 100), 1000, p->amr->lkey};
	sge[1] = (struct ibv_sge){(uintptr_t)(p->abuf + 5000), 3, p->amr->lkey};
	sge[2] = (struct ibv_sge){(uintptr_t)(p->abuf + 20000), 7000, p->amr->lkey};
	assert_int_equal(ibx_qp_post_write(p->a, sge, 3, (uintptr_t)(p->bbuf + 64), p->bmr->rkey,
					   11, IBX_QP_SIGNALED),
			 IBX_OK);
	wait_one(p->cq, 11);
	assert_memory_equal(p->bbuf + 64, p->abuf + 100, 1000);
	assert_memory_equal(p->bbuf + 1064, p->abuf + 5000, 3);
	assert_memory_equal(p->bbuf + 1067, p->abuf + 20000, 7000);
	assert_int_equal(p->bbuf[63], 0);
	assert_int_equal(p->bbuf[8067], 0);

	/* a small gather posted inline: the lkeys are not even looked at */
	sge[0] = (struct ibv_sge){(uintptr_t) "abc", 3, 0};
	sge[1] = (struct ibv_sge){(uintptr_t) "defgh", 5, 0};
	assert_int_equal(ibx_qp_post_write(p->a, sge, 2, (uintptr_t)p->bbuf, p->bmr->rkey, 12,
					   IBX_QP_SIGNALED | IBX_QP_INLINE),
			 IBX_OK);
	wait_one(p->cq, 12);
	assert_memory_equal(p->bbuf, "abcdefgh", 8);
}

static void test_read_scatter(void **state)
{
	pair_t *p = *state;
	struct ibv_sge sge[3];

	NEED_DEVICE(p);
	fill(p->bbuf, 65536, 2);
	memset(p->abuf, 0, 65536);
	sge[0] = (struct ibv_sge){(uintptr_t)(p->abuf + 8), 4096, p->amr->lkey};
	sge[1] = (struct ibv_sge){(uintptr_t)(p->abuf + 30000), 1, p->amr->lkey};
	sge[2] = (struct ibv_sge){(uintptr_t)(p->abuf + 40000), 10000, p->amr->lkey};
	assert_int_equal(ibx_qp_post_read(p->a, sge, 3, (uintptr_t)(p->bbuf + 3), p->bmr->rkey, 21,
					  IBX_QP_SIGNALED),
			 IBX_OK);
	wait_one(p->cq, 21);
	assert_memory_equal(p->abuf + 8, p->bbuf + 3, 4096);
	assert_memory_equal(p->abuf + 30000, p->bbuf + 3 + 4096, 1);
	assert_memory_equal(p->abuf + 40000, p->bbuf + 3 + 4097, 10000);
	assert_int_equal(p->abuf[7], 0);
	assert_int_equal(p->abuf[30001], 0);
}

static void test_send_recv(void **state)
{
	pair_t *p = *state;
	struct ibv_sge rs, ss;
	struct ibv_wc wc[2];
	int got = 0;

	NEED_DEVICE(p);
	rs = (struct ibv_sge){(uintptr_t)p->bbuf, 16384, p->bmr->lkey};
	memset(p->bbuf, 0, 65536);
	fill(p->abuf, 16384, 3);
	assert_int_equal(ibx_qp_post_recv(p->b, &rs, 1, 31), IBX_OK);
	rs.addr = (uintptr_t)(p->bbuf + 32768);
	assert_int_equal(ibx_qp_post_recv(p->b, &rs, 1, 32), IBX_OK);
	/* one inline and one from registered memory, in this order */
	ss = (struct ibv_sge){(uintptr_t)p->abuf, 40, 0};
	assert_int_equal(ibx_qp_post_send(p->a, &ss, 1, 33, IBX_QP_INLINE), IBX_OK);
	ss = (struct ibv_sge){(uintptr_t)(p->abuf + 100), 12000, p->amr->lkey};
	assert_int_equal(ibx_qp_post_send(p->a, &ss, 1, 34, IBX_QP_SIGNALED), IBX_OK);
	/* receives (b) and the one signalled send (a) */
	while (got < 3) {
		int n = ibx_qp_cq_wait(p->cq, wc, 1, WAIT_MS);
		assert_int_equal(n, 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		if (wc[0].wr_id == 31) {
			assert_int_equal(wc[0].opcode, IBV_WC_RECV);
			assert_int_equal(wc[0].byte_len, 40);
			assert_int_equal(wc[0].qp_num, p->b->qpn);
		} else if (wc[0].wr_id == 32) {
			assert_int_equal(wc[0].byte_len, 12000);
		} else {
			assert_int_equal(wc[0].wr_id, 34);
			assert_int_equal(wc[0].opcode, IBV_WC_SEND);
		}
		got++;
	}
	assert_memory_equal(p->bbuf, p->abuf, 40);
	assert_memory_equal(p->bbuf + 32768, p->abuf + 100, 12000);
}

static void test_write_imm(void **state)
{
	pair_t *p = *state;
	struct ibv_sge rs, ss;
	struct ibv_wc wc;
	bool seen_recv = false, seen_send = false;

	NEED_DEVICE(p);
	rs = (struct ibv_sge){(uintptr_t)p->bbuf, 0, 0};
	memset(p->bbuf, 0, 65536);
	fill(p->abuf, 4096, 4);
	assert_int_equal(ibx_qp_post_recv(p->b, &rs, 1, 41), IBX_OK);
	ss = (struct ibv_sge){(uintptr_t)p->abuf, 3000, p->amr->lkey};
	assert_int_equal(ibx_qp_post_write_imm(p->a, &ss, 1, (uintptr_t)(p->bbuf + 512),
					       p->bmr->rkey, 0xdeadbeef, 42, IBX_QP_SIGNALED),
			 IBX_OK);
	while (!seen_recv || !seen_send) {
		assert_int_equal(ibx_qp_cq_wait(p->cq, &wc, 1, WAIT_MS), 1);
		assert_int_equal(wc.status, IBV_WC_SUCCESS);
		if (wc.wr_id == 41) {
			assert_int_equal(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
			assert_true(wc.wc_flags & IBV_WC_WITH_IMM);
			assert_int_equal(be32toh(wc.imm_data), 0xdeadbeef);
			assert_int_equal(wc.byte_len, 3000);
			seen_recv = true;
		} else {
			assert_int_equal(wc.wr_id, 42);
			seen_send = true;
		}
	}
	assert_memory_equal(p->bbuf + 512, p->abuf, 3000);
}

static void test_atomics(void **state)
{
	pair_t *p = *state;
	uint64_t *remote, *result;
	struct ibv_sge s;

	NEED_DEVICE(p);
	if (p->dev->attr.atomic_cap == IBV_ATOMIC_NONE)
		skip();
	remote = (uint64_t *)(p->bbuf + 4096);
	result = (uint64_t *)(p->abuf + 8192);
	s = (struct ibv_sge){(uintptr_t)result, 8, p->amr->lkey};
	*remote = 5;
	*result = 0;
	assert_int_equal(ibx_qp_post_fetch_add(p->a, &s, (uintptr_t)remote, p->bmr->rkey, 7, 51,
					       IBX_QP_SIGNALED),
			 IBX_OK);
	wait_one(p->cq, 51);
	assert_int_equal(*result, 5);
	assert_int_equal(*remote, 12);

	/* large values: the whole 64 bits, in host order */
	*remote = 0x1122334455667788ull;
	assert_int_equal(ibx_qp_post_fetch_add(p->a, &s, (uintptr_t)remote, p->bmr->rkey,
					       0x0100000000000001ull, 52, IBX_QP_SIGNALED),
			 IBX_OK);
	wait_one(p->cq, 52);
	assert_int_equal(*result, 0x1122334455667788ull);
	assert_int_equal(*remote, 0x1222334455667789ull);

	assert_int_equal(ibx_qp_post_cswap(p->a, &s, (uintptr_t)remote, p->bmr->rkey,
					   0x1222334455667789ull, 99, 53, IBX_QP_SIGNALED),
			 IBX_OK);
	wait_one(p->cq, 53);
	assert_int_equal(*result, 0x1222334455667789ull);
	assert_int_equal(*remote, 99);
	/* a failing compare leaves the target alone and returns its value */
	assert_int_equal(
	    ibx_qp_post_cswap(p->a, &s, (uintptr_t)remote, p->bmr->rkey, 1, 2, 54, IBX_QP_SIGNALED),
	    IBX_OK);
	wait_one(p->cq, 54);
	assert_int_equal(*result, 99);
	assert_int_equal(*remote, 99);
}

static void test_list_post(void **state)
{
	pair_t *p = *state;
	enum { N = 24 };
	struct ibv_send_wr wr[N];
	struct ibv_sge sge[N];
	struct ibv_wc wc[4];
	int i;

	NEED_DEVICE(p);
	fill(p->abuf, 65536, 5);
	memset(p->bbuf, 0, 65536);
	/* N writes (block i of 100 bytes lands at 1000*i), only the last
	 * signalled: one completion for the whole list */
	for (i = 0; i < N; i++) {
		sge[i] = (struct ibv_sge){(uintptr_t)(p->abuf + 2000 * i), 100, p->amr->lkey};
		ibx_qp_wr_write(&wr[i], &sge[i], 1, (uintptr_t)(p->bbuf + 1000 * i), p->bmr->rkey,
				(uint64_t)(100 + i), i == N - 1 ? IBX_QP_SIGNALED : 0);
		if (i)
			wr[i - 1].next = &wr[i];
	}
	assert_int_equal(ibx_qp_post_list(p->a, wr, NULL), IBX_OK);
	wait_one(p->cq, 100 + N - 1);
	for (i = 0; i < N; i++)
		assert_memory_equal(p->bbuf + 1000 * i, p->abuf + 2000 * i, 100);
	/* nothing else completes */
	usleep(10000);
	assert_int_equal(ibx_qp_cq_poll(p->cq, wc, 4), 0);

	/* a mixed list: send, write with immediate, read */
	struct ibv_sge rs[2] = {{(uintptr_t)(p->bbuf + 40000), 64, p->bmr->lkey},
				{(uintptr_t)(p->bbuf + 40100), 64, p->bmr->lkey}};
	assert_int_equal(ibx_qp_post_recv(p->b, &rs[0], 1, 201), IBX_OK);
	assert_int_equal(ibx_qp_post_recv(p->b, &rs[1], 1, 202), IBX_OK);
	sge[0] = (struct ibv_sge){(uintptr_t)p->abuf, 32, p->amr->lkey};
	sge[1] = (struct ibv_sge){(uintptr_t)(p->abuf + 64), 16, p->amr->lkey};
	sge[2] = (struct ibv_sge){(uintptr_t)(p->abuf + 50000), 256, p->amr->lkey};
	ibx_qp_wr_send(&wr[0], &sge[0], 1, 301, 0);
	ibx_qp_wr_write_imm(&wr[1], &sge[1], 1, (uintptr_t)(p->bbuf + 41000), p->bmr->rkey, 7, 302,
			    0);
	ibx_qp_wr_read(&wr[2], &sge[2], 1, (uintptr_t)(p->bbuf + 1000), p->bmr->rkey, 303,
		       IBX_QP_SIGNALED);
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	assert_int_equal(ibx_qp_post_list(p->a, wr, NULL), IBX_OK);
	int seen = 0;
	while (seen != 7) {
		assert_int_equal(ibx_qp_cq_wait(p->cq, wc, 1, WAIT_MS), 1);
		assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
		switch (wc[0].wr_id) {
		case 201:
			assert_int_equal(wc[0].byte_len, 32);
			seen |= 1;
			break;
		case 202:
			assert_int_equal(be32toh(wc[0].imm_data), 7);
			seen |= 2;
			break;
		case 303: seen |= 4; break;
		default: fail_msg("unexpected completion %llu", (unsigned long long)wc[0].wr_id);
		}
	}
	assert_memory_equal(p->bbuf + 40000, p->abuf, 32);
	assert_memory_equal(p->bbuf + 41000, p->abuf + 64, 16);
	assert_memory_equal(p->abuf + 50000, p->bbuf + 1000, 256);
}

/* A fresh connected pair for the error cases (an error kills the QP). */
static void fresh_pair(pair_t *p, ibx_qp_t **a_p, ibx_qp_t **b_p)
{
	ibx_qp_init_attr_t ia = IBX_QP_INIT_ATTR_DEFAULT(p->cq);
	ibx_qp_addr_t aa, ba;

	assert_int_equal(ibx_qp_create(p->dev, &ia, a_p), IBX_OK);
	assert_int_equal(ibx_qp_create(p->dev, &ia, b_p), IBX_OK);
	ibx_qp_local_addr(*a_p, &aa);
	ibx_qp_local_addr(*b_p, &ba);
	assert_int_equal(ibx_qp_connect(*a_p, &ba, NULL), IBX_OK);
	assert_int_equal(ibx_qp_connect(*b_p, &aa, NULL), IBX_OK);
}

static void drain(ibx_qp_cq_t *cq)
{
	struct ibv_wc wc[16];

	usleep(20000);
	while (ibx_qp_cq_poll(cq, wc, 16) > 0)
		;
}

static void test_bad_rkey(void **state)
{
	pair_t *p = *state;
	ibx_qp_t *a, *b;
	struct ibv_sge s;
	struct ibv_wc wc;
	uint64_t *result;

	NEED_DEVICE(p);
	fresh_pair(p, &a, &b);
	s = (struct ibv_sge){(uintptr_t)p->abuf, 64, p->amr->lkey};
	/* unsignalled: error completions are generated all the same */
	assert_int_equal(
	    ibx_qp_post_write(a, &s, 1, (uintptr_t)p->bbuf, p->bmr->rkey ^ 0x5a5a00, 61, 0),
	    IBX_OK);
	assert_int_equal(ibx_qp_cq_wait(p->cq, &wc, 1, WAIT_MS), 1);
	assert_int_equal(wc.wr_id, 61);
	assert_int_equal(wc.status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(ibx_qp_wc_status(wc.status), IBX_ERR_REMOTE_ACCESS);
	print_message("bad rkey: %s\n", ibv_wc_status_str(wc.status));
	ibx_qp_destroy(a);
	ibx_qp_destroy(b);
	drain(p->cq);

	/* an address outside the registered range is an access error too */
	fresh_pair(p, &a, &b);
	result = (uint64_t *)p->abuf;
	s = (struct ibv_sge){(uintptr_t)result, 8, p->amr->lkey};
	assert_int_equal(ibx_qp_post_fetch_add(a, &s, (uintptr_t)(p->bbuf + 65536 + 4096),
					       p->bmr->rkey, 1, 62, IBX_QP_SIGNALED),
			 IBX_OK);
	assert_int_equal(ibx_qp_cq_wait(p->cq, &wc, 1, WAIT_MS), 1);
	assert_int_equal(wc.wr_id, 62);
	assert_int_not_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(ibx_qp_wc_status(wc.status), IBX_ERR_REMOTE_ACCESS);
	ibx_qp_destroy(a);
	ibx_qp_destroy(b);
	drain(p->cq);
}

static void test_deregistered_buffer(void **state)
{
	pair_t *p = *state;
	ibx_qp_t *a, *b;
	struct ibv_mr *mr;
	struct ibv_sge s;
	struct ibv_wc wc;
	char *buf;
	uint32_t lkey, rkey;

	NEED_DEVICE(p);
	buf = malloc(8192);
	assert_non_null(buf);
	assert_int_equal(ibx_qp_mr_reg(p->dev, buf, 8192, IBX_QP_ACCESS_ALL, &mr), IBX_OK);
	lkey = mr->lkey;
	rkey = mr->rkey;
	ibx_qp_mr_dereg(mr);

	/* local side: a stale lkey */
	fresh_pair(p, &a, &b);
	s = (struct ibv_sge){(uintptr_t)buf, 4096, lkey};
	assert_int_equal(
	    ibx_qp_post_write(a, &s, 1, (uintptr_t)p->bbuf, p->bmr->rkey, 71, IBX_QP_SIGNALED),
	    IBX_OK);
	assert_int_equal(ibx_qp_cq_wait(p->cq, &wc, 1, WAIT_MS), 1);
	assert_int_equal(wc.wr_id, 71);
	assert_int_not_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_not_equal(ibx_qp_wc_status(wc.status), IBX_OK);
	print_message("stale lkey: %s\n", ibv_wc_status_str(wc.status));
	ibx_qp_destroy(a);
	ibx_qp_destroy(b);
	drain(p->cq);

	/* remote side: a stale rkey */
	fresh_pair(p, &a, &b);
	s = (struct ibv_sge){(uintptr_t)p->abuf, 256, p->amr->lkey};
	assert_int_equal(ibx_qp_post_read(a, &s, 1, (uintptr_t)buf, rkey, 72, IBX_QP_SIGNALED),
			 IBX_OK);
	assert_int_equal(ibx_qp_cq_wait(p->cq, &wc, 1, WAIT_MS), 1);
	assert_int_equal(wc.wr_id, 72);
	assert_int_not_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(ibx_qp_wc_status(wc.status), IBX_ERR_REMOTE_ACCESS);
	ibx_qp_destroy(a);
	ibx_qp_destroy(b);
	drain(p->cq);
	free(buf);
}

/* ---- rdma_cm: a forked server, the parent connects -------------------- */

static const char CM_MSG[] = "hello over rdma_cm";

static int cm_server(uint16_t port, int ready_fd)
{
	ibx_qp_cm_listener_t *l;
	ibx_qp_dev_t *dev;
	ibx_qp_cq_t *cq;
	ibx_qp_t *qp;
	ibx_qp_init_attr_t ia;
	char buf[256], peer[IBX_QP_CM_PRIV_MAX];
	size_t plen = 0;
	struct ibv_mr *mr;
	struct ibv_sge s;
	struct ibv_wc wc;
	uint32_t mine[3];

	if (ibx_qp_dev_open(NULL, -1, &dev) || ibx_qp_cq_create(dev, 64, &cq))
		return 10;
	memset(buf, 0, sizeof(buf));
	if (ibx_qp_mr_reg(dev, buf, sizeof(buf), IBX_QP_ACCESS_ALL, &mr))
		return 11;
	if (ibx_qp_cm_listen(NULL, port, &l))
		return 12;
	if (write(ready_fd, "r", 1) != 1)
		return 13;
	ia = IBX_QP_INIT_ATTR_DEFAULT(cq);
	/* our private data: where the client may write */
	mine[0] = (uint32_t)((uintptr_t)buf >> 32);
	mine[1] = (uint32_t)(uintptr_t)buf;
	mine[2] = mr->rkey;
	if (ibx_qp_cm_accept(l, dev, &ia, mine, sizeof(mine), peer, &plen, WAIT_MS, &qp))
		return 14;
	if (plen != 5 || memcmp(peer, "ibx!", 5) != 0)
		return 15;
	/* a receive for the client's send, then wait for it */
	s = (struct ibv_sge){(uintptr_t)(buf + 128), 128, mr->lkey};
	if (ibx_qp_post_recv(qp, &s, 1, 1))
		return 16;
	/* the client's send may come before this receive was posted: RNR
	 * retry (7 = forever) holds it until then */
	if (ibx_qp_cq_wait(cq, &wc, 1, WAIT_MS) != 1 || wc.status != IBV_WC_SUCCESS)
		return 17;
	if (wc.byte_len != sizeof(CM_MSG) || memcmp(buf + 128, CM_MSG, sizeof(CM_MSG)) != 0)
		return 18;
	/* the client wrote into buf before its send (RC keeps the order) */
	if (memcmp(buf, "written", 8) != 0)
		return 19;
	ibx_qp_destroy(qp);
	ibx_qp_cm_listener_close(l);
	ibx_qp_mr_dereg(mr);
	ibx_qp_cq_destroy(cq);
	ibx_qp_dev_close(dev);
	return 0;
}

static void test_rdma_cm(void **state)
{
	pair_t *p = *state;
	uint16_t port = (uint16_t)(20000 + getpid() % 20000);
	int fds[2], status;
	pid_t pid;
	char c, spec[64];
	ibx_qp_t *qp;
	uint32_t theirs[IBX_QP_CM_PRIV_MAX / 4];
	size_t tlen = 0;
	struct ibv_sge s;
	const char *host = getenv("IBX_TEST_CM_ADDR") ? getenv("IBX_TEST_CM_ADDR") : "10.56.0.1";

	NEED_DEVICE(p);
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		_exit(cm_server(port, fds[1]));
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		fail_msg("cm server failed to start (exit %d)", WEXITSTATUS(status));
	}
	close(fds[0]);
	assert_int_equal(ibx_qp_cm_route_dev(host, port, WAIT_MS, spec, sizeof(spec)), IBX_OK);
	print_message("rdma_cm routes %s through %s\n", host, spec);
	ibx_qp_init_attr_t ia = IBX_QP_INIT_ATTR_DEFAULT(p->cq);
	/* retry while the listener is not up yet is not needed: it signalled */
	assert_int_equal(
	    ibx_qp_cm_connect(host, port, p->dev, &ia, "ibx!", 5, theirs, &tlen, WAIT_MS, &qp),
	    IBX_OK);
	assert_int_equal(tlen, 12);
	assert_int_equal(qp->state, IBX_QP_STATE_RTS);
	uint64_t raddr = ((uint64_t)theirs[0] << 32) | theirs[1];
	s = (struct ibv_sge){(uintptr_t) "written", 8, 0};
	assert_int_equal(ibx_qp_post_write(qp, &s, 1, raddr, theirs[2], 1, IBX_QP_INLINE), IBX_OK);
	s = (struct ibv_sge){(uintptr_t)CM_MSG, sizeof(CM_MSG), 0};
	assert_int_equal(ibx_qp_post_send(qp, &s, 1, 2, IBX_QP_INLINE | IBX_QP_SIGNALED), IBX_OK);
	wait_one(p->cq, 2);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	ibx_qp_destroy(qp);
	drain(p->cq);

	/* nobody listening: an error, not a hang */
	assert_int_not_equal(ibx_qp_cm_connect(host, (uint16_t)(port + 1), p->dev, &ia, NULL, 0,
					       NULL, NULL, WAIT_MS, &qp),
			     IBX_OK);
}

/* The send queue's accounting (no device needed): when unsignalled WQEs
 * need a flush, and the bytes of transfers queued before a keepalive
 * probe, which set how long it may stay unanswered. */
static void test_sq_accounting(void **state)
{
	qp_sqe_t sqe[8];
	qp_peer_t p;

	(void)state;
	memset(&p, 0, sizeof(p));
	memset(sqe, 0, sizeof(sqe));
	p.sqe = sqe;
	p.sq_mask = 7;
	assert_false(qp_sq_needs_flush(&p));
	p.sq_head = 3; /* three unsignalled WQEs: maybe finished, unreported */
	assert_true(qp_sq_needs_flush(&p));
	p.sq_head = 4; /* a signalled one follows */
	p.sq_last_sig = 4;
	assert_false(qp_sq_needs_flush(&p));
	/* bytes before a probe at seq 4: a message, a 1 MiB read, an atomic,
	 * a 64 KiB write */
	sqe[1].bytes = 1u << 20;
	sqe[3].bytes = 65536;
	assert_int_equal(qp_sq_bytes_before(&p, 4), (1u << 20) + 65536);
	assert_int_equal(qp_sq_bytes_before(&p, 1), 0);
	p.sq_tail = 2; /* the first two completed */
	assert_int_equal(qp_sq_bytes_before(&p, 4), 65536);
	/* across the wrap of the 32-bit sequence numbers: seqs -2, -1, 0 */
	memset(sqe, 0, sizeof(sqe));
	sqe[6].bytes = 100;
	sqe[7].bytes = 20;
	sqe[0].bytes = 3;
	p.sq_tail = 0xfffffffeu;
	p.sq_head = 1;
	assert_int_equal(qp_sq_bytes_before(&p, 1), 123);
	assert_int_equal(qp_sq_bytes_before(&p, 0), 120);
	p.sq_last_sig = 0;
	assert_true(qp_sq_needs_flush(&p));
	/* the probe's limit: 2 s alone or behind small work, plus 100 ns a
	 * byte, at most 15 times 2 s */
	assert_int_equal(qp_ka_limit(2000000000ull, 0), 2000000000ull);
	assert_int_equal(qp_ka_limit(2000000000ull, 1u << 20), 2000000000ull + 104857600ull);
	assert_int_equal(qp_ka_limit(2000000000ull, 280000000ull), 30000000000ull);
	assert_int_equal(qp_ka_limit(2000000000ull, 1ull << 40), 30000000000ull);
	assert_int_equal(qp_ka_limit(2000000000ull, 279999999ull), 29999999900ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_device_and_connect),	cmocka_unit_test(test_write_gather),
	    cmocka_unit_test(test_read_scatter),	cmocka_unit_test(test_send_recv),
	    cmocka_unit_test(test_write_imm),		cmocka_unit_test(test_atomics),
	    cmocka_unit_test(test_list_post),		cmocka_unit_test(test_bad_rkey),
	    cmocka_unit_test(test_deregistered_buffer), cmocka_unit_test(test_rdma_cm),
	    cmocka_unit_test(test_sq_accounting),
	};

	return cmocka_run_group_tests_name("verbs_qp", tests, pair_setup, pair_teardown);
}
