/*
 * mutex.c — the distributed mutex of the engine API (include/ibx.h,
 * "distributed mutex"): creation and freeing, collective over the caller's
 * group, the checks every call makes, and the helpers through which the
 * algorithms reach a member's words (mutex_int.h has the layout).
 *
 * Creation, at every member (tagged messages with the caller's tag):
 *
 *   ibx_mem_alloc(region), ibx_rkey_pack
 *   card {algo, n, count, base, key, error} ──► every other member
 *   ◄── their cards; ibx_rkey_unpack each; ibx_rkey_ptr where the region
 *       is mapped here (node-local members, self): loads, stores and CPU
 *       atomics then replace the engine's operations
 *   status ──► every other member, ◄── theirs: all succeed or all fail
 *
 * Free is the same status round (nobody unmaps a region that a member may
 * still write: every unlock has flushed its hand-off before it returns).
 *
 * Waiting (mutex_mcs.c, mutex_wl.c) goes through ibx_mutex_idle: it
 * progresses the engine with the waiting rules of ibx_progress_wait (after
 * a few idle passes the CPU is yielded, so 8 ranks on 2 cores hand the
 * lock over in microseconds) and looks at the members' sticky peer errors,
 * which the paths set when a process dies or a connection breaks: a lost
 * holder, waiter or home ends the wait with IBX_ERR_UNREACHABLE.
 */
#include "mutex_int.h"
#include "rma_config.h"

#include <stdlib.h>
#include <string.h>

IBX_CONFIG_DEFINE(ibx_rma, "core/rma", "IBX_", ibx_rma_config_t, IBX_RMA_CONFIG, NULL)

#define MUTEX_CARD_MAGIC 0x784d5849u /* "IXMx" */

static const char *const algo_names[] = {"default", "mcs", "onesided", "hybrid"};

typedef struct mutex_card {
	uint32_t magic;
	int32_t algo, n, count;
	int32_t err; /* the sender's local failure (ibx_status_t), or 0 */
	uint32_t key_len;
	uint64_t base;
	unsigned char key[IBX_RKEY_PACKED_MAX];
} mutex_card_t;

/* ---- reaching a member's words ------------------------------------------------------ */

static ibx_status_t req_wait(ibx_mutex_t *m, ibx_request_t *rq, ibx_status_t s, int i,
			     const char *what)
{
	unsigned idle = 0, pass = 0;

	if (s != IBX_INPROGRESS)
		return s;
	while (!__atomic_load_n(&rq->completed, __ATOMIC_ACQUIRE)) {
		s = ibx_mutex_idle(m, &idle, &pass, i, what);
		if (s != IBX_OK)
			return s; /* the member is lost: its path fails the request */
	}
	return rq->status;
}

