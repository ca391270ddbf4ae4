#pragma once
// When a pod was bound to its node, read from the raw Pod JSON: the PodScheduled condition's
// lastTransitionTime (the API server sets it when the Binding is created), else
// metadata.creationTimestamp (a pod created with spec.nodeName set, e.g. by a DaemonSet controller,
// is bound from birth). PodInfo does not carry either, so the cache reads them from the same bytes.
//
// This is what tells the accounting whether the node agent's `gen` (the unix second of its last
// label write) already covers the pod: labels written after the bind reflect it.
#include <cstdint>
#include <optional>
#include <string_view>

namespace gte::cluster {

// Unix seconds; nullopt when neither field is present (or the JSON is unreadable).
std::optional<std::int64_t> podBindTime(std::string_view podJson);

// "2026-07-01T10:00:00Z" (RFC 3339, any offset, optional fraction) to unix seconds.
std::optional<std::int64_t> parseRfc3339(std::string_view text);

}  // namespace gte::cluster
