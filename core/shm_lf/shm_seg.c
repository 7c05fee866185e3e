/*
 * shm_seg.c — shared segments of the node-local path: creation (sized for
 * one area per local peer, placed on the owner's NUMA node and
 * first-touched by the owner), attaching a peer's segment, unlinking, and
 * the sweep of segments that a killed job left behind.
 *
 * Life of a segment (the path module drives it; see shm_path.c):
 *
 *   owner j                                   peer i
 *   create  <dir>/ibx-<job>-<j>  (O_EXCL)
 *   mbind(PREFERRED, j's node), fallocate,
 *   first touch, header, magic (release)
 *   boot_put(path, pid, size) ── fence ──►    attach: open, mmap(POPULATE),
 *                                             check magic/owner/geometry
 *                             ◄── fence ──
 *   unlink (ready)                            (keeps its mapping)
 *
 * Between create and unlink a kill -9 can strand the file. The next ibx
 * job on the node sweeps it (ibx_shm_sweep) once both the creator and the
 * launcher that started it are gone, and mpilite-run sweeps its own job's
 * names after the job as a backstop. A live job's file is never swept:
 * its creator is alive while it exists (the creator unlinks before it
 * exits normally), and a file whose header is not complete yet (no magic)
 * is left alone.
 */
#define _GNU_SOURCE /* process_vm_readv, sched_getcpu */
#include "shm_int.h"

#include <dirent.h>
#include <fcntl.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

IBX_CONFIG_DEFINE(ibx_shm, "core/shm_lf", "IBX_", ibx_shm_config_t, IBX_SHM_CONFIG, NULL)

#define SHM_PAGE 4096u

static size_t round_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

ibx_status_t ibx_shm_geom_check(const ibx_shm_geom_t *g)
{
	if (g->ring_slots < 8 || g->ring_slots > 65536 || (g->ring_slots & (g->ring_slots - 1))) {
		ibx_error("IBX_SHM_RING_SLOTS=%u: must be a power of two in [8, 65536]",
			  g->ring_slots);
		return IBX_ERR_INVALID_PARAM;
	}
	if (g->pipe_chunks < 2 || g->pipe_chunks > 1024) {
		ibx_error("IBX_SHM_PIPE_CHUNKS=%u: must be in [2, 1024]", g->pipe_chunks);
		return IBX_ERR_INVALID_PARAM;
	}
	if (g->pipe_chunk < 4096 || g->pipe_chunk > (64u << 20) || g->pipe_chunk % IBX_CACHELINE) {
		ibx_error("IBX_SHM_PIPE_CHUNK=%llu: must be a multiple of 64 in [4k, 64m]",
			  (unsigned long long)g->pipe_chunk);
		return IBX_ERR_INVALID_PARAM;
	}
	if (g->cells > 1024 || g->cell_size > (64u << 10) || g->cell_size % IBX_CACHELINE ||
	    (g->cells && !g->cell_size)) {
		ibx_error("IBX_SHM_EAGER_CELLS=%u of %u bytes: at most 1024 cells, each a multiple "
			  "of 64 bytes up to 64 KiB (IBX_SHM_EAGER_LIMIT)",
			  g->cells, g->cell_size);
		return IBX_ERR_INVALID_PARAM;
	}
	return IBX_OK;
}

ibx_status_t ibx_shm_area_layout(const ibx_shm_geom_t *g, ibx_shm_area_layout_t *l_p)
{
	ibx_shm_area_layout_t l;
	ibx_status_t st = ibx_shm_geom_check(g);

	if (st != IBX_OK)
		return st;
	l.slots_off = 0;
	l.ack_off = (size_t)g->ring_slots * sizeof(ibx_shm_slot_t);
	l.hdrs_off = l.ack_off + sizeof(ibx_shm_ack_t);
	/* chunk data page aligned: memcpy's best case, and no chunk shares a
	 * page with the flags it is polled by */
	l.data_off =
	    round_up(l.hdrs_off + (size_t)g->pipe_chunks * sizeof(ibx_shm_chunk_hdr_t), SHM_PAGE);
	l.cells_off = round_up(l.data_off + (size_t)g->pipe_chunks * g->pipe_chunk, SHM_PAGE);
	l.size = round_up(l.cells_off + (size_t)g->cells * g->cell_size, SHM_PAGE);
	*l_p = l;
	return IBX_OK;
}

