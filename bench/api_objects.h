#pragma once
// Node and Pod objects as the API server lists and watches them, for the cluster-cache and watch
// benchmarks: the labels, annotations and status fields real clusters carry, most of which the
// readers skip.
#include <string>

namespace gte::bench {

// A DGX-H100-like Node: well-known, GPU Feature Discovery and labels-v1 labels (`used` is the
// labels-v1 `used` string), the usual status (conditions, addresses, node info).
std::string nodeJson(int i, const std::string& used);

// A Pod of a training job: two containers (one with `gpus` GPUs when non-zero), bound to `node`
// (or only nominated to it), its PodScheduled time, and for a third of them kubectl's
// last-applied-configuration annotation.
std::string podJson(int i, const std::string& node, bool nominatedOnly, int gpus,
                    const std::string& scheduledAt);

}  // namespace gte::bench
