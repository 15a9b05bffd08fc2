// The runtime facade, part two: compiling (pipeline, codegen, kernel cache, load), specialising
// symbolic sizes at launch, checking launch arguments, launching and profiling.
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "runtime_internal.h"
#include "tilegen/ir/access_check.h"
#include "tilegen/ir/buffer_access.h"
#include "tilegen/ir/printer.h"
#include "tilegen/kernel_cache.h"
#include "tilegen/passes/bind_sizes.h"

#ifndef TILEGEN_VERSION
#define TILEGEN_VERSION "unknown"
#endif

namespace tg {

/// One compiled specialisation: the lowered function, its artifact, and the loaded module.
struct Variant {
  Function lowered;
  Artifact artifact;
  std::vector<std::pair<std::string, std::string>> stages;
  std::shared_ptr<void> loaded;
};

struct CompiledKernel::Impl {
  std::shared_ptr<DeviceState> dev;  // first member: outlives the variants' loaded modules
  Function generic;                  // as compiled: symbolic sizes still free
  CompileOptions opt;
  std::mutex mu;
  std::map<std::vector<int64_t>, std::shared_ptr<Variant>> variants;  // by size values
  std::shared_ptr<Variant> last;
  std::vector<bool> writes;  // per non-size param, in order: does the kernel write that tensor?

