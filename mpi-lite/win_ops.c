/*
 * win_ops.c — MPI_Put, MPI_Get and their request forms (MPI-3.1 §11.3),
 * with any committed datatype at either end, and the helpers win_acc.c
 * shares: the access check (mpil_win_where), the target block walk
 * (mpil_win_walk) and complete-at-once requests.
 *
 * Arguments are checked in the order Open MPI and MPICH use: window,
 * counts, datatypes (committed; the sender's type signature must be a
 * prefix of the receiver's, as for a message: a put sends the origin to the
 * target, a get the target to the origin — more basic elements than the
 * receiving side takes is MPI_ERR_TRUNCATE, different basic types
 * MPI_ERR_TYPE), target rank (MPI_PROC_NULL: nothing happens), access epoch
 * (MPI_ERR_RMA_SYNC), target range (MPI_ERR_RMA_RANGE, the whole target
 * buffer of target_count elements must lie in the window).
 *
 * How the bytes move (the target's memory reached through its key, never
 * through the target process):
 *
 *                         target mapped here            target not mapped
 *                         (ibx_rkey_ptr: node-local     (CMA or verbs)
 *                         allocated memory, self)
 *   ──────────────────── ───────────────────────────── ─────────────────────────────
 *   both contiguous       one memcpy                    one ibx_put / ibx_get
 *   target contiguous     the origin cursor packs       ibx_putv / ibx_getv with the
 *                         straight into (unpacks from)  origin's blocks as the local
 *                         the target memory             list (64 blocks per call)
 *   target derived        per target block, as above    per target block, as above
 *
 * The target's blocks come from the engine's cursor over the target type
 * (core/dtype_rdma), walked with the target address as its base, so no
 * block list is built; origin and target advance together in packed order.
 * Nothing is allocated on any path.
 *
 * Completion: memcpy and CMA are complete on return; verbs operations at
 * the next flush of the target (the epoch's end, MPI_Win_flush*). The
 * request forms complete their operations before returning an already
 * complete request (a flush of the target when verbs is involved), which
 * satisfies both local completion (Rput) and arrival of the data (Rget).
 */
#include "win_fast.h"
#include "win_int.h"
#include "dtype_rdma/dtype.h"

#include <stdlib.h>

#define XFER_IOV 64 /* origin blocks per ibx_putv / ibx_getv */

/* ---- checks shared with win_acc.c ------------------------------------------------ */

int mpil_win_check_dt(MPI_Win win, MPI_Datatype dt, const char *fname)
{
	if (ibx_likely(mpil_dt_valid(dt) && (dt->flags & MPIL_DTF_COMMITTED)))
		return MPI_SUCCESS;
	if (!dt)
		return mpil_win_err(win, MPI_ERR_TYPE, fname, "datatype is MPI_DATATYPE_NULL");
	if (dt->magic != MPIL_MAGIC_DTYPE)
		return mpil_win_err(win, MPI_ERR_TYPE, fname, "invalid datatype handle %p",
				    (void *)dt);
	return mpil_win_err(win, MPI_ERR_TYPE, fname, "datatype %s is not committed",
			    dt->name ? dt->name : "(unnamed)");
}

/* The bytes [lo, hi) that @count elements of @dt touch, relative to the
 * buffer address (count > 0, dt->size > 0). False on overflow. */
static bool dt_span(MPI_Datatype dt, int count, MPI_Aint *lo, MPI_Aint *hi)
{
	MPI_Aint reps;

	if (__builtin_mul_overflow((MPI_Aint)(count - 1), dt->extent, &reps))
		return false;
	if (__builtin_add_overflow(dt->true_lb, reps < 0 ? reps : 0, lo))
		return false;
	return !__builtin_add_overflow(dt->true_lb + dt->true_extent, reps > 0 ? reps : 0, hi);
}

