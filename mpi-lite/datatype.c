/*
 * datatype.c — the predefined datatypes of MPI-3.1 for C, the entry points
 * that move typed data (mpil_dt_pack / unpack / elements: the one place
 * that knows about non-contiguous layouts, used by point-to-point and the
 * collectives alike), the datatype queries, and MPI_Pack / MPI_Unpack.
 *
 * Every datatype, predefined or derived, is backed by a core/dtype_rdma
 * type (mpil_datatype.engine): the predefined ones get theirs in MPI_Init
 * (a basic engine type per C type; the MAXLOC/MINLOC pairs are engine
 * structs {value, int} laid out as C lays out the pair), derived ones when
 * they are constructed (dtype_create.c). Data moves as follows:
 *
 *   contiguous (MPIL_DTF_CONTIG: predefined, pairs without padding, dense
 *   derived types)        memcpy of count * size bytes at buf + true_lb,
 *                         or no copy at all (p2p sends the user buffer)
 *   anything else         the engine's cursor packs/unpacks the byte range
 *
 * The packed form is the engine's: the basic elements in typemap order,
 * no padding, native representation (a homogeneous job), which is also the
 * format of MPI_Pack.
 */
#include "mpil_int.h"
#include "dtype_rdma/dtype.h"

#include <stdalign.h>
#include <stdlib.h>
#include <wchar.h>

/* The predefined C types: variable, kind, C type, reduction group, name.
 * MPI_CHAR reduces as a C integer: an extension (MPI-3.1 §5.9.2 leaves it
 * out) that Open MPI and MPICH both make, and programs rely on it
 * (osu_allreduce reduces MPI_CHAR by default). */
