#!/bin/bash
# dt_scheme_env.sh — IBX_DT_SCHEME, the derived-datatype transfer scheme read at
# MPI_Init, and `ibtest dtype`, which sets the scheme per row from C:
#
#   1. every valid value (auto, generic, bc-spup, rwg-up, p-rrs, multi-w) and
#      the empty value (the default): tests/mpi/dtype_p2p at 2 ranks passes
#   2. an invalid value (bogus, GENERIC, multi_w, " generic"): MPI_Init fails,
#      the job ends with a non-zero status (no hang), and stderr names
#      IBX_DT_SCHEME, the value and the valid names
#   3. ibtest dtype at 2 ranks: -b lat,bw,put over two column counts and all
#      schemes, --json and --svg: a row per (bench, scheme or the contiguous
#      reference, columns), and one 'copies' row (the pack/unpack bound, no
#      scheme) per column count of lat and bw, with every field, positive values, bytes = 512 x
#      columns, and for the two-sided rows of the derived type at 64 columns
#      (rendezvous) a scheme that moved the messages (MPI_Put moves none); the
#      plot is an SVG with a line per scheme; IBX_DT_SCHEME set
#      as well changes nothing (ibtest sets the scheme per row)
#   4. ibtest dtype -b alltoall at 3 ranks: a row per (scheme, block)
#   5. ibtest dtype with a bad option or scheme: exit status 2 and the usage
# The programs check the data they move (ibtest dtype exits 3 on a mismatch).
# No figure is judged.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RUN=$BUILD/bin/mpilite-run
IBTEST=$BUILD/bin/ibtest
PROG=$BUILD/tests/mpi/dtype_p2p
FAILS=0

