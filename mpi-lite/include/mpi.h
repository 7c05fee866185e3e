/*
 * mpi.h — the public header of mpi-lite, a thin MPI subset on top of libibx.
 *
 * Standard MPI-3.1 names, constants and C bindings, so unmodified MPI
 * programs compile against it (`mpilite-cc`) and run under `mpilite-run` or
 * any PMIx launcher. Handles are pointers to library objects (as in Open
 * MPI): a predefined handle is the address of a library-owned object, and a
 * handle that does not point to a live object of the right kind is reported
 * with the matching error class instead of crashing whenever it can be.
 *
 * Every MPI_X function is also reachable as PMPI_X (the MPI_X names are weak
 * aliases), so profiling wrappers work as the standard describes. A function
 * added here needs both prototypes; the library is built with
 * -Wmissing-prototypes, which catches a missing PMPI_ one.
 *
 * Length: one file over 700 lines on purpose, since MPI programs and tools
 * expect the whole C binding in one mpi.h, as every MPI ships it.
 */
#ifndef MPILITE_MPI_H
#define MPILITE_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything this header declares is exported from libmpilite.so; the
 * library is built with -fvisibility=hidden, so nothing else is. */
#if defined(__GNUC__)
#define MPIL_API __attribute__((visibility("default")))
#else
#define MPIL_API
#endif

#define MPI_VERSION    3
#define MPI_SUBVERSION 1
#define MPILITE	       1

/* ---- scalar types ------------------------------------------------------- */
typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

/* ---- handles ------------------------------------------------------------- */
typedef struct mpil_comm *MPI_Comm;
typedef struct mpil_datatype *MPI_Datatype;
typedef struct mpil_op *MPI_Op;
typedef struct mpil_request *MPI_Request;
typedef struct mpil_errhandler *MPI_Errhandler;
typedef struct mpil_group *MPI_Group;
typedef struct mpil_info *MPI_Info;
typedef struct mpil_win *MPI_Win;
typedef struct mpil_message *MPI_Message;

typedef struct MPI_Status {
	int MPI_SOURCE;
	int MPI_TAG;
	int MPI_ERROR;
	/* private: use MPI_Get_count / MPI_Test_cancelled */
	int mpil_cancelled;
	MPI_Count mpil_count; /* bytes received */
} MPI_Status;

/* Null handles. */
#define MPI_COMM_NULL	    ((MPI_Comm)0)
#define MPI_DATATYPE_NULL   ((MPI_Datatype)0)
#define MPI_OP_NULL	    ((MPI_Op)0)
#define MPI_REQUEST_NULL    ((MPI_Request)0)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0)
#define MPI_GROUP_NULL	    ((MPI_Group)0)
#define MPI_INFO_NULL	    ((MPI_Info)0)
#define MPI_WIN_NULL	    ((MPI_Win)0)
#define MPI_MESSAGE_NULL    ((MPI_Message)0)

#define MPI_STATUS_IGNORE   ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)

#define MPI_IN_PLACE ((void *)1)
#define MPI_BOTTOM   ((void *)0)

/* ---- constants ------------------------------------------------------------- */
#define MPI_ANY_SOURCE	   (-1)
#define MPI_ANY_TAG	   (-1)
#define MPI_PROC_NULL	   (-2)
#define MPI_ROOT	   (-3)
#define MPI_UNDEFINED	   (-32766)
#define MPI_KEYVAL_INVALID (-1)
/* buffer space a buffered send needs besides its packed message */
#define MPI_BSEND_OVERHEAD 256

#define MPI_MAX_PROCESSOR_NAME	       256
#define MPI_MAX_ERROR_STRING	       256
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_OBJECT_NAME	       64
#define MPI_MAX_INFO_KEY	       255
#define MPI_MAX_INFO_VAL	       1024
#define MPI_MAX_PORT_NAME	       1024
#define MPI_MAX_DATAREP_STRING	       128

/* thread levels */
#define MPI_THREAD_SINGLE     0
#define MPI_THREAD_FUNNELED   1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE   3

/* results of comparisons */
#define MPI_IDENT     0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR   2
#define MPI_UNEQUAL   3

/* MPI_Comm_split_type */
#define MPI_COMM_TYPE_SHARED 1

/* array order for MPI_Type_create_subarray */
#define MPI_ORDER_C	  0
#define MPI_ORDER_FORTRAN 1
/* distributions for MPI_Type_create_darray (Open MPI's values) */
#define MPI_DISTRIBUTE_BLOCK	 0
#define MPI_DISTRIBUTE_CYCLIC	 1
#define MPI_DISTRIBUTE_NONE	 2
#define MPI_DISTRIBUTE_DFLT_DARG (-1)

/* MPI_Type_get_envelope: how a datatype was made */
#define MPI_COMBINER_NAMED	      1
#define MPI_COMBINER_DUP	      2
#define MPI_COMBINER_CONTIGUOUS	      3
#define MPI_COMBINER_VECTOR	      4
#define MPI_COMBINER_HVECTOR_INTEGER  5
#define MPI_COMBINER_HVECTOR	      6
#define MPI_COMBINER_INDEXED	      7
#define MPI_COMBINER_HINDEXED_INTEGER 8
#define MPI_COMBINER_HINDEXED	      9
#define MPI_COMBINER_INDEXED_BLOCK    10
#define MPI_COMBINER_STRUCT_INTEGER   11
#define MPI_COMBINER_STRUCT	      12
#define MPI_COMBINER_SUBARRAY	      13
#define MPI_COMBINER_DARRAY	      14
#define MPI_COMBINER_F90_REAL	      15
#define MPI_COMBINER_F90_COMPLEX      16
#define MPI_COMBINER_F90_INTEGER      17
#define MPI_COMBINER_RESIZED	      18
#define MPI_COMBINER_HINDEXED_BLOCK   19

/* predefined attribute keys (MPI_Comm_get_attr on MPI_COMM_WORLD) */
#define MPI_TAG_UB	    1
#define MPI_HOST	    2
#define MPI_IO		    3
#define MPI_WTIME_IS_GLOBAL 4
#define MPI_UNIVERSE_SIZE   5
#define MPI_APPNUM	    6
#define MPI_LASTUSEDCODE    7

/* ---- error classes (MPI-3.1 table 8.2 / 8.3) ---------------------------- */
#define MPI_SUCCESS		      0
#define MPI_ERR_BUFFER		      1
#define MPI_ERR_COUNT		      2
#define MPI_ERR_TYPE		      3
#define MPI_ERR_TAG		      4
#define MPI_ERR_COMM		      5
#define MPI_ERR_RANK		      6
#define MPI_ERR_REQUEST		      7
#define MPI_ERR_ROOT		      8
#define MPI_ERR_GROUP		      9
#define MPI_ERR_OP		      10
#define MPI_ERR_TOPOLOGY	      11
#define MPI_ERR_DIMS		      12
#define MPI_ERR_ARG		      13
#define MPI_ERR_UNKNOWN		      14
#define MPI_ERR_TRUNCATE	      15
#define MPI_ERR_OTHER		      16
#define MPI_ERR_INTERN		      17
#define MPI_ERR_PENDING		      18
#define MPI_ERR_IN_STATUS	      19
#define MPI_ERR_ACCESS		      20
#define MPI_ERR_AMODE		      21
#define MPI_ERR_ASSERT		      22
#define MPI_ERR_BAD_FILE	      23
#define MPI_ERR_BASE		      24
#define MPI_ERR_CONVERSION	      25
#define MPI_ERR_DISP		      26
#define MPI_ERR_DUP_DATAREP	      27
#define MPI_ERR_FILE_EXISTS	      28
#define MPI_ERR_FILE_IN_USE	      29
#define MPI_ERR_FILE		      30
#define MPI_ERR_INFO_KEY	      31
#define MPI_ERR_INFO_NOKEY	      32
#define MPI_ERR_INFO_VALUE	      33
#define MPI_ERR_INFO		      34
#define MPI_ERR_IO		      35
#define MPI_ERR_KEYVAL		      36
#define MPI_ERR_LOCKTYPE	      37
#define MPI_ERR_NAME		      38
#define MPI_ERR_NO_MEM		      39
#define MPI_ERR_NOT_SAME	      40
#define MPI_ERR_NO_SPACE	      41
#define MPI_ERR_NO_SUCH_FILE	      42
#define MPI_ERR_PORT		      43
#define MPI_ERR_QUOTA		      44
#define MPI_ERR_READ_ONLY	      45
#define MPI_ERR_RMA_ATTACH	      46
#define MPI_ERR_RMA_CONFLICT	      47
#define MPI_ERR_RMA_RANGE	      48
#define MPI_ERR_RMA_SHARED	      49
#define MPI_ERR_RMA_SYNC	      50
#define MPI_ERR_RMA_FLAVOR	      51
#define MPI_ERR_SERVICE		      52
#define MPI_ERR_SIZE		      53
#define MPI_ERR_SPAWN		      54
#define MPI_ERR_UNSUPPORTED_DATAREP   55
#define MPI_ERR_UNSUPPORTED_OPERATION 56
#define MPI_ERR_WIN		      57
#define MPI_T_ERR_MEMORY	      58
#define MPI_T_ERR_NOT_INITIALIZED     59
#define MPI_T_ERR_CANNOT_INIT	      60
#define MPI_T_ERR_INVALID_INDEX	      61
#define MPI_T_ERR_INVALID_ITEM	      62
#define MPI_T_ERR_INVALID_HANDLE      63
#define MPI_T_ERR_OUT_OF_HANDLES      64
#define MPI_T_ERR_OUT_OF_SESSIONS     65
#define MPI_T_ERR_INVALID_SESSION     66
#define MPI_T_ERR_CVAR_SET_NOT_NOW    67
#define MPI_T_ERR_CVAR_SET_NEVER      68
#define MPI_T_ERR_PVAR_NO_STARTSTOP   69
#define MPI_T_ERR_PVAR_NO_WRITE	      70
#define MPI_T_ERR_PVAR_NO_ATOMIC      71
#define MPI_T_ERR_INVALID_NAME	      72
#define MPI_T_ERR_INVALID	      73
#define MPI_ERR_LASTCODE	      73

