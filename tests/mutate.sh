#!/usr/bin/env bash
# mutate.sh - does the test suite notice small, plausible bugs?
#
# Copies the source tree to a private directory under /tmp and builds it.
# The BASELINE then runs every suite in full (meson test, no case filter) on
# the unmodified copy: each must pass, or the script stops (exit 2) before
# any mutant.  Each mutation (tests/mutants/*.list) is then applied on its
# own, as a literal text replacement in one file; everything is rebuilt
# (ninja: the library and every program that links it, tests/vmstat_m_clone
# and the CLI tools included), and the suites run.  A mutant is KILLED only
# when a suite that passed on the baseline fails (FAIL, TIMEOUT or ERROR in
# meson's test log); SURVIVED when none does.  The working tree is never
# touched.
#
#   tests/mutate.sh [-s SRCDIR] [-c] [-k] [-l] [--full] [NAME...]
#     -s SRCDIR  tree to copy (default: the one holding this script)
#     -c         copy the tree as committed (git HEAD), not as it is
#     -k         keep the scratch directory
#     -l         list the mutations and exit
#     --full     every mutant against every suite (no stop at the first
#                failure), and a report of where the map misses a suite
#                that kills: a mapped run that would let the mutant
#                survive, or a killer the map does not name
#     NAME...    run only these mutations; the baseline is then the
#                suites they name (every suite with --full)
#   KVS_MUTATE_JOBS=2   meson test processes
#   KVS_MUTATE_SHARD=I/N  only the I-th (from 0) of N interleaved parts of
#                         the mutations; tests/mutate_all.sh runs the parts
#                         side by side and adds their verdicts up
#
# The map: the last field of each mutation names the suites that must kill
# it; without --full only those run (CI's 90 minutes), stopping at the first
# failure.  At the end the library files that no mutation touches are
# named ("mutate: files with no mutant: ..."); in a whole run each counts
# as a survivor.
#
# Exit status: 0 when every mutant was killed (and, with --full, the map
# missed none); 1 when one survived, did not apply or did not build, or the
# map missed; 2 on a setup problem (the unmodified copy does not build or
# does not pass its baseline).
set -uo pipefail
# The whole script is one function, read before it runs: editing the file
# while a run goes on cannot change that run.
main() {

here=$(cd "$(dirname "$0")/.." && pwd)
src=$here
keep=0
list=0
full=0
committed=0
args=()
for a in "$@"; do
  case $a in
    --full) full=1 ;;
    *) args+=("$a") ;;
  esac
done
set -- "${args[@]+"${args[@]}"}"
while getopts "s:ckl" o; do
  case $o in
    s) src=$(cd "$OPTARG" && pwd) ;;
    c) committed=1 ;;
    k) keep=1 ;;
    l) list=1 ;;
    *) sed -n '2,35p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
only=("$@")

