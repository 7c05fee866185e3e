/*
 * cm.c — connecting a QP through librdmacm, for two processes that share no
 * PMIx job (ibtest server/client between two shells).
 *
 * The QP is ours (ibx_qp_create on the caller's device and PD), not
 * rdma_create_qp's: rdma_cm resolves the route and carries the address
 * records in the connection's private data, and ibx_qp_connect drives
 * INIT→RTR→RTS exactly as after a PMIx exchange ("user-managed QP": the
 * active side acknowledges the CONNECT_RESPONSE with rdma_establish).
 *
 *   client (active)                                server (passive)
 *   rdma_resolve_addr / _route                     rdma_listen
 *   ibx_qp_create (INIT)
 *   rdma_connect  ---- REQ {rec(client), data} -->  CONNECT_REQUEST
 *                                                   ibx_qp_create, ibx_qp_connect
 *                                                   (RTR, RTS)
 *   CONNECT_RESPONSE <-- REP {rec(server), data} -- rdma_accept
 *   ibx_qp_connect (RTR, RTS)
 *   rdma_establish ---------- RTU --------------->  ESTABLISHED
 *
 * private data: 'I' 'X' version len | 32-byte ibx_qp_addr wire record |
 * len bytes of the caller's data (REQ carries at most 56 bytes).
 */
#include "qp.h"
#include "qp_int.h"

#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdlib.h>

#define CM_HDR	    4
#define CM_PRIV_LEN (CM_HDR + IBX_QP_ADDR_WIRE_LEN + IBX_QP_CM_PRIV_MAX)
#define CM_VERSION  1

struct ibx_qp_cm_listener {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
};

static const char *cm_event_str(enum rdma_cm_event_type t)
{
	return rdma_event_str(t);
}

/* Waits for the next event on @ch; returns it unacknowledged. */
static ibx_status_t cm_wait(struct rdma_event_channel *ch, int timeout_ms,
			    struct rdma_cm_event **ev_p, const char *what)
{
	struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};
	int rc;

	do {
		rc = poll(&pfd, 1, timeout_ms < 0 ? -1 : timeout_ms);
	} while (rc < 0 && errno == EINTR);
	if (rc == 0) {
		ibx_error("rdma_cm: timed out after %d ms waiting for %s", timeout_ms, what);
		return IBX_ERR_TIMEOUT;
	}
	if (rc < 0 || rdma_get_cm_event(ch, ev_p)) {
		ibx_error("rdma_cm: rdma_get_cm_event (%s) failed: %s", what, strerror(errno));
		return IBX_ERR_IO;
	}
	return IBX_OK;
}

/* Waits for the event @want; any other event is an error. */
static ibx_status_t cm_expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want,
			      int timeout_ms, struct rdma_cm_event **ev_p)
{
	struct rdma_cm_event *ev;
	ibx_status_t st = cm_wait(ch, timeout_ms, &ev, cm_event_str(want));

	if (st != IBX_OK)
		return st;
	if (ev->event != want) {
		ibx_error("rdma_cm: expected %s, got %s (status %d%s%s)", cm_event_str(want),
			  cm_event_str(ev->event), ev->status, ev->status < 0 ? ": " : "",
			  ev->status < 0 ? strerror(-ev->status) : "");
		st = ev->event == RDMA_CM_EVENT_REJECTED ||
			     ev->event == RDMA_CM_EVENT_UNREACHABLE ||
			     ev->event == RDMA_CM_EVENT_CONNECT_ERROR
			 ? IBX_ERR_UNREACHABLE
			 : IBX_ERR_IO;
		rdma_ack_cm_event(ev);
		return st;
	}
	*ev_p = ev;
	return IBX_OK;
}

