/*
 * nbc_persist.c — the persistent collectives of MPI-4.0 (§6.13, §8.8):
 * MPI_Barrier_init, MPI_Bcast_init, MPI_Gather(v)_init,
 * MPI_Scatter(v)_init, MPI_Allgather(v)_init, MPI_Alltoall(v/w)_init,
 * MPI_Reduce_init, MPI_Allreduce_init, MPI_Reduce_scatter(_block)_init,
 * MPI_Scan_init, MPI_Exscan_init and the five MPI_Neighbor_*_init.
 *
 * A persistent collective is a persistent request (p2p_persist.c) whose
 * operation is "the nonblocking collective with these arguments": the
 * init call keeps the arguments and MPI_Start makes the same MPI_I* call
 * again, its schedule started on the persistent request itself:
 *
 *   MPI_Allreduce_init ─► MPI_Iallreduce, built and checked, not started
 *                         (the same errors, at init) ─► inactive request
 *   MPI_Start          ─► MPI_Iallreduce on the request ─► active
 *   MPI_Wait / Test    ─► complete ─► inactive, startable again
 *
 * (mpil_nbc_redirect switches mpil_nbc_start between these.) The init,
 * collective as MPI-4.0 makes it, takes the operation's collective
 * sequence number (the tag its messages carry) and every start reuses it:
 * the members match a persistent collective by the order of their inits,
 * and may start several in different orders (MPICH's p_order). Two starts
 * of one request cannot mix up: a member starts it again only after its
 * previous run completed there, and its messages to each peer keep their
 * order.
 *
 * The request keeps its own copies of the count, displacement and type
 * arrays, of the derived datatypes (duplicates) and of a user-defined
 * operation, so
 * the caller may free or reuse any of them after the init; the buffers
 * are read and written at each start. The info argument is checked and
 * has no hints that change anything. Starting an active request is an
 * error (MPI_ERR_REQUEST), and cancelling one is erroneous as for every
 * nonblocking collective (MPI_ERR_REQUEST).
 */
#include "nbc_int.h"
#include "p2p_int.h"
#include "topo_int.h"

#include <stdlib.h>

enum pc_kind {
	PC_BARRIER,
	PC_BCAST,
	PC_GATHER,
	PC_GATHERV,
	PC_SCATTER,
	PC_SCATTERV,
	PC_ALLGATHER,
	PC_ALLGATHERV,
	PC_ALLTOALL,
	PC_ALLTOALLV,
	PC_ALLTOALLW,
	PC_REDUCE,
	PC_ALLREDUCE,
	PC_RED_SCAT,
	PC_RED_SCAT_BLOCK,
	PC_SCAN,
	PC_EXSCAN,
	PC_NB_ALLGATHER,
	PC_NB_ALLGATHERV,
	PC_NB_ALLTOALL,
	PC_NB_ALLTOALLV,
	PC_NB_ALLTOALLW,
};

#define PC_MAXHELD 2 /* the send and receive type of a call without type arrays */

/* The arguments of the call, as MPI_Start passes them again. */
typedef struct pcoll {
	int kind;     /* enum pc_kind */
	uint32_t seq; /* its collective sequence number, taken at init */
	MPI_Comm comm;
	const void *sbuf;
	void *rbuf;
	int scount, rcount, root;
	MPI_Datatype stype, rtype;
	int *scounts, *sdispls, *rcounts, *rdispls; /* copies, or NULL */
	MPI_Aint *sdispls_a, *rdispls_a;	    /* the neighbour alltoallw's */
	MPI_Datatype *stypes, *rtypes;
	MPI_Op op;
	struct mpil_op op_copy; /* a user's operation, which it may free */
	/* the request's duplicates of the caller's derived types */
	MPI_Datatype *held;
	int nheld;
	bool nomem;
} pcoll_t;

/* ---- the call, again ------------------------------------------------------------------------- */

