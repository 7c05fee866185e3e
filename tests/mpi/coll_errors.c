/* ibx-test: np=1,2,3 timeout=60 nodes=1 */
/*
 * coll_errors — every invalid argument of every collective gets its MPI
 * error class under MPI_ERRORS_RETURN, on the communicator's handler:
 * MPI_ERR_COMM, MPI_ERR_ROOT, MPI_ERR_COUNT (negative counts, also inside
 * counts arrays), MPI_ERR_TYPE, MPI_ERR_OP (null, freed, accumulate-only,
 * not defined for the type), MPI_ERR_BUFFER (NULL buffers, MPI_IN_PLACE
 * where MPI does not allow it, send and receive buffers that overlap),
 * MPI_ERR_ARG (NULL counts/displacement arrays, receive blocks that
 * overlap), MPI_ERR_TRUNCATE (an own block larger than its receive
 * block). Errors that only the root can see are provoked on
 * MPI_COMM_SELF, so no rank is left with a message nobody receives. After
 * all of it the collectives still work.
 */
#include "mpitest.h"

static int rank, size;
static int handler_calls;

static void count_errors(MPI_Comm *comm, int *code, ...)
{
	(void)comm;
	(void)code;
	handler_calls++;
}

static void noop_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)in;
	(void)inout;
	(void)len;
	(void)dt;
}

