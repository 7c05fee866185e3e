/* log.c — leveled logging to stderr: "ibx[rank] LEVEL file:line: message". */
#include "ibx_int.h"

#include <stdarg.h>
#include <unistd.h>

int ibx_log_level_cur = IBX_LOG_WARN;
static int log_rank = -1;

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

void ibx_log_set_rank(int rank)
{
	log_rank = rank;
}

void ibx_log_impl(ibx_log_level_t lvl, const char *file, int line, const char *fmt, ...)
{
	char buf[1024];
	int n;
	va_list ap;
	const char *base = strrchr(file, '/');

	n = snprintf(buf, sizeof(buf), "ibx[%d:%d] %s %s:%d: ", log_rank, (int)getpid(),
		     level_names[lvl], base ? base + 1 : file, line);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(buf))
		n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf) - 1)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	/* one write() so that lines of different ranks do not interleave */
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}
