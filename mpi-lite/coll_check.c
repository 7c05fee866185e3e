/*
 * coll_check.c — the argument checks of the collective entry points that
 * go beyond one buffer (mpil_check_*): roots, counts and displacement
 * arrays, MPI_IN_PLACE where only the root may pass it, send and receive
 * buffers that share bytes, receive blocks written twice, own blocks that
 * do not fit; and the report of a collective that failed underway. Each
 * returns MPI_SUCCESS or what the communicator's error handler made of
 * the error.
 */
#include "coll_int.h"

int mpil_coll_failed(MPI_Comm comm, int err, const char *fname)
{
	if (err == MPI_ERR_NO_MEM)
		return mpil_err(comm, err, fname, "out of memory for temporary buffers");
	return mpil_err(comm, err, fname, "a transfer between members of %s failed",
			comm->name[0] ? comm->name : "the communicator");
}

int mpil_coll_check_root(MPI_Comm comm, int root, const char *F)
{
	if (ibx_likely(root >= 0 && root < comm->size))
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_ROOT, F, "invalid root %d (communicator size %d)", root,
			comm->size);
}

int mpil_coll_check_typed(MPI_Comm comm, int count, MPI_Datatype dt, const char *F)
{
	MPIL_CHECK(mpil_check_count(comm, count, F));
	return mpil_check_dtype(comm, dt, F);
}

/* A counts array: given, no negative entry; *total_p its sum. */
int mpil_coll_check_counts(MPI_Comm comm, const int *counts, int n, const char *what,
			   long long *total_p, const char *F)
{
	long long total = 0;

	if (ibx_unlikely(!counts))
		return mpil_err(comm, MPI_ERR_ARG, F, "%s is NULL", what);
	for (int i = 0; i < n; i++) {
		if (ibx_unlikely(counts[i] < 0))
			return mpil_err(comm, MPI_ERR_COUNT, F, "%s[%d] is negative (%d)", what, i,
					counts[i]);
		total += counts[i];
	}
	*total_p = total;
	return MPI_SUCCESS;
}

int mpil_coll_check_displs(MPI_Comm comm, const int *displs, const char *what, const char *F)
{
	if (ibx_likely(displs != NULL))
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_ARG, F, "%s is NULL", what);
}

/* A buffer that receives or sends @total elements (NULL only when nothing
 * moves). */
int mpil_coll_check_vbuf(MPI_Comm comm, const void *buf, long long total, MPI_Datatype dt,
			 const char *F)
{
	return mpil_check_buf(comm, buf, total > 0 ? 1 : 0, dt, F);
}

int mpil_coll_check_inplace_root(MPI_Comm comm, bool inplace, bool am_root, const char *which,
				 const char *F)
{
	if (ibx_likely(!inplace || am_root))
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_BUFFER, F, "MPI_IN_PLACE as %s on a non-root rank", which);
}

int mpil_coll_check_rooted(MPI_Comm comm, int root, bool gather, const void *mine, int minecount,
			   MPI_Datatype minetype, const void *all, int allcount,
			   MPI_Datatype alltype, size_t *len_p, size_t *mylen_p, const char *F)
{
	bool inplace = mine == MPI_IN_PLACE, am_root;
	size_t len, mylen = 0;
	long long allblocks;

	MPIL_CHECK(mpil_coll_check_root(comm, root, F));
	am_root = comm->rank == root;
	MPIL_CHECK(mpil_coll_check_inplace_root(comm, inplace, am_root,
						gather ? "sendbuf" : "recvbuf", F));
	if (!inplace) {
		MPIL_CHECK(mpil_coll_check_typed(comm, minecount, minetype, F));
		MPIL_CHECK(mpil_check_buf(comm, mine, minecount, minetype, F));
		mylen = coll_tbytes(minecount, minetype);
	}
	len = mylen;
	if (am_root) {
		MPIL_CHECK(mpil_coll_check_typed(comm, allcount, alltype, F));
		MPIL_CHECK(mpil_check_buf(comm, all, allcount, alltype, F));
		len = coll_tbytes(allcount, alltype);
		allblocks = (long long)allcount * comm->size;
		if (!inplace) {
			if (gather ? mpil_coll_overlap(mine, minecount, minetype, all, allblocks,
						       alltype)
				   : mpil_coll_overlap(all, allblocks, alltype, mine, minecount,
						       minetype))
				return mpil_coll_err_alias(comm, F);
			/* what one side gives must fit what the other takes */
			if (gather && mylen > len)
				return mpil_coll_err_trunc(comm, F, mylen, len);
			if (!gather && len > mylen)
				return mpil_coll_err_trunc(comm, F, len, mylen);
		}
	}
	*len_p = len;
	*mylen_p = mylen;
	return MPI_SUCCESS;
}

