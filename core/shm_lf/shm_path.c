/*
 * shm_path.c — the node-local path: lock-free slot rings per ordered pair
 * of processes, a pipelined copy and a kernel single copy (CMA) for large
 * messages ([Gropp97]; docs/design.md, "Shared memory"). This file sets the
 * path up, connects the peers and gives the engine the path's ops table and
 * module; each protocol is drawn in the file that runs it:
 *
 *   shm_ring.c      eager messages through the slot ring, the order of
 *                   packets, control packets, sends waiting for ring room
 *   shm_rndv.c      the rendezvous: RTS/CTS, the pipelined copy, the CMA
 *                   split single copy
 *   shm_progress.c  polling of active and idle senders, queued work
 *   shm_liveness.c  peer pid checks; failing everything pending with a lost
 *                   peer
 *   shm_rma.c       one-sided put/get by CMA
 *   shm_calib.c     which copy carries a rendezvous on this machine: the
 *                   start-up calibration and its decision rule
 *   shm_path.h      the path's per-process and per-peer state
 *   shm_int.h       the shared layout, the ring and the pipe (inline), with
 *                   shm_seg.c (segments) and shm_copy.c (pipe and CMA copies)
 *
 * Set-up, inside ibx_init's collective sequence:
 *
 *   init     sweep segments stranded by dead jobs; create our segment
 *            <IBX_SHM_DIR>/ibx-<job>-<rank> with one area per local peer
 *            (shm_seg.c); the node's lowest rank measures which
 *            rendezvous copy is faster here (shm_calib.c, 1-2 ms) and
 *            writes the answer into its segment's header;
 *            boot_put("shm", {pid, size, probe addr, path})
 *   ── fence(collect) ──
 *   connect  for every peer: map its segment, find our area in it; probe
 *            CMA with an 8-byte process_vm_readv of the peer's probe word;
 *            take the rendezvous threshold from the lowest rank's header
 *   ── fence(barrier) ──
 *   ready    every peer has mapped us: unlink our name. From here on a
 *            normal exit, an abort or a kill -9 leaves nothing in /dev/shm.
 */
#include "shm_path.h"

#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#define SHM_BOOT_KEY "shm"
/* the small ring IBX_SHM_PIPE_RING=auto tries: 4 x 64k, what two
 * hyperthreads' shared L2 keeps */
#define PIPE_RING_SMALL 4

/* What a process publishes at init (the path follows, NUL-terminated). */
typedef struct shm_boot_info {
	uint32_t version;
	int32_t pid;
	uint64_t size;
	uint64_t probe_addr;
	uint64_t probe_value;
	char path[];
} shm_boot_info_t;

static const ibx_path_ops_t shm_ops = {
    .name = "shm",
    .typed_send = true,
    .tag_send = ibx_shm_tag_send,
    .rndv_recv = ibx_shm_rndv_recv,
    .put = ibx_shm_rma_put,
    .get = ibx_shm_rma_get,
    .put_imm = ibx_shm_rma_put_imm,
    .fetch_add = ibx_shm_rma_fetch_add,
    .cswap = ibx_shm_rma_cswap,
    .flush = ibx_shm_rma_flush,
    .lose = ibx_shm_peer_lose,
};

/* ---- set-up ---------------------------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void state_free(shm_state_t *st)
{
	for (int i = 0; i < st->npeers; i++) {
		ibx_shm_seg_detach(&st->peers[i].seg);
		free(st->peers[i].ctrl);
	}
	ibx_shm_seg_detach(&st->seg);
	free(st->scratch);
	free(st->order);
	free(st->peers);
	free(st);
}

/* ---- which rendezvous copy ------------------------------------------------- */

