/*
 * p2p_mprobe.c — matched probe and receive (MPI-3.1 §3.8.2-3): MPI_Mprobe,
 * MPI_Improbe, MPI_Mrecv, MPI_Imrecv and the MPI_Message handle.
 *
 * MPI_Probe followed by MPI_Recv is racy when several threads or libraries
 * receive on one communicator: another receive may take the probed message
 * first. A matched probe removes the message from matching at once; from
 * then on only the receive through its handle gets it. The engine does the
 * removal (core/tag.c):
 *
 *   MPI_Mprobe ─► ibx_tag_mprobe: the first matching unexpected message
 *                 leaves the unexpected queue for the claimed list
 *              ─► MPI_Message {comm, engine message}          (pool slot)
 *   MPI_Mrecv / MPI_Imrecv ─► ibx_tag_mrecv(message) ─► request, as a receive
 *
 * So receives and probes posted meanwhile never see it, and it is received
 * once: the handle is freed (set to MPI_MESSAGE_NULL) by the receive.
 * A probe from MPI_PROC_NULL returns MPI_MESSAGE_NO_PROC, whose receive
 * completes at once with the MPI_PROC_NULL status (§3.11).
 *
 * The message records its communicator (held until received) because
 * MPI_Mrecv takes none: it needs one to report errors and to number the
 * source. Unreceived messages are dropped at MPI_Finalize.
 */
#include "p2p_int.h"

#define MPIL_MAGIC_MSG 0x6d4d7367u /* "mMsg" */

struct mpil_message {
	uint32_t magic;
	MPI_Comm comm;	    /* NULL for MPI_MESSAGE_NO_PROC */
	ibx_tag_msg_t *msg; /* the claimed engine message */
};

struct mpil_message mpil_message_no_proc = {.magic = MPIL_MAGIC_MSG};

static mpil_pool_t msg_pool = MPIL_POOL_INIT(struct mpil_message);

static void msg_release(MPI_Message m)
{
	mpil_comm_release(m->comm);
	mpil_pool_put(&msg_pool, m);
}

void mpil_mprobe_fini(void)
{
	/* The engine freed the claimed messages (ibx_finalize); the
	 * communicators go with mpil_comm_fini. */
	mpil_pool_fini(&msg_pool, NULL);
}

/* ---- probing -------------------------------------------------------------------------- */

/* One look at the unexpected messages: a matching one is claimed into
 * *message (*flag 1) and described in @status. */
static int mprobe_once(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
		       MPI_Status *status, const char *fname)
{
	int world = mpil_source_to_world(comm, source);
	ibx_probe_info_t info;
	ibx_tag_t t, mask;
	ibx_status_t st;
	MPI_Message m;

	*flag = 0;
	mpil_recv_match(comm, tag, &t, &mask);
	/* Look before claiming: the handle is allocated only for a message
	 * that is there, and nothing progresses in between. */
	st = ibx_tag_probe(mpil_g.ctx, world, t, mask, &info);
	if (st == IBX_ERR_NOT_FOUND)
		return MPI_SUCCESS;
	if (st != IBX_OK)
		return mpil_err_ibx(comm, fname, st, false, source);
	m = mpil_pool_get(&msg_pool);
	if (!m)
		return mpil_err(comm, MPI_ERR_NO_MEM, fname, "no memory for a message handle");
	st = ibx_tag_mprobe(mpil_g.ctx, world, t, mask, &info, &m->msg);
	if (ibx_unlikely(st != IBX_OK)) {
		mpil_pool_put(&msg_pool, m);
		return mpil_err_ibx(comm, fname, st, false, source);
	}
	m->magic = MPIL_MAGIC_MSG;
	m->comm = comm;
	mpil_comm_retain(comm);
	*message = m;
	*flag = 1;
	mpil_status_set(status, mpil_comm_from_world(comm, info.source), (int)(uint32_t)info.tag,
			(MPI_Count)info.length);
	return MPI_SUCCESS;
}

static int check_mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, const char *fname)
{
	MPIL_CHECK(mpil_check_probe(source, tag, comm, fname));
	if (!message)
		return mpil_err(comm, MPI_ERR_ARG, fname, "message is NULL");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Improbe)
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
		 MPI_Status *status)
{
	static const char F[] = "MPI_Improbe";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_mprobe(source, tag, comm, message, F));
	if (!flag)
		return mpil_err(comm, MPI_ERR_ARG, F, "flag is NULL");
	if (source == MPI_PROC_NULL) {
		*flag = 1;
		*message = MPI_MESSAGE_NO_PROC;
		mpil_status_proc_null(status);
		return MPI_SUCCESS;
	}
	ibx_progress(mpil_g.ctx);
	return mprobe_once(source, tag, comm, flag, message, status, F);
}

