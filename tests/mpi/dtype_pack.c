/* ibx-test: np=1,2,3,4 timeout=60 nodes=1 */
/*
 * dtype_pack — MPI_Pack / MPI_Unpack / MPI_Pack_size round trips (mixed
 * types in one buffer, sent as MPI_PACKED and unpacked by the receiver,
 * piecewise packing equal to one-shot packing), the datatype queries
 * (sizes, the _x forms beyond 2 GiB, extents and true extents), names,
 * MPI_Type_dup and commit rules.
 */
#include "mpitest.h"

#include <stdbool.h>
#include <stddef.h>

static int rank, size, right, left;

typedef struct rec {
	int id;
	double v[3];
	char name[5];
} rec_t;

static MPI_Datatype rec_type(void)
{
	int bl[3] = {1, 3, 5};
	MPI_Aint d[3] = {offsetof(rec_t, id), offsetof(rec_t, v), offsetof(rec_t, name)};
	MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, t;

	MPI_OK(MPI_Type_create_struct(3, bl, d, ty, &t));
	MPI_OK(MPI_Type_commit(&t));
	return t;
}

static void fill_rec(rec_t *r, int src, int i)
{
	memset(r, 0, sizeof(*r));
	r->id = src * 1000 + i;
	for (int k = 0; k < 3; k++)
		r->v[k] = src + i * 0.5 + k * 0.25;
	snprintf(r->name, sizeof(r->name), "%c%03u", 'A' + src % 26, (unsigned)i % 1000u);
}

static bool rec_eq(const rec_t *a, const rec_t *b)
{
	return a->id == b->id && a->v[0] == b->v[0] && a->v[1] == b->v[1] && a->v[2] == b->v[2] &&
	       memcmp(a->name, b->name, sizeof(a->name)) == 0;
}

