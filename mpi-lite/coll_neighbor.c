/*
 * coll_neighbor.c — the blocking neighbourhood collectives (MPI-3.1
 * §7.6): MPI_Neighbor_allgather(v) and MPI_Neighbor_alltoall(v/w) on
 * communicators with a Cartesian, graph or distributed graph topology.
 *
 * A process sends its blocks to its destinations and receives its blocks
 * from its sources, the neighbourhood lists of its topology (topo_int.h):
 * block i of the send side goes to out[i], block i of the receive side
 * comes from in[i]. Each is one block exchange (coll_exchange.c) on the
 * collective context, so neighbour messages never meet user messages.
 *
 * Tags pair the blocks up. Graph and distributed graph neighbourhoods use
 * one tag: blocks between two processes pair in list order (with several
 * edges between them, the k-th edge at one end is the k-th at the other,
 * which MPI_Dist_graph_create guarantees and the standard asks of
 * MPI_Graph_create's symmetric graphs). A Cartesian neighbourhood tags
 * each block with its dimension and direction:
 *
 *   dims {2}, periodic:   rank 0's -1 and +1 neighbours are both rank 1
 *     rank 1 block 0 (to its -1 side)  ──tag d0-──►  rank 0 block 1 (from +1)
 *     rank 1 block 1 (to its +1 side)  ──tag d0+──►  rank 0 block 0 (from -1)
 *
 * as in Open MPI and MPICH, and the same for a process that is its own
 * neighbour (a periodic dimension of size 1). At an open edge the
 * neighbour is MPI_PROC_NULL: its block is neither sent nor received and
 * its receive buffer is left as it was.
 *
 * MPI_IN_PLACE is not allowed (the standard does not define it here).
 */
#include "coll_int.h"
#include "topo_int.h"

/* One call: the blocks of every neighbour, sends then receives. */
typedef struct nb_call {
	MPI_Comm comm;
	const mpil_topo_t *t;
	coll_xblk_t *send, *recv;
} nb_call_t;

/* The topology of @comm and the first checks every neighbour collective
 * makes; NULL with *err_p set when they fail. */
static const mpil_topo_t *nb_topo(MPI_Comm comm, const void *sendbuf, const void *recvbuf,
				  int *err_p, const char *F)
{
	const mpil_topo_t *t = mpil_topo_get(comm, 0, err_p, F);

	if (t && (sendbuf == MPI_IN_PLACE || recvbuf == MPI_IN_PLACE)) {
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
	c->send = malloc(((size_t)t->outdeg + (size_t)t->indeg + 1) * sizeof(*c->send));
	if (!c->send)
		return mpil_coll_failed(comm, MPI_ERR_NO_MEM, F);
	c->recv = c->send + t->outdeg;
	return MPI_SUCCESS;
}

/* Send block @i: to out[i]. */
static void nb_send(nb_call_t *c, int i, const void *buf, MPI_Aint displ, int count,
		    MPI_Datatype dt)
{
	const mpil_topo_t *t = c->t;
	int tag = t->kind == MPI_CART ? CT_NEIGHBOR_CART + i : CT_NEIGHBOR;

	mpil_coll_xblk_set(&c->send[i], buf, displ, count, dt, t->out[i], tag);
}

/* Receive block @i: from in[i]. In a grid, what comes from the -1 side
 * (i = 2d) was sent towards +1 (tag 2d + 1), and the other way round. */
static void nb_recv(nb_call_t *c, int i, const void *buf, MPI_Aint displ, int count,
		    MPI_Datatype dt)
{
	const mpil_topo_t *t = c->t;
	int tag = t->kind == MPI_CART ? CT_NEIGHBOR_CART + (i ^ 1) : CT_NEIGHBOR;

	mpil_coll_xblk_set(&c->recv[i], buf, displ, count, dt, t->in[i], tag);
}

static int nb_finish(nb_call_t *c, const char *F)
{
	int err = mpil_coll_exchange(c->comm, c->send, c->t->outdeg, c->recv, c->t->indeg);

	free(c->send);
	return coll_done(c->comm, err, F);
}

/* A send side of regular blocks: (@count, @dt) and the buffer. */
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

MPIL_PMPI_ALIAS(Neighbor_allgather)
int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char F[] = "MPI_Neighbor_allgather";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	nb_call_t c;
	int err;

	t = nb_topo(comm, sendbuf, recvbuf, &err, F);
	if (!t)
		return err;
	MPIL_CHECK(check_regular(comm, sendbuf, sendcount, sendtype, t->outdeg, F));
	MPIL_CHECK(check_regular(comm, recvbuf, recvcount, recvtype, t->indeg, F));
	MPIL_CHECK(nb_begin(&c, comm, t, F));
	for (int i = 0; i < t->outdeg; i++)
		nb_send(&c, i, sendbuf, 0, sendcount, sendtype);
	for (int i = 0; i < t->indeg; i++)
		nb_recv(&c, i, recvbuf, (MPI_Aint)i * recvcount * recvtype->extent, recvcount,
			recvtype);
	return nb_finish(&c, F);
}

MPIL_PMPI_ALIAS(Neighbor_allgatherv)
int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			     void *recvbuf, const int recvcounts[], const int displs[],
			     MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char F[] = "MPI_Neighbor_allgatherv";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	nb_call_t c;
	int err;

	t = nb_topo(comm, sendbuf, recvbuf, &err, F);
	if (!t)
		return err;
	MPIL_CHECK(check_regular(comm, sendbuf, sendcount, sendtype, t->outdeg, F));
	MPIL_CHECK(check_v(comm, recvbuf, recvcounts, displs, recvtype, t->indeg, "recvcounts", F));
	MPIL_CHECK(nb_begin(&c, comm, t, F));
	for (int i = 0; i < t->outdeg; i++)
		nb_send(&c, i, sendbuf, 0, sendcount, sendtype);
	for (int i = 0; i < t->indeg; i++)
		nb_recv(&c, i, recvbuf, (MPI_Aint)displs[i] * recvtype->extent, recvcounts[i],
			recvtype);
	return nb_finish(&c, F);
}

MPIL_PMPI_ALIAS(Neighbor_alltoall)
int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char F[] = "MPI_Neighbor_alltoall";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	nb_call_t c;
	int err;

	t = nb_topo(comm, sendbuf, recvbuf, &err, F);
	if (!t)
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
	return nb_finish(&c, F);
}

MPIL_PMPI_ALIAS(Neighbor_alltoallv)
int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
			    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char F[] = "MPI_Neighbor_alltoallv";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	nb_call_t c;
	int err;

	t = nb_topo(comm, sendbuf, recvbuf, &err, F);
	if (!t)
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
	return nb_finish(&c, F);
}

MPIL_PMPI_ALIAS(Neighbor_alltoallw)
int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
			    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	static const char F[] = "MPI_Neighbor_alltoallw";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	nb_call_t c;
	int err;

	t = nb_topo(comm, sendbuf, recvbuf, &err, F);
	if (!t)
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
	return nb_finish(&c, F);
}
