#include <doctest/doctest.h>

#include <cstdlib>
#include <sstream>

#include "test_pass_ir.h"
#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/passes/pass_manager.h"
#include "tilegen/passes/pipeline.h"
#include "tilegen/passes/simplify.h"

using namespace tg;
using namespace tg::test;

namespace {
// func copy(A: f32[1000] global, C: f32[1000] global):
//   kernel grid(8) threads(128) -> (bx; tx) {
//     for i in [0, 128) parallel { C[bx * 128 + i + 0] = A[bx * 128 + i] }
//   }
Function ragged_copy() {
  Var bx("bx"), tx("tx"), i("i");
  Buffer a = global("A", {Expr(1000)}), c = global("C", {Expr(1000)});
  Stmt loop = for_(i, 0, 128, store(c, {bx * 128 + (i + 0)}, a.load({bx * 128 + i})), ForKind::Parallel);
  return function("copy", {tensor_param(a), tensor_param(c)}, kernel({Expr(8)}, {bx}, 128, tx, loop));
}

// A pass that breaks the IR: it stores through a variable nothing defines.
Function break_it(const Function& f, const TargetInfo&) {
  Function g = f;
  auto k = std::make_shared<ir::Kernel>(*f.body.as<ir::Kernel>());
  k->body = seq({k->body, store(f.params[1].buffer, {Var("ghost")}, 0.0f)});
  g.body = Stmt(k);
  return g;
}

// Sets an environment variable for one scope.
struct EnvVar {
  std::string name;
  EnvVar(std::string n, const char* value) : name(std::move(n)) { setenv(name.c_str(), value, 1); }
  ~EnvVar() { unsetenv(name.c_str()); }
};

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("pass manager: stages and timings") {
  unsetenv("TILEGEN_DUMP_AFTER");
  Function f = ragged_copy();
  PassManager pm(default_pipeline());
  Function g = pm.run(f, TargetInfo{});
  auto& stages = pm.stages();
  REQUIRE(stages.size() == 6);
  CHECK(stages[0].first == "input");
  CHECK(stages[1].first == "bind_sizes");
  CHECK(stages[2].first == "simplify");
  CHECK(stages[3].first == "bounds");
  CHECK(stages[4].first == "simplify");
  CHECK(stages[5].first == "guard_masks");
  CHECK(stages[0].second == print(f));
  CHECK(stages[1].second == print(f));  // no sizes to bind
  CHECK(stages[5].second == print(g));
  CHECK(stages[2].second != stages[3].second);  // bounds added the guard
  REQUIRE(pm.timings().size() == 5);
  for (auto& [name, ms] : pm.timings()) CHECK(ms >= 0.0);
  CHECK(pm.timings()[2].first == "bounds");

  PassManagerOptions quiet;
  quiet.keep_stages = false;
  pm.run(f, TargetInfo{}, quiet);
  CHECK(pm.stages().empty());
  CHECK(pm.timings().size() == 5);
}

TEST_CASE("pass manager: dumps after a named pass, a list, or all") {
  unsetenv("TILEGEN_DUMP_AFTER");
  Function f = ragged_copy();
  PassManager pm(default_pipeline());
  std::ostringstream out;
  PassManagerOptions opt;
  opt.dump_to = &out;
  opt.dump_after = "bounds";
  pm.run(f, TargetInfo{}, opt);
  CHECK(count(out.str(), "# IR after bounds") == 1);
  CHECK(count(out.str(), "# IR after simplify") == 0);
  CHECK(out.str().find(pm.stages()[3].second) != std::string::npos);
  CHECK(print(parse_function(out.str())) == pm.stages()[3].second);  // a dump is valid IR text

  out.str("");
  opt.dump_after = " input , simplify";
  pm.run(f, TargetInfo{}, opt);
  CHECK(count(out.str(), "# IR after input") == 1);
  CHECK(count(out.str(), "# IR after simplify") == 2);  // it runs twice
  CHECK(count(out.str(), "# IR after bounds") == 0);

  out.str("");
  opt.dump_after = "all";
  pm.run(f, TargetInfo{}, opt);
  CHECK(count(out.str(), "# IR after ") == 6);

  out.str("");
  opt.dump_after = "";
  pm.run(f, TargetInfo{}, opt);
  CHECK(out.str().empty());
}

TEST_CASE("pass manager: TILEGEN_DUMP_AFTER adds to the options") {
  Function f = ragged_copy();
  PassManager pm(default_pipeline());
  std::ostringstream out;
  PassManagerOptions opt;
  opt.dump_to = &out;
  opt.dump_after = "bounds";
  {
    EnvVar env("TILEGEN_DUMP_AFTER", "simplify");
    pm.run(f, TargetInfo{}, opt);
  }
  CHECK(count(out.str(), "# IR after simplify") == 2);
  CHECK(count(out.str(), "# IR after bounds") == 1);
  out.str("");
  {
    EnvVar env("TILEGEN_DUMP_AFTER", "all");
    opt.dump_after = "";
    pm.run(f, TargetInfo{}, opt);
  }
  CHECK(count(out.str(), "# IR after ") == 6);
}

TEST_CASE("pass manager: an unknown pass name lists the passes") {
  unsetenv("TILEGEN_DUMP_AFTER");
  PassManager pm(default_pipeline());
  PassManagerOptions opt;
  opt.dump_after = "simplfy";
  std::string msg;
  try {
    pm.run(ragged_copy(), TargetInfo{}, opt);
  } catch (const Error& e) {
    msg = e.message();
  }
  CHECK(msg.find("'simplfy'") != std::string::npos);
  CHECK(msg.find("bind_sizes, simplify, bounds") != std::string::npos);
  {
    EnvVar env("TILEGEN_DUMP_AFTER", "bonds");
    opt.dump_after = "";
    msg.clear();
    try {
      pm.run(ragged_copy(), TargetInfo{}, opt);
    } catch (const Error& e) {
      msg = e.message();
    }
  }
  CHECK(msg.find("TILEGEN_DUMP_AFTER names 'bonds'") != std::string::npos);
}

TEST_CASE("pass manager: a verification failure names the pass") {
  unsetenv("TILEGEN_DUMP_AFTER");
  Function f = ragged_copy();
  PassManager pm({{"simplify", simplify}, {"broken", break_it}});
  // The error verify() itself reports for the broken output, to compare with.
  Function broken = break_it(f, TargetInfo{});
  std::string plain;
  SourceLoc plain_loc;
  try {
    verify(broken);
  } catch (const Error& e) {
    plain = e.message();
    plain_loc = e.where();
  }
  REQUIRE(!plain.empty());
  std::string msg;
  SourceLoc where;
  try {
    pm.run(f, TargetInfo{});
  } catch (const Error& e) {
    msg = e.message();
    where = e.where();
  }
  CHECK(msg == "after pass broken: " + plain);
  CHECK(msg.find("ghost") != std::string::npos);
  CHECK(where.file == plain_loc.file);
  CHECK(where.line == plain_loc.line);
  REQUIRE(pm.stages().size() == 3);  // the broken output is still there to read
  CHECK(pm.stages()[2].first == "broken");

  PassManagerOptions lax;
  lax.verify_each = false;
  CHECK_NOTHROW(pm.run(f, TargetInfo{}, lax));
}

TEST_CASE("pass manager: every entry needs a name and a function") {
  CHECK_THROWS_AS(PassManager({{"", break_it}}), Error);
  CHECK_THROWS_AS(PassManager({{"nothing", nullptr}}), Error);
}

TEST_CASE("pass manager: bind_sizes' output is held to the input's rules, its errors the user's") {
  unsetenv("TILEGEN_DUMP_AFTER");
  // A predicated copy whose box lies past the end of A once N is 100: what the verifier rejects in
  // a user's IR, and nothing after a later pass would.
  Function f = parse_function(R"(func f(A: f32[N] global, N: size) {
  kernel grid(1) threads(32) -> (bx; tx) {
    shared S: f32[16]
    copy A[200 +: 16] -> S
  }
})");
  PassManager pm(default_pipeline({{"N", 100}}));
  std::string msg;
  try {
    pm.run(f, TargetInfo{});
  } catch (const Error& e) {
    msg = e.message();
  }
  CHECK(msg.find("entirely outside A") != std::string::npos);
  CHECK(msg.find("after pass") == std::string::npos);
  REQUIRE(pm.stages().size() == 2);
  CHECK(pm.stages()[1].first == "bind_sizes");
  CHECK(pm.stages()[1].second.find("A: f32[100] global") != std::string::npos);
  // With N = 300 the box is inside; bind_sizes removed N from the parameters.
  PassManager fits(default_pipeline({{"N", 300}}));
  CHECK(fits.run(f, TargetInfo{}).sizes().empty());
}
