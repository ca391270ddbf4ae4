#include "agent/nvml_discovery.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "topology/topology_labels_writer.h"

namespace gte::agent {
namespace {

constexpr int kMaxBase36 = 35;
constexpr unsigned int kMaxInstancesPerProfile = 8;
// The GPU-instance profile constants whose codes the extender's product tables know.
constexpr unsigned int kProfileConstants[] = {0, 1, 2, 3, 4, 7, 9};

using PciKey = std::tuple<unsigned int, unsigned int, unsigned int>;

PciKey keyOf(const nvmlPciInfo_t& pci) {
  return {pci.domain, pci.bus, pci.device};
}

char base36(unsigned int value) {
  return static_cast<char>(value < 10 ? '0' + value : 'a' + (value - 10));
}

PcieLevel levelOf(int ancestor) {
  switch (ancestor) {
    case nvml::kTopologyInternal:
      return PcieLevel::kSameBoard;
    case nvml::kTopologySingle:
      return PcieLevel::kPix;
    case nvml::kTopologyMultiple:
      return PcieLevel::kPxb;
    case nvml::kTopologyHostBridge:
      return PcieLevel::kPhb;
    case nvml::kTopologyNode:
      return PcieLevel::kNode;
    case nvml::kTopologySystem:
      return PcieLevel::kSys;
    default:
      return PcieLevel::kUnknown;
  }
}

// "00000000:07:00.0" (NVML) -> "0000:07:00.0" (sysfs).
std::string sysfsBdf(const std::string& busId) {
  std::string out;
  for (const char c : busId) {
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const std::size_t colon = out.find(':');
  if (colon == 8) {
    out.erase(0, 4);
  }
  return out;
}

int sysfsNuma(const std::string& root, const std::string& busId) {
  std::ifstream in(root + "/bus/pci/devices/" + sysfsBdf(busId) + "/numa_node");
  int node = -1;
  if (!(in >> node) || node < 0 || node > kMaxBase36) {
    return -1;
  }
  return node;
}

struct Links {
  std::vector<std::vector<int>> direct;  // [i][j] links from GPU i straight to GPU j
  std::vector<int> switchLinks;          // per GPU: links to NVSwitches
  std::set<PciKey> switches;
};

class NvmlDiscoverer {
 public:
  NvmlDiscoverer(const NvmlLibrary& nvml, const NvmlDiscoveryOptions& options)
      : nvml_(nvml), fn_(nvml.fn()), options_(options) {}

  Result<Discovery> run() {
    unsigned int count = 0;
    if (const auto rc = fn_.deviceCount(&count); rc != nvml::kSuccess) {
      return failure("nvmlDeviceGetCount_v2", rc);
    }
    if (count > static_cast<unsigned int>(kMaxGpus)) {
      return invalidArgument(std::to_string(count) + " GPUs, at most 16 are supported");
    }
    const int n = static_cast<int>(count);
    // Not MIG-capable until readMig() learns otherwise (a driver without MIG never says).
    out_.topology = blankTopology(TopologySource::kLabelsV1, n, MigMode::kNotCapable);
    out_.gpuUuids.assign(count, "");
    out_.busIds.assign(count, "");
    out_.placements.assign(count, {});
    handles_.assign(count, nullptr);
    pci_.assign(count, nvmlPciInfo_t{});
    out_.healthReasons.assign(count, {});
    if (options_.sampleHealth) {
      out_.health.present = true;
      out_.health.gpus.assign(count, GpuSample{});
    }
    for (unsigned int i = 0; i < count; ++i) {
      if (auto status = readGpu(i); !status.ok()) {
        return status.error();
      }
    }
    readPairs();
    if (auto status = readNvlinks(); !status.ok()) {
      return status.error();
    }
    return std::move(out_);
  }

 private:
  Error failure(const char* call, nvmlReturn_t rc) const {
    return Error{ErrorCode::kUnavailable, nvml_.describe(call, rc)};
  }

  void unhealthy(unsigned int gpu, const char* reason) {
    out_.topology.health[gpu] = GpuHealth::kUnhealthy;
    auto& reasons = out_.healthReasons[gpu];
    if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) {
      reasons.emplace_back(reason);
    }
  }

  // A lost GPU is a fact to publish (unhealthy), not a reason to publish nothing.
  bool lost(unsigned int gpu, nvmlReturn_t rc) {
    if (rc == nvml::kErrorGpuIsLost) {
      unhealthy(gpu, "NVML: GPU is lost");
      return true;
    }
    return false;
  }

  Status readGpu(unsigned int i) {
    nvmlDevice_t device = nullptr;
    if (const auto rc = fn_.handleByIndex(i, &device); rc != nvml::kSuccess) {
      return lost(i, rc) ? Status(Ok{}) : Status(failure("nvmlDeviceGetHandleByIndex_v2", rc));
    }
    handles_[i] = device;
    char text[nvml::kUuidBuffer] = {};
    if (const auto rc = fn_.uuid(device, text, sizeof text); rc != nvml::kSuccess) {
      return lost(i, rc) ? Status(Ok{}) : Status(failure("nvmlDeviceGetUUID", rc));
    }
    out_.gpuUuids[i] = text;
    char name[nvml::kNameBuffer] = {};
    if (const auto rc = fn_.name(device, name, sizeof name); rc != nvml::kSuccess) {
      return lost(i, rc) ? Status(Ok{}) : Status(failure("nvmlDeviceGetName", rc));
    }
    if (out_.topology.model.empty()) {
      out_.topology.model = sanitiseModelName(name);  // labels-v1 carries one model per node
    }
    if (const auto rc = fn_.pciInfo(device, &pci_[i]); rc != nvml::kSuccess) {
      return lost(i, rc) ? Status(Ok{}) : Status(failure("nvmlDeviceGetPciInfo_v3", rc));
    }
    out_.busIds[i] = pci_[i].busId;
    out_.topology.numa[i] = numaOf(i);
    readHealth(i);
    if (options_.sampleHealth) {
      sampleGpu(i);
    }
    return readMig(i);
  }

  int numaOf(unsigned int i) {
    unsigned int node = 0;
    if (fn_.numaNodeId != nullptr && fn_.numaNodeId(handles_[i], &node) == nvml::kSuccess &&
        node <= kMaxBase36) {
      return static_cast<int>(node);
    }
    return sysfsNuma(options_.sysfsRoot, pci_[i].busId);
  }

  void readHealth(unsigned int i) {
    if (fn_.remappedRows != nullptr) {
      unsigned int corrected = 0, uncorrected = 0, pending = 0, failed = 0;
      const auto rc = fn_.remappedRows(handles_[i], &corrected, &uncorrected, &pending, &failed);
      if (!lost(i, rc) && rc == nvml::kSuccess && (pending != 0 || failed != 0)) {
        unhealthy(i, failed != 0 ? "row remapping failed" : "row remapping pending (reset needed)");
      }
    }
    if (fn_.retiredPagesPending != nullptr) {
      int pending = 0;
      const auto rc = fn_.retiredPagesPending(handles_[i], &pending);
      if (!lost(i, rc) && rc == nvml::kSuccess && pending == nvml::kFeatureEnabled) {
        unhealthy(i, "page retirement pending (reset needed)");
      }
    }
  }

  // Optional signals: a call the driver lacks or refuses leaves the value absent.
  void sampleGpu(unsigned int i) {
    GpuSample& sample = out_.health.gpus[i];
    const auto device = handles_[i];
    const auto uintValue = [device](nvml::UintFn fn) -> std::optional<unsigned int> {
      unsigned int value = 0;
      if (fn != nullptr && fn(device, &value) == nvml::kSuccess) {
        return value;
      }
      return std::nullopt;
    };
    sample.pcieWidth = uintValue(fn_.pcieWidth);
    sample.pcieMaxWidth = uintValue(fn_.pcieMaxWidth);
    sample.pcieGen = uintValue(fn_.pcieGen);
    sample.pcieMaxGen = uintValue(fn_.pcieMaxGen);
    unsigned long long value = 0;
    if (fn_.clockEventReasons != nullptr &&
        fn_.clockEventReasons(device, &value) == nvml::kSuccess) {
      sample.clockEventReasons = value;
    }
    if (fn_.totalEccErrors != nullptr &&
        fn_.totalEccErrors(device, nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc, &value) ==
            nvml::kSuccess) {
      sample.eccUncorrectedVolatile = value;
    }
  }

  void sampleCounters(nvmlDevice_t device, unsigned int link, LinkSample& sample) {
    if (fn_.nvlinkErrorCounter == nullptr) {
      return;
    }
    const auto read = [&](unsigned int counter, std::optional<std::uint64_t>& out) {
      unsigned long long value = 0;
      if (fn_.nvlinkErrorCounter(device, link, counter, &value) == nvml::kSuccess) {
        out = value;
      }
    };
    read(nvml::kNvlinkErrorReplay, sample.replay);
    read(nvml::kNvlinkErrorRecovery, sample.recovery);
    read(nvml::kNvlinkErrorCrcFlit, sample.crcFlit);
    read(nvml::kNvlinkErrorCrcData, sample.crcData);
  }

  Status readMig(unsigned int i) {
    if (fn_.migMode == nullptr) {
      return Ok{};  // a driver without MIG: not capable
    }
    unsigned int current = 0, pending = 0;
    const auto rc = fn_.migMode(handles_[i], &current, &pending);
    if (rc != nvml::kSuccess) {
      lost(i, rc);
      return Ok{};  // NOT_SUPPORTED: not MIG-capable
    }
    const bool enabled = current == nvml::kMigModeEnabled;
    GpuTopology& topo = out_.topology;
    topo.migMode[i] = current != pending ? MigMode::kPending
                      : enabled          ? MigMode::kEnabled
                                         : MigMode::kDisabled;
    if (enabled) {
      topo.used[i] = GpuUse::kMigMode;
    }
    // While a mode change is pending the instances are about to go (or not yet usable):
    // labels-v1 carries `p` and no `mig<i>` tokens then.
    const bool settled = enabled && current == pending;
    readProfiles(i, settled);
    if (settled) {
      readMigDevices(i);
    }
    return Ok{};
  }

  void readProfiles(unsigned int i, bool enabled) {
    if (fn_.profileInfo == nullptr) {
      return;
    }
    for (const unsigned int constant : kProfileConstants) {
      nvmlGpuInstanceProfileInfo_t info{};
      if (fn_.profileInfo(handles_[i], constant, &info) != nvml::kSuccess) {
        continue;  // a profile this GPU does not offer
      }
      const char code = base36(constant);
      if (fn_.possiblePlacements != nullptr) {
        nvmlGpuInstancePlacement_t placements[kMaxInstancesPerProfile] = {};
        unsigned int count = kMaxInstancesPerProfile;
        if (fn_.possiblePlacements(handles_[i], info.id, placements, &count) == nvml::kSuccess &&
            count > 0) {
          ProfilePlacements entry{
              code, static_cast<int>(info.id), static_cast<int>(placements[0].size), {}};
          for (unsigned int k = 0; k < count && k < kMaxInstancesPerProfile; ++k) {
            entry.starts.push_back(static_cast<int>(placements[k].start));
          }
          out_.placements[i].push_back(std::move(entry));
        }
      }
      if (enabled) {
        readInstances(i, info.id, code);
      }
    }
    auto& instances = out_.topology.migInstances[i];
    std::sort(instances.begin(), instances.end(),
              [](const MigInstance& a, const MigInstance& b) { return a.start < b.start; });
  }

  void readInstances(unsigned int i, unsigned int profileId, char code) {
    if (fn_.gpuInstances == nullptr || fn_.instanceInfo == nullptr) {
      return;
    }
    nvmlGpuInstance_t instances[kMaxInstancesPerProfile] = {};
    unsigned int count = 0;
    if (fn_.gpuInstances(handles_[i], profileId, instances, &count) != nvml::kSuccess) {
      return;
    }
    for (unsigned int k = 0; k < count && k < kMaxInstancesPerProfile; ++k) {
      nvmlGpuInstanceInfo_t info{};
      if (fn_.instanceInfo(instances[k], &info) != nvml::kSuccess) {
        continue;
      }
      out_.topology.migInstances[i].push_back(
          MigInstance{code, static_cast<int>(info.placement.start), MigInstanceState::kFree});
      instanceStarts_[{i, info.id}] = static_cast<int>(info.placement.start);
    }
  }

  // MIG device UUIDs, which the device plugin hands to pods, mapped to their GPU instance.
  void readMigDevices(unsigned int i) {
    if (fn_.maxMigDevices == nullptr || fn_.migDeviceByIndex == nullptr ||
        fn_.gpuInstanceId == nullptr) {
      return;
    }
    unsigned int max = 0;
    if (fn_.maxMigDevices(handles_[i], &max) != nvml::kSuccess) {
      return;
    }
    for (unsigned int k = 0; k < max; ++k) {
      nvmlDevice_t mig = nullptr;
      unsigned int gi = 0;
      char uuid[nvml::kUuidBuffer] = {};
      if (fn_.migDeviceByIndex(handles_[i], k, &mig) != nvml::kSuccess ||
          fn_.gpuInstanceId(mig, &gi) != nvml::kSuccess ||
          fn_.uuid(mig, uuid, sizeof uuid) != nvml::kSuccess) {
        continue;  // NOT_FOUND: an empty slot
      }
      const auto start = instanceStarts_.find({i, gi});
      if (start != instanceStarts_.end()) {
        out_.migDevices.push_back(MigDeviceId{uuid, static_cast<int>(i), start->second});
      }
    }
  }

  void readPairs() {
    const int n = out_.topology.gpuCount;
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        const auto a = handles_[static_cast<std::size_t>(i)];
        const auto b = handles_[static_cast<std::size_t>(j)];
        int ancestor = -1;
        if (a != nullptr && b != nullptr && fn_.commonAncestor(a, b, &ancestor) == nvml::kSuccess) {
          out_.topology.pcie[static_cast<std::size_t>(pairIndex(i, j, n))] = levelOf(ancestor);
        }
      }
    }
  }

