/*
 * info.c — info objects (MPI-3.1 §9): ordered lists of (key, value) string
 * pairs that carry hints to the calls that take them.
 *
 * Keys and values are C strings taken as they are (only the Fortran
 * binding strips spaces, MPI-3.1 §9); keys keep the order in which they
 * were first set, which is the order MPI_Info_get_nthkey reports. mpi-lite acts on no hint yet: a
 * communicator keeps the hints given to it (MPI_Comm_set_info,
 * MPI_Comm_dup_with_info, MPI_Comm_split_type) and returns them from
 * MPI_Comm_get_info. MPI_INFO_ENV is an empty, read-only object.
 */
#include "mpil_int.h"

#include <stdlib.h>

typedef struct info_kv {
	char *key, *val;
} info_kv_t;

struct mpil_info {
	uint32_t magic;
	int refcount;
	int n, cap;
	info_kv_t *kv;
	bool predefined;
};

struct mpil_info mpil_info_env = {
    .magic = MPIL_MAGIC_INFO,
    .refcount = 1,
    .predefined = true,
};

static mpil_pool_t info_pool = MPIL_POOL_INIT(struct mpil_info);

static void info_clear(MPI_Info info)
{
	for (int i = 0; i < info->n; i++) {
		free(info->kv[i].key);
		free(info->kv[i].val);
	}
	free(info->kv);
	info->kv = NULL;
	info->n = info->cap = 0;
}

void mpil_info_release(MPI_Info info)
{
	if (!info || info->predefined || --info->refcount > 0)
		return;
	info_clear(info);
	mpil_pool_put(&info_pool, info);
}

static void info_destroy_live(void *obj)
{
	info_clear(obj);
}

void mpil_info_fini(void)
{
	mpil_pool_fini(&info_pool, info_destroy_live);
}

int mpil_check_info(MPI_Comm comm, MPI_Info info, bool null_ok, const char *fname)
{
	if (ibx_likely(info && info->magic == MPIL_MAGIC_INFO))
		return MPI_SUCCESS;
	if (!info)
		return null_ok ? MPI_SUCCESS
			       : mpil_err(comm, MPI_ERR_INFO, fname, "info is MPI_INFO_NULL");
	return mpil_err(comm, MPI_ERR_INFO, fname, "invalid info handle %p%s", (void *)info,
			info->magic == MPIL_MAGIC_DEAD ? " (freed)" : "");
}

static MPI_Info info_new(void)
{
	MPI_Info info = mpil_pool_get(&info_pool);

	if (info) {
		info->magic = MPIL_MAGIC_INFO;
		info->refcount = 1;
	}
	return info;
}

int mpil_info_copy(MPI_Info info, MPI_Info *copy_p)
{
	MPI_Info c;

	if (!info) {
		*copy_p = MPI_INFO_NULL;
		return MPI_SUCCESS;
	}
	c = info_new();
	if (!c)
		return MPI_ERR_NO_MEM;
	if (info->n) {
		c->kv = calloc((size_t)info->n, sizeof(*c->kv));
		if (!c->kv) {
			mpil_info_release(c);
			return MPI_ERR_NO_MEM;
		}
		c->cap = info->n;
	}
	for (int i = 0; i < info->n; i++) {
		c->kv[i].key = strdup(info->kv[i].key);
		c->kv[i].val = strdup(info->kv[i].val);
		c->n++;
		if (!c->kv[i].key || !c->kv[i].val) {
			mpil_info_release(c);
			return MPI_ERR_NO_MEM;
		}
	}
	*copy_p = c;
	return MPI_SUCCESS;
}

/* ---- keys and values ------------------------------------------------------------------- */

/* Checks @key (non-NULL, 1..MPI_MAX_INFO_KEY characters) and returns a
 * copy in *key_p. */
