/*
 * init.c — the MPI environment: start-up and shut-down, thread levels,
 * abort, clocks, and what the library says about itself.
 *
 *   MPI_Init ─► ibx_init (PMIx under a launcher; alone: a job of size 1)
 *            ─► MPI_COMM_WORLD / MPI_COMM_SELF
 *   MPI_Finalize ─► barrier on MPI_COMM_WORLD (every rank's messages to us
 *                   are in, ours are matched) ─► ibx_finalize
 *
 * Thread support: every level, MPI_THREAD_MULTIPLE included. The engine
 * and mpi-lite keep no per-thread state, so up to SERIALIZED any thread
 * may call MPI as long as the application makes the calls one at a time
 * (its mutex orders them) and nothing locks. Under MULTIPLE every MPI
 * function runs inside mpi-lite's critical section (thread.c), which a
 * blocking call releases while it waits, so the engine still sees one
 * thread at a time; the other levels pay one predictable branch per call.
 * IBX_THREAD_MULTIPLE=n refuses MULTIPLE: it is then answered with
 * SERIALIZED (MPI-3.1 §12.4.3: the highest level supported when the one
 * required is not). MPI_Init_thread's thread is the main thread
 * (MPI_Is_thread_main), whatever the level.
 */
#include "dtype_rdma/dt_xfer.h"
#include "mpil_int.h"
#include "nbc_int.h"
#include "p2p_int.h"
#include "mpil_version.h"

#include <stdlib.h>
#include <unistd.h>

mpil_global_t mpil_g = {.state = MPIL_STATE_PRE_INIT};

static int init_common(int required, const char *fname)
{
	ibx_init_params_t params = {0};
	ibx_status_t st;
	int err;

	if (mpil_g.state != MPIL_STATE_PRE_INIT)
		return mpil_err(NULL, MPI_ERR_OTHER, fname, "MPI is already %s",
				mpil_g.state == MPIL_STATE_INITIALIZED ? "initialized"
								       : "finalized");
	params.flags = required >= MPI_THREAD_SERIALIZED ? IBX_INIT_THREAD_SERIALIZED : 0;
	st = ibx_init(&params, &mpil_g.ctx);
	if (st != IBX_OK) {
		mpil_g.ctx = NULL;
		return mpil_err(NULL, mpil_err_from_ibx(st), fname,
				"the ibx engine failed to start: %s", ibx_status_str(st));
	}
	st = ibx_dt_xfer_init(mpil_g.ctx);
	if (st != IBX_OK) {
		ibx_finalize(mpil_g.ctx);
		mpil_g.ctx = NULL;
		return mpil_err(NULL, mpil_err_from_ibx(st), fname,
				"typed messaging failed to start: %s", ibx_status_str(st));
	}
	mpil_g.world_rank = ibx_rank(mpil_g.ctx);
	mpil_g.world_size = ibx_size(mpil_g.ctx);
	if (required >= MPI_THREAD_MULTIPLE)
		required =
		    mpil_config()->THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED;
	mpil_g.thread_level = required <= MPI_THREAD_SINGLE	? MPI_THREAD_SINGLE
			      : required == MPI_THREAD_FUNNELED ? MPI_THREAD_FUNNELED
								: required;
	mpil_g.main_thread = pthread_self();
	err = mpil_dt_init();
	if (err != MPI_SUCCESS) {
		ibx_finalize(mpil_g.ctx);
		mpil_g.ctx = NULL;
		return mpil_err(NULL, err, fname, "setting up the predefined datatypes");
	}
	err = mpil_comm_init();
	if (err != MPI_SUCCESS) {
		mpil_dt_fini();
		ibx_finalize(mpil_g.ctx);
		mpil_g.ctx = NULL;
		return mpil_err(NULL, err, fname, "setting up MPI_COMM_WORLD and MPI_COMM_SELF");
	}
	err = mpil_coll_init();
	if (err != MPI_SUCCESS) {
		mpil_comm_fini();
		mpil_dt_fini();
		ibx_finalize(mpil_g.ctx);
		mpil_g.ctx = NULL;
		return mpil_err(NULL, err, fname, "building the node map of the collectives");
	}
	mpil_g.state = MPIL_STATE_INITIALIZED;
	if (mpil_g.thread_level == MPI_THREAD_MULTIPLE)
		mpil_cs_start(mpil_g.ctx); /* before any other thread may call MPI */
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Init)
int PMPI_Init(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return init_common(MPI_THREAD_SINGLE, "MPI_Init");
}

MPIL_PMPI_ALIAS(Init_thread)
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	static const char F[] = "MPI_Init_thread";
	int err;

	(void)argc;
	(void)argv;
	if (!provided)
		return mpil_err(NULL, MPI_ERR_ARG, F, "provided is NULL");
	err = init_common(required, F);
	if (err == MPI_SUCCESS)
		*provided = mpil_g.thread_level;
	return err;
}

