/*
 * ibx_int.h — engine-internal declarations shared by every core module:
 * the context, peers, the path ops table, requests, configuration and
 * logging. Modules above core (core/rma, mpi-lite) may include it; nothing
 * in core includes anything above it.
 */
#ifndef IBX_INT_H
#define IBX_INT_H

#include "config.h"
#include "ibx.h"
#include "list.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#define IBX_CACHELINE	64
#define ibx_likely(x)	__builtin_expect(!!(x), 1)
#define ibx_unlikely(x) __builtin_expect(!!(x), 0)
/* IBX_HOT marks the functions every small one-sided operation, its flush
 * and the verbs progress pass run through. GCC and clang put them in
 * .text.hot, which the linker gathers in one run of pages: the fast path
 * then spans a few code pages instead of one or two per source file.
 * A guest under a software MMU (QEMU TCG, where the Soft-RoCE lane runs)
 * pays for every page an iteration touches, a real CPU's iTLB less so. */
#define IBX_HOT				    __attribute__((hot))
#define IBX_ARRAY_SIZE(a)		    (sizeof(a) / sizeof((a)[0]))
#define ibx_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* ---- configuration: core/config.h; core's own section: config_table.h -- */
#include "config_table.h"

/* ---- logging (core/log.c) ---------------------------------------------- */
typedef enum {
	IBX_LOG_ERROR,
	IBX_LOG_WARN,
	IBX_LOG_INFO,
	IBX_LOG_DEBUG,
	IBX_LOG_TRACE
} ibx_log_level_t;
extern int ibx_log_level_cur;
void ibx_log_impl(ibx_log_level_t lvl, const char *file, int line, const char *fmt, ...)
    __attribute__((cold, format(printf, 4, 5)));
#define ibx_log(lvl, ...)                                                                          \
	do {                                                                                       \
		if (ibx_unlikely((int)(lvl) <= ibx_log_level_cur))                                 \
			ibx_log_impl(lvl, __FILE__, __LINE__, __VA_ARGS__);                        \
	} while (0)
#define ibx_error(...) ibx_log(IBX_LOG_ERROR, __VA_ARGS__)
#define ibx_warn(...)  ibx_log(IBX_LOG_WARN, __VA_ARGS__)
#define ibx_info(...)  ibx_log(IBX_LOG_INFO, __VA_ARGS__)
#define ibx_debug(...) ibx_log(IBX_LOG_DEBUG, __VA_ARGS__)
#define ibx_trace(...) ibx_log(IBX_LOG_TRACE, __VA_ARGS__)
/* Rank shown in log lines (set by ibx_init). */
void ibx_log_set_rank(int rank);

/* ---- time ---------------------------------------------------------------- */
static inline double ibx_time_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
/* False once process @pid of this node is gone or a zombie (core/pid.c). */
bool ibx_pid_alive(pid_t pid);

static inline uint64_t ibx_time_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static inline void ibx_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/* ---- bootstrap (core/bootstrap*.c) -------------------------------------- */
typedef struct ibx_boot ibx_boot_t;
/* Detects how the process was started (PMIx launcher, srun without PMIx,
 * hydra, or alone) and connects. */
ibx_status_t ibx_boot_init(ibx_boot_t **boot_p);
void ibx_boot_fini(ibx_boot_t *boot);
int ibx_boot_rank(const ibx_boot_t *boot);
int ibx_boot_size(const ibx_boot_t *boot);
/* Node-local ranks, ascending, including self. */
int ibx_boot_local_size(const ibx_boot_t *boot);
const int *ibx_boot_local_ranks(const ibx_boot_t *boot);
/* A string naming the job (PMIx namespace, or "single-<pid>"). */
const char *ibx_boot_job_id(const ibx_boot_t *boot);
/* Modex: publish a blob under @key, then ibx_boot_fence(), then get peers'. */
ibx_status_t ibx_boot_put(ibx_boot_t *boot, const char *key, const void *data, size_t len);
ibx_status_t ibx_boot_fence(ibx_boot_t *boot, bool collect);
/* *data_p is malloc'ed; caller frees. A key the peer may not have put:
 * absent is IBX_ERR_NOT_FOUND, at once after a collecting fence (where,
 * under PMIx's hash store, a node-local peer's key reads as absent too). */
ibx_status_t ibx_boot_get(ibx_boot_t *boot, int rank, const char *key, void **data_p,
			  size_t *len_p);
/* The same for a key every peer put before the last fence (its absence is
 * an error): one the local store lacks after a collecting fence is asked of
 * the PMIx server, which holds node-local peers' data under PMIx's "hash"
 * store; absent, it waits IBX_BOOT_TIMEOUT. */
