/*
 * share.c — ibx_mem_share: the caller's own memory (a static array, the
 * heap, an mmap'ed buffer), made reachable by node-local peers with plain
 * loads, stores and CPU atomics instead of a system call per operation.
 *
 * Another process cannot map a process's private pages; but the process
 * itself can replace them, in place, by the pages of a shared segment that
 * hold the same bytes:
 *
 *   [ private pages covering addr .. addr+len ]      peers: CMA, ~1 us per op
 *     1. memfd the size of the covering pages, mapped at a scratch address
 *     2. copy every page that is not all zeros (a page never touched reads
 *        as zeros and stays unallocated in the segment too)
 *     3. mmap(MAP_SHARED | MAP_FIXED, memfd) over the original pages
 *   [ the memfd's pages, same addresses, same bytes ] peers: /proc/<pid>/fd/<fd>
 *                                                     mapped once, load / store
 *
 * When it is done (otherwise the memory is mapped as by ibx_mem_map, and
 * node-local peers use CMA):
 *  - the context has no verbs path: registered memory is pinned to its
 *    physical pages, and a registration made directly (not through the
 *    cache) of something else on the same pages — a neighbour on the heap —
 *    would keep pointing at the old pages, unseen; so in a job with verbs
 *    peers only ibx_mem_alloc memory is direct;
 *  - the covering pages are private, writable mappings of ordinary memory
 *    (anonymous, heap or a file's private copy; never the stack or a
 *    kernel-provided mapping), as /proc/self/maps says;
 *  - or they already are one segment that an earlier call made (a program
 *    that creates a window per message size on one buffer moves it once):
 *    segments are remembered with their inode, and reused only when
 *    /proc/self/maps still shows that inode at the right offset there, so
 *    memory the program unmapped and mapped again is never mistaken for it.
 * What the caller promises: no other thread writes those pages while they
 * move (mpi-lite shares only below MPI_THREAD_MULTIPLE). What the program
 * sees afterwards: the same bytes at the same addresses, except that a
 * child made by fork() shares these pages with its parent instead of
 * getting a copy. Segments stay in place, and their descriptors open, until
 * the context is finalized (the mapping itself then stays, unshared).
 * The verbs registration cache learns of the replaced pages through its
 * mmap hook (core/reg_cache/memhooks.c), so no stale registration survives.
 */
#define _GNU_SOURCE
#include "rma_int.h"
#include "qp/qp.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A segment made by an earlier call. */
typedef struct share_seg {
	ibx_list_node_t link;
	uintptr_t start;
	size_t len;
	int fd;
	uint64_t ino;
} share_seg_t;

/* What /proc/self/maps says about [start, end). */
typedef enum span_kind {
	SPAN_PRIVATE, /* ordinary private writable memory: may be moved */
	SPAN_SEGMENT, /* all of it one of our segments (seg, at the right offsets) */
	SPAN_OTHER,   /* anything else: leave it alone */
} span_kind_t;

static uintptr_t page_size(void)
{
	return (uintptr_t)sysconf(_SC_PAGESIZE);
}

/* One line of /proc/self/maps. */
typedef struct vma {
	uintptr_t start, end;
	char perms[5];
	uint64_t off, ino;
	const char *path; /* "" for anonymous memory */
} vma_t;

static bool vma_parse(char *line, vma_t *v)
{
	int n = 0;

	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s %" SCNx64 " %*s %" SCNu64 " %n", &v->start,
		   &v->end, v->perms, &v->off, &v->ino, &n) < 5 ||
	    !n)
		return false;
	v->path = line + n;
	return true;
}

/* Ordinary memory that a private copy may be taken of: writable, private,
 * and not the stack or a mapping the kernel provides ([vdso], [vvar]...). */
static bool vma_movable(const vma_t *v)
{
	if (strcmp(v->perms, "rw-p") != 0)
		return false;
	return v->path[0] != '[' || strcmp(v->path, "[heap]") == 0;
}

static bool vma_of_seg(const vma_t *v, const share_seg_t *s)
{
	return v->perms[3] == 's' && v->perms[0] == 'r' && v->perms[1] == 'w' && v->ino == s->ino &&
	       v->start >= s->start && v->end <= s->start + s->len && v->off == v->start - s->start;
}

/* Classifies [start, end) (page aligned): every byte of it must be covered
 * by mappings of one kind, without holes. */
static span_kind_t span_classify(uintptr_t start, uintptr_t end, const share_seg_t *seg)
{
	char line[4096 + 256];
	uintptr_t next = start;
	bool priv = true, ours = seg != NULL;
	FILE *f = fopen("/proc/self/maps", "re");
	vma_t v;

	if (!f)
		return SPAN_OTHER;
	while (next < end && fgets(line, sizeof(line), f)) {
		if (!vma_parse(line, &v) || v.end <= next)
			continue;
		if (v.start > next)
			break; /* a hole */
		priv = priv && vma_movable(&v);
		ours = ours && vma_of_seg(&v, seg);
		next = v.end;
	}
	fclose(f);
	if (next < end)
		return SPAN_OTHER;
	if (ours)
		return SPAN_SEGMENT;
	return priv ? SPAN_PRIVATE : SPAN_OTHER;
}

/* Whole pages are read and copied, the bytes around the caller's range
 * included: not the program's objects, so AddressSanitizer would call it
 * an overflow; these two are left uninstrumented, and their loops are
 * kept loops (not turned into calls of the intercepted memcpy). */
#ifdef __clang__
#define PAGE_ACCESS __attribute__((no_sanitize_address, no_builtin("memcpy")))
#else
#define PAGE_ACCESS                                                                                \
	__attribute__((no_sanitize_address, optimize("no-tree-loop-distribute-patterns")))
