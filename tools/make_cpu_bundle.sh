#!/usr/bin/env bash
# make_cpu_bundle.sh BUILD_DIR OUT_FILE — pack a built cpu plugin (tilegen CLI, unit tests,
# libtilegen.so, libtilegen_cpu.so) with the shared libraries it needs beyond glibc and libstdc++
# (libLLVM-19, oneTBB, and theirs) into one .tar.xz, so that a machine without LLVM or oneTBB
# (the lent GPU machine: Ubuntu 24.04, no llvm-19-dev, no libtbb) can run the cpu target on its own
# CPU. tools/device_check.sh unpacks it when it is carried as .cpubundle/cpu_bundle.tar.xz and runs
# the cpu conformance suite, the cpu unit tests and a GEMM benchmark there (its cpu section).
set -euo pipefail
if [ $# -ne 2 ]; then echo "usage: $0 BUILD_DIR OUT_FILE" >&2; exit 2; fi
BUILD=$(cd "$1" && pwd)
OUTFILE=$2
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bundle/bin" "$STAGE/bundle/lib"
for f in tilegen tilegen_unit_tests; do
  [ -x "$BUILD/bin/$f" ] && cp "$BUILD/bin/$f" "$STAGE/bundle/bin/"
done
cp "$BUILD/lib/libtilegen.so" "$BUILD/lib/libtilegen_cpu.so" "$STAGE/bundle/lib/"
# Everything ldd resolves outside the C and C++ runtimes (the other machine has newer ones).
ldd "$BUILD/lib/libtilegen_cpu.so" "$STAGE/bundle/bin/"* | awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
  sort -u | grep -v -E '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' |
  grep -v "^$BUILD/" | while read -r lib; do cp -L "$lib" "$STAGE/bundle/lib/"; done
tar -C "$STAGE" -cf - bundle | xz -T2 -6 > "$OUTFILE"
ls -la "$OUTFILE"
