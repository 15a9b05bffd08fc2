// Private pieces of the autotuner (autotune.cpp): the inputs every config runs on, the
// progress display, and the store of best configs.
#pragma once
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tilegen/autotune.h"
#include "tilegen/kernel_cache.h"

namespace tg::autotune_detail {

/// One non-size parameter of the kernel, with the host copy every config's check starts from.
struct Slot {
  std::string name;
  bool is_tensor = true;
  // tensors
  std::vector<int64_t> shape;
  DType dtype = f32;
  std::vector<uint8_t> initial;  // inputs as given (or random); outputs the kernel only writes, poisoned
  bool written = false;
  DeviceBuffer buffer;  // on the target, reset from `initial` before each check
  // scalars
  KernelArg scalar = 0.0;
};

/// The arguments of every launch, owned by the tuner (autotune_inputs.cpp).
struct Inputs {
  std::vector<Slot> slots;  // kernel parameter order, sizes omitted

  /// From the caller's arguments (copied) or random values; throws tg::Error at `loc` when they
  /// do not fit `f`.
  static Inputs make(const Target& target, const Function& f, const TuneOptions& opt, const SourceLoc& loc);
  /// Launch arguments over the device buffers.
  std::vector<KernelArg> args() const;
  /// Host tensors over fresh copies of `initial` (kept in `keep`), for the interpreter.
  std::vector<KernelArg> host_args(std::vector<std::vector<uint8_t>>& keep) const;
  /// Written tensors back to `initial`, so a check sees only its own writes.
  void reset();
  /// The written tensors' device contents, in slot order.
  std::vector<std::vector<uint8_t>> outputs() const;
  /// Whether `f` takes the parameters these slots were made for (names, kinds, dtypes, ranks,
  /// constant dimensions); else why not.
  std::string mismatch(const Function& f) const;
  /// "A:f16[64,64];B:f16[64,64];alpha:f32": part of the store key.
  std::string signature() const;
};

/// Compare `got` with `want` for the written slots; empty when they agree, else what differs.
std::string compare_outputs(const Inputs& in, const std::vector<std::vector<uint8_t>>& got,
                            const std::vector<std::vector<uint8_t>>& want,
                            const std::function<TuneTolerance(DType)>& tolerance, double* max_error);

/// The progress display: a redrawn bar on a terminal, plain lines elsewhere (autotune_progress.cpp).
class Progress {
 public:
  Progress(TuneProgress mode, std::ostream* os);
  /// A new phase ("compiling", "timing") of `total` steps.
  void start(const std::string& phase, std::size_t total);
  /// One step done; `trial` for the line mode's report of it; `best` the best so far, if any.
  void step(const TuneTrial& trial, const TuneTrial* best);
  void finish();
  void note(const std::string& line);

 private:
  void draw(const TuneTrial* best);
  std::mutex mu_;
  TuneProgress mode_;
  std::ostream* os_;
  std::string phase_;
  std::size_t total_ = 0, done_ = 0, failed_ = 0;
  std::chrono::steady_clock::time_point start_;
};

/// The store of best configs: a KernelCache in its own directory (autotune_store.cpp).
struct Store {
  KernelCache cache;
  KernelCache::Key key;
  /// The stored best, when there is one whose config names are `names` and whose entry is whole.
  std::optional<TuneTrial> load(const std::vector<std::string>& names) const;
  void save(const TuneResult& r) const;
};

/// The store's key: everything the best config depends on.
Store make_store(const std::string& dir, const Target& target, const TuneSpace& space, const Kernel& first,
                 const Inputs& in, const TuneOptions& opt);

}  // namespace tg::autotune_detail
