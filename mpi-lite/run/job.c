/*
 * job.c — starting the ranks and watching them until the job is over.
 *
 * Start, per rank (the PMIx server must know a client before it connects):
 *
 *   launcher                                  rank r (child)
 *     register_client(r) ... wait callback
 *     setup_fork(r, env)  (PMIX_* variables)
 *     its node's variables (nodes.c)
 *     pipes: stdout, stderr, exec-status
 *     fork ─────────────────────────────────> setpgid(0,0)  own process group
 *                                             PDEATHSIG=SIGKILL
 *                                             stdin=/dev/null, dup2 pipes
 *                                             UTS namespace (emulated node)
 *                                             sched_setaffinity (bind.c)
 *                                             restore signal mask, SIGPIPE
 *     read(exec-status) <── EOF on success ── execve(prog, argv, env)
 *                       <── errno on failure ─ write(errno); _exit(127)
 *
 * Supervision: one poll() loop over a signalfd (SIGCHLD, SIGINT, SIGTERM,
 * SIGHUP, SIGUSR1/2), the PMIx server's event pipe (aborts) and every
 * rank's output pipes, with the timeout, the end of the notification
 * grace, the kill deadline and the output drain as the poll timeout:
 *
 *   RUNNING ── rank killed by a signal, or exits != 0 before PMIx_Finalize ──┐
 *      │                                                                       v
 *      │                        NOTIFYING: PMIx event PMIX_ERR_PROC_TERM_WO_SYNC
 *      │                        (affected proc, exit code) to the namespace; the
 *      │                        others may end by themselves (their engine fails
 *      │                        what waited for the dead rank) until the grace
 *      │                        (MPILITE_RUN_NOTIFY_GRACE) is over
 *      │                                                                       │
 *      ├── exits != 0 after PMIx_Finalize / aborts / timeout / signal ──┐  grace over,
 *      │                                                                 v  abort, signal
 *      │ every rank exited 0                 TERMINATING: SIGTERM (or the <┘
 *      │                                     signal received) to every live
 *      │                                     rank's process group; after
 *      │                                     the grace period: SIGKILL
 *      v                                                                │
 *   DRAINING: every rank reaped; read the pipes to end of file <────────┘
 *
 * (NOTIFYING and TERMINATING also end as soon as no rank is left.) A rank
 * that aborts is not announced: MPI_Abort means "end them all", at once.
 * The first failure decides the exit status and is the one reported; what
 * follows from the termination is not. An abort is read from the event
 * pipe before the aborting rank's exit is looked at: the server writes the
 * event before it lets PMIx_Abort return, so the abort is always seen
 * first. Likewise the server notes a PMIx_Finalize before it returns.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2, asprintf */
#endif
#include "run_int.h"
#include "ibx_int.h"

#include <fcntl.h>
#include <math.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

static int live_ranks(const run_job_t *job)
{
	int n = 0;

	for (int i = 0; i < job->nstarted; i++)
		if (!job->ranks[i].reaped)
			n++;
	return n;
}

/* Sends @sig to the process group of every rank still alive. */
static void job_signal_ranks(run_job_t *job, int sig)
{
	for (int i = 0; i < job->nstarted; i++) {
		run_rank_t *r = &job->ranks[i];

		if (r->reaped || r->pid <= 0)
			continue;
		if (kill(-r->pid, sig) < 0 && kill(r->pid, sig) < 0 && errno != ESRCH)
			run_msg("kill(rank %d, pid %d, signal %d): %s", r->rank, (int)r->pid, sig,
				strerror(errno));
	}
}

static void job_terminate(run_job_t *job, int sig)
{
	job_signal_ranks(job, sig);
	if (!job->terminating) {
		job->terminating = true;
		job->kill_at = run_now() + job->opts->grace_s;
	}
	if (sig == SIGKILL)
		job->killed = true;
}

/* Records the first failure (exit status @code) and says why. */
static void job_vrecord(run_job_t *job, int code, const char *fmt, va_list ap)
{
	char msg[1200];

	job->failed = true;
	job->exit_code = code;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	run_msg("%s", msg);
}

