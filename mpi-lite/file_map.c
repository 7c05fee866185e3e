/*
 * file_map.c — one data access as vectored system calls: the stream bytes
 * [s, s + n) of the view against (buf, count, memory type).
 *
 * Two cursors of the datatype engine walk side by side, one over the
 * filetype (tiled from disp: its "addresses" are file offsets), one over
 * the memory type (real addresses). The file cursor yields the next
 * contiguous run of the file (adjacent blocks, also across filetype copies,
 * merged); the memory cursor fills an iovec list with the memory blocks of
 * exactly that many bytes; one preadv / pwritev moves them:
 *
 *   file:    |run 0 ....|      |run 1 .........|      |run 2|
 *   memory:  [a][b ][c]         [d  ][e][f ... ]       [g]
 *   calls:   pwritev(3 iov @ run 0)  pwritev(3 iov @ run 1)  pwrite(...)
 *
 * So the memory layout never costs a system call of its own (nor a packing
 * copy), and a dense view is one call per IOV_MAX memory blocks, whatever
 * the memory type. A short transfer resumes where the kernel stopped: the
 * memory cursor seeks back to the first byte not moved. A read that meets
 * the end of the file stops there (the status says how much was read).
 */
#include "file_int.h"

#include "dtype_rdma/dtype.h"

#include <errno.h>
#include <limits.h>
#include <unistd.h>

/* iovec entries per call (Linux's IOV_MAX) */
#define MAP_IOV 1024

/* The memory side: a plain pointer for contiguous types, else a cursor. */
typedef struct map_mem {
	bool contig;
	char *p; /* contig: the next byte */
	ibx_dt_cursor_t c;
	struct iovec iov[MAP_IOV];
} map_mem_t;

/* Moves @len bytes between the file at @off and the memory side; *moved_p
 * is short only at the end of the file (reads). 0 or errno. */
static int map_run(int fd, bool write, map_mem_t *m, off_t off, int64_t len, int64_t *moved_p)
{
	int64_t moved = 0;

	while (moved < len) {
		int64_t b, p0 = 0;
		ssize_t r;
		int n;

		if (m->contig) {
			b = len - moved;
			if (b > SSIZE_MAX)
				b = SSIZE_MAX;
			r = write ? pwrite(fd, m->p, (size_t)b, off + moved)
				  : pread(fd, m->p, (size_t)b, off + moved);
		} else {
			p0 = ibx_dt_cursor_pos(&m->c);
			ibx_dt_cursor_iov(&m->c, len - moved, m->iov, MAP_IOV, &n, &b);
			r = write ? pwritev(fd, m->iov, n, off + moved)
				  : preadv(fd, m->iov, n, off + moved);
		}
		if (r < 0) {
			int e = errno;

			if (!m->contig)
				ibx_dt_cursor_seek(&m->c, p0);
			if (e == EINTR)
				continue;
			*moved_p = moved;
			return e;
		}
		if (m->contig)
			m->p += r;
		else if (r < b)
			ibx_dt_cursor_seek(&m->c, p0 + r);
		moved += r;
		if (r == 0)
			break; /* end of file (a write of > 0 bytes never returns 0) */
	}
	*moved_p = moved;
	return 0;
}

int mpil_file_map_xfer(MPI_File fh, bool write, int64_t s, void *buf, int count, MPI_Datatype dt,
		       int64_t nbytes, int64_t *done_p)
{
	map_mem_t mem; /* 16 KiB of iovecs: on the stack, as the call is synchronous */
	ibx_dt_cursor_t fc;
	int64_t done = 0, moved, k0, r0, ntiles;
	ibx_status_t st;
	int err = 0;

	*done_p = 0;
	mem.contig = mpil_dt_contig(dt);
	if (mem.contig) {
		mem.p = (char *)buf + dt->true_lb;
	} else {
		st = ibx_dt_cursor_init(&mem.c, dt->engine, count, buf, 0);
		if (st != IBX_OK)
			return EINVAL;
	}
	if (fh->ft_contig) {
		err = map_run(fh->fd, write, &mem, fh->disp + s, nbytes, &done);
		*done_p = done;
		return err;
	}
	k0 = s / fh->ft_size;
	r0 = s % fh->ft_size;
	ntiles = (r0 + nbytes + fh->ft_size - 1) / fh->ft_size;
	st = ibx_dt_cursor_init(&fc, fh->filetype->engine, ntiles,
				(void *)(uintptr_t)(fh->disp + k0 * fh->ft_extent), r0);
	if (st != IBX_OK)
		return st == IBX_ERR_OVERFLOW ? EOVERFLOW : EINVAL;
	while (done < nbytes) {
		struct iovec run;
		int64_t len;
		int n = 0;

		ibx_dt_cursor_iov(&fc, nbytes - done, &run, 1, &n, &len);
		if (n == 0 || len == 0)
			break;
		err = map_run(fh->fd, write, &mem, (off_t)(uintptr_t)run.iov_base, len, &moved);
		done += moved;
		if (err || moved < len)
			break;
	}
	*done_p = done;
	return err;
}

void mpil_file_map_range(MPI_File fh, int64_t s, int64_t n, MPI_Offset *lo_p, MPI_Offset *hi_p)
{
	if (fh->ft_contig) {
		*lo_p = fh->disp + s;
		*hi_p = fh->disp + s + n;
		return;
	}
	*lo_p = mpil_file_view_offset(fh, s);
	*hi_p = mpil_file_view_offset(fh, s + n - 1) + 1;
}
