/*
 * ibx.h — the one public header of libibx, a user-space transport over
 * InfiniBand verbs with a lock-free shared-memory path for node-local peers.
 *
 * An embedding code creates one context per process (ibx_init), which
 * bootstraps through PMIx (or runs as a job of size 1 when started alone),
 * connects every peer through a path (shm_lf for node-local peers, qp/verbs
 * for the others; IBX_PATHS forces one) and then exchanges tagged messages:
 *
 *     ibx_ctx_t *ctx;
 *     ibx_init(NULL, &ctx);
 *     ibx_request_t rq;
 *     ibx_tag_recv(ctx, IBX_ANY_SOURCE, buf, len, tag, IBX_TAG_MASK_ALL, &rq);
 *     ibx_wait(ctx, &rq);            // rq.source, rq.tag, rq.length
 *     ibx_finalize(ctx);
 *
 * Messages between one ordered pair of processes are never overtaken
 * (MPI's non-overtaking rule). All calls return ibx_status_t; nothing in the
 * library exits or aborts the process.
 */
#ifndef IBX_H
#define IBX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What this header declares is what libibx.so exports; the library is
 * built with -fvisibility=hidden, so nothing else is. */
#if defined(__GNUC__)
#define IBX_API __attribute__((visibility("default")))
#else
#define IBX_API
#endif

#define IBX_VERSION_MAJOR 0
#define IBX_VERSION_MINOR 1
#define IBX_VERSION_PATCH 0

/* ---- status codes ------------------------------------------------------ */
typedef enum ibx_status {
	IBX_OK = 0,
	IBX_INPROGRESS = 1,	    /* started, completes later */
	IBX_ERR_INVALID_PARAM = -1, /* bad argument from the caller */
	IBX_ERR_NO_MEMORY = -2,
	IBX_ERR_IO = -3,	  /* a syscall or verb failed */
	IBX_ERR_TRUNCATED = -4,	  /* message longer than the receive buffer */
	IBX_ERR_UNREACHABLE = -5, /* peer dead or its connection broken */
	IBX_ERR_TIMEOUT = -6,
	IBX_ERR_UNSUPPORTED = -7,
	IBX_ERR_NO_DEVICE = -8, /* no usable verbs device/port */
	IBX_ERR_BOOTSTRAP = -9, /* PMIx / launcher problem */
	IBX_ERR_CANCELED = -10,
	IBX_ERR_REMOTE_ACCESS = -11, /* remote key / protection error */
	IBX_ERR_CORRUPT = -12,	     /* malformed data from a peer */
	IBX_ERR_BUSY = -13,	     /* resource temporarily exhausted */
	IBX_ERR_NOT_FOUND = -14,
	IBX_ERR_OVERFLOW = -15,	   /* size/count arithmetic overflow */
	IBX_ERR_NO_RESOURCE = -16, /* a hard limit was reached */
} ibx_status_t;

IBX_API const char *ibx_status_str(ibx_status_t status);

/* ---- context ----------------------------------------------------------- */
typedef struct ibx_ctx ibx_ctx_t;

typedef struct ibx_init_params {
	unsigned flags; /* IBX_INIT_* */
} ibx_init_params_t;

#define IBX_INIT_THREAD_SERIALIZED 0x1u /* caller serialises all calls */

/* Bootstraps (PMIx or singleton), sets up the paths and connects peers.
 * params may be NULL. */
IBX_API ibx_status_t ibx_init(const ibx_init_params_t *params, ibx_ctx_t **ctx_p);
/* Drains outstanding sends, synchronises with the job and frees everything. */
IBX_API ibx_status_t ibx_finalize(ibx_ctx_t *ctx);

IBX_API int ibx_rank(const ibx_ctx_t *ctx);
IBX_API int ibx_size(const ibx_ctx_t *ctx);
/* Node-local peers (world ranks, ascending, including self). */
IBX_API int ibx_local_size(const ibx_ctx_t *ctx);
IBX_API const int *ibx_local_ranks(const ibx_ctx_t *ctx);
/* Name of the path that reaches @peer ("self", "shm", "verbs"). */
IBX_API const char *ibx_peer_path_name(const ibx_ctx_t *ctx, int peer);
/* Job-wide barrier through the bootstrap (slow; for set-up and tests). */
IBX_API ibx_status_t ibx_boot_barrier(ibx_ctx_t *ctx);
/* Ends the whole job with @code (through the launcher). Returns only if the
 * launcher could not be reached. */
