#pragma once
// Request bodies kube-scheduler sends (k8s.io/kube-scheduler/extender/v1 types). Keys are Go field
// names; like Go's decoder we match them case-insensitively, preferring nothing else.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/node_info.h"
#include "model/pod_info.h"

namespace gte::wire {

// One item of ExtenderArgs.Nodes.items: its exact bytes (echoed back unchanged in full-Node mode)
// and what was read from them. A node whose object cannot be read is rejected on its own, by name.
struct NodeItem {
  std::string_view raw;  // points into the request body, which must outlive it
  std::string name;
  Result<NodeInfo> info = Error{};
};

// ExtenderArgs for filter and prioritize. Exactly one of `nodes` (nodeCacheCapable: false) and
// `nodeNames` (nodeCacheCapable: true) is set; the answer uses the same form.
struct ExtenderArgs {
  PodInfo pod;
  std::optional<std::vector<NodeItem>> nodes;
  std::optional<std::vector<std::string>> nodeNames;
};

// Limits parseExtenderArgs enforces while it reads, so that a refused body costs only the bytes
// read up to the refusal (a 1,000-node body refused in names mode is never parsed node by node).
struct ArgsLimits {
  std::size_t maxNodes = SIZE_MAX;  // entries of Nodes.items or NodeNames
  bool nodeObjectsRefused = false;  // a non-null Nodes is refused (a cluster cache serves names)
};

// The refusals of a request over ArgsLimits, whichever verb meets them (the parse below for filter
// and prioritize, the router's skim of the body for preempt and explain), with the codes no other
// parse error uses: kFailedPrecondition for full Node objects sent to an extender with a cluster
// cache (a configuration mismatch), kTooLarge for more than `limit` nodes.
Error nodeObjectsRefused();
Error tooManyNodes(std::size_t limit);

// A parse stopped by `limits` fails with one of the refusals above.
Result<ExtenderArgs> parseExtenderArgs(std::string_view body, const ArgsLimits& limits = {});

struct BindingArgs {
  std::string podName;
  std::string podNamespace;
  std::string podUid;
  std::string node;
};

Result<BindingArgs> parseBindingArgs(std::string_view body);

// A victim as the scheduler names it: always a UID; with nodeCacheCapable: false also the full pod.
struct Victim {
  std::string uid;
  std::optional<PodInfo> pod;
};

struct NodeVictims {
  std::string node;
  std::vector<Victim> pods;  // most important first, as sent
  std::int64_t numPdbViolations = 0;
};

// ExtenderPreemptionArgs, with NodeNameToVictims and NodeNameToMetaVictims folded into one list.
struct PreemptionArgs {
  PodInfo pod;
  std::vector<NodeVictims> candidates;
};

Result<PreemptionArgs> parsePreemptionArgs(std::string_view body);

}  // namespace gte::wire
