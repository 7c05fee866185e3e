/*
 * iof.c — forwarding of the ranks' stdout and stderr. Each rank writes into
 * two pipes; the supervision loop polls their read ends and hands what
 * arrives to run_stream_read():
 *
 *   rank r stdout ──pipe──> run_stream_read ──> launcher stdout
 *   rank r stderr ──pipe──> run_stream_read ──> launcher stderr
 *
 * Without --tag-output the bytes pass through unchanged, as soon as they
 * arrive. With it, every line becomes "[r] line" and is written with one
 * write(), so lines of different ranks never mix; an unfinished line waits
 * for its end (or for end of file, or for RUN_LINE_MAX bytes).
 *
 * A reader that went away (EPIPE) does not stop the job: its output is
 * dropped from then on.
 */
#include "run_int.h"
#include "ibx_int.h"

#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#define RUN_LINE_MAX (64 * 1024)

static bool out_broken[3];

static void out_write(int fd, const char *buf, size_t len)
{
	while (len && !out_broken[fd]) {
		ssize_t n = write(fd, buf, len);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			/* our own stdout is non-blocking: wait until it drains */
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			(void)poll(&p, 1, 1000);
		} else {
			out_broken[fd] = true;
		}
	}
}

void run_stream_init(run_stream_t *s, int fd, int out_fd, int rank, bool tag)
{
	s->fd = fd;
	s->out_fd = out_fd;
	s->rank = rank;
	s->tag = tag;
	s->line = NULL;
	s->len = s->cap = 0;
}

/* "[r] " + @len bytes + "\n", in one write. */
static void tag_emit(run_stream_t *s, const char *text, size_t len)
{
	char stackbuf[4096];
	char prefix[24];
	int plen = snprintf(prefix, sizeof(prefix), "[%d] ", s->rank);
	size_t total = (size_t)plen + len + 1;
	char *buf = total <= sizeof(stackbuf) ? stackbuf : malloc(total);

	if (!buf) {
		/* no memory for one buffer: still deliver, in pieces */
		out_write(s->out_fd, prefix, (size_t)plen);
		out_write(s->out_fd, text, len);
		out_write(s->out_fd, "\n", 1);
		return;
	}
	memcpy(buf, prefix, (size_t)plen);
	memcpy(buf + plen, text, len);
	buf[total - 1] = '\n';
	out_write(s->out_fd, buf, total);
	if (buf != stackbuf)
		free(buf);
}

static void tag_keep(run_stream_t *s, const char *text, size_t len)
{
	if (s->len + len > s->cap) {
		size_t cap = s->cap ? s->cap : 256;
		char *nl;

		while (cap < s->len + len)
			cap *= 2;
		nl = realloc(s->line, cap);
		if (!nl) {
			/* cannot keep it: emit what we have as a line of its own */
			tag_emit(s, s->line ? s->line : "", s->len);
			s->len = 0;
			tag_emit(s, text, len);
			return;
		}
		s->line = nl;
		s->cap = cap;
	}
	memcpy(s->line + s->len, text, len);
	s->len += len;
}

static void tag_feed(run_stream_t *s, const char *buf, size_t n)
{
	while (n) {
		const char *nl = memchr(buf, '\n', n);
		size_t chunk = nl ? (size_t)(nl - buf) : n;

		if (nl) {
			if (s->len) {
				tag_keep(s, buf, chunk);
				tag_emit(s, s->line, s->len);
				s->len = 0;
			} else {
				tag_emit(s, buf, chunk);
			}
			buf += chunk + 1;
			n -= chunk + 1;
			continue;
		}
		tag_keep(s, buf, chunk);
		if (s->len >= RUN_LINE_MAX) {
			tag_emit(s, s->line, s->len);
			s->len = 0;
		}
		n = 0;
	}
}

static void stream_close(run_stream_t *s)
{
	if (s->tag && s->len) {
		tag_emit(s, s->line, s->len);
		s->len = 0;
	}
	free(s->line);
	s->line = NULL;
	s->cap = 0;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

ssize_t run_stream_read(run_stream_t *s)
{
	char buf[64 * 1024];
	ssize_t n;

	if (s->fd < 0)
		return 0;
	n = read(s->fd, buf, sizeof(buf));
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return -1;
		run_msg("reading the output of rank %d: %s", s->rank, strerror(errno));
		stream_close(s);
		return 0;
	}
	if (n == 0) {
		stream_close(s);
		return 0;
	}
	if (s->tag)
		tag_feed(s, buf, (size_t)n);
	else
		out_write(s->out_fd, buf, (size_t)n);
	return n;
}

void run_stream_drain_close(run_stream_t *s)
{
	while (s->fd >= 0 && run_stream_read(s) > 0)
		;
	stream_close(s);
}
