// The dialect-neutral part of the GPU source targets (CUDA C++ and HIP C++ are one C++ dialect
// with different intrinsics): kernel planning, shared-memory layout, and the emission of
// expressions and statements of lowered IR (the output of gpu_pipeline(): per-thread code only).
// A target subclasses SourceEmitter and fills in the hooks where its dialect differs.
//
//   kernel grid(2, 2) threads(128) -> (bx, by; tx) { shared A_shared: f16[32, 16]; local C_local: f32[8]; ...
//   }
// becomes (cuda's hooks; hip's differ in the marked lines)
//   extern "C" __global__ void __launch_bounds__(128) gemm(tg_u16* __restrict__ A, ...) {   // kernel_head
//     extern __shared__ __align__(16) tg_u8 tg_smem[];                                       //
//     declare_shared tg_u16* A_shared = reinterpret_cast<tg_u16*>(tg_smem + 0);
//     __align__(16) float C_local[8];
//     const int bx = blockIdx.x; ...                                                         // block_index
//     ... __syncthreads(); ... tg_mma_m16n8k16_f16_f32(&C_local[0], ...);                     // barrier, mma
//   }
// Expressions are emitted in "value" types (float for every float format up to f32, double, int,
// long long, bool); buffers hold "storage" types (the formats' bits), converted at each load and
// store by the device header's helpers (gpu_device_header_common()).
#pragma once
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tilegen/ir/function.h"
#include "tilegen/passes/gpu_layout.h"
#include "tilegen/passes/target_info.h"
#include "tilegen/plugin.h"

namespace tg::gpu {

/// Where each shared buffer of a kernel lives in its shared memory (CUDA shared, AMD LDS).
struct SharedPlan {
  std::vector<std::pair<Buffer, int64_t>> offsets;  // buffer → byte offset
  int64_t bytes = 0;
};

/// One kernel function a launch runs, in order.
struct KernelPlan {
  std::string name;  // ir::kernel_entry_names(f, LoneKernel::FunctionName): "gemm", or "attn_k0", "attn_k1"
  const ir::Kernel* kernel = nullptr;
  SharedPlan shared;
};

/// The kernels of f with their names and the shared-memory layouts place_shared_memory wrote
/// into the IR. Throws tg::Error when a shared buffer is unplaced or the plan exceeds
/// info.shared_mem_bytes.
std::vector<KernelPlan> plan_kernels(const Function& f, const TargetInfo& info);
/// A GPU source target's pipeline: gpu_pipeline(checks_accesses(opt), opt.sizes),
/// pad_shared_tiles, the target's own passes, then place_shared_memory, whose plan plan_kernels() reads.
std::vector<PassEntry> source_pipeline(const CompileOptions& opt, std::vector<PassEntry> target_passes = {});
/// The TargetInfo codegen() compiles for: `opt.arch`'s when it names one (`tilegen source --arch`),
/// else the device's.
TargetInfo codegen_target(TargetPlugin& plugin, const TargetInfo& device, const CompileOptions& opt);
/// Artifact::entry of f: its kernels' names in launch order, comma-separated ("gemm", "attn_k0,attn_k1").
std::string entry_list(const Function& f, const TargetInfo& info);

/// An Mma's unit must be one of info.matrix_units (the units the target's device header
/// implements) and its operands registers: otherwise a tg::Error at the statement naming the
/// target, its architecture and the units it has.
void check_matrix_unit(const ir::Mma& op, const TargetInfo& info);

/// C++ type of an expression of type t ("float" for f16 too) and of a stored element ("tg_u16").
std::string value_type(DType t);
std::string storage_type(DType t);

/// The device-header text both GPU source targets share: f16/bf16/fp8/fp4 decoding, packed
/// 4-bit access, float modulo, min/max, sigmoid, float atomics by compare-and-swap.
/// Each target's header defines, before including this text, TG_DEVICE (its inline
/// device-function qualifier) and the primitives it builds on: tg_f16_to_f32, tg_f32_to_f16,
/// tg_f32_to_bf16, tg_f32_from_bits, tg_f64_from_bits, tg_f32_bits, tg_atomic_cas, ldexpf, expf,
/// floorf, floor.
const char* gpu_device_header_common();
/// The device functions computing the IR's integer /, %, << and >> (int_semantics.h's recipes
/// written out as C++): tg_div_i32(a, b), tg_shl_i8(a, n), ...; gpu_int_helper names them.
const std::string& gpu_device_header_int_ops();
/// The helper of gpu_device_header_int_ops() computing `op` (Div, Mod, Shl, Shr) on dtype t.
std::string gpu_int_helper(ir::BinOp op, DType t);
/// A GPU source target's whole device header ("tilegen_device.h"), in this order: `#pragma once`
/// and the integer types (tg_u8, tg_u16, tg_u32, tg_i64), the target's `primitives` (above),
/// gpu_device_header_common(), gpu_device_header_int_ops(), and `target_part` (matrix units,
/// async copies, ...).
std::string gpu_device_header(const char* primitives, const char* target_part);

/// Emits one kernel function of lowered IR. Not thread-safe; one object per kernel.
class SourceEmitter {
 public:
  SourceEmitter(const Function& f, const KernelPlan& plan) : f_(f), p_(plan) {}
  virtual ~SourceEmitter() = default;
  SourceEmitter(const SourceEmitter&) = delete;
  SourceEmitter& operator=(const SourceEmitter&) = delete;

