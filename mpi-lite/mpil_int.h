/*
 * mpil_int.h — mpi-lite internals: the objects behind the MPI handles and
 * the helpers every mpi-lite file shares.
 *
 * An MPI handle is a pointer to one of the structs below. Each starts with a
 * magic number (at offset 0: checking a handle of the wrong kind must not
 * read past a smaller object), so a handle that does not point to a live
 * object of the right kind (a freed request, a communicator passed as a
 * datatype, NULL) is reported with its error class instead of crashing
 * whenever the pointer is readable at all.
 *
 * How MPI maps onto the engine (include/ibx.h):
 *
 *   MPI message on comm C, tag t  ──►  ibx tag (C->cid << 32) | (uint32_t)t
 *   MPI_ANY_TAG                   ──►  mask MPIL_MASK_ANY_TAG (context only)
 *   collectives on C              ──►  context C->cid | 1: never match user p2p
 *   communicator creation on C    ──►  context C->cid | 2 (comm_cid.c)
 *   rank r of C                   ──►  world rank C->rank_to_world[r]
 *   MPI_ANY_SOURCE                ──►  IBX_ANY_SOURCE
 *   received world rank w         ──►  C->world_to_rank[w]
 *
 * Context ids are multiples of 4: MPI_COMM_WORLD has 0 (collectives 1,
 * creation 2), MPI_COMM_SELF 4; a communicator created later takes the
 * lowest id free at every member of its parent, agreed on collectively
 * (comm_cid.c), so two communicators sharing a process never share an id.
 *
 * Files by topic: init.c (environment), comm*.c (communicators), group.c,
 * attr.c (attribute caching), info.c, p2p*.c, request.c (completion),
 * datatype.c (predefined types, packing, queries), dtype_create.c (derived
 * types), op.c (reduction kernels), coll*.c, errhandler.c (error classes,
 * strings, handlers), handle.c (pools behind user-created handles),
 * file*.c (MPI-IO), mutex.c (MPIX_Mutex).
 *
 * Length: over 700 lines on purpose: the one header every mpi-lite file
 * includes, the object of each handle kind beside the others so that their
 * magic numbers and common fields stay in step.
 */
#ifndef MPIL_INT_H
#define MPIL_INT_H

#include "mpi.h"
#include "ibx_int.h"
#include "mpil_config.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

/* Every MPI_X is defined as PMPI_X with a weak MPI_X alias (profiling),
 * exported: an attribute alias with its visibility spelled out, since
 * clang gives a `#pragma weak` alias the default of -fvisibility=hidden
 * (and libmpilite.so would then have no MPI_ symbols at all). */
