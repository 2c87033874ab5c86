#!/usr/bin/env bash
# compare.sh BEFORE_DIR [KVMSTAT] - capture every command's output with the
# current build and compare it, byte for byte, with a capture taken before a
# change (tests/golden/capture_outputs.sh).  Exit 0 when nothing differs.
set -uo pipefail
BEFORE=${1:?usage: compare.sh BEFORE_DIR [KVMSTAT]}
cd "$(dirname "$0")/../.."
KVMSTAT=${2:-build/analyzers/kvmstat}
AFTER=$(mktemp -d /tmp/golden-after.XXXXXX)
bash tests/golden/capture_outputs.sh "$KVMSTAT" "$AFTER"
if diff -r "$BEFORE" "$AFTER" >"$AFTER.diff"; then
	echo "golden: $(ls "$BEFORE" | wc -l) files identical"
	rm -rf "$AFTER" "$AFTER.diff"
	exit 0
fi
echo "golden: outputs differ (diff in $AFTER.diff):"
head -40 "$AFTER.diff"
exit 1
