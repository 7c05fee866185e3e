/*
 * win.c — windows (MPI-3.1 §11.2): creation of the four flavours, free,
 * MPI_Win_shared_query, and mpil_win_target, where every operation learns
 * the address and key of its target. The region table of dynamic windows is
 * in win_dyn.c, MPI_Alloc_mem / MPI_Free_mem in win_mem.c.
 *
 * Every creation is one pattern, collective over the creating communicator:
 *
 *   hints (win_attr.c) ─► private duplicate of the communicator (errors
 *   return; a window's own traffic never meets the user's)
 *   ─► this member's memory:   create     ibx_mem_map(user memory)
 *                              allocate   ibx_mem_alloc: node-local peers
 *                                         load/store it, remote ones use RDMA
 *                                         (one window, two access methods,
 *                                         [Zhou15] §3)
 *                              shared     the node's first member allocates
 *                                         one segment for all (below)
 *                              dynamic    none (MPI_Win_attach, win_dyn.c)
 *   ─► its control block (ibx_mem_alloc, layout in win_int.h)
 *   ─► allgather of a card {base, size, disp_unit, packed keys, error}
 *   ─► unpack every member's keys into t[r]; local = ibx_rkey_ptr where the
 *      memory is mapped here (self, and node-local peers' allocated memory)
 *   ─► allreduce of the local outcome: all members succeed or all fail.
 *
 * A member that fails locally still takes part in every collective step,
 * carrying its error, so a failure is reported everywhere and nobody waits.
 *
 * Shared windows: all members must run on one node (the engine's node-local
 * ranks), else MPI_ERR_RMA_SHARED. Window rank 0 allocates one segment for
 * the parts of all members; by default part r starts where part r - 1 ends
 * (contiguous, as MPI-3.1 §11.2.3 says), with the hint
 * alloc_shared_noncontig each part starts on a page of its own. Every member
 * maps the segment through rank 0's key (ibx_rkey_ptr); t[r].base is the
 * address of part r in rank 0's process and t[r].rk rank 0's key, so
 * operations of every kind reach it and flushes go to rank 0 (rk_owner).
 * Where the engine cannot map the segment directly (IBX_PATHS=verbs between
 * node-local ranks) the creation fails with MPI_ERR_RMA_SHARED.
 */
#include "attr_int.h"
#include "win_int.h"

#include <stdlib.h>
#include <unistd.h>

static mpil_pool_t win_pool = MPIL_POOL_INIT(struct mpil_win);

/* What every member tells the others at creation. */
typedef struct win_card {
	uint64_t base, size, ctl_base;
	int32_t disp_unit;
	int32_t err; /* this member's local failure (MPI error class), or 0 */
	uint32_t key_len, ctl_key_len;
	unsigned char key[IBX_RKEY_PACKED_MAX];
	unsigned char ctl_key[IBX_RKEY_PACKED_MAX];
} win_card_t;

static size_t page_size(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	return pg > 0 ? (size_t)pg : 4096;
}

/* ---- destruction (free and failed creation) ---------------------------------------------- */

/* Releases everything @win holds with the engine and the heap; the object
 * goes back to the pool. Safe on a partly built window. */
static void win_destroy(MPI_Win win)
{
	ibx_ctx_t *ctx = mpil_g.ctx;

	for (int r = 0; win->t && r < win->size; r++) {
		mpil_win_target_t *t = &win->t[r];

		if (t->rk && t->rk != win->seg_rk)
			ibx_rkey_destroy(ctx, t->rk);
		if (t->ctl_rk)
			ibx_rkey_destroy(ctx, t->ctl_rk);
	}
	mpil_win_dyn_release(win);
	if (win->seg_rk)
		ibx_rkey_destroy(ctx, win->seg_rk);
	if (win->mem)
		ibx_mem_unmap(ctx, win->mem);
	if (win->seg)
		ibx_mem_unmap(ctx, win->seg);
	if (win->ctl_mem)
		ibx_mem_unmap(ctx, win->ctl_mem);
	free(win->t);
	mpil_attrs_drop(&win->attrs);
	mpil_info_release(win->info);
	if (win->errhandler)
		mpil_errh_release(win->errhandler);
	/* the private duplicate (win_begin leaves NULL here when it has none) */
	if (mpil_comm_valid(win->comm))
		PMPI_Comm_free(&win->comm);
	mpil_pool_put(&win_pool, win);
}

