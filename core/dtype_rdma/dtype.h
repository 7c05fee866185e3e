/*
 * dtype.h — the datatype engine's representation layer (engine-internal;
 * mpi-lite includes it as "dtype_rdma/dtype.h" and maps MPI_Type_* onto it).
 *
 * A type is built by constructors (basic, contiguous, vector, indexed,
 * struct, resized, subarray, ...) into a reference-counted tree of handles,
 * then committed into a compact *loop program* (see commit.c for the
 * picture). Everything that moves data works on the byte stream that
 * (type, count) packs into: a cursor seeks to any packed offset in time
 * proportional to the nesting depth (log of the block count for indexed
 * levels) and then packs, unpacks, or lists the contiguous blocks of the
 * next bytes — the three operations the RDMA schemes of
 * [Wu03] need (BC-SPUP segment pack/unpack, RWG-UP gather
 * lists, Multi-W block pairs).
 *
 * Conventions: counts, block lengths, displacements and byte sizes are
 * int64_t; displacements of the h* constructors and of struct are bytes,
 * the others are in multiples of the old type's extent (MPI rules).
 * Every call returns ibx_status_t; out-parameters (last, `_p`) are written
 * only on success. Negative counts/lengths and NULL handles give
 * IBX_ERR_INVALID_PARAM, arithmetic that leaves int64 gives IBX_ERR_OVERFLOW.
 * A handle may be freed while types built from it are alive: a derived type
 * holds a reference on each of its children. Handles may be shared between
 * threads once committed; constructing from, committing and freeing one
 * handle must not race with each other (MPI's rules for MPI_Datatype).
 */
#ifndef IBX_DTYPE_H
#define IBX_DTYPE_H

#include "ibx.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

typedef struct ibx_dt ibx_dt_t;

/* Loops a committed program may nest (a cursor keeps one frame per loop). */
#define IBX_DT_MAX_DEPTH 24
/* Constructor nesting accepted (bounds recursion in commit/signatures). */
#define IBX_DT_MAX_TREE_DEPTH 256

/* ---- constructors -------------------------------------------------------- */

/* A predefined type: @code names it for signatures (two basic types match
 * iff code and size are equal), @size bytes, @align a power of two that
 * divides @size (the alignment used for the struct/extent padding rule). */
ibx_status_t ibx_dt_basic(uint32_t code, int64_t size, int64_t align, ibx_dt_t **dt_p);
ibx_status_t ibx_dt_contiguous(int64_t count, ibx_dt_t *old, ibx_dt_t **dt_p);
/* @stride in elements of @old (extents). */
ibx_status_t ibx_dt_vector(int64_t count, int64_t blocklen, int64_t stride, ibx_dt_t *old,
			   ibx_dt_t **dt_p);
/* @stride in bytes. */
ibx_status_t ibx_dt_hvector(int64_t count, int64_t blocklen, int64_t stride, ibx_dt_t *old,
			    ibx_dt_t **dt_p);
ibx_status_t ibx_dt_indexed(int64_t count, const int64_t *blocklens, const int64_t *displs,
			    ibx_dt_t *old, ibx_dt_t **dt_p);
ibx_status_t ibx_dt_hindexed(int64_t count, const int64_t *blocklens, const int64_t *displs,
			     ibx_dt_t *old, ibx_dt_t **dt_p);
ibx_status_t ibx_dt_indexed_block(int64_t count, int64_t blocklen, const int64_t *displs,
				  ibx_dt_t *old, ibx_dt_t **dt_p);
ibx_status_t ibx_dt_hindexed_block(int64_t count, int64_t blocklen, const int64_t *displs,
				   ibx_dt_t *old, ibx_dt_t **dt_p);
/* Byte displacements; one type per block. */
ibx_status_t ibx_dt_struct(int64_t count, const int64_t *blocklens, const int64_t *displs,
			   ibx_dt_t *const *types, ibx_dt_t **dt_p);
/* Same data; lower bound @lb and extent @extent (MPI: erases older bound
 * markers and sets new ones, which stick in types built from it). */
