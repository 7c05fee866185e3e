/*
 * shm_path.h — the node-local path's own state, shared by the files that
 * run it (shm_path.c lists them): the per-process state, one record per
 * node-local peer, the request fields the path uses, and the calls from
 * one of those files into another. shm_int.h below it holds what lives in
 * shared memory (segments, the ring, the pipe).
 *
 * The send fast path promotes its peer into the active set; that check is
 * inline here, the move itself (rare: the peer had gone idle) is not.
 */
#ifndef IBX_SHM_PATH_H
#define IBX_SHM_PATH_H

#include "shm_int.h"

/* A control packet waiting for room in the ring. */
typedef struct shm_ctrl {
	uint8_t type;
	uint8_t len;
	uint32_t id;
	uint64_t val[6];
} shm_ctrl_t;

struct shm_state;

typedef struct shm_peer {
	/* fast path: the two ends of the rings with this peer */
	ibx_shm_tx_t tx; /* ring me→peer, in the peer's segment */
	ibx_shm_rx_t rx; /* ring peer→me, in our segment */
	size_t eager_limit;
	uint32_t idle; /* empty polls in a row */
	int order_pos; /* index in state->order */
	bool failed;
	bool cma_ok;   /* we may process_vm_readv/writev the peer */
	bool has_work; /* counted in state->nwork */
	int rank;
	pid_t pid;
	ibx_peer_t *peer;
	struct shm_state *st;
	/* rendezvous and back-pressure */
	ibx_req_queue_t pending; /* sends waiting for ring room, in send order */
	ibx_req_queue_t rndv_tx; /* RTS sent, waiting for CTS or FIN */
	ibx_req_queue_t pipe_tx; /* CTS received: streamed in CTS order */
	ibx_req_queue_t pipe_rx; /* CTS sent: drained in CTS order */
	ibx_req_queue_t cma_rx;	 /* split single copy: our part read, waiting for FINW */
	shm_ctrl_t *ctrl;	 /* circular queue of control packets */
	uint32_t ctrl_head, ctrl_count, ctrl_cap;
	uint32_t next_id;
	ibx_shm_pipe_t ptx;  /* pipe me→peer, in the peer's segment */
	ibx_shm_pipe_t prx;  /* pipe peer→me, in our segment */
	ibx_shm_cells_t txc; /* eager cells me→peer, in the peer's segment */
	ibx_shm_cells_t rxc; /* eager cells peer→me, in our segment */
	ibx_shm_seg_t seg;   /* the peer's segment, mapped here */
} shm_peer_t;

typedef struct shm_state {
	ibx_ctx_t *ctx;
	int npeers;
	shm_peer_t *peers; /* ascending ranks = area order */
	int *order;	   /* peer indices: [0, nactive) active, the rest idle */
	int nactive;
	int nwork; /* peers with queued work */
	bool in_progress;
	uint64_t tick;
	uint64_t next_check_ns, check_ns;
	size_t cma_threshold; /* rendezvous from this size: CMA; 0: never */
	bool cma_auto;	      /* the threshold comes from the node's calibration */
	size_t pipe_first;    /* a message's first pipe chunk (IBX_SHM_PIPE_FIRST) */
	uint8_t *scratch;     /* gathers multi-slot eager packets */
	ibx_shm_geom_t geom;
	ibx_shm_seg_t seg;   /* ours */
	uint64_t probe_word; /* peers read it to learn whether CMA works */
	/* rendezvous received, by copy (logged at fini, IBX_LOG=info) */
	uint64_t nrecv_pipe, nrecv_cma, nrecv_refused;
} shm_state_t;

/* Eager messages above this many bytes go through a cell when one is free:
 * one memcpy of the payload beats 60-byte pieces from here on (256-2048
 * tried: the latency of 512 B is the same either way, 1 KiB 10% better by
 * cell). */
#define IBX_SHM_CELL_MIN 512

/* request private fields */
#define RQ_ID(r)     ((r)->priv[0]) /* send: rendezvous id */
#define RQ_BYTES(r)  ((r)->priv[1]) /* bytes to move through the pipe */
#define RQ_RNDV(r)   ((r)->priv[2]) /* send: rendezvous (not eager) */
#define RQ_STATUS(r) ((r)->priv[3]) /* receive (split copy): how our part went */
#define RQ_BLOB(r)   ((r)->priv[4]) /* receive (cma_rx): malloc'ed layout the sender reads */

/* What an operation on a lost peer returns. */
static inline ibx_status_t ibx_shm_lost_status(const shm_peer_t *p)
{
	return p->peer->error != IBX_OK ? p->peer->error : IBX_ERR_UNREACHABLE;
}

