#!/usr/bin/env bash
# kernel_check.sh [KVMSTAT [ARCH:KVER...]] - Debian kernels other than the
# host's (issue 25's matrix; the host's amd64 6.1 is realcore.sh's), booted
# and dumped under QEMU (TCG: qemu-system-aarch64 -M virt,
# qemu-system-x86_64 -M pc), read by kvmstat and checked against the
# guest's own /proc and against the newest peers Debian has.
# Default matrix: amd64 5.10 (Debian 11), amd64 and arm64 of the newest 6.12
# the mirror has for this release (Debian 12's security builds), arm64 of
# the host's release (6.1).  KVER "6.12" means that newest; any full ABI
# name works too.
#
#   1. Packages: a private apt list per architecture (lists and archives
#      under $KVS_LINUX_CACHE/apt-ARCH, nothing of the host's apt state
#      touched) naming the mirrors and suites this machine's own apt sources
#      name (/etc/apt/sources.list and sources.list.d: read, never written
#      into the tree), plus the release before this one on the main mirror
#      (bullseye for bookworm: 5.10); `apt-get download` of
#      linux-image-KVER-unsigned, linux-image-KVER-dbg (vmlinux and
#      System.map only are kept) and busybox-static.  Cached.
#   2. The peers: trixie's drgn and crash, in a chroot debootstrap makes
#      from the same mirror ($KVS_LINUX_CACHE/trixie/root, cached).  The
#      dumps and vmlinux are hard-linked into it at the same paths.
#   3. Captures, two per kernel: nokaslr and KASLR (cap-KVER-nokaslr,
#      cap-KVER-kaslr).  An initramfs (busybox, qemu_fw_cfg.ko so that
#      QEMU's -device vmcoreinfo gets the kernel's VMCOREINFO), 2,000 tmpfs
#      files and 100 directories, then /proc/vmallocinfo twice and
#      /proc/slabinfo on the serial console with shell builtins (nothing
#      forks after); QMP stop, dump-guest-memory as ELF (phys only), ELF with
#      paging, kdump-zlib (QEMU writes it flattened).  amd64 also gets the
#      reassembled kdump (makedumpfile -R), makedumpfile -c -d 31 and -l -d 31
#      (Debian's makedumpfile is built for amd64 only), and on KASLR the
#      guest's RAM as a live memory-backend-file (mem.ram; arm64's RAM
#      starts at physical 0x40000000, so it is read as mem.ram@0x40000000).
#      The kernel runs with profile=2.  Cached per kernel and variant.
#   4. Checks, every form: kvmstat slab (-N vmlinux) equals the guest's
#      slabinfo row by row (every field; a filtered dump that lost a page may
#      mark rows unreadable, every other row equal); with no kernel file
#      the same table, byte for byte, and the same --json rows (a kernel
#      whose kallsyms names text only - arm64 6.1 - gives no per-CPU offsets:
#      there the exact count is null, status 1 with a warning, every other
#      field equal).  On the ELF: info (banner, arch), dmesg, profile,
#      vmalloc against the guest's two vmallocinfo reads, info's banner and
#      dmesg without a kernel file as with -N, kallsyms against
#      System.map (kallsyms_check.py, also with VMCOREINFO's names removed),
#      and the peers: trixie's drgn (exactly allocated objects of every
#      cache, whatis on ~1,000 addresses: oracle_drgn_generic.py; one
#      object-layer script under drgn and kvmstat: drgn_compat.py) and, on
#      amd64, trixie's crash (kmem -s, every column).
# Ends with the oracles that read each dump, the dumps checked against the
# guest alone, and "linux-kernels: N passed, M failed"; a missing tool or
# package is a failure, said so.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"
K=${1:-$ROOT/build/analyzers/kvmstat}
shift || true
B=$(cd "$(dirname "$K")/.." && pwd)
C=$KVS_LINUX_CACHE
pass=0 fail=0
ok()  { pass=$((pass + 1)); log "ok: [${ARCH:-} ${KVER:-} ${VAR:-}] $*"; }
bad() { fail=$((fail + 1)); log "FAIL: [${ARCH:-} ${KVER:-} ${VAR:-}] $*"; }
UNREAD=() READERS=()
finish() {
	local u
	for u in "${READERS[@]}"; do echo "linux-kernels: read by $u"; done
	for u in "${UNREAD[@]}"; do echo "linux-kernels: checked against the guest alone: $u"; done
	echo "linux-kernels: $pass passed, $fail failed"
	exit $((fail > 0))
}
[ -x "$K" ] || { bad "kvmstat $K missing"; finish; }
host=$(kvs_kver) || { bad "no linux-image-amd64 to take the release from"; finish; }
MATRIX=("$@")
[ ${#MATRIX[@]} -gt 0 ] || MATRIX=("amd64:5.10" "amd64:6.12" "arm64:${host%-amd64}" "arm64:6.12")
export KVMSTAT_LIB=$B/libkvmstat/libkvmstat.so PYTHONPATH=$ROOT/python
KVMSTAT_SPEEDUPS=$(ls "$B"/python/_speedups*.so 2>/dev/null | head -1)
export KVMSTAT_SPEEDUPS

# The main mirror's URI: the first one this machine's apt sources name.
mirror() {
	{ grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
	  grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | sed 's/\[[^]]*\]//' | awk '{print $2}'
	} | grep -v security | head -1
}

# ---- the peers: trixie's drgn and crash in a chroot ------------------------
PEER_ROOT=$C/trixie/root
PEER_STAMP="trixie minbase python3-drgn crash v1"
peers() {
	[ "$(cat "$C/trixie/stamp" 2>/dev/null)" = "$PEER_STAMP" ] && return 0
	command -v debootstrap >/dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null 2>&1 ||
		{ bad "debootstrap missing and not installable: no trixie peers"; return 1; }
	local m; m=$(mirror)
	[ -n "$m" ] || { bad "no mirror in this machine's apt sources for debootstrap"; return 1; }
	rm -rf "$C/trixie"; mkdir -p "$C/trixie"
	local t0; t0=$(now)
	debootstrap --variant=minbase --include=python3-drgn,crash trixie "$PEER_ROOT" "$m" \
		>"$C/trixie/debootstrap.log" 2>&1 ||
		{ bad "debootstrap trixie failed (see $C/trixie/debootstrap.log)"; return 1; }
	log "trixie chroot with drgn and crash: $(elapsed "$t0") s"
	echo "$PEER_STAMP" >"$C/trixie/stamp"
}
# peer_link FILE...: the same path inside the chroot (a hard link: same disk)
peer_link() {
	local f
	for f in "$@"; do
		mkdir -p "$PEER_ROOT$(dirname "$f")"
		[ "$f" -ef "$PEER_ROOT$f" ] || ln -f "$f" "$PEER_ROOT$f" 2>/dev/null || cp "$f" "$PEER_ROOT$f"
	done
}
HAVE_PEERS=0
peers && HAVE_PEERS=1
DRGN_V=$( [ $HAVE_PEERS = 1 ] && chroot "$PEER_ROOT" python3 -c 'import drgn; print(drgn.__version__)' 2>/dev/null)
CRASH_V=$( [ $HAVE_PEERS = 1 ] && chroot "$PEER_ROOT" crash --version 2>/dev/null | sed -n 's/^crash \([0-9][^ ]*\).*/\1/p' | head -1)
[ $HAVE_PEERS = 0 ] || { [ -n "$DRGN_V" ] && [ -n "$CRASH_V" ]; } ||
	{ bad "the trixie chroot has no drgn or crash"; HAVE_PEERS=0; }

# One kernel: packages, two captures, checks.  Returns early on a failure
# that stops this kernel (counted); the others go on.
check_one() {
ARCH=$1 KVER=$2 VAR=
A=$C/$ARCH
case $ARCH in
arm64) QEMU=qemu-system-aarch64 QPKG=qemu-system-arm CONSOLE=ttyAMA0
       QARGS=(-M virt -cpu cortex-a57) RAM_BASE=0x40000000 ;;   # virt's RAM
amd64) QEMU=qemu-system-x86_64 QPKG=qemu-system-x86 CONSOLE=ttyS0 QARGS=(-M pc) RAM_BASE= ;;
*) bad "no such architecture $ARCH"; return ;;
esac
command -v $QEMU >/dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $QPKG >/dev/null 2>&1 ||
	{ bad "$QEMU missing and not installable"; return; }