ibx_status_t ibx_boot_get_known(ibx_boot_t *boot, int rank, const char *key, void **data_p,
				size_t *len_p);
ibx_status_t ibx_boot_abort(ibx_boot_t *boot, int code, const char *msg);
/* Peers the launcher reported gone: a counter that moves with each report
 * (read it relaxed, cheaply, on idle passes), and the report about @rank
 * (*code_p: its exit status, -1 when not given). */
_Atomic unsigned *ibx_boot_lost_gen(ibx_boot_t *boot);
bool ibx_boot_lost(const ibx_boot_t *boot, int rank, int *code_p);

/* ---- requests ------------------------------------------------------------- */
enum { IBX_REQ_SEND = 1, IBX_REQ_RECV = 2 };

/*
 * A typed request (core/dtype_rdma/dt_xfer.h) carries this in req->dt; the
 * paths see only the header: whether its bytes lie contiguous at req->buf
 * (`packed`: the typed layer packed the send, or receives into a buffer of
 * its own), and, if not, the operations that reach them by packed offset.
 * `done` runs once as the request completes, before `completed` is set and
 * the callback fires; it may turn the status into an error.
 */
/* The transfer schemes of typed messages (core/dtype_rdma/dt_xfer.h). */
typedef enum ibx_dt_scheme {
	IBX_DT_SCHEME_AUTO = 0,
	IBX_DT_SCHEME_GENERIC,
	IBX_DT_SCHEME_BC_SPUP,
	IBX_DT_SCHEME_RWG_UP,
	IBX_DT_SCHEME_P_RRS,
	IBX_DT_SCHEME_MULTI_W,
	IBX_DT_SCHEME_COUNT
} ibx_dt_scheme_t;
#define IBX_DT_CAN(s) (1u << (s))

struct ibx_req_dt_ops {
	/* bytes [off, off + len) of the packed stream, out of (send) or into
	 * (receive) the user's buffer */
	void (*out)(const ibx_request_t *req, size_t off, void *dst, size_t len);
	void (*in)(ibx_request_t *req, size_t off, const void *src, size_t len);
	/* The next blocks of the stream (from where the previous call
	 * stopped, starting at 0): at most @max entries and @max_bytes bytes;
	 * returns the entries and their bytes in *bytes_p. */
	int (*iov)(ibx_request_t *req, size_t max_bytes, struct iovec *iov, int max,
		   size_t *bytes_p);
	/* The receive scheme for a rendezvous of @len bytes from a sender
	 * whose data is contiguous (@sender_contig; else its blocks average
	 * @sender_avg bytes), among the schemes the
	 * path can do for this message (@can, IBX_DT_CAN bits; generic is
	 * always possible) of which @fast are worth choosing unforced; the
	 * choice is recorded in the header's `scheme`. GENERIC makes the
	 * request packed (a landing buffer). Negative: out of memory. */
	int (*choose)(ibx_request_t *req, size_t len, bool sender_contig, uint32_t sender_avg,
		      unsigned can, unsigned fast);
	void (*done)(ibx_request_t *req, ibx_status_t *status);
	/* Receiver, multi-w: its type as (id, version, count) and, unless
	 * @peer has it already (cached from an earlier message), its layout
	 * serialised into @buf (*len_p bytes; 0: the peer has it). -2 when
	 * the layout does not fit @cap (*len_p: the bytes it needs), -1 on
	 * other errors. */
	int (*layout)(ibx_request_t *req, int peer, void *buf, size_t cap, size_t *len_p,
		      uint64_t *id_p, uint32_t *ver_p, int64_t *count_p);
	/* Sender, multi-w: walks the first @len bytes of the send against the
	 * receiver's layout (@peer's type (id, version) at @rbase, @rcount
	 * elements; @blob, if not NULL, is its serialised layout, which is
	 * cached), calling @put per receiver block with the send's blocks that
	 * fill it. Negative: unknown or corrupt layout, or @put failed. */
	int (*pairs)(ibx_request_t *req, int peer, uint64_t id, uint32_t ver, const void *blob,
		     size_t blob_len, uint64_t rbase, int64_t rcount, size_t len,
		     int (*put)(void *arg, const struct iovec *src, int n, uint64_t raddr,
				size_t bytes),
		     void *arg);
};
typedef struct ibx_req_dt {
	const struct ibx_req_dt_ops *ops;
	bool packed;	    /* bytes contiguous at req->buf */
	uint8_t scheme;	    /* ibx_dt_scheme_t this message moved by */
	uint32_t avg_block; /* the type's average block (bytes, capped) */
	int64_t lb;	    /* receive: lowest byte of the user's data, from buf */
	int64_t span;	    /* receive: bytes from lb to the highest byte */
} ibx_req_dt_t;

