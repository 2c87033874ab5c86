#!/usr/bin/env bash
# vmlinux_btf.sh VMLINUX [BUILDDIR] - check that libkvmstat's BTF layer
# (types/btf.c) answers a real Linux kernel's types exactly as its DWARF
# layer (types/dwarf.c) does.
#
# Not part of the default suite: it needs a vmlinux with both .BTF and DWARF
# (Debian 12's is /usr/lib/debug/boot/vmlinux-6.1.0-*-amd64 from
# linux-image-*-dbg, 633 MB).  For every struct the Linux walkers use, the
# struct itself and every member by dotted path (anonymous struct and union
# members by their own names, nested structs and unions descended into) is
# asked of both layers by tests/real/btf_dwarf_lookup.c, built against
# BUILDDIR's static library (default $KVS_BUILDDIR, else build/), and every
# field of the answers is compared.  Prints the time and peak RSS of each.
#
# With VMCORE=<dump of that kernel> in the environment it also runs
# `kvmstat slab` and `kvmstat dmesg` with BTF (the default) and with
# KVS_TYPES=dwarf, requires identical output, and prints /usr/bin/time's
# elapsed time and maximum RSS for both.
#
# Exit 0 only if nothing differs.  A missing vmlinux, dump (when VMCORE is
# set), compiler, library or build is a failure (exit 1 with a message),
# never a silent pass.
set -euo pipefail

fail() { echo "vmlinux_btf: FAIL: $*" >&2; exit 1; }

[ $# -ge 1 ] && [ $# -le 2 ] || fail "usage: $0 VMLINUX [BUILDDIR]"
VMLINUX=$1
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${2:-${KVS_BUILDDIR:-$SRC/build}}
LIB=$BUILD/libkvmstat/libkvmstat_core.a
KVMSTAT=$BUILD/analyzers/kvmstat
TYPES=(kmem_cache kmem_cache_node kmem_cache_cpu slab page list_head
       printk_ringbuffer prb_desc_ring prb_data_ring prb_desc printk_info
       kmem_cache_order_objects)

[ -f "$VMLINUX" ] && [ -r "$VMLINUX" ] || fail "vmlinux $VMLINUX not found or not readable"
command -v cc >/dev/null 2>&1 || fail "cc is not installed (needed to build the helper)"
[ -f "$LIB" ] || fail "$LIB not found: build libkvmstat first (meson setup $BUILD && ninja -C $BUILD)"
if [ -n "${VMCORE:-}" ]; then
	[ -f "$VMCORE" ] && [ -r "$VMCORE" ] || fail "dump VMCORE=$VMCORE not found or not readable"
	[ -x "$KVMSTAT" ] || fail "$KVMSTAT not found: build it first (ninja -C $BUILD)"
	[ -x /usr/bin/time ] || fail "/usr/bin/time is not installed (Debian: time)"
fi

TMP=$(mktemp -d /tmp/vmlinux_btf.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

INCS=()
while IFS= read -r dir; do INCS+=("-I$dir"); done < <(find "$SRC/libkvmstat" -name '*.h' -printf '%h\n' | sort -u)
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra "${INCS[@]}" -o "$TMP/lookup" \
    "$SRC/tests/real/btf_dwarf_lookup.c" "$LIB" -lbpf -lelf -ldwarf -lz -lm 2>"$TMP/cc.err" ||
	{ cat "$TMP/cc.err" >&2; fail "cannot build the lookup helper against $LIB"; }

echo "vmlinux_btf: BTF and DWARF of $VMLINUX (DWARF is slow: seconds)..."
rc=0
"$TMP/lookup" "$VMLINUX" "${TYPES[@]}" || rc=$?
case $rc in
0) ;;
1) fail "BTF and DWARF answer differently (DIFF lines above)" ;;
*) fail "the lookup helper could not run (exit $rc)" ;;
esac

if [ -n "${VMCORE:-}" ]; then
	for cmd in slab dmesg; do
		for mode in btf dwarf; do
			env KVS_TYPES=$mode /usr/bin/time -f "%e %M" -o "$TMP/$cmd.$mode.time" \
			    "$KVMSTAT" -N "$VMLINUX" -M "$VMCORE" $cmd >"$TMP/$cmd.$mode.out" \
			    2>"$TMP/$cmd.$mode.err" ||
				{ cat "$TMP/$cmd.$mode.err" >&2; fail "kvmstat $cmd ($mode) failed"; }
			read -r secs kb <"$TMP/$cmd.$mode.time"
			printf 'kvmstat %-5s with %-5s: %6.2f s, max RSS %6d kB, %d lines\n' \
			    "$cmd" "$mode" "$secs" "$kb" "$(wc -l <"$TMP/$cmd.$mode.out")"
		done
		cmp -s "$TMP/$cmd.btf.out" "$TMP/$cmd.dwarf.out" ||
			{ diff "$TMP/$cmd.dwarf.out" "$TMP/$cmd.btf.out" | head -20 >&2;
			  fail "kvmstat $cmd prints differently with BTF and with DWARF"; }
		[ -s "$TMP/$cmd.btf.out" ] || fail "kvmstat $cmd printed nothing"
		echo "kvmstat $cmd: output identical with BTF and with DWARF"
	done
fi
echo "vmlinux_btf: OK: BTF answers as DWARF for struct ${TYPES[*]}"
