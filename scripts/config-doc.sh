#!/bin/sh
# Prints the IBX_* configuration table of core/config_table.h as Markdown
# (README.md carries its output between the config-table markers;
# `scripts/config-doc.sh --update` rewrites that part of README.md).
set -e
cd "$(dirname "$0")/.."
table() {
	echo "| variable | default | meaning |"
	echo "|---|---|---|"
	# perl is part of every Debian system (perl-base); '|' in help is escaped
	perl -ne 'if (/^IBX_CONFIG\((\w+),\s*\w+,\s*"([^"]*)",\s*"(.*)"\)\s*$/) {
		my ($n, $d, $h) = ($1, $2, $3); $h =~ s/\|/\\|/g;
		print "| `IBX_$n` | `$d` | $h |\n" }' core/config_table.h
}
if [ "${1:-}" = --update ]; then
	tmp=$(mktemp)
	awk -v tbl="$(table)" '
		/<!-- config-table:/ { print; print tbl; skip = 1; next }
		/<!-- \/config-table -->/ { skip = 0 }
		!skip { print }' README.md >"$tmp"
	mv "$tmp" README.md
else
	table
fi
