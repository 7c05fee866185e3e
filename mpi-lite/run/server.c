/*
 * server.c — the PMIx server embedded in mpilite-run (one per launcher, one
 * machine): it describes the job to the ranks, hears their aborts and
 * finalizations, and tells them when one of them died.
 *
 *   run_server_init         PMIx_server_init: private PMIX_SERVER_TMPDIR and
 *                           PMIX_SYSTEM_TMPDIR (two launchers on one host
 *                           must not share them), psec=native (no munge), the
 *                           server's own name (the source of its events)
 *   run_server_register_job PMIx_server_register_nspace with the job-level
 *                           keys and one PMIX_PROC_DATA array per rank; on
 *                           emulated nodes (nodes.c) also one
 *                           PMIX_NODE_INFO_ARRAY per node, as a launcher
 *                           of several nodes gives them
 *   run_server_setup_client PMIx_server_register_client, waited for, then
 *                           PMIx_server_setup_fork into the rank's environment
 *   (PMIx progress thread)  abort upcall ──(pipe)──> supervision loop
 *                           client_finalized upcall ──> run_server_finalized
 *   run_server_notify_term  PMIx_Notify_event(PMIX_ERR_PROC_TERM_WO_SYNC) to
 *                           the namespace: a rank died (job.c)
 *   run_server_fini         deregister the namespace, PMIx_server_finalize
 *                           (only after a job that ended well, see main.c)
 *
 * Fences and gets need no host work: with every client on this one server,
 * libpmix completes them itself (docs/pmix.md). The fence and
 * direct-modex upcalls still exist, trivially, because libpmix 4.2.2 calls
 * the fence upcall unchecked once a participant has died.
 *
 * Every upcall runs in the PMIx progress thread. It only writes a
 * run_event_t (one write below PIPE_BUF, so atomic) to the event pipe and
 * returns; the supervision loop does the rest, including completing the
 * upcall (run_server_ack).
 */
#include "run_int.h"
#include "ibx_int.h"

#include <pmix.h>
#include <pmix_server.h>
#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

_Static_assert(sizeof(run_event_t) <= PIPE_BUF, "event pipe writes must be atomic");

static int srv_event_fd = -1;
/* the launcher as a PMIx process: the source of the events it sends */
static pmix_proc_t srv_self;
/* [srv_np]: rank r called PMIx_Finalize (set by the PMIx thread) */
static atomic_bool *srv_finalized;
static int srv_np;

/* Waits for a PMIx operation callback. */
typedef struct srv_waiter {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	pmix_status_t status;
} srv_waiter_t;

static void srv_waiter_init(srv_waiter_t *w)
{
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->done = false;
	w->status = PMIX_SUCCESS;
}

static void srv_op_done(pmix_status_t status, void *cbdata)
{
	srv_waiter_t *w = cbdata;

	pthread_mutex_lock(&w->lock);
	w->status = status;
	w->done = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static pmix_status_t srv_waiter_wait(srv_waiter_t *w)
{
	pmix_status_t st;

	pthread_mutex_lock(&w->lock);
	while (!w->done)
		pthread_cond_wait(&w->cond, &w->lock);
	st = w->status;
	pthread_mutex_unlock(&w->lock);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	return st;
}

/* As srv_waiter_wait, but gives up after @secs: PMIX_ERR_TIMEOUT, and the
 * waiter must then stay alive (the callback may still come). */
static pmix_status_t srv_waiter_wait_for(srv_waiter_t *w, int secs)
{
	struct timespec until;
	pmix_status_t st = PMIX_ERR_TIMEOUT;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += secs;
	pthread_mutex_lock(&w->lock);
	while (!w->done)
		if (pthread_cond_timedwait(&w->cond, &w->lock, &until) == ETIMEDOUT)
			break;
	if (w->done)
		st = w->status;
	pthread_mutex_unlock(&w->lock);
	if (st != PMIX_ERR_TIMEOUT) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
	}
	return st;
}

/* A rank called PMIx_Abort (MPI_Abort). Whatever procs[] it names, the
 * whole job ends. The loop reads the event, then releases the caller
 * (run_server_ack), so it sees the abort before it can see the rank exit. */
