/*
 * topo_cart.c — Cartesian process topologies (MPI-3.1 §7.5.1-7.5.5,
 * §7.5.7): MPI_Dims_create, MPI_Cart_create, MPI_Cart_coords,
 * MPI_Cart_rank, MPI_Cart_shift, MPI_Cart_sub, MPI_Cart_get,
 * MPI_Cartdim_get and MPI_Cart_map.
 *
 * Ranks are laid out row-major (the last dimension varies fastest):
 *
 *   dims {2, 3}:   coords (0,0) (0,1) (0,2) (1,0) (1,1) (1,2)
 *                  rank     0     1     2     3     4     5
 *
 * A grid smaller than the communicator takes its first ranks (reorder is
 * ignored); the others get MPI_COMM_NULL. Each process keeps its
 * coordinates and its 2 * ndims neighbours, the -1 then the +1 shift of
 * every dimension (MPI_PROC_NULL past an open edge): the neighbourhood of
 * the neighbour collectives. A zero-dimensional grid is one process.
 *
 * Error classes, where MPI leaves them open, as MPICH and Open MPI mostly
 * agree: a dimension size or a shift direction that cannot be, or
 * MPI_Dims_create asked the impossible, MPI_ERR_DIMS; a grid larger than
 * the communicator, negative ndims, output arrays too small or NULL,
 * coordinates outside a non-periodic dimension, MPI_ERR_ARG; a rank
 * outside the communicator, MPI_ERR_RANK; a communicator without a
 * Cartesian topology, MPI_ERR_TOPOLOGY.
 */
#include "topo_int.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- the grid ------------------------------------------------------------------------ */

static void cart_coords_of(const mpil_topo_t *t, int rank, int *coords)
{
	for (int d = t->ndims - 1; d >= 0; d--) {
		coords[d] = rank % t->dims[d];
		rank /= t->dims[d];
	}
}

/* The rank at @coords, wrapped in periodic dimensions; -1 - d when
 * coordinate d is outside a non-periodic dimension. */
static int cart_rank_of(const mpil_topo_t *t, const int *coords)
{
	int rank = 0;

	for (int d = 0; d < t->ndims; d++) {
		int n = t->dims[d], c = coords[d];

		if (t->periods[d])
			c = (c % n + n) % n;
		else if (c < 0 || c >= n)
			return -1 - d;
		rank = rank * n + c;
	}
	return rank;
}

/* This process's neighbour @disp steps along dimension @d (negative:
 * backwards), or MPI_PROC_NULL. */
static int cart_step(const mpil_topo_t *t, int d, long long disp)
{
	long long n = t->dims[d], to = t->coords[d] + disp, stride = 1;

	if (t->periods[d])
		to = (to % n + n) % n;
	else if (to < 0 || to >= n)
		return MPI_PROC_NULL;
	for (int i = d + 1; i < t->ndims; i++)
		stride *= t->dims[i];
	return cart_rank_of(t, t->coords) + (int)((to - t->coords[d]) * stride);
}

/* A grid of @ndims dimensions, for the caller to fill in dims and
 * periods (0 or 1) and then place with cart_place(). */
static mpil_topo_t *cart_alloc(int ndims)
{
	mpil_topo_t *t = mpil_topo_new(MPI_CART, 5 * (size_t)ndims);

	if (!t)
		return NULL;
	t->ndims = ndims;
	t->dims = mpil_topo_take(t, (size_t)ndims);
	t->periods = mpil_topo_take(t, (size_t)ndims);
	t->coords = mpil_topo_take(t, (size_t)ndims);
	t->in = t->out = mpil_topo_take(t, 2 * (size_t)ndims);
	t->indeg = t->outdeg = 2 * ndims;
	return t;
}

/* This process (@rank of the grid): its coordinates and neighbourhood. */
static void cart_place(mpil_topo_t *t, int rank)
{
	cart_coords_of(t, rank, t->coords);
	for (int d = 0; d < t->ndims; d++) {
		t->in[2 * d] = cart_step(t, d, -1);
		t->in[2 * d + 1] = cart_step(t, d, 1);
	}
}

