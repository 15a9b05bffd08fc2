// int_semantics.h: the one definition of integer /, %, << and >> (docs/language.md, "Integer
// arithmetic"), as the interpreter and constant folding compute it, as the builder folds it, and
// as the GPU device header's generated helpers compute it when compiled and run on the host.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "int_semantics_test_util.h"
#include "tilegen/ir/int_semantics.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/common/gpu_source.h"
#include "tilegen/passes/simplify.h"

using namespace tg;
using ir::int_div, ir::int_mod, ir::int_shl, ir::int_shr;

namespace {
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
}  // namespace

TEST_CASE("int semantics: floor division and modulo, MIN / -1 wraps, x / 0 = 0 and x % 0 = x") {
  CHECK(int_div(i32, 7, -2) == -4);
  CHECK(int_mod(i32, 7, -2) == -1);
  CHECK(int_div(i32, -7, 2) == -4);
  CHECK(int_mod(i32, -7, 2) == 1);
  CHECK(int_div(i32, kI32Min, -1) == kI32Min);
  CHECK(int_mod(i32, kI32Min, -1) == 0);
  CHECK(int_div(i64, kI64Min, -1) == kI64Min);
  CHECK(int_mod(i64, kI64Min, -1) == 0);
  CHECK(int_div(i8, -128, -1) == -128);
  CHECK(int_div(int4, -8, -1) == -8);
  for (DType t : {i8, i32, i64, u32, u8, int4}) {
    CHECK(int_div(t, 7, 0) == 0);
    CHECK(int_mod(t, 7, 0) == 7);
  }
  CHECK(int_div(u32, 4294967295, 2) == 2147483647);
  CHECK(int_mod(u32, 4294967295, 4294967295) == 0);
  CHECK(int_div(i64, kI64Min, 3) == -3074457345618258603);  // rounded down
}

TEST_CASE("int semantics: a count outside [0, width) shifts every bit out") {
  CHECK(int_shl(i32, 1, 31) == kI32Min);
  CHECK(int_shl(i32, 7, 32) == 0);
  CHECK(int_shl(i32, 7, 40) == 0);
  CHECK(int_shl(i32, 7, -1) == 0);
  CHECK(int_shr(i32, -7, 1) == -4);
  CHECK(int_shr(i32, -7, 40) == -1);
  CHECK(int_shr(i32, 7, 32) == 0);
  CHECK(int_shr(i32, -7, -1) == -1);
  CHECK(int_shl(i64, 1, 63) == kI64Min);
  CHECK(int_shl(i64, 1, 64) == 0);
  CHECK(int_shr(i64, kI64Min, 64) == -1);
  CHECK(int_shl(i8, 1, 7) == -128);
  CHECK(int_shl(i8, 1, 8) == 0);
  CHECK(int_shr(u32, 4294967295, 31) == 1);
  CHECK(int_shr(u32, 4294967295, 32) == 0);
  CHECK(int_shl(u8, 255, 4) == 240);
  CHECK(int_shr(int4, -8, 4) == -1);
}

TEST_CASE("int semantics: a constant divisor or count takes the unguarded path with the same answers") {
  struct Host : ir::HostIntOps {  // the host Ops, checking the recipe's promises to the hardware
    int64_t div_trunc(int64_t a, int64_t b) const {
      REQUIRE((b != 0 && b != -1));
      return HostIntOps::div_trunc(a, b);
    }
    int64_t shl(int64_t a, int64_t n) const {
      REQUIRE((n >= 0 && n < t.bits()));
      return HostIntOps::shl(a, n);
    }
    int64_t shr(int64_t a, int64_t n) const {
      REQUIRE((n >= 0 && n < t.bits()));
      return HostIntOps::shr(a, n);
    }
  };
  for (DType t : {i8, i16, i32, i64, u32, u8, int4, uint4})
    for (const test::IntCase& c : test::int_cases(t)) {
      INFO(t.name() << " " << c.a << " op " << c.b);
      Host g{{t}};
      for (bool div : {true, false}) {
        CHECK(ir::lower_int_div(g, div, c.a, c.b, t) == ir::lower_int_div(g, div, c.a, c.b, t, c.b));
        CHECK(ir::lower_int_shift(g, div, c.a, c.b, t) == ir::lower_int_shift(g, div, c.a, c.b, t, c.b));
      }
    }
}

TEST_CASE("int semantics: the builder folds constants with the same answers, without trapping") {
  Expr min64 = Expr(kI64Min);
  CHECK(*(min64 / Expr(int64_t(-1))).as_int() == kI64Min);  // was SIGFPE in the constructor
  CHECK(*(min64 % Expr(int64_t(-1))).as_int() == 0);
  CHECK(*(Expr(kI32Min) / Expr(-1)).as_int() == kI32Min);
  CHECK(*(Expr(7) / Expr(0)).as_int() == 0);
  CHECK(*(Expr(7) % Expr(0)).as_int() == 7);
  CHECK(*(Expr(1) << Expr(100)).as_int() == 0);
  CHECK(*(Expr(-7) >> Expr(40)).as_int() == -1);
  CHECK(*(Expr(int64_t(1) << 40) << Expr(int64_t(100) << 33)).as_int() == 0);
  Expr max64 = Expr(std::numeric_limits<int64_t>::max());
  CHECK(*(max64 * max64).as_int() == 1);  // wraps, as at run time (was signed overflow)
  CHECK(*(-min64).as_int() == kI64Min);
  CHECK(*ceildiv(Expr(7), Expr(0)).as_int() == 0);
  CHECK(*ceildiv(min64, Expr(int64_t(-1))).as_int() == kI64Min + 2);  // (MIN - 2 wraps to MAX - 1) / -1
}

