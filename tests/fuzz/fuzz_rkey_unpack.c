/*
 * fuzz_rkey_unpack.c — libFuzzer target for ibx_rkey_unpack(), the parser
 * of the packed remote keys that peers ship to each other (core/rma/rkey.c,
 * layout in core/rma/rma_int.h).
 *
 * The process is a singleton (one rank, shm path only), so a key can only
 * claim rank 0 — ourselves — and the node-local and verbs routes are not
 * reached; key_parse is, in full. Each input is tried three times: as is
 * (almost always stopped by the checksum), resealed, and resealed after
 * its owner rank and pid were set to ours, so that mutations of the other
 * fields reach every check behind them. An accepted key must describe
 * what it says, and ibx_rkey_ptr / ibx_rkey_map must refuse addresses
 * outside [base, base + len].
 *
 *   make fuzz && build/fuzz/fuzz_rkey_unpack $(mktemp -d) tests/fuzz/corpus/fuzz_rkey_unpack
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rma/rma_int.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ibx_ctx_t *ctx;

/* Keys of allocated memory (segment and control page) and of mapped heap
 * memory (control page only), as ibx_rkey_pack makes them. */
static void write_seeds(void)
{
	static char heap[256];
	uint8_t key[IBX_RKEY_PACKED_MAX];
	ibx_mem_t *mem;
	size_t len = sizeof(key);
	void *addr;

	if (ibx_mem_alloc(ctx, 4096, &addr, &mem) != IBX_OK ||
	    ibx_rkey_pack(ctx, mem, key, &len) != IBX_OK)
		abort();
	fuzz_seed_write("alloc", key, len);
	len = sizeof(key);
	if (ibx_mem_map(ctx, heap, sizeof(heap), &mem) != IBX_OK ||
	    ibx_rkey_pack(ctx, mem, key, &len) != IBX_OK)
		abort();
	fuzz_seed_write("map", key, len);
	exit(0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* a singleton on the shm path: no launcher, no verbs device */
	unsetenv("PMIX_NAMESPACE");
	unsetenv("PMIX_SERVER_URI");
	unsetenv("SLURM_STEP_NUM_TASKS");
	setenv("IBX_PATHS", "shm", 1);
	if (ibx_init(NULL, &ctx) != IBX_OK)
		abort();
	if (fuzz_seed_dir())
		write_seeds();
	return 0;
}

static void check_key(const ibx_rkey_t *rk, const uint8_t *key)
{
	uint64_t base, len;
	void *p;

	memcpy(&base, key + 16, 8);
	memcpy(&len, key + 24, 8);
	FUZZ_FAIL_IF(rk->owner != 0 || rk->base != base || rk->len != len || rk->flags != key[5],
		     "accepted key does not describe what it says");
	FUZZ_FAIL_IF(base + len < base, "accepted key with a wrapping range");
	/* inside: a pointer at the same offset from where base is mapped
	 * (base 0 included: ibx_mem_map(ctx, NULL, 0) makes such a key) */
	FUZZ_FAIL_IF(ibx_rkey_ptr(rk, base, &p) == IBX_OK && p != (void *)(uintptr_t)base,
		     "ibx_rkey_ptr at base is not base");
	FUZZ_FAIL_IF(ibx_rkey_map(rk, base + len / 2, &p) == IBX_OK &&
			 p != (void *)(uintptr_t)(base + len / 2),
		     "ibx_rkey_map inside the range is not that address");
	/* outside: refused */
	FUZZ_FAIL_IF(base > 0 && (ibx_rkey_ptr(rk, base - 1, &p) == IBX_OK ||
				  ibx_rkey_map(rk, base - 1, &p) == IBX_OK),
		     "an address below the range was accepted");
	FUZZ_FAIL_IF(base + len + 1 > base + len &&
			 (ibx_rkey_ptr(rk, base + len + 1, &p) == IBX_OK ||
			  ibx_rkey_map(rk, base + len + 1, &p) == IBX_OK),
		     "an address past the range was accepted");
}

static void try_one(const uint8_t *data, size_t size)
{
	ibx_rkey_t *rk = NULL;

	if (ibx_rkey_unpack(ctx, 0, data, size, &rk) != IBX_OK) {
		FUZZ_FAIL_IF(rk, "unpack failed but wrote its out-parameter");
		return;
	}
	check_key(rk, data);
	ibx_rkey_destroy(ctx, rk);
}

static void seal(uint8_t *b)
{
	uint32_t sum = ibx_rma_key_checksum(b, RMA_KEY_SUMMED);

	memcpy(b + RMA_KEY_SUMMED, &sum, 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *k;
	int32_t rank = 0, pid = (int32_t)getpid();

	try_one(data, size);
	if (size < RMA_KEY_LEN)
		return 0;
	/* exactly as long as the input, so that ASan sees any read beyond it */
	k = malloc(size);
	if (!k)
		return 0;
	memcpy(k, data, size);
	seal(k);
	try_one(k, size);
	memcpy(k + 8, &rank, 4);
	memcpy(k + 12, &pid, 4);
	seal(k);
	try_one(k, size);
	free(k);
	return 0;
}