# name :: file :: occurrence (0 = every) :: text :: replacement :: suites
MUTATIONS=$(cat "$src"/tests/mutants/*.list | grep -v '^[[:space:]]*#' | grep -v '^[[:space:]]*$')

field() { # field N of a mutation line (fields separated by " :: ")
  awk -v n="$2" 'BEGIN { FS = " :: " } { gsub(/^ +| +$/, "", $n); print $n }' <<<"$1"
}

if [ $list -eq 1 ]; then
  while IFS= read -r m; do
    echo "$(field "$m" 1): $(field "$m" 2)"
  done <<<"$MUTATIONS"
  exit 0
fi

# Every mutation well formed, every name once.
dups=$(awk 'BEGIN { FS = " :: " } { print $1 }' <<<"$MUTATIONS" | sort | uniq -d)
if [ -n "$dups" ]; then
  echo "mutate: mutation names used twice: $dups"; exit 2
fi
bad=$(awk 'BEGIN { FS = " :: " } NF != 6 { print $1 }' <<<"$MUTATIONS")
if [ -n "$bad" ]; then
  echo "mutate: mutations without six fields: $bad"; exit 2
fi
for n in "${only[@]+"${only[@]}"}"; do
  grep -q "^$n :: " <<<"$MUTATIONS" || { echo "mutate: no mutation named $n"; exit 2; }
done

work=$(mktemp -d /tmp/kvs-mutate.XXXXXX)
cleanup() { [ $keep -eq 1 ] && echo "kept $work" || rm -rf "$work"; }
trap cleanup EXIT
tree=$work/src
build=$work/build
mkdir -p "$tree"

# The tree as a developer has it: tracked and new files, no build output
# (with -c: as committed).
if [ $committed -eq 1 ]; then
  git -C "$src" archive HEAD | tar -x -C "$tree" || { echo "mutate: git archive of $src failed"; exit 2; }
elif git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$src" && git ls-files -co --exclude-standard -z | xargs -0 -I{} cp --parents -a {} "$tree"/ 2>/dev/null)
else
  (cd "$src" && tar -c --exclude='./build*' --exclude='./.git' . | tar -x -C "$tree")
fi

jobs=${KVS_MUTATE_JOBS:-2}
testlog=$build/meson-logs/testlog.json
# results: "suite RESULT" lines from the last meson test run.
results() {
  python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["name"], r["result"])' "$testlog" 2>/dev/null | sort
}
# What each suite runs: its program and every target it depends on (the
# command-line tools, vmstat_m_clone, the shared library), from meson's own
# introspection, so a mutant reaches every binary a suite uses.
suite_targets() {
  meson introspect --tests --targets "$build" | python3 -c '
import json, os, sys
d = json.load(sys.stdin)
build = sys.argv[1]
files = {t["id"]: t["filename"] for t in d["targets"]}
for t in d["tests"]:
    outs = set()
    for i in t.get("depends", []):
        outs.update(files.get(i, []))
    for c in t["cmd"]:
        if c.startswith(build + "/") and not os.path.relpath(c, build).startswith(".."):
            outs.add(c)
    print(t["name"], *sorted(os.path.relpath(o, build) for o in outs))' "$build"
}
# run_tests [--maxfail] SUITE...: rebuild what those suites run (everything
# when none is named), then run them.  Returns 3 when the build fails.
run_tests() {
  local mf=() tg=() s
  if [ "${1:-}" = --maxfail ]; then mf=(--maxfail 1); shift; fi
  for s in "$@"; do
    read -r -a more <<<"$(awk -v s="$s" '$1 == s { $1 = ""; print }' "$work/targets")"
    tg+=("${more[@]}")
  done
  ninja -C "$build" "${tg[@]+"${tg[@]}"}" >"$work/build.log" 2>&1 || return 3
  rm -f "$testlog"
  meson test -C "$build" --no-rebuild "${mf[@]+"${mf[@]}"}" --num-processes "$jobs" "$@" \
    >"$work/test.log" 2>&1
  return 0
}

echo "mutate: building $tree"
if ! meson setup "$build" "$tree" >"$work/setup.log" 2>&1 || ! ninja -C "$build" >"$work/build.log" 2>&1; then
  echo "mutate: the unmodified tree does not build (see $work/build.log)"; keep=1; exit 2
fi
suite_targets >"$work/targets" && [ -s "$work/targets" ] ||
  { echo "mutate: meson introspect gave no tests"; keep=1; exit 2; }

# The suites each mutation names, and the suites the baseline must pass.
selected=$MUTATIONS
if [ ${#only[@]} -gt 0 ]; then
  selected=$(awk -v names=" ${only[*]} " 'BEGIN { FS = " :: " } index(names, " " $1 " ")' <<<"$MUTATIONS")
fi
# KVS_MUTATE_SHARD=I/N: the I-th of N interleaved parts of the mutations (from 0), so
# N copies run side by side; each still runs its own baseline.
if [ -n "${KVS_MUTATE_SHARD:-}" ]; then
  si=${KVS_MUTATE_SHARD%/*}
  sn=${KVS_MUTATE_SHARD#*/}
  selected=$(awk -v i="$si" -v n="$sn" '(NR - 1) % n == i' <<<"$selected")