/* A grid description: *n_p the processes it holds (at most @comm's). */
static int check_grid(MPI_Comm comm, int ndims, const int *dims, const int *periods, int *n_p,
		      const char *fname)
{
	long long n = 1;

	if (ndims < 0)
		return mpil_err(comm, MPI_ERR_ARG, fname, "ndims is negative (%d)", ndims);
	if (ndims > 0 && (!dims || !periods))
		return mpil_err(comm, MPI_ERR_ARG, fname, "%s is NULL", dims ? "periods" : "dims");
	for (int d = 0; d < ndims; d++) {
		if (dims[d] <= 0)
			return mpil_err(comm, MPI_ERR_DIMS, fname,
					"dims[%d] is %d (dimensions hold at least one process)", d,
					dims[d]);
		n *= dims[d];
		if (n > comm->size)
			return mpil_err(comm, MPI_ERR_ARG, fname,
					"the grid holds more processes than the communicator's "
					"%d",
					comm->size);
	}
	*n_p = (int)n;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Cart_create)
int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
		     int reorder, MPI_Comm *comm_cart)
{
	static const char F[] = "MPI_Cart_create";
	MPIL_CS_GUARD();
	mpil_topo_t *t = NULL;
	int n;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm_old, F));
	MPIL_CHECK(mpil_topo_check_out(comm_old, comm_cart, "comm_cart", F));
	MPIL_CHECK(check_grid(comm_old, ndims, dims, periods, &n, F));
	if (comm_old->rank < n) {
		t = cart_alloc(ndims);
		if (!t)
			return mpil_err(comm_old, MPI_ERR_NO_MEM, F, "no memory for the grid");
		for (int d = 0; d < ndims; d++) {
			t->dims[d] = dims[d];
			t->periods[d] = periods[d] != 0;
		}
		cart_place(t, comm_old->rank);
	}
	return mpil_topo_comm_create(comm_old, t ? 0 : MPI_UNDEFINED, t, comm_cart, F);
}

MPIL_PMPI_ALIAS(Cart_map)
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
	static const char F[] = "MPI_Cart_map";
	MPIL_CS_GUARD();
	int n;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(mpil_topo_check_out(comm, newrank, "newrank", F));
	MPIL_CHECK(check_grid(comm, ndims, dims, periods, &n, F));
	/* the identity mapping, as MPI_Cart_create uses */
	*newrank = comm->rank < n ? comm->rank : MPI_UNDEFINED;
	return MPI_SUCCESS;
}

/* ---- MPI_Dims_create --------------------------------------------------------------------
 *
 * The free dimensions (zeros in dims) share what the given ones leave of
 * nnodes as evenly as possible, in non-increasing order: of all the ways
 * to write it as a product of that many factors, the one whose factors
 * exceed the smallest by the least, largest factor first (dims_better), as
 * MPICH does — 72 over 2 is 9 x 8, where giving each prime factor, largest
 * first, to the smallest dimension (Open MPI 4) gives 12 x 6. The search
 * runs over divisors, largest factor first, and stops a branch once its
 * largest factor alone is further from what the rest can reach than the
 * best so far; past a budget of steps (never met in practice) the greedy
 * result stands.
 */

/* The prime factors of @n (> 0), ascending, in @f (room for 31); how
 * many. */
static int prime_factors(int n, int *f)
{
	int k = 0;

	for (int p = 2; (long long)p * p <= n; p++)
		while (n % p == 0) {
			f[k++] = p;
			n /= p;
		}
	if (n > 1)
		f[k++] = n;
	return k;
}

typedef struct dims_best {
	int *cur, *best;
	long long diff; /* of best; LLONG_MAX: none yet */
	long steps;	/* budget left */
	int *divs;	/* the divisors of the whole product, ascending */
	int ndivs;
} dims_best_t;

/* Whether r^k > n (r >= 1, k >= 1). */
static bool ipow_over(long long r, int k, long long n)
{
	long long p = 1;

	for (int i = 0; i < k; i++) {
		if (p > n / r)
			return true;
		p *= r;
	}
	return p > n;
}

