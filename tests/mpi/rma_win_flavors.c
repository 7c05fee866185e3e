/* ibx-test: np=1,2,3,4 timeout=90 launchers=mpilite,ompi */
/*
 * rma_win_flavors — creation and free of the four window flavours on
 * MPI_COMM_WORLD, MPI_COMM_SELF and a split communicator, with members of
 * size 0: the attributes each returns (MPI_WIN_BASE the pointer itself,
 * SIZE / DISP_UNIT / CREATE_FLAVOR / MODEL pointers to the values), shared
 * windows laid out contiguously (part r + 1 starts where part r ends;
 * MPI_Win_shared_query with MPI_PROC_NULL gives the first part with memory)
 * whose stores through another member's pointer the owner sees after
 * MPI_Win_sync and a barrier, the same query on MPI_Win_allocate windows
 * (MPI 4.1, mpi-lite only: node-local parts reachable, others size 0), MPI_Alloc_mem memory as a
 * window, many windows created and freed in a row (nothing leaks or runs out), and one left for
 * MPI_Finalize to clean up. On a communicator that spans nodes (the verbs lane's two emulated
 * nodes) MPI_Win_allocate_shared must fail with MPI_ERR_RMA_SHARED instead.
 *
 * Shared windows work whatever path the engine takes to node-local ranks
 * (IBX_PATHS=verbs too): their memory is mapped by every member.
 */
#include "mpitest.h"

#include <stdbool.h>

static int rank, size;

static void check_attrs(MPI_Win win, void *base, MPI_Aint bytes, int disp_unit, int flavor)
{
	void *b = (void *)0x1;
	MPI_Aint *sz = NULL;
	int *du = NULL, *fl = NULL, *model = NULL, flag = 0;

	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
	CHECK(flag && b == base, "MPI_WIN_BASE %p, expected %p", b, base);
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
	CHECK(flag && sz && *sz == bytes, "MPI_WIN_SIZE %ld, expected %ld", sz ? (long)*sz : -1L,
	      (long)bytes);
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag));
	CHECK(flag && du && *du == disp_unit, "MPI_WIN_DISP_UNIT %d, expected %d", du ? *du : -1,
	      disp_unit);
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
	CHECK(flag && fl && *fl == flavor, "MPI_WIN_CREATE_FLAVOR %d, expected %d", fl ? *fl : -1,
	      flavor);
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
	CHECK(flag && model && *model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL %d", model ? *model : -1);
}

/* MPI_Win_create over user memory and over MPI_Alloc_mem memory. */
static void test_create(MPI_Comm comm, int crank)
{
	MPI_Aint bytes = crank % 2 ? 0 : 64 * (crank + 1);
	char *mem = bytes ? malloc((size_t)bytes) : NULL;
	void *am = NULL;
	MPI_Win win;

	MPI_OK(MPI_Win_create(mem, bytes, 1, MPI_INFO_NULL, comm, &win));
	CHECK(win != MPI_WIN_NULL, "no window");
	check_attrs(win, mem, bytes, 1, MPI_WIN_FLAVOR_CREATE);
	MPI_OK(MPI_Win_free(&win));
	CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not set MPI_WIN_NULL");
	free(mem);

	MPI_OK(MPI_Alloc_mem(4096, MPI_INFO_NULL, &am));
	CHECK(am != NULL, "MPI_Alloc_mem gave NULL");
	memset(am, 0x5a, 4096);
	MPI_OK(MPI_Win_create(am, 4096, 8, MPI_INFO_NULL, comm, &win));
	check_attrs(win, am, 4096, 8, MPI_WIN_FLAVOR_CREATE);
	MPI_OK(MPI_Win_free(&win));
	MPI_OK(MPI_Free_mem(am));
	MPI_OK(MPI_Alloc_mem(0, MPI_INFO_NULL, &am));
	MPI_OK(MPI_Free_mem(am));
}

/* MPI_Win_shared_query on an MPI_Win_allocate window (MPI 4.1; mpi-lite
 * puts node-local members' parts in a shared segment): our own part is
 * our base; another member's is its size at a pointer, or size 0 and NULL
 * when it is not reachable by load / store (another node); MPI_PROC_NULL
 * names the lowest reachable part with memory. Every member writes byte
 * `crank` of every part it reaches (those larger than the group); after
 * MPI_Win_sync and a barrier each owner finds the bytes of exactly the
 * members that said (allgather) they reach it. */