IBX_API ibx_status_t ibx_abort(ibx_ctx_t *ctx, int code, const char *msg);

/* ---- requests ---------------------------------------------------------- */
typedef uint64_t ibx_tag_t;
#define IBX_ANY_SOURCE	 (-1)
#define IBX_TAG_MASK_ALL (~(ibx_tag_t)0)

typedef struct ibx_request ibx_request_t;
typedef void (*ibx_completion_cb_t)(ibx_request_t *req);

/*
 * A request is owned by the caller (stack, embedded in a bigger object or
 * from a pool) and must stay in place until it has completed. The caller
 * sets `cb` (NULL for none) and `user_data` before starting it; the engine
 * initialises everything else. The other public fields are valid once
 * `completed` is non-zero; the rest is engine-private.
 */
struct ibx_request {
	/* public */
	volatile int completed;
	ibx_status_t status;	/* IBX_OK, IBX_ERR_TRUNCATED, IBX_ERR_UNREACHABLE... */
	int source;		/* receive: the sender's rank */
	ibx_tag_t tag;		/* receive: the matched tag */
	size_t length;		/* receive: the sender's message length */
	ibx_completion_cb_t cb; /* optional, called once on completion */
	void *user_data;
	/* engine-private below */
	struct ibx_list_node { /* the engine's queues (core/list.h) */
		struct ibx_list_node *next, *prev;
	} link;
	int kind;
	int peer;
	unsigned flags;
	void *buf;
	size_t buflen;
	ibx_tag_t mask;
	size_t done;	       /* progress of a multi-step protocol */
	uint64_t priv[8];      /* path-private protocol state */
	struct ibx_req_dt *dt; /* typed message state (core/dtype_rdma), or NULL */
};

/* ---- tagged messaging -------------------------------------------------- */
#define IBX_SEND_SYNC 0x1u /* completes only once the receiver has matched */

/* Starts a send of @len bytes. The request completes when @buf may be
 * reused (or, with IBX_SEND_SYNC, when the receive has been matched).
 * Returns IBX_OK (already complete: req->completed is set, the callback is
 * not called), IBX_INPROGRESS (the callback, if any, runs on completion),
 * or an error (nothing was started). The same holds for ibx_tag_recv. */
IBX_API ibx_status_t ibx_tag_send(ibx_ctx_t *ctx, int dest, const void *buf, size_t len,
				  ibx_tag_t tag, unsigned flags, ibx_request_t *req);
/* Posts a receive matching messages from @src (or IBX_ANY_SOURCE) whose tag
 * satisfies (msg_tag & mask) == (tag & mask). */
IBX_API ibx_status_t ibx_tag_recv(ibx_ctx_t *ctx, int src, void *buf, size_t len, ibx_tag_t tag,
				  ibx_tag_t mask, ibx_request_t *req);

typedef struct ibx_probe_info {
	int source;
	ibx_tag_t tag;
	size_t length;
} ibx_probe_info_t;
/* Looks for an arrived, unmatched message. Returns IBX_OK and fills @info
 * if there is one, IBX_ERR_NOT_FOUND otherwise. Does not progress. */
IBX_API ibx_status_t ibx_tag_probe(ibx_ctx_t *ctx, int src, ibx_tag_t tag, ibx_tag_t mask,
				   ibx_probe_info_t *info);
/* A message taken out of matching by ibx_tag_mprobe (opaque). */
typedef struct ibx_unexp ibx_tag_msg_t;
/* Like ibx_tag_probe, but takes the message it finds out of matching: no
 * later receive or probe sees it, only ibx_tag_mrecv(*msg_p) receives it.
 * Returns IBX_OK (fills @info and *msg_p) or IBX_ERR_NOT_FOUND. Does not
 * progress. */
IBX_API ibx_status_t ibx_tag_mprobe(ibx_ctx_t *ctx, int src, ibx_tag_t tag, ibx_tag_t mask,
				    ibx_probe_info_t *info, ibx_tag_msg_t **msg_p);
/* Receives the message of @msg (from ibx_tag_mprobe, once) into @buf, as
 * ibx_tag_recv would have; @msg is invalid afterwards. Returns IBX_OK
 * (complete), IBX_INPROGRESS (a rendezvous under way) or an error. */