static pmix_status_t srv_abort(const pmix_proc_t *proc, void *server_object, int status,
			       const char msg[], pmix_proc_t procs[], size_t nprocs,
			       pmix_op_cbfunc_t cbfunc, void *cbdata)
{
	run_event_t ev;
	ssize_t n;

	(void)server_object;
	(void)procs; /* the whole job ends, whichever procs were named */
	(void)nprocs;
	memset(&ev, 0, sizeof(ev));
	ev.rank = (int)proc->rank;
	ev.code = status;
	ev.cbfunc = cbfunc;
	ev.cbdata = cbdata;
	snprintf(ev.msg, sizeof(ev.msg), "%s", msg ? msg : "");
	/* all or nothing (sizeof(ev) <= PIPE_BUF), and never blocking: the main
	 * thread may itself be waiting for this thread (client registration) */
	do
		n = write(srv_event_fd, &ev, sizeof(ev));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(ev)) {
		/* the pipe is full of other aborts: release this caller now; the
		 * loop will see its exit status instead */
		ibx_debug("abort of rank %d not queued: %s", ev.rank,
			  n < 0 ? strerror(errno) : "short write");
		if (cbfunc)
			cbfunc(PMIX_SUCCESS, cbdata);
	}
	return PMIX_SUCCESS;
}

void run_server_ack(run_event_t *ev)
{
	if (ev->cbfunc)
		ev->cbfunc(PMIX_SUCCESS, ev->cbdata);
	ev->cbfunc = NULL;
}

static void srv_free_blob(void *cbdata)
{
	free(cbdata);
}

/*
 * Every participant is a client of this one server, so the blob libpmix
 * hands over is already the whole job's contribution: hand it straight
 * back. libpmix 4.2.2 completes purely local fences itself, but once a
 * participant has died it calls this upcall without checking it is there
 * (a NULL call that crashed the launcher), hence it must exist.
 */
static pmix_status_t srv_fence_nb(const pmix_proc_t procs[], size_t nprocs,
				  const pmix_info_t info[], size_t ninfo, char *data, size_t ndata,
				  pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
	char *copy = NULL;

	(void)procs;
	(void)nprocs;
	(void)info;
	(void)ninfo;
	if (ndata) {
		copy = malloc(ndata);
		if (!copy)
			return PMIX_ERR_NOMEM;
		memcpy(copy, data, ndata);
	}
	/* libpmix accepts the answer from inside the upcall; it releases the
	 * copy through srv_free_blob once it has read it */
	cbfunc(PMIX_SUCCESS, copy, ndata, cbdata, srv_free_blob, copy);
	return PMIX_SUCCESS;
}

/* Only asked for processes of another server, and there is none: a rank
 * that left before it ever connected has nothing to give. */
static pmix_status_t srv_direct_modex(const pmix_proc_t *proc, const pmix_info_t info[],
				      size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
	(void)proc;
	(void)info;
	(void)ninfo;
	(void)cbfunc;
	(void)cbdata;
	return PMIX_ERR_NOT_FOUND;
}

/*
 * A rank called PMIx_Finalize. Answered at once (PMIX_OPERATION_SUCCEEDED:
 * libpmix then replies to the rank itself), after the flag is set: the rank
 * cannot return from PMIx_Finalize, let alone exit, before the supervision
 * loop can see it.
 */
static pmix_status_t srv_client_finalized(const pmix_proc_t *proc, void *server_object,
					  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
	(void)server_object;
	(void)cbfunc;
	(void)cbdata;
	if (srv_finalized && proc->rank < (pmix_rank_t)srv_np)
		atomic_store(&srv_finalized[proc->rank], true);
	return PMIX_OPERATION_SUCCEEDED;
}

bool run_server_finalized(int rank)
{
	return srv_finalized && rank >= 0 && rank < srv_np && atomic_load(&srv_finalized[rank]);
}

static pmix_server_module_t srv_module = {
    .client_finalized = srv_client_finalized,
    .abort = srv_abort,
    .fence_nb = srv_fence_nb,
    .direct_modex = srv_direct_modex,
};

/*
 * PMIx_server_init, with the node's I/O devices left out of the hardware
 * topology it discovers and hands to the ranks (no rank of ours asks for
 * them): hwloc reads the configuration space of every PCI device for them,
 * which took 25 ms of each job's start here, 9 s in a launcher built with
 * AddressSanitizer and most of a second under emulation. HWLOC_COMPONENTS
 * says so for the length of this call only (the ranks, started later, get
 * the environment as it was); a value the user set is left alone.
 */
