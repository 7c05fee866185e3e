/*
 * rma_common.h — what the one-sided ibtest commands share (rma_lat.c,
 * rma_bw.c, exchange.c; implemented in rma_common.c): the operation, window
 * flavour and synchronisation names of their options, the option parser,
 * window creation per flavour, the operation issue of one slot, the
 * passive-target synchronisation per mode, and the data checks that follow
 * every timed run.
 *
 * These commands are MPI programs (mpi-lite): run them under a launcher,
 * `mpilite-run -n 2 ibtest rma_lat ...`.
 */
#ifndef IBTEST_RMA_COMMON_H
#define IBTEST_RMA_COMMON_H

#include "ibtest.h"

#include <mpi.h>

/* exit statuses besides 0: a failed MPI call aborts the job (the default
 * error handler) */
#define RMA_EXIT_USAGE 2
#define RMA_EXIT_CHECK 3 /* the data a benchmark moved arrived wrong */

#define RMA_ALL_MAX    (4u << 20) /* -a sweeps up to 4 MiB */
#define RMA_SIZE_LIMIT (1u << 30) /* -s accepts up to 1 GiB */
#define RMA_ATOMIC_SZ  8	  /* fop and cas move one uint64_t */
#define RMA_LARGE      8192	  /* above this, fewer default iterations (as osu) */

typedef enum {
	RMA_OP_PUT,
	RMA_OP_GET,
	RMA_OP_ACC,
	RMA_OP_FOP,
	RMA_OP_CAS,
	RMA_OP_SENDRECV, /* exchange only: the two-sided reference */
	RMA_OP_N
} rma_op_t;

typedef enum {
	RMA_WIN_ALLOCATE,
	RMA_WIN_CREATE,
	RMA_WIN_DYNAMIC,
	RMA_WIN_SHARED,
	RMA_WIN_N
} rma_flavor_t;

typedef enum {
	RMA_SYNC_FLUSH,	   /* one lock for the run, MPI_Win_flush per epoch */
	RMA_SYNC_LOCK,	   /* MPI_Win_lock / unlock per epoch */
	RMA_SYNC_FENCE,	   /* MPI_Win_fence */
	RMA_SYNC_PSCW,	   /* post / start / complete / wait */
	RMA_SYNC_LOCK_ALL, /* MPI_Win_lock_all / unlock_all per epoch */
	RMA_SYNC_N
} rma_sync_t;

extern const char *const rma_op_names[RMA_OP_N];      /* "put" ... (option values) */
extern const char *const rma_op_mpi[RMA_OP_N];	      /* "MPI_Put" ... */
extern const char *const rma_flavor_names[RMA_WIN_N]; /* "allocate" ... */
extern const char *const rma_flavor_mpi[RMA_WIN_N];   /* "MPI_Win_allocate" ... */
extern const char *const rma_sync_names[RMA_SYNC_N];  /* "flush" ... */
extern const char *const rma_sync_mpi[RMA_SYNC_N];    /* "MPI_Win_flush" ... */

#define RMA_BIT(x) (1u << (x))

/* fop and cas: one uint64_t per operation */
bool rma_op_is_atomic(rma_op_t op);

/* What a command accepts and defaults to; the parser and usage text follow it. */
typedef struct rma_spec {
	const char *name, *summary;
	unsigned ops, syncs, flavors;			  /* accepted values (bit masks) */
	unsigned def_ops, def_syncs;			  /* defaults */
	unsigned def_flavors;				  /* exchange: one flavour at a time */
	bool flavor_all;				  /* -w all allowed */
	bool window_opt, bidir_opt, nbr_opt, typical_opt; /* -t, --bidir, -k, --typical */
	size_t def_size;
	const char *iters_help; /* -n's text */
	size_t min_all;		/* -a starts here */
} rma_spec_t;

typedef struct rma_opts {
	const rma_spec_t *spec;
	unsigned ops, syncs, flavors; /* bit masks */
	bool all, json, bidir;
	bool typical;	    /* rma_lat: the median iteration instead of the mean */
	bool target_sleeps; /* rma_lat: the passive target sleeps instead of MPI_Barrier */
	size_t size;
	unsigned iters;	     /* 0: default per size */
	unsigned window;     /* rma_bw: operations per epoch */
	unsigned neighbours; /* exchange */
} rma_opts_t;

/* Returns 0 to run, 1 after --help, RMA_EXIT_USAGE on a usage error (said on
 * stderr). */
int rma_parse_opts(rma_opts_t *o, const rma_spec_t *spec, int argc, char **argv);

/* Sizes of a run: the sweep of -a or the one size of -s; fop and cas only
 * ever move 8 bytes. */
size_t rma_first_size(const rma_opts_t *o, rma_op_t op);
bool rma_next_size(const rma_opts_t *o, rma_op_t op, size_t *size_p); /* false after the last */
size_t rma_max_size(const rma_opts_t *o, rma_op_t op);

