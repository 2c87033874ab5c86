#!/usr/bin/env bash
# test.sh - set up, build, run every test suite, then again under
# AddressSanitizer + UndefinedBehaviorSanitizer.  Ends with one summary line
# "tests: N passed, M failed" counted over both runs (CI parses that prefix).
#
# A suite whose oracle (gdb, GNU gprof, tmux, nm, ...) is missing fails:
# scripts/setup.sh installs them all.  Only with KVS_ALLOW_MISSING_ORACLES=1
# may such a suite skip; the summary line then goes on to say so in words,
# e.g. "tests: 30 passed, 0 failed, 2 skipped (SKIPPED: gdb missing ...)".
# A skip without that opt-out counts as a failure.
#
# BUILD and ASAN_BUILD name the two build directories (build, build-asan).
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ASAN_BUILD=${ASAN_BUILD:-build-asan}
export BUILD
bash scripts/setup.sh || exit 1

meson test -C "$BUILD" --print-errorlogs --num-processes 2
rc1=$?

echo "== sanitizer build (ASan + UBSan)"
if [ ! -f "$ASAN_BUILD/build.ninja" ]; then
  meson setup "$ASAN_BUILD" -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debug >/dev/null || exit 1
fi
ninja -C "$ASAN_BUILD" >/dev/null || exit 1
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0 \
  meson test -C "$ASAN_BUILD" --print-errorlogs --num-processes 2
rc2=$?

# The real-kernel proof: Debian's Linux booted under QEMU, dumped, and
# kvmstat checked against the guest, drgn and crash (tests/linux/realcore.sh;
# downloads and captures are cached in /var/cache/kvmstat-linux).  Only with
# KVS_SKIP_LINUX=1 may a developer leave it out; the summary then says so.
echo "== real Linux kernel (tests/linux/realcore.sh)"
realcore="0 0"
if [ "${KVS_SKIP_LINUX:-0}" = 1 ]; then
  realcore="skip"
