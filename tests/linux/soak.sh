#!/usr/bin/env bash
# tests/linux/soak.sh [KVMSTAT] - kvmstat and kvmtop on a running Linux guest.
#
# Boots the cached Debian amd64 kernel (setup.env) under QEMU/TCG with its
# RAM in a shared memory-backend-file in /dev/shm (lib.sh's kvs_guest_boot)
# and a guest loop (guest-load.sh, lc_mode=soak) that keeps making and
# removing files and directories and forking short-lived pipelines.  While
# it runs, on the host:
#   1. `kvmstat -N vmlinux -M RAMFILE slab` SOAK_N times (default 1000);
#   2. `kvmtop -b -n SOAK_N -w 0 --view slab` on the same file: SOAK_N
#      refreshes of one process (kvmtop waits at least 0.1 s between two, so
#      it runs beside the kvmstat loop: about 100 s for 1,000).
# Each refresh must finish within its bound (no hang), never crash, and be
# consistent -- every cache row: active <= total objects, active slabs <=
# slabs, total objects = slabs x objects per slab -- or flagged by kvmstat
# (exit status 1 with a warning, or '?' fields; kvmtop's "refresh failed"
# banner).  The table must be seen to move (not every output the same).
# Median and p99 time per refresh are printed.
# Ends with one line "linux-soak: N passed, M failed" (the checks above, 5
# in all); tests/linux/extra_checks.sh adds it to its count.
#   SOAK_N=1000  refreshes of each tool;  SOAK_KASLR=1 boot with KASLR.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"
K=${1:-$ROOT/build/analyzers/kvmstat}
TOP=${KVMTOP:-$(cd "$(dirname "$K")/.." && pwd)/tui/kvmtop}
N=${SOAK_N:-1000}
pass=0 fail=0
ok()  { pass=$((pass + 1)); log "ok: $*"; }
bad() { fail=$((fail + 1)); log "FAIL: $*"; }
finish() { echo "linux-soak: $pass passed, $fail failed"; exit $((fail > 0)); }

if ! . "$KVS_LINUX_CACHE/setup.env" 2>/dev/null; then
	bad "no $KVS_LINUX_CACHE/setup.env: run tests/linux/setup.sh"; finish
fi
kvs_paths "$KVER"
for f in "$VMLINUZ" "$VMLINUX" "$K" "$TOP"; do
	[ -e "$f" ] || { bad "$f missing"; finish; }
done
command -v qemu-system-x86_64 >/dev/null || { bad "qemu-system-x86_64 not installed"; finish; }

W=$(mktemp -d /tmp/kvs-soak.XXXXXX)
RAM=/dev/shm/kvs-soak-$$.ram
cleanup() { [ -n "${top_pid:-}" ] && kill "$top_pid" 2>/dev/null; kvs_guest_quit; rm -f "$RAM"; [ -n "${KEEP_SOAK:-}" ] || rm -rf "$W"; }
trap cleanup EXIT
trap 'bad "interrupted"; finish' INT TERM
# The layout cache of this run's own (filled by the first refresh).
export XDG_CACHE_HOME=$W/cache

t0=$(now)
kvs_guest_initramfs "$HERE/guest-load.sh" "$W/initrd.gz" || { bad "building the initramfs"; finish; }
append="lc_mode=soak"
[ "${SOAK_KASLR:-0}" = 1 ] || append="$append nokaslr"
kvs_guest_boot "$W" 512 "$append" "$W/initrd.gz" "$RAM"
if ! kvs_guest_wait "LC_ROUND 3" 300; then
	bad "the guest did not start its loop: $(tail -c 300 "$W/serial.log" 2>/dev/null | tr -d '\r')"
	finish
fi
log "soak: guest up, looping ($(elapsed "$t0") s)"

