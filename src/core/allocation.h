#pragma once
// The GPUs and MIG instances one pod will take on one node, as predicted from the node's state.
#include <string>
#include <vector>

#include "core/node_usage.h"

namespace gte {

struct MigAssignment {
  int gpu = 0;
  std::string profile;  // profile name from the product table ("3g.40gb", "1g.10gb+me")
  int start = 0;
  bool createsInstance = false;  // dynamic MIG: no instance exists there yet
  friend bool operator==(const MigAssignment&, const MigAssignment&) = default;
};

struct Allocation {
  bool complete = false;  // false when the node cannot host the whole demand
  std::vector<int> gpus;  // whole GPUs, ascending
  std::vector<MigAssignment> mig;
  // Replicas of shared GPUs (docs/sharing.md): the device plugin lays them on the GPUs by tenants
  // when the pod starts, so they name no GPU; the node's state counts them as tenants.
  int replicas = 0;
  friend bool operator==(const Allocation&, const Allocation&) = default;
};

// Records an allocation as taken (for the usage the snapshot builder is fed next).
void addToUsage(NodeUsage& usage, const Allocation& allocation);

}  // namespace gte
