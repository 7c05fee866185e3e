/*
 * verbs_reg.c — the production registrar of the cache: ibv_reg_mr and
 * ibv_dereg_mr on one protection domain, and the fork-safety set-up that
 * must precede the first registration (reasoning in reg_cache.h).
 */
#include "reg_cache_int.h"

#include <infiniband/verbs.h>
#include <stdlib.h>

typedef struct verbs_reg {
	struct ibv_pd *pd;
	int access;
} verbs_reg_t;

static ibx_status_t verbs_reg(void *ctx, void *addr, size_t len, void **handle_p, uint32_t *lkey_p,
			      uint32_t *rkey_p)
{
	verbs_reg_t *v = ctx;
	struct ibv_mr *mr;
	int err;

	mr = ibv_reg_mr(v->pd, addr, len, v->access);
	if (!mr) {
		err = errno ? errno : EIO;
		/* The cache decides whether this is an error (OGR splits on
		 * EFAULT) and logs it with strerror; keep errno for it. */
		errno = err;
		switch (err) {
		case EFAULT:
		case EINVAL: return IBX_ERR_INVALID_PARAM;
		case ENOMEM: return IBX_ERR_NO_MEMORY;
		case EPERM:
		case EAGAIN: return IBX_ERR_NO_RESOURCE;
		default: return IBX_ERR_IO;
		}
	}
	*handle_p = mr;
	*lkey_p = mr->lkey;
	*rkey_p = mr->rkey;
	return IBX_OK;
}

static ibx_status_t verbs_dereg(void *ctx, void *handle)
{
	int rc = ibv_dereg_mr(handle);

	(void)ctx;
	if (rc) {
		errno = rc;
		return IBX_ERR_IO;
	}
	return IBX_OK;
}

static const ibx_rcache_reg_ops_t verbs_reg_ops = {
    .name = "ibv_reg_mr",
    .reg = verbs_reg,
    .dereg = verbs_dereg,
};

/* Before the first registration of the process, unless the environment
 * already chose (libibverbs reads RDMAV_FORK_SAFE / IBV_FORK_SAFE itself)
 * or the kernel copes with fork on its own. Once per process. */
static void fork_safe_once(void)
{
	int rc;

	if (getenv("RDMAV_FORK_SAFE") || getenv("IBV_FORK_SAFE"))
		return;
	if (ibv_is_fork_initialized() != IBV_FORK_DISABLED)
		return;
	rc = ibv_fork_init();
	if (rc)
		ibx_warn("ibv_fork_init failed: %s (memory was registered before the registration"
			 " cache was created); registered pages are not protected against fork()",
			 strerror(rc));
}

static void make_fork_safe(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, fork_safe_once);
}

ibx_status_t ibx_rcache_create_verbs(struct ibv_pd *pd, const ibx_rcache_params_t *params,
				     ibx_rcache_t **cache_p)
{
	ibx_rcache_params_t p;
	struct ibv_device_attr attr;
	verbs_reg_t *v;
	ibx_rcache_t *cache;
	ibx_status_t ret;
	int rc;

	if (!pd || !cache_p)
		return IBX_ERR_INVALID_PARAM;
	if (params)
		p = *params;
	else
		ibx_rcache_params_default(&p);
	if (!p.name || !strcmp(p.name, "rcache"))
		p.name = ibv_get_device_name(pd->context->device);

	v = calloc(1, sizeof(*v));
	if (!v) {
		ibx_error("%s: no memory for the registrar", p.name);
		return IBX_ERR_NO_MEMORY;
	}
	v->pd = pd;
	v->access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	rc = ibv_query_device(pd->context, &attr);
	if (rc) {
		ibx_error("%s: ibv_query_device failed: %s", p.name, strerror(rc));
		ret = IBX_ERR_IO;
		goto err_free;
	}
	if (attr.atomic_cap != IBV_ATOMIC_NONE)
		v->access |= IBV_ACCESS_REMOTE_ATOMIC;
	make_fork_safe();

	ret = ibx_rcache_create(&verbs_reg_ops, v, &p, &cache);
	if (ret != IBX_OK)
		goto err_free;
	cache->verbs_ctx = v; /* freed by ibx_rcache_destroy */
	*cache_p = cache;
	return IBX_OK;

err_free:
	free(v);
	return ret;
}