# ---- 1. kvmstat slab, N processes ------------------------------------------
# check.py KIND FILE...: per-output consistency; prints one line per output:
# "ok", "flagged" or "bad: why", then the table's fingerprint.
cat >"$W/check.py" <<'PYEOF'
import hashlib, sys
kind = sys.argv[1]
for path in sys.argv[2:]:
    rows, why, flagged = 0, [], False
    text = open(path, errors='replace').read()
    if kind == 'slab':
        for line in text.splitlines():
            if line.startswith(('slabinfo', '#')) or not line.strip():
                continue
            f = line.split()
            if '?' in f:
                flagged = True
                continue
            try:
                act, tot, _, per, _ = (int(x) for x in f[1:6])
                aslabs, slabs = int(f[-3]), int(f[-2])
            except (ValueError, IndexError):
                why.append('unparsable row: ' + line[:80])
                continue
            rows += 1
            if act > tot or aslabs > slabs or tot != slabs * per:
                why.append('%s: active %d total %d slabs %d/%d per slab %d'
                           % (f[0], act, tot, aslabs, slabs, per))
    else:   # a kvmtop frame: CACHE OBJS ACTIVE USE% OBJSIZE SLABS OBJ/SLAB ...
        flagged = 'refresh failed' in text
        body = False
        for line in text.splitlines():
            if line.startswith('CACHE '):
                body = True
                continue
            f = line.split()
            if not body or len(f) < 7:
                continue
            if '?' in f:
                flagged = True
                continue
            try:
                tot, act, slabs, per = int(f[1]), int(f[2]), int(f[5]), int(f[6])
            except ValueError:
                why.append('unparsable row: ' + line[:80])
                continue
            rows += 1
            if act > tot or tot != slabs * per:
                why.append('%s: active %d total %d slabs %d per slab %d'
                           % (f[0], act, tot, slabs, per))
    if rows == 0:
        why.append('no rows')
    state = 'bad: ' + '; '.join(why[:3]) if why and not flagged else 'flagged' if why or flagged else 'ok'
    print(state, hashlib.sha1(text.encode()).hexdigest()[:12])
PYEOF

# kvmtop in the background, beside the kvmstat loop
log "soak: kvmtop -b -n $N on the running guest, in the background"
top_t0=$(now)
timeout 1200 "$TOP" -b -n "$N" -w 0 --view slab -N "$VMLINUX" -M "$RAM" --raw --width 120 \
	>"$W/top.out" 2>"$W/top.err" &
top_pid=$!

times=$W/kvmstat.times
: >"$times"
: >"$W/rc.list"
crashes=0 hangs=0 errors=0 flagged=0
log "soak: kvmstat slab x $N on the running guest"
for i in $(seq 1 "$N"); do
	a=$(now)
	timeout 60 "$K" -N "$VMLINUX" -M "$RAM" slab >"$W/out.$i" 2>"$W/err.$i"
	rc=$?
	b=$(now)
	echo "$a $b" | awk '{printf "%.4f\n", $2 - $1}' >>"$times"
	case $rc in
	0) ;;
	1) grep -q . "$W/err.$i" && flagged=$((flagged + 1)) || errors=$((errors + 1)) ;;
	124) hangs=$((hangs + 1)); log "refresh $i: no answer within 60 s" ;;
	*) if [ $rc -gt 128 ]; then crashes=$((crashes + 1)); log "refresh $i: signal $((rc - 128)): $(tail -2 "$W/err.$i")"
	   else errors=$((errors + 1)); log "refresh $i: exit $rc: $(tail -1 "$W/err.$i")"; fi ;;
	esac
	echo "$i $rc" >>"$W/rc.list"
	kill -0 "$KVS_GUEST_PID" 2>/dev/null || { bad "the guest died during refresh $i"; finish; }
