/*
 * run_int.h — mpilite-run's private declarations: the job, its ranks, their
 * output streams, and the parts of the launcher:
 *
 *   main.c    the launch sequence, the exit status
 *   opts.c    the command line
 *   server.c  the embedded PMIx server (namespace, clients, abort upcall)
 *   bind.c    where the ranks run: mapping to cores, CPU binding
 *   nodes.c   --emulate-nodes: the ranks spread over emulated nodes
 *   job.c     fork/exec of the ranks and the supervision loop
 *   iof.c     forwarding of the ranks' stdout/stderr
 *   files.c   the private temporary directory and /dev/shm leftovers
 */
#ifndef RUN_INT_H
#define RUN_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <pmix_common.h>

#include "bootstrap.h"

#define RUN_NAME "mpilite-run"

/* Exit statuses of the launcher itself (as timeout(1) and env(1)). */
#define RUN_EXIT_TIMEOUT  124 /* --timeout expired */
#define RUN_EXIT_INTERNAL 125 /* usage error or launcher failure */
#define RUN_EXIT_NOEXEC	  126 /* the program could not be executed */
#define RUN_EXIT_NOTFOUND 127 /* the program was not found */

/* Once every rank is reaped: stop waiting for output after this long
 * without any (a background grandchild may hold a pipe open) ... */
#define RUN_DRAIN_IDLE_S 1.0
/* ... and after this long in any case. */
#define RUN_DRAIN_MAX_S 10.0

/* A message from the launcher: "mpilite-run: ...\n" to stderr. */
void run_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- options (opts.c) ----------------------------------------------------- */
typedef enum run_bind_to {
	RUN_BIND_AUTO, /* core when the ranks do not outnumber the cores, else none */
	RUN_BIND_NONE,
	RUN_BIND_CORE,
	RUN_BIND_PACKAGE, /* alias socket */
	RUN_BIND_NUMA,
} run_bind_to_t;

typedef enum run_map_by {
	RUN_MAP_CORE,	 /* alias slot */
	RUN_MAP_PACKAGE, /* alias socket */
	RUN_MAP_NUMA,
} run_map_by_t;

typedef struct run_opts {
	int np;
	double timeout_s;	  /* 0: none */
	double grace_s;		  /* SIGTERM -> SIGKILL */
	double notify_grace_s;	  /* a rank died: notified -> SIGTERM; 0: at once */
	int nnodes;		  /* --emulate-nodes N: 1 is this machine as it is */
	const char *node_devices; /* "DEV0,DEV1,...", one per node, or NULL */
	bool tag_output;
	run_bind_to_t bind_to;
	run_map_by_t map_by;
	bool report_bindings;
	char **xvars; /* -x arguments, as given */
	int nx;
	char **argv; /* the program and its arguments, NULL-terminated */
} run_opts_t;

/* Fills @opts from the command line and the MPILITE_RUN_* / MPIEXEC_TIMEOUT
 * variables; opts->xvars is malloc'ed (free it whatever the result; the
 * other strings point into argv or the environment). Returns 0 to run, 1
 * when --help/--version was handled, -1 after a message. */
int run_opts_parse(int argc, char **argv, run_opts_t *opts);

/* ---- emulated nodes (nodes.c) ----------------------------------------------- */
/* HOST_NAME_MAX of Linux: sethostname() takes no more */
#define RUN_HOST_MAX 64

typedef struct run_node {
	char name[RUN_HOST_MAX + 1];
	size_t name_len;
	int first, count; /* ranks first .. first + count - 1 */
	char *device;	  /* its IBX_DEVICE, or NULL */
} run_node_t;

/* One node that is not emulated is this machine under its own name, as
 * without the option. */
typedef struct run_nodes {
	int nnodes, np;
	bool emulated;	  /* nnodes > 1: node names, per-node PMIx keys */
	bool uts;	  /* each rank enters a UTS namespace named after its node */
	run_node_t *node; /* [nnodes] */
} run_nodes_t;

/* The placement and the names; NULL after a message. Probes once whether
 * the ranks can have host names of their own (a warning when not). */
run_nodes_t *run_nodes_plan(const run_opts_t *opts);
void run_nodes_free(run_nodes_t *nodes);
int run_nodes_of(const run_nodes_t *nodes, int rank);
/* PMIX_HOSTNAME, MPILITE_RUN_NODE and IBX_DEVICE of rank @rank into *env_p
 * (after PMIx_server_setup_fork, whose PMIX_HOSTNAME it replaces). */
int run_nodes_env(const run_nodes_t *nodes, int rank, char ***env_p);
/* In the child before exec: the node's UTS namespace and host name.
 * Returns 0 or an errno; async-signal-safe. */
int run_nodes_enter(const run_nodes_t *nodes, int rank);
/* --report-bindings: one line per emulated node, to stderr. */
void run_nodes_report(const run_nodes_t *nodes);

/* ---- output forwarding (iof.c) -------------------------------------------- */
typedef struct run_stream {
	int fd;	    /* read end of the rank's pipe; -1 once closed */
	int out_fd; /* where it goes: STDOUT_FILENO or STDERR_FILENO */
	int rank;
	bool tag;   /* prefix lines with "[rank] " */
	char *line; /* the unfinished line */
	size_t len, cap;
	double partial_since; /* when the unfinished line began */
} run_stream_t;

void run_stream_init(run_stream_t *s, int fd, int out_fd, int rank, bool tag);
/* Reads what is available and forwards it. Returns the bytes read, 0 at
 * end of file (the stream is then closed), -1 if nothing was ready. */
