/*
 * pid.c — is a process of this node still alive? (the liveness checks of
 * the shm path, of node-local verbs peers, and of lock holders in core/rma)
 */
#include "ibx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool ibx_pid_alive(pid_t pid)
{
	char path[64], buf[512];
	const char *state;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return false;
	/* ESRCH is the only answer of kill() that proves the process gone
	 * (EPERM: it exists under another uid) */
	if (kill(pid, 0) && errno == ESRCH)
		return false;
	/* A zombie is dead too: its parent may never reap it (a launcher that
	 * was killed leaves its ranks to an init that, in some containers,
	 * does not reap). */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	state = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold ')' */
	return !(state && state[1] == ' ' && (state[2] == 'Z' || state[2] == 'X'));
}
