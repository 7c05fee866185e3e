/*
 * win_int.h — private to mpi-lite's one-sided communication (MPI-3.1
 * chapter 11): the window object, the control block every member exposes,
 * and the calls the window files make of each other.
 *
 * Files:
 *   win.c       creation of the four flavours (create, allocate, allocate_shared,
 *               create_dynamic), free, shared_query, MPI_Alloc_mem /
 *               MPI_Free_mem, mpil_win_target
 *   win_dyn.c   dynamic windows: attach / detach and the region table
 *   win_mem.c   MPI_Alloc_mem / MPI_Free_mem
 *   win_attr.c  group, name, attributes and keyvals, error handlers, info and
 *               the hints that change behaviour
 *   win_ops.c   Put, Get and their request forms, datatypes at both ends
 *   win_acc.c   Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap
 *               and their request forms; element-wise atomicity
 *   win_sync.c  fence, post / start / complete / wait / test, lock / unlock,
 *               lock_all / unlock_all, flush*, sync; epoch checks
 *   win_lock.c  the passive-target reader-writer lock and the accumulate
 *               lock, on control-block words changed by remote atomics
 *
 * Everything goes through the engine's one-sided API (include/ibx.h): no
 * call here ever needs the target process to call MPI. The target of an
 * operation is reached through the key of its window memory (t->rk); the
 * window's synchronisation uses the key of its control block (t->ctl_rk).
 *
 * Control block (one per member and window, from ibx_mem_alloc, so that
 * node-local members reach it with loads, stores and CPU atomics and remote
 * ones with RDMA); 8-byte words, offsets in words:
 *
 *   0  LOCK_RIN      passive lock, phase-fair (win_lock.c): readers in << 8 |
 *   1  LOCK_ROUT       writer phase bits; readers out; writer tickets taken;
 *   2  LOCK_WIN        writer tickets served
 *   3  LOCK_WOUT
 *   4  ACC_LOCK      accumulate lock for elements no 8-byte atomic covers:
 *                    0 free, else the holder's world rank + 1
 *   5  COMPLETE      PSCW: MPI_Win_complete calls received (counter)
 *   6  DYN_VERSION   dynamic windows: region table version, odd while it changes
 *   7  DYN_COUNT     dynamic windows: entries in use
 *   8  POST[p]       PSCW: MPI_Win_post calls received from window rank r, at
 *                    POST + r (counter)
 *   8 + p            DYN_TAB: where the region table is (dynamic only): its
 *                    address, capacity and packed key (mpil_win_dyn_tab_t);
 *                    the table itself is a block of its own that grows
 *                    (win_dyn.c)
 *
 * Counters only grow, so nothing is ever reset while a peer may read it.
 */
#ifndef MPIL_WIN_INT_H
#define MPIL_WIN_INT_H

#include "mpil_int.h"

#define MPIL_MAGIC_WIN 0x6d57696eu /* "mWin" */

/* control-block word offsets */
enum {
	MPIL_WCTL_LOCK_RIN = 0,
	MPIL_WCTL_LOCK_ROUT = 1,
	MPIL_WCTL_LOCK_WIN = 2,
	MPIL_WCTL_LOCK_WOUT = 3,
	MPIL_WCTL_ACC_LOCK = 4,
	MPIL_WCTL_COMPLETE = 5,
	MPIL_WCTL_DYN_VERSION = 6,
	MPIL_WCTL_DYN_COUNT = 7,
	MPIL_WCTL_POST = 8,
};

/* One entry of a dynamic window's region table, as origins read it. */
typedef struct mpil_win_region {
	uint64_t base, len;
	uint64_t key_len;
	unsigned char key[IBX_RKEY_PACKED_MAX];
} mpil_win_region_t;
_Static_assert(sizeof(mpil_win_region_t) % 8 == 0, "regions are read as words");

