/*
 * nbc_neighbor.c — the nonblocking neighbourhood collectives (MPI-3.1
 * §7.7): MPI_Ineighbor_allgather(v) and MPI_Ineighbor_alltoall(v/w), the
 * blocking forms' checks and blocks (coll_neighbor.c explains who sends
 * what to whom) as one schedule: every block is received from in[i] and
 * sent to out[i] in a single round (mpil_nbc_exchange).
 *
 * Step tags pair the blocks as the blocking forms' tags do: 0 for graph
 * and distributed graph neighbourhoods (blocks between two processes pair
 * in list order); in a grid 1 + the block's direction index, a block that
 * comes from the -1 side of dimension d (receive block 2d) having been
 * sent towards +1 (send block 2d + 1).
 */
#include "nbc_int.h"
#include "topo_int.h"

/* One call: its schedule and the blocks of every neighbour. */
typedef struct nb_call {
	MPI_Comm comm;
	const mpil_topo_t *t;
	nbc_sched_t *s;
	coll_xblk_t *send, *recv;
} nb_call_t;

/* The topology of @comm and the first checks every call makes; NULL with
 * *err_p set when they fail. */
static const mpil_topo_t *nb_topo(MPI_Comm comm, const void *sendbuf, const void *recvbuf,
				  MPI_Request *request, int *err_p, const char *F)
{
	const mpil_topo_t *t = mpil_topo_get(comm, 0, err_p, F);

	if (!t)
		return NULL;
	if (!request) {
		*err_p = mpil_err(comm, MPI_ERR_ARG, F, "request is NULL");
		return NULL;
	}
	if (sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE) {
		*err_p =
		    mpil_err(comm, MPI_ERR_BUFFER, F, "MPI_IN_PLACE in a neighbourhood collective");
		return NULL;
	}
	return t;
}

static int nb_begin(nb_call_t *c, MPI_Comm comm, const mpil_topo_t *t, const char *F)
{
	c->comm = comm;
	c->t = t;
	c->s = mpil_nbc_new(comm);
	if (!c->s)
		return mpil_coll_failed(comm, MPI_ERR_NO_MEM, F);
	c->send = mpil_nbc_tmp(c->s, ((size_t)t->outdeg + (size_t)t->indeg + 1) * sizeof(*c->send));
	c->recv = c->send ? c->send + t->outdeg : NULL;
	return MPI_SUCCESS;
}

/* Send block @i: to out[i]. */
static void nb_send(nb_call_t *c, int i, const void *buf, MPI_Aint displ, int count,
		    MPI_Datatype dt)
{
	const mpil_topo_t *t = c->t;

	if (c->send)
		mpil_coll_xblk_set(&c->send[i], buf, displ, count, dt, t->out[i],
				   t->kind == MPI_CART ? 1 + i : 0);
}

/* Receive block @i: from in[i], sent towards the opposite side. */
static void nb_recv(nb_call_t *c, int i, const void *buf, MPI_Aint displ, int count,
		    MPI_Datatype dt)
{
	const mpil_topo_t *t = c->t;

	if (c->recv)
		mpil_coll_xblk_set(&c->recv[i], buf, displ, count, dt, t->in[i],
				   t->kind == MPI_CART ? 1 + (i ^ 1) : 0);
}

static int nb_start(nb_call_t *c, MPI_Request *request, const char *F)
{
	if (c->send)
		mpil_nbc_exchange(c->s, c->send, c->t->outdeg, c->recv, c->t->indeg);
	return mpil_nbc_start(c->s, F, request);
}

/* A side of regular blocks: (@count, @dt) and the buffer. */
static int check_regular(MPI_Comm comm, const void *buf, int count, MPI_Datatype dt, int nblocks,
			 const char *F)
{
	MPIL_CHECK(mpil_coll_check_typed(comm, count, dt, F));
	return mpil_check_buf(comm, buf, nblocks > 0 ? count : 0, dt, F);
}

/* A side of v blocks: @n counts and displacements, the type, the buffer. */
static int check_v(MPI_Comm comm, const void *buf, const int *counts, const int *displs,
		   MPI_Datatype dt, int n, const char *what, const char *F)
{
	long long total = 0;

	MPIL_CHECK(mpil_check_dtype(comm, dt, F));
	if (n == 0)
		return MPI_SUCCESS;
	MPIL_CHECK(mpil_coll_check_counts(comm, counts, n, what, &total, F));
	MPIL_CHECK(mpil_coll_check_displs(comm, displs, "displacements", F));
	return mpil_coll_check_vbuf(comm, buf, total, dt, F);
}