/* ---- predefined objects ---------------------------------------------------
 * Declared with incomplete types: only their addresses are public. */
extern MPIL_API struct mpil_comm mpil_comm_world, mpil_comm_self;
#define MPI_COMM_WORLD (&mpil_comm_world)
#define MPI_COMM_SELF  (&mpil_comm_self)

extern MPIL_API struct mpil_errhandler mpil_errors_are_fatal, mpil_errors_return;
#define MPI_ERRORS_ARE_FATAL (&mpil_errors_are_fatal)
#define MPI_ERRORS_RETURN    (&mpil_errors_return)

extern MPIL_API struct mpil_op mpil_op_max, mpil_op_min, mpil_op_sum, mpil_op_prod, mpil_op_land,
    mpil_op_band, mpil_op_lor, mpil_op_bor, mpil_op_lxor, mpil_op_bxor, mpil_op_maxloc,
    mpil_op_minloc, mpil_op_replace, mpil_op_no_op;
#define MPI_MAX	    (&mpil_op_max)
#define MPI_MIN	    (&mpil_op_min)
#define MPI_SUM	    (&mpil_op_sum)
#define MPI_PROD    (&mpil_op_prod)
#define MPI_LAND    (&mpil_op_land)
#define MPI_BAND    (&mpil_op_band)
#define MPI_LOR	    (&mpil_op_lor)
#define MPI_BOR	    (&mpil_op_bor)
#define MPI_LXOR    (&mpil_op_lxor)
#define MPI_BXOR    (&mpil_op_bxor)
#define MPI_MAXLOC  (&mpil_op_maxloc)
#define MPI_MINLOC  (&mpil_op_minloc)
#define MPI_REPLACE (&mpil_op_replace)
#define MPI_NO_OP   (&mpil_op_no_op)

extern MPIL_API struct mpil_group mpil_group_empty;
#define MPI_GROUP_EMPTY (&mpil_group_empty)
extern MPIL_API struct mpil_info mpil_info_env;
#define MPI_INFO_ENV (&mpil_info_env)
/* what a matched probe of MPI_PROC_NULL returns */
extern MPIL_API struct mpil_message mpil_message_no_proc;
#define MPI_MESSAGE_NO_PROC (&mpil_message_no_proc)

/* Predefined datatypes (MPI-3.1 §3.2.2, §4.1.11, §5.9.4, §17.2.6). */
extern MPIL_API struct mpil_datatype mpil_dt_char, mpil_dt_signed_char, mpil_dt_unsigned_char,
    mpil_dt_byte, mpil_dt_wchar, mpil_dt_short, mpil_dt_unsigned_short, mpil_dt_int,
    mpil_dt_unsigned, mpil_dt_long, mpil_dt_unsigned_long, mpil_dt_long_long,
    mpil_dt_unsigned_long_long, mpil_dt_float, mpil_dt_double, mpil_dt_long_double, mpil_dt_c_bool,
    mpil_dt_int8, mpil_dt_int16, mpil_dt_int32, mpil_dt_int64, mpil_dt_uint8, mpil_dt_uint16,
    mpil_dt_uint32, mpil_dt_uint64, mpil_dt_aint, mpil_dt_offset, mpil_dt_count,
    mpil_dt_c_float_complex, mpil_dt_c_double_complex, mpil_dt_c_long_double_complex,
    mpil_dt_cxx_bool, mpil_dt_cxx_float_complex, mpil_dt_cxx_double_complex,
    mpil_dt_cxx_long_double_complex, mpil_dt_packed, mpil_dt_float_int, mpil_dt_double_int,
    mpil_dt_long_int, mpil_dt_2int, mpil_dt_short_int, mpil_dt_long_double_int;

#define MPI_CHAR		    (&mpil_dt_char)
#define MPI_SIGNED_CHAR		    (&mpil_dt_signed_char)
#define MPI_UNSIGNED_CHAR	    (&mpil_dt_unsigned_char)
#define MPI_BYTE		    (&mpil_dt_byte)
#define MPI_WCHAR		    (&mpil_dt_wchar)
#define MPI_SHORT		    (&mpil_dt_short)
#define MPI_UNSIGNED_SHORT	    (&mpil_dt_unsigned_short)
#define MPI_INT			    (&mpil_dt_int)
#define MPI_UNSIGNED		    (&mpil_dt_unsigned)
#define MPI_LONG		    (&mpil_dt_long)
#define MPI_UNSIGNED_LONG	    (&mpil_dt_unsigned_long)
#define MPI_LONG_LONG_INT	    (&mpil_dt_long_long)
#define MPI_LONG_LONG		    MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG	    (&mpil_dt_unsigned_long_long)
#define MPI_FLOAT		    (&mpil_dt_float)
#define MPI_DOUBLE		    (&mpil_dt_double)
#define MPI_LONG_DOUBLE		    (&mpil_dt_long_double)
#define MPI_C_BOOL		    (&mpil_dt_c_bool)
#define MPI_INT8_T		    (&mpil_dt_int8)
#define MPI_INT16_T		    (&mpil_dt_int16)
#define MPI_INT32_T		    (&mpil_dt_int32)
#define MPI_INT64_T		    (&mpil_dt_int64)
#define MPI_UINT8_T		    (&mpil_dt_uint8)
#define MPI_UINT16_T		    (&mpil_dt_uint16)
#define MPI_UINT32_T		    (&mpil_dt_uint32)
#define MPI_UINT64_T		    (&mpil_dt_uint64)
#define MPI_AINT		    (&mpil_dt_aint)
#define MPI_OFFSET		    (&mpil_dt_offset)
#define MPI_COUNT		    (&mpil_dt_count)
#define MPI_C_COMPLEX		    MPI_C_FLOAT_COMPLEX
#define MPI_C_FLOAT_COMPLEX	    (&mpil_dt_c_float_complex)
#define MPI_C_DOUBLE_COMPLEX	    (&mpil_dt_c_double_complex)
#define MPI_C_LONG_DOUBLE_COMPLEX   (&mpil_dt_c_long_double_complex)
#define MPI_CXX_BOOL		    (&mpil_dt_cxx_bool)
#define MPI_CXX_FLOAT_COMPLEX	    (&mpil_dt_cxx_float_complex)
#define MPI_CXX_DOUBLE_COMPLEX	    (&mpil_dt_cxx_double_complex)
#define MPI_CXX_LONG_DOUBLE_COMPLEX (&mpil_dt_cxx_long_double_complex)
#define MPI_PACKED		    (&mpil_dt_packed)
/* value-index pairs for MPI_MAXLOC / MPI_MINLOC */
#define MPI_FLOAT_INT	    (&mpil_dt_float_int)
#define MPI_DOUBLE_INT	    (&mpil_dt_double_int)
#define MPI_LONG_INT	    (&mpil_dt_long_int)
#define MPI_2INT	    (&mpil_dt_2int)
#define MPI_SHORT_INT	    (&mpil_dt_short_int)
#define MPI_LONG_DOUBLE_INT (&mpil_dt_long_double_int)

/* ---- callback types -------------------------------------------------------- */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *errcode, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn; /* deprecated name */
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
					void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval, void *attribute_val,
					  void *extra_state);
/* the predefined attribute callbacks (MPI-3.1 §6.7.2) */
MPIL_API int mpil_comm_null_copy_fn(MPI_Comm, int, void *, void *, void *, int *);
MPIL_API int mpil_comm_dup_fn(MPI_Comm, int, void *, void *, void *, int *);
MPIL_API int mpil_comm_null_delete_fn(MPI_Comm, int, void *, void *);
#define MPI_COMM_NULL_COPY_FN	(&mpil_comm_null_copy_fn)
#define MPI_COMM_DUP_FN		(&mpil_comm_dup_fn)
#define MPI_COMM_NULL_DELETE_FN (&mpil_comm_null_delete_fn)
/* MPI-1 names (deprecated since MPI-2.0) */
typedef MPI_Comm_copy_attr_function MPI_Copy_function;
typedef MPI_Comm_delete_attr_function MPI_Delete_function;
#define MPI_NULL_COPY_FN   MPI_COMM_NULL_COPY_FN
#define MPI_DUP_FN	   MPI_COMM_DUP_FN
#define MPI_NULL_DELETE_FN MPI_COMM_NULL_DELETE_FN

typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);

/* ---- environment ------------------------------------------------------------- */
MPIL_API int MPI_Init(int *argc, char ***argv);
MPIL_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
MPIL_API int MPI_Finalize(void);
MPIL_API int MPI_Initialized(int *flag);
MPIL_API int MPI_Finalized(int *flag);
MPIL_API int MPI_Query_thread(int *provided);
MPIL_API int MPI_Is_thread_main(int *flag);
MPIL_API int MPI_Abort(MPI_Comm comm, int errorcode);
MPIL_API double MPI_Wtime(void);
MPIL_API double MPI_Wtick(void);
MPIL_API int MPI_Get_processor_name(char *name, int *resultlen);
MPIL_API int MPI_Get_version(int *version, int *subversion);
MPIL_API int MPI_Get_library_version(char *version, int *resultlen);

/* ---- communicators ------------------------------------------------------------ */
MPIL_API int MPI_Comm_rank(MPI_Comm comm, int *rank);
MPIL_API int MPI_Comm_size(MPI_Comm comm, int *size);
MPIL_API int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag);
MPIL_API int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name);
MPIL_API int MPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen);
MPIL_API int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
MPIL_API int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm);
MPIL_API int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
MPIL_API int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
				     MPI_Request *request);
MPIL_API int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
MPIL_API int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
				 MPI_Comm *newcomm);
MPIL_API int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm);
MPIL_API int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm);
MPIL_API int MPI_Comm_free(MPI_Comm *comm);
MPIL_API int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result);
MPIL_API int MPI_Comm_test_inter(MPI_Comm comm, int *flag);
MPIL_API int MPI_Comm_group(MPI_Comm comm, MPI_Group *group);
MPIL_API int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info);
MPIL_API int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used);
MPIL_API int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
				    MPI_Comm_delete_attr_function *comm_delete_attr_fn,
				    int *comm_keyval, void *extra_state);
MPIL_API int MPI_Comm_free_keyval(int *comm_keyval);
MPIL_API int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val);
MPIL_API int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval);
/* MPI-1 names of the five above (deprecated since MPI-2.0) */
MPIL_API int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn,
			       int *keyval, void *extra_state);
MPIL_API int MPI_Keyval_free(int *keyval);
MPIL_API int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val);
MPIL_API int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag);
MPIL_API int MPI_Attr_delete(MPI_Comm comm, int keyval);

/* ---- groups ------------------------------------------------------------------- */
MPIL_API int MPI_Group_size(MPI_Group group, int *size);
MPIL_API int MPI_Group_rank(MPI_Group group, int *rank);
MPIL_API int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
				       MPI_Group group2, int ranks2[]);
MPIL_API int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result);
MPIL_API int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
MPIL_API int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
MPIL_API int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
MPIL_API int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
MPIL_API int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
MPIL_API int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
MPIL_API int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
MPIL_API int MPI_Group_free(MPI_Group *group);

/* ---- info objects ----------------------------------------------------------------- */
MPIL_API int MPI_Info_create(MPI_Info *info);
MPIL_API int MPI_Info_set(MPI_Info info, const char *key, const char *value);
MPIL_API int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag);
MPIL_API int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag);
MPIL_API int MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value,
				 int *flag); /* MPI-4.0 */
MPIL_API int MPI_Info_get_nkeys(MPI_Info info, int *nkeys);
MPIL_API int MPI_Info_get_nthkey(MPI_Info info, int n, char *key);
MPIL_API int MPI_Info_delete(MPI_Info info, const char *key);
MPIL_API int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo);
MPIL_API int MPI_Info_free(MPI_Info *info);

/* ---- error handling ------------------------------------------------------------ */
MPIL_API int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
MPIL_API int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler);
MPIL_API int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function,
					MPI_Errhandler *errhandler);
MPIL_API int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode);
MPIL_API int MPI_Errhandler_free(MPI_Errhandler *errhandler);
MPIL_API int MPI_Add_error_class(int *errorclass);
MPIL_API int MPI_Add_error_code(int errorclass, int *errorcode);
MPIL_API int MPI_Add_error_string(int errorcode, const char *string);
MPIL_API int MPI_Pcontrol(const int level, ...);
MPIL_API int MPI_Comm_get_parent(MPI_Comm *parent);
MPIL_API int MPI_Comm_remote_size(MPI_Comm comm, int *size);
MPIL_API int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group);
MPIL_API int MPI_Error_string(int errorcode, char *string, int *resultlen);
MPIL_API int MPI_Error_class(int errorcode, int *errorclass);

/* ---- point-to-point ------------------------------------------------------------- */
MPIL_API int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
		      MPI_Comm comm);
MPIL_API int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
		       MPI_Comm comm);
MPIL_API int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
		       MPI_Comm comm);
MPIL_API int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
		      MPI_Comm comm, MPI_Status *status);
MPIL_API int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
		       MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
		       MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
			  int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
			  int source, int recvtag, MPI_Comm comm, MPI_Status *status);
MPIL_API int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest,
				  int sendtag, int source, int recvtag, MPI_Comm comm,
				  MPI_Status *status);
MPIL_API int MPI_Grequest_start(MPI_Grequest_query_function *query_fn,
				MPI_Grequest_free_function *free_fn,
				MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
				MPI_Request *request);
MPIL_API int MPI_Grequest_complete(MPI_Request request);
/* MPI-4.0 */
MPIL_API int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
			   int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
			   int source, int recvtag, MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest,
				   int sendtag, int source, int recvtag, MPI_Comm comm,
				   MPI_Request *request);
MPIL_API int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
MPIL_API int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);
MPIL_API int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count);
MPIL_API int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count);
MPIL_API int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count);
/* buffered mode, persistent requests, matched probe */
MPIL_API int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
		       MPI_Comm comm);
MPIL_API int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Buffer_attach(void *buffer, int size);
MPIL_API int MPI_Buffer_detach(void *buffer_addr, int *size);
MPIL_API int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			   MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			    MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			    MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			    MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
			   MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Start(MPI_Request *request);
MPIL_API int MPI_Startall(int count, MPI_Request array_of_requests[]);
MPIL_API int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
			MPI_Status *status);
MPIL_API int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
			 MPI_Status *status);
MPIL_API int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
		       MPI_Status *status);
MPIL_API int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
			MPI_Request *request);

/* ---- requests ------------------------------------------------------------------- */
MPIL_API int MPI_Wait(MPI_Request *request, MPI_Status *status);
MPIL_API int MPI_Waitall(int count, MPI_Request array_of_requests[],
			 MPI_Status array_of_statuses[]);
MPIL_API int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index,
			 MPI_Status *status);
MPIL_API int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
			  int array_of_indices[], MPI_Status array_of_statuses[]);
MPIL_API int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status);
MPIL_API int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
			 MPI_Status array_of_statuses[]);
MPIL_API int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
			 MPI_Status *status);
MPIL_API int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
			  int array_of_indices[], MPI_Status array_of_statuses[]);
MPIL_API int MPI_Request_free(MPI_Request *request);
MPIL_API int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status);
MPIL_API int MPI_Cancel(MPI_Request *request);
MPIL_API int MPI_Test_cancelled(const MPI_Status *status, int *flag);

/* ---- datatypes ------------------------------------------------------------------- */
MPIL_API int MPI_Type_size(MPI_Datatype datatype, int *size);
MPIL_API int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size);
MPIL_API int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent);
MPIL_API int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb,
				      MPI_Aint *true_extent);
MPIL_API int MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen);
MPIL_API int MPI_Type_set_name(MPI_Datatype datatype, const char *type_name);
MPIL_API int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent);
MPIL_API int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb,
					MPI_Count *true_extent);
MPIL_API int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
				   int *num_datatypes, int *combiner);
MPIL_API int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
				   int max_datatypes, int array_of_integers[],
				   MPI_Aint array_of_addresses[],
				   MPI_Datatype array_of_datatypes[]);
MPIL_API int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count);
MPIL_API int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count);
MPIL_API int MPI_Status_set_cancelled(MPI_Status *status, int flag);
MPIL_API int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype);
MPIL_API int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
			     MPI_Datatype *newtype);
MPIL_API int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
				     MPI_Datatype oldtype, MPI_Datatype *newtype);
MPIL_API int MPI_Type_indexed(int count, const int array_of_blocklengths[],
			      const int array_of_displacements[], MPI_Datatype oldtype,
			      MPI_Datatype *newtype);
MPIL_API int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
				      const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
				      MPI_Datatype *newtype);
MPIL_API int MPI_Type_create_indexed_block(int count, int blocklength,
					   const int array_of_displacements[], MPI_Datatype oldtype,
					   MPI_Datatype *newtype);
