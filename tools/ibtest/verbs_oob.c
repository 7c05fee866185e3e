/*
 * verbs_oob.c — the TCP side channel of ibtest's perftest-class commands
 * (perftest's "Data ex. method : Ethernet"): the server listens on -p and
 * accepts one client, the client connects (retrying while a server started
 * a moment ago is not listening yet); then both sides exchange fixed-size
 * messages, single-byte barriers, and notice a peer that died (its end of
 * the connection closes).
 */
#include "verbs_perf.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#define VP_CONNECT_RETRY_MS 5000

ibx_status_t vp_ctl_send(vp_job_t *j, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(j->ctl, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			vp_err(j, "side channel: send failed: %s", strerror(errno));
			return IBX_ERR_UNREACHABLE;
		}
		p += n;
		len -= (size_t)n;
	}
	return IBX_OK;
}

ibx_status_t vp_ctl_recv(vp_job_t *j, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(j->ctl, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			vp_err(j, "the peer closed the connection (it failed or was stopped)");
			return IBX_ERR_UNREACHABLE;
		}
		if (n < 0) {
			vp_err(j, "side channel: recv failed: %s", strerror(errno));
			return IBX_ERR_UNREACHABLE;
		}
		p += n;
		len -= (size_t)n;
	}
	return IBX_OK;
}

ibx_status_t vp_barrier(vp_job_t *j)
{
	char c = 'b';
	ibx_status_t st = vp_ctl_send(j, &c, 1);

	if (st == IBX_OK)
		st = vp_ctl_recv(j, &c, 1);
	if (st == IBX_OK && c != 'b') {
		vp_err(j, "side channel out of step (got 0x%02x at a barrier)", (unsigned char)c);
		st = IBX_ERR_CORRUPT;
	}
	return st;
}

bool vp_peer_gone(vp_job_t *j)
{
	struct pollfd pfd = {.fd = j->ctl, .events = POLLIN};
	char c;
	ssize_t n;

	if (poll(&pfd, 1, 0) <= 0)
		return false;
	if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))
		return true;
	/* readable: a barrier byte that arrived early, or the end of the stream */
	n = recv(j->ctl, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static void ctl_tune(int fd)
{
	int one = 1;

	/* barriers are single bytes: do not let Nagle hold them back */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

ibx_status_t vp_ctl_accept(vp_job_t *j)
{
	struct addrinfo hints, *res = NULL, *ai;
	char service[8];
	int lfd = -1, one = 1, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	snprintf(service, sizeof(service), "%u", j->o->tcp_port);
	rc = getaddrinfo(NULL, service, &hints, &res);
	if (rc) {
		vp_err(j, "getaddrinfo(port %s): %s", service, gai_strerror(rc));
		return IBX_ERR_IO;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		lfd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (lfd < 0)
			continue;
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(lfd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(lfd, 1) == 0)
			break;
		close(lfd);
		lfd = -1;
	}
	freeaddrinfo(res);
	if (lfd < 0) {
		vp_err(j, "cannot listen on TCP port %u: %s", j->o->tcp_port, strerror(errno));
		return IBX_ERR_IO;
	}
	fprintf(j->out, "\n************************************\n"
			"* Waiting for client to connect... *\n"
			"************************************\n");
	fflush(j->out);
	do {
		j->ctl = accept(lfd, NULL, NULL);
	} while (j->ctl < 0 && errno == EINTR);
	close(lfd);
	if (j->ctl < 0) {
		vp_err(j, "accept on TCP port %u failed: %s", j->o->tcp_port, strerror(errno));
		return IBX_ERR_IO;
	}
	ctl_tune(j->ctl);
	return IBX_OK;
}

ibx_status_t vp_ctl_connect(vp_job_t *j)
{
	struct addrinfo hints, *res = NULL, *ai;
	char service[8];
	uint64_t deadline = ibx_time_ns() + VP_CONNECT_RETRY_MS * 1000000ull;
	int rc, err = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(service, sizeof(service), "%u", j->o->tcp_port);
	rc = getaddrinfo(j->o->host, service, &hints, &res);
	if (rc) {
		vp_err(j, "cannot resolve %s: %s", j->o->host, gai_strerror(rc));
		return IBX_ERR_INVALID_PARAM;
	}
	/* a server started a moment ago may not listen yet: retry a little */
	for (;;) {
		for (ai = res; ai; ai = ai->ai_next) {
			j->ctl = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
			if (j->ctl < 0) {
				err = errno;
				continue;
			}
			if (connect(j->ctl, ai->ai_addr, ai->ai_addrlen) == 0)
				break;
			err = errno;
			close(j->ctl);
			j->ctl = -1;
		}
		if (j->ctl >= 0 || err != ECONNREFUSED || ibx_time_ns() > deadline)
			break;
		usleep(100000);
	}
	freeaddrinfo(res);
	if (j->ctl < 0) {
		vp_err(j, "cannot connect to %s port %u: %s", j->o->host, j->o->tcp_port,
		       strerror(err));
		return IBX_ERR_UNREACHABLE;
	}
	ctl_tune(j->ctl);
	return IBX_OK;
}
