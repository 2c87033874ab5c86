#!/bin/bash
# tests/linux/run_oracles.sh CAPDIR [VMLINUX]
#
# Runs both peer oracles on every dump of a capture made by capture.sh and
# compares them (compare.py). Writes CAPDIR/oracles/:
#   drgn.<dump>.json   oracle_drgn.py output, for each dump drgn 0.0.22 reads
#   crash.<dump>.tsv   oracle_crash.sh output, for every dump
#   <tool>.<dump>.err  stderr of runs that failed (expected: drgn on the
#                      phys-only ELF, the flattened and the utsname-less kdump)
#   matrix.txt         which tool read which file, with wall times
#   compare.txt, summary.json   compare.py's report
# Exit status: compare.py's (1 if the oracles disagree with each other).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
CAP=${1:?usage: run_oracles.sh CAPDIR [VMLINUX]}
if [ -n "${2:-}" ]; then VMLINUX=$2; else
	[ -f "$KVS_LINUX_CACHE/setup.env" ] || die "run_oracles: no setup.env: run setup.sh"
	. "$KVS_LINUX_CACHE/setup.env"
fi
[ -f "$CAP/capture.stamp" ] || die "run_oracles: $CAP is not a complete capture"
O=$CAP/oracles
rm -rf "$O"; mkdir -p "$O"
M=$O/matrix.txt
printf '%-24s %-6s %-5s %8s  %s\n' file tool ok seconds note >"$M"

# drgn expectations (drgn 0.0.22 + libkdumpfile 0.5.1): + reads, - fails.
drgn_expect() {
	case "$1" in
	vmcore.elf-paging|vmcore.kdump-zlib.uts|vmcore.mdf-*|mem.ram) echo + ;;
	*) echo - ;;
	esac
}
DUMPS=(vmcore.elf vmcore.elf-paging vmcore.kdump-zlib.flat vmcore.kdump-zlib vmcore.kdump-zlib.uts)
for f in "$CAP"/vmcore.mdf-*; do case "$f" in *.log) ;; *) DUMPS+=("$(basename "$f")") ;; esac; done
[ -s "$CAP/mem.ram" ] && DUMPS+=(mem.ram)
unexpected=0
for f in "${DUMPS[@]}"; do
	[ -s "$CAP/$f" ] || continue
	# drgn
	t0=$(now)
	if /usr/bin/python3 "$KVS_LINUX_DIR/oracle_drgn.py" "$CAP/$f" "$VMLINUX" >"$O/drgn.$f.json" 2>"$O/drgn.$f.err"; then
		ok=+; rm -f "$O/drgn.$f.err"; note=
	else
		ok=-; rm -f "$O/drgn.$f.json"; note=$(grep -v '^ ' "$O/drgn.$f.err" | tail -n 1 | cut -c1-100)
	fi
	exp=$(drgn_expect "$f")
	[ "$ok" = "$exp" ] || { note="UNEXPECTED (expected $exp) $note"; unexpected=1; }
	printf '%-24s %-6s %-5s %8s  %s\n' "$f" drgn "$ok" "$(elapsed "$t0")" "$note" >>"$M"
	# crash
	t0=$(now)
	if "$KVS_LINUX_DIR/oracle_crash.sh" "$CAP/$f" "$VMLINUX" >"$O/crash.$f.tsv" 2>"$O/crash.$f.err"; then
		ok=+; note=$(head -c 100 "$O/crash.$f.err" | tr '\n' ' '); [ -s "$O/crash.$f.err" ] || rm -f "$O/crash.$f.err"
	else
		ok=-; rm -f "$O/crash.$f.tsv"; note=$(grep -v '^ *$' "$O/crash.$f.err" | tail -n 1 | cut -c1-100)
		note="UNEXPECTED $note"; unexpected=1
	fi
	printf '%-24s %-6s %-5s %8s  %s\n' "$f" crash "$ok" "$(elapsed "$t0")" "$note" >>"$M"
done
cat "$M"
echo
if [ -s "$CAP/mem.ram" ]; then
	printf 'mem.ram vs vmcore.elf RAM segments: '
	"$PY" "$KVS_LINUX_DIR/dumptools.py" ram-vs-elf "$CAP/mem.ram" "$CAP/vmcore.elf" | tee "$O/ram_vs_elf.json" ||
		{ echo "run_oracles: mem.ram differs from vmcore.elf" >&2; unexpected=1; }
	echo
fi
rc=0
"$PY" "$KVS_LINUX_DIR/compare.py" "$CAP" --json "$O/summary.json" | tee "$O/compare.txt" || rc=$?
[ $unexpected = 0 ] || { echo "run_oracles: a tool did better or worse than expected on some file (matrix above)" >&2; [ $rc != 0 ] || rc=2; }
exit $rc
