/*
 * mem.c — memory that peers reach one-sidedly: ibx_mem_map (the caller's
 * memory), ibx_mem_alloc (a shared segment that node-local peers map), the
 * control page that carries this process's RMW lock, and the per-context
 * state of core/rma. The routes that origins take are in rma_int.h.
 *
 *   ibx_mem_map(addr, len)               ibx_mem_alloc(len)
 *     control page (once)                  control page (once)
 *     verbs registration, if the           memfd segment, mmap MAP_SHARED
 *     context has a verbs path             verbs registration, as for map
 *
 * Segments are memfds: nothing has a name in /dev/shm, so a crash leaves
 * nothing behind; a node-local peer opens /proc/<pid>/fd/<fd> to map one.
 */
#define _GNU_SOURCE
#include "rma_int.h"
#include "qp/qp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- segments -------------------------------------------------------------------- */

static size_t page_round(size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (len + pg - 1) & ~(pg - 1);
}

/* Creates a zeroed shared segment of @len bytes (page-rounded) mapped here. */
static ibx_status_t seg_create(const char *what, size_t len, int *fd_p, void **addr_p,
			       size_t *len_p)
{
	size_t sz = page_round(len ? len : 1);
	void *a;
	int fd;

	if (sz < len)
		return IBX_ERR_OVERFLOW;
	fd = memfd_create(what, MFD_CLOEXEC);
	if (fd < 0) {
		ibx_error("rma: memfd_create(%s): %s", what, strerror(errno));
		return IBX_ERR_IO;
	}
	if (ftruncate(fd, (off_t)sz) != 0) {
		ibx_error("rma: sizing a %zu-byte segment: %s", sz, strerror(errno));
		goto err_close;
	}
	a = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (a == MAP_FAILED) {
		ibx_error("rma: mapping a %zu-byte segment: %s", sz, strerror(errno));
		goto err_close;
	}
	*fd_p = fd;
	*addr_p = a;
	*len_p = sz;
	return IBX_OK;
err_close:
	close(fd);
	return errno == ENOMEM || errno == ENOSPC ? IBX_ERR_NO_MEMORY : IBX_ERR_IO;
}

uint64_t ibx_rma_fd_ino(int fd)
{
	struct stat sb;

	return fstat(fd, &sb) == 0 ? (uint64_t)sb.st_ino : 0;
}

ibx_status_t ibx_rma_map_remote(int pid, int fd, size_t len, uint64_t ino, rma_map_t *map_p)
{
	char path[64];
	void *a;
	int lfd;

	if (pid <= 0 || fd < 0 || len == 0)
		return IBX_ERR_CORRUPT;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	lfd = open(path, O_RDWR | O_CLOEXEC);
	if (lfd < 0) {
		ibx_info("rma: cannot open %s: %s", path, strerror(errno));
		return errno == ENOENT || errno == ESRCH ? IBX_ERR_UNREACHABLE
							 : IBX_ERR_UNSUPPORTED;
	}
	if (ino && ibx_rma_fd_ino(lfd) != ino) {
		ibx_info("rma: %s is no longer the segment its key names", path);
		close(lfd);
		return IBX_ERR_CORRUPT;
	}
	a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, lfd, 0);
	close(lfd);
	if (a == MAP_FAILED) {
		ibx_info("rma: cannot map %zu bytes of %s: %s", len, path, strerror(errno));
		return IBX_ERR_UNSUPPORTED;
	}
	map_p->addr = a;
	map_p->len = len;
	return IBX_OK;
}

void ibx_rma_unmap(rma_map_t *map)
{
	if (map->addr)
		munmap(map->addr, map->len);
	map->addr = NULL;
	map->len = 0;
}

/* ---- per-context state -------------------------------------------------------------- */

static void mem_release(ibx_ctx_t *ctx, ibx_mem_t *m)
{
	if (m->verbs)
		ibx_qp_path_mem_dereg(ctx, m->verbs_handle);
	if (m->allocated) {
		munmap(m->addr, m->seg_len);
		close(m->seg_fd);
	}
	free(m);
}

