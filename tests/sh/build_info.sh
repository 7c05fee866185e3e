#!/bin/bash
# build_info.sh — the build configuration (mpi-lite/version.c) is reported
# the same three ways: `mpilite-run --version`, `ibtest info` and
# MPI_Get_library_version (a program built with mpilite-cc prints it):
#
#   1. the ibx version is ibx.h's, the MPI version mpi.h's
#   2. the git commit is 12 hex digits, or "unknown" outside a git checkout
#   3. the compiler is the one mpilite-cc uses, with its version
#   4. each library pkg-config knows here is listed with that version
#   5. the three reports agree, and the library string fits its buffer
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RUN=$BUILD/bin/mpilite-run
IBTEST=$BUILD/bin/ibtest
CCW=$BUILD/bin/mpilite-cc
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
for f in "$RUN" "$IBTEST" "$CCW"; do
	[ -x "$f" ] || { echo "no $f: run make first"; exit 1; }
done
TMP=$(mktemp -d /tmp/build_info.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

"$RUN" --version >"$TMP/run" || fail "mpilite-run --version: status $?"
"$IBTEST" info >"$TMP/info" 2>&1 || fail "ibtest info: status $?"
cat >"$TMP/libver.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
int main(void)
{
	char s[MPI_MAX_LIBRARY_VERSION_STRING];
	int len;

	if (MPI_Get_library_version(s, &len) != MPI_SUCCESS)
		return 1;
	printf("%d %s\n", len, s);
	return 0;
}
EOF
"$CCW" -o "$TMP/libver" "$TMP/libver.c" || fail "mpilite-cc libver.c"
line=$("$TMP/libver") || fail "MPI_Get_library_version: status $?"
len=${line%% *}
lib=${line#* }
echo "MPI_Get_library_version: $lib"
[ "$len" = "${#lib}" ] || fail "resultlen $len, the string has ${#lib} characters"
[ "$len" -lt 256 ] || fail "the library string does not fit MPI_MAX_LIBRARY_VERSION_STRING"

# item FILE NAME: the value of "  NAME   value" in a report
item() { sed -n "s/^  $2  *//p" "$1" | head -n 1; }

# 1. versions
v=$(sed -n 's/^#define IBX_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' include/ibx.h | paste -sd.)
[ -n "$v" ] || fail "no IBX_VERSION_* in ibx.h"
grep -q "^mpilite-run (ibx $v), PMIx " "$TMP/run" || fail "mpilite-run --version lacks ibx $v: $(head -n 1 "$TMP/run")"
grep -qx "ibx $v" "$TMP/info" || fail "ibtest info lacks 'ibx $v'"
case $lib in "mpi-lite (ibx $v), MPI 3.1, "*) ;; *) fail "library string does not start with mpi-lite (ibx $v), MPI 3.1" ;; esac
for f in "$TMP/run" "$TMP/info"; do
	[ "$(item "$f" MPI)" = "3.1 (mpi-lite)" ] || fail "$f: MPI '$(item "$f" MPI)'"
done

# 2. git commit
git=$(item "$TMP/run" "git commit")
[[ $git =~ ^([0-9a-f]{12}|unknown)$ ]] || fail "git commit '$git'"
if [ "$git" != unknown ] && command -v git >/dev/null && [ -e .git ]; then
	git cat-file -e "$git^{commit}" 2>/dev/null || fail "commit $git is not in this repository"
fi

# 3. compiler
cc=$("$CCW" --showme:command)
case $(item "$TMP/run" compiler) in "$cc "[0-9A-Za-z]*) ;; *) fail "compiler '$(item "$TMP/run" compiler)', mpilite-cc uses $cc" ;; esac
item "$TMP/run" CFLAGS | grep -q . || fail "no CFLAGS"
item "$TMP/run" sanitizer | grep -q . || fail "no sanitizer line"
case $BUILD in
*asan*) item "$TMP/run" sanitizer | grep -q address || fail "address sanitizer build says '$(item "$TMP/run" sanitizer)'" ;;
*tsan*) item "$TMP/run" sanitizer | grep -q thread || fail "thread sanitizer build says '$(item "$TMP/run" sanitizer)'" ;;
esac

# 4. libraries, as pkg-config knows them here
for pair in pmix:PMIx libibverbs:libibverbs librdmacm:librdmacm numa:libnuma; do
	pc=${pair%%:*} name=${pair#*:}
	ver=$(pkg-config --modversion "$pc" 2>/dev/null) || continue
	case $(item "$TMP/run" "$name") in "$ver"*) ;; *) fail "$name '$(item "$TMP/run" "$name")', pkg-config says $ver" ;; esac
	case $lib in *"$name $ver"*) ;; *) fail "library string lacks '$name $ver'" ;; esac
done
grep -q "^  PMIx  *.*[0-9]" <(sed -n '/^running with:/,/^$/p' "$TMP/info") || fail "ibtest info: no PMIx at run time"

# 5. the same everywhere
for name in "git commit" compiler CFLAGS sanitizer PMIx libibverbs librdmacm libnuma; do
	[ "$(item "$TMP/run" "$name")" = "$(item "$TMP/info" "$name")" ] ||
		fail "$name: mpilite-run says '$(item "$TMP/run" "$name")', ibtest info '$(item "$TMP/info" "$name")'"
done
case $lib in *", git $git, "*) ;; *) fail "library string lacks git $git" ;; esac
case $lib in *"$(item "$TMP/run" compiler)"*) ;; *) fail "library string lacks the compiler" ;; esac

if [ "$FAILS" -gt 0 ]; then
	echo "$FAILS failure(s)"
	cat "$TMP/run"
	exit 1
fi
echo "build information agrees: ibx $v, git $git, $(item "$TMP/run" compiler)"
