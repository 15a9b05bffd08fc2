// The shrinker (see kernel_shrink.h): greedy, first improvement kept, restarted until stuck.
#include "kernel_shrink.h"

namespace tg::fuzz {

namespace {

using Candidates = std::vector<ProgramSpec>;

// Every way of editing one op list: delete an op, inline a body, drop an else, simplify the
// expression; recursing into bodies. `emit` receives the edited list.
void edit_ops(const std::vector<OpSpec>& ops, const std::function<void(std::vector<OpSpec>)>& emit) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    auto without = ops;
    without.erase(without.begin() + std::ptrdiff_t(i));
    emit(without);
    const OpSpec& o = ops[i];
    if (!o.body.empty() && (o.kind == OpKind::IfBlock || o.kind == OpKind::KLoop)) {
      auto inlined = without;
      inlined.insert(inlined.begin() + std::ptrdiff_t(i), o.body.begin(), o.body.end());
      if (o.kind == OpKind::IfBlock) emit(inlined);
    }
    if (!o.else_body.empty()) {
      auto e = ops;
      e[i].else_body.clear();
      emit(e);
    }
    if (o.expr_depth > 0) {
      auto e = ops;
      e[i].expr_depth = o.expr_depth - 1;
      emit(e);
    }
    if (o.stages > 0) {
      auto e = ops;
      e[i].stages = o.stages > 1 ? 1 : 0;
      emit(e);
    }
    if (o.variant != 0 && o.kind != OpKind::IfBlock) {
      auto e = ops;
      e[i].variant = 0;
      emit(e);
    }
    using Body = std::vector<OpSpec> OpSpec::*;
    for (Body body : {&OpSpec::body, &OpSpec::else_body}) {
      edit_ops(o.*body, [&](std::vector<OpSpec> inner) {
        auto e = ops;
        e[i].*body = std::move(inner);
        emit(e);
      });
    }
  }
}

Candidates candidates(const ProgramSpec& p) {
  Candidates out;
  edit_ops(p.ops, [&](std::vector<OpSpec> ops) {
    ProgramSpec q = p;
    q.ops = std::move(ops);
    out.push_back(std::move(q));
  });
  auto with = [&](auto edit) {
    ProgramSpec q = p;
    edit(q);
    out.push_back(std::move(q));
  };
  if (p.M > 1) with([](ProgramSpec& q) { q.M = q.M > q.bm ? q.bm : q.M / 2 > 0 ? q.M / 2 : 1; });
  if (p.N > 1) with([](ProgramSpec& q) { q.N = q.N > q.bn ? q.bn : q.N / 2 > 0 ? q.N / 2 : 1; });
  if (p.K > 1) with([](ProgramSpec& q) { q.K = q.K > q.bk ? q.bk : q.K / 2 > 0 ? q.K / 2 : 1; });
  if (p.bm > 4) with([](ProgramSpec& q) { q.bm /= 2; });
  if (p.bn > 4) with([](ProgramSpec& q) { q.bn /= 2; });
  if (p.bk > 4) with([](ProgramSpec& q) { q.bk /= 2; });
  if (p.threads > 32) with([](ProgramSpec& q) { q.threads /= 2; });
  if (p.layout) with([](ProgramSpec& q) { q.layout = 0; });
  if (p.symbolic) with([](ProgramSpec& q) { q.symbolic = false; });
  if (p.trans_a) with([](ProgramSpec& q) { q.trans_a = false; });
  if (p.trans_b) with([](ProgramSpec& q) { q.trans_b = false; });
  if (p.out != p.acc) with([](ProgramSpec& q) { q.out = q.acc; });
  if (p.in != f32 && p.in.is_float()) with([](ProgramSpec& q) { q.in = q.acc = q.out = f32; });
  return out;
}

bool builds(const ProgramSpec& p) {
  try {
    build_program(p);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

ProgramSpec shrink_program(const ProgramSpec& p, const std::function<bool(const ProgramSpec&)>& still_fails,
                           int budget) {
  ProgramSpec best = p;
  for (bool progress = true; progress && budget > 0;) {
    progress = false;
    for (const ProgramSpec& q : candidates(best)) {
      if (budget <= 0) break;
      if (!builds(q)) continue;
      --budget;
      if (still_fails(q)) {
        best = q;
        progress = true;
        break;
      }
    }
  }
  return best;
}

}  // namespace tg::fuzz