# ---- 1. packages ----------------------------------------------------------
mkdir -p "$C/apt-$ARCH/lists/partial" "$C/apt-$ARCH/archives/partial" "$C/apt-$ARCH/prefs.d"
SL=$C/apt-$ARCH/sources.list
"$PY" - "$ARCH" >"$SL.new" <<'EOF'
import glob, re, sys
# the release before each one this machine names, on the same mirror
before = {'bookworm': 'bullseye', 'trixie': 'bookworm'}
out = []
def add(opts, uri, suite, comps):
    out.append('deb [%s] %s %s %s' % (opts, uri, suite, comps))
    if suite in before:
        out.append('deb [%s] %s %s %s' % (opts, uri, before[suite], comps))
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
                    add('arch=%s signed-by=%s' % (sys.argv[1], f.get('signed-by',
                        '/usr/share/keyrings/debian-archive-keyring.gpg')), uri, suite,
                        f.get('components', 'main'))
    elif path.endswith('.list'):
        for line in text.splitlines():
            m = re.match(r'\s*deb\s+(\[[^]]*\]\s+)?(\S+)\s+(\S+)\s+(.*)', line)
            if m:
                add('arch=%s' % sys.argv[1], m.group(2), m.group(3), m.group(4))
print('\n'.join(dict.fromkeys(out)))
EOF
newlist=0
cmp -s "$SL.new" "$SL" || { mv "$SL.new" "$SL"; newlist=1; }
rm -f "$SL.new"
O=(-o "Dir::State=$C/apt-$ARCH" -o "Dir::State::Lists=$C/apt-$ARCH/lists"
   -o "Dir::Cache=$C/apt-$ARCH" -o "Dir::Cache::archives=$C/apt-$ARCH/archives"
   -o "Dir::Etc::SourceList=$SL" -o "Dir::Etc::SourceParts=/dev/null"
   -o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=$C/apt-$ARCH/prefs.d"
   -o APT::Architecture=$ARCH -o APT::Architectures=$ARCH -o Debug::NoLocking=1)
