/*
 * datatype.c — the predefined datatypes of MPI-3.1 for C, packing of the
 * non-contiguous ones, and the datatype queries.
 *
 * Almost every predefined type is one contiguous C object: it is sent and
 * received as its bytes. The value-index pairs for MPI_MAXLOC/MPI_MINLOC
 * (MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT) carry
 * padding inside their C struct: their size (value + int) is smaller than
 * their extent (the struct), so they are packed for transfer through a
 * two-block typemap. Derived types will hang their core/dtype_rdma
 * representation on mpil_datatype.engine and pack through it.
 */
#include "mpil_int.h"

#include <stdlib.h>
#include <wchar.h>

#define DT_BASIC(var, kind_, ctype, group_, nm)                                             \
	struct mpil_datatype var = {                                                        \
		.magic = MPIL_MAGIC_DTYPE, .refcount = 1, .kind = kind_, .group = group_,  \
		.flags = MPIL_DTF_PREDEFINED | MPIL_DTF_COMMITTED | MPIL_DTF_CONTIG,       \
		.size = sizeof(ctype), .lb = 0, .extent = sizeof(ctype), .true_lb = 0,      \
		.true_extent = sizeof(ctype), .elements = 1, .name = nm,                    \
	}

DT_BASIC(mpil_dt_char, MPIL_DT_CHAR, char, MPIL_DTG_NONE, "MPI_CHAR");
DT_BASIC(mpil_dt_signed_char, MPIL_DT_SIGNED_CHAR, signed char, MPIL_DTG_INT, "MPI_SIGNED_CHAR");
DT_BASIC(mpil_dt_unsigned_char, MPIL_DT_UNSIGNED_CHAR, unsigned char, MPIL_DTG_INT,
	 "MPI_UNSIGNED_CHAR");
DT_BASIC(mpil_dt_byte, MPIL_DT_BYTE, unsigned char, MPIL_DTG_BYTE, "MPI_BYTE");
DT_BASIC(mpil_dt_wchar, MPIL_DT_WCHAR, wchar_t, MPIL_DTG_NONE, "MPI_WCHAR");
DT_BASIC(mpil_dt_short, MPIL_DT_SHORT, short, MPIL_DTG_INT, "MPI_SHORT");
DT_BASIC(mpil_dt_unsigned_short, MPIL_DT_UNSIGNED_SHORT, unsigned short, MPIL_DTG_INT,
	 "MPI_UNSIGNED_SHORT");
DT_BASIC(mpil_dt_int, MPIL_DT_INT, int, MPIL_DTG_INT, "MPI_INT");
DT_BASIC(mpil_dt_unsigned, MPIL_DT_UNSIGNED, unsigned, MPIL_DTG_INT, "MPI_UNSIGNED");
DT_BASIC(mpil_dt_long, MPIL_DT_LONG, long, MPIL_DTG_INT, "MPI_LONG");
DT_BASIC(mpil_dt_unsigned_long, MPIL_DT_UNSIGNED_LONG, unsigned long, MPIL_DTG_INT,
	 "MPI_UNSIGNED_LONG");
DT_BASIC(mpil_dt_long_long, MPIL_DT_LONG_LONG, long long, MPIL_DTG_INT, "MPI_LONG_LONG_INT");
DT_BASIC(mpil_dt_unsigned_long_long, MPIL_DT_UNSIGNED_LONG_LONG, unsigned long long,
	 MPIL_DTG_INT, "MPI_UNSIGNED_LONG_LONG");
DT_BASIC(mpil_dt_float, MPIL_DT_FLOAT, float, MPIL_DTG_FLOAT, "MPI_FLOAT");
DT_BASIC(mpil_dt_double, MPIL_DT_DOUBLE, double, MPIL_DTG_FLOAT, "MPI_DOUBLE");
DT_BASIC(mpil_dt_long_double, MPIL_DT_LONG_DOUBLE, long double, MPIL_DTG_FLOAT,
	 "MPI_LONG_DOUBLE");
