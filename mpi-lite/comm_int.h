/*
 * comm_int.h — private to the communicator files: comm.c (the object and
 * its queries), comm_cid.c (context ids), comm_create.c (dup, split,
 * create), comm_idup.c (MPI_Comm_idup) and the process topologies
 * attached to communicators (topo*.c, topo_int.h).
 */
#ifndef MPIL_COMM_INT_H
#define MPIL_COMM_INT_H

#include "mpil_int.h"

/* For comm_create.c: a new communicator (MPI error class) and the undoing
 * of one that never reached the user. */
int mpil_comm_new(MPI_Comm parent, uint32_t cid, int n, const int *world, MPI_Comm *newcomm_p);
void mpil_comm_destroy(MPI_Comm c);
/* The duplicate of @comm with the id @cid (held by the agreement, let go
 * on failure): @comm's topology and attributes, @info's hints or (with
 * @dup_info) @comm's. An MPI error class; *what_p says why when it is not
 * the usual one of a creation. */
int mpil_comm_dup_make(MPI_Comm comm, uint32_t cid, MPI_Info info, bool dup_info, MPI_Comm *newcomm,
		       const char **what_p);
/* MPI_Comm_split for the topology constructors (no hints); errors are
 * reported on @comm as raised in @fname. */
int mpil_comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm_p, const char *fname);

/* A communicator's process topology (topo.c): MPI_Comm_dup copies it (an
 * MPI error class), the communicator's end frees it. */
int mpil_topo_dup(MPI_Comm from, MPI_Comm to);
void mpil_topo_free(MPI_Comm c);

/* ---- context ids (comm_cid.c) ------------------------------------------------ */
#define MPIL_CID_STRIDE 4u
#define MPIL_CID_BITS	2048
#define MPIL_CID_WORDS	(MPIL_CID_BITS / 64)

/* A set of processes taking part in an agreement: @size of them, this one
 * being @rank, world ranks @world (NULL: the identity). */
typedef struct mpil_members {
	int size, rank;
	const int *world;
} mpil_members_t;

void mpil_cid_reset(void);
void mpil_cid_mark(uint32_t cid, bool used);
/* Agreement on @parent among @m: ORs the bitmaps (and @nextra words after
 * them, which each member filled with its own part) and returns the new id
 * in *cid_p (0 if every id is taken); MPI error class. The id is held
 * (marked used) on return: a member that makes no communicator with it
 * lets it go (mpil_cid_mark(cid, false)). */
int mpil_cid_agree(MPI_Comm parent, const mpil_members_t *m, uint32_t tag, uint64_t *words,
		   size_t nextra, uint32_t *cid_p);

/* For the nonblocking agreement (comm_idup.c). */
void mpil_cid_nb_begin(void); /* one more under way here ... */
void mpil_cid_nb_end(void);   /* ... one fewer */
/* Could an id be taken here during an agreement (threads, or one under way)? */
bool mpil_cid_busy(void);
/* This process's map (MPIL_CID_WORDS words). */
void mpil_cid_snapshot(uint64_t *words);
/* The id that every member picks from the union @used on @attempt of the
 * agreement @key (the lowest free one first); 0 when none is free. */
uint32_t mpil_cid_pick(const uint64_t *used, uint64_t key, unsigned attempt);
/* Marks @cid used here; false if it already was. */
bool mpil_cid_reserve(uint32_t cid);

#endif /* MPIL_COMM_INT_H */
