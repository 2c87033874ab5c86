#!/bin/bash
# tests/linux/capture.sh: boot Debian's kernel under QEMU/TCG with a tiny
# initramfs, let it make slab activity and record its own ground truth, then
# stop it and take QEMU dumps in every format the peers read.
#
#   capture.sh OUTDIR [--kaslr] [--live] [--keep-running | --live-hook CMD]
#              [--timeout SEC] [--force]
#
#   --kaslr         boot without nokaslr (KASLR + randomized page_offset_base)
#   --live          guest RAM is a memory-backend-file (share=on) in /dev/shm;
#                   after the stop it is copied to OUTDIR/mem.ram (= the dumps)
#   --live-hook CMD (with --live) run CMD while the guest is running, after
#                   READY and before the stop. Env: KVS_LIVE_RAM (the RAM file,
#                   file offset = guest physical address), KVS_QMP (QMP socket),
#                   KVS_OUTDIR, KVS_VMLINUX, KVS_SERIAL. A failing hook fails the capture.
#   --keep-running  (with --live) print the RAM file and QMP socket, write
#                   OUTDIR/live.env, and wait (at most 1 h) until
#                   OUTDIR/live.continue exists; then stop and dump as usual.
#   --timeout SEC   per boot attempt, until READY (default 600; 25-65 s measured). A boot that
#                   misses it is killed and retried once.
#   --force         ignore a cached capture.
#   --kcore BIN     put the kvmstat binary BIN (with the shared libraries it
#                   needs) into the initramfs; the guest runs `BIN -M
#                   /proc/kcore slab` between two reads of /proc/slabinfo and
#                   prints all three (OUTDIR/kcore/); only vmcore.elf is
#                   dumped.  The capture is redone when BIN changes.
#
# Outputs in OUTDIR: vmcore.elf (paging=false), vmcore.elf-paging,
# vmcore.kdump-zlib.flat (QEMU's flattened output), vmcore.kdump-zlib (-R),
# vmcore.kdump-zlib.uts (header utsname filled), vmcore.mdf-d31 (makedumpfile
# -c -d 31, driven by the VMCOREINFO note like distro kdump; -x vmlinux gives
# byte-identical output 18x slower), vmcore.mdf-lzo (-l -d 31),
# vmcore.mdf-split.{1,2,3} (makedumpfile --split of the -d 31 dump, three
# parts), and where the tools can make them vmcore.mdf-zstd (-z), vmcore.mdf-snappy
# (-p), vmcore.kdump-lzo / vmcore.kdump-snappy (QEMU's, rebuilt with -R, utsname
# filled); not-made.txt names each of those the tools here cannot make, and why.
# [mem.ram], gt/ (guest ground truth), slabinfo.final (the guest's
# /proc/slabinfo printed just before the stop), slabinfo.after (printed
# again once the dumps are taken and the guest runs on: the dump lies between
# the two), census/{1,2,A}/{meminfo,buddyinfo,zoneinfo,vmstat,vmallocinfo}
# (the memory census read twice just before the stop, builtins only, and once
# after the dumps), serial.log, timings.txt, capture.stamp. Needs root only for mknod
# and nothing else; run tests/linux/setup.sh first.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SCRIPT_VERSION=6

OUTDIR=; KASLR=0; LIVE=0; KEEP=0; HOOK=; TIMEOUT=600; FORCE=0; KCORE_BIN=
while [ $# -gt 0 ]; do
	case "$1" in
	--kaslr) KASLR=1 ;;
	--live) LIVE=1 ;;
	--keep-running) KEEP=1 ;;
	--live-hook) HOOK=$2; shift ;;
	--timeout) TIMEOUT=$2; shift ;;
	--force) FORCE=1 ;;
	--kcore) KCORE_BIN=$2; shift ;;
	-h|--help) sed -n '2,32p' "$0"; exit 0 ;;
	-*) die "capture: unknown option $1" ;;
	*) [ -z "$OUTDIR" ] || die "capture: one OUTDIR only"; OUTDIR=$1 ;;
	esac
	shift