DT_BASIC(mpil_dt_c_bool, MPIL_DT_C_BOOL, _Bool, MPIL_DTG_LOGICAL, "MPI_C_BOOL");
DT_BASIC(mpil_dt_int8, MPIL_DT_INT8, int8_t, MPIL_DTG_INT, "MPI_INT8_T");
DT_BASIC(mpil_dt_int16, MPIL_DT_INT16, int16_t, MPIL_DTG_INT, "MPI_INT16_T");
DT_BASIC(mpil_dt_int32, MPIL_DT_INT32, int32_t, MPIL_DTG_INT, "MPI_INT32_T");
DT_BASIC(mpil_dt_int64, MPIL_DT_INT64, int64_t, MPIL_DTG_INT, "MPI_INT64_T");
DT_BASIC(mpil_dt_uint8, MPIL_DT_UINT8, uint8_t, MPIL_DTG_INT, "MPI_UINT8_T");
DT_BASIC(mpil_dt_uint16, MPIL_DT_UINT16, uint16_t, MPIL_DTG_INT, "MPI_UINT16_T");
DT_BASIC(mpil_dt_uint32, MPIL_DT_UINT32, uint32_t, MPIL_DTG_INT, "MPI_UINT32_T");
DT_BASIC(mpil_dt_uint64, MPIL_DT_UINT64, uint64_t, MPIL_DTG_INT, "MPI_UINT64_T");
DT_BASIC(mpil_dt_aint, MPIL_DT_AINT, MPI_Aint, MPIL_DTG_MULTI, "MPI_AINT");
DT_BASIC(mpil_dt_offset, MPIL_DT_OFFSET, MPI_Offset, MPIL_DTG_MULTI, "MPI_OFFSET");
DT_BASIC(mpil_dt_count, MPIL_DT_COUNT, MPI_Count, MPIL_DTG_MULTI, "MPI_COUNT");
DT_BASIC(mpil_dt_c_float_complex, MPIL_DT_C_FLOAT_COMPLEX, float _Complex, MPIL_DTG_COMPLEX,
	 "MPI_C_FLOAT_COMPLEX");
DT_BASIC(mpil_dt_c_double_complex, MPIL_DT_C_DOUBLE_COMPLEX, double _Complex, MPIL_DTG_COMPLEX,
	 "MPI_C_DOUBLE_COMPLEX");