#define DT_BASIC_LIST(X)                                                                           \
	X(mpil_dt_char, MPIL_DT_CHAR, char, MPIL_DTG_INT, "MPI_CHAR")                              \
	X(mpil_dt_signed_char, MPIL_DT_SIGNED_CHAR, signed char, MPIL_DTG_INT, "MPI_SIGNED_CHAR")  \
	X(mpil_dt_unsigned_char, MPIL_DT_UNSIGNED_CHAR, unsigned char, MPIL_DTG_INT,               \
	  "MPI_UNSIGNED_CHAR")                                                                     \
	X(mpil_dt_byte, MPIL_DT_BYTE, unsigned char, MPIL_DTG_BYTE, "MPI_BYTE")                    \
	X(mpil_dt_wchar, MPIL_DT_WCHAR, wchar_t, MPIL_DTG_NONE, "MPI_WCHAR")                       \
	X(mpil_dt_short, MPIL_DT_SHORT, short, MPIL_DTG_INT, "MPI_SHORT")                          \
	X(mpil_dt_unsigned_short, MPIL_DT_UNSIGNED_SHORT, unsigned short, MPIL_DTG_INT,            \
	  "MPI_UNSIGNED_SHORT")                                                                    \
	X(mpil_dt_int, MPIL_DT_INT, int, MPIL_DTG_INT, "MPI_INT")                                  \
	X(mpil_dt_unsigned, MPIL_DT_UNSIGNED, unsigned, MPIL_DTG_INT, "MPI_UNSIGNED")              \
	X(mpil_dt_long, MPIL_DT_LONG, long, MPIL_DTG_INT, "MPI_LONG")                              \
	X(mpil_dt_unsigned_long, MPIL_DT_UNSIGNED_LONG, unsigned long, MPIL_DTG_INT,               \
	  "MPI_UNSIGNED_LONG")                                                                     \
	X(mpil_dt_long_long, MPIL_DT_LONG_LONG, long long, MPIL_DTG_INT, "MPI_LONG_LONG_INT")      \
	X(mpil_dt_unsigned_long_long, MPIL_DT_UNSIGNED_LONG_LONG, unsigned long long,              \
	  MPIL_DTG_INT, "MPI_UNSIGNED_LONG_LONG")                                                  \
	X(mpil_dt_float, MPIL_DT_FLOAT, float, MPIL_DTG_FLOAT, "MPI_FLOAT")                        \
	X(mpil_dt_double, MPIL_DT_DOUBLE, double, MPIL_DTG_FLOAT, "MPI_DOUBLE")                    \
	X(mpil_dt_long_double, MPIL_DT_LONG_DOUBLE, long double, MPIL_DTG_FLOAT,                   \
	  "MPI_LONG_DOUBLE")                                                                       \
	X(mpil_dt_c_bool, MPIL_DT_C_BOOL, _Bool, MPIL_DTG_LOGICAL, "MPI_C_BOOL")                   \
	X(mpil_dt_int8, MPIL_DT_INT8, int8_t, MPIL_DTG_INT, "MPI_INT8_T")                          \
	X(mpil_dt_int16, MPIL_DT_INT16, int16_t, MPIL_DTG_INT, "MPI_INT16_T")                      \
	X(mpil_dt_int32, MPIL_DT_INT32, int32_t, MPIL_DTG_INT, "MPI_INT32_T")                      \
	X(mpil_dt_int64, MPIL_DT_INT64, int64_t, MPIL_DTG_INT, "MPI_INT64_T")                      \
	X(mpil_dt_uint8, MPIL_DT_UINT8, uint8_t, MPIL_DTG_INT, "MPI_UINT8_T")                      \
	X(mpil_dt_uint16, MPIL_DT_UINT16, uint16_t, MPIL_DTG_INT, "MPI_UINT16_T")                  \
	X(mpil_dt_uint32, MPIL_DT_UINT32, uint32_t, MPIL_DTG_INT, "MPI_UINT32_T")                  \
	X(mpil_dt_uint64, MPIL_DT_UINT64, uint64_t, MPIL_DTG_INT, "MPI_UINT64_T")                  \
	X(mpil_dt_aint, MPIL_DT_AINT, MPI_Aint, MPIL_DTG_MULTI, "MPI_AINT")                        \
	X(mpil_dt_offset, MPIL_DT_OFFSET, MPI_Offset, MPIL_DTG_MULTI, "MPI_OFFSET")                \
	X(mpil_dt_count, MPIL_DT_COUNT, MPI_Count, MPIL_DTG_MULTI, "MPI_COUNT")                    \
	X(mpil_dt_c_float_complex, MPIL_DT_C_FLOAT_COMPLEX, float _Complex, MPIL_DTG_COMPLEX,      \
	  "MPI_C_FLOAT_COMPLEX")                                                                   \
	X(mpil_dt_c_double_complex, MPIL_DT_C_DOUBLE_COMPLEX, double _Complex, MPIL_DTG_COMPLEX,   \
	  "MPI_C_DOUBLE_COMPLEX")                                                                  \
	X(mpil_dt_c_long_double_complex, MPIL_DT_C_LONG_DOUBLE_COMPLEX, long double _Complex,      \
	  MPIL_DTG_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX")                                           \
	/* C++ bool is one byte holding 0 or 1 on the ABIs this runs on. */                        \
	X(mpil_dt_cxx_bool, MPIL_DT_CXX_BOOL, unsigned char, MPIL_DTG_LOGICAL, "MPI_CXX_BOOL")     \
	X(mpil_dt_cxx_float_complex, MPIL_DT_CXX_FLOAT_COMPLEX, float _Complex, MPIL_DTG_COMPLEX,  \
	  "MPI_CXX_FLOAT_COMPLEX")                                                                 \
	X(mpil_dt_cxx_double_complex, MPIL_DT_CXX_DOUBLE_COMPLEX, double _Complex,                 \
	  MPIL_DTG_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX")                                              \
	X(mpil_dt_cxx_long_double_complex, MPIL_DT_CXX_LONG_DOUBLE_COMPLEX, long double _Complex,  \
	  MPIL_DTG_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX")                                         \
	X(mpil_dt_packed, MPIL_DT_PACKED, unsigned char, MPIL_DTG_NONE, "MPI_PACKED")

#define DT_BASIC(var, kind_, ctype, group_, nm)                                                    \
	struct mpil_datatype var = {                                                               \
	    .magic = MPIL_MAGIC_DTYPE,                                                             \
	    .refcount = 1,                                                                         \
	    .kind = kind_,                                                                         \
	    .group = group_,                                                                       \
	    .flags = MPIL_DTF_PREDEFINED | MPIL_DTF_COMMITTED | MPIL_DTF_CONTIG,                   \
	    .size = sizeof(ctype),                                                                 \
	    .lb = 0,                                                                               \
	    .extent = sizeof(ctype),                                                               \
	    .true_lb = 0,                                                                          \
	    .true_extent = sizeof(ctype),                                                          \
	    .elements = 1,                                                                         \
	    .name = nm,                                                                            \
	    .basic = &var,                                                                         \
	};
DT_BASIC_LIST(DT_BASIC)

/* The value-index pairs: value at offset 0, the int index after it, as C
 * lays out the struct. Contiguous only when it has no padding
 * (MPI_FLOAT_INT, MPI_2INT); their extent is the C struct's, which the
 * engine's struct padding rule reproduces. */
#define DT_PAIR_LIST(X)                                                                            \
	X(mpil_dt_float_int, MPIL_DT_FLOAT_INT, mpil_float_int_t, float, mpil_dt_float,            \
	  "MPI_FLOAT_INT")                                                                         \
	X(mpil_dt_double_int, MPIL_DT_DOUBLE_INT, mpil_double_int_t, double, mpil_dt_double,       \
	  "MPI_DOUBLE_INT")                                                                        \
	X(mpil_dt_long_int, MPIL_DT_LONG_INT, mpil_long_int_t, long, mpil_dt_long, "MPI_LONG_INT") \
	X(mpil_dt_2int, MPIL_DT_2INT, mpil_2int_t, int, mpil_dt_int, "MPI_2INT")                   \
	X(mpil_dt_short_int, MPIL_DT_SHORT_INT, mpil_short_int_t, short, mpil_dt_short,            \
	  "MPI_SHORT_INT")                                                                         \
	X(mpil_dt_long_double_int, MPIL_DT_LONG_DOUBLE_INT, mpil_long_double_int_t, long double,   \
	  mpil_dt_long_double, "MPI_LONG_DOUBLE_INT")

#define DT_PAIR(var, kind_, stype, vtype, vdt, nm)                                                 \
	static const mpil_dt_block_t var##_blocks[2] = {                                           \
	    {0, sizeof(vtype)},                                                                    \
	    {offsetof(stype, i), sizeof(int)},                                                     \
	};                                                                                         \
	struct mpil_datatype var = {                                                               \
	    .magic = MPIL_MAGIC_DTYPE,                                                             \
	    .refcount = 1,                                                                         \
	    .kind = kind_,                                                                         \
	    .group = MPIL_DTG_PAIR,                                                                \
	    .flags = MPIL_DTF_PREDEFINED | MPIL_DTF_COMMITTED |                                    \
		     (sizeof(vtype) + sizeof(int) == sizeof(stype) ? MPIL_DTF_CONTIG : 0),         \
	    .size = sizeof(vtype) + sizeof(int),                                                   \
	    .lb = 0,                                                                               \
	    .extent = sizeof(stype),                                                               \
	    .true_lb = 0,                                                                          \
	    .true_extent = offsetof(stype, i) + sizeof(int),                                       \
	    .elements = 2,                                                                         \
	    .nblocks = 2,                                                                          \
	    .blocks = var##_blocks,                                                                \
	    .name = nm,                                                                            \
	    .basic = &var,                                                                         \
	};
