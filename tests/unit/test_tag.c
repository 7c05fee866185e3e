/*
 * test_tag.c — the tag-matching layer (core/tag.c) through a real
 * singleton context: a process started alone is a job of size 1 whose only
 * peer is itself, so every send goes through the self path and the
 * posted/unexpected queues.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ibx_int.h"
#include "shm_lf/shm_config.h"

static ibx_ctx_t *ctx;

static int setup(void **state)
{
	/* make sure no launcher variables leak into the singleton */
	unsetenv("PMIX_NAMESPACE");
	unsetenv("PMIX_SERVER_URI41");
	unsetenv("PMIX_SERVER_URI4");
	unsetenv("PMIX_SERVER_URI3");
	unsetenv("PMIX_SERVER_URI2");
	unsetenv("PMIX_SERVER_URI21");
	unsetenv("SLURM_STEP_NUM_TASKS");
	unsetenv("PMI_FD");
	unsetenv("PMI_RANK");
	return ibx_init(NULL, &ctx) == IBX_OK ? 0 : -1;
}

static int teardown(void **state)
{
	return ibx_finalize(ctx) == IBX_OK ? 0 : -1;
}

static void test_singleton(void **state)
{
	assert_int_equal(ibx_rank(ctx), 0);
	assert_int_equal(ibx_size(ctx), 1);
	assert_int_equal(ibx_local_size(ctx), 1);
	assert_int_equal(ibx_local_ranks(ctx)[0], 0);
	assert_string_equal(ibx_peer_path_name(ctx, 0), "self");
	assert_null(ibx_peer_path_name(ctx, 1));
}

static void test_expected_and_unexpected(void **state)
{
	char out[64] = "hello", in[64];
	ibx_request_t s = {.cb = NULL}, r = {.cb = NULL};

	/* posted first */
	memset(in, 0, sizeof(in));
	assert_int_equal(ibx_tag_recv(ctx, 0, in, sizeof(in), 7, IBX_TAG_MASK_ALL, &r),
			 IBX_INPROGRESS);
	assert_int_equal(ibx_tag_send(ctx, 0, out, 6, 7, 0, &s), IBX_OK);
	assert_int_equal(ibx_wait(ctx, &r), IBX_OK);
	assert_string_equal(in, "hello");
	assert_int_equal(r.length, 6);
	assert_int_equal(r.source, 0);
	assert_int_equal(r.tag, 7);

	/* unexpected first, large (heap copy) */
	size_t big = 1 << 20;
	char *b1 = malloc(big), *b2 = calloc(1, big);
	for (size_t i = 0; i < big; i++)
		b1[i] = (char)(i * 7);
	assert_int_equal(ibx_tag_send(ctx, 0, b1, big, 8, 0, &s), IBX_OK);
	assert_int_equal(ibx_tag_recv(ctx, IBX_ANY_SOURCE, b2, big, 8, IBX_TAG_MASK_ALL, &r),
			 IBX_OK);
	assert_true(r.completed);
	assert_memory_equal(b1, b2, big);
	free(b1);
	free(b2);
}

static void test_order_and_wildcards(void **state)
{
	ibx_request_t s = {.cb = NULL}, r[100] = {{.cb = NULL}};
	int vals[100];

	/* non-overtaking: same tag, arrival order kept */
	for (int i = 0; i < 100; i++)
		assert_int_equal(ibx_tag_send(ctx, 0, &i, sizeof(i), 42, 0, &s), IBX_OK);
	for (int i = 0; i < 100; i++) {
		/* wildcard on the low 32 bits (like MPI_ANY_TAG) */
		ibx_tag_recv(ctx, IBX_ANY_SOURCE, &vals[i], sizeof(int), 0, ~(ibx_tag_t)0xffffffff,
			     &r[i]);
		assert_int_equal(ibx_wait(ctx, &r[i]), IBX_OK);
		assert_int_equal(vals[i], i);
		assert_int_equal(r[i].tag, 42);
	}
	/* a masked-out tag must not match */
	int x = 5, y = 0;
	ibx_tag_send(ctx, 0, &x, sizeof(x), ((ibx_tag_t)2 << 32) | 1, 0, &s);
	assert_int_equal(ibx_tag_recv(ctx, 0, &y, sizeof(y), ((ibx_tag_t)3 << 32),
				      ~(ibx_tag_t)0xffffffff, &r[0]),
			 IBX_INPROGRESS);
	ibx_tag_recv(ctx, 0, &y, sizeof(y), ((ibx_tag_t)2 << 32), ~(ibx_tag_t)0xffffffff, &r[1]);
	assert_true(r[1].completed);
	assert_int_equal(y, 5);
	assert_int_equal(ibx_request_cancel(ctx, &r[0]), IBX_OK);
	assert_int_equal(r[0].status, IBX_ERR_CANCELED);
	/* cancelling a completed request is refused */
	assert_int_equal(ibx_request_cancel(ctx, &r[1]), IBX_ERR_BUSY);
}

