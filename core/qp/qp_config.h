/*
 * qp_config.h — the configuration variables of core/qp, the verbs path, one row each
 * (name without the IBX_ prefix, type, default, help), and the struct that
 * holds their values: ibx_qp_config() parses them on first use. The module
 * registers the table as its configuration section (core/config.h), so
 * `ibtest info` prints it with every other one.
 *
 * One row per line: a table reads better unwrapped.
 */
#ifndef IBX_QP_CONFIG_H
#define IBX_QP_CONFIG_H

#include "config.h"

// clang-format off
#define IBX_QP_CONFIG(X) \
	X(DEVICE, STR, "", "verbs device and port, name:port (default: the first active port)") \
	X(GID_INDEX, INT, "-1", "RoCE GID index (-1: pick the RoCEv2 IPv4-mapped GID, else the first valid one)") \
	X(IB_EAGER_LIMIT, INT, "8k", "largest message sent eagerly over verbs; larger ones use zero-copy RDMA rendezvous") \
	X(IB_RX_BUFS, INT, "512", "receive buffers pre-posted on the shared receive queue") \
	X(IB_CREDITS, INT, "64", "send credits per peer (eager messages in flight before the receiver returns credits)") \
	X(IB_INLINE, INT, "128", "largest send posted inline") \
	X(IB_SIGNAL_EVERY, INT, "16", "selective signalling: request a completion every N sends") \
	X(IB_TIMEOUT, INT, "14", "QP local ACK timeout exponent: each try waits 4.096 us * 2^N (14: 67 ms, 18: 1.07 s); a work request to a dead peer or over a broken link fails after (IB_RETRY + 1) tries, 0.54 s with the defaults") \
	X(IB_RETRY, INT, "7", "QP transport retry count (0-7): tries after the first before a work request fails, each IB_TIMEOUT long") \
	X(IB_KEEPALIVE, INT, "1000", "while waiting, probe every remote peer that has been silent for N ms with an RDMA write, so that a dead peer or a broken link is reported within N ms plus the retry budget; 0 = never") \
	X(IB_SQ_DEPTH, INT, "256", "send queue depth of each RC QP (work requests in flight per peer)") \
	X(IB_TX_BUFS, INT, "256", "registered bounce buffers for eager sends that do not fit inline") \
	X(IB_DT_SEGMENT, INT, "64k", "derived-datatype rendezvous (rwg-up, bc-spup): bytes per segment of the registered pack/unpack pools") \
	X(IB_DT_SEGMENTS, INT, "64", "derived-datatype rendezvous: segments in each of the two pools (receiver's unpack area, sender's pack slots; at most 65535), made on first use; a message finding fewer than two free gets an area registered for it alone") \
	X(IB_DT_GRANT, INT, "8", "derived-datatype rendezvous: segments one message may have in flight (at most 64)")
// clang-format on

typedef struct ibx_qp_config {
	IBX_QP_CONFIG(IBX_CONFIG_FIELD)
} ibx_qp_config_t;
IBX_CONFIG_DECLARE(ibx_qp, ibx_qp_config_t);

#endif /* IBX_QP_CONFIG_H */
