// What passes and code generators know of a device. Passes read it; they never name a vendor.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tg {

/// What a pass pipeline and a code generator need to know about one device.
struct TargetInfo {
  std::string target;        // plugin name: "cuda", "cpu", "interp", ...
  std::string device_name;   // "NVIDIA H200", "llvmpipe", "host"
  std::string arch;          // "sm_90", "gfx942", "x86-64-v4", ...
  // What Target::select() ranks by (api/src/device_ranking.cpp): hardware GPUs through their
  // vendor's own target, then GPUs through a portable API, the native CPU, software devices.
  bool software = false;     // a CPU-emulated device (lavapipe, interp)
  bool is_cpu = false;       // the native CPU target
  bool portable = false;     // reached through a portable API (Vulkan), not the vendor's own
  int warp_size = 1;         // lanes of a warp/wave/subgroup
  int max_threads = 1024;    // per block
  int64_t shared_mem_bytes = 48 * 1024;
  int vector_bytes = 16;     // widest single load/store
  bool async_copy = false;   // cp.async or equivalent
  bool bulk_copy = false;    // bulk tensor copies completing on mbarriers (Hopper's TMA; bulk_copies.h)
  // warp_roles splits only rings whose slots asynchronous mmas alone read (warp_roles.h): set for
  // NVIDIA GPUs, where a producer refilling slots that ldmatrix / mma.sync read gave wrong
  // answers on an H100 (docs/PERF.md, 2026-12-07).
  bool roles_async_reads_only = false;
  // Warpgroups (128 threads) may give registers back and take them at run time (setmaxnreg:
  // sm_90a), out of a register file of `register_file` 32-bit registers a multiprocessor (0:
  // unknown); warp_roles.h then gives the roles a warpgroup each and the consumers the registers.
  bool reallocate_registers = false;
  // Async mmas may read B stored N×K, K contiguous (a transposed tile: wgmma's K-major B), so a
  // gemm with trans_b runs on them (infer_fragment_layouts).
  bool async_mma_trans_b = false;
  // Accumulators whose rows are reduced or read beside row vectors (softmax over a gemm's rows)
  // may be async mmas' too, each warpgroup holding whole rows (infer_fragment_layouts).
  bool async_mma_rows = false;
  // Async mmas may read A from registers (wgmma's RS form): a gemm whose A operand is a laid-out
  // fragment in an async accumulator's layout (attention's P) runs on them, A never leaving the
  // registers (infer_fragment_layouts).
  bool async_mma_register_a = false;
  int register_file = 0;
  // The lanes of a warp address their registers one by one and exchange them (shuffle_xor): a
  // fragment laid out over a matrix unit's registers may then stay there through reductions, row
  // vectors, casts and gemm operands (infer_fragment_layouts). False where a unit's registers are
  // opaque to the lanes (SPIR-V cooperative matrices).
  bool lane_shuffle = false;
  // Blocks a grid may have in each dimension; its size is the most dimensions a grid may have.
  // Empty: the device sets no limit of its own (check_grid_limits still applies the block
  // variables' dtypes).
  std::vector<int64_t> max_grid;
  std::vector<std::string> matrix_units;  // names in the matrix-unit registry
};

}  // namespace tg