MPIL_PMPI_ALIAS(Ineighbor_allgather)
int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			     void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
			     MPI_Request *request)
{
	static const char F[] = "MPI_Ineighbor_allgather";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	nb_call_t c;
	int err;

	if (!(t = nb_topo(comm, sendbuf, recvbuf, request, &err, F)))
		return err;
	MPIL_CHECK(check_regular(comm, sendbuf, sendcount, sendtype, t->outdeg, F));
	MPIL_CHECK(check_regular(comm, recvbuf, recvcount, recvtype, t->indeg, F));
	MPIL_CHECK(nb_begin(&c, comm, t, F));
	for (int i = 0; i < t->outdeg; i++)
		nb_send(&c, i, sendbuf, 0, sendcount, sendtype);
	for (int i = 0; i < t->indeg; i++)
		nb_recv(&c, i, recvbuf, (MPI_Aint)i * recvcount * recvtype->extent, recvcount,
			recvtype);
	return nb_start(&c, request, F);
}

MPIL_PMPI_ALIAS(Ineighbor_allgatherv)
int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			      void *recvbuf, const int recvcounts[], const int displs[],
			      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	static const char F[] = "MPI_Ineighbor_allgatherv";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	nb_call_t c;
	int err;

	if (!(t = nb_topo(comm, sendbuf, recvbuf, request, &err, F)))
		return err;
	MPIL_CHECK(check_regular(comm, sendbuf, sendcount, sendtype, t->outdeg, F));
	MPIL_CHECK(check_v(comm, recvbuf, recvcounts, displs, recvtype, t->indeg, "recvcounts", F));
	MPIL_CHECK(nb_begin(&c, comm, t, F));
	for (int i = 0; i < t->outdeg; i++)
		nb_send(&c, i, sendbuf, 0, sendcount, sendtype);
	for (int i = 0; i < t->indeg; i++)
		nb_recv(&c, i, recvbuf, (MPI_Aint)displs[i] * recvtype->extent, recvcounts[i],
			recvtype);
	return nb_start(&c, request, F);
}

MPIL_PMPI_ALIAS(Ineighbor_alltoall)
int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
			    MPI_Request *request)
{
	static const char F[] = "MPI_Ineighbor_alltoall";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	nb_call_t c;
	int err;

	if (!(t = nb_topo(comm, sendbuf, recvbuf, request, &err, F)))
		return err;
	MPIL_CHECK(check_regular(comm, sendbuf, sendcount, sendtype, t->outdeg, F));
	MPIL_CHECK(check_regular(comm, recvbuf, recvcount, recvtype, t->indeg, F));
	MPIL_CHECK(nb_begin(&c, comm, t, F));
	for (int i = 0; i < t->outdeg; i++)
		nb_send(&c, i, sendbuf, (MPI_Aint)i * sendcount * sendtype->extent, sendcount,
			sendtype);
	for (int i = 0; i < t->indeg; i++)
		nb_recv(&c, i, recvbuf, (MPI_Aint)i * recvcount * recvtype->extent, recvcount,
			recvtype);
	return nb_start(&c, request, F);
}

MPIL_PMPI_ALIAS(Ineighbor_alltoallv)
int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
			     MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			     const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
			     MPI_Request *request)
{
	static const char F[] = "MPI_Ineighbor_alltoallv";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	nb_call_t c;
	int err;

	if (!(t = nb_topo(comm, sendbuf, recvbuf, request, &err, F)))
		return err;
	MPIL_CHECK(
	    check_v(comm, sendbuf, sendcounts, sdispls, sendtype, t->outdeg, "sendcounts", F));
	MPIL_CHECK(
	    check_v(comm, recvbuf, recvcounts, rdispls, recvtype, t->indeg, "recvcounts", F));
	MPIL_CHECK(nb_begin(&c, comm, t, F));
	for (int i = 0; i < t->outdeg; i++)
		nb_send(&c, i, sendbuf, (MPI_Aint)sdispls[i] * sendtype->extent, sendcounts[i],
			sendtype);
	for (int i = 0; i < t->indeg; i++)
		nb_recv(&c, i, recvbuf, (MPI_Aint)rdispls[i] * recvtype->extent, recvcounts[i],
			recvtype);
	return nb_start(&c, request, F);
}

MPIL_PMPI_ALIAS(Ineighbor_alltoallw)
int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
			     const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
			     MPI_Comm comm, MPI_Request *request)
{
	static const char F[] = "MPI_Ineighbor_alltoallw";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	nb_call_t c;
	int err;

	if (!(t = nb_topo(comm, sendbuf, recvbuf, request, &err, F)))
		return err;
	MPIL_CHECK(
	    mpil_coll_check_wblocks(comm, sendcounts, sdispls, sendtypes, t->outdeg, "send", F));
	MPIL_CHECK(
	    mpil_coll_check_wblocks(comm, recvcounts, rdispls, recvtypes, t->indeg, "recv", F));
	MPIL_CHECK(nb_begin(&c, comm, t, F));
	for (int i = 0; i < t->outdeg; i++)
		nb_send(&c, i, sendbuf, sdispls[i], sendcounts[i], sendtypes[i]);
	for (int i = 0; i < t->indeg; i++)
		nb_recv(&c, i, recvbuf, rdispls[i], recvcounts[i], recvtypes[i]);
	return nb_start(&c, request, F);
}