/* Where a dynamic window's region table is, in the control block. */
typedef struct mpil_win_dyn_tab {
	uint64_t addr; /* 0: no table yet */
	uint64_t cap;  /* entries it holds */
	uint64_t key_len;
	unsigned char key[IBX_RKEY_PACKED_MAX];
} mpil_win_dyn_tab_t;
_Static_assert(sizeof(mpil_win_dyn_tab_t) % 8 == 0, "read as words");

/* Word offset of the table's descriptor, and the bytes of a control block. */
static inline size_t mpil_win_ctl_dyn_tab(int p)
{
	return MPIL_WCTL_POST + (size_t)p;
}
static inline size_t mpil_win_ctl_bytes(int p, bool dynamic)
{
	return 8 * mpil_win_ctl_dyn_tab(p) + (dynamic ? sizeof(mpil_win_dyn_tab_t) : 0);
}

/* An origin's cached copy of a target's region (dynamic windows). */
typedef struct mpil_win_dyn_region {
	uint64_t base, len;
	ibx_rkey_t *rk;
	uint64_t key_hash; /* of the packed key: a re-attached region gets a new rk */
} mpil_win_dyn_region_t;

/* A region this process attached (same order as its table). */
typedef struct mpil_win_attached {
	void *base;
	MPI_Aint size;
	ibx_mem_t *mem;
} mpil_win_attached_t;

/* A region-table block this process published; kept until MPI_Win_free,
 * since an origin may still read a block the table has outgrown. */
typedef struct mpil_win_tab_block {
	ibx_mem_t *mem;
	mpil_win_region_t *e;
	uint64_t cap;
} mpil_win_tab_block_t;

/* What this process knows of one member of the window (window rank r). */
typedef struct mpil_win_target {
	int world;     /* the member's world rank */
	uint64_t base; /* its window memory (absolute address; 0 when dynamic) */
	uint64_t size; /* bytes */
	int disp_unit;
	ibx_rkey_t *rk;	     /* its window memory (NULL when dynamic or size 0) */
	int rk_owner;	     /* world rank that owns rk's memory (shared windows: the
				node's first member), the one to ibx_flush */
	void *local;	     /* its window memory mapped here (ibx_rkey_ptr), or NULL */
	ibx_rkey_t *ctl_rk;  /* its control block */
	uint64_t ctl_base;   /* the control block's address in its process */
	uint64_t *ctl_local; /* the control block mapped here, or NULL */
	/* passive target: this process's lock on the member (win_sync.c) */
	int lock_type;	     /* 0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE */
	uint64_t lock_state; /* what the unlock needs (win_lock.c) */
	bool lock_nocheck;   /* locked with MPI_MODE_NOCHECK: nothing to release */
	/* operations since the last flush of this member */
	bool dirty;
	/* PSCW: posts of this member consumed by our MPI_Win_start calls */
	uint64_t posts_seen;
	bool pscw_target; /* in the group of our open MPI_Win_start (win_sync.c) */
	/* dynamic windows: our copy of its region table, sorted by base */
	uint64_t dyn_version;
	int dyn_n;
	mpil_win_dyn_region_t *dyn;
	/* and the key of the table block we last read */
	uint64_t tab_addr, tab_hash;
	ibx_rkey_t *tab_rk;
} mpil_win_target_t;

/* The access epoch this process has open (MPI-3.1 §11.5). */
enum mpil_win_epoch {
	MPIL_EPOCH_NONE,
	MPIL_EPOCH_FENCE,    /* since a fence without MPI_MODE_NOSUCCEED */
	MPIL_EPOCH_PSCW,     /* between MPI_Win_start and MPI_Win_complete */
	MPIL_EPOCH_LOCK,     /* one or more MPI_Win_lock */
	MPIL_EPOCH_LOCK_ALL, /* MPI_Win_lock_all */
};

/* info "accumulate_ordering" bits (default: all four) */
#define MPIL_ACC_ORDER_RAR 0x1u
#define MPIL_ACC_ORDER_RAW 0x2u
#define MPIL_ACC_ORDER_WAR 0x4u
#define MPIL_ACC_ORDER_WAW 0x8u
/* info "accumulate_ops" */
enum mpil_acc_ops { MPIL_ACC_OPS_SAME_OP_NO_OP, MPIL_ACC_OPS_SAME_OP };

