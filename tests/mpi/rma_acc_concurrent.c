/* ibx-test: np=1,2,3,4 timeout=90 */
/*
 * rma_acc_concurrent — element-wise atomicity of the accumulate family,
 * every rank updating the same elements of every rank (itself included) at
 * once, in lock_all epochs, on allocate, create and dynamic windows (CPU
 * atomics, the engine's atomics, the accumulate lock):
 *
 *   - MPI_Accumulate SUM on int, long long, double (integer values: exact),
 *     BXOR on unsigned and uint64_t: exact totals, with Fetch_and_op SUM
 *     on one int and one long long inside the arrays at the same time;
 *   - Accumulate SUM mixed with Fetch_and_op SUM on one long long and one
 *     int: exact total, and the fetched values are all different;
 *   - a ticket counter by Fetch_and_op SUM: the tickets form a permutation;
 *   - a swap chain by Fetch_and_op REPLACE (long long and int): the old
 *     values fetched plus the final one are exactly 0 and the values
 *     written; Get_accumulate / Fetch_and_op MPI_NO_OP read the final one;
 *     Get_accumulate MPI_REPLACE of 8 doubles returns the old ones;
 *   - types without an 8-byte atomic (long double, double complex, the
 *     MAXLOC pairs MPI_2INT and MPI_DOUBLE_INT) and elements that straddle
 *     an 8-byte word (an int at byte 6, a short at byte 15): exact;
 *   - derived datatypes (origin vector, target indexed) and a
 *     Get_accumulate SUM whose result datatype is a vector.
 */
#include "mpitest.h"

#include <complex.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* LITER: the accumulate-lock types, whose races need more rounds to show */
enum { NE = 8, ITER = 20, LITER = 100, NV = 32 };

typedef struct {
	int v, i;
} int2_t;
typedef struct {
	double v;
	int i;
} dint_t;

/* One rank's window memory (displacement unit 1: offsets are bytes). */
typedef struct wmem {
	int i[NE];
	long long ll[NE];
	double d[NE];
	unsigned u[NE];
	uint64_t u64[NE];
	long long mix_ll;
	int mix_i, pad0;
	long long ticket;
	long long swap_ll;
	int swap_i, pad1;
	long double ld[4];
	double _Complex z[4];
	int2_t p2[4];
	dint_t pdi[4];
	_Alignas(8) unsigned char unal[24];
	int vec[NV];
} wmem_t;

#define OFF(f) ((MPI_Aint)offsetof(wmem_t, f))

static int rank, size;

typedef struct twin {
	const char *name;
	MPI_Win win;
	wmem_t *mem;
	MPI_Aint *base; /* dynamic windows: every rank's address of its memory */
} twin_t;

static MPI_Aint at(const twin_t *w, int t, MPI_Aint off)
{
	return w->base ? w->base[t] + off : off;
}

static uint32_t xpat32(int r, int j, int k)
{
	return (uint32_t)(0x9e3779b9u * (unsigned)(r * 131 + j * 7 + k + 1));
}

static uint64_t xpat64(int r, int j, int k)
{
	return 0x9e3779b97f4a7c15ull * (uint64_t)(r * 131 + j * 7 + k + 1) ^ (uint64_t)j << 40;
}

/* ---- sums and xors ------------------------------------------------------------------ */

/* The elements of i[] and ll[] that Fetch_and_op also adds 1 to. */
enum { MIX_I = 3, MIX_L = 5 };

