// The vulkan target's own passes, IR in and IR out (targets/vulkan/src/passes/): pad_shared_rows
// and hold_accumulators, each checked on the text it writes and by the interpreter on the same
// inputs before and after; and ir::Hold itself (text form, verifier, interpreter).
#ifdef TILEGEN_HAVE_SPIRV_CODEGEN
#include <doctest/doctest.h>

#include "gpu_pass_test_util.h"
#include "passes/hold_accumulators.h"
#include "passes/mma_tiles_from_shared.h"
#include "passes/pad_shared_rows.h"
#include "passes/prefetch_tiles.h"
#include "passes/unroll_hints.h"
#include "test_vulkan_spirv_util.h"
#include "tile_storage.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/simplify.h"
#include "vulkan_pipeline.h"

using namespace tg;
using namespace tg::vulkan;
using tg::test::contains;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A 64×64×64 f16 gemm with f32 accumulators, lowered by gpu_pipeline for the device.
Function lowered_gemm(const Features& device, int threads = 128, int m = 64, int n = 64) {
  test::GemmKernel g;
  g.m = m, g.n = n, g.k = 64, g.k_tile = 32, g.threads = threads;
  g.in = "f16", g.acc = "f32", g.out = "f32";
  return PassManager(gpu_pipeline()).run(parse_function(g.text()), target_info(device, "test", false));
}

// A tile that a group copy fills, as partition_threads writes it: 64 rows of `cols` f16.
std::string copied_tile(int cols, const std::string& extra = "") {
  const std::string c = std::to_string(cols), per_row = std::to_string(cols / 8);
  return "func t(A: f16[64, " + c + "] global, B: f16[64, " + c +
         "] global) {\n"
         "  kernel grid(1) threads(64) -> (bx; tx) {\n"
         "    shared S: f16[64, " +
         c + "]\n" + "    for it in serial(0 +: " + per_row + ") {\n" +
         "      let flat: i32 = it*64 + tx\n"
         "      for v in vectorized(0 +: 8) {\n"
         "        S[flat / " +
         per_row + ", flat % " + per_row + " * 8 + v] = A[flat / " + per_row + ", flat % " + per_row +
         " * 8 + v]\n" +
         "      }\n"
         "    }\n" +
         extra +
         "    barrier\n"
         "    for it in serial(0 +: " +
         per_row + ") {\n" +
         "      let flat: i32 = it*64 + tx\n"
         "      for v in serial(0 +: 8) {\n"
         "        B[flat / " +
         per_row + ", flat % " + per_row + " * 8 + v] = S[63 - flat / " + per_row + ", flat % " + per_row +
         " * 8 + v]\n" +
         "      }\n"
         "    }\n"
         "  }\n"
         "}\n";
}

}  // namespace

TEST_CASE("pad_shared_rows: a tile only group copies fill, rows of 64 bytes, gets 16 bytes a row") {
  Function f = parse_function(copied_tile(32));
  Function g = pad_shared_rows(f, test::h200_features());
  INFO(print(g));
  CHECK(contains(print(g), "shared S: f16[64, 32] layout=padded(8)"));
  CHECK(print(parse_function(print(g))) == print(g));
  test::check_same_results(f, g);
  // the emitter lays its rows 40 elements apart: 64 × 40 / 8 uvec4s
  const auto* k = g.body.as<ir::Kernel>();
  REQUIRE(k);
  CHECK(row_pitch(*k->buffers[0].get()) == 40);
  CHECK(stored_elements(*k->buffers[0].get()) == 64 * 40);
  CHECK(vector_tiles(k->body).size() == 1);
  SpirvOutput out = emit_spirv(g, test::lavapipe_features());
  test::check_valid(out);
}

