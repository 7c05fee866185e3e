#!/bin/bash
# README.md documents every configuration variable exactly as the modules'
# tables declare them (`ibtest info --markdown`; scripts/config-doc.sh
# --update regenerates README's table), and every variable the sources read
# with getenv() is in a table or is a convention of another program.
set -eu
cd "$(dirname "$0")/../.."
export BUILD=${BUILD:-build}
want=$(scripts/config-doc.sh)
have=$(sed -n '/<!-- config-table:/,/<!-- \/config-table -->/p' README.md | sed '1d;$d')
if [ "$want" != "$have" ]; then
	echo "README.md's configuration table is out of date; run scripts/config-doc.sh --update"
	diff <(echo "$want") <(echo "$have") || true
	exit 1
fi
n=$(echo "$want" | grep -c '^| `')
[ "$n" -gt 25 ] || { echo "only $n variables in the table"; exit 1; }
for m in core core/shm_lf core/qp core/reg_cache core/dtype_rdma mpi-lite mpilite-run; do
	echo "$want" | grep -q "^| \`[A-Z_]*\` | $m |" || { echo "no variable of module $m in the table"; exit 1; }
done
# Variables read directly: ours must be in a table; the rest belong to
# PMIx, Slurm, MPICH's hydra, rdma-core or the system.
foreign='^(PMIX_NAMESPACE|SLURM_STEP_NUM_TASKS|PMI_FD|PMI_RANK|RDMAV_FORK_SAFE|IBV_FORK_SAFE|TMPDIR|MPIEXEC_TIMEOUT|BUILD|HOME|XDG_CACHE_HOME|HWLOC_COMPONENTS)$'
for v in $(grep -rhoE 'getenv\("[A-Z_]+"\)' core mpi-lite tools | sed 's/getenv("//;s/")//' | sort -u); do
	if echo "$v" | grep -qE "$foreign"; then continue; fi
	echo "$want" | grep -q "^| \`$v\` |" || { echo "$v is read with getenv() but is in no configuration table"; exit 1; }
done
echo "README documents all $n variables"
