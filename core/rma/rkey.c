/*
 * rkey.c — unpacking a peer's remote key and choosing, once, how this
 * process will reach that memory (the route table is in rma_int.h).
 *
 * A key comes from outside (the caller ships it through any channel), so
 * every field is checked before it is used: magic, version, checksum, the
 * owner's rank against the one the caller names, flags and lengths, and a
 * range that does not wrap. A key that fails a check is IBX_ERR_CORRUPT and
 * leaves nothing behind.
 */
#include "rma_int.h"
#include "qp/qp.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint32_t get32(const unsigned char *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}
static uint64_t get64(const unsigned char *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

typedef struct key_fields {
	unsigned flags;
	int rank, pid, seg_fd, ctl_fd;
	uint64_t base, len, seg_len, seg_off, seg_ino;
	uint32_t verbs_rkey;
} key_fields_t;

static ibx_status_t key_parse(const unsigned char *b, size_t len, int owner, key_fields_t *k)
{
	if (len < RMA_KEY_LEN || get32(b, 0) != RMA_KEY_MAGIC)
		return IBX_ERR_CORRUPT;
	if (b[4] != RMA_KEY_VERSION || b[6] || b[7])
		return IBX_ERR_CORRUPT;
	if (get32(b, RMA_KEY_SUMMED) != ibx_rma_key_checksum(b, RMA_KEY_SUMMED))
		return IBX_ERR_CORRUPT;
	k->flags = b[5];
	k->rank = (int)get32(b, 8);
	k->pid = (int)get32(b, 12);
	k->base = get64(b, 16);
	k->len = get64(b, 24);
	k->verbs_rkey = get32(b, 32);
	k->seg_fd = (int)get32(b, 36);
	k->seg_len = get64(b, 40);
	k->ctl_fd = (int)get32(b, 48);
	k->seg_off = get64(b, 52);
	k->seg_ino = get64(b, 60);
	if (k->flags & ~(unsigned)(RMA_KEY_VERBS | RMA_KEY_SEG | RMA_KEY_CTL))
		return IBX_ERR_CORRUPT;
	if (k->rank != owner || k->pid <= 0 || k->base + k->len < k->base)
		return IBX_ERR_CORRUPT;
	if ((k->flags & RMA_KEY_SEG) && (k->seg_fd < 0 || !k->seg_len || k->seg_off > k->seg_len ||
					 k->seg_len - k->seg_off < k->len))
		return IBX_ERR_CORRUPT;
	if ((k->flags & RMA_KEY_CTL) && k->ctl_fd < 0)
		return IBX_ERR_CORRUPT;
	return IBX_OK;
}

static bool peer_on_shm(const ibx_ctx_t *ctx, int owner)
{
	const ibx_peer_t *p = &ctx->peers[owner];

	return p->ops && strcmp(p->ops->name, "shm") == 0;
}

/* Some peer reaches us through the shm path (and so updates our private
 * memory under our RMW lock). */
static bool has_shm_peer(const ibx_ctx_t *ctx)
{
	for (int r = 0; r < ctx->size; r++)
		if (r != ctx->rank && peer_on_shm(ctx, r))
			return true;
	return false;
}

/* A node-local owner: map its control page (for RMW under its lock) and,
 * for allocated memory, its segment (direct load / store). */
static ibx_status_t route_node_local(ibx_rkey_t *rk, const key_fields_t *k)
{
	ibx_status_t s;

	if (k->flags & RMA_KEY_CTL) {
		s = ibx_rma_map_remote(k->pid, k->ctl_fd, sizeof(rma_ctl_t), 0, &rk->ctl_map);
		if (s == IBX_ERR_UNREACHABLE)
			return s;
		if (s == IBX_OK) {
			rk->ctl = rk->ctl_map.addr;
			if (rk->ctl->magic != RMA_CTL_MAGIC) {
				ibx_rma_unmap(&rk->ctl_map);
				rk->ctl = NULL;
				return IBX_ERR_CORRUPT;
			}
		}
	}
	rk->route = RMA_ROUTE_CMA;
	if (k->flags & RMA_KEY_SEG) {
		s = ibx_rma_map_remote(k->pid, k->seg_fd, k->seg_len, k->seg_ino, &rk->seg);
		if (s == IBX_ERR_UNREACHABLE || s == IBX_ERR_CORRUPT)
			return s; /* gone, or a stale key (the segment was replaced) */
		if (s == IBX_OK) {
			rk->seg_base = (char *)rk->seg.addr + k->seg_off;
			rk->direct = rk->seg_base;
			rk->route = RMA_ROUTE_DIRECT;
		}
	}
	return IBX_OK;
}

/*
 * A node-local owner whose memory is registered for verbs: its peers on
 * other nodes update it with the NIC's atomics, which are atomic only among
 * themselves. Ours must be the NIC's too (as MPI implementations choose the
 * network's atomics for every peer, node-local ones included, once one
 * peer needs them): they go through the QP the verbs path keeps to the
 * owner for that (ctx->nic_local). Without one (a single-node job: no
 * verbs peer anywhere) CPU atomics stay.
 */
static void route_node_local_nic(ibx_ctx_t *ctx, ibx_rkey_t *rk, const key_fields_t *k)
{
	rk->amo_peer = ibx_qp_path_nic_peer(ctx, rk->owner);
	rk->amo_rkey = k->verbs_rkey;
	if (!rk->amo_peer && ctx->nic_local)
		ibx_warn("rma: no verbs connection to node-local rank %d: atomics on its memory "
			 "are not atomic with those of its peers on other nodes",
			 rk->owner);
}

static ibx_status_t key_route(ibx_ctx_t *ctx, rma_state_t *st, ibx_rkey_t *rk,
			      const key_fields_t *k)
{
	if (rk->owner == ctx->rank) {
		if (k->pid != (int)getpid())
			return IBX_ERR_CORRUPT;
		rk->route = RMA_ROUTE_DIRECT;
		rk->direct = (char *)(uintptr_t)k->base;
		rk->ctl = st->ctl;
		/* verbs peers update this memory with the NIC's atomics, which
		 * are atomic only among themselves: ours must be the NIC's too */
		if (k->flags & RMA_KEY_VERBS) {
			rk->amo_peer = ibx_qp_path_self(ctx);
			rk->amo_rkey = k->verbs_rkey;
		}
		rk->rmw_self = !(k->flags & RMA_KEY_SEG) && has_shm_peer(ctx);
		return IBX_OK;
	}
	if (ctx->peers[rk->owner].error != IBX_OK)
		return ctx->peers[rk->owner].error;
	if (peer_on_shm(ctx, rk->owner)) {
		ibx_status_t s = route_node_local(rk, k);

		if (s == IBX_OK && (k->flags & RMA_KEY_VERBS))
			route_node_local_nic(ctx, rk, k);
		return s;
	}
	if (!(k->flags & RMA_KEY_VERBS)) {
		ibx_error("rma: rank %d reaches rank %d through verbs, but its key has no verbs "
			  "registration",
			  ctx->rank, rk->owner);
		return IBX_ERR_UNSUPPORTED;
	}
	rk->route = RMA_ROUTE_VERBS;
	/* a node-local owner reached through the NIC (IBX_PATHS=verbs): its
	 * allocated memory is still mapped here for ibx_rkey_map; operations
	 * keep the NIC route */
	if (ctx->peers[rk->owner].local && (k->flags & RMA_KEY_SEG) &&
	    ibx_rma_map_remote(k->pid, k->seg_fd, k->seg_len, k->seg_ino, &rk->seg) == IBX_OK)
		rk->seg_base = (char *)rk->seg.addr + k->seg_off;
	return IBX_OK;
}

ibx_status_t ibx_rkey_unpack(ibx_ctx_t *ctx, int owner, const void *buf, size_t len,
			     ibx_rkey_t **rkey_p)
{
	rma_state_t *st;
	key_fields_t k;
	ibx_rkey_t *rk;
	ibx_status_t s;

	if (!ctx || !buf || !rkey_p || owner < 0 || owner >= ctx->size)
		return IBX_ERR_INVALID_PARAM;
	s = key_parse(buf, len, owner, &k);
	if (s != IBX_OK) {
		ibx_info("rma: refused a remote key said to come from rank %d: malformed", owner);
		return s;
	}
	s = ibx_rma_state_get(ctx, &st);
	if (s != IBX_OK)
		return s;
	rk = calloc(1, sizeof(*rk));
	if (!rk)
		return IBX_ERR_NO_MEMORY;
	rk->owner = owner;
	rk->owner_pid = k.pid;
	rk->base = k.base;
	rk->len = k.len;
	rk->flags = k.flags;
	rk->verbs_rkey = k.verbs_rkey;
	s = key_route(ctx, st, rk, &k);
	if (s != IBX_OK) {
		ibx_rma_rkey_release(rk);
		return s;
	}
	ibx_list_push_tail(&st->rkeys, &rk->link);
	*rkey_p = rk;
	return IBX_OK;
}

void ibx_rma_rkey_release(ibx_rkey_t *rk)
{
	ibx_rma_unmap(&rk->seg);
	ibx_rma_unmap(&rk->ctl_map);
	free(rk);
}

void ibx_rkey_destroy(ibx_ctx_t *ctx, ibx_rkey_t *rkey)
{
	if (!ctx || !rkey || !ctx->rma)
		return;
	ibx_list_remove(&((rma_state_t *)ctx->rma)->rkeys, &rkey->link);
	ibx_rma_rkey_release(rkey);
}
