#!/bin/bash
# self_contained.sh — the repository stands alone: a clone with nothing beside
# it documents itself.
#
#   1. no tracked file refers to a path outside the repository (the parent
#      directory's folders) or to a paper by a stored file name instead of by
#      its tag in docs/references.md;
#   2. every relative link in README.md and docs/*.md points at a file that
#      exists;
#   3. every paper tag cited in the code ("[Wu03] §5.4.1") is defined in
#      docs/references.md;
#   4. no C source outside tests/ runs over 700 lines unless its header says
#      why ("Length:" in its first 60 lines).
set -u
cd "$(dirname "$0")/../.."
FAILS=0
bad() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

command -v git >/dev/null && git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout"; exit 77; }
mapfile -t files < <(git ls-files --cached --others --exclude-standard)
[ "${#files[@]}" -gt 50 ] || { echo "only ${#files[@]} files found"; exit 1; }

# 1. Paths outside the repository. The pattern is assembled so that this
# script does not match itself.
outside='\.\./'"shared"'|[0-9]{3}_[0-9a-f]{16}\.txt'
hits=$(printf '%s\0' "${files[@]}" | xargs -0 grep -nEI "$outside" -- 2>/dev/null | head -n 20)
[ -z "$hits" ] || bad "references outside the repository:"$'\n'"$hits"

# 2. Relative links in the Markdown documentation.
for md in README.md docs/*.md; do
	[ -f "$md" ] || { bad "$md missing"; continue; }
	dir=$(dirname "$md")
	while IFS= read -r link; do
		target=${link%%#*}
		[ -n "$target" ] || continue
		case $target in http:* | https:* | mailto:*) continue ;; esac
		[ -e "$dir/$target" ] || bad "$md links to $target, which does not exist"
	done < <(grep -oE '\]\([^)]+\)' "$md" | sed -E 's/^\]\(([^)]*)\)$/\1/')
done
for doc in design references pmix soft-roce; do
	[ -s "docs/$doc.md" ] || bad "docs/$doc.md missing or empty"
done

# 3. Paper tags cited in code are defined in the bibliography.
refs=docs/references.md
while IFS= read -r tag; do
	grep -qF "| $tag |" "$refs" || bad "tag $tag is cited in the code but not defined in $refs"
done < <(printf '%s\0' "${files[@]}" | grep -zE '\.(c|h|sh|inc)$' | xargs -0 grep -ohE '\[[A-Z][A-Za-z-]*[0-9]{2}\]' -- 2>/dev/null | sort -u)

# 4. Long source files state why.
while IFS= read -r f; do
	case $f in tests/*) continue ;; esac
	n=$(wc -l <"$f")
	[ "$n" -le 700 ] && continue
	head -n 60 "$f" | grep -q 'Length:' || bad "$f has $n lines and its header does not say why (Length: ...)"
done < <(printf '%s\n' "${files[@]}" | grep -E '\.(c|h)$')

if [ "$FAILS" -gt 0 ]; then
	echo "$FAILS problem(s)"
	exit 1
fi
echo "self-contained: ${#files[@]} files, docs links and paper tags resolve"