static void test_round_trip(void)
{
	enum { NR = 7, NV = 40 };
	MPI_Datatype rt = rec_type(), vec;
	rec_t recs[NR], back[NR];
	double dv[2 * NV], dback[2 * NV];
	int hdr[2] = {rank, NR}, hback[2];
	int szi, szr, szv, total, pos = 0, rpos = 0;
	char *buf, *rbuf;
	MPI_Status st;
	int n;

	MPI_OK(MPI_Type_vector(NV, 1, 2, MPI_DOUBLE, &vec));
	MPI_OK(MPI_Type_commit(&vec));
	MPI_OK(MPI_Pack_size(2, MPI_INT, MPI_COMM_WORLD, &szi));
	MPI_OK(MPI_Pack_size(NR, rt, MPI_COMM_WORLD, &szr));
	MPI_OK(MPI_Pack_size(1, vec, MPI_COMM_WORLD, &szv));
	CHECK(szi >= 8 && szr >= NR * (4 + 24 + 5) && szv >= NV * 8, "Pack_size %d %d %d", szi, szr,
	      szv);
	total = szi + szr + szv;
	buf = malloc((size_t)total);
	rbuf = malloc((size_t)total);
	CHECK(buf && rbuf, "out of memory");
	for (int i = 0; i < NR; i++)
		fill_rec(&recs[i], rank, i);
	for (int i = 0; i < 2 * NV; i++) {
		dv[i] = rank * 100.0 + i;
		dback[i] = -1;
	}
	MPI_OK(MPI_Pack(hdr, 2, MPI_INT, buf, total, &pos, MPI_COMM_WORLD));
	CHECK(pos > 0 && pos <= szi, "position after the header %d", pos);
	MPI_OK(MPI_Pack(recs, NR, rt, buf, total, &pos, MPI_COMM_WORLD));
	MPI_OK(MPI_Pack(dv, 1, vec, buf, total, &pos, MPI_COMM_WORLD));
	CHECK(pos <= total, "packed %d bytes into %d", pos, total);

	/* to the right neighbour as MPI_PACKED; unpack what the left sent */
	MPI_OK(MPI_Sendrecv(buf, pos, MPI_PACKED, right, 1, rbuf, total, MPI_PACKED, left, 1,
			    MPI_COMM_WORLD, &st));
	MPI_OK(MPI_Get_count(&st, MPI_PACKED, &n));
	CHECK(n == pos, "received %d packed bytes, sent %d", n, pos);
	MPI_OK(MPI_Unpack(rbuf, n, &rpos, hback, 2, MPI_INT, MPI_COMM_WORLD));
	CHECK(hback[0] == left && hback[1] == NR, "header %d %d", hback[0], hback[1]);
	MPI_OK(MPI_Unpack(rbuf, n, &rpos, back, NR, rt, MPI_COMM_WORLD));
	MPI_OK(MPI_Unpack(rbuf, n, &rpos, dback, 1, vec, MPI_COMM_WORLD));
	CHECK(rpos == n, "unpacked %d of %d bytes", rpos, n);
	for (int i = 0; i < NR; i++) {
		rec_t want;

		fill_rec(&want, left, i);
		CHECK(rec_eq(&back[i], &want), "record %d: id %d", i, back[i].id);
	}
	for (int i = 0; i < 2 * NV; i++)
		CHECK(dback[i] == (i % 2 ? -1 : left * 100.0 + i), "vector %d: %g", i, dback[i]);

	/* packing element by element gives the same bytes as all at once */
	{
		char *one = malloc((size_t)szr), *piece = malloc((size_t)szr);
		int p1 = 0, p2 = 0;

		CHECK(one && piece, "out of memory");
		MPI_OK(MPI_Pack(recs, NR, rt, one, szr, &p1, MPI_COMM_WORLD));
		for (int i = 0; i < NR; i++)
			MPI_OK(MPI_Pack(&recs[i], 1, rt, piece, szr, &p2, MPI_COMM_WORLD));
		CHECK(p1 == p2 && memcmp(one, piece, (size_t)p1) == 0,
		      "piecewise packing differs (%d vs %d bytes)", p1, p2);
		/* and the packed form is the data without the padding */
		CHECK(p1 == NR * (int)(sizeof(int) + 3 * sizeof(double) + 5),
		      "packed %d bytes for %d records", p1, NR);
		free(one);
		free(piece);
	}
	/* packed data received as the struct type directly */
	{
		rec_t direct[NR];

		pos = 0;
		MPI_OK(MPI_Pack(recs, NR, rt, buf, total, &pos, MPI_COMM_WORLD));
		MPI_OK(MPI_Sendrecv(buf, pos, MPI_PACKED, right, 2, direct, NR, rt, left, 2,
				    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		for (int i = 0; i < NR; i++) {
			rec_t want;

			fill_rec(&want, left, i);
			CHECK(rec_eq(&direct[i], &want), "direct record %d", i);
		}
	}
	MPI_OK(MPI_Type_free(&rt));
	MPI_OK(MPI_Type_free(&vec));
	free(buf);
	free(rbuf);
}

static void test_queries(void)
{
	MPI_Datatype t, big, t2;
	MPI_Count lbx, extx, szx;
	MPI_Aint lb, ext;
	int sz, len;
	char name[MPI_MAX_OBJECT_NAME];

	/* more than 2 GiB: the int query says MPI_UNDEFINED, _x is exact */
	MPI_OK(MPI_Type_contiguous(1 << 12, MPI_CHAR, &t));
	MPI_OK(MPI_Type_contiguous(1 << 20, t, &big));
	MPI_OK(MPI_Type_size(big, &sz));
	CHECK(sz == MPI_UNDEFINED, "Type_size of 4 GiB: %d", sz);
	MPI_OK(MPI_Type_size_x(big, &szx));
	CHECK(szx == (MPI_Count)1 << 32, "Type_size_x %lld", (long long)szx);
	MPI_OK(MPI_Type_get_extent_x(big, &lbx, &extx));
	CHECK(lbx == 0 && extx == (MPI_Count)1 << 32, "extent_x %lld", (long long)extx);
	MPI_OK(MPI_Type_free(&big));
	MPI_OK(MPI_Type_free(&t));

	/* true extent vs extent */
	MPI_OK(MPI_Type_create_resized(MPI_DOUBLE, -8, 32, &t));
	MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
	CHECK(lb == -8 && ext == 32, "resized lb %ld extent %ld", (long)lb, (long)ext);
	MPI_OK(MPI_Type_get_true_extent(t, &lb, &ext));
	CHECK(lb == 0 && ext == 8, "resized true lb %ld extent %ld", (long)lb, (long)ext);
	MPI_OK(MPI_Type_get_true_extent_x(t, &lbx, &extx));
	CHECK(lbx == 0 && extx == 8, "true_extent_x %lld %lld", (long long)lbx, (long long)extx);
	/* queries work before commit; commit twice is fine */
	MPI_OK(MPI_Type_size(t, &sz));
	CHECK(sz == 8, "resized size %d", sz);
	MPI_OK(MPI_Type_commit(&t));
	MPI_OK(MPI_Type_commit(&t));

	/* names: predefined, set on derived, not inherited by dup */
	MPI_OK(MPI_Type_get_name(MPI_DOUBLE_INT, name, &len));
	CHECK(strcmp(name, "MPI_DOUBLE_INT") == 0 && len == 14, "name \"%s\"", name);
	MPI_OK(MPI_Type_get_name(t, name, &len));
	CHECK(len == 0 && name[0] == '\0', "unnamed type has name \"%s\"", name);
	MPI_OK(MPI_Type_set_name(t, "shifted double"));
	MPI_OK(MPI_Type_get_name(t, name, &len));
	CHECK(strcmp(name, "shifted double") == 0 && len == 14, "set name \"%s\"", name);
	MPI_OK(MPI_Type_set_name(t, "renamed"));
	MPI_OK(MPI_Type_get_name(t, name, &len));
	CHECK(strcmp(name, "renamed") == 0, "renamed \"%s\"", name);
	MPI_OK(MPI_Type_dup(t, &t2));
	MPI_OK(MPI_Type_get_extent(t2, &lb, &ext));
	CHECK(lb == -8 && ext == 32, "dup lb %ld extent %ld", (long)lb, (long)ext);
	/* dup of a committed type is committed: usable at once */
	{
		double s[4] = {1, 2, 3, 4}, r[4] = {0, 0, 0, 0};

		MPI_OK(MPI_Sendrecv(s, 1, t2, rank, 3, r, 1, t2, rank, 3, MPI_COMM_WORLD,
				    MPI_STATUS_IGNORE));
		CHECK(r[0] == 1 && r[1] == 0, "dup type transfer %g %g", r[0], r[1]);
	}
	MPI_OK(MPI_Type_free(&t2));
	MPI_OK(MPI_Type_free(&t));

	/* dup of a predefined type */
	MPI_OK(MPI_Type_dup(MPI_LONG_DOUBLE_INT, &t));
	MPI_OK(MPI_Type_size(t, &sz));
	MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
	CHECK(sz == (int)(sizeof(long double) + sizeof(int)) && lb == 0 &&
		  ext == (MPI_Aint)sizeof(struct {
			  long double v;
			  int i;
		  }),
	      "dup(MPI_LONG_DOUBLE_INT) size %d extent %ld", sz, (long)ext);
	MPI_OK(MPI_Type_free(&t));

	/* contiguous(0): empty, still a type */
	MPI_OK(MPI_Type_contiguous(0, MPI_INT, &t));
	MPI_OK(MPI_Type_commit(&t));
	MPI_OK(MPI_Type_size(t, &sz));
	MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
	CHECK(sz == 0 && ext == 0, "empty type size %d extent %ld", sz, (long)ext);
	MPI_OK(MPI_Sendrecv(NULL, 5, t, right, 4, NULL, 5, t, left, 4, MPI_COMM_WORLD,
			    MPI_STATUS_IGNORE));
	MPI_OK(MPI_Type_free(&t));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	right = (rank + 1) % size;
	left = (rank - 1 + size) % size;
	test_round_trip();
	test_queries();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("dtype_pack: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