else
  bash tests/linux/realcore.sh "$BUILD/analyzers/kvmstat" 2>&1 | tee "$BUILD/realcore.log" | tail -n 30
  realcore=$(sed -n 's/^linux-realcore: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$BUILD/realcore.log" | tail -1)
  realcore_skipped=$(sed -n 's/^linux-realcore skipped (opted out): //p' "$BUILD/realcore.log" | tail -1)
  [ -n "$realcore" ] || realcore="0 1"
  # Debian's other kernels under QEMU (amd64 5.10 and 6.12, arm64 6.1 and
  # 6.12; nokaslr and KASLR; trixie's drgn and crash): counted with the above.
  echo "== other Debian kernels: amd64 5.10 and 6.12, arm64 6.1 and 6.12 (tests/linux/kernel_check.sh)"
  bash tests/linux/kernel_check.sh "$BUILD/analyzers/kvmstat" 2>&1 | tee "$BUILD/kernels.log" | tail -n 24
  arm=$(sed -n 's/^linux-kernels: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$BUILD/kernels.log" | tail -1)
  [ -n "$arm" ] || arm="0 1"
  realcore="$(( ${realcore% *} + ${arm% *} )) $(( ${realcore#* } + ${arm#* } ))"
  # drgn running the same script as kvmstat's Python layer, and kallsyms
  # against System.map, on realcore's captures: counted with the above.
  echo "== drgn_compat and kallsyms_check on the captures, and the live soak (tests/linux/extra_checks.sh)"
  bash tests/linux/extra_checks.sh "$BUILD/analyzers/kvmstat" 2>&1 | tee "$BUILD/extra.log" | tail -n 6
  ex=$(sed -n 's/^linux-extra: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$BUILD/extra.log" | tail -1)
  [ -n "$ex" ] || ex="0 1"
  realcore="$(( ${realcore% *} + ${ex% *} )) $(( ${realcore#* } + ${ex#* } ))"
fi

# Mutation testing: small plausible bugs, each of which some suite must
# catch (tests/mutate.sh; one scratch build, a recompiled file per mutant).
# Each mutant counts in the summary: killed as passed, survived as failed.
# First, the script itself: on a tree with a suite that always fails it
# must stop before judging any mutant (tests/mutate_selftest.sh).
echo "== mutation testing (tests/mutate.sh)"
bash tests/mutate_selftest.sh 2>&1 | tee "$BUILD/mutate-selftest.log" | tail -n 3
selftest=$(sed -n 's/^mutate-selftest: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$BUILD/mutate-selftest.log" | tail -1)
[ -n "$selftest" ] || selftest="0 1"
bash tests/mutate.sh 2>&1 | tee "$BUILD/mutate.log" | tail -n 5
mutate=$(sed -n 's/^mutate: \([0-9]*\) killed, \([0-9]*\) survived$/\1 \2/p' "$BUILD/mutate.log" | tail -1)
[ -n "$mutate" ] || mutate="0 1"
mutate="$(( ${mutate% *} + ${selftest% *} )) $(( ${mutate#* } + ${selftest#* } ))"

# The libFuzzer harnesses (fuzz/run): KVS_FUZZ_SECONDS (default 60) each,
# counted as one pass or fail; KVS_FUZZ_SECONDS=0 is an opt-out, reported.
echo "== fuzzing (fuzz/run)"
fuzz=skip
if [ "${KVS_FUZZ_SECONDS:-60}" != 0 ]; then
  FUZZ_JOBS=${FUZZ_JOBS:-2} fuzz/run "${KVS_FUZZ_SECONDS:-60}" >"$BUILD/fuzz.log" 2>&1 && fuzz="1 0" || fuzz="0 1"
  cat "$BUILD/fuzz.log"
fi

KVS_FUZZ="$fuzz" KVS_MUTATE="$mutate" \
KVS_REALCORE="$realcore" KVS_REALCORE_SKIPPED="${realcore_skipped:-}" KVS_REALCORE_LOG="$BUILD/realcore.log" \
KVS_TESTLOGS="$BUILD/meson-logs/testlog.json:$ASAN_BUILD/meson-logs/testlog.json" \
  python3 - <<'PY'
import json, os, re
allow = os.environ.get("KVS_ALLOW_MISSING_ORACLES") == "1"
p = f = s = 0
why = []
rc = os.environ.get("KVS_REALCORE", "0 1").split()
if rc == ["skip"]:
    s += 1
    why.append("real Linux kernel checks (KVS_SKIP_LINUX=1)")
else:
    p += int(rc[0])
    f += int(rc[1])
# realcore.sh names what a developer opted out of (KVS_CAPTURES, KVS_KCORE=0,
# KVS_SKIP_ORACLES): a skip, named.
rsk = os.environ.get("KVS_REALCORE_SKIPPED", "")
if rsk and rsk != "none":
    s += 1
    why.append("real Linux kernel: " + rsk)
fz = os.environ.get("KVS_FUZZ", "0 1").split()
if fz == ["skip"]:
    s += 1
    why.append("fuzzing (KVS_FUZZ_SECONDS=0)")
else:
    p += int(fz[0])
    f += int(fz[1])
mk = os.environ.get("KVS_MUTATE", "0 1").split()
p += int(mk[0])
f += int(mk[1])
for log in os.environ.get("KVS_TESTLOGS", "").split(":"):
    try:
        lines = open(log).readlines()
    except FileNotFoundError:
        f += 1
        print(f"{log} missing: counted as failed")
        continue
    for line in lines:
        r = json.loads(line)
        res = r.get("result")
        out = (r.get("stdout") or "") + (r.get("stderr") or "")
        # A runner that passes with some of its cases skipped (unittest's
        # "OK (skipped=N)") is a skip too, named, never a silent pass.
        inner = re.findall(r"skipped '([^']*)'", out) + re.findall(r"^SKIPPED: (.*)$", out, re.M)
        inner = [re.sub(r"^SKIPPED: ", "", w) for w in inner]
        if res in ("OK", "EXPECTEDFAIL") and (inner or re.search(r"\(skipped=\d+\)", out)):
            if allow:
                s += 1
                why.extend(inner or [f"{r.get('name')}: some cases skipped"])
            else:
                f += 1
                print(f"{r.get('name')}: passed with skipped cases ({'; '.join(inner) or 'unnamed'}) "
                      "without KVS_ALLOW_MISSING_ORACLES=1: counted as failed")
            continue
        if res in ("OK", "EXPECTEDFAIL"):
            p += 1
        elif res == "SKIP" and allow:
            s += 1
            m = re.findall(r"^SKIPPED: (.*)$", out, re.M)
            why.append(m[0] if m else f"{r.get('name')} skipped")
        else:
            f += 1
            if res == "SKIP":
                print(f"{r.get('name')}: skipped without KVS_ALLOW_MISSING_ORACLES=1: counted as failed")
# Dump forms the real-kernel check could not make on this machine, by name.
try:
    for l in open(os.environ.get("KVS_REALCORE_LOG", "")):
        if l.startswith("linux-realcore not made here: "):
            forms = [x.split(":")[0].strip() for x in l.split(": ", 1)[1].split("; ")]
            print("real Linux kernel: dump forms not made here: " + ", ".join(forms))
except OSError:
    pass
line = f"tests: {p} passed, {f} failed"
if s:
    seen = []
    for w in why:
        if w not in seen:
            seen.append(w)
    line += f", {s} skipped (SKIPPED: {'; '.join(seen)})"
print(line)
raise SystemExit(1 if f else 0)
PY
rc3=$?
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ]
