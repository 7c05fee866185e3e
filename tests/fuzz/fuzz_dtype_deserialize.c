/*
 * fuzz_dtype_deserialize.c — libFuzzer target for ibx_dt_deserialize(), the
 * parser of datatype layouts received from peers (core/dtype_rdma/wire.c).
 *
 * Each input is tried twice: as is (almost always stopped by the checksum)
 * and with its checksum recomputed, so that mutations reach the structural
 * validation. Whatever is accepted is then used the way the RDMA schemes
 * use a peer's layout — pack, unpack, block listing, iovec filling, seeks —
 * over a buffer exactly as large as the layout's claimed byte span (ASan
 * turns any access outside it into a crash), and must serialise back to
 * the same bytes.
 *
 *   make fuzz && build/fuzz/fuzz_dtype_deserialize $(mktemp -d)
 * tests/fuzz/corpus/fuzz_dtype_deserialize
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_rdma/dtype.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void seed(const char *name, ibx_dt_t *dt)
{
	size_t len, used;
	void *blob;

	if (!dt || ibx_dt_commit(dt) != IBX_OK || ibx_dt_wire_size(dt, &len) != IBX_OK)
		abort();
	blob = malloc(len);
	if (!blob || ibx_dt_serialize(dt, blob, len, &used) != IBX_OK)
		abort();
	fuzz_seed_write(name, blob, used);
	free(blob);
}

/* Layouts of the kinds MPI programs send: a vector, an indexed type, a
 * struct with a resized member, a subarray. */