static void job_record(run_job_t *job, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void job_record(run_job_t *job, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	job_vrecord(job, code, fmt, ap);
	va_end(ap);
}

/* Records the first failure (exit status @code), says why, ends the job. */
static void job_fail(run_job_t *job, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void job_fail(run_job_t *job, int code, const char *fmt, ...)
{
	va_list ap;

	if (job->failed)
		return;
	va_start(ap, fmt);
	job_vrecord(job, code, fmt, ap);
	va_end(ap);
	job_terminate(job, SIGTERM);
}

/*
 * Rank @rank died without a word to its peers (a signal, or an exit before
 * PMIx_Finalize), and they may be waiting for it: tells them through PMIx
 * and, the first time, gives them MPILITE_RUN_NOTIFY_GRACE to end by
 * themselves. PMIx_Notify_event only queues the event for the PMIx thread,
 * so the loop goes on at once. False when the job must end now instead.
 */
static bool job_notify(run_job_t *job, int rank, int code)
{
	if (job->opts->notify_grace_s <= 0 || job->terminating || live_ranks(job) == 0)
		return false;
	if (run_server_notify_term(job->nspace, rank, code) < 0)
		return job->notifying; /* the others still have the first one */
	if (!job->notifying) {
		job->notifying = true;
		job->notify_until = run_now() + job->opts->notify_grace_s;
		ibx_debug("told the other ranks that rank %d died; SIGTERM in %g s", rank,
			  job->opts->notify_grace_s);
	}
	return true;
}

/* Aborts reported by the PMIx server thread. */
static void job_read_events(run_job_t *job)
{
	run_event_t ev;
	ssize_t n;
	int code;

	for (;;) {
		n = read(job->event_fd, &ev, sizeof(ev));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(ev))
			return; /* EAGAIN: nothing more (writes are atomic, never partial) */
		ev.msg[sizeof(ev.msg) - 1] = '\0';
		if (job->failed) {
			ibx_debug("rank %d called abort with code %d: %s (job already ending)",
				  ev.rank, ev.code, ev.msg);
			/* a survivor that gives up: no more waiting for the others */
			if (!job->terminating)
				job_terminate(job, SIGTERM);
		} else {
			/* An abort never reads as success, whatever its code. */
			code = ev.code & 0xff;
			if (code == 0)
				code = 1;
			job_fail(job, code, "rank %d called abort with code %d%s%s", ev.rank,
				 ev.code, ev.msg[0] ? ": " : "", ev.msg);
		}
		/* only now may the aborting rank's PMIx_Abort return */
		run_server_ack(&ev);
	}
}

static run_rank_t *rank_by_pid(run_job_t *job, pid_t pid)
{
	for (int i = 0; i < job->nstarted; i++)
		if (job->ranks[i].pid == pid)
			return &job->ranks[i];
	return NULL;
}

static void job_reap(run_job_t *job)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		run_rank_t *r = rank_by_pid(job, pid);
		const char *more;
		bool unsynced;
		int code;

		if (!r)
			continue;
		r->reaped = true;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			continue;
		/* An abort that led to this exit was reported before it. */
		job_read_events(job);
		code = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
		unsynced = WIFSIGNALED(st) || !run_server_finalized(r->rank);
		if (job->failed) {
			ibx_debug("rank %d (pid %d) ended, status 0x%x", r->rank, (int)pid, st);
			/* within the grace: the others may be waiting for this one too */
			if (unsynced && job->notifying)
				(void)job_notify(job, r->rank, code);
			continue;
		}
		more = live_ranks(job) ? "; terminating the job" : "";
		if (WIFEXITED(st))
			job_record(job, code, "rank %d (pid %d) exited with status %d%s", r->rank,
				   (int)pid, code, more);
		else
			job_record(job, code, "rank %d (pid %d) killed by signal %d (%s)%s",
				   r->rank, (int)pid, WTERMSIG(st), strsignal(WTERMSIG(st)), more);
		if (!unsynced || !job_notify(job, r->rank, code))
			job_terminate(job, SIGTERM);
	}
}

/* A signal to the launcher itself. */
static void job_on_signal(run_job_t *job, int sig)
{
	switch (sig) {
	case SIGCHLD: return; /* reaped at the top of the loop */
	case SIGUSR1:
	case SIGUSR2: job_signal_ranks(job, sig); return;
	default: break;
	}
	if (++job->term_signals > 1) {
		run_msg("received signal %d (%s) again; killing the job", sig, strsignal(sig));
		job_terminate(job, SIGKILL);
		return;
	}
	if (!job->failed) {
		job->failed = true;
		job->exit_code = 128 + sig;
		run_msg("received signal %d (%s); terminating the job", sig, strsignal(sig));
	}
	/* the ranks get the signal the user sent, then SIGKILL after the grace */
	job_terminate(job, sig);
}

static void job_read_signals(run_job_t *job)
{
	struct signalfd_siginfo si;

	for (;;) {
		ssize_t n = read(job->sig_fd, &si, sizeof(si));

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(si))
			return;
		job_on_signal(job, (int)si.ssi_signo);
	}
}

