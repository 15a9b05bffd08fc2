#!/usr/bin/env bash
# memory_ncu.sh LOG_DIR — what bounds softmax and rmsnorm on the H200 (issue 14: ≥ 0.8 of a copy):
# builds the tilegen CLI alone (cuda plugin only, no tests: nothing to bring along), then one ncu
# profile (clocks left alone, METHOD.md) of each at 8192², f16, at the default tiles and at the
# whole-row tiles bench_cuda_vs_cublas also times (1 row a block, 256 threads), and the lowered
# cuda source of each for reading beside it (LOG_DIR/*.cu).
set -u
L=$1
mkdir -p "$L"
BUILD=${TILEGEN_NCU_BUILD:-build-ncu}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILEGEN_BUILD_TESTS=OFF -DTILEGEN_BUILD_BENCH=OFF \
  -DTILEGEN_PLUGIN_VULKAN=OFF -DTILEGEN_PLUGIN_CPU=OFF -DTILEGEN_PLUGIN_HIP=OFF -DTILEGEN_PLUGIN_NULL=OFF \
  > "$L/configure.txt" 2>&1 || { tail -20 "$L/configure.txt"; exit 1; }
ninja -C "$BUILD" tilegen_cli tilegen_cuda > "$L/build.txt" 2>&1 || { tail -40 "$L/build.txt"; exit 1; }
TG=$BUILD/bin/tilegen
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
t() { echo "== $(date +%T) $*"; timeout 120 "$@" 2>&1; echo "== exit $?"; }
for s in softmax rmsnorm; do
  for v in "" ",block_M=1,block_N=8192,threads=256"; do
    name=$s${v:+_row}
    "$TG" source $s --target cuda --dtype f16 --set M=8192,N=8192$v > "$L/$name.cu" 2>&1
    t "$TG" bench $s --target cuda --dtype f16 --set M=8192,N=8192$v > "$L/${name}_bench.txt"
    t "$NCU" --clock-control none -k regex:$s -c 1 --section SpeedOfLight --section Occupancy \
      --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
      --section LaunchStats --section SourceCounters \
      "$TG" bench $s --target cuda --dtype f16 --set M=8192,N=8192$v --runs 1 --warmup 0 > "$L/${name}_ncu.txt"
  done
done
