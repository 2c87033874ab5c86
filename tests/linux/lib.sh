# shellcheck shell=bash
# shellcheck disable=SC2034  # the variables are for the scripts that source this
# Shared helpers for tests/linux/*.sh. Source it; it defines functions and
# a few variables only, it runs nothing.

KVS_LINUX_CACHE=${KVS_LINUX_CACHE:-/var/cache/kvmstat-linux}
KVS_LINUX_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Debian's interpreter: python3-drgn lives there, and a pyenv shim first in
# PATH costs seconds per start on a loaded machine.
if [ -z "${PY:-}" ]; then
	if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi
fi

log()  { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die()  { printf '[%s] FAILED: %s\n' "$(date +%H:%M:%S)" "$*" >&2; exit 1; }
now()  { date +%s.%N; }
# elapsed START -> seconds with 1 decimal
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }

# The kernel ABI name (e.g. 6.1.0-56-amd64) that linux-image-amd64 depends
# on: the installed metapackage if there is one, else the candidate.
kvs_kver() {
	local dep
	dep=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
		grep -o 'linux-image-[0-9][^ ,(]*-amd64' | head -n1)
	if [ -z "$dep" ]; then
		dep=$(apt-cache depends linux-image-amd64 2>/dev/null |
			sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n1)
	fi
	[ -n "$dep" ] || return 1
	echo "${dep#linux-image-}"
}

# Paths derived from a kver.
kvs_paths() {
	KVER=$1
	VMLINUZ=/boot/vmlinuz-$KVER
	VMLINUX=$KVS_LINUX_CACHE/usr/lib/debug/boot/vmlinux-$KVER
	SYSTEM_MAP=$KVS_LINUX_CACHE/usr/lib/debug/boot/System.map-$KVER
	MODDIR=/lib/modules/$KVER
}

# The version string in a bzImage header (setup header field kernel_version
# at 0x20e is an offset from 0x200), e.g.
# "6.1.0-56-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2025-..)"
bzimage_version() {
	"$PY" - "$1" <<'EOF'
import struct, sys
with open(sys.argv[1], 'rb') as f:
    b = f.read(65536)
assert b[0x202:0x206] == b'HdrS', 'not a bzImage'
off = struct.unpack_from('<H', b, 0x20e)[0] + 0x200
print(b[off:b.index(b'\0', off)].decode())
EOF
}

