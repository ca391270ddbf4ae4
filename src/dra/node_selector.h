#pragma once
// A v1.NodeSelector as ResourceSlices use it (spec.nodeSelector, and per device with
// perDeviceNodeSelection), and whether it selects a node: the terms are ORed, the requirements of
// one term ANDed (k8s.io/component-helpers nodeaffinity). A term without requirements selects no
// node. A requirement the API would refuse (an unknown operator, Gt without one integer, a field
// other than metadata.name) is an error, as it is to the scheduler, which then cannot allocate on
// any node.
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/string_map.h"

namespace gte::dra {

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
  friend bool operator==(const NodeSelectorRequirement&, const NodeSelectorRequirement&) = default;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> matchExpressions;  // on labels
  std::vector<NodeSelectorRequirement> matchFields;       // metadata.name only
  friend bool operator==(const NodeSelectorTerm&, const NodeSelectorTerm&) = default;
};

struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;
  friend bool operator==(const NodeSelector&, const NodeSelector&) = default;
};

Result<bool> selectsNode(const NodeSelector& selector, std::string_view nodeName,
                         const StringMap& labels);

}  // namespace gte::dra