/* IBX_SHM_CMA_THRESHOLD: "auto", or a size (0: never). */
static ibx_status_t cma_threshold_parse(const char *v, shm_state_t *st)
{
	int64_t n;

	if (!v || !strcmp(v, "auto")) {
		st->cma_auto = true;
		return IBX_OK;
	}
	if (ibx_config_parse_size(v, &n) != IBX_OK || n < 0) {
		ibx_error("shm: IBX_SHM_CMA_THRESHOLD=%s: expected auto, 0 or a size", v);
		return IBX_ERR_INVALID_PARAM;
	}
	st->cma_threshold = (size_t)n;
	return IBX_OK;
}

/* The node's lowest rank: measure (or take the configured threshold) and
 * put the answer into our segment's header, where the peers find it after
 * the fence. A calibration that cannot run leaves the pipe alone: it
 * works everywhere. */
static void calib_publish(shm_state_t *st)
{
	ibx_shm_calib_t c = {.cma_from = st->cma_threshold};
	char desc[256];

	if (st->cma_auto) {
		if (ibx_shm_calibrate(st->geom.pipe_chunk, &c) == IBX_OK) {
			ibx_shm_calib_describe(&c, desc, sizeof(desc));
			ibx_info("shm: calibrated in %.2f ms, time of CMA / pipelined copy: %s",
				 (double)c.cost_ns / 1e6, desc);
		} else {
			ibx_warn("shm: no calibration of the rendezvous copy: the pipelined "
				 "copy serves every rendezvous");
			c.cma_from = 0;
		}
	}
	st->seg.hdr->calib = c;
}

/* Chunks per pipe: IBX_SHM_PIPE_CHUNKS, cut so that the @npeers pipes into
 * our segment fit IBX_SHM_PIPE_MEM (not below 4, nor below the ring asked
 * for). Every local rank computes the same. */
static uint32_t pipe_chunks_fit(const ibx_shm_config_t *cfg, int npeers)
{
	uint64_t chunks = (uint64_t)cfg->SHM_PIPE_CHUNKS;
	uint64_t fit =
	    (uint64_t)cfg->SHM_PIPE_MEM / ((uint64_t)npeers * (uint64_t)cfg->SHM_PIPE_CHUNK);
	uint64_t floor = cfg->SHM_PIPE_RING > 4 ? (uint64_t)cfg->SHM_PIPE_RING : 4;

	if (fit < chunks)
		chunks = fit > floor ? fit : floor;
	return (uint32_t)(chunks < (uint64_t)cfg->SHM_PIPE_CHUNKS ? chunks
								  : (uint64_t)cfg->SHM_PIPE_CHUNKS);
}

