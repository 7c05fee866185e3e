/* ibx-test: np=1 timeout=60 nodes=1 */
/*
 * dtype_envelope — datatype decoding: MPI_Type_get_envelope and
 * MPI_Type_get_contents for every constructor mpi-lite has (contiguous,
 * vector, hvector, indexed, hindexed, indexed_block, hindexed_block,
 * struct, subarray in both orders, resized, dup) and for predefined types
 * (MPI_COMBINER_NAMED, pairs included). Each type is rebuilt from its
 * envelope and contents alone, recursively through nested types, and the
 * copy must have the same size, bounds and packed bytes. The derived
 * types MPI_Type_get_contents returns are new handles (freed here), and
 * stay valid after the user freed the originals. Also the status setters
 * (MPI_Status_set_elements(_x), MPI_Status_set_cancelled) with the
 * queries, the _x size and extent queries, and the errors: contents of a
 * predefined type (MPI_ERR_TYPE), arrays too small (MPI_ERR_ARG).
 */
#include "mpitest.h"

enum { BUF = 1 << 16, MID = BUF / 2 };

static int rank, size;

/* The type described by @t's envelope and contents, rebuilt from them
 * (a predefined type is itself). */
static MPI_Datatype rebuild(MPI_Datatype t)
{
	int ni, na, nd, comb, ints[64];
	MPI_Aint aints[32];
	MPI_Datatype types[16], kids[16], r = MPI_DATATYPE_NULL;

	MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
	if (comb == MPI_COMBINER_NAMED)
		return t;
	CHECK(ni <= 64 && na <= 32 && nd <= 16, "envelope too large: %d %d %d", ni, na, nd);
	MPI_OK(MPI_Type_get_contents(t, ni, na, nd, ints, aints, types));
	for (int i = 0; i < nd; i++) {
		int ki, ka, kd, kc;

		kids[i] = rebuild(types[i]);
		MPI_OK(MPI_Type_get_envelope(types[i], &ki, &ka, &kd, &kc));
		if (kc != MPI_COMBINER_NAMED) /* a new handle: ours to free */
			MPI_OK(MPI_Type_free(&types[i]));
	}
	switch (comb) {
	case MPI_COMBINER_DUP: MPI_OK(MPI_Type_dup(kids[0], &r)); break;
	case MPI_COMBINER_CONTIGUOUS: MPI_OK(MPI_Type_contiguous(ints[0], kids[0], &r)); break;
	case MPI_COMBINER_VECTOR:
		MPI_OK(MPI_Type_vector(ints[0], ints[1], ints[2], kids[0], &r));
		break;
	case MPI_COMBINER_HVECTOR:
		MPI_OK(MPI_Type_create_hvector(ints[0], ints[1], aints[0], kids[0], &r));
		break;
	case MPI_COMBINER_INDEXED:
		MPI_OK(MPI_Type_indexed(ints[0], &ints[1], &ints[1 + ints[0]], kids[0], &r));
		break;
	case MPI_COMBINER_HINDEXED:
		MPI_OK(MPI_Type_create_hindexed(ints[0], &ints[1], aints, kids[0], &r));
		break;
	case MPI_COMBINER_INDEXED_BLOCK:
		MPI_OK(MPI_Type_create_indexed_block(ints[0], ints[1], &ints[2], kids[0], &r));
		break;
	case MPI_COMBINER_HINDEXED_BLOCK:
		MPI_OK(MPI_Type_create_hindexed_block(ints[0], ints[1], aints, kids[0], &r));
		break;
	case MPI_COMBINER_STRUCT:
		MPI_OK(MPI_Type_create_struct(ints[0], &ints[1], aints, kids, &r));
		break;
	case MPI_COMBINER_SUBARRAY: {
		int n = ints[0];

		MPI_OK(MPI_Type_create_subarray(n, &ints[1], &ints[1 + n], &ints[1 + 2 * n],
						ints[1 + 3 * n], kids[0], &r));
		break;
	}
	case MPI_COMBINER_RESIZED:
		MPI_OK(MPI_Type_create_resized(kids[0], aints[0], aints[1], &r));
		break;
	default: CHECK(0, "unexpected combiner %d", comb);
	}
	for (int i = 0; i < nd; i++) {
		int ki, ka, kd, kc;

		MPI_OK(MPI_Type_get_envelope(kids[i], &ki, &ka, &kd, &kc));
		if (kc != MPI_COMBINER_NAMED)
			MPI_OK(MPI_Type_free(&kids[i]));
	}
	return r;
}