static pmix_status_t server_init_no_io(pmix_info_t info[], size_t ninfo)
{
	bool set = !getenv("HWLOC_COMPONENTS") && !setenv("HWLOC_COMPONENTS", "-linuxio,-pci", 0);
	pmix_status_t rc = PMIx_server_init(&srv_module, info, ninfo);

	if (set)
		unsetenv("HWLOC_COMPONENTS");
	return rc;
}

int run_server_init(const char *tmpdir, int event_fd)
{
	char name[PMIX_MAX_NSLEN + 1];
	pmix_info_t info[4];
	pmix_status_t rc;

	srv_event_fd = event_fd;
	/* Clients and server must agree on the security plugin; native needs no
	 * munge daemon. A value the user set is kept. */
	if (setenv("PMIX_MCA_psec", "native", 0)) {
		run_msg("setenv: %s", strerror(errno));
		return -1;
	}
	/* named, rather than libpmix's "pmix-server" and our pid as the rank */
	snprintf(name, sizeof(name), RUN_NAME ".%ld", (long)getpid());
	PMIX_LOAD_PROCID(&srv_self, name, 0);
	PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
	PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, tmpdir, PMIX_STRING);
	PMIX_INFO_LOAD(&info[2], PMIX_SERVER_NSPACE, srv_self.nspace, PMIX_STRING);
	PMIX_INFO_LOAD(&info[3], PMIX_SERVER_RANK, &srv_self.rank, PMIX_PROC_RANK);
	rc = server_init_no_io(info, IBX_ARRAY_SIZE(info));
	for (size_t i = 0; i < IBX_ARRAY_SIZE(info); i++)
		PMIX_INFO_DESTRUCT(&info[i]);
	if (rc != PMIX_SUCCESS) {
		run_msg("PMIx_server_init failed: %s", PMIx_Error_string(rc));
		return -1;
	}
	return 0;
}

/* Writes "first,...,first+n-1" at @s + @off (room: 11 bytes per rank);
 * returns where it ends, at its NUL. */
static size_t put_ranks(char *s, size_t off, int first, int n)
{
	for (int r = first; r < first + n; r++)
		off += (size_t)sprintf(s + off, "%s%d", r > first ? "," : "", r);
	return off;
}

#define SRV_ADD(list, key, val, type)                                                              \
	do {                                                                                       \
		pmix_status_t rc_ = PMIx_Info_list_add((list), (key), (val), (type));              \
		if (rc_ != PMIX_SUCCESS) {                                                         \
			run_msg("PMIx_Info_list_add(%s): %s", (key), PMIx_Error_string(rc_));      \
			goto err;                                                                  \
		}                                                                                  \
	} while (0)

/* Adds @pl, converted to a data array, to @job_list under @key. */
static int add_array(void *job_list, const char *key, void *pl)
{
	pmix_data_array_t darray = {0};
	pmix_status_t rc;

	rc = PMIx_Info_list_convert(pl, &darray);
	if (rc != PMIX_SUCCESS) {
		run_msg("PMIx_Info_list_convert: %s", PMIx_Error_string(rc));
		return -1;
	}
	rc = PMIx_Info_list_add(job_list, key, &darray, PMIX_DATA_ARRAY);
	PMIX_DATA_ARRAY_DESTRUCT(&darray);
	if (rc != PMIX_SUCCESS) {
		run_msg("PMIx_Info_list_add(%s): %s", key, PMIx_Error_string(rc));
		return -1;
	}
	return 0;
}

