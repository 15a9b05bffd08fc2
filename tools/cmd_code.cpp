// `tilegen ir` and `tilegen source`: every stage of compilation reachable by name, without a
// device — the IR as built (a sample's) or as written (a .tgir file's), after each pass of a
// target's pipeline, and the generated code.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "cli.h"
#include "kernel_file.h"

namespace tg::cli {

namespace {

/// The function to compile and the values of its sizes (CompileOptions::sizes).
struct Input {
  Function fn;
  std::map<std::string, int64_t> sizes;
};

// The positional SAMPLE with --set and --dtype applied, built, with the sample's tuned tiles for
// `target` where one is given; or the positional FILE.tgir read, with its sizes from --set (every
// one of them when `need_sizes`: the passes and code generators run on bound sizes).
Input input_from_args(const Args& a, const char* usage, const TargetInfo* target, bool need_sizes) {
  if (a.positional.empty()) throw UsageError(std::string("missing SAMPLE or FILE.tgir; ") + usage);
  const samples::Params set = parse_set(a.get("set"));
  if (is_kernel_file(a.positional[0])) {
    if (a.has("dtype"))
      throw UsageError("--dtype is for samples; the dtypes of " + a.positional[0] + " are those of its text");
    KernelFile k = read_kernel_file(a.positional[0], set);
    if (need_sizes) {
      try {
        require_values(k, false);
      } catch (const Error& e) {
        throw UsageError(e.message());
      }
    }
    return {std::move(k.fn), std::move(k.sizes)};
  }
  const samples::Sample& s = find_sample(a.positional[0]);
  const DType t = pick_dtype(s, a.get("dtype"));
  const samples::Params p =
      target ? resolve_params(s, set, *target, t, parse_param(a.get("param"))) : resolve_params(s, set);
  return {build_kernel(s, p, t).function(), {}};
}

void write_output(const Args& a, const std::string& what, const void* data, std::size_t size, bool binary) {
  if (a.has("output")) {
    const std::string path = a.get("output");
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw UsageError("cannot open '" + path + "' for writing");
    out.write(static_cast<const char*>(data), std::streamsize(size));
    if (!out) throw Error("writing " + what + " to '" + path + "' failed");
    std::cerr << "wrote " << size << " bytes of " << what << " to " << path << "\n";
    return;
  }
  if (binary && isatty(STDOUT_FILENO))
    throw UsageError("refusing to write a binary to a terminal; give -o FILE");
  std::cout.write(static_cast<const char*>(data), std::streamsize(size));
  std::cout.flush();
}

}  // namespace

// `tilegen ir gemm --after all` prints "// ---- input" and the builder's IR, then
// "// ---- after bind_sizes" and the IR after that pass, and so on through the interp pipeline.
// `tilegen ir my.tgir --set N=1000 --after bounds` does the same for the kernel in my.tgir.
int cmd_ir(const std::vector<std::string>& argv) {
  static const char* usage =
      "usage: tilegen ir SAMPLE [--target T] [--arch A] [--after PASS|all] [--set K=V,...] [--dtype D] "
      "[--param K=V,...] [--locations]\n"
      "       tilegen ir FILE.tgir [--target T] [--arch A] [--after PASS|all] [--set SIZE=V,...] "
      "[--param K=V,...] [--locations]\n";
  Args a = parse_args(
      argv, {{"target"}, {"arch"}, {"after"}, {"set"}, {"dtype"}, {"param"}, {"locations", false}}, 1);
  if (a.has("help")) return print_usage(usage);
  // A sample takes the tiles the target's device is tuned for, as `run`, `bench` and `source` do.
  TargetPlugin& plugin = find_target_plugin(a.get("target", "interp"));
  const TargetInfo info = codegen_info(plugin, a.get("arch"));
  Input in = input_from_args(a, usage, &info, a.has("after"));
  PrintOptions print_opt;
  print_opt.locations = a.has("locations");
  if (!a.has("after")) {
    std::cout << print(in.fn, print_opt);
    return 0;
  }
  CompileOptions given;
  given.arch = a.get("arch");
  given.params = parse_param(a.get("param"));
  given.sizes = in.sizes;
  // As a compile resolves them: the environment's defaults (TILEGEN_CUDA_LDMATRIX=0 ...) count here too.
  const CompileOptions opt = resolve_compile_options(plugin, given);
  std::vector<PassEntry> pipeline = plugin.pipeline(info, opt);
  const std::string after = a.get("after");
  std::vector<std::string> names{"input"};
  for (const auto& p : pipeline) names.push_back(p.name);
  if (after != "all" && std::find(names.begin(), names.end(), after) == names.end())
    throw UsageError("target " + plugin.name() + " has no pass '" + after + "'; its pipeline is " +
                     join(names, ", ") + " (or 'all')");
  PassManager pm(std::move(pipeline));
  PassManagerOptions pm_opt;
  pm_opt.keep_stages = true;
  pm.run(in.fn, info, pm_opt);
  const bool many = after == "all" || std::count(names.begin(), names.end(), after) > 1;
  for (const auto& [name, text] : pm.stages()) {
    if (after != "all" && name != after) continue;
    if (many) std::cout << "// ---- " << (name == "input" ? "input" : "after " + name) << "\n";
    std::cout << text;
    if (!text.empty() && text.back() != '\n') std::cout << "\n";
  }
  return 0;
}

// `tilegen source gemm --target cuda --arch sm_90a` prints the CUDA C++ the cuda target would
// compile; `--emit asm` its PTX, `--emit binary -o gemm.cubin` the cubin. `--stats` prints each
// kernel's resource use where the target reports it (hip: VGPRs, AGPRs, LDS, scratch, spills
// from the code object's metadata).
int cmd_source(const std::vector<std::string>& argv) {
  static const char* usage =
      "usage: tilegen source SAMPLE --target T [--arch A] [--set K=V,...] [--dtype D] [--param K=V,...] "
      "[--emit source|asm|binary] [--stats] [-o FILE]\n"
      "       tilegen source FILE.tgir --target T [--arch A] [--set SIZE=V,...] [--param K=V,...] "
      "[--emit source|asm|binary] [--stats] [-o FILE]\n";
  Args a = parse_args(argv,
                      {{"target"},
                       {"arch"},
                       {"set"},
                       {"dtype"},
                       {"param"},
                       {"emit"},
                       {"stats", false},
                       {"output", true, 'o'}},
                      1);
  if (a.has("help")) return print_usage(usage);
  if (!a.has("target")) throw UsageError(std::string("source needs --target; ") + usage);
  const std::string emit = a.get("emit", "source");
  if (emit != "source" && emit != "asm" && emit != "binary")
    throw UsageError("--emit takes source, asm or binary, got '" + emit + "'");
  TargetPlugin& plugin = find_target_plugin(a.get("target"));
  const TargetInfo info = codegen_info(plugin, a.get("arch"));
  Input in = input_from_args(a, usage, &info, true);
  CompileOptions opt;
  opt.arch = a.get("arch");
  opt.params = parse_param(a.get("param"));
  opt.sizes = in.sizes;
  const Artifact art = Target::codegen_for(plugin, info, in.fn, opt);
  const std::string where = " for " + plugin.name() + " " + describe_device(info);
  if (a.has("stats")) {
    if (art.stats.empty()) throw Error("target " + plugin.name() + " reports no resource use" + where);
    write_output(a, "resource use", art.stats.data(), art.stats.size(), false);
  } else if (emit == "source") {
    write_output(a, "source", art.source.data(), art.source.size(), false);
  } else if (emit == "asm") {
    if (art.assembly.empty()) throw Error("target " + plugin.name() + " gives no assembly" + where);
    write_output(a, "assembly", art.assembly.data(), art.assembly.size(), false);
  } else {
    if (art.binary.empty()) throw Error("target " + plugin.name() + " gives no binary" + where);
    write_output(a, "binary", art.binary.data(), art.binary.size(), true);
  }
  return 0;
}

}  // namespace tg::cli