static ibx_status_t cm_sockaddr(const char *host, uint16_t port, struct sockaddr_storage *ss)
{
	struct addrinfo hints, *res = NULL;
	char service[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = host ? 0 : AI_PASSIVE;
	snprintf(service, sizeof(service), "%u", port);
	rc = getaddrinfo(host, service, &hints, &res);
	if (rc || !res) {
		ibx_error("rdma_cm: getaddrinfo(%s): %s", host ? host : "*", gai_strerror(rc));
		return IBX_ERR_INVALID_PARAM;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return IBX_OK;
}

/* Our private data: header, our record, the caller's bytes. */
static ibx_status_t cm_priv_build(const ibx_qp_t *qp, const void *priv, size_t len,
				  uint8_t out[CM_PRIV_LEN])
{
	ibx_qp_addr_t me;

	if (len > IBX_QP_CM_PRIV_MAX || (len && !priv)) {
		ibx_error("rdma_cm: %zu bytes of private data (at most %d)", len,
			  IBX_QP_CM_PRIV_MAX);
		return IBX_ERR_INVALID_PARAM;
	}
	memset(out, 0, CM_PRIV_LEN);
	out[0] = 'I';
	out[1] = 'X';
	out[2] = CM_VERSION;
	out[3] = (uint8_t)len;
	ibx_qp_local_addr(qp, &me);
	ibx_qp_addr_pack(&me, out + CM_HDR);
	if (len)
		memcpy(out + CM_HDR + IBX_QP_ADDR_WIRE_LEN, priv, len);
	return IBX_OK;
}

static ibx_status_t cm_priv_parse(const void *data, size_t dlen, ibx_qp_addr_t *addr,
				  void *peer_priv, size_t *peer_len_p)
{
	const uint8_t *p = data;

	if (!p || dlen < CM_HDR + IBX_QP_ADDR_WIRE_LEN || p[0] != 'I' || p[1] != 'X' ||
	    p[2] != CM_VERSION || p[3] > IBX_QP_CM_PRIV_MAX ||
	    dlen < (size_t)CM_HDR + IBX_QP_ADDR_WIRE_LEN + p[3]) {
		ibx_error("rdma_cm: the peer's private data (%zu bytes) is not an ibx record",
			  dlen);
		return IBX_ERR_CORRUPT;
	}
	if (ibx_qp_addr_unpack(p + CM_HDR, addr) != IBX_OK) {
		ibx_error("rdma_cm: malformed address record from the peer");
		return IBX_ERR_CORRUPT;
	}
	if (peer_priv && p[3])
		memcpy(peer_priv, p + CM_HDR + IBX_QP_ADDR_WIRE_LEN, p[3]);
	if (peer_len_p)
		*peer_len_p = p[3];
	return IBX_OK;
}

static void cm_conn_param(struct rdma_conn_param *cp, const ibx_qp_t *qp, const uint8_t *priv)
{
	memset(cp, 0, sizeof(*cp));
	cp->private_data = priv;
	cp->private_data_len = CM_PRIV_LEN;
	cp->responder_resources = (uint8_t)qp->max_rd_atomic;
	cp->initiator_depth = (uint8_t)qp->max_rd_atomic;
	cp->retry_count = (uint8_t)ibx_qp_config()->IB_RETRY;
	cp->rnr_retry_count = 7;
	cp->srq = qp->srq ? 1 : 0;
	cp->qp_num = qp->qpn;
}

ibx_status_t ibx_qp_cm_listen(const char *addr, uint16_t port, ibx_qp_cm_listener_t **l_p)
{
	struct sockaddr_storage ss;
	ibx_qp_cm_listener_t *l = calloc(1, sizeof(*l));
	ibx_status_t st;

	if (!l)
		return IBX_ERR_NO_MEMORY;
	st = cm_sockaddr(addr && *addr ? addr : NULL, port, &ss);
	if (st != IBX_OK)
		goto err_free;
	st = IBX_ERR_IO;
	l->ch = rdma_create_event_channel();
	if (!l->ch) {
		ibx_error("rdma_cm: rdma_create_event_channel failed: %s (rdma_ucm loaded?)",
			  strerror(errno));
		goto err_free;
	}
	if (rdma_create_id(l->ch, &l->id, NULL, RDMA_PS_TCP)) {
		ibx_error("rdma_cm: rdma_create_id failed: %s", strerror(errno));
		goto err_ch;
	}
	if (rdma_bind_addr(l->id, (struct sockaddr *)&ss)) {
		ibx_error("rdma_cm: rdma_bind_addr(%s:%u) failed: %s", addr ? addr : "*", port,
			  strerror(errno));
		goto err_id;
	}
	if (rdma_listen(l->id, 16)) {
		ibx_error("rdma_cm: rdma_listen(port %u) failed: %s", port, strerror(errno));
		goto err_id;
	}
	*l_p = l;
	return IBX_OK;

err_id:
	rdma_destroy_id(l->id);
err_ch:
	rdma_destroy_event_channel(l->ch);
err_free:
	free(l);
	return st;
}

void ibx_qp_cm_listener_close(ibx_qp_cm_listener_t *l)
{
	if (!l)
		return;
	rdma_destroy_id(l->id);
	rdma_destroy_event_channel(l->ch);
	free(l);
}

ibx_status_t ibx_qp_cm_accept(ibx_qp_cm_listener_t *l, ibx_qp_dev_t *dev,
			      const ibx_qp_init_attr_t *attr, const void *priv, size_t priv_len,
			      void *peer_priv, size_t *peer_len_p, int timeout_ms, ibx_qp_t **qp_p)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct rdma_event_channel *ch;
	struct rdma_conn_param cp;
	uint8_t req[CM_PRIV_LEN], mine[CM_PRIV_LEN], their_priv[IBX_QP_CM_PRIV_MAX];
	size_t req_len, their_len = 0;
	ibx_qp_addr_t remote;
	ibx_qp_t *qp = NULL;
	ibx_status_t st;

	st = cm_expect(l->ch, RDMA_CM_EVENT_CONNECT_REQUEST, timeout_ms, &ev);
	if (st != IBX_OK)
		return st;
	id = ev->id;
	req_len = ev->param.conn.private_data_len < sizeof(req) ? ev->param.conn.private_data_len
								: sizeof(req);
	if (ev->param.conn.private_data)
		memcpy(req, ev->param.conn.private_data, req_len);
	else
		req_len = 0;
	rdma_ack_cm_event(ev);

	/* this connection's events get a channel of their own */
	ch = rdma_create_event_channel();
	if (!ch) {
		ibx_error("rdma_cm: rdma_create_event_channel failed: %s", strerror(errno));
		st = IBX_ERR_IO;
		goto err_reject;
	}
	if (rdma_migrate_id(id, ch)) {
		ibx_error("rdma_cm: rdma_migrate_id failed: %s", strerror(errno));
		st = IBX_ERR_IO;
		goto err_ch;
	}
	st = cm_priv_parse(req, req_len, &remote, their_priv, &their_len);
	if (st != IBX_OK)
		goto err_ch;
	st = ibx_qp_create(dev, attr, &qp);
	if (st != IBX_OK)
		goto err_ch;
	st = ibx_qp_connect(qp, &remote, NULL);
	if (st != IBX_OK)
		goto err_qp;
	st = cm_priv_build(qp, priv, priv_len, mine);
	if (st != IBX_OK)
		goto err_qp;
	cm_conn_param(&cp, qp, mine);
	if (rdma_accept(id, &cp)) {
		ibx_error("rdma_cm: rdma_accept (QP 0x%x) failed: %s", qp->qpn, strerror(errno));
		st = IBX_ERR_IO;
		goto err_qp;
	}
	st = cm_expect(ch, RDMA_CM_EVENT_ESTABLISHED, timeout_ms, &ev);
	if (st != IBX_OK)
		goto err_qp;
	rdma_ack_cm_event(ev);
	qp->cm_id = id;
	qp->cm_ch = ch;
	if (peer_priv && their_len)
		memcpy(peer_priv, their_priv, their_len);
	if (peer_len_p)
		*peer_len_p = their_len;
	*qp_p = qp;
	return IBX_OK;

err_qp:
	ibx_qp_destroy(qp);
err_ch:
	rdma_reject(id, NULL, 0);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return st;
err_reject:
	rdma_reject(id, NULL, 0);
	rdma_destroy_id(id);
	return st;
}

/* Resolves @host:@port on a new id of a new channel (address and route). */
static ibx_status_t cm_resolve(const char *host, uint16_t port, int timeout_ms,
			       struct rdma_event_channel **ch_p, struct rdma_cm_id **id_p)
{
	struct sockaddr_storage ss;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;
	int rtmo = timeout_ms < 0 || timeout_ms > 30000 ? 30000 : timeout_ms;
	ibx_status_t st;

	st = cm_sockaddr(host, port, &ss);
	if (st != IBX_OK)
		return st;
	ch = rdma_create_event_channel();
	if (!ch) {
		ibx_error("rdma_cm: rdma_create_event_channel failed: %s (rdma_ucm loaded?)",
			  strerror(errno));
		return IBX_ERR_IO;
	}
	st = IBX_ERR_IO;
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
		ibx_error("rdma_cm: rdma_create_id failed: %s", strerror(errno));
		goto err_ch;
	}
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&ss, rtmo)) {
		ibx_error("rdma_cm: rdma_resolve_addr(%s) failed: %s", host, strerror(errno));
		goto err_id;
	}
	st = cm_expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, timeout_ms, &ev);
	if (st != IBX_OK)
		goto err_id;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, rtmo)) {
		ibx_error("rdma_cm: rdma_resolve_route(%s) failed: %s", host, strerror(errno));
		st = IBX_ERR_IO;
		goto err_id;
	}
	st = cm_expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, timeout_ms, &ev);
	if (st != IBX_OK)
		goto err_id;
	rdma_ack_cm_event(ev);
	*ch_p = ch;
	*id_p = id;
	return IBX_OK;

