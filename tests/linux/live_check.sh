#!/bin/bash
# tests/linux/live_check.sh: checks that run against a guest that is still
# running. Meant as capture.sh's live hook:
#
#   capture.sh OUTDIR --live --live-hook tests/linux/live_check.sh
#
# or by hand on a guest kept running with --keep-running:
#   (set -a; . OUTDIR/live.env; tests/linux/live_check.sh); touch OUTDIR/live.continue
#
# Needs KVS_LIVE_RAM, KVS_OUTDIR, KVS_VMLINUX (from OUTDIR/live.env).
# Writes OUTDIR/live/: drgn.running.json (oracle_drgn.py on the RAM file of
# the running guest), heartbeat.txt (the guest's heartbeat seen advancing in
# RAM), timings.txt. compare.py then sets drgn.running.json against the dump
# taken after the stop.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
: "${KVS_LIVE_RAM:?}" "${KVS_OUTDIR:?}" "${KVS_VMLINUX:?}"
L=$KVS_OUTDIR/live
mkdir -p "$L"
: >"$L/timings.txt"

# 1. the heartbeat text moves in guest RAM (it lives in a tmpfs page)
hb() {
	"$PY" - "$KVS_LIVE_RAM" <<'EOF'
import mmap, re, sys
with open(sys.argv[1], 'rb') as f:
    mm = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    print(max((int(m.group(1)) for m in re.finditer(rb'LC_HEARTBEAT ([0-9]+)\n', mm)), default=''))
EOF
}
t0=$(now)
h1=$(hb); sleep 3; h2=$(hb)
echo "heartbeat: $h1 then $h2 three seconds later" | tee "$L/heartbeat.txt"
printf 'heartbeat scan x2 + 3 s sleep %8s s\n' "$(elapsed "$t0")" >>"$L/timings.txt"
[ -n "$h1" ] && [ -n "$h2" ] && [ "$h2" -gt "$h1" ] || { echo "live_check: the heartbeat does not advance" >&2; exit 1; }

# 2. the drgn oracle on the running guest's RAM
t0=$(now)
/usr/bin/python3 "$KVS_LINUX_DIR/oracle_drgn.py" "$KVS_LIVE_RAM" "$KVS_VMLINUX" --ram >"$L/drgn.running.json"
printf 'drgn oracle on running RAM    %8s s\n' "$(elapsed "$t0")" >>"$L/timings.txt"
cat "$L/timings.txt"