/* True when the request's bytes must be reached through req->dt. */
static inline bool ibx_req_scattered(const ibx_request_t *req)
{
	return ibx_unlikely(req->dt != NULL) && !req->dt->packed;
}
static inline void ibx_req_copy_out(const ibx_request_t *req, size_t off, void *dst, size_t len)
{
	if (ibx_req_scattered(req))
		req->dt->ops->out(req, off, dst, len);
	else
		memcpy(dst, (const char *)req->buf + off, len);
}
static inline void ibx_req_copy_in(ibx_request_t *req, size_t off, const void *src, size_t len)
{
	if (ibx_req_scattered(req))
		req->dt->ops->in(req, off, src, len);
	else
		memcpy((char *)req->buf + off, src, len);
}

/* Marks the request complete with @status and fires its callback. */
static inline void ibx_req_complete(ibx_request_t *req, ibx_status_t status)
{
	if (ibx_unlikely(req->dt != NULL))
		req->dt->ops->done(req, &status);
	req->status = status;
	/* release: the status and data are visible before `completed` */
	__atomic_store_n(&req->completed, 1, __ATOMIC_RELEASE);
	if (req->cb)
		req->cb(req);
}
static inline void ibx_req_init(ibx_request_t *req, int kind)
{
	req->completed = 0;
	req->status = IBX_INPROGRESS;
	req->kind = kind;
	req->link.next = req->link.prev = NULL;
	req->done = 0;
	req->dt = NULL;
}

/* A queue of requests, linked through their `link` (core/list.h). */
typedef ibx_list_t ibx_req_queue_t;
static inline void ibx_rq_push(ibx_req_queue_t *q, ibx_request_t *r)
{
	ibx_list_push_tail(q, &r->link);
}
static inline void ibx_rq_remove(ibx_req_queue_t *q, ibx_request_t *r)
{
	ibx_list_remove(q, &r->link);
}
static inline ibx_request_t *ibx_rq_first(const ibx_req_queue_t *q)
{
	return ibx_list_first_entry(q, ibx_request_t, link);
}
#define ibx_rq_for_each(r, q)	      ibx_list_for_each_entry(r, q, ibx_request_t, link)
#define ibx_rq_for_each_safe(r, n, q) ibx_list_for_each_entry_safe(r, n, q, ibx_request_t, link)

/* ---- paths ---------------------------------------------------------------- */
struct ibx_peer;

/* An RDMA-style memory descriptor: local address plus what the path needs
 * to let a peer reach it (rkey for verbs; pid/address for shm). */
typedef struct ibx_mem_key {
	uint64_t addr;
	uint64_t len;
	uint32_t rkey; /* verbs */
	uint32_t lkey; /* verbs, local use */
	int32_t pid;   /* shm: owner process for CMA */
	uint32_t pad;
} ibx_mem_key_t;

/*
 * One ops table per path (shm_lf, qp). Everything above the paths (tag
 * matching, datatype schemes, RMA, mpi-lite) is written once against it.
 * Tagged messaging: the path decides eager vs. rendezvous itself; incoming
 * messages are handed to the tag layer through ibx_tag_arrive_*().
 */
