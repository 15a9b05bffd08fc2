// ir::Mma with A or B read as a unit tile of a Shared buffer (`a=tile As[r, c]`): the text form,
// the verifier's refusals, and the interpreter's reading of it, equal to filling the lanes'
// registers in the unit's layout first; every lane's reads seen by the race detector.
#include <doctest/doctest.h>

#include "gpu_pass_test_util.h"
#include "tilegen/ir/verifier.h"

using namespace tg;

namespace {

// Two subgroups of 32, each C(16x16) += A(rows of its warp)·B through coopmat_16x16x16_f16_f32,
// whose layout gives lane L's register r the element ((L·8 + r) / 16, (L·8 + r) % 16).
std::string kernel(const std::string& a, const std::string& b, const std::string& fills,
                   const std::string& barrier = "    barrier\n") {
  return "func f(A: f16[32, 16] global, B: f16[16, 16] global, C: f32[32, 16] global) {\n"
         "  kernel grid(1) threads(64) -> (bx; tx) {\n"
         "    shared As: f16[32, 16]\n"
         "    shared Bs: f16[16, 16]\n"
         "    local Ar: f16[8]\n"
         "    local Br: f16[8]\n"
         "    local Cr: f32[8]\n"
         "    for i in serial(0 +: 8) {\n"
         "      As[(tx * 8 + i) / 16, (tx * 8 + i) % 16] = A[(tx * 8 + i) / 16, (tx * 8 + i) % 16]\n"
         "    }\n"
         "    for i in serial(0 +: 4) {\n"
         "      Bs[(tx * 4 + i) / 16, (tx * 4 + i) % 16] = B[(tx * 4 + i) / 16, (tx * 4 + i) % 16]\n"
         "    }\n"
         "    for i in serial(0 +: 8) {\n"
         "      Cr[i] = 0.0\n"
         "    }\n" +
         barrier + fills + "    mma \"coopmat_16x16x16_f16_f32\" a=" + a + ", b=" + b +
         ", c=Cr[0]\n"
         "    for i in serial(0 +: 8) {\n"
         "      C[tx / 32 * 16 + (tx % 32 * 8 + i) / 16, (tx % 32 * 8 + i) % 16] = Cr[i]\n"
         "    }\n"
         "  }\n"
         "}\n";
}

const std::string kRegisterFills =
    "    for i in serial(0 +: 8) {\n"
    "      Ar[i] = As[tx / 32 * 16 + (tx % 32 * 8 + i) / 16, (tx % 32 * 8 + i) % 16]\n"
    "    }\n"
    "    for i in serial(0 +: 8) {\n"
    "      Br[i] = Bs[(tx % 32 * 8 + i) / 16, (tx % 32 * 8 + i) % 16]\n"
    "    }\n";

std::string verify_error(const std::string& text) {
  try {
    verify(parse_function(text));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string run_error(const std::string& text) {
  try {
    test::run_on_random(parse_function(text), 3);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("mma tile operands: read back, and the interpreter reads them by the unit's layout") {
  const std::string tiles = kernel("tile As[tx / 32 * 16, 0]", "tile Bs[0, 0]", "");
  Function f = parse_function(tiles);
  verify(f);
  CHECK(print(f).find("mma \"coopmat_16x16x16_f16_f32\" a=tile As[tx / 32 * 16, 0], b=tile Bs[0, 0], c=Cr[0]") !=
        std::string::npos);
  CHECK(print(parse_function(print(f))) == print(f));
  // the same products as registers filled in the layout (test_matrix_unit.cpp checks those
  // against a plain matmul)
  Function regs = parse_function(kernel("Ar[0]", "Br[0]", kRegisterFills));
  verify(regs);
  test::check_same_results(regs, f, 1e-6);
  // one operand a tile, the other registers
  test::check_same_results(regs, parse_function(kernel("Ar[0]", "tile Bs[0, 0]", kRegisterFills)), 1e-6);
}

TEST_CASE("mma tile operands: the verifier refuses what is no tile") {
  CHECK(verify_error(kernel("tile Ar[0]", "tile Bs[0, 0]", "")).find("a shared buffer of rank 2 or more") !=
        std::string::npos);
  CHECK(verify_error(kernel("tile As[0]", "tile Bs[0, 0]", "")).find("1 indices for a buffer of rank 2") !=
        std::string::npos);
  CHECK(verify_error(kernel("tile As[24, 0]", "tile Bs[0, 0]", "")).find("spans [24, 40) of dimension 0") !=
        std::string::npos);
  CHECK(verify_error(kernel("tile As[0, 0]", "tile As[16, 0]", "")).empty());  // any tile of the right shape
  const std::string c_tile = "func f(S: f32[16, 16] global) {\n"
                             "  kernel grid(1) threads(32) -> (bx; tx) {\n"
                             "    shared As: f16[16, 16]\n"
                             "    shared Cs: f32[16, 16]\n"
                             "    mma \"coopmat_16x16x16_f16_f32\" a=tile As[0, 0], b=tile As[0, 0], c=tile Cs[0, 0]\n"
                             "  }\n"
                             "}\n";
  CHECK(verify_error(c_tile).find("the accumulator C is each lane's registers") != std::string::npos);
}

TEST_CASE("mma tile operands: lanes naming different tiles, and unsynchronised reads, are errors") {
  // lanes of one subgroup on two tiles
  CHECK(run_error(kernel("tile As[tx % 2 * 16, 0]", "tile Bs[0, 0]", "")).find("read one tile together") !=
        std::string::npos);
  // no barrier between the threads' stores into the tiles and the mma's reads: a race
  CHECK(run_error(kernel("tile As[tx / 32 * 16, 0]", "tile Bs[0, 0]", "", "")) != "");
}
