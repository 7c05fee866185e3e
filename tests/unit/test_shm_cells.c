/*
 * test_shm_cells.c — the eager cells of core/shm_lf (shm_int.h, "eager
 * cells") with the slot ring they ride on, without an ibx context: a
 * writer sends a stream of messages, each either through a cell (one-slot
 * CELL header in the ring, payload in the next cell) or, when every cell
 * is full or the message is short, through slots, as shm_ring.c does; the
 * reader must get every message in order with the right bytes, and the
 * writer must have found the cells full at times (a small cell ring). Once
 * between two processes over a shared mapping, once between two threads
 * so that ThreadSanitizer follows the release/acquire pairs.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm_lf/shm_int.h"

#define SLOTS	  64
#define NCELLS	  4
#define CELL_SIZE 2048
#define CELL_MIN  100 /* longer messages try a cell first */

typedef struct cells_test {
	ibx_shm_slot_t slots[SLOTS];
	ibx_shm_ack_t ack;
	uint8_t cells[NCELLS][CELL_SIZE];
	uint64_t nmsg;
	_Atomic int cells_were_full;
} cells_test_t;

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* 0..CELL_SIZE bytes, mostly more than CELL_MIN */
static size_t msg_len(uint64_t i)
{
	uint64_t h = mix(i + 11);

	return h % 7 == 0 ? (size_t)(h >> 12) % (CELL_MIN + 1)
			  : (size_t)(h >> 20) % (CELL_SIZE + 1);
}

static uint8_t msg_byte(uint64_t i, size_t j)
{
	return (uint8_t)(mix(i * 977 + j / 8) >> (j % 8 * 8));
}

static void relax(unsigned *spins)
{
	if (++*spins % 64 == 0)
		sched_yield();
}

static int writer(cells_test_t *t)
{
	static uint8_t buf[CELL_SIZE];
	ibx_shm_tx_t tx;
	ibx_shm_cells_t c;
	unsigned spins = 0;

	ibx_shm_tx_init(&tx, t->slots, SLOTS, &t->ack);
	ibx_shm_cells_init(&c, &t->cells[0][0], CELL_SIZE, NCELLS, &t->ack);
	for (uint64_t i = 0; i < t->nmsg; i++) {
		size_t len = msg_len(i);

		for (size_t j = 0; j < len; j++)
			buf[j] = msg_byte(i, j);
		for (;;) {
			uint8_t *cell;

			if (len > CELL_MIN && ibx_shm_tx_room(&tx, 1)) {
				cell = ibx_shm_cell_claim(&c);
				if (cell) {
					memcpy(cell, buf, len);
					ibx_shm_tx_write_hdr(&tx, IBX_SHM_PKT_CELL, i, len);
					ibx_shm_cell_filled(&c);
					break;
				}
				atomic_store(&t->cells_were_full, 1);
			}
			/* short, or every cell full: slots, in the same order */
			if (ibx_shm_tx_send(&tx, IBX_SHM_PKT_EAGER, 0, i, buf, len))
				break;
			relax(&spins);
		}
	}
	return 0;
}

static int reader(cells_test_t *t)
{
	static uint8_t buf[SLOTS * 64];
	ibx_shm_rx_t rx;
	ibx_shm_cells_t c;
	unsigned spins = 0;
	uint64_t i = 0;

	ibx_shm_rx_init(&rx, t->slots, SLOTS, &t->ack);
	ibx_shm_cells_init(&c, &t->cells[0][0], CELL_SIZE, NCELLS, &t->ack);
	while (i < t->nmsg) {
		ibx_shm_slot_t *h;
		int n = 0;

		while ((h = ibx_shm_rx_peek(&rx))) {
			const uint8_t *data;
			size_t len = msg_len(i);

			if (!ibx_shm_rx_valid(&rx, h) || h->h.tag != i || h->h.len != len)
				return 10;
			if (h->h.type == IBX_SHM_PKT_CELL) {
				if (h->h.nslots != 1 || len <= CELL_MIN)
					return 11;
				data = ibx_shm_cell_peek(&c);
			} else {
				ibx_shm_rx_gather(&rx, h, buf);
				data = buf;
			}
			for (size_t j = 0; j < len; j++)
				if (data[j] != msg_byte(i, j))
					return 12;
			if (h->h.type == IBX_SHM_PKT_CELL)
				ibx_shm_cell_next(&c);
			ibx_shm_rx_advance(&rx, h);
			i++;
			n++;
		}
		if (n) {
			/* once per poll, as shm_ring.c does */
			ibx_shm_rx_release(&rx);
			ibx_shm_cells_release(&c);
		} else {
			relax(&spins);
		}
	}
	return 0;
}

static void *writer_thread(void *arg)
{
	return (void *)(intptr_t)writer(arg);
}

static void test_cells_processes(void **state)
{
	cells_test_t *t =
	    mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status;
	pid_t pid;

	assert_true(t != MAP_FAILED);
	t->nmsg = getenv("IBX_TEST_QUICK") ? 5000 : 50000;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(writer(t));
	assert_int_equal(reader(t), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(atomic_load(&t->cells_were_full));
	munmap(t, sizeof(*t));
}

static void test_cells_threads(void **state)
{
	cells_test_t *t = calloc(1, sizeof(*t));
	pthread_t th;
	void *ret;

	assert_non_null(t);
	t->nmsg = getenv("IBX_TEST_QUICK") ? 2000 : 10000;
	assert_int_equal(pthread_create(&th, NULL, writer_thread, t), 0);
	assert_int_equal(reader(t), 0);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_int_equal((intptr_t)ret, 0);
	free(t);
}

/* The geometry: cells must fit the checks and the area layout. */
static void test_cells_geometry(void **state)
{
	ibx_shm_geom_t g = {.ring_slots = 64, .pipe_chunks = 4, .pipe_chunk = 8192};
	ibx_shm_area_layout_t l0, l;

	assert_int_equal(ibx_shm_area_layout(&g, &l0), IBX_OK);
	g.cells = 8;
	g.cell_size = 8192;
	assert_int_equal(ibx_shm_area_layout(&g, &l), IBX_OK);
	assert_true(l.cells_off % 4096 == 0 && l.cells_off >= l.data_off + 4 * 8192);
	assert_int_equal(l.size, l0.size + 8 * 8192);
	g.cell_size = 100; /* not a multiple of 64 */
	assert_int_equal(ibx_shm_geom_check(&g), IBX_ERR_INVALID_PARAM);
	g.cell_size = 0; /* cells of nothing */
	assert_int_equal(ibx_shm_geom_check(&g), IBX_ERR_INVALID_PARAM);
	g.cells = 2000;
	g.cell_size = 64;
	assert_int_equal(ibx_shm_geom_check(&g), IBX_ERR_INVALID_PARAM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cells_processes),
	    cmocka_unit_test(test_cells_threads),
	    cmocka_unit_test(test_cells_geometry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
