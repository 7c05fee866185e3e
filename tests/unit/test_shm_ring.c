/*
 * test_shm_ring.c — core/shm_lf without an ibx context: the lock-free slot
 * ring and the pipe between two forked processes (the real case: two
 * address spaces, one shared mapping) and between two threads (the same
 * code where ThreadSanitizer can follow the release/acquire pairs), the
 * segments (create, attach from another process, unlink: nothing left in
 * /dev/shm), the sweep of stranded segments, and CMA transfers.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm_lf/shm_int.h"

/* ---- message stream shared by writer and reader --------------------------- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* Length of message i: mostly 0..300 bytes (1 to 6 slots), now and then
 * the most a 64-slot ring's half can hold. */
static size_t msg_len(uint64_t i, size_t big)
{
	uint64_t h = mix(i);

	return h % 997 == 0 ? big : (size_t)(h >> 20) % 301;
}

static uint8_t msg_byte(uint64_t i, size_t j)
{
	return (uint8_t)(mix(i * 131 + j / 8) >> ((j % 8) * 8));
}

static void msg_fill(uint64_t i, uint8_t *buf, size_t len)
{
	for (size_t j = 0; j < len; j++)
		buf[j] = msg_byte(i, j);
}

static bool msg_check(uint64_t i, const uint8_t *buf, size_t len)
{
	for (size_t j = 0; j < len; j++)
		if (buf[j] != msg_byte(i, j))
			return false;
	return true;
}

/* What writer and reader share besides the ring. */
typedef struct ring_test {
	ibx_shm_slot_t *slots;
	uint32_t nslots;
	ibx_shm_ack_t *ack;
	uint64_t nmsg;
	_Atomic int writer_saw_full; /* the writer found the ring full */
	_Atomic uint64_t full_count;
	_Atomic int error;
} ring_test_t;

static void relax(unsigned *spins)
{
	if (++*spins > 256) {
		*spins = 0;
		sched_yield(); /* processes may share a CPU (sanitizer runs) */
	}
}

/* Writer: every message in order; on a full ring, retry. Returns 0. */
static int ring_writer(ring_test_t *t)
{
	ibx_shm_tx_t tx;
	uint8_t buf[4096];
	size_t big = ibx_shm_pkt_capacity(t->nslots / 2);
	unsigned spins = 0;

	ibx_shm_tx_init(&tx, t->slots, t->nslots, t->ack);
	for (uint64_t i = 0; i < t->nmsg; i++) {
		size_t len = msg_len(i, big);

		msg_fill(i, buf, len);
		while (
		    !ibx_shm_tx_send(&tx, IBX_SHM_PKT_EAGER, (uint32_t)i, i ^ 0x5a5a, buf, len)) {
			if (!atomic_load(&t->writer_saw_full))
				atomic_store(&t->writer_saw_full, 1);
			atomic_fetch_add_explicit(&t->full_count, 1, memory_order_relaxed);
			relax(&spins);
		}
	}
	return 0;
}

/* Reader: checks order, header and content of every message. The first
 * read waits until the writer has hit a full ring (back-pressure is
 * exercised in every run, whatever the scheduling). */
static int ring_reader(ring_test_t *t)
{
	ibx_shm_rx_t rx;
	uint8_t buf[4096];
	size_t big = ibx_shm_pkt_capacity(t->nslots / 2);
	unsigned spins = 0, batch = 0;

	ibx_shm_rx_init(&rx, t->slots, t->nslots, t->ack);
	while (!atomic_load(&t->writer_saw_full))
		relax(&spins);
	for (uint64_t i = 0; i < t->nmsg;) {
		ibx_shm_slot_t *h = ibx_shm_rx_peek(&rx);
		size_t len;

		if (!h) {
			ibx_shm_rx_release(&rx);
			batch = 0;
			relax(&spins);
			continue;
		}
		len = msg_len(i, big);
		if (!ibx_shm_rx_valid(&rx, h) || h->h.type != IBX_SHM_PKT_EAGER ||
		    h->h.aux != (uint32_t)i || h->h.tag != (i ^ 0x5a5a) || h->h.len != len ||
		    h->h.nslots != ibx_shm_pkt_slots(len))
			return 10;
		ibx_shm_rx_gather(&rx, h, buf);
		if (!msg_check(i, buf, len))
			return 11;
		ibx_shm_rx_advance(&rx, h);
		i++;
		/* hand slots back in batches, as the path does once per poll */
		if (++batch == 8) {
			ibx_shm_rx_release(&rx);
			batch = 0;
		}
	}
	ibx_shm_rx_release(&rx);
	/* nothing beyond the last message */
	return ibx_shm_rx_peek(&rx) ? 12 : 0;
}