struct mpil_win {
	uint32_t magic;
	int flavor;	/* MPI_WIN_FLAVOR_* */
	MPI_Comm comm;	/* a private duplicate of the creating communicator */
	int rank, size; /* in comm */
	/* this process's window memory */
	void *base;
	MPI_Aint size_bytes;
	int disp_unit;
	ibx_mem_t *mem;	    /* NULL for dynamic windows and size 0 */
	void *allocated;    /* memory that MPI_Win_allocate made here (shared windows:
			       the node segment, on its first member), freed at free */
	ibx_mem_t *seg;	    /* shared windows: the node segment (first member only) */
	ibx_rkey_t *seg_rk; /* shared windows: its key, the rk of every member's t[] */
	/* this process's control block */
	ibx_mem_t *ctl_mem;
	uint64_t *ctl;
	/* every member, by window rank */
	mpil_win_target_t *t;
	/* dynamic windows: what this process attached (same order as its
	 * table), and the table's blocks (the last one is current) */
	mpil_win_attached_t *attached;
	int nattached, attached_cap;
	mpil_win_tab_block_t *tabs;
	int ntabs;
	/* synchronisation state (win_sync.c) */
	int access;		     /* enum mpil_win_epoch */
	int nlocked;		     /* members locked with MPI_Win_lock */
	MPI_Group start_group;	     /* PSCW access epoch: the targets */
	MPI_Group post_group;	     /* PSCW exposure epoch: the origins */
	uint64_t completes_expected; /* COMPLETE value that ends the exposure epoch */
	int fence_assert;	     /* assertions of the fence that opened the epoch */
	/* hints (win_attr.c) */
	bool no_locks;
	bool same_size, same_disp_unit;
	bool alloc_shared_noncontig;
	unsigned acc_ordering; /* MPIL_ACC_ORDER_* */
	int acc_ops;	       /* enum mpil_acc_ops */
	MPI_Info info;	       /* the hints as given (MPI_Win_get_info adds the rest) */
	/* the rest of the object */
	MPI_Errhandler errhandler;
	void *attrs;
	char name[MPI_MAX_OBJECT_NAME];
};

static inline bool mpil_win_valid(MPI_Win win)
{
	return win && win->magic == MPIL_MAGIC_WIN;
}

/* ---- win_attr.c ---------------------------------------------------------------- */
/*
 * Raises @errclass in @fname on @win through the window's error handler
 * (MPI_ERRORS_ARE_FATAL by default, as MPI-3.1 §8.3 says for windows),
 * formatted as mpil_err does. Returns @errclass for the caller to return.
 * A NULL or invalid @win reports on MPI_COMM_WORLD.
 */
int mpil_win_err(MPI_Win win, int errclass, const char *fname, const char *fmt, ...)
    __attribute__((cold, noinline, format(printf, 4, 5)));
/* The first check of every window call: MPI is initialised (else the
 * state error) and @win is a live window (else MPI_ERR_WIN, reported on
 * MPI_COMM_WORLD). The failure report is out of line. */
int mpil_win_check_failed(MPI_Win win, const char *fname) __attribute__((cold, noinline));
static inline int mpil_win_check(MPI_Win win, const char *fname)
{
	if (ibx_likely(mpil_initialized() && mpil_win_valid(win)))
		return MPI_SUCCESS;
	return mpil_win_check_failed(win, fname);
}
/* Reads the hints of @info into @win (creation and MPI_Win_set_info). */
int mpil_win_apply_info(MPI_Win win, MPI_Info info, const char *fname);
/* Runs the delete callbacks of @win's attributes (MPI_Win_free). */
int mpil_win_attr_delete_all(MPI_Win win);

