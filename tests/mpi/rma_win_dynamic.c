/* ibx-test: np=1,2,3,4 timeout=120 launchers=mpilite,ompi */
/*
 * rma_win_dynamic — dynamic windows: every member attaches regions and
 * publishes their addresses; origins read them with MPI_Get inside
 * MPI_Win_lock_all (target displacements are addresses) and write them with
 * MPI_Put; a region detached and another attached in its place is found
 * (the origin's cached table is refreshed); the old address is then
 * MPI_ERR_RMA_RANGE; the same buffer attached again works; many regions at
 * once; and one member attaching and detaching a scratch region all the
 * time while the others read a stable region of it (the region table's
 * version protocol: every read lands and sees the right bytes); and a
 * table that outgrows its block four times while others read (300
 * regions, no limit).
 *
 * The stale-address check needs the target's control block mapped here
 * (node-local over the shm path); under IBX_PATHS=verbs a stale access
 * fails in the verbs device instead and may take the connection down, so
 * that one check is skipped there.
 */
#include "mpitest.h"

#include <stdbool.h>

#define NREG 10

static int rank, size;

/* Every member's address of its buffer @buf. */
static void publish(void *buf, MPI_Aint *addrs)
{
	MPI_Aint mine;

	MPI_OK(MPI_Get_address(buf, &mine));
	MPI_OK(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
}

static void read_all(MPI_Win win, const MPI_Aint *addrs, size_t len, int salt)
{
	unsigned char *got = malloc(len);
	long bad;

	for (int r = 0; r < size; r++) {
		memset(got, 0, len);
		MPI_OK(MPI_Get(got, (int)len, MPI_BYTE, r, addrs[r], (int)len, MPI_BYTE, win));
		MPI_OK(MPI_Win_flush(r, win));
		bad = mt_verify(got, len, r, salt);
		CHECK(bad < 0, "region of rank %d (salt %d): byte %ld wrong", r, salt, bad);
	}
	free(got);
}

/* Rank 0's table outgrows its blocks (64, 128, 256, 512 entries: each
 * growth moves it to a new block) while the others keep reading @b0 (lb
 * bytes at rank 0, salt 3); then everyone reads every one of the regions,
 * and rank 0 detaches them in a scrambled order. */
static void grow_table(MPI_Win win, MPI_Aint b0, size_t lb)
{
	enum { NGROW = 300, RLEN = 16 };
	unsigned char *many = malloc(2 * RLEN * NGROW), got[64];
	MPI_Aint *maddr = malloc(NGROW * sizeof(*maddr));
	long bad;

	MPI_OK(MPI_Win_lock_all(0, win));
	for (int i = 0; i < NGROW; i++) {
		if (rank == 0) {
			/* 16 bytes every 32: neighbours, never overlapping */
			mt_fill(many + 2 * RLEN * i, RLEN, 0, 100 + i);
			MPI_OK(MPI_Win_attach(win, many + 2 * RLEN * i, RLEN));
			MPI_OK(MPI_Get_address(many + 2 * RLEN * i, &maddr[i]));
		} else {
			MPI_Aint off = (MPI_Aint)((i * 53) % (int)(lb - sizeof(got)));

			MPI_OK(MPI_Get(got, sizeof(got), MPI_BYTE, 0, b0 + off, sizeof(got),
				       MPI_BYTE, win));
			MPI_OK(MPI_Win_flush(0, win));
			for (size_t k = 0; k < sizeof(got); k++)
				if (got[k] != mt_byte((size_t)off + k, 0, 3)) {
					bad = (long)k;
					CHECK(0, "read %d of a growing table: byte %ld wrong", i,
					      bad);
				}
		}
	}
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Bcast(maddr, NGROW, MPI_AINT, 0, MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock_all(0, win));
	for (int i = 0; i < NGROW; i++) {
		MPI_OK(MPI_Get(got, RLEN, MPI_BYTE, 0, maddr[i], RLEN, MPI_BYTE, win));
		MPI_OK(MPI_Win_flush(0, win));
		bad = mt_verify(got, RLEN, 0, 100 + i);
		CHECK(bad < 0, "region %d of %d at rank 0: byte %ld wrong", i, NGROW, bad);
	}
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		for (int i = 0; i < NGROW; i++)
			MPI_OK(MPI_Win_detach(win, many + 2 * RLEN * ((i * 7) % NGROW)));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	free(maddr);
	free(many);
}

int main(int argc, char **argv)
{
	const char *paths = getenv("IBX_PATHS");
	bool verbs = paths && strcmp(paths, "verbs") == 0;
	size_t la = 1000, lb = 3000;
	unsigned char *a = malloc(la), *b = malloc(lb), *regs[NREG];
	MPI_Aint *addrs, *addrs2;
	MPI_Win win;
	int rc;

	mt_init(&argc, &argv, &rank, &size);
	addrs = malloc((size_t)size * sizeof(*addrs));
	addrs2 = malloc((size_t)size * sizeof(*addrs2));
	MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));

	/* one region each, read by everyone */
	mt_fill(a, la, rank, 1);
	MPI_OK(MPI_Win_attach(win, a, (MPI_Aint)la));
	publish(a, addrs);
	MPI_OK(MPI_Win_lock_all(0, win));
	read_all(win, addrs, la, 1);
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* detach it, attach another: found by a refresh; the old address is gone */
	MPI_OK(MPI_Win_detach(win, a));
	mt_fill(b, lb, rank, 2);
	MPI_OK(MPI_Win_attach(win, b, (MPI_Aint)lb));
	publish(b, addrs2);
	MPI_OK(MPI_Win_lock_all(0, win));
	read_all(win, addrs2, lb, 2);
	if (!verbs) {
		MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
		for (int r = 0; r < size; r++) {
			unsigned char x;

			rc = MPI_Get(&x, 1, MPI_BYTE, r, addrs[r], 1, MPI_BYTE, win);
			/* a's address may lie inside b if the heap reused it */
			if (addrs[r] < addrs2[r] || addrs[r] >= addrs2[r] + (MPI_Aint)lb)
				CHECK(rc == MPI_ERR_RMA_RANGE,
				      "Get at rank %d's detached region returned %d", r, rc);
			MPI_OK(MPI_Win_flush(r, win));
		}
		MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL));
	}
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* puts: every origin writes its rank into word [origin] of its right neighbour's b */
	{
		int right = (rank + 1) % size, left = (rank - 1 + size) % size;
		int v = 7000 + rank, got;

		MPI_OK(MPI_Win_lock_all(0, win));
		MPI_OK(MPI_Put(&v, 1, MPI_INT, right, addrs2[right] + 4 * rank, 1, MPI_INT, win));
		MPI_OK(MPI_Win_unlock_all(win));
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		memcpy(&got, b + 4 * left, 4);
		CHECK(got == 7000 + left, "put from rank %d: %d", left, got);
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* the same buffer again, and many regions at once */
	MPI_OK(MPI_Win_detach(win, b));
	mt_fill(b, lb, rank, 3);
	MPI_OK(MPI_Win_attach(win, b, (MPI_Aint)lb));
	for (int i = 0; i < NREG; i++) {
		regs[i] = malloc(64 + 16 * (size_t)i);
		mt_fill(regs[i], 64 + 16 * (size_t)i, rank, 10 + i);
		MPI_OK(MPI_Win_attach(win, regs[i], 64 + 16 * (MPI_Aint)i));
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock_all(0, win));
	read_all(win, addrs2, lb, 3);
	for (int i = NREG - 1; i >= 0; i--) {
		publish(regs[i], addrs);
		read_all(win, addrs, 64 + 16 * (size_t)i, 10 + i);
	}
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	for (int i = 0; i < NREG; i++) {
		MPI_OK(MPI_Win_detach(win, regs[i]));
		free(regs[i]);
	}

	/* rank 0 changes its table all the time while the others read b from it */
	{
		unsigned char scratch[8][32], got[64];
		long bad;

		MPI_OK(MPI_Win_lock_all(0, win));
		for (int it = 0; it < 3000; it++) {
			if (rank == 0) {
				int k = it % 8;

				MPI_OK(MPI_Win_attach(win, scratch[k], 32));
				MPI_OK(MPI_Win_detach(win, scratch[k]));
			} else {
				MPI_Aint off = (MPI_Aint)((it * 37) % (int)(lb - sizeof(got)));

				MPI_OK(MPI_Get(got, sizeof(got), MPI_BYTE, 0, addrs2[0] + off,
					       sizeof(got), MPI_BYTE, win));
				MPI_OK(MPI_Win_flush(0, win));
				for (size_t i = 0; i < sizeof(got); i++)
					if (got[i] != mt_byte((size_t)off + i, 0, 3)) {
						bad = (long)i;
						CHECK(0, "read %d at offset %ld: byte %ld wrong",
						      it, (long)off, bad);
					}
			}
		}
		MPI_OK(MPI_Win_unlock_all(win));
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	grow_table(win, addrs2[0], lb);
	/* freed with a region still attached: the free detaches it */
	MPI_OK(MPI_Win_free(&win));
	free(a);
	free(b);
	free(addrs);
	free(addrs2);
	MPI_OK(MPI_Finalize());
	if (rank == 0)
		printf("rma_win_dynamic: ok (%d ranks)\n", size);
	return 0;
}
