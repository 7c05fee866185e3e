/* ibx-test: np=1,2,3,4 timeout=60 nodes=1 */
/*
 * comm_attrs — attribute caching: MPI_TAG_UB (on the world and on derived
 * communicators), keyvals whose copy callbacks decide what MPI_Comm_dup
 * copies (MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN, a deep copy, a failing
 * one), delete callbacks on MPI_Comm_delete_attr, on replacing a value, on
 * MPI_Comm_free (newest attribute first) and for MPI_COMM_SELF at
 * MPI_Finalize (checked after it returns), a failing delete callback, a
 * keyval freed while still in use, and the error classes. The MPI-1
 * names (MPI_Keyval_create, MPI_Attr_put/get/delete, MPI_Keyval_free,
 * MPI_DUP_FN / MPI_NULL_COPY_FN / MPI_NULL_DELETE_FN) act on the same
 * attributes.
 */
#include "mpitest.h"

#include <stdbool.h>

static int rank, size;

/* what the callbacks saw */
static int deletes, copies, last_deleted = -1, order[8], norder;
static bool fail_delete, fail_copy;
static int extra_marker;

static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
	CHECK(extra == &extra_marker, "delete callback: wrong extra_state");
	deletes++;
	last_deleted = (int)(intptr_t)val;
	if (norder < 8)
		order[norder++] = (int)(intptr_t)val;
	return fail_delete ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* a deep copy: a new heap int, freed by free_delete */
static int deep_copy(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
	int *v;

	copies++;
	if (fail_copy)
		return MPI_ERR_OTHER;
	v = malloc(sizeof(int));
	CHECK(v, "out of memory");
	*v = *(int *)in + 1;
	*(int **)out = v;
	*flag = 1;
	return MPI_SUCCESS;
}

static int free_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
	deletes++;
	free(val);
	return MPI_SUCCESS;
}

/* MPI_COMM_SELF's attribute: deleted during MPI_Finalize, with MPI usable */
static int self_deleted;

static int self_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
	int flag, r;

	CHECK(comm == MPI_COMM_SELF, "self attribute deleted on another communicator");
	CHECK(MPI_Finalized(&flag) == MPI_SUCCESS && !flag, "MPI finalized before the callback");
	CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &r) == MPI_SUCCESS && r == rank,
	      "MPI unusable in the finalize callback");
	self_deleted = (int)(intptr_t)val;
	return MPI_SUCCESS;
}

static void test_tag_ub(void)
{
	int *v, flag;
	MPI_Comm d;

	MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
	CHECK(flag && *v >= 32767, "MPI_TAG_UB %d", flag ? *v : -1);
	/* the largest tag works */
	{
		int x = 5, y = 0;

		MPI_OK(MPI_Sendrecv(&x, 1, MPI_INT, rank, *v, &y, 1, MPI_INT, rank, *v,
				    MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		CHECK(y == 5, "tag MPI_TAG_UB: %d", y);
	}
	MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &d));
	MPI_OK(MPI_Comm_get_attr(d, MPI_TAG_UB, &v, &flag));
	CHECK(flag && *v >= 32767, "MPI_TAG_UB on a split communicator");
	MPI_OK(MPI_Comm_free(&d));
}