static int check_epoch(MPI_Win win, int target, bool request, const char *fname)
{
	MPIL_CHECK(mpil_win_access_check(win, target, fname));
	if (ibx_unlikely(request && win->access != MPIL_EPOCH_LOCK &&
			 win->access != MPIL_EPOCH_LOCK_ALL))
		return mpil_win_err(win, MPI_ERR_RMA_SYNC, fname,
				    "request-based operations need a passive-target epoch "
				    "(MPI_Win_lock or MPI_Win_lock_all)");
	return MPI_SUCCESS;
}

int mpil_win_where(MPI_Win win, int target, MPI_Aint disp, int count, MPI_Datatype dt, bool request,
		   mpil_win_where_t *w, const char *fname)
{
	MPI_Aint lo = 0, hi = 0;
	void *p;

	if (ibx_unlikely((unsigned)target >= (unsigned)win->size))
		return mpil_win_err(win, MPI_ERR_RANK, fname,
				    "invalid target rank %d (window of %d processes)", target,
				    win->size);
	MPIL_CHECK(check_epoch(win, target, request, fname));
	w->target = target;
	/* a dynamic window's regions belong to the member itself */
	w->owner =
	    win->flavor == MPI_WIN_FLAVOR_DYNAMIC ? win->t[target].world : win->t[target].rk_owner;
	w->raddr = 0;
	w->rk = NULL;
	w->local = NULL;
	if (count == 0 || dt->size == 0)
		return MPI_SUCCESS;
	if (ibx_unlikely(!dt_span(dt, count, &lo, &hi)))
		return mpil_win_err(win, MPI_ERR_COUNT, fname,
				    "%d elements of the target datatype overflow an address",
				    count);
	MPIL_CHECK(mpil_win_target(win, target, disp, lo, hi, &w->raddr, &w->rk, fname));
	/* directly mapped (node-local allocated or moved memory, our own):
	 * load/store; allocate and create windows cached ibx_rkey_ptr's
	 * answer for the member's base when they were made (win.c) */
	if (win->flavor == MPI_WIN_FLAVOR_ALLOCATE || win->flavor == MPI_WIN_FLAVOR_CREATE) {
		const mpil_win_target_t *t = &win->t[target];

		if (t->local)
			w->local = (char *)t->local + (w->raddr - t->base);
	} else if (ibx_rkey_ptr(w->rk, w->raddr + (uint64_t)lo, &p) == IBX_OK) {
		w->local = (char *)p - lo;
	}
	return MPI_SUCCESS;
}

int mpil_win_req_done(MPI_Win win, MPI_Request *request, const char *fname)
{
	mpil_request_t *r = mpil_req_alloc();

	if (ibx_unlikely(!r))
		return mpil_win_err(win, MPI_ERR_NO_MEM, fname, "no memory for a request");
	r->kind = MPIL_REQ_DONE;
	r->comm = win->comm;
	mpil_status_empty(&r->preset);
	*request = r;
	return MPI_SUCCESS;
}

/* ---- target blocks ---------------------------------------------------------------------- */

ibx_status_t mpil_win_walk(MPI_Datatype dt, int count, uint64_t addr, size_t nbytes,
			   mpil_win_block_fn fn, void *arg)
{
	ibx_dt_cursor_t cur;
	int64_t done;
	ibx_status_t st;

	if (nbytes == 0)
		return IBX_OK;
	if (mpil_dt_contig(dt))
		return fn(arg, 0, (void *)(uintptr_t)(addr + (uint64_t)dt->true_lb), nbytes);
	st = ibx_dt_cursor_init(&cur, dt->engine, count, (void *)(uintptr_t)addr, 0);
	if (st != IBX_OK)
		return st;
	return ibx_dt_cursor_blocks(&cur, (int64_t)nbytes, fn, arg, &done);
}

