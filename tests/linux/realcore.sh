#!/usr/bin/env bash
# tests/linux/realcore.sh [KVMSTAT] - kvmstat on a real Linux kernel, checked
# against the guest's own /proc/slabinfo, drgn and crash on the same dumps.
#
#   1. setup.sh installs QEMU, Debian's kernel and its debug vmlinux, drgn,
#      crash and makedumpfile (downloads cached in $KVS_LINUX_CACHE);
#   2. capture.sh boots the kernel under TCG three times - nokaslr, KASLR, and
#      KASLR with guest RAM in a shared file (live) - and takes every dump
#      format (cached: a capture made by the same script and kernel is reused);
#   3. run_oracles.sh runs drgn and crash on every dump form (rerun when
#      lib.sh's oracle_hash - oracle scripts, tool versions, capture -
#      differs from the one stored beside the results);
#   4. kvmstat reads every form and check_kvmstat.py compares, per form,
#      cache and field, with each oracle that read the same form and with
#      the guest's /proc/slabinfo read before and after the dump, and byte for
#      byte where a peer prints the same table.
# Opt-outs, each named in the summary: KVS_CAPTURES (a subset of "nokaslr
# kaslr live"), KVS_KCORE=0, KVS_SKIP_ORACLES ("drgn", "crash").
# Each step that fails says which one.  Before the last line come the form
# table (which oracles checked each form), what could not be made here and
# what was skipped; the last line is "linux-realcore: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
KVMSTAT=${1:-${KVMSTAT:-build/analyzers/kvmstat}}
CACHE=${KVS_LINUX_CACHE:-/var/cache/kvmstat-linux}
export KVS_LINUX_CACHE=$CACHE
# The captures' root (KVS_CAPTURES_ROOT: a second root, e.g. new captures
# made beside the ones in use, swapped in by a rename once complete).
CAPROOT=${KVS_CAPTURES_ROOT:-$CACHE/captures}
. tests/linux/lib.sh
T_START=$(date +%s)
fail() { echo "linux-realcore: FAILED at step: $*" >&2; echo "linux-realcore: 0 passed, 1 failed"; exit 1; }
step() { echo "== linux-realcore: $*"; }

[ -x "$KVMSTAT" ] || fail "kvmstat binary $KVMSTAT missing (build first)"
step "setup (packages, kernel, debug vmlinux)"
bash tests/linux/setup.sh || fail "setup: tests/linux/setup.sh"
. "$CACHE/setup.env" || fail "setup: $CACHE/setup.env unreadable"
[ -r "$VMLINUX" ] || fail "setup: no debug vmlinux at $VMLINUX"

# Every struct the Linux layer and walkers read (os/linux/*.c).
WALKER_TYPES="kmem_cache kmem_cache_node kmem_cache_cpu slab page list_head
 printk_ringbuffer prb_desc_ring prb_data_ring prb_desc prb_data_blk_lpos printk_info"
OUT=$(mktemp -d /tmp/kvs-realcore.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
# The vmlinux with neither DWARF nor BTF (symbols only, as a stripped
# kernel): its types must then come from the dump's BTF.
STRIPPED=$OUT/vmlinux-notypes
if ! objcopy --strip-debug "$VMLINUX" "$STRIPPED" 2>"$OUT/objcopy.err" ||
	! python3 -c "
import sys
p = sys.argv[1]; d = bytearray(open(p, 'rb').read()); i = d.find(b'.BTF\\0')
while i != -1:
    d[i:i + 4] = b'.XTF'; i = d.find(b'.BTF\\0', i + 1)
open(p, 'wb').write(d)" "$STRIPPED"; then
	fail "making a vmlinux without DWARF and BTF"
fi
read -r -a captures <<<"${KVS_CAPTURES:-nokaslr kaslr live}"
# What is opted out, for the summary.
OPTED=()
for c in nokaslr kaslr live; do
	case " ${captures[*]} " in *" $c "*) ;; *) OPTED+=("capture $c (KVS_CAPTURES)") ;; esac