# "Linux version ..." banner from a vmlinux: linux_banner's bytes, found
# through the ELF symbol table (a grep of the 633 MB file takes 5 s).
vmlinux_banner() {
	"$PY" - "$1" <<'EOF'
import struct, sys
f = open(sys.argv[1], 'rb')
eh = f.read(64)
assert eh[:4] == b'\x7fELF' and eh[4] == 2
shoff, = struct.unpack_from('<Q', eh, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from('<HHH', eh, 0x3a)
f.seek(shoff)
raw = f.read(shentsize * shnum)
secs = [struct.unpack_from('<IIQQQQIIQQ', raw, i * shentsize) for i in range(shnum)]
symtab = next(s for s in secs if s[1] == 2)          # SHT_SYMTAB
strtab = secs[symtab[6]]
f.seek(symtab[4]); syms = f.read(symtab[5])
f.seek(strtab[4]); strs = f.read(strtab[5])
for i in range(0, len(syms), 24):
    name, info, other, shndx, value, size = struct.unpack_from('<IBBHQQ', syms, i)
    if strs[name:name + 13] == b'linux_banner\0':
        sec = secs[shndx]
        f.seek(sec[4] + value - sec[3])
        print(f.read(size).split(b'\0')[0].decode().rstrip('\n'))
        break
EOF
}

# Reduce either string to "RELEASE #BUILD..." so the two can be compared.
version_key() {
	sed -e 's/^Linux version //' | awk '{rel=$1; i=index($0,"#"); print rel " " substr($0,i)}' |
		sed -e 's/[[:space:]]*$//'
}

# oracle_hash CAPDIR -> one sha256 over what the oracle results of a capture
# depend on: the oracle scripts, the tools' versions, and the capture itself
# (its stamp and file list). run_oracles.sh stores it beside its results as
# oracles/hash; realcore.sh reruns the oracles when it differs.
oracle_hash() {
	local cap=$1 f
	{
		for f in oracle_drgn.py oracle_crash.sh oracle_census.py oracle_crash_census.sh run_oracles.sh compare.py dumptools.py lib.sh; do
			printf '== %s\n' "$f"; cat "$KVS_LINUX_DIR/$f"
		done
		printf '== versions\n'
		dpkg-query -W python3-drgn 'libkdumpfile*' crash makedumpfile 2>/dev/null
		"$PY" -c 'import drgn; print("drgn", drgn.__version__)' 2>&1
		crash --version 2>&1 | grep -m1 "^crash "
		makedumpfile -v 2>&1
		printf '== capture\n'
		cat "$cap/capture.stamp" "$cap/files.txt" 2>&1
	} | sha256sum | cut -c1-64
}

# The versions the oracles ran with, one line.
oracle_versions() {
	printf 'drgn %s (libkdumpfile %s), crash %s, makedumpfile %s\n' \
		"$("$PY" -c 'import drgn; print(drgn.__version__)' 2>/dev/null || echo missing)" \
		"$(dpkg-query -W -f='${Version}' 'libkdumpfile[0-9]*' 2>/dev/null || echo '?')" \
		"$(crash --version 2>/dev/null | sed -n 's/^crash \([0-9][^ ]*\).*/\1/p' | head -n 1)" \
		"$(makedumpfile -v 2>/dev/null | sed -n '1s/^makedumpfile: version \([^ ]*\).*/\1/p')"
}

# capture_forms CAPDIR -> the dump forms present in a capture, one a line,
# in a fixed order; a split dump is one form, vmcore.mdf-split (its parts
# vmcore.mdf-split.1,.2,.3 are read together).
KVS_FORMS="vmcore.elf vmcore.elf-paging mem.ram vmcore.kdump-zlib.flat vmcore.kdump-zlib
 vmcore.kdump-zlib.uts vmcore.kdump-lzo vmcore.kdump-snappy vmcore.mdf-d31 vmcore.mdf-lzo
 vmcore.mdf-zstd vmcore.mdf-snappy vmcore.mdf-split"
capture_forms() {
	local f
	for f in $KVS_FORMS; do
		if [ "$f" = vmcore.mdf-split ]; then
			[ -s "$1/$f.1" ] && [ -s "$1/$f.2" ] && [ -s "$1/$f.3" ] && echo "$f"
		else
			[ -s "$1/$f" ] && echo "$f"
		fi
	done
	return 0
}
# form_path CAPDIR FORM -> what a reader is given (the parts of a split
# dump, comma-separated)
form_path() {
	if [ "$2" = vmcore.mdf-split ]; then echo "$1/$2.1,$1/$2.2,$1/$2.3"; else echo "$1/$2"; fi
}

# ---- a small guest of the cached kernel (soak.sh, bench/linux_busy.sh) ----
# These boot Debian's kernel under QEMU/TCG with an initramfs of busybox and
# one /init script, its serial console in a file, QMP on a socket; the
# guest's RAM optionally in a shared memory-backend-file (file offset =
# guest physical address) that the host reads while the guest runs.

# kvs_guest_initramfs INIT OUT [MODULE...]: busybox (static) as the only
# program, INIT as /init, and the kernel modules named (of KVER, which the
# caller's setup.env sets) as /lib/modules/NAME.ko, for INIT to insmod;
# written to OUT (a gzipped newc cpio).
kvs_guest_initramfs() {
	local init=$1 out=$2 ir bb m p
	shift 2
	bb=$(command -v busybox || echo /bin/busybox)
	[ -x "$bb" ] || { log "no busybox: run tests/linux/setup.sh"; return 1; }
	ir=$(mktemp -d /tmp/kvs-initramfs.XXXXXX) || return 1
	mkdir -p "$ir"/{bin,dev,proc,sys,tmp,lib/modules}
	cp "$bb" "$ir/bin/busybox" && ln -s busybox "$ir/bin/sh" && cp "$init" "$ir/init" &&
		chmod 755 "$ir/init" || { rm -rf "$ir"; return 1; }
	for m in "$@"; do
		p=$(modinfo -k "$KVER" -n "$m" 2>/dev/null) || { log "module $m not found for $KVER"; rm -rf "$ir"; return 1; }
		case "$p" in
		*.ko) cp "$p" "$ir/lib/modules/$m.ko" ;;
		*.ko.xz) xz -dc "$p" >"$ir/lib/modules/$m.ko" ;;
		*.ko.zst) zstd -qdc "$p" >"$ir/lib/modules/$m.ko" ;;
		*) log "module $m: unexpected path $p"; rm -rf "$ir"; return 1 ;;
		esac
	done
	(cd "$ir" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$out"
	local rc=$?
	rm -rf "$ir"
	return $rc
}

