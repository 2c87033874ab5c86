#!/usr/bin/env bash
# linux_census.sh [CAPTURE_DIR] - the memory census on one real Linux dump,
# side by side in one run (issue 26's goals):
#   mem      `kvmstat mem` against crash's `kmem -i` (the same question);
#   whatis   1,000 addresses (objects of every slab cache, allocated first,
#            drawn by drgn from the dump) through `kvmstat whatis -` against
#            drgn's slab_object_info on each, in one process each.
# Warm page cache, hyperfine medians; prints a Markdown table with the
# ratios.  CENSUS_JSON=FILE also writes the rows as JSON (bench/run).  Not a
# test: timings move 2x on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${KVS_LINUX_CACHE:-/var/cache/kvmstat-linux}
C=${1:-$CACHE/captures/nokaslr}
. "$CACHE/setup.env"
V=$VMLINUX
K=${KVMSTAT:-build/analyzers/kvmstat}
RUNS=${RUNS:-5}
for f in "$V" "$C/vmcore.elf" "$C/vmcore.elf-paging" "$K"; do
	[ -e "$f" ] || { echo "linux_census: missing $f" >&2; exit 1; }
done
command -v hyperfine >/dev/null || { echo "linux_census: hyperfine missing" >&2; exit 1; }
tmp=$(mktemp -d /tmp/kvs-census.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'kmem -i\nquit\n' >"$tmp/crash.cmds"
# The sample: up to 1,000 addresses, a few objects of every cache (each
# object's middle, so offsets are exercised), from drgn's own walk.
/usr/bin/python3 - "$C/vmcore.elf-paging" "$V" "$tmp/sample" <<'PY'
import sys, drgn
from drgn.helpers.linux.slab import for_each_slab_cache, slab_cache_for_each_allocated_object
prog = drgn.Program(); prog.set_core_dump(sys.argv[1]); prog.load_debug_info([sys.argv[2]])
seen = set()
out = []
caches = list(for_each_slab_cache(prog))
# a few of every cache first, then more of the larger ones, to 1,000
for per in (7, 60, 1000):
    for c in caches:
        n = 0
        try:
            for o in slab_cache_for_each_allocated_object(c, 'char'):
                a = o.value_() + c.object_size.value_() // 2
                n += 1
                if a not in seen:
                    seen.add(a)
                    out.append(a)
                if n >= per or len(out) >= 1000:
                    break
        except Exception:
            continue
        if len(out) >= 1000:
            break
    if len(out) >= 1000:
        break
with open(sys.argv[3], 'w') as f:
    f.write('\n'.join('0x%x' % a for a in out[:1000]) + '\n')
PY
cat >"$tmp/drgn_whatis.py" <<'PY'
import sys, drgn
from drgn.helpers.linux.slab import slab_object_info
prog = drgn.Program(); prog.set_core_dump(sys.argv[1]); prog.load_debug_info([sys.argv[2]])
n = 0
for line in open(sys.argv[3]):
    if slab_object_info(prog, int(line, 16)) is not None:
        n += 1
print(n)
PY
nsample=$(wc -l <"$tmp/sample")
declare -A CMD
CMD[kvmstat mem]="$K -N $V -M $C/vmcore.elf mem"
CMD[crash kmem -i]="crash -s -i $tmp/crash.cmds $V $C/vmcore.elf"
CMD[kvmstat whatis x$nsample]="sh -c '$K -N $V -M $C/vmcore.elf whatis - <$tmp/sample'"
CMD[drgn slab_object_info x$nsample]="/usr/bin/python3 $tmp/drgn_whatis.py $C/vmcore.elf-paging $V $tmp/sample"
order=("kvmstat mem" "crash kmem -i" "kvmstat whatis x$nsample" "drgn slab_object_info x$nsample")
declare -A MED
for name in "${order[@]}"; do
	hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$tmp/h.json" "${CMD[$name]}" \
		>/dev/null 2>"$tmp/h.err" || { echo "linux_census: '${CMD[$name]}' failed: $(tail -2 "$tmp/h.err")" >&2; exit 1; }
	MED[$name]=$(python3 -c "import json;print(json.load(open('$tmp/h.json'))['results'][0]['median'])")
done
python3 - "$tmp/rows" <<PY
import json, sys
m = {"kvmstat mem": ${MED[kvmstat mem]}, "crash kmem -i": ${MED[crash kmem -i]},
     "kvmstat whatis": ${MED[kvmstat whatis x$nsample]},
     "drgn slab_object_info": ${MED[drgn slab_object_info x$nsample]}}
rows = [{"question": "mem", "kvmstat_s": m["kvmstat mem"], "peer": "crash kmem -i",
         "peer_s": m["crash kmem -i"], "ratio": m["kvmstat mem"] / m["crash kmem -i"]},
        {"question": "whatis x$nsample", "kvmstat_s": m["kvmstat whatis"],
         "peer": "drgn slab_object_info", "peer_s": m["drgn slab_object_info"],
         "ratio": m["kvmstat whatis"] / m["drgn slab_object_info"]}]
json.dump(rows, open(sys.argv[1], "w"), indent=1)
print("| question | kvmstat s | peer | peer s | kvmstat / peer |")
print("| --- | ---: | --- | ---: | ---: |")
for r in rows:
    print("| %s | %.3f | %s | %.3f | %.3f× |" % (r["question"], r["kvmstat_s"], r["peer"],
                                                r["peer_s"], r["ratio"]))
PY
[ -z "${CENSUS_JSON:-}" ] || cp "$tmp/rows" "$CENSUS_JSON"
