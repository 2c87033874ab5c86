#!/bin/bash
# tests/linux/run_oracles.sh CAPDIR [VMLINUX]
#
# Runs both peer oracles on every dump form of a capture made by capture.sh
# (lib.sh: capture_forms) and compares them (compare.py). Writes CAPDIR/oracles/:
#   drgn.<form>.json   oracle_drgn.py output, for each form drgn 0.0.22 reads;
#                      the phys-only ELF (vmcore.elf) with --image-alias
#   crash.<form>.tsv   oracle_crash.sh output (kmem -s), for each form crash reads
#   crash.<form>.raw   crash's own kmem -s output on that form
#   crash.kmem.raw, crash.log.raw   crash's kmem -s and log on vmcore.elf
#   census.drgn.json   oracle_census.py on vmcore.elf-paging (zones, meminfo
#                      counters, vmalloc areas, the whatis sample + drgn's answers)
#   whatis.addrs       the sample's addresses, one a line
#   crash.census.raw, crash.whatis/N   oracle_crash_census.sh on vmcore.elf
#   <tool>.<form>.err  stderr of runs that failed
#   readers.tsv        form, tool, result (+ read, - could not, skip), seconds,
#                      how it was read, and the error of a failed read
#   matrix.txt         the same as a table, with wall times
#   compare.txt, summary.json   compare.py's report
#   hash               lib.sh oracle_hash: scripts, tool versions, capture;
#                      written last, only when everything above succeeded
# KVS_SKIP_ORACLES="drgn crash" opts a tool out (named as skipped in
# readers.tsv); a tool that is missing without that fails the run.
# Exit status: 1 if the oracles disagree with each other (compare.py), 2 if
# a tool reads a form it should not, fails one it should read, or is missing.
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
M=$O/matrix.txt R=$O/readers.tsv
printf '%-24s %-6s %-5s %8s  %s\n' form tool ok seconds note >"$M"
printf 'form\ttool\tok\tseconds\thow\tnote\n' >"$R"
oracle_versions >"$O/versions.txt"

# What each tool is expected to read (drgn 0.0.22 + libkdumpfile 0.5.1,
# crash 8.0.2): + reads, - cannot.  drgn cannot read QEMU's flattened
# stream (not an ELF core file), a kdump header with an empty utsname
# (libkdumpfile: no architecture) nor a split dump (one file only: pages in
# the other parts are "excluded"); it reads the phys-only ELF given the
# kernel image's virtual alias (--image-alias).  crash reads every form.
drgn_expect() {
	case "$1" in
	vmcore.kdump-zlib.flat|vmcore.kdump-zlib|vmcore.mdf-split) echo - ;;
	*) echo + ;;
	esac
}
skipped() { case " ${KVS_SKIP_ORACLES:-} " in *" $1 "*) return 0 ;; esac; return 1; }
unexpected=0
row() {  # row FORM TOOL OK SECONDS HOW NOTE
	printf '%-24s %-6s %-5s %8s  %s\n' "$1" "$2" "$3" "$4" "${5:+[$5] }$6" >>"$M"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" >>"$R"
}
lasterr() { grep -v -e '^ ' -e '^ *$' "$1" | tail -n 1 | cut -c1-160 | tr '\t' ' '; }
for tool in drgn crash; do
	if ! skipped $tool; then
		case $tool in
		drgn) "$PY" -c 'import drgn' 2>/dev/null || { echo "run_oracles: drgn (python3-drgn) is missing; KVS_SKIP_ORACLES=drgn opts out" >&2; unexpected=1; } ;;
		crash) command -v crash >/dev/null || { echo "run_oracles: crash is missing; KVS_SKIP_ORACLES=crash opts out" >&2; unexpected=1; } ;;
		esac
	fi
done
[ $unexpected = 0 ] || exit 2
mapfile -t FORMS < <(capture_forms "$CAP")
for f in "${FORMS[@]}"; do
	path=$(form_path "$CAP" "$f")
	# drgn (one file: a split dump's first part)
	if skipped drgn; then
		row "$f" drgn skip 0 "" "KVS_SKIP_ORACLES"
	else
		t0=$(now); how=drgn; note=
		[ "$f" = mem.ram ] && how="drgn+ram"   # a stub core + the RAM as segments
		if "$PY" "$KVS_LINUX_DIR/oracle_drgn.py" "${path%%,*}" "$VMLINUX" >"$O/drgn.$f.json" 2>"$O/drgn.$f.err"; then
			ok=+; rm -f "$O/drgn.$f.err"
		else
			ok=-; note=$(lasterr "$O/drgn.$f.err")
			if [ "$f" = vmcore.elf ]; then
				# QEMU's paging=false ELF has physical segments only
				row "$f" drgn - "$(elapsed "$t0")" drgn "$note"
				mv "$O/drgn.$f.err" "$O/drgn.$f.plain.err"
				t0=$(now); how=drgn+alias; note=
				if "$PY" "$KVS_LINUX_DIR/oracle_drgn.py" "$path" "$VMLINUX" --image-alias \
				    >"$O/drgn.$f.json" 2>"$O/drgn.$f.err"; then
					ok=+; rm -f "$O/drgn.$f.err"
				else
					note=$(lasterr "$O/drgn.$f.err")
				fi
			fi
			[ $ok = + ] || rm -f "$O/drgn.$f.json"
		fi
		exp=$(drgn_expect "$f")
		[ "$ok" = "$exp" ] || { note="UNEXPECTED (expected $exp) $note"; unexpected=1; }
		row "$f" drgn "$ok" "$(elapsed "$t0")" "$how" "$note"
	fi
	# crash
	if skipped crash; then
		row "$f" crash skip 0 "" "KVS_SKIP_ORACLES"
	else
		t0=$(now); note=
		if KVS_CRASH_RAW=$O/crash.$f.raw "$KVS_LINUX_DIR/oracle_crash.sh" "$path" "$VMLINUX" \
		    >"$O/crash.$f.tsv" 2>"$O/crash.$f.err"; then
			ok=+; note=$(head -c 100 "$O/crash.$f.err" | tr '\n\t' '  '); [ -s "$O/crash.$f.err" ] || rm -f "$O/crash.$f.err"
		else
			ok=-; rm -f "$O/crash.$f.tsv" "$O/crash.$f.raw"; note="UNEXPECTED $(lasterr "$O/crash.$f.err")"; unexpected=1
		fi
		how=crash; [ "$f" = mem.ram ] && how="crash FILE@0"
		row "$f" crash "$ok" "$(elapsed "$t0")" "$how" "$note"
	fi