ibx_status_t ibx_dt_resized(ibx_dt_t *old, int64_t lb, int64_t extent, ibx_dt_t **dt_p);
/* A new handle to the same type (committed if @old is). */
ibx_status_t ibx_dt_dup(ibx_dt_t *old, ibx_dt_t **dt_p);

enum { IBX_DT_ORDER_C = 0, IBX_DT_ORDER_FORTRAN = 1 };
/* An @ndims-dimensional block of an array of @old: lb 0, extent the whole
 * array, data at @starts (built from contiguous/hvector/hindexed/resized). */
ibx_status_t ibx_dt_subarray(int ndims, const int64_t *sizes, const int64_t *subsizes,
			     const int64_t *starts, int order, ibx_dt_t *old, ibx_dt_t **dt_p);

/* How a dimension of a distributed array is divided over its processes,
 * and the block size that means "the default" (darray.c). */
enum { IBX_DT_DIST_BLOCK = 0, IBX_DT_DIST_CYCLIC = 1, IBX_DT_DIST_NONE = 2 };
#define IBX_DT_DARG_DEFAULT (-1)
/* Process @rank's part of an array of @old distributed over a row-major
 * grid of @size = prod(psizes) processes (MPI_Type_create_darray): lb 0,
 * extent the whole array. IBX_ERR_INVALID_PARAM for arguments MPI calls
 * erroneous (a block too small for its dimension, NONE over several
 * processes, a grid of another size). */
ibx_status_t ibx_dt_darray(int size, int rank, int ndims, const int64_t *gsizes,
			   const int *distribs, const int64_t *dargs, const int64_t *psizes,
			   int order, ibx_dt_t *old, ibx_dt_t **dt_p);

/* Compiles the loop program (idempotent). Needed before any data movement,
 * stats or serialisation; constructors accept uncommitted types. */
ibx_status_t ibx_dt_commit(ibx_dt_t *dt);
/* Drops the handle's reference and sets *dt_p to NULL. */
ibx_status_t ibx_dt_free(ibx_dt_t **dt_p);
/* Takes one more reference (a pending operation keeping its type alive);
 * balanced by ibx_dt_free(). */
ibx_status_t ibx_dt_retain(ibx_dt_t *dt);

/* ---- queries ------------------------------------------------------------- */
typedef struct ibx_dt_info {
	int64_t size; /* packed bytes of one element */
	int64_t lb, ub, extent;
	int64_t true_lb, true_extent; /* data only, bound markers ignored */
	int64_t align;		      /* largest alignment of a basic type inside */
	int64_t nelem;		      /* basic elements in one element */
	int depth;		      /* constructor nesting */
	bool committed;
	bool remote; /* from ibx_dt_deserialize: layout only, no tree */
	/* Only if committed: */
	bool contig; /* one element is one contiguous run at true_lb */
	bool dense;  /* contig and extent == size: any count is contiguous */
} ibx_dt_info_t;

ibx_status_t ibx_dt_query(const ibx_dt_t *dt, ibx_dt_info_t *info_p);
/* Shortcuts for hot paths; @dt must be a valid handle. */
int64_t ibx_dt_size(const ibx_dt_t *dt);
int64_t ibx_dt_extent(const ibx_dt_t *dt);

/* Block statistics of a committed type, for the scheme selector: the runs
 * of one element as the loop program emits them (runs that touch across
 * loop levels are counted separately, so `blocks` is an upper bound of what
 * a block listing yields after merging). */
typedef struct ibx_dt_stats {
	int64_t blocks;	      /* contiguous runs per element */
	double avg_block;     /* size / blocks */
	int64_t median_block; /* lower median of the run lengths */
	int64_t min_block, max_block;
	int64_t program_bytes; /* memory of the committed loop program */
	int loops;	       /* loops in the program */
	int depth;	       /* deepest loop nesting */
} ibx_dt_stats_t;

ibx_status_t ibx_dt_stats(const ibx_dt_t *dt, ibx_dt_stats_t *stats_p);

/* All blocks of (dt, count) as offsets from the buffer origin, in packed
 * order, adjacent ones merged; *blocks_p is malloc'ed (free()). */
