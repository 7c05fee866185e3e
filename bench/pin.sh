#!/bin/sh
# pin.sh — run a command pinned to one CPU chosen from its launcher rank:
#
#     mpirun.mpich -np 2 bench/pin.sh ./pingpong
#     mpilite-run -n 2 bench/pin.sh ./pingpong
#
# The rank comes from whichever launcher started us: PMIX_RANK (every PMIx
# launcher: mpilite-run, Open MPI's mpirun, srun --mpi=pmix), PMI_RANK
# (MPICH hydra), OMPI_COMM_WORLD_RANK, SLURM_PROCID. Rank r goes to the r-th
# CPU (modulo their number) of the CPUs this process may run on, so ranks
# beyond the core count share cores round-robin. Without any rank variable
# the command runs unpinned. IBX_PIN=0 disables pinning.
set -eu
[ $# -ge 1 ] || { echo "usage: pin.sh COMMAND [ARGS...]" >&2; exit 2; }

rank=${PMIX_RANK:-${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-${SLURM_PROCID:-}}}}
if [ -z "$rank" ] || [ "${IBX_PIN:-1}" = 0 ] || ! command -v taskset >/dev/null 2>&1; then
	exec "$@"
fi

# Allowed CPUs, e.g. "0-3,6" -> "0 1 2 3 6".
list=$(taskset -cp $$ 2>/dev/null | sed 's/.*: *//')
cpus=$(printf '%s\n' "$list" | tr ',' '\n' | awk -F- 'NF == 2 { for (c = $1; c <= $2; c++) print c; next } NF == 1 && $1 != "" { print $1 }')
n=$(printf '%s\n' "$cpus" | grep -c . || true)
if [ "$n" -eq 0 ]; then
	exec "$@"
fi
cpu=$(printf '%s\n' "$cpus" | sed -n "$((rank % n + 1))p")
exec taskset -c "$cpu" "$@"
