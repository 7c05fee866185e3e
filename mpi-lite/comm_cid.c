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
 * Concurrent agreements. Between a member's proposal and its choice,
 * another agreement of the same process may take an id: one of another
 * thread (MPI_THREAD_MULTIPLE), or an MPI_Comm_idup still under way
 * (comm_idup.c), which progresses inside any MPI call. So each member
 * holds the chosen id at once (marks it used: a later choice here skips
 * it), and when any member said in its proposal that it was busy — had
 * such an agreement under way — a second all-OR confirms that every
 * member could hold it:
 *
 *   propose ─► union ─► pick c, hold c ─► [busy anywhere] confirm: all held?
 *                                             yes ─► c          no ─► let c go,
 *                                                                pick again
 *
 * A retry starts at a place drawn from the agreement's key (parent id,
 * tag) and the attempt, so two agreements that took each other's id at two
 * processes pick apart the next time; nothing ever waits for another
 * agreement to finish, so overlapping creations among overlapping sets of
 * processes cannot deadlock (MPICH's comm_idup_overlap). Without a busy
 * member the one all-OR is the whole agreement, as before.
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

/* Is bit @bit of the map @used set? */
static inline bool cid_bit_used(const uint64_t *used, uint32_t bit)
{
	return used[bit / 64] >> (bit % 64) & 1;
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

/* ---- choosing and holding an id --------------------------------------------------------- */

static unsigned cid_nb_pending; /* nonblocking agreements under way here */

void mpil_cid_nb_begin(void)
{
	cid_nb_pending++;
}

void mpil_cid_nb_end(void)
{
	cid_nb_pending--;
}

bool mpil_cid_busy(void)
{
	return mpil_g.mt || cid_nb_pending > 0;
}

void mpil_cid_snapshot(uint64_t *words)
{
	memcpy(words, cid_used, sizeof(cid_used));
}

/* A mix of @x's bits (splitmix64's finaliser). */
static uint64_t cid_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint32_t mpil_cid_pick(const uint64_t *used, uint64_t key, unsigned attempt)
{
	uint32_t from, bit;

	if (attempt == 0)
		return cid_lowest_free(used);
	from = (uint32_t)(cid_mix(key ^ cid_mix(attempt)) % MPIL_CID_BITS);
	for (uint32_t i = 0; i < MPIL_CID_BITS; i++) {
		bit = (from + i) % MPIL_CID_BITS;
		if (bit && !cid_bit_used(used, bit))
			return bit * MPIL_CID_STRIDE;
	}
	return 0;
}

bool mpil_cid_reserve(uint32_t cid)
{
	if (cid_bit_used(cid_used, cid / MPIL_CID_STRIDE))
		return false;
	mpil_cid_mark(cid, true);
	return true;
}

/* ---- the blocking agreement ------------------------------------------------------------------ */

int mpil_cid_agree(MPI_Comm parent, const mpil_members_t *m, uint32_t tag, uint64_t *words,
		   size_t nextra, uint32_t *cid_p)
{
	const size_t busy = MPIL_CID_WORDS; /* the word after the map */
	uint64_t *w = malloc((busy + 1 + nextra) * sizeof(uint64_t));
	uint64_t key = (uint64_t)parent->cid << 32 | tag;
	uint32_t ctx = parent->cid | 2u;
	int err;

	if (!w)
		return MPI_ERR_NO_MEM;
	/* propose: maps, whether anything else may take an id meanwhile, parts */
	mpil_cid_snapshot(w);
	w[busy] = mpil_cid_busy();
	memcpy(w + busy + 1, words + MPIL_CID_WORDS, nextra * sizeof(uint64_t));
	err = all_or(m, ctx, tag, w, busy + 1 + nextra);
	if (err != MPI_SUCCESS)
		goto out;
	memcpy(words + MPIL_CID_WORDS, w + busy + 1, nextra * sizeof(uint64_t));
	for (unsigned attempt = 0;; attempt++) {
		uint32_t cid = mpil_cid_pick(w, key, attempt);
		bool held;

		*cid_p = cid;
		if (cid == 0)
			break; /* every member sees the same full union */
		held = mpil_cid_reserve(cid);
		if (!w[busy]) {
			/* nothing else chose an id at any member since it
			 * proposed: the lowest free one is free everywhere */
			if (!held)
				err = MPI_ERR_INTERN;
			break;
		}
		/* confirm: did every member hold it? (and fresh maps for a retry) */
		mpil_cid_snapshot(w);
		w[busy] = !held;
		err = all_or(m, ctx, tag, w, busy + 1);
		if (err == MPI_SUCCESS && !w[busy])
			break;
		if (held)
			mpil_cid_mark(cid, false);
		if (err != MPI_SUCCESS)
			break;
		w[busy] = 1;
		if (mpil_g.mt)
			mpil_cs_yield(); /* let the thread holding the id go on */
	}
out:
	memcpy(words, w, sizeof(cid_used));
	free(w);
	return err;
}
