/* ibx-test: np=1,2,3,4 timeout=60 */
/*
 * environment — MPI_Init_thread with every level (rank r asks for level
 * r % 4: provided must be what was required, or min(required, SERIALIZED)
 * when IBX_THREAD_MULTIPLE=n refuses MULTIPLE: environment_nomt), Query_thread,
 * Is_thread_main, Initialized/Finalized around Init and Finalize, Wtime
 * (monotonic, advancing) and Wtick, processor name, versions, the
 * predefined attributes, communicator names, and the sizes and extents of
 * the predefined datatypes.
 */
#include "mpitest.h"

#include <complex.h>
#include <stdbool.h>
#include <unistd.h>
#include <wchar.h>

static void test_types(void)
{
	static const struct {
		MPI_Datatype t;
		size_t size;
		const char *name;
	} tab[] = {
	    {MPI_CHAR, sizeof(char), "MPI_CHAR"},
	    {MPI_SIGNED_CHAR, sizeof(signed char), "MPI_SIGNED_CHAR"},
	    {MPI_UNSIGNED_CHAR, sizeof(unsigned char), "MPI_UNSIGNED_CHAR"},
	    {MPI_BYTE, 1, "MPI_BYTE"},
	    {MPI_WCHAR, sizeof(wchar_t), "MPI_WCHAR"},
	    {MPI_SHORT, sizeof(short), "MPI_SHORT"},
	    {MPI_UNSIGNED_SHORT, sizeof(unsigned short), "MPI_UNSIGNED_SHORT"},
	    {MPI_INT, sizeof(int), "MPI_INT"},
	    {MPI_UNSIGNED, sizeof(unsigned), "MPI_UNSIGNED"},
	    {MPI_LONG, sizeof(long), "MPI_LONG"},
	    {MPI_UNSIGNED_LONG, sizeof(unsigned long), "MPI_UNSIGNED_LONG"},
	    {MPI_LONG_LONG_INT, sizeof(long long), "MPI_LONG_LONG_INT"},
	    {MPI_LONG_LONG, sizeof(long long), "MPI_LONG_LONG_INT"},
	    {MPI_UNSIGNED_LONG_LONG, sizeof(unsigned long long), "MPI_UNSIGNED_LONG_LONG"},
	    {MPI_FLOAT, sizeof(float), "MPI_FLOAT"},
	    {MPI_DOUBLE, sizeof(double), "MPI_DOUBLE"},
	    {MPI_LONG_DOUBLE, sizeof(long double), "MPI_LONG_DOUBLE"},
	    {MPI_C_BOOL, sizeof(bool), "MPI_C_BOOL"},
	    {MPI_INT8_T, 1, "MPI_INT8_T"},
	    {MPI_INT16_T, 2, "MPI_INT16_T"},
	    {MPI_INT32_T, 4, "MPI_INT32_T"},
	    {MPI_INT64_T, 8, "MPI_INT64_T"},
	    {MPI_UINT8_T, 1, "MPI_UINT8_T"},
	    {MPI_UINT16_T, 2, "MPI_UINT16_T"},
	    {MPI_UINT32_T, 4, "MPI_UINT32_T"},
	    {MPI_UINT64_T, 8, "MPI_UINT64_T"},
	    {MPI_AINT, sizeof(MPI_Aint), "MPI_AINT"},
	    {MPI_OFFSET, sizeof(MPI_Offset), "MPI_OFFSET"},
	    {MPI_COUNT, sizeof(MPI_Count), "MPI_COUNT"},
	    {MPI_C_COMPLEX, sizeof(float complex), "MPI_C_FLOAT_COMPLEX"},
	    {MPI_C_FLOAT_COMPLEX, sizeof(float complex), "MPI_C_FLOAT_COMPLEX"},
	    {MPI_C_DOUBLE_COMPLEX, sizeof(double complex), "MPI_C_DOUBLE_COMPLEX"},
	    {MPI_C_LONG_DOUBLE_COMPLEX, sizeof(long double complex), "MPI_C_LONG_DOUBLE_COMPLEX"},
	    {MPI_CXX_BOOL, 1, "MPI_CXX_BOOL"},
	    {MPI_CXX_FLOAT_COMPLEX, sizeof(float complex), "MPI_CXX_FLOAT_COMPLEX"},
	    {MPI_CXX_DOUBLE_COMPLEX, sizeof(double complex), "MPI_CXX_DOUBLE_COMPLEX"},
	    {MPI_CXX_LONG_DOUBLE_COMPLEX, sizeof(long double complex),
	     "MPI_CXX_LONG_DOUBLE_COMPLEX"},
	    {MPI_PACKED, 1, "MPI_PACKED"},
	    /* pairs: size is the data (value + int), extent the C struct */
	    {MPI_FLOAT_INT, sizeof(float) + sizeof(int), "MPI_FLOAT_INT"},
	    {MPI_DOUBLE_INT, sizeof(double) + sizeof(int), "MPI_DOUBLE_INT"},
	    {MPI_LONG_INT, sizeof(long) + sizeof(int), "MPI_LONG_INT"},
	    {MPI_2INT, 2 * sizeof(int), "MPI_2INT"},
	    {MPI_SHORT_INT, sizeof(short) + sizeof(int), "MPI_SHORT_INT"},
	    {MPI_LONG_DOUBLE_INT, sizeof(long double) + sizeof(int), "MPI_LONG_DOUBLE_INT"},
	};
	struct {
		double v;
		int i;
	} di;
	struct {
		short v;
		int i;
	} si;
	struct ldi_s {
		long double v;
		int i;
	} ldi;

	for (size_t k = 0; k < sizeof(tab) / sizeof(tab[0]); k++) {
		int sz, len;
		MPI_Count szx;
		MPI_Aint lb, ext;
		char name[MPI_MAX_OBJECT_NAME];

		MPI_OK(MPI_Type_size(tab[k].t, &sz));
		CHECK((size_t)sz == tab[k].size, "%s: size %d, expected %zu", tab[k].name, sz,
		      tab[k].size);
		MPI_OK(MPI_Type_size_x(tab[k].t, &szx));
		CHECK(szx == sz, "%s: Type_size_x %lld", tab[k].name, (long long)szx);
		MPI_OK(MPI_Type_get_extent(tab[k].t, &lb, &ext));
		CHECK(lb == 0 && ext >= sz, "%s: lb %ld extent %ld", tab[k].name, (long)lb,
		      (long)ext);
		MPI_OK(MPI_Type_get_name(tab[k].t, name, &len));
		CHECK(strcmp(name, tab[k].name) == 0 && (size_t)len == strlen(name),
		      "type name \"%s\", expected \"%s\"", name, tab[k].name);
	}
	MPI_Aint lb, ext;

	MPI_OK(MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &ext));
	CHECK(ext == (MPI_Aint)sizeof(di), "MPI_DOUBLE_INT extent %ld", (long)ext);
	MPI_OK(MPI_Type_get_extent(MPI_SHORT_INT, &lb, &ext));
	CHECK(ext == (MPI_Aint)sizeof(si), "MPI_SHORT_INT extent %ld", (long)ext);
	/* the true extent covers the data, not the struct's tail padding */
	MPI_OK(MPI_Type_get_true_extent(MPI_LONG_DOUBLE_INT, &lb, &ext));
	CHECK(lb == 0 && ext == (MPI_Aint)(offsetof(struct ldi_s, i) + sizeof(int)),
	      "MPI_LONG_DOUBLE_INT true extent %ld", (long)ext);
	MPI_OK(MPI_Type_get_extent(MPI_LONG_DOUBLE_INT, &lb, &ext));
	CHECK(lb == 0 && ext == (MPI_Aint)sizeof(ldi), "MPI_LONG_DOUBLE_INT extent %ld", (long)ext);
}