static void *shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	memset(p, 0, size);
	return p;
}

static ring_test_t *ring_test_new(uint32_t nslots, uint64_t nmsg)
{
	size_t size =
	    sizeof(ring_test_t) + 64 + sizeof(ibx_shm_ack_t) + nslots * sizeof(ibx_shm_slot_t) + 64;
	uint8_t *mem = shared_alloc(size);
	ring_test_t *t = (ring_test_t *)mem;
	uintptr_t a = ((uintptr_t)(mem + sizeof(*t)) + 63) & ~(uintptr_t)63;

	t->ack = (ibx_shm_ack_t *)a;
	t->slots = (ibx_shm_slot_t *)(a + sizeof(ibx_shm_ack_t));
	t->nslots = nslots;
	t->nmsg = nmsg;
	return t;
}

static size_t ring_test_size(uint32_t nslots)
{
	return sizeof(ring_test_t) + 64 + sizeof(ibx_shm_ack_t) + nslots * sizeof(ibx_shm_slot_t) +
	       64;
}

static int wait_child(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- tests: ring ----------------------------------------------------------- */

static void test_pkt_slots(void **state)
{
	assert_int_equal(ibx_shm_pkt_slots(0), 1);
	assert_int_equal(ibx_shm_pkt_slots(8), 1);
	assert_int_equal(ibx_shm_pkt_slots(40), 1);
	assert_int_equal(ibx_shm_pkt_slots(41), 2);
	assert_int_equal(ibx_shm_pkt_slots(100), 2);
	assert_int_equal(ibx_shm_pkt_slots(101), 3);
	for (uint32_t k = 1; k < 100; k++) {
		assert_int_equal(ibx_shm_pkt_slots(ibx_shm_pkt_capacity(k)), k);
		assert_int_equal(ibx_shm_pkt_slots(ibx_shm_pkt_capacity(k) + 1), k + 1);
	}
}

/* One process: fill a small ring exactly, see it refuse, free it, wrap
 * around many laps with packets that straddle the end. */
static void test_ring_full_and_wrap(void **state)
{
	ring_test_t *t = ring_test_new(8, 0);
	ibx_shm_tx_t tx;
	ibx_shm_rx_t rx;
	uint8_t buf[512], out[512];
	int n = 0;

	ibx_shm_tx_init(&tx, t->slots, 8, t->ack);
	ibx_shm_rx_init(&rx, t->slots, 8, t->ack);
	assert_null(ibx_shm_rx_peek(&rx));
	/* 8 one-slot packets fill it, the 9th does not fit */
	while (ibx_shm_tx_send(&tx, IBX_SHM_PKT_EAGER, 0, (uint64_t)n, "x", 1))
		n++;
	assert_int_equal(n, 8);
	/* reading without releasing frees nothing */
	assert_non_null(ibx_shm_rx_peek(&rx));
	ibx_shm_rx_advance(&rx, ibx_shm_rx_peek(&rx));
	assert_false(ibx_shm_tx_send(&tx, IBX_SHM_PKT_EAGER, 0, 99, "x", 1));
	ibx_shm_rx_release(&rx);
	assert_true(ibx_shm_tx_send(&tx, IBX_SHM_PKT_EAGER, 0, 8, "x", 1));
	for (int i = 1; i <= 8; i++) {
		ibx_shm_slot_t *h = ibx_shm_rx_peek(&rx);

		assert_non_null(h);
		assert_int_equal(h->h.tag, (uint64_t)i);
		ibx_shm_rx_advance(&rx, h);
	}
	assert_null(ibx_shm_rx_peek(&rx));
	ibx_shm_rx_release(&rx);

	/* 1000 laps of 3-slot packets (8 is not a multiple of 3: they
	 * straddle the ring's end) */
	for (uint64_t i = 0; i < 1000 * 8 / 3; i++) {
		size_t len = ibx_shm_pkt_capacity(3) - (i % 7);
		ibx_shm_slot_t *h;

		msg_fill(i, buf, len);
		assert_true(ibx_shm_tx_send(&tx, IBX_SHM_PKT_EAGER, 0, i, buf, len));
		h = ibx_shm_rx_peek(&rx);
		assert_non_null(h);
		assert_true(ibx_shm_rx_valid(&rx, h));
		assert_int_equal(h->h.len, len);
		ibx_shm_rx_gather(&rx, h, out);
		assert_true(msg_check(i, out, len));
		ibx_shm_rx_advance(&rx, h);
		ibx_shm_rx_release(&rx);
		assert_null(ibx_shm_rx_peek(&rx));
	}
	/* a packet as large as the whole ring fits an empty ring */
	msg_fill(7, buf, ibx_shm_pkt_capacity(8));
	assert_true(ibx_shm_tx_send(&tx, IBX_SHM_PKT_EAGER, 0, 7, buf, ibx_shm_pkt_capacity(8)));
	assert_false(ibx_shm_tx_send(&tx, IBX_SHM_PKT_EAGER, 0, 8, buf, 0));
	munmap(t, ring_test_size(8));
}

/* Stale bytes from an older lap must never read as a full slot, whatever
 * the user data: continuation slots full of bytes that look like the next
 * lap's sequence numbers. */
static void test_ring_no_stale_full(void **state)
{
	ring_test_t *t = ring_test_new(8, 0);
	ibx_shm_tx_t tx;
	ibx_shm_rx_t rx;
	uint8_t buf[512];

	ibx_shm_tx_init(&tx, t->slots, 8, t->ack);
	ibx_shm_rx_init(&rx, t->slots, 8, t->ack);
	for (uint64_t lap = 0; lap < 64; lap++) {
		/* one packet of 8 slots whose every 4-byte word is a plausible
		 * future seq */
		for (size_t j = 0; j + 4 <= sizeof(buf); j += 4) {
			uint32_t v = (uint32_t)(tx.head + 8 + j / 60 + 1);

			memcpy(buf + j, &v, 4);
		}
		assert_true(
		    ibx_shm_tx_send(&tx, IBX_SHM_PKT_EAGER, 0, lap, buf, ibx_shm_pkt_capacity(8)));
		ibx_shm_slot_t *h = ibx_shm_rx_peek(&rx);

		assert_non_null(h);
		ibx_shm_rx_advance(&rx, h);
		ibx_shm_rx_release(&rx);
		/* the next lap's slots hold this lap's data: none is "full" */
		for (uint32_t k = 0; k < 8; k++) {
			rx.tail += k;
			assert_null(ibx_shm_rx_peek(&rx));
			rx.tail -= k;
		}
	}
	munmap(t, ring_test_size(8));
}

/* Two processes, two million messages of 0..300 bytes (and every ~1000th
 * as large as half the ring), 64-slot ring: order, headers and content. */
static void test_ring_stress_fork(void **state)
{
	uint64_t nmsg = getenv("IBX_TEST_QUICK") ? 200000 : 2000000;
	ring_test_t *t = ring_test_new(64, nmsg);
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(ring_writer(t));
	assert_int_equal(ring_reader(t), 0);
	assert_int_equal(wait_child(pid), 0);
	assert_true(atomic_load(&t->full_count) > 0);
	munmap(t, ring_test_size(64));
}

static void *writer_thread(void *arg)
{
	return (void *)(intptr_t)ring_writer(arg);
}

/* The same with threads: ThreadSanitizer follows the slot's release/
 * acquire pairs only within one process. */
static void test_ring_stress_threads(void **state)
{
	uint64_t nmsg = getenv("IBX_TEST_QUICK") ? 100000 : 1000000;
	ring_test_t *t = ring_test_new(64, nmsg);
	pthread_t th;
	void *ret;

	assert_int_equal(pthread_create(&th, NULL, writer_thread, t), 0);
	assert_int_equal(ring_reader(t), 0);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_int_equal((intptr_t)ret, 0);
	munmap(t, ring_test_size(64));
}

/* ---- tests: pipe ----------------------------------------------------------- */

typedef struct pipe_test {
	ibx_shm_ack_t ack;
	ibx_shm_chunk_hdr_t hdrs[4];
	uint64_t nmsg;
	_Atomic int writer_saw_full;
	_Atomic int ring_switches;
	uint8_t data[4 * 4096];
} pipe_test_t;

static size_t pipe_msg_len(uint64_t i)
{
	uint64_t h = mix(i + 77);

	return h % 5 == 0 ? 0 : (size_t)(h >> 17) % (40 * 1024);
}

static int pipe_writer(pipe_test_t *t)
{
	static uint8_t buf[40 * 1024];
	ibx_shm_pipe_t p;
	unsigned spins = 0;

	ibx_request_t rq = {.buf = buf};

	ibx_shm_pipe_init(&p, t->hdrs, t->data, 4096, 4, &t->ack);
	p.first = 1000; /* the ramp: 1000, 3000, then whole 4096-byte chunks */
	/* the ring flips between 2 and 4 chunks every 37 messages (as the
	 * automatic choice would, once the pipe is empty) */
	p.tune.small = 2;
	p.tune.decided = true;
	p.tune.want = IBX_SHM_RING_LARGE;
	for (uint64_t i = 0; i < t->nmsg; i++) {
		size_t len = pipe_msg_len(i), done = 0;
		uint32_t ring = p.ring;

		if (i % 37 == 36)
			p.tune.want = !p.tune.want;
		msg_fill(i, buf, len);
		while (done < len) {
			size_t n = ibx_shm_pipe_push(&p, &rq, done, len - done, done);

			if (!n) {
				atomic_store(&t->writer_saw_full, 1);
				relax(&spins);
			}
			done += n;
		}
		if (p.ring != ring)
			atomic_fetch_add(&t->ring_switches, 1);
	}
	return 0;
}

static int pipe_reader(pipe_test_t *t)
{
	static uint8_t buf[40 * 1024];
	ibx_shm_pipe_t p;
	unsigned spins = 0;

	ibx_request_t rq = {.buf = buf};

	ibx_shm_pipe_init(&p, t->hdrs, t->data, 4096, 4, &t->ack);
	while (!atomic_load(&t->writer_saw_full))
		relax(&spins);
	for (uint64_t i = 0; i < t->nmsg; i++) {
		size_t len = pipe_msg_len(i), done = 0;

		memset(buf, 0, len);
		while (done < len) {
			size_t n = ibx_shm_pipe_pull(&p, &rq, done, len - done);

			if (n == (size_t)-1)
				return 20;
			if (!n)
				relax(&spins);
			done += n;
		}
		if (!msg_check(i, buf, len))
			return 21;
	}
	return 0;
}

static void *pipe_writer_thread(void *arg)
{
	return (void *)(intptr_t)pipe_writer(arg);
}

/* Messages of 0..40 KiB through 4 chunks of 4 KiB, sender and receiver
 * copying at the same time; chunks never mix two messages. */
static void test_pipe_stress(void **state)
{
	pipe_test_t *t = shared_alloc(sizeof(*t));
	pthread_t th;
	void *ret;
	pid_t pid;

	t->nmsg = getenv("IBX_TEST_QUICK") ? 2000 : 20000;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(pipe_writer(t));
	assert_int_equal(pipe_reader(t), 0);
	assert_int_equal(wait_child(pid), 0);
	assert_true(atomic_load(&t->ring_switches) > 0);

	/* and between threads, for TSan */
	memset(t, 0, sizeof(*t));
	t->nmsg = getenv("IBX_TEST_QUICK") ? 1000 : 5000;
	assert_int_equal(pthread_create(&th, NULL, pipe_writer_thread, t), 0);
	assert_int_equal(pipe_reader(t), 0);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_int_equal((intptr_t)ret, 0);
	munmap(t, sizeof(*t));
}

/* A chunk that claims more than the message has left, or names a next
 * slot outside the pipe, is refused. */
static void test_pipe_corrupt(void **state)
{
	pipe_test_t *t = shared_alloc(sizeof(*t));
	ibx_shm_pipe_t tx, rx;
	uint8_t buf[8192];
	ibx_request_t rq = {.buf = buf};

	for (int next_bad = 0; next_bad <= 1; next_bad++) {
		memset(t, 0, sizeof(*t));
		ibx_shm_pipe_init(&tx, t->hdrs, t->data, 4096, 4, &t->ack);
		ibx_shm_pipe_init(&rx, t->hdrs, t->data, 4096, 4, &t->ack);
		memset(buf, 1, sizeof(buf));
		assert_int_equal(ibx_shm_pipe_push(&tx, &rq, 0, 3000, 0), 3000);
		if (next_bad)
			t->hdrs[0].next = 4;
		assert_int_equal(ibx_shm_pipe_pull(&rx, &rq, 0, next_bad ? 3000 : 100), (size_t)-1);
	}
	munmap(t, sizeof(*t));
}

/* The sender's ring: a switch waits for an empty pipe, a ring of 2 lets
 * the sender only 2 chunks ahead and uses slots 0 and 1, and the receiver
 * follows the chain whatever the ring. */
static void test_pipe_ring_switch(void **state)
{
	pipe_test_t *t = shared_alloc(sizeof(*t));
	static uint8_t in[4 * 4096], out[4 * 4096];
	ibx_request_t rin = {.buf = in}, rout = {.buf = out};
	ibx_shm_pipe_t tx, rx;

	ibx_shm_pipe_init(&tx, t->hdrs, t->data, 4096, 4, &t->ack);
	ibx_shm_pipe_init(&rx, t->hdrs, t->data, 4096, 4, &t->ack);
	tx.tune.small = 2;
	tx.tune.decided = true;
	tx.tune.want = IBX_SHM_RING_SMALL;

	msg_fill(1, in, sizeof(in));
	assert_int_equal(ibx_shm_pipe_push(&tx, &rin, 0, 2 * 4096, 0), 2 * 4096);
	assert_int_equal(tx.ring, 2);
	assert_int_equal(ibx_shm_pipe_push(&tx, &rin, 2 * 4096, 4096, 2 * 4096), 0); /* full */
	assert_int_equal(atomic_load(&t->hdrs[2].seq), 0);			     /* untouched */
	memset(out, 0, sizeof(out));
	assert_int_equal(ibx_shm_pipe_pull(&rx, &rout, 0, 2 * 4096), 2 * 4096);
	assert_memory_equal(in, out, 2 * 4096);

	/* back to all 4: the pipe is empty, the switch happens at once */
	tx.tune.want = IBX_SHM_RING_LARGE;
	msg_fill(2, in, sizeof(in));
	assert_int_equal(ibx_shm_pipe_push(&tx, &rin, 0, sizeof(in), 0), sizeof(in));
	assert_int_equal(tx.ring, 4);
	assert_int_equal(ibx_shm_pipe_pull(&rx, &rout, 0, sizeof(in)), sizeof(in));
	assert_memory_equal(in, out, sizeof(in));

	/* not while a chunk waits: the ring stays until the receiver drained */
	msg_fill(3, in, sizeof(in));
	assert_int_equal(ibx_shm_pipe_push(&tx, &rin, 0, 4096, 0), 4096);
	tx.tune.want = IBX_SHM_RING_SMALL;
	assert_int_equal(ibx_shm_pipe_push(&tx, &rin, 4096, 4096, 4096), 4096);
	assert_int_equal(tx.ring, 4);
	assert_int_equal(ibx_shm_pipe_pull(&rx, &rout, 0, 2 * 4096), 2 * 4096);
	assert_int_equal(ibx_shm_pipe_push(&tx, &rin, 2 * 4096, 2 * 4096, 2 * 4096), 2 * 4096);
	assert_int_equal(tx.ring, 2);
	assert_int_equal(ibx_shm_pipe_pull(&rx, &rout, 2 * 4096, 2 * 4096), 2 * 4096);
	assert_memory_equal(in, out, sizeof(in));
	munmap(t, sizeof(*t));
}

/* ---- tests: segments ------------------------------------------------------- */

static const ibx_shm_geom_t test_geom = {.ring_slots = 64, .pipe_chunks = 4, .pipe_chunk = 8192};

static int count_prefix(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

static void test_geom_check(void **state)
{
	ibx_shm_geom_t g = test_geom;
	ibx_shm_area_layout_t l;

	assert_int_equal(ibx_shm_geom_check(&g), IBX_OK);
	assert_int_equal(ibx_shm_area_layout(&g, &l), IBX_OK);
	assert_int_equal(l.data_off % 4096, 0);
	assert_true(l.size >= l.data_off + 4 * 8192);
	g.ring_slots = 100;
	assert_int_equal(ibx_shm_geom_check(&g), IBX_ERR_INVALID_PARAM);
	g = test_geom;
	g.pipe_chunks = 1;
	assert_int_equal(ibx_shm_geom_check(&g), IBX_ERR_INVALID_PARAM);
	g = test_geom;
	g.pipe_chunk = 5000;
	assert_int_equal(ibx_shm_geom_check(&g), IBX_ERR_INVALID_PARAM);
}

/* Rank 0 creates its segment (areas for ranks 1 and 2); a forked "rank 1"
 * attaches and sends through its ring; after unlink nothing is left in
 * /dev/shm while both mappings still work. */
static void test_seg_lifecycle(void **state)
{
	const int peers[] = {1, 2};
	char jobid[64], prefix[96];
	ibx_shm_seg_t seg, bad;
	ibx_shm_area_t a;
	ibx_shm_rx_t rx;
	ibx_shm_slot_t *h;
	int to_parent[2], to_child[2];
	char c;
	pid_t pid;

	snprintf(jobid, sizeof(jobid), "utest%d", (int)getpid());
	snprintf(prefix, sizeof(prefix), "ibx-%s-", jobid);
	assert_int_equal(ibx_shm_seg_create("/dev/shm", jobid, 0, peers, 2, &test_geom, &seg),
			 IBX_OK);
	assert_int_equal(count_prefix("/dev/shm", prefix), 1);
	assert_int_equal(ibx_shm_seg_area_index(&seg, 1), 0);
	assert_int_equal(ibx_shm_seg_area_index(&seg, 2), 1);
	assert_int_equal(ibx_shm_seg_area_index(&seg, 0), -1);
	/* a second create of the same name (live creator) is refused */
	assert_int_not_equal(ibx_shm_seg_create("/dev/shm", jobid, 0, peers, 2, &test_geom, &bad),
			     IBX_OK);
	/* attach checks owner rank, pid and size */
	assert_int_equal(ibx_shm_seg_attach(seg.path, 3, getpid(), seg.size, &bad),
			 IBX_ERR_CORRUPT);
	assert_int_equal(ibx_shm_seg_attach(seg.path, 0, getpid() + 1, seg.size, &bad),
			 IBX_ERR_CORRUPT);
	assert_int_equal(ibx_shm_seg_attach(seg.path, 0, getpid(), seg.size + 4096, &bad),
			 IBX_ERR_CORRUPT);

	assert_int_equal(pipe(to_parent), 0);
	assert_int_equal(pipe(to_child), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		ibx_shm_seg_t s;
		ibx_shm_area_t ca;
		ibx_shm_tx_t tx;
		ibx_shm_ack_t dummy;

		if (ibx_shm_seg_attach(seg.path, 0, getppid(), seg.size, &s) != IBX_OK)
			_exit(1);
		if (ibx_shm_seg_area_index(&s, 1) != 0)
			_exit(2);
		/* attached: the owner may unlink now */
		if (write(to_parent[1], "a", 1) != 1)
			_exit(3);
		if (read(to_child[0], &c, 1) != 1) /* wait for the unlink */
			_exit(4);
		ibx_shm_seg_area(&s, 0, &ca);
		memset(&dummy, 0, sizeof(dummy));
		ibx_shm_tx_init(&tx, ca.slots, s.hdr->geom.ring_slots, &dummy);
		if (!ibx_shm_tx_send(&tx, IBX_SHM_PKT_EAGER, 0, 42, "hello from rank 1", 18))
			_exit(5);
		ibx_shm_seg_detach(&s); /* not the owner: does not unlink */
		_exit(0);
	}
	assert_int_equal(read(to_parent[0], &c, 1), 1);
	assert_int_equal(ibx_shm_seg_unlink(&seg), IBX_OK);
	assert_int_equal(count_prefix("/dev/shm", prefix), 0);
	assert_int_equal(ibx_shm_seg_unlink(&seg), IBX_OK); /* idempotent */
	assert_int_equal(write(to_child[1], "u", 1), 1);
	assert_int_equal(wait_child(pid), 0);
	close(to_parent[0]);
	close(to_parent[1]);
	close(to_child[0]);
	close(to_child[1]);

	ibx_shm_seg_area(&seg, 0, &a);
	ibx_shm_rx_init(&rx, a.slots, 64, a.ack);
	h = ibx_shm_rx_peek(&rx);
	assert_non_null(h);
	assert_int_equal(h->h.tag, 42);
	assert_string_equal((const char *)h->h.data, "hello from rank 1");
	ibx_shm_seg_detach(&seg);

	/* an owner that detaches without unlinking (error paths) unlinks */
	assert_int_equal(ibx_shm_seg_create("/dev/shm", jobid, 5, peers, 2, &test_geom, &seg),
			 IBX_OK);
	assert_int_equal(count_prefix("/dev/shm", prefix), 1);
	ibx_shm_seg_detach(&seg);
	assert_int_equal(count_prefix("/dev/shm", prefix), 0);
}

/* Creates a segment in @dir from a grandchild that is then killed, its
 * parent (the "launcher") exiting too: a job that died between create and
 * unlink. */
static void make_stranded(const char *dir, const char *jobid, int rank)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		pid_t gc = fork();
		int status;

		if (gc < 0)
			_exit(1);
		if (gc == 0) {
			const int peers[] = {rank + 1};
			ibx_shm_seg_t s;

			if (ibx_shm_seg_create(dir, jobid, rank, peers, 1, &test_geom, &s))
				_exit(1);
			raise(SIGKILL);
			_exit(2);
		}
		if (waitpid(gc, &status, 0) != gc || !WIFSIGNALED(status))
			_exit(3);
		_exit(0);
	}
	assert_int_equal(wait_child(pid), 0);
}