/* An 8-byte integer type (C or multi-language): CPU and NIC atomics take it. */
static inline bool mpil_win_int8(MPI_Datatype b)
{
	return b->size == 8 && (b->group & (MPIL_DTG_INT | MPIL_DTG_MULTI));
}

/* ---- win.c ---------------------------------------------------------------------- */
/*
 * Where an access of the bytes [lo, hi) relative to target_disp lands at
 * window rank @target (lo < 0 possible: a target datatype's true lower
 * bound): checks the rank (MPI_ERR_RANK), the range against the member's
 * window (MPI_ERR_RMA_RANGE; dynamic windows: against an attached region,
 * refreshing the cached region table when needed) and returns the absolute
 * target address of displacement 0 of the access, and the key to use.
 * Reports through mpil_win_err.
 */
int mpil_win_target(MPI_Win win, int target, MPI_Aint target_disp, MPI_Aint lo, MPI_Aint hi,
		    uint64_t *raddr_p, ibx_rkey_t **rk_p, const char *fname);
/* MPI_Finalize: the bookkeeping of MPI_Alloc_mem (win_mem.c). */
void mpil_win_alloc_mem_fini(void);
/* Maps user memory for a window over @comm (win_mem.c: moved into a shared
 * segment when node-local members would otherwise need system calls). */
ibx_status_t mpil_win_map_user(MPI_Comm comm, void *base, size_t size, ibx_mem_t **mem_p);

/* ---- win_dyn.c ------------------------------------------------------------------ */
/* mpil_win_target for a dynamic window: @target_disp is an address. */
int mpil_win_dyn_target(MPI_Win win, int target, MPI_Aint target_disp, MPI_Aint lo, MPI_Aint hi,
			uint64_t *raddr_p, ibx_rkey_t **rk_p, const char *fname);
/* MPI_Win_free: the cached region keys and what this process attached. */
void mpil_win_dyn_release(MPI_Win win);
/* MPI_Finalize, the engine gone: frees what the dynamic state holds on the
 * heap only. */
void mpil_win_dyn_forget(MPI_Win win);

/* ---- win_sync.c ------------------------------------------------------------------ */
/* An access epoch to window rank @target is open (MPI_ERR_RMA_SYNC if not). */
int mpil_win_access_check(MPI_Win win, int target, const char *fname);
/* The open epoch already reaches member @t (no lock to take first): the
 * success cases of mpil_win_access_check, without its side effects. */
static inline bool mpil_win_epoch_open(MPI_Win win, const mpil_win_target_t *t)
{
	switch (win->access) {
	case MPIL_EPOCH_FENCE: return true;
	case MPIL_EPOCH_PSCW: return t->pscw_target;
	case MPIL_EPOCH_LOCK:
	case MPIL_EPOCH_LOCK_ALL: return t->lock_type != 0;
	default: return false;
	}
}
/* Operations were started towards @target: a flush (or the end of the
 * epoch) must complete them. */
static inline void mpil_win_dirty(MPI_Win win, int target)
{
	win->t[target].dirty = true;
}
/* Completes every operation started towards @target (remote completion);
 * an engine failure is reported through mpil_win_err. */
int mpil_win_flush_target(MPI_Win win, int target, const char *fname);
/* Waits, with the engine's spin-then-yield rules, until @done(arg) holds;
 * checks that the members of @win are alive while it waits. */
int mpil_win_wait_until(MPI_Win win, bool (*done)(MPI_Win win, void *arg), void *arg,
			const char *fname);
/* Frees the synchronisation state (MPI_Win_free; after the final barrier). */
void mpil_win_sync_fini(MPI_Win win);

/* ---- win_lock.c ------------------------------------------------------------------ */
/* Control-block words of member @target: read, atomic fetch-add, CAS. */
int mpil_win_ctl_read(MPI_Win win, int target, int word, uint64_t *val_p, const char *fname);
int mpil_win_ctl_fadd(MPI_Win win, int target, int word, uint64_t add, uint64_t *old_p,
		      const char *fname);
