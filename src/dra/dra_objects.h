#pragma once
// What resolving a pod's DRA demand reads (core/dra_demand.h): the DeviceClasses, compiled, and
// the ResourceClaims and ResourceClaimTemplates by namespace and name. The cluster state offers
// one per snapshot (immutable while a request holds it); DraObjectMaps is the plain-map one.
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "dra/class_catalog.h"
#include "dra/resource_claim.h"

namespace gte::dra {

class DraObjects {
 public:
  virtual ~DraObjects() = default;
  // Never null.
  virtual const ClassCatalogConstSharedPtr& classes() const = 0;
  // Null when the cache has no such object.
  virtual ResourceClaimConstSharedPtr claim(std::string_view ns, std::string_view name) const = 0;
  virtual ResourceClaimTemplateConstSharedPtr claimTemplate(std::string_view ns,
                                                            std::string_view name) const = 0;
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