/* Alive, dead, and a zombie nobody reaps (which counts as dead). */
static void test_pid_alive(void **state)
{
	pid_t pid;
	int i;

	assert_true(ibx_pid_alive(getpid()));
	assert_false(ibx_pid_alive(0));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	/* not reaped yet: a zombie once it has exited */
	for (i = 0; i < 10000 && ibx_pid_alive(pid); i++)
		usleep(1000);
	assert_false(ibx_pid_alive(pid));
	assert_int_equal(wait_child(pid), 0);
	assert_false(ibx_pid_alive(pid));
}

static char sweep_dir[64];

static void test_sweep(void **state)
{
	char path[PATH_MAX];
	int fd, to_parent[2], to_child[2];
	char c;
	pid_t live;

	snprintf(sweep_dir, sizeof(sweep_dir), "/dev/shm/ibxtest.XXXXXX");
	assert_non_null(mkdtemp(sweep_dir));

	/* stranded by a dead job: swept */
	make_stranded(sweep_dir, "deadjob", 0);
	make_stranded(sweep_dir, "deadjob", 1);
	assert_int_equal(count_prefix(sweep_dir, "ibx-deadjob-"), 2);

	/* creator alive: kept */
	assert_int_equal(pipe(to_parent), 0);
	assert_int_equal(pipe(to_child), 0);
	live = fork();
	assert_true(live >= 0);
	if (live == 0) {
		const int peers[] = {1};
		ibx_shm_seg_t s;

		if (ibx_shm_seg_create(sweep_dir, "livejob", 0, peers, 1, &test_geom, &s))
			_exit(1);
		close(to_child[1]);
		if (write(to_parent[1], "c", 1) != 1)
			_exit(2);
		/* until the parent closes its end, then die without unlinking */
		while (read(to_child[0], &c, 1) > 0)
			;
		raise(SIGKILL);
	}
	close(to_child[0]);
	assert_int_equal(read(to_parent[0], &c, 1), 1);

	/* no magic yet (a creator between open and header): kept */
	snprintf(path, sizeof(path), "%s/ibx-halfjob-0", sweep_dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 65536), 0);
	close(fd);
	/* not ours by name: kept */
	snprintf(path, sizeof(path), "%s/other-file", sweep_dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);

	assert_int_equal(ibx_shm_sweep(sweep_dir), 2);
	assert_int_equal(count_prefix(sweep_dir, "ibx-deadjob-"), 0);
	assert_int_equal(count_prefix(sweep_dir, "ibx-livejob-"), 1);
	assert_int_equal(count_prefix(sweep_dir, "ibx-halfjob-"), 1);
	assert_int_equal(count_prefix(sweep_dir, "other-file"), 1);

	/* the live creator dies, but its launcher (this process) lives: the
	 * job may still be starting up, so the file stays (the launcher's
	 * own sweep is the backstop) */
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
	assert_int_equal(wait_child(live), 128 + SIGKILL);
	assert_int_equal(ibx_shm_sweep(sweep_dir), 0);
	assert_int_equal(count_prefix(sweep_dir, "ibx-livejob-"), 1);

	/* a stranded file with the very name a new segment wants is replaced */
	make_stranded(sweep_dir, "reused", 3);
	{
		const int peers[] = {4};
		ibx_shm_seg_t s;

		assert_int_equal(
		    ibx_shm_seg_create(sweep_dir, "reused", 3, peers, 1, &test_geom, &s), IBX_OK);
		assert_int_equal(s.hdr->owner_pid, getpid());
		ibx_shm_seg_detach(&s);
	}
	assert_int_equal(count_prefix(sweep_dir, "ibx-reused-"), 0);

	snprintf(path, sizeof(path), "%s/ibx-livejob-0", sweep_dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/ibx-halfjob-0", sweep_dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/other-file", sweep_dir);
	unlink(path);
	assert_int_equal(rmdir(sweep_dir), 0);
}

