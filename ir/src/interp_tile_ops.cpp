// The collective tile statements, performed once per block: copy, fill, gemm, reduce. Their
// operands were checked to be the same in every thread (begin_collective), so lane 0 evaluates.
//
//   copy A[by*64 : +64, k*32 : +32] -> As      // rows past M read as 0 when check_bounds
//   gemm As, Bs -> Cf                           // Cf += As·Bs, K-sum in double, one rounding
//   reduce sum Cf axis 1 -> row_sum             // row_sum[i] = Σ_j Cf[i, j]
#include <cmath>

#include "interp_internal.h"

namespace tg::interp {

namespace {

/// A region with its numbers: offsets and extents evaluated, the buffer's shape resolved.
struct View {
  int32_t buf = -1;
  const BufShape* sh = nullptr;
  std::vector<int64_t> off, ext;
  bool global = false;
  DType dtype;
  std::string name;
};

/// A position in a View, advanced over the listed dimensions in row-major order; the other
/// dimensions stay at their offset (they have extent 1).
struct Cursor {
  const View& v;
  const std::vector<int>& dims;
  std::vector<int64_t> c;
  Cursor(const View& view, const std::vector<int>& d) : v(view), dims(d), c(d.size(), 0) {}

  int64_t coord(std::size_t d) const {
    int64_t x = v.off[d];
    for (std::size_t j = 0; j < dims.size(); ++j)
      if (std::size_t(dims[j]) == d) x += c[j];
    return x;
  }
  bool in_bounds(int64_t* flat) const {
    bool ok = true;
    int64_t f = 0;
    for (std::size_t d = 0; d < v.off.size(); ++d) {
      int64_t x = coord(d);
      ok = ok && x >= 0 && x < v.sh->dims[d];
      if (ok) f += x * v.sh->strides[d];
    }
    *flat = f;
    return ok;
  }
  std::string text() const {
    std::string s = v.name + "[";
    for (std::size_t d = 0; d < v.off.size(); ++d) s += (d ? ", " : "") + std::to_string(coord(d));
    return s + "]";
  }
  void next() {
    for (std::size_t j = dims.size(); j-- > 0;) {
      if (++c[j] < v.ext[std::size_t(dims[j])]) return;
      c[j] = 0;
    }
  }
};

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::vector<int> non_unit_dims(const View& v) {
  std::vector<int> out;
  for (std::size_t d = 0; d < v.ext.size(); ++d)
    if (v.ext[d] != 1) out.push_back(int(d));
  return out;
}

}  // namespace

static View make_view(BlockExec& x, const XRegion& r, const char* what) {
  View v;
  v.buf = r.buf;
  v.sh = &x.L.shapes[r.buf];
  v.global = v.sh->global != nullptr;
  v.dtype = x.P.bufs[r.buf].node->dtype;
  v.name = x.P.bufs[r.buf].node->name;
  for (int32_t e : r.offsets) v.off.push_back(x.eval_int(e, 0));
  for (int32_t e : r.extents) {
    v.ext.push_back(x.eval_int(e, 0));
    if (v.ext.back() < 0)
      x.fail(std::string(what) + ": region of " + v.name + " has a negative extent " + list_text(v.ext));
  }
  return v;
}

void BlockExec::exec_copy(const SNode& s) {
  bool check = static_cast<const ir::Copy*>(s.src)->check_bounds;
  View src = make_view(*this, s.regions[0], "copy"), dst = make_view(*this, s.regions[1], "copy");
  std::vector<int> sd = non_unit_dims(src), dd = non_unit_dims(dst);
  bool same = sd.size() == dd.size();
  for (std::size_t j = 0; same && j < sd.size(); ++j)
    same = src.ext[std::size_t(sd[j])] == dst.ext[std::size_t(dd[j])];
  if (!same)
    fail("copy from " + src.name + " (extents " + list_text(src.ext) + ") to " + dst.name + " (extents " +
         list_text(dst.ext) + "): the regions' shapes differ, unit dimensions aside; make the extents match");
  int64_t count = 1;
  for (int d : sd) count *= src.ext[std::size_t(d)];
  Cursor cs(src, sd), cd(dst, dd);
  for (int64_t e = 0; e < count; ++e, cs.next(), cd.next()) {
    int64_t fs, fd;
    Scalar v;
    if (cs.in_bounds(&fs)) {
      v = read(src.buf, fs, 0);
    } else if (!(src.global && check)) {
      fail("copy reads " + cs.text() + ", outside " + src.name + " of shape " + list_text(src.sh->dims) +
           (src.global ? "; keep bounds checking on for ragged tiles"
                       : "; shrink the region or grow the buffer"));
    }
    if (!cd.in_bounds(&fd)) {
      if (dst.global && check) continue;
      fail("copy writes " + cd.text() + ", outside " + dst.name + " of shape " + list_text(dst.sh->dims) +
           (dst.global ? "; keep bounds checking on for ragged tiles"
                       : "; shrink the region or grow the buffer"));
    }
    write(dst.buf, fd, 0, convert_scalar(src.dtype, dst.dtype, v));
  }
}

// A fill of a Global region skips the elements outside the tensor, like a bounds-checked copy
// (a ragged tile's fill); outside any other buffer it is an error.
void BlockExec::exec_fill(const SNode& s) {
  View dst = make_view(*this, s.regions[0], "fill");
  Scalar v = convert_scalar(P.exprs[s.e0].type, dst.dtype, eval(s.e0, 0));
  std::vector<int> dd = non_unit_dims(dst);
  int64_t count = 1;
  for (int d : dd) count *= dst.ext[std::size_t(d)];
  Cursor cd(dst, dd);
  for (int64_t e = 0; e < count; ++e, cd.next()) {
    int64_t fd;
    if (!cd.in_bounds(&fd)) {
      if (dst.global) continue;
      fail("fill writes " + cd.text() + ", outside " + dst.name + " of shape " + list_text(dst.sh->dims));
    }
    write(dst.buf, fd, 0, v);
  }
}

namespace {

/// A 2-D operand of gemm: the last two dimensions of a region whose leading extents are 1.
struct Matrix {
  View v;
  int64_t rows = 0, cols = 0, base = 0, row_stride = 0, col_stride = 0;
};

}  // namespace

static Matrix make_matrix(BlockExec& x, const XRegion& r, const char* operand) {
  Matrix m;
  m.v = make_view(x, r, "gemm");
  std::size_t rank = m.v.ext.size();
  for (std::size_t d = 0; d + 2 < rank; ++d)
    if (m.v.ext[d] != 1)
      x.fail(std::string("gemm operand ") + operand + " (" + m.v.name + ", extents " + list_text(m.v.ext) +
             ") is not a matrix: all but the last two extents must be 1");
  for (std::size_t d = 0; d < rank; ++d) {
    if (m.v.off[d] < 0 || m.v.off[d] + m.v.ext[d] > m.v.sh->dims[d])
      x.fail(std::string("gemm operand ") + operand + ": region of " + m.v.name + " at " +
             list_text(m.v.off) + " with extents " + list_text(m.v.ext) + " is outside its shape " +
             list_text(m.v.sh->dims));
    m.base += m.v.off[d] * m.v.sh->strides[d];
  }
  m.rows = rank >= 2 ? m.v.ext[rank - 2] : 1;
  m.cols = rank >= 1 ? m.v.ext[rank - 1] : 1;
  m.row_stride = rank >= 2 ? m.v.sh->strides[rank - 2] : 0;
  m.col_stride = rank >= 1 ? m.v.sh->strides[rank - 1] : 0;
  return m;
}

void BlockExec::exec_gemm(const SNode& s) {
  auto* g = static_cast<const ir::Gemm*>(s.src);
  Matrix A = make_matrix(*this, s.regions[0], "A"), B = make_matrix(*this, s.regions[1], "B"),
         C = make_matrix(*this, s.regions[2], "C");
  int64_t M = g->trans_a ? A.cols : A.rows, K = g->trans_a ? A.rows : A.cols;
  int64_t Kb = g->trans_b ? B.cols : B.rows, N = g->trans_b ? B.rows : B.cols;
  if (K != Kb || C.rows != M || C.cols != N)
    fail("gemm shapes do not agree: op(A) is " + std::to_string(M) + "x" + std::to_string(K) + ", op(B) is " +
         std::to_string(Kb) + "x" + std::to_string(N) + ", C is " + std::to_string(C.rows) + "x" +
         std::to_string(C.cols) + "; A must be MxK, B KxN and C MxN (after the transposes)");
  // Gather op(A) and op(B) densely (logical row-major), then one K-sum per C element.
  std::vector<double> a(std::size_t(M * K)), b(std::size_t(K * N)), acc(std::size_t(M * N), 0.0);
  bool int_c = !C.v.dtype.is_float();
  if (int_c && (A.v.dtype.is_float() || B.v.dtype.is_float()))
    fail("gemm into integer " + C.v.name + " needs integer operands, but A is " +
         std::string(A.v.dtype.name()) + " and B is " + std::string(B.v.dtype.name()));
  std::vector<int64_t> iacc(int_c ? std::size_t(M * N) : 0, 0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      int64_t r = g->trans_a ? k : i, c = g->trans_a ? i : k;
      a[std::size_t(i * K + k)] =
          scalar_as_double(A.v.dtype, read(A.v.buf, A.base + r * A.row_stride + c * A.col_stride, 0));
    }
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) {
      int64_t r = g->trans_b ? j : k, c = g->trans_b ? k : j;
      b[std::size_t(k * N + j)] =
          scalar_as_double(B.v.dtype, read(B.v.buf, B.base + r * B.row_stride + c * B.col_stride, 0));
    }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      double aik = a[std::size_t(i * K + k)];
      const double* brow = &b[std::size_t(k * N)];
      if (int_c) {
        for (int64_t j = 0; j < N; ++j)
          iacc[std::size_t(i * N + j)] += int64_t(uint64_t(int64_t(aik)) * uint64_t(int64_t(brow[j])));
      } else {
        double* arow = &acc[std::size_t(i * N)];
        for (int64_t j = 0; j < N; ++j) arow[j] += aik * brow[j];
      }
    }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      int64_t flat = C.base + i * C.row_stride + j * C.col_stride;
      Scalar old = g->clear_c ? Scalar{} : read(C.v.buf, flat, 0), r;
      if (int_c)
        r = Scalar::of_int(
            wrap_int_to(C.v.dtype, int64_t(uint64_t(old.i) + uint64_t(iacc[std::size_t(i * N + j)]))));
      else
        r = Scalar::of_float(round_float_to(C.v.dtype, old.f + acc[std::size_t(i * N + j)]));
      write(C.v.buf, flat, 0, r);
    }
}

