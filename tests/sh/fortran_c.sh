#!/bin/bash
# fortran_c.sh — what README says about Fortran holds: mpi-lite has no
# Fortran bindings (no mpif.h, no mpi module, no Fortran wrapper), and the
# one way Fortran code takes part is the one described there — Fortran
# routines (bind(C)) called from a C program that does the MPI calls, built
# with gfortran -c and linked by mpilite-cc with -lgfortran.
# Exit 77 (skip) without gfortran.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CCW=$BUILD/bin/mpilite-cc
RUN=$BUILD/bin/mpilite-run
[ -x "$CCW" ] && [ -x "$RUN" ] || { echo "no $CCW or $RUN: run make first"; exit 1; }
command -v gfortran >/dev/null || { echo "no gfortran"; exit 77; }
TMP=$(mktemp -d /tmp/fortran_c.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# no Fortran interface is installed or built
for f in mpi-lite/include/mpif.h mpi-lite/include/mpi.mod "$BUILD/bin/mpilite-fc" "$BUILD/bin/mpilite-f90"; do
	[ ! -e "$f" ] || fail "$f exists: README says there is no Fortran interface"
done
grep -q "no Fortran bindings" README.md || fail "README does not say that there are no Fortran bindings"

cat >"$TMP/kernel.f90" <<'EOF'
! y = a*x + y, called from C
subroutine axpy(n, a, x, y) bind(C, name="axpy")
  use iso_c_binding
  integer(c_int), value :: n
  real(c_double), value :: a
  real(c_double), intent(in) :: x(n)
  real(c_double), intent(inout) :: y(n)
  y = a * x + y
end subroutine
EOF
cat >"$TMP/main.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>

void axpy(int n, double a, const double *x, double *y); /* kernel.f90 */

int main(int argc, char **argv)
{
	double x[4] = {1, 2, 3, 4}, y[4] = {0}, mine = 0, total = 0;
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	axpy(4, rank + 1.0, x, y);
	for (int i = 0; i < 4; i++)
		mine += y[i];
	MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	printf("rank %d of %d: %g\n", rank, size, total);
	MPI_Finalize();
	return 0;
}
EOF
gfortran -O1 -c -o "$TMP/kernel.o" "$TMP/kernel.f90" || fail "gfortran -c kernel.f90"
"$CCW" -O1 -o "$TMP/mixed" "$TMP/main.c" "$TMP/kernel.o" -lgfortran || fail "mpilite-cc main.c kernel.o -lgfortran"
# ranks 0..2: sum of (r+1)*(1+2+3+4) = 10 * 6
timeout -k 5 90 "$RUN" -n 3 --timeout 60 "$TMP/mixed" >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "the mixed program failed"; }
for r in 0 1 2; do
	grep -qx "rank $r of 3: 60" "$TMP/out" || { cat "$TMP/out"; fail "rank $r: wrong result"; }
done
echo "Fortran: no bindings; a bind(C) Fortran kernel under a C MPI program works"