TEST_CASE("pad_shared_rows: short rows, other writers and a full budget keep the tile as it is") {
  // rows of 16 f16 (32 bytes): no bank conflict to avoid
  Function short_rows = parse_function(copied_tile(16));
  CHECK(print(pad_shared_rows(short_rows, test::h200_features())) == print(short_rows));
  // a tile also written element by element is not held as uvec4s, so not padded
  Function other = parse_function(copied_tile(32, "    S[tx, 0] = 1.0\n"));
  CHECK(vector_tiles(other.body.as<ir::Kernel>()->body).empty());
  CHECK(print(pad_shared_rows(other, test::h200_features())) == print(other));
  // 64 × 32 f16 is 4096 bytes, padded 5120: a device of 4096 bytes keeps it unpadded
  Function f = parse_function(copied_tile(32));
  Features small = test::lavapipe_features();
  small.max_shared_bytes = 4096;
  CHECK(print(pad_shared_rows(f, small)) == print(f));
  small.max_shared_bytes = 5120;
  CHECK(contains(print(pad_shared_rows(f, small)), "layout=padded(8)"));
}

TEST_CASE("pad_shared_rows: the vulkan pipeline runs it unless pad_rows=0 or vector_copies=0") {
  auto names = [](const CompileOptions& opt) {
    std::string s;
    for (const PassEntry& p : vulkan_pipeline(opt)) s += p.name + " ";
    return s;
  };
  CHECK(contains(names({}), "pad_shared_rows"));
  CompileOptions no_pad, no_vector, no_coopmat;
  no_pad.params["pad_rows"] = "0";
  no_vector.params["vector_copies"] = "0";
  no_coopmat.params["coopmat"] = "0";
  CHECK(!contains(names(no_pad), "pad_shared_rows"));
  CHECK(!contains(names(no_vector), "pad_shared_rows"));
  CHECK(contains(names({}), "hold_accumulators"));
  CHECK(!contains(names(no_coopmat), "hold_accumulators"));
  // the whole list on a lavapipe-like device pads the tile; with pad_rows=0 it does not
  Function f = parse_function(copied_tile(32));
  const TargetInfo info = target_info(test::lavapipe_features(), "test", false);
  CHECK(contains(print(PassManager(vulkan_pipeline({})).run(f, info)), "layout=padded(8)"));
  CHECK(!contains(print(PassManager(vulkan_pipeline(no_pad)).run(f, info)), "layout=padded"));
}

TEST_CASE("ir layout=padded: on shared tiles only, of at least one element") {
  auto error = [](const std::string& decl) {
    return error_of([&] {
      verify(parse_function("func p(X: f32[4] global) {\n  kernel grid(1) threads(4) -> (bx; tx) {\n    " +
                            decl + "\n    X[tx] = 0.0\n  }\n}\n"));
    });
  };
  CHECK(error("shared S: f32[4, 4] layout=padded(4)").empty());
  CHECK(contains(error("local L: f32[4, 4] layout=padded(4)"), "layout=padded(4) on local L"));
  CHECK(contains(error("shared S: f32[4, 4] layout=padded(0)"), "at least 1"));
}

TEST_CASE("hold_accumulators: the gemm accumulator is held across the K loop, its mma nest unrolled") {
  Function f = lowered_gemm(test::h200_features());
  Function g = hold_accumulators(f, test::h200_features());
  std::string text = print(g);
  INFO(text);
  // 128 threads, 64×64: 2×2 warps of 32×32, 2×2 unit tiles each (C_local: 4 tiles of 8 registers)
  CHECK(count(text, "hold Cf") == 1);
  CHECK(contains(text, "hold Cf as \"coopmat_16x16x16_f16_f32\" {\n      for ko in serial(0 +: 2)"));
  CHECK(count(text, "mma \"coopmat_16x16x16_f16_f32\"") == 4);
  for (int t = 0; t < 4; ++t) CHECK(contains(text, "c=Cf[" + std::to_string(t * 8) + "]"));
  CHECK(!contains(print(f), "hold"));
  verify(g);
  CHECK(print(parse_function(text)) == text);
  test::check_same_results(f, g);
}

TEST_CASE("hold_accumulators: a nest over 64 iterations is held but not unrolled") {
  // one warp for 128×64: 8×4 unit tiles of 16×16, 32 mmas a K step in a nest of 8×4 — unrolled;
  // 128×128 with one warp: 8×8 = 64, still unrolled; 256×128: 128, kept as a loop nest
  Function f = lowered_gemm(test::h200_features(), 32, 256, 128);
  Function g = hold_accumulators(f, test::h200_features());
  std::string text = print(g);
  INFO(text);
  CHECK(count(text, "hold Cf") == 1);
  CHECK(count(text, "mma \"coopmat_16x16x16_f16_f32\"") == 1);
  CHECK(contains(text, "c=Cf[mi*64 + ni*8]"));
}

