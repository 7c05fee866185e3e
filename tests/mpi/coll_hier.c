/* ibx-test: np=1,2,3,4,5,7 timeout=180 env="IBX_COLL_NODE_SIZE=3" */
/*
 * coll_hier — the node-aware collectives, on one machine: with
 * IBX_COLL_NODE_SIZE=3 every 3 consecutive world ranks count as a node, so
 * from 4 ranks on, Barrier, Bcast, Allreduce and Reduce (commutative ops)
 * run their intra-node / representatives / intra-node algorithms — with
 * nodes of 3, 2 and 1 member, roots inside and outside the first node,
 * sizes through every algorithm each phase picks. Also on communicators
 * that cut the nodes differently (even ranks only; ranks reversed), and a
 * non-commutative op, which must stay flat and in rank order.
 */
#include "mpitest.h"

#include <stdbool.h>

static int rank, size;

static void test_barrier(MPI_Comm comm)
{
	int me, p, flag;

	MPI_OK(MPI_Comm_rank(comm, &me));
	MPI_OK(MPI_Comm_size(comm, &p));
	for (int late = 0; late < p; late++) {
		if (me == late) {
			double t_end = MPI_Wtime() + 0.005;

			while (MPI_Wtime() < t_end) {
				MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 700 + late, comm, &flag,
						  MPI_STATUS_IGNORE));
				CHECK(!flag, "a rank left the barrier before rank %d entered",
				      late);
			}
		}
		MPI_OK(MPI_Barrier(comm));
		if (me != late)
			MPI_OK(MPI_Send(&me, 1, MPI_INT, late, 700 + late, comm));
		else
			for (int i = 0; i < p - 1; i++)
				MPI_OK(MPI_Recv(&flag, 1, MPI_INT, MPI_ANY_SOURCE, 700 + late, comm,
						MPI_STATUS_IGNORE));
	}
	for (int i = 0; i < 200; i++)
		MPI_OK(MPI_Barrier(comm));
}

static void test_bcast(MPI_Comm comm, const char *cname)
{
	static const size_t lens[] = {1, 100, 70000, 1 << 20};
	int me, p;
	unsigned char *buf = malloc(1 << 20);

	CHECK(buf, "out of memory");
	MPI_OK(MPI_Comm_rank(comm, &me));
	MPI_OK(MPI_Comm_size(comm, &p));
	for (int li = 0; li < 4; li++)
		for (int root = 0; root < p; root++) {
			size_t len = lens[li];

			if (me == root)
				mt_fill(buf, len, root, li);
			else
				memset(buf, 0, len);
			MPI_OK(MPI_Bcast(buf, (int)len, MPI_BYTE, root, comm));
			long bad = mt_verify(buf, len, root, li);

			CHECK(bad < 0, "Bcast on %s, %zu B from root %d: byte %ld", cname, len,
			      root, bad);
		}
	free(buf);
}

static void isum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] = (int)((unsigned)((int *)in)[i] + (unsigned)((int *)inout)[i]);
}

/* x op y = "x then y" on (a, b) affine maps, as MPI_2INT */
static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int *x = in, *y = inout;

	(void)dt;
	for (int i = 0; i < *len; i++) {
		unsigned a = (unsigned)x[2 * i] * (unsigned)y[2 * i];
		unsigned b = (unsigned)y[2 * i] * (unsigned)x[2 * i + 1] + (unsigned)y[2 * i + 1];

		y[2 * i] = (int)a;
		y[2 * i + 1] = (int)b;
	}
}