static void acc_arrays(const twin_t *w)
{
	int vi[NE];
	long long vl[NE];
	double vd[NE];
	unsigned vu[NE];
	uint64_t v64[NE];
	int onei = 1, goti;
	long long onel = 1, gotl;

	for (int j = 0; j < ITER; j++) {
		for (int k = 0; k < NE; k++) {
			vi[k] = rank + k + 1;
			vl[k] = (long long)(rank + 1) << 33 | (long long)(k + 1);
			vd[k] = (double)(rank * 10 + k + 1);
			vu[k] = xpat32(rank, j, k);
			v64[k] = xpat64(rank, j, k);
		}
		for (int s = 0; s < size; s++) {
			int t = (rank + s) % size;

			MPI_OK(MPI_Accumulate(vi, NE, MPI_INT, t, at(w, t, OFF(i)), NE, MPI_INT,
					      MPI_SUM, w->win));
			MPI_OK(MPI_Accumulate(vl, NE, MPI_LONG_LONG, t, at(w, t, OFF(ll)), NE,
					      MPI_LONG_LONG, MPI_SUM, w->win));
			MPI_OK(MPI_Accumulate(vd, NE, MPI_DOUBLE, t, at(w, t, OFF(d)), NE,
					      MPI_DOUBLE, MPI_SUM, w->win));
			MPI_OK(MPI_Accumulate(vu, NE, MPI_UNSIGNED, t, at(w, t, OFF(u)), NE,
					      MPI_UNSIGNED, MPI_BXOR, w->win));
			MPI_OK(MPI_Accumulate(v64, NE, MPI_UINT64_T, t, at(w, t, OFF(u64)), NE,
					      MPI_UINT64_T, MPI_BXOR, w->win));
			/* single elements inside the arrays (no accumulate lock)
			 * while other ranks' array operations hold it */
			MPI_OK(MPI_Fetch_and_op(&onei, &goti, MPI_INT, t,
						at(w, t, OFF(i) + MIX_I * (MPI_Aint)sizeof(int)),
						MPI_SUM, w->win));
			MPI_OK(MPI_Fetch_and_op(
			    &onel, &gotl, MPI_LONG_LONG, t,
			    at(w, t, OFF(ll) + MIX_L * (MPI_Aint)sizeof(long long)), MPI_SUM,
			    w->win));
		}
	}
}

/* What the concurrent double SUMs leave in d[k]. */
static double dsum(int k)
{
	double sd = 0;

	for (int r = 0; r < size; r++)
		sd += ITER * (double)(r * 10 + k + 1);
	return sd;
}

static void check_arrays(const twin_t *w)
{
	const wmem_t *m = w->mem;

	for (int k = 0; k < NE; k++) {
		long long si = 0, sl = 0;
		double sd = dsum(k);
		unsigned xu = 0;
		uint64_t x64 = 0;

		for (int r = 0; r < size; r++) {
			si += ITER * (r + k + 1) + (k == MIX_I ? ITER : 0);
			sl += ITER * ((long long)(r + 1) << 33 | (long long)(k + 1)) +
			      (k == MIX_L ? ITER : 0);
			for (int j = 0; j < ITER; j++) {
				xu ^= xpat32(r, j, k);
				x64 ^= xpat64(r, j, k);
			}
		}
		CHECK(m->i[k] == si, "%s: int SUM [%d] = %d, expected %lld", w->name, k, m->i[k],
		      si);
		CHECK(m->ll[k] == sl, "%s: long long SUM [%d] = %lld, expected %lld", w->name, k,
		      m->ll[k], sl);
		CHECK(m->d[k] == sd, "%s: double SUM [%d] = %.1f, expected %.1f", w->name, k,
		      m->d[k], sd);
		CHECK(m->u[k] == xu, "%s: unsigned BXOR [%d] = %#x, expected %#x", w->name, k,
		      m->u[k], xu);
		CHECK(m->u64[k] == x64, "%s: uint64 BXOR [%d] = %#llx, expected %#llx", w->name, k,
		      (unsigned long long)m->u64[k], (unsigned long long)x64);
	}
}

/* ---- Accumulate mixed with Fetch_and_op; tickets; swap chains ----------------------------- */

typedef struct fetched {
	long long mix_ll[ITER], tk[ITER], swap_ll[ITER];
	int mix_i[ITER], swap_i[ITER];
} fetched_t;

static long long swap_value(int r, int j)
{
	return (long long)r * ITER + j + 1;
}

