#!/usr/bin/env bash
# kernel_check.sh [KVMSTAT [ARCH:KVER...]] - Debian kernels other than the
# host's (issue 25's matrix), booted and dumped under QEMU (TCG:
# qemu-system-aarch64 -M virt, qemu-system-x86_64 -M pc), read by kvmstat
# and checked against the guest's own /proc/slabinfo and against drgn.
# Default matrix: arm64 of the host's release (6.1), and amd64 and arm64 of
# the newest 6.12 the mirror has for this release (Debian 12's security
# builds).  KVER "6.12" means that newest; any full ABI name works too.
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
# Ends with "linux-kernels: N passed, M failed"; a missing tool or package
# is a failure, said so.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"
K=${1:-$ROOT/build/analyzers/kvmstat}
shift || true
C=$KVS_LINUX_CACHE
pass=0 fail=0
ok()  { pass=$((pass + 1)); log "ok: [$ARCH $KVER] $*"; }
bad() { fail=$((fail + 1)); log "FAIL: [${ARCH:-} ${KVER:-}] $*"; }
UNREAD=()
finish() {
	local u
	for u in "${UNREAD[@]}"; do echo "linux-kernels: checked against the guest alone: $u"; done
	echo "linux-kernels: $pass passed, $fail failed"
	exit $((fail > 0))
}
[ -x "$K" ] || { bad "kvmstat $K missing"; finish; }
host=$(kvs_kver) || { bad "no linux-image-amd64 to take the release from"; finish; }
MATRIX=("$@")
[ ${#MATRIX[@]} -gt 0 ] || MATRIX=("arm64:${host%-amd64}" "amd64:6.12" "arm64:6.12")

# One kernel: packages, capture, checks.  Returns early on a failure that
# stops this kernel (counted); the others go on.
check_one() {
ARCH=$1 KVER=$2
local A=$C/$ARCH
case $ARCH in
arm64) QEMU=qemu-system-aarch64 QPKG=qemu-system-arm CONSOLE=ttyAMA0
       QARGS=(-M virt -cpu cortex-a57) ;;
amd64) QEMU=qemu-system-x86_64 QPKG=qemu-system-x86 CONSOLE=ttyS0 QARGS=(-M pc) ;;
*) bad "no such architecture $ARCH"; return ;;
esac
command -v $QEMU >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $QPKG >/dev/null 2>&1 ||
	{ bad "$QEMU missing and not installable"; return; }

# ---- 1. packages ----------------------------------------------------------
mkdir -p "$C/apt-$ARCH/lists/partial" "$C/apt-$ARCH/archives/partial" "$C/apt-$ARCH/prefs.d"
SL=$C/apt-$ARCH/sources.list
"$PY" - "$ARCH" >"$SL" <<'EOF'
import glob, re, sys
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
                    out.append('deb [arch=%s signed-by=%s] %s %s %s' % (sys.argv[1],
                        f.get('signed-by', '/usr/share/keyrings/debian-archive-keyring.gpg'),
                        uri, suite, f.get('components', 'main')))
    elif path.endswith('.list'):
        for line in text.splitlines():
            m = re.match(r'\s*deb\s+(\[[^]]*\]\s+)?(\S+)\s+(\S+)\s+(.*)', line)
            if m:
                out.append('deb [arch=%s] %s %s %s' % (sys.argv[1], m.group(2), m.group(3),
                                                       m.group(4)))
print('\n'.join(dict.fromkeys(out)))
EOF
O=(-o "Dir::State=$C/apt-$ARCH" -o "Dir::State::Lists=$C/apt-$ARCH/lists"
   -o "Dir::Cache=$C/apt-$ARCH" -o "Dir::Cache::archives=$C/apt-$ARCH/archives"
   -o "Dir::Etc::SourceList=$SL" -o "Dir::Etc::SourceParts=/dev/null"
   -o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=$C/apt-$ARCH/prefs.d"
   -o APT::Architecture=$ARCH -o APT::Architectures=$ARCH -o Debug::NoLocking=1)
