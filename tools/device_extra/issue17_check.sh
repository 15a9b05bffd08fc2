#!/usr/bin/env bash
# issue17_check.sh LOG_DIR — issue 17's GPU parts in one H200 call: PyTorch tensors through
# DLPack on torch's streams (torch_dlpack.sh), then `tilegen tune` of gemm and flash_attention at
# their bench shapes on cuda (how far the tuned config is from the hand-picked one), and
# compute-sanitizer racecheck on the whole-row softmax/rmsnorm (rows over 8 warps meet in shared
# scratch). The CLI is built alone (cuda plugin, no tests).
set -u
L=$1
mkdir -p "$L"
export PATH=/usr/local/cuda/bin:$PATH
t() { echo "== $(date +%T) $*"; timeout 400 "$@" 2>&1; echo "== exit $?"; }
t bash tools/device_extra/torch_dlpack.sh "$L/torch" > "$L/torch.txt"
BUILD=build-tune
bash tools/device_extra/build_cuda_cli.sh "$BUILD" "$L" || exit 1
TG=$BUILD/bin/tilegen
export TILEGEN_CACHE_DIR=$PWD/$BUILD/kernel-cache
{
  t "$TG" tune gemm --target cuda --dtype f16
  t "$TG" tune flash_attention --target cuda --dtype f16
  t "$TG" tune flash_attention --target cuda --dtype f16 --set causal=1
  for s in softmax rmsnorm; do
    t compute-sanitizer --tool racecheck --error-exitcode 1 "$TG" run $s --target cuda \
      --set M=37,N=1000,block_M=1,block_N=1024,threads=256
  done
} > "$L/tune.txt" 2>&1