static ibx_status_t shm_init(ibx_ctx_t *ctx, const int *ranks, int n, void **state_p)
{
	const ibx_shm_config_t *cfg = ibx_shm_config();
	shm_boot_info_t *info = NULL;
	shm_state_t *st;
	int *sorted = NULL;
	size_t info_len;
	ibx_status_t ret;

	*state_p = NULL;
	if (n <= 0)
		return IBX_OK;
	if (cfg->SHM_RING_SLOTS <= 0 || cfg->SHM_RING_SLOTS > 65536 || cfg->SHM_PIPE_CHUNKS <= 0 ||
	    cfg->SHM_PIPE_CHUNKS > 1024 || cfg->SHM_PIPE_CHUNK <= 0 || cfg->SHM_EAGER_LIMIT < 0 ||
	    cfg->SHM_PIPE_RING < 0 || cfg->SHM_PIPE_RING == 1 || cfg->SHM_PIPE_MEM < 0 ||
	    cfg->SHM_PIPE_FIRST < 64 || cfg->SHM_EAGER_CELLS < 0 || cfg->SHM_EAGER_CELLS > 1024) {
		ibx_error("shm: IBX_SHM_* values out of range (see ibtest info)");
		return IBX_ERR_INVALID_PARAM;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return IBX_ERR_NO_MEMORY;
	st->ctx = ctx;
	st->geom.ring_slots = (uint32_t)cfg->SHM_RING_SLOTS;
	st->geom.pipe_chunk = (uint64_t)cfg->SHM_PIPE_CHUNK;
	st->geom.pipe_chunks = pipe_chunks_fit(cfg, n);
	/* cells hold what the eager limit lets through, above the slot sizes;
	 * beyond 8 peers the segment's cells are shared out among them (the
	 * segment grows with the peers, the memory of the node with their
	 * square) */
	if (cfg->SHM_EAGER_CELLS > 0 && cfg->SHM_EAGER_LIMIT > IBX_SHM_CELL_MIN) {
		uint64_t cell = ((uint64_t)cfg->SHM_EAGER_LIMIT + IBX_CACHELINE - 1) &
				~(uint64_t)(IBX_CACHELINE - 1);
		int64_t cells = cfg->SHM_EAGER_CELLS;

		if (n > 8 && cells > 4)
			cells = cells * 8 / n > 4 ? cells * 8 / n : 4;
		st->geom.cells = (uint32_t)cells;
		st->geom.cell_size = (uint32_t)(cell < (64u << 10) ? cell : 64u << 10);
	}
	ret = ibx_shm_geom_check(&st->geom);
	if (ret != IBX_OK)
		goto err_free;
	ret = cma_threshold_parse(cfg->SHM_CMA_THRESHOLD, st);
	if (ret != IBX_OK)
		goto err_free;
	st->pipe_first = (size_t)cfg->SHM_PIPE_FIRST;
	st->check_ns =
	    (uint64_t)(ibx_core_config()->PEER_CHECK_MS > 0 ? ibx_core_config()->PEER_CHECK_MS
							    : 200) *
	    1000000ull;
	st->peers = calloc((size_t)n, sizeof(*st->peers));
	st->order = calloc((size_t)n, sizeof(*st->order));
	sorted = malloc((size_t)n * sizeof(*sorted));
	/* any multi-slot eager packet our ring can carry is gathered here */
	st->scratch = malloc(ibx_shm_pkt_capacity(st->geom.ring_slots));
	if (!st->peers || !st->order || !sorted || !st->scratch) {
		ret = IBX_ERR_NO_MEMORY;
		goto err_free;
	}
	st->npeers = n;
	memcpy(sorted, ranks, (size_t)n * sizeof(*sorted));
	qsort(sorted, (size_t)n, sizeof(*sorted), cmp_int);

	/* a kill -9 between create and unlink of an earlier job */
	(void)ibx_shm_sweep(cfg->SHM_DIR);
	ret = ibx_shm_seg_create(cfg->SHM_DIR, ibx_boot_job_id(ctx->boot), ctx->rank, sorted, n,
				 &st->geom, &st->seg);
	if (ret != IBX_OK)
		goto err_free;
	/* the lowest rank answers for the node; the peers read its header
	 * after the fence (connect) */
	if (ctx->rank < sorted[0])
		calib_publish(st);

	st->probe_word = ((uint64_t)getpid() << 32) ^ IBX_SHM_MAGIC ^ ibx_time_ns();
	info_len = sizeof(*info) + strlen(st->seg.path) + 1;
	info = calloc(1, info_len);
	if (!info) {
		ret = IBX_ERR_NO_MEMORY;
		goto err_free;
	}
	info->version = IBX_SHM_VERSION;
	info->pid = (int32_t)getpid();
	info->size = st->seg.size;
	info->probe_addr = (uint64_t)(uintptr_t)&st->probe_word;
	info->probe_value = st->probe_word;
	memcpy(info->path, st->seg.path, strlen(st->seg.path) + 1);
	ret = ibx_boot_put(ctx->boot, SHM_BOOT_KEY, info, info_len);
	free(info);
	if (ret != IBX_OK)
		goto err_free;

	for (int i = 0; i < n; i++) {
		shm_peer_t *p = &st->peers[i];

		p->rank = sorted[i];
		p->st = st;
		p->peer = &ctx->peers[p->rank];
		p->order_pos = i;
		p->pid = -1;
		st->order[i] = i;
	}
	free(sorted);
	*state_p = st;
	return IBX_OK;

err_free:
	free(sorted);
	state_free(st); /* unlinks our segment if it was created */
	return ret;
}

/* After connect: an automatic threshold is the node's lowest rank's. One
 * line per rank at IBX_LOG=info (tests/sh/shm_engine.sh compares them). */
static void calib_adopt(shm_state_t *st)
{
	const ibx_shm_seg_hdr_t *lead = st->seg.hdr;
	int lead_rank = st->ctx->rank;
	char why[64];

	if (st->peers[0].rank < lead_rank) {
		lead = st->peers[0].seg.hdr;
		lead_rank = st->peers[0].rank;
	}
	if (!st->cma_auto)
		snprintf(why, sizeof(why), "IBX_SHM_CMA_THRESHOLD");
	else
		snprintf(why, sizeof(why), "%s by rank %d",
			 lead->calib.flags & IBX_SHM_CALIB_DONE ? "calibrated" : "configured",
			 lead_rank);
	if (st->cma_auto)
		st->cma_threshold = (size_t)lead->calib.cma_from;
	if (st->cma_threshold)
		ibx_info("shm: rendezvous copy: pipelined below %zu bytes, CMA from %zu (%s)",
			 st->cma_threshold, st->cma_threshold, why);
	else
		ibx_info("shm: rendezvous copy: pipelined only (%s)", why);
}

/* Can we read the peer's memory with CMA? One 8-byte read of a word whose
 * value it published tells (ptrace access rules: Yama, credentials). */
static bool cma_probe(shm_peer_t *p, const shm_boot_info_t *info)
{
	uint64_t v = 0;
	struct iovec iov = {.iov_base = &v, .iov_len = sizeof(v)};
	ibx_status_t s = ibx_shm_cma_xfer(p->pid, &iov, 1, info->probe_addr, false);

	if (s == IBX_OK && v == info->probe_value)
		return true;
	ibx_info("shm: CMA to rank %d (pid %d) not usable (%s): large messages use the "
		 "pipelined copy, put/get are unsupported",
		 p->rank, (int)p->pid, s == IBX_OK ? "probe mismatch" : strerror(errno));
	return false;
}

static ibx_status_t connect_peer(shm_state_t *st, int i)
{
	ibx_ctx_t *ctx = st->ctx;
	shm_peer_t *p = &st->peers[i];
	shm_boot_info_t *info = NULL;
	ibx_shm_area_t mine, theirs;
	const ibx_shm_geom_t *pg;
	size_t len = 0;
	ibx_status_t ret;
	int idx;

	ret = ibx_boot_get_known(ctx->boot, p->rank, SHM_BOOT_KEY, (void **)&info, &len);
	if (ret != IBX_OK) {
		ibx_error("shm: no segment address from rank %d: %s", p->rank, ibx_status_str(ret));
		return ret;
	}
	if (len <= sizeof(*info) || info->version != IBX_SHM_VERSION ||
	    ((char *)info)[len - 1] != '\0') {
		ibx_error("shm: malformed segment address from rank %d (%zu bytes)", p->rank, len);
		ret = IBX_ERR_CORRUPT;
		goto out;
	}
	p->pid = info->pid;
	ret = ibx_shm_seg_attach(info->path, p->rank, info->pid, info->size, &p->seg);
	if (ret != IBX_OK)
		goto out;
	idx = ibx_shm_seg_area_index(&p->seg, ctx->rank);
	if (idx < 0) {
		ibx_error("shm: rank %d's segment has no ring for rank %d (ranks disagree on "
			  "which peers are node-local)",
			  p->rank, ctx->rank);
		ret = IBX_ERR_UNREACHABLE;
		goto out;
	}
	pg = &p->seg.hdr->geom;
	ibx_shm_seg_area(&p->seg, idx, &theirs); /* written by us, read by the peer */
	ibx_shm_seg_area(&st->seg, i, &mine);	 /* written by the peer, read by us */
	ibx_shm_tx_init(&p->tx, theirs.slots, pg->ring_slots, mine.ack);
	ibx_shm_rx_init(&p->rx, mine.slots, st->geom.ring_slots, theirs.ack);
	ibx_shm_pipe_init(&p->ptx, theirs.chunk_hdrs, theirs.chunks, pg->pipe_chunk,
			  pg->pipe_chunks, mine.ack);
	ibx_shm_pipe_init(&p->prx, mine.chunk_hdrs, mine.chunks, st->geom.pipe_chunk,
			  st->geom.pipe_chunks, theirs.ack);
	p->ptx.first = st->pipe_first < p->ptx.chunk ? st->pipe_first : p->ptx.chunk;
	ibx_shm_pipe_tune_init(&p->ptx, (uint32_t)ibx_shm_config()->SHM_PIPE_RING, PIPE_RING_SMALL);
	ibx_shm_cells_init(&p->txc, theirs.cells, pg->cell_size, pg->cells, mine.ack);
	ibx_shm_cells_init(&p->rxc, mine.cells, st->geom.cell_size, st->geom.cells, theirs.ack);
	/* at least two eager packets fit the peer's ring at once */
	p->eager_limit = (size_t)ibx_shm_config()->SHM_EAGER_LIMIT;
	if (p->eager_limit > ibx_shm_pkt_capacity(pg->ring_slots / 2))
		p->eager_limit = ibx_shm_pkt_capacity(pg->ring_slots / 2);
	p->cma_ok = cma_probe(p, info);
	p->peer->ops = &shm_ops;
	p->peer->path = p;
	ibx_debug("shm: rank %d connected (pid %d, ring %u slots, pipe %u x %llu, eager %zu, "
		  "cells %u x %u, CMA %s)",
		  p->rank, (int)p->pid, pg->ring_slots, pg->pipe_chunks,
		  (unsigned long long)pg->pipe_chunk, p->eager_limit, pg->cells, pg->cell_size,
		  p->cma_ok ? "yes" : "no");
out:
	free(info);
	return ret;
}

static ibx_status_t shm_connect(ibx_ctx_t *ctx, void *state)
{
	shm_state_t *st = state;

	if (!st)
		return IBX_OK;
	for (int i = 0; i < st->npeers; i++) {
		ibx_status_t ret = connect_peer(st, i);

		if (ret != IBX_OK)
			return ret; /* fini unmaps what was attached */
	}
	calib_adopt(st);
	st->nactive = st->npeers;
	st->next_check_ns = ibx_time_ns() + st->check_ns;
	return IBX_OK;
}

static ibx_status_t shm_ready(ibx_ctx_t *ctx, void *state)
{
	shm_state_t *st = state;

	/* every peer has mapped our segment (the barrier before ready): the
	 * name has done its job */
	return st ? ibx_shm_seg_unlink(&st->seg) : IBX_OK;
}

static void shm_fini(ibx_ctx_t *ctx, void *state)
{
	shm_state_t *st = state;

	if (!st)
		return;
	if (st->nrecv_pipe || st->nrecv_cma)
		ibx_info("shm: rendezvous received: %llu by the pipelined copy, %llu by CMA (%llu "
			 "refused by the kernel)",
			 (unsigned long long)st->nrecv_pipe, (unsigned long long)st->nrecv_cma,
			 (unsigned long long)st->nrecv_refused);
	for (int i = 0; i < st->npeers; i++) {
		ibx_peer_t *peer = st->peers[i].peer;

		if (peer->path == &st->peers[i]) {
			peer->ops = NULL;
			peer->path = NULL;
		}
	}
	state_free(st);
}

const ibx_path_module_t ibx_shm_path_module = {
    .name = "shm",
    .init = shm_init,
    .connect = shm_connect,
    .ready = shm_ready,
    .progress = ibx_shm_progress,
    .busy = ibx_shm_busy,
    .fini = shm_fini,
};
