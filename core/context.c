/*
 * context.c — ibx_init / ibx_finalize: bootstrap, choose a path per peer,
 * drive the path modules through the collective connection sequence.
 *
 *   ibx_boot_init ─► who am I, who is node-local
 *   choose paths   IBX_PATHS=auto: node-local → shm, others → verbs
 *                  IBX_PATHS=shm:  every peer through shm (one node only)
 *                  IBX_PATHS=verbs: every peer through core/qp
 *   for every module: init(ranks)       (puts its addresses)
 *   ibx_boot_fence(collect)
 *   for every module: connect           (gets peers' addresses, attaches)
 *   ibx_boot_fence(barrier)
 *   for every module: ready             (all attached: unlink segments)
 *
 * Every rank calls every module's init/connect/ready, even with no peers on
 * that path, so the fences line up across the job.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include "ibx_int.h"

#include <sched.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

/* Idle passes before yielding when ranks outnumber cores. */
#define IBX_SPIN_OVERSUBSCRIBED 4
/* Past the spin count, with a core per rank: yield one idle pass in 256.
 * The waiter stays polite to other jobs, and notices its event within a
 * pass or so instead of a system call later: a hand-off of the mutex to a
 * waiter that had waited 1 ms, 2 ranks pinned: 0.38-1.0 us with a
 * sched_yield every pass, 0.55 one in 16, 0.21-0.26 one in 256 or none
 * (ibtest lock -a mcs -p 2 -w 1ms, 2026-11-25). */
#define IBX_YIELD_MASK_SPREAD 255

enum { PATH_SHM, PATH_VERBS, PATH_MAX };

typedef struct path_choice {
	int *ranks[PATH_MAX];
	int n[PATH_MAX];
} path_choice_t;

static const ibx_path_module_t *path_module(int which)
{
	return which == PATH_SHM ? &ibx_shm_path_module : &ibx_qp_path_module;
}

static bool rank_is_local(const ibx_ctx_t *ctx, int r)
{
	for (int i = 0; i < ctx->local_size; i++)
		if (ctx->local_ranks[i] == r)
			return true;
	return false;
}

static ibx_status_t choose_paths(ibx_ctx_t *ctx, path_choice_t *pc)
{
	const char *mode = ibx_core_config()->PATHS;
	bool all_shm = !strcasecmp(mode, "shm");
	bool all_verbs = !strcasecmp(mode, "verbs");

	if (!all_shm && !all_verbs && strcasecmp(mode, "auto")) {
		ibx_error("IBX_PATHS=%s: expected auto, shm or verbs", mode);
		return IBX_ERR_INVALID_PARAM;
	}
	for (int p = 0; p < PATH_MAX; p++) {
		pc->ranks[p] = calloc((size_t)ctx->size, sizeof(int));
		if (!pc->ranks[p])
			return IBX_ERR_NO_MEMORY;
	}
	for (int r = 0; r < ctx->size; r++) {
		bool local = rank_is_local(ctx, r);
		int p;

		ctx->peers[r].rank = r;
		ctx->peers[r].local = local;
		if (r == ctx->rank)
			continue;
		if (all_shm && !local) {
			ibx_error("IBX_PATHS=shm but rank %d is on another node", r);
			return IBX_ERR_INVALID_PARAM;
		}
		p = (all_verbs || (!all_shm && !local)) ? PATH_VERBS : PATH_SHM;
		pc->ranks[p][pc->n[p]++] = r;
	}
	/* A job over several nodes: the verbs path connects the node-local
	 * peers too, for one-sided atomics only (their messages stay on shm).
	 * Remote peers update a node-local owner's memory with the NIC's
	 * atomics, which are atomic only among themselves: every atomic on
	 * memory that verbs peers reach must be the NIC's (core/rma/rkey.c). */
	if (!all_shm && !all_verbs && ctx->local_size < ctx->size) {
		ctx->nic_local = true;
		for (int r = 0; r < ctx->size; r++)
			if (r != ctx->rank && ctx->peers[r].local)
				pc->ranks[PATH_VERBS][pc->n[PATH_VERBS]++] = r;
	}
	return IBX_OK;
}

typedef ibx_status_t (*phase_fn_t)(ibx_ctx_t *ctx, void *state);

static ibx_status_t run_phase(ibx_ctx_t *ctx, size_t offset, const char *what)
{
	for (int i = 0; i < ctx->npaths; i++) {
		phase_fn_t fn = *(const phase_fn_t *)((const char *)ctx->paths[i].mod + offset);
		ibx_status_t st = fn(ctx, ctx->paths[i].state);

		if (st != IBX_OK) {
			ibx_error("%s path: %s failed: %s", ctx->paths[i].mod->name, what,
				  ibx_status_str(st));
			return st;
		}
	}
	return IBX_OK;
}

static void paths_fini(ibx_ctx_t *ctx)
{
	for (int i = ctx->npaths - 1; i >= 0; i--)
		ctx->paths[i].mod->fini(ctx, ctx->paths[i].state);
	ctx->npaths = 0;
}

