#!/usr/bin/env bash
# torch_dlpack.sh LOG_DIR — tilegen on PyTorch's memory and stream, on an NVIDIA GPU machine with
# PyTorch (issue 17): builds libtilegen with the cuda plugin (no tests), libtg_torch.so from
# torch_dlpack/tg_torch.cpp, then runs torch_dlpack/torch_dlpack.py, which passes torch tensors
# through DLPack, runs gemm_relu on torch's current stream and on a stream of its own, and
# compares with torch.relu(a @ b). DLPack's header: <dlpack/dlpack.h> where installed, else the
# copy PyTorch ships (torch/include/ATen/dlpack.h, the same DLManagedTensor).
set -u
L=$1
mkdir -p "$L"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${TILEGEN_TORCH_BUILD:-$ROOT/build-torch}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH="$CUDA_HOME/bin:$PATH"
PY=${PYTHON:-python3}
INC=$BUILD/dlpack-include
mkdir -p "$INC/dlpack"
if [ -f /usr/include/dlpack/dlpack.h ]; then
  FLAGS=""
else
  TORCH_INC=$("$PY" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "include"))') ||
    { echo "no <dlpack/dlpack.h> and no PyTorch to take it from" >&2; exit 1; }
  ln -sf "$TORCH_INC/ATen/dlpack.h" "$INC/dlpack/dlpack.h"
  FLAGS="-isystem $INC"
fi
# PIC static libraries: libtg_torch.so links tilegen_samples (gemm_relu's builder and tiles).
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILEGEN_BUILD_TESTS=OFF -DTILEGEN_BUILD_BENCH=OFF \
  -DTILEGEN_PLUGIN_VULKAN=OFF -DTILEGEN_PLUGIN_CPU=OFF -DTILEGEN_PLUGIN_HIP=OFF -DTILEGEN_PLUGIN_NULL=OFF \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_CXX_FLAGS="$FLAGS" > "$L/configure.txt" 2>&1 ||
  { tail -20 "$L/configure.txt"; exit 1; }
grep -q "TILEGEN_HAVE_DLPACK:INTERNAL=1" "$BUILD/CMakeCache.txt" ||
  { echo "configure did not find <dlpack/dlpack.h>" | tee -a "$L/configure.txt"; exit 1; }
ninja -C "$BUILD" tilegen tilegen_samples tilegen_cuda > "$L/build.txt" 2>&1 || { tail -40 "$L/build.txt"; exit 1; }
g++ -std=c++20 -O2 -shared -fPIC -fvisibility=hidden $FLAGS -DTILEGEN_DLPACK=1 \
  -I"$ROOT/ir/include" -I"$ROOT/passes/include" -I"$ROOT/api/include" -I"$ROOT/samples/include" \
  "$ROOT/tools/device_extra/torch_dlpack/tg_torch.cpp" "$BUILD/lib/libtilegen_samples.a" \
  -L"$BUILD/lib" -ltilegen -Wl,-rpath,"$BUILD/lib" -o "$BUILD/libtg_torch.so" > "$L/build_shim.txt" 2>&1 ||
  { cat "$L/build_shim.txt"; exit 1; }
TILEGEN_CACHE_DIR=$BUILD/kernel-cache "$PY" "$ROOT/tools/device_extra/torch_dlpack/torch_dlpack.py" \
  "$BUILD/libtg_torch.so" 2>&1 | tee "$L/torch_dlpack.txt"
exit "${PIPESTATUS[0]}"
