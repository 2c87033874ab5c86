#!/usr/bin/env bash
# arm64_check.sh [KVMSTAT] - Debian's arm64 kernel, booted and dumped under
# qemu-system-aarch64 (TCG, -M virt), read by kvmstat and checked against
# the guest's own /proc/slabinfo and against drgn.
#
#   1. Packages: a private apt list for arm64 (lists and archives under
#      $KVS_LINUX_CACHE/apt-arm64, nothing of the host's apt state touched)
#      naming the mirrors and suites this machine's own apt sources name
#      (/etc/apt/sources.list and sources.list.d: read, never written into
#      the tree); `apt-get download` of linux-image-KVER-arm64-unsigned,
#      linux-image-KVER-arm64-dbg (vmlinux and System.map only are kept)
#      and busybox-static; KVER is the arm64 ABI of the host's own amd64
#      kernel (the same Debian release).  Cached.
#   2. Capture: an initramfs (busybox, qemu_fw_cfg.ko so that QEMU's
#      -device vmcoreinfo gets the kernel's VMCOREINFO), 2,000 tmpfs files
#      and 100 directories, then /proc/slabinfo on the serial console and
#      nothing forks after; QMP stop, dump-guest-memory as ELF (phys only:
#      kvmstat), ELF with paging (drgn), kdump-zlib.  Cached per KVER.
#   3. Checks: kvmstat slab (-N vmlinux) on the ELF and the kdump equals the
#      guest's slabinfo row by row (every field); info names the kernel and
#      arm64; dmesg holds the guest's boot messages; drgn's reading of the
#      ELF (with the kernel image aliased for it: tests/linux/drgn_compat.py)
#      equals kvmstat's object layer's: tasks, caches, CPUs, runqueues.
# Ends with "linux-arm64: N passed, M failed"; a missing tool or package
# is a failure, said so.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"
K=${1:-$ROOT/build/analyzers/kvmstat}
C=$KVS_LINUX_CACHE
A=$C/arm64
pass=0 fail=0
ok()  { pass=$((pass + 1)); log "ok: $*"; }
bad() { fail=$((fail + 1)); log "FAIL: $*"; }
finish() { echo "linux-arm64: $pass passed, $fail failed"; exit $((fail > 0)); }

command -v qemu-system-aarch64 >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q qemu-system-arm >/dev/null 2>&1 ||
	{ bad "qemu-system-aarch64 missing and not installable"; finish; }
[ -x "$K" ] || { bad "kvmstat $K missing"; finish; }

# ---- 1. packages ----------------------------------------------------------
amd=$(kvs_kver) || { bad "no linux-image-amd64 to take the release from"; finish; }
KVER=${amd%-amd64}-arm64
mkdir -p "$C/apt-arm64/lists/partial" "$C/apt-arm64/archives/partial" "$C/apt-arm64/prefs.d"
SL=$C/apt-arm64/sources.list
"$PY" - >"$SL" <<'EOF'
import glob, re
out = []
for path in ['/etc/apt/sources.list'] + sorted(glob.glob('/etc/apt/sources.list.d/*')):
    try:
        text = open(path).read()
    except OSError:
        continue
    if path.endswith('.sources'):
        for block in re.split(r'\n\s*\n', text):
            f = {}
            for line in block.splitlines():
                if ':' in line and not line.startswith('#'):
                    k, v = line.split(':', 1)
                    f[k.strip().lower()] = v.strip()
            if 'deb' not in f.get('types', '').split() or f.get('enabled', 'yes') == 'no':
                continue
            for uri in f.get('uris', '').split():
                for suite in f.get('suites', '').split():
                    out.append('deb [arch=arm64 signed-by=%s] %s %s %s' % (
                        f.get('signed-by', '/usr/share/keyrings/debian-archive-keyring.gpg'),
                        uri, suite, f.get('components', 'main')))
    elif path.endswith('.list'):
        for line in text.splitlines():
            m = re.match(r'\s*deb\s+(\[[^]]*\]\s+)?(\S+)\s+(\S+)\s+(.*)', line)
            if m:
                out.append('deb [arch=arm64] %s %s %s' % (m.group(2), m.group(3), m.group(4)))
print('\n'.join(dict.fromkeys(out)))
EOF
O=(-o "Dir::State=$C/apt-arm64" -o "Dir::State::Lists=$C/apt-arm64/lists"
   -o "Dir::Cache=$C/apt-arm64" -o "Dir::Cache::archives=$C/apt-arm64/archives"
   -o "Dir::Etc::SourceList=$SL" -o "Dir::Etc::SourceParts=/dev/null"
   -o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=$C/apt-arm64/prefs.d"
   -o APT::Architecture=arm64 -o APT::Architectures=arm64 -o Debug::NoLocking=1)