#endif

static PAGE_ACCESS bool page_is_zero(const uint64_t *p, uintptr_t len)
{
	for (uintptr_t i = 0; i < len / 8; i++)
		if (p[i])
			return false;
	return true;
}

static PAGE_ACCESS void page_copy(uint64_t *dst, const uint64_t *src, uintptr_t len)
{
	for (uintptr_t i = 0; i < len / 8; i++)
		dst[i] = src[i];
}

/* Steps 1-3 above over the page-aligned [start, start + len). */
static ibx_status_t seg_move(uintptr_t start, size_t len, share_seg_t *s)
{
	uintptr_t pg = page_size();
	struct stat sb;
	char *scratch;
	int fd;

	fd = memfd_create("ibx-rma-shared", MFD_CLOEXEC);
	if (fd < 0)
		return IBX_ERR_UNSUPPORTED;
	if (ftruncate(fd, (off_t)len) != 0 || fstat(fd, &sb) != 0)
		goto err_close;
	scratch = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (scratch == MAP_FAILED)
		goto err_close;
	for (uintptr_t o = 0; o < len; o += pg)
		if (!page_is_zero((const uint64_t *)(start + o), pg))
			page_copy((uint64_t *)(void *)(scratch + o), (const uint64_t *)(start + o),
				  pg);
	munmap(scratch, len);
	if (mmap((void *)start, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
	    MAP_FAILED) {
		/* the kernel may have dropped the old pages already: nothing
		 * sane is left at these addresses */
		ibx_error("rma: replacing %zu bytes at %#" PRIxPTR " by a shared segment: %s", len,
			  start, strerror(errno));
		close(fd);
		return IBX_ERR_IO;
	}
	s->start = start;
	s->len = len;
	s->fd = fd;
	s->ino = (uint64_t)sb.st_ino;
	return IBX_OK;
err_close:
	close(fd);
	return errno == ENOMEM || errno == ENOSPC ? IBX_ERR_NO_MEMORY : IBX_ERR_UNSUPPORTED;
}

/* The remembered segment that contains [start, end), if any. */
static share_seg_t *seg_find(rma_state_t *st, uintptr_t start, uintptr_t end)
{
	share_seg_t *s;

	ibx_list_for_each_entry(s, &st->shares, share_seg_t, link)
	{
		if (start >= s->start && end <= s->start + s->len)
			return s;
	}
	return NULL;
}

static void seg_forget(share_seg_t *s)
{
	close(s->fd);
	free(s);
}

void ibx_rma_share_fini(rma_state_t *st)
{
	ibx_list_node_t *n;

	while ((n = ibx_list_pop_head(&st->shares)))
		seg_forget(ibx_list_entry(n, share_seg_t, link));
}

/* Finds or makes the segment under [addr, addr + len): IBX_OK with *seg_p,
 * or IBX_ERR_UNSUPPORTED when the memory is not the kind that moves. */
static ibx_status_t share_seg_get(rma_state_t *st, void *addr, size_t len, share_seg_t **seg_p)
{
	uintptr_t pg = page_size();
	uintptr_t start = (uintptr_t)addr & ~(pg - 1);
	uintptr_t end = ((uintptr_t)addr + len + pg - 1) & ~(pg - 1);
	share_seg_t *s = seg_find(st, start, end);
	ibx_status_t rc;

	if (s) {
		if (span_classify(start, end, s) == SPAN_SEGMENT) {
			*seg_p = s;
			return IBX_OK;
		}
		/* the program unmapped it (or part of it) since */
		ibx_list_remove(&st->shares, &s->link);
		seg_forget(s);
	}
	if (span_classify(start, end, NULL) != SPAN_PRIVATE)
		return IBX_ERR_UNSUPPORTED;
	s = calloc(1, sizeof(*s));
	if (!s)
		return IBX_ERR_NO_MEMORY;
	rc = seg_move(start, end - start, s);
	if (rc != IBX_OK) {
		free(s);
		return rc;
	}
	ibx_list_push_tail(&st->shares, &s->link);
	*seg_p = s;
	return IBX_OK;
}

ibx_status_t ibx_mem_share(ibx_ctx_t *ctx, void *addr, size_t len, ibx_mem_t **mem_p)
{
	share_seg_t *s = NULL;
	rma_state_t *st;
	ibx_mem_t *m;
	ibx_status_t rc;

	if (!ctx || !mem_p || !addr || !len || (uintptr_t)addr + len < (uintptr_t)addr)
		return ibx_mem_map(ctx, addr, len, mem_p);
	rc = ibx_rma_state_get(ctx, &st);
	if (rc != IBX_OK)
		return rc;
	if (ibx_qp_path_present(ctx)) {
		ibx_debug("rma: %zu bytes at %p stay private (verbs peers: registrations must not "
			  "lose their pages)",
			  len, addr);
		return ibx_mem_map(ctx, addr, len, mem_p);
	}
	rc = share_seg_get(st, addr, len, &s);
	if (rc == IBX_ERR_UNSUPPORTED) {
		ibx_debug("rma: %zu bytes at %p stay private (not ordinary private memory): "
			  "node-local peers reach them through system calls",
			  len, addr);
		return ibx_mem_map(ctx, addr, len, mem_p);
	}
	if (rc != IBX_OK)
		return rc;
	rc = ibx_mem_map(ctx, addr, len, &m);
	if (rc != IBX_OK)
		return rc;
	m->seg_fd = s->fd;
	m->seg_len = s->len;
	m->seg_off = (uintptr_t)addr - s->start;
	m->seg_ino = s->ino;
	m->shared = true;
	*mem_p = m;
	return IBX_OK;
}
