/* ibx-test: np=1,2,3,4 timeout=120 */
/*
 * coll_persist — the persistent collectives of MPI-4.0 (MPI_Bcast_init and
 * the rest): each is made once and started several times with new data
 * in the same buffers, results checked every round; MPI_Startall over
 * several at once; the arrays, datatypes and user operation of the init
 * freed or overwritten right after it (the request keeps its own);
 * MPI_Test driving one to completion; an inactive one completing at once
 * with an empty status; MPI_Request_free of an active one (it finishes in
 * the background) and of an inactive one; the neighbourhood forms on a
 * periodic ring; starts in a different order on each rank (matched by
 * the order of the inits); and the errors: bad arguments at init with the class
 * the nonblocking call gives, starting an active request, cancelling one.
 */
#include "mpitest.h"

#include <stdbool.h>

#define ROUNDS 4
#define N      8

static int rank, size;

static void run(MPI_Request *rq)
{
	MPI_OK(MPI_Start(rq));
	MPI_OK(MPI_Wait(rq, MPI_STATUS_IGNORE));
	CHECK(*rq != MPI_REQUEST_NULL, "Wait freed a persistent request");
}

static void test_bcast_allreduce(void)
{
	int buf[N], in[N], out[N];
	MPI_Request b, a;
	MPI_Status st;
	int flag;

	MPI_OK(MPI_Bcast_init(buf, N, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &b));
	MPI_OK(MPI_Allreduce_init(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &a));
	/* inactive: completes at once, empty status */
	st.MPI_TAG = 12345;
	MPI_OK(MPI_Wait(&b, &st));
	CHECK(b != MPI_REQUEST_NULL && st.MPI_TAG == MPI_ANY_TAG, "inactive wait");
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < N; i++) {
			buf[i] = rank == size - 1 ? 1000 * r + i : -1;
			in[i] = rank + r * i;
		}
		run(&b);
		MPI_OK(MPI_Start(&a));
		do
			MPI_OK(MPI_Test(&a, &flag, MPI_STATUS_IGNORE));
		while (!flag);
		for (int i = 0; i < N; i++) {
			CHECK(buf[i] == 1000 * r + i, "bcast round %d [%d] = %d", r, i, buf[i]);
			CHECK(out[i] == size * (size - 1) / 2 + size * r * i,
			      "allreduce round %d [%d] = %d", r, i, out[i]);
		}
	}
	MPI_OK(MPI_Request_free(&b));
	CHECK(b == MPI_REQUEST_NULL, "Request_free did not null the handle");
	MPI_OK(MPI_Request_free(&a));
}

/* The init's arrays and types are the caller's to free at once. */
static void test_kept_arguments(void)
{
	int *counts = malloc(sizeof(int) * (size_t)size),
	    *displs = malloc(sizeof(int) * (size_t)size);
	int *recv = malloc(sizeof(int) * 2 * (size_t)size), mine[2];
	MPI_Datatype two;
	MPI_Request rq;

	CHECK(counts && displs && recv, "out of memory");
	for (int i = 0; i < size; i++) {
		counts[i] = 1;		  /* of a two-int type */
		displs[i] = size - 1 - i; /* reversed */
	}
	MPI_OK(MPI_Type_contiguous(2, MPI_INT, &two));
	MPI_OK(MPI_Type_commit(&two));
	MPI_OK(MPI_Allgatherv_init(mine, 1, two, recv, counts, displs, two, MPI_COMM_WORLD,
				   MPI_INFO_NULL, &rq));
	MPI_OK(MPI_Type_free(&two));
	for (int i = 0; i < size; i++)
		counts[i] = displs[i] = -7; /* garbage now: the request has copies */
	free(counts);
	free(displs);
	for (int r = 0; r < ROUNDS; r++) {
		mine[0] = rank;
		mine[1] = r;
		run(&rq);
		for (int i = 0; i < size; i++)
			CHECK(recv[2 * (size - 1 - i)] == i && recv[2 * (size - 1 - i) + 1] == r,
			      "allgatherv round %d: block of rank %d", r, i);
	}
	MPI_OK(MPI_Request_free(&rq));
	free(recv);
}

static void my_max(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int *a = in, *b = inout;

	for (int i = 0; i < *len; i++)
		if (a[i] > b[i])
			b[i] = a[i];
}