/* Same size, bounds and packed bytes for 2 elements over a patterned
 * buffer. */
static void same_layout(MPI_Datatype a, MPI_Datatype b, const char *what)
{
	static unsigned char buf[BUF], pa[BUF], pb[BUF];
	MPI_Aint lba, exa, lbb, exb, tla, tea, tlb, teb;
	int sa, sb, posa = 0, posb = 0;

	for (int i = 0; i < BUF; i++)
		buf[i] = (unsigned char)(i * 7 + (i >> 8));
	MPI_OK(MPI_Type_commit(&a));
	MPI_OK(MPI_Type_commit(&b));
	MPI_OK(MPI_Type_size(a, &sa));
	MPI_OK(MPI_Type_size(b, &sb));
	MPI_OK(MPI_Type_get_extent(a, &lba, &exa));
	MPI_OK(MPI_Type_get_extent(b, &lbb, &exb));
	MPI_OK(MPI_Type_get_true_extent(a, &tla, &tea));
	MPI_OK(MPI_Type_get_true_extent(b, &tlb, &teb));
	CHECK(sa == sb && lba == lbb && exa == exb && tla == tlb && tea == teb,
	      "%s: rebuilt size %d lb %ld extent %ld (true %ld %ld), original %d %ld %ld (%ld "
	      "%ld)",
	      what, sb, (long)lbb, (long)exb, (long)tlb, (long)teb, sa, (long)lba, (long)exa,
	      (long)tla, (long)tea);
	CHECK(2 * sa < BUF && tla + exa + tea < MID && tla > -MID, "%s: too big for the test",
	      what);
	MPI_OK(MPI_Pack(buf + MID, 2, a, pa, BUF, &posa, MPI_COMM_WORLD));
	MPI_OK(MPI_Pack(buf + MID, 2, b, pb, BUF, &posb, MPI_COMM_WORLD));
	CHECK(posa == posb && memcmp(pa, pb, (size_t)posa) == 0, "%s: packed bytes differ", what);
}

/* Envelope of @t must be (@ni, @na, @nd, @comb); then the round trip. */
static void round_trip(MPI_Datatype t, int ni, int na, int nd, int comb, const char *what)
{
	int gi, ga, gd, gc;
	MPI_Datatype r;

	MPI_OK(MPI_Type_get_envelope(t, &gi, &ga, &gd, &gc));
	CHECK(gi == ni && ga == na && gd == nd && gc == comb,
	      "%s: envelope %d %d %d combiner %d, expected %d %d %d %d", what, gi, ga, gd, gc, ni,
	      na, nd, comb);
	r = rebuild(t);
	same_layout(t, r, what);
	MPI_OK(MPI_Type_free(&r));
}

