#!/usr/bin/env bash
# setup.sh - install what is missing (Debian 12, as root or via sudo) and
# build kvmstat into ./build.  Sourced by quickstart.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(gcc python3 meson ninja-build pkg-config libelf-dev libdwarf-dev libbpf-dev zlib1g-dev
      libzstd-dev liblzo2-dev libsnappy-dev libjansson-dev check libncurses-dev gdb binutils tmux mandoc
      python3-jsonschema python3-pip mypy clang-14 libclang-rt-14-dev llvm-14 lld-14
      dwarves)  # pahole: check_cli regenerates the fixtures, linux-nodebug's BTF among them
# What a caller needs besides (bench/run: hyperfine).
PKGS+=(${KVS_EXTRA_PKGS:-})

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

BUILD=${BUILD:-build}
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" ${MESON_ARGS:-} >/dev/null
fi
ninja -C "$BUILD" >/dev/null