done
# consistency of every answer, in batches (one Python for many files)
ls "$W"/out.* | sort -t. -k2 -n | xargs "$PY" "$W/check.py" slab >"$W/kvmstat.check"
nbad=$(grep -c '^bad' "$W/kvmstat.check")
nflag=$(grep -c '^flagged' "$W/kvmstat.check")
# a row that breaks the rules in an answer kvmstat did not flag (status 1):
# rc.list and kvmstat.check are in refresh order, one line each
paste -d' ' "$W/rc.list" "$W/kvmstat.check" | awk '$2 != 1 && $3 == "bad:"' >"$W/unflagged"
unflagged=$(wc -l <"$W/unflagged")
head -3 "$W/unflagged" | while read -r l; do log "refresh $l"; done
distinct=$(awk '{print $NF}' "$W/kvmstat.check" | sort -u | wc -l)
stats=$(sort -n "$times" | awk '{t[NR]=$1} END {printf "median %.3f s, p99 %.3f s, max %.3f s", t[int((NR+1)/2)], t[int(NR*0.99+0.999)], t[NR]}')
log "kvmstat slab: $N refreshes, $stats; $flagged flagged (status 1), $nbad with a broken row ($nflag with '?'), $distinct distinct tables"
[ $crashes = 0 ] && [ $hangs = 0 ] && [ $errors = 0 ] &&
	ok "kvmstat slab x $N: no crash, no hang, no error ($stats)" ||
	bad "kvmstat slab x $N: $crashes crashes, $hangs hangs, $errors errors"
[ $unflagged = 0 ] && ok "kvmstat slab: every answer consistent or flagged ($flagged flagged)" ||
	bad "kvmstat slab: $unflagged answers inconsistent and not flagged"
[ "$distinct" -gt 1 ] && ok "kvmstat slab: the table moves ($distinct distinct tables in $N)" ||
	bad "kvmstat slab: the same table $N times: the guest's slabs did not move"
rm -f "$W"/out.* "$W"/err.*

# ---- 2. kvmtop, one process, N refreshes -----------------------------------
wait $top_pid
rc=$?
top_pid=
secs=$(elapsed "$top_t0")
frames=$(grep -c '^kvmtop: ' "$W/top.out")
# each frame's own cost ("refresh #N X ms"), median and p99
tstats=$(sed -n 's/^refresh #[0-9]* \([0-9.]*\) ms.*/\1/p' "$W/top.out" | sort -n |
	awk '{t[NR]=$1} END {if (NR) printf "median %.1f ms, p99 %.1f ms, max %.1f ms", t[int((NR+1)/2)], t[int(NR*0.99+0.999)], t[NR]}')
# one Python over the frames: consistency, and how many differ
"$PY" - "$W/top.out" "$W/check.py" >"$W/top.check" <<'PYEOF'
import subprocess, sys, os, tempfile
frames = open(sys.argv[1], errors='replace').read().split('\nkvmtop: ')
d = tempfile.mkdtemp()
paths, bodies = [], set()
for i, fr in enumerate(frames):
    p = os.path.join(d, 'f%d' % i)
    open(p, 'w').write(fr)
    paths.append(p)
    # the table without the header lines (refresh count and cost change anyway)
    bodies.add('\n'.join(fr.splitlines()[4:]))
out = subprocess.run([sys.executable, sys.argv[2], 'top'] + paths, capture_output=True, text=True).stdout
print(out, end='')
print('distinct', len(bodies))
PYEOF
tdistinct=$(sed -n 's/^distinct //p' "$W/top.check")
tbad=$(grep -c '^bad' "$W/top.check")
tflag=$(grep -c '^flagged' "$W/top.check")
log "kvmtop: rc $rc, $frames frames in $secs s, $tstats; $tflag flagged, $tbad inconsistent, ${tdistinct:-0} distinct tables"
if [ $rc = 0 ] && [ "$frames" = "$N" ]; then
	ok "kvmtop -b -n $N: $frames frames, no crash, no hang ($tstats)"
else
	bad "kvmtop -b -n $N: exit $rc, $frames frames: $(tail -2 "$W/top.err")"
fi
if [ "$tbad" = 0 ] && [ "${tdistinct:-0}" -gt 1 ]; then
	ok "kvmtop: every frame consistent or flagged ($tflag flagged), the table moves (${tdistinct} distinct)"
else
	bad "kvmtop: $tbad frames inconsistent and not flagged, ${tdistinct:-0} distinct tables: $(grep -m2 '^bad' "$W/top.check")"
fi
log "soak: done in $(elapsed "$t0") s"
finish
