/*
 * fuzz_qp_rx.c — libFuzzer target for ibx_qp_rx_check(), the check of a
 * message a remote peer sent over the verbs path's channel before any of
 * its fields are used (core/qp/progress.c): the header (sender, type), the
 * rendezvous messages' fixed lengths (RTS, FIN, PACKED, GRANT, DONE) and a
 * CTS's trailer (segment indices, or a receive layout of the length it
 * states).
 *
 * An accepted message must have the length its type implies, checked here
 * field by field from the wire structures; the input sits in a buffer of
 * exactly its size, so a read beyond it is AddressSanitizer's to report.
 *
 *   make fuzz && build/fuzz/fuzz_qp_rx $(mktemp -d) tests/fuzz/corpus/fuzz_qp_rx
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qp/qp_int.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NRANKS 4

/* A message of @type from rank 1: header, @body of @len bytes. */
static void seed(const char *name, uint8_t type, const void *body, size_t len)
{
	uint8_t msg[sizeof(qp_hdr_t) + 512];
	qp_hdr_t h = {.type = type, .credits = 3, .src = 1, .tag = 0x1234};

	memcpy(msg, &h, sizeof(h));
	memcpy(msg + sizeof(h), body, len);
	fuzz_seed_write(name, msg, sizeof(h) + len);
}

/* A CTS of @scheme with @extra trailing bytes (indices or layout). */
static void seed_cts(const char *name, uint8_t scheme, uint8_t flags, uint16_t nseg,
		     uint32_t blob_len, size_t extra)
{
	uint8_t body[sizeof(qp_cts_t) + 256] = {0};
	qp_cts_t c = {.id = 7,
		      .rid = 9,
		      .len = 1 << 20,
		      .scheme = scheme,
		      .flags = flags,
		      .nseg = nseg,
		      .seg = 65536,
		      .blob_len = blob_len};

	memcpy(body, &c, sizeof(c));
	for (size_t i = 0; i < extra; i++)
		body[sizeof(c) + i] = (uint8_t)i;
	seed(name, QP_MSG_CTS, body, sizeof(c) + extra);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	qp_rts_t rts = {.addr = 0x7f0000001000, .len = 1 << 20, .rkey = 0x55, .id = 7};
	qp_fin_t fin = {.id = 7};

	if (!fuzz_seed_dir())
		return 0;
	seed("eager", QP_MSG_EAGER, "hello", 5);
	seed("rts", QP_MSG_RTS, &rts, sizeof(rts));
	seed("fin", QP_MSG_FIN, &fin, sizeof(fin));
	seed("grant", QP_MSG_GRANT, &fin, sizeof(fin));
	seed("packed", QP_MSG_PACKED, &rts, sizeof(rts));
	seed_cts("cts-generic", IBX_DT_SCHEME_GENERIC, 0, 0, 0, 0);
	seed_cts("cts-rwg-up", IBX_DT_SCHEME_RWG_UP, 0, 3, 0, 3 * sizeof(uint16_t));
	seed_cts("cts-multi-w", IBX_DT_SCHEME_MULTI_W, QP_CTS_LAYOUT, 0, 40, 40);
	exit(0);
}

/* What the type of an accepted message implies about its length. */
static void check_accepted(const uint8_t *in, size_t size)
{
	qp_hdr_t h;
	qp_cts_t c;
	size_t body, extra;

	FUZZ_FAIL_IF(size < sizeof(h), "accepted a message shorter than its header");
	memcpy(&h, in, sizeof(h));
	FUZZ_FAIL_IF(h.src < 0 || h.src >= NRANKS, "accepted a sender out of range");
	body = size - sizeof(h);
	switch (h.type) {
	case QP_MSG_EAGER: return;
	case QP_MSG_RTS:
	case QP_MSG_PACKED:
		FUZZ_FAIL_IF(body != sizeof(qp_rts_t), "accepted an RTS of the wrong length");
		return;
	case QP_MSG_FIN:
	case QP_MSG_GRANT:
	case QP_MSG_DONE:
		FUZZ_FAIL_IF(body != sizeof(qp_fin_t), "accepted a FIN of the wrong length");
		return;
	case QP_MSG_CTS: break;
	default: FUZZ_FAIL_IF(1, "accepted an unknown type");
	}
	FUZZ_FAIL_IF(body < sizeof(c), "accepted a short CTS");
	memcpy(&c, in + sizeof(h), sizeof(c));
	extra = body - sizeof(c);
	FUZZ_FAIL_IF(c.scheme == IBX_DT_SCHEME_AUTO || c.scheme >= IBX_DT_SCHEME_COUNT,
		     "accepted a CTS without a scheme");
	if (c.scheme == IBX_DT_SCHEME_RWG_UP || c.scheme == IBX_DT_SCHEME_BC_SPUP)
		FUZZ_FAIL_IF(c.nseg > QP_DT_GRANT_MAX || extra != c.nseg * sizeof(uint16_t),
			     "accepted a segment grant its receiver would overrun");
	else if (c.scheme == IBX_DT_SCHEME_MULTI_W)
		FUZZ_FAIL_IF(extra != ((c.flags & QP_CTS_LAYOUT) ? c.blob_len : 0),
			     "accepted a layout of another length than stated");
	else
		FUZZ_FAIL_IF(extra != 0, "accepted trailing bytes after a pack CTS");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *in = malloc(size ? size : 1); /* exactly the message */

	if (!in)
		return 0;
	memcpy(in, data, size);
	if (!ibx_qp_rx_check(in, size, NRANKS))
		check_accepted(in, size);
	free(in);
	return 0;
}
