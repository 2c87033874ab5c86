#!/usr/bin/env bash
# tests/linux/realcore.sh [KVMSTAT] - kvmstat on a real Linux kernel, checked
# against the guest's own /proc/slabinfo, drgn and crash on the same dumps.
#
#   1. setup.sh installs QEMU, Debian's kernel and its debug vmlinux, drgn,
#      crash and makedumpfile (downloads cached in $KVS_LINUX_CACHE);
#   2. capture.sh boots the kernel under TCG three times - nokaslr, KASLR, and
#      KASLR with guest RAM in a shared file (live) - and takes every dump
#      format (cached: a capture made by the same script and kernel is reused);
#   3. run_oracles.sh runs drgn and crash on each dump;
#   4. kvmstat reads every dump and check_kvmstat.py compares, per cache and
#      field, and byte for byte where a peer prints the same table.
# Each step that fails says which one.  The last line is
# "linux-realcore: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
KVMSTAT=${1:-${KVMSTAT:-build/analyzers/kvmstat}}
CACHE=${KVS_LINUX_CACHE:-/var/cache/kvmstat-linux}
export KVS_LINUX_CACHE=$CACHE
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
for cap in "${captures[@]}"; do
	dir=$CACHE/captures/$cap
	args=()
	[ "$cap" = kaslr ] && args=(--kaslr)
	[ "$cap" = live ] && args=(--kaslr --live)
	step "capture $cap"
	bash tests/linux/capture.sh "$dir" "${args[@]}" || fail "capture $cap (see $dir/serial.log)"
	if [ ! -s "$dir/oracles/summary.json" ] || [ "$dir/capture.stamp" -nt "$dir/oracles/summary.json" ]; then
		step "oracles (drgn, crash) on $cap"
		bash tests/linux/run_oracles.sh "$dir" "$VMLINUX" >"$OUT/$cap.oracles.log" 2>&1 ||
			{ tail -20 "$OUT/$cap.oracles.log"; fail "oracles on $cap disagree with each other or failed"; }
	fi
	# crash's own tables, byte for byte, for the text comparisons.
	for what in kmem log; do
		f=$dir/oracles/crash.$what.raw
		if [ ! -s "$f" ] || [ "$dir/capture.stamp" -nt "$f" ]; then
			cmd="kmem -s"; [ $what = log ] && cmd=log
			printf '%s\nquit\n' "$cmd" >"$OUT/cmds"
			crash -s -i "$OUT/cmds" "$VMLINUX" "$dir/vmcore.elf" </dev/null >"$f.tmp" 2>"$OUT/crash.err" ||
				{ tail "$OUT/crash.err"; fail "crash $cmd on $cap"; }
			mv "$f.tmp" "$f"
		fi
	done
	step "kvmstat on $cap"
	mkdir -p "$OUT/$cap"
	dumps=(vmcore.elf vmcore.elf-paging)
	[ -f "$dir/mem.ram" ] && dumps+=(mem.ram)
	# The kdump-compressed forms (source/kdump.c): QEMU's flattened stream,
	# the file makedumpfile -R rebuilds from it (bare and with its utsname
	# filled), and makedumpfile's filtered zlib / lzo (/ zstd) outputs.
	for d in vmcore.kdump-zlib.flat vmcore.kdump-zlib vmcore.kdump-zlib.uts \
	    vmcore.mdf-d31 vmcore.mdf-lzo vmcore.mdf-zstd; do
		[ -f "$dir/$d" ] && dumps+=("$d")
	done
	# A split dump (makedumpfile --split, three parts of about the same
	# size), made once from the -d 31 dump and kept beside it; read as
	# the three files together (-M a,b,c).
	if [ -f "$dir/vmcore.mdf-d31" ] && [ ! -s "$dir/vmcore.mdf-split.3" ]; then
		sp=$dir; [ -w "$dir" ] || sp=$OUT/$cap
		mkdir -p "$sp"
		makedumpfile --split --splitblock-size 1024 -c -d 31 "$dir/vmcore.mdf-d31" \
		    "$sp/vmcore.mdf-split.1" "$sp/vmcore.mdf-split.2" "$sp/vmcore.mdf-split.3" \
		    >"$OUT/$cap.split.log" 2>&1 || { tail "$OUT/$cap.split.log"; fail "makedumpfile --split on $cap"; }
		chmod a+r "$sp"/vmcore.mdf-split.* 2>/dev/null
		[ "$sp" = "$dir" ] || ln -sf "$sp"/vmcore.mdf-split.* "$OUT/$cap/" 2>/dev/null
	fi
	splitdir=$dir; [ -s "$dir/vmcore.mdf-split.3" ] || splitdir=$OUT/$cap
	[ -s "$splitdir/vmcore.mdf-split.3" ] && dumps+=(vmcore.mdf-split)
	for d in "${dumps[@]}"; do
		raw=(); [ "$d" = mem.ram ] && raw=(--raw)
		path=$dir/$d
		[ "$d" = vmcore.mdf-split ] &&
			path=$splitdir/$d.1,$splitdir/$d.2,$splitdir/$d.3
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
		# The decompressed-page cache's counters (kdump forms only).
		"$KVMSTAT" -M "$path" "${raw[@]}" info --stats --json >"$OUT/$cap/$d.stats" \
		    2>"$OUT/$cap/$d.stats.err"
		echo $? >"$OUT/$cap/$d.stats.rc"
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
	bash tests/linux/capture.sh "$CACHE/captures/kcore" --kaslr --kcore "$KVMSTAT" ||
		fail "capture kcore (see $CACHE/captures/kcore/serial.log)"
fi
step "compare"
SYSTEM_MAP=$SYSTEM_MAP python3 tests/linux/check_kvmstat.py "$CACHE/captures" "$OUT" "${captures[@]}"
