#!/bin/bash
# cxx_wrapper.sh — C++ programs and the compiler wrappers.
#
#   1. mpi.h compiles as C++ (C++11, C++17, C++20) with -Wall -Wextra -Werror
#      -pedantic, every MPI_ macro of it used in an expression (a C-only
#      construct behind a macro shows only where it is used)
#   2. tests/sh/cxx_hello.cpp (std::vector buffers, MPI_Allreduce, MPI_Sendrecv)
#      built with mpilite-cxx, with and without exceptions, static and
#      -shared-mpilite, runs under mpilite-run at 1, 2 and 3 ranks
#   3. --showme (Open MPI) and -show (MPICH) print the command instead of
#      running it, and what they print builds the program; --showme:compile,
#      --showme:link, -compile-info, -link-info; MPILITE_CXX / MPILITE_CC
#      choose the compiler; an unknown --showme: is refused
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CXXW=$BUILD/bin/mpilite-cxx
CCW=$BUILD/bin/mpilite-cc
RUN=$BUILD/bin/mpilite-run
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

for f in "$CXXW" "$CCW" "$RUN"; do
	[ -x "$f" ] || { echo "no $f: run make first"; exit 1; }
done
compiler=$("$CXXW" --showme:command)
command -v "${compiler%% *}" >/dev/null || { echo "no C++ compiler ($compiler)"; exit 77; }
TMP=$(mktemp -d /tmp/cxx_wrapper.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# 1. the header, every macro used
{
	echo '#include <mpi.h>'
	echo 'void use_all(void);'
	echo 'void use_all(void) {'
	grep -oE '^#define MPI_[A-Za-z0-9_]+[[:space:]]' mpi-lite/include/mpi.h | awk '{ print "\t(void)(" $2 ");" }' | sort -u
	echo '}'
} >"$TMP/macros.cpp"
n=$(grep -c '(void)(MPI_' "$TMP/macros.cpp")
[ "$n" -gt 150 ] || fail "only $n MPI_ macros found in mpi.h"
for std in c++11 c++17 c++20; do
	"$CXXW" -std=$std -Wall -Wextra -Werror -pedantic -c -o "$TMP/macros.o" "$TMP/macros.cpp" \
		>"$TMP/log" 2>&1 || { fail "mpi.h as $std:"; head -n 20 "$TMP/log"; }
done
# the same macros from C (C99, -pedantic) through mpilite-cc
cp "$TMP/macros.cpp" "$TMP/macros.c"
"$CCW" -std=c99 -Wall -Wextra -Werror -pedantic -c -o "$TMP/macros_c.o" "$TMP/macros.c" \
	>"$TMP/log" 2>&1 || { fail "mpi.h as C99:"; head -n 20 "$TMP/log"; }

# 2. the program, built four ways, run at 1-3 ranks
STRICT="-O1 -Wall -Wextra -Werror -pedantic"
builds="static noexcept"
case $BUILD in *asan* | *tsan*) ;; *) builds="$builds shared" ;; esac
for b in $builds; do
	case $b in
	static) extra= ;;
	noexcept) extra="-fno-exceptions -fno-rtti" ;;
	shared) extra=-shared-mpilite ;;
	esac
	# shellcheck disable=SC2086
	if ! "$CXXW" $STRICT $extra -o "$TMP/hello_$b" tests/sh/cxx_hello.cpp >"$TMP/log" 2>&1; then
		fail "mpilite-cxx $extra:"
		head -n 20 "$TMP/log"
		continue
	fi
	for np in 1 2 3; do
		if ! timeout -k 5 90 "$RUN" -n $np --timeout 60 "$TMP/hello_$b" >"$TMP/out" 2>"$TMP/err"; then
			fail "cxx_hello ($b) at $np ranks failed"
			tail -n 10 "$TMP/err" "$TMP/out"
			continue
		fi
		for ((r = 0; r < np; r++)); do
			want="rank $r of $np: sum 0..$((np - 1)) = $((np * (np - 1) / 2)), max = $((np - 1)), from left $(((r + np - 1) % np))"
			grep -qxF "$want" "$TMP/out" || { fail "cxx_hello ($b, $np ranks): no line '$want'"; cat "$TMP/out"; }
			grep -qxF "rank $r: ok" "$TMP/out" || fail "cxx_hello ($b, $np ranks): rank $r not ok"
		done
	done
