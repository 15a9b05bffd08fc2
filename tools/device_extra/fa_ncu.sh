#!/usr/bin/env bash
# fa_ncu.sh LOG_DIR — what bounds flash_attention on the GPU (issue 14: ≥ 0.6× SDPA's cuDNN
# back-end, 0.45× measured): builds the tilegen CLI and the cuda plugin alone, then one ncu profile
# (clocks left alone, METHOD.md) of f16 non-causal and causal at B8 H16 S4096 D128, default tiles,
# with the sections that say what stalls the warps (WarpStateStats, SourceCounters), whether the
# tensor pipe is busy (SpeedOfLight, ComputeWorkloadAnalysis), shared-memory bank conflicts
# (MemoryWorkloadAnalysis) and occupancy; the lowered cuda source beside it (LOG_DIR/*.cu).
set -u
L=$1
mkdir -p "$L"
BUILD=${TILEGEN_FA_BUILD:-build-fa}
export PATH=/usr/local/cuda/bin:$PATH
bash tools/device_extra/build_cuda_cli.sh "$BUILD" "$L" || exit 1
TG=$BUILD/bin/tilegen
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
t() { echo "== $(date +%T) $*"; timeout 240 "$@" 2>&1; echo "== exit $?"; }
SHAPE=B=8,H=16,HKV=16,S=4096,D=128
for causal in 0 1; do
  "$TG" source flash_attention --target cuda --dtype f16 --set $SHAPE,causal=$causal > "$L/fa_c$causal.cu" 2>&1
  t "$TG" bench flash_attention --target cuda --dtype f16 --set $SHAPE,causal=$causal > "$L/fa_c${causal}_bench.txt"
  t "$NCU" --clock-control none -k regex:flash -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Tables --section LaunchStats --section SourceCounters \
    "$TG" bench flash_attention --target cuda --dtype f16 --set $SHAPE,causal=$causal --runs 1 --warmup 0 \
    > "$L/fa_c${causal}_ncu.txt"
done
