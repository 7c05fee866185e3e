/* ibx-test: np=1,2 timeout=30 expect=nonzero launchers=mpilite,ompi nodes=1 */
/*
 * rma_win_fatal — a window's default error handler is MPI_ERRORS_ARE_FATAL
 * (MPI-3.1 §8.3), even when MPI_COMM_WORLD returns errors: MPI_Win_attach on
 * a window that is not dynamic must end the job with a non-zero status.
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
	static char buf[64];
	int rank, size;
	MPI_Win win;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_OK(MPI_Win_create(buf, sizeof(buf), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	MPI_Win_attach(win, buf, 8); /* ends the job */
	fprintf(stderr, "FAIL [rank %d]: MPI_Win_attach returned on a fatal handler\n", rank);
	MPI_Finalize();
	return 0;
}
