/* ibx-test: np=1,2,3,4 timeout=60 launchers=mpilite,ompi nodes=1 */
/*
 * rma_win_attrs — what a window carries besides its memory: its group (the
 * creating communicator's), its name (empty by default, cut at
 * MPI_MAX_OBJECT_NAME - 1), user attributes (MPI_Win_set/get/delete_attr,
 * a replaced value deleted first, delete callbacks at MPI_Win_free newest
 * first, a keyval freed while still in use, MPI_WIN_NULL_DELETE_FN and the
 * copy-function objects), keyvals of the wrong kind and predefined ones
 * (MPI_ERR_KEYVAL), and the info hints: MPI_Win_get_info returns every
 * hint with its value (defaults, then as given at creation), MPI_Win_set_info
 * changes those that may change, alloc_shared_noncontig starts each part of
 * a shared window on a page of its own, and a bad value is MPI_ERR_INFO_VALUE.
 */
#include "mpitest.h"

#include <stdbool.h>
#include <unistd.h>

static int rank, size;
static int deleted[8], ndeleted, extra_marker;
static MPI_Win expect_win;

static int del_cb(MPI_Win win, int keyval, void *val, void *extra)
{
	CHECK(extra == &extra_marker, "delete callback: wrong extra_state");
	CHECK(win == expect_win, "delete callback: window %p, expected %p", (void *)win,
	      (void *)expect_win);
	if (ndeleted < 8)
		deleted[ndeleted++] = (int)(intptr_t)val;
	return MPI_SUCCESS;
}

static void expect_hint(MPI_Info info, const char *key, const char *want)
{
	char val[MPI_MAX_INFO_VAL + 1];
	int flag = 0;

	MPI_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag));
	CHECK(flag, "MPI_Win_get_info has no %s", key);
	CHECK(strcmp(val, want) == 0, "hint %s is \"%s\", expected \"%s\"", key, val, want);
}

static void test_group_name(void)
{
	char name[MPI_MAX_OBJECT_NAME], longname[200];
	MPI_Group wg, cg;
	MPI_Win win;
	int len = -1, cmp;
	char buf[16];

	MPI_OK(MPI_Win_create(buf, sizeof(buf), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	MPI_OK(MPI_Win_get_group(win, &wg));
	MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &cg));
	MPI_OK(MPI_Group_compare(wg, cg, &cmp));
	CHECK(cmp == MPI_IDENT, "window group vs world group: %d", cmp);
	MPI_OK(MPI_Group_free(&wg));
	MPI_OK(MPI_Group_free(&cg));

	MPI_OK(MPI_Win_get_name(win, name, &len));
	CHECK(len == 0 && name[0] == '\0', "default name \"%s\" (%d)", name, len);
	MPI_OK(MPI_Win_set_name(win, "halo window"));
	MPI_OK(MPI_Win_get_name(win, name, &len));
	CHECK(len == 11 && strcmp(name, "halo window") == 0, "name \"%s\" (%d)", name, len);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	MPI_OK(MPI_Win_set_name(win, longname));
	MPI_OK(MPI_Win_get_name(win, name, &len));
	CHECK(len == MPI_MAX_OBJECT_NAME - 1 && (int)strlen(name) == len, "long name cut to %d",
	      len);
	MPI_OK(MPI_Win_free(&win));
}