int mpil_win_blocks(MPI_Datatype dt, int count, mpil_win_block_t **blocks_p, size_t *n_p)
{
	ibx_dt_block_t *eb = NULL;
	mpil_win_block_t *b;
	int64_t n = 0;
	ibx_status_t st;

	*blocks_p = NULL;
	*n_p = 0;
	if (count <= 0 || dt->size == 0)
		return MPI_SUCCESS;
	if (mpil_dt_contig(dt)) {
		b = malloc(sizeof(*b));
		if (!b)
			return MPI_ERR_NO_MEM;
		b->off = dt->true_lb;
		b->len = (size_t)count * dt->size;
		*blocks_p = b;
		*n_p = 1;
		return MPI_SUCCESS;
	}
	st = ibx_dt_flatten(dt->engine, count, &eb, &n);
	if (st != IBX_OK)
		return mpil_err_from_ibx(st);
	b = malloc((size_t)(n > 0 ? n : 1) * sizeof(*b));
	if (!b) {
		free(eb);
		return MPI_ERR_NO_MEM;
	}
	for (int64_t i = 0; i < n; i++)
		b[i] = (mpil_win_block_t){(MPI_Aint)eb[i].off, (size_t)eb[i].len};
	free(eb);
	*blocks_p = b;
	*n_p = (size_t)n;
	return MPI_SUCCESS;
}

/* ---- argument checks ----------------------------------------------------------------------- */

static inline int check_count(MPI_Win win, int count, const char *what, const char *fname)
{
	if (ibx_unlikely(count < 0))
		return mpil_win_err(win, MPI_ERR_COUNT, fname, "negative %s count %d", what, count);
	return MPI_SUCCESS;
}

static inline int check_size(MPI_Win win, int count, MPI_Datatype dt, const char *fname)
{
	/* count < 2^31: no division unless the type is huge */
	if (ibx_likely(dt->size <= INT_MAX || dt->size <= (size_t)INT64_MAX / ((size_t)count + 1)))
		return MPI_SUCCESS;
	return mpil_win_err(win, MPI_ERR_COUNT, fname,
			    "%d elements of a %zu-byte datatype overflow a transfer", count,
			    dt->size);
}

int mpil_win_check_data(MPI_Win win, int count, MPI_Datatype dt, const char *what,
			const char *fname)
{
	MPIL_CHECK(check_count(win, count, what, fname));
	MPIL_CHECK(mpil_win_check_dt(win, dt, fname));
	return check_size(win, count, dt, fname);
}

/*
 * The sender's (sdt, scount) must fit the receiver's (rdt, rcount) as a
 * message would: its type signature a prefix of the receiver's. Types made
 * of one and the same predefined type compare by size; others by the
 * engine's signatures.
 */
static int check_match(MPI_Win win, MPI_Datatype sdt, int scount, MPI_Datatype rdt, int rcount,
		       const char *fname)
{
	size_t sb = (size_t)scount * sdt->size, rb = (size_t)rcount * rdt->size;
	ibx_dt_sig_t sig;
	ibx_status_t st;

	if (ibx_likely(sdt->basic && sdt->basic == rdt->basic)) {
		if (ibx_likely(sb <= rb))
			return MPI_SUCCESS;
		st = IBX_ERR_TRUNCATED;
	} else if (sb == 0) {
		return MPI_SUCCESS;
	} else {
		st = ibx_dt_signature(sdt->engine, scount, &sig);
		if (st == IBX_OK)
			st = ibx_dt_sig_match(&sig, rdt->engine, rcount);
		if (st == IBX_OK)
			return MPI_SUCCESS;
	}
	if (st == IBX_ERR_TRUNCATED)
		return mpil_win_err(win, MPI_ERR_TRUNCATE, fname,
				    "%zu bytes sent to a %zu-byte receiving buffer", sb, rb);
	if (st == IBX_ERR_INVALID_PARAM)
		return mpil_win_err(win, MPI_ERR_TYPE, fname,
				    "origin and target datatypes have different type signatures");
	return mpil_win_err(win, mpil_err_from_ibx(st), fname, "type signature: %s",
			    ibx_status_str(st));
}

