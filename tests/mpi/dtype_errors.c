/* ibx-test: np=1,2,3,4 timeout=60 nodes=1 */
/*
 * dtype_errors — every way to misuse the datatype calls returns its error
 * class (under MPI_ERRORS_RETURN) instead of crashing: negative counts
 * (MPI_ERR_COUNT) and block lengths (MPI_ERR_ARG), NULL output or array
 * arguments (MPI_ERR_ARG), MPI_DATATYPE_NULL / freed / uncommitted /
 * predefined-where-not-allowed types (MPI_ERR_TYPE) — including
 * MPI_Type_commit(NULL) —, sizes and extents that overflow (MPI_ERR_ARG),
 * bad subarray descriptions (MPI_ERR_ARG), packing past the buffer
 * (MPI_ERR_TRUNCATE), and that nothing was half-created on the way.
 */
#include "mpitest.h"

#include <stdint.h>

static int rank, size;

static void test_constructors(void)
{
	int bl[2] = {1, -1}, di[2] = {0, 4}, one = 1;
	MPI_Aint ad[2] = {0, 8};
	MPI_Datatype t = MPI_DATATYPE_NULL, tys[2] = {MPI_INT, MPI_DATATYPE_NULL};

	MPI_FAILS(MPI_ERR_COUNT, MPI_Type_contiguous(-1, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_contiguous(2, MPI_INT, NULL));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Type_vector(-3, 1, 1, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_vector(3, -1, 1, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_vector(3, 1, 1, MPI_DATATYPE_NULL, &t));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Type_create_hvector(-1, 1, 8, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_hvector(2, -2, 8, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Type_indexed(-1, bl, di, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_indexed(2, bl, di, MPI_INT, &t)); /* bl[1] < 0 */
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_indexed(2, NULL, di, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_indexed(2, bl, NULL, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_hindexed(2, bl, ad, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Type_create_indexed_block(-2, 1, di, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_indexed_block(2, -1, di, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_create_hindexed_block(2, 1, ad, MPI_DATATYPE_NULL, &t));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Type_create_struct(-1, &one, ad, tys, &t));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_create_struct(2, (int[]){1, 1}, ad, tys, &t));
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Type_create_struct(2, bl, ad, (MPI_Datatype[]){MPI_INT, MPI_INT}, &t));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_struct(1, &one, ad, NULL, &t));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_create_resized(MPI_DATATYPE_NULL, 0, 8, &t));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_dup(MPI_DATATYPE_NULL, &t));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_dup(MPI_INT, NULL));
	CHECK(t == MPI_DATATYPE_NULL, "a failed constructor wrote newtype");

	/* a handle that is not a datatype at all */
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_contiguous(1, (MPI_Datatype)(void *)MPI_COMM_WORLD, &t));

	/* count 0 is fine everywhere */
	MPI_OK(MPI_Type_indexed(0, NULL, NULL, MPI_INT, &t));
	MPI_OK(MPI_Type_free(&t));
	MPI_OK(MPI_Type_create_struct(0, NULL, NULL, NULL, &t));
	MPI_OK(MPI_Type_free(&t));
}

static void test_overflow(void)
{
	MPI_Datatype g, h = MPI_DATATYPE_NULL;

	/* 2^30 doubles, 2^30 times: 2^63 bytes */
	MPI_OK(MPI_Type_contiguous(1 << 30, MPI_DOUBLE, &g));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_contiguous(1 << 30, g, &h));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_vector(1 << 30, 1 << 30, 1 << 30, g, &h));
	CHECK(h == MPI_DATATYPE_NULL, "overflowing constructor wrote newtype");
	MPI_OK(MPI_Type_free(&g));
	/* displacements that leave 64 bits */
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_hvector(4, 1, INTPTR_MAX / 2, MPI_DOUBLE, &h));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_resized(MPI_INT, INTPTR_MAX - 4, 16, &h));
	{
		MPI_Aint d[2] = {INTPTR_MAX - 2, 0};
		int bl[2] = {1, 1};
		MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_INT};

		MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_struct(2, bl, d, ty, &h));
	}
}

static void test_subarray(void)
{
	int sz[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 1};
	int badsub[2] = {5, 3}, badst[2] = {3, 1}, neg[2] = {0, -1};
	MPI_Datatype t;

	MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_subarray(0, sz, sub, st, MPI_ORDER_C, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Type_create_subarray(2, sz, badsub, st, MPI_ORDER_C, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Type_create_subarray(2, sz, sub, badst, MPI_ORDER_C, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_subarray(2, sz, sub, neg, MPI_ORDER_C, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_subarray(2, sz, sub, st, 7, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_ARG,
		  MPI_Type_create_subarray(2, NULL, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &t));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN,
							 MPI_DATATYPE_NULL, &t));
	MPI_OK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &t));
	MPI_OK(MPI_Type_free(&t));
}

