#!/bin/bash
# tests/linux/setup.sh: install what the Linux real-kernel captures and the
# peer oracles need, and provide the debug vmlinux for the installed kernel.
#
#   sudo tests/linux/setup.sh            # install what is missing, fetch vmlinux
#   tests/linux/setup.sh --print         # only print the paths (KVER=, VMLINUX=, ...)
#
# Env: KVS_LINUX_CACHE (default /var/cache/kvmstat-linux) holds everything
# large: the -dbg .deb and the extracted usr/lib/debug/boot/{vmlinux,System.map}-KVER.
# Writes $KVS_LINUX_CACHE/setup.env (shell assignments) on success.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PRINT_ONLY=0
[ "${1:-}" = --print ] && PRINT_ONLY=1

PKGS=(qemu-system-x86 linux-image-amd64 busybox-static cpio python3-drgn crash makedumpfile)

if [ $PRINT_ONLY = 0 ]; then
	[ "$(id -u)" = 0 ] || die "setup: must run as root (apt-get install)"
	mkdir -p "$KVS_LINUX_CACHE"
	missing=()
	for p in "${PKGS[@]}"; do
		st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
		[ "$st" = installed ] || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		t0=$(now)
		log "setup: apt-get update"
		apt-get update -qq || die "setup: apt-get update"
		log "setup: installing ${missing[*]}"
		# INITRD=No: the kernel's postinst hook skips update-initramfs (about
		# 40 s here); the captures bring their own initramfs.
		DEBIAN_FRONTEND=noninteractive INITRD=No \
			apt-get install -y -q --no-install-recommends "${missing[@]}" \
			>"$KVS_LINUX_CACHE/apt-install.log" 2>&1 ||
			{ tail -n 30 "$KVS_LINUX_CACHE/apt-install.log" >&2; die "setup: apt-get install ${missing[*]}"; }
		log "setup: install took $(elapsed "$t0") s"
	else
		log "setup: all packages present"
	fi
fi

KVER=$(kvs_kver) || die "setup: cannot tell which kernel linux-image-amd64 depends on"
kvs_paths "$KVER"

if [ $PRINT_ONLY = 0 ]; then
	[ -f "$VMLINUZ" ] || die "setup: $VMLINUZ missing (linux-image-$KVER not installed?)"
	[ -d "$MODDIR" ] || die "setup: $MODDIR missing"
	DBG=linux-image-$KVER-dbg
	if [ ! -s "$VMLINUX" ] || [ ! -s "$SYSTEM_MAP" ]; then
		t0=$(now)
		# The exact package name: a pattern would match every -dbg flavour
		# and version (12 GB).
		deb=$(ls "$KVS_LINUX_CACHE/${DBG}_"*_amd64.deb 2>/dev/null | head -n1 || true)
		if [ -z "$deb" ]; then
			log "setup: apt-get download $DBG (about 860 MB)"
			(cd "$KVS_LINUX_CACHE" && apt-get download "$DBG") ||
				die "setup: apt-get download $DBG"
			deb=$(ls "$KVS_LINUX_CACHE/${DBG}_"*_amd64.deb | head -n1)
		fi
		log "setup: extracting vmlinux and System.map from $(basename "$deb")"
		dpkg-deb --fsys-tarfile "$deb" |
			tar -x -C "$KVS_LINUX_CACHE" \
				"./usr/lib/debug/boot/vmlinux-$KVER" "./usr/lib/debug/boot/System.map-$KVER" ||
			die "setup: extracting vmlinux from $deb"
		log "setup: vmlinux ready in $(elapsed "$t0") s"
	fi
	# vmlinuz and vmlinux must be the same build.
	kz=$(bzimage_version "$VMLINUZ" | version_key)
	kx=$(vmlinux_banner "$VMLINUX" | version_key)
	[ -n "$kz" ] && [ "$kz" = "$kx" ] ||
		die "setup: version mismatch: vmlinuz '$kz' vs vmlinux '$kx'"
	cat >"$KVS_LINUX_CACHE/setup.env" <<EOF
KVER=$KVER
VMLINUZ=$VMLINUZ
VMLINUX=$VMLINUX
SYSTEM_MAP=$SYSTEM_MAP
KBUILD='$kz'
EOF
fi

echo "KVER=$KVER"
echo "VMLINUZ=$VMLINUZ"
echo "VMLINUX=$VMLINUX"
echo "SYSTEM_MAP=$SYSTEM_MAP"
