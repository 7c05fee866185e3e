/*
 * bootstrap_int.h — private to core/bootstrap.c and core/bootstrap_modex.c:
 * the bootstrap object both fill in, and the time limit both apply to
 * PMIx_Get.
 */
#ifndef IBX_BOOTSTRAP_INT_H
#define IBX_BOOTSTRAP_INT_H

#include "ibx_int.h"
#include "bootstrap.h"

#include <limits.h>
#include <pmix.h>
#include <stdatomic.h>

typedef struct boot_kv {
	struct boot_kv *next;
	char *key;
	void *data;
	size_t len;
} boot_kv_t;

struct ibx_boot {
	bool pmix;	/* PMIx_Init succeeded: PMIx_Finalize at fini */
	bool collected; /* the last fence collected every peer's data */
	pmix_proc_t me;
	pmix_proc_t wild; /* our namespace, PMIX_RANK_WILDCARD */
	int rank;
	int size;
	int local_size;
	int *local_ranks; /* [local_size], ascending, self included */
	char job_id[IBX_BOOT_JOB_ID_MAX];
	boot_kv_t *kv; /* singleton only: what was put */
	/* peers the launcher reported gone (bootstrap_events.c): [size],
	 * 0 = no report, else exit status + 1; lost_gen moves with each */
	_Atomic int *lost;
	_Atomic unsigned lost_gen;
	size_t ev_id;
	bool ev_registered;
};

static inline int boot_timeout_s(void)
{
	int64_t t = ibx_core_config()->BOOT_TIMEOUT;

	return t < 1 ? 1 : t > INT_MAX ? INT_MAX : (int)t;
}

/* bootstrap_events.c: the handler of the launcher's "process gone" events */
void ibx_boot_events_init(ibx_boot_t *boot);
void ibx_boot_events_fini(ibx_boot_t *boot);

/* Frees what a singleton put (bootstrap_modex.c). */
void ibx_boot_kv_clear(ibx_boot_t *boot);

#endif /* IBX_BOOTSTRAP_INT_H */