static void test_copy_delete(void)
{
	int kdup, knull, kdeep, flag;
	void *v;
	int *p, base = 41;
	MPI_Comm d, dd;

	MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &kdup, &extra_marker));
	MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &knull, &extra_marker));
	MPI_OK(MPI_Comm_create_keyval(deep_copy, free_delete, &kdeep, NULL));
	CHECK(kdup != knull && knull != kdeep && kdup != MPI_KEYVAL_INVALID, "keyvals %d %d %d",
	      kdup, knull, kdeep);
	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
	MPI_OK(MPI_Comm_set_attr(d, kdup, (void *)(intptr_t)1001));
	MPI_OK(MPI_Comm_set_attr(d, knull, (void *)(intptr_t)1002));
	p = malloc(sizeof(int));
	CHECK(p, "out of memory");
	*p = base;
	MPI_OK(MPI_Comm_set_attr(d, kdeep, p));
	MPI_OK(MPI_Comm_get_attr(d, kdup, &v, &flag));
	CHECK(flag && (intptr_t)v == 1001, "get_attr: %d %ld", flag, (long)(intptr_t)v);

	/* dup: kdup copied as is, knull not, kdeep deep-copied */
	copies = 0;
	MPI_OK(MPI_Comm_dup(d, &dd));
	CHECK(copies == 1, "deep copy called %d times", copies);
	MPI_OK(MPI_Comm_get_attr(dd, kdup, &v, &flag));
	CHECK(flag && (intptr_t)v == 1001, "MPI_COMM_DUP_FN: flag %d", flag);
	MPI_OK(MPI_Comm_get_attr(dd, knull, &v, &flag));
	CHECK(!flag, "MPI_COMM_NULL_COPY_FN copied the attribute");
	MPI_OK(MPI_Comm_get_attr(dd, kdeep, &v, &flag));
	CHECK(flag && v != p && *(int *)v == base + 1, "deep copy: %d", flag ? *(int *)v : -1);

	/* replacing a value deletes the old one; delete_attr deletes */
	deletes = 0;
	MPI_OK(MPI_Comm_set_attr(dd, kdup, (void *)(intptr_t)2001));
	CHECK(deletes == 1 && last_deleted == 1001, "replace: %d deletes, last %d", deletes,
	      last_deleted);
	MPI_OK(MPI_Comm_delete_attr(dd, kdup));
	CHECK(deletes == 2 && last_deleted == 2001, "delete_attr: %d deletes, last %d", deletes,
	      last_deleted);
	MPI_OK(MPI_Comm_get_attr(dd, kdup, &v, &flag));
	CHECK(!flag, "attribute still there after delete_attr");

	/* free runs the delete callbacks, newest first */
	MPI_OK(MPI_Comm_set_attr(dd, knull, (void *)(intptr_t)3001));
	MPI_OK(MPI_Comm_set_attr(dd, kdup, (void *)(intptr_t)3002));
	deletes = 0;
	norder = 0;
	MPI_OK(MPI_Comm_free(&dd)); /* also frees the deep copy */
	CHECK(deletes == 3, "free ran %d delete callbacks", deletes);
	CHECK(norder == 2 && order[0] == 3002 && order[1] == 3001, "delete order %d, %d", order[0],
	      order[1]);

	/* a failing copy callback fails the dup */
	fail_copy = true;
	dd = MPI_COMM_NULL;
	MPI_FAILS(MPI_ERR_OTHER, MPI_Comm_dup(d, &dd));
	CHECK(dd == MPI_COMM_NULL, "failed dup returned a communicator");
	fail_copy = false;

	/* a failing delete callback fails the free; the communicator stays
	 * (with the attributes not deleted yet: kdeep, the newest, went
	 * first and freed p) */
	fail_delete = true;
	MPI_FAILS(MPI_ERR_OTHER, MPI_Comm_delete_attr(d, knull));
	MPI_OK(MPI_Comm_get_attr(d, knull, &v, &flag));
	CHECK(flag && (intptr_t)v == 1002, "attribute gone after a failed delete");
	MPI_FAILS(MPI_ERR_OTHER, MPI_Comm_free(&d));
	CHECK(d != MPI_COMM_NULL, "failed free reset the handle");
	MPI_OK(MPI_Barrier(d));
	fail_delete = false;

	/* a keyval freed while in use: the attribute keeps its callbacks */
	MPI_OK(MPI_Comm_free_keyval(&kdup));
	CHECK(kdup == MPI_KEYVAL_INVALID, "free_keyval did not reset the keyval");
	deletes = 0;
	MPI_OK(MPI_Comm_free(&d));
	CHECK(deletes == 2, "free after free_keyval ran %d deletes", deletes);
	MPI_OK(MPI_Comm_free_keyval(&knull));
	MPI_OK(MPI_Comm_free_keyval(&kdeep));
}