err_id:
	rdma_destroy_id(id);
err_ch:
	rdma_destroy_event_channel(ch);
	return st;
}

ibx_status_t ibx_qp_cm_route_dev(const char *host, uint16_t port, int timeout_ms, char *spec,
				 size_t len)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	ibx_status_t st = cm_resolve(host, port, timeout_ms, &ch, &id);

	if (st != IBX_OK)
		return st;
	if (!id->verbs) {
		ibx_error("rdma_cm: %s is not reached through a verbs device", host);
		st = IBX_ERR_NO_DEVICE;
	} else {
		snprintf(spec, len, "%s:%u", ibv_get_device_name(id->verbs->device), id->port_num);
	}
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return st;
}

ibx_status_t ibx_qp_cm_connect(const char *host, uint16_t port, ibx_qp_dev_t *dev,
			       const ibx_qp_init_attr_t *attr, const void *priv, size_t priv_len,
			       void *peer_priv, size_t *peer_len_p, int timeout_ms, ibx_qp_t **qp_p)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	uint8_t mine[CM_PRIV_LEN], rep[CM_PRIV_LEN], their_priv[IBX_QP_CM_PRIV_MAX];
	size_t rep_len, their_len = 0;
	ibx_qp_addr_t remote;
	ibx_qp_t *qp = NULL;
	ibx_status_t st;

	st = cm_resolve(host, port, timeout_ms, &ch, &id);
	if (st != IBX_OK)
		return st;
	if (id->verbs && strcmp(ibv_get_device_name(id->verbs->device), dev->name) != 0)
		ibx_warn("rdma_cm routes %s through %s, but the QP is on %s", host,
			 ibv_get_device_name(id->verbs->device), dev->name);
	st = ibx_qp_create(dev, attr, &qp);
	if (st != IBX_OK)
		goto err_id;
	st = cm_priv_build(qp, priv, priv_len, mine);
	if (st != IBX_OK)
		goto err_qp;
	cm_conn_param(&cp, qp, mine);
	if (rdma_connect(id, &cp)) {
		ibx_error("rdma_cm: rdma_connect(%s:%u, QP 0x%x) failed: %s", host, port, qp->qpn,
			  strerror(errno));
		st = IBX_ERR_IO;
		goto err_qp;
	}
	/* without a QP on the id, librdmacm hands the REP to us */
	st = cm_expect(ch, RDMA_CM_EVENT_CONNECT_RESPONSE, timeout_ms, &ev);
	if (st != IBX_OK)
		goto err_qp;
	rep_len = ev->param.conn.private_data_len < sizeof(rep) ? ev->param.conn.private_data_len
								: sizeof(rep);
	if (ev->param.conn.private_data)
		memcpy(rep, ev->param.conn.private_data, rep_len);
	else
		rep_len = 0;
	rdma_ack_cm_event(ev);
	st = cm_priv_parse(rep, rep_len, &remote, their_priv, &their_len);
	if (st != IBX_OK)
		goto err_qp;
	st = ibx_qp_connect(qp, &remote, NULL);
	if (st != IBX_OK)
		goto err_qp;
	if (rdma_establish(id)) {
		ibx_error("rdma_cm: rdma_establish (QP 0x%x) failed: %s", qp->qpn, strerror(errno));
		st = IBX_ERR_IO;
		goto err_qp;
	}
	qp->cm_id = id;
	qp->cm_ch = ch;
	if (peer_priv && their_len)
		memcpy(peer_priv, their_priv, their_len);
	if (peer_len_p)
		*peer_len_p = their_len;
	*qp_p = qp;
	return IBX_OK;

err_qp:
	ibx_qp_destroy(qp);
err_id:
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return st;
}

void ibx_qp_cm_release(ibx_qp_t *qp, bool disconnect)
{
	if (!qp->cm_id)
		return;
	if (disconnect) {
		/* the peer sees DISCONNECTED; our own event is never fetched */
		rdma_disconnect(qp->cm_id);
		return;
	}
	rdma_destroy_id(qp->cm_id);
	rdma_destroy_event_channel(qp->cm_ch);
	qp->cm_id = NULL;
	qp->cm_ch = NULL;
}