  /// The kernel's whole definition.
  std::string emit();

 protected:
  // ---- hooks: what differs between dialects.
  /// "cuda", "hip": named in error messages.
  virtual std::string target_name() const = 0;
  /// The function's head up to ")" given its parameter list: linkage, kernel and launch-bound
  /// attributes.
  virtual std::string kernel_head(const std::string& params) = 0;
  /// Declares `tg_smem`, the kernel's shared memory of p_.shared.bytes bytes (> 0).
  virtual void declare_shared(int64_t bytes) = 0;
  /// Index of the block in dimension d (0..2) and of the thread in the block, as int expressions.
  virtual std::string block_index(int d) const = 0;
  virtual std::string thread_index() const = 0;
  /// A block-wide barrier with shared-memory visibility.
  virtual void barrier() { line("__syncthreads();"); }
  /// One matrix-unit operation: every lane of a group multiplies its fragments (ir::Mma).
  virtual void mma(const ir::Mma& op) = 0;
  /// An async store (ir::Store::async) of `bytes` (4, 8 or 16) from global address src to
  /// shared address dst. Default: the plain move, one legal schedule of it (cuda: cp.async).
  virtual void async_move(int64_t bytes, const std::string& dst, const std::string& src);
  /// The same async store given its shared destination as buffer and indices (shared_offset()
  /// spells its byte offset). Default: async_move() with the destination's address.
  virtual void async_store(int64_t bytes, const ir::BufferNode& dst, const std::vector<Expr>& dst_index,
                           const std::string& src);
  /// ir::AsyncWait. Default: nothing, where async stores are plain (cuda: commit and wait).
  virtual void async_wait(int /*in_flight*/) {}
  /// ir::MmaSync (cuda: wgmma.fence, fence.proxy.async, wgmma.commit_group + wait_group).
  /// Default: nothing, where no matrix unit is asynchronous.
  virtual void mma_sync(const ir::MmaSync& /*op*/) {}
  /// ir::LdMatrix (cuda). Default: a tg::Error, the target has no such instruction.
  virtual void ldmatrix(const ir::LdMatrix& op);
  /// ir::MBarrier and ir::BulkCopy (cuda sm_90: mbarrier.*, cp.async.bulk.tensor). Default: a
  /// tg::Error, the target has no transaction barriers.
  virtual void mbarrier(const ir::MBarrier& op);
  virtual void bulk_copy(const ir::BulkCopy& op);
  /// Parameters after the function's own (cuda: the tensor maps of the bulk copies), each
  /// starting with ", "; default none.
  virtual std::string extra_params() { return ""; }

  // ---- services for the hooks.
  void line(const std::string& s);
  void stmt(const Stmt& s);
  void block(const Stmt& s);
  std::string expr(const Expr& e);
  /// The emitted name of a declared buffer or variable (keyed by its node).
  std::string name(const void* key, const std::string& fallback);
  /// "&C_local[offset]" of an mma operand.
  std::string operand_address(const ir::MmaOperand& o);
  /// "&A_shared[<linear index of idx>]", in the storage layout of strides_of().
  std::string element_address(const ir::BufferNode& b, const std::vector<Expr>& idx);
  /// The byte offset of element idx of a placed shared buffer from the start of tg_smem, as an
  /// unsigned 32-bit expression whose constant part is one literal at its end
  /// ("(tg_u32)(<linear index>) * 2u + 17408u"), so that an instruction addressing shared memory
  /// in 32 bits folds it into its immediate. A tg::Error when b is not a placed shared buffer.
  std::string shared_offset(const ir::BufferNode& b, const std::vector<Expr>& idx);
  /// The same byte offset before a `layout=swizzle` tile's XOR (buffer.h): where a matrix
  /// descriptor addressing the tile from element idx starts (the hardware applies the XOR).
  std::string shared_tile_offset(const ir::BufferNode& b, const std::vector<Expr>& idx);

  const Function& f_;
  const KernelPlan& p_;
  int indent_ = 0;

 private:
  std::string declare(const std::string& want, const void* key);
  std::string linear_index(const ir::BufferNode& b, const std::vector<Expr>& idx, bool swizzle = true);
  /// Where place_shared_memory put b in tg_smem; a tg::Error when it is not placed.
  int64_t placed_offset(const ir::BufferNode& b);
  bool vector_move(const ir::For& op);
  std::string load(const ir::Load& op);
  std::string access_check(const ir::AccessCheck& op);
  std::string cast(DType to, const Expr& a);
  std::string binary(const ir::Binary& op);
  std::string call(const ir::Call& op);
  void store(const ir::Store& op);
  void atomic(const ir::Atomic& op);
  void let(const ir::Let& op);
  void loop(const ir::For& op);
  void declare_buffers();

  std::ostringstream os_;
  std::map<const void*, std::string> names_;
  std::set<std::string> used_;
  std::set<const void*> bound_;
};

}  // namespace tg::gpu