DT_PAIR_LIST(DT_PAIR)

/* ---- engine types of the predefined datatypes ------------------------------------- */

static const struct basic_desc {
	MPI_Datatype dt;
	int64_t align;
} basic_descs[] = {
#define DT_DESC(var, kind_, ctype, group_, nm) {&var, alignof(ctype)},
    DT_BASIC_LIST(DT_DESC)
#undef DT_DESC
};

static const struct pair_desc {
	MPI_Datatype dt, value;
	int64_t ioff;
} pair_descs[] = {
#define DT_DESC(var, kind_, stype, vtype, vdt, nm) {&var, &vdt, offsetof(stype, i)},
    DT_PAIR_LIST(DT_DESC)
#undef DT_DESC
};

static void predefined_free_engines(void)
{
	for (size_t i = 0; i < sizeof(pair_descs) / sizeof(pair_descs[0]); i++)
		if (pair_descs[i].dt->engine)
			ibx_dt_free((ibx_dt_t **)&pair_descs[i].dt->engine);
	for (size_t i = 0; i < sizeof(basic_descs) / sizeof(basic_descs[0]); i++)
		if (basic_descs[i].dt->engine)
			ibx_dt_free((ibx_dt_t **)&basic_descs[i].dt->engine);
}

int mpil_dt_init(void)
{
	ibx_status_t st = IBX_OK;

	for (size_t i = 0; i < sizeof(basic_descs) / sizeof(basic_descs[0]) && !st; i++) {
		MPI_Datatype dt = basic_descs[i].dt;
		ibx_dt_t *e = NULL;

		/* the signature code is the kind: two basic types match iff
		 * they are the same predefined type */
		st = ibx_dt_basic(dt->kind, (int64_t)dt->size, basic_descs[i].align, &e);
		if (!st)
			st = ibx_dt_commit(e);
		if (e)
			dt->engine = e;
	}
	for (size_t i = 0; i < sizeof(pair_descs) / sizeof(pair_descs[0]) && !st; i++) {
		const struct pair_desc *p = &pair_descs[i];
		int64_t bl[2] = {1, 1}, disp[2] = {0, p->ioff};
		ibx_dt_t *types[2] = {p->value->engine, mpil_dt_int.engine}, *e = NULL;
		ibx_dt_info_t in;

		st = ibx_dt_struct(2, bl, disp, types, &e);
		if (!st)
			st = ibx_dt_commit(e);
		if (e)
			p->dt->engine = e;
		/* the engine's padding rule must give the C struct's extent */
		if (!st && (ibx_dt_query(e, &in) != IBX_OK || in.extent != p->dt->extent ||
			    in.size != (int64_t)p->dt->size)) {
			ibx_error("%s: engine extent %lld, C struct %lld", p->dt->name,
				  (long long)in.extent, (long long)p->dt->extent);
			st = IBX_ERR_INVALID_PARAM;
		}
	}
	if (st) {
		predefined_free_engines();
		return mpil_err_from_ibx(st) == MPI_SUCCESS ? MPI_ERR_INTERN
							    : mpil_err_from_ibx(st);
	}
	return MPI_SUCCESS;
}

