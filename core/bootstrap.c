/*
 * bootstrap.c — how a process learns its rank, the job size and its
 * node-local peers, and how it exchanges addresses with its peers: a PMIx
 * client (any PMIx launcher: mpilite-run, Open MPI's mpirun, srun
 * --mpi=pmix), or a job of size 1 when the process was started alone.
 *
 * Start-up detection (docs/pmix.md, "How a process learns how it was
 * started"), checked in this order before anything touches PMIx:
 *
 *   PMIX_NAMESPACE or PMIX_SERVER_URI* set ──> PMIx_Init; failure is fatal
 *   SLURM_STEP_NUM_TASKS > 1              ──> refuse: srun without --mpi=pmix
 *   PMI_FD or PMI_RANK set                ──> refuse: hydra speaks PMI-1/2
 *   otherwise                             ──> singleton, rank 0 of 1, no PMIx
 *
 * The address exchange (modex) of a PMIx job:
 *
 *   rank r                      PMIx server (launcher)          rank s
 *     │ ibx_boot_put(k, blob)         │                            │
 *     │   PMIx_Put(GLOBAL,"ibx.k")    │                            │
 *     │ ibx_boot_fence(collect)       │                            │
 *     │   PMIx_Commit ───────────────>│<─────────────── PMIx_Commit│
 *     │   PMIx_Fence(wildcard) ──────>│<──────────────── PMIx_Fence│
 *     │<── all blobs (collect=true) ──┼── all blobs (collect=true)>│
 *     │ ibx_boot_get(s, k)            │                            │
 *     │   PMIx_Get(s, "ibx.k") from the local copy, or asked of    │
 *     │   the server when the fence did not collect (direct modex) │
 *
 * Nothing may block forever on a key a peer never put: job-level keys are
 * read with PMIX_OPTIONAL first (they arrive with PMIx_Init), and peers'
 * keys with PMIX_TIMEOUT (IBX_BOOT_TIMEOUT) plus PMIX_OPTIONAL after a
 * collecting fence. Then the local store has every remote peer's blob, and
 * with PMIx's shared-memory stores (ds21, ds12) the node-local peers' too,
 * so "absent" is final. PMIx's "hash" store (PMIX_MCA_gds=hash, or a
 * launcher built without the others) leaves node-local peers' data at the
 * server: a key every peer put (ibx_boot_get_known) missing locally is then
 * asked of the server, which answers at once (0.2-0.7 ms here) when it has
 * it and waits when it does not, so an optional key is never asked there.
 * Integer values are accepted in whatever width the launcher chose, and
 * every value's type is checked before it is read.
 *
 * This file is the start-up and the job's description; the exchange
 * itself (put, fence, get) and abort are bootstrap_modex.c.
 */
#include "bootstrap_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

extern char **environ;

/* ---- job id ---------------------------------------------------------------- */

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

void ibx_boot_sanitize_id(const char *in, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0, inlen;

	if (!out || outlen == 0)
		return;
	if (!in || !*in)
		in = "job";
	inlen = strlen(in);
	for (; in[n] && n + 1 < outlen; n++) {
		unsigned char c = (unsigned char)in[n];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || (c == '.' && n > 0);
		out[n] = ok ? (char)c : '_';
	}
	out[n] = '\0';
	/* Too long: the head, '_' and a hash of the whole input. */
	if (inlen > n && outlen >= 10) {
		uint32_t h = fnv1a(in);
		char *p = out + outlen - 10;

		*p++ = '_';
		for (int i = 7; i >= 0; i--)
			*p++ = hex[(h >> (4 * i)) & 0xf];
		*p = '\0';
	}
}

/* ---- start-up detection ---------------------------------------------------- */

typedef enum {
	BOOT_PMIX,
	BOOT_SRUN_NO_PMIX,
	BOOT_HYDRA,
	BOOT_SINGLETON,
} boot_kind_t;

/* The variable that gave the launcher away, for messages. */
static const char *pmix_env_var(void)
{
	if (getenv("PMIX_NAMESPACE"))
		return "PMIX_NAMESPACE";
	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, "PMIX_SERVER_URI", strlen("PMIX_SERVER_URI")))
			return "PMIX_SERVER_URI*";
	return NULL;
}