/* Everything up to the target rank; *nbytes_p: the bytes that move. */
static int check_xfer(bool put, int ocount, MPI_Datatype odt, int tcount, MPI_Datatype tdt,
		      MPI_Win win, size_t *nbytes_p, const char *fname)
{
	MPIL_CHECK(mpil_win_check(win, fname));
	MPIL_CHECK(mpil_win_check_data(win, ocount, odt, "origin", fname));
	MPIL_CHECK(mpil_win_check_data(win, tcount, tdt, "target", fname));
	if (put) {
		MPIL_CHECK(check_match(win, odt, ocount, tdt, tcount, fname));
		*nbytes_p = (size_t)ocount * odt->size;
	} else {
		MPIL_CHECK(check_match(win, tdt, tcount, odt, ocount, fname));
		*nbytes_p = (size_t)tcount * tdt->size;
	}
	return MPI_SUCCESS;
}

/* ---- data movement ----------------------------------------------------------------------------
 */

typedef struct xfer {
	bool put;
	bool local;	       /* block addresses are mapped here */
	const ibx_rkey_t *rk;  /* else: the target key */
	char *odata;	       /* contiguous origin: its data */
	ibx_dt_cursor_t *ocur; /* else: the origin's cursor */
} xfer_t;

static ibx_status_t engine_op(const xfer_t *x, void *buf, size_t len, uint64_t raddr)
{
	ibx_status_t st = x->put ? ibx_put(mpil_g.ctx, buf, len, raddr, x->rk, NULL)
				 : ibx_get(mpil_g.ctx, buf, len, raddr, x->rk, NULL);

	return st == IBX_INPROGRESS ? IBX_OK : st;
}

/* A non-contiguous origin against one target range reached by the engine:
 * the origin's blocks as the local list. */
static ibx_status_t engine_listed(const xfer_t *x, size_t len, uint64_t raddr)
{
	struct iovec iov[XFER_IOV];

	while (len > 0) {
		int64_t bytes = 0;
		int n = 0;
		ibx_status_t st =
		    ibx_dt_cursor_iov(x->ocur, (int64_t)len, iov, XFER_IOV, &n, &bytes);

		if (st != IBX_OK)
			return st;
		if (bytes <= 0)
			return IBX_ERR_INVALID_PARAM; /* origin shorter than promised */
		st = x->put ? ibx_putv(mpil_g.ctx, iov, n, raddr, x->rk, NULL)
			    : ibx_getv(mpil_g.ctx, iov, n, raddr, x->rk, NULL);
		if (st != IBX_OK && st != IBX_INPROGRESS)
			return st;
		raddr += (uint64_t)bytes;
		len -= (size_t)bytes;
	}
	return IBX_OK;
}

/* One target block: bytes [poff, poff + len) of the packed stream. */
static ibx_status_t xfer_block(void *arg, int64_t poff, void *addr, size_t len)
{
	const xfer_t *x = arg;
	int64_t done;

	if (x->odata) {
		char *o = x->odata + poff;

		if (!x->local)
			return engine_op(x, o, len, (uint64_t)(uintptr_t)addr);
		if (x->put)
			memcpy(addr, o, len);
		else
			memcpy(o, addr, len);
		return IBX_OK;
	}
	if (!x->local)
		return engine_listed(x, len, (uint64_t)(uintptr_t)addr);
	if (x->put)
		return ibx_dt_cursor_pack(x->ocur, addr, (int64_t)len, &done);
	return ibx_dt_cursor_unpack(x->ocur, addr, (int64_t)len, &done);
}

/* Moves @nbytes between (obuf, ocount, odt) and the target. */
static ibx_status_t xfer_move(bool put, void *obuf, int ocount, MPI_Datatype odt, int tcount,
			      MPI_Datatype tdt, const mpil_win_where_t *w, size_t nbytes)
{
	ibx_dt_cursor_t ocur;
	xfer_t x = {.put = put, .local = w->local != NULL, .rk = w->rk};
	uint64_t base = w->local ? (uint64_t)(uintptr_t)w->local : w->raddr;
	ibx_status_t st;

	if (mpil_dt_contig(odt)) {
		x.odata = (char *)((uintptr_t)obuf + (uintptr_t)odt->true_lb);
	} else {
		st = ibx_dt_cursor_init(&ocur, odt->engine, ocount, obuf, 0);
		if (st != IBX_OK)
			return st;
		x.ocur = &ocur;
	}
	return mpil_win_walk(tdt, tcount, base, nbytes, xfer_block, &x);
}

