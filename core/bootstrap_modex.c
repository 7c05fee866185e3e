/*
 * bootstrap_modex.c — the address exchange (modex) of core/bootstrap.c's
 * header: ibx_boot_put, ibx_boot_fence, ibx_boot_get(_known), and
 * ibx_boot_abort, over PMIx or, for a singleton, over a small local list
 * of what was put, so that put / fence / get behave the same as in a job
 * of one rank.
 */
#include "bootstrap_int.h"

#include <stdint.h>
#include <stdlib.h>

/* Our keys live under "ibx." so that they never collide with PMIx's own. */
#define BOOT_KEY_PREFIX "ibx."

/* "ibx.<key>" into @buf; fails on keys PMIx cannot carry. */
static ibx_status_t boot_key(const char *key, char *buf, size_t buflen)
{
	int n;

	if (!key || !*key)
		return IBX_ERR_INVALID_PARAM;
	n = snprintf(buf, buflen, BOOT_KEY_PREFIX "%s", key);
	if (n < 0 || (size_t)n >= buflen) {
		ibx_error("bootstrap key \"%s\" is longer than PMIx allows (%d characters)", key,
			  PMIX_MAX_KEYLEN - (int)strlen(BOOT_KEY_PREFIX));
		return IBX_ERR_INVALID_PARAM;
	}
	return IBX_OK;
}

static boot_kv_t *kv_find(ibx_boot_t *boot, const char *key)
{
	for (boot_kv_t *kv = boot->kv; kv; kv = kv->next)
		if (!strcmp(kv->key, key))
			return kv;
	return NULL;
}

static ibx_status_t kv_put(ibx_boot_t *boot, const char *key, const void *data, size_t len)
{
	boot_kv_t *kv = kv_find(boot, key);
	void *copy;

	copy = malloc(len ? len : 1);
	if (!copy)
		goto err_nomem;
	if (len)
		memcpy(copy, data, len);
	if (!kv) {
		kv = calloc(1, sizeof(*kv));
		if (!kv)
			goto err_free_copy;
		kv->key = strdup(key);
		if (!kv->key)
			goto err_free_kv;
		kv->next = boot->kv;
		boot->kv = kv;
	}
	free(kv->data);
	kv->data = copy;
	kv->len = len;
	return IBX_OK;

err_free_kv:
	free(kv);
err_free_copy:
	free(copy);
err_nomem:
	ibx_error("out of memory storing bootstrap key %s (%zu bytes)", key, len);
	return IBX_ERR_NO_MEMORY;
}

ibx_status_t ibx_boot_put(ibx_boot_t *boot, const char *key, const void *data, size_t len)
{
	char pkey[PMIX_MAX_KEYLEN + 1];
	pmix_value_t val;
	pmix_status_t rc;
	ibx_status_t ret;

	if (!boot || (len && !data) || len > UINT32_MAX)
		return IBX_ERR_INVALID_PARAM;
	ret = boot_key(key, pkey, sizeof(pkey));
	if (ret != IBX_OK)
		return ret;
	if (!boot->pmix)
		return kv_put(boot, pkey, data, len);

	/* PMIx_Put copies the value, so it may point at the caller's bytes. */
	PMIX_VALUE_CONSTRUCT(&val);
	val.type = PMIX_BYTE_OBJECT;
	val.data.bo.bytes = (char *)(uintptr_t)data;
	val.data.bo.size = len;
	rc = PMIx_Put(PMIX_GLOBAL, pkey, &val);
	if (rc != PMIX_SUCCESS) {
		ibx_error("PMIx_Put(%s, %zu bytes) failed: %s", pkey, len, PMIx_Error_string(rc));
		return IBX_ERR_BOOTSTRAP;
	}
	return IBX_OK;
}

ibx_status_t ibx_boot_fence(ibx_boot_t *boot, bool collect)
{
	pmix_info_t info;
	pmix_status_t rc;

	if (!boot)
		return IBX_ERR_INVALID_PARAM;
	if (!boot->pmix)
		return IBX_OK;
	rc = PMIx_Commit();
	if (rc != PMIX_SUCCESS) {
		ibx_error("PMIx_Commit failed: %s", PMIx_Error_string(rc));
		return IBX_ERR_BOOTSTRAP;
	}
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
	rc = PMIx_Fence(&boot->wild, 1, &info, 1);
	PMIX_INFO_DESTRUCT(&info);
	if (rc != PMIX_SUCCESS) {
		ibx_error("PMIx_Fence(%s, collect=%d) failed: %s", boot->me.nspace, (int)collect,
			  PMIx_Error_string(rc));
		return IBX_ERR_BOOTSTRAP;
	}
	boot->collected = collect;
	return IBX_OK;
}

static ibx_status_t singleton_get(ibx_boot_t *boot, const char *pkey, void **data_p, size_t *len_p)
{
	boot_kv_t *kv = kv_find(boot, pkey);
	void *copy;

	if (!kv) {
		ibx_debug("bootstrap key %s was never put", pkey);
		return IBX_ERR_NOT_FOUND;
	}
	copy = malloc(kv->len ? kv->len : 1);
	if (!copy) {
		ibx_error("out of memory reading bootstrap key %s (%zu bytes)", pkey, kv->len);
		return IBX_ERR_NO_MEMORY;
	}
	if (kv->len)
		memcpy(copy, kv->data, kv->len);
	*data_p = copy;
	*len_p = kv->len;
	return IBX_OK;
}