/* MPI_Finalize: windows the program left; the engine is gone already. */
static void win_fini_live(void *obj)
{
	MPI_Win win = obj;

	mpil_win_dyn_forget(win);
	free(win->t);
	mpil_attrs_drop(&win->attrs);
}

void mpil_win_fini(void)
{
	mpil_pool_fini(&win_pool, win_fini_live);
	mpil_win_alloc_mem_fini();
}

/* ---- creation ------------------------------------------------------------------------------ */

static int check_comm_args(MPI_Comm comm, MPI_Info info, MPI_Win *win, const char *F)
{
	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(mpil_check_info(comm, info, true, F));
	if (!win)
		return mpil_err(comm, MPI_ERR_ARG, F, "win is NULL");
	return MPI_SUCCESS;
}

static int check_size_args(MPI_Comm comm, MPI_Aint size, int disp_unit, const char *F)
{
	if (size < 0)
		return mpil_err(comm, MPI_ERR_SIZE, F, "negative size %lld", (long long)size);
	if (disp_unit <= 0)
		return mpil_err(comm, MPI_ERR_DISP, F, "displacement unit %d (must be positive)",
				disp_unit);
	return MPI_SUCCESS;
}

/* Are all members of @comm node-local to this process (the engine's view)?
 * Every member computes the same answer: one that sees a member elsewhere is
 * itself elsewhere for that member. */
static bool comm_on_one_node(MPI_Comm comm)
{
	int n = ibx_local_size(mpil_g.ctx);
	const int *local = ibx_local_ranks(mpil_g.ctx);

	for (int r = 0; r < comm->size; r++) {
		int w = mpil_comm_to_world(comm, r), i;

		for (i = 0; i < n && local[i] != w; i++)
			;
		if (i == n)
			return false;
	}
	return true;
}

/* The object, its hints and its private communicator. On failure the error
 * was reported on @comm and nothing is left. */
static int win_begin(MPI_Comm comm, int flavor, MPI_Info info, const char *F, MPI_Win *win_p)
{
	MPI_Win win = mpil_pool_get(&win_pool);
	MPI_Comm dup;
	int err;

	if (!win)
		return mpil_err(comm, MPI_ERR_NO_MEM, F, "no memory for a window");
	win->flavor = flavor;
	win->comm = comm; /* until the duplicate exists: errors are raised here */
	win->errhandler = MPI_ERRORS_ARE_FATAL;
	win->acc_ordering =
	    MPIL_ACC_ORDER_RAR | MPIL_ACC_ORDER_RAW | MPIL_ACC_ORDER_WAR | MPIL_ACC_ORDER_WAW;
	win->acc_ops = MPIL_ACC_OPS_SAME_OP_NO_OP;
	err = mpil_win_apply_info(win, info, F);
	if (err == MPI_SUCCESS)
		err = PMPI_Comm_dup(comm, &dup); /* reports on comm itself */
	if (err != MPI_SUCCESS) {
		win->comm = MPI_COMM_NULL;
		win_destroy(win);
		return err;
	}
	PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
	win->comm = dup;
	win->rank = dup->rank;
	win->size = dup->size;
	*win_p = win;
	return MPI_SUCCESS;
}

/* The control block and the member table (both zeroed). */
static int win_local_common(MPI_Win win, char *why, size_t whylen)
{
	void *ctl;
	ibx_status_t st;

	win->t = calloc((size_t)win->size, sizeof(*win->t));
	if (!win->t) {
		snprintf(why, whylen, "no memory for the member table");
		return MPI_ERR_NO_MEM;
	}
	st = ibx_mem_alloc(mpil_g.ctx,
			   mpil_win_ctl_bytes(win->size, win->flavor == MPI_WIN_FLAVOR_DYNAMIC),
			   &ctl, &win->ctl_mem);
	if (st != IBX_OK) {
		snprintf(why, whylen, "allocating the control block: %s", ibx_status_str(st));
		return mpil_err_from_ibx(st);
	}
	win->ctl = ctl;
	return MPI_SUCCESS;
}