done
# crash's own kmem -s and log tables on vmcore.elf, for the byte comparisons.
if ! skipped crash; then
	[ -s "$O/crash.vmcore.elf.raw" ] && cp "$O/crash.vmcore.elf.raw" "$O/crash.kmem.raw"
	printf 'log\nquit\n' >"$O/log.cmds"
	crash -s -i "$O/log.cmds" "$VMLINUX" "$CAP/vmcore.elf" </dev/null >"$O/crash.log.raw" 2>"$O/crash.log.err" ||
		{ echo "run_oracles: crash log on vmcore.elf failed: $(lasterr "$O/crash.log.err")" >&2; unexpected=1; }
	rm -f "$O/log.cmds"
	[ -s "$O/crash.log.err" ] || rm -f "$O/crash.log.err"
fi
# The memory census (issue 26): drgn's zones, meminfo counters, vmalloc
# areas and a whatis sample of >= 1000 addresses drawn from the dump
# (oracle_census.py on vmcore.elf-paging), and crash's kmem -i/-z/-f/-V/-v/-S
# and kmem ADDR on the same addresses (vmcore.elf).
if ! skipped drgn && ! skipped crash; then
	t0=$(now)
	if "$PY" "$KVS_LINUX_DIR/oracle_census.py" "$CAP/vmcore.elf-paging" "$VMLINUX" \
	    >"$O/census.drgn.json" 2>"$O/census.drgn.err"; then
		row census:vmcore.elf-paging drgn + "$(elapsed "$t0")" oracle_census.py ""
		rm -f "$O/census.drgn.err"
		"$PY" -c 'import json,sys; [print(e["address"]) for e in json.load(open(sys.argv[1]))["sample"]]' \
			"$O/census.drgn.json" >"$O/whatis.addrs"
	else
		row census:vmcore.elf-paging drgn - "$(elapsed "$t0")" oracle_census.py "UNEXPECTED $(lasterr "$O/census.drgn.err")"
		unexpected=1; : >"$O/whatis.addrs"
	fi
	t0=$(now)
	if "$KVS_LINUX_DIR/oracle_crash_census.sh" "$CAP/vmcore.elf" "$VMLINUX" "$O" "$O/whatis.addrs" \
	    2>"$O/crash.census.err"; then
		row census:vmcore.elf crash + "$(elapsed "$t0")" "kmem -i -z -f -V -v -S, kmem ADDR x$(grep -c . "$O/whatis.addrs")" ""
		[ -s "$O/crash.census.err" ] || rm -f "$O/crash.census.err"
	else
		row census:vmcore.elf crash - "$(elapsed "$t0")" oracle_crash_census.sh "UNEXPECTED $(lasterr "$O/crash.census.err")"
		unexpected=1
	fi
fi
cat "$M"
echo
if [ -s "$CAP/mem.ram" ]; then
	printf 'mem.ram vs vmcore.elf RAM segments: '
	"$PY" "$KVS_LINUX_DIR/dumptools.py" ram-vs-elf "$CAP/mem.ram" "$CAP/vmcore.elf" | tee "$O/ram_vs_elf.json" ||
		{ echo "run_oracles: mem.ram differs from vmcore.elf" >&2; unexpected=1; }
	echo
fi
rc=0
if skipped drgn || skipped crash; then
	echo "compare.py not run: an oracle is opted out (KVS_SKIP_ORACLES=${KVS_SKIP_ORACLES:-})" | tee "$O/compare.txt"
	echo '{"fatal": [], "skipped": "compare.py: an oracle opted out"}' >"$O/summary.json"
else
	"$PY" "$KVS_LINUX_DIR/compare.py" "$CAP" --json "$O/summary.json" | tee "$O/compare.txt" || rc=$?
fi
[ $unexpected = 0 ] || { echo "run_oracles: a tool did better or worse than expected on some form (matrix above)" >&2; [ $rc != 0 ] || rc=2; }
[ $rc != 0 ] || printf '%s\n' "$(oracle_hash "$CAP")" "${KVS_SKIP_ORACLES:-}" >"$O/hash"
exit $rc
