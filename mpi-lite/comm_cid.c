/*
 * comm_cid.c — the context ids of communicators: which ids this process
 * uses, and the agreement on the id of a new communicator.
 *
 * Each process keeps a bitmap of the ids it uses (id = 4 * bit; each id
 * owns the contexts id, id|1 for collectives and id|2 for creation
 * traffic). Creating a communicator from a parent is one
 * agreement among the parent's members (those of the group for
 * MPI_Comm_create_group): every member contributes its bitmap (and, for a
 * split, its color and key), all of them OR the contributions together,
 * and every member then takes the lowest id free in the union:
 *
 *   rank 0  used 0,1,2      ─┐
 *   rank 1  used 0,1,3      ─┼─ all-OR ─► used 0,1,2,3 ─► new id = bit 4
 *   rank 2  used 0,1        ─┘            (same answer on every member)
 *
 * The id is free at every member of the new communicator, so no process
 * ever holds two communicators with the same id, whatever other
 * communicators are created concurrently among other processes.
 *
 * The all-OR runs on the parent's creation context (cid | 2) with tags
 * that user tags cannot take (bit 31 set), or the user's tag for
 * MPI_Comm_create_group. It is a dissemination exchange: in round k every
 * member sends what it has to member (r + 2^k) mod n and ORs in what
 * (r - 2^k) mod n sends; OR being idempotent, ceil(log2 n) rounds give
 * everyone the whole union.
 */
#include "comm_int.h"

#include <stdlib.h>

static uint64_t cid_used[MPIL_CID_WORDS];

void mpil_cid_reset(void)
{
	memset(cid_used, 0, sizeof(cid_used));
}

void mpil_cid_mark(uint32_t cid, bool used)
{
	uint32_t bit = cid / MPIL_CID_STRIDE;

	if (used)
		cid_used[bit / 64] |= (uint64_t)1 << (bit % 64);
	else
		cid_used[bit / 64] &= ~((uint64_t)1 << (bit % 64));
}

/* The lowest id free in @used, or 0 (the world's, never free) if none. */
static uint32_t cid_lowest_free(const uint64_t *used)
{
	for (int w = 0; w < MPIL_CID_WORDS; w++)
		if (~used[w])
			return (uint32_t)(w * 64 + __builtin_ctzll(~used[w])) * MPIL_CID_STRIDE;
	return 0;
}

/* ---- agreement among members ---------------------------------------------------------- */

static inline int member_world(const mpil_members_t *m, int r)
{
	return m->world ? m->world[r] : r;
}

/*
 * words[0..n) |= the same array of every other member (dissemination, see
 * the file header), on context @ctx with engine tag value @tag. Returns
 * an MPI error class.
 */
static int all_or(const mpil_members_t *m, uint32_t ctx, uint32_t tag, uint64_t *words, size_t n)
{
	size_t len = n * sizeof(uint64_t);
	uint64_t *in;
	int err = MPI_SUCCESS;

	if (m->size == 1)
		return MPI_SUCCESS;
	in = malloc(len);
	if (!in)
		return MPI_ERR_NO_MEM;
	for (int k = 1; k < m->size && err == MPI_SUCCESS; k <<= 1) {
		int to = member_world(m, (m->rank + k) % m->size);
		int from = member_world(m, (m->rank - k + m->size) % m->size);
		ibx_tag_t t = ((ibx_tag_t)ctx << 32) | tag;
		ibx_request_t rq = {.cb = NULL};
		ibx_status_t st;

		/* receive first: members exchanging both ways never wait on
		 * each other's send */
		st = ibx_tag_recv(mpil_g.ctx, from, in, len, t, MPIL_MASK_TAG, &rq);
		if (st < 0) {
			err = mpil_err_from_ibx(st);
			break;
		}
		st = mpil_ibx_send(to, words, len, t, 0);
		if (st != IBX_OK) {
			if (ibx_request_cancel(mpil_g.ctx, &rq) != IBX_OK)
				mpil_ibx_wait(&rq);
			err = mpil_err_from_ibx(st);
			break;
		}
		st = mpil_ibx_wait(&rq);
		if (st != IBX_OK) {
			err = mpil_err_from_ibx(st);
			break;
		}
		if (rq.length != len) {
			err = MPI_ERR_INTERN;
			break;
		}
		for (size_t i = 0; i < n; i++)
			words[i] |= in[i];
	}
	free(in);
	return err;
}