static int pack_key(const ibx_mem_t *mem, unsigned char *buf, uint32_t *len_p, char *why,
		    size_t whylen)
{
	size_t n = IBX_RKEY_PACKED_MAX;
	ibx_status_t st = ibx_rkey_pack(mpil_g.ctx, mem, buf, &n);

	if (st != IBX_OK) {
		snprintf(why, whylen, "packing a memory key: %s", ibx_status_str(st));
		return mpil_err_from_ibx(st);
	}
	*len_p = (uint32_t)n;
	return MPI_SUCCESS;
}

/* Shared windows, before the exchange: every part's offset in the node
 * segment (@sizes: every member's size), and on window rank 0 the segment. */
static int shared_segment(MPI_Win win, const uint64_t *sizes, uint64_t *off, char *why,
			  size_t whylen)
{
	uint64_t total = 0, pg = page_size();
	void *seg;
	ibx_status_t st;

	for (int r = 0; r < win->size; r++) {
		if (win->alloc_shared_noncontig)
			total = (total + pg - 1) / pg * pg;
		off[r] = total;
		if (total + sizes[r] < total) {
			snprintf(why, whylen, "the parts of all members overflow");
			return MPI_ERR_SIZE;
		}
		total += sizes[r];
	}
	if (win->rank != 0 || total == 0)
		return MPI_SUCCESS;
	st = ibx_mem_alloc(mpil_g.ctx, total, &seg, &win->seg);
	if (st != IBX_OK) {
		snprintf(why, whylen, "allocating the %llu-byte node segment: %s",
			 (unsigned long long)total, ibx_status_str(st));
		return mpil_err_from_ibx(st);
	}
	win->allocated = seg;
	return MPI_SUCCESS;
}

/* Fills t[] from the cards; a local failure is returned (and explained). */
static int win_unpack(MPI_Win win, const win_card_t *cards, const uint64_t *off, char *why,
		      size_t whylen)
{
	ibx_ctx_t *ctx = mpil_g.ctx;
	bool shared = win->flavor == MPI_WIN_FLAVOR_SHARED;
	ibx_status_t st;
	void *p;

	if (shared && cards[0].key_len) {
		st = ibx_rkey_unpack(ctx, mpil_comm_to_world(win->comm, 0), cards[0].key,
				     cards[0].key_len, &win->seg_rk);
		if (st != IBX_OK) {
			snprintf(why, whylen, "unpacking the node segment's key: %s",
				 ibx_status_str(st));
			return mpil_err_from_ibx(st);
		}
	}
	for (int r = 0; r < win->size; r++) {
		mpil_win_target_t *t = &win->t[r];
		const win_card_t *c = &cards[r];

		t->world = mpil_comm_to_world(win->comm, r);
		t->rk_owner = t->world;
		t->size = win->same_size ? (uint64_t)win->size_bytes : c->size;
		t->disp_unit = win->same_disp_unit ? win->disp_unit : c->disp_unit;
		t->ctl_base = c->ctl_base;
		st = ibx_rkey_unpack(ctx, t->world, c->ctl_key, c->ctl_key_len, &t->ctl_rk);
		if (st != IBX_OK) {
			snprintf(why, whylen, "unpacking the control-block key of rank %d: %s", r,
				 ibx_status_str(st));
			return mpil_err_from_ibx(st);
		}
		if (ibx_rkey_ptr(t->ctl_rk, t->ctl_base, &p) == IBX_OK)
			t->ctl_local = p;
		if (shared) {
			t->rk_owner = mpil_comm_to_world(win->comm, 0);
			if (!win->seg_rk)
				continue; /* every part is empty */
			t->base = cards[0].base + off[r];
			t->rk = t->size ? win->seg_rk : NULL;
			/* every member maps the node segment (whatever route the
			 * engine's operations take: all of them use the CPU on it) */
			if (ibx_rkey_map(win->seg_rk, t->base, &p) != IBX_OK) {
				snprintf(why, whylen,
					 "rank %d (world rank %d) cannot map the node segment of "
					 "world rank %d",
					 win->rank, mpil_g.world_rank, t->rk_owner);
				return MPI_ERR_RMA_SHARED;
			}
			t->local = p;
			continue;
		}
		t->base = c->base;
		if (!c->key_len)
			continue; /* size 0, or dynamic */
		st = ibx_rkey_unpack(ctx, t->world, c->key, c->key_len, &t->rk);
		if (st != IBX_OK) {
			snprintf(why, whylen, "unpacking the memory key of rank %d: %s", r,
				 ibx_status_str(st));
			return mpil_err_from_ibx(st);
		}
		if (ibx_rkey_ptr(t->rk, t->base, &p) == IBX_OK)
			t->local = p;
	}
	return MPI_SUCCESS;
}