if [ $newlist = 1 ] || [ -z "$(ls "$C/apt-$ARCH/lists/"*Packages* 2>/dev/null | head -1)" ] ||
    [ -n "$(find "$C/apt-$ARCH/lists" -maxdepth 1 -name '*Packages*' -mtime +1 | head -1)" ]; then
	apt-get "${O[@]}" update >"$C/apt-$ARCH/update.log" 2>&1 ||
		{ bad "$ARCH apt update failed (see $C/apt-$ARCH/update.log)"; return; }
fi
case $KVER in
*-"$ARCH") ;;
*-*) KVER=$KVER-$ARCH ;;            # 6.1.0-56: that ABI of this architecture
*)	# a release (5.10, 6.12): its newest ABI of the plain flavour
	# (5.10.0-32-amd64, 6.12.117+deb12-amd64)
	KVER=$(apt-cache "${O[@]}" pkgnames "linux-image-$KVER" 2>/dev/null |
		sed -n "s/^linux-image-\(${KVER//./\\.}[.0-9]*\(-[0-9][0-9]*\|+deb[0-9]*\)-$ARCH\)-unsigned$/\1/p" |
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
MAP=$A/usr/lib/debug/boot/System.map-$KVER
if [ ! -s "$V" ]; then
	dpkg-deb --fsys-tarfile "$C/apt-$ARCH/archives/linux-image-$KVER-dbg_"*.deb |
		tar -x -C "$A" "./usr/lib/debug/boot/vmlinux-$KVER" "./usr/lib/debug/boot/System.map-$KVER" ||
		{ bad "no vmlinux in the debug package"; return; }
fi
[ -d "$A/img-$KVER/boot" ] || dpkg-deb -x "$C/apt-$ARCH/archives/linux-image-$KVER-unsigned_"*.deb "$A/img-$KVER"
[ -x "$A/bb/bin/busybox" ] || dpkg-deb -x "$C/apt-$ARCH/archives/busybox-static_"*.deb "$A/bb"

for VAR in nokaslr kaslr; do
	capture && checks
done
VAR=
}

