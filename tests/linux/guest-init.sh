#!/bin/busybox sh
# shellcheck disable=SC2187,SC3045,SC2216,SC2034  # busybox ash: read -t exists; the piped sleeps are the point
# /init of the capture initramfs (tests/linux/capture.sh copies it in).
# Runs under busybox ash as PID 1 on the Debian kernel under QEMU.
# Serial protocol (ttyS0): "LC_STEP name uptime" lines, then
#   ===LC_CENSUS_1_BEGIN=== ... ===LC_CENSUS_1_END===  (first census read)
#   ===LC_CENSUS_2_BEGIN=== ... ===LC_CENSUS_2_END===  (second census read)
#   ===LC_SLABINFO_BEGIN=== /proc/slabinfo ===LC_SLABINFO_END===
#   ===LC_READY_FOR_DUMP===
#   (the host stops the guest, dumps, continues it and sends "again")
#   ===LC_SLABINFO_AFTER_BEGIN=== /proc/slabinfo ===LC_SLABINFO_AFTER_END===
#   ===LC_CENSUS_A_BEGIN=== ... ===LC_CENSUS_A_END===  (census read after the dump)
#   ===LC_AFTER_DONE===
# A census read prints /proc/{meminfo,buddyinfo,zoneinfo,vmstat,vmallocinfo},
# each between ===LC_FILE_<name>=== lines, with shell builtins only.
# From the first slabinfo print on nothing forks, so the dump sees the state
# between the two prints.
/bin/busybox mkdir -p /proc /sys /dev /tmp /bin /sbin /usr/bin /usr/sbin /gt
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
# Root sees real addresses in /proc/vmallocinfo (%pK): 0 would hash them,
# 2 would print zeros; 1 prints them to a reader with CAP_SYSLOG.
echo 1 > /proc/sys/kernel/kptr_restrict

step() { read -r up rest < /proc/uptime; echo "LC_STEP $1 $up"; }
err() { echo "LC_ERROR $*"; }
step init

LIVE=0; KCORE=0
for a in $(cat /proc/cmdline); do
	case "$a" in lc_live=1) LIVE=1 ;; lc_kcore=1) KCORE=1 ;; esac
done

# Module order matters: virtio_ring before virtio.
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk qemu_fw_cfg; do
	insmod /lib/modules/$m.ko || err "insmod $m"
done
n=0
while [ ! -b /dev/vda ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
[ -b /dev/vda ] || err "no /dev/vda"
[ -e /sys/firmware/qemu_fw_cfg ] || err "no qemu_fw_cfg"
step modules

# --- slab activity -------------------------------------------------------
mkdir -p /tmp/act
i=0
while [ $i -lt 3000 ]; do echo "kvmstat file $i" > /tmp/act/f$i; i=$((i + 1)); done
rm /tmp/act/f[0-9] /tmp/act/f[0-9][0-9] /tmp/act/f[0-9][0-9][0-9]   # f0..f999
dirs=""
i=0
while [ $i -lt 200 ]; do dirs="$dirs /tmp/act/d$i"; i=$((i + 1)); done
mkdir $dirs
i=0
while [ $i -lt 40 ]; do sleep 2147483 & i=$((i + 1)); done
i=0
while [ $i -lt 10 ]; do { sleep 2147483 | sleep 2147483; } & i=$((i + 1)); done
mkfifo /tmp/fifo
step activity

# --- ground truth onto /dev/vda as a raw tar stream ----------------------
cp /proc/slabinfo /gt/slabinfo
cat /proc/profile > /gt/profile
for f in meminfo vmstat buddyinfo iomem zoneinfo vmallocinfo modules cmdline version uptime; do
	cat /proc/$f > /gt/$f
done
ps > /gt/ps
grep -E ' (_text|_stext|_etext|_end|slab_caches|prof_buffer|prof_len|prof_shift|prof_on|jiffies_64|init_task|page_offset_base|vmemmap_base|vmalloc_base|init_top_pgt|phys_base|linux_banner|__start_BTF|__stop_BTF|vmcoreinfo_data|vmcoreinfo_note|kallsyms_names|kallsyms_num_syms|__per_cpu_offset|kmalloc_caches|totalram_pages|vm_node_stat|vm_zone_stat)$' \
	/proc/kallsyms > /gt/kallsyms.excerpt
cat /sys/kernel/vmcoreinfo > /gt/vmcoreinfo 2>/dev/null || err "no /sys/kernel/vmcoreinfo"
uname -a > /gt/uname
step gt-collected
tar -C / -cf /dev/vda gt || err "tar to /dev/vda"
sync
step gt-written

# Let the forks above retire (RCU frees) without forking again: read on an
# open-for-write fifo blocks until its timeout.
sleep 2147483 &
read -t 3 x <> /tmp/fifo
step settled

# --- kvmstat on /proc/kcore, between two reads of /proc/slabinfo ---------
show() {  # show NAME FILE: FILE between markers, builtins only
	echo "===LC_KCORE_$1_BEGIN==="
	while IFS= read -r l; do echo "$l"; done < "$2"
	echo "===LC_KCORE_$1_END==="
}
if [ $KCORE = 1 ]; then
	while IFS= read -r l; do echo "$l"; done < /proc/slabinfo > /tmp/kc.before
	/kvmstat/kvmstat -M /proc/kcore slab > /tmp/kc.slab 2> /tmp/kc.err
	echo $? > /tmp/kc.rc
	while IFS= read -r l; do echo "$l"; done < /proc/slabinfo > /tmp/kc.after
	/kvmstat/kvmstat -M /proc/kcore info >> /tmp/kc.info 2>> /tmp/kc.err
	step kcore
	show BEFORE /tmp/kc.before
	show SLAB /tmp/kc.slab
	show AFTER /tmp/kc.after
	show ERR /tmp/kc.err
	show RC /tmp/kc.rc
	show INFO /tmp/kc.info
fi

# --- the authoritative truth: last thing before READY, no fork -----------
census() {  # census TAG: the memory census files, builtins only, no fork
	echo "===LC_CENSUS_$1_BEGIN==="
	for f in meminfo buddyinfo zoneinfo vmstat vmallocinfo; do
		echo "===LC_FILE_$f==="
		while IFS= read -r l; do echo "$l"; done < /proc/$f
	done
	echo "===LC_CENSUS_$1_END==="
}
census 1
census 2
echo "===LC_SLABINFO_BEGIN==="
while IFS= read -r l; do echo "$l"; done < /proc/slabinfo
echo "===LC_SLABINFO_END==="
echo "===LC_READY_FOR_DUMP==="

# The host dumps while the guest is stopped, then lets it run again and
# sends "again" on the serial console (stdin): /proc/slabinfo is printed a
# second time, so the dump lies between two reads of it.
after() {
	echo "===LC_SLABINFO_AFTER_BEGIN==="
	while IFS= read -r l; do echo "$l"; done < /proc/slabinfo
	echo "===LC_SLABINFO_AFTER_END==="
	census A
	echo "===LC_AFTER_DONE==="
}
if [ $LIVE = 1 ]; then
	# A heartbeat the host can see move in the RAM file; builtins only.
	n=0
	while :; do
		n=$((n + 1))
		echo "LC_HEARTBEAT $n" > /tmp/heartbeat
		x=
		read -t 1 x
		case "$x" in again*) after ;; esac
	done
fi
while :; do
	x=
	read -t 3600 x
	case "$x" in again*) after ;; esac
done