done
[ -n "$OUTDIR" ] || die "usage: capture.sh OUTDIR [--kaslr] [--live] [--keep-running|--live-hook CMD] [--timeout SEC] [--force]"
{ [ $KEEP = 1 ] || [ -n "$HOOK" ]; } && [ $LIVE = 0 ] && die "capture: --keep-running/--live-hook need --live"

STEP=setup
SERIAL=
QEMU_PID=
CAT_PID=
WORK=
SHM_RAM=
# serial output without terminal escapes and CRs
clean_tail() { tail -n "$1" "$2" 2>/dev/null | sed -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\r//g'; }
fail() {
	printf '[%s] FAILED at step "%s": %s\n' "$(date +%H:%M:%S)" "$STEP" "$*" >&2
	if [ -n "$SERIAL" ] && [ -s "$SERIAL" ]; then
		echo "---- serial log tail ($SERIAL) ----" >&2
		clean_tail 40 "$SERIAL" >&2
		echo "----" >&2
	fi
	exit 1
}
cleanup() {
	if [ -n "$QEMU_PID" ] && kill -0 "$QEMU_PID" 2>/dev/null; then
		kill "$QEMU_PID" 2>/dev/null || true
		sleep 0.5
		kill -9 "$QEMU_PID" 2>/dev/null || true
	fi
	[ -n "$CAT_PID" ] && kill "$CAT_PID" 2>/dev/null
	[ -n "$SHM_RAM" ] && rm -f "$SHM_RAM"
	[ -n "$WORK" ] && rm -rf "$WORK"
	return 0
}
trap cleanup EXIT
trap 'fail "interrupted"' INT TERM

# --- kernel and debug info ------------------------------------------------
[ -f "$KVS_LINUX_CACHE/setup.env" ] || fail "no $KVS_LINUX_CACHE/setup.env: run tests/linux/setup.sh first"
KVER=; VMLINUZ=; VMLINUX=; KBUILD=
. "$KVS_LINUX_CACHE/setup.env"
cur=$(kvs_kver) || fail "cannot tell the installed kernel"
[ "$cur" = "$KVER" ] || fail "setup.env is for $KVER but linux-image-amd64 now wants $cur: rerun setup.sh"
kvs_paths "$KVER"
for f in "$VMLINUZ" "$VMLINUX" "$SYSTEM_MAP"; do [ -s "$f" ] || fail "$f missing: run setup.sh"; done
for t in qemu-system-x86_64 makedumpfile busybox cpio gzip python3; do
	command -v $t >/dev/null || [ -x /bin/$t ] || fail "$t not installed: run setup.sh"
done
BUSYBOX=$(command -v busybox || echo /bin/busybox)
file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' || [ ! -x /usr/bin/file ] ||
	fail "$BUSYBOX is not static (install busybox-static)"

mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
STAMP="$OUTDIR/capture.stamp"
stamp_text() {
	printf 'script_version=%s\nkbuild=%s\nkaslr=%s\nlive=%s\n' "$SCRIPT_VERSION" "$KBUILD" "$KASLR" "$LIVE"
	[ -z "$KCORE_BIN" ] || printf 'kcore=%s\n' "$(sha256sum <"$KCORE_BIN" | cut -c1-64)"
}
OUTPUTS=(vmcore.elf vmcore.elf-paging vmcore.kdump-zlib.flat vmcore.kdump-zlib vmcore.kdump-zlib.uts
	vmcore.mdf-d31 vmcore.mdf-lzo vmcore.mdf-split.1 vmcore.mdf-split.2 vmcore.mdf-split.3
	slabinfo.final slabinfo.after serial.log timings.txt gt/slabinfo gt/vmcoreinfo not-made.txt
	gt/vmallocinfo census/1/meminfo census/2/meminfo census/A/meminfo census/2/vmallocinfo census/A/zoneinfo)
[ $LIVE = 1 ] && OUTPUTS+=(mem.ram)
if [ -n "$KCORE_BIN" ]; then
	[ -x "$KCORE_BIN" ] || die "capture: --kcore $KCORE_BIN is not an executable"
	KCORE_BIN=$(cd "$(dirname "$KCORE_BIN")" && pwd)/$(basename "$KCORE_BIN")
	OUTPUTS=(vmcore.elf slabinfo.final slabinfo.after serial.log timings.txt gt/slabinfo gt/vmcoreinfo
		kcore/slab kcore/before kcore/after kcore/rc census/2/meminfo census/A/meminfo)
fi

if [ $FORCE = 0 ] && [ -f "$STAMP" ] && [ "$(head -n 5 "$STAMP")" = "$(stamp_text)" ]; then
	ok=1
	for f in "${OUTPUTS[@]}"; do [ -s "$OUTDIR/$f" ] || ok=0; done
	if [ $ok = 1 ]; then
		log "capture: reusing $OUTDIR (same kernel build and script version $SCRIPT_VERSION)"
		exit 0
	fi
fi
rm -f "$STAMP"

TIMINGS="$OUTDIR/timings.txt"
: >"$TIMINGS"
timing() { printf '%-28s %8s s\n' "$1" "$2" >>"$TIMINGS"; log "capture: $1 took $2 s"; }
T_ALL=$(now)
WORK=$(mktemp -d /tmp/kvs-capture.XXXXXX)

# --- initramfs ------------------------------------------------------------
STEP=initramfs
t0=$(now)
IR=$WORK/initramfs
mkdir -p "$IR"/{bin,dev,proc,sys,tmp,lib/modules}
cp "$BUSYBOX" "$IR/bin/busybox"
ln -s busybox "$IR/bin/sh"
cp "$KVS_LINUX_DIR/guest-init.sh" "$IR/init"
chmod 755 "$IR/init"
mknod -m 600 "$IR/dev/console" c 5 1 2>/dev/null || true   # the kernel's builtin cpio has one too
MODULES=(virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk qemu_fw_cfg)
for m in "${MODULES[@]}"; do
	p=$(modinfo -k "$KVER" -n "$m" 2>/dev/null) || fail "module $m not found for $KVER"
	case "$p" in
	*.ko) cp "$p" "$IR/lib/modules/$m.ko" ;;
	*.ko.xz) xz -dc "$p" >"$IR/lib/modules/$m.ko" ;;
	*.ko.zst) zstd -qdc "$p" >"$IR/lib/modules/$m.ko" ;;
	*) fail "module $m: unexpected path $p" ;;
	esac