static int get_key(const char *key, char **key_p, const char *fname)
{
	size_t n;
	char *k;

	if (!key)
		return mpil_err(NULL, MPI_ERR_INFO_KEY, fname, "key is NULL");
	n = strnlen(key, MPI_MAX_INFO_KEY + 1);
	if (n == 0 || n > MPI_MAX_INFO_KEY)
		return mpil_err(NULL, MPI_ERR_INFO_KEY, fname,
				"key of %s characters (1..%d allowed)", n ? "too many" : "0",
				MPI_MAX_INFO_KEY);
	k = strndup(key, n);
	if (!k)
		return mpil_err(NULL, MPI_ERR_NO_MEM, fname, "no memory");
	*key_p = k;
	return MPI_SUCCESS;
}

static int find(MPI_Info info, const char *key)
{
	for (int i = 0; i < info->n; i++)
		if (strcmp(info->kv[i].key, key) == 0)
			return i;
	return -1;
}

static int check_info(MPI_Info info, bool writable, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	MPIL_CHECK(mpil_check_info(NULL, info, false, fname));
	if (writable && info->predefined)
		return mpil_err(NULL, MPI_ERR_INFO, fname, "MPI_INFO_ENV cannot be changed");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Info_create)
int PMPI_Info_create(MPI_Info *info)
{
	static const char F[] = "MPI_Info_create";
	MPIL_CS_GUARD();
	MPI_Info i;

	MPIL_CHECK(mpil_check_init(F));
	if (!info)
		return mpil_err(NULL, MPI_ERR_ARG, F, "info is NULL");
	i = info_new();
	if (!i)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for an info object");
	*info = i;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Info_set)
int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
	static const char F[] = "MPI_Info_set";
	MPIL_CS_GUARD();
	char *k, *v;
	size_t vlen;
	int i;

	MPIL_CHECK(check_info(info, true, F));
	MPIL_CHECK(get_key(key, &k, F));
	if (!value) {
		free(k);
		return mpil_err(NULL, MPI_ERR_INFO_VALUE, F, "value is NULL");
	}
	vlen = strnlen(value, MPI_MAX_INFO_VAL + 1);
	if (vlen > MPI_MAX_INFO_VAL) {
		free(k);
		return mpil_err(NULL, MPI_ERR_INFO_VALUE, F,
				"value longer than MPI_MAX_INFO_VAL (%d characters)",
				MPI_MAX_INFO_VAL);
	}
	v = strndup(value, vlen);
	if (!v) {
		free(k);
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory");
	}
	i = find(info, k);
	if (i >= 0) {
		free(k);
		free(info->kv[i].val);
		info->kv[i].val = v;
		return MPI_SUCCESS;
	}
	if (info->n == info->cap) {
		int ncap = info->cap ? 2 * info->cap : 8;
		info_kv_t *nkv = realloc(info->kv, (size_t)ncap * sizeof(*nkv));

		if (!nkv) {
			free(k);
			free(v);
			return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory");
		}
		info->kv = nkv;
		info->cap = ncap;
	}
	info->kv[info->n].key = k;
	info->kv[info->n].val = v;
	info->n++;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Info_get)
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
	static const char F[] = "MPI_Info_get";
	MPIL_CS_GUARD();
	char *k;
	int i;

	MPIL_CHECK(check_info(info, false, F));
	if (!flag || !value)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL", flag ? "value" : "flag");
	if (valuelen < 0)
		return mpil_err(NULL, MPI_ERR_ARG, F, "negative valuelen %d", valuelen);
	MPIL_CHECK(get_key(key, &k, F));
	i = find(info, k);
	free(k);
	*flag = i >= 0;
	if (i >= 0) {
		/* at most valuelen characters, and the terminating NUL */
		size_t n = strlen(info->kv[i].val);

		if (n > (size_t)valuelen)
			n = (size_t)valuelen;
		memcpy(value, info->kv[i].val, n);
		value[n] = '\0';
	}
	return MPI_SUCCESS;
}

/* MPI-4.0 §10.2: *buflen is the room at value (NUL included) on entry and
 * the room the whole value needs on return; 0 on entry asks for the size
 * only (value may then be NULL). */
