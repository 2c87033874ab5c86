#!/usr/bin/env bash
# mutate_all.sh [--full] [NAME...] - tests/mutate.sh in KVS_MUTATE_WORKERS
# (default 2) interleaved parts side by side, each in its own scratch tree,
# its verdicts and summary added up into one "mutate: K killed, S survived"
# line.  Exit status as mutate.sh's: 2 when any part could not set up.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${KVS_MUTATE_WORKERS:-2}
out=$(mktemp -d /tmp/kvs-mutall.XXXXXX)
trap 'rm -rf "$out"' EXIT
pids=()
for ((i = 0; i < n; i++)); do
  KVS_MUTATE_SHARD="$i/$n" bash "$here/mutate.sh" "$@" >"$out/$i.log" 2>&1 &
  pids+=($!)
done
rc=0
for ((i = 0; i < n; i++)); do
  wait "${pids[$i]}"; r=$?
  [ $r -gt $rc ] && rc=$r
done
k=0; s=0; m=0
for ((i = 0; i < n; i++)); do
  grep -v '^mutate: [0-9]* killed, [0-9]* survived$\|^mutate: files with no mutant\|^mutate: the map missed' "$out/$i.log"
  read -r a b < <(sed -n 's/^mutate: \([0-9]*\) killed, \([0-9]*\) survived$/\1 \2/p' "$out/$i.log" | tail -1)
  k=$((k + ${a:-0})); s=$((s + ${b:-0}))
  c=$(sed -n 's/^mutate: the map missed \([0-9]*\)$/\1/p' "$out/$i.log" | tail -1)
  m=$((m + ${c:-0}))
done
grep -h '^mutate: files with no mutant' "$out/0.log" | head -1
grep -q '^mutate: the map missed' "$out/0.log" && echo "mutate: the map missed $m"
if [ $rc -ne 2 ]; then
  echo "mutate: $k killed, $s survived"
fi
exit $rc
