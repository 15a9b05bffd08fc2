#!/usr/bin/env bash
# vulkan_harness_gap.sh BUILD_DIR LOG_DIR — for tools/device_check.sh (TILEGEN_VULKAN_EXTRA): the
# GEMM f16 4096³ kernel timed by `tilegen bench` (device buffers) and by bench_vulkan (host
# tensors) back to back in one session, with the SM clock sampled by nvidia-smi every 100 ms
# (LOG_DIR/gap/clocks.csv), to tell the harness from the machine. The run of 2026-12-02 21:51
# (docs/PERF.md, Vulkan) was these commands, given inline: both harnesses 0.606 ms, except two
# timed windows that fell in an SM clock dip (345-855 MHz): 2.95 and 1.96 ms.
#   - the CLI at stages=3 and stages=1 (their SPIR-V, written to gap/spv, is the same), the
#     latter also with 300 warm-up launches;
#   - bench_vulkan --gemm-only over the same configurations, twice, the CLI between.
set -u
B=$1/bin L=$2/gap
mkdir -p "$L/spv"
S=M=4096,N=4096,K=4096
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,pstate,utilization.gpu --format=csv \
  -lms 100 > "$L/clocks.csv" 2>&1 &
SMI=$!
t() { echo "== $(date +%T.%N | cut -c1-12) $*"; timeout 60 "$@" 2>&1; }
export TILEGEN_BENCH_GEMM_CONFIGS="128,128,32,3,128;128,128,32,1,128;128,256,32,1,256"
{
  t "$B/tilegen" bench gemm --target vulkan --set $S
  t "$B/tilegen" bench gemm --target vulkan --set $S,stages=1
  t "$B/tilegen" bench gemm --target vulkan --set $S,stages=1 --warmup 300 --runs 50
  for s in 1 3; do
    "$B/tilegen" source gemm --target vulkan --set $S,stages=$s --emit binary -o "$L/spv/stages$s.spv"
  done
  t "$B/bench_vulkan" "$L/bench_vulkan_1.csv" --gemm-only
  t "$B/tilegen" bench gemm --target vulkan --set $S
  t "$B/bench_vulkan" "$L/bench_vulkan_2.csv" --gemm-only
  echo "== $(date +%T.%N | cut -c1-12) end"
  md5sum "$L"/spv/*.spv
} > "$L/gap.txt" 2>&1
kill "$SMI"
cat "$L/gap.txt"