MPIL_PMPI_ALIAS(Finalize)
int PMPI_Finalize(void)
{
	static const char F[] = "MPI_Finalize";
	MPIL_CS_GUARD();
	ibx_status_t st;
	int err, attr_err;

	MPIL_CHECK(mpil_check_init(F));
	/* MPI_COMM_SELF's attributes go first, while MPI is fully usable
	 * (MPI-3.1 §8.7.1: libraries clean up in their delete callbacks) */
	attr_err = mpil_comm_finalize_attrs();
	mpil_nbc_fini(); /* nonblocking collectives freed while running end first */
	err = mpil_barrier(MPI_COMM_WORLD);
	if (err != MPI_SUCCESS)
		return mpil_err(MPI_COMM_WORLD, err, F, "the closing barrier failed");
	st = ibx_finalize(mpil_g.ctx);
	mpil_g.ctx = NULL;
	mpil_g.state = MPIL_STATE_FINALIZED;
	mpil_req_pool_fini();
	mpil_bsend_fini();
	mpil_mprobe_fini();
	mpil_coll_fini();
	mpil_win_fini();
	mpil_comm_fini();
	mpil_group_fini();
	mpil_info_fini();
	mpil_attr_fini();
	mpil_errcode_fini();
	mpil_dt_fini();
	if (st != IBX_OK)
		return mpil_err(NULL, mpil_err_from_ibx(st), F,
				"the ibx engine did not shut down cleanly: %s", ibx_status_str(st));
	if (attr_err != MPI_SUCCESS)
		return mpil_err(
		    NULL, attr_err, F,
		    "an attribute delete callback failed on MPI_COMM_SELF or MPI_COMM_WORLD");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Initialized)
int PMPI_Initialized(int *flag)
{
	if (!flag)
		return mpil_err(NULL, MPI_ERR_ARG, "MPI_Initialized", "flag is NULL");
	*flag = mpil_g.state != MPIL_STATE_PRE_INIT;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Finalized)
int PMPI_Finalized(int *flag)
{
	if (!flag)
		return mpil_err(NULL, MPI_ERR_ARG, "MPI_Finalized", "flag is NULL");
	*flag = mpil_g.state == MPIL_STATE_FINALIZED;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Query_thread)
int PMPI_Query_thread(int *provided)
{
	static const char F[] = "MPI_Query_thread";

	MPIL_CHECK(mpil_check_init(F));
	if (!provided)
		return mpil_err(NULL, MPI_ERR_ARG, F, "provided is NULL");
	*provided = mpil_g.thread_level;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Is_thread_main)
int PMPI_Is_thread_main(int *flag)
{
	static const char F[] = "MPI_Is_thread_main";

	MPIL_CHECK(mpil_check_init(F));
	if (!flag)
		return mpil_err(NULL, MPI_ERR_ARG, F, "flag is NULL");
	*flag = pthread_equal(pthread_self(), mpil_g.main_thread) != 0;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Abort)
int PMPI_Abort(MPI_Comm comm, int errorcode)
{
	char msg[128];

	/* Whatever the communicator, the whole job ends (MPI-3.1 §8.7 lets
	 * an implementation abort every process). */
	(void)comm;
	snprintf(msg, sizeof(msg), "MPI_Abort called with error code %d", errorcode);
	if (mpil_g.state == MPIL_STATE_INITIALIZED)
		fprintf(stderr, "[rank %d] %s\n", mpil_g.world_rank, msg);
	else
		fprintf(stderr, "%s\n", msg);
	fflush(stdout);
	fflush(stderr);
	if (mpil_g.ctx)
		ibx_abort(mpil_g.ctx, errorcode, msg);
	_exit(errorcode);
}

MPIL_PMPI_ALIAS(Wtime)
double PMPI_Wtime(void)
{
	return ibx_time_sec();
}

MPIL_PMPI_ALIAS(Wtick)
double PMPI_Wtick(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC, &res) != 0)
		return 1e-9;
	return (double)res.tv_sec + 1e-9 * (double)res.tv_nsec;
}

MPIL_PMPI_ALIAS(Get_processor_name)
int PMPI_Get_processor_name(char *name, int *resultlen)
{
	static const char F[] = "MPI_Get_processor_name";
	MPIL_CS_GUARD();

	MPIL_CHECK(mpil_check_init(F));
	if (!name || !resultlen)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL", name ? "resultlen" : "name");
	if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
		snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
	name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
	*resultlen = (int)strlen(name);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Get_version)
int PMPI_Get_version(int *version, int *subversion)
{
	if (!version || !subversion)
		return mpil_err(NULL, MPI_ERR_ARG, "MPI_Get_version", "%s is NULL",
				version ? "subversion" : "version");
	*version = MPI_VERSION;
	*subversion = MPI_SUBVERSION;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Get_library_version)
int PMPI_Get_library_version(char *version, int *resultlen)
{
	if (!version || !resultlen)
		return mpil_err(NULL, MPI_ERR_ARG, "MPI_Get_library_version", "%s is NULL",
				version ? "resultlen" : "version");
	/* the build configuration too, as Open MPI's and MPICH's strings do */
	*resultlen = (int)mpil_version_line(version, MPI_MAX_LIBRARY_VERSION_STRING);
	return MPI_SUCCESS;
}

/* Profiling control (MPI-3.1 §14.2.4): no effect without a profiling
 * library, which would intercept it. */
MPIL_PMPI_ALIAS(Pcontrol)
int PMPI_Pcontrol(const int level, ...)
{
	(void)level;
	return MPI_SUCCESS;
}