/* Calls @fn for every (operation, flavour, synchronisation) the options
 * chose, in that order, until one returns non-zero (returned). */
int rma_for_each_case(const rma_opts_t *o,
		      int (*fn)(void *arg, rma_op_t op, rma_flavor_t flavor, rma_sync_t sync),
		      void *arg);

/* MPI_Init, and the check that the job has @need ranks (0: any); returns
 * 0, or RMA_EXIT_USAGE after MPI_Finalize with a message from rank 0. */
int rma_init(const char *name, int need, int *argc_p, char ***argv_p, int *rank_p, int *size_p);

/* ---- windows --------------------------------------------------------------- */

typedef struct rma_win {
	MPI_Win win;
	rma_flavor_t flavor;
	unsigned char *base; /* this rank's window memory, bytes long */
	size_t bytes;
	MPI_Aint *disp0; /* per rank: the target displacement of its byte 0
			  * (dynamic: the attached block's address) */
} rma_win_t;

#define RMA_WIN_SKIP 1 /* rma_win_open: this flavour cannot be made here */

/* Collective over MPI_COMM_WORLD: a window of @bytes (at least a page) per
 * rank, disp_unit 1. Returns 0, or RMA_WIN_SKIP (every rank agrees) when
 * MPI_Win_allocate_shared fails (ranks on different nodes). */
int rma_win_open(rma_win_t *w, rma_flavor_t flavor, size_t bytes);
void rma_win_close(rma_win_t *w);

/* A group of the given MPI_COMM_WORLD ranks (PSCW). */
MPI_Group rma_group(const int *ranks, int n);

/* ---- one transfer ----------------------------------------------------------- */

/* Slot j of an epoch: origin bytes obuf + j*size, target displacement
 * j*size (8 for fop / cas); results[j] takes what fop / cas fetch. */
typedef struct rma_xfer {
	const rma_win_t *w;
	rma_op_t op;
	int target;
	size_t size;
	unsigned char *obuf;
	uint64_t *results;
	uint64_t cas_compare; /* cas: the value the target holds before this epoch */
	uint64_t cas_swap;    /* cas: cas_compare + 1 (lives until the epoch ends) */
} rma_xfer_t;

void rma_xfer_issue(const rma_xfer_t *x, unsigned slot);

/* Passive-target synchronisation around the epochs of a run towards
 * @target: run_begin / run_end once (flush: the lock), epoch_begin /
 * epoch_end around each epoch (lock, lock_all; flush: the flush). */
void rma_run_begin(const rma_win_t *w, rma_sync_t s, int target);
void rma_run_end(const rma_win_t *w, rma_sync_t s, int target);
void rma_epoch_begin(const rma_win_t *w, rma_sync_t s, int target);
void rma_epoch_end(const rma_win_t *w, rma_sync_t s, int target);

/* ---- data checks -------------------------------------------------------------- */

/* The bytes rank @rank supplies in a run of size @size: a pseudo-random
 * stream, any part of which can be made alone; fill writes its bytes
 * [off, off + len) to @p. */
void rma_pattern_fill(unsigned char *p, size_t off, size_t len, size_t size, int rank);
/* 0 if @p holds those bytes, else the index of the first differing byte + 1. */
size_t rma_pattern_check(const unsigned char *p, size_t off, size_t len, size_t size, int rank);

/* What one run leaves: @slots slots of @size bytes, used round-robin by
 * @per_epoch operations in each of @epochs epochs, all from @origin. */
typedef struct rma_outcome {
	rma_op_t op;
	size_t size;
	unsigned slots, per_epoch;
	unsigned long epochs;
	int origin;
} rma_outcome_t;

/* Before a run: this rank as the target of @c (window slots zeroed, or the
 * pattern for get) and as its origin (obuf with the pattern, or zeroed for
 * get; results zeroed). */
void rma_prepare_target(const rma_outcome_t *c, int me, unsigned char *win_mem);
void rma_prepare_origin(const rma_outcome_t *c, int me, unsigned char *obuf, uint64_t *results);
/* After the run (and a barrier): 0 when the target's window, or the
 * origin's buffer and fetched results, hold what the run must leave; else
 * -1, with the first wrong byte said on stderr under @what. */
int rma_check_target(const rma_outcome_t *c, const unsigned char *win_mem, const char *what);
int rma_check_origin(const rma_outcome_t *c, int target, const unsigned char *obuf,
		     const uint64_t *results, const char *what);

/* Every rank learns whether all are @ok. */
bool rma_all_ok(bool ok);

/* A zero elapsed time (a clock that did not tick) counts as 1 ns, so rates
 * stay finite in the JSON document. */
double rma_elapsed(double t0, double t1);

/* Untimed iterations before the timed ones. */
unsigned rma_warmup(unsigned iters);

#endif