static int pcoll_call(const pcoll_t *p, MPI_Request *rq)
{
	MPI_Comm c = p->comm;

	switch (p->kind) {
	case PC_BARRIER: return PMPI_Ibarrier(c, rq);
	case PC_BCAST: return PMPI_Ibcast(p->rbuf, p->rcount, p->rtype, p->root, c, rq);
	case PC_GATHER:
		return PMPI_Igather(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount, p->rtype,
				    p->root, c, rq);
	case PC_GATHERV:
		return PMPI_Igatherv(p->sbuf, p->scount, p->stype, p->rbuf, p->rcounts, p->rdispls,
				     p->rtype, p->root, c, rq);
	case PC_SCATTER:
		return PMPI_Iscatter(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount, p->rtype,
				     p->root, c, rq);
	case PC_SCATTERV:
		return PMPI_Iscatterv(p->sbuf, p->scounts, p->sdispls, p->stype, p->rbuf, p->rcount,
				      p->rtype, p->root, c, rq);
	case PC_ALLGATHER:
		return PMPI_Iallgather(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount, p->rtype,
				       c, rq);
	case PC_ALLGATHERV:
		return PMPI_Iallgatherv(p->sbuf, p->scount, p->stype, p->rbuf, p->rcounts,
					p->rdispls, p->rtype, c, rq);
	case PC_ALLTOALL:
		return PMPI_Ialltoall(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount, p->rtype, c,
				      rq);
	case PC_ALLTOALLV:
		return PMPI_Ialltoallv(p->sbuf, p->scounts, p->sdispls, p->stype, p->rbuf,
				       p->rcounts, p->rdispls, p->rtype, c, rq);
	case PC_ALLTOALLW:
		return PMPI_Ialltoallw(p->sbuf, p->scounts, p->sdispls, p->stypes, p->rbuf,
				       p->rcounts, p->rdispls, p->rtypes, c, rq);
	case PC_REDUCE:
		return PMPI_Ireduce(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, p->root, c, rq);
	case PC_ALLREDUCE:
		return PMPI_Iallreduce(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, c, rq);
	case PC_RED_SCAT:
		return PMPI_Ireduce_scatter(p->sbuf, p->rbuf, p->rcounts, p->rtype, p->op, c, rq);
	case PC_RED_SCAT_BLOCK:
		return PMPI_Ireduce_scatter_block(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, c,
						  rq);
	case PC_SCAN: return PMPI_Iscan(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, c, rq);
	case PC_EXSCAN: return PMPI_Iexscan(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, c, rq);
	case PC_NB_ALLGATHER:
		return PMPI_Ineighbor_allgather(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount,
						p->rtype, c, rq);
	case PC_NB_ALLGATHERV:
		return PMPI_Ineighbor_allgatherv(p->sbuf, p->scount, p->stype, p->rbuf, p->rcounts,
						 p->rdispls, p->rtype, c, rq);
	case PC_NB_ALLTOALL:
		return PMPI_Ineighbor_alltoall(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount,
					       p->rtype, c, rq);
	case PC_NB_ALLTOALLV:
		return PMPI_Ineighbor_alltoallv(p->sbuf, p->scounts, p->sdispls, p->stype, p->rbuf,
						p->rcounts, p->rdispls, p->rtype, c, rq);
	case PC_NB_ALLTOALLW:
		return PMPI_Ineighbor_alltoallw(p->sbuf, p->scounts, p->sdispls_a, p->stypes,
						p->rbuf, p->rcounts, p->rdispls_a, p->rtypes, c,
						rq);
	}
	return MPI_ERR_INTERN;
}

/* MPI_Start of the request @r (extra_start): the call on @r itself. */
static int pcoll_start(mpil_request_t *r, const char *fname)
{
	pcoll_t *p = r->persist->extra;
	MPI_Request rq;
	int err;

	(void)fname;
	mpil_nbc_redirect(false, r, &p->seq);
	err = pcoll_call(p, &rq);
	mpil_nbc_redirect(false, NULL, NULL);
	return err;
}

static void pcoll_free(void *arg)
{
	pcoll_t *p = arg;

	if (!p)
		return;
	for (int i = 0; i < p->nheld; i++)
		mpil_dt_release(p->held[i]); /* never the user's: no handle to free */
	free(p->held);
	free(p->scounts);
	free(p->sdispls);
	free(p->rcounts);
	free(p->rdispls);
	free(p->sdispls_a);
	free(p->rdispls_a);
	free(p->stypes);
	free(p->rtypes);
	free(p);
}

