/* ibx-test: np=1,2,3,4 timeout=120 */
/*
 * rma_win_share — windows over the user's own memory, whatever kind it is:
 * static data, the heap, the stack, memory unmapped and mapped again.
 * mpi-lite moves ordinary private pages into a shared segment in place
 * (IBX_WIN_SHARE, on by default) so that node-local ranks reach them with
 * loads and stores; this checks what the program must not notice:
 *   - bytes written before MPI_Win_create are there afterwards, for the
 *     owner and for every rank that reads them with MPI_Get, including the
 *     bytes of the same pages outside the window;
 *   - puts and accumulates from every rank land exactly (exact sums), on a
 *     window at an unaligned address, created and freed many times over
 *     one buffer (the moved pages are reused);
 *   - a window on the stack (which never moves) works the same;
 *   - a dynamic window over heap memory that is freed, allocated again and
 *     attached again shows the new memory's bytes, never the old ones.
 * rma_win_noshare runs the same with IBX_WIN_SHARE=n.
 */
#include "mpitest.h"

#include <sys/mman.h>

#define BUF_LEN	 (64 * 1024)
#define WIN_OFF	 100 /* the window starts off a page boundary */
#define WIN_LEN	 10000
#define SLOT	 64 /* bytes each origin puts into each target */
#define ROUNDS	 6
#define ACC_ADDS 50

static unsigned char g_buf[BUF_LEN];
static int rank, size;

static unsigned char pat(int owner, int round, size_t i)
{
	return (unsigned char)(owner * 29 + round * 53 + i * 11 + 3);
}

/* Reads target @t's bytes [@off, @off + @n) of @win and compares them with
 * pat(t, round, WIN_OFF + off + i) (the window starts at WIN_OFF in g_buf,
 * or at 0 of a buffer filled with the same offsets). */
static void get_check(MPI_Win win, int t, int round, size_t base_off, size_t off, size_t n,
		      const char *what)
{
	unsigned char got[512];

	CHECK(n <= sizeof(got), "bad length");
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
	MPI_OK(MPI_Get(got, (int)n, MPI_BYTE, t, (MPI_Aint)off, (int)n, MPI_BYTE, win));
	MPI_OK(MPI_Win_unlock(t, win));
	for (size_t i = 0; i < n; i++)
		CHECK(got[i] == pat(t, round, base_off + off + i),
		      "%s round %d: byte %zu of rank %d is %u, want %u", what, round, off + i, t,
		      got[i], pat(t, round, base_off + off + i));
}

/* One window over [mem + WIN_OFF, + WIN_LEN) of a buffer of @len bytes. */
static void window_round(unsigned char *mem, size_t len, int round, const char *what)
{
	unsigned char src[SLOT];
	int *sum;
	MPI_Win win;

	for (size_t i = 0; i < len; i++)
		mem[i] = pat(rank, round, i);
	sum = (int *)(mem + WIN_OFF + WIN_LEN - 64); /* aligned: WIN_OFF + WIN_LEN = 10100 */
	*sum = 0;
	MPI_OK(MPI_Win_create(mem + WIN_OFF, WIN_LEN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	/* the bytes written before, as every rank sees them */
	for (int t = 0; t < size; t++)
		get_check(win, t, round, WIN_OFF, 2000, 300, what);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	/* every rank puts its slot into every target, and adds to its sum */
	for (size_t i = 0; i < SLOT; i++)
		src[i] = (unsigned char)(rank + round + i);
	MPI_OK(MPI_Win_lock_all(0, win));
	for (int t = 0; t < size; t++) {
		int one = rank + 1;

		MPI_OK(MPI_Put(src, SLOT, MPI_BYTE, t, (MPI_Aint)rank * SLOT, SLOT, MPI_BYTE, win));
		for (int k = 0; k < ACC_ADDS; k++)
			MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, t, WIN_LEN - 64, 1, MPI_INT,
					      MPI_SUM, win));
	}
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	for (int o = 0; o < size; o++)
		for (size_t i = 0; i < SLOT; i++)
			CHECK(mem[WIN_OFF + (size_t)o * SLOT + i] == (unsigned char)(o + round + i),
			      "%s round %d: byte %zu of rank %d's slot", what, round, i, o);
	CHECK(*sum == ACC_ADDS * size * (size + 1) / 2, "%s round %d: sum %d, want %d", what, round,
	      *sum, ACC_ADDS * size * (size + 1) / 2);
	MPI_OK(MPI_Win_free(&win));
	/* the bytes around the window on the same pages are the program's */
	for (size_t i = 0; i < WIN_OFF; i++)
		CHECK(mem[i] == pat(rank, round, i), "%s round %d: byte %zu before the window",
		      what, round, i);
	for (size_t i = WIN_OFF + WIN_LEN; i < len; i++)
		CHECK(mem[i] == pat(rank, round, i), "%s round %d: byte %zu after the window", what,
		      round, i);
}

static void stack_windows(void)
{
	unsigned char mem[WIN_OFF + WIN_LEN + 200] __attribute__((aligned(64)));

	for (int round = 0; round < 2; round++)
		window_round(mem, sizeof(mem), round, "stack");
}

/* A dynamic window: heap memory attached, detached, freed; new memory
 * (perhaps at the same address) attached; its bytes are what ranks read. */
static void dynamic_reattach(void)
{
	MPI_Win win;
	MPI_Aint *addrs = malloc((size_t)size * sizeof(*addrs));

	CHECK(addrs, "no memory");
	MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	for (int round = 0; round < 3; round++) {
		size_t len = 256 * 1024;
		unsigned char *mem =
		    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		MPI_Aint mine;

		CHECK(mem != MAP_FAILED, "mmap");
		for (size_t i = 0; i < len; i++)
			mem[i] = pat(rank, round + 10, i);
		MPI_OK(MPI_Win_attach(win, mem, (MPI_Aint)len));
		MPI_OK(MPI_Get_address(mem, &mine));
		MPI_OK(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
		for (int t = 0; t < size; t++) {
			unsigned char got[256];

			MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
			MPI_OK(MPI_Get(got, sizeof(got), MPI_BYTE, t, addrs[t] + 5000, sizeof(got),
				       MPI_BYTE, win));
			MPI_OK(MPI_Win_unlock(t, win));
			for (size_t i = 0; i < sizeof(got); i++)
				CHECK(got[i] == pat(t, round + 10, 5000 + i),
				      "dynamic round %d: byte %zu of rank %d", round, i, t);
		}
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		MPI_OK(MPI_Win_detach(win, mem));
		CHECK(munmap(mem, len) == 0, "munmap");
	}
	MPI_OK(MPI_Win_free(&win));
	free(addrs);
}

int main(int argc, char **argv)
{
	unsigned char *heap;

	mt_init(&argc, &argv, &rank, &size);
	for (int round = 0; round < ROUNDS; round++)
		window_round(g_buf, BUF_LEN, round, "static");
	heap = malloc(WIN_OFF + WIN_LEN + 3000);
	CHECK(heap, "no memory");
	for (int round = 0; round < 3; round++)
		window_round(heap, WIN_OFF + WIN_LEN + 3000, round, "heap");
	free(heap);
	stack_windows();
	dynamic_reattach();
	MPI_OK(MPI_Finalize());
	return 0;
}
