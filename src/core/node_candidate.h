#pragma once
// One node a request asks about, resolved to its state: from the request's own Node object
// (full-Node mode) or from the cluster snapshot (NodeNames mode). The per-request loops in
// src/filter and src/prioritize take a list of these.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/node_state.h"

namespace gte {

struct NodeCandidate {
  std::string_view name;
  const NodeState* state = nullptr;  // null: the node could not be resolved, `missing` says why
  std::string_view missing;
};

// The per-request loops read the first members of thousands of states spread over the heap, and
// each read stalls on a cache miss; asking for them some candidates ahead overlaps the misses. Call
// once per iteration with the current candidate; `k` is the whole-GPU request size (0: none), whose
// WholeGpuOptions entry the loop will read.
inline void prefetchAhead(std::span<const NodeCandidate> nodes, const NodeCandidate& current,
                          std::int64_t k) noexcept {
  constexpr std::size_t kStateDistance = 12;  // the state's first two lines
  constexpr std::size_t kWholeDistance = 6;   // its whole[k], once the state line is in
  const auto at = static_cast<std::size_t>(&current - nodes.data());
  if (at + kStateDistance < nodes.size()) {
    if (const NodeState* state = nodes[at + kStateDistance].state) {
      __builtin_prefetch(state);
      __builtin_prefetch(reinterpret_cast<const char*>(state) + 64);
    }
  }
  if (k > 0 && at + kWholeDistance < nodes.size()) {
    const NodeState* state = nodes[at + kWholeDistance].state;
    if (state != nullptr && static_cast<std::size_t>(k) < state->whole.size()) {
      __builtin_prefetch(&state->whole[static_cast<std::size_t>(k)]);
    }
  }
}

}  // namespace gte
