/*
 * qp.h — the low-level verbs layer of ibx (core/qp): devices and ports, PD,
 * completion queues, shared receive queues, RC queue pairs with their
 * RESET→INIT→RTR→RTS state machine, address records, memory regions, post
 * helpers for every RC operation (single or as linked lists) and a
 * librdmacm connect/accept helper that yields the same QP object.
 *
 * Two users: the verbs path of the engine (core/qp/conn.c, sendq.c and the
 * files on it) and the perftest-class ibtest commands, which measure "the
 * engine's own QPs".
 *
 *     ibx_qp_dev_t *dev;    ibx_qp_dev_open("rxed:1", -1, &dev);
 *     ibx_qp_cq_t *cq;      ibx_qp_cq_create(dev, 256, &cq);
 *     ibx_qp_init_attr_t ia = IBX_QP_INIT_ATTR_DEFAULT(cq);
 *     ibx_qp_t *qp;         ibx_qp_create(dev, &ia, &qp);
 *     ibx_qp_addr_t me;     ibx_qp_local_addr(qp, &me);
 *     ... exchange records (ibx_qp_addr_pack/unpack: 32 bytes, byte order
 *         fixed) through PMIx, a TCP socket, or let ibx_qp_cm_* do it ...
 *     ibx_qp_connect(qp, &peer, NULL);              // INIT→RTR→RTS
 *     struct ibv_mr *mr;    ibx_qp_mr_reg(dev, buf, len, IBX_QP_ACCESS_ALL, &mr);
 *     struct ibv_sge sge = { (uintptr_t)buf, 8, mr->lkey };
 *     ibx_qp_post_write(qp, &sge, 1, raddr, rkey, 1, IBX_QP_SIGNALED | IBX_QP_INLINE);
 *     struct ibv_wc wc[16]; int n = ibx_qp_cq_poll(cq, wc, 16);
 *
 * Every function returns ibx_status_t (n >= 0 or a negative status for the
 * poll) and logs the failing verb with strerror / ibv_wc_status_str once.
 */
#ifndef IBX_QP_H
#define IBX_QP_H

#include "ibx_int.h"
#include "qp_config.h"

#include <infiniband/verbs.h>

/* ---- devices ------------------------------------------------------------ */
typedef struct ibx_qp_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char name[IBV_SYSFS_NAME_MAX];
	uint8_t port;
	uint8_t link_layer; /* IBV_LINK_LAYER_INFINIBAND / _ETHERNET */
	int gid_index;	    /* -1 when the port has no usable GID */
	union ibv_gid gid;
	uint16_t lid;
	enum ibv_mtu active_mtu;
	struct ibv_device_attr attr;
	struct ibv_port_attr port_attr;
	bool own_ctx; /* ctx opened by us (closed in dev_close) */
} ibx_qp_dev_t;

/*
 * Opens @spec ("name:port", "name" = its first active port; NULL or "" =
 * IBX_DEVICE, and when that is empty the first active port of any device).
 * @gid_index < 0 picks IBX_GID_INDEX, and when that is -1 too the RoCEv2
 * IPv4-mapped GID (else the first valid GID; InfiniBand ports use index 0).
 * Allocates the PD. IBX_ERR_NO_DEVICE when there is no verbs device or port.
 */
ibx_status_t ibx_qp_dev_open(const char *spec, int gid_index, ibx_qp_dev_t **dev_p);
/* Same on an already open context (e.g. rdma_cm's cm_id->verbs); the
 * context is not closed by ibx_qp_dev_close. */
ibx_status_t ibx_qp_dev_open_ctx(struct ibv_context *ctx, uint8_t port, int gid_index,
				 ibx_qp_dev_t **dev_p);
void ibx_qp_dev_close(ibx_qp_dev_t *dev);
/* True when at least one verbs device can be listed (tests skip otherwise). */
bool ibx_qp_dev_available(void);
/* One line: "rxed:1 RoCE gid[1]=::ffff:10.56.0.1 (RoCEv2) lid 0 mtu 1024". */
void ibx_qp_dev_describe(const ibx_qp_dev_t *dev, char *buf, size_t len);
/* 256 .. 4096 from an enum ibv_mtu (0 for an invalid value). */
int ibx_qp_mtu_bytes(enum ibv_mtu mtu);