/* MPI_Win_allocate_shared's first step: every member's size (unless the
 * hint same_size says they are all ours). */
static int shared_sizes(MPI_Win win, uint64_t *sizes)
{
	uint64_t mine = (uint64_t)win->size_bytes;

	if (win->same_size) {
		for (int r = 0; r < win->size; r++)
			sizes[r] = mine;
		return MPI_SUCCESS;
	}
	return PMPI_Allgather(&mine, 8, MPI_BYTE, sizes, 8, MPI_BYTE, win->comm);
}

/*
 * The creation of every flavour. @user_base: MPI_Win_create's memory.
 * On success *win_p is the new window and, for allocate / allocate_shared,
 * *(void **)baseptr its memory here.
 */
static int win_make(MPI_Comm comm, int flavor, void *user_base, MPI_Aint size, int disp_unit,
		    MPI_Info info, void *baseptr, MPI_Win *win_p, const char *F)
{
	char why[256] = "";
	win_card_t *cards = NULL, mine;
	uint64_t *sizes = NULL, *off = NULL;
	MPI_Win win = NULL;
	int err, lerr, agreed;

	err = win_begin(comm, flavor, info, F, &win);
	if (err != MPI_SUCCESS)
		return err;
	win->size_bytes = size;
	win->disp_unit = disp_unit;
	memset(&mine, 0, sizeof(mine));
	lerr = win_local_common(win, why, sizeof(why));
	if (flavor == MPI_WIN_FLAVOR_SHARED) {
		/* the offsets need every size, whatever failed here */
		sizes = calloc((size_t)win->size, 2 * sizeof(uint64_t));
		if (!sizes) {
			/* cannot even take part: the others fail in the allgather */
			win_destroy(win);
			return mpil_err(comm, MPI_ERR_NO_MEM, F, "no memory for the part sizes");
		}
		off = sizes + win->size;
		err = shared_sizes(win, sizes);
		if (err != MPI_SUCCESS) {
			free(sizes);
			win_destroy(win);
			return mpil_err(comm, err, F, "exchanging the part sizes failed");
		}
		if (lerr == MPI_SUCCESS)
			lerr = shared_segment(win, sizes, off, why, sizeof(why));
	}
	if (lerr == MPI_SUCCESS) {
		ibx_status_t st = IBX_OK;
		void *mem = NULL;

		switch (flavor) {
		case MPI_WIN_FLAVOR_CREATE:
			if (size > 0)
				st = mpil_win_map_user(win->comm, user_base, (size_t)size,
						       &win->mem);
			win->base = user_base;
			break;
		case MPI_WIN_FLAVOR_ALLOCATE:
			if (size > 0)
				st = ibx_mem_alloc(mpil_g.ctx, (size_t)size, &mem, &win->mem);
			win->base = win->allocated = mem;
			break;
		default: break;
		}
		if (st != IBX_OK) {
			snprintf(why, sizeof(why), "mapping the %lld-byte window memory: %s",
				 (long long)size, ibx_status_str(st));
			lerr = mpil_err_from_ibx(st);
		}
	}
	/* this member's card */
	mine.base = (uint64_t)(uintptr_t)win->base;
	mine.size = (uint64_t)size;
	mine.disp_unit = disp_unit;
	if (lerr == MPI_SUCCESS && (win->mem || win->seg)) {
		ibx_mem_t *m = win->mem ? win->mem : win->seg;

		lerr = pack_key(m, mine.key, &mine.key_len, why, sizeof(why));
		if (win->seg)
			mine.base = (uint64_t)(uintptr_t)win->allocated;
	}
	if (lerr == MPI_SUCCESS) {
		mine.ctl_base = (uint64_t)(uintptr_t)win->ctl;
		lerr = pack_key(win->ctl_mem, mine.ctl_key, &mine.ctl_key_len, why, sizeof(why));
	}
	mine.err = lerr;
	cards = malloc((size_t)win->size * sizeof(*cards));
	if (!cards) {
		free(sizes);
		win_destroy(win);
		return mpil_err(comm, MPI_ERR_NO_MEM, F, "no memory for the members' cards");
	}
	err = PMPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, cards, (int)sizeof(mine), MPI_BYTE,
			     win->comm);
	if (err != MPI_SUCCESS) {
		free(cards);
		free(sizes);
		win_destroy(win);
		return mpil_err(comm, err, F, "exchanging the members' keys failed");
	}
	for (int r = 0; lerr == MPI_SUCCESS && r < win->size; r++)
		if (cards[r].err != MPI_SUCCESS) {
			snprintf(why, sizeof(why), "window rank %d failed to set up its part", r);
			lerr = cards[r].err;
		}
	/* every member saw the same cards: a failure above is everyone's */
	if (lerr == MPI_SUCCESS) {
		lerr = win_unpack(win, cards, off, why, sizeof(why));
		agreed = lerr;
		err = mpil_allreduce(MPI_IN_PLACE, &agreed, 1, MPI_INT, MPI_MAX, win->comm);
		if (err != MPI_SUCCESS && lerr == MPI_SUCCESS) {
			lerr = err;
			snprintf(why, sizeof(why), "agreeing on the outcome failed");
		} else if (lerr == MPI_SUCCESS && agreed != MPI_SUCCESS) {
			lerr = agreed;
			snprintf(why, sizeof(why), "another member failed to set up the window");
		}
	}
	free(cards);
	free(sizes);
	if (lerr != MPI_SUCCESS) {
		win_destroy(win);
		return mpil_err(comm, lerr, F, "%s", why);
	}
	if (flavor == MPI_WIN_FLAVOR_SHARED) {
		/* a part of size 0 still has its place in the segment */
		win->base = win->t[win->rank].local;
	} else if (flavor == MPI_WIN_FLAVOR_DYNAMIC) {
		win->base = MPI_BOTTOM;
	}
	win->magic = MPIL_MAGIC_WIN;
	if (baseptr)
		*(void **)baseptr = win->base;
	*win_p = win;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_create)
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
		    MPI_Win *win)
{
	static const char F[] = "MPI_Win_create";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_comm_args(comm, info, win, F));
	MPIL_CHECK(check_size_args(comm, size, disp_unit, F));
	if (!base && size > 0)
		return mpil_err(comm, MPI_ERR_ARG, F, "base is NULL with size %lld",
				(long long)size);
	return win_make(comm, MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, NULL, win, F);
}

