#!/bin/bash
# tests/linux/oracle_crash.sh DUMP VMLINUX [--raw]
#
# Runs crash(8) (Debian's 8.0.2) in batch mode with `kmem -s` and prints its
# SLUB table as tab-separated columns with a header line:
#   name  cache  objsize  allocated  total  slabs  ssize
# crash's OBJSIZE is s->object_size, ALLOCATED = TOTAL minus every free object
# (node partial + CPU slab + CPU freelist + CPU partial), TOTAL/SLABS come from
# the node counters. --raw prints crash's own output instead; with
# KVS_CRASH_RAW=FILE crash's own output is also written to FILE.
# DUMP may be the parts of a split dump, comma-separated (a,b,c): crash
# reads them together.
# crash reads every dump made by capture.sh: both ELFs, the flattened and the
# reassembled kdump, the makedumpfile outputs, and (as FILE@0 with --kaslr and
# --machdep phys_base= from the RAM's VMCOREINFO note) a raw RAM file *.ram.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: oracle_crash.sh DUMP VMLINUX [--raw]" >&2; exit 2; }
DUMP=$1 VMLINUX=$2 RAW=${3:-}
command -v crash >/dev/null || { echo "oracle_crash: crash is not installed (tests/linux/setup.sh)" >&2; exit 1; }

PY=${PY:-/usr/bin/python3}; [ -x "$PY" ] || PY=python3
tmp=$(mktemp -d /tmp/kvs-crash.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'kmem -s\nquit\n' >"$tmp/cmds"
EXTRA=()
read -r -a FILES <<<"${DUMP//,/ }"
case "$DUMP" in
*.ram)	# a raw guest-RAM file (offset = phys): crash's ramdump form FILE@0 needs
	# KERNELOFFSET and phys_base, taken from the VMCOREINFO note in the RAM
	read -r -a EXTRA < <("$PY" "$(dirname "$0")/dumptools.py" ram-vmcoreinfo "$DUMP") ||
		{ echo "oracle_crash: no VMCOREINFO in $DUMP" >&2; exit 1; }
	FILES=("$DUMP@0") ;;
esac
if ! crash -s "${EXTRA[@]}" -i "$tmp/cmds" "$VMLINUX" "${FILES[@]}" </dev/null >"$tmp/out" 2>"$tmp/err"; then
	echo "oracle_crash: crash failed on $DUMP:" >&2
	tail -n 20 "$tmp/err" "$tmp/out" >&2
	exit 1
fi
[ -z "${KVS_CRASH_RAW:-}" ] || cp "$tmp/out" "$KVS_CRASH_RAW"
if [ "$RAW" = --raw ]; then
	cat "$tmp/out"
	exit 0
fi
# CACHE OBJSIZE ALLOCATED TOTAL SLABS SSIZE NAME  (a name may hold spaces)
awk -v OFS='\t' '
	/^CACHE +OBJSIZE +ALLOCATED/ { hdr = 1; print "name", "cache", "objsize", "allocated", "total", "slabs", "ssize"; next }
	hdr && $1 ~ /^[0-9a-f]+$/ && NF >= 7 {
		name = $7; for (i = 8; i <= NF; i++) name = name " " $i
		print name, $1, $2, $3, $4, $5, $6; n++
	}
	END { if (!hdr || !n) exit 1 }
' "$tmp/out" || {
	echo "oracle_crash: no kmem -s table in crash output for $DUMP:" >&2
	head -n 30 "$tmp/out" "$tmp/err" >&2
	exit 1
}
grep -i -E 'warning|error' "$tmp/err" >&2 || true