# ---- 3. capture: $A/cap-$KVER-$VAR ------------------------------------------
capture() {
CAP=$A/cap-$KVER-$VAR
local stamp="kernel v5 $ARCH $KVER $VAR" live=0
[ "$VAR" = kaslr ] && live=1
[ "$ARCH" = arm64 ] && [ $live = 1 ] && stamp="$stamp ram"
[ "$(cat "$CAP/stamp" 2>/dev/null)" = "$stamp" ] && return 0
rm -rf "$CAP"; mkdir -p "$CAP/ir/bin" "$CAP/ir/proc" "$CAP/ir/sys" "$CAP/ir/tmp" "$CAP/ir/dev"
cp "$A/bb/bin/busybox" "$CAP/ir/bin/"
local fw
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
# vmallocinfo's addresses in full for root (%pK), not hashed
echo 1 > /proc/sys/kernel/kptr_restrict
insmod /qemu_fw_cfg.ko && echo LC_FWCFG_OK
mount -t tmpfs tmpfs /tmp
i=0; while [ $i -lt 2000 ]; do echo "kvmstat file $i" > /tmp/f$i; i=$((i + 1)); done
mkdir /tmp/d; j=0; while [ $j -lt 100 ]; do mkdir /tmp/d/$j; j=$((j + 1)); done
sleep 2
# from here on only shell builtins: no fork, no new stack, no new vmalloc area
echo ===LC_VMALLOC1_BEGIN===
while IFS= read -r l; do echo "$l"; done < /proc/vmallocinfo
echo ===LC_VMALLOC1_END===
echo ===LC_VMALLOC2_BEGIN===
while IFS= read -r l; do echo "$l"; done < /proc/vmallocinfo
echo ===LC_VMALLOC2_END===
echo ===LC_SLABINFO_BEGIN===
while IFS= read -r l; do echo "$l"; done < /proc/slabinfo
echo ===LC_SLABINFO_END===
echo ===LC_READY_FOR_DUMP===
while true; do read -r x; done
EOF
chmod +x "$CAP/ir/init"
(cd "$CAP/ir" && find . | cpio -o -H newc 2>/dev/null | gzip >"$CAP/initrd.gz")
local t0 qpid append="console=$CONSOLE quiet panic=-1 profile=2" MEM=()
[ "$VAR" = nokaslr ] && append="$append nokaslr"
local shm=/dev/shm/kvs-kernel-$$.ram
[ $live = 1 ] && MEM=(-object "memory-backend-file,id=ram,size=1024M,mem-path=$shm,share=on"
	-machine memory-backend=ram)
t0=$(now)
$QEMU "${QARGS[@]}" -m 1024 "${MEM[@]}" -smp 2 -accel tcg \
	-kernel "$A/img-$KVER/boot/vmlinuz-$KVER" -initrd "$CAP/initrd.gz" \
	-append "$append" -device vmcoreinfo \
	-display none -monitor none -serial "file:$CAP/serial.log" \
	-qmp "unix:$CAP/qmp.sock,server=on,wait=off" >"$CAP/qemu.log" 2>&1 &
qpid=$!
for _ in $(seq 1 600); do
	grep -q LC_READY_FOR_DUMP "$CAP/serial.log" 2>/dev/null && break
	kill -0 $qpid 2>/dev/null || break
	sleep 1
done
if ! grep -q LC_READY_FOR_DUMP "$CAP/serial.log" 2>/dev/null; then
	kill $qpid 2>/dev/null; rm -f "$shm"
	bad "the guest did not come up: $(tail -3 "$CAP/serial.log" 2>/dev/null) $(tail -2 "$CAP/qemu.log")"
	return 1
fi
local Q="$PY $HERE/qmp.py $CAP/qmp.sock"
$Q stop >/dev/null || { kill $qpid; rm -f "$shm"; bad "QMP stop failed"; return 1; }
if [ $live = 1 ]; then
	cp "$shm" "$CAP/mem.ram" || { kill $qpid; rm -f "$shm"; bad "copying the guest's RAM file"; return 1; }
fi
$Q dump-guest-memory "{\"paging\": false, \"protocol\": \"file:$CAP/vmcore.elf\"}" >/dev/null &&
$Q dump-guest-memory "{\"paging\": true, \"protocol\": \"file:$CAP/vmcore.elf-paging\"}" >/dev/null &&
$Q dump-guest-memory "{\"paging\": false, \"protocol\": \"file:$CAP/vmcore.kdump-zlib\", \"format\": \"kdump-zlib\"}" >/dev/null ||
	{ kill $qpid; rm -f "$shm"; bad "QMP dump of the guest failed"; return 1; }
$Q quit >/dev/null 2>&1; wait $qpid 2>/dev/null; rm -f "$shm"
local s
for s in SLABINFO VMALLOC1 VMALLOC2; do
	sed -n "/===LC_${s}_BEGIN===/,/===LC_${s}_END===/p" "$CAP/serial.log" |
		sed '1d;$d' | tr -d '\r' >"$CAP/${s,,}"
done
if [ "$ARCH" = amd64 ]; then
	# makedumpfile (Debian builds it for amd64 only): the reassembled kdump,
	# and the filtered forms from the ELF with its headers moved first
	makedumpfile -R "$CAP/vmcore.kdump" <"$CAP/vmcore.kdump-zlib" >"$CAP/mdf.log" 2>&1 &&
	"$PY" "$HERE/dumptools.py" move-phdrs "$CAP/vmcore.elf" "$CAP/elf-phdr64" &&
	makedumpfile -c -d 31 "$CAP/elf-phdr64" "$CAP/vmcore.mdf-d31" >>"$CAP/mdf.log" 2>&1 &&
	makedumpfile -l -d 31 "$CAP/elf-phdr64" "$CAP/vmcore.mdf-lzo" >>"$CAP/mdf.log" 2>&1 ||
		{ rm -f "$CAP/elf-phdr64"; bad "makedumpfile: $(tail -3 "$CAP/mdf.log")"; return 1; }
	rm -f "$CAP/elf-phdr64"
fi
log "$ARCH $KVER $VAR capture: $(elapsed "$t0") s"
echo "$stamp" >"$CAP/stamp"
}