TEST_CASE("int semantics: log2_exact") {
  CHECK(ir::log2_exact(1) == 0);
  CHECK(ir::log2_exact(64) == 6);
  CHECK(ir::log2_exact(int64_t(1) << 62) == 62);
  CHECK(ir::log2_exact(0) == -1);
  CHECK(ir::log2_exact(-8) == -1);
  CHECK(ir::log2_exact(96) == -1);
  CHECK(ir::log2_exact(kI64Min) == -1);
}

namespace {

std::string cxx_literal(DType t, int64_t v) {
  std::string n = v == kI64Min ? "(-9223372036854775807LL - 1)" : std::to_string(v) + "LL";
  return "(" + gpu::value_type(t) + ")" + n;
}

// A host program printing every case's four results through the device header's helpers.
std::string helper_program(const std::vector<std::pair<DType, std::vector<test::IntCase>>>& work) {
  using ir::BinOp;
  std::string p = "#define TG_DEVICE static inline\n#include <cstdio>\ntypedef unsigned int tg_u32;\n" +
                  gpu::gpu_device_header_int_ops() + "int main() {\n";
  for (auto& [t, cases] : work)
    for (const test::IntCase& c : cases)
      for (BinOp op : {BinOp::Div, BinOp::Mod, BinOp::Shl, BinOp::Shr})
        p += "  std::printf(\"%lld\\n\", (long long)" + gpu::gpu_int_helper(op, t) + "(" +
             cxx_literal(t, c.a) + ", " + cxx_literal(t, c.b) + "));\n";
  return p + "}\n";
}

}  // namespace

TEST_CASE("int semantics: the GPU device header's generated helpers compute the same, compiled on the host") {
  std::vector<std::pair<DType, std::vector<test::IntCase>>> work;
  for (DType t : {i8, u8, i16, i32, u32, i64, int4, uint4}) work.emplace_back(t, test::int_cases(t));
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tg_int_helpers_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "h.cpp") << helper_program(work);
  std::string cmd = std::string(TILEGEN_HOST_CXX) +
                    " -std=c++17 -O1 -Wall -Werror -fsanitize=undefined "
                    "-fno-sanitize-recover=all " +
                    (dir / "h.cpp").string() + " -o " + (dir / "h").string() + " 2>&1";
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
  FILE* out = popen((dir / "h").string().c_str(), "r");
  REQUIRE(out);
  for (auto& [t, cases] : work)
    for (const test::IntCase& c : cases)
      for (int64_t want : test::int_expected(t, c)) {
        long long got = 0;
        REQUIRE(std::fscanf(out, "%lld", &got) == 1);
        INFO(t.name() << " a=" << c.a << " b=" << c.b);
        CHECK(wrap_int_to(t, got) == want);  // narrow values are held in int, wrapped at the store
      }
  CHECK(pclose(out) == 0);
  fs::remove_all(dir);
}

TEST_CASE("int semantics: IR text with MIN / -1, x / 0 and overflowing constants folds instead of trapping") {
  // The hostile repros ir/div_i64min.tgir, div_intmin.tgir, div_zero_const.tgir and
  // i64_mul_overflow_const.tgir: the parser's expression constructors folded with SIGFPE or UB.
  Function f = parse_function(
      "func f(X: i64[16] global, Y: i32[16] global) {\n kernel grid(1) threads(1) -> (bx; tx) {\n"
      "  X[0] = -9223372036854775808:i64 / -1:i64\n  X[1] = 9223372036854775807:i64 * "
      "9223372036854775807:i64\n"
      "  X[2] = -(-9223372036854775808:i64)\n  Y[0] = -2147483648 / -1\n  Y[1] = -2147483648 % -1\n"
      "  Y[2] = 7 / 0\n  Y[3] = 7 % 0\n }\n}\n");
  std::string text = print(simplify(f, TargetInfo{}));  // the parser keeps the text; simplify folds
  INFO(text);
  CHECK(text.find("X[0] = -9223372036854775808:i64") != std::string::npos);
  CHECK(text.find("X[1] = 1:i64") != std::string::npos);
  CHECK(text.find("X[2] = -9223372036854775808:i64") != std::string::npos);
  CHECK(text.find("Y[0] = -2147483648") != std::string::npos);
  CHECK(text.find("Y[1] = 0") != std::string::npos);
  CHECK(text.find("Y[2] = 0") != std::string::npos);
  CHECK(text.find("Y[3] = 7") != std::string::npos);
}