/* ---- keeping the arguments ------------------------------------------------------------------- */

/* A copy of @n elements of @size bytes at @a (NULL stays NULL). */
static void *keep_array(pcoll_t *p, const void *a, int n, size_t size)
{
	void *c;

	if (!a || n <= 0)
		return NULL;
	c = malloc((size_t)n * size);
	if (!c) {
		p->nomem = true;
		return NULL;
	}
	memcpy(c, a, (size_t)n * size);
	return c;
}

/* Replaces each committed derived type among @dts[n] by a duplicate of
 * the request's own (freed with it): the user may free the original,
 * and every MPI_Start checks the types again. */
static void own_types(pcoll_t *p, MPI_Datatype *dts, int n)
{
	MPI_Datatype *h;

	if (!dts || n <= 0)
		return;
	h = realloc(p->held, (size_t)(p->nheld + n) * sizeof(*h));
	if (!h) {
		p->nomem = true;
		return;
	}
	p->held = h;
	for (int i = 0; i < n; i++) {
		MPI_Datatype d;

		if (!mpil_dt_valid(dts[i]) || (dts[i]->flags & MPIL_DTF_PREDEFINED) ||
		    !(dts[i]->flags & MPIL_DTF_COMMITTED))
			continue; /* the call's checks say what is wrong */
		if (PMPI_Type_dup(dts[i], &d) != MPI_SUCCESS ||
		    PMPI_Type_commit(&d) != MPI_SUCCESS) {
			p->nomem = true;
			return;
		}
		p->held[p->nheld++] = d;
		dts[i] = d;
	}
}

static pcoll_t *pc_new(int kind, MPI_Comm comm)
{
	pcoll_t *p = calloc(1, sizeof(*p));

	if (p) {
		p->kind = kind;
		p->comm = comm;
	}
	return p;
}

static void pc_types(pcoll_t *p, MPI_Datatype st, MPI_Datatype rt)
{
	MPI_Datatype two[PC_MAXHELD] = {st, rt};

	own_types(p, two, PC_MAXHELD);
	p->stype = two[0];
	p->rtype = two[1];
}

static void pc_op(pcoll_t *p, MPI_Op op)
{
	p->op = op;
	if (op && op->magic == MPIL_MAGIC_OP && !op->predefined) {
		p->op_copy = *op;
		p->op = &p->op_copy;
	}
}

/* The number of processes whose blocks the v/w arrays describe, or the
 * neighbourhood's in- and out-degree; -1 if @comm is not valid (the
 * check of the call reports it). */
static int comm_n(MPI_Comm comm)
{
	return mpil_comm_valid(comm) ? comm->size : -1;
}

static void nb_degrees(MPI_Comm comm, int *in_p, int *out_p)
{
	*in_p = *out_p = 0;
	if (mpil_comm_valid(comm) && comm->topo) {
		const mpil_topo_t *t = comm->topo;

		*in_p = t->indeg;
		*out_p = t->outdeg;
	}
}

/* ---- making the request ---------------------------------------------------------------------- */

/* Checks @p by building its call once (the call's own checks, errors
 * raised as it raises them), then gives the user an inactive persistent
 * request for it. @p is consumed. */
static int pc_finish(pcoll_t *p, MPI_Comm comm, MPI_Info info, MPI_Request *request,
		     const char *fname)
{
	mpil_request_t *r;
	struct mpil_persist *ps;
	MPI_Request rq;
	int err;

	err = mpil_check_init(fname);
	if (err == MPI_SUCCESS)
		err = mpil_check_comm(comm, fname);
	if (err != MPI_SUCCESS) {
		pcoll_free(p);
		return err;
	}
	if (!request) {
		pcoll_free(p);
		return mpil_err(comm, MPI_ERR_ARG, fname, "request is NULL");
	}
	err = mpil_check_info(comm, info, true, fname);
	if (err != MPI_SUCCESS || !p || p->nomem) {
		pcoll_free(p);
		return err != MPI_SUCCESS
			   ? err
			   : mpil_err(comm, MPI_ERR_NO_MEM, fname, "no memory for the request");
	}
	mpil_nbc_redirect(true, NULL, NULL);
	err = pcoll_call(p, &rq);
	mpil_nbc_redirect(false, NULL, &p->seq);
	if (err != MPI_SUCCESS) {
		pcoll_free(p);
		return err;
	}
	r = mpil_req_alloc();
	ps = calloc(1, sizeof(*ps));
	if (!r || !ps) {
		free(ps);
		if (r)
			mpil_req_release(r);
		pcoll_free(p);
		return mpil_err(comm, MPI_ERR_NO_MEM, fname, "no memory for the request");
	}
	mpil_req_hold(r, comm, NULL);
	r->kind = MPIL_REQ_NBC;
	ps->op = MPIL_PERSIST_COLL;
	ps->active = false;
	ps->extra = p;
	ps->extra_start = pcoll_start;
	ps->extra_free = pcoll_free;
	r->persist = ps;
	*request = r;
	return MPI_SUCCESS;
}

