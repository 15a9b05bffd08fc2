// lower_tile_ops and serialize_threads: IR in → IR out, and every sample (dtypes, test shapes,
// ragged ones included) still gives its float64 reference when the interpreter runs the output
// of each pass.
#include <doctest/doctest.h>

#include <random>

#include "sample_test_util.h"
#include "test_pass_ir.h"
#include "tilegen/ir/interpreter.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/ir/visitor.h"
#include "tilegen/passes/bind_sizes.h"
#include "tilegen/passes/lower_tile_ops.h"
#include "tilegen/passes/pipeline.h"
#include "tilegen/passes/serialize_threads.h"
#include "tilegen/passes/simplify.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::test;

namespace {

/// Counts of statement kinds in lowered IR.
struct Census : IRVisitor {
  int copies = 0, fills = 0, gemms = 0, reduces = 0, barriers = 0, parallel = 0, thread_refs = 0;
  const ir::VarNode* tx = nullptr;
  void visit(const ir::Copy* op) override { ++copies, IRVisitor::visit(op); }
  void visit(const ir::Fill* op) override { ++fills, IRVisitor::visit(op); }
  void visit(const ir::Gemm* op) override { ++gemms, IRVisitor::visit(op); }
  void visit(const ir::Reduce* op) override { ++reduces, IRVisitor::visit(op); }
  void visit(const ir::Barrier*) override { ++barriers; }
  void visit(const ir::For* op) override {
    parallel += op->for_kind == ForKind::Parallel, IRVisitor::visit(op);
  }
  void visit(const ir::VarNode* op) override { thread_refs += op == tx; }
  void visit(const ir::Kernel* op) override {
    tx = op->thread_var.node();
    IRVisitor::visit(op);
  }
};

Census census(const Function& f) {
  Census c;
  c.visit_stmt(f.body);
  return c;
}

using Stage = std::function<Function(const Function&)>;

/// Run sample `name` (every dtype and interpreter-sized test shape) through `stages`, checking
/// the interpreter's result on the output of every stage.
void run_sample_through(const std::string& name, const std::vector<std::pair<std::string, Stage>>& stages) {
  using namespace tg::samples;
  const Sample* s = find(name);
  REQUIRE(s != nullptr);
  std::mt19937_64 rng(99);
  TargetInfo info;
  for (size_t i = 0; i < s->test_shapes.size(); ++i) {
    if (s->test_shape_info[i].conformance_only) continue;
    for (DType t : s->dtypes) {
      Params p = resolve(*s, s->test_shapes[i]);
      Kernel k = s->build(p, t);
      Function f = k.function();
      for (auto& pass : default_pipeline()) f = pass.run(f, info);
      for (auto& [stage, run] : stages) {
        INFO(name << " [" << s->test_shape_info[i].label << "] " << t.name() << " after " << stage);
        f = run(f);
        CHECK_NOTHROW(verify(f));
        Problem pr = s->make_problem(p, t, rng);
        interpret(f, host_args(f, pr));
        testing::check_outputs(pr, s->tolerance(p, t));
      }
    }
  }
}

const TargetInfo kInfo;

std::vector<std::pair<std::string, Stage>> cpu_stages() {
  return {
      {"lower_tile_ops", [](const Function& f) { return lower_tile_ops(f, kInfo); }},
      {"lower_tile_ops (reduce lanes 4)",
       [](const Function& f) {
         LowerTileOpsOptions o;
         o.reduce_lanes = 4;
         return lower_tile_ops(f, kInfo, o);
       }},
      {"simplify", [](const Function& f) { return simplify(f, kInfo); }},
      {"serialize_threads", [](const Function& f) { return serialize_threads(f, kInfo); }},
      {"simplify", [](const Function& f) { return simplify(f, kInfo); }},
  };
}

}  // namespace