void mpil_dt_fini(void)
{
	mpil_dt_derived_fini();
	predefined_free_engines();
}

/* ---- moving typed data ------------------------------------------------------------------ */

/* buf + off without arithmetic on a NULL pointer (MPI_BOTTOM). */
static inline void *at(const void *buf, MPI_Aint off)
{
	return (void *)((uintptr_t)buf + (uintptr_t)off);
}

void mpil_dt_pack(MPI_Datatype dt, const void *buf, int count, void *out)
{
	int64_t len = (int64_t)count * (int64_t)dt->size;
	ibx_status_t st;

	if (len <= 0)
		return;
	if (mpil_dt_contig(dt)) {
		memcpy(out, at(buf, dt->true_lb), (size_t)len);
		return;
	}
	st = ibx_dt_pack(dt->engine, count, buf, 0, len, out);
	if (ibx_unlikely(st != IBX_OK))
		ibx_error("packing %d elements of %s: %s", count,
			  dt->name ? dt->name : "a datatype", ibx_status_str(st));
}

void mpil_dt_unpack(MPI_Datatype dt, const void *in, size_t nbytes, void *buf)
{
	int64_t count;
	ibx_status_t st;

	if (nbytes == 0 || dt->size == 0)
		return;
	if (mpil_dt_contig(dt)) {
		memcpy(at(buf, dt->true_lb), in, nbytes);
		return;
	}
	count = (int64_t)((nbytes + dt->size - 1) / dt->size);
	st = ibx_dt_unpack(dt->engine, count, buf, 0, (int64_t)nbytes, in);
	if (ibx_unlikely(st != IBX_OK))
		ibx_error("unpacking %zu bytes of %s: %s", nbytes,
			  dt->name ? dt->name : "a datatype", ibx_status_str(st));
}