# ---- 4. checks --------------------------------------------------------------
checks() {
local form forms=(vmcore.elf vmcore.elf-paging vmcore.kdump-zlib) rc out
[ "$ARCH" = amd64 ] && forms+=(vmcore.kdump vmcore.mdf-d31 vmcore.mdf-lzo)
[ -s "$CAP/mem.ram" ] && forms+=(mem.ram)
grep -q LC_FWCFG_OK "$CAP/serial.log" && ok "the guest loaded qemu_fw_cfg (VMCOREINFO for QEMU)" ||
	bad "qemu_fw_cfg did not load: no VMCOREINFO"
for form in "${forms[@]}"; do
	local at=$CAP/$form
	# arm64's RAM file: its first byte is physical RAM_BASE
	[ "$form" = mem.ram ] && [ -n "$RAM_BASE" ] && at=$at@$RAM_BASE
	"$K" -N "$V" -M "$at" slab >"$CAP/$form.slab" 2>"$CAP/$form.err"; rc=$?
	local partial=
	# a filtered dump may lack a page a row needs: kept, marked, status 1
	case $form in vmcore.mdf-*) [ $rc = 1 ] && grep -q 'not in dump' "$CAP/$form.err" && partial=partial ;; esac
	if [ $rc = 0 ] || [ -n "$partial" ]; then
		out=$("$PY" "$HERE/kernel_compare.py" slab "$CAP/slabinfo" "$CAP/$form.slab" $partial) &&
			ok "$form: $(tail -1 <<<"$out")${partial:+ ($(head -1 <<<"$out"))}" ||
			bad "$form: $out"
	else
		bad "$form: kvmstat slab failed: $(tail -1 "$CAP/$form.err")"
	fi
	if [ -z "$partial" ]; then
		# the same table from the dump alone: byte for byte (slabinfo's
		# figures need no per-CPU data); status 1 only where the CPUs'
		# slabs are unread (kallsyms of text only), said so
		"$K" -M "$at" slab >"$CAP/$form.nodebug" 2>"$CAP/$form.nodebug.err"; rc=$?
		{ [ $rc = 0 ] || { [ $rc = 1 ] && grep -q "CPUs' slabs are not known" "$CAP/$form.nodebug.err"; }; } &&
		cmp -s "$CAP/$form.nodebug" "$CAP/$form.slab" &&
			ok "$form, no -N: slab as with vmlinux, byte for byte (status $rc)" ||
			bad "$form, no -N: slab differs (status $rc): $(head -2 "$CAP/$form.nodebug") $(tail -1 "$CAP/$form.nodebug.err")"
		"$K" -N "$V" -M "$at" --json slab >"$CAP/$form.slab.json" 2>/dev/null
		"$K" -M "$at" --json slab >"$CAP/$form.nodebug.json" 2>/dev/null
		# a kernel whose kallsyms names every symbol gives the CPUs' slabs too
		local all=
		grep -q '^CONFIG_KALLSYMS_ALL=y' "$A/img-$KVER/boot/config-$KVER" 2>/dev/null && all=all
		out=$("$PY" "$HERE/kernel_compare.py" nokernel "$CAP/$form.slab.json" "$CAP/$form.nodebug.json" $all) &&
			ok "$form: $(tr '\n' ';' <<<"$out")" || bad "$form: $out"
	fi