/* The largest integer r with r^k <= n (n >= 1, k >= 1). */
static long long kth_root(long long n, int k)
{
	long long lo = 1, hi = n;

	while (lo < hi) {
		long long mid = lo + (hi - lo + 1) / 2;

		if (ipow_over(mid, k, n))
			hi = mid - 1;
		else
			lo = mid;
	}
	return lo;
}

/* Whether the @k factors in b->cur beat b->best: each factor's excess
 * over the smallest, compared from the largest factor down (5040 over 3:
 * 21 16 15 before 20 18 14; 17712 over 4: 41 9 8 6 before 41 12 6 6). */
static bool dims_better(const dims_best_t *b, int k)
{
	if (b->diff == LLONG_MAX)
		return true;
	for (int i = 0; i < k - 1; i++) {
		int x = b->cur[i] - b->cur[k - 1], y = b->best[i] - b->best[k - 1];

		if (x != y)
			return x < y;
	}
	return false;
}

/* The index of the first divisor >= @lo (ndivs if none). */
static int first_div_at_least(const dims_best_t *b, long long lo)
{
	int l = 0, h = b->ndivs;

	while (l < h) {
		int m = l + (h - l) / 2;

		if (b->divs[m] < lo)
			l = m + 1;
		else
			h = m;
	}
	return l;
}

static int cmp_asc(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Every divisor of @n (> 0), ascending, in a new array (*n_p of them);
 * NULL: no memory. From the prime factors: an int has at most 1536. */
static int *divisors(int n, int *n_p)
{
	int f[32], nf = prime_factors(n, f), cnt = 1, *d = malloc(2048 * sizeof(int));

	if (!d)
		return NULL;
	d[0] = 1;
	for (int i = 0; i < nf;) {
		int p = f[i], e = 0, base = cnt;
		long long pk = 1;

		while (i < nf && f[i] == p) {
			e++;
			i++;
		}
		for (int j = 1; j <= e; j++) {
			pk *= p;
			for (int m = 0; m < base; m++)
				d[cnt++] = (int)(d[m] * pk);
		}
	}
	qsort(d, (size_t)cnt, sizeof(int), cmp_asc);
	*n_p = cnt;
	return d;
}

/* Factors @depth.. of a product @n of @k more factors, each <= @cap. */
static void dims_search(dims_best_t *b, long long n, int k, long long cap, int depth)
{
	long long lo;

	if (--b->steps < 0)
		return;
	if (k == 1) {
		if (n <= cap) {
			long long top = depth ? b->cur[0] : n;

			b->cur[depth] = (int)n;
			if (dims_better(b, depth + 1)) {
				b->diff = top - n;
				memcpy(b->best, b->cur, (size_t)(depth + 1) * sizeof(int));
			}
		}
		return;
	}
	/* the largest of the k factors is at least the k-th root, rounded up */
	lo = kth_root(n, k);
	if (!ipow_over(lo, k, n - 1)) /* lo^k < n: not exact */
		lo++;
	for (int i = first_div_at_least(b, lo); i < b->ndivs; i++) {
		long long d = b->divs[i], top, rest_max;

		if (d > cap || d > n || --b->steps < 0)
			break;
		if (n % d)
			continue;
		top = depth ? b->cur[0] : d;
		/* the smallest of the rest is at most their (k-1)-th root */
		rest_max = kth_root(n / d, k - 1);
		if (top - rest_max > b->diff)
			break; /* and it only grows with d */
		b->cur[depth] = (int)d;
		dims_search(b, n / d, k - 1, d, depth + 1);
	}
}

static int cmp_desc(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x < y) - (x > y);
}

/* @n spread over @k free dimensions by the greedy method (@out, k > 0). */
static void dims_greedy(int n, int k, int *out)
{
	int f[32], nf = prime_factors(n, f);

	for (int i = 0; i < k; i++)
		out[i] = 1;
	for (int j = nf - 1; j >= 0; j--) {
		int min = 0;

		for (int i = 1; i < k; i++)
			if (out[i] < out[min])
				min = i;
		out[min] *= f[j];
	}
	qsort(out, (size_t)k, sizeof(*out), cmp_desc);
}