ibx_status_t ibx_shm_seg_path(const char *dir, const char *jobid, int rank, char *out,
			      size_t outlen)
{
	int n = snprintf(out, outlen, "%s/" IBX_SHM_PREFIX "%s-%d", dir, jobid, rank);

	if (n < 0 || (size_t)n >= outlen) {
		ibx_error("shm segment path %s/" IBX_SHM_PREFIX "%s-%d is too long", dir, jobid,
			  rank);
		return IBX_ERR_INVALID_PARAM;
	}
	return IBX_OK;
}

static uint64_t pid_namespace(void)
{
	static uint64_t ns;
	struct stat sb;

	if (!ns && stat("/proc/self/ns/pid", &sb) == 0)
		ns = (uint64_t)sb.st_ino;
	return ns;
}

/* Prefers the NUMA node we run on for the whole segment (a shared policy on
 * the tmpfs object, so pages keep it whoever faults them). PREFERRED, not
 * BIND: a full node must not turn into SIGBUS. Placement is an
 * optimisation; failing it only costs a debug line. */
static void seg_place(void *base, size_t size)
{
	struct bitmask *nodes;
	int cpu, node;

	if (numa_available() < 0)
		return;
	cpu = sched_getcpu();
	node = cpu >= 0 ? numa_node_of_cpu(cpu) : -1;
	if (node < 0)
		return;
	nodes = numa_allocate_nodemask();
	if (!nodes)
		return;
	numa_bitmask_setbit(nodes, (unsigned)node);
	if (mbind(base, size, MPOL_PREFERRED, nodes->maskp, nodes->size + 1, 0))
		ibx_debug("shm: mbind(node %d) of the segment failed: %s", node, strerror(errno));
	numa_free_nodemask(nodes);
}

/* Reads the header of a segment file; false if it is not a complete ibx
 * segment of ours. */
static bool seg_file_header(int fd, ibx_shm_seg_hdr_t *h)
{
	struct stat sb;

	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
	    (size_t)sb.st_size < sizeof(*h))
		return false;
	if (pread(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h))
		return false;
	return atomic_load_explicit(&h->magic, memory_order_relaxed) == IBX_SHM_MAGIC &&
	       h->version == IBX_SHM_VERSION && h->uid == (uint32_t)geteuid();
}

/* A stranded segment: complete header, our pid namespace (pids of another
 * namespace mean nothing here), creator gone, launcher gone. */
static bool seg_file_stale(int dfd, const char *name)
{
	ibx_shm_seg_hdr_t h;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	bool ok;

	if (fd < 0)
		return false;
	ok = seg_file_header(fd, &h);
	close(fd);
	if (!ok || h.pidns != pid_namespace())
		return false;
	return !ibx_pid_alive(h.owner_pid) &&
	       (h.launcher_pid <= 1 || !ibx_pid_alive(h.launcher_pid));
}

int ibx_shm_sweep(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d) {
		ibx_debug("shm: cannot scan %s for stale segments: %s", dir, strerror(errno));
		return 0;
	}
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, IBX_SHM_PREFIX, strlen(IBX_SHM_PREFIX)))
			continue;
		if (!seg_file_stale(dirfd(d), de->d_name))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0) {
			ibx_info("shm: removed %s/%s, left by a job that died", dir, de->d_name);
			n++;
		} else if (errno != ENOENT) {
			ibx_debug("shm: cannot remove stale %s/%s: %s", dir, de->d_name,
				  strerror(errno));
		}
	}
	closedir(d);
	return n;
}

/* Opens a new segment file; an old file of the same name is replaced only
 * if it is stale (a crashed run that reused the job id). */
