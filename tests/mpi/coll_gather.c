/* ibx-test: np=1,2,3,4,5,7 timeout=180 */
/*
 * coll_gather — MPI_Gather, MPI_Gatherv, MPI_Scatter, MPI_Scatterv,
 * MPI_Allgather and MPI_Allgatherv: every root, block sizes on both sides
 * of the tree/linear and Bruck/ring thresholds, MPI_IN_PLACE at the root
 * (or everywhere for the all- variants), irregular counts and
 * displacements (reversed block order, gaps that must stay untouched,
 * empty blocks), different send and receive counts of matching
 * signatures, a non-contiguous predefined type (MPI_LONG_DOUBLE_INT), and
 * a communicator whose ranks run backwards.
 */
#include "mpitest.h"

#include <stdbool.h>

static int rank, size;

#define FILL 0xee

/* Bytes of block @src of a run with @salt. */
static void fill_block(unsigned char *p, size_t len, int src, int salt)
{
	mt_fill(p, len, src, salt);
}

static void check_block(const unsigned char *p, size_t len, int src, int salt, const char *what,
			int root, size_t blen)
{
	long bad = mt_verify(p, len, src, salt);

	CHECK(bad < 0, "%s (block %zu B, root %d): block of rank %d wrong at byte %ld", what, blen,
	      root, src, bad);
}

static void check_fill(const unsigned char *p, size_t len, const char *what)
{
	for (size_t i = 0; i < len; i++)
		CHECK(p[i] == FILL, "%s: byte %zu outside the blocks was written", what, i);
}

static const size_t blens[] = {0, 1, 7, 100, 2048, 2049, 3000, 70000};
#define NBLENS ((int)(sizeof(blens) / sizeof(blens[0])))

/* ---- regular variants, bytes ------------------------------------------------------------------
 */

static void test_regular(MPI_Comm comm, const char *cname)
{
	int me, p;
	size_t maxb = 70000;
	unsigned char *sb, *rb;

	MPI_OK(MPI_Comm_rank(comm, &me));
	MPI_OK(MPI_Comm_size(comm, &p));
	sb = malloc(maxb * (size_t)p + 1);
	rb = malloc(maxb * (size_t)p + 1);
	CHECK(sb && rb, "out of memory");
	for (int bi = 0; bi < NBLENS; bi++) {
		size_t b = blens[bi];

		for (int root = 0; root < p; root++) {
			for (int inplace = 0; inplace < 2; inplace++) {
				int salt = bi * 131 + root * 7 + inplace;
				char what[96];

				/* Gather */
				snprintf(what, sizeof(what), "Gather%s on %s",
					 inplace ? " in place" : "", cname);
				memset(rb, FILL, b * (size_t)p);
				fill_block(sb, b, me, salt);
				if (inplace && me == root)
					fill_block(rb + b * (size_t)me, b, me, salt);
				MPI_OK(MPI_Gather(inplace && me == root ? MPI_IN_PLACE : (void *)sb,
						  (int)b, MPI_BYTE, rb, (int)b, MPI_BYTE, root,
						  comm));
				if (me == root)
					for (int r = 0; r < p; r++)
						check_block(rb + b * (size_t)r, b, r, salt, what,
							    root, b);
				else
					check_fill(rb, b * (size_t)p, what);

				/* Scatter */
				snprintf(what, sizeof(what), "Scatter%s on %s",
					 inplace ? " in place" : "", cname);
				if (me == root)
					for (int r = 0; r < p; r++)
						fill_block(sb + b * (size_t)r, b, r, salt + 1);
				memset(rb, FILL, b + 1);
				MPI_OK(
				    MPI_Scatter(sb, (int)b, MPI_BYTE,
						inplace && me == root ? MPI_IN_PLACE : (void *)rb,
						(int)b, MPI_BYTE, root, comm));
				if (inplace && me == root)
					check_fill(rb, b, what);
				else
					check_block(rb, b, me, salt + 1, what, root, b);
				CHECK(rb[b] == FILL, "%s wrote past the block", what);
			}
		}
		/* Allgather */
		for (int inplace = 0; inplace < 2; inplace++) {
			int salt = bi * 17 + inplace + 5;
			char what[96];

			snprintf(what, sizeof(what), "Allgather%s on %s",
				 inplace ? " in place" : "", cname);
			memset(rb, FILL, b * (size_t)p + 1);
			fill_block(inplace ? rb + b * (size_t)me : sb, b, me, salt);
			MPI_OK(MPI_Allgather(inplace ? MPI_IN_PLACE : (void *)sb, (int)b, MPI_BYTE,
					     rb, (int)b, MPI_BYTE, comm));
			for (int r = 0; r < p; r++)
				check_block(rb + b * (size_t)r, b, r, salt, what, -1, b);
			CHECK(rb[b * (size_t)p] == FILL, "%s wrote past the buffer", what);
		}
	}
	free(sb);
	free(rb);
}