if [ -z "$(ls "$C/apt-$ARCH/lists/"*Packages* 2>/dev/null | head -1)" ] ||
    [ -n "$(find "$C/apt-$ARCH/lists" -maxdepth 1 -name '*Packages*' -mtime +1 | head -1)" ]; then
	apt-get "${O[@]}" update >"$C/apt-$ARCH/update.log" 2>&1 ||
		{ bad "$ARCH apt update failed (see $C/apt-$ARCH/update.log)"; return; }
fi
case $KVER in
*-"$ARCH") ;;
*-*) KVER=$KVER-$ARCH ;;            # 6.1.0-56: that ABI of this architecture
*)	# a release (6.12): its newest ABI of the plain flavour
	KVER=$(apt-cache "${O[@]}" pkgnames "linux-image-$KVER" 2>/dev/null |
		sed -n "s/^linux-image-\(${KVER//./\\.}[.0-9]*+deb[0-9]*-$ARCH\)-unsigned$/\1/p" |
		sort -V | tail -1)
	[ -n "$KVER" ] || { bad "no linux-image-$2* for $ARCH on this machine's mirrors"; return; }
	;;
esac
need=(linux-image-$KVER-unsigned linux-image-$KVER-dbg busybox-static)
have_all=1
for p in "${need[@]}"; do ls "$C/apt-$ARCH/archives/${p}_"*.deb >/dev/null 2>&1 || have_all=0; done
if [ $have_all = 0 ]; then
	(cd "$C/apt-$ARCH/archives" && apt-get "${O[@]}" download "${need[@]}") \
		>"$C/apt-$ARCH/download.log" 2>&1 || { bad "download of ${need[*]} failed"; return; }
fi
mkdir -p "$A"
V=$A/usr/lib/debug/boot/vmlinux-$KVER
if [ ! -s "$V" ]; then
	dpkg-deb --fsys-tarfile "$C/apt-$ARCH/archives/linux-image-$KVER-dbg_"*.deb |
		tar -x -C "$A" "./usr/lib/debug/boot/vmlinux-$KVER" "./usr/lib/debug/boot/System.map-$KVER" ||
		{ bad "no vmlinux in the debug package"; return; }
fi
[ -d "$A/img-$KVER/boot" ] || dpkg-deb -x "$C/apt-$ARCH/archives/linux-image-$KVER-unsigned_"*.deb "$A/img-$KVER"
[ -x "$A/bb/bin/busybox" ] || dpkg-deb -x "$C/apt-$ARCH/archives/busybox-static_"*.deb "$A/bb"

