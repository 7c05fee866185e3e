/*
 * version.c — what this build of ibx is: the version (ibx.h), the MPI
 * version mpi-lite reports (mpi.h), the git commit the tree was at, the
 * compiler with its version and flags, the sanitizer, and the version of
 * each library the build found with pkg-config.
 *
 * The Makefile hands these to this one object (-DIBX_BUILD_*) and recompiles
 * it when one changes, a new commit included; the rest of the tree never
 * sees them, so nothing else is rebuilt for them. Compiled some other way,
 * the items it was not told read "unknown".
 */
#include "mpil_version.h"

#include "ibx.h"
#include "mpi.h"

#include <string.h>

#ifndef IBX_BUILD_GIT
#define IBX_BUILD_GIT "unknown"
#endif
#ifndef IBX_BUILD_CC
#define IBX_BUILD_CC "cc"
#endif
#ifndef IBX_BUILD_CFLAGS
#define IBX_BUILD_CFLAGS "unknown"
#endif
#ifndef IBX_BUILD_SAN
#define IBX_BUILD_SAN "unknown"
#endif
#ifndef IBX_BUILD_PMIX
#define IBX_BUILD_PMIX "unknown"
#endif
#ifndef IBX_BUILD_IBVERBS
#define IBX_BUILD_IBVERBS "unknown"
#endif
#ifndef IBX_BUILD_RDMACM
#define IBX_BUILD_RDMACM "unknown"
#endif
#ifndef IBX_BUILD_NUMA
#define IBX_BUILD_NUMA "unknown"
#endif

#define STR_(x)		#x
#define STR(x)		STR_(x)
#define IBX_VERSION_STR STR(IBX_VERSION_MAJOR) "." STR(IBX_VERSION_MINOR) "." STR(IBX_VERSION_PATCH)
#define MPI_VERSION_STR STR(MPI_VERSION) "." STR(MPI_SUBVERSION)

/* __VERSION__ is "12.2.0" for gcc, "Debian Clang 14.0.6" for clang */
static const char compiler[] = IBX_BUILD_CC " " __VERSION__;
static const char sanitizer[] = IBX_BUILD_SAN;

size_t mpil_version_line(char *buf, size_t len)
{
	int n;

	if (!len)
		return 0;
	n = snprintf(
	    buf, len,
	    "mpi-lite (ibx " IBX_VERSION_STR "), MPI " MPI_VERSION_STR ", git " IBX_BUILD_GIT
	    ", PMIx " IBX_BUILD_PMIX ", libibverbs " IBX_BUILD_IBVERBS
	    ", librdmacm " IBX_BUILD_RDMACM ", libnuma " IBX_BUILD_NUMA ", %s%s, %s %s",
	    sanitizer[0] ? "sanitizer " : "no sanitizer", sanitizer, compiler, IBX_BUILD_CFLAGS);
	if (n < 0) {
		buf[0] = '\0';
		return 0;
	}
	/* too long (the flags come last, so they are what is cut) */
	if ((size_t)n >= len) {
		if (len > 4)
			memcpy(buf + len - 4, "...", 4);
		return strlen(buf);
	}
	return (size_t)n;
}

void mpil_version_print(FILE *f, const char *indent)
{
	fprintf(f,
		"%sMPI          %s (mpi-lite)\n"
		"%sgit commit   %s\n"
		"%scompiler     %s\n"
		"%sCFLAGS       %s\n"
		"%ssanitizer    %s\n"
		"%sPMIx         %s (pkg-config at build time)\n"
		"%slibibverbs   %s\n"
		"%slibrdmacm    %s\n"
		"%slibnuma      %s\n",
		indent, MPI_VERSION_STR, indent, IBX_BUILD_GIT, indent, compiler, indent,
		IBX_BUILD_CFLAGS, indent, sanitizer[0] ? sanitizer : "none", indent, IBX_BUILD_PMIX,
		indent, IBX_BUILD_IBVERBS, indent, IBX_BUILD_RDMACM, indent, IBX_BUILD_NUMA);
}