DT_BASIC(mpil_dt_c_long_double_complex, MPIL_DT_C_LONG_DOUBLE_COMPLEX, long double _Complex,
	 MPIL_DTG_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX");
/* C++ bool is one byte holding 0 or 1 on the ABIs this runs on. */
DT_BASIC(mpil_dt_cxx_bool, MPIL_DT_CXX_BOOL, unsigned char, MPIL_DTG_LOGICAL, "MPI_CXX_BOOL");
DT_BASIC(mpil_dt_cxx_float_complex, MPIL_DT_CXX_FLOAT_COMPLEX, float _Complex,
	 MPIL_DTG_COMPLEX, "MPI_CXX_FLOAT_COMPLEX");
DT_BASIC(mpil_dt_cxx_double_complex, MPIL_DT_CXX_DOUBLE_COMPLEX, double _Complex,
	 MPIL_DTG_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX");
DT_BASIC(mpil_dt_cxx_long_double_complex, MPIL_DT_CXX_LONG_DOUBLE_COMPLEX,
	 long double _Complex, MPIL_DTG_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX");
DT_BASIC(mpil_dt_packed, MPIL_DT_PACKED, unsigned char, MPIL_DTG_NONE, "MPI_PACKED");

/* Pairs: value at offset 0, the int index after it. Contiguous only when
 * the struct has no padding (MPI_FLOAT_INT, MPI_2INT). */
#define DT_PAIR(var, kind_, stype, vtype, nm)                                               \
	static const mpil_dt_block_t var##_blocks[2] = {                                    \
		{ 0, sizeof(vtype) },                                                       \
		{ offsetof(stype, i), sizeof(int) },                                        \
	};                                                                                  \
	struct mpil_datatype var = {                                                        \
		.magic = MPIL_MAGIC_DTYPE, .refcount = 1, .kind = kind_,                   \
		.group = MPIL_DTG_PAIR,                                                     \
		.flags = MPIL_DTF_PREDEFINED | MPIL_DTF_COMMITTED |                         \
			 (sizeof(vtype) + sizeof(int) == sizeof(stype) ? MPIL_DTF_CONTIG : 0), \
		.size = sizeof(vtype) + sizeof(int), .lb = 0, .extent = sizeof(stype),      \
		.true_lb = 0, .true_extent = sizeof(stype), .elements = 2, .nblocks = 2,    \
		.blocks = var##_blocks, .name = nm,                                         \
	}

DT_PAIR(mpil_dt_float_int, MPIL_DT_FLOAT_INT, mpil_float_int_t, float, "MPI_FLOAT_INT");
DT_PAIR(mpil_dt_double_int, MPIL_DT_DOUBLE_INT, mpil_double_int_t, double, "MPI_DOUBLE_INT");
DT_PAIR(mpil_dt_long_int, MPIL_DT_LONG_INT, mpil_long_int_t, long, "MPI_LONG_INT");
DT_PAIR(mpil_dt_2int, MPIL_DT_2INT, mpil_2int_t, int, "MPI_2INT");
DT_PAIR(mpil_dt_short_int, MPIL_DT_SHORT_INT, mpil_short_int_t, short, "MPI_SHORT_INT");
DT_PAIR(mpil_dt_long_double_int, MPIL_DT_LONG_DOUBLE_INT, mpil_long_double_int_t, long double,
	"MPI_LONG_DOUBLE_INT");

/* ---- packing ------------------------------------------------------------------ */

void mpil_dt_pack(MPI_Datatype dt, const void *buf, int count, void *out)
{
	const char *src = (const char *)buf;
	char *dst = out;

	if (mpil_dt_contig(dt)) {
		memcpy(dst, src + dt->true_lb, (size_t)count * dt->size);
		return;
	}
	for (int e = 0; e < count; e++, src += dt->extent) {
		for (int b = 0; b < dt->nblocks; b++) {
			memcpy(dst, src + dt->blocks[b].disp, dt->blocks[b].len);
			dst += dt->blocks[b].len;
		}
	}
}

void mpil_dt_unpack(MPI_Datatype dt, const void *in, size_t nbytes, void *buf)
{
	const char *src = in;
	char *dst = buf;

	if (mpil_dt_contig(dt)) {
		memcpy(dst + dt->true_lb, src, nbytes);
		return;
	}
	while (nbytes) {
		for (int b = 0; b < dt->nblocks && nbytes; b++) {
			size_t n = dt->blocks[b].len < nbytes ? dt->blocks[b].len : nbytes;

			memcpy(dst + dt->blocks[b].disp, src, n);
			src += n;
			nbytes -= n;
		}
		dst += dt->extent;
	}
}

MPI_Count mpil_dt_elements(MPI_Datatype dt, MPI_Count nbytes)
{
	MPI_Count full, rem, n;

	if (dt->size == 0)
		return 0;
	full = nbytes / (MPI_Count)dt->size;
	rem = nbytes % (MPI_Count)dt->size;
	n = full * dt->elements;
	if (rem == 0)
		return n;
	if (!dt->blocks)
		return -1; /* a basic type cut in the middle */
	/* Each block of a pair is one basic element. */
	for (int b = 0; b < dt->nblocks && rem > 0; b++) {
		if (rem < (MPI_Count)dt->blocks[b].len)
			return -1;
		rem -= (MPI_Count)dt->blocks[b].len;
		n++;
	}
	return n;
}

/* ---- queries ---------------------------------------------------------------------- */

MPIL_PMPI_ALIAS(Type_size)
int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
	static const char F[] = "MPI_Type_size";

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_dtype(NULL, datatype, F));
	if (!size)
		return mpil_err(NULL, MPI_ERR_ARG, F, "size is NULL");
	*size = datatype->size > INT_MAX ? MPI_UNDEFINED : (int)datatype->size;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_size_x)
int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
	static const char F[] = "MPI_Type_size_x";

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_dtype(NULL, datatype, F));
	if (!size)
		return mpil_err(NULL, MPI_ERR_ARG, F, "size is NULL");
	*size = (MPI_Count)datatype->size;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_get_extent)
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
	static const char F[] = "MPI_Type_get_extent";

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_dtype(NULL, datatype, F));
	if (!lb || !extent)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL", lb ? "extent" : "lb");
	*lb = datatype->lb;
	*extent = datatype->extent;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_get_true_extent)
int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
	static const char F[] = "MPI_Type_get_true_extent";

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_dtype(NULL, datatype, F));
	if (!true_lb || !true_extent)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL",
				true_lb ? "true_extent" : "true_lb");
	*true_lb = datatype->true_lb;
	*true_extent = datatype->true_extent;
	return MPI_SUCCESS;
}

MPIL_PMPI_ALIAS(Type_get_name)
int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
	static const char F[] = "MPI_Type_get_name";
	const char *name;

	MPIL_CHECK(mpil_check_init(F));
	MPIL_CHECK(mpil_check_dtype(NULL, datatype, F));
	if (!type_name || !resultlen)
		return mpil_err(NULL, MPI_ERR_ARG, F, "%s is NULL",
				type_name ? "resultlen" : "type_name");
	name = datatype->name ? datatype->name : "";
	snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", name);
	*resultlen = (int)strlen(type_name);
	return MPI_SUCCESS;
}
