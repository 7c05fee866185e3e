/* ibx-test: np=1,2,3,4 timeout=60 nodes=1 */
/*
 * info_objects — MPI_Info: set/get (value truncated to valuelen; C strings
 * taken as they are, spaces included), get_valuelen, nkeys and nthkey in
 * insertion order, overwriting, delete (MPI_ERR_INFO_NOKEY when absent),
 * dup (independent copies), free; MPI-4.0's MPI_Info_get_string (the size
 * query, truncation, the size needed); MPI_INFO_NULL and MPI_INFO_ENV; the
 * error classes of too-long keys and values and of bad handles; and info
 * objects handed to communicators (MPI_Comm_set_info / get_info,
 * MPI_Comm_dup_with_info, MPI_Comm_split_type) come back as given.
 */
#include "mpitest.h"

static int rank, size;

static void expect_value(MPI_Info info, const char *key, const char *want)
{
	char v[MPI_MAX_INFO_VAL + 1];
	int flag, len;

	MPI_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
	if (!want) {
		CHECK(!flag, "key \"%s\" present with \"%s\"", key, v);
		return;
	}
	CHECK(flag && strcmp(v, want) == 0, "key \"%s\": \"%s\", expected \"%s\"", key,
	      flag ? v : "(absent)", want);
	MPI_OK(MPI_Info_get_valuelen(info, key, &len, &flag));
	CHECK(flag && len == (int)strlen(want), "valuelen of \"%s\": %d", key, len);
}

static void test_basic(void)
{
	MPI_Info info, copy;
	char key[MPI_MAX_INFO_KEY + 1], v[8];
	int n, flag;

	MPI_OK(MPI_Info_create(&info));
	MPI_OK(MPI_Info_get_nkeys(info, &n));
	CHECK(n == 0, "new info has %d keys", n);
	MPI_OK(MPI_Info_set(info, "alpha", "1"));
	MPI_OK(MPI_Info_set(info, "beta", "  two words  "));
	MPI_OK(MPI_Info_set(info, " beta", "spaced key"));
	MPI_OK(MPI_Info_set(info, "gamma", "a much longer value"));
	MPI_OK(MPI_Info_set(info, "alpha", "one")); /* overwrite keeps the position */
	MPI_OK(MPI_Info_get_nkeys(info, &n));
	CHECK(n == 4, "nkeys %d", n);
	{
		const char *order[4] = {"alpha", "beta", " beta", "gamma"};

		for (int i = 0; i < 4; i++) {
			MPI_OK(MPI_Info_get_nthkey(info, i, key));
			CHECK(strcmp(key, order[i]) == 0, "key %d is \"%s\", expected \"%s\"", i,
			      key, order[i]);
		}
	}
	expect_value(info, "alpha", "one");
	expect_value(info, "beta", "  two words  ");
	expect_value(info, " beta", "spaced key");
	expect_value(info, "gamma", "a much longer value");
	expect_value(info, " gamma", NULL);
	expect_value(info, "delta", NULL);
	/* valuelen shorter than the value: truncated, NUL-terminated */
	memset(v, 'x', sizeof(v));
	MPI_OK(MPI_Info_get(info, "gamma", 4, v, &flag));
	CHECK(flag && strcmp(v, "a mu") == 0, "truncated value \"%s\"", v);

	/* dup is a separate object */
	MPI_OK(MPI_Info_dup(info, &copy));
	MPI_OK(MPI_Info_delete(info, "beta"));
	MPI_OK(MPI_Info_set(copy, "epsilon", "5"));
	expect_value(info, "beta", NULL);
	expect_value(copy, "beta", "  two words  ");
	expect_value(info, "epsilon", NULL);
	MPI_OK(MPI_Info_get_nkeys(info, &n));
	CHECK(n == 3, "after delete: %d keys", n);
	MPI_OK(MPI_Info_get_nthkey(info, 1, key));
	CHECK(strcmp(key, " beta") == 0, "key 1 after delete: \"%s\"", key);
	MPI_OK(MPI_Info_get_nkeys(copy, &n));
	CHECK(n == 5, "copy has %d keys", n);

	MPI_OK(MPI_Info_free(&copy));
	CHECK(copy == MPI_INFO_NULL, "Info_free did not reset the handle");
	MPI_OK(MPI_Info_free(&info));

	/* MPI_INFO_ENV can be read */
	MPI_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
	CHECK(n >= 0, "MPI_INFO_ENV nkeys %d", n);
}