/* Finalize: what the caller left mapped is released here, before the
 * verbs path (and its protection domain) goes away. */
static void rma_fini(ibx_ctx_t *ctx)
{
	rma_state_t *st = ctx->rma;
	ibx_list_node_t *n;
	unsigned left = 0;

	while ((n = ibx_list_pop_head(&st->rkeys)))
		ibx_rma_rkey_release(ibx_list_entry(n, ibx_rkey_t, link));
	while ((n = ibx_list_pop_head(&st->mems))) {
		mem_release(ctx, ibx_list_entry(n, ibx_mem_t, link));
		left++;
	}
	ibx_rma_share_fini(st);
	if (left)
		ibx_debug("rma: %u memory mapping(s) still mapped at finalize, released", left);
	if (st->ctl) {
		munmap(st->ctl, page_round(sizeof(rma_ctl_t)));
		close(st->ctl_fd);
	}
	free(st);
	ctx->rma = NULL;
	ctx->rma_fini = NULL;
}

ibx_status_t ibx_rma_state_get(ibx_ctx_t *ctx, rma_state_t **st_p)
{
	rma_state_t *st = ctx->rma;

	if (ibx_likely(st != NULL)) {
		*st_p = st;
		return IBX_OK;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return IBX_ERR_NO_MEMORY;
	st->ctl_fd = -1;
	ctx->rma = st;
	ctx->rma_fini = rma_fini;
	*st_p = st;
	return IBX_OK;
}

/* Our control page, created with the first mapping. Without it (no memfd)
 * node-local peers cannot do atomics on our private memory; everything
 * else still works. */
static void ctl_ensure(rma_state_t *st)
{
	size_t len;
	void *a;

	if (st->ctl)
		return;
	if (seg_create("ibx-rma-ctl", sizeof(rma_ctl_t), &st->ctl_fd, &a, &len) != IBX_OK)
		return;
	st->ctl = a;
	atomic_init(&st->ctl->rmw_lock, 0);
	st->ctl->magic = RMA_CTL_MAGIC;
}

/* ---- ibx_mem_* ------------------------------------------------------------------- */

/* Registers @m with the verbs device when the context has verbs peers
 * (IBX_ERR_NOT_FOUND from the path: no verbs path, nothing to do). */
static ibx_status_t mem_register(ibx_ctx_t *ctx, ibx_mem_t *m)
{
	ibx_mem_key_t key;
	ibx_status_t s;

	s = ibx_qp_path_mem_reg(ctx, m->addr, m->len ? m->len : 1, &key, &m->verbs_handle);
	if (s == IBX_ERR_NOT_FOUND)
		return IBX_OK;
	if (s != IBX_OK) {
		ibx_error("rma: registering %zu bytes at %p with the verbs device: %s", m->len,
			  m->addr, ibx_status_str(s));
		return s;
	}
	m->verbs = true;
	m->verbs_rkey = key.rkey;
	return IBX_OK;
}

static ibx_status_t mem_finish(ibx_ctx_t *ctx, rma_state_t *st, ibx_mem_t *m, ibx_mem_t **mem_p)
{
	ibx_status_t s;

	ctl_ensure(st);
	s = mem_register(ctx, m);
	if (s != IBX_OK)
		return s;
	ibx_list_push_tail(&st->mems, &m->link);
	*mem_p = m;
	return IBX_OK;
}

ibx_status_t ibx_mem_map(ibx_ctx_t *ctx, void *addr, size_t len, ibx_mem_t **mem_p)
{
	rma_state_t *st;
	ibx_mem_t *m;
	ibx_status_t s;

	if (!ctx || !mem_p || (!addr && len) || (uintptr_t)addr + len < (uintptr_t)addr)
		return IBX_ERR_INVALID_PARAM;
	s = ibx_rma_state_get(ctx, &st);
	if (s != IBX_OK)
		return s;
	m = calloc(1, sizeof(*m));
	if (!m)
		return IBX_ERR_NO_MEMORY;
	m->addr = addr;
	m->len = len;
	m->seg_fd = -1;
	s = mem_finish(ctx, st, m, mem_p);
	if (s != IBX_OK)
		free(m);
	return s;
}

ibx_status_t ibx_mem_alloc(ibx_ctx_t *ctx, size_t len, void **addr_p, ibx_mem_t **mem_p)
{
	rma_state_t *st;
	ibx_mem_t *m;
	ibx_status_t s;

	if (!ctx || !addr_p || !mem_p)
		return IBX_ERR_INVALID_PARAM;
	s = ibx_rma_state_get(ctx, &st);
	if (s != IBX_OK)
		return s;
	m = calloc(1, sizeof(*m));
	if (!m)
		return IBX_ERR_NO_MEMORY;
	s = seg_create("ibx-rma-mem", len, &m->seg_fd, &m->addr, &m->seg_len);
	if (s != IBX_OK)
		goto err_free;
	m->len = len;
	m->allocated = true;
	m->seg_ino = ibx_rma_fd_ino(m->seg_fd);
	s = mem_finish(ctx, st, m, mem_p);
	if (s != IBX_OK)
		goto err_seg;
	*addr_p = m->addr;
	return IBX_OK;
err_seg:
	munmap(m->addr, m->seg_len);
	close(m->seg_fd);
err_free:
	free(m);
	return s;
}

ibx_status_t ibx_mem_unmap(ibx_ctx_t *ctx, ibx_mem_t *mem)
{
	rma_state_t *st;

	if (!ctx || !mem || !ctx->rma)
		return IBX_ERR_INVALID_PARAM;
	st = ctx->rma;
	ibx_list_remove(&st->mems, &mem->link);
	mem_release(ctx, mem);
	return IBX_OK;
}

/* ---- packing ---------------------------------------------------------------------- */

uint32_t ibx_rma_key_checksum(const unsigned char *b, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

static void put32(unsigned char *b, size_t off, uint32_t v)
{
	memcpy(b + off, &v, 4);
}
static void put64(unsigned char *b, size_t off, uint64_t v)
{
	memcpy(b + off, &v, 8);
}

ibx_status_t ibx_rkey_pack(ibx_ctx_t *ctx, const ibx_mem_t *mem, void *buf, size_t *len_p)
{
	const rma_state_t *st;
	unsigned char b[RMA_KEY_LEN] = {0};
	unsigned flags = 0;

	if (!ctx || !mem || !buf || !len_p || !ctx->rma)
		return IBX_ERR_INVALID_PARAM;
	if (*len_p < RMA_KEY_LEN)
		return IBX_ERR_OVERFLOW;
	st = ctx->rma;
	if (mem->verbs)
		flags |= RMA_KEY_VERBS;
	if (mem->allocated || mem->shared)
		flags |= RMA_KEY_SEG;
	if (st->ctl)
		flags |= RMA_KEY_CTL;
	put32(b, 0, RMA_KEY_MAGIC);
	b[4] = RMA_KEY_VERSION;
	b[5] = (unsigned char)flags;
	put32(b, 8, (uint32_t)ctx->rank);
	put32(b, 12, (uint32_t)getpid());
	put64(b, 16, (uint64_t)(uintptr_t)mem->addr);
	put64(b, 24, (uint64_t)mem->len);
	put32(b, 32, mem->verbs_rkey);
	put32(b, 36, (uint32_t)(flags & RMA_KEY_SEG ? mem->seg_fd : -1));
	put64(b, 40, (uint64_t)(flags & RMA_KEY_SEG ? mem->seg_len : 0));
	put32(b, 48, (uint32_t)(st->ctl ? st->ctl_fd : -1));
	put64(b, 52, (uint64_t)(flags & RMA_KEY_SEG ? mem->seg_off : 0));
	put64(b, 60, flags & RMA_KEY_SEG ? mem->seg_ino : 0);
	put32(b, RMA_KEY_SUMMED, ibx_rma_key_checksum(b, RMA_KEY_SUMMED));
	memcpy(buf, b, RMA_KEY_LEN);
	*len_p = RMA_KEY_LEN;
	return IBX_OK;
}