done
if [[ " $builds " == *" shared "* ]] && command -v ldd >/dev/null; then
	ldd "$TMP/hello_shared" | grep -q libmpilite.so || fail "-shared-mpilite did not link libmpilite.so"
fi

# 3. showing instead of running
show=$("$CXXW" --showme -O2 -o "$TMP/shown" tests/sh/cxx_hello.cpp)
[ "$show" = "$("$CXXW" -show -O2 -o "$TMP/shown" tests/sh/cxx_hello.cpp)" ] || fail "-show differs from --showme"
case $show in "$compiler "*) ;; *) fail "--showme does not start with the compiler: $show" ;; esac
case $show in *libmpilite.a*libibx.a*) ;; *) fail "--showme links no libmpilite.a, libibx.a: $show" ;; esac
[ ! -e "$TMP/shown" ] || fail "--showme ran the compiler"
eval "$show" || fail "the command --showme printed failed: $show"
[ -x "$TMP/shown" ] || fail "the command --showme printed built nothing"

# quoting: an argument with a space and a quote comes back as one word
mkdir -p "$TMP/a b"
cp tests/sh/cxx_hello.cpp "$TMP/a b/it's.cpp"
eval "$("$CXXW" -show -o "$TMP/a b/quoted" "$TMP/a b/it's.cpp")" || fail "quoted --showme command failed"
[ -x "$TMP/a b/quoted" ] || fail "quoted --showme command built nothing"

cflags=$("$CXXW" --showme:compile)
case $cflags in *"-I$(cd mpi-lite/include && pwd)"*) ;; *) fail "--showme:compile lacks -I<mpi.h's directory>: $cflags" ;; esac
case $cflags in *libmpilite*) fail "--showme:compile links: $cflags" ;; esac
case $("$CXXW" --showme:link) in *libmpilite.a*) ;; *) fail "--showme:link lacks libmpilite.a" ;; esac
case $("$CXXW" -shared-mpilite --showme:link) in *-lmpilite*) ;; *) fail "-shared-mpilite --showme:link lacks -lmpilite" ;; esac
[ "$("$CXXW" --showme:incdirs)" = "$(cd mpi-lite/include && pwd)" ] || fail "--showme:incdirs"
[ "$("$CXXW" --showme:libdirs)" = "$(cd "$BUILD/lib" && pwd)" ] || fail "--showme:libdirs"
case $("$CXXW" -compile-info x.cpp) in "$compiler "*x.cpp) ;; *) fail "-compile-info: $("$CXXW" -compile-info x.cpp)" ;; esac
case $("$CXXW" -compile_info x.cpp) in *libmpilite*) fail "-compile_info links" ;; esac
case $("$CXXW" -link-info x.o) in *libmpilite.a*) ;; *) fail "-link-info does not link" ;; esac
case $("$CCW" -show -c x.c) in *libmpilite*) fail "mpilite-cc -show -c links" ;; esac
case $("$CCW" --showme:command) in *++*) fail "mpilite-cc compiles with a C++ compiler" ;; esac
[ "$(MPILITE_CXX=my-c++ "$CXXW" --showme:command)" = my-c++ ] || fail "MPILITE_CXX is not honoured"
[ "$(MPILITE_CC=my-cc "$CCW" --showme:command)" = my-cc ] || fail "MPILITE_CC is not honoured"
"$CXXW" --showme:frobnicate >/dev/null 2>"$TMP/err"
rc=$?
[ $rc = 2 ] && grep -q "unknown option --showme:frobnicate" "$TMP/err" || fail "--showme:frobnicate: status $rc, $(cat "$TMP/err")"

if [ "$FAILS" -gt 0 ]; then
	echo "$FAILS failure(s)"
	exit 1
fi
echo "C++: mpi.h ($n macros) as C++11/17/20, cxx_hello ($builds) at 1-3 ranks, --showme/-show"