done
if [ -n "$KCORE_BIN" ]; then
	# kvmstat and what ld.so needs for it, at the paths it looks in.
	mkdir -p "$IR/kvmstat"
	cp "$KCORE_BIN" "$IR/kvmstat/kvmstat"
	for lib in $(ldd "$KCORE_BIN" | awk '/=> \//{print $3} /^\t\/lib/{print $1}'); do
		mkdir -p "$IR$(dirname "$lib")"
		cp -L "$lib" "$IR$lib"
	done
fi
(cd "$IR" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -9) >"$OUTDIR/initramfs.cpio.gz" ||
	fail "building the initramfs"
timing initramfs "$(elapsed "$t0")"

# --- boot -----------------------------------------------------------------
QMP=$WORK/qmp.sock
SER=$WORK/serial
SERIAL=$OUTDIR/serial.log
APPEND="console=ttyS0 profile=2 quiet panic=-1"
[ $KASLR = 0 ] && APPEND="$APPEND nokaslr"
[ $LIVE = 1 ] && APPEND="$APPEND lc_live=1"
[ -n "$KCORE_BIN" ] && APPEND="$APPEND lc_kcore=1"
qmp() { "$PY" "$KVS_LINUX_DIR/qmp.py" "$QMP" "$@"; }

boot() {  # boot ATTEMPT -> 0 when READY, 1 otherwise (QEMU then killed)
	local attempt=$1 t0 ready=0
	rm -f "$OUTDIR/gt.img" "$SERIAL" "$QMP" "$SER.in" "$SER.out"
	truncate -s 64M "$OUTDIR/gt.img"
	# The serial port is a pipe pair: the guest's output is copied into
	# serial.log, and its console input is how the host asks for the
	# second /proc/slabinfo read after the dumps.
	mkfifo "$SER.in" "$SER.out" || fail "mkfifo $SER.in $SER.out"
	cat "$SER.out" >"$SERIAL" &
	CAT_PID=$!
	local mem=()
	if [ $LIVE = 1 ]; then
		SHM_RAM=/dev/shm/kvs-live-$$.ram
		rm -f "$SHM_RAM"
		# shellcheck disable=SC2054  # commas are QEMU option syntax
		mem=(-object "memory-backend-file,id=mem,size=512M,mem-path=$SHM_RAM,share=on"
			-machine pc,memory-backend=mem)
	fi
	t0=$(now)
	qemu-system-x86_64 -accel tcg -m 512M -smp 2 -nographic -no-reboot \
		-kernel "$VMLINUZ" -initrd "$OUTDIR/initramfs.cpio.gz" -append "$APPEND" \
		-device vmcoreinfo -drive "file=$OUTDIR/gt.img,format=raw,if=virtio" \
		-chardev "pipe,id=ser0,path=$SER" -serial chardev:ser0 -monitor none -qmp "unix:$QMP,server=on,wait=off" \
		"${mem[@]}" </dev/null >"$OUTDIR/qemu.log" 2>&1 &
	QEMU_PID=$!
	local deadline
	deadline=$(awk -v t="$t0" -v d="$TIMEOUT" 'BEGIN{printf "%d", t+d}')
	while :; do
		if [ -f "$SERIAL" ] && grep -q '^===LC_READY_FOR_DUMP===' "$SERIAL"; then ready=1; break; fi
		kill -0 "$QEMU_PID" 2>/dev/null || break
		[ "$(date +%s)" -lt "$deadline" ] || break
		sleep 0.2
	done
	if [ $ready = 1 ]; then
		timing "boot+guest (attempt $attempt)" "$(elapsed "$t0")"
		return 0
	fi
	if kill -0 "$QEMU_PID" 2>/dev/null; then
		log "capture: attempt $attempt: no READY within $TIMEOUT s, killing QEMU"
		kill "$QEMU_PID"; sleep 1; kill -9 "$QEMU_PID" 2>/dev/null || true
	else
		log "capture: attempt $attempt: QEMU exited before READY: $(tail -n 5 "$OUTDIR/qemu.log" | tr '\n' ' ')"
	fi
	wait "$QEMU_PID" 2>/dev/null || true
	QEMU_PID=
	kill "$CAT_PID" 2>/dev/null; wait "$CAT_PID" 2>/dev/null; CAT_PID=
	echo "---- serial log tail, attempt $attempt ----" >&2
	clean_tail 25 "$SERIAL" >&2 || true
	cp "$SERIAL" "$OUTDIR/serial.attempt$attempt.log" 2>/dev/null || true
	timing "boot failed (attempt $attempt)" "$(elapsed "$t0")"
	return 1
}

