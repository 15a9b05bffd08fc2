// ir::Mma: each group of group_size consecutive lanes (a warp, wave or subgroup) multiplies one
// M×N×K tile held in its lanes' registers, as the matrix-unit description lays it out.
//
//   mma "mma_m16n8k16_f16_f32" a: Ar[0], b: Br[0], c: Cr[0]
//   // lane l, register r of A is element a_layout[l*8 + r] of the 16×16 A tile, read from Ar[0 + r]
#include "interp_internal.h"

namespace tg::interp {

namespace {

struct Operand {
  int32_t buf;
  int regs;
  DType want;
  const std::vector<MatrixUnit::Slot>* layout;
  int cols;  // of the operand tile
  const char* name;
};

// C += A·B on dense tiles, with the K-sum in double and one rounding into the accumulator type.
void multiply_accumulate(const MatrixUnit& u, std::vector<double> (&tiles)[3]) {
  std::vector<double>& c = tiles[2];
  for (int i = 0; i < u.m; ++i)
    for (int j = 0; j < u.n; ++j) {
      double sum = 0;
      for (int k = 0; k < u.k; ++k)
        sum += tiles[0][std::size_t(i * u.k + k)] * tiles[1][std::size_t(k * u.n + j)];
      double& cij = c[std::size_t(i * u.n + j)];
      cij = u.c_type.is_float() ? round_float_to(u.c_type, cij + sum)
                                : double(wrap_int_to(u.c_type, int64_t(cij) + int64_t(sum)));
    }
}

}  // namespace

void BlockExec::exec_mma(const SNode& s, Mask m) {
  const MatrixUnit& u = *s.unit;
  const int G = u.group_size;
  if (single_lane_) fail("mma inside a parallel loop; move it out of the loop");
  if (T_ % G != 0)
    fail("mma with " + u.name + " needs the block's thread count (" + std::to_string(T_) +
         ") to be a multiple of " + std::to_string(G));
  Operand ops[3] = {{s.regions[0].buf, u.a_regs(), u.a_type, &u.a_layout, u.k, "A"},
                    {s.regions[1].buf, u.b_regs(), u.b_type, &u.b_layout, u.n, "B"},
                    {s.regions[2].buf, u.c_regs(), u.c_type, &u.c_layout, u.n, "C"}};
  for (auto& o : ops) {
    DType have = P.bufs[o.buf].node->dtype;
    if (have != o.want)
      fail("mma operand " + std::string(o.name) + " of " + u.name + " holds " + std::string(o.want.name()) +
           " registers, but " + P.bufs[o.buf].node->name + " is " + std::string(have.name()) +
           "; convert it first");
  }
  std::vector<int> active(std::size_t(T_ / G), 0);
  for (int k = 0; k < m.n; ++k) ++active[std::size_t(m.ids[k] / G)];
  std::vector<double> tiles[3] = {std::vector<double>(std::size_t(u.m * u.k)),
                                  std::vector<double>(std::size_t(u.k * u.n)),
                                  std::vector<double>(std::size_t(u.m * u.n))};
  std::vector<int64_t> offsets(std::size_t(G) * 3);
  for (int g = 0; g < T_ / G; ++g) {
    int n = active[std::size_t(g)];
    if (n == 0) continue;  // a group that does not reach the mma (warp specialisation) skips it
    if (n != G)
      fail("mma reached by " + std::to_string(n) + " of the " + std::to_string(G) + " lanes of group " +
           std::to_string(g) + " (threads " + std::to_string(g * G) + ".." + std::to_string(g * G + G - 1) +
           "): a warp/wave/subgroup executes a matrix instruction together; move it out of the divergent "
           "code");
    for (int oi = 0; oi < 3; ++oi) {  // gather each operand tile from the lanes' registers
      const Operand& o = ops[oi];
      int64_t numel = L.shapes[o.buf].numel;
      for (int l = 0; l < G; ++l) {
        int lane = g * G + l;
        int64_t off = eval_int(s.regions[std::size_t(oi)].offsets[0], lane);
        if (off < 0 || off + o.regs > numel)
          fail("mma operand " + std::string(o.name) + ": thread " + std::to_string(lane) + " reads " +
               P.bufs[o.buf].node->name + "[" + std::to_string(off) + " .. " +
               std::to_string(off + o.regs - 1) + "], outside its " + std::to_string(numel) + " elements");
        offsets[std::size_t(l * 3 + oi)] = off;
        for (int r = 0; r < o.regs; ++r) {
          auto [row, col] = (*o.layout)[std::size_t(l * o.regs + r)];
          tiles[oi][std::size_t(row * o.cols + col)] = scalar_as_double(o.want, read(o.buf, off + r, lane));
        }
      }
    }
    multiply_accumulate(u, tiles);
    const std::vector<double>& c = tiles[2];
    for (int l = 0; l < G; ++l) {  // scatter C back
      int lane = g * G + l;
      int64_t off = offsets[std::size_t(l * 3 + 2)];
      for (int r = 0; r < ops[2].regs; ++r) {
        auto [row, col] = u.c_layout[std::size_t(l * ops[2].regs + r)];
        double v = c[std::size_t(row * u.n + col)];
        write(ops[2].buf, off + r, lane,
              u.c_type.is_float() ? Scalar::of_float(v) : Scalar::of_int(int64_t(v)));
      }
    }
  }
}

}  // namespace tg::interp