static void query_allocated(MPI_Comm comm, MPI_Win win, unsigned char *base, MPI_Aint bytes)
{
	int csize, me, qdu, first = -1;
	MPI_Aint qs, *sizes;
	unsigned char *q;
	char *reach, *all;

	MPI_OK(MPI_Comm_size(comm, &csize));
	MPI_OK(MPI_Comm_rank(comm, &me));
	reach = calloc((size_t)csize, 1);
	all = calloc((size_t)csize * (size_t)csize, 1);
	sizes = calloc((size_t)csize, sizeof(*sizes));
	CHECK(reach && all && sizes, "calloc");
	MPI_OK(MPI_Allgather(&bytes, 1, MPI_AINT, sizes, 1, MPI_AINT, comm));
	MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
	MPI_OK(MPI_Barrier(comm)); /* every owner has filled its part */
	for (int r = 0; r < csize; r++) {
		MPI_OK(MPI_Win_shared_query(win, r, &qs, &qdu, &q));
		CHECK(qdu == 4, "rank %d: disp_unit %d", r, qdu);
		CHECK((qs == 0) == (q == NULL), "rank %d: %ld bytes at %p", r, (long)qs, (void *)q);
		CHECK(qs == 0 || qs == sizes[r], "rank %d: %ld bytes, not %ld", r, (long)qs,
		      (long)sizes[r]);
		if (r == me)
			CHECK(qs == bytes && (!bytes || q == base), "own part: %ld bytes at %p",
			      (long)qs, (void *)q);
		if (qs && first < 0)
			first = r;
		if (qs > csize) {
			reach[r] = 1;
			q[me] = (unsigned char)(0x40 + me);
		}
	}
	MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qs, &qdu, &q));
	CHECK(first < 0 ? qs == 0 && q == NULL : qs == sizes[first],
	      "MPI_PROC_NULL: %ld bytes, lowest reachable part %d", (long)qs, first);
	MPI_OK(MPI_Allgather(reach, csize, MPI_CHAR, all, csize, MPI_CHAR, comm));
	MPI_OK(MPI_Win_sync(win));
	MPI_OK(MPI_Barrier(comm));
	MPI_OK(MPI_Win_sync(win));
	for (int w = 0; w < csize; w++)
		if (all[(size_t)w * (size_t)csize + (size_t)me])
			CHECK(base[w] == 0x40 + w, "byte %d of rank %d's part is %#x", w, me,
			      base[w]);
	MPI_OK(MPI_Win_unlock_all(win));
	free(sizes);
	free(all);
	free(reach);
}

static void test_allocate(MPI_Comm comm, int crank)
{
	MPI_Aint bytes = crank == 1 ? 0 : 1000 + crank;
	unsigned char *base = (void *)0x1;
	MPI_Win win;

	MPI_OK(MPI_Win_allocate(bytes, 4, MPI_INFO_NULL, comm, &base, &win));
	CHECK(bytes == 0 || base != NULL, "MPI_Win_allocate gave NULL for %ld bytes", (long)bytes);
	for (MPI_Aint i = 0; i < bytes; i++) /* zeroed, writable */
		CHECK(base[i] == 0, "allocated byte %ld is %d", (long)i, base[i]);
	if (bytes > 0)
		memset(base, 0xab, (size_t)bytes);
	check_attrs(win, bytes ? base : NULL, bytes, 4, MPI_WIN_FLAVOR_ALLOCATE);
	if (MPILITE_BUILD)
		query_allocated(comm, win, base, bytes);
	MPI_OK(MPI_Win_free(&win));
}

static void test_dynamic(MPI_Comm comm)
{
	MPI_Win win;

	MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win));
	check_attrs(win, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC);
	MPI_OK(MPI_Win_free(&win));
}

/* Part sizes of the shared windows: rank 0 holds a word per member, the
 * last of several ranks has none. */
static MPI_Aint part_size(int r, int csize)
{
	if (r == 0)
		return 8 * (MPI_Aint)csize;
	return r == csize - 1 ? 0 : 24 * (MPI_Aint)(r + 1);
}

