/*
 * qp_int.h — declarations private to core/qp: the verbs path's state
 * (module, peers, send-queue tracking, wire headers) shared by conn.c,
 * sendq.c, channel.c, rndv.c, rdma.c and progress.c. The send queue's
 * interface is sendq.h; the credits are drawn in sendq.c, the rendezvous
 * in rndv.c.
 */
#ifndef IBX_QP_INT_H
#define IBX_QP_INT_H

#include "qp.h"
#include "reg_cache/reg_cache.h"

#include <sys/uio.h>

/* cm.c: releases the rdma_cm id and channel a QP came from (no-op for QPs
 * set up without rdma_cm). Called twice by ibx_qp_destroy: before the QP
 * is destroyed (@disconnect: rdma_disconnect) and after it (the id). */
void ibx_qp_cm_release(ibx_qp_t *qp, bool disconnect);

/* ---- wire format of the channel (both ends run the same build) ---------- */
enum qp_msg_type {
	QP_MSG_EAGER = 1, /* hdr | payload */
	QP_MSG_RTS = 2,	  /* hdr | qp_rts_t: rendezvous announcement */
	QP_MSG_FIN = 3,	  /* hdr | qp_fin_t: rendezvous data moved */
	/* typed rendezvous pushed by the sender (rndv_dt.c) */
	QP_MSG_CTS = 4,	   /* hdr | qp_cts_t | indices or layout: how to push */
	QP_MSG_GRANT = 5,  /* hdr | qp_fin_t{id, segment}: a segment is free again */
	QP_MSG_PACKED = 6, /* hdr | qp_rts_t: packed on request, READ it */
	QP_MSG_DONE = 7,   /* hdr | qp_fin_t{rid}: every write of a multi-w is before this */
};

/* Largest inline eager message sent from the stack by the fast path. */
#define QP_FAST_MAX 240
/* SRQ buffers beyond the peers' credits: they cover buffers consumed but
 * not reposted yet (progress.c reposts in batches, bounded below this). */
#define QP_RX_SPARE 64

typedef struct qp_hdr {
	uint8_t type;
	uint8_t flags;
	uint16_t credits; /* piggy-backed: messages of yours I have consumed (mod 2^16) */
	int32_t src;	  /* sender's world rank */
	uint64_t tag;
} qp_hdr_t;

typedef struct qp_rts {
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
	uint32_t id;	    /* the sender's rendezvous id, echoed in the FIN */
	uint32_t flags;	    /* QP_RTS_PUSH: typed data in the sender's blocks, no addr */
	uint32_t avg_block; /* QP_RTS_PUSH: the sender's average block (bytes) */
} qp_rts_t;
#define QP_RTS_PUSH 0x1u

/* The receiver's answer to a pushed typed rendezvous (rndv_dt.c). */
typedef struct qp_cts {
	uint32_t id;	   /* the sender's rendezvous id */
	uint32_t rid;	   /* the receiver's: GRANT, DONE and immediates name it */
	uint64_t len;	   /* bytes to move */
	uint8_t scheme;	   /* ibx_dt_scheme_t; GENERIC / P_RRS: pack, answer PACKED */
	uint8_t flags;	   /* QP_CTS_* */
	uint16_t nseg;	   /* segment schemes: indices granted (uint16 each, after) */
	uint32_t seg;	   /* segment schemes: bytes per segment */
	uint64_t base;	   /* multi-w: the receive buffer; segments: the area */
	uint32_t rkey;	   /* of base */
	uint32_t blob_len; /* multi-w with QP_CTS_LAYOUT: layout bytes (after) */
	uint64_t type_id;  /* multi-w: the receive type (id, version), count */
	uint32_t version;
	uint32_t pad;
	int64_t count;
} qp_cts_t;
#define QP_CTS_LAYOUT	0x1u /* the layout follows (the sender caches it) */
#define QP_CTS_CONTIG	0x2u /* multi-w into [base, base + len): no layout */
#define QP_DT_GRANT_MAX 64   /* segment indices in one CTS */
/* Immediate data of a segment write: rendezvous bit, receiver id, index. */
#define QP_IMM_SEG	 0x80000000u
#define QP_IMM_RID_SHIFT 16
#define QP_IMM_RID_MASK	 0x7fffu