/* Keeps state->nwork, the count of peers with queued work, in step. */
static inline void ibx_shm_update_work(shm_peer_t *p)
{
	bool w = p->ctrl_count || !ibx_list_empty(&p->pending) || !ibx_list_empty(&p->pipe_tx) ||
		 !ibx_list_empty(&p->pipe_rx);

	if (w != p->has_work) {
		p->has_work = w;
		p->st->nwork += w ? 1 : -1;
	}
}

/* ---- shm_progress.c: the active set of senders ----------------------------- */

int ibx_shm_progress(ibx_ctx_t *ctx, void *state);
bool ibx_shm_busy(ibx_ctx_t *ctx, void *state);
/* Moves an idle peer into the active set / out of it. */
void ibx_shm_active_add(shm_peer_t *p);
void ibx_shm_active_remove(shm_peer_t *p);

/* Traffic with @p: it is polled first again. */
static inline void ibx_shm_promote(shm_peer_t *p)
{
	p->idle = 0;
	if (ibx_likely(p->order_pos < p->st->nactive) || p->failed)
		return;
	ibx_shm_active_add(p);
}

/* ---- shm_ring.c: eager messages and control packets through the ring ------ */

ibx_status_t ibx_shm_tag_send(ibx_peer_t *peer, ibx_request_t *req);
/* CTS, CTSW, FIN, FINW: straight into the ring, or queued (in order) if it
 * is full. */
void ibx_shm_send_ctrl(shm_peer_t *p, uint8_t type, uint32_t id, const void *data, size_t len);
void ibx_shm_send_ctrl64(shm_peer_t *p, uint8_t type, uint32_t id, uint64_t val);
/* Moves queued control packets, then queued sends, into the ring while it
 * has room; returns how many went. */
int ibx_shm_ring_drain(shm_peer_t *p);
/* Hands the packets published in the ring from @p to the tag layer. */
int ibx_shm_poll_peer(shm_state_t *st, shm_peer_t *p);

/* ---- shm_rndv.c: the rendezvous -------------------------------------------- */

ibx_status_t ibx_shm_rndv_recv(ibx_peer_t *peer, const void *rts_bytes, ibx_request_t *req);
/* Puts the RTS of @req into the ring; false when it is full. */
bool ibx_shm_rndv_send(shm_peer_t *p, ibx_request_t *req);
/* Takes a receive out of cma_rx (a split copy's or a multi-w's), freeing
 * the layout it lent the sender. */
void ibx_shm_cma_rx_drop(shm_peer_t *p, ibx_request_t *req);
/* A validated packet from the ring that is not eager: RTS, CTS, CTSW, FIN,
 * FINW. IBX_ERR_CORRUPT if the peer wrote something that cannot be. */
ibx_status_t ibx_shm_rndv_packet(shm_state_t *st, shm_peer_t *p, ibx_shm_slot_t *h);
/* Drains, then fills, the pipes of matched rendezvous. */
int ibx_shm_rndv_pipe_work(shm_state_t *st, shm_peer_t *p);
/* Drains only (what the peer pushed into our pipe). */
int ibx_shm_rndv_pipe_rx_work(shm_state_t *st, shm_peer_t *p);

/* ---- shm_liveness.c: lost peers -------------------------------------------- */

/* The peer is lost: everything pending with it fails, never hangs. */
void ibx_shm_peer_fail(shm_state_t *st, shm_peer_t *p, ibx_status_t why);
/* The path op "lose": the launcher says the peer is gone. */
void ibx_shm_peer_lose(ibx_peer_t *peer, const char *why);
/* Every check_ns: fails the peers whose process is gone. */
void ibx_shm_check_peers(shm_state_t *st);

/* ---- shm_rma.c: one-sided operations --------------------------------------- */

ibx_status_t ibx_shm_rma_put(ibx_peer_t *peer, const struct iovec *src, int n, uint64_t raddr,
			     uint32_t rkey, ibx_request_t *req);
ibx_status_t ibx_shm_rma_get(ibx_peer_t *peer, const struct iovec *dst, int n, uint64_t raddr,
			     uint32_t rkey, ibx_request_t *req);
ibx_status_t ibx_shm_rma_put_imm(ibx_peer_t *peer, const struct iovec *src, int n, uint64_t raddr,
				 uint32_t rkey, uint32_t imm, ibx_request_t *req);
ibx_status_t ibx_shm_rma_fetch_add(ibx_peer_t *peer, uint64_t raddr, uint32_t rkey, uint64_t add,
				   uint64_t *result, ibx_request_t *req);
ibx_status_t ibx_shm_rma_cswap(ibx_peer_t *peer, uint64_t raddr, uint32_t rkey, uint64_t compare,
			       uint64_t swap, uint64_t *result, ibx_request_t *req);
ibx_status_t ibx_shm_rma_flush(ibx_peer_t *peer);

#endif /* IBX_SHM_PATH_H */
