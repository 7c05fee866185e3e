/* ibx-test: np=2,4,8 timeout=120 */
/*
 * io_atomic — MPI-IO atomic mode (MPI-3.1 §13.6.1): every write call is
 * atomic with respect to every other rank's call on overlapping bytes.
 *
 * The region is SLOTS slots of B ints. Every rank's view is an indexed
 * filetype over the even ("core") slots, which all ranks share, plus one
 * odd slot of its own between two of them:
 *
 *   slot   0   1   2   3   4   5   6 ...  30
 *   rank0  ##  ##  ##      ##      ##     ##     (core + slot 1)
 *   rank1  ##      ##  ##  ##      ##     ##     (core + slot 3)
 *
 * so each write call is one noncontiguous pattern of runs that overlaps
 * every other rank's pattern on the whole core. Each int a call writes is
 * its tag (round, rank). In each of ROUNDS rounds every rank writes its
 * pattern, reads it back at once (while others may still be writing) and,
 * after a barrier, again; check_pattern() then demands that the core holds
 * one writer's tag throughout (exactly one writer per write call on the
 * overlapped bytes) and the own slot this rank's tag. Atomic mode must pass
 * this in every round of every run.
 *
 * That the check can fail is shown deterministically: check_pattern() must
 * reject hand-made interleavings, in memory and in a file written so (the
 * core's first half by one "call", the rest by another) with atomicity
 * off. A run with atomicity off and the same concurrent writes only
 * reports how many rounds interleaved (timing decides, so it asserts
 * nothing).
 *
 * Views that cannot overlap (each rank its own slot of every row): atomic
 * mode must see it (get_info's "ibx_atomic_locking" is "none") and stay
 * correct; with the overlapping views it is "stripes".
 */
#include "mpitest.h"

#include <stdbool.h>
#include <unistd.h>

#define B      16 /* ints per slot */
#define NCORE  16
#define SLOTS  (2 * NCORE - 1)
#define ROUNDS 60

static int rank, size;
static char dir[512], fname[600];

static void make_dir(void)
{
	mt_make_tmpdir(dir, sizeof(dir), "ibx-io");
	snprintf(fname, sizeof(fname), "%s/atomic", dir);
}

static int tag(int round, int r)
{
	return (round << 8) | (r + 1);
}

/* This rank's own odd slot (ranks beyond the gaps share the last one). */
static int own_slot(int r)
{
	return 1 + 2 * (r % (NCORE - 1));
}

/* The view's pattern: core slots and the own slot, in file order. */
static MPI_Datatype pattern_type(int r)
{
	int bl[NCORE + 1], dsp[NCORE + 1], n = 0;
	MPI_Datatype t;

	for (int s = 0; s < SLOTS; s++)
		if (s % 2 == 0 || s == own_slot(r)) {
			bl[n] = B;
			dsp[n++] = s * B;
		}
	MPI_OK(MPI_Type_indexed(n, bl, dsp, MPI_INT, &t));
	MPI_OK(MPI_Type_commit(&t));
	return t;
}

/*
 * @buf: the pattern of rank @r as read through its view ((NCORE + 1) * B
 * ints: core slots with the own slot between core slots r' and r' + 1).
 * True if the core has exactly one writer's tag and the own slot holds
 * rank @r's tag (of round @round, unless @round < 0); else false with the
 * reason in @why.
 */
static bool check_pattern(const int *buf, int r, int round, char *why, size_t len)
{
	int own = own_slot(r), k = 0, core = -1, mine = -1;

	for (int s = 0; s < SLOTS; s++) {
		if (s % 2 && s != own)
			continue;
		for (int i = 0; i < B; i++, k++) {
			int v = buf[k];

			if (s == own) {
				if (mine < 0)
					mine = v;
				if (v != mine || (v & 0xff) != r + 1) {
					snprintf(why, len, "own slot %d holds %#x and %#x", s, mine,
						 v);
					return false;
				}
				continue;
			}
			if (core < 0)
				core = v;
			if (v != core) {
				snprintf(why, len,
					 "core slot %d int %d: writer %#x, slot 0 writer %#x "
					 "(two write calls interleaved)",
					 s, i, v, core);
				return false;
			}
		}
	}
	if (round >= 0 && (core >> 8) != round) {
		snprintf(why, len, "core from round %d, expected %d", core >> 8, round);
		return false;
	}
	if (round >= 0 && mine != tag(round, r)) {
		snprintf(why, len, "own slot %#x, expected %#x", mine, tag(round, r));
		return false;
	}
	return true;
}

