#pragma once
// The DraObjects a snapshot carries in cache mode: the DeviceClasses (compiled) and every
// ResourceClaim, kept in 64 immutable shards by namespace and name, so a claim event copies one
// shard (about 1/64 of the claims) and shares the rest with the previous snapshot. Each claim not
// yet allocated is kept with its spec compiled against the classes (selectors, constraints:
// dra::compileClaim) when it arrives, and every such claim again when the classes change, so a
// request that resolves a pod's claims compiles no CEL. Templates are
// not watched: the scheduler does not schedule a template pod before its claim exists
// (docs/dra.md).
#include <array>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "dra/class_catalog.h"
#include "dra/dra_objects.h"
#include "dra/resource_claim.h"

namespace gte::cluster {

class ClaimShards final : public dra::DraObjects {
 public:
  static constexpr std::size_t kShardCount = 64;
  using Key = std::pair<std::string, std::string>;  // namespace, name
  struct Entry {
    dra::ResourceClaimConstSharedPtr claim;
    dra::CompiledClaimConstSharedPtr program;  // null for an allocated claim (nothing to allocate)
  };
  using Shard = std::map<Key, Entry, std::less<>>;

  explicit ClaimShards(dra::ClassCatalogConstSharedPtr classes);

  // Copies sharing every shard, with one claim added or replaced, one removed, or new classes.
  std::shared_ptr<const ClaimShards> with(dra::ResourceClaimConstSharedPtr claim) const;
  std::shared_ptr<const ClaimShards> without(std::string_view ns, std::string_view name) const;
  std::shared_ptr<const ClaimShards> withClasses(dra::ClassCatalogConstSharedPtr classes) const;
  // All claims replaced (after a full list).
  std::shared_ptr<const ClaimShards> withClaims(
      const std::vector<dra::ResourceClaimConstSharedPtr>& claims) const;

  const dra::ClassCatalogConstSharedPtr& classes() const override { return classes_; }
  dra::ResourceClaimConstSharedPtr claim(std::string_view ns, std::string_view name) const override;
  dra::CachedClaim cachedClaim(std::string_view ns, std::string_view name) const override;
  // Null: templates are not cached.
  dra::ResourceClaimTemplateConstSharedPtr claimTemplate(std::string_view ns,
                                                         std::string_view name) const override;
  std::size_t size() const noexcept { return size_; }

 private:
  static std::size_t shardOf(std::string_view ns, std::string_view name) noexcept;
  // The claim with its program compiled against `classes_`.
  Entry entryOf(dra::ResourceClaimConstSharedPtr claim) const;

  dra::ClassCatalogConstSharedPtr classes_;
  std::array<std::shared_ptr<const Shard>, kShardCount> shards_;
  std::size_t size_ = 0;
};

using ClaimShardsConstSharedPtr = std::shared_ptr<const ClaimShards>;

}  // namespace gte::cluster
