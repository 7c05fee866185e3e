/*
 * handle.c — the pools behind user-created MPI handles (datatypes,
 * communicators, groups, info objects).
 *
 * A handle is a pointer to its object, so a freed handle that the program
 * still holds must keep pointing to readable memory for the magic check to
 * report it (MPI_ERR_TYPE, MPI_ERR_COMM...) instead of reading freed heap.
 * Slots are carved from chunks that live until MPI_Finalize and are reused
 * oldest-freed first, which keeps a stale handle dead for as long as
 * possible:
 *
 *   chunk ─► [ live | dead ─┐ | live | dead ─┐ ]     free queue:
 *                           └───────────────┴──►  head ... tail (FIFO)
 *
 * A dead slot holds MPIL_MAGIC_DEAD at offset 0 and the queue link at
 * offset 8. Nothing here locks: mpi-lite is used by one thread at a time
 * (under MPI_THREAD_MULTIPLE, inside its critical section: thread.c).
 */
#include "mpil_int.h"

#include <stdlib.h>

#define POOL_CHUNK_SLOTS 32

typedef struct pool_chunk {
	struct pool_chunk *next;
	size_t nslots;
	max_align_t slots[]; /* nslots * objsize bytes */
} pool_chunk_t;

static inline void **slot_link(void *obj)
{
	return (void **)((char *)obj + sizeof(void *));
}

static inline void *chunk_slot(const mpil_pool_t *pool, pool_chunk_t *c, size_t i)
{
	return (char *)c->slots + i * pool->objsize;
}

static size_t slot_size(const mpil_pool_t *pool)
{
	size_t a = _Alignof(max_align_t), n = pool->objsize < 16 ? 16 : pool->objsize;

	return (n + a - 1) / a * a;
}

static void queue_push(mpil_pool_t *pool, void *obj)
{
	*(uint32_t *)obj = MPIL_MAGIC_DEAD;
	*slot_link(obj) = NULL;
	if (pool->tail)
		*slot_link(pool->tail) = obj;
	else
		pool->head = obj;
	pool->tail = obj;
}

static int pool_grow(mpil_pool_t *pool)
{
	pool_chunk_t *c;

	pool->objsize = slot_size(pool);
	c = malloc(sizeof(*c) + POOL_CHUNK_SLOTS * pool->objsize);
	if (!c)
		return MPI_ERR_NO_MEM;
	c->next = pool->chunks;
	c->nslots = POOL_CHUNK_SLOTS;
	pool->chunks = c;
	for (size_t i = 0; i < c->nslots; i++)
		queue_push(pool, chunk_slot(pool, c, i));
	return MPI_SUCCESS;
}

void *mpil_pool_get(mpil_pool_t *pool)
{
	void *obj;

	if (!pool->head && pool_grow(pool) != MPI_SUCCESS)
		return NULL;
	obj = pool->head;
	pool->head = *slot_link(obj);
	if (!pool->head)
		pool->tail = NULL;
	memset(obj, 0, pool->objsize);
	return obj;
}

void mpil_pool_put(mpil_pool_t *pool, void *obj)
{
	queue_push(pool, obj);
}

void mpil_pool_fini(mpil_pool_t *pool, void (*live)(void *obj))
{
	pool_chunk_t *c, *next;

	for (c = pool->chunks; c; c = next) {
		next = c->next;
		for (size_t i = 0; live && i < c->nslots; i++) {
			void *obj = chunk_slot(pool, c, i);

			if (*(uint32_t *)obj != MPIL_MAGIC_DEAD)
				live(obj);
		}
		free(c);
	}
	pool->chunks = NULL;
	pool->head = pool->tail = NULL;
}
