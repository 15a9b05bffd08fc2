// Target switches are CompileOptions params (plugin.h's ParamKey): the environment only gives
// their defaults, read by the runtime (resolve_compile_options), so an environment value and the
// same param make the same options, the same artifact and one kernel-cache key. The plugins of
// this build are checked key by key; the cache key itself in test_plugins.cpp (the testgood plugin).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "runtime_test_util.h"
#include "tilegen/samples.h"

using namespace tg;
using namespace tg::testing;

namespace {

/// The plugins of this build that load here (with or without a device).
std::vector<TargetPlugin*> loaded_plugins() {
  std::vector<TargetPlugin*> out;
  for (const char* name : {"cpu", "cuda", "hip", "vulkan", "null"})
    if (TargetPlugin* p = find_plugin(name)) out.push_back(p);
  return out;
}

/// A value `key` takes that is not its default.
std::string other_value(const ParamKey& key) {
  switch (key.kind) {
    case ParamKey::Kind::Switch: return key.default_value == "1" ? "off" : "on";
    case ParamKey::Kind::Count:
      return std::to_string(key.default_value == std::to_string(key.min) ? key.max : key.min);
    case ParamKey::Kind::Choice:
      for (const std::string& c : key.choices)
        if (c != key.default_value) return c;
  }
  return key.default_value;
}

}  // namespace

TEST_CASE("target params: each key's environment variable is its default, read by the runtime") {
  std::vector<TargetPlugin*> plugins = loaded_plugins();
  if (plugins.empty()) MESSAGE("skipped: no target plugin loads here");
  for (TargetPlugin* p : plugins) {
    for (const ParamKey& key : p->param_keys()) {
      INFO(p->name() << " " << key.name);
      CHECK(!key.help.empty());
      CHECK(key.canonical(key.default_value, "default") == key.default_value);
      CHECK(resolve_compile_options(*p, {}).params.at(key.name) == key.default_value);
      if (key.env.empty()) continue;
      CHECK(key.env.rfind("TILEGEN_", 0) == 0);
      const std::string value = other_value(key);
      const std::string canonical = key.canonical(value, "test");
      {
        EnvGuard g(key.env, value);
        CompileOptions from_env = resolve_compile_options(*p, {});
        CHECK(from_env.params.at(key.name) == canonical);
        CompileOptions given;
        given.params[key.name] = value;
        CHECK(resolve_compile_options(*p, given).params == from_env.params);  // one key, either source
        given.params[key.name] = key.default_value;  // a param wins over the environment
        CHECK(resolve_compile_options(*p, given).params.at(key.name) == key.default_value);
      }
      {
        EnvGuard g(key.env, "no such value");
        const std::string m = error_of([&] { resolve_compile_options(*p, {}); });
        CHECK(m.find(key.env + " (the default of CompileOptions param \"" + key.name +
                     "\") is 'no such value'") != std::string::npos);
        CHECK(m.find("it takes " + key.takes()) != std::string::npos);
      }
    }
  }
}

TEST_CASE("target params: docs/environment.md lists every key and environment variable a plugin declares") {
  std::ifstream in(std::string(TILEGEN_SOURCE_DIR) + "/docs/environment.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  for (TargetPlugin* p : loaded_plugins())
    for (const ParamKey& key : p->param_keys()) {
      INFO(p->name() << " " << key.name);
      CHECK(text.str().find("`" + key.name + "`") != std::string::npos);
      if (!key.env.empty()) CHECK(text.str().find("`" + key.env + "`") != std::string::npos);
    }
}

TEST_CASE("target params: values are checked and made canonical, whichever target") {
  std::vector<TargetPlugin*> plugins = loaded_plugins();
  for (TargetPlugin* p : plugins)
    for (const ParamKey& key : known_param_keys(*p)) {
      INFO(p->name() << " " << key.name);
      CompileOptions bad;
      bad.params[key.name] = "no such value";
      CHECK(error_of([&] { check_compile_options(*p, bad); }) ==
            "compile: CompileOptions param \"" + key.name + "\" is 'no such value'; it takes " + key.takes());
      CHECK_THROWS_AS(param_text(bad, key), Error);  // a plugin handed it directly refuses it too
    }
  const ParamKey n = ParamKey::count("n", 0, 64, 4, "", "a count");
  CHECK(n.canonical("007", "n") == "7");
  CHECK(error_of([&] { n.canonical("65", "n"); }) ==
        "n is 65, outside its range; it takes a whole number from 0 to 64");
  CHECK(error_of([&] { n.canonical("+1", "n"); }) == "n is '+1'; it takes a whole number from 0 to 64");
  const ParamKey s = ParamKey::on_off("s", true, "", "a switch");
  CHECK(s.canonical("OFF", "s") == "0");
  CHECK(s.canonical("True", "s") == "1");
  const ParamKey c = ParamKey::one_of("c", {"x", "y", "z"}, "x", "", "a choice");
  CHECK(c.takes() == "x, y or z");
  CHECK(error_of([&] { c.canonical("X", "c"); }) == "c is 'X'; it takes x, y or z");
}

TEST_CASE("target params: vulkan's coopmat=0 is the plain path, the same from the environment") {
  TargetPlugin* vk = find_plugin("vulkan");
  if (!vk) {
    MESSAGE("skipped: no vulkan plugin in this build");
    return;
  }
  // An H200-like device with f16 cooperative matrices, no device needed.
  const TargetInfo info = vk->info_for_arch(
      "vk1.3;sg=32;f16s;i8s;f16;i64;i16;i8;sgops;smem=49152;thr=1024;cm=coopmat_16x16x16_f16_f32");
  REQUIRE(!info.matrix_units.empty());  // the units stay in the TargetInfo; the param decides
  const samples::Sample& s = *samples::find("gemm");
  samples::Params p =
      samples::resolve(s, {{"M", 64}, {"N", 64}, {"K", 64}, {"block_M", 32}, {"block_N", 32}});
  Function f = s.build(p, f16).function();
  auto source = [&](const CompileOptions& opt) { return Target::codegen_for(*vk, info, f, opt).source; };
  const std::string coop = source({});
  CHECK(coop.find("OpCooperativeMatrixMulAddKHR") != std::string::npos);
  CompileOptions plain_opt;
  plain_opt.params["coopmat"] = "0";
  std::vector<std::pair<std::string, std::string>> stages;
  Target::codegen_for(*vk, info, f, plain_opt, &stages);
  const std::string plain = stages.back().second;
  CHECK(plain.find("OpCooperativeMatrixMulAddKHR") == std::string::npos);
  for (const auto& [name, text] : stages)
    CHECK(text.find("mma ") == std::string::npos);  // no pass used the units
  EnvGuard g("TILEGEN_VULKAN_COOPMAT", "0");
  CHECK(source({}) == plain);
  CompileOptions on;
  on.params["coopmat"] = "1";
  CHECK(source(on) == coop);
}