/* The arguments of the calls that take (sendbuf, sendcount, sendtype,
 * recvbuf, recvcount, recvtype). */
static pcoll_t *pc_blocks(int kind, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			  int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	pcoll_t *p = pc_new(kind, comm);

	if (p) {
		p->sbuf = sbuf;
		p->scount = scount;
		p->rbuf = rbuf;
		p->rcount = rcount;
		p->root = root;
		pc_types(p, stype, rtype);
	}
	return p;
}

/* The reductions: (sendbuf, recvbuf, count, datatype, op). */
static pcoll_t *pc_reduce(int kind, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
			  MPI_Op op, int root, MPI_Comm comm)
{
	pcoll_t *p = pc_blocks(kind, sbuf, 0, NULL, rbuf, count, dt, root, comm);

	if (p)
		pc_op(p, op);
	return p;
}

/* ---- entry points ---------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Barrier_init)
int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPIL_CS_GUARD();

	return pc_finish(pc_new(PC_BARRIER, comm), comm, info, request, "MPI_Barrier_init");
}

MPIL_PMPI_ALIAS(Bcast_init)
int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
		    MPI_Info info, MPI_Request *request)
{
	MPIL_CS_GUARD();

	return pc_finish(pc_blocks(PC_BCAST, NULL, 0, NULL, buffer, count, datatype, root, comm),
			 comm, info, request, "MPI_Bcast_init");
}

MPIL_PMPI_ALIAS(Gather_init)
int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
		     MPI_Request *request)
{
	MPIL_CS_GUARD();

	return pc_finish(pc_blocks(PC_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
				   recvtype, root, comm),
			 comm, info, request, "MPI_Gather_init");
}

MPIL_PMPI_ALIAS(Gatherv_init)
int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
		      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPIL_CS_GUARD();
	pcoll_t *p =
	    pc_blocks(PC_GATHERV, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, root, comm);

	if (p) {
		p->rcounts = keep_array(p, recvcounts, comm_n(comm), sizeof(int));
		p->rdispls = keep_array(p, displs, comm_n(comm), sizeof(int));
	}
	return pc_finish(p, comm, info, request, "MPI_Gatherv_init");
}

MPIL_PMPI_ALIAS(Scatter_init)
int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
		      MPI_Request *request)
{
	MPIL_CS_GUARD();

	return pc_finish(pc_blocks(PC_SCATTER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
				   recvtype, root, comm),
			 comm, info, request, "MPI_Scatter_init");
}

MPIL_PMPI_ALIAS(Scatterv_init)
int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
		       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
		       int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPIL_CS_GUARD();
	pcoll_t *p =
	    pc_blocks(PC_SCATTERV, sendbuf, 0, sendtype, recvbuf, recvcount, recvtype, root, comm);

	if (p) {
		p->scounts = keep_array(p, sendcounts, comm_n(comm), sizeof(int));
		p->sdispls = keep_array(p, displs, comm_n(comm), sizeof(int));
	}
	return pc_finish(p, comm, info, request, "MPI_Scatterv_init");
}

MPIL_PMPI_ALIAS(Allgather_init)
int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
			MPI_Request *request)
{
	MPIL_CS_GUARD();

	return pc_finish(pc_blocks(PC_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
				   recvtype, 0, comm),
			 comm, info, request, "MPI_Allgather_init");
}

MPIL_PMPI_ALIAS(Allgatherv_init)
int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			 const int recvcounts[], const int displs[], MPI_Datatype recvtype,
			 MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPIL_CS_GUARD();
	pcoll_t *p =
	    pc_blocks(PC_ALLGATHERV, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, 0, comm);

	if (p) {
		p->rcounts = keep_array(p, recvcounts, comm_n(comm), sizeof(int));
		p->rdispls = keep_array(p, displs, comm_n(comm), sizeof(int));
	}
	return pc_finish(p, comm, info, request, "MPI_Allgatherv_init");
}

MPIL_PMPI_ALIAS(Alltoall_init)
int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
		       MPI_Request *request)
{
	MPIL_CS_GUARD();

	return pc_finish(pc_blocks(PC_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf, recvcount,
				   recvtype, 0, comm),
			 comm, info, request, "MPI_Alltoall_init");
}

/* The four arrays of an alltoallv / alltoallw (n blocks each way). */
static void keep_v(pcoll_t *p, int nsend, int nrecv, const int *scounts, const int *sdispls,
		   const int *rcounts, const int *rdispls)
{
	p->scounts = keep_array(p, scounts, nsend, sizeof(int));
	p->sdispls = keep_array(p, sdispls, nsend, sizeof(int));
	p->rcounts = keep_array(p, rcounts, nrecv, sizeof(int));
	p->rdispls = keep_array(p, rdispls, nrecv, sizeof(int));
}

