#pragma once
// GET {prefix}/nodes (docs/api.md, "Nodes"): each node of the cluster cache as the extender sees
// it now: its GPUs, the free ones, how many all-NVLink sets of 1, 2, 4 and 8 GPUs they still hold
// (core/free_sets.h), and how its GPU pairs are linked. Field names are a stable interface (the
// `nodes` command and the kubectl plugin read them).
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "core/free_sets.h"
#include "core/node_state.h"
#include "json/json_writer.h"

namespace gte {

struct ListedNode {
  std::string_view name;
  const NodeState* state = nullptr;
};

// {"1": 8, "2": 4, "4": 2, "8": 1}: the free all-NVLink sets per size (the what-if writes them
// the same way).
void writeFreeSets(json::JsonWriter& w, const FreeSetCounts& sets);

// `nodes` in the order to list them; `cached`: every node the cache holds (more than listed when
// the listing was cut at its limit).
std::string writeNodeListing(std::span<const ListedNode> nodes, std::size_t cached);

}  // namespace gte
