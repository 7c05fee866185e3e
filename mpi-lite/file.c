/*
 * file.c — opening and closing files and what a file is besides its data
 * (MPI-3.1 §13.2): MPI_File_open / close / delete, set_size, preallocate,
 * get_size, sync, get_amode, get_group, set_info / get_info.
 *
 * Every process of the communicator opens the file with its own POSIX
 * descriptor. Creation is done once, by rank 0, so that MPI_MODE_EXCL has
 * one winner and the others do not race to create:
 *
 *   rank 0                         ranks 1..n-1
 *   open(O_CREAT [| O_EXCL])
 *   ── agree on rank 0's error class ──────────────────────────
 *                                  open(no O_CREAT)
 *   ── agree on every rank's error class (all fail alike) ─────
 *
 * Collective calls that change the file (set_size, preallocate) are done by
 * rank 0 and their error class agreed on, so every rank returns the same.
 * MPI_MODE_APPEND is not O_APPEND (Linux would then ignore the offsets of
 * pwrite): it only places the individual file pointers at the end.
 */
#include "file_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static mpil_pool_t file_pool = MPIL_POOL_INIT(struct mpil_file);

#define AMODE_ACCESS (MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY)
#define AMODE_ALL                                                                                  \
	(AMODE_ACCESS | MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE |               \
	 MPI_MODE_UNIQUE_OPEN | MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND)

/* MPI-3.1 §13.2.1: exactly one of RDONLY / RDWR / WRONLY; RDONLY with
 * CREATE or EXCL and RDWR with SEQUENTIAL are erroneous. */
static const char *amode_problem(int amode)
{
	int access = amode & AMODE_ACCESS;

	if (amode & ~AMODE_ALL)
		return "unknown mode bits";
	if (access != MPI_MODE_RDONLY && access != MPI_MODE_RDWR && access != MPI_MODE_WRONLY)
		return "not exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR, MPI_MODE_WRONLY";
	if (access == MPI_MODE_RDONLY && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
		return "MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL";
	if (access == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL))
		return "MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL";
	return NULL;
}

static int open_flags(int amode)
{
	switch (amode & AMODE_ACCESS) {
	case MPI_MODE_RDONLY: return O_RDONLY | O_CLOEXEC;
	case MPI_MODE_WRONLY: return O_WRONLY | O_CLOEXEC;
	default: return O_RDWR | O_CLOEXEC;
	}
}

/* "ufs:/path" (ROMIO's file system prefixes) names /path. */
static const char *strip_prefix(const char *name)
{
	static const char *const prefixes[] = {"ufs:", "nfs:", "file:"};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return name + strlen(prefixes[i]);
	return name;
}

/* open(2) that refuses directories (open(O_RDONLY) accepts them). Returns
 * the descriptor or -errno. */
static int open_file(const char *path, int flags)
{
	struct stat sb;
	int fd = open(path, flags, 0666);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	return fd;
}

static bool info_ok(MPI_Info info)
{
	return !info || *(const uint32_t *)(const void *)info == MPIL_MAGIC_INFO;
}

void mpil_file_free(MPI_File fh)
{
	mpil_pool_put(&file_pool, fh);
}

/* Opens on every rank; returns the agreed error class, *errno_p the first
 * failing errno seen here (for the message). */
static int open_all(MPI_Comm comm, const char *path, int amode, int *fd_p, int *errno_p)
{
	int flags = open_flags(amode), fd = -1, err = MPI_SUCCESS, rc;

	*errno_p = 0;
	if (comm->rank == 0 && (amode & MPI_MODE_CREATE)) {
		fd = open_file(path, flags | O_CREAT | (amode & MPI_MODE_EXCL ? O_EXCL : 0));
		if (fd < 0) {
			*errno_p = -fd;
			err = mpil_file_errno_class(-fd);
		}
	}
	if (amode & MPI_MODE_CREATE) {
		int first = err;

		rc = mpil_bcast_bytes(&first, sizeof(first), 0, comm);
		if (rc != MPI_SUCCESS || first != MPI_SUCCESS) {
			if (fd >= 0)
				close(fd);
			return rc != MPI_SUCCESS ? rc : first;
		}
	}
	if (fd < 0) {
		fd = open_file(path, flags);
		if (fd < 0) {
			*errno_p = -fd;
			err = mpil_file_errno_class(-fd);
		}
	}
	err = mpil_file_agree(comm, err);
	if (err != MPI_SUCCESS) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	*fd_p = fd;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_open)