/* ---- memory regions ----------------------------------------------------- */
#define IBX_QP_ACCESS_ALL                                                                          \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |               \
	 IBV_ACCESS_REMOTE_ATOMIC)
ibx_status_t ibx_qp_mr_reg(ibx_qp_dev_t *dev, void *addr, size_t len, int access,
			   struct ibv_mr **mr_p);
void ibx_qp_mr_dereg(struct ibv_mr *mr);

/* ---- completion queues -------------------------------------------------- */
typedef struct ibx_qp_cq {
	struct ibv_cq *cq;
	ibx_qp_dev_t *dev;
	int depth;
} ibx_qp_cq_t;

ibx_status_t ibx_qp_cq_create(ibx_qp_dev_t *dev, int depth, ibx_qp_cq_t **cq_p);
void ibx_qp_cq_destroy(ibx_qp_cq_t *cq);
/* Polls up to @n completions into @wc; returns how many (0 when idle), or
 * IBX_ERR_IO when the CQ itself failed. Failed work completions are returned
 * like the others: check wc[i].status. */
static inline int ibx_qp_cq_poll(ibx_qp_cq_t *cq, struct ibv_wc *wc, int n)
{
	int got = ibv_poll_cq(cq->cq, n, wc);
	return got >= 0 ? got : (int)IBX_ERR_IO;
}
/* Polls until @n completions arrived or @timeout_ms passed (< 0: forever);
 * stops early, returning the count so far, at the first failed completion. */
int ibx_qp_cq_wait(ibx_qp_cq_t *cq, struct ibv_wc *wc, int n, int timeout_ms);

/* ---- shared receive queues ---------------------------------------------- */
typedef struct ibx_qp_srq {
	struct ibv_srq *srq;
	ibx_qp_dev_t *dev;
	uint32_t max_wr, max_sge;
} ibx_qp_srq_t;

ibx_status_t ibx_qp_srq_create(ibx_qp_dev_t *dev, uint32_t max_wr, uint32_t max_sge,
			       ibx_qp_srq_t **srq_p);
void ibx_qp_srq_destroy(ibx_qp_srq_t *srq);
/* Posts a chain of receive WRs (wr->next linked) in one call. */
ibx_status_t ibx_qp_srq_post_list(ibx_qp_srq_t *srq, struct ibv_recv_wr *first);

/* ---- queue pairs -------------------------------------------------------- */
typedef struct ibx_qp_init_attr {
	ibx_qp_cq_t *send_cq, *recv_cq;
	ibx_qp_srq_t *srq; /* NULL: the QP has its own receive queue */
	uint32_t max_send_wr, max_recv_wr;
	uint32_t max_send_sge, max_recv_sge;
	uint32_t max_inline; /* requested; the granted value is in qp */
	bool sq_sig_all;     /* every send WR signalled (tools only) */
	int max_rd_atomic;   /* outstanding READ/atomics, 0: device max (<=16) */
} ibx_qp_init_attr_t;

#define IBX_QP_INIT_ATTR_DEFAULT(cq_)                                                              \
	((ibx_qp_init_attr_t){.send_cq = (cq_),                                                    \
			      .recv_cq = (cq_),                                                    \
			      .srq = NULL,                                                         \
			      .max_send_wr = 128,                                                  \
			      .max_recv_wr = 128,                                                  \
			      .max_send_sge = 4,                                                   \
			      .max_recv_sge = 1,                                                   \
			      .max_inline = 128,                                                   \
			      .sq_sig_all = false,                                                 \
			      .max_rd_atomic = 0})

/* Connection parameters of RTR/RTS; 0 fields take IBX_IB_TIMEOUT,
 * IBX_IB_RETRY, rnr_retry 7 (retry forever: a receiver that is merely slow
 * never breaks the connection), min_rnr_timer 12 (0.64 ms). */
typedef struct ibx_qp_conn_attr {
	int timeout, retry_cnt, rnr_retry, min_rnr_timer;
	enum ibv_mtu mtu; /* 0: min(local active_mtu, remote's) */
} ibx_qp_conn_attr_t;

