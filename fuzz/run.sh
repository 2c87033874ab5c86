#!/usr/bin/env bash
# run.sh [seconds] - build the libFuzzer harness with clang (ASan+UBSan) and
# fuzz the dump parsers from the fixture dumps' headers as seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
out=build-fuzz
mkdir -p "$out/corpus"
for f in fixtures/cores/fbsd14/vmcore.minidump{1,2,3} fixtures/cores/fbsd14/vmcore.elf; do
  head -c 65536 "$f" > "$out/corpus/$(basename "$f")"
done
clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -std=c11 \
  -I libkvmstat/include/kvmstat -I libkvmstat/core -I libkvmstat/os fuzz/fuzz_open.c \
  libkvmstat/{core,source,arch,types,memstat}/*.c libkvmstat/os/*/*.c \
  -ldwarf -lelf -lz -o "$out/fuzz_open"
"$out/fuzz_open" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 "$out/corpus"
