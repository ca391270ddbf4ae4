#include "service/nodes_json.h"

#include <algorithm>
#include <array>

#include "json/json_writer.h"
#include "policy/link_class.h"
#include "service/explain_json.h"

namespace gte {
namespace {

using json::JsonWriter;

// GPU pairs per link class, best class first; classes without pairs are left out.
void writeLinks(JsonWriter& w, const GpuTopology& topology) {
  std::array<int, kLinkClassCount> pairs{};
  for (int i = 0; i < topology.gpuCount; ++i) {
    for (int j = i + 1; j < topology.gpuCount; ++j) {
      ++pairs[static_cast<std::size_t>(topology.linkClass(i, j))];
    }
  }
  w.beginObject();
  for (int c = kLinkClassCount - 1; c >= 0; --c) {
    if (pairs[static_cast<std::size_t>(c)] == 0) continue;
    w.key(linkClassName(static_cast<LinkClass>(c))).integer(pairs[static_cast<std::size_t>(c)]);
  }
  w.endObject();
}

// GPU indices whose mark is `mark` (NodeState::gpuHealth).
void writeGpusMarked(JsonWriter& w, const NodeState& state, GpuHealth mark) {
  w.beginArray();
  for (int gpu = 0; gpu < state.topology.gpuCount; ++gpu) {
    if (state.gpuHealth(gpu) == mark) w.element().integer(gpu);
  }
  w.endArray();
}

// The node's marked hardware (docs/health.md): GPUs failed, degraded and cordoned, and the GPU
// pairs whose NVLinks are not fine; null when nothing is marked.
void writeHealth(JsonWriter& w, const NodeState& state) {
  const GpuTopology& topo = state.topology;
  bool gpus = false;
  for (int gpu = 0; gpu < topo.gpuCount && !gpus; ++gpu)
    gpus = state.gpuHealth(gpu) != GpuHealth::kHealthy;
  const bool links = std::any_of(topo.linkHealth.begin(), topo.linkHealth.end(),
                                 [](LinkHealth h) { return h != LinkHealth::kOk; });
  if (!gpus && !links) {
    w.null();
    return;
  }
  w.beginObject();
  w.key("failed");
  writeGpusMarked(w, state, GpuHealth::kUnhealthy);
  w.key("degraded");
  writeGpusMarked(w, state, GpuHealth::kDegraded);
  w.key("cordoned");
  writeGpusMarked(w, state, GpuHealth::kCordoned);
  w.key("links").beginArray();
  for (int i = 0; i < topo.gpuCount; ++i) {
    for (int j = i + 1; j < topo.gpuCount; ++j) {
      const LinkHealth mark = topo.linkHealthOf(i, j);
      if (mark == LinkHealth::kOk) continue;
      w.element().beginObject().key("gpus").beginArray();
      w.element().integer(i);
      w.element().integer(j);
      w.endArray().key("state").string(linkHealthName(mark));
      w.endObject();
    }
  }
  w.endArray().endObject();
}

}  // namespace

void writeFreeSets(JsonWriter& w, const FreeSetCounts& sets) {
  w.beginObject();
  for (std::size_t i = 0; i < kFreeSetSizes.size(); ++i) {
    w.key(std::to_string(kFreeSetSizes[i])).integer(sets[i]);
  }
  w.endObject();
}

// The replicas of a shared profile's MIG devices still free (one migFreeInstances entry each,
// the pods the extender placed since the agent's last pass taken off); null where the labels do
// not place MIG devices (GPU Feature Discovery's counts alone).
void writeFreeMigReplicas(JsonWriter& w, const NodeState& state, std::string_view profileName) {
  const MigProfile* profile =
      state.migProduct ? state.migProduct->findByName(profileName) : nullptr;
  if (profile == nullptr) {
    w.null();
    return;
  }
  std::int64_t free = 0;
  for (const std::vector<MigInstance>& instances : state.migFreeInstances) {
    free += std::count_if(instances.begin(), instances.end(),
                          [&](const MigInstance& i) { return i.profileCode == profile->code; });
  }
  w.integer(free);
}

// The node's MIG capacity: GPUs in MIG mode, memory slices and those free, the profiles with a
// legal free placement now, and (GPU Feature Discovery nodes) free MIG devices by resource; null
// on a node without MIG.
void writeMig(JsonWriter& w, const NodeState& state) {
  const auto migGpus = std::count(state.migUsable.begin(), state.migUsable.end(), true);
  if (migGpus == 0 && state.migTotalDevices.empty()) {
    w.null();
    return;
  }
  w.beginObject();
  w.key("gpus").integer(static_cast<std::int64_t>(migGpus));
  w.key("slices").integer(state.migSlicesTotal);
  w.key("slicesFree").integer(state.migSlicesTotal - state.migSlicesInUse);
  w.key("fitsNow").beginArray();
  for (const MigProfileFit& fit : state.migFits) {
    if (fit.gpu >= 0) w.element().string(fit.profile);
  }
  w.endArray();
  w.key("freeDevices").beginObject();
  for (const MigDeviceCount& free : state.migFreeDevices)
    w.key(free.profile).integer(free.count);
  w.endObject();
  // Profiles whose MIG devices the device plugin shares (docs/sharing.md#mig-devices-shared):
  // exclusive pods are refused them.
  w.key("shared").beginObject();
  if (state.sharedMig) {
    for (const SharedMigProfile& shared : *state.sharedMig) {
      w.key(shared.profile).beginObject();
      w.key("strategy").string(sharingStrategyName(shared.sharing.strategy));
      w.key("replicas");
      if (shared.sharing.replicas > 0) {
        w.integer(shared.sharing.replicas);
      } else {
        w.null();
      }
      w.key("freeReplicas");
      writeFreeMigReplicas(w, state, shared.profile);
      w.endObject();
    }
  }
  w.endObject().endObject();
}

std::string writeNodeListing(std::span<const ListedNode> nodes, std::size_t cached) {
  std::string out;
  JsonWriter w(out);
  FreeSetCounts total{};
  std::int64_t freeGpus = 0;
  w.beginObject().key("nodes").beginArray();
  for (const ListedNode& node : nodes) {
    const NodeState& state = *node.state;
    const FreeSetCounts sets = freeNvlinkSets(state);
    for (std::size_t i = 0; i < total.size(); ++i)
      total[i] += sets[i];
    freeGpus += state.freeCount;
    w.element().beginObject();
    w.key("name").string(node.name).key("topology").string(topologyName(&state));
    w.key("model").string(state.topology.model).key("fabric").string(state.topology.fabric);
    w.key("gpus").integer(state.gpuCount).key("usableGpus").integer(state.usableCount);
    w.key("freeGpus").integer(state.freeCount).key("free");
    writeGpuList(w, state.freeMask);
    w.key("freeSets");
    writeFreeSets(w, sets);
    w.key("largestNvlinkSet").integer(state.linksKnown() ? state.largestNvlinkClique : 0);
    w.key("links");
    writeLinks(w, state.topology);
    w.key("mig");
    writeMig(w, state);
    w.key("sharing");
    writeGpuSharing(w, &state);
    w.key("health");
    writeHealth(w, state);
    w.endObject();
  }
  w.endArray();
  w.key("listed").integer(static_cast<std::int64_t>(nodes.size()));
  w.key("cached").integer(static_cast<std::int64_t>(cached));
  w.key("freeGpus").integer(freeGpus).key("freeSets");
  writeFreeSets(w, total);
  w.endObject();
  return out;
}

}  // namespace gte