TEST_CASE("hold_accumulators: no unit on the device, subgroups of 16, or atomics: unchanged") {
  Function f = lowered_gemm(test::h200_features());
  Features no_unit = test::h200_features();
  no_unit.coopmat_units = {"coopmat_16x16x32_i8_i32"};
  CHECK(print(hold_accumulators(f, no_unit)) == print(f));
  Features sg16 = test::h200_features();
  sg16.subgroup_size = 16;
  CHECK(print(hold_accumulators(f, sg16)) == print(f));
  // an accumulator that an atomic also updates (inside the loop) is not held there
  Function g = parse_function(R"(
func h(A: f16[16, 16] global, B: f16[16, 16] global, C: f32[16, 16] global) {
  kernel grid(1) threads(32) -> (bx; tx) {
    local a: f16[8]
    local b: f16[8]
    local c: f32[8]
    for r in unrolled(0 +: 8) {
      c[r] = 0.0
    }
    for k in serial(0 +: 2) {
      for r in unrolled(0 +: 8) {
        a[r] = A[(tx*8 + r) / 16, (tx*8 + r) % 16]
        b[r] = B[(tx*8 + r) / 16, (tx*8 + r) % 16]
      }
      mma "coopmat_16x16x16_f16_f32" a=a[0], b=b[0], c=c[0]
      mma "coopmat_16x16x16_f16_f32" a=a[0], b=b[0], c=c[0]
    }
    atomic add(c[0], 1.0)
    for r in unrolled(0 +: 8) {
      C[(tx*8 + r) / 16, (tx*8 + r) % 16] = c[r]
    }
  }
})");
  CHECK(print(hold_accumulators(g, test::h200_features())) == print(g));
}

namespace {

// The K loop of the test gemm as prefetch_tiles leaves it (lavapipe-like: no matrix units).
Function prefetched_gemm() {
  return prefetch_tiles(lowered_gemm(test::lavapipe_features()), test::lavapipe_features());
}

// Every store into the two-slot tiles inside the K loop made to fill the slot being read.
struct FillTheReadSlot : IRMutator {
  Stmt visit(const ir::Store* op, const Stmt& self) override {
    if (op->buffer->scope != Scope::Shared || op->indices.size() != 3 || op->indices[0].as_int()) return self;
    auto n = std::make_shared<ir::Store>(*op);
    n->indices[0] = simplify_expr(n->indices[0] + 1) % 2;  // (ko + 1) % 2 → (ko + 2) % 2
    return Stmt(std::move(n));
  }
};

}  // namespace

TEST_CASE("prefetch_tiles: the K loop's next tiles are loaded into registers before the compute") {
  Function f = lowered_gemm(test::lavapipe_features());
  Function g = prefetch_tiles(f, test::lavapipe_features());
  std::string text = print(g);
  INFO(text);
  // 64×32 and 32×64 f16 tiles, 128 threads: 2 group copies a thread each, 16 registers
  CHECK(contains(text, "local As_prefetch: f16[16]"));
  CHECK(contains(text, "local Bs_prefetch: f16[16]"));
  CHECK(contains(text, "let ko_next: i32 = min(ko + 1, 1)"));
  // 4 loads before the loop, 4 stores and 4 loads in it
  CHECK(count(text, "_prefetch[") == 12);
  CHECK(count(text, "] = A[") == 2 * 2);
  CHECK(vector_registers(g.body.as<ir::Kernel>()->body).size() == 2);
  CHECK(vector_tiles(g.body.as<ir::Kernel>()->body).size() == 2);
  verify(g);
  CHECK(print(parse_function(text)) == text);
  test::check_same_results(f, g);
  // the emitter moves every group copy as a uvec4, the registers as Function variables
  SpirvOutput out = emit_spirv(g, test::lavapipe_features());
  test::check_valid(out);
}

