/* ibx-test: np=1,2,3,4,5,7 timeout=180 */
/*
 * mpil_coll_reduce — MPI_Reduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter,
 * MPI_Scan, MPI_Exscan and MPI_Reduce_local:
 *   - every predefined op on every type MPI allows it for, every root, at
 *     counts through each algorithm (short trees, long rings), in place or
 *     not, checked against what each rank computes alone;
 *   - MAXLOC/MINLOC on the pair types, complex SUM/PROD;
 *   - user ops: a non-commutative one (composition of affine maps, whose
 *     result tells the order the operands were combined in) and a
 *     commutative one, through every collective, on MPI_COMM_WORLD and on
 *     a split communicator whose rank order is the reverse of the world's;
 *   - MPI_Op_create / MPI_Op_free / MPI_Op_commutative.
 * Non-root receive buffers must come back untouched.
 */
#include "mpitest.h"

#include <complex.h>
#include <stdbool.h>

static int rank, size;

enum op { O_SUM, O_PROD, O_MAX, O_MIN, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, O_N };
static MPI_Op mpi_op(int o)
{
	MPI_Op t[O_N] = {MPI_SUM, MPI_PROD, MPI_MAX,  MPI_MIN, MPI_LAND,
			 MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
	return t[o];
}
static const char *op_name[O_N] = {"SUM", "PROD", "MAX",  "MIN", "LAND",
				   "LOR", "LXOR", "BAND", "BOR", "BXOR"};

/* The collectives under test. */
enum kind { K_REDUCE, K_SCAN, K_EXSCAN, K_RSB, K_RS, K_N };
static const char *kind_name[K_N] = {"Reduce", "Scan", "Exscan", "Reduce_scatter_block",
				     "Reduce_scatter"};

/* Small operands: sums and products stay exact in every type. */
static long long operand(int o, int r, int i, bool sgn)
{
	switch (o) {
	case O_SUM: return (r + i) % 5;
	case O_PROD: return (r + i) % 4 == 0 ? 2 : 1;
	case O_MAX:
	case O_MIN: return (r * 7 + i) % 13 - (sgn ? 6 : 0);
	case O_LAND:
	case O_LOR:
	case O_LXOR: return (r + i) % 3 == 0 ? 0 : (r + i) % 3;
	default: return ((r * 37 + i * 11) & 0x7f) | (r & 1 ? 0x20 : 0);
	}
}

static bool is_negative(long double x)
{
	return x < 0;
}

#define COMBINE(T, o, a, b)                                                                        \
	((o) == O_SUM	 ? (T)((a) + (b))                                                          \
	 : (o) == O_PROD ? (T)((a) * (b))                                                          \
	 : (o) == O_MAX	 ? ((a) > (b) ? (a) : (b))                                                 \
	 : (o) == O_MIN	 ? ((a) < (b) ? (a) : (b))                                                 \
	 : (o) == O_LAND ? (T)((a) && (b))                                                         \
	 : (o) == O_LOR	 ? (T)((a) || (b))                                                         \
	 : (o) == O_LXOR ? (T)(!(a) != !(b))                                                       \
	 : (o) == O_BAND ? (T)((a) & (b))                                                          \
	 : (o) == O_BOR	 ? (T)((a) | (b))                                                          \
			 : (T)((a) ^ (b)))
#define COMBINE_FP(T, o, a, b)                                                                     \
	((o) == O_SUM	 ? (T)((a) + (b))                                                          \
	 : (o) == O_PROD ? (T)((a) * (b))                                                          \
	 : (o) == O_MAX	 ? ((a) > (b) ? (a) : (b))                                                 \
			 : ((a) < (b) ? (a) : (b)))
#define COMBINE_BOOL(T, o, a, b)                                                                   \
	((o) == O_LAND ? (T)((a) && (b)) : (o) == O_LOR ? (T)((a) || (b)) : (T)(!(a) != !(b)))

/* Counts through the short algorithms and the long ones (> 64 KiB for
 * 4-byte types at the largest). */
static const int counts[] = {1, 3, 17, 1000, 20000};
#define NCOUNTS ((int)(sizeof(counts) / sizeof(counts[0])))
#define MAXN	20000

/*
 * One function per C type: for collective @k, every op in @ops, every
 * count and (Reduce) every root; in place on alternate runs. Element i of
 * rank r's operand is operand(o, r, i). The expected value at element i
 * combines ranks [lo, hi) of the collective's range.
 */
#define DEFINE_RED_TEST(fn, T, COMB)                                                               \
	static void fn(enum kind k, MPI_Datatype dt, const char *tname, unsigned ops,              \
		       bool all_roots)                                                             \
	{                                                                                          \
		bool sgn = is_negative((long double)(T)-1);                                        \
		T *in = malloc(sizeof(T) * (MAXN + 64) * (size_t)size);                            \
		T *out = malloc(sizeof(T) * (MAXN + 64) * (size_t)size);                           \
		int *rc = malloc(sizeof(int) * (size_t)size);                                      \
		CHECK(in &&out &&rc, "out of memory");                                             \
		for (int o = 0; o < O_N; o++) {                                                    \
			if (!(ops & (1u << o)))                                                    \
				continue;                                                          \
			for (int ci = 0; ci < NCOUNTS; ci++) {                                     \
				int n = counts[ci], nroots = k == K_REDUCE ? size : 1;             \
				int root0 = 0;                                                     \
				if (k == K_REDUCE && !all_roots) /* one root, rotating */          \
					root0 = (ci + o) % size, nroots = root0 + 1;               \
				if (k == K_RSB || k == K_RS)                                       \
					n = n / size + (k == K_RS ? 0 : 1);                        \
				for (int root = root0; root < nroots; root++) {                    \
					int inplace = (ci + o + root) % 2, total = n, mine = n,    \
					    first = 0;                                             \
					if (k == K_RSB)                                            \
						total = n * size, first = n * rank;                \
					if (k == K_RS) {                                           \
						total = 0;                                         \
						for (int r = 0; r < size; r++) {                   \
							rc[r] = n + (r * 3 + ci) % 4 -             \
								(r == 1 ? n : 0);                  \
							if (r == rank)                             \
								first = total;                     \
							total += rc[r];                            \
						}                                                  \
						mine = rc[rank];                                   \
					}                                                          \
					bool recv_sig = k != K_REDUCE || rank == root;             \
					if (k == K_REDUCE && rank != root)                         \
						inplace = 0;                                       \
					for (int i = 0; i < total; i++)                            \
						in[i] = (T)operand(o, rank, i, sgn);               \
					for (int i = 0; i < total; i++)                            \
						out[i] = (T)(inplace ? in[i] : (T)99);             \
					int rcode;                                                 \
					void *sb = inplace ? MPI_IN_PLACE : (void *)in;            \
					switch (k) {                                               \
					case K_REDUCE:                                             \
						rcode = MPI_Reduce(sb, out, n, dt, mpi_op(o),      \
								   root, MPI_COMM_WORLD);          \
						break;                                             \
					case K_SCAN:                                               \
						rcode = MPI_Scan(sb, out, n, dt, mpi_op(o),        \
								 MPI_COMM_WORLD);                  \
						break;                                             \
					case K_EXSCAN:                                             \
						rcode = MPI_Exscan(sb, out, n, dt, mpi_op(o),      \
								   MPI_COMM_WORLD);                \
						break;                                             \
					case K_RSB:                                                \
						rcode = MPI_Reduce_scatter_block(                  \
						    sb, out, n, dt, mpi_op(o), MPI_COMM_WORLD);    \
						break;                                             \
					default:                                                   \
						rcode = MPI_Reduce_scatter(                        \
						    sb, out, rc, dt, mpi_op(o), MPI_COMM_WORLD);   \
						break;                                             \
					}                                                          \
					CHECK(rcode == MPI_SUCCESS, "%s %s %s returned %d",        \
					      kind_name[k], op_name[o], tname, rcode);             \
					int lo = 0, hi = size;                                     \
					if (k == K_SCAN)                                           \
						hi = rank + 1;                                     \
					if (k == K_EXSCAN)                                         \
						hi = rank;                                         \
					for (int j = 0; j < mine; j++) {                           \
						int i = first + j;                                 \
						T got = out[j];                                    \
						if (!recv_sig || hi == lo) {                       \
							/* untouched (Exscan at rank 0: undefined) \
							 */                                        \
							if (k == K_EXSCAN)                         \
								continue;                          \
							CHECK(got == (T)99,                        \
							      "%s %s %s count %d root %d: "        \
							      "non-root recvbuf[%d] written",      \
							      kind_name[k], op_name[o], tname, n,  \
							      root, j);                            \
							continue;                                  \
						}                                                  \
						T e = (T)operand(o, lo, i, sgn);                   \
						for (int r = lo + 1; r < hi; r++) {                \
							T x = (T)operand(o, r, i, sgn);            \
							e = COMB(T, o, e, x);                      \
						}                                                  \
						CHECK(got == e,                                    \
						      "%s %s %s count %d root %d%s: element %d "   \
						      "wrong",                                     \
						      kind_name[k], op_name[o], tname, n, root,    \
						      inplace ? " in place" : "", j);              \
					}                                                          \
					if (!inplace)                                              \
						for (int i = 0; i < total; i++)                    \
							CHECK(in[i] ==                             \
								  (T)operand(o, rank, i, sgn),     \
							      "%s changed sendbuf", kind_name[k]); \
				}                                                                  \
			}                                                                          \
		}                                                                                  \
		free(in);                                                                          \
		free(out);                                                                         \
		free(rc);                                                                          \
	}

DEFINE_RED_TEST(t_schar, signed char, COMBINE)
DEFINE_RED_TEST(t_uchar, unsigned char, COMBINE)
DEFINE_RED_TEST(t_short, short, COMBINE)
DEFINE_RED_TEST(t_ushort, unsigned short, COMBINE)
DEFINE_RED_TEST(t_int, int, COMBINE)
DEFINE_RED_TEST(t_uint, unsigned, COMBINE)
DEFINE_RED_TEST(t_long, long, COMBINE)
DEFINE_RED_TEST(t_ulong, unsigned long, COMBINE)
DEFINE_RED_TEST(t_llong, long long, COMBINE)
DEFINE_RED_TEST(t_ullong, unsigned long long, COMBINE)
DEFINE_RED_TEST(t_i8, int8_t, COMBINE)
DEFINE_RED_TEST(t_i16, int16_t, COMBINE)
DEFINE_RED_TEST(t_i32, int32_t, COMBINE)
DEFINE_RED_TEST(t_i64, int64_t, COMBINE)
DEFINE_RED_TEST(t_u8, uint8_t, COMBINE)
DEFINE_RED_TEST(t_u16, uint16_t, COMBINE)
DEFINE_RED_TEST(t_u32, uint32_t, COMBINE)
DEFINE_RED_TEST(t_u64, uint64_t, COMBINE)
DEFINE_RED_TEST(t_aint, MPI_Aint, COMBINE)
DEFINE_RED_TEST(t_offset, MPI_Offset, COMBINE)
DEFINE_RED_TEST(t_count, MPI_Count, COMBINE)
DEFINE_RED_TEST(t_float, float, COMBINE_FP)
DEFINE_RED_TEST(t_double, double, COMBINE_FP)
DEFINE_RED_TEST(t_ldouble, long double, COMBINE_FP)
DEFINE_RED_TEST(t_bool, bool, COMBINE_BOOL)
DEFINE_RED_TEST(t_byte, unsigned char, COMBINE)

#define OPS(...) ops_mask((int[]){__VA_ARGS__, -1})
static unsigned ops_mask(const int *o)
{
	unsigned m = 0;

	for (; *o >= 0; o++)
		m |= 1u << *o;
	return m;
}

static void test_predefined(enum kind k)
{
	unsigned all_int =
	    OPS(O_SUM, O_PROD, O_MAX, O_MIN, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR);
	unsigned multi = OPS(O_SUM, O_PROD, O_MAX, O_MIN, O_BAND, O_BOR, O_BXOR);
	unsigned fp = OPS(O_SUM, O_PROD, O_MAX, O_MIN);
	unsigned logical = OPS(O_LAND, O_LOR, O_LXOR);
	unsigned bits = OPS(O_BAND, O_BOR, O_BXOR);
	/* Reduce covers every type; the other collectives a representative
	 * set (they share the kernels, the algorithms are what differs).
	 * Reduce runs every root for the representative types, one (rotating
	 * with count and op) for the others. */
	bool every = k == K_REDUCE;

	t_int(k, MPI_INT, "MPI_INT", all_int, true);
	t_double(k, MPI_DOUBLE, "MPI_DOUBLE", fp, true);
	t_u8(k, MPI_UINT8_T, "MPI_UINT8_T", all_int, true);
	t_bool(k, MPI_C_BOOL, "MPI_C_BOOL", logical, true);
	t_byte(k, MPI_BYTE, "MPI_BYTE", bits, true);
	t_count(k, MPI_COUNT, "MPI_COUNT", multi, true);
	if (!every)
		return;
	t_schar(k, MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", all_int, false);
	t_uchar(k, MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", all_int, false);
	t_short(k, MPI_SHORT, "MPI_SHORT", all_int, false);
	t_ushort(k, MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", all_int, false);
	t_uint(k, MPI_UNSIGNED, "MPI_UNSIGNED", all_int, false);
	t_long(k, MPI_LONG, "MPI_LONG", all_int, false);
	t_ulong(k, MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", all_int, false);
	t_llong(k, MPI_LONG_LONG, "MPI_LONG_LONG", all_int, false);
	t_ullong(k, MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", all_int, false);
	t_i8(k, MPI_INT8_T, "MPI_INT8_T", all_int, false);
	t_i16(k, MPI_INT16_T, "MPI_INT16_T", all_int, false);
	t_i32(k, MPI_INT32_T, "MPI_INT32_T", all_int, false);
	t_i64(k, MPI_INT64_T, "MPI_INT64_T", all_int, false);
	t_u16(k, MPI_UINT16_T, "MPI_UINT16_T", all_int, false);
	t_u32(k, MPI_UINT32_T, "MPI_UINT32_T", all_int, false);
	t_u64(k, MPI_UINT64_T, "MPI_UINT64_T", all_int, false);
	t_aint(k, MPI_AINT, "MPI_AINT", multi, false);
	t_offset(k, MPI_OFFSET, "MPI_OFFSET", multi, false);
	t_float(k, MPI_FLOAT, "MPI_FLOAT", fp, false);
	t_ldouble(k, MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", fp, false);
}

/* ---- complex and MAXLOC/MINLOC ------------------------------------------------------- */

static void test_complex_loc(void)
{
	enum { N = 3000 };
	double complex *zi = malloc(sizeof(*zi) * N), *zo = malloc(sizeof(*zo) * N);
	struct {
		double v;
		int i;
	} *pi = malloc(sizeof(*pi) * N), *po = malloc(sizeof(*po) * N);
	struct {
		short v;
		int i;
	} si[N], so[N];

	CHECK(zi && zo && pi && po, "out of memory");
	for (int root = 0; root < size; root++) {
		for (int i = 0; i < N; i++) {
			zi[i] = (double)((rank + i) % 4) + (double)(i % 3) * I;
			pi[i].v = (double)((rank * 3 + i) % 4);
			pi[i].i = rank;
			si[i].v = (short)((rank + i) % 3);
			si[i].i = rank * 10;
		}
		MPI_OK(MPI_Reduce(zi, zo, N, MPI_C_DOUBLE_COMPLEX, MPI_SUM, root, MPI_COMM_WORLD));
		MPI_OK(MPI_Reduce(pi, po, N, MPI_DOUBLE_INT, MPI_MAXLOC, root, MPI_COMM_WORLD));
		MPI_OK(MPI_Scan(si, so, N, MPI_SHORT_INT, MPI_MINLOC, MPI_COMM_WORLD));
		for (int i = 0; i < N; i++) {
			double complex ez = 0;
			double best = -1;
			int where = -1, best2 = 99, where2 = -1;

			for (int r = 0; r < size; r++) {
				ez += (double)((r + i) % 4) + (double)(i % 3) * I;
				if ((double)((r * 3 + i) % 4) > best) {
					best = (double)((r * 3 + i) % 4);
					where = r;
				}
				if (r <= rank && (r + i) % 3 < best2) {
					best2 = (r + i) % 3;
					where2 = r * 10;
				}
			}
			if (rank == root)
				CHECK(zo[i] == ez && po[i].v == best && po[i].i == where,
				      "Reduce complex/MAXLOC root %d element %d", root, i);
			CHECK(so[i].v == best2 && so[i].i == where2,
			      "Scan MINLOC SHORT_INT %d: (%d,%d)", i, so[i].v, so[i].i);
		}
	}
	free(zi);
	free(zo);
	free(pi);
	free(po);
}

/* ---- user operations ----------------------------------------------------------------- */

/* An affine map t -> a t + b (mod 2^32) as an MPI_2INT. Combining x (lower
 * ranks) with y gives "x, then y": (a_x a_y, a_y b_x + b_y). Associative,
 * not commutative: the result tells the order the operands met in. */
typedef struct {
	int a, b;
} affine_t;

static int affine_calls;
static MPI_Datatype affine_seen;

static void affine_op(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
	const affine_t *x = invec;
	affine_t *y = inoutvec;

	affine_calls++;
	affine_seen = *dt;
	for (int i = 0; i < *len; i++) {
		unsigned a = (unsigned)x[i].a * (unsigned)y[i].a;
		unsigned b = (unsigned)y[i].a * (unsigned)x[i].b + (unsigned)y[i].b;

		y[i].a = (int)a;
		y[i].b = (int)b;
	}
}

static affine_t affine_of(int r, int i)
{
	return (affine_t){2 * ((r + i) % 5) + 3, r * 7 + i};
}

static affine_t affine_fold(int lo, int hi, int i, const int *order)
{
	affine_t e = affine_of(order[lo], i);

	for (int r = lo + 1; r < hi; r++) {
		affine_t x = affine_of(order[r], i);
		unsigned a = (unsigned)e.a * (unsigned)x.a,
			 b = (unsigned)x.a * (unsigned)e.b + (unsigned)x.b;

		e.a = (int)a;
		e.b = (int)b;
	}
	return e;
}

/* A commutative user sum (wrapping) on ints. */
static void isum_op(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
	const int *x = invec;
	int *y = inoutvec;

	(void)dt;
	for (int i = 0; i < *len; i++)
		y[i] = (int)((unsigned)x[i] + (unsigned)y[i]);
}

/* Every collective with the affine op on @comm; @order maps comm ranks to
 * the world ranks whose operands they hold. */
static void user_ops_on(MPI_Comm comm, const int *order, MPI_Op affine, MPI_Op isum)
{
	int me, p, ns[] = {1, 7, 5000};
	affine_t *in, *out;
	int *iin, *iout, *rc;

	MPI_OK(MPI_Comm_rank(comm, &me));
	MPI_OK(MPI_Comm_size(comm, &p));
	in = malloc(sizeof(*in) * 5000 * (size_t)p);
	out = malloc(sizeof(*out) * 5000 * (size_t)p);
	iin = malloc(sizeof(int) * 20000);
	iout = malloc(sizeof(int) * 20000);
	rc = malloc(sizeof(int) * (size_t)p);
	CHECK(in && out && iin && iout && rc, "out of memory");
	for (int ni = 0; ni < 3; ni++) {
		int n = ns[ni];

		for (int i = 0; i < 5000 * p; i++)
			in[i] = affine_of(order[me], i);
		/* Reduce at every root, in place at the root on odd roots */
		for (int root = 0; root < p; root++) {
			bool ip = root % 2 && me == root;

			if (ip)
				memcpy(out, in, sizeof(*in) * (size_t)n);
			affine_calls = 0;
			MPI_OK(MPI_Reduce(ip ? MPI_IN_PLACE : in, out, n, MPI_2INT, affine, root,
					  comm));
			if (me == root)
				for (int i = 0; i < n; i++) {
					affine_t e = affine_fold(0, p, i, order);

					CHECK(out[i].a == e.a && out[i].b == e.b,
					      "Reduce (non-commutative) n %d root %d: element %d "
					      "out of "
					      "rank order",
					      n, root, i);
				}
			CHECK(p == 1 || affine_calls == 0 || affine_seen == MPI_2INT,
			      "user function got another datatype");
		}
		MPI_OK(MPI_Allreduce(in, out, n, MPI_2INT, affine, comm));
		for (int i = 0; i < n; i++) {
			affine_t e = affine_fold(0, p, i, order);

			CHECK(out[i].a == e.a && out[i].b == e.b,
			      "Allreduce (non-commutative) n %d: "
			      "element %d out of rank order",
			      n, i);
		}
		MPI_OK(MPI_Scan(in, out, n, MPI_2INT, affine, comm));
		for (int i = 0; i < n; i++) {
			affine_t e = affine_fold(0, me + 1, i, order);

			CHECK(out[i].a == e.a && out[i].b == e.b,
			      "Scan (non-commutative) n %d: "
			      "element %d wrong",
			      n, i);
		}
		memcpy(out, in, sizeof(*in) * (size_t)n);
		MPI_OK(MPI_Exscan(MPI_IN_PLACE, out, n, MPI_2INT, affine, comm));
		for (int i = 0; me > 0 && i < n; i++) {
			affine_t e = affine_fold(0, me, i, order);

			CHECK(out[i].a == e.a && out[i].b == e.b,
			      "Exscan (non-commutative) n %d: "
			      "element %d wrong",
			      n, i);
		}
		MPI_OK(MPI_Reduce_scatter_block(in, out, n, MPI_2INT, affine, comm));
		for (int i = 0; i < n; i++) {
			affine_t e = affine_fold(0, p, me * n + i, order);

			CHECK(out[i].a == e.a && out[i].b == e.b,
			      "Reduce_scatter_block "
			      "(non-commutative) n %d: element %d wrong",
			      n, i);
		}
		int total = 0, first = 0;

		for (int r = 0; r < p; r++) {
			rc[r] = (n + r) % 4 + (r % 2) * n;
			if (r == me)
				first = total;
			total += rc[r];
		}
		memcpy(out, in, sizeof(*in) * (size_t)total);
		MPI_OK(MPI_Reduce_scatter(MPI_IN_PLACE, out, rc, MPI_2INT, affine, comm));
		for (int i = 0; i < rc[me]; i++) {
			affine_t e = affine_fold(0, p, first + i, order);

			CHECK(out[i].a == e.a && out[i].b == e.b,
			      "Reduce_scatter (non-commutative, "
			      "in place) n %d: element %d wrong",
			      n, i);
		}
		/* commutative user op: the long algorithms (rings) */
		int m = n * 4;

		for (int i = 0; i < m; i++)
			iin[i] = order[me] * 1000 + i;
		MPI_OK(MPI_Allreduce(iin, iout, m, MPI_INT, isum, comm));
		for (int i = 0; i < m; i++) {
			int e = 0;

			for (int r = 0; r < p; r++)
				e += order[r] * 1000 + i;
			CHECK(iout[i] == e, "Allreduce (commutative user op) n %d: element %d", m,
			      i);
		}
		MPI_OK(MPI_Reduce(iin, iout, m, MPI_INT, isum, p - 1, comm));
		for (int i = 0; me == p - 1 && i < m; i++) {
			int e = 0;

			for (int r = 0; r < p; r++)
				e += order[r] * 1000 + i;
			CHECK(iout[i] == e, "Reduce (commutative user op) n %d: element %d", m, i);
		}
		MPI_OK(MPI_Reduce_scatter_block(iin, iout, m / p, MPI_INT, isum, comm));
		for (int i = 0; i < m / p; i++) {
			int e = 0, j = me * (m / p) + i;

			for (int r = 0; r < p; r++)
				e += order[r] * 1000 + j;
			CHECK(iout[i] == e, "Reduce_scatter_block (commutative user op) element %d",
			      i);
		}
	}
	free(in);
	free(out);
	free(iin);
	free(iout);
	free(rc);
}

static void test_user_ops(void)
{
	MPI_Op affine, isum;
	int flag, *order = malloc(sizeof(int) * (size_t)size);
	MPI_Comm rev;

	CHECK(order, "out of memory");
	MPI_OK(MPI_Op_create(affine_op, 0, &affine));
	MPI_OK(MPI_Op_create(isum_op, 1, &isum));
	MPI_OK(MPI_Op_commutative(affine, &flag));
	CHECK(flag == 0, "MPI_Op_commutative(affine) = %d", flag);
	MPI_OK(MPI_Op_commutative(isum, &flag));
	CHECK(flag == 1, "MPI_Op_commutative(isum) = %d", flag);
	MPI_OK(MPI_Op_commutative(MPI_SUM, &flag));
	CHECK(flag == 1, "MPI_Op_commutative(MPI_SUM) = %d", flag);

	for (int r = 0; r < size; r++)
		order[r] = r;
	user_ops_on(MPI_COMM_WORLD, order, affine, isum);
	/* Reversed ranks: rank order is the communicator's, not the world's. */
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
	for (int r = 0; r < size; r++)
		order[r] = size - 1 - r;
	user_ops_on(rev, order, affine, isum);
	MPI_OK(MPI_Comm_free(&rev));

	/* Reduce_local: inoutbuf = inbuf op inoutbuf, in that order. */
	affine_t a[3], b[3];

	for (int i = 0; i < 3; i++) {
		a[i] = affine_of(1, i);
		b[i] = affine_of(2, i);
	}
	MPI_OK(MPI_Reduce_local(a, b, 3, MPI_2INT, affine));
	for (int i = 0; i < 3; i++) {
		int ord[2] = {1, 2};
		affine_t e = affine_fold(0, 2, i, ord);

		CHECK(b[i].a == e.a && b[i].b == e.b, "Reduce_local order, element %d", i);
	}
	int x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40};

	MPI_OK(MPI_Reduce_local(x, y, 4, MPI_INT, MPI_SUM));
	CHECK(y[0] == 11 && y[3] == 44, "Reduce_local MPI_SUM");
	MPI_OK(MPI_Reduce_local(x, y, 4, MPI_INT, isum));
	CHECK(y[0] == 12 && y[3] == 48, "Reduce_local user op");

	MPI_OK(MPI_Op_free(&affine));
	MPI_OK(MPI_Op_free(&isum));
	CHECK(affine == MPI_OP_NULL && isum == MPI_OP_NULL, "MPI_Op_free did not null the handle");
	free(order);
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	for (int k = 0; k < K_N; k++)
		test_predefined((enum kind)k);
	test_complex_loc();
	test_user_ops();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("mpil_coll_reduce: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