static void fetch_ops(const twin_t *w, fetched_t *f /* [size] */)
{
	long long one = 1;
	int onei = 1;

	for (int j = 0; j < ITER; j++) {
		for (int s = 0; s < size; s++) {
			int t = (rank + s) % size;
			long long sv = swap_value(rank, j);
			int svi = (int)sv;

			f[t].mix_ll[j] = f[t].mix_i[j] = -1;
			if (j % 2 == 0) {
				MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, t,
						      at(w, t, OFF(mix_ll)), 1, MPI_LONG_LONG,
						      MPI_SUM, w->win));
				MPI_OK(MPI_Accumulate(&onei, 1, MPI_INT, t, at(w, t, OFF(mix_i)), 1,
						      MPI_INT, MPI_SUM, w->win));
			} else {
				MPI_OK(MPI_Fetch_and_op(&one, &f[t].mix_ll[j], MPI_LONG_LONG, t,
							at(w, t, OFF(mix_ll)), MPI_SUM, w->win));
				MPI_OK(MPI_Fetch_and_op(&onei, &f[t].mix_i[j], MPI_INT, t,
							at(w, t, OFF(mix_i)), MPI_SUM, w->win));
			}
			MPI_OK(MPI_Fetch_and_op(&one, &f[t].tk[j], MPI_LONG_LONG, t,
						at(w, t, OFF(ticket)), MPI_SUM, w->win));
			MPI_OK(MPI_Fetch_and_op(&sv, &f[t].swap_ll[j], MPI_LONG_LONG, t,
						at(w, t, OFF(swap_ll)), MPI_REPLACE, w->win));
			MPI_OK(MPI_Fetch_and_op(&svi, &f[t].swap_i[j], MPI_INT, t,
						at(w, t, OFF(swap_i)), MPI_REPLACE, w->win));
		}
	}
	/* the fetches land in f only when the epoch ends; read after */
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* The n values v[] sorted must be exactly lo, lo+1, ..., lo+n-1. */
static void check_permutation(long long *v, int n, long long lo, const char *what)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_ll);
	for (int i = 0; i < n; i++)
		CHECK(v[i] == lo + i, "%s: sorted value %d is %lld, expected %lld", what, i, v[i],
		      lo + i);
}

static void check_fetches(const twin_t *w, const fetched_t *all /* [size][size] */)
{
	int n = size * ITER, half = size * (ITER / 2);
	long long *v = malloc(sizeof(long long) * (size_t)(n + 1));
	char what[160];

	CHECK(v, "out of memory");
	CHECK(w->mem->mix_ll == n, "%s: mixed long long total %lld, expected %d", w->name,
	      w->mem->mix_ll, n);
	CHECK(w->mem->mix_i == n, "%s: mixed int total %d, expected %d", w->name, w->mem->mix_i, n);
	CHECK(w->mem->ticket == n, "%s: ticket counter %lld, expected %d", w->name, w->mem->ticket,
	      n);
	/* what every origin fetched from us, rank `rank` */
	for (int pass = 0; pass < 2; pass++) {
		int k = 0;

		for (int r = 0; r < size; r++)
			for (int j = 1; j < ITER; j += 2)
				v[k++] = pass ? all[r * size + rank].mix_i[j]
					      : all[r * size + rank].mix_ll[j];
		/* distinct values below the total */
		qsort(v, (size_t)k, sizeof(*v), cmp_ll);
		CHECK(k == half, "count");
		for (int i = 0; i < k; i++) {
			CHECK(v[i] >= 0 && v[i] < n, "%s: fetched %lld outside [0, %d)", w->name,
			      v[i], n);
			CHECK(i == 0 || v[i] != v[i - 1], "%s: value %lld fetched twice (%s)",
			      w->name, v[i], pass ? "int" : "long long");
		}
	}
	for (int r = 0, k = 0; r < size; r++)
		for (int j = 0; j < ITER; j++) {
			v[k++] = all[r * size + rank].tk[j];
			CHECK(j == 0 || all[r * size + rank].tk[j] > all[r * size + rank].tk[j - 1],
			      "%s: rank %d's tickets not increasing", w->name, r);
		}
	snprintf(what, sizeof(what), "%s: tickets", w->name);
	check_permutation(v, n, 0, what);
	/* swap chains: fetched old values + the final value = 0 + all written,
	 * written values being 1 .. n */
	for (int pass = 0; pass < 2; pass++) {
		int k = 0;

		for (int r = 0; r < size; r++)
			for (int j = 0; j < ITER; j++)
				v[k++] = pass ? all[r * size + rank].swap_i[j]
					      : all[r * size + rank].swap_ll[j];
		v[k++] = pass ? w->mem->swap_i : w->mem->swap_ll;
		snprintf(what, sizeof(what), "%s: %s swap chain", w->name,
			 pass ? "int" : "long long");
		check_permutation(v, n + 1, 0, what);
	}
	free(v);
}

/* MPI_NO_OP reads what every target holds now (no one writes); then a
 * Get_accumulate MPI_REPLACE of NE doubles at the right neighbour returns
 * its sums and leaves ours. */
