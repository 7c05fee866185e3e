/*
 * sig.c — type signatures: the sequence of basic types of (type, count).
 *
 * MPI requires the sender's basic-type sequence to be a prefix of the
 * receiver's. Expanding the sequence costs O(elements); instead each type
 * carries a polynomial hash over GF(2^61 - 1)
 *
 *     h(x_0 .. x_{n-1}) = sum x_i * B^(n-1-i)      pw = B^n
 *
 * which composes: h(a ++ b) = h(a) * pw(b) + h(b), and k repetitions cost
 * O(log k) by doubling. A vector of 10^8 doubles hashes in ~27 steps, and
 * the prefix of m elements of (type, count) is found by walking the
 * constructor tree once (division on regular levels, a scan of the blocks
 * on indexed/struct levels). x_i is a 61-bit mix of the basic type's code
 * and size, never 0.
 */
#include "dtype_int.h"

#define SIG_P ((UINT64_C(1) << 61) - 1)
#define SIG_B UINT64_C(0x1d8e4e27c47d124f) /* < SIG_P, odd, no small order */

static uint64_t mulmod(uint64_t a, uint64_t b)
{
	unsigned __int128 p = (unsigned __int128)a * b;
	uint64_t r = (uint64_t)(p & SIG_P) + (uint64_t)(p >> 61);

	return r >= SIG_P ? r - SIG_P : r;
}

static uint64_t addmod(uint64_t a, uint64_t b)
{
	uint64_t r = a + b;

	return r >= SIG_P ? r - SIG_P : r;
}

dt_sig_t ibx_dt_sig_empty(void)
{
	return (dt_sig_t){.h = 0, .pw = 1};
}

dt_sig_t ibx_dt_sig_basic(uint32_t code, int64_t size)
{
	/* splitmix64 finaliser over (code, size) */
	uint64_t z = ((uint64_t)code << 32 ^ (uint64_t)size) + UINT64_C(0x9e3779b97f4a7c15);

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	return (dt_sig_t){.h = z % (SIG_P - 1) + 1, .pw = SIG_B};
}

dt_sig_t ibx_dt_sig_cat(dt_sig_t a, dt_sig_t b)
{
	return (dt_sig_t){.h = addmod(mulmod(a.h, b.pw), b.h), .pw = mulmod(a.pw, b.pw)};
}

dt_sig_t ibx_dt_sig_of_hash(uint64_t hash, int64_t nelem)
{
	dt_sig_t b = {.h = 0, .pw = SIG_B};

	return (dt_sig_t){.h = hash % SIG_P, .pw = ibx_dt_sig_rep(b, (uint64_t)nelem).pw};
}

dt_sig_t ibx_dt_sig_rep(dt_sig_t s, uint64_t k)
{
	dt_sig_t r = ibx_dt_sig_empty();

	while (k) {
		if (k & 1)
			r = ibx_dt_sig_cat(r, s);
		k >>= 1;
		if (k)
			s = ibx_dt_sig_cat(s, s);
	}
	return r;
}

/* Signature of the first @m basic elements of one @dt (0 <= m <= nelem). */
static ibx_status_t sig_prefix(const ibx_dt_t *dt, int64_t m, dt_sig_t *sig_p)
{
	dt_sig_t acc = ibx_dt_sig_empty(), rest;
	const ibx_dt_t *c;
	ibx_status_t st;

	if (m == 0) {
		*sig_p = ibx_dt_sig_empty();
		return IBX_OK;
	}
	if (m == dt->nelem) {
		*sig_p = dt->sig;
		return IBX_OK;
	}
	switch (dt->kind) {
	case DT_CONTIG:
	case DT_VECTOR:
	case DT_HVECTOR:
	case DT_INDEXED:
	case DT_HINDEXED:
	case DT_INDEXED_BLOCK:
	case DT_HINDEXED_BLOCK:
		/* one child: the sequence is child^copies */
		c = dt->child;
		st = sig_prefix(c, m % c->nelem, &rest);
		if (st)
			return st;
		*sig_p = ibx_dt_sig_cat(ibx_dt_sig_rep(c->sig, (uint64_t)(m / c->nelem)), rest);
		return IBX_OK;
	case DT_STRUCT:
		for (int64_t k = 0; k < dt->count && m > 0; k++) {
			int64_t n = dt->blens[k] * dt->types[k]->nelem; /* <= dt->nelem */

			c = dt->types[k];
			if (n == 0)
				continue;
			if (m >= n) {
				acc = ibx_dt_sig_cat(
				    acc, ibx_dt_sig_rep(c->sig, (uint64_t)dt->blens[k]));
				m -= n;
				continue;
			}
			acc = ibx_dt_sig_cat(acc, ibx_dt_sig_rep(c->sig, (uint64_t)(m / c->nelem)));
			st = sig_prefix(c, m % c->nelem, &rest);
			if (st)
				return st;
			acc = ibx_dt_sig_cat(acc, rest);
			m = 0;
		}
		*sig_p = acc;
		return IBX_OK;
	case DT_RESIZED:
	case DT_DUP:
	case DT_SUBARRAY: return sig_prefix(dt->child, m, sig_p);
	default:
		/* a basic type has 0 or 1 element; a remote layout has no tree */
		return IBX_ERR_UNSUPPORTED;
	}
}