static int seg_open_excl(const char *path)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		const char *slash;
		char dir[PATH_MAX];

		if (fd >= 0 || errno != EEXIST || attempt)
			return fd;
		slash = strrchr(path, '/');
		if (!slash || (size_t)(slash - path) >= sizeof(dir))
			return -1;
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
		int dfd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		bool stale = dfd >= 0 && seg_file_stale(dfd, slash + 1);

		if (dfd >= 0)
			close(dfd);
		if (!stale) {
			errno = EEXIST;
			return -1;
		}
		ibx_info("shm: replacing stale segment %s", path);
		if (unlink(path) && errno != ENOENT)
			return -1;
	}
	return -1;
}

ibx_status_t ibx_shm_seg_create(const char *dir, const char *jobid, int rank, const int *peers,
				int npeers, const ibx_shm_geom_t *g, ibx_shm_seg_t *seg)
{
	ibx_shm_area_layout_t l;
	ibx_shm_seg_hdr_t *h;
	size_t hdr_size, size;
	ibx_status_t st;
	void *base;
	int fd, err;

	memset(seg, 0, sizeof(*seg));
	st = ibx_shm_area_layout(g, &l);
	if (st != IBX_OK)
		return st;
	if (npeers < 0 || (size_t)npeers > (SIZE_MAX - SHM_PAGE) / l.size)
		return IBX_ERR_OVERFLOW;
	hdr_size = round_up(sizeof(*h) + (size_t)npeers * sizeof(int32_t), SHM_PAGE);
	size = hdr_size + (size_t)npeers * l.size;
	st = ibx_shm_seg_path(dir, jobid, rank, seg->path, sizeof(seg->path));
	if (st != IBX_OK)
		return st;

	fd = seg_open_excl(seg->path);
	if (fd < 0) {
		ibx_error("shm: cannot create %s: %s", seg->path, strerror(errno));
		return IBX_ERR_IO;
	}
	seg->owner = true;
	seg->linked = true;
	if (ftruncate(fd, (off_t)size)) {
		ibx_error("shm: cannot size %s to %zu bytes: %s", seg->path, size, strerror(errno));
		st = IBX_ERR_IO;
		goto err_unlink;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		ibx_error("shm: cannot map %s (%zu bytes): %s", seg->path, size, strerror(errno));
		st = IBX_ERR_NO_MEMORY;
		goto err_unlink;
	}
	seg->base = base;
	seg->size = size;
	seg_place(base, size);
	/* Reserve the pages now: a full tmpfs must be an error here, not a
	 * SIGBUS in the middle of a message. */
	err = posix_fallocate(fd, 0, (off_t)size);
	if (err && err != EOPNOTSUPP && err != EINVAL) {
		ibx_error("shm: cannot allocate %zu bytes for %s in %s: %s", size, seg->path, dir,
			  strerror(err));
		st = IBX_ERR_NO_MEMORY;
		goto err_unmap;
	}
	close(fd);
	fd = -1;
	/* First touch by the owner: page tables populated here, not on the
	 * first message. */
	for (size_t off = 0; off < size; off += SHM_PAGE)
		((volatile char *)base)[off] = 0;

	h = base;
	h->version = IBX_SHM_VERSION;
	h->owner_rank = rank;
	h->owner_pid = (int32_t)getpid();
	h->launcher_pid = (int32_t)getppid();
	h->uid = (uint32_t)geteuid();
	h->npeers = (uint32_t)npeers;
	h->pidns = pid_namespace();
	h->size = size;
	h->area_off = hdr_size;
	h->area_size = l.size;
	h->geom = *g;
	snprintf(h->jobid, sizeof(h->jobid), "%s", jobid);
	for (int i = 0; i < npeers; i++)
		h->peers[i] = peers[i];
	/* Last: a sweeper or an attacher that sees the magic sees the rest. */
	atomic_store_explicit(&h->magic, IBX_SHM_MAGIC, memory_order_release);
	seg->hdr = h;
	return IBX_OK;

err_unmap:
	munmap(base, size);
	seg->base = NULL;
err_unlink:
	if (fd >= 0)
		close(fd);
	unlink(seg->path);
	seg->linked = false;
	return st;
}