static void test_keyvals(void)
{
	int kv1, kv2, kv3, ckv, flag;
	void *val;
	MPI_Win win;
	MPI_Aint *sz;
	char buf[16];

	MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_cb, &kv1, &extra_marker));
	MPI_OK(MPI_Win_create_keyval(MPI_WIN_DUP_FN, del_cb, &kv2, &extra_marker));
	MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kv3, NULL));
	MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckv, NULL));
	MPI_OK(MPI_Win_allocate(16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &val, &win));
	expect_win = win;

	MPI_OK(MPI_Win_get_attr(win, kv1, &val, &flag));
	CHECK(!flag, "attribute set before it was");
	MPI_OK(MPI_Win_set_attr(win, kv1, (void *)(intptr_t)11));
	MPI_OK(MPI_Win_set_attr(win, kv2, (void *)(intptr_t)21));
	MPI_OK(MPI_Win_set_attr(win, kv3, (void *)(intptr_t)31));
	MPI_OK(MPI_Win_get_attr(win, kv1, &val, &flag));
	CHECK(flag && (intptr_t)val == 11, "kv1 value %ld", (long)(intptr_t)val);
	/* replacing deletes the old value first */
	MPI_OK(MPI_Win_set_attr(win, kv1, (void *)(intptr_t)12));
	CHECK(ndeleted == 1 && deleted[0] == 11, "replace: %d deletes, first %d", ndeleted,
	      deleted[0]);
	MPI_OK(MPI_Win_delete_attr(win, kv3));
	MPI_OK(MPI_Win_get_attr(win, kv3, &val, &flag));
	CHECK(!flag, "kv3 still there after delete");
	MPI_OK(MPI_Win_delete_attr(win, kv3)); /* nothing cached: fine */

	/* wrong kinds and predefined keyvals */
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Win_set_attr(win, ckv, NULL));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Win_get_attr(win, ckv, &val, &flag));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Win_set_attr(win, MPI_WIN_SIZE, NULL));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Win_delete_attr(win, MPI_WIN_BASE));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Win_get_attr(win, MPI_TAG_UB, &val, &flag));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, kv1, NULL));
	MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
	CHECK(flag && *sz == 16, "MPI_WIN_SIZE %ld", (long)*sz);

	/* a keyval freed while in use keeps its callback until the free */
	MPI_OK(MPI_Win_free_keyval(&kv2));
	CHECK(kv2 == MPI_KEYVAL_INVALID, "freed keyval not reset");
	MPI_FAILS(MPI_ERR_KEYVAL, MPI_Win_free_keyval(&kv2));
	ndeleted = 0;
	MPI_OK(MPI_Win_free(&win));
	/* newest first (a replaced value keeps its place): kv2, then kv1 */
	CHECK(ndeleted == 2 && deleted[0] == 21 && deleted[1] == 12,
	      "free: %d deletes (%d, %d), expected 21 then 12", ndeleted, deleted[0], deleted[1]);
	MPI_OK(MPI_Win_free_keyval(&kv1));
	MPI_OK(MPI_Win_free_keyval(&kv3));
	MPI_OK(MPI_Comm_free_keyval(&ckv));

	/* the copy-function objects themselves */
	{
		int f = -1;
		void *out = NULL;

		MPI_OK(MPI_WIN_DUP_FN(MPI_WIN_NULL, 0, NULL, buf, &out, &f));
		CHECK(f == 1 && out == buf, "MPI_WIN_DUP_FN");
		MPI_OK(MPI_WIN_NULL_COPY_FN(MPI_WIN_NULL, 0, NULL, buf, &out, &f));
		CHECK(f == 0, "MPI_WIN_NULL_COPY_FN");
	}
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void test_info(void)
{
	MPI_Info info, used;
	MPI_Win win;
	void *base;
	long pg = sysconf(_SC_PAGESIZE);
	int rc;

	/* defaults */
	MPI_OK(MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
	MPI_OK(MPI_Win_get_info(win, &used));
	expect_hint(used, "no_locks", "false");
	expect_hint(used, "accumulate_ordering", "rar,raw,war,waw");
	expect_hint(used, "accumulate_ops", "same_op_no_op");
	expect_hint(used, "same_size", "false");
	expect_hint(used, "same_disp_unit", "false");
	expect_hint(used, "alloc_shared_noncontig", "false");
	MPI_OK(MPI_Info_free(&used));
	/* set_info changes what may change */
	MPI_OK(MPI_Info_create(&info));
	MPI_OK(MPI_Info_set(info, "accumulate_ordering", "raw, waw"));
	MPI_OK(MPI_Info_set(info, "accumulate_ops", "same_op"));
	MPI_OK(MPI_Info_set(info, "no_locks", "true"));
	MPI_OK(MPI_Info_set(info, "same_size", "true")); /* creation-time: stays false */
	MPI_OK(MPI_Info_set(info, "mpil_unknown_hint", "kept"));
	MPI_OK(MPI_Win_set_info(win, info));
	MPI_OK(MPI_Info_free(&info));
	MPI_OK(MPI_Win_get_info(win, &used));
	expect_hint(used, "accumulate_ordering", "raw,waw");
	expect_hint(used, "accumulate_ops", "same_op");
	expect_hint(used, "no_locks", "true");
	expect_hint(used, "same_size", "false");
	expect_hint(used, "mpil_unknown_hint", "kept");
	MPI_OK(MPI_Info_free(&used));
	/* no_locks: a lock is an error */
	MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
	MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, win));
	/* bad values */
	MPI_OK(MPI_Info_create(&info));
	MPI_OK(MPI_Info_set(info, "accumulate_ordering", "rar,sideways"));
	MPI_FAILS(MPI_ERR_INFO_VALUE, MPI_Win_set_info(win, info));
	MPI_OK(MPI_Info_set(info, "accumulate_ordering", "none"));
	MPI_OK(MPI_Info_set(info, "no_locks", "maybe"));
	MPI_FAILS(MPI_ERR_INFO_VALUE, MPI_Win_set_info(win, info));
	MPI_OK(MPI_Info_free(&info));
	MPI_FAILS(MPI_ERR_INFO, MPI_Win_set_info(win, MPI_INFO_NULL));
	MPI_OK(MPI_Win_free(&win));

	/* at creation: every hint as given; a bad one fails on the communicator */
	MPI_OK(MPI_Info_create(&info));
	MPI_OK(MPI_Info_set(info, "accumulate_ordering", "none"));
	MPI_OK(MPI_Info_set(info, "same_size", "true"));
	MPI_OK(MPI_Info_set(info, "same_disp_unit", "true"));
	MPI_OK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
	MPI_OK(MPI_Win_allocate(40, 4, info, MPI_COMM_WORLD, &base, &win));
	MPI_OK(MPI_Win_get_info(win, &used));
	expect_hint(used, "accumulate_ordering", "none");
	expect_hint(used, "same_size", "true");
	expect_hint(used, "same_disp_unit", "true");
	expect_hint(used, "alloc_shared_noncontig", "true");
	MPI_OK(MPI_Info_free(&used));
	MPI_OK(MPI_Win_free(&win));
	{
		MPI_Comm node;
		MPI_Aint qs;
		int qdu, nsize, nrank;
		char *q0, *q1;

		MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
					   &node));
		MPI_OK(MPI_Comm_size(node, &nsize));
		MPI_OK(MPI_Comm_rank(node, &nrank));
		if (nsize > 1) {
			/* noncontig: each part on a page of its own */
			MPI_OK(MPI_Win_allocate_shared(40, 4, info, node, &base, &win));
			MPI_OK(MPI_Win_shared_query(win, 0, &qs, &qdu, &q0));
			MPI_OK(MPI_Win_shared_query(win, 1, &qs, &qdu, &q1));
			CHECK(qs == 40 && q1 - q0 == pg, "noncontig parts %ld bytes apart",
			      (long)(q1 - q0));
			CHECK((uintptr_t)base % (uintptr_t)pg == 0, "part not page aligned");
			MPI_OK(MPI_Win_free(&win));
			/* noncontig, a part of size 0: NULL (as MPICH; contiguous
			 * windows give where the part would start); sizes differ, so
			 * not with the info above (same_size) */
			MPI_Info nc;

			MPI_OK(MPI_Info_create(&nc));
			MPI_OK(MPI_Info_set(nc, "alloc_shared_noncontig", "true"));
			MPI_OK(
			    MPI_Win_allocate_shared(nrank == 1 ? 0 : 40, 4, nc, node, &base, &win));
			MPI_OK(MPI_Win_shared_query(win, 1, &qs, &qdu, &q1));
			CHECK(qs == 0 && q1 == NULL, "noncontig empty part: %ld bytes at %p",
			      (long)qs, (void *)q1);
			MPI_OK(MPI_Win_free(&win));
			MPI_OK(MPI_Info_free(&nc));
		}
		MPI_OK(MPI_Comm_free(&node));
	}
	MPI_OK(MPI_Info_free(&info));
	MPI_OK(MPI_Info_create(&info));
	MPI_OK(MPI_Info_set(info, "accumulate_ops", "sum_only"));
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	rc = MPI_Win_allocate(8, 1, info, MPI_COMM_WORLD, &base, &win);
	CHECK(rc == MPI_ERR_INFO_VALUE, "bad accumulate_ops at creation: %d", rc);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
	MPI_OK(MPI_Info_free(&info));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	test_group_name();
	test_keyvals();
	test_info();
	MPI_OK(MPI_Finalize());
	if (rank == 0)
		printf("rma_win_attrs: ok (%d ranks)\n", size);
	return 0;
}
