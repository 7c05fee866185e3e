/*
 * bootstrap_events.c — peers the launcher reports gone. A launcher that
 * sees a rank die (killed by a signal, or exited without finalizing) can
 * tell the others through a PMIx event before it ends the job; mpilite-run
 * does. The engine registers for those events at start-up, so that a
 * process blocked on the dead peer reports it by name instead of being
 * killed silently or waiting for its transport to notice.
 *
 *   launcher                   PMIx thread (here)           progress (tag.c)
 *     rank 3 died ──notify──>  proc_event():
 *       PROC_TERM_WO_SYNC        lost[3] = exit status + 1
 *       affected proc = 3        ++gen (release)
 *                                                            idle pass: gen moved
 *                                                            -> ibx_ctx_peers_lost:
 *                                                               path op "lose" for 3
 *
 * The handler runs on PMIx's own thread: it only stores into atomics; the
 * failing of requests happens in the progress of the thread that owns the
 * context. Codes taken: PMIX_ERR_PROC_TERM_WO_SYNC (what mpilite-run and
 * PRRTE send), PMIX_EVENT_PROC_TERMINATED, PMIX_ERR_PROC_ABORTED_BY_SIG,
 * PMIX_ERR_PROC_KILLED_BY_CMD; the dead process is PMIX_EVENT_AFFECTED_PROC
 * (else the event's source), PMIX_EXIT_CODE its status when given. Events
 * about other namespaces or about ourselves are ignored.
 */
#include "bootstrap_int.h"

#include <stdlib.h>

/* The notification callback gets no pointer of ours; PMIx is initialised
 * once per process, so is this. */
static ibx_boot_t *events_owner;

static const pmix_status_t lost_codes[] = {
    PMIX_ERR_PROC_TERM_WO_SYNC,
    PMIX_EVENT_PROC_TERMINATED,
    PMIX_ERR_PROC_ABORTED_BY_SIG,
    PMIX_ERR_PROC_KILLED_BY_CMD,
};

/* The rank the event is about, or -1. */
static int event_rank(ibx_boot_t *boot, const pmix_proc_t *source, const pmix_info_t *info,
		      size_t ninfo, int *code_p)
{
	const pmix_proc_t *who = NULL;

	*code_p = -1;
	for (size_t i = 0; i < ninfo; i++) {
		if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
		    info[i].value.type == PMIX_PROC && info[i].value.data.proc)
			who = info[i].value.data.proc;
		else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT)
			*code_p = info[i].value.data.integer;
	}
	if (!who)
		who = source;
	if (!who || !PMIX_CHECK_NSPACE(who->nspace, boot->me.nspace))
		return -1;
	if (who->rank >= (pmix_rank_t)boot->size || (int)who->rank == boot->rank)
		return -1;
	return (int)who->rank;
}

static void proc_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
		       pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
		       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
	ibx_boot_t *boot = events_owner;
	int code, rank;

	(void)id, (void)results, (void)nresults;
	rank = boot ? event_rank(boot, source, info, ninfo, &code) : -1;
	if (rank >= 0) {
		/* 0 means alive: store the status + 1 (unknown: -1 + 1 = 0 would
		 * read as alive, so it becomes INT_MIN + 1, read back as -1) */
		int v = code >= 0 && code < INT_MAX ? code + 1 : INT_MIN + 1;

		atomic_store_explicit(&boot->lost[rank], v, memory_order_relaxed);
		atomic_fetch_add_explicit(&boot->lost_gen, 1, memory_order_release);
		(void)status;
	}
	if (cbfunc)
		cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

void ibx_boot_events_init(ibx_boot_t *boot)
{
	pmix_status_t rc;

	boot->lost = calloc((size_t)boot->size, sizeof(*boot->lost));
	if (!boot->lost) {
		ibx_warn("out of memory: lost peers will not be reported by the launcher");
		return;
	}
	events_owner = boot;
	rc = PMIx_Register_event_handler((pmix_status_t *)lost_codes,
					 sizeof(lost_codes) / sizeof(lost_codes[0]), NULL, 0,
					 proc_event, NULL, NULL);
	if (rc < 0) {
		/* the transport's own checks still find a dead peer */
		ibx_debug("PMIx_Register_event_handler: %s", PMIx_Error_string(rc));
		return;
	}
	boot->ev_id = (size_t)rc;
	boot->ev_registered = true;
}

void ibx_boot_events_fini(ibx_boot_t *boot)
{
	/* No PMIx_Deregister_event_handler: PMIx_Finalize, which follows,
	 * drops the handler, and a deregistration sent just before it cost
	 * 40 ms per rank at every exit (the two small messages back to back
	 * on the server's TCP socket: Nagle's algorithm held the second until
	 * the delayed acknowledgement of the first). With the owner cleared
	 * first, an event arriving meanwhile finds no context to mark. */
	boot->ev_registered = false;
	if (events_owner == boot)
		events_owner = NULL;
}

_Atomic unsigned *ibx_boot_lost_gen(ibx_boot_t *boot)
{
	return &boot->lost_gen;
}

bool ibx_boot_lost(const ibx_boot_t *boot, int rank, int *code_p)
{
	int v;

	if (!boot->lost || rank < 0 || rank >= boot->size)
		return false;
	v = atomic_load_explicit(&boot->lost[rank], memory_order_relaxed);
	if (!v)
		return false;
	*code_p = v == INT_MIN + 1 ? -1 : v - 1;
	return true;
}