  // DeviceBuffer's device is private to it and its friends; this nested class is one of them.
  static const DeviceState* owner(const DeviceBuffer& b) { return b.dev_.get(); }
};

namespace {

using Stages = std::vector<std::pair<std::string, std::string>>;

/// The plugin's whole pipeline, from bind_sizes (opt.sizes) on, over the function as compiled.
Function run_pipeline(TargetPlugin& plugin, const TargetInfo& info, const Function& f,
                      const CompileOptions& opt, Stages* stages) {
  std::vector<PassEntry> passes = plugin.pipeline(info, opt);
  // Sizes are bound, and grid limits checked, only there: a list that skips it would compile
  // kernels with their sizes unbound and their grids unchecked.
  if (passes.empty() || passes.front().name != kBindSizesPass)
    throw Error("target '" + plugin.name() + "': its pipeline() begins with " +
                (passes.empty() ? std::string("nothing") : "'" + passes.front().name + "'") +
                "; a pipeline must begin with bind_sizes_pass(opt.sizes) (tilegen/passes/bind_sizes.h)");
  PassManager pm(std::move(passes));
  PassManagerOptions pmo;
  pmo.verify_each = opt.verify_each_pass;
  pmo.dump_after = opt.dump_after;
  Function lowered = pm.run(f, info, pmo);
  if (stages) *stages = pm.stages();
  return lowered;
}

/// What codegen reads of a device besides the IR; two devices that agree here share binaries.
std::string info_text(const TargetInfo& i) {
  std::string s = i.arch + ";w" + std::to_string(i.warp_size) + ";t" + std::to_string(i.max_threads) + ";s" +
                  std::to_string(i.shared_mem_bytes) + ";v" + std::to_string(i.vector_bytes) + ";a" +
                  std::to_string(int(i.async_copy)) + ";sh" + std::to_string(int(i.lane_shuffle)) + ";sw" + std::to_string(int(i.software)) + ";cpu" +
                  std::to_string(int(i.is_cpu));
  for (const std::string& m : i.matrix_units) s += ";" + m;
  return s;
}

/// The options, resolved (resolve_compile_options): environment defaults are params by now, so a
/// run with a switch flipped, by param or by environment, never reuses the other setting's binaries.
std::string options_text(const CompileOptions& opt) {
  std::string s = "arch=" + opt.arch;
  for (auto& [k, v] : opt.params) s += ";" + k + "=" + v;
  return s;
}

/// The kernel cache's key of one lowered function on one device.
KernelCache::Key cache_key(const DeviceState& dev, const Function& lowered, const CompileOptions& opt) {
  return KernelCache::key(
      {print(lowered), dev.target + ";" + dev.identity, info_text(dev.info), options_text(opt)});
}

/// codegen, storing what has a binary (interp's artifacts have none) in the kernel cache.
Artifact codegen_and_store(DeviceState& dev, const Function& lowered, const CompileOptions& opt,
                           const KernelCache* cache, const KernelCache::Key& key) {
  Artifact a = dev.plugin->codegen(lowered, dev.info, opt);
  if (cache && !a.binary.empty()) {
    CacheEntry e{a.source,
                 a.assembly,
                 a.binary,
                 a.entry,
                 {{"target", dev.target},
                  {"arch", dev.info.arch},
                  {"device", dev.info.device_name},
                  {"kernel", lowered.name},
                  {"tilegen_version", TILEGEN_VERSION}}};
    cache->store(key, e);  // a cache that cannot be written only costs the next run a compile
  }
  return a;
}

/// Codegen through the kernel cache, then load. A hit that the device cannot load (an entry
/// whose checksum holds but whose object does not link) is evicted and rebuilt, so one bad
/// entry never fails every later run.
void codegen_and_load(DeviceState& dev, Variant& v, const CompileOptions& opt) {
  std::optional<KernelCache> cache;
  KernelCache::Key key;
  if (KernelCache::enabled()) {
    cache.emplace();
    key = cache_key(dev, v.lowered, opt);
  }
  std::optional<CacheEntry> hit = cache ? cache->load(key) : std::nullopt;
  if (hit) {
    v.artifact.source = std::move(hit->source);
    v.artifact.assembly = std::move(hit->assembly);
    v.artifact.binary = std::move(hit->binary);
    v.artifact.entry = std::move(hit->entry);
    try {
      std::lock_guard<std::mutex> lock(dev.mu);
      v.loaded = dev.ctx->load(v.artifact, v.lowered);
      return;
    } catch (...) {
      cache->evict(key);  // then compile afresh; an error that is not the entry's recurs below
    }
  }
  v.artifact = codegen_and_store(dev, v.lowered, opt, cache ? &*cache : nullptr, key);
  std::lock_guard<std::mutex> lock(dev.mu);
  v.loaded = dev.ctx->load(v.artifact, v.lowered);
}

/// Pipeline, codegen, load: one specialisation ready to launch.
std::shared_ptr<Variant> compile_variant(DeviceState& dev, const Function& f, const CompileOptions& opt,
                                         const SourceLoc& loc) {
  auto v = std::make_shared<Variant>();
  try {
    v->lowered = run_pipeline(*dev.plugin, dev.info, f, opt, &v->stages);
    if (!v->lowered.sizes().empty())  // opt.sizes names every one: the plugin lost them on the way
      throw Error("target '" + dev.target + "': its pipeline left the size " +
                  v->lowered.sizes().front().name() + " of kernel '" + f.name +
                  "' unbound; begin it with bind_sizes_pass(opt.sizes)");
    codegen_and_load(dev, *v, opt);
    v->stages.emplace_back("source", v->artifact.source);
  } catch (const Error& e) {
    if (e.where().known()) throw;   // located at the IR node (the builder line) that caused it
    throw Error(e.message(), loc);  // an option or environment variable: at the compile (or launch)
  } catch (const std::exception& e) {
    throw Error("target '" + dev.target + "' failed to compile kernel '" + f.name + "': " + e.what(), loc);
  } catch (...) {
    throw Error("target '" + dev.target + "' failed to compile kernel '" + f.name +
                    "' with an exception that is not a std::exception",
                loc);
  }
  return v;
}

// ---- Argument checking

std::string arg_label(std::size_t i, const Param& p) {
  return "argument " + std::to_string(i + 1) + " (" + p.name() + ")";
}

/// A tensor argument seen the same way whether it is a DeviceBuffer or a HostTensor.
struct TensorView {
  const std::vector<int64_t>* shape = nullptr;
  DType dtype;
  const DeviceBuffer* buffer = nullptr;  // else host
  const HostTensor* host = nullptr;
  // A host tensor the kernel uses where it is: the device's memory is the host's and the pointer
  // is aligned as the kernels need (an unaligned one is staged into aligned memory instead).
  bool in_place = false;
};

TensorView view_tensor(const KernelArg& a, const Param& p, std::size_t i, const DeviceState& dev,
                       const SourceLoc& loc) {
  std::string label = arg_label(i, p);
  TensorView t;
  if (auto* b = std::get_if<const DeviceBuffer*>(&a)) {
    if (!*b) throw Error(label + ": the DeviceBuffer pointer is null", loc);
    const DeviceState* owner = CompiledKernel::Impl::owner(**b);
    if (!owner) throw Error(label + ": the DeviceBuffer is empty: make it with Target::alloc or upload", loc);
    if (owner != &dev)
      throw Error(label + ": the buffer lives on target '" + owner->target + "' " + device_text(*owner) +
                      ", the kernel runs on '" + dev.target + "' " + device_text(dev) +
                      (owner->index < 0 && owner->index == dev.index ? " (another adoption of it)" : "") +
                      ": allocate it with the kernel's target",
                  loc);
    t.buffer = *b;
    t.shape = &(*b)->shape();
    t.dtype = (*b)->dtype();
  } else if (auto* h = std::get_if<HostTensor>(&a)) {
    if (!h->data) throw Error(label + ": the host tensor's data is null", loc);
    for (int64_t d : h->shape)
      if (d < 0)
        throw Error(label + ": host tensor shape " + shape_str(h->shape) + " has a negative dimension", loc);
    if (!checked_numel(h->shape.data(), h->shape.size(), h->dtype))
      throw Error(label + ": host tensor shape " + shape_str(h->shape) + " of " +
                      std::string(h->dtype.name()) +
                      " holds more elements or bytes than 64 bits count; use a smaller shape",
                  loc);
    t.host = h;
    t.shape = &h->shape;
    t.dtype = h->dtype;
    t.in_place = dev.ctx->memory_space() == MemorySpace::Host &&
                 reinterpret_cast<uintptr_t>(h->data) % tensor_alignment(dev, h->dtype) == 0;
  } else {
    throw Error(
        label + ": the kernel expects a tensor " + std::string(p.buffer->dtype.name()) + ", got a scalar",
        loc);
  }
  if (t.dtype != p.buffer->dtype)
    throw Error(label + ": dtype " + std::string(t.dtype.name()) + " does not match the kernel's " +
                    std::string(p.buffer->dtype.name()),
                loc);
  if (t.shape->size() != p.buffer->shape.size())
    throw Error(label + ": rank " + std::to_string(t.shape->size()) + " (shape " + shape_str(*t.shape) +
                    ") does not match the kernel's rank " + std::to_string(p.buffer->shape.size()),
                loc);
  return t;
}

/// The checked arguments of one launch: sizes bound, and each argument's view.
struct CheckedArgs {
  std::vector<const Param*> params;  // non-size params, in order
  std::vector<TensorView> tensors;   // per param (empty view for scalars)
  std::vector<Scalar> scalars;       // per param, converted to its dtype (unused for tensors)
  std::vector<int64_t> size_key;     // values in Function::sizes() order
  std::map<std::string, int64_t> size_names;
};

void bind_and_check_shapes(const Function& f, CheckedArgs& c, const SourceLoc& loc);

/// Per non-size param of f, in order: whether the kernel writes that tensor anywhere.
std::vector<bool> written_params(const Function& f) {
  std::vector<bool> out;
  for (const Param& p : f.params) {
    if (p.kind == Param::Kind::Size) continue;
    bool w = false;
    if (p.kind == Param::Kind::Tensor)
      for_each_buffer_access(f.body, [&](const Buffer& b, BufferAccess how) {
        w = w || (is_write(how) && b.same_as(p.buffer));
      });
    out.push_back(w);
  }
  return out;
}

/// Whether two tensor arguments share memory: overlapping byte ranges of one address space.
/// Buffers are in the device's, host tensors in the host's (staged or not: the application sees
/// them there), and the two are one where the device's memory is the host's. Ranges, not start
/// pointers: wrapped buffers may view parts of one allocation.
bool overlaps(const TensorView& a, const TensorView& b, MemorySpace space) {
  const bool host_memory = space == MemorySpace::Host;
  // Buffers that are handles (vulkan's records) are not addresses with a byte size: two share
  // memory only when they are one buffer of the API (two wraps of one VkBuffer are).
  if (space == MemorySpace::Handles && a.buffer && b.buffer)
    return a.buffer->native_handle() == b.buffer->native_handle();
  auto range = [](const TensorView& v) {
    const char* lo = static_cast<const char*>(v.buffer ? v.buffer->device_ptr() : v.host->data);
    return std::pair<const char*, std::size_t>{lo, v.buffer ? v.buffer->bytes() : v.host->bytes()};
  };
  if (!host_memory && !a.buffer != !b.buffer) return false;
  auto [pa, na] = range(a);
  auto [pb, nb] = range(b);
  return na && nb && pa < pb + nb && pb < pa + na;
}

/// Every target compiles tensor parameters as non-overlapping (LLVM noalias, CUDA/HIP
/// __restrict__, the interpreter's separate buffers), so a written tensor that shares memory
/// with another argument would give each target its own answer. Reading one buffer twice is fine.
void check_no_overlap(const CheckedArgs& c, const std::vector<bool>& writes, const DeviceState& dev,
                      const SourceLoc& loc) {
  const MemorySpace space = dev.ctx->memory_space();
  for (std::size_t i = 0; i < c.tensors.size(); ++i)
    for (std::size_t j = i + 1; j < c.tensors.size(); ++j) {
      if (!c.tensors[i].shape || !c.tensors[j].shape) continue;  // scalars
      if (!(writes[i] || writes[j]) || !overlaps(c.tensors[i], c.tensors[j], space)) continue;
      std::size_t w = writes[i] ? i : j;
      throw Error(arg_label(i, *c.params[i]) + " and " + arg_label(j, *c.params[j]) +
                      " share memory, and the kernel writes " + arg_label(w, *c.params[w]) +
                      ": tensor arguments must not overlap (every target compiles them as separate); pass "
                      "separate buffers, or copy the input first",
                  loc);
    }
}

CheckedArgs check_args(const Function& f, const std::vector<KernelArg>& args, const DeviceState& dev,
                       const SourceLoc& loc) {
  CheckedArgs c;
  std::string names;
  for (const Param& p : f.params)
    if (p.kind != Param::Kind::Size) {
      c.params.push_back(&p);
      names += (names.empty() ? "" : ", ") + p.name();
    }
  if (args.size() != c.params.size())
    throw Error("kernel '" + f.name + "' takes " + std::to_string(c.params.size()) + " argument(s) (" +
                    names + "; sizes are bound from the tensors' shapes), got " + std::to_string(args.size()),
                loc);
  c.tensors.resize(args.size());
  c.scalars.resize(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Param& p = *c.params[i];
    if (p.kind == Param::Kind::Tensor) {
      c.tensors[i] = view_tensor(args[i], p, i, dev, loc);
    } else if (!std::holds_alternative<double>(args[i]) && !std::holds_alternative<int64_t>(args[i])) {
      throw Error(arg_label(i, p) + ": the kernel expects a scalar " + std::string(p.var.dtype().name()) +
                      ", got a tensor",
                  loc);
    } else {
      c.scalars[i] = scalar_argument(args[i], p.var.dtype(), arg_label(i, p), loc);
    }
  }
  bind_and_check_shapes(f, c, loc);
  return c;
}

/// Sizes come from the tensors' shapes (infer_sizes, the rule bind_sizes documents); its errors
/// name the argument and point at the launch.
void bind_and_check_shapes(const Function& f, CheckedArgs& c, const SourceLoc& loc) {
  std::vector<std::vector<int64_t>> shapes;
  LaunchSite site{loc, {}};
  for (std::size_t i = 0; i < c.params.size(); ++i) {
    if (!c.tensors[i].shape) continue;
    shapes.push_back(*c.tensors[i].shape);
    site.labels.push_back(arg_label(i, *c.params[i]));
  }
  c.size_names = infer_sizes(f, shapes, site);
  for (const Var& s : f.sizes()) c.size_key.push_back(c.size_names.at(s.name()));
}

}  // namespace

// ---- Target::compile and codegen_for

Artifact Target::codegen_for(TargetPlugin& plugin, const TargetInfo& info, const Function& f,
                             const CompileOptions& given, Stages* stages) {
  const CompileOptions opt = resolve_compile_options(plugin, given, f.loc);
  Function lowered = run_pipeline(plugin, info, f, opt, stages);
  Artifact a = plugin.codegen(lowered, info, opt);
  if (stages) stages->emplace_back("source", a.source);
  return a;
}

CompiledKernel Target::compile(const Kernel& k, const CompileOptions& given, Loc loc) const {
  SourceLoc where = SourceLoc::from(loc);
  if (!k.function().body)
    throw Error("compile: the kernel is empty; make it with KernelBuilder::build()", where);
  // The environment is read here, once: every later specialisation compiles with these options.
  const CompileOptions opt = resolve_compile_options(*impl_->dev->plugin, given, where);
  if (!opt.sizes.empty())
    throw Error(
        "compile: CompileOptions::sizes is for Target::codegen_for; a compiled kernel takes its sizes "
        "from each launch's tensor shapes (to fix a size, bind_sizes the kernel's function first)",
        where);
  auto impl = std::make_shared<CompiledKernel::Impl>();
  impl->dev = impl_->dev;
  impl->generic = k.function();
  impl->opt = opt;
  impl->writes = written_params(impl->generic);
  // Symbolic sizes: compiled at each launch with new shapes (see specialise()).
  if (impl->generic.sizes().empty()) {
    impl->last = compile_variant(*impl->dev, impl->generic, opt, where);
    impl->variants[{}] = impl->last;
  }
  return CompiledKernel(std::move(impl));
}

// ---- Specialisation and launch

namespace {

/// The compiled variant for these sizes, compiling it on first sight of them.
std::shared_ptr<Variant> specialise(CompiledKernel::Impl& im, const CheckedArgs& c, const SourceLoc& loc) {
  std::lock_guard<std::mutex> lock(im.mu);
  auto it = im.variants.find(c.size_key);
  if (it == im.variants.end()) {
    // e.g. sizes {M: 100, N: 64}: the pipeline's bind_sizes makes func f(A: f32[M, N] ...) into
    // func f(A: f32[100, 64] ...), and the rest of it lowers that.
    CompileOptions opt = im.opt;
    opt.sizes = c.size_names;
    it = im.variants.emplace(c.size_key, compile_variant(*im.dev, im.generic, opt, loc)).first;
  }
  im.last = it->second;
  return it->second;
}

/// Device copies of the HostTensor arguments, and the access record of a kernel compiled with
/// check_bounds (access_check.h), released however the launch ends. The caller holds the
/// device's mutex for the whole of the staging's life.
struct HostStaging {
  DeviceState& dev;
  const std::vector<bool>& writes;  // per non-size param: CompiledKernel::Impl::writes
  struct Copy {
    void* device;
    const HostTensor* host;
    bool written;
  };
  std::vector<Copy> copies;
  void* record = nullptr;
  bool holds_memory() const { return record || !copies.empty(); }
  ~HostStaging() {
    for (const Copy& c : copies) release(c.device);
    if (record) release(record);
  }
  void release(void* p) {
    try {
      dev.ctx->release(p);
    } catch (...) {  // nothing sensible to do with a failed release while unwinding
    }
  }
  // The record, zeroed: no failure yet.
  LaunchArg access_record() {
    const uint32_t zeros[kAccessRecordWords] = {};
    if (!record) record = dev.ctx->allocate(sizeof zeros);
    dev.ctx->copy_to_device(record, zeros, sizeof zeros);
    LaunchArg la;
    la.device_ptr = record;
    la.shape = {kAccessRecordWords};
    la.dtype = u32;
    return la;
  }
  // The first out-of-range access the launches made, as the tg::Error every target reports.
  void raise_access_error(const Function& lowered) {
    if (!record) return;
    uint32_t words[kAccessRecordWords];
    dev.ctx->copy_to_host(words, record, sizeof words);
    if (auto e = access_error(lowered, words)) throw *e;
  }
  void* stage_in(const HostTensor& h, std::size_t param) {
    void* p = dev.ctx->allocate(h.bytes());
    copies.push_back({p, &h, writes.at(param)});
    dev.ctx->copy_to_device(p, h.data, h.bytes());
    return p;
  }
  // Only the tensors the kernel writes come back (in-place ones included): an input may live in
  // read-only memory (mmap'd weights), and writing it back would fault.
  void copy_back() {
    for (const Copy& c : copies)
      if (c.written) dev.ctx->copy_to_host(c.host->data, c.device, c.host->bytes());
  }
};

/// LaunchArgs in the lowered function's parameter order (sizes omitted), matched by name.
std::vector<LaunchArg> make_launch_args(const Variant& v, const CheckedArgs& c, HostStaging& staging) {
  std::map<std::string, LaunchArg> by_name;
  for (std::size_t i = 0; i < c.params.size(); ++i) {
    const Param& p = *c.params[i];
    LaunchArg la;
    if (p.kind == Param::Kind::Tensor) {
      const TensorView& t = c.tensors[i];
      la.shape = *t.shape;
      la.dtype = t.dtype;
      la.device_ptr = t.buffer     ? t.buffer->device_ptr()
                      : t.in_place ? t.host->data
                                   : staging.stage_in(*t.host, i);
    } else {
      la.is_tensor = false;
      la.dtype = p.var.dtype();
      la.scalar = c.scalars[i];
    }
    by_name[p.name()] = std::move(la);
  }
  std::vector<LaunchArg> out;
  for (const Param& p : v.lowered.params) {
    if (p.kind == Param::Kind::Size) continue;
    if (&p == find_access_record(v.lowered)) {  // the one parameter a pass adds (check_bounds)
      out.push_back(staging.access_record());
      continue;
    }
    auto it = by_name.find(p.name());
    if (it == by_name.end())
      throw Error("the pass pipeline gave kernel '" + v.lowered.name + "' a parameter '" + p.name() +
                  "' that no launch argument provides: a pass must not add parameters");
    out.push_back(it->second);
  }
  return out;
}

/// Run `f` on the device; a plugin's non-tilegen exception becomes a tg::Error at the launch.
template <typename F>
void on_device(const DeviceState& dev, const std::string& kernel, const SourceLoc& loc, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.where().known()) throw;
    throw Error(e.message(), loc);  // a target's complaint about this launch: at the launch
  } catch (const std::exception& e) {
    throw Error("target '" + dev.target + "' failed to run kernel '" + kernel + "': " + e.what(), loc);
  } catch (...) {
    throw Error("target '" + dev.target + "' failed to run kernel '" + kernel +
                    "' with an exception that is not a std::exception",
                loc);
  }
}