MPIL_PMPI_ALIAS(Win_allocate)
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
		      MPI_Win *win)
{
	static const char F[] = "MPI_Win_allocate";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_comm_args(comm, info, win, F));
	MPIL_CHECK(check_size_args(comm, size, disp_unit, F));
	if (!baseptr)
		return mpil_err(comm, MPI_ERR_ARG, F, "baseptr is NULL");
	return win_make(comm, MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, baseptr, win,
			F);
}

MPIL_PMPI_ALIAS(Win_allocate_shared)
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
			     void *baseptr, MPI_Win *win)
{
	static const char F[] = "MPI_Win_allocate_shared";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_comm_args(comm, info, win, F));
	MPIL_CHECK(check_size_args(comm, size, disp_unit, F));
	if (!baseptr)
		return mpil_err(comm, MPI_ERR_ARG, F, "baseptr is NULL");
	if (!comm_on_one_node(comm))
		return mpil_err(comm, MPI_ERR_RMA_SHARED, F,
				"the %d members of the communicator do not all run on one node",
				comm->size);
	return win_make(comm, MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, baseptr, win, F);
}

MPIL_PMPI_ALIAS(Win_create_dynamic)
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
	static const char F[] = "MPI_Win_create_dynamic";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_comm_args(comm, info, win, F));
	return win_make(comm, MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, NULL, win, F);
}