int main(int argc, char **argv)
{
	int flag, provided, required, rank, size, len, v, sv;
	char name[MPI_MAX_PROCESSOR_NAME], host[MPI_MAX_PROCESSOR_NAME];
	char lib[MPI_MAX_LIBRARY_VERSION_STRING];
	int *attr;
	double t0, t1, tick;

	/* Callable before MPI_Init. */
	MPI_OK(MPI_Initialized(&flag));
	CHECK(!flag, "Initialized true before MPI_Init");
	MPI_OK(MPI_Finalized(&flag));
	CHECK(!flag, "Finalized true before MPI_Init");
	MPI_OK(MPI_Get_version(&v, &sv));
	CHECK(v == 3 && sv == 1 && v == MPI_VERSION && sv == MPI_SUBVERSION, "version %d.%d", v,
	      sv);
	MPI_OK(MPI_Get_library_version(lib, &len));
	/* "mpi-lite (ibx 0.1.0), MPI 3.1, git <commit>, <libraries>, <compiler>" */
	CHECK(!strncmp(lib, "mpi-lite (ibx ", 14) && strstr(lib, "), MPI 3.1, git ") &&
		  strstr(lib, "PMIx ") && (size_t)len == strlen(lib) &&
		  len < MPI_MAX_LIBRARY_VERSION_STRING,
	      "library version \"%s\" (%d)", lib, len);

	/* The rank is not known before init: take the level from the
	 * launcher's rank variables when there are some. */
	const char *rs = getenv("OMPI_COMM_WORLD_RANK");

	if (!rs)
		rs = getenv("PMIX_RANK");
	required = rs ? atoi(rs) % 4 : MPI_THREAD_MULTIPLE;
	MPI_OK(MPI_Init_thread(&argc, &argv, required, &provided));
	MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
	MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
	mt_rank = rank;
	{
		const char *mt = getenv("IBX_THREAD_MULTIPLE");
		bool refused = mt && (mt[0] == 'n' || mt[0] == 'N' || mt[0] == '0');
		int expect =
		    refused && required > MPI_THREAD_SERIALIZED ? MPI_THREAD_SERIALIZED : required;

		CHECK(provided == expect, "required %d: provided %d, expected %d", required,
		      provided, expect);
	}
	MPI_OK(MPI_Query_thread(&v));
	CHECK(v == provided, "Query_thread %d, provided %d", v, provided);
	MPI_OK(MPI_Is_thread_main(&flag));
	CHECK(flag, "Is_thread_main false on the main thread");
	MPI_OK(MPI_Initialized(&flag));
	CHECK(flag, "Initialized false after MPI_Init_thread");
	MPI_OK(MPI_Finalized(&flag));
	CHECK(!flag, "Finalized true before MPI_Finalize");

	/* Clocks. */
	tick = MPI_Wtick();
	CHECK(tick > 0 && tick < 1e-3, "Wtick %g", tick);
	t0 = MPI_Wtime();
	for (int i = 0; i < 100000; i++) {
		t1 = MPI_Wtime();
		CHECK(t1 >= t0, "Wtime went backwards: %.9f then %.9f", t0, t1);
		t0 = t1;
	}
	t0 = MPI_Wtime();
	usleep(2000);
	t1 = MPI_Wtime();
	CHECK(t1 > t0, "Wtime did not advance across a sleep");

	/* Names. */
	MPI_OK(MPI_Get_processor_name(name, &len));
	CHECK(len > 0 && (size_t)len == strlen(name), "processor name \"%s\" (%d)", name, len);
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = 0;
	CHECK(strcmp(name, host) == 0, "processor name \"%s\", host \"%s\"", name, host);
	MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
	CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "world name \"%s\"", name);
	MPI_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
	CHECK(strcmp(name, "MPI_COMM_SELF") == 0, "self name \"%s\"", name);
	MPI_OK(MPI_Comm_set_name(MPI_COMM_SELF, "my self"));
	MPI_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
	CHECK(strcmp(name, "my self") == 0 && len == 7, "renamed self \"%s\"", name);

	/* Attributes. */
	MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &attr, &flag));
	CHECK(flag && *attr >= 32767, "MPI_TAG_UB");
	MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &attr, &flag));
	CHECK(!flag || *attr == 0 || *attr == 1, "MPI_WTIME_IS_GLOBAL %d", *attr);
	MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &attr, &flag));
	CHECK(!flag || *attr >= size, "MPI_UNIVERSE_SIZE %d", *attr);
	MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &attr, &flag));
	CHECK(flag && (*attr == MPI_PROC_NULL || (*attr >= 0 && *attr < size)), "MPI_HOST");
	MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &attr, &flag));
	CHECK(flag && (*attr == MPI_ANY_SOURCE || *attr == MPI_PROC_NULL ||
		       (*attr >= 0 && *attr < size)),
	      "MPI_IO");

	test_types();

	MPI_OK(MPI_Finalize());
	MPI_OK(MPI_Initialized(&flag));
	CHECK(flag, "Initialized false after MPI_Finalize");
	MPI_OK(MPI_Finalized(&flag));
	CHECK(flag, "Finalized false after MPI_Finalize");
	if (rank == 0)
		printf("environment: OK on %d ranks (rank 0 asked for level %d, got %d)\n", size,
		       required, provided);
	return 0;
}