/* What a peer needs to connect to a QP. */
typedef struct ibx_qp_addr {
	union ibv_gid gid;
	uint32_t qpn;
	uint32_t psn; /* 24 bits */
	uint16_t lid;
	uint8_t mtu; /* enum ibv_mtu: the sender's active_mtu */
	uint8_t link_layer;
	uint8_t gid_valid;
} ibx_qp_addr_t;

#define IBX_QP_ADDR_WIRE_LEN 32
/* Fixed-size, fixed-byte-order encoding (for PMIx blobs, TCP, rdma_cm). */
void ibx_qp_addr_pack(const ibx_qp_addr_t *a, uint8_t out[IBX_QP_ADDR_WIRE_LEN]);
ibx_status_t ibx_qp_addr_unpack(const uint8_t in[IBX_QP_ADDR_WIRE_LEN], ibx_qp_addr_t *a);

typedef enum { IBX_QP_STATE_INIT, IBX_QP_STATE_RTS, IBX_QP_STATE_ERROR } ibx_qp_state_t;

typedef struct ibx_qp {
	struct ibv_qp *qp;
	ibx_qp_dev_t *dev;
	ibx_qp_cq_t *send_cq, *recv_cq;
	ibx_qp_srq_t *srq;
	uint32_t qpn;
	uint32_t psn;	     /* our initial send PSN */
	uint32_t max_inline; /* granted */
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge;
	int max_rd_atomic;
	ibx_qp_state_t state;
	ibx_qp_addr_t remote; /* valid once connected */
	/* rdma_cm connections (cm.c): the id and channel this QP came from */
	struct rdma_cm_id *cm_id;
	struct rdma_event_channel *cm_ch;
	void *user; /* free for the owner */
} ibx_qp_t;

/* Creates an RC QP and moves it to INIT (port, pkey 0, access: remote
 * read/write/atomic). */
ibx_status_t ibx_qp_create(ibx_qp_dev_t *dev, const ibx_qp_init_attr_t *attr, ibx_qp_t **qp_p);
void ibx_qp_local_addr(const ibx_qp_t *qp, ibx_qp_addr_t *addr_p);
/* INIT→RTR→RTS towards @remote (@cattr may be NULL: defaults). */
/* How long an RC QP with local ACK timeout exponent @timeout and @retry
 * retries keeps a work request before failing it: 4.096 us * 2^timeout *
 * (retry + 1); timeout 0 (wait for ever) gives UINT64_MAX. */
uint64_t ibx_qp_retry_budget_ns(int64_t timeout, int64_t retry);
ibx_status_t ibx_qp_connect(ibx_qp_t *qp, const ibx_qp_addr_t *remote,
			    const ibx_qp_conn_attr_t *cattr);
/* Moves the QP to ERROR (outstanding WRs flush). */
ibx_status_t ibx_qp_set_error(ibx_qp_t *qp);
/* Disconnects (rdma_cm) and destroys. */
void ibx_qp_destroy(ibx_qp_t *qp);

/* ---- work requests ------------------------------------------------------ */
/* Flags of the post helpers. */
#define IBX_QP_SIGNALED 0x1u /* generate a completion */
#define IBX_QP_INLINE	0x2u /* copy the payload into the WQE (lkeys unused) */
#define IBX_QP_FENCE	0x4u /* wait for earlier READ/atomics first */

static inline unsigned ibx_qp__send_flags(unsigned f)
{
	return ((f & IBX_QP_SIGNALED) ? IBV_SEND_SIGNALED : 0) |
	       ((f & IBX_QP_INLINE) ? IBV_SEND_INLINE : 0) |
	       ((f & IBX_QP_FENCE) ? IBV_SEND_FENCE : 0);
}

/*
 * Fillers: prepare one send WR (next = NULL) so a caller can build a linked
 * list (wr[i].next = &wr[i + 1]) and post it with one ibx_qp_post_list —
 * one doorbell for the batch ([Wu03] §8.5: 1.6x on
 * average). The sge array must stay valid until the post.
 */