IBX_API ibx_status_t ibx_tag_mrecv(ibx_ctx_t *ctx, ibx_tag_msg_t *msg, void *buf, size_t len,
				   ibx_request_t *req);
/* Cancels a posted receive that has not matched yet. */
IBX_API ibx_status_t ibx_request_cancel(ibx_ctx_t *ctx, ibx_request_t *req);

/* One pass of the progress engine; returns the number of events handled. */
IBX_API int ibx_progress(ibx_ctx_t *ctx);
/* One pass of the progress engine for a caller that is waiting: after
 * IBX_SPIN_COUNT passes without an event (counted in *idle_p, which the
 * caller zeroes before its wait loop) it yields the CPU between passes, so
 * ranks that outnumber the cores still progress. Returns events handled. */
IBX_API int ibx_progress_wait(ibx_ctx_t *ctx, unsigned *idle_p);
/* Progresses until @req completes (spins a bounded time, then yields the
 * CPU between polls). Returns the request's status. */
IBX_API ibx_status_t ibx_wait(ibx_ctx_t *ctx, ibx_request_t *req);

/* ---- one-sided communication (RMA) --------------------------------------
 *
 * A process makes memory reachable (ibx_mem_map, or ibx_mem_alloc for
 * memory that node-local peers reach with plain loads, stores and CPU
 * atomics), packs a remote key for it and ships the key to its peers itself
 * (any transport: a tagged message, the bootstrap, a file). A peer unpacks
 * the key and then reads, writes and updates that memory without the owner
 * taking part:
 *
 *     owner                                  origin
 *     ibx_mem_alloc(ctx, len, &base, &mem)
 *     ibx_rkey_pack(ctx, mem, buf, &n)  ──buf, base──►  ibx_rkey_unpack(ctx, owner, buf, n, &rk)
 *                                            ibx_put(ctx, src, 8, base + off, rk, NULL)
 *                                            ibx_atomic(ctx, IBX_ATOMIC_FADD, 1, 0, &old,
 *                                                       base + off, rk, &rq)
 *                                            ibx_flush(ctx, owner)  // complete and visible
 *
 * Remote addresses are the owner's virtual addresses; an access outside the
 * mapped range is refused locally (IBX_ERR_INVALID_PARAM), never sent.
 * Operations take an optional request (NULL: completion is learnt through
 * flush) and return IBX_OK when already complete, IBX_INPROGRESS, or an
 * error (nothing was started). Every operation works with the origin as its
 * own target. Atomics act on 8-byte aligned 64-bit words; all atomics on a
 * word are atomic with respect to each other when they come through ibx.
 */
typedef struct ibx_mem ibx_mem_t;
typedef struct ibx_rkey ibx_rkey_t;

/* Largest packed remote key (bytes). */
#define IBX_RKEY_PACKED_MAX 96

/* Makes [addr, addr + len) reachable by peers (registered with the verbs
 * device when verbs peers exist). The memory stays the caller's. */
IBX_API ibx_status_t ibx_mem_map(ibx_ctx_t *ctx, void *addr, size_t len, ibx_mem_t **mem_p);
/* Allocates @len bytes (zeroed, page aligned) in a shared segment and maps
 * them: node-local peers then access them directly. */
IBX_API ibx_status_t ibx_mem_alloc(ibx_ctx_t *ctx, size_t len, void **addr_p, ibx_mem_t **mem_p);
/* Like ibx_mem_map, and node-local peers reach the memory directly as if
 * it came from ibx_mem_alloc: the pages holding [addr, addr + len) are
 * moved, bytes and addresses unchanged, into a shared segment. Only
 * ordinary private memory moves (heap, static data, anonymous mappings;
 * never the stack); other memory is mapped as by ibx_mem_map. Pages moved
 * once are reused by later calls. The caller guarantees that no other
 * thread writes those pages during the call; afterwards a child made by
 * fork() shares them instead of receiving a copy. */
IBX_API ibx_status_t ibx_mem_share(ibx_ctx_t *ctx, void *addr, size_t len, ibx_mem_t **mem_p);
/* Ends a mapping (frees memory from ibx_mem_alloc). Peers must have
 * stopped using their keys for it. */
