/*
 * dt_xfer.h — typed messages: tagged sends and receives of (buffer, count,
 * datatype) that move the data without a whole-message pack buffer, by one
 * of the transfer schemes of [Wu03] chosen per message (engine-internal;
 * mpi-lite's point-to-point and ibtest use it).
 *
 * A typed request is an ordinary request whose `dt` is set: `buf` is the
 * user buffer's origin, `buflen` the packed size (count × type size), and
 * every place that moves bytes of it goes through the cursor instead of
 * memcpy (ibx_dt_req_in / ibx_dt_req_out below):
 *
 *   size ≤ the path's eager limit   the sender packs straight into the
 *                                   path's eager buffer (ring slots, cell,
 *                                   bounce buffer); the receiver unpacks
 *                                   from it ([Wu03] §7.1, no extra copy)
 *   rendezvous on shared memory     BC-SPUP twin: the sender packs each pipe
 *                                   chunk in place, the receiver unpacks it
 *                                   (two copies, like a contiguous message,
 *                                   overlapped by the pipe); p-rrs and
 *                                   multi-w twins by CMA with block lists
 *                                   (core/shm_lf/shm_rndv.c)
 *   rendezvous on verbs             per message, one of generic, bc-spup,
 *                                   rwg-up, p-rrs, multi-w
 *                                   (core/qp/rndv_dt.c has the protocols)
 *
 * The scheme: IBX_DT_SCHEME forces one (auto by default); `auto` decides
 * per message from the block statistics of both sides (ibx_dt_stats) and
 * the size, using the cost model of dt_select.c. IBX_LOG=info names the
 * scheme the first message of each (type, size class) took, and why.
 */
#ifndef IBX_DT_XFER_H
#define IBX_DT_XFER_H

#include "dtype.h"
#include "ibx_int.h"

/* ibx_dt_scheme_t, the scheme numbers, is in ibx_int.h (the paths name
 * what they can do with it). */

/* "auto", "generic", "bc-spup", "rwg-up", "p-rrs", "multi-w". */
const char *ibx_dt_scheme_name(ibx_dt_scheme_t s);
/* IBX_ERR_INVALID_PARAM for an unknown name. */
ibx_status_t ibx_dt_scheme_parse(const char *name, ibx_dt_scheme_t *s_p);
/* Checks IBX_DT_SCHEME (logs and returns IBX_ERR_INVALID_PARAM if it names
 * no scheme) and sets up the context's typed messaging; mpi-lite calls it
 * at MPI_Init. Without it, the first typed message sets up. */
ibx_status_t ibx_dt_xfer_init(ibx_ctx_t *ctx);
/* Forces @s for the context's later messages (AUTO: back to the selector);
 * IBX_DT_SCHEME sets it at init. */
ibx_status_t ibx_dt_scheme_set(ibx_ctx_t *ctx, ibx_dt_scheme_t s);
ibx_dt_scheme_t ibx_dt_scheme_get(const ibx_ctx_t *ctx);
/* Typed rendezvous messages this process received by scheme @s (eager
 * ones, packed straight into the path's buffers, are not counted). */
uint64_t ibx_dt_scheme_count(const ibx_ctx_t *ctx, ibx_dt_scheme_t s);

/* Typed forms of ibx_tag_send / ibx_tag_recv / ibx_tag_mrecv: @count
 * elements of committed @dt at @buf. The type must stay alive and
 * unchanged until the request completes (the caller holds a reference). A
 * receive type whose blocks overlap is refused (IBX_ERR_INVALID_PARAM):
 * unpacking into it would be order-dependent. */
ibx_status_t ibx_tag_send_dt(ibx_ctx_t *ctx, int dest, const void *buf, int64_t count,
			     const ibx_dt_t *dt, ibx_tag_t tag, unsigned flags, ibx_request_t *req);
ibx_status_t ibx_tag_recv_dt(ibx_ctx_t *ctx, int src, void *buf, int64_t count, const ibx_dt_t *dt,
			     ibx_tag_t tag, ibx_tag_t mask, ibx_request_t *req);
ibx_status_t ibx_tag_mrecv_dt(ibx_ctx_t *ctx, ibx_tag_msg_t *msg, void *buf, int64_t count,
			      const ibx_dt_t *dt, ibx_request_t *req);

/* The paths reach a typed request's bytes through req->dt (ibx_int.h:
 * ibx_req_copy_out / ibx_req_copy_in, and the ops' iov and choose). */

#endif /* IBX_DT_XFER_H */
