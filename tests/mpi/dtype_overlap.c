/* ibx-test: np=1,2 timeout=60 nodes=1 */
/*
 * dtype_overlap — a receive type that would write a byte twice is refused
 * with MPI_ERR_TYPE (under MPI_ERRORS_RETURN) before anything is
 * received, and the message stays for a correct receive; types that only
 * look alike are accepted: elements interleaved by a resized extent (the
 * classic column-of-structs trick) and a struct whose blocks touch. Also
 * through Irecv and Mrecv.
 */
#include "mpitest.h"

static int rank, size;

int main(int argc, char **argv)
{
	int bl[2] = {2, 2}, ds[2] = {0, 1}, in[8], out[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	MPI_Datatype bad, col, inter;
	MPI_Request rq;
	MPI_Message msg;
	int peer, err, flag;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	mt_rank = rank;
	peer = size > 1 ? 1 - rank : rank;
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

	/* blocks [0, 2) and [1, 3): int 1 twice */
	MPI_OK(MPI_Type_indexed(2, bl, ds, MPI_INT, &bad));
	MPI_OK(MPI_Type_commit(&bad));
	/* every other int, extent one int: 2 elements interleave, no overlap */
	MPI_OK(MPI_Type_vector(4, 1, 2, MPI_INT, &col));
	MPI_OK(MPI_Type_create_resized(col, 0, sizeof(int), &inter));
	MPI_OK(MPI_Type_commit(&inter));

	MPI_OK(MPI_Send(out, 4, MPI_INT, peer, 1, MPI_COMM_WORLD));
	err = MPI_Recv(in, 1, bad, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	CHECK(err != MPI_SUCCESS, "an overlapping receive type was accepted");
	MPI_Error_class(err, &err);
	CHECK(err == MPI_ERR_TYPE, "overlapping receive type: class %d, not MPI_ERR_TYPE", err);
	err = MPI_Irecv(in, 1, bad, peer, 1, MPI_COMM_WORLD, &rq);
	MPI_Error_class(err, &err);
	CHECK(err == MPI_ERR_TYPE, "Irecv: class %d, not MPI_ERR_TYPE", err);
	MPI_OK(MPI_Mprobe(peer, 1, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE));
	err = MPI_Mrecv(in, 1, bad, &msg, MPI_STATUS_IGNORE);
	MPI_Error_class(err, &err);
	CHECK(err == MPI_ERR_TYPE, "Mrecv: class %d, not MPI_ERR_TYPE", err);
	CHECK(msg != MPI_MESSAGE_NULL, "a refused Mrecv consumed the message");
	/* the message is still there: 2 interleaved elements take 8 ints */
	for (int i = 0; i < 8; i++)
		in[i] = -1;
	MPI_OK(MPI_Mrecv(in, 2, inter, &msg, MPI_STATUS_IGNORE));
	/* element 0 at ints 0,2,4,6; element 1 at ints 1,3,5,7 */
	CHECK(in[0] == 1 && in[2] == 2 && in[4] == 3 && in[6] == 4 && in[1] == -1,
	      "interleaved receive: %d %d %d %d %d", in[0], in[2], in[4], in[6], in[1]);
	MPI_OK(MPI_Iprobe(peer, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
	CHECK(!flag, "a message left over");

	MPI_OK(MPI_Type_free(&bad));
	MPI_OK(MPI_Type_free(&col));
	MPI_OK(MPI_Type_free(&inter));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_Finalize();
	return 0;
}
