#pragma once
// What resolving a pod's DRA demand reads (dra_placement/dra_demand.h): the DeviceClasses,
// compiled, and the ResourceClaims and ResourceClaimTemplates by namespace and name. The cluster
// state offers one per snapshot (immutable while a request holds it); DraObjectMaps is the
// plain-map one.
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "base/result.h"
#include "dra/claim_program.h"
#include "dra/class_catalog.h"
#include "dra/resource_claim.h"

namespace gte::dra {

using CompiledClaimConstSharedPtr = std::shared_ptr<const Result<ClaimProgram>>;

// A cached claim and, when the cache compiled it ahead (as the claim or the classes arrived), its
// spec compiled against the objects' classes (an error: the claim is uninterpretable).
struct CachedClaim {
  ResourceClaimConstSharedPtr claim;    // null: not cached
  CompiledClaimConstSharedPtr program;  // null: not compiled ahead; the reader compiles it
};

class DraObjects {
 public:
  virtual ~DraObjects() = default;
  // Never null.
  virtual const ClassCatalogConstSharedPtr& classes() const = 0;
  // Null when the cache has no such object.
  virtual ResourceClaimConstSharedPtr claim(std::string_view ns, std::string_view name) const = 0;
  virtual ResourceClaimTemplateConstSharedPtr claimTemplate(std::string_view ns,
                                                            std::string_view name) const = 0;
  // The claim with its compiled program where the cache keeps one (the cluster cache does, so no
  // request compiles the CEL selectors of a claim the watch has seen); the plain maps compile
  // nothing ahead.
  virtual CachedClaim cachedClaim(std::string_view ns, std::string_view name) const {
    return CachedClaim{claim(ns, name), nullptr};
  }
};

using DraObjectsConstSharedPtr = std::shared_ptr<const DraObjects>;

class DraObjectMaps final : public DraObjects {
 public:
  explicit DraObjectMaps(ClassCatalogConstSharedPtr classes)
      : classes_(classes ? std::move(classes) : std::make_shared<const ClassCatalog>()) {}

  void add(ResourceClaimConstSharedPtr claim);
  void add(ResourceClaimTemplateConstSharedPtr tmpl);

  const ClassCatalogConstSharedPtr& classes() const override { return classes_; }
  ResourceClaimConstSharedPtr claim(std::string_view ns, std::string_view name) const override;
  ResourceClaimTemplateConstSharedPtr claimTemplate(std::string_view ns,
                                                    std::string_view name) const override;

 private:
  using Key = std::pair<std::string, std::string>;
  ClassCatalogConstSharedPtr classes_;
  std::map<Key, ResourceClaimConstSharedPtr, std::less<>> claims_;
  std::map<Key, ResourceClaimTemplateConstSharedPtr, std::less<>> templates_;
};

}  // namespace gte::dra