/* ---- typed: counts differ, signatures match; a non-contiguous type ------------------------ */

typedef struct {
	long double v;
	int i;
} ldi_t;

static void test_typed(MPI_Comm comm)
{
	int me, p, n = 300;
	int *si, *ri;
	ldi_t *sl, *rl;

	MPI_OK(MPI_Comm_rank(comm, &me));
	MPI_OK(MPI_Comm_size(comm, &p));
	si = malloc(sizeof(int) * (size_t)n * (size_t)p);
	ri = malloc(sizeof(int) * (size_t)n * (size_t)p);
	sl = malloc(sizeof(ldi_t) * (size_t)n * (size_t)p);
	rl = malloc(sizeof(ldi_t) * (size_t)n * (size_t)p);
	CHECK(si && ri && sl && rl, "out of memory");
	for (int root = 0; root < p; root++) {
		/* MPI_LONG_DOUBLE_INT has padding: packed on the wire */
		for (int i = 0; i < n; i++) {
			sl[i].v = (long double)(me * 1000 + i) / 4;
			sl[i].i = -me - i;
		}
		memset(rl, 0, sizeof(ldi_t) * (size_t)n * (size_t)p);
		MPI_OK(
		    MPI_Gather(sl, n, MPI_LONG_DOUBLE_INT, rl, n, MPI_LONG_DOUBLE_INT, root, comm));
		if (me == root)
			for (int r = 0; r < p; r++)
				for (int i = 0; i < n; i++)
					CHECK(rl[r * n + i].v == (long double)(r * 1000 + i) / 4 &&
						  rl[r * n + i].i == -r - i,
					      "Gather MPI_LONG_DOUBLE_INT root %d rank %d elem %d",
					      root, r, i);
		MPI_OK(MPI_Allgather(sl, 3, MPI_LONG_DOUBLE_INT, rl, 3, MPI_LONG_DOUBLE_INT, comm));
		for (int r = 0; r < p; r++)
			for (int i = 0; i < 3; i++)
				CHECK(rl[r * 3 + i].v == (long double)(r * 1000 + i) / 4,
				      "Allgather MPI_LONG_DOUBLE_INT rank %d elem %d", r, i);
		if (me == root)
			for (int r = 0; r < p; r++)
				for (int i = 0; i < n; i++) {
					sl[r * n + i].v = (long double)(r - i);
					sl[r * n + i].i = r * i;
				}
		MPI_OK(MPI_Scatter(sl, n, MPI_LONG_DOUBLE_INT, rl, n, MPI_LONG_DOUBLE_INT, root,
				   comm));
		for (int i = 0; i < n; i++)
			CHECK(rl[i].v == (long double)(me - i) && rl[i].i == me * i,
			      "Scatter MPI_LONG_DOUBLE_INT root %d elem %d", root, i);
		/* MPI_INT sent, MPI_INT received: the all-rank data path with a
		 * 4-byte type (Bruck) */
		for (int i = 0; i < n; i++)
			si[i] = me * 100000 + i;
		MPI_OK(MPI_Allgather(si, 5, MPI_INT, ri, 5, MPI_INT, comm));
		for (int r = 0; r < p; r++)
			for (int i = 0; i < 5; i++)
				CHECK(ri[r * 5 + i] == r * 100000 + i, "Allgather MPI_INT");
	}
	free(si);
	free(ri);
	free(sl);
	free(rl);
}

/* ---- v variants --------------------------------------------------------------------------- */

/* Rank r's block: cnt(r) ints at displacement disp(r) in a buffer laid out
 * backwards (rank p-1 first) with a gap of 3 ints after each block; rank 1
 * sends nothing. */
static int cnt_of(int r, int scale)
{
	return r == 1 ? 0 : (r * 7 + 5) * scale;
}

static void v_layout(int p, int scale, int *counts, int *displs, int *total)
{
	int off = 0;

	for (int r = p - 1; r >= 0; r--) {
		counts[r] = cnt_of(r, scale);
		displs[r] = off;
		off += counts[r] + 3;
	}
	*total = off;
}

