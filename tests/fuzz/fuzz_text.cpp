// libFuzzer target for the IR text form. Any input must either be rejected with tg::Error or
// read as a function whose printed text reads back to the same text; a verified function whose
// tensors and grid are tiny is then run by the interpreter on synthetic data. Anything else
// (a crash, a sanitizer report, another exception, a print → parse → print mismatch) is a bug.
//
// Built two ways (tests/fuzz/CMakeLists.txt): with -fsanitize=fuzzer as tilegen_fuzz_text, and
// with replay_main.cpp as the ctest `fuzz_regressions`, which replays corpus/ and regressions/.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tilegen/ir/parser.h"
#include "tilegen/ir/printer.h"
#include "tilegen/ir/verifier.h"
#include "tilegen/ir/interpreter.h"

namespace tg::fuzz {
namespace {

// TILEGEN_FUZZ_VERBOSE=1 says what became of each input (rejected where, skipped, interpreted).
bool verbose() {
  static const bool on = std::getenv("TILEGEN_FUZZ_VERBOSE") != nullptr;
  return on;
}
void note(const std::string& what) {
  if (verbose()) std::fprintf(stderr, "  %s\n", what.c_str());
}

[[noreturn]] void bug(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_text: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// print → parse → print is the identity on every text the parser accepts.
void check_round_trip(const Function& f) {
  std::string a = print(f);
  Function g;
  try {
    g = parse_function(a, "<printed>");
  } catch (const Error& e) {
    bug("printed text does not parse", std::string(e.what()) + "\n--- text:\n" + a);
  }
  std::string b = print(g);
  if (a != b) bug("print -> parse -> print changed the text", "--- first:\n" + a + "--- second:\n" + b);
}

// ---- Deciding whether a function is small enough to interpret quickly.

constexpr int64_t kSizeValue = 8;  // every size parameter
constexpr int64_t kMaxDim = 64;    // per tensor dimension
constexpr int64_t kMaxBlocks = 4;
constexpr int64_t kMaxThreads = 256;
constexpr int64_t kMaxOnChip = 4096;  // elements of one shared/fragment/local buffer
constexpr int64_t kMaxWork = 200000;  // rough element operations of one run

using Env = std::map<const ir::VarNode*, int64_t>;

std::optional<int64_t> eval(const Expr& e, const Env& env) {
  if (auto i = e.as<ir::IntImm>()) return i->value;
  if (auto v = e.as<ir::VarNode>()) {
    auto it = env.find(v);
    return it == env.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  auto b = e.as<ir::Binary>();
  if (!b) return std::nullopt;
  auto x = eval(b->a, env), y = eval(b->b, env);
  if (!x || !y) return std::nullopt;
  int64_t r = 0;
  switch (b->op) {
    case ir::BinOp::Add:
      if (__builtin_add_overflow(*x, *y, &r)) return std::nullopt;
      return r;
    case ir::BinOp::Sub:
      if (__builtin_sub_overflow(*x, *y, &r)) return std::nullopt;
      return r;
    case ir::BinOp::Mul:
      if (__builtin_mul_overflow(*x, *y, &r)) return std::nullopt;
      return r;
    case ir::BinOp::Div:
      if (*y == 0 || (*x == INT64_MIN && *y == -1)) return std::nullopt;
      return *x / *y - ((*x % *y != 0) && ((*x < 0) != (*y < 0)));
    case ir::BinOp::Min: return std::min(*x, *y);
    case ir::BinOp::Max: return std::max(*x, *y);
    default: return std::nullopt;
  }
}

std::optional<int64_t> product(const std::vector<Expr>& dims, const Env& env, int64_t max_each) {
  int64_t n = 1;
  for (auto& d : dims) {
    auto v = eval(d, env);
    if (!v || *v < 0 || *v > max_each || __builtin_mul_overflow(n, *v, &n)) return std::nullopt;
  }
  return n;
}

// A rough count of the element operations of one launch, or nullopt when unknown or above
// kMaxWork. `runs`: how often s runs per launch; `lanes`: the threads running an element
// statement each time (the block's, or 1 inside a parallel loop, whose iterations they share).
std::optional<int64_t> work(const Stmt& s, const Env& env, int64_t runs, int64_t lanes) {
  if (!s) return 0;
  auto times = [&](std::optional<int64_t> n) -> std::optional<int64_t> {
    if (!n || *n > kMaxWork || runs * *n > kMaxWork) return std::nullopt;
    return runs * *n;
  };
  auto sum = [&](const std::vector<Stmt>& parts) -> std::optional<int64_t> {
    int64_t total = 0;
    for (auto& p : parts) {
      auto w = work(p, env, runs, lanes);
      if (!w || (total += *w) > kMaxWork) return std::nullopt;
    }
    return total;
  };
  switch (s->kind) {
    case ir::StmtKind::Kernel: {
      auto k = s.as<ir::Kernel>();
      auto blocks = product(k->grid, env, kMaxBlocks);
      if (!blocks || *blocks > kMaxBlocks || k->threads < 1 || k->threads > kMaxThreads) return std::nullopt;
      for (auto& b : k->buffers) {
        auto n = b ? product(b->shape, env, kMaxOnChip) : std::nullopt;
        if (!n || *n > kMaxOnChip) return std::nullopt;
      }
      return work(k->body, env, runs * *blocks, k->threads);
    }
    case ir::StmtKind::For: {
      auto f = s.as<ir::For>();
      auto lo = eval(f->min, env), n = eval(f->extent, env);
      if (!lo || !n || *n > kMaxWork || runs * *n > kMaxWork) return std::nullopt;
      return work(f->body, env, runs * std::max<int64_t>(*n, 1),
                  f->for_kind == ForKind::Parallel ? 1 : lanes);
    }
    case ir::StmtKind::Seq: return sum(s.as<ir::Seq>()->stmts);
    case ir::StmtKind::If: return sum({s.as<ir::If>()->then_body, s.as<ir::If>()->else_body});
    case ir::StmtKind::Let: return sum({s.as<ir::Let>()->body});
    case ir::StmtKind::Copy: return times(product(s.as<ir::Copy>()->src.extents, env, kMaxOnChip));
    case ir::StmtKind::Fill: return times(product(s.as<ir::Fill>()->dst.extents, env, kMaxOnChip));
    case ir::StmtKind::Reduce: {
      auto src = s.as<ir::Reduce>()->src;
      return src ? times(product(src->shape, env, kMaxOnChip)) : std::nullopt;
    }
    case ir::StmtKind::Gemm: {  // M·N·K = sqrt(MK · KN · MN)
      auto g = s.as<ir::Gemm>();
      auto a = product(g->a.extents, env, kMaxDim), b = product(g->b.extents, env, kMaxDim),
           c = product(g->c.extents, env, kMaxDim);
      if (!a || !b || !c) return std::nullopt;
      return times(int64_t(std::sqrt(double(*a) * double(*b) * double(*c))) + 1);
    }
    default: return times(lanes);  // element statements, mma, barriers
  }
}

// Synthetic arguments: sizes kSizeValue, tensors filled with a small byte pattern, scalars 1.
void interpret_small(const Function& f) {
  Env env;
  for (auto& p : f.params)
    if (p.kind == Param::Kind::Size && p.var.defined()) env[p.var.node()] = kSizeValue;
  std::vector<std::vector<uint8_t>> storage;
  std::vector<HostArg> args;
  for (auto& p : f.params) {
    if (p.kind == Param::Kind::Size) continue;
    HostArg a;
    if (p.kind == Param::Kind::Scalar) {
      a.is_tensor = false;
      a.dtype = p.var.dtype();
      a.scalar = a.dtype.is_float() ? Scalar::of_float(1.0) : Scalar::of_int(1);
    } else {
      int64_t numel = 1;
      for (auto& d : p.buffer->shape) {
        auto v = eval(d, env);
        if (!v || *v < 0 || *v > kMaxDim)
          return note("not interpreted: tensor " + p.buffer->name + " is too large");
        a.shape.push_back(*v);
        numel *= *v;
      }
      a.dtype = p.buffer->dtype;
      std::vector<uint8_t> bytes(storage_bytes(a.dtype, numel) + 1);
      for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t((i * 37 + 11) & 0x3f);
      storage.push_back(std::move(bytes));
      a.data = storage.back().data();
    }
    args.push_back(std::move(a));
  }
  auto w = work(f.body, env, 1, 1);
  if (!w || *w > kMaxWork) return note("not interpreted: too much work, or a grid or loop of unknown size");
  InterpretOptions opt;
  opt.num_threads = 1;
  interpret(f, args, opt);
  note("interpreted");
}

}  // namespace

int check_text(const uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    Function f = parse_function(text, "<fuzz>");
    check_round_trip(f);
    verify(f);
    interpret_small(f);
  } catch (const Error& e) {
    note(std::string("rejected: ") + e.what());  // the expected outcome for most inputs
  }
  return 0;
}

}  // namespace tg::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  return tg::fuzz::check_text(data, size);
}
