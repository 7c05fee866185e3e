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
 *   make fuzz CC=clang && build/fuzz/fuzz_dtype_deserialize -max_total_time=60
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_rdma/dtype.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct span {
	uintptr_t lo, hi;
	int64_t next; /* expected packed offset of the next block */
} span_t;

static ibx_status_t in_span(void *arg, int64_t packed_off, void *addr, size_t len)
{
	span_t *s = arg;
	uintptr_t a = (uintptr_t)addr;

	if (len == 0 || a < s->lo || a + len > s->hi || a + len < a || packed_off != s->next)
		__builtin_trap();
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

	if (ibx_dt_query(dt, &in) != IBX_OK || ibx_dt_stats(dt, &st) != IBX_OK)
		__builtin_trap();
	if (st.blocks < 0 || (in.size > 0 && (st.blocks < 1 || st.min_block < 1)))
		__builtin_trap();
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
		if (ibx_dt_blocks(dt, count, (void *)origin, 0, total, in_span, &s) != IBX_OK ||
		    s.next != total)
			__builtin_trap();
		if (ibx_dt_pack(dt, count, (void *)origin, 0, total, pk) != IBX_OK ||
		    ibx_dt_unpack(dt, count, (void *)origin, 0, total, pk) != IBX_OK)
			__builtin_trap();
		/* seeks to offsets taken from the input, then short segments */
		if (ibx_dt_cursor_init(&cur, dt, count, (void *)origin, 0) != IBX_OK)
			__builtin_trap();
		for (size_t k = 0; k + 1 < size && k < 16 && total > 0; k += 2) {
			int64_t at =
			    (int64_t)((data[k] << 8 | data[k + 1]) % (uint64_t)(total + 1));
			struct iovec iov[4];
			int n;

			if (ibx_dt_cursor_seek(&cur, at) != IBX_OK ||
			    ibx_dt_cursor_pack(&cur, pk, (total - at) / 2, &done) != IBX_OK)
				__builtin_trap();
			if (ibx_dt_cursor_iov(&cur, total, iov, 4, &n, &done) != IBX_OK)
				__builtin_trap();
			for (int j = 0; j < n; j++)
				if ((uintptr_t)iov[j].iov_base < s.lo ||
				    (uintptr_t)iov[j].iov_base + iov[j].iov_len > s.hi)
					__builtin_trap();
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
		if (dt)
			__builtin_trap(); /* out-parameter written on failure */
		return;
	}
	exercise(dt, ctl, nctl);
	/* an accepted blob is canonical: it serialises back to itself */
	if (ibx_dt_wire_size(dt, &len) != IBX_OK || len != size)
		__builtin_trap();
	back = malloc(len);
	if (back) {
		if (ibx_dt_serialize(dt, back, len, &used) != IBX_OK || used != size ||
		    memcmp(back, data, size))
			__builtin_trap();
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
