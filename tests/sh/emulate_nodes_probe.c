/*
 * emulate_nodes_probe.c — a plain PMIx client for the launcher scenarios
 * tests/sh/emulate_nodes.sh (mpilite-run --emulate-nodes) and
 * tests/sh/launcher_notify.sh (the event about a dead rank). It prints what
 * the launcher told it; no ibx code is involved.
 *
 *   emulate_nodes_probe info
 *       each rank exchanges a key with the next one (put, fence, get) and
 *       prints one line:
 *         rank R peers P lsize S nodeid K host H lrank L nrank N nnodes M
 *           uname G device D node E modex ok
 *       P, S: PMIX_LOCAL_PEERS and PMIX_LOCAL_SIZE (wildcard, as ibx reads
 *       them); K, H, L, N: its own PMIX_NODEID, PMIX_HOSTNAME,
 *       PMIX_LOCAL_RANK, PMIX_NODE_RANK; M: PMIX_NUM_NODES; G: gethostname();
 *       D, E: $IBX_DEVICE and $MPILITE_RUN_NODE ("-" when unset, "?" when
 *       PMIx has no value)
 *   emulate_nodes_probe notify HOW [stay|abort]
 *       rank 0 registers for PMIX_ERR_PROC_TERM_WO_SYNC, every rank fences,
 *       then rank 1 ends as HOW says: kill9 (SIGKILL), exit5 (exit 5 before
 *       PMIx_Finalize), fini5 (PMIx_Finalize, then exit 5); the other ranks
 *       sleep. On the event rank 0 prints
 *         rank 0: event <PMIx_Error_string> affected rank A exit code C
 *       and exits 3; with "stay" it sleeps on (until the launcher ends it),
 *       with "abort" it calls PMIx_Abort(7). Without an event within 30 s
 *       it prints "rank 0: no event" and exits 4.
 */
#include <pmix.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;
static atomic_int got_event;

static void die(const char *what, pmix_status_t rc)
{
	fprintf(stderr, "rank %u: %s: %s\n", me.rank, what, PMIx_Error_string(rc));
	exit(2);
}

/* @key of @proc as text into @buf ("?" when PMIx has none). */
static const char *get_text(const pmix_proc_t *proc, const char *key, char *buf, size_t len)
{
	pmix_value_t *val = NULL;
	pmix_status_t rc = PMIx_Get(proc, key, NULL, 0, &val);

	if (rc != PMIX_SUCCESS || !val) {
		snprintf(buf, len, "?");
		return buf;
	}
	switch (val->type) {
	case PMIX_STRING: snprintf(buf, len, "%s", val->data.string); break;
	case PMIX_UINT32: snprintf(buf, len, "%u", val->data.uint32); break;
	case PMIX_UINT16: snprintf(buf, len, "%u", (unsigned)val->data.uint16); break;
	case PMIX_PROC_RANK: snprintf(buf, len, "%u", val->data.rank); break;
	default: snprintf(buf, len, "?type=%s", PMIx_Data_type_string(val->type)); break;
	}
	PMIX_VALUE_RELEASE(val);
	return buf;
}

static const char *env_or_dash(const char *name)
{
	const char *v = getenv(name);

	return v ? v : "-";
}

/* Put a key, fence with the data, read the next rank's key: the exchange
 * must work across emulated nodes as within one. */
static void modex(uint32_t size)
{
	pmix_value_t v, *got = NULL;
	pmix_proc_t peer;
	pmix_info_t info;
	bool collect = true;
	uint32_t want = (me.rank + 1) % size;
	pmix_status_t rc;

	PMIX_VALUE_LOAD(&v, &me.rank, PMIX_UINT32);
	rc = PMIx_Put(PMIX_GLOBAL, "probe.rank", &v);
	PMIX_VALUE_DESTRUCT(&v);
	if (rc != PMIX_SUCCESS)
		die("PMIx_Put", rc);
	rc = PMIx_Commit();
	if (rc != PMIX_SUCCESS)
		die("PMIx_Commit", rc);
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	rc = PMIx_Fence(NULL, 0, &info, 1);
	PMIX_INFO_DESTRUCT(&info);
	if (rc != PMIX_SUCCESS)
		die("PMIx_Fence", rc);
	PMIX_LOAD_PROCID(&peer, me.nspace, want);
	rc = PMIx_Get(&peer, "probe.rank", NULL, 0, &got);
	if (rc != PMIX_SUCCESS)
		die("PMIx_Get(probe.rank)", rc);
	if (got->type != PMIX_UINT32 || got->data.uint32 != want) {
		fprintf(stderr, "rank %u: wrong key from rank %u\n", me.rank, want);
		exit(3);
	}
	PMIX_VALUE_RELEASE(got);
}