static void test_commit_free(void)
{
	MPI_Datatype t, copy, nul = MPI_DATATYPE_NULL, pre = MPI_INT;
	int buf[4] = {0}, sz;
	MPI_Aint lb, ext;

	/* MPICH crashes on this one */
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_commit(NULL));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_commit(&nul));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_free(NULL));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_free(&nul));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_free(&pre));
	CHECK(pre == MPI_INT, "freeing a predefined type changed the handle");
	/* committing a predefined type is allowed (a no-op) */
	MPI_OK(MPI_Type_commit(&pre));

	/* uncommitted: queries work, communication does not */
	MPI_OK(MPI_Type_contiguous(4, MPI_INT, &t));
	MPI_OK(MPI_Type_size(t, &sz));
	CHECK(sz == 16, "uncommitted size %d", sz);
	MPI_FAILS(MPI_ERR_TYPE, MPI_Send(buf, 1, t, rank, 0, MPI_COMM_WORLD));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Recv(buf, 1, t, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	{
		int pos = 0;
		char out[64];

		MPI_FAILS(MPI_ERR_TYPE, MPI_Pack(buf, 1, t, out, 64, &pos, MPI_COMM_WORLD));
		MPI_FAILS(MPI_ERR_TYPE, MPI_Pack_size(1, t, MPI_COMM_WORLD, &sz));
	}
	MPI_OK(MPI_Type_commit(&t));

	/* freed: the stale copy of the handle is dead everywhere */
	copy = t;
	MPI_OK(MPI_Type_free(&t));
	CHECK(t == MPI_DATATYPE_NULL, "Type_free left the handle set");
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_free(&copy));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_commit(&copy));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_size(copy, &sz));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_get_extent(copy, &lb, &ext));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_contiguous(2, copy, &t));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Send(buf, 1, copy, rank, 0, MPI_COMM_WORLD));
	{
		MPI_Status st;

		memset(&st, 0, sizeof(st));
		MPI_FAILS(MPI_ERR_TYPE, MPI_Get_count(&st, copy, &sz));
		MPI_FAILS(MPI_ERR_TYPE, MPI_Get_elements(&st, MPI_DATATYPE_NULL, &sz));
		MPI_FAILS(MPI_ERR_ARG, MPI_Get_count(NULL, MPI_INT, &sz));
	}
	/* queries with NULL outputs */
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_size(MPI_INT, NULL));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_get_extent(MPI_INT, NULL, &ext));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_get_true_extent(MPI_INT, &lb, NULL));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_get_true_extent(MPI_DATATYPE_NULL, &lb, &ext));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_set_name(MPI_DATATYPE_NULL, "x"));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_set_name(MPI_INT, NULL));
}

static void test_pack_errors(void)
{
	int in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out8[8], pos = 0, sz;
	char buf[16];

	MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Pack(in, 8, MPI_INT, buf, 16, &pos, MPI_COMM_WORLD));
	CHECK(pos == 0, "a failed MPI_Pack moved the position to %d", pos);
	MPI_OK(MPI_Pack(in, 3, MPI_INT, buf, 16, &pos, MPI_COMM_WORLD));
	CHECK(pos == 12, "position %d after 3 ints", pos);
	MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Pack(in, 2, MPI_INT, buf, 16, &pos, MPI_COMM_WORLD));
	MPI_FAILS(MPI_ERR_ARG, MPI_Pack(in, 1, MPI_INT, buf, 16, NULL, MPI_COMM_WORLD));
	MPI_FAILS(MPI_ERR_COUNT, MPI_Pack(in, -1, MPI_INT, buf, 16, &pos, MPI_COMM_WORLD));
	MPI_FAILS(MPI_ERR_COMM, MPI_Pack(in, 1, MPI_INT, buf, 16, &pos, MPI_COMM_NULL));
	pos = 20;
	MPI_FAILS(MPI_ERR_ARG, MPI_Pack(in, 1, MPI_INT, buf, 16, &pos, MPI_COMM_WORLD));
	pos = 0;
	MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Unpack(buf, 12, &pos, out8, 4, MPI_INT, MPI_COMM_WORLD));
	MPI_OK(MPI_Unpack(buf, 12, &pos, out8, 3, MPI_INT, MPI_COMM_WORLD));
	CHECK(pos == 12 && out8[0] == 1 && out8[2] == 3, "unpack %d %d at %d", out8[0], out8[2],
	      pos);
	MPI_FAILS(MPI_ERR_COUNT, MPI_Pack_size(-1, MPI_INT, MPI_COMM_WORLD, &sz));
	MPI_FAILS(MPI_ERR_ARG, MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, NULL));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Pack_size(1, MPI_DATATYPE_NULL, MPI_COMM_WORLD, &sz));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	test_constructors();
	test_overflow();
	test_subarray();
	test_commit_free();
	test_pack_errors();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("dtype_errors: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
