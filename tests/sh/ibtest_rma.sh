#!/bin/bash
# ibtest_rma.sh — ibtest's one-sided commands end to end under mpilite-run:
# rma_lat, rma_bw (osu-style tables) and exchange (the neighbour exchange of
# [Traff00] §5).
#
#   1. rma_lat: one table per (operation, window flavour, synchronisation)
#      asked for, each with its header lines and one row per size (fop and
#      cas: 8 bytes only); -a: the 23 sizes 1 .. 4 MiB
#   2. rma_lat / rma_bw --json: one JSON document on stdout, a row per table
#      and size, every row verified; rma_bw's MB/s equal bytes x operations
#      per epoch x epochs (x 2 with --bidir) / seconds / 10^6
#   3. exchange at 2, 3 and 4 ranks: the seven implementations' columns, a
#      row per size (-a: 0 .. 4 MiB), -k neighbours up to P; --json rows
#   4. bad options and rank counts: exit status 2 and a message naming the
#      command; --help: exit 0
#   5. eng_rma_lat (the engine API without MPI): get, put, fetch-and-add and
#      compare-and-swap on ibx_mem_alloc and ibx_mem_map memory, one
#      perftest row each; -a: the 23 sizes; --json rows; its bad options
# Every run also checks the data it moved (the commands exit 3 on a
# mismatch), so exit status 0 means the transfers were right. No figure is
# judged.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RUN=$BUILD/bin/mpilite-run
IBTEST=$BUILD/bin/ibtest
FAILS=0

[ -x "$RUN" ] && [ -x "$IBTEST" ] || { echo "no $RUN or $IBTEST: run make first"; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ibtest_rma.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/out
ERR=$WORK/err

ok() { echo "ok   $1"; }
fail() {
	echo "FAIL $1"
	FAILS=$((FAILS + 1))
	[ -s "$ERR" ] && sed 's/^/    | /' "$ERR" | tail -n 8
}

# job NP ARGS...: one ibtest job; RC, $OUT, $ERR
job() {
	local np=$1
	shift
	timeout -k 5 90 "$RUN" -n "$np" --timeout 80 "$IBTEST" "$@" >"$OUT" 2>"$ERR"
	RC=$?
}

SIZES_ALL=$(python3 -c 'print(" ".join(str(1 << i) for i in range(23)))')

# check_tables FILE KIND SPEC: osu-style tables (KIND Latency|Bandwidth); SPEC
# is "OP|FLAVOUR|SYNC=SIZES;..." in print order, with the MPI names of the
# headers. Prints what is wrong, exit status 1 then.
check_tables() {
	python3 - "$1" "$2" "$3" <<'EOF'
import re, sys
path, kind, spec = sys.argv[1:]
want = [(k.split("|"), v.split()) for k, v in (s.split("=") for s in spec.split(";"))]
tables, cur = [], None
for line in open(path):
    line = line.rstrip("\n")
    m = re.match(r"# ibtest \w+: (\S+) (Bi-directional )?%s Test" % kind, line)
    if m:
        cur = {"op": m.group(1), "rows": []}
        tables.append(cur)
    elif line.startswith("# Window creation: "):
        cur["win"] = line.split(": ", 1)[1]
    elif line.startswith("# Synchronization: "):
        cur["sync"] = line.split(": ", 1)[1]
    elif line.startswith("# Size"):
        cur["head"] = line.split()[2:]
    elif line and not line.startswith("#"):
        f = line.split()
        # two decimals, as perftest prints them: a 1-byte row of a loaded
        # run may show 0.00 (the JSON row has the exact figure, checked)
        if len(f) != 2 or not re.fullmatch(r"\d+\.\d\d", f[1]):
            sys.exit("bad row: %r" % line)
        cur["rows"].append(f[0])
if len(tables) != len(want):
    sys.exit("%d tables, expected %d" % (len(tables), len(want)))
for t, ((op, win, sync), sizes) in zip(tables, want):
    got = (t["op"], t.get("win"), t.get("sync"))
    if got != (op, win, sync):
        sys.exit("table %s, expected %s" % (got, (op, win, sync)))
    if t["rows"] != sizes:
        sys.exit("%s/%s/%s: sizes %s, expected %s" % (op, win, sync, t["rows"], sizes))
EOF
}

# check_json FILE TEST ROWS [bw|lat|exchange]: one JSON document of ROWS rows,
# all verified; bw rows: MB/s consistent with bytes and seconds.
check_json() {
	python3 - "$@" <<'EOF'
import json, sys
path, test, rows, kind = sys.argv[1:]
d = json.load(open(path))
if d.get("test") != test:
    sys.exit("test %r, expected %r" % (d.get("test"), test))
res = d["results"]
if len(res) != int(rows):
    sys.exit("%d rows, expected %s" % (len(res), rows))
for r in res:
    if r.get("verified") is not True:
        sys.exit("row not verified: %r" % r)
    if kind == "lat" and not r["latency_us"] > 0:
        sys.exit("latency: %r" % r)
    if kind == "bw":
        moved = r["bytes"] * r["ops_per_epoch"] * r["epochs"] * (2 if r["bidir"] else 1)
        if not r["seconds"] > 0 or not r["bw_MBps"] > 0 or abs(moved / r["seconds"] / 1e6 - r["bw_MBps"]) > 1e-6 * r["bw_MBps"] + 1e-9:
            sys.exit("MB/s not bytes/seconds: %r" % r)
        if r["slots"] < 1 or r["slots"] > r["ops_per_epoch"]:
            sys.exit("slots: %r" % r)
    if kind == "exchange":
        if not 0 < r["t_min_us"] <= r["t_median_us"] <= r["t_max_us"]:
            sys.exit("statistics out of order: %r" % r)
EOF
}

# ---- 1. rma_lat tables ------------------------------------------------------------
OPS="MPI_Put MPI_Get MPI_Accumulate MPI_Fetch_and_op MPI_Compare_and_swap"
SYNCS="MPI_Win_flush;MPI_Win_lock/unlock;MPI_Win_fence;Post/Start/Complete/Wait;MPI_Win_lock_all/unlock_all"
spec=""
for op in $OPS; do
	case $op in MPI_Fetch_and_op | MPI_Compare_and_swap) s=8 ;; *) s=64 ;; esac
	for win in MPI_Win_allocate MPI_Win_create; do
		IFS=';' read -ra sy <<<"$SYNCS"
		for y in "${sy[@]}"; do spec="$spec${spec:+;}$op|$win|$y=$s"; done
	done
