#!/usr/bin/env bash
# submission-size.sh [BASE] - what the commits since BASE weigh against the
# workplace's caps on one submission: 512 MiB packed as git sends them, and
# 256 MiB of diffs added up over every commit (a file added and then removed
# counts twice).  BASE defaults to the last commit that CI landed, which
# the caller names (e.g. the commit a session started from).
#
# Diffs are counted pessimistically: a text file's changed lines in bytes,
# a binary file's old and new blobs in full, per commit.  Regenerating the
# 6 MB fixture dumps in several commits is what overruns the cap: commit
# fixtures/cores once, after the generator has settled.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: submission-size.sh BASE}
packed=$(printf '%s\n^%s\n' HEAD "$base" | git pack-objects --stdout --revs --thin 2>/dev/null | wc -c)
diffs=0
heavy=()
for c in $(git rev-list --reverse --no-merges "$base..HEAD"); do
	n=0
	while IFS=$'\t' read -r add del path; do
		if [ "$add" = - ]; then
			o=$(git cat-file -s "$c^:$path" 2>/dev/null || echo 0)
			w=$(git cat-file -s "$c:$path" 2>/dev/null || echo 0)
			n=$((n + o + w))
		else
			n=$((n + $(git diff "$c^" "$c" -- "$path" | wc -c)))
		fi
	done < <(git diff --numstat "$c^" "$c")
	diffs=$((diffs + n))
	[ "$n" -lt $((8 << 20)) ] || heavy+=("$(git log -1 --format=%h "$c") $((n >> 20)) MiB")
done
# A merge is counted as the whole change it brings against its first parent:
# the branch's own commits are counted too, so squash-merge helpers' branches.
for c in $(git rev-list --merges "$base..HEAD"); do
	n=$(git diff --binary "$c^1" "$c" | wc -c)
	diffs=$((diffs + n))
	[ "$n" -lt $((8 << 20)) ] || heavy+=("$(git log -1 --format=%h "$c") merge, $((n >> 20)) MiB (squash instead)")
done
echo "packed: $((packed >> 20)) MiB of 512; diffs: $((diffs >> 20)) MiB of 256 (pessimistic)"
for h in "${heavy[@]}"; do echo "  heavy commit: $h"; done
[ "$packed" -lt $((480 << 20)) ] && [ "$diffs" -lt $((240 << 20)) ]