static void test_errors(void)
{
	MPI_Info info, stale;
	char longkey[MPI_MAX_INFO_KEY + 2], *longval = malloc(MPI_MAX_INFO_VAL + 2), key[8];
	int flag, n;

	CHECK(longval, "out of memory");
	memset(longkey, 'k', sizeof(longkey) - 1);
	longkey[sizeof(longkey) - 1] = '\0';
	memset(longval, 'v', MPI_MAX_INFO_VAL + 1);
	longval[MPI_MAX_INFO_VAL + 1] = '\0';
	MPI_OK(MPI_Info_create(&info));
	MPI_FAILS(MPI_ERR_INFO_KEY, MPI_Info_set(info, longkey, "x"));
	MPI_FAILS(MPI_ERR_INFO_KEY, MPI_Info_set(info, "", "x"));
	MPI_FAILS(MPI_ERR_INFO_VALUE, MPI_Info_set(info, "k", longval));
	MPI_FAILS(MPI_ERR_INFO_NOKEY, MPI_Info_delete(info, "absent"));
	MPI_FAILS(MPI_ERR_ARG, MPI_Info_get_nthkey(info, 0, key));
	MPI_FAILS(MPI_ERR_ARG, MPI_Info_get(info, "k", -1, key, &flag));
	MPI_FAILS(MPI_ERR_INFO, MPI_Info_set(MPI_INFO_NULL, "k", "v"));
	MPI_FAILS(MPI_ERR_INFO, MPI_Info_get_nkeys(MPI_INFO_NULL, &n));
	MPI_FAILS(MPI_ERR_INFO, MPI_Info_free(&(MPI_Info){MPI_INFO_NULL}));
	MPI_FAILS(MPI_ERR_ARG, MPI_Info_create(NULL));
	/* a key of exactly the maximum length is fine */
	longkey[MPI_MAX_INFO_KEY] = '\0';
	MPI_OK(MPI_Info_set(info, longkey, "ok"));
	expect_value(info, longkey, "ok");
	stale = info;
	MPI_OK(MPI_Info_free(&info));
	MPI_FAILS(MPI_ERR_INFO, MPI_Info_get_nkeys(stale, &n));
	free(longval);
}

static void test_comm_hints(void)
{
	MPI_Info info, used;
	MPI_Comm d, node;
	int n;

	MPI_OK(MPI_Info_create(&info));
	MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
	MPI_OK(MPI_Info_set(info, "my_hint", "42"));
	/* no hints yet: an empty object */
	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
	MPI_OK(MPI_Comm_get_info(d, &used));
	MPI_OK(MPI_Info_get_nkeys(used, &n));
	CHECK(n == 0, "fresh dup has %d hints", n);
	MPI_OK(MPI_Info_free(&used));
	MPI_OK(MPI_Comm_set_info(d, info));
	MPI_OK(MPI_Comm_get_info(d, &used));
	expect_value(used, "my_hint", "42");
	MPI_OK(MPI_Info_free(&used));
	MPI_OK(MPI_Comm_free(&d));

	/* the communicator keeps its own copy: freeing ours changes nothing */
	MPI_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &d));
	MPI_OK(MPI_Comm_split_type(d, MPI_COMM_TYPE_SHARED, 0, info, &node));
	MPI_OK(MPI_Info_free(&info));
	MPI_OK(MPI_Comm_get_info(d, &used));
	expect_value(used, "mpi_assert_no_any_tag", "true");
	MPI_OK(MPI_Info_free(&used));
	MPI_OK(MPI_Comm_get_info(node, &used));
	expect_value(used, "my_hint", "42");
	MPI_OK(MPI_Info_free(&used));
	MPI_OK(MPI_Barrier(node));
	MPI_OK(MPI_Comm_free(&node));
	MPI_OK(MPI_Comm_free(&d));
	MPI_FAILS(MPI_ERR_INFO, MPI_Comm_set_info(MPI_COMM_WORLD, MPI_INFO_NULL));
	MPI_FAILS(MPI_ERR_ARG, MPI_Comm_get_info(MPI_COMM_WORLD, NULL));
}

static void test_get_string(void)
{
	MPI_Info info;
	char buf[16];
	int len, flag;

	MPI_OK(MPI_Info_create(&info));
	MPI_OK(MPI_Info_set(info, "color", "ultramarine"));
	len = 0; /* a size query: value may be NULL */
	MPI_OK(MPI_Info_get_string(info, "color", &len, NULL, &flag));
	CHECK(flag && len == 12, "query: flag %d len %d", flag, len);
	len = (int)sizeof(buf);
	MPI_OK(MPI_Info_get_string(info, "color", &len, buf, &flag));
	CHECK(flag && len == 12 && strcmp(buf, "ultramarine") == 0, "whole: %d \"%s\"", len, buf);
	len = 6; /* room for 5 characters and the NUL */
	MPI_OK(MPI_Info_get_string(info, "color", &len, buf, &flag));
	CHECK(flag && len == 12 && strcmp(buf, "ultra") == 0, "cut: %d \"%s\"", len, buf);
	len = 6;
	MPI_OK(MPI_Info_get_string(info, "absent", &len, buf, &flag));
	CHECK(!flag && len == 6, "absent key: flag %d len %d", flag, len);
	MPI_FAILS(MPI_ERR_ARG, MPI_Info_get_string(info, "color", NULL, buf, &flag));
	len = 4;
	MPI_FAILS(MPI_ERR_ARG, MPI_Info_get_string(info, "color", &len, NULL, &flag));
	MPI_FAILS(MPI_ERR_INFO, MPI_Info_get_string(MPI_INFO_NULL, "color", &len, buf, &flag));
	MPI_OK(MPI_Info_free(&info));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, &rank, &size);
	MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	test_basic();
	test_errors();
	test_get_string();
	test_comm_hints();
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("info_objects: OK on %d ranks\n", size);
	MPI_OK(MPI_Finalize());
	return 0;
}