typedef struct qp_fin {
	uint32_t id;
	uint32_t pad;
} qp_fin_t;

/* The credit mailbox word a peer RDMA-writes into our memory: the count in
 * the low half, its complement in the high half, so that a torn read (the
 * NIC or rxe's memcpy landing while we load) is recognised and skipped. */
static inline uint32_t qp_mbox_encode(uint16_t count)
{
	return (uint32_t)count | (((uint32_t)count ^ 0xffffu) << 16);
}
static inline bool qp_mbox_decode(uint32_t w, uint16_t *count_p)
{
	if (((w ^ (w >> 16)) & 0xffffu) != 0xffffu)
		return false;
	*count_p = (uint16_t)w;
	return true;
}

/* ---- send-queue tracking ------------------------------------------------ */
enum qp_sqe_kind {
	SQE_MSG = 1, /* eager/RTS/FIN send (maybe from a bounce buffer) */
	SQE_MBOX,    /* credit mailbox write (also the "flush" WQE) */
	SQE_RNDV,    /* rendezvous RDMA READ into a receive request */
	SQE_RMA,     /* put / get / put_imm */
	SQE_AMO,     /* fetch-add / compare-swap */
};

typedef struct qp_regs {
	int n;
	ibx_rcache_region_t *r[];
} qp_regs_t;

typedef struct qp_sqe {
	uint8_t kind;
	uint8_t last;	/* last WQE of its operation (completes it) */
	uint8_t opcode; /* enum ibv_wr_opcode, for messages */
	uint8_t signaled;
	int32_t txbuf;	    /* bounce buffer index or -1 */
	uint32_t bytes;	    /* a transfer's payload (RMA, rendezvous READ), else 0 */
	ibx_request_t *req; /* operation's request (may be NULL) */
	void *aux;	    /* SQE_RMA: qp_regs_t *; SQE_AMO: result slot */
	uint64_t *result;   /* SQE_AMO: caller's result */
} qp_sqe_t;

/* ---- queued operations (out of credits / send-queue slots) ---------------- */
enum qp_op_kind {
	OP_FIN = 1,
	OP_RNDV_READ,
	OP_PUT,
	OP_GET,
	OP_PUT_IMM,
	OP_FADD,
	OP_CSWAP,
	OP_CTRL /* rndv_dt.c: a control message, type in imm, body in iov[0] (freed) */
};

typedef struct qp_op {
	struct qp_op *next;
	int kind;
	ibx_request_t *req;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t imm;  /* put_imm; FIN: the id */
	uint64_t a, b; /* add / compare, swap */
	uint64_t *result;
	const struct iovec *iov; /* put/get: the caller's, or iovs[] once queued */
	int n;
	int pos;	 /* iovs posted so far (long lists go in parts) */
	uint64_t roff;	 /* remote offset reached */
	qp_regs_t *regs; /* registrations of iov[] (reg cache, OGR) */
	struct iovec iovs[];
} qp_op_t;

struct qp_path;

typedef struct qp_peer {
	struct qp_path *path;
	int rank;
	int idx;
	ibx_qp_t *qp;
	ibx_peer_t *ipeer;
	ibx_status_t error; /* sticky, IBX_OK while healthy */
	pid_t pid;	    /* a node-local peer's process (liveness), else 0 */
	/* send credits: messages sent and consumed by the peer, mod 2^16 */
	uint16_t tx_sent, tx_acked;
	uint16_t tx_credits_max; /* what the peer reserved for us */
	uint32_t eager_max;	 /* min(our eager limit, the peer's) */
	/* receive side: messages of this peer consumed / reported back */
	uint16_t rx_done, rx_told;
	uint32_t mbox_val;   /* inline source of our mailbox writes */
	uint64_t rmbox_addr; /* our slot in the peer's mailbox array */
	uint32_t rmbox_rkey;
	/* send queue: WQEs [sq_tail, sq_head) are outstanding */
	uint32_t sq_head, sq_tail, sq_mask, sq_max;
	uint32_t sq_unsig;    /* unsignalled WQEs since the last signalled */
	uint32_t sq_last_sig; /* seq of the newest signalled WQE + 1 */
	qp_sqe_t *sqe;
	/* FIFOs of work waiting for credits or slots */
	ibx_req_queue_t pend_tag; /* tag sends (request linkage) */
	qp_op_t *pend_head, *pend_tail;
	bool on_pend_list;
	struct qp_peer *pend_next;
	/* rendezvous sends waiting for their FIN */
	ibx_req_queue_t rndv_sends;
	uint32_t rndv_next_id;
	/* typed rendezvous receives waiting for pushed data (rndv_dt.c) */
	struct qp_dtr *dt_recvs;
	uint32_t dt_next_rid;
	/* one-sided operations not completed yet (flush waits for 0) */
	uint32_t rma_outstanding;
	/* keepalive (progress.c): rx_done and sq_tail when the peer was last
	 * looked at; the send-queue seq of the last probe */
	uint16_t ka_rx_done;
	bool ka_posted;
	uint32_t ka_sq_tail, ka_seq;
	uint64_t ka_ahead; /* bytes of the transfers queued before the probe */
	uint64_t ka_sent_ns;
	/* the latency path (channel.c: eager_fast): eager messages up to
	 * fast_max bytes go inline through this pre-built WR, no batch */
	uint32_t fast_max;
	struct ibv_send_wr fast_wr;
	struct ibv_sge fast_sge;
} qp_peer_t;