int mpil_win_ctl_cas(MPI_Win win, int target, int word, uint64_t cmp, uint64_t swap,
		     uint64_t *old_p, const char *fname);
/* The passive-target lock of member @target (blocks until granted). */
int mpil_win_lock_acquire(MPI_Win win, int target, int lock_type, const char *fname);
int mpil_win_lock_release(MPI_Win win, int target, const char *fname);
/* The accumulate lock of member @target. */
int mpil_win_acc_lock(MPI_Win win, int target, const char *fname);
int mpil_win_acc_unlock(MPI_Win win, int target, const char *fname);

/* ---- win_ops.c -------------------------------------------------------------------- */
/* The target side of a transfer: bytes [lo, hi) of @count elements of @dt
 * relative to the target address, as a list of contiguous blocks
 * (offset, length) in packed order. *blocks_p is malloc'ed (free it);
 * contiguous types give one block. */
typedef struct mpil_win_block {
	MPI_Aint off;
	size_t len;
} mpil_win_block_t;
int mpil_win_blocks(MPI_Datatype dt, int count, mpil_win_block_t **blocks_p, size_t *n_p);

/* Shared by win_ops.c and win_acc.c. Where the target data of one
 * operation is, once mpil_win_where has checked the access. */
typedef struct mpil_win_where {
	int target;	/* window rank */
	int owner;	/* world rank to ibx_flush (t->rk_owner; dynamic: t->world) */
	uint64_t raddr; /* target address of displacement 0 */
	ibx_rkey_t *rk;
	char *local; /* raddr mapped here (ibx_rkey_ptr), or NULL */
} mpil_win_where_t;
/* A committed datatype (MPI_ERR_TYPE through the window otherwise). */
int mpil_win_check_dt(MPI_Win win, MPI_Datatype dt, const char *fname);
/* The accumulate family's checks (win_acc_check.c): one predefined element
 * of @groups (Fetch_and_op, Compare_and_swap); a predefined op, MPI_NO_OP
 * only when fetching; the buffers all made of the target's predefined
 * type, on which the op is defined (@odt, @rdt NULL: not used). */
int mpil_win_check_predefined(MPI_Win win, MPI_Datatype dt, unsigned groups, const char *fname);
int mpil_win_check_op(MPI_Win win, MPI_Op op, bool fetch, const char *fname);
int mpil_win_check_basic(MPI_Win win, MPI_Op op, MPI_Datatype odt, MPI_Datatype rdt,
			 MPI_Datatype tdt, const char *fname);
/* One buffer's (count, datatype): MPI_ERR_COUNT (negative, or bytes past
 * INT64_MAX), MPI_ERR_TYPE; @what names the buffer ("origin"...). */
int mpil_win_check_data(MPI_Win win, int count, MPI_Datatype dt, const char *what,
			const char *fname);
/* For a target rank other than MPI_PROC_NULL: the rank (MPI_ERR_RANK),
 * the access epoch (MPI_ERR_RMA_SYNC; @request: request-based operations
 * need a passive-target epoch), and, when @count elements of @dt are not
 * empty, the range (MPI_ERR_RMA_RANGE); fills @w. */
int mpil_win_where(MPI_Win win, int target, MPI_Aint disp, int count, MPI_Datatype dt, bool request,
		   mpil_win_where_t *w, const char *fname);
/* A request that is complete already (operations done before returning). */
int mpil_win_req_done(MPI_Win win, MPI_Request *request, const char *fname);
/* Calls @fn for each contiguous block of the first @nbytes packed bytes of
 * @count elements of @dt at address @addr (any address space: the blocks'
 * addresses are @addr plus their offsets), in packed order. */
typedef ibx_status_t (*mpil_win_block_fn)(void *arg, int64_t packed_off, void *addr, size_t len);
ibx_status_t mpil_win_walk(MPI_Datatype dt, int count, uint64_t addr, size_t nbytes,
			   mpil_win_block_fn fn, void *arg);

#endif /* MPIL_WIN_INT_H */