/// The application's stream, given to the context for one launch or profile and taken back
/// however it ends. Without one the context is never asked (a target without streams is
/// untouched).
class StreamScope {
 public:
  StreamScope(DeviceState& dev, const std::optional<Stream>& stream, const SourceLoc& loc) : dev_(dev) {
    if (!stream) return;
    try {
      dev.ctx->use_stream(stream);
    } catch (const std::exception& e) {
      throw Error("target '" + dev.target + "' cannot launch on the stream given: " + e.what(), loc);
    }
    given_ = true;
  }
  ~StreamScope() {
    if (!given_) return;
    try {
      dev_.ctx->use_stream(std::nullopt);
    } catch (...) {  // taking the stream back cannot fail in any target; nobody to tell here
    }
  }
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;
  bool given() const { return given_; }

 private:
  DeviceState& dev_;
  bool given_ = false;
};

/// What launch and profile share: check the arguments, specialise, stage host tensors, then
/// run(dev, variant, launch_args) on the device under its lock, and copy host tensors back.
template <typename F>
void on_launch(CompiledKernel::Impl& im, const std::vector<KernelArg>& args, const std::optional<Stream>& stream,
               const SourceLoc& where, F&& run) {
  CheckedArgs c = check_args(im.generic, args, *im.dev, where);
  check_no_overlap(c, im.writes, *im.dev, where);
  std::shared_ptr<Variant> v = specialise(im, c, where);
  DeviceState& dev = *im.dev;
  std::lock_guard<std::mutex> lock(dev.mu);
  HostStaging staging{dev, im.writes, {}};  // released after the stream is taken back
  StreamScope scope(dev, stream, where);
  // On the application's stream a kernel may still run when run() returns or throws: staged
  // memory is released only after the stream has passed it.
  auto drain = [&] {
    if (scope.given() && staging.holds_memory()) dev.ctx->synchronize();
  };
  on_device(dev, im.generic.name, where, [&] {
    std::vector<LaunchArg> la = make_launch_args(*v, c, staging);
    try {
      run(dev, *v, la);
    } catch (...) {
      try {
        drain();
      } catch (...) {  // the launch's own error is the one to report
      }
      throw;
    }
    drain();
    staging.copy_back();
    staging.raise_access_error(v->lowered);
  });
}