int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
	static const char F[] = "MPI_File_open";
	MPIL_CS_GUARD();
	const char *path, *why;
	MPI_File f;
	MPI_Comm dup = MPI_COMM_NULL;
	int err, fd = -1, eno = 0;
	struct stat sb;

	MPIL_CHECK(mpil_check_init(F));
	if (!mpil_comm_valid(comm))
		return mpil_file_err(NULL, MPI_ERR_COMM, F, "invalid communicator %p",
				     (void *)comm);
	if (!filename || !fh)
		return mpil_file_err(NULL, MPI_ERR_ARG, F, "%s is NULL",
				     filename ? "fh" : "filename");
	if (!info_ok(info))
		return mpil_file_err(NULL, MPI_ERR_INFO, F, "invalid info handle %p", (void *)info);
	why = amode_problem(amode);
	if (why)
		return mpil_file_err(NULL, MPI_ERR_AMODE, F, "amode 0x%x: %s", (unsigned)amode,
				     why);
	path = strip_prefix(filename);
	f = mpil_pool_get(&file_pool);
	if (!f)
		return mpil_file_err(NULL, MPI_ERR_NO_MEM, F, "no memory for a file");
	f->fd = -1;
	f->path = strdup(path);
	err = f->path ? PMPI_Comm_dup(comm, &dup) : MPI_ERR_NO_MEM;
	if (err != MPI_SUCCESS)
		goto err_free;
	PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
	err = open_all(dup, path, amode, &fd, &eno);
	if (err != MPI_SUCCESS)
		goto err_comm;
	err = mpil_info_copy(info, &f->info);
	if (err != MPI_SUCCESS)
		goto err_close;
	f->magic = MPIL_MAGIC_FILE;
	f->fd = fd;
	f->amode = amode;
	f->comm = dup;
	f->errhandler = mpil_file_default_errh;
	if (!f->errhandler->predefined)
		f->errhandler->refcount++;
	mpil_file_view_default(f);
	if ((amode & MPI_MODE_APPEND) && fstat(fd, &sb) == 0)
		f->pos = sb.st_size;
	err = mpil_file_shared_create(f, f->pos);
	if (err != MPI_SUCCESS) {
		mpil_file_view_release(f);
		mpil_info_release(f->info);
		mpil_errh_release(f->errhandler);
		f->magic = 0;
		goto err_close;
	}
	*fh = f;
	return MPI_SUCCESS;

err_close:
	close(fd);
err_comm:
	PMPI_Comm_free(&dup);
err_free:
	free(f->path);
	mpil_file_free(f);
	if (eno)
		return mpil_file_err(NULL, err, F, "%s: %s", path, strerror(eno));
	return mpil_file_err(NULL, err, F, "%s: %s", path,
			     err == MPI_ERR_NO_MEM ? "out of memory" : "failed on another rank");
}

MPIL_PMPI_ALIAS(File_close)
int PMPI_File_close(MPI_File *fh)
{
	static const char F[] = "MPI_File_close";
	MPIL_CS_GUARD();
	MPI_File f;
	int err = MPI_SUCCESS;

	MPIL_CHECK(mpil_check_init(F));
	if (!fh)
		return mpil_file_err(NULL, MPI_ERR_ARG, F, "fh is NULL");
	MPIL_CHECK(mpil_file_check(*fh, F));
	f = *fh;
	if (f->split_op)
		return mpil_file_err(f, MPI_ERR_IO, F, "%s is still in progress (no _end yet)",
				     f->split_op);
	mpil_file_atomic_free(f);
	mpil_file_shared_free(f);
	if (close(f->fd) != 0)
		err = mpil_file_errno_class(errno);
	if (f->amode & MPI_MODE_DELETE_ON_CLOSE) {
		/* every descriptor is closed before the name goes */
		mpil_barrier(f->comm);
		if (f->comm->rank == 0 && unlink(f->path) != 0 && err == MPI_SUCCESS)
			err = mpil_file_errno_class(errno);
	}
	mpil_file_view_release(f);
	mpil_info_release(f->info);
	mpil_errh_release(f->errhandler);
	PMPI_Comm_free(&f->comm);
	free(f->path);
	f->path = NULL;
	mpil_file_free(f);
	*fh = MPI_FILE_NULL;
	if (err != MPI_SUCCESS)
		return mpil_file_err(NULL, err, F, "closing: %s", strerror(errno));
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_delete)
int PMPI_File_delete(const char *filename, MPI_Info info)
{
	static const char F[] = "MPI_File_delete";
	MPIL_CS_GUARD();
	const char *path;

	MPIL_CHECK(mpil_check_init(F));
	if (!filename)
		return mpil_file_err(NULL, MPI_ERR_ARG, F, "filename is NULL");
	if (!info_ok(info))
		return mpil_file_err(NULL, MPI_ERR_INFO, F, "invalid info handle %p", (void *)info);
	path = strip_prefix(filename);
	if (unlink(path) != 0)
		return mpil_file_err(NULL, mpil_file_errno_class(errno), F, "%s: %s", path,
				     strerror(errno));
	return MPI_SUCCESS;
}