static __attribute__((noreturn)) void child_exec(run_job_t *job, int rank, int outw, int errw,
						 int execw, char **env)
{
	int e;

	/* Only async-signal-safe calls here: the launcher has threads (PMIx). */
	(void)setpgid(0, 0);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != job->launcher_pid)
		_exit(RUN_EXIT_INTERNAL); /* the launcher died before prctl */
	if (dup2(job->devnull, STDIN_FILENO) < 0 || dup2(outw, STDOUT_FILENO) < 0 ||
	    dup2(errw, STDERR_FILENO) < 0)
		goto fail;
	if (run_nodes_enter(job->nodes, rank) != 0) {
		/* the probe said it would work (nodes.c); PMIx still names the node */
		static const char msg[] = RUN_NAME ": cannot set the node's host name; the rank "
						   "runs under the machine's\n";
		ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);

		(void)w;
	}
	if (run_binding_apply(job->binding, rank) != 0) {
		/* on the rank's own stderr (no stdio after fork); it can run anyway */
		static const char msg[] = RUN_NAME ": sched_setaffinity failed; the rank runs "
						   "unbound\n";
		ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);

		(void)w;
	}
	(void)sigaction(SIGPIPE, &job->orig_sigpipe, NULL);
	(void)sigprocmask(SIG_SETMASK, &job->orig_mask, NULL);
	execve(job->path, job->opts->argv, env);
fail:
	e = errno;
	if (write(execw, &e, sizeof(e)) < 0)
		_exit(RUN_EXIT_NOTFOUND);
	_exit(RUN_EXIT_NOTFOUND);
}

static void close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	p[0] = p[1] = -1;
}

