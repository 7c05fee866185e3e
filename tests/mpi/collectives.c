/* ibx-test: np=1,2,3,4,5,7 timeout=180 */
/*
 * collectives — MPI_Barrier, MPI_Bcast and MPI_Allreduce at every size
 * (powers of two or not): a barrier really holds ranks back, broadcasts
 * from every root at sizes through both algorithms (contiguous and packed
 * types), and Allreduce for every predefined op on every type MPI allows
 * it for, at counts through both algorithms, with and without MPI_IN_PLACE,
 * checked against the result each rank computes on its own.
 */
#include "mpitest.h"

#include <complex.h>
#include <stdbool.h>

static int rank, size;

/* ---- barrier ------------------------------------------------------------------- */

/* Rank `late` polls for a while before entering; the others send it a
 * message as soon as they leave the barrier. If the barrier let them out
 * early, the late rank would find that message before entering. */
static void test_barrier(void)
{
	for (int round = 0; round < 3 * size; round++) {
		int late = round % size, flag, token = round;

		if (rank == late) {
			double t_end = MPI_Wtime() + 0.01;

			while (MPI_Wtime() < t_end) {
				MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 500 + round, MPI_COMM_WORLD,
						  &flag, MPI_STATUS_IGNORE));
				CHECK(!flag,
				      "round %d: a rank left the barrier before rank %d entered",
				      round, late);
			}
		}
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		if (rank != late)
			MPI_OK(MPI_Send(&token, 1, MPI_INT, late, 500 + round, MPI_COMM_WORLD));
		else
			for (int i = 0; i < size - 1; i++)
				MPI_OK(MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 500 + round,
						MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	}
	/* Many in a row (4 ranks on 2 cores must still get through quickly). */
	for (int i = 0; i < 500; i++)
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Barrier(MPI_COMM_SELF));
}

/* ---- broadcast -------------------------------------------------------------------- */

static void test_bcast(void)
{
	static const size_t lens[] = {0, 1, 3, 100, 4096, 65536, 65537, 100003, 1 << 20, 3 << 20};
	size_t maxlen = 3 << 20;
	unsigned char *buf = malloc(maxlen);

	CHECK(buf, "out of memory");
	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		for (int root = 0; root < size; root++) {
			size_t len = lens[li];
			int salt = (int)li * 31 + root;

			if (rank == root)
				mt_fill(buf, len, root, salt);
			else
				memset(buf, 0xee, len);
			MPI_OK(MPI_Bcast(buf, (int)len, MPI_BYTE, root, MPI_COMM_WORLD));
			long bad = mt_verify(buf, len, root, salt);

			CHECK(bad < 0, "Bcast %zu bytes from root %d: byte %ld wrong", len, root,
			      bad);
		}
	}
	/* Typed, and a packed (non-contiguous) pair type. */
	for (int root = 0; root < size; root++) {
		enum { N = 30000 };
		double *d = malloc(sizeof(double) * N);
		struct {
			long double v;
			int i;
		} *p = malloc(sizeof(*p) * 5000);

		CHECK(d && p, "out of memory");
		for (int i = 0; i < N; i++)
			d[i] = rank == root ? i * 0.5 + root : -1;
		MPI_OK(MPI_Bcast(d, N, MPI_DOUBLE, root, MPI_COMM_WORLD));
		for (int i = 0; i < N; i++)
			CHECK(d[i] == i * 0.5 + root, "Bcast double %d = %g", i, d[i]);
		for (int i = 0; i < 5000; i++) {
			p[i].v = rank == root ? (long double)i * 3 + root : -1;
			p[i].i = rank == root ? -i : 7;
		}
		MPI_OK(MPI_Bcast(p, 5000, MPI_LONG_DOUBLE_INT, root, MPI_COMM_WORLD));
		for (int i = 0; i < 5000; i++)
			CHECK(p[i].v == (long double)i * 3 + root && p[i].i == -i,
			      "Bcast MPI_LONG_DOUBLE_INT %d", i);
		free(d);
		free(p);
	}
	int v = 42;

	MPI_OK(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_SELF));
	CHECK(v == 42, "Bcast on MPI_COMM_SELF");
	free(buf);
}

/* ---- allreduce ------------------------------------------------------------------------ */