need=(linux-image-$KVER-unsigned linux-image-$KVER-dbg busybox-static)
have_all=1
for p in "${need[@]}"; do ls "$C/apt-arm64/archives/${p}_"*.deb >/dev/null 2>&1 || have_all=0; done
if [ $have_all = 0 ]; then
	apt-get "${O[@]}" update >"$C/apt-arm64/update.log" 2>&1 || { bad "arm64 apt update failed (see $C/apt-arm64/update.log)"; finish; }
	(cd "$C/apt-arm64/archives" && apt-get "${O[@]}" download "${need[@]}") \
		>"$C/apt-arm64/download.log" 2>&1 || { bad "arm64 download of ${need[*]} failed"; finish; }
fi
mkdir -p "$A"
V=$A/usr/lib/debug/boot/vmlinux-$KVER
if [ ! -s "$V" ]; then
	dpkg-deb --fsys-tarfile "$C/apt-arm64/archives/linux-image-$KVER-dbg_"*.deb |
		tar -x -C "$A" "./usr/lib/debug/boot/vmlinux-$KVER" "./usr/lib/debug/boot/System.map-$KVER" ||
		{ bad "no vmlinux in the arm64 debug package"; finish; }
fi
[ -d "$A/img/boot" ] || dpkg-deb -x "$C/apt-arm64/archives/linux-image-$KVER-unsigned_"*.deb "$A/img"
[ -x "$A/bb/bin/busybox" ] || dpkg-deb -x "$C/apt-arm64/archives/busybox-static_"*.deb "$A/bb"

