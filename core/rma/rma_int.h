/*
 * rma_int.h — private to core/rma: memory handles, remote keys and the
 * per-context state of the engine's one-sided API (include/ibx.h, "one-sided
 * communication").
 *
 * How an origin reaches a key's owner (chosen once, when the key is
 * unpacked):
 *
 *   owner                    memory kind         put / get            atomics
 *   ──────────────────────── ─────────────────── ──────────────────── ─────────────────────────
 *   self                     any                 memcpy               C11 atomics (allocated),
 *                                                                     RMW under the owner's lock;
 *                                                                     with verbs peers: IB atomics
 *                                                                     on the loopback QP
 *   node-local (shm path)    ibx_mem_alloc       memcpy on our        C11 atomics on our
 *                                                mapping of its seg   mapping ([Zhou15] §3)
 *   node-local (shm path)    ibx_mem_share       as ibx_mem_alloc when the pages could move
 *                                                into a segment (share.c); else as ibx_mem_map
 *   node-local (shm path)    ibx_mem_map         CMA (path ops)       RMW under the owner's lock:
 *                                                                     CMA read, op, CMA write
 *   verbs path               any (registered)    RDMA WRITE / READ    IB atomics (ADD = FADD,
 *                                                                     SWAP = CAS loop)
 *
 * The owner's lock is a word in its control page, a one-page memfd segment
 * that every process with mapped memory creates once; node-local peers map
 * it through /proc/<pid>/fd/<fd> (a read-mode ptrace check, which the
 * Yama "restricted ptrace" setting does not forbid, unlike CMA). The same
 * mechanism maps the segments of ibx_mem_alloc. The lock word holds the
 * holder's pid, so a waiter can tell a dead holder from a slow one.
 *
 * Packed key, version 2 (RMA_KEY_LEN bytes, host byte order: every process
 * of a job runs on the same architecture):
 *
 *   0 magic "IBXK"   4 version  5 flags (VERBS|SEG|CTL)  6 reserved (0)
 *   8 owner rank    12 owner pid
 *  16 base          24 length
 *  32 verbs rkey    36 segment fd   40 segment length
 *  48 control fd    52 base's offset in the segment
 *  60 segment inode (a descriptor number can be reused by another file:
 *     the origin maps the segment only if /proc/<pid>/fd/<fd> is this one;
 *     and a new segment never gets the key of an old one)
 *  68 checksum (FNV-1a of bytes 0..67)
 */
#ifndef IBX_RMA_INT_H
#define IBX_RMA_INT_H

#include "ibx_int.h"

#include <stdatomic.h>

#define RMA_KEY_MAGIC	0x4b584249u /* "IBXK" */
#define RMA_KEY_VERSION 2
#define RMA_KEY_LEN	72
#define RMA_KEY_SUMMED	68 /* the checksum covers the bytes before it */
_Static_assert(RMA_KEY_LEN <= IBX_RKEY_PACKED_MAX, "packed key must fit the public bound");

enum {
	RMA_KEY_VERBS = 0x1, /* registered with the verbs device: rkey valid */
	RMA_KEY_SEG = 0x2,   /* in a memfd segment (ibx_mem_alloc, ibx_mem_share) */
	RMA_KEY_CTL = 0x4,   /* the owner's control page (RMW lock) */
};

/* The control page: one per process, shared with node-local peers. */
typedef struct rma_ctl {
	_Atomic uint64_t rmw_lock; /* 0: free; else the holder's pid */
	uint64_t magic;
} rma_ctl_t;
#define RMA_CTL_MAGIC 0x6c74632d78626975ull

/* A mapped node-local segment (a peer's control page or allocated memory). */
typedef struct rma_map {
	void *addr;
	size_t len;
} rma_map_t;

struct ibx_mem {
	ibx_list_node_t link; /* rma state's list of live mappings */
	void *addr;
	size_t len;
	bool allocated; /* ibx_mem_alloc: we own the segment below */
	bool shared;	/* ibx_mem_share: in a segment that share.c owns */
	int seg_fd;
	size_t seg_len;
	size_t seg_off; /* where addr is in the segment */
	uint64_t seg_ino;
	void *verbs_handle; /* ibx_qp_path_mem_dereg */
	uint32_t verbs_rkey;
	bool verbs;
};

typedef enum rma_route {
	RMA_ROUTE_DIRECT, /* load / store on memory mapped here */
	RMA_ROUTE_CMA,	  /* node-local peer's private memory: shm path ops */
	RMA_ROUTE_VERBS,  /* verbs path ops */
} rma_route_t;

struct ibx_rkey {
	ibx_list_node_t link; /* rma state's list of live keys */
	int owner;
	int owner_pid;
	uint64_t base, len;
	unsigned flags; /* RMA_KEY_* */
	uint32_t verbs_rkey;
	rma_route_t route;
	char *direct;	      /* DIRECT: where base is mapped in this process */
	rma_map_t seg;	      /* a node-local peer's segment: our mapping of it */
	char *seg_base;	      /* where base is in that mapping (NULL: none) */
	ibx_peer_t *amo_peer; /* atomics through the verbs path, so that they are
				 the NIC's like those of the owner's verbs
				 peers (NULL: by the route): our loopback QP for
				 our own memory, the owner's atomics-only QP for
				 a node-local owner's (ctx->nic_local) */
	uint32_t amo_rkey;    /* the owner's verbs key */
	bool rmw_self;	      /* our own private memory, which node-local peers update
				 under our RMW lock: CPU atomics must take it too, so
				 ibx_rkey_ptr does not offer the memory */
	rma_ctl_t *ctl;	      /* the owner's control page, for RMW under its lock */
	rma_map_t ctl_map;    /* our mapping of it (not for self) */
};

/* Per-context state, created by the first call that needs it. Which peers
 * need a flush is in the peer table (ibx_peer_t.rma_via), not here. */
typedef struct rma_state {
	rma_ctl_t *ctl; /* our control page */
	int ctl_fd;
	ibx_list_t mems;   /* live ibx_mem_t */
	ibx_list_t rkeys;  /* live ibx_rkey_t */
	ibx_list_t shares; /* segments that ibx_mem_share made (share.c) */
	uint64_t scratch;  /* result of an IBX_ATOMIC_ADD over verbs (discarded) */
} rma_state_t;

ibx_status_t ibx_rma_state_get(ibx_ctx_t *ctx, rma_state_t **st_p);
/* Maps @len bytes of fd @fd of process @pid (through /proc); when @ino is
 * not 0, only if that descriptor is still the file with this inode
 * (IBX_ERR_CORRUPT otherwise). */
ibx_status_t ibx_rma_map_remote(int pid, int fd, size_t len, uint64_t ino, rma_map_t *map_p);
/* The inode of our file descriptor @fd (0 if unknown). */
uint64_t ibx_rma_fd_ino(int fd);
void ibx_rma_unmap(rma_map_t *map);
/* Closes the segments of ibx_mem_share (their mappings stay in place). */
void ibx_rma_share_fini(rma_state_t *st);
void ibx_rma_rkey_release(ibx_rkey_t *rk);
/* FNV-1a over the first @n bytes of a packed key. */
uint32_t ibx_rma_key_checksum(const unsigned char *b, size_t n);

#endif /* IBX_RMA_INT_H */