/* @n spread over @k free dimensions (@out, k > 0); false: no memory. */
static bool dims_spread(int n, int k, int *out)
{
	dims_best_t b = {.cur = malloc((size_t)k * sizeof(int)),
			 .best = out,
			 .diff = LLONG_MAX,
			 .steps = 1000000};

	if (!b.cur || !(b.divs = divisors(n, &b.ndivs))) {
		free(b.cur);
		return false;
	}
	dims_search(&b, n, k, n, 0);
	free(b.cur);
	free(b.divs);
	if (b.diff == LLONG_MAX || b.steps < 0)
		dims_greedy(n, k, out);
	return true;
}

MPIL_PMPI_ALIAS(Dims_create)
int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
	static const char F[] = "MPI_Dims_create";
	MPIL_CS_GUARD();
	long long fixed = 1;
	int nfree = 0, *spread;

	MPIL_CHECK(mpil_check_init(F));
	if (nnodes <= 0)
		return mpil_err(NULL, MPI_ERR_ARG, F, "nnodes is %d (must be positive)", nnodes);
	if (ndims < 0)
		return mpil_err(NULL, MPI_ERR_ARG, F, "ndims is negative (%d)", ndims);
	if (ndims > 0 && !dims)
		return mpil_err(NULL, MPI_ERR_ARG, F, "dims is NULL");
	for (int d = 0; d < ndims; d++) {
		if (dims[d] < 0)
			return mpil_err(NULL, MPI_ERR_DIMS, F, "dims[%d] is negative (%d)", d,
					dims[d]);
		if (dims[d] == 0)
			nfree++;
		else if ((fixed *= dims[d]) > nnodes)
			break;
	}
	if (nnodes % fixed || (nfree == 0 && fixed != nnodes))
		return mpil_err(NULL, MPI_ERR_DIMS, F,
				"%d processes cannot fill a grid of %d dimensions whose given "
				"sizes multiply to %lld",
				nnodes, ndims, fixed);
	if (nfree == 0)
		return MPI_SUCCESS;
	spread = malloc((size_t)nfree * sizeof(int));
	if (!spread)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for %d dimensions", nfree);
	if (!dims_spread((int)(nnodes / fixed), nfree, spread)) {
		free(spread);
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for the divisors of %lld",
				nnodes / fixed);
	}
	for (int d = 0, i = 0; d < ndims; d++)
		if (dims[d] == 0)
			dims[d] = spread[i++];
	free(spread);
	return MPI_SUCCESS;
}

/* ---- queries ---------------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Cartdim_get)
int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
	static const char F[] = "MPI_Cartdim_get";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	int err;

	t = mpil_topo_get(comm, MPI_CART, &err, F);
	if (!t)
		return err;
	MPIL_CHECK(mpil_topo_check_out(comm, ndims, "ndims", F));
	*ndims = t->ndims;
	return MPI_SUCCESS;
}

/* @maxdims entries of an output array that takes one per dimension. */
static int check_maxdims(MPI_Comm comm, const mpil_topo_t *t, int maxdims, const char *fname)
{
	if (maxdims >= t->ndims)
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_ARG, fname, "maxdims is %d, the grid has %d dimensions",
			maxdims, t->ndims);
}