TEST_CASE("prefetch_tiles: tensors the function writes, long nests and loops without the barriers stay") {
  Function f = lowered_gemm(test::lavapipe_features());
  // a function that writes A may not read it early: the loop keeps its copies as they were
  test::GemmKernel g;
  g.m = 64, g.n = 64, g.k = 64, g.k_tile = 32, g.threads = 128, g.in = "f16", g.out = "f32";
  g.epilogue = "    fill A[0 +: 1, 0 +: 8] = 0.0\n";
  Function writes_a =
      PassManager(gpu_pipeline())
          .run(parse_function(g.text()), target_info(test::lavapipe_features(), "test", false));
  std::string text = print(prefetch_tiles(writes_a, test::lavapipe_features()));
  CHECK(!contains(text, "_prefetch"));
  // 8 threads: 32 group copies a thread for As (64 × 32 / 8 / 8), more registers than the 16 allowed
  test::GemmKernel few;
  few.m = 64, few.n = 64, few.k = 64, few.k_tile = 32, few.threads = 8, few.in = "f16", few.out = "f32";
  Function eight =
      PassManager(gpu_pipeline())
          .run(parse_function(few.text()), target_info(test::lavapipe_features(), "test", false));
  CHECK(print(prefetch_tiles(eight, test::lavapipe_features())) == print(eight));
}

TEST_CASE("double_buffer_tiles: the prefetched tiles get two slots and the loop one barrier a step") {
  Function f = prefetched_gemm();
  Function g = double_buffer_tiles(f, test::lavapipe_features());
  std::string text = print(g);
  INFO(text);
  CHECK(contains(text, "shared As: f16[2, 64, 32]"));
  CHECK(contains(text, "shared Bs: f16[2, 32, 64]"));
  CHECK(contains(text, "As[(ko + 1) % 2, "));
  CHECK(contains(text, "As[ko % 2, "));
  CHECK(contains(text, "As[0, "));
  CHECK(contains(text, "let ko_next: i32 = min(ko + 2, 1)"));
  const std::string loop = text.substr(text.find("for ko in serial"));
  CHECK(count(loop, "barrier") == 1);  // the one after the reads; none before or after the stores
  verify(g);
  CHECK(print(parse_function(text)) == text);
  test::check_same_results(f, g);
  SpirvOutput out = emit_spirv(g, test::lavapipe_features());
  test::check_valid(out);
  // the race detector checks the schedule: filling the slot being read is reported
  Function wrong = g;
  wrong.body = FillTheReadSlot().mutate(g.body);
  CHECK(contains(error_of([&] { test::run_on_random(wrong, 3); }), "race"));
}

TEST_CASE("double_buffer_tiles: every loop of a kernel or none, within the Workgroup memory") {
  Function f = prefetched_gemm();
  Features small = test::lavapipe_features();
  small.max_shared_bytes = 8192 + 1024;  // the single tiles (4096 bytes each), not twice
  CHECK(print(double_buffer_tiles(f, small)) == print(f));
  // a loop that is not as prefetch_tiles writes it is left alone
  Function plain = lowered_gemm(test::lavapipe_features());
  CHECK(print(double_buffer_tiles(plain, test::lavapipe_features())) == print(plain));
}

TEST_CASE("vulkan storage: registers and tiles are uvec4s together, or neither") {
  // only group copies touch R: R and S are uvec4s (R indexed by a loop variable: an array)
  Function both = parse_function(test::tile_through_registers(""));
  const Stmt& body = both.body.as<ir::Kernel>()->body;
  CHECK(vector_registers(body).size() == 1);
  CHECK(vector_tiles(body).size() == 1);
  test::check_valid(emit_spirv(both, test::lavapipe_features()));
  // an element store into R: R holds values, so S is stored element by element too
  Function neither = parse_function(test::tile_through_registers("    R[0] = cast<f16>(1.0)\n"));
  const Stmt& body2 = neither.body.as<ir::Kernel>()->body;
  CHECK(vector_registers(body2).empty());
  CHECK(vector_tiles(body2).empty());
  test::check_valid(emit_spirv(neither, test::lavapipe_features()));
}

