#!/usr/bin/env bash
# linux_busy.sh - the SLUB table at scale: a real Debian amd64 6.1 guest (the
# kernel tests/linux/setup.sh caches) with 2 GiB of RAM and over a million
# slab objects (BUSY_FILES empty files, default 500,000, made in tmpfs by a
# guest-side loop: tests/linux/guest-load.sh lc_mode=busy), dumped as QEMU's
# ELF (paging=false) once the guest has printed its /proc/slabinfo (the last
# thing before the dump, no fork between).  Then:
#   - kvmstat's slabinfo table against the guest's own, every field of every
#     row (tests/linux/kernel_compare.py slab), and the guest's objects
#     counted (at least 1,000,000 active, or this fails);
#   - `kvmstat slab --format crash` (exactly allocated objects: every CPU
#     and node freelist walked) timed side by side with drgn doing the same
#     walk, Debian 12's drgn 0.0.22 (tests/linux/oracle_drgn.py, the image
#     aliased onto the phys-only ELF; hyperfine medians of RUNS), and, when
#     kernel_check.sh has made its chroot, trixie's drgn 0.0.31 through its
#     own helper (oracle_drgn_generic.py --slab-only: every object visited;
#     one run, minutes); peak RSS; ratios against drgn 0.0.22;
#   - kvmstat's exactly allocated objects of every cache against drgn
#     0.0.22's (and 0.0.31's when run).
# The guest and its dump are kept in $KVS_LINUX_CACHE/busy and reused while
# the kernel build, BUSY_FILES and the guest script are the same (a new
# capture takes minutes under TCG).  Prints a Markdown table; BUSY_JSON=FILE
# also writes {"objects", "compare", "rows": [...]} for bench/run.
# Exit 0, or 1 when the capture, the comparison or a tool fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
. tests/linux/lib.sh
K=${KVMSTAT:-$ROOT/build/analyzers/kvmstat}
RUNS=${RUNS:-3}
FILES=${BUSY_FILES:-500000}
B=$KVS_LINUX_CACHE/busy
say() { log "linux_busy: $*"; }
. "$KVS_LINUX_CACHE/setup.env" 2>/dev/null || { say "no $KVS_LINUX_CACHE/setup.env: run tests/linux/setup.sh"; exit 1; }
kvs_paths "$KVER"
for f in "$VMLINUZ" "$VMLINUX" "$K"; do [ -e "$f" ] || { say "missing $f"; exit 1; }; done
command -v hyperfine >/dev/null || { say "hyperfine missing (apt-get install hyperfine)"; exit 1; }
mkdir -p "$B"
T=$(mktemp -d /tmp/kvs-busy.XXXXXX)
PEER_LINKS=() PEER_DIRS=()
unlink_peer() {
	local d
	[ ${#PEER_LINKS[@]} = 0 ] || rm -f "${PEER_LINKS[@]}"
	for d in "${PEER_DIRS[@]}"; do find "$d" -depth -type d -empty -delete; done
}
trap 'kvs_guest_quit; rm -rf "$T"; unlink_peer' EXIT

# ---- the capture (cached) ----------------------------------------------------
stamp="kbuild=$KBUILD files=$FILES mem=2048 v2 guest=$(sha256sum <tests/linux/guest-load.sh | cut -c1-16)"
if [ "$(cat "$B/stamp" 2>/dev/null)" = "$stamp" ] && [ -s "$B/vmcore.elf" ] && [ -s "$B/slabinfo" ]; then
	say "reusing the capture in $B"
else
	rm -f "$B/stamp" "$B/vmcore.elf" "$B/slabinfo"
	t0=$(now)
	kvs_guest_initramfs tests/linux/guest-load.sh "$B/initrd.gz" qemu_fw_cfg || { say "building the initramfs"; exit 1; }
	kvs_guest_boot "$B" 2048 "lc_mode=busy lc_files=$FILES nokaslr" "$B/initrd.gz"
	say "guest booting: $FILES files in tmpfs (minutes under TCG)"
	if ! kvs_guest_wait "===LC_READY_FOR_DUMP===" "${BUSY_TIMEOUT:-3600}"; then
		say "the guest did not get ready: $(tail -c 300 "$B/serial.log" | tr -d '\r')"; exit 1
	fi
	say "guest ready ($(elapsed "$t0") s): stop and dump"
	kvs_guest_qmp stop >/dev/null || { say "QMP stop failed"; exit 1; }
	kvs_guest_qmp dump-guest-memory "{\"paging\": false, \"protocol\": \"file:$B/vmcore.elf\"}" \
		--timeout 1200 >/dev/null || { say "QMP dump-guest-memory failed"; exit 1; }
	kvs_guest_quit
	chmod a+r "$B/vmcore.elf"
	"$PY" tests/linux/dumptools.py serial-section "$B/serial.log" ===LC_SLABINFO_BEGIN=== \
		===LC_SLABINFO_END=== "$B/slabinfo" || { say "no slabinfo in the serial log"; exit 1; }
	printf 'capture %s s\n' "$(elapsed "$t0")" >"$B/timings.txt"
	echo "$stamp" >"$B/stamp"
fi
E=$B/vmcore.elf
objects=$(awk '!/^(slabinfo|#)/ && NF > 5 {s += $2} END {print s + 0}' "$B/slabinfo")
caches=$(awk '!/^(slabinfo|#)/ && NF > 5' "$B/slabinfo" | wc -l)
say "the guest's slabinfo: $caches caches, $objects active objects; dump $(du -h "$E" | cut -f1)"
rc=0
[ "$objects" -ge 1000000 ] || { say "only $objects slab objects: fewer than 1,000,000"; rc=1; }

# ---- the table against the guest's -------------------------------------------
"$K" -N "$VMLINUX" -M "$E" slab >"$T/kvmstat.slabinfo" 2>"$T/kvmstat.err" ||
	{ say "kvmstat slab failed: $(tail -1 "$T/kvmstat.err")"; rc=1; }
compare=$("$PY" tests/linux/kernel_compare.py slab "$B/slabinfo" "$T/kvmstat.slabinfo") || rc=1
say "$(head -3 <<<"$compare")"

# ---- timings -----------------------------------------------------------------
declare -A CMD
order=("kvmstat --format crash" "kvmstat --format crash, no -N" "drgn 0.0.22")
CMD[kvmstat --format crash]="$K -N $VMLINUX -M $E slab --format crash"
CMD[kvmstat --format crash, no -N]="$K -M $E slab --format crash"
CMD[drgn 0.0.22]="/usr/bin/python3 $ROOT/tests/linux/oracle_drgn.py $E $VMLINUX --no-profile --no-page-walk --image-alias"
PEER=$KVS_LINUX_CACHE/trixie/root
trixie_why=
if [ -x "$PEER/usr/bin/python3" ] && chroot "$PEER" python3 -c 'import drgn' 2>/dev/null; then
	# the files at the same paths inside the chroot (hard links: same disk)
	for f in "$E" "$VMLINUX" "$ROOT/tests/linux/oracle_drgn_generic.py" "$ROOT/tests/linux/oracle_drgn.py"; do
		[ "$f" -ef "$PEER$f" ] && continue
		# the directories made here, removed at the end with the links
		d=$(dirname "$f") new=
		while [ ! -d "$PEER$d" ]; do new=$PEER$d; d=$(dirname "$d"); done
		[ -n "$new" ] && PEER_DIRS+=("$new")
		mkdir -p "$PEER$(dirname "$f")"
		PEER_LINKS+=("$PEER$f")     # removed at the end
		ln -f "$f" "$PEER$f" 2>/dev/null || cp "$f" "$PEER$f"
	done
	v=$(chroot "$PEER" python3 -c 'import drgn; print(drgn.__version__)')
	order+=("drgn $v (trixie)")
	CMD["drgn $v (trixie)"]="chroot $PEER python3 $ROOT/tests/linux/oracle_drgn_generic.py $E $VMLINUX alias --slab-only"
else
	trixie_why="no trixie chroot with drgn at $PEER (tests/linux/kernel_check.sh makes it)"
	say "$trixie_why"
fi
declare -A MED RSS
for name in "${order[@]}"; do
	cmd=${CMD[$name]}
	say "timing $name"
	case $name in
	*trixie*)   # minutes a run: one, its wall time and peak RSS at once
		if /usr/bin/time -f '%e %M' -o "$T/one" $cmd >"$T/trixie.json" 2>"$T/one.err" </dev/null; then
			MED[$name]=$(cut -d' ' -f1 "$T/one"); RSS[$name]=$(cut -d' ' -f2 "$T/one")
		else
			say "'$cmd' failed: $(tail -2 "$T/one.err")"; MED[$name]=; rc=1
		fi
		continue ;;
	esac
	if ! hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$T/h.json" "$cmd" >/dev/null 2>"$T/h.err"; then
		say "'$cmd' failed: $(tail -2 "$T/h.err")"; MED[$name]=; rc=1; continue
	fi
	MED[$name]=$("$PY" -c "import json;print(json.load(open('$T/h.json'))['results'][0]['median'])")
	/usr/bin/time -f %M -o "$T/rss" $cmd >/dev/null 2>&1 </dev/null
	RSS[$name]=$(cat "$T/rss")
done

# ---- exactly allocated objects against drgn's --------------------------------
"$K" -N "$VMLINUX" -M "$E" slab --format crash >"$T/kvmstat.crash" 2>/dev/null
${CMD[drgn 0.0.22]} >"$T/drgn.json" 2>"$T/drgn.err" || say "drgn 0.0.22 failed: $(tail -1 "$T/drgn.err")"
allocated=$("$PY" - "$T/kvmstat.crash" "$T/drgn.json" "$T/trixie.json" <<'EOF'
import json, os, sys
sys.path.insert(0, 'tests/linux')
from kernel_compare import crash_rows
k = {n: int(v[1]) for n, v in crash_rows(sys.argv[1]).items()}
out, bad = [], 0
for label, path, get in (
        ('drgn 0.0.22', sys.argv[2], lambda d: {c['name']: c['allocated'] for c in d['caches']}),
        ('drgn 0.0.31', sys.argv[3], lambda d: {n: c['allocated'] for n, c in d['caches'].items()})):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        continue
    d = get(json.load(open(path)))
    diff = [n for n in sorted(set(d) | set(k)) if d.get(n) != k.get(n)]
    bad += bool(diff)
    out.append('%s: %d caches, %d equal%s' % (label, len(d), len(d) - len(diff),
               (' (differ: %s)' % ', '.join(diff[:5])) if diff else ''))
print('exactly allocated against ' + '; '.join(out) if out else 'exactly allocated: no drgn answer')
sys.exit(1 if bad or not out else 0)
EOF
) || rc=1
say "$allocated"
drgn=${MED[drgn 0.0.22]:-}
for name in "${order[@]}"; do
	printf '%s\t%s\t%s\n' "$name" "${MED[$name]:-}" "${RSS[$name]:-}"
done | "$PY" -c "
import json, sys
objects, caches, compare, drgn, why, out, alloc = $objects, $caches, sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
rows = []
for line in sys.stdin:
    n, m, r = line.rstrip('\n').split('\t')
    if not m:
        rows.append({'tool': n, 'available': False, 'why': 'failed'})
        continue
    row = {'tool': n, 'available': True, 'median_s': float(m), 'peak_rss_kib': int(r),
           'runs': 1 if 'trixie' in n else $RUNS}
    if drgn:
        row['vs_drgn'] = float(m) / float(drgn)
    rows.append(row)
if why:
    rows.append({'tool': 'drgn 0.0.31 (trixie)', 'available': False, 'why': why})
doc = {'objects': objects, 'caches': caches, 'compare': compare.splitlines()[0] if compare else '',
       'allocated': alloc, 'rows': rows}
if out:
    json.dump(doc, open(out, 'w'), indent=1)
print('%d caches, %d active objects; %s; %s' % (caches, objects, doc['compare'], alloc))
print()
print('| tool | median s | vs drgn 0.0.22 | peak RSS MiB |')
print('| --- | ---: | ---: | ---: |')
for r in rows:
    if r['available']:
        print('| %s | %.3f | %s | %.0f |' % (r['tool'], r['median_s'],
              '%.2fx' % r['vs_drgn'] if 'vs_drgn' in r else '-', r['peak_rss_kib'] / 1024))
    else:
        print('| %s | not available: %s | | |' % (r['tool'], r['why']))
" "$compare" "$drgn" "$trixie_why" "${BUSY_JSON:-}" "$allocated"
exit $rc