static void test_constructors(void)
{
	MPI_Datatype t[16], s, nested;
	int n = 0;

	MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t[n]));
	round_trip(t[n++], 1, 0, 1, MPI_COMBINER_CONTIGUOUS, "contiguous");
	MPI_OK(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &t[n]));
	round_trip(t[n++], 3, 0, 1, MPI_COMBINER_VECTOR, "vector");
	MPI_OK(MPI_Type_vector(3, 1, -2, MPI_INT, &t[n]));
	round_trip(t[n++], 3, 0, 1, MPI_COMBINER_VECTOR, "vector, negative stride");
	MPI_OK(MPI_Type_create_hvector(2, 3, 40, MPI_SHORT, &t[n]));
	round_trip(t[n++], 2, 1, 1, MPI_COMBINER_HVECTOR, "hvector");
	MPI_OK(MPI_Type_indexed(3, (int[]){1, 2, 3}, (int[]){5, 0, 10}, MPI_INT, &t[n]));
	round_trip(t[n++], 7, 0, 1, MPI_COMBINER_INDEXED, "indexed");
	MPI_OK(MPI_Type_create_hindexed(2, (int[]){2, 1}, (MPI_Aint[]){24, 3}, MPI_FLOAT, &t[n]));
	round_trip(t[n++], 3, 2, 1, MPI_COMBINER_HINDEXED, "hindexed");
	MPI_OK(MPI_Type_create_indexed_block(3, 2, (int[]){4, 0, 9}, MPI_CHAR, &t[n]));
	round_trip(t[n++], 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK, "indexed_block");
	MPI_OK(MPI_Type_create_hindexed_block(2, 3, (MPI_Aint[]){16, 0}, MPI_SHORT, &t[n]));
	round_trip(t[n++], 2, 2, 1, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block");
	MPI_OK(MPI_Type_create_struct(3, (int[]){1, 2, 3}, (MPI_Aint[]){0, 8, 24},
				      (MPI_Datatype[]){MPI_INT, MPI_DOUBLE, MPI_CHAR}, &t[n]));
	round_trip(t[n++], 4, 3, 3, MPI_COMBINER_STRUCT, "struct");
	MPI_OK(MPI_Type_create_subarray(3, (int[]){4, 5, 6}, (int[]){2, 3, 2}, (int[]){1, 0, 3},
					MPI_ORDER_C, MPI_INT, &t[n]));
	round_trip(t[n++], 11, 0, 1, MPI_COMBINER_SUBARRAY, "subarray C");
	MPI_OK(MPI_Type_create_subarray(2, (int[]){4, 5}, (int[]){2, 3}, (int[]){2, 1},
					MPI_ORDER_FORTRAN, MPI_DOUBLE, &t[n]));
	round_trip(t[n++], 8, 0, 1, MPI_COMBINER_SUBARRAY, "subarray Fortran");
	MPI_OK(MPI_Type_create_resized(t[1], -8, 200, &t[n]));
	round_trip(t[n++], 0, 2, 1, MPI_COMBINER_RESIZED, "resized");
	MPI_OK(MPI_Type_dup(MPI_INT, &t[n]));
	round_trip(t[n++], 0, 0, 1, MPI_COMBINER_DUP, "dup of MPI_INT");
	MPI_OK(MPI_Type_dup(t[4], &t[n]));
	round_trip(t[n++], 0, 0, 1, MPI_COMBINER_DUP, "dup of indexed");
	/* nested: a struct of a vector, a resized type and a pair type */
	MPI_OK(MPI_Type_create_struct(3, (int[]){2, 1, 1}, (MPI_Aint[]){0, 400, 900},
				      (MPI_Datatype[]){t[1], t[11], MPI_DOUBLE_INT}, &s));
	MPI_OK(MPI_Type_contiguous(2, s, &nested));
	round_trip(nested, 1, 0, 1, MPI_COMBINER_CONTIGUOUS, "nested");
	/* the integers as the standard orders them */
	{
		int ints[8];
		MPI_Aint a[2];
		MPI_Datatype d[1];

		MPI_OK(MPI_Type_get_contents(t[4], 8, 2, 1, ints, a, d));
		CHECK(ints[0] == 3 && ints[1] == 1 && ints[3] == 3 && ints[4] == 5 &&
			  ints[6] == 10 && d[0] == MPI_INT,
		      "indexed contents: %d %d %d %d %d", ints[0], ints[1], ints[3], ints[4],
		      ints[6]);
		MPI_OK(MPI_Type_get_contents(t[11], 0, 2, 1, ints, a, d));
		CHECK(a[0] == -8 && a[1] == 200, "resized contents: %ld %ld", (long)a[0],
		      (long)a[1]);
		MPI_OK(MPI_Type_free(&d[0]));
	}
	MPI_OK(MPI_Type_free(&nested));
	MPI_OK(MPI_Type_free(&s));
	for (int i = 0; i < n; i++)
		MPI_OK(MPI_Type_free(&t[i]));
}

