/*
 * shm_ring.c — messages through the slot ring of each ordered pair (the
 * ring itself, inline, is in shm_int.h): eager sends and their receipt,
 * control packets, and the sends that wait for ring room. This is the
 * latency path: a send is a few compares, the slot stores and one release
 * (slot_publish); a receive is one acquire (slot_consume) and a call into
 * the tag layer. Rendezvous packets ride the same ring; shm_rndv.c reads
 * them.
 *
 * Eager (len ≤ IBX_SHM_EAGER_LIMIT, not SYNC), i → j:
 *
 *   i: tag_send                    ring i→j (in j's segment)        j: progress
 *      room? (private limit)    [EAGER tag len data | cont...]
 *      write slots ───────────► slot_publish ────► slot_consume ──► ibx_tag_arrive_eager
 *      return IBX_OK                                                (≤ 40 B straight
 *                                                                    from the slot)
 *      (ring full: re-read      ack.ring_consumed ◄──────────────── once per poll
 *       i's own ack line)       (in i's segment, [Gropp97] §9.3)
 *
 * Eager messages above 512 bytes (IBX_SHM_CELL_MIN) put their payload into
 * an eager cell in one memcpy and a one-slot CELL header into the ring
 * (shm_int.h, "eager cells"); with every cell full they take slots like
 * the others. Measured against slots (2 cores, 2026-11-25): 1 / 2 / 4 /
 * 8 KiB latency 0.14 / 0.89 / 1.37 / 2.20 -> 0.12 / 0.73 / 0.87 / 1.03 us
 * (the last three with the cores far apart), osu_bw 8 KiB 5.8 -> 15.6 GB/s.
 *
 * Ordering: everything i sends to j goes through the one ring i→j in send
 * order — sends that find the ring full wait in a per-peer queue that is
 * drained before any newer send — and j hands packets to the tag layer in
 * ring order: MPI's non-overtaking rule. Control packets (CTS, FIN) are
 * not matched and may pass queued sends.
 */
#include "shm_path.h"

#include <stdlib.h>

#define SHM_RX_BUDGET 64 /* packets taken from one ring per pass */

/* ---- sending --------------------------------------------------------------- */

/* An eager message of more than IBX_SHM_CELL_MIN bytes: into a cell and a
 * one-slot header, or, every cell being full, into slots. False when the
 * ring has no room. */
static bool eager_long(shm_peer_t *p, uint64_t tag, const void *buf, size_t len)
{
	uint8_t *cell;

	if (len <= p->txc.size && ibx_shm_tx_room(&p->tx, 1) &&
	    (cell = ibx_shm_cell_claim(&p->txc))) {
		memcpy(cell, buf, len);
		ibx_shm_tx_write_hdr(&p->tx, IBX_SHM_PKT_CELL, tag, len);
		ibx_shm_cell_filled(&p->txc);
		return true;
	}
	return ibx_shm_tx_send(&p->tx, IBX_SHM_PKT_EAGER, 0, tag, buf, len);
}

/* A scattered typed eager message: packed straight into a cell ([Wu03]
 * §7.1: the eager buffer is the pack buffer), or, every cell full (or no
 * cells), packed into a bounce that goes into slots. */
static bool eager_typed(shm_peer_t *p, ibx_request_t *req)
{
	size_t len = req->buflen;
	uint8_t *cell;
	void *bounce;
	bool ok;

	if (len <= p->txc.size && ibx_shm_tx_room(&p->tx, 1) &&
	    (cell = ibx_shm_cell_claim(&p->txc))) {
		ibx_req_copy_out(req, 0, cell, len);
		ibx_shm_tx_write_hdr(&p->tx, IBX_SHM_PKT_CELL, req->tag, len);
		ibx_shm_cell_filled(&p->txc);
		return true;
	}
	if (!ibx_shm_tx_room(&p->tx, ibx_shm_pkt_slots(len)))
		return false;
	bounce = malloc(len ? len : 1);
	if (!bounce)
		return false; /* retried from the pending queue */
	ibx_req_copy_out(req, 0, bounce, len);
	ok = ibx_shm_tx_send(&p->tx, IBX_SHM_PKT_EAGER, 0, req->tag, bounce, len);
	free(bounce);
	return ok;
}

