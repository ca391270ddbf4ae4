#include "policy/mig_product.h"

#include <algorithm>

namespace gte {

std::string migResourceSuffix(std::string_view profileName) {
  std::string out(profileName);
  std::replace(out.begin(), out.end(), '+', '.');
  return out;
}

const MigProfile* MigProduct::findByName(std::string_view wanted) const noexcept {
  for (const MigProfile& profile : profiles) {
    if (profile.name == wanted) {
      return &profile;
    }
  }
  // Resource spelling: compare with `+` read as `.` without allocating.
  for (const MigProfile& profile : profiles) {
    if (profile.name.size() != wanted.size()) {
      continue;
    }
    bool same = true;
    for (std::size_t i = 0; i < wanted.size() && same; ++i) {
      const char c = profile.name[i] == '+' ? '.' : profile.name[i];
      same = c == wanted[i];
    }
    if (same) {
      return &profile;
    }
  }
  return nullptr;
}

const MigProfile* MigProduct::findByCode(char code) const noexcept {
  for (const MigProfile& profile : profiles) {
    if (profile.code == code) {
      return &profile;
    }
  }
  return nullptr;
}

const MigProduct* findMigProduct(const std::vector<MigProduct>& products,
                                 std::string_view model) noexcept {
  for (const MigProduct& product : products) {
    for (const std::string& pattern : product.models) {
      if (!pattern.empty() && model.find(pattern) != std::string_view::npos) {
        return &product;
      }
    }
  }
  return nullptr;
}

}  // namespace gte
