// gpu_device_header(): the order in which the GPU source targets' device headers are put
// together. A target's primitives use the integer types, and the shared part uses the primitives.
#include <doctest/doctest.h>

#include <string>

#include "tilegen/common/gpu_source.h"

using namespace tg;

TEST_CASE("gpu_device_header: integer types, then the target's primitives, the shared part, its own part") {
  std::string h = gpu::gpu_device_header("\n// PRIMITIVES\n", "\n// TARGET PART\n");
  CHECK(h.rfind("\n#pragma once\n", 0) == 0);  // first, so the header is read once
  std::size_t types = h.find("typedef long long tg_i64;"), prims = h.find("// PRIMITIVES");
  std::size_t common = h.find(gpu::gpu_device_header_common()), part = h.find("// TARGET PART");
  for (const char* t :
       {"typedef unsigned char tg_u8;", "typedef unsigned short tg_u16;", "typedef unsigned int tg_u32;"})
    CHECK(h.find(t) < types);
  CHECK(types < prims);
  REQUIRE(common != std::string::npos);
  CHECK(prims < common);
  CHECK(common < part);
  CHECK(h.size() == part + std::string("// TARGET PART\n").size());  // nothing after the target's part
}
