#!/usr/bin/env bash
# linux_slab.sh [CAPTURE_DIR] - time to the full SLUB table on one real Linux
# dump, side by side in one run: kvmstat, drgn (python3-drgn, the same exact
# arithmetic in tests/linux/oracle_drgn.py without its page walk and profile)
# and crash (`kmem -s`); kvmstat also with no debug file (no -N: kallsyms and
# BTF read from the dump), which drgn 0.0.22 cannot do at all.  Warm page cache, hyperfine medians; peak RSS from
# /usr/bin/time.  Prints a Markdown table with ratios against drgn.
# The capture comes from tests/linux/capture.sh (default: the nokaslr one in
# the download cache).  Not a test: timings move 2x on this machine.
# SLAB_JSON=FILE also writes the rows as JSON (bench/run uses it).
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${KVS_LINUX_CACHE:-/var/cache/kvmstat-linux}
C=${1:-$CACHE/captures/nokaslr}
. "$CACHE/setup.env"
V=$VMLINUX
K=${KVMSTAT:-build/analyzers/kvmstat}
RUNS=${RUNS:-5}
for f in "$V" "$C/vmcore.elf" "$C/vmcore.elf-paging" "$K"; do
	[ -e "$f" ] || { echo "linux_slab: missing $f" >&2; exit 1; }
done
command -v hyperfine >/dev/null || { echo "linux_slab: hyperfine missing (apt-get install hyperfine)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/kvs-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'kmem -s\nquit\n' >"$tmp/crash.cmds"

declare -A CMD
CMD[kvmstat (phys ELF)]="$K -N $V -M $C/vmcore.elf slab"
# No debug file: kallsyms and BTF from the dump itself.
CMD[kvmstat no -N (phys ELF)]="$K -M $C/vmcore.elf slab"
CMD[kvmstat no -N (kdump -d 31)]="$K -M $C/vmcore.mdf-d31 slab"
CMD[kvmstat (kdump -d 31)]="$K -N $V -M $C/vmcore.mdf-d31 slab"
CMD[drgn (kdump -d 31)]="/usr/bin/python3 tests/linux/oracle_drgn.py $C/vmcore.mdf-d31 $V --no-profile --no-page-walk"
CMD[kvmstat (paging ELF)]="$K -N $V -M $C/vmcore.elf-paging slab"
CMD[drgn (paging ELF)]="/usr/bin/python3 tests/linux/oracle_drgn.py $C/vmcore.elf-paging $V --no-profile --no-page-walk"
CMD[crash (phys ELF)]="crash -s -i $tmp/crash.cmds $V $C/vmcore.elf"
order=("kvmstat (phys ELF)" "kvmstat no -N (phys ELF)" "kvmstat (paging ELF)"
	"kvmstat (kdump -d 31)" "kvmstat no -N (kdump -d 31)" "drgn (paging ELF)"
	"drgn (kdump -d 31)" "crash (phys ELF)")
# BENCH_QUICK=1: kvmstat with and without the debug file beside drgn only.
[ "${BENCH_QUICK:-0}" = 1 ] && order=("kvmstat (phys ELF)" "kvmstat no -N (phys ELF)"
	"kvmstat (kdump -d 31)" "kvmstat no -N (kdump -d 31)" "drgn (paging ELF)")

declare -A MED RSS
for name in "${order[@]}"; do
	cmd=${CMD[$name]}
	hyperfine -N --warmup "${WARMUP:-1}" --runs "$RUNS" --export-json "$tmp/h.json" "$cmd" >/dev/null 2>&1 ||
		{ echo "linux_slab: '$cmd' failed" >&2; exit 1; }
	MED[$name]=$(python3 -c "import json;print(json.load(open('$tmp/h.json'))['results'][0]['median'])")
	/usr/bin/time -f %M -o "$tmp/rss" $cmd >/dev/null 2>&1 </dev/null
	RSS[$name]=$(cat "$tmp/rss")
done
drgn=${MED[drgn (paging ELF)]}
if [ -n "${SLAB_JSON:-}" ]; then
	# The same rows for bench/run: [{"tool", "median_s", "vs_drgn", "peak_rss_kib"}].
	for name in "${order[@]}"; do
		printf '%s\t%s\t%s\n' "$name" "${MED[$name]}" "${RSS[$name]}"
	done | python3 -c "
import json, sys
rows = []
for line in sys.stdin:
    n, m, r = line.rstrip('\n').split('\t')
    rows.append({'tool': n, 'median_s': float(m), 'vs_drgn': float(m) / $drgn, 'peak_rss_kib': int(r)})
json.dump(rows, open('$SLAB_JSON', 'w'), indent=1)"
fi
echo "| tool | median s | vs drgn | peak RSS MB |"
echo "| --- | --- | --- | --- |"
for name in "${order[@]}"; do
	python3 -c "
m=${MED[$name]}; d=$drgn; r=${RSS[$name]}
print('| $name | %.3f | %.2fx | %.0f |' % (m, m/d, r/1024))"
done
