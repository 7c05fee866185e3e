#!/bin/bash
# launcher_output.sh — the ranks' stdout and stderr arrive complete and
# separately, with whole lines (no line of one rank cut by another's), with
# or without --tag-output ("[rank] " before every line); output written just
# before a rank exits or dies is not lost; unfinished lines come out too.
. "$(dirname "$0")/launcher_common.inc"

N=30000
for tag in "" --tag-output; do
	pre=""
	[ -n "$tag" ] && pre="\[[0-9]\] "
	launch -n 4 $tag "$BOOTCLIENT" lines $N
	expect_rc 0 "lines $tag"
	for r in 0 1 2 3; do
		p=""
		[ -n "$tag" ] && p="\[$r\] "
		n=$(grep -c -E "^${p}rank $r line [0-9]+ of $N: the quick brown fox jumps over the lazy dog$" "$OUT")
		[ "$n" = $N ] || { show; fail "rank $r: $n of $N stdout lines intact ($tag)"; }
		n=$(grep -c -E "^${p}rank $r errline [0-9]+$" "$ERR")
		[ "$n" = $((N / 10)) ] || { show; fail "rank $r: $n of $((N / 10)) stderr lines ($tag)"; }
		# in order, per rank
		grep -E "^${p}rank $r line " "$OUT" | sed 's/.* line \([0-9]*\) of.*/\1/' |
			sort -n -c 2>/dev/null || fail "rank $r: lines out of order ($tag)"
	done
	# nothing on stdout that is not a whole line of some rank
	bad=$(grep -v -c -E "^${pre}rank [0-9]+( line [0-9]+ of $N: the quick brown fox jumps over the lazy dog| of 4: .*|: modex ok with 4 ranks|: done)$" "$OUT")
	[ "$bad" = 0 ] || { show; fail "$bad mangled stdout lines ($tag)"; }
	# stdout stays stdout
	grep -q errline "$OUT" && fail "stderr lines on stdout ($tag)"
	grep -q " line [0-9]* of" "$ERR" && fail "stdout lines on stderr ($tag)"
done

# tags: every line of every stream carries its rank
launch -n 3 --tag-output sh -c 'echo out; echo err >&2'
expect_rc 0 "tag"
for r in 0 1 2; do
	grep -qx "\[$r\] out" "$OUT" || { show; fail "no '[$r] out'"; }
	grep -qx "\[$r\] err" "$ERR" || { show; fail "no '[$r] err'"; }
done
[ "$(wc -l <"$OUT")" = 3 ] || { show; fail "extra stdout lines"; }

# untagged output passes through byte for byte, unfinished last line included
launch -n 1 sh -c 'printf "a\nb\n\nno newline at the end"'
expect_rc 0 "raw"
printf 'a\nb\n\nno newline at the end' | cmp -s - "$OUT" || { show; fail "output changed"; }

# an unfinished line is not held back for long (a progress indicator): it
# must show while the rank still sleeps, well before the rest of the line
: >"$OUT"
"$RUN" -n 1 sh -c 'printf "50%%..."; sleep 6; echo done' >"$OUT" 2>"$ERR" &
p=$!
for i in $(seq 600); do
	grep -q '50%\.\.\.' "$OUT" && break
	sleep 0.1
done
grep -q '50%\.\.\.' "$OUT" || { kill $p; fail "unfinished line held back"; }
grep -q 'done' "$OUT" && { kill $p; fail "unfinished line came only with its end"; }
wait $p || fail "progress job failed"
[ "$(cat "$OUT")" = "50%...done" ] || { show; fail "progress output changed"; }

# a tagged unfinished line at exit gets its tag and a newline
launch -n 2 --tag-output sh -c 'printf "tail"'
expect_rc 0 "tagged tail"
expect_out '^\[0\] tail$'
expect_out '^\[1\] tail$'

# the last words of a rank that is killed right after writing them
launch -n 1 sh -c 'echo "last words $$"; kill -KILL $$'
expect_rc 137 "killed after writing"
expect_out_count "^last words [0-9]+$" 1

# a rank that writes a lot and then fails: all of it arrives although the
# job is being torn down at that moment
launch -n 3 "$BOOTCLIENT" lines 20000 exit 1 3
expect_rc 3 "lines then exit"
n=$(grep -c -E "^rank 1 line [0-9]+ of 20000: the quick brown fox jumps over the lazy dog$" "$OUT")
[ "$n" = 20000 ] || { show; fail "rank 1: $n of 20000 lines before its failure"; }
expect_out "^rank 1: exiting with 3$"

# a reader that goes away does not kill the launcher (EPIPE, not SIGPIPE)
timeout -k 5 60 "$RUN" -n 2 "$BOOTCLIENT" lines 20000 2>"$ERR" | head -n 1 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || { cat "$ERR" >&2; fail "launcher exit status $rc with a closed stdout"; }
expect_tmp_clean
echo "ok"
