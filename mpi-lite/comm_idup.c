/*
 * comm_idup.c — MPI_Comm_idup and MPI_Comm_idup_with_info: the agreement
 * on the new communicator's id (comm_cid.c) run as a nonblocking
 * collective schedule (nbc.c), so that the call returns at once and the
 * agreement moves in the background of any MPI call, like MPI_Ibarrier.
 *
 * The schedule is the blocking agreement's two exchanges, each a
 * dissemination all-OR over the parent's collective context, with a call
 * step that decides between them:
 *
 *   call:  map ─► [send map ─► r+2^k, recv ◄─ r-2^k; OR]... ─► pick
 *   pick:  c = choice in the union; hold c here
 *          [send (map, !held) ...; OR]...                   ─► confirm
 *   confirm: every member held c ─► the duplicate (mpil_comm_dup_make),
 *                                   *newcomm set, request complete
 *            one did not          ─► let c go, pick again (next attempt)
 *
 * The confirmation always runs: while this agreement is under way, others
 * of this process (blocking ones, other idups) may take ids, and they in
 * turn confirm theirs because this one is under way (mpil_cid_busy).
 * Nothing waits for another agreement, so members may start their idups
 * and blocking creations in different orders on different communicators
 * (MPICH's comm_idup_overlap and comm_create_group_idup).
 *
 * The duplicate is made when the agreement ends: its attributes are
 * copied then (the copy callbacks run inside whichever MPI call completes
 * the agreement), its hints are the parent's then or the caller's info
 * (copied at the call). *newcomm is written at completion only, as the
 * standard allows; an error completes the request with its class.
 */
#include "comm_int.h"
#include "nbc_int.h"

#define IDUP_MAP  MPIL_CID_WORDS /* the words of a map */
#define IDUP_LEN  (IDUP_MAP + 1) /* map and one flag word */
#define IDUP_FLAG IDUP_MAP	 /* the flag word: "did not hold it" */

typedef struct idup {
	MPI_Comm parent;
	MPI_Comm *newcomm;
	MPI_Info info; /* the hints to give (a copy), or MPI_INFO_NULL for the parent's */
	bool dup_info;
	uint64_t key;	  /* the same at every member */
	unsigned attempt; /* of the pick */
	uint32_t cid;	  /* the id picked */
	bool held;	  /* ...and held here */
	uint64_t w[IDUP_LEN], in[IDUP_LEN];
} idup_t;

static void idup_pick(nbc_sched_t *s, void *arg);

/* ---- the all-OR ------------------------------------------------------------------------------ */

static void idup_or(nbc_sched_t *s, void *arg)
{
	idup_t *d = arg;

	(void)s;
	for (int i = 0; i < IDUP_LEN; i++)
		d->w[i] |= d->in[i];
}

/* Appends the dissemination all-OR of d->w among the parent's members,
 * then a call of @then. */
static void idup_exchange(nbc_sched_t *s, idup_t *d, nbc_fn_t then)
{
	int n = d->parent->size, me = d->parent->rank, tag = 0;

	for (int k = 1; k < n; k <<= 1, tag++) {
		mpil_nbc_recv(s, d->in, sizeof(d->in), (me - k + n) % n, tag);
		mpil_nbc_send(s, d->w, sizeof(d->w), (me + k) % n, tag);
		mpil_nbc_call(s, idup_or, d);
	}
	mpil_nbc_call(s, then, d);
}

/* ---- deciding -------------------------------------------------------------------------------- */

static void idup_confirm(nbc_sched_t *s, void *arg)
{
	idup_t *d = arg;
	const char *what;
	MPI_Comm c;
	int err;

	if (d->w[IDUP_FLAG]) { /* a member could not hold it */
		if (d->held)
			mpil_cid_mark(d->cid, false);
		d->held = false;
		d->attempt++;
		idup_pick(s, d); /* from the fresh maps in d->w */
		return;
	}
	d->held = false; /* the duplicate owns it now, or let it go */
	err = mpil_comm_dup_make(d->parent, d->cid, d->info, d->dup_info, &c, &what);
	if (err != MPI_SUCCESS) {
		mpil_nbc_fail(s, err);
		return;
	}
	*d->newcomm = c;
}

static void idup_pick(nbc_sched_t *s, void *arg)
{
	idup_t *d = arg;

	d->cid = mpil_cid_pick(d->w, d->key, d->attempt);
	if (d->cid == 0) { /* every member sees the same full union */
		mpil_nbc_fail(s, MPI_ERR_OTHER);
		return;
	}
	d->held = mpil_cid_reserve(d->cid);
	mpil_cid_snapshot(d->w);
	d->w[IDUP_FLAG] = !d->held;
	idup_exchange(s, d, idup_confirm);
}

/* However the schedule ends: the id let go if it is still only held. */
static void idup_end(nbc_sched_t *s, void *arg)
{
	idup_t *d = arg;

	(void)s;
	if (d->held)
		mpil_cid_mark(d->cid, false);
	d->held = false;
	mpil_info_release(d->info);
	mpil_cid_nb_end();
}

/* ---- entry points ---------------------------------------------------------------------------- */

static int comm_idup(MPI_Comm comm, MPI_Info info, bool dup_info, MPI_Comm *newcomm,
		     MPI_Request *request, const char *fname)
{
	nbc_sched_t *s;
	idup_t *d;

	MPIL_CHECK(mpil_nbc_check(comm, request, fname));
	if (!newcomm)
		return mpil_err(comm, MPI_ERR_ARG, fname, "newcomm is NULL");
	if (!dup_info)
		MPIL_CHECK(mpil_check_info(comm, info, true, fname));
	s = mpil_nbc_new(comm);
	if (!s)
		return mpil_err(comm, MPI_ERR_NO_MEM, fname, "no memory for the agreement");
	d = mpil_nbc_tmp(s, sizeof(*d));
	if (d) {
		*d = (idup_t){.parent = comm,
			      .newcomm = newcomm,
			      .info = MPI_INFO_NULL,
			      .dup_info = dup_info,
			      .key = (uint64_t)comm->cid << 32 | mpil_nbc_id(s)};
		mpil_cid_nb_begin();
		mpil_nbc_on_end(s, idup_end, d);
		if (!dup_info && mpil_info_copy(info, &d->info) != MPI_SUCCESS)
			mpil_nbc_fail(s, MPI_ERR_NO_MEM);
		mpil_cid_snapshot(d->w);
		idup_exchange(s, d, idup_pick);
	}
	return mpil_nbc_start(s, fname, request);
}

MPIL_PMPI_ALIAS(Comm_idup)
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
	MPIL_CS_GUARD();

	return comm_idup(comm, MPI_INFO_NULL, true, newcomm, request, "MPI_Comm_idup");
}

MPIL_PMPI_ALIAS(Comm_idup_with_info)
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
	MPIL_CS_GUARD();

	return comm_idup(comm, info, false, newcomm, request, "MPI_Comm_idup_with_info");
}