done
job 2 rma_lat -o all -w allocate,create -y all -s 64 -n 5
if [ $RC -ne 0 ]; then
	fail "rma_lat -o all -w allocate,create -y all: exit $RC"
elif msg=$(check_tables "$OUT" Latency "$spec" 2>&1); then
	ok "rma_lat: 50 tables (5 operations x 2 flavours x 5 synchronisations), one row each"
else
	fail "rma_lat tables: $msg"
fi

spec=""
for op in MPI_Put MPI_Get; do
	for y in MPI_Win_flush MPI_Win_fence; do spec="$spec${spec:+;}$op|MPI_Win_create_dynamic|$y=$SIZES_ALL"; done
done
job 2 rma_lat -a -o put,get -w dynamic -y flush,fence -n 2
if [ $RC -ne 0 ]; then
	fail "rma_lat -a -w dynamic: exit $RC"
elif msg=$(check_tables "$OUT" Latency "$spec" 2>&1); then
	ok "rma_lat -a: sizes 1 .. 4 MiB on a dynamic window"
else
	fail "rma_lat -a: $msg"
fi

# ---- 2. JSON ------------------------------------------------------------------------
spec=""
for op in MPI_Accumulate MPI_Fetch_and_op MPI_Compare_and_swap; do
	[ $op = MPI_Accumulate ] && s=16 || s=8
	for y in Post/Start/Complete/Wait MPI_Win_lock_all/unlock_all; do
		spec="$spec${spec:+;}$op|MPI_Win_allocate_shared|$y=$s"
	done
done
job 2 rma_lat -o acc,fop,cas -w shared -y lock_all,pscw -s 16 -n 5 --json
if [ $RC -ne 0 ]; then
	fail "rma_lat --json: exit $RC"
