#!/bin/bash
# exports.sh — the library boundary. An HPC code links libibx or libmpilite
# next to other libraries; a global symbol of ours that is not part of the
# API (a `coll_reduce`, a `dt_commit`) would clash with theirs.
#
#   1. libibx.so exports exactly the functions include/ibx.h declares, plus
#      the libc memory functions the registration cache interposes on purpose
#   2. libmpilite.so exports exactly what mpi.h declares (MPI_*, PMPI_*, the
#      MPIX_* extensions and their PMPIX_* twins, the
#      mpil_* objects behind predefined handles) plus the same interposers;
#      every MPI_ function mpi.h declares is there, and so is its PMPI_ twin
#   3. the static archives (which cannot hide anything) define no global
#      symbol without its layer prefix: ibx_ in libibx.a; MPI_, PMPI_,
#      MPIX_, PMPIX_ or mpil_ in libmpilite.a
#   4. programs linked against the shared libraries run: the engine example
#      against libibx.so, the MPI example against libmpilite.so (also built
#      with `mpilite-cc -shared-mpilite`)
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
LIB=$BUILD/lib
RUN=$BUILD/bin/mpilite-run
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

case $BUILD in *asan* | *tsan*)
	echo "sanitizer build: no shared libraries"
	exit 77
	;;
esac
for f in "$LIB/libibx.so" "$LIB/libmpilite.so" "$LIB/libibx.a" "$LIB/libmpilite.a" "$RUN"; do
	[ -e "$f" ] || { echo "no $f: run make first"; exit 1; }
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

INTERPOSED="brk madvise malloc_trim mmap mmap64 mremap munmap sbrk"

# dynamic_syms LIB: the names a shared library defines for the dynamic linker
dynamic_syms() { nm -D --defined-only "$1" | awk 'NF == 3 { print $3 }' | sort -u; }
# header_names HEADER REGEX: the identifiers a public header declares
header_names() { grep -o "$2" "$1" | sed 's/($//' | sort -u; }
# expect_set WHAT HAVE WANT: two sorted name lists must be equal
expect_set() {
	local extra missing
	extra=$(comm -23 "$2" "$3")
	missing=$(comm -13 "$2" "$3")
	[ -z "$extra" ] || fail "$1 exports what its header does not declare:" $extra
	[ -z "$missing" ] || fail "$1 does not export what its header declares:" $missing
}

# 1. libibx.so
{
	header_names include/ibx.h '^IBX_API [^(]*\bibx_[a-z_]*(' | sed 's/.* \**//'
	printf '%s\n' $INTERPOSED
} | sort -u >"$TMP/ibx.want"
dynamic_syms "$LIB/libibx.so" >"$TMP/ibx.have"
[ "$(grep -c '^ibx_' "$TMP/ibx.want")" -ge 15 ] || fail "found only $(grep -c '^ibx_' "$TMP/ibx.want") IBX_API functions in ibx.h"
expect_set libibx.so "$TMP/ibx.have" "$TMP/ibx.want"

# 2. libmpilite.so: functions, then the objects behind predefined handles
H=mpi-lite/include/mpi.h
{
	header_names $H '^MPIL_API [^(]*\b\(P\?MPIX\?_[A-Za-z_]*\|mpil_[a-z_]*\)(' | sed 's/.* \**//'
	# the objects: every name in an "extern MPIL_API struct mpil_x a, b, ...;"
	sed -n '/^extern MPIL_API struct/,/;/p' $H | sed 's/^extern MPIL_API struct mpil_[a-z]*//' |
		tr ',;' '\n\n' | tr -d ' \t' | grep '^mpil_'
	printf '%s\n' $INTERPOSED
} | sort -u >"$TMP/mpil.want"
dynamic_syms "$LIB/libmpilite.so" >"$TMP/mpil.have"
[ "$(grep -c '^MPI_' "$TMP/mpil.want")" -ge 120 ] || fail "found only $(grep -c '^MPI_' "$TMP/mpil.want") MPI_ functions in mpi.h"
[ "$(grep -c '^mpil_dt_' "$TMP/mpil.want")" -ge 30 ] || fail "found only $(grep -c '^mpil_dt_' "$TMP/mpil.want") predefined datatypes in mpi.h"
expect_set libmpilite.so "$TMP/mpil.have" "$TMP/mpil.want"
# every MPI_X (MPIX_X) has its profiling twin PMPI_X (PMPIX_X)
for f in $(grep '^MPIX\?_' "$TMP/mpil.have"); do
	grep -qx "P$f" "$TMP/mpil.have" || fail "libmpilite.so has $f but not P$f"
done

# 3. archives
archive_leaks() { # ARCHIVE ALLOWED-REGEX
	nm -g --defined-only "$1" | awk 'NF == 3 { print $3 }' | sort -u | grep -v -E "$2" |
		grep -v -x -F -f <(printf '%s\n' $INTERPOSED) || true
}
leaks=$(archive_leaks "$LIB/libibx.a" '^ibx_')
[ -z "$leaks" ] || fail "libibx.a defines globals without the ibx_ prefix:" $leaks
leaks=$(archive_leaks "$LIB/libmpilite.a" '^(P?MPIX?_|mpil_)')
[ -z "$leaks" ] || fail "libmpilite.a defines globals without the MPI_/PMPI_/MPIX_/PMPIX_/mpil_ prefix:" $leaks

# 4. programs against the shared libraries
for ex in engine_ring engine_rma ring; do
	bin=$BUILD/examples/$ex
	[ -x "$bin" ] || { fail "$bin not built"; continue; }
	want=$([ $ex = ring ] && echo libmpilite.so || echo libibx.so)
	ldd "$bin" | grep -q "$want" || fail "$ex is not linked against $want"
	out=$(timeout 60 "$RUN" -n 3 "$bin" 5 2>&1) || fail "$ex -n 3: exit $?: $out"
done
"$BUILD/bin/mpilite-cc" -shared-mpilite -o "$TMP/ring" examples/ring.c || fail "mpilite-cc -shared-mpilite"
if [ -x "$TMP/ring" ]; then
	ldd "$TMP/ring" | grep -q libmpilite.so || fail "mpilite-cc -shared-mpilite did not link libmpilite.so"
	ldd "$TMP/ring" | grep -q libibx.so && fail "mpilite-cc -shared-mpilite also linked libibx.so (two engines)"
	out=$(timeout 60 "$RUN" -n 2 "$TMP/ring" 2>&1) || fail "ring (shared) -n 2: exit $?: $out"
fi

[ $FAILS -eq 0 ] || exit 1
echo "exports: libibx.so $(wc -l <"$TMP/ibx.have") symbols, libmpilite.so $(wc -l <"$TMP/mpil.have") symbols, as the headers declare"