enum op { O_SUM, O_PROD, O_MAX, O_MIN, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, O_N };
static MPI_Op mpi_op(enum op o)
{
	MPI_Op t[O_N] = {MPI_SUM, MPI_PROD, MPI_MAX,  MPI_MIN, MPI_LAND,
			 MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
	return t[o];
}
static const char *op_name[O_N] = {"SUM", "PROD", "MAX",  "MIN", "LAND",
				   "LOR", "LXOR", "BAND", "BOR", "BXOR"};

/* Through recursive doubling (short) and the ring (> 16 KiB, for every
 * element size up to 16 bytes at the largest count). */
static const int counts[] = {1, 3, 17, 1000, 20000};
#define NCOUNTS ((int)(sizeof(counts) / sizeof(counts[0])))

/* Rank r's operand element i for op o: small values, so sums and products
 * stay exact in every type (and in range for 8-bit ones). */
static long long operand(enum op o, int r, int i, bool is_signed)
{
	switch (o) {
	case O_SUM: return (r + i) % 5;
	case O_PROD: return (r + i) % 4 == 0 ? 2 : 1;
	case O_MAX:
	case O_MIN: return (r * 7 + i) % 13 - (is_signed ? 6 : 0);
	case O_LAND:
	case O_LOR:
	case O_LXOR: return (r + i) % 3 == 0 ? 0 : (r + i) % 3;
	default: return ((r * 37 + i * 11) & 0x7f) | (r & 1 ? 0x20 : 0);
	}
}

/* The reduction of two operands as MPI defines it (logical ops give 0/1). */
#define COMBINE(T, o, a, b)                                                                        \
	((o) == O_SUM	 ? (T)((a) + (b))                                                          \
	 : (o) == O_PROD ? (T)((a) * (b))                                                          \
	 : (o) == O_MAX	 ? ((a) > (b) ? (a) : (b))                                                 \
	 : (o) == O_MIN	 ? ((a) < (b) ? (a) : (b))                                                 \
	 : (o) == O_LAND ? (T)((a) && (b))                                                         \
	 : (o) == O_LOR	 ? (T)((a) || (b))                                                         \
	 : (o) == O_LXOR ? (T)(!(a) != !(b))                                                       \
			 : (T)0)

#define LOGIC(T, o, a, b)                                                                          \
	((o) == O_LAND ? (T)((a) && (b)) : (o) == O_LOR ? (T)((a) || (b)) : (T)(!(a) != !(b)))

#define BITS(T, o, a, b)                                                                           \
	((o) == O_BAND ? (T)((a) & (b)) : (o) == O_BOR ? (T)((a) | (b)) : (T)((a) ^ (b)))

static bool is_negative(long double x)
{
	return x < 0;
}

/* One test function per C type: every op in @ops (a bitmask of enum op),
 * every count, in place or not (alternating); REDUCE computes the
 * expected result. */
#define DEFINE_ALLREDUCE_TEST(fn, T, REDUCE)                                                       \
	static void fn(MPI_Datatype dt, const char *tname, unsigned ops)                           \
	{                                                                                          \
		bool sgn = is_negative((long double)(T)-1);                                        \
		T *in = malloc(sizeof(T) * 20000), *out = malloc(sizeof(T) * 20000);               \
		CHECK(in &&out, "out of memory");                                                  \
		for (int o = 0; o < O_N; o++) {                                                    \
			if (!(ops & (1u << o)))                                                    \
				continue;                                                          \
			for (int ci = 0; ci < NCOUNTS; ci++) {                                     \
				int n = counts[ci];                                                \
				{                                                                  \
					int inplace = (ci + o) % 2;                                \
					for (int i = 0; i < n; i++) {                              \
						in[i] = (T)operand((enum op)o, rank, i, sgn);      \
						out[i] = inplace ? in[i] : (T)99;                  \
					}                                                          \
					MPI_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, n,  \
							     dt, mpi_op((enum op)o),               \
							     MPI_COMM_WORLD));                     \
					for (int i = 0; i < n; i++) {                              \
						T e = (T)operand((enum op)o, 0, i, sgn);           \
						for (int r = 1; r < size; r++) {                   \
							T x = (T)operand((enum op)o, r, i, sgn);   \
							e = REDUCE(T, o, e, x);                    \
						}                                                  \
						CHECK(out[i] == e,                                 \
						      "Allreduce %s %s count %d%s: element %d "    \
						      "wrong",                                     \
						      op_name[o], tname, n,                        \
						      inplace ? " in place" : "", i);              \
					}                                                          \
					if (!inplace)                                              \
						for (int i = 0; i < n; i++)                        \
							CHECK(in[i] == (T)operand((enum op)o,      \
										  rank, i, sgn),   \
							      "Allreduce changed sendbuf");        \
				}                                                                  \
			}                                                                          \
		}                                                                                  \
		free(in);                                                                          \
		free(out);                                                                         \
	}