static void read_finals(const twin_t *w)
{
	long long fin[2], *all = malloc(sizeof(long long) * 2 * (size_t)size);
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	double nv[NE], old[NE];

	CHECK(all, "out of memory");
	fin[0] = w->mem->swap_ll;
	fin[1] = w->mem->swap_i;
	MPI_OK(MPI_Allgather(fin, 2, MPI_LONG_LONG, all, 2, MPI_LONG_LONG, MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock_all(0, w->win));
	for (int t = 0; t < size; t++) {
		long long got = -5, dummy = 0;
		int goti = -5;

		MPI_OK(MPI_Get_accumulate(&dummy, 1, MPI_LONG_LONG, &got, 1, MPI_LONG_LONG, t,
					  at(w, t, OFF(swap_ll)), 1, MPI_LONG_LONG, MPI_NO_OP,
					  w->win));
		MPI_OK(MPI_Fetch_and_op(NULL, &goti, MPI_INT, t, at(w, t, OFF(swap_i)), MPI_NO_OP,
					w->win));
		MPI_OK(MPI_Win_flush(t, w->win));
		CHECK(got == all[2 * t], "%s: NO_OP read %lld at rank %d, it holds %lld", w->name,
		      got, t, all[2 * t]);
		CHECK(goti == all[2 * t + 1], "%s: NO_OP read %d at rank %d, it holds %lld",
		      w->name, goti, t, all[2 * t + 1]);
	}
	for (int k = 0; k < NE; k++) {
		nv[k] = -(double)(rank * 100 + k);
		old[k] = 0.5;
	}
	MPI_OK(MPI_Get_accumulate(nv, NE, MPI_DOUBLE, old, NE, MPI_DOUBLE, right,
				  at(w, right, OFF(d)), NE, MPI_DOUBLE, MPI_REPLACE, w->win));
	MPI_OK(MPI_Win_unlock_all(w->win));
	for (int k = 0; k < NE; k++)
		CHECK(old[k] == dsum(k),
		      "%s: Get_accumulate REPLACE fetched d[%d] = %g, expected %g", w->name, k,
		      old[k], dsum(k));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_sync(w->win));
	for (int k = 0; k < NE; k++)
		CHECK(w->mem->d[k] == -(double)(left * 100 + k),
		      "%s: after Get_accumulate REPLACE d[%d] = %g, expected %d", w->name, k,
		      w->mem->d[k], -(left * 100 + k));
	free(all);
}

/* ---- no 8-byte atomic: the accumulate lock ------------------------------------------------- */

static void acc_locked_types(const twin_t *w)
{
	long double ld[4];
	double _Complex z[4];
	int2_t p2[4];
	dint_t pdi[4];
	int ui = rank + 1;
	short us = (short)(rank + 1);

	for (int k = 0; k < 4; k++) {
		ld[k] = (long double)(rank + 1 + k) * 1e20L;
		z[k] = (double)(rank + 1) + (double)(k + 1) * I;
		p2[k] = (int2_t){(rank * 7 + k) % 3, rank};
		pdi[k] = (dint_t){(double)((rank * 5 + k) % 4), rank};
	}
	for (int j = 0; j < LITER; j++)
		for (int s = 0; s < size; s++) {
			int t = (rank + s) % size;

			MPI_OK(MPI_Accumulate(ld, 4, MPI_LONG_DOUBLE, t, at(w, t, OFF(ld)), 4,
					      MPI_LONG_DOUBLE, MPI_SUM, w->win));
			MPI_OK(MPI_Accumulate(z, 4, MPI_C_DOUBLE_COMPLEX, t, at(w, t, OFF(z)), 4,
					      MPI_C_DOUBLE_COMPLEX, MPI_SUM, w->win));
			MPI_OK(MPI_Accumulate(p2, 4, MPI_2INT, t, at(w, t, OFF(p2)), 4, MPI_2INT,
					      MPI_MAXLOC, w->win));
			MPI_OK(MPI_Accumulate(pdi, 4, MPI_DOUBLE_INT, t, at(w, t, OFF(pdi)), 4,
					      MPI_DOUBLE_INT, MPI_MAXLOC, w->win));
			/* straddling an 8-byte word */
			MPI_OK(MPI_Accumulate(&ui, 1, MPI_INT, t, at(w, t, OFF(unal) + 6), 1,
					      MPI_INT, MPI_SUM, w->win));
			MPI_OK(MPI_Accumulate(&us, 1, MPI_SHORT, t, at(w, t, OFF(unal) + 15), 1,
					      MPI_SHORT, MPI_SUM, w->win));
		}
}