STEP=boot
boot 1 || boot 2 || fail "no READY marker in two boots (timeout $TIMEOUT s each)"
grep -a '^LC_ERROR' "$SERIAL" | tr -d '\r' >&2 && fail "the guest reported errors (above)"
grep -a '^LC_STEP' "$SERIAL" | tr -d '\r' | awk '{printf "guest %-20s %8s s uptime\n", $2, $3}' >>"$TIMINGS"

# --- live phase -----------------------------------------------------------
if [ $LIVE = 1 ]; then
	STEP=live
	cat >"$OUTDIR/live.env" <<EOF
KVS_LIVE_RAM=$SHM_RAM
KVS_QMP=$QMP
KVS_OUTDIR=$OUTDIR
KVS_VMLINUX=$VMLINUX
KVS_SERIAL=$SERIAL
EOF
	if [ -n "$HOOK" ]; then
		t0=$(now)
		log "capture: live hook: $HOOK"
		(set -a; . "$OUTDIR/live.env"; set +a; bash -c "$HOOK") || fail "live hook failed: $HOOK"
		timing "live hook" "$(elapsed "$t0")"
	fi
	if [ $KEEP = 1 ]; then
		rm -f "$OUTDIR/live.continue"
		cat >&2 <<EOF
[$(date +%H:%M:%S)] capture: the guest is running.
    RAM file (offset = guest phys): $SHM_RAM
    QMP socket:                     $QMP
    env for checks:                 $OUTDIR/live.env  (set -a; . live.env)
  When done:  touch $OUTDIR/live.continue   (the capture then stops and dumps)
