/* ibx-test: np=1,2 timeout=30 nodes=1 */
/*
 * pmpi — the profiling interface: this program defines its own MPI_Send,
 * MPI_Recv and MPI_Allreduce, which count calls and forward to PMPI_*. The
 * library's weak MPI_* must give way to them, and the library must not call
 * the MPI_* names internally (MPI_Sendrecv or MPI_Finalize going through
 * the user's MPI_Send would be counted).
 */
#include "mpitest.h"

static int n_send, n_recv, n_allreduce;

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	n_send++;
	return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
	     MPI_Status *status)
{
	n_recv++;
	return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		  MPI_Comm comm)
{
	n_allreduce++;
	return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int main(int argc, char **argv)
{
	int rank, size, v = 0, sum;

	mt_init(&argc, &argv, &rank, &size);
	for (int i = 0; i < 3; i++) {
		MPI_OK(MPI_Send(&rank, 1, MPI_INT, rank, i, MPI_COMM_WORLD));
		MPI_OK(MPI_Recv(&v, 1, MPI_INT, rank, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(v == rank, "self message %d", v);
	}
	MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, rank, 9, &v, 1, MPI_INT, rank, 9, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE));
	MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Bcast(&sum, 1, MPI_INT, 0, MPI_COMM_WORLD));
	CHECK(sum == size * (size - 1) / 2, "sum %d", sum);
	CHECK(n_send == 3 && n_recv == 3 && n_allreduce == 1,
	      "wrappers counted %d sends, %d receives, %d allreduces (expected 3, 3, 1)", n_send,
	      n_recv, n_allreduce);
	MPI_OK(MPI_Finalize());
	CHECK(n_send == 3 && n_recv == 3, "MPI_Finalize went through MPI_Send/MPI_Recv");
	if (rank == 0)
		printf("pmpi: OK\n");
	return 0;
}
