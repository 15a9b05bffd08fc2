// Expression evaluation for one lane, element access and the shared-memory race bookkeeping.
// Values are Scalars in the node's dtype: floats computed in double and rounded to the dtype
// after every operation (f32 ops round to float, f64 stay double), integers wrapped to their width.
#include <algorithm>
#include <cmath>
#include <optional>

#include "interp_internal.h"
#include "tilegen/ir/access_check.h"
#include "tilegen/ir/int_semantics.h"

namespace tg::interp {

using ir::BinOp;
using ir::Intrinsic;
using ir::UnOp;

namespace {

inline double round_to(DType t, double v) {
  if (t.code == TypeCode::F32) return double(float(v));
  if (t.code == TypeCode::F64) return v;
  return round_float_to(t, v);
}

inline int64_t wrap_to(DType t, int64_t v) {
  if (t.code == TypeCode::I32) return int32_t(uint32_t(uint64_t(v)));
  if (t.code == TypeCode::I64) return v;
  return wrap_int_to(t, v);
}

}  // namespace

std::string index_text(const int64_t* v, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void BlockExec::fail(const std::string& message) const {
  throw Error(message + block_name_, cur_ && cur_->src ? cur_->src->loc : SourceLoc{});
}

std::string BlockExec::lane_name(int lane) const {
  return lane >= T_ ? std::string("the block") : "thread " + std::to_string(lane);
}

Scalar BlockExec::eval(int32_t id, int lane) {
  const XNode& x = P.exprs[id];
  switch (x.kind) {
    case XKind::Const: return x.imm;
    case XKind::Var: return env_[std::size_t(lane) * nslots_ + x.a];
    case XKind::ThreadIdx:
      if (lane >= T_) fail("the thread index is read outside per-thread code");
      return Scalar::of_int(lane);
    case XKind::Binary: return eval_binary(x, lane);
    case XKind::Unary: {
      Scalar a = eval(x.a, lane);
      switch (UnOp(x.op)) {
        case UnOp::Neg:
          return x.type.is_float() ? Scalar::of_float(-a.f)
                                   : Scalar::of_int(wrap_to(x.type, int64_t(0 - uint64_t(a.i))));
        case UnOp::Not: return Scalar::of_int(a.i == 0);
        case UnOp::BitNot: return Scalar::of_int(wrap_to(x.type, ~a.i));
      }
      return a;
    }
    case XKind::Select: return eval(eval(x.a, lane).i ? x.b : x.c, lane);  // only the taken side
    case XKind::Cast: return convert_scalar(x.arg_type, x.type, eval(x.a, lane));
    case XKind::Call: return eval_call(x, lane);
    case XKind::Load: return eval_load(x, lane);
    case XKind::AccessCheck: return eval_access_check(x, lane);
  }
  return {};
}

namespace {
// ==, !=, <, <=, >, >= alike for integer and floating-point operands; nullopt for other ops.
template <typename T>
std::optional<Scalar> compare(BinOp op, T a, T b) {
  switch (op) {
    case BinOp::Eq: return Scalar::of_int(a == b);
    case BinOp::Ne: return Scalar::of_int(a != b);
    case BinOp::Lt: return Scalar::of_int(a < b);
    case BinOp::Le: return Scalar::of_int(a <= b);
    case BinOp::Gt: return Scalar::of_int(a > b);
    case BinOp::Ge: return Scalar::of_int(a >= b);
    default: return std::nullopt;
  }
}
}  // namespace

Scalar BlockExec::eval_binary(const XNode& x, int lane) {
  auto op = BinOp(x.op);
  if (op == BinOp::And)
    return Scalar::of_int(eval(x.a, lane).i && eval(x.b, lane).i);  // short-circuit, as in C
  if (op == BinOp::Or) return Scalar::of_int(eval(x.a, lane).i || eval(x.b, lane).i);
  Scalar sa = eval(x.a, lane), sb = eval(x.b, lane);
  if (x.arg_type.is_float()) {
    double a = sa.f, b = sb.f, r;
    if (auto c = compare(op, a, b)) return *c;
    switch (op) {
      case BinOp::Add: r = a + b; break;
      case BinOp::Sub: r = a - b; break;
      case BinOp::Mul: r = a * b; break;
      case BinOp::Div: r = a / b; break;
      case BinOp::Mod: r = a - b * std::floor(a / b); break;
      case BinOp::Min: r = std::fmin(a, b); break;
      case BinOp::Max: r = std::fmax(a, b); break;
      default: fail(std::string("operator ") + name_of(op) + " on floating-point operands");
    }
    return Scalar::of_float(round_to(x.type, r));
  }
  int64_t a = sa.i, b = sb.i, r;
  if (auto c = compare(op, a, b)) return *c;
  switch (op) {
    case BinOp::Add: r = int64_t(uint64_t(a) + uint64_t(b)); break;
    case BinOp::Sub: r = int64_t(uint64_t(a) - uint64_t(b)); break;
    case BinOp::Mul: r = int64_t(uint64_t(a) * uint64_t(b)); break;
    case BinOp::Div: r = ir::int_div(x.arg_type, a, b); break;  // int_semantics.h: never traps
    case BinOp::Mod: r = ir::int_mod(x.arg_type, a, b); break;
    case BinOp::Min: r = std::min(a, b); break;
    case BinOp::Max: r = std::max(a, b); break;
    case BinOp::BitAnd: r = a & b; break;
    case BinOp::BitOr: r = a | b; break;
    case BinOp::BitXor: r = a ^ b; break;
    case BinOp::Shl: r = ir::int_shl(x.arg_type, a, b); break;
    case BinOp::Shr: r = ir::int_shr(x.arg_type, a, b); break;
    default: r = 0;
  }
  return Scalar::of_int(wrap_to(x.type, r));
}

Scalar BlockExec::eval_call(const XNode& x, int lane) {
  double a = eval(x.a, lane).f, r;
  switch (Intrinsic(x.op)) {
    case Intrinsic::Exp: r = std::exp(a); break;
    case Intrinsic::Exp2: r = std::exp2(a); break;
    case Intrinsic::Log: r = std::log(a); break;
    case Intrinsic::Log2: r = std::log2(a); break;
    case Intrinsic::Sqrt: r = std::sqrt(a); break;
    case Intrinsic::Rsqrt: r = 1.0 / std::sqrt(a); break;
    case Intrinsic::Abs: r = std::fabs(a); break;
    case Intrinsic::Tanh: r = std::tanh(a); break;
    case Intrinsic::Sin: r = std::sin(a); break;
    case Intrinsic::Cos: r = std::cos(a); break;
    case Intrinsic::Floor: r = std::floor(a); break;
    case Intrinsic::Ceil: r = std::ceil(a); break;
    case Intrinsic::Round: r = std::nearbyint(a); break;  // half to even
    case Intrinsic::Erf: r = std::erf(a); break;
    case Intrinsic::Sigmoid: r = 1.0 / (1.0 + std::exp(-a)); break;
    case Intrinsic::Pow: r = std::pow(a, eval(x.b, lane).f); break;
    case Intrinsic::Fma: {
      double b = eval(x.b, lane).f, c = eval(x.c, lane).f;
      // Rounded once: for f32 the float fma itself; narrower types are exact enough in double.
      r = x.type.code == TypeCode::F32 ? double(std::fmaf(float(a), float(b), float(c))) : std::fma(a, b, c);
      break;
    }
    default: r = a;
  }
  return Scalar::of_float(round_to(x.type, r));
}

int64_t BlockExec::element_index(int32_t buf, const int32_t* idx, int n, int lane, const char* what) {
  const BufShape& sh = L.shapes[buf];
  int64_t v[kMaxBufferRank];
  int64_t flat = 0;
  bool ok = true;
  for (int d = 0; d < n; ++d) {
    v[d] = eval(idx[d], lane).i;
    if (v[d] < 0 || v[d] >= sh.dims[d]) ok = false;
    if (ok) flat += v[d] * sh.strides[d];  // only in-range indices, so the sum cannot overflow
  }
  if (!ok)
    fail(std::string(what) + " " + P.bufs[buf].node->name + index_text(v, n) + " by " + lane_name(lane) +
         " is out of bounds: the buffer's shape is " + index_text(sh.dims.data(), n));
  return flat;
}

// A failed check claims the access record if no failure has yet (access_check.h), and says false.
Scalar BlockExec::eval_access_check(const XNode& x, int lane) {
  if (eval(x.a, lane).i) return Scalar::of_int(1);
  const ir::AccessCheck& c = *P.checks[std::size_t(x.imm.i)];
  const int32_t* ops = &P.lists[x.b];
  std::vector<int64_t> indices, block;
  for (std::size_t d = 0; d < c.indices.size(); ++d) indices.push_back(eval(*ops++, lane).i);
  for (std::size_t d = 0; d < c.block.size(); ++d) block.push_back(eval(*ops++, lane).i);
  int64_t thread = eval(*ops, lane).i;
  std::vector<uint32_t> words = access_record(c, block, thread, indices);
  auto* record = static_cast<uint32_t*>(L.shapes[std::size_t(P.access_record)].global);
  std::lock_guard<std::mutex> lock(*L.global_lock);
  if (record[kAccessRecordSite] == 0) std::copy(words.begin(), words.end(), record);
  return Scalar::of_int(0);
}

Scalar BlockExec::eval_load(const XNode& x, int lane) {
  check_not_held(x.a, lane, "a load from");
  check_mma_registers(x.a, lane, "a load from");
  int64_t flat = element_index(x.a, &P.lists[x.b], x.c, lane, "load from");
  Scalar v = read(x.a, flat, lane);
  if (!races_[x.a].empty()) note_read(x.a, flat, lane);
  return v;
}

Scalar BlockExec::read(int32_t buf, int64_t flat, int lane) {
  const BufShape& sh = L.shapes[buf];
  if (sh.global) return load_element(P.bufs[buf].node->dtype, sh.global, flat);
  if (P.bufs[buf].node->scope == Scope::Local) {
    if (lane >= T_) fail("local buffer " + P.bufs[buf].node->name + " is read outside per-thread code");
    return storage_[buf][std::size_t(lane) * sh.numel + flat];
  }
  if (P.bufs[buf].mbarrier) mbarrier_as_data(buf, "read");
  if (!overlap_[buf].with.empty()) check_placed_read(buf, flat, lane);
  return storage_[buf][flat];
}

void BlockExec::write(int32_t buf, int64_t flat, int lane, Scalar v) {
  const BufShape& sh = L.shapes[buf];
  DType t = P.bufs[buf].node->dtype;
  if (sh.global) {
    if (t.is_packed()) {  // two elements share a byte: blocks on other host threads may touch it
      std::lock_guard<std::mutex> lock(*L.global_lock);
      store_element(t, sh.global, flat, v);
    } else {
      store_element(t, sh.global, flat, v);
    }
    return;
  }
  if (P.bufs[buf].node->scope == Scope::Local) {
    if (lane >= T_) fail("local buffer " + P.bufs[buf].node->name + " is written outside per-thread code");
    storage_[buf][std::size_t(lane) * sh.numel + flat] = v;
    return;
  }
  if (P.bufs[buf].mbarrier) mbarrier_as_data(buf, "written");
  if (!overlap_[buf].with.empty()) note_placed_write(buf, flat);
  storage_[buf][flat] = v;
}

void BlockExec::note_placed_write(int32_t buf, int64_t flat) {
  Overlap& o = overlap_[buf];
  o.written[std::size_t(flat)] = ++clock_;
  int32_t site = cur_ ? int32_t(cur_ - P.stmts.data()) : -1;
  for (int32_t other : o.with) {
    Overlap& x = overlap_[other];
    x.overwritten = clock_, x.by = buf, x.site = site;
  }
}

// Elements never written read as whatever the bytes hold on a device; this checks the ones the
// program wrote and expects back.
void BlockExec::check_placed_read(int32_t buf, int64_t flat, int lane) {
  const Overlap& o = overlap_[buf];
  uint64_t w = o.written[std::size_t(flat)];
  if (w == 0 || w > o.overwritten) return;
  auto placed = [&](int32_t b) {
    const ir::BufferNode* n = P.bufs[b].node;
    return n->name + " at bytes " + std::to_string(n->placed_offset) + " +: " + std::to_string(n->placed_bytes);
  };
  std::string where;
  if (o.site >= 0 && P.stmts[std::size_t(o.site)].src->loc.known())
    where = " at " + P.stmts[std::size_t(o.site)].src->loc.str();
  fail("shared buffer " + element_name(buf, flat) + " is read by " +
       (lane >= T_ ? std::string("the block") : "thread " + std::to_string(lane)) + " after " +
       P.bufs[o.by].node->name + ", placed on bytes it shares, was written" + where + " (" + placed(buf) + ", " +
       placed(o.by) + "): the shared-memory plan (place_shared_memory) overlaps two buffers that are live together");
}

std::string BlockExec::element_name(int32_t buf, int64_t flat) const {
  const BufShape& sh = L.shapes[buf];
  int64_t v[kMaxBufferRank];
  int n = int(sh.dims.size());
  for (int d = 0; d < n; ++d)
    v[d] = sh.strides[d] ? (flat / sh.strides[d]) % std::max<int64_t>(sh.dims[d], 1) : 0;
  return P.bufs[buf].node->name + index_text(v, n);
}

std::string BlockExec::site_lines(int32_t a, int32_t b) const {
  auto line = [&](int32_t s) {
    const SourceLoc& l = P.stmts[s].src->loc;
    return l.known() ? l.str() : std::string("<unknown>");
  };
  if (a < 0 || b < 0) return "";
  return " (" + (a == b ? "both at " + line(a) : line(a) + " and " + line(b)) + ")";
}

/// An access to an element whose async copy has not completed: it may land before or after.
void BlockExec::in_flight_access(int32_t buf, int64_t flat, int lane, const char* what) const {
  fail(std::string(what) + " of shared buffer " + element_name(buf, flat) + " by thread " + std::to_string(lane) +
       " while an async copy into it is in flight: complete it first (async_wait), and add a barrier when "
       "another thread issued it");
}

/// "thread 3", or "other threads" where two or more lanes made the access.
static std::string lanes_text(int32_t lane) {
  return lane == kManyReaders ? std::string("other threads") : "thread " + std::to_string(lane);
}

// Only real lanes are tracked: collective statements and parallel-loop bodies (the virtual
// lane) are separated from per-thread code by implicit barriers.
void BlockExec::note_read(int32_t buf, int64_t flat, int lane) {
  if (lane >= T_) return;
  RaceCell& c = races_[buf][flat];
  int32_t site = int32_t(cur_ - P.stmts.data());
  if (c.in_flight > 0) in_flight_access(buf, flat, lane, "read");
  const bool waited = bulk_landed(buf, flat, lane, "a read");
  if (!waited && c.w_epoch == epoch_ && c.w_lane != lane && !ordered_after(lane, c.w_lane, c.w_own))
    fail("race on shared buffer " + element_name(buf, flat) + " between threads " + std::to_string(c.w_lane) +
         " (write) and " + std::to_string(lane) + " (read)" + site_lines(c.w_site, site) +
         ": add a barrier between the write and the read");
  if (c.a_epoch == epoch_ && c.a_lane != lane)
    fail("race on shared buffer " + element_name(buf, flat) + " between " + lanes_text(c.a_lane) +
         " (atomic) and thread " + std::to_string(lane) + " (read)" + site_lines(c.a_site, site) +
         ": add a barrier between the atomic and the read");
  note_reader(buf, flat, c, lane, site);
}

// The reader record of a cell: one lane and its clock, or (kernels with mbarriers) each lane's.
void BlockExec::note_reader(int32_t buf, int64_t flat, RaceCell& c, int lane, int32_t site) {
  const uint32_t own = own_clock(lane);
  if (c.r_epoch != epoch_) {
    c.r_epoch = epoch_, c.r_lane = lane, c.r_site = site, c.r_own = own;
    return;
  }
  if (c.r_lane == lane) {
    c.r_own = own;
    return;
  }
  if (!lane_vc_.empty()) {
    Readers& r = readers_[(uint64_t(uint32_t(buf)) << 40) | uint64_t(flat)];
    if (r.epoch != epoch_ || c.r_lane != kManyReaders) {
      r.epoch = epoch_;
      r.lanes.assign(1, {c.r_lane, c.r_own});
    }
    bool found = false;
    for (auto& [l, clock] : r.lanes)
      if (l == lane) clock = own, found = true;
    if (!found) r.lanes.emplace_back(lane, own);
  }
  c.r_lane = kManyReaders;
}

// Whether every other lane's read of the cell in this interval is ordered before lane's access.
bool BlockExec::readers_ordered(int32_t buf, int64_t flat, const RaceCell& c, int lane) const {
  if (lane_vc_.empty()) return false;
  if (c.r_lane != kManyReaders) return ordered_after(lane, c.r_lane, c.r_own);
  auto it = readers_.find((uint64_t(uint32_t(buf)) << 40) | uint64_t(flat));
  if (it == readers_.end() || it->second.epoch != epoch_) return false;
  for (const auto& [l, clock] : it->second.lanes)
    if (l != lane && !ordered_after(lane, l, clock)) return false;
  return true;
}

void BlockExec::note_write(int32_t buf, int64_t flat, int lane) {
  if (lane >= T_) return;
  RaceCell& c = races_[buf][flat];
  int32_t site = int32_t(cur_ - P.stmts.data());
  if (c.in_flight > 0) in_flight_access(buf, flat, lane, "write");
  const bool waited = bulk_landed(buf, flat, lane, "a write");
  c.bulk_bar = -1;
  if (c.mma_reads > 0)
    fail("write of shared buffer " + element_name(buf, flat) + " by thread " + std::to_string(lane) +
         " while an async mma that reads it is in flight: complete it first (mma_wait), and add a barrier "
         "when another thread's warpgroup issued it");
  c.w_clock = ++write_clock_;
  if (!waited && c.w_epoch == epoch_ && c.w_lane != lane && !ordered_after(lane, c.w_lane, c.w_own))
    fail("race on shared buffer " + element_name(buf, flat) + " between threads " + std::to_string(c.w_lane) +
         " and " + std::to_string(lane) + " (both write)" + site_lines(c.w_site, site) +
         ": add a barrier, or let one thread write");
  if (c.r_epoch == epoch_ && c.r_lane != lane && !readers_ordered(buf, flat, c, lane)) {
    std::string reader = c.r_lane == kManyReaders ? "other threads" : "thread " + std::to_string(c.r_lane);
    fail("race on shared buffer " + element_name(buf, flat) + " between " + reader + " (read) and thread " +
         std::to_string(lane) + " (write)" + site_lines(c.r_site, site) +
         ": add a barrier between the read and the write");
  }
  if (c.a_epoch == epoch_ && c.a_lane != lane)
    fail("race on shared buffer " + element_name(buf, flat) + " between " + lanes_text(c.a_lane) +
         " (atomic) and thread " + std::to_string(lane) + " (write)" + site_lines(c.a_site, site) +
         ": add a barrier between the atomic and the write, or make the write an atomic");
  c.w_epoch = epoch_, c.w_lane = lane, c.w_site = site, c.w_own = own_clock(lane);
}

// An atomic read-modify-write: it races with another thread's plain write or read of the element
// in the same barrier interval (that read sees the value before or after, by scheduling), never
// with another thread's atomic.
void BlockExec::note_atomic(int32_t buf, int64_t flat, int lane) {
  if (lane >= T_) return;
  RaceCell& c = races_[buf][flat];
  int32_t site = int32_t(cur_ - P.stmts.data());
  if (c.in_flight > 0) in_flight_access(buf, flat, lane, "atomic");
  const bool waited = bulk_landed(buf, flat, lane, "an atomic");
  if (!waited && c.w_epoch == epoch_ && c.w_lane != lane)
    fail("race on shared buffer " + element_name(buf, flat) + " between threads " + std::to_string(c.w_lane) +
         " (write) and " + std::to_string(lane) + " (atomic)" + site_lines(c.w_site, site) +
         ": add a barrier between the write and the atomic, or make the write an atomic");
  if (c.r_epoch == epoch_ && c.r_lane != lane)
    fail("race on shared buffer " + element_name(buf, flat) + " between " + lanes_text(c.r_lane) +
         " (read) and thread " + std::to_string(lane) + " (atomic)" + site_lines(c.r_site, site) +
         ": add a barrier between the read and the atomic");
  if (c.a_epoch != epoch_) {
    c.a_epoch = epoch_, c.a_lane = lane, c.a_site = site;
  } else if (c.a_lane != lane) {
    c.a_lane = kManyReaders;
  }
}

}  // namespace tg::interp