/* Bytes [lo, hi) that (buf, count, dt) covers, for a contiguous type. */
static bool span_of(const void *buf, long long count, MPI_Datatype dt, uintptr_t *lo, uintptr_t *hi)
{
	if (!mpil_dt_contig(dt) || count <= 0 || dt->size == 0)
		return false;
	*lo = (uintptr_t)coll_at(buf, dt->true_lb);
	*hi = *lo + (uintptr_t)count * dt->size;
	return true;
}

/* Do (a, ac, at) and (b, bc, bt) share bytes? Exact for contiguous types;
 * otherwise only the same start with the same type counts (interleaved
 * layouts, e.g. two columns of one matrix, may legitimately share a
 * span). */
bool mpil_coll_overlap(const void *a, long long ac, MPI_Datatype at, const void *b, long long bc,
		       MPI_Datatype bt)
{
	uintptr_t alo, ahi, blo, bhi;

	if (ac <= 0 || bc <= 0 || at->size == 0 || bt->size == 0)
		return false;
	if (span_of(a, ac, at, &alo, &ahi) && span_of(b, bc, bt, &blo, &bhi))
		return alo < bhi && blo < ahi;
	return a == b && at == bt;
}

static int cmp_span(const void *a, const void *b)
{
	const uintptr_t *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The byte ranges [lo, hi) of the nonempty blocks of a v layout (counts,
 * displs in elements of @dt at @buf), sorted by lo, as pairs in *s_p
 * (malloc'ed). Returns how many, or -1 when @dt is not contiguous (where
 * ranges say nothing exact) or memory is short. *any_p: some block has
 * data. */
static int vspans(const void *buf, const int *counts, const int *displs, MPI_Datatype dt, int p,
		  uintptr_t **s_p, bool *any_p)
{
	uintptr_t *s;
	int n = 0;

	*s_p = NULL;
	*any_p = false;
	for (int i = 0; i < p; i++)
		if (counts[i] > 0 && dt->size > 0)
			*any_p = true;
	if (!mpil_dt_contig(dt))
		return -1;
	s = malloc(2 * (size_t)p * sizeof(*s) + 1);
	if (!s)
		return -1;
	for (int i = 0; i < p; i++)
		if (span_of(coll_at(buf, (MPI_Aint)displs[i] * dt->extent), counts[i], dt,
			    &s[2 * n], &s[2 * n + 1]))
			n++;
	qsort(s, (size_t)n, 2 * sizeof(*s), cmp_span);
	*s_p = s;
	return n;
}

/* Do two sorted lists of ranges meet? (A list may overlap itself.) */
static bool spans_meet(const uintptr_t *a, int na, const uintptr_t *b, int nb)
{
	int i = 0, j = 0;

	while (i < na && j < nb) {
		if (a[2 * i + 1] <= b[2 * j])
			i++;
		else if (b[2 * j + 1] <= a[2 * i])
			j++;
		else
			return true;
	}
	return false;
}

/* Do the blocks of two v layouts share bytes? (One block: counts = &n,
 * displs = &zero, p = 1.) Exact for contiguous types, else the same buffer
 * and type with data on both sides counts. */
bool mpil_coll_overlap_vv(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype st,
			  int sp, const void *rbuf, const int *rcounts, const int *rdispls,
			  MPI_Datatype rt, int rp)
{
	uintptr_t *a, *b;
	bool sany, rany, meet;
	int na = vspans(sbuf, scounts, sdispls, st, sp, &a, &sany);
	int nb = vspans(rbuf, rcounts, rdispls, rt, rp, &b, &rany);

	if (na < 0 || nb < 0)
		meet = sany && rany && sbuf == rbuf && st == rt;
	else
		meet = spans_meet(a, na, b, nb);
	free(a);
	free(b);
	return meet;
}

/* Receive blocks of a v layout must not overlap (MPI-3.1 §5.5: no location
 * is written twice). Checked for contiguous types, where it is exact. */
int mpil_coll_check_recv_blocks(MPI_Comm comm, const void *buf, const int *counts,
				const int *displs, MPI_Datatype dt, int p, const char *F)
{
	uintptr_t *s, end = 0;
	bool any;
	int n = vspans(buf, counts, displs, dt, p, &s, &any), err = MPI_SUCCESS;

	for (int i = 0; i < n; i++) {
		if (i > 0 && s[2 * i] < end) {
			err = mpil_err(
			    comm, MPI_ERR_ARG, F,
			    "receive blocks overlap (counts/displacements write a byte twice)");
			break;
		}
		if (s[2 * i + 1] > end)
			end = s[2 * i + 1];
	}
	free(s);
	return err;
}

int mpil_coll_err_alias(MPI_Comm comm, const char *F)
{
	return mpil_err(comm, MPI_ERR_BUFFER, F,
			"send and receive buffers overlap (use MPI_IN_PLACE)");
}

int mpil_coll_err_trunc(MPI_Comm comm, const char *F, size_t have, size_t room)
{
	return mpil_err(comm, MPI_ERR_TRUNCATE, F,
			"own block of %zu bytes does not fit the %zu-byte receive block", have,
			room);
}