MPIL_PMPI_ALIAS(Alltoallv_init)
int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
			MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
			MPI_Request *request)
{
	MPIL_CS_GUARD();
	pcoll_t *p = pc_blocks(PC_ALLTOALLV, sendbuf, 0, sendtype, recvbuf, 0, recvtype, 0, comm);
	int n = comm_n(comm);

	if (p)
		keep_v(p, n, n, sendcounts, sdispls, recvcounts, rdispls);
	return pc_finish(p, comm, info, request, "MPI_Alltoallv_init");
}

/* The type arrays of the w forms, kept and held. */
static void keep_w_types(pcoll_t *p, int nsend, int nrecv, const MPI_Datatype *stypes,
			 const MPI_Datatype *rtypes)
{
	p->stypes = keep_array(p, stypes, nsend, sizeof(MPI_Datatype));
	p->rtypes = keep_array(p, rtypes, nrecv, sizeof(MPI_Datatype));
	/* MPI_IN_PLACE leaves the send types undefined */
	own_types(p, p->stypes, p->sbuf == MPI_IN_PLACE ? 0 : nsend);
	own_types(p, p->rtypes, nrecv);
}

MPIL_PMPI_ALIAS(Alltoallw_init)
int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
			const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
			MPI_Info info, MPI_Request *request)
{
	MPIL_CS_GUARD();
	pcoll_t *p = pc_blocks(PC_ALLTOALLW, sendbuf, 0, NULL, recvbuf, 0, NULL, 0, comm);
	int n = comm_n(comm);

	if (p) {
		keep_v(p, n, n, sendcounts, sdispls, recvcounts, rdispls);
		keep_w_types(p, n, n, sendtypes, recvtypes);
	}
	return pc_finish(p, comm, info, request, "MPI_Alltoallw_init");
}

MPIL_PMPI_ALIAS(Reduce_init)
int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPIL_CS_GUARD();

	return pc_finish(pc_reduce(PC_REDUCE, sendbuf, recvbuf, count, datatype, op, root, comm),
			 comm, info, request, "MPI_Reduce_init");
}

MPIL_PMPI_ALIAS(Allreduce_init)
int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPIL_CS_GUARD();

	return pc_finish(pc_reduce(PC_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, 0, comm),
			 comm, info, request, "MPI_Allreduce_init");
}

MPIL_PMPI_ALIAS(Reduce_scatter_init)
int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
			     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
			     MPI_Request *request)
{
	MPIL_CS_GUARD();
	pcoll_t *p = pc_reduce(PC_RED_SCAT, sendbuf, recvbuf, 0, datatype, op, 0, comm);

	if (p)
		p->rcounts = keep_array(p, recvcounts, comm_n(comm), sizeof(int));
	return pc_finish(p, comm, info, request, "MPI_Reduce_scatter_init");
}