# kvs_guest_boot DIR MEM_MB APPEND INITRAMFS [RAMFILE]: start the guest in
# the background (the kernel of setup.env, which the caller has sourced):
# DIR/serial.log, DIR/qmp.sock, DIR/qemu.log; with RAMFILE its RAM is that
# shared file.  Sets KVS_GUEST_PID.  kvs_guest_wait, kvs_guest_quit follow.
kvs_guest_boot() {
	local dir=$1 mem=$2 append=$3 initrd=$4 ram=${5:-} memobj=()
	rm -f "$dir/serial.log" "$dir/qmp.sock"
	if [ -n "$ram" ]; then
		rm -f "$ram"
		# shellcheck disable=SC2054  # commas are QEMU option syntax
		memobj=(-object "memory-backend-file,id=ram,size=${mem}M,mem-path=$ram,share=on"
			-machine pc,memory-backend=ram)
	fi
	qemu-system-x86_64 -accel tcg -m "${mem}M" -smp 2 -nographic -no-reboot \
		-kernel "$VMLINUZ" -initrd "$initrd" -append "console=ttyS0 quiet panic=-1 $append" \
		-device vmcoreinfo -serial "file:$dir/serial.log" -monitor none \
		-qmp "unix:$dir/qmp.sock,server=on,wait=off" "${memobj[@]}" \
		</dev/null >"$dir/qemu.log" 2>&1 &
	KVS_GUEST_PID=$!
	KVS_GUEST_DIR=$dir
}

# kvs_guest_wait MARKER TIMEOUT_S: 0 once a serial line starts with MARKER,
# 1 when QEMU exits or the time runs out first.
kvs_guest_wait() {
	local end=$(($(date +%s) + $2))
	while :; do
		grep -qa "^$1" "$KVS_GUEST_DIR/serial.log" 2>/dev/null && return 0
		kill -0 "$KVS_GUEST_PID" 2>/dev/null || return 1
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.5
	done
}

# kvs_guest_qmp COMMAND [JSON] [--timeout S]: one QMP command to the guest.
kvs_guest_qmp() { "$PY" "$KVS_LINUX_DIR/qmp.py" "$KVS_GUEST_DIR/qmp.sock" "$@"; }

# kvs_guest_quit: QMP quit, then kill what is left (its pid only).
kvs_guest_quit() {
	[ -n "${KVS_GUEST_PID:-}" ] || return 0
	kvs_guest_qmp quit >/dev/null 2>&1 || true
	for _ in $(seq 50); do kill -0 "$KVS_GUEST_PID" 2>/dev/null || break; sleep 0.1; done
	kill "$KVS_GUEST_PID" 2>/dev/null && sleep 0.5
	kill -9 "$KVS_GUEST_PID" 2>/dev/null
	wait "$KVS_GUEST_PID" 2>/dev/null
	KVS_GUEST_PID=
	return 0
}
