/*
 * dtype_int.h — private to the derived-datatype files: dtype_create.c (the
 * constructors, commit, free) and dtype_envelope.c (the record of each
 * constructor call behind MPI_Type_get_envelope / MPI_Type_get_contents).
 */
#ifndef MPIL_DTYPE_INT_H
#define MPIL_DTYPE_INT_H

#include "mpil_int.h"

/* @n consecutive integer arguments at @v: a constructor's integers are a
 * list of such pieces (MPI_Type_indexed: count, blocklengths,
 * displacements). */
typedef struct mpil_dt_ints {
	int n;
	const int *v;
} mpil_dt_ints_t;

/* One constructor call, in the order MPI-3.1 §4.1.13 returns its
 * arguments: the combiner, the integers, the addresses, the datatypes. */
typedef struct mpil_dt_args {
	int combiner; /* MPI_COMBINER_* */
	int npieces;
	const mpil_dt_ints_t *pieces;
	int na;
	const MPI_Aint *aints;
	int nd;
	const MPI_Datatype *types;
} mpil_dt_args_t;

/* Records @a as the call that made @dt (which holds a reference on every
 * derived type among the arguments until it is destroyed): MPI_SUCCESS or
 * MPI_ERR_NO_MEM. */
int mpil_dt_contents_set(MPI_Datatype dt, const mpil_dt_args_t *a);
/* @dst gets a copy of @src's record (and its own references). */
int mpil_dt_contents_copy(MPI_Datatype dst, MPI_Datatype src);
/* Drops @dt's record; @release: also the references it holds (not in
 * MPI_Finalize, which frees every type anyway). */
void mpil_dt_contents_free(MPI_Datatype dt, bool release);

/* A new handle to derived type @dt's layout (the engine type is shared)
 * with the same record: what MPI_Type_get_contents returns for a derived
 * argument. MPI_SUCCESS or an error class (not reported). */
int mpil_dt_clone(MPI_Datatype dt, MPI_Datatype *copy_p);

#endif /* MPIL_DTYPE_INT_H */
