#!/usr/bin/env bash
# capture_outputs.sh KVMSTAT OUTDIR - run every kvmstat command, text and --json, on
# every fixture dump and write each command's stdout, stderr and exit status
# to OUTDIR.  A redesign proves it changed no behaviour by capturing before
# and after and comparing the two directories (tests/golden/compare.sh).
set -uo pipefail
KVMSTAT=${1:?usage: capture_outputs.sh KVMSTAT OUTDIR}
OUT=${2:?usage: capture_outputs.sh KVMSTAT OUTDIR}
cd "$(dirname "$0")/../.."
mkdir -p "$OUT"
F=fixtures/cores
run() {  # name, args...
	local name=$1; shift
	"$KVMSTAT" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	echo $? >"$OUT/$name.rc"
}
for dir in fbsd5 fbsd11 fbsd12 fbsd14 fbsd14-s2; do
	kernel=$F/$dir/kernel
	[ "$dir" = fbsd14-s2 ] && kernel=$F/fbsd14/kernel
	for core in $F/$dir/vmcore.* $F/$dir/mem.raw; do
		[ -f "$core" ] || continue
		c=$(basename "$core")
		extra=()
		[ "$c" = mem.raw ] && extra=(--raw)
		for cmd in info dmesg malloc zone profile probes profil; do
			for fmt in text json; do
				j=(); [ $fmt = json ] && j=(--json)
				run "$dir.$c.$cmd.$fmt" -N "$kernel" -M "$core" "${extra[@]}" "${j[@]}" $cmd
			done
		done
		run "$dir.$c.malloc.percpu" -N "$kernel" -M "$core" "${extra[@]}" malloc --percpu
		run "$dir.$c.zone.percpu" -N "$kernel" -M "$core" "${extra[@]}" zone --percpu
		run "$dir.$c.zone.percpu.json" -N "$kernel" -M "$core" "${extra[@]}" --json zone --percpu
		for s in name inuse memuse requests; do
			run "$dir.$c.malloc.sort-$s" -N "$kernel" -M "$core" "${extra[@]}" malloc --sort $s
		done
		for f in 5 6 14; do
			run "$dir.$c.malloc.fmt$f" -N "$kernel" -M "$core" "${extra[@]}" malloc --format $f
		done
		for f in 12 14 15; do
			run "$dir.$c.zone.fmt$f" -N "$kernel" -M "$core" "${extra[@]}" zone --format $f
		done
		run "$dir.$c.profile.top3" -N "$kernel" -M "$core" "${extra[@]}" profile --top 3
		run "$dir.$c.probes.all" -N "$kernel" -M "$core" "${extra[@]}" probes --all
		run "$dir.$c.probes.K" -N "$kernel" -M "$core" "${extra[@]}" -K $F/fbsd14/dtrace.ko -K $F/fbsd14/profile.ko --json probes
		tmp=$(mktemp -u /tmp/golden.gmon.XXXXXX)
		run "$dir.$c.gmon" -N "$kernel" -M "$core" "${extra[@]}" gmon -o "$tmp"
		if [ -f "$tmp" ]; then cp "$tmp" "$OUT/$dir.$c.gmon.bin"; rm -f "$tmp"; fi
	done
done
# Linux: the real Debian kernel's dumps that tests/linux made, when this
# machine has them (KVS_LINUX_CACHE, default /var/cache/kvmstat-linux), with
# the kernel file and without it (symbols and BTF from the dump itself),
# and without the layout cache, so that the type providers answer.
LC=${KVS_LINUX_CACHE:-/var/cache/kvmstat-linux}
if [ -f "$LC/setup.env" ]; then (
	export KVS_NO_CACHE=1
	VMLINUX=$(sed -n 's/^VMLINUX=//p' "$LC/setup.env")
	for v in kaslr/vmcore.elf kaslr/vmcore.kdump-zlib nokaslr/vmcore.elf; do
		core=$LC/captures/$v
		[ -f "$core" ] || continue
		c=$(echo "$v" | tr / .)
		for cmd in info slab dmesg; do
			run "linux.$c.$cmd" -N "$VMLINUX" -M "$core" $cmd
			run "linux.$c.$cmd.json" -N "$VMLINUX" -M "$core" --json $cmd
			run "linux.$c.nokernel.$cmd" -M "$core" $cmd
		done
		run "linux.$c.type" -N "$VMLINUX" -M "$core" type "struct kmem_cache"
		run "linux.$c.nokernel.type" -M "$core" type "struct kmem_cache"
	done
) fi
# Mismatched kernel, defaults, bad input.
run other.malloc -N $F/fbsd14/kernel.other -M $F/fbsd14/vmcore.minidump3 malloc
run other.noverify -N $F/fbsd14/kernel.other -M $F/fbsd14/vmcore.minidump3 --no-verify malloc
run dwarf2.malloc -N $F/fbsd14/kernel.dwarf2 -M $F/fbsd14/vmcore.minidump3 malloc
run dwarf5.zone -N $F/fbsd14/kernel.dwarf5 -M $F/fbsd14/vmcore.minidump3 zone
run default.info --demo info
run help --help
run nocmd
run badcmd frobnicate
run devnull -N $F/fbsd14/kernel -M /dev/null info
run devzero -N $F/fbsd14/kernel -M /dev/zero info
run truth-as-core -N $F/fbsd14/kernel -M $F/fbsd14/truth.json info
run nokernel -N /nonexistent -M $F/fbsd14/vmcore.minidump3 info
# Paths in messages differ only by the temporary names above.
sed -i "s#/tmp/golden.gmon.[A-Za-z0-9]*#TMP#g" "$OUT"/*.out "$OUT"/*.err