EOF
		end=$(($(date +%s) + 3600))
		while [ ! -e "$OUTDIR/live.continue" ]; do
			kill -0 "$QEMU_PID" 2>/dev/null || fail "QEMU died while kept running"
			[ "$(date +%s)" -lt "$end" ] || fail "--keep-running: no live.continue within 1 h"
			sleep 1
		done
		rm -f "$OUTDIR/live.continue"
	fi
fi

# --- stop and dump --------------------------------------------------------
STEP="qmp query-dump-guest-memory-capability"
QEMU_FORMATS=$(qmp query-dump-guest-memory-capability) || fail "QMP query-dump-guest-memory-capability"
STEP="qmp stop"
t0=$(now)
qmp stop >/dev/null || fail "QMP stop"
timing "qmp stop" "$(elapsed "$t0")"
rm -f "$OUTDIR"/vmcore.* "$OUTDIR/mem.ram"
if [ $LIVE = 1 ]; then
	STEP="copy RAM file"
	t0=$(now)
	cp "$SHM_RAM" "$OUTDIR/mem.ram" || fail "copying $SHM_RAM"
	timing "copy mem.ram" "$(elapsed "$t0")"
fi
dump() {  # dump NAME JSON-ARGS
	STEP="dump-guest-memory $1"
	local t0
	t0=$(now)
	qmp dump-guest-memory "$2" --timeout 600 >/dev/null || fail "QMP dump-guest-memory $2"
	[ -s "$OUTDIR/$1" ] || fail "$OUTDIR/$1 missing after dump-guest-memory"
	timing "dump $1" "$(elapsed "$t0")"
}
dump vmcore.elf '{"paging": false, "protocol": "file:'"$OUTDIR"'/vmcore.elf"}'
if [ -z "$KCORE_BIN" ]; then
dump vmcore.elf-paging '{"paging": true, "protocol": "file:'"$OUTDIR"'/vmcore.elf-paging"}'
dump vmcore.kdump-zlib.flat '{"paging": false, "format": "kdump-zlib", "protocol": "file:'"$OUTDIR"'/vmcore.kdump-zlib.flat"}'
for c in lzo snappy; do
	case "$QEMU_FORMATS" in
	*'"kdump-'$c'"'*) dump "vmcore.kdump-$c.flat" '{"paging": false, "format": "kdump-'$c'", "protocol": "file:'"$OUTDIR"'/vmcore.kdump-'$c'.flat"}' ;;
	esac
done
fi
# The guest runs on and reads /proc/slabinfo again: the dumps lie between
# its two reads.
STEP="second /proc/slabinfo read"
t0=$(now)
qmp cont >/dev/null || fail "QMP cont"
printf 'again\n' >"$SER.in" || fail "writing to the guest's console"
end=$(($(date +%s) + 300))
until grep -q '^===LC_AFTER_DONE===' "$SERIAL"; do
	kill -0 "$QEMU_PID" 2>/dev/null || fail "QEMU exited before the second slabinfo read"
	[ "$(date +%s)" -lt "$end" ] || fail "no second slabinfo read within 300 s"
	sleep 0.2
done
timing "cont + second slabinfo" "$(elapsed "$t0")"
STEP="qmp quit"
qmp quit >/dev/null || true
for _ in $(seq 50); do kill -0 "$QEMU_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$QEMU_PID" 2>/dev/null && { kill "$QEMU_PID"; sleep 0.5; }
wait "$QEMU_PID" 2>/dev/null || true
QEMU_PID=
wait "$CAT_PID" 2>/dev/null || true
CAT_PID=
[ -n "$SHM_RAM" ] && rm -f "$SHM_RAM"

