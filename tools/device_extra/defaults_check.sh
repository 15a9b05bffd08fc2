#!/usr/bin/env bash
# defaults_check.sh LOG_DIR — the cuda defaults after tma, wgmma_trans_b and wgmma_rows became on
# (issues 15 and 16), in one call (at most ~8 minutes; later steps skipped past LATE_S):
#   1. builds the tilegen CLI, the cuda plugin and bench_cuda_vs_cublas;
#   2. the whole cuda conformance suite with the defaults;
#   3. bench_cuda_vs_cublas with the defaults; gemm_relu 4096³ beside torch.relu(a @ b); gemm f16
#      4096³ at 4, 5 and 6 stages and 128×256 on two warpgroups;
#   4. flash_attention B8 H16 S4096 D128 f16/bf16, causal or not, at the default tile and at
#      128×128 on two warpgroups, beside PyTorch SDPA (cuDNN, FA2) in the same call;
#   5. fp8_gemm e4m3 8192³ at K steps of 128 (the default) and 64, beside torch._scaled_mm;
#   6. warp roles on a gemm left on mma.sync (wrong on the H100 on 2026-12-07): the failing runs
#      again, under racecheck / synccheck / memcheck, and with the producer's register handover
#      off the table (sm_90 named: a producer warp, no setmaxnreg);
#   7. attention's shapes beyond D128 (d64, d256, GQA) at the defaults beside SDPA.
# Summaries on stdout; text logs in LOG_DIR/logs.tgz (rewritten after each step).
set -u
L=$1
LATE_S=${LATE_S:-430}
source tools/device_extra/call_common.sh
pack() { tar -C "$L" -czf "$L/logs.tgz" x; }
bash tools/device_extra/build_cuda_cli.sh $B "$L/x/build" bench_cuda_vs_cublas || exit 1
TG=$B/bin/tilegen
echo "built at +$(($(date +%s) - START)) s"
t "$TG" conformance --target cuda --json "$L/conformance_cuda.json" > "$L/x/conf.txt"
tail -2 "$L/x/conf.txt"
grep -E "FAIL" "$L/x/conf.txt" | head -5
pack
t "$B/bin/bench_cuda_vs_cublas" "$L/bench_cuda_vs_cublas.csv" > "$L/x/cublas.txt"
cat "$L/bench_cuda_vs_cublas.csv"
grep -E "^compile" "$L/x/cublas.txt"
for dt in f16 bf16; do
  r=$(timeout 60 "$TG" bench gemm_relu --target cuda --dtype $dt --set M=4096,N=4096,K=4096 --csv "$L/x/relu.csv" 2>&1 |
    grep -E "median|rror" | tr '\n' ' ')
  q=$(timeout 60 python3 bench/torch_gemm_relu_peer.py --dtype $dt 2>&1 | tail -1)
  echo "gemm_relu $dt 4096 :: $r :: $q"
done
for cfg in stages=4 stages=5 stages=6 block_N=256,threads=256,stages=4; do  # deeper rings: ncu saw mbarrier waits
  r=$(timeout 60 "$TG" bench gemm --target cuda --dtype f16 --set M=4096,N=4096,K=4096,$cfg --csv "$L/x/stages.csv" 2>&1 |
    grep -E "median|rror" | tr '\n' ' ')
  echo "gemm f16 4096 $cfg :: $r"
done
pack
SHAPE=B=8,H=16,HKV=16,S=4096,D=128
for dt in f16 bf16; do
  for causal in 0 1; do
    for tile in "" ",block_M=128,block_N=128,threads=256"; do
      r=$(timeout 90 "$TG" bench flash_attention --target cuda --dtype $dt --set $SHAPE,causal=$causal$tile \
        --csv "$L/bench_fa.csv" 2>&1 | grep -E "median|rror" | tr '\n' ' ')
      echo "fa $dt causal=$causal tile=${tile:-default} :: $r"
    done
    r=$(timeout 120 python3 bench/torch_sdpa_peer.py --B 8 --H 16 --HKV 16 --S 4096 --D 128 --causal $causal --dtype $dt 2>&1 |
      tail -3 | tr '\n' ' ')
    echo "sdpa $dt causal=$causal :: $r"
  done