static void test_shared(MPI_Comm comm, int crank, int csize, int disp_unit)
{
	MPI_Aint bytes = part_size(crank, csize), qs, expect_off = 0;
	long *base = NULL, *q, *zero;
	int qdu;
	MPI_Win win;
	char *first = NULL;

	MPI_OK(MPI_Win_allocate_shared(bytes, disp_unit, MPI_INFO_NULL, comm, &base, &win));
	check_attrs(win, base, bytes, disp_unit, MPI_WIN_FLAVOR_SHARED);
	/* contiguous: every part starts where the one before ends */
	for (int r = 0; r < csize; r++) {
		MPI_OK(MPI_Win_shared_query(win, r, &qs, &qdu, &q));
		CHECK(qdu == disp_unit, "rank %d: disp_unit %d", r, qdu);
		CHECK(qs == part_size(r, csize), "rank %d: size %ld", r, (long)qs);
		if (r == 0)
			first = (char *)q;
		CHECK((char *)q == first + expect_off, "rank %d's part at %p, expected %p", r,
		      (void *)q, (void *)(first + expect_off));
		if (r == crank)
			CHECK(q == base, "own part %p, query %p", (void *)base, (void *)q);
		expect_off += qs;
	}
	MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qs, &qdu, &q));
	CHECK(qs == part_size(0, csize) && (char *)q == first, "MPI_PROC_NULL: size %ld at %p",
	      (long)qs, (void *)q);
	/* stores through the pointers: every member into rank 0's word of its
	 * own, rank 0 into the first word of every other part with memory */
	MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
	MPI_OK(MPI_Win_shared_query(win, 0, &qs, &qdu, &zero));
	zero[crank] = 1000 + crank;
	if (crank == 0)
		for (int r = 1; r < csize; r++) {
			MPI_OK(MPI_Win_shared_query(win, r, &qs, &qdu, &q));
			if (qs)
				q[0] = 2000 + r;
		}
	MPI_OK(MPI_Win_sync(win));
	MPI_OK(MPI_Barrier(comm));
	MPI_OK(MPI_Win_sync(win));
	if (crank == 0)
		for (int r = 0; r < csize; r++)
			CHECK(base[r] == 1000 + r, "rank 0's word %d is %ld", r, base[r]);
	else if (bytes)
		CHECK(base[0] == 2000 + crank, "rank %d's first word is %ld", crank, base[0]);
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Win_free(&win));
}

/* Every member of @comm runs on one node (a job over several nodes: the
 * verbs lane's two emulated nodes). */
static int on_one_node(MPI_Comm comm)
{
	MPI_Comm node;
	int nsize, csize;

	MPI_OK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
	MPI_OK(MPI_Comm_size(node, &nsize));
	MPI_OK(MPI_Comm_size(comm, &csize));
	MPI_OK(MPI_Comm_free(&node));
	return nsize == csize;
}

static void all_flavors(MPI_Comm comm)
{
	int crank, csize;

	MPI_OK(MPI_Comm_rank(comm, &crank));
	MPI_OK(MPI_Comm_size(comm, &csize));
	test_create(comm, crank);
	test_allocate(comm, crank);
	test_dynamic(comm);
	if (on_one_node(comm)) {
		test_shared(comm, crank, csize, 8);
	} else {
		/* the standard's condition, refused by every member alike */
		MPI_Errhandler eh;
		MPI_Win win;
		void *base;

		MPI_OK(MPI_Comm_get_errhandler(comm, &eh));
		MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
		MPI_FAILS(MPI_ERR_RMA_SHARED,
			  MPI_Win_allocate_shared(64, 8, MPI_INFO_NULL, comm, &base, &win));
		MPI_OK(MPI_Comm_set_errhandler(comm, eh));
		MPI_OK(MPI_Errhandler_free(&eh));
	}
}

int main(int argc, char **argv)
{
	static char scratch[256];
	void *scratch_base;
	MPI_Comm half, node;
	MPI_Win win;

	mt_init(&argc, &argv, &rank, &size);
	all_flavors(MPI_COMM_WORLD);
	all_flavors(MPI_COMM_SELF);
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half));
	test_create(half, 0);
	test_allocate(half, 1);
	test_dynamic(half);
	MPI_OK(MPI_Comm_free(&half));
	MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
	all_flavors(node);
	MPI_OK(MPI_Comm_free(&node));

	/* many in a row: keys, control blocks and communicators are released */
	for (int i = 0; i < 300; i++) {
		void *b;

		switch (i % 4) {
		case 0:
			MPI_OK(MPI_Win_allocate(128, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b, &win));
			break;
		case 1: MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win)); break;
		case 2:
			MPI_OK(
			    MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_SELF, &b, &win));
			break;
		default:
			MPI_OK(MPI_Win_create(scratch, sizeof(scratch), 1, MPI_INFO_NULL,
					      MPI_COMM_WORLD, &win));
			break;
		}
		MPI_OK(MPI_Win_free(&win));
	}
	/* one left to MPI_Finalize, which must cope */
	MPI_OK(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &scratch_base, &win));
	MPI_OK(MPI_Finalize());
	if (rank == 0)
		printf("rma_win_flavors: ok (%d ranks)\n", size);
	return 0;
}