const Variant& current(CompiledKernel::Impl& im, const char* what, const SourceLoc& loc) {
  std::lock_guard<std::mutex> lock(im.mu);
  if (!im.last) {
    std::string sizes;
    for (const Var& s : im.generic.sizes()) sizes += (sizes.empty() ? "" : ", ") + s.name();
    throw Error("kernel '" + im.generic.name + "' has symbolic sizes (" + sizes +
                    "): it is compiled at its first launch, for that launch's shapes; launch it before "
                    "asking for its " +
                    std::string(what),
                loc);
  }
  return *im.last;
}

}  // namespace

namespace {
void launch_once(DeviceState& dev, const Variant& v, const std::vector<LaunchArg>& la) {
  dev.ctx->launch(v.loaded, v.lowered, la);
}
}  // namespace

void CompiledKernel::launch(const std::vector<KernelArg>& args, Loc loc) const {
  on_launch(*impl_, args, std::nullopt, SourceLoc::from(loc), launch_once);
}

void CompiledKernel::launch(const std::vector<KernelArg>& args, Stream stream, Loc loc) const {
  on_launch(*impl_, args, stream, SourceLoc::from(loc), launch_once);
}

ProfileResult CompiledKernel::profile(const std::vector<KernelArg>& args, ProfileOptions opt, Loc loc) const {
  SourceLoc where = SourceLoc::from(loc);
  if (opt.runs < 1 || opt.warmup < 0)
    throw Error("profile: runs must be at least 1 and warmup at least 0 (got runs " +
                    std::to_string(opt.runs) + ", warmup " + std::to_string(opt.warmup) + ")",
                where);
  if (opt.stream && opt.stream->kind == Stream::Kind::CommandBuffer)
    throw Error(
        "profile: ProfileOptions::stream is a command buffer, which runs only when the application "
        "submits it, so tilegen cannot time it; give the queue it would be submitted to instead",
        where);
  std::vector<double> ms;
  on_launch(*impl_, args, opt.stream, where, [&](DeviceState& dev, const Variant& v, const auto& la) {
    for (int w = 0; w < opt.warmup; ++w) dev.ctx->launch(v.loaded, v.lowered, la);
    dev.ctx->synchronize();
    if (opt.flush_l2) {
      // One timed run at a time, with the caches flushed before each (a no-op where there are none).
      for (int r = 0; r < opt.runs; ++r) {
        dev.ctx->flush_l2();
        for (double t : dev.ctx->time_launches(v.loaded, v.lowered, la, 1)) ms.push_back(t);
      }
    } else {
      ms = dev.ctx->time_launches(v.loaded, v.lowered, la, opt.runs);
    }
  });
  if (ms.size() != std::size_t(opt.runs))
    throw Error("target '" + impl_->dev->target + "' timed " + std::to_string(ms.size()) + " runs of the " +
                    std::to_string(opt.runs) + " asked for",
                where);
  std::sort(ms.begin(), ms.end());
  ProfileResult r;
  r.runs = opt.runs;
  r.min_ms = ms.front();
  r.max_ms = ms.back();
  std::size_t mid = ms.size() / 2;
  r.median_ms = ms.size() % 2 ? ms[mid] : (ms[mid - 1] + ms[mid]) / 2;
  return r;
}

const std::string& CompiledKernel::name() const { return impl_->generic.name; }
const std::string& CompiledKernel::source(Loc loc) const {
  return current(*impl_, "source()", SourceLoc::from(loc)).artifact.source;
}
const std::string& CompiledKernel::assembly(Loc loc) const {
  return current(*impl_, "assembly()", SourceLoc::from(loc)).artifact.assembly;
}
const std::vector<uint8_t>& CompiledKernel::binary(Loc loc) const {
  return current(*impl_, "binary()", SourceLoc::from(loc)).artifact.binary;
}
const std::vector<std::pair<std::string, std::string>>& CompiledKernel::stages(Loc loc) const {
  return current(*impl_, "stages()", SourceLoc::from(loc)).stages;
}
const Function& CompiledKernel::lowered(Loc loc) const {
  return current(*impl_, "lowered()", SourceLoc::from(loc)).lowered;
}

}  // namespace tg