static long srun_tasks(void)
{
	const char *s = getenv("SLURM_STEP_NUM_TASKS");
	char *end;
	long v;

	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end != '\0')
		return 0;
	return v;
}

static boot_kind_t boot_detect(void)
{
	if (pmix_env_var())
		return BOOT_PMIX;
	if (srun_tasks() > 1)
		return BOOT_SRUN_NO_PMIX;
	if (getenv("PMI_FD") || getenv("PMI_RANK"))
		return BOOT_HYDRA;
	return BOOT_SINGLETON;
}

/* ---- PMIx helpers ------------------------------------------------------------ */

/* Any unsigned-valued PMIx integer, whatever width the server chose. */
static bool pmix_value_to_u64(const pmix_value_t *v, uint64_t *out)
{
	int64_t s;

	switch (v->type) {
	case PMIX_UINT8: *out = v->data.uint8; return true;
	case PMIX_UINT16: *out = v->data.uint16; return true;
	case PMIX_UINT32: *out = v->data.uint32; return true;
	case PMIX_UINT64: *out = v->data.uint64; return true;
	case PMIX_SIZE: *out = v->data.size; return true;
	case PMIX_PROC_RANK: *out = v->data.rank; return true;
	case PMIX_INT8: s = v->data.int8; break;
	case PMIX_INT16: s = v->data.int16; break;
	case PMIX_INT32: s = v->data.int32; break;
	case PMIX_INT64: s = v->data.int64; break;
	case PMIX_INT: s = v->data.integer; break;
	default: return false;
	}
	if (s < 0)
		return false;
	*out = (uint64_t)s;
	return true;
}

/* A job-level key of our namespace. These come with PMIx_Init, so the local
 * store is asked first (PMIX_OPTIONAL); a launcher that hands them out on
 * request only is then asked, with a time limit. */
static pmix_status_t job_get(ibx_boot_t *boot, const char *key, pmix_value_t **val_p)
{
	pmix_info_t info;
	bool yes = true;
	int tmo = boot_timeout_s();
	pmix_status_t rc;

	PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &yes, PMIX_BOOL);
	rc = PMIx_Get(&boot->wild, key, &info, 1, val_p);
	PMIX_INFO_DESTRUCT(&info);
	if (rc != PMIX_ERR_NOT_FOUND)
		return rc;
	PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &tmo, PMIX_INT);
	rc = PMIx_Get(&boot->wild, key, &info, 1, val_p);
	PMIX_INFO_DESTRUCT(&info);
	return rc;
}

static ibx_status_t job_get_u64(ibx_boot_t *boot, const char *key, uint64_t *out_p)
{
	pmix_value_t *val = NULL;
	pmix_status_t rc;
	ibx_status_t ret = IBX_OK;

	rc = job_get(boot, key, &val);
	if (rc != PMIX_SUCCESS || !val) {
		ibx_error("PMIx_Get(%s, %s) failed: %s", boot->me.nspace, key,
			  PMIx_Error_string(rc));
		return IBX_ERR_BOOTSTRAP;
	}
	if (!pmix_value_to_u64(val, out_p)) {
		ibx_error("PMIx key %s has type %s, not an unsigned integer", key,
			  PMIx_Data_type_string(val->type));
		ret = IBX_ERR_BOOTSTRAP;
	}
	PMIX_VALUE_RELEASE(val);
	return ret;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/*
 * Parses PMIX_LOCAL_PEERS ("0,1,2"; ranges "0-3" are accepted too, some
 * servers may compress) into a sorted, duplicate-free array that must
 * contain @self. Returns the count, -1 on a malformed string, or -2 when
 * the list is well formed but does not name @self (two "nodes" that share
 * a host name, for one).
 */
static int parse_local_peers(const char *s, int size, int self, int **ranks_p)
{
	int *ranks, n = 0, cap = 16;
	const char *p = s;
	bool have_self = false;

	ranks = malloc(sizeof(*ranks) * (size_t)cap);
	if (!ranks)
		return -1;
	while (*p) {
		char *end;
		long lo, hi;

		errno = 0;
		lo = strtol(p, &end, 10);
		if (errno || end == p || lo < 0 || lo >= size)
			goto err;
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (errno || end == p || hi < lo || hi >= size)
				goto err;
		}
		for (long r = lo; r <= hi; r++) {
			if (n == cap) {
				int *nr;

				if (cap >= size)
					goto err; /* more entries than ranks: duplicates */
				cap = cap * 2 > size ? size : cap * 2;
				nr = realloc(ranks, sizeof(*ranks) * (size_t)cap);
				if (!nr)
					goto err;
				ranks = nr;
			}
			ranks[n++] = (int)r;
		}
		if (*end == ',')
			end++;
		else if (*end != '\0')
			goto err;
		p = end;
	}
	qsort(ranks, (size_t)n, sizeof(*ranks), cmp_int);
	for (int i = 0; i < n; i++) {
		if (i > 0 && ranks[i] == ranks[i - 1])
			goto err;
		if (ranks[i] == self)
			have_self = true;
	}
	if (!have_self) {
		free(ranks);
		return -2;
	}
	*ranks_p = ranks;
	return n;
err:
	free(ranks);
	return -1;
}

