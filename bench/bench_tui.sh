#!/usr/bin/env bash
# bench_tui.sh [build-dir] [seconds] - kvmtop's CPU use at a 1 s refresh on
# 2,000 malloc types x 64 CPUs, and the cost of each refresh (shown by kvmtop
# itself in its header).  Target: under 1% of one core.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
secs=${2:-30}
tdir=$(mktemp -d /tmp/kvs-bench-tui.XXXXXX)
img=$tdir/image.raw
"$B/bench/bench_refresh" --image "$img" 2000 64
sess=kvsbench$$
tmux new-session -d -s "$sess" -x 100 -y 30 \
  "$B/tui/kvmtop -N fixtures/cores/fbsd14/kernel -M $img --raw -w 1"
sleep 2
pid=$(pgrep -n -x kvmtop)
tck=$(getconf CLK_TCK)
read -r u0 s0 < <(awk '{print $14, $15}' /proc/"$pid"/stat)
sleep "$secs"
read -r u1 s1 < <(awk '{print $14, $15}' /proc/"$pid"/stat)
hdr=$(tmux capture-pane -p -t "$sess" | sed -n 3p)
tmux send-keys -t "$sess" q
sleep 0.5
tmux kill-session -t "$sess" 2>/dev/null || true
rm -rf "$tdir"
awk -v u=$((u1 - u0)) -v s=$((s1 - s0)) -v t="$tck" -v secs="$secs" 'BEGIN {
  printf "kvmtop, 2000 types x 64 CPUs, 1 s refresh: %.2f%% of one core over %d s (user %.2fs, sys %.2fs)\n",
    100 * (u + s) / t / secs, secs, u / t, s / t }'
echo "kvmtop header: $hdr"