typedef struct ibx_dt_block {
	int64_t off;
	int64_t len;
} ibx_dt_block_t;
ibx_status_t ibx_dt_flatten(const ibx_dt_t *dt, int64_t count, ibx_dt_block_t **blocks_p,
			    int64_t *nblocks_p);

/* True when two bytes of (dt, count) are the same memory: such a type may
 * not be received into (the result would depend on the unpack order). The
 * first ask sorts one element's blocks (O(b log b)); the answer is kept. */
bool ibx_dt_overlaps(const ibx_dt_t *dt, int64_t count);

/* ---- partial processing -------------------------------------------------- */

/* One loop of a committed program (exposed only so that a cursor can live
 * on the caller's stack; see commit.c). */
typedef struct ibx_dt_loop {
	uint8_t kind; /* IBX_DT_LOOP_* */
	uint8_t leaf; /* iteration body: blen bytes (1) or child copies (0) */
	uint16_t pad;
	uint32_t child;	   /* non-leaf VEC/BLKIDX/IDX: index of the child loop */
	int64_t count;	   /* iterations */
	int64_t blen;	   /* VEC/BLKIDX: bytes (leaf) or child copies per iteration */
	int64_t stride;	   /* VEC: bytes between iterations */
	int64_t off;	   /* added to every iteration's displacement */
	int64_t el_extent; /* non-leaf: bytes between the copies of one iteration */
	int64_t size;	   /* packed bytes of one instance */
	uint64_t aux;	   /* first word of the loop's arrays in the aux pool */
} ibx_dt_loop_t;

enum { IBX_DT_LOOP_VEC = 1, IBX_DT_LOOP_BLKIDX = 2, IBX_DT_LOOP_IDX = 3, IBX_DT_LOOP_STRUCT = 4 };

typedef struct ibx_dt_frame {
	const ibx_dt_loop_t *n;
	int64_t i;     /* iteration */
	int64_t j;     /* copy inside the iteration (non-leaf) */
	uint64_t base; /* address of this loop instance's origin */
} ibx_dt_frame_t;

/* Position in the packed stream of (type, count) over a user buffer. Lives
 * where the caller puts it (it points into itself: do not copy it; init a
 * new one instead). */
typedef struct ibx_dt_cursor {
	const ibx_dt_t *dt;
	const ibx_dt_loop_t *loops;
	const int64_t *aux;
	uint64_t buf;
	int64_t count;
	int64_t total;	   /* count * size */
	int64_t pos;	   /* packed offset */
	int64_t lpos;	   /* bytes done inside the current run */
	int depth;	   /* active frames; 0 at the end of the stream */
	ibx_dt_loop_t top; /* the count loop around the program's root */
	ibx_dt_frame_t f[IBX_DT_MAX_DEPTH + 1];
} ibx_dt_cursor_t;

/* A cursor over @count elements of committed @dt at @buf, placed at packed
 * offset @offset (0 <= offset <= count * size). */
ibx_status_t ibx_dt_cursor_init(ibx_dt_cursor_t *cur, const ibx_dt_t *dt, int64_t count,
				const void *buf, int64_t offset);
ibx_status_t ibx_dt_cursor_seek(ibx_dt_cursor_t *cur, int64_t offset);
static inline int64_t ibx_dt_cursor_pos(const ibx_dt_cursor_t *cur)
{
	return cur->pos;
}
static inline int64_t ibx_dt_cursor_left(const ibx_dt_cursor_t *cur)
{
	return cur->total - cur->pos;
}
/* Each moves up to @len bytes (fewer only at the end of the stream) and
 * returns the number in *done_p. */
ibx_status_t ibx_dt_cursor_pack(ibx_dt_cursor_t *cur, void *out, int64_t len, int64_t *done_p);
ibx_status_t ibx_dt_cursor_unpack(ibx_dt_cursor_t *cur, const void *in, int64_t len,
				  int64_t *done_p);

/* Called per block, in packed order, blocks adjacent in memory merged:
 * @packed_off is where the block's bytes sit in the packed stream. A status
 * other than IBX_OK stops the walk before that block and is returned. */
