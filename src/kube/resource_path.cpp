#include "kube/resource_path.h"

#include "kube/query_escape.h"

namespace gte::kube {

std::string collectionPath(const ResourceType& type, std::string_view ns) {
  std::string path =
      type.group.empty() ? std::string("/api/") : "/apis/" + std::string(type.group) + "/";
  path += type.version;
  if (!ns.empty()) path += "/namespaces/" + queryEscape(ns);
  path += "/";
  path += type.resource;
  return path;
}

std::string objectPath(const ResourceType& type, std::string_view ns, std::string_view name,
                       std::string_view subresource) {
  std::string path = collectionPath(type, ns) + "/" + queryEscape(name);
  if (!subresource.empty()) {
    path += "/";
    path += subresource;
  }
  return path;
}

}  // namespace gte::kube