done
pack
for bk in 128 64; do
  r=$(timeout 60 "$TG" bench fp8_gemm --target cuda --dtype e4m3 --set M=8192,N=8192,K=8192,block_K=$bk \
    --csv "$L/bench_fp8.csv" 2>&1 | grep -E "median|rror" | tr '\n' ' ')
  echo "fp8 8192 block_K=$bk :: $r"
done
r=$(timeout 60 "$TG" run fp8_gemm --target cuda --set M=200,N=136,K=328,block_K=64 2>&1 | grep -E "PASS|FAIL|rror" | tr '\n' ' ')
echo "fp8 ragged block_K=64 :: $r"
echo "torch 8192 :: $(timeout 120 python3 bench/torch_scaled_mm_peer.py --M 8192 --N 8192 --K 8192 2>&1 | tail -2 | tr '\n' ' ')"
pack
late || {
  R="TILEGEN_CUDA_WARP_ROLES=1 TILEGEN_CUDA_WGMMA_ROWS=0"
  for run in "gemm_softmax --set M=96,N=128,K=512" "gemm_softmax --set M=64,N=128,K=512" \
    "gemm_softmax --set M=96,N=128,K=96"; do
    echo "roles mma.sync $run :: $(env $R timeout 60 "$TG" run $run --target cuda 2>&1 | grep -E "PASS|FAIL|rror" | tr '\n' ' ')"
  done
  for tool in racecheck synccheck memcheck; do
    echo "roles $tool :: $(env $R timeout 90 compute-sanitizer --tool $tool "$TG" run gemm_softmax --target cuda \
      --set M=96,N=128,K=512 2>&1 | grep -E "SUMMARY|PASS|FAIL|Error|hazard" | sort | uniq -c | head -6 | tr '\n' ' ')"
  done
  env $R TILEGEN_CACHE_DIR=/tmp/tgc "$TG" source gemm_softmax --target cuda --arch sm_90a --set M=96,N=128,K=512 \
    --param warp_roles=1,wgmma_rows=0 > "$L/x/roles_softmax.cu" 2>&1
  for run in "gemm --set M=512,N=512,K=4096,trans_B=1" "gemm --set M=512,N=512,K=512,trans_B=1"; do
    echo "roles trans_B $run :: $(TILEGEN_CUDA_WARP_ROLES=1 TILEGEN_CUDA_WGMMA_TRANS_B=0 timeout 60 "$TG" run $run \
      --target cuda 2>&1 | grep -E "PASS|FAIL|rror" | tr '\n' ' ')"
  done
}
pack
for s in "B=8,H=16,HKV=16,S=4096,D=64 --D 64 --H 16 --HKV 16 --B 8" "B=4,H=16,HKV=16,S=4096,D=256 --D 256 --H 16 --HKV 16 --B 4" \
  "B=1,H=32,HKV=4,S=16384,D=128 --D 128 --H 32 --HKV 4 --B 1 --S 16384"; do
  late && break
  set -- $s
  dt=f16
  [ "${s#*S=16384}" != "$s" ] && dt=bf16
  r=$(timeout 90 "$TG" bench flash_attention --target cuda --dtype $dt --set $1 --csv "$L/bench_fa_shapes.csv" 2>&1 |
    grep -E "median|rror" | tr '\n' ' ')
  shift
  S=4096
  q=$(timeout 120 python3 bench/torch_sdpa_peer.py --S $S "$@" --causal 0 --dtype $dt 2>&1 | tail -2 | tr '\n' ' ')
  echo "fa shape $s $dt :: $r :: $q"
done
tar -C "$L" -czf "$L/logs.tgz" x && rm -rf "$L/x"
echo "done at +$(($(date +%s) - START)) s"