[ -x "$RUN" ] && [ -x "$IBTEST" ] && [ -x "$PROG" ] || { echo "no $RUN, $IBTEST or $PROG: run make first"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dt_scheme_env.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/out
ERR=$WORK/err
SCHEMES="auto generic bc-spup rwg-up p-rrs multi-w"

ok() { echo "ok   $1"; }
fail() {
	echo "FAIL $1"
	FAILS=$((FAILS + 1))
	[ -s "$ERR" ] && sed 's/^/    | /' "$ERR" | tail -n 8
}

# job NP PROG ARGS...: one job under a time limit; RC, $OUT, $ERR
job() {
	local np=$1
	shift
	timeout -k 5 120 "$RUN" -n "$np" --timeout 110 "$@" >"$OUT" 2>"$ERR"
	RC=$?
}

# 1. valid values
for s in $SCHEMES ""; do
	IBX_DT_SCHEME=$s job 2 "$PROG"
	if [ $RC = 0 ]; then ok "IBX_DT_SCHEME='$s': dtype_p2p passes"; else fail "IBX_DT_SCHEME='$s': dtype_p2p exit $RC"; fi
done

# 2. invalid values
for s in bogus GENERIC multi_w " generic"; do
	IBX_DT_SCHEME=$s job 2 "$PROG"
	if [ $RC = 0 ] || [ $RC = 124 ] || [ $RC = 137 ]; then
		fail "IBX_DT_SCHEME='$s': exit $RC, expected MPI_Init to fail"
	elif ! grep -qF "IBX_DT_SCHEME=$s" "$ERR"; then
		fail "IBX_DT_SCHEME='$s': stderr does not name the variable and its value"
	elif ! grep -F "IBX_DT_SCHEME=$s" "$ERR" | grep -q 'auto.*generic.*bc-spup.*rwg-up.*p-rrs.*multi-w'; then
		fail "IBX_DT_SCHEME='$s': the message does not list the valid names"
	else
		ok "IBX_DT_SCHEME='$s': MPI_Init fails (exit $RC) naming it"
	fi
done

# check_rows FILE NP BENCHES XS: the JSON document of ibtest dtype --json
check_rows() {
	python3 - "$@" <<'EOF'
import json, sys
path, np_, benches, xs = sys.argv[1:]
schemes = ["contiguous", "auto", "generic", "bc-spup", "rwg-up", "p-rrs", "multi-w"]
units = {"vector_lat": "us", "vector_bw": "MB/s", "vector_put_lat": "us",
         "vector_put_bw": "MB/s", "struct_alltoall": "us"}
try:
    doc = json.load(open(path))
except Exception as e:
    print("not one JSON document: %s" % e); sys.exit(1)
rows = doc.get("results", [])
bad = []
if doc.get("test") != "dtype":
    bad.append("test is %r" % doc.get("test"))
seen = {}
for r in rows:
    b = r.get("bench")
    key = "columns" if b != "struct_alltoall" else "block"
    for k in ("bench", "scheme", "used", key, "bytes", "value", "unit", "vs_contig", "iters"):
        if k not in r:
            bad.append("row without %s: %r" % (k, r))
    if b not in units or r.get("unit") != units[b]:
        bad.append("bench/unit: %r" % r)
        continue
    if r["scheme"] == "copies":
        # the pack/unpack bound: no messages, two-sided vector benchmarks only
        if b not in ("vector_lat", "vector_bw") or r["used"] is not None:
            bad.append("copies row: %r" % r)
    elif r["scheme"] not in schemes or (r["used"] is not None and r["used"] not in schemes[1:]):
        bad.append("scheme/used: %r" % r)
    if not (r["value"] > 0):
        bad.append("value not positive: %r" % r)
    want = 512 * r[key] if b != "struct_alltoall" else None
    if want is not None and r["bytes"] != want:
        bad.append("bytes %d, expected %d: %r" % (r["bytes"], want, r))
    if b in ("vector_lat", "vector_bw") and r[key] == 64 and r["scheme"] not in ("contiguous", "copies") and r["used"] is None:
        bad.append("no scheme counted for a 32 KiB derived-type message: %r" % r)
    seen[(b, r["scheme"], r[key])] = seen.get((b, r["scheme"], r[key]), 0) + 1
for b in benches.split(","):
    for s in schemes + ["copies"]:
        for x in xs.split(","):
            n = seen.get((b, s, int(x)), 0)
            if n != (0 if s == "copies" and b not in ("vector_lat", "vector_bw") else 1):
                bad.append("%d rows for %s %s x=%s" % (n, b, s, x))
for m in bad[:10]:
    print(m)
sys.exit(1 if bad else 0)
EOF
}

# 3. ibtest dtype, vector rows
for env in "" "IBX_DT_SCHEME=multi-w"; do
	env $env IBX_PATHS=shm timeout -k 5 300 "$RUN" -n 2 --timeout 280 "$IBTEST" dtype -b lat,bw,put \
		-c 1,64 -n 5 -r 2 -W 10 --json --svg "$WORK/plot.svg" >"$OUT" 2>"$ERR"
	RC=$?
	what="ibtest dtype -b lat,bw,put${env:+ ($env)}"
	if [ $RC != 0 ]; then
		fail "$what: exit $RC"
	elif ! msg=$(check_rows "$OUT" 2 vector_lat,vector_bw,vector_put_lat,vector_put_bw 1,64); then
		fail "$what: $msg"
	elif ! grep -q '^<svg' "$WORK/plot.svg" || ! grep -q '</svg>' "$WORK/plot.svg"; then
		fail "$what: no SVG document"
	elif [ "$(grep -c 'stroke-width="1.5" stroke-dasharray' "$WORK/plot.svg")" -lt 60 ]; then
		fail "$what: the plot lacks lines (2 panels x 8 lines and 2 x 7, each with a legend sample)"
	else
		ok "$what: every row, the plot"
	fi
done

# 4. the struct Alltoall at 3 ranks
job 3 "$IBTEST" dtype -b alltoall -B 4,4k -k 2 -n 3 --json
if [ $RC != 0 ]; then
	fail "ibtest dtype -b alltoall: exit $RC"
elif ! msg=$(check_rows "$OUT" 3 struct_alltoall 4,4096); then
	fail "ibtest dtype -b alltoall: $msg"
else
	ok "ibtest dtype -b alltoall at 3 ranks: every row"
fi

# 5. bad options
for args in "-S bogus" "-c 0" "-c 5000" "-B 6" "-b nothing" "-W 0" "extra"; do
	# shellcheck disable=SC2086 # the options are meant to split
	job 2 "$IBTEST" dtype $args
	if [ $RC = 2 ] && grep -q 'usage: mpilite-run -n N ibtest dtype' "$ERR"; then
		ok "ibtest dtype $args: usage error"
	else
		fail "ibtest dtype $args: exit $RC, expected 2 and the usage"
	fi
done
job 1 "$IBTEST" dtype --help
if [ $RC = 0 ] && grep -q 'usage:' "$OUT"; then ok "ibtest dtype --help"; else fail "ibtest dtype --help: exit $RC"; fi

[ $FAILS = 0 ] || { echo "$FAILS failed"; exit 1; }
echo "all passed"