ibx_status_t ibx_dt_signature(const ibx_dt_t *dt, int64_t count, ibx_dt_sig_t *sig_p)
{
	int64_t n;

	if (!dt || !sig_p || count < 0)
		return IBX_ERR_INVALID_PARAM;
	if (!dt_mul(count, dt->nelem, &n))
		return IBX_ERR_OVERFLOW;
	sig_p->hash = ibx_dt_sig_rep(dt->sig, (uint64_t)count).h;
	sig_p->nelem = n;
	return IBX_OK;
}

ibx_status_t ibx_dt_sig_match(const ibx_dt_sig_t *sent, const ibx_dt_t *dt, int64_t count)
{
	dt_sig_t pre, rest;
	ibx_status_t st;
	int64_t total, m;

	if (!sent || !dt || count < 0 || sent->nelem < 0)
		return IBX_ERR_INVALID_PARAM;
	if (!dt_mul(count, dt->nelem, &total))
		return IBX_ERR_OVERFLOW;
	m = sent->nelem;
	if (m > total) {
		ibx_debug("signature: %lld basic elements sent, receive takes %lld", (long long)m,
			  (long long)total);
		return IBX_ERR_TRUNCATED;
	}
	if (m == 0) {
		pre = ibx_dt_sig_empty();
	} else {
		st = sig_prefix(dt, m % dt->nelem, &rest);
		if (st)
			return st;
		pre = ibx_dt_sig_cat(ibx_dt_sig_rep(dt->sig, (uint64_t)(m / dt->nelem)), rest);
	}
	if (pre.h != sent->hash) {
		ibx_debug(
		    "signature mismatch: sent %016llx over %lld elements, receive prefix %016llx",
		    (unsigned long long)sent->hash, (long long)m, (unsigned long long)pre.h);
		return IBX_ERR_INVALID_PARAM;
	}
	return IBX_OK;
}

/* Basic elements in the first @r packed bytes of one @dt (0 <= r <= size);
 * -1 when @r ends inside a basic element. Walks one path down the tree. */
static int64_t elements_prefix(const ibx_dt_t *dt, int64_t r)
{
	const ibx_dt_t *c = NULL;
	int64_t acc = 0, sub;

	for (;;) {
		if (r == 0)
			return acc;
		if (r == dt->size)
			return acc + dt->nelem;
		switch (dt->kind) {
		case DT_CONTIG:
		case DT_VECTOR:
		case DT_HVECTOR:
		case DT_INDEXED:
		case DT_HINDEXED:
		case DT_INDEXED_BLOCK:
		case DT_HINDEXED_BLOCK:
			/* 0 < r < size: the child has data, so c->size > 0 */
			c = dt->child;
			acc += r / c->size * c->nelem;
			r %= c->size;
			dt = c;
			continue;
		case DT_STRUCT:
			for (int64_t k = 0; k < dt->count; k++) {
				c = dt->types[k];
				sub = dt->blens[k] * c->size; /* <= dt->size */
				if (sub == 0)
					continue;
				if (r >= sub) {
					acc += dt->blens[k] * c->nelem;
					r -= sub;
					continue;
				}
				acc += r / c->size * c->nelem;
				r %= c->size;
				break;
			}
			if (!c)
				return -1;
			dt = c;
			continue;
		case DT_RESIZED:
		case DT_DUP:
		case DT_SUBARRAY: dt = dt->child; continue;
		default:
			/* a basic type cut inside, or a remote layout */
			return dt->kind == DT_BASIC ? -1 : -2;
		}
	}
}

ibx_status_t ibx_dt_elements(const ibx_dt_t *dt, int64_t bytes, int64_t *nelem_p)
{
	int64_t n;

	if (!dt || !nelem_p || bytes < 0)
		return IBX_ERR_INVALID_PARAM;
	if (dt->size == 0) {
		*nelem_p = 0;
		return IBX_OK;
	}
	if (!dt_mul(bytes / dt->size, dt->nelem, &n))
		return IBX_ERR_OVERFLOW;
	if (bytes % dt->size) {
		int64_t part = elements_prefix(dt, bytes % dt->size);

		if (part == -2)
			return IBX_ERR_UNSUPPORTED;
		if (part < 0)
			return IBX_ERR_TRUNCATED;
		n += part;
	}
	*nelem_p = n;
	return IBX_OK;
}