void BlockExec::exec_reduce(const SNode& s) {
  auto* rd = static_cast<const ir::Reduce*>(s.src);
  int32_t sb = s.regions[0].buf, db = s.regions[1].buf;
  const BufShape &ss = L.shapes[sb], &ds = L.shapes[db];
  DType st = P.bufs[sb].node->dtype, dt = P.bufs[db].node->dtype;
  int rank = int(ss.dims.size());
  int axis = rd->axis < 0 ? rd->axis + rank : rd->axis;
  if (axis < 0 || axis >= rank)
    fail("reduce axis " + std::to_string(rd->axis) + " is out of range for " + P.bufs[sb].node->name +
         " of rank " + std::to_string(rank));
  std::vector<int64_t> want, keep;  // dst shape: src's without the axis, or with a 1 there
  for (int d = 0; d < rank; ++d) {
    if (d != axis) want.push_back(ss.dims[std::size_t(d)]);
    keep.push_back(d == axis ? 1 : ss.dims[std::size_t(d)]);
  }
  if (ds.dims != want && ds.dims != keep)
    fail("reduce of " + P.bufs[sb].node->name + " " + list_text(ss.dims) + " over axis " +
         std::to_string(axis) + " needs a destination of shape " + list_text(want) + ", but " +
         P.bufs[db].node->name + " is " + list_text(ds.dims));
  int64_t outer = 1, len = ss.dims[std::size_t(axis)], inner = 1;
  for (int d = 0; d < axis; ++d) outer *= ss.dims[std::size_t(d)];
  for (int d = axis + 1; d < rank; ++d) inner *= ss.dims[std::size_t(d)];
  ReduceOp op = rd->op;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t df = o * inner + i;
      double acc = op == ReduceOp::Sum   ? 0.0
                   : op == ReduceOp::Max ? -INFINITY
                   : op == ReduceOp::Min ? INFINITY
                                         : 0.0;
      if (!rd->clear) acc = scalar_as_double(dt, read(db, df, 0));
      int64_t iacc = rd->clear ? 0 : read(db, df, 0).i;
      for (int64_t k = 0; k < len; ++k) {
        Scalar x = read(sb, (o * len + k) * inner + i, 0);
        double v = scalar_as_double(st, x);
        switch (op) {
          case ReduceOp::Sum:
            acc += v;
            iacc = int64_t(uint64_t(iacc) + uint64_t(st.is_float() ? 0 : x.i));
            break;
          case ReduceOp::Max: acc = std::fmax(acc, v); break;
          case ReduceOp::Min: acc = std::fmin(acc, v); break;
          case ReduceOp::AbsMax: acc = std::fmax(acc, std::fabs(v)); break;
        }
      }
      Scalar r;
      if (dt.is_float())
        r = Scalar::of_float(round_float_to(dt, acc));
      else if (op == ReduceOp::Sum && !st.is_float())
        r = Scalar::of_int(wrap_int_to(dt, iacc));  // exact integer sums
      else
        r = convert_scalar(f64, dt, Scalar::of_float(acc));
      write(db, df, 0, r);
    }
}

}  // namespace tg::interp