static void write_seeds(void)
{
	static const int64_t bl[] = {1, 3, 2}, dis[] = {0, 5, 12}, sdis[] = {0, 8, 24};
	static const int64_t sizes[] = {6, 5}, subs[] = {3, 2}, starts[] = {1, 2};
	ibx_dt_t *i32, *f64, *v, *ix, *r, *st, *sa;
	ibx_dt_t *types[3];

	if (ibx_dt_basic(1, 4, 4, &i32) != IBX_OK || ibx_dt_basic(2, 8, 8, &f64) != IBX_OK ||
	    ibx_dt_vector(3, 2, 5, f64, &v) != IBX_OK ||
	    ibx_dt_indexed(3, bl, dis, i32, &ix) != IBX_OK ||
	    ibx_dt_resized(i32, 0, 8, &r) != IBX_OK)
		abort();
	types[0] = f64;
	types[1] = r;
	types[2] = v;
	if (ibx_dt_struct(3, bl, sdis, types, &st) != IBX_OK ||
	    ibx_dt_subarray(2, sizes, subs, starts, IBX_DT_ORDER_C, i32, &sa) != IBX_OK)
		abort();
	seed("vector", v);
	seed("indexed", ix);
	seed("struct", st);
	seed("subarray", sa);
	exit(0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (fuzz_seed_dir())
		write_seeds();
	return 0;
}

typedef struct span {
	uintptr_t lo, hi;
	int64_t next; /* expected packed offset of the next block */
} span_t;

static ibx_status_t in_span(void *arg, int64_t packed_off, void *addr, size_t len)
{
	span_t *s = arg;
	uintptr_t a = (uintptr_t)addr;

	FUZZ_FAIL_IF(len == 0 || a < s->lo || a + len > s->hi || a + len < a ||
			 packed_off != s->next,
		     "block outside the layout's span, empty, or out of packed order");
	s->next += (int64_t)len;
	return IBX_OK;
}

static void exercise(ibx_dt_t *dt, const uint8_t *data, size_t size)
{
	ibx_dt_info_t in;
	ibx_dt_stats_t st;
	ibx_dt_cursor_t cur;
	int64_t count = 1 + (size ? data[size - 1] % 3 : 0), span, total, done;
	uint8_t *mem, *pk;
	span_t s;

	FUZZ_FAIL_IF(ibx_dt_query(dt, &in) != IBX_OK || ibx_dt_stats(dt, &st) != IBX_OK,
		     "query/stats failed on an accepted layout");
	FUZZ_FAIL_IF(st.blocks < 0 || (in.size > 0 && (st.blocks < 1 || st.min_block < 1)),
		     "accepted layout has inconsistent block statistics");
	if (in.size > (1 << 16) || in.true_extent > (1 << 20) || in.extent > (1 << 20) ||
	    in.extent < -(1 << 20))
		return;
	/* count elements touch [true_lb + min(0, (count-1)*extent), ... ) */
	span = in.true_extent + (count - 1) * (in.extent < 0 ? -in.extent : in.extent);
	total = count * in.size;
	mem = malloc((size_t)span + 1);
	pk = malloc((size_t)total + 1);
	if (!mem || !pk)
		goto out;
	memset(mem, 0x5a, (size_t)span + 1);
	{
		int64_t low = in.true_lb + (in.extent < 0 ? (count - 1) * in.extent : 0);
		uintptr_t origin = (uintptr_t)mem - (uintptr_t)low;

		s.lo = (uintptr_t)mem;
		s.hi = (uintptr_t)mem + (uintptr_t)span;
		s.next = 0;
		FUZZ_FAIL_IF(ibx_dt_blocks(dt, count, (void *)origin, 0, total, in_span, &s) !=
				     IBX_OK ||
				 s.next != total,
			     "block listing failed or did not cover the packed size");
		FUZZ_FAIL_IF(ibx_dt_pack(dt, count, (void *)origin, 0, total, pk) != IBX_OK ||
				 ibx_dt_unpack(dt, count, (void *)origin, 0, total, pk) != IBX_OK,
			     "pack/unpack failed on an accepted layout");
		/* seeks to offsets taken from the input, then short segments */
		FUZZ_FAIL_IF(ibx_dt_cursor_init(&cur, dt, count, (void *)origin, 0) != IBX_OK,
			     "cursor_init failed on an accepted layout");
		for (size_t k = 0; k + 1 < size && k < 16 && total > 0; k += 2) {
			int64_t at =
			    (int64_t)((data[k] << 8 | data[k + 1]) % (uint64_t)(total + 1));
			struct iovec iov[4];
			int n;

			FUZZ_FAIL_IF(ibx_dt_cursor_seek(&cur, at) != IBX_OK ||
					 ibx_dt_cursor_pack(&cur, pk, (total - at) / 2, &done) !=
					     IBX_OK,
				     "cursor seek/pack failed");
			FUZZ_FAIL_IF(ibx_dt_cursor_iov(&cur, total, iov, 4, &n, &done) != IBX_OK,
				     "cursor iov failed");
			for (int j = 0; j < n; j++)
				FUZZ_FAIL_IF((uintptr_t)iov[j].iov_base < s.lo ||
						 (uintptr_t)iov[j].iov_base + iov[j].iov_len > s.hi,
					     "iovec outside the layout's span");
		}
	}
out:
	free(mem);
	free(pk);
}

static void try_one(const uint8_t *data, size_t size, const uint8_t *ctl, size_t nctl)
{
	ibx_dt_t *dt = NULL;
	size_t len, used;
	uint8_t *back;

	if (ibx_dt_deserialize(data, size, &dt) != IBX_OK) {
		FUZZ_FAIL_IF(dt, "deserialize failed but wrote its out-parameter");
		return;
	}
	exercise(dt, ctl, nctl);
	/* an accepted blob is canonical: it serialises back to itself */
	FUZZ_FAIL_IF(ibx_dt_wire_size(dt, &len) != IBX_OK || len != size,
		     "accepted blob's wire size differs from its length");
	back = malloc(len);
	if (back) {
		FUZZ_FAIL_IF(ibx_dt_serialize(dt, back, len, &used) != IBX_OK || used != size ||
				 memcmp(back, data, size),
			     "accepted blob does not serialise back to itself");
		free(back);
	}
	ibx_dt_free(&dt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *sealed;

	try_one(data, size, data, size);
	if (size < 96)
		return 0;
	sealed = malloc(size);
	if (!sealed)
		return 0;
	memcpy(sealed, data, size);
	ibx_dt_wire_seal(sealed, size);
	try_one(sealed, size, data, size);
	free(sealed);
	return 0;
}