  std::optional<int> gpuAt(const PciKey& key) const {
    for (std::size_t j = 0; j < pci_.size(); ++j) {
      if (handles_[j] != nullptr && keyOf(pci_[j]) == key) {
        return static_cast<int>(j);
      }
    }
    return std::nullopt;
  }

  Status readNvlinks() {
    GpuTopology& topo = out_.topology;
    const int n = topo.gpuCount;
    if (fn_.nvlinkState == nullptr || fn_.nvlinkRemotePci == nullptr) {
      topo.linksKnown = false;  // without NVLink facts a pair cannot be classed
      return Ok{};
    }
    Links links{std::vector<std::vector<int>>(static_cast<std::size_t>(n),
                                              std::vector<int>(static_cast<std::size_t>(n), 0)),
                std::vector<int>(static_cast<std::size_t>(n), 0),
                {}};
    for (int i = 0; i < n; ++i) {
      readGpuLinks(i, links);
    }
    bool anyDirect = false;
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        const auto a = static_cast<std::size_t>(i), b = static_cast<std::size_t>(j);
        const int direct = std::min(links.direct[a][b], links.direct[b][a]);
        const int viaSwitch = std::min(links.switchLinks[a], links.switchLinks[b]);
        anyDirect = anyDirect || direct > 0;
        topo.nvlinks[static_cast<std::size_t>(pairIndex(i, j, n))] =
            static_cast<std::uint8_t>(std::min(direct + viaSwitch, kMaxBase36));
      }
    }
    topo.linksKnown = true;
    topo.fabric = !links.switches.empty() ? "nvsw" + std::to_string(links.switches.size())
                                          : (anyDirect ? "mesh" : "none");
    return Ok{};
  }

  // The health sample of link `link` of GPU `i`, or `ignored` when the pass samples no health.
  LinkSample& sampleOf(int i, unsigned int link, LinkSample& ignored) {
    if (!options_.sampleHealth) {
      return ignored;
    }
    auto& samples = out_.health.gpus[static_cast<std::size_t>(i)].links;
    if (samples.size() <= link) {
      samples.resize(link + 1);
    }
    return samples[link];
  }

  void readGpuLinks(int i, Links& links) {
    const auto device = handles_[static_cast<std::size_t>(i)];
    if (device == nullptr) {
      return;
    }
    LinkSample ignored;
    for (unsigned int link = 0; link < nvml::kMaxNvlinks; ++link) {
      int state = 0;
      if (fn_.nvlinkState(device, link, &state) != nvml::kSuccess) {
        continue;  // past the GPU's link count
      }
      LinkSample& sample = sampleOf(i, link, ignored);
      if (state != nvml::kFeatureEnabled) {
        continue;  // down
      }
      sample.active = true;
      if (options_.sampleHealth) {
        sampleCounters(device, link, sample);
      }
      nvmlPciInfo_t remote{};
      if (fn_.nvlinkRemotePci(device, link, &remote) != nvml::kSuccess) {
        continue;
      }
      int type = -1;
      const bool typed = fn_.nvlinkRemoteType != nullptr &&
                         fn_.nvlinkRemoteType(device, link, &type) == nvml::kSuccess;
      const auto peer = gpuAt(keyOf(remote));
      if (peer && (!typed || type == nvml::kNvlinkDeviceTypeGpu)) {
        ++links.direct[static_cast<std::size_t>(i)][static_cast<std::size_t>(*peer)];
        sample.peerGpu = *peer;
      } else if (!peer && (!typed || type == nvml::kNvlinkDeviceTypeSwitch)) {
        // Untyped remotes that are not a GPU are switches: the only other NVLink peer, an IBM
        // NPU, exists only on POWER hosts and reports its type.
        ++links.switchLinks[static_cast<std::size_t>(i)];
        links.switches.insert(keyOf(remote));
        sample.toSwitch = true;
      }
    }
  }

  const NvmlLibrary& nvml_;
  const NvmlFunctions& fn_;
  const NvmlDiscoveryOptions& options_;
  Discovery out_;
  std::vector<nvmlDevice_t> handles_;
  std::vector<nvmlPciInfo_t> pci_;
  std::map<std::pair<unsigned int, unsigned int>, int> instanceStarts_;
};

}  // namespace

Result<Discovery> discoverWithNvml(const NvmlLibrary& nvml, const NvmlDiscoveryOptions& options) {
  return NvmlDiscoverer(nvml, options).run();
}

Result<Discovery> discoverWithNvml(const std::string& libraryPath,
                                   const NvmlDiscoveryOptions& options) {
  auto library = NvmlLibrary::open(libraryPath);
  if (!library.ok()) {
    return library.error();
  }
  return discoverWithNvml(**library, options);
}

}  // namespace gte::agent