typedef struct qp_path {
	ibx_ctx_t *ctx;
	ibx_qp_dev_t *dev;
	ibx_qp_cq_t *cq;
	ibx_qp_srq_t *srq;
	ibx_rcache_t *rcache;
	/* receive buffers */
	char *rx_mem;
	struct ibv_mr *rx_mr;
	uint32_t rx_count, rx_stride;
	struct ibv_recv_wr *rx_wr;
	struct ibv_sge *rx_sge;
	uint32_t *rx_free;
	uint32_t rx_nfree;
	/* send bounce buffers */
	char *tx_mem;
	struct ibv_mr *tx_mr;
	uint32_t tx_count, tx_stride;
	uint32_t *tx_free;
	uint32_t tx_nfree;
	/* credit mailbox: one word per world rank, written by that peer */
	_Atomic uint32_t *mbox;
	struct ibv_mr *mbox_mr;
	/* atomic result slots */
	uint64_t *amo;
	struct ibv_mr *amo_mr;
	uint32_t amo_count;
	uint32_t *amo_free;
	uint32_t amo_nfree;
	/* peers: the remote ones, then (last, peers[npeers - 1]) a loopback QP
	 * to this process itself, which only carries one-sided operations on
	 * our own memory, so that our atomics on it are the NIC's, as the
	 * peers' are (a NIC's atomics are atomic only among themselves) */
	int npeers;
	qp_peer_t *peers;
	qp_peer_t *self;
	ibx_peer_t self_ipeer;
	/* [npeers]: the engine peers of node-local ranks connected for the
	 * NIC's atomics only (ctx->nic_local), their messages being on shm */
	ibx_peer_t *nic_ipeers;
	qp_peer_t **by_rank; /* [ctx->size] */
	qp_peer_t **qpn_hash;
	uint32_t qpn_mask;
	qp_peer_t *pend_list; /* peers with queued work */
	/* parameters */
	uint16_t credits;	   /* we reserve per peer */
	uint16_t credit_threshold; /* explicit update after this many */
	uint32_t eager_limit, inline_max, signal_every, sq_depth;
	uint32_t max_sge, max_sge_rd; /* per WQE: gather (write), scatter (read) */
	uint64_t max_msg;	      /* bytes per WQE */
	uint64_t progress_calls;
	/* node-local peers' pids are checked every live_ns (0: none to check) */
	uint64_t live_ns, live_next_ns;
	/* silent remote peers are probed every ka_ns (IBX_IB_KEEPALIVE; 0: off) */
	uint64_t ka_ns, ka_next_ns;
	/* how long a QP retries before its work fails (IBX_IB_TIMEOUT and
	 * IBX_IB_RETRY); when the port went down (0: it is up) */
	uint64_t retry_budget_ns, port_down_ns;
	/* an unanswered keepalive probe fails its peer after this long */
	uint64_t ka_dead_ns;
	/* traffic counters, reported at finalize (IBX_LOG=info) */
	struct {
		uint64_t msgs_sent, msgs_recvd; /* eager, RTS, FIN */
		uint64_t credit_writes;		/* credit returns without a message */
		uint64_t flush_wqes;		/* signalled mailbox writes (SQ reclaim) */
		uint64_t sends_queued;		/* waited for a credit, slot or buffer */
		uint64_t keepalives;		/* probes of silent peers */
	} stats;
	bool finalizing;
	ibx_qp_imm_cb_t imm_cb;
	void *imm_arg;
	/* segment pools of the typed rendezvous (rndv_dt.c), made on first
	 * use: the receiver's unpack area and the sender's pack slots */
	struct qp_dt_pool *dt_rx_pool, *dt_tx_pool;
} qp_path_t;

