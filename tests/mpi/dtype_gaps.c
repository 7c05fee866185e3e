/* ibx-test: np=2 timeout=120 */
/*
 * dtype_gaps — typed messages whose buffers have unmapped pages in the
 * gaps between their blocks (a column of pages with every other page
 * returned to the kernel): the sender's blocks and the receiver's must
 * still be reached block by block — registration covers the mapped
 * blocks only (Optimistic Group Registration splits at the holes; a
 * receiver that cannot register its whole span falls back from multi-w to
 * segments) — and the holes must never be touched. Also the same at the
 * receiver only, and a contiguous peer on either side. Run once per
 * IBX_DT_SCHEME by the dtype_gaps_* variants.
 */
#include "mpitest.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define NPAGES 64 /* blocks: pages 0, 2, 4, ... 62 */

static int rank;
static long pg;

/* NPAGES pages, the odd ones unmapped. */
static char *holey(void)
{
	char *p = mmap(NULL, (size_t)NPAGES * (size_t)pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED, "mmap failed");
	for (int i = 1; i < NPAGES; i += 2)
		CHECK(munmap(p + (size_t)i * (size_t)pg, (size_t)pg) == 0, "munmap failed");
	return p;
}

static unsigned char val(int src, long i)
{
	return (unsigned char)(src * 37 + i * 11 + 5);
}

static void fill(char *p, int src)
{
	for (long b = 0; b < NPAGES / 2; b++)
		for (long i = 0; i < pg; i++)
			p[2 * b * pg + i] = (char)val(src, b * pg + i);
}

static void check(const char *p, int src, const char *what)
{
	for (long b = 0; b < NPAGES / 2; b++)
		for (long i = 0; i < pg; i++)
			CHECK((unsigned char)p[2 * b * pg + i] == val(src, b * pg + i),
			      "%s: block %ld byte %ld", what, b, i);
}

int main(int argc, char **argv)
{
	MPI_Datatype col;
	char *s, *r, *flat;
	int peer;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	mt_rank = rank;
	peer = 1 - rank;
	pg = sysconf(_SC_PAGESIZE);
	MPI_OK(MPI_Type_vector(NPAGES / 2, (int)pg, (int)(2 * pg), MPI_BYTE, &col));
	MPI_OK(MPI_Type_commit(&col));
	s = holey();
	r = holey();
	flat = malloc((size_t)(NPAGES / 2) * (size_t)pg);
	CHECK(flat != NULL, "out of memory");

	/* holes on both sides */
	fill(s, rank);
	MPI_OK(MPI_Sendrecv(s, 1, col, peer, 1, r, 1, col, peer, 1, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE));
	check(r, peer, "both sides holey");

	/* contiguous sender, holey receiver */
	for (long i = 0; i < NPAGES / 2 * pg; i++)
		flat[i] = (char)val(rank, i);
	MPI_OK(MPI_Sendrecv(flat, (int)(NPAGES / 2 * pg), MPI_BYTE, peer, 2, r, 1, col, peer, 2,
			    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	check(r, peer, "contiguous to holey");

	/* holey sender, contiguous receiver */
	MPI_OK(MPI_Sendrecv(s, 1, col, peer, 3, flat, (int)(NPAGES / 2 * pg), MPI_BYTE, peer, 3,
			    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	for (long i = 0; i < NPAGES / 2 * pg; i++)
		CHECK((unsigned char)flat[i] == val(peer, i), "holey to contiguous: byte %ld", i);

	/* many times: registrations cached across messages stay right */
	for (int k = 0; k < 20; k++) {
		fill(s, rank + k);
		MPI_OK(MPI_Sendrecv(s, 1, col, peer, 4, r, 1, col, peer, 4, MPI_COMM_WORLD,
				    MPI_STATUS_IGNORE));
		check(r, peer + k, "repeated");
	}
	MPI_OK(MPI_Type_free(&col));
	free(flat);
	MPI_Finalize();
	return 0;
}
