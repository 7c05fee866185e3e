#!/bin/bash
# launcher_basic.sh — mpilite-run starts N ranks (1..4, and 8 on this 2-core
# machine: oversubscribed) of a real PMIx client that checks rank, size,
# node-local peers and a put/fence/get exchange with every peer; every rank
# must report it, the job must exit 0 and leave no temporary directory.
. "$(dirname "$0")/launcher_common.inc"

for n in 1 2 3 4 8; do
	launch -n "$n" "$BOOTCLIENT"
	expect_rc 0 "n=$n"
	peers=$(seq -s, 0 $((n - 1)))
	for r in $(seq 0 $((n - 1))); do
		expect_out "^rank $r of $n: local $n \[$peers\] job mpilite\.[0-9a-f.]+ launcher mpilite-run pid [0-9]+$"
		expect_out "^rank $r: modex ok with $n ranks$"
		expect_out "^rank $r: done$"
	done
	expect_out_count "^rank [0-9]+ of $n:" "$n"
	# one job id for all ranks
	[ "$(sed -n 's/.* job \([^ ]*\) launcher.*/\1/p' "$OUT" | sort -u | wc -l)" = 1 ] ||
		fail "ranks disagree on the job id"
	[ -s "$ERR" ] && { show; fail "unexpected stderr"; }
	expect_tmp_clean
done

# -np and --np= spellings
launch -np 2 "$BOOTCLIENT"
expect_rc 0 "-np"
expect_out_count "modex ok with 2 ranks" 2
launch --np=3 "$BOOTCLIENT"
expect_rc 0 "--np="
expect_out_count "modex ok with 3 ranks" 3

# two launchers at once do not get in each other's way
T=60 timeout -k 5 60 "$RUN" -n 3 "$BOOTCLIENT" >"$WORK/a.out" 2>&1 &
pa=$!
T=60 timeout -k 5 60 "$RUN" -n 3 "$BOOTCLIENT" >"$WORK/b.out" 2>&1 &
pb=$!
wait $pa || fail "first of two concurrent jobs failed: $(cat "$WORK/a.out")"
wait $pb || fail "second of two concurrent jobs failed: $(cat "$WORK/b.out")"
[ "$(grep -c 'modex ok with 3 ranks' "$WORK/a.out")" = 3 ] || fail "concurrent job a: $(cat "$WORK/a.out")"
[ "$(grep -c 'modex ok with 3 ranks' "$WORK/b.out")" = 3 ] || fail "concurrent job b: $(cat "$WORK/b.out")"
expect_tmp_clean

# a program that is no PMIx client at all runs as well (singletons)
launch -n 3 sh -c 'echo "plain $IBX_LAUNCHER"'
expect_rc 0 "plain program"
expect_out_count "^plain mpilite-run$" 3
echo "ok"
