#!/bin/sh
# lint.sh SRCDIR: every manual page of the project passes `mandoc -T lint`
# with no message at level warning or above.
srcdir=${1:?usage: lint.sh SRCDIR}
if ! command -v mandoc >/dev/null 2>&1; then
	if [ "${KVS_ALLOW_MISSING_ORACLES:-0}" = 1 ]; then
		echo "SKIPPED: mandoc not installed (apt-get install mandoc)"
		exit 77
	fi
	echo "FAIL: mandoc not installed (apt-get install mandoc, or scripts/setup.sh)" >&2
	exit 1
fi
n=0 bad=0
for page in "$srcdir"/man/*.[1-9] "$srcdir"/libkvmstat/man/*.[1-9]; do
	[ -f "$page" ] || continue
	n=$((n + 1))
	out=$(mandoc -T lint -W warning "$page" 2>&1)
	if [ -n "$out" ]; then
		printf '%s\n' "$out"
		bad=$((bad + 1))
	fi
done
echo "mandoc -T lint: $n pages, $bad with warnings"
[ "$n" -ge 5 ] || { echo "FAIL: expected at least 5 pages, found $n"; exit 1; }
[ "$bad" -eq 0 ]