MPIL_PMPI_ALIAS(Cart_get)
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
	static const char F[] = "MPI_Cart_get";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	size_t len;
	int err;

	t = mpil_topo_get(comm, MPI_CART, &err, F);
	if (!t)
		return err;
	MPIL_CHECK(check_maxdims(comm, t, maxdims, F));
	if (t->ndims == 0)
		return MPI_SUCCESS;
	if (!dims || !periods || !coords)
		return mpil_err(comm, MPI_ERR_ARG, F, "%s is NULL",
				!dims	   ? "dims"
				: !periods ? "periods"
					   : "coords");
	len = (size_t)t->ndims * sizeof(int);
	memcpy(dims, t->dims, len);
	memcpy(periods, t->periods, len);
	memcpy(coords, t->coords, len);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Cart_rank)
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
	static const char F[] = "MPI_Cart_rank";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	int err, r;

	t = mpil_topo_get(comm, MPI_CART, &err, F);
	if (!t)
		return err;
	MPIL_CHECK(mpil_topo_check_out(comm, rank, "rank", F));
	if (t->ndims > 0 && !coords)
		return mpil_err(comm, MPI_ERR_ARG, F, "coords is NULL");
	r = cart_rank_of(t, coords);
	if (r < 0) {
		int d = -1 - r;

		return mpil_err(comm, MPI_ERR_ARG, F,
				"coords[%d] is %d, outside non-periodic dimension %d of size %d", d,
				coords[d], d, t->dims[d]);
	}
	*rank = r;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Cart_coords)
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
	static const char F[] = "MPI_Cart_coords";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	int err;

	t = mpil_topo_get(comm, MPI_CART, &err, F);
	if (!t)
		return err;
	if (rank < 0 || rank >= comm->size)
		return mpil_err(comm, MPI_ERR_RANK, F, "invalid rank %d (communicator size %d)",
				rank, comm->size);
	MPIL_CHECK(check_maxdims(comm, t, maxdims, F));
	if (t->ndims > 0 && !coords)
		return mpil_err(comm, MPI_ERR_ARG, F, "coords is NULL");
	cart_coords_of(t, rank, coords);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Cart_shift)
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
	static const char F[] = "MPI_Cart_shift";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	int err;

	t = mpil_topo_get(comm, MPI_CART, &err, F);
	if (!t)
		return err;
	if (direction < 0 || direction >= t->ndims)
		return mpil_err(comm, MPI_ERR_DIMS, F,
				"direction %d is not a dimension of the %d-dimensional grid",
				direction, t->ndims);
	MPIL_CHECK(mpil_topo_check_out(comm, rank_source, "rank_source", F));
	MPIL_CHECK(mpil_topo_check_out(comm, rank_dest, "rank_dest", F));
	*rank_source = cart_step(t, direction, -(long long)disp);
	*rank_dest = cart_step(t, direction, disp);
	return MPI_SUCCESS;
}

/* The subgrid of @t's @remain dimensions through this process, which is
 * @rank of it. */
static mpil_topo_t *cart_sub_new(const mpil_topo_t *t, const int *remain, int rank)
{
	mpil_topo_t *sub;
	int n = 0;

	for (int d = 0; d < t->ndims; d++)
		n += remain[d] != 0;
	sub = cart_alloc(n);
	if (!sub)
		return NULL;
	n = 0;
	for (int d = 0; d < t->ndims; d++)
		if (remain[d]) {
			sub->dims[n] = t->dims[d];
			sub->periods[n++] = t->periods[d];
		}
	cart_place(sub, rank);
	return sub;
}

MPIL_PMPI_ALIAS(Cart_sub)
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
	static const char F[] = "MPI_Cart_sub";
	MPIL_CS_GUARD();
	const mpil_topo_t *t;
	mpil_topo_t *sub;
	int err, color = 0, key = 0;

	t = mpil_topo_get(comm, MPI_CART, &err, F);
	if (!t)
		return err;
	MPIL_CHECK(mpil_topo_check_out(comm, newcomm, "newcomm", F));
	if (t->ndims > 0 && !remain_dims)
		return mpil_err(comm, MPI_ERR_ARG, F, "remain_dims is NULL");
	/* the dropped coordinates pick the subgrid, the kept ones the rank
	 * in it (row-major over the kept dimensions) */
	for (int d = 0; d < t->ndims; d++) {
		if (remain_dims[d])
			key = key * t->dims[d] + t->coords[d];
		else
			color = color * t->dims[d] + t->coords[d];
	}
	sub = cart_sub_new(t, remain_dims, key);
	if (!sub)
		return mpil_err(comm, MPI_ERR_NO_MEM, F, "no memory for the subgrid");
	return mpil_topo_comm_create(comm, color, sub, newcomm, F);
}