/* ---- shared_query and free ------------------------------------------------------------------ */

/* Member @r's window memory as this process reaches it by load / store:
 * mapped here by the engine, or our own; NULL when it is not (another
 * node) or has no bytes. */
static void *part_here(MPI_Win win, int r)
{
	if (!win->t[r].size)
		return NULL;
	if (win->t[r].local)
		return win->t[r].local;
	return r == win->rank ? win->base : NULL;
}

MPIL_PMPI_ALIAS(Win_shared_query)
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
	static const char F[] = "MPI_Win_shared_query";
	MPIL_CS_GUARD();
	void *base;
	int r = rank;

	MPIL_CHECK(mpil_win_check(win, F));
	if (!size || !disp_unit || !baseptr)
		return mpil_win_err(win, MPI_ERR_ARG, F, "%s is NULL",
				    !size	 ? "size"
				    : !disp_unit ? "disp_unit"
						 : "baseptr");
	if (win->flavor == MPI_WIN_FLAVOR_DYNAMIC)
		return mpil_win_err(win, MPI_ERR_RMA_FLAVOR, F,
				    "a dynamic window has no memory of its own to query");
	if (rank != MPI_PROC_NULL && (rank < 0 || rank >= win->size))
		return mpil_win_err(win, MPI_ERR_RANK, F, "invalid rank %d (window of %d)", rank,
				    win->size);
	/* Allocate_shared: every part is mapped here. Allocate and create
	 * (MPI 4.1 §12.2.3, an extension of the 3.1 that mpi-lite implements):
	 * a part is reachable by load / store when the engine mapped it here
	 * (a node-local member's MPI_Win_allocate memory lives in a shared
	 * segment, and our own part always is); the others are size 0 and
	 * NULL. A part of size 0 of a shared window is where it would start
	 * (the parts are contiguous, and codes compute addresses from it), or
	 * NULL with alloc_shared_noncontig (as MPICH). MPI_PROC_NULL: the
	 * lowest rank with a reachable part. */
	if (rank == MPI_PROC_NULL)
		for (r = 0; r < win->size && !part_here(win, r); r++)
			;
	base = r < win->size ? part_here(win, r) : NULL;
	*size = base ? (MPI_Aint)win->t[r].size : 0;
	*disp_unit = win->t[r < win->size ? r : 0].disp_unit;
	if (!base && r < win->size && win->flavor == MPI_WIN_FLAVOR_SHARED &&
	    !win->alloc_shared_noncontig)
		base = win->t[r].local;
	*(void **)baseptr = base;
	return MPI_SUCCESS;
}

/* An epoch that MPI_Win_free must not cut short (MPI-3.1 §11.2.5): a
 * fence epoch ends with the fence before the free, the others explicitly. */
static const char *open_epoch(MPI_Win win)
{
	if (win->access == MPIL_EPOCH_LOCK || win->nlocked > 0)
		return "a lock is held (MPI_Win_lock without MPI_Win_unlock)";
	if (win->access == MPIL_EPOCH_LOCK_ALL)
		return "MPI_Win_lock_all without MPI_Win_unlock_all";
	if (win->access == MPIL_EPOCH_PSCW)
		return "MPI_Win_start without MPI_Win_complete";
	if (win->post_group)
		return "MPI_Win_post without MPI_Win_wait";
	for (int r = 0; win->access == MPIL_EPOCH_FENCE && r < win->size; r++)
		if (win->t[r].dirty)
			return "operations since the last MPI_Win_fence were not completed by one";
	return NULL;
}

enum { FREE_OK, FREE_ATTR, FREE_EPOCH }; /* what a member brings to the free */

