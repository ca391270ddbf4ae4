#include "agent/usage.h"

#include "model/gpu_sharing.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace gte::agent {
namespace {

bool migEnabled(const Discovery& d, std::size_t gpu) {
  return d.topology.migMode[gpu] == MigMode::kEnabled ||
         d.topology.migMode[gpu] == MigMode::kPending;
}

// The GPU instance a MIG device UUID names on this node, or nullptr.
MigInstance* migInstanceOf(Discovery& d, std::string_view id) {
  for (const MigDeviceId& device : d.migDevices) {
    if (device.uuid != id) {
      continue;
    }
    for (MigInstance& instance : d.topology.migInstances[static_cast<std::size_t>(device.gpu)]) {
      if (instance.start == device.start) return &instance;
    }
  }
  return nullptr;
}

bool markMigDevice(Discovery& d, const std::string& id) {
  MigInstance* instance = migInstanceOf(d, id);
  if (instance == nullptr) return false;
  instance->state = MigInstanceState::kUsed;
  return true;
}

// The GPU a whole-GPU device id names (its UUID or its index) that is not in MIG mode: a
// whole-GPU id for a MIG-mode GPU cannot be a live allocation.
std::optional<std::size_t> wholeGpuOf(const Discovery& d, const std::string& id) {
  const auto n = static_cast<std::size_t>(d.topology.gpuCount);
  std::size_t gpu = n;
  for (std::size_t i = 0; i < d.gpuUuids.size() && i < n; ++i) {
    if (!d.gpuUuids[i].empty() && d.gpuUuids[i] == id) gpu = i;
  }
  if (gpu == n) {
    int index = -1;
    const auto [ptr, ec] = std::from_chars(id.data(), id.data() + id.size(), index);
    if (ec != std::errc() || ptr != id.data() + id.size() || index < 0 ||
        static_cast<std::size_t>(index) >= n) {
      return std::nullopt;
    }
    gpu = static_cast<std::size_t>(index);
  }
  if (migEnabled(d, gpu)) return std::nullopt;
  return gpu;
}

bool markGpu(Discovery& d, const std::string& id) {
  const auto gpu = wholeGpuOf(d, id);
  if (!gpu) return false;
  d.topology.used[*gpu] = GpuUse::kAllocated;
  return true;
}

// A replica of a shared GPU (docs/sharing.md): a tenant of its GPU, which stays free for the
// replicas other pods may still get.
bool markGpuReplica(Discovery& d, const std::string& device) {
  const auto gpu = wholeGpuOf(d, device);
  if (!gpu) return false;
  std::vector<std::uint8_t>& tenants = d.topology.tenants;
  tenants.resize(static_cast<std::size_t>(d.topology.gpuCount), 0);
  if (tenants[*gpu] < 255) ++tenants[*gpu];
  return true;
}

}  // namespace

Status applyUsedBits(Discovery& discovery, std::string_view bits) {
  GpuTopology& topo = discovery.topology;
  if (bits.size() != static_cast<std::size_t>(topo.gpuCount)) {
    return invalidArgument("--used has " + std::to_string(bits.size()) +
                           " characters, want one per GPU (" + std::to_string(topo.gpuCount) + ")");
  }
  for (std::size_t i = 0; i < bits.size(); ++i) {
    const char bit = bits[i];
    const bool mig = migEnabled(discovery, i);
    if (bit == '1' && !mig) {
      topo.used[i] = GpuUse::kAllocated;
    } else if (bit == '0' || (bit == 'm' && mig)) {
      continue;
    } else {
      return invalidArgument("--used character '" + std::string(1, bit) + "' for GPU " +
                             std::to_string(i) +
                             (mig ? " (MIG enabled: want m or 0)" : " (want 0 or 1)"));
    }
  }
  return Ok{};
}

std::optional<ReplicaId> splitReplicaId(std::string_view id) noexcept {
  const std::size_t at = id.find("::");
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  const std::string_view number = id.substr(at + 2);
  int replica = -1;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), replica);
  if (number.empty() || error != std::errc() || end != number.data() + number.size() ||
      replica < 0) {
    return std::nullopt;
  }
  return ReplicaId{id.substr(0, at), replica};
}

MigReplicas sharedMigReplicas(const StringMap& nodeLabels, const std::vector<MigProduct>& products,
                              std::string_view model) {
  const MigProduct* product = findMigProduct(products, model);
  if (product == nullptr) return {};
  return migReplicasByCode(readMigSharing(nodeLabels), *product);
}

std::vector<std::string> applyDeviceIds(Discovery& discovery, const std::vector<std::string>& ids,
                                        const MigReplicas& migReplicas) {
  std::vector<std::string> unmatched;
  // Replicas held per shared MIG device: its instance stays free while one is left.
  std::map<MigInstance*, int> migTenants;
  for (const std::string& id : ids) {
    if (const auto replica = splitReplicaId(id)) {
      if (MigInstance* instance = migInstanceOf(discovery, replica->device)) {
        ++migTenants[instance];
      } else if (!markGpuReplica(discovery, std::string(replica->device))) {
        unmatched.push_back(id);
      }
      continue;
    }
    if (!markMigDevice(discovery, id) && !markGpu(discovery, id)) {
      unmatched.push_back(id);
    }
  }
  for (const auto& [instance, tenants] : migTenants) {
    const auto shared = migReplicas.find(instance->profileCode);
    // Not known to be shared (no replicas label for its profile): in use, as before. Shared with a
    // replica left: free, with its tenants counted (the writer spells more than 9 as used).
    if (shared == migReplicas.end() || tenants >= shared->second) {
      instance->state = MigInstanceState::kUsed;
    } else {
      instance->heldReplicas = static_cast<std::uint8_t>(std::min(tenants, 255));
    }
  }
  return unmatched;
}

}  // namespace gte::agent