static int spawn_rank(run_job_t *job, run_rank_t *r)
{
	int outp[2] = {-1, -1}, errp[2] = {-1, -1}, execp[2] = {-1, -1};
	char **env;
	pid_t pid;
	ssize_t n;
	int err = 0;

	env = run_env_dup(job->env);
	if (!env) {
		job_fail(job, RUN_EXIT_INTERNAL, "out of memory starting rank %d", r->rank);
		return -1;
	}
	if (run_server_setup_client(job->nspace, r->rank, &env) < 0) {
		job_fail(job, RUN_EXIT_INTERNAL, "cannot set up rank %d with the PMIx server",
			 r->rank);
		goto err_env;
	}
	if (run_nodes_env(job->nodes, r->rank, &env) < 0) {
		job_fail(job, RUN_EXIT_INTERNAL, "out of memory starting rank %d", r->rank);
		goto err_env;
	}
	if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 ||
	    pipe2(execp, O_CLOEXEC) < 0) {
		job_fail(job, RUN_EXIT_INTERNAL, "pipe for rank %d: %s", r->rank, strerror(errno));
		goto err_pipes;
	}
	pid = fork();
	if (pid < 0) {
		job_fail(job, RUN_EXIT_INTERNAL, "fork for rank %d: %s", r->rank, strerror(errno));
		goto err_pipes;
	}
	if (pid == 0)
		child_exec(job, r->rank, outp[1], errp[1], execp[1], env);

	r->pid = pid;
	job->nstarted++;
	/* also here, so that the group exists before any kill(-pid) */
	if (setpgid(pid, pid) < 0 && errno != EACCES && errno != ESRCH)
		ibx_debug("setpgid(rank %d): %s", r->rank, strerror(errno));
	close(outp[1]);
	close(errp[1]);
	close(execp[1]);
	run_env_free(env);
	if (fcntl(outp[0], F_SETFL, O_NONBLOCK) < 0 || fcntl(errp[0], F_SETFL, O_NONBLOCK) < 0)
		run_msg("fcntl(O_NONBLOCK): %s", strerror(errno));
	run_stream_init(&r->out, outp[0], STDOUT_FILENO, r->rank, job->opts->tag_output);
	run_stream_init(&r->err, errp[0], STDERR_FILENO, r->rank, job->opts->tag_output);

	do
		n = read(execp[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(execp[0]);
	if (n == (ssize_t)sizeof(err)) {
		job_fail(job, err == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_NOEXEC,
			 "cannot execute %s on rank %d: %s", job->path, r->rank, strerror(err));
		return -1;
	}
	return 0;

err_pipes:
	close_pair(outp);
	close_pair(errp);
	close_pair(execp);
err_env:
	run_env_free(env);
	return -1;
}

void run_job_start(run_job_t *job)
{
	for (int r = 0; r < job->opts->np && !job->failed; r++) {
		job->ranks[r].rank = r;
		job->ranks[r].out.fd = job->ranks[r].err.fd = -1;
		if (spawn_rank(job, &job->ranks[r]) < 0)
			break;
	}
}

static void deadline_min(double *next, double t)
{
	if (t < *next)
		*next = t;
}

int run_job_supervise(run_job_t *job)
{
	int np = job->nstarted, nfds;
	struct pollfd *pfds;
	run_stream_t **pstreams;
	double drain_start = 0, last_data = 0;
	const double timeout = job->opts->timeout_s;

	pfds = calloc((size_t)(2 + 2 * np), sizeof(*pfds));
	pstreams = calloc((size_t)(2 + 2 * np), sizeof(*pstreams));
	if (!pfds || !pstreams) {
		run_msg("out of memory; killing the job");
		job_terminate(job, SIGKILL);
		while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
			;
		free(pfds);
		free(pstreams);
		return job->failed ? job->exit_code : RUN_EXIT_INTERNAL;
	}

	for (;;) {
		double now, next = INFINITY;
		int ms, ready;

		job_read_events(job);
		job_reap(job);
		now = run_now();

		if (timeout > 0 && !job->terminating && !job->notifying &&
		    now >= job->start + timeout)
			job_fail(job, RUN_EXIT_TIMEOUT,
				 "job timed out after %g s; terminating the job", timeout);
		if (job->notifying && !job->terminating && now >= job->notify_until) {
			ibx_info("ranks still alive %g s after the failure was announced: SIGTERM",
				 job->opts->notify_grace_s);
			job_terminate(job, SIGTERM);
		}
		if (job->terminating && !job->killed && now >= job->kill_at) {
			ibx_info("ranks still alive after %g s: SIGKILL", job->opts->grace_s);
			job_terminate(job, SIGKILL);
		}

		nfds = 0;
		pfds[nfds++] = (struct pollfd){.fd = job->sig_fd, .events = POLLIN};
		pfds[nfds++] = (struct pollfd){.fd = job->event_fd, .events = POLLIN};
		for (int i = 0; i < np; i++) {
			run_stream_t *ss[2] = {&job->ranks[i].out, &job->ranks[i].err};

			for (int k = 0; k < 2; k++) {
				if (ss[k]->fd < 0)
					continue;
				run_stream_flush_stale(ss[k], now);
				deadline_min(&next, run_stream_partial_deadline(ss[k]));
				pstreams[nfds] = ss[k];
				pfds[nfds++] = (struct pollfd){.fd = ss[k]->fd, .events = POLLIN};
			}
		}

		if (live_ranks(job) == 0) {
			if (drain_start == 0)
				drain_start = last_data = now;
			if (nfds <= 2 || now - last_data >= RUN_DRAIN_IDLE_S ||
			    now - drain_start >= RUN_DRAIN_MAX_S)
				break;
			deadline_min(&next, last_data + RUN_DRAIN_IDLE_S);
			deadline_min(&next, drain_start + RUN_DRAIN_MAX_S);
		} else if (job->killed && now >= job->kill_at + RUN_DRAIN_MAX_S) {
			/* a rank that even SIGKILL does not end (stuck in the kernel) */
			run_msg("%d rank(s) did not die after SIGKILL; giving up on them",
				live_ranks(job));
			break;
		}
		if (timeout > 0 && !job->terminating && !job->notifying)
			deadline_min(&next, job->start + timeout);
		if (job->notifying && !job->terminating)
			deadline_min(&next, job->notify_until);
		if (job->terminating)
			deadline_min(&next,
				     job->killed ? job->kill_at + RUN_DRAIN_MAX_S : job->kill_at);

		if (next == INFINITY)
			ms = -1;
		else if (next <= now)
			ms = 0;
		else
			ms = (next - now) * 1000.0 > INT_MAX ? INT_MAX
							     : (int)ceil((next - now) * 1000.0);

		ready = poll(pfds, (nfds_t)nfds, ms);
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			run_msg("poll: %s", strerror(errno));
			job_terminate(job, SIGKILL);
			continue;
		}
		if (ready == 0)
			continue;
		if (pfds[0].revents)
			job_read_signals(job);
		/* the event pipe is read at the top of the loop, before reaping */
		for (int i = 2; i < nfds; i++) {
			if (!pfds[i].revents)
				continue;
			if (run_stream_read(pstreams[i]) > 0)
				last_data = run_now();
		}
	}

	for (int i = 0; i < np; i++) {
		run_stream_drain_close(&job->ranks[i].out);
		run_stream_drain_close(&job->ranks[i].err);
	}
	free(pfds);
	free(pstreams);
	return job->failed ? job->exit_code : 0;
}