/* Integers get bitwise ops through a second instantiation. */
#define DEFINE_INT_TESTS(name, T)                                                                  \
	DEFINE_ALLREDUCE_TEST(name##_arith, T, COMBINE)                                            \
	DEFINE_ALLREDUCE_TEST(name##_bits, T, BITS)

DEFINE_INT_TESTS(t_char, char)
DEFINE_INT_TESTS(t_schar, signed char)
DEFINE_INT_TESTS(t_uchar, unsigned char)
DEFINE_INT_TESTS(t_short, short)
DEFINE_INT_TESTS(t_ushort, unsigned short)
DEFINE_INT_TESTS(t_int, int)
DEFINE_INT_TESTS(t_uint, unsigned)
DEFINE_INT_TESTS(t_long, long)
DEFINE_INT_TESTS(t_ulong, unsigned long)
DEFINE_INT_TESTS(t_llong, long long)
DEFINE_INT_TESTS(t_ullong, unsigned long long)
DEFINE_INT_TESTS(t_i8, int8_t)
DEFINE_INT_TESTS(t_i16, int16_t)
DEFINE_INT_TESTS(t_i32, int32_t)
DEFINE_INT_TESTS(t_i64, int64_t)
DEFINE_INT_TESTS(t_u8, uint8_t)
DEFINE_INT_TESTS(t_u16, uint16_t)
DEFINE_INT_TESTS(t_u32, uint32_t)
DEFINE_INT_TESTS(t_u64, uint64_t)
DEFINE_INT_TESTS(t_aint, MPI_Aint)
DEFINE_INT_TESTS(t_offset, MPI_Offset)
DEFINE_INT_TESTS(t_count, MPI_Count)
DEFINE_ALLREDUCE_TEST(t_float, float, COMBINE)
DEFINE_ALLREDUCE_TEST(t_double, double, COMBINE)
DEFINE_ALLREDUCE_TEST(t_ldouble, long double, COMBINE)
DEFINE_ALLREDUCE_TEST(t_bool, bool, LOGIC)
DEFINE_ALLREDUCE_TEST(t_byte_bits, unsigned char, BITS)

#define OPS(...) ops_mask((int[]){__VA_ARGS__, -1})
static unsigned ops_mask(const int *o)
{
	unsigned m = 0;

	for (; *o >= 0; o++)
		m |= 1u << *o;
	return m;
}

/* Complex: SUM and PROD, with exact small Gaussian integers. */
#define DEFINE_COMPLEX_TEST(fn, T)                                                                 \
	static void fn(MPI_Datatype dt, const char *tname)                                         \
	{                                                                                          \
		enum { N = 3000 };                                                                 \
		T *in = malloc(sizeof(T) * N), *out = malloc(sizeof(T) * N);                       \
		CHECK(in &&out, "out of memory");                                                  \
		for (int prod = 0; prod < 2; prod++) {                                             \
			for (int i = 0; i < N; i++)                                                \
				in[i] = prod ? ((rank + i) % 3 ? 1 : I)                            \
					     : (T)((rank + i) % 4) + (T)(i % 3) * I;               \
			MPI_OK(MPI_Allreduce(in, out, N, dt, prod ? MPI_PROD : MPI_SUM,            \
					     MPI_COMM_WORLD));                                     \
			for (int i = 0; i < N; i++) {                                              \
				T e = prod ? 1 : 0;                                                \
				for (int r = 0; r < size; r++) {                                   \
					T x = prod ? ((r + i) % 3 ? 1 : I)                         \
						   : (T)((r + i) % 4) + (T)(i % 3) * I;            \
					e = prod ? e * x : e + x;                                  \
				}                                                                  \
				CHECK(out[i] == e, "Allreduce %s %s element %d wrong",             \
				      prod ? "PROD" : "SUM", tname, i);                            \
			}                                                                          \
		}                                                                                  \
		free(in);                                                                          \
		free(out);                                                                         \
	}
DEFINE_COMPLEX_TEST(t_cfloat, float complex)
DEFINE_COMPLEX_TEST(t_cdouble, double complex)
DEFINE_COMPLEX_TEST(t_cldouble, long double complex)

/* MAXLOC / MINLOC with ties: the smallest index wins. */
static void test_loc(void)
{
	enum { N = 2000 };
	struct {
		double v;
		int i;
	} *in = malloc(sizeof(*in) * N), *out = malloc(sizeof(*out) * N);
	struct {
		int v;
		int i;
	} a2[N], o2[N];

	CHECK(in && out, "out of memory");
	for (int maxloc = 0; maxloc < 2; maxloc++) {
		for (int i = 0; i < N; i++) {
			in[i].v = (double)((rank * 3 + i) % 4);
			in[i].i = rank;
			a2[i].v = (rank + i) % 3;
			a2[i].i = rank * 10;
		}
		MPI_OK(MPI_Allreduce(in, out, N, MPI_DOUBLE_INT, maxloc ? MPI_MAXLOC : MPI_MINLOC,
				     MPI_COMM_WORLD));
		MPI_OK(MPI_Allreduce(a2, o2, N, MPI_2INT, maxloc ? MPI_MAXLOC : MPI_MINLOC,
				     MPI_COMM_WORLD));
		for (int i = 0; i < N; i++) {
			double best = (double)(i % 4);
			int where = 0, best2 = i % 3, where2 = 0;

			for (int r = 1; r < size; r++) {
				double x = (double)((r * 3 + i) % 4);
				int y = (r + i) % 3;

				if (maxloc ? x > best : x < best) {
					best = x;
					where = r;
				}
				if (maxloc ? y > best2 : y < best2) {
					best2 = y;
					where2 = r * 10;
				}
			}
			CHECK(out[i].v == best && out[i].i == where, "%s DOUBLE_INT %d: (%g,%d)",
			      maxloc ? "MAXLOC" : "MINLOC", i, out[i].v, out[i].i);
			CHECK(o2[i].v == best2 && o2[i].i == where2, "%s 2INT %d: (%d,%d)",
			      maxloc ? "MAXLOC" : "MINLOC", i, o2[i].v, o2[i].i);
		}
	}
	free(in);
	free(out);
}

static void test_allreduce(void)
{
	unsigned arith = OPS(O_SUM, O_PROD, O_MAX, O_MIN, O_LAND, O_LOR, O_LXOR);
	unsigned bits = OPS(O_BAND, O_BOR, O_BXOR);
	unsigned fp = OPS(O_SUM, O_PROD, O_MAX, O_MIN);
	unsigned logical = OPS(O_LAND, O_LOR, O_LXOR);

#define INT_CASE(name, dt) name##_arith(dt, #dt, arith), name##_bits(dt, #dt, bits)
	INT_CASE(t_char, MPI_CHAR); /* an extension, as in Open MPI and MPICH */
	INT_CASE(t_schar, MPI_SIGNED_CHAR);
	INT_CASE(t_uchar, MPI_UNSIGNED_CHAR);
	INT_CASE(t_short, MPI_SHORT);
	INT_CASE(t_ushort, MPI_UNSIGNED_SHORT);
	INT_CASE(t_int, MPI_INT);
	INT_CASE(t_uint, MPI_UNSIGNED);
	INT_CASE(t_long, MPI_LONG);
	INT_CASE(t_ulong, MPI_UNSIGNED_LONG);
	INT_CASE(t_llong, MPI_LONG_LONG);
	INT_CASE(t_ullong, MPI_UNSIGNED_LONG_LONG);
	INT_CASE(t_i8, MPI_INT8_T);
	INT_CASE(t_i16, MPI_INT16_T);
	INT_CASE(t_i32, MPI_INT32_T);
	INT_CASE(t_i64, MPI_INT64_T);
	INT_CASE(t_u8, MPI_UINT8_T);
	INT_CASE(t_u16, MPI_UINT16_T);
	INT_CASE(t_u32, MPI_UINT32_T);
	INT_CASE(t_u64, MPI_UINT64_T);
	/* multi-language types: arithmetic, bitwise and (an extension, as in
	 * Open MPI and MPICH) logical */
	INT_CASE(t_aint, MPI_AINT);
	INT_CASE(t_offset, MPI_OFFSET);
	INT_CASE(t_count, MPI_COUNT);
	t_float(MPI_FLOAT, "MPI_FLOAT", fp);
	t_double(MPI_DOUBLE, "MPI_DOUBLE", fp);
	t_ldouble(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", fp);
	t_bool(MPI_C_BOOL, "MPI_C_BOOL", logical);
	t_byte_bits(MPI_BYTE, "MPI_BYTE", bits);
	t_cfloat(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX");
	t_cdouble(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX");
	t_cldouble(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX");
	test_loc();

	/* A large one: 8 MiB of doubles through the ring. */
	size_t n = 1 << 20;
	double *d = malloc(sizeof(double) * n);

	CHECK(d, "out of memory");
	for (size_t i = 0; i < n; i++)
		d[i] = (double)(rank + (int)(i % 11));
	MPI_OK(MPI_Allreduce(MPI_IN_PLACE, d, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
	for (size_t i = 0; i < n; i++)
		CHECK(d[i] == (double)(size * (size - 1) / 2 + size * (int)(i % 11)),
		      "8 MiB Allreduce element %zu = %g", i, d[i]);
	free(d);
	/* count 0 is a no-op */
	MPI_OK(MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	test_barrier();
	test_bcast();
	test_allreduce();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("collectives: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