/* PMIx_Get of @rank's @pkey: within IBX_BOOT_TIMEOUT; from the local store
 * only after a collecting fence (@optional), else asked of the server. */
static pmix_status_t pmix_get(ibx_boot_t *boot, int rank, const char *pkey, bool optional, int tmo,
			      pmix_value_t **val_p)
{
	pmix_info_t info[2];
	size_t ninfo = 0;
	pmix_proc_t proc;
	pmix_status_t rc;
	bool yes = true;

	PMIX_INFO_LOAD(&info[ninfo], PMIX_TIMEOUT, &tmo, PMIX_INT);
	ninfo++;
	if (optional) {
		PMIX_INFO_LOAD(&info[ninfo], PMIX_OPTIONAL, &yes, PMIX_BOOL);
		ninfo++;
	}
	PMIX_LOAD_PROCID(&proc, boot->me.nspace, (pmix_rank_t)rank);
	rc = PMIx_Get(&proc, pkey, info, ninfo, val_p);
	for (size_t i = 0; i < ninfo; i++)
		PMIX_INFO_DESTRUCT(&info[i]);
	return rc;
}

static ibx_status_t boot_get(ibx_boot_t *boot, int rank, const char *key, bool known, void **data_p,
			     size_t *len_p)
{
	char pkey[PMIX_MAX_KEYLEN + 1];
	pmix_value_t *val = NULL;
	pmix_status_t rc;
	ibx_status_t ret;
	int tmo;
	void *copy;

	if (!boot || !data_p || !len_p || rank < 0 || rank >= boot->size)
		return IBX_ERR_INVALID_PARAM;
	ret = boot_key(key, pkey, sizeof(pkey));
	if (ret != IBX_OK)
		return ret;
	if (!boot->pmix)
		return singleton_get(boot, pkey, data_p, len_p);

	tmo = boot_timeout_s();
	rc = pmix_get(boot, rank, pkey, boot->collected, tmo, &val);
	if (rc == PMIX_ERR_NOT_FOUND && boot->collected && known) {
		/* PMIx's hash store: the server holds node-local peers' data */
		ibx_debug("bootstrap key %s of rank %d is not in the local store: asking the "
			  "PMIx server",
			  pkey, rank);
		rc = pmix_get(boot, rank, pkey, false, tmo, &val);
	}

	switch (rc) {
	case PMIX_SUCCESS: break;
	case PMIX_ERR_NOT_FOUND:
		ibx_debug("rank %d has no bootstrap key %s", rank, pkey);
		return IBX_ERR_NOT_FOUND;
	case PMIX_ERR_TIMEOUT:
		ibx_error("rank %d did not publish bootstrap key %s within %d s (IBX_BOOT_TIMEOUT)",
			  rank, pkey, tmo);
		return IBX_ERR_TIMEOUT;
	default:
		ibx_error("PMIx_Get(rank %d, %s) failed: %s", rank, pkey, PMIx_Error_string(rc));
		return IBX_ERR_BOOTSTRAP;
	}
	if (!val || val->type != PMIX_BYTE_OBJECT) {
		ibx_error("bootstrap key %s of rank %d has type %s, not a byte object", pkey, rank,
			  val ? PMIx_Data_type_string(val->type) : "(none)");
		ret = IBX_ERR_CORRUPT;
		goto out_release;
	}
	copy = malloc(val->data.bo.size ? val->data.bo.size : 1);
	if (!copy) {
		ibx_error("out of memory reading bootstrap key %s of rank %d (%zu bytes)", pkey,
			  rank, val->data.bo.size);
		ret = IBX_ERR_NO_MEMORY;
		goto out_release;
	}
	if (val->data.bo.size)
		memcpy(copy, val->data.bo.bytes, val->data.bo.size);
	*data_p = copy;
	*len_p = val->data.bo.size;
	ret = IBX_OK;
out_release:
	if (val)
		PMIX_VALUE_RELEASE(val);
	return ret;
}

ibx_status_t ibx_boot_get(ibx_boot_t *boot, int rank, const char *key, void **data_p, size_t *len_p)
{
	return boot_get(boot, rank, key, false, data_p, len_p);
}

ibx_status_t ibx_boot_get_known(ibx_boot_t *boot, int rank, const char *key, void **data_p,
				size_t *len_p)
{
	return boot_get(boot, rank, key, true, data_p, len_p);
}

ibx_status_t ibx_boot_abort(ibx_boot_t *boot, int code, const char *msg)
{
	pmix_status_t rc;

	if (!boot)
		return IBX_ERR_INVALID_PARAM;
	if (!boot->pmix) {
		/* No launcher to tell: say it here, the caller then exits. */
		ibx_error("abort with code %d: %s", code, msg ? msg : "");
		return IBX_OK;
	}
	/* PMIx_Abort returns once the server has the request; the caller
	 * _exit()s, and the launcher ends the rest of the job. */
	rc = PMIx_Abort(code, msg ? msg : "", NULL, 0);
	if (rc != PMIX_SUCCESS) {
		ibx_error("PMIx_Abort(%d, \"%s\") failed: %s", code, msg ? msg : "",
			  PMIx_Error_string(rc));
		return IBX_ERR_BOOTSTRAP;
	}
	return IBX_OK;
}

void ibx_boot_kv_clear(ibx_boot_t *boot)
{
	boot_kv_t *kv, *next;

	for (kv = boot->kv; kv; kv = next) {
		next = kv->next;
		free(kv->key);
		free(kv->data);
		free(kv);
	}
	boot->kv = NULL;
}
