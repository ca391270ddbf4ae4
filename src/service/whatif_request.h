#pragma once
// The body of POST {prefix}/whatif (docs/api.md, "What-if"): either one pod (a v1.Pod object, as
// kubectl prints it) placed `count` times, or a CSV of pods in the simulator's trace format
// (name,cpu_milli,memory_mib,num_gpu), or one pod as a group of `groupSize` members, and optionally
// a policy YAML to compare with the running policy. The limits are checked while reading, before
// anything is decided: a count or a CSV over
// --whatif-max-pods, or a policy text over kMaxWhatifPolicyBytes, is refused as too large (413),
// anything malformed or contradictory as invalid (400), each with a message naming the field.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/pod_info.h"
#include "sim/sim_pod.h"

namespace gte {

// Bounds of one what-if (serve flags --whatif-max-pods, --whatif-deadline).
struct WhatifLimits {
  std::size_t maxPods = 1000;                 // `count`, `groupSize`, or the CSV's pods
  std::chrono::milliseconds deadline{3'000};  // per request, both policies together
};

// A policy YAML is a few KB; the limit keeps a large body from being handed to the YAML parser.
inline constexpr std::size_t kMaxWhatifPolicyBytes = 256 * 1024;

struct WhatifRequest {
  std::optional<PodInfo> pod;  // "pod"
  std::int64_t count = 1;      // "count": copies of `pod`, placed one after another
  // "groupSize": instead of `count`, a group of that many copies of `pod`, placed by the group
  // planner (docs/groups.md) as one group
  std::optional<std::int64_t> groupSize;
  std::vector<sim::SimPod> csvPods;       // "csv", in order
  std::optional<std::string> policyYaml;  // "policy": the proposed policy, not yet parsed
};

Result<WhatifRequest> parseWhatifRequest(std::string_view body, std::size_t maxPods);

}  // namespace gte