MPIL_API int MPI_Type_create_hindexed_block(int count, int blocklength,
					    const MPI_Aint array_of_displacements[],
					    MPI_Datatype oldtype, MPI_Datatype *newtype);
MPIL_API int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
				    const MPI_Aint array_of_displacements[],
				    const MPI_Datatype array_of_types[], MPI_Datatype *newtype);
MPIL_API int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
				     MPI_Datatype *newtype);
MPIL_API int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
				    const int array_of_distribs[], const int array_of_dargs[],
				    const int array_of_psizes[], int order, MPI_Datatype oldtype,
				    MPI_Datatype *newtype);
MPIL_API int MPI_Type_create_subarray(int ndims, const int array_of_sizes[],
				      const int array_of_subsizes[], const int array_of_starts[],
				      int order, MPI_Datatype oldtype, MPI_Datatype *newtype);
MPIL_API int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype);
MPIL_API int MPI_Type_commit(MPI_Datatype *datatype);
MPIL_API int MPI_Type_free(MPI_Datatype *datatype);
MPIL_API int MPI_Get_address(const void *location, MPI_Aint *address);
MPIL_API MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp);
MPIL_API MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2);
MPIL_API int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
		      int outsize, int *position, MPI_Comm comm);
MPIL_API int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
			MPI_Datatype datatype, MPI_Comm comm);
MPIL_API int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size);

/* ---- collectives ----------------------------------------------------------------- */
MPIL_API int MPI_Barrier(MPI_Comm comm);
MPIL_API int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
MPIL_API int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			   MPI_Op op, MPI_Comm comm);
MPIL_API int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			MPI_Op op, int root, MPI_Comm comm);
MPIL_API int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
MPIL_API int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			 const int recvcounts[], const int displs[], MPI_Datatype recvtype,
			 int root, MPI_Comm comm);
MPIL_API int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
MPIL_API int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
			  MPI_Datatype sendtype, void *recvbuf, int recvcount,
			  MPI_Datatype recvtype, int root, MPI_Comm comm);
MPIL_API int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			   int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
MPIL_API int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			    void *recvbuf, const int recvcounts[], const int displs[],
			    MPI_Datatype recvtype, MPI_Comm comm);
MPIL_API int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			  int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
MPIL_API int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
			   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
MPIL_API int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
			   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
MPIL_API int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
				      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
MPIL_API int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
				MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
MPIL_API int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		      MPI_Op op, MPI_Comm comm);
MPIL_API int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			MPI_Op op, MPI_Comm comm);
MPIL_API int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
			      MPI_Op op);
MPIL_API int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op);
MPIL_API int MPI_Op_free(MPI_Op *op);
MPIL_API int MPI_Op_commutative(MPI_Op op, int *commute);

/* ---- profiling interface: the same functions under their PMPI_ names ------------ */
MPIL_API int PMPI_Init(int *argc, char ***argv);
MPIL_API int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided);
MPIL_API int PMPI_Finalize(void);
MPIL_API int PMPI_Initialized(int *flag);
MPIL_API int PMPI_Finalized(int *flag);
MPIL_API int PMPI_Query_thread(int *provided);
MPIL_API int PMPI_Is_thread_main(int *flag);
MPIL_API int PMPI_Abort(MPI_Comm comm, int errorcode);
MPIL_API double PMPI_Wtime(void);
MPIL_API double PMPI_Wtick(void);
MPIL_API int PMPI_Get_processor_name(char *name, int *resultlen);
MPIL_API int PMPI_Get_version(int *version, int *subversion);
MPIL_API int PMPI_Get_library_version(char *version, int *resultlen);
MPIL_API int PMPI_Comm_rank(MPI_Comm comm, int *rank);
MPIL_API int PMPI_Comm_size(MPI_Comm comm, int *size);
MPIL_API int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag);
MPIL_API int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name);
MPIL_API int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen);
MPIL_API int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);
MPIL_API int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm);
MPIL_API int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
MPIL_API int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
				      MPI_Request *request);
MPIL_API int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm);
MPIL_API int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
				  MPI_Comm *newcomm);
MPIL_API int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm);
MPIL_API int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm);
MPIL_API int PMPI_Comm_free(MPI_Comm *comm);
MPIL_API int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result);
MPIL_API int PMPI_Comm_test_inter(MPI_Comm comm, int *flag);
MPIL_API int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group);
MPIL_API int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info);
MPIL_API int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used);
MPIL_API int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
				     MPI_Comm_delete_attr_function *comm_delete_attr_fn,
				     int *comm_keyval, void *extra_state);
MPIL_API int PMPI_Comm_free_keyval(int *comm_keyval);
MPIL_API int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val);
MPIL_API int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval);
MPIL_API int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn,
				int *keyval, void *extra_state);
MPIL_API int PMPI_Keyval_free(int *keyval);
MPIL_API int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val);
MPIL_API int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag);
MPIL_API int PMPI_Attr_delete(MPI_Comm comm, int keyval);
MPIL_API int PMPI_Group_size(MPI_Group group, int *size);
MPIL_API int PMPI_Group_rank(MPI_Group group, int *rank);
MPIL_API int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
					MPI_Group group2, int ranks2[]);
MPIL_API int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result);
MPIL_API int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
MPIL_API int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
MPIL_API int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup);
MPIL_API int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
MPIL_API int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup);
MPIL_API int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
MPIL_API int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup);
MPIL_API int PMPI_Group_free(MPI_Group *group);
MPIL_API int PMPI_Info_create(MPI_Info *info);
MPIL_API int PMPI_Info_set(MPI_Info info, const char *key, const char *value);
MPIL_API int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag);
MPIL_API int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag);
MPIL_API int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value,
				  int *flag);
MPIL_API int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys);
MPIL_API int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key);
MPIL_API int PMPI_Info_delete(MPI_Info info, const char *key);
MPIL_API int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo);
MPIL_API int PMPI_Info_free(MPI_Info *info);
MPIL_API int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
MPIL_API int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler);
MPIL_API int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function,
					 MPI_Errhandler *errhandler);
MPIL_API int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode);
MPIL_API int PMPI_Errhandler_free(MPI_Errhandler *errhandler);
MPIL_API int PMPI_Add_error_class(int *errorclass);
MPIL_API int PMPI_Add_error_code(int errorclass, int *errorcode);
MPIL_API int PMPI_Add_error_string(int errorcode, const char *string);
MPIL_API int PMPI_Pcontrol(const int level, ...);
MPIL_API int PMPI_Comm_get_parent(MPI_Comm *parent);
MPIL_API int PMPI_Comm_remote_size(MPI_Comm comm, int *size);
MPIL_API int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group);
MPIL_API int PMPI_Error_string(int errorcode, char *string, int *resultlen);
MPIL_API int PMPI_Error_class(int errorcode, int *errorclass);
MPIL_API int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
		       MPI_Comm comm);
MPIL_API int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			MPI_Comm comm);
MPIL_API int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			MPI_Comm comm);
MPIL_API int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
		       MPI_Comm comm, MPI_Status *status);
MPIL_API int PMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			 MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			 MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag,
			MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
			   int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
			   int source, int recvtag, MPI_Comm comm, MPI_Status *status);
MPIL_API int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest,
				   int sendtag, int source, int recvtag, MPI_Comm comm,
				   MPI_Status *status);
MPIL_API int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn,
				 MPI_Grequest_free_function *free_fn,
				 MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
				 MPI_Request *request);
MPIL_API int PMPI_Grequest_complete(MPI_Request request);
MPIL_API int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
			    int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
			    int source, int recvtag, MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest,
				    int sendtag, int source, int recvtag, MPI_Comm comm,
				    MPI_Request *request);
MPIL_API int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status);
MPIL_API int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status);
MPIL_API int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count);
MPIL_API int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count);
MPIL_API int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count);
MPIL_API int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			MPI_Comm comm);
MPIL_API int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			 MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Buffer_attach(void *buffer, int size);
MPIL_API int PMPI_Buffer_detach(void *buffer_addr, int *size);
MPIL_API int PMPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			    MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			     MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			     MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
			     MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag,
			    MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Start(MPI_Request *request);
MPIL_API int PMPI_Startall(int count, MPI_Request array_of_requests[]);
MPIL_API int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
			 MPI_Status *status);
MPIL_API int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
			  MPI_Status *status);
MPIL_API int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
			MPI_Status *status);
MPIL_API int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
			 MPI_Request *request);
MPIL_API int PMPI_Wait(MPI_Request *request, MPI_Status *status);
MPIL_API int PMPI_Waitall(int count, MPI_Request array_of_requests[],
			  MPI_Status array_of_statuses[]);
MPIL_API int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *index,
			  MPI_Status *status);
MPIL_API int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
			   int array_of_indices[], MPI_Status array_of_statuses[]);
MPIL_API int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status);
MPIL_API int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
			  MPI_Status array_of_statuses[]);
MPIL_API int PMPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
			  MPI_Status *status);
MPIL_API int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
			   int array_of_indices[], MPI_Status array_of_statuses[]);