static void test_reductions(void)
{
	int in[N], red[N], scan[N], ex[N], rs[N], rsb[2];
	int *counts = malloc(sizeof(int) * (size_t)size),
	    *big = malloc(sizeof(int) * 2 * (size_t)size);
	MPI_Op op;
	MPI_Request rq[5];

	CHECK(counts && big, "out of memory");
	for (int i = 0; i < size; i++)
		counts[i] = 1;
	MPI_OK(MPI_Op_create(my_max, 1, &op));
	MPI_OK(MPI_Reduce_init(in, red, N, MPI_INT, op, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]));
	MPI_OK(MPI_Op_free(&op)); /* the request keeps it */
	MPI_OK(MPI_Scan_init(in, scan, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
	MPI_OK(MPI_Exscan_init(in, ex, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[2]));
	MPI_OK(MPI_Reduce_scatter_init(big, rs, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
				       MPI_INFO_NULL, &rq[3]));
	MPI_OK(MPI_Reduce_scatter_block_init(big, rsb, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
					     MPI_INFO_NULL, &rq[4]));
	free(counts);
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < N; i++)
			in[i] = (rank + 1) * (r + 1) + i;
		for (int i = 0; i < 2 * size; i++)
			big[i] = rank + i + r;
		ex[0] = -99;
		MPI_OK(MPI_Startall(5, rq));
		MPI_OK(MPI_Waitall(5, rq, MPI_STATUSES_IGNORE));
		for (int i = 0; i < N; i++) {
			int sum = 0;

			for (int q = 0; q <= rank; q++)
				sum += (q + 1) * (r + 1) + i;
			CHECK(scan[i] == sum, "scan round %d [%d] = %d, expected %d", r, i, scan[i],
			      sum);
			if (rank > 0)
				CHECK(ex[i] == sum - in[i], "exscan round %d [%d] = %d", r, i,
				      ex[i]);
			if (rank == 0)
				CHECK(red[i] == size * (r + 1) + i,
				      "reduce(max) round %d [%d] = %d", r, i, red[i]);
		}
		/* sum over q of (q + i + r) at i = rank (reduce_scatter, one each)
		 * and at i = 2 rank, 2 rank + 1 (the block form, two each) */
		CHECK(rs[0] == size * (size - 1) / 2 + size * (rank + r), "reduce_scatter: %d",
		      rs[0]);
		for (int k = 0; k < 2; k++)
			CHECK(rsb[k] == size * (size - 1) / 2 + size * (2 * rank + k + r),
			      "reduce_scatter_block [%d]: %d", k, rsb[k]);
	}
	for (int i = 0; i < 5; i++)
		MPI_OK(MPI_Request_free(&rq[i]));
	free(big);
}

static void test_rooted_and_exchange(void)
{
	int root = size / 2, s[N], *g = malloc(sizeof(int) * N * (size_t)size),
	    *a2 = malloc(sizeof(int) * (size_t)size), *b2 = malloc(sizeof(int) * (size_t)size);
	int *cnt = malloc(sizeof(int) * (size_t)size), *dsp = malloc(sizeof(int) * (size_t)size);
	int *bdsp = malloc(sizeof(int) * (size_t)size); /* in bytes: alltoallw's */
	MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)size);
	int back[N];
	MPI_Request rq[6];

	CHECK(g && a2 && b2 && cnt && dsp && bdsp && types, "out of memory");
	for (int i = 0; i < size; i++) {
		cnt[i] = 1;
		dsp[i] = i;
		bdsp[i] = i * (int)sizeof(int);
		types[i] = MPI_INT;
	}
	MPI_OK(MPI_Gather_init(s, N, MPI_INT, g, N, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL,
			       &rq[0]));
	MPI_OK(MPI_Scatter_init(g, N, MPI_INT, back, N, MPI_INT, root, MPI_COMM_WORLD,
				MPI_INFO_NULL, &rq[1]));
	MPI_OK(MPI_Alltoall_init(a2, 1, MPI_INT, b2, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
				 &rq[2]));
	MPI_OK(MPI_Alltoallw_init(a2, cnt, bdsp, types, b2, cnt, bdsp, types, MPI_COMM_WORLD,
				  MPI_INFO_NULL, &rq[3]));
	MPI_OK(MPI_Gatherv_init(s, 1, MPI_INT, g, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD,
				MPI_INFO_NULL, &rq[4]));
	MPI_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &rq[5]));
	free(types);
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < N; i++)
			s[i] = 100 * rank + 10 * r + i;
		run(&rq[0]);
		if (rank == root)
			for (int q = 0; q < size; q++)
				for (int i = 0; i < N; i++)
					CHECK(g[q * N + i] == 100 * q + 10 * r + i,
					      "gather round %d: [%d][%d]", r, q, i);
		if (rank == root)
			for (int x = 0; x < N * size; x++)
				g[x] += 1;
		run(&rq[1]);
		for (int i = 0; i < N; i++)
			CHECK(back[i] == 100 * rank + 10 * r + i + 1, "scatter round %d [%d] = %d",
			      r, i, back[i]);
		for (int q = 0; q < size; q++)
			a2[q] = 1000 * rank + q + r;
		run(&rq[2]);
		for (int q = 0; q < size; q++)
			CHECK(b2[q] == 1000 * q + rank + r, "alltoall round %d from %d: %d", r, q,
			      b2[q]);
		for (int q = 0; q < size; q++)
			a2[q] = 2000 * rank + q + r;
		run(&rq[3]);
		for (int q = 0; q < size; q++)
			CHECK(b2[q] == 2000 * q + rank + r, "alltoallw round %d from %d: %d", r, q,
			      b2[q]);
		run(&rq[4]);
		if (rank == root)
			for (int q = 0; q < size; q++)
				CHECK(g[q] == 100 * q + 10 * r, "gatherv round %d [%d] = %d", r, q,
				      g[q]);
		run(&rq[5]);
	}
	for (int i = 0; i < 6; i++)
		MPI_OK(MPI_Request_free(&rq[i]));
	free(g);
	free(a2);
	free(b2);
	free(cnt);
	free(dsp);
	free(bdsp);
}

