/*
 * win_dyn.c — dynamic windows (MPI-3.1 §11.2.4): MPI_Win_attach and
 * MPI_Win_detach, the region table every member publishes, and how origins
 * find the region an access lands in.
 *
 * The target never takes part: it writes its table with plain stores under
 * a version word in its control block (a seqlock), origins read it
 * one-sidedly. The table is a block of its own (registered memory), as
 * many regions as the process attaches: when it is full, a block twice its
 * size takes its place and the control block's descriptor (DYN_TAB:
 * address, capacity, packed key) says where; outgrown blocks stay until
 * MPI_Win_free, because an origin may be reading one.
 *
 *   target (attach / detach)               origin (mpil_win_dyn_target)
 *   DYN_VERSION += 1   (odd: changing)     v1 = DYN_VERSION      odd? retry
 *   [a new block: entries copied,          read DYN_COUNT, DYN_TAB
 *    DYN_TAB rewritten]                    v2 = DYN_VERSION      v1 != v2? retry
 *   write entries, DYN_COUNT               read the entries from DYN_TAB's block
 *   DYN_VERSION += 1   (even: stable)      v3 = DYN_VERSION      v1 != v3? retry
 *
 * An origin keeps a copy of each target's table, sorted by address, with
 * the keys unpacked (t->dyn), and compares the target's version with its
 * copy's before every access: one load for a target whose control block is
 * mapped here (node-local), one 8-byte read otherwise. The table is read
 * again when the version moved or the access falls outside every cached
 * region. The read per access is the price of correctness over the
 * network: a target may detach a region and attach new memory at the same
 * addresses (munmap, mmap), and an origin that kept the old key would use
 * a registration that is gone — a remote access error, which ends the
 * connection.
 */
#include "win_int.h"

#include <sched.h>
#include <stdlib.h>

/* How long an origin waits for a table that stays mid-update. */
#define DYN_STUCK_SEC 30.0
/* Entries of the first table block. */
#define DYN_FIRST_CAP 64

static mpil_win_dyn_tab_t *tab_desc(MPI_Win win)
{
	return (mpil_win_dyn_tab_t *)(void *)(win->ctl + mpil_win_ctl_dyn_tab(win->size));
}

/* The current table block's entries (NULL before the first attach). */
static mpil_win_region_t *table(MPI_Win win)
{
	return win->ntabs ? win->tabs[win->ntabs - 1].e : NULL;
}

static uint64_t table_cap(MPI_Win win)
{
	return win->ntabs ? win->tabs[win->ntabs - 1].cap : 0;
}

static uint64_t key_hash(const unsigned char *k, size_t n)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ k[i]) * 1099511628211ull;
	return h;
}

/* ---- the target's side -------------------------------------------------------------------- */

