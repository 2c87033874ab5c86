#!/bin/bash
# tests/linux/oracle_crash_census.sh DUMP VMLINUX OUTDIR [ADDRS]
#
# crash(8)'s reading of the memory census on a dump, for check_kvmstat.py:
#   OUTDIR/crash.census.raw   kmem -i, kmem -z, kmem -f, kmem -V, kmem -v and
#                             kmem -S CACHE for a few caches, each after a line
#                             "=== CMD ===" (one crash session)
#   OUTDIR/crash.whatis/N     kmem ADDR for the N-th line of ADDRS (hex)
# DUMP may be split parts (a,b,c) as in oracle_crash.sh.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: oracle_crash_census.sh DUMP VMLINUX OUTDIR [ADDRS]" >&2; exit 2; }
DUMP=$1 VMLINUX=$2 OUT=$3 ADDRS=${4:-}
command -v crash >/dev/null || { echo "oracle_crash_census: crash is not installed" >&2; exit 1; }
CACHES="kmalloc-64 kmem_cache dentry task_struct"
tmp=$(mktemp -d /tmp/kvs-crashc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
read -r -a FILES <<<"${DUMP//,/ }"
mkdir -p "$OUT"
rm -rf "$OUT/crash.whatis"; mkdir -p "$OUT/crash.whatis"
{
	n=0
	for c in "kmem -i" "kmem -z" "kmem -f" "kmem -V" "kmem -v"; do
		n=$((n + 1)); echo "$c > $tmp/c$n"
	done
	for c in $CACHES; do n=$((n + 1)); echo "kmem -S $c > $tmp/c$n"; done
	if [ -n "$ADDRS" ]; then
		awk -v d="$OUT/crash.whatis" 'NF { print "kmem " $1 " > " d "/" NR }' "$ADDRS"
	fi
	echo quit
} >"$tmp/cmds"
if ! crash -s -i "$tmp/cmds" "$VMLINUX" "${FILES[@]}" </dev/null >"$tmp/out" 2>"$tmp/err"; then
	echo "oracle_crash_census: crash failed on $DUMP:" >&2
	tail -n 20 "$tmp/err" "$tmp/out" >&2
	exit 1
fi
n=0
for c in "kmem -i" "kmem -z" "kmem -f" "kmem -V" "kmem -v"; do
	n=$((n + 1)); echo "=== $c ==="; cat "$tmp/c$n" 2>/dev/null || echo "(no output)"
done >"$OUT/crash.census.raw"
for c in $CACHES; do
	n=$((n + 1)); echo "=== kmem -S $c ==="; cat "$tmp/c$n" 2>/dev/null || echo "(no output)"
done >>"$OUT/crash.census.raw"
grep -q 'TOTAL MEM' "$OUT/crash.census.raw" || { echo "oracle_crash_census: no kmem -i table" >&2; exit 1; }
if [ -n "$ADDRS" ]; then
	want=$(grep -c . "$ADDRS"); got=$(find "$OUT/crash.whatis" -type f | wc -l)
	[ "$got" = "$want" ] || { echo "oracle_crash_census: kmem ADDR answered $got of $want addresses" >&2; exit 1; }
fi