MPIL_PMPI_ALIAS(Mprobe)
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
	static const char F[] = "MPI_Mprobe";
	MPIL_CS_GUARD();
	unsigned idle = 0;
	int flag;

	MPIL_CHECK(check_mprobe(source, tag, comm, message, F));
	if (source == MPI_PROC_NULL) {
		*message = MPI_MESSAGE_NO_PROC;
		mpil_status_proc_null(status);
		return MPI_SUCCESS;
	}
	for (;;) {
		MPIL_CHECK(mprobe_once(source, tag, comm, &flag, message, status, F));
		if (flag)
			return MPI_SUCCESS;
		ibx_progress_wait(mpil_g.ctx, &idle);
	}
}

/* ---- receiving -------------------------------------------------------------------------- */

static int check_message(const MPI_Message *message, const char *fname)
{
	MPI_Message m;

	if (!message)
		return mpil_err(NULL, MPI_ERR_ARG, fname, "message is NULL");
	m = *message;
	if (m == MPI_MESSAGE_NULL)
		return mpil_err(NULL, MPI_ERR_REQUEST, fname,
				"message is MPI_MESSAGE_NULL (received already?)");
	if (m->magic != MPIL_MAGIC_MSG)
		return mpil_err(NULL, MPI_ERR_REQUEST, fname, "invalid message handle %p%s",
				(void *)m,
				m->magic == MPIL_MAGIC_DEAD ? " (received already)" : "");
	return MPI_SUCCESS;
}

/* Starts receiving *message into (buf, count, dt) on a new request and
 * frees the message handle (arguments checked; not MPI_MESSAGE_NO_PROC). */
static int mrecv_start(void *buf, int count, MPI_Datatype dt, MPI_Message *message,
		       const char *fname, MPI_Request *req_p)
{
	MPI_Message m = *message;
	MPI_Comm comm = m->comm;
	size_t len = (size_t)count * dt->size;
	bool typed = !mpil_dt_contig(dt) && len;
	mpil_request_t *r;
	ibx_status_t st;

	/* a bad type leaves the message: a later Mrecv may get it */
	if (typed)
		MPIL_CHECK(mpil_check_recv_type(comm, dt, count, fname));
	r = mpil_req_alloc();
	if (ibx_unlikely(!r))
		return mpil_err(comm, MPI_ERR_NO_MEM, fname, "no memory for a request");
	mpil_req_hold(r, comm, NULL);
	r->kind = MPIL_REQ_RECV;
	if (typed) {
		mpil_req_hold_dtype(r, dt);
		st = ibx_tag_mrecv_dt(mpil_g.ctx, m->msg, buf, count, dt->engine, &r->ibx);
	} else {
		st = ibx_tag_mrecv(mpil_g.ctx, m->msg, mpil_data_start(buf, dt), len, &r->ibx);
	}
	*message = MPI_MESSAGE_NULL;
	msg_release(m);
	if (ibx_unlikely(st < 0)) {
		mpil_req_release(r);
		return mpil_err_ibx(comm, fname, st, false, MPI_ANY_SOURCE);
	}
	*req_p = r;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Imrecv)
int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
		MPI_Request *request)
{
	static const char F[] = "MPI_Imrecv";
	MPIL_CS_GUARD();
	mpil_request_t *r;
	MPI_Comm comm;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(check_message(message, F));
	comm = (*message)->comm;
	MPIL_CHECK(mpil_check_data(buf, count, datatype, comm, F));
	MPIL_CHECK(mpil_check_request_ptr(comm, request, F));
	if (*message != MPI_MESSAGE_NO_PROC)
		return mrecv_start(buf, count, datatype, message, F, request);
	r = mpil_req_alloc();
	if (ibx_unlikely(!r))
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for a request");
	mpil_req_hold(r, MPI_COMM_SELF, NULL);
	mpil_req_preset(r, MPI_PROC_NULL);
	*message = MPI_MESSAGE_NULL;
	*request = r;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Mrecv)
int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
	       MPI_Status *status)
{
	static const char F[] = "MPI_Mrecv";
	MPIL_CS_GUARD();
	MPI_Request r;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(check_message(message, F));
	MPIL_CHECK(mpil_check_data(buf, count, datatype, (*message)->comm, F));
	if (*message == MPI_MESSAGE_NO_PROC) {
		*message = MPI_MESSAGE_NULL;
		mpil_status_proc_null(status);
		return MPI_SUCCESS;
	}
	MPIL_CHECK(mrecv_start(buf, count, datatype, message, F, &r));
	mpil_ibx_wait(&r->ibx);
	return mpil_req_complete(&r, status, F);
}