static void test_v(MPI_Comm comm, const char *cname)
{
	int me, p, total, *counts, *displs, *buf, *mine;

	MPI_OK(MPI_Comm_rank(comm, &me));
	MPI_OK(MPI_Comm_size(comm, &p));
	counts = malloc(sizeof(int) * (size_t)p);
	displs = malloc(sizeof(int) * (size_t)p);
	CHECK(counts && displs, "out of memory");
	for (int scale = 1; scale <= 1000; scale *= 1000) {
		v_layout(p, scale, counts, displs, &total);
		buf = malloc(sizeof(int) * (size_t)total + 4);
		mine = malloc(sizeof(int) * (size_t)cnt_of(me, scale) + 4);
		CHECK(buf && mine, "out of memory");
		for (int root = 0; root < p; root++) {
			for (int inplace = 0; inplace < 2; inplace++) {
				bool ip = inplace && me == root;

				/* Gatherv */
				for (int i = 0; i < cnt_of(me, scale); i++)
					mine[i] = me * 1000000 + i + root;
				for (int i = 0; i < total; i++)
					buf[i] = -1;
				if (ip)
					memcpy(buf + displs[me], mine,
					       sizeof(int) * (size_t)counts[me]);
				MPI_OK(MPI_Gatherv(ip ? MPI_IN_PLACE : mine, cnt_of(me, scale),
						   MPI_INT, buf, counts, displs, MPI_INT, root,
						   comm));
				if (me == root) {
					int next = 0;

					for (int r = p - 1; r >= 0; r--) {
						for (int i = 0; i < counts[r]; i++)
							CHECK(buf[displs[r] + i] ==
								  r * 1000000 + i + root,
							      "Gatherv%s on %s root %d: rank %d "
							      "elem %d",
							      ip ? " in place" : "", cname, root, r,
							      i);
						next = displs[r] + counts[r];
						for (int g = 0; g < 3; g++)
							CHECK(buf[next + g] == -1,
							      "Gatherv wrote a gap");
					}
				}
				/* Scatterv */
				if (me == root)
					for (int r = 0; r < p; r++)
						for (int i = 0; i < counts[r]; i++)
							buf[displs[r] + i] = r * 77 + i - root;
				for (int i = 0; i < cnt_of(me, scale) + 1; i++)
					mine[i] = -5;
				MPI_OK(MPI_Scatterv(buf, counts, displs, MPI_INT,
						    ip ? MPI_IN_PLACE : mine, cnt_of(me, scale),
						    MPI_INT, root, comm));
				for (int i = 0; !ip && i < cnt_of(me, scale); i++)
					CHECK(mine[i] == me * 77 + i - root,
					      "Scatterv%s on %s root %d elem %d",
					      ip ? " in place" : "", cname, root, i);
				CHECK(mine[cnt_of(me, scale)] == -5,
				      "Scatterv wrote past the block");
			}
		}
		/* Allgatherv, in place or not */
		for (int inplace = 0; inplace < 2; inplace++) {
			for (int i = 0; i < total; i++)
				buf[i] = -1;
			for (int i = 0; i < counts[me]; i++)
				mine[i] = me * 31 + i + inplace;
			if (inplace)
				memcpy(buf + displs[me], mine, sizeof(int) * (size_t)counts[me]);
			MPI_OK(MPI_Allgatherv(inplace ? MPI_IN_PLACE : mine, counts[me], MPI_INT,
					      buf, counts, displs, MPI_INT, comm));
			for (int r = 0; r < p; r++) {
				for (int i = 0; i < counts[r]; i++)
					CHECK(buf[displs[r] + i] == r * 31 + i + inplace,
					      "Allgatherv%s on %s: rank %d elem %d",
					      inplace ? " in place" : "", cname, r, i);
				for (int g = 0; g < 3; g++)
					CHECK(buf[displs[r] + counts[r] + g] == -1,
					      "Allgatherv wrote a gap");
			}
		}
		free(buf);
		free(mine);
	}
	free(counts);
	free(displs);
}

int main(int argc, char **argv)
{
	MPI_Comm rev;

	mt_init(&argc, &argv, &rank, &size);
	test_regular(MPI_COMM_WORLD, "MPI_COMM_WORLD");
	test_typed(MPI_COMM_WORLD);
	test_v(MPI_COMM_WORLD, "MPI_COMM_WORLD");
	/* world rank r is rank size-1-r here */
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
	test_regular(rev, "a reversed communicator");
	test_v(rev, "a reversed communicator");
	MPI_OK(MPI_Comm_free(&rev));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("coll_gather: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
