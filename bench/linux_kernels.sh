#!/usr/bin/env bash
# linux_kernels.sh - the slab table with exactly allocated objects on each
# kernel of tests/linux/kernel_check.sh's matrix (its nokaslr captures, its
# trixie chroot), side by side in one run:
#   kvmstat  `kvmstat -N vmlinux -M vmcore.elf slab --format crash`
#            (crash's kmem -s columns: every free object subtracted);
#   drgn     trixie's drgn 0.0.31, the same table through its own generic
#            helpers (tests/linux/oracle_drgn_generic.py --slab-only:
#            for_each_slab_cache, slab_cache_for_each_allocated_object);
#   crash    trixie's crash 8.0.6 `kmem -s` (amd64 only: Debian builds crash
#            for the host's architecture).
# Median wall time of RUNS (default 3) after one warm-up each (WARMUP=0: none); prints a
# Markdown table with kvmstat's time as a fraction of each peer's.
# KERNELS_JSON=FILE also writes the rows as JSON (bench/run).  Run
# tests/linux/kernel_check.sh first: a missing capture or chroot fails.
# Not a test: timings move 2x on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${KVS_LINUX_CACHE:-/var/cache/kvmstat-linux}
K=$(realpath "${KVMSTAT:-build/analyzers/kvmstat}")
R=$CACHE/trixie/root
RUNS=${RUNS:-3}
[ -x "$R/usr/bin/crash" ] && [ -x "$K" ] ||
	{ echo "linux_kernels: no $R or $K: run tests/linux/kernel_check.sh first" >&2; exit 1; }
caps=$(ls -d "$CACHE"/amd64/cap-*-nokaslr "$CACHE"/arm64/cap-*-nokaslr 2>/dev/null | sort -V)
[ -n "$caps" ] || { echo "linux_kernels: no captures: run tests/linux/kernel_check.sh first" >&2; exit 1; }
ORACLE=$PWD/tests/linux/oracle_drgn_generic.py
mkdir -p "$R$(dirname "$ORACLE")"
[ "$ORACLE" -ef "$R$ORACLE" ] || cp "$ORACLE" "$R$ORACLE"    # kernel_check may have linked it
printf 'kmem -s\nquit\n' >"$R/tmp/kvs-bench-kmem-s"

# median CMD...: the median wall seconds of RUNS runs after one warm-up
# (WARMUP=0: no warm-up run).  time(1) writes to a file of its own: the
# command's stderr is not its.
median() {
	local i ts=() tf
	tf=$(mktemp)
	if [ "${WARMUP:-1}" != 0 ]; then
		"$@" >/dev/null 2>&1 || { rm -f "$tf"; echo fail; return; }
	fi
	for i in $(seq "$RUNS"); do
		/usr/bin/time -f %e -o "$tf" "$@" >/dev/null 2>&1 || { rm -f "$tf"; echo fail; return; }
		ts+=("$(tail -1 "$tf")")
	done
	rm -f "$tf"
	printf '%s\n' "${ts[@]}" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b == "fail" || b == "-" || b == 0) print "-"; else printf "%.2gx", a / b }'; }

echo "| kernel | kvmstat s | drgn 0.0.31 s | kvmstat/drgn | crash 8.0.6 s | kvmstat/crash |"
echo "|---|---|---|---|---|---|"
rows=()
for cap in $caps; do
	arch=$(basename "$(dirname "$cap")")
	kver=$(basename "$cap"); kver=${kver#cap-}; kver=${kver%-nokaslr}
	V=$CACHE/$arch/usr/lib/debug/boot/vmlinux-$kver
	E=$cap/vmcore.elf
	[ -s "$V" ] && [ -s "$E" ] || { echo "linux_kernels: $cap lacks its dump or vmlinux" >&2; exit 1; }
	for f in "$V" "$E"; do
		mkdir -p "$R$(dirname "$f")"; [ "$f" -ef "$R$f" ] || ln -f "$f" "$R$f"
	done
	tk=$(median "$K" -N "$V" -M "$E" slab --format crash)
	td=$(median chroot "$R" python3 "$ORACLE" "$E" "$V" alias --slab-only)
	tc=-
	[ "$arch" = amd64 ] && tc=$(median chroot "$R" crash -s -i /tmp/kvs-bench-kmem-s "$V" "$E")
	echo "| $arch $kver | $tk | $td | $(ratio "$tk" "$td") | $tc | $(ratio "$tk" "$tc") |"
	rows+=("{\"kernel\": \"$arch $kver\", \"kvmstat\": \"$tk\", \"drgn\": \"$td\", \"crash\": \"$tc\"}")
done
if [ -n "${KERNELS_JSON:-}" ]; then
	(IFS=,; echo "[${rows[*]}]") >"$KERNELS_JSON"
fi