static ibx_status_t boot_local_peers(ibx_boot_t *boot)
{
	pmix_value_t *val = NULL;
	pmix_status_t rc;
	uint64_t lsize;
	int n;

	rc = job_get(boot, PMIX_LOCAL_PEERS, &val);
	if (rc != PMIX_SUCCESS || !val) {
		ibx_error("the launcher gave no %s (%s): cannot tell node-local peers",
			  PMIX_LOCAL_PEERS, PMIx_Error_string(rc));
		return IBX_ERR_BOOTSTRAP;
	}
	if (val->type != PMIX_STRING || !val->data.string) {
		ibx_error("PMIx key %s has type %s, not a string", PMIX_LOCAL_PEERS,
			  PMIx_Data_type_string(val->type));
		PMIX_VALUE_RELEASE(val);
		return IBX_ERR_BOOTSTRAP;
	}
	n = parse_local_peers(val->data.string, boot->size, boot->rank, &boot->local_ranks);
	if (n == -2) {
		ibx_error("%s \"%s\" does not list this process (rank %d of %d): the launcher "
			  "gave it another node's peers (two nodes under one host name?)",
			  PMIX_LOCAL_PEERS, val->data.string, boot->rank, boot->size);
		PMIX_VALUE_RELEASE(val);
		return IBX_ERR_BOOTSTRAP;
	}
	if (n < 0) {
		ibx_error("malformed %s \"%s\" (job size %d, own rank %d)", PMIX_LOCAL_PEERS,
			  val->data.string, boot->size, boot->rank);
		PMIX_VALUE_RELEASE(val);
		return IBX_ERR_BOOTSTRAP;
	}
	PMIX_VALUE_RELEASE(val);
	boot->local_size = n;
	/* PMIX_LOCAL_SIZE is a cross-check only: not every launcher sets it. */
	val = NULL;
	if (job_get(boot, PMIX_LOCAL_SIZE, &val) == PMIX_SUCCESS && val) {
		if (pmix_value_to_u64(val, &lsize) && lsize != (uint64_t)n)
			ibx_warn("%s is %llu but %s lists %d ranks; using the list",
				 PMIX_LOCAL_SIZE, (unsigned long long)lsize, PMIX_LOCAL_PEERS, n);
		PMIX_VALUE_RELEASE(val);
	}
	return IBX_OK;
}

