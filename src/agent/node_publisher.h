#pragma once
// Reads this agent's Node and merge-patches its labels through the extender's API client
// (kube::ApiTransport). Only `metadata.labels` under the prefix is ever touched.
#include <string>
#include <string_view>

#include "base/result.h"
#include "kube/api_transport.h"
#include "model/string_map.h"

namespace gte::agent {

// What a pass reads from its Node: the labels (to patch against) and the annotations (the
// operator's cordons).
struct NodeView {
  StringMap labels;
  StringMap annotations;
};

// metadata.annotations of a v1.Node JSON object (string values only).
Result<StringMap> nodeAnnotations(std::string_view json);

class NodePublisher {
 public:
  NodePublisher(kube::ApiTransport& api, std::string node, std::string prefix)
      : api_(api), node_(std::move(node)), prefix_(std::move(prefix)) {}

  // True when a patch was sent and accepted; false when the Node already carries these facts.
  Result<bool> publish(const StringMap& desired);
  // The same against labels read by read() in this pass (one GET per pass).
  Result<bool> publish(const StringMap& desired, const StringMap& currentLabels);
  Result<NodeView> read();
  // Removes every label under the prefix. True when there was something to remove.
  Result<bool> cleanup();

 private:
  Result<StringMap> currentLabels();
  Result<std::string> getNode();
  Result<bool> patch(const std::string& body);

  kube::ApiTransport& api_;
  std::string node_;
  std::string prefix_;
};

}  // namespace gte::agent
