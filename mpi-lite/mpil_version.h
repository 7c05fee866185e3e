/*
 * mpil_version.h — what this build of ibx is (version.c): the version, the
 * git commit, the compiler and flags, the sanitizer, and the libraries the
 * build found. MPI_Get_library_version, `mpilite-run --version` and
 * `ibtest info` print it; mpilite-run links version.c alone.
 */
#ifndef MPIL_VERSION_H
#define MPIL_VERSION_H

#include <stddef.h>
#include <stdio.h>

/* One line, as MPI_Get_library_version returns it; cut with "..." to fit
 * @len. Returns the length of what it wrote. */
size_t mpil_version_line(char *buf, size_t len);
/* One item per line ("name  value"), each line starting with @indent; the
 * ibx version is left to the caller's heading. */
void mpil_version_print(FILE *f, const char *indent);

#endif /* MPIL_VERSION_H */