elif grep -q "skipped" "$ERR"; then
	# the ranks of one node always share memory here: a skip is a failure
	fail "rma_lat -w shared skipped on one node"
elif msg=$(check_json "$OUT" rma_lat 6 lat 2>&1) &&
	msg=$(check_tables "$ERR" Latency "$spec" 2>&1); then
	ok "rma_lat --json: 6 rows on stdout, the tables on stderr"
else
	fail "rma_lat --json: $msg"
fi

spec=""
for op in MPI_Put MPI_Get MPI_Accumulate; do
	IFS=';' read -ra sy <<<"$SYNCS"
	for y in "${sy[@]}"; do spec="$spec${spec:+;}$op|MPI_Win_allocate|$y=1024"; done
done
job 2 rma_bw -o put,get,acc -y all -s 1k -n 3 -t 8 --json
if [ $RC -ne 0 ]; then
	fail "rma_bw --json: exit $RC"
elif msg=$(check_json "$OUT" rma_bw 15 bw 2>&1) && msg=$(check_tables "$ERR" Bandwidth "$spec" 2>&1); then
	ok "rma_bw: 15 tables, MB/s = bytes moved / seconds"
else
	fail "rma_bw: $msg"
fi

job 2 rma_bw -o fop,cas -w create -y flush,lock -n 3 -t 16 --json
if [ $RC -ne 0 ]; then
	fail "rma_bw fop,cas: exit $RC"
elif msg=$(check_json "$OUT" rma_bw 4 bw 2>&1); then
	ok "rma_bw fop, cas: 16 slots of 8 bytes per epoch, results checked"
else
	fail "rma_bw fop,cas: $msg"
fi

# --typical: the median of per-iteration times, said in the table header;
# passive target only (active-target tables keep their mean)
job 2 rma_lat -o put,fop -y flush,lock,fence -s 8 -n 50 --typical
if [ $RC -ne 0 ]; then
	fail "rma_lat --typical: exit $RC"
elif [ "$(grep -c '^# Latency: the median iteration (--typical)$' "$OUT")" != 4 ] ||
	[ "$(grep -cE '^8 +[0-9.]+$' "$OUT")" != 6 ]; then
	fail "rma_lat --typical: want 4 median headers (flush, lock) and 6 rows"
	sed 's/^/    | /' "$OUT" | head -n 30
else
	ok "rma_lat --typical: median on passive target, mean on fence"
fi

# --target-sleeps: the idle target sleeps through the passive rows (a
# nonblocking barrier it tests), the active rows are as always
job 2 rma_lat -o get,fop -y flush,lock_all,pscw -s 8 -n 50 --typical --target-sleeps
if [ $RC -ne 0 ]; then
	fail "rma_lat --target-sleeps: exit $RC"
elif [ "$(grep -cE '^8 +[0-9.]+$' "$OUT")" != 6 ]; then
	fail "rma_lat --target-sleeps: want 6 rows"
	sed 's/^/    | /' "$OUT" | head -n 30
else
	ok "rma_lat --target-sleeps: every row, the data checked"
fi

spec="MPI_Put|MPI_Win_allocate|MPI_Win_fence=$SIZES_ALL;MPI_Put|MPI_Win_allocate|Post/Start/Complete/Wait=$SIZES_ALL"
job 2 rma_bw --bidir -y all -a -n 2 -t 4 --json
if [ $RC -ne 0 ]; then
	fail "rma_bw --bidir -y all -a: exit $RC"
elif msg=$(check_json "$OUT" rma_bw 46 bw 2>&1) && msg=$(check_tables "$ERR" Bandwidth "$spec" 2>&1); then
	ok "rma_bw --bidir -y all -a: fence and pscw, 23 sizes, twice the bytes"
else
	fail "rma_bw --bidir: $msg"
fi