fi
mapped=$(awk 'BEGIN { FS = " :: " } { print $6 }' <<<"$selected" | tr ' ' '\n' | grep -v '^$' | sort -u | paste -sd' ' -)
baseline=()
if [ ${#only[@]} -gt 0 ] && [ $full -eq 0 ]; then
  read -r -a baseline <<<"$mapped"
fi
echo "mutate: baseline: ${baseline[*]:-every suite}, in full"
run_tests "${baseline[@]+"${baseline[@]}"}"
results >"$work/baseline"
if [ ! -s "$work/baseline" ]; then
  echo "mutate: the baseline ran no suite (see $work/test.log)"; keep=1; exit 2
fi
notok=$(awk '$2 != "OK" { print $1 "(" $2 ")" }' "$work/baseline" | paste -sd' ' -)
if [ -n "$notok" ]; then
  echo "mutate: the unmodified tree fails its baseline: $notok (see $work/test.log)"; keep=1; exit 2
fi
for s in $mapped; do
  if ! grep -q "^$s OK$" "$work/baseline"; then
    echo "mutate: the map names $s, which the baseline did not run"; keep=1; exit 2
  fi
done
echo "mutate: baseline passed: $(wc -l <"$work/baseline") suites"

# Replace occurrence N (0: every one) of literal text FROM by TO in FILE.
apply() {
  FROM=$3 TO=$4 N=$2 perl -0pi -e 'my $n = 0; s/\Q$ENV{FROM}\E/(++$n == $ENV{N} || $ENV{N} == 0) ? $ENV{TO} : $&/ge' "$1"
}

killed=0
survived=0
missed=0
while IFS= read -r m; do
  name=$(field "$m" 1)
  file=$(field "$m" 2)
  occ=$(field "$m" 3)
  from=$(field "$m" 4)
  to=$(field "$m" 5)
  msuites=$(field "$m" 6)
  verdict=
  note=
  cp "$tree/$file" "$work/orig"
  apply "$tree/$file" "$occ" "$from" "$to"
  if cmp -s "$tree/$file" "$work/orig"; then
    verdict="NOT APPLIED (text not found)"
    survived=$((survived + 1))
  else
    if [ $full -eq 1 ]; then
      run_tests
    else
      # shellcheck disable=SC2086
      run_tests --maxfail $msuites
    fi
    rc=$?
    if [ $rc -eq 3 ]; then
      verdict="DOES NOT BUILD (fix the mutation)"
      survived=$((survived + 1))
    else
      results >"$work/mutant"
      # Killers: suites that passed the baseline and now do not pass.
      by=$(awk 'NR == FNR { if ($2 == "OK") ok[$1] = 1; next }
                ($2 == "FAIL" || $2 == "TIMEOUT" || $2 == "ERROR" || $2 == "UNEXPECTEDPASS") && ok[$1] { print $1 }' \
                "$work/baseline" "$work/mutant" | sort -u | paste -sd, -)
      ran=$(awk '$2 == "OK" || $2 == "FAIL" || $2 == "TIMEOUT" || $2 == "ERROR"' "$work/mutant" | wc -l)
      if [ -n "$by" ]; then
        verdict="killed by $by"
        killed=$((killed + 1))
      elif [ "$ran" -eq 0 ]; then
        verdict="NO TEST RAN (fix the suites)"
        survived=$((survived + 1))
      else
        verdict="SURVIVED"
        survived=$((survived + 1))
      fi
      if [ $full -eq 1 ] && [ -n "$by" ]; then
        inmap=0
        extra=()
        for k in ${by//,/ }; do
          if [[ " $msuites " == *" $k "* ]]; then inmap=1; else extra+=("$k"); fi
        done
        if [ $inmap -eq 0 ]; then
          note="  MAP MISSES: names $msuites, killed only by ${by}"
          missed=$((missed + 1))
        elif [ ${#extra[@]} -gt 0 ]; then
          note="  (also killed by ${extra[*]})"
        fi
      fi
    fi
  fi
  # A plain copy: the restored file must look newer than the mutant's
  # objects, or ninja would keep them.
  cp "$work/orig" "$tree/$file"
  touch "$tree/$file"
  printf '%-36s %s%s\n' "$name" "$verdict" "$note"
done <<<"$selected"

# Every file is back: the copy must pass again, or the verdicts are suspect.
run_tests "${baseline[@]+"${baseline[@]}"}"
results >"$work/after"
if ! cmp -s "$work/baseline" "$work/after"; then
  echo "mutate: the restored tree no longer passes as the baseline did (see $work/test.log): verdicts unreliable"
  keep=1
  exit 2
fi

# Library files no mutation touches.
none=()
while IFS= read -r f; do
  awk -v f="$f" 'BEGIN { FS = " :: "; r = 1 } { gsub(/^ +| +$/, "", $2); if ($2 == f) r = 0 } END { exit r }' \
    <<<"$MUTATIONS" || none+=("$f")
done < <(cd "$src" && git ls-files 'libkvmstat/*.c' 'common/*.c' 2>/dev/null)
echo "mutate: files with no mutant: ${none[*]:-none}"
# A whole run (no NAME; the first part when sharded) counts each such file
# as a survivor: a layer no mutant reaches is a layer no test is known to
# guard.
if [ ${#only[@]} -eq 0 ] && [ "${si:-0}" = 0 ]; then
  survived=$((survived + ${#none[@]}))
fi
[ $full -eq 1 ] && echo "mutate: the map missed $missed"
echo "mutate: $killed killed, $survived survived"
[ $survived -eq 0 ] && [ $missed -eq 0 ]
}
main "$@"
exit $?
