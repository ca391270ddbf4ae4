#include "dra/dra_objects.h"

namespace gte::dra {

void DraObjectMaps::add(ResourceClaimConstSharedPtr claim) {
  Key key{claim->ns, claim->name};
  claims_.insert_or_assign(std::move(key), std::move(claim));
}

void DraObjectMaps::add(ResourceClaimTemplateConstSharedPtr tmpl) {
  Key key{tmpl->ns, tmpl->name};
  templates_.insert_or_assign(std::move(key), std::move(tmpl));
}

ResourceClaimConstSharedPtr DraObjectMaps::claim(std::string_view ns, std::string_view name) const {
  const auto it = claims_.find(Key{std::string(ns), std::string(name)});
  return it == claims_.end() ? nullptr : it->second;
}

ResourceClaimTemplateConstSharedPtr DraObjectMaps::claimTemplate(std::string_view ns,
                                                                 std::string_view name) const {
  const auto it = templates_.find(Key{std::string(ns), std::string(name)});
  return it == templates_.end() ? nullptr : it->second;
}

}  // namespace gte::dra