# ---- 2. capture -----------------------------------------------------------
CAP=$A/cap-$KVER
stamp="kernel v3 $ARCH $KVER"
if [ "$(cat "$CAP/stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -rf "$CAP"; mkdir -p "$CAP/ir/bin" "$CAP/ir/proc" "$CAP/ir/sys" "$CAP/ir/tmp" "$CAP/ir/dev"
	cp "$A/bb/bin/busybox" "$CAP/ir/bin/"
	fw=$(ls "$A/img-$KVER/lib/modules/$KVER/kernel/drivers/firmware/qemu_fw_cfg.ko"* | head -1)
	case $fw in
	*.xz) xz -dc "$fw" >"$CAP/ir/qemu_fw_cfg.ko" ;;
	*.zst) zstd -dc "$fw" >"$CAP/ir/qemu_fw_cfg.ko" ;;
	*) cp "$fw" "$CAP/ir/qemu_fw_cfg.ko" ;;
	esac
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
echo ===LC_READY_FOR_DUMP===
while true; do read -r x; done
EOF
	chmod +x "$CAP/ir/init"
	(cd "$CAP/ir" && find . | cpio -o -H newc 2>/dev/null | gzip >"$CAP/initrd.gz")
	t0=$(now)
	$QEMU "${QARGS[@]}" -m 1024 -smp 2 -accel tcg \
		-kernel "$A/img-$KVER/boot/vmlinuz-$KVER" -initrd "$CAP/initrd.gz" \
		-append "console=$CONSOLE nokaslr quiet panic=-1" -device vmcoreinfo \
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
		bad "the guest did not come up: $(tail -3 "$CAP/serial.log" 2>/dev/null)"
		return
	fi
	Q="$PY $HERE/qmp.py $CAP/qmp.sock"
	$Q stop >/dev/null &&
	$Q dump-guest-memory "{\"paging\": false, \"protocol\": \"file:$CAP/vmcore.elf\"}" >/dev/null &&
	$Q dump-guest-memory "{\"paging\": true, \"protocol\": \"file:$CAP/vmcore.elf-paging\"}" >/dev/null &&
	$Q dump-guest-memory "{\"paging\": false, \"protocol\": \"file:$CAP/vmcore.kdump-zlib\", \"format\": \"kdump-zlib\"}" >/dev/null ||
		{ kill $qpid; bad "QMP dump of the guest failed"; return; }
	$Q quit >/dev/null 2>&1; wait $qpid 2>/dev/null
	sed -n '/===LC_SLABINFO_BEGIN===/,/===LC_SLABINFO_END===/p' "$CAP/serial.log" |
		sed '1d;$d' | tr -d '\r' >"$CAP/slabinfo"
	log "$ARCH $KVER capture: $(elapsed "$t0") s"
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
print('%s: %d guest caches, %d equal' % (sys.argv[2].rsplit('/', 1)[-1], len(g),
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
grep -q "^arch: *$ARCH$" <<<"$info" && ok "info: arch $ARCH" || bad "info names no arch $ARCH"
# no kernel file: the dump's VMCOREINFO and kallsyms (Debian's arm64 kernel
# keeps no data symbols there: version and dmesg, not slab)
info=$("$K" -M "$CAP/vmcore.elf" info 2>&1)
grep -q "^arch: *$ARCH$" <<<"$info" && ok "no -N: the dump names $ARCH" ||
	bad "no -N: $(head -8 <<<"$info")"
if [ "$ARCH" = amd64 ]; then
	# amd64 keeps every symbol in kallsyms: slab from the dump alone
	"$K" -M "$CAP/vmcore.elf" slab >"$CAP/nodebug.slab" 2>&1 &&
	cmp -s "$CAP/nodebug.slab" "$CAP/vmcore.elf.slab" && ok "no -N: slab as with vmlinux" ||
		bad "no -N slab differs: $(head -2 "$CAP/nodebug.slab")"
fi
# the log holds the kernel's banner and the qemu_fw_cfg module's loading
# (the guest's insmod; its console is quiet)
"$K" -N "$V" -M "$CAP/vmcore.elf" dmesg >"$CAP/dmesg" 2>&1 &&
	grep -q "Linux version ${KVER}" "$CAP/dmesg" && [ "$(wc -l <"$CAP/dmesg")" -gt 50 ] &&
	ok "dmesg: the kernel's banner, $(wc -l <"$CAP/dmesg") lines" ||
	bad "dmesg: $(head -2 "$CAP/dmesg")"
if "$PY" -c 'import drgn' 2>/dev/null; then
	SP=$(ls "$(dirname "$K")"/../python/_speedups*.so 2>/dev/null | head -1)
	KVMSTAT_LIB=$(dirname "$K")/../libkvmstat/libkvmstat.so KVMSTAT_SPEEDUPS=$SP \
	    PYTHONPATH=$ROOT/python "$PY" "$HERE/drgn_compat.py" "$CAP/vmcore.elf" \
	    "alias:$CAP/vmcore.elf" "$V" >"$CAP/drgn_compat.out" 2>&1
	case $? in
	0) ok "drgn and kvmstat on the ELF: $(tail -1 "$CAP/drgn_compat.out")" ;;
	2) if grep -q "drgn_compat: drgn failed" "$CAP/drgn_compat.out"; then
		# the peer cannot read this kernel: checked against the guest alone
		UNREAD+=("$ARCH $KVER: drgn $("$PY" -c 'import drgn; print(drgn.__version__)') fails: $(grep -v '^ ' "$CAP/drgn_compat.out" | grep . | tail -1 | cut -c1-160)")
		log "drgn cannot read $ARCH $KVER: checked against the guest alone"
	   else
		bad "drgn_compat: $(head -12 "$CAP/drgn_compat.out")"
	   fi ;;
	*) bad "drgn_compat: $(head -12 "$CAP/drgn_compat.out")" ;;
	esac
else
	bad "drgn missing for $PY (python3-drgn): the oracle"
fi
}

for spec in "${MATRIX[@]}"; do
	check_one "${spec%%:*}" "${spec#*:}"
done
finish