static int xfer_err(MPI_Win win, bool put, int target, ibx_status_t st, const char *fname)
{
	return mpil_win_err(win, mpil_err_from_ibx(st), fname, "%s rank %d failed: %s",
			    put ? "put to" : "get from", target, ibx_status_str(st));
}

static int xfer(bool put, void *obuf, int ocount, MPI_Datatype odt, int target, MPI_Aint disp,
		int tcount, MPI_Datatype tdt, MPI_Win win, MPI_Request *request, const char *fname)
{
	mpil_win_where_t w;
	size_t nbytes;
	ibx_status_t st;

	MPIL_CHECK(check_xfer(put, ocount, odt, tcount, tdt, win, &nbytes, fname));
	if (target == MPI_PROC_NULL)
		return request ? mpil_win_req_done(win, request, fname) : MPI_SUCCESS;
	MPIL_CHECK(mpil_win_where(win, target, disp, tcount, tdt, request != NULL, &w, fname));
	if (nbytes > 0) {
		/* the latency path: both contiguous, target mapped here */
		if (ibx_likely(w.local && mpil_dt_contig(odt) && mpil_dt_contig(tdt))) {
			char *o = (char *)((uintptr_t)obuf + (uintptr_t)odt->true_lb);
			char *t = w.local + tdt->true_lb;

			if (put)
				memcpy(t, o, nbytes);
			else
				memcpy(o, t, nbytes);
		} else {
			st = xfer_move(put, obuf, ocount, odt, tcount, tdt, &w, nbytes);
			if (ibx_unlikely(st != IBX_OK))
				return xfer_err(win, put, target, st, fname);
		}
		mpil_win_dirty(win, target);
	}
	if (!request)
		return MPI_SUCCESS;
	if (nbytes > 0 && !w.local) {
		st = ibx_flush(mpil_g.ctx, w.owner);
		if (st != IBX_OK)
			return xfer_err(win, put, target, st, fname);
	}
	return mpil_win_req_done(win, request, fname);
}

/* ---- entry points -------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS_HOT(Put)
IBX_HOT int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
		     int target_rank, MPI_Aint target_disp, int target_count,
		     MPI_Datatype target_datatype, MPI_Win win)
{
	MPIL_CS_GUARD();
	if (mpil_win_put_fast(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
			      target_count, target_datatype, win))
		return MPI_SUCCESS;
	return xfer(true, (void *)origin_addr, origin_count, origin_datatype, target_rank,
		    target_disp, target_count, target_datatype, win, NULL, "MPI_Put");
}

MPIL_PMPI_ALIAS_HOT(Get)
IBX_HOT int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
		     int target_rank, MPI_Aint target_disp, int target_count,
		     MPI_Datatype target_datatype, MPI_Win win)
{
	MPIL_CS_GUARD();
	if (mpil_win_get_fast(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
			      target_count, target_datatype, win))
		return MPI_SUCCESS;
	return xfer(false, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
		    target_count, target_datatype, win, NULL, "MPI_Get");
}

static int check_request_arg(MPI_Win win, MPI_Request *request, const char *fname)
{
	MPIL_CHECK(mpil_win_check(win, fname));
	if (ibx_unlikely(!request))
		return mpil_win_err(win, MPI_ERR_ARG, fname, "request is NULL");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Rput)
int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
	      int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
	      MPI_Win win, MPI_Request *request)
{
	static const char F[] = "MPI_Rput";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_request_arg(win, request, F));
	return xfer(true, (void *)origin_addr, origin_count, origin_datatype, target_rank,
		    target_disp, target_count, target_datatype, win, request, F);
}

MPIL_PMPI_ALIAS(Rget)
int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
	      MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
	      MPI_Request *request)
{
	static const char F[] = "MPI_Rget";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_request_arg(win, request, F));
	return xfer(false, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
		    target_count, target_datatype, win, request, F);
}