done
local E=$CAP/vmcore.elf info
info=$("$K" -N "$V" -M "$E" info 2>&1)
grep -q "Linux version ${KVER}" <<<"$info" && ok "info: the kernel's banner" ||
	bad "info: no banner: $(head -8 <<<"$info")"
grep -q "^arch: *$ARCH$" <<<"$info" && ok "info: arch $ARCH" || bad "info names no arch $ARCH"
local ver
ver=$(grep '^version:' <<<"$info")
info=$("$K" -M "$E" info 2>&1)
grep -q "^arch: *$ARCH$" <<<"$info" && ok "no -N: the dump names $ARCH" ||
	bad "no -N: $(head -8 <<<"$info")"
[ -n "$ver" ] && [ "$(grep '^version:' <<<"$info")" = "$ver" ] && ok "no -N: info's banner as with -N" ||
	bad "no -N: info's banner $(grep '^version:' <<<"$info"), with -N $ver"
"$K" -N "$V" -M "$E" dmesg >"$CAP/dmesg" 2>&1 &&
	grep -q "Linux version ${KVER}" "$CAP/dmesg" && [ "$(wc -l <"$CAP/dmesg")" -gt 50 ] &&
	ok "dmesg: the kernel's banner, $(wc -l <"$CAP/dmesg") lines" ||
	bad "dmesg: $(head -2 "$CAP/dmesg")"
"$K" -M "$E" dmesg >"$CAP/dmesg.nodebug" 2>&1 && cmp -s "$CAP/dmesg" "$CAP/dmesg.nodebug" &&
	ok "no -N: dmesg as with -N" || bad "no -N: dmesg differs: $(head -2 "$CAP/dmesg.nodebug")"
