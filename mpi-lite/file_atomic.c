/*
 * file_atomic.c — MPI-IO atomic mode without file-system locks (MPI-3.1
 * §13.6.1), after Ross, Latham, Gropp, Thakur and Toonen (2005): accesses
 * are serialised by distributed mutexes (MPIX_Mutex: RDMA atomics, no
 * target progress) instead of fcntl locks, and, beyond that paper, by byte
 * range, and not at all when the views show that no byte can be shared.
 *
 * Byte-range locking. The file is cut into stripes of IBX_IO_LOCK_STRIPE
 * bytes; stripe s is guarded by mutex s mod N (N = IBX_IO_LOCKS, mutex i
 * homed at rank i mod size). An access holds, for its whole duration, the
 * mutexes of every stripe of the file range it spans [lo, hi):
 *
 *   file    |stripe 0|stripe 1|stripe 2|stripe 3|stripe 4| ...
 *   mutex       0        1        2        3        0     (N = 4)
 *   write A          [=========]                    mutexes 1, 2
 *   write B                            [====]       mutex 3: runs alongside A
 *   write C               [=================]       1, 2, 3: waits for A and B
 *
 * Two accesses that share a byte share a stripe, hence a mutex, so they
 * never run at the same time: each access is atomic with respect to every
 * overlapping one, and the order in which they get the common mutex is the
 * sequential order that §13.6.1 asks for. Mutexes are always taken in
 * increasing index order (an access spanning N stripes or more takes all
 * N), so no two accesses can wait for each other in a cycle.
 *
 * Views that cannot overlap. When a view is set (and when atomic mode is
 * turned on) every rank publishes its view's footprint: the displacement,
 * the filetype extent (the period) and the filetype's blocks within one
 * period. All footprints are brought to a common period L (the least
 * common multiple of the extents) and taken modulo L; if no residue is
 * covered by two ranks, no file byte is in two views (a byte b of view i
 * has residue b mod L within view i's residues), whatever the offsets, and
 * accesses take no lock at all. Every rank computes the same answer from
 * the same gathered data. Views with too many blocks, or whose common
 * period would be too long, count as overlapping (locks are kept).
 */
#include "file_int.h"

#include <stdlib.h>
#include <string.h>

/* Residue intervals the overlap check accepts in total. */
#define SIG_MAX_INTERVALS (1 << 20)

typedef struct ival {
	int64_t lo, hi;
	int rank;
} ival_t;