# ---- 3. exchange --------------------------------------------------------------------
# check_exchange FILE SIZES: the seven columns, a row of seven figures per size
check_exchange() {
	python3 - "$1" "$2" <<'EOF'
import sys
path, sizes = sys.argv[1], sys.argv[2].split()
cols = "Put-Fence Get-Fence Put-PSCW Get-PSCW Put-Lock Get-Lock Sendrecv".split()
lines = [l.split() for l in open(path) if l.strip()]
head = [l for l in lines if l[:2] == ["#", "Size"]]
if len(head) != 1 or head[0][2:] != cols:
    sys.exit("header: %r" % head)
rows = [l for l in lines if l[0] != "#"]
if [r[0] for r in rows] != sizes:
    sys.exit("sizes %r, expected %r" % ([r[0] for r in rows], sizes))
for r in rows:
    if len(r) != 8 or not all(float(x) > 0 for x in r[1:]):
        sys.exit("bad row %r" % r)
EOF
}

job 2 exchange -a -n 2
if [ $RC -ne 0 ]; then
	fail "exchange -a at 2 ranks: exit $RC"
elif msg=$(check_exchange "$OUT" "0 $SIZES_ALL" 2>&1); then
	ok "exchange -a, 2 ranks: 24 sizes x 7 implementations"
else
	fail "exchange -a, 2 ranks: $msg"
fi

job 3 exchange -s 1k -n 5 -k 2 -w create
if [ $RC -ne 0 ]; then
	fail "exchange at 3 ranks: exit $RC"
elif msg=$(check_exchange "$OUT" "1024" 2>&1) && grep -q "3 ranks, 2 neighbours each" "$OUT"; then
	ok "exchange, 3 ranks, 2 neighbours, MPI_Win_create"
else
	fail "exchange at 3 ranks: ${msg:-no header}"
fi

job 4 exchange -s 64k -n 3 -k 4 -w dynamic --json
if [ $RC -ne 0 ]; then
	fail "exchange at 4 ranks: exit $RC"
elif msg=$(check_json "$OUT" exchange 7 exchange 2>&1) && msg=$(check_exchange "$ERR" "65536" 2>&1) &&
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; sys.exit(not all(x["ranks"]==4 and x["neighbours"]==4 for x in r))' "$OUT"; then
	ok "exchange --json, 4 ranks, 4 neighbours (itself too), dynamic window"
else
	fail "exchange at 4 ranks: ${msg:-ranks or neighbours wrong}"
fi

job 4 exchange -o put,sendrecv -y fence -s 8 -n 3
if [ $RC -eq 0 ] && grep -Eq '^# Size +Put-Fence +Sendrecv$' "$OUT" && grep -Eq '^8 +[0-9.]+ +[0-9.]+$' "$OUT"; then
	ok "exchange -o put,sendrecv -y fence: two columns"
else
	fail "exchange -o put,sendrecv -y fence: exit $RC"
fi

# ---- 4. usage ----------------------------------------------------------------------
# bad NP 'ARGS' 'MESSAGE': exit 2 and MESSAGE on stderr (NP 0: no launcher)
bad() {
	local np=$1 args=$2 want=$3
	if [ "$np" = 0 ]; then
		# shellcheck disable=SC2086
		timeout 30 "$IBTEST" $args >"$OUT" 2>"$ERR"
		RC=$?
	else
		# shellcheck disable=SC2086
		job "$np" $args
	fi
	if [ $RC -eq 2 ] && grep -qF -- "$want" "$ERR"; then
		ok "$args (np $np): exit 2, '$want'"
	else
		fail "$args (np $np): exit $RC, expected 2 and '$want'"
	fi
}
bad 0 "rma_lat -o foo" "ibtest rma_lat: bad -o value 'foo'"
bad 0 "rma_lat -w allocate,bogus" "ibtest rma_lat: bad -w value"
bad 0 "rma_lat -y fence," "ibtest rma_lat: bad -y value"
bad 0 "rma_lat -s 2g" "ibtest rma_lat: bad size '2g'"
bad 0 "rma_lat -n 0" "ibtest rma_lat: bad iteration count '0'"
bad 0 "rma_lat -a -s 8" "-a and -s exclude each other"
bad 0 "rma_lat -t 8" "invalid option"
bad 0 "rma_lat --bidir" "'--bidir' is not an option of this command"
bad 0 "rma_bw --typical" "'--typical' is not an option of this command"
bad 0 "rma_bw --target-sleeps" "'--target-sleeps' is not an option of this command"
bad 0 "rma_lat stray" "unexpected argument 'stray'"
bad 0 "rma_bw -t 0" "ibtest rma_bw: bad window"
bad 0 "rma_bw --bidir -y flush" "--bidir takes -y fence or pscw"
bad 0 "exchange -o acc" "ibtest exchange: bad -o value 'acc'"
bad 0 "exchange -y flush" "ibtest exchange: bad -y value 'flush'"
bad 0 "exchange -w allocate,create" "ibtest exchange: bad -w value"
bad 0 "exchange -k 0" "ibtest exchange: bad neighbour count '0'"
bad 2 "rma_lat -o put,nope" "ibtest rma_lat: bad -o value"
bad 3 "rma_lat -n 5" "ibtest rma_lat: needs exactly 2 ranks, got 3"
bad 3 "rma_bw -n 5" "ibtest rma_bw: needs exactly 2 ranks, got 3"
bad 3 "exchange -k 4" "ibtest exchange: -k 4: more neighbours than the 3 ranks"