/* ---- tests: CMA ------------------------------------------------------------ */

static void test_cma(void **state)
{
	enum { N = 600 }; /* more iovecs than one batch */
	static uint8_t remote[N * 16];
	static uint8_t local[N * 16];
	struct iovec iov[N];
	int to_child[2], to_parent[2];
	char c;
	pid_t pid;
	ibx_status_t st;

	for (size_t i = 0; i < sizeof(remote); i++)
		remote[i] = (uint8_t)(i * 7);
	assert_int_equal(pipe(to_child), 0);
	assert_int_equal(pipe(to_parent), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* the child's copy changes: the parent must read the child's */
		for (size_t i = 0; i < sizeof(remote); i++)
			remote[i] = (uint8_t)(i * 13 + 1);
		if (write(to_parent[1], "r", 1) != 1)
			_exit(1);
		if (read(to_child[0], &c, 1) != 1)
			_exit(2);
		/* the parent wrote i * 3 */
		for (size_t i = 0; i < sizeof(remote); i++)
			if (remote[i] != (uint8_t)(i * 3))
				_exit(3);
		_exit(0);
	}
	assert_int_equal(read(to_parent[0], &c, 1), 1);
	/* gather list of N pieces of varying length, some empty */
	size_t off = 0;
	for (int i = 0; i < N; i++) {
		size_t len = (size_t)(i % 5) * 8;

		iov[i].iov_base = local + off;
		iov[i].iov_len = len;
		off += len;
	}
	st = ibx_shm_cma_xfer(pid, iov, N, (uint64_t)(uintptr_t)remote, false);
	if (st == IBX_ERR_UNSUPPORTED) {
		kill(pid, SIGKILL);
		wait_child(pid);
		skip(); /* ptrace rules refuse CMA here */
	}
	assert_int_equal(st, IBX_OK);
	for (size_t i = 0; i < off; i++)
		assert_int_equal(local[i], (uint8_t)(i * 13 + 1));
	for (size_t i = 0; i < sizeof(local); i++)
		local[i] = (uint8_t)(i * 3);
	iov[0].iov_base = local;
	iov[0].iov_len = sizeof(local);
	assert_int_equal(ibx_shm_cma_xfer(pid, iov, 1, (uint64_t)(uintptr_t)remote, true), IBX_OK);
	/* a bad remote address */
	assert_int_equal(ibx_shm_cma_xfer(pid, iov, 1, 16, false), IBX_ERR_REMOTE_ACCESS);
	assert_int_equal(write(to_child[1], "w", 1), 1);
	assert_int_equal(wait_child(pid), 0);
	/* the process is gone */
	assert_int_equal(ibx_shm_cma_xfer(pid, iov, 1, (uint64_t)(uintptr_t)remote, false),
			 IBX_ERR_UNREACHABLE);
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pkt_slots),
	    cmocka_unit_test(test_ring_full_and_wrap),
	    cmocka_unit_test(test_ring_no_stale_full),
	    cmocka_unit_test(test_ring_stress_fork),
	    cmocka_unit_test(test_ring_stress_threads),
	    cmocka_unit_test(test_pipe_stress),
	    cmocka_unit_test(test_pipe_corrupt),
	    cmocka_unit_test(test_pipe_ring_switch),
	    cmocka_unit_test(test_geom_check),
	    cmocka_unit_test(test_seg_lifecycle),
	    cmocka_unit_test(test_pid_alive),
	    cmocka_unit_test(test_sweep),
	    cmocka_unit_test(test_cma),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
