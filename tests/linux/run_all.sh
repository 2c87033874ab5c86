#!/bin/bash
# tests/linux/run_all.sh [ROOT] [--no-live] [--no-oracles]
#
# The three standard captures under ROOT (default
# $KVS_LINUX_CACHE/captures): nokaslr, kaslr (--kaslr) and live (--kaslr
# --live, with live_check.sh run on the running guest), each followed by
# run_oracles.sh. Captures already complete for this kernel build and script
# version are reused. Prints one line per capture; exit 1 if anything failed
# or the oracles disagree with each other.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
ROOT=$KVS_LINUX_CACHE/captures; LIVE=1; ORACLES=1
for a in "$@"; do
	case "$a" in
	--no-live) LIVE=0 ;;
	--no-oracles) ORACLES=0 ;;
	-*) die "run_all: unknown option $a" ;;
	*) ROOT=$a ;;
	esac
done
D=$KVS_LINUX_DIR
names=(nokaslr kaslr); args=("" "--kaslr")
if [ $LIVE = 1 ]; then names+=(live); args+=("--kaslr --live --live-hook $D/live_check.sh"); fi
rc=0
for i in "${!names[@]}"; do
	n=${names[$i]}
	t0=$(now)
	# shellcheck disable=SC2086
	if ! "$D/capture.sh" "$ROOT/$n" ${args[$i]}; then
		echo "run_all: $n: capture FAILED" >&2; rc=1; continue
	fi
	tc=$(elapsed "$t0")
	if [ $ORACLES = 1 ]; then
		t0=$(now)
		if "$D/run_oracles.sh" "$ROOT/$n" >"$ROOT/$n/run_oracles.log" 2>&1; then r=agree; else r="DISAGREE (see $ROOT/$n/oracles/compare.txt)"; rc=1; fi
		echo "run_all: $n: capture ${tc} s, oracles $(elapsed "$t0") s: $r"
		grep -E '^(drgn all six|crash ALLOCATED == drgn|live exact)' "$ROOT/$n/oracles/compare.txt" | sed 's/^/    /'
	else
		echo "run_all: $n: capture ${tc} s"
	fi
done
exit $rc
