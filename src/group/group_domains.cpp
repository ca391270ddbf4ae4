#include "group/group_domains.h"

#include <algorithm>

#include "core/node_state.h"
#include "policy/policy_hash.h"

namespace gte {

NodeGroupFacts nodeGroupFacts(const NodeState& state, const GroupDomainIds& domain,
                              const Policy& policy) {
  NodeGroupFacts facts;
  facts.slots = countGroupSlots(state, policy);
  facts.domain = domain;
  facts.freeGpus = static_cast<std::uint8_t>(std::clamp(state.freeCount, 0, 255));
  facts.usableGpus = static_cast<std::uint8_t>(std::clamp(state.usableCount, 0, 255));
  facts.largestNvlinkClique =
      static_cast<std::uint8_t>(std::clamp(state.largestNvlinkClique, 0, 255));
  // FNV-1a over the model, a separator no label value holds ('/' is never in a sanitised model),
  // and the fabric, without building the joined string (this runs for every node of a shard).
  std::uint64_t key = fnv1a64(state.topology.model);
  const auto mix = [&key](char c) {
    key ^= static_cast<unsigned char>(c);
    key *= 1099511628211ull;  // FNV-1a's 64-bit prime
  };
  mix('/');
  for (const char c : state.topology.fabric)
    mix(c);
  facts.modelKey = key;
  return facts;
}

std::string_view GroupDomainNames::name(std::size_t level, std::uint32_t id) const noexcept {
  if (level >= byLevel.size() || id >= byLevel[level].size()) return {};
  return byLevel[level][id];
}

void GroupDomainInterner::setLevels(const std::vector<GroupLevel>& levels) {
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < levels.size() && i < kMaxGroupLevels; ++i) {
    labels.push_back(levels[i].label);
  }
  if (labels == labels_) return;
  labels_ = std::move(labels);
  for (auto& ids : ids_)
    ids.clear();
  building_ = std::make_shared<GroupDomainNames>();
  published_ = nullptr;
}

GroupDomainIds GroupDomainInterner::idsOf(const StringMap& labels) {
  GroupDomainIds out{kNoDomain, kNoDomain, kNoDomain, kNoDomain};
  for (std::size_t level = 0; level < labels_.size(); ++level) {
    const auto label = labels.find(labels_[level]);
    if (label == labels.end()) continue;
    auto& ids = ids_[level];
    const auto [it, added] = ids.try_emplace(label->second, static_cast<std::uint32_t>(ids.size()));
    if (added) {
      if (published_ != nullptr) {
        // The published names are immutable: continue on a copy.
        building_ = std::make_shared<GroupDomainNames>(*published_);
        published_ = nullptr;
      }
      building_->byLevel[level].push_back(label->second);
    }
    out[level] = it->second;
  }
  return out;
}

GroupDomainNamesConstSharedPtr GroupDomainInterner::names() {
  if (published_ == nullptr) published_ = building_;
  return published_;
}

}  // namespace gte
