#include "policy/default_policy.h"

#include <string>
#include <utility>

namespace gte {
namespace {

// All six products share the GA100/GH100 8-slice geometry (as `nvidia-smi mig -lgipp` prints it on
// A100 and H100; docs/configuration.md); only the memory in the profile names differs. `mem` lists
// the GiB suffixes for 1g, 1g rev2 (two memory slices), 2g, 3g, 4g and 7g.
struct ProfileMemory {
  int oneSlice;
  int oneSliceRev2;
  int twoSlice;
  int threeSlice;
  int fourSlice;
  int sevenSlice;
};

std::string gb(int sm, int memory) {
  return std::to_string(sm) + "g." + std::to_string(memory) + "gb";
}

std::vector<MigProfile> eightSliceProfiles(const ProfileMemory& mem) {
  return {
      {gb(1, mem.oneSlice), '0', 1, {0, 1, 2, 3, 4, 5, 6}, 7},
      {gb(1, mem.oneSlice) + "+me", '7', 1, {0, 1, 2, 3, 4, 5, 6}, 1},
      {gb(1, mem.oneSliceRev2), '9', 2, {0, 2, 4, 6}, 4},
      {gb(2, mem.twoSlice), '1', 2, {0, 2, 4}, 3},
      {gb(3, mem.threeSlice), '2', 4, {0, 4}, 2},
      {gb(4, mem.fourSlice), '3', 4, {0}, 1},
      {gb(7, mem.sevenSlice), '4', 8, {0}, 1},
  };
}

MigProduct product(std::string name, std::vector<std::string> models, const ProfileMemory& mem) {
  return MigProduct{std::move(name), std::move(models), eightSliceProfiles(mem)};
}

}  // namespace

std::vector<MigProduct> defaultMigProducts() {
  // Order matters: the first product whose model substring matches wins, so the more specific
  // names (H100-NVL before H100) come first.
  return {
      product("A100-40GB", {"A100-SXM4-40GB", "A100-PCIE-40GB", "A100-40GB"},
              {5, 10, 10, 20, 20, 40}),
      product("A100-80GB", {"A100-SXM4-80GB", "A100-80GB-PCIe", "A100-PCIE-80GB", "A100-80GB"},
              {10, 20, 20, 40, 40, 80}),
      product("H100-NVL", {"H100-NVL", "H100-94GB"}, {12, 24, 24, 47, 47, 94}),
      product("H100-80GB", {"H100-80GB", "H100-SXM5-80GB", "H100-PCIe"}, {10, 20, 20, 40, 40, 80}),
      product("H200", {"H200"}, {18, 35, 35, 71, 71, 141}),
      product("B200", {"B200"}, {23, 45, 45, 90, 90, 180}),
  };
}

Policy defaultPolicy() {
  Policy policy;
  policy.migProducts = defaultMigProducts();
  policy.groups = defaultGroupsPolicy();
  return policy;
}

}  // namespace gte
