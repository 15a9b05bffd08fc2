#!/usr/bin/env bash
# fa_wgmma_check.sh LOG_DIR — issue 16: flash_attention on wgmma throughout (TILEGEN_CUDA_WGMMA_TRANS_B=1
# TILEGEN_CUDA_WGMMA_ROWS=1: Q·Kᵀ with K K-major, scores / row statistics / P in registers, P·V in
# wgmma's RS form), in one call (at most ~8 minutes; later steps skipped past 460 s):
#   1. builds the tilegen CLI and the cuda plugin (build folder shared with tma_check.sh);
#   2. flash_attention's and gemm_softmax's conformance with the switches, and flash_attention's with
#      TMA and warp roles too (K/V as bulk copies, a producer warpgroup); ragged runs of both;
#   3. B8 H16 S4096 D128 f16/bf16, non-causal/causal, the mma.sync default, wgmma, wgmma with
#      TMA and warp roles, and that with issue_ahead (TILEGEN_CUDA_ISSUE_AHEAD=1), each beside
#      PyTorch SDPA (bench/torch_sdpa_peer.py: cuDNN and FA2 back-ends) in the same call;
#   4. tiles on wgmma, without and with TMA + roles (block_M 128 on two warpgroups, block_N 128, 3 stages);
#   5. compute-sanitizer racecheck / synccheck / memcheck on a ragged causal run; ptxas -v; ncu.
# Summaries on stdout; text logs in LOG_DIR/logs.tgz, rewritten after each step.
set -u
L=$1
LATE_S=460
source tools/device_extra/call_common.sh
pack() { tar -C "$L" -czf "$L/logs.tgz" x; }
bash tools/device_extra/build_cuda_cli.sh $B "$L/x/build" || exit 1
TG=$B/bin/tilegen
echo "built at +$(($(date +%s) - START)) s"
W="TILEGEN_CUDA_WGMMA_TRANS_B=1 TILEGEN_CUDA_WGMMA_ROWS=1"
R="$W TILEGEN_CUDA_TMA=1 TILEGEN_CUDA_WARP_ROLES=1"  # K/V by bulk copies, a producer warpgroup
A="$R TILEGEN_CUDA_ISSUE_AHEAD=1"  # and the next Q·Kᵀ issued beside this tile's softmax
t env $W "$TG" conformance --target cuda --sample flash_attention,gemm_softmax \
  --json "$L/conformance_fa_wgmma.json" > "$L/x/conf_fa_wgmma.txt"
tail -2 "$L/x/conf_fa_wgmma.txt"
t env $A "$TG" conformance --target cuda --sample flash_attention > "$L/x/conf_fa_ahead.txt"
tail -2 "$L/x/conf_fa_ahead.txt"
for e in "$W" "$A"; do
  for run in "--set S=130,D=64" "--set S=100,D=128,causal=1" "--dtype bf16 --set S=200,D=128,causal=1,block_M=128,threads=256" \
    "--set S=257,D=64,block_N=128"; do
    r=$(env $e timeout 60 "$TG" run flash_attention $run --target cuda 2>&1 | grep -E "PASS|FAIL|rror|max" | tr '\n' ' ')
    echo "$([ "$e" = "$W" ] && echo wgmma || echo ahead) run $run :: $r"
  done
done
pack
SHAPE=B=8,H=16,HKV=16,S=4096,D=128
for dt in f16 bf16; do
  for causal in 0 1; do
    for w in 0 1 2 3; do  # mma.sync (the default), wgmma, wgmma + TMA + warp roles, + issue_ahead
      e="TILEGEN_CUDA_WGMMA_ROWS=0"
      [ $w = 1 ] && e=$W
      [ $w = 2 ] && e=$R
      [ $w = 3 ] && e=$A
      r=$(env $e timeout 90 "$TG" bench flash_attention --target cuda \
        --dtype $dt --set $SHAPE,causal=$causal --csv "$L/bench_fa_wgmma$w.csv" 2>&1 | grep -E "median|rror" | tr '\n' ' ')
      echo "fa $dt causal=$causal path=$w :: $r"
    done
    r=$(timeout 120 python3 bench/torch_sdpa_peer.py --B 8 --H 16 --HKV 16 --S 4096 --D 128 --causal $causal --dtype $dt 2>&1 |
      tail -3 | tr '\n' ' ')
    echo "sdpa $dt causal=$causal :: $r"
  done
  pack
done
for v in block_M=128,threads=256 block_M=128,block_N=128,threads=256 block_M=128,threads=256,stages=3 \
  block_N=128 block_M=192,threads=384; do
  for e in "$R" "$A"; do
    late && break 2
    r=$(env $e timeout 60 "$TG" bench flash_attention --target cuda --dtype f16 --set $SHAPE,$v \
      --csv "$L/bench_fa_wgmma_tiles.csv" 2>&1 | grep -E "median|rror" | tr '\n' ' ')
    echo "fa $([ "$e" = "$R" ] && echo roles || echo ahead) tile $v :: $r"
  done
done
pack
late || {
  for tool in racecheck synccheck memcheck; do
    for e in "$W" "$A"; do
      t env $e compute-sanitizer --tool $tool --error-exitcode 9 "$TG" run flash_attention --target cuda \
        --set S=200,D=128,causal=1
    done
  done
} > "$L/x/sanitizer.txt" 2>&1
grep -E "^== exit|ERROR SUMMARY|RACECHECK SUMMARY" "$L/x/sanitizer.txt" | tr '\n' ' '; echo
env $W TILEGEN_CACHE_DIR=/tmp/tgc "$TG" source flash_attention --target cuda --arch sm_90a --param wgmma_trans_b=1,wgmma_rows=1 \
  --set $SHAPE --emit asm -o "$L/x/fa_wgmma.ptx" > /dev/null 2>&1
ptxas -arch=sm_90a -v "$L/x/fa_wgmma.ptx" -o "$L/x/fa_wgmma.cubin" 2>&1 | grep -E "registers|spill|arning" | tr '\n' ' '; echo
rm -f "$L/x/fa_wgmma.cubin"
if ! late; then
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  t env $W "$NCU" --clock-control none -k regex:flash -c 1 --section SpeedOfLight --section Occupancy \
    --section WarpStateStats --section SchedulerStats \
    --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio \
    "$TG" bench flash_attention --target cuda --dtype f16 --set $SHAPE --runs 1 --warmup 0 > "$L/x/ncu_fa_wgmma.txt"
  grep -E "Duration|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible" "$L/x/ncu_fa_wgmma.txt" | head -8
  grep -E "issue_stalled" "$L/x/ncu_fa_wgmma.txt" | sort -k3 -g -r | head -8
fi
tar -C "$L" -czf "$L/logs.tgz" x && rm -rf "$L/x"
echo "done at +$(($(date +%s) - START)) s"
