/* ibx-test: np=1,2,3,4 timeout=120 */
/*
 * p2p_sizes — every send mode moves every size from 0 B to 8 MiB intact.
 *
 * Each rank sends to its right neighbour and receives from its left one
 * (with one rank that is itself). Sizes straddle the eager/rendezvous and
 * pipelining limits; every byte is checked, and so are the status fields.
 * The receive is always posted (and a barrier passed) before the send
 * starts, which MPI_Rsend requires and makes MPI_Ssend safe in a ring.
 */
#include "mpitest.h"

enum mode { M_SEND, M_SSEND, M_RSEND, M_ISEND, M_ISSEND, M_IRSEND, M_ISEND_RECV, M_NMODES };
static const char *mode_name[M_NMODES] = {"Send",   "Ssend",  "Rsend",	   "Isend",
					  "Issend", "Irsend", "Isend+Recv"};

static const size_t sizes[] = {
    0,	     1,	      7,     8,	     63,
    64,	     65,      255,   256,    1023,
    1024,    4095,    4096,  4097,   8191,
    8192,    8193,    16383, 16384,  16385,
    65535,   65536,   65537, 262144, (1 << 20) + 3,
    4 << 20, 8 << 20,
};

int main(int argc, char **argv)
{
	int rank, size;
	size_t maxlen = 8 << 20;
	unsigned char *sbuf, *rbuf;

	mt_init(&argc, &argv, &rank, &size);
	int right = (rank + 1) % size, left = (rank - 1 + size) % size;

	sbuf = malloc(maxlen);
	rbuf = malloc(maxlen + 64);
	CHECK(sbuf && rbuf, "out of memory");

	for (int m = 0; m < M_NMODES; m++) {
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
			size_t len = sizes[si];
			int tag = (int)(si * 10 + (size_t)m), salt = (int)si + 100 * m;
			int count = (int)len, n;
			MPI_Request rq[2];
			MPI_Status st;

			mt_fill(sbuf, len, rank, salt);
			memset(rbuf, 0xa5, len + 64);
			if (m == M_ISEND_RECV) {
				/* receive side blocking, from any source */
				MPI_OK(MPI_Isend(sbuf, count, MPI_BYTE, right, tag, MPI_COMM_WORLD,
						 &rq[0]));
				MPI_OK(MPI_Recv(rbuf, count, MPI_BYTE, MPI_ANY_SOURCE, tag,
						MPI_COMM_WORLD, &st));
				MPI_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
				CHECK(rq[0] == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
			} else {
				MPI_OK(MPI_Irecv(rbuf, count, MPI_BYTE, left, tag, MPI_COMM_WORLD,
						 &rq[1]));
				MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
				switch (m) {
				case M_SEND:
					MPI_OK(MPI_Send(sbuf, count, MPI_BYTE, right, tag,
							MPI_COMM_WORLD));
					break;
				case M_SSEND:
					MPI_OK(MPI_Ssend(sbuf, count, MPI_BYTE, right, tag,
							 MPI_COMM_WORLD));
					break;
				case M_RSEND:
					MPI_OK(MPI_Rsend(sbuf, count, MPI_BYTE, right, tag,
							 MPI_COMM_WORLD));
					break;
				case M_ISEND:
					MPI_OK(MPI_Isend(sbuf, count, MPI_BYTE, right, tag,
							 MPI_COMM_WORLD, &rq[0]));
					break;
				case M_ISSEND:
					MPI_OK(MPI_Issend(sbuf, count, MPI_BYTE, right, tag,
							  MPI_COMM_WORLD, &rq[0]));
					break;
				case M_IRSEND:
					MPI_OK(MPI_Irsend(sbuf, count, MPI_BYTE, right, tag,
							  MPI_COMM_WORLD, &rq[0]));
					break;
				}
				if (m >= M_ISEND) {
					MPI_Status sts[2];

					MPI_OK(MPI_Waitall(2, rq, sts));
					st = sts[1];
				} else {
					MPI_OK(MPI_Wait(&rq[1], &st));
				}
				CHECK(rq[1] == MPI_REQUEST_NULL, "request not freed");
			}
			long bad = mt_verify(rbuf, len, left, salt);
			CHECK(bad < 0, "%s %zu bytes from %d: byte %ld is 0x%02x, expected 0x%02x",
			      mode_name[m], len, left, bad, bad >= 0 ? rbuf[bad] : 0,
			      bad >= 0 ? mt_byte((size_t)bad, left, salt) : 0);
			for (int i = 0; i < 64; i++)
				CHECK(rbuf[len + (size_t)i] == 0xa5,
				      "%s %zu bytes: wrote past the message", mode_name[m], len);
			CHECK(st.MPI_SOURCE == left, "%s: MPI_SOURCE %d, expected %d", mode_name[m],
			      st.MPI_SOURCE, left);
			CHECK(st.MPI_TAG == tag, "%s: MPI_TAG %d, expected %d", mode_name[m],
			      st.MPI_TAG, tag);
			MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
			CHECK(n == count, "%s: count %d, expected %d", mode_name[m], n, count);
		}
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("p2p_sizes: %d modes x %zu sizes on %d ranks OK\n", M_NMODES,
		       sizeof(sizes) / sizeof(sizes[0]), size);
	free(sbuf);
	free(rbuf);
	MPI_OK(MPI_Finalize());
	return 0;
}
