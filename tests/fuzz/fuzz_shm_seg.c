/*
 * fuzz_shm_seg.c — libFuzzer target for the checks a process makes on a
 * node-local peer's shared-memory segment before it uses it
 * (ibx_shm_seg_attach, ibx_shm_seg_area_index, ibx_shm_seg_area in
 * core/shm_lf/shm_seg.c), and for the sweep that reads the headers of
 * segments left in the directory (ibx_shm_sweep).
 *
 * The input is the segment file, written to a private directory. It is
 * attached twice: as is, with the owner rank and pid it claims, and with
 * its magic, version, size and uid made right, so that mutations reach the
 * geometry and layout checks behind them. A segment that is accepted must
 * hold every area it describes: each area, and each ring, ack line, chunk
 * header array, chunk array and cell array in it, lies inside the mapping
 * (their first and last bytes are read: outside, this faults).
 *
 *   make fuzz && build/fuzz/fuzz_shm_seg $(mktemp -d) tests/fuzz/corpus/fuzz_shm_seg
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm_lf/shm_int.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the largest segment file tried: a few areas of the smallest geometry */
#define SEG_MAX (256u << 10)

static char dir[256], path[300];

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

/* Segments as ibx_shm_seg_create makes them, in the smallest geometry:
 * the header and the ranks of the areas (the rest is zeros, which the
 * target adds up to the size the header claims). */
static void write_seeds(void)
{
	static const int peers[] = {0, 2, 5};
	ibx_shm_geom_t g = {.ring_slots = 8, .pipe_chunks = 2, .pipe_chunk = 4096};
	ibx_shm_seg_t seg;

	for (int n = 1; n <= 3; n += 2) {
		char name[32];

		g.cells = n == 1 ? 0 : 2;
		g.cell_size = n == 1 ? 0 : 64;
		if (ibx_shm_seg_create(dir, "seed", 1, peers, n, &g, &seg) != IBX_OK)
			abort();
		snprintf(name, sizeof(name), "%d-peers", n);
		fuzz_seed_write(name, seg.base, sizeof(*seg.hdr) + (size_t)n * sizeof(int32_t));
		if (n == 1) {
			/* and one whose first area starts past the end of the
			 * segment (attach must refuse it) */
			size_t len = sizeof(*seg.hdr) + sizeof(int32_t);
			ibx_shm_seg_hdr_t *h = malloc(len);

			if (!h)
				abort();
			memcpy(h, seg.base, len);
			h->area_off = h->size + 4096;
			fuzz_seed_write("area-past-end", h, len);
			free(h);
		}
		ibx_shm_seg_detach(&seg);
	}
	exit(0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/ibx-fuzz-shm-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/" IBX_SHM_PREFIX "fuzz-0", dir);
	atexit(cleanup);
	if (fuzz_seed_dir())
		write_seeds();
	return 0;
}

static void touch(const ibx_shm_seg_t *seg, const void *p, size_t len)
{
	const volatile uint8_t *b = p;

	if (!len)
		return;
	FUZZ_FAIL_IF(b < (const uint8_t *)seg->base ||
			 b + len > (const uint8_t *)seg->base + seg->size || b + len < b,
		     "attach accepted a segment with a part outside its mapping");
	(void)b[0];
	(void)b[len - 1];
}

static void check_seg(const ibx_shm_seg_t *seg)
{
	const ibx_shm_seg_hdr_t *h = seg->hdr;
	const ibx_shm_geom_t *g = &h->geom;
	ibx_shm_area_layout_t l;

	FUZZ_FAIL_IF(ibx_shm_area_layout(g, &l) != IBX_OK || l.size != h->area_size,
		     "attach accepted a segment whose geometry does not give its area size");
	touch(seg, h->peers, (size_t)h->npeers * sizeof(h->peers[0]));
	for (uint32_t i = 0; i < h->npeers && i < 64; i++) {
		ibx_shm_area_t a;
		int idx = ibx_shm_seg_area_index(seg, h->peers[i]);

		FUZZ_FAIL_IF(idx < -1 || idx >= (int)h->npeers, "area index out of range");
		ibx_shm_seg_area(seg, (int)i, &a);
		touch(seg, a.slots, (size_t)g->ring_slots * sizeof(ibx_shm_slot_t));
		touch(seg, a.ack, sizeof(*a.ack));
		touch(seg, a.chunk_hdrs, (size_t)g->pipe_chunks * sizeof(ibx_shm_chunk_hdr_t));
		touch(seg, a.chunks, (size_t)g->pipe_chunks * g->pipe_chunk);
		touch(seg, a.cells, (size_t)g->cells * g->cell_size);
	}
	(void)ibx_shm_seg_area_index(seg, -1);
	(void)ibx_shm_seg_area_index(seg, h->owner_rank);
}

/* The segment file: the input, then zeros up to the size its header
 * claims (within reason), so that small inputs describe whole segments. */
static size_t write_seg(const uint8_t *data, size_t size, const ibx_shm_seg_hdr_t *h)
{
	size_t len = size;
	FILE *f = fopen(path, "w");

	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	if (h && h->size > size && h->size <= SEG_MAX)
		len = h->size;
	if (fflush(f) || ftruncate(fileno(f), (off_t)len))
		abort();
	fclose(f);
	return len;
}

static void try_one(const uint8_t *data, size_t size)
{
	ibx_shm_seg_hdr_t h;
	ibx_shm_seg_t seg;
	size_t len;

	if (size >= sizeof(h))
		memcpy(&h, data, sizeof(h)); /* (data need not be aligned) */
	len = write_seg(data, size, size >= sizeof(h) ? &h : NULL);
	if (size >= sizeof(h) &&
	    ibx_shm_seg_attach(path, h.owner_rank, h.owner_pid, len, &seg) == IBX_OK) {
		check_seg(&seg);
		ibx_shm_seg_detach(&seg);
	}
	/* the sweep reads every ibx-* header in the directory (and removes
	 * this one when its creator and launcher are gone) */
	(void)ibx_shm_sweep(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ibx_shm_seg_hdr_t h;
	uint8_t *fixed;

	if (size > SEG_MAX)
		return 0;
	try_one(data, size);
	if (size < sizeof(h))
		return 0;
	fixed = malloc(size);
	if (!fixed)
		return 0;
	memcpy(fixed, data, size);
	memcpy(&h, fixed, sizeof(h));
	atomic_store(&h.magic, IBX_SHM_MAGIC);
	h.version = IBX_SHM_VERSION;
	h.uid = (uint32_t)geteuid();
	if (h.size < size || h.size > SEG_MAX)
		h.size = size;
	memcpy(fixed, &h, sizeof(h));
	try_one(fixed, size);
	free(fixed);
	return 0;
}