static int cmp_ival(const void *a, const void *b)
{
	const ival_t *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Appends [lo, lo + len) mod @L (split where it wraps) for @rank. */
static void add_residue(ival_t *v, int64_t *n, int64_t lo, int64_t len, int64_t L, int rank)
{
	if (len >= L) {
		v[(*n)++] = (ival_t){0, L, rank};
		return;
	}
	lo %= L;
	if (lo + len <= L) {
		v[(*n)++] = (ival_t){lo, lo + len, rank};
	} else {
		v[(*n)++] = (ival_t){lo, L, rank};
		v[(*n)++] = (ival_t){0, lo + len - L, rank};
	}
}

/* @all: per rank [disp, period, nblocks, (off, len) * nblocks]. */
static bool sigs_disjoint(const int64_t *all, const int *displs, int size)
{
	int64_t L = 1, total = 0, n = 0;
	ival_t *v;
	bool ok = true;

	for (int r = 0; r < size; r++) {
		const int64_t *p = all + displs[r];
		int64_t period = p[1], g;

		if (p[2] < 0 || period <= 0)
			return false;
		g = gcd64(L, period);
		if (L / g > SIG_MAX_INTERVALS / period)
			return false;
		L = L / g * period;
	}
	for (int r = 0; r < size; r++) {
		const int64_t *p = all + displs[r];

		total += 2 * p[2] * (L / p[1]);
		if (total > SIG_MAX_INTERVALS)
			return false;
	}
	v = malloc((size_t)(total ? total : 1) * sizeof(*v));
	if (!v)
		return false;
	for (int r = 0; r < size; r++) {
		const int64_t *p = all + displs[r];

		for (int64_t k = 0; k < L / p[1]; k++)
			for (int64_t b = 0; b < p[2]; b++)
				add_residue(v, &n, p[0] + k * p[1] + p[3 + 2 * b], p[4 + 2 * b], L,
					    r);
	}
	qsort(v, (size_t)n, sizeof(*v), cmp_ival);
	/* Sweep in order of start, comparing each interval with the one that
	 * reaches furthest so far. If v[i] meets an earlier interval u of
	 * another rank, v[i] starts before u ends <= reach; if the furthest
	 * one is v[i]'s own, it and u both hold v[i]'s start, so that pair
	 * was caught when the later of the two was visited. */
	for (int64_t i = 0, reach = -1, owner = -1; i < n && ok; i++) {
		if (v[i].lo < reach && v[i].rank != owner && v[i].hi > v[i].lo)
			ok = false;
		if (v[i].hi > reach) {
			reach = v[i].hi;
			owner = v[i].rank;
		}
	}
	free(v);
	return ok;
}

/* Collective: gathers every rank's footprint and decides. */
static int views_disjoint(MPI_File fh, bool *disjoint_p)
{
	mpil_file_view_sig_t sig;
	int size = fh->comm->size, len, *lens = NULL, *displs = NULL, err;
	int64_t *mine = NULL, *all = NULL;
	long total = 0;

	err = mpil_file_view_sig(fh, &sig);
	if (err != MPI_SUCCESS)
		sig.nblocks = -1, sig.blocks = NULL;
	len = 3 + (sig.nblocks > 0 ? 2 * (int)sig.nblocks : 0);
	mine = malloc((size_t)len * sizeof(*mine));
	lens = malloc(2 * (size_t)size * sizeof(int));
	if (!mine || !lens) {
		err = MPI_ERR_NO_MEM;
		goto out;
	}
	displs = lens + size;
	mine[0] = sig.disp;
	mine[1] = sig.period;
	mine[2] = sig.nblocks;
	if (sig.nblocks > 0)
		memcpy(mine + 3, sig.blocks, (size_t)(len - 3) * sizeof(*mine));
	err = PMPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, fh->comm);
	if (err != MPI_SUCCESS)
		goto out;
	for (int r = 0; r < size; r++) {
		displs[r] = (int)total;
		total += lens[r];
	}
	all = malloc((size_t)total * sizeof(*all));
	if (!all) {
		err = MPI_ERR_NO_MEM; /* the others go on: they will lock */
		goto out;
	}
	err = PMPI_Allgatherv(mine, len, MPI_INT64_T, all, lens, displs, MPI_INT64_T, fh->comm);
	if (err == MPI_SUCCESS)
		*disjoint_p = sigs_disjoint(all, displs, size);
out:
	free(all);
	free(lens);
	free(mine);
	free(sig.blocks);
	return err;
}

int mpil_file_atomic_setup(MPI_File fh, const char *fname)
{
	bool disjoint = false;
	int err, agreed;

	if (!fh->atomic)
		return MPI_SUCCESS;
	if (!fh->stripe) {
		/* rank 0's configuration for all: the lock mapping must agree */
		const mpil_config_t *cfg = mpil_config();
		int64_t p[3] = {cfg->IO_LOCK_STRIPE, cfg->IO_LOCKS, cfg->IO_OVERLAP_CHECK};

		err = mpil_bcast_bytes(p, sizeof(p), 0, fh->comm);
		if (err != MPI_SUCCESS)
			return mpil_file_err(fh, err, fname, "agreeing on the lock stripes");
		fh->stripe = p[0] > 0 ? p[0] : 65536;
		fh->nlocks = p[1] > 0 ? (p[1] < (1 << 20) ? (int)p[1] : 1 << 20) : 1;
		fh->check_overlap = p[2] != 0;
	}
	if (fh->comm->size == 1)
		disjoint = true; /* one process's accesses are already in order */
	else if (fh->check_overlap)
		err = views_disjoint(fh, &disjoint);
	/* a rank that failed locally must not skip the locks alone */
	agreed = mpil_file_agree(fh->comm, disjoint ? 0 : 1);
	disjoint = agreed == 0;
	if (!disjoint && !fh->mutex) {
		err = PMPIX_Mutex_create(fh->nlocks, fh->comm, &fh->mutex);
		if (err != MPI_SUCCESS) {
			fh->mutex = NULL;
			return mpil_file_err(fh, err, fname, "creating %d mutexes", fh->nlocks);
		}
	}
	fh->disjoint = disjoint;
	return MPI_SUCCESS;
}