ibx_status_t ibx_shm_seg_attach(const char *path, int owner_rank, pid_t owner_pid, size_t size,
				ibx_shm_seg_t *seg)
{
	ibx_shm_area_layout_t l;
	ibx_shm_seg_hdr_t *h;
	struct stat sb;
	void *base;
	int fd;

	memset(seg, 0, sizeof(*seg));
	if (snprintf(seg->path, sizeof(seg->path), "%s", path) >= (int)sizeof(seg->path))
		return IBX_ERR_INVALID_PARAM;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		ibx_error("shm: cannot open rank %d's segment %s: %s", owner_rank, path,
			  strerror(errno));
		return IBX_ERR_UNREACHABLE;
	}
	if (fstat(fd, &sb) || (size_t)sb.st_size != size || size < sizeof(*h)) {
		ibx_error("shm: rank %d's segment %s has %lld bytes, expected %zu", owner_rank,
			  path, (long long)sb.st_size, size);
		close(fd);
		return IBX_ERR_CORRUPT;
	}
	/* POPULATE: map every page now rather than fault on the fast path */
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED) {
		ibx_error("shm: cannot map rank %d's segment %s (%zu bytes): %s", owner_rank, path,
			  size, strerror(errno));
		return IBX_ERR_NO_MEMORY;
	}
	h = base;
	if (atomic_load_explicit(&h->magic, memory_order_acquire) != IBX_SHM_MAGIC ||
	    h->version != IBX_SHM_VERSION || h->owner_rank != owner_rank ||
	    h->owner_pid != (int32_t)owner_pid || h->size != size ||
	    ibx_shm_area_layout(&h->geom, &l) != IBX_OK || l.size != h->area_size ||
	    h->area_off < sizeof(*h) + (uint64_t)h->npeers * sizeof(int32_t) ||
	    h->area_off > size || h->npeers > (size - h->area_off) / l.size) {
		ibx_error("shm: %s is not the segment of rank %d (pid %d), or it is corrupt", path,
			  owner_rank, (int)owner_pid);
		munmap(base, size);
		return IBX_ERR_CORRUPT;
	}
	seg->base = base;
	seg->size = size;
	seg->hdr = h;
	return IBX_OK;
}

int ibx_shm_seg_area_index(const ibx_shm_seg_t *seg, int rank)
{
	int lo = 0, hi = (int)seg->hdr->npeers - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		int r = seg->hdr->peers[mid];

		if (r == rank)
			return mid;
		if (r < rank)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

void ibx_shm_seg_area(const ibx_shm_seg_t *seg, int idx, ibx_shm_area_t *a)
{
	ibx_shm_area_layout_t l;
	uint8_t *base;

	(void)ibx_shm_area_layout(&seg->hdr->geom, &l); /* checked at create/attach */
	base = (uint8_t *)seg->base + seg->hdr->area_off + (size_t)idx * l.size;
	a->slots = (ibx_shm_slot_t *)(base + l.slots_off);
	a->ack = (ibx_shm_ack_t *)(base + l.ack_off);
	a->chunk_hdrs = (ibx_shm_chunk_hdr_t *)(base + l.hdrs_off);
	a->chunks = base + l.data_off;
	a->cells = base + l.cells_off;
}

ibx_status_t ibx_shm_seg_unlink(ibx_shm_seg_t *seg)
{
	if (!seg->owner || !seg->linked)
		return IBX_OK;
	seg->linked = false;
	if (unlink(seg->path) && errno != ENOENT) {
		ibx_error("shm: cannot unlink %s: %s", seg->path, strerror(errno));
		return IBX_ERR_IO;
	}
	return IBX_OK;
}

void ibx_shm_seg_detach(ibx_shm_seg_t *seg)
{
	(void)ibx_shm_seg_unlink(seg);
	if (seg->base)
		munmap(seg->base, seg->size);
	seg->base = NULL;
	seg->hdr = NULL;
}