/* wr_id: receives carry the buffer index with the top bit set; sends carry
 * (peer index, 32-bit sequence number). */
#define QP_WRID_RX (1ull << 63)
static inline uint64_t qp_wrid_tx(const qp_peer_t *p, uint32_t seq)
{
	return ((uint64_t)(uint32_t)p->idx << 32) | seq;
}

extern const ibx_path_ops_t ibx_qp_path_ops;

/* Every error about a peer names it the same way, with what an operator
 * needs to find the connection: "peer 3 (rxn0:1 QP 0x11 -> 0x12)". */
#define QP_PEER_FMT "peer %d (%s:%u QP 0x%x -> 0x%x)"
#define QP_PEER_ARGS(p)                                                                            \
	(p)->rank, (p)->path->dev->name, (unsigned)(p)->path->dev->port, (p)->qp->qpn,             \
	    (p)->qp->remote.qpn

/* Who calls whom: the path ops (conn.c) enter channel.c (tag sends),
 * rndv.c (rendezvous receives) and rdma.c (one-sided operations), which
 * post through the send queue (sendq.h, sendq.c); channel.c starts
 * rendezvous sends in rndv.c. progress.c polls the CQ and is the one file
 * that calls back into every protocol: received messages, completed
 * send-queue entries, queued operations, peer failure. */

/* progress.c */
int ibx_qp_path_progress(ibx_ctx_t *ctx, void *state);
/* Fails the peer: its QP goes to ERR and every request involving it
 * completes (@culprit's with @why, the others IBX_ERR_UNREACHABLE). */
void ibx_qp_peer_fail(qp_peer_t *p, ibx_status_t why, const qp_sqe_t *culprit);
/* The path op "lose": someone else (the launcher) says the peer is gone. */
void ibx_qp_peer_lose(ibx_peer_t *peer, const char *why);
/* Queues a copy of @op (on the caller's stack) behind the peer's queued
 * work, the peer marked for progress: IBX_INPROGRESS, or the error that
 * failed it (out of memory). ibx_qp_op_submit (sendq.h) starts an
 * operation at once when nothing is queued and calls this otherwise. */
ibx_status_t ibx_qp_op_queue(qp_peer_t *p, qp_op_t *op);

/* channel.c: tagged sends */
ibx_status_t ibx_qp_tag_send(ibx_peer_t *peer, ibx_request_t *req);
/* Posts the queued tag sends, in batches, while credits, slots and bounce
 * buffers last. */
void ibx_qp_tag_drain(qp_peer_t *p);

/* rndv.c: the rendezvous */
struct qp_txb;
/* Sender: registers @req's buffer and adds its RTS to @b; the FIN
 * completes @req. */
ibx_status_t ibx_qp_rndv_send(qp_peer_t *p, struct qp_txb *b, ibx_request_t *req);
ibx_status_t ibx_qp_rndv_recv(ibx_peer_t *peer, const void *rts, ibx_request_t *req);
void ibx_qp_rndv_fin_recv(qp_peer_t *p, const qp_fin_t *fin);
/* A READ's entry retired: the receive completes and the FIN goes out. */
void ibx_qp_rndv_read_done(qp_peer_t *p, qp_sqe_t *e, ibx_status_t st);
/* Fails the rendezvous sends that wait for a FIN of the failed peer. */
void ibx_qp_rndv_peer_failed(qp_peer_t *p);
/* OP_RNDV_READ and OP_FIN in the operation FIFO: as the rdma.c pair. */
ibx_status_t ibx_qp_rndv_op_start(qp_peer_t *p, qp_op_t *op, bool from_queue);
ibx_status_t ibx_qp_rndv_op_fail(qp_peer_t *p, qp_op_t *op, bool from_queue, ibx_status_t why);