static inline void ibx_qp_wr_write(struct ibv_send_wr *wr, struct ibv_sge *sge, int nsge,
				   uint64_t raddr, uint32_t rkey, uint64_t wr_id, unsigned f)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = wr_id;
	wr->sg_list = sge;
	wr->num_sge = nsge;
	wr->opcode = IBV_WR_RDMA_WRITE;
	wr->send_flags = ibx_qp__send_flags(f);
	wr->wr.rdma.remote_addr = raddr;
	wr->wr.rdma.rkey = rkey;
}
static inline void ibx_qp_wr_write_imm(struct ibv_send_wr *wr, struct ibv_sge *sge, int nsge,
				       uint64_t raddr, uint32_t rkey, uint32_t imm, uint64_t wr_id,
				       unsigned f)
{
	ibx_qp_wr_write(wr, sge, nsge, raddr, rkey, wr_id, f);
	wr->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr->imm_data = htobe32(imm); /* the receiver's wc.imm_data: be32toh() */
}
static inline void ibx_qp_wr_read(struct ibv_send_wr *wr, struct ibv_sge *sge, int nsge,
				  uint64_t raddr, uint32_t rkey, uint64_t wr_id, unsigned f)
{
	ibx_qp_wr_write(wr, sge, nsge, raddr, rkey, wr_id, f & ~IBX_QP_INLINE);
	wr->opcode = IBV_WR_RDMA_READ;
}
static inline void ibx_qp_wr_send(struct ibv_send_wr *wr, struct ibv_sge *sge, int nsge,
				  uint64_t wr_id, unsigned f)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = wr_id;
	wr->sg_list = sge;
	wr->num_sge = nsge;
	wr->opcode = IBV_WR_SEND;
	wr->send_flags = ibx_qp__send_flags(f);
}
static inline void ibx_qp_wr_send_imm(struct ibv_send_wr *wr, struct ibv_sge *sge, int nsge,
				      uint32_t imm, uint64_t wr_id, unsigned f)
{
	ibx_qp_wr_send(wr, sge, nsge, wr_id, f);
	wr->opcode = IBV_WR_SEND_WITH_IMM;
	wr->imm_data = htobe32(imm);
}
/* 8-byte atomics: @sge names 8 registered, 8-aligned local bytes that
 * receive the remote's previous value; @raddr must be 8-aligned. */
static inline void ibx_qp_wr_fetch_add(struct ibv_send_wr *wr, struct ibv_sge *sge, uint64_t raddr,
				       uint32_t rkey, uint64_t add, uint64_t wr_id, unsigned f)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = wr_id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr->send_flags = ibx_qp__send_flags(f & ~IBX_QP_INLINE);
	wr->wr.atomic.remote_addr = raddr;
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.compare_add = add;
}
static inline void ibx_qp_wr_cswap(struct ibv_send_wr *wr, struct ibv_sge *sge, uint64_t raddr,
				   uint32_t rkey, uint64_t compare, uint64_t swap, uint64_t wr_id,
				   unsigned f)
{
	ibx_qp_wr_fetch_add(wr, sge, raddr, rkey, compare, wr_id, f);
	wr->opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr->wr.atomic.swap = swap;
}

/* Logs the failed post (verb, peer QP, errno) — out of line, cold. */
ibx_status_t ibx_qp_post_failed(ibx_qp_t *qp, const char *verb, int err,
				const struct ibv_send_wr *bad);

/* Posts a chain of send WRs with one ibv_post_send. On failure nothing
 * after *bad_p (if given) was posted; WRs before it were. */
static inline ibx_status_t ibx_qp_post_list(ibx_qp_t *qp, struct ibv_send_wr *first,
					    struct ibv_send_wr **bad_p)
{
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(qp->qp, first, &bad);
	if (ibx_likely(rc == 0))
		return IBX_OK;
	if (bad_p)
		*bad_p = bad;
	return ibx_qp_post_failed(qp, "ibv_post_send", rc, bad);
}