/* ---- MPI_THREAD_MULTIPLE: agreements of several threads at once ------------------------- */

/* The agreements this process has under way (on the threads' stacks). */
typedef struct cid_try {
	uint64_t key; /* parent id << 32 | tag: one agreement at a time per key */
	struct cid_try *next;
} cid_try_t;

static cid_try_t *cid_trying;
static bool cid_map_lent; /* an agreement of this process contributes cid_used */

/* The map goes to the agreement of lowest key among those under way here,
 * when no other holds it: in every process the lowest key of the job gets
 * it as soon as it is free, so that agreement succeeds. */
static bool cid_map_mine(uint64_t key)
{
	if (cid_map_lent)
		return false;
	for (const cid_try_t *t = cid_trying; t; t = t->next)
		if (t->key < key)
			return false;
	return true;
}

/*
 * With threads, two agreements of one process could each see an id free
 * and pick the same one for two communicators. As in MPICH, only one
 * agreement of a process at a time contributes the real map; the others
 * set a "retry" word, and an attempt that any member marked is repeated
 * (every member sees the same union, so all repeat together, and the
 * messages of consecutive attempts meet in order). The winner's id is
 * marked used (mpil_comm_new) before the section is released again.
 */
static int cid_agree_threads(MPI_Comm parent, const mpil_members_t *m, uint32_t tag,
			     uint64_t *words, size_t nextra, uint32_t *cid_p)
{
	size_t n = MPIL_CID_WORDS + 1 + nextra;
	uint64_t *w = malloc(n * sizeof(uint64_t));
	cid_try_t me = {((uint64_t)parent->cid << 32) | tag, cid_trying};
	int err;

	if (!w)
		return MPI_ERR_NO_MEM;
	cid_trying = &me;
	for (;;) {
		bool mine = cid_map_mine(me.key);

		if (mine) {
			cid_map_lent = true;
			memcpy(w, cid_used, sizeof(cid_used));
		} else {
			memset(w, 0xff, sizeof(cid_used));
		}
		w[MPIL_CID_WORDS] = !mine;
		memcpy(w + MPIL_CID_WORDS + 1, words + MPIL_CID_WORDS, nextra * sizeof(uint64_t));
		err = all_or(m, parent->cid | 2u, tag, w, n);
		if (mine)
			cid_map_lent = false;
		if (err != MPI_SUCCESS || !w[MPIL_CID_WORDS])
			break;
		mpil_cs_yield(); /* let the holder's thread go on */
	}
	for (cid_try_t **pp = &cid_trying; *pp; pp = &(*pp)->next)
		if (*pp == &me) {
			*pp = me.next;
			break;
		}
	if (err == MPI_SUCCESS) {
		memcpy(words, w, sizeof(cid_used));
		memcpy(words + MPIL_CID_WORDS, w + MPIL_CID_WORDS + 1, nextra * sizeof(uint64_t));
		*cid_p = cid_lowest_free(words);
	}
	free(w);
	return err;
}

int mpil_cid_agree(MPI_Comm parent, const mpil_members_t *m, uint32_t tag, uint64_t *words,
		   size_t nextra, uint32_t *cid_p)
{
	int err;

	if (mpil_g.mt)
		return cid_agree_threads(parent, m, tag, words, nextra, cid_p);
	memcpy(words, cid_used, sizeof(cid_used));
	err = all_or(m, parent->cid | 2u, tag, words, MPIL_CID_WORDS + nextra);
	if (err == MPI_SUCCESS)
		*cid_p = cid_lowest_free(words);
	return err;
}
