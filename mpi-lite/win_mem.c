/*
 * win_mem.c — MPI_Alloc_mem and MPI_Free_mem (MPI-3.1 §8.2), and how the
 * user memory of MPI_Win_create and MPI_Win_attach is mapped.
 *
 * User memory: when a member of the window runs on this node and reaches
 * this process through shared memory, the pages are moved into a shared
 * segment in place (ibx_mem_share: same addresses, same bytes), so that
 * its puts, gets and atomics are loads, stores and CPU atomics (~0.02 us)
 * instead of a system call each (CMA, ~1 us). Not under
 * MPI_THREAD_MULTIPLE (another thread could write a page while it moves),
 * nor with IBX_WIN_SHARE=n; memory that cannot move (the stack, shared
 * mappings of the program's own) is mapped in place as before.
 *
 * Plain heap memory (64-byte aligned), remembered so that MPI_Free_mem can
 * tell MPI_ERR_BASE. Windows made over it map it like any user memory
 * (ibx_mem_map; the verbs path registers it through its cache): a memfd
 * segment per allocation (ibx_mem_alloc) would cost a file descriptor, a
 * mapping and a page for every small allocation, and the flavour where
 * node-local load/store pays, MPI_Win_allocate, gets its segment anyway.
 */
#include "win_int.h"

#include <stdlib.h>

/* what MPI_Alloc_mem returned and MPI_Free_mem has not taken back */
static struct {
	void **v;
	size_t n, cap;
} allocs;

/* Some member of @comm other than this process is on this node. */
static bool comm_has_node_peer(MPI_Comm comm)
{
	const ibx_ctx_t *ctx = mpil_g.ctx;

	for (int r = 0; r < comm->size; r++) {
		int w = mpil_comm_to_world(comm, r);

		if (w != ctx->rank && ctx->peers[w].local)
			return true;
	}
	return false;
}

ibx_status_t mpil_win_map_user(MPI_Comm comm, void *base, size_t size, ibx_mem_t **mem_p)
{
	if (mpil_config()->WIN_SHARE && mpil_g.thread_level < MPI_THREAD_MULTIPLE &&
	    comm_has_node_peer(comm))
		return ibx_mem_share(mpil_g.ctx, base, size, mem_p);
	return ibx_mem_map(mpil_g.ctx, base, size, mem_p);
}

void mpil_win_alloc_mem_fini(void)
{
	free(allocs.v);
	memset(&allocs, 0, sizeof(allocs));
}

MPIL_PMPI_ALIAS(Alloc_mem)
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
	static const char F[] = "MPI_Alloc_mem";
	MPIL_CS_GUARD();
	void *p;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_info(NULL, info, true, F));
	if (!baseptr)
		return mpil_err(NULL, MPI_ERR_ARG, F, "baseptr is NULL");
	if (size < 0)
		return mpil_err(NULL, MPI_ERR_SIZE, F, "negative size %lld", (long long)size);
	if (allocs.n == allocs.cap) {
		size_t ncap = allocs.cap ? 2 * allocs.cap : 16;
		void **nv = realloc(allocs.v, ncap * sizeof(*nv));

		if (!nv)
			return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory");
		allocs.v = nv;
		allocs.cap = ncap;
	}
	if (posix_memalign(&p, 64, size ? (size_t)size : 1) != 0)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "cannot allocate %lld bytes",
				(long long)size);
	allocs.v[allocs.n++] = p;
	*(void **)baseptr = p;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Free_mem)
int PMPI_Free_mem(void *base)
{
	static const char F[] = "MPI_Free_mem";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (!base)
		return MPI_SUCCESS;
	/* newest first: the usual order of frees */
	for (size_t i = allocs.n; i-- > 0;)
		if (allocs.v[i] == base) {
			allocs.v[i] = allocs.v[--allocs.n];
			free(base);
			return MPI_SUCCESS;
		}
	return mpil_err(NULL, MPI_ERR_BASE, F, "%p was not returned by MPI_Alloc_mem", base);
}