/* Every slot of a path's ops table is filled (with a function returning
 * IBX_ERR_UNSUPPORTED where the path cannot do something), so callers
 * test results, never pointers. */
static bool path_ops_complete(const ibx_path_ops_t *ops)
{
	return ops->name && ops->tag_send && ops->rndv_recv && ops->put && ops->get &&
	       ops->put_imm && ops->fetch_add && ops->cswap && ops->flush && ops->lose;
}

static ibx_status_t paths_connect(ibx_ctx_t *ctx)
{
	path_choice_t pc;

	memset(&pc, 0, sizeof(pc));
	ibx_status_t st;

	st = choose_paths(ctx, &pc);
	if (st != IBX_OK)
		goto out;
	for (int p = 0; p < PATH_MAX; p++) {
		const ibx_path_module_t *mod = path_module(p);
		void *state = NULL;

		st = mod->init(ctx, pc.ranks[p], pc.n[p], &state);
		if (st != IBX_OK) {
			ibx_error("%s path: init failed: %s", mod->name, ibx_status_str(st));
			goto out;
		}
		ctx->paths[ctx->npaths].mod = mod;
		ctx->paths[ctx->npaths].state = state;
		ctx->npaths++;
	}
	st = ibx_boot_fence(ctx->boot, true);
	if (st != IBX_OK)
		goto out;
	st = run_phase(ctx, offsetof(ibx_path_module_t, connect), "connect");
	if (st != IBX_OK)
		goto out;
	st = ibx_boot_fence(ctx->boot, false);
	if (st != IBX_OK)
		goto out;
	st = run_phase(ctx, offsetof(ibx_path_module_t, ready), "ready");
	if (st != IBX_OK)
		goto out;
	for (int r = 0; r < ctx->size; r++) {
		if (r != ctx->rank && !ctx->peers[r].ops) {
			ibx_error("no path connected rank %d", r);
			st = IBX_ERR_UNREACHABLE;
			goto out;
		}
		if (r != ctx->rank && !path_ops_complete(ctx->peers[r].ops)) {
			ibx_error("path %s leaves an operation NULL", ctx->peers[r].ops->name);
			st = IBX_ERR_UNSUPPORTED;
			goto out;
		}
	}
out:
	for (int p = 0; p < PATH_MAX; p++)
		free(pc.ranks[p]);
	return st;
}

/*
 * How many idle progress passes a waiter spins before it yields. When the
 * node-local ranks outnumber the CPUs they may run on — the union of their
 * affinity masks, exchanged through the bootstrap — the peer we wait for is
 * likely waiting for our CPU: spinning only burns its time slice (MPICH
 * pays 8-32 ms per barrier that way here), so yield after a few passes.
 * Ranks pinned one per CPU each see a one-CPU mask, but together they have
 * a CPU each: the union, not the own mask, is what counts.
 * IBX_SPIN_COUNT set explicitly always wins.
 */
#define CPUS_BOOT_KEY "ibx.cpus"

/* Every node-local rank puts the key (empty when its mask is unknown), so
 * that the others may read it as a known key. */
static void publish_cpus(ibx_ctx_t *ctx)
{
	cpu_set_t set;
	bool ok;

	if (ctx->local_size <= 1)
		return;
	ok = sched_getaffinity(0, sizeof(set), &set) == 0;
	(void)ibx_boot_put(ctx->boot, CPUS_BOOT_KEY, &set, ok ? sizeof(set) : 0);
}

/* CPUs the node-local ranks may run on together; 0 when unknown. */
static int local_cpu_union(ibx_ctx_t *ctx)
{
	cpu_set_t all, *set;
	size_t len;

	if (sched_getaffinity(0, sizeof(all), &all) != 0)
		return 0;
	for (int i = 0; i < ctx->local_size; i++) {
		int r = ctx->local_ranks[i];

		if (r == ctx->rank)
			continue;
		if (ibx_boot_get_known(ctx->boot, r, CPUS_BOOT_KEY, (void **)&set, &len) != IBX_OK)
			return CPU_COUNT(&all); /* no word from a peer: our own view */
		if (len != sizeof(*set)) {
			free(set);
			return CPU_COUNT(&all); /* a peer did not know */
		}
		CPU_OR(&all, &all, set);
		free(set);
	}
	return CPU_COUNT(&all);
}