MPIL_API int PMPI_Request_free(MPI_Request *request);
MPIL_API int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status);
MPIL_API int PMPI_Cancel(MPI_Request *request);
MPIL_API int PMPI_Test_cancelled(const MPI_Status *status, int *flag);
MPIL_API int PMPI_Type_size(MPI_Datatype datatype, int *size);
MPIL_API int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size);
MPIL_API int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent);
MPIL_API int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb,
				       MPI_Aint *true_extent);
MPIL_API int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen);
MPIL_API int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name);
MPIL_API int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent);
MPIL_API int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb,
					 MPI_Count *true_extent);
MPIL_API int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
				    int *num_datatypes, int *combiner);
MPIL_API int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
				    int max_datatypes, int array_of_integers[],
				    MPI_Aint array_of_addresses[],
				    MPI_Datatype array_of_datatypes[]);
MPIL_API int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count);
MPIL_API int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count);
MPIL_API int PMPI_Status_set_cancelled(MPI_Status *status, int flag);
MPIL_API int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype);
MPIL_API int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
			      MPI_Datatype *newtype);
MPIL_API int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
				      MPI_Datatype oldtype, MPI_Datatype *newtype);
MPIL_API int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
			       const int array_of_displacements[], MPI_Datatype oldtype,
			       MPI_Datatype *newtype);
MPIL_API int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
				       const MPI_Aint array_of_displacements[],
				       MPI_Datatype oldtype, MPI_Datatype *newtype);
MPIL_API int PMPI_Type_create_indexed_block(int count, int blocklength,
					    const int array_of_displacements[],
					    MPI_Datatype oldtype, MPI_Datatype *newtype);
MPIL_API int PMPI_Type_create_hindexed_block(int count, int blocklength,
					     const MPI_Aint array_of_displacements[],
					     MPI_Datatype oldtype, MPI_Datatype *newtype);
MPIL_API int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
				     const MPI_Aint array_of_displacements[],
				     const MPI_Datatype array_of_types[], MPI_Datatype *newtype);
MPIL_API int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
				      MPI_Datatype *newtype);
MPIL_API int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
				     const int array_of_distribs[], const int array_of_dargs[],
				     const int array_of_psizes[], int order, MPI_Datatype oldtype,
				     MPI_Datatype *newtype);
MPIL_API int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
				       const int array_of_subsizes[], const int array_of_starts[],
				       int order, MPI_Datatype oldtype, MPI_Datatype *newtype);
MPIL_API int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype);
MPIL_API int PMPI_Type_commit(MPI_Datatype *datatype);
MPIL_API int PMPI_Type_free(MPI_Datatype *datatype);
MPIL_API int PMPI_Get_address(const void *location, MPI_Aint *address);
MPIL_API MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp);
MPIL_API MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2);
MPIL_API int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
		       int outsize, int *position, MPI_Comm comm);
MPIL_API int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
			 MPI_Datatype datatype, MPI_Comm comm);
MPIL_API int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size);
MPIL_API int PMPI_Barrier(MPI_Comm comm);
MPIL_API int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
MPIL_API int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			    MPI_Op op, MPI_Comm comm);
MPIL_API int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			 MPI_Op op, int root, MPI_Comm comm);
MPIL_API int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
MPIL_API int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			  const int recvcounts[], const int displs[], MPI_Datatype recvtype,
			  int root, MPI_Comm comm);
MPIL_API int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
MPIL_API int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
			   MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype, int root, MPI_Comm comm);
MPIL_API int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
MPIL_API int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			     void *recvbuf, const int recvcounts[], const int displs[],
			     MPI_Datatype recvtype, MPI_Comm comm);
MPIL_API int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			   int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
MPIL_API int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
			    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
MPIL_API int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
			    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
MPIL_API int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
				       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
MPIL_API int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
				 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
MPIL_API int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		       MPI_Op op, MPI_Comm comm);
MPIL_API int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			 MPI_Op op, MPI_Comm comm);
MPIL_API int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
			       MPI_Op op);
MPIL_API int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op);
MPIL_API int PMPI_Op_free(MPI_Op *op);
MPIL_API int PMPI_Op_commutative(MPI_Op op, int *commute);

/* ---- process topologies and neighbourhood collectives (MPI-3.1 ch. 7) ---- */
/* MPI_Topo_test */
#define MPI_GRAPH      1
#define MPI_CART       2
#define MPI_DIST_GRAPH 3
/* weights of MPI_Dist_graph_create(_adjacent) and MPI_Dist_graph_neighbors:
 * addresses of library objects (as in MPICH), not small integers cast to
 * pointers, which compilers warn about when they reach an int[] argument */
extern MPIL_API struct mpil_weights mpil_unweighted, mpil_weights_empty;
#define MPI_UNWEIGHTED	  ((int *)&mpil_unweighted)
#define MPI_WEIGHTS_EMPTY ((int *)&mpil_weights_empty)

MPIL_API int MPI_Dims_create(int nnodes, int ndims, int dims[]);
MPIL_API int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
			     int reorder, MPI_Comm *comm_cart);
MPIL_API int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]);
MPIL_API int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank);
MPIL_API int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source,
			    int *rank_dest);
MPIL_API int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm);
MPIL_API int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]);
MPIL_API int MPI_Cartdim_get(MPI_Comm comm, int *ndims);
MPIL_API int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
			  int *newrank);
MPIL_API int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
			      int reorder, MPI_Comm *comm_graph);
MPIL_API int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]);
MPIL_API int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges);
MPIL_API int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors);
MPIL_API int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]);
MPIL_API int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
			   int *newrank);
MPIL_API int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
				   const int degrees[], const int destinations[],
				   const int weights[], MPI_Info info, int reorder,
				   MPI_Comm *comm_dist_graph);
MPIL_API int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
					    const int sourceweights[], int outdegree,
					    const int destinations[], const int destweights[],
					    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph);
MPIL_API int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
					    int *weighted);
MPIL_API int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
				      int sourceweights[], int maxoutdegree, int destinations[],
				      int destweights[]);
MPIL_API int MPI_Topo_test(MPI_Comm comm, int *status);
MPIL_API int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				    void *recvbuf, int recvcount, MPI_Datatype recvtype,
				    MPI_Comm comm);
MPIL_API int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				     void *recvbuf, const int recvcounts[], const int displs[],
				     MPI_Datatype recvtype, MPI_Comm comm);
MPIL_API int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				   void *recvbuf, int recvcount, MPI_Datatype recvtype,
				   MPI_Comm comm);
MPIL_API int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
				    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
				    const int recvcounts[], const int rdispls[],
				    MPI_Datatype recvtype, MPI_Comm comm);
MPIL_API int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
				    const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
				    void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
				    const MPI_Datatype recvtypes[], MPI_Comm comm);
/* the profiling interface */
MPIL_API int PMPI_Dims_create(int nnodes, int ndims, int dims[]);
MPIL_API int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
			      int reorder, MPI_Comm *comm_cart);
MPIL_API int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]);
MPIL_API int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank);
MPIL_API int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source,
			     int *rank_dest);
MPIL_API int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm);
MPIL_API int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]);
MPIL_API int PMPI_Cartdim_get(MPI_Comm comm, int *ndims);
MPIL_API int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
			   int *newrank);
MPIL_API int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
			       int reorder, MPI_Comm *comm_graph);
MPIL_API int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]);
MPIL_API int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges);
MPIL_API int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors);
MPIL_API int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]);
MPIL_API int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
			    int *newrank);
MPIL_API int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
				    const int degrees[], const int destinations[],
				    const int weights[], MPI_Info info, int reorder,
				    MPI_Comm *comm_dist_graph);
MPIL_API int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
					     const int sourceweights[], int outdegree,
					     const int destinations[], const int destweights[],
					     MPI_Info info, int reorder, MPI_Comm *comm_dist_graph);
MPIL_API int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
					     int *weighted);
MPIL_API int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
				       int sourceweights[], int maxoutdegree, int destinations[],
				       int destweights[]);
MPIL_API int PMPI_Topo_test(MPI_Comm comm, int *status);
MPIL_API int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				     void *recvbuf, int recvcount, MPI_Datatype recvtype,
				     MPI_Comm comm);
MPIL_API int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				      void *recvbuf, const int recvcounts[], const int displs[],
				      MPI_Datatype recvtype, MPI_Comm comm);
MPIL_API int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				    void *recvbuf, int recvcount, MPI_Datatype recvtype,
				    MPI_Comm comm);
MPIL_API int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
				     const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
				     const int recvcounts[], const int rdispls[],
				     MPI_Datatype recvtype, MPI_Comm comm);
MPIL_API int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
				     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
				     void *recvbuf, const int recvcounts[],
				     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
				     MPI_Comm comm);

/* ---- nonblocking collectives (MPI-3.1 §5.12, §7.7) ------------------------ */
MPIL_API int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
			MPI_Request *request);
MPIL_API int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			 MPI_Op op, int root, MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			    MPI_Op op, MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
			 MPI_Request *request);
MPIL_API int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			  const int recvcounts[], const int displs[], MPI_Datatype recvtype,
			  int root, MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
			  MPI_Request *request);
