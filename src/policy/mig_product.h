#pragma once
// The MIG geometry of one GPU product: which GPU-instance profiles it offers, how many of its 8
// memory slices each occupies and at which start slices it may be placed. Placement, not slice
// counting, decides whether a profile fits (labels-v1 "MIG profile codes").
#include <string>
#include <string_view>
#include <vector>

namespace gte {

inline constexpr int kMigMemorySlices = 8;

struct MigProfile {
  std::string name;         // as the MIG user guide prints it: "1g.10gb", "1g.10gb+me"
  char code = '0';          // labels-v1 profile code (NVML profile constant in base 36)
  int slices = 1;           // memory slices occupied
  std::vector<int> starts;  // legal first memory slices
  int maxInstances = 1;     // per GPU; placements alone do not cap `+me` profiles
  friend bool operator==(const MigProfile&, const MigProfile&) = default;
};

struct MigProduct {
  std::string name;                 // "A100-80GB"
  std::vector<std::string> models;  // substrings of the sanitised model label that select it
  std::vector<MigProfile> profiles;
  friend bool operator==(const MigProduct&, const MigProduct&) = default;

  // By resource name (`nvidia.com/mig-<name>` with `+` written as `.`) or by profile name.
  const MigProfile* findByName(std::string_view wanted) const noexcept;
  const MigProfile* findByCode(char code) const noexcept;
};

// Kubernetes resource names spell `+` as `.`: "1g.10gb+me" is requested as "1g.10gb.me".
std::string migResourceSuffix(std::string_view profileName);

// The first product one of whose model substrings occurs in `model`; nullptr when none does.
const MigProduct* findMigProduct(const std::vector<MigProduct>& products,
                                 std::string_view model) noexcept;

}  // namespace gte