static uint64_t choose_spin_count(ibx_ctx_t *ctx)
{
	bool set = ibx_config_is_set(&ibx_core_config_section, &ibx_core_config()->SPIN_COUNT);
	int ncpu;

	ncpu = ctx->local_size > 1 ? local_cpu_union(ctx) : 0;
	if (ncpu <= 0)
		ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > 0 && ctx->local_size > ncpu) {
		if (!set)
			ibx_debug("%d node-local ranks on %d CPUs: waiters yield at once",
				  ctx->local_size, ncpu);
		ctx->yield_mask = 0; /* every pass: the rank we wait for needs our core */
		return set ? (uint64_t)ibx_core_config()->SPIN_COUNT : IBX_SPIN_OVERSUBSCRIBED;
	}
	ctx->yield_mask = IBX_YIELD_MASK_SPREAD;
	if (!set)
		ibx_debug("%d node-local ranks on %d CPUs: waiters spin %lld passes",
			  ctx->local_size, ncpu, (long long)ibx_core_config()->SPIN_COUNT);
	return (uint64_t)ibx_core_config()->SPIN_COUNT;
}

ibx_status_t ibx_init(const ibx_init_params_t *params, ibx_ctx_t **ctx_p)
{
	ibx_ctx_t *ctx;
	ibx_status_t st;

	if (!ctx_p)
		return IBX_ERR_INVALID_PARAM;
	(void)ibx_core_config();
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return IBX_ERR_NO_MEMORY;
	ctx->flags = params ? params->flags : 0;

	st = ibx_boot_init(&ctx->boot);
	if (st != IBX_OK)
		goto err_free;
	ctx->rank = ibx_boot_rank(ctx->boot);
	ctx->size = ibx_boot_size(ctx->boot);
	ctx->local_size = ibx_boot_local_size(ctx->boot);
	ctx->local_ranks = ibx_boot_local_ranks(ctx->boot);
	ctx->lost_gen = ibx_boot_lost_gen(ctx->boot);
	ibx_log_set_rank(ctx->rank);
	publish_cpus(ctx);

	ctx->peers = calloc((size_t)ctx->size, sizeof(*ctx->peers));
	if (!ctx->peers) {
		st = IBX_ERR_NO_MEMORY;
		goto err_boot;
	}
	st = paths_connect(ctx);
	if (st != IBX_OK)
		goto err_paths;
	ctx->spin_count = choose_spin_count(ctx); /* after the fence: peers' masks */
	ibx_debug("initialised: rank %d of %d, %d node-local", ctx->rank, ctx->size,
		  ctx->local_size);
	*ctx_p = ctx;
	return IBX_OK;

err_paths:
	paths_fini(ctx);
	free(ctx->peers);
err_boot:
	ibx_boot_fini(ctx->boot);
err_free:
	free(ctx);
	return st;
}

static bool paths_busy(ibx_ctx_t *ctx)
{
	for (int i = 0; i < ctx->npaths; i++)
		if (ctx->paths[i].mod->busy(ctx, ctx->paths[i].state))
			return true;
	return false;
}

ibx_status_t ibx_finalize(ibx_ctx_t *ctx)
{
	ibx_status_t st;
	unsigned idle = 0;

	if (!ctx)
		return IBX_ERR_INVALID_PARAM;
	/* Sends still in flight need their receivers: drain before the fence. */
	while (paths_busy(ctx))
		ibx_progress_wait(ctx, &idle);
	st = ibx_boot_fence(ctx->boot, false);
	if (ctx->rma_fini)
		ctx->rma_fini(ctx);
	if (ctx->dtx_fini)
		ctx->dtx_fini(ctx);
	paths_fini(ctx);
	ibx_tag_cleanup(ctx);
	ibx_boot_fini(ctx->boot);
	free(ctx->peers);
	free(ctx);
	return st;
}

int ibx_rank(const ibx_ctx_t *ctx)
{
	return ctx ? ctx->rank : -1;
}

int ibx_size(const ibx_ctx_t *ctx)
{
	return ctx ? ctx->size : -1;
}

int ibx_local_size(const ibx_ctx_t *ctx)
{
	return ctx ? ctx->local_size : -1;
}

const int *ibx_local_ranks(const ibx_ctx_t *ctx)
{
	return ctx ? ctx->local_ranks : NULL;
}

const char *ibx_ctx_device(const ibx_ctx_t *ctx)
{
	for (int i = 0; ctx && i < ctx->npaths; i++) {
		const ibx_path_module_t *m = ctx->paths[i].mod;
		const char *d = m->device ? m->device(ctx->paths[i].state) : NULL;

		if (d)
			return d;
	}
	return NULL;
}

const char *ibx_peer_path_name(const ibx_ctx_t *ctx, int peer)
{
	if (!ctx || peer < 0 || peer >= ctx->size)
		return NULL;
	if (peer == ctx->rank)
		return "self";
	return ctx->peers[peer].ops ? ctx->peers[peer].ops->name : "none";
}

ibx_status_t ibx_boot_barrier(ibx_ctx_t *ctx)
{
	if (!ctx)
		return IBX_ERR_INVALID_PARAM;
	return ibx_boot_fence(ctx->boot, false);
}

ibx_status_t ibx_abort(ibx_ctx_t *ctx, int code, const char *msg)
{
	if (!ctx)
		return IBX_ERR_INVALID_PARAM;
	return ibx_boot_abort(ctx->boot, code, msg ? msg : "ibx_abort");
}
