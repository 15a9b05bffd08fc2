#!/usr/bin/env bash
# fp8_check.sh LOG_DIR — issue 15's fp8 row: fp8_gemm (A [M,K], B [N,K] in e4m3/e5m2, per-tensor
# scales, bf16 out) on wgmma m64nNk32, in one call (at most ~8 minutes; later steps skipped past 460 s):
#   1. builds the tilegen CLI and the cuda plugin (build folder shared with tma_check.sh);
#   2. fp8_gemm's conformance on the default path (mma.sync m16n8k32: 8-bit wgmma needs B K-major,
#      TILEGEN_CUDA_WGMMA_TRANS_B=1), with it (W), and with TMA and warp roles too (R); ragged runs;
#   3. e4m3 8192³ and 4096³ → bf16 on the three beside torch._scaled_mm (bench/torch_scaled_mm_peer.py)
#      in the same call, then tiles (block_K 128 / 64, block_N 256 on two warpgroups, 4 stages);
#   4. compute-sanitizer memcheck / racecheck / synccheck on a ragged run of W and R; ptxas -v; ncu.
# Summaries on stdout; text logs in LOG_DIR/logs.tgz, rewritten after each step.
set -u
L=$1
LATE_S=460
source tools/device_extra/call_common.sh
pack() { tar -C "$L" -czf "$L/logs.tgz" x; }
bash tools/device_extra/build_cuda_cli.sh $B "$L/x/build" || exit 1
TG=$B/bin/tilegen
echo "built at +$(($(date +%s) - START)) s"
W="TILEGEN_CUDA_WGMMA_TRANS_B=1"
R="$W TILEGEN_CUDA_TMA=1 TILEGEN_CUDA_WARP_ROLES=1"
t "$TG" conformance --target cuda --sample fp8_gemm --json "$L/conformance_fp8_default.json" > "$L/x/conf_fp8.txt"
tail -2 "$L/x/conf_fp8.txt"
for e in "$W" "$R"; do
  t env $e "$TG" conformance --target cuda --sample fp8_gemm > "$L/x/conf_fp8_w.txt"
  echo "$e :: $(tail -1 "$L/x/conf_fp8_w.txt")"
  for run in "--set M=200,N=136,K=328,block_K=128" "--dtype e5m2 --set M=130,N=257,K=136" \
    "--set M=256,N=264,K=520,block_K=128,block_N=256,threads=256,out_f16=1" "--set M=1,N=1,K=1"; do
    r=$(env $e timeout 60 "$TG" run fp8_gemm $run --target cuda 2>&1 | grep -E "PASS|FAIL|rror|max" | tr '\n' ' ')
    echo "$e run $run :: $r"
  done
done
pack
for n in 8192 4096; do
  for e in "TILEGEN_CUDA_WGMMA_TRANS_B=0" "$W" "$R"; do  # mma.sync m16n8k32, wgmma, wgmma + TMA + roles
    r=$(env $e timeout 90 "$TG" bench fp8_gemm --target cuda --dtype e4m3 --set M=$n,N=$n,K=$n \
      --csv "$L/bench_fp8.csv" 2>&1 | grep -E "median|rror|TFLOP" | tr '\n' ' ')
    echo "fp8 $n $e :: $r"
  done
  r=$(timeout 120 python3 bench/torch_scaled_mm_peer.py --M $n --N $n --K $n 2>&1 | tail -2 | tr '\n' ' ')
  echo "torch $n :: $r"
done
pack
for v in block_K=64 block_N=256,threads=256 block_N=256,threads=256,stages=4 block_M=256,threads=256 \
  stages=4; do
  late && break
  r=$(env $R timeout 60 "$TG" bench fp8_gemm --target cuda --dtype e4m3 --set M=8192,N=8192,K=8192,$v \
    --csv "$L/bench_fp8_tiles.csv" 2>&1 | grep -E "median|rror" | tr '\n' ' ')
  echo "fp8 roles tile $v :: $r"
done
pack
late || {
  for tool in memcheck racecheck synccheck; do
    for e in "$W" "$R"; do
      t env $e compute-sanitizer --tool $tool --error-exitcode 9 "$TG" run fp8_gemm --target cuda \
        --set M=200,N=136,K=328,block_K=128
    done
  done
} > "$L/x/sanitizer.txt" 2>&1
grep -E "^== exit|ERROR SUMMARY|RACECHECK SUMMARY" "$L/x/sanitizer.txt" | tr '\n' ' '; echo
TILEGEN_CACHE_DIR=/tmp/tgc "$TG" source fp8_gemm --target cuda --arch sm_90a \
  --param wgmma_trans_b=1,tma=1,warp_roles=1 --set M=8192,N=8192,K=8192 --emit asm -o "$L/x/fp8.ptx" > /dev/null 2>&1
ptxas -arch=sm_90a -v "$L/x/fp8.ptx" -o "$L/x/fp8.cubin" 2>&1 | grep -E "registers|spill|arning" | tr '\n' ' '; echo
rm -f "$L/x/fp8.cubin"
if ! late; then
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  t env $R "$NCU" --clock-control none -k regex:fp8 -c 1 --section SpeedOfLight --section Occupancy \
    --section WarpStateStats --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio \
    "$TG" bench fp8_gemm --target cuda --dtype e4m3 --set M=8192,N=8192,K=8192 --runs 1 --warmup 0 > "$L/x/ncu_fp8.txt"
  grep -E "Duration|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|No Eligible" "$L/x/ncu_fp8.txt" | head -6
  grep -E "issue_stalled" "$L/x/ncu_fp8.txt" | sort -k3 -g -r | head -6
fi
tar -C "$L" -czf "$L/logs.tgz" x && rm -rf "$L/x"
echo "done at +$(($(date +%s) - START)) s"