# ---- 5. eng_rma_lat -------------------------------------------------------------------
# perftest_rows FILE: the #bytes column of a perftest latency table, one line
perftest_rows() { awk '$1 ~ /^[0-9]+$/ && NF == 9 { printf "%s ", $1 }' "$1" | sed 's/ $//'; }
for mem in alloc map; do
	for op in get put fadd cswap; do
		job 2 eng_rma_lat -o "$op" -m "$mem" -n 50
		rows=$(perftest_rows "$OUT")
		if [ $RC -eq 0 ] && [ "$rows" = 8 ] && grep -q "one-sided $op + flush" "$OUT" &&
			grep -q "Target memory  : ibx_mem_$mem" "$OUT"; then
			ok "eng_rma_lat -o $op -m $mem: one row, the data checked"
		else
			fail "eng_rma_lat -o $op -m $mem: exit $RC, rows '$rows'"
		fi
	done
done
job 2 eng_rma_lat -o put -a -n 10
rows=$(perftest_rows "$OUT")
if [ $RC -eq 0 ] && [ "$rows" = "$SIZES_ALL" ]; then
	ok "eng_rma_lat -o put -a: 1 .. 4 MiB"
else
	fail "eng_rma_lat -o put -a: exit $RC, rows '$rows'"
fi
job 2 eng_rma_lat -o get -s 4k -n 20 --json
if [ $RC -eq 0 ] &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["results"]; sys.exit(not (d["test"]=="eng_rma_lat" and len(r)==1 and r[0]["bytes"]==4096 and r[0]["iterations"]==20))' "$OUT"; then
	ok "eng_rma_lat --json: one row of 4096 bytes"
else
	fail "eng_rma_lat --json: exit $RC"
fi
bad 0 "eng_rma_lat -o xor" "ibtest eng_rma_lat: bad operation 'xor'"
bad 0 "eng_rma_lat -m shared" "ibtest eng_rma_lat: bad memory 'shared'"
bad 0 "eng_rma_lat -o fadd -a" "fadd works on one 8-byte word"
bad 0 "eng_rma_lat -o cswap -s 16" "cswap works on one 8-byte word"
bad 0 "eng_rma_lat -s 0" "ibtest eng_rma_lat: bad size '0'"
bad 0 "eng_rma_lat -n 2" "ibtest eng_rma_lat: bad iteration count '2'"
bad 0 "eng_rma_lat stray" "unexpected argument 'stray'"
bad 3 "eng_rma_lat -n 5" "ibtest eng_rma_lat: needs exactly 2 ranks, got 3"

for c in rma_lat rma_bw exchange eng_rma_lat; do
	if timeout 30 "$IBTEST" $c --help >"$OUT" 2>"$ERR" && grep -q "^usage: mpilite-run -n .* ibtest $c" "$OUT" &&
		"$IBTEST" --help | grep -q "^  $c "; then
		ok "$c --help, listed by ibtest --help"
	else
		fail "$c --help"
	fi
done

[ $FAILS -eq 0 ] || { echo "$FAILS failed"; exit 1; }
echo "all passed"