/* Single-WR helpers (IBX_QP_* flags). */
static inline ibx_status_t ibx_qp_post_write(ibx_qp_t *qp, struct ibv_sge *sge, int nsge,
					     uint64_t raddr, uint32_t rkey, uint64_t wr_id,
					     unsigned f)
{
	struct ibv_send_wr wr;
	ibx_qp_wr_write(&wr, sge, nsge, raddr, rkey, wr_id, f);
	return ibx_qp_post_list(qp, &wr, NULL);
}
static inline ibx_status_t ibx_qp_post_write_imm(ibx_qp_t *qp, struct ibv_sge *sge, int nsge,
						 uint64_t raddr, uint32_t rkey, uint32_t imm,
						 uint64_t wr_id, unsigned f)
{
	struct ibv_send_wr wr;
	ibx_qp_wr_write_imm(&wr, sge, nsge, raddr, rkey, imm, wr_id, f);
	return ibx_qp_post_list(qp, &wr, NULL);
}
static inline ibx_status_t ibx_qp_post_read(ibx_qp_t *qp, struct ibv_sge *sge, int nsge,
					    uint64_t raddr, uint32_t rkey, uint64_t wr_id,
					    unsigned f)
{
	struct ibv_send_wr wr;
	ibx_qp_wr_read(&wr, sge, nsge, raddr, rkey, wr_id, f);
	return ibx_qp_post_list(qp, &wr, NULL);
}
static inline ibx_status_t ibx_qp_post_send(ibx_qp_t *qp, struct ibv_sge *sge, int nsge,
					    uint64_t wr_id, unsigned f)
{
	struct ibv_send_wr wr;
	ibx_qp_wr_send(&wr, sge, nsge, wr_id, f);
	return ibx_qp_post_list(qp, &wr, NULL);
}
static inline ibx_status_t ibx_qp_post_fetch_add(ibx_qp_t *qp, struct ibv_sge *sge, uint64_t raddr,
						 uint32_t rkey, uint64_t add, uint64_t wr_id,
						 unsigned f)
{
	struct ibv_send_wr wr;
	ibx_qp_wr_fetch_add(&wr, sge, raddr, rkey, add, wr_id, f);
	return ibx_qp_post_list(qp, &wr, NULL);
}
static inline ibx_status_t ibx_qp_post_cswap(ibx_qp_t *qp, struct ibv_sge *sge, uint64_t raddr,
					     uint32_t rkey, uint64_t compare, uint64_t swap,
					     uint64_t wr_id, unsigned f)
{
	struct ibv_send_wr wr;
	ibx_qp_wr_cswap(&wr, sge, raddr, rkey, compare, swap, wr_id, f);
	return ibx_qp_post_list(qp, &wr, NULL);
}

/* Receive WRs on a QP without SRQ (a chain in one call). */
ibx_status_t ibx_qp_post_recv_list(ibx_qp_t *qp, struct ibv_recv_wr *first);
static inline ibx_status_t ibx_qp_post_recv(ibx_qp_t *qp, struct ibv_sge *sge, int nsge,
					    uint64_t wr_id)
{
	struct ibv_recv_wr wr = {.wr_id = wr_id, .next = NULL, .sg_list = sge, .num_sge = nsge};
	return ibx_qp_post_recv_list(qp, &wr);
}

/* ---- completion status -------------------------------------------------- */
/* "RDMA READ", "SEND", "ATOMIC FETCH AND ADD", ... for a send-side opcode. */
const char *ibx_qp_wr_opcode_str(enum ibv_wr_opcode op);
const char *ibx_qp_wc_opcode_str(enum ibv_wc_opcode op);
/* IBX_OK for IBV_WC_SUCCESS; IBX_ERR_REMOTE_ACCESS for remote access and
 * protection errors; IBX_ERR_UNREACHABLE for transport/retry/flush errors;
 * IBX_ERR_IO otherwise. */
ibx_status_t ibx_qp_wc_status(enum ibv_wc_status st);