/* The originals freed, what get_contents returns still works. */
static void test_freed_children(void)
{
	MPI_Datatype v, c, got[1], fresh, got2[1];
	int ints[1], ni, na, nd, comb;
	MPI_Aint a[1];

	MPI_OK(MPI_Type_vector(4, 1, 3, MPI_INT, &v));
	MPI_OK(MPI_Type_contiguous(2, v, &c));
	MPI_OK(MPI_Type_free(&v));
	MPI_OK(MPI_Type_get_contents(c, 1, 0, 1, ints, a, got));
	MPI_OK(MPI_Type_get_contents(c, 1, 0, 1, ints, a, got2));
	CHECK(got[0] != got2[0], "two calls returned the same new handle");
	MPI_OK(MPI_Type_get_envelope(got[0], &ni, &na, &nd, &comb));
	CHECK(comb == MPI_COMBINER_VECTOR && ni == 3, "child: combiner %d, %d ints", comb, ni);
	MPI_OK(MPI_Type_vector(4, 1, 3, MPI_INT, &fresh));
	same_layout(got[0], fresh, "child of a freed vector");
	MPI_OK(MPI_Type_free(&got[0]));
	MPI_OK(MPI_Type_free(&fresh));
	/* the second handle and the parent are unaffected */
	MPI_OK(MPI_Type_commit(&got2[0]));
	MPI_OK(MPI_Type_free(&got2[0]));
	MPI_OK(MPI_Type_commit(&c));
	{
		int src[24], dst[24] = {0};

		for (int i = 0; i < 24; i++)
			src[i] = i;
		MPI_OK(MPI_Sendrecv(src, 1, c, 0, 1, dst, 1, c, 0, 1, MPI_COMM_SELF,
				    MPI_STATUS_IGNORE));
		CHECK(dst[3] == 3 && dst[1] == 0 && dst[13] == 13 && dst[12] == 0,
		      "parent type damaged");
	}
	MPI_OK(MPI_Type_free(&c));
}

static void test_named(void)
{
	static const MPI_Datatype named[] = {MPI_INT,	    MPI_CHAR, MPI_DOUBLE,
					     MPI_FLOAT_INT, MPI_2INT, MPI_PACKED};
	int ni, na, nd, comb, ints[4];
	MPI_Aint a[4];
	MPI_Datatype d[4], v;

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		MPI_OK(MPI_Type_get_envelope(named[i], &ni, &na, &nd, &comb));
		CHECK(ni == 0 && na == 0 && nd == 0 && comb == MPI_COMBINER_NAMED,
		      "predefined type %zu: %d %d %d combiner %d", i, ni, na, nd, comb);
	}
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_get_contents(MPI_INT, 4, 4, 4, ints, a, d));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Type_get_envelope(MPI_DATATYPE_NULL, &ni, &na, &nd, &comb));
	MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_get_contents(v, 2, 0, 1, ints, a, d));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_get_contents(v, 3, 0, 0, ints, a, d));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_get_contents(v, 3, 0, 1, NULL, a, d));
	MPI_FAILS(MPI_ERR_ARG, MPI_Type_get_envelope(v, NULL, &na, &nd, &comb));
	MPI_OK(MPI_Type_free(&v));
}

