#!/bin/bash
# launcher_env.sh — what the ranks find in their environment: the launcher's
# whole environment, -x VAR (the launcher's value) and -x VAR=value, and
# IBX_LAUNCHER=mpilite-run; not the PMIX_* variables of an enclosing launcher
# (they would point the ranks at the wrong server), nor the launcher's own
# HWLOC_COMPONENTS; stdin is /dev/null.
. "$(dirname "$0")/launcher_common.inc"

export IBX_T_INHERITED=from-launcher IBX_T_PASSED=passed-value IBX_T_OVERRIDDEN=old
export PMIX_T_OUTER=outer-launcher PMIX_MCA_t_tuning=kept
unset IBX_T_UNSET
launch -n 2 -x IBX_T_PASSED -x IBX_T_SET=set-value -x IBX_T_OVERRIDDEN=new -x "IBX_T_SPACES=a b=c" \
	-x IBX_T_UNSET "$BOOTCLIENT" env IBX_T_INHERITED env IBX_T_PASSED env IBX_T_SET \
	env IBX_T_OVERRIDDEN env IBX_T_SPACES env IBX_T_UNSET env IBX_LAUNCHER \
	env PMIX_T_OUTER env PMIX_MCA_t_tuning env PMIX_NAMESPACE
expect_rc 0 "env"
for r in 0 1; do
	expect_out "^rank $r env IBX_T_INHERITED=from-launcher$"
	expect_out "^rank $r env IBX_T_PASSED=passed-value$"
	expect_out "^rank $r env IBX_T_SET=set-value$"
	expect_out "^rank $r env IBX_T_OVERRIDDEN=new$"
	expect_out "^rank $r env IBX_T_SPACES=a b=c$"
	expect_out "^rank $r env IBX_T_UNSET=\(unset\)$"
	expect_out "^rank $r env IBX_LAUNCHER=mpilite-run$"
	expect_out "^rank $r env PMIX_T_OUTER=\(unset\)$"
	expect_out "^rank $r env PMIX_MCA_t_tuning=kept$"
	expect_out "^rank $r env PMIX_NAMESPACE=mpilite\."
done
expect_err "^mpilite-run: -x IBX_T_UNSET: not set in the environment; ignored$"

# HWLOC_COMPONENTS: the launcher leaves the node's I/O devices out of the
# topology it discovers by setting it for its own PMIx start only; the
# ranks see the environment as it was
launch -n 1 "$BOOTCLIENT" env HWLOC_COMPONENTS
expect_rc 0 "HWLOC_COMPONENTS unset"
expect_out "^rank 0 env HWLOC_COMPONENTS=\(unset\)$"
HWLOC_COMPONENTS=-pci launch -n 1 "$BOOTCLIENT" env HWLOC_COMPONENTS
expect_rc 0 "HWLOC_COMPONENTS set"
expect_out "^rank 0 env HWLOC_COMPONENTS=-pci$"

# a bad -x is a usage error of the launcher
launch -n 1 -x =oops true
expect_rc 125 "-x =oops"

# stdin is /dev/null: a rank reading it sees end of file at once
launch -n 2 sh -c 'if read -r line; then echo "read: $line"; else echo "stdin empty"; fi' <<<"should not be seen"
expect_rc 0 "stdin"
expect_out_count "^stdin empty$" 2

# the program is looked up in the ranks' PATH
mkdir -p "$WORK/bin"
printf '#!/bin/sh\necho "found via PATH"\n' >"$WORK/bin/ibx-t-prog"
chmod +x "$WORK/bin/ibx-t-prog"
launch -n 2 -x PATH="$WORK/bin:$PATH" ibx-t-prog
expect_rc 0 "PATH lookup"
expect_out_count "^found via PATH$" 2
expect_tmp_clean
echo "ok"