static int info_mode(void)
{
	pmix_proc_t wild;
	char peers[4096], lsize[32], nodeid[32], host[256], lrank[32], nrank[32], nnodes[32];
	char size_s[32], uname[256];

	PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
	get_text(&wild, PMIX_JOB_SIZE, size_s, sizeof(size_s));
	modex((uint32_t)strtoul(size_s, NULL, 10));
	if (gethostname(uname, sizeof(uname)) < 0)
		snprintf(uname, sizeof(uname), "?");
	uname[sizeof(uname) - 1] = '\0';
	printf("rank %u peers %s lsize %s nodeid %s host %s lrank %s nrank %s nnodes %s uname %s "
	       "device %s node %s modex ok\n",
	       me.rank, get_text(&wild, PMIX_LOCAL_PEERS, peers, sizeof(peers)),
	       get_text(&wild, PMIX_LOCAL_SIZE, lsize, sizeof(lsize)),
	       get_text(&me, PMIX_NODEID, nodeid, sizeof(nodeid)),
	       get_text(&me, PMIX_HOSTNAME, host, sizeof(host)),
	       get_text(&me, PMIX_LOCAL_RANK, lrank, sizeof(lrank)),
	       get_text(&me, PMIX_NODE_RANK, nrank, sizeof(nrank)),
	       get_text(&wild, PMIX_NUM_NODES, nnodes, sizeof(nnodes)), uname,
	       env_or_dash("IBX_DEVICE"), env_or_dash("MPILITE_RUN_NODE"));
	fflush(stdout);
	return 0;
}

/* On PMIx's thread: one line, in one write. */
static void on_term(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
		    size_t ninfo, pmix_info_t *results, size_t nresults,
		    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
	long affected = -1, code = -1;
	char line[256];
	int n;

	(void)id;
	(void)source;
	(void)results;
	(void)nresults;
	for (size_t i = 0; i < ninfo; i++) {
		if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
		    info[i].value.type == PMIX_PROC)
			affected = (long)info[i].value.data.proc->rank;
		else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT)
			code = info[i].value.data.integer;
	}
	n = snprintf(line, sizeof(line), "rank %u: event %s affected rank %ld exit code %ld\n",
		     me.rank, PMIx_Error_string(status), affected, code);
	if (write(STDOUT_FILENO, line, (size_t)n) < 0)
		_exit(5);
	atomic_store(&got_event, 1);
	if (cbfunc)
		cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static int notify_mode(const char *how, const char *then)
{
	pmix_status_t code = PMIX_ERR_PROC_TERM_WO_SYNC, rc;

	if (me.rank == 0) {
		/* blocking without a callback: registered at the server on return */
		rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_term, NULL, NULL);
		if (rc < 0)
			die("PMIx_Register_event_handler", rc);
	}
	/* rank 1 dies only once rank 0 listens */
	rc = PMIx_Fence(NULL, 0, NULL, 0);
	if (rc != PMIX_SUCCESS)
		die("PMIx_Fence", rc);
	if (me.rank == 1) {
		printf("rank 1: %s\n", how);
		fflush(stdout);
		if (!strcmp(how, "kill9"))
			raise(SIGKILL);
		if (!strcmp(how, "fini5"))
			PMIx_Finalize(NULL, 0);
		_exit(5);
	}
	if (me.rank != 0)
		for (;;)
			pause();
	for (int i = 0; i < 3000 && !atomic_load(&got_event); i++)
		usleep(10000);
	if (!atomic_load(&got_event)) {
		printf("rank 0: no event\n");
		fflush(stdout);
		_exit(4);
	}
	if (!strcmp(then, "abort"))
		PMIx_Abort(7, "rank 0 gives up", NULL, 0);
	while (!strcmp(then, "stay"))
		pause();
	_exit(3);
}

int main(int argc, char **argv)
{
	pmix_status_t rc;
	int ret;

	if (argc < 2 || (strcmp(argv[1], "info") && (strcmp(argv[1], "notify") || argc < 3))) {
		fprintf(
		    stderr,
		    "usage: emulate_nodes_probe info | notify kill9|exit5|fini5 [stay|abort]\n");
		return 64;
	}
	rc = PMIx_Init(&me, NULL, 0);
	if (rc != PMIX_SUCCESS) {
		fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc));
		return 2;
	}
	if (!strcmp(argv[1], "info"))
		ret = info_mode();
	else
		ret = notify_mode(argv[2], argc > 3 ? argv[3] : "");
	rc = PMIx_Finalize(NULL, 0);
	if (rc != PMIX_SUCCESS)
		die("PMIx_Finalize", rc);
	return ret;
}
