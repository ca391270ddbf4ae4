#pragma once
// Reads this agent's Node and merge-patches its labels through the extender's API client
// (kube::ApiTransport). Only `metadata.labels` under the prefix is ever touched.
#include <string>

#include "base/result.h"
#include "kube/api_transport.h"
#include "model/string_map.h"

namespace gte::agent {

class NodePublisher {
 public:
  NodePublisher(kube::ApiTransport& api, std::string node, std::string prefix)
      : api_(api), node_(std::move(node)), prefix_(std::move(prefix)) {}

  // True when a patch was sent and accepted; false when the Node already carries these facts.
  Result<bool> publish(const StringMap& desired);
  // Removes every label under the prefix. True when there was something to remove.
  Result<bool> cleanup();

 private:
  Result<StringMap> currentLabels();
  Result<bool> patch(const std::string& body);

  kube::ApiTransport& api_;
  std::string node_;
  std::string prefix_;
};

}  // namespace gte::agent