MPIL_PMPI_ALIAS(Win_free)
int PMPI_Win_free(MPI_Win *winp)
{
	static const char F[] = "MPI_Win_free";
	MPIL_CS_GUARD();
	const char *epoch;
	MPI_Win win;
	int mine = FREE_OK, all, err, attr_err = MPI_SUCCESS;

	MPIL_CHECK(mpil_check_init(F));
	if (!winp)
		return mpil_err(NULL, MPI_ERR_ARG, F, "win is NULL");
	win = *winp;
	MPIL_CHECK(mpil_win_check(win, F));
	epoch = open_epoch(win);
	if (epoch)
		mine = FREE_EPOCH;
	else {
		/* attribute delete callbacks run while the window is whole */
		attr_err = mpil_win_attr_delete_all(win);
		if (attr_err != MPI_SUCCESS)
			mine = FREE_ATTR;
	}
	/* the barrier that keeps anyone from freeing memory still in use is
	 * also where the members agree that the free goes ahead */
	all = mine;
	err = mpil_allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MAX, win->comm);
	if (err != MPI_SUCCESS)
		return mpil_win_err(win, err, F, "the closing barrier failed");
	if (mine == FREE_EPOCH)
		return mpil_win_err(win, MPI_ERR_RMA_SYNC, F, "an epoch is still open: %s", epoch);
	if (mine == FREE_ATTR)
		return mpil_win_err(win, attr_err, F, "an attribute delete callback failed");
	if (all == FREE_EPOCH)
		return mpil_win_err(win, MPI_ERR_RMA_SYNC, F,
				    "another member still has an epoch open on the window");
	if (all == FREE_ATTR)
		return mpil_win_err(win, MPI_ERR_OTHER, F,
				    "an attribute delete callback failed at another member");
	mpil_win_sync_fini(win);
	win->magic = MPIL_MAGIC_DEAD;
	win_destroy(win);
	*winp = MPI_WIN_NULL;
	return MPI_SUCCESS;
}

/* ---- where an operation lands ---------------------------------------------------------------- */

/*
 * MPI_PROC_NULL is the callers' to handle (the operation does nothing, MPI-3.1
 * §11.3): here it is an invalid rank like any other. An empty access
 * (hi <= lo) is in range wherever it points and may return *rk_p NULL.
 */
int mpil_win_target(MPI_Win win, int target, MPI_Aint target_disp, MPI_Aint lo, MPI_Aint hi,
		    uint64_t *raddr_p, ibx_rkey_t **rk_p, const char *fname)
{
	const mpil_win_target_t *t;
	MPI_Aint off, a, b;

	if (ibx_unlikely(target < 0 || target >= win->size))
		return mpil_win_err(win, MPI_ERR_RANK, fname,
				    "invalid target rank %d (window of %d)", target, win->size);
	if (win->flavor == MPI_WIN_FLAVOR_DYNAMIC)
		return mpil_win_dyn_target(win, target, target_disp, lo, hi, raddr_p, rk_p, fname);
	t = &win->t[target];
	if (ibx_unlikely(target_disp < 0))
		return mpil_win_err(win, MPI_ERR_DISP, fname, "negative target displacement %lld",
				    (long long)target_disp);
	if (ibx_unlikely(__builtin_mul_overflow(target_disp, (MPI_Aint)t->disp_unit, &off) ||
			 __builtin_add_overflow(off, lo, &a) ||
			 __builtin_add_overflow(off, hi, &b)))
		return mpil_win_err(win, MPI_ERR_RMA_RANGE, fname,
				    "displacement %lld x unit %d overflows", (long long)target_disp,
				    t->disp_unit);
	if (ibx_unlikely(hi > lo && (a < 0 || (uint64_t)b > t->size)))
		return mpil_win_err(win, MPI_ERR_RMA_RANGE, fname,
				    "bytes [%lld, %lld) at rank %d are outside its window of %llu "
				    "bytes (displacement %lld, unit %d)",
				    (long long)a, (long long)b, target, (unsigned long long)t->size,
				    (long long)target_disp, t->disp_unit);
	*raddr_p = t->base + (uint64_t)off;
	*rk_p = t->rk;
	return MPI_SUCCESS;
}
