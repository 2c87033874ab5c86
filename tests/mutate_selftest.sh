#!/usr/bin/env bash
# mutate_selftest.sh - tests/mutate.sh must refuse to judge mutants on a tree
# whose suites do not pass.  A copy of the tree gets one suite that always
# fails (check_hashtab's main returns 1 after running its cases); mutate.sh
# on that copy must exit 2 naming the suite, before any mutant's verdict.
# Prints "mutate-selftest: 1 passed, 0 failed" or "... 0 passed, 1 failed".
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/kvs-mutself.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$here" && git ls-files -co --exclude-standard -z | xargs -0 -I{} cp --parents -a {} "$work"/ 2>/dev/null)
before=$(md5sum "$work/tests/check_hashtab.c")
perl -pi -e 's/return run_suite\(/return 1 + 0 * run_suite(/' "$work/tests/check_hashtab.c"
if [ "$before" = "$(md5sum "$work/tests/check_hashtab.c")" ]; then
  echo "mutate-selftest: could not plant the failing suite (check_hashtab's main changed?)"
  echo "mutate-selftest: 0 passed, 1 failed"; exit 1
fi
bash "$here/tests/mutate.sh" -s "$work" >"$work/out" 2>&1
rc=$?
ok=1
[ $rc -eq 2 ] || { echo "mutate-selftest: mutate.sh exited $rc, not 2"; ok=0; }
grep -q "fails its baseline: .*check_hashtab(FAIL)" "$work/out" ||
  { echo "mutate-selftest: the failing suite is not named"; ok=0; }
if grep -Eq '(killed by|SURVIVED|NOT APPLIED|DOES NOT BUILD)' "$work/out"; then
  echo "mutate-selftest: a mutant was judged on a failing tree"; ok=0
fi
[ $ok -eq 1 ] || sed 's/^/  | /' "$work/out"
echo "mutate-selftest: $ok passed, $((1 - ok)) failed"
[ $ok -eq 1 ]