# profile=2: prof_buffer is vmalloc'ed (KASLR moves vmalloc's base too)
out=
"$K" -N "$V" -M "$E" --json profile >"$CAP/profile.json" 2>"$CAP/profile.err" &&
	out=$("$PY" -c 'import json, sys; d = json.load(open(sys.argv[1]))
t = d["total"]; f = sum(x["ticks"] for x in d["functions"])
print("profile: step %d, %d ticks, %d in %d functions" % (d["step"], t, f, len(d["functions"])))
sys.exit(0 if t > 0 and f + d["unknown"] == t and d["step"] == 4 else 1)' "$CAP/profile.json") &&
	ok "$out" || bad "profile: ${out:-$(tail -1 "$CAP/profile.err")}"
out=
"$K" -N "$V" -M "$E" vmalloc >"$CAP/vmalloc" 2>"$CAP/vmalloc.err" &&
	out=$("$PY" "$HERE/kernel_compare.py" vmalloc "$CAP/vmalloc1" "$CAP/vmalloc2" "$CAP/vmalloc") &&
	ok "$out" || bad "vmalloc: ${out:-$(tail -1 "$CAP/vmalloc.err")}"
out=$("$PY" "$HERE/kallsyms_check.py" "$CAP/vmcore.kdump-zlib" "$MAP" 2>&1) &&
	ok "kallsyms: $(tail -1 <<<"$out")" || bad "kallsyms_check: $(tail -6 <<<"$out")"

# ---- the peers on the ELF ----
if [ $HAVE_PEERS = 0 ]; then
	bad "no trixie peers: the oracles"
	return
fi
local readers="guest /proc"
peer_link "$V" "$E" "$HERE/oracle_drgn_generic.py" "$HERE/oracle_drgn.py"
"$K" -N "$V" -M "$E" slab --format crash >"$CAP/kmem-s" 2>&1 || bad "slab --format crash: $(tail -1 "$CAP/kmem-s")"
local okey; okey=$(cat "$CAP/stamp" "$HERE/oracle_drgn_generic.py" "$HERE/oracle_drgn.py" | sha256sum | cut -c1-16)
if [ "$(cat "$CAP/drgn.key" 2>/dev/null)" != "$okey" ]; then
	chroot "$PEER_ROOT" python3 "$HERE/oracle_drgn_generic.py" "$E" "$V" alias \
		>"$CAP/drgn.json" 2>"$CAP/drgn.err" && echo "$okey" >"$CAP/drgn.key"
fi
if [ -s "$CAP/drgn.key" ]; then
	"$PY" -c 'import json, sys; print("\n".join("%#x" % w["address"] for w in json.load(open(sys.argv[1]))["whatis"]))' \
		"$CAP/drgn.json" | "$K" -N "$V" -M "$E" --json whatis - >"$CAP/whatis.json" 2>"$CAP/whatis.err"
	out=$("$PY" "$HERE/kernel_compare.py" drgn "$CAP/drgn.json" "$CAP/kmem-s" "$CAP/whatis.json" "$CAP/profile.json") &&
		ok "$(tr '\n' ';' <<<"$out")" || bad "against drgn $DRGN_V: $out"
	readers="$readers, drgn $DRGN_V"
else
	bad "drgn $DRGN_V failed on $E: $(grep -v '^ ' "$CAP/drgn.err" | tail -1 | cut -c1-200)"
fi
out=$(KVS_DRGN_ROOT=$PEER_ROOT "$PY" "$HERE/drgn_compat.py" "$E" "alias:$E" "$V" 2>&1)
case $? in
0) ok "drgn $DRGN_V and kvmstat's object layer: $(tail -1 <<<"$out")" ;;
*) bad "drgn_compat: $(head -12 <<<"$out")" ;;
esac
if [ "$ARCH" = amd64 ]; then
	printf 'kmem -s\nquit\n' >"$PEER_ROOT/tmp/kvs-kmem-s"
	chroot "$PEER_ROOT" crash -s -i /tmp/kvs-kmem-s "$V" "$E" </dev/null \
		>"$CAP/crash.kmem-s" 2>"$CAP/crash.err"
	out=$("$PY" "$HERE/kernel_compare.py" crash "$CAP/crash.kmem-s" "$CAP/kmem-s") &&
		{ ok "$out"; readers="$readers, crash $CRASH_V"; } ||
		bad "against crash $CRASH_V: $out $(tail -2 "$CAP/crash.err")"
else
	UNREAD+=("$ARCH $KVER $VAR by crash: Debian's crash $CRASH_V reads the host's architecture only")
fi
READERS+=("$ARCH $KVER $VAR ($(basename "$E")): $readers")
}

for spec in "${MATRIX[@]}"; do
	check_one "${spec%%:*}" "${spec#*:}"
done
finish
