// MIG placement on one GPU: fits are decided by legal free starts, never by counting slices.
#include <catch2/catch_test_macros.hpp>

#include <vector>

#include "policy/default_policy.h"
#include "topology/mig_placement.h"

namespace gte {
namespace {

const MigProduct& a100() {
  static const std::vector<MigProduct> products = defaultMigProducts();
  const MigProduct* product = findMigProduct(products, "NVIDIA-A100-SXM4-40GB");
  REQUIRE(product != nullptr);
  return *product;
}

SliceMask occupiedBy(const std::vector<MigInstance>& instances) {
  return occupiedSlices(instances, a100());
}

TEST_CASE("same free-slice count, different answers", "[topology][mig]") {
  const MigProfile& threeG = *a100().findByName("3g.20gb");
  // 1g@0+1g@5 and 1g@0+1g@1 both leave six free memory slices; only the second leaves a 3g start.
  const SliceMask oneGAt0And5 =
      occupiedBy({{'0', 0, MigInstanceState::kUsed}, {'0', 5, MigInstanceState::kUsed}});
  const SliceMask oneGAt0And1 =
      occupiedBy({{'0', 0, MigInstanceState::kUsed}, {'0', 1, MigInstanceState::kUsed}});
  CHECK(std::popcount(static_cast<unsigned>(oneGAt0And5)) == 2);
  CHECK(std::popcount(static_cast<unsigned>(oneGAt0And1)) == 2);
  CHECK_FALSE(bestFreePlacement(oneGAt0And5, threeG, a100()).has_value());
  const auto placed = bestFreePlacement(oneGAt0And1, threeG, a100());
  REQUIRE(placed.has_value());
  CHECK(placed->start == 4);
}

TEST_CASE("feasible starts per occupancy", "[topology][mig]") {
  struct Case {
    const char* what;
    std::vector<MigInstance> instances;
    const char* profile;
    std::vector<int> feasible;
  };
  const std::vector<Case> cases = {
      {"1g@0 1g@5: 2g only at 2",
       {{'0', 0, MigInstanceState::kFree}, {'0', 5, MigInstanceState::kFree}},
       "2g.10gb",
       {2}},
      {"1g@0 1g@5: 1g.10gb at 2 and 6",
       {{'0', 0, MigInstanceState::kFree}, {'0', 5, MigInstanceState::kFree}},
       "1g.10gb",
       {2, 6}},
      {"1g@0 1g@1: 3g at 4",
       {{'0', 0, MigInstanceState::kUsed}, {'0', 1, MigInstanceState::kUsed}},
       "3g.20gb",
       {4}},
      {"1g@0 1g@1: no 4g",
       {{'0', 0, MigInstanceState::kUsed}, {'0', 1, MigInstanceState::kUsed}},
       "4g.20gb",
       {}},
      {"3g@0 3g@4: nothing",
       {{'2', 0, MigInstanceState::kFree}, {'2', 4, MigInstanceState::kFree}},
       "1g.5gb",
       {}},
      {"seven 1g: slot 7 is unreachable for 1g",
       {{'0', 0, MigInstanceState::kUsed},
        {'0', 1, MigInstanceState::kUsed},
        {'0', 2, MigInstanceState::kUsed},
        {'0', 3, MigInstanceState::kUsed},
        {'0', 4, MigInstanceState::kUsed},
        {'0', 5, MigInstanceState::kUsed},
        {'0', 6, MigInstanceState::kUsed}},
       "1g.5gb",
       {}},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const MigProfile& profile = *a100().findByName(c.profile);
    const SliceMask occupied = occupiedBy(c.instances);
    std::vector<int> feasible;
    for (int start : profile.starts) {
      if (placementFree(occupied, start, profile.slices)) {
        feasible.push_back(start);
      }
    }
    CHECK(feasible == c.feasible);
    CHECK(bestFreePlacement(occupied, profile, a100()).has_value() == !c.feasible.empty());
  }
}

TEST_CASE("the chosen start keeps the most valuable placements open", "[topology][mig]") {
  const MigProfile& oneG = *a100().findByName("1g.5gb");
  // On an empty GPU, 1g@6 blocks 1g@6, 1g+me@6, 1g.10gb@6, 3g@4 and 7g (value lost 16); 1g@0
  // would also block 2g@0, 3g@0 and 4g@0 (lost 22). The driver fills slot 6 first too.
  const auto onEmpty = bestFreePlacement(0, oneG, a100());
  REQUIRE(onEmpty.has_value());
  CHECK(onEmpty->start == 6);
  CHECK(placementValue(0, a100()) - onEmpty->valueAfter == 16);
  // With 3g@4 in place, a 1g belongs in 0..3 next to it; slot 3 blocks least of the 4g/3g@0 side?
  // Every start in 0..3 blocks 4g@0, 3g@0 and 7g; 1g@3 and 1g@2 also block 2g@2 and 1g.10gb@2,
  // 1g@0/1g@1 block 2g@0 and 1g.10gb@0: all equal, so the highest start wins the tie.
  const SliceMask threeGAt4 = occupiedBy({{'2', 4, MigInstanceState::kUsed}});
  const auto beside = bestFreePlacement(threeGAt4, oneG, a100());
  REQUIRE(beside.has_value());
  CHECK(beside->start == 3);
}

TEST_CASE("the product table is chosen by model substring", "[topology][mig]") {
  const std::vector<MigProduct> products = defaultMigProducts();
  CHECK(findMigProduct(products, "NVIDIA-A100-SXM4-80GB")->name == "A100-80GB");
  CHECK(findMigProduct(products, "NVIDIA-H100-80GB-HBM3")->name == "H100-80GB");
  CHECK(findMigProduct(products, "NVIDIA-H100-NVL")->name == "H100-NVL");
  CHECK(findMigProduct(products, "NVIDIA-H200")->name == "H200");
  CHECK(findMigProduct(products, "NVIDIA-B200")->name == "B200");
  CHECK(findMigProduct(products, "Tesla-V100-SXM2-16GB") == nullptr);
  const MigProduct& h100 = *findMigProduct(products, "NVIDIA-H100-80GB-HBM3");
  CHECK(h100.findByName("1g.10gb.me") == h100.findByName("1g.10gb+me"));
  CHECK(h100.findByName("1g.20gb")->slices == 2);
  CHECK(h100.findByCode('9')->name == "1g.20gb");
}

}  // namespace
}  // namespace gte