done
[ "${KVS_KCORE:-1}" = 1 ] || OPTED+=("kcore: kvmstat on /proc/kcore in the guest (KVS_KCORE=0)")
for t in ${KVS_SKIP_ORACLES:-}; do OPTED+=("oracle $t (KVS_SKIP_ORACLES)"); done
export KVS_OPTED_OUT
KVS_OPTED_OUT=$(printf '%s\n' "${OPTED[@]}")
for cap in "${captures[@]}"; do
	dir=$CAPROOT/$cap
	args=()
	[ "$cap" = kaslr ] && args=(--kaslr)
	[ "$cap" = live ] && args=(--kaslr --live)
	step "capture $cap"
	bash tests/linux/capture.sh "$dir" "${args[@]}" || fail "capture $cap (see $dir/serial.log)"
	want=$(printf '%s\n' "$(oracle_hash "$dir")" "${KVS_SKIP_ORACLES:-}")
	if [ "$(cat "$dir/oracles/hash" 2>/dev/null)" != "$want" ]; then
		step "oracles (drgn, crash) on $cap: every form"
		bash tests/linux/run_oracles.sh "$dir" "$VMLINUX" >"$OUT/$cap.oracles.log" 2>&1 ||
			{ tail -20 "$OUT/$cap.oracles.log"; fail "oracles on $cap disagree with each other or failed"; }
	else
		step "oracles on $cap: reusing the results of the same scripts, tools and capture"
	fi
	step "kvmstat on $cap"
	mkdir -p "$OUT/$cap"
	mapfile -t dumps < <(capture_forms "$dir")
	printf '%s\n' "${dumps[@]}" >"$OUT/$cap/forms.txt"
	for d in "${dumps[@]}"; do
		raw=(); [ "$d" = mem.ram ] && raw=(--raw)
		path=$(form_path "$dir" "$d")
		for c in "slab --json" "slab" "slab --format crash" "dmesg" "info --json"; do
			tag=$(echo "$c" | tr -c 'a-z\n' '_')
			/usr/bin/time -f "%e %M" -o "$OUT/$cap/$d.$tag.time" \
			    "$KVMSTAT" -N "$VMLINUX" -M "$path" "${raw[@]}" $c \
			    >"$OUT/$cap/$d.$tag" 2>"$OUT/$cap/$d.$tag.err"
			echo $? >"$OUT/$cap/$d.$tag.rc"
			# The same without the debug file: kallsyms and BTF from
			# the dump itself (must print the same bytes).
			"$KVMSTAT" -M "$path" "${raw[@]}" $c >"$OUT/$cap/$d.nodebug.$tag" \
			    2>"$OUT/$cap/$d.nodebug.$tag.err"
			echo $? >"$OUT/$cap/$d.nodebug.$tag.rc"
		done
		# The memory census (check_census.py), with and without vmlinux.
		for c in "mem --json" "mem" "buddyinfo" "buddyinfo --json" "zoneinfo --json" \
		    "vmalloc" "vmalloc --json" "whatis --json -"; do
			tag=$(echo "$c" | tr -c 'a-z\n' '_')
			for n in "" nodebug.; do
				nargs=(-N "$VMLINUX"); [ -n "$n" ] && nargs=()
				/usr/bin/time -f "%e %M" -o "$OUT/$cap/$d.$n$tag.time" \
				    "$KVMSTAT" "${nargs[@]}" -M "$path" "${raw[@]}" $c <"$dir/oracles/whatis.addrs" \
				    >"$OUT/$cap/$d.$n$tag" 2>"$OUT/$cap/$d.$n$tag.err"
				echo $? >"$OUT/$cap/$d.$n$tag.census-rc"
			done
		done
		# The decompressed-page cache's counters (kdump forms only).
		"$KVMSTAT" -M "$path" "${raw[@]}" info --stats --json >"$OUT/$cap/$d.stats" \
		    2>"$OUT/$cap/$d.stats.err"
		echo $? >"$OUT/$cap/$d.stats.rc"
	done
	# Every object of a few caches (crash's kmem -S on the same dump).
	for c in kmalloc-64 kmem_cache dentry task_struct; do
		for n in "" nodebug.; do
			nargs=(-N "$VMLINUX"); [ -n "$n" ] && nargs=()
			"$KVMSTAT" "${nargs[@]}" -M "$dir/vmcore.elf" slab --objects "$c" --json \
			    >"$OUT/$cap/vmcore.elf.${n}slab_objects_$c" 2>"$OUT/$cap/vmcore.elf.${n}slab_objects_$c.err"
			echo $? >"$OUT/$cap/vmcore.elf.${n}slab_objects_$c.census-rc"
		done
	done
	# A kernel file with symbols but no types: the dump's BTF answers.
	"$KVMSTAT" -N "$STRIPPED" -M "$dir/vmcore.elf" slab --json >"$OUT/$cap/stripped.slab___json" \
	    2>"$OUT/$cap/stripped.err"
	echo $? >"$OUT/$cap/stripped.rc"
	# The kernel profile buffer (profile=2), with and without vmlinux.
	"$KVMSTAT" -M "$dir/vmcore.elf" gmon -f -o "$OUT/$cap/gmon.out" 2>"$OUT/$cap/gmon.err"
	echo $? >"$OUT/$cap/gmon.rc"
	for n in "" nodebug.; do
		nargs=(-N "$VMLINUX"); [ -n "$n" ] && nargs=()
		"$KVMSTAT" "${nargs[@]}" -M "$dir/vmcore.elf" profile --json \
		    >"$OUT/$cap/vmcore.elf.${n}profile___json" 2>"$OUT/$cap/vmcore.elf.${n}profile.err"
		echo $? >"$OUT/$cap/vmcore.elf.${n}profile.rc"
	done
	# Layouts of every struct the walkers use: the dump's BTF against
	# the vmlinux DWARF.
	"$KVMSTAT" -M "$dir/vmcore.elf" type --json $WALKER_TYPES >"$OUT/$cap/types.btf-dump" \
	    2>"$OUT/$cap/types.btf-dump.err"
	echo $? >"$OUT/$cap/types.btf-dump.rc"
	KVS_TYPES=dwarf "$KVMSTAT" -N "$VMLINUX" type --json $WALKER_TYPES \
	    >"$OUT/$cap/types.dwarf" 2>"$OUT/$cap/types.dwarf.err"
	echo $? >"$OUT/$cap/types.dwarf.rc"
done
# kvmstat inside the guest on its own /proc/kcore, beside /proc/slabinfo
# read just before and just after it (redone when kvmstat changes).
if [ "${KVS_KCORE:-1}" = 1 ]; then
	step "capture kcore (kvmstat -M /proc/kcore in the guest)"
	bash tests/linux/capture.sh "$CAPROOT/kcore" --kaslr --kcore "$KVMSTAT" ||
		fail "capture kcore (see $CAPROOT/kcore/serial.log)"
fi
step "compare"
KVS_T_START=$T_START SYSTEM_MAP=$SYSTEM_MAP python3 tests/linux/check_kvmstat.py "$CAPROOT" "$OUT" "${captures[@]}"
