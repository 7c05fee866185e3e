/*
 * topo_int.h — process topologies (MPI-3.1 chapter 7), private to the
 * topology files and the neighbourhood collectives:
 *
 *   topo.c           the object: made, copied with MPI_Comm_dup, freed
 *                    with its communicator; MPI_Topo_test; graphs
 *   topo_cart.c      Cartesian grids and MPI_Dims_create
 *   topo_dist.c      distributed graphs
 *   coll_neighbor.c  the neighbourhood collectives, on the lists below
 *
 * A topology hangs off its communicator (comm->topo). Whatever its kind,
 * it carries the neighbourhood the neighbour collectives use: in[indeg]
 * (the sources) and out[outdeg] (the destinations), ranks of the
 * communicator, MPI_PROC_NULL at the open edges of a grid:
 *
 *   cart, dims {3}, periods {0}, rank 0:   in = out = {PROC_NULL, 1}
 *   cart, dims {2, 2}, periods {1, 1}:     in = out = {-1 and +1 in dim 0,
 *                                                      -1 and +1 in dim 1}
 *   graph:  in = out = MPI_Graph_neighbors of this rank
 *   dist graph:  in = the sources, out = the destinations (with weights)
 *
 * All arrays live in the object's own allocation (mem[]), so copying one
 * is a memcpy plus moving the pointers.
 *
 * reorder is ignored by every constructor: ranks keep their numbering
 * (the identity mapping, which MPI allows), and MPI_Cart_map /
 * MPI_Graph_map say so.
 */
#ifndef MPIL_TOPO_INT_H
#define MPIL_TOPO_INT_H

#include "comm_int.h"

typedef struct mpil_topo {
	int kind; /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
	/* MPI_CART: the grid and this process's place in it */
	int ndims;
	int *dims, *periods, *coords;
	/* MPI_GRAPH: the whole graph as given to MPI_Graph_create */
	int nnodes, nedges;
	int *index, *edges;
	/* every kind: the neighbourhood (MPI_DIST_GRAPH: weights if weighted) */
	int indeg, outdeg;
	int *in, *out;
	bool weighted;
	int *in_w, *out_w;
	/* the storage of all the arrays above */
	size_t nmem, used;
	int mem[];
} mpil_topo_t;

/* A zeroed topology of @kind with room for @nints integers; NULL when out
 * of memory. */
mpil_topo_t *mpil_topo_new(int kind, size_t nints);
/* The next @n integers of @t's storage (room was asked for). */
int *mpil_topo_take(mpil_topo_t *t, size_t n);

/* The topology of @comm if it is of @kind (0: any), else reports
 * MPI_ERR_TOPOLOGY (or MPI_ERR_COMM) and returns NULL with *err_p set.
 * Checks that MPI is initialised. */
const mpil_topo_t *mpil_topo_get(MPI_Comm comm, int kind, int *err_p, const char *fname);

/* The topology constructors' last step, collective over @comm_old: the
 * processes of @comm_old with the same @color (MPI_UNDEFINED: none) make
 * a new communicator, in @comm_old's order, carrying @t (consumed:
 * attached, or freed; may be NULL for MPI_UNDEFINED). Errors go through
 * @comm_old's handler. */
int mpil_topo_comm_create(MPI_Comm comm_old, int color, mpil_topo_t *t, MPI_Comm *newcomm,
			  const char *fname);

/* An output argument that must not be NULL. */
static inline int mpil_topo_check_out(MPI_Comm comm, const void *p, const char *what,
				      const char *fname)
{
	if (ibx_likely(p != NULL))
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_ARG, fname, "%s is NULL", what);
}

#endif /* MPIL_TOPO_INT_H */