/* The mutexes of [lo, hi), in increasing index order: [a0, a1) then [b0, b1). */
static void lock_set(MPI_File fh, MPI_Offset lo, MPI_Offset hi, int *a0, int *a1, int *b0, int *b1)
{
	int64_t first = lo / fh->stripe, n = (hi - 1) / fh->stripe - first + 1;
	int i0 = (int)(first % fh->nlocks);

	if (n >= fh->nlocks) {
		*a0 = 0, *a1 = fh->nlocks, *b0 = *b1 = 0;
	} else if (i0 + n <= fh->nlocks) {
		*a0 = i0, *a1 = i0 + (int)n, *b0 = *b1 = 0;
	} else {
		/* wraps: 0 .. the wrapped part first, then i0 .. N - 1 */
		*a0 = 0, *a1 = (int)(i0 + n - fh->nlocks), *b0 = i0, *b1 = fh->nlocks;
	}
}

int mpil_file_lock(MPI_File fh, MPI_Offset lo, MPI_Offset hi)
{
	MPIX_Mutex m = fh->mutex;
	int a0, a1, b0, b1, size = fh->comm->size, err = MPI_SUCCESS;

	lock_set(fh, lo, hi, &a0, &a1, &b0, &b1);
	for (int i = a0; i < a1 && !err; i++)
		err = PMPIX_Mutex_lock(m, i, i % size);
	for (int i = b0; i < b1 && !err; i++)
		err = PMPIX_Mutex_lock(m, i, i % size);
	return err;
}

int mpil_file_unlock(MPI_File fh, MPI_Offset lo, MPI_Offset hi)
{
	MPIX_Mutex m = fh->mutex;
	int a0, a1, b0, b1, size = fh->comm->size, err = MPI_SUCCESS, e;

	lock_set(fh, lo, hi, &a0, &a1, &b0, &b1);
	for (int i = b1 - 1; i >= b0; i--)
		if ((e = PMPIX_Mutex_unlock(m, i, i % size)) != MPI_SUCCESS && !err)
			err = e;
	for (int i = a1 - 1; i >= a0; i--)
		if ((e = PMPIX_Mutex_unlock(m, i, i % size)) != MPI_SUCCESS && !err)
			err = e;
	return err;
}

void mpil_file_atomic_free(MPI_File fh)
{
	if (fh->mutex) {
		MPIX_Mutex m = fh->mutex;

		PMPIX_Mutex_free(&m);
		fh->mutex = NULL;
	}
}

MPIL_PMPI_ALIAS(File_set_atomicity)
int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
	static const char F[] = "MPI_File_set_atomicity";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_file_check(fh, F));
	fh->atomic = flag != 0;
	return mpil_file_atomic_setup(fh, F);
}

MPIL_PMPI_ALIAS(File_get_atomicity)
int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
	static const char F[] = "MPI_File_get_atomicity";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_file_check(fh, F));
	if (!flag)
		return mpil_file_err(fh, MPI_ERR_ARG, F, "flag is NULL");
	*flag = fh->atomic;
	return MPI_SUCCESS;
}
