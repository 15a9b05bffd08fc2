#!/usr/bin/env bash
# device_check.sh OUT_DIR — one run on an NVIDIA GPU machine (no network needed): build core +
# cuda plugin (+ tests when doctest is found), run the unit tests, the cuda conformance suite,
# compute-sanitizer memcheck and racecheck over every sample, and the GEMM benchmark against
# cuBLAS; then the vulkan target on the NVIDIA Vulkan driver (see vulkan_section below). Every
# log lands in OUT_DIR; OUT_DIR/summary.txt lists each step and its exit status.
#
# doctest may come along as an unpacked .deb under .deb/ (headers at .deb/usr/include); any
# *.deb files in .deb/ are unpacked there first. TILEGEN_DOCTEST_INCLUDE names another include
# directory to try first; TILEGEN_BUILD_DIR the build directory (default build-device/).
set -u
if [ $# -ne 1 ]; then echo "usage: $0 OUT_DIR" >&2; exit 2; fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
BUILD=${TILEGEN_BUILD_DIR:-$ROOT/build-device}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH="$CUDA_HOME/bin:$PATH"
export LD_LIBRARY_PATH="$CUDA_HOME/lib64:${LD_LIBRARY_PATH:-}"
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
FAILED=0

# step NAME LOGFILE COMMAND...: run, log stdout+stderr, record the status.
step() {
  local name=$1 log=$2; shift 2
  local t0=$SECONDS
  echo "[$(date +%T)] $name ..." | tee -a "$SUMMARY"
  "$@" > "$OUT/$log" 2>&1
  local rc=$?
  [ $rc -ne 0 ] && FAILED=$((FAILED + 1))
  echo "[$(date +%T)] $name: exit $rc ($((SECONDS - t0)) s) -> $log" | tee -a "$SUMMARY"
  return $rc
}

# ---- environment
{ date; uname -a; nvidia-smi; "$CUDA_HOME/bin/nvcc" --version; g++ --version; cmake --version; } \
  > "$OUT/environment.txt" 2>&1

# ---- doctest from .deb/ if brought along
shopt -s nullglob
for deb in "$ROOT"/.deb/*.deb; do dpkg-deb -x "$deb" "$ROOT/.deb" >> "$OUT/deb_unpack.txt" 2>&1; done
TESTS=OFF
DOCTEST_ARGS=()
for inc in ${TILEGEN_DOCTEST_INCLUDE:-} "$ROOT/.deb/usr/include" /usr/include /usr/local/include; do
  if [ -f "$inc/doctest/doctest.h" ]; then TESTS=ON; DOCTEST_ARGS=(-DDOCTEST_INCLUDE_DIR="$inc"); break; fi
done
echo "doctest: tests $TESTS ${DOCTEST_ARGS[*]:-}" | tee -a "$SUMMARY"

# ---- the cuda section (TILEGEN_SKIP_CUDA=1 leaves it out, for a vulkan-only run)
cuda_section() {
# ---- configure and build (Release; cpu, hip and vulkan plugins off: vulkan has its own build below)
step configure configure.txt cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DTILEGEN_PLUGIN_CUDA=ON -DTILEGEN_PLUGIN_CPU=OFF -DTILEGEN_PLUGIN_HIP=OFF -DTILEGEN_PLUGIN_VULKAN=OFF \
  -DTILEGEN_BUILD_TESTS=$TESTS "${DOCTEST_ARGS[@]}" || { cat "$SUMMARY"; exit 1; }
step build build.txt ninja -C "$BUILD" || { tail -40 "$OUT/build.txt"; exit 1; }
BIN=$BUILD/bin
TG=$BIN/tilegen

# ---- unit tests: everything, then the cuda ones on their own (device test included)
if [ -x "$BIN/tilegen_unit_tests" ]; then
  # TILEGEN_SKIP_UNIT_ALL=1: the cuda cases only (the rest run in CI without a GPU).
  [ "${TILEGEN_SKIP_UNIT_ALL:-0}" = 1 ] || step "unit tests (all)" unit_tests.txt "$BIN/tilegen_unit_tests"
  step "unit tests (cuda, gpu pipeline)" unit_tests_cuda.txt "$BIN/tilegen_unit_tests" -tc="cuda*,gpu pipeline*"
fi

# ---- the tilegen CLI: targets and conformance
HAVE_CLI=0
if [ -x "$TG" ]; then
  step "tilegen targets" targets.txt "$TG" targets
  if "$TG" help 2>&1 | grep -q conformance; then
    HAVE_CLI=1
    if ! step "conformance --target cuda" conformance_cuda.txt "$TG" conformance --target cuda --json "$OUT/conformance_cuda.json"; then
      # Bisect: the same without ldmatrix and cp.async (each exact by construction; this says which to suspect).
      TILEGEN_CUDA_LDMATRIX=0 TILEGEN_CUDA_CP_ASYNC=0 step "conformance, no ldmatrix/cp.async" conformance_cuda_plain.txt \
        "$TG" conformance --target cuda --json "$OUT/conformance_cuda_plain.json"
      TILEGEN_CUDA_LDMATRIX=0 step "conformance, no ldmatrix" conformance_cuda_no_ldmatrix.txt \
        "$TG" conformance --target cuda --json "$OUT/conformance_cuda_no_ldmatrix.json"
    fi
  else
    echo "tilegen CLI has no 'conformance' command in this build; skipped" | tee -a "$SUMMARY"
  fi
else
  echo "no tilegen CLI in this build ($TG); conformance skipped" | tee -a "$SUMMARY"
fi

# ---- compute-sanitizer: memcheck and racecheck over every sample at a small shape
declare -A SHAPE=(
  [gemm]="M=1000,N=777,K=333"
  [gemm_relu]="M=512,N=384,K=256"
  [softmax]="M=100,N=1000"
  [rmsnorm]="M=100,N=1000"
  [flash_attention]="B=1,H=4,HKV=2,S=200,D=64"
  [dequant_gemm]="M=3,N=512,K=1024"
  [conv2d]="N=1,H=14,W=14,C=32,F=64"
  [block_reduce]="N=100000"
  [gemm_softmax]="M=1000,N=100,K=256"
)
SAN=$CUDA_HOME/bin/compute-sanitizer
mkdir -p "$OUT/sanitizer"
if [ "${TILEGEN_SKIP_SANITIZER:-0}" = 1 ]; then
  echo "compute-sanitizer skipped (TILEGEN_SKIP_SANITIZER=1)" | tee -a "$SUMMARY"
elif [ -x "$SAN" ]; then
  for tool in memcheck racecheck; do
    if [ $HAVE_CLI = 1 ] && "$TG" help 2>&1 | grep -q " run"; then
      for s in "${!SHAPE[@]}"; do
        step "$tool $s" "sanitizer/${tool}_$s.txt" "$SAN" --tool "$tool" --error-exitcode 1 \
          "$TG" run "$s" --target cuda --set "${SHAPE[$s]}"
      done
    elif [ -x "$BIN/tilegen_unit_tests" ]; then
      # Without the CLI: the device unit test runs every sample x dtype x test shape on cuda.
      step "$tool (device unit test)" "sanitizer/${tool}_unit.txt" "$SAN" --tool "$tool" --error-exitcode 1 \
        "$BIN/tilegen_unit_tests" -tc="cuda device*"
    fi
  done
else
  echo "compute-sanitizer not found at $SAN; skipped" | tee -a "$SUMMARY"
fi

# ---- benchmarks: tilegen vs cuBLAS, same process, same inputs
if [ -x "$BIN/bench_cuda_vs_cublas" ]; then
  step "bench vs cuBLAS" bench_cuda_vs_cublas.txt "$BIN/bench_cuda_vs_cublas" "$OUT/bench_cuda_vs_cublas.csv"
fi
if [ $HAVE_CLI = 1 ]; then
  for dt in f16 bf16; do
    for causal in 0 1; do
      sfx=c$causal; [ $dt = f16 ] || sfx=${sfx}_$dt
      step "tilegen bench flash_attention $dt causal=$causal" bench_flash_attention_$sfx.txt "$TG" bench flash_attention \
        --target cuda --dtype $dt --set B=8,H=16,HKV=16,S=4096,D=128,causal=$causal --csv "$OUT/bench_flash_attention.csv"
      # The peer in the same run: PyTorch SDPA (cuDNN and FlashAttention-2 back-ends) on the same shape.
      if command -v python3 >/dev/null && python3 -c "import torch" 2>/dev/null; then
        step "torch sdpa $dt causal=$causal" sdpa_$sfx.txt python3 "$ROOT/bench/torch_sdpa_peer.py" \
          --B 8 --H 16 --HKV 16 --S 4096 --D 128 --causal $causal --dtype $dt
      fi
    done
  done
fi

# ---- generated source and PTX of two samples, for reading
if [ $HAVE_CLI = 1 ]; then
  "$TG" source gemm --target cuda > "$OUT/gemm.cu" 2>&1
  "$TG" source gemm --target cuda --emit asm > "$OUT/gemm.ptx" 2>&1
fi

}
[ "${TILEGEN_SKIP_CUDA:-0}" = 1 ] || cuda_section

# ---- vulkan: the NVIDIA driver's Vulkan ICD through a Vulkan loader brought along as .deb files
# (.deb/libvulkan1_*.deb, .deb/libvulkan-dev_*.deb, unpacked into .deb/vulkan). A build of its
# own (core + cuda + vulkan plugins, so bench_vulkan can put cuBLAS beside it), then conformance
# on the cooperative-matrix path and on the plain path (TILEGEN_VULKAN_COOPMAT=0), the vulkan
# unit tests, bench_vulkan (fp16 GEMM vs cuBLAS, flash_attention vs SDPA) and a SPIR-V listing.
# Each step logs and the script goes on; TILEGEN_SKIP_VULKAN=1 leaves the section out,
# TILEGEN_VULKAN_FAST=1 the plain path's conformance and bench.
vulkan_section() {
  local prefix=$ROOT/.deb/vulkan vbuild=${TILEGEN_VULKAN_BUILD_DIR:-$ROOT/build-device-vulkan}
  local vout=$OUT/vulkan deb
  mkdir -p "$vout" "$prefix"
  for deb in "$ROOT"/.deb/libvulkan1_*.deb "$ROOT"/.deb/libvulkan-dev_*.deb; do
    dpkg -x "$deb" "$prefix" >> "$vout/deb_unpack.txt" 2>&1 || echo "dpkg -x $deb failed" | tee -a "$SUMMARY"
  done
  local libdir=$prefix/usr/lib/x86_64-linux-gnu inc=$prefix/usr/include
  [ -f "$libdir/libvulkan.so.1" ] || libdir=""
  [ -f "$inc/vulkan/vulkan.h" ] || inc=""
  [ -z "$inc" ] && [ -f /usr/include/vulkan/vulkan.h ] && inc=/usr/include
  echo "vulkan: loader ${libdir:-system (none brought along)}, headers ${inc:-missing}" | tee -a "$SUMMARY"
  if [ -z "$inc" ]; then
    echo "vulkan: no vulkan/vulkan.h (bring .deb/libvulkan-dev_*.deb); vulkan section skipped" | tee -a "$SUMMARY"
    return 0
  fi
  # The NVIDIA ICD (libGLX_nvidia.so.0) needs the GL vendor-neutral dispatch libraries, which the
  # GPU machine lacks: bring them as .gl/*.deb (apt-get download libvulkan1 libegl1 libglvnd0
  # libopengl0 libgl1 libglx0 libgles2; carry .gl) and unpack them into / (the device README's way).
  if compgen -G "$ROOT/.gl/*.deb" > /dev/null; then
    for deb in "$ROOT"/.gl/*.deb; do dpkg -x "$deb" / >> "$vout/deb_unpack.txt" 2>&1; done
    ldconfig >> "$vout/deb_unpack.txt" 2>&1
    echo "vulkan: GL dispatch libraries unpacked from .gl/" | tee -a "$SUMMARY"
  else
    echo "vulkan: no .gl/*.deb brought along: the NVIDIA ICD may fail to load (VK_ERROR_INCOMPATIBLE_DRIVER)" | tee -a "$SUMMARY"
  fi
  # The NVIDIA ICD manifest: the container's driver mount first, then the usual places.
  local icd=""
  for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
    /etc/vulkan/icd.d/nvidia_icd.json /usr/local/nvidia/icd.d/nvidia_icd.json; do
    [ -f "$f" ] && { icd=$f; break; }
  done
  echo "vulkan: ICD manifest ${icd:-not found (the loader will search its default places)}" | tee -a "$SUMMARY"
  (
    [ -n "$libdir" ] && export LD_LIBRARY_PATH="$libdir:${LD_LIBRARY_PATH:-}"
    [ -d /usr/local/nvidia/lib64 ] && export LD_LIBRARY_PATH="/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}"
    [ -n "$icd" ] && export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
    { echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"; echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"; [ -n "$icd" ] && cat "$icd"; } \
      > "$vout/environment.txt" 2>&1
    step "vulkan: configure" vulkan/configure.txt cmake -S "$ROOT" -B "$vbuild" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DTILEGEN_PLUGIN_VULKAN=ON -DTILEGEN_PLUGIN_CUDA=ON -DTILEGEN_PLUGIN_CPU=OFF -DTILEGEN_PLUGIN_HIP=OFF \
      -DTILEGEN_VULKAN_INCLUDE_DIR="$inc" -DTILEGEN_BUILD_TESTS=$TESTS "${DOCTEST_ARGS[@]}" || exit 0
    # -k 0: build what can be built (the vulkan plugin and CLI even if another part fails).
    step "vulkan: build" vulkan/build.txt ninja -C "$vbuild" -k 0 || tail -40 "$vout/build.txt"
    local tg=$vbuild/bin/tilegen
    [ -x "$tg" ] || { echo "vulkan: no tilegen CLI in $vbuild; vulkan section ends" | tee -a "$SUMMARY"; exit 0; }
    step "vulkan: tilegen targets" vulkan/targets.txt "$tg" targets
    if ! grep -q '^vulkan *available' "$vout/targets.txt"; then
      echo "vulkan: target unavailable (see vulkan/targets.txt); retrying with the loader's debug output" | tee -a "$SUMMARY"
      VK_LOADER_DEBUG=error,warn,driver "$tg" targets > "$vout/targets_loader_debug.txt" 2>&1
    fi
    if [ -x "$vbuild/bin/tilegen_unit_tests" ]; then
      step "vulkan: unit tests (vulkan*)" vulkan/unit_tests.txt "$vbuild/bin/tilegen_unit_tests" -tc="vulkan*"
    fi
    step "vulkan: conformance (cooperative-matrix path)" vulkan/conformance_coopmat.txt \
      "$tg" conformance --target vulkan --json "$vout/conformance_coopmat.json"
    [ "${TILEGEN_VULKAN_FAST:-0}" = 1 ] ||
    TILEGEN_VULKAN_COOPMAT=0 step "vulkan: conformance (plain path)" vulkan/conformance_plain.txt \
      "$tg" conformance --target vulkan --json "$vout/conformance_plain.json"
    if [ -x "$vbuild/bin/bench_vulkan" ]; then
      step "vulkan: bench (coopmat) vs cuBLAS and SDPA" vulkan/bench_vulkan.txt \
        "$vbuild/bin/bench_vulkan" "$vout/bench_vulkan.csv"
      [ "${TILEGEN_VULKAN_FAST:-0}" = 1 ] ||
      TILEGEN_VULKAN_COOPMAT=0 step "vulkan: bench (plain path)" vulkan/bench_vulkan_plain.txt \
        "$vbuild/bin/bench_vulkan" "$vout/bench_vulkan_plain.csv" --quick
    fi
    "$tg" source gemm --target vulkan > "$vout/gemm.spvasm" 2>&1
    # TILEGEN_VULKAN_EXTRA=SCRIPT: more commands in this environment (bench variants under study),
    # run as `bash SCRIPT BUILD_DIR LOG_DIR`.
    if [ -n "${TILEGEN_VULKAN_EXTRA:-}" ]; then
      step "vulkan: extra ($TILEGEN_VULKAN_EXTRA)" vulkan/extra.txt bash "$ROOT/$TILEGEN_VULKAN_EXTRA" "$vbuild" "$vout"
    fi
    TILEGEN_VULKAN_COOPMAT=0 "$tg" source gemm --target vulkan > "$vout/gemm_plain.spvasm" 2>&1
    exit 0
  )
  # step() inside the subshell counted its failures there: count them again from the summary.
  FAILED=$((FAILED + $(grep -c '^\[.*\] vulkan: .*: exit [1-9]' "$SUMMARY")))
}
[ "${TILEGEN_SKIP_VULKAN:-0}" = 1 ] || vulkan_section

# ---- cpu: a cpu plugin built on Debian (tools/make_cpu_bundle.sh), carried as
# .cpubundle/cpu_bundle.tar.xz with its libLLVM-19 and oneTBB, run on this machine's CPU: the
# host's features decide the code (AVX-512 and prefer-vector-width=512 where the CPU has them,
# avx512_bf16 and AMX for bf16 GEMM). Conformance (each bf16 scheme), the cpu unit tests, the
# gemm assembly, CLI runs of tile edges, and bench_cpu against the bundled OpenBLAS and oneDNN.
# TILEGEN_SKIP_CPU=1 leaves it out.
cpu_section() {
  local bundle=${TILEGEN_CPU_BUNDLE:-$ROOT/.cpubundle/cpu_bundle.tar.xz} cout=$OUT/cpu
  [ -f "$bundle" ] || { echo "cpu: no bundle at $bundle; cpu section skipped" | tee -a "$SUMMARY"; return 0; }
  mkdir -p "$cout"
  local dir; dir=$(mktemp -d)
  tar -C "$dir" -xJf "$bundle" || { echo "cpu: cannot unpack $bundle" | tee -a "$SUMMARY"; return 0; }
  { lscpu; grep -m1 -o 'flags.*' /proc/cpuinfo; } > "$cout/lscpu.txt" 2>&1
  (
    export LD_LIBRARY_PATH="$dir/bundle/lib:${LD_LIBRARY_PATH:-}" TILEGEN_PLUGIN_PATH="$dir/bundle/lib"
    local tg=$dir/bundle/bin/tilegen
    step "cpu: tilegen targets" cpu/targets.txt "$tg" targets
    step "cpu: conformance" cpu/conformance.txt "$tg" conformance --target cpu --json "$cout/conformance.json"
    # The bf16 schemes that are not the default, on every bf16 case, where the CPU has them.
    grep -q avx512_bf16 "$cout/lscpu.txt" && TILEGEN_CPU_AMX=0 TILEGEN_CPU_BF16_DOT=1 \
      step "cpu: conformance bf16, vdpbf16ps" cpu/conformance_bf16_dot.txt "$tg" conformance --target cpu --dtype bf16
    grep -q amx_bf16 "$cout/lscpu.txt" && TILEGEN_CPU_AMX=0 \
      step "cpu: conformance bf16, widened to f32" cpu/conformance_bf16_widened.txt "$tg" conformance --target cpu --dtype bf16
    [ -x "$dir/bundle/bin/tilegen_unit_tests" ] &&
      step "cpu: unit tests (cpu*)" cpu/unit_tests.txt "$dir/bundle/bin/tilegen_unit_tests" -tc="cpu*"
    "$tg" source gemm --target cpu --emit asm > "$cout/gemm_f32.s" 2>&1
    "$tg" source gemm --target cpu --dtype bf16 --emit asm > "$cout/gemm_bf16.s" 2>&1
    "$tg" run gemm --target cpu --dtype bf16 --set M=2048,N=2048,K=2048 > "$cout/run_gemm_bf16.txt" 2>&1
    # A bf16 (AMX) kernel from the kernel cache in a fresh process: it must ask for the tile state
    # itself (the process that compiled it did).
    local kc; kc=$(mktemp -d)
    TILEGEN_CACHE=1 TILEGEN_CACHE_DIR=$kc "$tg" run gemm --target cpu --dtype bf16 --set M=300,N=200,K=256 > /dev/null 2>&1
    TILEGEN_CACHE=1 TILEGEN_CACHE_DIR=$kc step "cpu: bf16 gemm from the kernel cache" cpu/run_gemm_bf16_cached.txt \
      "$tg" run gemm --target cpu --dtype bf16 --set M=300,N=200,K=256
    rm -rf "$kc"
    # bf16 gemm tile edges through the CLI (outside the unit-test harness): row tails, odd
    # column tiles, odd K tiles, transposes.
    local shape
    for shape in M=50,N=37,K=33,block_M=24,block_N=40,block_K=16,trans_A=1 \
                 M=70,N=100,K=45,block_M=48,block_N=48,block_K=15 M=33,N=70,K=31,block_M=16,block_N=80,block_K=7,trans_A=1,trans_B=1; do
      step "cpu: run gemm bf16 $shape" cpu/run_gemm_bf16_${shape//[=,]/_}.txt "$tg" run gemm --target cpu --dtype bf16 --set $shape
    done
    local bench=$dir/bundle/bin/bench_cpu
    # TILEGEN_CPU_EXTRA=SCRIPT: more commands in this environment (variants under study), run as
    # `bash SCRIPT BUNDLE_BIN_DIR LOG_DIR`; TILEGEN_CPU_FAST=1 leaves out the standard benches.
    if [ -n "${TILEGEN_CPU_EXTRA:-}" ]; then
      step "cpu: extra ($TILEGEN_CPU_EXTRA)" cpu/extra.txt bash "$ROOT/$TILEGEN_CPU_EXTRA" "$dir/bundle/bin" "$cout"
    fi
    if [ "${TILEGEN_CPU_FAST:-0}" = 1 ]; then
      :
    elif [ -x "$bench" ]; then
      # The issue's table on this CPU against OpenBLAS and oneDNN (bundled). bf16 three ways:
      # tilegen's default (AMX tiles where the CPU has them) against oneDNN's default (AMX too),
      # with larger K tiles; then without AMX on both sides (oneDNN held to avx512_core_bf16, its
      # vdpbf16ps kernels): tilegen widening to f32, and tilegen's vdpbf16ps path.
      step "cpu: bench_cpu gemm,bf16,softmax,attention" cpu/bench_cpu.txt \
        "$bench" --only gemm,bf16,softmax,attention --sizes 1024,2048 --threads 1,2,16
      local blk
      for blk in 192,256,256 128,128,512; do
        step "cpu: bench_cpu bf16 --block $blk" cpu/bench_cpu_bf16_block_${blk//,/x}.txt \
          "$bench" --only bf16 --sizes 2048 --threads 1,16 --block $blk
      done
      ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 DNNL_MAX_CPU_ISA=AVX512_CORE_BF16 TILEGEN_CPU_AMX=0 \
        step "cpu: bench_cpu bf16 without AMX, tilegen widening" cpu/bench_cpu_bf16_noamx.txt \
        "$bench" --only bf16 --sizes 1024,2048 --threads 1,2,16
      ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 DNNL_MAX_CPU_ISA=AVX512_CORE_BF16 TILEGEN_CPU_AMX=0 TILEGEN_CPU_BF16_DOT=1 \
        step "cpu: bench_cpu bf16 without AMX, tilegen vdpbf16ps" cpu/bench_cpu_bf16_dot.txt \
        "$bench" --only bf16 --sizes 2048 --threads 1,16
    else
      for th in 1 2 16; do
        TILEGEN_NUM_THREADS=$th step "cpu: bench gemm f32 2048 threads=$th" cpu/bench_gemm_t$th.txt \
          "$tg" bench gemm --target cpu --set M=2048,N=2048,K=2048 --dtype f32 --check
        TILEGEN_NUM_THREADS=$th step "cpu: bench gemm bf16 2048 threads=$th" cpu/bench_gemm_bf16_t$th.txt \
          "$tg" bench gemm --target cpu --set M=2048,N=2048,K=2048 --dtype bf16 --check
      done
    fi
    exit 0
  )
  FAILED=$((FAILED + $(grep -c '^\[.*\] cpu: .*: exit [1-9]' "$SUMMARY")))
  rm -rf "$dir"
}
[ "${TILEGEN_SKIP_CPU:-0}" = 1 ] || cpu_section

echo "done: $FAILED step(s) failed; logs in $OUT" | tee -a "$SUMMARY"
[ $FAILED -eq 0 ]