/* Arguments wrong on every rank alike (detected before any transfer). */
static void test_everywhere(MPI_Comm W, int p)
{
	int a[64] = {0}, b[64] = {0}, c[64] = {0};
	int cnt[16], dsp[16], neg[16];
	MPI_Comm bogus_comm = (MPI_Comm)(void *)MPI_INT;
	MPI_Datatype bogus_type = (MPI_Datatype)(void *)MPI_COMM_WORLD;
	MPI_Op bogus_op = (MPI_Op)(void *)MPI_COMM_WORLD, freed;

	for (int i = 0; i < 16; i++) {
		cnt[i] = 1;
		dsp[i] = i;
		neg[i] = i == p - 1 ? -1 : 1;
	}
	/* MPI_ERR_COMM */
	MPI_FAILS(MPI_ERR_COMM, MPI_Barrier(bogus_comm));
	MPI_FAILS(MPI_ERR_COMM, MPI_Bcast(a, 1, MPI_INT, 0, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_COMM, MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_COMM, MPI_Allreduce(a, b, 1, MPI_INT, MPI_SUM, bogus_comm));
	MPI_FAILS(MPI_ERR_COMM, MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, 0, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_COMM, MPI_Gatherv(a, 1, MPI_INT, b, cnt, dsp, MPI_INT, 0, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_COMM, MPI_Scatter(a, 1, MPI_INT, b, 1, MPI_INT, 0, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_COMM,
		  MPI_Scatterv(a, cnt, dsp, MPI_INT, b, 1, MPI_INT, 0, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_COMM, MPI_Allgather(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_COMM, MPI_Allgatherv(a, 1, MPI_INT, b, cnt, dsp, MPI_INT, bogus_comm));
	MPI_FAILS(MPI_ERR_COMM, MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_COMM,
		  MPI_Alltoallv(a, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_COMM, MPI_Reduce_scatter_block(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_COMM, MPI_Reduce_scatter(a, b, cnt, MPI_INT, MPI_SUM, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_COMM, MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL));
	MPI_FAILS(MPI_ERR_COMM, MPI_Exscan(a, b, 1, MPI_INT, MPI_SUM, bogus_comm));

	/* MPI_ERR_ROOT */
	int roots[] = {-1, p, MPI_ROOT, MPI_PROC_NULL};

	for (int k = 0; k < 4; k++) {
		int root = roots[k];

		MPI_FAILS(MPI_ERR_ROOT, MPI_Bcast(a, 1, MPI_INT, root, W));
		MPI_FAILS(MPI_ERR_ROOT, MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, root, W));
		MPI_FAILS(MPI_ERR_ROOT, MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, root, W));
		MPI_FAILS(MPI_ERR_ROOT, MPI_Gatherv(a, 1, MPI_INT, b, cnt, dsp, MPI_INT, root, W));
		MPI_FAILS(MPI_ERR_ROOT, MPI_Scatter(a, 1, MPI_INT, b, 1, MPI_INT, root, W));
		MPI_FAILS(MPI_ERR_ROOT, MPI_Scatterv(a, cnt, dsp, MPI_INT, b, 1, MPI_INT, root, W));
	}

	/* MPI_ERR_COUNT */
	MPI_FAILS(MPI_ERR_COUNT, MPI_Bcast(a, -1, MPI_INT, 0, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Reduce(a, b, -2, MPI_INT, MPI_SUM, 0, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Allreduce(a, b, -1, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Scan(a, b, -1, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Exscan(a, b, -1, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Gather(a, -1, MPI_INT, b, 1, MPI_INT, 0, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Gatherv(a, -1, MPI_INT, b, cnt, dsp, MPI_INT, 0, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Scatter(a, 1, MPI_INT, b, -1, MPI_INT, 0, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Scatterv(a, cnt, dsp, MPI_INT, b, -3, MPI_INT, 0, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Allgather(a, -1, MPI_INT, b, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Allgather(a, 1, MPI_INT, b, -1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Allgatherv(a, -1, MPI_INT, b, cnt, dsp, MPI_INT, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Allgatherv(a, 1, MPI_INT, b, neg, dsp, MPI_INT, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Alltoall(a, -1, MPI_INT, b, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Alltoall(a, 1, MPI_INT, b, -1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Alltoallv(a, neg, dsp, MPI_INT, b, cnt, dsp, MPI_INT, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Alltoallv(a, cnt, dsp, MPI_INT, b, neg, dsp, MPI_INT, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Reduce_scatter_block(a, b, -1, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Reduce_scatter(a, b, neg, MPI_INT, MPI_SUM, W));

	/* MPI_ERR_TYPE */
	MPI_FAILS(MPI_ERR_TYPE, MPI_Bcast(a, 1, MPI_DATATYPE_NULL, 0, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Reduce(a, b, 1, bogus_type, MPI_SUM, 0, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Allreduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Scan(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Exscan(a, b, 1, bogus_type, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Gather(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, 0, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Gatherv(a, 1, bogus_type, b, cnt, dsp, MPI_INT, 0, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Scatter(a, 1, MPI_INT, b, 1, MPI_DATATYPE_NULL, 0, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Scatterv(a, cnt, dsp, MPI_INT, b, 1, bogus_type, 0, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Allgather(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Allgather(a, 1, MPI_INT, b, 1, MPI_DATATYPE_NULL, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Allgatherv(a, 1, MPI_INT, b, cnt, dsp, MPI_DATATYPE_NULL, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Alltoall(a, 1, bogus_type, b, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_TYPE,
		  MPI_Alltoallv(a, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_DATATYPE_NULL, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Reduce_scatter_block(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Reduce_scatter(a, b, cnt, bogus_type, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Reduce_local(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM));
	/* a derived type that was never committed */
	MPI_Datatype uncommitted;

	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Bcast(a, 1, uncommitted, 0, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Allreduce(a, b, 1, uncommitted, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Alltoall(a, 1, uncommitted, b, 1, MPI_INT, W));
	MPI_OK(MPI_Type_free(&uncommitted));

	/* MPI_ERR_OP */
	MPI_OK(MPI_Op_create(noop_fn, 1, &freed));
	MPI_Op fh = freed;

	MPI_OK(MPI_Op_free(&freed));
	MPI_Op bad_ops[] = {MPI_OP_NULL, bogus_op, fh, MPI_REPLACE, MPI_NO_OP};

	for (int k = 0; k < 5; k++) {
		MPI_Op op = bad_ops[k];

		MPI_FAILS(MPI_ERR_OP, MPI_Reduce(a, b, 1, MPI_INT, op, 0, W));
		MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_INT, op, W));
		MPI_FAILS(MPI_ERR_OP, MPI_Scan(a, b, 1, MPI_INT, op, W));
		MPI_FAILS(MPI_ERR_OP, MPI_Exscan(a, b, 1, MPI_INT, op, W));
		MPI_FAILS(MPI_ERR_OP, MPI_Reduce_scatter_block(a, b, 1, MPI_INT, op, W));
		MPI_FAILS(MPI_ERR_OP, MPI_Reduce_scatter(a, b, cnt, MPI_INT, op, W));
		MPI_FAILS(MPI_ERR_OP, MPI_Reduce_local(a, b, 1, MPI_INT, op));
	}
	/* predefined ops outside their types (MPI-3.1 §5.9.2) */
	MPI_FAILS(MPI_ERR_OP, MPI_Reduce(a, b, 1, MPI_FLOAT, MPI_BXOR, 0, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Scan(a, b, 1, MPI_DOUBLE, MPI_LAND, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Exscan(a, b, 1, MPI_WCHAR, MPI_MAX, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Reduce_scatter_block(a, b, 1, MPI_C_BOOL, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Reduce(a, b, 1, MPI_BYTE, MPI_SUM, 0, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Reduce(a, b, 1, MPI_WCHAR, MPI_LOR, 0, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Reduce(a, b, 1, MPI_C_FLOAT_COMPLEX, MPI_MIN, 0, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Reduce(a, b, 1, MPI_2INT, MPI_SUM, 0, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Reduce(a, b, 1, MPI_INT, MPI_MINLOC, 0, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Reduce(a, b, 1, MPI_PACKED, MPI_BOR, 0, W));
	/* a derived type that mixes basic types, with a predefined op */
	MPI_Datatype mixed;
	int bl[2] = {1, 1};
	MPI_Aint bd[2] = {0, 8};
	MPI_Datatype bt[2] = {MPI_INT, MPI_DOUBLE};

	MPI_OK(MPI_Type_create_struct(2, bl, bd, bt, &mixed));
	MPI_OK(MPI_Type_commit(&mixed));
	MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(a, b, 1, mixed, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_OP, MPI_Reduce(a, b, 1, mixed, MPI_MAX, 0, W));
	MPI_OK(MPI_Type_free(&mixed));

	/* MPI_ERR_BUFFER: aliased buffers (without MPI_IN_PLACE) */
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(a, a, 4, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(a, a + 2, 4, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Scan(a + 1, a, 2, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Exscan(a, a, 2, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allgather(a, 1, MPI_INT, a, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allgather(a + p - 1, 1, MPI_INT, a, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allgatherv(a + p - 1, 1, MPI_INT, a, cnt, dsp, MPI_INT, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Alltoall(a, 1, MPI_INT, a, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Alltoall(a + p - 1, 1, MPI_INT, a, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Alltoallv(a, cnt, dsp, MPI_INT, a, cnt, dsp, MPI_INT, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Reduce_scatter_block(a, a, 1, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Reduce_scatter(a, a + p - 1, cnt, MPI_INT, MPI_SUM, W));
	/* NULL where data moves */
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Bcast(NULL, 1, MPI_INT, 0, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(NULL, b, 1, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(a, NULL, 1, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Scan(a, NULL, 1, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allgather(NULL, 1, MPI_INT, b, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allgather(a, 1, MPI_INT, NULL, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allgatherv(a, 1, MPI_INT, NULL, cnt, dsp, MPI_INT, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Alltoall(NULL, 1, MPI_INT, b, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Alltoallv(a, cnt, dsp, MPI_INT, NULL, cnt, dsp, MPI_INT, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Reduce_scatter_block(a, NULL, 1, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Scatter(a, 1, MPI_INT, NULL, 1, MPI_INT, 0, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Reduce_local(NULL, b, 1, MPI_INT, MPI_SUM));
	/* MPI_IN_PLACE where MPI has no in-place form */
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Scan(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Allgather(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Alltoall(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_BUFFER,
		  MPI_Reduce_scatter_block(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, W));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Reduce_local(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM));

	/* MPI_ERR_ARG: counts/displacement arrays missing or overlapping */
	MPI_FAILS(MPI_ERR_ARG, MPI_Allgatherv(a, 1, MPI_INT, b, NULL, dsp, MPI_INT, W));
	MPI_FAILS(MPI_ERR_ARG, MPI_Allgatherv(a, 1, MPI_INT, b, cnt, NULL, MPI_INT, W));
	MPI_FAILS(MPI_ERR_ARG, MPI_Alltoallv(a, NULL, dsp, MPI_INT, b, cnt, dsp, MPI_INT, W));
	MPI_FAILS(MPI_ERR_ARG, MPI_Alltoallv(a, cnt, NULL, MPI_INT, b, cnt, dsp, MPI_INT, W));
	MPI_FAILS(MPI_ERR_ARG, MPI_Alltoallv(a, cnt, dsp, MPI_INT, b, NULL, dsp, MPI_INT, W));
	MPI_FAILS(MPI_ERR_ARG, MPI_Alltoallv(a, cnt, dsp, MPI_INT, b, cnt, NULL, MPI_INT, W));
	MPI_FAILS(MPI_ERR_ARG, MPI_Reduce_scatter(a, b, NULL, MPI_INT, MPI_SUM, W));
	if (p > 1) {
		int two[16], same[16] = {0};

		for (int i = 0; i < 16; i++)
			two[i] = 2;
		/* blocks of 2 ints one int apart: they overlap */
		MPI_FAILS(MPI_ERR_ARG, MPI_Allgatherv(a, 2, MPI_INT, b, two, dsp, MPI_INT, W));
		MPI_FAILS(MPI_ERR_ARG,
			  MPI_Alltoallv(a, cnt, dsp, MPI_INT, b, cnt, same, MPI_INT, W));
	}

	/* MPI_ERR_TRUNCATE: the own block does not fit its receive block */
	MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Allgather(a, 2, MPI_INT, b, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Alltoall(a, 2, MPI_INT, c, 1, MPI_INT, W));
	MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Alltoall(a, 1, MPI_DOUBLE, c, 1, MPI_INT, W));
}

/* Root-only arguments, on MPI_COMM_SELF (its only rank is the root). */
static void test_root_side(void)
{
	MPI_Comm S = MPI_COMM_SELF;
	int a[8] = {0}, b[8] = {0}, cnt[1] = {1}, dsp[1] = {0}, neg[1] = {-1};

	MPI_FAILS(MPI_ERR_ARG, MPI_Gatherv(a, 1, MPI_INT, b, NULL, dsp, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_ARG, MPI_Gatherv(a, 1, MPI_INT, b, cnt, NULL, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_ARG, MPI_Scatterv(a, NULL, dsp, MPI_INT, b, 1, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_ARG, MPI_Scatterv(a, cnt, NULL, MPI_INT, b, 1, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Gatherv(a, 1, MPI_INT, b, neg, dsp, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Scatterv(a, neg, dsp, MPI_INT, b, 1, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Gather(a, 1, MPI_INT, b, -1, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Scatter(a, -1, MPI_INT, b, 1, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Gather(a, 1, MPI_INT, b, 1, MPI_DATATYPE_NULL, 0, S));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Gatherv(a, 1, MPI_INT, b, cnt, dsp, MPI_DATATYPE_NULL, 0, S));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Scatter(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Scatterv(a, cnt, dsp, MPI_DATATYPE_NULL, b, 1, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Gather(a, 1, MPI_INT, NULL, 1, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Gather(a, 1, MPI_INT, a, 1, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Gatherv(a, 1, MPI_INT, a, cnt, dsp, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Scatter(a, 1, MPI_INT, a, 1, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Scatter(NULL, 1, MPI_INT, b, 1, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Scatterv(a, cnt, dsp, MPI_INT, a, 1, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Reduce(a, a, 1, MPI_INT, MPI_SUM, 0, S));
	MPI_FAILS(MPI_ERR_BUFFER, MPI_Reduce(a, NULL, 1, MPI_INT, MPI_SUM, 0, S));
	MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Gather(a, 2, MPI_INT, b, 1, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Scatter(a, 2, MPI_INT, b, 1, MPI_INT, 0, S));
	MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Gatherv(a, 2, MPI_INT, b, cnt, dsp, MPI_INT, 0, S));
	/* what is fine at a root */
	MPI_OK(MPI_Gather(MPI_IN_PLACE, -7, MPI_DATATYPE_NULL, b, 1, MPI_INT, 0, S));
	MPI_OK(MPI_Scatter(a, 1, MPI_INT, MPI_IN_PLACE, -7, MPI_DATATYPE_NULL, 0, S));
	MPI_OK(MPI_Reduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, 0, S));
}

/* MPI_IN_PLACE as a non-root's send (gather, reduce) or receive (scatter)
 * buffer: rank 1 alone makes the calls, which fail before any transfer, so
 * the root (0) need not take part. */
static void test_nonroot_in_place(void)
{
	int a[4] = {0}, b[4] = {0};

	if (size < 2)
		return;
	if (rank == 1) {
		MPI_FAILS(MPI_ERR_BUFFER,
			  MPI_Reduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
		MPI_FAILS(MPI_ERR_BUFFER,
			  MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, 0, MPI_COMM_WORLD));
		MPI_FAILS(MPI_ERR_BUFFER, MPI_Gatherv(MPI_IN_PLACE, 1, MPI_INT, b, NULL, NULL,
						      MPI_INT, 0, MPI_COMM_WORLD));
		MPI_FAILS(MPI_ERR_BUFFER,
			  MPI_Scatter(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD));
		MPI_FAILS(MPI_ERR_BUFFER, MPI_Scatterv(a, NULL, NULL, MPI_INT, MPI_IN_PLACE, 1,
						       MPI_INT, 0, MPI_COMM_WORLD));
	}
}

static void test_op_calls(void)
{
	MPI_Op op = MPI_SUM, u;
	int flag;

	MPI_FAILS(MPI_ERR_OP, MPI_Op_free(&op));
	CHECK(op == MPI_SUM, "MPI_Op_free changed a predefined handle");
	op = MPI_OP_NULL;
	MPI_FAILS(MPI_ERR_OP, MPI_Op_free(&op));
	MPI_FAILS(MPI_ERR_ARG, MPI_Op_free(NULL));
	MPI_FAILS(MPI_ERR_ARG, MPI_Op_create(NULL, 1, &u));
	MPI_FAILS(MPI_ERR_ARG, MPI_Op_create(noop_fn, 1, NULL));
	MPI_FAILS(MPI_ERR_OP, MPI_Op_commutative(MPI_OP_NULL, &flag));
	MPI_FAILS(MPI_ERR_ARG, MPI_Op_commutative(MPI_MAX, NULL));
	MPI_OK(MPI_Op_create(noop_fn, 0, &u));
	op = u;
	MPI_OK(MPI_Op_free(&u));
	MPI_FAILS(MPI_ERR_OP, MPI_Op_free(&op)); /* twice */
	MPI_FAILS(MPI_ERR_OP, MPI_Op_commutative(op, &flag));
}

int main(int argc, char **argv)
{
	MPI_Errhandler eh;
	MPI_Comm dup;
	int x = 0, sum;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	test_everywhere(MPI_COMM_WORLD, size);
	test_root_side();
	test_nonroot_in_place();
	test_op_calls();

	/* Errors go to the communicator's own handler. */
	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	MPI_OK(MPI_Comm_create_errhandler(count_errors, &eh));
	MPI_OK(MPI_Comm_set_errhandler(dup, eh));
	handler_calls = 0;
	MPI_Bcast(&x, 1, MPI_INT, size, dup);
	MPI_Allreduce(&x, &x, 1, MPI_INT, MPI_SUM, dup);
	MPI_Alltoall(&x, 1, MPI_INT, &sum, -1, MPI_INT, dup);
	CHECK(handler_calls == 3, "the communicator's handler ran %d times, not 3", handler_calls);
	MPI_OK(MPI_Errhandler_free(&eh));

	/* Everything still works. */
	x = rank + 1;
	MPI_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, dup));
	CHECK(sum == size * (size + 1) / 2, "Allreduce after the errors: %d", sum);
	MPI_OK(MPI_Comm_free(&dup));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("coll_errors: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