MPIL_PMPI_ALIAS(Info_get_string)
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
	static const char F[] = "MPI_Info_get_string";
	MPIL_CS_GUARD();
	char *k;
	int i;

	MPIL_CHECK(check_info(info, false, F));
	if (!flag || !buflen)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL", flag ? "buflen" : "flag");
	if (*buflen < 0)
		return mpil_err(NULL, MPI_ERR_ARG, F, "negative buflen %d", *buflen);
	if (*buflen > 0 && !value)
		return mpil_err(NULL, MPI_ERR_ARG, F, "value is NULL with buflen %d", *buflen);
	MPIL_CHECK(get_key(key, &k, F));
	i = find(info, k);
	free(k);
	*flag = i >= 0;
	if (i >= 0) {
		size_t n = strlen(info->kv[i].val);

		if (*buflen > 0) {
			size_t c = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;

			memcpy(value, info->kv[i].val, c);
			value[c] = '\0';
		}
		*buflen = (int)n + 1;
	}
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Info_get_valuelen)
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
	static const char F[] = "MPI_Info_get_valuelen";
	MPIL_CS_GUARD();
	char *k;
	int i;

	MPIL_CHECK(check_info(info, false, F));
	if (!flag || !valuelen)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL", flag ? "valuelen" : "flag");
	MPIL_CHECK(get_key(key, &k, F));
	i = find(info, k);
	free(k);
	*flag = i >= 0;
	if (i >= 0)
		*valuelen = (int)strlen(info->kv[i].val);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Info_get_nkeys)
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
	static const char F[] = "MPI_Info_get_nkeys";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_info(info, false, F));
	if (!nkeys)
		return mpil_err(NULL, MPI_ERR_ARG, F, "nkeys is NULL");
	*nkeys = info->n;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Info_get_nthkey)
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
	static const char F[] = "MPI_Info_get_nthkey";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_info(info, false, F));
	if (!key)
		return mpil_err(NULL, MPI_ERR_ARG, F, "key is NULL");
	if (n < 0 || n >= info->n)
		return mpil_err(NULL, MPI_ERR_ARG, F, "key number %d of %d", n, info->n);
	snprintf(key, MPI_MAX_INFO_KEY + 1, "%s", info->kv[n].key);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Info_delete)
int PMPI_Info_delete(MPI_Info info, const char *key)
{
	static const char F[] = "MPI_Info_delete";
	MPIL_CS_GUARD();
	char *k;
	int i;

	MPIL_CHECK(check_info(info, true, F));
	MPIL_CHECK(get_key(key, &k, F));
	i = find(info, k);
	if (i < 0) {
		int err = mpil_err(NULL, MPI_ERR_INFO_NOKEY, F, "no key \"%s\"", k);

		free(k);
		return err;
	}
	free(k);
	free(info->kv[i].key);
	free(info->kv[i].val);
	memmove(&info->kv[i], &info->kv[i + 1], (size_t)(info->n - i - 1) * sizeof(*info->kv));
	info->n--;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Info_dup)
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
	static const char F[] = "MPI_Info_dup";
	MPIL_CS_GUARD();
	int err;

	MPIL_CHECK(check_info(info, false, F));
	if (!newinfo)
		return mpil_err(NULL, MPI_ERR_ARG, F, "newinfo is NULL");
	err = mpil_info_copy(info, newinfo);
	if (err != MPI_SUCCESS)
		return mpil_err(NULL, err, F, "no memory for an info object");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Info_free)
int PMPI_Info_free(MPI_Info *info)
{
	static const char F[] = "MPI_Info_free";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (!info)
		return mpil_err(NULL, MPI_ERR_ARG, F, "info is NULL");
	MPIL_CHECK(check_info(*info, true, F));
	mpil_info_release(*info);
	*info = MPI_INFO_NULL;
	return MPI_SUCCESS;
}
