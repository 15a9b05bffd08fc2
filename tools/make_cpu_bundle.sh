#!/usr/bin/env bash
# make_cpu_bundle.sh BUILD_DIR OUT_FILE — pack a built cpu plugin (tilegen CLI, unit tests,
# libtilegen.so, libtilegen_cpu.so) with the shared libraries it needs beyond glibc and libstdc++
# (libLLVM-19, oneTBB, and theirs) into one .tar.xz, so that a machine without LLVM or oneTBB
# (the lent GPU machine: Ubuntu 24.04, no llvm-19-dev, no libtbb) can run the cpu target on its own
# CPU. bench_cpu comes along when built, with its peers (libopenblas.so.0, libdnnl.so.2) and theirs. tools/device_check.sh unpacks it when it is carried as .cpubundle/cpu_bundle.tar.xz and runs
# the cpu conformance suite, the cpu unit tests and a GEMM benchmark there (its cpu section).
set -euo pipefail
if [ $# -ne 2 ]; then echo "usage: $0 BUILD_DIR OUT_FILE" >&2; exit 2; fi
BUILD=$(cd "$1" && pwd)
OUTFILE=$2
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bundle/bin" "$STAGE/bundle/lib"
for f in tilegen tilegen_unit_tests bench_cpu; do
  [ -x "$BUILD/bin/$f" ] && cp "$BUILD/bin/$f" "$STAGE/bundle/bin/"
done
cp "$BUILD/lib/libtilegen.so" "$BUILD/lib/libtilegen_cpu.so" "$STAGE/bundle/lib/"
# Everything ldd resolves outside the C and C++ runtimes (the other machine has newer ones).
PEERS=()
if [ -x "$STAGE/bundle/bin/bench_cpu" ]; then
  for p in libopenblas.so.0 libdnnl.so.2; do
    f=$(ldconfig -p | awk -v n="$p" '$1 == n {print $NF; exit}')
    [ -n "$f" ] && cp -L "$f" "$STAGE/bundle/lib/$p" && PEERS+=("$STAGE/bundle/lib/$p")
  done
fi
ldd "$BUILD/lib/libtilegen_cpu.so" "$STAGE/bundle/bin/"* "${PEERS[@]}" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
  sort -u | grep -v -E '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' |
  grep -v "^$BUILD/" | while read -r lib; do cp -L "$lib" "$STAGE/bundle/lib/"; done
tar -C "$STAGE" -cf - bundle | xz -T2 -6 > "$OUTFILE"
ls -la "$OUTFILE"