static void test_errors(void)
{
	int k, flag, stale;
	void *v;

	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &flag));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, 123456, &flag));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_get_attr(MPI_COMM_WORLD, 123456, &v, &flag));
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL, &flag));
	MPI_FAILS(MPI_ERR_COMM, MPI_Comm_set_attr(MPI_COMM_NULL, MPI_TAG_UB, &flag));
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN,
						      MPI_COMM_NULL_DELETE_FN, NULL, NULL));
	MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL));
	stale = k;
	MPI_OK(MPI_Comm_free_keyval(&k));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&stale));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, stale, &flag));
	k = MPI_TAG_UB;
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&k));
	/* freed while an attribute uses it (MPI-3.1 §6.7.2: not erroneous):
	 * the old value still reads and deletes it; then it is gone */
	MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL));
	stale = k;
	MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k, &flag));
	MPI_OK(MPI_Comm_free_keyval(&k));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, stale, &flag));
	MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, stale, &v, &flag));
	CHECK(flag && v == (void *)&flag, "freed keyval in use: attribute not found");
	MPI_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, stale));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_get_attr(MPI_COMM_WORLD, stale, &v, &flag));
}

/* The MPI-1 names: the same keyvals and attributes as the MPI-2 ones. */
static void test_mpi1_names(void)
{
	int k, k2, flag = 0, *tub = NULL, val = 5;
	void *v = NULL;
	MPI_Comm dup;

	MPI_OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &tub, &flag));
	CHECK(flag && tub && *tub >= 32767, "MPI_Attr_get(MPI_TAG_UB): flag %d", flag);
	MPI_OK(MPI_Keyval_create(MPI_DUP_FN, count_delete, &k, &extra_marker));
	MPI_OK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k2, NULL));
	MPI_OK(MPI_Attr_put(MPI_COMM_WORLD, k, &val));
	MPI_OK(MPI_Attr_put(MPI_COMM_WORLD, k2, &val));
	MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, k, &v, &flag)); /* the MPI-2 name sees it */
	CHECK(flag && v == &val, "MPI_Attr_put's value not seen by MPI_Comm_get_attr");
	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup)); /* MPI_DUP_FN copies, MPI_NULL_COPY_FN not */
	MPI_OK(MPI_Attr_get(dup, k, &v, &flag));
	CHECK(flag && v == &val, "MPI_DUP_FN did not copy the attribute");
	MPI_OK(MPI_Attr_get(dup, k2, &v, &flag));
	CHECK(!flag, "MPI_NULL_COPY_FN copied the attribute");
	deletes = 0;
	MPI_OK(MPI_Comm_free(&dup));
	CHECK(deletes == 1, "freeing the duplicate ran %d delete callbacks", deletes);
	MPI_OK(MPI_Attr_delete(MPI_COMM_WORLD, k));
	CHECK(deletes == 2, "MPI_Attr_delete ran %d delete callbacks", deletes);
	MPI_OK(MPI_Attr_get(MPI_COMM_WORLD, k, &v, &flag));
	CHECK(!flag, "attribute still there after MPI_Attr_delete");
	MPI_OK(MPI_Attr_delete(MPI_COMM_WORLD, k2));
	MPI_OK(MPI_Keyval_free(&k));
	CHECK(k == MPI_KEYVAL_INVALID, "MPI_Keyval_free left keyval %d", k);
	MPI_OK(MPI_Keyval_free(&k2));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Attr_put(MPI_COMM_WORLD, MPI_TAG_UB, &val));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Attr_get(MPI_COMM_WORLD, 123456, &v, &flag));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Attr_delete(MPI_COMM_WORLD, 123456));
	MPI_FAILS(MPI_ERR_COMM, MPI_Attr_put(MPI_COMM_NULL, k2, &val));
	MPI_FAILS(MPI_ERR_ARG, MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, NULL, NULL));
	k = MPI_TAG_UB;
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Keyval_free(&k));
}

int main(int argc, char **argv)
{
	int kself;

	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	test_tag_ub();
	test_copy_delete();
	test_errors();
	test_mpi1_names();
	MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &kself, NULL));
	MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, kself, (void *)(intptr_t)(7000 + rank)));
	MPI_OK(MPI_Comm_free_keyval(&kself));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("comm_attrs: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	if (self_deleted != 7000 + rank) {
		fprintf(stderr,
			"FAIL [rank %d]: MPI_COMM_SELF's attribute was not deleted by "
			"MPI_Finalize (%d)\n",
			rank, self_deleted);
		return 1;
	}
	return 0;
}