/* rndv_dt.c: typed rendezvous pushed by the sender (multi-w, rwg-up,
 * bc-spup, and generic / p-rrs packed on the receiver's request) */
/* Sender: adds the RTS of a scattered typed send to @b. */
ibx_status_t ibx_qp_rndv_dt_send(qp_peer_t *p, struct qp_txb *b, ibx_request_t *req);
/* Receiver: a receive matched a pushed RTS. */
ibx_status_t ibx_qp_rndv_dt_recv(qp_peer_t *p, const qp_rts_t *rts, ibx_request_t *req, size_t n);
/* Messages and immediates of the protocol (progress.c), their framing
 * checked (ibx_qp_rx_check); false: they name no rendezvous of ours. */
bool ibx_qp_rndv_dt_msg(qp_peer_t *p, uint8_t type, const void *body, size_t len);
/* The framing of a received channel message (buf[0..len), from a job of
 * @nranks): a header with a sender in range, a known type, and the length
 * the type implies, including a CTS's trailing indices or layout. NULL if
 * sound, else what is wrong, for the error message (progress.c; before
 * any state is looked up, so a peer's bytes are never trusted further). */
const char *ibx_qp_rx_check(const void *buf, size_t len, int nranks);
/* 1: a segment write of ours, handled; 0: not ours; -1: corrupt. */
int ibx_qp_rndv_dt_imm(qp_peer_t *p, uint32_t imm);
/* The sender's share of a FIN: frees its schemes' state. */
void ibx_qp_rndv_dt_send_done(qp_path_t *path, ibx_request_t *req);
void ibx_qp_rndv_dt_peer_failed(qp_peer_t *p);
ibx_status_t ibx_qp_rndv_dt_op_start(qp_peer_t *p, qp_op_t *op);
void ibx_qp_rndv_dt_op_fail(qp_op_t *op);
void ibx_qp_rndv_dt_fini(qp_path_t *path);
/* rndv.c for rndv_dt.c: the READ of a receive from (addr, rkey) — a
 * scattered typed one chooses generic or p-rrs — and FIN {id}. */
ibx_status_t ibx_qp_rndv_read(ibx_peer_t *peer, const qp_rts_t *rts, ibx_request_t *req);
ibx_status_t ibx_qp_rndv_fin(qp_peer_t *p, uint32_t id);

/* rdma.c: one-sided operations */
/* Posts (part of) @op: IBX_INPROGRESS when all of it is posted, IBX_OK when
 * it completed at once, IBX_ERR_BUSY when (the rest of) it must wait, or an
 * error — @from_queue: then the operation's request is completed with it. */
ibx_status_t ibx_qp_rma_op_start(qp_peer_t *p, qp_op_t *op, bool from_queue);
/* Gives up @op, which could not start or waited in the FIFO of a failed
 * peer (@from_queue: its request completes with @why); returns @why. */
ibx_status_t ibx_qp_rma_op_fail(qp_peer_t *p, qp_op_t *op, bool from_queue, ibx_status_t why);
/* The last entry of an operation retired: its request completes. */
void ibx_qp_rma_sqe_done(qp_peer_t *p, qp_sqe_t *e, ibx_status_t st);
ibx_status_t ibx_qp_rma_put(ibx_peer_t *peer, const struct iovec *src, int n, uint64_t raddr,
			    uint32_t rkey, ibx_request_t *req);
ibx_status_t ibx_qp_rma_get(ibx_peer_t *peer, const struct iovec *dst, int n, uint64_t raddr,
			    uint32_t rkey, ibx_request_t *req);
ibx_status_t ibx_qp_rma_put_imm(ibx_peer_t *peer, const struct iovec *src, int n, uint64_t raddr,
				uint32_t rkey, uint32_t imm, ibx_request_t *req);
ibx_status_t ibx_qp_rma_fetch_add(ibx_peer_t *peer, uint64_t raddr, uint32_t rkey, uint64_t add,
				  uint64_t *result, ibx_request_t *req);
ibx_status_t ibx_qp_rma_cswap(ibx_peer_t *peer, uint64_t raddr, uint32_t rkey, uint64_t compare,
			      uint64_t swap, uint64_t *result, ibx_request_t *req);
ibx_status_t ibx_qp_rma_flush(ibx_peer_t *peer);

#endif /* IBX_QP_INT_H */