# --- ground truth -----------------------------------------------------------
STEP="ground truth"
rm -rf "$OUTDIR/gt"
tar -C "$OUTDIR" -xf "$OUTDIR/gt.img" || fail "extracting gt.img"
"$PY" "$KVS_LINUX_DIR/dumptools.py" serial-section "$SERIAL" \
	===LC_SLABINFO_BEGIN=== ===LC_SLABINFO_END=== "$OUTDIR/slabinfo.final" || fail "slabinfo.final"
head -n 1 "$OUTDIR/slabinfo.final" | grep -q '^slabinfo - version' || fail "slabinfo.final is garbled"
"$PY" "$KVS_LINUX_DIR/dumptools.py" serial-section "$SERIAL" \
	===LC_SLABINFO_AFTER_BEGIN=== ===LC_SLABINFO_AFTER_END=== "$OUTDIR/slabinfo.after" || fail "slabinfo.after"
head -n 1 "$OUTDIR/slabinfo.after" | grep -q '^slabinfo - version' || fail "slabinfo.after is garbled"
# The memory census read twice just before the dump and once after it.
rm -rf "$OUTDIR/census"
"$PY" "$KVS_LINUX_DIR/dumptools.py" census "$SERIAL" "$OUTDIR" || fail "census reads"
grep -q '^MemTotal:' "$OUTDIR/census/2/meminfo" || fail "census/2/meminfo is garbled"
grep -q '^0x' "$OUTDIR/census/2/vmallocinfo" || fail "census/2/vmallocinfo is garbled"
grep -q '^0x0000000000000000' "$OUTDIR/census/2/vmallocinfo" && fail "vmallocinfo addresses are hidden (kptr_restrict)"
if [ -n "$KCORE_BIN" ]; then
	STEP="kcore outputs"
	mkdir -p "$OUTDIR/kcore"
	for part in before slab after err rc info; do
		"$PY" "$KVS_LINUX_DIR/dumptools.py" serial-section "$SERIAL" "===LC_KCORE_${part^^}_BEGIN===" \
			"===LC_KCORE_${part^^}_END===" "$OUTDIR/kcore/$part" || fail "kcore $part missing from serial.log"
	done
	chmod a+r "$OUTDIR"/vmcore.* 2>/dev/null || true
	(cd "$OUTDIR" && ls -l "${OUTPUTS[@]}" >"$OUTDIR/files.txt")
	stamp_text >"$STAMP"
	log "capture: done (kcore): $OUTDIR"
	exit 0
fi

# --- post-processing --------------------------------------------------------
STEP="makedumpfile -R"
t0=$(now)
makedumpfile -R "$OUTDIR/vmcore.kdump-zlib" <"$OUTDIR/vmcore.kdump-zlib.flat" >"$WORK/R.log" 2>&1 ||
	{ cat "$WORK/R.log" >&2; fail "makedumpfile -R"; }
timing "makedumpfile -R" "$(elapsed "$t0")"