static void test_truncation(void **state)
{
	char out[100], in[10];
	ibx_request_t s = {.cb = NULL}, r = {.cb = NULL};

	memset(out, 'a', sizeof(out));
	ibx_tag_send(ctx, 0, out, sizeof(out), 1, 0, &s);
	assert_int_equal(ibx_tag_recv(ctx, 0, in, sizeof(in), 1, IBX_TAG_MASK_ALL, &r), IBX_OK);
	assert_int_equal(r.status, IBX_ERR_TRUNCATED);
	assert_int_equal(r.length, 100);
	assert_memory_equal(in, out, sizeof(in));
	/* expected case */
	ibx_tag_recv(ctx, 0, in, sizeof(in), 2, IBX_TAG_MASK_ALL, &r);
	ibx_tag_send(ctx, 0, out, sizeof(out), 2, 0, &s);
	assert_int_equal(ibx_wait(ctx, &r), IBX_ERR_TRUNCATED);
}

static void test_sync_self(void **state)
{
	int a = 11, b = 0;
	ibx_request_t s = {.cb = NULL}, r = {.cb = NULL};

	/* a synchronous send to self completes only once matched */
	assert_int_equal(ibx_tag_send(ctx, 0, &a, sizeof(a), 9, IBX_SEND_SYNC, &s), IBX_INPROGRESS);
	for (int i = 0; i < 100; i++)
		ibx_progress(ctx);
	assert_false(s.completed);
	ibx_probe_info_t info;
	assert_int_equal(ibx_tag_probe(ctx, IBX_ANY_SOURCE, 9, IBX_TAG_MASK_ALL, &info), IBX_OK);
	assert_int_equal(info.length, sizeof(int));
	assert_int_equal(ibx_tag_recv(ctx, 0, &b, sizeof(b), 9, IBX_TAG_MASK_ALL, &r), IBX_OK);
	assert_true(s.completed);
	assert_int_equal(s.status, IBX_OK);
	assert_int_equal(b, 11);
	assert_int_equal(ibx_tag_probe(ctx, 0, 9, IBX_TAG_MASK_ALL, &info), IBX_ERR_NOT_FOUND);
}

/* Matched probe: a claimed message is invisible to receives and probes and
 * is received only through its handle, in every delivery kind (inline
 * eager, heap copy, synchronous self send). */