static void test_status(void)
{
	MPI_Datatype pair;
	MPI_Status st;
	MPI_Count cx, lb, ext;
	int n;

	MPI_OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
				      (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}, &pair));
	MPI_OK(MPI_Type_commit(&pair));
	MPI_OK(MPI_Status_set_elements(&st, MPI_INT, 5));
	MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
	CHECK(n == 5, "MPI_INT: count %d", n);
	MPI_OK(MPI_Get_elements(&st, MPI_INT, &n));
	CHECK(n == 5, "MPI_INT: elements %d", n);
	/* basic elements of a struct {int, double}: 3 = one whole and an int */
	MPI_OK(MPI_Status_set_elements(&st, pair, 3));
	MPI_OK(MPI_Get_elements(&st, pair, &n));
	CHECK(n == 3, "pair: elements %d", n);
	MPI_OK(MPI_Get_count(&st, pair, &n));
	CHECK(n == MPI_UNDEFINED, "pair: count %d for 3 elements", n);
	MPI_OK(MPI_Get_elements(&st, MPI_BYTE, &n));
	CHECK(n == 16, "pair: 3 elements are %d bytes", n);
	MPI_OK(MPI_Status_set_elements_x(&st, pair, 4));
	MPI_OK(MPI_Get_elements_x(&st, pair, &cx));
	MPI_OK(MPI_Get_count(&st, pair, &n));
	CHECK(cx == 4 && n == 2, "pair: 4 elements read back as %lld, count %d", cx, n);
	MPI_OK(MPI_Status_set_elements_x(&st, MPI_BYTE, (MPI_Count)3 << 30));
	MPI_OK(MPI_Get_elements_x(&st, MPI_BYTE, &cx));
	MPI_OK(MPI_Get_count(&st, MPI_BYTE, &n));
	CHECK(cx == (MPI_Count)3 << 30 && n == MPI_UNDEFINED, "3 GiB: %lld elements, count %d", cx,
	      n);
	/* any byte count an MPI_Count holds; beyond it, MPI_ERR_COUNT */
	MPI_OK(MPI_Status_set_elements_x(&st, MPI_BYTE, (MPI_Count)0x7654321f71234567));
	MPI_OK(MPI_Get_elements_x(&st, MPI_BYTE, &cx));
	CHECK(cx == (MPI_Count)0x7654321f71234567, "a huge count read back as %lld", cx);
	MPI_FAILS(MPI_ERR_COUNT,
		  MPI_Status_set_elements_x(&st, MPI_INT, (MPI_Count)0x7654321f71234567));
	MPI_OK(MPI_Status_set_elements(&st, pair, 0));
	MPI_OK(MPI_Get_count(&st, pair, &n));
	CHECK(n == 0, "zero elements: count %d", n);
	MPI_OK(MPI_Status_set_cancelled(&st, 1));
	MPI_OK(MPI_Test_cancelled(&st, &n));
	CHECK(n, "set_cancelled(1) not seen");
	MPI_OK(MPI_Status_set_cancelled(&st, 0));
	MPI_OK(MPI_Test_cancelled(&st, &n));
	CHECK(!n, "set_cancelled(0) not seen");
	MPI_FAILS(MPI_ERR_COUNT, MPI_Status_set_elements(&st, MPI_INT, -1));
	MPI_FAILS(MPI_ERR_ARG, MPI_Status_set_elements(MPI_STATUS_IGNORE, MPI_INT, 1));
	MPI_FAILS(MPI_ERR_TYPE, MPI_Status_set_elements(&st, MPI_DATATYPE_NULL, 1));
	MPI_FAILS(MPI_ERR_ARG, MPI_Status_set_cancelled(MPI_STATUS_IGNORE, 1));
	/* the _x queries */
	MPI_OK(MPI_Type_size_x(pair, &cx));
	CHECK(cx == 12, "Type_size_x %lld", cx);
	MPI_OK(MPI_Type_get_extent_x(pair, &lb, &ext));
	CHECK(lb == 0 && ext == 16, "Type_get_extent_x %lld %lld", lb, ext);
	MPI_OK(MPI_Type_get_true_extent_x(pair, &lb, &ext));
	CHECK(lb == 0 && ext == 16, "Type_get_true_extent_x %lld %lld", lb, ext);
	MPI_OK(MPI_Type_free(&pair));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	test_constructors();
	test_freed_children();
	test_named();
	test_status();
	printf("dtype_envelope: OK\n");
	MPI_OK(MPI_Finalize());
	return 0;
}