IBX_API ibx_status_t ibx_mem_unmap(ibx_ctx_t *ctx, ibx_mem_t *mem);
/* Packs the remote key of @mem into @buf (IBX_RKEY_PACKED_MAX bytes is
 * always enough; *len_p: in, the size of buf; out, the bytes used). */
IBX_API ibx_status_t ibx_rkey_pack(ibx_ctx_t *ctx, const ibx_mem_t *mem, void *buf, size_t *len_p);
/* Unpacks a key that process @owner packed. A malformed key, or one that
 * does not come from @owner, is refused with IBX_ERR_CORRUPT. */
IBX_API ibx_status_t ibx_rkey_unpack(ibx_ctx_t *ctx, int owner, const void *buf, size_t len,
				     ibx_rkey_t **rkey_p);
IBX_API void ibx_rkey_destroy(ibx_ctx_t *ctx, ibx_rkey_t *rkey);

/* When the key owner's memory at @raddr is mapped in this process and CPU
 * atomics on it are atomic with every peer's (memory of ibx_mem_alloc or
 * ibx_mem_share, ours or a node-local peer's; our own ibx_mem_map memory
 * when no node-local peer updates it), sets *ptr_p to its local address:
 * plain loads, stores and CPU atomics then reach it. IBX_ERR_UNSUPPORTED
 * otherwise (use the operations below); IBX_ERR_INVALID_PARAM outside the
 * key's range. */
IBX_API ibx_status_t ibx_rkey_ptr(const ibx_rkey_t *rkey, uint64_t raddr, void **ptr_p);
/* Like ibx_rkey_ptr, but for any memory of this node that is mapped here,
 * whichever route the operations take (IBX_PATHS=verbs puts node-local
 * peers on the NIC): loads and stores through the pointer reach the memory,
 * but CPU atomics through it are atomic only with other CPU atomics — what
 * MPI shared-memory windows need. IBX_ERR_UNSUPPORTED when not mapped. */
IBX_API ibx_status_t ibx_rkey_map(const ibx_rkey_t *rkey, uint64_t raddr, void **ptr_p);

/* Writes @len bytes from @buf to the key owner's @raddr. @buf may be reused
 * once the request completes (or after ibx_flush). */
IBX_API ibx_status_t ibx_put(ibx_ctx_t *ctx, const void *buf, size_t len, uint64_t raddr,
			     const ibx_rkey_t *rkey, ibx_request_t *req);
/* Reads @len bytes at the owner's @raddr into @buf. */
IBX_API ibx_status_t ibx_get(ibx_ctx_t *ctx, void *buf, size_t len, uint64_t raddr,
			     const ibx_rkey_t *rkey, ibx_request_t *req);
/* Gather / scatter forms: the local side is a list, the remote side one
 * contiguous range starting at @raddr. */
IBX_API ibx_status_t ibx_putv(ibx_ctx_t *ctx, const struct iovec *iov, int iovcnt, uint64_t raddr,
			      const ibx_rkey_t *rkey, ibx_request_t *req);
IBX_API ibx_status_t ibx_getv(ibx_ctx_t *ctx, const struct iovec *iov, int iovcnt, uint64_t raddr,
			      const ibx_rkey_t *rkey, ibx_request_t *req);

typedef enum ibx_atomic_op {
	IBX_ATOMIC_ADD,	  /* *raddr += value */
	IBX_ATOMIC_FADD,  /* *result = *raddr; *raddr += value */
	IBX_ATOMIC_SWAP,  /* *result = *raddr; *raddr = value */
	IBX_ATOMIC_CSWAP, /* *result = *raddr; if it was @compare: *raddr = value */
} ibx_atomic_op_t;
/* 8-byte atomic on the owner's word at @raddr (8-byte aligned). @result
 * (NULL only for IBX_ATOMIC_ADD; 8-byte aligned) is written when the
 * request completes — without a request (@req NULL), by ibx_flush. */
IBX_API ibx_status_t ibx_atomic(ibx_ctx_t *ctx, ibx_atomic_op_t op, uint64_t value,
				uint64_t compare, uint64_t *result, uint64_t raddr,
				const ibx_rkey_t *rkey, ibx_request_t *req);
/* Returns when every operation this process started towards @peer is
 * complete and visible at @peer (and local buffers may be reused). */
IBX_API ibx_status_t ibx_flush(ibx_ctx_t *ctx, int peer);
/* ibx_flush towards every peer. */
IBX_API ibx_status_t ibx_flush_all(ibx_ctx_t *ctx);