namespace {

// One warp, C = 2·A·B on the coopmat model layout, with `inside` in the K loop.
std::string held_kernel(const std::string& inside, const std::string& unit = "coopmat_16x16x16_f16_f32",
                        const std::string& guard = "") {
  return R"(
func h(A: f16[16, 16] global, B: f16[16, 16] global, C: f32[16, 16] global) {
  kernel grid(1) threads(64) -> (bx; tx) {
    local a: f16[8]
    local b: f16[8]
    local c: f32[16]
    let lane: i32 = tx % 32
    for r in unrolled(0 +: 8) {
      c[r] = 0.0
      c[r + 8] = 0.0
      a[r] = A[(lane*8 + r) / 16, (lane*8 + r) % 16]
      b[r] = B[(lane*8 + r) / 16, (lane*8 + r) % 16]
    }
)" + (guard.empty() ? std::string("    if true {\n") : "    if " + guard + " {\n") +
         "    hold c as \"" + unit + R"(" {
      for k in serial(0 +: 2) {
        mma "coopmat_16x16x16_f16_f32" a=a[0], b=b[0], c=c[0]
)" + inside +
         R"(      }
    }
    }
    if tx < 32 {
      for r in unrolled(0 +: 8) {
        C[(lane*8 + r) / 16, (lane*8 + r) % 16] = c[r]
      }
    }
  }
})";
}

}  // namespace

TEST_CASE("ir hold: text form, and the interpreter runs the held accumulator as the plain one") {
  Function f = parse_function(held_kernel(""));
  verify(f);
  std::string text = print(f);
  CHECK(contains(text, "hold c as \"coopmat_16x16x16_f16_f32\" {"));
  CHECK(print(parse_function(text)) == text);
  // the same kernel without the hold computes the same
  struct Unhold : IRMutator {
    Stmt visit(const ir::Hold* op, const Stmt&) override { return mutate(op->body); }
  };
  Function plain = f;
  plain.body = Unhold().mutate(f.body);
  CHECK(!contains(print(plain), "hold"));
  test::check_same_results(plain, f);
}

TEST_CASE("ir hold: the verifier refuses lanes' accesses inside, other units, and non-accumulators") {
  auto verify_error = [](const std::string& src) { return error_of([&] { verify(parse_function(src)); }); };
  CHECK(contains(verify_error(held_kernel("        c[1] = 0.0\n")),
                 "store of c, which a hold keeps in the registers of coopmat_16x16x16_f16_f32"));
  CHECK(contains(verify_error(held_kernel("        a[0] = cast<f16>(c[0])\n")),
                 "load of c, which a hold keeps"));
  CHECK(
      contains(verify_error(held_kernel("        mma \"coopmat_16x16x16_f16_f32\" a=a[0], b=b[0], c=c[4]\n")),
               "not the start of a unit tile (a multiple of 8)"));
  CHECK(contains(verify_error(held_kernel("", "coopmat_16x16x16_f16_f16")),
                 "hold keeps a local accumulator of coopmat_16x16x16_f16_f16's C type (f16)"));
  CHECK(contains(verify_error(held_kernel("        hold c as \"coopmat_16x16x16_f16_f32\" {\n        }\n")),
                 "hold of c, which a hold keeps"));
}

TEST_CASE("ir hold: the interpreter refuses a group entering divergently and accesses it cannot see") {
  // half a subgroup enters: a group moves its accumulators together
  Function divergent = parse_function(held_kernel("", "coopmat_16x16x16_f16_f32", "tx < 48"));
  std::string e = error_of([&] { test::run_on_random(divergent, 1); });
  CHECK(contains(e, "hold of c reached by 16 of the 32 lanes of group 1"));
  // a whole subgroup skipping it is fine (warp specialisation)
  Function one_group = parse_function(held_kernel("", "coopmat_16x16x16_f16_f32", "tx < 32"));
  CHECK(error_of([&] { test::run_on_random(one_group, 1); }).empty());
  // the interpreter checks without the verifier: a load inside the hold
  Function load = parse_function(held_kernel("        a[0] = cast<f16>(c[0])\n"));
  CHECK(contains(error_of([&] { test::run_on_random(load, 1); }), "a load from c inside a hold of it"));
}