MPIL_API int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
			   MPI_Datatype sendtype, void *recvbuf, int recvcount,
			   MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
			    MPI_Request *request);
MPIL_API int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			     void *recvbuf, const int recvcounts[], const int displs[],
			     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			   int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
			   MPI_Request *request);
MPIL_API int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
			    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
			    MPI_Request *request);
MPIL_API int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
			    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
			    MPI_Request *request);
MPIL_API int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
				 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
				 MPI_Request *request);
MPIL_API int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
				       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
				       MPI_Request *request);
MPIL_API int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		       MPI_Op op, MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			 MPI_Op op, MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				     void *recvbuf, int recvcount, MPI_Datatype recvtype,
				     MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				      void *recvbuf, const int recvcounts[], const int displs[],
				      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				    void *recvbuf, int recvcount, MPI_Datatype recvtype,
				    MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
				     const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
				     const int recvcounts[], const int rdispls[],
				     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
MPIL_API int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
				     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
				     void *recvbuf, const int recvcounts[],
				     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
				     MPI_Comm comm, MPI_Request *request);
/* the profiling interface */
MPIL_API int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
			 MPI_Request *request);
MPIL_API int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			  MPI_Op op, int root, MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			     MPI_Op op, MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
			  MPI_Request *request);
MPIL_API int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
			   int root, MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
			   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
			   MPI_Request *request);
MPIL_API int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
			    MPI_Datatype sendtype, void *recvbuf, int recvcount,
			    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			     void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
			     MPI_Request *request);
MPIL_API int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			      void *recvbuf, const int recvcounts[], const int displs[],
			      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			    void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
			    MPI_Request *request);
MPIL_API int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
			     MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
			     const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
			     MPI_Request *request);
MPIL_API int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
			     const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
			     const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
			     MPI_Request *request);
MPIL_API int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
				  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
				  MPI_Request *request);
MPIL_API int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
					MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
					MPI_Request *request);
MPIL_API int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			MPI_Op op, MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			  MPI_Op op, MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				      void *recvbuf, int recvcount, MPI_Datatype recvtype,
				      MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				       void *recvbuf, const int recvcounts[], const int displs[],
				       MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				     void *recvbuf, int recvcount, MPI_Datatype recvtype,
				     MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
				      const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
				      const int recvcounts[], const int rdispls[],
				      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request);
MPIL_API int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
				      const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
				      void *recvbuf, const int recvcounts[],
				      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
				      MPI_Comm comm, MPI_Request *request);

/* ---- persistent collectives (MPI-4.0 §6.13, §8.8; nbc_persist.c) --------- */
MPIL_API int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
			    MPI_Info info, MPI_Request *request);
MPIL_API int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			     void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
			     MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			      void *recvbuf, const int recvcounts[], const int displs[],
			      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
			      MPI_Request *request);
MPIL_API int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			      void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
			      MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
			       MPI_Datatype sendtype, void *recvbuf, int recvcount,
			       MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
			       MPI_Request *request);
MPIL_API int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
				MPI_Info info, MPI_Request *request);
MPIL_API int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				 void *recvbuf, const int recvcounts[], const int displs[],
				 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
				 MPI_Request *request);
MPIL_API int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			       void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
			       MPI_Info info, MPI_Request *request);
MPIL_API int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
				MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
				const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
				MPI_Info info, MPI_Request *request);
MPIL_API int MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
				const MPI_Datatype sendtypes[], void *recvbuf,
				const int recvcounts[], const int rdispls[],
				const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
				MPI_Request *request);
MPIL_API int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			     MPI_Op op, int root, MPI_Comm comm, MPI_Info info,
			     MPI_Request *request);
MPIL_API int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count,
				MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
				MPI_Request *request);
MPIL_API int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
				     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
				     MPI_Request *request);
MPIL_API int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
					   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
					   MPI_Info info, MPI_Request *request);
MPIL_API int MPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			   MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int MPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int MPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
					 void *recvbuf, int recvcount, MPI_Datatype recvtype,
					 MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int MPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
					  void *recvbuf, const int recvcounts[], const int displs[],
					  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
					  MPI_Request *request);
MPIL_API int MPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
					void *recvbuf, int recvcount, MPI_Datatype recvtype,
					MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int MPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
					 const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
					 const int recvcounts[], const int rdispls[],
					 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
					 MPI_Request *request);
MPIL_API int MPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
					 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
					 void *recvbuf, const int recvcounts[],
					 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
					 MPI_Comm comm, MPI_Info info, MPI_Request *request);
/* the profiling interface */
MPIL_API int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root,
			     MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			      void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
			      MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			       void *recvbuf, const int recvcounts[], const int displs[],
			       MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
			       MPI_Request *request);
MPIL_API int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
			       void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
			       MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
				MPI_Datatype sendtype, void *recvbuf, int recvcount,
				MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
				MPI_Request *request);
MPIL_API int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				 void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
				 MPI_Info info, MPI_Request *request);
MPIL_API int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				  void *recvbuf, const int recvcounts[], const int displs[],
				  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
				  MPI_Request *request);
MPIL_API int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
				void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
				MPI_Info info, MPI_Request *request);
MPIL_API int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
				 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
				 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
				 MPI_Info info, MPI_Request *request);
MPIL_API int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
				 const MPI_Datatype sendtypes[], void *recvbuf,
				 const int recvcounts[], const int rdispls[],
				 const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
				 MPI_Request *request);
MPIL_API int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			      MPI_Op op, int root, MPI_Comm comm, MPI_Info info,
			      MPI_Request *request);
MPIL_API int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count,
				 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
				 MPI_Request *request);
MPIL_API int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
				      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
				      MPI_Info info, MPI_Request *request);
MPIL_API int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
					    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
					    MPI_Info info, MPI_Request *request);
MPIL_API int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
			      MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int PMPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
					  void *recvbuf, int recvcount, MPI_Datatype recvtype,
					  MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int PMPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount,
					   MPI_Datatype sendtype, void *recvbuf,
					   const int recvcounts[], const int displs[],
					   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
					   MPI_Request *request);
MPIL_API int PMPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
					 void *recvbuf, int recvcount, MPI_Datatype recvtype,
					 MPI_Comm comm, MPI_Info info, MPI_Request *request);
MPIL_API int PMPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
					  const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
					  const int recvcounts[], const int rdispls[],
					  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
					  MPI_Request *request);
MPIL_API int PMPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
					  const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
					  void *recvbuf, const int recvcounts[],
					  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
					  MPI_Comm comm, MPI_Info info, MPI_Request *request);

/* ---- one-sided communication (MPI-3.1 chapter 11) ------------------------ */
/* window attributes (MPI_Win_get_attr keyvals) */
#define MPI_WIN_BASE	      (-101)
#define MPI_WIN_SIZE	      (-102)
#define MPI_WIN_DISP_UNIT     (-103)
#define MPI_WIN_CREATE_FLAVOR (-104)
#define MPI_WIN_MODEL	      (-105)
/* MPI_WIN_CREATE_FLAVOR values */
#define MPI_WIN_FLAVOR_CREATE	1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC	3
#define MPI_WIN_FLAVOR_SHARED	4
/* MPI_WIN_MODEL values */
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED	 2
/* lock types */
#define MPI_LOCK_EXCLUSIVE 234
#define MPI_LOCK_SHARED	   235
/* synchronisation assertions (bits) */
#define MPI_MODE_NOCHECK   1024
#define MPI_MODE_NOSTORE   2048
#define MPI_MODE_NOPUT	   4096
#define MPI_MODE_NOPRECEDE 8192
#define MPI_MODE_NOSUCCEED 16384

typedef void MPI_Win_errhandler_function(MPI_Win *win, int *errcode, ...);
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn; /* deprecated name */
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval, void *extra_state,
				       void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval, void *attribute_val,
					 void *extra_state);
MPIL_API int mpil_win_null_copy_fn(MPI_Win, int, void *, void *, void *, int *);
MPIL_API int mpil_win_dup_fn(MPI_Win, int, void *, void *, void *, int *);
MPIL_API int mpil_win_null_delete_fn(MPI_Win, int, void *, void *);
#define MPI_WIN_NULL_COPY_FN   (&mpil_win_null_copy_fn)
#define MPI_WIN_DUP_FN	       (&mpil_win_dup_fn)
#define MPI_WIN_NULL_DELETE_FN (&mpil_win_null_delete_fn)

MPIL_API int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);
MPIL_API int MPI_Free_mem(void *base);
MPIL_API int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
			    MPI_Win *win);
MPIL_API int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
			      void *baseptr, MPI_Win *win);
MPIL_API int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
				     void *baseptr, MPI_Win *win);
MPIL_API int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
				  void *baseptr);
MPIL_API int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win);
MPIL_API int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size);
MPIL_API int MPI_Win_detach(MPI_Win win, const void *base);
MPIL_API int MPI_Win_free(MPI_Win *win);
MPIL_API int MPI_Win_get_group(MPI_Win win, MPI_Group *group);
MPIL_API int MPI_Win_set_name(MPI_Win win, const char *win_name);
MPIL_API int MPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen);
MPIL_API int MPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
				   MPI_Win_delete_attr_function *win_delete_attr_fn,
				   int *win_keyval, void *extra_state);
