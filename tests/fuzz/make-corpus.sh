#!/bin/bash
# make-corpus.sh — (re)writes the seed corpus of every fuzz target,
# tests/fuzz/corpus/<target>/seed-*: a few small inputs each, from which
# `tests/run-tests.sh fuzz` starts. Targets with text inputs get theirs
# here; those with binary records (remote keys, segments, ring packets,
# datatype layouts, QP addresses, verbs channel messages) write their own, made by the code that
# makes them for real (their IBX_FUZZ_SEEDS mode, tests/fuzz/fuzz_common.h),
# so the corpus follows the formats when they change. Run it after such a
# change, and commit the result.
#
#   make fuzz && tests/fuzz/make-corpus.sh        (BUILD as for make; default build)
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
C=tests/fuzz/corpus

# seed TARGET NAME PRINTF-FORMAT: one text seed
seed() {
	mkdir -p "$C/$1"
	# shellcheck disable=SC2059 # the format is the seed
	printf -- "$3" >"$C/$1/seed-$2"
}

rm -rf "${C:?}"/fuzz_*/seed-*

# mpilite-run's command line: NUL-separated words, an optional first
# "@VAR=value;..." word of variables
seed fuzz_run_opts basic '-n\0004\0./ring'
seed fuzz_run_opts options '-np\0002\0-x\0FOO=bar\0-x\0HOME\0--tag-output\0--timeout=30\0--\0prog\0arg'
seed fuzz_run_opts binding '@MPILITE_RUN_BIND_TO=numa;MPIEXEC_TIMEOUT=1.5\0--np=3\0--bind-to\0core\0--map-by=package\0--report-bindings\0a.out'
seed fuzz_run_opts help '--help'

# configuration: a line per variable, its first byte picks the variable
seed fuzz_config sizes '\00116k\n\00210m\n\0030x40\n\004-1\n\0051g\n'
seed fuzz_config flags '\020yes\n\021off\n\022TRUE\n\023maybe\n\024\n'
seed fuzz_config strings '\100info\n\040mlx5_0:1\n\041shm,verbs\n\042trace\n'

# bootstrap: 2 bytes job size, 2 our rank, 1 id length, then the text
seed fuzz_boot list '\000\010\000\002\100''0,1,2,3'
seed fuzz_boot ranges '\000\020\000\011\040''0-3,8-11,5'
seed fuzz_boot nspace '\000\002\000\001\077''mpilite.4242.1a2b3c/job-1'

# machine topology: control word (no NUL: rank count, --bind-to, --map-by),
# allowed CPUs, node cpulists, then physical_package_id / core_id / die_id
# of CPUs 0..7
topo_words='\001\003\002\003\0000-7\0000-3\n\0004-7\n'
for cpu in 0 1 2 3 4 5 6 7; do
	topo_words+="\\000$((cpu / 4))\\n\\000$((cpu % 4 / 2))\\n\\0000\\n"
done
seed fuzz_run_bind two-packages "$topo_words"
seed fuzz_run_bind numa-only '\001\006\004\002\0000-5,7\0000-2,7\n\0003-5\n'
seed fuzz_run_bind no-sysfs '\001\010\005\004\0000,2,4-5'

for t in fuzz_rkey_unpack fuzz_shm_seg fuzz_shm_ring fuzz_dtype_deserialize fuzz_qp_addr fuzz_qp_rx; do
	bin=$BUILD/fuzz/$t
	[ -x "$bin" ] || { echo "no $bin: run make fuzz first" >&2; exit 1; }
	mkdir -p "$C/$t"
	IBX_FUZZ_SEEDS=$C/$t "$bin" >/dev/null
done
du -sh "$C"
ls "$C"/* | head -n 60