static ibx_status_t boot_pmix_init(ibx_boot_t *boot)
{
	const char *var = pmix_env_var();
	pmix_status_t rc;
	uint64_t size;
	ibx_status_t ret;

	rc = PMIx_Init(&boot->me, NULL, 0);
	if (rc != PMIX_SUCCESS) {
		/* No PMIx_Finalize after a failed init: it can crash. */
		ibx_error(
		    "PMIx_Init failed: %s. %s is set, so this process was started by a "
		    "PMIx launcher, but its PMIx server cannot be reached (stale environment, "
		    "or the launcher is gone)",
		    PMIx_Error_string(rc), var);
		return IBX_ERR_BOOTSTRAP;
	}
	boot->pmix = true;
	PMIX_LOAD_PROCID(&boot->wild, boot->me.nspace, PMIX_RANK_WILDCARD);

	ret = job_get_u64(boot, PMIX_JOB_SIZE, &size);
	if (ret != IBX_OK)
		goto err_fini;
	if (size < 1 || size > INT_MAX || boot->me.rank >= size) {
		ibx_error("PMIx reports rank %u in a job of size %llu", boot->me.rank,
			  (unsigned long long)size);
		ret = IBX_ERR_BOOTSTRAP;
		goto err_fini;
	}
	boot->size = (int)size;
	boot->rank = (int)boot->me.rank;

	ret = boot_local_peers(boot);
	if (ret != IBX_OK)
		goto err_fini;
	ibx_boot_sanitize_id(boot->me.nspace, boot->job_id, sizeof(boot->job_id));
	ibx_boot_events_init(boot);
	ibx_debug("PMIx: namespace %s rank %d of %d, %d node-local", boot->me.nspace, boot->rank,
		  boot->size, boot->local_size);
	return IBX_OK;

err_fini:
	PMIx_Finalize(NULL, 0);
	boot->pmix = false;
	return ret;
}

static ibx_status_t boot_singleton_init(ibx_boot_t *boot)
{
	boot->local_ranks = malloc(sizeof(*boot->local_ranks));
	if (!boot->local_ranks) {
		ibx_error("out of memory");
		return IBX_ERR_NO_MEMORY;
	}
	boot->rank = 0;
	boot->size = 1;
	boot->local_size = 1;
	boot->local_ranks[0] = 0;
	snprintf(boot->job_id, sizeof(boot->job_id), "single-%ld", (long)getpid());
	return IBX_OK;
}

/* ---- API ----------------------------------------------------------------------- */

ibx_status_t ibx_boot_init(ibx_boot_t **boot_p)
{
	ibx_boot_t *boot;
	ibx_status_t ret;

	if (!boot_p)
		return IBX_ERR_INVALID_PARAM;
	boot = calloc(1, sizeof(*boot));
	if (!boot) {
		ibx_error("out of memory");
		return IBX_ERR_NO_MEMORY;
	}
	switch (boot_detect()) {
	case BOOT_PMIX: ret = boot_pmix_init(boot); break;
	case BOOT_SRUN_NO_PMIX:
		ibx_error("started by srun as one of %ld tasks, but without PMIx: each task would "
			  "be a separate job of size 1. Use `srun --mpi=pmix` (or MpiDefault=pmix "
			  "in slurm.conf)",
			  srun_tasks());
		ret = IBX_ERR_BOOTSTRAP;
		break;
	case BOOT_HYDRA:
		ibx_error("started by MPICH's hydra mpiexec (PMI_FD/PMI_RANK are set): hydra's "
			  "mpiexec speaks PMI-1/2, not PMIx; use mpilite-run or Open MPI's mpirun");
		ret = IBX_ERR_BOOTSTRAP;
		break;
	case BOOT_SINGLETON:
	default: ret = boot_singleton_init(boot); break;
	}
	if (ret != IBX_OK)
		goto err_free;
	*boot_p = boot;
	return IBX_OK;

err_free:
	free(boot->local_ranks);
	free(boot);
	return ret;
}

void ibx_boot_fini(ibx_boot_t *boot)
{
	pmix_status_t rc;

	if (!boot)
		return;
	if (boot->pmix) {
		ibx_boot_events_fini(boot);
		rc = PMIx_Finalize(NULL, 0);
		if (rc != PMIX_SUCCESS)
			ibx_warn("PMIx_Finalize failed: %s", PMIx_Error_string(rc));
	}
	ibx_boot_kv_clear(boot);
	free(boot->local_ranks);
	free(boot->lost);
	free(boot);
}

int ibx_boot_rank(const ibx_boot_t *boot)
{
	return boot->rank;
}

int ibx_boot_size(const ibx_boot_t *boot)
{
	return boot->size;
}

int ibx_boot_local_size(const ibx_boot_t *boot)
{
	return boot->local_size;
}

const int *ibx_boot_local_ranks(const ibx_boot_t *boot)
{
	return boot->local_ranks;
}

const char *ibx_boot_job_id(const ibx_boot_t *boot)
{
	return boot->job_id;
}