MPIL_API int MPI_Win_free_keyval(int *win_keyval);
MPIL_API int MPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val);
MPIL_API int MPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag);
MPIL_API int MPI_Win_delete_attr(MPI_Win win, int win_keyval);
MPIL_API int MPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
				       MPI_Errhandler *errhandler);
MPIL_API int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler);
MPIL_API int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler);
MPIL_API int MPI_Win_call_errhandler(MPI_Win win, int errorcode);
MPIL_API int MPI_Win_set_info(MPI_Win win, MPI_Info info);
MPIL_API int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used);
MPIL_API int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
		     int target_rank, MPI_Aint target_disp, int target_count,
		     MPI_Datatype target_datatype, MPI_Win win);
MPIL_API int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
		     int target_rank, MPI_Aint target_disp, int target_count,
		     MPI_Datatype target_datatype, MPI_Win win);
MPIL_API int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
			    int target_rank, MPI_Aint target_disp, int target_count,
			    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win);
MPIL_API int MPI_Get_accumulate(const void *origin_addr, int origin_count,
				MPI_Datatype origin_datatype, void *result_addr, int result_count,
				MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
				int target_count, MPI_Datatype target_datatype, MPI_Op op,
				MPI_Win win);
MPIL_API int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
			      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win);
MPIL_API int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr,
				  void *result_addr, MPI_Datatype datatype, int target_rank,
				  MPI_Aint target_disp, MPI_Win win);
MPIL_API int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
		      int target_rank, MPI_Aint target_disp, int target_count,
		      MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request);
MPIL_API int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
		      int target_rank, MPI_Aint target_disp, int target_count,
		      MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request);
MPIL_API int MPI_Raccumulate(const void *origin_addr, int origin_count,
			     MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
			     int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
			     MPI_Request *request);
MPIL_API int MPI_Rget_accumulate(const void *origin_addr, int origin_count,
				 MPI_Datatype origin_datatype, void *result_addr, int result_count,
				 MPI_Datatype result_datatype, int target_rank,
				 MPI_Aint target_disp, int target_count,
				 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
				 MPI_Request *request);
MPIL_API int MPI_Win_fence(int assert, MPI_Win win);
MPIL_API int MPI_Win_post(MPI_Group group, int assert, MPI_Win win);
MPIL_API int MPI_Win_start(MPI_Group group, int assert, MPI_Win win);
MPIL_API int MPI_Win_complete(MPI_Win win);
MPIL_API int MPI_Win_wait(MPI_Win win);
MPIL_API int MPI_Win_test(MPI_Win win, int *flag);
MPIL_API int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win);
MPIL_API int MPI_Win_unlock(int rank, MPI_Win win);
MPIL_API int MPI_Win_lock_all(int assert, MPI_Win win);
MPIL_API int MPI_Win_unlock_all(MPI_Win win);
MPIL_API int MPI_Win_flush(int rank, MPI_Win win);
MPIL_API int MPI_Win_flush_all(MPI_Win win);
MPIL_API int MPI_Win_flush_local(int rank, MPI_Win win);
MPIL_API int MPI_Win_flush_local_all(MPI_Win win);
MPIL_API int MPI_Win_sync(MPI_Win win);
/* the profiling interface */
MPIL_API int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr);
MPIL_API int PMPI_Free_mem(void *base);
MPIL_API int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
			     MPI_Win *win);
MPIL_API int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
			       void *baseptr, MPI_Win *win);
MPIL_API int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
				      void *baseptr, MPI_Win *win);
MPIL_API int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
				   void *baseptr);
MPIL_API int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win);
MPIL_API int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size);
MPIL_API int PMPI_Win_detach(MPI_Win win, const void *base);
MPIL_API int PMPI_Win_free(MPI_Win *win);
MPIL_API int PMPI_Win_get_group(MPI_Win win, MPI_Group *group);
MPIL_API int PMPI_Win_set_name(MPI_Win win, const char *win_name);
MPIL_API int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen);
MPIL_API int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
				    MPI_Win_delete_attr_function *win_delete_attr_fn,
				    int *win_keyval, void *extra_state);
MPIL_API int PMPI_Win_free_keyval(int *win_keyval);
MPIL_API int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val);
MPIL_API int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag);
MPIL_API int PMPI_Win_delete_attr(MPI_Win win, int win_keyval);
MPIL_API int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
					MPI_Errhandler *errhandler);
MPIL_API int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler);
MPIL_API int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler);
MPIL_API int PMPI_Win_call_errhandler(MPI_Win win, int errorcode);
MPIL_API int PMPI_Win_set_info(MPI_Win win, MPI_Info info);
MPIL_API int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used);
MPIL_API int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
		      int target_rank, MPI_Aint target_disp, int target_count,
		      MPI_Datatype target_datatype, MPI_Win win);
MPIL_API int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
		      int target_rank, MPI_Aint target_disp, int target_count,
		      MPI_Datatype target_datatype, MPI_Win win);
MPIL_API int PMPI_Accumulate(const void *origin_addr, int origin_count,
			     MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
			     int target_count, MPI_Datatype target_datatype, MPI_Op op,
			     MPI_Win win);
MPIL_API int PMPI_Get_accumulate(const void *origin_addr, int origin_count,
				 MPI_Datatype origin_datatype, void *result_addr, int result_count,
				 MPI_Datatype result_datatype, int target_rank,
				 MPI_Aint target_disp, int target_count,
				 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win);
MPIL_API int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
			       int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win);
MPIL_API int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr,
				   void *result_addr, MPI_Datatype datatype, int target_rank,
				   MPI_Aint target_disp, MPI_Win win);
MPIL_API int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
		       int target_rank, MPI_Aint target_disp, int target_count,
		       MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request);
MPIL_API int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
		       int target_rank, MPI_Aint target_disp, int target_count,
		       MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request);
MPIL_API int PMPI_Raccumulate(const void *origin_addr, int origin_count,
			      MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
			      int target_count, MPI_Datatype target_datatype, MPI_Op op,
			      MPI_Win win, MPI_Request *request);
MPIL_API int PMPI_Rget_accumulate(const void *origin_addr, int origin_count,
				  MPI_Datatype origin_datatype, void *result_addr, int result_count,
				  MPI_Datatype result_datatype, int target_rank,
				  MPI_Aint target_disp, int target_count,
				  MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
				  MPI_Request *request);
MPIL_API int PMPI_Win_fence(int assert, MPI_Win win);
MPIL_API int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win);
MPIL_API int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win);
MPIL_API int PMPI_Win_complete(MPI_Win win);
MPIL_API int PMPI_Win_wait(MPI_Win win);
MPIL_API int PMPI_Win_test(MPI_Win win, int *flag);
MPIL_API int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win);
MPIL_API int PMPI_Win_unlock(int rank, MPI_Win win);
MPIL_API int PMPI_Win_lock_all(int assert, MPI_Win win);
MPIL_API int PMPI_Win_unlock_all(MPI_Win win);
MPIL_API int PMPI_Win_flush(int rank, MPI_Win win);
MPIL_API int PMPI_Win_flush_all(MPI_Win win);
MPIL_API int PMPI_Win_flush_local(int rank, MPI_Win win);
MPIL_API int PMPI_Win_flush_local_all(MPI_Win win);
MPIL_API int PMPI_Win_sync(MPI_Win win);

/* ---- MPIX_Mutex: distributed mutexes -------------------------------------
 * (the extension of Ross, Latham, Gropp, Thakur and Toonen, 2005, with
 * MPICH's old MPIX_Mutex argument conventions; the engine's ibx_mutex_*)
 * MPIX_Mutex_create is collective over @comm and makes @count mutexes;
 * mutex i lives at rank i % size of comm, and lock/unlock name it by
 * (mutex_index, rank) with that rank. The algorithm is IBX_MUTEX_ALGO
 * (mcs, onesided, hybrid). Errors go to comm's error handler: MPI_ERR_ARG
 * (index), MPI_ERR_RANK (not the mutex's home), MPI_ERR_RMA_SYNC (lock of
 * a mutex this process holds, unlock of one it does not), MPI_ERR_OTHER
 * (a member process was lost). */
typedef struct mpil_mutex *MPIX_Mutex;
#define MPIX_MUTEX_NULL ((MPIX_Mutex)0)
MPIL_API int MPIX_Mutex_create(int count, MPI_Comm comm, MPIX_Mutex *hdl);
MPIL_API int MPIX_Mutex_free(MPIX_Mutex *hdl);
MPIL_API int MPIX_Mutex_lock(MPIX_Mutex hdl, int mutex_index, int rank);
MPIL_API int MPIX_Mutex_unlock(MPIX_Mutex hdl, int mutex_index, int rank);
MPIL_API int PMPIX_Mutex_create(int count, MPI_Comm comm, MPIX_Mutex *hdl);
MPIL_API int PMPIX_Mutex_free(MPIX_Mutex *hdl);
MPIL_API int PMPIX_Mutex_lock(MPIX_Mutex hdl, int mutex_index, int rank);
MPIL_API int PMPIX_Mutex_unlock(MPIX_Mutex hdl, int mutex_index, int rank);
/* ---- end of MPIX_Mutex ----------------------------------------------------- */