/* The PMIX_PROC_DATA array of one rank; its first element must be PMIX_RANK. */
static int add_proc_data(void *job_list, const run_nodes_t *nodes, int rank)
{
	int k = run_nodes_of(nodes, rank);
	const run_node_t *node = &nodes->node[k];
	void *pl = PMIx_Info_list_start();
	pmix_rank_t prank = (pmix_rank_t)rank;
	uint16_t lrank = (uint16_t)(rank - node->first); /* one job per node */
	uint32_t zero = 0, nodeid = (uint32_t)k;
	int ret = -1;

	if (!pl) {
		run_msg("out of memory");
		return -1;
	}
	SRV_ADD(pl, PMIX_RANK, &prank, PMIX_PROC_RANK);
	SRV_ADD(pl, PMIX_GLOBAL_RANK, &prank, PMIX_PROC_RANK);
	SRV_ADD(pl, PMIX_APP_RANK, &prank, PMIX_PROC_RANK);
	SRV_ADD(pl, PMIX_APPNUM, &zero, PMIX_UINT32);
	SRV_ADD(pl, PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
	SRV_ADD(pl, PMIX_NODE_RANK, &lrank, PMIX_UINT16);
	SRV_ADD(pl, PMIX_NODEID, &nodeid, PMIX_UINT32);
	SRV_ADD(pl, PMIX_HOSTNAME, node->name, PMIX_STRING);
	/* PMIX_PROC_INFO_ARRAY is the 4.x name of the PMIX_PROC_DATA key */
	ret = add_array(job_list, PMIX_PROC_INFO_ARRAY, pl);
err:
	PMIx_Info_list_release(pl);
	return ret;
}

/* The node-level keys of node @k, for a job of several nodes: a client
 * reads those of the node whose name it has (PMIX_HOSTNAME). */
static int add_node_data(void *job_list, const run_nodes_t *nodes, int k, const char *peers)
{
	const run_node_t *node = &nodes->node[k];
	void *pl = PMIx_Info_list_start();
	uint32_t nodeid = (uint32_t)k, size = (uint32_t)node->count;
	pmix_rank_t lldr = (pmix_rank_t)node->first;
	int ret = -1;

	if (!pl) {
		run_msg("out of memory");
		return -1;
	}
	SRV_ADD(pl, PMIX_NODEID, &nodeid, PMIX_UINT32);
	SRV_ADD(pl, PMIX_HOSTNAME, node->name, PMIX_STRING);
	SRV_ADD(pl, PMIX_LOCAL_PEERS, peers, PMIX_STRING);
	SRV_ADD(pl, PMIX_LOCAL_SIZE, &size, PMIX_UINT32);
	SRV_ADD(pl, PMIX_NODE_SIZE, &size, PMIX_UINT32);
	SRV_ADD(pl, PMIX_LOCALLDR, &lldr, PMIX_PROC_RANK);
	ret = add_array(job_list, PMIX_NODE_INFO_ARRAY, pl);
err:
	PMIx_Info_list_release(pl);
	return ret;
}

/*
 * The node map and the proc map as PMIx_generate_regex / _ppn take them:
 * "host-n0,host-n1" and "0,1,2;3,4". *peers_p gets each node's peer list
 * ("0,1,2" and "3,4") one after the other, NUL-separated.
 */
static int node_lists(const run_nodes_t *nodes, char **names_p, char **ppn_p, char **peers_p)
{
	size_t ncap = (size_t)nodes->nnodes * (RUN_HOST_MAX + 1) + 1;
	size_t pcap = (size_t)nodes->np * 11 + (size_t)nodes->nnodes + 1;
	char *names = malloc(ncap), *ppn = malloc(pcap), *peers = malloc(pcap);
	size_t noff = 0, poff = 0, off = 0;

	if (!names || !ppn || !peers) {
		free(names);
		free(ppn);
		free(peers);
		run_msg("out of memory");
		return -1;
	}
	for (int k = 0; k < nodes->nnodes; k++) {
		const run_node_t *node = &nodes->node[k];

		noff += (size_t)sprintf(names + noff, "%s%s", k ? "," : "", node->name);
		if (k)
			ppn[poff++] = ';';
		poff = put_ranks(ppn, poff, node->first, node->count);
		off = put_ranks(peers, off, node->first, node->count) + 1;
	}
	names[noff] = ppn[poff] = '\0';
	*names_p = names;
	*ppn_p = ppn;
	*peers_p = peers;
	return 0;
}

/*
 * libpmix 4.2.2's node regex generator copies a name's leading letters into
 * a stack buffer of PMIX_MAX_NODE_PREFIX (50) bytes without a bound: a host
 * named with 50 letters or more before its first other character smashes
 * its stack. Such names go to PMIx as the plain list, which it takes too.
 */
#define SRV_REGEX_PREFIX_MAX 40

static bool regex_safe(const run_nodes_t *nodes)
{
	for (int k = 0; k < nodes->nnodes; k++) {
		const char *name = nodes->node[k].name;
		int letters = 0;

		while (isalpha((unsigned char)name[letters]))
			letters++;
		if (letters > SRV_REGEX_PREFIX_MAX)
			return false;
	}
	return true;
}

int run_server_register_job(const char *nspace, const run_nodes_t *nodes)
{
	const int np = nodes->np;
	char *names = NULL, *ppn = NULL, *peers = NULL, *node_regex = NULL, *proc_regex = NULL;
	const char *p;
	void *list;
	pmix_data_array_t darray = {0};
	uint32_t size = (uint32_t)np, one = 1, nnodes = (uint32_t)nodes->nnodes;
	pmix_rank_t lldr = 0;
	srv_waiter_t w;
	pmix_status_t rc;
	int ret = -1;

	srv_finalized = calloc((size_t)np, sizeof(*srv_finalized));
	list = PMIx_Info_list_start();
	if (!srv_finalized || !list) {
		run_msg("out of memory");
		goto err;
	}
	srv_np = np;
	for (int r = 0; r < np; r++)
		atomic_init(&srv_finalized[r], false);
	if (node_lists(nodes, &names, &ppn, &peers) < 0)
		goto err;
	rc = regex_safe(nodes) ? PMIx_generate_regex(names, &node_regex) : PMIX_SUCCESS;
	if (rc == PMIX_SUCCESS)
		rc = PMIx_generate_ppn(ppn, &proc_regex);
	if (rc != PMIX_SUCCESS) {
		run_msg("PMIx_generate_regex/ppn: %s", PMIx_Error_string(rc));
		goto err;
	}
	SRV_ADD(list, PMIX_JOBID, nspace, PMIX_STRING);
	SRV_ADD(list, PMIX_JOB_SIZE, &size, PMIX_UINT32);
	SRV_ADD(list, PMIX_UNIV_SIZE, &size, PMIX_UINT32);
	SRV_ADD(list, PMIX_MAX_PROCS, &size, PMIX_UINT32);
	SRV_ADD(list, PMIX_APP_SIZE, &size, PMIX_UINT32);
	SRV_ADD(list, PMIX_JOB_NUM_APPS, &one, PMIX_UINT32);
	SRV_ADD(list, PMIX_NUM_NODES, &nnodes, PMIX_UINT32);
	if (node_regex)
		SRV_ADD(list, PMIX_NODE_MAP, node_regex, PMIX_REGEX);
	else
		SRV_ADD(list, PMIX_NODE_MAP, names, PMIX_STRING);
	SRV_ADD(list, PMIX_PROC_MAP, proc_regex, PMIX_REGEX);
	if (!nodes->emulated) {
		/* one node, this one: its keys may stand at the job level */
		SRV_ADD(list, PMIX_HOSTNAME, nodes->node[0].name, PMIX_STRING);
		SRV_ADD(list, PMIX_LOCAL_SIZE, &size, PMIX_UINT32);
		SRV_ADD(list, PMIX_NODE_SIZE, &size, PMIX_UINT32);
		SRV_ADD(list, PMIX_LOCAL_PEERS, peers, PMIX_STRING);
		SRV_ADD(list, PMIX_LOCALLDR, &lldr, PMIX_PROC_RANK);
	} else {
		/* at the job level they would be every node's */
		p = peers;
		for (int k = 0; k < nodes->nnodes; k++, p += strlen(p) + 1)
			if (add_node_data(list, nodes, k, p) < 0)
				goto err;
	}
	for (int r = 0; r < np; r++)
		if (add_proc_data(list, nodes, r) < 0)
			goto err;
	rc = PMIx_Info_list_convert(list, &darray);
	if (rc != PMIX_SUCCESS) {
		run_msg("PMIx_Info_list_convert: %s", PMIx_Error_string(rc));
		goto err;
	}

	srv_waiter_init(&w);
	rc = PMIx_server_register_nspace(nspace, np, darray.array, darray.size, srv_op_done, &w);
	if (rc == PMIX_SUCCESS) {
		rc = srv_waiter_wait(&w);
	} else {
		if (rc == PMIX_OPERATION_SUCCEEDED)
			rc = PMIX_SUCCESS;
		pthread_cond_destroy(&w.cond);
		pthread_mutex_destroy(&w.lock);
	}
	if (rc != PMIX_SUCCESS) {
		run_msg("PMIx_server_register_nspace(%s): %s", nspace, PMIx_Error_string(rc));
		goto err;
	}
	ret = 0;
err:
	if (darray.array)
		PMIX_DATA_ARRAY_DESTRUCT(&darray);
	if (list)
		PMIx_Info_list_release(list);
	free(node_regex);
	free(proc_regex);
	free(names);
	free(ppn);
	free(peers);
	return ret;
}

int run_server_setup_client(const char *nspace, int rank, char ***env_p)
{
	pmix_proc_t proc;
	srv_waiter_t w;
	pmix_status_t rc;

	PMIX_LOAD_PROCID(&proc, nspace, (pmix_rank_t)rank);
	srv_waiter_init(&w);
	rc = PMIx_server_register_client(&proc, getuid(), getgid(), NULL, srv_op_done, &w);
	if (rc == PMIX_SUCCESS) {
		/* the client must be known to the server before it can connect */
		rc = srv_waiter_wait(&w);
	} else {
		if (rc == PMIX_OPERATION_SUCCEEDED)
			rc = PMIX_SUCCESS;
		pthread_cond_destroy(&w.cond);
		pthread_mutex_destroy(&w.lock);
	}
	if (rc != PMIX_SUCCESS) {
		run_msg("PMIx_server_register_client(rank %d): %s", rank, PMIx_Error_string(rc));
		return -1;
	}
	rc = PMIx_server_setup_fork(&proc, env_p);
	if (rc != PMIX_SUCCESS) {
		run_msg("PMIx_server_setup_fork(rank %d): %s", rank, PMIx_Error_string(rc));
		return -1;
	}
	return 0;
}

int run_server_fini(const char *nspace)
{
	static srv_waiter_t w; /* static: a late callback must find it alive */
	pmix_status_t rc;

	if (nspace && *nspace) {
		srv_waiter_init(&w);
		PMIx_server_deregister_nspace(nspace, srv_op_done, &w);
		if (srv_waiter_wait_for(&w, 10) == PMIX_ERR_TIMEOUT) {
			run_msg("the PMIx server did not deregister %s within 10 s; leaving it",
				nspace);
			return -1;
		}
	}
	rc = PMIx_server_finalize();
	if (rc != PMIX_SUCCESS)
		run_msg("PMIx_server_finalize: %s", PMIx_Error_string(rc));
	/* no upcall after the finalize */
	free(srv_finalized);
	srv_finalized = NULL;
	return 0;
}

/* In the PMIx thread, once the event went out to the clients. */
static void srv_notify_done(pmix_status_t status, void *cbdata)
{
	(void)cbdata;
	if (status != PMIX_SUCCESS)
		ibx_debug("PMIx_Notify_event(%s): %s",
			  PMIx_Error_string(PMIX_ERR_PROC_TERM_WO_SYNC), PMIx_Error_string(status));
}

/*
 * As a launcher of several nodes does (PRRTE): the event names the dead
 * process (PMIX_EVENT_AFFECTED_PROC) and its exit status, comes from the
 * launcher itself, and goes to the whole namespace. libpmix copies @info
 * before it returns and keeps the event for the clients that register a
 * handler later.
 */
int run_server_notify_term(const char *nspace, int rank, int code)
{
	pmix_info_t info[3];
	pmix_proc_t dead;
	bool nondefault = false;
	pmix_status_t rc;

	PMIX_LOAD_PROCID(&dead, nspace, (pmix_rank_t)rank);
	PMIX_INFO_LOAD(&info[0], PMIX_EVENT_AFFECTED_PROC, &dead, PMIX_PROC);
	PMIX_INFO_LOAD(&info[1], PMIX_EXIT_CODE, &code, PMIX_INT);
	PMIX_INFO_LOAD(&info[2], PMIX_EVENT_NON_DEFAULT, &nondefault, PMIX_BOOL);
	rc = PMIx_Notify_event(PMIX_ERR_PROC_TERM_WO_SYNC, &srv_self, PMIX_RANGE_NAMESPACE, info,
			       IBX_ARRAY_SIZE(info), srv_notify_done, NULL);
	for (size_t i = 0; i < IBX_ARRAY_SIZE(info); i++)
		PMIX_INFO_DESTRUCT(&info[i]);
	if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
		run_msg("cannot tell the other ranks that rank %d died (PMIx_Notify_event: %s)",
			rank, PMIx_Error_string(rc));
		return -1;
	}
	return 0;
}