static void table_open(MPI_Win win)
{
	__atomic_store_n(&win->ctl[MPIL_WCTL_DYN_VERSION], win->ctl[MPIL_WCTL_DYN_VERSION] + 1,
			 __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void table_close(MPI_Win win)
{
	__atomic_store_n(&win->ctl[MPIL_WCTL_DYN_COUNT], (uint64_t)win->nattached,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&win->ctl[MPIL_WCTL_DYN_VERSION], win->ctl[MPIL_WCTL_DYN_VERSION] + 1,
			 __ATOMIC_RELEASE);
}

static int check_dynamic(MPI_Win win, const char *F)
{
	MPIL_CHECK(mpil_win_check(win, F));
	if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
		return mpil_win_err(win, MPI_ERR_RMA_FLAVOR, F,
				    "not a window from MPI_Win_create_dynamic");
	return MPI_SUCCESS;
}

/* Room in the list of what we attached for one more region. */
static bool attached_room(MPI_Win win)
{
	mpil_win_attached_t *v;
	int cap;

	if (win->nattached < win->attached_cap)
		return true;
	cap = win->attached_cap ? 2 * win->attached_cap : DYN_FIRST_CAP;
	v = realloc(win->attached, (size_t)cap * sizeof(*v));
	if (!v)
		return false;
	win->attached = v;
	win->attached_cap = cap;
	return true;
}

/* A table block twice the size of the current one (or the first), with
 * the current entries copied: it becomes current here, and origins find it
 * once the caller has published @d (inside table_open / table_close). */
static int table_grow(MPI_Win win, mpil_win_dyn_tab_t *d, const char *F)
{
	uint64_t cap = table_cap(win) ? 2 * table_cap(win) : DYN_FIRST_CAP;
	mpil_win_tab_block_t *tabs = realloc(win->tabs, (size_t)(win->ntabs + 1) * sizeof(*tabs));
	size_t klen = sizeof(d->key);
	ibx_mem_t *mem;
	void *e;
	ibx_status_t st;

	if (!tabs)
		return mpil_win_err(win, MPI_ERR_NO_MEM, F, "no memory for the region list");
	win->tabs = tabs;
	st = ibx_mem_alloc(mpil_g.ctx, cap * sizeof(mpil_win_region_t), &e, &mem);
	if (st == IBX_OK) {
		st = ibx_rkey_pack(mpil_g.ctx, mem, d->key, &klen);
		if (st != IBX_OK)
			ibx_mem_unmap(mpil_g.ctx, mem);
	}
	if (st != IBX_OK)
		return mpil_win_err(win, MPI_ERR_RMA_ATTACH, F,
				    "a region table of %llu entries: %s", (unsigned long long)cap,
				    ibx_status_str(st));
	if (win->nattached)
		memcpy(e, table(win), (size_t)win->nattached * sizeof(mpil_win_region_t));
	tabs[win->ntabs++] = (mpil_win_tab_block_t){mem, e, cap};
	d->addr = (uint64_t)(uintptr_t)e;
	d->cap = cap;
	d->key_len = klen;
	return MPI_SUCCESS;
}

/* An error unless [lo, hi) is free: a region of size 0 still claims its
 * base address (detach names it). */
static int attach_check_overlap(MPI_Win win, void *base, MPI_Aint size, uintptr_t hi, const char *F)
{
	uintptr_t lo = (uintptr_t)base;

	for (int i = 0; i < win->nattached; i++) {
		uintptr_t b = (uintptr_t)win->attached[i].base,
			  bh = b + (uintptr_t)win->attached[i].size;

		if (b == lo || (lo < bh && b < hi))
			return mpil_win_err(win, MPI_ERR_RMA_ATTACH, F,
					    "[%p, +%lld) overlaps the attached region [%p, +%lld)",
					    base, (long long)size, win->attached[i].base,
					    (long long)win->attached[i].size);
	}
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_attach)
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
	static const char F[] = "MPI_Win_attach";
	MPIL_CS_GUARD();
	uintptr_t lo = (uintptr_t)base, hi;
	mpil_win_region_t *e;
	mpil_win_dyn_tab_t d;
	unsigned char key[IBX_RKEY_PACKED_MAX];
	bool grew = false;
	size_t klen;
	ibx_mem_t *mem;
	ibx_status_t st;
	int err;

	MPIL_CHECK(check_dynamic(win, F));
	if (size < 0)
		return mpil_win_err(win, MPI_ERR_SIZE, F, "negative size %lld", (long long)size);
	if (!base && size > 0)
		return mpil_win_err(win, MPI_ERR_ARG, F, "base is NULL with size %lld",
				    (long long)size);
	if (__builtin_add_overflow(lo, (uintptr_t)size, &hi))
		return mpil_win_err(win, MPI_ERR_RMA_ATTACH, F, "[%p, +%lld) wraps around", base,
				    (long long)size);
	MPIL_CHECK(attach_check_overlap(win, base, size, hi, F));
	if (!attached_room(win))
		return mpil_win_err(win, MPI_ERR_NO_MEM, F, "no memory for the region list");
	/* an empty region is never accessed: it has no mapping and no key */
	mem = NULL;
	klen = 0;
	st = size ? mpil_win_map_user(win->comm, base, (size_t)size, &mem) : IBX_OK;
	if (st == IBX_OK && mem) {
		klen = sizeof(key);
		st = ibx_rkey_pack(mpil_g.ctx, mem, key, &klen);
		if (st != IBX_OK)
			ibx_mem_unmap(mpil_g.ctx, mem);
	}
	if (st != IBX_OK)
		return mpil_win_err(win, MPI_ERR_RMA_ATTACH, F, "mapping [%p, +%lld): %s", base,
				    (long long)size, ibx_status_str(st));
	if ((uint64_t)win->nattached == table_cap(win)) {
		err = table_grow(win, &d, F);
		if (err != MPI_SUCCESS) {
			if (mem)
				ibx_mem_unmap(mpil_g.ctx, mem);
			return err;
		}
		grew = true;
	}
	win->attached[win->nattached] = (mpil_win_attached_t){base, size, mem};
	table_open(win);
	if (grew)
		memcpy(tab_desc(win), &d, sizeof(d));
	e = &table(win)[win->nattached];
	e->base = lo;
	e->len = (uint64_t)size;
	e->key_len = klen;
	memcpy(e->key, key, klen);
	win->nattached++;
	table_close(win);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Win_detach)
int PMPI_Win_detach(MPI_Win win, const void *base)
{
	static const char F[] = "MPI_Win_detach";
	MPIL_CS_GUARD();
	ibx_mem_t *mem;
	int i, last;

	MPIL_CHECK(check_dynamic(win, F));
	for (i = 0; i < win->nattached && win->attached[i].base != base; i++)
		;
	if (i == win->nattached)
		return mpil_win_err(win, MPI_ERR_RMA_ATTACH, F,
				    "no region attached at %p (%d attached)", (void *)base,
				    win->nattached);
	mem = win->attached[i].mem;
	last = win->nattached - 1;
	/* the last entry takes the freed place, in both tables */
	table_open(win);
	win->attached[i] = win->attached[last];
	table(win)[i] = table(win)[last];
	win->nattached--;
	table_close(win);
	/* from here a remote origin's stale key fails at the engine */
	if (mem)
		ibx_mem_unmap(mpil_g.ctx, mem);
	return MPI_SUCCESS;
}

void mpil_win_dyn_release(MPI_Win win)
{
	for (int r = 0; win->t && r < win->size; r++) {
		mpil_win_target_t *t = &win->t[r];

		for (int i = 0; i < t->dyn_n; i++)
			if (t->dyn[i].rk)
				ibx_rkey_destroy(mpil_g.ctx, t->dyn[i].rk);
		t->dyn_n = 0;
		if (t->tab_rk)
			ibx_rkey_destroy(mpil_g.ctx, t->tab_rk);
		t->tab_rk = NULL;
	}
	for (int i = 0; i < win->nattached; i++)
		if (win->attached[i].mem)
			ibx_mem_unmap(mpil_g.ctx, win->attached[i].mem);
	win->nattached = 0;
	for (int i = 0; i < win->ntabs; i++)
		ibx_mem_unmap(mpil_g.ctx, win->tabs[i].mem);
	win->ntabs = 0;
	mpil_win_dyn_forget(win);
}

void mpil_win_dyn_forget(MPI_Win win)
{
	for (int r = 0; win->t && r < win->size; r++) {
		free(win->t[r].dyn);
		win->t[r].dyn = NULL;
		win->t[r].dyn_n = 0;
	}
	free(win->attached);
	win->attached = NULL;
	win->attached_cap = win->nattached = 0;
	free(win->tabs);
	win->tabs = NULL;
	win->ntabs = 0;
}

/* ---- the origin's side ------------------------------------------------------------------- */

/* @bytes of member @r's control block from word @word: loads when it is
 * mapped here, else one engine read. */
/* @bytes at @raddr of a member, through @rk, complete on return. */
static ibx_status_t get_wait(void *out, size_t bytes, uint64_t raddr, ibx_rkey_t *rk)
{
	ibx_request_t rq;
	ibx_status_t st;

	rq.cb = NULL;
	rq.user_data = NULL;
	st = ibx_get(mpil_g.ctx, out, bytes, raddr, rk, &rq);
	if (st == IBX_INPROGRESS)
		st = mpil_ibx_wait(&rq);
	return st;
}

static ibx_status_t ctl_get(const mpil_win_target_t *t, size_t word, void *out, size_t bytes)
{
	if (t->ctl_local) {
		memcpy(out, t->ctl_local + word, bytes);
		return IBX_OK;
	}
	return get_wait(out, bytes, t->ctl_base + 8 * word, t->ctl_rk);
}

static ibx_status_t ctl_word(const mpil_win_target_t *t, size_t word, uint64_t *v)
{
	if (t->ctl_local) {
		*v = __atomic_load_n(&t->ctl_local[word], __ATOMIC_ACQUIRE);
		return IBX_OK;
	}
	return ctl_get(t, word, v, 8);
}

/* Our key for the table block @d describes (kept while the block stays). */
static ibx_status_t tab_key(mpil_win_target_t *t, const mpil_win_dyn_tab_t *d)
{
	size_t klen = d->key_len <= sizeof(d->key) ? (size_t)d->key_len : 0;
	uint64_t h = key_hash(d->key, klen);
	ibx_rkey_t *rk;
	ibx_status_t st;

	if (t->tab_rk && t->tab_addr == d->addr && t->tab_hash == h)
		return IBX_OK;
	st = klen ? ibx_rkey_unpack(mpil_g.ctx, t->world, d->key, klen, &rk) : IBX_ERR_CORRUPT;
	if (st != IBX_OK)
		return st;
	if (t->tab_rk)
		ibx_rkey_destroy(mpil_g.ctx, t->tab_rk);
	t->tab_rk = rk;
	t->tab_addr = d->addr;
	t->tab_hash = h;
	return IBX_OK;
}

/* One consistent copy of member @r's table (*n_p entries, in *tab_p: the
 * caller frees it). */
static int table_read(MPI_Win win, int r, mpil_win_region_t **tab_p, int *n_p, uint64_t *version_p,
		      const char *fname)
{
	mpil_win_target_t *t = &win->t[r];
	size_t at = mpil_win_ctl_dyn_tab(win->size);
	mpil_win_region_t *tab = NULL;
	mpil_win_dyn_tab_t d;
	double start = 0;
	unsigned spins = 0;
	uint64_t v1, v2, n, cap = 0;
	ibx_status_t st;

	for (;; spins++) {
		if (spins >= 64) {
			if (start == 0)
				start = ibx_time_sec();
			else if (ibx_time_sec() - start > DYN_STUCK_SEC) {
				free(tab);
				return mpil_win_err(win, MPI_ERR_OTHER, fname,
						    "the region table of rank %d stayed mid-update "
						    "for %.0f s",
						    r, DYN_STUCK_SEC);
			}
			sched_yield();
		}
		st = ctl_word(t, MPIL_WCTL_DYN_VERSION, &v1);
		if (st != IBX_OK)
			break;
		if (v1 & 1)
			continue;
		if ((st = ctl_word(t, MPIL_WCTL_DYN_COUNT, &n)) != IBX_OK ||
		    (st = ctl_get(t, at, &d, sizeof(d))) != IBX_OK)
			break;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if ((st = ctl_word(t, MPIL_WCTL_DYN_VERSION, &v2)) != IBX_OK)
			break;
		if (v1 != v2)
			continue;
		if (n > d.cap || (n && !d.addr) || n > INT32_MAX / sizeof(*tab)) {
			st = IBX_ERR_CORRUPT; /* a stable table that cannot be */
			break;
		}
		if (n > cap) {
			free(tab);
			cap = n;
			if (!(tab = malloc((size_t)cap * sizeof(*tab)))) {
				st = IBX_ERR_NO_MEMORY;
				break;
			}
		}
		if (n && ((st = tab_key(t, &d)) != IBX_OK ||
			  (st = get_wait(tab, (size_t)n * sizeof(*tab), t->tab_addr, t->tab_rk)) !=
			      IBX_OK))
			break;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if ((st = ctl_word(t, MPIL_WCTL_DYN_VERSION, &v2)) != IBX_OK)
			break;
		if (v1 == v2) {
			*tab_p = tab;
			*n_p = (int)n;
			*version_p = v1;
			return MPI_SUCCESS;
		}
	}
	free(tab);
	return mpil_win_err(win, mpil_err_from_ibx(st), fname,
			    "reading the region table of rank %d: %s", r, ibx_status_str(st));
}

static int region_cmp(const void *x, const void *y)
{
	const mpil_win_dyn_region_t *a = x, *b = y;

	return a->base < b->base ? -1 : a->base > b->base;
}

/* The cached region of @t that starts at or before @a, the last such
 * (t->dyn is sorted by base), or NULL. */
static mpil_win_dyn_region_t *dyn_at_or_before(const mpil_win_target_t *t, uint64_t a)
{
	int lo = 0, hi = t->dyn_n; /* the first region starting after a */

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (t->dyn[mid].base <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &t->dyn[lo - 1] : NULL;
}

/* Our key of region @nd if our old copy has it (same place, same key):
 * moved to @nd. Bases are unique (attach refuses a second region at a
 * base, even of size 0), so the region at or before it is the only one. */
static bool dyn_keep_key(mpil_win_target_t *t, mpil_win_dyn_region_t *nd)
{
	mpil_win_dyn_region_t *o = dyn_at_or_before(t, nd->base);

	if (!o || !o->rk || o->base != nd->base || o->len != nd->len || o->key_hash != nd->key_hash)
		return false;
	nd->rk = o->rk;
	o->rk = NULL;
	return true;
}

/* Brings our copy of member @r's table up to date: keys of regions still
 * there are kept, new ones unpacked, those of detached regions destroyed. */
static int dyn_refresh(MPI_Win win, int r, const char *fname)
{
	mpil_win_target_t *t = &win->t[r];
	mpil_win_dyn_region_t *nd;
	mpil_win_region_t *tab = NULL;
	ibx_status_t bad = IBX_OK;
	uint64_t version = 0;
	int n = 0, err, bad_i = -1;

	err = table_read(win, r, &tab, &n, &version, fname);
	if (err != MPI_SUCCESS)
		return err;
	nd = calloc(n ? (size_t)n : 1, sizeof(*nd));
	if (!nd) {
		free(tab);
		return mpil_win_err(win, MPI_ERR_NO_MEM, fname, "no memory for a region table");
	}
	for (int i = 0; i < n; i++) {
		size_t klen = tab[i].key_len <= IBX_RKEY_PACKED_MAX ? tab[i].key_len : 0;
		ibx_status_t st;

		nd[i] = (mpil_win_dyn_region_t){
		    .base = tab[i].base, .len = tab[i].len, .key_hash = key_hash(tab[i].key, klen)};
		if (nd[i].len == 0 || dyn_keep_key(t, &nd[i]))
			continue; /* empty: no key; or still attached: the key kept */
		st = klen ? ibx_rkey_unpack(mpil_g.ctx, t->world, tab[i].key, klen, &nd[i].rk)
			  : IBX_ERR_CORRUPT;
		if (st != IBX_OK) {
			nd[i].rk = NULL;
			bad = st;
			bad_i = i;
		}
	}
	for (int j = 0; j < t->dyn_n; j++)
		if (t->dyn[j].rk)
			ibx_rkey_destroy(mpil_g.ctx, t->dyn[j].rk);
	if (bad != IBX_OK)
		err =
		    mpil_win_err(win, mpil_err_from_ibx(bad), fname,
				 "the key of rank %d's region [0x%llx, +%llu) does not unpack: %s",
				 r, (unsigned long long)tab[bad_i].base,
				 (unsigned long long)tab[bad_i].len, ibx_status_str(bad));
	qsort(nd, (size_t)n, sizeof(*nd), region_cmp);
	free(t->dyn);
	t->dyn = nd;
	t->dyn_n = n;
	t->dyn_version = version;
	free(tab);
	return err;
}

/* Member @r's table version: a load, or a read over the network. */
static int dyn_version(MPI_Win win, int r, uint64_t *version_p, const char *fname)
{
	const mpil_win_target_t *t = &win->t[r];

	if (t->ctl_local) {
		*version_p =
		    __atomic_load_n(&t->ctl_local[MPIL_WCTL_DYN_VERSION], __ATOMIC_ACQUIRE);
		return MPI_SUCCESS;
	}
	return mpil_win_ctl_read(win, r, MPIL_WCTL_DYN_VERSION, version_p, fname);
}

/* The cached region holding [a, b) (a < b), or NULL. */
static const mpil_win_dyn_region_t *dyn_find(const mpil_win_target_t *t, uint64_t a, uint64_t b)
{
	const mpil_win_dyn_region_t *d = dyn_at_or_before(t, a);

	return d && b - d->base <= d->len ? d : NULL;
}

int mpil_win_dyn_target(MPI_Win win, int target, MPI_Aint target_disp, MPI_Aint lo, MPI_Aint hi,
			uint64_t *raddr_p, ibx_rkey_t **rk_p, const char *fname)
{
	mpil_win_target_t *t = &win->t[target];
	const mpil_win_dyn_region_t *d;
	bool fresh = false;
	uint64_t version;
	MPI_Aint a, b;
	int err;

	if (ibx_unlikely(__builtin_add_overflow(target_disp, lo, &a) ||
			 __builtin_add_overflow(target_disp, hi, &b)))
		return mpil_win_err(win, MPI_ERR_RMA_RANGE, fname,
				    "address 0x%llx with the datatype's bounds overflows",
				    (unsigned long long)target_disp);
	*raddr_p = (uint64_t)target_disp;
	*rk_p = NULL;
	if (hi <= lo)
		return MPI_SUCCESS; /* nothing is accessed */
	if (ibx_unlikely(a < 0))
		return mpil_win_err(win, MPI_ERR_RMA_RANGE, fname,
				    "address 0x%llx%+lld is not in rank %d's address space",
				    (unsigned long long)target_disp, (long long)lo, target);
	MPIL_CHECK(dyn_version(win, target, &version, fname));
	if (version != t->dyn_version) {
		MPIL_CHECK(dyn_refresh(win, target, fname));
		fresh = true;
	}
	d = dyn_find(t, (uint64_t)a, (uint64_t)b);
	if (!d && !fresh) {
		err = dyn_refresh(win, target, fname);
		if (err != MPI_SUCCESS)
			return err;
		d = dyn_find(t, (uint64_t)a, (uint64_t)b);
	}
	if (!d)
		return mpil_win_err(win, MPI_ERR_RMA_RANGE, fname,
				    "no region attached at rank %d holds [0x%llx, 0x%llx) (%d "
				    "attached)",
				    target, (unsigned long long)a, (unsigned long long)b, t->dyn_n);
	if (!d->rk)
		return mpil_win_err(win, MPI_ERR_OTHER, fname,
				    "the key of rank %d's region [0x%llx, +%llu) did not unpack",
				    target, (unsigned long long)d->base,
				    (unsigned long long)d->len);
	*rk_p = d->rk;
	return MPI_SUCCESS;
}