static void test_mprobe(void **state)
{
	size_t big = 1 << 20;
	char *b1 = malloc(big), *b2 = calloc(1, big);
	int one = 1, two = 2, got = 0, a = 33, c = 0;
	ibx_request_t s = {.cb = NULL}, ss = {.cb = NULL}, r = {.cb = NULL}, r2 = {.cb = NULL};
	ibx_probe_info_t info;
	ibx_tag_msg_t *m1, *m2, *m3;

	assert_non_null(b1);
	assert_non_null(b2);
	assert_int_equal(ibx_tag_mprobe(ctx, 0, 5, IBX_TAG_MASK_ALL, &info, &m1),
			 IBX_ERR_NOT_FOUND);
	ibx_tag_send(ctx, 0, &one, sizeof(one), 5, 0, &s);
	ibx_tag_send(ctx, 0, &two, sizeof(two), 5, 0, &s);
	assert_int_equal(ibx_tag_mprobe(ctx, IBX_ANY_SOURCE, 5, IBX_TAG_MASK_ALL, &info, &m1),
			 IBX_OK);
	assert_int_equal(info.source, 0);
	assert_int_equal(info.tag, 5);
	assert_int_equal(info.length, sizeof(int));
	/* the first message is claimed: a receive gets the second one */
	assert_int_equal(ibx_tag_recv(ctx, 0, &got, sizeof(got), 5, IBX_TAG_MASK_ALL, &r), IBX_OK);
	assert_int_equal(got, 2);
	assert_int_equal(ibx_tag_probe(ctx, 0, 5, IBX_TAG_MASK_ALL, &info), IBX_ERR_NOT_FOUND);
	/* a receive posted now stays posted: only the handle reaches message 1 */
	assert_int_equal(ibx_tag_recv(ctx, 0, &c, sizeof(c), 5, IBX_TAG_MASK_ALL, &r2),
			 IBX_INPROGRESS);
	assert_int_equal(ibx_tag_mrecv(ctx, m1, &got, sizeof(got), &r), IBX_OK);
	assert_int_equal(got, 1);
	assert_int_equal(r.status, IBX_OK);
	assert_int_equal(r.source, 0);
	assert_int_equal(r.tag, 5);
	assert_false(r2.completed);
	assert_int_equal(ibx_request_cancel(ctx, &r2), IBX_OK);
	/* received already: the handle is spent */
	assert_int_equal(ibx_tag_mrecv(ctx, m1, &got, sizeof(got), &r), IBX_ERR_INVALID_PARAM);

	/* a large (heap-copied) message, claimed through a tag wildcard */
	for (size_t i = 0; i < big; i++)
		b1[i] = (char)(i * 13);
	ibx_tag_send(ctx, 0, b1, big, ((ibx_tag_t)7 << 32) | 3, 0, &s);
	assert_int_equal(
	    ibx_tag_mprobe(ctx, 0, (ibx_tag_t)7 << 32, ~(ibx_tag_t)0xffffffff, &info, &m2), IBX_OK);
	assert_int_equal(info.length, big);
	assert_int_equal(info.tag, ((ibx_tag_t)7 << 32) | 3);
	assert_int_equal(ibx_tag_mrecv(ctx, m2, b2, big, &r), IBX_OK);
	assert_memory_equal(b1, b2, big);

	/* a synchronous send to self completes when its claimed message is
	 * received, not when it is probed; truncation is reported */
	assert_int_equal(ibx_tag_send(ctx, 0, &a, sizeof(a), 9, IBX_SEND_SYNC, &ss),
			 IBX_INPROGRESS);
	assert_int_equal(ibx_tag_mprobe(ctx, 0, 9, IBX_TAG_MASK_ALL, &info, &m3), IBX_OK);
	assert_false(ss.completed);
	assert_int_equal(ibx_tag_mrecv(ctx, m3, &c, 2, &r), IBX_OK);
	assert_true(ss.completed);
	assert_int_equal(r.status, IBX_ERR_TRUNCATED);
	assert_int_equal(r.length, sizeof(int));

	/* one claimed and never received: finalize frees it (LSan) */
	ibx_tag_send(ctx, 0, b1, big, 11, 0, &s);
	assert_int_equal(ibx_tag_mprobe(ctx, 0, 11, IBX_TAG_MASK_ALL, &info, &m1), IBX_OK);

	assert_int_equal(ibx_tag_mprobe(ctx, 4, 0, 0, &info, &m1), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_tag_mprobe(ctx, 0, 0, 0, &info, NULL), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_tag_mrecv(ctx, NULL, &c, 4, &r), IBX_ERR_INVALID_PARAM);
	free(b1);
	free(b2);
}

static void test_bad_args(void **state)
{
	ibx_request_t r = {.cb = NULL};
	int x = 0;

	assert_int_equal(ibx_tag_send(ctx, 1, &x, 4, 0, 0, &r), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_tag_send(ctx, -1, &x, 4, 0, 0, &r), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_tag_send(ctx, 0, NULL, 4, 0, 0, &r), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_tag_send(ctx, 0, &x, 4, 0, 0x80, &r), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_tag_send(ctx, 0, &x, 4, 0, 0, NULL), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_tag_send(NULL, 0, &x, 4, 0, 0, &r), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_tag_recv(ctx, 3, &x, 4, 0, 0, &r), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_tag_recv(ctx, -2, &x, 4, 0, 0, &r), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_tag_recv(ctx, 0, NULL, 4, 0, 0, &r), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_tag_probe(ctx, 5, 0, 0, NULL), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_wait(ctx, NULL), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_request_cancel(NULL, &r), IBX_ERR_INVALID_PARAM);
	/* zero-length with a NULL buffer is fine */
	assert_int_equal(ibx_tag_send(ctx, 0, NULL, 0, 77, 0, &r), IBX_OK);
	assert_int_equal(ibx_tag_recv(ctx, 0, NULL, 0, 77, IBX_TAG_MASK_ALL, &r), IBX_OK);
	assert_int_equal(r.length, 0);
}

