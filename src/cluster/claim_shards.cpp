#include "cluster/claim_shards.h"

#include <functional>

namespace gte::cluster {

ClaimShards::ClaimShards(dra::ClassCatalogConstSharedPtr classes)
    : classes_(classes ? std::move(classes) : std::make_shared<const dra::ClassCatalog>()) {}

std::size_t ClaimShards::shardOf(std::string_view ns, std::string_view name) noexcept {
  const std::size_t h = std::hash<std::string_view>{}(ns)*31 + std::hash<std::string_view>{}(name);
  return h % kShardCount;
}

ClaimShards::Entry ClaimShards::entryOf(dra::ResourceClaimConstSharedPtr claim) const {
  Entry entry;
  if (!claim->allocated) {
    // The id is the one resolveDraDemand compiles with, so messages and explain read the same.
    entry.program = std::make_shared<const Result<dra::ClaimProgram>>(
        dra::compileClaim(claim->spec, claim->ns + "/" + claim->name, *classes_));
  }
  entry.claim = std::move(claim);
  return entry;
}

std::shared_ptr<const ClaimShards> ClaimShards::with(dra::ResourceClaimConstSharedPtr claim) const {
  auto next = std::make_shared<ClaimShards>(*this);
  const std::size_t s = shardOf(claim->ns, claim->name);
  auto shard = shards_[s] ? std::make_shared<Shard>(*shards_[s]) : std::make_shared<Shard>();
  Key key{claim->ns, claim->name};
  const bool added = shard->insert_or_assign(std::move(key), entryOf(std::move(claim))).second;
  next->size_ += added ? 1 : 0;
  next->shards_[s] = std::move(shard);
  return next;
}

std::shared_ptr<const ClaimShards> ClaimShards::without(std::string_view ns,
                                                        std::string_view name) const {
  const std::size_t s = shardOf(ns, name);
  if (!shards_[s]) return std::make_shared<ClaimShards>(*this);
  auto shard = std::make_shared<Shard>(*shards_[s]);
  const std::size_t erased = shard->erase(Key{std::string(ns), std::string(name)});
  auto next = std::make_shared<ClaimShards>(*this);
  next->size_ -= erased;
  next->shards_[s] = std::move(shard);
  return next;
}

std::shared_ptr<const ClaimShards> ClaimShards::withClasses(
    dra::ClassCatalogConstSharedPtr classes) const {
  auto next = std::make_shared<ClaimShards>(*this);
  next->classes_ = classes ? std::move(classes) : std::make_shared<const dra::ClassCatalog>();
  // Programs name classes by their index in the catalog: every pending claim is compiled again.
  for (auto& shard : next->shards_) {
    if (!shard) continue;
    auto rebuilt = std::make_shared<Shard>();
    for (const auto& [key, entry] : *shard)
      rebuilt->emplace(key, next->entryOf(entry.claim));
    shard = std::move(rebuilt);
  }
  return next;
}

std::shared_ptr<const ClaimShards> ClaimShards::withClaims(
    const std::vector<dra::ResourceClaimConstSharedPtr>& claims) const {
  std::array<std::shared_ptr<Shard>, kShardCount> building;
  for (auto& shard : building)
    shard = std::make_shared<Shard>();
  for (const auto& claim : claims) {
    building[shardOf(claim->ns, claim->name)]->insert_or_assign(Key{claim->ns, claim->name},
                                                                entryOf(claim));
  }
  auto next = std::make_shared<ClaimShards>(classes_);
  for (std::size_t s = 0; s < kShardCount; ++s) {
    next->size_ += building[s]->size();
    next->shards_[s] = std::move(building[s]);
  }
  return next;
}

dra::ResourceClaimConstSharedPtr ClaimShards::claim(std::string_view ns,
                                                    std::string_view name) const {
  const auto& shard = shards_[shardOf(ns, name)];
  if (!shard) return nullptr;
  const auto it = shard->find(Key{std::string(ns), std::string(name)});
  return it == shard->end() ? nullptr : it->second.claim;
}

dra::CachedClaim ClaimShards::cachedClaim(std::string_view ns, std::string_view name) const {
  const auto& shard = shards_[shardOf(ns, name)];
  if (!shard) return {};
  const auto it = shard->find(Key{std::string(ns), std::string(name)});
  if (it == shard->end()) return {};
  return dra::CachedClaim{it->second.claim, it->second.program};
}

dra::ResourceClaimTemplateConstSharedPtr ClaimShards::claimTemplate(std::string_view,
                                                                    std::string_view) const {
  return nullptr;
}

}  // namespace gte::cluster
