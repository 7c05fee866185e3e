/*
 * mpitest.h — helpers shared by the tests/mpi programs.
 *
 * A failed check prints where and why (with the rank), then ends the whole
 * job through MPI_Abort, so every launcher reports a non-zero status and no
 * rank is left waiting for the one that failed.
 */
#ifndef MPITEST_H
#define MPITEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mt_rank = -1;

static inline void mt_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
static inline void mt_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL [rank %d] %s:%d: ", mt_rank, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond))                                                                       \
			mt_fail(__FILE__, __LINE__, __VA_ARGS__);                                  \
	} while (0)

/* An MPI call that must succeed. */
#define MPI_OK(call)                                                                               \
	do {                                                                                       \
		int mt_rc_ = (call);                                                               \
		if (mt_rc_ != MPI_SUCCESS)                                                         \
			mt_fail(__FILE__, __LINE__, "%s returned %d", #call, mt_rc_);              \
	} while (0)

/* An MPI call that must fail with error class @cls (under MPI_ERRORS_RETURN). */
/* 1 when built against mpi-lite (checks of what it promises beyond MPI 3.1,
 * or of its own behaviour where implementations differ), else 0. */
#ifdef MPILITE
#define MPILITE_BUILD 1
#else
#define MPILITE_BUILD 0
#endif

#define MPI_FAILS(cls, call)                                                                       \
	do {                                                                                       \
		int mt_rc_ = (call), mt_cls_ = -1;                                                 \
		if (mt_rc_ == MPI_SUCCESS)                                                         \
			mt_fail(__FILE__, __LINE__, "%s succeeded, expected %s", #call, #cls);     \
		MPI_Error_class(mt_rc_, &mt_cls_);                                                 \
		if (mt_cls_ != (cls))                                                              \
			mt_fail(__FILE__, __LINE__, "%s: error class %d, expected %s (%d)", #call, \
				mt_cls_, #cls, cls);                                               \
	} while (0)

/* Deterministic content: byte i of a message from @src with @salt. */
static inline unsigned char mt_byte(size_t i, int src, int salt)
{
	return (unsigned char)((i * 131u + (size_t)src * 17u + (size_t)salt * 7u + (i >> 12)) &
			       0xff);
}

static inline void mt_fill(void *buf, size_t len, int src, int salt)
{
	unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = mt_byte(i, src, salt);
}

/* Index of the first wrong byte, or -1. */
static inline long mt_verify(const void *buf, size_t len, int src, int salt)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i] != mt_byte(i, src, salt))
			return (long)i;
	return -1;
}

static inline void mt_init(int *argc, char ***argv, int *rank, int *size)
{
	MPI_OK(MPI_Init(argc, argv));
	MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
	MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, size));
	mt_rank = *rank;
}

/* A new directory under $TMPDIR (or /tmp), made by rank 0 of the world
 * and broadcast: @dir (@len bytes, the same on every rank) gets its path.
 * The MPI-IO tests put their files there and remove it at the end. */
static inline void mt_make_tmpdir(char *dir, int len, const char *prefix)
{
	if (mt_rank == 0) {
		const char *t = getenv("TMPDIR");

		snprintf(dir, (size_t)len, "%s/%s-XXXXXX", t && *t ? t : "/tmp", prefix);
		if (!mkdtemp(dir))
			mt_fail(__FILE__, __LINE__, "mkdtemp %s", dir);
	}
	MPI_OK(MPI_Bcast(dir, len, MPI_CHAR, 0, MPI_COMM_WORLD));
}

/* Sends (ids[i], my rank) around the ring of each of @comms[n] at once with
 * one tag, receiving
 * with MPI_ANY_SOURCE / MPI_ANY_TAG, and checks what arrives. All the
 * rings run at once: a message that lands on the wrong communicator is
 * caught. */
static inline void mt_rings(int n, const MPI_Comm *comms, const int *ids)
{
	MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
	int(*in)[2] = malloc(sizeof(int[2]) * (size_t)n),
	(*out)[2] = malloc(sizeof(int[2]) * (size_t)n);
	MPI_Status *st = malloc(sizeof(MPI_Status) * 2 * (size_t)n);

	CHECK(rq && in && out && st, "out of memory");
	for (int i = 0; i < n; i++) {
		int r, s;

		MPI_OK(MPI_Comm_rank(comms[i], &r));
		MPI_OK(MPI_Comm_size(comms[i], &s));
		out[i][0] = ids[i];
		out[i][1] = r;
		MPI_OK(MPI_Irecv(in[i], 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comms[i],
				 &rq[2 * i]));
		MPI_OK(MPI_Isend(out[i], 2, MPI_INT, (r + 1) % s, 77, comms[i], &rq[2 * i + 1]));
	}
	MPI_OK(MPI_Waitall(2 * n, rq, st));
	for (int i = 0; i < n; i++) {
		int r, s;

		MPI_OK(MPI_Comm_rank(comms[i], &r));
		MPI_OK(MPI_Comm_size(comms[i], &s));
		CHECK(in[i][0] == ids[i], "communicator %d received a message of communicator %d",
		      ids[i], in[i][0]);
		CHECK(in[i][1] == (r - 1 + s) % s && st[2 * i].MPI_SOURCE == in[i][1] &&
			  st[2 * i].MPI_TAG == 77,
		      "communicator %d: from rank %d (source %d), expected %d", ids[i], in[i][1],
		      st[2 * i].MPI_SOURCE, (r - 1 + s) % s);
	}
	free(rq);
	free(in);
	free(out);
	free(st);
}

#endif /* MPITEST_H */
