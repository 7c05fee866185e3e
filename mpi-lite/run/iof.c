/*
 * iof.c — forwarding of the ranks' stdout and stderr. Each rank writes into
 * two pipes; the supervision loop polls their read ends and hands what
 * arrives to run_stream_read():
 *
 *   rank r stdout ──pipe──> run_stream_read ──> launcher stdout
 *   rank r stderr ──pipe──> run_stream_read ──> launcher stderr
 *
 * Output is forwarded in whole lines, so that the lines of different ranks
 * never cut into each other: what ends in a newline goes out at once, an
 * unfinished line waits for its end, for end of file, for RUN_LINE_MAX
 * bytes or for RUN_PARTIAL_S seconds (a progress bar, a prompt), whichever
 * comes first. Without --tag-output the bytes themselves are unchanged;
 * with it every line becomes "[r] line" (an unfinished line that had to go
 * out gets a newline).
 *
 * A reader that went away (EPIPE) does not stop the job: its output is
 * dropped from then on.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memrchr */
#endif
#include "run_int.h"
#include "ibx_int.h"

#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#define RUN_LINE_MAX  (64 * 1024)
#define RUN_PARTIAL_S 0.1

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
			struct pollfd p = {.fd = fd, .events = POLLOUT};
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
	s->partial_since = 0;
}

/* "[r] " + text + "\n" in one write. */
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

/* Lets the unfinished line out as it is. */
static void partial_flush(run_stream_t *s)
{
	if (s->len) {
		if (s->tag)
			tag_emit(s, s->line, s->len);
		else
			out_write(s->out_fd, s->line, s->len);
	}
	s->len = 0;
	s->partial_since = 0;
}

/* Keeps the start of an unfinished line (flushing it when it grows too
 * long: then s->len is 0 on return). */
static void partial_keep(run_stream_t *s, const char *text, size_t len)
{
	if (s->len + len > s->cap) {
		size_t cap = s->cap ? s->cap : 256;
		char *nl;

		while (cap < s->len + len)
			cap *= 2;
		nl = realloc(s->line, cap);
		if (!nl) {
			/* cannot keep it: let it out now */
			partial_flush(s);
			if (s->tag)
				tag_emit(s, text, len);
			else
				out_write(s->out_fd, text, len);
			return;
		}
		s->line = nl;
		s->cap = cap;
	}
	if (s->len == 0)
		s->partial_since = run_now();
	memcpy(s->line + s->len, text, len);
	s->len += len;
	if (s->len >= RUN_LINE_MAX)
		partial_flush(s);
}

static void feed_plain(run_stream_t *s, const char *buf, size_t n)
{
	const char *last = memrchr(buf, '\n', n);
	size_t head;

	if (!last) {
		partial_keep(s, buf, n);
		return;
	}
	/* the kept start of a line, then every complete line in one write */
	partial_flush(s);
	head = (size_t)(last - buf) + 1;
	out_write(s->out_fd, buf, head);
	if (head < n)
		partial_keep(s, buf + head, n - head);
}

static void feed_tagged(run_stream_t *s, const char *buf, size_t n)
{
	while (n) {
		const char *nl = memchr(buf, '\n', n);
		size_t len;

		if (!nl) {
			partial_keep(s, buf, n);
			return;
		}
		len = (size_t)(nl - buf);
		if (s->len) {
			/* the end of a line begun in an earlier read */
			partial_keep(s, buf, len);
			if (s->len)
				tag_emit(s, s->line, s->len);
			s->len = 0;
			s->partial_since = 0;
		} else {
			tag_emit(s, buf, len);
		}
		buf += len + 1;
		n -= len + 1;
	}
}

double run_stream_partial_deadline(const run_stream_t *s)
{
	return s->fd >= 0 && s->len ? s->partial_since + RUN_PARTIAL_S : INFINITY;
}

void run_stream_flush_stale(run_stream_t *s, double now)
{
	if (s->len && now >= s->partial_since + RUN_PARTIAL_S)
		partial_flush(s);
}

static void stream_close(run_stream_t *s)
{
	partial_flush(s);
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
		feed_tagged(s, buf, (size_t)n);
	else
		feed_plain(s, buf, (size_t)n);
	return n;
}

void run_stream_drain_close(run_stream_t *s)
{
	while (s->fd >= 0 && run_stream_read(s) > 0)
		;
	stream_close(s);
}