/* Neighbourhood forms on a periodic ring: left and right neighbours. */
static void test_neighbors(void)
{
	int dims[1] = {size}, periods[1] = {1}, left, right, sb[2], rb[2], one = 1;
	MPI_Comm ring;
	MPI_Request rq[2];

	MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
	MPI_OK(MPI_Cart_shift(ring, 0, 1, &left, &right));
	MPI_OK(MPI_Neighbor_allgather_init(&one, 1, MPI_INT, rb, 1, MPI_INT, ring, MPI_INFO_NULL,
					   &rq[0]));
	MPI_OK(MPI_Neighbor_alltoall_init(sb, 1, MPI_INT, rb, 1, MPI_INT, ring, MPI_INFO_NULL,
					  &rq[1]));
	for (int r = 0; r < ROUNDS; r++) {
		one = 10 * rank + r;
		run(&rq[0]);
		CHECK(rb[0] == 10 * left + r && rb[1] == 10 * right + r,
		      "neighbor_allgather round %d: %d %d", r, rb[0], rb[1]);
		sb[0] = 1000 + rank + r; /* to the left */
		sb[1] = 2000 + rank + r; /* to the right */
		run(&rq[1]);
		/* from the left neighbour's "to the right", the right's "to the left" */
		CHECK(rb[0] == 2000 + left + r && rb[1] == 1000 + right + r,
		      "neighbor_alltoall round %d: %d %d", r, rb[0], rb[1]);
	}
	MPI_OK(MPI_Request_free(&rq[0]));
	MPI_OK(MPI_Request_free(&rq[1]));
	MPI_OK(MPI_Comm_free(&ring));
}

/* Matched by the order of the inits, started in different orders (a
 * broadcast and an allreduce, each rank its own order, MPI-4.0 6.13). */
static void test_start_order(void)
{
	int v, in, out;
	MPI_Request rq[2];

	MPI_OK(MPI_Bcast_init(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]));
	MPI_OK(MPI_Allreduce_init(&in, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL,
				  &rq[1]));
	for (int r = 0; r < ROUNDS; r++) {
		int first = (rank + r) % 2;

		v = rank == 0 ? 77 + r : -1;
		in = rank + r;
		MPI_OK(MPI_Start(&rq[first]));
		MPI_OK(MPI_Start(&rq[1 - first]));
		MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
		CHECK(v == 77 + r && out == size - 1 + r, "round %d: bcast %d, allreduce %d", r, v,
		      out);
	}
	MPI_OK(MPI_Request_free(&rq[0]));
	MPI_OK(MPI_Request_free(&rq[1]));
}

/* Freed while active: it completes in the background. */
static void test_free_active(void)
{
	int v = -1;
	MPI_Request rq;

	MPI_OK(MPI_Bcast_init(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
	if (rank == 0)
		v = 4242;
	MPI_OK(MPI_Start(&rq));
	MPI_OK(MPI_Request_free(&rq));
	/* any MPI call moves it on; give it up to 30 s */
	for (double t0 = MPI_Wtime(); v != 4242 && MPI_Wtime() - t0 < 30;) {
		int flag;

		MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
	}
	CHECK(v == 4242, "freed active bcast never completed: %d", v);
}

static void test_errors(void)
{
	int x = 0, y = 0;
	MPI_Request rq;

	MPI_FAILS(MPI_ERR_ROOT,
		  MPI_Bcast_init(&x, 1, MPI_INT, size, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Allreduce_init(&x, &y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
						    MPI_INFO_NULL, &rq));
	MPI_FAILS(MPI_ERR_ARG, MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, NULL));
	MPI_FAILS(MPI_ERR_COMM, MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &rq));
	MPI_FAILS(MPI_ERR_TYPE,
		  MPI_Bcast_init(&x, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
	MPI_FAILS(MPI_ERR_OP, MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD,
						 MPI_INFO_NULL, &rq));
	MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Neighbor_alltoall_init(&x, 1, MPI_INT, &y, 1, MPI_INT,
							       MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
	/* a good one still works after the failures (no collective number lost
	 * on one rank and not another) */
	MPI_OK(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
	x = 1;
	MPI_OK(MPI_Start(&rq));
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Start(&rq)); /* already active */
	MPI_FAILS(MPI_ERR_REQUEST, MPI_Cancel(&rq));
	MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
	CHECK(y == size, "allreduce after the errors: %d", y);
	MPI_OK(MPI_Request_free(&rq));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	test_errors();
	test_bcast_allreduce();
	test_kept_arguments();
	test_reductions();
	test_rooted_and_exchange();
	test_neighbors();
	test_start_order();
	test_free_active();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("coll_persist: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
