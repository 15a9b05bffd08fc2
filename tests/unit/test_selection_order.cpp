// Target::select()'s order (selection_order, api/src/device_ranking.cpp) on the machines tilegen
// runs on, described by fake targets() lists: devices are ranked by their TargetInfo, never by
// the plugin's name, and ties keep the discovery order (plugins by file name, interp last).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "runtime_test_util.h"

using namespace tg;

namespace {

TargetInfo device(const std::string& name, bool software = false, bool is_cpu = false,
                  bool portable = false) {
  TargetInfo d;
  d.device_name = name;
  d.software = software;
  d.is_cpu = is_cpu;
  d.portable = portable;
  return d;
}
TargetInfo gpu(const std::string& name) { return device(name); }
TargetInfo portable_gpu(const std::string& name) { return device(name, false, false, true); }
TargetInfo host_cpu() { return device("host", false, true); }
TargetInfo lavapipe() { return device("llvmpipe", true, false, true); }
TargetInfo interp() { return device("reference interpreter", true); }

TargetStatus available(const std::string& name, std::vector<TargetInfo> devices) {
  TargetStatus s;
  s.name = name;
  s.available = true;
  s.devices = std::move(devices);
  return s;
}
TargetStatus unavailable(const std::string& name) {
  TargetStatus s;
  s.name = name;
  s.reason = "no device";
  return s;
}

/// "cuda:NVIDIA H200" for each device of the order, best first.
std::vector<std::string> order(const std::vector<TargetStatus>& all) {
  std::vector<std::string> out;
  for (const DeviceChoice& c : selection_order(all))
    out.push_back(all[c.target].name + ":" + all[c.target].devices[std::size_t(c.device)].device_name);
  return out;
}

using Order = std::vector<std::string>;

}  // namespace

TEST_CASE(
    "selection order: an NVIDIA machine takes cuda, then vulkan on the same GPU, the cpu, lavapipe, interp") {
  // Discovery order: libtilegen_cpu, _cuda, _hip, _null, _vulkan (file names), then interp.
  std::vector<TargetStatus> all = {available("cpu", {host_cpu()}),
                                   available("cuda", {gpu("NVIDIA H200")}),
                                   unavailable("hip"),
                                   unavailable("null"),
                                   available("vulkan", {portable_gpu("NVIDIA H200"), lavapipe()}),
                                   available("interp", {interp()})};
  CHECK(order(all) == Order{"cuda:NVIDIA H200", "vulkan:NVIDIA H200", "cpu:host", "vulkan:llvmpipe",
                            "interp:reference interpreter"});
}

TEST_CASE("selection order: an AMD machine takes hip over vulkan; a CPU-only one the cpu over lavapipe") {
  std::vector<TargetStatus> amd = {
      available("cpu", {host_cpu()}), unavailable("cuda"), available("hip", {gpu("AMD Instinct MI300X")}),
      available("vulkan", {portable_gpu("AMD Instinct MI300X")}), available("interp", {interp()})};
  CHECK(order(amd).front() == "hip:AMD Instinct MI300X");
  CHECK(order(amd)[1] == "vulkan:AMD Instinct MI300X");
  // This project's CI machine: no GPU, lavapipe.
  std::vector<TargetStatus> ci = {available("cpu", {host_cpu()}),
                                  unavailable("cuda"),
                                  unavailable("hip"),
                                  unavailable("null"),
                                  available("vulkan", {lavapipe()}),
                                  available("interp", {interp()})};
  CHECK(order(ci) == Order{"cpu:host", "vulkan:llvmpipe", "interp:reference interpreter"});
  // Nothing but the interpreter.
  CHECK(order({unavailable("cpu"), available("interp", {interp()})}) ==
        Order{"interp:reference interpreter"});
}

TEST_CASE("selection order: a new target is ranked by its TargetInfo, whatever its name") {
  // A hardware accelerator from a plugin no list in tilegen names, found before cuda: both are
  // hardware GPUs through their own toolchains, so discovery order decides.
  std::vector<TargetStatus> all = {available("acme", {gpu("ACME NPU")}), available("cpu", {host_cpu()}),
                                   available("cuda", {gpu("NVIDIA H200")}), available("interp", {interp()})};
  CHECK(order(all) == Order{"acme:ACME NPU", "cuda:NVIDIA H200", "cpu:host", "interp:reference interpreter"});
  // The same plugin describing a software emulator is ranked below the native cpu.
  all[0].devices = {device("ACME simulator", true)};
  CHECK(order(all) ==
        Order{"cuda:NVIDIA H200", "cpu:host", "acme:ACME simulator", "interp:reference interpreter"});
  // A portable API on a GPU sits between the vendor targets and the cpu.
  all[0].devices = {portable_gpu("ACME GPU")};
  CHECK(order(all) == Order{"cuda:NVIDIA H200", "acme:ACME GPU", "cpu:host", "interp:reference interpreter"});
}

TEST_CASE(
    "selection order: a plugin's own device order holds; unavailable plugins' devices are never chosen") {
  std::vector<TargetStatus> all = {
      available("vulkan", {portable_gpu("discrete"), portable_gpu("integrated"), lavapipe()}),
      available("interp", {interp()})};
  CHECK(order(all) ==
        Order{"vulkan:discrete", "vulkan:integrated", "vulkan:llvmpipe", "interp:reference interpreter"});
  TargetStatus listed = unavailable("cuda");
  listed.devices = {gpu("NVIDIA H200")};  // a probe that found a device but, say, no compiler
  all.insert(all.begin(), listed);
  CHECK(order(all).front() == "vulkan:discrete");
  CHECK(selection_order({}).empty());
}

TEST_CASE("selection order: Target::select() opens the first device of selection_order(targets())") {
  testing::EnvGuard target("TILEGEN_TARGET", std::nullopt);
  std::vector<TargetStatus> all = targets();
  std::vector<DeviceChoice> best = selection_order(all);
  REQUIRE(!best.empty());  // interp at least
  CHECK(all.back().name == "interp");
  CHECK(all[best.back().target].name == "interp");
  Target t = Target::select();
  CHECK(t.name() == all[best.front().target].name);
  CHECK(t.info().device_name ==
        all[best.front().target].devices[std::size_t(best.front().device)].device_name);
}