/* ---- distributed mutex ---------------------------------------------------
 *
 * @count mutexes shared by a group of processes, built on the one-sided
 * operations above (core/rma/mutex.c): mutex i lives at the group member
 * i % nranks (its home). Any member locks and unlocks any of them; the
 * home does not need to call the engine for others to make progress
 * (except with the hybrid algorithm, whose notification is a message).
 *
 *     ibx_mutex_t *m;
 *     ibx_mutex_create(ctx, ranks, n, count, tag, NULL, &m);  // collective
 *     ibx_mutex_lock(m, i);  ... critical section ...  ibx_mutex_unlock(m, i);
 *     ibx_mutex_free(m);                                       // collective
 *
 * Algorithms (IBX_MUTEX_ALGO, or params->algo):
 *   MCS       queue lock: a tail word at the home (swap / compare-and-swap),
 *             each waiter spins on a flag in its own memory that its
 *             predecessor sets; FIFO
 *   ONESIDED  Ross, Latham, Gropp, Thakur, Toonen (2005) §2.1: a waitlist
 *             byte per member at the home, read and written in one
 *             exclusive epoch; the unlocker sets the poll byte of the next
 *             waiting member in rank order after its own
 *   HYBRID    the same (§2.2), notification by a zero-byte message
 * A lost member (process dead, connection broken) ends every wait of the
 * others with IBX_ERR_UNREACHABLE, never a hang.
 */
typedef struct ibx_mutex ibx_mutex_t;

typedef enum ibx_mutex_algo {
	IBX_MUTEX_ALGO_DEFAULT = 0, /* IBX_MUTEX_ALGO */
	IBX_MUTEX_ALGO_MCS,
	IBX_MUTEX_ALGO_ONESIDED,
	IBX_MUTEX_ALGO_HYBRID,
} ibx_mutex_algo_t;

typedef struct ibx_mutex_params {
	ibx_mutex_algo_t algo; /* the same at every member */
} ibx_mutex_params_t;

/* Collective over the @nranks processes of @ranks (world ranks, each once,
 * this process among them, the same list in the same order everywhere: a
 * member's group index is its position). The mutex uses the tags @tag ..
 * @tag + @count (matched with every bit), which the caller keeps for it
 * until ibx_mutex_free. @params may be NULL. Every member gets the same
 * outcome. */
IBX_API ibx_status_t ibx_mutex_create(ibx_ctx_t *ctx, const int *ranks, int nranks, int count,
				      ibx_tag_t tag, const ibx_mutex_params_t *params,
				      ibx_mutex_t **m_p);
/* Blocks until this process holds mutex @index. IBX_ERR_INVALID_PARAM for
 * an index outside [0, count); IBX_ERR_BUSY when this process already holds
 * or waits for it; IBX_ERR_UNREACHABLE when a member was lost. */
IBX_API ibx_status_t ibx_mutex_lock(ibx_mutex_t *m, int index);
/* The two halves of ibx_mutex_lock: _start enters the queue and returns
 * IBX_OK (the mutex is held) or IBX_INPROGRESS (queued: others hold it or
 * wait before us); _wait then blocks until it is held. */
IBX_API ibx_status_t ibx_mutex_lock_start(ibx_mutex_t *m, int index);
IBX_API ibx_status_t ibx_mutex_lock_wait(ibx_mutex_t *m, int index);
/* Releases mutex @index and hands it to the next waiter, if any.
 * IBX_ERR_INVALID_PARAM when this process does not hold it. */
IBX_API ibx_status_t ibx_mutex_unlock(ibx_mutex_t *m, int index);
/* Collective over the group: frees the mutexes (none may be held). */
IBX_API ibx_status_t ibx_mutex_free(ibx_mutex_t *m);
/* The group index of mutex @index's home (-1 for a bad index). */
IBX_API int ibx_mutex_home(const ibx_mutex_t *m, int index);
/* The algorithm in use ("mcs", "onesided", "hybrid"). */
IBX_API const char *ibx_mutex_algo_name(const ibx_mutex_t *m);

/* Configuration: prints every IBX_* variable with its value and help. */
IBX_API void ibx_config_print(void *file /* FILE* */);

#ifdef __cplusplus
}
#endif
#endif /* IBX_H */