typedef struct ibx_path_ops {
	const char *name;
	/* tag_send takes a scattered typed request (ibx_req_scattered): the
	 * path packs it piece by piece into its own buffers; else the typed
	 * layer packs it whole first */
	bool typed_send;
	/* its scattered typed sends are pushed to the receiver, who chooses a
	 * scheme (verbs); the typed layer asks its model whether to push */
	bool typed_push;
	/* Starts sending req->buf[0, req->buflen) with tag req->tag (flags in
	 * req->flags, IBX_SEND_SYNC: complete only once matched, i.e. use the
	 * rendezvous). Returns IBX_OK if complete, IBX_INPROGRESS, or error;
	 * the path queues the send itself when it is out of resources. */
	ibx_status_t (*tag_send)(struct ibx_peer *peer, ibx_request_t *req);
	/* A receive matched a rendezvous announcement @rts (path-private bytes
	 * saved by the tag layer): move the data into req->buf. */
	ibx_status_t (*rndv_recv)(struct ibx_peer *peer, const void *rts, ibx_request_t *req);
	/* One-sided ops (RMA, datatype schemes). Every slot is filled: where a
	 * path cannot do an operation, its function returns
	 * IBX_ERR_UNSUPPORTED (context.c refuses a table with a NULL slot). */
	ibx_status_t (*put)(struct ibx_peer *peer, const struct iovec *src, int n, uint64_t raddr,
			    uint32_t rkey, ibx_request_t *req);
	ibx_status_t (*get)(struct ibx_peer *peer, const struct iovec *dst, int n, uint64_t raddr,
			    uint32_t rkey, ibx_request_t *req);
	ibx_status_t (*put_imm)(struct ibx_peer *peer, const struct iovec *src, int n,
				uint64_t raddr, uint32_t rkey, uint32_t imm, ibx_request_t *req);
	ibx_status_t (*fetch_add)(struct ibx_peer *peer, uint64_t raddr, uint32_t rkey,
				  uint64_t add, uint64_t *result, ibx_request_t *req);
	ibx_status_t (*cswap)(struct ibx_peer *peer, uint64_t raddr, uint32_t rkey,
			      uint64_t compare, uint64_t swap, uint64_t *result,
			      ibx_request_t *req);
	ibx_status_t (*flush)(struct ibx_peer *peer);
	/* Someone who knows (the launcher, through PMIx) reports the peer
	 * gone: log @why with the path's name for the connection, then fail
	 * everything pending with the peer as if the path had seen it. */
	void (*lose)(struct ibx_peer *peer, const char *why);
} ibx_path_ops_t;

typedef struct ibx_peer {
	int rank;
	bool local; /* on this node */
	/* core/rma: what carried one-sided operations towards this peer since
	 * its last flush (IBX_RMA_VIA_*); here, beside the error the same
	 * operations check, rather than in arrays of their own: a small get
	 * and its flush touch one page fewer each */
	uint8_t rma_via;
	const ibx_path_ops_t *ops; /* NULL for self (handled by the tag layer) */
	void *path;		   /* the path's per-peer state */
	ibx_status_t error;	   /* sticky: set when the peer is lost */
} ibx_peer_t;

#define IBX_RMA_VIA_PATH 1u /* the peer's path (self: the loopback QP) */
#define IBX_RMA_VIA_NIC	 2u /* a node-local peer's atomics-only QP */

/*
 * A path module: set up for the job, connect peers, progress, tear down.
 * ibx_init drives every module through the same collective sequence (n may
 * be 0: then the module does nothing but must still return):
 *
 *   init(ranks)  -- create local resources, ibx_boot_put() addresses
 *   <ibx_boot_fence(collect)>
 *   connect      -- ibx_boot_get() peers' addresses, attach/connect, and set
 *                   ctx->peers[r].ops/.path for each of its ranks
 *   <ibx_boot_fence(barrier)>
 *   ready        -- every peer has attached: e.g. unlink shared segments
 */
typedef struct ibx_path_module {
	const char *name;
	/* Called once with the peers that use this path (ranks[], world ranks,
	 * never including self). */
	ibx_status_t (*init)(ibx_ctx_t *ctx, const int *ranks, int n, void **state_p);
	ibx_status_t (*connect)(ibx_ctx_t *ctx, void *state);
	ibx_status_t (*ready)(ibx_ctx_t *ctx, void *state);
	/* Polls for arrivals and completions; returns the number of events. */
	int (*progress)(ibx_ctx_t *ctx, void *state);
	/* True while the path still has sends in flight (finalize drains). */
	bool (*busy)(ibx_ctx_t *ctx, void *state);
	void (*fini)(ibx_ctx_t *ctx, void *state);
	/* optional: the device the path drives ("rxe0:1"), or NULL */
	const char *(*device)(void *state);
} ibx_path_module_t;

/* The first path's device in use (for per-device tuning files), or NULL. */
const char *ibx_ctx_device(const ibx_ctx_t *ctx);

/* Tag-matching layer (core/tag.c): called by paths on arrival. */
/* An eager message: data is only valid during the call. */
void ibx_tag_arrive_eager(ibx_ctx_t *ctx, int src, ibx_tag_t tag, const void *data, size_t len);
/* A rendezvous announcement: @rts (rts_len bytes, at most IBX_RTS_MAX) is
 * the path's descriptor, kept until a receive matches. */
#define IBX_RTS_MAX 64
void ibx_tag_arrive_rts(ibx_ctx_t *ctx, int src, ibx_tag_t tag, size_t msg_len, const void *rts,
			size_t rts_len);