/* ---- rdma_cm connection helper (cm.c) ----------------------------------- *
 * The QP is created by the caller's device/PD/CQs as with ibx_qp_create
 * (any device: rdma_cm is only used to reach the peer and to carry both
 * address records and up to IBX_QP_CM_PRIV_MAX bytes of the caller's own
 * data each way in the connection's private data). The QP's state machine
 * is driven by ibx_qp_connect, exactly as with a PMIx/TCP exchange.
 *
 * server:  ibx_qp_cm_listen(NULL, 18515, &l);
 *          ibx_qp_cm_accept(l, dev, &ia, mine, n, theirs, &m, 30000, &qp);
 * client:  ibx_qp_cm_connect("10.56.0.1", 18515, dev, &ia, mine, n, theirs,
 *                            &m, 30000, &qp);
 * ibx_qp_destroy(qp) disconnects.
 */
#define IBX_QP_CM_PRIV_MAX 20
typedef struct ibx_qp_cm_listener ibx_qp_cm_listener_t;

/* @addr NULL or "" listens on every address. */
ibx_status_t ibx_qp_cm_listen(const char *addr, uint16_t port, ibx_qp_cm_listener_t **l_p);
void ibx_qp_cm_listener_close(ibx_qp_cm_listener_t *l);
/* Name ("rxed:1") of the device and port that rdma_cm routes @host to:
 * a client can open exactly that device with ibx_qp_dev_open. */
ibx_status_t ibx_qp_cm_route_dev(const char *host, uint16_t port, int timeout_ms, char *spec,
				 size_t len);
/* Waits (@timeout_ms, < 0 forever) for one connection request, creates a QP
 * (@attr) and connects it. @priv/@priv_len: our data for the peer (may be
 * NULL/0); @peer_priv (IBX_QP_CM_PRIV_MAX bytes, may be NULL) receives
 * the peer's, its length in *peer_len_p. */
ibx_status_t ibx_qp_cm_accept(ibx_qp_cm_listener_t *l, ibx_qp_dev_t *dev,
			      const ibx_qp_init_attr_t *attr, const void *priv, size_t priv_len,
			      void *peer_priv, size_t *peer_len_p, int timeout_ms, ibx_qp_t **qp_p);
ibx_status_t ibx_qp_cm_connect(const char *host, uint16_t port, ibx_qp_dev_t *dev,
			       const ibx_qp_init_attr_t *attr, const void *priv, size_t priv_len,
			       void *peer_priv, size_t *peer_len_p, int timeout_ms,
			       ibx_qp_t **qp_p);

/* ---- the verbs path, for the layers above it (core/rma, core/dtype_rdma) -- */
/* Registers [addr, addr + len) on the verbs path's PD (through its
 * registration cache) so that peers can reach it with put/get/atomics:
 * *key_p gets addr, len, rkey and lkey; *handle_p is for the dereg.
 * IBX_ERR_NOT_FOUND when the context has no verbs path. */
ibx_status_t ibx_qp_path_mem_reg(ibx_ctx_t *ctx, void *addr, size_t len, ibx_mem_key_t *key_p,
				 void **handle_p);
void ibx_qp_path_mem_dereg(ibx_ctx_t *ctx, void *handle);
/* The verbs path's engine peer for @rank: the ordinary one of a remote
 * rank, or, in a job over several nodes, the one connected to a node-local
 * rank for the NIC's atomics only (ctx->nic_local); NULL when there is none
 * or it failed. */
ibx_peer_t *ibx_qp_path_nic_peer(ibx_ctx_t *ctx, int rank);
/* The context has a verbs path (some peer is reached through it): memory
 * may be registered with the device. */
bool ibx_qp_path_present(ibx_ctx_t *ctx);
/* The verbs path's loopback peer (a QP connected to itself), for one-sided
 * operations on this process's own registered memory that must go through
 * the NIC — atomics on memory that verbs peers update too; NULL when the
 * context has no verbs path. */
ibx_peer_t *ibx_qp_path_self(ibx_ctx_t *ctx);

/* Write-with-immediate notifications (put_imm): called from progress with
 * the writer's rank and the 32-bit immediate, once the data is in place.
 * One handler per context (the datatype schemes' segment triggers). */
typedef void (*ibx_qp_imm_cb_t)(ibx_ctx_t *ctx, int src, uint32_t imm, void *arg);
ibx_status_t ibx_qp_path_set_imm_handler(ibx_ctx_t *ctx, ibx_qp_imm_cb_t cb, void *arg);

#endif /* IBX_QP_H */
