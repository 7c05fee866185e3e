/*
 * type_handle.c — what every datatype handle shares, whichever constructor
 * made it: allocation, reference counting, the process-wide wire ids of
 * committed types, commit, and the queries.
 */
#include "dtype_int.h"

#include <pthread.h>

/* ---- allocation and references -------------------------------------------- */

ibx_status_t ibx_dt_alloc(int kind, ibx_dt_t **dt_p)
{
	ibx_dt_t *dt = calloc(1, sizeof(*dt));

	if (!dt)
		return IBX_ERR_NO_MEMORY;
	atomic_init(&dt->refs, 1);
	dt->kind = (uint8_t)kind;
	dt->align = 1;
	dt->sig = ibx_dt_sig_empty();
	*dt_p = dt;
	return IBX_OK;
}

/*
 * Wire ids: a small process-wide table of versions indexed by id. A freed
 * type returns its id; the next type to take it gets version + 1, so a peer
 * caching (rank, id, version) never confuses the two ([Wu03] §5.4.2).
 */
static pthread_mutex_t wire_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *wire_versions;
static uint64_t wire_cap, wire_next;
static uint64_t *wire_free;
static uint64_t wire_nfree, wire_free_cap;

ibx_status_t ibx_dt_wire_id_assign(ibx_dt_t *dt)
{
	ibx_status_t st = IBX_OK;
	uint64_t id;

	pthread_mutex_lock(&wire_lock);
	if (wire_nfree > 0) {
		id = wire_free[--wire_nfree];
	} else {
		if (wire_next == wire_cap) {
			uint64_t ncap = wire_cap ? wire_cap * 2 : 256;
			uint32_t *nv = realloc(wire_versions, ncap * sizeof(*nv));

			if (!nv) {
				st = IBX_ERR_NO_MEMORY;
				goto out;
			}
			memset(nv + wire_cap, 0, (ncap - wire_cap) * sizeof(*nv));
			wire_versions = nv;
			wire_cap = ncap;
		}
		id = wire_next++;
	}
	dt->wire_id = id;
	dt->wire_version = ++wire_versions[id];
	dt->has_wire_id = true;
out:
	pthread_mutex_unlock(&wire_lock);
	return st;
}

static void wire_id_release(ibx_dt_t *dt)
{
	pthread_mutex_lock(&wire_lock);
	if (wire_nfree == wire_free_cap) {
		uint64_t ncap = wire_free_cap ? wire_free_cap * 2 : 256;
		uint64_t *nf = realloc(wire_free, ncap * sizeof(*nf));

		if (!nf) {
			/* the id is leaked, never reused: still correct */
			pthread_mutex_unlock(&wire_lock);
			return;
		}
		wire_free = nf;
		wire_free_cap = ncap;
	}
	wire_free[wire_nfree++] = dt->wire_id;
	pthread_mutex_unlock(&wire_lock);
}

void ibx_dt_release(ibx_dt_t *dt)
{
	if (!dt || atomic_fetch_sub_explicit(&dt->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (dt->child)
		ibx_dt_release(dt->child);
	if (dt->types) {
		for (int64_t k = 0; k < dt->count; k++)
			ibx_dt_release(dt->types[k]);
		free(dt->types);
	}
	if (dt->has_wire_id && dt->kind != DT_REMOTE)
		wire_id_release(dt);
	free(dt->blens);
	free(dt->displs);
	free(dt->prog);
	free(dt);
}

ibx_status_t ibx_dt_retain(ibx_dt_t *dt)
{
	if (!dt)
		return IBX_ERR_INVALID_PARAM;
	dt_retain_child(dt);
	return IBX_OK;
}

ibx_status_t ibx_dt_free(ibx_dt_t **dt_p)
{
	if (!dt_p || !*dt_p)
		return IBX_ERR_INVALID_PARAM;
	ibx_dt_release(*dt_p);
	*dt_p = NULL;
	return IBX_OK;
}

/* ---- commit and queries -------------------------------------------------------- */

ibx_status_t ibx_dt_commit(ibx_dt_t *dt)
{
	ibx_dt_prog_t *prog;
	ibx_status_t st;

	if (!dt)
		return IBX_ERR_INVALID_PARAM;
	if (dt->committed)
		return IBX_OK;
	st = ibx_dt_compile(dt, &prog);
	if (st) {
		ibx_debug("datatype commit failed: %s", ibx_status_str(st));
		return st;
	}
	return ibx_dt_install_prog(dt, prog);
}

ibx_status_t ibx_dt_query(const ibx_dt_t *dt, ibx_dt_info_t *info_p)
{
	if (!dt || !info_p)
		return IBX_ERR_INVALID_PARAM;
	info_p->size = dt->size;
	info_p->lb = dt->lb;
	info_p->ub = dt->ub;
	info_p->extent = dt->ub - dt->lb;
	info_p->true_lb = dt->true_lb;
	info_p->true_extent = dt->true_ub - dt->true_lb;
	info_p->align = dt->align;
	info_p->nelem = dt->nelem;
	info_p->depth = dt->depth;
	info_p->committed = dt->committed;
	info_p->remote = dt->kind == DT_REMOTE;
	info_p->contig = dt->committed && dt->contig;
	info_p->dense = dt->committed && dt->dense;
	return IBX_OK;
}

int64_t ibx_dt_size(const ibx_dt_t *dt)
{
	return dt->size;
}

int64_t ibx_dt_extent(const ibx_dt_t *dt)
{
	return dt->ub - dt->lb;
}

ibx_status_t ibx_dt_stats(const ibx_dt_t *dt, ibx_dt_stats_t *stats_p)
{
	if (!dt || !stats_p || !dt->committed)
		return IBX_ERR_INVALID_PARAM;
	*stats_p = dt->stats;
	return IBX_OK;
}

ibx_status_t ibx_dt_wire_id(const ibx_dt_t *dt, uint64_t *id_p, uint32_t *version_p)
{
	if (!dt || !id_p || !version_p || !dt->committed)
		return IBX_ERR_INVALID_PARAM;
	*id_p = dt->wire_id;
	*version_p = dt->wire_version;
	return IBX_OK;
}