MPI_Count mpil_dt_elements(MPI_Datatype dt, MPI_Count nbytes)
{
	int64_t n;

	if (dt->size == 0 || nbytes <= 0)
		return 0;
	if (dt->elements == 1 && dt->flags & MPIL_DTF_PREDEFINED)
		return nbytes % (MPI_Count)dt->size ? -1 : nbytes / (MPI_Count)dt->size;
	if (ibx_dt_elements(dt->engine, nbytes, &n) != IBX_OK)
		return -1;
	return n;
}

/* ---- queries ---------------------------------------------------------------------- */

static int check_query(MPI_Datatype dt, const void *out1, const void *out2, const char *what1,
		       const char *what2, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	MPIL_CHECK(mpil_check_dtype_handle(NULL, dt, fname));
	if (!out1 || !out2)
		return mpil_err(NULL, MPI_ERR_ARG, fname, "%s is NULL", out1 ? what2 : what1);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_size)
int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
	static const char F[] = "MPI_Type_size";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_query(datatype, size, size, "size", "size", F));
	*size = datatype->size > INT_MAX ? MPI_UNDEFINED : (int)datatype->size;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_size_x)
int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
	static const char F[] = "MPI_Type_size_x";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_query(datatype, size, size, "size", "size", F));
	*size = (MPI_Count)datatype->size;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_get_extent)
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
	static const char F[] = "MPI_Type_get_extent";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_query(datatype, lb, extent, "lb", "extent", F));
	*lb = datatype->lb;
	*extent = datatype->extent;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_get_extent_x)
int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
	static const char F[] = "MPI_Type_get_extent_x";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_query(datatype, lb, extent, "lb", "extent", F));
	*lb = datatype->lb;
	*extent = datatype->extent;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_get_true_extent)
int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
	static const char F[] = "MPI_Type_get_true_extent";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_query(datatype, true_lb, true_extent, "true_lb", "true_extent", F));
	*true_lb = datatype->true_lb;
	*true_extent = datatype->true_extent;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_get_true_extent_x)
int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
	static const char F[] = "MPI_Type_get_true_extent_x";
	MPIL_CS_GUARD();

	MPIL_CHECK(check_query(datatype, true_lb, true_extent, "true_lb", "true_extent", F));
	*true_lb = datatype->true_lb;
	*true_extent = datatype->true_extent;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_get_name)
int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
	static const char F[] = "MPI_Type_get_name";
	MPIL_CS_GUARD();
	const char *name;

	MPIL_CHECK(check_query(datatype, type_name, resultlen, "type_name", "resultlen", F));
	name = datatype->name ? datatype->name : "";
	snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", name);
	*resultlen = (int)strlen(type_name);
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_set_name)
int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
	static const char F[] = "MPI_Type_set_name";
	MPIL_CS_GUARD();
	char *copy;

	MPIL_CHECK(check_query(datatype, type_name, type_name, "type_name", "type_name", F));
	copy = strndup(type_name, MPI_MAX_OBJECT_NAME - 1);
	if (!copy)
		return mpil_err(NULL, MPI_ERR_NO_MEM, F, "no memory for a name");
	if (datatype->flags & MPIL_DTF_NAME_OWNED)
		free((char *)datatype->name);
	datatype->name = copy;
	datatype->flags |= MPIL_DTF_NAME_OWNED;
	return MPI_SUCCESS;
}

/* ---- addresses ------------------------------------------------------------------------ */

