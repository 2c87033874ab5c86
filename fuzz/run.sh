#!/usr/bin/env bash
# run.sh [seconds] - build the libFuzzer harness with clang (ASan+UBSan) and
# fuzz the dump parsers from the fixture dumps' headers as seeds.
#
# Needs clang and its libFuzzer runtime (Debian 12: clang, libclang-rt-14-dev)
# besides the library's own build dependencies.  The library's sources,
# include directories and link libraries are read from libkvmstat/meson.build
# (kvs_sources, kvs_inc, libraries_private), so this script compiles exactly
# what the meson build compiles.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
out=build-fuzz
lib=libkvmstat

# The quoted names inside `NAME = FUNC(` up to its closing parenthesis,
# comments left out (a parenthesis in a comment does not end the list).
meson_list() {
	awk -v start="^$1 = $2[(]" '
		$0 ~ start { on = 1 }
		on { sub(/#.*/, ""); print; if (/[)]/) exit }' "$lib/meson.build" |
	grep -o "'[^']*'" | tr -d "'"
}
mapfile -t srcs < <(meson_list kvs_sources files)
mapfile -t incs < <(meson_list kvs_inc include_directories)
# Link flags: the ones the pkg-config file gives static users.
mapfile -t libs < <(grep -o "libraries_private *: *\[[^]]*\]" "$lib/meson.build" |
	grep -o "'[^']*'" | tr -d "'")
[ ${#libs[@]} -gt 0 ] || libs=(-ldwarf -lelf -lz)
if [ ${#srcs[@]} -eq 0 ] || [ ${#incs[@]} -eq 0 ]; then
	echo "fuzz/run.sh: no kvs_sources/kvs_inc found in $lib/meson.build" >&2
	exit 1
fi
command -v clang >/dev/null || { echo "fuzz/run.sh: clang is not installed" >&2; exit 1; }

mkdir -p "$out/corpus"
for f in fixtures/cores/fbsd14/vmcore.minidump{1,2,3} fixtures/cores/fbsd14/vmcore.elf; do
  head -c 65536 "$f" > "$out/corpus/$(basename "$f")"
done
clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -std=c11 \
  "${incs[@]/#/-I$lib/}" fuzz/fuzz_open.c "${srcs[@]/#/$lib/}" \
  "${libs[@]}" -o "$out/fuzz_open"
"$out/fuzz_open" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 "$out/corpus"