MPIL_PMPI_ALIAS(Reduce_scatter_block_init)
int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
				   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
				   MPI_Request *request)
{
	MPIL_CS_GUARD();

	return pc_finish(
	    pc_reduce(PC_RED_SCAT_BLOCK, sendbuf, recvbuf, recvcount, datatype, op, 0, comm), comm,
	    info, request, "MPI_Reduce_scatter_block_init");
}

MPIL_PMPI_ALIAS(Scan_init)
int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPIL_CS_GUARD();

	return pc_finish(pc_reduce(PC_SCAN, sendbuf, recvbuf, count, datatype, op, 0, comm), comm,
			 info, request, "MPI_Scan_init");
}

MPIL_PMPI_ALIAS(Exscan_init)
int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	MPIL_CS_GUARD();

	return pc_finish(pc_reduce(PC_EXSCAN, sendbuf, recvbuf, count, datatype, op, 0, comm), comm,
			 info, request, "MPI_Exscan_init");
}

MPIL_PMPI_ALIAS(Neighbor_allgather_init)
int PMPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				 void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
				 MPI_Info info, MPI_Request *request)
{
	MPIL_CS_GUARD();

	return pc_finish(pc_blocks(PC_NB_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
				   recvcount, recvtype, 0, comm),
			 comm, info, request, "MPI_Neighbor_allgather_init");
}

MPIL_PMPI_ALIAS(Neighbor_allgatherv_init)
int PMPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				  void *recvbuf, const int recvcounts[], const int displs[],
				  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
				  MPI_Request *request)
{
	MPIL_CS_GUARD();
	pcoll_t *p = pc_blocks(PC_NB_ALLGATHERV, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype,
			       0, comm);
	int in, out;

	nb_degrees(comm, &in, &out);
	if (p) {
		p->rcounts = keep_array(p, recvcounts, in, sizeof(int));
		p->rdispls = keep_array(p, displs, in, sizeof(int));
	}
	return pc_finish(p, comm, info, request, "MPI_Neighbor_allgatherv_init");
}

MPIL_PMPI_ALIAS(Neighbor_alltoall_init)
int PMPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
				MPI_Info info, MPI_Request *request)
{
	MPIL_CS_GUARD();

	return pc_finish(pc_blocks(PC_NB_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf, recvcount,
				   recvtype, 0, comm),
			 comm, info, request, "MPI_Neighbor_alltoall_init");
}

MPIL_PMPI_ALIAS(Neighbor_alltoallv_init)
int PMPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
				 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
				 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
				 MPI_Info info, MPI_Request *request)
{
	MPIL_CS_GUARD();
	pcoll_t *p =
	    pc_blocks(PC_NB_ALLTOALLV, sendbuf, 0, sendtype, recvbuf, 0, recvtype, 0, comm);
	int in, out;

	nb_degrees(comm, &in, &out);
	if (p)
		keep_v(p, out, in, sendcounts, sdispls, recvcounts, rdispls);
	return pc_finish(p, comm, info, request, "MPI_Neighbor_alltoallv_init");
}

MPIL_PMPI_ALIAS(Neighbor_alltoallw_init)
int PMPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
				 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
				 void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
				 const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
				 MPI_Request *request)
{
	MPIL_CS_GUARD();
	pcoll_t *p = pc_blocks(PC_NB_ALLTOALLW, sendbuf, 0, NULL, recvbuf, 0, NULL, 0, comm);
	int in, out;

	nb_degrees(comm, &in, &out);
	if (p) {
		p->scounts = keep_array(p, sendcounts, out, sizeof(int));
		p->rcounts = keep_array(p, recvcounts, in, sizeof(int));
		p->sdispls_a = keep_array(p, sdispls, out, sizeof(MPI_Aint));
		p->rdispls_a = keep_array(p, rdispls, in, sizeof(MPI_Aint));
		keep_w_types(p, out, in, sendtypes, recvtypes);
	}
	return pc_finish(p, comm, info, request, "MPI_Neighbor_alltoallw_init");
}