static void fill(int *buf, int n, int t)
{
	for (int i = 0; i < n; i++)
		buf[i] = t;
}

/* The check must reject interleavings (in memory: no file, no timing). */
static void test_checker_rejects(void)
{
	int buf[(NCORE + 1) * B];
	char why[256];

	fill(buf, (NCORE + 1) * B, tag(3, 0));
	CHECK(check_pattern(buf, 0, 3, why, sizeof(why)), "clean pattern rejected: %s", why);
	/* the core's second half from another call */
	for (int i = (NCORE / 2) * B; i < (NCORE + 1) * B; i++)
		if (i < B || i >= 2 * B) /* not the own slot (pattern index 1) */
			buf[i] = tag(3, 1);
	CHECK(!check_pattern(buf, 0, -1, why, sizeof(why)), "interleaved core accepted");
	/* one int of one slot */
	fill(buf, (NCORE + 1) * B, tag(3, 0));
	buf[5 * B + 7] = tag(2, 1);
	CHECK(!check_pattern(buf, 0, -1, why, sizeof(why)), "one foreign int accepted");
}

/* Interleaving written on purpose to the file (atomicity off): the check
 * must find it in what every rank reads back. */
static void test_checker_on_file(MPI_File fh)
{
	int buf[(NCORE + 1) * B];
	char why[256];

	MPI_OK(MPI_File_set_atomicity(fh, 0));
	if (rank == 0) {
		MPI_Datatype all;

		/* "call A" (rank 0's tag) everywhere, then "call B" (rank 1's) over
		 * the core slots past the middle: what an interleaving leaves */
		MPI_OK(MPI_Type_contiguous(SLOTS * B, MPI_INT, &all));
		MPI_OK(MPI_Type_commit(&all));
		{
			int w[SLOTS * B];

			fill(w, SLOTS * B, tag(0, 0));
			for (int s = 0; s < SLOTS; s++)
				if (s % 2 == 1)
					fill(w + s * B, B, tag(0, s / 2 % size)); /* own slots */
			for (int s = NCORE; s < SLOTS; s++)
				if (s % 2 == 0)
					fill(w + s * B, B, tag(0, 1));
			/* through rank 0's own view: write the raw bytes with a file
			 * handle of MPI_COMM_SELF */
			{
				MPI_File self;

				MPI_OK(MPI_File_open(MPI_COMM_SELF, fname, MPI_MODE_WRONLY,
						     MPI_INFO_NULL, &self));
				MPI_OK(MPI_File_write_at(self, 0, w, 1, all, MPI_STATUS_IGNORE));
				MPI_OK(MPI_File_close(&self));
			}
		}
		MPI_OK(MPI_Type_free(&all));
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_File_read_at(fh, 0, buf, (NCORE + 1) * B, MPI_INT, MPI_STATUS_IGNORE));
	CHECK(!check_pattern(buf, rank, -1, why, sizeof(why)),
	      "an interleaved file passed the check");
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* ROUNDS rounds of concurrent overlapping writes; returns the rounds whose
 * result interleaved (must be 0 in atomic mode). */
static int rounds(MPI_File fh, bool atomic)
{
	int w[(NCORE + 1) * B], r[(NCORE + 1) * B], bad = 0, all_bad;
	char why[256];

	for (int round = 1; round <= ROUNDS; round++) {
		fill(w, (NCORE + 1) * B, tag(round, rank));
		MPI_OK(MPI_File_write_at(fh, 0, w, (NCORE + 1) * B, MPI_INT, MPI_STATUS_IGNORE));
		/* at once: other ranks may be writing this round or the last */
		MPI_OK(MPI_File_read_at(fh, 0, r, (NCORE + 1) * B, MPI_INT, MPI_STATUS_IGNORE));
		if (atomic) /* this round's: this rank's write or a later one */
			CHECK(check_pattern(r, rank, round, why, sizeof(why)),
			      "atomic read in round %d: %s", round, why);
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		MPI_OK(MPI_File_read_at(fh, 0, r, (NCORE + 1) * B, MPI_INT, MPI_STATUS_IGNORE));
		if (!check_pattern(r, rank, round, why, sizeof(why))) {
			CHECK(!atomic, "atomic mode, round %d: %s", round, why);
			bad++;
		}
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	}
	MPI_OK(MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
	return all_bad;
}

static void expect_locking(MPI_File fh, const char *want)
{
	MPI_Info info;
	char val[64] = "";
	int flag = 0;

	MPI_OK(MPI_File_get_info(fh, &info));
	MPI_OK(MPI_Info_get(info, "ibx_atomic_locking", sizeof(val) - 1, val, &flag));
	MPI_OK(MPI_Info_free(&info));
	CHECK(flag && !strcmp(val, want), "ibx_atomic_locking is \"%s\", expected \"%s\"",
	      flag ? val : "(unset)", want);
}

/* Each rank its own slot of every row: views cannot overlap. */
static void test_disjoint_views(MPI_File fh)
{
	int bl = B, w[8 * B], r[8 * B];
	MPI_Aint d = (MPI_Aint)rank * B * 4;
	MPI_Datatype one, ft;
	MPI_Offset sz;

	MPI_OK(MPI_Type_create_hindexed(1, &bl, &d, MPI_INT, &one));
	MPI_OK(MPI_Type_create_resized(one, 0, (MPI_Aint)size * B * 4, &ft));
	MPI_OK(MPI_Type_commit(&ft));
	MPI_OK(MPI_Type_free(&one));
	MPI_OK(MPI_File_set_view(fh, 4096, MPI_INT, ft, "native", MPI_INFO_NULL));
	expect_locking(fh, "none");
	for (int round = 0; round < 20; round++) {
		fill(w, 8 * B, tag(round, rank));
		MPI_OK(MPI_File_write_at_all(fh, 0, w, 8 * B, MPI_INT, MPI_STATUS_IGNORE));
		MPI_OK(MPI_File_read_at_all(fh, 0, r, 8 * B, MPI_INT, MPI_STATUS_IGNORE));
		CHECK(!memcmp(r, w, sizeof(w)), "disjoint views: round %d read back", round);
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_File_get_size(fh, &sz));
	CHECK(sz == 4096 + (MPI_Offset)8 * size * B * 4, "size %lld", sz);
	MPI_OK(MPI_Type_free(&ft));
}

int main(int argc, char **argv)
{
	MPI_File fh;
	MPI_Datatype mine;
	int flag, bad;

	mt_init(&argc, &argv, &rank, &size);
	make_dir();
	test_checker_rejects();
	mine = pattern_type(rank);
	MPI_OK(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
			     &fh));
	MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, mine, "native", MPI_INFO_NULL));
	test_checker_on_file(fh);

	MPI_OK(MPI_File_set_atomicity(fh, 1));
	MPI_OK(MPI_File_get_atomicity(fh, &flag));
	CHECK(flag == 1, "atomicity %d", flag);
	expect_locking(fh, "stripes");
	bad = rounds(fh, true);
	CHECK(bad == 0, "atomic mode: %d rounds interleaved", bad);

	test_disjoint_views(fh);

	MPI_OK(MPI_File_set_atomicity(fh, 0));
	MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, mine, "native", MPI_INFO_NULL));
	bad = rounds(fh, false);
	if (rank == 0)
		printf("io_atomic: %d ranks: atomic mode 0 of %d rounds interleaved; atomicity "
		       "off: %d of %d (informational)\n",
		       size, ROUNDS, bad, ROUNDS);
	MPI_OK(MPI_File_close(&fh));
	MPI_OK(MPI_Type_free(&mine));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0) {
		MPI_OK(MPI_File_delete(fname, MPI_INFO_NULL));
		CHECK(rmdir(dir) == 0, "rmdir %s", dir);
	}
	MPI_OK(MPI_Finalize());
	return 0;
}