static void test_config(void **state)
{
	int64_t v;

	assert_int_equal(ibx_config_parse_size("16k", &v), IBX_OK);
	assert_int_equal(v, 16384);
	assert_int_equal(ibx_config_parse_size("4M", &v), IBX_OK);
	assert_int_equal(v, 4 << 20);
	assert_int_equal(ibx_config_parse_size("0x10", &v), IBX_OK);
	assert_int_equal(v, 16);
	assert_int_equal(ibx_config_parse_size("12q", &v), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_config_parse_size("", &v), IBX_ERR_INVALID_PARAM);
	assert_int_equal(ibx_config_parse_size("99999999999999999g", &v), IBX_ERR_OVERFLOW);
	setenv("IBX_SHM_EAGER_LIMIT", "bogus", 1);
	assert_int_equal(ibx_config_reload(), IBX_ERR_INVALID_PARAM);
	setenv("IBX_SHM_EAGER_LIMIT", "8k", 1);
	assert_int_equal(ibx_config_reload(), IBX_OK);
	assert_int_equal(ibx_shm_config()->SHM_EAGER_LIMIT, 8192);
	unsetenv("IBX_SHM_EAGER_LIMIT");
	assert_int_equal(ibx_config_reload(), IBX_OK);
	assert_string_equal(ibx_status_str(IBX_ERR_TRUNCATED), "message truncated");
}

/* The registry: set/defaulted, an empty value, a malformed log level, and
 * every linked section in the printed table. */
static void test_config_registry(void **state)
{
	const ibx_core_config_t *core = ibx_core_config();
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	unsetenv("IBX_SPIN_COUNT");
	assert_int_equal(ibx_config_reload(), IBX_OK);
	assert_false(ibx_config_is_set(&ibx_core_config_section, &core->SPIN_COUNT));
	assert_int_equal(core->SPIN_COUNT, 2000);
	setenv("IBX_SPIN_COUNT", "7", 1);
	assert_int_equal(ibx_config_reload(), IBX_OK);
	assert_true(ibx_config_is_set(&ibx_core_config_section, &core->SPIN_COUNT));
	assert_int_equal(core->SPIN_COUNT, 7);
	setenv("IBX_SPIN_COUNT", "", 1); /* empty: the default, as unset */
	assert_int_equal(ibx_config_reload(), IBX_OK);
	assert_false(ibx_config_is_set(&ibx_core_config_section, &core->SPIN_COUNT));
	assert_int_equal(core->SPIN_COUNT, 2000);
	unsetenv("IBX_SPIN_COUNT");
	setenv("IBX_LOG", "loud", 1); /* the core section's apply hook rejects it */
	assert_int_equal(ibx_config_reload(), IBX_ERR_INVALID_PARAM);
	unsetenv("IBX_LOG");
	assert_int_equal(ibx_config_reload(), IBX_OK);

	f = open_memstream(&text, &len);
	assert_non_null(f);
	ibx_config_print_markdown(f);
	fclose(f);
	assert_non_null(strstr(text, "| `IBX_SPIN_COUNT` | core | `2000` |"));
	assert_non_null(strstr(text, "| `IBX_SHM_EAGER_LIMIT` | core/shm_lf | `8k` |"));
	assert_non_null(strstr(text, "| `IBX_IB_CREDITS` | core/qp | `64` |"));
	assert_non_null(strstr(text, "error\\|warn")); /* '|' in help is escaped */
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_singleton),
	    cmocka_unit_test(test_expected_and_unexpected),
	    cmocka_unit_test(test_order_and_wildcards),
	    cmocka_unit_test(test_truncation),
	    cmocka_unit_test(test_sync_self),
	    cmocka_unit_test(test_mprobe),
	    cmocka_unit_test(test_bad_args),
	    cmocka_unit_test(test_config),
	    cmocka_unit_test(test_config_registry),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
