#!/bin/busybox sh
# shellcheck disable=SC2187,SC3045,SC2034  # busybox ash: read -t exists; x is read to wait
# /init of the load guests (tests/linux/soak.sh, bench/linux_busy.sh; lib.sh's
# kvs_guest_initramfs puts it in).  Runs under busybox ash as PID 1 on the
# cached Debian kernel.  The kernel command line says what to do:
#   lc_mode=busy lc_files=N   N empty files in tmpfs (a shell redirection
#       each: no fork), in directories of 1000, then /proc/slabinfo between
#       ===LC_SLABINFO_BEGIN=== and ===LC_SLABINFO_END=== (builtins only, the
#       last thing before) ===LC_READY_FOR_DUMP===, then idle: the host stops
#       the guest and dumps it.
#   lc_mode=soak   ===LC_READY=== then, forever, rounds of making and
#       removing files and directories, forking short-lived processes and
#       pipelines; "LC_ROUND n" on the console after each round, then a
#       pause of a second.
/bin/busybox mkdir -p /proc /sys /dev /tmp /bin /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# no inode limit: tmpfs's default (half the RAM's pages) is below lc_files
mount -t tmpfs -o size=90%,nr_inodes=0 tmpfs /tmp

# qemu_fw_cfg hands QEMU the kernel's VMCOREINFO for its dumps' note
# (drgn needs it), when the initramfs has it
[ -f /lib/modules/qemu_fw_cfg.ko ] && { insmod /lib/modules/qemu_fw_cfg.ko || echo "LC_ERROR insmod qemu_fw_cfg"; }

MODE=; FILES=500000
for a in $(cat /proc/cmdline); do
	case "$a" in lc_mode=*) MODE=${a#lc_mode=} ;; lc_files=*) FILES=${a#lc_files=} ;; esac
done

idle() { while :; do read -t 3600 x; done; }

if [ "$MODE" = busy ]; then
	mkfifo /tmp/fifo
	i=0
	while [ $i -lt "$FILES" ]; do
		d=/tmp/d$((i / 1000))
		[ $((i % 1000)) = 0 ] && mkdir $d
		: > $d/f$i || { echo "LC_ERROR file $i not made"; idle; }
		i=$((i + 1))
		[ $((i % 50000)) = 0 ] && echo "LC_FILES $i"
	done
	# settle: RCU-freed objects retire before the read (no fork here on)
	read -t 3 x <> /tmp/fifo
	echo "===LC_SLABINFO_BEGIN==="
	while IFS= read -r l; do echo "$l"; done < /proc/slabinfo
	echo "===LC_SLABINFO_END==="
	echo "===LC_READY_FOR_DUMP==="
	idle
fi

if [ "$MODE" = soak ]; then
	mkfifo /tmp/fifo
	echo "===LC_READY==="
	n=0
	while :; do
		n=$((n + 1))
		mkdir -p /tmp/s/$n
		i=0
		while [ $i -lt 300 ]; do echo "round $n file $i" > /tmp/s/$n/f$i; i=$((i + 1)); done
		# short-lived processes and pipes: task_struct, mm, files, pipes
		i=0
		while [ $i -lt 8 ]; do
			{ cat /tmp/s/$n/f$i | wc -c > /dev/null; } &
			i=$((i + 1))
		done
		wait
		# keep a few rounds, remove the older ones
		[ $n -gt 3 ] && rm -rf /tmp/s/$((n - 3))
		echo "LC_ROUND $n"
		# a pause between rounds (a read that times out: no fork), so that
		# the guest leaves the host's readers some of the shared CPUs
		read -t 1 x <> /tmp/fifo
	done
fi
echo "LC_ERROR unknown lc_mode '$MODE'"
idle