static void check_locked_types(const twin_t *w)
{
	const wmem_t *m = w->mem;
	int sumi = 0, gi;
	short gs;

	for (int k = 0; k < 4; k++) {
		long double eld = 0;
		double ere = 0, eim = 0;
		int2_t e2 = {INT_MIN, 0};
		dint_t edi = {-1.0, 0};

		for (int r = 0; r < size; r++) {
			int v2 = (r * 7 + k) % 3;
			double vd = (double)((r * 5 + k) % 4);

			eld += LITER * (long double)(r + 1 + k) * 1e20L;
			ere += LITER * (double)(r + 1);
			eim += LITER * (double)(k + 1);
			if (v2 > e2.v)
				e2 = (int2_t){v2, r}; /* ties keep the lower rank */
			if (vd > edi.v)
				edi = (dint_t){vd, r};
		}
		CHECK(m->ld[k] == eld, "%s: long double SUM [%d] = %Lg, expected %Lg", w->name, k,
		      m->ld[k], eld);
		CHECK(creal(m->z[k]) == ere && cimag(m->z[k]) == eim,
		      "%s: complex SUM [%d] = %g%+gi, expected %g%+gi", w->name, k, creal(m->z[k]),
		      cimag(m->z[k]), ere, eim);
		CHECK(m->p2[k].v == e2.v && m->p2[k].i == e2.i,
		      "%s: 2INT MAXLOC [%d] = (%d, %d), expected (%d, %d)", w->name, k, m->p2[k].v,
		      m->p2[k].i, e2.v, e2.i);
		CHECK(m->pdi[k].v == edi.v && m->pdi[k].i == edi.i,
		      "%s: DOUBLE_INT MAXLOC [%d] = (%g, %d), expected (%g, %d)", w->name, k,
		      m->pdi[k].v, m->pdi[k].i, edi.v, edi.i);
	}
	for (int r = 0; r < size; r++)
		sumi += LITER * (r + 1);
	memcpy(&gi, m->unal + 6, sizeof(gi));
	memcpy(&gs, m->unal + 15, sizeof(gs));
	CHECK(gi == sumi, "%s: straddling int SUM = %d, expected %d", w->name, gi, sumi);
	CHECK(gs == (short)sumi, "%s: straddling short SUM = %d, expected %d", w->name, gs, sumi);
	for (int b = 0; b < (int)sizeof(m->unal); b++)
		if ((b < 6 || b >= 10) && (b < 15 || b >= 17))
			CHECK(m->unal[b] == 0,
			      "%s: byte %d next to the straddling elements changed", w->name, b);
}

/* ---- derived datatypes ---------------------------------------------------------------------- */

/* origin vector(4, 2, 3) of ints -> target indexed {3 at 0, 5 at 10} */
static const int t_idx[8] = {0, 1, 2, 10, 11, 12, 13, 14};

static int dval(int r, int i)
{
	return 100 * (r + 1) + i;
}

static void acc_derived(const twin_t *w, MPI_Datatype ovec, MPI_Datatype tind)
{
	int ob[12];

	for (int i = 0; i < 12; i++)
		ob[i] = dval(rank, i);
	for (int j = 0; j < ITER; j++)
		for (int s = 0; s < size; s++) {
			int t = (rank + s) % size;

			MPI_OK(MPI_Accumulate(ob, 1, ovec, t, at(w, t, OFF(vec)), 1, tind, MPI_SUM,
					      w->win));
		}
}

/* vector(4, 2, 3) covers origin ints 0,1, 3,4, 6,7, 9,10 */
static int o_of(int n)
{
	return 3 * (n / 2) + n % 2;
}

