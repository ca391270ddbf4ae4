#pragma once
// What the extender itself knows is taken on a node on top of its labels: GPUs of pods bound or
// assumed since the labels' `gen` (the node agent has not published them yet). For nodes without
// labels-v1 (no `used` string) it must carry every GPU pod on the node.
#include <cstdint>
#include <string>
#include <vector>

namespace gte {

struct MigInstanceRef {
  int gpu = 0;
  std::string profile;  // profile name or resource suffix ("1g.10gb+me" or "1g.10gb.me")
  int start = 0;        // first memory slice; -1 when unknown (fallback nodes)
  friend bool operator==(const MigInstanceRef&, const MigInstanceRef&) = default;
};

struct NodeUsage {
  std::vector<int> gpus;            // whole GPUs taken, by index
  std::int64_t unknownGpus = 0;     // whole GPUs taken whose indices are unknown
  std::vector<MigInstanceRef> mig;  // MIG instances taken (existing free ones, or new ones)
  // Where the device plugin shares the node's GPUs (docs/sharing.md): each pod's replicas, in the
  // order the pods were placed. The state lays them on the GPUs as the plugin would (by tenants);
  // in a `released` usage they are replicas the labels' tenants count that are to be free.
  std::vector<int> replicas;

  bool empty() const noexcept {
    return gpus.empty() && unknownGpus == 0 && mig.empty() && replicas.empty();
  }
  friend bool operator==(const NodeUsage&, const NodeUsage&) = default;
};

}  // namespace gte