# ---- 2. capture -----------------------------------------------------------
CAP=$A/cap-$KVER
stamp="arm64 v1 $KVER"
if [ "$(cat "$CAP/stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$CAP"; mkdir -p "$CAP/ir/bin" "$CAP/ir/proc" "$CAP/ir/sys" "$CAP/ir/tmp" "$CAP/ir/dev"
	cp "$A/bb/bin/busybox" "$CAP/ir/bin/"
	cp "$A/img/lib/modules/$KVER/kernel/drivers/firmware/qemu_fw_cfg.ko" "$CAP/ir/"
	cat >"$CAP/ir/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
insmod /qemu_fw_cfg.ko && echo LC_FWCFG_OK
mount -t tmpfs tmpfs /tmp
i=0; while [ $i -lt 2000 ]; do echo "kvmstat file $i" > /tmp/f$i; i=$((i + 1)); done
mkdir /tmp/d; j=0; while [ $j -lt 100 ]; do mkdir /tmp/d/$j; j=$((j + 1)); done
sleep 2
echo ===LC_SLABINFO_BEGIN===
while IFS= read -r l; do echo "$l"; done < /proc/slabinfo
echo ===LC_SLABINFO_END===
echo LC_LAST_LINE_$(cat /proc/sys/kernel/random/boot_id)
echo ===LC_READY_FOR_DUMP===
while true; do read -r x; done
EOF
	chmod +x "$CAP/ir/init"
	(cd "$CAP/ir" && find . | cpio -o -H newc 2>/dev/null | gzip >"$CAP/initrd.gz")
	t0=$(now)
	qemu-system-aarch64 -M virt -cpu cortex-a57 -m 1024 -smp 2 -accel tcg \
		-kernel "$A/img/boot/vmlinuz-$KVER" -initrd "$CAP/initrd.gz" \
		-append "console=ttyAMA0 nokaslr quiet panic=-1" -device vmcoreinfo \
		-display none -monitor none -serial "file:$CAP/serial.log" \
		-qmp "unix:$CAP/qmp.sock,server=on,wait=off" >"$CAP/qemu.log" 2>&1 &
	qpid=$!
	for _ in $(seq 1 600); do
		grep -q LC_READY_FOR_DUMP "$CAP/serial.log" 2>/dev/null && break
		kill -0 $qpid 2>/dev/null || break
		sleep 1
	done
	if ! grep -q LC_READY_FOR_DUMP "$CAP/serial.log" 2>/dev/null; then
		kill $qpid 2>/dev/null
		bad "the arm64 guest did not come up: $(tail -3 "$CAP/serial.log" 2>/dev/null)"
		finish
	fi
	Q="$PY $HERE/qmp.py $CAP/qmp.sock"
	$Q stop >/dev/null &&
	$Q dump-guest-memory "{\"paging\": false, \"protocol\": \"file:$CAP/vmcore.elf\"}" >/dev/null &&
	$Q dump-guest-memory "{\"paging\": true, \"protocol\": \"file:$CAP/vmcore.elf-paging\"}" >/dev/null &&
	$Q dump-guest-memory "{\"paging\": false, \"protocol\": \"file:$CAP/vmcore.kdump-zlib\", \"format\": \"kdump-zlib\"}" >/dev/null ||
		{ kill $qpid; bad "QMP dump of the arm64 guest failed"; finish; }
	$Q quit >/dev/null 2>&1; wait $qpid 2>/dev/null
	sed -n '/===LC_SLABINFO_BEGIN===/,/===LC_SLABINFO_END===/p' "$CAP/serial.log" |
		sed '1d;$d' | tr -d '\r' >"$CAP/slabinfo"
	log "arm64 capture: $(elapsed "$t0") s"
	echo "$stamp" >"$CAP/stamp"
fi
grep -q LC_FWCFG_OK "$CAP/serial.log" && ok "the guest loaded qemu_fw_cfg (VMCOREINFO for QEMU)" ||
	bad "qemu_fw_cfg did not load: no VMCOREINFO"

# ---- 3. checks ------------------------------------------------------------
for form in vmcore.elf vmcore.kdump-zlib; do
	if "$K" -N "$V" -M "$CAP/$form" slab >"$CAP/$form.slab" 2>"$CAP/$form.err"; then
		"$PY" - "$CAP/slabinfo" "$CAP/$form.slab" <<'EOF' && ok "$form: slab equals the guest's slabinfo" || bad "$form: slab differs from the guest's slabinfo"
import sys
def rows(p):
    d = {}
    for l in open(p):
        if l.startswith(('#', 'slabinfo')):
            continue
        f = l.split()
        if len(f) > 5:
            d[f[0]] = f[1:6] + f[-3:]
    return d
g, k = rows(sys.argv[1]), rows(sys.argv[2])
diff = [n for n in set(g) | set(k) if g.get(n) != k.get(n)]
print('arm64 %s: %d guest caches, %d equal' % (sys.argv[2].rsplit('/', 1)[-1], len(g),
                                               len(g) - len(diff)))
for n in diff[:10]:
    print('  %s guest %s kvmstat %s' % (n, g.get(n), k.get(n)))
sys.exit(1 if diff or len(g) < 50 else 0)
EOF
	else
		bad "$form: kvmstat slab failed: $(tail -1 "$CAP/$form.err")"
	fi
done
info=$("$K" -N "$V" -M "$CAP/vmcore.elf" info 2>&1)
grep -q "Linux version ${KVER}" <<<"$info" && ok "info: the arm64 kernel's banner" ||
	bad "info: no banner: $(head -8 <<<"$info")"
grep -q "^arch: *arm64$" <<<"$info" && ok "info: arch arm64" || bad "info names no arch arm64"
# no kernel file: the dump's VMCOREINFO and kallsyms (Debian's arm64 kernel
# keeps no data symbols there: version and dmesg, not slab)
info=$("$K" -M "$CAP/vmcore.elf" info 2>&1)
grep -q "^arch: *arm64$" <<<"$info" && ok "no -N: the dump names arm64" ||
	bad "no -N: $(head -8 <<<"$info")"
last=$(grep -o 'LC_LAST_LINE_[0-9a-f-]*' "$CAP/serial.log" | head -1)
"$K" -N "$V" -M "$CAP/vmcore.elf" dmesg >"$CAP/dmesg" 2>&1 && grep -q "qemu_fw_cfg\|fw_cfg\|Freeing unused kernel memory" "$CAP/dmesg" &&
	ok "dmesg: the guest's boot messages" || bad "dmesg: $(tail -2 "$CAP/dmesg")"
_=$last
if "$PY" -c 'import drgn' 2>/dev/null; then
	SP=$(ls "$(dirname "$K")"/../python/_speedups*.so 2>/dev/null | head -1)
	if KVMSTAT_LIB=$(dirname "$K")/../libkvmstat/libkvmstat.so KVMSTAT_SPEEDUPS=$SP \
	    PYTHONPATH=$ROOT/python "$PY" "$HERE/drgn_compat.py" "$CAP/vmcore.elf" \
	    "alias:$CAP/vmcore.elf" "$V" >"$CAP/drgn_compat.out" 2>&1; then
		ok "drgn and kvmstat on the ELF: $(tail -1 "$CAP/drgn_compat.out")"
	else
		bad "drgn_compat on arm64: $(head -12 "$CAP/drgn_compat.out")"
	fi
else
	bad "drgn missing for $PY (python3-drgn): the arm64 oracle"
fi
finish