#define MPIL_WEAK_ALIAS_(name_, target_)                                                           \
	extern __typeof__(target_) name_                                                           \
	    __attribute__((weak, alias(#target_), visibility("default")));
#define MPIL_PMPI_ALIAS(name) MPIL_WEAK_ALIAS_(MPI_##name, PMPI_##name)
/* The same for an IBX_HOT function (an alias must not be less restrictive
 * than its target). */
#define MPIL_PMPI_ALIAS_HOT(name)                                                                  \
	extern __typeof__(PMPI_##name) MPI_##name                                                  \
	    __attribute__((weak, alias("PMPI_" #name), visibility("default"), hot));

#define MPIL_MAGIC_COMM	 0x6d436f6du /* "mCom" */
#define MPIL_MAGIC_DTYPE 0x6d447479u
#define MPIL_MAGIC_OP	 0x6d4f7021u
#define MPIL_MAGIC_REQ	 0x6d526571u
#define MPIL_MAGIC_ERRH	 0x6d457268u
#define MPIL_MAGIC_GROUP 0x6d477270u
#define MPIL_MAGIC_INFO	 0x6d496e66u
#define MPIL_MAGIC_DEAD	 0xdeadbeefu /* a freed object */
/* freed by the user, still held by a pending operation (handle.c) */
#define MPIL_MAGIC_ZOMBIE 0xdeadbee5u

/* MPI_TAG_UB: the engine tag keeps all 32 bits of a non-negative int. */
#define MPIL_TAG_UB INT_MAX

/* ---- global state ------------------------------------------------------------ */
enum mpil_state { MPIL_STATE_PRE_INIT, MPIL_STATE_INITIALIZED, MPIL_STATE_FINALIZED };

struct mpil_request;
struct mpil_req_chunk;

typedef struct mpil_global {
	int state;	  /* enum mpil_state */
	int thread_level; /* provided level */
	int mt;		  /* MPI_THREAD_MULTIPLE: MPI calls take the section (thread.c) */
	pthread_t main_thread;
	ibx_ctx_t *ctx;
	int world_rank, world_size;
	/* request pool (request.c) */
	struct mpil_request *req_free;
	struct mpil_req_chunk *req_chunks;
	struct mpil_request *req_zombies; /* MPI_Request_free'd while still active */
} mpil_global_t;

extern mpil_global_t mpil_g;

static inline bool mpil_initialized(void)
{
	return ibx_likely(mpil_g.state == MPIL_STATE_INITIALIZED);
}

/* ---- MPI_THREAD_MULTIPLE: the critical section (thread.c) -------------------- */
void mpil_cs_enter_slow(void);
void mpil_cs_exit_slow(void);
/* Under MPI_THREAD_MULTIPLE, if another thread waits to enter: releases the
 * section (whatever this thread's depth), lets it in, takes it back. */
void mpil_cs_yield(void);
/* Turns the section on (MPI_Init_thread granting MPI_THREAD_MULTIPLE). */
void mpil_cs_start(ibx_ctx_t *ctx);

typedef struct mpil_cs_guard {
	bool held;
} mpil_cs_guard_t;

static inline mpil_cs_guard_t mpil_cs_enter(void)
{
	mpil_cs_guard_t g = {false};

	if (ibx_unlikely(__atomic_load_n(&mpil_g.mt, __ATOMIC_RELAXED))) {
		mpil_cs_enter_slow();
		g.held = true;
	}
	return g;
}

static inline void mpil_cs_exit(mpil_cs_guard_t *g)
{
	if (ibx_unlikely(g->held))
		mpil_cs_exit_slow();
}

/* First statement of every MPI function (after its name F): the body runs
 * inside the section, left on every return path. */
#define MPIL_CS_GUARD()                                                                            \
	mpil_cs_guard_t mpil_cs_guard_ __attribute__((cleanup(mpil_cs_exit), unused)) =            \
	    mpil_cs_enter()

/* ---- error handlers and error reporting (errhandler.c) ----------------------- */
/* USER: made for communicators (comm_fn), WIN_USER: for windows (win_fn),
 * FILE_USER: for files (file_fn, file.c). */
enum mpil_errh_kind {
	MPIL_ERRH_FATAL,
	MPIL_ERRH_RETURN,
	MPIL_ERRH_USER,
	MPIL_ERRH_WIN_USER,
	MPIL_ERRH_FILE_USER
};

struct mpil_errhandler {
	uint32_t magic;
	int kind;     /* enum mpil_errh_kind */
	int refcount; /* user handlers: handle + objects using it */
	bool predefined;
	MPI_Comm_errhandler_function *comm_fn;
	MPI_Win_errhandler_function *win_fn;
	MPI_File_errhandler_function *file_fn;
};

/* Drops a reference to a user handler (predefined ones are never freed). */
void mpil_errh_release(MPI_Errhandler eh);

/* "MPI_ERR_RANK" for MPI_ERR_RANK; NULL if @errclass is not one. */
const char *mpil_err_class_name(int errclass);
/* The MPI error class that an engine status becomes. */
int mpil_err_from_ibx(ibx_status_t st);

/*
 * Raises error @errclass in MPI function @fname on @comm (MPI_COMM_WORLD when
 * @comm is NULL or invalid): formats "<class name>: <detail>", then invokes
 * the communicator's handler. MPI_ERRORS_ARE_FATAL prints
 *   [rank 2] MPI error in MPI_Send: MPI_ERR_RANK: invalid rank 7 (communicator size 4)
 * and ends the job (ibx_abort). Returns @errclass for the caller to return.
 */
int mpil_err(MPI_Comm comm, int errclass, const char *fname, const char *fmt, ...)
    __attribute__((cold, noinline, format(printf, 4, 5)));
/* A call before MPI_Init or after MPI_Finalize. */
int mpil_err_state(const char *fname) __attribute__((cold, noinline));
/* MPI_ERRORS_ARE_FATAL: prints "[rank R] MPI error in F: CLASS: detail", ends the job. */
void mpil_err_fatal(int errclass, const char *fname, const char *detail)
    __attribute__((cold, noreturn));

#define MPIL_CHECK(expr)                                                                           \
	do {                                                                                       \
		int mpil_rc_ = (expr);                                                             \
		if (ibx_unlikely(mpil_rc_ != MPI_SUCCESS))                                         \
			return mpil_rc_;                                                           \
	} while (0)

static inline int mpil_check_init(const char *fname)
{
	return mpil_initialized() ? MPI_SUCCESS : mpil_err_state(fname);
}

/* ---- pools of user-created objects (handle.c) --------------------------------
 * Datatypes, communicators, groups and info objects come from pools of
 * fixed-size slots that are recycled first-in first-out and never returned
 * to malloc before MPI_Finalize: a freed handle keeps pointing to readable
 * memory whose magic says MPIL_MAGIC_DEAD (until the slot is reused), so
 * using it is reported, not a crash. Objects start with their uint32_t
 * magic and are at least 16 bytes. */
typedef struct mpil_pool {
	size_t objsize;
	void *chunks;	   /* allocation list */
	void *head, *tail; /* free slots, oldest first */
} mpil_pool_t;

#define MPIL_POOL_INIT(type)                                                                       \
	{                                                                                          \
		.objsize = sizeof(type)                                                            \
	}

/* A zeroed slot, or NULL when out of memory. */
void *mpil_pool_get(mpil_pool_t *pool);
/* Marks @obj dead and queues its slot for reuse. */
void mpil_pool_put(mpil_pool_t *pool, void *obj);
/* MPI_Finalize: @live (may be NULL) is called on each slot still in use,
 * then every chunk is freed. */
void mpil_pool_fini(mpil_pool_t *pool, void (*live)(void *obj));

/* ---- communicators (comm.c) -------------------------------------------------- */
struct mpil_comm {
	uint32_t magic;
	int refcount;
	uint32_t cid; /* context id (even); collectives use cid | 1 */
	int rank, size;
	/* NULL means identity (the world's own numbering). Otherwise
	 * rank_to_world[size] and world_to_rank[world size], -1 for
	 * processes outside the communicator. */
	int *rank_to_world;
	int *world_to_rank;
	MPI_Errhandler errhandler;
	bool predefined;
	uint32_t coll_seq; /* nonblocking collectives started (their tags, nbc.c) */
	void *attrs;	   /* cached attributes (attr.c) */
	void *topo;	   /* process topology (topo_int.h), or NULL */
	void *coll_split;  /* its split by nodes (coll_node.c), built on first use */
	MPI_Info info;	   /* hints (MPI_Comm_set_info), or MPI_INFO_NULL */
	char name[MPI_MAX_OBJECT_NAME];
};

static inline bool mpil_comm_valid(MPI_Comm comm)
{
	return comm && comm->magic == MPIL_MAGIC_COMM;
}

static inline int mpil_comm_to_world(MPI_Comm comm, int rank)
{
	return comm->rank_to_world ? comm->rank_to_world[rank] : rank;
}

static inline int mpil_comm_from_world(MPI_Comm comm, int world_rank)
{
	return comm->world_to_rank ? comm->world_to_rank[world_rank] : world_rank;
}

/* Sets up MPI_COMM_WORLD and MPI_COMM_SELF (MPI_Init) and frees them.
 * mpil_comm_finalize_attrs runs first in MPI_Finalize: the attribute
 * delete callbacks of MPI_COMM_SELF, then MPI_COMM_WORLD (MPI-3.1 §8.7.1). */
int mpil_comm_init(void);
int mpil_comm_finalize_attrs(void);
void mpil_comm_fini(void);

/* A pending operation keeps its communicator alive past MPI_Comm_free
 * (whose handle is dead for the user at once). */
static inline void mpil_comm_retain(MPI_Comm comm)
{
	comm->refcount++;
}
void mpil_comm_release(MPI_Comm comm);

static inline int mpil_check_comm(MPI_Comm comm, const char *fname)
{
	if (ibx_likely(mpil_comm_valid(comm)))
		return MPI_SUCCESS;
	if (!comm)
		return mpil_err(NULL, MPI_ERR_COMM, fname, "communicator is MPI_COMM_NULL");
	return mpil_err(NULL, MPI_ERR_COMM, fname, "invalid communicator handle %p", (void *)comm);
}

/* ---- engine tags ------------------------------------------------------------- */
#define MPIL_MASK_ANY_TAG (~(ibx_tag_t)0 << 32)
#define MPIL_MASK_TAG	  IBX_TAG_MASK_ALL

static inline ibx_tag_t mpil_tag(uint32_t cid, int tag)
{
	return ((ibx_tag_t)cid << 32) | (uint32_t)tag;
}

static inline uint32_t mpil_coll_cid(MPI_Comm comm)
{
	return comm->cid | 1u;
}

/* ---- groups (group.c) ---------------------------------------------------------- */
struct mpil_group {
	uint32_t magic;
	int refcount;
	int size;
	int rank;   /* this process's rank in it, or MPI_UNDEFINED */
	int *world; /* world rank of each member */
	bool predefined;
};

static inline bool mpil_group_valid(MPI_Group g)
{
	return g && g->magic == MPIL_MAGIC_GROUP;
}

int mpil_check_group(MPI_Comm comm, MPI_Group g, const char *fname);
/* A new group of @n members with world ranks @world (copied); NULL when
 * out of memory. */
MPI_Group mpil_group_new(int n, const int *world);
void mpil_group_release(MPI_Group g);
void mpil_group_fini(void);

/* ---- info objects (info.c) ------------------------------------------------------- */
int mpil_check_info(MPI_Comm comm, MPI_Info info, bool null_ok, const char *fname);
/* A copy of @info (MPI_INFO_NULL stays so); MPI error class. */
int mpil_info_copy(MPI_Info info, MPI_Info *copy_p);
void mpil_info_release(MPI_Info info);
void mpil_info_fini(void);

/* ---- attribute caching (attr.c) ------------------------------------------------------ */
/* MPI_Comm_dup: the copy callbacks of @old's attributes decide what @newcomm
 * gets. Returns an MPI error class (a callback's failure). */
int mpil_attr_dup(MPI_Comm old, MPI_Comm newcomm);
/* Runs the delete callbacks of all of @comm's attributes, newest first, and
 * drops them; the first callback error is returned (MPI error class). */
int mpil_attr_delete_all(MPI_Comm comm);
/* Drops @comm's attributes without callbacks (MPI_Finalize's clean-up). */
void mpil_attr_drop(MPI_Comm comm);
void mpil_attr_fini(void);

/* MPI_Finalize: the windows the program did not free (win.c). */
void mpil_win_fini(void);

/* ---- datatypes (datatype.c) --------------------------------------------------- */

/* The basic C type behind a predefined datatype: what reduction kernels
 * switch on. Derived types have MPIL_DT_DERIVED. */
typedef enum mpil_dt_kind {
	MPIL_DT_DERIVED = 0,
	MPIL_DT_CHAR,
	MPIL_DT_SIGNED_CHAR,
	MPIL_DT_UNSIGNED_CHAR,
	MPIL_DT_BYTE,
	MPIL_DT_WCHAR,
	MPIL_DT_SHORT,
	MPIL_DT_UNSIGNED_SHORT,
	MPIL_DT_INT,
	MPIL_DT_UNSIGNED,
	MPIL_DT_LONG,
	MPIL_DT_UNSIGNED_LONG,
	MPIL_DT_LONG_LONG,
	MPIL_DT_UNSIGNED_LONG_LONG,
	MPIL_DT_FLOAT,
	MPIL_DT_DOUBLE,
	MPIL_DT_LONG_DOUBLE,
	MPIL_DT_C_BOOL,
	MPIL_DT_INT8,
	MPIL_DT_INT16,
	MPIL_DT_INT32,
	MPIL_DT_INT64,
	MPIL_DT_UINT8,
	MPIL_DT_UINT16,
	MPIL_DT_UINT32,
	MPIL_DT_UINT64,
	MPIL_DT_AINT,
	MPIL_DT_OFFSET,
	MPIL_DT_COUNT,
	MPIL_DT_C_FLOAT_COMPLEX,
	MPIL_DT_C_DOUBLE_COMPLEX,
	MPIL_DT_C_LONG_DOUBLE_COMPLEX,
	MPIL_DT_CXX_BOOL,
	MPIL_DT_CXX_FLOAT_COMPLEX,
	MPIL_DT_CXX_DOUBLE_COMPLEX,
	MPIL_DT_CXX_LONG_DOUBLE_COMPLEX,
	MPIL_DT_PACKED,
	MPIL_DT_FLOAT_INT,
	MPIL_DT_DOUBLE_INT,
	MPIL_DT_LONG_INT,
	MPIL_DT_2INT,
	MPIL_DT_SHORT_INT,
	MPIL_DT_LONG_DOUBLE_INT,
	MPIL_DT_NKINDS
} mpil_dt_kind_t;

/* The groups of MPI-3.1 §5.9.2 that decide which reduction ops apply. */
enum mpil_dt_group {
	MPIL_DTG_NONE = 0,	  /* no predefined op applies (MPI_CHAR, MPI_PACKED...) */
	MPIL_DTG_INT = 1u << 0,	  /* C integer */
	MPIL_DTG_MULTI = 1u << 1, /* multi-language: MPI_AINT, MPI_OFFSET, MPI_COUNT */
	MPIL_DTG_FLOAT = 1u << 2, /* floating point */
	MPIL_DTG_COMPLEX = 1u << 3,
	MPIL_DTG_LOGICAL = 1u << 4,
	MPIL_DTG_BYTE = 1u << 5,
	MPIL_DTG_PAIR = 1u << 6, /* MPI_MAXLOC / MPI_MINLOC pairs */
};

/* The C layout of the MPI_MAXLOC / MPI_MINLOC pair types. */
typedef struct {
	float v;
	int i;
} mpil_float_int_t;
typedef struct {
	double v;
	int i;
} mpil_double_int_t;
typedef struct {
	long v;
	int i;
} mpil_long_int_t;
typedef struct {
	int v;
	int i;
} mpil_2int_t;
typedef struct {
	short v;
	int i;
} mpil_short_int_t;
typedef struct {
	long double v;
	int i;
} mpil_long_double_int_t;

/* Datatype flags. */
#define MPIL_DTF_PREDEFINED 0x1u
#define MPIL_DTF_COMMITTED  0x2u
/* count elements are the bytes [buf + true_lb, buf + true_lb + count * size):
 * sent and received without packing. */
#define MPIL_DTF_CONTIG 0x4u
/* name was set by MPI_Type_set_name and is owned (malloc'ed) */
#define MPIL_DTF_NAME_OWNED 0x8u

/* One contiguous piece of an element: bytes [disp, disp + len). */
typedef struct mpil_dt_block {
	MPI_Aint disp;
	size_t len;
} mpil_dt_block_t;

struct mpil_datatype {
	uint32_t magic;
	int refcount;
	uint16_t kind;	/* mpil_dt_kind_t */
	uint16_t group; /* enum mpil_dt_group */
	unsigned flags; /* MPIL_DTF_* */
	size_t size;	/* bytes of data in one element */
	MPI_Aint lb, extent;
	MPI_Aint true_lb, true_extent;
	MPI_Count elements; /* basic elements in one element */
	/* Non-contiguous predefined types (the pairs): the typemap of one
	 * element (informative: packing goes through the engine type). */
	int nblocks;
	const mpil_dt_block_t *blocks;
	/* every type's core/dtype_rdma type (an ibx_dt_t) from MPI_Init on: mpil_dt_pack & co. */
	void *engine;
	struct mpil_dt_contents *contents; /* derived: its constructor call (dtype_int.h) */
	const char *name;
	/* The predefined type every basic element of this type is, when there
	 * is exactly one (a predefined type: itself; contiguous(3, MPI_INT):
	 * MPI_INT; a pair type counts as one), else NULL: what a reduction
	 * on a derived type applies its operation to. */
	struct mpil_datatype *basic;
};

static inline bool mpil_dt_valid(MPI_Datatype dt)
{
	return dt && dt->magic == MPIL_MAGIC_DTYPE;
}

static inline bool mpil_dt_contig(MPI_Datatype dt)
{
	return dt->flags & MPIL_DTF_CONTIG;
}

/* The one place that moves typed data, for every datatype (predefined,
 * pair or derived; contiguous ones are a memcpy):
 * Packs @count elements at @buf into @out (count * dt->size bytes). */
void mpil_dt_pack(MPI_Datatype dt, const void *buf, int count, void *out);
/* Unpacks the first @nbytes packed bytes of @in into elements at @buf. */
void mpil_dt_unpack(MPI_Datatype dt, const void *in, size_t nbytes, void *buf);
/* Basic elements in the first @nbytes packed bytes; -1 if @nbytes ends
 * inside a basic element. */
MPI_Count mpil_dt_elements(MPI_Datatype dt, MPI_Count nbytes);

/* Engine types of the predefined datatypes (MPI_Init), and the end of
 * every datatype (MPI_Finalize). */
int mpil_dt_init(void);
void mpil_dt_fini(void);
/* The derived types still alive (dtype_create.c), from mpil_dt_fini. */
void mpil_dt_derived_fini(void);

/* A pending operation keeps a derived datatype alive past MPI_Type_free. */
static inline void mpil_dt_retain(MPI_Datatype dt)
{
	if (!(dt->flags & MPIL_DTF_PREDEFINED))
		dt->refcount++;
}
void mpil_dt_release(MPI_Datatype dt);

static inline int mpil_check_dtype(MPI_Comm comm, MPI_Datatype dt, const char *fname)
{
	if (ibx_unlikely(!dt))
		return mpil_err(comm, MPI_ERR_TYPE, fname, "datatype is MPI_DATATYPE_NULL");
	if (ibx_unlikely(dt->magic != MPIL_MAGIC_DTYPE))
		return mpil_err(comm, MPI_ERR_TYPE, fname, "invalid datatype handle %p",
				(void *)dt);
	if (ibx_unlikely(!(dt->flags & MPIL_DTF_COMMITTED)))
		return mpil_err(comm, MPI_ERR_TYPE, fname, "datatype %s is not committed",
				dt->name ? dt->name : "(unnamed)");
	return MPI_SUCCESS;
}

/* A live datatype handle, committed or not (queries and constructors). */
static inline int mpil_check_dtype_handle(MPI_Comm comm, MPI_Datatype dt, const char *fname)
{
	if (ibx_unlikely(!dt))
		return mpil_err(comm, MPI_ERR_TYPE, fname, "datatype is MPI_DATATYPE_NULL");
	if (ibx_unlikely(dt->magic != MPIL_MAGIC_DTYPE))
		return mpil_err(
		    comm, MPI_ERR_TYPE, fname, "invalid datatype handle %p%s", (void *)dt,
		    dt->magic == MPIL_MAGIC_DEAD || dt->magic == MPIL_MAGIC_ZOMBIE ? " (freed)"
										   : "");
	return MPI_SUCCESS;
}

static inline int mpil_check_count(MPI_Comm comm, int count, const char *fname)
{
	if (ibx_likely(count >= 0))
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_COUNT, fname, "negative count %d", count);
}

/* A buffer of @count elements of @dt (already checked) must be addressable:
 * NULL is only fine when nothing is transferred, or as MPI_BOTTOM with a
 * derived type (absolute addresses from MPI_Get_address). */
static inline int mpil_check_buf(MPI_Comm comm, const void *buf, int count, MPI_Datatype dt,
				 const char *fname)
{
	if (ibx_likely(buf != NULL && buf != MPI_IN_PLACE) || count == 0 || dt->size == 0 ||
	    (buf == NULL && !(dt->flags & MPIL_DTF_PREDEFINED)))
		return MPI_SUCCESS;
	return mpil_err(comm, MPI_ERR_BUFFER, fname, "%s buffer with count %d",
			buf ? "MPI_IN_PLACE as" : "NULL", count);
}

/* ---- reduction operations (op.c) ---------------------------------------------- */
enum mpil_op_id {
	MPIL_OP_MAX,
	MPIL_OP_MIN,
	MPIL_OP_SUM,
	MPIL_OP_PROD,
	MPIL_OP_LAND,
	MPIL_OP_BAND,
	MPIL_OP_LOR,
	MPIL_OP_BOR,
	MPIL_OP_LXOR,
	MPIL_OP_BXOR,
	MPIL_OP_MAXLOC,
	MPIL_OP_MINLOC,
	MPIL_OP_REPLACE,
	MPIL_OP_NO_OP,
	MPIL_OP_USER
};

/* inout[i] = in[i] op inout[i] for n basic elements of kind @kind. */
typedef void mpil_op_kernel_t(const void *in, void *inout, size_t n, mpil_dt_kind_t kind);

struct mpil_op {
	uint32_t magic;
	int refcount;
	int id;		 /* enum mpil_op_id */
	unsigned groups; /* datatype groups a predefined op accepts */
	bool commutative;
	bool predefined;
	bool coll_ok;		    /* usable in collectives (not REPLACE/NO_OP) */
	mpil_op_kernel_t *kernel;   /* predefined ops */
	MPI_User_function *user_fn; /* MPI_Op_create (later) */
	const char *name;
};

/* MPI_SUCCESS if @op may reduce @dt in a collective, else reports
 * MPI_ERR_OP on @comm. */
int mpil_check_op(MPI_Comm comm, MPI_Op op, MPI_Datatype dt, const char *fname);
/* inout = in op inout, elementwise over @count elements of @dt (in the
 * user layout: extent apart). */
void mpil_op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt);

/* ---- requests (request.c) ------------------------------------------------------- */
enum mpil_req_kind {
	MPIL_REQ_SEND,
	MPIL_REQ_RECV,
	MPIL_REQ_DONE, /* complete at start (MPI_PROC_NULL, Bsend); status preset */
	MPIL_REQ_NBC,  /* a nonblocking collective (nbc_int.h); its error in preset */
	MPIL_REQ_PAIR, /* MPI_Isendrecv(_replace): completes with its parts (p2p_isendrecv.c) */
	MPIL_REQ_GREQ, /* generalized: the program completes it (greq.c) */
};
#define MPIL_REQF_FREED 0x1u /* MPI_Request_free'd while active */
#define MPIL_REQF_HOLDS 0x2u /* holds references on comm (and dtype, if set) */

typedef struct mpil_request {
	uint32_t magic;	   /* first, as in every handle's object */
	ibx_request_t ibx; /* engine request: stays in place until complete */
	uint8_t kind;	   /* enum mpil_req_kind */
	uint8_t flags;	   /* MPIL_REQF_* */
	MPI_Comm comm;
	/* receive into a non-contiguous type: unpack tmpbuf into ubuf. (A
	 * derived dtype must be retained while the request holds it: the
	 * user may MPI_Type_free it before the receive completes; see
	 * mpil_req_hold.) */
	void *ubuf;
	MPI_Datatype dtype;
	void *tmpbuf;		      /* packed bytes (malloc'ed), or NULL */
	MPI_Status preset;	      /* MPIL_REQ_DONE: the status to report */
	struct mpil_request *next;    /* free list / zombie list */
	struct mpil_persist *persist; /* MPI_*_init'ed (p2p_int.h), else NULL */
	/* MPIL_REQ_PAIR: its receive and send (NULL: MPI_PROC_NULL), and how
	 * many of them (plus one while starting) are not complete */
	struct mpil_request *parts[2];
	unsigned pending;
	struct mpil_greq *greq; /* MPIL_REQ_GREQ: its callbacks (greq.c) */
} mpil_request_t;

/* NULL when out of memory. Only the common fields are reset (magic, flags,
 * tmpbuf, ubuf, dtype, next, persist, the engine request's completed flag
 * and callback): each kind sets the fields of its own, the parts and the
 * generalized request's callbacks included. */
mpil_request_t *mpil_req_alloc(void);
/* Drops what the request holds (tmpbuf; with MPIL_REQF_HOLDS its comm and
 * dtype references) and returns it to the pool. */
void mpil_req_release(mpil_request_t *req);

/* Sets req->comm and req->dtype (@dt may be NULL) and takes a reference on
 * each until mpil_req_release: the user may free both while it is active. */
static inline void mpil_req_hold(mpil_request_t *req, MPI_Comm comm, MPI_Datatype dt)
{
	req->comm = comm;
	req->dtype = dt;
	mpil_comm_retain(comm);
	if (dt)
		mpil_dt_retain(dt);
	req->flags |= MPIL_REQF_HOLDS;
}
/* Frees the pool (MPI_Finalize). */
void mpil_req_pool_fini(void);

static inline bool mpil_req_valid(MPI_Request req)
{
	return req && req->magic == MPIL_MAGIC_REQ;
}

static inline bool mpil_req_done(const mpil_request_t *req)
{
	return req->kind == MPIL_REQ_DONE || req->ibx.completed;
}

/* Fills @status (may be MPI_STATUS_IGNORE) for a completed request, unpacks
 * a non-contiguous receive, and returns the request's MPI error class
 * (MPI_SUCCESS, MPI_ERR_TRUNCATE...). Does not release it. */
int mpil_req_finish(mpil_request_t *req, MPI_Status *status);

/* Finishes a completed request, releases it and sets *handle to
 * MPI_REQUEST_NULL; an error goes to the request's communicator handler.
 * Like every single-completion call, it leaves status->MPI_ERROR alone
 * (MPI-3.1 §3.2.5: only MPI_ERR_IN_STATUS calls set it). */
int mpil_req_complete(MPI_Request *handle, MPI_Status *status, const char *fname);
/* Raises the error @err (from mpil_req_finish) of a completed engine
 * request on @comm, saying which peer and why. */
int mpil_err_req(MPI_Comm comm, bool send, const ibx_request_t *x, int err, const char *fname);
/* Raises an engine failure to start a send to / receive from rank @peer
 * of @comm (MPI_ANY_SOURCE allowed). */
int mpil_err_ibx(MPI_Comm comm, const char *fname, ibx_status_t st, bool send, int peer);

/* ---- status ---------------------------------------------------------------------- */
static inline void mpil_status_set(MPI_Status *st, int source, int tag, MPI_Count bytes)
{
	if (st != MPI_STATUS_IGNORE) {
		st->MPI_SOURCE = source;
		st->MPI_TAG = tag;
		st->mpil_cancelled = 0;
		st->mpil_count = bytes;
	}
}

/* The "empty" status of MPI-3.1 §3.7.3 (null or inactive requests). */
static inline void mpil_status_empty(MPI_Status *st)
{
	if (st != MPI_STATUS_IGNORE) {
		mpil_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
		st->MPI_ERROR = MPI_SUCCESS;
	}
}

/* A receive from MPI_PROC_NULL (MPI-3.1 §3.11). */
static inline void mpil_status_proc_null(MPI_Status *st)
{
	mpil_status_set(st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
}

/* Fills @st from a completed engine receive on @comm. */
static inline void mpil_status_from_ibx(MPI_Status *st, MPI_Comm comm, const ibx_request_t *r)
{
	size_t got = r->length < r->buflen ? r->length : r->buflen;

	mpil_status_set(st, mpil_comm_from_world(comm, r->source), (int)(uint32_t)r->tag,
			(MPI_Count)got);
}

/* ---- point-to-point (p2p.c) ------------------------------------------------------ */
/* Starts a nonblocking send or receive after the arguments were checked
 * (@flags: IBX_SEND_SYNC). *req_p is a new request; errors go through the
 * communicator's handler. */
int mpil_isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
	       unsigned flags, const char *fname, MPI_Request *req_p);
int mpil_irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
	       const char *fname, MPI_Request *req_p);

/* Waits for an engine request: spins, then yields the CPU (ranks may
 * outnumber cores). */
static inline ibx_status_t mpil_ibx_wait(ibx_request_t *r)
{
	if (!__atomic_load_n(&r->completed, __ATOMIC_ACQUIRE))
		return ibx_wait(mpil_g.ctx, r);
	return r->status;
}

/* A blocking engine send to world rank @dest, request on the stack:
 * returns IBX_OK or why it failed. */
static inline ibx_status_t mpil_ibx_send(int dest, const void *buf, size_t len, ibx_tag_t tag,
					 unsigned flags)
{
	ibx_request_t rq;
	ibx_status_t st;

	rq.cb = NULL; /* the engine calls it on completion */
	st = ibx_tag_send(mpil_g.ctx, dest, buf, len, tag, flags, &rq);
	if (st == IBX_INPROGRESS)
		st = ibx_wait(mpil_g.ctx, &rq);
	return st;
}

/* ---- collectives (coll*.c) ----------------------------------------------------------- */

/* Blocking byte transfers on @comm's collective context (ranks of @comm;
 * @tag distinguishes the steps of one algorithm). Used by the collective
 * algorithms; return an MPI error class without invoking a handler. */
int mpil_coll_send(MPI_Comm comm, const void *buf, size_t len, int dest, int tag);
int mpil_coll_recv(MPI_Comm comm, void *buf, size_t len, int src, int tag);
int mpil_coll_sendrecv(MPI_Comm comm, const void *sbuf, size_t slen, int dest, void *rbuf,
		       size_t rlen, int src, int tag);

/* The algorithms behind MPI_Barrier / MPI_Bcast / MPI_Allreduce, without
 * argument checks or handlers (also used by MPI_Finalize and, later, by
 * communicator creation). */
int mpil_barrier(MPI_Comm comm);
int mpil_bcast_bytes(void *buf, size_t len, int root, MPI_Comm comm);
/* @dt predefined (the buffers are in its layout); sendbuf may be MPI_IN_PLACE. */
int mpil_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
		   MPI_Comm comm);

/* The node map of the node-aware collectives (coll_node.c), built in MPI_Init
 * once MPI_COMM_WORLD exists (collective over it when the job spans
 * several nodes) and dropped in MPI_Finalize. */
int mpil_coll_init(void);
void mpil_coll_fini(void);
/* Error classes and codes added by the program (errcode.c): the highest
 * number in use (MPI_LASTUSEDCODE); the class of @code (false: no such
 * code); the string of an added @code ("" if none was set; NULL: @code
 * was not added); the table dropped (finalize). */
int mpil_errcode_last(void);
bool mpil_errcode_class(int code, int *errclass);
const char *mpil_errcode_string(int code);
void mpil_errcode_fini(void);

/* Drops @c's cached split by nodes (with the communicator). */
void mpil_coll_split_free(MPI_Comm c);

#endif /* MPIL_INT_H */