/* set_size / preallocate: rank 0 acts, every rank returns its class. */
static int resize(MPI_File fh, MPI_Offset size, bool grow_only, const char *fname)
{
	int err = MPI_SUCCESS, eno = 0;

	if (size < 0)
		return mpil_file_err(fh, MPI_ERR_ARG, fname, "negative size %lld", (long long)size);
	if ((fh->amode & AMODE_ACCESS) == MPI_MODE_RDONLY)
		return mpil_file_err(fh, MPI_ERR_READ_ONLY, fname, "file opened MPI_MODE_RDONLY");
	if (fh->amode & MPI_MODE_SEQUENTIAL)
		return mpil_file_err(fh, MPI_ERR_UNSUPPORTED_OPERATION, fname,
				     "file opened MPI_MODE_SEQUENTIAL");
	if (fh->comm->rank == 0) {
		if (grow_only) {
			struct stat sb;

			if (fstat(fh->fd, &sb) != 0)
				eno = errno;
			else if (size > sb.st_size)
				eno = posix_fallocate(fh->fd, 0, size);
		} else if (ftruncate(fh->fd, size) != 0) {
			eno = errno;
		}
		err = eno ? mpil_file_errno_class(eno) : MPI_SUCCESS;
	}
	err = mpil_file_agree(fh->comm, err);
	if (err != MPI_SUCCESS)
		return mpil_file_err(fh, err, fname, "size %lld: %s", (long long)size,
				     eno ? strerror(eno) : "failed on rank 0");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_set_size)
int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
	static const char F[] = "MPI_File_set_size";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_file_check(fh, F));
	return resize(fh, size, false, F);
}

MPIL_PMPI_ALIAS(File_preallocate)
int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
	static const char F[] = "MPI_File_preallocate";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_file_check(fh, F));
	return resize(fh, size, true, F);
}

MPIL_PMPI_ALIAS(File_get_size)
int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
	static const char F[] = "MPI_File_get_size";
	MPIL_CS_GUARD();
	struct stat sb;

	MPIL_CHECK(mpil_file_check(fh, F));
	if (!size)
		return mpil_file_err(fh, MPI_ERR_ARG, F, "size is NULL");
	if (fstat(fh->fd, &sb) != 0)
		return mpil_file_err(fh, mpil_file_errno_class(errno), F, "fstat: %s",
				     strerror(errno));
	*size = sb.st_size;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_sync)
int PMPI_File_sync(MPI_File fh)
{
	static const char F[] = "MPI_File_sync";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_file_check(fh, F));
	if ((fh->amode & AMODE_ACCESS) == MPI_MODE_RDONLY)
		return mpil_file_err(fh, MPI_ERR_ACCESS, F, "file opened MPI_MODE_RDONLY");
	if (fsync(fh->fd) != 0)
		return mpil_file_err(fh, mpil_file_errno_class(errno), F, "fsync: %s",
				     strerror(errno));
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_get_amode)
int PMPI_File_get_amode(MPI_File fh, int *amode)
{
	static const char F[] = "MPI_File_get_amode";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_file_check(fh, F));
	if (!amode)
		return mpil_file_err(fh, MPI_ERR_ARG, F, "amode is NULL");
	*amode = fh->amode;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_get_group)
int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
	static const char F[] = "MPI_File_get_group";
	MPIL_CS_GUARD();
	int err;

	MPIL_CHECK(mpil_file_check(fh, F));
	if (!group)
		return mpil_file_err(fh, MPI_ERR_ARG, F, "group is NULL");
	err = PMPI_Comm_group(fh->comm, group);
	if (err != MPI_SUCCESS)
		return mpil_file_err(fh, err, F, "making the group");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_set_info)
int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
	static const char F[] = "MPI_File_set_info";
	MPIL_CS_GUARD();
	MPI_Info copy;
	int err;

	MPIL_CHECK(mpil_file_check(fh, F));
	if (!info_ok(info))
		return mpil_file_err(fh, MPI_ERR_INFO, F, "invalid info handle %p", (void *)info);
	err = mpil_info_copy(info, &copy);
	if (err != MPI_SUCCESS)
		return mpil_file_err(fh, err, F, "copying the hints");
	mpil_info_release(fh->info);
	fh->info = copy;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(File_get_info)
int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
	static const char F[] = "MPI_File_get_info";
	MPIL_CS_GUARD();
	int err;

	MPIL_CHECK(mpil_file_check(fh, F));
	if (!info_used)
		return mpil_file_err(fh, MPI_ERR_ARG, F, "info_used is NULL");
	/* always a new object, which the caller frees */
	err = fh->info ? PMPI_Info_dup(fh->info, info_used) : PMPI_Info_create(info_used);
	/* what atomic mode costs here: "none" when the views cannot overlap */
	if (err == MPI_SUCCESS && fh->atomic)
		err = PMPI_Info_set(*info_used, "ibx_atomic_locking",
				    fh->disjoint ? "none" : "stripes");
	if (err != MPI_SUCCESS)
		return mpil_file_err(fh, err, F, "copying the hints");
	return MPI_SUCCESS;
}