STEP="fill utsname"
UTS_VERSION=${KBUILD#* }          # "#1 SMP PREEMPT_DYNAMIC Debian ..."
"$PY" "$KVS_LINUX_DIR/dumptools.py" fill-uts "$OUTDIR/vmcore.kdump-zlib" "$OUTDIR/vmcore.kdump-zlib.uts" \
	"$KVER" "$UTS_VERSION" || fail "filling the kdump header utsname"

STEP="move phdrs"
t0=$(now)
"$PY" "$KVS_LINUX_DIR/dumptools.py" move-phdrs "$OUTDIR/vmcore.elf" "$WORK/vmcore.elf-phdr64" ||
	fail "moving the program headers"
timing "move phdrs" "$(elapsed "$t0")"
mdf() {  # mdf NAME FLAGS...
	local name=$1; shift
	STEP="makedumpfile $* -> $name"
	local t0
	t0=$(now)
	makedumpfile "$@" "$WORK/vmcore.elf-phdr64" "$OUTDIR/$name" >"$WORK/mdf.log" 2>&1 ||
		{ tail -n 20 "$WORK/mdf.log" >&2; fail "makedumpfile $*"; }
	grep -v -e '^$' -e 'Copying data' -e 'Excluding' -e 'Checking for memory holes' "$WORK/mdf.log" \
		>"$OUTDIR/$name.log" || true
	timing "makedumpfile $* ($name)" "$(elapsed "$t0")"
}
mdf vmcore.mdf-d31 -c -d 31
mdf vmcore.mdf-lzo -l -d 31
# Forms the tools here may not make: each one made, or named with the reason
# in not-made.txt (the summary of realcore.sh prints it).
printf '# form\twhy the tools here cannot make it\n' >"$OUTDIR/not-made.txt"
MDF_VERSION=$(makedumpfile -v 2>&1 | sed -n 's/^makedumpfile: version \([^ ]*\).*/\1/p')
for c in zstd:-z snappy:-p; do
	name=${c%%:*}
	if makedumpfile -v 2>&1 | grep -q "^${name}[[:space:]]*enabled"; then
		mdf "vmcore.mdf-$name" "${c#*:}" -d 31
		OUTPUTS+=("vmcore.mdf-$name")
	else
		printf 'vmcore.mdf-%s\tmakedumpfile %s is built without %s (makedumpfile -v: %s)\n' "$name" \
			"$MDF_VERSION" "$name" "$(makedumpfile -v 2>&1 | grep "^${name}" | tr -s ' \t' ' ')" \
			>>"$OUTDIR/not-made.txt"
	fi
done
QEMU_VERSION=$(qemu-system-x86_64 --version | sed -n '1s/^QEMU emulator version \([^ ]*\).*/\1/p')
for c in lzo snappy; do
	if [ -s "$OUTDIR/vmcore.kdump-$c.flat" ]; then
		STEP="makedumpfile -R (kdump-$c)"
		makedumpfile -R "$WORK/kdump-$c" <"$OUTDIR/vmcore.kdump-$c.flat" >"$WORK/R.log" 2>&1 ||
			{ cat "$WORK/R.log" >&2; fail "makedumpfile -R (kdump-$c)"; }
		"$PY" "$KVS_LINUX_DIR/dumptools.py" fill-uts "$WORK/kdump-$c" "$OUTDIR/vmcore.kdump-$c" \
			"$KVER" "$UTS_VERSION" || fail "filling the kdump-$c header utsname"
		rm -f "$WORK/kdump-$c" "$OUTDIR/vmcore.kdump-$c.flat"
		OUTPUTS+=("vmcore.kdump-$c")
	else
		printf 'vmcore.kdump-%s\tQEMU %s dump-guest-memory offers no kdump-%s (query-dump-guest-memory-capability: %s)\n' \
			"$c" "$QEMU_VERSION" "$c" "$QEMU_FORMATS" >>"$OUTDIR/not-made.txt"
	fi
done
rm -f "$WORK/vmcore.elf-phdr64"
# A split dump (makedumpfile --split, three parts of about the same size)
# of the -d 31 dump, read as the three files together.
STEP="makedumpfile --split"
t0=$(now)
makedumpfile --split --splitblock-size 1024 -c -d 31 "$OUTDIR/vmcore.mdf-d31" \
	"$OUTDIR/vmcore.mdf-split.1" "$OUTDIR/vmcore.mdf-split.2" "$OUTDIR/vmcore.mdf-split.3" \
	>"$WORK/split.log" 2>&1 || { tail -n 20 "$WORK/split.log" >&2; fail "makedumpfile --split"; }
timing "makedumpfile --split" "$(elapsed "$t0")"

STEP=finish
timing total "$(elapsed "$T_ALL")"
for f in "${OUTPUTS[@]}"; do [ -s "$OUTDIR/$f" ] || fail "$f missing at the end"; done
chmod a+r "$OUTDIR"/vmcore.* "$OUTDIR"/mem.ram 2>/dev/null || true   # QEMU writes 0400
(cd "$OUTDIR" && ls -l "${OUTPUTS[@]}" >"$OUTDIR/files.txt")
stamp_text >"$STAMP"
log "capture: done: $OUTDIR"
