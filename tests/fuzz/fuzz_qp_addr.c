/*
 * fuzz_qp_addr.c — libFuzzer target for ibx_qp_addr_unpack(), the parser
 * of the 32-byte queue-pair address a peer publishes (core/qp/qp.c; it
 * travels in the verbs path's modex record and in rdma_cm's private data).
 *
 * An accepted record must pack back to itself, except for what the parser
 * ignores: the top byte of the 24-bit QP number and PSN, and the reserved
 * bytes 14-15.
 *
 *   make fuzz && build/fuzz/fuzz_qp_addr $(mktemp -d) tests/fuzz/corpus/fuzz_qp_addr
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qp/qp.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An InfiniBand address (LID) and a RoCE one (GID), as ibx_qp_addr_pack
 * writes them. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	ibx_qp_addr_t a = {.qpn = 0x1234,
			   .psn = 0xabcdef,
			   .lid = 7,
			   .mtu = IBV_MTU_4096,
			   .link_layer = IBV_LINK_LAYER_INFINIBAND};
	uint8_t out[IBX_QP_ADDR_WIRE_LEN];

	if (!fuzz_seed_dir())
		return 0;
	ibx_qp_addr_pack(&a, out);
	fuzz_seed_write("ib", out, sizeof(out));
	a.lid = 0;
	a.mtu = IBV_MTU_1024;
	a.link_layer = IBV_LINK_LAYER_ETHERNET;
	a.gid_valid = 1;
	memcpy(a.gid.raw, "\xfe\x80\0\0\0\0\0\0\x02\x11\x22\xff\xfe\x33\x44\x55", 16);
	ibx_qp_addr_pack(&a, out);
	fuzz_seed_write("roce", out, sizeof(out));
	exit(0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *in, want[IBX_QP_ADDR_WIRE_LEN], back[IBX_QP_ADDR_WIRE_LEN];
	ibx_qp_addr_t a, b;

	if (size != IBX_QP_ADDR_WIRE_LEN)
		return 0;
	in = malloc(size); /* exactly the record: ASan sees a read beyond it */
	if (!in)
		return 0;
	memcpy(in, data, size);
	if (ibx_qp_addr_unpack(in, &a) == IBX_OK) {
		memcpy(want, in, sizeof(want));
		want[4] = want[8] = want[14] = want[15] = 0;
		ibx_qp_addr_pack(&a, back);
		FUZZ_FAIL_IF(
		    memcmp(back, want, sizeof(want)) || ibx_qp_addr_unpack(back, &b) != IBX_OK ||
			memcmp(a.gid.raw, b.gid.raw, sizeof(a.gid.raw)) || a.qpn != b.qpn ||
			a.psn != b.psn || a.lid != b.lid || a.mtu != b.mtu ||
			a.link_layer != b.link_layer || a.gid_valid != b.gid_valid,
		    "accepted address does not pack back to itself");
		FUZZ_FAIL_IF(a.qpn > 0xffffff || a.psn > 0xffffff || a.gid_valid > 1,
			     "accepted address with out-of-range fields");
	}
	free(in);
	return 0;
}