static void check_derived(const twin_t *w, MPI_Datatype ovec, MPI_Datatype tind)
{
	int res[12], zero[12] = {0};

	for (int i = 0; i < NV; i++) {
		long long e = 0;

		for (int n = 0; n < 8; n++)
			if (t_idx[n] == i)
				for (int r = 0; r < size; r++)
					e += ITER * dval(r, o_of(n));
		CHECK(w->mem->vec[i] == e, "%s: derived SUM vec[%d] = %d, expected %lld", w->name,
		      i, w->mem->vec[i], e);
	}
	/* Get_accumulate SUM of zeros: the old values, into a vector result */
	MPI_OK(MPI_Win_lock_all(0, w->win));
	for (int t = 0; t < size; t++) {
		for (int i = 0; i < 12; i++)
			res[i] = -7;
		MPI_OK(MPI_Get_accumulate(zero, 8, MPI_INT, res, 1, ovec, t, at(w, t, OFF(vec)), 1,
					  tind, MPI_SUM, w->win));
		MPI_OK(MPI_Win_flush(t, w->win));
		for (int n = 0; n < 8; n++) {
			long long e = 0;

			for (int r = 0; r < size; r++)
				e += ITER * dval(r, o_of(n));
			CHECK(res[o_of(n)] == e,
			      "%s: Get_accumulate into a vector: [%d] = %d, "
			      "expected %lld",
			      w->name, o_of(n), res[o_of(n)], e);
		}
		CHECK(res[2] == -7 && res[5] == -7 && res[8] == -7 && res[11] == -7,
		      "%s: Get_accumulate wrote into the gaps of its result vector", w->name);
	}
	MPI_OK(MPI_Win_unlock_all(w->win));
}

/* ---- driver -----------------------------------------------------------------------------------
 */

static void run_window(twin_t *w)
{
	fetched_t *f = calloc((size_t)size, sizeof(*f));
	fetched_t *all = calloc((size_t)size * (size_t)size, sizeof(*all));
	MPI_Datatype ovec, tind;
	int bl[2] = {3, 5}, di[2] = {0, 10};

	CHECK(f && all, "out of memory");
	MPI_OK(MPI_Type_vector(4, 2, 3, MPI_INT, &ovec));
	MPI_OK(MPI_Type_indexed(2, bl, di, MPI_INT, &tind));
	MPI_OK(MPI_Type_commit(&ovec));
	MPI_OK(MPI_Type_commit(&tind));
	memset(w->mem, 0, sizeof(*w->mem));
	for (int k = 0; k < 4; k++) {
		w->mem->p2[k] = (int2_t){INT_MIN, 0};
		w->mem->pdi[k] = (dint_t){-1.0, 0};
	}
	MPI_OK(MPI_Win_sync(w->win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	MPI_OK(MPI_Win_lock_all(0, w->win));
	acc_arrays(w);
	fetch_ops(w, f);
	acc_locked_types(w);
	acc_derived(w, ovec, tind);
	MPI_OK(MPI_Win_unlock_all(w->win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_sync(w->win));

	check_arrays(w);
	MPI_OK(MPI_Allgather(f, (int)(size * sizeof(*f)), MPI_BYTE, all, (int)(size * sizeof(*f)),
			     MPI_BYTE, MPI_COMM_WORLD));
	check_fetches(w, all);
	check_locked_types(w);
	check_derived(w, ovec, tind);
	read_finals(w);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Type_free(&ovec));
	MPI_OK(MPI_Type_free(&tind));
	free(f);
	free(all);
}

int main(int argc, char **argv)
{
	twin_t w;
	MPI_Aint mine;
	void *p;

	mt_init(&argc, &argv, &rank, &size);

	w = (twin_t){.name = "MPI_Win_allocate"};
	MPI_OK(MPI_Win_allocate(sizeof(wmem_t), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w.mem, &w.win));
	run_window(&w);
	MPI_OK(MPI_Win_free(&w.win));

	w = (twin_t){.name = "MPI_Win_create"};
	CHECK(posix_memalign(&p, 64, sizeof(wmem_t)) == 0, "out of memory");
	w.mem = p;
	MPI_OK(MPI_Win_create(w.mem, sizeof(wmem_t), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w.win));
	run_window(&w);
	MPI_OK(MPI_Win_free(&w.win));

	w = (twin_t){.name = "MPI_Win_create_dynamic", .mem = p};
	w.base = malloc(sizeof(MPI_Aint) * (size_t)size);
	CHECK(w.base, "out of memory");
	MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w.win));
	MPI_OK(MPI_Win_attach(w.win, w.mem, sizeof(wmem_t)));
	MPI_OK(MPI_Get_address(w.mem, &mine));
	MPI_OK(MPI_Allgather(&mine, 1, MPI_AINT, w.base, 1, MPI_AINT, MPI_COMM_WORLD));
	run_window(&w);
	MPI_OK(MPI_Win_detach(w.win, w.mem));
	MPI_OK(MPI_Win_free(&w.win));
	free(w.base);
	free(p);

	if (rank == 0)
		printf("rma_acc_concurrent: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
