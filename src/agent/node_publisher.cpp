#include "agent/node_publisher.h"

#include "agent/label_patch.h"
#include "kube/api_status.h"
#include "kube/resource_path.h"
#include "model/node_info.h"

namespace gte::agent {

Result<StringMap> NodePublisher::currentLabels() {
  auto response = api_.send("GET", kube::objectPath(kube::kNodes, "", node_));
  if (!response.ok()) {
    return response.error();
  }
  if (!response->success()) {
    return kube::statusError("GET node " + node_, *response);
  }
  auto node = parseNodeJson(response->body);
  if (!node.ok()) {
    return node.error();
  }
  return node->labels;
}

Result<bool> NodePublisher::patch(const std::string& body) {
  auto response = api_.send("PATCH", kube::objectPath(kube::kNodes, "", node_), body,
                            "application/merge-patch+json");
  if (!response.ok()) {
    return response.error();
  }
  if (!response->success()) {
    return kube::statusError("PATCH node " + node_, *response);
  }
  return true;
}

Result<bool> NodePublisher::publish(const StringMap& desired) {
  auto current = currentLabels();
  if (!current.ok()) {
    return current.error();
  }
  const auto body = labelPatch(*current, desired, prefix_);
  if (!body) {
    return false;
  }
  return patch(*body);
}

Result<bool> NodePublisher::cleanup() {
  auto current = currentLabels();
  if (!current.ok()) {
    return current.error();
  }
  const auto body = cleanupPatch(*current, prefix_);
  if (!body) {
    return false;
  }
  return patch(*body);
}

}  // namespace gte::agent