TEST_CASE("lower_tile_ops: a bounds-checked copy becomes a guarded parallel nest") {
  Var bx("bx"), tx("tx");
  Buffer A = global("A", {100, 32}), C = global("C", {100, 32});
  Buffer S = shared("S", {64, 32});
  auto cp = [&](Region src, Region dst) { return copy(std::move(src), std::move(dst)); };
  Stmt body = seq({cp(region(A, {bx * 64, 0}, {64, 32}), region(S, {0, 0}, {64, 32})),
                   cp(region(S, {0, 0}, {64, 32}), region(C, {bx * 64, 0}, {64, 32}))});
  Function f = function("f", {tensor_param(A), tensor_param(C)}, kernel({2}, {bx}, 32, tx, body, {S}));
  Function g = simplify(lower_tile_ops(f, kInfo), kInfo);
  std::string text = print(g);
  INFO(text);
  Census c = census(g);
  CHECK(c.copies == 0);
  CHECK(c.parallel == 4);
  CHECK(text.find("select(") != std::string::npos);           // ragged read: rows 100..127
  CHECK(text.find("bx*64 + c0 < 100") != std::string::npos);  // ragged write
  std::vector<float> a(100 * 32), out(100 * 32, -1.f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i);
  std::vector<HostArg> args{{a.data(), {100, 32}, f32, {}, true}, {out.data(), {100, 32}, f32, {}, true}};
  interpret(g, args);
  CHECK(out == a);
}

TEST_CASE("lower_tile_ops: a one-element fill stays collective") {
  Var bx("bx"), tx("tx");
  Buffer C = global("C", {4}, i32);
  auto fill = std::make_shared<ir::Fill>(SourceLoc("t", 1));
  fill->dst = region(C, {bx}, {1});
  fill->value = make_int(7);
  Function f = function("f", {tensor_param(C)}, kernel({4}, {bx}, 8, tx, Stmt(fill)));
  Function g = simplify(lower_tile_ops(f, kInfo), kInfo);
  CHECK(census(g).fills == 0);
  CHECK(census(g).parallel == 1);
  std::vector<int32_t> out(4, 0);
  interpret(g, {{out.data(), {4}, i32, {}, true}});
  CHECK(out == std::vector<int32_t>{7, 7, 7, 7});
}

TEST_CASE("lower_tile_ops: gemm stays a tile statement when asked to") {
  const auto& s = *samples::find("gemm");
  Function f = s.build(samples::resolve(s, {{"M", 64}, {"N", 64}, {"K", 64}}), f32).function();
  LowerTileOpsOptions keep;
  keep.lower_gemm = false;
  Function kept = lower_tile_ops(f, kInfo, keep);
  CHECK(census(kept).gemms == 1);
  CHECK(census(kept).copies == 0);
  CHECK(census(lower_tile_ops(f, kInfo)).gemms == 0);
}

TEST_CASE("serialize_threads: barriers become thread loops; per-thread lets become arrays") {
  // t = X[tx] * 2 (per thread); S[tx] = t; barrier; Y[tx] = S[7 - tx] + t
  Var bx("bx"), tx("tx"), t("t");
  Buffer X = global("X", {8}), Y = global("Y", {8});
  Buffer S = shared("S", {8});
  Stmt body = let(t, X.load({tx}) * 2.0f,
                  seq({store(S, {tx}, t), barrier(), store(Y, {tx}, S.load({make_int(7) - tx}) + t)}));
  Function f = function("f", {tensor_param(X), tensor_param(Y)}, kernel({1}, {bx}, 8, tx, body, {S}));
  Function g = serialize_threads(f, kInfo);
  INFO(print(g));
  CHECK_NOTHROW(verify(g));
  Census c = census(g);
  CHECK(c.barriers == 0);
  CHECK(c.thread_refs == 0);
  CHECK(g.body.as<ir::Kernel>()->threads == 1);
  std::vector<float> x{0, 1, 2, 3, 4, 5, 6, 7}, y(8, -1.f), want(8);
  for (int i = 0; i < 8; ++i) want[size_t(i)] = x[size_t(7 - i)] * 2 + x[size_t(i)] * 2;
  interpret(g, {{x.data(), {8}, f32, {}, true}, {y.data(), {8}, f32, {}, true}});
  CHECK(y == want);
}

TEST_CASE("lower_tile_ops + serialize_threads: gemm, gemm_relu, softmax, rmsnorm through the interpreter") {
  for (const char* name : {"gemm", "gemm_relu", "softmax", "rmsnorm"}) run_sample_through(name, cpu_stages());
}

TEST_CASE(
    "lower_tile_ops + serialize_threads: attention, dequant_gemm, conv2d, block_reduce through the "
    "interpreter") {
  for (const char* name : {"flash_attention", "dequant_gemm", "conv2d", "block_reduce"})
    run_sample_through(name, cpu_stages());
}