/* Puts an eager packet or an RTS into the ring; false when it is full. */
static bool send_start(shm_peer_t *p, ibx_request_t *req)
{
	if (RQ_RNDV(req))
		return ibx_shm_rndv_send(p, req);
	if (ibx_req_scattered(req))
		return eager_typed(p, req);
	if (req->buflen > IBX_SHM_CELL_MIN)
		return eager_long(p, req->tag, req->buf, req->buflen);
	return ibx_shm_tx_send(&p->tx, IBX_SHM_PKT_EAGER, 0, req->tag, req->buf, req->buflen);
}

static ibx_status_t send_slow(shm_peer_t *p, ibx_request_t *req)
{
	if (p->failed)
		return ibx_shm_lost_status(p);
	RQ_RNDV(req) = (req->flags & IBX_SEND_SYNC) || req->buflen > p->eager_limit;
	RQ_ID(req) = RQ_RNDV(req) ? ++p->next_id : 0;
	ibx_shm_promote(p);
	if (ibx_list_empty(&p->pending) && send_start(p, req))
		return RQ_RNDV(req) ? IBX_INPROGRESS : IBX_OK;
	/* ring full: wait, in order, behind earlier sends */
	ibx_rq_push(&p->pending, req);
	ibx_shm_update_work(p);
	return IBX_INPROGRESS;
}

ibx_status_t ibx_shm_tag_send(ibx_peer_t *peer, ibx_request_t *req)
{
	shm_peer_t *p = peer->path;

	/* the fast path: a few compares, the slot stores, one release */
	if (ibx_likely(!(req->flags & IBX_SEND_SYNC) && req->buflen <= p->eager_limit &&
		       ibx_list_empty(&p->pending) && !ibx_req_scattered(req))) {
		if (ibx_likely(req->buflen <= IBX_SHM_CELL_MIN)
			? ibx_likely(ibx_shm_tx_send(&p->tx, IBX_SHM_PKT_EAGER, 0, req->tag,
						     req->buf, req->buflen))
			: eager_long(p, req->tag, req->buf, req->buflen)) {
			ibx_shm_promote(p);
			return IBX_OK;
		}
	}
	return send_slow(p, req);
}

/* ---- control packets ------------------------------------------------------- */

static bool ctrl_try(shm_peer_t *p, const shm_ctrl_t *c)
{
	return ibx_shm_tx_send(&p->tx, c->type, c->id, 0, c->val, c->len);
}

void ibx_shm_send_ctrl(shm_peer_t *p, uint8_t type, uint32_t id, const void *data, size_t len)
{
	shm_ctrl_t *c, tmp = {.type = type, .len = (uint8_t)len, .id = id};

	if (p->failed)
		return;
	memcpy(tmp.val, data, len);
	if (!p->ctrl_count && ctrl_try(p, &tmp))
		return;
	if (p->ctrl_count == p->ctrl_cap) {
		uint32_t cap = p->ctrl_cap ? 2 * p->ctrl_cap : 16;
		shm_ctrl_t *q = malloc(cap * sizeof(*q));

		if (!q) {
			ibx_error("shm: out of memory queueing a control packet for rank %d",
				  p->rank);
			ibx_shm_peer_fail(p->st, p, IBX_ERR_NO_MEMORY);
			return;
		}
		for (uint32_t i = 0; i < p->ctrl_count; i++)
			q[i] = p->ctrl[(p->ctrl_head + i) % p->ctrl_cap];
		free(p->ctrl);
		p->ctrl = q;
		p->ctrl_cap = cap;
		p->ctrl_head = 0;
	}
	c = &p->ctrl[(p->ctrl_head + p->ctrl_count) % p->ctrl_cap];
	*c = tmp;
	p->ctrl_count++;
	ibx_shm_update_work(p);
}

