#!/bin/sh
# Prints every configuration variable (all modules' sections, as the built
# `ibtest info --markdown` lists them) as README's Markdown table;
# `scripts/config-doc.sh --update` rewrites that part of README.md (between
# the config-table markers). Needs a build (BUILD, default build).
set -e
cd "$(dirname "$0")/.."
IBTEST=${BUILD:-build}/bin/ibtest
[ -x "$IBTEST" ] || { echo "no $IBTEST: run make first" >&2; exit 1; }
if [ "${1:-}" = --update ]; then
	tmp=$(mktemp)
	table=$("$IBTEST" info --markdown)
	awk -v tbl="$table" '
		/<!-- config-table:/ { print; print tbl; skip = 1; next }
		/<!-- \/config-table -->/ { skip = 0 }
		!skip { print }' README.md >"$tmp"
	mv "$tmp" README.md
else
	"$IBTEST" info --markdown
fi