static void test_reductions(MPI_Comm comm, const char *cname, const int *world_of)
{
	static const int ns[] = {1, 100, 20000, 200000};
	int me, p;
	double *d = malloc(sizeof(double) * 200000), *e = malloc(sizeof(double) * 200000);
	int *x = malloc(sizeof(int) * 2 * 20000), *y = malloc(sizeof(int) * 2 * 20000);
	MPI_Op usum, aff;

	CHECK(d && e && x && y, "out of memory");
	MPI_OK(MPI_Comm_rank(comm, &me));
	MPI_OK(MPI_Comm_size(comm, &p));
	MPI_OK(MPI_Op_create(isum, 1, &usum));
	MPI_OK(MPI_Op_create(affine, 0, &aff));
	for (int ni = 0; ni < 4; ni++) {
		int n = ns[ni];

		/* Allreduce SUM (exact in doubles), in place on odd sizes */
		for (int i = 0; i < n; i++)
			d[i] = (double)(world_of[me] * 3 + i % 17);
		if (ni % 2)
			MPI_OK(MPI_Allreduce(MPI_IN_PLACE, d, n, MPI_DOUBLE, MPI_SUM, comm));
		else {
			memcpy(e, d, sizeof(double) * (size_t)n);
			MPI_OK(MPI_Allreduce(e, d, n, MPI_DOUBLE, MPI_SUM, comm));
		}
		for (int i = 0; i < n; i++) {
			double s = 0;

			for (int r = 0; r < p; r++)
				s += (double)(world_of[r] * 3 + i % 17);
			CHECK(d[i] == s, "Allreduce SUM on %s, n %d: element %d = %g, not %g",
			      cname, n, i, d[i], s);
		}
		/* Reduce MAX at every root */
		for (int root = 0; root < p; root++) {
			for (int i = 0; i < n; i++) {
				d[i] = (double)((world_of[me] * 7 + i) % 11);
				e[i] = -1;
			}
			MPI_OK(MPI_Reduce(d, e, n, MPI_DOUBLE, MPI_MAX, root, comm));
			for (int i = 0; i < n; i++) {
				double m = -1;

				for (int r = 0; r < p; r++)
					if ((double)((world_of[r] * 7 + i) % 11) > m)
						m = (double)((world_of[r] * 7 + i) % 11);
				CHECK(me == root ? e[i] == m : e[i] == -1,
				      "Reduce MAX on %s, n %d root %d: element %d", cname, n, root,
				      i);
			}
		}
		if (n > 20000)
			continue;
		/* commutative user op */
		for (int i = 0; i < n; i++)
			x[i] = world_of[me] * 1000 + i;
		MPI_OK(MPI_Allreduce(x, y, n, MPI_INT, usum, comm));
		for (int i = 0; i < n; i++) {
			int s = 0;

			for (int r = 0; r < p; r++)
				s += world_of[r] * 1000 + i;
			CHECK(y[i] == s, "Allreduce user sum on %s: element %d", cname, i);
		}
		/* non-commutative: rank order of the communicator */
		for (int i = 0; i < n; i++) {
			x[2 * i] = 2 * ((world_of[me] + i) % 5) + 1;
			x[2 * i + 1] = world_of[me] + i;
		}
		MPI_OK(MPI_Allreduce(x, y, n, MPI_2INT, aff, comm));
		for (int root = 0; root < p; root++)
			MPI_OK(MPI_Reduce(x, root == me ? y : NULL, n, MPI_2INT, aff, root, comm));
		for (int i = 0; i < n; i++) {
			unsigned a = 1, b = 0;

			for (int r = 0; r < p; r++) {
				unsigned ar = (unsigned)(2 * ((world_of[r] + i) % 5) + 1);

				b = ar * b + (unsigned)(world_of[r] + i);
				a *= ar;
			}
			CHECK(y[2 * i] == (int)a && y[2 * i + 1] == (int)b,
			      "non-commutative Allreduce/Reduce on %s: element %d", cname, i);
		}
	}
	MPI_OK(MPI_Op_free(&usum));
	MPI_OK(MPI_Op_free(&aff));
	free(d);
	free(e);
	free(x);
	free(y);
}

static void run_on(MPI_Comm comm, const char *cname)
{
	int me, p, *world_of;

	MPI_OK(MPI_Comm_rank(comm, &me));
	MPI_OK(MPI_Comm_size(comm, &p));
	world_of = malloc(sizeof(int) * (size_t)p);
	CHECK(world_of, "out of memory");
	MPI_OK(MPI_Allgather(&rank, 1, MPI_INT, world_of, 1, MPI_INT, comm));
	test_barrier(comm);
	test_bcast(comm, cname);
	test_reductions(comm, cname, world_of);
	free(world_of);
}

int main(int argc, char **argv)
{
	MPI_Comm even, rev;

	mt_init(&argc, &argv, &rank, &size);
	run_on(MPI_COMM_WORLD, "MPI_COMM_WORLD");
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &even));
	run_on(even, rank % 2 ? "the odd ranks" : "the even ranks");
	MPI_OK(MPI_Comm_free(&even));
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
	run_on(rev, "a reversed communicator");
	MPI_OK(MPI_Comm_free(&rev));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("coll_hier: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
