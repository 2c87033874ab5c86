#!/usr/bin/env bash
# test.sh - set up, build, run every test suite, then again under
# AddressSanitizer + UndefinedBehaviorSanitizer.  Ends with one summary line
# "tests: N passed, M failed" counted over both runs.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh || exit 1

meson test -C build --print-errorlogs --num-processes 2
rc1=$?

echo "== sanitizer build (ASan + UBSan)"
if [ ! -f build-asan/build.ninja ]; then
  meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debug >/dev/null || exit 1
fi
ninja -C build-asan >/dev/null || exit 1
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson test -C build-asan --print-errorlogs --num-processes 2
rc2=$?

python3 - <<'PY'
import json
p = f = 0
for log in ("build/meson-logs/testlog.json", "build-asan/meson-logs/testlog.json"):
    try:
        for line in open(log):
            r = json.loads(line)
            if r.get("result") in ("OK", "EXPECTEDFAIL", "SKIP"):
                p += 1
            else:
                f += 1
    except FileNotFoundError:
        f += 1
print(f"tests: {p} passed, {f} failed")
PY
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]
