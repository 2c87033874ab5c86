#!/usr/bin/env bash
# quickstart.sh - set up, build, and show kvmstat on the bundled fixture dump.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
K="build/analyzers/kvmstat --demo"
echo "== kvmstat --demo info (the bundled FreeBSD 14 demo minidump)"
$K info
echo
echo "== kvmstat dmesg | tail"
$K dmesg | tail -n 5
if $K malloc >/dev/null 2>&1; then
  echo
  echo "== kvmstat --demo -m (vmstat -m from the dump)"
  $K -m | head -n 25
fi