void ibx_shm_send_ctrl64(shm_peer_t *p, uint8_t type, uint32_t id, uint64_t val)
{
	ibx_shm_send_ctrl(p, type, id, &val, sizeof(val));
}

/* ---- waiting for ring room ------------------------------------------------- */

static int ctrl_drain(shm_peer_t *p)
{
	int n = 0;

	while (p->ctrl_count) {
		shm_ctrl_t *c = &p->ctrl[p->ctrl_head];

		if (!ctrl_try(p, c))
			break;
		p->ctrl_head = (p->ctrl_head + 1) % p->ctrl_cap;
		p->ctrl_count--;
		n++;
	}
	return n;
}

static int pending_drain(shm_peer_t *p)
{
	ibx_request_t *req;
	int n = 0;

	while ((req = ibx_rq_first(&p->pending))) {
		ibx_rq_remove(&p->pending, req);
		if (!send_start(p, req)) {
			/* back to the head: order is kept */
			ibx_list_push_head(&p->pending, &req->link);
			break;
		}
		n++;
		if (!RQ_RNDV(req))
			ibx_req_complete(req, IBX_OK);
	}
	return n;
}

int ibx_shm_ring_drain(shm_peer_t *p)
{
	int n = 0;

	if (p->ctrl_count)
		n += ctrl_drain(p);
	if (!ibx_list_empty(&p->pending))
		n += pending_drain(p);
	return n;
}

/* ---- receiving ------------------------------------------------------------- */

/* Everything but a one-slot eager packet. */
static ibx_status_t rx_packet(shm_state_t *st, shm_peer_t *p, ibx_shm_slot_t *h)
{
	if (!ibx_shm_rx_valid(&p->rx, h))
		return IBX_ERR_CORRUPT;
	if (h->h.type == IBX_SHM_PKT_CELL) {
		/* the payload of this header is in the next cell */
		if (h->h.nslots != 1 || !p->rxc.n || h->h.len > p->rxc.size)
			return IBX_ERR_CORRUPT;
		ibx_tag_arrive_eager(st->ctx, p->rank, h->h.tag, ibx_shm_cell_peek(&p->rxc),
				     h->h.len);
		ibx_shm_cell_next(&p->rxc);
		return IBX_OK;
	}
	if (h->h.type != IBX_SHM_PKT_EAGER)
		return ibx_shm_rndv_packet(st, p, h);
	ibx_shm_rx_gather(&p->rx, h, st->scratch);
	ibx_tag_arrive_eager(st->ctx, p->rank, h->h.tag, st->scratch, h->h.len);
	return IBX_OK;
}

int ibx_shm_poll_peer(shm_state_t *st, shm_peer_t *p)
{
	ibx_shm_slot_t *h;
	int n = 0;

	while (n < SHM_RX_BUDGET && (h = ibx_shm_rx_peek(&p->rx))) {
		if (ibx_likely(h->h.type == IBX_SHM_PKT_EAGER && h->h.nslots == 1 &&
			       h->h.len <= IBX_SHM_HEAD_PAYLOAD)) {
			/* the payload is read in place: the slot is handed back
			 * only after the tag layer has copied it */
			ibx_tag_arrive_eager(st->ctx, p->rank, h->h.tag, h->h.data, h->h.len);
		} else if (ibx_unlikely(rx_packet(st, p, h) != IBX_OK)) {
			ibx_error("shm: malformed packet (type %u, %u slots, len %u) from rank %d",
				  h->h.type, h->h.nslots, h->h.len, p->rank);
			ibx_shm_peer_fail(st, p, IBX_ERR_CORRUPT);
			return n;
		}
		ibx_shm_rx_advance(&p->rx, h);
		n++;
	}
	if (n) {
		ibx_shm_rx_release(&p->rx);
		ibx_shm_cells_release(&p->rxc);
		p->idle = 0;
	}
	return n;
}
