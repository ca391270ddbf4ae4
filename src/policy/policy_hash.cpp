#include "policy/policy_hash.h"

#include <cstdint>
#include <cstdio>
#include <sstream>

namespace gte {

std::string canonicalPolicyText(const Policy& policy) {
  std::ostringstream out;
  out << "labelPrefix=" << policy.labelPrefix << '\n';
  out << "strategy=" << strategyName(policy.defaultStrategy) << '\n';
  out << "linkScores.nvlinkPerLink=" << policy.linkScores.nvlinkPerLink << '\n';
  for (int level = 0; level < kPcieLevelCount; ++level) {
    out << "linkScores." << linkClassName(static_cast<LinkClass>(level)) << '='
        << policy.linkScores.pcie[static_cast<std::size_t>(level)] << '\n';
  }
  out << "weights.linkQuality=" << policy.weights.linkQuality << '\n';
  out << "weights.numaLocality=" << policy.weights.numaLocality << '\n';
  out << "weights.packing=" << policy.weights.packing << '\n';
  out << "weights.migFit=" << policy.weights.migFit << '\n';
  out << "unknownTopology.allowMultiGpu=" << policy.allowMultiGpuOnUnknownTopology << '\n';
  out << "wireScale.linkFirst=" << policy.linkFirst << '\n';
  out << "mig.dynamic=" << policy.dynamicMig << '\n';
  for (std::size_t p = 0; p < policy.migProducts.size(); ++p) {
    const MigProduct& product = policy.migProducts[p];
    const std::string base = "mig.products[" + std::to_string(p) + "]";
    out << base << ".name=" << product.name << '\n';
    for (const std::string& model : product.models) {
      out << base << ".models+=" << model << '\n';
    }
    for (std::size_t i = 0; i < product.profiles.size(); ++i) {
      const MigProfile& profile = product.profiles[i];
      out << base << ".profiles[" << i << "]=" << profile.name << ',' << profile.code << ','
          << profile.slices << ',' << profile.maxInstances << ",starts:";
      for (int start : profile.starts) {
        out << start << ' ';
      }
      out << '\n';
    }
  }
  out << "groups.holdTtlMillis=" << policy.groups.holdTtlMillis << '\n';
  // Written only when set, so the hash of every policy written before the key existed stays the
  // same across the upgrade that added it.
  if (policy.sharing.defaultIsolation != Isolation::kShared) {
    out << "sharing.defaultIsolation=" << isolationName(policy.sharing.defaultIsolation) << '\n';
  }
  if (policy.sharing.placement != SharedPlacement::kSpread) {
    out << "sharing.placement=" << sharedPlacementName(policy.sharing.placement) << '\n';
  }
  if (policy.groups.sameModel != GroupLevelMode::kPreferred) {
    out << "groups.sameModel=" << groupLevelModeName(policy.groups.sameModel) << '\n';
  }
  if (policy.scarceSets.points != ScarceSetsPolicy{}.points) {
    out << "scarceSets.points=" << policy.scarceSets.points << '\n';
  }
  if (policy.health.degradedGpus != DegradedGpus::kAvoid) {
    out << "health.degradedGpus=" << degradedGpusName(policy.health.degradedGpus) << '\n';
  }
  if (policy.health.degradedLinks != DegradedLinks::kAvoid) {
    out << "health.degradedLinks=" << degradedLinksName(policy.health.degradedLinks) << '\n';
  }
  for (std::size_t i = 0; i < policy.groups.levels.size(); ++i) {
    const GroupLevel& level = policy.groups.levels[i];
    out << "groups.levels[" << i << "]=" << level.label << ',' << groupLevelModeName(level.mode)
        << '\n';
  }
  return out.str();
}

std::uint64_t fnv1a64(std::string_view bytes) noexcept {
  std::uint64_t hash = 14695981039346656037ull;
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string policyHash(const Policy& policy) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(fnv1a64(canonicalPolicyText(policy))));
  return std::string(buf);
}

}  // namespace gte