/* ---- MPI-IO (MPI-3.1 chapter 13; mpi-lite/file*.c) ------------------------------ */
typedef struct mpil_file *MPI_File;
#define MPI_FILE_NULL ((MPI_File)0)
/* ROMIO's names for the requests of nonblocking file access, which MPICH
 * and Open MPI both define: they are MPI requests. */
#define MPIO_Request MPI_Request
#define MPIO_USES_MPI_REQUEST
#define MPIO_Test MPI_Test
#define MPIO_Wait MPI_Wait

/* access modes (bits) */
#define MPI_MODE_CREATE		 1
#define MPI_MODE_RDONLY		 2
#define MPI_MODE_WRONLY		 4
#define MPI_MODE_RDWR		 8
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN	 32
#define MPI_MODE_EXCL		 64
#define MPI_MODE_APPEND		 128
#define MPI_MODE_SEQUENTIAL	 256
/* MPI_File_seek */
#define MPI_SEEK_SET 600
#define MPI_SEEK_CUR 602
#define MPI_SEEK_END 604
/* MPI_File_set_view in MPI_MODE_SEQUENTIAL */
#define MPI_DISPLACEMENT_CURRENT (-54278278)

typedef void MPI_File_errhandler_function(MPI_File *file, int *errcode, ...);
typedef MPI_File_errhandler_function MPI_File_errhandler_fn; /* deprecated name */

MPIL_API int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
			   MPI_File *fh);
MPIL_API int MPI_File_close(MPI_File *fh);
MPIL_API int MPI_File_delete(const char *filename, MPI_Info info);
MPIL_API int MPI_File_set_size(MPI_File fh, MPI_Offset size);
MPIL_API int MPI_File_preallocate(MPI_File fh, MPI_Offset size);
MPIL_API int MPI_File_get_size(MPI_File fh, MPI_Offset *size);
MPIL_API int MPI_File_get_group(MPI_File fh, MPI_Group *group);
MPIL_API int MPI_File_get_amode(MPI_File fh, int *amode);
MPIL_API int MPI_File_set_info(MPI_File fh, MPI_Info info);
MPIL_API int MPI_File_get_info(MPI_File fh, MPI_Info *info_used);
MPIL_API int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
			       MPI_Datatype filetype, const char *datarep, MPI_Info info);
MPIL_API int MPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
			       MPI_Datatype *filetype, char *datarep);
MPIL_API int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent);
MPIL_API int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
			      MPI_Datatype datatype, MPI_Status *status);
MPIL_API int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
				  MPI_Datatype datatype, MPI_Status *status);
MPIL_API int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
			       MPI_Datatype datatype, MPI_Status *status);
MPIL_API int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
				   MPI_Datatype datatype, MPI_Status *status);
MPIL_API int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
			       MPI_Datatype datatype, MPI_Request *request);
MPIL_API int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
				MPI_Datatype datatype, MPI_Request *request);
MPIL_API int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
			   MPI_Status *status);
MPIL_API int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
			       MPI_Status *status);
MPIL_API int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
			    MPI_Status *status);
MPIL_API int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
				MPI_Status *status);
MPIL_API int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
			    MPI_Request *request);
MPIL_API int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
			     MPI_Request *request);
MPIL_API int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
				   MPI_Datatype datatype, MPI_Request *request);
MPIL_API int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
				    MPI_Datatype datatype, MPI_Request *request);
MPIL_API int MPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
				MPI_Request *request);
MPIL_API int MPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
				 MPI_Request *request);
MPIL_API int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
				  MPI_Status *status);
MPIL_API int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
				   MPI_Status *status);
MPIL_API int MPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
				   MPI_Request *request);
MPIL_API int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
				    MPI_Request *request);
MPIL_API int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
				   MPI_Status *status);
MPIL_API int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
				    MPI_Status *status);
MPIL_API int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence);
MPIL_API int MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset);
MPIL_API int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype);
MPIL_API int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status);
MPIL_API int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count,
				      MPI_Datatype datatype);
MPIL_API int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status);
MPIL_API int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count,
					MPI_Datatype datatype);
MPIL_API int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status);
MPIL_API int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
					 MPI_Datatype datatype);
MPIL_API int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status);
MPIL_API int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype);
MPIL_API int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status);
MPIL_API int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count,
					  MPI_Datatype datatype);
MPIL_API int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status);
MPIL_API int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence);
MPIL_API int MPI_File_get_position(MPI_File fh, MPI_Offset *offset);
MPIL_API int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp);
MPIL_API int MPI_File_set_atomicity(MPI_File fh, int flag);
MPIL_API int MPI_File_get_atomicity(MPI_File fh, int *flag);
MPIL_API int MPI_File_sync(MPI_File fh);
MPIL_API int MPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
					MPI_Errhandler *errhandler);
MPIL_API int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler);
MPIL_API int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler);
MPIL_API int MPI_File_call_errhandler(MPI_File fh, int errorcode);
/* the profiling interface */
MPIL_API int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
			    MPI_File *fh);
MPIL_API int PMPI_File_close(MPI_File *fh);
MPIL_API int PMPI_File_delete(const char *filename, MPI_Info info);
MPIL_API int PMPI_File_set_size(MPI_File fh, MPI_Offset size);
MPIL_API int PMPI_File_preallocate(MPI_File fh, MPI_Offset size);
MPIL_API int PMPI_File_get_size(MPI_File fh, MPI_Offset *size);
MPIL_API int PMPI_File_get_group(MPI_File fh, MPI_Group *group);
MPIL_API int PMPI_File_get_amode(MPI_File fh, int *amode);
MPIL_API int PMPI_File_set_info(MPI_File fh, MPI_Info info);
MPIL_API int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used);
MPIL_API int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
				MPI_Datatype filetype, const char *datarep, MPI_Info info);
MPIL_API int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
				MPI_Datatype *filetype, char *datarep);
MPIL_API int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent);
MPIL_API int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
			       MPI_Datatype datatype, MPI_Status *status);
MPIL_API int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
				   MPI_Datatype datatype, MPI_Status *status);
MPIL_API int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
				MPI_Datatype datatype, MPI_Status *status);
MPIL_API int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
				    MPI_Datatype datatype, MPI_Status *status);
MPIL_API int PMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
				MPI_Datatype datatype, MPI_Request *request);
MPIL_API int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
				 MPI_Datatype datatype, MPI_Request *request);
MPIL_API int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
			    MPI_Status *status);
MPIL_API int PMPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
				MPI_Status *status);
MPIL_API int PMPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
			     MPI_Status *status);
MPIL_API int PMPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
				 MPI_Status *status);
MPIL_API int PMPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
			     MPI_Request *request);
MPIL_API int PMPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
			      MPI_Request *request);
MPIL_API int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
				    MPI_Datatype datatype, MPI_Request *request);
MPIL_API int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
				     MPI_Datatype datatype, MPI_Request *request);
MPIL_API int PMPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
				 MPI_Request *request);
MPIL_API int PMPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
				  MPI_Request *request);
MPIL_API int PMPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
				   MPI_Status *status);
MPIL_API int PMPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
				    MPI_Status *status);
MPIL_API int PMPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
				    MPI_Request *request);
MPIL_API int PMPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
				     MPI_Request *request);
MPIL_API int PMPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
				    MPI_Status *status);
MPIL_API int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
				     MPI_Status *status);
MPIL_API int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence);
MPIL_API int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset);
MPIL_API int PMPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype);
MPIL_API int PMPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status);
MPIL_API int PMPI_File_write_all_begin(MPI_File fh, const void *buf, int count,
				       MPI_Datatype datatype);
MPIL_API int PMPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status);
MPIL_API int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count,
					 MPI_Datatype datatype);
MPIL_API int PMPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status);
MPIL_API int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf,
					  int count, MPI_Datatype datatype);
MPIL_API int PMPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status);
MPIL_API int PMPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype);
MPIL_API int PMPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status);
MPIL_API int PMPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count,
					   MPI_Datatype datatype);
MPIL_API int PMPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status);
MPIL_API int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence);
MPIL_API int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset);
MPIL_API int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp);
MPIL_API int PMPI_File_set_atomicity(MPI_File fh, int flag);
MPIL_API int PMPI_File_get_atomicity(MPI_File fh, int *flag);
MPIL_API int PMPI_File_sync(MPI_File fh);
MPIL_API int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
					 MPI_Errhandler *errhandler);
MPIL_API int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler);
MPIL_API int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler);
MPIL_API int PMPI_File_call_errhandler(MPI_File fh, int errorcode);
/* ---- end of MPI-IO -------------------------------------------------------------- */

#ifdef __cplusplus
}
#endif
#endif /* MPILITE_MPI_H */
