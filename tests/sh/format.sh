#!/bin/bash
# format.sh — every C file in git is formatted by the repository's
# .clang-format (make format-check; `make format` fixes what this finds).
set -u
cd "$(dirname "$0")/../.."
command -v clang-format >/dev/null || { echo "clang-format is not installed"; exit 1; }
n=$(git ls-files '*.c' '*.h' 2>/dev/null | wc -l)
[ "$n" -gt 50 ] || { echo "only $n C files found in git"; exit 1; }
out=$(make -s format-check 2>&1) || {
	printf '%s\n' "$out" | grep -E 'error:' | sed 's/: error: code should be clang-formatted.*//' | sort -u | head -n 40
	echo "not formatted (run make format)"
	exit 1
}
echo "$n files formatted"