/* Fails every pending request that involves @peer (the peer is lost). */
void ibx_tag_peer_failed(ibx_ctx_t *ctx, int peer, ibx_status_t why);
/* The tag layer's entry points for a request the caller has initialised
 * (ibx_req_init) and filled: buf, buflen, tag, peer (the destination, or
 * the source / IBX_ANY_SOURCE), flags or mask, and dt. The typed layer
 * (core/dtype_rdma/dt_xfer.c) starts its requests through them. */
ibx_status_t ibx_tag_send_req(ibx_ctx_t *ctx, ibx_request_t *req);
ibx_status_t ibx_tag_recv_req(ibx_ctx_t *ctx, ibx_request_t *req);
ibx_status_t ibx_tag_mrecv_req(ibx_ctx_t *ctx, ibx_tag_msg_t *msg, ibx_request_t *req);
/* Takes @msg off the list of mprobe'd messages; false if it is not there
 * (received already, or never probed). */
bool ibx_tag_msg_take(ibx_ctx_t *ctx, ibx_tag_msg_t *msg);
/* Frees the unexpected queue and the claimed messages (finalize). */
void ibx_tag_cleanup(ibx_ctx_t *ctx);

/* Work of an upper layer that moves on whenever the engine progresses
 * (mpi-lite's nonblocking collectives): ibx_progress calls @hook after the
 * paths, whoever called it (a wait, a test, a probe, a blocking send), and
 * adds what it returns (events: work that moved) to its own count. The
 * hook may start transfers; the ibx_progress calls they make run the hook
 * again, so it must ignore a nested call. NULL removes it. */
typedef int (*ibx_progress_hook_t)(ibx_ctx_t *ctx, void *arg);
void ibx_progress_hook_set(ibx_ctx_t *ctx, ibx_progress_hook_t hook, void *arg);

/* An upper layer's "blocking idle" callback: ibx_progress_wait (and so
 * ibx_wait and every wait loop of the engine) calls @hook after each of
 * its progress passes, when the caller is about to poll again. mpi-lite
 * under MPI_THREAD_MULTIPLE lets its other threads into the library there
 * (it releases its critical section and takes it back), so a thread
 * blocked in a wait does not shut out the one that would complete it. On
 * return from the hook the engine may have been progressed by another
 * thread: a waiter re-reads what it waits for (as it does anyway). The
 * hook is never called from ibx_progress itself, so no progress pass is
 * ever interleaved with another. NULL (the default) removes it. */
typedef void (*ibx_idle_hook_t)(ibx_ctx_t *ctx, void *arg);
void ibx_idle_hook_set(ibx_ctx_t *ctx, ibx_idle_hook_t hook, void *arg);

struct ibx_ctx {
	ibx_boot_t *boot;
	/* the launcher's reports of lost peers: applied by ibx_progress on an
	 * idle pass when *lost_gen moved past lost_seen */
	_Atomic unsigned *lost_gen;
	unsigned lost_seen;
	/* the verbs path also connects node-local peers, for the NIC's atomics
	 * on their memory (a job over several nodes, IBX_PATHS=auto) */
	bool nic_local;
	int rank, size;
	int local_size;
	const int *local_ranks;
	ibx_peer_t *peers; /* [size] */
	/* paths in use */
	struct {
		const ibx_path_module_t *mod;
		void *state;
	} paths[2];
	int npaths;
	/* tag matching */
	ibx_req_queue_t posted; /* posted receives, in post order */
	struct ibx_unexp *unexp_head, *unexp_tail;
	struct ibx_unexp *claimed; /* taken by ibx_tag_mprobe, not received yet */
	struct ibx_unexp *unexp_free;
	unsigned unexp_free_count;
	uint64_t spin_count;
	unsigned yield_mask; /* past spin_count, yield every (mask + 1)th idle pass */
	unsigned flags;
	/* one-sided API state (core/rma), created on first use; core calls
	 * rma_fini at finalize, before the paths go away, without knowing
	 * more of it (dependencies point down) */
	void *rma;
	void (*rma_fini)(ibx_ctx_t *ctx);
	/* typed messaging state (core/dtype_rdma/dt_xfer.c), created on first
	 * use, freed by dtx_fini at finalize like rma */
	void *dtx;
	void (*dtx_fini)(ibx_ctx_t *ctx);
	/* an upper layer's progress (ibx_progress_hook_set), or NULL */
	ibx_progress_hook_t progress_hook;
	void *progress_arg;
	/* called between the passes of a wait (ibx_idle_hook_set), or NULL */
	ibx_idle_hook_t idle_hook;
	void *idle_arg;
};

/* Path modules (defined by the path directories). */
extern const ibx_path_module_t ibx_shm_path_module;
extern const ibx_path_module_t ibx_qp_path_module;

#endif /* IBX_INT_H */