TEST_CASE("mma_tiles_from_shared: coopmat operands read from their shared tiles, the register fills dropped") {
  const Features device = test::h200_features();
  Function f = lowered_gemm(device);
  for (const Function& before : {f, hold_accumulators(f, device)}) {
    Function g = mma_tiles_from_shared(before, device);
    std::string text = print(g);
    INFO(text);
    const int mmas = count(text, "mma \"coopmat_16x16x16_f16_f32\"");
    CHECK(mmas > 0);
    CHECK(count(text, "a=tile As[") == mmas);
    CHECK(count(text, "b=tile Bs[") == mmas);
    // the registers that held A and B are gone: nothing reads them any more
    for (const Buffer& b : before.body.as<ir::Kernel>()->buffers)
      if (b->scope == Scope::Local && b->name != "Cf" && !contains(b->name, "prefetch")) {
        INFO(b->name);
        CHECK(!contains(text, " " + b->name + "["));
      }
    verify(g);
    CHECK(print(parse_function(text)) == text);
    test::check_same_results(before, g);
  }
  // without units at subgroup size 32: unchanged
  Features plain = device;
  plain.subgroup_size = 16;
  CHECK(print(mma_tiles_from_shared(f, plain)) == print(f));
  // in the pipeline, before the loop hints; not without the coopmat path
  CompileOptions opt;
  std::vector<PassEntry> passes = vulkan_pipeline(opt);
  REQUIRE(passes.size() >= 2);
  CHECK(passes[passes.size() - 2].name == "mma_tiles_from_shared");
  opt.params["coopmat"] = "0";
  for (const PassEntry& p : vulkan_pipeline(opt)) CHECK(p.name != "mma_tiles_from_shared");
}

TEST_CASE("unroll_hints: serial loops around barriers are rolled, short loops around mmas unrolled") {
  Function f = parse_function(R"(func f(X: f32[4, 128] global, Y: f32[4, 128] global) {
  kernel grid(1) threads(128) -> (bx; tx) {
    shared S: f32[128]
    for i in serial(0 +: 4) {
      S[tx] = X[i, tx]
      barrier
      Y[i, tx] = S[127 - tx]
      barrier
    }
    for j in serial(0 +: 4) {
      Y[j, tx] = 0.0
    }
  }
}
)");
  Function g = unroll_hints(f);
  std::string text = print(g);
  INFO(text);
  CHECK(contains(text, "for i in serial(0 +: 4, rolled)"));
  CHECK(contains(text, "for j in serial(0 +: 4) {"));  // no barrier: left to the driver
  verify(g);
  CHECK(print(parse_function(text)) == text);
  test::check_same_results(f, g);
  // The gemm: its loops around mmas (barriers beside them or not) are never rolled; those of at
  // most kMaxUnrolledMmaSteps constant steps become unrolled, the longer ones stay serial.
  Function gemm = lowered_gemm(test::h200_features());
  Function hinted = unroll_hints(gemm);
  struct Loops : IRVisitor {
    int unrolled_mma = 0, serial_short_mma = 0, rolled_mma = 0;
    void visit(const ir::For* op) override {
      struct HasMma : IRVisitor {
        bool found = false;
        void visit(const ir::Mma*) override { found = true; }
      } m;
      m.visit_stmt(op->body);
      if (m.found) {
        const auto trips = op->extent.as_int();
        if (op->rolled) ++rolled_mma;
        if (op->for_kind == ForKind::Unrolled) ++unrolled_mma;
        if (op->for_kind == ForKind::Serial && trips && *trips <= kMaxUnrolledMmaSteps) ++serial_short_mma;
      }
      IRVisitor::visit(op);
    }
  } before, after;
  before.visit_stmt(gemm.body);
  after.visit_stmt(hinted.body);
  INFO(print(hinted));
  CHECK(before.serial_short_mma > 0);
  CHECK(after.serial_short_mma == 0);
  CHECK(after.unrolled_mma == before.unrolled_mma + before.serial_short_mma);
  CHECK(after.rolled_mma == 0);
  verify(hinted);
  CHECK(print(parse_function(print(hinted))) == print(hinted));
  // In the pipeline, last.
  CompileOptions opt;
  std::vector<PassEntry> passes = vulkan_pipeline(opt);
  CHECK(passes.back().name == "unroll_hints");
}

#endif  // TILEGEN_HAVE_SPIRV_CODEGEN
