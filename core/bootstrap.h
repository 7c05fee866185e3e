/*
 * bootstrap.h — what core/bootstrap.c shares beyond the ibx_boot_* API of
 * ibx_int.h: the job-id sanitiser, which mpilite-run also uses so that the
 * launcher and the ranks agree on the names of per-job files
 * (/dev/shm/ibx-<jobid>-*).
 */
#ifndef IBX_BOOTSTRAP_H
#define IBX_BOOTSTRAP_H

#include <stddef.h>

/* Room for a job id, terminator included. */
#define IBX_BOOT_JOB_ID_MAX 64

/*
 * Turns a PMIx namespace into a string that is safe inside one file name:
 * only [A-Za-z0-9_.], never starting with '.', never empty, at most
 * outlen - 1 characters. Every other character (including '-', so that
 * "ibx-<jobid>-" is an unambiguous prefix) becomes '_'. An input too long
 * to fit keeps its head and ends in '_' plus 8 hex digits of a hash of the
 * whole input, so long namespaces that share a prefix stay distinct.
 * Deterministic: the launcher and every rank compute the same id.
 */
void ibx_boot_sanitize_id(const char *in, char *out, size_t outlen);

#endif /* IBX_BOOTSTRAP_H */