ssize_t run_stream_read(run_stream_t *s);
/* Reads what is left without waiting, flushes an unfinished line, closes. */
void run_stream_drain_close(run_stream_t *s);
/* When an unfinished line is due to go out anyway (INFINITY: none)... */
double run_stream_partial_deadline(const run_stream_t *s);
/* ... and letting it out once that time has come. */
void run_stream_flush_stale(run_stream_t *s, double now);

/* ---- the embedded PMIx server (server.c) ---------------------------------- */
/* What the PMIx progress thread tells the supervision loop, through a pipe:
 * aborts. (Finalizations are flags instead: run_server_finalized.) */
typedef struct run_event {
	int rank;
	int code;
	/* run_server_ack() hands these back to PMIx: releases PMIx_Abort */
	pmix_op_cbfunc_t cbfunc;
	void *cbdata;
	char msg[1024];
} run_event_t;

/* @event_fd: write end of the pipe the abort upcall reports to. */
int run_server_init(const char *tmpdir, int event_fd);
/* The namespace of @nodes->np ranks, placed on @nodes. */
int run_server_register_job(const char *nspace, const run_nodes_t *nodes);
/* Registers rank @rank and adds its PMIx variables to *env_p (a malloc'ed,
 * NULL-terminated array of malloc'ed strings; it may be reallocated). */
int run_server_setup_client(const char *nspace, int rank, char ***env_p);
/* Orderly shutdown; -1 if libpmix hung in it (the caller must _exit). */
int run_server_fini(const char *nspace);
/* Tells PMIx that the event was handled (the aborting rank's PMIx_Abort
 * returns). Called from the supervision loop, never from the PMIx thread:
 * completing the upcall from inside it corrupted libpmix 4.2.2's memory. */
void run_server_ack(run_event_t *ev);
/* Whether rank @rank called PMIx_Finalize. Set before its PMIx_Finalize
 * returns, so a rank that has been reaped is judged correctly. */
bool run_server_finalized(int rank);
/* PMIX_ERR_PROC_TERM_WO_SYNC to every client of @nspace: rank @rank is
 * gone, with exit status @code (128+S for signal S). 0 once libpmix took
 * the event (it is delivered asynchronously), -1 after a message. */
int run_server_notify_term(const char *nspace, int rank, int code);

/* ---- CPU binding (bind.c) -------------------------------------------------- */
typedef struct run_binding run_binding_t;

/* "core", "socket", ... (any case); -1 after a message naming @opt. */
int run_bind_to_parse(const char *s, const char *opt, run_bind_to_t *out);
int run_map_by_parse(const char *s, const char *opt, run_map_by_t *out);
/* Reads the machine and places every rank; NULL (said why) when out of
 * memory. A machine it cannot read leaves the ranks unbound. */
run_binding_t *run_binding_plan(const run_opts_t *opts);
void run_binding_free(run_binding_t *b);
/* In the child before exec: binds the calling process as rank @rank.
 * Returns 0 or the errno of sched_setaffinity; async-signal-safe. */
int run_binding_apply(const run_binding_t *b, int rank);
/* --report-bindings: each rank's CPUs, one line each, to stderr. */
void run_binding_report(const run_binding_t *b);

/* ---- the job (job.c) -------------------------------------------------------- */
typedef struct run_rank {
	int rank;
	pid_t pid; /* 0: not started; also its process group id */
	bool reaped;
	run_stream_t out, err;
} run_rank_t;

typedef struct run_job {
	const run_opts_t *opts;
	const char *path; /* the program, resolved through PATH */
	const run_binding_t *binding;
	const run_nodes_t *nodes;
	char **env; /* the ranks' environment before PMIx adds its part */
	char nspace[256];
	char job_id[IBX_BOOT_JOB_ID_MAX];
	run_rank_t *ranks; /* [np] */
	int nstarted;
	int sig_fd;   /* signalfd of the signals below */
	int event_fd; /* read end of the server's event pipe */
	int devnull;  /* the ranks' stdin */
	pid_t launcher_pid;
	sigset_t orig_mask; /* restored in the ranks */
	struct sigaction orig_sigpipe;
	/* the first failure decides the exit status */
	bool failed;
	int exit_code;
	/* termination: after a rank died, the others were told (PMIx event) and
	 * may end by themselves until notify_until; then SIGTERM, SIGKILL */
	bool notifying;
	bool terminating;
	bool killed;	  /* SIGKILL sent */
	int term_signals; /* signals received by the launcher itself */
	double start, notify_until, kill_at;
} run_job_t;

/* Forks and execs every rank; on a failure records it in the job (the
 * ranks already started are then ended by run_job_supervise). */
void run_job_start(run_job_t *job);
/* Forwards output, reaps ranks, handles aborts, signals and the timeout
 * until every rank is gone. Returns the exit status of the launcher. */
int run_job_supervise(run_job_t *job);

/* ---- files (files.c) -------------------------------------------------------- */
int run_tmpdir_create(char *path, size_t len);
void run_tmpdir_remove(const char *path);
/* Unlinks @dir/ibx-<job_id>-*; returns how many. */
int run_shm_cleanup(const char *dir, const char *job_id);

/* ---- environment arrays (main.c) ------------------------------------------ */
/* Sets NAME=value in a malloc'ed environment array; 0 or -1 (no memory). */
int run_env_set(char ***env_p, const char *name, const char *value);
const char *run_env_get(char **env, const char *name);
char **run_env_dup(char **env);
void run_env_free(char **env);

double run_now(void);

#endif /* RUN_INT_H */
