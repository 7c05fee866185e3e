#!/bin/bash
# README.md documents every IBX_* variable exactly as core/config_table.h
# declares it (scripts/config-doc.sh --update regenerates the table).
set -eu
cd "$(dirname "$0")/../.."
want=$(scripts/config-doc.sh)
have=$(sed -n '/<!-- config-table:/,/<!-- \/config-table -->/p' README.md | sed '1d;$d')
if [ "$want" != "$have" ]; then
	echo "README.md's configuration table is out of date; run scripts/config-doc.sh --update"
	diff <(echo "$want") <(echo "$have") || true
	exit 1
fi
n=$(grep -c '^IBX_CONFIG(' core/config_table.h)
[ "$n" -gt 10 ] || { echo "only $n config entries found"; exit 1; }
echo "README documents all $n IBX_* variables"
