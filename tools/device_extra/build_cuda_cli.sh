#!/usr/bin/env bash
# build_cuda_cli.sh BUILD_DIR LOG_DIR [TARGETS...] — the build the short H200 scripts share: the
# tilegen CLI and the cuda plugin alone (no tests, no other plugins: nothing to bring along), plus
# TARGETS (bench_cuda_vs_cublas, ...). Logs in LOG_DIR/configure.txt and build.txt; exits non-zero
# with their tail when either fails.
set -u
BUILD=$1 L=$2
shift 2
mkdir -p "$L"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILEGEN_BUILD_TESTS=OFF \
  -DTILEGEN_PLUGIN_VULKAN=OFF -DTILEGEN_PLUGIN_CPU=OFF -DTILEGEN_PLUGIN_HIP=OFF -DTILEGEN_PLUGIN_NULL=OFF \
  > "$L/configure.txt" 2>&1 || { tail -20 "$L/configure.txt"; exit 1; }
ninja -C "$BUILD" tilegen_cli tilegen_cuda "$@" > "$L/build.txt" 2>&1 || { tail -40 "$L/build.txt"; exit 1; }
