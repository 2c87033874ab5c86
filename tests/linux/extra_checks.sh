#!/usr/bin/env bash
# extra_checks.sh [KVMSTAT] - two more peers on realcore's captures of the
# host's kernel (run after realcore.sh, which makes them):
#   drgn_compat.py: one Python script under drgn and under kvmstat's object
#     layer (tasks, slab caches, modules, per-CPU runqueues, casts,
#     container_of, enumerators: several thousand member reads), equal
#     lines, on the ELF, kdump-zlib and makedumpfile -d 31 forms of the
#     nokaslr and KASLR captures (drgn reads the ELF with the kernel image
#     aliased);
#   kallsyms_check.py: the symbols kvmstat reads from each kdump form with no
#     kernel file, against System.map symbol by symbol, with VMCOREINFO
#     naming the kallsyms tables and with those names removed (found by
#     their shapes, as on kernels before 6.0);
#   soak.sh: kvmstat slab and kvmtop refreshed 1,000 times each on the RAM
#     file of a running guest that keeps allocating and freeing (its own
#     guest; its checks are added to the count).  SOAK=0 leaves it out.
# Ends with "linux-extra: N passed, M failed"; a missing capture fails.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$HERE/lib.sh"
K=${1:-$ROOT/build/analyzers/kvmstat}
B=$(cd "$(dirname "$K")/.." && pwd)
pass=0 fail=0
. "$KVS_LINUX_CACHE/setup.env" 2>/dev/null || { echo "linux-extra: 0 passed, 1 failed"; exit 1; }
export KVMSTAT_LIB=$B/libkvmstat/libkvmstat.so PYTHONPATH=$ROOT/python
KVMSTAT_SPEEDUPS=$(ls "$B"/python/_speedups*.so 2>/dev/null | head -1)
export KVMSTAT_SPEEDUPS
for cap in nokaslr kaslr; do
	C=$KVS_LINUX_CACHE/captures/$cap
	for f in vmcore.elf vmcore.kdump-zlib vmcore.mdf-d31; do
		if out=$("$PY" "$HERE/drgn_compat.py" "$C/$f" "alias:$C/vmcore.elf" "$VMLINUX" 2>&1); then
			pass=$((pass + 1)); log "ok: $cap $f: $(tail -1 <<<"$out")"
		else
			fail=$((fail + 1)); log "FAIL: $cap $f drgn_compat: $(head -12 <<<"$out")"
		fi
	done
	for f in vmcore.kdump-zlib vmcore.mdf-d31; do
		if out=$("$PY" "$HERE/kallsyms_check.py" "$C/$f" "$SYSTEM_MAP" 2>&1); then
			pass=$((pass + 1)); log "ok: $cap $f: $(tail -1 <<<"$out")"
		else
			fail=$((fail + 1)); log "FAIL: $cap $f kallsyms_check: $(tail -12 <<<"$out")"
		fi
	done
done
if [ "${SOAK:-1}" != 0 ]; then
	out=$(bash "$HERE/soak.sh" "$K" 2>&1)
	line=$(grep '^linux-soak: ' <<<"$out" | tail -1)
	if [[ $line =~ ^linux-soak:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		pass=$((pass + BASH_REMATCH[1])); fail=$((fail + BASH_REMATCH[2]))
		log "soak: $line"
		[ "${BASH_REMATCH[2]}" = 0 ] || log "soak: $(grep 'FAIL' <<<"$out" | head -5)"
	else
		fail=$((fail + 1)); log "FAIL: soak.sh gave no count: $(tail -5 <<<"$out")"
	fi
fi
echo "linux-extra: $pass passed, $fail failed"
exit $((fail > 0))