MPIL_PMPI_ALIAS(Get_address)
int PMPI_Get_address(const void *location, MPI_Aint *address)
{
	MPIL_CS_GUARD();
	if (!address)
		return mpil_err(NULL, MPI_ERR_ARG, "MPI_Get_address", "address is NULL");
	*address = (MPI_Aint)(uintptr_t)location;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Aint_add)
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
	MPIL_CS_GUARD();
	return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPIL_PMPI_ALIAS(Aint_diff)
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
	MPIL_CS_GUARD();
	return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

/* ---- MPI_Pack / MPI_Unpack ------------------------------------------------------------------ */

static int check_pack_args(int count, MPI_Datatype dt, const void *buf, const void *packbuf,
			   int packsize, const int *position, MPI_Comm comm, const char *fname)
{
	MPIL_CHECK(mpil_check_init(fname));
	MPIL_CHECK(mpil_check_comm(comm, fname));
	MPIL_CHECK(mpil_check_count(comm, count, fname));
	MPIL_CHECK(mpil_check_dtype(comm, dt, fname));
	MPIL_CHECK(mpil_check_buf(comm, buf, count, dt, fname));
	if (!position)
		return mpil_err(comm, MPI_ERR_ARG, fname, "position is NULL");
	if (packsize < 0)
		return mpil_err(comm, MPI_ERR_ARG, fname, "negative buffer size %d", packsize);
	if (*position < 0 || *position > packsize)
		return mpil_err(comm, MPI_ERR_ARG, fname, "position %d outside the %d-byte buffer",
				*position, packsize);
	if (!packbuf && packsize > 0)
		return mpil_err(comm, MPI_ERR_BUFFER, fname, "packed buffer is NULL");
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Pack)
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
	      int *position, MPI_Comm comm)
{
	static const char F[] = "MPI_Pack";
	MPIL_CS_GUARD();
	uint64_t need;

	MPIL_CHECK(check_pack_args(incount, datatype, inbuf, outbuf, outsize, position, comm, F));
	need = (uint64_t)incount * datatype->size;
	if (need > (uint64_t)(outsize - *position))
		return mpil_err(comm, MPI_ERR_TRUNCATE, F,
				"%d elements of %s need %llu bytes, %d left in the buffer", incount,
				datatype->name ? datatype->name : "the datatype",
				(unsigned long long)need, outsize - *position);
	mpil_dt_pack(datatype, inbuf, incount, (char *)outbuf + *position);
	*position += (int)need;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Unpack)
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
		MPI_Datatype datatype, MPI_Comm comm)
{
	static const char F[] = "MPI_Unpack";
	MPIL_CS_GUARD();
	uint64_t need;

	MPIL_CHECK(check_pack_args(outcount, datatype, outbuf, inbuf, insize, position, comm, F));
	need = (uint64_t)outcount * datatype->size;
	if (need > (uint64_t)(insize - *position))
		return mpil_err(comm, MPI_ERR_TRUNCATE, F,
				"%d elements of %s need %llu bytes, %d left in the buffer",
				outcount, datatype->name ? datatype->name : "the datatype",
				(unsigned long long)need, insize - *position);
	mpil_dt_unpack(datatype, (const char *)inbuf + *position, (size_t)need, outbuf);
	*position += (int)need;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Pack_size)
int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
	static const char F[] = "MPI_Pack_size";
	MPIL_CS_GUARD();
	uint64_t need;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_comm(comm, F));
	MPIL_CHECK(mpil_check_count(comm, incount, F));
	MPIL_CHECK(mpil_check_dtype(comm, datatype, F));
	if (!size)
		return mpil_err(comm, MPI_ERR_ARG, F, "size is NULL");
	need = (uint64_t)incount * datatype->size;
	if (need > INT_MAX)
		return mpil_err(
		    comm, MPI_ERR_ARG, F, "%d elements of %s take %llu bytes (> INT_MAX)", incount,
		    datatype->name ? datatype->name : "the datatype", (unsigned long long)need);
	*size = (int)need;
	return MPI_SUCCESS;
}