ibx_status_t ibx_mutex_amo(ibx_mutex_t *m, int who, size_t off, ibx_atomic_op_t op, uint64_t value,
			   uint64_t compare, uint64_t *old_p)
{
	mutex_member_t *b = &m->mb[who];
	ibx_request_t rq;
	ibx_status_t s;

	if (b->direct) {
		uint64_t *w = (uint64_t *)(void *)(b->direct + off);

		switch (op) {
		case IBX_ATOMIC_SWAP:
			*old_p = __atomic_exchange_n(w, value, __ATOMIC_SEQ_CST);
			break;
		case IBX_ATOMIC_CSWAP:
			*old_p = compare;
			__atomic_compare_exchange_n(w, old_p, value, false, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
			break;
		default: *old_p = __atomic_fetch_add(w, value, __ATOMIC_SEQ_CST); break;
		}
		return IBX_OK;
	}
	rq.cb = NULL;
	s = ibx_atomic(m->ctx, op, value, compare, old_p, b->base + off, b->rk, &rq);
	s = req_wait(m, &rq, s, -1, "an atomic");
	if (s != IBX_OK)
		ibx_error("mutex: atomic on rank %d failed: %s", b->rank, ibx_status_str(s));
	return s;
}

ibx_status_t ibx_mutex_put(ibx_mutex_t *m, int who, size_t off, const void *src, size_t len)
{
	mutex_member_t *b = &m->mb[who];
	ibx_status_t s;

	if (b->direct) {
		char *p = b->direct + off;

		if (len == 8 && !(off & 7)) {
			uint64_t v;

			memcpy(&v, src, 8);
			__atomic_store_n((uint64_t *)(void *)p, v, __ATOMIC_RELEASE);
		} else if (len == 1) {
			__atomic_store_n((unsigned char *)p, *(const unsigned char *)src,
					 __ATOMIC_RELEASE);
		} else {
			__atomic_thread_fence(__ATOMIC_RELEASE);
			memcpy(p, src, len);
		}
		return IBX_OK;
	}
	s = ibx_put(m->ctx, src, len, b->base + off, b->rk, NULL);
	if (s == IBX_OK || s == IBX_INPROGRESS)
		s = ibx_flush(m->ctx, b->rank);
	if (s != IBX_OK)
		ibx_error("mutex: put to rank %d failed: %s", b->rank, ibx_status_str(s));
	return s;
}

ibx_status_t ibx_mutex_get(ibx_mutex_t *m, int who, size_t off, void *dst, size_t len)
{
	mutex_member_t *b = &m->mb[who];
	ibx_request_t rq;
	ibx_status_t s;

	if (b->direct) {
		memcpy(dst, b->direct + off, len);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		return IBX_OK;
	}
	rq.cb = NULL;
	s = ibx_get(m->ctx, dst, len, b->base + off, b->rk, &rq);
	s = req_wait(m, &rq, s, -1, "a get");
	if (s != IBX_OK)
		ibx_error("mutex: get from rank %d failed: %s", b->rank, ibx_status_str(s));
	return s;
}

static int lost_member(const ibx_mutex_t *m)
{
	for (int j = 0; j < m->n; j++)
		if (j != m->me && m->ctx->peers[m->mb[j].rank].error != IBX_OK)
			return j;
	return -1;
}

ibx_status_t ibx_mutex_idle(ibx_mutex_t *m, unsigned *idle_p, unsigned *pass_p, int i,
			    const char *what)
{
	int j;

	ibx_progress_wait(m->ctx, idle_p);
	if (++*pass_p % MUTEX_CHECK)
		return IBX_OK;
	j = lost_member(m);
	if (j < 0)
		return IBX_OK;
	if (i >= 0)
		ibx_error("mutex %d: rank %d of its group (world rank %d) was lost (%s) while "
			  "waiting for %s",
			  i, j, m->mb[j].rank, ibx_status_str(m->ctx->peers[m->mb[j].rank].error),
			  what);
	return IBX_ERR_UNREACHABLE;
}

/* ---- collective steps ---------------------------------------------------------------- */

/* Sends @len bytes of @out to every other member and receives theirs into
 * @in (n x len, our slot untouched), all with the mutex's tag. */
static ibx_status_t exchange(ibx_mutex_t *m, const void *out, void *in, size_t len)
{
	ibx_request_t *rq;
	ibx_status_t s = IBX_OK, s2;
	unsigned idle = 0;
	int n = m->n;

	rq = calloc(2 * (size_t)n, sizeof(*rq));
	if (!rq)
		return IBX_ERR_NO_MEMORY;
	for (int j = 0; j < n; j++) {
		rq[j].completed = rq[n + j].completed = 1;
		rq[j].status = rq[n + j].status = IBX_OK;
	}
	for (int j = 0; j < n && s == IBX_OK; j++) {
		if (j == m->me)
			continue;
		s = ibx_tag_recv(m->ctx, m->mb[j].rank, (char *)in + (size_t)j * len, len, m->tag,
				 IBX_TAG_MASK_ALL, &rq[j]);
		if (s == IBX_OK || s == IBX_INPROGRESS)
			s = ibx_tag_send(m->ctx, m->mb[j].rank, out, len, m->tag, 0, &rq[n + j]);
		if (s == IBX_INPROGRESS)
			s = IBX_OK;
	}
	for (int j = 0; j < 2 * n; j++) {
		while (!__atomic_load_n(&rq[j].completed, __ATOMIC_ACQUIRE)) {
			if (s != IBX_OK && j < n && ibx_request_cancel(m->ctx, &rq[j]) == IBX_OK)
				break;
			ibx_progress_wait(m->ctx, &idle);
		}
		s2 = rq[j].status;
		if (s == IBX_OK && s2 != IBX_OK) {
			ibx_error("mutex: exchange with rank %d failed: %s", m->mb[j % n].rank,
				  ibx_status_str(s2));
			s = s2;
		}
		if (s == IBX_OK && j < n && j != m->me && rq[j].length != len)
			s = IBX_ERR_CORRUPT;
	}
	free(rq);
	return s;
}

/* Every member's status: the first error any member had, or IBX_OK. */
static ibx_status_t agree(ibx_mutex_t *m, ibx_status_t mine)
{
	int32_t *all = calloc((size_t)m->n, sizeof(*all));
	int32_t v = mine;
	ibx_status_t s;

	if (!all)
		return IBX_ERR_NO_MEMORY;
	s = exchange(m, &v, all, sizeof(v));
	for (int j = 0; s == IBX_OK && j < m->n; j++)
		if (j != m->me && all[j] != IBX_OK)
			s = (ibx_status_t)all[j];
	free(all);
	return mine != IBX_OK ? mine : s;
}

/* ---- create / free ------------------------------------------------------------------- */

static ibx_status_t algo_choose(const ibx_mutex_params_t *params, ibx_mutex_algo_t *algo_p)
{
	const char *name = ibx_rma_config()->MUTEX_ALGO;

	if (params && params->algo != IBX_MUTEX_ALGO_DEFAULT) {
		if ((unsigned)params->algo > IBX_MUTEX_ALGO_HYBRID)
			return IBX_ERR_INVALID_PARAM;
		*algo_p = params->algo;
		return IBX_OK;
	}
	for (int a = IBX_MUTEX_ALGO_MCS; a <= IBX_MUTEX_ALGO_HYBRID; a++) {
		if (!strcmp(name, algo_names[a])) {
			*algo_p = (ibx_mutex_algo_t)a;
			return IBX_OK;
		}
	}
	ibx_error("IBX_MUTEX_ALGO=%s: not one of mcs, onesided, hybrid", name);
	return IBX_ERR_INVALID_PARAM;
}

static void layout(ibx_mutex_t *m)
{
	size_t nhome = ((size_t)m->count + (size_t)m->n - 1) / (size_t)m->n;

	if (m->algo == IBX_MUTEX_ALGO_MCS) {
		m->hstride = MUTEX_LINE;
		m->wstride = 16;
	} else {
		m->hstride =
		    (MUTEX_WL_OFF + (size_t)m->n + MUTEX_LINE - 1) & ~(size_t)(MUTEX_LINE - 1);
		m->wstride = m->algo == IBX_MUTEX_ALGO_ONESIDED ? 8 : 0;
	}
	m->woff = nhome * m->hstride;
	m->len = m->woff + (size_t)m->count * m->wstride;
}

static void mutex_destroy(ibx_mutex_t *m)
{
	for (int j = 0; m->mb && j < m->n; j++)
		if (m->mb[j].rk)
			ibx_rkey_destroy(m->ctx, m->mb[j].rk);
	if (m->mem)
		ibx_mem_unmap(m->ctx, m->mem);
	free(m->mb);
	free(m->state);
	free(m->wake);
	free(m->wl);
	free(m);
}

/* Our card, and what we need locally; a failure goes into the card. */
static ibx_status_t prepare(ibx_mutex_t *m, mutex_card_t *card)
{
	size_t klen = sizeof(card->key);
	ibx_status_t s;
	void *addr;

	m->state = calloc((size_t)m->count, 1);
	m->wl = calloc((size_t)m->n, 1);
	if (m->algo == IBX_MUTEX_ALGO_HYBRID)
		m->wake = calloc((size_t)m->count, sizeof(*m->wake));
	if (!m->state || !m->wl || (m->algo == IBX_MUTEX_ALGO_HYBRID && !m->wake))
		return IBX_ERR_NO_MEMORY;
	s = ibx_mem_alloc(m->ctx, m->len, &addr, &m->mem);
	if (s != IBX_OK)
		return s;
	m->base = addr;
	s = ibx_rkey_pack(m->ctx, m->mem, card->key, &klen);
	if (s != IBX_OK)
		return s;
	card->key_len = (uint32_t)klen;
	card->base = (uint64_t)(uintptr_t)addr;
	return IBX_OK;
}

static ibx_status_t connect_members(ibx_mutex_t *m, const mutex_card_t *cards)
{
	for (int j = 0; j < m->n; j++) {
		const mutex_card_t *c = &cards[j];
		mutex_member_t *b = &m->mb[j];
		ibx_status_t s;
		void *p;

		if (c->magic != MUTEX_CARD_MAGIC || c->n != m->n || c->count != m->count) {
			ibx_error("mutex: rank %d created it with other arguments (n %d count %d, "
				  "here %d %d)",
				  b->rank, c->n, c->count, m->n, m->count);
			return IBX_ERR_INVALID_PARAM;
		}
		if (c->algo != (int32_t)m->algo) {
			ibx_error("mutex: rank %d uses algorithm %s, this one %s (IBX_MUTEX_ALGO "
				  "must be the same everywhere)",
				  b->rank, algo_names[c->algo & 3], algo_names[m->algo]);
			return IBX_ERR_INVALID_PARAM;
		}
		s = ibx_rkey_unpack(m->ctx, b->rank, c->key, c->key_len, &b->rk);
		if (s != IBX_OK)
			return s;
		b->base = c->base;
		if (ibx_rkey_ptr(b->rk, b->base, &p) == IBX_OK)
			b->direct = p;
	}
	return IBX_OK;
}

ibx_status_t ibx_mutex_create(ibx_ctx_t *ctx, const int *ranks, int nranks, int count,
			      ibx_tag_t tag, const ibx_mutex_params_t *params, ibx_mutex_t **m_p)
{
	mutex_card_t card, *cards = NULL;
	ibx_status_t s, mine = IBX_OK;
	ibx_mutex_t *m;
	int me = -1;

	if (!ctx || !ranks || nranks < 1 || count < 1 || !m_p)
		return IBX_ERR_INVALID_PARAM;
	for (int j = 0; j < nranks; j++) {
		if (ranks[j] < 0 || ranks[j] >= ctx->size)
			return IBX_ERR_INVALID_PARAM;
		if (ranks[j] == ctx->rank)
			me = j;
		for (int k = 0; k < j; k++)
			if (ranks[k] == ranks[j])
				return IBX_ERR_INVALID_PARAM;
	}
	if (me < 0)
		return IBX_ERR_INVALID_PARAM;
	m = calloc(1, sizeof(*m));
	if (!m)
		return IBX_ERR_NO_MEMORY;
	m->ctx = ctx;
	m->n = nranks;
	m->me = me;
	m->count = count;
	m->tag = tag;
	m->src_one = 1;
	m->src_me = (uint64_t)me + 1;
	m->mb = calloc((size_t)nranks, sizeof(*m->mb));
	cards = calloc((size_t)nranks, sizeof(*cards));
	if (!m->mb || !cards) {
		free(cards);
		free(m->mb);
		free(m);
		return IBX_ERR_NO_MEMORY;
	}
	for (int j = 0; j < nranks; j++)
		m->mb[j].rank = ranks[j];

	memset(&card, 0, sizeof(card));
	mine = algo_choose(params, &m->algo);
	if (mine == IBX_OK) {
		layout(m);
		mine = prepare(m, &card);
	}
	card.magic = MUTEX_CARD_MAGIC;
	card.algo = m->algo;
	card.n = nranks;
	card.count = count;
	card.err = mine;
	/* every member takes part in every step, carrying its error */
	s = exchange(m, &card, cards, sizeof(card));
	if (s != IBX_OK)
		goto err;
	cards[me] = card;
	for (int j = 0; j < nranks && mine == IBX_OK; j++)
		if (cards[j].err != IBX_OK)
			mine = (ibx_status_t)cards[j].err;
	if (mine == IBX_OK)
		mine = connect_members(m, cards);
	s = agree(m, mine);
	if (s != IBX_OK)
		goto err;
	free(cards);
	ibx_debug("mutex: %d mutexes over %d ranks, algorithm %s, %zu bytes here", count, nranks,
		  algo_names[m->algo], m->len);
	*m_p = m;
	return IBX_OK;

err:
	free(cards);
	mutex_destroy(m);
	return s;
}

ibx_status_t ibx_mutex_free(ibx_mutex_t *m)
{
	ibx_status_t s;
	int busy = 0;

	if (!m)
		return IBX_ERR_INVALID_PARAM;
	for (int i = 0; i < m->count; i++) {
		if (m->state[i] == MUTEX_FREE)
			continue;
		busy++;
		if (m->wake && !m->wake[i].completed)
			ibx_request_cancel(m->ctx, &m->wake[i]);
	}
	if (busy)
		ibx_warn("mutex: freed while this rank holds or waits for %d of its mutexes", busy);
	s = agree(m, IBX_OK);
	mutex_destroy(m);
	return s;
}

/* ---- lock / unlock --------------------------------------------------------------------- */

static ibx_status_t check_index(const ibx_mutex_t *m, int i, const char *fn)
{
	if (!m)
		return IBX_ERR_INVALID_PARAM;
	if (i < 0 || i >= m->count) {
		ibx_debug("%s: mutex %d does not exist (count %d)", fn, i, m->count);
		return IBX_ERR_INVALID_PARAM;
	}
	return IBX_OK;
}

ibx_status_t ibx_mutex_lock_start(ibx_mutex_t *m, int i)
{
	ibx_status_t s = check_index(m, i, "ibx_mutex_lock");

	if (s != IBX_OK)
		return s;
	if (m->state[i] != MUTEX_FREE) {
		ibx_debug("ibx_mutex_lock: this rank already %s mutex %d",
			  m->state[i] == MUTEX_HELD ? "holds" : "waits for", i);
		return IBX_ERR_BUSY;
	}
	s = m->algo == IBX_MUTEX_ALGO_MCS ? ibx_mutex_mcs_start(m, i) : ibx_mutex_wl_start(m, i);
	if (s == IBX_OK)
		m->state[i] = MUTEX_HELD;
	else if (s == IBX_INPROGRESS)
		m->state[i] = MUTEX_QUEUED;
	return s;
}

ibx_status_t ibx_mutex_lock_wait(ibx_mutex_t *m, int i)
{
	ibx_status_t s = check_index(m, i, "ibx_mutex_lock_wait");

	if (s != IBX_OK)
		return s;
	if (m->state[i] == MUTEX_HELD)
		return IBX_OK;
	if (m->state[i] == MUTEX_FREE) {
		ibx_debug("ibx_mutex_lock_wait: mutex %d was not started", i);
		return IBX_ERR_INVALID_PARAM;
	}
	s = m->algo == IBX_MUTEX_ALGO_MCS ? ibx_mutex_mcs_wait(m, i) : ibx_mutex_wl_wait(m, i);
	if (s == IBX_OK)
		m->state[i] = MUTEX_HELD;
	return s;
}

ibx_status_t ibx_mutex_lock(ibx_mutex_t *m, int i)
{
	ibx_status_t s = ibx_mutex_lock_start(m, i);

	return s == IBX_INPROGRESS ? ibx_mutex_lock_wait(m, i) : s;
}

ibx_status_t ibx_mutex_unlock(ibx_mutex_t *m, int i)
{
	ibx_status_t s = check_index(m, i, "ibx_mutex_unlock");

	if (s != IBX_OK)
		return s;
	if (m->state[i] != MUTEX_HELD) {
		ibx_debug("ibx_mutex_unlock: this rank does not hold mutex %d", i);
		return IBX_ERR_INVALID_PARAM;
	}
	s = m->algo == IBX_MUTEX_ALGO_MCS ? ibx_mutex_mcs_unlock(m, i) : ibx_mutex_wl_unlock(m, i);
	m->state[i] = MUTEX_FREE;
	return s;
}

int ibx_mutex_home(const ibx_mutex_t *m, int i)
{
	return m && i >= 0 && i < m->count ? mutex_home_of(m, i) : -1;
}

const char *ibx_mutex_algo_name(const ibx_mutex_t *m)
{
	return m ? algo_names[m->algo] : "none";
}