typedef ibx_status_t (*ibx_dt_block_cb_t)(void *arg, int64_t packed_off, void *addr, size_t len);
ibx_status_t ibx_dt_cursor_blocks(ibx_dt_cursor_t *cur, int64_t len, ibx_dt_block_cb_t cb,
				  void *arg, int64_t *done_p);
/* Fills up to @max_iov entries with the next blocks (at most @max_bytes
 * bytes; adjacent blocks merged) and advances: call again to resume. */
ibx_status_t ibx_dt_cursor_iov(ibx_dt_cursor_t *cur, int64_t max_bytes, struct iovec *iov,
			       int max_iov, int *niov_p, int64_t *bytes_p);

/* One-shot forms over the packed byte range [a, b). */
ibx_status_t ibx_dt_pack(const ibx_dt_t *dt, int64_t count, const void *buf, int64_t a, int64_t b,
			 void *out);
ibx_status_t ibx_dt_unpack(const ibx_dt_t *dt, int64_t count, void *buf, int64_t a, int64_t b,
			   const void *in);
ibx_status_t ibx_dt_blocks(const ibx_dt_t *dt, int64_t count, const void *buf, int64_t a, int64_t b,
			   ibx_dt_block_cb_t cb, void *arg);

/* ---- signatures ----------------------------------------------------------
 * The sequence of basic types of (type, count), hashed so that it composes
 * (concatenation and repetition cost O(log n), not O(n)): a polynomial
 * hash modulo 2^61-1 of the basic type codes, plus the element count. A
 * sender ships its 16-byte signature; the receiver checks it against its
 * own (type, count) with ibx_dt_sig_match(): MPI allows a message shorter
 * than the receive, so the sent sequence must be a prefix of the received.
 * Mismatch reporting: IBX_ERR_TRUNCATED when the sender has more basic
 * elements than the receive can take (MPI_ERR_TRUNCATE), IBX_ERR_INVALID_PARAM
 * when the sequences differ (MPI_ERR_TYPE); both are logged at debug level
 * with the two hashes and counts. */
typedef struct ibx_dt_sig {
	uint64_t hash;
	int64_t nelem;
} ibx_dt_sig_t;

ibx_status_t ibx_dt_signature(const ibx_dt_t *dt, int64_t count, ibx_dt_sig_t *sig_p);
/* On a layout-only (deserialised) type only whole elements can be matched:
 * a prefix that ends inside an element gives IBX_ERR_UNSUPPORTED. */
ibx_status_t ibx_dt_sig_match(const ibx_dt_sig_t *sent, const ibx_dt_t *dt, int64_t count);

/* Basic elements wholly inside the first @bytes packed bytes of any number
 * of @dt (what MPI_Get_elements reports for a message of @bytes bytes).
 * IBX_ERR_TRUNCATED when @bytes ends inside a basic element (*nelem_p is
 * then left alone); IBX_ERR_UNSUPPORTED on a layout-only type. */
ibx_status_t ibx_dt_elements(const ibx_dt_t *dt, int64_t bytes, int64_t *nelem_p);

/* ---- serialised layout (wire.c) ------------------------------------------
 * A committed type's loop program with its type id and version (assigned at
 * commit; an id is reused only after its type is freed, with the version
 * increased — the datatype cache rule of [Wu03] §5.4.2).
 * The deserialiser validates everything and returns IBX_ERR_CORRUPT for any
 * malformed blob; the result is a layout-only type for cursors and queries. */
ibx_status_t ibx_dt_wire_id(const ibx_dt_t *dt, uint64_t *id_p, uint32_t *version_p);
ibx_status_t ibx_dt_wire_size(const ibx_dt_t *dt, size_t *len_p);
/* IBX_ERR_TRUNCATED if @len is smaller than ibx_dt_wire_size(). */
ibx_status_t ibx_dt_serialize(const ibx_dt_t *dt, void *buf, size_t len, size_t *used_p);
ibx_status_t ibx_dt_deserialize(const void *buf, size_t len, ibx_dt_t **dt_p);
/* Recomputes the blob's checksum (for tests and tools that build blobs). */
ibx_status_t ibx_dt_wire_seal(void *buf, size_t len);

#endif /* IBX_DTYPE_H */
